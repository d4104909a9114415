//! The `linux_pipeline` target: bytes as read from a grabbed node through the Linux hot
//! path ([`pawl_linux::pipeline::Pipeline`]: decoder → engine → encoder, wheel fix-ups, the
//! kernel-release rule) into a sink that records what the clone would be sent, with the
//! daemon's read buffer, glide ticks at the stream's own times, `SYN_DROPPED` resyncs,
//! injected thumb wheel frames and a final cancel (the daemon's exit).
//!
//! Input: 3 header bytes, then the stream. Byte 0: the source's codes (bit 0 `REL_WHEEL`,
//! 1 `REL_WHEEL_HI_RES`, 2 `REL_HWHEEL`, 3 `REL_HWHEEL_HI_RES`, 4 `MSC_SCAN`), bit 5 scroll
//! transformed, bits 6–7 the config (default, glide inertia, gesture on button 3 with
//! back/forward mapped, smoothing off with scope all-wheels). Byte 1: the read size.
//! Byte 2: bit 0 inject a thumb wheel frame after each read, bits 1–7 the buttons
//! `EVIOCGKEY` shows down at a resync.
//!
//! Checked: every write to the clone is whole events ending in `SYN_REPORT` (a frame the
//! clone would otherwise merge with the next); after each read the mouse buttons down on
//! the clone (from what was written) are the engine's `pressed_out`; a tick moves its
//! deadline forward and glides end; after the final cancel no mouse button is down on the
//! clone; no touchpad frame is written (none of the configs is swipe style).

use std::sync::OnceLock;

use pawl_engine::units::{Button, ButtonSet, Micros};
use pawl_engine::{Action, Config, DeviceEngine, FrameIn, Platform, TouchOut, WheelIn};
use pawl_evdev::EVENT_SIZE;
use pawl_evdev::codes::*;
use pawl_linux::caps::Caps;
use pawl_linux::pipeline::{Pipeline, ReadBuf, Sink};

use crate::events;

/// The configs byte 0 picks from.
fn configs() -> &'static [Config; 4] {
    static CONFIGS: OnceLock<[Config; 4]> = OnceLock::new();
    CONFIGS.get_or_init(|| {
        let parse = |text: &str| {
            Config::parse(text, "fuzz.toml", Platform::Linux).expect("a valid fuzz config")
        };
        [
            Config::default_for(Platform::Linux),
            parse("[scroll]\ninertia = \"glide\"\n"),
            parse(
                "[gesture]\nbutton = 3\n[buttons]\nback = 5\nforward = 4\non_back = \"desktop-left\"\non_forward = \"overview\"\n",
            ),
            parse("[scroll]\nsmoothing = \"none\"\nscope = \"all-wheels\"\nmax_step = 1.0\n"),
        ]
    })
}

/// The clone as far as the writes tell, and what else the pipeline asked for.
#[derive(Default)]
struct Clone {
    /// Mouse buttons (0-based) down on the clone.
    down: ButtonSet,
    /// What `EVIOCGKEY` shows at a resync.
    source_down: ButtonSet,
    writes: usize,
    actions: usize,
}

impl Sink for Clone {
    fn write_clone(&mut self, bytes: &[u8]) {
        assert!(!bytes.is_empty(), "an empty write");
        assert_eq!(bytes.len() % EVENT_SIZE, 0, "a write of partial events");
        let mut last = None;
        for e in events(bytes) {
            if e.type_ == EV_KEY && (BTN_MOUSE..BTN_MOUSE_END).contains(&e.code) && e.value != 2 {
                self.down
                    .set(Button((e.code - BTN_MOUSE) as u8), e.value != 0);
            }
            last = Some(e);
        }
        assert!(
            last.is_some_and(|e| e.is_syn_report()),
            "a write that does not end in SYN_REPORT: {:?}",
            events(bytes).collect::<Vec<_>>()
        );
        self.writes += 1;
    }

    fn perform(&mut self, _action: Action) {
        self.actions += 1;
    }

    fn touch(&mut self, _touch: &TouchOut) -> pawl_engine::units::Micros {
        // None of the configs is swipe style: the virtual touchpad is never written.
        panic!("a touchpad frame without [gesture] style = \"swipe\"");
    }

