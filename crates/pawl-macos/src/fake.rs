//! A fake tap and fake events for the tests: every call the worker makes is recorded in
//! order, the clock and the trust answer are set by the test.

use std::collections::HashMap;

use pawl_engine::DeviceInfo;
use pawl_engine::units::Micros;

use crate::cg::{Field, SOURCE_STATE_HID_SYSTEM};
use crate::pointer::{AppAt, PointerApp};
use crate::tap::{Synthetic, Tap, TapCreateError, TapEvent, TapKind, TapSpec};

/// One recorded call.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    Create(TapKind, TapSpec),
    Enable(TapKind, bool),
    InvalidateAll,
    Post(Synthetic),
    ArmTimer(Option<Micros>),
    Spawn(Vec<String>),
    Prompt,
    Recheck,
    Warp(f64, f64),
}

/// The fake OS.
#[derive(Debug, Default)]
pub struct FakeTap {
    pub calls: Vec<Call>,
    pub trusted: bool,
    /// Tap creation fails for these kinds.
    pub fail_create: Vec<TapKind>,
    pub now: Micros,
    /// Devices by sender registry ID.
    pub devices: HashMap<u64, DeviceInfo>,
    pub lookups: Vec<u64>,
    /// Which taps exist and whether they are enabled.
    pub taps: HashMap<TapKind, bool>,
    /// What a probe tap says; `None`: the same as `trusted` (a revoked grant that
    /// `AXIsProcessTrusted` still reports is `trusted: true, tap_allowed: Some(false)`).
    pub tap_allowed: Option<bool>,
    /// The modifier flags the user holds.
    pub held: u64,
    /// Windows front to back: `(x, y, width, height)` and whose they are.
    pub windows: Vec<((f64, f64, f64, f64), AppAt)>,
    /// The window list cannot be read: every lookup answers [`AppAt::Unknown`].
    pub no_window_list: bool,
    /// Every point asked about with [`PointerApp::app_at`].
    pub app_lookups: Vec<(f64, f64)>,
    /// Where the cursor is.
    pub cursor: (f64, f64),
}

impl FakeTap {
    pub fn trusted() -> FakeTap {
        FakeTap {
            trusted: true,
            ..FakeTap::default()
        }
    }

    /// Forgets the calls so far.
    pub fn take_calls(&mut self) -> Vec<Call> {
        std::mem::take(&mut self.calls)
    }

    pub fn posts(&self) -> Vec<Synthetic> {
        self.calls
            .iter()
            .filter_map(|c| match c {
                Call::Post(s) => Some(*s),
                _ => None,
            })
            .collect()
    }

