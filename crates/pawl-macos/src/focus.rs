//! Per-application profiles on macOS: which `[[app]]` profile is in force, decided from the
//! bundle identifier of the frontmost application.
//!
//! The host (`crate::sys`, only on macOS) reads
//! `NSWorkspace.sharedWorkspace.frontmostApplication.bundleIdentifier` once at start, then
//! observes `NSWorkspaceDidActivateApplicationNotification` on the worker's run loop, and
//! hands each bundle identifier to [`crate::worker::Worker::on_app_activated`], which asks
//! [`Focus::activated`] here. Nothing polls: a change of the frontmost application is the
//! only thing that switches a profile.
//!
//! # Rules
//!
//! - The observer exists only while the config has `[[app]]` tables ([`Focus::wanted`]).
//! - The application is the focused one. Scroll is the exception when a table sets scroll
//!   keys: then the application under the pointer decides it, read once per scroll gesture
//!   ([`crate::pointer`]).
//! - An application without a bundle identifier (no `Info.plist`: `nil`), one no
//!   `[[app]]` table names, and one whose identifier is longer than
//!   [`pawl_engine::config::MAX_APP_ID_BYTES`] all run the device profile.
//! - The config is looked up once per activation ([`Config::app_key`]), never per event.

use pawl_engine::config::MAX_APP_ID_BYTES;
use pawl_engine::{AppKey, Config};

/// The name `pawl status` gives the backend while it observes the frontmost application.
pub const BACKEND: &str = "nsworkspace";

/// [`BACKEND`] when some table sets scroll keys: scroll then follows the application under
/// the pointer ([`crate::pointer::ScrollTarget`]), whose profile may differ from the one
/// `pawl status` shows for the frontmost application.
pub const BACKEND_SCROLL_UNDER_POINTER: &str = "nsworkspace (scroll: the app under the pointer)";

/// The focus part of `pawl status`, worded as on Linux.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FocusSummary {
    /// The backend: `nsworkspace`, or why there is none (`none: no [[app]] table`,
    /// `none: …`).
    pub backend: String,
    /// The focused application's bundle identifier, when known.
    pub app: Option<String>,
    /// The profile in force: `device` or `app APP ([[app]] at line …)`.
    pub profile: String,
}

/// What an activation changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// Nothing: the same application again.
    Same,
    /// The application shown by `pawl status`, not the profile (from one application no
    /// `[[app]]` table names to another).
    App,
    /// The profile to run (and the application).
    Profile,
}

/// What the focus backend said last and the profile it selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Focus {
    /// What `pawl status` names as the backend.
    backend: String,
    /// The frontmost application's bundle identifier, when known.
    app: Option<String>,
    /// Its key in the config, when an `[[app]]` table names it.
    key: Option<AppKey>,
}

impl Focus {
    /// Whether `config` needs a focus backend: it has `[[app]]` tables.
    pub fn wanted(config: &Config) -> bool {
        !config.apps.is_empty()
    }

    /// No application known yet. The backend reads [`BACKEND`] when `config` wants one
    /// ([`BACKEND_SCROLL_UNDER_POINTER`] when a table sets scroll keys; the host says
    /// otherwise with [`Focus::unavailable`]), `none: no [[app]] table` when it does not.
    pub fn new(config: &Config) -> Focus {
        Focus {
            backend: if crate::pointer::ScrollTarget::wanted(config) {
                BACKEND_SCROLL_UNDER_POINTER.to_owned()
            } else if Focus::wanted(config) {
                BACKEND.to_owned()
            } else {
                "none: no [[app]] table".to_owned()
            },
            app: None,
            key: None,
        }
    }

    /// The host could not observe the frontmost application (`why`, e.g. `the worker is
    /// not on the main thread`): device profiles stay in force.
    pub fn unavailable(&mut self, why: &str) {
        self.backend = format!("none: {why}");
        self.app = None;
        self.key = None;
    }

    /// An application became frontmost, with bundle identifier `bundle` (`None`: it has
    /// none). On [`Change::Profile`] the caller gives every engine [`Focus::key`]
    /// ([`pawl_engine::DeviceEngine::set_app`]).
    pub fn activated(&mut self, config: &Config, bundle: Option<&str>) -> Change {
        let bundle = bundle.filter(|b| !b.is_empty() && b.len() <= MAX_APP_ID_BYTES);
        if self.app.as_deref() == bundle {
            return Change::Same;
        }
        self.app = bundle.map(str::to_owned);
        let key = bundle.and_then(|b| config.app_key(b, None));
        if key == self.key {
            return Change::App;
        }
        self.key = key;
        Change::Profile
    }

    /// The `[[app]]` key of the frontmost application (`None`: the device profile).
    pub fn key(&self) -> Option<AppKey> {
        self.key
    }

