//! Configuration: the TOML file format (raw, serde) and the validated [`Config`] the engine
//! runs on.
//!
//! Parsing is a pure function of the text ([`Config::parse`]): reading the file is the
//! caller's job. Every problem is reported with `file:line:column`, the key, and for
//! out-of-range values the allowed range; all range problems are collected, not just the
//! first.

use std::fmt;

use serde::Deserialize;
use toml::Spanned;

use crate::action::{Action, BUILTIN_ACTIONS, Chord, Desktop};
use crate::device::{Bus, DeviceInfo, DeviceMatcher, is_mx_master};
use crate::units::Button;

/// The platform a config is resolved for: some defaults differ (action backend,
/// back/forward actions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platform {
    /// Linux (evdev/uinput backend).
    Linux,
    /// macOS (CGEventTap backend).
    MacOs,
}

impl Platform {
    /// The platform this binary was compiled for (macOS when `target_os = "macos"`, Linux
    /// otherwise).
    pub const fn current() -> Platform {
        if cfg!(target_os = "macos") {
            Platform::MacOs
        } else {
            Platform::Linux
        }
    }
}

/// How actions are performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionBackend {
    /// Linux: key chords on pawl's own virtual keyboard (uinput).
    Keys,
    /// macOS: `osascript` / System Events, launched only when an action fires.
    SystemEvents,
    /// macOS: key events posted with CGEventPost from a HIDSystemState source.
    CgEvent,
    /// Built-in actions run the commands of `[actions.commands]`; unset ones do nothing.
    Command,
}

impl ActionBackend {
    /// The config spelling.
    pub fn name(self) -> &'static str {
        match self {
            ActionBackend::Keys => "keys",
            ActionBackend::SystemEvents => "system-events",
            ActionBackend::CgEvent => "cg-event",
            ActionBackend::Command => "command",
        }
    }
}

/// Scroll smoothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Smoothing {
    /// Output follows input.
    None,
    /// Exponential moving average of the per-event v120 delta: `ema += factor * (x - ema)`,
    /// `factor` in (0, 1]; 1 = no smoothing.
    Ema(f32),
}

/// Scroll inertia (off by default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Inertia {
    /// No inertia.
    Off,
    /// What smoothing and clamping hold back is carried (bounded by `limit` detents) and
    /// released only with later scroll input of the same direction: no timer. See
    /// [`crate::scroll`] for the exact rules.
    Carry {
        /// Bound of the carried travel, in detents.
        limit: f32,
    },
    /// A decaying tail after the wheel stops: the engine estimates the wheel's speed and,
    /// once the wheel stops, asks for a tick every `interval_us`, moving `speed × interval`
    /// multiplied by `decay` per tick until a tick would move less than a tenth of a detent.
    /// Slow scrolling arms no timer. See [`crate::scroll`] for the exact rules.
    Glide {
        /// Velocity kept per tick, in (0, 1).
        decay: f32,
        /// Tick period, µs.
        interval_us: u64,
    },
}

/// Per-device-overridable scroll settings, all axes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScrollSettings {
    /// Invert the vertical wheel ("natural" scrolling for a mouse).
    pub invert_vertical: bool,
    /// Invert the horizontal wheel (thumb wheel), independent of vertical.
    pub invert_horizontal: bool,
    /// Smoothing.
    pub smoothing: Smoothing,
    /// Largest output step per event, in detents (1 detent = 120 v120 units).
    pub max_step: f32,
    /// An input event larger than `spike_ratio` × the current EMA magnitude is limited to it;
    /// 0 turns spike damping off. Otherwise at least 1.
    pub spike_ratio: f32,
    /// A pause longer than this (µs) starts a new scroll gesture (EMA and carry reset).
    pub gesture_gap_us: u64,
    /// Inertia.
    pub inertia: Inertia,
}

impl Default for ScrollSettings {
    fn default() -> Self {
        ScrollSettings {
            invert_vertical: true,
            invert_horizontal: false,
            smoothing: Smoothing::Ema(0.35),
            max_step: 5.0,
            spike_ratio: 4.0,
            gesture_gap_us: 300_000,
            inertia: Inertia::Off,
        }
    }
}

/// Which devices' wheels pawl transforms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// MX Master family members (and receivers whose name says MX Master).
    MxMasterOnly,
    /// Every device with a wheel that is not a touchpad.
    AllWheels,
    /// No device: scroll is passed through.
    None,
    /// Devices matching any of these.
    Matchers(Vec<DeviceMatcher>),
}

/// The gesture button.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GestureConfig {
    /// The button held for a gesture.
    pub button: Button,
    /// Travel along the dominant axis that fires, px.
    pub threshold: u32,
    /// Swap desktop-left and desktop-right (drag left → desktop on the right, like
    /// pushing the desktop away).
    pub invert_desktop: bool,
    /// Fire again every further `threshold` of travel while held.
    pub repeat: bool,
    /// Action for a drag to the left.
    pub left: Action,
    /// Action for a drag to the right.
    pub right: Action,
    /// Action for a drag up.
    pub up: Action,
    /// Action for a drag down.
    pub down: Action,
    /// Action when released without a fire.
    pub click: Action,
}

/// Button mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ButtonsConfig {
    /// Button number of back.
    pub back: Button,
    /// Button number of forward.
    pub forward: Button,
    /// Action of the back button.
    pub on_back: Action,
    /// Action of the forward button.
    pub on_forward: Action,
    /// Further buttons mapped to actions.
    pub map: Vec<(Button, Action)>,
}

