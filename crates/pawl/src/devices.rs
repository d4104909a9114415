//! `pawl devices`: the one-shot device check. Lists pointer devices with bus,
//! vendor:product, name, MX Master family membership, what the config decides for them and
//! who grabs them; exits 0 when an MX Master is connected, 1 when none is.
//!
//! The model and its rendering are platform-neutral; the Linux backend fills in
//! [`DeviceEntry`]s from sysfs, the worker's metadata and a grab probe.

use std::fmt::Write as _;

use pawl_engine::device::{Family, family, is_mx_master};
use pawl_engine::{Config, DeviceInfo};
use serde_json::json;

use crate::lifecycle::MouseRecord;
use crate::out::escape_control;

/// Exit code when an MX Master is connected.
pub const EXIT_MX_PRESENT: u8 = 0;
/// Exit code when none is.
pub const EXIT_NO_MX: u8 = 1;

/// A process that has a device open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// Its pid.
    pub pid: u32,
    /// Its command name (`/proc/PID/comm`).
    pub command: String,
}

/// Who grabs a device (Linux `EVIOCGRAB`: exclusive access to its events).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grab {
    /// Nobody: every reader gets its events.
    Free,
    /// The running pawl worker (from its metadata).
    Pawl {
        /// The worker's pid.
        pid: u32,
    },
    /// Another process; `holders` are the processes that have it open (one of them grabs
    /// it; empty when their fds are not visible to this user).
    #[cfg_attr(
        not(target_os = "linux"),
        allow(dead_code, reason = "macOS grabs nothing: event taps")
    )]
    Other {
        /// Candidates.
        holders: Vec<Holder>,
    },
    /// Not probed (pawl would not grab it, so whether someone else does is not pawl's
    /// business); `open_by` lists who has it open.
    #[cfg_attr(
        not(target_os = "linux"),
        allow(dead_code, reason = "macOS grabs nothing: event taps")
    )]
    NotProbed {
        /// Processes with it open.
        open_by: Vec<Holder>,
    },
    /// Could not be checked: why (e.g. no permission to open the device).
    #[cfg_attr(
        not(target_os = "linux"),
        allow(dead_code, reason = "macOS grabs nothing: event taps")
    )]
    Unknown(String),
}

/// One pointer device as `pawl devices` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceEntry {
    /// Where it is (`/dev/input/event5`).
    pub path: String,
    /// Identity.
    pub info: DeviceInfo,
    /// What kind of pointer: `mouse`, `touchpad`, `pointer`.
    pub kind: String,
    /// One of pawl's own virtual devices (a clone of a grabbed device).
    pub pawl_virtual: bool,
    /// Who grabs it.
    pub grab: Grab,
    /// Which path carries each part of the mouse it belongs to (Linux), if known.
    pub paths: Option<MousePaths>,
}

/// Which path carries each part of a device's mouse, and who says so.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "paths are a Linux report so far")
)]
pub struct MousePaths {
    /// Where the answer comes from.
    pub source: PathsSource,
    /// The mouse, its nodes and its paths.
    pub mouse: MouseRecord,
}

/// Who decided a [`MousePaths`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "paths are a Linux report so far")
)]
pub enum PathsSource {
    /// The running worker (from its metadata).
    Worker {
        /// Its pid.
        pid: u32,
    },
    /// No worker runs: what pawl would do now, by the same decision, from the config and
    /// what sysfs shows (HID++ assumed to divert once set up).
    Predicted,
}

/// Whether `info` counts as an MX Master: by the family table, or marked `mx_master = true`
/// by a config rule (a receiver whose name does not say so).
pub fn counts_as_mx_master(config: &Config, info: &DeviceInfo) -> bool {
    is_mx_master(info)
        || config
            .devices
            .iter()
            .any(|r| r.mx_master && r.matcher.matches(info))
}

/// Whether an MX Master is connected (pawl's virtual clones do not count).
pub fn mx_master_present(config: &Config, entries: &[DeviceEntry]) -> bool {
    entries
        .iter()
        .any(|e| !e.pawl_virtual && counts_as_mx_master(config, &e.info))
}

/// The exit code of `pawl devices`.
pub fn exit_code(config: &Config, entries: &[DeviceEntry]) -> u8 {
    if mx_master_present(config, entries) {
        EXIT_MX_PRESENT
    } else {
        EXIT_NO_MX
    }
}

