//! Performing actions on Linux: which chord or command each action means under the config
//! (the [`ActionPlan`], resolved once at startup), the chord bytes for the virtual
//! keyboard, and the [`Performer`] that writes them or starts commands.
//!
//! Resolution of a built-in action (`desktop-left`, `back`, …):
//! - backend `keys`: its `[actions.chords]` override, else its `[actions.commands]`
//!   override, else the desktop's default chord ([`Desktop::default_chord`]; `back` and
//!   `forward` are Alt+Left/Right on every Linux desktop);
//! - backend `command`: its `[actions.commands]` override, else its `[actions.chords]`
//!   override, else nothing.
//!
//! `{ key = … }` and `{ command = … }` actions are themselves, whatever the backend.
//! `none` and `pass-through` do nothing here (the engine forwards pass-through clicks).

use std::process::{Command, Stdio};

use pawl_engine::action::BUILTIN_ACTIONS;
use pawl_engine::config::ActionBackend;
use pawl_engine::engine::{Direction, direction_action};
use pawl_engine::{Action, Config, Desktop, Key, TouchOut};

use crate::touchpad::Touchpad;
use pawl_evdev::EventWriter;
use pawl_evdev::codes::EV_KEY;
use pawl_evdev::keys::linux_key_code;

use crate::error::Error;
use crate::uinput::{self, VirtualDevice};

/// How one action is performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// Nothing.
    Nothing,
    /// Press chord `n` of [`ActionPlan::chords`].
    Chord(usize),
    /// Run command `n` of [`ActionPlan::commands`].
    Command(usize),
}

/// Every action resolved to a chord or command, for one config and desktop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionPlan {
    /// Chords as `KEY_*` codes, pressed in order, released in reverse. Indices
    /// `0..config.chords.len()` are the config's chords, in order; desktop defaults follow.
    pub chords: Vec<Vec<u16>>,
    /// Commands (argv), the config's, in order.
    pub commands: Vec<Vec<String>>,
    builtin: [Resolved; BUILTIN_ACTIONS.len()],
    commands_allowed: bool,
    /// Which chords some reachable action uses (the virtual keyboard gets only their keys).
    used: Vec<bool>,
}

/// Problems found while planning (unusable keys, refused commands), to be logged.
pub type Warnings = Vec<String>;

impl ActionPlan {
    /// Resolves every action of `config`. `desktop` chooses default chords;
    /// `commands_allowed` is `false` when pawl runs as root without
    /// `actions.allow_root_commands`, which turns every command into nothing.
    pub fn new(
        config: &Config,
        desktop: Desktop,
        commands_allowed: bool,
    ) -> (ActionPlan, Warnings) {
        let mut warnings = Vec::new();
        let mut chords: Vec<Vec<u16>> = Vec::new();
        for chord in &config.chords {
            chords.push(chord_codes(&chord.0, &mut warnings));
        }
        let mut builtin = [Resolved::Nothing; BUILTIN_ACTIONS.len()];
        let backend = match config.actions.backend {
            ActionBackend::Command => ActionBackend::Command,
            ActionBackend::Keys => ActionBackend::Keys,
            other => {
                warnings.push(format!(
                    "actions.backend = \"{}\" is macOS only; using \"keys\"",
                    other.name()
                ));
                ActionBackend::Keys
            }
        };
        for (slot, action) in BUILTIN_ACTIONS.iter().enumerate() {
            let chord = config
                .actions
                .chords
                .iter()
                .find(|(a, _)| a == action)
                .map(|(_, i)| Resolved::Chord(usize::from(*i)));
            let command = config
                .actions
                .commands
                .iter()
                .find(|(a, _)| a == action)
                .map(|(_, i)| Resolved::Command(usize::from(*i)));
            builtin[slot] = match backend {
                ActionBackend::Command => command.or(chord).unwrap_or(Resolved::Nothing),
                _ => chord
                    .or(command)
                    .unwrap_or_else(|| match desktop.default_chord(*action) {
                        Some(keys) => {
                            chords.push(chord_codes(keys, &mut warnings));
                            Resolved::Chord(chords.len() - 1)
                        }
                        None => Resolved::Nothing,
                    }),
            };
        }
        if !commands_allowed && !config.commands.is_empty() {
            warnings.push(
                "pawl runs as root: command actions are disabled (set actions.allow_root_commands = true to allow them)"
                    .to_owned(),
            );
        }
        let mut plan = ActionPlan {
            used: vec![false; chords.len()],
            chords,
            commands: config.commands.clone(),
            builtin,
            commands_allowed,
        };
        for action in reachable_actions(config) {
            if let Resolved::Chord(i) = plan.resolve(action) {
                plan.used[i] = true;
            }
        }
        (plan, warnings)
    }

