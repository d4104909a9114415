//! The real `pawl` binary against forged runtime directories, closed pipes and full disks:
//! lifecycle trust, write errors, lifecycle answers and conventions. Each test runs pawl
//! with its own `XDG_RUNTIME_DIR`, `HOME` and `XDG_CONFIG_HOME` under a temporary
//! directory; nothing here needs a device.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const PAWL: &str = env!("CARGO_BIN_EXE_pawl");

/// `pawl status`, `off`, `on`, `run` when the lock's holder is not identified (LSB 4).
const EXIT_UNIDENTIFIED: i32 = 4;
/// stdout is a pipe without reader.
const EXIT_BROKEN_PIPE: i32 = 141;
/// stdout cannot be written (`/dev/full`).
const EXIT_WRITE_ERROR: i32 = 74;

/// A private environment: `<tmp>/run` as `XDG_RUNTIME_DIR` (mode 0700), `<tmp>/home`.
struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir(tmp.path().join("run")).unwrap();
        fs::set_permissions(tmp.path().join("run"), fs::Permissions::from_mode(0o700)).unwrap();
        fs::create_dir(tmp.path().join("home")).unwrap();
        Env { tmp }
    }

    fn runtime(&self) -> PathBuf {
        self.tmp.path().join("run/pawl")
    }

    fn metadata(&self) -> PathBuf {
        self.runtime().join("pawl.json")
    }

    fn lock(&self) -> PathBuf {
        self.runtime().join("pawl.lock")
    }

    /// The runtime directory as `pawl on` would make it.
    fn make_runtime(&self) {
        fs::create_dir_all(self.runtime()).unwrap();
        fs::set_permissions(self.runtime(), fs::Permissions::from_mode(0o700)).unwrap();
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(PAWL);
        cmd.args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("XDG_RUNTIME_DIR", self.tmp.path().join("run"))
            .env("HOME", self.tmp.path().join("home"))
            .env("XDG_CONFIG_HOME", self.tmp.path().join("home/config"))
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, args: &[&str]) -> Ran {
        Ran::from(self.command(args).output().unwrap())
    }
}

/// A finished pawl: exit code, stdout, stderr.
#[derive(Debug)]
struct Ran {
    code: i32,
    out: String,
    err: String,
}

