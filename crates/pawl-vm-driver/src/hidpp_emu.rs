//! The HID++ side of an emulated MX Master 3S: the uhid mouse built from the real Bluetooth
//! descriptor (which declares HID++ long report 0x11, so its hidraw node carries HID++),
//! with `pawl_hidpp::emulator::Emulator` answering every report pawl writes to hidraw
//! (`UHID_OUTPUT`) with a `UHID_INPUT2` reply, and sending the notifications a diverted
//! gesture button, raw-XY motion and a diverted thumb wheel produce (a native thumb wheel
//! turn is an AC Pan count in the mouse report). hid-generic binds the device, so the kernel
//! itself never talks HID++ to it: every request the emulator sees is pawl's.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use pawl_hidpp::controls::CID_GESTURE_BUTTON;
use pawl_hidpp::emulator::{Emulator, Motion};
use pawl_hidpp::report::{DEVICE_INDEX_DIRECT, Framing, Message};

use crate::evdev::NodeInfo;
use crate::hid::{HidMouse, MX_MASTER_3S_BT};
use crate::uhid::UhidEvent;

/// The Bluetooth descriptor's HID++ reports: long only.
const BLUETOOTH: Framing = Framing {
    short: false,
    long: true,
};

/// An MX Master 3S over Bluetooth that speaks HID++.
#[derive(Debug)]
pub struct HidppMouse {
    /// The uhid mouse (report 2 motion for input that is not diverted).
    pub mouse: HidMouse,
    /// The device model behind report 0x11.
    pub emu: Emulator,
    /// Every HID++ request pawl wrote, in order.
    pub requests: Vec<Message>,
}

impl HidppMouse {
    /// Creates the uhid device with `phys` from the recordings' descriptor.
    pub fn create(recordings: &std::path::Path, phys: &str) -> anyhow::Result<HidppMouse> {
        Ok(HidppMouse {
            mouse: HidMouse::create(MX_MASTER_3S_BT, recordings, phys)?,
            emu: Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT),
            requests: Vec::new(),
        })
    }

    /// The kernel's evdev node of the mouse.
    pub fn wait_node(&self, timeout: Duration) -> anyhow::Result<NodeInfo> {
        self.mouse.wait_node(timeout)
    }

    /// Answers what the kernel queued for the device (pawl's hidraw writes) until nothing
    /// arrives for `quiet`.
    pub fn pump(&mut self, quiet: Duration) -> anyhow::Result<()> {
        while let Some(ev) = self.mouse.uhid().next_event(quiet)? {
            self.handle(ev)?;
        }
        Ok(())
    }

    /// Answers requests until `done(self)` holds; fails after `timeout`.
    pub fn pump_until(
        &mut self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&HidppMouse) -> bool,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while !done(self) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!(
                    "{what}: not within {timeout:?} ({} HID++ requests seen)",
                    self.requests.len()
                );
            }
            if let Some(ev) = self
                .mouse
                .uhid()
                .next_event(left.min(Duration::from_millis(100)))?
            {
                self.handle(ev)?;
            }
        }
        Ok(())
    }

    fn handle(&mut self, ev: UhidEvent) -> anyhow::Result<()> {
        if let UhidEvent::Output { data, .. } = ev
            && let Some(m) = Message::parse(&data)
        {
            self.requests.push(m);
            if let Some(reply) = self.emu.answer(&data) {
                self.send(&reply)?;
            }
        }
        Ok(())
    }

    /// Whether the gesture button is diverted now.
    pub fn gesture_diverted(&self) -> bool {
        self.emu
            .reporting(CID_GESTURE_BUTTON)
            .is_some_and(|r| r.divert)
    }

    /// Whether the thumb wheel is diverted now.
    pub fn thumb_diverted(&self) -> bool {
        self.emu.thumb_diverted()
    }

    /// Turns the thumb wheel by `increments` (1/120 turn each, positive in its default
    /// direction) while it is diverted: one HID++ rotation notification.
    pub fn thumb_diverted_turn(&self, increments: i16) -> anyhow::Result<()> {
        let m = self
            .emu
            .thumb(increments)
            .context("the thumb wheel is not diverted")?;
        self.send(&m)
    }

    /// Turns the thumb wheel by `ratchets` (1/18 turn each, positive in its default
    /// direction) while it is native: one mouse report with that AC Pan count.
    pub fn thumb_native_turn(&self, ratchets: i8) -> anyhow::Result<()> {
        let pan = self
            .emu
            .thumb_native(ratchets)
            .context("the thumb wheel is diverted: it sends no AC Pan")?;
        self.mouse.pan(pan)
    }

    /// Sends one HID++ report to the host.
    pub fn send(&self, m: &Message) -> anyhow::Result<()> {
        let (bytes, len) = m.encode();
        self.mouse.uhid().input(&bytes[..len])
    }

    /// Presses or releases the gesture button; it must be diverted (the 3S sends nothing
    /// for it otherwise).
    pub fn gesture_button(&mut self, held: bool) -> anyhow::Result<()> {
        let m = self
            .emu
            .set_held(CID_GESTURE_BUTTON, held)
            .context("the gesture button is not diverted: the 3S would send nothing")?;
        self.send(&m)
    }

    /// Moves the mouse: a raw-XY notification while the diverted gesture button is held,
    /// an ordinary report 2 otherwise.
    pub fn motion(&self, dx: i16, dy: i16) -> anyhow::Result<()> {
        match self.emu.motion(dx, dy) {
            Motion::RawXy(m) => self.send(&m),
            Motion::Hid => self.mouse.motion(dx.into(), dy.into()),
        }
    }

    /// A gesture: press, a first raw-XY report of (1, 0) (dropped by pawl: the 3S puts
    /// pre-press motion there), `steps` reports adding up to `(dx, dy)`, release.
    pub fn gesture(&mut self, dx: i16, dy: i16, steps: i16) -> anyhow::Result<()> {
        self.gesture_button(true)?;
        self.motion(1, 0)?;
        for _ in 0..steps {
            self.motion(dx / steps, dy / steps)?;
        }
        self.gesture_button(false)
    }
}
