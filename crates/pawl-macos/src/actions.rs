//! Performing actions on macOS: the `system-events` backend (an `osascript` process,
//! launched only when an action fires), the `cg-event` backend (key events posted from a
//! HIDSystemState source, using the user's own Mission Control shortcuts) and the
//! `command` backend.
//!
//! Everything an action needs is prepared once at startup ([`Performer::new`]): firing an
//! action posts prepared events or spawns a prepared argv.

use pawl_engine::config::ActionBackend;
use pawl_engine::{Action, Config};

use crate::cg::flags;
use crate::keys;
use crate::tap::{Synthetic, Tap};

/// A Mission Control shortcut in `com.apple.symbolichotkeys` (`AppleSymbolicHotKeys`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymbolicHotkey {
    /// The id in `AppleSymbolicHotKeys`.
    pub id: u32,
    /// Its default key code (used when the user's binding cannot be read).
    pub default_code: u16,
}

/// "Move left a space" (id 79, default Control+Left).
pub const MOVE_LEFT_A_SPACE: SymbolicHotkey = SymbolicHotkey {
    id: 79,
    default_code: 123,
};
/// "Move right a space" (id 81, default Control+Right).
pub const MOVE_RIGHT_A_SPACE: SymbolicHotkey = SymbolicHotkey {
    id: 81,
    default_code: 124,
};
/// "Mission Control" (id 32, default Control+Up).
pub const MISSION_CONTROL: SymbolicHotkey = SymbolicHotkey {
    id: 32,
    default_code: 126,
};
/// "Application windows" (id 33, default Control+Down).
pub const APPLICATION_WINDOWS: SymbolicHotkey = SymbolicHotkey {
    id: 33,
    default_code: 125,
};

/// The modifier mask of the default bindings: Control | Fn (0x840000), as
/// `com.apple.symbolichotkeys` stores Control+arrow.
pub const DEFAULT_HOTKEY_MASK: u64 = flags::CONTROL | flags::SECONDARY_FN;

/// A binding read from `AppleSymbolicHotKeys`: `parameters = (ascii, keycode, modifiers)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HotkeyBinding {
    /// Whether the shortcut is enabled in System Settings.
    pub enabled: bool,
    /// The virtual key code (`parameters[1]`).
    pub code: u16,
    /// The modifier mask (`parameters[2]`, `NSEventModifierFlags` = `CGEventFlags` bits).
    pub modifiers: u64,
}

impl SymbolicHotkey {
    /// The binding to post: the user's when it could be read (`read`), else the default key
    /// code with Control|Fn.
    pub fn binding(self, read: Option<HotkeyBinding>) -> HotkeyBinding {
        read.unwrap_or(HotkeyBinding {
            enabled: true,
            code: self.default_code,
            modifiers: DEFAULT_HOTKEY_MASK,
        })
    }
}

/// How one action is performed.
#[derive(Clone, Debug, PartialEq)]
pub enum Performance {
    /// Nothing.
    Nothing,
    /// Post these events, in order.
    Post(Vec<Synthetic>),
    /// Spawn this argv.
    Spawn(Vec<String>),
}

/// Every action's performance, prepared at startup.
#[derive(Clone, Debug)]
pub struct Performer {
    builtin: Vec<(Action, Performance)>,
    chords: Vec<Performance>,
    commands: Vec<Performance>,
}