fn family_text(info: &DeviceInfo) -> Option<String> {
    match family(info.vendor, info.product)? {
        Family::MxMaster(name) => Some(format!("MX Master family: {name}")),
        Family::Receiver(name) if is_mx_master(info) => {
            Some(format!("{name} holding an MX Master"))
        }
        Family::Receiver(name) => Some(format!("{name}: may hold an MX Master")),
    }
}

fn holders_text(holders: &[Holder]) -> String {
    let names: Vec<String> = holders
        .iter()
        .map(|h| format!("{} ({})", escape_control(&h.command), h.pid))
        .collect();
    names.join(", ")
}

fn grab_text(grab: &Grab) -> String {
    match grab {
        Grab::Free => "not grabbed".into(),
        Grab::Pawl { pid } => format!("grabbed by pawl (pid {pid})"),
        Grab::Other { holders } if holders.is_empty() => {
            "grabbed by another process (not visible to you)".into()
        }
        Grab::Other { holders } => format!(
            "grabbed by another process: one of {}; pawl cannot grab it while it does",
            holders_text(holders)
        ),
        Grab::NotProbed { open_by } if open_by.is_empty() => "not checked".into(),
        Grab::NotProbed { open_by } => {
            format!("not checked; open by {}", holders_text(open_by))
        }
        Grab::Unknown(why) => format!("unknown: {why}"),
    }
}

/// The report for people: a block per device, then a summary line.
pub fn render_text(config: &Config, entries: &[DeviceEntry]) -> String {
    let mut s = String::new();
    if entries.is_empty() {
        s.push_str(
            "no pointer devices found (none connected, or /dev/input is not readable: see the \
             README, Permissions)\n",
        );
    }
    for e in entries {
        let i = &e.info;
        if e.pawl_virtual {
            let _ = writeln!(
                s,
                "{}  {:?}  (pawl's virtual device: its output)",
                e.path, i.name
            );
            continue;
        }
        let _ = writeln!(s, "{}  {:?}", e.path, i.name);
        let mut line = format!(
            "    {} {:04x}:{:04x}, {}",
            i.bus.name(),
            i.vendor,
            i.product,
            e.kind
        );
        if let Some(f) = family_text(i) {
            let _ = write!(line, ", {f}");
        }
        let _ = writeln!(s, "{line}");
        let d = config.decide(i);
        let decision = if d.handle {
            let scroll = if d.transform_scroll {
                "scroll transformed"
            } else {
                "scroll passed through"
            };
            format!("handled ({}): buttons, gestures, {scroll}", d.reason)
        } else {
            format!("left alone ({})", d.reason)
        };
        let _ = writeln!(s, "    config: {decision}");
        let _ = writeln!(s, "    grab:   {}", grab_text(&e.grab));
        if let Some(p) = &e.paths {
            let head = match p.source {
                PathsSource::Worker { pid } => format!("    paths (pawl, pid {pid}): "),
                PathsSource::Predicted => "    paths (if pawl ran now): ".to_owned(),
            };
            s.push_str(&crate::control::mouse_text(
                &p.mouse, &head, false, "      ",
            ));
        }
    }
    let mx: Vec<&DeviceEntry> = entries
        .iter()
        .filter(|e| !e.pawl_virtual && counts_as_mx_master(config, &e.info))
        .collect();
    if mx.is_empty() {
        s.push_str("no MX Master connected");
        let receiver = entries.iter().find(|e| {
            !e.pawl_virtual
                && matches!(
                    family(e.info.vendor, e.info.product),
                    Some(Family::Receiver(_))
                )
        });
        if let Some(r) = receiver {
            let _ = write!(
                s,
                "; {} is a receiver: if an MX Master is paired to it, add a [[device]] rule \
                 matching it with mx_master = true",
                r.path
            );
        }
        s.push('\n');
    } else {
        let names: Vec<String> = mx
            .iter()
            .map(|e| format!("{} ({})", escape_control(&e.info.name), e.path))
            .collect();
        let _ = writeln!(s, "MX Master connected: {}", names.join(", "));
    }
    s
}

