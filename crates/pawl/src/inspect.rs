//! `pawl inspect`: a live, read-only view of pointer input in the shape of `evtest` /
//! `libinput record` — time, device, type and code names, value — plus pawl's button
//! number and what pawl would do with each frame (the engine runs on a copy of the input;
//! nothing is grabbed or written). `--record FILE` writes the stream as evemu text, the
//! format `pawl replay` reads.
//!
//! This module is platform-neutral: it formats [`Event`]s; the Linux backend
//! (`pawl_linux::inspect`) opens and reads the devices.

#![cfg_attr(
    not(target_os = "linux"),
    allow(
        dead_code,
        reason = "the formatter reads evdev events, which only Linux has; macOS inspect logs \
                  through the tap worker"
    )
)]

use std::fmt::Write as _;

use pawl_engine::device::{Family, family};
use pawl_engine::units::{Button, Micros};
use pawl_engine::{Action, Config, DeviceEngine, DeviceInfo, FrameOut, Verdict};
use pawl_evdev::codes::{self, EV_KEY, EV_SYN, SYN_REPORT};
use pawl_evdev::{Decoded, Decoder, Event, WheelCaps};

/// One device being inspected.
#[derive(Debug)]
pub struct InspectDevice {
    /// Short label for event lines (`event5`).
    pub label: String,
    /// Identity.
    pub info: DeviceInfo,
    /// What the config decides for it.
    pub decision: pawl_engine::config::DeviceDecision,
    engine: Option<DeviceEngine>,
    decoder: Decoder,
    frame_bytes: Vec<u8>,
}

impl InspectDevice {
    /// A device to inspect under `config`; `wheel` says which hi-res wheel codes it has.
    pub fn new(label: String, info: DeviceInfo, wheel: WheelCaps, config: &Config) -> Self {
        InspectDevice {
            decision: config.decide(&info),
            engine: DeviceEngine::new(config, &info),
            decoder: Decoder::new(wheel),
            frame_bytes: Vec::new(),
            label,
            info,
        }
    }
}

impl InspectDevice {
    /// One of pawl's own virtual devices: its events are pawl's output, shown without
    /// decisions.
    pub fn pawl_output(label: String, info: DeviceInfo) -> Self {
        InspectDevice {
            decision: pawl_engine::config::DeviceDecision {
                handle: false,
                transform_scroll: false,
                scroll: Default::default(),
                reason: "pawl's virtual device: its output".into(),
            },
            engine: None,
            decoder: Decoder::new(WheelCaps::default()),
            frame_bytes: Vec::new(),
            label,
            info,
        }
    }
}

/// The formatter: turns events of several devices into text lines.
#[derive(Debug)]
pub struct Inspector {
    config: Config,
    devices: Vec<InspectDevice>,
    first: Option<Micros>,
}

impl Inspector {
    /// An inspector for `devices` under `config`.
    pub fn new(config: Config, devices: Vec<InspectDevice>) -> Inspector {
        Inspector {
            config,
            devices,
            first: None,
        }
    }

    /// The devices.
    pub fn devices(&self) -> &[InspectDevice] {
        &self.devices
    }

    /// The header: one line per device with what pawl does with it, then the column
    /// titles.
    pub fn header(&self) -> String {
        let mut s = String::new();
        for d in &self.devices {
            let what = match family(d.info.vendor, d.info.product) {
                Some(Family::MxMaster(name)) => format!(", {name}"),
                Some(Family::Receiver(name)) => format!(", {name}"),
                None => String::new(),
            };
            let verdict = if d.decision.handle {
                let scroll = if d.decision.transform_scroll {
                    "scroll transformed"
                } else {
                    "scroll passed through"
                };
                format!(
                    "handled ({}): buttons, gestures, {scroll}",
                    d.decision.reason
                )
            } else {
                format!("not handled ({})", d.decision.reason)
            };
            let _ = writeln!(
                s,
                "# {:<8} {} {:04x}:{:04x} {:?}{what}: {verdict}",
                d.label,
                d.info.bus.name(),
                d.info.vendor,
                d.info.product,
                d.info.name,
            );
        }
        let _ = writeln!(
            s,
            "#     time  device   type   code                  value  pawl"
        );
        s
    }

