//! The macOS side of the command line: `pawl run` hands the validated config to the
//! CGEventTap worker of `pawl-macos`; `pawl status` and `pawl devices` add the permission
//! report and the IOHIDManager device check.

use pawl_engine::Config;
use pawl_macos::worker::Mode;

use crate::lifecycle::GrabbedDevice;

/// Runs the worker on the calling thread (the main thread: distributed notifications and
/// the run loop live there) until SIGTERM or SIGINT. `on_started` runs once the taps
/// exist, with the devices the worker handles (for the metadata).
///
/// Errors: no accessibility permission or a stale grant (with the permission report), a
/// chord macOS cannot post.
pub fn run(
    config: &Config,
    debug: bool,
    on_started: impl FnOnce(Vec<GrabbedDevice>) + 'static,
) -> anyhow::Result<()> {
    let handled = handled_devices(config);
    let mode = if debug { Mode::Debug } else { Mode::Run };
    pawl_macos::run(
        config,
        pawl_macos::RunOptions {
            mode,
            on_started: Some(Box::new(move || on_started(handled))),
        },
    )?;
    Ok(())
}

/// The connected devices `config` handles, as recorded in the metadata. macOS grabs
/// nothing: these are the devices whose events the taps change.
pub fn handled_devices(config: &Config) -> Vec<GrabbedDevice> {
    pawl_macos::device_report()
        .devices
        .iter()
        .filter(|(d, _)| config.decide(&d.info()).handle)
        .map(|(d, _)| GrabbedDevice {
            path: d.transport.clone(),
            name: d.name.clone(),
            vendor: d.vendor,
            product: d.product,
        })
        .collect()
}

/// The permission report for `pawl status`, indented under its heading; probes an event
/// tap to tell the stale-grant case apart.
pub fn permission_report() -> String {
    let report = pawl_macos::permissions(true).to_string();
    let mut s = String::from("  permissions:\n");
    for line in report.lines() {
        s.push_str("    ");
        s.push_str(line);
        s.push('\n');
    }
    s
}
