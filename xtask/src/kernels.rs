//! The VM's kernels: the host's installed one ([`find_kernel`]) and the second, Debian's
//! newest packaged kernel with `CONFIG_HID_BPF=y`, fetched into `target/` with a private apt
//! configuration. The host's sources, apt state and `/boot` are never touched.
//!
//! The apt configuration (`target/vm-kernels/apt/apt.conf`, passed as `APT_CONFIG`) has its
//! own sources list (only [`SUITE`]), state, status and cache directories; `apt-get update`
//! with it fills `target/vm-kernels/apt/state/lists` (at most once a day, see
//! [`LISTS_MAX_AGE`]). The kernel release is the one `linux-image-amd64` depends on in that
//! suite (falling back to [`PINNED_RELEASE`] when the index cannot be read); its packages
//! (split since Debian's 6.16 kernels into `linux-image-<r>` → `linux-base-<r>`,
//! `linux-binary-<r>`, `linux-modules-<r>`) are fetched with `apt-get download`, unpacked
//! with `dpkg -x` into `target/vm-kernels/<release>/` and indexed with `depmod -b` (the
//! packages ship no `modules.dep`). The image is `usr/lib/modules/<r>/vmlinuz` there; the
//! modules are `.ko.xz` (decompressed on the host when the initramfs is written, see
//! `vm::module_bytes`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail, ensure};

use crate::util;

/// The suite that carries the newest packaged kernel with `CONFIG_HID_BPF=y` (Debian
/// enabled it in 6.16.3-1, Debian bug #1110780; trixie-backports has 7.3.4 as of 2026-12).
pub(crate) const SUITE: &str = "trixie-backports";

/// The release used when the suite's index cannot be read (offline, with the packages
/// already in `target/vm-kernels/`, or a suite that moved on).
pub(crate) const PINNED_RELEASE: &str = "7.3.4+deb13-amd64";

/// How long a fetched package index is used before `apt-get update` runs again.
const LISTS_MAX_AGE: Duration = Duration::from_secs(24 * 3600);

/// The config line every kernel of this tier must have.
const REQUIRED_CONFIG: &str = "CONFIG_HID_BPF=y";

/// Marks a fully unpacked and indexed kernel directory.
const COMPLETE: &str = ".pawl-complete";

/// The HID-BPF kernel: fetched, unpacked and indexed under `<target>/vm-kernels/` when not
/// there yet. Errors name the failing step (apt, dpkg, depmod) or a kernel without
/// [`REQUIRED_CONFIG`].
pub(crate) fn hid_bpf_kernel(target: &Path) -> anyhow::Result<Kernel> {
    let base = target.join("vm-kernels");
    let apt = PrivateApt::new(&base.join("apt"))?;
    let release = match apt.update().and_then(|()| apt.newest_release()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{SUITE}: {e:#}; using the pinned release {PINNED_RELEASE}");
            PINNED_RELEASE.to_owned()
        }
    };
    let dir = base.join(&release);
    if !dir.join(COMPLETE).is_file() {
        util::ensure_debian_packages(&["kmod", "xz-utils"])?;
        fetch_and_unpack(&apt, &release, &dir)?;
    }
    let modules = dir.join("usr/lib/modules").join(&release);
    let config = std::fs::read_to_string(modules.join("config"))
        .with_context(|| format!("read {}", modules.join("config").display()))?;
    ensure!(
        config.lines().any(|l| l == REQUIRED_CONFIG),
        "kernel {release} from {SUITE} lacks {REQUIRED_CONFIG}"
    );
    Ok(Kernel {
        version: release,
        vmlinuz: modules.join("vmlinuz"),
        modules,
    })
}

/// `apt-get download` of the kernel's packages, `dpkg -x` of each, `depmod -b`.
fn fetch_and_unpack(apt: &PrivateApt, release: &str, dir: &Path) -> anyhow::Result<()> {
    let packages = apt.kernel_packages(release)?;
    eprintln!("{SUITE}: kernel {release}: {}", packages.join(" "));
    let debs = dir.with_extension("debs");
    let _ = std::fs::remove_dir_all(&debs);
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(&debs)?;
    util::run(
        apt.command("apt-get")
            .args(["download", "-q"])
            .args(&packages)
            .current_dir(&debs),
    )?;
    std::fs::create_dir_all(dir)?;
    for e in std::fs::read_dir(&debs)? {
        let deb = e?.path();
        util::run(Command::new("dpkg").arg("-x").arg(&deb).arg(dir))?;
    }
    std::fs::remove_dir_all(&debs)?;
    let modules = dir.join("usr/lib/modules").join(release);
    ensure!(
        modules.join("vmlinuz").is_file(),
        "no vmlinuz in {} after unpacking {}",
        modules.display(),
        packages.join(" ")
    );
    util::run(
        Command::new("depmod")
            .arg("-b")
            .arg(dir.join("usr"))
            .arg(release),
    )?;
    std::fs::write(dir.join(COMPLETE), packages.join("\n"))?;
    Ok(())
}

