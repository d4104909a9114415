//! Synthetic devices through `/dev/uinput` (touchpads, other mice, wheels with only lo-res or
//! only hi-res codes), and evemu device descriptions (`N: I: P: B: A:` lines) as their
//! source.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pawl_evdev::codes::{EV_ABS, EV_KEY, EV_MSC, EV_REL, EV_SYN, SYN_REPORT};

use crate::evdev::{Event, NodeInfo};
use crate::sys::{self, AbsInfo, InputEvent, InputId, UinputAbsSetup, UinputSetup};

/// What a uinput device is made of.
#[derive(Clone, Debug, Default)]
pub struct UinputSpec {
    /// Device name.
    pub name: String,
    /// Bus, vendor, product, version.
    pub id: InputId,
    /// Phys (empty: none).
    pub phys: String,
    /// `INPUT_PROP_*` bits.
    pub props: Vec<u16>,
    /// `EV_KEY` codes.
    pub keys: Vec<u16>,
    /// `EV_REL` codes.
    pub rels: Vec<u16>,
    /// `EV_MSC` codes.
    pub mscs: Vec<u16>,
    /// `EV_ABS` codes with their parameters.
    pub abs: Vec<(u16, AbsInfo)>,
}

impl UinputSpec {
    /// Parses an evemu device description (`evemu-describe` output): `N:` name, `I:` bus
    /// vendor product version (hex), `P:` property bytes, `B:` type + code bitmap bytes
    /// (continued over several lines per type), `A:` abs code, min, max, fuzz, flat
    /// [, resolution].
    pub fn from_evemu(text: &str, phys: &str) -> anyhow::Result<UinputSpec> {
        let mut spec = UinputSpec {
            phys: phys.into(),
            ..UinputSpec::default()
        };
        let mut bitmaps: Vec<(u16, Vec<u8>)> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let ctx = || format!("evemu description line {}: {line:?}", n + 1);
            let Some((tag, rest)) = line.split_once(':') else {
                continue;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let hex = |s: &str| u16::from_str_radix(s, 16).with_context(ctx);
            match tag {
                "N" => spec.name = rest.trim().into(),
                "I" => {
                    if fields.len() != 4 {
                        bail!("{}: want 4 fields", ctx());
                    }
                    spec.id = InputId {
                        bustype: hex(fields[0])?,
                        vendor: hex(fields[1])?,
                        product: hex(fields[2])?,
                        version: hex(fields[3])?,
                    };
                }
                "P" => {
                    let bytes: Vec<u8> = fields
                        .iter()
                        .map(|f| u8::from_str_radix(f, 16))
                        .collect::<Result<_, _>>()
                        .with_context(ctx)?;
                    spec.props.extend(bits_of(&bytes));
                }
                "B" => {
                    let Some((ty, bytes)) = fields.split_first() else {
                        bail!("{}: empty", ctx());
                    };
                    let ty = hex(ty)?;
                    let bytes: Vec<u8> = bytes
                        .iter()
                        .map(|f| u8::from_str_radix(f, 16))
                        .collect::<Result<_, _>>()
                        .with_context(ctx)?;
                    match bitmaps.iter_mut().find(|(t, _)| *t == ty) {
                        Some((_, b)) => b.extend(bytes),
                        None => bitmaps.push((ty, bytes)),
                    }
                }
                "A" => {
                    if fields.len() < 5 {
                        bail!("{}: want code min max fuzz flat [res]", ctx());
                    }
                    let int = |s: &str| s.parse::<i32>().with_context(ctx);
                    spec.abs.push((
                        hex(fields[0])?,
                        AbsInfo {
                            value: 0,
                            minimum: int(fields[1])?,
                            maximum: int(fields[2])?,
                            fuzz: int(fields[3])?,
                            flat: int(fields[4])?,
                            resolution: fields.get(5).map(|s| int(s)).transpose()?.unwrap_or(0),
                        },
                    ));
                }
                _ => {}
            }
        }
        for (ty, bytes) in bitmaps {
            let codes = bits_of(&bytes);
            match ty {
                EV_KEY => spec.keys = codes,
                EV_REL => spec.rels = codes,
                EV_MSC => spec.mscs = codes,
                _ => {}
            }
        }
        if spec.name.is_empty() {
            bail!("evemu description without N: line");
        }
        Ok(spec)
    }
}

