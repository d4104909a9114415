//! The application under the pointer decides scroll: which application's `[app.scroll]`
//! applies to a scroll gesture, read once when the gesture starts.
//!
//! The host (`crate::sys`, only on macOS) answers [`PointerApp::app_at`] from the window
//! list; the worker asks [`ScrollTarget::on_scroll`] before it feeds a scroll event to an
//! engine, and that calls [`pawl_engine::DeviceEngine::set_scroll_app`]. Buttons and
//! gestures keep following the focused application ([`crate::focus`]).
//!
//! # Rules
//!
//! - Only a config whose `[[app]]` tables set scroll keys asks at all
//!   ([`ScrollTarget::wanted`]); without one, a scroll event costs one branch.
//! - A scroll gesture starts with the first scroll event an engine gets, with an event
//!   that goes to another engine than the one before, and with an event that comes more
//!   than the engine's scroll gesture gap after the one before
//!   (`ScrollParams::gesture_gap_us`, from `gesture_gap_ms`; the same
//!   `dt > gap` rule the scroll pipeline starts afresh by). Only then is the application
//!   under the pointer looked up: never per event.
//! - Events with a scroll or momentum phase (trackpads, the system's inertia) never reach
//!   an engine ([`crate::worker`]), so phases need no rule here.
//! - A lookup that finds no window, or a window list that cannot be read, gives scroll back
//!   to the focused application ([`pawl_engine::DeviceEngine::scroll_follows_focus`]). A
//!   window whose application has no bundle identifier (or one no table names) runs the
//!   device's scroll settings, as focus does.
//! - Nothing here allocates; the lookup (once per gesture) may.

use pawl_engine::config::MAX_APP_ID_BYTES;
use pawl_engine::units::Micros;
use pawl_engine::{Config, DeviceEngine};

/// What is under a point of the screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppAt {
    /// A window of the application with this bundle identifier.
    Bundle(String),
    /// A window of an application without a bundle identifier.
    NoBundle,
    /// Not known: no application window there, or the window list could not be read.
    Unknown,
}

/// The window server as [`ScrollTarget`] sees it.
pub trait PointerApp {
    /// The application owning the frontmost ordinary window (layer 0) that contains
    /// `(x, y)`: global display coordinates in px, origin at the top left of the main
    /// display, as `CGEventGetLocation` gives them. Called once per scroll gesture, from
    /// the tap callback.
    fn app_at(&mut self, x: f64, y: f64) -> AppAt;
    /// Where the cursor is now, in the same coordinates (`CGEventGetLocation` of a new
    /// event), for scroll that comes with no event location (the HID++ thumb wheel).
    fn cursor(&mut self) -> (f64, f64);
}

/// When scroll gestures start, and whether anything is asked at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScrollTarget {
    /// Some `[[app]]` table sets scroll keys.
    wanted: bool,
    /// The engine index and the time of the last scroll event fed to an engine.
    last: Option<(usize, Micros)>,
}

impl ScrollTarget {
    /// Whether `config` needs the application under the pointer: some `[[app]]` table
    /// sets a scroll key.
    pub fn wanted(config: &Config) -> bool {
        config.apps.iter().any(|r| !r.scroll.is_empty())
    }

    /// No gesture seen yet; asks only when `config` [`ScrollTarget::wanted`] it.
    pub fn new(config: &Config) -> ScrollTarget {
        ScrollTarget {
            wanted: ScrollTarget::wanted(config),
            last: None,
        }
    }

    /// Whether a scroll event for engine `index` at `now` starts a scroll gesture, whose
    /// gap is `gap_us` µs (see the module rules). Records the event.
    pub fn starts_gesture(&mut self, index: usize, now: Micros, gap_us: u64) -> bool {
        let new = match self.last {
            Some((i, t)) => i != index || now.since(t) > gap_us,
            None => true,
        };
        self.last = Some((index, now));
        new
    }

    /// A scroll event at `location` (px, as [`PointerApp::app_at`] takes it; `None`: the
    /// event has none, [`PointerApp::cursor`] is asked on a gesture start) is about to go
    /// to `engine` (index `index`, any number that names one engine) at `now`. On a
    /// gesture start, looks up the application under the pointer in `apps` and gives
    /// `engine` its scroll settings. Returns whether it looked up.
    pub fn on_scroll(
        &mut self,
        config: &Config,
        engine: &mut DeviceEngine,
        index: usize,
        now: Micros,
        location: Option<(f64, f64)>,
        apps: &mut impl PointerApp,
    ) -> bool {
        if !self.wanted {
            return false;
        }
        let gap = engine.profile().scroll_fixed.gesture_gap_us;
        if !self.starts_gesture(index, now, gap) {
            return false;
        }
        let (x, y) = location.unwrap_or_else(|| apps.cursor());
        match apps.app_at(x, y) {
            AppAt::Unknown => engine.scroll_follows_focus(),
            AppAt::NoBundle => engine.set_scroll_app(None),
            AppAt::Bundle(b) if b.is_empty() || b.len() > MAX_APP_ID_BYTES => {
                engine.set_scroll_app(None)
            }
            AppAt::Bundle(b) => engine.set_scroll_app(config.app_key(&b, None)),
        }
        true
    }

