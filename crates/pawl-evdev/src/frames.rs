//! evdev bytes ⇄ engine frames: the hot path's translation layer.
//!
//! [`Decoder::decode`] splits a buffer of `struct input_event`s (as `read(2)` returns them
//! from `/dev/input/eventN`) at `SYN_REPORT` into [`FrameIn`]s, each with the raw bytes it
//! came from so a [`pawl_engine::Verdict::Forward`] frame can be written back bit-exact.
//! [`encode_frame`] turns a [`FrameOut`] into the bytes of one `write(2)` to a uinput device.

use pawl_engine::frame::{Buttons, FrameIn, FrameOut, WheelIn};
use pawl_engine::units::{Button, Micros, V120_PER_DETENT};

use crate::codes::*;

/// Size of `struct input_event` on 64-bit Linux: `struct timeval` (2 × 8 bytes), `__u16
/// type`, `__u16 code`, `__s32 value` (`include/uapi/linux/input.h`).
pub const EVENT_SIZE: usize = 24;

/// One evdev event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// Timestamp (µs on the device's clock; pawl selects `CLOCK_MONOTONIC`).
    pub time: Micros,
    /// `EV_*` type.
    pub type_: u16,
    /// Code within the type.
    pub code: u16,
    /// Value.
    pub value: i32,
}

impl Event {
    /// An event with a zero timestamp (uinput stamps written events itself).
    pub const fn new(type_: u16, code: u16, value: i32) -> Event {
        Event {
            time: Micros(0),
            type_,
            code,
            value,
        }
    }

    /// Reads one event from its native-endian `struct input_event` bytes.
    #[inline]
    pub fn from_bytes(b: &[u8; EVENT_SIZE]) -> Event {
        Event {
            time: Event::time_of(b),
            ..Event::untimed(b)
        }
    }

    /// The event's type, code and value, with a zero time: the hot path reads the time of
    /// the `SYN_REPORT` only ([`Event::time_of`]).
    #[inline]
    pub fn untimed(b: &[u8; EVENT_SIZE]) -> Event {
        Event {
            time: Micros(0),
            type_: u16::from_ne_bytes([b[16], b[17]]),
            code: u16::from_ne_bytes([b[18], b[19]]),
            value: i32::from_ne_bytes([b[20], b[21], b[22], b[23]]),
        }
    }

    /// The timestamp of an event's bytes, µs (negative fields read as 0, saturating).
    #[inline]
    pub fn time_of(b: &[u8; EVENT_SIZE]) -> Micros {
        let sec = i64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let usec = i64::from_ne_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
        Micros(
            (sec.max(0) as u64)
                .saturating_mul(1_000_000)
                .saturating_add(usec.max(0) as u64),
        )
    }

    /// The native-endian `struct input_event` bytes.
    #[inline]
    pub fn to_bytes(&self) -> [u8; EVENT_SIZE] {
        let mut b = [0u8; EVENT_SIZE];
        let sec = (self.time.0 / 1_000_000) as i64;
        let usec = (self.time.0 % 1_000_000) as i64;
        b[0..8].copy_from_slice(&sec.to_ne_bytes());
        b[8..16].copy_from_slice(&usec.to_ne_bytes());
        b[16..18].copy_from_slice(&self.type_.to_ne_bytes());
        b[18..20].copy_from_slice(&self.code.to_ne_bytes());
        b[20..24].copy_from_slice(&self.value.to_ne_bytes());
        b
    }

    /// Whether this is the `SYN_REPORT` that ends a frame.
    #[inline]
    pub fn is_syn_report(&self) -> bool {
        self.type_ == EV_SYN && self.code == SYN_REPORT
    }

    /// Whether the encoder rebuilds this event from a [`FrameOut`] (motion, wheels, mouse
    /// buttons, their `MSC_SCAN`, `SYN_REPORT`), as opposed to copying it through.
    #[inline]
    pub fn is_rebuilt(&self) -> bool {
        match self.type_ {
            EV_SYN => self.code == SYN_REPORT,
            EV_REL => matches!(
                self.code,
                REL_X | REL_Y | REL_WHEEL | REL_HWHEEL | REL_WHEEL_HI_RES | REL_HWHEEL_HI_RES
            ),
            EV_KEY => button_of(self.code).is_some(),
            EV_MSC => self.code == MSC_SCAN,
            _ => false,
        }
    }
}

