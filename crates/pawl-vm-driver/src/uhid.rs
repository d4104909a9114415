//! HID devices through `/dev/uhid`: the kernel parses a real report descriptor and binds its
//! HID driver (hid-generic, or hid-logitech-hidpp / hid-logitech-dj for Logitech ids),
//! exactly as for a USB or Bluetooth device.
//!
//! A driver that talks to its device (hid-logitech-hidpp's probe, ~17 HID++ requests) sends
//! `UHID_SET_REPORT` / `UHID_GET_REPORT` and blocks up to 5 s for each reply (`uhid.c`
//! `uhid_hid_set_report`, `UHID_SET_REPORT_REPLY`), one request at a time, already while
//! it probes, before any node exists. A device created with a [`Responder`] gets a thread
//! that answers them from `UHID_CREATE2` on, for its whole life; every other event goes to
//! [`UhidDevice::next_event`].
//!
//! Layout of `struct uhid_event` (`include/uapi/linux/uhid.h`, packed): `u32 type` then the
//! request; offsets below are from the start of the event.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::sys;

const UHID_DESTROY: u32 = 1;
const UHID_START: u32 = 2;
const UHID_STOP: u32 = 3;
const UHID_OPEN: u32 = 4;
const UHID_CLOSE: u32 = 5;
const UHID_OUTPUT: u32 = 6;
const UHID_GET_REPORT: u32 = 9;
const UHID_GET_REPORT_REPLY: u32 = 10;
const UHID_CREATE2: u32 = 11;
const UHID_INPUT2: u32 = 12;
const UHID_SET_REPORT: u32 = 13;
const UHID_SET_REPORT_REPLY: u32 = 14;
/// `EIO`: the reply error of a request the device model does not serve.
pub const EIO: u16 = 5;

/// `UHID_DATA_MAX` and `HID_MAX_DESCRIPTOR_SIZE`.
const DATA_MAX: usize = 4096;
/// `sizeof(struct uhid_event)`: type + the largest request (`uhid_create2_req`).
const EVENT_SIZE: usize = 4 + 128 + 64 + 64 + 2 + 2 + 4 * 4 + DATA_MAX;

/// `BUS_USB`.
pub const BUS_USB: u16 = 0x03;
/// `BUS_BLUETOOTH`.
pub const BUS_BLUETOOTH: u16 = 0x05;

/// What a uhid device is created with (`struct uhid_create2_req`).
#[derive(Clone, Debug)]
pub struct UhidSpec {
    /// HID device name (hid-input derives the evdev names from it).
    pub name: String,
    /// Phys (evdev nodes of the device report it).
    pub phys: String,
    /// Unique id (serial, Bluetooth address).
    pub uniq: String,
    /// `BUS_*`.
    pub bus: u16,
    /// Vendor id.
    pub vendor: u32,
    /// Product id.
    pub product: u32,
    /// Version.
    pub version: u32,
    /// The report descriptor bytes.
    pub rdesc: Vec<u8>,
}

/// An event the kernel sent to the device side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UhidEvent {
    /// The HID driver bound (`dev_flags`).
    Start(u64),
    /// The HID driver unbound.
    Stop,
    /// The first reader opened the device (hid-input, hidraw).
    Open,
    /// The last reader closed it.
    Close,
    /// An output report (hidraw write, LEDs): report bytes and report type.
    Output {
        /// The report bytes (first byte: report id for numbered reports).
        data: Vec<u8>,
        /// `UHID_FEATURE_REPORT` 0, `UHID_OUTPUT_REPORT` 1, `UHID_INPUT_REPORT` 2.
        rtype: u8,
    },
    /// A GET_REPORT request (the kernel waits up to 5 s for `UHID_GET_REPORT_REPLY`).
    GetReport {
        /// Request id to echo.
        id: u32,
        /// Report number.
        rnum: u8,
        /// Report type.
        rtype: u8,
    },
    /// A SET_REPORT request (the kernel waits up to 5 s for `UHID_SET_REPORT_REPLY`).
    SetReport {
        /// Request id to echo.
        id: u32,
        /// Report number.
        rnum: u8,
        /// Report type.
        rtype: u8,
        /// Report bytes.
        data: Vec<u8>,
    },
    /// An event type this driver does not decode.
    Other(u32),
}

/// The device side of a uhid device: what it answers to the kernel's requests and to
/// output reports. Runs on the device's own thread (see the module docs).
pub trait Responder: Send + 'static {
    /// A `UHID_SET_REPORT` (report bytes, report id first): the reply's error (0 = done)
    /// and the input reports the device sends right after the reply.
    fn set_report(&mut self, rnum: u8, rtype: u8, data: &[u8]) -> (u16, Vec<Vec<u8>>);
    /// A `UHID_GET_REPORT`: the reply's error and report bytes.
    fn get_report(&mut self, rnum: u8, rtype: u8) -> (u16, Vec<u8>);
    /// A `UHID_OUTPUT` (a hidraw write): the input reports the device answers with.
    fn output(&mut self, data: &[u8]) -> Vec<Vec<u8>>;
}

