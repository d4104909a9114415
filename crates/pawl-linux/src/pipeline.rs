//! The hot path of one grabbed device, without the syscalls: bytes read from the source →
//! frames → engine → bytes for the clone and actions. The loop owns the fds and passes a
//! [`Sink`]; tests pass a recording one.
//!
//! Per input frame: [`Verdict::Forward`] writes the bytes that were read, unchanged
//! (bit-exact); [`Verdict::Rewrite`] writes [`encode_frame`] of the engine's output (when
//! not empty) and then performs its actions. One write per output frame, no allocation,
//! no formatting unless debug logging is on.

use pawl_engine::frame::{FrameIn, FrameOut, Verdict};
use pawl_engine::units::{ButtonSet, Micros};
use pawl_engine::{Action, DeviceEngine, TouchOut};
use pawl_evdev::codes::{EV_MSC, EV_SYN, MSC_SCAN, SYN_DROPPED};
use pawl_evdev::stream::{WheelFixup, is_kernel_release};
use pawl_evdev::{Decoded, Decoder, EVENT_SIZE, Event, MAX_OUT_EVENTS, encode_frame};

use crate::caps::Caps;

/// What the pipeline needs from the outside.
pub trait Sink {
    /// Writes whole frames to the device's clone with one `write(2)`.
    fn write_clone(&mut self, bytes: &[u8]);
    /// Performs an action (after the frame that fired it was written).
    fn perform(&mut self, action: Action);
    /// Writes a swipe's frames to the virtual touchpad (after the clone's frame), with
    /// one `write(2)`; returns the time read after the write returned (µs, the clock of
    /// [`Sink::now`]), what the swipe's next frame is timed from
    /// ([`DeviceEngine::touch_written`]).
    fn touch(&mut self, touch: &TouchOut) -> Micros;
    /// The mouse buttons down on the source right now (`EVIOCGKEY`), `None` when that
    /// cannot be read (then everything is released).
    fn buttons_down(&mut self) -> Option<ButtonSet>;
    /// The time of this wake-up's writes, µs on the clock of the source's event timestamps
    /// and of [`Pipeline::tick`]'s `now` (`CLOCK_MONOTONIC`, see
    /// [`crate::sys::set_clock_monotonic`]): what a swipe's touchpad frames are paced
    /// against ([`DeviceEngine::frame_at`]). Called at most once per [`Pipeline::feed`],
    /// and only while the engine paces a swipe ([`DeviceEngine::paces_touch`]); grab mode's
    /// motion and wheel never ask.
    fn now(&mut self) -> Micros;
}

/// Bytes of the per-device read buffer: 256 events, more than a kernel evdev client buffer
/// holds for a mouse (64–128 events), so one `read(2)` drains it.
pub const READ_BUF_BYTES: usize = 256 * EVENT_SIZE;

/// The read buffer of one device: bytes of a frame whose `SYN_REPORT` has not arrived yet
/// stay at the front for the next read.
#[derive(Debug)]
pub struct ReadBuf {
    bytes: [u8; READ_BUF_BYTES],
    len: usize,
}

impl Default for ReadBuf {
    fn default() -> Self {
        ReadBuf {
            bytes: [0; READ_BUF_BYTES],
            len: 0,
        }
    }
}

impl ReadBuf {
    /// Where the next read goes.
    #[inline]
    pub fn spare(&mut self) -> &mut [u8] {
        &mut self.bytes[self.len..]
    }

    /// Marks `n` bytes after the kept ones as filled by a read.
    #[inline]
    pub fn filled_by_read(&mut self, n: usize) {
        self.len = (self.len + n).min(READ_BUF_BYTES);
    }

    /// The kept bytes followed by what was read.
    #[inline]
    pub fn filled(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Drops the first `n` bytes (the decoded frames), moving the rest to the front.
    #[inline]
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.len);
        self.bytes.copy_within(n..self.len, 0);
        self.len -= n;
    }

    /// Whether no byte is free: one frame is longer than the buffer.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == READ_BUF_BYTES
    }

    /// Forgets everything kept.
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// Bytes of the output buffer: one encoded frame of at most [`MAX_OUT_EVENTS`] events.
pub const OUT_BUF_BYTES: usize = MAX_OUT_EVENTS * EVENT_SIZE;

/// One grabbed device's translation and engine state.
#[derive(Debug)]
pub struct Pipeline {
    decoder: Decoder,
    engine: DeviceEngine,
    fixup: WheelFixup,
    out: FrameOut,
    buf: [u8; OUT_BUF_BYTES],
    label: Box<str>,
    /// The source reports `MSC_SCAN` (every HID device with buttons): a frame of key
    /// releases without it was made by the kernel (see [`is_kernel_release`]).
    scan_codes: bool,
}

impl Pipeline {
    /// The pipeline of a source with `caps`, running `engine`; `label` names the device in
    /// debug logs.
    pub fn new(caps: &Caps, engine: DeviceEngine, label: &str) -> Pipeline {
        Pipeline {
            decoder: Decoder::new(caps.wheel_caps()),
            engine,
            fixup: WheelFixup::new(caps.missing_wheel_codes()),
            out: FrameOut::default(),
            buf: [0; OUT_BUF_BYTES],
            label: label.into(),
            scan_codes: caps.ev.get(EV_MSC) && caps.msc.get(MSC_SCAN),
        }
    }

    /// The engine (for its deadline and state).
    pub fn engine(&self) -> &DeviceEngine {
        &self.engine
    }

    /// The engine, for a focus change ([`DeviceEngine::set_app`]).
    pub fn engine_mut(&mut self) -> &mut DeviceEngine {
        &mut self.engine
    }

