//! `pawl service install|uninstall`: start the worker at login with the system's service
//! manager — a systemd user unit on Linux (`Restart=on-failure`), a LaunchAgent on macOS
//! (`RunAtLoad`, `KeepAlive` unless it exited successfully, `ProcessType Interactive`).
//!
//! The service runs `pawl run` in the foreground, so it takes the same single-instance lock
//! as `pawl on`: `pawl status` and `pawl off` see it, and a service started while a `pawl on`
//! worker runs exits 0 ("already running") without being restarted.
//!
//! The file contents are pure functions ([`systemd_unit`], [`launch_agent_plist`]); what
//! install and uninstall do is a [`Plan`] run against a command runner, so tests check both
//! without touching the system.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// The systemd unit name.
pub const SYSTEMD_UNIT: &str = "pawl.service";
/// The LaunchAgent label (and file name without `.plist`).
pub const LAUNCHD_LABEL: &str = "dev.pawl.worker";

/// What the service runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceSpec {
    /// The pawl executable (absolute).
    pub exe: PathBuf,
    /// `--config FILE` (absolute), when not the default.
    pub config: Option<PathBuf>,
}

impl ServiceSpec {
    /// The argv: `exe [--config FILE] run`.
    pub fn argv(&self) -> Vec<String> {
        let mut argv = vec![self.exe.display().to_string()];
        if let Some(config) = &self.config {
            argv.push("--config".into());
            argv.push(config.display().to_string());
        }
        argv.push("run".into());
        argv
    }
}

/// The systemd user unit for `spec`. Started with the graphical session (the `keys`
/// backend picks its shortcuts from the session's `XDG_CURRENT_DESKTOP`), restarted when it
/// fails, not when it exits 0 (`pawl off`, or another worker already running).
pub fn systemd_unit(spec: &ServiceSpec) -> String {
    let exec: Vec<String> = spec.argv().iter().map(|a| systemd_quote(a)).collect();
    format!(
        "# Written by `pawl service install`; `pawl service uninstall` removes it.\n\
         [Unit]\n\
         Description=pawl mouse daemon: gestures, back/forward, per-device scroll\n\
         Documentation=man:pawl(1)\n\
         PartOf=graphical-session.target\n\
         After=graphical-session.target\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={}\n\
         Restart=on-failure\n\
         RestartSec=2\n\
         \n\
         [Install]\n\
         WantedBy=graphical-session.target\n",
        exec.join(" ")
    )
}

/// The LaunchAgent property list for `spec`: runs at login (`RunAtLoad`), is restarted
/// unless it exited successfully (`KeepAlive` → `SuccessfulExit` false), and gets
/// interactive scheduling (`ProcessType Interactive`: it sits in the input path). With
/// `log` (absolute; `~/Library/Logs/pawl.log` from `pawl service install`), launchd
/// appends pawl's stderr (its log) there (`StandardErrorPath`); without, it goes nowhere.
pub fn launch_agent_plist(spec: &ServiceSpec, log: Option<&Path>) -> String {
    let args: String = spec
        .argv()
        .iter()
        .map(|a| format!("\t\t<string>{}</string>\n", xml_escape(a)))
        .collect();
    let log = log.map_or(String::new(), |l| {
        format!(
            "\t<key>StandardErrorPath</key>\n\t<string>{}</string>\n",
            xml_escape(&l.display().to_string())
        )
    });
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \
         \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <!-- Written by `pawl service install`; `pawl service uninstall` removes it. -->\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \t<key>Label</key>\n\
         \t<string>{LAUNCHD_LABEL}</string>\n\
         \t<key>ProgramArguments</key>\n\
         \t<array>\n\
         {args}\
         \t</array>\n\
         \t<key>RunAtLoad</key>\n\
         \t<true/>\n\
         \t<key>KeepAlive</key>\n\
         \t<dict>\n\
         \t\t<key>SuccessfulExit</key>\n\
         \t\t<false/>\n\
         \t</dict>\n\
         \t<key>ProcessType</key>\n\
         \t<string>Interactive</string>\n\
         {log}\
         </dict>\n\
         </plist>\n"
    )
}