/// A live uinput device; destroyed when dropped (closing the fd destroys it).
#[derive(Debug)]
pub struct UinputDevice {
    fd: OwnedFd,
    node: PathBuf,
}

impl UinputDevice {
    /// Creates the device and finds its evdev node (`UI_GET_SYSNAME` →
    /// `/sys/devices/virtual/input/inputN/eventM`).
    pub fn create(spec: &UinputSpec) -> anyhow::Result<UinputDevice> {
        let fd = sys::open(Path::new("/dev/uinput"), libc::O_WRONLY | libc::O_NONBLOCK)
            .context("cannot open /dev/uinput")?;
        let set = |req: u32, code: u16, what: &str| {
            sys::ioctl_int(&fd, req, code.into())
                .with_context(|| format!("uinput {what} {code:#x} for {:?}", spec.name))
        };
        if !spec.keys.is_empty() {
            set(sys::UI_SET_EVBIT, EV_KEY, "EV_KEY")?;
        }
        if !spec.rels.is_empty() {
            set(sys::UI_SET_EVBIT, EV_REL, "EV_REL")?;
        }
        if !spec.mscs.is_empty() {
            set(sys::UI_SET_EVBIT, EV_MSC, "EV_MSC")?;
        }
        if !spec.abs.is_empty() {
            set(sys::UI_SET_EVBIT, EV_ABS, "EV_ABS")?;
        }
        for &k in &spec.keys {
            set(sys::UI_SET_KEYBIT, k, "key")?;
        }
        for &r in &spec.rels {
            set(sys::UI_SET_RELBIT, r, "rel")?;
        }
        for &m in &spec.mscs {
            set(sys::UI_SET_MSCBIT, m, "msc")?;
        }
        for &p in &spec.props {
            set(sys::UI_SET_PROPBIT, p, "prop")?;
        }
        for &(code, info) in &spec.abs {
            set(sys::UI_SET_ABSBIT, code, "abs")?;
            let mut setup = UinputAbsSetup {
                code,
                absinfo: info,
            };
            // SAFETY: `setup` is a `struct uinput_abs_setup`, the size the request encodes.
            unsafe { sys::ioctl_ptr(&fd, sys::UI_ABS_SETUP, &mut setup) }
                .with_context(|| format!("UI_ABS_SETUP {code:#x}"))?;
        }
        if !spec.phys.is_empty() {
            let phys = std::ffi::CString::new(spec.phys.as_str())?;
            // SAFETY: UI_SET_PHYS takes a pointer to a NUL-terminated string.
            unsafe { sys::ioctl_ptr(&fd, sys::UI_SET_PHYS, phys.as_ptr().cast_mut()) }
                .context("UI_SET_PHYS")?;
        }
        let mut setup = UinputSetup {
            id: spec.id,
            name: sys::c_array(&spec.name),
            ff_effects_max: 0,
        };
        // SAFETY: `setup` is a `struct uinput_setup`, the size the request encodes.
        unsafe { sys::ioctl_ptr(&fd, sys::UI_DEV_SETUP, &mut setup) }.context("UI_DEV_SETUP")?;
        sys::ioctl_int(&fd, sys::UI_DEV_CREATE, 0).context("UI_DEV_CREATE")?;
        let mut sysname = [0u8; 64];
        // SAFETY: `sysname` is 64 bytes, the length the request encodes.
        unsafe {
            sys::ioctl_ptr(
                &fd,
                sys::ui_get_sysname(sysname.len()),
                sysname.as_mut_ptr(),
            )
        }
        .context("UI_GET_SYSNAME")?;
        let dir = PathBuf::from("/sys/devices/virtual/input").join(sys::c_str(&sysname));
        let event = std::fs::read_dir(&dir)
            .with_context(|| format!("read {}", dir.display()))?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with("event"))
            .with_context(|| format!("no event node under {}", dir.display()))?;
        Ok(UinputDevice {
            fd,
            node: PathBuf::from("/dev/input").join(event),
        })
    }

    /// `/dev/input/eventN` of this device.
    pub fn node(&self) -> &Path {
        &self.node
    }

    /// The node's identity as a reader sees it.
    pub fn info(&self) -> anyhow::Result<NodeInfo> {
        Ok(crate::evdev::EvdevNode::open(&self.node)?.info().clone())
    }

    /// Emits `events` and a `SYN_REPORT` in one `write()`.
    pub fn emit(&self, events: &[Event]) -> anyhow::Result<()> {
        let mut buf: Vec<InputEvent> = events
            .iter()
            .map(|e| InputEvent {
                type_: e.type_,
                code: e.code,
                value: e.value,
                ..InputEvent::default()
            })
            .collect();
        buf.push(InputEvent {
            type_: EV_SYN,
            code: SYN_REPORT,
            ..InputEvent::default()
        });
        // SAFETY: `InputEvent` is plain old data; the byte view covers exactly `buf`.
        let bytes = unsafe {
            std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), std::mem::size_of_val(&*buf))
        };
        sys::write_all_once(&self.fd, bytes).context("uinput write")
    }
}

