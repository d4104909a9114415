//! Which device sent an event, and what pawl does with that device: the scope decision per
//! sender registry ID (field 87), cached per ID.
//!
//! A sender that can be identified (an IORegistry walk to VendorID/ProductID) gets the
//! config's decision for that device ([`Config::decide`]) and an engine of its own.
//! Trackpads and Magic Mice are never changed, whatever the config says. A sender that
//! cannot be identified (ID 0, lookup failed) shares the fallback engine, whose wheel is
//! transformed only for events that look like a line-based wheel: not continuous, no scroll
//! or momentum phase. A Unifying or Bolt receiver is such a sender too: macOS names the
//! receiver, not the mouse paired to it.
//!
//! Every engine holds the profiles of the `[[app]]` tables that apply to its device
//! ([`DeviceEngine::add_app_profiles`]); [`Senders::set_app`] switches them all, and an
//! engine made later starts with the application in force.

use pawl_engine::config::Scope;
use pawl_engine::{AppKey, Bus, Config, DeviceEngine, DeviceInfo};

/// Apple's USB vendor id.
pub const APPLE_USB: u16 = 0x05ac;
/// Apple's Bluetooth SIG company id, which Bluetooth devices report as vendor.
pub const APPLE_BLUETOOTH: u16 = 0x004c;

/// Apple Magic Mice (0x030d, 0x0269, USB-C 0x0323) and Magic Trackpads (0x030e, 0x0265,
/// USB-C 0x0324) by product id. Source: the Linux kernel `drivers/hid/hid-ids.h`
/// (`USB_DEVICE_ID_APPLE_MAGICMOUSE*`, `USB_DEVICE_ID_APPLE_MAGICTRACKPAD*`).
const APPLE_CONTINUOUS_PRODUCTS: &[u16] = &[0x030d, 0x0269, 0x0323, 0x030e, 0x0265, 0x0324];

/// Whether `info` is a Unifying or Bolt receiver (MX Master family table).
fn is_receiver(info: &DeviceInfo) -> bool {
    matches!(
        pawl_engine::device::family(info.vendor, info.product),
        Some(pawl_engine::device::Family::Receiver(_))
    )
}

/// Whether `info` is an Apple trackpad or Magic Mouse (by the kernel's product ids, or by
/// name for built-in trackpads, whose ids vary by model).
pub fn is_apple_continuous(info: &DeviceInfo) -> bool {
    if info.vendor != APPLE_USB && info.vendor != APPLE_BLUETOOTH {
        return false;
    }
    let name = info.name.to_ascii_lowercase();
    APPLE_CONTINUOUS_PRODUCTS.contains(&info.product)
        || name.contains("trackpad")
        || name.contains("magic mouse")
}

/// What happens to a sender's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Never changed (not handled, trackpad, Magic Mouse).
    Pass,
    /// An identified handled device: engine index; its wheel events are transformed unless
    /// they carry a scroll or momentum phase.
    Identified(usize),
    /// Unidentified: the fallback engine (index [`Senders::FALLBACK`]); its wheel events are
    /// transformed only when not continuous and without phase.
    Fallback,
}

/// The per-sender cache and the engines it routes to.
#[derive(Debug)]
pub struct Senders {
    cache: Vec<(u64, Route)>,
    engines: Vec<DeviceEngine>,
    /// Device names by engine index (for logs and the inspector).
    names: Vec<String>,
    /// The application whose profile the engines run ([`Senders::set_app`]).
    app: Option<AppKey>,
}

/// What the fallback engine's `[[app]]` tables are matched against: no name, no ids, so
/// only tables without `device`, or whose `device` matches any device, apply to it.
fn unidentified() -> DeviceInfo {
    DeviceInfo {
        name: String::new(),
        bus: Bus(0),
        vendor: 0,
        product: 0,
        has_wheel: true,
        is_touchpad: false,
    }
}

impl Senders {
    /// Index of the fallback engine.
    pub const FALLBACK: usize = 0;
    /// Senders remembered; past this the cache starts over (registry IDs of devices that
    /// reconnect are new, so an unbounded cache would grow with every reconnect).
    const CAP: usize = 64;

