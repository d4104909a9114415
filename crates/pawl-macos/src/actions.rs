//! Performing actions on macOS: the `system-events` backend (an `osascript` process,
//! launched only when an action fires), the `cg-event` backend (key events posted from a
//! HIDSystemState source, using the user's own Mission Control shortcuts) and the
//! `command` backend.
//!
//! Everything an action needs is prepared once at startup ([`Performer::new`]): firing an
//! action posts prepared events or spawns a prepared argv.
//!
//! `cg-event` posts the user's Mission Control shortcuts (symbolic hotkeys), never
//! synthetic Dock swipe gestures, which macOS 27 ignores (Mac Mouse Fix #1871). Arrow keys
//! always carry Fn and numeric-pad flags, as a keyboard sends them: reportedly macOS 27 takes
//! a posted ⌃←/→ only with `kCGEventFlagMaskSecondaryFn` (robotjs #804). A shortcut that is
//! disabled or unbound is bound, as Mac Mouse Fix's `SymbolicHotKeys.m` does, to a key code
//! out of any keyboard's reach ([`OUT_OF_REACH`]) with Fn | numeric pad, once at startup;
//! `system-events` stays the default.

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

/// The key code of an unbound symbolic hotkey (`CGSGetSymbolicHotKeyValue` and the
/// `parameters` of `com.apple.symbolichotkeys` say 65535; Mac Mouse Fix's `kMFVK_Null`).
pub const UNBOUND: u16 = 0xFFFF;

/// Added to a hotkey's id for the key code pawl binds a disabled or unbound Mission Control
/// shortcut to: far above any key code a keyboard sends (they end below 0x80), so the
/// binding is out of a keyboard's reach; Mac Mouse Fix's `kMFVK_OutOfReach` (400).
pub const OUT_OF_REACH: u16 = 400;

/// The modifiers of such a binding: numeric pad | Fn, as Mac Mouse Fix binds them (no
/// modifier at all does not trigger a symbolic hotkey; Fn does).
pub const OUT_OF_REACH_MASK: u64 = flags::NUMERIC_PAD | flags::SECONDARY_FN;

/// Reads and binds symbolic hotkeys (on macOS the window server's `CGS*SymbolicHotKey*`
/// functions; in tests a fake). A closure `FnMut(u32) -> Option<HotkeyBinding>` is a
/// reader that cannot bind.
pub trait Hotkeys {
    /// The current binding of hotkey `id`; `None` when it cannot be read.
    fn read(&mut self, id: u32) -> Option<HotkeyBinding>;
    /// Enables hotkey `id` and binds it to `binding` (permanently: a temporary binding
    /// does not work reliably since macOS 15, Mac Mouse Fix found). Errors say why not.
    fn bind(&mut self, id: u32, binding: HotkeyBinding) -> Result<(), String>;
}

impl<F: FnMut(u32) -> Option<HotkeyBinding>> Hotkeys for F {
    fn read(&mut self, id: u32) -> Option<HotkeyBinding> {
        self(id)
    }

    fn bind(&mut self, _id: u32, _binding: HotkeyBinding) -> Result<(), String> {
        Err("no way to bind symbolic hotkeys here".into())
    }
}

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
    /// Prepares every action of `config`. `hotkeys` reads (and, when one is disabled or
    /// unbound, binds) the Mission Control shortcuts; only used by the `cg-event` backend.
    /// Errors name a chord macOS cannot post.
    pub fn new(config: &Config, mut hotkeys: impl Hotkeys) -> Result<Performer, String> {
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
                (None, None, ActionBackend::CgEvent) => cg_event(action, &mut hotkeys),
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

    /// Performs `action` through `tap`. Posted modifier events keep the modifiers the
    /// user physically holds ([`Tap::held_flags`]): the chord's flags-changed events carry
    /// them too, so the last one leaves exactly what the user holds instead of nothing; the
    /// key events themselves carry only the chord's flags, so the shortcut matches.
    pub fn perform(&self, tap: &mut impl Tap, action: Action) {
        match self.performance(action) {
            Performance::Nothing => {}
            Performance::Post(events) => {
                let held = tap.held_flags() & MODIFIERS;
                for e in events {
                    let e = match *e {
                        Synthetic::FlagsChanged { code, flags } => Synthetic::FlagsChanged {
                            code,
                            flags: flags | held,
                        },
                        other => other,
                    };
                    tap.post(&e);
                }
            }
            Performance::Spawn(argv) => tap.spawn(argv),
        }
    }
}

