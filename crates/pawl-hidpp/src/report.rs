//! HID++ framing: short (report 0x10, 7 bytes) and long (report 0x11, 20 bytes) messages,
//! device indices and the software id that tells pawl's replies from everyone else's.
//!
//! Layout of every HID++ message (HID++ 1.0 and 2.0 share it; sources: Logitech's HID++ 2.0
//! draft "hidpp20/README", the kernel's `drivers/hid/hid-logitech-hidpp.c` `struct
//! hidpp_report`, Solaar `lib/logitech_receiver/base.py`):
//!
//! | byte | HID++ 2.0 (feature access) | HID++ 1.0 (register access) |
//! |---|---|---|
//! | 0 | report id 0x10 / 0x11 | same |
//! | 1 | device index | same |
//! | 2 | feature index | sub id |
//! | 3 | function (high nibble) · software id (low nibble) | register address |
//! | 4.. | parameters (3 in short, 16 in long) | same |

/// Report id of a short HID++ message (7 bytes with the id). Source: kernel
/// `REPORT_ID_HIDPP_SHORT`.
pub const REPORT_ID_SHORT: u8 = 0x10;
/// Report id of a long HID++ message (20 bytes with the id). Source: kernel
/// `REPORT_ID_HIDPP_LONG`.
pub const REPORT_ID_LONG: u8 = 0x11;
/// Length of a short message, report id included. Source: kernel `HIDPP_REPORT_SHORT_LENGTH`.
pub const SHORT_LEN: usize = 7;
/// Length of a long message, report id included. Source: kernel `HIDPP_REPORT_LONG_LENGTH`.
pub const LONG_LEN: usize = 20;
/// Parameter bytes of a short message.
pub const SHORT_PARAMS: usize = SHORT_LEN - 4;
/// Parameter bytes of a long message.
pub const LONG_PARAMS: usize = LONG_LEN - 4;

/// Device index of a device connected directly (Bluetooth, USB cable), and of a receiver
/// itself. Source: kernel `hidpp->device_index = 0xff` for non-DJ devices; Solaar
/// `base.py` (`0xFF` = receiver / direct).
pub const DEVICE_INDEX_DIRECT: u8 = 0xFF;
/// Lowest device index behind a Unifying (c52b, c532) or Bolt (c548) receiver. Source:
/// kernel `hid-logitech-dj.c` `DJ_DEVICE_INDEX_MIN`.
pub const DEVICE_INDEX_FIRST_PAIRED: u8 = 1;
/// Highest device index pawl talks to behind a receiver (receivers pair up to 6 devices;
/// the kernel's `DJ_DEVICE_INDEX_MAX` is 7 for the pseudo index of some gaming receivers).
pub const DEVICE_INDEX_LAST_PAIRED: u8 = 6;

/// The software id pawl's daemon puts in its requests (low nibble of byte 3). Replies echo
/// it; notifications carry 0. Any value 1–15 works; pawl avoids 0x01, the kernel's
/// `LINUX_KERNEL_SW_ID` in `hid-logitech-hidpp.c`, so replies to the kernel's requests are
/// never taken for pawl's.
pub const SOFTWARE_ID_DAEMON: u8 = 0x0A;
/// The software id of one-shot queries (`pawl devices`), distinct from the daemon's so a
/// running daemon ignores their replies.
pub const SOFTWARE_ID_QUERY: u8 = 0x0B;

/// Which HID++ reports a device (its HID report descriptor) declares.
///
/// Bluetooth devices declare only the long report (the MX Master 3S b034 descriptor in
/// `../shared/recordings` has report 0x11 only); receivers declare both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Framing {
    /// Report 0x10 is declared.
    pub short: bool,
    /// Report 0x11 is declared.
    pub long: bool,
}

impl Framing {
    /// Whether the device can speak HID++ at all (HID++ 2.0 needs the long report).
    pub fn usable(self) -> bool {
        self.long
    }
}