    /// The fallback engine for `config`; no sender known yet.
    pub fn new(config: &Config) -> Senders {
        let fallback_wheels = matches!(config.scope, Scope::MxMasterOnly | Scope::AllWheels);
        let mut fallback = DeviceEngine::with_profile(config, fallback_wheels, config.scroll);
        fallback.add_app_profiles(config, &unidentified());
        Senders {
            cache: Vec::with_capacity(Senders::CAP),
            engines: vec![fallback],
            names: vec!["unidentified sender".to_owned()],
            app: None,
        }
    }

    /// The focused application changed to `app` (`None`: the device profiles): every
    /// engine switches ([`DeviceEngine::set_app`]: a gesture held keeps its profile until
    /// it ends), and engines made later start with it.
    pub fn set_app(&mut self, app: Option<AppKey>) {
        self.app = app;
        for engine in &mut self.engines {
            engine.set_app(app);
        }
    }

    /// The route of `registry_id`, asking `lookup` (the IORegistry walk) once per ID.
    pub fn route(
        &mut self,
        config: &Config,
        registry_id: u64,
        lookup: impl FnOnce(u64) -> Option<DeviceInfo>,
    ) -> Route {
        if let Some((_, r)) = self.cache.iter().find(|(id, _)| *id == registry_id) {
            return *r;
        }
        let info = match registry_id {
            0 => None,
            id => lookup(id),
        };
        let route = match info {
            None => Route::Fallback,
            Some(info) => self.decide(config, info),
        };
        if self.cache.len() == Senders::CAP {
            self.cache.clear();
        }
        self.cache.push((registry_id, route));
        route
    }

    fn decide(&mut self, config: &Config, info: DeviceInfo) -> Route {
        if info.is_touchpad || is_apple_continuous(&info) {
            log::info!(
                "sender {:?} ({:04x}:{:04x}): never changed",
                info.name,
                info.vendor,
                info.product
            );
            return Route::Pass;
        }
        let decision = config.decide(&info);
        let rule_matched = config.devices.iter().any(|r| r.matcher.matches(&info));
        if !decision.handle && !rule_matched && is_receiver(&info) {
            // macOS shows the receiver, not the mouse on it: the sender cannot be told apart,
            // so it is handled like an unidentified sender (a `[[device]]` rule decides
            // otherwise).
            log::info!(
                "sender {:?} ({:04x}:{:04x}): receiver, may hold an MX Master: handled like an \
                 unidentified sender",
                info.name,
                info.vendor,
                info.product
            );
            return Route::Fallback;
        }
        log::info!(
            "sender {:?} ({:04x}:{:04x}): {} ({})",
            info.name,
            info.vendor,
            info.product,
            if decision.handle {
                "handled"
            } else {
                "passed through"
            },
            decision.reason
        );
        if !decision.handle {
            return Route::Pass;
        }
        let mut engine =
            DeviceEngine::with_profile(config, decision.transform_scroll, decision.scroll);
        engine.add_app_profiles(config, &info);
        engine.set_app(self.app);
        self.engines.push(engine);
        self.names.push(info.name);
        Route::Identified(self.engines.len() - 1)
    }

    /// What the cache says about `registry_id` (no lookup), for logs: the device name and
    /// whether pawl handles it.
    pub fn describe(&self, registry_id: u64) -> &str {
        match self.cache.iter().find(|(id, _)| *id == registry_id) {
            None => "not seen",
            Some((_, Route::Pass)) => "passed through",
            Some((_, Route::Fallback)) => self.name(Senders::FALLBACK),
            Some((_, Route::Identified(i))) => self.name(*i),
        }
    }

    /// The engine at `index`.
    pub fn engine(&mut self, index: usize) -> &mut DeviceEngine {
        &mut self.engines[index]
    }

    /// Every engine (the fallback first).
    pub fn engines(&mut self) -> &mut [DeviceEngine] {
        &mut self.engines
    }

    /// The device name of engine `index`.
    pub fn name(&self, index: usize) -> &str {
        &self.names[index]
    }