    /// Processes every complete frame in `bytes`; returns how many bytes were consumed
    /// (the rest is a frame still missing its `SYN_REPORT`).
    ///
    /// The frames of one call are written together, now: while a swipe is paced they share
    /// one write time, [`Sink::now`] read once (the first frame that needs it), so a backlog
    /// read at once writes at most one touchpad frame and the engine carries the rest to
    /// the next frame due ([`DeviceEngine::frame_at`]). Everything else runs on the events'
    /// own timestamps.
    #[inline]
    pub fn feed(&mut self, bytes: &[u8], sink: &mut impl Sink) -> usize {
        let Pipeline {
            decoder,
            engine,
            fixup,
            out,
            buf,
            label,
            scan_codes,
        } = self;
        let mut write_time: Option<Micros> = None;
        decoder.decode(bytes, |decoded| match decoded {
            Decoded::Frame(frame, raw) => {
                if *scan_codes && !frame.buttons.is_empty() && is_kernel_release(raw) {
                    // The device is going away (or being reset on resume): cancel, do
                    // not let a held gesture button become a click.
                    if log::log_enabled!(log::Level::Debug) {
                        log::debug!("{label}: the kernel released every key; cancelling");
                    }
                    fixup.reset();
                    if engine.cancel(out) {
                        write_encoded(out, &[], buf, sink);
                    }
                    write_touch(out, engine, sink);
                    return;
                }
                let verdict = if engine.paces_touch(&frame) {
                    let now = *write_time.get_or_insert_with(|| sink.now());
                    engine.frame_at(&frame, now, out)
                } else {
                    engine.frame(&frame, out)
                };
                if log::log_enabled!(log::Level::Debug) {
                    log_frame(label, &frame, verdict, out);
                }
                let transform = engine.profile().transform_scroll;
                if fixup.settle(verdict, transform, &frame, out) {
                    write_encoded(out, raw, buf, sink);
                    write_touch(out, engine, sink);
                    for action in out.actions.as_slice() {
                        sink.perform(*action);
                    }
                } else {
                    sink.write_clone(raw);
                }
            }
            Decoded::Dropped => {
                let down = sink.buttons_down().unwrap_or_default();
                fixup.reset();
                if log::log_enabled!(log::Level::Debug) {
                    log::debug!("{label}: SYN_DROPPED, resync with buttons down {down:?}");
                }
                if engine.resync(down, out) {
                    write_encoded(out, &[], buf, sink);
                }
                write_touch(out, engine, sink);
            }
        })
    }

    /// Processes one frame that did not come from the source — the MX Master's diverted
    /// thumb wheel, as horizontal wheel input in v120 — through the engine like a source
    /// frame, and writes what it makes to the clone (one write; no allocation).
    #[inline]
    pub fn inject(&mut self, frame: &FrameIn, sink: &mut impl Sink) {
        match self.engine.frame(frame, &mut self.out) {
            Verdict::Rewrite => {
                write_encoded(&self.out, &[], &mut self.buf, sink);
                write_touch(&self.out, &mut self.engine, sink);
                for action in self.out.actions.as_slice() {
                    sink.perform(*action);
                }
            }
            // Nothing was read to forward: the frame itself is the output.
            Verdict::Forward => {
                write_encoded(&FrameOut::unchanged(frame), &[], &mut self.buf, sink)
            }
        }
    }

    /// Makes the decoder discard up to the next `SYN_REPORT` and resyncs, as after a
    /// `SYN_DROPPED` (for a frame longer than the read buffer).
    pub fn drop_partial_frame(&mut self, sink: &mut impl Sink) {
        let dropped = Event::new(EV_SYN, SYN_DROPPED, 0).to_bytes();
        self.feed(&dropped, sink);
    }

    /// When [`Pipeline::tick`] must next run.
    pub fn next_deadline(&self) -> Option<Micros> {
        self.engine.next_deadline()
    }

    /// Runs the engine's timers due at `now` (glide; a swipe's paced touchpad frames) and
    /// writes what they produce.
    pub fn tick(&mut self, now: Micros, sink: &mut impl Sink) {
        if self.engine.tick(now, &mut self.out) {
            write_encoded(&self.out, &[], &mut self.buf, sink);
        }
        write_touch(&self.out, &mut self.engine, sink);
    }

    /// Cancels everything in progress and writes a release for every button pressed on the
    /// clone (exit, device gone).
    pub fn cancel(&mut self, sink: &mut impl Sink) {
        self.fixup.reset();
        if self.engine.cancel(&mut self.out) {
            write_encoded(&self.out, &[], &mut self.buf, sink);
        }
        write_touch(&self.out, &mut self.engine, sink);
    }
}

/// Writes `out`'s touchpad part, if any, and tells the engine when the write ended.
#[inline]
fn write_touch(out: &FrameOut, engine: &mut DeviceEngine, sink: &mut impl Sink) {
    if !out.touch.is_empty() {
        engine.touch_written(sink.touch(&out.touch));
    }
}

#[inline]
fn write_encoded(out: &FrameOut, raw: &[u8], buf: &mut [u8; OUT_BUF_BYTES], sink: &mut impl Sink) {
    let n = encode_frame(out, raw, buf);
    if n > 0 {
        sink.write_clone(&buf[..n]);
    }
}