/// How and with which chords actions are performed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionsConfig {
    /// The backend.
    pub backend: ActionBackend,
    /// Whose shortcuts the `keys` backend presses; `None` = from `XDG_CURRENT_DESKTOP`.
    pub desktop: Option<Desktop>,
    /// Chord overrides for built-in actions: (action, index into [`Config::chords`]).
    pub chords: Vec<(Action, u16)>,
    /// Command overrides for built-in actions: (action, index into [`Config::commands`]).
    pub commands: Vec<(Action, u16)>,
    /// Whether `command` actions may run when pawl runs as root.
    pub allow_root_commands: bool,
}

/// A `[[device]]` rule: a matcher plus what to do with matching devices.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceRule {
    /// Which devices.
    pub matcher: DeviceMatcher,
    /// `Some(false)`: never handle (never grab); `Some(true)`: handle even if out of scope.
    pub handle: Option<bool>,
    /// Treat as an MX Master (for receivers whose name does not say so).
    pub mx_master: bool,
    /// Per-device scroll settings (replace the global ones for this device).
    pub scroll: ScrollSettings,
    /// Whether scroll of matching devices is transformed (`None` = by scope).
    pub transform_scroll: Option<bool>,
    /// 1-based line of the rule in the file, for `pawl devices` reports.
    pub line: usize,
}

/// The validated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Gesture button settings.
    pub gesture: GestureConfig,
    /// Button mapping.
    pub buttons: ButtonsConfig,
    /// Action backend and overrides.
    pub actions: ActionsConfig,
    /// Which wheels are transformed.
    pub scope: Scope,
    /// Global scroll settings.
    pub scroll: ScrollSettings,
    /// Device rules, in file order; later rules override earlier ones.
    pub devices: Vec<DeviceRule>,
    /// Chords referred to by [`Action::Key`] and [`ActionsConfig::chords`].
    pub chords: Vec<Chord>,
    /// argv vectors referred to by [`Action::Command`] and [`ActionsConfig::commands`].
    pub commands: Vec<Vec<String>>,
    /// Logitech HID++ (Linux).
    pub hidpp: HidppConfig,
}

/// Logitech HID++ settings (`[hidpp]`, Linux).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HidppConfig {
    /// Divert the MX Master's gesture button (HID++ 0x1B04 control 0x00C3, temporarily,
    /// undone on exit) so it works as the gesture button; `false` leaves HID++ alone (for
    /// logid or Solaar).
    pub enabled: bool,
}

/// What the config decides for one device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceDecision {
    /// Whether pawl handles (on Linux: grabs) the device.
    pub handle: bool,
    /// Whether its scroll is transformed.
    pub transform_scroll: bool,
    /// Effective scroll settings.
    pub scroll: ScrollSettings,
    /// Why, for `pawl devices` and `pawl inspect`: e.g. `mx-master family`, `rule at line 12`.
    pub reason: String,
}

impl Config {
    /// The defaults for `platform` (what an empty file gives).
    pub fn default_for(platform: Platform) -> Config {
        let (backend, nav) = match platform {
            Platform::Linux => (
                ActionBackend::Keys,
                (Action::PassThrough, Action::PassThrough),
            ),
            Platform::MacOs => (ActionBackend::SystemEvents, (Action::Back, Action::Forward)),
        };
        Config {
            gesture: GestureConfig {
                button: Button(5),
                threshold: 220,
                invert_desktop: true,
                repeat: false,
                left: Action::DesktopLeft,
                right: Action::DesktopRight,
                up: Action::Overview,
                down: Action::AppExpose,
                click: Action::PassThrough,
            },
            buttons: ButtonsConfig {
                back: Button::BACK,
                forward: Button::FORWARD,
                on_back: nav.0,
                on_forward: nav.1,
                map: Vec::new(),
            },
            actions: ActionsConfig {
                backend,
                desktop: None,
                chords: Vec::new(),
                commands: Vec::new(),
                allow_root_commands: false,
            },
            scope: Scope::MxMasterOnly,
            scroll: ScrollSettings::default(),
            devices: Vec::new(),
            chords: Vec::new(),
            commands: Vec::new(),
            hidpp: HidppConfig { enabled: false },
        }
    }

    /// Parses and validates config text. `file` is only used in error locations.
    ///
    /// Errors: every problem found, each with `file:line:column`, the key and a message
    /// (for range errors, the allowed range).
    pub fn parse(text: &str, file: &str, platform: Platform) -> Result<Config, ConfigErrors> {
        let raw: RawConfig = match toml::from_str(text) {
            Ok(raw) => raw,
            Err(e) => {
                let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
                let message = e.message().trim().replace('\n', " ");
                return Err(ConfigErrors(vec![ConfigError {
                    file: file.to_owned(),
                    line,
                    column,
                    key: String::new(),
                    message,
                }]));
            }
        };
        let mut v = Validator {
            text,
            file,
            errors: Vec::new(),
            config: Config::default_for(platform),
        };
        v.apply(raw);
        v.errors.sort_by_key(|e| (e.line, e.column));
        if v.errors.is_empty() {
            Ok(v.config)
        } else {
            Err(ConfigErrors(v.errors))
        }
    }