/// The report for scripts: `{"mx_master_present": bool, "devices": [{"path", "name",
/// "bus", "vendor", "product" (4-digit hex), "kind", "family" (name or null), "mx_master",
/// "pawl_virtual", "handled", "transform_scroll", "reason", "grab": {"state": "free" |
/// "pawl" | "other" | "not-probed" | "unknown", "pid"?, "holders"?, "why"?}, "paths":
/// null | {"source": "worker" | "predicted", "pid"?, "mouse": (see
/// `control::mouse_json`)}}]}`.
pub fn render_json(config: &Config, entries: &[DeviceEntry]) -> serde_json::Value {
    let holders_json = |hs: &[Holder]| -> Vec<serde_json::Value> {
        hs.iter()
            .map(|h| json!({"pid": h.pid, "command": h.command}))
            .collect()
    };
    let devices: Vec<serde_json::Value> = entries
        .iter()
        .map(|e| {
            let d = config.decide(&e.info);
            let grab = match &e.grab {
                Grab::Free => json!({"state": "free"}),
                Grab::Pawl { pid } => json!({"state": "pawl", "pid": pid}),
                Grab::Other { holders } => {
                    json!({"state": "other", "holders": holders_json(holders)})
                }
                Grab::NotProbed { open_by } => {
                    json!({"state": "not-probed", "holders": holders_json(open_by)})
                }
                Grab::Unknown(why) => json!({"state": "unknown", "why": why}),
            };
            let family = match family(e.info.vendor, e.info.product) {
                Some(Family::MxMaster(n) | Family::Receiver(n)) => json!(n),
                None => serde_json::Value::Null,
            };
            json!({
                "path": e.path,
                "name": e.info.name,
                "bus": e.info.bus.name(),
                "vendor": format!("{:04x}", e.info.vendor),
                "product": format!("{:04x}", e.info.product),
                "kind": e.kind,
                "family": family,
                "mx_master": !e.pawl_virtual && counts_as_mx_master(config, &e.info),
                "pawl_virtual": e.pawl_virtual,
                "handled": !e.pawl_virtual && d.handle,
                "transform_scroll": !e.pawl_virtual && d.transform_scroll,
                "reason": d.reason,
                "grab": grab,
                "paths": e.paths.as_ref().map(|p| {
                    let mut v = json!({
                        "source": match p.source {
                            PathsSource::Worker { .. } => "worker",
                            PathsSource::Predicted => "predicted",
                        },
                        "mouse": crate::control::mouse_json(&p.mouse),
                    });
                    if let PathsSource::Worker { pid } = p.source {
                        v["pid"] = json!(pid);
                    }
                    v
                }),
            })
        })
        .collect();
    json!({
        "mx_master_present": mx_master_present(config, entries),
        "devices": devices,
    })
}

/// `pawl devices`: gathers the pointer devices of this platform, prints the report (text
/// or JSON) and returns the exit code ([`EXIT_MX_PRESENT`] / [`EXIT_NO_MX`]).
///
/// Errors: the device list cannot be read at all (sysfs missing).
pub fn command(config: &Config, json: bool) -> anyhow::Result<std::process::ExitCode> {
    let entries = gather(config)?;
    if json {
        crate::out::println(&render_json(config, &entries).to_string())?;
    } else {
        crate::out::print(&render_text(config, &entries))?;
        #[cfg(target_os = "linux")]
        crate::out::print(&hidpp_report())?;
        #[cfg(target_os = "macos")]
        crate::out::print(&crate::macos::permission_report())?;
    }
    Ok(std::process::ExitCode::from(exit_code(config, &entries)))
}

/// Linux: each MX Master HID++ endpoint and the controls diverted on it now (by pawl or
/// anyone else), asked from the device with a software id of its own (a running daemon
/// ignores the replies). Empty when there is none.
#[cfg(target_os = "linux")]
fn hidpp_report() -> String {
    use std::fmt::Write;
    let nodes = pawl_linux::hidpp::scan(std::path::Path::new(pawl_linux::hidpp::SYS_CLASS_HIDRAW));
    if nodes.is_empty() {
        return String::new();
    }
    let mut res = String::from("HID++:\n");
    let batteries = pawl_linux::battery::scan(std::path::Path::new(
        pawl_linux::battery::SYS_CLASS_POWER_SUPPLY,
    ));
    for node in nodes {
        let hid_dir = std::fs::canonicalize(&node.hid_dir).ok();
        let battery = batteries
            .iter()
            .find(|b| b.hid_dir.is_some() && b.hid_dir == hid_dir)
            .map(|b| format!("battery {}", crate::control::battery_record(b).describe()));
        let path = node.dev_path().display().to_string();
        let name = escape_control(&node.name);
        match pawl_linux::hidpp::query(node, std::time::Duration::from_secs(1)) {
            Ok(q) => {
                let version = q
                    .protocol
                    .map(|(a, b)| format!(" HID++ {a}.{b}"))
                    .unwrap_or_default();
                let diverted = q.diverted();
                let what = if diverted.is_empty() {
                    "nothing diverted".to_owned()
                } else {
                    format!("diverted {}", diverted.join(", "))
                };
                let _ = write!(res, "  {path} \"{name}\"{version}: {what}");
                if let Some(p) = &q.problem {
                    let _ = write!(res, " ({p})");
                }
                res.push('\n');
                if let Some(settings) = q.settings() {
                    let _ = writeln!(res, "    {settings}");
                }
                if let Some(battery) = &battery {
                    let _ = writeln!(res, "    {battery}");
                }
            }
            Err(e) => {
                let e = escape_control(&e.to_string());
                let _ = writeln!(res, "  {path} \"{name}\": {e}");
            }
        }
    }
    res
}

