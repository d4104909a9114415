//! The link half of `cargo xtask check-macos`: links the real `pawl` binary for both Apple
//! targets on Linux and checks every framework symbol it imports against the reviewed list
//! `crates/pawl-macos/macos-symbols.txt` (name, framework, the macOS version that introduced
//! it).
//!
//! How, with no Mac and no Xcode:
//! - the compiler: Debian's `rustc-web` with `-Zbuild-std` (as for the clippy half);
//! - the linker: LLVM's Mach-O linker, rustup's `rust-lld` (`-C linker-flavor=ld64.lld`);
//! - the SDK, made here in `target/macos-sdk/MacOSX.sdk`: `usr/lib/libSystem.tbd` is the real
//!   one from the PyPI `ziglang` wheel (pinned, fetched once with `pip download`), patched
//!   for ld64.lld (an `arm64-macos` target added beside `arm64e-macos`, the `arm64e.x1`
//!   targets lld cannot read dropped); `libiconv.tbd` is a stub (std's libc crate asks for
//!   `-liconv`, nothing is referenced); each framework is a `.tbd` stub exporting exactly the
//!   list's symbols of that framework, and so is `usr/lib/libobjc.tbd`, the Objective-C
//!   runtime (the list's framework `objc`); a framework pawl links but imports nothing from
//!   ([`SYMBOL_LESS_FRAMEWORKS`]) is a stub exporting nothing.
//!
//! So a symbol pawl starts to use without a line in the list is an undefined symbol at link
//! time, and the failure says which line to add. After linking, the Mach-O's symbol table
//! gives what pawl really imports and from where: lines nobody imports fail, and so does a
//! symbol newer than the target's deployment target (`LC_BUILD_VERSION`) that is not weak.
//! This is what catches availability bugs such as `kIOMainPortDefault` (macOS 12) in a
//! binary that says it runs on 11.0. What it cannot catch: a wrong version in a reviewed
//! line, or a symbol listed under the wrong framework (the stubs follow the list).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::macho::{self, Version};
use crate::util;

/// The reviewed list.
pub const SYMBOL_LIST: &str = "crates/pawl-macos/macos-symbols.txt";

/// Frameworks pawl links (`objc2-foundation` asks for Foundation) but imports no symbol
/// from (its classes are looked up at run time with `objc_getClass`): stubs that export
/// nothing.
const SYMBOL_LESS_FRAMEWORKS: &[&str] = &["Foundation"];

/// The `ziglang` wheel that holds `lib/libc/darwin/libSystem.tbd` (pinned: the patch below
/// is made for its file).
const ZIGLANG: &str = "ziglang==0.17.1";
/// The member of the wheel.
const LIBSYSTEM_IN_WHEEL: &str = "ziglang/lib/libc/darwin/libSystem.tbd";
/// Its SHA-256 in that wheel: a different file fails instead of being patched blindly.
const LIBSYSTEM_SHA256: &str = "01089e97e7372fdda64ef480f2c99d483daf0c7fc99298a137425ee3230588ab";

/// Where the SDK is made, the wheel kept, and pawl linked.
const SDK_DIR: &str = "target/macos-sdk";
const TARGET_DIR: &str = "target/macos-link";

/// The Debian packages this half needs beyond the clippy half's: pip (for `pip download`).
pub const PACKAGES: &[&str] = &["python3-pip"];

/// One line of the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub framework: String,
    pub introduced: Version,
}

/// Parses the list: `symbol framework version`, `#` comments, blank lines. Errors name the
/// line.
pub fn parse_list(text: &str) -> anyhow::Result<BTreeMap<String, Listed>> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, framework, version] = fields[..] else {
            bail!(
                "{SYMBOL_LIST}:{}: expected `symbol framework version`, got {line:?}",
                n + 1
            );
        };
        let introduced = Version::parse(version).with_context(|| {
            format!(
                "{SYMBOL_LIST}:{}: {version:?} is not a macOS version",
                n + 1
            )
        })?;
        if !name.starts_with('_') {
            bail!(
                "{SYMBOL_LIST}:{}: {name:?}: symbols are written as the linker sees them, \
                 with a leading `_`",
                n + 1
            );
        }
        let listed = Listed {
            framework: framework.to_owned(),
            introduced,
        };
        if out.insert(name.to_owned(), listed).is_some() {
            bail!("{SYMBOL_LIST}:{}: {name} is listed twice", n + 1);
        }
    }
    Ok(out)
}