    /// Decides what to do with a device: handle it or not, transform its scroll or not, and
    /// with which settings. Touchpads are never handled unless a rule names them.
    pub fn decide(&self, info: &DeviceInfo) -> DeviceDecision {
        let mut mx = is_mx_master(info);
        let mut scroll = self.scroll;
        let mut rule_handle = None;
        let mut rule_transform = None;
        let mut reason = String::new();
        for rule in self.devices.iter().filter(|r| r.matcher.matches(info)) {
            mx |= rule.mx_master;
            scroll = rule.scroll;
            rule_handle = rule.handle.or(rule_handle);
            rule_transform = rule.transform_scroll.or(rule_transform);
            reason = format!("[[device]] at line {}", rule.line);
        }
        let in_scope = !info.is_touchpad
            && match &self.scope {
                Scope::MxMasterOnly => mx,
                Scope::AllWheels => info.has_wheel,
                Scope::None => false,
                Scope::Matchers(ms) => ms.iter().any(|m| m.matches(info)),
            };
        let transform_scroll = rule_transform.unwrap_or(in_scope);
        let handle = rule_handle.unwrap_or(transform_scroll || (mx && !info.is_touchpad));
        if reason.is_empty() {
            reason = match (&self.scope, mx, in_scope) {
                (_, true, _) => "mx-master family".to_owned(),
                (Scope::AllWheels, _, true) => "scope all-wheels".to_owned(),
                (Scope::Matchers(_), _, true) => "scope matcher".to_owned(),
                _ if info.is_touchpad => "touchpad".to_owned(),
                _ => "not in scope".to_owned(),
            };
        }
        DeviceDecision {
            handle,
            transform_scroll: transform_scroll && handle,
            scroll,
            reason,
        }
    }

    /// The action of a mapped button, if any (gesture button excluded).
    pub fn button_action(&self, b: Button) -> Option<Action> {
        if b == self.buttons.back {
            return Some(self.buttons.on_back);
        }
        if b == self.buttons.forward {
            return Some(self.buttons.on_forward);
        }
        self.buttons
            .map
            .iter()
            .find(|(mb, _)| *mb == b)
            .map(|(_, a)| *a)
    }
}

/// One config problem, located.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file name as given to [`Config::parse`].
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// Dotted key path (`scroll.max_step`), empty when the TOML itself is malformed.
    pub key: String,
    /// What is wrong, including the allowed range or values.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}

/// Every problem in a config, in file order. Displays one per line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// 1-based (line, column) of byte offset `pos` in `text`.
fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

// ---------------------------------------------------------------------------------------
// The file format. serde derives live here only, so the validated types above are not a
// file-format promise.