    fn buttons_down(&mut self) -> Option<ButtonSet> {
        Some(self.source_down)
    }

    fn now(&mut self) -> Micros {
        // Only a swipe asks for the write time.
        panic!("the clock read without [gesture] style = \"swipe\"");
    }
}

/// Runs one input (see the module documentation for its header).
pub fn run(data: &[u8]) {
    let [codes, read, extra, stream @ ..] = data else {
        return;
    };
    let mut caps = Caps::default();
    for ev in [EV_SYN, EV_KEY, EV_REL] {
        caps.ev.set(ev);
    }
    for b in BTN_LEFT..=BTN_TASK {
        caps.key.set(b);
    }
    caps.rel.set(REL_X);
    caps.rel.set(REL_Y);
    for (bit, code) in [REL_WHEEL, REL_WHEEL_HI_RES, REL_HWHEEL, REL_HWHEEL_HI_RES]
        .into_iter()
        .enumerate()
    {
        if codes & (1 << bit) != 0 {
            caps.rel.set(code);
        }
    }
    if codes & 0x10 != 0 {
        caps.ev.set(EV_MSC);
        caps.msc.set(MSC_SCAN);
    }
    let transform = codes & 0x20 != 0;
    let config = &configs()[usize::from(codes >> 6)];
    let engine = DeviceEngine::with_profile(config, transform, config.scroll);
    let mut pipeline = Pipeline::new(&caps, engine, "fuzz");
    let mut clone = Clone {
        source_down: ButtonSet(u32::from(extra >> 1)),
        ..Clone::default()
    };
    let read_size = 1 + usize::from(*read) * 29;
    let inject = extra & 1 != 0;

    let mut buf = ReadBuf::default();
    let mut rest = stream;
    let mut now = Micros(0);
    while !rest.is_empty() {
        let spare = buf.spare();
        let n = read_size.min(spare.len()).min(rest.len());
        spare[..n].copy_from_slice(&rest[..n]);
        rest = &rest[n..];
        buf.filled_by_read(n);
        let used = pipeline.feed(buf.filled(), &mut clone);
        assert!(used <= buf.filled().len() && used.is_multiple_of(EVENT_SIZE));
        // The daemon's clock: at least the time of the last event read.
        if let Some(t) = events(&buf.filled()[..used]).map(|e| e.time).max() {
            now = now.max(t);
        }
        buf.consume(used);
        if buf.is_full() {
            buf.clear();
            pipeline.drop_partial_frame(&mut clone);
        }
        ticks(&mut pipeline, now, &mut clone);
        if inject {
            let v120 = i32::from(*read as i8) * 6;
            let frame = FrameIn {
                time: now,
                hwheel: WheelIn { v120, detents: 0 },
                ..FrameIn::default()
            };
            pipeline.inject(&frame, &mut clone);
        }
        assert_eq!(
            clone.down,
            pipeline.engine().pressed_out(),
            "buttons down on the clone differ from the engine's"
        );
    }
    ticks(&mut pipeline, now.plus(10_000_000), &mut clone);
    // (A deadline may be left at the end of time, see `ticks`; cancel stops it.)
    pipeline.cancel(&mut clone);
    assert!(
        clone.down.is_empty(),
        "buttons still down on the clone after cancel: {:?}",
        clone.down
    );
    assert_eq!(pipeline.next_deadline(), None, "a deadline after cancel");
}

/// Runs every tick due by `now`, as the daemon's timerfd would.
fn ticks(pipeline: &mut Pipeline, now: Micros, clone: &mut Clone) {
    // A glide decays to nothing in well under a thousand ticks. Times from the stream can
    // be anything; the last microsecond of `u64` is past any clock (a deadline saturates
    // there), so the daemon's timer never reaches it.
    for _ in 0..10_000 {
        match pipeline.next_deadline() {
            Some(d) if d <= now && d != Micros(u64::MAX) => {
                pipeline.tick(d, clone);
                assert!(
                    pipeline.next_deadline().is_none_or(|next| next > d),
                    "a tick at {d:?} left its deadline at or before it"
                );
            }
            _ => return,
        }
    }
    panic!("10,000 ticks and the glide has not ended");
}