/// The framework a symbol most likely comes from, for the "add this line" message.
fn guess_framework(symbol: &str) -> &'static str {
    let s = symbol.trim_start_matches('_');
    if s.starts_with("AX") || s.starts_with("kAX") {
        "ApplicationServices"
    } else if s.starts_with("CG") || s.starts_with("kCG") {
        "CoreGraphics"
    } else if s.starts_with("IO") || s.starts_with("kIO") {
        "IOKit"
    } else if s.starts_with("CF") || s.starts_with("kCF") {
        "CoreFoundation"
    } else if s.starts_with("objc_")
        || s.starts_with("sel_")
        || s.starts_with("class_")
        || s.starts_with("object_")
        || s.starts_with("method_")
    {
        macho::OBJC
    } else if s.starts_with("NS") {
        "AppKit"
    } else {
        "<Framework>"
    }
}

/// One linked target's imports from frameworks.
#[derive(Debug)]
pub struct Linked {
    pub target: &'static str,
    pub min_os: Version,
    /// name → (framework, weak).
    pub imports: BTreeMap<String, (String, bool)>,
    /// Imports from other dylibs (libSystem), counted.
    pub other_imports: usize,
    pub other_dylibs: Vec<String>,
    pub signed: bool,
    pub cpu: u32,
}

/// The problems of the list against what was linked, one message each (empty: all good).
pub fn compare(list: &BTreeMap<String, Listed>, linked: &[Linked]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut imported: BTreeSet<&str> = BTreeSet::new();
    for l in linked {
        for (name, (framework, weak)) in &l.imports {
            imported.insert(name);
            let Some(listed) = list.get(name) else {
                problems.push(format!(
                    "{}: imports {name} from {framework}, which {SYMBOL_LIST} does not list: add \
                     `{name}  {framework}  <version>`",
                    l.target
                ));
                continue;
            };
            if &listed.framework != framework {
                problems.push(format!(
                    "{}: {name} binds to {framework}, but {SYMBOL_LIST} says {}",
                    l.target, listed.framework
                ));
            }
            if listed.introduced > l.min_os && !weak {
                problems.push(format!(
                    "{}: {name} (macOS {}) is newer than the deployment target (macOS {}) and \
                     imported strongly: the binary would not load on macOS {}. Use an older \
                     equivalent, look it up at run time (dlsym), or raise the deployment target",
                    l.target, listed.introduced, l.min_os, l.min_os
                ));
            }
        }
    }
    for name in list.keys() {
        if !imported.contains(name.as_str()) {
            problems.push(format!(
                "{name} is listed in {SYMBOL_LIST}, but pawl no longer imports it on any \
                 target: remove its line"
            ));
        }
    }
    problems
}

/// The undefined symbols an lld error output reports.
pub fn undefined_symbols(lld_output: &str) -> BTreeSet<String> {
    lld_output
        .lines()
        .filter_map(|l| l.split_once("undefined symbol: ").map(|(_, s)| s.trim()))
        .map(|s| s.split_whitespace().next().unwrap_or(s).to_owned())
        .collect()
}

/// The `targets: [ … ]` lists of zig's libSystem.tbd made readable by ld64.lld: `arm64e.x1`
/// targets dropped (lld aborts on them), `arm64-macos` added where only `arm64e-macos` is
/// (the binary is arm64, not arm64e), and a list left empty given one harmless target.
pub fn patch_libsystem(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4096);
    let mut rest = text;
    while let Some(i) = rest.find("targets:") {
        out.push_str(&rest[..i]);
        let after = &rest[i + "targets:".len()..];
        let trimmed = after.trim_start();
        let (Some(body), true) = (trimmed.strip_prefix('['), trimmed.contains(']')) else {
            out.push_str("targets:");
            rest = after;
            continue;
        };
        let end = body.find(']').expect("checked");
        let mut items: Vec<&str> = body[..end]
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty() && !s.starts_with("arm64e.x1"))
            .collect();
        if items.contains(&"arm64e-macos") && !items.contains(&"arm64-macos") {
            items.push("arm64-macos");
        }
        if items.is_empty() {
            items.push("x86_64-maccatalyst");
        }
        let _ = write!(out, "targets: [ {} ]", items.join(", "));
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

/// A text-based stub (`.tbd` v4) for both Apple targets exporting `symbols`.
fn stub(install_name: &str, symbols: &[&str]) -> String {
    let mut s = format!(
        "--- !tapi-tbd\ntbd-version:     4\ntargets:         [ arm64-macos, x86_64-macos ]\n\
         install-name:    '{install_name}'\n"
    );
    if !symbols.is_empty() {
        let _ = write!(
            s,
            "exports:\n  - targets:         [ arm64-macos, x86_64-macos ]\n    symbols:         [ {} ]\n",
            symbols.join(", ")
        );
    }
    s.push_str("...\n");
    s
}

