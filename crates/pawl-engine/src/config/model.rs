//! The validated configuration model and its defaults: what [`Config::parse`] returns and
//! the engine and backends read, plus [`Config::decide`] (which devices are handled, with
//! which scroll settings).

use crate::action::{Action, Chord, Desktop};
use crate::device::{DeviceInfo, DeviceMatcher, is_mx_master};
use crate::platform::Platform;
use crate::units::Button;

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

/// What a held drag of the gesture button does (`[gesture] style`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GestureStyle {
    /// `"shortcut"` (default): a drag past `threshold` fires the direction's action once.
    #[default]
    Shortcut,
    /// `"swipe"` (Linux): the drag becomes a multi-finger swipe on pawl's virtual
    /// touchpad, so the desktop follows the hand (GNOME, KDE Plasma); see
    /// [`crate::swipe`].
    Swipe,
}

/// Swipe fingers for GNOME: `GESTURE_FINGER_COUNT = 3` in gnome-shell's
/// `js/ui/swipeTracker.js` (3 fingers horizontal = workspaces, up = overview).
pub const GNOME_SWIPE_FINGERS: u8 = 3;
/// Swipe fingers for KDE Plasma 6: KWin's `virtualdesktops.cpp` registers horizontal
/// touchpad swipes with 3 and 4 fingers, its overview effect
/// `addTouchpadSwipeGesture(SwipeDirection::Up, 4)`: only 4 does both.
pub const KDE_SWIPE_FINGERS: u8 = 4;

/// The gesture button.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GestureConfig {
    /// The button held for a gesture.
    pub button: Button,
    /// Shortcut (fire an action) or swipe (drive the virtual touchpad).
    pub style: GestureStyle,
    /// Fingers of a swipe (3..=4); `None` = the desktop's ([`GestureConfig::swipe_fingers`]).
    pub fingers: Option<u8>,
    /// Touchpad units per mouse px of a swipe, in thousandths (`swipe_scale` × 1000;
    /// 1000 = the fingers move as far as a 1000 dpi mouse's px, see [`crate::swipe`]).
    pub swipe_scale_milli: u32,
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

impl GestureConfig {
    /// The swipe's finger count on `desktop`: `fingers` when set, else
    /// [`GNOME_SWIPE_FINGERS`] (GNOME, and macOS, where there is no swipe style) or
    /// [`KDE_SWIPE_FINGERS`].
    pub fn swipe_fingers(&self, desktop: Desktop) -> u8 {
        self.fingers.unwrap_or(match desktop {
            Desktop::Kde => KDE_SWIPE_FINGERS,
            Desktop::Gnome | Desktop::MacOs => GNOME_SWIPE_FINGERS,
        })
    }
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
    /// The keys of its `[device.hidpp]`: the mouse's own settings, layered over
    /// `[hidpp]`'s and those of earlier matching rules ([`Config::mouse_settings`]).
    pub hidpp: MouseSettings,
    /// 1-based line of the rule in the file, for `pawl devices` reports.
    pub line: usize,
}

/// The gesture actions an `[app.gesture]` table sets, and its `style`; `None` = the device
/// profile's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GestureActions {
    /// `style`: shortcut or swipe while the app is focused.
    pub style: Option<GestureStyle>,
    /// `left`.
    pub left: Option<Action>,
    /// `right`.
    pub right: Option<Action>,
    /// `up`.
    pub up: Option<Action>,
    /// `down`.
    pub down: Option<Action>,
    /// `click`.
    pub click: Option<Action>,
}

impl GestureActions {
    /// Layers `later` on top: every action (and the style) `later` sets replaces this
    /// one's.
    pub fn merge(&mut self, later: &GestureActions) {
        self.style = later.style.or(self.style);
        for (a, b) in [
            (&mut self.left, later.left),
            (&mut self.right, later.right),
            (&mut self.up, later.up),
            (&mut self.down, later.down),
            (&mut self.click, later.click),
        ] {
            if b.is_some() {
                *a = b;
            }
        }
    }

    /// `g` with the set actions (and style) replaced.
    pub fn apply_to(&self, mut g: GestureConfig) -> GestureConfig {
        g.style = self.style.unwrap_or(g.style);
        g.left = self.left.unwrap_or(g.left);
        g.right = self.right.unwrap_or(g.right);
        g.up = self.up.unwrap_or(g.up);
        g.down = self.down.unwrap_or(g.down);
        g.click = self.click.unwrap_or(g.click);
        g
    }
}

