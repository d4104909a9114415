//! Property tests: any event stream, extreme values included, goes through the decoder, the
//! engine and the encoder without a panic (tests run in debug builds, where an integer
//! overflow panics), and no text makes the recording parsers panic.

use pawl_engine::units::Micros;
use pawl_engine::{Config, Platform};
use pawl_evdev::codes::*;
use pawl_evdev::record::{self, Format, RecordedDevice, Recording};
use pawl_evdev::replay::replay;
use pawl_evdev::{Decoded, Decoder, Event, MAX_OUT_EVENTS, WheelCaps, encode_frame};
use proptest::prelude::*;

/// A value: small, any, or an `i32` extreme.
fn value() -> impl Strategy<Value = i32> {
    prop_oneof![
        4 => -300i32..300,
        2 => any::<i32>(),
        2 => prop_oneof![Just(i32::MIN), Just(i32::MAX), Just(i32::MIN + 1), Just(20_000_000)],
    ]
}

/// One event of a mouse-like stream: motion, both wheels in both resolutions, buttons
/// (including autorepeat 2 and odd values), `MSC_SCAN`, `SYN_REPORT`, `SYN_DROPPED`.
fn event() -> impl Strategy<Value = (u16, u16, i32)> {
    prop_oneof![
        4 => (
            prop_oneof![
                Just(REL_X),
                Just(REL_Y),
                Just(REL_WHEEL),
                Just(REL_HWHEEL),
                Just(REL_WHEEL_HI_RES),
                Just(REL_HWHEEL_HI_RES)
            ],
            value()
        )
            .prop_map(|(c, v)| (EV_REL, c, v)),
        2 => (BTN_MOUSE..BTN_MOUSE_END + 2, prop_oneof![Just(0), Just(1), Just(2), value()])
            .prop_map(|(c, v)| (EV_KEY, c, v)),
        1 => value().prop_map(|v| (EV_MSC, MSC_SCAN, v)),
        3 => Just((EV_SYN, SYN_REPORT, 0)),
        1 => Just((EV_SYN, SYN_DROPPED, 0)),
    ]
}

fn stream() -> impl Strategy<Value = Vec<Event>> {
    prop::collection::vec(
        (
            prop_oneof![0u64..3_000, 0u64..400_000, Just(u64::MAX / 2)],
            event(),
        ),
        0..150,
    )
    .prop_map(|evs| {
        let mut t = Micros(0);
        evs.into_iter()
            .map(|(gap, (type_, code, value))| {
                t = t.plus(gap);
                Event {
                    time: t,
                    type_,
                    code,
                    value,
                }
            })
            .collect()
    })
}

/// Configs that exercise every arithmetic path: repeat gestures with a 1 px threshold and
/// `none` actions, glide with the fastest ticks, carry, no clamp.
fn config() -> impl Strategy<Value = Config> {
    prop_oneof![
        Just(""),
        Just("[gesture]\nthreshold = 1\nrepeat = true\nleft = \"none\"\nup = \"none\"\n"),
        Just("[scroll]\ninertia = \"glide\"\nglide_decay = 0.99\nglide_interval_ms = 4\nmax_step = 100\nspike_ratio = 0\nsmoothing = \"none\"\n"),
        Just("[scroll]\ninertia = \"carry\"\ncarry_limit = 50\nmax_step = 0.1\n"),
        Just("[scroll]\nscope = \"none\"\n"),
    ]
    .prop_map(|text| Config::parse(text, "test.toml", Platform::Linux).unwrap())
}

proptest! {
    #[test]
    fn any_stream_with_extreme_values_replays_without_panicking(
        events in stream(),
        config in config(),
        rel_codes in prop_oneof![Just(None), any::<u32>().prop_map(Some)],
        named in any::<bool>(),
    ) {
        let device = RecordedDevice {
            name: named.then(|| "Logitech MX Master 3S".to_owned()),
            id: named.then_some((5, 0x046d, 0xb034, 0x11)),
            rel_codes,
            has_abs_xy: None,
            msc_scan: None,
        };
        let rec = Recording { format: Format::Evemu, device, events };
        let res = replay(&rec, &config, None);
        prop_assert_eq!(res.summary.events_in, rec.events.len());
    }

    #[test]
    fn decoder_and_encoder_take_any_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..2_000),
        hires_wheel in any::<bool>(),
        hires_hwheel in any::<bool>(),
    ) {
        let mut decoder = Decoder::new(WheelCaps { hires_wheel, hires_hwheel });
        let mut out = [0u8; MAX_OUT_EVENTS * pawl_evdev::EVENT_SIZE];
        let consumed = decoder.decode(&bytes, |d| {
            if let Decoded::Frame(f, raw) = d {
                let fwd = pawl_engine::FrameOut {
                    dx: f.dx,
                    dy: f.dy,
                    buttons: f.buttons,
                    ..Default::default()
                };
                encode_frame(&fwd, raw, &mut out);
            }
        });
        prop_assert!(consumed <= bytes.len());
    }

    #[test]
    fn no_text_makes_the_recording_parsers_panic(
        text in prop_oneof![
            any::<String>(),
            // Plausible evemu lines with arbitrary fields.
            prop::collection::vec(
                ("[EINB]", "[0-9]{0,22}(\\.[0-9]{0,9})?", "[0-9a-f]{0,6}", "[0-9a-f]{0,6}", "-?[0-9]{0,12}")
                    .prop_map(|(t, a, b, c, d)| format!("{t}: {a} {b} {c} {d}")),
                0..20,
            )
            .prop_map(|lines| lines.join("\n")),
        ],
    ) {
        let _ = record::parse(&text);
    }
}
