//! Which path carries what, for one handled mouse: the one place the daemon decides it.
//!
//! A mouse's input reaches pawl by one of these paths:
//!
//! - **grab** ([`Carrier::Grab`], `grab.rs`): its evdev pointer node grabbed (`EVIOCGRAB`),
//!   every frame through the engine and written to its virtual device (the clone);
//! - **HID++** ([`Carrier::Hidpp`], `hidpp_path.rs`): a control diverted over hidraw
//!   (0x1B04 for the gesture button, CID 0x00C3 with raw XY; 0x2150 for the thumb
//!   wheel), its notifications read by pawl;
//! - **kernel mode** ([`Carrier::Bpf`], `kernel_path.rs`): pawl's HID-BPF program, attached
//!   to the mouse's HID device by the loader, transforms the wheel in the kernel and hands
//!   the gesture button's HID++ notifications to pawl on its ring; the pointer node is not
//!   grabbed (its motion and buttons are the kernel's node's), hidraw is open only to
//!   divert;
//! - or none: pawl leaves that part to the kernel's own node ([`Carrier::Kernel`]), which
//!   the compositor reads.
//!
//! [`decide`] takes what the config wants ([`Wants`]), what the mouse offers (its
//! handled pointer nodes, [`Pointer`], and its HID++ endpoint, [`Endpoint`]) and what the
//! running kernel offers ([`KernelOffers`]), and returns a [`Route`] with its reason
//! ([`Why`]) for every part: the gesture button, the other buttons, motion, the wheel,
//! the thumb wheel (AC Pan). The daemon applies the routes (grab or release a node, set
//! the thumb wheel's mode) and reports them (`pawl status`, `pawl devices`); nothing else
//! in the daemon decides a path.
//!
//! Kernel mode is used exactly when [`kernel_missing`] finds nothing missing: the config
//! allows it (`[hidpp] kernel_mode = "auto"`), the kernel has HID-BPF, the loader is
//! installed and attached the program to this mouse, HID++ is a path for it (the gesture
//! button comes as diverted notifications) and no mapped button needs the grab (the program
//! carries no plain button). [`Routes::mode`] says which mode the mouse runs in and why.

use pawl_engine::Config;
use pawl_hidpp::ThumbWheel;

/// What the config asks for, as far as paths go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wants {
    /// `[hidpp] enabled`.
    pub hidpp: bool,
    /// `[hidpp] thumb_wheel`.
    pub thumb_wheel: bool,
    /// A button other than the gesture button is mapped to an action
    /// ([`crate::hidpp::buttons_need_grab`]): only the grab sees it.
    pub buttons_need_grab: bool,
    /// `[hidpp] kernel_mode` is `"auto"` (not `"off"`).
    pub kernel_mode: bool,
}

impl Wants {
    /// What `config` asks for.
    pub fn of(config: &Config) -> Wants {
        Wants {
            hidpp: config.hidpp.enabled,
            thumb_wheel: config.hidpp.thumb_wheel,
            buttons_need_grab: crate::hidpp::buttons_need_grab(config),
            kernel_mode: config.hidpp.kernel_mode == pawl_engine::config::KernelMode::Auto,
        }
    }
}

/// One pointer node of the mouse that the config handles (`Config::decide` said
/// `handle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pointer {
    /// Its scroll is transformed (`DeviceDecision::transform_scroll`).
    pub transform_scroll: bool,
    /// It is grabbed and cloned now (not waiting for a button release, not a candidate).
    pub grabbed: bool,
}

/// The mouse's HID++ endpoint (`/dev/hidrawN` of the same HID device), as the daemon has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// The HID device has no MX Master HID++ interface (or pawl does not look: HID++ off).
    Absent,
    /// It has one, which pawl could not open (the node's permissions, usually).
    Failed,
    /// Open, its session in this state.
    Open(Session),
}

/// Where an open endpoint's HID++ session is (from `pawl_hidpp::Phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Session {
    /// Setup requests in progress (the gesture button is not diverted yet).
    SettingUp,
    /// Setup done, the gesture button diverted.
    Diverted,
    /// Setup done without the gesture button (the device has no such control).
    NotDiverted,
    /// The device does not answer (asleep, out of range); re-diverted when it returns.
    Offline,
    /// HID++ 1.0 only: nothing to divert.
    Unsupported,
}

/// What the running kernel (and the system's pawl install) offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelOffers {
    /// hidraw (`CONFIG_HIDRAW`: `/sys/class/hidraw` exists), which the HID++ path needs.
    pub hidraw: bool,
    /// HID-BPF (`struct hid_bpf_ops` in the kernel's BTF: 6.11+ with `CONFIG_HID_BPF`),
    /// which kernel mode needs.
    pub hid_bpf: bool,
    /// The kernel-mode loader is installed (`/usr/libexec/pawl/pawl-kernel-attach`), so a
    /// udev rule can attach the program.
    pub loader: bool,
}

