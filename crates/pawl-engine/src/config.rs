//! Configuration: the TOML file format and the validated [`Config`] the engine runs on.
//!
//! Parsing is a pure function of the text ([`Config::parse`]): reading the file is the
//! caller's job. Every problem is reported with `file:line:column` of the exact key or
//! value, the dotted key, and what is allowed (the range, the values, the type in plain
//! words). All problems are collected, not just the first: TOML syntax errors (then nothing
//! else is checked), unknown keys, wrong types, out-of-range values, values another platform
//! needs, and button mappings that contradict each other.
//!
//! Settings that only matter in another mode are accepted silently (`smoothing_factor` with
//! `smoothing = "none"`, `carry_limit` or the glide keys with another inertia): switching the
//! mode later keeps them.

use std::fmt;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use crate::action::{Action, BUILTIN_ACTIONS, Chord, Desktop, Key};
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

    /// The highest button number the backend sees. Linux: 15, because pawl-evdev decodes
    /// the mouse button codes `BTN_MOUSE..BTN_JOYSTICK` (0x110..0x120,
    /// `input-event-codes.h`) as buttons 0..=15. macOS: 31, the CGEvent button numbers a
    /// [`crate::units::ButtonSet`] holds.
    pub const fn max_button(self) -> u8 {
        match self {
            Platform::Linux => 15,
            Platform::MacOs => Button::MAX,
        }
    }

    /// `Linux` or `macOS`, for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Platform::Linux => "Linux",
            Platform::MacOs => "macOS",
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

/// The inertia mode a scroll table names, without its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InertiaMode {
    /// `"off"`.
    Off,
    /// `"carry"`.
    Carry,
    /// `"glide"`.
    Glide,
}

/// Smoothing factor when none is given: [`ScrollSettings::default`]'s.
const DEFAULT_SMOOTHING_FACTOR: f32 = 0.35;
/// `carry_limit` when none is given, detents.
const DEFAULT_CARRY_LIMIT: f32 = 3.0;
/// `glide_decay` when none is given.
const DEFAULT_GLIDE_DECAY: f32 = 0.85;
/// `glide_interval_ms` when none is given, in µs.
const DEFAULT_GLIDE_INTERVAL_US: u64 = 16_000;

/// The scroll keys one table sets (`[scroll]` or one `[device.scroll]`), validated; `None`
/// = not set there. Tables are layered: [`ScrollOverrides::merge`] lets a later table
/// replace only the keys it sets, and [`ScrollOverrides::apply_to`] turns the result into
/// [`ScrollSettings`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ScrollOverrides {
    /// `invert_vertical`.
    pub invert_vertical: Option<bool>,
    /// `invert_horizontal`.
    pub invert_horizontal: Option<bool>,
    /// `smoothing`: `true` = `"ema"`, `false` = `"none"`.
    pub ema: Option<bool>,
    /// `smoothing_factor`, in (0, 1].
    pub smoothing_factor: Option<f32>,
    /// `max_step`, detents.
    pub max_step: Option<f32>,
    /// `spike_ratio` (0 = off).
    pub spike_ratio: Option<f32>,
    /// `gesture_gap_ms`, as µs.
    pub gesture_gap_us: Option<u64>,
    /// `inertia`.
    pub inertia: Option<InertiaMode>,
    /// `carry_limit`, detents.
    pub carry_limit: Option<f32>,
    /// `glide_decay`.
    pub glide_decay: Option<f32>,
    /// `glide_interval_ms`, as µs.
    pub glide_interval_us: Option<u64>,
}

impl ScrollOverrides {
    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        *self == ScrollOverrides::default()
    }

    /// Layers `later` on top: every key `later` sets replaces this one's, the others stay.
    pub fn merge(&mut self, later: &ScrollOverrides) {
        fn over<T: Copy>(a: &mut Option<T>, b: Option<T>) {
            if b.is_some() {
                *a = b;
            }
        }
        over(&mut self.invert_vertical, later.invert_vertical);
        over(&mut self.invert_horizontal, later.invert_horizontal);
        over(&mut self.ema, later.ema);
        over(&mut self.smoothing_factor, later.smoothing_factor);
        over(&mut self.max_step, later.max_step);
        over(&mut self.spike_ratio, later.spike_ratio);
        over(&mut self.gesture_gap_us, later.gesture_gap_us);
        over(&mut self.inertia, later.inertia);
        over(&mut self.carry_limit, later.carry_limit);
        over(&mut self.glide_decay, later.glide_decay);
        over(&mut self.glide_interval_us, later.glide_interval_us);
    }

    /// `base` with the set keys applied. A mode parameter that is not set keeps `base`'s
    /// value when `base` is in that mode, else its default (smoothing factor 0.35, carry
    /// limit 3 detents, glide decay 0.85 every 16 ms).
    pub fn apply_to(&self, base: ScrollSettings) -> ScrollSettings {
        let mut s = base;
        if let Some(b) = self.invert_vertical {
            s.invert_vertical = b;
        }
        if let Some(b) = self.invert_horizontal {
            s.invert_horizontal = b;
        }
        let base_factor = match base.smoothing {
            Smoothing::Ema(f) => Some(f),
            Smoothing::None => None,
        };
        let ema = self.ema.unwrap_or(base_factor.is_some());
        let factor = self
            .smoothing_factor
            .or(base_factor)
            .unwrap_or(DEFAULT_SMOOTHING_FACTOR);
        s.smoothing = if ema {
            Smoothing::Ema(factor)
        } else {
            Smoothing::None
        };
        if let Some(m) = self.max_step {
            s.max_step = m;
        }
        if let Some(r) = self.spike_ratio {
            s.spike_ratio = r;
        }
        if let Some(g) = self.gesture_gap_us {
            s.gesture_gap_us = g;
        }
        let (mode, limit, decay, interval) = match base.inertia {
            Inertia::Off => (InertiaMode::Off, None, None, None),
            Inertia::Carry { limit } => (InertiaMode::Carry, Some(limit), None, None),
            Inertia::Glide { decay, interval_us } => {
                (InertiaMode::Glide, None, Some(decay), Some(interval_us))
            }
        };
        s.inertia = match self.inertia.unwrap_or(mode) {
            InertiaMode::Off => Inertia::Off,
            InertiaMode::Carry => Inertia::Carry {
                limit: self.carry_limit.or(limit).unwrap_or(DEFAULT_CARRY_LIMIT),
            },
            InertiaMode::Glide => Inertia::Glide {
                decay: self.glide_decay.or(decay).unwrap_or(DEFAULT_GLIDE_DECAY),
                interval_us: self
                    .glide_interval_us
                    .or(interval)
                    .unwrap_or(DEFAULT_GLIDE_INTERVAL_US),
            },
        };
        s
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
    /// The scroll keys of its `[device.scroll]`: layered over the global `[scroll]` keys
    /// and the keys of earlier matching rules ([`Config::decide`]).
    pub scroll: ScrollOverrides,
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
    /// The `[scroll]` keys as written (what [`Config::scroll`] was built from), the bottom
    /// layer under device rules' keys.
    pub scroll_keys: ScrollOverrides,
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
    /// With `enabled`: divert the MX Master's thumb wheel (HID++ 0x2150, temporarily,
    /// undone on exit) while its pointer node is grabbed with scroll transformed, and send
    /// its rotation through that node's scroll settings as horizontal scroll, in steps of
    /// 1/120 turn instead of whole ratchets (an MX Master 3 has 18 per turn). Its
    /// direction is the one it has without pawl, flipped by `invert_horizontal` like any
    /// horizontal wheel. `false` leaves the thumb wheel to the kernel (and to logid or
    /// Solaar). Default `true`.
    pub thumb_wheel: bool,
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
            scroll_keys: ScrollOverrides::default(),
            devices: Vec::new(),
            chords: Vec::new(),
            commands: Vec::new(),
            hidpp: HidppConfig {
                enabled: false,
                thumb_wheel: true,
            },
        }
    }

    /// Parses and validates config text. `file` is only used in error locations.
    ///
    /// Errors: every problem found, each with `file:line:column`, the key and a message
    /// (for range errors, the allowed range).
    pub fn parse(text: &str, file: &str, platform: Platform) -> Result<Config, ConfigErrors> {
        let located = |span: Option<Range<usize>>, key: &str, message: String| {
            let (line, column) = span.map_or((1, 1), |s| line_col(text, s.start));
            ConfigError {
                file: file.to_owned(),
                line,
                column,
                key: key.to_owned(),
                message,
            }
        };
        let (doc, syntax) = DeTable::parse_recoverable(text);
        if !syntax.is_empty() {
            // The document is broken: report every syntax error, check nothing else (a
            // recovered document would only add confusing follow-up errors).
            let mut errors: Vec<ConfigError> = syntax
                .iter()
                .map(|e| {
                    let mut message = e.message().trim().replace('\n', " ");
                    let what = e.span().and_then(|s| text.get(s)).unwrap_or("");
                    if message == "duplicate key" && !what.is_empty() {
                        message =
                            format!("duplicate key `{what}`: each key and table may appear once");
                    }
                    located(e.span(), "", message)
                })
                .collect();
            errors.dedup_by(|a, b| a.line == b.line && a.message == b.message);
            return Err(ConfigErrors(errors));
        }
        let mut v = Validator {
            text,
            file,
            platform,
            errors: Vec::new(),
            config: Config::default_for(platform),
        };
        v.apply(doc.get_ref());
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
        let mut keys = self.scroll_keys;
        let mut rule_scroll = false;
        let mut rule_handle = None;
        let mut rule_transform = None;
        let mut reason = String::new();
        for rule in self.devices.iter().filter(|r| r.matcher.matches(info)) {
            mx |= rule.mx_master;
            // Each rule replaces only the scroll keys it sets.
            keys.merge(&rule.scroll);
            rule_scroll |= !rule.scroll.is_empty();
            rule_handle = rule.handle.or(rule_handle);
            rule_transform = rule.transform_scroll.or(rule_transform);
            reason = format!("[[device]] at line {}", rule.line);
        }
        let scroll = if rule_scroll {
            keys.apply_to(self.scroll)
        } else {
            self.scroll
        };
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
// The file format. The document is parsed into toml's spanned document tree (every key and
// value keeps its byte range) and walked here by hand, so that every problem — unknown key,
// wrong type, out of range, contradiction — is reported at the exact key or value, in the
// user's words, and all of them in one run.

type Item<'i> = Spanned<DeValue<'i>>;
type Span = Range<usize>;

/// `"a string \"220\""`, `"an integer (5)"`: what a value is, for type errors.
fn describe(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => format!("a string {:?}", s.as_ref()),
        DeValue::Integer(i) => format!("an integer ({i})"),
        DeValue::Float(f) => format!("a number ({f})"),
        DeValue::Boolean(b) => format!("a boolean ({b})"),
        DeValue::Datetime(d) => format!("a date-time ({d})"),
        DeValue::Array(_) => "an array".into(),
        DeValue::Table(_) => "a table".into(),
    }
}