    /// How `action` is performed.
    #[inline]
    pub fn resolve(&self, action: Action) -> Resolved {
        match action {
            Action::Key(i) if usize::from(i) < self.chords.len() => Resolved::Chord(usize::from(i)),
            Action::Command(i) if self.commands_allowed && usize::from(i) < self.commands.len() => {
                Resolved::Command(usize::from(i))
            }
            Action::Key(_) | Action::Command(_) => Resolved::Nothing,
            builtin => BUILTIN_ACTIONS
                .iter()
                .position(|a| *a == builtin)
                .map_or(Resolved::Nothing, |slot| self.builtin[slot]),
        }
    }

    /// The `KEY_*` codes of every chord a reachable action uses, sorted, deduplicated: the
    /// virtual keyboard's keys. Empty when no action presses a chord (no keyboard is made).
    pub fn keyboard_keys(&self) -> Vec<u16> {
        let mut keys: Vec<u16> = self
            .chords
            .iter()
            .zip(&self.used)
            .filter(|(_, used)| **used)
            .flat_map(|(c, _)| c.iter().copied())
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}

/// Every action the config can fire: the four gesture directions (after desktop
/// inversion), the gesture click, back, forward and mapped buttons.
pub fn reachable_actions(config: &Config) -> Vec<Action> {
    let g = &config.gesture;
    let mut actions: Vec<Action> = [
        Direction::Left,
        Direction::Right,
        Direction::Up,
        Direction::Down,
    ]
    .into_iter()
    .map(|d| direction_action(g, d))
    .collect();
    actions.extend([g.click, config.buttons.on_back, config.buttons.on_forward]);
    actions.extend(config.buttons.map.iter().map(|(_, a)| *a));
    actions
}

/// `keys` as `KEY_*` codes; keys without one (`Fn`, handled by keyboard firmware) are
/// left out with a warning.
fn chord_codes(keys: &[Key], warnings: &mut Warnings) -> Vec<u16> {
    keys.iter()
        .filter_map(|k| {
            let code = linux_key_code(*k);
            if code.is_none() {
                warnings.push(format!(
                    "key {} has no Linux key code and is left out of its chord",
                    k.name()
                ));
            }
            code
        })
        .collect()
}

/// Encodes a chord as the bytes of one write to the virtual keyboard: every key pressed in
/// order, `SYN_REPORT`, every key released in reverse order, `SYN_REPORT`. Returns the
/// byte count (0 for an empty chord or a too-small buffer).
pub fn encode_chord(codes: &[u16], buf: &mut [u8]) -> usize {
    if codes.is_empty() {
        return 0;
    }
    let mut w = EventWriter::new(buf);
    let mut ok = true;
    for c in codes {
        ok &= w.push(EV_KEY, *c, 1);
    }
    ok &= w.syn();
    for c in codes.iter().rev() {
        ok &= w.push(EV_KEY, *c, 0);
    }
    ok &= w.syn();
    if ok { w.len() } else { 0 }
}

/// Performs actions: writes chords to the virtual keyboard, starts commands.
#[derive(Debug)]
pub struct Performer {
    plan: ActionPlan,
    /// Chord bytes, encoded once.
    encoded: Vec<Vec<u8>>,
    keyboard: Option<VirtualDevice>,
    /// The swipe style's virtual touchpad, while `[gesture] style = "swipe"`.
    touchpad: Option<Touchpad>,
}

impl Performer {
    /// Creates the virtual keyboard when some action presses a chord.
    ///
    /// Errors: `/dev/uinput` cannot be opened or the device not created.
    pub fn new(plan: ActionPlan) -> Result<Performer, Error> {
        let keyboard = make_keyboard(&plan)?;
        Ok(Performer {
            encoded: encode_all(&plan),
            plan,
            keyboard,
            touchpad: None,
        })
    }