/// Whether pawl's HID-BPF program is attached to this mouse's HID device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attachment {
    /// Its pins are under `/run/pawl/bpf/<HID>/` and pawl has (or can) open them.
    Attached,
    /// No pins for its HID device: the loader did not attach (udev rule not active, the
    /// device bound before it was installed, or the loader refused).
    NotAttached,
    /// Pins there, handed to another user: `uid` owns the pin directory (the loader gives
    /// it to seat0's active user when the mouse binds, and again on every change of that
    /// user: `pawl-kernel-reseat.path`). That user's pawl, not this one, runs kernel mode.
    OtherUser {
        /// The pin directory's owner.
        uid: u32,
    },
    /// Pins there and this user's, but pawl could not open them (not pawl's maps, or an
    /// error of the kernel's).
    Failed,
    /// The mouse is no HID device (uinput, PS/2): nothing to attach to.
    NoHidDevice,
}

/// Everything [`decide`] looks at, for one mouse.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    /// The config.
    pub wants: Wants,
    /// Its handled pointer nodes, in the daemon's order (possibly none: a mouse pawl knows
    /// only by its HID++ endpoint).
    pub pointers: &'a [Pointer],
    /// Its HID++ endpoint.
    pub endpoint: Endpoint,
    /// The kernel.
    pub kernel: KernelOffers,
    /// pawl's HID-BPF program on this mouse's HID device.
    pub attachment: Attachment,
}

/// A path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carrier {
    /// The evdev node grabbed, through the engine to the virtual device.
    Grab,
    /// A HID++ diversion on hidraw.
    Hidpp,
    /// Not pawl's: the kernel's own evdev node, as the compositor reads it.
    Kernel,
    /// Kernel mode: pawl's HID-BPF program on the mouse's HID device (the wheel transformed
    /// in the kernel, the gesture's HID++ notifications on its ring).
    Bpf,
}

impl Carrier {
    /// A stable name for scripts: `grab`, `hidpp`, `kernel`, `bpf`.
    pub fn code(self) -> &'static str {
        match self {
            Carrier::Grab => "grab",
            Carrier::Hidpp => "hidpp",
            Carrier::Kernel => "kernel",
            Carrier::Bpf => "bpf",
        }
    }
}

/// Why a part goes the way it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// Grabbed, through the engine to the virtual device.
    Grabbed,
    /// To be grabbed once no button of it is down (a press the compositor saw is released
    /// to it first).
    WaitingForRelease,
    /// Grabbed; while the gesture button is held its motion comes as HID++ raw XY, so the
    /// pointer stands still.
    RawXyWhileHeld,
    /// Grabbed, scroll transformed.
    ScrollTransformed,
    /// Grabbed, scroll passed through unchanged (the config does not transform it).
    ScrollPassedThrough,
    /// Not grabbed: HID++ carries the gesture button, the scroll is not transformed and no
    /// other button is mapped.
    HidppCarriesTheRest,
    /// The gesture button (CID 0x00C3) diverted over HID++, with raw XY while held.
    GestureDiverted,
    /// The thumb wheel (0x2150) diverted over HID++, its rotation through the grabbed
    /// node's engine into its virtual device.
    ThumbWheelDiverted,
    /// HID++ setup is in progress; until it ends the grab carries the gesture button.
    HidppSettingUp,
    /// The mouse does not answer HID++ now (asleep, out of range).
    HidppOffline,
    /// The device speaks HID++ 1.0 only.
    HidppUnsupported,
    /// HID++ setup ended without a gesture button to divert.
    HidppNoGestureButton,
    /// `[hidpp] enabled = false`.
    HidppOff,
    /// `[hidpp] thumb_wheel = false`: the kernel's `REL_HWHEEL`.
    ThumbWheelOff,
    /// No MX Master HID++ interface on this HID device.
    NoHidppInterface,
    /// The kernel has no hidraw.
    NoHidraw,
    /// Its HID++ endpoint could not be opened (see the endpoint's reason).
    HidppFailed,
    /// No pointer node of the mouse is grabbed with scroll transformed, so there is no
    /// virtual device for the diverted thumb wheel: it stays native.
    NoTransformedGrab,
    /// No pointer node of this mouse is handled (none, or the config leaves it alone).
    NoHandledPointer,
    /// Kernel mode: the program transforms it in the kernel (the kernel's node carries it).
    TransformedInKernel,
    /// Kernel mode: the kernel's node carries it unchanged (the program is attached for the
    /// gesture; this part is not pawl's).
    KernelMode,
    /// Kernel mode: the gesture button diverted over HID++ (hidraw open only for that),
    /// its notifications on the program's ring.
    GestureOnRing,
    /// Not kernel mode: `[hidpp] kernel_mode = "off"`.
    KernelModeOff,
    /// Not kernel mode: the kernel has no HID-BPF (6.11+ with `CONFIG_HID_BPF`).
    NoHidBpf,
    /// Not kernel mode: the loader (`/usr/libexec/pawl/pawl-kernel-attach`) is not
    /// installed.
    LoaderMissing,
    /// Not kernel mode: the loader did not attach the program to this mouse.
    NotAttached,
    /// Not kernel mode: the program's pins could not be opened.
    AttachmentFailed,
    /// Not kernel mode: the program's pins are another user's (the seat user when they
    /// were made).
    PinsOfAnotherUser,
    /// Not kernel mode: the mouse is no HID device.
    NotHid,
    /// Not kernel mode: HID++ is not a path for this mouse, and the program carries the
    /// gesture button only as HID++ notifications.
    KernelModeNeedsHidpp,
    /// Not kernel mode: a mapped button needs the grab (the program carries no plain
    /// button).
    ButtonsNeedGrab,
}