/// The button actions an `[app.buttons]` table sets; the button numbers (`back`,
/// `forward`, the gesture button) stay the device's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ButtonOverrides {
    /// `on_back`.
    pub on_back: Option<Action>,
    /// `on_forward`.
    pub on_forward: Option<Action>,
    /// `[app.buttons.map]`: these buttons' actions replace (or add to) `[buttons.map]`.
    pub map: Vec<(Button, Action)>,
}

impl ButtonOverrides {
    /// Layers `later` on top.
    pub fn merge(&mut self, later: &ButtonOverrides) {
        self.on_back = later.on_back.or(self.on_back);
        self.on_forward = later.on_forward.or(self.on_forward);
        for &(b, a) in &later.map {
            match self.map.iter_mut().find(|(mb, _)| *mb == b) {
                Some(entry) => entry.1 = a,
                None => self.map.push((b, a)),
            }
        }
    }

    /// `b` with the set actions replaced.
    pub fn apply_to(&self, b: &ButtonsConfig) -> ButtonsConfig {
        let mut out = b.clone();
        out.on_back = self.on_back.unwrap_or(b.on_back);
        out.on_forward = self.on_forward.unwrap_or(b.on_forward);
        for &(n, a) in &self.map {
            match out.map.iter_mut().find(|(mb, _)| *mb == n) {
                Some(entry) => entry.1 = a,
                None => out.map.push((n, a)),
            }
        }
        out
    }
}

/// The most `[[app]]` tables a config may have (64).
pub const MAX_APP_TABLES: usize = 64;
/// The most application ids one `[[app]]` table may list (32).
pub const MAX_APP_IDS: usize = 32;
/// The longest application id, bytes (255: an X11 `WM_CLASS`, a Wayland `app_id` or a
/// macOS bundle id is far shorter; the focus backends drop longer ones).
pub const MAX_APP_ID_BYTES: usize = 255;

/// The longest `title` pattern, bytes (255).
pub const MAX_TITLE_PATTERN_BYTES: usize = 255;
/// The most `[[app]]` tables with a `title` that may name one application (4). Every
/// combination of them matching is a profile resolved when a device is opened: 2⁴ = 16
/// per application at most.
pub const MAX_TITLE_TABLES_PER_APP: usize = 4;
/// The longest window title matched, bytes (1024). A longer title is matched on its first
/// 1024 bytes, cut at a character boundary, so one match costs at most that much input.
pub const MAX_TITLE_BYTES: usize = 1024;

/// A `title` pattern of an `[[app]]` table: a regular expression in regex-lite's syntax
/// (Perl-like; `(?i)` for case-insensitive; no Unicode classes such as `\p{L}`), searched
/// anywhere in the window title (`^…$` for the whole title). Matching takes time linear in
/// the title's length.
#[derive(Clone, Debug)]
pub struct TitlePattern {
    source: String,
    regex: regex_lite::Regex,
}

