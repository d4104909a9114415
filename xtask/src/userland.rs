//! The VM's Debian userland: a root file system made with `debootstrap` (bookworm, minbase)
//! plus udev, libinput's tools, sway, kmod, seatd and — for the systemd boot — systemd,
//! dbus, libpam-systemd (logind sessions) and acl, Xvfb, openbox, xterm and wmctrl (the X11
//! focus scenario), GNOME Shell and KWin (the GNOME and KDE focus scenarios), cached under
//! `target/vm-userland/root-<key>/` (the key is a hash of [`recipe`], so a changed package
//! list builds a new root) and booted as the guest's root over virtio 9p, read-only.
//!
//! Building needs root (debootstrap, chroot); `sudo` is used when xtask is not root. The
//! steps, measured on the shared dev machine (2026-12-07): debootstrap 46 s, the packages
//! 164 s (598 packages; 172 and 35 s before GNOME Shell and KWin), clean-up; about 1.1 GB
//! on disk.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, ensure};

use crate::kernels::debian_mirror;
use crate::util;

/// The Debian release of the root file system (the one CI runs on).
const SUITE: &str = "bookworm";

/// Installed into the root with `--no-install-recommends`: systemd-udevd with its rules and
/// hwdb, `libinput` (debug-events, quirks), the compositor, `modprobe`, the seat daemon;
/// for the systemd boot (`--set systemd`): systemd as PID 1 with its units (udevd's
/// sandbox, logind), the system bus logind needs, `pam_systemd` (a login on a VT becomes a
/// logind session on seat0) and `getfacl` (the uaccess ACLs). The userland boot's shell
/// init starts none of the latter. For the X11 focus scenario: the virtual X server, its
/// core fonts (it refuses to start without "fixed"), an EWMH window manager that sets
/// `_NET_ACTIVE_WINDOW`, X clients whose `WM_CLASS` is set with `-class`, and `wmctrl` to
/// activate a window the EWMH way. For the GNOME and KDE focus scenarios: GNOME Shell (run
/// `--headless`) and KWin (run `--virtual`), with Mesa's software renderer (llvmpipe) for
/// both, as the VM has no GPU.
const PACKAGES: &[&str] = &[
    "udev",
    "libinput-tools",
    "sway",
    "kmod",
    "seatd",
    "systemd",
    "dbus",
    "libpam-systemd",
    "acl",
    "xvfb",
    "xfonts-base",
    "openbox",
    "xterm",
    "wmctrl",
    "gnome-shell",
    "kwin-wayland",
    "libgl1-mesa-dri",
];

/// The plain users: the first is the one sway runs as (sway refuses to run as root), known
/// to `pawl-vm-driver` as `scenarios::userland::USER`; the second takes seat0 over in the
/// systemd boot's seat switch (`scenarios::systemd::seat::SECOND_USER`).
const USERS: &[(&str, u32)] = &[("pawl", 1000), ("pawl2", 1001)];

/// Empty root-owned (0755) directories made in the root: mount points the systemd boot's
/// initramfs puts a tmpfs on (the root is read-only), e.g. `/usr/libexec/pawl`, where the
/// kernel-mode loader goes as the package installs it.
pub(crate) const MOUNT_POINTS: &[&str] = &["usr/libexec/pawl"];

/// Mount point of the per-run share (binaries, recordings, `/init` of the userland) inside
/// the root; created when the root is built.
pub(crate) const SHARE_MOUNT: &str = "pawl-vm";

/// Removed after the install to keep the root small (documentation, manuals, translations,
/// apt's indexes and downloaded packages).
const PRUNE: &[&str] = &[
    "var/lib/apt/lists",
    "var/cache/apt",
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
];

/// Everything that decides the root's content; its hash names the cache directory.
fn recipe() -> String {
    format!(
        "suite={SUITE} variant=minbase packages={} users={} share=/{SHARE_MOUNT} mounts={} prune={} v=2",
        PACKAGES.join(","),
        USERS
            .iter()
            .map(|(n, u)| format!("{n}:{u}"))
            .collect::<Vec<_>>()
            .join(","),
        MOUNT_POINTS.join(","),
        PRUNE.join(",")
    )
}

