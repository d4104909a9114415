//! `pawl replay FILE`: runs a recorded event stream through the engine without any device
//! and prints the output frames (evemu `E:` lines) and the actions fired, or a summary, and
//! draws raw vs transformed scroll over time. Parsing and replaying are
//! `pawl_evdev::record` / `pawl_evdev::replay`; this module reads files, prints and plots.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pawl_engine::{Bus, Config, DeviceInfo};
use pawl_evdev::record::{self, Recording};
use pawl_evdev::replay::{Point, Replay, replay_as};
use plotters::prelude::*;

/// What `pawl replay` was asked to do.
#[derive(Debug)]
pub struct Args<'a> {
    /// The recording.
    pub file: &'a Path,
    /// Device identity `[BUS:]VVVV:PPPP[:NAME]` ([`parse_device`]), overriding the
    /// recording's header.
    pub device: Option<&'a str>,
    /// An evemu device description for a recording without header.
    pub desc: Option<&'a Path>,
    /// Print the summary instead of the frames.
    pub summary: bool,
    /// Where to draw the plot (`.svg` or `.png`).
    pub plot: Option<&'a Path>,
    /// Which device of a `libinput record` with several (0-based).
    pub device_index: Option<usize>,
    /// The application focused throughout (its `[[app]]` profile).
    pub app: Option<&'a str>,
    /// Its window's title (`title` patterns), only with `app`.
    pub title: Option<&'a str>,
}

/// Runs the replay and prints to stdout.
///
/// Errors: the recording cannot be read or parsed, the plot cannot be drawn, stdout cannot
/// be written ([`crate::out::WriteError`]).
pub fn run(config: &Config, args: &Args<'_>) -> anyhow::Result<()> {
    let (recording, mut notes) = load(args.file, args.desc, args.device_index)?;
    let device = args.device.map(parse_device).transpose()?;
    // `fingers = "auto"` as the daemon resolves it: the desktop `actions.desktop` names,
    // else `XDG_CURRENT_DESKTOP`'s.
    let mut config = config.clone();
    let xdg = std::env::var("XDG_CURRENT_DESKTOP").unwrap_or_default();
    config.gesture.fingers =
        Some(config.swipe_fingers(pawl_engine::Desktop::from_xdg_current_desktop(&xdg)));
    let app = args.app.map(|id| pawl_evdev::replay::FocusedApp {
        id,
        title: args.title,
    });
    let res = replay_as(&recording, &config, device.as_ref(), app);
    notes.extend(res.notes.iter().cloned());
    let mut text = String::new();
    for n in &notes {
        text += &format!("# {n}\n");
    }
    if args.summary {
        text += &res.summary.to_string();
    } else {
        for l in &res.lines {
            text += l;
            text.push('\n');
        }
    }
    if let Some(path) = args.plot {
        let title = args
            .file
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        plot(&res, &title, path)?;
        text += &format!("# plot: {}\n", path.display());
    }
    crate::out::print(&text)?;
    Ok(())
}

/// What `pawl replay` reads, for "not a recording" errors.
const FORMATS: &str =
    "an evemu recording (E: lines), a libinput record YAML or a DOM wheel JSON trace";

/// Reads a file (`-`: standard input) as text, at most [`record::MAX_TEXT_BYTES`] (256
/// MiB: an endless source fails after reading one byte more); a binary file is reported
/// as not a recording.
fn read_text(file: &Path) -> anyhow::Result<String> {
    read_text_with(file, std::io::stdin().lock())
}

/// [`read_text`] with `stdin` standing for `-`.
fn read_text_with(file: &Path, stdin: impl std::io::Read) -> anyhow::Result<String> {
    let (limit, size) = (record::MAX_TEXT_BYTES, record::MAX_TEXT_SIZE);
    let bytes = if file == Path::new("-") {
        crate::input::read_limited(stdin, Path::new("standard input"), limit, size)?
    } else {
        let f =
            std::fs::File::open(file).with_context(|| format!("cannot read {}", file.display()))?;
        crate::input::read_limited(f, file, limit, size)?
    };
    String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{} is not text, so not {FORMATS}", file.display()))
}