/// A word of a systemd `ExecStart=` line: `%` and `$` doubled (specifier and variable
/// expansion, `systemd.unit(5)`, `systemd.service(5)`), double-quoted with `\"`/`\\`
/// escapes when it has whitespace, quotes or backslashes.
pub fn systemd_quote(arg: &str) -> String {
    let s = arg.replace('%', "%%").replace('$', "$$");
    if s.is_empty()
        || s.chars()
            .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | ';'))
    {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        s
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Everything install and uninstall do on one platform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The service file.
    pub file: PathBuf,
    /// Its contents.
    pub contents: String,
    /// Commands before writing the file (unload an old version); failures are fine.
    pub before_install: Vec<Vec<String>>,
    /// Commands after writing the file (reload, enable/bootstrap).
    pub after_install: Vec<Vec<String>>,
    /// Commands before removing the file (stop, disable/bootout); failures are fine (it
    /// may not be loaded).
    pub before_uninstall: Vec<Vec<String>>,
    /// Commands after removing the file.
    pub after_uninstall: Vec<Vec<String>>,
    /// What to tell the user after a successful install.
    pub installed_note: String,
    /// When an `after_install` command fails with a message containing this, it is tried
    /// again (launchd: the old job is still going away after `bootout`).
    pub retry_when: Option<&'static str>,
    /// How many times, and how long to wait before each try.
    pub retries: u32,
    /// The wait before each retry.
    pub retry_delay: std::time::Duration,
}

/// The plan for systemd: the unit in `unit_dir` (normally
/// `$XDG_CONFIG_HOME/systemd/user`).
pub fn systemd_plan(spec: &ServiceSpec, unit_dir: &Path) -> Plan {
    let ctl = |args: &[&str]| -> Vec<String> {
        ["systemctl", "--user"]
            .iter()
            .chain(args)
            .map(|s| s.to_string())
            .collect()
    };
    Plan {
        file: unit_dir.join(SYSTEMD_UNIT),
        contents: systemd_unit(spec),
        before_install: Vec::new(),
        after_install: vec![ctl(&["daemon-reload"]), ctl(&["enable", SYSTEMD_UNIT])],
        before_uninstall: vec![ctl(&["disable", "--now", SYSTEMD_UNIT])],
        after_uninstall: vec![ctl(&["daemon-reload"])],
        installed_note: format!(
            "pawl starts with your graphical session; to start it now: `pawl off; systemctl \
             --user start {SYSTEMD_UNIT}`"
        ),
        retry_when: None,
        retries: 0,
        retry_delay: std::time::Duration::ZERO,
    }
}

/// What `launchctl bootstrap` says while the job `bootout` removed is still going away
/// ("Bootstrap failed: 5: Input/output error"): try again.
pub const LAUNCHD_BUSY: &str = "Bootstrap failed: 5";

/// The plan for launchd: the agent in `agent_dir` (normally `~/Library/LaunchAgents`),
/// loaded into the GUI domain of `uid`, logging to `log` (normally
/// `~/Library/Logs/pawl.log`). Loading starts it at once (`RunAtLoad`). `bootout` returns
/// before the old job is gone, so a `bootstrap` right after it can fail with
/// [`LAUNCHD_BUSY`]; it is tried again up to 20 times, 250 ms apart (5 s).
pub fn launchd_plan(spec: &ServiceSpec, agent_dir: &Path, uid: u32, log: &Path) -> Plan {
    let file = agent_dir.join(format!("{LAUNCHD_LABEL}.plist"));
    let domain = format!("gui/{uid}");
    let service = format!("{domain}/{LAUNCHD_LABEL}");
    let bootout = vec!["launchctl".into(), "bootout".into(), service];
    Plan {
        contents: launch_agent_plist(spec, Some(log)),
        before_install: vec![bootout.clone()],
        after_install: vec![vec![
            "launchctl".into(),
            "bootstrap".into(),
            domain,
            file.display().to_string(),
        ]],
        before_uninstall: vec![bootout],
        after_uninstall: Vec::new(),
        installed_note: format!(
            "pawl starts at login, and now unless a worker already runs; it logs to {}",
            log.display()
        ),
        file,
        retry_when: Some(LAUNCHD_BUSY),
        retries: 20,
        retry_delay: std::time::Duration::from_millis(250),
    }
}