    /// The engine whose gesture button is held, if any.
    pub fn holding_gesture(&self) -> Option<usize> {
        self.engines.iter().position(DeviceEngine::gesture_held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pawl_engine::{Bus, Platform};

    fn device(name: &str, vendor: u16, product: u16) -> DeviceInfo {
        DeviceInfo {
            name: name.into(),
            bus: Bus::BLUETOOTH,
            vendor,
            product,
            has_wheel: true,
            is_touchpad: false,
        }
    }

    #[test]
    fn each_sender_is_looked_up_once() {
        let c = Config::default_for(Platform::MacOs);
        let mut s = Senders::new(&c);
        let mut lookups = 0;
        for _ in 0..3 {
            let r = s.route(&c, 0x1000_0042, |_| {
                lookups += 1;
                Some(device("MX Master 3S", 0x046d, 0xb034))
            });
            assert_eq!(r, Route::Identified(1));
        }
        assert_eq!(lookups, 1);
    }

    #[test]
    fn mx_master_is_handled_and_other_mice_pass_under_mx_master_only() {
        let c = Config::default_for(Platform::MacOs);
        let mut s = Senders::new(&c);
        let mx = s.route(&c, 1, |_| Some(device("MX Master 3S", 0x046d, 0xb034)));
        let other = s.route(&c, 2, |_| Some(device("USB Optical Mouse", 0x1bcf, 0x0005)));
        assert_eq!((mx, other), (Route::Identified(1), Route::Pass));
        assert!(s.engine(1).profile().transform_scroll);
    }

    #[test]
    fn receiver_is_handled_like_an_unidentified_sender_unless_a_rule_names_it() {
        let c = Config::default_for(Platform::MacOs);
        let mut s = Senders::new(&c);
        let bolt = || Some(device("USB Receiver", 0x046d, 0xc548));
        assert_eq!(s.route(&c, 1, |_| bolt()), Route::Fallback);
        let rules = Config::parse(
            "[[device]]\nid = \"046d:c548\"\nhandle = false\n",
            "t.toml",
            Platform::MacOs,
        )
        .unwrap();
        let mut s = Senders::new(&rules);
        assert_eq!(s.route(&rules, 1, |_| bolt()), Route::Pass);
    }

    #[test]
    fn trackpad_and_magic_mouse_are_never_changed_even_when_a_rule_says_so() {
        let mut c = Config::default_for(Platform::MacOs);
        c.scope = Scope::AllWheels;
        let mut s = Senders::new(&c);
        assert_eq!(
            s.route(&c, 1, |_| Some(device(
                "Magic Mouse",
                APPLE_BLUETOOTH,
                0x0269
            ))),
            Route::Pass
        );
        assert_eq!(
            s.route(&c, 2, |_| Some(device(
                "Apple Internal Keyboard / Trackpad",
                APPLE_USB,
                0x0342
            ))),
            Route::Pass
        );
        let mut pad = device("Synaptics", 0x06cb, 0x0001);
        pad.is_touchpad = true;
        assert_eq!(s.route(&c, 3, |_| Some(pad)), Route::Pass);
    }

    #[test]
    fn unidentifiable_sender_uses_the_fallback_engine() {
        let c = Config::default_for(Platform::MacOs);
        let mut s = Senders::new(&c);
        assert_eq!(
            s.route(&c, 0, |_| unreachable!("ID 0 is never looked up")),
            Route::Fallback
        );
        assert_eq!(s.route(&c, 7, |_| None), Route::Fallback);
        assert!(s.engine(Senders::FALLBACK).profile().transform_scroll);
        let mut none = Config::default_for(Platform::MacOs);
        none.scope = Scope::None;
        assert!(
            !Senders::new(&none)
                .engine(Senders::FALLBACK)
                .profile()
                .transform_scroll
        );
    }

    #[test]
    fn cache_is_bounded() {
        let c = Config::default_for(Platform::MacOs);
        let mut s = Senders::new(&c);
        for id in 1..=200 {
            s.route(&c, id, |_| None);
        }
        assert!(s.cache.len() <= Senders::CAP);
    }
}
