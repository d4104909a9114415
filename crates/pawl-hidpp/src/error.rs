//! HID++ error replies: HID++ 1.0 (sub id 0x8F, short) and HID++ 2.0 (feature index 0xFF,
//! long), mapped to messages a user can act on.
//!
//! Layouts (kernel `hid-logitech-hidpp.c` `hidpp_send_message_sync`, Solaar `base.py`):
//! 1.0: `10 dev 8F <sub id> <address> <code> 00`; 2.0: `11 dev FF <feature index>
//! <function·sw id> <code> …` — both echo the request they answer.

use std::fmt;

use crate::report::Message;

/// Sub id of a HID++ 1.0 error reply. Source: kernel `HIDPP_ERROR`.
pub const HIDPP10_ERROR: u8 = 0x8F;
/// Feature index of a HID++ 2.0 error reply. Source: kernel `HIDPP20_ERROR`.
pub const HIDPP20_ERROR: u8 = 0xFF;

/// HID++ 1.0 error code "invalid sub id": the answer of a HID++ 1.0 device to the HID++
/// 2.0 protocol-version ping. Source: kernel `HIDPP_ERROR_INVALID_SUBID`.
pub const HIDPP10_INVALID_SUBID: u8 = 0x01;
/// HID++ 1.0 error "unknown device": no device paired at that receiver index. Source:
/// kernel `HIDPP_ERROR_UNKNOWN_DEVICE`.
pub const HIDPP10_UNKNOWN_DEVICE: u8 = 0x08;
/// HID++ 1.0 error "resource error": the paired device is not reachable (asleep, off).
/// Source: kernel `HIDPP_ERROR_RESOURCE_ERROR`.
pub const HIDPP10_RESOURCE_ERROR: u8 = 0x09;

/// An error reply, with the request it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorReply {
    /// HID++ 1.0 error (receivers, HID++ 1.0 devices, or a receiver answering for an
    /// absent device).
    V10 {
        /// Sub id of the failed request (a HID++ 2.0 request's feature index).
        sub_id: u8,
        /// Address of the failed request (a HID++ 2.0 request's function · sw id).
        address: u8,
        /// Error code.
        code: u8,
    },
    /// HID++ 2.0 error.
    V20 {
        /// Feature index of the failed request.
        feature_index: u8,
        /// Function · software id of the failed request.
        address: u8,
        /// Error code.
        code: u8,
    },
}

impl ErrorReply {
    /// The error in `m`, if `m` is an error reply.
    pub fn parse(m: &Message) -> Option<ErrorReply> {
        // Receivers answer a long request with a long 1.0 error, a short one with a short.
        if m.sub_id == HIDPP10_ERROR {
            return Some(ErrorReply::V10 {
                sub_id: m.address,
                address: m.params[0],
                code: m.params[1],
            });
        }
        if m.sub_id == HIDPP20_ERROR {
            return Some(ErrorReply::V20 {
                feature_index: m.address,
                address: m.params[0],
                code: m.params[1],
            });
        }
        None
    }

    /// Whether it answers the request `req` (same feature index / sub id and address).
    pub fn answers(&self, req: &Message) -> bool {
        match *self {
            ErrorReply::V10 {
                sub_id, address, ..
            } => sub_id == req.sub_id && address == req.address,
            ErrorReply::V20 {
                feature_index,
                address,
                ..
            } => feature_index == req.sub_id && address == req.address,
        }
    }

    /// The error code.
    pub fn code(&self) -> u8 {
        match *self {
            ErrorReply::V10 { code, .. } | ErrorReply::V20 { code, .. } => code,
        }
    }

    /// What the code means, as a message a user can act on.
    pub fn meaning(&self) -> &'static str {
        match *self {
            ErrorReply::V10 { code, .. } => hidpp10_meaning(code),
            ErrorReply::V20 { code, .. } => hidpp20_meaning(code),
        }
    }
}

impl fmt::Display for ErrorReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ErrorReply::V10 { code, .. } => {
                write!(f, "HID++ 1.0 error 0x{code:02x}: {}", self.meaning())
            }
            ErrorReply::V20 { code, .. } => {
                write!(f, "HID++ 2.0 error 0x{code:02x}: {}", self.meaning())
            }
        }
    }
}

/// HID++ 1.0 error codes. Source: kernel `HIDPP_ERROR_*` (hid-logitech-hidpp.c), Solaar
/// `hidpp10_constants.ERROR`.
pub fn hidpp10_meaning(code: u8) -> &'static str {
    match code {
        0x00 => "success",
        0x01 => "invalid sub id or command (the device speaks HID++ 1.0 only)",
        0x02 => "invalid address",
        0x03 => "invalid value",
        0x04 => "connection request failed",
        0x05 => "too many devices",
        0x06 => "already exists",
        0x07 => "busy (another program is talking to the device; try again)",
        0x08 => "unknown device (nothing paired at this receiver slot)",
        0x09 => "resource error (the device is not reachable: asleep or switched off)",
        0x0A => "request unavailable",
        0x0B => "invalid parameter value",
        0x0C => "wrong PIN code",
        _ => "unknown HID++ 1.0 error code",
    }
}

/// HID++ 2.0 error codes. Source: kernel `HIDPP20_ERROR_*`, Solaar
/// `hidpp20_constants.ERROR`.
pub fn hidpp20_meaning(code: u8) -> &'static str {
    match code {
        0x00 => "no error",
        0x01 => "unknown error",
        0x02 => "invalid argument (the device refused the value)",
        0x03 => "out of range",
        0x04 => "hardware error",
        0x05 => "Logitech internal error",
        0x06 => "invalid feature index (the feature table changed: reconnect)",
        0x07 => "invalid function",
        0x08 => "busy (another program is talking to the device; try again)",
        0x09 => "unsupported",
        _ => "unknown HID++ 2.0 error code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidpp10_error_names_the_request_and_the_cause() {
        let m = Message::parse(&[0x10, 0x01, 0x8F, 0x00, 0x1A, 0x09, 0x00]).unwrap();
        let e = ErrorReply::parse(&m).unwrap();
        let req = Message::parse(&[0x10, 0x01, 0x00, 0x1A, 0, 0, 0x5A]).unwrap();
        assert!(e.answers(&req));
        assert_eq!(
            e.to_string(),
            "HID++ 1.0 error 0x09: resource error (the device is not reachable: asleep or switched off)"
        );
    }

    #[test]
    fn hidpp20_error_names_the_request_and_the_cause() {
        let mut b = [0u8; 20];
        b[..6].copy_from_slice(&[0x11, 0xFF, 0xFF, 0x05, 0x3A, 0x02]);
        let e = ErrorReply::parse(&Message::parse(&b).unwrap()).unwrap();
        assert_eq!(
            e,
            ErrorReply::V20 {
                feature_index: 5,
                address: 0x3A,
                code: 2
            }
        );
        assert!(
            e.to_string()
                .starts_with("HID++ 2.0 error 0x02: invalid argument")
        );
    }

    #[test]
    fn ordinary_replies_are_not_errors() {
        let m = Message::parse(&[0x10, 0x01, 0x00, 0x1A, 4, 2, 0x5A]).unwrap();
        assert_eq!(ErrorReply::parse(&m), None);
    }
}
