//! Replays a [`Recording`] through what the Linux backend runs per grabbed device: the same
//! [`Decoder`], [`DeviceEngine`] and [`encode_frame`], and the same source-stream rules
//! ([`crate::stream`]: the kernel's release-all frame is a cancel on a source that reports
//! `MSC_SCAN`; wheel codes the source lacks are added to untransformed frames), with recorded
//! time instead of a clock. Pure; `pawl replay` prints what this returns and draws its
//! [`Series`].
//!
//! Where it differs from the daemon: `SYN_DROPPED` cancels the engine (everything pressed is
//! released, a held gesture fires nothing), because a recording has no real button state to
//! resync from — the daemon reads `EVIOCGKEY` and keeps buttons that are still down. There
//! is no grab, and a device pawl does not handle is shown passing unchanged.
//!
//! Device decision: an identity given by the caller (`--device`) wins over the recording's
//! header; with one, [`Config::decide`] says whether pawl handles the device and whether its
//! scroll is transformed (a device pawl does not handle passes every frame unchanged). With
//! no identity at all the device is handled (gestures and buttons on) and its scroll is
//! transformed when `scroll.scope` is `mx-master-only`, `all-wheels` or a matcher list (the
//! unknown device is taken to be the one meant), passed through with `scope = "none"`; the
//! notes say which.

use std::fmt;

use pawl_engine::config::Scope;
use pawl_engine::units::Micros;
use pawl_engine::{Action, Config, DeviceEngine, DeviceInfo, FrameIn, FrameOut, Verdict};

use crate::frames::{Decoded, Decoder, EVENT_SIZE, Event, MAX_OUT_EVENTS, encode_frame};
use crate::record::{Recording, evemu_line};
use crate::stream::{WheelFixup, is_kernel_release};
use crate::touch::{MAX_TOUCH_EVENTS, TouchEncoder};

/// One point of the scroll time series: an input frame with wheel travel, or a glide tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// When, µs since the first event of the recording.
    pub t_us: u64,
    /// Input travel, v120 (0 for a glide tick).
    pub raw: i32,
    /// Output travel, v120.
    pub out: i32,
}

/// Raw and transformed scroll over time, per axis.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Series {
    /// The recorded time of the recording's first event, µs: `start_us + t_us` is a
    /// point's time as the `E:` lines print it.
    pub start_us: u64,
    /// Vertical wheel.
    pub wheel: Vec<Point>,
    /// Horizontal wheel.
    pub hwheel: Vec<Point>,
}

/// Totals for one wheel axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxisSummary {
    /// Frames with travel on this axis, in.
    pub frames_in: u32,
    /// Travel in, v120.
    pub v120_in: i64,
    /// Lo-res detents in (`REL_WHEEL` / `REL_HWHEEL` as recorded).
    pub detents_in: i64,
    /// Largest |travel| of one input frame, v120.
    pub max_in: i32,
    /// Frames (and glide ticks) with travel on this axis, out.
    pub frames_out: u32,
    /// Travel out, v120.
    pub v120_out: i64,
    /// Lo-res detents out.
    pub detents_out: i64,
    /// Largest |step| of one output frame, v120.
    pub max_out: i32,
}

/// What a replay did, in numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Input events (all types, as recorded).
    pub events_in: usize,
    /// Input frames (ended by `SYN_REPORT`).
    pub frames_in: u32,
    /// Frames forwarded unchanged.
    pub forwarded: u32,
    /// Frames rewritten with something to write.
    pub rewritten: u32,
    /// Frames swallowed (rewritten to nothing).
    pub swallowed: u32,
    /// Glide ticks that wrote a frame.
    pub ticks: u32,
    /// `SYN_DROPPED` markers.
    pub dropped: u32,
    /// Frames that were the kernel's release-every-key (cancels, not clicks).
    pub cancels: u32,
    /// Events after the last `SYN_REPORT` (an unfinished frame; ignored).
    pub trailing: usize,
    /// Output frames (`SYN_REPORT`s written).
    pub frames_out: u32,
    /// Pointer motion in and out, px: (Σdx, Σdy).
    pub motion_in: (i64, i64),
    /// Pointer motion out, px.
    pub motion_out: (i64, i64),
    /// Button transitions in and out.
    pub buttons_in: u32,
    /// Button transitions out.
    pub buttons_out: u32,
    /// Frames written to the swipe style's virtual touchpad (`SYN_REPORT`s).
    pub touch_frames: u32,
    /// Swipes (fingers put down).
    pub swipes: u32,
    /// Actions fired, by label, in first-fired order, with counts.
    pub actions: Vec<(String, u32)>,
    /// Vertical wheel.
    pub wheel: AxisSummary,
    /// Horizontal wheel.
    pub hwheel: AxisSummary,
    /// Time from the first to the last input event, µs.
    pub duration_us: u64,
}