impl From<Output> for Ran {
    fn from(o: Output) -> Ran {
        Ran {
            code: o.status.code().unwrap_or(-1),
            out: String::from_utf8_lossy(&o.stdout).into_owned(),
            err: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// A `sleep 300` that is not pawl: killed when dropped.
struct Bystander(Child);

impl Bystander {
    fn spawn() -> Bystander {
        Bystander(Command::new("sleep").arg("300").spawn().unwrap())
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    fn alive(&mut self) -> bool {
        self.0.try_wait().unwrap().is_none()
    }
}

impl Drop for Bystander {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Field 22 of `/proc/PID/stat` (start time in clock ticks), as pawl records it.
fn start_time(pid: u32) -> u64 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

/// Metadata in pawl's format naming `pid` with its real start time: what an attacker (or a
/// copied file) would write to pass pawl's old pid + start-time check.
fn forged_metadata(pid: u32) -> String {
    format!(
        r#"{{"pid": {pid}, "start_time": {}, "exe": "/usr/bin/pawl", "config": "defaults",
            "version": "0.0.0", "started_at": 0,
            "devices": [{{"path": "/dev/input/event3", "name": "MX\u001b]0;pwned\u0007\u001b[2J",
                          "vendor": 1133, "product": 45108}}]}}"#,
        start_time(pid)
    )
}

/// Holds `path`'s flock from another process: a shell that opens it on fd 9, takes the
/// lock with `flock(1)` and becomes `sleep 300` (same pid, same start time, lock kept): a
/// lock holder that never describes itself.
fn hold_lock(path: &Path) -> Child {
    let mut child = Command::new("sh")
        .args([
            "-c",
            r#"exec 9>>"$0" && flock --exclusive 9 && exec sleep 300"#,
        ])
        .arg(path)
        .spawn()
        .unwrap();
    // Wait until it holds the lock (a non-blocking probe fails).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let probe = Command::new("flock")
            .args(["--nonblock", "--shared"])
            .arg(path)
            .arg("true")
            .status()
            .unwrap();
        let exec_done = fs::read_to_string(format!("/proc/{}/comm", child.id()))
            .is_ok_and(|c| c.trim() == "sleep");
        if !probe.success() && exec_done {
            return child;
        }
        assert!(
            Instant::now() < deadline,
            "the helper did not take the lock"
        );
        assert!(child.try_wait().unwrap().is_none(), "the helper exited");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

// Item 1: the lock decides, never the file.

#[test]
fn off_never_signals_a_process_that_does_not_hold_the_lock() {
    let env = Env::new();
    env.make_runtime();
    let mut sleep = Bystander::spawn();
    fs::write(env.metadata(), forged_metadata(sleep.pid())).unwrap();
    let off = env.run(&["off"]);
    assert_eq!(off.code, 0, "{off:?}");
    assert!(
        off.out.starts_with(&format!(
            "not running (removed stale metadata of pid {}: that process does not hold the lock)",
            sleep.pid()
        )),
        "{off:?}"
    );
    std::thread::sleep(Duration::from_millis(50));
    assert!(sleep.alive(), "pawl off signalled the sleep");
    assert!(!env.metadata().exists(), "the forged file is left");
}

#[test]
fn off_never_signals_the_pid_in_the_metadata_while_an_unidentified_process_holds_the_lock() {
    let env = Env::new();
    env.make_runtime();
    let mut sleep = Bystander::spawn();
    // A live pid with a wrong start time, while someone else holds the lock.
    let forged = forged_metadata(sleep.pid()).replacen(
        &format!("\"start_time\": {}", start_time(sleep.pid())),
        "\"start_time\": 1",
        1,
    );
    fs::write(env.metadata(), forged).unwrap();
    let holder = hold_lock(&env.lock());
    let off = env.run(&["off", "--timeout", "0.1"]);
    assert_eq!(off.code, EXIT_UNIDENTIFIED, "{off:?}");
    assert!(off.out.starts_with("running (pid unknown): "), "{off:?}");
    assert!(
        off.out.contains(&format!("names pid {}", sleep.pid())),
        "{off:?}"
    );
    assert!(sleep.alive(), "pawl off signalled the sleep");
    kill(holder);
}

#[test]
fn status_says_stopped_when_the_lock_is_free_whatever_the_metadata_says() {
    let env = Env::new();
    env.make_runtime();
    let sleep = Bystander::spawn();
    fs::write(env.metadata(), forged_metadata(sleep.pid())).unwrap();
    let status = env.run(&["status"]);
    assert_eq!(status.code, 1, "{status:?}");
    assert!(
        status.out.starts_with(&format!(
            "stopped (stale metadata: pid {}, that process does not hold the lock;",
            sleep.pid()
        )),
        "{status:?}"
    );
    let json = env.run(&["status", "--json"]);
    assert_eq!(json.code, 1, "{json:?}");
    assert_eq!(
        json.out.trim_end(),
        format!(
            r#"{{"pid":{},"reason":"lock-free","state":"stale"}}"#,
            sleep.pid()
        )
    );
}

#[test]
fn status_believes_the_metadata_only_while_its_process_holds_the_lock() {
    let env = Env::new();
    env.make_runtime();
    // flock(1) holds the lock; metadata names it with its true start time.
    let holder = hold_lock(&env.lock());
    fs::write(env.metadata(), forged_metadata(holder.id())).unwrap();
    let status = env.run(&["status"]);
    assert_eq!(status.code, 0, "{status:?}");
    assert!(
        status
            .out
            .starts_with(&format!("running (pid {}, up ", holder.id())),
        "{status:?}"
    );
    // Device names reach the terminal with their control characters escaped.
    assert!(
        !status.out.contains('\u{1b}') && !status.out.contains('\u{7}'),
        "{status:?}"
    );
    assert!(
        status.out.contains(r"MX\u{1b}]0;pwned\u{7}\u{1b}[2J"),
        "{status:?}"
    );
    // `off` signals it: the identity is confirmed (lock held, pid and start time match).
    let off = env.run(&["off"]);
    assert_eq!(off.code, 0, "{off:?}");
    assert_eq!(off.out, format!("stopped (pid {})\n", holder.id()));
    let mut holder = holder;
    assert!(
        holder.wait().unwrap().code().is_none(),
        "flock(1) was not signalled"
    );
    assert!(!env.metadata().exists());
}

#[test]
fn runtime_dir_owned_by_another_user_or_group_writable_is_refused_by_status_off_and_on() {
    let env = Env::new();
    env.make_runtime();
    let sleep = Bystander::spawn();
    fs::write(env.metadata(), forged_metadata(sleep.pid())).unwrap();
    fs::set_permissions(env.runtime(), fs::Permissions::from_mode(0o755)).unwrap();
    let shown = env.runtime().display().to_string();
    for args in [&["status"][..], &["off"], &["on"]] {
        let ran = env.run(args);
        assert_ne!(ran.code, 0, "{args:?}: {ran:?}");
        assert_eq!(ran.err.lines().count(), 1, "{args:?}: {ran:?}");
        assert!(
            ran.err.starts_with(&format!("pawl: refusing {shown}: ")),
            "{args:?}: {ran:?}"
        );
        assert!(ran.err.contains("mode 755"), "{args:?}: {ran:?}");
    }
    let json = env.run(&["status", "--json"]);
    assert_eq!(json.code, EXIT_UNIDENTIFIED, "{json:?}");
    let v: serde_json::Value = serde_json::from_str(&json.out).unwrap();
    assert_eq!(v["state"], "unknown");
    assert!(v["error"].as_str().unwrap().contains(&shown));
    if rustix::process::geteuid().is_root() {
        fs::set_permissions(env.runtime(), fs::Permissions::from_mode(0o700)).unwrap();
        rustix::fs::chown(
            env.runtime(),
            Some(rustix::process::Uid::from_raw(4_242_424)),
            None,
        )
        .unwrap();
        for args in [&["status"][..], &["off"], &["on"]] {
            let ran = env.run(args);
            assert!(
                ran.err.starts_with(&format!(
                    "pawl: refusing {shown}: it belongs to uid 4242424"
                )),
                "{args:?}: {ran:?}"
            );
        }
    }
}

// Item 4: one answer for a held lock without metadata, garbage metadata, startup.

#[test]
fn a_held_lock_without_metadata_gets_the_same_line_and_exit_status_from_status_off_on_and_run() {
    let env = Env::new();
    env.make_runtime();
    let holder = hold_lock(&env.lock());
    let want = format!(
        "starting (pid unknown): a process holds {} but has not described itself in {} yet; \
         try again in a moment",
        env.lock().display(),
        env.metadata().display()
    );
    let status = env.run(&["status"]);
    assert_eq!(
        (status.code, status.out.trim_end()),
        (EXIT_UNIDENTIFIED, &*want)
    );
    let off = env.run(&["off", "--timeout", "0.05"]);
    assert_eq!(
        (off.code, off.out.trim_end()),
        (EXIT_UNIDENTIFIED, &*want),
        "{off:?}"
    );
    let on = env.run(&["on", "--timeout", "0.05"]);
    assert_eq!(
        (on.code, on.out.trim_end()),
        (EXIT_UNIDENTIFIED, &*want),
        "{on:?}"
    );
    let json = env.run(&["status", "--json"]);
    assert_eq!(json.code, EXIT_UNIDENTIFIED);
    let v: serde_json::Value = serde_json::from_str(&json.out).unwrap();
    assert_eq!(
        (v["state"].as_str(), v["pid"].is_null()),
        (Some("starting"), true)
    );
    kill(holder);
}

#[test]
fn garbage_metadata_names_the_file_and_the_fix_and_status_json_still_prints_an_object() {
    let env = Env::new();
    env.make_runtime();
    fs::write(env.metadata(), "{ not json").unwrap();
    let shown = env.metadata().display().to_string();
    let status = env.run(&["status"]);
    assert_eq!(status.code, 1, "{status:?}");
    assert!(
        status.out.starts_with(&format!(
            "stopped (unreadable metadata: {shown} is not pawl metadata"
        )),
        "{status:?}"
    );
    assert!(status.out.contains("`pawl off` removes it"), "{status:?}");
    let json = env.run(&["status", "--json"]);
    assert_eq!(json.code, 1, "{json:?}");
    let v: serde_json::Value = serde_json::from_str(&json.out).unwrap();
    assert_eq!(v["state"], "stale");
    assert_eq!(v["reason"], "unreadable");
    assert!(v["error"].as_str().unwrap().contains(&shown), "{v}");
    let off = env.run(&["off"]);
    assert_eq!(off.code, 0, "{off:?}");
    assert!(
        off.out
            .starts_with("not running (removed unreadable metadata: "),
        "{off:?}"
    );
    assert!(!env.metadata().exists());
    assert_eq!(env.run(&["status"]).code, 3);
}

#[test]
fn on_with_timeout_zero_answers_with_the_pid_or_the_error_and_never_a_dead_worker_as_starting() {
    let env = Env::new();
    // A config that stops the worker at once, before any device is touched.
    let config = env.tmp.path().join("bad.toml");
    fs::write(&config, "[gesture]\nthreshold = \"far\"\n").unwrap();
    let config = config.to_str().unwrap();
    let on = env.run(&["--config", config, "on", "--timeout", "0"]);
    match on.code {
        // Alive when asked: "starting" with its pid, never "may still be starting".
        EXIT_UNIDENTIFIED => {
            let pid: u32 = on
                .out
                .strip_prefix("starting (pid ")
                .and_then(|r| r.split(')').next())
                .and_then(|p| p.parse().ok())
                .unwrap_or_else(|| panic!("{on:?}"));
            // It dies of its config; then status says stopped, not starting.
            // Wait for the zombie state, not an empty cmdline: the kernel
            // drops the address space (cmdline reads empty) before it closes
            // the files, so the lock can still be held for a moment after.
            let deadline = Instant::now() + Duration::from_secs(10);
            while fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // The state is the field after the parenthesised name.
                let state = stat
                    .rsplit(')')
                    .next()
                    .and_then(|r| r.split_whitespace().next());
                !matches!(state, Some("Z" | "X"))
            }) {
                assert!(Instant::now() < deadline, "the worker did not die");
                std::thread::sleep(Duration::from_millis(10));
            }
            assert_eq!(env.run(&["status"]).code, 3);
        }
        // Dead when asked: its own error, not "starting".
        _ => {
            assert_eq!(on.code, 1, "{on:?}");
            assert!(on.err.contains("bad.toml"), "{on:?}");
        }
    }
    assert!(!on.out.contains("may still be starting"), "{on:?}");
    // With time to answer, the worker's own message, naming the file.
    let on = env.run(&["--config", config, "on", "--timeout", "10"]);
    assert_eq!(on.code, 1, "{on:?}");
    assert!(on.err.contains("bad.toml"), "{on:?}");
    assert!(!on.out.contains("starting"), "{on:?}");
}

#[test]
fn xdg_runtime_dir_naming_a_file_is_an_error_naming_the_variable() {
    let env = Env::new();
    let file = env.tmp.path().join("file");
    fs::write(&file, "").unwrap();
    for args in [&["status"][..], &["off"], &["on"], &["run"]] {
        let ran = Ran::from(
            env.command(args)
                .env("XDG_RUNTIME_DIR", &file)
                .output()
                .unwrap(),
        );
        assert_ne!(ran.code, 0, "{args:?}: {ran:?}");
        assert!(
            ran.err.contains(&format!(
                "XDG_RUNTIME_DIR ({}) is not a directory",
                file.display()
            )),
            "{args:?}: {ran:?}"
        );
    }
}

#[test]
fn on_with_a_log_in_a_missing_directory_creates_nothing_and_names_the_path() {
    let env = Env::new();
    let log = env.tmp.path().join("nonexistent/dir/log");
    let on = env.run(&["on", "--log", log.to_str().unwrap()]);
    assert_eq!(on.code, 1, "{on:?}");
    assert!(on.err.contains(&log.display().to_string()), "{on:?}");
    assert!(on.err.contains("does not exist"), "{on:?}");
    assert!(
        !env.tmp.path().join("nonexistent").exists(),
        "directories were created"
    );
    // Nothing was started: the lock is free.
    assert_eq!(env.run(&["status"]).code, 3);
}

// Item 2: write errors end the command cleanly.

/// The stderr lines that are not log warnings (`service install` warns about a build
/// directory executable, as it should).
fn not_warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| !l.starts_with("pawl: WARN "))
        .collect()
}

