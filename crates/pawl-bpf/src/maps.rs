//! What user space shares with the HID-BPF program (`src/bpf/pawl.h`): the ringbuf record,
//! the settings map's value, the device layout and the stats counters, as `#[repr(C)]`
//! twins whose layouts the tests compare with the C header compiled natively.

use crate::scroll::ScrollParamsC;
use pawl_engine::scroll::ScrollParams;

/// HID++ short report id (7 bytes).
pub const HIDPP_SHORT: u8 = 0x10;
/// HID++ long report id (20 bytes).
pub const HIDPP_LONG: u8 = 0x11;

/// What a [`RingRecord`] carries (`PAWL_RING_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingKind {
    /// HID++ 0x1B04 event 0, diverted buttons: `params` = up to 4 CIDs, big-endian u16.
    /// Dropped by the program (never reaches hidraw or the driver).
    DivertedButtons,
    /// HID++ 0x1B04 event 1, raw XY: `params` = dx, dy, big-endian i16. Dropped.
    RawXy,
    /// HID++ 1.0 0x41, a device (dis)connection from a receiver. Passed on.
    Connection,
    /// HID++ 0x1D4B event 0, wireless device status (reconnected). Passed on.
    WirelessStatus,
    /// [`FLAG_TRACE`] only (tests): one transformed axis step or glide tick, see
    /// [`RingRecord::trace`].
    WheelTrace,
}

impl RingKind {
    /// The kind of a record's `kind` byte; `None` for a value the program never writes.
    pub fn from_u8(k: u8) -> Option<RingKind> {
        Some(match k {
            0 => RingKind::DivertedButtons,
            1 => RingKind::RawXy,
            2 => RingKind::Connection,
            3 => RingKind::WirelessStatus,
            4 => RingKind::WheelTrace,
            _ => return None,
        })
    }
}

/// One ringbuf record, `struct pawl_ring_record`, 32 bytes: a HID++ notification as the
/// device sent it (report bytes 0..3 and up to 16 parameter bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingRecord {
    /// `bpf_ktime_get_ns()` when the program saw it: CLOCK_MONOTONIC, ns.
    pub time_ns: u64,
    /// [`RingKind`] as a byte.
    pub kind: u8,
    /// [`HIDPP_SHORT`] or [`HIDPP_LONG`].
    pub report_id: u8,
    /// HID++ device index (0xff Bluetooth direct, 1..=6 behind a receiver).
    pub device_index: u8,
    /// Feature index (HID++ 2.0), or the sub id (HID++ 1.0, 0x41).
    pub feature_index: u8,
    /// `function << 4 | software id` (software id 0: a notification).
    pub function: u8,
    /// Valid bytes in `params`: 3 (short report) or 16 (long).
    pub len: u8,
    /// Zero.
    pub pad: [u8; 2],
    /// The report's parameters.
    pub params: [u8; 16],
}

/// Size of a [`RingRecord`], bytes.
pub const RING_RECORD_SIZE: usize = 32;

impl RingRecord {
    /// Parses one record as the ringbuf hands it over; `None` unless exactly
    /// [`RING_RECORD_SIZE`] bytes.
    pub fn from_bytes(b: &[u8]) -> Option<RingRecord> {
        if b.len() != RING_RECORD_SIZE {
            return None;
        }
        let mut params = [0; 16];
        params.copy_from_slice(&b[16..32]);
        Some(RingRecord {
            time_ns: u64::from_ne_bytes(b[0..8].try_into().unwrap()),
            kind: b[8],
            report_id: b[9],
            device_index: b[10],
            feature_index: b[11],
            function: b[12],
            len: b[13],
            pad: [b[14], b[15]],
            params,
        })
    }

    /// The record's kind, `None` for an unknown byte.
    pub fn kind(&self) -> Option<RingKind> {
        RingKind::from_u8(self.kind)
    }