    /// Creates the virtual touchpad when `wanted` and there is none, destroys it (after
    /// lifting its fingers) when not wanted (startup, SIGHUP as the style changes).
    ///
    /// Errors: the device cannot be created; there is then no touchpad.
    pub fn set_touchpad(&mut self, wanted: bool) -> Result<(), Error> {
        match (wanted, self.touchpad.is_some()) {
            (true, false) => {
                let tp = Touchpad::create()?;
                log::info!(
                    "virtual touchpad \"{}\" -> {}",
                    crate::touchpad::TOUCHPAD_NAME,
                    tp.device()
                        .node()
                        .map_or("?".into(), |p| p.display().to_string())
                );
                self.touchpad = Some(tp);
            }
            (false, true) => self.touchpad = None,
            _ => {}
        }
        Ok(())
    }

    /// Lifts every finger down on the virtual touchpad (a swipe whose engine is gone).
    pub fn lift_fingers(&mut self) {
        if let Some(tp) = &mut self.touchpad {
            tp.lift();
        }
    }

    /// The virtual touchpad, if swipe style made one.
    pub fn touchpad(&self) -> Option<&Touchpad> {
        self.touchpad.as_ref()
    }

    /// Writes a swipe's touchpad frames (one `write(2)`); nothing without a touchpad.
    #[inline]
    pub fn touch(&mut self, t: &TouchOut) {
        if let Some(tp) = &mut self.touchpad {
            tp.write(t);
        }
    }

    /// Switches to `plan` (config reload). The virtual keyboard is kept when its keys stay
    /// the same, else replaced (after releasing every key of the old one).
    ///
    /// Errors: a new keyboard cannot be created; the old plan stays.
    pub fn replan(&mut self, plan: ActionPlan) -> Result<(), Error> {
        if plan.keyboard_keys() != self.plan.keyboard_keys() {
            let keyboard = make_keyboard(&plan)?;
            self.release_all();
            self.keyboard = keyboard;
        }
        self.encoded = encode_all(&plan);
        self.plan = plan;
        Ok(())
    }

    /// The virtual keyboard, if one was made.
    pub fn keyboard(&self) -> Option<&VirtualDevice> {
        self.keyboard.as_ref()
    }

    /// Performs `action`. Failures are logged; nothing is retried.
    pub fn perform(&mut self, action: Action) {
        match self.plan.resolve(action) {
            Resolved::Nothing => {}
            Resolved::Chord(i) => {
                let bytes = &self.encoded[i];
                if let (Some(kbd), false) = (&self.keyboard, bytes.is_empty()) {
                    // A failure is logged by the device (once until a write succeeds).
                    let _ = kbd.write(bytes);
                }
            }
            Resolved::Command(i) => {
                let argv = &self.plan.commands[i];
                match spawn(argv) {
                    Ok(pid) => log::debug!("started {argv:?} (pid {pid})"),
                    Err(e) => log::error!("cannot run {argv:?}: {e}"),
                }
            }
        }
    }