/// The running worker's metadata, if one runs.
fn running_worker() -> Option<crate::lifecycle::Metadata> {
    match crate::lifecycle::current_status(&crate::lifecycle::Paths::discover()) {
        Ok(crate::lifecycle::Status::Running(meta)) => Some(meta),
        _ => None,
    }
}

/// Linux: pointer nodes from sysfs (never opening a keyboard); who grabs each from the
/// worker's metadata, else an `EVIOCGRAB` probe of the devices pawl would grab, and the
/// processes that have them open.
#[cfg(target_os = "linux")]
fn gather(config: &Config) -> anyhow::Result<Vec<DeviceEntry>> {
    use anyhow::Context;
    use pawl_linux::caps::Kind;
    use pawl_linux::inspect::{GrabProbe, pointer_devices, probe_grab};

    let class = std::path::Path::new(pawl_linux::sysfs::SYS_CLASS_INPUT);
    let devices =
        pointer_devices(class).with_context(|| format!("cannot list {}", class.display()))?;
    let worker = running_worker();
    let paths: Vec<String> = devices
        .iter()
        .map(|d| d.dev_path().display().to_string())
        .collect();
    let open = open_by(&paths);
    let sys = std::path::Path::new("/sys");
    let batteries = pawl_linux::battery::scan(&sys.join("class/power_supply"));
    let mut entries = Vec::new();
    for (d, path) in devices.iter().zip(paths) {
        let info = d.info();
        let holders = open.get(&path).cloned().unwrap_or_default();
        let by_pawl = worker
            .as_ref()
            .filter(|m| m.devices.iter().any(|g| g.path == path));
        let grab = if d.is_pawl_device() {
            Grab::NotProbed { open_by: holders }
        } else if let Some(meta) = by_pawl {
            Grab::Pawl { pid: meta.pid }
        } else if config.decide(&info).handle || counts_as_mx_master(config, &info) {
            match probe_grab(&d.dev_path()) {
                Ok(GrabProbe::Free) => Grab::Free,
                Ok(GrabProbe::Grabbed) => Grab::Other { holders },
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    Grab::Unknown("no permission to open it (see the README, Permissions)".into())
                }
                Err(e) => Grab::Unknown(e.to_string()),
            }
        } else {
            Grab::NotProbed { open_by: holders }
        };
        let kind = match d.kind() {
            Kind::Mouse => "mouse",
            Kind::AbsolutePointer => "touchpad",
            Kind::Other => "other",
        };
        let mut paths = match &worker {
            _ if d.is_pawl_device() => None,
            Some(meta) => meta
                .mice
                .iter()
                .find(|m| m.nodes.iter().any(|n| n.path == path))
                .map(|m| MousePaths {
                    source: PathsSource::Worker { pid: meta.pid },
                    mouse: m.clone(),
                }),
            None => pawl_linux::daemon::predict(config, class, d).map(|m| MousePaths {
                source: PathsSource::Predicted,
                mouse: crate::mouse_record(&m),
            }),
        };
        if let Some(p) = &mut paths {
            p.mouse.battery = crate::control::battery_of(&p.mouse, sys, &batteries);
        }
        entries.push(DeviceEntry {
            path,
            info,
            kind: kind.into(),
            pawl_virtual: d.is_pawl_device(),
            grab,
            paths,
        });
    }
    Ok(entries)
}

