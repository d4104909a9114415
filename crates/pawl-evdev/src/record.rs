//! Recorded input streams → evdev [`Event`]s, for `pawl replay` and the golden tests. Pure:
//! every parser takes the file's text.
//!
//! Formats ([`parse`] picks by content):
//!
//! - **evemu** (`evemu-record`, `evemu-describe`): `E: <sec>.<usec> <type hex> <code hex>
//!   <value>` event lines, with or without the device header (`N:` name, `I:` bus vendor
//!   product version in hex, `B:` capability bitmasks, `P:` properties, `A:` axes). A
//!   description on its own (a `.desc` file) parses to a recording without events.
//! - **libinput record** (YAML, `libinput record` version 1): the device's `name`, `id:
//!   [bus, vendor, product, version]` and `codes`, and the `- evdev:` event lists
//!   (`[sec, usec, type, code, value]`); `libinput:` entries are ignored.
//! - **DOM wheel traces** (JSON, `{"wheelEvents": [{"deltaMode", "deltaX", "deltaY",
//!   "timeStamp"}]}`, as browser test fixtures record them): each wheel event becomes one
//!   frame of `REL_HWHEEL_HI_RES` / `REL_WHEEL_HI_RES`. Scale: 1 px = 1 v120 unit (120 px per
//!   detent, about what Chromium and Firefox scroll for one notch); `deltaMode` 1 (lines) is
//!   40 v120 per line (3 lines per detent). DOM `deltaY` > 0 scrolls down, evdev
//!   `REL_WHEEL` > 0 scrolls up, so `REL_WHEEL_HI_RES = −deltaY`; `deltaX` keeps its sign.

//!
//! Limits (every input has one): text of at most [`MAX_TEXT_BYTES`] (256 MiB, checked by
//! [`parse`]; `pawl replay` stops reading one byte past it), at most [`MAX_EVENTS`]
//! (2,000,000) evdev events per recording in every format, times that never decrease
//! (each event's time at least the one before it). libinput record: `id` is four numbers
//! of 16 bits, `usec` is below 1,000,000, one device with events (or the one chosen with
//! [`parse_with`]). DOM: `deltaMode` 0 (pixels) or 1 (lines) — 2 (pages) has no v120
//! meaning — and `timeStamp` in 0..=10^13 ms.

use std::fmt;

use pawl_engine::units::Micros;
use pawl_engine::{Bus, DeviceInfo};
use serde::Deserialize;

use crate::codes::*;
use crate::frames::{Event, WheelCaps};

/// The most evdev events one recording may hold (2,000,000: over an hour of a mouse moved
/// without a pause at 500 Hz). Past it, parsing stops with an error at the line.
pub const MAX_EVENTS: usize = 2_000_000;
/// The largest recording text, bytes (256 MiB: 2,000,000 libinput record events at about
/// 70 bytes a line fit, with room for comments).
pub const MAX_TEXT_BYTES: usize = 256 << 20;
/// [`MAX_TEXT_BYTES`] in words, for messages.
pub const MAX_TEXT_SIZE: &str = "256 MiB";
/// The largest DOM `timeStamp`, ms (10^13 ms, about 317 years: covers both page-relative
/// times and `Date.now()` epoch times).
pub const MAX_DOM_TIME_MS: f64 = 1e13;

/// The file format of a recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// evemu event (and/or device description) lines.
    Evemu,
    /// `libinput record` YAML.
    LibinputRecord,
    /// A JSON list of DOM wheel events.
    DomWheel,
}

/// What a recording says about its device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordedDevice {
    /// Device name (`N:`, `name:`), empty when not given.
    pub name: Option<String>,
    /// `(bus, vendor, product, version)` (`I:`, `id:`).
    pub id: Option<(u16, u16, u16, u16)>,
    /// The `EV_REL` codes the device has (bit n = code n), when its capabilities are given.
    pub rel_codes: Option<u32>,
    /// Whether it has `ABS_X` or `ABS_MT_POSITION_X` (a touchpad or tablet), when given.
    pub has_abs_xy: Option<bool>,
    /// Whether it reports `MSC_SCAN` (hid-input sends one before every real key change),
    /// when its capabilities are given.
    pub msc_scan: Option<bool>,
}

impl RecordedDevice {
    /// Whether anything is known.
    pub fn is_empty(&self) -> bool {
        *self == RecordedDevice::default()
    }

    /// The engine's view of the device, when name or id is known. A device with absolute
    /// X/Y counts as a touchpad.
    pub fn info(&self) -> Option<DeviceInfo> {
        if self.name.is_none() && self.id.is_none() {
            return None;
        }
        let (bus, vendor, product, _) = self.id.unwrap_or_default();
        let rel = self.rel_codes.unwrap_or(0);
        Some(DeviceInfo {
            name: self.name.clone().unwrap_or_default(),
            bus: Bus(bus),
            vendor,
            product,
            has_wheel: rel & (1 << REL_WHEEL | 1 << REL_HWHEEL) != 0,
            is_touchpad: self.has_abs_xy.unwrap_or(false),
        })
    }

    /// Wheel codes from the capabilities, `None` when none were recorded.
    pub fn wheel_caps(&self) -> Option<WheelCaps> {
        let rel = self.rel_codes?;
        Some(WheelCaps {
            hires_wheel: rel & (1 << REL_WHEEL_HI_RES) != 0,
            hires_hwheel: rel & (1 << REL_HWHEEL_HI_RES) != 0,
        })
    }
}

/// A parsed recording: its device (as far as recorded) and its events in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recording {
    /// The format it was read from.
    pub format: Format,
    /// What the file says about the device.
    pub device: RecordedDevice,
    /// The events, times in µs as recorded.
    pub events: Vec<Event>,
}

impl Recording {
    /// Whether any event has `type_` and `code`.
    fn has_event(&self, type_: u16, code: u16) -> bool {
        self.events
            .iter()
            .any(|e| e.type_ == type_ && e.code == code)
    }

