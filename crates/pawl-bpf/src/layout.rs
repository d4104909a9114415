//! The mouse report's layout, found in the device's HID report descriptor: which report
//! carries the wheel, and the bit offsets and sizes of the wheel, AC Pan, X, Y and the
//! buttons in it. The loader hands the result to the program as read-only data
//! (`struct pawl_layout`).
//!
//! The walker reads short items (HID 1.11 §6.2.2) with a global stack (Push/Pop) and local
//! usages, counts the bits of every input report by report id, and records the fields of
//! the first input report holding a Generic Desktop Wheel. Long items are skipped. Limits:
//! a descriptor of at most [`MAX_DESCRIPTOR_BYTES`] (the kernel's `HID_MAX_DESCRIPTOR_SIZE`),
//! at most [`MAX_USAGES`] local usages per main item, a global stack [`MAX_PUSH`] deep,
//! at most [`MAX_FIELDS`] variable input fields in all,
//! report counts up to 4096 bits per report. Past a limit, or on a truncated item, it stops
//! with an error; nothing is guessed.

use std::fmt;

/// The largest descriptor read, bytes (`HID_MAX_DESCRIPTOR_SIZE`, include/linux/hid.h).
pub const MAX_DESCRIPTOR_BYTES: usize = 4096;
/// Local usages kept per main item (more are an error).
pub const MAX_USAGES: usize = 256;
/// Depth of the Push/Pop global stack (the kernel allows 4: `HID_GLOBAL_STACK_SIZE`).
pub const MAX_PUSH: usize = 4;
/// Variable input fields walked per descriptor (more are an error). Every recorded mouse
/// descriptor has fewer than 100; without the bound, 4 KiB of Report Count items made the
/// walk take seconds (found by the `hid_descriptor` fuzz target).
pub const MAX_FIELDS: u32 = 4096;
/// The largest report, bits (the kernel's `HID_MAX_BUFFER_SIZE` is 16 KiB; the program reads
/// only its first 32 bytes).
const MAX_REPORT_BITS: u32 = 4096 * 8;
/// Bytes of a report the program reads (`PAWL_DATA_BYTES` in pawl.bpf.c); every field it
/// touches must lie within, 4 bytes read at its first byte.
pub const PROGRAM_DATA_BYTES: u32 = 32;
/// Size of `struct pawl_layout`, bytes.
pub const LAYOUT_SIZE: usize = 24;

/// A field of a report: bit offset from the start of the report buffer (its report id
/// byte included, when the device numbers reports) and size; `bits == 0` = absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Field {
    /// Bit offset from the buffer's start.
    pub bit: u16,
    /// Size in bits (0 = absent).
    pub bits: u8,
    /// Logical minimum below 0 (two's complement).
    pub signed: bool,
}

impl Field {
    /// Whether the program can read and write it: 1 ..= 16 bits, its 4-byte window within
    /// the [`PROGRAM_DATA_BYTES`] the program reads.
    pub fn in_program_reach(&self) -> bool {
        self.bits == 0 || (self.bits <= 16 && u32::from(self.bit / 8) + 4 <= PROGRAM_DATA_BYTES)
    }
}

/// The mouse report's layout (`struct pawl_layout`, less the loader's `hidpp` and
/// `unit_v120`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MouseLayout {
    /// The report's id; 0 = the device numbers no reports.
    pub report_id: u8,
    /// Generic Desktop Wheel (0x01/0x38).
    pub wheel: Field,
    /// Consumer AC Pan (0x0C/0x238), 0 bits when absent.
    pub pan: Field,
    /// Generic Desktop X (0x01/0x30).
    pub x: Field,
    /// Generic Desktop Y (0x01/0x31).
    pub y: Field,
    /// The Button page's bits, first to last.
    pub buttons: Field,
    /// Whether the descriptor declares HID++ reports (input reports 0x10 or 0x11 on a
    /// vendor page).
    pub hidpp: bool,
}