/// Reads and parses the recording, and its evemu description (explicit, or by the
/// evemu-devices naming convention `NAME.WHAT.events` → `NAME.desc`) when it has no header.
/// Returns notes about where the device came from.
///
/// Errors: unreadable or binary files, parse errors (with the line), and a file in which
/// nothing was recognized (no event and no device header: any text parses as evemu with
/// unknown lines skipped). A recording with a header but no events is accepted, with a note.
fn load(
    file: &Path,
    desc: Option<&Path>,
    device_index: Option<usize>,
) -> anyhow::Result<(Recording, Vec<String>)> {
    let text = read_text(file)?;
    let mut rec = record::parse_with(&text, device_index)
        .with_context(|| format!("cannot parse {}", file.display()))?;
    if rec.events.is_empty()
        && rec.device.is_empty()
        && rec.format == record::Format::LibinputRecord
    {
        bail!(
            "{}: the libinput record's device has no events (and no name or id)",
            file.display()
        );
    }
    if rec.events.is_empty() && rec.device.is_empty() {
        bail!("no events found: {} is not {FORMATS}", file.display());
    }
    let mut notes = vec![format!("recording: {} ({:?})", file.display(), rec.format)];
    if rec.events.is_empty() {
        notes.push("the recording has a device header but no events".into());
    }
    let desc: Option<PathBuf> = match desc {
        Some(d) => Some(d.to_owned()),
        None if rec.device.is_empty() => file
            .file_name()
            .and_then(|n| record::evemu_desc_name(&n.to_string_lossy()))
            .map(|d| file.with_file_name(d))
            .filter(|d| d.is_file()),
        None => None,
    };
    if let Some(d) = desc {
        let text = read_text(&d)?;
        let parsed =
            record::parse(&text).with_context(|| format!("cannot parse {}", d.display()))?;
        if parsed.device.is_empty() {
            bail!(
                "{} describes no device: an evemu description has N:, I: and B: lines",
                d.display()
            );
        }
        rec.describe_with(&parsed);
        notes.push(format!("description: {}", d.display()));
    }
    Ok((rec, notes))
}

/// The `--device` syntax, for errors and `--help`.
pub const DEVICE_SYNTAX: &str = "[BUS:]VVVV:PPPP[:NAME]";

/// Parses `--device`: `[BUS:]VVVV:PPPP[:NAME]`. `VVVV` and `PPPP` are the vendor and
/// product ids, exactly four hex digits each; `BUS` is a name (`usb`, `bluetooth`/`bt`,
/// `i2c`, `i8042`/`ps2`, `virtual`) or the bus number in hex, as evemu's `I:` line and
/// `/proc/bus/input/devices` write it (`3`, `0005`, `0x18`); `NAME` is everything after
/// the ids (it may contain colons; surrounding quotes are removed). Without `BUS`, USB.
/// Three leading fields that all fit (`0003:046d:b034`) are bus, vendor, product; quote a
/// name that looks like a hex id.
pub fn parse_device(s: &str) -> anyhow::Result<DeviceInfo> {
    let fields: Vec<&str> = s.split(':').collect();
    let id = |f: &str| {
        (f.len() == 4 && f.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| u16::from_str_radix(f, 16).ok())
            .flatten()
    };
    let bus = |f: &str| -> Option<Bus> {
        if f.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Bus::parse(f);
        }
        let hex = f.strip_prefix("0x").unwrap_or(f);
        (!hex.is_empty() && hex.len() <= 4)
            .then(|| u16::from_str_radix(hex, 16).ok().map(Bus))
            .flatten()
    };
    let (bus, ids) = match fields.as_slice() {
        [b, v, p, ..] if id(v).is_some() && id(p).is_some() && bus(b).is_some() => {
            (bus(b), &fields[1..])
        }
        [v, p, ..] if id(v).is_some() && id(p).is_some() => (Some(Bus::USB), &fields[..]),
        _ => (None, &fields[..]),
    };
    let (Some(bus), Some(vendor), Some(product)) = (
        bus,
        ids.first().copied().and_then(id),
        ids.get(1).copied().and_then(id),
    ) else {
        bail!(
            "--device {s:?}: expected {DEVICE_SYNTAX} with 4-digit hex ids, e.g. 046d:b034, 5:046d:b034 or bluetooth:046d:b034:\"MX Master 3S\""
        );
    };
    let name = ids.get(2..).map(|n| n.join(":")).unwrap_or_default();
    let name = name
        .strip_prefix('"')
        .and_then(|n| n.strip_suffix('"'))
        .unwrap_or(&name)
        .to_owned();
    Ok(DeviceInfo {
        name,
        bus,
        vendor,
        product,
        has_wheel: true,
        is_touchpad: false,
    })
}