    /// Whether the source reports `MSC_SCAN`: from the recorded capabilities, else whether
    /// the stream carries one.
    pub fn msc_scan(&self) -> bool {
        self.device
            .msc_scan
            .unwrap_or_else(|| self.has_event(EV_MSC, MSC_SCAN))
    }

    /// Per axis `[vertical, horizontal]`, `(lo-res code missing, hi-res code missing)` for a
    /// source with only one of the two, as [`crate::stream::WheelFixup::new`] takes it: from
    /// the recorded `EV_REL` capabilities, else inferred from the events (a code the stream
    /// never carries while it carries the other one is taken as missing).
    pub fn missing_wheel_codes(&self) -> [(bool, bool); 2] {
        let has = |code: u16| match self.device.rel_codes {
            Some(rel) => rel & (1 << code) != 0,
            None => self.has_event(EV_REL, code),
        };
        crate::stream::missing_wheel_codes(has)
    }

    /// Wheel codes: from the recorded capabilities, else inferred from the events (a stream
    /// that carries `REL_WHEEL_HI_RES` comes from a device that has it).
    pub fn wheel_caps(&self) -> WheelCaps {
        if let Some(caps) = self.device.wheel_caps() {
            return caps;
        }
        WheelCaps {
            hires_wheel: self.has_event(EV_REL, REL_WHEEL_HI_RES),
            hires_hwheel: self.has_event(EV_REL, REL_HWHEEL_HI_RES),
        }
    }
}

/// The evemu-devices naming convention: the events of `NAME.WHAT.events` are described by
/// `NAME.desc`. Returns that file name, `None` for other names.
pub fn evemu_desc_name(events_file: &str) -> Option<String> {
    let stem = events_file.strip_suffix(".events")?;
    let (name, _what) = stem.rsplit_once('.')?;
    Some(format!("{name}.desc"))
}

impl Recording {
    /// Takes the device from `desc` (an evemu description) where this recording has none.
    pub fn describe_with(&mut self, desc: &Recording) {
        if self.device.is_empty() {
            self.device = desc.device.clone();
        }
    }
}

/// A parse error: 1-based line (0 when the format has no useful line) and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    /// 1-based line, 0 when unknown.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: ", self.line)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for RecordError {}

fn err(line: usize, message: impl Into<String>) -> RecordError {
    RecordError {
        line,
        message: message.into(),
    }
}

/// Parses a recording in any supported format, chosen by content: JSON starts with `{`,
/// libinput record has a `devices:` key, everything else is evemu. A libinput record with
/// several devices that have events is an error naming them ([`parse_with`] chooses one).
///
/// Errors: text larger than [`MAX_TEXT_BYTES`], more than [`MAX_EVENTS`] events, times
/// that go back, and each format's own (see the module docs), with the line where known.
pub fn parse(text: &str) -> Result<Recording, RecordError> {
    parse_with(text, None)
}

/// [`parse`], taking device `device` (0-based, in file order) of a libinput record that
/// has several. Formats with one device accept only `None` or `Some(0)`.
pub fn parse_with(text: &str, device: Option<usize>) -> Result<Recording, RecordError> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(err(
            0,
            format!(
                "the recording is larger than the {MAX_TEXT_SIZE} limit ({} bytes)",
                text.len()
            ),
        ));
    }
    let trimmed = text.trim_start();
    let libinput = !trimmed.starts_with('{')
        && text
            .lines()
            .any(|l| l.starts_with("devices:") || l.starts_with("libinput:"));
    if libinput {
        return parse_libinput_record_device(text, device);
    }
    if let Some(n) = device.filter(|n| *n > 0) {
        return Err(err(
            0,
            format!("device {n} was asked for, but only a libinput record holds several devices"),
        ));
    }
    if trimmed.starts_with('{') {
        parse_dom_wheel(text)
    } else {
        parse_evemu(text)
    }
}

/// Appends `e` (from line `n`, 0 when unknown; `what` names it when there is no line),
/// refusing a time before the previous event's and more than [`MAX_EVENTS`] events.
fn push_event(
    events: &mut Vec<Event>,
    e: Event,
    (n, what): (usize, &str),
    max: usize,
) -> Result<(), RecordError> {
    if let Some(last) = events.last()
        && e.time < last.time
    {
        let s = |t: Micros| format!("{}.{:06} s", t.0 / 1_000_000, t.0 % 1_000_000);
        return Err(err(
            n,
            format!(
                "{what}time {} is before the previous event's {}: a recording's times never go back",
                s(e.time),
                s(last.time)
            ),
        ));
    }
    if events.len() == max {
        return Err(err(
            n,
            format!("{what}more than {max} events, the limit of one recording"),
        ));
    }
    events.push(e);
    Ok(())
}

/// Parses evemu text: `E:` event lines and the optional device header. Lines starting
/// with `#` and unknown line types are skipped.
pub fn parse_evemu(text: &str) -> Result<Recording, RecordError> {
    evemu(text, MAX_EVENTS)
}