impl Performer {
    /// Prepares every action of `config`. `read_hotkey` reads a symbolic hotkey binding
    /// (only called for the `cg-event` backend). Errors name a chord macOS cannot post.
    pub fn new(
        config: &Config,
        mut read_hotkey: impl FnMut(u32) -> Option<HotkeyBinding>,
    ) -> Result<Performer, String> {
        let chords = config
            .chords
            .iter()
            .map(|c| keys::chord_events(&c.0).map(Performance::Post))
            .collect::<Result<Vec<_>, _>>()?;
        let commands: Vec<Performance> = config
            .commands
            .iter()
            .map(|argv| Performance::Spawn(argv.clone()))
            .collect();
        let mut builtin = Vec::new();
        for &action in pawl_engine::action::BUILTIN_ACTIONS {
            let over_chord = config.actions.chords.iter().find(|(a, _)| *a == action);
            let over_cmd = config.actions.commands.iter().find(|(a, _)| *a == action);
            let p = match (over_cmd, over_chord, config.actions.backend) {
                (Some((_, i)), _, _) => commands[*i as usize].clone(),
                (None, Some((_, i)), _) => chords[*i as usize].clone(),
                (None, None, ActionBackend::Command) => Performance::Nothing,
                (None, None, ActionBackend::CgEvent) => cg_event(action, &mut read_hotkey),
                // `keys` is the Linux backend; on macOS it means the same as the default.
                (None, None, ActionBackend::SystemEvents | ActionBackend::Keys) => {
                    system_events(action)
                }
            };
            builtin.push((action, p));
        }
        Ok(Performer {
            builtin,
            chords,
            commands,
        })
    }

    /// How `action` is performed.
    pub fn performance(&self, action: Action) -> &Performance {
        const NOTHING: &Performance = &Performance::Nothing;
        match action {
            Action::Key(i) => self.chords.get(i as usize).unwrap_or(NOTHING),
            Action::Command(i) => self.commands.get(i as usize).unwrap_or(NOTHING),
            a => self
                .builtin
                .iter()
                .find(|(b, _)| *b == a)
                .map_or(NOTHING, |(_, p)| p),
        }
    }

    /// Performs `action` through `tap`.
    pub fn perform(&self, tap: &mut impl Tap, action: Action) {
        match self.performance(action) {
            Performance::Nothing => {}
            Performance::Post(events) => {
                for e in events {
                    tap.post(e);
                }
            }
            Performance::Spawn(argv) => tap.spawn(argv),
        }
    }
}

/// The `osascript` argv of a built-in action.
fn system_events(action: Action) -> Performance {
    let key = |code: u16, using: &str| {
        format!("tell application \"System Events\" to key code {code}{using}")
    };
    let script = match action {
        Action::DesktopLeft => key(123, " using control down"),
        Action::DesktopRight => key(124, " using control down"),
        Action::Overview => "tell application \"Mission Control\" to launch".to_owned(),
        Action::AppExpose => key(125, " using control down"),
        Action::ShowDesktop => key(103, ""),
        Action::Back => key(0x21, " using command down"),
        Action::Forward => key(0x1E, " using command down"),
        _ => return Performance::Nothing,
    };
    Performance::Spawn(vec!["osascript".into(), "-e".into(), script])
}