impl Why {
    /// A stable name for scripts, e.g. `hidpp-off`.
    pub fn code(self) -> &'static str {
        match self {
            Why::Grabbed => "grabbed",
            Why::WaitingForRelease => "waiting-for-release",
            Why::RawXyWhileHeld => "raw-xy-while-held",
            Why::ScrollTransformed => "scroll-transformed",
            Why::ScrollPassedThrough => "scroll-passed-through",
            Why::HidppCarriesTheRest => "hidpp-carries-the-rest",
            Why::GestureDiverted => "gesture-diverted",
            Why::ThumbWheelDiverted => "thumb-wheel-diverted",
            Why::HidppSettingUp => "hidpp-setting-up",
            Why::HidppOffline => "hidpp-offline",
            Why::HidppUnsupported => "hidpp-unsupported",
            Why::HidppNoGestureButton => "hidpp-no-gesture-button",
            Why::HidppOff => "hidpp-off",
            Why::ThumbWheelOff => "thumb-wheel-off",
            Why::NoHidppInterface => "no-hidpp-interface",
            Why::NoHidraw => "no-hidraw",
            Why::HidppFailed => "hidpp-failed",
            Why::NoTransformedGrab => "no-transformed-grab",
            Why::NoHandledPointer => "no-handled-pointer",
            Why::TransformedInKernel => "transformed-in-kernel",
            Why::KernelMode => "kernel-mode",
            Why::GestureOnRing => "gesture-on-ring",
            Why::KernelModeOff => "kernel-mode-off",
            Why::NoHidBpf => "no-hid-bpf",
            Why::LoaderMissing => "loader-missing",
            Why::NotAttached => "not-attached",
            Why::AttachmentFailed => "attachment-failed",
            Why::PinsOfAnotherUser => "pins-of-another-user",
            Why::NotHid => "not-hid",
            Why::KernelModeNeedsHidpp => "kernel-mode-needs-hidpp",
            Why::ButtonsNeedGrab => "buttons-need-grab",
        }
    }
}

/// Which path carries a part, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// The path.
    pub carrier: Carrier,
    /// The reason.
    pub why: Why,
}

const fn route(carrier: Carrier, why: Why) -> Route {
    Route { carrier, why }
}

/// The routes of one pointer node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerRoutes {
    /// Whether the node is to be grabbed (else released, or never opened).
    pub grab: bool,
    /// Its buttons other than the gesture button.
    pub buttons: Route,
    /// Its motion.
    pub motion: Route,
    /// Its wheel.
    pub wheel: Route,
}

/// Every route of one mouse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routes {
    /// Which mode the mouse runs in: [`Carrier::Bpf`] (kernel mode, [`Why::KernelMode`]),
    /// else [`Carrier::Grab`] when a pointer node is grabbed, [`Carrier::Hidpp`] when
    /// only HID++ is pawl's, [`Carrier::Kernel`] when nothing is; `why` then says why it is
    /// not kernel mode.
    pub mode: Route,
    /// The gesture button.
    pub gesture_button: Route,
    /// The thumb wheel (AC Pan, `REL_HWHEEL`).
    pub thumb_wheel: Route,
    /// What the HID++ session does with the thumb wheel (0x2150).
    pub thumb_mode: ThumbWheel,
    /// The pointer (index into [`Inputs::pointers`]) whose engine and virtual device take
    /// the diverted thumb wheel's rotation; `Some` exactly when `thumb_mode` is `Divert`.
    pub thumb_node: Option<usize>,
    /// Per pointer node, in [`Inputs::pointers`]' order.
    pub pointers: Vec<PointerRoutes>,
}