    /// The frontmost application's bundle identifier, when known.
    pub fn app(&self) -> Option<&str> {
        self.app.as_deref()
    }

    /// The backend, the focused application and the profile in force under `config`.
    pub fn summary(&self, config: &Config) -> FocusSummary {
        let profile = config.profile_text(self.key);
        FocusSummary {
            backend: self.backend.clone(),
            app: self.app.clone(),
            profile,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pawl_engine::Platform;

    fn config() -> Config {
        Config::parse(
            "[[app]]\napp_id = [\"com.valvesoftware.steam\", \"com.example.Game\"]\n\
             [app.scroll]\ninvert_vertical = false\n\n\
             [[app]]\napp_id = [\"com.example.Game\"]\n[app.scroll]\nsmoothing = \"none\"\n",
            "t.toml",
            Platform::MacOs,
        )
        .unwrap()
    }

    #[test]
    fn a_config_without_app_tables_wants_no_backend_and_says_why() {
        let c = Config::default_for(Platform::MacOs);
        assert!(!Focus::wanted(&c));
        let s = Focus::new(&c).summary(&c);
        assert_eq!(s.backend, "none: no [[app]] table");
        assert_eq!((s.app, s.profile.as_str()), (None, "device"));
        assert!(Focus::wanted(&config()));
    }

    #[test]
    fn the_backend_says_when_scroll_follows_the_app_under_the_pointer() {
        // Every table of `config` sets scroll keys.
        let c = config();
        assert_eq!(
            Focus::new(&c).summary(&c).backend,
            BACKEND_SCROLL_UNDER_POINTER
        );
        let buttons_only = Config::parse(
            "[[app]]\napp_id = \"com.example.Browser\"\n[app.buttons]\non_back = { key = \"Cmd+W\" }\n",
            "t.toml",
            Platform::MacOs,
        )
        .unwrap();
        assert_eq!(
            Focus::new(&buttons_only).summary(&buttons_only).backend,
            BACKEND
        );
    }

    #[test]
    fn an_activated_app_that_a_table_names_selects_its_profile_and_lists_every_line() {
        let c = config();
        let mut f = Focus::new(&c);
        assert_eq!(f.activated(&c, Some("com.example.Game")), Change::Profile);
        assert_eq!(f.key(), c.app_key("com.example.Game", None));
        let s = f.summary(&c);
        assert_eq!(s.app.as_deref(), Some("com.example.Game"));
        assert_eq!(s.profile, "app com.example.Game ([[app]] at line 1, 6)");
        // The same application again changes nothing.
        assert_eq!(f.activated(&c, Some("com.example.Game")), Change::Same);
    }

    #[test]
    fn an_unknown_bundle_id_runs_the_device_profile_but_is_shown() {
        let c = config();
        let mut f = Focus::new(&c);
        f.activated(&c, Some("com.valvesoftware.steam"));
        assert_eq!(f.activated(&c, Some("com.apple.Safari")), Change::Profile);
        assert_eq!(f.key(), None);
        let s = f.summary(&c);
        assert_eq!(s.app.as_deref(), Some("com.apple.Safari"));
        assert_eq!(s.profile, "device");
        // From one unknown application to another: the profile stays, the app changes.
        assert_eq!(f.activated(&c, Some("com.apple.Terminal")), Change::App);
        assert_eq!(f.app(), Some("com.apple.Terminal"));
    }

    #[test]
    fn an_app_without_a_bundle_id_is_unknown_and_runs_the_device_profile() {
        let c = config();
        let mut f = Focus::new(&c);
        f.activated(&c, Some("com.example.Game"));
        assert_eq!(f.activated(&c, None), Change::Profile);
        assert_eq!((f.key(), f.app()), (None, None));
        f.activated(&c, Some("com.example.Game"));
        assert_eq!(
            f.activated(&c, Some("")),
            Change::Profile,
            "an empty id is no id"
        );
        assert_eq!(f.app(), None);
        let long = "a".repeat(MAX_APP_ID_BYTES + 1);
        f.activated(&c, Some("com.example.Game"));
        assert_eq!(
            f.activated(&c, Some(&long)),
            Change::Profile,
            "longer than any table may name"
        );
        assert_eq!((f.key(), f.app()), (None, None));
    }

    #[test]
    fn an_unavailable_backend_says_why_and_runs_device_profiles() {
        let c = config();
        let mut f = Focus::new(&c);
        f.activated(&c, Some("com.example.Game"));
        f.unavailable("the worker is not on the main thread");
        let s = f.summary(&c);
        assert_eq!(s.backend, "none: the worker is not on the main thread");
        assert_eq!((s.app, s.profile.as_str()), (None, "device"));
    }
}
