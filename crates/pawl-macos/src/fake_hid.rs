//! A fake IOHIDDevice layer for the HID++ tests: every report pawl writes is answered by
//! a [`pawl_hidpp::emulator::Emulator`] per device index (or, for index 0xFF of a
//! receiver, by a small model of the receiver's notification register), and the answers
//! wait in a queue until the test delivers them, as the input-report callback would.

use std::collections::VecDeque;

use pawl_hidpp::emulator::Emulator;
use pawl_hidpp::error::{HIDPP10_ERROR, HIDPP10_UNKNOWN_DEVICE};
use pawl_hidpp::report::{DEVICE_INDEX_DIRECT, LONG_PARAMS, Message};

use crate::hidpp::HidPort;

/// One fake endpoint: the mice behind it, the receiver's register 0x00.
#[derive(Debug)]
pub struct FakeEndpoint {
    pub id: u64,
    /// The emulated mice (their own device index each).
    pub mice: Vec<Emulator>,
    /// A receiver (answers index 0xFF and "unknown device" for empty indices).
    pub receiver: bool,
    /// The receiver's notification flags (register 0x00).
    pub flags: [u8; 3],
}

/// The fake HID layer.
#[derive(Debug, Default)]
pub struct FakeHid {
    pub endpoints: Vec<FakeEndpoint>,
    /// Every report written, with its endpoint, in order.
    pub written: Vec<(u64, Message)>,
    /// Reports waiting to be delivered to pawl.
    pub pending: VecDeque<(u64, Vec<u8>)>,
    /// Writing fails (device gone).
    pub fail: bool,
}

impl FakeHid {
    pub fn endpoint(&mut self, id: u64) -> &mut FakeEndpoint {
        self.endpoints
            .iter_mut()
            .find(|e| e.id == id)
            .expect("no such fake endpoint")
    }

    pub fn mouse(&mut self, id: u64) -> &mut Emulator {
        &mut self.endpoint(id).mice[0]
    }

    /// Queues a report the device sends by itself (a notification).
    pub fn notify(&mut self, id: u64, m: Message) {
        let (bytes, len) = m.encode();
        self.pending.push_back((id, bytes[..len].to_vec()));
    }

    /// Takes the reports written so far.
    pub fn take_written(&mut self) -> Vec<(u64, Message)> {
        std::mem::take(&mut self.written)
    }
}

impl HidPort for FakeHid {
    fn send(&mut self, id: u64, report: &[u8]) -> Result<(), String> {
        if self.fail {
            return Err("(iokit/common) no such device".into());
        }
        let m = Message::parse(report).expect("pawl writes HID++ reports only");
        assert_eq!(
            report.len(),
            if m.long { 20 } else { 7 },
            "a HID++ report has its exact length"
        );
        self.written.push((id, m));
        let ep = self
            .endpoints
            .iter_mut()
            .find(|e| e.id == id)
            .ok_or("(iokit/common) not open")?;
        let reply = if ep.receiver && m.device == DEVICE_INDEX_DIRECT {
            Some(receiver_answer(&mut ep.flags, &m))
        } else if let Some(mouse) = ep.mice.iter_mut().find(|e| e.device() == m.device) {
            mouse.answer(report)
        } else if ep.receiver {
            // Nothing paired (or asleep) at that index.
            Some(error10(&m, HIDPP10_UNKNOWN_DEVICE))
        } else {
            None
        };
        if let Some(r) = reply {
            let (bytes, len) = r.encode();
            self.pending.push_back((id, bytes[..len].to_vec()));
        }
        Ok(())
    }
}

/// A receiver's answer to a register request: 0x81 reads register 0x00, 0x80 writes it.
fn receiver_answer(flags: &mut [u8; 3], m: &Message) -> Message {
    let mut reply = *m;
    reply.params = [0; LONG_PARAMS];
    match (m.sub_id, m.address) {
        (0x81, 0x00) => reply.params[..3].copy_from_slice(flags),
        (0x80, 0x00) => flags.copy_from_slice(&m.params[..3]),
        _ => return error10(m, 0x02),
    }
    reply
}

/// A HID++ 1.0 error reply (sub id 0x8F) to `m` with `code`.
fn error10(m: &Message, code: u8) -> Message {
    let mut params = [0u8; LONG_PARAMS];
    params[0] = m.address;
    params[1] = code;
    Message {
        long: m.long,
        device: m.device,
        sub_id: HIDPP10_ERROR,
        address: m.sub_id,
        params,
    }
}