/// How a command went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ran {
    /// Exit 0.
    Ok,
    /// The program is not installed (no systemd or launchd here).
    NotFound,
    /// It ran and failed: its exit status and stderr.
    Failed(String),
}

/// Installs per `plan`: runs `plan.before_install` (failures ignored), writes the file
/// (mode 0644, atomically), then runs `plan.after_install` with `run` (when the program is
/// not installed, the rest is skipped: the file is in place for when it is). Returns the
/// lines to print.
///
/// Errors: the file cannot be written; a command failed (its message).
pub fn install(plan: &Plan, run: &mut dyn FnMut(&[String]) -> Ran) -> anyhow::Result<Vec<String>> {
    if let Some(dir) = plan.file.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let old = fs::read_to_string(&plan.file).ok();
    for cmd in &plan.before_install {
        run(cmd);
    }
    crate::lifecycle::write_atomic(&plan.file, plan.contents.as_bytes(), 0o644)
        .with_context(|| format!("cannot write {}", plan.file.display()))?;
    let mut lines = vec![match old {
        Some(old) if old == plan.contents => format!("unchanged {}", plan.file.display()),
        Some(_) => format!("updated {}", plan.file.display()),
        None => format!("wrote {}", plan.file.display()),
    }];
    for cmd in &plan.after_install {
        let mut ran = run(cmd);
        for _ in 0..plan.retries {
            match (&ran, plan.retry_when) {
                (Ran::Failed(why), Some(busy)) if why.contains(busy) => {
                    std::thread::sleep(plan.retry_delay);
                    ran = run(cmd);
                }
                _ => break,
            }
        }
        match ran {
            Ran::Ok => lines.push(format!("ran `{}`", cmd.join(" "))),
            Ran::NotFound => {
                lines.push(format!(
                    "{} is not available here: the file is installed, but nothing loads it",
                    cmd[0]
                ));
                return Ok(lines);
            }
            Ran::Failed(why) => bail!(
                "{} is installed, but `{}` failed: {why}",
                plan.file.display(),
                cmd.join(" ")
            ),
        }
    }
    lines.push(plan.installed_note.clone());
    Ok(lines)
}

/// Uninstalls per `plan`: stops and unloads (failures ignored: it may not be loaded),
/// removes the file, runs `plan.after_uninstall`. Idempotent. Returns the lines to print.
///
/// Errors: the file cannot be removed.
pub fn uninstall(
    plan: &Plan,
    run: &mut dyn FnMut(&[String]) -> Ran,
) -> anyhow::Result<Vec<String>> {
    if !plan.file.exists() {
        return Ok(vec![format!(
            "not installed ({} does not exist)",
            plan.file.display()
        )]);
    }
    let mut lines = Vec::new();
    for cmd in &plan.before_uninstall {
        if run(cmd) == Ran::Ok {
            lines.push(format!("ran `{}`", cmd.join(" ")));
        }
    }
    fs::remove_file(&plan.file)
        .with_context(|| format!("cannot remove {}", plan.file.display()))?;
    lines.push(format!("removed {}", plan.file.display()));
    for cmd in &plan.after_uninstall {
        if run(cmd) == Ran::Ok {
            lines.push(format!("ran `{}`", cmd.join(" ")));
        }
    }
    Ok(lines)
}