fn framework_install_name(fw: &str) -> String {
    format!("/System/Library/Frameworks/{fw}.framework/Versions/A/{fw}")
}

/// Debian's Python (whose pip `PACKAGES` installs), else whichever `python3` is first on
/// `PATH`.
fn python() -> Command {
    let debian = Path::new("/usr/bin/python3");
    Command::new(if debian.exists() {
        debian
    } else {
        Path::new("python3")
    })
}

/// Fetches libSystem.tbd from the pinned wheel once (`pip download`, then one member out
/// of the zip with Python's `zipfile`) and returns the patched text.
fn libsystem_tbd(sdk_dir: &Path) -> anyhow::Result<String> {
    let kept = sdk_dir.join("libSystem.orig.tbd");
    if !kept.exists() {
        let wheels = sdk_dir.join("wheel");
        fs::create_dir_all(&wheels)?;
        util::run(
            python()
                .args(["-m", "pip", "download", "--quiet", "--no-deps"])
                .args(["--only-binary=:all:", "--dest"])
                .arg(&wheels)
                .arg(ZIGLANG),
        )
        .context("cannot download the ziglang wheel (for libSystem.tbd) from PyPI")?;
        let wheel = fs::read_dir(&wheels)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "whl"))
            .context("pip download left no wheel")?;
        let script = "import hashlib, sys, zipfile\n\
                      data = zipfile.ZipFile(sys.argv[1]).read(sys.argv[2])\n\
                      if hashlib.sha256(data).hexdigest() != sys.argv[4]:\n\
                      \x20   sys.exit(sys.argv[2] + ': unexpected SHA-256')\n\
                      open(sys.argv[3], 'wb').write(data)\n";
        util::run(
            python()
                .args(["-c", script])
                .arg(&wheel)
                .arg(LIBSYSTEM_IN_WHEEL)
                .arg(&kept)
                .arg(LIBSYSTEM_SHA256),
        )?;
        // The wheel (tens of MB) is not needed any more.
        let _ = fs::remove_dir_all(&wheels);
    }
    Ok(patch_libsystem(&fs::read_to_string(&kept)?))
}

/// Writes the fake SDK for `list`; returns its root.
fn make_sdk(list: &BTreeMap<String, Listed>) -> anyhow::Result<PathBuf> {
    let dir = std::path::absolute(SDK_DIR)?;
    let sdk = dir.join("MacOSX.sdk");
    let lib = sdk.join("usr/lib");
    fs::create_dir_all(&lib)?;
    let libsystem = libsystem_tbd(&dir)?;
    for name in ["libSystem.tbd", "libc.tbd", "libm.tbd"] {
        fs::write(lib.join(name), &libsystem)?;
    }
    fs::write(
        lib.join("libiconv.tbd"),
        stub(
            "/usr/lib/libiconv.2.dylib",
            &["_iconv", "_iconv_open", "_iconv_close"],
        ),
    )?;
    let frameworks = sdk.join("System/Library/Frameworks");
    let _ = fs::remove_dir_all(&frameworks);
    let mut by_framework: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, l) in list {
        by_framework.entry(&l.framework).or_default().push(name);
    }
    for fw in SYMBOL_LESS_FRAMEWORKS {
        by_framework.entry(fw).or_default();
    }
    let _ = fs::remove_file(lib.join("libobjc.tbd"));
    for (fw, symbols) in by_framework {
        if fw == macho::OBJC {
            fs::write(
                lib.join("libobjc.tbd"),
                stub(macho::OBJC_INSTALL_NAME, &symbols),
            )?;
            continue;
        }
        let d = frameworks.join(format!("{fw}.framework"));
        fs::create_dir_all(&d)?;
        fs::write(
            d.join(format!("{fw}.tbd")),
            stub(&framework_install_name(fw), &symbols),
        )?;
    }
    Ok(sdk)
}

/// rustup's `rust-lld` (shipped with every rustc component), else `ld64.lld` on PATH.
fn find_lld() -> anyhow::Result<PathBuf> {
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(root) = sysroot {
        let lld = root.join("lib/rustlib/x86_64-unknown-linux-gnu/bin/rust-lld");
        if lld.exists() {
            return Ok(lld);
        }
    }
    let on_path = Command::new("sh")
        .args(["-c", "command -v ld64.lld"])
        .output()?;
    if on_path.status.success() {
        return Ok(PathBuf::from(
            String::from_utf8_lossy(&on_path.stdout).trim(),
        ));
    }
    bail!("no Mach-O linker: neither rustup's rust-lld nor ld64.lld (Debian `lld`) is installed")
}