/// The modifier bits a user can hold (Shift, Control, Option, Command).
const MODIFIERS: u64 = flags::SHIFT | flags::CONTROL | flags::ALTERNATE | flags::COMMAND;

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
fn cg_event(action: Action, hotkeys: &mut impl Hotkeys) -> Performance {
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
    let binding = hotkey.binding(hotkeys.read(hotkey.id));
    if binding.enabled && binding.code != UNBOUND {
        return Performance::Post(keys::hotkey_events(binding.code, binding.modifiers));
    }
    // Disabled or unbound: posting it would do nothing. Bind it, as Mac Mouse Fix does, to a
    // key code no keyboard sends, so the user's keyboard behaves as before.
    let name = action.name().unwrap_or("?");
    let reachable = HotkeyBinding {
        enabled: true,
        code: hotkey.id as u16 + OUT_OF_REACH,
        modifiers: OUT_OF_REACH_MASK,
    };
    match hotkeys.bind(hotkey.id, reachable) {
        Ok(()) => {
            log::info!(
                "the macOS shortcut for {name} (symbolic hotkey {}) was {}: pawl bound it to \
                 key code {} with Fn (a key no keyboard has) and enabled it",
                hotkey.id,
                if binding.enabled {
                    "unbound"
                } else {
                    "disabled"
                },
                reachable.code
            );
            Performance::Post(keys::hotkey_events(reachable.code, reachable.modifiers))
        }
        Err(e) => {
            log::warn!(
                "the macOS shortcut for {name} (symbolic hotkey {}) is {} and pawl cannot bind \
                 it ({e}): {name} does nothing; turn it on in System Settings > Keyboard > \
                 Keyboard Shortcuts > Mission Control",
                hotkey.id,
                if binding.enabled {
                    "unbound"
                } else {
                    "disabled"
                },
            );
            Performance::Nothing
        }
    }
}

/// A finished child of [`Tap::spawn`], as the host reaped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChildExit<'a> {
    /// The program (`argv[0]`).
    pub program: &'a str,
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// The start of its stderr (the host reads at most [`ChildReports::STDERR_LIMIT`]
    /// bytes).
    pub stderr: &'a [u8],
}

/// What to log about finished children: each kind of failure once, with the fix, so a
/// denied Automation permission is said once instead of never (or at every action).
#[derive(Clone, Debug, Default)]
pub struct ChildReports {
    automation_denied: bool,
    failed: Vec<String>,
}

impl ChildReports {
    /// The bytes of a child's stderr the host keeps (the rest is discarded).
    pub const STDERR_LIMIT: usize = 4096;