/// Commands that print without needing a device or a worker.
fn printing_commands() -> Vec<Vec<String>> {
    let recording = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/free-spin-burst.events")
        .display()
        .to_string();
    let s = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        s(&["config", "default"]),
        s(&["config", "keys"]),
        s(&["config", "path"]),
        s(&["replay", &recording]),
        s(&["replay", &recording, "--summary"]),
        s(&["status"]),
        s(&["status", "--json"]),
        s(&["devices"]),
        s(&["devices", "--json"]),
        s(&["off"]),
        s(&["service", "install", "--dry-run"]),
        s(&["--help"]),
        s(&["status", "--help"]),
        s(&["--version"]),
    ]
}

#[test]
fn stdout_to_dev_full_is_one_message_and_a_write_error_status_never_a_panic() {
    let env = Env::new();
    for args in printing_commands() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let ran = Ran::from(env.command(&args).stdout(full).output().unwrap());
        assert_eq!(ran.code, EXIT_WRITE_ERROR, "{args:?}: {ran:?}");
        assert_eq!(
            not_warnings(&ran.err),
            ["pawl: cannot write to stdout: No space left on device (os error 28)"],
            "{args:?}: {ran:?}"
        );
    }
}

#[test]
fn stdout_to_a_closed_pipe_exits_quietly_with_141_never_a_panic() {
    let env = Env::new();
    for args in printing_commands() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let ran = Ran::from(env.command(&args).stdout(writer).output().unwrap());
        assert_eq!(ran.code, EXIT_BROKEN_PIPE, "{args:?}: {ran:?}");
        assert!(not_warnings(&ran.err).is_empty(), "{args:?}: {ran:?}");
    }
}

