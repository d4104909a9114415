//! The `config_parse` target: `Config::parse` on any text, for both platforms.
//!
//! Checked: an error list is never empty and every error names the file and a line and
//! column inside the text (a line that exists, a column at most one past its end); a
//! config that parses decides every sample device and runs an engine through a gesture
//! and a scroll burst (its values reach the engine's arithmetic).

use pawl_engine::device::LOGITECH;
use pawl_engine::units::{Button, Micros};
use pawl_engine::{Bus, Config, DeviceEngine, DeviceInfo, FrameIn, FrameOut, Platform, WheelIn};

const FILE: &str = "fuzz.toml";

/// Runs one input (UTF-8 only: the binary reports invalid UTF-8 before parsing).
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for platform in [Platform::Linux, Platform::MacOs] {
        match Config::parse(text, FILE, platform) {
            Ok(config) => exercise(&config),
            Err(errors) => {
                assert!(!errors.0.is_empty(), "an error without errors");
                for e in &errors.0 {
                    assert_eq!(e.file, FILE);
                    assert!(!e.message.is_empty(), "an empty message: {e:?}");
                    let lines: Vec<&str> = text.split('\n').collect();
                    assert!(
                        (1..=lines.len()).contains(&e.line),
                        "line {} of a {}-line text: {e}",
                        e.line,
                        lines.len()
                    );
                    let width = lines[e.line - 1].chars().count();
                    assert!(
                        (1..=width + 1).contains(&e.column),
                        "column {} of a {width}-character line: {e}",
                        e.column
                    );
                }
                let shown = errors.to_string();
                assert!(shown.lines().count() >= errors.0.len(), "{shown}");
            }
        }
    }
}

fn devices() -> [DeviceInfo; 3] {
    let device = |name: &str, bus, vendor, product, has_wheel, is_touchpad| DeviceInfo {
        name: name.into(),
        bus: Bus(bus),
        vendor,
        product,
        has_wheel,
        is_touchpad,
    };
    [
        device("MX Master 3S", 0x05, LOGITECH, 0xb034, true, false),
        device("Generic Mouse", 0x03, 0x1234, 0x5678, true, false),
        device(
            "SynPS/2 Synaptics TouchPad",
            0x11,
            0x0002,
            0x0007,
            false,
            true,
        ),
    ]
}

fn exercise(config: &Config) {
    for b in 0..32 {
        let _ = config.button_action(Button(b));
    }
    for info in devices() {
        let _ = config.decide(&info);
        let Some(mut engine) = DeviceEngine::new(config, &info) else {
            continue;
        };
        let mut out = FrameOut::default();
        let mut t = 0u64;
        let mut frame = |engine: &mut DeviceEngine, f: FrameIn| {
            t += 8_000;
            engine.frame(
                &FrameIn {
                    time: Micros(t),
                    ..f
                },
                &mut out,
            );
            while let Some(d) = engine.next_deadline().filter(|d| d.0 <= t) {
                engine.tick(d, &mut out);
                assert!(
                    engine.next_deadline().is_none_or(|n| n > d),
                    "tick made no progress"
                );
            }
        };
        for button in 0..8u8 {
            let press = |pressed| FrameIn {
                buttons: pawl_engine::engine::buttons(&[(button, pressed)]),
                ..FrameIn::default()
            };
            frame(&mut engine, press(true));
            for _ in 0..5 {
                frame(
                    &mut engine,
                    FrameIn {
                        dx: 90,
                        dy: -40,
                        ..FrameIn::default()
                    },
                );
            }
            frame(&mut engine, press(false));
        }
        for v120 in [120, 120, 960, -120, 30, 30, 30, -7200, 120] {
            let wheel = WheelIn {
                v120,
                detents: v120 / 120,
            };
            frame(
                &mut engine,
                FrameIn {
                    wheel,
                    hwheel: wheel,
                    ..FrameIn::default()
                },
            );
        }
        let end = Micros(t + 60_000_000);
        for _ in 0..10_000 {
            match engine.next_deadline() {
                Some(d) if d <= end => {
                    engine.tick(d, &mut out);
                }
                _ => break,
            }
        }
        assert!(
            engine.next_deadline().is_none_or(|d| d > end),
            "a glide still running a minute later"
        );
        engine.cancel(&mut out);
    }
}
