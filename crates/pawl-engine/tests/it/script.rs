//! The `check` helper: a config (TOML), an event script, and the expected output as text.
//!
//! A script has one input frame per line (blank lines and `#` comments are skipped). A line
//! may start with a delay (`10ms`) that advances the clock before the frame. Frame items:
//!
//! - `+N` / `-N` — button N (0-based) pressed / released;
//! - `x=DX` `y=DY` — pointer motion, px;
//! - `w=V` `h=V` — vertical / horizontal wheel, v120 units (hi-res, no lo-res detent);
//! - `W=N` `H=N` — N whole detents (lo-res device: v120 = 120 × N).
//!
//! Commands instead of a frame: `tick` (advance to the engine's next deadline and run it),
//! `glide` (run ticks until no deadline is left), `cancel`, `resync +N…` (the buttons still
//! down), `app ID [TITLE…]` (the focused application is now ID, its window titled with the
//! rest of the line, no title without one; `app -`: one no table names), echoed with the
//! profile asked for and `(pending)` while it waits for a gesture to end; `pointer ID`
//! (the application under the pointer decides scroll: `set_scroll_app`) and
//! `pointer focus` (the focused one decides it again).
//!
//! The device is [`test_mouse`]: `[[app]]` tables narrowed to other devices do not apply.
//!
//! Each input line is echoed with what came out after `=>`: `forward` (written unchanged),
//! `nothing` (swallowed), or the rewritten frame: button transitions, `x=`/`y=`, wheels as
//! `w=v120/detents`, then `action NAME`. A pending deadline is shown as `(tick at Tms)`.

use std::fmt::Write;

use expect_test::Expect;
use pawl_engine::engine::buttons;
use pawl_engine::frame::WheelIn;
use pawl_engine::units::{Button, ButtonSet, Micros};
use pawl_engine::{
    Action, Bus, Config, DeviceEngine, DeviceInfo, FrameIn, FrameOut, Platform, ProfileId, Verdict,
};

/// The device scripts run on: a Bluetooth MX Master 3S.
pub fn test_mouse() -> DeviceInfo {
    DeviceInfo {
        name: "MX Master 3S".into(),
        bus: Bus::BLUETOOTH,
        vendor: 0x046d,
        product: 0xb034,
        has_wheel: true,
        is_touchpad: false,
    }
}

/// Runs `script` on a Linux engine for an in-scope device under `config`.
pub fn check(config: &str, script: &str, expect: Expect) {
    check_on(Platform::Linux, config, script, expect);
}

/// Runs `script` on an engine for an in-scope device under `config` for `platform`.
pub fn check_on(platform: Platform, config: &str, script: &str, expect: Expect) {
    let config = Config::parse(config, "test.toml", platform).unwrap_or_else(|e| panic!("{e}"));
    let mut engine = DeviceEngine::with_profile(&config, true, config.scroll);
    engine.add_app_profiles(&config, &test_mouse());
    expect.assert_eq(&run(&config, &mut engine, script));
}