/// Why HID++ is not a path for this mouse, if it is not.
fn hidpp_missing(inputs: &Inputs) -> Option<Why> {
    if !inputs.wants.hidpp {
        Some(Why::HidppOff)
    } else if !inputs.kernel.hidraw {
        Some(Why::NoHidraw)
    } else {
        match inputs.endpoint {
            Endpoint::Absent => Some(Why::NoHidppInterface),
            Endpoint::Failed => Some(Why::HidppFailed),
            Endpoint::Open(_) => None,
        }
    }
}

/// Why kernel mode is not the path for this mouse, if it is not (checked in this order:
/// config, kernel, install, attachment, HID++, mapped buttons).
pub fn kernel_missing(inputs: &Inputs) -> Option<Why> {
    if !inputs.wants.kernel_mode {
        return Some(Why::KernelModeOff);
    }
    if !inputs.kernel.hid_bpf {
        return Some(Why::NoHidBpf);
    }
    match inputs.attachment {
        Attachment::NoHidDevice => return Some(Why::NotHid),
        Attachment::Failed => return Some(Why::AttachmentFailed),
        Attachment::OtherUser { .. } => return Some(Why::PinsOfAnotherUser),
        Attachment::NotAttached if !inputs.kernel.loader => return Some(Why::LoaderMissing),
        Attachment::NotAttached => return Some(Why::NotAttached),
        Attachment::Attached => {}
    }
    if hidpp_missing(inputs).is_some() {
        return Some(Why::KernelModeNeedsHidpp);
    }
    if inputs.wants.buttons_need_grab {
        return Some(Why::ButtonsNeedGrab);
    }
    None
}

/// The routes in kernel mode: no node grabbed; the wheel (and the thumb wheel, AC Pan in
/// the mouse report, left native) transformed by the program when the config transforms
/// the node's scroll; the gesture button through the ring once diverted.
fn decide_kernel(inputs: &Inputs) -> Routes {
    let not = route(Carrier::Kernel, Why::KernelMode);
    let pointers: Vec<PointerRoutes> = inputs
        .pointers
        .iter()
        .map(|p| PointerRoutes {
            grab: false,
            buttons: not,
            motion: not,
            wheel: if p.transform_scroll {
                route(Carrier::Bpf, Why::TransformedInKernel)
            } else {
                not
            },
        })
        .collect();
    let gesture_button = match inputs.endpoint {
        Endpoint::Open(Session::Diverted) => route(Carrier::Bpf, Why::GestureOnRing),
        Endpoint::Open(s) => route(
            Carrier::Kernel,
            match s {
                Session::SettingUp => Why::HidppSettingUp,
                Session::Offline => Why::HidppOffline,
                Session::Unsupported => Why::HidppUnsupported,
                Session::NotDiverted | Session::Diverted => Why::HidppNoGestureButton,
            },
        ),
        Endpoint::Absent | Endpoint::Failed => route(Carrier::Kernel, Why::KernelModeNeedsHidpp),
    };
    let thumb_wheel = if inputs.pointers.iter().any(|p| p.transform_scroll) {
        route(Carrier::Bpf, Why::TransformedInKernel)
    } else if inputs.pointers.is_empty() {
        route(Carrier::Kernel, Why::NoHandledPointer)
    } else {
        not
    };
    Routes {
        mode: route(Carrier::Bpf, Why::KernelMode),
        gesture_button,
        thumb_wheel,
        thumb_mode: if inputs.wants.thumb_wheel {
            ThumbWheel::Native
        } else {
            ThumbWheel::Leave
        },
        thumb_node: None,
        pointers,
    }
}

/// Whether `routes` are kernel mode's.
pub fn is_kernel_mode(routes: &Routes) -> bool {
    routes.mode.carrier == Carrier::Bpf
}

/// Decides which path carries each part of one mouse (see the module docs).
///
/// The rules, as the daemon has always applied them:
/// - a handled pointer node is grabbed unless an open HID++ endpoint carries its gesture
///   button and nothing else needs the grab (its scroll not transformed, no other button
///   mapped);
/// - the gesture button goes through HID++ once the session diverted it, else through the
///   grab;
/// - the thumb wheel is diverted over HID++ (with `[hidpp] thumb_wheel`) while a pointer
///   node of the mouse is grabbed with scroll transformed — its rotation goes through that
///   node's engine into its clone — and native otherwise (`REL_HWHEEL` from the kernel,
///   through the grab when the node is grabbed);
/// - kernel mode ([`decide_kernel`]) replaces all of this when nothing it needs is
///   missing ([`kernel_missing`]).
pub fn decide(inputs: &Inputs) -> Routes {
    let Some(not_kernel) = kernel_missing(inputs) else {
        return decide_kernel(inputs);
    };
    let missing = hidpp_missing(inputs);
    let open = missing.is_none();
    let session = match inputs.endpoint {
        Endpoint::Open(s) if open => Some(s),
        _ => None,
    };
    let gesture_hidpp = session == Some(Session::Diverted);
    let pointers: Vec<PointerRoutes> = inputs
        .pointers
        .iter()
        .map(|p| pointer_routes(p, open, inputs.wants.buttons_need_grab, gesture_hidpp))
        .collect();
    let any_grab = pointers.iter().any(|p| p.grab);
    let gesture_button = gesture_button_route(session, missing, any_grab);
    let (thumb_wheel, thumb_mode, thumb_node) = thumb_wheel_route(inputs, &pointers, missing);
    let mode = if any_grab {
        Carrier::Grab
    } else if open {
        Carrier::Hidpp
    } else {
        Carrier::Kernel
    };
    Routes {
        mode: route(mode, not_kernel),
        gesture_button,
        thumb_wheel,
        thumb_mode,
        thumb_node,
        pointers,
    }
}