/// The result of a replay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replay {
    /// How the device was decided, as `# ` comment lines (without the `# `).
    pub notes: Vec<String>,
    /// The output stream: evemu `E:` lines, `# action …` lines and, in swipe style,
    /// `# swipe …` lines each followed by the `# touchpad E: …` lines of the virtual
    /// touchpad's write, in order.
    pub lines: Vec<String>,
    /// Totals.
    pub summary: Summary,
    /// Scroll time series for plots.
    pub series: Series,
}

/// Replays `recording` under `config`. `device` overrides the recording's identity.
pub fn replay(recording: &Recording, config: &Config, device: Option<&DeviceInfo>) -> Replay {
    replay_as(recording, config, device, None)
}

/// The application [`replay_as`] replays under: its id and its window's title (`None`: as
/// from a backend without titles, so tables with a `title` do not apply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FocusedApp<'a> {
    /// The application id (Wayland `app_id`, X11 `WM_CLASS` class, macOS bundle id).
    pub id: &'a str,
    /// The window title, matched against `title` patterns.
    pub title: Option<&'a str>,
}

/// [`replay`] with application `app` focused throughout: the profile its `[[app]]` tables
/// give the device (the device profile when none applies, said in a note; nothing for a
/// device the config does not handle, said too). A recording
/// without identity and no `device` is matched as a device with an empty name, bus 0 and
/// ids 0000:0000, so tables narrowed by `device` do not apply to it.
pub fn replay_as(
    recording: &Recording,
    config: &Config,
    device: Option<&DeviceInfo>,
    app: Option<FocusedApp<'_>>,
) -> Replay {
    let mut res = Replay::default();
    let caps = recording.wheel_caps();
    let recorded = recording.device.info();
    let (info, source) = match (device, &recorded) {
        (Some(d), _) => (Some(d.clone()), "--device"),
        (None, Some(d)) => (Some(d.clone()), "recording header"),
        (None, None) => (None, ""),
    };
    let mut engine = replay_engine(config, info.as_ref(), source, &mut res.notes);
    match (app, engine.as_mut()) {
        (Some(app), Some(engine)) => replay_app(engine, config, info.as_ref(), app, &mut res.notes),
        (Some(app), None) => res.notes.push(format!(
            "app: {:?}: not applied (the device is not handled)",
            app.id
        )),
        (None, _) => {}
    }
    let msc_scan = recording.msc_scan();
    let fixup = WheelFixup::new(recording.missing_wheel_codes());
    res.notes.push(format!(
        "wheel: {}, horizontal wheel: {}",
        if caps.hires_wheel {
            "hi-res (REL_WHEEL_HI_RES)"
        } else {
            "lo-res (REL_WHEEL x 120)"
        },
        if caps.hires_hwheel {
            "hi-res (REL_HWHEEL_HI_RES)"
        } else {
            "lo-res (REL_HWHEEL x 120)"
        },
    ));

    let s = &mut res.summary;
    s.events_in = recording.events.len();
    let start = recording.events.first().map_or(Micros(0), |e| e.time);
    res.series.start_us = start.0;
    s.duration_us = recording.events.last().map_or(0, |e| e.time.since(start));
    let bytes: Vec<u8> = recording.events.iter().flat_map(|e| e.to_bytes()).collect();
    let mut decoder = Decoder::new(caps);
    let mut ctx = Ctx {
        config,
        start,
        res: &mut res,
        fixup,
        msc_scan,
        last: start,
        touch: TouchEncoder::default(),
    };
    let consumed = decoder.decode(&bytes, |d| match d {
        Decoded::Frame(frame, raw) => {
            if let Some(engine) = engine.as_mut() {
                ctx.ticks_until(engine, frame.time);
            }
            ctx.last = frame.time;
            ctx.frame(engine.as_mut(), &frame, raw);
        }
        Decoded::Dropped => {
            ctx.res.summary.dropped += 1;
            ctx.res.lines.push(
                "# SYN_DROPPED: engine cancelled (the daemon resyncs from the device's button state instead)"
                    .into(),
            );
            ctx.cancel(engine.as_mut());
        }
    });
    if let Some(engine) = engine.as_mut() {
        ctx.ticks_until(engine, Micros(u64::MAX));
    }
    res.summary.trailing = (bytes.len() - consumed) / EVENT_SIZE;
    res
}

