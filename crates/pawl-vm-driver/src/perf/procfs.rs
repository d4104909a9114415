//! What `/proc` says about a process: the counters whose growth a workload is measured by,
//! and its memory and threads.
//!
//! Sources (Linux 6.1, `Documentation/filesystems/proc.rst`):
//! - `/proc/PID/stat` fields 14 and 15: `utime`, `stime` of the whole thread group, in clock
//!   ticks (`USER_HZ` = 100 on x86-64: 10 ms resolution);
//! - `/proc/PID/task/TID/schedstat` field 1: time on the CPU in ns, summed over threads (the
//!   same time at ns resolution);
//! - `/proc/PID/task/TID/status` `voluntary_ctxt_switches` / `nonvoluntary_ctxt_switches`:
//!   per thread, summed (the process's own `status` shows only the main thread's);
//! - `/proc/PID/io` `syscr` / `syscw`: read-like and write-like system calls of the thread
//!   group (`read`, `readv`, `pread64`, … / `write`, `writev`, …; `epoll_wait`, `ioctl` and
//!   `poll` are not counted);
//! - `/proc/PID/status` `VmRSS`, `VmHWM` (kB) and `Threads`. On 6.1 these come from split
//!   RSS counters (per-thread deltas folded into the process every 64 page faults), so a
//!   small process can show too little; `/proc/PID/smaps_rollup` `Rss` walks the page
//!   tables and is exact at the moment it is read.

use anyhow::Context;

/// Counters that only grow; a workload's cost is the difference of two readings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// `utime + stime`, clock ticks.
    pub cpu_ticks: u64,
    /// Time on the CPU, ns (schedstat, summed over threads).
    pub runtime_ns: u64,
    /// Voluntary context switches (the process blocked), summed over threads.
    pub vcsw: u64,
    /// Involuntary context switches (preempted), summed over threads.
    pub ivcsw: u64,
    /// Read-like system calls.
    pub syscr: u64,
    /// Write-like system calls.
    pub syscw: u64,
}

impl Counters {
    /// `self - earlier`, field by field (saturating: a thread that exited takes its counts
    /// with it).
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            cpu_ticks: self.cpu_ticks.saturating_sub(earlier.cpu_ticks),
            runtime_ns: self.runtime_ns.saturating_sub(earlier.runtime_ns),
            vcsw: self.vcsw.saturating_sub(earlier.vcsw),
            ivcsw: self.ivcsw.saturating_sub(earlier.ivcsw),
            syscr: self.syscr.saturating_sub(earlier.syscr),
            syscw: self.syscw.saturating_sub(earlier.syscw),
        }
    }
}

/// Memory and threads at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// Resident set, KiB (`VmRSS`: split counters, may lag).
    pub rss_kib: u64,
    /// Peak resident set, KiB (`VmHWM`: split counters, may lag).
    pub hwm_kib: u64,
    /// Resident set from the page tables, KiB (`smaps_rollup` `Rss`).
    pub rss_smaps_kib: u64,
    /// Threads.
    pub threads: u64,
}

/// Reads the [`Counters`] of process `pid`.
pub fn counters(pid: u32) -> anyhow::Result<Counters> {
    let stat = read(&format!("/proc/{pid}/stat"))?;
    let (utime, stime) =
        stat_times(&stat).with_context(|| format!("no utime/stime in /proc/{pid}/stat"))?;
    let io = read(&format!("/proc/{pid}/io"))?;
    let field = |text: &str, name: &str, file: &str| {
        field_u64(text, name).with_context(|| format!("no {name} in {file}"))
    };
    let mut c = Counters {
        cpu_ticks: utime + stime,
        syscr: field(&io, "syscr", "io")?,
        syscw: field(&io, "syscw", "io")?,
        ..Counters::default()
    };
    let tasks = format!("/proc/{pid}/task");
    for entry in std::fs::read_dir(&tasks).with_context(|| format!("read {tasks}"))? {
        let dir = entry?.path();
        // A thread that exits between listing and reading is skipped.
        let (Ok(status), Ok(schedstat)) = (
            std::fs::read_to_string(dir.join("status")),
            std::fs::read_to_string(dir.join("schedstat")),
        ) else {
            continue;
        };
        c.vcsw += field(&status, "voluntary_ctxt_switches", "status")?;
        c.ivcsw += field(&status, "nonvoluntary_ctxt_switches", "status")?;
        c.runtime_ns += schedstat
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .context("empty schedstat")?;
    }
    Ok(c)
}

/// Reads the [`Memory`] of process `pid`.
pub fn memory(pid: u32) -> anyhow::Result<Memory> {
    let status = read(&format!("/proc/{pid}/status"))?;
    let field = |name: &str| {
        field_u64(&status, name).with_context(|| format!("no {name} in /proc/{pid}/status"))
    };
    let rollup = read(&format!("/proc/{pid}/smaps_rollup"))?;
    Ok(Memory {
        rss_kib: field("VmRSS")?,
        hwm_kib: field("VmHWM")?,
        rss_smaps_kib: field_u64(&rollup, "Rss")
            .with_context(|| format!("no Rss in /proc/{pid}/smaps_rollup"))?,
        threads: field("Threads")?,
    })
}

fn read(path: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("read {path}"))
}

/// `utime` and `stime` (fields 14 and 15) of a `/proc/PID/stat` line. The command name
/// (field 2) is in parentheses and may hold spaces and parentheses: fields are counted
/// after the last `)`.
pub fn stat_times(stat: &str) -> Option<(u64, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (state).
    Some((fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?))
}

/// The number after `name:` in a `Name:\tvalue [kB]` or `name: value` text.
pub fn field_u64(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == name).then(|| v.split_whitespace().next()?.parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_times_are_fields_14_and_15_after_the_command_name() {
        let stat = "123 (kan ata) (x) S 1 123 123 0 -1 4194560 150 0 0 0 17 4 0 0 20 0 3 0 100 \
                    2000000 300 18446744073709551615";
        assert_eq!(stat_times(stat), Some((17, 4)));
    }

    #[test]
    fn status_fields_parse_with_and_without_units() {
        let status = "Name:\tpawl\nVmHWM:\t    2048 kB\nVmRSS:\t    1900 kB\nThreads:\t1\n\
                      voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(field_u64(status, "VmRSS"), Some(1900));
        assert_eq!(field_u64(status, "Threads"), Some(1));
        assert_eq!(field_u64(status, "voluntary_ctxt_switches"), Some(12));
        assert_eq!(field_u64(status, "ctxt_switches"), None);
        let io = "rchar: 10\nwchar: 20\nsyscr: 5\nsyscw: 7\n";
        assert_eq!(field_u64(io, "syscw"), Some(7));
    }

    #[test]
    fn differences_never_underflow() {
        let a = Counters {
            vcsw: 5,
            syscr: 10,
            ..Counters::default()
        };
        let b = Counters {
            vcsw: 3,
            syscr: 12,
            ..Counters::default()
        };
        assert_eq!(b.since(&a).vcsw, 0);
        assert_eq!(b.since(&a).syscr, 2);
    }
}