/// Where one handled pointer node's buttons, motion and wheel go in grab mode: `open` is
/// an open HID++ endpoint with nothing missing, `gesture_hidpp` its gesture button
/// diverted.
fn pointer_routes(
    p: &Pointer,
    open: bool,
    buttons_need_grab: bool,
    gesture_hidpp: bool,
) -> PointerRoutes {
    let grab = !(open && !p.transform_scroll && !buttons_need_grab);
    if !grab {
        let not = route(Carrier::Kernel, Why::HidppCarriesTheRest);
        return PointerRoutes {
            grab,
            buttons: not,
            motion: not,
            wheel: not,
        };
    }
    let grabbed = if p.grabbed {
        Why::Grabbed
    } else {
        Why::WaitingForRelease
    };
    let wheel = match (p.grabbed, p.transform_scroll) {
        (false, _) => Why::WaitingForRelease,
        (true, true) => Why::ScrollTransformed,
        (true, false) => Why::ScrollPassedThrough,
    };
    let motion = if gesture_hidpp && p.grabbed {
        Why::RawXyWhileHeld
    } else {
        grabbed
    };
    PointerRoutes {
        grab,
        buttons: route(Carrier::Grab, grabbed),
        motion: route(Carrier::Grab, motion),
        wheel: route(Carrier::Grab, wheel),
    }
}

/// Where the gesture button goes: HID++ once the session diverted it, else the grab when
/// any node is grabbed, else the kernel. `missing` is why HID++ is not open, if it is not.
fn gesture_button_route(session: Option<Session>, missing: Option<Why>, any_grab: bool) -> Route {
    match (session, missing) {
        (Some(Session::Diverted), _) => route(Carrier::Hidpp, Why::GestureDiverted),
        (Some(s), _) => {
            let why = match s {
                Session::SettingUp => Why::HidppSettingUp,
                Session::Offline => Why::HidppOffline,
                Session::Unsupported => Why::HidppUnsupported,
                Session::NotDiverted | Session::Diverted => Why::HidppNoGestureButton,
            };
            let carrier = if any_grab {
                Carrier::Grab
            } else {
                Carrier::Kernel
            };
            route(carrier, why)
        }
        (None, Some(why)) if any_grab => route(Carrier::Grab, why),
        (None, _) => route(Carrier::Kernel, Why::NoHandledPointer),
    }
}

