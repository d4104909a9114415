//! `cargo xtask dist deb --test`: the package in a Debian bookworm chroot.
//!
//! The chroot is made once with `debootstrap --variant=minbase` from the Debian mirror this
//! machine uses (`/etc/apt/sources.list.d/debian.sources`) and cached in
//! `target/dist-deb/bookworm-minbase`; every run works on a fresh copy of it. As root in
//! the copy, it runs the README's install commands ([`readme_commands`]), so the README
//! says what is tested: `apt install` of the .deb, `pawl --version` (the version and
//! commit of this checkout), the default config written and checked, `pawl service
//! install` (its unit must be the packaged one with a different comment), `apt purge`.
//! Then it checks every file of the package was installed with its mode, and that after
//! the purge the file tree equals the one before the install (apt's and dpkg's own logs
//! and caches aside). No udev runs in a chroot, so the maintainer scripts' udev branch is
//! skipped on install; then, with `/run/udev` made and a `udevadm` that records its
//! calls, the test checks which calls postinst and postrm make. The same for systemd:
//! install must enable `run-pawl-bpf.mount` and `pawl-kernel-reseat.path` (their
//! `local-fs.target.wants` and `paths.target.wants` links) without calling systemctl;
//! with `/run/systemd/system` made and a recording `systemctl`, postinst must reload and
//! start them, prerm stop them; the purge must leave no link. `/proc` (pawl finds its own
//! executable there) and `/dev/pts` (apt's log) are mounted for the test and unmounted
//! after it, whatever happened.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};

use crate::util;

/// The suite debootstrap installs.
const SUITE: &str = "bookworm";
/// Written into the cached chroot when debootstrap has finished.
const STAMP: &str = ".pawl-debootstrap-complete";
/// Where apt finds the package in the chroot: the README's path, relative to /root.
const DEB_DIR: &str = "target/debian";

/// The README's install commands for the .deb, in the order this test runs them (each in
/// `/root` of the chroot, as root, with `sudo ` dropped). `deb` is the package's file name.
/// A test of README.md checks that its Install section has each of them, and marks every
/// other command there as not run here.
pub fn readme_commands(deb: &str) -> Vec<String> {
    [
        format!("sudo apt install ./{DEB_DIR}/{deb}"),
        "pawl --version".into(),
        "mkdir -p ~/.config/pawl && pawl config default > ~/.config/pawl/config.toml".into(),
        "pawl config check".into(),
        "pawl service install".into(),
        "pawl service uninstall".into(),
        "sudo apt purge pawl".into(),
    ]
    .into()
}

/// The README's install commands run on the build machine, not in the chroot: the build
/// of the package (what this test tests) and `cargo install` (run with `--root` in
/// `target/dist-deb/cargo-root`; after `cargo deb` built the same release binary it only
/// copies it).
pub const HOST_COMMANDS: &[&str] = &[
    "cargo xtask dist deb",
    "cargo install --locked --path crates/pawl",
];

/// The package's file name for this version on amd64, as the README names it.
pub fn deb_file_name() -> String {
    format!(
        "pawl_{}-{}_amd64.deb",
        env!("CARGO_PKG_VERSION"),
        super::DEB_REVISION
    )
}

/// Runs the test for `deb` (built from the checkout at `root`).
pub fn test(root: &Path, deb: &Path) -> anyhow::Result<()> {
    util::ensure_debian_packages(&["debootstrap"])?;
    let work = crate::vm::target_dir(root).join("dist-deb");
    let base = work.join(format!("{SUITE}-minbase"));
    if !base.join(STAMP).exists() {
        util::step("debootstrap", || debootstrap(&base))?;
    }
    let run = work.join("chroot");
    remove(&run)?;
    util::run(util::as_root("cp").arg("-a").arg(&base).arg(&run))?;
    let res = cargo_install(root, &work)
        .and_then(|()| Mounts::new(&run).and_then(|_mounts| test_in(root, deb, &run)));
    // Keep a failed chroot for a look; a passed one is 300 MB of nothing.
    if res.is_ok() {
        remove(&run)?;
    } else {
        eprintln!("the chroot is kept in {}", run.display());
    }
    res
}

/// The chroot's /proc and /dev/pts, unmounted on drop.
struct Mounts {
    mounted: Vec<PathBuf>,
}

