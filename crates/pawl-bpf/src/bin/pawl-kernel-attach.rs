//! `pawl-kernel-attach`: attaches pawl's HID-BPF program to one HID device, run as root by
//! the udev rule `contrib/71-pawl-kernel-mode.rules` when a handled device binds, and
//! detaches it when the device goes.
//!
//! ```text
//! pawl-kernel-attach add HID [--uid UID] [--unit V120]   attach (replacing an older one)
//! pawl-kernel-attach remove HID                          detach, unpin
//! pawl-kernel-attach --detach [HID]                      the same, every device without HID
//! ```
//!
//! `HID` is the sysfs name (`0005:046D:B034.0003`, udev's `%k`). Pins go to
//! `/run/pawl/bpf/HID/` for the seat user (`--uid`, else seat0's active session, else
//! root only). Exit status: 0 done, 1 failed, 2 usage, 3 the kernel has no HID-BPF,
//! 4 the executable is not safely installed (not root's, or writable by others), 5 the
//! device is not one kernel mode handles (no wheel the program can reach).
#![cfg_attr(not(target_os = "linux"), allow(unused))]

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("pawl-kernel-attach: HID-BPF is Linux-only");
    std::process::exit(3);
}

#[cfg(target_os = "linux")]
fn main() {
    std::process::exit(linux::run(&std::env::args().skip(1).collect::<Vec<_>>()));
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::PathBuf;

    use pawl_bpf::attach::{self, AttachOptions, Failure};
    use pawl_bpf::pins;

    const USAGE: &str =
        "usage: pawl-kernel-attach add HID [--uid UID] [--unit V120] | remove HID | --detach [HID]";

    pub fn run(args: &[String]) -> i32 {
        match parse(args).and_then(|cmd| go(&cmd)) {
            Ok(msg) => {
                println!("pawl-kernel-attach: {msg}");
                0
            }
            Err(Stop::Usage(why)) => {
                eprintln!("pawl-kernel-attach: {why}\n{USAGE}");
                2
            }
            Err(Stop::Failure(f)) => {
                eprintln!("pawl-kernel-attach: {f}");
                f.status()
            }
        }
    }

    enum Stop {
        Usage(String),
        Failure(Failure),
    }

    impl From<Failure> for Stop {
        fn from(f: Failure) -> Stop {
            Stop::Failure(f)
        }
    }

    struct Cmd {
        add: bool,
        name: Option<String>,
        uid: Option<u32>,
        unit: Option<u8>,
    }

    fn parse(args: &[String]) -> Result<Cmd, Stop> {
        let mut it = args.iter();
        let verb = it.next().ok_or_else(|| Stop::Usage("no command".into()))?;
        let add = match verb.as_str() {
            "add" => true,
            "remove" | "--detach" => false,
            other => return Err(Stop::Usage(format!("unknown command {other:?}"))),
        };
        let mut cmd = Cmd {
            add,
            name: None,
            uid: None,
            unit: None,
        };
        while let Some(a) = it.next() {
            let mut value = |what: &str| {
                it.next()
                    .and_then(|v| v.parse::<u32>().ok())
                    .ok_or_else(|| Stop::Usage(format!("{what} needs a number")))
            };
            match a.as_str() {
                "--uid" if add => cmd.uid = Some(value("--uid")?),
                "--unit" if add => {
                    let u = value("--unit")?;
                    cmd.unit = Some(
                        u8::try_from(u)
                            .ok()
                            .filter(|u| (1..=120).contains(u))
                            .ok_or_else(|| Stop::Usage("--unit is 1..=120 v120".into()))?,
                    );
                }
                n if cmd.name.is_none() && pins::is_hid_name(n) => cmd.name = Some(n.to_owned()),
                other => return Err(Stop::Usage(format!("unexpected {other:?}"))),
            }
        }
        if cmd.name.is_none() && (add || verb == "remove") {
            return Err(Stop::Usage(
                "no HID device name (BUS:VENDOR:PRODUCT.ID)".into(),
            ));
        }
        Ok(cmd)
    }

    fn go(cmd: &Cmd) -> Result<String, Stop> {
        let exe = std::env::current_exe()
            .map_err(|e| Failure::Untrusted(PathBuf::from("/proc/self/exe"), e.to_string()))?;
        attach::check_trusted(&exe)?;
        let root = PathBuf::from(pins::PIN_ROOT);
        let sysfs = PathBuf::from(attach::SYSFS_HID);
        if !cmd.add {
            let names: Vec<String> = match &cmd.name {
                Some(n) => vec![n.clone()],
                None => std::fs::read_dir(&root)
                    .map(|d| {
                        d.flatten()
                            .filter_map(|e| pins::hid_name_of_dir(&e.file_name().to_string_lossy()))
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            for n in &names {
                attach::detach(&root, n)?;
            }
            attach::sweep(&root, &sysfs)?;
            if cmd.name.is_none() {
                // `--detach` (the package's prerm): nothing left mounted either.
                attach::unmount_if_empty(&root)?;
            }
            // A running pawl holding the pins leaves kernel mode (or reopens them).
            attach::announce(&root);
            return Ok(format!("detached {}", names.join(", ")));
        }
        let name = cmd.name.as_deref().expect("parse checked");
        if !attach::has_hid_bpf() {
            return Err(Failure::NoHidBpf.into());
        }
        attach::ensure_bpffs(&root)?;
        attach::sweep(&root, &sysfs)?;
        let uid = cmd.uid.or_else(attach::seat_uid);
        let a = attach::attach(
            name,
            &AttachOptions {
                root,
                sysfs,
                uid,
                unit_v120: cmd.unit,
                drop_caps: true,
            },
        )?;
        let l = a.layout;
        if let Some(e) = &a.needed_more_caps {
            eprintln!(
                "pawl-kernel-attach: with only CAP_BPF + CAP_PERFMON: {e}; attached with \
                 root's capabilities"
            );
        }
        Ok(format!(
            "attached to {name} (report {}, wheel bit {} size {}, pan bit {} size {}, HID++ {}, \
             unit {} v120; verified_insns {}, xlated {} insns; capabilities: {}), pins in {} \
             for {}",
            l.report_id,
            l.wheel.bit,
            l.wheel.bits,
            l.pan.bit,
            l.pan.bits,
            if l.hidpp { "yes" } else { "no" },
            a.unit_v120,
            a.verified_insns,
            a.xlated_insns,
            if a.needed_more_caps.is_none() {
                "CAP_BPF + CAP_PERFMON"
            } else {
                "all of root's"
            },
            a.dir.display(),
            uid.map_or("root only (no seat user)".to_owned(), |u| format!(
                "uid {u}"
            )),
        ))
    }
}