/// Which wheel codes a source device reports (from its `EVIOCGBIT(EV_REL)` bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WheelCaps {
    /// `REL_WHEEL_HI_RES`: vertical travel is read from it (else `REL_WHEEL × 120`).
    pub hires_wheel: bool,
    /// `REL_HWHEEL_HI_RES`: horizontal travel is read from it (else `REL_HWHEEL × 120`).
    pub hires_hwheel: bool,
}

/// What the decoder found.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded<'a> {
    /// A complete frame, and the raw bytes it was decoded from (ending with its
    /// `SYN_REPORT`).
    Frame(FrameIn, &'a [u8]),
    /// `SYN_DROPPED`: the kernel's buffer overflowed. Everything up to the next
    /// `SYN_REPORT` is discarded; the caller resyncs device state (`EVIOCGKEY`).
    Dropped,
}

/// Splits event bytes into frames. Holds only the caps and whether it is discarding after a
/// `SYN_DROPPED`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Decoder {
    /// The source's wheel codes.
    pub caps: WheelCaps,
    dropping: bool,
}

impl Decoder {
    /// A decoder for a device with `caps`.
    pub fn new(caps: WheelCaps) -> Decoder {
        Decoder {
            caps,
            dropping: false,
        }
    }

    /// Decodes every complete frame in `buf` (whole events; a trailing partial event is left
    /// alone) and calls `f` for each. Returns how many bytes were consumed: the bytes after
    /// that are the start of a frame whose `SYN_REPORT` has not arrived yet, which the
    /// caller keeps at the front of the buffer for the next read.
    #[inline]
    pub fn decode<'a>(&mut self, buf: &'a [u8], mut f: impl FnMut(Decoded<'a>)) -> usize {
        let mut consumed = 0;
        let mut frame = FrameIn::default();
        let mut pos = 0;
        while pos + EVENT_SIZE <= buf.len() {
            let bytes: &[u8; EVENT_SIZE] = buf[pos..pos + EVENT_SIZE]
                .try_into()
                .unwrap_or(&[0; EVENT_SIZE]);
            let ev = Event::untimed(bytes);
            pos += EVENT_SIZE;
            if ev.type_ == EV_SYN {
                match ev.code {
                    SYN_REPORT => {
                        if self.dropping {
                            self.dropping = false;
                        } else {
                            frame.time = Event::time_of(bytes);
                            f(Decoded::Frame(frame, &buf[consumed..pos]));
                        }
                        frame = FrameIn::default();
                        consumed = pos;
                    }
                    SYN_DROPPED => {
                        self.dropping = true;
                        frame = FrameIn::default();
                        consumed = pos;
                        f(Decoded::Dropped);
                    }
                    _ => {}
                }
                continue;
            }
            if self.dropping {
                consumed = pos;
                continue;
            }
            self.add(&mut frame, &ev);
        }
        consumed
    }