impl TitlePattern {
    /// Compiles `source`. Errors: the pattern is empty, longer than
    /// [`MAX_TITLE_PATTERN_BYTES`], or not a valid expression (regex-lite's message).
    pub fn new(source: &str) -> Result<TitlePattern, String> {
        if source.is_empty() {
            return Err("the pattern is empty: leave title out to match every title".into());
        }
        if source.len() > MAX_TITLE_PATTERN_BYTES {
            return Err(format!(
                "the pattern is {} bytes long: at most {MAX_TITLE_PATTERN_BYTES}",
                source.len()
            ));
        }
        let regex = regex_lite::RegexBuilder::new(source)
            // A pattern of at most 255 bytes nests at most that deep; regex-lite's default
            // limit (250) is kept, and its compiled size is bounded by the same length.
            .build()
            .map_err(|e| format!("not a valid pattern: {e}"))?;
        Ok(TitlePattern {
            source: source.to_owned(),
            regex,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern occurs in `title` (its first [`MAX_TITLE_BYTES`]).
    pub fn is_match(&self, title: &str) -> bool {
        self.regex.is_match(cut_title(title))
    }
}

impl PartialEq for TitlePattern {
    fn eq(&self, other: &TitlePattern) -> bool {
        self.source == other.source
    }
}

/// `title`'s first [`MAX_TITLE_BYTES`], cut at a character boundary: what a `title`
/// pattern is matched against.
pub fn cut_title(title: &str) -> &str {
    if title.len() <= MAX_TITLE_BYTES {
        return title;
    }
    let mut end = MAX_TITLE_BYTES;
    while !title.is_char_boundary(end) {
        end -= 1;
    }
    &title[..end]
}

/// An `[[app]]` table: which applications (and optionally which devices) it applies to and
/// what it overrides in the device's profile.
#[derive(Clone, Debug, PartialEq)]
pub struct AppRule {
    /// `app_id`: exact, case-sensitive application ids (Wayland `app_id`, X11 `WM_CLASS`
    /// class, macOS bundle id).
    pub app_ids: Vec<String>,
    /// `title`: the table applies only while the window's title matches; `None` = any
    /// window of the application. A backend that reports no titles (macOS) never matches
    /// a pattern.
    pub title: Option<TitlePattern>,
    /// `device`: only devices this matches; `None` = every handled device.
    pub device: Option<DeviceMatcher>,
    /// `[app.scroll]`, layered over the device's scroll keys.
    pub scroll: ScrollOverrides,
    /// `[app.gesture]` actions.
    pub gesture: GestureActions,
    /// `[app.buttons]` actions.
    pub buttons: ButtonOverrides,
    /// 1-based line of the table in the file.
    pub line: usize,
}

/// A profile key: an application id the config names, with which of its `title` tables
/// match. The platform looks it up once per focus or title change ([`Config::app_key`]);
/// the engine switches profiles by it without comparing strings
/// ([`crate::DeviceEngine::set_app`]). Keys run from 0 to [`Config::app_key_count`];
/// application `i` of [`Config::app_ids`] owns keys `app_first_key[i]` up to
/// `app_first_key[i + 1]`, one per combination of its title tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppKey(pub u16);

/// What the `[[app]]` tables for one application decide for one device, layered in file
/// order ([`Config::app_settings`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AppSettings {
    /// Effective scroll settings.
    pub scroll: ScrollSettings,
    /// Gesture settings with the app's actions.
    pub gesture: GestureConfig,
    /// Buttons with the app's actions.
    pub buttons: ButtonsConfig,
    /// Lines of the tables that apply, in file order.
    pub lines: Vec<usize>,
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
    /// Logitech HID++ (Linux: hidraw; macOS: IOHIDDevice).
    pub hidpp: HidppConfig,
    /// `[[app]]` tables, in file order; later tables override earlier ones.
    pub apps: Vec<AppRule>,
    /// Every application id the `[[app]]` tables name, sorted, each once.
    pub app_ids: Vec<String>,
    /// Per application of `app_ids`, its first [`AppKey`], then the key count: ascending,
    /// `app_ids.len() + 1` entries (empty without `[[app]]` tables). Application `i` has
    /// `2^t` keys, `t` being how many of its tables have a `title`.
    pub app_first_key: Vec<u16>,
}

/// Logitech HID++ settings (`[hidpp]`, on by default on Linux and macOS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HidppConfig {
    /// Divert the MX Master's gesture button (HID++ 0x1B04 control 0x00C3, temporarily,
    /// undone on exit) so it works as the gesture button; `false` leaves HID++ alone (for
    /// logid or Solaar). Default `true` on Linux and macOS (only MX Master endpoints are
    /// opened).
    pub enabled: bool,
    /// With `enabled`: divert the MX Master's thumb wheel (HID++ 0x2150, temporarily,
    /// undone on exit) while its pointer node is grabbed with scroll transformed, and send
    /// its rotation through that node's scroll settings as horizontal scroll, in steps of
    /// 1/120 turn instead of whole ratchets (an MX Master 3 has 18 per turn). Its
    /// direction is the one it has without pawl, flipped by `invert_horizontal` like any
    /// horizontal wheel. `false` leaves the thumb wheel to the kernel (and to logid or
    /// Solaar). Default `true`.
    pub thumb_wheel: bool,
    /// Linux: whether an MX Master that pawl's HID-BPF program is attached to runs in
    /// kernel mode (wheel transformed in the kernel, gesture notifications on the
    /// program's ring, its pointer node not grabbed) — [`KernelMode::Auto`], the default —
    /// or always in grab mode ([`KernelMode::Off`]). Ignored on macOS.
    pub kernel_mode: KernelMode,
    /// `dpi`, `smartshift` and `thumb_wheel_invert` of `[hidpp]`: the mouse's own
    /// settings for every HID++ mouse, under those of `[device.hidpp]`
    /// ([`Config::mouse_settings`]).
    pub settings: MouseSettings,
    /// `sense_panel`: with `enabled`, divert the MX Master 4's Sense Panel (HID++ 0x1B04
    /// control 0x01A0, Solaar `special_keys` "Haptic"; temporarily, undone on exit) on a
    /// mouse that has it, and make its presses and releases this engine button (0-based,
    /// never 0), mapped by `[buttons.map]` (or the gesture, when it is the gesture
    /// button). `None`, the default: the panel is left to the firmware.
    pub sense_panel: Option<Button>,
    /// `haptic_on_gesture`: with `enabled`, play one haptic waveform (HID++ 0x19B0) on a
    /// mouse that has haptics each time a gesture of its HID++ gesture button fires an
    /// action. Default `false`.
    pub haptic_on_gesture: bool,
}

/// The lowest `dpi` a config may ask for (50: the smallest step Logitech mice use).
pub const MIN_DPI: u16 = 50;
/// The highest `dpi` a config may ask for (25600: Logitech's HERO 25K sensor; the mouse's
/// own list decides what it takes, HID++ 0x2201 `getSensorDpiList`).
pub const MAX_DPI: u16 = 25600;

/// The wheel's ratchet behaviour, as HID++ SmartShift (0x2110 / 0x2111) sets it and as
/// `smartshift` spells it. Solaar's convention (`settings_templates.py`, `SmartShift`):
/// mode 1 is free spinning; mode 2 ratchets and frees the wheel above an auto-disengage
/// threshold, 255 meaning never.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmartShift {
    /// `"ratchet"`: mode 2, threshold 255 (always ratcheted).
    Ratchet,
    /// `"free"`: mode 1 (free spinning).
    Free,
    /// `1..=254`: mode 2, freed when the wheel is spun faster than this threshold (the
    /// firmware's unit; a lower number disengages at a lower speed).
    Threshold(u8),
}