#[test]
fn replay_into_head_stops_quietly_when_head_has_read_its_line() {
    let env = Env::new();
    let recording =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/free-spin-burst.events");
    let (mut reader, writer) = std::io::pipe().unwrap();
    let child = env
        .command(&["replay", recording.to_str().unwrap()])
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    reader.read_exact(&mut first).unwrap();
    drop(reader);
    let out = child.wait_with_output().unwrap();
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == EXIT_BROKEN_PIPE, "{code}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

// Item 9: conventions.

#[test]
fn replay_works_without_home_or_xdg_config_home() {
    let env = Env::new();
    let recording =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/free-spin-burst.events");
    let ran = Ran::from(
        env.command(&["replay", recording.to_str().unwrap(), "--summary"])
            .env_remove("HOME")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap(),
    );
    assert_eq!(ran.code, 0, "{ran:?}");
    assert!(!ran.out.is_empty());
    // `config path` has nothing to answer and says why.
    let path = Ran::from(
        env.command(&["config", "path"])
            .env_remove("HOME")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap(),
    );
    assert_eq!(path.code, 1, "{path:?}");
    assert!(path.err.contains("HOME is unset"), "{path:?}");
}

#[test]
fn a_relative_xdg_config_home_is_ignored() {
    let env = Env::new();
    let ran = Ran::from(
        env.command(&["config", "path"])
            .env("XDG_CONFIG_HOME", "relative/config")
            .output()
            .unwrap(),
    );
    assert_eq!(ran.code, 0, "{ran:?}");
    assert_eq!(
        ran.out.trim_end(),
        env.tmp
            .path()
            .join("home/.config/pawl/config.toml")
            .display()
            .to_string()
    );
}

#[test]
fn an_unreadable_default_config_names_the_variable_it_came_from() {
    let env = Env::new();
    // A file where a directory should be: the default path cannot be opened (ENOTDIR).
    let file = env.tmp.path().join("not-a-dir");
    std::fs::write(&file, "").unwrap();
    let ran = Ran::from(
        env.command(&["config", "check"])
            .env("XDG_CONFIG_HOME", &file)
            .output()
            .unwrap(),
    );
    assert_ne!(ran.code, 0, "{ran:?}");
    assert!(
        ran.err.contains("not-a-dir/pawl/config.toml") && ran.err.contains("from $XDG_CONFIG_HOME"),
        "{ran:?}"
    );
}

#[test]
fn a_relative_xdg_runtime_dir_is_ignored_for_the_tmp_fallback() {
    let env = Env::new();
    // The fallback is /tmp/pawl-<uid>, shared with the developer's own pawl; only look.
    let ran = Ran::from(
        env.command(&["-vv", "status", "--json"])
            .env("XDG_RUNTIME_DIR", "relative/run")
            .output()
            .unwrap(),
    );
    let uid = rustix::process::getuid().as_raw();
    assert!(
        ran.err.contains(&format!(
            "XDG_RUNTIME_DIR is unset or relative: using /tmp/pawl-{uid}"
        )),
        "{ran:?}"
    );
}

#[test]
fn verbose_and_quiet_flags_and_rust_log_set_what_is_logged() {
    let env = Env::new();
    // `devices` with a broken config warns (and shows the defaults).
    let bad = env.tmp.path().join("bad.toml");
    fs::write(&bad, "[gesture]\nthreshold = \"far\"\n").unwrap();
    let bad = bad.to_str().unwrap();
    let warned = env.run(&["--config", bad, "devices", "--json"]);
    assert!(warned.err.contains("pawl: WARN "), "{warned:?}");
    let quiet = env.run(&["--config", bad, "-q", "devices", "--json"]);
    assert!(!quiet.err.contains("WARN"), "{quiet:?}");
    let rust_log = Ran::from(
        env.command(&["--config", bad, "devices", "--json"])
            .env("RUST_LOG", "error")
            .output()
            .unwrap(),
    );
    assert!(!rust_log.err.contains("WARN"), "{rust_log:?}");
    // The flag wins over the variable.
    let both = Ran::from(
        env.command(&["--config", bad, "-v", "devices", "--json"])
            .env("RUST_LOG", "error")
            .output()
            .unwrap(),
    );
    assert!(both.err.contains("pawl: WARN "), "{both:?}");
    let debug = Ran::from(
        env.command(&["status"])
            .env("RUST_LOG", "debug")
            .env("XDG_RUNTIME_DIR", "relative")
            .output()
            .unwrap(),
    );
    assert!(debug.err.contains("pawl: DEBUG "), "{debug:?}");
    let vv = Ran::from(
        env.command(&["-vv", "status"])
            .env("XDG_RUNTIME_DIR", "relative")
            .output()
            .unwrap(),
    );
    assert!(vv.err.contains("pawl: DEBUG "), "{vv:?}");
}

#[test]
fn service_install_refuses_a_config_path_with_a_newline() {
    let env = Env::new();
    let evil = format!(
        "{}/x.toml\nExecStartPre=/bin/sh -c 'touch /tmp/pwned'",
        env.tmp.path().display()
    );
    for args in [
        &["--config", &evil, "service", "install", "--dry-run"][..],
        &["--config", &evil, "service", "install"],
    ] {
        let ran = env.run(args);
        assert_eq!(ran.code, 1, "{ran:?}");
        assert!(
            ran.err
                .starts_with("pawl: refusing to install the service: --config "),
            "{ran:?}"
        );
        assert!(ran.err.contains("U+000A"), "{ran:?}");
        assert_eq!(ran.err.lines().count(), 1, "{ran:?}");
        assert!(!ran.out.contains("ExecStartPre"), "{ran:?}");
    }
    assert!(!env.tmp.path().join("home/config/systemd").exists());
}

#[test]
fn service_install_dry_run_warns_about_a_missing_config_and_prints_the_install_note() {
    let env = Env::new();
    let missing = env.tmp.path().join("missing.toml");
    let ran = env.run(&[
        "--config",
        missing.to_str().unwrap(),
        "service",
        "install",
        "--dry-run",
    ]);
    assert_eq!(ran.code, 0, "{ran:?}");
    assert!(ran.err.contains("does not exist"), "{ran:?}");
    assert!(ran.out.contains("ExecStart="), "{ran:?}");
    assert!(
        ran.out.trim_end().ends_with(
            "# pawl starts with your graphical session; to start it now: `pawl off; \
             systemctl --user start pawl.service`"
        ),
        "{ran:?}"
    );
    assert!(
        !env.tmp.path().join("home/config/systemd").exists(),
        "dry run wrote files"
    );
}

#[test]
fn replay_with_app_runs_under_that_apps_profile_and_says_which_tables() {
    let env = Env::new();
    let config = env.tmp.path().join("apps.toml");
    fs::write(
        &config,
        "[[app]]\napp_id = \"game\"\n[app.scroll]\ninvert_vertical = false\n",
    )
    .unwrap();
    let recording =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/hires-scroll.events");
    let replay = |app: &[&str]| {
        let mut args = vec![
            "--config",
            config.to_str().unwrap(),
            "replay",
            recording.to_str().unwrap(),
            "--summary",
        ];
        args.extend_from_slice(app);
        let ran = env.run(&args);
        assert_eq!(ran.code, 0, "{ran:?}");
        ran.out
    };
    let device = replay(&[]);
    let game = replay(&["--app", "game"]);
    let other = replay(&["--app", "Game"]);
    // Two detents down in: inverted by the device profile, not by the game's.
    assert!(device.contains("out -215 v120"), "{device}");
    assert!(game.contains("out 215 v120"), "{game}");
    assert!(
        game.contains("# app: \"game\": [[app]] at line 1"),
        "{game}"
    );
    // App ids match case-sensitively: another app gets the device profile, and is told so.
    assert!(other.contains("out -215 v120"), "{other}");
    assert!(
        other.contains("# app: \"Game\": no [[app]] table applies: the device profile"),
        "{other}"
    );
    let check = env.run(&["config", "check", config.to_str().unwrap()]);
    assert_eq!(check.code, 0, "{check:?}");
    assert!(
        check
            .out
            .ends_with(": ok\n[[app]] at line 1: \"game\" on every handled device: sets scroll\n"),
        "{check:?}"
    );
    // A table with a title applies only to a window with a matching title.
    fs::write(
        &config,
        "[[app]]\napp_id = \"game\"\ntitle = \"^Level\"\n[app.scroll]\ninvert_vertical = false\n",
    )
    .unwrap();
    let titled = replay(&["--app", "game", "--title", "Level 3"]);
    assert!(titled.contains("out 215 v120"), "{titled}");
    let menu = replay(&["--app", "game", "--title", "Main menu"]);
    assert!(menu.contains("out -215 v120"), "{menu}");
    assert!(
        menu.contains("# app: \"game\" titled \"Main menu\": no [[app]] table applies"),
        "{menu}"
    );
    let untitled = replay(&["--app", "game"]);
    assert!(untitled.contains("out -215 v120"), "{untitled}");
}
