//! Just enough of the Mach-O format to check a linked pawl: the CPU, the deployment target
//! (`LC_BUILD_VERSION` / `LC_VERSION_MIN_MACOSX`), the dylibs it loads, and its undefined
//! (imported) symbols with the dylib each binds to and whether it is weak.
//!
//! Layouts from Apple's `<mach-o/loader.h>` and `<mach-o/nlist.h>`: a 64-bit little-endian
//! thin file (what ld64.lld writes for one target), 32-byte header, load commands, 16-byte
//! `nlist_64` entries; two-level namespace, so an undefined symbol's library ordinal is the
//! high byte of `n_desc` (1-based index into the dylib load commands, in order).

use anyhow::{Context, bail, ensure};

/// `MH_MAGIC_64`.
const MH_MAGIC_64: u32 = 0xfeed_facf;
/// `CPU_TYPE_X86_64`, `CPU_TYPE_ARM64`.
pub const CPU_X86_64: u32 = 0x0100_0007;
pub const CPU_ARM64: u32 = 0x0100_000c;

const LC_SYMTAB: u32 = 0x2;
const LC_LOAD_DYLIB: u32 = 0xc;
const LC_LOAD_WEAK_DYLIB: u32 = 0x8000_0018;
const LC_REEXPORT_DYLIB: u32 = 0x8000_001f;
const LC_LAZY_LOAD_DYLIB: u32 = 0x20;
const LC_LOAD_UPWARD_DYLIB: u32 = 0x8000_0023;
const LC_VERSION_MIN_MACOSX: u32 = 0x24;
const LC_BUILD_VERSION: u32 = 0x32;
const LC_CODE_SIGNATURE: u32 = 0x1d;

/// `N_STAB`, `N_TYPE`, `N_EXT`, `N_UNDF`; `N_WEAK_REF` in `n_desc`.
const N_STAB: u8 = 0xe0;
const N_TYPE: u8 = 0x0e;
const N_EXT: u8 = 0x01;
const N_UNDF: u8 = 0x0;
const N_WEAK_REF: u16 = 0x0040;

/// A macOS version, `major.minor.patch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    /// `X.Y[.Z]`.
    pub fn parse(s: &str) -> Option<Version> {
        let mut it = s.split('.').map(|p| p.parse::<u32>().ok());
        let major = it.next()??;
        let minor = it.next().unwrap_or(Some(0))?;
        let patch = it.next().unwrap_or(Some(0))?;
        it.next().is_none().then_some(Version(major, minor, patch))
    }

    /// Mach-O's packed `xxxx.yy.zz` nibbles.
    fn unpack(v: u32) -> Version {
        Version(v >> 16, (v >> 8) & 0xff, v & 0xff)
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.2 {
            0 => write!(f, "{}.{}", self.0, self.1),
            p => write!(f, "{}.{}.{p}", self.0, self.1),
        }
    }
}

/// One imported symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    /// As in the symbol table (`_CFRetain`).
    pub name: String,
    /// The install name of the dylib it binds to (`/System/Library/Frameworks/…`).
    pub dylib: String,
    /// `N_WEAK_REF`: missing at load time is not fatal.
    pub weak: bool,
}

/// What the check needs from a linked binary.
#[derive(Clone, Debug)]
pub struct MachO {
    /// `CPU_TYPE_*`.
    pub cpu: u32,
    /// The deployment target.
    pub min_os: Option<Version>,
    /// The dylibs, in load-command order.
    pub dylibs: Vec<String>,
    /// Every undefined external symbol.
    pub imports: Vec<Import>,
    /// An `LC_CODE_SIGNATURE` is present (ld64.lld signs arm64 ad hoc).
    pub signed: bool,
}

fn u32_at(b: &[u8], at: usize) -> anyhow::Result<u32> {
    let s = b.get(at..at + 4).context("truncated Mach-O")?;
    Ok(u32::from_le_bytes(s.try_into().expect("4 bytes")))
}