/// One HID++ message, short or long. `Copy`, fixed size: parsing and building one never
/// allocates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// `true`: long (0x11), `false`: short (0x10).
    pub long: bool,
    /// Device index: [`DEVICE_INDEX_DIRECT`] or 1–6 behind a receiver.
    pub device: u8,
    /// Feature index (HID++ 2.0) or sub id (HID++ 1.0).
    pub sub_id: u8,
    /// Function · software id (HID++ 2.0) or register address (HID++ 1.0).
    pub address: u8,
    /// Parameters; a short message uses the first [`SHORT_PARAMS`], the rest are 0.
    pub params: [u8; LONG_PARAMS],
}

impl Message {
    /// Parses one report as read from hidraw (report id first). `None` when it is not a
    /// HID++ report (another report id, e.g. the mouse's report 2) or is shorter than its
    /// id requires. Trailing bytes beyond the length are ignored.
    #[inline]
    pub fn parse(bytes: &[u8]) -> Option<Message> {
        let (long, len) = match *bytes.first()? {
            REPORT_ID_SHORT => (false, SHORT_LEN),
            REPORT_ID_LONG => (true, LONG_LEN),
            _ => return None,
        };
        if bytes.len() < len {
            return None;
        }
        let mut params = [0u8; LONG_PARAMS];
        params[..len - 4].copy_from_slice(&bytes[4..len]);
        Some(Message {
            long,
            device: bytes[1],
            sub_id: bytes[2],
            address: bytes[3],
            params,
        })
    }

    /// A HID++ 2.0 request: `function` (0–15) of the feature at `feature_index`, with
    /// `sw_id` (1–15) and `params` (at most 16 bytes; more are cut). Long whenever the
    /// node declares the long report: HID++ 2.0 devices answer a request in the report
    /// type it came in, and most replies need more than 3 bytes (the kernel's
    /// `hidpp_send_fap_command_sync` sends long too). Short only on a node without it.
    pub fn request(
        framing: Framing,
        device: u8,
        feature_index: u8,
        function: u8,
        sw_id: u8,
        params: &[u8],
    ) -> Message {
        let n = params.len().min(LONG_PARAMS);
        let mut p = [0u8; LONG_PARAMS];
        p[..n].copy_from_slice(&params[..n]);
        Message {
            long: framing.long || n > SHORT_PARAMS,
            device,
            sub_id: feature_index,
            address: (function << 4) | (sw_id & 0x0F),
            params: p,
        }
    }

    /// The HID++ 2.0 function (event number of a notification): high nibble of byte 3.
    #[inline]
    pub fn function(&self) -> u8 {
        self.address >> 4
    }

    /// The HID++ 2.0 software id: low nibble of byte 3; 0 for notifications.
    #[inline]
    pub fn sw_id(&self) -> u8 {
        self.address & 0x0F
    }

    /// The bytes to write to hidraw, report id first: 7 or 20 bytes.
    pub fn encode(&self) -> ([u8; LONG_LEN], usize) {
        let mut buf = [0u8; LONG_LEN];
        let len = if self.long { LONG_LEN } else { SHORT_LEN };
        buf[0] = if self.long {
            REPORT_ID_LONG
        } else {
            REPORT_ID_SHORT
        };
        buf[1] = self.device;
        buf[2] = self.sub_id;
        buf[3] = self.address;
        buf[4..len].copy_from_slice(&self.params[..len - 4]);
        (buf, len)
    }

    /// Big-endian u16 at parameter `i`.
    #[inline]
    pub fn u16_at(&self, i: usize) -> u16 {
        u16::from_be_bytes([self.params[i], self.params[i + 1]])
    }

    /// Big-endian i16 at parameter `i`.
    #[inline]
    pub fn i16_at(&self, i: usize) -> i16 {
        i16::from_be_bytes([self.params[i], self.params[i + 1]])
    }
}

