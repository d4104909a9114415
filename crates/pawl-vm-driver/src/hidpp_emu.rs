//! The HID++ side of an emulated MX Master 3S: the uhid mouse built from the real Bluetooth
//! descriptor (which declares HID++ long report 0x11, so its hidraw node carries HID++),
//! with `pawl_hidpp::emulator::Emulator` answering on the uhid device's own thread (see
//! [`crate::uhid::Responder`]):
//! - the kernel's hid-logitech-hidpp (bound to 0005:046d:b034 as on a user's machine) sends
//!   HID++ as `UHID_SET_REPORT` — its probe (ping, 0x0005 name, 0x1D4B, 0x1004 battery,
//!   0x2121 capability and setWheelMode) and its reconnect work; the reply comes first
//!   (`UHID_SET_REPORT_REPLY`, error 0), then the HID++ answer as `UHID_INPUT2` of the exact
//!   report size;
//! - pawl's hidraw writes arrive as `UHID_OUTPUT` (uhid has an output_report hook) and are
//!   answered the same way.
//!
//! Both are logged apart ([`HidppState::kernel`], [`HidppState::pawl`]). The scenario sends
//! the notifications a diverted gesture button, raw-XY motion and a diverted thumb wheel
//! produce through [`crate::hidpp_mouse::HidppMouse`] (a native thumb wheel turn is an AC
//! Pan count in the mouse report).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use pawl_hidpp::emulator::Emulator;
use pawl_hidpp::report::{Framing, Message};

use crate::uhid::{EIO, Responder};

/// The Bluetooth descriptor's HID++ reports: long only.
pub const BLUETOOTH: Framing = Framing {
    short: false,
    long: true,
};

/// The device model and what it was asked, shared by the uhid device's thread and the
/// scenario.
#[derive(Debug)]
pub struct HidppState {
    /// The device model.
    pub emu: Emulator,
    /// Every HID++ request the kernel's driver sent (`UHID_SET_REPORT`), in order.
    pub kernel: Vec<Message>,
    /// Every HID++ request pawl wrote to hidraw (`UHID_OUTPUT`), in order.
    pub pawl: Vec<Message>,
    /// When the last request of either arrived.
    pub last: Instant,
}

/// [`HidppState`] behind a lock.
#[derive(Clone, Debug)]
pub struct HidppShared(Arc<Mutex<HidppState>>);

impl HidppShared {
    /// The state, locked (a panicked holder does not poison it for the others).
    pub fn lock(&self) -> MutexGuard<'_, HidppState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `emu`, fresh, shared between the uhid thread and the scenario.
pub fn shared(emu: Emulator) -> HidppShared {
    HidppShared(Arc::new(Mutex::new(HidppState {
        emu,
        kernel: Vec::new(),
        pawl: Vec::new(),
        last: Instant::now(),
    })))
}

/// The uhid responder answering from `shared`.
pub fn responder(shared: HidppShared) -> Box<dyn Responder> {
    Box::new(Answer(shared))
}

struct Answer(HidppShared);

impl Answer {
    fn answer(&self, data: &[u8], from_kernel: bool) -> Vec<Vec<u8>> {
        let Some(m) = Message::parse(data) else {
            return Vec::new();
        };
        let mut st = self.0.lock();
        st.last = Instant::now();
        if from_kernel {
            st.kernel.push(m);
        } else {
            st.pawl.push(m);
        }
        st.emu
            .answer(data)
            .map(|reply| {
                let (bytes, len) = reply.encode();
                vec![bytes[..len].to_vec()]
            })
            .unwrap_or_default()
    }
}

impl Responder for Answer {
    fn set_report(&mut self, _rnum: u8, _rtype: u8, data: &[u8]) -> (u16, Vec<Vec<u8>>) {
        (0, self.answer(data, true))
    }

    fn get_report(&mut self, _rnum: u8, _rtype: u8) -> (u16, Vec<u8>) {
        // The MX Master has no feature reports; nothing in the driver asks for one.
        (EIO, Vec::new())
    }

    fn output(&mut self, data: &[u8]) -> Vec<Vec<u8>> {
        self.answer(data, false)
    }
}