    /// Writes a release for every key of the virtual keyboard (chords release their keys
    /// in the same write, so this only matters if a write was cut short).
    pub fn release_all(&mut self) {
        if let Some(tp) = &mut self.touchpad {
            tp.lift();
        }
        let Some(kbd) = &self.keyboard else { return };
        let keys = self.plan.keyboard_keys();
        let mut buf = vec![0u8; (keys.len() + 1) * pawl_evdev::EVENT_SIZE];
        let mut w = EventWriter::new(&mut buf);
        for k in &keys {
            w.push(EV_KEY, *k, 0);
        }
        w.syn();
        let n = w.len();
        let _ = kbd.write(&buf[..n]);
    }
}

fn make_keyboard(plan: &ActionPlan) -> Result<Option<VirtualDevice>, Error> {
    let keys = plan.keyboard_keys();
    if keys.is_empty() {
        return Ok(None);
    }
    VirtualDevice::create(&uinput::keyboard_spec(keys)).map(Some)
}

/// Every chord of `plan`, encoded once.
fn encode_all(plan: &ActionPlan) -> Vec<Vec<u8>> {
    plan.chords
        .iter()
        .map(|c| {
            let mut buf = vec![0u8; (2 * c.len() + 2) * pawl_evdev::EVENT_SIZE];
            let n = encode_chord(c, &mut buf);
            buf.truncate(n);
            buf
        })
        .collect()
}

/// Starts `argv` directly (no shell) with stdin, stdout and stderr on `/dev/null`, in its
/// own session (`setsid`), and returns its pid. The child is reaped by the loop's
/// `SIGCHLD` handling.
pub fn spawn(argv: &[String]) -> std::io::Result<u32> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command"))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    crate::sys::new_session_on_exec(&mut cmd);
    cmd.spawn().map(|child| child.id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pawl_engine::Platform;
    use pawl_evdev::codes::*;
    use pawl_evdev::{EVENT_SIZE, Event};

    fn events(buf: &[u8]) -> Vec<(u16, u16, i32)> {
        buf.chunks_exact(EVENT_SIZE)
            .map(|c| {
                let e = Event::from_bytes(c.try_into().unwrap());
                (e.type_, e.code, e.value)
            })
            .collect()
    }

    const KEY_LEFTCTRL: u16 = 29;
    const KEY_LEFTALT: u16 = 56;
    const KEY_LEFTMETA: u16 = 125;
    const KEY_PAGEUP: u16 = 104;
    const KEY_PAGEDOWN: u16 = 109;
    const KEY_LEFT: u16 = 105;
    const KEY_RIGHT: u16 = 106;
    const KEY_A: u16 = 30;
    const KEY_W: u16 = 17;

    #[test]
    fn chord_presses_in_order_and_releases_in_reverse_in_two_frames() {
        let mut buf = [0u8; 16 * EVENT_SIZE];
        let n = encode_chord(&[KEY_LEFTCTRL, KEY_LEFTMETA, KEY_LEFT], &mut buf);
        assert_eq!(
            events(&buf[..n]),
            vec![
                (EV_KEY, KEY_LEFTCTRL, 1),
                (EV_KEY, KEY_LEFTMETA, 1),
                (EV_KEY, KEY_LEFT, 1),
                (EV_SYN, SYN_REPORT, 0),
                (EV_KEY, KEY_LEFT, 0),
                (EV_KEY, KEY_LEFTMETA, 0),
                (EV_KEY, KEY_LEFTCTRL, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]
        );
    }

    #[test]
    fn chord_that_does_not_fit_encodes_to_nothing() {
        let mut buf = [0u8; 3 * EVENT_SIZE];
        assert_eq!(encode_chord(&[KEY_LEFTMETA, KEY_PAGEUP], &mut buf), 0);
        assert_eq!(encode_chord(&[], &mut buf), 0);
    }

    fn chord_of(plan: &ActionPlan, a: Action) -> Option<Vec<u16>> {
        match plan.resolve(a) {
            Resolved::Chord(i) => Some(plan.chords[i].clone()),
            _ => None,
        }
    }

    #[test]
    fn gnome_defaults_press_super_page_up_and_the_keyboard_has_only_those_keys() {
        let config = Config::default_for(Platform::Linux);
        let (plan, warnings) = ActionPlan::new(&config, Desktop::Gnome, true);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            chord_of(&plan, Action::DesktopLeft),
            Some(vec![KEY_LEFTMETA, KEY_PAGEUP])
        );
        assert_eq!(
            chord_of(&plan, Action::DesktopRight),
            Some(vec![KEY_LEFTMETA, KEY_PAGEDOWN])
        );
        assert_eq!(chord_of(&plan, Action::Overview), Some(vec![KEY_LEFTMETA]));
        // Reachable by default: desktop left/right, overview, app-expose (Super+A). Back and
        // forward pass through, so Alt is not on the keyboard.
        assert_eq!(
            plan.keyboard_keys(),
            vec![KEY_A, KEY_PAGEUP, KEY_PAGEDOWN, KEY_LEFTMETA]
        );
    }

    #[test]
    fn kde_defaults_press_ctrl_meta_arrows_and_meta_w() {
        let config = Config::default_for(Platform::Linux);
        let (plan, _) = ActionPlan::new(&config, Desktop::Kde, true);
        assert_eq!(
            chord_of(&plan, Action::DesktopLeft),
            Some(vec![KEY_LEFTCTRL, KEY_LEFTMETA, KEY_LEFT])
        );
        assert_eq!(
            chord_of(&plan, Action::DesktopRight),
            Some(vec![KEY_LEFTCTRL, KEY_LEFTMETA, KEY_RIGHT])
        );
        assert_eq!(
            chord_of(&plan, Action::Overview),
            Some(vec![KEY_LEFTMETA, KEY_W])
        );
    }

    #[test]
    fn back_and_forward_press_alt_arrows_on_linux() {
        let text = "[buttons]\non_back = \"back\"\non_forward = \"forward\"\n";
        let config = Config::parse(text, "c.toml", Platform::Linux).unwrap();
        let (plan, _) = ActionPlan::new(&config, Desktop::Gnome, true);
        assert_eq!(
            chord_of(&plan, Action::Back),
            Some(vec![KEY_LEFTALT, KEY_LEFT])
        );
        assert_eq!(
            chord_of(&plan, Action::Forward),
            Some(vec![KEY_LEFTALT, KEY_RIGHT])
        );
        assert!(plan.keyboard_keys().contains(&KEY_LEFTALT));
    }

    #[test]
    fn config_chord_overrides_the_desktop_default() {
        let text = "[actions.chords]\ndesktop-left = \"Ctrl+Alt+Left\"\n";
        let config = Config::parse(text, "c.toml", Platform::Linux).unwrap();
        let (plan, _) = ActionPlan::new(&config, Desktop::Gnome, true);
        assert_eq!(
            chord_of(&plan, Action::DesktopLeft),
            Some(vec![KEY_LEFTCTRL, KEY_LEFTALT, KEY_LEFT])
        );
    }

    #[test]
    fn key_action_presses_its_own_chord() {
        let text = "[gesture]\nup = { key = \"Super+W\" }\n";
        let config = Config::parse(text, "c.toml", Platform::Linux).unwrap();
        let (plan, _) = ActionPlan::new(&config, Desktop::Gnome, true);
        assert_eq!(
            chord_of(&plan, config.gesture.up),
            Some(vec![KEY_LEFTMETA, KEY_W])
        );
        assert!(plan.keyboard_keys().contains(&KEY_W));
    }

    #[test]
    fn command_backend_runs_commands_and_leaves_unset_actions_alone() {
        let text = "[actions]\nbackend = \"command\"\n[actions.commands]\ndesktop-left = [\"hyprctl\", \"dispatch\", \"workspace\", \"e-1\"]\n";
        let config = Config::parse(text, "c.toml", Platform::Linux).unwrap();
        let (plan, _) = ActionPlan::new(&config, Desktop::Gnome, true);
        assert_eq!(plan.resolve(Action::DesktopLeft), Resolved::Command(0));
        assert_eq!(plan.commands[0][0], "hyprctl");
        assert_eq!(plan.resolve(Action::DesktopRight), Resolved::Nothing);
        assert!(plan.keyboard_keys().is_empty(), "no chord, no keyboard");
    }

    #[test]
    fn commands_are_refused_as_root_without_allow_root_commands() {
        let text = "[gesture]\nup = { command = [\"true\"] }\n";
        let config = Config::parse(text, "c.toml", Platform::Linux).unwrap();
        let (plan, warnings) = ActionPlan::new(&config, Desktop::Gnome, false);
        assert_eq!(plan.resolve(config.gesture.up), Resolved::Nothing);
        assert!(warnings.iter().any(|w| w.contains("allow_root_commands")));
    }

    #[test]
    fn none_and_pass_through_do_nothing() {
        let config = Config::default_for(Platform::Linux);
        let (plan, _) = ActionPlan::new(&config, Desktop::Gnome, true);
        assert_eq!(plan.resolve(Action::None), Resolved::Nothing);
        assert_eq!(plan.resolve(Action::PassThrough), Resolved::Nothing);
    }

    #[test]
    fn spawned_command_runs_without_a_shell() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let argv = vec!["touch".to_owned(), marker.display().to_string()];
        let pid = spawn(&argv).unwrap();
        // Reap it the way the loop does (any child), then check it ran.
        let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
        rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()).unwrap();
        assert!(marker.exists());
        assert!(spawn(&["pawl-no-such-program-xyz".to_owned()]).is_err());
    }
}