/// Font family the plot registers DejaVu Sans under (embedded: a PNG needs no system
/// fonts). An SVG names it as written, so a viewer without DejaVu Sans falls back to its
/// generic sans-serif font.
const FONT: &str = "DejaVu Sans, sans-serif";

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // DejaVu Sans is a valid TrueType font; a failure leaves text undrawn, not a crash.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Width of the picture, px: the time axis is cut into this many columns and each series
/// is decimated to them.
const WIDTH: u32 = 1000;
/// The most points a cumulative-travel line has, whatever the recording's length: 4 per
/// column (the level before, the lowest, the highest, the level after) and the two ends.
/// The step-per-frame panel has at most 2 markers per column and side (lowest, highest).
pub const MAX_LINE_POINTS: usize = 4 * WIDTH as usize + 2;

/// A point's time, s, as the `E:` lines print it.
fn seconds(start_us: u64, p: &Point) -> f64 {
    start_us.saturating_add(p.t_us) as f64 / 1e6
}

/// The time window of a series, s: from the first event of the recording to the last
/// point, never empty.
fn window(start_us: u64, points: &[Point]) -> (f64, f64) {
    let t0 = start_us as f64 / 1e6;
    let t1 = points.last().map_or(t0, |p| seconds(start_us, p));
    let span = (t1 - t0).max(0.001);
    (t0, t0 + span)
}

/// The column of time `t` in `columns` columns across `(t0, t1)`.
fn column(t: f64, (t0, t1): (f64, f64), columns: usize) -> usize {
    let c = ((t - t0) / (t1 - t0) * columns as f64).floor();
    (c.max(0.0) as usize).min(columns - 1)
}

/// The cumulative travel of one side (`side` picks raw or out, v120) as a staircase in
/// detents: flat between events (nothing moves during a pause), vertical at each event.
/// Events that fall into one of `columns` columns share one vertical (from the level
/// before through the lowest and highest to the level after), so the line has at most
/// `4 × columns + 2` points.
fn staircase(
    start_us: u64,
    points: &[Point],
    side: fn(&Point) -> i32,
    win: (f64, f64),
    columns: usize,
) -> Vec<(f64, f64)> {
    let mut line = vec![(win.0, 0.0)];
    let mut acc = 0i64;
    // (column, x, level before, lowest, highest, level after), detents.
    let mut open: Option<(usize, f64, f64, f64, f64, f64)> = None;
    let flush = |line: &mut Vec<(f64, f64)>, o: (usize, f64, f64, f64, f64, f64)| {
        let (_, x, before, lo, hi, after) = o;
        for y in [before, lo, hi, after] {
            if line.last() != Some(&(x, y)) {
                line.push((x, y));
            }
        }
    };
    for p in points {
        let v = side(p);
        if v == 0 {
            continue;
        }
        let before = acc as f64 / 120.0;
        acc += i64::from(v);
        let after = acc as f64 / 120.0;
        let t = seconds(start_us, p);
        let c = column(t, win, columns);
        match &mut open {
            Some(o) if o.0 == c => {
                o.3 = o.3.min(after);
                o.4 = o.4.max(after);
                o.5 = after;
            }
            _ => {
                if let Some(o) = open.take() {
                    flush(&mut line, o);
                }
                open = Some((c, t, before, before.min(after), before.max(after), after));
            }
        }
    }
    if let Some(o) = open {
        flush(&mut line, o);
    }
    line.push((win.1, acc as f64 / 120.0));
    line
}

