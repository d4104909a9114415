//! An emulated Logitech Unifying receiver (046d:c52b) with an MX Master 3 (wireless PID
//! 4082) paired in slot 1, as the kernel's hid-logitech-dj sees a real one. Specification
//! and sources: `../shared/notes/unifying-receiver.md` (Debian 6.1 `hid-logitech-dj.c`,
//! `hid-logitech-hidpp.c`, `uhid.c`; Solaar's records and captures).
//!
//! - Only the receiver's HID++/DJ interface (interface 2) is created, with the real
//!   receiver's 93-byte descriptor (reports 0x10, 0x11 HID++, 0x20, 0x21 DJ), bus USB, phys
//!   `…/input2`: hid-logitech-dj binds it (its alias `hid:b0003g*v0000046Dp0000C52B`).
//! - The driver's requests arrive as `UHID_SET_REPORT` on the uhid device's own thread
//!   ([`crate::uhid::Responder`]): the switch to DJ mode (`20 ff 80 3f …`), the register 0x00
//!   write (notifications on, answered as a HID++ 1.0 register write is), the paired-device
//!   query (`20 ff 81 …`), answered with the DJ 0x41 notification for slot 1 (report types
//!   keyboard + mouse, as a real MX Master 3 pairs), after which the driver creates the child
//!   HID device (bus USB, 046d:4082, group 0x0102, phys `…/input2:1`), bound by
//!   hid-logitech-hidpp.
//! - The child's probe: long register 0xB5 reads on the receiver (`10 ff 83 b5 30` serial,
//!   `… 40` name, with the answers Solaar's tests hold), then HID++ 2.0 for device index 1,
//!   answered by the MX Master 3 model (`pawl_hidpp::emulator`, Solaar's 4082 record).
//!   pawl's writes to the child's hidraw arrive the same way (hid-logitech-dj has no output
//!   hook: `logi_dj_ll_raw_request` sends them as SET_REPORT with byte 1 set to the index).
//! - Mouse input is a DJ report `20 01 02 …` (buttons, 12-bit X/Y, wheel, AC Pan), which
//!   the driver hands to the child as its report 2; HID++ from the device is `10 01 …` /
//!   `11 01 …` on the receiver, delivered to the child.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::Context;
use pawl_evdev::codes::{EV_REL, REL_X};
use pawl_hidpp::emulator::Emulator;
use pawl_hidpp::report::{Framing, Message, SOFTWARE_ID_DAEMON, SOFTWARE_ID_QUERY};

use crate::evdev::{self, NodeInfo};
use crate::hid::{MX_MASTER_3S_BT, MouseReport};
use crate::uhid::{BUS_USB, EIO, Responder, UhidDevice, UhidSpec};

/// The real Unifying receiver's interface-2 report descriptor (a `usbhid-dump` of a c52b;
/// a Bolt c548's interface 2 is byte-identical): vendor page 0xff00, reports 0x10 (6
/// bytes), 0x11 (19), 0x20 (14, usage 0x41), 0x21 (31, usage 0x42), input and output each.
pub const RECEIVER_RDESC: [u8; 93] = [
    0x06, 0x00, 0xff, 0x09, 0x01, 0xa1, 0x01, 0x85, 0x10, 0x95, 0x06, 0x75, 0x08, 0x15, 0x00, 0x26,
    0xff, 0x00, 0x09, 0x01, 0x81, 0x00, 0x09, 0x01, 0x91, 0x00, 0xc0, 0x06, 0x00, 0xff, 0x09, 0x02,
    0xa1, 0x01, 0x85, 0x11, 0x95, 0x13, 0x75, 0x08, 0x15, 0x00, 0x26, 0xff, 0x00, 0x09, 0x02, 0x81,
    0x00, 0x09, 0x02, 0x91, 0x00, 0xc0, 0x06, 0x00, 0xff, 0x09, 0x04, 0xa1, 0x01, 0x85, 0x20, 0x95,
    0x0e, 0x75, 0x08, 0x15, 0x00, 0x26, 0xff, 0x00, 0x09, 0x41, 0x81, 0x00, 0x09, 0x41, 0x91, 0x00,
    0x85, 0x21, 0x95, 0x1f, 0x09, 0x42, 0x81, 0x00, 0x09, 0x42, 0x91, 0x00, 0xc0,
];

/// The paired mouse's slot (device index).
pub const SLOT: u8 = 1;
/// The paired mouse's wireless PID.
pub const WPID: u16 = 0x4082;

/// HID++ short and long reports on the receiver.
const RECEIVER: Framing = Framing {
    short: true,
    long: true,
};