/// [`parse_evemu`] with at most `max` events.
fn evemu(text: &str, max: usize) -> Result<Recording, RecordError> {
    let mut device = RecordedDevice::default();
    let mut events = Vec::new();
    // The `B:` lines of one type come in order, 8 bytes each.
    let mut bits_seen = [0usize; 0x20];
    let mut abs_xy = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        let Some((tag, rest)) = line.split_once(':') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let hex = |s: &str| {
            u32::from_str_radix(s, 16).map_err(|_| err(n, format!("{s:?} is not a hex number")))
        };
        match tag {
            "E" => push_event(&mut events, evemu_event(&fields, n)?, (n, ""), max)?,
            "N" => device.name = Some(rest.trim().to_owned()),
            "I" => {
                if fields.len() != 4 {
                    return Err(err(n, "I: wants bus vendor product version (hex)"));
                }
                let v: Vec<u16> = fields
                    .iter()
                    .map(|f| {
                        u16::try_from(hex(f)?).map_err(|_| {
                            err(n, format!("I: {f:?} does not fit a 16-bit id (0..=ffff)"))
                        })
                    })
                    .collect::<Result<_, _>>()?;
                device.id = Some((v[0], v[1], v[2], v[3]));
            }
            "B" => {
                let Some((ty, bytes)) = fields.split_first() else {
                    return Err(err(n, "B: wants a type and bitmask bytes"));
                };
                let ty = hex(ty)? as usize;
                if ty >= bits_seen.len() {
                    continue;
                }
                let offset = bits_seen[ty] * 8;
                bits_seen[ty] += 1;
                for (j, b) in bytes.iter().enumerate() {
                    let b = hex(b)?;
                    for bit in 0..8 {
                        if b & (1 << bit) == 0 {
                            continue;
                        }
                        let code = (offset + j) * 8 + bit;
                        match ty as u16 {
                            EV_REL if code < 32 => {
                                *device.rel_codes.get_or_insert(0) |= 1 << code;
                            }
                            EV_ABS
                                if code == usize::from(ABS_X)
                                    || code == usize::from(ABS_MT_POSITION_X) =>
                            {
                                abs_xy = true;
                            }
                            EV_MSC if code == usize::from(MSC_SCAN) => {
                                device.msc_scan = Some(true);
                            }
                            _ => {}
                        }
                    }
                }
                if ty as u16 == EV_REL {
                    device.rel_codes.get_or_insert(0);
                }
                if ty as u16 == EV_SYN {
                    // The type bitmap: its presence means the capabilities are recorded.
                    device.rel_codes.get_or_insert(0);
                    device.has_abs_xy.get_or_insert(false);
                    device.msc_scan.get_or_insert(false);
                }
            }
            _ => {}
        }
    }
    if device.has_abs_xy.is_some() || abs_xy {
        device.has_abs_xy = Some(abs_xy);
    }
    Ok(Recording {
        format: Format::Evemu,
        device,
        events,
    })
}

/// `E: <sec>.<usec> <type hex> <code hex> <value>`. The fraction is decimal digits of a
/// second (`1.5` is 1.500000 s), padded or truncated to µs.
fn evemu_event(fields: &[&str], n: usize) -> Result<Event, RecordError> {
    let [time, ty, code, value] = fields else {
        return Err(err(n, "E: wants <sec>.<usec> <type> <code> <value>"));
    };
    let (sec, frac) = time
        .split_once('.')
        .ok_or_else(|| err(n, format!("{time:?} is not <sec>.<usec>")))?;
    let sec: u64 = sec
        .parse()
        .map_err(|_| err(n, format!("bad seconds {sec:?}")))?;
    let usec = fraction_micros(frac)
        .ok_or_else(|| err(n, format!("bad fraction of a second {frac:?}")))?;
    let ty = u16::from_str_radix(ty, 16).map_err(|_| err(n, format!("bad type {ty:?}")))?;
    let code = u16::from_str_radix(code, 16).map_err(|_| err(n, format!("bad code {code:?}")))?;
    let value: i32 = value
        .parse()
        .map_err(|_| err(n, format!("bad value {value:?} (a 32-bit signed integer)")))?;
    Ok(Event {
        time: micros(sec, usec).ok_or_else(|| err(n, format!("time {time} s is out of range")))?,
        type_: ty,
        code,
        value,
    })
}

/// The µs of a decimal fraction of a second: its first six digits, padded with zeros (`5`
/// → 500000, `0000051` → 5). `None` unless it is one or more ASCII digits.
fn fraction_micros(frac: &str) -> Option<u64> {
    if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = frac.as_bytes();
    Some((0..6).fold(0, |us, i| {
        us * 10 + digits.get(i).map_or(0, |d| u64::from(d - b'0'))
    }))
}

/// `sec` s + `usec` µs as [`Micros`], `None` when that overflows 64 bits of µs.
fn micros(sec: u64, usec: u64) -> Option<Micros> {
    sec.checked_mul(1_000_000)?.checked_add(usec).map(Micros)
}

#[derive(Deserialize)]
struct LiRecord {
    devices: Vec<LiDevice>,
}

#[derive(Deserialize)]
struct LiDevice {
    evdev: Option<LiEvdev>,
    #[serde(default)]
    events: Option<Vec<LiEntry>>,
}

#[derive(Deserialize)]
struct LiEvdev {
    name: Option<String>,
    id: Option<serde_saphyr::Spanned<Vec<u32>>>,
    codes: Option<std::collections::BTreeMap<u32, Option<Vec<u32>>>>,
}

#[derive(Deserialize)]
struct LiEntry {
    evdev: Option<Vec<serde_saphyr::Spanned<Vec<i64>>>>,
}

/// Parses `libinput record` YAML with one device that has events (or none): see
/// [`parse_libinput_record_device`].
pub fn parse_libinput_record(text: &str) -> Result<Recording, RecordError> {
    parse_libinput_record_device(text, None)
}

/// The YAML parser's limits for a libinput record: room for [`MAX_EVENTS`] events (each
/// `[sec, usec, type, code, value]` is 6 nodes and 7 parser events), nesting of 16 levels
/// (a record nests 5).
fn libinput_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = 6 * MAX_EVENTS + 100_000;
    budget.max_events = 8 * MAX_EVENTS + 200_000;
    budget.max_total_scalar_bytes = MAX_TEXT_BYTES;
    budget.max_depth = 16;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// A YAML parser error in plain words, at its line.