    /// Forgets the last event: the next scroll event starts a gesture (after a cancel, a
    /// wake, or a focus change that reset the engines).
    pub fn forget(&mut self) {
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pawl_engine::{FrameIn, FrameOut, Platform, WheelIn};

    /// A window server with one answer, counting the questions.
    struct Fixed {
        answer: AppAt,
        asked: Vec<(f64, f64)>,
    }

    impl PointerApp for Fixed {
        fn app_at(&mut self, x: f64, y: f64) -> AppAt {
            self.asked.push((x, y));
            self.answer.clone()
        }

        fn cursor(&mut self) -> (f64, f64) {
            (7.0, 8.0)
        }
    }

    fn fixed(answer: AppAt) -> Fixed {
        Fixed {
            answer,
            asked: Vec::new(),
        }
    }

    fn config(text: &str) -> Config {
        Config::parse(text, "t.toml", Platform::MacOs).unwrap()
    }

    const BROWSER_NOT_INVERTED: &str = "[[app]]\napp_id = [\"org.mozilla.firefox\"]\n\
                                        [app.scroll]\ninvert_vertical = false\n";

    /// The sign of what one wheel notch up becomes.
    fn notch(engine: &mut DeviceEngine, now: Micros) -> i32 {
        let mut out = FrameOut::default();
        let frame = FrameIn {
            time: now,
            wheel: WheelIn {
                v120: 120,
                detents: 1,
            },
            ..FrameIn::default()
        };
        engine.frame(&frame, &mut out);
        out.wheel.v120.signum()
    }

    fn engine(c: &Config) -> DeviceEngine {
        let mut e = DeviceEngine::with_profile(c, true, c.scroll);
        let mouse = pawl_engine::DeviceInfo {
            name: "MX Master 3S".into(),
            bus: pawl_engine::Bus::BLUETOOTH,
            vendor: 0x046d,
            product: 0xb034,
            has_wheel: true,
            is_touchpad: false,
        };
        e.add_app_profiles(c, &mouse);
        e
    }

    #[test]
    fn only_tables_that_set_scroll_keys_want_the_pointer_app() {
        assert!(ScrollTarget::wanted(&config(BROWSER_NOT_INVERTED)));
        assert!(!ScrollTarget::wanted(&config(
            "[[app]]\napp_id = [\"org.mozilla.firefox\"]\n[app.gesture]\nleft = \"overview\"\n"
        )));
        assert!(!ScrollTarget::wanted(&Config::default_for(Platform::MacOs)));
    }

    #[test]
    fn the_first_event_and_one_after_the_gap_start_a_gesture_and_the_gap_itself_does_not() {
        let mut t = ScrollTarget::new(&config(BROWSER_NOT_INVERTED));
        assert!(t.starts_gesture(0, Micros(1_000_000), 300_000));
        assert!(!t.starts_gesture(0, Micros(1_300_000), 300_000), "dt = gap");
        assert!(t.starts_gesture(0, Micros(1_600_001), 300_000), "dt > gap");
        assert!(
            t.starts_gesture(1, Micros(1_600_002), 300_000),
            "another engine"
        );
        t.forget();
        assert!(t.starts_gesture(1, Micros(1_600_003), 300_000));
    }

    #[test]
    fn the_app_under_the_pointer_gets_its_scroll_settings_once_per_gesture() {
        let c = config(BROWSER_NOT_INVERTED);
        let mut e = engine(&c);
        let mut t = ScrollTarget::new(&c);
        let mut apps = fixed(AppAt::Bundle("org.mozilla.firefox".into()));
        let mut now = Micros(1_000_000);
        for _ in 0..10 {
            now = now.plus(8_000);
            t.on_scroll(&c, &mut e, 0, now, Some((10.0, 20.0)), &mut apps);
            assert_eq!(notch(&mut e, now), 1, "the browser's: not inverted");
        }
        assert_eq!(apps.asked, [(10.0, 20.0)]);
        // After the gap the pointer is over something else.
        apps.answer = AppAt::Bundle("com.apple.Terminal".into());
        now = now.plus(300_001);
        assert!(t.on_scroll(&c, &mut e, 0, now, Some((500.0, 20.0)), &mut apps));
        assert_eq!(notch(&mut e, now), -1, "no table: the device's, inverted");
        assert_eq!(apps.asked.len(), 2);
    }

    #[test]
    fn an_unknown_window_gives_scroll_back_to_the_focused_app() {
        let c = config(BROWSER_NOT_INVERTED);
        let mut e = engine(&c);
        e.set_app(c.app_key("org.mozilla.firefox", None));
        let mut t = ScrollTarget::new(&c);
        let mut apps = fixed(AppAt::NoBundle);
        let mut now = Micros(1_000_000);
        t.on_scroll(&c, &mut e, 0, now, Some((0.0, 0.0)), &mut apps);
        assert_eq!(
            notch(&mut e, now),
            -1,
            "no bundle id: the device's settings"
        );
        apps.answer = AppAt::Unknown;
        now = now.plus(400_000);
        t.on_scroll(&c, &mut e, 0, now, Some((0.0, 0.0)), &mut apps);
        assert_eq!(notch(&mut e, now), 1, "the focused browser's settings");
    }

    #[test]
    fn without_scroll_tables_nothing_is_looked_up() {
        let c = config("[[app]]\napp_id = [\"a.b\"]\n[app.buttons]\non_back = \"overview\"\n");
        let mut e = engine(&c);
        let mut t = ScrollTarget::new(&c);
        let mut apps = fixed(AppAt::Bundle("a.b".into()));
        assert!(!t.on_scroll(&c, &mut e, 0, Micros(1), Some((0.0, 0.0)), &mut apps));
        assert!(apps.asked.is_empty());
    }

    #[test]
    fn scroll_without_a_location_asks_where_the_cursor_is() {
        let c = config(BROWSER_NOT_INVERTED);
        let mut e = engine(&c);
        let mut t = ScrollTarget::new(&c);
        let mut apps = fixed(AppAt::Unknown);
        assert!(t.on_scroll(&c, &mut e, 0, Micros(1), None, &mut apps));
        assert_eq!(apps.asked, [(7.0, 8.0)]);
    }
}