    /// Formats `ev` of device `dev` as one line (with a newline) appended to `out`: time in
    /// seconds since the first event, device label, type and code names (hex when pawl has
    /// no name), value, and a note: pawl's button number and its mapping for mouse buttons;
    /// on a `SYN_REPORT`, what pawl would do with the frame when it changes anything.
    pub fn event(&mut self, dev: usize, ev: &Event, out: &mut String) {
        let first = *self.first.get_or_insert(ev.time);
        let t = ev.time.0.saturating_sub(first.0);
        let ty = codes::type_name(ev.type_)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("0x{:02x}", ev.type_));
        let code = codes::code_name(ev.type_, ev.code)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("0x{:03x}", ev.code));
        let note = self.note(dev, ev);
        let d = &self.devices[dev];
        let line = format!(
            "{:>4}.{:06} {:<8} {ty:<6} {code:<18} {:>8}{}{note}",
            t / 1_000_000,
            t % 1_000_000,
            d.label,
            ev.value,
            if note.is_empty() { "" } else { "  " },
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }

    fn note(&mut self, dev: usize, ev: &Event) -> String {
        let config = &self.config;
        let d = &mut self.devices[dev];
        d.frame_bytes.extend_from_slice(&ev.to_bytes());
        if ev.type_ == EV_KEY {
            let Some(n) = codes::button_of(ev.code) else {
                return String::new();
            };
            if !d.decision.handle {
                return format!("button {n}");
            }
            return format!("button {n}: {}", button_role(config, Button(n)));
        }
        if !(ev.type_ == EV_SYN && ev.code == SYN_REPORT) {
            return String::new();
        }
        let bytes = std::mem::take(&mut d.frame_bytes);
        let Some(engine) = d.engine.as_mut() else {
            return String::new();
        };
        let mut note = String::new();
        let mut out = FrameOut::default();
        d.decoder.decode(&bytes, |decoded| match decoded {
            Decoded::Frame(frame, _) => {
                if engine.frame(&frame, &mut out) == Verdict::Rewrite {
                    note = describe_rewrite(config, &frame, &out, engine.gesture_held());
                }
            }
            Decoded::Dropped => note = "events dropped by the kernel (SYN_DROPPED)".into(),
        });
        note
    }
}

/// What a mouse button does in pawl: the gesture button, a mapped action, or passed
/// through.
pub fn button_role(config: &Config, b: Button) -> String {
    if b == config.gesture.button {
        return "gesture button (hold and drag)".into();
    }
    let role = if b == config.buttons.back {
        "back: "
    } else if b == config.buttons.forward {
        "forward: "
    } else {
        ""
    };
    match config.button_action(b) {
        Some(a) => format!("{role}{}", action_name(config, a)),
        None => "passed through".into(),
    }
}

/// An action's config spelling, or the chord / command it stands for.
pub fn action_name(config: &Config, a: Action) -> String {
    match a {
        Action::Key(i) => match config.chords.get(i as usize) {
            Some(chord) => format!("key {chord}"),
            None => format!("key #{i}"),
        },
        Action::Command(i) => match config.commands.get(i as usize) {
            Some(argv) => format!("command {}", argv.join(" ")),
            None => format!("command #{i}"),
        },
        a => a.name().unwrap_or("?").to_owned(),
    }
}

