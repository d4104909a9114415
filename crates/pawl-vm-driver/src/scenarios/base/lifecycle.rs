//! Lifecycle: one managed worker (the lock decides, never `pawl.json`). `pawl on|off|status`
//! against a real kernel (the worker grabs a uhid MX Master 3S), `pawl inspect` reading
//! without grabbing, `pawl devices` exit codes.
//!
//! Every scenario gets its own runtime directory (`XDG_RUNTIME_DIR`), so lock and metadata
//! start fresh; workers are counted from `/proc` (processes running `pawl --worker run`,
//! zombies excluded: a killed worker that nobody has reaped yet holds nothing).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::evdev::{EvdevNode, NodeInfo};
use crate::hid::{HidMouse, MX_MASTER_3S_BT};
use crate::scenarios::Scenario;
use crate::scenarios::{Ctx, T_DEVICE};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    off_when_not_running,
    lifecycle_100_cycles,
    concurrent_on_starts_one,
    kill9_then_status_reports_stale_and_on_recovers,
    off_never_signals_a_process_that_does_not_hold_the_lock,
    pid_reuse_not_mistaken,
    inspect_shows_events_without_grabbing,
    devices_exit_code,
];

/// A pawl command line environment: its own runtime and config directories.
struct Env {
    pawl: PathBuf,
    runtime: PathBuf,
    home: PathBuf,
}

impl Env {
    fn new(ctx: &mut Ctx) -> anyhow::Result<Env> {
        let runtime = ctx.subdir("run")?;
        let home = ctx.subdir("home")?;
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )?;
        Ok(Env {
            pawl: ctx.pawl.clone(),
            runtime,
            home,
        })
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.pawl);
        cmd.args(args)
            .env_clear()
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join("config"))
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `pawl args…` to completion: (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> anyhow::Result<(i32, String, String)> {
        let Output {
            status,
            stdout,
            stderr,
        } = self
            .command(args)
            .output()
            .with_context(|| format!("cannot run pawl {}", args.join(" ")))?;
        Ok((
            status.code().unwrap_or(-1),
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        ))
    }

    /// Runs and requires `code`; returns stdout.
    fn expect(&self, args: &[&str], code: i32) -> anyhow::Result<String> {
        let (got, out, err) = self.run(args)?;
        ensure!(
            got == code,
            "pawl {} exited {got}, want {code}; stdout {out:?} stderr {err:?}",
            args.join(" ")
        );
        Ok(out)
    }

    fn metadata(&self) -> PathBuf {
        self.runtime.join("pawl/pawl.json")
    }
}

/// Pids of live (not zombie) processes running `pawl --worker run`.
fn workers() -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        if !args.iter().any(|a| *a == b"--worker") || !args.iter().any(|a| *a == b"run") {
            continue;
        }
        let zombie = std::fs::read_to_string(e.path().join("stat"))
            .ok()
            .and_then(|s| {
                s.rfind(')')
                    .map(|i| s[i + 1..].trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if !zombie {
            pids.push(pid);
        }
    }
    pids.sort_unstable();
    pids
}

/// The pid in a line "started (pid N)…" / "already running (pid N)" / "stopped (pid N)".
fn pid_in(line: &str) -> anyhow::Result<u32> {
    let rest = line
        .split_once("(pid ")
        .with_context(|| format!("no pid in {line:?}"))?
        .1;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .with_context(|| format!("no pid in {line:?}"))
}

/// Waits until `cond` holds (polling every 5 ms), up to `timeout`.
fn wait_until(what: &str, timeout: Duration, cond: impl Fn() -> bool) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    while !cond() {
        if Instant::now() >= deadline {
            bail!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// Whether `pid` has exited: no such process, or a zombie (its cmdline empties before it
/// becomes one, so [`workers`] alone says too early).
fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .is_some_and(|i| matches!(stat[i + 1..].trim_start().chars().next(), Some('Z' | 'X'))),
        Err(_) => true,
    }
}

/// `kill -9 pid` (busybox).
fn kill9(pid: u32) -> anyhow::Result<()> {
    let status = Command::new("/bin/kill")
        .args(["-9", &pid.to_string()])
        .status()
        .context("run kill")?;
    ensure!(status.success(), "kill -9 {pid}: {status}");
    Ok(())
}

/// Whether `lines` has an event line of `code` with `value` whose note contains `note`.
fn has_event(lines: &[String], code: &str, value: &str, note: &str) -> bool {
    lines.iter().any(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        words.windows(2).any(|w| w[0] == code && w[1] == value) && l.contains(note)
    })
}