/// Why a descriptor gave no layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// Longer than [`MAX_DESCRIPTOR_BYTES`].
    TooLong(usize),
    /// An item runs past the end, at this byte offset.
    Truncated(usize),
    /// A limit ([`MAX_USAGES`], [`MAX_PUSH`], report size) was exceeded, at this offset.
    Limit(usize, &'static str),
    /// No input report has a Generic Desktop Wheel.
    NoWheel,
    /// The wheel (or pan) lies where the program cannot reach it (beyond its first 32 bytes,
    /// or wider than 16 bits).
    OutOfReach(Field),
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::TooLong(n) => write!(
                f,
                "report descriptor of {n} bytes (at most {MAX_DESCRIPTOR_BYTES})"
            ),
            LayoutError::Truncated(at) => write!(f, "report descriptor truncated at byte {at}"),
            LayoutError::Limit(at, what) => {
                write!(f, "report descriptor over the limit of {what} at byte {at}")
            }
            LayoutError::NoWheel => write!(f, "no input report has a wheel"),
            LayoutError::OutOfReach(fl) => write!(
                f,
                "the wheel field (bit {}, {} bits) lies beyond what the program reads",
                fl.bit, fl.bits
            ),
        }
    }
}

impl std::error::Error for LayoutError {}

#[derive(Clone, Copy, Default)]
struct Globals {
    page: u32,
    logical_min: i32,
    size: u32,
    count: u32,
    report_id: u8,
}

/// Per report id (0 when unnumbered): bits counted so far, and the fields found in it.
#[derive(Clone, Copy, Default)]
struct Report {
    bits: u32,
    seen: bool,
    layout: MouseLayout,
}

/// One short item of a descriptor (HID 1.11 §6.2.2.2): where it starts, its type (0 main,
/// 1 global, 2 local) and tag, its data size in bytes, its data unsigned and sign-extended.
#[derive(Clone, Copy)]
struct Item {
    at: usize,
    kind: u8,
    tag: u8,
    size: usize,
    u: u32,
    s: i32,
}

/// The next short item of `desc` at or after `*pos`, skipping long items; `None` at the end.
fn next_item(desc: &[u8], pos: &mut usize) -> Result<Option<Item>, LayoutError> {
    while *pos < desc.len() {
        let at = *pos;
        let prefix = desc[at];
        if prefix == 0xfe {
            // Long item: size byte, tag byte, data.
            let size = *desc.get(at + 1).ok_or(LayoutError::Truncated(at))? as usize;
            *pos += 3 + size;
            if *pos > desc.len() {
                return Err(LayoutError::Truncated(at));
            }
            continue;
        }
        let size = [0, 1, 2, 4][usize::from(prefix & 3)];
        let data = desc
            .get(at + 1..at + 1 + size)
            .ok_or(LayoutError::Truncated(at))?;
        *pos += 1 + size;
        let mut u = 0u32;
        for (i, b) in data.iter().enumerate() {
            u |= u32::from(*b) << (8 * i);
        }
        // Sign-extended value for logical minimum.
        let s = match size {
            1 => i32::from(data[0] as i8),
            2 => i32::from(u as u16 as i16),
            4 => u as i32,
            _ => 0,
        };
        return Ok(Some(Item {
            at,
            kind: (prefix >> 2) & 3,
            tag: prefix >> 4,
            size,
            u,
            s,
        }));
    }
    Ok(None)
}

/// The walker's state: the globals and their stack, the locals of the next main item, and
/// what every input report holds so far.
struct Walker {
    g: Globals,
    stack: Vec<Globals>,
    usages: Vec<u32>,
    usage_min: Option<u32>,
    usage_max: Option<u32>,
    numbered: bool,
    reports: Vec<Report>,
    hidpp: bool,
    fields: u32,
}

impl Walker {
    fn new() -> Walker {
        Walker {
            g: Globals::default(),
            stack: Vec::new(),
            usages: Vec::new(),
            usage_min: None,
            usage_max: None,
            numbered: false,
            reports: vec![Report::default(); 256],
            hidpp: false,
            fields: 0,
        }
    }

    fn item(&mut self, it: Item) -> Result<(), LayoutError> {
        let local = |u: u32| if it.size == 4 { u } else { u & 0xffff };
        match (it.kind, it.tag) {
            // Main items.
            (0, 8) => self.input(it.at, it.u)?,
            // Output, Feature, Collection, End Collection: locals end (output and feature
            // reports count their own bits, not tracked here).
            (0, _) => self.end_locals(),
            // Global items.
            (1, 0) => self.g.page = it.u,
            (1, 1) => self.g.logical_min = it.s,
            (1, 7) => self.g.size = it.u,
            (1, 8) => {
                self.g.report_id = it.u as u8;
                self.numbered = true;
            }
            (1, 9) => self.g.count = it.u,
            (1, 0xa) => {
                if self.stack.len() == MAX_PUSH {
                    return Err(LayoutError::Limit(it.at, "push depth"));
                }
                self.stack.push(self.g);
            }
            (1, 0xb) => self.g = self.stack.pop().unwrap_or_default(),
            // Local items.
            (2, 0) => {
                if self.usages.len() == MAX_USAGES {
                    return Err(LayoutError::Limit(it.at, "usages"));
                }
                self.usages.push(local(it.u));
            }
            (2, 1) => self.usage_min = Some(local(it.u)),
            (2, 2) => self.usage_max = Some(local(it.u)),
            _ => {}
        }
        Ok(())
    }

