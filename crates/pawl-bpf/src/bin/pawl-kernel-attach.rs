//! `pawl-kernel-attach`: attaches pawl's HID-BPF program to one HID device, run as root by
//! the udev rule `contrib/71-pawl-kernel-mode.rules` when a handled device binds, detaches
//! it when the device goes, and hands the attachments to seat0's new user (run by
//! `contrib/pawl-kernel-reseat.service` when logind changes seat0's active session).
//!
//! ```text
//! pawl-kernel-attach add HID [--uid UID] [--unit V120]   attach (replacing an older one)
//! pawl-kernel-attach remove HID                          detach, unpin
//! pawl-kernel-attach --detach [HID]                      the same, every device without HID
//! pawl-kernel-attach reseat [--uid UID]                  re-attach for the seat user
//! ```
//!
//! `HID` is the sysfs name (`0005:046D:B034.0003`, udev's `%k`). Pins go to
//! `/run/pawl/bpf/HID/` for the seat user (`--uid`, else the active session's user on the
//! device's seat, `attach::device_seat`, else root only). `reseat` replaces, each for its
//! seat's user, every attachment whose device still exists and whose stats pin is another
//! user's (or root's): a fresh pass-through program
//! that only the new user can open, so that two users never share one ring or settings
//! map (the old user's pawl sees its maps unpinned and leaves kernel mode); attachments
//! already the user's are left alone. It attaches as `add` without `--unit` does (a unit
//! given by hand is not kept: the old settings map, which its user could write, is not
//! read). Replacing detaches first, so a device whose new attachment fails may be left
//! without the program (grab mode) until it binds again.
//!
//! Every command holds the loader's lock (`/run/pawl/loader.lock`, root's 0600) from start
//! to end, so that udev's parallel events and the reseat service take turns.
//!
//! `--detach` detaches every device it can (a failure does not stop it), reports the
//! others, then sweeps and unmounts the bpffs when nothing is left. `add` and `reseat`
//! keep only CAP_BPF, CAP_PERFMON and CAP_CHOWN once the bpffs is mounted and swept
//! (`attach::restrict_caps`); the environment is cleared before anything runs.
//!
//! Exit status: 0 done (or nothing to do), 1 failed (`reseat`, `--detach`: at least one
//! device could not be re-attached or detached; the others were), 2 usage, 3 the kernel has no HID-BPF (`reseat`:
//! only when something is to be replaced), 4 the executable is not safely installed (not
//! root's, or writable by others), 5 the device is not one kernel mode handles (no wheel
//! the program can reach).
#![cfg_attr(not(target_os = "linux"), allow(unused))]

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("pawl-kernel-attach: HID-BPF is Linux-only");
    std::process::exit(3);
}