/// Runs `argv` for real: stdout discarded, stderr captured for the error.
pub fn run_command(argv: &[String]) -> Ran {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match out {
        Ok(o) if o.status.success() => Ran::Ok,
        Ok(o) => Ran::Failed(format!(
            "{}: {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ran::NotFound,
        Err(e) => Ran::Failed(e.to_string()),
    }
}

/// Why `path` cannot be written into a service file, `None` when it can: it is not UTF-8
/// (the file would name another path), or it has a control character — a newline would end
/// `ExecStart=` and start a directive of the caller's choosing (unit injection), and XML 1.0
/// forbids most C0 characters in a property list.
pub fn unwritable_path(path: &Path) -> Option<String> {
    let Some(s) = path.to_str() else {
        return Some(format!(
            "{} is not valid UTF-8, which a service file cannot name",
            path.display()
        ));
    };
    s.chars().find(|c| c.is_control()).map(|c| {
        format!(
            "{} contains the control character U+{:04X}, which a service file cannot hold \
             (a newline would add a line of its own to the unit); rename the file",
            crate::out::escape_control(s),
            c as u32
        )
    })
}

/// The plan for this platform and user: `--config` made absolute, the executable resolved.
///
/// Errors: HOME unset, the executable cannot be found, or its path or the config's cannot
/// be written into a service file ([`unwritable_path`]).
pub fn this_platform_plan(config: Option<&Path>) -> anyhow::Result<Plan> {
    let exe = std::env::current_exe().context("cannot find pawl's own executable")?;
    let exe = fs::canonicalize(&exe).unwrap_or(exe);
    let config = config.map(std::path::absolute).transpose()?;
    if let Some(problem) = unwritable_path(&exe) {
        bail!("refusing to install the service: the executable {problem}");
    }
    if let Some(problem) = config.as_deref().and_then(unwritable_path) {
        bail!("refusing to install the service: --config {problem}");
    }
    let spec = ServiceSpec { exe, config };
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .context("HOME is not set");
    if cfg!(target_os = "macos") {
        let uid = rustix::process::getuid().as_raw();
        let home = home?;
        return Ok(launchd_plan(
            &spec,
            &home.join("Library/LaunchAgents"),
            uid,
            &home.join("Library/Logs/pawl.log"),
        ));
    }
    let config_home = match std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(p) if p.is_absolute() => p,
        _ => home?.join(".config"),
    };
    Ok(systemd_plan(&spec, &config_home.join("systemd/user")))
}

/// A warning when the service would run a binary from a cargo build directory (it breaks
/// on `cargo clean` and changes on every build).
pub fn exe_warning(exe: &Path) -> Option<String> {
    let s = exe.to_string_lossy();
    (s.contains("/target/debug/") || s.contains("/target/release/")).then(|| {
        format!(
            "note: the service runs {s} from a build directory; `cargo install --locked --path \
             crates/pawl` and reinstall the service for a stable path"
        )
    })
}

/// The warnings `service install` (and `--dry-run`) prints before it acts: a build
/// directory executable ([`exe_warning`]), a `--config` file that does not exist (the
/// service then fails at every start until it does), and a config (the `--config` file,
/// else the default path) that exists but does not load: invalid, too large, or refused
/// for its permissions ([`crate::config_file::load`]'s error, every problem with
/// `file:line:column`). The install goes on: the user may fix the file afterwards.
pub fn install_warnings(exe: &Path, config: Option<&Path>) -> Vec<String> {
    let mut warnings: Vec<String> = exe_warning(exe).into_iter().collect();
    if let Some(config) = config
        && !config.exists()
    {
        warnings.push(format!(
            "--config {} does not exist: the service will fail to start until it does \
             (`pawl config default > {}` writes one)",
            crate::out::escape_control(&config.display().to_string()),
            crate::out::escape_control(&config.display().to_string())
        ));
    } else if let Err(e) = crate::config_file::load(config) {
        warnings.push(format!(
            "the service will fail to start until its config loads (`pawl config check` \
             shows this again):\n{}",
            format!("{e:#}")
                .lines()
                .map(crate::out::escape_control)
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    warnings
}

/// What `service install --dry-run` prints: where the file would go, its contents, the
/// commands an install would run and the note it prints after them, each as a `#` line.
pub fn dry_run_text(plan: &Plan) -> String {
    let mut s = format!("# {}\n{}", plan.file.display(), plan.contents);
    for cmd in plan.before_install.iter().chain(&plan.after_install) {
        s.push_str(&format!("# would run `{}`\n", cmd.join(" ")));
    }
    s.push_str(&format!("# {}\n", plan.installed_note));
    s
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn spec() -> ServiceSpec {
        ServiceSpec {
            exe: PathBuf::from("/usr/local/bin/pawl"),
            config: None,
        }
    }

    #[test]
    fn systemd_unit_runs_pawl_run_restarts_on_failure_and_starts_with_the_session() {
        expect![[r#"
            # Written by `pawl service install`; `pawl service uninstall` removes it.
            [Unit]
            Description=pawl mouse daemon: gestures, back/forward, per-device scroll
            Documentation=man:pawl(1)
            PartOf=graphical-session.target
            After=graphical-session.target

            [Service]
            Type=simple
            ExecStart=/usr/local/bin/pawl run
            Restart=on-failure
            RestartSec=2

            [Install]
            WantedBy=graphical-session.target
        "#]]
        .assert_eq(&systemd_unit(&spec()));
    }

    #[test]
    fn systemd_exec_start_quotes_spaces_and_escapes_specifiers() {
        let spec = ServiceSpec {
            exe: PathBuf::from("/home/a b/bin/pawl"),
            config: Some(PathBuf::from("/home/a b/100%/$cfg.toml")),
        };
        let unit = systemd_unit(&spec);
        let exec = unit.lines().find(|l| l.starts_with("ExecStart=")).unwrap();
        assert_eq!(
            exec,
            r#"ExecStart="/home/a b/bin/pawl" --config "/home/a b/100%%/$$cfg.toml" run"#
        );
        assert_eq!(systemd_quote(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(systemd_quote(""), r#""""#);
    }

    #[test]
    fn launch_agent_runs_at_load_keeps_alive_unless_successful_and_is_interactive() {
        let spec = ServiceSpec {
            exe: PathBuf::from("/Users/me/bin/pawl"),
            config: Some(PathBuf::from("/Users/me/a&b.toml")),
        };
        expect![[r#"
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <!-- Written by `pawl service install`; `pawl service uninstall` removes it. -->
            <plist version="1.0">
            <dict>
            	<key>Label</key>
            	<string>dev.pawl.worker</string>
            	<key>ProgramArguments</key>
            	<array>
            		<string>/Users/me/bin/pawl</string>
            		<string>--config</string>
            		<string>/Users/me/a&amp;b.toml</string>
            		<string>run</string>
            	</array>
            	<key>RunAtLoad</key>
            	<true/>
            	<key>KeepAlive</key>
            	<dict>
            		<key>SuccessfulExit</key>
            		<false/>
            	</dict>
            	<key>ProcessType</key>
            	<string>Interactive</string>
            </dict>
            </plist>
        "#]]
        .assert_eq(&launch_agent_plist(&spec, None));
    }

    #[test]
    fn systemd_install_writes_the_unit_then_reloads_and_enables() {
        let tmp = tempfile::tempdir().unwrap();
        let plan = systemd_plan(&spec(), &tmp.path().join("systemd/user"));
        let mut ran = Vec::new();
        let lines = install(&plan, &mut |c| {
            ran.push(c.join(" "));
            Ran::Ok
        })
        .unwrap();
        assert_eq!(
            ran,
            [
                "systemctl --user daemon-reload",
                "systemctl --user enable pawl.service"
            ]
        );
        assert_eq!(fs::read_to_string(&plan.file).unwrap(), plan.contents);
        assert!(lines[0].starts_with("wrote "), "{lines:?}");
        assert_eq!(lines.last().unwrap(), &plan.installed_note);

        let again = install(&plan, &mut |_| Ran::Ok).unwrap();
        assert!(again[0].starts_with("unchanged "), "{again:?}");
    }

    #[test]
    fn install_without_a_service_manager_still_writes_the_file_and_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let plan = systemd_plan(&spec(), tmp.path());
        let lines = install(&plan, &mut |_| Ran::NotFound).unwrap();
        assert!(plan.file.exists());
        assert_eq!(
            lines[1],
            "systemctl is not available here: the file is installed, but nothing loads it"
        );
    }

    #[test]
    fn a_failing_enable_is_an_error_that_names_the_command() {
        let tmp = tempfile::tempdir().unwrap();
        let plan = systemd_plan(&spec(), tmp.path());
        let mut run = |_: &[String]| Ran::Failed("exit status: 1: Failed to connect to bus".into());
        let err = install(&plan, &mut run).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "is installed, but `systemctl --user daemon-reload` failed: exit status: 1: \
                 Failed to connect to bus"
            ),
            "{err}"
        );
    }

    #[test]
    fn uninstall_disables_removes_and_reloads_and_is_idempotent() {
        let tmp = tempfile::tempdir().unwrap();
        let plan = systemd_plan(&spec(), tmp.path());
        install(&plan, &mut |_| Ran::Ok).unwrap();
        let mut ran = Vec::new();
        let lines = uninstall(&plan, &mut |c| {
            ran.push(c.join(" "));
            Ran::Ok
        })
        .unwrap();
        assert_eq!(
            ran,
            [
                "systemctl --user disable --now pawl.service",
                "systemctl --user daemon-reload"
            ]
        );
        assert!(!plan.file.exists());
        assert!(lines.contains(&format!("removed {}", plan.file.display())));
        let again = uninstall(&plan, &mut |_| panic!("nothing to run")).unwrap();
        assert!(again[0].starts_with("not installed"), "{again:?}");
    }

    #[test]
    fn launchd_install_boots_out_a_loaded_agent_then_bootstraps_the_gui_domain() {
        let tmp = tempfile::tempdir().unwrap();
        let plan = launchd_plan(
            &spec(),
            tmp.path(),
            501,
            Path::new("/Users/me/Library/Logs/pawl.log"),
        );
        assert_eq!(plan.file, tmp.path().join("dev.pawl.worker.plist"));
        let mut ran = Vec::new();
        install(&plan, &mut |c| {
            ran.push(c.join(" "));
            // Not loaded yet: bootout fails, which install ignores.
            match c[1].as_str() {
                "bootout" => Ran::Failed("exit status: 3: No such process".into()),
                _ => Ran::Ok,
            }
        })
        .unwrap();
        assert_eq!(
            ran,
            [
                "launchctl bootout gui/501/dev.pawl.worker".to_owned(),
                format!("launchctl bootstrap gui/501 {}", plan.file.display()),
            ]
        );
        let cmds: Vec<String> = plan.before_uninstall.iter().map(|c| c.join(" ")).collect();
        assert_eq!(cmds, ["launchctl bootout gui/501/dev.pawl.worker"]);
    }

    #[test]
    fn a_config_path_with_a_newline_is_refused_so_no_directive_is_injected() {
        let evil = Path::new("/home/u/x\nExecStartPre=/bin/sh -c evil.toml");
        let why = unwritable_path(evil).unwrap();
        assert!(why.contains("U+000A"), "{why}");
        assert!(!why.contains('\n'), "{why:?}");
        assert!(unwritable_path(Path::new("/home/u/tab\there.toml")).is_some());
        assert!(unwritable_path(Path::new("/home/u/esc\u{1b}.toml")).is_some());
        assert_eq!(unwritable_path(Path::new("/home/a b/100%/$cfg.toml")), None);
        use std::os::unix::ffi::OsStrExt;
        let latin1 = Path::new(std::ffi::OsStr::from_bytes(b"/home/u/caf\xe9.toml"));
        assert!(unwritable_path(latin1).unwrap().contains("not valid UTF-8"));
        let err = this_platform_plan(Some(evil)).unwrap_err().to_string();
        assert!(
            err.starts_with("refusing to install the service: --config "),
            "{err}"
        );
    }

    #[test]
    fn install_warns_about_a_missing_config_file() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("nope.toml");
        let warnings = install_warnings(Path::new("/usr/bin/pawl"), Some(&missing));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("does not exist"), "{warnings:?}");
        fs::write(&missing, "").unwrap();
        assert!(install_warnings(Path::new("/usr/bin/pawl"), Some(&missing)).is_empty());
    }

    #[test]
    fn install_warns_about_a_config_that_does_not_load_with_its_location() {
        let tmp = tempfile::tempdir().unwrap();
        let bad = tmp.path().join("bad.toml");
        fs::write(&bad, "[scroll]\nmax_step = \"fast\"\n").unwrap();
        let warnings = install_warnings(Path::new("/usr/bin/pawl"), Some(&bad));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("will fail to start"), "{warnings:?}");
        let located = format!("{}:2:", bad.display());
        assert!(warnings[0].contains(&located), "{warnings:?}");
        fs::write(&bad, "[scroll]\nmax_step = 2.0\n").unwrap();
        assert!(install_warnings(Path::new("/usr/bin/pawl"), Some(&bad)).is_empty());
    }

    #[test]
    fn dry_run_prints_the_file_the_commands_and_the_note_a_real_install_prints() {
        let tmp = tempfile::tempdir().unwrap();
        let plan = systemd_plan(&spec(), tmp.path());
        let text = dry_run_text(&plan);
        assert!(text.starts_with(&format!("# {}\n# Written by", plan.file.display())));
        assert!(text.contains(&plan.contents));
        assert!(text.contains("# would run `systemctl --user enable pawl.service`\n"));
        let lines = install(&plan, &mut |_| Ran::Ok).unwrap();
        let note = lines.last().unwrap();
        assert!(text.ends_with(&format!("# {note}\n")), "{text}");
    }

    #[test]
    fn launch_agent_logs_to_library_logs() {
        let plan = launchd_plan(
            &spec(),
            Path::new("/Users/me/Library/LaunchAgents"),
            501,
            Path::new("/Users/me/Library/Logs/pawl.log"),
        );
        assert!(
            plan.contents.contains(
                "\t<key>StandardErrorPath</key>\n\t<string>/Users/me/Library/Logs/pawl.log</string>\n"
            ),
            "{}",
            plan.contents
        );
        assert!(
            plan.installed_note
                .ends_with("it logs to /Users/me/Library/Logs/pawl.log")
        );
    }

    #[test]
    fn bootstrap_is_tried_again_while_the_booted_out_job_is_still_going_away() {
        let tmp = tempfile::tempdir().unwrap();
        let mut plan = launchd_plan(&spec(), tmp.path(), 501, Path::new("/tmp/pawl.log"));
        assert_eq!(
            (plan.retries, plan.retry_delay),
            (20, std::time::Duration::from_millis(250))
        );
        plan.retry_delay = std::time::Duration::ZERO;
        let mut bootstraps = 0;
        let lines = install(&plan, &mut |c| match c[1].as_str() {
            "bootstrap" => {
                bootstraps += 1;
                match bootstraps {
                    1..=3 => Ran::Failed(
                        "exit status: 5: Bootstrap failed: 5: Input/output error".into(),
                    ),
                    _ => Ran::Ok,
                }
            }
            _ => Ran::Ok,
        })
        .unwrap();
        assert_eq!(bootstraps, 4);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("ran `launchctl bootstrap")),
            "{lines:?}"
        );
        // Another failure is not retried; a busy one that never ends gives up with the error.
        let mut n = 0;
        let err = install(&plan, &mut |c| match c[1].as_str() {
            "bootstrap" => {
                n += 1;
                Ran::Failed("exit status: 5: Bootstrap failed: 5: Input/output error".into())
            }
            _ => Ran::Ok,
        })
        .unwrap_err();
        assert_eq!(n, 21);
        assert!(err.to_string().contains("Bootstrap failed: 5"), "{err}");
        let mut n = 0;
        install(&plan, &mut |c| match c[1].as_str() {
            "bootstrap" => {
                n += 1;
                Ran::Failed("exit status: 37: Operation already in progress".into())
            }
            _ => Ran::Ok,
        })
        .unwrap_err();
        assert_eq!(n, 1);
    }

    #[test]
    fn a_build_directory_executable_gets_a_warning() {
        assert!(exe_warning(Path::new("/src/pawl/target/release/pawl")).is_some());
        assert_eq!(exe_warning(Path::new("/usr/bin/pawl")), None);
    }
}