    fn end_locals(&mut self) {
        self.usages.clear();
        self.usage_min = None;
        self.usage_max = None;
    }

    /// An Input item at byte `at` with `flags` (bit 0 constant, bit 1 variable): its fields
    /// are placed in their report, which grows by size × count bits.
    fn input(&mut self, at: usize, flags: u32) -> Result<(), LayoutError> {
        let g = self.g;
        let rid = usize::from(g.report_id);
        let total = g.size.saturating_mul(g.count);
        let bits = self.reports[rid].bits;
        if bits.saturating_add(total) > MAX_REPORT_BITS || g.size > 32 {
            return Err(LayoutError::Limit(at, "report size"));
        }
        self.reports[rid].seen = true;
        let constant = flags & 1 != 0;
        let variable = flags & 2 != 0;
        if !constant && variable && g.size > 0 {
            self.fields = self.fields.saturating_add(g.count);
            if self.fields > MAX_FIELDS {
                return Err(LayoutError::Limit(at, "fields"));
            }
            for i in 0..g.count {
                let Some(usage) = self.usage(i) else { continue };
                let field = Field {
                    bit: (bits + i * g.size) as u16,
                    bits: g.size as u8,
                    signed: g.logical_min < 0,
                };
                place(&mut self.reports[rid].layout, usage, field);
            }
        }
        if (g.page >> 8) == 0xff && (g.report_id == 0x10 || g.report_id == 0x11) {
            self.hidpp = true;
        }
        self.reports[rid].bits += total;
        self.end_locals();
        Ok(())
    }

    /// The usage (page << 16 | id) of the `i`th field of the Input item: its own Usage, or
    /// the last one when there are fewer (and no range), or from Usage Minimum/Maximum.
    fn usage(&self, i: u32) -> Option<u32> {
        let usage = self
            .usages
            .get(i as usize)
            .or(if self.usage_min.is_none() {
                self.usages.last()
            } else {
                None
            })
            .copied()
            .or_else(|| {
                let lo = self.usage_min?;
                let hi = self.usage_max.unwrap_or(lo);
                Some(lo.saturating_add(i).min(hi))
            })?;
        Some(if usage >> 16 == 0 {
            (self.g.page << 16) | usage
        } else {
            usage
        })
    }

    /// The layout of the first input report with a wheel, offsets counted from the
    /// buffer's start (past the report id byte when reports are numbered).
    fn finish(self) -> Result<MouseLayout, LayoutError> {
        let (rid, r) = self
            .reports
            .iter()
            .enumerate()
            .find(|(_, r)| r.seen && r.layout.wheel.bits != 0)
            .ok_or(LayoutError::NoWheel)?;
        let mut l = r.layout;
        l.report_id = rid as u8;
        l.hidpp = self.hidpp;
        if self.numbered {
            for f in [&mut l.wheel, &mut l.pan, &mut l.x, &mut l.y, &mut l.buttons] {
                if f.bits != 0 {
                    f.bit += 8;
                }
            }
        }
        for f in [l.wheel, l.pan] {
            if !f.in_program_reach() {
                return Err(LayoutError::OutOfReach(f));
            }
        }
        Ok(l)
    }
}

/// Records `field` in `l` when `usage` is one the program needs and not seen yet: X, Y,
/// Wheel, AC Pan, or a button (the buttons' field spans the first to the last).
fn place(l: &mut MouseLayout, usage: u32, field: Field) {
    match usage {
        0x0001_0030 if l.x.bits == 0 => l.x = field,
        0x0001_0031 if l.y.bits == 0 => l.y = field,
        0x0001_0038 if l.wheel.bits == 0 => l.wheel = field,
        0x000c_0238 if l.pan.bits == 0 => l.pan = field,
        _ if usage >> 16 == 9 => {
            if l.buttons.bits == 0 {
                l.buttons = Field {
                    signed: false,
                    ..field
                };
            } else {
                let end = field.bit + u16::from(field.bits);
                l.buttons.bits = (end - l.buttons.bit).min(255) as u8;
            }
        }
        _ => {}
    }
}