/// The per-frame steps of one side, v120: per column, the lowest and the highest non-zero
/// step (at the column's first time), so a long recording draws at most 2 markers per
/// column.
fn steps(
    start_us: u64,
    points: &[Point],
    side: fn(&Point) -> i32,
    win: (f64, f64),
    columns: usize,
) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, f64, i32, i32)> = None;
    let flush = |out: &mut Vec<(f64, f64)>, (_, x, lo, hi): (usize, f64, i32, i32)| {
        out.push((x, f64::from(lo)));
        if hi != lo {
            out.push((x, f64::from(hi)));
        }
    };
    for p in points {
        let v = side(p);
        if v == 0 {
            continue;
        }
        let t = seconds(start_us, p);
        let c = column(t, win, columns);
        match &mut open {
            Some(o) if o.0 == c => {
                o.2 = o.2.min(v);
                o.3 = o.3.max(v);
            }
            _ => {
                if let Some(o) = open.take() {
                    flush(&mut out, o);
                }
                open = Some((c, t, v, v));
            }
        }
    }
    if let Some(o) = open {
        flush(&mut out, o);
    }
    out
}

/// An axis label that fits its label area whatever the value: up to 6 significant
/// characters, scientific notation past 10^5 (`1.8e7`, not `17895697.1`).
fn label(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e5 || v.abs() < 1e-3 {
        format!("{v:.1e}")
    } else {
        let s = format!("{v:.3}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_owned()
    }
}

/// A time label, s: like [`label`], but recorded times of 10^5 s and more (a recording
/// with epoch times) keep 5 significant digits, in scientific notation past 10^7 s.
fn time_label(v: f64) -> String {
    if v.abs() >= 1e7 {
        format!("{v:.4e}")
    } else if v.abs() >= 1e5 {
        format!("{v:.0}")
    } else {
        label(v)
    }
}

/// Draws raw vs transformed scroll over time to `path` (`.svg` or `.png`, any case): per
/// wheel axis with travel, the cumulative travel in detents (a staircase: it moves only at
/// events) and the per-frame steps in v120, against the recorded time in seconds as the
/// `E:` lines print it. Decimated to the picture's [`WIDTH`] columns: a cumulative line has
/// at most [`MAX_LINE_POINTS`] points whatever the recording's length (1,000,000 events
/// give an SVG of a few hundred KB). Errors name the path: an unknown extension, a file
/// that cannot be created (missing directory, no permission), a drawing failure.
pub fn plot(res: &Replay, title: &str, path: &Path) -> anyhow::Result<()> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let svg = match ext.as_deref() {
        Some("svg") => true,
        Some("png") => false,
        _ => bail!(
            "--plot {}: the picture type comes from the file name: use one ending in .svg or .png",
            path.display()
        ),
    };
    // Create the file first, so a bad path is an ordinary, readable I/O error.
    std::fs::File::create(path)
        .with_context(|| format!("cannot write the plot to {}", path.display()))?;
    register_font();
    let axes: Vec<(&str, &[Point])> = [
        ("vertical wheel", res.series.wheel.as_slice()),
        ("horizontal wheel", res.series.hwheel.as_slice()),
    ]
    .into_iter()
    .filter(|(_, s)| !s.is_empty())
    .collect();
    let rows = axes.len().max(1) as u32;
    let size = (WIDTH, 40 + 560 * rows);
    let start = res.series.start_us;
    let drawn = if svg {
        draw(
            SVGBackend::new(path, size).into_drawing_area(),
            title,
            start,
            &axes,
        )
    } else {
        draw(
            BitMapBackend::new(path, size).into_drawing_area(),
            title,
            start,
            &axes,
        )
    };
    drawn.with_context(|| format!("cannot draw the plot to {}", path.display()))
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    start_us: u64,
    axes: &[(&str, &[Point])],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("{e}");
    root.fill(&WHITE).map_err(e)?;
    let root = root
        .titled(&format!("pawl replay: {title}"), (FONT, 22))
        .map_err(e)?;
    if axes.is_empty() {
        root.draw(&Text::new(
            "no wheel travel in this recording",
            (40, 40),
            (FONT, 18),
        ))
        .map_err(e)?;
        return root.present().map_err(e);
    }
    let columns = WIDTH as usize;
    let panels = root.split_evenly((axes.len() * 2, 1));
    for (i, (name, points)) in axes.iter().enumerate() {
        let win = window(start_us, points);
        let x_range = (win.0 - (win.1 - win.0) * 0.01)..(win.1 + (win.1 - win.0) * 0.02);
        let raw = staircase(start_us, points, |p| p.raw, win, columns);
        let out = staircase(start_us, points, |p| p.out, win, columns);
        debug_assert!(raw.len() <= MAX_LINE_POINTS && out.len() <= MAX_LINE_POINTS);
        draw_travel(&panels[2 * i], name, raw, out, x_range.clone())?;
        let raw_steps = steps(start_us, points, |p| p.raw, win, columns);
        let out_steps = steps(start_us, points, |p| p.out, win, columns);
        draw_steps(&panels[2 * i + 1], name, raw_steps, out_steps, x_range)?;
    }
    root.present().map_err(e)
}