/// `REPORT_ID_DJ_SHORT` and its size (dj:1717–1741).
const DJ_SHORT: u8 = 0x20;
const DJ_SHORT_LEN: usize = 15;
/// DJ report types the driver sends (dj: `REPORT_TYPE_CMD_SWITCH`, `…_CMD_GET_PAIRED_DEVICES`).
const CMD_SWITCH: u8 = 0x80;
const CMD_GET_PAIRED_DEVICES: u8 = 0x81;
/// DJ notification: device paired (dj `REPORT_TYPE_NOTIF_DEVICE_PAIRED`).
const NOTIF_DEVICE_PAIRED: u8 = 0x41;
/// DJ report type of mouse input (`REPORT_TYPE_MOUSE`).
const REPORT_TYPE_MOUSE: u8 = 0x02;
/// The receiver's own HID++ device index.
const RECEIVER_INDEX: u8 = 0xff;

/// What the receiver was asked.
#[derive(Debug)]
pub struct ReceiverState {
    /// The paired mouse.
    pub emu: Emulator,
    /// The driver switched the receiver to DJ mode.
    pub dj_mode: bool,
    /// The driver asked for the paired devices (and got slot 1's notification).
    pub paired_query: bool,
    /// Receiver register reads and writes (sub id, address, first parameter).
    pub registers: Vec<(u8, u8, u8)>,
    /// HID++ requests for the mouse from the kernel (software id 0 or 1).
    pub kernel: Vec<Message>,
    /// HID++ requests for the mouse from pawl (its software ids).
    pub pawl: Vec<Message>,
    /// When the last request arrived.
    pub last: Instant,
}

/// An emulated Unifying receiver with its paired MX Master 3; destroyed when dropped.
#[derive(Debug)]
pub struct UnifyingReceiver {
    dev: UhidDevice,
    state: Arc<Mutex<ReceiverState>>,
    buttons: u16,
}

struct Answer(Arc<Mutex<ReceiverState>>);