/// Finds the mouse report in `desc` (the bytes of sysfs `report_descriptor`).
pub fn mouse_layout(desc: &[u8]) -> Result<MouseLayout, LayoutError> {
    if desc.len() > MAX_DESCRIPTOR_BYTES {
        return Err(LayoutError::TooLong(desc.len()));
    }
    let mut walker = Walker::new();
    let mut pos = 0;
    while let Some(it) = next_item(desc, &mut pos)? {
        walker.item(it)?;
    }
    walker.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pawl_recordings::dir as recordings_dir;

    fn rdesc(name: &str) -> Vec<u8> {
        let p = recordings_dir().join(name);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn f(bit: u16, bits: u8, signed: bool) -> Field {
        Field { bit, bits, signed }
    }

    #[test]
    fn the_bluetooth_mx_master_3s_wheel_is_byte_6_of_report_2() {
        let l = mouse_layout(&rdesc(
            "hidreport--libinput-issue996-0005-046D-B034-0.rdesc",
        ))
        .unwrap();
        assert_eq!(
            l,
            MouseLayout {
                report_id: 2,
                buttons: f(8, 16, false),
                x: f(24, 12, true),
                y: f(36, 12, true),
                wheel: f(48, 8, true),
                pan: f(56, 8, true),
                hidpp: true,
            }
        );
    }

    #[test]
    fn the_unifying_child_descriptor_has_its_mouse_report_2() {
        // hid-logitech-dj's synthesised descriptor for an MX Master 3 (4082).
        let l = mouse_layout(&rdesc(
            "hidreport--libinput-issue366-0003-046D-4082-0.rdesc",
        ))
        .unwrap();
        assert_eq!(l.report_id, 2);
        assert_eq!(l.wheel.bits, 8);
        assert!(l.wheel.signed);
        assert_eq!(l.pan.bits, 8);
        assert_eq!(l.x.bits, 12);
        assert_eq!(l.buttons.bits, 16);
        assert!(l.hidpp);
        assert!(l.wheel.bit > l.y.bit);
    }

    #[test]
    fn every_recorded_mouse_descriptor_gives_a_layout_the_program_can_reach() {
        for name in [
            "hidreport--libinput-issue366-0003-046D-4082-0.rdesc",
            "hidreport--libinput-issue765-0003-046D-4071-0.rdesc",
            "hidreport--libinput-issue889-0003-046D-4090-0.rdesc",
            "hidreport--libinput-issue996-0003-046D-C548-0.rdesc",
            "hidreport--libinput-issue996-0005-046D-B034-0.rdesc",
        ] {
            let l = mouse_layout(&rdesc(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                l.wheel.in_program_reach() && l.wheel.bits > 0,
                "{name}: {l:?}"
            );
        }
    }

    #[test]
    fn a_descriptor_without_a_wheel_has_no_layout() {
        // Usage Page (Generic Desktop), Usage (Keyboard), Collection, Report Size 8,
        // Report Count 1, Input (Data, Array), End Collection.
        let kb = [
            0x05, 0x01, 0x09, 0x06, 0xa1, 0x01, 0x75, 0x08, 0x95, 0x01, 0x81, 0x00, 0xc0,
        ];
        assert_eq!(mouse_layout(&kb), Err(LayoutError::NoWheel));
    }

    #[test]
    fn truncated_and_oversized_descriptors_are_errors() {
        assert_eq!(mouse_layout(&[0x05]), Err(LayoutError::Truncated(0)));
        assert_eq!(
            mouse_layout(&[0x09, 0x38, 0x27, 1]),
            Err(LayoutError::Truncated(2))
        );
        assert_eq!(
            mouse_layout(&vec![0; MAX_DESCRIPTOR_BYTES + 1]),
            Err(LayoutError::TooLong(MAX_DESCRIPTOR_BYTES + 1))
        );
        let pushes = [0xa4u8; MAX_PUSH + 1];
        assert!(matches!(
            mouse_layout(&pushes),
            Err(LayoutError::Limit(_, _))
        ));
    }

    #[test]
    fn a_wheel_beyond_the_programs_reach_is_refused() {
        // Gen Desktop, Report Size 8, Count 40 constant padding, then a wheel byte at 40.
        let d = [
            0x05, 0x01, 0x75, 0x08, 0x95, 0x28, 0x81, 0x01, 0x09, 0x38, 0x15, 0x81, 0x95, 0x01,
            0x81, 0x06,
        ];
        assert!(matches!(mouse_layout(&d), Err(LayoutError::OutOfReach(_))));
    }
}