/// A uhid MX Master 3S and its evdev node.
fn mx_master(ctx: &mut Ctx) -> anyhow::Result<(HidMouse, NodeInfo)> {
    let phys = ctx.phys("bt");
    let mouse = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys)?;
    let node = mouse.wait_node(T_DEVICE)?;
    Ok((mouse, node))
}

/// The `eventN` name of a node.
trait NodeName {
    fn node(&self) -> String;
}

impl NodeName for NodeInfo {
    fn node(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Prints a command and its output as `# ` lines (the transcript in the VM log).
fn show(args: &[&str], code: i32, out: &str) {
    println!("# $ pawl {}", args.join(" "));
    for line in out.lines() {
        println!("# {line}");
    }
    if code != 0 {
        println!("# (exit {code})");
    }
}

/// on, duplicate on, status, off × 100 with a real device grabbed: exactly one worker after
/// each on, none after each off, no metadata left. The grab is the kernel's word, not
/// pawl's: after each on a second `EVIOCGRAB` of the mouse's node gets `EBUSY`, after each
/// off it succeeds.
pub fn lifecycle_100_cycles(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (_mouse, node) = mx_master(ctx)?;
    let probe = EvdevNode::open(&node.path)?;
    ensure!(
        probe.is_free_to_grab()?,
        "{} is grabbed before the test",
        node.path.display()
    );
    let env = Env::new(ctx)?;
    ensure!(
        workers().is_empty(),
        "workers before the test: {:?}",
        workers()
    );
    let started = Instant::now();
    for i in 0..100 {
        let out = env
            .expect(&["on"], 0)
            .with_context(|| format!("cycle {i}"))?;
        ensure!(
            out.starts_with("started (pid "),
            "cycle {i}: on printed {out:?}"
        );
        ensure!(
            out.contains(&node.path.display().to_string()),
            "cycle {i}: on did not grab {}: {out:?}",
            node.path.display()
        );
        let pid = pid_in(&out)?;
        ensure!(
            workers() == [pid],
            "cycle {i}: workers {:?} after on, want [{pid}]",
            workers()
        );
        // `on` returns once the worker reported its grab, so the probe cannot race it.
        ensure!(
            !probe.is_free_to_grab()?,
            "cycle {i}: nobody holds the grab of {} after on",
            node.path.display()
        );
        let dup = env.expect(&["on"], 0)?;
        ensure!(
            dup.trim_end() == format!("already running (pid {pid})"),
            "cycle {i}: second on printed {dup:?}"
        );
        ensure!(
            workers() == [pid],
            "cycle {i}: workers {:?} after the second on",
            workers()
        );
        let status = env.expect(&["status"], 0)?;
        ensure!(
            status.starts_with(&format!("running (pid {pid}, up ")),
            "cycle {i}: status {status:?}"
        );
        let off = env.expect(&["off"], 0)?;
        ensure!(
            off.trim_end() == format!("stopped (pid {pid})"),
            "cycle {i}: off printed {off:?}"
        );
        ensure!(
            workers().is_empty(),
            "cycle {i}: workers {:?} after off",
            workers()
        );
        ensure!(
            !env.metadata().exists(),
            "cycle {i}: metadata left after off"
        );
        ensure!(
            probe.is_free_to_grab()?,
            "cycle {i}: {} is still grabbed after off",
            node.path.display()
        );
    }
    println!(
        "# lifecycle_100_cycles: 100 × (on, on, status, off) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Eight `pawl on` started at the same instant start one worker; the others report it.
pub fn concurrent_on_starts_one(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (_mouse, _node) = mx_master(ctx)?;
    let env = Env::new(ctx)?;
    let children: Vec<Child> = (0..8)
        .map(|_| {
            env.command(&["on"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .context("spawn pawl on")
        })
        .collect::<anyhow::Result<_>>()?;
    let mut outs = Vec::new();
    for c in children {
        let o = c.wait_with_output()?;
        ensure!(
            o.status.success(),
            "a pawl on failed: {} {:?}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        outs.push(String::from_utf8_lossy(&o.stdout).trim_end().to_owned());
    }
    let started: Vec<&String> = outs.iter().filter(|o| o.starts_with("started")).collect();
    ensure!(
        started.len() == 1,
        "{} workers started: {outs:?}",
        started.len()
    );
    let pid = pid_in(started[0])?;
    for o in &outs {
        ensure!(
            o.starts_with("started") || *o == format!("already running (pid {pid})"),
            "unexpected output {o:?} (all: {outs:?})"
        );
    }
    ensure!(workers() == [pid], "workers {:?}, want [{pid}]", workers());
    env.expect(&["off"], 0)?;
    ensure!(workers().is_empty(), "workers {:?} after off", workers());
    Ok(())
}

/// A worker killed with SIGKILL leaves metadata; `status` calls it stale (exit 1), the
/// kernel has released the grab, and `pawl on` cleans up and starts a new worker.
pub fn kill9_then_status_reports_stale_and_on_recovers(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (_mouse, node) = mx_master(ctx)?;
    let env = Env::new(ctx)?;
    let pid = pid_in(&env.expect(&["on"], 0)?)?;
    kill9(pid)?;
    wait_until("the killed worker to die", Duration::from_secs(5), || {
        dead(pid)
    })?;
    ensure!(
        env.metadata().exists(),
        "SIGKILL left no metadata (nothing to test)"
    );
    let status = env.expect(&["status"], 1)?;
    println!("# $ kill -9 {pid}");
    show(&["status"], 1, &status);
    ensure!(
        status.contains(&format!("stale metadata: pid {pid}, process gone")),
        "status {status:?}"
    );
    let json = env.expect(&["status", "--json"], 1)?;
    ensure!(
        json.trim_end() == format!(r#"{{"pid":{pid},"reason":"process-gone","state":"stale"}}"#),
        "status --json {json:?}"
    );
    let probe = EvdevNode::open(&node.path)?;
    ensure!(
        probe.is_free_to_grab()?,
        "the killed worker's grab is still held"
    );
    drop(probe);
    let out = env.expect(&["on"], 0)?;
    show(&["on"], 0, &out);
    let new = pid_in(&out)?;
    ensure!(
        new != pid && out.starts_with("started"),
        "on after kill -9: {out:?}"
    );
    ensure!(workers() == [new], "workers {:?}, want [{new}]", workers());
    env.expect(&["status"], 0)?;
    env.expect(&["off"], 0)?;
    Ok(())
}

/// Metadata naming a live process that is not the worker (its pid reused: same pid,
/// another start time) is stale; `off` does not signal that process.
pub fn pid_reuse_not_mistaken(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (_mouse, _node) = mx_master(ctx)?;
    let env = Env::new(ctx)?;
    let pid = pid_in(&env.expect(&["on"], 0)?)?;
    let meta = std::fs::read_to_string(env.metadata())?;
    kill9(pid)?;
    wait_until("the killed worker to die", Duration::from_secs(5), || {
        dead(pid)
    })?;
    // A process now holds a pid the metadata names: what pid reuse looks like.
    let mut other = Command::new("/bin/sleep")
        .arg("60")
        .spawn()
        .context("spawn sleep")?;
    let reused = other.id();
    let edited = meta.replacen(
        &format!("\"pid\": {pid},"),
        &format!("\"pid\": {reused},"),
        1,
    );
    ensure!(edited != meta, "metadata has no \"pid\": {pid}: {meta}");
    std::fs::write(env.metadata(), edited)?;
    let status = env.expect(&["status"], 1)?;
    ensure!(
        status.contains(&format!("pid {reused}, pid reused by another process")),
        "status {status:?}"
    );
    let off = env.expect(&["off"], 0)?;
    ensure!(
        off.starts_with(&format!(
            "not running (removed stale metadata of pid {reused}"
        )),
        "off {off:?}"
    );
    std::thread::sleep(Duration::from_millis(50));
    ensure!(
        other.try_wait()?.is_none(),
        "off signalled pid {reused}, which is not pawl"
    );
    let _ = other.kill();
    let _ = other.wait();
    ensure!(!env.metadata().exists(), "stale metadata left");
    env.expect(&["status"], 3)?;
    Ok(())
}

/// Replaces the value of `"key": …,` in pretty-printed metadata.
fn set_field(meta: &str, key: &str, value: u64) -> anyhow::Result<String> {
    let prefix = format!("\"{key}\": ");
    let mut found = false;
    let lines: Vec<String> = meta
        .lines()
        .map(|l| match l.trim_start().strip_prefix(&prefix) {
            Some(_) => {
                found = true;
                let indent = &l[..l.len() - l.trim_start().len()];
                format!("{indent}{prefix}{value},")
            }
            None => l.to_owned(),
        })
        .collect();
    ensure!(found, "no {key} in {meta}");
    Ok(lines.join("\n") + "\n")
}

/// Metadata a real worker wrote, moved onto a live process with that process's
/// true pid and start time while nobody holds the lock (a copied or forged file): `status`
/// calls it stale, not running, and `off` leaves the process alone.
pub fn off_never_signals_a_process_that_does_not_hold_the_lock(
    ctx: &mut Ctx,
) -> anyhow::Result<()> {
    let env = Env::new(ctx)?;
    let pid = pid_in(&env.expect(&["on"], 0)?)?;
    let meta = std::fs::read_to_string(env.metadata())?;
    env.expect(&["off"], 0)?;
    let mut other = Command::new("/bin/sleep")
        .arg("60")
        .spawn()
        .context("spawn sleep")?;
    let victim = other.id();
    let stat = std::fs::read_to_string(format!("/proc/{victim}/stat"))?;
    let start: u64 = stat[stat.rfind(')').context("stat")? + 1..]
        .split_whitespace()
        .nth(19)
        .and_then(|f| f.parse().ok())
        .context("no start time in stat")?;
    let forged = set_field(
        &set_field(&meta, "pid", victim.into())?,
        "start_time",
        start,
    )?;
    ensure!(forged.contains(&format!("\"pid\": {victim},")), "{forged}");
    std::fs::write(env.metadata(), forged)?;
    let status = env.expect(&["status"], 1)?;
    show(&["status"], 1, &status);
    ensure!(
        status.contains(&format!(
            "stale metadata: pid {victim}, that process does not hold the lock"
        )),
        "status {status:?} (worker was {pid})"
    );
    let off = env.expect(&["off"], 0)?;
    show(&["off"], 0, &off);
    std::thread::sleep(Duration::from_millis(50));
    ensure!(
        other.try_wait()?.is_none(),
        "off signalled pid {victim}, which does not hold the lock"
    );
    let _ = other.kill();
    let _ = other.wait();
    ensure!(!env.metadata().exists(), "forged metadata left");
    env.expect(&["status"], 3)?;
    Ok(())
}

/// `off` with nothing running is fine and says so; `status` says stopped with exit 3.
pub fn off_when_not_running(ctx: &mut Ctx) -> anyhow::Result<()> {
    let env = Env::new(ctx)?;
    for args in [&["off"][..], &["off"], &["status"]] {
        let code = if args == ["status"] { 3 } else { 0 };
        let out = env.expect(args, code)?;
        let want = if code == 3 { "stopped" } else { "not running" };
        ensure!(out.trim_end() == want, "pawl {args:?} printed {out:?}");
    }
    // Without the runtime directory at all.
    std::fs::remove_dir_all(&env.runtime)?;
    let out = env.expect(&["off"], 0)?;
    ensure!(out.trim_end() == "not running", "off printed {out:?}");
    Ok(())
}

/// `pawl inspect` prints a device's events with names and pawl's button numbers while
/// another reader still gets every event (nothing grabbed); `--record` writes an evemu
/// file that `pawl replay` reads.
pub fn inspect_shows_events_without_grabbing(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (mut mouse, node) = mx_master(ctx)?;
    let env = Env::new(ctx)?;
    let path = node.path.display().to_string();
    let record = ctx.work.join("mx.events");
    let mut inspect = env
        .command(&["inspect", "--device", &path, "--record"])
        .arg(&record)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("spawn pawl inspect")?;
    let mut lines = BufReader::new(inspect.stdout.take().context("no stdout")?).lines();
    // The header ends with the column titles.
    let mut header = Vec::new();
    for line in lines.by_ref() {
        let line = line?;
        let done = line.contains("time  device");
        header.push(line);
        if done {
            break;
        }
    }
    ensure!(
        header
            .iter()
            .any(|l| l.contains("MX Master 3S") && l.contains("handled")),
        "inspect header {header:?}"
    );
    let mut reader = EvdevNode::open(&node.path)?;
    ensure!(reader.is_free_to_grab()?, "inspect grabbed the device");
    mouse.motion(5, -3)?;
    mouse.press(3)?;
    mouse.release(3)?;
    mouse.wheel(1)?;
    let got = reader.frames(4, crate::scenarios::T_EVENT)?;
    ensure!(got.len() == 4, "the other reader got {got:?}");
    let mut seen: Vec<String> = Vec::new();
    let want = [
        ("REL_X", "5", ""),
        ("BTN_SIDE", "1", "button 3: back"),
        ("BTN_SIDE", "0", "button 3: back"),
        ("REL_WHEEL_HI_RES", "120", ""),
    ];
    let deadline = Instant::now() + crate::scenarios::T_EVENT;
    while !want.iter().all(|(c, v, n)| has_event(&seen, c, v, n)) {
        ensure!(Instant::now() < deadline, "inspect printed {seen:#?}");
        let Some(line) = lines.next() else {
            bail!("inspect ended: {seen:#?}");
        };
        seen.push(line?);
    }
    let _ = inspect.kill();
    let _ = inspect.wait();
    println!("# $ pawl inspect --device {path} --record mx.events");
    for l in header.iter().chain(&seen) {
        println!("# {l}");
    }
    let text = std::fs::read_to_string(&record)?;
    ensure!(
        // The name hid-logitech-hidpp gives the node: "Logitech " + the 0x0005 name.
        text.lines().any(|l| l == "N: Logitech MX Master 3S") && text.contains("E: "),
        "recording {text:?}"
    );
    let (code, out, err) = env.run(&["replay", record.to_str().context("path")?])?;
    ensure!(
        code == 0,
        "pawl replay of the recording: exit {code}: {out} {err}"
    );

    // A reader that went away ends inspect quietly (141), a full disk with one
    // message (74); never a panic (101).
    let (reader, writer) = std::io::pipe()?;
    drop(reader);
    let closed = env
        .command(&["inspect", "--device", &path])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()?;
    ensure!(
        closed.status.code() == Some(141) && closed.stderr.is_empty(),
        "inspect into a closed pipe: {} {:?}",
        closed.status,
        String::from_utf8_lossy(&closed.stderr)
    );
    let full = env
        .command(&["inspect", "--device", &path])
        .stdout(std::fs::OpenOptions::new().write(true).open("/dev/full")?)
        .stderr(Stdio::piped())
        .output()?;
    let err = String::from_utf8_lossy(&full.stderr);
    ensure!(
        full.status.code() == Some(74)
            && err.trim_end()
                == "pawl: cannot write to stdout: No space left on device (os error 28)",
        "inspect into /dev/full: {} {err:?}",
        full.status
    );

    // With the worker running, the source's events reach only pawl: inspect says so and
    // shows pawl's output on the clone.
    let pid = pid_in(&env.expect(&["on"], 0)?)?;
    let mut inspect = env
        .command(&["inspect"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("spawn pawl inspect")?;
    let mut lines = BufReader::new(inspect.stdout.take().context("no stdout")?).lines();
    let note = format!("{} is grabbed by pawl (pid {pid})", node.node());
    let mut header = Vec::new();
    for line in lines.by_ref() {
        let line = line?;
        let done = line.contains(&note);
        header.push(line);
        if done {
            break;
        }
    }
    let clone = header
        .last()
        .and_then(|l| l.rsplit_once("pawl's output is "))
        .map(|(_, c)| c.trim().to_owned())
        .with_context(|| format!("no grabbed-by-pawl note: {header:#?}"))?;
    mouse.motion(7, 0)?;
    let deadline = Instant::now() + crate::scenarios::T_EVENT;
    let mut seen: Vec<String> = Vec::new();
    while !seen
        .iter()
        .any(|l| l.contains(&clone) && l.contains("REL_X"))
    {
        ensure!(Instant::now() < deadline, "no REL_X on {clone}: {seen:#?}");
        let Some(line) = lines.next() else {
            bail!("inspect ended: {seen:#?}");
        };
        seen.push(line?);
    }
    let _ = inspect.kill();
    let _ = inspect.wait();
    ensure!(
        !seen
            .iter()
            .any(|l| l.contains(&format!(" {} ", node.node()))),
        "inspect saw the grabbed source's events: {seen:#?}"
    );
    println!("# $ pawl on; pawl inspect");
    for l in header.iter().chain(&seen) {
        println!("# {l}");
    }
    env.expect(&["off"], 0)?;
    Ok(())
}

/// `pawl devices` exits 1 without an MX Master, 0 with one, and names who grabs it.
pub fn devices_exit_code(ctx: &mut Ctx) -> anyhow::Result<()> {
    let env = Env::new(ctx)?;
    wait_until(
        "no MX Master node left by earlier scenarios",
        T_DEVICE,
        || {
            !crate::evdev::scan().iter().any(|n| {
                n.id.vendor == 0x046d && n.id.product == 0xb034 && !n.phys.starts_with("pawl/")
            })
        },
    )?;
    let (code, out, _) = env.run(&["devices"])?;
    show(&["devices"], code, &out);
    ensure!(
        code == 1 && out.contains("no MX Master connected"),
        "without: {code} {out:?}"
    );

    let (_mouse, node) = mx_master(ctx)?;
    let path = node.path.display().to_string();
    let (code, out, _) = env.run(&["devices"])?;
    show(&["devices"], code, &out);
    ensure!(code == 0, "with an MX Master: exit {code}: {out:?}");
    ensure!(
        out.contains(&path)
            && out.contains("MX Master family: MX Master 3S")
            && out.contains("not grabbed"),
        "devices {out:?}"
    );
    let json = env.expect(&["devices", "--json"], 0)?;
    ensure!(
        json.contains("\"mx_master_present\":true"),
        "devices --json {json}"
    );

    // Someone else grabs it.
    let holder = EvdevNode::open(&node.path)?;
    holder.grab()?;
    let (code, out, _) = env.run(&["devices"])?;
    ensure!(
        code == 0 && out.contains("grabbed by another process: one of pawl-vm-driver"),
        "devices while the driver grabs: {out:?}"
    );
    drop(holder);

    // pawl grabs it.
    for args in [&["on"][..], &["status"], &["devices"]] {
        let (code, out, _) = env.run(args)?;
        show(args, code, &out);
    }
    let (code, out, _) = env.run(&["devices"])?;
    ensure!(
        code == 0 && out.contains("grabbed by pawl (pid "),
        "devices with pawl on: {out:?}"
    );
    let (code, out, _) = env.run(&["off"])?;
    show(&["off"], code, &out);
    Ok(())
}