impl Mounts {
    fn new(run: &Path) -> anyhow::Result<Mounts> {
        let mut m = Mounts {
            mounted: Vec::new(),
        };
        for (fs, dir, opts) in [
            ("proc", "proc", "nosuid,nodev,noexec"),
            (
                "devpts",
                "dev/pts",
                "newinstance,ptmxmode=0666,nosuid,noexec",
            ),
        ] {
            let at = run.join(dir);
            util::run(
                util::as_root("mount")
                    .args(["-t", fs, "-o", opts, fs])
                    .arg(&at),
            )?;
            m.mounted.push(at);
        }
        Ok(m)
    }
}

impl Drop for Mounts {
    fn drop(&mut self) {
        for at in self.mounted.iter().rev() {
            if let Err(e) = util::run(util::as_root("umount").arg(at)) {
                eprintln!("cannot unmount {}: {e:#}", at.display());
            }
        }
    }
}

fn test_in(root: &Path, deb: &Path, run: &Path) -> anyhow::Result<()> {
    let name = deb
        .file_name()
        .and_then(|n| n.to_str())
        .context("package file name")?;
    ensure!(
        name == deb_file_name() || !name.ends_with("_amd64.deb"),
        "{name}: the README names {}",
        deb_file_name()
    );
    let commands = readme_commands(name);
    // apt asks before installing more than what was named; a test answers yes.
    write_root(
        &run.join("etc/apt/apt.conf.d/90pawl-test"),
        "APT::Get::Assume-Yes \"true\";\n",
    )?;
    // A udevadm that records its arguments: the maintainer scripts call it only where
    // udev runs (`/run/udev`), which this test switches on and off. In /usr/bin, where
    // udev's is, because apt runs dpkg with its own PATH (`DPkg::Path`, no /usr/local).
    let udevadm = run.join("usr/bin/udevadm");
    ensure!(
        !udevadm.exists(),
        "minbase has no udev, yet {} exists",
        udevadm.display()
    );
    write_root(&udevadm, "#!/bin/sh\necho \"$*\" >> /tmp/udevadm.log\n")?;
    util::run(util::as_root("chmod").arg("755").arg(&udevadm))?;
    // No systemd either: deb-systemd-helper makes the enablement links itself, as on a
    // machine without systemd (with a systemctl it has `systemctl preset` make them).
    let systemctl = run.join("usr/bin/systemctl");
    ensure!(
        !systemctl.exists() && !run.join("run/systemd").exists(),
        "minbase has no systemd, yet {} or /run/systemd exists",
        systemctl.display()
    );
    // The package's dependencies (libelf1 for the kernel-mode loader, beyond minbase) are
    // installed before the snapshot: purging pawl leaves them, as apt leaves every
    // dependency until `autoremove`; what is compared is the package's own footprint.
    let fields = Command::new("dpkg-deb")
        .arg("-f")
        .arg(deb)
        .arg("Depends")
        .output()
        .context("dpkg-deb -f")?;
    ensure!(
        fields.status.success(),
        "dpkg-deb -f {} Depends: {}",
        deb.display(),
        String::from_utf8_lossy(&fields.stderr)
    );
    let names = dependency_names(&String::from_utf8_lossy(&fields.stdout));
    if !names.is_empty() {
        sh(
            run,
            &format!(
                "apt-get install -y --no-install-recommends {}",
                names.join(" ")
            ),
        )?;
    }
    let before = snapshot(run)?;
    let inside = run.join("root").join(DEB_DIR);
    util::run(util::as_root("mkdir").arg("-p").arg(&inside))?;
    util::run(util::as_root("cp").arg(deb).arg(inside.join(name)))?;

    let [
        install,
        version,
        write_config,
        check_config,
        service_install,
        service_uninstall,
        purge,
    ] = commands.as_slice()
    else {
        bail!("readme_commands changed without this test");
    };
    sh(run, install)?;
    check_installed(deb, run)?;
    ensure!(
        udevadm_calls(run)?.is_empty(),
        "postinst ran udevadm without udev running"
    );
    check_units_enabled(run, true)?;
    util::run(util::as_root("mkdir").arg(run.join("run/udev")))?;
    fake_systemd(run, true)?;
    // As dpkg runs it (deb-systemd-helper refuses to run otherwise).
    sh(
        run,
        "DPKG_MAINTSCRIPT_PACKAGE=pawl /var/lib/dpkg/info/pawl.postinst configure 0.1.0-1",
    )?;
    // Already enabled: nothing changes (no reload by deb-systemd-helper); systemd loads
    // the units and the path unit starts.
    ensure!(
        systemctl_actions(run)?
            == [
                "--system daemon-reload",
                "--quiet --system start run-pawl-bpf.mount pawl-kernel-reseat.path"
            ],
        "postinst with systemd running: systemctl {:?}",
        calls(run, "systemctl")?
    );
    // `pawl service install` below must find no systemctl.
    fake_systemd(run, false)?;
    ensure!(
        udevadm_calls(run)?
            == [
                "control --reload-rules",
                "trigger --action=change --subsystem-match=input --subsystem-match=hidraw",
                "trigger --action=change --subsystem-match=misc --sysname-match=uinput",
                "trigger --action=bind --subsystem-match=hid \
                 --property-match=DRIVER=logitech-hidpp-device",
            ],
        "postinst with udev running: udevadm {:?}",
        udevadm_calls(run)?
    );
    util::run(util::as_root("rm").arg(run.join("tmp/udevadm.log")))?;

    let printed = sh(run, version)?;
    let want = format!("pawl {}\n", expected_version(root));
    ensure!(
        printed == want,
        "`pawl --version` printed {printed:?}, expected {want:?}"
    );

    sh(run, write_config)?;
    let checked = sh(run, check_config)?;
    ensure!(
        checked == "/root/.config/pawl/config.toml: ok\n",
        "`pawl config check` printed {checked:?}"
    );

    // No systemd in the chroot: the unit is written, nothing loads it.
    let said = sh(run, service_install)?;
    ensure!(
        said.contains("systemctl is not available here"),
        "`pawl service install` printed {said:?}"
    );
    let written = std::fs::read_to_string(run.join("root/.config/systemd/user/pawl.service"))?;
    let packaged = std::fs::read_to_string(run.join("usr/lib/systemd/user/pawl.service"))?;
    ensure!(
        without_comments(&written) == without_comments(&packaged),
        "the unit `pawl service install` writes for /usr/bin/pawl differs from the packaged \
         one:\n{written}\n---\n{packaged}"
    );
    sh(run, service_uninstall)?;
    // The user's own files (config, the emptied systemd directory) are not the package's.
    util::run(util::as_root("rm").arg("-rf").arg(run.join("root/.config")))?;
    util::run(util::as_root("rm").arg("-rf").arg(run.join("root/target")))?;

    fake_systemd(run, true)?;
    sh(run, purge)?;
    // remove and purge each reload the rules (the rule is gone); nothing else.
    ensure!(
        udevadm_calls(run)? == ["control --reload-rules", "control --reload-rules"],
        "postrm with udev running: udevadm {:?}",
        udevadm_calls(run)?
    );
    // prerm stops the reseat units first and the bpffs mount after the loader's
    // --detach; postrm has systemd forget them (deb-systemd-helper reloads too, after
    // masking and purging); nothing starts anything.
    let actions = systemctl_actions(run)?;
    ensure!(
        actions.first().map(String::as_str)
            == Some("stop pawl-kernel-reseat.path pawl-kernel-reseat.service")
            && actions.get(1).map(String::as_str) == Some("stop run-pawl-bpf.mount")
            && actions.iter().any(|a| a == "--system daemon-reload")
            && !actions.iter().any(|a| a.contains("start ")),
        "prerm and postrm with systemd running: systemctl {actions:?}"
    );
    check_units_enabled(run, false)?;
    util::run(util::as_root("rm").arg("-r").arg(run.join("run/udev")))?;
    util::run(util::as_root("rm").arg(run.join("tmp/udevadm.log")))?;
    fake_systemd(run, false)?;
    let after = snapshot(run)?;
    compare(&before, &after)
}