type S<T> = Option<Spanned<T>>;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    gesture: Option<RawGesture>,
    buttons: Option<RawButtons>,
    actions: Option<RawActions>,
    scroll: Option<RawScroll>,
    hidpp: Option<RawHidpp>,
    #[serde(default)]
    device: Vec<Spanned<RawDevice>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHidpp {
    enabled: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGesture {
    button: S<i64>,
    threshold: S<i64>,
    invert_desktop: Option<bool>,
    repeat: Option<bool>,
    left: S<toml::Value>,
    right: S<toml::Value>,
    up: S<toml::Value>,
    down: S<toml::Value>,
    click: S<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawButtons {
    back: S<i64>,
    forward: S<i64>,
    on_back: S<toml::Value>,
    on_forward: S<toml::Value>,
    map: Option<Spanned<toml::Table>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawActions {
    backend: S<String>,
    desktop: S<String>,
    allow_root_commands: Option<bool>,
    chords: Option<Spanned<toml::Table>>,
    commands: Option<Spanned<toml::Table>>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawScroll {
    scope: S<toml::Value>,
    invert_vertical: Option<bool>,
    invert_horizontal: Option<bool>,
    smoothing: S<String>,
    smoothing_factor: S<f64>,
    max_step: S<f64>,
    spike_ratio: S<f64>,
    gesture_gap_ms: S<i64>,
    inertia: S<String>,
    carry_limit: S<f64>,
    glide_decay: S<f64>,
    glide_interval_ms: S<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    name: S<String>,
    id: S<String>,
    bus: S<String>,
    handle: Option<bool>,
    mx_master: Option<bool>,
    transform_scroll: Option<bool>,
    scroll: Option<RawScroll>,
}

struct Validator<'a> {
    text: &'a str,
    file: &'a str,
    errors: Vec<ConfigError>,
    config: Config,
}

impl Validator<'_> {
    fn error(&mut self, span: std::ops::Range<usize>, key: &str, message: String) {
        let (line, column) = line_col(self.text, span.start);
        self.errors.push(ConfigError {
            file: self.file.to_owned(),
            line,
            column,
            key: key.to_owned(),
            message,
        });
    }

    fn int(&mut self, v: &S<i64>, key: &str, lo: i64, hi: i64, unit: &str) -> Option<i64> {
        let v = v.as_ref()?;
        let n = *v.get_ref();
        if (lo..=hi).contains(&n) {
            Some(n)
        } else {
            self.error(
                v.span(),
                key,
                format!("{n} is out of range: allowed {lo}..={hi}{unit}"),
            );
            None
        }
    }

    fn float(&mut self, v: &S<f64>, key: &str, lo: f64, hi: f64, unit: &str) -> Option<f64> {
        let v = v.as_ref()?;
        let n = *v.get_ref();
        if n.is_finite() && n >= lo && n <= hi {
            Some(n)
        } else {
            self.error(
                v.span(),
                key,
                format!("{n} is out of range: allowed {lo}..={hi}{unit}"),
            );
            None
        }
    }

    fn button(&mut self, v: &S<i64>, key: &str) -> Option<Button> {
        self.int(
            v,
            key,
            0,
            i64::from(Button::MAX),
            " (0-based button number)",
        )
        .map(|n| Button(n as u8))
    }

    fn choice<T: Copy>(&mut self, v: &S<String>, key: &str, options: &[(&str, T)]) -> Option<T> {
        let v = v.as_ref()?;
        if let Some((_, t)) = options.iter().find(|(n, _)| n == v.get_ref()) {
            return Some(*t);
        }
        let allowed: Vec<_> = options.iter().map(|(n, _)| format!("\"{n}\"")).collect();
        self.error(
            v.span(),
            key,
            format!(
                "unknown value {:?}: allowed {}",
                v.get_ref(),
                allowed.join(", ")
            ),
        );
        None
    }

    fn chord(&mut self, text: &str, span: std::ops::Range<usize>, key: &str) -> Option<u16> {
        match Chord::parse(text) {
            Ok(c) => {
                self.config.chords.push(c);
                Some((self.config.chords.len() - 1) as u16)
            }
            Err(m) => {
                self.error(span, key, m);
                None
            }
        }
    }

    fn argv(&mut self, v: &toml::Value, span: std::ops::Range<usize>, key: &str) -> Option<u16> {
        let argv: Option<Vec<String>> = v
            .as_array()
            .map(|a| a.iter().map(|s| s.as_str().map(str::to_owned)).collect())
            .and_then(|v: Option<Vec<String>>| v);
        match argv {
            Some(argv) if !argv.is_empty() && !argv[0].is_empty() => {
                self.config.commands.push(argv);
                Some((self.config.commands.len() - 1) as u16)
            }
            _ => {
                self.error(
                    span,
                    key,
                    "a command is a non-empty array of strings: [\"program\", \"arg\", …]".into(),
                );
                None
            }
        }
    }

    /// An action value: a built-in name, `{ key = "…" }` or `{ command = [argv…] }`.
    fn action(&mut self, v: &S<toml::Value>, key: &str) -> Option<Action> {
        let v = v.as_ref()?;
        self.action_value(v.get_ref(), v.span(), key)
    }

    fn action_value(
        &mut self,
        value: &toml::Value,
        span: std::ops::Range<usize>,
        key: &str,
    ) -> Option<Action> {
        let builtin_names = || {
            BUILTIN_ACTIONS
                .iter()
                .map(|a| format!("\"{}\"", a.name().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match value {
            toml::Value::String(s) => match Action::from_name(s) {
                Some(a) => Some(a),
                None => {
                    let msg = format!(
                        "unknown action {s:?}: allowed {}, {{ key = \"Super+Page_Up\" }}, {{ command = [\"prog\", \"arg\"] }}",
                        builtin_names()
                    );
                    self.error(span, key, msg);
                    None
                }
            },
            toml::Value::Table(t) if t.len() == 1 && t.contains_key("key") => match &t["key"] {
                toml::Value::String(s) => self.chord(s, span, key).map(Action::Key),
                _ => {
                    self.error(
                        span,
                        key,
                        "key must be a string like \"Super+Page_Up\"".into(),
                    );
                    None
                }
            },
            toml::Value::Table(t) if t.len() == 1 && t.contains_key("command") => {
                self.argv(&t["command"], span, key).map(Action::Command)
            }
            _ => {
                let msg = format!(
                    "an action is one of {}, {{ key = \"…\" }} or {{ command = [\"prog\", …] }}",
                    builtin_names()
                );
                self.error(span, key, msg);
                None
            }
        }
    }

    fn scroll(&mut self, raw: &RawScroll, base: ScrollSettings, prefix: &str) -> ScrollSettings {
        let mut s = base;
        let k = |name: &str| format!("{prefix}.{name}");
        if let Some(b) = raw.invert_vertical {
            s.invert_vertical = b;
        }
        if let Some(b) = raw.invert_horizontal {
            s.invert_horizontal = b;
        }
        let factor = self.float(&raw.smoothing_factor, &k("smoothing_factor"), 0.01, 1.0, "");
        let current_factor = match s.smoothing {
            Smoothing::Ema(f) => f,
            Smoothing::None => 0.35,
        };
        let factor = factor.map_or(current_factor, |f| f as f32);
        let kind = self.choice(
            &raw.smoothing,
            &k("smoothing"),
            &[("ema", true), ("none", false)],
        );
        s.smoothing = match kind {
            Some(false) => Smoothing::None,
            Some(true) => Smoothing::Ema(factor),
            None => match s.smoothing {
                Smoothing::None => Smoothing::None,
                Smoothing::Ema(_) => Smoothing::Ema(factor),
            },
        };
        if let Some(m) = self.float(&raw.max_step, &k("max_step"), 0.1, 100.0, " detents") {
            s.max_step = m as f32;
        }
        if let Some(v) = &raw.spike_ratio {
            let r = *v.get_ref();
            if r == 0.0 || (1.0..=100.0).contains(&r) {
                s.spike_ratio = r as f32;
            } else {
                self.error(
                    v.span(),
                    &k("spike_ratio"),
                    format!("{r} is out of range: allowed 0 (off) or 1..=100"),
                );
            }
        }
        if let Some(g) = self.int(&raw.gesture_gap_ms, &k("gesture_gap_ms"), 10, 10_000, " ms") {
            s.gesture_gap_us = g as u64 * 1000;
        }
        let limit = self.float(&raw.carry_limit, &k("carry_limit"), 0.0, 50.0, " detents");
        let decay = self.float(&raw.glide_decay, &k("glide_decay"), 0.05, 0.99, "");
        let interval = self.int(
            &raw.glide_interval_ms,
            &k("glide_interval_ms"),
            4,
            100,
            " ms",
        );
        let mode = self.choice(
            &raw.inertia,
            &k("inertia"),
            &[("off", 0u8), ("carry", 1), ("glide", 2)],
        );
        let mode = mode.unwrap_or(match s.inertia {
            Inertia::Off => 0,
            Inertia::Carry { .. } => 1,
            Inertia::Glide { .. } => 2,
        });
        let (old_limit, old_decay, old_interval) = match s.inertia {
            Inertia::Carry { limit } => (limit, 0.85, 16_000),
            Inertia::Glide { decay, interval_us } => (3.0, decay, interval_us),
            Inertia::Off => (3.0, 0.85, 16_000),
        };
        s.inertia = match mode {
            1 => Inertia::Carry {
                limit: limit.map_or(old_limit, |l| l as f32),
            },
            2 => Inertia::Glide {
                decay: decay.map_or(old_decay, |d| d as f32),
                interval_us: interval.map_or(old_interval, |i| i as u64 * 1000),
            },
            _ => Inertia::Off,
        };
        s
    }

    fn matcher(
        &mut self,
        name: &S<String>,
        id: &S<String>,
        bus: &S<String>,
        key: &str,
    ) -> DeviceMatcher {
        let mut m = DeviceMatcher {
            name: name.as_ref().map(|n| n.get_ref().clone()),
            ..Default::default()
        };
        if let Some(id) = id {
            match parse_id(id.get_ref()) {
                Some((v, p)) => {
                    m.vendor = Some(v);
                    m.product = p;
                }
                None => self.error(
                    id.span(),
                    &format!("{key}.id"),
                    format!("{:?} is not a device id: use \"vvvv:pppp\" or \"vvvv\" in hex, e.g. \"046d:b034\"", id.get_ref()),
                ),
            }
        }
        if let Some(b) = bus {
            match Bus::parse(b.get_ref()) {
                Some(bus) => m.bus = Some(bus),
                None => self.error(
                    b.span(),
                    &format!("{key}.bus"),
                    format!("unknown bus {:?}: allowed \"usb\", \"bluetooth\", \"i2c\", \"i8042\", \"virtual\" or a number", b.get_ref()),
                ),
            }
        }
        m
    }

    fn apply(&mut self, raw: RawConfig) {
        if let Some(h) = &raw.hidpp
            && let Some(b) = h.enabled
        {
            self.config.hidpp.enabled = b;
        }
        if let Some(g) = raw.gesture {
            if let Some(b) = self.button(&g.button, "gesture.button") {
                self.config.gesture.button = b;
            }
            if let Some(t) = self.int(&g.threshold, "gesture.threshold", 1, 10_000, " px") {
                self.config.gesture.threshold = t as u32;
            }
            if let Some(b) = g.invert_desktop {
                self.config.gesture.invert_desktop = b;
            }
            if let Some(b) = g.repeat {
                self.config.gesture.repeat = b;
            }
            for (v, key) in [
                (&g.left, "left"),
                (&g.right, "right"),
                (&g.up, "up"),
                (&g.down, "down"),
                (&g.click, "click"),
            ] {
                if let Some(a) = self.action(v, &format!("gesture.{key}")) {
                    let gc = &mut self.config.gesture;
                    *match key {
                        "left" => &mut gc.left,
                        "right" => &mut gc.right,
                        "up" => &mut gc.up,
                        "down" => &mut gc.down,
                        _ => &mut gc.click,
                    } = a;
                }
            }
        }
        if let Some(b) = raw.buttons {
            if let Some(n) = self.button(&b.back, "buttons.back") {
                self.config.buttons.back = n;
            }
            if let Some(n) = self.button(&b.forward, "buttons.forward") {
                self.config.buttons.forward = n;
            }
            if let Some(a) = self.action(&b.on_back, "buttons.on_back") {
                self.config.buttons.on_back = a;
            }
            if let Some(a) = self.action(&b.on_forward, "buttons.on_forward") {
                self.config.buttons.on_forward = a;
            }
            if let Some(map) = &b.map {
                let span = map.span();
                for (k, v) in map.get_ref() {
                    let key = format!("buttons.map.{k}");
                    let n = match k.parse::<u8>() {
                        Ok(n) if n <= Button::MAX => n,
                        _ => {
                            self.error(
                                span.clone(),
                                &key,
                                format!(
                                    "{k:?} is not a button number: allowed 0..={}",
                                    Button::MAX
                                ),
                            );
                            continue;
                        }
                    };
                    if let Some(a) = self.action_value(v, span.clone(), &key) {
                        self.config.buttons.map.push((Button(n), a));
                    }
                }
            }
        }
        if let Some(a) = raw.actions {
            let backends = [
                ("keys", ActionBackend::Keys),
                ("system-events", ActionBackend::SystemEvents),
                ("cg-event", ActionBackend::CgEvent),
                ("command", ActionBackend::Command),
            ];
            if let Some(b) = self.choice(&a.backend, "actions.backend", &backends) {
                self.config.actions.backend = b;
            }
            let desktops = [
                ("auto", None),
                ("gnome", Some(Desktop::Gnome)),
                ("kde", Some(Desktop::Kde)),
                ("macos", Some(Desktop::MacOs)),
            ];
            if let Some(d) = self.choice(&a.desktop, "actions.desktop", &desktops) {
                self.config.actions.desktop = d;
            }
            if let Some(b) = a.allow_root_commands {
                self.config.actions.allow_root_commands = b;
            }
            for (table, is_chord) in [(&a.chords, true), (&a.commands, false)] {
                let Some(table) = table else { continue };
                let span = table.span();
                let section = if is_chord {
                    "actions.chords"
                } else {
                    "actions.commands"
                };
                for (k, v) in table.get_ref() {
                    let key = format!("{section}.{k}");
                    let action = match Action::from_name(k) {
                        Some(a) if !matches!(a, Action::None | Action::PassThrough) => a,
                        _ => {
                            self.error(
                                span.clone(),
                                &key,
                                format!("{k:?} is not a built-in action with a shortcut"),
                            );
                            continue;
                        }
                    };
                    if is_chord {
                        let Some(s) = v.as_str() else {
                            self.error(
                                span.clone(),
                                &key,
                                "a chord is a string like \"Super+Page_Up\"".into(),
                            );
                            continue;
                        };
                        if let Some(i) = self.chord(s, span.clone(), &key) {
                            self.config.actions.chords.push((action, i));
                        }
                    } else if let Some(i) = self.argv(v, span.clone(), &key) {
                        self.config.actions.commands.push((action, i));
                    }
                }
            }
        }
        if let Some(s) = &raw.scroll {
            if let Some(scope) = &s.scope {
                match scope.get_ref() {
                    toml::Value::String(name) => match name.as_str() {
                        "mx-master-only" => self.config.scope = Scope::MxMasterOnly,
                        "all-wheels" => self.config.scope = Scope::AllWheels,
                        "none" => self.config.scope = Scope::None,
                        other => self.error(
                            scope.span(),
                            "scroll.scope",
                            format!("unknown scope {other:?}: allowed \"mx-master-only\", \"all-wheels\", \"none\" or an array of matchers like [{{ id = \"046d:b034\" }}, {{ name = \"*MX Master*\" }}]"),
                        ),
                    },
                    toml::Value::Array(items) => {
                        let mut ms = Vec::new();
                        for item in items {
                            let parsed: Result<RawMatcher, _> = item.clone().try_into();
                            match parsed {
                                Ok(m) => {
                                    let name = m.name.map(|n| Spanned::new(scope.span(), n));
                                    let id = m.id.map(|n| Spanned::new(scope.span(), n));
                                    let bus = m.bus.map(|n| Spanned::new(scope.span(), n));
                                    ms.push(self.matcher(&name, &id, &bus, "scroll.scope"));
                                }
                                Err(e) => self.error(scope.span(), "scroll.scope", format!("bad matcher: {}", e.message().trim())),
                            }
                        }
                        self.config.scope = Scope::Matchers(ms);
                    }
                    _ => self.error(scope.span(), "scroll.scope", "scope is a string or an array of matchers".into()),
                }
            }
            let base = self.config.scroll;
            self.config.scroll = self.scroll(s, base, "scroll");
        }
        for (i, d) in raw.device.iter().enumerate() {
            let key = format!("device[{i}]");
            let line = line_col(self.text, d.span().start).0;
            let d = d.get_ref();
            let matcher = self.matcher(&d.name, &d.id, &d.bus, &key);
            let base = self.config.scroll;
            let scroll = match &d.scroll {
                Some(s) => self.scroll(s, base, &format!("{key}.scroll")),
                None => base,
            };
            self.config.devices.push(DeviceRule {
                matcher,
                handle: d.handle,
                mx_master: d.mx_master.unwrap_or(false),
                scroll,
                transform_scroll: d.transform_scroll,
                line,
            });
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatcher {
    name: Option<String>,
    id: Option<String>,
    bus: Option<String>,
}

/// Parses `"046d:b034"` or `"046d"` (hex).
fn parse_id(s: &str) -> Option<(u16, Option<u16>)> {
    let mut parts = s.split(':');
    let v = u16::from_str_radix(parts.next()?, 16).ok()?;
    let p = match parts.next() {
        Some(p) => Some(u16::from_str_radix(p, 16).ok()?),
        None => None,
    };
    if parts.next().is_some() {
        return None;
    }
    Some((v, p))
}

/// The commented default configuration for `platform`, as printed by
/// `pawl config default`. Parsing it gives [`Config::default_for`]`(platform)`.
pub fn default_config_text(platform: Platform) -> String {
    let (backend, on_back, on_forward, backends) = match platform {
        Platform::Linux => (
            "keys",
            "pass-through",
            "pass-through",
            "\"keys\" or \"command\"",
        ),
        Platform::MacOs => (
            "system-events",
            "back",
            "forward",
            "\"system-events\", \"cg-event\" or \"command\"",
        ),
    };
    DEFAULT_TEMPLATE
        .replace("{backend}", backend)
        .replace("{backends}", backends)
        .replace("{on_back}", on_back)
        .replace("{on_forward}", on_forward)
}

const DEFAULT_TEMPLATE: &str = r#"# pawl configuration: every key with its default value.
# Location: $XDG_CONFIG_HOME/pawl/config.toml (usually ~/.config/pawl/config.toml),
# or the file given with --config. A missing file means these defaults.
# Buttons are 0-based: 0 left, 1 right, 2 middle, 3 back, 4 forward, 5.. extra buttons
# (Linux: code - BTN_MOUSE; macOS: the CGEvent button number).
#
# An action is one of:
#   "desktop-left" "desktop-right" "overview" "app-expose" "show-desktop"
#   "back" "forward" "pass-through" (forward the click unchanged) "none" (swallow it)
#   { key = "Super+Page_Up" }             a key chord, pressed in order, released in reverse
#   { command = ["prog", "arg", ...] }    a program run directly (no shell)

[gesture]
# Button held for gestures (0..=31).
button = 5
# Travel along the dominant axis that fires a gesture, px (1..=10000).
threshold = 220
# Swap desktop-left/right: dragging left shows the desktop on the right.
invert_desktop = true
# Fire again for every further threshold of travel while held.
repeat = false
left = "desktop-left"
right = "desktop-right"
up = "overview"
down = "app-expose"
# When released without a gesture.
click = "pass-through"

[buttons]
# Button numbers of back and forward (0..=31) and what they do.
back = 3
forward = 4
on_back = "{on_back}"
on_forward = "{on_forward}"

# Any other button may map to an action:
[buttons.map]
# 6 = "show-desktop"
# 7 = { key = "Super+A" }

[actions]
# How actions are performed: {backends}.
backend = "{backend}"
# Whose shortcuts built-in actions press (Linux "keys" backend): "auto" (from
# XDG_CURRENT_DESKTOP), "gnome" (Super+Page_Up/Page_Down, Super) or "kde"
# (Ctrl+Meta+Left/Right, Meta+W).
desktop = "auto"
# Run command actions even when pawl runs as root.
allow_root_commands = false

# Override the chord of a built-in action:
[actions.chords]
# desktop-left = "Super+Page_Up"

# Or run a command instead (Hyprland, sway, niri: see README):
[actions.commands]
# desktop-left = ["hyprctl", "dispatch", "workspace", "e-1"]

[scroll]
# Which wheels are transformed: "mx-master-only", "all-wheels", "none", or matchers
# like [{ id = "046d:b034" }, { name = "*MX Master*", bus = "bluetooth" }].
# Touchpads are never transformed.
scope = "mx-master-only"
invert_vertical = true
invert_horizontal = false
# "ema" (exponential moving average of the per-event delta) or "none".
smoothing = "ema"
# Weight of each new event in the average (0.01..=1.0; 1.0 = no smoothing).
smoothing_factor = 0.35
# Largest step per event, detents (0.1..=100).
max_step = 5.0
# An event larger than spike_ratio x the current average is limited to it (1..=100;
# 0 = no spike damping).
spike_ratio = 4.0
# A pause longer than this starts a new scroll gesture, ms (10..=10000).
gesture_gap_ms = 300
# "off", "carry" (travel held back by smoothing and max_step is released with later
# wheel input, no timer) or "glide" (after a fast scroll, a decaying tail once the wheel
# stops; slow scrolling never glides).
inertia = "off"
# carry: bound of the carried travel, detents (0..=50).
carry_limit = 3.0
# glide: velocity kept per tick (0.05..=0.99) and tick period, ms (4..=100).
glide_decay = 0.85
glide_interval_ms = 16

[hidpp]
# Linux: divert the MX Master's thumb gesture button through Logitech HID++ (its hidraw
# node; temporarily, redone after a reconnect, undone on exit) so it works as the gesture
# button: without this the MX Master 3S sends nothing for it, older models a key
# combination. While it is held, movement comes as HID++ raw XY instead of pointer motion.
# Cost: the kernel hands every report of the mouse to hidraw readers too, so with its
# pointer node grabbed (scroll transformed) each motion report is read twice, once from
# evdev and once from hidraw; with [scroll] scope = "none" and every [buttons] action
# "pass-through" the pointer is not grabbed and motion costs one hidraw read, no write. Leave it off when logid or
# Solaar manage the mouse. Needs read-write access to /dev/hidrawN (contrib/70-pawl.rules).
enabled = false

# Device rules, any number, later ones win. Match by name glob, id "vvvv:pppp" and bus;
# set handle = false to never touch a device, handle = true / mx_master = true to take
# one that is not in scope, and give it its own [device.scroll] settings.
# [[device]]
# name = "*MX Master*"
# id = "046d:c548"
# bus = "usb"
# mx_master = true
# [device.scroll]
# invert_vertical = false
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{Bus, LOGITECH};

    fn parse(text: &str) -> Result<Config, ConfigErrors> {
        Config::parse(text, "config.toml", Platform::Linux)
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn empty_file_gives_the_documented_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c, Config::default_for(Platform::Linux));
        assert_eq!(c.gesture.button, Button(5));
        assert_eq!(c.buttons.back, Button(3));
        assert_eq!(c.buttons.forward, Button(4));
        assert_eq!(c.gesture.threshold, 220);
        assert_eq!(c.actions.backend, ActionBackend::Keys);
        assert!(c.gesture.invert_desktop);
        assert_eq!(c.scope, Scope::MxMasterOnly);
        assert!(c.scroll.invert_vertical);
        assert!(!c.scroll.invert_horizontal);
        assert_eq!(c.scroll.smoothing, Smoothing::Ema(0.35));
        assert_eq!(c.scroll.max_step, 5.0);
        let mac = Config::default_for(Platform::MacOs);
        assert_eq!(mac.actions.backend, ActionBackend::SystemEvents);
        assert_eq!(mac.buttons.on_back, Action::Back);
    }

    #[test]
    fn hidpp_is_off_by_default_and_can_be_switched_on() {
        let c = Config::parse("[hidpp]\nenabled = true\n", "c.toml", Platform::Linux).unwrap();
        assert!(c.hidpp.enabled);
        assert!(!Config::default_for(Platform::Linux).hidpp.enabled);
        let e = Config::parse("[hidpp]\nenable = false\n", "c.toml", Platform::Linux).unwrap_err();
        assert!(e.to_string().contains("c.toml:2:"), "{e}");
        let text = default_config_text(Platform::Linux);
        assert!(text.contains("\n[hidpp]\n"), "{text}");
        assert!(text.contains("\nenabled = false\n"), "{text}");
    }

    #[test]
    fn default_config_text_parses_to_the_defaults_on_each_platform() {
        for p in [Platform::Linux, Platform::MacOs] {
            let c = Config::parse(&default_config_text(p), "default", p).unwrap();
            assert_eq!(c, Config::default_for(p));
        }
    }

    #[test]
    fn unknown_key_is_an_error_with_line_and_column() {
        let e = err("[gesture]\nthreshold = 100\nthresold = 5\n");
        assert!(e.starts_with("config.toml:3:1: "), "{e}");
        assert!(e.contains("thresold"), "{e}");
    }

    #[test]
    fn out_of_range_value_names_key_range_and_position() {
        let e = err("[scroll]\nmax_step = 0.0\n");
        assert_eq!(
            e,
            "config.toml:2:12: scroll.max_step: 0 is out of range: allowed 0.1..=100 detents"
        );
        let e = err("[gesture]\n  threshold = -4\n");
        assert_eq!(
            e,
            "config.toml:2:15: gesture.threshold: -4 is out of range: allowed 1..=10000 px"
        );
    }

    #[test]
    fn every_range_error_is_reported_not_just_the_first() {
        let e = parse("[gesture]\nbutton = 40\n[scroll]\nspike_ratio = 0.5\n").unwrap_err();
        assert_eq!(e.0.len(), 2);
        assert_eq!(e.0[0].key, "gesture.button");
        assert_eq!(e.0[1].key, "scroll.spike_ratio");
    }

    #[test]
    fn actions_parse_as_names_chords_and_commands() {
        let c = parse(
            "[gesture]\nleft = { key = \"Super+Page_Up\" }\nright = { command = [\"swaymsg\", \"workspace\", \"next\"] }\nup = \"show-desktop\"\n",
        )
        .unwrap();
        assert_eq!(c.gesture.left, Action::Key(0));
        assert_eq!(c.chords[0].to_string(), "Super+Page_Up");
        assert_eq!(c.gesture.right, Action::Command(0));
        assert_eq!(c.commands[0], vec!["swaymsg", "workspace", "next"]);
        assert_eq!(c.gesture.up, Action::ShowDesktop);
    }

    #[test]
    fn unknown_key_name_in_a_chord_is_located() {
        let e = err("[gesture]\nleft = { key = \"Super+Pgup\" }\n");
        assert!(
            e.starts_with("config.toml:2:8: gesture.left: unknown key name \"Pgup\""),
            "{e}"
        );
    }

    #[test]
    fn unknown_action_lists_the_allowed_ones() {
        let e = err("[buttons]\non_back = \"go-back\"\n");
        assert!(e.contains("unknown action \"go-back\""), "{e}");
        assert!(e.contains("\"desktop-left\""), "{e}");
    }

    #[test]
    fn scope_accepts_names_and_matchers() {
        let c = parse("[scroll]\nscope = \"all-wheels\"\n").unwrap();
        assert_eq!(c.scope, Scope::AllWheels);
        let c = parse(
            "[scroll]\nscope = [{ id = \"046d:b034\" }, { name = \"*Master*\", bus = \"usb\" }]\n",
        )
        .unwrap();
        let Scope::Matchers(ms) = c.scope else {
            panic!("not matchers")
        };
        assert_eq!(ms[0].product, Some(0xb034));
        assert_eq!(ms[1].bus, Some(Bus::USB));
        assert!(err("[scroll]\nscope = \"everything\"\n").contains("unknown scope"));
    }

    fn info(name: &str, vendor: u16, product: u16, touchpad: bool) -> DeviceInfo {
        DeviceInfo {
            name: name.into(),
            bus: Bus::USB,
            vendor,
            product,
            has_wheel: !touchpad,
            is_touchpad: touchpad,
        }
    }

    #[test]
    fn default_scope_handles_mx_masters_and_nothing_else() {
        let c = Config::default_for(Platform::Linux);
        let mx = c.decide(&info("Logitech MX Master 3S", LOGITECH, 0xb034, false));
        assert!(mx.handle && mx.transform_scroll);
        let other = c.decide(&info("PixArt USB Optical Mouse", 0x093a, 0x2510, false));
        assert!(!other.handle);
        let tp = c.decide(&info("SynPS/2 Synaptics TouchPad", 2, 7, true));
        assert!(!tp.handle && !tp.transform_scroll);
    }

    #[test]
    fn device_rule_overrides_scroll_settings_and_handling() {
        let c = parse(
            "[[device]]\nid = \"046d:c548\"\nmx_master = true\n[device.scroll]\ninvert_vertical = false\nmax_step = 2\n\n[[device]]\nname = \"PixArt*\"\nhandle = false\n",
        )
        .unwrap();
        let bolt = c.decide(&info("Logitech USB Receiver", LOGITECH, 0xc548, false));
        assert!(bolt.handle && bolt.transform_scroll);
        assert!(!bolt.scroll.invert_vertical);
        assert_eq!(bolt.scroll.max_step, 2.0);
        assert_eq!(bolt.reason, "[[device]] at line 1");
        let all = parse(
            "[scroll]\nscope = \"all-wheels\"\n[[device]]\nname = \"PixArt*\"\nhandle = false\n",
        )
        .unwrap();
        assert!(!all.decide(&info("PixArt Mouse", 1, 2, false)).handle);
        assert!(all.decide(&info("Other Mouse", 1, 3, false)).handle);
    }

    #[test]
    fn scope_none_keeps_gestures_on_mx_master_but_passes_scroll() {
        let c = parse("[scroll]\nscope = \"none\"\n").unwrap();
        let d = c.decide(&info("Logitech MX Master 3S", LOGITECH, 0xb034, false));
        assert!(d.handle && !d.transform_scroll);
    }

    #[test]
    fn inertia_modes_parse_with_their_parameters() {
        let c = parse("[scroll]\ninertia = \"glide\"\nglide_decay = 0.9\nglide_interval_ms = 10\n")
            .unwrap();
        assert_eq!(
            c.scroll.inertia,
            Inertia::Glide {
                decay: 0.9,
                interval_us: 10_000
            }
        );
        let c = parse("[scroll]\ninertia = \"carry\"\ncarry_limit = 2\n").unwrap();
        assert_eq!(c.scroll.inertia, Inertia::Carry { limit: 2.0 });
    }

    #[test]
    fn malformed_toml_is_located() {
        let e = err("[gesture\nbutton = 5\n");
        assert!(e.starts_with("config.toml:1:"), "{e}");
    }
}