    /// The line to log (at error level) for `exit`, or `None`: it succeeded, or that
    /// failure was already reported. `osascript`'s Automation denial (AppleScript error
    /// -1743, `errAEEventNotPermitted`: "Not authorized to send Apple events") gets the fix.
    pub fn on_exit(&mut self, exit: &ChildExit<'_>) -> Option<String> {
        if exit.code == Some(0) {
            return None;
        }
        let stderr = String::from_utf8_lossy(exit.stderr);
        if exit.program.rsplit('/').next() == Some("osascript")
            && (stderr.contains("-1743") || stderr.contains("Not authorized to send Apple events"))
        {
            if std::mem::replace(&mut self.automation_denied, true) {
                return None;
            }
            return Some(
                "osascript may not control System Events (error -1743: the Automation \
                 permission is denied), so the system-events actions do nothing: turn on \
                 System Events under the app that runs pawl (the terminal, or pawl as a \
                 LaunchAgent) in System Settings > Privacy & Security > Automation, or use \
                 `[actions] backend = \"cg-event\"`, which needs no Automation permission"
                    .to_owned(),
            );
        }
        if self.failed.iter().any(|p| p == exit.program) {
            return None;
        }
        self.failed.push(exit.program.to_owned());
        let how = match (exit.code, exit.signal) {
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(s)) => format!("was ended by signal {s}"),
            (None, None) => "failed".to_owned(),
        };
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let first: String = first.chars().take(200).collect();
        Some(format!(
            "{} {how}{}{} (later failures of {} are not logged)",
            exit.program,
            if first.is_empty() { "" } else { ": " },
            first.trim(),
            exit.program
        ))
    }
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

    /// A fake window server: bindings by id, and every bind it was asked for.
    #[derive(Default)]
    struct FakeHotkeys {
        bindings: std::collections::HashMap<u32, HotkeyBinding>,
        bound: Vec<(u32, HotkeyBinding)>,
        refuse: bool,
    }

    impl Hotkeys for &mut FakeHotkeys {
        fn read(&mut self, id: u32) -> Option<HotkeyBinding> {
            self.bindings.get(&id).copied()
        }

        fn bind(&mut self, id: u32, binding: HotkeyBinding) -> Result<(), String> {
            if self.refuse {
                return Err("refused".into());
            }
            self.bound.push((id, binding));
            self.bindings.insert(id, binding);
            Ok(())
        }
    }

    #[test]
    fn disabled_or_unbound_hotkeys_are_bound_out_of_reach_and_posted_that_way() {
        let mut hk = FakeHotkeys::default();
        // Move left a space: disabled in System Settings; Mission Control: unbound.
        hk.bindings.insert(
            79,
            HotkeyBinding {
                enabled: false,
                code: 123,
                modifiers: DEFAULT_HOTKEY_MASK,
            },
        );
        hk.bindings.insert(
            32,
            HotkeyBinding {
                enabled: true,
                code: UNBOUND,
                modifiers: 0,
            },
        );
        let p = Performer::new(&config(ActionBackend::CgEvent), &mut hk).unwrap();
        let out_of_reach = |id: u16| HotkeyBinding {
            enabled: true,
            code: id + 400,
            modifiers: flags::NUMERIC_PAD | flags::SECONDARY_FN,
        };
        let mut bound = hk.bound.clone();
        bound.sort_by_key(|b| b.0);
        assert_eq!(bound, vec![(32, out_of_reach(32)), (79, out_of_reach(79))]);
        assert_eq!(
            p.performance(Action::DesktopLeft),
            &Performance::Post(keys::hotkey_events(479, OUT_OF_REACH_MASK))
        );
        assert_eq!(
            p.performance(Action::Overview),
            &Performance::Post(keys::hotkey_events(432, OUT_OF_REACH_MASK))
        );
        // Enabled and bound ones are posted as the user bound them, never rebound.
        assert_eq!(
            p.performance(Action::DesktopRight),
            &Performance::Post(keys::hotkey_events(124, DEFAULT_HOTKEY_MASK))
        );
        // No key a keyboard sends is used.
        assert!(
            keys::hotkey_events(479, OUT_OF_REACH_MASK)
                .iter()
                .all(|e| match e {
                    Synthetic::Key { code, .. } => *code >= 0x80,
                    _ => true,
                })
        );
    }

    #[test]
    fn a_disabled_hotkey_that_cannot_be_bound_does_nothing_instead_of_posting_it() {
        let mut hk = FakeHotkeys {
            refuse: true,
            ..FakeHotkeys::default()
        };
        hk.bindings.insert(
            81,
            HotkeyBinding {
                enabled: false,
                code: 124,
                modifiers: DEFAULT_HOTKEY_MASK,
            },
        );
        let p = Performer::new(&config(ActionBackend::CgEvent), &mut hk).unwrap();
        assert_eq!(p.performance(Action::DesktopRight), &Performance::Nothing);
        assert!(matches!(
            p.performance(Action::DesktopLeft),
            Performance::Post(_)
        ));
    }

    #[test]
    fn control_arrow_hotkeys_always_carry_the_fn_flag() {
        // A binding stored as plain Control (0x40000): the arrow's key events still carry
        // Fn (kCGEventFlagMaskSecondaryFn), which macOS needs to take ⌃←/→ from a posted
        // event (robotjs #804).
        let user = HotkeyBinding {
            enabled: true,
            code: 123,
            modifiers: flags::CONTROL,
        };
        let p = Performer::new(&config(ActionBackend::CgEvent), |id| {
            (id == 79).then_some(user)
        })
        .unwrap();
        let Performance::Post(events) = p.performance(Action::DesktopLeft) else {
            panic!("posts events");
        };
        let keys: Vec<u64> = events
            .iter()
            .filter_map(|e| match e {
                Synthetic::Key { flags, .. } => Some(*flags),
                _ => None,
            })
            .collect();
        assert_eq!(keys.len(), 2);
        assert!(
            keys.iter()
                .all(|f| f & flags::SECONDARY_FN != 0 && f & flags::CONTROL != 0)
        );
    }

    fn exit<'a>(program: &'a str, code: Option<i32>, stderr: &'a str) -> ChildExit<'a> {
        ChildExit {
            program,
            code,
            signal: None,
            stderr: stderr.as_bytes(),
        }
    }

    #[test]
    fn automation_denial_is_logged_once_with_the_fix() {
        let mut r = ChildReports::default();
        let denied = "0:60: execution error: Not authorized to send Apple events to System \
                      Events. (-1743)\n";
        let line = r.on_exit(&exit("osascript", Some(1), denied)).unwrap();
        assert!(line.contains("-1743"), "{line}");
        assert!(line.contains("Privacy & Security > Automation"), "{line}");
        assert!(line.contains("cg-event"), "{line}");
        assert_eq!(r.on_exit(&exit("osascript", Some(1), denied)), None);
        assert_eq!(
            r.on_exit(&exit("/usr/bin/osascript", Some(1), denied)),
            None
        );
    }

    #[test]
    fn other_child_failures_are_logged_once_per_program_with_status_and_stderr() {
        let mut r = ChildReports::default();
        assert_eq!(r.on_exit(&exit("osascript", Some(0), "")), None);
        let line = r
            .on_exit(&exit(
                "osascript",
                Some(1),
                "\n0:5: syntax error: boom (-2741)\nmore",
            ))
            .unwrap();
        assert_eq!(
            line,
            "osascript exited with status 1: 0:5: syntax error: boom (-2741) (later failures \
             of osascript are not logged)"
        );
        assert_eq!(r.on_exit(&exit("osascript", Some(2), "again")), None);
        let killed = ChildExit {
            program: "hyprctl",
            code: None,
            signal: Some(9),
            stderr: b"",
        };
        assert_eq!(
            r.on_exit(&killed).unwrap(),
            "hyprctl was ended by signal 9 (later failures of hyprctl are not logged)"
        );
    }

    #[test]
    fn volume_keys_are_rejected_on_macos_with_a_config_error_naming_the_fix() {
        let err = Config::parse(
            "[actions.chords]\noverview = \"XF86AudioRaiseVolume\"\n",
            "c.toml",
            Platform::MacOs,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("XF86AudioRaiseVolume is a media key on macOS"),
            "{err}"
        );
        assert!(err.contains("osascript"), "{err}");
        for k in [Key::AudioMute, Key::AudioLowerVolume, Key::AudioRaiseVolume] {
            assert!(!k.available_on(Platform::MacOs), "{k:?}");
            assert!(k.available_on(Platform::Linux), "{k:?}");
        }
    }

    /// The OS and std behaviour the signal fix relies on, on Linux as on macOS: a signal
    /// the parent catches (the worker's no-op handler) is back at its default action in a
    /// child (handlers do not survive `exec`), so children still die of SIGTERM; a blocked
    /// signal would stay blocked in the child (std inherits the signal mask), which is why
    /// the worker does not block it.
    #[test]
    fn children_die_of_sigterm_that_the_parent_catches_but_inherit_a_blocked_one() {
        use std::os::unix::process::ExitStatusExt;
        extern "C" fn ignore(_: libc::c_int) {}
        let sleep = || {
            std::process::Command::new("sleep")
                .arg("5")
                .spawn()
                .unwrap()
        };
        // SAFETY: installs a no-op, async-signal-safe handler for SIGTERM process-wide (no
        // test sends SIGTERM to this process) and restores the default after.
        let caught = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = ignore as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            assert_eq!(libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut()), 0);
            let mut child = sleep();
            assert_eq!(libc::kill(child.id() as i32, libc::SIGTERM), 0);
            let status = child.wait().unwrap();
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            status
        };
        assert_eq!(caught.signal(), Some(libc::SIGTERM), "{caught:?}");

        let blocked_in_child = std::thread::spawn(move || {
            // SAFETY: a set initialised by sigemptyset; blocks on this thread only.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGTERM);
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            }
            let mut child = sleep();
            let status =
                std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
            child.kill().unwrap();
            child.wait().unwrap();
            status
                .lines()
                .find_map(|l| l.strip_prefix("SigBlk:"))
                .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
                .is_some_and(|m| m & (1 << (libc::SIGTERM - 1)) != 0)
        })
        .join()
        .unwrap();
        if cfg!(target_os = "linux") {
            assert!(blocked_in_child, "std no longer inherits the signal mask");
        }
    }
}