/// The thread that answers a device's requests.
#[derive(Debug)]
struct Answering {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    events: Mutex<mpsc::Receiver<UhidEvent>>,
}

/// A live uhid device; destroyed when dropped.
#[derive(Debug)]
pub struct UhidDevice {
    fd: Arc<OwnedFd>,
    spec: UhidSpec,
    answering: Option<Answering>,
}

impl UhidDevice {
    /// Sends `UHID_CREATE2`, with `responder` (if any) answering the kernel's SET_REPORT and
    /// GET_REPORT requests and output reports on a thread of the device's own, started
    /// before `UHID_CREATE2` is written (so the driver's probe finds it answering). The
    /// kernel adds the HID device asynchronously: wait for its evdev nodes with
    /// [`crate::evdev::wait_for`].
    pub fn create_with(
        spec: UhidSpec,
        responder: Option<Box<dyn Responder>>,
    ) -> anyhow::Result<UhidDevice> {
        if spec.rdesc.len() > DATA_MAX {
            bail!(
                "report descriptor of {} bytes is too large",
                spec.rdesc.len()
            );
        }
        let fd = sys::open(Path::new("/dev/uhid"), libc::O_RDWR | libc::O_NONBLOCK)
            .context("cannot open /dev/uhid")?;
        let mut ev = vec![0u8; EVENT_SIZE];
        ev[0..4].copy_from_slice(&UHID_CREATE2.to_ne_bytes());
        ev[4..132].copy_from_slice(&sys::c_array::<128>(&spec.name));
        ev[132..196].copy_from_slice(&sys::c_array::<64>(&spec.phys));
        ev[196..260].copy_from_slice(&sys::c_array::<64>(&spec.uniq));
        ev[260..262].copy_from_slice(&(spec.rdesc.len() as u16).to_ne_bytes());
        ev[262..264].copy_from_slice(&spec.bus.to_ne_bytes());
        ev[264..268].copy_from_slice(&spec.vendor.to_ne_bytes());
        ev[268..272].copy_from_slice(&spec.product.to_ne_bytes());
        ev[272..276].copy_from_slice(&spec.version.to_ne_bytes());
        // 276..280: country 0.
        ev[280..280 + spec.rdesc.len()].copy_from_slice(&spec.rdesc);
        let fd = Arc::new(fd);
        let answering = responder.map(|r| {
            let stop = Arc::new(AtomicBool::new(false));
            let (tx, events) = mpsc::channel();
            let (fd, flag) = (Arc::clone(&fd), Arc::clone(&stop));
            let thread = std::thread::spawn(move || answer_loop(&fd, r, &flag, &tx));
            Answering {
                stop,
                thread: Some(thread),
                events: Mutex::new(events),
            }
        });
        sys::write_all_once(&*fd, &ev).with_context(|| format!("UHID_CREATE2 {:?}", spec.name))?;
        Ok(UhidDevice {
            fd,
            spec,
            answering,
        })
    }

    /// The spec the device was created with.
    pub fn spec(&self) -> &UhidSpec {
        &self.spec
    }

    /// Injects one input report (`UHID_INPUT2`); `report` starts with the report id for
    /// descriptors that number their reports.
    pub fn input(&self, report: &[u8]) -> anyhow::Result<()> {
        if report.len() > DATA_MAX {
            bail!("input report of {} bytes is too large", report.len());
        }
        input2(&self.fd, report)
    }

    /// The next event from the kernel, waiting up to `timeout`; `None` on timeout. With a
    /// [`Responder`], the requests it answered are not among them.
    pub fn next_event(&self, timeout: Duration) -> anyhow::Result<Option<UhidEvent>> {
        if let Some(a) = &self.answering {
            let events = a.events.lock().unwrap_or_else(|p| p.into_inner());
            return match events.recv_timeout(timeout) {
                Ok(ev) => Ok(Some(ev)),
                Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    bail!("the uhid answering thread ended")
                }
            };
        }
        read_event(&self.fd, timeout)
    }
}

/// One `UHID_INPUT2` write.
fn input2(fd: &OwnedFd, report: &[u8]) -> anyhow::Result<()> {
    let mut ev = Vec::with_capacity(6 + report.len());
    ev.extend_from_slice(&UHID_INPUT2.to_ne_bytes());
    ev.extend_from_slice(&(report.len() as u16).to_ne_bytes());
    ev.extend_from_slice(report);
    sys::write_all_once(fd, &ev).context("UHID_INPUT2")
}