/// The package names in a `Depends:` field (`libc6 (>= 2.34), libelf1 (>= 0.144)`): each
/// entry's first alternative, without its version.
fn dependency_names(depends: &str) -> Vec<String> {
    depends
        .split(',')
        .filter_map(|entry| {
            let first = entry.split('|').next()?.trim();
            let name = first.split([' ', '(']).next()?.trim();
            (!name.is_empty()).then(|| name.to_owned())
        })
        .collect()
}

/// The README's `cargo install`, into `work/cargo-root`: the binary it installs prints this
/// checkout's version.
fn cargo_install(root: &Path, work: &Path) -> anyhow::Result<()> {
    let prefix = work.join("cargo-root");
    let line = HOST_COMMANDS[1];
    eprintln!("$ {line} --root {}", prefix.display());
    let mut words = line.split(' ');
    ensure!(words.next() == Some("cargo"), "{line}");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    util::run(
        Command::new(cargo)
            .current_dir(root)
            .args(words)
            .arg("--root")
            .arg(&prefix),
    )?;
    let out = Command::new(prefix.join("bin/pawl"))
        .arg("--version")
        .output()?;
    let printed = String::from_utf8_lossy(&out.stdout);
    let want = format!("pawl {}\n", expected_version(root));
    ensure!(
        printed == want,
        "the installed pawl --version printed {printed:?}, expected {want:?}"
    );
    Ok(())
}