/// The engine the replay runs `info`'s frames through, as the daemon would build it for
/// that device (`None`: the config leaves the device alone, every frame passes); without a
/// device, handled with the scope's scroll choice. The decision goes to `notes`; `source`
/// says where `info` came from.
fn replay_engine(
    config: &Config,
    info: Option<&DeviceInfo>,
    source: &str,
    notes: &mut Vec<String>,
) -> Option<DeviceEngine> {
    match info {
        Some(d) => {
            let decision = config.decide(d);
            notes.push(format!(
                "device: {:?} bus {} {:04x}:{:04x} (from {source})",
                d.name,
                d.bus.name(),
                d.vendor,
                d.product
            ));
            notes.push(format!(
                "decision: {}, scroll {} ({})",
                if decision.handle {
                    "handled"
                } else {
                    "not handled: every frame passes unchanged"
                },
                if decision.transform_scroll {
                    "transformed"
                } else {
                    "passed through"
                },
                decision.reason
            ));
            decision.handle.then(|| {
                DeviceEngine::with_profile(config, decision.transform_scroll, decision.scroll)
            })
        }
        None => {
            let (transform, why) = match &config.scope {
                Scope::None => (false, "scope \"none\": scroll passed through"),
                Scope::MxMasterOnly => (
                    true,
                    "scope \"mx-master-only\" treats it as in scope: scroll transformed",
                ),
                Scope::AllWheels => (
                    true,
                    "scope \"all-wheels\" treats it as in scope: scroll transformed",
                ),
                Scope::Matchers(_) => (
                    true,
                    "scope matchers treat it as in scope: scroll transformed",
                ),
            };
            notes.push(format!(
                "device: unknown (no header, no --device): handled, {why}"
            ));
            Some(DeviceEngine::with_profile(config, transform, config.scroll))
        }
    }
}

/// Puts `engine` on `app`'s profile (its `[[app]]` tables for `info`, or the device
/// profile when none names it) and says which in `notes`.
fn replay_app(
    engine: &mut DeviceEngine,
    config: &Config,
    info: Option<&DeviceInfo>,
    app: FocusedApp<'_>,
    notes: &mut Vec<String>,
) {
    let FocusedApp { id: app, title } = app;
    let d = info.cloned().unwrap_or(DeviceInfo {
        name: String::new(),
        bus: pawl_engine::Bus(0),
        vendor: 0,
        product: 0,
        has_wheel: true,
        is_touchpad: false,
    });
    engine.add_app_profiles(config, &d);
    let key = config.app_key(app, title);
    engine.set_app(key);
    let settings = key.and_then(|k| config.app_settings(&d, k));
    notes.push(match (key, settings) {
        (None, _) => match title {
            Some(t) => {
                format!("app: {app:?} titled {t:?}: no [[app]] table applies: the device profile")
            }
            None => format!("app: {app:?}: no [[app]] table applies: the device profile"),
        },
        (Some(_), None) => format!(
            "app: {app:?}: its [[app]] tables are narrowed to other devices: the device profile"
        ),
        (Some(_), Some(s)) => format!(
            "app: {app:?}: [[app]] at line {}",
            s.lines
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    });
}

struct Ctx<'a> {
    config: &'a Config,
    start: Micros,
    res: &'a mut Replay,
    /// Wheel codes the source lacks, added to untransformed frames as the daemon does.
    fixup: WheelFixup,
    /// The source reports `MSC_SCAN`: a frame of bare key releases is the kernel's.
    msc_scan: bool,
    /// Time of the last frame (a cancel is written then).
    last: Micros,
    /// The virtual touchpad's fingers and tracking ids, as the daemon's.
    touch: TouchEncoder,
}