/// The note for a frame the engine rewrote: actions fired, wheel changes, or that the
/// frame was swallowed.
fn describe_rewrite(
    config: &Config,
    input: &pawl_engine::FrameIn,
    out: &FrameOut,
    gesture_held: bool,
) -> String {
    let mut parts = Vec::new();
    for a in out.actions.as_slice() {
        parts.push(format!("fires {}", action_name(config, *a)));
    }
    for (axis, i, o) in [
        ("wheel", input.wheel, out.wheel),
        ("hwheel", input.hwheel, out.hwheel),
    ] {
        if i.v120 != 0 || !o.is_zero() {
            parts.push(format!(
                "{axis} {} → {} v120 ({} detents)",
                i.v120, o.v120, o.detents
            ));
        }
    }
    if parts.is_empty() && out.pointer_is_empty() {
        parts.push(if gesture_held {
            "swallowed (gesture button held)".into()
        } else {
            "swallowed".into()
        });
    } else if input.buttons != out.buttons {
        let changes: Vec<String> = out
            .buttons
            .as_slice()
            .iter()
            .map(|c| format!("{}{}", c.button.0, if c.pressed { "↓" } else { "↑" }))
            .collect();
        parts.push(if changes.is_empty() {
            "button swallowed".into()
        } else {
            format!("writes buttons {}", changes.join(" "))
        });
    }
    format!("pawl: {}", parts.join(", "))
}

/// The device part of an evemu recording: `N:` name, `I:` bus vendor product version,
/// `P:` properties and `B:` capability bitmaps (8 bytes per line, as `evemu-describe`
/// writes them), `A:` absolute axes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvemuDevice {
    /// Device name.
    pub name: String,
    /// (bus, vendor, product, version).
    pub id: (u16, u16, u16, u16),
    /// `INPUT_PROP_*` bitmap bytes (little-endian bit order: bit n of byte n / 8).
    pub props: Vec<u8>,
    /// (event type, bitmap bytes) for each type, in type order; type 0 is the type bitmap.
    pub bits: Vec<(u16, Vec<u8>)>,
    /// (code, min, max, fuzz, flat, resolution) of each absolute axis.
    pub abs: Vec<(u16, i32, i32, i32, i32, i32)>,
}

/// The evemu header for `dev`.
pub fn evemu_header(dev: &EvemuDevice) -> String {
    let mut s = String::from("# EVEMU 1.3\n# Recorded by pawl inspect --record\n");
    let _ = writeln!(s, "N: {}", dev.name);
    let (bus, vendor, product, version) = dev.id;
    let _ = writeln!(s, "I: {bus:04x} {vendor:04x} {product:04x} {version:04x}");
    let lines = |tag: &str, prefix: Option<u16>, bytes: &[u8], s: &mut String| {
        let mut padded = bytes.to_vec();
        padded.resize(bytes.len().div_ceil(8).max(1) * 8, 0);
        for chunk in padded.chunks(8) {
            let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
            match prefix {
                Some(ty) => {
                    let _ = writeln!(s, "{tag}: {ty:02x} {}", hex.join(" "));
                }
                None => {
                    let _ = writeln!(s, "{tag}: {}", hex.join(" "));
                }
            }
        }
    };
    lines("P", None, &dev.props, &mut s);
    for (ty, bytes) in &dev.bits {
        lines("B", Some(*ty), bytes, &mut s);
    }
    for (code, min, max, fuzz, flat, res) in &dev.abs {
        let _ = writeln!(s, "A: {code:02x} {min} {max} {fuzz} {flat} {res}");
    }
    s
}

/// One evemu event line, `E: <sec>.<usec> <type %04x> <code %04x> <value>`, time relative
/// to `first`.
pub fn evemu_event(ev: &Event, first: Micros) -> String {
    let t = ev.time.0.saturating_sub(first.0);
    format!(
        "E: {}.{:06} {:04x} {:04x} {}\n",
        t / 1_000_000,
        t % 1_000_000,
        ev.type_,
        ev.code,
        ev.value
    )
}