/// macOS: the IOHIDManager device check. Nothing is grabbed on macOS (event taps);
/// devices the running worker handles are reported as taken by it.
#[cfg(target_os = "macos")]
fn gather(config: &Config) -> anyhow::Result<Vec<DeviceEntry>> {
    use pawl_macos::devices::Kind;

    let worker = running_worker();
    Ok(pawl_macos::device_report()
        .devices
        .into_iter()
        .map(|(d, kind)| {
            let info = d.info();
            let grab = match &worker {
                Some(m) if config.decide(&info).handle => Grab::Pawl { pid: m.pid },
                _ => Grab::Free,
            };
            DeviceEntry {
                path: d.transport.clone(),
                kind: match kind {
                    Kind::Continuous => "trackpad",
                    _ => "mouse",
                }
                .into(),
                info,
                pawl_virtual: false,
                grab,
                paths: None,
            }
        })
        .collect())
}

/// Which processes have each of `paths` open, from `/proc/*/fd` (only processes whose fds
/// this user may read: its own, or all for root).
#[cfg(target_os = "linux")]
pub fn open_by(paths: &[String]) -> std::collections::BTreeMap<String, Vec<Holder>> {
    let mut found: std::collections::BTreeMap<String, Vec<Holder>> = Default::default();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return found;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let mut mine = Vec::new();
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path())
                && let Some(t) = target.to_str()
                && paths.iter().any(|p| p == t)
                && !mine.iter().any(|m: &String| m == t)
            {
                mine.push(t.to_owned());
            }
        }
        if mine.is_empty() {
            continue;
        }
        let command = std::fs::read_to_string(p.path().join("comm"))
            .map(|c| c.trim_end().to_owned())
            .unwrap_or_default();
        for t in mine {
            found.entry(t).or_default().push(Holder {
                pid,
                command: command.clone(),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use pawl_engine::{Bus, Platform};

    use super::*;

    fn entry(
        path: &str,
        name: &str,
        bus: Bus,
        vendor: u16,
        product: u16,
        grab: Grab,
    ) -> DeviceEntry {
        DeviceEntry {
            path: path.into(),
            info: DeviceInfo {
                name: name.into(),
                bus,
                vendor,
                product,
                has_wheel: true,
                is_touchpad: false,
            },
            kind: "mouse".into(),
            pawl_virtual: false,
            grab,
            paths: None,
        }
    }

    fn touchpad() -> DeviceEntry {
        let mut e = entry(
            "/dev/input/event6",
            "SynPS/2 Synaptics TouchPad",
            Bus::I8042,
            0x0002,
            0x0007,
            Grab::NotProbed {
                open_by: vec![Holder {
                    pid: 900,
                    command: "gnome-shell".into(),
                }],
            },
        );
        e.info.is_touchpad = true;
        e.info.has_wheel = false;
        e.kind = "touchpad".into();
        e
    }

    fn config() -> Config {
        Config::default_for(Platform::Linux)
    }

    #[test]
    fn an_mx_master_grabbed_by_pawl_with_its_clone_and_a_touchpad() {
        let mx = entry(
            "/dev/input/event5",
            "Logitech MX Master 3S",
            Bus::BLUETOOTH,
            0x046d,
            0xb034,
            Grab::Pawl { pid: 1234 },
        );
        let mut clone = entry(
            "/dev/input/event9",
            "Logitech MX Master 3S",
            Bus::BLUETOOTH,
            0x046d,
            0xb034,
            Grab::Free,
        );
        clone.pawl_virtual = true;
        let entries = vec![mx, touchpad(), clone];
        expect![[r#"
            /dev/input/event5  "Logitech MX Master 3S"
                bluetooth 046d:b034, mouse, MX Master family: MX Master 3S
                config: handled (mx-master family): buttons, gestures, scroll transformed
                grab:   grabbed by pawl (pid 1234)
            /dev/input/event6  "SynPS/2 Synaptics TouchPad"
                i8042 0002:0007, touchpad
                config: left alone (touchpad)
                grab:   not checked; open by gnome-shell (900)
            /dev/input/event9  "Logitech MX Master 3S"  (pawl's virtual device: its output)
            MX Master connected: Logitech MX Master 3S (/dev/input/event5)
        "#]]
        .assert_eq(&render_text(&config(), &entries));
        assert_eq!(exit_code(&config(), &entries), EXIT_MX_PRESENT);
    }

    #[test]
    fn devices_shows_the_paths_the_worker_reports_or_those_pawl_would_use() {
        let mut mx = entry(
            "/dev/input/event3",
            "Logitech MX Master 3S",
            Bus::BLUETOOTH,
            0x046d,
            0xb034,
            Grab::Pawl { pid: 1234 },
        );
        mx.paths = Some(MousePaths {
            source: PathsSource::Worker { pid: 1234 },
            mouse: crate::control::tests::mx_mouse(),
        });
        let mut off = crate::control::tests::mx_mouse();
        off.hidraw = None;
        off.nodes[0].clone = None;
        off.paths.truncate(1);
        off.paths[0] = crate::lifecycle::PathRecord {
            part: "gesture button".into(),
            path: "grab".into(),
            reason: "hidpp-off".into(),
            text: "grab + virtual device (HID++ off in config ([hidpp] enabled = false))".into(),
        };
        let mut predicted = mx.clone();
        predicted.grab = Grab::Free;
        predicted.paths = Some(MousePaths {
            source: PathsSource::Predicted,
            mouse: off,
        });
        expect![[r#"
            /dev/input/event3  "Logitech MX Master 3S"
                bluetooth 046d:b034, mouse, MX Master family: MX Master 3S
                config: handled (mx-master family): buttons, gestures, scroll transformed
                grab:   grabbed by pawl (pid 1234)
                paths (pawl, pid 1234): /dev/input/event3 (grabbed, clone /dev/input/event9), HID++ /dev/hidraw2
                  gesture button: HID++ divert of CID 0x00C3 (hidraw2), raw XY while held
                  thumb wheel:    HID++ divert of 0x2150 (hidraw2) into the virtual device of event3
                  buttons:        grab + virtual device
                  wheel:          grab + virtual device, transformed
                  settings:       dpi 1600, thumb_wheel_invert false
            MX Master connected: Logitech MX Master 3S (/dev/input/event3)
        "#]]
        .assert_eq(&render_text(&config(), &[mx.clone()]));
        expect![[r#"
            /dev/input/event3  "Logitech MX Master 3S"
                bluetooth 046d:b034, mouse, MX Master family: MX Master 3S
                config: handled (mx-master family): buttons, gestures, scroll transformed
                grab:   not grabbed
                paths (if pawl ran now): /dev/input/event3 (grabbed)
                  gesture button: grab + virtual device (HID++ off in config ([hidpp] enabled = false))
                  settings:       dpi 1600, thumb_wheel_invert false
            MX Master connected: Logitech MX Master 3S (/dev/input/event3)
        "#]]
        .assert_eq(&render_text(&config(), &[predicted]));
        let v = render_json(&config(), &[mx]);
        expect![[r#"
            {
              "mouse": {
                "battery": null,
                "hidraw": "/dev/hidraw2",
                "name": "Logitech MX Master 3S",
                "nodes": [
                  {
                    "clone": "/dev/input/event9",
                    "path": "/dev/input/event3",
                    "state": "grabbed"
                  }
                ],
                "paths": [
                  {
                    "part": "gesture button",
                    "path": "hidpp",
                    "reason": "gesture-diverted",
                    "text": "HID++ divert of CID 0x00C3 (hidraw2), raw XY while held"
                  },
                  {
                    "part": "thumb wheel",
                    "path": "hidpp",
                    "reason": "thumb-wheel-diverted",
                    "text": "HID++ divert of 0x2150 (hidraw2) into the virtual device of event3"
                  },
                  {
                    "part": "buttons",
                    "path": "grab",
                    "reason": "grabbed",
                    "text": "grab + virtual device"
                  },
                  {
                    "part": "wheel",
                    "path": "grab",
                    "reason": "scroll-transformed",
                    "text": "grab + virtual device, transformed"
                  }
                ],
                "product": "b034",
                "settings": {
                  "dpi": 1600,
                  "smartshift": null,
                  "thumb_wheel_invert": false
                },
                "vendor": "046d"
              },
              "pid": 1234,
              "source": "worker"
            }"#]]
        .assert_eq(&serde_json::to_string_pretty(&v["devices"][0]["paths"]).unwrap());
    }

    #[test]
    fn devices_prints_names_with_control_characters_escaped() {
        let evil = entry(
            "/dev/input/event5",
            "MX Master 3S\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}",
            Bus::BLUETOOTH,
            0x046d,
            0xb034,
            Grab::Other {
                holders: vec![Holder {
                    pid: 77,
                    command: "x\u{1b}[31m".into(),
                }],
            },
        );
        let text = render_text(&config(), &[evil]);
        for c in ['\u{1b}', '\u{7}', '\u{202e}'] {
            assert!(!text.contains(c), "{c:?} reaches the terminal: {text:?}");
        }
        assert!(
            text.contains("MX Master connected: MX Master 3S\\u{1b}]0;pwned"),
            "{text}"
        );
    }

    #[test]
    fn no_mx_master_exits_1_and_a_receiver_gets_a_hint() {
        let bolt = entry(
            "/dev/input/event7",
            "Logitech USB Receiver",
            Bus::USB,
            0x046d,
            0xc548,
            Grab::Other {
                holders: vec![Holder {
                    pid: 77,
                    command: "input-remapper".into(),
                }],
            },
        );
        let entries = vec![bolt.clone(), touchpad()];
        expect![[r#"
            /dev/input/event7  "Logitech USB Receiver"
                usb 046d:c548, mouse, Bolt receiver: may hold an MX Master
                config: left alone (not in scope)
                grab:   grabbed by another process: one of input-remapper (77); pawl cannot grab it while it does
            /dev/input/event6  "SynPS/2 Synaptics TouchPad"
                i8042 0002:0007, touchpad
                config: left alone (touchpad)
                grab:   not checked; open by gnome-shell (900)
            no MX Master connected; /dev/input/event7 is a receiver: if an MX Master is paired to it, add a [[device]] rule matching it with mx_master = true
        "#]]
        .assert_eq(&render_text(&config(), &entries));
        assert_eq!(exit_code(&config(), &entries), EXIT_NO_MX);
        assert_eq!(exit_code(&config(), &[]), EXIT_NO_MX);

        // A config rule marking the receiver makes it count.
        let marked = Config::parse(
            "[[device]]\nid = \"046d:c548\"\nmx_master = true\n",
            "c.toml",
            Platform::Linux,
        )
        .unwrap();
        assert_eq!(exit_code(&marked, &[bolt]), EXIT_MX_PRESENT);
    }

    #[test]
    fn a_clone_alone_is_not_an_mx_master() {
        let mut clone = entry(
            "/dev/input/event9",
            "Logitech MX Master 3S",
            Bus::BLUETOOTH,
            0x046d,
            0xb034,
            Grab::Free,
        );
        clone.pawl_virtual = true;
        assert_eq!(exit_code(&config(), &[clone]), EXIT_NO_MX);
    }

    #[test]
    fn json_report_shape() {
        let mx = entry(
            "/dev/input/event5",
            "Logitech MX Master 3S",
            Bus::BLUETOOTH,
            0x046d,
            0xb034,
            Grab::Pawl { pid: 1234 },
        );
        let v = render_json(&config(), &[mx, touchpad()]);
        expect![[r#"
            {
              "devices": [
                {
                  "bus": "bluetooth",
                  "family": "MX Master 3S",
                  "grab": {
                    "pid": 1234,
                    "state": "pawl"
                  },
                  "handled": true,
                  "kind": "mouse",
                  "mx_master": true,
                  "name": "Logitech MX Master 3S",
                  "path": "/dev/input/event5",
                  "paths": null,
                  "pawl_virtual": false,
                  "product": "b034",
                  "reason": "mx-master family",
                  "transform_scroll": true,
                  "vendor": "046d"
                },
                {
                  "bus": "i8042",
                  "family": null,
                  "grab": {
                    "holders": [
                      {
                        "command": "gnome-shell",
                        "pid": 900
                      }
                    ],
                    "state": "not-probed"
                  },
                  "handled": false,
                  "kind": "touchpad",
                  "mx_master": false,
                  "name": "SynPS/2 Synaptics TouchPad",
                  "path": "/dev/input/event6",
                  "paths": null,
                  "pawl_virtual": false,
                  "product": "0007",
                  "reason": "touchpad",
                  "transform_scroll": false,
                  "vendor": "0002"
                }
              ],
              "mx_master_present": true
            }"#]]
        .assert_eq(&serde_json::to_string_pretty(&v).unwrap());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn open_by_finds_this_process_holding_a_file() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let path = tmp.path().to_str().unwrap().to_owned();
        let found = open_by(std::slice::from_ref(&path));
        let holders = &found[&path];
        assert!(
            holders.iter().any(|h| h.pid == std::process::id()),
            "{holders:?}"
        );
    }
}