    pub fn spawns(&self) -> Vec<Vec<String>> {
        self.calls
            .iter()
            .filter_map(|c| match c {
                Call::Spawn(argv) => Some(argv.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn enabled(&self, kind: TapKind) -> Option<bool> {
        self.taps.get(&kind).copied()
    }
}

impl PointerApp for FakeTap {
    fn app_at(&mut self, x: f64, y: f64) -> AppAt {
        self.app_lookups.push((x, y));
        if self.no_window_list {
            return AppAt::Unknown;
        }
        self.windows
            .iter()
            .find(|((wx, wy, w, h), _)| x >= *wx && x < wx + w && y >= *wy && y < wy + h)
            .map_or(AppAt::Unknown, |(_, app)| app.clone())
    }

    fn cursor(&mut self) -> (f64, f64) {
        self.cursor
    }
}

impl Tap for FakeTap {
    fn create(&mut self, kind: TapKind, spec: TapSpec) -> Result<(), TapCreateError> {
        self.calls.push(Call::Create(kind, spec));
        if self.fail_create.contains(&kind) || !self.can_create_tap() {
            return Err(TapCreateError { kind });
        }
        self.taps.insert(kind, spec.enabled);
        Ok(())
    }

    fn set_enabled(&mut self, kind: TapKind, enabled: bool) {
        self.calls.push(Call::Enable(kind, enabled));
        let tap = self
            .taps
            .get_mut(&kind)
            .expect("enabling a tap that does not exist");
        *tap = enabled;
    }

    fn invalidate_all(&mut self) {
        self.calls.push(Call::InvalidateAll);
        self.taps.clear();
    }

    fn is_trusted(&mut self) -> bool {
        self.trusted
    }

    fn can_create_tap(&mut self) -> bool {
        self.tap_allowed.unwrap_or(self.trusted)
    }

    fn prompt_for_trust(&mut self) -> bool {
        self.calls.push(Call::Prompt);
        self.trusted
    }

    fn schedule_recheck(&mut self) {
        self.calls.push(Call::Recheck);
    }

    fn held_flags(&mut self) -> u64 {
        self.held
    }

    fn warp(&mut self, x: f64, y: f64) {
        self.calls.push(Call::Warp(x, y));
    }

    fn post(&mut self, event: &Synthetic) {
        self.calls.push(Call::Post(*event));
    }

    fn now(&mut self) -> Micros {
        self.now
    }

    fn arm_timer(&mut self, deadline: Option<Micros>) {
        self.calls.push(Call::ArmTimer(deadline));
    }

    fn sender(&mut self, registry_id: u64) -> Option<DeviceInfo> {
        self.lookups.push(registry_id);
        self.devices.get(&registry_id).cloned()
    }

    fn spawn(&mut self, argv: &[String]) {
        self.calls.push(Call::Spawn(argv.to_vec()));
    }
}

/// A fake event: a field table, hardware origin by default, with every write recorded in
/// order.
#[derive(Clone, Debug)]
pub struct FakeEvent {
    pub integers: HashMap<u32, i64>,
    pub doubles: HashMap<u32, f64>,
    pub writes: Vec<(Field, f64)>,
    pub location: (f64, f64),
}

impl Default for FakeEvent {
    fn default() -> Self {
        let mut integers = HashMap::new();
        integers.insert(Field::SOURCE_STATE_ID.0, SOURCE_STATE_HID_SYSTEM);
        FakeEvent {
            integers,
            doubles: HashMap::new(),
            writes: Vec::new(),
            location: (0.0, 0.0),
        }
    }
}

impl FakeEvent {
    /// A vertical scroll event: line, fixed-point and point deltas.
    pub fn scroll(line: i64, fixed: f64, point: i64) -> FakeEvent {
        let mut e = FakeEvent::default();
        e.integers.insert(Field::SCROLL_DELTA_AXIS1.0, line);
        e.doubles
            .insert(Field::SCROLL_FIXED_PT_DELTA_AXIS1.0, fixed);
        e.integers.insert(Field::SCROLL_POINT_DELTA_AXIS1.0, point);
        e
    }

    /// A button event of `button`.
    pub fn button(button: i64) -> FakeEvent {
        FakeEvent::default().with(Field::MOUSE_BUTTON_NUMBER, button)
    }

    /// A motion event.
    pub fn motion(dx: i64, dy: i64) -> FakeEvent {
        FakeEvent::default()
            .with(Field::MOUSE_DELTA_X, dx)
            .with(Field::MOUSE_DELTA_Y, dy)
    }

    /// Sets an integer field (without recording it as a write).
    pub fn with(mut self, field: Field, value: i64) -> FakeEvent {
        self.integers.insert(field.0, value);
        self
    }
}

impl TapEvent for FakeEvent {
    fn integer(&self, field: Field) -> i64 {
        self.integers.get(&field.0).copied().unwrap_or(0)
    }

    fn set_integer(&mut self, field: Field, value: i64) {
        self.writes.push((field, value as f64));
        self.integers.insert(field.0, value);
    }

    fn double(&self, field: Field) -> f64 {
        self.doubles.get(&field.0).copied().unwrap_or(0.0)
    }

    fn set_double(&mut self, field: Field, value: f64) {
        self.writes.push((field, value));
        self.doubles.insert(field.0, value);
    }

    fn location(&self) -> (f64, f64) {
        self.location
    }
}

/// The default config with one `[[app]]` table: the game `com.example.Game`'s wheel is not
/// inverted (the tests of per-app scroll and of its allocations share it).
pub fn game_config() -> pawl_engine::Config {
    pawl_engine::Config::parse(
        "[[app]]\napp_id = [\"com.example.Game\"]\n[app.scroll]\ninvert_vertical = false\n",
        "t.toml",
        pawl_engine::Platform::MacOs,
    )
    .unwrap()
}