/// `pawl inspect`: reads the selected pointer devices (all by default) without grabbing
/// them and prints their events until interrupted; `record` also writes them as evemu
/// text (one device only).
///
/// Errors: no device matches, several match with `record`, a device cannot be opened
/// (permissions), reading fails.
#[cfg(target_os = "linux")]
pub fn command(
    config: &Config,
    filters: &[String],
    record: Option<&std::path::Path>,
) -> anyhow::Result<std::process::ExitCode> {
    use std::io::Write;

    use anyhow::Context;
    use pawl_linux::inspect::{Input, Watcher, pointer_devices};

    let class = std::path::Path::new(pawl_linux::sysfs::SYS_CLASS_INPUT);
    let all = pointer_devices(class).with_context(|| format!("cannot list {}", class.display()))?;
    let selected = select_devices(&all, filters, record.is_some())?;
    let paths: Vec<std::path::PathBuf> = selected.iter().map(|d| d.dev_path()).collect();
    let path_refs: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
    let mut watcher = Watcher::open(&path_refs)?;
    let devices = selected
        .iter()
        .zip(watcher.devices())
        .map(|(d, w)| {
            if d.is_pawl_device() {
                InspectDevice::pawl_output(d.node.clone(), d.info())
            } else {
                InspectDevice::new(d.node.clone(), d.info(), w.caps.wheel_caps(), config)
            }
        })
        .collect();
    let mut inspector = Inspector::new(config.clone(), devices);
    let mut head = inspector.header();
    head.push_str(&grabbed_notes(&all, &selected));
    let mut recording = match record {
        Some(path) => {
            let (d, w) = (&selected[0], &watcher.devices()[0]);
            let file = start_recording(path, &d.name, w)?;
            head.push_str(&format!("# recording {} to {}\n", d.node, path.display()));
            Some((file, None::<Micros>))
        }
        None => None,
    };
    let mut text = head;
    loop {
        let mut rec_text = String::new();
        // A closed pipe (`pawl inspect | head`) ends the command like any write error:
        // `main` makes it a quiet exit.
        crate::out::print(&text)?;
        text.clear();
        let alive = watcher.wait(|input| match input {
            Input::Event(i, ev) => {
                inspector.event(i, &ev, &mut text);
                if let Some((_, first)) = &mut recording {
                    let first = *first.get_or_insert(ev.time);
                    rec_text.push_str(&evemu_event(&ev, first));
                }
            }
            Input::Gone(i) => {
                let _ = writeln!(text, "# {} removed", inspector.devices()[i].label);
            }
        })?;
        if let Some((file, _)) = &mut recording {
            file.write_all(rec_text.as_bytes())?;
        }
        if !alive {
            crate::out::print(&text)?;
            return Ok(std::process::ExitCode::SUCCESS);
        }
    }
}

/// The devices of `all` that `filters` select (a node name, a `/dev/input` path or a name
/// glob; every device when there is no filter). Errors: none matches (naming what there
/// is), or `record` and more than one matches.
#[cfg(target_os = "linux")]
fn select_devices(
    all: &[pawl_linux::sysfs::SysDevice],
    filters: &[String],
    record: bool,
) -> anyhow::Result<Vec<pawl_linux::sysfs::SysDevice>> {
    use anyhow::bail;

    let matches = |d: &pawl_linux::sysfs::SysDevice| {
        filters.is_empty()
            || filters.iter().any(|f| {
                *f == d.node
                    || std::path::Path::new(f) == d.dev_path()
                    || pawl_engine::device::glob_match(f, &d.name)
            })
    };
    let selected: Vec<_> = all.iter().filter(|d| matches(d)).cloned().collect();
    let list = |ds: &[pawl_linux::sysfs::SysDevice]| -> String {
        let names: Vec<String> = ds
            .iter()
            .map(|d| format!("{} {:?}", d.node, d.name))
            .collect();
        names.join(", ")
    };
    if selected.is_empty() {
        if all.is_empty() {
            bail!("no pointer devices found (see `pawl devices`)");
        }
        bail!(
            "no pointer device matches {filters:?}; there are: {}",
            list(all)
        );
    }
    if record && selected.len() != 1 {
        bail!(
            "--record writes one device, and {} match: {}; pick one with --device",
            selected.len(),
            list(&selected)
        );
    }
    Ok(selected)
}