/// The thumb wheel's route, the mode to ask of the session, and the index of the pointer
/// node whose engine takes its rotation: diverted while a node is grabbed with scroll
/// transformed (and HID++ is open with `[hidpp] thumb_wheel`), native otherwise.
fn thumb_wheel_route(
    inputs: &Inputs,
    pointers: &[PointerRoutes],
    missing: Option<Why>,
) -> (Route, ThumbWheel, Option<usize>) {
    let open = missing.is_none();
    let thumb_node = (open && inputs.wants.thumb_wheel)
        .then(|| {
            inputs
                .pointers
                .iter()
                .position(|p| p.grabbed && p.transform_scroll)
        })
        .flatten();
    let thumb_mode = match (inputs.wants.thumb_wheel, thumb_node) {
        (false, _) => ThumbWheel::Leave,
        (true, None) => ThumbWheel::Native,
        (true, Some(_)) => ThumbWheel::Divert,
    };
    let thumb_wheel = if thumb_node.is_some() {
        route(Carrier::Hidpp, Why::ThumbWheelDiverted)
    } else {
        let why = match missing {
            Some(why) => why,
            None if !inputs.wants.thumb_wheel => Why::ThumbWheelOff,
            None => Why::NoTransformedGrab,
        };
        match inputs.pointers.iter().zip(pointers).find(|(_, r)| r.grab) {
            Some((p, _)) if !p.grabbed => route(Carrier::Grab, Why::WaitingForRelease),
            Some(_) => route(Carrier::Grab, why),
            None if inputs.pointers.is_empty() => route(Carrier::Kernel, Why::NoHandledPointer),
            None => route(Carrier::Kernel, Why::HidppCarriesTheRest),
        }
    };
    (thumb_wheel, thumb_mode, thumb_node)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: Wants = Wants {
        hidpp: true,
        thumb_wheel: true,
        buttons_need_grab: false,
        kernel_mode: true,
    };
    const HIDRAW: KernelOffers = KernelOffers {
        hidraw: true,
        hid_bpf: false,
        loader: false,
    };
    const HID_BPF: KernelOffers = KernelOffers {
        hidraw: true,
        hid_bpf: true,
        loader: true,
    };
    const TRANSFORMED: Pointer = Pointer {
        transform_scroll: true,
        grabbed: true,
    };
    const NOT_TRANSFORMED: Pointer = Pointer {
        transform_scroll: false,
        grabbed: true,
    };

    fn decide_for(wants: Wants, pointers: &[Pointer], endpoint: Endpoint) -> Routes {
        decide(&Inputs {
            wants,
            pointers,
            endpoint,
            kernel: HIDRAW,
            attachment: Attachment::NotAttached,
        })
    }

    fn decide_attached(wants: Wants, pointers: &[Pointer], endpoint: Endpoint) -> Routes {
        decide(&Inputs {
            wants,
            pointers,
            endpoint,
            kernel: HID_BPF,
            attachment: Attachment::Attached,
        })
    }

    #[test]
    fn an_attached_mx_master_runs_kernel_mode_ungrabbed_with_the_wheel_in_the_kernel() {
        let r = decide_attached(DEFAULTS, &[TRANSFORMED], Endpoint::Open(Session::Diverted));
        assert!(is_kernel_mode(&r));
        assert_eq!(r.mode, route(Carrier::Bpf, Why::KernelMode));
        assert!(!r.pointers[0].grab, "kernel mode grabs nothing");
        assert_eq!(
            r.pointers[0].motion,
            route(Carrier::Kernel, Why::KernelMode)
        );
        assert_eq!(
            r.pointers[0].buttons,
            route(Carrier::Kernel, Why::KernelMode)
        );
        assert_eq!(
            r.pointers[0].wheel,
            route(Carrier::Bpf, Why::TransformedInKernel)
        );
        assert_eq!(r.gesture_button, route(Carrier::Bpf, Why::GestureOnRing));
        // The thumb wheel stays native: its AC Pan is in the mouse report the program
        // transforms; no clone to divert it into.
        assert_eq!(r.thumb_mode, ThumbWheel::Native);
        assert_eq!(r.thumb_node, None);
        assert_eq!(r.thumb_wheel, route(Carrier::Bpf, Why::TransformedInKernel));
        // Setting up: still ungrabbed, the gesture button not carried yet.
        let r = decide_attached(DEFAULTS, &[TRANSFORMED], Endpoint::Open(Session::SettingUp));
        assert!(is_kernel_mode(&r) && !r.pointers[0].grab);
        assert_eq!(
            r.gesture_button,
            route(Carrier::Kernel, Why::HidppSettingUp)
        );
        // Scroll not transformed by the config: the wheel is the kernel's own.
        let r = decide_attached(
            DEFAULTS,
            &[NOT_TRANSFORMED],
            Endpoint::Open(Session::Diverted),
        );
        assert_eq!(r.pointers[0].wheel, route(Carrier::Kernel, Why::KernelMode));
    }

    #[test]
    fn kernel_mode_falls_back_to_grab_mode_and_names_what_is_missing() {
        let mode = |wants: Wants, kernel: KernelOffers, attachment, endpoint| {
            let r = decide(&Inputs {
                wants,
                pointers: &[TRANSFORMED],
                endpoint,
                kernel,
                attachment,
            });
            assert!(r.pointers[0].grab, "{r:?}");
            r.mode
        };
        let open = Endpoint::Open(Session::Diverted);
        let grab = |why| route(Carrier::Grab, why);
        let off = Wants {
            kernel_mode: false,
            ..DEFAULTS
        };
        assert_eq!(
            mode(off, HID_BPF, Attachment::Attached, open),
            grab(Why::KernelModeOff)
        );
        assert_eq!(
            mode(DEFAULTS, HIDRAW, Attachment::NotAttached, open),
            grab(Why::NoHidBpf)
        );
        let no_loader = KernelOffers {
            loader: false,
            ..HID_BPF
        };
        assert_eq!(
            mode(DEFAULTS, no_loader, Attachment::NotAttached, open),
            grab(Why::LoaderMissing)
        );
        assert_eq!(
            mode(DEFAULTS, HID_BPF, Attachment::NotAttached, open),
            grab(Why::NotAttached)
        );
        assert_eq!(
            mode(DEFAULTS, HID_BPF, Attachment::Failed, open),
            grab(Why::AttachmentFailed)
        );
        assert_eq!(
            mode(DEFAULTS, HID_BPF, Attachment::OtherUser { uid: 1001 }, open),
            grab(Why::PinsOfAnotherUser)
        );
        assert_eq!(
            mode(DEFAULTS, HID_BPF, Attachment::NoHidDevice, open),
            grab(Why::NotHid)
        );
        let no_hidpp = Wants {
            hidpp: false,
            ..DEFAULTS
        };
        assert_eq!(
            mode(no_hidpp, HID_BPF, Attachment::Attached, open),
            grab(Why::KernelModeNeedsHidpp)
        );
        assert_eq!(
            mode(DEFAULTS, HID_BPF, Attachment::Attached, Endpoint::Failed),
            grab(Why::KernelModeNeedsHidpp)
        );
        let mapped = Wants {
            buttons_need_grab: true,
            ..DEFAULTS
        };
        assert_eq!(
            mode(mapped, HID_BPF, Attachment::Attached, open),
            grab(Why::ButtonsNeedGrab)
        );
    }

    #[test]
    fn an_mx_master_with_scroll_transformed_is_grabbed_and_hidpp_takes_gesture_and_thumb_wheel() {
        let r = decide_for(DEFAULTS, &[TRANSFORMED], Endpoint::Open(Session::Diverted));
        assert!(r.pointers[0].grab);
        assert_eq!(
            r.gesture_button,
            route(Carrier::Hidpp, Why::GestureDiverted)
        );
        assert_eq!(
            r.pointers[0].motion,
            route(Carrier::Grab, Why::RawXyWhileHeld)
        );
        assert_eq!(
            r.pointers[0].wheel,
            route(Carrier::Grab, Why::ScrollTransformed)
        );
        assert_eq!(r.thumb_mode, ThumbWheel::Divert);
        assert_eq!(r.thumb_node, Some(0));
        assert_eq!(
            r.thumb_wheel,
            route(Carrier::Hidpp, Why::ThumbWheelDiverted)
        );
    }

    #[test]
    fn hidpp_carrying_the_gesture_button_spares_the_grab_when_nothing_else_needs_it() {
        let r = decide_for(
            DEFAULTS,
            &[NOT_TRANSFORMED],
            Endpoint::Open(Session::SettingUp),
        );
        // Not grabbed as soon as the endpoint is open, setup or not (as before).
        assert!(!r.pointers[0].grab);
        assert_eq!(
            r.pointers[0].buttons,
            route(Carrier::Kernel, Why::HidppCarriesTheRest)
        );
        assert_eq!(
            r.gesture_button,
            route(Carrier::Kernel, Why::HidppSettingUp)
        );
        // No clone to write a diverted thumb wheel to: native, from the kernel.
        assert_eq!(r.thumb_mode, ThumbWheel::Native);
        assert_eq!(r.thumb_node, None);
        assert_eq!(
            r.thumb_wheel.carrier,
            Carrier::Kernel,
            "{:?}",
            r.thumb_wheel
        );
    }

    #[test]
    fn a_mapped_button_keeps_the_grab_though_hidpp_carries_the_gesture_button() {
        let wants = Wants {
            buttons_need_grab: true,
            ..DEFAULTS
        };
        let r = decide_for(wants, &[NOT_TRANSFORMED], Endpoint::Open(Session::Diverted));
        assert!(r.pointers[0].grab);
        assert_eq!(r.pointers[0].buttons, route(Carrier::Grab, Why::Grabbed));
        assert_eq!(
            r.pointers[0].wheel,
            route(Carrier::Grab, Why::ScrollPassedThrough)
        );
        // Grabbed but scroll not transformed: the thumb wheel stays native, via the grab.
        assert_eq!(r.thumb_mode, ThumbWheel::Native);
        assert_eq!(r.thumb_wheel, route(Carrier::Grab, Why::NoTransformedGrab));
    }

    #[test]
    fn hidpp_off_in_the_config_leaves_everything_to_the_grab_and_says_so() {
        let wants = Wants {
            hidpp: false,
            ..DEFAULTS
        };
        // Even an endpoint reported open is not used with HID++ off.
        for endpoint in [Endpoint::Absent, Endpoint::Open(Session::Diverted)] {
            let r = decide_for(wants, &[NOT_TRANSFORMED], endpoint);
            assert!(r.pointers[0].grab);
            assert_eq!(r.gesture_button, route(Carrier::Grab, Why::HidppOff));
            assert_eq!(r.thumb_wheel, route(Carrier::Grab, Why::HidppOff));
            assert_eq!(r.thumb_node, None);
        }
    }

    #[test]
    fn the_reason_hidpp_is_not_used_names_what_is_missing() {
        let without = |endpoint, kernel| {
            decide(&Inputs {
                wants: DEFAULTS,
                pointers: &[TRANSFORMED],
                endpoint,
                kernel,
                attachment: Attachment::NotAttached,
            })
            .gesture_button
        };
        assert_eq!(
            without(Endpoint::Absent, HIDRAW),
            route(Carrier::Grab, Why::NoHidppInterface)
        );
        assert_eq!(
            without(Endpoint::Failed, HIDRAW),
            route(Carrier::Grab, Why::HidppFailed)
        );
        assert_eq!(
            without(
                Endpoint::Absent,
                KernelOffers {
                    hidraw: false,
                    ..HIDRAW
                }
            ),
            route(Carrier::Grab, Why::NoHidraw)
        );
        assert_eq!(
            without(Endpoint::Open(Session::Offline), HIDRAW),
            route(Carrier::Grab, Why::HidppOffline)
        );
        assert_eq!(
            without(Endpoint::Open(Session::Unsupported), HIDRAW),
            route(Carrier::Grab, Why::HidppUnsupported)
        );
    }

    #[test]
    fn thumb_wheel_off_is_left_to_the_device_and_the_grab() {
        let wants = Wants {
            thumb_wheel: false,
            ..DEFAULTS
        };
        let r = decide_for(wants, &[TRANSFORMED], Endpoint::Open(Session::Diverted));
        assert_eq!(r.thumb_mode, ThumbWheel::Leave);
        assert_eq!(r.thumb_node, None);
        assert_eq!(r.thumb_wheel, route(Carrier::Grab, Why::ThumbWheelOff));
    }

    #[test]
    fn a_node_waiting_for_a_release_gets_no_thumb_wheel_until_it_is_grabbed() {
        let waiting = Pointer {
            grabbed: false,
            ..TRANSFORMED
        };
        let r = decide_for(DEFAULTS, &[waiting], Endpoint::Open(Session::Diverted));
        assert!(r.pointers[0].grab);
        assert_eq!(
            r.pointers[0].wheel,
            route(Carrier::Grab, Why::WaitingForRelease)
        );
        assert_eq!(r.thumb_mode, ThumbWheel::Native);
        assert_eq!(r.thumb_wheel, route(Carrier::Grab, Why::WaitingForRelease));
        // The second node, grabbed with scroll transformed, takes it.
        let r = decide_for(
            DEFAULTS,
            &[waiting, TRANSFORMED],
            Endpoint::Open(Session::Diverted),
        );
        assert_eq!(r.thumb_node, Some(1));
        assert_eq!(r.thumb_mode, ThumbWheel::Divert);
    }

    #[test]
    fn a_mouse_known_only_by_its_endpoint_has_hidpp_for_the_gesture_and_nothing_else() {
        let r = decide_for(DEFAULTS, &[], Endpoint::Open(Session::Diverted));
        assert_eq!(
            r.gesture_button,
            route(Carrier::Hidpp, Why::GestureDiverted)
        );
        assert!(r.pointers.is_empty());
        assert_eq!(r.thumb_mode, ThumbWheel::Native);
        assert_eq!(r.thumb_wheel, route(Carrier::Kernel, Why::NoHandledPointer));
        let r = decide_for(DEFAULTS, &[], Endpoint::Failed);
        assert_eq!(
            r.gesture_button,
            route(Carrier::Kernel, Why::NoHandledPointer)
        );
    }

    #[test]
    fn every_reason_has_its_own_code() {
        let all = [
            Why::Grabbed,
            Why::WaitingForRelease,
            Why::RawXyWhileHeld,
            Why::ScrollTransformed,
            Why::ScrollPassedThrough,
            Why::HidppCarriesTheRest,
            Why::GestureDiverted,
            Why::ThumbWheelDiverted,
            Why::HidppSettingUp,
            Why::HidppOffline,
            Why::HidppUnsupported,
            Why::HidppNoGestureButton,
            Why::HidppOff,
            Why::ThumbWheelOff,
            Why::NoHidppInterface,
            Why::NoHidraw,
            Why::HidppFailed,
            Why::NoTransformedGrab,
            Why::NoHandledPointer,
            Why::TransformedInKernel,
            Why::KernelMode,
            Why::GestureOnRing,
            Why::KernelModeOff,
            Why::NoHidBpf,
            Why::LoaderMissing,
            Why::NotAttached,
            Why::AttachmentFailed,
            Why::PinsOfAnotherUser,
            Why::NotHid,
            Why::KernelModeNeedsHidpp,
            Why::ButtonsNeedGrab,
        ];
        let mut codes: Vec<&str> = all.iter().map(|w| w.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
    }
}