/// The device's thread: answers SET_REPORT (reply, then the responder's reports as
/// INPUT2), GET_REPORT and OUTPUT until `stop`; passes every other event on.
fn answer_loop(
    fd: &OwnedFd,
    mut r: Box<dyn Responder>,
    stop: &AtomicBool,
    tx: &mpsc::Sender<UhidEvent>,
) {
    while !stop.load(Ordering::Relaxed) {
        let ev = match read_event(fd, Duration::from_millis(50)) {
            Ok(Some(ev)) => ev,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("uhid answering thread: {e:#}");
                return;
            }
        };
        let res = match ev {
            UhidEvent::SetReport {
                id,
                rnum,
                rtype,
                data,
            } => {
                let (err, reports) = r.set_report(rnum, rtype, &data);
                let mut reply = Vec::with_capacity(10);
                reply.extend_from_slice(&UHID_SET_REPORT_REPLY.to_ne_bytes());
                reply.extend_from_slice(&id.to_ne_bytes());
                reply.extend_from_slice(&err.to_ne_bytes());
                sys::write_all_once(fd, &reply)
                    .context("UHID_SET_REPORT_REPLY")
                    .and_then(|()| reports.iter().try_for_each(|rep| input2(fd, rep)))
            }
            UhidEvent::GetReport { id, rnum, rtype } => {
                let (err, data) = r.get_report(rnum, rtype);
                let data = &data[..data.len().min(DATA_MAX)];
                let mut reply = Vec::with_capacity(12 + data.len());
                reply.extend_from_slice(&UHID_GET_REPORT_REPLY.to_ne_bytes());
                reply.extend_from_slice(&id.to_ne_bytes());
                reply.extend_from_slice(&err.to_ne_bytes());
                reply.extend_from_slice(&(data.len() as u16).to_ne_bytes());
                reply.extend_from_slice(data);
                sys::write_all_once(fd, &reply).context("UHID_GET_REPORT_REPLY")
            }
            UhidEvent::Output { data, rtype } => {
                let reports = r.output(&data);
                let _ = tx.send(UhidEvent::Output { data, rtype });
                reports.iter().try_for_each(|rep| input2(fd, rep))
            }
            other => {
                let _ = tx.send(other);
                Ok(())
            }
        };
        if let Err(e) = res {
            eprintln!("uhid answering thread: {e:#}");
        }
    }
}

/// Reads one event from the uhid fd, waiting up to `timeout`.
fn read_event(fd: &OwnedFd, timeout: Duration) -> anyhow::Result<Option<UhidEvent>> {
    {
        if !sys::poll_readable(fd.as_raw_fd(), timeout)? {
            return Ok(None);
        }
        let mut ev = vec![0u8; EVENT_SIZE];
        let Some(n) = sys::read_once(fd, &mut ev).context("read /dev/uhid")? else {
            return Ok(None);
        };
        if n < 4 {
            bail!("short uhid event ({n} bytes)");
        }
        let u32_at = |o: usize| u32::from_ne_bytes(ev[o..o + 4].try_into().unwrap());
        let u16_at = |o: usize| u16::from_ne_bytes(ev[o..o + 2].try_into().unwrap());
        let event = match u32_at(0) {
            UHID_START => UhidEvent::Start(u64::from_ne_bytes(ev[4..12].try_into().unwrap())),
            UHID_STOP => UhidEvent::Stop,
            UHID_OPEN => UhidEvent::Open,
            UHID_CLOSE => UhidEvent::Close,
            UHID_OUTPUT => {
                let size = (u16_at(4 + DATA_MAX) as usize).min(DATA_MAX);
                UhidEvent::Output {
                    data: ev[4..4 + size].to_vec(),
                    rtype: ev[4 + DATA_MAX + 2],
                }
            }
            UHID_GET_REPORT => UhidEvent::GetReport {
                id: u32_at(4),
                rnum: ev[8],
                rtype: ev[9],
            },
            UHID_SET_REPORT => {
                let size = (u16_at(10) as usize).min(DATA_MAX);
                UhidEvent::SetReport {
                    id: u32_at(4),
                    rnum: ev[8],
                    rtype: ev[9],
                    data: ev[12..12 + size].to_vec(),
                }
            }
            other => UhidEvent::Other(other),
        };
        Ok(Some(event))
    }
}

impl Drop for UhidDevice {
    fn drop(&mut self) {
        // Closing the fd destroys the device too; the explicit DESTROY makes the removal
        // happen before `drop` returns rather than at some later close.
        let _ = sys::write_all_once(&*self.fd, &UHID_DESTROY.to_ne_bytes());
        if let Some(a) = &mut self.answering {
            a.stop.store(true, Ordering::Relaxed);
            if let Some(t) = a.thread.take() {
                let _ = t.join();
            }
        }
    }
}