/// A `# … is grabbed by pawl` line for each of `selected` that the running worker grabs
/// (its events reach only pawl), naming pawl's virtual device for it from `all`.
#[cfg(target_os = "linux")]
fn grabbed_notes(
    all: &[pawl_linux::sysfs::SysDevice],
    selected: &[pawl_linux::sysfs::SysDevice],
) -> String {
    let worker = match crate::lifecycle::current_status(&crate::lifecycle::Paths::discover()) {
        Ok(crate::lifecycle::Status::Running(meta)) => meta,
        _ => return String::new(),
    };
    let mut notes = String::new();
    for d in selected {
        let path = d.dev_path().display().to_string();
        if worker.devices.iter().any(|g| g.path == path) {
            let clone = all
                .iter()
                .find(|c| c.is_pawl_device() && c.phys == format!("pawl/{}", d.phys))
                .map_or("its virtual device".to_owned(), |c| c.node.clone());
            notes.push_str(&format!(
                "# {} is grabbed by pawl (pid {}): its events reach only pawl; pawl's output \
                 is {clone}\n",
                d.node, worker.pid
            ));
        }
    }
    notes
}

/// Creates `path` and writes the evemu header of device `name` with `w`'s identity,
/// capabilities and axes; the events follow. Errors: the file cannot be created or written.
#[cfg(target_os = "linux")]
fn start_recording(
    path: &std::path::Path,
    name: &str,
    w: &pawl_linux::inspect::Watched,
) -> anyhow::Result<std::fs::File> {
    use std::io::Write;

    use anyhow::Context;

    let words = |ws: &[u64]| -> Vec<u8> { ws.iter().flat_map(|w| w.to_le_bytes()).collect() };
    let dev = EvemuDevice {
        name: name.to_owned(),
        id: w.id,
        props: words(&w.caps.props.0),
        bits: vec![
            (EV_SYN, words(&w.caps.ev.0)),
            (EV_KEY, words(&w.caps.key.0)),
            (codes::EV_REL, words(&w.caps.rel.0)),
            (codes::EV_ABS, words(&w.caps.abs.0)),
            (codes::EV_MSC, words(&w.caps.msc.0)),
        ],
        abs: w.abs.clone(),
    };
    let mut file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(evemu_header(&dev).as_bytes())?;
    Ok(file)
}