/// An apt configuration of its own under `dir`: sources = [`SUITE`] only, private state
/// and cache. The host's `/etc/apt/apt.conf.d` (proxies) still applies.
struct PrivateApt {
    dir: PathBuf,
    conf: PathBuf,
}

impl PrivateApt {
    fn new(dir: &Path) -> anyhow::Result<PrivateApt> {
        for d in [
            "sources.list.d",
            "preferences.d",
            "state/lists/partial",
            "cache/archives/partial",
        ] {
            std::fs::create_dir_all(dir.join(d))?;
        }
        let status = dir.join("state/status");
        if !status.exists() {
            std::fs::write(&status, "")?;
        }
        std::fs::write(
            dir.join("sources.list"),
            format!(
                "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {} {SUITE} main\n",
                debian_mirror()
            ),
        )?;
        let d = dir.display();
        let conf = dir.join("apt.conf");
        std::fs::write(
            &conf,
            format!(
                "Dir::Etc::SourceList \"{d}/sources.list\";\n\
                 Dir::Etc::SourceParts \"{d}/sources.list.d\";\n\
                 Dir::Etc::PreferencesParts \"{d}/preferences.d\";\n\
                 Dir::State \"{d}/state\";\n\
                 Dir::State::status \"{d}/state/status\";\n\
                 Dir::Cache \"{d}/cache\";\n\
                 Acquire::Languages \"none\";\n\
                 APT::Sandbox::User \"root\";\n"
            ),
        )?;
        Ok(PrivateApt {
            dir: dir.to_owned(),
            conf,
        })
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("APT_CONFIG", &self.conf);
        c
    }

    /// `apt-get update` unless the lists are younger than [`LISTS_MAX_AGE`].
    fn update(&self) -> anyhow::Result<()> {
        let lists = self.dir.join("state/lists");
        let fresh = std::fs::read_dir(&lists)?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with("_Packages"))
            .filter_map(|e| e.metadata().ok()?.modified().ok())
            .any(|t| {
                SystemTime::now()
                    .duration_since(t)
                    .is_ok_and(|age| age < LISTS_MAX_AGE)
            });
        if fresh {
            return Ok(());
        }
        util::run(self.command("apt-get").args(["update", "-qq"]))
    }

    /// The `<release>` of the `linux-image-<release>` that `linux-image-amd64` depends on.
    fn newest_release(&self) -> anyhow::Result<String> {
        newest_image_release(&self.depends("linux-image-amd64")?)
            .context("linux-image-amd64 depends on no linux-image-<release>-amd64")
    }

    /// `linux-image-<release>` and what it depends on of the same release
    /// (`linux-base-<r>`, `linux-binary-<r>`, `linux-modules-<r>`).
    fn kernel_packages(&self, release: &str) -> anyhow::Result<Vec<String>> {
        let image = format!("linux-image-{release}");
        let mut packages: Vec<String> = self
            .depends(&image)?
            .into_iter()
            .filter(|d| d.ends_with(&format!("-{release}")))
            .collect();
        if packages.is_empty() {
            // An unsplit package (Debian before 6.16) carries everything itself.
            packages.push(image);
        }
        Ok(packages)
    }

    /// The direct `Depends:` of `package` (names only, alternatives and virtual packages
    /// included as apt prints them, without the angle brackets).
    fn depends(&self, package: &str) -> anyhow::Result<Vec<String>> {
        let out = self
            .command("apt-cache")
            .args(["depends", "--no-recommends", "--no-suggests", package])
            .output()
            .context("cannot run apt-cache")?;
        if !out.status.success() {
            bail!(
                "apt-cache depends {package}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(parse_depends(&String::from_utf8_lossy(&out.stdout)))
    }
}

/// The `Depends:` names of `apt-cache depends` output (alternatives' `|` and virtual
/// packages' `<…>` stripped).
fn parse_depends(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start_matches([' ', '|']).strip_prefix("Depends: "))
        .map(|d| d.trim_matches(['<', '>']).to_owned())
        .collect()
}