#[cfg(target_os = "linux")]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Nothing from the environment is used, and libbpf reads some of it
    // (LIBBPF_BPF_TOKEN_PATH, LIBBPF_LOG_LEVEL, PATH and LD_LIBRARY_PATH for uprobes):
    // all of it goes before anything else runs.
    let keys: Vec<std::ffi::OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    for k in keys {
        // SAFETY: the loader has one thread, and nothing has read the environment yet.
        unsafe { std::env::remove_var(k) };
    }
    std::process::exit(linux::run(&args));
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::{Path, PathBuf};

    use pawl_bpf::attach::{self, AttachOptions, Failure};
    use pawl_bpf::pins;

    const USAGE: &str = "usage: pawl-kernel-attach add HID [--uid UID] [--unit V120] | remove HID \
                         | --detach [HID] | reseat [--uid UID]";

    pub fn run(args: &[String]) -> i32 {
        match parse(args).and_then(|cmd| go(&cmd)) {
            Ok(msg) => {
                for line in msg.lines() {
                    println!("pawl-kernel-attach: {line}");
                }
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

    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Verb {
        Add,
        Remove,
        Detach,
        Reseat,
    }

    struct Cmd {
        verb: Verb,
        name: Option<String>,
        uid: Option<u32>,
        unit: Option<u8>,
    }

    fn parse(args: &[String]) -> Result<Cmd, Stop> {
        let mut it = args.iter();
        let verb = match it.next().map(String::as_str) {
            None => return Err(Stop::Usage("no command".into())),
            Some("add") => Verb::Add,
            Some("remove") => Verb::Remove,
            Some("--detach") => Verb::Detach,
            Some("reseat") => Verb::Reseat,
            Some(other) => return Err(Stop::Usage(format!("unknown command {other:?}"))),
        };
        let mut cmd = Cmd {
            verb,
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
                "--uid" if matches!(verb, Verb::Add | Verb::Reseat) => {
                    let uid = value("--uid")?;
                    if uid == attach::NO_UID {
                        return Err(Stop::Usage(
                            "--uid 4294967295 is (uid_t)-1, not a user".into(),
                        ));
                    }
                    cmd.uid = Some(uid);
                }
                "--unit" if verb == Verb::Add => {
                    let u = value("--unit")?;
                    cmd.unit = Some(
                        u8::try_from(u)
                            .ok()
                            .filter(|u| (1..=120).contains(u))
                            .ok_or_else(|| Stop::Usage("--unit is 1..=120 v120".into()))?,
                    );
                }
                n if verb != Verb::Reseat && cmd.name.is_none() && pins::is_hid_name(n) => {
                    cmd.name = Some(n.to_owned());
                }
                other => return Err(Stop::Usage(format!("unexpected {other:?}"))),
            }
        }
        if cmd.name.is_none() && matches!(verb, Verb::Add | Verb::Remove) {
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
        let run_dir = root.parent().expect("PIN_ROOT has a parent").to_owned();
        if cmd.verb == Verb::Add {
            // Before anything is made: on a kernel without HID-BPF the loader leaves no trace.
            if !attach::has_hid_bpf() {
                return Err(Failure::NoHidBpf.into());
            }
            std::fs::create_dir_all(&run_dir)
                .map_err(|e| Failure::Failed(format!("mkdir {}: {e}", run_dir.display())))?;
        } else if !run_dir.exists() {
            // Nothing was ever attached since boot (the package's prerm in a chroot, or a
            // reseat before any mouse bound): nothing to lock, nothing to do; a loader
            // attaching meanwhile makes the directory and locks it.
            return Ok(match cmd.verb {
                Verb::Reseat => "nothing to reseat: nothing is attached".to_owned(),
                _ => "nothing is attached".to_owned(),
            });
        }
        let _lock = attach::lock(&run_dir)?;
        match cmd.verb {
            Verb::Add => add(cmd, root, sysfs),
            Verb::Remove | Verb::Detach => detach(cmd, &root, &sysfs),
            Verb::Reseat => reseat(cmd, root, sysfs),
        }
    }

    fn detach(cmd: &Cmd, root: &Path, sysfs: &Path) -> Result<String, Stop> {
        let names: Vec<String> = match &cmd.name {
            Some(n) => vec![n.clone()],
            None => std::fs::read_dir(root)
                .map(|d| {
                    d.flatten()
                        .filter_map(|e| pins::hid_name_of_dir(&e.file_name().to_string_lossy()))
                        .collect()
                })
                .unwrap_or_default(),
        };
        let (done, failed) = detach_each(&names, |n| attach::detach(root, n));
        let swept = attach::sweep(root, sysfs);
        let unmounted = if cmd.name.is_none() {
            // `--detach` (the package's prerm): nothing left mounted either.
            attach::unmount_if_empty(root).map(|_| ())
        } else {
            Ok(())
        };
        // A running pawl holding the pins leaves kernel mode (or reopens them).
        attach::announce(root);
        let msg = format!("detached {}", done.join(", "));
        if failed.is_empty() {
            swept?;
            unmounted?;
            return Ok(msg);
        }
        println!("pawl-kernel-attach: {msg}");
        Err(Failure::Failed(format!(
            "{} device(s) not detached: {}",
            failed.len(),
            failed.join("; ")
        ))
        .into())
    }

    /// Detaches each of `names` with `detach`, going on after a failure: the names done,
    /// and a line for each that failed (its name and error), both in `names`' order.
    fn detach_each(
        names: &[String],
        mut detach: impl FnMut(&str) -> Result<(), Failure>,
    ) -> (Vec<String>, Vec<String>) {
        let mut done = Vec::new();
        let mut failed = Vec::new();
        for n in names {
            match detach(n) {
                Ok(()) => done.push(n.clone()),
                Err(f) => failed.push(format!("{n}: {f}")),
            }
        }
        (done, failed)
    }

    fn add(cmd: &Cmd, root: PathBuf, sysfs: PathBuf) -> Result<String, Stop> {
        let name = cmd.name.as_deref().expect("parse checked");
        attach::ensure_bpffs(&root)?;
        attach::sweep(&root, &sysfs)?;
        attach::restrict_caps()?;
        let seat = attach::device_seat(&sysfs, Path::new(attach::UDEV_DATA), name);
        let uid = cmd
            .uid
            .or_else(|| attach::seat_uid_in(&attach::seat_state_path(&seat)));
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
        Ok(format!(
            "attached to {name} (report {}, wheel bit {} size {}, pan bit {} size {}, HID++ {}, \
             unit {} v120; verified_insns {}, xlated {} insns; capabilities kept: {}), pins in {} \
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
            attach::KEPT_CAPS,
            a.dir.display(),
            uid.map_or("root only (no seat user)".to_owned(), |u| format!(
                "uid {u}"
            )),
        ))
    }

    /// `reseat`: replaces every attachment [`attach::reseat_plan`] names for the target
    /// (`--uid`, else seat0's active user, else root), one after the other; a device that
    /// fails is reported and the others are still done. Without `--uid`, seat0's file is
    /// read again after each round and the round repeated until that read is the file the
    /// round acted on ([`attach::follow_until_stable`]): systemd does not start the
    /// service again for a change made while it runs, so the final state is never missed.
    fn reseat(cmd: &Cmd, root: PathBuf, sysfs: PathBuf) -> Result<String, Stop> {
        // The privileged steps first (the bpffs mounted if it is not, stale directories
        // removed), then only what attaching needs.
        if root.is_dir() {
            attach::ensure_bpffs(&root)?;
        }
        attach::sweep(&root, &sysfs)?;
        attach::restrict_caps()?;
        let mut done = Vec::new();
        let mut failed = Vec::new();
        let mut stop = None;
        let mut round = |target: &dyn Fn(&str) -> Option<u32>| {
            if stop.is_some() {
                return;
            }
            match reseat_for(target, &root, &sysfs, &mut done, &mut failed) {
                Ok(Some(nothing)) => done.push(nothing),
                Ok(None) => {}
                Err(e) => stop = Some(e),
            }
        };
        match cmd.uid {
            Some(u) => round(&|_: &str| Some(u).filter(|&u| u != 0)),
            None => {
                attach::follow_until_stable(
                    || seats_state(&root, &sysfs),
                    |seats| {
                        round(&|seat: &str| {
                            seats
                                .iter()
                                .find(|(s, _)| s == seat)
                                .and_then(|(_, text)| text.as_deref())
                                .and_then(attach::seat_uid_from)
                                .filter(|&u| u != 0)
                        })
                    },
                );
            }
        }
        if let Some(e) = stop {
            return Err(e);
        }
        if failed.is_empty() {
            return Ok(done.join("\n"));
        }
        for line in &done {
            println!("pawl-kernel-attach: {line}");
        }
        Err(Failure::Failed(format!(
            "{} attachment(s) not reseated: {}",
            failed.len(),
            failed.join("; ")
        ))
        .into())
    }

    /// The state files of seat0 and of every attached device's seat, by seat name, sorted
    /// (`None`: absent or untrusted): what a reseat round acts on.
    fn seats_state(root: &Path, sysfs: &Path) -> Vec<(String, Option<String>)> {
        let mut seats: Vec<String> = attach::seated(root, sysfs, Path::new(attach::UDEV_DATA))
            .into_iter()
            .map(|d| d.seat)
            .chain([attach::DEFAULT_SEAT.to_owned()])
            .collect();
        seats.sort();
        seats.dedup();
        seats
            .into_iter()
            .map(|s| {
                let text = attach::seat_state_in(&attach::seat_state_path(&s));
                (s, text)
            })
            .collect()
    }

    /// One round of `reseat`, each device for `target(its seat)` (`None`: root only): a line
    /// for each device replaced in `done`, for each that failed in `failed`; `Some(why)`
    /// when there was nothing to replace. Errors: the sweep's, or no HID-BPF when something
    /// is to be replaced.
    fn reseat_for(
        target: &dyn Fn(&str) -> Option<u32>,
        root: &Path,
        sysfs: &Path,
        done: &mut Vec<String>,
        failed: &mut Vec<String>,
    ) -> Result<Option<String>, Stop> {
        // Devices gone without a remove event are detached, not handed over.
        attach::sweep(root, sysfs)?;
        let dirs = attach::seated(root, sysfs, Path::new(attach::UDEV_DATA));
        let plan = attach::reseat_plan(&dirs, target);
        if dirs.is_empty() {
            return Ok(Some("nothing to reseat: nothing is attached".into()));
        }
        if plan.is_empty() {
            let mut users = dirs.iter().map(|d| target(&d.seat));
            let first = users.next().flatten();
            let whose = if users.all(|u| u == first) {
                first.map_or("root's".to_owned(), |u| format!("uid {u}'s"))
            } else {
                "its seat's user's".to_owned()
            };
            return Ok(Some(format!(
                "nothing to reseat: every attachment is {whose}"
            )));
        }
        if !attach::has_hid_bpf() {
            return Err(Failure::NoHidBpf.into());
        }
        attach::ensure_bpffs(root)?;
        for name in &plan {
            let seat = dirs
                .iter()
                .find(|d| &d.name == name)
                .map_or(attach::DEFAULT_SEAT, |d| d.seat.as_str());
            let uid = target(seat);
            let opts = AttachOptions {
                root: root.to_owned(),
                sysfs: sysfs.to_owned(),
                uid,
                unit_v120: None,
                drop_caps: true,
            };
            let for_whom = uid.map_or("root only (no seat user)".to_owned(), |u| {
                format!("uid {u}")
            });
            match attach::attach(name, &opts) {
                Ok(_) => done.push(format!("reseated {name} for {for_whom} ({seat})")),
                Err(f) => failed.push(format!("reseat {name}: {f}")),
            }
        }
        Ok(None)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn args(a: &[&str]) -> Vec<String> {
            a.iter().map(|s| s.to_string()).collect()
        }

        fn usage(a: &[&str]) -> String {
            match parse(&args(a)) {
                Err(Stop::Usage(why)) => why,
                Err(Stop::Failure(f)) => panic!("{a:?}: a failure, not a usage error: {f}"),
                Ok(_) => panic!("{a:?} was accepted"),
            }
        }

        #[test]
        fn detach_goes_on_after_a_device_that_fails_and_reports_it() {
            let names = args(&[
                "0005:046D:B034.0001",
                "0005:046D:B034.0002",
                "0005:046D:B034.0003",
            ]);
            let mut tried = Vec::new();
            let (done, failed) = detach_each(&names, |n| {
                tried.push(n.to_owned());
                if n.ends_with("0002") {
                    Err(Failure::Failed("rmdir: Device or resource busy".into()))
                } else {
                    Ok(())
                }
            });
            assert_eq!(tried, names, "every device is tried, in order");
            assert_eq!(done, ["0005:046D:B034.0001", "0005:046D:B034.0003"]);
            assert_eq!(
                failed,
                ["0005:046D:B034.0002: rmdir: Device or resource busy"]
            );
        }

        #[test]
        fn reseat_takes_only_a_uid() {
            let cmd = parse(&args(&["reseat"])).ok().unwrap();
            assert!(cmd.verb == Verb::Reseat && cmd.uid.is_none() && cmd.name.is_none());
            let cmd = parse(&args(&["reseat", "--uid", "1000"])).ok().unwrap();
            assert_eq!(cmd.uid, Some(1000));
            assert!(usage(&["reseat", "0005:046D:B034.0003"]).contains("unexpected"));
            assert!(usage(&["reseat", "--unit", "8"]).contains("unexpected"));
            assert!(usage(&["reseat", "--uid"]).contains("--uid needs a number"));
            assert!(usage(&["reseat", "--uid", "4294967295"]).contains("not a user"));
            assert!(
                usage(&["add", "0005:046D:B034.0003", "--uid", "4294967295"])
                    .contains("not a user")
            );
        }

        #[test]
        fn add_and_remove_need_a_device_and_only_add_takes_a_unit() {
            assert!(usage(&["add"]).contains("no HID device name"));
            assert!(usage(&["remove"]).contains("no HID device name"));
            assert!(usage(&["remove", "0005:046D:B034.0003", "--uid", "1"]).contains("unexpected"));
            let cmd = parse(&args(&["add", "0005:046D:B034.0003", "--unit", "8"]))
                .ok()
                .unwrap();
            assert!(cmd.verb == Verb::Add && cmd.unit == Some(8));
            assert!(usage(&["add", "0005:046D:B034.0003", "--unit", "121"]).contains("1..=120"));
            let cmd = parse(&args(&["--detach"])).ok().unwrap();
            assert!(cmd.verb == Verb::Detach && cmd.name.is_none());
            assert!(usage(&["attach"]).contains("unknown command"));
        }
    }
}