fn lock(m: &Mutex<ReceiverState>) -> MutexGuard<'_, ReceiverState> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Answer {
    fn hidpp(&self, data: &[u8]) -> Vec<Vec<u8>> {
        let mut st = lock(&self.0);
        st.last = Instant::now();
        if data.len() >= 4 && data[1] == RECEIVER_INDEX {
            return receiver_register(&mut st, data).into_iter().collect();
        }
        let Some(m) = Message::parse(data) else {
            return Vec::new();
        };
        if matches!(m.sw_id(), SOFTWARE_ID_DAEMON | SOFTWARE_ID_QUERY) {
            st.pawl.push(m);
        } else {
            st.kernel.push(m);
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

/// The receiver's answer to a HID++ 1.0 register access (`10 ff <sub id> <address> …`).
fn receiver_register(st: &mut ReceiverState, data: &[u8]) -> Option<Vec<u8>> {
    let (sub_id, address, p0) = (data[2], data[3], data.get(4).copied().unwrap_or(0));
    st.registers.push((sub_id, address, p0));
    match (sub_id, address, p0) {
        // Set / get short register: echoed with no data.
        (0x80 | 0x81, _, _) => Some(vec![0x10, RECEIVER_INDEX, sub_id, address, 0, 0, 0]),
        // Long register 0xB5 0x30 + slot − 1: pairing info, serial (Solaar
        // tests/logitech_receiver/test_receiver.py).
        (0x83, 0xB5, 0x30) => {
            let mut r = vec![0x11, RECEIVER_INDEX, 0x83, 0xB5, 0x30];
            r.extend_from_slice(&[0x19, 0x8e, 0x3e, 0xb8, 0x06, 0, 0, 0, 0x01]);
            r.resize(20, 0);
            Some(r)
        }
        // 0xB5 0x40 + slot − 1: the device name, length first.
        (0x83, 0xB5, 0x40) => {
            let name = b"MX Master 3";
            let mut r = vec![0x11, RECEIVER_INDEX, 0x83, 0xB5, 0x40, name.len() as u8];
            r.extend_from_slice(name);
            r.resize(20, 0);
            Some(r)
        }
        // Anything else: HID++ 1.0 error 0x02 (invalid address).
        _ => Some(vec![0x10, RECEIVER_INDEX, 0x8F, sub_id, address, 0x02, 0]),
    }
}

impl Responder for Answer {
    fn set_report(&mut self, _rnum: u8, _rtype: u8, data: &[u8]) -> (u16, Vec<Vec<u8>>) {
        match data.first() {
            Some(&DJ_SHORT) if data.len() >= 3 && data[1] == RECEIVER_INDEX => {
                let mut st = lock(&self.0);
                st.last = Instant::now();
                match data[2] {
                    CMD_SWITCH => {
                        st.dj_mode = true;
                        (0, Vec::new())
                    }
                    CMD_GET_PAIRED_DEVICES => {
                        st.paired_query = true;
                        // Slot 1, spfunction 0x01, WPID LSB first, report types keyboard
                        // and mouse (0x06), as captured from a real MX Master 3 pairing.
                        let [lo, hi] = WPID.to_le_bytes();
                        let mut n = vec![DJ_SHORT, SLOT, NOTIF_DEVICE_PAIRED, 0x01, lo, hi];
                        n.extend_from_slice(&[0x06, 0, 0, 0, 0x04]);
                        n.resize(DJ_SHORT_LEN, 0);
                        (0, vec![n])
                    }
                    _ => (0, Vec::new()),
                }
            }
            Some(0x10 | 0x11) => (0, self.hidpp(data)),
            _ => (EIO, Vec::new()),
        }
    }

    fn get_report(&mut self, _rnum: u8, _rtype: u8) -> (u16, Vec<u8>) {
        (EIO, Vec::new())
    }

    fn output(&mut self, data: &[u8]) -> Vec<Vec<u8>> {
        // A write to the receiver's own hidraw node.
        match data.first() {
            Some(0x10 | 0x11) => self.hidpp(data),
            _ => Vec::new(),
        }
    }
}

impl UnifyingReceiver {
    /// Creates the receiver's interface 2 with phys `<base>/input2` (the child gets
    /// `<base>/input2:1`).
    pub fn create(base: &str) -> anyhow::Result<UnifyingReceiver> {
        let state = Arc::new(Mutex::new(ReceiverState {
            emu: Emulator::mx_master_3(RECEIVER, SLOT),
            dj_mode: false,
            paired_query: false,
            registers: Vec::new(),
            kernel: Vec::new(),
            pawl: Vec::new(),
            last: Instant::now(),
        }));
        let dev = UhidDevice::create_with(
            UhidSpec {
                name: "Logitech USB Receiver".into(),
                phys: format!("{base}/input2"),
                uniq: String::new(),
                bus: BUS_USB,
                vendor: 0x046d,
                product: 0xc52b,
                version: 0x1211,
                rdesc: RECEIVER_RDESC.to_vec(),
            },
            Some(Box::new(Answer(Arc::clone(&state)))),
        )?;
        Ok(UnifyingReceiver {
            dev,
            state,
            buttons: 0,
        })
    }

    /// The receiver's state, locked.
    pub fn state(&self) -> MutexGuard<'_, ReceiverState> {
        lock(&self.state)
    }

    /// The receiver's phys (`…/input2`).
    pub fn phys(&self) -> &str {
        &self.dev.spec().phys
    }

    /// The child's phys: the receiver's + `:1`.
    pub fn child_phys(&self) -> String {
        format!("{}:{SLOT}", self.phys())
    }

    /// Waits for the paired mouse's evdev node (the child's, with `REL_X`).
    pub fn wait_child(&self, timeout: Duration) -> anyhow::Result<NodeInfo> {
        let phys = self.child_phys();
        let node = evdev::wait_for(&format!("child {phys:?}"), timeout, |n| {
            n.phys == phys && evdev::EvdevNode::open(&n.path).is_ok_and(|d| d.has(EV_REL, REL_X))
        })?;
        Ok(node.info().clone())
    }

    /// Waits until no request arrived for `quiet`.
    pub fn quiet(&self, quiet: Duration) {
        loop {
            let since = self.state().last.elapsed();
            if since >= quiet {
                return;
            }
            std::thread::sleep(quiet - since);
        }
    }

    /// One DJ mouse report for slot 1 (buttons kept, `wheel` in the wheel's counts).
    fn dj_mouse(&self, dx: i32, dy: i32, wheel: i8, pan: i8) -> anyhow::Result<()> {
        // The child's report 2 has the Bluetooth report's layout: 16 buttons, 12-bit X/Y,
        // wheel, AC Pan (dj:1119–1138).
        let r = MX_MASTER_3S_BT.encode(&MouseReport {
            buttons: self.buttons,
            dx,
            dy,
            wheel,
            pan,
        })?;
        let mut dj = vec![DJ_SHORT, SLOT, REPORT_TYPE_MOUSE];
        dj.extend_from_slice(&r[1..]);
        dj.resize(DJ_SHORT_LEN, 0);
        self.dev.input(&dj)
    }

    /// A motion report.
    pub fn motion(&self, dx: i32, dy: i32) -> anyhow::Result<()> {
        self.dj_mouse(dx, dy, 0, 0)
    }

    /// Presses or releases pawl button `n` (0-based) in a report of its own.
    pub fn button(&mut self, n: u8, held: bool) -> anyhow::Result<()> {
        if held {
            self.buttons |= 1 << n;
        } else {
            self.buttons &= !(1 << n);
        }
        self.dj_mouse(0, 0, 0, 0)
    }

    /// A wheel report of `detents`, in the counts of the mouse's wheel mode now (×15 once
    /// the child's driver set high resolution).
    pub fn wheel(&self, detents: i8) -> anyhow::Result<()> {
        let counts = self
            .state()
            .emu
            .wheel_counts(detents)
            .context("too many detents for one report")?;
        self.dj_mouse(0, 0, counts, 0)
    }

    /// Sends one HID++ report from the mouse (device index 1) through the receiver.
    pub fn send(&self, m: &Message) -> anyhow::Result<()> {
        let (bytes, len) = m.encode();
        self.dev.input(&bytes[..len])
    }
}