/// Frames of an evemu event recording (`E: sec.usec type code value`), split at
/// `SYN_REPORT`; other lines are skipped.
pub fn evemu_frames(text: &str) -> anyhow::Result<Vec<Vec<Event>>> {
    let mut frames = Vec::new();
    let mut cur = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix("E:") else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() != 4 {
            bail!("evemu events line {}: {line:?}", n + 1);
        }
        let ty = u16::from_str_radix(f[1], 16)?;
        let code = u16::from_str_radix(f[2], 16)?;
        let value: i32 = f[3].parse()?;
        if ty == EV_SYN && code == SYN_REPORT {
            frames.push(std::mem::take(&mut cur));
        } else {
            cur.push(Event::new(ty, code, value));
        }
    }
    Ok(frames)
}

fn bits_of(bytes: &[u8]) -> Vec<u16> {
    (0..bytes.len() * 8)
        .filter(|&i| bytes[i / 8] & (1 << (i % 8)) != 0)
        .map(|i| i as u16)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evemu_description_gives_name_id_bits_and_axes() {
        let text = "N: Test Pad\nI: 0011 0002 0007 01b1\nP: 05 00\nB: 00 0b\nB: 01 00 00\nB: 01 00 00 00 00 00 00 00 00 00 40\nB: 03 03 00\nA: 00 1472 5472 8 0\nA: 01 1408 4448 8 0 12\n";
        let spec = UinputSpec::from_evemu(text, "isa0060/serio1/input0").unwrap();
        assert_eq!(spec.name, "Test Pad");
        assert_eq!(
            spec.id,
            InputId {
                bustype: 0x11,
                vendor: 2,
                product: 7,
                version: 0x1b1
            }
        );
        assert_eq!(spec.props, vec![0, 2]);
        // Byte 11 of the continued key bitmap (2 + 9 bytes before it), bit 6.
        assert_eq!(spec.keys, vec![11 * 8 + 6]);
        assert_eq!(spec.abs.len(), 2);
        assert_eq!(spec.abs[1].1.resolution, 12);
        assert_eq!(spec.phys, "isa0060/serio1/input0");
    }

    #[test]
    fn evemu_events_split_at_syn_report() {
        let text =
            "# c\nE: 0.0 0003 0000 5\nE: 0.0 0000 0000 0\nE: 0.1 0001 014a 1\nE: 0.1 0000 0000 0\n";
        let frames = evemu_frames(text).unwrap();
        assert_eq!(
            frames,
            vec![
                vec![Event::new(EV_ABS, 0, 5)],
                vec![Event::new(EV_KEY, 0x14a, 1)]
            ]
        );
    }
}