const RAW_COLOR: RGBColor = RGBColor(150, 150, 150);
const OUT_COLOR: RGBColor = RGBColor(30, 100, 200);

/// One axis's upper panel: the cumulative travel, detents, raw against transformed.
fn draw_travel<DB: DrawingBackend>(
    panel: &DrawingArea<DB, plotters::coord::Shift>,
    name: &str,
    raw: Vec<(f64, f64)>,
    out: Vec<(f64, f64)>,
    x_range: std::ops::Range<f64>,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("{e}");
    let (lo, hi) = raw
        .iter()
        .chain(&out)
        .fold((0.0f64, 0.0f64), |(lo, hi), (_, y)| {
            (lo.min(*y), hi.max(*y))
        });
    let pad = ((hi - lo) * 0.05).max(0.5);
    let mut chart = ChartBuilder::on(panel)
        .caption(format!("{name}: cumulative travel"), (FONT, 16))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range, (lo - pad)..(hi + pad))
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("recorded time (s), as the E: lines print it")
        .y_desc("detents")
        .x_label_formatter(&|v| time_label(*v))
        .y_label_formatter(&|v| label(*v))
        .label_style((FONT, 12))
        .draw()
        .map_err(e)?;
    chart
        .draw_series(LineSeries::new(raw, RAW_COLOR.stroke_width(2)))
        .map_err(e)?
        .label("raw (input)")
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], RAW_COLOR));
    chart
        .draw_series(LineSeries::new(out, OUT_COLOR.stroke_width(2)))
        .map_err(e)?
        .label("transformed (output)")
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], OUT_COLOR));
    chart
        .configure_series_labels()
        .label_font((FONT, 12))
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(e)
}