impl SmartShift {
    /// The threshold SmartShift uses for "never disengage" (Solaar: 255 = always ratchet).
    pub const ALWAYS_RATCHET: u8 = 255;

    /// From the device's `(mode, autoDisengage)` (0x2110 `getRatchetControlMode`): `None`
    /// for a mode other than 1 or 2, or mode 2 with threshold 0.
    pub fn from_device(mode: u8, threshold: u8) -> Option<SmartShift> {
        match (mode, threshold) {
            (1, _) => Some(SmartShift::Free),
            (2, SmartShift::ALWAYS_RATCHET) => Some(SmartShift::Ratchet),
            (2, 0) => None,
            (2, t) => Some(SmartShift::Threshold(t)),
            _ => None,
        }
    }

    /// The `(mode, autoDisengage)` to write: free → (1, 0) (0 = leave the threshold as it
    /// is), ratchet → (2, 255), a threshold `t` → (2, t).
    pub fn to_device(self) -> (u8, u8) {
        match self {
            SmartShift::Free => (1, 0),
            SmartShift::Ratchet => (2, SmartShift::ALWAYS_RATCHET),
            SmartShift::Threshold(t) => (2, t),
        }
    }
}

impl std::fmt::Display for SmartShift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SmartShift::Ratchet => f.write_str("ratchet"),
            SmartShift::Free => f.write_str("free"),
            SmartShift::Threshold(t) => write!(f, "{t}"),
        }
    }
}

/// The mouse's own settings a `[hidpp]` or `[device.hidpp]` table sets, written over HID++
/// by the device's session; `None` = not set (nothing is written: the firmware's state
/// stays as the user left it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MouseSettings {
    /// `dpi`, [`MIN_DPI`]..=[`MAX_DPI`] (HID++ 0x2201).
    pub dpi: Option<u16>,
    /// `smartshift` (HID++ 0x2111, else 0x2110).
    pub smartshift: Option<SmartShift>,
    /// `thumb_wheel_invert`: the thumb wheel's own direction bit (HID++ 0x2150
    /// `setThumbwheelReporting` parameter 1 bit 0, Solaar's "thumb-scroll-invert"), in
    /// both its native and diverted reporting; `true` turns it against the firmware's
    /// default direction.
    pub thumb_wheel_invert: Option<bool>,
}

impl MouseSettings {
    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        *self == MouseSettings::default()
    }

    /// Layers `later` on top: every key `later` sets replaces this one's.
    pub fn merge(&mut self, later: &MouseSettings) {
        self.dpi = later.dpi.or(self.dpi);
        self.smartshift = later.smartshift.or(self.smartshift);
        self.thumb_wheel_invert = later.thumb_wheel_invert.or(self.thumb_wheel_invert);
    }
}