fn libinput_error(e: &serde_saphyr::Error) -> RecordError {
    use serde_saphyr::Error as E;
    let line = e.location().map_or(0, |l| l.line() as usize);
    let mut e = e;
    // A limit met while replaying an alias (`*a`) comes wrapped in an alias error.
    while let E::WithSnippet { error, .. } | E::AliasError { error, .. } = e {
        e = error;
    }
    let message = match e {
        E::Budget { .. } => format!(
            "too large or too deeply nested for a libinput record (at most {MAX_EVENTS} events, 16 levels)"
        ),
        E::DuplicateMappingKey { key, .. } => match key {
            Some(k) => format!("the key {} appears twice", shown(k)),
            None => "a key appears twice".to_owned(),
        },
        other => {
            // The parser's own words, without its advice to the programmer.
            let text = other.to_string();
            let mut text = text.lines().next().unwrap_or("").trim();
            text = text.strip_prefix("error: ").unwrap_or(text);
            // "line 2 column 8: expected …": the line is ours to print.
            if text.starts_with("line ")
                && let Some((_, rest)) = text.split_once(": ")
            {
                text = rest;
            }
            let text = text.split(", set ").next().unwrap_or(text);
            let text = text.split(" at line ").next().unwrap_or(text);
            let text = text
                .replace("sequence start", "a list")
                .replace("mapping start", "`key: value` lines")
                .replace("sequence", "list")
                .replace("mapping", "key: value table");
            format!("not a libinput record file: {}", shown(&text))
        }
    };
    err(line, message)
}

/// A string for a message, shortened past 80 characters.
fn shown(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(60).collect::<String>())
    }
}

/// Parses `libinput record` YAML: the device's `name`, `id` (exactly four 16-bit numbers)
/// and `codes`, and its `- evdev:` event lists. `device` chooses a device (0-based, in file
/// order); `None` takes the one device with events, or the first device when none has
/// any. Several devices with events and `None` is an error listing them.
pub fn parse_libinput_record_device(
    text: &str,
    device: Option<usize>,
) -> Result<Recording, RecordError> {
    libinput(text, device, MAX_EVENTS)
}

/// [`parse_libinput_record_device`] with at most `max` events.
fn libinput(text: &str, device: Option<usize>, max: usize) -> Result<Recording, RecordError> {
    let record: LiRecord = serde_saphyr::from_str_with_options(text, libinput_options())
        .map_err(|e| libinput_error(&e))?;
    let has_events = |d: &LiDevice| {
        d.events.as_ref().is_some_and(|es| {
            es.iter()
                .any(|e| e.evdev.as_ref().is_some_and(|v| !v.is_empty()))
        })
    };
    let name_of = |i: usize, d: &LiDevice| {
        let name = d
            .evdev
            .as_ref()
            .and_then(|e| e.name.as_deref())
            .unwrap_or("unnamed");
        format!("{i}: {}", shown(name))
    };
    let dev = match device {
        Some(n) => record.devices.get(n).ok_or_else(|| {
            err(
                0,
                format!(
                    "the record has {} device(s): device {n} does not exist (they count from 0)",
                    record.devices.len()
                ),
            )
        })?,
        None => {
            let with: Vec<(usize, &LiDevice)> = record
                .devices
                .iter()
                .enumerate()
                .filter(|(_, d)| has_events(d))
                .collect();
            match with.as_slice() {
                [] => record
                    .devices
                    .first()
                    .ok_or_else(|| err(0, "the libinput record lists no devices"))?,
                [(_, d)] => d,
                several => {
                    let names: Vec<String> = several.iter().map(|(i, d)| name_of(*i, d)).collect();
                    return Err(err(
                        0,
                        format!(
                            "the record has events of {} devices ({}): choose one with --device-index N",
                            several.len(),
                            names.join(", ")
                        ),
                    ));
                }
            }
        }
    };
    let mut device = RecordedDevice::default();
    if let Some(evdev) = &dev.evdev {
        device.name = evdev.name.clone();
        if let Some(spanned) = &evdev.id {
            let (id, line) = (&spanned.value, spanned.referenced.line() as usize);
            let fits = id.iter().all(|v| *v <= u32::from(u16::MAX));
            let [bus, vendor, product, version] = id.as_slice() else {
                return Err(err(
                    line,
                    format!(
                        "evdev id {id:?} is not [bus, vendor, product, version] (four numbers)"
                    ),
                ));
            };
            if !fits {
                return Err(err(
                    line,
                    format!("evdev id {id:?}: each number fits 16 bits (0..=65535)"),
                ));
            }
            device.id = Some((
                *bus as u16,
                *vendor as u16,
                *product as u16,
                *version as u16,
            ));
        }
        if let Some(codes) = &evdev.codes {
            let rel = codes
                .get(&u32::from(EV_REL))
                .cloned()
                .flatten()
                .unwrap_or_default();
            device.rel_codes = Some(
                rel.iter()
                    .filter(|c| **c < 32)
                    .fold(0, |acc, c| acc | 1 << c),
            );
            let abs = codes
                .get(&u32::from(EV_ABS))
                .cloned()
                .flatten()
                .unwrap_or_default();
            device.has_abs_xy = Some(
                abs.iter()
                    .any(|c| *c == u32::from(ABS_X) || *c == u32::from(ABS_MT_POSITION_X)),
            );
            let msc = codes
                .get(&u32::from(EV_MSC))
                .cloned()
                .flatten()
                .unwrap_or_default();
            device.msc_scan = Some(msc.contains(&u32::from(MSC_SCAN)));
        }
    }
    let mut events = Vec::new();
    for entry in dev.events.iter().flatten() {
        for e in entry.evdev.iter().flatten() {
            let n = e.referenced.line() as usize;
            push_event(&mut events, libinput_event(&e.value, n)?, (n, ""), max)?;
        }
    }
    Ok(Recording {
        format: Format::LibinputRecord,
        device,
        events,
    })
}