/// Runs a script; returns the transcript.
pub fn run(config: &Config, engine: &mut DeviceEngine, script: &str) -> String {
    let mut now = 0u64;
    let mut res = String::new();
    for line in script.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut tokens: Vec<&str> = line.split_whitespace().collect();
        if let Some(ms) = tokens[0].strip_suffix("ms") {
            now += ms.parse::<u64>().expect("delay in ms") * 1000;
            tokens.remove(0);
        }
        let mut out = FrameOut::default();
        let result = match tokens.first().copied() {
            Some("tick") => {
                let Some(t) = engine.next_deadline() else {
                    let _ = writeln!(res, "{line} => no deadline");
                    continue;
                };
                now = now.max(t.0);
                let moved = engine.tick(Micros(now), &mut out);
                let _ = write!(res, "{line} @{}ms => ", now / 1000);
                if moved {
                    render(config, &out)
                } else {
                    "nothing".into()
                }
            }
            Some("glide") => {
                let mut steps = Vec::new();
                while let Some(t) = engine.next_deadline() {
                    now = now.max(t.0);
                    engine.tick(Micros(now), &mut out);
                    steps.push(format!(
                        "{}@{}",
                        out.wheel.v120 + out.hwheel.v120,
                        now / 1000
                    ));
                    assert!(steps.len() < 1000, "glide never stops");
                }
                let _ = write!(res, "{line} => ");
                format!("[{}]", steps.join(" "))
            }
            Some("cancel") => {
                let _ = write!(res, "{line} => ");
                if engine.cancel(&mut out) {
                    render(config, &out)
                } else {
                    "nothing".into()
                }
            }
            Some("app") => {
                let id = tokens.get(1).copied().unwrap_or("-");
                let title = (tokens.len() > 2).then(|| tokens[2..].join(" "));
                engine.set_app(config.app_key(id, title.as_deref()));
                let _ = write!(res, "{line} => ");
                let mut shown = match engine.app_profile() {
                    ProfileId::Device => "device profile".to_owned(),
                    ProfileId::App(k) => format!("profile of {}", config.app_name(k)),
                };
                if engine.switch_pending() {
                    shown.push_str(" (pending)");
                }
                shown
            }
            Some("pointer") => {
                let _ = write!(res, "{line} => ");
                match tokens.get(1).copied() {
                    Some("focus") => {
                        engine.scroll_follows_focus();
                        "scroll follows focus".into()
                    }
                    id => {
                        let key = config.app_key(id.unwrap_or("-"), None);
                        engine.set_scroll_app(key);
                        match key {
                            Some(k) => format!("scroll of {}", config.app_name(k)),
                            None => "scroll of the device".into(),
                        }
                    }
                }
            }
            Some("resync") => {
                let mut down = ButtonSet::default();
                for t in &tokens[1..] {
                    down.set(Button(t[1..].parse().expect("button")), true);
                }
                let _ = write!(res, "{line} => ");
                if engine.resync(down, &mut out) {
                    render(config, &out)
                } else {
                    "nothing".into()
                }
            }
            _ => {
                let frame = parse_frame(&tokens, Micros(now));
                let _ = write!(res, "{line} => ");
                match engine.frame(&frame, &mut out) {
                    Verdict::Forward => "forward".into(),
                    Verdict::Rewrite => render(config, &out),
                }
            }
        };
        res.push_str(&result);
        if let Some(t) = engine.next_deadline() {
            let _ = write!(res, " (tick at {}ms)", t.0 / 1000);
        }
        res.push('\n');
    }
    res
}

fn parse_frame(tokens: &[&str], time: Micros) -> FrameIn {
    let mut f = FrameIn {
        time,
        ..FrameIn::default()
    };
    let mut changes = Vec::new();
    for t in tokens {
        let num = |s: &str| -> i32 { s.parse().unwrap_or_else(|_| panic!("bad number in {t:?}")) };
        match t.split_once('=') {
            Some(("x", v)) => f.dx += num(v),
            Some(("y", v)) => f.dy += num(v),
            Some(("w", v)) => f.wheel.v120 += num(v),
            Some(("h", v)) => f.hwheel.v120 += num(v),
            Some(("W", v)) => {
                f.wheel = WheelIn {
                    v120: num(v) * 120,
                    detents: num(v),
                }
            }
            Some(("H", v)) => {
                f.hwheel = WheelIn {
                    v120: num(v) * 120,
                    detents: num(v),
                }
            }
            _ => match t.split_at(1) {
                ("+", n) => changes.push((num(n) as u8, true)),
                ("-", n) => changes.push((num(n) as u8, false)),
                _ => panic!("unknown script item {t:?}"),
            },
        }
    }
    f.buttons = buttons(&changes);
    f
}

/// The rewritten frame as text; `nothing` when it is empty.
pub fn render(config: &Config, out: &FrameOut) -> String {
    let mut items = Vec::new();
    for c in out.buttons.as_slice() {
        items.push(format!(
            "{}{}",
            if c.pressed { '+' } else { '-' },
            c.button.0
        ));
    }
    if out.dx != 0 {
        items.push(format!("x={}", out.dx));
    }
    if out.dy != 0 {
        items.push(format!("y={}", out.dy));
    }
    if !out.hwheel.is_zero() {
        items.push(format!("h={}/{}", out.hwheel.v120, out.hwheel.detents));
    }
    if !out.wheel.is_zero() {
        items.push(format!("w={}/{}", out.wheel.v120, out.wheel.detents));
    }
    for a in out.actions.as_slice() {
        items.push(format!("action {}", action_name(config, *a)));
    }
    if items.is_empty() {
        return "nothing".into();
    }
    items.join(" ")
}

/// `desktop-left`, `key Super+A`, `command notify-send hi`.
pub fn action_name(config: &Config, a: Action) -> String {
    match a {
        Action::Key(i) => format!("key {}", config.chords[i as usize]),
        Action::Command(i) => format!("command {}", config.commands[i as usize].join(" ")),
        a => a.name().unwrap_or("?").to_owned(),
    }
}