/// `pawl inspect` on macOS: a listen-only tap with the complete mask; every event and
/// decision is logged to stderr, nothing is changed.
#[cfg(target_os = "macos")]
pub fn command(
    config: &Config,
    _filters: &[String],
    record: Option<&std::path::Path>,
) -> anyhow::Result<std::process::ExitCode> {
    if record.is_some() {
        anyhow::bail!("--record writes evemu, an evdev (Linux) format; not available on macOS");
    }
    let daemon = pawl_macos::start(config, pawl_macos::worker::Mode::Inspect)?;
    // Inspecting opens no HID++ endpoint: no mice to record.
    daemon.run(&mut |_, _| {})?;
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use pawl_engine::{Bus, Platform};
    use pawl_evdev::codes::*;

    use super::*;

    fn mx() -> DeviceInfo {
        DeviceInfo {
            name: "Logitech MX Master 3S".into(),
            bus: Bus::BLUETOOTH,
            vendor: 0x046d,
            product: 0xb034,
            has_wheel: true,
            is_touchpad: false,
        }
    }

    fn pad() -> DeviceInfo {
        DeviceInfo {
            name: "SynPS/2 Synaptics TouchPad".into(),
            bus: Bus::I8042,
            vendor: 0x0002,
            product: 0x0007,
            has_wheel: false,
            is_touchpad: true,
        }
    }

    fn ev(ms: u64, type_: u16, code: u16, value: i32) -> Event {
        Event {
            time: Micros(1_000_000_000 + ms * 1000),
            type_,
            code,
            value,
        }
    }

    fn inspector() -> Inspector {
        let config = Config::default_for(Platform::Linux);
        let hires = WheelCaps {
            hires_wheel: true,
            hires_hwheel: true,
        };
        let devices = vec![
            InspectDevice::new("event5".into(), mx(), hires, &config),
            InspectDevice::new("event6".into(), pad(), WheelCaps::default(), &config),
        ];
        Inspector::new(config, devices)
    }

    fn run(script: &[(usize, Event)]) -> String {
        let mut insp = inspector();
        let mut out = insp.header();
        for (dev, e) in script {
            insp.event(*dev, e, &mut out);
        }
        out
    }

    #[test]
    fn events_show_names_button_numbers_and_what_pawl_does() {
        let out = run(&[
            (0, ev(0, EV_REL, REL_X, 3)),
            (0, ev(0, EV_SYN, SYN_REPORT, 0)),
            (0, ev(8, EV_MSC, MSC_SCAN, 0x90004)),
            (0, ev(8, EV_KEY, BTN_SIDE, 1)),
            (0, ev(8, EV_SYN, SYN_REPORT, 0)),
            (0, ev(16, EV_REL, REL_WHEEL, 1)),
            (0, ev(16, EV_REL, REL_WHEEL_HI_RES, 120)),
            (0, ev(16, EV_SYN, SYN_REPORT, 0)),
            (1, ev(20, EV_KEY, BTN_LEFT, 1)),
            (1, ev(20, EV_SYN, SYN_REPORT, 0)),
        ]);
        expect![[r##"
            # event5   bluetooth 046d:b034 "Logitech MX Master 3S", MX Master 3S: handled (mx-master family): buttons, gestures, scroll transformed
            # event6   i8042 0002:0007 "SynPS/2 Synaptics TouchPad": not handled (touchpad)
            #     time  device   type   code                  value  pawl
               0.000000 event5   EV_REL REL_X                     3
               0.000000 event5   EV_SYN SYN_REPORT                0
               0.008000 event5   EV_MSC MSC_SCAN             589828
               0.008000 event5   EV_KEY BTN_SIDE                  1  button 3: back: pass-through
               0.008000 event5   EV_SYN SYN_REPORT                0
               0.016000 event5   EV_REL REL_WHEEL                 1
               0.016000 event5   EV_REL REL_WHEEL_HI_RES        120
               0.016000 event5   EV_SYN SYN_REPORT                0  pawl: wheel 120 → -120 v120 (-1 detents)
               0.020000 event6   EV_KEY BTN_LEFT                  1  button 0
               0.020000 event6   EV_SYN SYN_REPORT                0
        "##]]
        .assert_eq(&out);
    }

    #[test]
    fn a_gesture_shows_the_swallowed_press_and_the_action_it_fires() {
        let btn_gesture = BTN_MOUSE + 5;
        let out = run(&[
            (0, ev(0, EV_KEY, btn_gesture, 1)),
            (0, ev(0, EV_SYN, SYN_REPORT, 0)),
            (0, ev(8, EV_REL, REL_X, 300)),
            (0, ev(8, EV_SYN, SYN_REPORT, 0)),
            (0, ev(16, EV_KEY, btn_gesture, 0)),
            (0, ev(16, EV_SYN, SYN_REPORT, 0)),
        ]);
        let body: Vec<&str> = out.lines().skip(3).collect();
        expect![[r#"
            [
                "   0.000000 event5   EV_KEY BTN_FORWARD               1  button 5: gesture button (hold and drag)",
                "   0.000000 event5   EV_SYN SYN_REPORT                0  pawl: swallowed (gesture button held)",
                "   0.008000 event5   EV_REL REL_X                   300",
                "   0.008000 event5   EV_SYN SYN_REPORT                0  pawl: fires desktop-left",
                "   0.016000 event5   EV_KEY BTN_FORWARD               0  button 5: gesture button (hold and drag)",
                "   0.016000 event5   EV_SYN SYN_REPORT                0  pawl: swallowed",
            ]
        "#]]
        .assert_debug_eq(&body);
    }

    #[test]
    fn evemu_header_has_8_byte_bitmap_lines_and_hex_ids() {
        let dev = EvemuDevice {
            name: "Logitech MX Master 3S".into(),
            id: (0x05, 0x046d, 0xb034, 0x0002),
            props: vec![],
            bits: vec![
                (EV_SYN, vec![0x17]),
                (EV_REL, vec![0x43, 0x19]),
                (EV_KEY, vec![0; 96]),
            ],
            abs: vec![(0, 0, 1919, 0, 0, 12)],
        };
        let text = evemu_header(&dev);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[2], "N: Logitech MX Master 3S");
        assert_eq!(lines[3], "I: 0005 046d b034 0002");
        assert_eq!(lines[4], "P: 00 00 00 00 00 00 00 00");
        assert_eq!(lines[5], "B: 00 17 00 00 00 00 00 00 00");
        assert_eq!(lines[6], "B: 02 43 19 00 00 00 00 00 00");
        assert_eq!(lines.iter().filter(|l| l.starts_with("B: 01")).count(), 12);
        assert_eq!(lines.last(), Some(&"A: 00 0 1919 0 0 12"));
    }

    #[test]
    fn evemu_events_are_relative_with_hex_type_and_code() {
        let first = Micros(5_000_000);
        let e = Event {
            time: Micros(6_304_974),
            type_: EV_REL,
            code: REL_WHEEL_HI_RES,
            value: -120,
        };
        assert_eq!(evemu_event(&e, first), "E: 1.304974 0002 000b -120\n");
    }

    #[test]
    fn a_recording_reads_back_as_the_same_device_and_events() {
        let dev = EvemuDevice {
            name: "Logitech MX Master 3S".into(),
            id: (0x05, 0x046d, 0xb034, 0x0002),
            props: vec![],
            bits: vec![
                (EV_SYN, vec![0x17]),
                (EV_KEY, {
                    let mut k = vec![0u8; 96];
                    k[0x110 / 8] = 0xff;
                    k
                }),
                (EV_REL, vec![0x43, 0x19]),
                (EV_MSC, vec![0x10]),
            ],
            abs: vec![],
        };
        let events = [
            ev(0, EV_REL, REL_WHEEL, 1),
            ev(0, EV_REL, REL_WHEEL_HI_RES, 120),
            ev(0, EV_SYN, SYN_REPORT, 0),
            ev(12, EV_REL, REL_X, -3),
            ev(12, EV_SYN, SYN_REPORT, 0),
        ];
        let mut text = evemu_header(&dev);
        for e in &events {
            text.push_str(&evemu_event(e, events[0].time));
        }
        let rec = pawl_evdev::record::parse(&text).unwrap();
        assert_eq!(rec.device.name.as_deref(), Some("Logitech MX Master 3S"));
        assert_eq!(rec.device.id, Some((0x05, 0x046d, 0xb034, 0x0002)));
        let info = rec.device.info().unwrap();
        assert!(info.has_wheel && !info.is_touchpad);
        // 0x43 0x19: REL_X, REL_Y, REL_HWHEEL, REL_WHEEL, both hi-res wheels.
        assert!(rec.wheel_caps().hires_wheel && rec.wheel_caps().hires_hwheel);
        let got: Vec<(u64, u16, u16, i32)> = rec
            .events
            .iter()
            .map(|e| (e.time.0, e.type_, e.code, e.value))
            .collect();
        let want: Vec<(u64, u16, u16, i32)> = events
            .iter()
            .map(|e| (e.time.0 - events[0].time.0, e.type_, e.code, e.value))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn pawl_virtual_devices_show_events_without_decisions() {
        let config = Config::default_for(Platform::Linux);
        let clone = InspectDevice::pawl_output("event9".into(), mx());
        let mut insp = Inspector::new(config, vec![clone]);
        let mut out = insp.header();
        insp.event(0, &ev(0, EV_KEY, BTN_SIDE, 1), &mut out);
        insp.event(0, &ev(0, EV_SYN, SYN_REPORT, 0), &mut out);
        expect![[r#"
            # event9   bluetooth 046d:b034 "Logitech MX Master 3S", MX Master 3S: not handled (pawl's virtual device: its output)
            #     time  device   type   code                  value  pawl
               0.000000 event9   EV_KEY BTN_SIDE                  1  button 3
               0.000000 event9   EV_SYN SYN_REPORT                0
        "#]]
        .assert_eq(&out);
    }
}