fn u16_at(b: &[u8], at: usize) -> anyhow::Result<u16> {
    let s = b.get(at..at + 2).context("truncated Mach-O")?;
    Ok(u16::from_le_bytes(s.try_into().expect("2 bytes")))
}

fn c_str(b: &[u8], at: usize) -> anyhow::Result<String> {
    let rest = b.get(at..).context("string offset out of range")?;
    let end = rest
        .iter()
        .position(|&c| c == 0)
        .context("unterminated string")?;
    Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// Parses a thin 64-bit little-endian Mach-O.
pub fn parse(b: &[u8]) -> anyhow::Result<MachO> {
    ensure!(u32_at(b, 0)? == MH_MAGIC_64, "not a 64-bit Mach-O file");
    let cpu = u32_at(b, 4)?;
    let ncmds = u32_at(b, 16)? as usize;
    let mut at = 32;
    let mut out = MachO {
        cpu,
        min_os: None,
        dylibs: Vec::new(),
        imports: Vec::new(),
        signed: false,
    };
    let mut symtab = None;
    for _ in 0..ncmds {
        let cmd = u32_at(b, at)?;
        let size = u32_at(b, at + 4)? as usize;
        ensure!(size >= 8, "bad load command size");
        match cmd {
            LC_SYMTAB => {
                symtab = Some((
                    u32_at(b, at + 8)? as usize,
                    u32_at(b, at + 12)? as usize,
                    u32_at(b, at + 16)? as usize,
                ))
            }
            LC_LOAD_DYLIB | LC_LOAD_WEAK_DYLIB | LC_REEXPORT_DYLIB | LC_LAZY_LOAD_DYLIB
            | LC_LOAD_UPWARD_DYLIB => {
                let name_off = u32_at(b, at + 8)? as usize;
                out.dylibs.push(c_str(&b[..at + size], at + name_off)?);
            }
            LC_BUILD_VERSION => out.min_os = Some(Version::unpack(u32_at(b, at + 12)?)),
            LC_VERSION_MIN_MACOSX => out.min_os = Some(Version::unpack(u32_at(b, at + 8)?)),
            LC_CODE_SIGNATURE => out.signed = true,
            _ => {}
        }
        at += size;
    }
    let Some((symoff, nsyms, stroff)) = symtab else {
        bail!("no LC_SYMTAB");
    };
    for i in 0..nsyms {
        let e = symoff + i * 16;
        let strx = u32_at(b, e)? as usize;
        let ty = *b.get(e + 4).context("truncated symbol table")?;
        let desc = u16_at(b, e + 6)?;
        if ty & N_STAB != 0 || ty & N_TYPE != N_UNDF || ty & N_EXT == 0 {
            continue;
        }
        let ordinal = usize::from(desc >> 8);
        let dylib = match ordinal {
            1..=0xfd => out
                .dylibs
                .get(ordinal - 1)
                .cloned()
                .with_context(|| format!("library ordinal {ordinal} out of range"))?,
            // SELF_LIBRARY_ORDINAL, DYNAMIC_LOOKUP_ORDINAL, EXECUTABLE_ORDINAL.
            _ => format!("(ordinal {ordinal})"),
        };
        out.imports.push(Import {
            name: c_str(b, stroff + strx)?,
            dylib,
            weak: desc & N_WEAK_REF != 0,
        });
    }
    Ok(out)
}

/// The install name of the Objective-C runtime, whose imports are reviewed like a
/// framework's under the name [`OBJC`].
pub const OBJC_INSTALL_NAME: &str = "/usr/lib/libobjc.A.dylib";
/// The name the reviewed list gives the Objective-C runtime.
pub const OBJC: &str = "objc";

/// The framework name of an install name under `/System/Library/Frameworks` (`CoreGraphics`
/// for `…/CoreGraphics.framework/Versions/A/CoreGraphics`), [`OBJC`] for the Objective-C
/// runtime, `None` for other dylibs.
pub fn framework(install_name: &str) -> Option<&str> {
    if install_name == OBJC_INSTALL_NAME {
        return Some(OBJC);
    }
    let rest = install_name.strip_prefix("/System/Library/Frameworks/")?;
    rest.split_once(".framework/").map(|(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_order_like_macos_releases() {
        assert_eq!(Version::parse("10.12"), Some(Version(10, 12, 0)));
        assert_eq!(Version::parse("11.0.1"), Some(Version(11, 0, 1)));
        assert_eq!(Version::parse("11.x"), None);
        assert!(Version::parse("10.15").unwrap() > Version::parse("10.12").unwrap());
        assert!(Version::parse("12.0").unwrap() > Version::parse("11.0").unwrap());
        assert_eq!(Version::unpack(0x000b_0000).to_string(), "11.0");
        assert_eq!(Version::unpack(0x000a_0c00).to_string(), "10.12");
    }

    #[test]
    fn framework_names_come_from_install_names() {
        assert_eq!(
            framework("/System/Library/Frameworks/IOKit.framework/Versions/A/IOKit"),
            Some("IOKit")
        );
        assert_eq!(framework("/usr/lib/libSystem.B.dylib"), None);
        assert_eq!(framework("/usr/lib/libobjc.A.dylib"), Some("objc"));
    }

    /// A hand-built Mach-O: one dylib, a build version, two undefined symbols (one weak)
    /// and one defined.
    #[test]
    fn undefined_symbols_bind_to_their_dylib_and_keep_the_weak_flag() {
        let dylib = b"/System/Library/Frameworks/CoreGraphics.framework/Versions/A/CoreGraphics\0";
        let dylib_cmd_size = (24 + dylib.len()).div_ceil(8) * 8;
        let mut b = vec![0u8; 32];
        b[0..4].copy_from_slice(&MH_MAGIC_64.to_le_bytes());
        b[4..8].copy_from_slice(&CPU_ARM64.to_le_bytes());
        b[16..20].copy_from_slice(&3u32.to_le_bytes());
        // LC_LOAD_DYLIB
        let mut cmd = Vec::new();
        cmd.extend(LC_LOAD_DYLIB.to_le_bytes());
        cmd.extend((dylib_cmd_size as u32).to_le_bytes());
        cmd.extend(24u32.to_le_bytes());
        cmd.extend([0u8; 12]);
        cmd.extend(dylib);
        cmd.resize(dylib_cmd_size, 0);
        b.extend(cmd);
        // LC_BUILD_VERSION: platform macOS, minos 10.12, sdk 0, ntools 0.
        for v in [LC_BUILD_VERSION, 24, 1, 0x000a_0c00, 0, 0] {
            b.extend(u32::to_le_bytes(v));
        }
        // LC_SYMTAB, filled in below.
        let symtab_at = b.len();
        b.extend([0u8; 24]);
        let symoff = b.len();
        let strings = b"\0_CGEventPost\0_CGNew\0_main\0";
        let entries: [(u32, u8, u16); 3] = [
            (1, N_EXT, 1 << 8),
            (14, N_EXT, (1 << 8) | N_WEAK_REF),
            (21, 0x0f, 0),
        ];
        for (strx, ty, desc) in entries {
            b.extend(strx.to_le_bytes());
            b.push(ty);
            b.push(0);
            b.extend(desc.to_le_bytes());
            b.extend(0u64.to_le_bytes());
        }
        let stroff = b.len();
        b.extend(strings);
        for (i, v) in [
            LC_SYMTAB,
            24,
            symoff as u32,
            3,
            stroff as u32,
            strings.len() as u32,
        ]
        .into_iter()
        .enumerate()
        {
            b[symtab_at + 4 * i..symtab_at + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        let m = parse(&b).unwrap();
        assert_eq!(m.cpu, CPU_ARM64);
        assert_eq!(m.min_os, Some(Version(10, 12, 0)));
        let cg = std::str::from_utf8(&dylib[..dylib.len() - 1]).unwrap();
        assert_eq!(
            m.imports,
            vec![
                Import {
                    name: "_CGEventPost".into(),
                    dylib: cg.into(),
                    weak: false
                },
                Import {
                    name: "_CGNew".into(),
                    dylib: cg.into(),
                    weak: true
                },
            ]
        );
        assert!(!m.signed);
    }
}