    /// A [`RingKind::WheelTrace`] record's `(axis, now_us, units in, units out)`: axis 0
    /// wheel, 1 pan (an input event's step), 2 wheel, 3 pan (a glide tick the program ran
    /// on its own injected report; units in 0); `now_us` the time the pipeline was given;
    /// device units.
    pub fn trace(&self) -> Option<(u8, u64, i32, i32)> {
        if self.kind() != Some(RingKind::WheelTrace) {
            return None;
        }
        let p = &self.params;
        Some((
            self.report_id,
            u64::from_ne_bytes(p[0..8].try_into().unwrap()),
            i32::from_ne_bytes(p[8..12].try_into().unwrap()),
            i32::from_ne_bytes(p[12..16].try_into().unwrap()),
        ))
    }

    /// The HID++ report it was copied from (id, device index, feature index, function,
    /// parameters): 7 bytes for a short report, 20 for a long one, as pawl-hidpp parses
    /// reports.
    pub fn report(&self) -> ([u8; 20], usize) {
        let mut r = [0u8; 20];
        r[0] = self.report_id;
        r[1] = self.device_index;
        r[2] = self.feature_index;
        r[3] = self.function;
        let n = usize::from(self.len.min(16));
        r[4..4 + n].copy_from_slice(&self.params[..n]);
        (r, if self.report_id == HIDPP_LONG { 20 } else { 7 })
    }
}

/// `PAWL_FLAG_WHEEL`: transform the wheel and the pan.
pub const FLAG_WHEEL: u8 = 1;

/// `PAWL_FLAG_TRACE`: a [`RingKind::WheelTrace`] record per transformed axis step (tests
/// only: it wakes the ring's reader on every wheel frame).
pub const FLAG_TRACE: u8 = 2;

/// The settings map's one value, `struct pawl_settings`, 56 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// The scroll pipeline's parameters; `quantum_v120` must be the layout's unit.
    pub scroll: ScrollParamsC,
    /// HID++ feature index of 0x1B04 (reprog controls) on the device; 0 = none (no
    /// notification is taken).
    pub reprog_index: u8,
    /// Feature index of 0x1D4B (wireless device status); 0 = none.
    pub wireless_status_index: u8,
    /// `FLAG_*` bits.
    pub flags: u8,
    /// Zero.
    pub pad: [u8; 5],
}

/// Size of [`Settings`], bytes.
pub const SETTINGS_SIZE: usize = 56;

impl Settings {
    /// The engine's `params` for a wheel whose unit is `unit_v120` (the output quantum),
    /// the wheel transformed, no HID++ feature known yet.
    pub fn new(params: &ScrollParams, unit_v120: u32) -> Settings {
        Settings {
            scroll: ScrollParamsC::from(&params.with_quantum(unit_v120)),
            flags: FLAG_WHEEL,
            ..Settings::default()
        }
    }

    /// The value's bytes.
    pub fn to_bytes(&self) -> [u8; SETTINGS_SIZE] {
        let mut b = [0u8; SETTINGS_SIZE];
        b[..48].copy_from_slice(&self.scroll.to_bytes());
        b[48] = self.reprog_index;
        b[49] = self.wireless_status_index;
        b[50] = self.flags;
        b
    }

    /// Parses a value of exactly [`SETTINGS_SIZE`] bytes.
    pub fn from_bytes(b: &[u8]) -> Option<Settings> {
        if b.len() != SETTINGS_SIZE {
            return None;
        }
        Some(Settings {
            scroll: ScrollParamsC::from_bytes(&b[..48])?,
            reprog_index: b[48],
            wireless_status_index: b[49],
            flags: b[50],
            pad: [0; 5],
        })
    }
}

/// The stats counters (`enum pawl_stat`), in key order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Input reports seen.
    pub reports: u64,
    /// Mouse reports (the layout's report id).
    pub mouse: u64,
    /// Mouse reports whose wheel or pan was transformed.
    pub wheel_frames: u64,
    /// HID++ reports seen.
    pub hidpp: u64,
    /// Ringbuf records submitted.
    pub ring_records: u64,
    /// Records lost because the ring was full.
    pub ring_full: u64,
    /// Reports dropped (gesture notifications).
    pub dropped: u64,
    /// Outputs clamped to the report field's range.
    pub saturated: u64,
    /// Glide ticks run in the kernel, per axis (each one step of a tail).
    pub glide_ticks: u64,
    /// Tail reports injected (`hid_bpf_input_report` succeeded).
    pub injected: u64,
    /// Tail steps lost: the glide timer could not be armed, the device was gone, or the
    /// kernel refused the injection.
    pub inject_failed: u64,
}