/// Scans a HID report descriptor for the HID++ reports: a Report ID item (`0x85`) with
/// 0x10 or 0x11 inside a vendor-defined usage page (`0x06 0x00..0xFF 0xFF`, pages
/// 0xFF00–0xFFFF: Logitech uses 0xFF00 on receivers, 0xFF43 on Bluetooth devices).
///
/// Walks the short items of the descriptor (HID 1.11 §6.2.2.2), so data bytes are never
/// mistaken for tags. Errors: none; a truncated descriptor yields what was seen.
pub fn hidpp_framing(descriptor: &[u8]) -> Framing {
    let mut framing = Framing::default();
    let mut vendor_page = false;
    let mut i = 0;
    while i < descriptor.len() {
        let prefix = descriptor[i];
        if prefix == 0xFE {
            // Long item: 0xFE, size, tag, data.
            let size = descriptor.get(i + 1).copied().unwrap_or(0) as usize;
            i += 3 + size;
            continue;
        }
        let size = match prefix & 0x03 {
            3 => 4,
            s => s as usize,
        };
        let data = descriptor.get(i + 1..i + 1 + size).unwrap_or(&[]);
        let value = data
            .iter()
            .rev()
            .fold(0u32, |acc, &b| (acc << 8) | u32::from(b));
        match prefix & 0xFC {
            // Usage Page (global).
            0x04 => vendor_page = value >= 0xFF00,
            // Report ID (global).
            0x84 if vendor_page => match value {
                0x10 => framing.short = true,
                0x11 => framing.long = true,
                _ => {}
            },
            _ => {}
        }
        i += 1 + size;
    }
    framing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_message_round_trips_and_names_its_fields() {
        let bytes = [0x10, 0x01, 0x00, 0x1A, 0x00, 0x00, 0x5A];
        let m = Message::parse(&bytes).unwrap();
        assert!(!m.long);
        assert_eq!(
            (m.device, m.sub_id, m.function(), m.sw_id()),
            (1, 0, 1, 0x0A)
        );
        let (buf, len) = m.encode();
        assert_eq!(&buf[..len], &bytes);
    }

    #[test]
    fn long_message_round_trips() {
        let mut bytes = [0u8; LONG_LEN];
        bytes[..8].copy_from_slice(&[0x11, 0xFF, 0x05, 0x10, 0x00, 0xC3, 0x01, 0x02]);
        let m = Message::parse(&bytes).unwrap();
        assert!(m.long);
        assert_eq!(m.u16_at(0), 0x00C3);
        let (buf, len) = m.encode();
        assert_eq!(&buf[..len], &bytes);
    }

    #[test]
    fn mouse_reports_and_truncated_reports_are_not_hidpp() {
        assert_eq!(Message::parse(&[0x02, 0, 0, 5, 0, 0, 0]), None);
        assert_eq!(Message::parse(&[0x11, 0xFF, 0, 0]), None);
        assert_eq!(Message::parse(&[]), None);
    }

    #[test]
    fn requests_are_long_whenever_the_long_report_is_declared() {
        let both = Framing {
            short: true,
            long: true,
        };
        let short_only = Framing {
            short: true,
            long: false,
        };
        assert!(Message::request(both, 1, 0, 1, 0x0A, &[0, 0, 0x5A]).long);
        assert!(!Message::request(short_only, 1, 0, 1, 0x0A, &[0, 0, 0x5A]).long);
    }

    #[test]
    fn framing_of_the_recorded_mx_master_3s_bluetooth_descriptor_is_long_only() {
        // Vendor page 0xFF43, report id 0x11 (the tail of
        // hidreport--libinput-issue996-0005-046D-B034-0.rdesc).
        let tail = [
            0x06, 0x43, 0xFF, 0x0A, 0x02, 0x02, 0xA1, 0x01, 0x85, 0x11, 0x75, 0x08, 0x95, 0x13,
            0x15, 0x00, 0x26, 0xFF, 0x00, 0x09, 0x02, 0x81, 0x00, 0x09, 0x02, 0x91, 0x00, 0xC0,
        ];
        assert_eq!(
            hidpp_framing(&tail),
            Framing {
                short: false,
                long: true
            }
        );
        // A mouse report id 0x10 on the generic desktop page is not HID++.
        let mouse = [0x05, 0x01, 0x09, 0x02, 0xA1, 0x01, 0x85, 0x10, 0xC0];
        assert_eq!(hidpp_framing(&mouse), Framing::default());
    }
}