/// The key events of a built-in action for the `cg-event` backend.
fn cg_event(
    action: Action,
    read_hotkey: &mut impl FnMut(u32) -> Option<HotkeyBinding>,
) -> Performance {
    let hotkey = match action {
        Action::DesktopLeft => MOVE_LEFT_A_SPACE,
        Action::DesktopRight => MOVE_RIGHT_A_SPACE,
        Action::Overview => MISSION_CONTROL,
        Action::AppExpose => APPLICATION_WINDOWS,
        Action::ShowDesktop => return Performance::Post(keys::hotkey_events(0x67, 0)),
        Action::Back => return Performance::Post(keys::hotkey_events(0x21, flags::COMMAND)),
        Action::Forward => return Performance::Post(keys::hotkey_events(0x1E, flags::COMMAND)),
        _ => return Performance::Nothing,
    };
    let binding = hotkey.binding(read_hotkey(hotkey.id));
    if !binding.enabled {
        log::warn!(
            "the macOS shortcut for {} (symbolic hotkey {}) is disabled in System Settings; \
             pawl posts it anyway",
            action.name().unwrap_or("?"),
            hotkey.id
        );
    }
    Performance::Post(keys::hotkey_events(binding.code, binding.modifiers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pawl_engine::{Key, Platform};

    fn config(backend: ActionBackend) -> Config {
        let mut c = Config::default_for(Platform::MacOs);
        c.actions.backend = backend;
        c
    }

    fn osascript(script: &str) -> Performance {
        Performance::Spawn(vec!["osascript".into(), "-e".into(), script.into()])
    }

    #[test]
    fn system_events_switches_desktops_with_control_arrow_key_codes() {
        let p = Performer::new(&config(ActionBackend::SystemEvents), |_| None).unwrap();
        let key = |rest: &str| format!("tell application \"System Events\" to key code {rest}");
        assert_eq!(
            p.performance(Action::DesktopLeft),
            &osascript(&key("123 using control down"))
        );
        assert_eq!(
            p.performance(Action::DesktopRight),
            &osascript(&key("124 using control down"))
        );
        assert_eq!(
            p.performance(Action::Overview),
            &osascript("tell application \"Mission Control\" to launch")
        );
        assert_eq!(
            p.performance(Action::AppExpose),
            &osascript(&key("125 using control down"))
        );
        assert_eq!(
            p.performance(Action::Back),
            &osascript(&key("33 using command down"))
        );
        assert_eq!(
            p.performance(Action::Forward),
            &osascript(&key("30 using command down"))
        );
        assert_eq!(p.performance(Action::None), &Performance::Nothing);
    }

    #[test]
    fn cg_event_uses_the_users_symbolic_hotkey_binding() {
        let user = HotkeyBinding {
            enabled: true,
            code: 0x12,
            modifiers: flags::COMMAND | flags::ALTERNATE,
        };
        let asked = std::cell::RefCell::new(Vec::new());
        let p = Performer::new(&config(ActionBackend::CgEvent), |id| {
            asked.borrow_mut().push(id);
            (id == 79).then_some(user)
        })
        .unwrap();
        let mut ids = asked.into_inner();
        ids.sort();
        assert_eq!(ids, vec![32, 33, 79, 81]);
        assert_eq!(
            p.performance(Action::DesktopLeft),
            &Performance::Post(keys::hotkey_events(0x12, flags::COMMAND | flags::ALTERNATE))
        );
    }

    #[test]
    fn cg_event_falls_back_to_key_code_with_control_fn_mask() {
        let p = Performer::new(&config(ActionBackend::CgEvent), |_| None).unwrap();
        for (action, code) in [
            (Action::DesktopLeft, 123),
            (Action::DesktopRight, 124),
            (Action::Overview, 126),
            (Action::AppExpose, 125),
        ] {
            assert_eq!(
                p.performance(action),
                &Performance::Post(keys::hotkey_events(code, 0x84_0000)),
                "{action:?}"
            );
        }
    }

    #[test]
    fn command_backend_runs_only_configured_commands() {
        let mut c = config(ActionBackend::Command);
        c.commands
            .push(vec!["open".into(), "-a".into(), "Mission Control".into()]);
        c.actions.commands.push((Action::Overview, 0));
        let p = Performer::new(&c, |_| None).unwrap();
        assert_eq!(
            p.performance(Action::Overview),
            &Performance::Spawn(vec!["open".into(), "-a".into(), "Mission Control".into()])
        );
        assert_eq!(p.performance(Action::DesktopLeft), &Performance::Nothing);
    }

    #[test]
    fn chord_override_replaces_the_backends_performance() {
        let mut c = config(ActionBackend::SystemEvents);
        c.chords
            .push(pawl_engine::Chord::parse("Ctrl+Alt+Left").unwrap());
        c.actions.chords.push((Action::DesktopLeft, 0));
        let p = Performer::new(&c, |_| None).unwrap();
        assert_eq!(
            p.performance(Action::DesktopLeft),
            &Performance::Post(keys::chord_events(&[Key::Ctrl, Key::Alt, Key::Left]).unwrap())
        );
        assert_eq!(
            p.performance(Action::Key(0)),
            p.performance(Action::DesktopLeft)
        );
    }
}