/// Number of stats counters (`PAWL_STAT_COUNT`).
pub const STAT_COUNT: u32 = 11;

impl Stats {
    /// From the counters in key order (missing ones 0).
    pub fn from_counters(c: &[u64]) -> Stats {
        let at = |i: usize| c.get(i).copied().unwrap_or(0);
        Stats {
            reports: at(0),
            mouse: at(1),
            wheel_frames: at(2),
            hidpp: at(3),
            ring_records: at(4),
            ring_full: at(5),
            dropped: at(6),
            saturated: at(7),
            glide_ticks: at(8),
            injected: at(9),
            inject_failed: at(10),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scroll::{ScrollAxisC, native};
    use std::mem::offset_of;

    #[test]
    fn every_shared_struct_has_the_layout_of_the_c_header() {
        let ours = [
            size_of::<ScrollParamsC>(),
            offset_of!(ScrollParamsC, quantum_v120),
            offset_of!(ScrollParamsC, gesture_gap_us),
            offset_of!(ScrollParamsC, carry_limit_q16),
            offset_of!(ScrollParamsC, invert_vertical),
            offset_of!(ScrollParamsC, inertia),
            offset_of!(ScrollParamsC, glide_decay_q16),
            offset_of!(ScrollParamsC, glide_interval_us),
            size_of::<ScrollAxisC>(),
            offset_of!(ScrollAxisC, bank),
            offset_of!(ScrollAxisC, lores),
            offset_of!(ScrollAxisC, out_sign),
            offset_of!(ScrollAxisC, has_deadline),
            offset_of!(ScrollAxisC, speed),
            offset_of!(ScrollAxisC, glide),
            offset_of!(ScrollAxisC, deadline),
            size_of::<RingRecord>(),
            offset_of!(RingRecord, kind),
            offset_of!(RingRecord, function),
            offset_of!(RingRecord, len),
            offset_of!(RingRecord, params),
            size_of::<Settings>(),
            offset_of!(Settings, reprog_index),
            offset_of!(Settings, wireless_status_index),
            offset_of!(Settings, flags),
            crate::layout::LAYOUT_SIZE,
            // pawl_layout: unit_v120, wheel, pan, buttons; sizeof(pawl_field).
            2,
            4,
            8,
            20,
            4,
            STAT_COUNT as usize,
        ];
        assert_eq!(native::layout(), ours);
        assert_eq!(size_of::<RingRecord>(), RING_RECORD_SIZE);
        assert_eq!(size_of::<Settings>(), SETTINGS_SIZE);
    }

    #[test]
    fn a_ring_record_parses_from_its_bytes_and_gives_back_its_report() {
        let mut b = [0u8; 32];
        b[..8].copy_from_slice(&123u64.to_ne_bytes());
        b[8..14].copy_from_slice(&[1, HIDPP_LONG, 0xff, 9, 0x10, 16]);
        b[16] = 0x12;
        b[17] = 0x34;
        let r = RingRecord::from_bytes(&b).unwrap();
        assert_eq!(r.time_ns, 123);
        assert_eq!(r.kind(), Some(RingKind::RawXy));
        let (rep, n) = r.report();
        assert_eq!(n, 20);
        assert_eq!(&rep[..6], &[HIDPP_LONG, 0xff, 9, 0x10, 0x12, 0x34]);
        assert_eq!(RingRecord::from_bytes(&b[..31]), None);
    }

    #[test]
    fn settings_round_trip_and_take_the_wheel_unit_as_quantum() {
        let s = Settings::new(&ScrollParams::default(), 8);
        assert_eq!(s.scroll.quantum_v120, 8);
        assert_eq!(s.flags, FLAG_WHEEL);
        assert_eq!(Settings::from_bytes(&s.to_bytes()), Some(s));
        assert_eq!(Settings::from_bytes(&[0; 55]), None);
    }
}