/// The argument lists the fake udevadm was called with, oldest first.
fn udevadm_calls(run: &Path) -> anyhow::Result<Vec<String>> {
    calls(run, "udevadm")
}

/// The argument lists the fake `tool` (udevadm, systemctl) was called with, oldest first.
fn calls(run: &Path, tool: &str) -> anyhow::Result<Vec<String>> {
    match std::fs::read_to_string(run.join(format!("tmp/{tool}.log"))) {
        Ok(log) => Ok(log.lines().map(String::from).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// Makes systemd look running in the chroot (`on`): `/run/systemd/system` and a
/// `/usr/bin/systemctl` that records its calls in `/tmp/systemctl.log` (deb-systemd-invoke
/// starts a unit only if `is-enabled` says so: it answers `enabled`); or removes all three
/// again. Made only after the snapshot of the tree before the install, and removed before
/// the one after the purge.
fn fake_systemd(run: &Path, on: bool) -> anyhow::Result<()> {
    let systemctl = run.join("usr/bin/systemctl");
    if on {
        write_root(
            &systemctl,
            "#!/bin/sh\necho \"$*\" >> /tmp/systemctl.log\n\
             case \"$*\" in *is-enabled*) echo enabled ;; esac\n",
        )?;
        util::run(util::as_root("chmod").arg("755").arg(&systemctl))?;
        util::run(
            util::as_root("mkdir")
                .arg("-p")
                .arg(run.join("run/systemd/system")),
        )
    } else {
        util::run(
            util::as_root("rm")
                .arg("-rf")
                .arg(&systemctl)
                .arg(run.join("run/systemd"))
                .arg(run.join("tmp/systemctl.log")),
        )
    }
}

/// The fake systemctl's calls that act (deb-systemd-invoke's `is-enabled` and
/// `is-active` queries left out).
fn systemctl_actions(run: &Path) -> anyhow::Result<Vec<String>> {
    Ok(calls(run, "systemctl")?
        .into_iter()
        .filter(|c| !c.contains("is-enabled") && !c.contains("is-active"))
        .collect())
}

/// The package's enabled system units and the targets that want them (their
/// `WantedBy=`).
const ENABLED_UNITS: [(&str, &str); 2] = [
    ("run-pawl-bpf.mount", "local-fs.target"),
    ("pawl-kernel-reseat.path", "paths.target"),
];

/// Each of [`ENABLED_UNITS`]' enablement, the link `deb-systemd-helper enable` makes for
/// its `WantedBy=`: present and pointing at the packaged unit (`enabled`), or absent (after
/// the purge).
fn check_units_enabled(run: &Path, enabled: bool) -> anyhow::Result<()> {
    for (unit, target) in ENABLED_UNITS {
        let link = run
            .join("etc/systemd/system")
            .join(format!("{target}.wants"))
            .join(unit);
        match std::fs::read_link(&link) {
            Ok(to) => {
                ensure!(enabled, "{} is left after the purge", link.display());
                // deb-systemd-helper links to the unit where it found it: /lib/systemd/system
                // is /usr/lib/systemd/system on merged /usr (bookworm's only layout).
                let to = to.to_string_lossy().into_owned();
                ensure!(
                    [
                        format!("/lib/systemd/system/{unit}"),
                        format!("/usr/lib/systemd/system/{unit}")
                    ]
                    .contains(&to)
                        && run.join("usr/lib/systemd/system").join(unit).is_file(),
                    "{} points at {to}, not the packaged unit",
                    link.display()
                );
                eprintln!("{unit} is enabled: {} -> {to}", link.display());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ensure!(
                    !enabled,
                    "the package did not enable {unit}: no {}",
                    link.display()
                );
            }
            Err(e) => return Err(anyhow::Error::new(e).context(link.display().to_string())),
        }
    }
    Ok(())
}

/// `pawl X.Y.Z (commit)` without the `pawl `: what this checkout's build prints.
fn expected_version(root: &Path) -> String {
    let commit = std::env::var("PAWL_COMMIT").ok().or_else(|| {
        Command::new("git")
            .current_dir(root)
            .args(["rev-parse", "--short", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    });
    match commit {
        Some(c) => format!("{} ({c})", env!("CARGO_PKG_VERSION")),
        None => env!("CARGO_PKG_VERSION").to_owned(),
    }
}

fn without_comments(unit: &str) -> String {
    unit.lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `line` with `/bin/sh` in the chroot as root in /root (`sudo ` dropped), clean
/// environment; returns its stdout (stderr passes through).
fn sh(run: &Path, line: &str) -> anyhow::Result<String> {
    let line = line.replace("sudo ", "");
    eprintln!("chroot# {line}");
    let out = util::as_root("chroot")
        .arg(run)
        .args(["/usr/bin/env", "-i", "HOME=/root", "LANG=C.UTF-8"])
        .args(["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
        .args(["DEBIAN_FRONTEND=noninteractive", "/bin/sh", "-ec"])
        .arg(format!("cd /root && {line}"))
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("run chroot {}", run.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    eprint!("{stdout}");
    ensure!(
        out.status.success(),
        "`{line}` in the chroot exited with {}",
        out.status
    );
    Ok(stdout)
}

/// Every file and directory of the package is in the chroot, with the package's mode.
fn check_installed(deb: &Path, run: &Path) -> anyhow::Result<()> {
    let out = Command::new("dpkg-deb")
        .arg("--contents")
        .arg(deb)
        .output()?;
    ensure!(out.status.success(), "dpkg-deb --contents failed");
    let mut n = 0;
    for line in String::from_utf8(out.stdout)?.lines() {
        // drwxr-xr-x 0/0 0 2026-12-01 00:00 ./usr/bin/
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(perm), Some(path)) = (fields.first(), fields.last()) else {
            continue;
        };
        let rel = path.trim_start_matches("./").trim_end_matches('/');
        if rel.is_empty() {
            continue;
        }
        let meta = std::fs::symlink_metadata(run.join(rel))
            .with_context(|| format!("/{rel} (in the package) is not installed"))?;
        ensure!(
            mode_string(&meta) == *perm,
            "/{rel}: installed {}, packaged {perm}",
            mode_string(&meta)
        );
        n += 1;
    }
    for want in [
        "usr/bin/pawl",
        "usr/libexec/pawl/pawl-kernel-attach",
        "usr/lib/udev/rules.d/71-pawl-kernel-mode.rules",
        "usr/lib/udev/rules.d/70-pawl.rules",
        "usr/lib/systemd/user/pawl.service",
        "usr/lib/systemd/system/run-pawl-bpf.mount",
        "usr/lib/systemd/system/pawl-kernel-reseat.path",
        "usr/lib/systemd/system/pawl-kernel-reseat.service",
        "usr/lib/modules-load.d/pawl.conf",
        "usr/share/man/man1/pawl.1.gz",
        "usr/share/man/man5/pawl.5.gz",
        "usr/share/bash-completion/completions/pawl",
        "usr/share/zsh/vendor-completions/_pawl",
        "usr/share/fish/vendor_completions.d/pawl.fish",
        "usr/share/doc/pawl/copyright",
        "usr/share/doc/pawl/changelog.Debian.gz",
        "usr/share/gnome-shell/extensions/focus@pawl.github.io/extension.js",
        "usr/share/gnome-shell/extensions/focus@pawl.github.io/metadata.json",
    ] {
        ensure!(run.join(want).is_file(), "/{want} is not installed");
    }
    eprintln!("{n} paths of the package installed with their modes");
    Ok(())
}

/// `ls -l`'s mode column for `meta`.
fn mode_string(meta: &std::fs::Metadata) -> String {
    let kind = if meta.is_dir() {
        'd'
    } else if meta.file_type().is_symlink() {
        'l'
    } else {
        '-'
    };
    let mode = meta.permissions().mode();
    let bits: String = (0..9)
        .map(|i| {
            if mode & (1 << (8 - i)) == 0 {
                '-'
            } else {
                ['r', 'w', 'x'][i % 3]
            }
        })
        .collect();
    format!("{kind}{bits}")
}

/// What a file tree entry is: kind and mode, size and mtime for files.
type Entry = (String, u64, i64);

/// Paths apt and dpkg change for their own records on any install or purge (logs, caches,
/// the status database and its backup); everything else must be as it was.
const BOOKKEEPING: &[&str] = &[
    "var/log/",
    "var/cache/apt/",
    "var/cache/debconf/",
    "var/lib/apt/",
    "var/lib/dpkg/status",
    "var/lib/dpkg/status-old",
    "var/lib/dpkg/lock",
    "var/lib/dpkg/triggers/Lock",
    "var/lib/dpkg/lock-frontend",
    "var/lib/dpkg/updates",
    "var/lib/dpkg/available",
    "etc/apt/apt.conf.d/90pawl-test",
    "root",
    "proc/",
    "dev/pts/",
];

/// Every path in the chroot (relative) with its [`Entry`]: directories and bookkeeping
/// files by kind and mode only, bookkeeping directories (ending in `/`) without contents.
fn snapshot(run: &Path) -> anyhow::Result<BTreeMap<String, Entry>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let abs = run.join(&rel);
        let meta = std::fs::symlink_metadata(&abs).with_context(|| format!("{}", abs.display()))?;
        let key = rel.to_string_lossy().into_owned();
        let is_dir = meta.is_dir();
        let bookkeeping = BOOKKEEPING.iter().any(|b| key == b.trim_end_matches('/'));
        let entry = if is_dir || bookkeeping {
            (mode_string(&meta), 0, 0)
        } else {
            (mode_string(&meta), meta.len(), meta.mtime())
        };
        if !key.is_empty() {
            out.insert(key.clone(), entry);
        }
        let skip_children = BOOKKEEPING
            .iter()
            .any(|b| b.ends_with('/') && key == b.trim_end_matches('/'));
        if is_dir && !skip_children {
            for e in std::fs::read_dir(&abs)? {
                stack.push(rel.join(e?.file_name()));
            }
        }
    }
    Ok(out)
}

/// Fails with every difference between two snapshots.
fn compare(
    before: &BTreeMap<String, Entry>,
    after: &BTreeMap<String, Entry>,
) -> anyhow::Result<()> {
    let mut diffs = Vec::new();
    for (path, entry) in after {
        match before.get(path) {
            None => diffs.push(format!("left behind: /{path}")),
            Some(old) if old != entry => {
                diffs.push(format!("changed: /{path} {old:?} → {entry:?}"))
            }
            Some(_) => {}
        }
    }
    for path in before.keys().filter(|p| !after.contains_key(*p)) {
        diffs.push(format!("removed: /{path}"));
    }
    ensure!(
        diffs.is_empty(),
        "the chroot after purge is not as before install:\n{}",
        diffs.join("\n")
    );
    eprintln!("after purge: {} paths, as before the install", after.len());
    Ok(())
}

/// debootstrap into `base` (through `base.partial`, renamed when complete).
fn debootstrap(base: &Path) -> anyhow::Result<()> {
    let partial = base.with_extension("partial");
    remove(&partial)?;
    remove(base)?;
    let mirror = mirror();
    eprintln!("debootstrap --variant=minbase {SUITE} from {mirror}");
    util::run(
        util::as_root("debootstrap")
            .args(["--variant=minbase", SUITE])
            .arg(&partial)
            .arg(&mirror),
    )?;
    util::run(util::as_root("touch").arg(partial.join(STAMP)))?;
    util::run(util::as_root("mv").arg(&partial).arg(base))
}

/// The Debian mirror apt uses here: the first `URIs:` of a deb822 source for the suite (or
/// the first `deb URI SUITE` line of sources.list), else deb.debian.org.
fn mirror() -> String {
    mirror_from(
        std::fs::read_to_string("/etc/apt/sources.list.d/debian.sources")
            .ok()
            .as_deref(),
        std::fs::read_to_string("/etc/apt/sources.list")
            .ok()
            .as_deref(),
    )
}

fn mirror_from(deb822: Option<&str>, sources_list: Option<&str>) -> String {
    for stanza in deb822.unwrap_or_default().split("\n\n") {
        let field = |name: &str| {
            stanza
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.split_whitespace().map(String::from).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        if field("Suites:").iter().any(|s| s == SUITE)
            && let Some(uri) = field("URIs:").into_iter().next()
        {
            return uri;
        }
    }
    for line in sources_list.unwrap_or_default().lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let ["deb", uri, suite, ..] = words.as_slice()
            && *suite == SUITE
        {
            return (*uri).to_owned();
        }
    }
    "http://deb.debian.org/debian".into()
}

fn write_root(path: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = std::env::temp_dir().join(format!("pawl-dist-{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    let res = util::run(util::as_root("cp").arg(&tmp).arg(path));
    let _ = std::fs::remove_file(&tmp);
    res
}

fn remove(path: &Path) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        util::run(
            util::as_root("rm")
                .arg("-rf")
                .arg("--one-file-system")
                .arg(path),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command lines of README.md's Install section (```sh blocks), each with its
    /// comment (after ` # `).
    fn readme_install_commands() -> Vec<(String, String)> {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
            .expect("README.md");
        let section = readme
            .split("\n## ")
            .find(|s| s.starts_with("Install\n"))
            .expect("README.md has an Install section");
        let mut lines = Vec::new();
        let mut in_sh = false;
        for line in section.lines() {
            if line.starts_with("```") {
                in_sh = !in_sh && line == "```sh";
                continue;
            }
            let line = line.trim();
            if !in_sh || line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (cmd, comment) = line.split_once(" # ").unwrap_or((line, ""));
            lines.push((cmd.trim().to_owned(), comment.trim().to_owned()));
        }
        lines
    }

    #[test]
    fn every_readme_install_command_is_run_by_this_test_or_marked_not_run_here() {
        let commands = readme_install_commands();
        let tested: Vec<String> = readme_commands(&deb_file_name())
            .into_iter()
            .chain(HOST_COMMANDS.iter().map(|c| c.to_string()))
            .collect();
        for (cmd, comment) in &commands {
            assert!(
                tested.contains(cmd) || comment.contains("not run here"),
                "README.md's Install section: `{cmd}` is neither run by `cargo xtask dist deb \
                 --test` nor marked `# not run here`"
            );
        }
        for cmd in &tested {
            assert!(
                commands.iter().any(|(c, _)| c == cmd),
                "`{cmd}` is tested but not in README.md's Install section"
            );
        }
    }

    fn tree(entries: &[(&str, u64)]) -> BTreeMap<String, Entry> {
        entries
            .iter()
            .map(|(p, size)| (p.to_string(), ("-rw-r--r--".to_owned(), *size, 0)))
            .collect()
    }

    #[test]
    fn dependency_names_are_each_entrys_first_alternative_without_its_version() {
        assert_eq!(
            dependency_names("libc6 (>= 2.34), libelf1 (>= 0.144) | libelf-alt, zlib1g\n"),
            ["libc6", "libelf1", "zlib1g"]
        );
        assert!(dependency_names("").is_empty());
    }

    #[test]
    fn a_purge_that_leaves_changes_or_removes_a_file_fails_naming_it() {
        let before = tree(&[("etc/a", 1), ("usr/b", 2)]);
        assert!(compare(&before, &before.clone()).is_ok());
        let left = tree(&[("etc/a", 1), ("usr/b", 2), ("usr/bin/pawl", 3)]);
        let err = compare(&before, &left).unwrap_err().to_string();
        assert!(err.contains("left behind: /usr/bin/pawl"), "{err}");
        let changed = tree(&[("etc/a", 5), ("usr/b", 2)]);
        assert!(
            compare(&before, &changed)
                .unwrap_err()
                .to_string()
                .contains("changed: /etc/a")
        );
        let removed = tree(&[("etc/a", 1)]);
        assert!(
            compare(&before, &removed)
                .unwrap_err()
                .to_string()
                .contains("removed: /usr/b")
        );
    }

    #[test]
    fn the_mirror_is_the_one_apt_uses_for_the_suite_not_the_security_archive() {
        let deb822 = "Types: deb\nURIs: http://security.example/debian-security\n\
                      Suites: bookworm-security\n\nTypes: deb\nURIs: http://mirror.example/debian\n\
                      Suites: bookworm bookworm-updates\nComponents: main\n";
        assert_eq!(
            mirror_from(Some(deb822), None),
            "http://mirror.example/debian"
        );
        let list = "deb http://security.example bookworm-security main\n\
                    deb http://old.example/debian bookworm main\n";
        assert_eq!(mirror_from(None, Some(list)), "http://old.example/debian");
        assert_eq!(mirror_from(None, None), "http://deb.debian.org/debian");
    }
}
