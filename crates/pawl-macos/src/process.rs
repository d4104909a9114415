//! Process facts for `pawl status` / `pawl off`: a process's start time, which tells the
//! worker recorded in the metadata from a later process that reuses its pid.

/// What `proc_pidinfo(PROC_PIDTBSDINFO)` says about a pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessStart {
    /// A live process and its start time, µs after the Unix epoch
    /// (`pbi_start_tvsec × 10⁶ + pbi_start_tvusec`).
    Running(u64),
    /// Exited, not yet reaped (`pbi_status == SZOMB`).
    Zombie,
}

/// The start time of `pid`, `None` when there is no such process (or it is not visible).
pub fn start_time(pid: u32) -> Option<ProcessStart> {
    let pid = libc::c_int::try_from(pid).ok()?;
    // SAFETY: `proc_bsdinfo` is plain old data; all-zero is a valid value.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: `info` is a writable buffer of exactly `size` bytes, as PROC_PIDTBSDINFO
    // requires (<sys/proc_info.h>); the call writes at most `size` bytes.
    let n =
        unsafe { libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size) };
    if n != size {
        return None;
    }
    if info.pbi_status == libc::SZOMB {
        return Some(ProcessStart::Zombie);
    }
    Some(ProcessStart::Running(
        info.pbi_start_tvsec
            .saturating_mul(1_000_000)
            .saturating_add(info.pbi_start_tvusec),
    ))
}