/// `path.key`, or `key` at the top level.
fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The value of `key` in `t`.
fn get<'a, 'i>(t: &'a DeTable<'i>, key: &str) -> Option<&'a Item<'i>> {
    t.get(key)
}

/// The entries of `t` in the order the file has them (toml's map is sorted by key).
fn in_file_order<'a, 'i>(t: &'a DeTable<'i>) -> Vec<(&'a Spanned<DeString<'i>>, &'a Item<'i>)> {
    let mut entries: Vec<_> = t.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

/// The keys of `[scroll]` and `[device.scroll]` (`scope` is `[scroll]` only).
const SCROLL_KEYS: &[&str] = &[
    "invert_vertical",
    "invert_horizontal",
    "smoothing",
    "smoothing_factor",
    "max_step",
    "spike_ratio",
    "gesture_gap_ms",
    "inertia",
    "carry_limit",
    "glide_decay",
    "glide_interval_ms",
];

/// Where a button setting came from: the span of its value, `None` for the default.
type Origin = Option<Span>;

struct Validator<'a> {
    text: &'a str,
    file: &'a str,
    platform: Platform,
    errors: Vec<ConfigError>,
    config: Config,
}

impl Validator<'_> {
    fn error(&mut self, span: Span, key: &str, message: String) {
        let (line, column) = line_col(self.text, span.start);
        self.errors.push(ConfigError {
            file: self.file.to_owned(),
            line,
            column,
            key: key.to_owned(),
            message,
        });
    }

    /// `line N` of a span, or `default` for a setting not in the file.
    fn origin(&self, o: &Origin) -> String {
        match o {
            Some(span) => format!("line {}", line_col(self.text, span.start).0),
            None => "default".to_owned(),
        }
    }

    fn wrong_type(&mut self, v: &Item<'_>, key: &str, expected: &str) {
        let found = describe(v.get_ref());
        self.error(v.span(), key, format!("expected {expected}, found {found}"));
    }

    /// Reports every key of `t` not in `allowed`, at the key.
    fn known_keys(&mut self, t: &DeTable<'_>, path: &str, allowed: &[&str]) {
        for (k, _) in t.iter() {
            if !allowed.contains(&k.get_ref().as_ref()) {
                self.error(
                    k.span(),
                    &join(path, k.get_ref()),
                    format!("unknown key: allowed {}", allowed.join(", ")),
                );
            }
        }
    }

    /// The table at `key` of `t` (`None`, with an error, when it is something else).
    fn table<'t, 'i>(
        &mut self,
        t: &'t DeTable<'i>,
        path: &str,
        key: &str,
    ) -> Option<&'t DeTable<'i>> {
        let v = get(t, key)?;
        match v.get_ref() {
            DeValue::Table(inner) => Some(inner),
            _ => {
                let name = join(path, key);
                self.wrong_type(v, &name, &format!("a table ([{name}])"));
                None
            }
        }
    }

    fn bool(&mut self, t: &DeTable<'_>, path: &str, key: &str) -> Option<bool> {
        let v = get(t, key)?;
        match v.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            _ => {
                self.wrong_type(v, &join(path, key), "true or false");
                None
            }
        }
    }

    fn string<'t>(&mut self, t: &'t DeTable<'_>, path: &str, key: &str) -> Option<(&'t str, Span)> {
        let v = get(t, key)?;
        match v.get_ref() {
            DeValue::String(s) => Some((s.as_ref(), v.span())),
            _ => {
                self.wrong_type(v, &join(path, key), "a string");
                None
            }
        }
    }

    /// An integer in `lo..=hi`; `what` names the unit for type errors (`px`), `unit` is
    /// appended to the range in range errors (` px`).
    #[allow(clippy::too_many_arguments)]
    fn int(
        &mut self,
        t: &DeTable<'_>,
        path: &str,
        key: &str,
        (lo, hi): (i64, i64),
        what: &str,
        unit: &str,
    ) -> Option<(i64, Span)> {
        let v = get(t, key)?;
        let name = join(path, key);
        let DeValue::Integer(i) = v.get_ref() else {
            self.wrong_type(v, &name, &format!("an integer ({what})"));
            return None;
        };
        match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) if (lo..=hi).contains(&n) => Some((n, v.span())),
            _ => {
                self.error(
                    v.span(),
                    &name,
                    format!("{i} is out of range: allowed {lo}..={hi}{unit}"),
                );
                None
            }
        }
    }

    /// A number (integer or float) checked by `ok`; `allowed` describes the range.
    fn number(
        &mut self,
        t: &DeTable<'_>,
        path: &str,
        key: &str,
        what: &str,
        ok: impl Fn(f64) -> bool,
        allowed: &str,
    ) -> Option<f64> {
        let v = get(t, key)?;
        let name = join(path, key);
        let n = match v.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .map(|n| n as f64)
                .unwrap_or(f64::INFINITY),
            DeValue::Float(f) => f.as_str().parse::<f64>().unwrap_or(f64::NAN),
            _ => {
                self.wrong_type(v, &name, &format!("a number ({what})"));
                return None;
            }
        };
        if n.is_finite() && ok(n) {
            Some(n)
        } else {
            let shown = match v.get_ref() {
                DeValue::Integer(i) => i.to_string(),
                _ => n.to_string(),
            };
            self.error(
                v.span(),
                &name,
                format!("{shown} is out of range: allowed {allowed}"),
            );
            None
        }
    }

    /// A number in `lo..=hi`.
    #[allow(clippy::too_many_arguments)]
    fn float(
        &mut self,
        t: &DeTable<'_>,
        path: &str,
        key: &str,
        (lo, hi): (f64, f64),
        what: &str,
        unit: &str,
    ) -> Option<f32> {
        self.number(
            t,
            path,
            key,
            what,
            |n| n >= lo && n <= hi,
            &format!("{lo}..={hi}{unit}"),
        )
        .map(|n| n as f32)
    }

    /// A 0-based button number in this platform's range.
    fn button(&mut self, t: &DeTable<'_>, path: &str, key: &str) -> Option<(Button, Span)> {
        let max = self.platform.max_button();
        let unit = match self.platform {
            Platform::Linux => {
                " on Linux (0-based: code - BTN_MOUSE for codes BTN_MOUSE..BTN_JOYSTICK)"
            }
            Platform::MacOs => " on macOS (the CGEvent button number)",
        };
        self.int(
            t,
            path,
            key,
            (0, i64::from(max)),
            "a 0-based button number",
            unit,
        )
        .map(|(n, span)| (Button(n as u8), span))
    }

    /// A string out of `options` (`(spelling, value, platforms where it is allowed)`).
    fn choice<T: Copy>(
        &mut self,
        t: &DeTable<'_>,
        path: &str,
        key: &str,
        options: &[(&str, T, Option<Platform>)],
    ) -> Option<T> {
        let (value, span) = self.string(t, path, key)?;
        let here = |p: &Option<Platform>| p.is_none_or(|p| p == self.platform);
        let allowed: Vec<String> = options
            .iter()
            .filter(|(_, _, p)| here(p))
            .map(|(n, _, _)| format!("\"{n}\""))
            .collect();
        let allowed = allowed.join(", ");
        match options.iter().find(|(n, _, _)| *n == value) {
            Some((_, v, p)) if here(p) => Some(*v),
            Some(_) => {
                let other = match self.platform {
                    Platform::Linux => "macOS",
                    Platform::MacOs => "Linux",
                };
                let this = self.platform.name();
                self.error(
                    span,
                    &join(path, key),
                    format!("{value:?} only works on {other}: allowed on {this} {allowed}"),
                );
                None
            }
            None => {
                self.error(
                    span,
                    &join(path, key),
                    format!("unknown value {value:?}: allowed {allowed}"),
                );
                None
            }
        }
    }

    /// Parses a chord and checks that this platform can press every key of it.
    fn chord(&mut self, text: &str, span: Span, key: &str) -> Option<u16> {
        let chord = match Chord::parse(text) {
            Ok(c) => c,
            Err(m) => {
                self.error(span, key, m);
                return None;
            }
        };
        if let Some(k) = chord.0.iter().find(|k| !k.available_on(self.platform)) {
            let why = match (self.platform, k) {
                (Platform::Linux, Key::Fn) => {
                    "Fn has no key code on Linux (the keyboard's firmware handles it)".to_owned()
                }
                (
                    Platform::MacOs,
                    Key::AudioMute | Key::AudioLowerVolume | Key::AudioRaiseVolume,
                ) => {
                    format!(
                        "{} is a media key on macOS (an NSSystemDefined event, not a key code), \
                         which pawl cannot post; run a command instead, e.g. [\"osascript\", \"-e\", \
                         \"set volume output volume (output volume of (get volume settings) + 6)\"]",
                        k.name()
                    )
                }
                (p, k) => format!("{} has no key code on {}", k.name(), p.name()),
            };
            self.error(span, key, format!("chord {text:?}: {why}"));
            return None;
        }
        self.config.chords.push(chord);
        Some((self.config.chords.len() - 1) as u16)
    }

    fn argv(&mut self, v: &Item<'_>, key: &str) -> Option<u16> {
        let argv: Option<Vec<String>> = match v.get_ref() {
            DeValue::Array(a) => a
                .iter()
                .map(|s| s.get_ref().as_str().map(str::to_owned))
                .collect(),
            _ => None,
        };
        match argv {
            Some(argv) if !argv.is_empty() && !argv[0].is_empty() => {
                self.config.commands.push(argv);
                Some((self.config.commands.len() - 1) as u16)
            }
            _ => {
                self.error(
                    v.span(),
                    key,
                    "a command is a non-empty array of strings: [\"program\", \"arg\", …]".into(),
                );
                None
            }
        }
    }

    /// An action value: a built-in name, `{ key = "…" }` or `{ command = [argv…] }`.
    fn action(&mut self, v: &Item<'_>, key: &str) -> Option<Action> {
        let builtin_names = || {
            BUILTIN_ACTIONS
                .iter()
                .map(|a| format!("\"{}\"", a.name().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match v.get_ref() {
            DeValue::String(s) => match Action::from_name(s) {
                Some(a) => Some(a),
                None => {
                    let msg = format!(
                        "unknown action {:?}: allowed {}, {{ key = \"Super+Page_Up\" }}, {{ command = [\"prog\", \"arg\"] }}",
                        s.as_ref(),
                        builtin_names()
                    );
                    self.error(v.span(), key, msg);
                    None
                }
            },
            DeValue::Table(t) if t.len() == 1 && t.contains_key("key") => {
                let chord = &t["key"];
                match chord.get_ref() {
                    DeValue::String(s) => self.chord(s, chord.span(), key).map(Action::Key),
                    _ => {
                        self.wrong_type(chord, &join(key, "key"), "a chord like \"Super+Page_Up\"");
                        None
                    }
                }
            }
            DeValue::Table(t) if t.len() == 1 && t.contains_key("command") => self
                .argv(&t["command"], &join(key, "command"))
                .map(Action::Command),
            _ => {
                let msg = format!(
                    "an action is one of {}, {{ key = \"…\" }} or {{ command = [\"prog\", …] }}",
                    builtin_names()
                );
                self.error(v.span(), key, msg);
                None
            }
        }
    }

    /// The action at `key` of `t`, with where it was written.
    fn action_at(&mut self, t: &DeTable<'_>, path: &str, key: &str) -> Option<(Action, Span)> {
        let v = get(t, key)?;
        self.action(v, &join(path, key)).map(|a| (a, v.span()))
    }

    /// The scroll keys of `[scroll]` or a `[device.scroll]`.
    fn scroll_keys(&mut self, t: &DeTable<'_>, path: &str) -> ScrollOverrides {
        let gap = self.int(t, path, "gesture_gap_ms", (10, 10_000), "ms", " ms");
        let interval = self.int(t, path, "glide_interval_ms", (4, 100), "ms", " ms");
        ScrollOverrides {
            invert_vertical: self.bool(t, path, "invert_vertical"),
            invert_horizontal: self.bool(t, path, "invert_horizontal"),
            ema: self.choice(
                t,
                path,
                "smoothing",
                &[("ema", true, None), ("none", false, None)],
            ),
            smoothing_factor: self.float(
                t,
                path,
                "smoothing_factor",
                (0.01, 1.0),
                "0.01..=1.0",
                "",
            ),
            max_step: self.float(t, path, "max_step", (0.1, 100.0), "detents", " detents"),
            spike_ratio: self
                .number(
                    t,
                    path,
                    "spike_ratio",
                    "a ratio",
                    |r| r == 0.0 || (1.0..=100.0).contains(&r),
                    "0 (off) or 1..=100",
                )
                .map(|r| r as f32),
            gesture_gap_us: gap.map(|(g, _)| g as u64 * 1000),
            inertia: self.choice(
                t,
                path,
                "inertia",
                &[
                    ("off", InertiaMode::Off, None),
                    ("carry", InertiaMode::Carry, None),
                    ("glide", InertiaMode::Glide, None),
                ],
            ),
            carry_limit: self.float(t, path, "carry_limit", (0.0, 50.0), "detents", " detents"),
            glide_decay: self.float(t, path, "glide_decay", (0.05, 0.99), "0.05..=0.99", ""),
            glide_interval_us: interval.map(|(i, _)| i as u64 * 1000),
        }
    }

    /// The `name`, `id` and `bus` of a `[[device]]` rule or a scope matcher.
    fn matcher(&mut self, t: &DeTable<'_>, path: &str) -> DeviceMatcher {
        let mut m = DeviceMatcher {
            name: self.string(t, path, "name").map(|(n, _)| n.to_owned()),
            ..Default::default()
        };
        if let Some((id, span)) = self.string(t, path, "id") {
            match parse_id(id) {
                Some((v, p)) => {
                    m.vendor = Some(v);
                    m.product = p;
                }
                None => self.error(
                    span,
                    &join(path, "id"),
                    format!("{id:?} is not a device id: use \"vvvv:pppp\" or \"vvvv\" in hex, e.g. \"046d:b034\""),
                ),
            }
        }
        if let Some((b, span)) = self.string(t, path, "bus") {
            match Bus::parse(b) {
                Some(bus) => m.bus = Some(bus),
                None => self.error(
                    span,
                    &join(path, "bus"),
                    format!("unknown bus {b:?}: allowed \"usb\", \"bluetooth\", \"i2c\", \"i8042\", \"virtual\" or a number"),
                ),
            }
        }
        m
    }

    fn apply(&mut self, doc: &DeTable<'_>) {
        self.known_keys(
            doc,
            "",
            &["gesture", "buttons", "actions", "scroll", "hidpp", "device"],
        );
        if let Some(h) = self.table(doc, "", "hidpp") {
            self.hidpp(h);
        }
        let mut origins = ButtonOrigins::default();
        if let Some(g) = self.table(doc, "", "gesture") {
            self.gesture(g, &mut origins);
        }
        if let Some(b) = self.table(doc, "", "buttons") {
            self.buttons(b, &mut origins);
        }
        self.check_buttons(&origins);
        if let Some(a) = self.table(doc, "", "actions") {
            self.actions(a);
        }
        if let Some(s) = self.table(doc, "", "scroll") {
            self.scroll(s);
        }
        if let Some(d) = get(doc, "device") {
            match d.get_ref() {
                DeValue::Array(rules) if rules.iter().all(|r| r.get_ref().is_table()) => {
                    for (i, rule) in rules.iter().enumerate() {
                        if let DeValue::Table(t) = rule.get_ref() {
                            self.device(t, i, rule.span());
                        }
                    }
                }
                _ => self.wrong_type(d, "device", "[[device]] tables"),
            }
        }
    }

    fn hidpp(&mut self, h: &DeTable<'_>) {
        self.known_keys(h, "hidpp", &["enabled", "thumb_wheel"]);
        if let Some(b) = self.bool(h, "hidpp", "thumb_wheel") {
            self.config.hidpp.thumb_wheel = b;
        }
        match self.bool(h, "hidpp", "enabled") {
            Some(true) if self.platform != Platform::Linux => {
                let span = get(h, "enabled").map_or(0..0, |v| v.span());
                self.error(
                    span,
                    "hidpp.enabled",
                    format!(
                        "HID++ diversion only works on Linux: allowed on {} false",
                        self.platform.name()
                    ),
                );
            }
            Some(b) => self.config.hidpp.enabled = b,
            None => {}
        }
    }

    fn gesture(&mut self, g: &DeTable<'_>, origins: &mut ButtonOrigins) {
        let path = "gesture";
        self.known_keys(
            g,
            path,
            &[
                "button",
                "threshold",
                "invert_desktop",
                "repeat",
                "left",
                "right",
                "up",
                "down",
                "click",
            ],
        );
        if let Some((b, span)) = self.button(g, path, "button") {
            self.config.gesture.button = b;
            origins.gesture = Some(span);
        }
        if let Some((t, _)) = self.int(g, path, "threshold", (1, 10_000), "px", " px") {
            self.config.gesture.threshold = t as u32;
        }
        if let Some(b) = self.bool(g, path, "invert_desktop") {
            self.config.gesture.invert_desktop = b;
        }
        if let Some(b) = self.bool(g, path, "repeat") {
            self.config.gesture.repeat = b;
        }
        for key in ["left", "right", "up", "down", "click"] {
            if let Some((a, _)) = self.action_at(g, path, key) {
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

    fn buttons(&mut self, b: &DeTable<'_>, origins: &mut ButtonOrigins) {
        let path = "buttons";
        self.known_keys(
            b,
            path,
            &["back", "forward", "on_back", "on_forward", "map"],
        );
        if let Some((n, span)) = self.button(b, path, "back") {
            self.config.buttons.back = n;
            origins.back = Some(span);
        }
        if let Some((n, span)) = self.button(b, path, "forward") {
            self.config.buttons.forward = n;
            origins.forward = Some(span);
        }
        if let Some((a, span)) = self.action_at(b, path, "on_back") {
            self.config.buttons.on_back = a;
            origins.on_back = Some(span);
        }
        if let Some((a, span)) = self.action_at(b, path, "on_forward") {
            self.config.buttons.on_forward = a;
            origins.on_forward = Some(span);
        }
        let Some(map) = self.table(b, path, "map") else {
            return;
        };
        let max = self.platform.max_button();
        for (k, v) in in_file_order(map) {
            let key = format!("buttons.map.{}", k.get_ref());
            let n = match k.get_ref().parse::<u8>() {
                Ok(n) if n <= max => Button(n),
                _ => {
                    self.error(
                        k.span(),
                        &key,
                        format!(
                            "{:?} is not a button number: allowed 0..={max} on {}",
                            k.get_ref().as_ref(),
                            self.platform.name()
                        ),
                    );
                    continue;
                }
            };
            if let Some(a) = self.action(v, &key) {
                if let Some(i) = origins.map.iter().position(|(b, _, _)| *b == n) {
                    let first = self.origin(&Some(origins.map[i].1.clone()));
                    self.error(
                        k.span(),
                        &key,
                        format!("button {} is already mapped ({first})", n.0),
                    );
                    continue;
                }
                self.config.buttons.map.push((n, a));
                origins.map.push((n, k.span(), a));
            }
        }
    }

    /// Mappings that are certainly mistakes: a left button that can no longer click or
    /// drag, two roles on one button, a mapping the gesture button makes unreachable.
    fn check_buttons(&mut self, o: &ButtonOrigins) {
        let g = self.config.gesture.button;
        let b = self.config.buttons.clone();
        if g == Button::LEFT {
            let span = o.gesture.clone().unwrap_or_default();
            self.error(
                span,
                "gesture.button",
                "0 is the left button: holding it for gestures would swallow every left drag (selecting text, moving windows); choose an extra button (5 is the MX Master's thumb button)".into(),
            );
        }
        if b.back == b.forward {
            let (span, key, other, other_origin) = match (&o.forward, &o.back) {
                (Some(f), _) => (f.clone(), "buttons.forward", "buttons.back", &o.back),
                (None, Some(bk)) => (bk.clone(), "buttons.back", "buttons.forward", &o.forward),
                (None, None) => (0..0, "buttons.forward", "buttons.back", &o.back),
            };
            let msg = format!(
                "{} is also {other} ({}): back and forward must be different buttons",
                b.back.0,
                self.origin(other_origin)
            );
            self.error(span, key, msg);
        }
        // The gesture button takes its button: a back/forward action written for the same
        // button would never fire. (A default action there is simply replaced.)
        for (button, name, on_key, action, action_origin, button_origin) in [
            (
                b.back,
                "buttons.back",
                "buttons.on_back",
                b.on_back,
                &o.on_back,
                &o.back,
            ),
            (
                b.forward,
                "buttons.forward",
                "buttons.on_forward",
                b.on_forward,
                &o.on_forward,
                &o.forward,
            ),
        ] {
            if button == g && action != Action::PassThrough && action_origin.is_some() {
                let msg = format!(
                    "gesture.button ({}) and {name} ({}) are both button {}: {on_key} = \"{}\" ({}) would never fire, because the gesture button takes the button; set {on_key} = \"pass-through\" or use different buttons",
                    self.origin(&o.gesture),
                    self.origin(button_origin),
                    g.0,
                    action.name().unwrap_or("…"),
                    self.origin(action_origin),
                );
                let (span, key) = match (&o.gesture, button_origin) {
                    (Some(span), _) => (span.clone(), "gesture.button"),
                    (None, Some(span)) => (span.clone(), name),
                    (None, None) => (action_origin.clone().unwrap_or_default(), on_key),
                };
                self.error(span, key, msg);
            }
            if button == Button::LEFT && button != g && action != Action::PassThrough {
                let msg = format!(
                    "0 is the left button: with {on_key} = \"{}\" ({}) it could no longer click; choose another button or set {on_key} = \"pass-through\"",
                    action.name().unwrap_or("key/command"),
                    self.origin(action_origin)
                );
                self.error(button_origin.clone().unwrap_or_default(), name, msg);
            }
        }
        for (n, span, action) in &o.map {
            let key = format!("buttons.map.{}", n.0);
            let clash = if *n == g {
                Some(("gesture.button", &o.gesture, "the gesture takes it"))
            } else if *n == b.back {
                Some(("buttons.back", &o.back, "set buttons.on_back instead"))
            } else if *n == b.forward {
                Some((
                    "buttons.forward",
                    &o.forward,
                    "set buttons.on_forward instead",
                ))
            } else {
                None
            };
            if let Some((other, origin, fix)) = clash {
                let msg = format!(
                    "button {} is {other} ({}): this mapping would never fire; {fix}",
                    n.0,
                    self.origin(origin)
                );
                self.error(span.clone(), &key, msg);
            } else if *n == Button::LEFT && *action != Action::PassThrough {
                self.error(
                    span.clone(),
                    &key,
                    "0 is the left button: mapping it would make clicking impossible".into(),
                );
            }
        }
    }

    fn actions(&mut self, a: &DeTable<'_>) {
        let path = "actions";
        self.known_keys(
            a,
            path,
            &[
                "backend",
                "desktop",
                "allow_root_commands",
                "chords",
                "commands",
            ],
        );
        let (linux, mac) = (Some(Platform::Linux), Some(Platform::MacOs));
        let backends = [
            ("keys", ActionBackend::Keys, linux),
            ("system-events", ActionBackend::SystemEvents, mac),
            ("cg-event", ActionBackend::CgEvent, mac),
            ("command", ActionBackend::Command, None),
        ];
        if let Some(b) = self.choice(a, path, "backend", &backends) {
            self.config.actions.backend = b;
        }
        let desktops = [
            ("auto", None, None),
            ("gnome", Some(Desktop::Gnome), linux),
            ("kde", Some(Desktop::Kde), linux),
            ("macos", Some(Desktop::MacOs), mac),
        ];
        if let Some(d) = self.choice(a, path, "desktop", &desktops) {
            self.config.actions.desktop = d;
        }
        if let Some(b) = self.bool(a, path, "allow_root_commands") {
            self.config.actions.allow_root_commands = b;
        }
        for (section, is_chord) in [("chords", true), ("commands", false)] {
            let Some(table) = self.table(a, path, section) else {
                continue;
            };
            for (k, v) in in_file_order(table) {
                let key = format!("actions.{section}.{}", k.get_ref());
                let action = match Action::from_name(k.get_ref()) {
                    Some(a) if !matches!(a, Action::None | Action::PassThrough) => a,
                    _ => {
                        let names: Vec<String> = BUILTIN_ACTIONS
                            .iter()
                            .filter(|a| !matches!(a, Action::None | Action::PassThrough))
                            .map(|a| a.name().unwrap_or("").to_owned())
                            .collect();
                        self.error(
                            k.span(),
                            &key,
                            format!(
                                "{:?} is not a built-in action with a shortcut: allowed {}",
                                k.get_ref().as_ref(),
                                names.join(", ")
                            ),
                        );
                        continue;
                    }
                };
                if is_chord {
                    let DeValue::String(s) = v.get_ref() else {
                        self.wrong_type(v, &key, "a chord like \"Super+Page_Up\"");
                        continue;
                    };
                    if let Some(i) = self.chord(s, v.span(), &key) {
                        self.config.actions.chords.push((action, i));
                    }
                } else if let Some(i) = self.argv(v, &key) {
                    self.config.actions.commands.push((action, i));
                }
            }
        }
    }

    fn scroll(&mut self, s: &DeTable<'_>) {
        let path = "scroll";
        let mut allowed = vec!["scope"];
        allowed.extend_from_slice(SCROLL_KEYS);
        self.known_keys(s, path, &allowed);
        if let Some(scope) = get(s, "scope") {
            self.scope(scope);
        }
        let keys = self.scroll_keys(s, path);
        self.config.scroll = keys.apply_to(self.config.scroll);
        self.config.scroll_keys = keys;
    }

    fn scope(&mut self, scope: &Item<'_>) {
        let key = "scroll.scope";
        match scope.get_ref() {
            DeValue::String(name) => match name.as_ref() {
                "mx-master-only" => self.config.scope = Scope::MxMasterOnly,
                "all-wheels" => self.config.scope = Scope::AllWheels,
                "none" => self.config.scope = Scope::None,
                other => self.error(
                    scope.span(),
                    key,
                    format!("unknown scope {other:?}: allowed \"mx-master-only\", \"all-wheels\", \"none\" or an array of matchers like [{{ id = \"046d:b034\" }}, {{ name = \"*MX Master*\" }}]"),
                ),
            },
            DeValue::Array(items) => {
                let mut ms = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let path = format!("{key}[{i}]");
                    match item.get_ref() {
                        DeValue::Table(t) => {
                            self.known_keys(t, &path, &["name", "id", "bus"]);
                            ms.push(self.matcher(t, &path));
                        }
                        _ => self.wrong_type(
                            item,
                            &path,
                            "a matcher like { id = \"046d:b034\" } or { name = \"*MX Master*\" }",
                        ),
                    }
                }
                self.config.scope = Scope::Matchers(ms);
            }
            _ => self.wrong_type(
                scope,
                key,
                "\"mx-master-only\", \"all-wheels\", \"none\" or an array of matchers",
            ),
        }
    }

    fn device(&mut self, d: &DeTable<'_>, i: usize, span: Span) {
        let path = format!("device[{i}]");
        self.known_keys(
            d,
            &path,
            &[
                "name",
                "id",
                "bus",
                "handle",
                "mx_master",
                "transform_scroll",
                "scroll",
            ],
        );
        let matcher = self.matcher(d, &path);
        let scroll_path = format!("{path}.scroll");
        let scroll = match self.table(d, &path, "scroll") {
            Some(s) => {
                if let Some((k, _)) = s.get_key_value("scope") {
                    self.error(
                        k.span(),
                        &join(&scroll_path, "scope"),
                        "scope is global: it decides which devices are transformed, so it belongs in [scroll]; a [[device]] rule selects devices itself (transform_scroll = true/false)".into(),
                    );
                }
                let mut allowed = vec!["scope"];
                allowed.extend_from_slice(SCROLL_KEYS);
                self.known_keys(s, &scroll_path, &allowed);
                self.scroll_keys(s, &scroll_path)
            }
            None => ScrollOverrides::default(),
        };
        let rule = DeviceRule {
            matcher,
            handle: self.bool(d, &path, "handle"),
            mx_master: self.bool(d, &path, "mx_master").unwrap_or(false),
            scroll,
            transform_scroll: self.bool(d, &path, "transform_scroll"),
            line: line_col(self.text, span.start).0,
        };
        self.config.devices.push(rule);
    }
}

/// Where the button settings were written, for the contradiction checks.
#[derive(Default)]
struct ButtonOrigins {
    gesture: Origin,
    back: Origin,
    forward: Origin,
    on_back: Origin,
    on_forward: Origin,
    /// `[buttons.map]` entries: button, span of the key, action.
    map: Vec<(Button, Span, Action)>,
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
    let (backend, on_back, on_forward, backends, buttons, desktop) = match platform {
        Platform::Linux => (
            "keys",
            "pass-through",
            "pass-through",
            "\"keys\" or \"command\"",
            "0..=15 on Linux: code - BTN_MOUSE for codes BTN_MOUSE..BTN_JOYSTICK",
            "# Whose shortcuts built-in actions press: \"auto\" (from XDG_CURRENT_DESKTOP), \"gnome\"\n\
             # (Super+Page_Up/Page_Down, Super) or \"kde\" (Ctrl+Meta+Left/Right, Meta+W).",
        ),
        Platform::MacOs => (
            "system-events",
            "back",
            "forward",
            "\"system-events\", \"cg-event\" or \"command\"",
            "0..=31 on macOS: the CGEvent button number",
            "# Whose shortcuts built-in actions press: \"auto\" or \"macos\" (Mission Control\n\
             # shortcuts; \"gnome\" and \"kde\" are Linux settings).",
        ),
    };
    DEFAULT_TEMPLATE
        .replace("{backend}", backend)
        .replace("{backends}", backends)
        .replace("{on_back}", on_back)
        .replace("{on_forward}", on_forward)
        .replace("{buttons}", buttons)
        .replace("{desktop}", desktop)
}

const DEFAULT_TEMPLATE: &str = r#"# pawl configuration: every key with its default value.
# Location: $XDG_CONFIG_HOME/pawl/config.toml (usually ~/.config/pawl/config.toml),
# or the file given with --config. A missing file means these defaults.
# `pawl config check` reports every problem with file:line:column.
# Buttons are 0-based: 0 left, 1 right, 2 middle, 3 back, 4 forward, 5.. extra buttons
# ({buttons}).
#
# An action is one of:
#   "desktop-left" "desktop-right" "overview" "app-expose" "show-desktop"
#   "back" "forward" "pass-through" (forward the click unchanged) "none" (swallow it)
#   { key = "Super+Page_Up" }             a key chord, pressed in order, released in reverse
#                                         (`pawl config keys` lists the key names)
#   { command = ["prog", "arg", ...] }    a program run directly (no shell)

[gesture]
# Button held for gestures. Not 0 (left): that would swallow every left drag. When it is
# also the back or forward button, the gesture takes the button: its default back/forward
# action no longer fires, and writing an on_back / on_forward other than "pass-through"
# for it is an error.
button = 5
# Travel along the dominant axis that fires a gesture, px (1..=10000).
threshold = 220
# Swap desktop-left/right: dragging left shows the desktop on the right.
invert_desktop = true
# Fire again for every further threshold of travel while held (at most 4 per motion
# event; a faster flick does not queue more).
repeat = false
left = "desktop-left"
right = "desktop-right"
up = "overview"
down = "app-expose"
# When released without a gesture.
click = "pass-through"

[buttons]
# Button numbers of back and forward (two different buttons) and what they do.
back = 3
forward = 4
on_back = "{on_back}"
on_forward = "{on_forward}"

# Any other button (not 0, not the gesture, back or forward button) may map to an action:
[buttons.map]
# 6 = "show-desktop"
# 7 = { key = "Super+A" }

[actions]
# How actions are performed: {backends}.
backend = "{backend}"
{desktop}
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
# Touchpads are never transformed. Global only (not in [device.scroll]).
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
# Keys of a mode that is not selected (smoothing_factor with smoothing = "none",
# carry_limit or glide_* with another inertia) are accepted and kept for when it is.

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
# With enabled: while the MX Master's pointer is grabbed with scroll transformed, divert
# its thumb wheel too (HID++ 0x2150, temporarily, undone on exit) and scroll it through
# [scroll] in 1/120 turn steps instead of whole ratchets (18 per turn on an MX Master 3).
# It scrolls the way it does without pawl, flipped by invert_horizontal like any
# horizontal wheel. false leaves it to the kernel's REL_HWHEEL (and to logid or Solaar).
thumb_wheel = true

# Device rules, any number, in file order. Match by name glob, id "vvvv:pppp" and bus;
# set handle = false to never touch a device, handle = true / mx_master = true to take
# one that is not in scope, and give it its own [device.scroll] settings (any [scroll]
# key but scope). When several rules match, a later rule overrides only the keys it sets.
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
    fn hidpp_thumb_wheel_is_on_by_default_and_can_be_left_to_the_kernel() {
        let default = Config::default_for(Platform::Linux);
        assert!(default.hidpp.thumb_wheel);
        let c = Config::parse(
            "[hidpp]\nenabled = true\nthumb_wheel = false\n",
            "c.toml",
            Platform::Linux,
        )
        .unwrap();
        assert!(c.hidpp.enabled && !c.hidpp.thumb_wheel);
        let e = Config::parse("[hidpp]\nthumb_wheel = 1\n", "c.toml", Platform::Linux).unwrap_err();
        assert!(e.to_string().contains("c.toml:2:15"), "{e}");
        let text = default_config_text(Platform::Linux);
        assert!(text.contains("\nthumb_wheel = true\n"), "{text}");
    }

    #[test]
    fn default_config_text_parses_to_the_defaults_on_each_platform() {
        for p in [Platform::Linux, Platform::MacOs] {
            let c = Config::parse(&default_config_text(p), "default", p).unwrap();
            // Every scroll key is written out, so they are all recorded as set.
            assert!(c.scroll_keys.smoothing_factor.is_some());
            let c = Config {
                scroll_keys: ScrollOverrides::default(),
                ..c
            };
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
            e.starts_with("config.toml:2:16: gesture.left: unknown key name \"Pgup\""),
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

    fn errors(text: &str, platform: Platform) -> Vec<String> {
        Config::parse(text, "c.toml", platform)
            .unwrap_err()
            .0
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_later_device_rule_overrides_only_the_scroll_keys_it_sets() {
        let mx = info("Logitech MX Master 3S", LOGITECH, 0xb034, false);
        // The second rule sets no scroll key: the first rule's stay.
        let c = parse("[[device]]\nname = \"*MX Master*\"\n[device.scroll]\ninvert_vertical = false\n\n[[device]]\nid = \"046d:b034\"\nhandle = true\n").unwrap();
        assert!(!c.decide(&mx).scroll.invert_vertical);
        // The second rule sets max_step only: invert_vertical from the first stays, the
        // global smoothing factor too.
        let c = parse("[scroll]\nsmoothing = \"none\"\nsmoothing_factor = 0.5\n[[device]]\nname = \"*MX Master*\"\n[device.scroll]\ninvert_vertical = false\ninertia = \"glide\"\n\n[[device]]\nid = \"046d:b034\"\n[device.scroll]\nmax_step = 2\nsmoothing = \"ema\"\nglide_interval_ms = 8\n").unwrap();
        let d = c.decide(&mx);
        assert!(!d.scroll.invert_vertical);
        assert_eq!(d.scroll.max_step, 2.0);
        assert_eq!(d.scroll.smoothing, Smoothing::Ema(0.5));
        assert_eq!(
            d.scroll.inertia,
            Inertia::Glide {
                decay: 0.85,
                interval_us: 8_000
            }
        );
        // A device no rule matches keeps the global settings.
        let other = c.decide(&info("Other", 1, 2, false));
        assert_eq!(other.scroll, c.scroll);
        assert_eq!(other.scroll.smoothing, Smoothing::None);
    }

    #[test]
    fn type_errors_name_the_key_and_the_expected_type_in_words() {
        assert_eq!(
            errors("[gesture]\nthreshold = \"220\"\n", Platform::Linux),
            ["c.toml:2:13: gesture.threshold: expected an integer (px), found a string \"220\""]
        );
        assert_eq!(
            errors("gesture = 5\n", Platform::Linux),
            ["c.toml:1:11: gesture: expected a table ([gesture]), found an integer (5)"]
        );
        assert_eq!(
            errors(
                "[gesture]\nrepeat = \"yes\"\n[scroll]\nmax_step = \"big\"\n",
                Platform::Linux
            ),
            [
                "c.toml:2:10: gesture.repeat: expected true or false, found a string \"yes\"",
                "c.toml:4:12: scroll.max_step: expected a number (detents), found a string \"big\""
            ]
        );
    }

    #[test]
    fn problems_in_every_section_are_reported_in_one_run() {
        let e = errors(
            "[gesture]\nthresold = 5\nbutton = \"5\"\n[buttons]\nback = 99\n[actions]\nbackend = \"osascript\"\n[scroll]\nmax_step = 0\n[[device]]\nid = \"zz\"\n[device.scroll]\nspike_ratio = 0.5\n",
            Platform::Linux,
        );
        let keys: Vec<&str> = e.iter().map(|l| l.split(": ").nth(1).unwrap()).collect();
        assert_eq!(
            keys,
            [
                "gesture.thresold",
                "gesture.button",
                "buttons.back",
                "actions.backend",
                "scroll.max_step",
                "device[0].id",
                "device[0].scroll.spike_ratio"
            ],
            "{e:#?}"
        );
    }

    #[test]
    fn map_chord_and_command_errors_point_at_the_bad_entry() {
        let text = "# my config\n\n[buttons.map]\n6 = \"show-desktop\"\n7 = { key = \"Super+Nope\" }\n8 = \"bogus\"\nx = \"back\"\n\n[actions.commands]\noverview = [\"ok\"]\ndesktop-left = []\nfly = [\"x\"]\n[actions.chords]\noverview = 5\n";
        let e = errors(text, Platform::Linux);
        let at: Vec<(&str, &str)> = e
            .iter()
            .map(|l| {
                let mut parts = l.splitn(3, ": ");
                (parts.next().unwrap(), parts.next().unwrap())
            })
            .collect();
        assert_eq!(
            at,
            [
                ("c.toml:5:13", "buttons.map.7"),
                ("c.toml:6:5", "buttons.map.8"),
                ("c.toml:7:1", "buttons.map.x"),
                ("c.toml:11:16", "actions.commands.desktop-left"),
                ("c.toml:12:1", "actions.commands.fly"),
                ("c.toml:14:12", "actions.chords.overview"),
            ],
            "{e:#?}"
        );
    }

    #[test]
    fn scope_matcher_errors_point_at_the_bad_item() {
        let e = errors(
            "[scroll]\nscope = [\n  { id = \"046d:b034\" },\n  { name = 5 },\n  { bus = \"serial\" },\n  { vendor = \"046d\" },\n  \"mx\",\n]\n",
            Platform::Linux,
        );
        assert_eq!(
            e,
            [
                "c.toml:4:12: scroll.scope[1].name: expected a string, found an integer (5)",
                "c.toml:5:11: scroll.scope[2].bus: unknown bus \"serial\": allowed \"usb\", \"bluetooth\", \"i2c\", \"i8042\", \"virtual\" or a number",
                "c.toml:6:5: scroll.scope[3].vendor: unknown key: allowed name, id, bus",
                "c.toml:7:3: scroll.scope[4]: expected a matcher like { id = \"046d:b034\" } or { name = \"*MX Master*\" }, found a string \"mx\"",
            ]
        );
    }

    #[test]
    fn button_numbers_are_limited_to_what_the_platform_decodes() {
        let e = errors("[gesture]\nbutton = 16\n", Platform::Linux);
        assert_eq!(e.len(), 1);
        assert!(
            e[0].starts_with(
                "c.toml:2:10: gesture.button: 16 is out of range: allowed 0..=15 on Linux"
            ),
            "{e:?}"
        );
        assert!(
            errors("[buttons.map]\n16 = \"back\"\n", Platform::Linux)[0]
                .contains("allowed 0..=15 on Linux")
        );
        let mac = Config::parse("[gesture]\nbutton = 31\n", "c.toml", Platform::MacOs).unwrap();
        assert_eq!(mac.gesture.button, Button(31));
        assert!(
            errors("[gesture]\nbutton = 32\n", Platform::MacOs)[0]
                .contains("allowed 0..=31 on macOS")
        );
        assert!(default_config_text(Platform::Linux).contains("0..=15 on Linux"));
        assert!(default_config_text(Platform::MacOs).contains("0..=31 on macOS"));
    }

    #[test]
    fn settings_only_another_platform_uses_are_errors_naming_what_this_one_allows() {
        assert_eq!(
            errors("[actions]\nbackend = \"cg-event\"\n", Platform::Linux),
            [
                "c.toml:2:11: actions.backend: \"cg-event\" only works on macOS: allowed on Linux \"keys\", \"command\""
            ]
        );
        assert!(
            errors("[actions]\nbackend = \"system-events\"\n", Platform::Linux)[0]
                .contains("only works on macOS")
        );
        assert!(
            errors("[actions]\ndesktop = \"macos\"\n", Platform::Linux)[0]
                .contains("allowed on Linux \"auto\", \"gnome\", \"kde\"")
        );
        assert!(
            errors("[actions]\ndesktop = \"kde\"\n", Platform::MacOs)[0]
                .contains("allowed on macOS \"auto\", \"macos\"")
        );
        assert!(
            errors("[actions]\nbackend = \"keys\"\n", Platform::MacOs)[0]
                .contains("only works on Linux")
        );
        assert!(
            errors("[hidpp]\nenabled = true\n", Platform::MacOs)[0]
                .contains("HID++ diversion only works on Linux")
        );
        // Valid on the platform that uses them.
        for (text, p) in [
            (
                "[actions]\nbackend = \"cg-event\"\ndesktop = \"macos\"\n",
                Platform::MacOs,
            ),
            (
                "[actions]\nbackend = \"command\"\ndesktop = \"kde\"\n",
                Platform::Linux,
            ),
        ] {
            Config::parse(text, "c.toml", p).unwrap();
        }
    }

    #[test]
    fn chords_with_keys_the_platform_cannot_press_are_rejected() {
        assert_eq!(
            errors("[gesture]\nup = { key = \"Fn+F11\" }\n", Platform::Linux),
            [
                "c.toml:2:14: gesture.up: chord \"Fn+F11\": Fn has no key code on Linux (the keyboard's firmware handles it)"
            ]
        );
        Config::parse(
            "[gesture]\nup = { key = \"Fn+F11\" }\n",
            "c.toml",
            Platform::MacOs,
        )
        .unwrap();
        assert!(
            errors(
                "[actions.chords]\noverview = \"XF86AudioPlay\"\n",
                Platform::MacOs
            )[0]
            .contains("XF86AudioPlay has no key code on macOS")
        );
        parse("[actions.chords]\noverview = \"XF86AudioPlay\"\nback = \"Ctrl+KP_Enter\"\n")
            .unwrap();
    }

    #[test]
    fn scope_inside_a_device_scroll_table_is_rejected_as_global() {
        let e = errors(
            "[[device]]\nname = \"*MX*\"\n[device.scroll]\nscope = \"all-wheels\"\n",
            Platform::Linux,
        );
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("c.toml:4:1: device[0].scroll.scope: scope is global"),
            "{e:?}"
        );
    }

    #[test]
    fn gesture_on_the_left_button_is_rejected() {
        assert_eq!(
            errors("[gesture]\nbutton = 0\n", Platform::Linux)[0],
            "c.toml:2:10: gesture.button: 0 is the left button: holding it for gestures would swallow every left drag (selecting text, moving windows); choose an extra button (5 is the MX Master's thumb button)"
        );
    }

    #[test]
    fn back_and_forward_on_one_button_is_rejected_naming_both_lines() {
        assert_eq!(
            errors("[buttons]\nback = 6\nforward = 6\n", Platform::Linux),
            [
                "c.toml:3:11: buttons.forward: 6 is also buttons.back (line 2): back and forward must be different buttons"
            ]
        );
        assert_eq!(
            errors("[buttons]\nforward = 3\n", Platform::Linux),
            [
                "c.toml:2:11: buttons.forward: 3 is also buttons.back (default): back and forward must be different buttons"
            ]
        );
    }

    #[test]
    fn an_unreachable_back_action_on_the_gesture_button_is_rejected() {
        let e = errors(
            "[gesture]\nbutton = 3\n[buttons]\non_back = \"back\"\n",
            Platform::Linux,
        );
        assert_eq!(
            e,
            [
                "c.toml:2:10: gesture.button: gesture.button (line 2) and buttons.back (default) are both button 3: buttons.on_back = \"back\" (line 4) would never fire, because the gesture button takes the button; set buttons.on_back = \"pass-through\" or use different buttons"
            ]
        );
        // With the back action left at its default, the gesture button takes precedence.
        let c = Config::parse("[gesture]\nbutton = 3\n", "c.toml", Platform::MacOs).unwrap();
        assert_eq!(c.gesture.button, Button(3));
        assert_eq!(c.buttons.on_back, Action::Back);
        parse("[gesture]\nbutton = 4\n[buttons]\non_forward = \"pass-through\"\n").unwrap();
    }

    #[test]
    fn map_entries_that_could_never_fire_or_would_kill_the_left_click_are_rejected() {
        let e = errors(
            "[gesture]\nbutton = 6\n[buttons.map]\n0 = \"none\"\n3 = \"overview\"\n6 = \"show-desktop\"\n7 = \"back\"\n07 = \"forward\"\n",
            Platform::Linux,
        );
        assert_eq!(
            e,
            [
                "c.toml:4:1: buttons.map.0: 0 is the left button: mapping it would make clicking impossible",
                "c.toml:5:1: buttons.map.3: button 3 is buttons.back (default): this mapping would never fire; set buttons.on_back instead",
                "c.toml:6:1: buttons.map.6: button 6 is gesture.button (line 2): this mapping would never fire; the gesture takes it",
                "c.toml:8:1: buttons.map.07: button 7 is already mapped (line 7)",
            ]
        );
        parse("[buttons.map]\n0 = \"pass-through\"\n7 = \"back\"\n").unwrap();
        let e = errors("[buttons]\nback = 0\non_back = \"back\"\n", Platform::Linux);
        assert!(
            e[0].starts_with("c.toml:2:8: buttons.back: 0 is the left button"),
            "{e:?}"
        );
    }

    #[test]
    fn duplicate_tables_name_the_duplicate_key() {
        let e = errors(
            "[gesture]\nbutton = 5\n[gesture]\nbutton = 6\n",
            Platform::Linux,
        );
        assert!(e[0].contains("duplicate key `gesture`"), "{e:?}");
    }
}