    /// Adds one event to the frame being built. Sums saturate at the `i32` limits: a
    /// frame with two `REL_WHEEL_HI_RES` of `i32::MAX`, or `REL_WHEEL` 20000000 × 120, is
    /// bogus input, never a reason to panic or wrap into the opposite direction.
    #[inline]
    fn add(&self, frame: &mut FrameIn, ev: &Event) {
        let v = ev.value;
        match ev.type_ {
            EV_REL => match ev.code {
                REL_X => frame.dx = frame.dx.saturating_add(v),
                REL_Y => frame.dy = frame.dy.saturating_add(v),
                REL_WHEEL_HI_RES => hires(&mut frame.wheel, v),
                REL_HWHEEL_HI_RES => hires(&mut frame.hwheel, v),
                REL_WHEEL => lores(&mut frame.wheel, v, self.caps.hires_wheel),
                REL_HWHEEL => lores(&mut frame.hwheel, v, self.caps.hires_hwheel),
                _ => {}
            },
            // Autorepeat (value 2) is not a transition.
            EV_KEY if ev.value != 2 => {
                if let Some(n) = button_of(ev.code) {
                    let (button, pressed) = (Button(n), ev.value != 0);
                    if !frame.buttons.push(button, pressed) {
                        frame.buttons = last_changes(&frame.buttons, button);
                        frame.buttons.push(button, pressed);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Adds a `REL_*_HI_RES` event of `v` v120 to an axis. When the axis's travel so far is
/// only what [`lores`] stood in with (its detents × 120), the hi-res value replaces it.
#[inline]
fn hires(w: &mut WheelIn, v: i32) {
    w.v120 = if w.detents != 0 && w.v120 == w.detents.saturating_mul(V120_PER_DETENT) {
        v
    } else {
        w.v120.saturating_add(v)
    };
}

/// Adds a `REL_WHEEL` / `REL_HWHEEL` event of `v` detents to an axis. Without hi-res its
/// travel is `v × 120`. With hi-res the travel comes from the hi-res event, which the
/// kernel (hid-input, hid-logitech-hidpp) sends before the lo-res one; a lo-res event
/// with no hi-res travel before it stands in as `detents × 120` (saturating) until a
/// hi-res event replaces it ([`hires`]). So a lone lo-res frame — forged or broken input,
/// e.g. a uinput device's `REL_WHEEL -2147483648` — is scrolled by the engine like any
/// other (inverted, smoothed, clamped), never forwarded raw.
#[inline]
fn lores(w: &mut WheelIn, v: i32, has_hires: bool) {
    let before = w.detents;
    w.detents = before.saturating_add(v);
    if !has_hires {
        w.v120 = w.v120.saturating_add(v.saturating_mul(V120_PER_DETENT));
    } else if w.v120 == before.saturating_mul(V120_PER_DETENT) {
        // No hi-res travel yet (0), or only the stand-in for earlier lo-res events.
        w.v120 = w.detents.saturating_mul(V120_PER_DETENT);
    }
}

/// A frame's button changes when there are more than [`Buttons::CAP`] (only a device
/// that changes the same button again and again in one frame sends that many): each
/// button's last change, without `except`'s (about to change again). The engine then ends
/// the frame with the buttons down that the frame leaves down, as the clone does when the
/// frame is forwarded as read (found by the `linux_pipeline` fuzz target).
#[cold]
fn last_changes(changes: &Buttons, except: Button) -> Buttons {
    let all = changes.as_slice();
    let mut res = Buttons::default();
    for (i, c) in all.iter().enumerate() {
        let later = all[i + 1..].iter().any(|l| l.button == c.button);
        if !later && c.button != except {
            res.push(c.button, c.pressed);
        }
    }
    res
}

/// Most events one encoded frame may hold; an output buffer of
/// `MAX_OUT_EVENTS * EVENT_SIZE` bytes never truncates a frame decoded from a mouse.
pub const MAX_OUT_EVENTS: usize = 96;

/// Writes events into a byte buffer, dropping what does not fit.
#[derive(Debug)]
pub struct EventWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> EventWriter<'a> {
    /// A writer filling `buf` from the start.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> EventWriter<'a> {
        EventWriter { buf, len: 0 }
    }

    /// Appends one event (zero timestamp); returns `false` when the buffer is full.
    #[inline]
    pub fn push(&mut self, type_: u16, code: u16, value: i32) -> bool {
        self.push_event(&Event::new(type_, code, value))
    }

    /// Appends one event; returns `false` when the buffer is full.
    #[inline]
    pub fn push_event(&mut self, ev: &Event) -> bool {
        let end = self.len + EVENT_SIZE;
        if end > self.buf.len() {
            return false;
        }
        self.buf[self.len..end].copy_from_slice(&ev.to_bytes());
        self.len = end;
        true
    }

    /// Appends a `SYN_REPORT`.
    #[inline]
    pub fn syn(&mut self) -> bool {
        self.push(EV_SYN, SYN_REPORT, 0)
    }

    /// Bytes written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Encodes `out` as the events of one write to the virtual pointer: events of `raw` that
/// the engine does not rebuild (other keys, `EV_MSC` except `MSC_SCAN`, `EV_ABS`, other
/// `EV_REL` codes) are copied through first, then mouse buttons, `REL_X`, `REL_Y`, and the
/// wheels in the order `REL_HWHEEL_HI_RES, REL_HWHEEL, REL_WHEEL_HI_RES, REL_WHEEL`, then
/// `SYN_REPORT`. A button that changes twice (a synthesized click) gets a `SYN_REPORT`
/// between its transitions. Returns the number of bytes written, 0 when there is nothing to
/// write.
///
/// The rebuilt events and the final `SYN_REPORT` always fit in a buffer of
/// [`MAX_OUT_EVENTS`] events (at most 2 per button change and 7 more): copied-through
/// events fill only the room they leave, and those beyond it are dropped. No mouse sends
/// that many in one frame; a device that does loses its extra events, never a button
/// change or the frame's end (found by the `linux_pipeline` fuzz target).
pub fn encode_frame(out: &FrameOut, raw: &[u8], buf: &mut [u8]) -> usize {
    let reserved = (2 * out.buttons.len() + 7) * EVENT_SIZE;
    let copy_limit = buf.len().saturating_sub(reserved);
    let mut w = EventWriter::new(buf);
    let mut any = false;
    for chunk in raw.chunks_exact(EVENT_SIZE) {
        let ev = Event::from_bytes(chunk.try_into().unwrap_or(&[0; EVENT_SIZE]));
        if !ev.is_rebuilt() && ev.type_ != EV_SYN && w.len() + EVENT_SIZE <= copy_limit {
            any |= w.push(ev.type_, ev.code, ev.value);
        }
    }
    let mut changed_in_frame = 0u32;
    for c in out.buttons.as_slice() {
        let bit = 1u32 << (c.button.0 & 31);
        if changed_in_frame & bit != 0 {
            w.syn();
            changed_in_frame = 0;
        }
        changed_in_frame |= bit;
        any |= w.push(
            EV_KEY,
            BTN_MOUSE + u16::from(c.button.0),
            i32::from(c.pressed),
        );
    }
    if out.dx != 0 {
        any |= w.push(EV_REL, REL_X, out.dx);
    }
    if out.dy != 0 {
        any |= w.push(EV_REL, REL_Y, out.dy);
    }
    if out.hwheel.v120 != 0 {
        any |= w.push(EV_REL, REL_HWHEEL_HI_RES, out.hwheel.v120);
    }
    if out.hwheel.detents != 0 {
        any |= w.push(EV_REL, REL_HWHEEL, out.hwheel.detents);
    }
    if out.wheel.v120 != 0 {
        any |= w.push(EV_REL, REL_WHEEL_HI_RES, out.wheel.v120);
    }
    if out.wheel.detents != 0 {
        any |= w.push(EV_REL, REL_WHEEL, out.wheel.detents);
    }
    if !any {
        return 0;
    }
    w.syn();
    w.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pawl_engine::frame::WheelOut;
    use pawl_engine::units::ButtonSet;

    fn bytes(events: &[(u16, u16, i32)]) -> Vec<u8> {
        events
            .iter()
            .enumerate()
            .flat_map(|(i, (t, c, v))| {
                Event {
                    time: Micros(1_000_000 + i as u64),
                    type_: *t,
                    code: *c,
                    value: *v,
                }
                .to_bytes()
            })
            .collect()
    }

    fn events(buf: &[u8]) -> Vec<(u16, u16, i32)> {
        buf.chunks_exact(EVENT_SIZE)
            .map(|c| {
                let e = Event::from_bytes(c.try_into().unwrap());
                (e.type_, e.code, e.value)
            })
            .collect()
    }

    #[test]
    fn event_bytes_round_trip() {
        let e = Event {
            time: Micros(12_345_678),
            type_: EV_REL,
            code: REL_Y,
            value: -7,
        };
        assert_eq!(Event::from_bytes(&e.to_bytes()), e);
    }

    #[test]
    fn frames_split_at_syn_report_and_keep_their_raw_bytes() {
        let buf = bytes(&[
            (EV_REL, REL_X, 3),
            (EV_REL, REL_Y, -1),
            (EV_SYN, SYN_REPORT, 0),
            (EV_MSC, MSC_SCAN, 0x90004),
            (EV_KEY, BTN_SIDE, 1),
            (EV_SYN, SYN_REPORT, 0),
            (EV_REL, REL_X, 1),
        ]);
        let mut frames = Vec::new();
        let consumed = Decoder::default().decode(&buf, |d| match d {
            Decoded::Frame(f, raw) => frames.push((f, raw.len())),
            Decoded::Dropped => panic!("no drop here"),
        });
        assert_eq!(
            consumed,
            6 * EVENT_SIZE,
            "the partial last frame is left for the next read"
        );
        assert_eq!(frames.len(), 2);
        assert_eq!(
            (frames[0].0.dx, frames[0].0.dy, frames[0].1),
            (3, -1, 3 * EVENT_SIZE)
        );
        assert_eq!(frames[1].0.buttons.as_slice()[0].button, Button(3));
        assert_eq!(frames[0].0.time, Micros(1_000_002));
    }

    #[test]
    fn hires_device_reads_travel_from_hires_codes() {
        let buf = bytes(&[(EV_REL, REL_WHEEL_HI_RES, 40), (EV_SYN, SYN_REPORT, 0)]);
        let caps = WheelCaps {
            hires_wheel: true,
            hires_hwheel: true,
        };
        let mut got = None;
        Decoder::new(caps).decode(&buf, |d| {
            if let Decoded::Frame(f, _) = d {
                got = Some(f.wheel)
            }
        });
        assert_eq!(got.map(|w| (w.v120, w.detents)), Some((40, 0)));
    }

    #[test]
    fn lores_only_device_gets_v120_from_detents() {
        let buf = bytes(&[(EV_REL, REL_HWHEEL, -1), (EV_SYN, SYN_REPORT, 0)]);
        let mut got = None;
        Decoder::default().decode(&buf, |d| {
            if let Decoded::Frame(f, _) = d {
                got = Some(f.hwheel)
            }
        });
        assert_eq!(got.map(|w| (w.v120, w.detents)), Some((-120, -1)));
    }

    fn wheels(caps: WheelCaps, events: &[(u16, u16, i32)]) -> Vec<(i32, i32)> {
        let mut got = Vec::new();
        Decoder::new(caps).decode(&bytes(events), |d| {
            if let Decoded::Frame(f, _) = d {
                got.push((f.wheel.v120, f.wheel.detents));
            }
        });
        got
    }

    const HIRES: WheelCaps = WheelCaps {
        hires_wheel: true,
        hires_hwheel: true,
    };

    #[test]
    fn a_lone_lores_frame_on_a_hires_device_gets_travel_from_its_detents_without_overflow() {
        assert_eq!(
            wheels(
                HIRES,
                &[(EV_REL, REL_WHEEL, i32::MIN), (EV_SYN, SYN_REPORT, 0)]
            ),
            [(i32::MIN, i32::MIN)]
        );
        assert_eq!(
            wheels(
                HIRES,
                &[
                    (EV_REL, REL_WHEEL, 1),
                    (EV_REL, REL_WHEEL, 1),
                    (EV_SYN, SYN_REPORT, 0)
                ]
            ),
            [(240, 2)]
        );
    }

    #[test]
    fn a_hires_device_takes_its_travel_from_hires_in_either_order() {
        // The kernel's order (hi-res first), and the other one: the same frame.
        for events in [
            [(EV_REL, REL_WHEEL_HI_RES, 120), (EV_REL, REL_WHEEL, 1)],
            [(EV_REL, REL_WHEEL, 1), (EV_REL, REL_WHEEL_HI_RES, 120)],
        ] {
            let mut events = events.to_vec();
            events.push((EV_SYN, SYN_REPORT, 0));
            assert_eq!(wheels(HIRES, &events), [(120, 1)], "{events:?}");
        }
        // A partial step: hi-res travel, no detent.
        assert_eq!(
            wheels(
                HIRES,
                &[(EV_REL, REL_WHEEL_HI_RES, 16), (EV_SYN, SYN_REPORT, 0)]
            ),
            [(16, 0)]
        );
        // A step that completes a detent begun in earlier frames.
        assert_eq!(
            wheels(
                HIRES,
                &[
                    (EV_REL, REL_WHEEL_HI_RES, 16),
                    (EV_REL, REL_WHEEL, 1),
                    (EV_SYN, SYN_REPORT, 0)
                ]
            ),
            [(16, 1)]
        );
    }

    #[test]
    fn sums_saturate_at_the_i32_limits_instead_of_overflowing() {
        let buf = bytes(&[
            (EV_REL, REL_WHEEL_HI_RES, i32::MAX),
            (EV_REL, REL_WHEEL_HI_RES, i32::MAX),
            (EV_REL, REL_HWHEEL, -20_000_000),
            (EV_REL, REL_X, i32::MIN),
            (EV_REL, REL_X, -1),
            (EV_REL, REL_Y, i32::MAX),
            (EV_REL, REL_Y, 1),
            (EV_SYN, SYN_REPORT, 0),
        ]);
        let caps = WheelCaps {
            hires_wheel: true,
            hires_hwheel: false,
        };
        let mut got = None;
        Decoder::new(caps).decode(&buf, |d| {
            if let Decoded::Frame(f, _) = d {
                got = Some(f)
            }
        });
        let f = got.unwrap();
        assert_eq!(f.wheel.v120, i32::MAX);
        assert_eq!((f.hwheel.v120, f.hwheel.detents), (i32::MIN, -20_000_000));
        assert_eq!((f.dx, f.dy), (i32::MIN, i32::MAX));
    }

    #[test]
    fn syn_dropped_discards_up_to_the_next_syn_report() {
        let buf = bytes(&[
            (EV_REL, REL_X, 5),
            (EV_SYN, SYN_DROPPED, 0),
            (EV_REL, REL_X, 9),
            (EV_SYN, SYN_REPORT, 0),
            (EV_REL, REL_X, 2),
            (EV_SYN, SYN_REPORT, 0),
        ]);
        let mut seen = Vec::new();
        let mut dec = Decoder::default();
        let consumed = dec.decode(&buf, |d| {
            seen.push(match d {
                Decoded::Frame(f, _) => f.dx,
                Decoded::Dropped => -1,
            })
        });
        assert_eq!(seen, vec![-1, 2]);
        assert_eq!(consumed, buf.len());
    }

    #[test]
    fn encoded_wheel_frame_orders_hires_before_lores_horizontal_first() {
        let out = FrameOut {
            wheel: WheelOut {
                v120: -120,
                detents: -1,
            },
            hwheel: WheelOut {
                v120: 60,
                detents: 0,
            },
            ..FrameOut::default()
        };
        let mut buf = [0u8; MAX_OUT_EVENTS * EVENT_SIZE];
        let n = encode_frame(&out, &[], &mut buf);
        assert_eq!(
            events(&buf[..n]),
            vec![
                (EV_REL, REL_HWHEEL_HI_RES, 60),
                (EV_REL, REL_WHEEL_HI_RES, -120),
                (EV_REL, REL_WHEEL, -1),
                (EV_SYN, SYN_REPORT, 0),
            ]
        );
    }

    #[test]
    fn synthesized_click_gets_a_frame_boundary_between_press_and_release() {
        let mut out = FrameOut::default();
        out.buttons.push(Button(5), true);
        out.buttons.push(Button(5), false);
        let mut buf = [0u8; MAX_OUT_EVENTS * EVENT_SIZE];
        let n = encode_frame(&out, &[], &mut buf);
        assert_eq!(
            events(&buf[..n]),
            vec![
                (EV_KEY, BTN_FORWARD, 1),
                (EV_SYN, SYN_REPORT, 0),
                (EV_KEY, BTN_FORWARD, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]
        );
    }

    #[test]
    fn events_the_engine_does_not_model_are_copied_through() {
        let raw = bytes(&[
            (EV_MSC, MSC_TIMESTAMP, 77),
            (EV_MSC, MSC_SCAN, 1),
            (EV_REL, REL_X, 4),
            (EV_SYN, SYN_REPORT, 0),
        ]);
        let out = FrameOut {
            dx: 4,
            ..FrameOut::default()
        };
        let mut buf = [0u8; MAX_OUT_EVENTS * EVENT_SIZE];
        let n = encode_frame(&out, &raw, &mut buf);
        assert_eq!(
            events(&buf[..n]),
            vec![
                (EV_MSC, MSC_TIMESTAMP, 77),
                (EV_REL, REL_X, 4),
                (EV_SYN, SYN_REPORT, 0)
            ]
        );
    }

    #[test]
    fn an_oversized_rewritten_frame_keeps_its_buttons_and_wheel_and_ends_in_syn_report() {
        // 200 events the engine does not model, then a rewritten click and scroll: more
        // than one write holds. The copied-through events give way.
        let mut events_in: Vec<(u16, u16, i32)> =
            (0..200).map(|i| (EV_MSC, MSC_TIMESTAMP, i)).collect();
        events_in.push((EV_SYN, SYN_REPORT, 0));
        let raw = bytes(&events_in);
        let mut out = FrameOut::default();
        for b in 0..16 {
            out.buttons.push(Button(b % 8), b < 8);
        }
        out.dx = 3;
        out.dy = -3;
        out.wheel = WheelOut {
            v120: -120,
            detents: -1,
        };
        out.hwheel = WheelOut {
            v120: 60,
            detents: 0,
        };
        let mut buf = [0u8; MAX_OUT_EVENTS * EVENT_SIZE];
        let n = encode_frame(&out, &raw, &mut buf);
        let written = events(&buf[..n]);
        assert_eq!(written.last(), Some(&(EV_SYN, SYN_REPORT, 0)));
        let keys: Vec<_> = written.iter().filter(|e| e.0 == EV_KEY).collect();
        assert_eq!(keys.len(), 16, "every button change: {written:?}");
        for code in [REL_X, REL_Y, REL_WHEEL_HI_RES, REL_WHEEL, REL_HWHEEL_HI_RES] {
            assert!(
                written.iter().any(|e| e.0 == EV_REL && e.1 == code),
                "{code}"
            );
        }
        let copied = written.iter().filter(|e| e.1 == MSC_TIMESTAMP).count();
        assert!(copied > 0 && copied < 200, "{copied} copied through");
    }

    #[test]
    fn a_frame_with_more_button_changes_than_it_holds_ends_with_each_buttons_last() {
        // Left clicked 8 times and pressed again, right pressed, middle pressed and
        // released: 20 changes in one frame.
        let mut evs = Vec::new();
        for _ in 0..8 {
            evs.extend([(EV_KEY, BTN_LEFT, 1), (EV_KEY, BTN_LEFT, 0)]);
        }
        evs.extend([
            (EV_KEY, BTN_RIGHT, 1),
            (EV_KEY, BTN_LEFT, 1),
            (EV_KEY, BTN_MIDDLE, 1),
            (EV_KEY, BTN_MIDDLE, 0),
            (EV_SYN, SYN_REPORT, 0),
        ]);
        let mut frames = Vec::new();
        Decoder::default().decode(&bytes(&evs), |d| {
            if let Decoded::Frame(f, _) = d {
                frames.push(f);
            }
        });
        let mut down = ButtonSet::default();
        for c in frames[0].buttons.as_slice() {
            down.set(c.button, c.pressed);
        }
        assert_eq!(
            down.iter().collect::<Vec<_>>(),
            vec![Button(0), Button(1)],
            "left and right down, middle up: {:?}",
            frames[0].buttons.as_slice()
        );
    }

    #[test]
    fn a_frame_with_one_output_alone_is_written_with_its_syn_report() {
        let wheel = |v120, detents| WheelOut { v120, detents };
        let cases = [
            (
                FrameOut {
                    dx: 5,
                    ..FrameOut::default()
                },
                (EV_REL, REL_X, 5),
            ),
            (
                FrameOut {
                    dy: -3,
                    ..FrameOut::default()
                },
                (EV_REL, REL_Y, -3),
            ),
            (
                FrameOut {
                    hwheel: wheel(60, 0),
                    ..FrameOut::default()
                },
                (EV_REL, REL_HWHEEL_HI_RES, 60),
            ),
            (
                FrameOut {
                    hwheel: wheel(0, -1),
                    ..FrameOut::default()
                },
                (EV_REL, REL_HWHEEL, -1),
            ),
            (
                FrameOut {
                    wheel: wheel(-30, 0),
                    ..FrameOut::default()
                },
                (EV_REL, REL_WHEEL_HI_RES, -30),
            ),
            (
                FrameOut {
                    wheel: wheel(0, 2),
                    ..FrameOut::default()
                },
                (EV_REL, REL_WHEEL, 2),
            ),
        ];
        for (out, event) in cases {
            let mut buf = [0u8; MAX_OUT_EVENTS * EVENT_SIZE];
            let n = encode_frame(&out, &[], &mut buf);
            assert_eq!(
                events(&buf[..n]),
                [event, (EV_SYN, SYN_REPORT, 0)],
                "{out:?}"
            );
        }
    }

    #[test]
    fn a_frame_of_copied_through_events_only_is_written() {
        let raw = bytes(&[(EV_MSC, MSC_TIMESTAMP, 77), (EV_SYN, SYN_REPORT, 0)]);
        let mut buf = [0u8; MAX_OUT_EVENTS * EVENT_SIZE];
        let n = encode_frame(&FrameOut::default(), &raw, &mut buf);
        assert_eq!(
            events(&buf[..n]),
            [(EV_MSC, MSC_TIMESTAMP, 77), (EV_SYN, SYN_REPORT, 0)]
        );
    }

    #[test]
    fn different_buttons_changing_in_one_frame_share_it() {
        // Only the same button changing twice needs a SYN_REPORT between.
        let mut out = FrameOut::default();
        out.buttons.push(Button(0), true);
        out.buttons.push(Button(1), true);
        let mut buf = [0u8; MAX_OUT_EVENTS * EVENT_SIZE];
        let n = encode_frame(&out, &[], &mut buf);
        assert_eq!(
            events(&buf[..n]),
            [
                (EV_KEY, BTN_LEFT, 1),
                (EV_KEY, BTN_RIGHT, 1),
                (EV_SYN, SYN_REPORT, 0)
            ]
        );
    }

    #[test]
    fn key_autorepeat_is_not_a_button_change() {
        let raw = bytes(&[
            (EV_KEY, BTN_LEFT, 1),
            (EV_SYN, SYN_REPORT, 0),
            (EV_KEY, BTN_LEFT, 2),
            (EV_REL, REL_X, 1),
            (EV_SYN, SYN_REPORT, 0),
        ]);
        let mut frames = Vec::new();
        Decoder::default().decode(&raw, |d| {
            if let Decoded::Frame(f, _) = d {
                frames.push(f);
            }
        });
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].buttons.len(), 1);
        assert!(frames[1].buttons.is_empty(), "{:?}", frames[1].buttons);
        assert_eq!(frames[1].dx, 1);
    }

    #[test]
    fn empty_output_encodes_to_nothing() {
        let mut buf = [0u8; MAX_OUT_EVENTS * EVENT_SIZE];
        assert_eq!(encode_frame(&FrameOut::default(), &[], &mut buf), 0);
    }
}