/// One `[sec, usec, type, code, value]` of a `libinput record` evdev list, at line `n`,
/// with every field checked to fit its `struct input_event` field.
fn libinput_event(e: &[i64], n: usize) -> Result<Event, RecordError> {
    let &[sec, usec, ty, code, value] = e else {
        return Err(err(
            n,
            format!("evdev event {e:?} is not [sec, usec, type, code, value]"),
        ));
    };
    if !(0..1_000_000).contains(&usec) {
        return Err(err(
            n,
            format!("usec {usec} is not a microsecond count: 0..=999999"),
        ));
    }
    let time = u64::try_from(sec)
        .ok()
        .zip(u64::try_from(usec).ok())
        .and_then(|(sec, usec)| micros(sec, usec))
        .ok_or_else(|| {
            err(
                n,
                format!("time {sec} s {usec} µs is out of range (0..=2^64-1 µs)"),
            )
        })?;
    let field = |v: i64, what: &str| {
        u16::try_from(v).map_err(|_| err(n, format!("{what} {v} does not fit 16 bits (0..=65535)")))
    };
    Ok(Event {
        time,
        type_: field(ty, "type")?,
        code: field(code, "code")?,
        value: i32::try_from(value).map_err(|_| {
            err(
                n,
                format!("value {value} does not fit a 32-bit signed integer"),
            )
        })?,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DomTrace {
    wheel_events: Vec<DomWheel>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DomWheel {
    #[serde(default)]
    delta_mode: u32,
    #[serde(default)]
    delta_x: f64,
    #[serde(default)]
    delta_y: f64,
    time_stamp: f64,
}

/// v120 units per DOM `deltaMode` unit: pixels 1, lines 40.
const DOM_V120_PER_PX: f64 = 1.0;
const DOM_V120_PER_LINE: f64 = 40.0;

/// Parses a DOM wheel trace (JSON). Fractional deltas are carried, so the sums are exact.
pub fn parse_dom_wheel(text: &str) -> Result<Recording, RecordError> {
    dom(text, MAX_EVENTS)
}

/// [`parse_dom_wheel`] with at most `max` events.
fn dom(text: &str, max: usize) -> Result<Recording, RecordError> {
    let trace: DomTrace = serde_json::from_str(text).map_err(|e| {
        err(
            e.line(),
            format!("not a DOM wheel trace ({{\"wheelEvents\": [...]}}): {e}"),
        )
    })?;
    let mut events = Vec::new();
    let (mut carry_x, mut carry_y) = (0.0f64, 0.0f64);
    for (i, w) in trace.wheel_events.iter().enumerate() {
        let scale = match w.delta_mode {
            0 => DOM_V120_PER_PX,
            1 => DOM_V120_PER_LINE,
            2 => {
                return Err(err(
                    0,
                    format!(
                        "wheel event {i}: deltaMode 2 (pages) has no wheel distance: pawl reads 0 (pixels) and 1 (lines)"
                    ),
                ));
            }
            m => {
                return Err(err(
                    0,
                    format!(
                        "wheel event {i}: deltaMode {m} is not a DOM delta mode: 0 (pixels), 1 (lines) or 2 (pages)"
                    ),
                ));
            }
        };
        if !(0.0..=MAX_DOM_TIME_MS).contains(&w.time_stamp) {
            return Err(err(
                0,
                format!(
                    "wheel event {i}: timeStamp {} ms is out of range: 0..=1e13 ms",
                    if w.time_stamp.abs() >= 1e6 {
                        format!("{:e}", w.time_stamp)
                    } else {
                        w.time_stamp.to_string()
                    }
                ),
            ));
        }
        let time = Micros((w.time_stamp * 1000.0).round() as u64);
        let what = format!("wheel event {i}: ");
        carry_x += w.delta_x * scale;
        carry_y -= w.delta_y * scale;
        let (x, y) = (carry_x.trunc(), carry_y.trunc());
        carry_x -= x;
        carry_y -= y;
        let range = f64::from(i32::MIN)..=f64::from(i32::MAX);
        if !range.contains(&x) || !range.contains(&y) {
            return Err(err(
                0,
                format!(
                    "wheel event {i}: delta ({}, {}) v120 does not fit 32 bits",
                    shown(&format!("{x:e}")),
                    shown(&format!("{y:e}"))
                ),
            ));
        }
        if x != 0.0 {
            let e = Event {
                time,
                type_: EV_REL,
                code: REL_HWHEEL_HI_RES,
                value: x as i32,
            };
            push_event(&mut events, e, (0, &what), max)?;
        }
        if y != 0.0 {
            let e = Event {
                time,
                type_: EV_REL,
                code: REL_WHEEL_HI_RES,
                value: y as i32,
            };
            push_event(&mut events, e, (0, &what), max)?;
        }
        let syn = Event {
            time,
            type_: EV_SYN,
            code: SYN_REPORT,
            value: 0,
        };
        push_event(&mut events, syn, (0, &what), max)?;
    }
    Ok(Recording {
        format: Format::DomWheel,
        device: RecordedDevice {
            rel_codes: Some(1 << REL_WHEEL_HI_RES | 1 << REL_HWHEEL_HI_RES),
            ..RecordedDevice::default()
        },
        events,
    })
}

/// Formats one event as an evemu `E:` line (without newline).
pub fn evemu_line(e: &Event) -> String {
    format!(
        "E: {}.{:06} {:04x} {:04x} {}",
        e.time.0 / 1_000_000,
        e.time.0 % 1_000_000,
        e.type_,
        e.code,
        e.value
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVEMU: &str = "\
# EVEMU 1.3
N: Logitech MX Master 3S
I: 0005 046d b034 0011
P: 00 00 00 00 00 00 00 00
B: 00 17 00 00 00 00 00 00 00
B: 02 43 19 00 00 00 00 00 00
E: 0.000000 0002 000b 16
E: 0.000000 0000 0000 0
E: 0.035938 0002 000b -24
E: 0.035938 0002 0008 -1
E: 0.035938 0000 0000 0
";

    #[test]
    fn evemu_header_gives_identity_and_hires_caps() {
        let r = parse(EVEMU).unwrap();
        assert_eq!(r.format, Format::Evemu);
        let info = r.device.info().unwrap();
        assert_eq!(info.name, "Logitech MX Master 3S");
        assert_eq!(
            (info.bus, info.vendor, info.product),
            (Bus::BLUETOOTH, 0x046d, 0xb034)
        );
        assert!(info.has_wheel && !info.is_touchpad);
        // 0x43 = REL_X REL_Y REL_HWHEEL; 0x19 = REL_WHEEL, REL_WHEEL_HI_RES, REL_HWHEEL_HI_RES.
        assert_eq!(
            r.wheel_caps(),
            WheelCaps {
                hires_wheel: true,
                hires_hwheel: true
            }
        );
        assert_eq!(r.events.len(), 5);
        assert_eq!(
            r.events[2],
            Event {
                time: Micros(35_938),
                type_: EV_REL,
                code: REL_WHEEL_HI_RES,
                value: -24
            }
        );
    }

    #[test]
    fn evemu_without_header_has_no_identity_and_infers_hires_from_the_events() {
        let r = parse("E: 1.000001 0002 000c 120\nE: 1.000001 0000 0000 0\n").unwrap();
        assert!(r.device.is_empty());
        assert_eq!(r.device.info(), None);
        assert_eq!(
            r.wheel_caps(),
            WheelCaps {
                hires_wheel: false,
                hires_hwheel: true
            }
        );
        assert_eq!(r.events[0].time, Micros(1_000_001));
    }

    #[test]
    fn touchpad_description_is_a_touchpad() {
        let desc = "N: SynPS/2 Synaptics TouchPad\nI: 0011 0002 0007 01b1\nB: 00 0b 00 00 00 00 00 00 00\nB: 03 03 00 00 11 00 80 60 06\n";
        let info = parse(desc).unwrap().device.info().unwrap();
        assert!(info.is_touchpad && !info.has_wheel);
        assert_eq!(info.bus, Bus::I8042);
    }

    #[test]
    fn events_file_names_its_description_by_the_evemu_devices_convention() {
        assert_eq!(
            evemu_desc_name("SynPS2 Synaptics TouchPad.two-finger-vert-scroll.events").as_deref(),
            Some("SynPS2 Synaptics TouchPad.desc")
        );
        assert_eq!(evemu_desc_name("plain.events"), None);
        assert_eq!(evemu_desc_name("x.desc"), None);
    }

    #[test]
    fn evemu_errors_name_the_line() {
        let e = parse("E: 0.0 0002 0000 1\nE: zero 0002 0000 1\n").unwrap_err();
        assert_eq!(e.to_string(), "line 2: \"zero\" is not <sec>.<usec>");
        let e = parse("E: 0.0 0002 0000\n").unwrap_err();
        assert_eq!(e.line, 1);
    }

    #[test]
    fn evemu_fraction_is_decimal_digits_of_a_second() {
        let r = parse(
            "E: 1.5 0002 0000 1\nE: 2.25 0002 0000 1\nE: 3.0000051 0002 0000 1\nE: 4.000007 0002 0000 1\n",
        )
        .unwrap();
        let t: Vec<u64> = r.events.iter().map(|e| e.time.0).collect();
        assert_eq!(t, [1_500_000, 2_250_000, 3_000_005, 4_000_007]);
        let e = parse("E: 1.-5 0002 0000 1\n").unwrap_err();
        assert_eq!(e.to_string(), "line 1: bad fraction of a second \"-5\"");
    }

    #[test]
    fn evemu_out_of_range_fields_are_located_errors_not_truncated() {
        let e = parse("N: x\nI: 0005 1046d b034 0011\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: I: \"1046d\" does not fit a 16-bit id (0..=ffff)"
        );
        let e = parse("E: 18446744073710.000000 0002 0000 1\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("out of range"), "{e}");
        let e = parse("E: 0.0 0002 0000 2147483648\n").unwrap_err();
        assert!(e.message.contains("2147483648"), "{e}");
        // The largest time that fits is fine.
        let r = parse("E: 18446744073709.551615 0002 0000 1\n").unwrap();
        assert_eq!(r.events[0].time, Micros(u64::MAX));
    }

    #[test]
    fn libinput_record_fields_that_do_not_fit_are_errors_with_their_line() {
        let doc = |event: &str| {
            format!(
                "devices:\n  - evdev:\n      name: X\n    events:\n      - evdev:\n        - [0, 0, 2, 11, 120]\n        - {event}\n"
            )
        };
        for (event, what) in [
            ("[9223372036854775807, 0, 2, 11, 120]", "out of range"),
            ("[-1, 0, 2, 11, 120]", "out of range"),
            ("[0, 0, 65538, 11, 120]", "type 65538"),
            ("[0, 0, 2, -1, 120]", "code -1"),
            ("[0, 0, 2, 11, 4294967296]", "value 4294967296"),
            ("[0, 0, 2, 11]", "is not [sec, usec, type, code, value]"),
        ] {
            let e = parse(&doc(event)).unwrap_err();
            assert_eq!(e.line, 7, "{event}: {e}");
            assert!(e.message.contains(what), "{event}: {e}");
        }
        assert_eq!(parse(&doc("[1, 5, 0, 0, 0]")).unwrap().events.len(), 2);
    }

    const LIBINPUT: &str = r#"version: 1
ndevices: 1
libinput:
  version: "1.25.0"
system:
  os: "debian:12"
devices:
- node: /dev/input/event7
  evdev:
    # Name: Logitech MX Master 3S
    name: "Logitech MX Master 3S"
    id: [5, 1133, 45108, 17]
    codes:
      0: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] # EV_SYN
      1: [272, 273, 274, 275, 276, 277, 278, 279] # EV_KEY
      2: [0, 1, 6, 8, 11, 12] # EV_REL
      4: [4] # EV_MSC
    properties: []
  hid: []
  udev:
    properties:
    - ID_INPUT=1
    - ID_INPUT_MOUSE=1
  quirks:
  events:
  # Current time is 10:00:00
  - evdev:
    - [  0,      0,   2,  11,      15] # EV_REL / REL_WHEEL_HI_RES        15
    - [  0,      0,   0,   0,       0] # ------------ SYN_REPORT (0) ---------- +0ms
  - libinput:
    - {time: 0.000000, type: POINTER_SCROLL_WHEEL, axes: [0.00, -1.88], v120: [0.0, 15.0]}
  - evdev:
    - [  0,   8123,   1, 275,       1] # EV_KEY / BTN_SIDE                  1
    - [  0,   8123,   0,   0,       0] # ------------ SYN_REPORT (0) ---------- +8ms
"#;

    #[test]
    fn libinput_record_gives_identity_caps_and_evdev_events() {
        let r = parse(LIBINPUT).unwrap();
        assert_eq!(r.format, Format::LibinputRecord);
        let info = r.device.info().unwrap();
        assert_eq!(
            (info.bus, info.vendor, info.product),
            (Bus::BLUETOOTH, 0x046d, 0xb034)
        );
        assert_eq!(info.name, "Logitech MX Master 3S");
        assert!(r.wheel_caps().hires_wheel && r.wheel_caps().hires_hwheel);
        assert_eq!(r.events.len(), 4);
        assert_eq!(
            r.events[2],
            Event {
                time: Micros(8_123),
                type_: EV_KEY,
                code: BTN_SIDE,
                value: 1
            }
        );
    }

    #[test]
    fn libinput_record_that_is_not_yaml_is_an_error() {
        assert!(parse("devices: [unclosed\n").is_err());
    }

    #[test]
    fn dom_wheel_trace_becomes_hires_frames_with_evdev_signs() {
        let json = r#"{"wheelEvents": [
            {"deltaMode": 0, "deltaX": 0, "deltaY": -2.5, "timeStamp": 10},
            {"deltaMode": 0, "deltaX": 3, "deltaY": -2.5, "timeStamp": 18.5},
            {"deltaMode": 1, "deltaX": 0, "deltaY": 1, "timeStamp": 30}
        ]}"#;
        let r = parse(json).unwrap();
        assert_eq!(r.format, Format::DomWheel);
        let lines: Vec<String> = r.events.iter().map(evemu_line).collect();
        assert_eq!(
            lines,
            [
                "E: 0.010000 0002 000b 2",
                "E: 0.010000 0000 0000 0",
                "E: 0.018500 0002 000c 3",
                "E: 0.018500 0002 000b 3",
                "E: 0.018500 0000 0000 0",
                "E: 0.030000 0002 000b -40",
                "E: 0.030000 0000 0000 0",
            ]
        );
    }

    // ---- Hostile recordings ----

    #[test]
    fn evemu_times_that_go_back_are_rejected_with_the_line() {
        let e =
            parse("E: 1.000000 0002 0000 1\nE: 1.000000 0000 0000 0\nE: 0.500000 0002 0000 1\n")
                .unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 3: time 0.500000 s is before the previous event's 1.000000 s: a recording's times never go back"
        );
    }

    #[test]
    fn libinput_times_that_go_back_are_rejected_with_the_line() {
        let doc = "devices:\n  - evdev:\n      name: X\n    events:\n      - evdev:\n        - [2, 0, 2, 11, 120]\n        - [1, 0, 0, 0, 0]\n";
        let e = parse(doc).unwrap_err();
        assert_eq!(e.line, 7, "{e}");
        assert!(e.message.contains("never go back"), "{e}");
    }

    #[test]
    fn dom_times_that_are_negative_absurd_or_go_back_are_rejected() {
        let one = |t: &str| format!(r#"{{"wheelEvents": [{{"deltaY": 1, "timeStamp": {t}}}]}}"#);
        for t in ["-5", "1e30"] {
            let e = parse(&one(t)).unwrap_err();
            assert_eq!(
                e.message,
                format!("wheel event 0: timeStamp {t} ms is out of range: 0..=1e13 ms")
            );
        }
        let back =
            r#"{"wheelEvents": [{"deltaY": 1, "timeStamp": 20}, {"deltaY": 1, "timeStamp": 10}]}"#;
        let e = parse(back).unwrap_err();
        assert!(
            e.message
                .starts_with("wheel event 1: time 0.010000 s is before"),
            "{e}"
        );
        // Epoch times (Date.now()) are fine.
        parse(&one("1764600000000")).unwrap();
    }

    #[test]
    fn dom_delta_mode_other_than_pixels_or_lines_is_rejected_by_name() {
        let mode = |m: u32| {
            format!(r#"{{"wheelEvents": [{{"deltaMode": {m}, "deltaY": 1, "timeStamp": 1}}]}}"#)
        };
        let e = parse(&mode(7)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "wheel event 0: deltaMode 7 is not a DOM delta mode: 0 (pixels), 1 (lines) or 2 (pages)"
        );
        let e = parse(&mode(2)).unwrap_err();
        assert!(
            e.message
                .contains("deltaMode 2 (pages) has no wheel distance"),
            "{e}"
        );
        parse(&mode(0)).unwrap();
        parse(&mode(1)).unwrap();
    }

    fn one_device(id: &str, event: &str) -> String {
        format!(
            "devices:\n  - evdev:\n      name: X\n      id: {id}\n    events:\n      - evdev:\n        - {event}\n"
        )
    }

    #[test]
    fn libinput_id_must_be_four_16_bit_numbers() {
        let e = parse(&one_device("[5, 1133]", "[0, 0, 2, 11, 120]")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 4: evdev id [5, 1133] is not [bus, vendor, product, version] (four numbers)"
        );
        let e = parse(&one_device("[5, 1133, 70000, 1]", "[0, 0, 2, 11, 120]")).unwrap_err();
        assert!(e.message.contains("fits 16 bits"), "{e}");
        let r = parse(&one_device("[5, 1133, 45108, 17]", "[0, 0, 2, 11, 120]")).unwrap();
        assert_eq!(r.device.id, Some((5, 0x046d, 0xb034, 17)));
    }

    #[test]
    fn libinput_usec_of_a_second_or_more_is_rejected_with_the_line() {
        let e = parse(&one_device(
            "[5, 1133, 45108, 17]",
            "[0, 2000000, 2, 11, 120]",
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 7: usec 2000000 is not a microsecond count: 0..=999999"
        );
    }

    const TWO_DEVICES: &str = "devices:\n  - evdev:\n      name: Mouse A\n    events:\n      - evdev:\n        - [0, 0, 2, 11, 120]\n  - evdev:\n      name: Mouse B\n    events:\n      - evdev:\n        - [0, 5, 2, 11, -120]\n        - [0, 5, 0, 0, 0]\n";

    #[test]
    fn a_second_device_with_events_is_an_error_unless_one_is_chosen() {
        let e = parse(TWO_DEVICES).unwrap_err();
        assert_eq!(
            e.message,
            "the record has events of 2 devices (0: Mouse A, 1: Mouse B): choose one with --device-index N"
        );
        let a = parse_with(TWO_DEVICES, Some(0)).unwrap();
        assert_eq!(
            (a.device.name.as_deref(), a.events.len()),
            (Some("Mouse A"), 1)
        );
        let b = parse_with(TWO_DEVICES, Some(1)).unwrap();
        assert_eq!(
            (b.device.name.as_deref(), b.events.len()),
            (Some("Mouse B"), 2)
        );
        assert!(
            parse_with(TWO_DEVICES, Some(2))
                .unwrap_err()
                .message
                .contains("device 2 does not exist")
        );
        assert!(
            parse_with(EVEMU, Some(1))
                .unwrap_err()
                .message
                .contains("only a libinput record")
        );
    }

    #[test]
    fn a_libinput_device_without_events_parses_as_a_device_without_events() {
        let r = parse("version: 1\ndevices:\n- node: /dev/input/event7\n  evdev:\n    name: X\n    id: [3, 1133, 49291, 1]\n  events: []\n").unwrap();
        assert_eq!(r.format, Format::LibinputRecord);
        assert!(r.events.is_empty());
        assert_eq!(r.device.name.as_deref(), Some("X"));
        let r = parse("version: 1\ndevices:\n- node: /dev/input/event7\n").unwrap();
        assert_eq!(r.format, Format::LibinputRecord);
        assert!(r.events.is_empty() && r.device.is_empty());
    }

    #[test]
    fn yaml_errors_are_in_plain_words_without_library_advice() {
        let e = parse("devices:\n- evdev:\n    name: A\n    name: B\n").unwrap_err();
        assert_eq!(e.to_string(), "line 4: the key name appears twice");
        let e = parse("version: 1\ndevices:\n").unwrap_err();
        assert!(!e.message.contains("sequence"), "{e}");
        let deep = format!(
            "devices:\n- evdev:\n    name: X\n  hid: {}{}\n",
            "[".repeat(100),
            "]".repeat(100)
        );
        let e = parse(&deep).unwrap_err();
        assert!(e.message.contains("too large or too deeply nested"), "{e}");
        assert!(
            !e.message.contains("budget") && !e.message.contains("Nodes"),
            "{e}"
        );
    }

    #[test]
    fn a_yaml_alias_bomb_is_too_large_in_plain_words() {
        // Eleven levels of ten aliases each: 10^12 nodes if expanded.
        let mut doc = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = format!("*a{}", i - 1);
            doc += &format!("a{i}: &a{i} [{}]\n", [p.as_str(); 10].join(", "));
        }
        doc += "devices: []\n";
        let e = parse(&doc).unwrap_err();
        assert!(e.message.contains("too large or too deeply nested"), "{e}");
        assert!(
            !e.message.contains("budget") && !e.message.contains("Anchor"),
            "{e}"
        );
    }

    #[test]
    fn a_libinput_record_past_the_yaml_parsers_default_budget_is_read() {
        // 45,000 events are 270,000 YAML nodes: more than serde-saphyr's default budget
        // (250,000), within pawl's (room for MAX_EVENTS).
        let mut doc = String::from("devices:\n- evdev:\n    name: X\n  events:\n  - evdev:\n");
        for i in 0..45_000u64 {
            doc += &format!("    - [{}, {}, 2, 11, 15]\n", i / 1000, (i % 1000) * 1000);
        }
        assert_eq!(parse(&doc).unwrap().events.len(), 45_000);
    }

    #[test]
    fn more_events_than_the_limit_are_an_error_at_the_line_in_every_format() {
        // The limit is MAX_EVENTS (2,000,000); the same rule, checked with a limit of 3.
        assert_eq!(MAX_EVENTS, 2_000_000);
        let text = "E: 0.000000 0000 0000 0\n".repeat(4);
        let e = evemu(&text, 3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 4: more than 3 events, the limit of one recording"
        );
        assert_eq!(
            evemu(&text[..text.len() / 4 * 3], 3).unwrap().events.len(),
            3
        );
        let doc = "devices:\n- evdev:\n    name: X\n  events:\n  - evdev:\n    - [0, 0, 2, 11, 15]\n    - [0, 0, 0, 0, 0]\n    - [0, 1, 2, 11, 15]\n    - [0, 1, 0, 0, 0]\n";
        let e = libinput(doc, None, 3).unwrap_err();
        assert_eq!(e.line, 9, "{e}");
        let json =
            r#"{"wheelEvents": [{"deltaY": 1, "timeStamp": 1}, {"deltaY": 1, "timeStamp": 2}]}"#;
        let e = dom(json, 3).unwrap_err();
        assert_eq!(
            e.message,
            "wheel event 1: more than 3 events, the limit of one recording"
        );
    }

    #[test]
    fn a_text_larger_than_the_limit_is_refused_before_parsing() {
        let text = "#".repeat(MAX_TEXT_BYTES + 1);
        let e = parse(&text).unwrap_err();
        assert!(
            e.message
                .starts_with("the recording is larger than the 256 MiB limit"),
            "{e}"
        );
    }
}
