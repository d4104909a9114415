//! The macOS side of the command line: the platform backend behind `pawl run` (the
//! CGEventTap worker of `pawl-macos`) and the permission report of `pawl status`.

use pawl_macos::worker::Mode;

use crate::lifecycle::{FocusRecord, GrabbedDevice, Handled};

/// A started worker (taps created on this thread's run loop).
pub type Daemon = pawl_macos::Daemon;

/// Starts the worker on the calling thread (the main thread: distributed notifications
/// and the run loop live there). `debug`: one tap with the complete mask, every decision
/// logged.
///
/// Errors: no accessibility permission or a stale grant (with the permission report), a
/// chord macOS cannot post.
pub fn start(config: pawl_engine::Config, debug: bool) -> anyhow::Result<Daemon> {
    let mode = if debug { Mode::Debug } else { Mode::Run };
    Ok(pawl_macos::start(&config, mode)?)
}

/// The devices whose events the worker changes, and the focus backend, for the metadata.
/// macOS grabs nothing; `path` holds the transport (`USB`, `Bluetooth`, …). No mouse
/// records yet: HID++ sets the mice up once the run loop runs ([`run`] records them).
pub fn grabbed(daemon: &Daemon) -> Handled {
    let devices = daemon
        .devices()
        .iter()
        .map(|d| GrabbedDevice {
            path: d.transport.clone(),
            name: d.name.clone(),
            vendor: d.vendor,
            product: d.product,
        })
        .collect();
    Handled {
        devices,
        mice: Vec::new(),
        focus: Some(focus_record(&daemon.focus())),
    }
}

/// The focus part of `pawl status`, as the metadata records it.
fn focus_record(focus: &pawl_macos::focus::FocusSummary) -> FocusRecord {
    FocusRecord {
        backend: focus.backend.clone(),
        app: focus.app.clone(),
        profile: focus.profile.clone(),
    }
}

/// Blocks in the run loop until SIGTERM or SIGINT. The device list is taken once at start
/// (the taps follow devices as they come and go); `changed` receives it with the HID++
/// mice and their batteries and the focus each time those change.
pub fn run(daemon: Daemon, changed: &mut dyn FnMut(Handled)) -> anyhow::Result<()> {
    let devices = grabbed(&daemon).devices;
    daemon.run(&mut |mice, focus| {
        changed(Handled {
            devices: devices.clone(),
            mice: mice
                .iter()
                .map(|m| {
                    crate::lifecycle::hidpp_mouse(
                        &m.name,
                        m.vendor,
                        m.product,
                        &m.transport,
                        m.battery,
                    )
                })
                .collect(),
            focus: Some(focus_record(focus)),
        })
    })?;
    Ok(())
}

/// The permission report for `pawl status`, indented under its heading; probes an event
/// tap to tell the stale-grant case apart, and adds HID++'s Input Monitoring line (and
/// each MX Master HID++ endpoint connected now with whether it needs it).
pub fn permission_report() -> String {
    let mut report = pawl_macos::permissions(true).to_string();
    // HID++ (the MX Master's gesture button): Input Monitoring, and which endpoint needs it.
    report.push_str(&pawl_macos::hidpp_permission().to_string());
    // TCC answers for the app responsible for this process: run in a terminal, the
    // terminal app's grants, not those of the pawl binary a LaunchAgent runs.
    let mut s = String::from(
        "  permissions (of this process; run in a terminal, the terminal app's grants, not \
         the LaunchAgent's):\n",
    );
    for line in report.lines() {
        s.push_str("    ");
        s.push_str(line);
        s.push('\n');
    }
    s
}