#[cold]
fn log_frame(label: &str, frame: &FrameIn, verdict: Verdict, out: &FrameOut) {
    match verdict {
        Verdict::Forward => log::debug!(
            "{label}: forward dx={} dy={} wheel={}/{} hwheel={}/{} buttons={:?}",
            frame.dx,
            frame.dy,
            frame.wheel.v120,
            frame.wheel.detents,
            frame.hwheel.v120,
            frame.hwheel.detents,
            frame.buttons.as_slice()
        ),
        Verdict::Rewrite => log::debug!(
            "{label}: in dx={} dy={} wheel={}/{} hwheel={}/{} buttons={:?} -> out dx={} dy={} wheel={}/{} hwheel={}/{} buttons={:?} actions={:?}",
            frame.dx,
            frame.dy,
            frame.wheel.v120,
            frame.wheel.detents,
            frame.hwheel.v120,
            frame.hwheel.detents,
            frame.buttons.as_slice(),
            out.dx,
            out.dy,
            out.wheel.v120,
            out.wheel.detents,
            out.hwheel.v120,
            out.hwheel.detents,
            out.buttons.as_slice(),
            out.actions.as_slice()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pawl_engine::units::Button;
    use pawl_engine::{Config, Platform};
    use pawl_evdev::codes::*;

    #[derive(Default)]
    struct Recorder {
        writes: Vec<Vec<(u16, u16, i32)>>,
        raw_writes: Vec<Vec<u8>>,
        actions: Vec<Action>,
        down: ButtonSet,
        touches: Vec<TouchOut>,
        /// What [`Sink::now`] answers (the test moves it), how often it was asked, and its
        /// value at each touchpad write.
        clock: Micros,
        clock_reads: usize,
        touch_times: Vec<Micros>,
        /// How long each touchpad write takes, µs: [`Sink::touch`] answers `clock` + this.
        touch_write_us: u64,
    }

    impl Sink for Recorder {
        fn write_clone(&mut self, bytes: &[u8]) {
            self.raw_writes.push(bytes.to_vec());
            self.writes.push(events(bytes));
        }
        fn perform(&mut self, action: Action) {
            self.actions.push(action);
        }
        fn buttons_down(&mut self) -> Option<ButtonSet> {
            Some(self.down)
        }
        fn touch(&mut self, touch: &TouchOut) -> Micros {
            self.touches.push(*touch);
            self.touch_times.push(self.clock);
            self.clock.plus(self.touch_write_us)
        }
        fn now(&mut self) -> Micros {
            self.clock_reads += 1;
            self.clock
        }
    }

    fn events(buf: &[u8]) -> Vec<(u16, u16, i32)> {
        buf.chunks_exact(EVENT_SIZE)
            .map(|c| {
                let e = Event::from_bytes(c.try_into().unwrap());
                (e.type_, e.code, e.value)
            })
            .collect()
    }

    fn bytes(events: &[(u16, u16, i32)]) -> Vec<u8> {
        events
            .iter()
            .enumerate()
            .flat_map(|(i, (t, c, v))| {
                Event {
                    time: Micros(5_000_000 + 1000 * i as u64),
                    type_: *t,
                    code: *c,
                    value: *v,
                }
                .to_bytes()
            })
            .collect()
    }

    fn mouse_caps(rel: &[u16]) -> Caps {
        let mut c = Caps::default();
        for ev in [EV_SYN, EV_KEY, EV_REL, EV_MSC] {
            c.ev.set(ev);
        }
        for b in BTN_LEFT..=BTN_TASK {
            c.key.set(b);
        }
        for r in [REL_X, REL_Y].iter().chain(rel) {
            c.rel.set(*r);
        }
        c.msc.set(MSC_SCAN);
        c
    }

    fn mx_caps() -> Caps {
        mouse_caps(&[REL_WHEEL, REL_HWHEEL, REL_WHEEL_HI_RES, REL_HWHEEL_HI_RES])
    }

    fn pipeline(caps: &Caps, transform: bool) -> Pipeline {
        let config = Config::default_for(Platform::Linux);
        let engine = DeviceEngine::with_profile(&config, transform, config.scroll);
        Pipeline::new(caps, engine, "test")
    }

    #[test]
    fn motion_is_forwarded_bit_exact_one_write_per_frame() {
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        let input = bytes(&[
            (EV_REL, REL_X, 3),
            (EV_REL, REL_Y, -2),
            (EV_SYN, SYN_REPORT, 0),
            (EV_MSC, MSC_TIMESTAMP, 9),
            (EV_REL, REL_X, 1),
            (EV_SYN, SYN_REPORT, 0),
        ]);
        assert_eq!(p.feed(&input, &mut sink), input.len());
        assert_eq!(sink.raw_writes.len(), 2);
        assert_eq!(
            sink.raw_writes.concat(),
            input,
            "timestamps and all, unchanged"
        );
    }

    #[test]
    fn in_scope_wheel_is_rewritten_inverted_with_hires_and_lores_together() {
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        let input = bytes(&[
            (EV_REL, REL_WHEEL, 1),
            (EV_REL, REL_WHEEL_HI_RES, 120),
            (EV_SYN, SYN_REPORT, 0),
        ]);
        p.feed(&input, &mut sink);
        assert_eq!(sink.writes.len(), 1);
        let w = &sink.writes[0];
        assert_eq!(w.last(), Some(&(EV_SYN, SYN_REPORT, 0)));
        let hires: i32 = w
            .iter()
            .filter(|e| e.1 == REL_WHEEL_HI_RES)
            .map(|e| e.2)
            .sum();
        assert!(hires < 0, "inverted: {w:?}");
        let pos = |code| w.iter().position(|e| e.0 == EV_REL && e.1 == code);
        if let (Some(h), Some(l)) = (pos(REL_WHEEL_HI_RES), pos(REL_WHEEL)) {
            assert!(h < l, "hi-res before lo-res: {w:?}");
        }
    }

    /// The sums of `REL_HWHEEL_HI_RES` and `REL_HWHEEL` written.
    fn hwheel_written(sink: &Recorder) -> (i32, i32) {
        let all = sink.writes.concat();
        let sum = |code| {
            all.iter()
                .filter(|e| e.0 == EV_REL && e.1 == code)
                .map(|e| e.2)
                .sum()
        };
        (sum(REL_HWHEEL_HI_RES), sum(REL_HWHEEL))
    }

    #[test]
    fn injected_thumb_wheel_scroll_goes_out_like_the_sources_own_horizontal_wheel() {
        // Native: the thumb wheel's REL_HWHEEL detents as the kernel reports them (the
        // shape of `mx1-thumb-wheel.events`, 1.2 s apart); injected: the same travel as the
        // diverted thumb wheel's v120 (18 per increment on an MX Master 3).
        for invert in [false, true] {
            let config = Config::parse(
                &format!("[scroll]\ninvert_horizontal = {invert}\n"),
                "c.toml",
                Platform::Linux,
            )
            .unwrap();
            let engine = || DeviceEngine::with_profile(&config, true, config.scroll);
            let mut native = Pipeline::new(&mx_caps(), engine(), "native");
            let mut native_sink = Recorder::default();
            let mut injected = Pipeline::new(&mx_caps(), engine(), "injected");
            let mut injected_sink = Recorder::default();
            for (i, detents) in [-1, 1, 1, 1].into_iter().enumerate() {
                let time = Micros(5_000_000 + 1_232_003 * i as u64);
                let frame = [
                    Event::new(EV_REL, REL_HWHEEL, detents),
                    Event::new(EV_REL, REL_HWHEEL_HI_RES, detents * 120),
                    Event::new(EV_SYN, SYN_REPORT, 0),
                ]
                .map(|e| Event { time, ..e }.to_bytes())
                .concat();
                native.feed(&frame, &mut native_sink);
                // 120 v120 as diverted increments of 18: 6 of them and a remainder of 12.
                for v120 in [18, 18, 18, 18, 18, 18, 12] {
                    let input = FrameIn {
                        time,
                        hwheel: pawl_engine::frame::WheelIn {
                            v120: detents * v120,
                            detents: 0,
                        },
                        ..FrameIn::default()
                    };
                    injected.inject(&input, &mut injected_sink);
                }
            }
            let (native_hires, native_detents) = hwheel_written(&native_sink);
            let (hires, detents) = hwheel_written(&injected_sink);
            let sign = if invert { -1 } else { 1 };
            assert_eq!(native_hires.signum(), sign, "{:?}", native_sink.writes);
            assert_eq!(hires.signum(), sign, "{:?}", injected_sink.writes);
            assert_eq!(detents.signum(), native_detents.signum());
            assert!(
                injected_sink
                    .writes
                    .iter()
                    .all(|w| w.last() == Some(&(EV_SYN, SYN_REPORT, 0))),
                "every injected write is a whole frame"
            );
            assert!(injected_sink.actions.is_empty());
        }
    }

    #[test]
    fn gesture_fires_its_action_after_writing_and_swallows_the_button() {
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        let mut ev = vec![
            (EV_MSC, MSC_SCAN, 0x90006),
            (EV_KEY, BTN_FORWARD, 1),
            (EV_SYN, SYN_REPORT, 0),
        ];
        for _ in 0..30 {
            ev.extend([(EV_REL, REL_X, 10), (EV_SYN, SYN_REPORT, 0)]);
        }
        ev.extend([(EV_KEY, BTN_FORWARD, 0), (EV_SYN, SYN_REPORT, 0)]);
        let input = bytes(&ev);
        assert_eq!(p.feed(&input, &mut sink), input.len());
        // Default: desktop direction inverted, so dragging right switches left.
        assert_eq!(sink.actions, vec![Action::DesktopLeft]);
        let all: Vec<_> = sink.writes.concat();
        assert!(
            !all.iter()
                .any(|e| e.0 == EV_KEY || e.1 == REL_X && e.0 == EV_REL),
            "neither the gesture button nor the drag reaches the clone: {all:?}"
        );
    }

    #[test]
    fn partial_frame_is_kept_for_the_next_read() {
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        let mut rb = ReadBuf::default();
        let all = bytes(&[
            (EV_REL, REL_X, 1),
            (EV_SYN, SYN_REPORT, 0),
            (EV_REL, REL_X, 2),
            (EV_REL, REL_Y, 2),
            (EV_SYN, SYN_REPORT, 0),
        ]);
        // First read ends in the middle of the second frame (and mid-event).
        let cut = 3 * EVENT_SIZE + 5;
        for chunk in [&all[..cut], &all[cut..]] {
            rb.spare()[..chunk.len()].copy_from_slice(chunk);
            rb.filled_by_read(chunk.len());
            let n = p.feed(rb.filled(), &mut sink);
            rb.consume(n);
        }
        assert_eq!(rb.filled(), &[] as &[u8]);
        assert_eq!(sink.raw_writes.concat(), all);
        assert_eq!(sink.raw_writes.len(), 2);
    }

    #[test]
    fn read_buffer_reports_full_when_one_frame_fills_it() {
        let mut rb = ReadBuf::default();
        let n = rb.spare().len();
        rb.filled_by_read(n);
        assert!(rb.is_full());
        rb.consume(EVENT_SIZE);
        assert_eq!(rb.filled().len(), READ_BUF_BYTES - EVENT_SIZE);
        assert_eq!(rb.spare().len(), EVENT_SIZE);
    }

    #[test]
    fn syn_dropped_releases_buttons_that_are_up_now_and_keeps_held_ones() {
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        p.feed(
            &bytes(&[
                (EV_KEY, BTN_LEFT, 1),
                (EV_KEY, BTN_RIGHT, 1),
                (EV_SYN, SYN_REPORT, 0),
            ]),
            &mut sink,
        );
        sink.writes.clear();
        sink.down.set(Button(1), true);
        p.feed(
            &bytes(&[
                (EV_REL, REL_X, 5),
                (EV_SYN, SYN_DROPPED, 0),
                (EV_KEY, BTN_LEFT, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]),
            &mut sink,
        );
        assert_eq!(
            sink.writes,
            vec![vec![(EV_KEY, BTN_LEFT, 0), (EV_SYN, SYN_REPORT, 0)]]
        );
        assert_eq!(
            p.engine().pressed_out().iter().collect::<Vec<_>>(),
            vec![Button(1)]
        );
    }

    #[test]
    fn oversized_frame_is_dropped_like_syn_dropped() {
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        p.feed(
            &bytes(&[(EV_KEY, BTN_LEFT, 1), (EV_SYN, SYN_REPORT, 0)]),
            &mut sink,
        );
        sink.writes.clear();
        p.drop_partial_frame(&mut sink);
        // The rest of the oversized frame arrives: discarded up to its SYN_REPORT.
        p.feed(
            &bytes(&[(EV_REL, REL_X, 7), (EV_SYN, SYN_REPORT, 0)]),
            &mut sink,
        );
        assert_eq!(
            sink.writes,
            vec![vec![(EV_KEY, BTN_LEFT, 0), (EV_SYN, SYN_REPORT, 0)]]
        );
    }

    #[test]
    fn kernel_release_frame_on_unplug_cancels_instead_of_clicking() {
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        // Gesture button and left button held (hid-input sends MSC_SCAN with each).
        p.feed(
            &bytes(&[
                (EV_MSC, MSC_SCAN, 0x90001),
                (EV_KEY, BTN_LEFT, 1),
                (EV_SYN, SYN_REPORT, 0),
                (EV_MSC, MSC_SCAN, 0x90006),
                (EV_KEY, BTN_FORWARD, 1),
                (EV_SYN, SYN_REPORT, 0),
                (EV_REL, REL_X, 20),
                (EV_SYN, SYN_REPORT, 0),
            ]),
            &mut sink,
        );
        sink.writes.clear();
        // Unplug: the kernel releases every key in one frame, without MSC_SCAN.
        p.feed(
            &bytes(&[
                (EV_KEY, BTN_LEFT, 0),
                (EV_KEY, BTN_FORWARD, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]),
            &mut sink,
        );
        assert_eq!(
            sink.writes,
            vec![vec![(EV_KEY, BTN_LEFT, 0), (EV_SYN, SYN_REPORT, 0)]]
        );
        assert!(sink.actions.is_empty());
        assert!(!p.engine().gesture_held());
    }

    #[test]
    fn the_release_all_rule_never_fires_on_a_device_without_msc_scan() {
        // A PS/2 or uinput mouse reports no MSC_SCAN: every release lacks it, so a click of
        // the gesture button (press, release) must pass through, not be cancelled.
        let mut caps = mx_caps();
        caps.msc = Default::default();
        caps.ev = Default::default();
        for ev in [EV_SYN, EV_KEY, EV_REL] {
            caps.ev.set(ev);
        }
        let mut p = pipeline(&caps, true);
        let mut sink = Recorder::default();
        p.feed(
            &bytes(&[
                (EV_KEY, BTN_FORWARD, 1),
                (EV_SYN, SYN_REPORT, 0),
                (EV_KEY, BTN_FORWARD, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]),
            &mut sink,
        );
        assert_eq!(
            sink.writes.concat(),
            vec![
                (EV_KEY, BTN_FORWARD, 1),
                (EV_SYN, SYN_REPORT, 0),
                (EV_KEY, BTN_FORWARD, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]
        );
        // The same release frame from a device with MSC_SCAN is the kernel's: a cancel.
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        p.feed(
            &bytes(&[
                (EV_MSC, MSC_SCAN, 0x90006),
                (EV_KEY, BTN_FORWARD, 1),
                (EV_SYN, SYN_REPORT, 0),
                (EV_KEY, BTN_FORWARD, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]),
            &mut sink,
        );
        assert!(sink.writes.is_empty(), "{:?}", sink.writes);
    }

    #[test]
    fn a_lone_rel_wheel_of_i32_min_on_a_hires_mouse_is_inverted_and_clamped_not_forwarded_raw() {
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        p.feed(
            &bytes(&[(EV_REL, REL_WHEEL, i32::MIN), (EV_SYN, SYN_REPORT, 0)]),
            &mut sink,
        );
        let written = sink.writes.concat();
        assert!(
            !written.contains(&(EV_REL, REL_WHEEL, i32::MIN)),
            "{written:?}"
        );
        let hires: i32 = written
            .iter()
            .filter(|(t, c, _)| (*t, *c) == (EV_REL, REL_WHEEL_HI_RES))
            .map(|(_, _, v)| v)
            .sum();
        // Inverted (down becomes up), at most max_step = 5 detents.
        assert!(hires > 0 && hires <= 600, "{written:?}");
    }

    #[test]
    fn gesture_click_without_drag_passes_through_as_two_frames() {
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        p.feed(
            &bytes(&[
                (EV_MSC, MSC_SCAN, 0x90006),
                (EV_KEY, BTN_FORWARD, 1),
                (EV_SYN, SYN_REPORT, 0),
                (EV_MSC, MSC_SCAN, 0x90006),
                (EV_KEY, BTN_FORWARD, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]),
            &mut sink,
        );
        assert_eq!(
            sink.writes.concat(),
            vec![
                (EV_KEY, BTN_FORWARD, 1),
                (EV_SYN, SYN_REPORT, 0),
                (EV_KEY, BTN_FORWARD, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]
        );
    }

    #[test]
    fn cancel_releases_everything_pressed_on_the_clone() {
        let mut p = pipeline(&mx_caps(), true);
        let mut sink = Recorder::default();
        p.feed(
            &bytes(&[(EV_KEY, BTN_SIDE, 1), (EV_SYN, SYN_REPORT, 0)]),
            &mut sink,
        );
        sink.writes.clear();
        p.cancel(&mut sink);
        assert_eq!(
            sink.writes,
            vec![vec![(EV_KEY, BTN_SIDE, 0), (EV_SYN, SYN_REPORT, 0)]]
        );
        p.cancel(&mut sink);
        assert_eq!(sink.writes.len(), 1, "nothing left to release");
    }

    #[test]
    fn lowres_only_source_gets_hires_synthesized_when_not_transformed() {
        let mut p = pipeline(&mouse_caps(&[REL_WHEEL]), false);
        let mut sink = Recorder::default();
        p.feed(
            &bytes(&[(EV_REL, REL_WHEEL, -2), (EV_SYN, SYN_REPORT, 0)]),
            &mut sink,
        );
        assert_eq!(
            sink.writes,
            vec![vec![
                (EV_REL, REL_WHEEL_HI_RES, -240),
                (EV_REL, REL_WHEEL, -2),
                (EV_SYN, SYN_REPORT, 0)
            ]]
        );
    }

    #[test]
    fn hires_only_source_gets_lores_derived_from_accumulated_travel() {
        let mut p = pipeline(&mouse_caps(&[REL_WHEEL_HI_RES]), false);
        let mut sink = Recorder::default();
        for _ in 0..4 {
            p.feed(
                &bytes(&[(EV_REL, REL_WHEEL_HI_RES, 40), (EV_SYN, SYN_REPORT, 0)]),
                &mut sink,
            );
        }
        // 40, 80 forwarded unchanged; at 120 a detent; 40 more forwarded unchanged.
        assert_eq!(
            sink.writes,
            vec![
                vec![(EV_REL, REL_WHEEL_HI_RES, 40), (EV_SYN, SYN_REPORT, 0)],
                vec![(EV_REL, REL_WHEEL_HI_RES, 40), (EV_SYN, SYN_REPORT, 0)],
                vec![
                    (EV_REL, REL_WHEEL_HI_RES, 40),
                    (EV_REL, REL_WHEEL, 1),
                    (EV_SYN, SYN_REPORT, 0)
                ],
                vec![(EV_REL, REL_WHEEL_HI_RES, 40), (EV_SYN, SYN_REPORT, 0)],
            ]
        );
    }

    #[test]
    fn transformed_lowres_source_is_written_with_both_codes() {
        let mut p = pipeline(&mouse_caps(&[REL_WHEEL]), true);
        let mut sink = Recorder::default();
        p.feed(
            &bytes(&[(EV_REL, REL_WHEEL, 1), (EV_SYN, SYN_REPORT, 0)]),
            &mut sink,
        );
        let w = &sink.writes[0];
        assert!(
            w.iter().any(|e| e.1 == REL_WHEEL_HI_RES && e.0 == EV_REL),
            "{w:?}"
        );
    }

    fn swipe_pipeline() -> Pipeline {
        let mut config = Config::default_for(Platform::Linux);
        config.gesture.style = pawl_engine::config::GestureStyle::Swipe;
        config.gesture.fingers = Some(3);
        let engine = DeviceEngine::with_profile(&config, true, config.scroll);
        Pipeline::new(&mx_caps(), engine, "test")
    }

    /// Gesture button (5 = BTN_FORWARD) down, then `moves` as REL_X frames.
    fn swipe_start(moves: &[i32]) -> Vec<u8> {
        let mut ev = vec![
            (EV_MSC, MSC_SCAN, 0x90006),
            (EV_KEY, BTN_FORWARD, 1),
            (EV_SYN, SYN_REPORT, 0),
        ];
        for m in moves {
            ev.extend([(EV_REL, REL_X, *m), (EV_SYN, SYN_REPORT, 0)]);
        }
        bytes(&ev)
    }

    #[test]
    fn swipe_drag_goes_to_the_touchpad_and_the_clone_gets_no_motion() {
        let mut p = swipe_pipeline();
        let mut sink = Recorder::default();
        // Reports 1 ms apart: the fingers go down, the rest waits for the touchpad's pace.
        p.feed(&swipe_start(&[40, 40, 40]), &mut sink);
        p.feed(
            &bytes(&[
                (EV_MSC, MSC_SCAN, 0x90006),
                (EV_KEY, BTN_FORWARD, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]),
            &mut sink,
        );
        let all = sink.writes.concat();
        assert!(
            !all.iter().any(|e| e.0 == EV_REL || e.1 == BTN_FORWARD),
            "no motion and no gesture click on the clone: {all:?}"
        );
        assert_eq!(sink.touches.len(), 1, "{:?}", sink.touches);
        assert!(sink.touches[0].down && sink.touches[0].fingers == 3);
        // The timer writes the catch-up and the lift.
        let mut ticks = 0;
        while let Some(d) = p.next_deadline() {
            ticks += 1;
            assert!(ticks < 100, "the deadline does not move on");
            p.tick(d, &mut sink);
        }
        let t = &sink.touches;
        assert!(t.len() >= 3 && t[1].moved && !t[1].lift, "{t:?}");
        let last = t.last().unwrap();
        assert!(last.lift && last.dx == 120, "{t:?}");
        assert!(
            !sink.writes.concat().iter().any(|e| e.0 == EV_REL),
            "the ticks write nothing to the clone"
        );
    }

    #[test]
    fn swipe_unplug_mid_swipe_lifts_the_fingers() {
        let mut p = swipe_pipeline();
        let mut sink = Recorder::default();
        p.feed(&swipe_start(&[25]), &mut sink);
        sink.touches.clear();
        // The kernel's release-all frame (no MSC_SCAN).
        p.feed(
            &bytes(&[(EV_KEY, BTN_FORWARD, 0), (EV_SYN, SYN_REPORT, 0)]),
            &mut sink,
        );
        assert_eq!(sink.touches.len(), 1);
        assert!(sink.touches[0].lift && !sink.touches[0].down);
    }

    #[test]
    fn swipe_reload_mid_swipe_lifts_once_and_the_new_engine_writes_no_stray_touch_or_release() {
        // SIGHUP re-matches each node: the old pipeline is cancelled, a new one made, while
        // the gesture button is still held.
        let mut p = swipe_pipeline();
        let mut sink = Recorder::default();
        p.feed(&swipe_start(&[25, 25]), &mut sink);
        assert!(p.engine().swiping());
        sink.touches.clear();
        p.cancel(&mut sink);
        assert!(
            sink.touches.len() == 1 && sink.touches[0].lift,
            "{:?}",
            sink.touches
        );
        let mut p = swipe_pipeline();
        sink.touches.clear();
        sink.writes.clear();
        p.feed(
            &bytes(&[
                (EV_REL, REL_X, 30),
                (EV_SYN, SYN_REPORT, 0),
                (EV_MSC, MSC_SCAN, 0x90006),
                (EV_KEY, BTN_FORWARD, 0),
                (EV_SYN, SYN_REPORT, 0),
            ]),
            &mut sink,
        );
        while let Some(d) = p.next_deadline() {
            p.tick(d, &mut sink);
        }
        assert!(
            sink.touches.is_empty(),
            "no swipe from a press the new engine never saw: {:?}",
            sink.touches
        );
        assert!(
            !sink.writes.concat().iter().any(|e| e.1 == BTN_FORWARD),
            "no release of a press the clone never got: {:?}",
            sink.writes
        );
        assert!(!p.engine().swiping());
    }

    #[test]
    fn swipe_syn_dropped_and_exit_lift_the_fingers() {
        let mut p = swipe_pipeline();
        let mut sink = Recorder::default();
        p.feed(&swipe_start(&[25]), &mut sink);
        sink.touches.clear();
        // The kernel ends the lost stretch with a SYN_REPORT.
        p.feed(
            &bytes(&[(EV_SYN, SYN_DROPPED, 0), (EV_SYN, SYN_REPORT, 0)]),
            &mut sink,
        );
        assert!(sink.touches.len() == 1 && sink.touches[0].lift);
        p.feed(&swipe_start(&[25]), &mut sink);
        sink.touches.clear();
        p.cancel(&mut sink);
        assert!(sink.touches.len() == 1 && sink.touches[0].lift);
    }

    /// Frames of `events`, the first at `first` µs and each later one `every` µs after the
    /// one before (all events of a frame share its time, as the kernel stamps them).
    fn frames_at(first: u64, every: u64, frames: &[&[(u16, u16, i32)]]) -> Vec<u8> {
        frames
            .iter()
            .enumerate()
            .flat_map(|(i, f)| {
                let time = Micros(first + every * i as u64);
                f.iter()
                    .chain(&[(EV_SYN, SYN_REPORT, 0)])
                    .flat_map(move |&(type_, code, value)| {
                        Event {
                            time,
                            type_,
                            code,
                            value,
                        }
                        .to_bytes()
                    })
                    .collect::<Vec<u8>>()
            })
            .collect()
    }

    #[test]
    fn a_backlog_read_at_once_writes_one_touchpad_frame_and_the_rest_at_the_pace_of_the_writes() {
        // A 1000 Hz mouse drags right 6 px a report. pawl is held up for 100 ms and then
        // reads those 100 reports at once (timestamps 1 ms apart, one wake-up), then one
        // report per wake-up again, then the release.
        const X: &[(u16, u16, i32)] = &[(EV_REL, REL_X, 6)];
        let press: &[(u16, u16, i32)] = &[(EV_MSC, MSC_SCAN, 0x90006), (EV_KEY, BTN_FORWARD, 1)];
        let release: &[(u16, u16, i32)] = &[(EV_MSC, MSC_SCAN, 0x90006), (EV_KEY, BTN_FORWARD, 0)];
        let mut p = swipe_pipeline();
        let mut sink = Recorder::default();
        let mut feeds = 0;
        let mut feed = |p: &mut Pipeline, sink: &mut Recorder, clock: u64, bytes: &[u8]| {
            sink.clock = Micros(clock);
            feeds += 1;
            assert_eq!(p.feed(bytes, sink), bytes.len());
        };
        let ticks_until = |p: &mut Pipeline, sink: &mut Recorder, until: u64| {
            while let Some(d) = p.next_deadline().filter(|d| d.0 < until) {
                sink.clock = d;
                p.tick(d, sink);
            }
        };
        feed(
            &mut p,
            &mut sink,
            1_000,
            &frames_at(1_000, 1_000, &[press, X]),
        );
        let backlog: Vec<&[(u16, u16, i32)]> = vec![X; 100];
        ticks_until(&mut p, &mut sink, 102_000);
        let before = sink.touches.len();
        feed(
            &mut p,
            &mut sink,
            102_000,
            &frames_at(3_000, 1_000, &backlog),
        );
        assert!(
            sink.touches.len() - before <= 1,
            "one wake-up writes at most one touchpad frame: {:?}",
            &sink.touches[before..]
        );
        for i in 0..50u64 {
            let t = 103_000 + 1_000 * i;
            ticks_until(&mut p, &mut sink, t);
            feed(&mut p, &mut sink, t, &frames_at(t, 0, &[X]));
        }
        ticks_until(&mut p, &mut sink, 153_000);
        feed(
            &mut p,
            &mut sink,
            153_000,
            &frames_at(153_000, 0, &[release]),
        );
        ticks_until(&mut p, &mut sink, u64::MAX);
        assert_eq!(
            sink.clock_reads, feeds,
            "the clock is read once per wake-up"
        );
        assert!(!p.engine().swiping());
        let t = &sink.touches;
        let times = &sink.touch_times;
        assert!(t[0].down && t.last().unwrap().lift, "{t:?}");
        assert_eq!(
            t.iter().filter(|o| o.lift).count(),
            1,
            "one lift, the last frame: {t:?}"
        );
        assert_eq!(t.last().unwrap().dx, 6 * 151, "the whole drag: {t:?}");
        // Every move at least 7 ms after the frame before it, in the time of the writes, and
        // no longer than 12 units/ms of that time.
        let mut last = (times[0].0, 0);
        for (o, w) in t.iter().zip(times).skip(1).filter(|(o, _)| o.moved) {
            let dt = w.0 - last.0;
            assert!(
                dt >= 7_000,
                "touchpad frames {dt} µs apart: {t:?} at {times:?}"
            );
            let step = u64::from((o.dx - last.1).unsigned_abs());
            assert!(
                step <= 12 * dt.min(30_000) / 1000,
                "{step} units in {dt} µs"
            );
            last = (w.0, o.dx);
        }
        assert!(
            !sink.writes.concat().iter().any(|e| e.0 == EV_REL),
            "the clone gets no motion"
        );
    }

    #[test]
    fn a_touchpad_write_held_up_delays_the_next_touchpad_frame() {
        // A 1000 Hz mouse drags right 6 px a report, one report per wake-up; every touchpad
        // write returns 5 ms after the wake-up's clock. Each touchpad frame is written
        // 7 ms or more after the previous write ended, so the kernel's stamps of two frames
        // are never closer than that.
        const X: &[(u16, u16, i32)] = &[(EV_REL, REL_X, 6)];
        let press: &[(u16, u16, i32)] = &[(EV_MSC, MSC_SCAN, 0x90006), (EV_KEY, BTN_FORWARD, 1)];
        let mut p = swipe_pipeline();
        let mut sink = Recorder {
            touch_write_us: 5_000,
            ..Recorder::default()
        };
        for i in 0..80u64 {
            let t = 1_000 + 1_000 * i;
            while let Some(d) = p.next_deadline().filter(|d| d.0 < t) {
                sink.clock = d;
                p.tick(d, &mut sink);
            }
            sink.clock = Micros(t);
            let frame = if i == 0 { press } else { X };
            p.feed(&frames_at(t, 0, &[frame]), &mut sink);
        }
        let times = &sink.touch_times;
        assert!(times.len() >= 5, "{:?}", sink.touches);
        for w in times.windows(2) {
            assert!(
                w[1].0 >= w[0].0 + 5_000 + 7_000,
                "a touchpad frame 7 ms after the last write's end: {times:?}"
            );
        }
    }

    #[test]
    fn grab_mode_never_reads_the_clock() {
        // Shortcut style: motion, wheel, a gesture drag and a plain click run on the events'
        // timestamps alone.
        let config = Config::default_for(Platform::Linux);
        let engine = DeviceEngine::with_profile(&config, true, config.scroll);
        let mut p = Pipeline::new(&mx_caps(), engine, "test");
        let mut sink = Recorder::default();
        let frames: Vec<&[(u16, u16, i32)]> = vec![
            &[(EV_REL, REL_X, 3)],
            &[(EV_REL, REL_WHEEL, 1), (EV_REL, REL_WHEEL_HI_RES, 120)],
            &[(EV_MSC, MSC_SCAN, 0x90006), (EV_KEY, BTN_FORWARD, 1)],
            &[(EV_REL, REL_X, 300)],
            &[(EV_MSC, MSC_SCAN, 0x90006), (EV_KEY, BTN_FORWARD, 0)],
            &[(EV_MSC, MSC_SCAN, 0x90001), (EV_KEY, BTN_LEFT, 1)],
            &[(EV_MSC, MSC_SCAN, 0x90001), (EV_KEY, BTN_LEFT, 0)],
        ];
        p.feed(&frames_at(1_000, 8_000, &frames), &mut sink);
        while let Some(d) = p.next_deadline() {
            p.tick(d, &mut sink);
        }
        assert_eq!(sink.clock_reads, 0);
        assert!(sink.touches.is_empty());
        assert!(!sink.writes.is_empty() && !sink.actions.is_empty());
    }
}
