//! `pawl replay FILE`: runs a recorded event stream through the engine without any device
//! and prints the output frames (evemu `E:` lines) and the actions fired, or a summary, and
//! draws raw vs transformed scroll over time. Parsing and replaying are
//! `pawl_evdev::record` / `pawl_evdev::replay`; this module reads files, prints and plots.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pawl_engine::{Bus, Config, DeviceInfo};
use pawl_evdev::record::{self, Recording};
use pawl_evdev::replay::{Point, Replay, replay};
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
}

/// Runs the replay and prints to stdout.
///
/// Errors: the recording cannot be read or parsed, the plot cannot be drawn, stdout cannot
/// be written ([`crate::out::WriteError`]).
pub fn run(config: &Config, args: &Args<'_>) -> anyhow::Result<()> {
    let (recording, mut notes) = load(args.file, args.desc)?;
    let device = args.device.map(parse_device).transpose()?;
    let res = replay(&recording, config, device.as_ref());
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

/// Reads a file as text; a binary file is reported as not a recording.
fn read_text(file: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
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
fn load(file: &Path, desc: Option<&Path>) -> anyhow::Result<(Recording, Vec<String>)> {
    let text = read_text(file)?;
    let mut rec =
        record::parse(&text).with_context(|| format!("cannot parse {}", file.display()))?;
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

/// Font family name the plot registers DejaVu Sans under (embedded: no system fonts needed).
const FONT: &str = "pawl-sans";

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // DejaVu Sans is a valid TrueType font; a failure leaves text undrawn, not a crash.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Draws raw vs transformed scroll over time to `path` (`.svg` or `.png`, any case): per
/// wheel axis with travel, the cumulative travel in detents and the per-frame steps in v120.
/// Errors name the path: an unknown extension, a file that cannot be created (missing
/// directory, no permission), a drawing failure.
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
    let size = (1000, 40 + 560 * rows);
    let drawn = if svg {
        draw(
            SVGBackend::new(path, size).into_drawing_area(),
            title,
            &axes,
        )
    } else {
        draw(
            BitMapBackend::new(path, size).into_drawing_area(),
            title,
            &axes,
        )
    };
    drawn.with_context(|| format!("cannot draw the plot to {}", path.display()))
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
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
    let raw_color = RGBColor(150, 150, 150);
    let out_color = RGBColor(30, 100, 200);
    let panels = root.split_evenly((axes.len() * 2, 1));
    for (i, (name, points)) in axes.iter().enumerate() {
        let t_end = points
            .last()
            .map_or(1.0, |p| p.t_us as f64 / 1e6)
            .max(0.001)
            * 1.02;
        let cum = |f: fn(&Point) -> i32| -> Vec<(f64, f64)> {
            let mut acc = 0i64;
            let mut v = vec![(0.0, 0.0)];
            for p in points.iter() {
                acc += i64::from(f(p));
                v.push((p.t_us as f64 / 1e6, acc as f64 / 120.0));
            }
            v
        };
        let raw = cum(|p| p.raw);
        let out = cum(|p| p.out);
        let (lo, hi) = raw
            .iter()
            .chain(&out)
            .fold((0.0f64, 0.0f64), |(lo, hi), (_, y)| {
                (lo.min(*y), hi.max(*y))
            });
        let pad = ((hi - lo) * 0.05).max(0.5);
        let mut chart = ChartBuilder::on(&panels[2 * i])
            .caption(format!("{name}: cumulative travel"), (FONT, 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..t_end, (lo - pad)..(hi + pad))
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("detents")
            .label_style((FONT, 12))
            .draw()
            .map_err(e)?;
        chart
            .draw_series(LineSeries::new(raw, raw_color.stroke_width(2)))
            .map_err(e)?
            .label("raw (input)")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], raw_color));
        chart
            .draw_series(LineSeries::new(out, out_color.stroke_width(2)))
            .map_err(e)?
            .label("transformed (output)")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], out_color));
        chart
            .configure_series_labels()
            .label_font((FONT, 12))
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()
            .map_err(e)?;

        let max = points
            .iter()
            .map(|p| p.raw.saturating_abs().max(p.out.saturating_abs()))
            .max()
            .unwrap_or(1)
            .max(1) as f64
            * 1.1;
        let mut steps = ChartBuilder::on(&panels[2 * i + 1])
            .caption(format!("{name}: step per frame"), (FONT, 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..t_end, -max..max)
            .map_err(e)?;
        steps
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("v120")
            .label_style((FONT, 12))
            .draw()
            .map_err(e)?;
        steps
            .draw_series(
                points
                    .iter()
                    .filter(|p| p.raw != 0)
                    .map(|p| Circle::new((p.t_us as f64 / 1e6, f64::from(p.raw)), 3, raw_color)),
            )
            .map_err(e)?
            .label("raw step")
            .legend(move |(x, y)| Circle::new((x + 10, y), 3, raw_color));
        steps
            .draw_series(points.iter().map(|p| {
                Cross::new(
                    (p.t_us as f64 / 1e6, f64::from(p.out)),
                    4,
                    out_color.stroke_width(2),
                )
            }))
            .map_err(e)?
            .label("transformed step")
            .legend(move |(x, y)| Cross::new((x + 10, y), 4, out_color));
        steps
            .configure_series_labels()
            .label_font((FONT, 12))
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()
            .map_err(e)?;
    }
    root.present().map_err(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pawl_engine::Platform;

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
            let e = load(&path, None).unwrap_err().to_string();
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
        let e = load(&bin, None).unwrap_err().to_string();
        assert!(e.ends_with("is not text, so not an evemu recording (E: lines), a libinput record YAML or a DOM wheel JSON trace"), "{e}");
        // A header without events is a valid, empty recording.
        let header = dir.path().join("header.events");
        std::fs::write(
            &header,
            "N: Logitech MX Master 3S\nI: 0005 046d b034 0011\n",
        )
        .unwrap();
        let (rec, notes) = load(&header, None).unwrap();
        assert!(rec.events.is_empty());
        assert!(
            notes.iter().any(|n| n.contains("header but no events")),
            "{notes:?}"
        );
    }

    fn example(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name)
    }

    fn replayed(name: &str) -> Replay {
        let (rec, _) = load(&example(name), None).unwrap();
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
                let (rec, _) = load(&p, None).unwrap();
                assert!(!rec.events.is_empty(), "{}", p.display());
                n += 1;
            }
        }
        assert!(n >= 3);
    }

    /// `shared/recordings` beside the repository (as the golden tests find it).
    fn recordings_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("PAWL_RECORDINGS") {
            return PathBuf::from(dir);
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let root = root.canonicalize().unwrap_or(root);
        root.ancestors()
            .skip(1)
            .map(|a| a.join("shared/recordings"))
            .find(|d| d.is_dir())
            .unwrap_or_else(|| root.join("../shared/recordings"))
    }

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
            let (rec, _) = load(&p, None).unwrap();
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
    fn gesture_drag_example_fires_desktop_left() {
        let res = replayed("gesture-drag-right.events");
        assert!(
            res.lines.contains(&"# action desktop-left".to_owned()),
            "{:?}",
            res.lines
        );
    }
}