/// `[hidpp] kernel_mode`: `"auto"` or `"off"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KernelMode {
    /// Kernel mode where the kernel has HID-BPF and the loader attached pawl's program to
    /// the mouse; grab mode elsewhere.
    #[default]
    Auto,
    /// Grab mode always (the program, if attached, is left pass-through).
    Off,
}

impl KernelMode {
    /// The config's spelling: `auto`, `off`.
    pub fn name(self) -> &'static str {
        match self {
            KernelMode::Auto => "auto",
            KernelMode::Off => "off",
        }
    }
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
    /// The swipe's finger count with `detected` the desktop pawl detected
    /// (`XDG_CURRENT_DESKTOP`): `gesture.fingers` when set, else the count of the desktop
    /// the actions use, `actions.desktop` when set, else `detected`
    /// ([`GestureConfig::swipe_fingers`]: GNOME 3, KDE 4).
    pub fn swipe_fingers(&self, detected: Desktop) -> u8 {
        self.gesture
            .swipe_fingers(self.actions.desktop.unwrap_or(detected))
    }

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
                style: GestureStyle::Shortcut,
                fingers: None,
                swipe_scale_milli: 1000,
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
                // On for MX Masters on both platforms: pawl opens only MX Master HID++
                // endpoints, and without HID++ the MX Master 3/3S gesture button never
                // arrives (README, "The gesture button over HID++"). Cost on Linux with
                // the kernel's hid-logitech-hidpp bound: one more read per motion frame,
                // no write, no wake-up (VM `hidpp_cost_per_motion_frame`).
                enabled: true,
                thumb_wheel: true,
                kernel_mode: KernelMode::Auto,
                settings: MouseSettings::default(),
                sense_panel: None,
                haptic_on_gesture: false,
            },
            apps: Vec::new(),
            app_ids: Vec::new(),
            app_first_key: Vec::new(),
        }
    }

    /// Whether any `[[app]]` table has a `title`: without one, a title change of the
    /// focused window changes nothing, and a platform may drop titles.
    pub fn uses_titles(&self) -> bool {
        self.apps.iter().any(|r| r.title.is_some())
    }

    /// Whether any profile drags in swipe style (`[gesture]` or an `[app.gesture]`): the
    /// platform then needs its virtual touchpad.
    pub fn uses_swipe(&self) -> bool {
        self.gesture.style == GestureStyle::Swipe
            || self
                .apps
                .iter()
                .any(|r| r.gesture.style == Some(GestureStyle::Swipe))
    }

    /// How many [`AppKey`]s the config has (0 without `[[app]]` tables).
    pub fn app_key_count(&self) -> usize {
        self.app_first_key.last().map_or(0, |&n| usize::from(n))
    }

    /// The key of application `app_id` (exact, case-sensitive) whose window is titled
    /// `title` (`None`: the backend gives no titles), `None` when no `[[app]]` table
    /// applies: none names the application, or every one that does has a `title` that
    /// does not match. A binary search and at most [`MAX_TITLE_TABLES_PER_APP`] pattern
    /// matches: call it once per focus or title change, not per frame.
    pub fn app_key(&self, app_id: &str, title: Option<&str>) -> Option<AppKey> {
        let i = self
            .app_ids
            .binary_search_by(|id| id.as_str().cmp(app_id))
            .ok()?;
        let mut titles = 0u16;
        let mut untitled = false;
        for (bit, rule) in self.tables_of(i) {
            match (&rule.title, bit) {
                (Some(p), Some(bit)) if title.is_some_and(|t| p.is_match(t)) => {
                    titles |= 1 << bit;
                }
                (Some(_), _) => {}
                (None, _) => untitled = true,
            }
        }
        if titles == 0 && !untitled {
            return None;
        }
        Some(AppKey(self.app_first_key[i] + titles))
    }

    /// The `[[app]]` tables naming application `i` of `app_ids`, in file order, each with
    /// its bit among the application's title tables (`None` for a table without `title`).
    fn tables_of(&self, i: usize) -> impl Iterator<Item = (Option<u8>, &AppRule)> {
        let name = self.app_ids.get(i).map_or("", |s| s.as_str());
        let mut next_bit = 0u8;
        self.apps
            .iter()
            .filter(move |r| r.app_ids.iter().any(|id| id == name))
            .map(move |r| {
                let bit = r.title.as_ref().map(|_| {
                    next_bit += 1;
                    next_bit - 1
                });
                (bit, r)
            })
    }

    /// Application `i` of `app_ids` and the title tables that match, for `key`.
    fn decode(&self, key: AppKey) -> Option<(usize, u16)> {
        if usize::from(key.0) >= self.app_key_count() {
            return None;
        }
        let i = self.app_first_key.partition_point(|&first| first <= key.0) - 1;
        Some((i, key.0 - self.app_first_key[i]))
    }

    /// The tables that apply for `key`, in file order: every table naming its application
    /// without a `title`, and those with one that matched.
    fn tables_for(&self, key: AppKey) -> impl Iterator<Item = &AppRule> {
        let (i, titles) = self.decode(key).unwrap_or((usize::MAX, 0));
        self.tables_of(i)
            .filter(move |(bit, _)| bit.is_none_or(|b| titles & (1 << b) != 0))
            .map(|(_, r)| r)
    }

    /// The application id of `key` (`""` for a key of another config).
    pub fn app_name(&self, key: AppKey) -> &str {
        self.decode(key)
            .and_then(|(i, _)| self.app_ids.get(i))
            .map_or("", |s| s.as_str())
    }

    /// The profile in force for `pawl status`: `device` without a key, else `app ID
    /// ([[app]] at line L, M)`, the lines of every table that applies. Not on the event
    /// path: once per focus change or status query.
    pub fn profile_text(&self, key: Option<AppKey>) -> String {
        let Some(k) = key else {
            return "device".to_owned();
        };
        let lines: Vec<String> = self.tables_for(k).map(|r| r.line.to_string()).collect();
        format!(
            "app {} ([[app]] at line {})",
            self.app_name(k),
            lines.join(", ")
        )
    }

    /// What the `[[app]]` tables of `key` decide for `info`, `None` when none applies
    /// (their `device` does not match, or the key is another config's): the device's
    /// settings ([`Config::decide`]) with every applying table's keys layered in file
    /// order.
    pub fn app_settings(&self, info: &DeviceInfo, key: AppKey) -> Option<AppSettings> {
        let mut scroll = ScrollOverrides::default();
        let mut gesture = GestureActions::default();
        let mut buttons = ButtonOverrides::default();
        let mut lines = Vec::new();
        for rule in self
            .tables_for(key)
            .filter(|r| r.device.as_ref().is_none_or(|m| m.matches(info)))
        {
            scroll.merge(&rule.scroll);
            gesture.merge(&rule.gesture);
            buttons.merge(&rule.buttons);
            lines.push(rule.line);
        }
        if lines.is_empty() {
            return None;
        }
        let (mut keys, device_keys) = self.device_scroll_keys(info);
        let scroll = if device_keys || !scroll.is_empty() {
            keys.merge(&scroll);
            keys.apply_to(self.scroll)
        } else {
            self.scroll
        };
        Some(AppSettings {
            scroll,
            gesture: gesture.apply_to(self.gesture),
            buttons: buttons.apply_to(&self.buttons),
            lines,
        })
    }

    /// The mouse's own settings for `info`: `[hidpp]`'s `dpi`, `smartshift` and
    /// `thumb_wheel_invert` with those of every matching rule's `[device.hidpp]` layered on
    /// in file order. A rule with `handle = false` sets none (the validator refuses them
    /// there).
    pub fn mouse_settings(&self, info: &DeviceInfo) -> MouseSettings {
        let mut s = self.hidpp.settings;
        for rule in self.devices.iter().filter(|r| r.matcher.matches(info)) {
            s.merge(&rule.hidpp);
        }
        s
    }

    /// The `[scroll]` keys with those of every matching `[[device]]` rule layered on, and
    /// whether any rule set one.
    fn device_scroll_keys(&self, info: &DeviceInfo) -> (ScrollOverrides, bool) {
        let mut keys = self.scroll_keys;
        let mut any = false;
        for rule in self.devices.iter().filter(|r| r.matcher.matches(info)) {
            keys.merge(&rule.scroll);
            any |= !rule.scroll.is_empty();
        }
        (keys, any)
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
        self.buttons.action(b)
    }
}

impl ButtonsConfig {
    /// The action of a mapped button, if any (the gesture button is not known here).
    pub fn action(&self, b: Button) -> Option<Action> {
        if b == self.back {
            return Some(self.on_back);
        }
        if b == self.forward {
            return Some(self.on_forward);
        }
        self.map.iter().find(|(mb, _)| *mb == b).map(|(_, a)| *a)
    }
}