impl Ctx<'_> {
    /// Runs every engine tick due before `until`: glide ticks, and a swipe's touchpad
    /// frames written on the timer (paced, or after the release), as the daemon's timer
    /// runs them.
    fn ticks_until(&mut self, engine: &mut DeviceEngine, until: Micros) {
        while let Some(t) = engine.next_deadline().filter(|t| *t < until) {
            let mut out = FrameOut::default();
            if engine.tick(t, &mut out) {
                self.res.summary.ticks += 1;
                self.res.lines.push("# glide tick".into());
                self.point(t, 0, 0, &out);
                self.write(&out, &[], t);
            }
            if !out.touch.is_empty() {
                self.res.lines.push("# swipe tick".into());
                self.write_touch(&out, t);
            }
        }
    }

    /// Cancels the engine (`SYN_DROPPED`, the kernel's release-all frame) and writes the
    /// releases it produces.
    fn cancel(&mut self, engine: Option<&mut DeviceEngine>) {
        self.fixup.reset();
        if let Some(engine) = engine {
            let mut out = FrameOut::default();
            if engine.cancel(&mut out) {
                self.write(&out, &[], self.last);
            }
            self.write_touch(&out, self.last);
        }
    }

    /// Prints the swipe's touchpad write of `out` (nothing without one): a `# swipe` line
    /// saying what the fingers do, then its events as `# touchpad E:` lines.
    fn write_touch(&mut self, out: &FrameOut, time: Micros) {
        let t = &out.touch;
        if t.is_empty() {
            return;
        }
        let mut buf = [0u8; MAX_TOUCH_EVENTS * EVENT_SIZE];
        let was_down = self.touch.fingers_down();
        let n = self.touch.encode(t, &mut buf);
        if n == 0 {
            return;
        }
        let mut what = Vec::new();
        if t.down && !was_down {
            self.res.summary.swipes += 1;
            what.push(format!("{} fingers down", t.fingers));
        }
        if t.moved {
            what.push(format!("moved to {:+} {:+} (touchpad units)", t.dx, t.dy));
        }
        if t.lift {
            what.push("lifted".to_owned());
        }
        self.res.lines.push(format!("# swipe: {}", what.join(", ")));
        for chunk in buf[..n].chunks_exact(EVENT_SIZE) {
            let mut e = Event::from_bytes(chunk.try_into().unwrap_or(&[0; EVENT_SIZE]));
            e.time = time;
            if e.is_syn_report() {
                self.res.summary.touch_frames += 1;
            }
            self.res
                .lines
                .push(format!("# touchpad {}", evemu_line(&e)));
        }
    }

    fn frame(&mut self, engine: Option<&mut DeviceEngine>, frame: &FrameIn, raw: &[u8]) {
        let s = &mut self.res.summary;
        s.frames_in += 1;
        s.motion_in.0 += i64::from(frame.dx);
        s.motion_in.1 += i64::from(frame.dy);
        s.buttons_in += frame.buttons.len() as u32;
        for (axis, w) in [(&mut s.wheel, frame.wheel), (&mut s.hwheel, frame.hwheel)] {
            if w.v120 != 0 || w.detents != 0 {
                axis.frames_in += 1;
                axis.v120_in += i64::from(w.v120);
                axis.detents_in += i64::from(w.detents);
                axis.max_in = axis.max_in.max(w.v120.saturating_abs());
            }
        }
        let mut out = FrameOut::default();
        let Some(engine) = engine else {
            // Not handled: never grabbed, so no clone and nothing fixed.
            self.forward(frame, raw);
            return;
        };
        if self.msc_scan && !frame.buttons.is_empty() && is_kernel_release(raw) {
            self.res.summary.cancels += 1;
            self.res
                .lines
                .push("# kernel released every key (no MSC_SCAN): engine cancelled".into());
            self.cancel(Some(engine));
            return;
        }
        let verdict = engine.frame(frame, &mut out);
        let transform = engine.profile().transform_scroll;
        if !self.fixup.settle(verdict, transform, frame, &mut out) {
            self.forward(frame, raw);
            return;
        }
        self.point(frame.time, frame.wheel.v120, frame.hwheel.v120, &out);
        let written = self.write(&out, raw, frame.time);
        let touched = !out.touch.is_empty();
        self.write_touch(&out, frame.time);
        match (verdict, written || touched) {
            // A forwarded frame the wheel fix-up rewrote still counts as forwarded.
            (Verdict::Forward, _) => self.res.summary.forwarded += 1,
            (Verdict::Rewrite, true) => self.res.summary.rewritten += 1,
            (Verdict::Rewrite, false) => self.res.summary.swallowed += 1,
        }
        for a in out.actions.as_slice() {
            let label = action_label(self.config, *a);
            self.res.lines.push(format!("# action {label}"));
            let actions = &mut self.res.summary.actions;
            match actions.iter_mut().find(|(l, _)| *l == label) {
                Some((_, n)) => *n += 1,
                None => actions.push((label, 1)),
            }
        }
    }

    /// Writes the frame's own bytes, unchanged.
    fn forward(&mut self, frame: &FrameIn, raw: &[u8]) {
        self.res.summary.forwarded += 1;
        let fwd = FrameOut::unchanged(frame);
        self.count_out(&fwd);
        self.point(frame.time, frame.wheel.v120, frame.hwheel.v120, &fwd);
        for chunk in raw.chunks_exact(EVENT_SIZE) {
            let e = Event::from_bytes(chunk.try_into().unwrap_or(&[0; EVENT_SIZE]));
            self.res.lines.push(evemu_line(&e));
        }
        self.res.summary.frames_out += 1;
    }

    /// Records a series point when either side has wheel travel.
    fn point(&mut self, t: Micros, raw_v: i32, raw_h: i32, out: &FrameOut) {
        let t_us = t.since(self.start);
        if raw_v != 0 || out.wheel.v120 != 0 {
            self.res.series.wheel.push(Point {
                t_us,
                raw: raw_v,
                out: out.wheel.v120,
            });
        }
        if raw_h != 0 || out.hwheel.v120 != 0 {
            self.res.series.hwheel.push(Point {
                t_us,
                raw: raw_h,
                out: out.hwheel.v120,
            });
        }
    }

    fn count_out(&mut self, out: &FrameOut) {
        let s = &mut self.res.summary;
        s.motion_out.0 += i64::from(out.dx);
        s.motion_out.1 += i64::from(out.dy);
        s.buttons_out += out.buttons.len() as u32;
        for (axis, w) in [(&mut s.wheel, out.wheel), (&mut s.hwheel, out.hwheel)] {
            if !w.is_zero() {
                axis.frames_out += 1;
                axis.v120_out += i64::from(w.v120);
                axis.detents_out += i64::from(w.detents);
                axis.max_out = axis.max_out.max(w.v120.saturating_abs());
            }
        }
    }

    /// Encodes and prints a rewritten frame at `time`; returns whether anything was written.
    fn write(&mut self, out: &FrameOut, raw: &[u8], time: Micros) -> bool {
        let mut buf = [0u8; MAX_OUT_EVENTS * EVENT_SIZE];
        let n = encode_frame(out, raw, &mut buf);
        if n == 0 {
            return false;
        }
        self.count_out(out);
        for chunk in buf[..n].chunks_exact(EVENT_SIZE) {
            let mut e = Event::from_bytes(chunk.try_into().unwrap_or(&[0; EVENT_SIZE]));
            e.time = time;
            if e.is_syn_report() {
                self.res.summary.frames_out += 1;
            }
            self.res.lines.push(evemu_line(&e));
        }
        true
    }
}

