//! The `evdev_decoder` target: bytes as read from an evdev node into
//! [`pawl_evdev::Decoder`], once whole and once in reads of the size the first byte gives
//! (the rest kept for the next read, as the daemon's read buffer does).
//!
//! Checked: the consumed length is whole events within the input; each frame's raw bytes
//! are whole events ending in its one `SYN_REPORT`, with no `SYN_DROPPED`, and the frame's
//! time is that `SYN_REPORT`'s; after a `SYN_DROPPED` nothing is decoded until the next
//! `SYN_REPORT`; and the pieces give exactly the frames, drops and leftover of the whole.

use pawl_engine::FrameIn;
use pawl_evdev::codes::{EV_SYN, SYN_DROPPED, SYN_REPORT};
use pawl_evdev::{Decoded, Decoder, EVENT_SIZE, Event, WheelCaps};

use crate::events;

/// What the decoder reported, owned.
#[derive(Debug, PartialEq, Eq)]
enum Item {
    Frame(FrameIn, Vec<u8>),
    Dropped,
}

/// Runs one input: byte 0 is the header (bit 0 hi-res wheel, bit 1 hi-res horizontal
/// wheel, bits 2–7 the read size), the rest the stream.
pub fn run(data: &[u8]) {
    let Some((&header, stream)) = data.split_first() else {
        return;
    };
    let caps = WheelCaps {
        hires_wheel: header & 1 != 0,
        hires_hwheel: header & 2 != 0,
    };
    let read_size = 1 + usize::from(header >> 2) * 7;

    let mut whole = Vec::new();
    let mut decoder = Decoder::new(caps);
    let consumed = decoder.decode(stream, |d| whole.push(check(d)));
    assert!(consumed <= stream.len());
    assert_eq!(consumed % EVENT_SIZE, 0);
    let ends = stream.len() - (stream.len() - consumed) % EVENT_SIZE;
    // Nothing after the last consumed event completes a frame.
    assert!(
        events(&stream[consumed..ends])
            .all(|e| !(e.type_ == EV_SYN && (e.code == SYN_REPORT || e.code == SYN_DROPPED))),
        "a SYN_REPORT or SYN_DROPPED left unconsumed"
    );
    assert_eq!(
        whole
            .iter()
            .filter(|i| matches!(i, Item::Frame(..)))
            .count(),
        frames_expected(stream, consumed),
        "frames decoded"
    );

    let mut pieces = Vec::new();
    let mut decoder = Decoder::new(caps);
    let mut kept: Vec<u8> = Vec::new();
    for read in stream.chunks(read_size) {
        kept.extend_from_slice(read);
        let n = decoder.decode(&kept, |d| pieces.push(check(d)));
        assert_eq!(n % EVENT_SIZE, 0);
        kept.drain(..n);
    }
    assert_eq!(
        pieces, whole,
        "reads of {read_size} bytes decode differently"
    );
    assert_eq!(kept, &stream[consumed..], "leftover differs");
}

fn check(d: Decoded<'_>) -> Item {
    match d {
        Decoded::Frame(frame, raw) => {
            assert!(!raw.is_empty() && raw.len() % EVENT_SIZE == 0);
            let evs: Vec<Event> = events(raw).collect();
            let last = evs.last().expect("not empty");
            assert!(last.is_syn_report(), "frame not ending in SYN_REPORT");
            assert_eq!(frame.time, last.time, "frame time is its SYN_REPORT's");
            assert!(
                evs[..evs.len() - 1].iter().all(
                    |e| !(e.type_ == EV_SYN && (e.code == SYN_REPORT || e.code == SYN_DROPPED))
                ),
                "a frame spans a SYN_REPORT or SYN_DROPPED"
            );
            Item::Frame(frame, raw.to_vec())
        }
        Decoded::Dropped => Item::Dropped,
    }
}

/// `SYN_REPORT`s in the consumed part that are not the end of a dropped stretch.
fn frames_expected(stream: &[u8], consumed: usize) -> usize {
    let mut dropping = false;
    let mut n = 0;
    for e in events(&stream[..consumed]) {
        if e.type_ != EV_SYN {
            continue;
        }
        match e.code {
            SYN_DROPPED => dropping = true,
            SYN_REPORT if dropping => dropping = false,
            SYN_REPORT => n += 1,
            _ => {}
        }
    }
    n
}