/// One axis's lower panel: the step of each frame, v120, raw against transformed.
fn draw_steps<DB: DrawingBackend>(
    panel: &DrawingArea<DB, plotters::coord::Shift>,
    name: &str,
    raw_steps: Vec<(f64, f64)>,
    out_steps: Vec<(f64, f64)>,
    x_range: std::ops::Range<f64>,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("{e}");
    let max = raw_steps
        .iter()
        .chain(&out_steps)
        .fold(1.0f64, |m, (_, y)| m.max(y.abs()))
        * 1.1;
    let mut chart = ChartBuilder::on(panel)
        .caption(format!("{name}: step per frame"), (FONT, 16))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range, -max..max)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("recorded time (s), as the E: lines print it")
        .y_desc("v120")
        .x_label_formatter(&|v| time_label(*v))
        .y_label_formatter(&|v| label(*v))
        .label_style((FONT, 12))
        .draw()
        .map_err(e)?;
    chart
        .draw_series(raw_steps.into_iter().map(|p| Circle::new(p, 3, RAW_COLOR)))
        .map_err(e)?
        .label("raw step")
        .legend(move |(x, y)| Circle::new((x + 10, y), 3, RAW_COLOR));
    chart
        .draw_series(
            out_steps
                .into_iter()
                .map(|p| Cross::new(p, 4, OUT_COLOR.stroke_width(2))),
        )
        .map_err(e)?
        .label("transformed step")
        .legend(move |(x, y)| Cross::new((x + 10, y), 4, OUT_COLOR));
    chart
        .configure_series_labels()
        .label_font((FONT, 12))
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pawl_engine::Platform;
    use pawl_evdev::replay::replay;

    #[test]
    fn device_flag_takes_ids_an_optional_bus_and_a_name_with_colons() {
        let d = parse_device("046d:b034:\"MX Master 3S\"").unwrap();
        assert_eq!((d.vendor, d.product, d.bus), (0x046d, 0xb034, Bus::USB));
        assert_eq!(d.name, "MX Master 3S");
        let d = parse_device("bluetooth:046d:b034:Name: with colon").unwrap();
        assert_eq!(
            (d.bus, d.product, d.name.as_str()),
            (Bus::BLUETOOTH, 0xb034, "Name: with colon")
        );
        let d = parse_device("093a:2510").unwrap();
        assert_eq!((d.vendor, d.name.as_str()), (0x093a, ""));
    }

    #[test]
    fn device_flag_reads_a_numeric_bus_in_hex_as_evemu_writes_it() {
        let d = parse_device("5:046d:b034").unwrap();
        assert_eq!(
            (d.bus, d.vendor, d.product),
            (Bus::BLUETOOTH, 0x046d, 0xb034)
        );
        let d = parse_device("0011:0002:0007:SynPS/2 Synaptics TouchPad").unwrap();
        assert_eq!((d.bus, d.vendor, d.product), (Bus::I8042, 2, 7));
        assert_eq!(d.name, "SynPS/2 Synaptics TouchPad");
        assert_eq!(parse_device("0x18:06cb:cd7e").unwrap().bus, Bus::I2C);
        // A name that looks like an id stays a name when quoted.
        let d = parse_device("046d:b034:\"cafe\"").unwrap();
        assert_eq!((d.bus, d.name.as_str()), (Bus::USB, "cafe"));
    }

    #[test]
    fn device_flag_errors_show_the_syntax() {
        for bad in [
            "046d",
            "xyz:b034",
            "46d:b034",
            "usb:046d",
            "5:046d",
            "",
            "046d:b034x",
        ] {
            let e = parse_device(bad).unwrap_err().to_string();
            assert!(
                e.contains("expected [BUS:]VVVV:PPPP[:NAME] with 4-digit hex ids"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn text_that_is_not_a_recording_is_an_error_naming_the_formats() {
        let dir = tempfile::tempdir().unwrap();
        for (name, contents) in [
            ("empty.events", &b""[..]),
            ("passwd", b"root:x:0:0:root:/root:/bin/bash\n"),
            ("README.md", b"# pawl\n\nA mouse daemon: gestures.\n"),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, contents).unwrap();
            let e = load(&path, None, None).unwrap_err().to_string();
            assert_eq!(
                e,
                format!(
                    "no events found: {} is not an evemu recording (E: lines), a libinput record YAML or a DOM wheel JSON trace",
                    path.display()
                )
            );
        }
        let bin = dir.path().join("random.bin");
        std::fs::write(&bin, [0xff, 0xfe, 0x00, 0x94]).unwrap();
        let e = load(&bin, None, None).unwrap_err().to_string();
        assert!(e.ends_with("is not text, so not an evemu recording (E: lines), a libinput record YAML or a DOM wheel JSON trace"), "{e}");
        // A header without events is a valid, empty recording.
        let header = dir.path().join("header.events");
        std::fs::write(
            &header,
            "N: Logitech MX Master 3S\nI: 0005 046d b034 0011\n",
        )
        .unwrap();
        let (rec, notes) = load(&header, None, None).unwrap();
        assert!(rec.events.is_empty());
        assert!(
            notes.iter().any(|n| n.contains("header but no events")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_dash_reads_the_recording_from_standard_input_with_the_size_limit() {
        let text = std::fs::read(example("hires-scroll.events")).unwrap();
        let read = read_text_with(Path::new("-"), &text[..]).unwrap();
        assert_eq!(read.as_bytes(), &text[..]);
        let e = read_text_with(Path::new("-"), std::io::repeat(b'#')).unwrap_err();
        assert_eq!(
            e.to_string(),
            "standard input is larger than the 256 MiB limit (268435456 bytes)"
        );
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn replay_of_dev_zero_fails_at_the_limit_naming_the_path() {
        let e = load(Path::new("/dev/zero"), None, None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "/dev/zero is larger than the 256 MiB limit (268435456 bytes)"
        );
    }

    #[test]
    fn a_libinput_record_without_events_or_identity_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.yaml");
        std::fs::write(&path, "version: 1\ndevices:\n- node: /dev/input/event7\n").unwrap();
        let e = load(&path, None, None).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: the libinput record's device has no events (and no name or id)",
                path.display()
            )
        );
    }

    fn example(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name)
    }

    fn replayed(name: &str) -> Replay {
        let (rec, _) = load(&example(name), None, None).unwrap();
        replay(&rec, &Config::default_for(Platform::Linux), None)
    }

    #[test]
    fn plot_writes_svg_and_png_with_the_embedded_font() {
        let dir = std::env::temp_dir().join(format!("pawl-plot-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let res = replayed("free-spin-burst.events");
        let svg = dir.join("p.svg");
        plot(&res, "free-spin-burst", &svg).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("<svg") && text.contains("cumulative travel"));
        let png = dir.join("p.png");
        plot(&res, "free-spin-burst", &png).unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert!(
            bytes.len() > 10_000,
            "a real picture, {} bytes",
            bytes.len()
        );
        assert!(plot(&res, "x", &dir.join("p.jpg")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn plot_extension_is_case_insensitive_and_errors_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let res = replayed("hires-scroll.events");
        for name in ["UP.SVG", "UP.PNG", "Mixed.Svg"] {
            plot(&res, "x", &dir.path().join(name)).unwrap();
            assert!(dir.path().join(name).metadata().unwrap().len() > 300);
        }
        let missing = dir.path().join("no/such/dir/p.svg");
        let e = format!("{:#}", plot(&res, "x", &missing).unwrap_err());
        assert_eq!(
            e,
            format!(
                "cannot write the plot to {}: No such file or directory (os error 2)",
                missing.display()
            )
        );
        let e = plot(&res, "x", &dir.path().join("plot.jpg"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("plot.jpg: the picture type comes from the file name: use one ending in .svg or .png"), "{e}");
        let e = plot(&res, "x", dir.path()).unwrap_err().to_string();
        assert!(e.contains("use one ending in .svg or .png"), "{e}");
    }

    #[test]
    fn every_example_replays() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "events" || x == "yaml") {
                let (rec, _) = load(&p, None, None).unwrap();
                assert!(!rec.events.is_empty(), "{}", p.display());
                n += 1;
            }
        }
        assert!(n >= 3);
    }

    use pawl_recordings::dir as recordings_dir;

    #[test]
    fn every_shared_recording_replays_and_plots() {
        let dir = recordings_dir();
        let out = std::env::temp_dir().join(format!("pawl-plot-all-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let config = Config::default_for(Platform::Linux);
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if !p.extension().is_some_and(|x| x == "events" || x == "json") {
                continue;
            }
            let (rec, _) = load(&p, None, None).unwrap();
            let res = replay(&rec, &config, None);
            let svg = out.join(format!("{n}.svg"));
            plot(&res, &p.display().to_string(), &svg).unwrap();
            assert!(
                std::fs::metadata(&svg).unwrap().len() > 300,
                "{}",
                p.display()
            );
            n += 1;
        }
        std::fs::remove_dir_all(&out).unwrap();
        assert!(n >= 7, "recordings at {}: {n}", dir.display());
    }

    #[test]
    fn gesture_drag_example_fires_desktop_left_and_passes_its_click_through_as_it_says() {
        let res = replayed("gesture-drag-right.events");
        assert!(
            res.lines.contains(&"# action desktop-left".to_owned()),
            "{:?}",
            res.lines
        );
        assert_eq!(res.summary.cancels, 0, "{:?}", res.lines);
        // The final click of the gesture button, passed through at its release.
        assert_eq!(
            res.lines[res.lines.len() - 4..],
            [
                "E: 2.030000 0001 0115 1",
                "E: 2.030000 0000 0000 0",
                "E: 2.030000 0001 0115 0",
                "E: 2.030000 0000 0000 0"
            ]
        );
    }

    // ---- Plots ----

    fn series_replay(start_us: u64, points: Vec<Point>) -> Replay {
        let mut res = Replay::default();
        res.series.start_us = start_us;
        res.series.wheel = points;
        res
    }

    fn pt(t_us: u64, raw: i32, out: i32) -> Point {
        Point { t_us, raw, out }
    }

    /// Every `points="…"` list of the SVG's polylines, as (x, y) pairs.
    fn polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
        svg.split("<polyline")
            .skip(1)
            .filter_map(|p| {
                let list = p.split("points=\"").nth(1)?.split('"').next()?;
                Some(
                    list.split_whitespace()
                        .filter_map(|xy| {
                            let (x, y) = xy.split_once(',')?;
                            Some((x.parse().ok()?, y.parse().ok()?))
                        })
                        .collect(),
                )
            })
            .collect()
    }

    /// The text of every `<text>` element of an SVG, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let inner = t.split_once('>')?.1;
                Some(inner.split("</text>").next()?.trim().to_owned())
            })
            .collect()
    }

    #[test]
    fn cumulative_travel_is_a_staircase_that_stays_flat_during_pauses() {
        let points = [pt(100_000, 120, -120), pt(500_000, 120, -120)];
        let line = staircase(0, &points, |p| p.raw, window(0, &points), 1000);
        assert_eq!(
            line,
            [
                (0.0, 0.0),
                (0.1, 0.0),
                (0.1, 1.0),
                (0.5, 1.0),
                (0.5, 2.0),
                (0.5, 2.0)
            ]
        );
        // In the SVG: every segment of every drawn line is horizontal or vertical.
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("p.svg");
        plot(&replayed("hires-scroll.events"), "x", &svg).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        let lines = polylines(&text);
        assert!(
            lines.iter().any(|l| l.len() > 10),
            "{} polylines",
            lines.len()
        );
        for l in lines.iter().filter(|l| l.len() > 2) {
            for w in l.windows(2) {
                let (a, b) = (w[0], w[1]);
                assert!(a.0 == b.0 || a.1 == b.1, "a slanted segment {a:?} → {b:?}");
            }
        }
    }

    #[test]
    fn the_time_axis_is_the_recorded_time_the_e_lines_print() {
        let res = replayed("gesture-drag-right.events");
        // The example's events start at 1.000000 s, as its E: lines print them.
        assert_eq!(res.series.start_us, 1_000_000);
        let points = [pt(610_000, 3, 3)];
        assert_eq!(
            staircase(
                1_000_000,
                &points,
                |p| p.raw,
                window(1_000_000, &points),
                1000
            )[1],
            (1.61, 0.0)
        );
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("p.svg");
        plot(
            &series_replay(5_000_000, vec![pt(100_000, 120, 120)]),
            "x",
            &svg,
        )
        .unwrap();
        let labels = texts(&std::fs::read_to_string(&svg).unwrap());
        assert!(
            labels.iter().any(|l| l == "5.02"),
            "no tick at 5.02 s: {labels:?}"
        );
        assert!(!labels.iter().any(|l| l == "0.02"), "{labels:?}");
    }

    #[test]
    fn the_svg_font_has_a_generic_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("p.svg");
        plot(&replayed("hires-scroll.events"), "x", &svg).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("font-family=\"DejaVu Sans, sans-serif\""));
        assert!(!text.contains("pawl-sans"));
    }

    #[test]
    fn extreme_values_get_labels_that_fit() {
        assert_eq!(label(17_895_697.1), "1.8e7");
        assert_eq!(label(2.5), "2.5");
        assert_eq!(label(-0.125), "-0.125");
        assert_eq!(time_label(1_764_600_000.5), "1.7646e9");
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("p.svg");
        let res = series_replay(
            0,
            vec![
                pt(0, i32::MIN, 600),
                pt(10_000, i32::MAX, -600),
                pt(20_000, i32::MIN, 600),
            ],
        );
        plot(&res, "x", &svg).unwrap();
        let labels = texts(&std::fs::read_to_string(&svg).unwrap());
        assert!(labels.iter().any(|l| l.contains("e9")), "{labels:?}");
        for label in &labels {
            let digits = label.chars().filter(char::is_ascii_digit).count();
            assert!(digits <= 6, "label {label:?} is too long for its area");
        }
    }

    #[test]
    fn a_million_events_plot_to_a_small_svg() {
        // 1,000,000 frames of alternating travel over 1,000 s: decimated to the columns.
        let points: Vec<Point> = (0..1_000_000u64)
            .map(|i| pt(i * 1000, if i % 3 == 0 { -40 } else { 60 }, 15))
            .collect();
        let win = window(0, &points);
        assert!(staircase(0, &points, |p| p.raw, win, 1000).len() <= MAX_LINE_POINTS);
        assert!(steps(0, &points, |p| p.out, win, 1000).len() <= 2 * 1000);
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("p.svg");
        plot(&series_replay(0, points), "x", &svg).unwrap();
        let size = std::fs::metadata(&svg).unwrap().len();
        assert!(size < 1_000_000, "{size} bytes");
    }
}