/// The newest `<release>` among `linux-image-<release>` names ending in `-amd64`.
fn newest_image_release(deps: &[String]) -> Option<String> {
    let mut releases: Vec<&str> = deps
        .iter()
        .filter_map(|d| d.strip_prefix("linux-image-"))
        .filter(|r| r.ends_with("-amd64") && r.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    releases.sort_by_key(|r| version_key(r));
    releases.pop().map(str::to_owned)
}

/// The host's Debian mirror (the first `URIs:` of `/etc/apt/sources.list.d/debian.sources`
/// that is not the security archive, or a `deb` line of `/etc/apt/sources.list`), else
/// `http://deb.debian.org/debian`.
pub(crate) fn debian_mirror() -> String {
    mirror_from(
        &std::fs::read_to_string("/etc/apt/sources.list.d/debian.sources").unwrap_or_default(),
        &std::fs::read_to_string("/etc/apt/sources.list").unwrap_or_default(),
    )
}

/// [`debian_mirror`] from the two files' text.
fn mirror_from(deb822: &str, one_line: &str) -> String {
    deb822
        .lines()
        .filter_map(|l| l.strip_prefix("URIs:"))
        .flat_map(str::split_whitespace)
        .chain(
            one_line
                .lines()
                .filter(|l| l.starts_with("deb "))
                .filter_map(|l| l.split_whitespace().find(|w| w.contains("://"))),
        )
        .find(|u| !u.contains("security"))
        .map_or_else(
            || "http://deb.debian.org/debian".to_owned(),
            |u| u.trim_end_matches('/').to_owned(),
        )
}

/// A kernel: release, image, modules directory (with `modules.dep`).
#[derive(Debug)]
pub(crate) struct Kernel {
    pub(crate) version: String,
    pub(crate) vmlinuz: PathBuf,
    pub(crate) modules: PathBuf,
}

/// The newest kernel that has both `/boot/vmlinuz-<v>` and `/lib/modules/<v>/modules.dep`.
pub(crate) fn find_kernel() -> anyhow::Result<Kernel> {
    let mut found: Vec<Kernel> = std::fs::read_dir("/lib/modules")
        .context("read /lib/modules (is linux-image-amd64 installed?)")?
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().into_owned();
            let vmlinuz = PathBuf::from(format!("/boot/vmlinuz-{version}"));
            let modules = e.path();
            (vmlinuz.is_file() && modules.join("modules.dep").is_file()).then_some(Kernel {
                version,
                vmlinuz,
                modules,
            })
        })
        .collect();
    found.sort_by_key(|k| version_key(&k.version));
    found
        .pop()
        .context("no kernel with both /boot/vmlinuz-<version> and /lib/modules/<version>")
}

/// `6.1.0-57-amd64` → [6, 1, 0, 57] for ordering.
pub(crate) fn version_key(v: &str) -> Vec<u64> {
    v.split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_versions_order_numerically() {
        assert!(version_key("6.10.0-1-amd64") > version_key("6.9.0-5-amd64"));
        assert!(version_key("6.1.0-57-amd64") > version_key("6.1.0-9-amd64"));
    }

    #[test]
    fn the_newest_release_comes_from_the_meta_package_dependencies() {
        let text = "linux-image-amd64\n  Depends: linux-base-amd64\n  Depends: linux-image-7.3.4+deb13-amd64\n |Depends: <linux-initramfs-tool>\n  Depends: linux-modules-amd64\n";
        let deps = parse_depends(text);
        assert_eq!(
            deps,
            [
                "linux-base-amd64",
                "linux-image-7.3.4+deb13-amd64",
                "linux-initramfs-tool",
                "linux-modules-amd64"
            ]
        );
        assert_eq!(
            newest_image_release(&deps).as_deref(),
            Some("7.3.4+deb13-amd64")
        );
        let two = [
            "linux-image-6.9.1-amd64".into(),
            "linux-image-6.10.2-amd64".into(),
        ];
        assert_eq!(newest_image_release(&two).as_deref(), Some("6.10.2-amd64"));
        assert_eq!(newest_image_release(&["linux-image-amd64".into()]), None);
    }

    #[test]
    fn the_mirror_is_the_hosts_debian_archive_not_its_security_archive() {
        let deb822 = "Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n\nTypes: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm\n";
        assert_eq!(mirror_from(deb822, ""), "http://mirror.example/debian");
        assert_eq!(
            mirror_from(
                "",
                "deb [arch=amd64] http://ftp.example/debian bookworm main\n"
            ),
            "http://ftp.example/debian"
        );
        assert_eq!(mirror_from("", ""), "http://deb.debian.org/debian");
    }
}
