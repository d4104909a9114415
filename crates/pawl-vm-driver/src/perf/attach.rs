//! pawl's HID-BPF program attached without pawl: the root-owned loader run by hand (as
//! udev runs it at bind) on a mouse's HID device, named by its evdev node. The kernel-cost
//! measurement and the `pawl-kernel` program of the comparison both attach this way.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, ensure};

use crate::evdev::NodeInfo;

/// The loader, where the package (and the VM's initramfs) installs it.
pub const LOADER: &str = "/usr/libexec/pawl/pawl-kernel-attach";

/// Runs `loader args`; fails with its output unless it exits 0.
pub fn loader(args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(LOADER)
        .args(args)
        .output()
        .with_context(|| format!("run {LOADER}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = text.trim().replace('\n', " | ");
    ensure!(
        out.status.success(),
        "{LOADER} {}: {}: {text}",
        args.join(" "),
        out.status
    );
    Ok(text)
}

/// The HID device name (`0005:046D:B034.0007`) behind an evdev node.
pub fn hid_name(node: &NodeInfo) -> anyhow::Result<String> {
    let event = node.path.file_name().context("evdev path without a name")?;
    let link = Path::new("/sys/class/input")
        .join(event)
        .join("device/device");
    let dev =
        std::fs::canonicalize(&link).with_context(|| format!("resolve {}", link.display()))?;
    Ok(dev
        .file_name()
        .context("HID device path without a name")?
        .to_string_lossy()
        .into_owned())
}