/// `desktop-left`, `key Super+A`, `command notify-send hi`.
pub fn action_label(config: &Config, a: Action) -> String {
    match a {
        Action::Key(i) => format!(
            "key {}",
            config
                .chords
                .get(usize::from(i))
                .map_or("?".into(), |c| c.to_string())
        ),
        Action::Command(i) => format!(
            "command {}",
            config
                .commands
                .get(usize::from(i))
                .map_or("?".into(), |c| c.join(" "))
        ),
        a => a.name().unwrap_or("?").to_owned(),
    }
}

impl fmt::Display for AxisSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let det = |v: i64| v as f64 / 120.0;
        write!(
            f,
            "in {} v120 ({:+.2} detents, lo-res {:+}) in {} frames, max step {}; \
             out {} v120 ({:+.2} detents, lo-res {:+}) in {} frames, max step {}",
            self.v120_in,
            det(self.v120_in),
            self.detents_in,
            self.frames_in,
            self.max_in,
            self.v120_out,
            det(self.v120_out),
            self.detents_out,
            self.frames_out,
            self.max_out
        )
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "events in: {} over {:.3} s{}",
            self.events_in,
            self.duration_us as f64 / 1e6,
            if self.trailing > 0 {
                format!(" ({} after the last SYN_REPORT, ignored)", self.trailing)
            } else {
                String::new()
            }
        )?;
        writeln!(
            f,
            "frames in: {} (forwarded {}, rewritten {}, swallowed {}{})",
            self.frames_in,
            self.forwarded,
            self.rewritten,
            self.swallowed,
            [
                (self.dropped, "SYN_DROPPED"),
                (self.cancels, "kernel release-all"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!(", {what} {n}"))
            .collect::<String>()
        )?;
        writeln!(
            f,
            "frames out: {} (glide ticks {})",
            self.frames_out, self.ticks
        )?;
        if self.swipes > 0 || self.touch_frames > 0 {
            writeln!(
                f,
                "touchpad: {} swipes, {} frames",
                self.swipes, self.touch_frames
            )?;
        }
        writeln!(
            f,
            "motion: in ({}, {}) px, out ({}, {}) px",
            self.motion_in.0, self.motion_in.1, self.motion_out.0, self.motion_out.1
        )?;
        writeln!(
            f,
            "buttons: in {} transitions, out {}",
            self.buttons_in, self.buttons_out
        )?;
        writeln!(f, "vertical: {}", self.wheel)?;
        writeln!(f, "horizontal: {}", self.hwheel)?;
        let actions: Vec<String> = self
            .actions
            .iter()
            .map(|(l, n)| format!("{l} x{n}"))
            .collect();
        writeln!(
            f,
            "actions: {}",
            if actions.is_empty() {
                "none".into()
            } else {
                actions.join(", ")
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::parse;
    use pawl_engine::Platform;

    fn run(text: &str, config: &str) -> Replay {
        let config = Config::parse(config, "test.toml", Platform::Linux).unwrap();
        replay(&parse(text).unwrap(), &config, None)
    }

    #[test]
    fn unknown_device_is_treated_as_in_scope_and_says_so() {
        let r = run("E: 0.0 0002 0008 1\nE: 0.0 0000 0000 0\n", "");
        assert!(
            r.notes[0].contains("\"mx-master-only\" treats it as in scope"),
            "{:?}",
            r.notes
        );
        assert_eq!(
            r.lines,
            [
                "E: 0.000000 0002 000b -120",
                "E: 0.000000 0002 0008 -1",
                "E: 0.000000 0000 0000 0"
            ]
        );
        assert_eq!(r.summary.wheel.v120_out, -120);
    }

    #[test]
    fn unknown_device_with_scope_none_keeps_its_scroll_unchanged() {
        let r = run(
            "E: 0.0 0002 000b 60\nE: 0.0 0000 0000 0\nE: 0.1 0001 0115 1\nE: 0.1 0000 0000 0\nE: 0.2 0002 0000 300\nE: 0.2 0000 0000 0\n",
            "[scroll]\nscope = \"none\"\n",
        );
        assert!(
            r.notes[0].contains("scope \"none\": scroll passed through"),
            "{:?}",
            r.notes
        );
        assert_eq!(
            r.lines[..2],
            ["E: 0.000000 0002 000b 60", "E: 0.000000 0000 0000 0"]
        );
        assert_eq!(r.summary.wheel.v120_out, 60);
        // Gestures still work on the unknown device.
        assert_eq!(r.summary.actions, [("desktop-left".to_owned(), 1)]);
    }

    #[test]
    fn kernel_release_frame_cancels_a_held_gesture_instead_of_clicking() {
        // hid-input sends MSC_SCAN with each real button change; the kernel's release-all
        // frame on unplug has none.
        let text = "\
E: 0.000000 0004 0004 589830
E: 0.000000 0001 0115 1
E: 0.000000 0000 0000 0
E: 0.010000 0001 0110 1
E: 0.010000 0004 0004 589825
E: 0.010000 0000 0000 0
E: 0.020000 0001 0110 0
E: 0.020000 0001 0115 0
E: 0.020000 0000 0000 0
";
        let r = run(text, "");
        assert_eq!(r.summary.cancels, 1);
        assert!(r.summary.actions.is_empty());
        assert_eq!(
            r.lines[r.lines.len() - 3..],
            [
                "# kernel released every key (no MSC_SCAN): engine cancelled",
                "E: 0.020000 0001 0110 0",
                "E: 0.020000 0000 0000 0"
            ],
            "the left button is released, the gesture button never clicks"
        );
    }

    #[test]
    fn untransformed_lores_only_source_gets_hires_added_as_the_daemon_writes_it() {
        let text = "N: PixArt Mouse\nI: 0003 093a 2510 0111\nB: 00 07 00 00 00 00 00 00 00\nB: 02 03 01 00 00 00 00 00 00\nE: 0.0 0002 0008 -1\nE: 0.0 0000 0000 0\n";
        let r = run(text, "[[device]]\nname = \"PixArt*\"\nhandle = true\n");
        assert!(
            r.notes[1].contains("scroll passed through"),
            "{:?}",
            r.notes
        );
        assert_eq!(
            r.lines,
            [
                "E: 0.000000 0002 000b -120",
                "E: 0.000000 0002 0008 -1",
                "E: 0.000000 0000 0000 0"
            ]
        );
    }

    #[test]
    fn syn_dropped_cancels_and_says_that_the_daemon_resyncs_instead() {
        let text =
            "E: 0.0 0001 0110 1\nE: 0.0 0000 0000 0\nE: 0.1 0000 0003 0\nE: 0.1 0000 0000 0\n";
        let r = run(text, "");
        assert_eq!(r.summary.dropped, 1);
        assert!(
            r.lines[2].starts_with("# SYN_DROPPED: engine cancelled"),
            "{:?}",
            r.lines
        );
        assert_eq!(
            r.lines[3..],
            ["E: 0.000000 0001 0110 0", "E: 0.000000 0000 0000 0"]
        );
    }

    #[test]
    fn a_device_pawl_does_not_handle_passes_unchanged() {
        let text =
            "N: PixArt Mouse\nI: 0003 093a 2510 0111\nE: 0.0 0002 0008 1\nE: 0.0 0000 0000 0\n";
        let r = run(text, "");
        assert!(
            r.notes[1].starts_with("decision: not handled"),
            "{:?}",
            r.notes
        );
        assert_eq!(
            r.lines,
            ["E: 0.000000 0002 0008 1", "E: 0.000000 0000 0000 0"]
        );
        assert_eq!(r.summary.forwarded, 1);
    }

    #[test]
    fn an_app_on_a_device_pawl_does_not_handle_is_said_to_be_not_applied() {
        let text =
            "N: Generic Mouse\nI: 0003 046d c077 0111\nE: 0.0 0002 0008 1\nE: 0.0 0000 0000 0\n";
        let config = Config::parse(
            "[[app]]\napp_id = \"game\"\n[app.scroll]\ninvert_vertical = false\n",
            "test.toml",
            Platform::Linux,
        )
        .unwrap();
        let app = FocusedApp {
            id: "game",
            title: None,
        };
        let r = replay_as(&parse(text).unwrap(), &config, None, Some(app));
        assert!(
            r.notes[1].starts_with("decision: not handled"),
            "{:?}",
            r.notes
        );
        assert_eq!(
            r.notes[2],
            "app: \"game\": not applied (the device is not handled)"
        );
        assert_eq!(
            r.lines,
            ["E: 0.000000 0002 0008 1", "E: 0.000000 0000 0000 0"]
        );
        // Handled (a [[device]] rule takes it), the same mouse gets the app's table.
        let config = Config::parse(
            "[[device]]\nname = \"Generic Mouse\"\ntransform_scroll = true\n[[app]]\napp_id = \"game\"\n[app.scroll]\ninvert_vertical = false\n",
            "test.toml",
            Platform::Linux,
        )
        .unwrap();
        let r = replay_as(&parse(text).unwrap(), &config, None, Some(app));
        assert_eq!(
            r.notes[2], "app: \"game\": [[app]] at line 4",
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn gesture_drag_prints_the_action_and_swallows_the_drag() {
        let text = "\
E: 0.000000 0001 0115 1
E: 0.000000 0000 0000 0
E: 0.008000 0002 0000 250
E: 0.008000 0000 0000 0
E: 0.100000 0001 0115 0
E: 0.100000 0000 0000 0
";
        let r = run(text, "");
        assert_eq!(r.lines, ["# action desktop-left"]);
        assert_eq!(r.summary.swallowed, 3);
        assert_eq!(r.summary.actions, [("desktop-left".to_owned(), 1)]);
    }

    #[test]
    fn swipe_style_replay_prints_the_touchpad_frames_and_no_action() {
        let text = "\
E: 0.000000 0001 0115 1
E: 0.000000 0000 0000 0
E: 0.008000 0002 0000 250
E: 0.008000 0000 0000 0
E: 0.100000 0001 0115 0
E: 0.100000 0000 0000 0
";
        let r = run(text, "[gesture]\nstyle = \"swipe\"\nfingers = 3\n");
        assert!(r.summary.actions.is_empty());
        // The fingers go down with the report; the hand then rests, so the timer moves them
        // (20 ms later, at most 12 units/ms, then 7 ms later the rest); the release lifts.
        let swipes: Vec<&String> = r
            .lines
            .iter()
            .filter(|l| l.starts_with("# swipe"))
            .collect();
        assert_eq!(
            swipes,
            [
                "# swipe: 3 fingers down",
                "# swipe tick",
                "# swipe: moved to +240 +0 (touchpad units)",
                "# swipe tick",
                "# swipe: moved to +250 +0 (touchpad units)",
                "# swipe: lifted",
            ],
            "{:#?}",
            r.lines
        );
        for line in [
            "# touchpad E: 0.008000 0001 014e 1",
            "# touchpad E: 0.028000 0003 0035 3480",
            "# touchpad E: 0.035000 0003 0035 3490",
            "# touchpad E: 0.100000 0003 0039 -1",
        ] {
            assert!(r.lines.contains(&line.to_owned()), "{line}: {:#?}", r.lines);
        }
        assert!(
            !r.lines.iter().any(|l| l.starts_with("E:")),
            "the clone gets nothing"
        );
        assert_eq!((r.summary.swipes, r.summary.touch_frames), (1, 4));
    }

    #[test]
    fn glide_ticks_are_replayed_between_frames_and_after_the_last() {
        let mut text = String::new();
        for i in 0..4 {
            text += &format!(
                "E: 0.{:06} 0002 0008 1\nE: 0.{:06} 0000 0000 0\n",
                i * 8000,
                i * 8000
            );
        }
        let r = run(
            &text,
            "[scroll]\ninertia = \"glide\"\nsmoothing = \"none\"\n",
        );
        assert!(r.summary.ticks > 2, "{}", r.summary);
        assert!(r.lines.iter().any(|l| l == "# glide tick"));
        assert_eq!(
            r.series.wheel.iter().filter(|p| p.raw == 0).count() as u32,
            r.summary.ticks
        );
    }

    #[test]
    fn unfinished_last_frame_is_reported() {
        let r = run(
            "E: 0.0 0002 0000 1\nE: 0.0 0000 0000 0\nE: 0.1 0002 0000 1\n",
            "",
        );
        assert_eq!(r.summary.trailing, 1);
        assert!(
            r.summary
                .to_string()
                .contains("1 after the last SYN_REPORT")
        );
    }

    /// An MX Master 3S header with hi-res wheels, `types` the `B: 00` byte: "17" = SYN KEY
    /// REL MSC with `MSC_SCAN` (`B: 04 10`), "07" = without `EV_MSC`.
    fn header(types: &str) -> String {
        let msc = if types == "17" {
            "B: 04 10 00 00 00 00 00 00 00\n"
        } else {
            ""
        };
        format!(
            "N: Logitech MX Master 3S\nI: 0005 046d b034 0011\nB: 00 {types} 00 00 00 00 00 00 00\nB: 02 43 19 00 00 00 00 00 00\n{msc}"
        )
    }

    const GESTURE_CLICK: &str = "E: 0.000000 0001 0115 1\nE: 0.000000 0000 0000 0\nE: 0.100000 0001 0115 0\nE: 0.100000 0000 0000 0\n";

    #[test]
    fn the_release_all_rule_never_fires_on_a_device_without_msc_scan() {
        let r = run(&(header("07") + GESTURE_CLICK), "");
        assert_eq!(r.summary.cancels, 0);
        assert_eq!(
            r.lines,
            [
                "E: 0.100000 0001 0115 1",
                "E: 0.100000 0000 0000 0",
                "E: 0.100000 0001 0115 0",
                "E: 0.100000 0000 0000 0"
            ]
        );
        // Without capabilities and without MSC_SCAN in the stream: the same.
        assert_eq!(run(GESTURE_CLICK, "").summary.cancels, 0);
    }

    #[test]
    fn a_release_without_msc_scan_from_a_device_that_sends_it_is_a_cancel() {
        let r = run(&(header("17") + GESTURE_CLICK), "");
        assert_eq!(r.summary.cancels, 1);
        assert!(
            !r.lines.iter().any(|l| l.contains("0001 0115")),
            "{:?}",
            r.lines
        );
    }

    #[test]
    fn a_lone_rel_wheel_of_i32_min_on_a_hires_device_is_inverted_and_clamped() {
        let r = run(
            &(header("17") + "E: 0.0 0002 0008 -2147483648\nE: 0.0 0000 0000 0\n"),
            "",
        );
        assert_eq!(r.summary.rewritten, 1, "{}", r.summary);
        // Inverted (down becomes up), clamped to max_step = 5 detents.
        let out = r.summary.wheel.v120_out;
        assert!(out > 0 && out <= 600, "{}", r.summary);
        assert!(
            !r.lines.iter().any(|l| l.contains("-2147483648")),
            "{:?}",
            r.lines
        );
    }
}