/// FNV-1a, 64 bits: a hash that stays the same across Rust releases (std's does not promise
/// that).
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The root file system directory, built when missing. Errors name the failing step; a
/// half-built root is never used (it is built under another name and renamed at the end).
pub(crate) fn ensure_root(target: &Path) -> anyhow::Result<PathBuf> {
    let base = target.join("vm-userland");
    let root = base.join(format!("root-{:016x}", fnv1a(&recipe())));
    if root.join(SHARE_MOUNT).is_dir() {
        return Ok(root);
    }
    std::fs::create_dir_all(&base)?;
    util::ensure_debian_packages(&["debootstrap"])?;
    let tmp = base.join("building");
    if tmp.exists() {
        unmount_proc(&tmp);
        util::run(util::privileged("rm").arg("-rf").arg(&tmp))?;
    }
    let mirror = debian_mirror();
    let t = Instant::now();
    util::run(
        util::privileged("debootstrap")
            .args(["--variant=minbase", SUITE])
            .arg(&tmp)
            .arg(&mirror),
    )
    .context("debootstrap")?;
    eprintln!("debootstrap {SUITE}: {:.1} s", t.elapsed().as_secs_f64());

    let t = Instant::now();
    // No service may start inside the chroot while packages are configured.
    let policy = tmp.join("usr/sbin/policy-rc.d");
    util::run(
        util::privileged("sh")
            .arg("-c")
            .arg("printf '#!/bin/sh\\nexit 101\\n' > \"$1\" && chmod 755 \"$1\"")
            .arg("sh")
            .arg(&policy),
    )?;
    util::run(
        util::privileged("mount")
            .args(["-t", "proc", "proc"])
            .arg(tmp.join("proc")),
    )?;
    let installed = util::run(
        util::privileged("chroot")
            .arg(&tmp)
            .args(["apt-get", "install", "-y", "-qq", "--no-install-recommends"])
            .args(PACKAGES)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .env("LC_ALL", "C"),
    );
    unmount_proc(&tmp);
    installed.context("apt-get install in the root")?;
    eprintln!(
        "{} in the root: {:.1} s",
        PACKAGES.join(" "),
        t.elapsed().as_secs_f64()
    );
    for (name, uid) in USERS {
        util::run(util::privileged("chroot").arg(&tmp).args([
            "useradd",
            "-m",
            "-s",
            "/bin/sh",
            "-u",
            &uid.to_string(),
            "-U",
            name,
        ]))?;
    }
    util::run(
        util::privileged("chroot")
            .arg(&tmp)
            .args(["apt-get", "clean"]),
    )?;
    for p in PRUNE {
        util::run(util::privileged("rm").arg("-rf").arg(tmp.join(p)))?;
    }
    util::run(util::privileged("rm").arg("-f").arg(&policy))?;
    util::run(util::privileged("mkdir").arg(tmp.join(SHARE_MOUNT)))?;
    for m in MOUNT_POINTS {
        util::run(
            util::privileged("mkdir")
                .args(["-p", "-m", "755"])
                .arg(tmp.join(m)),
        )?;
    }
    ensure!(
        tmp.join("usr/bin/sway").is_file()
            && tmp.join("usr/bin/libinput").is_file()
            && tmp.join("lib/systemd/systemd").is_file()
            && tmp.join("lib/systemd/systemd-logind").is_file(),
        "the root at {} lacks sway, libinput, systemd or logind after the install",
        tmp.display()
    );
    util::run(util::privileged("mv").arg(&tmp).arg(&root))?;
    let size = Command::new("du")
        .args(["-sm"])
        .arg(&root)
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .next()
                .unwrap_or("?")
                .to_owned()
        })
        .unwrap_or_else(|| "?".into());
    eprintln!("root file system {} ({size} MB)", root.display());
    Ok(root)
}

fn unmount_proc(root: &Path) {
    let proc = root.join("proc");
    let mounted = std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == proc.to_str());
    if mounted {
        let _ = util::run(util::privileged("umount").arg(&proc));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_key_follows_the_package_list() {
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(fnv1a(&recipe()), fnv1a(&recipe().replace("sway", "weston")));
    }
}
