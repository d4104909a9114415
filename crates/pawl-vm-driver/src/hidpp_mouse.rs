//! An emulated MX Master over Bluetooth that speaks HID++ ([`HidppMouse`], the 3S unless
//! a scenario picks another model): the uhid
//! mouse of `hid.rs` with the HID++ model of `hidpp_emu.rs` answering on its thread, and
//! what a scenario does with it (diverted buttons, raw XY, thumb wheel turns, waiting for
//! pawl's requests).

use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use pawl_hidpp::controls::CID_GESTURE_BUTTON;
use pawl_hidpp::emulator::{Emulator, Motion};
use pawl_hidpp::feature;
use pawl_hidpp::report::Message;

use crate::evdev::NodeInfo;
use crate::hid::{HidMouse, MX_MASTER_3S_BT, MouseModel};
use crate::hidpp_emu::{HidppShared, HidppState};

/// An MX Master over Bluetooth that speaks HID++.
#[derive(Debug)]
pub struct HidppMouse {
    /// The uhid mouse (report 2 motion for input that is not diverted).
    pub mouse: HidMouse,
    shared: HidppShared,
}

impl HidppMouse {
    /// Creates the MX Master 3S's uhid device with `phys` from the recordings' descriptor.
    pub fn create(recordings: &std::path::Path, phys: &str) -> anyhow::Result<HidppMouse> {
        HidppMouse::create_model(MX_MASTER_3S_BT, recordings, phys)
    }

    /// Creates `model`'s uhid device with `phys`; fails for a model without HID++.
    pub fn create_model(
        model: MouseModel,
        recordings: &std::path::Path,
        phys: &str,
    ) -> anyhow::Result<HidppMouse> {
        let mouse = HidMouse::create(model, recordings, phys)?;
        let shared = mouse
            .hidpp()
            .with_context(|| format!("the {} model speaks no HID++", model.name))?
            .clone();
        Ok(HidppMouse { mouse, shared })
    }

    /// The device model (locked while the guard lives: the kernel's and pawl's requests
    /// wait for it).
    pub fn emu(&self) -> impl std::ops::DerefMut<Target = Emulator> + '_ {
        EmuGuard(self.shared.lock())
    }

    /// The HID++ requests pawl wrote so far.
    pub fn requests(&self) -> Vec<Message> {
        self.shared.lock().pawl.clone()
    }

    /// The HID++ requests the kernel's driver sent so far.
    pub fn kernel_requests(&self) -> Vec<Message> {
        self.shared.lock().kernel.clone()
    }

    /// How many 0x2121 `setWheelMode` requests pawl sent (it must never).
    pub fn pawl_wheel_mode_writes(&self) -> usize {
        let st = self.shared.lock();
        let index = st.emu.feature_index(feature::HIRES_WHEEL);
        st.pawl
            .iter()
            .filter(|m| Some(m.sub_id) == index && m.function() == feature::hires_wheel::SET_MODE)
            .count()
    }

    /// The kernel's evdev node of the mouse.
    pub fn wait_node(&self, timeout: Duration) -> anyhow::Result<NodeInfo> {
        self.mouse.wait_node(timeout)
    }

    /// Runs `cmd` (its stdin null, stdout and stderr captured) to its end, answering this
    /// mouse's HID++ requests meanwhile (`pawl devices` queries the device while it
    /// runs); fails when it takes longer than `timeout`. Returns its status, stdout and
    /// stderr.
    pub fn run_answering(
        &mut self,
        cmd: &mut std::process::Command,
        timeout: Duration,
    ) -> anyhow::Result<(std::process::ExitStatus, String, String)> {
        use std::io::Read;
        use std::process::Stdio;
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("start {cmd:?}"))?;
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(s) = child.try_wait()? {
                break s;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                bail!("{cmd:?} did not finish within {timeout:?}");
            }
            self.pump(Duration::from_millis(10))?;
        };
        let (mut out, mut err) = (String::new(), String::new());
        if let Some(mut o) = child.stdout.take() {
            o.read_to_string(&mut out)?;
        }
        if let Some(mut e) = child.stderr.take() {
            e.read_to_string(&mut err)?;
        }
        Ok((status, out, err))
    }

    /// Waits until no HID++ request arrived for `quiet` (the device thread answers them).
    pub fn pump(&mut self, quiet: Duration) -> anyhow::Result<()> {
        loop {
            let since = self.shared.lock().last.elapsed();
            if since >= quiet {
                return Ok(());
            }
            std::thread::sleep(quiet - since);
        }
    }

    /// Waits until `done(self)` holds; fails after `timeout`.
    pub fn pump_until(
        &mut self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&HidppMouse) -> bool,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while !done(self) {
            if Instant::now() >= deadline {
                bail!(
                    "{what}: not within {timeout:?} ({} HID++ requests from pawl seen)",
                    self.shared.lock().pawl.len()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// Whether the gesture button is diverted now.
    pub fn gesture_diverted(&self) -> bool {
        self.emu()
            .reporting(CID_GESTURE_BUTTON)
            .is_some_and(|r| r.divert)
    }

    /// Whether the thumb wheel is diverted now.
    pub fn thumb_diverted(&self) -> bool {
        self.emu().thumb_diverted()
    }

    /// Turns the thumb wheel by `increments` (1/120 turn each, positive in its default
    /// direction) while it is diverted: one HID++ rotation notification.
    pub fn thumb_diverted_turn(&self, increments: i16) -> anyhow::Result<()> {
        let m = self
            .emu()
            .thumb(increments)
            .context("the thumb wheel is not diverted")?;
        self.send(&m)
    }

    /// Turns the thumb wheel by `ratchets` (1/18 turn each, positive in its default
    /// direction) while it is native: one mouse report with that AC Pan count.
    pub fn thumb_native_turn(&self, ratchets: i8) -> anyhow::Result<()> {
        let pan = self
            .emu()
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
            .emu()
            .set_held(CID_GESTURE_BUTTON, held)
            .context("the gesture button is not diverted: the 3S would send nothing")?;
        self.send(&m)
    }

    /// Moves the mouse: a raw-XY notification while the diverted gesture button is held,
    /// an ordinary report 2 otherwise.
    pub fn motion(&self, dx: i16, dy: i16) -> anyhow::Result<()> {
        let motion = self.emu().motion(dx, dy);
        match motion {
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

/// [`HidppMouse::emu`]'s guard.
struct EmuGuard<'a>(MutexGuard<'a, HidppState>);

impl std::ops::Deref for EmuGuard<'_> {
    type Target = Emulator;
    fn deref(&self) -> &Emulator {
        &self.0.emu
    }
}

impl std::ops::DerefMut for EmuGuard<'_> {
    fn deref_mut(&mut self) -> &mut Emulator {
        &mut self.0.emu
    }
}