/// Links `pawl` for `target` with `cargo` (Debian's, from the caller) and reads the result.
fn link(
    mut cargo: Command,
    target: &'static str,
    sdk: &Path,
    lld: &Path,
) -> anyhow::Result<Linked> {
    let var = target.replace('-', "_").to_uppercase();
    cargo
        .args([
            "build", "--quiet", "--locked", "-p", "pawl", "--bin", "pawl",
        ])
        .args(["-Zbuild-std=std,panic_abort", "--target", target])
        .args(["--target-dir", TARGET_DIR])
        .env("SDKROOT", sdk)
        .env(format!("CARGO_TARGET_{var}_LINKER"), lld)
        .env(
            format!("CARGO_TARGET_{var}_RUSTFLAGS"),
            "-C linker-flavor=ld64.lld -C link-arg=--error-limit=0",
        )
        // No debug info: faster to build and link, and nothing here reads it.
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("MACOSX_DEPLOYMENT_TARGET");
    let out = cargo
        .output()
        .with_context(|| format!("cannot start {cargo:?}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let undefined = undefined_symbols(&stderr);
        if !undefined.is_empty() {
            let mut msg = format!(
                "linking pawl for {target}: pawl uses framework symbols that {SYMBOL_LIST} does \
                 not list. Add one line for each (check the macOS version that introduced it in \
                 Apple's header, API_AVAILABLE(macos(…)), or its documentation page):\n"
            );
            for s in &undefined {
                let _ = writeln!(msg, "  {s:<46}{:<21}<version>", guess_framework(s));
            }
            bail!("{msg}");
        }
        eprint!("{stderr}");
        bail!("building pawl for {target} failed ({})", out.status);
    }
    let binary = PathBuf::from(TARGET_DIR).join(target).join("debug/pawl");
    let bytes = fs::read(&binary).with_context(|| format!("cannot read {}", binary.display()))?;
    let m = macho::parse(&bytes).with_context(|| format!("{}", binary.display()))?;
    let mut linked = Linked {
        target,
        min_os: m
            .min_os
            .with_context(|| format!("{}: no deployment target", binary.display()))?,
        imports: BTreeMap::new(),
        other_imports: 0,
        other_dylibs: Vec::new(),
        signed: m.signed,
        cpu: m.cpu,
    };
    for d in &m.dylibs {
        if macho::framework(d).is_none() {
            linked.other_dylibs.push(d.clone());
        }
    }
    for i in m.imports {
        match macho::framework(&i.dylib) {
            Some(fw) => {
                linked.imports.insert(i.name, (fw.to_owned(), i.weak));
            }
            None => linked.other_imports += 1,
        }
    }
    Ok(linked)
}

/// Links pawl for every target with `cargo()` (a fresh Debian cargo command each time) and
/// checks the imports against the list.
pub fn link_and_check(targets: &[&'static str], cargo: impl Fn() -> Command) -> anyhow::Result<()> {
    let list = parse_list(
        &fs::read_to_string(SYMBOL_LIST).with_context(|| format!("cannot read {SYMBOL_LIST}"))?,
    )?;
    let sdk = make_sdk(&list)?;
    let lld = find_lld()?;
    let mut linked = Vec::new();
    for &target in targets {
        util::step(&format!("link pawl --target {target}"), || {
            let l = link(cargo(), target, &sdk, &lld)?;
            let expected_cpu = if target.starts_with("aarch64") {
                macho::CPU_ARM64
            } else {
                macho::CPU_X86_64
            };
            if l.cpu != expected_cpu {
                bail!("{target}: the binary's CPU type is {:#x}", l.cpu);
            }
            if target.starts_with("aarch64") && !l.signed {
                bail!("{target}: not code-signed (arm64 macOS runs only signed code)");
            }
            let frameworks: BTreeSet<&str> = l.imports.values().map(|(f, _)| f.as_str()).collect();
            eprintln!(
                "{target}: Mach-O, macOS {} and later, {} framework symbols from {} ({}), {} \
                 from {}{}",
                l.min_os,
                l.imports.len(),
                frameworks.len(),
                frameworks.into_iter().collect::<Vec<_>>().join(", "),
                l.other_imports,
                l.other_dylibs.join(", "),
                if l.signed { ", ad-hoc signed" } else { "" }
            );
            linked.push(l);
            Ok(())
        })?;
    }
    let problems = compare(&list, &linked);
    if !problems.is_empty() {
        bail!(
            "the framework symbols pawl imports do not match {SYMBOL_LIST}:\n  {}",
            problems.join("\n  ")
        );
    }
    eprintln!(
        "{SYMBOL_LIST}: all {} symbols imported, none newer than a deployment target",
        list.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(fw: &str, v: &str) -> Listed {
        Listed {
            framework: fw.into(),
            introduced: Version::parse(v).unwrap(),
        }
    }

    fn linked(target: &'static str, min: &str, imports: &[(&str, &str, bool)]) -> Linked {
        Linked {
            target,
            min_os: Version::parse(min).unwrap(),
            imports: imports
                .iter()
                .map(|(n, f, w)| (n.to_string(), (f.to_string(), *w)))
                .collect(),
            other_imports: 0,
            other_dylibs: Vec::new(),
            signed: true,
            cpu: macho::CPU_ARM64,
        }
    }

    #[test]
    fn the_committed_list_parses_and_every_line_is_unique() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let list = parse_list(&fs::read_to_string(root.join(SYMBOL_LIST)).unwrap()).unwrap();
        assert!(list.len() > 50, "{}", list.len());
        assert!(!list.contains_key("_kIOMainPortDefault"));
    }

    #[test]
    fn list_lines_are_symbol_framework_version() {
        let list = parse_list("# c\n\n_CGEventPost  CoreGraphics  10.4  # note\n").unwrap();
        assert_eq!(list["_CGEventPost"], listed("CoreGraphics", "10.4"));
        let err = parse_list("_CGEventPost CoreGraphics\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(":1: expected `symbol framework version`"),
            "{err}"
        );
        assert!(parse_list("CGEventPost CoreGraphics 10.4\n").is_err());
        assert!(parse_list("_A CoreGraphics ten\n").is_err());
        assert!(parse_list("_A CoreGraphics 10.4\n_A CoreGraphics 10.4\n").is_err());
    }

    #[test]
    fn a_strong_import_newer_than_the_deployment_target_fails_and_a_weak_one_passes() {
        let list: BTreeMap<String, Listed> = [
            ("_kIOMainPortDefault".to_owned(), listed("IOKit", "12.0")),
            ("_CGEventPost".to_owned(), listed("CoreGraphics", "10.4")),
        ]
        .into();
        let strong = linked(
            "aarch64-apple-darwin",
            "11.0",
            &[
                ("_kIOMainPortDefault", "IOKit", false),
                ("_CGEventPost", "CoreGraphics", false),
            ],
        );
        let problems = compare(&list, &[strong]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains(
            "_kIOMainPortDefault (macOS 12.0) is newer than the deployment target (macOS 11.0)"
        ));
        let weak = linked(
            "aarch64-apple-darwin",
            "11.0",
            &[
                ("_kIOMainPortDefault", "IOKit", true),
                ("_CGEventPost", "CoreGraphics", false),
            ],
        );
        assert!(compare(&list, &[weak]).is_empty());
    }

    #[test]
    fn unlisted_and_no_longer_imported_symbols_each_fail_with_what_to_do() {
        let list: BTreeMap<String, Listed> =
            [("_CGEventPost".to_owned(), listed("CoreGraphics", "10.4"))].into();
        let l = linked(
            "x86_64-apple-darwin",
            "10.12",
            &[("_CGNew", "CoreGraphics", false)],
        );
        let problems = compare(&list, &[l]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("add `_CGNew  CoreGraphics  <version>`"));
        assert!(problems[1].contains("_CGEventPost is listed"));
        assert!(problems[1].contains("remove its line"));
    }

    #[test]
    fn lld_undefined_symbols_are_collected_once() {
        let out = "rust-lld: error: undefined symbol: _IOHIDDeviceSetReport\n>>> referenced by x\n\
                   rust-lld: error: undefined symbol: _IOHIDDeviceSetReport\n\
                   rust-lld: error: undefined symbol: _CGNew\n";
        assert_eq!(
            undefined_symbols(out).into_iter().collect::<Vec<_>>(),
            ["_CGNew", "_IOHIDDeviceSetReport"]
        );
        assert_eq!(guess_framework("_IOHIDDeviceSetReport"), "IOKit");
    }

    #[test]
    fn libsystem_targets_get_arm64_and_lose_arm64e_x1() {
        let tbd = "targets: [ x86_64-macos, arm64e-macos,\n  arm64e.x1-macos ]\nx\n\
                   targets: [ arm64e.x1-macos ]\nparent-umbrella:\n  - targets: [ arm64-macos ]\n";
        assert_eq!(
            patch_libsystem(tbd),
            "targets: [ x86_64-macos, arm64e-macos, arm64-macos ]\nx\n\
             targets: [ x86_64-maccatalyst ]\nparent-umbrella:\n  - targets: [ arm64-macos ]\n"
        );
    }
}
