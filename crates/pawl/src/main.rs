//! The `pawl` command line: parses flags, loads the config, hands over to the platform
//! crate. No gesture or scroll logic lives here; exit codes and error printing are decided
//! in [`main`] only.

#![forbid(unsafe_code)]

mod cli;
mod config_file;
mod control;
mod devices;
#[cfg(test)]
mod generated;
mod input;
mod inspect;
mod lifecycle;
#[cfg(target_os = "macos")]
mod macos;
mod out;
mod replay;
mod service;
mod version;
mod worker;

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command, ConfigCommand, ServiceCommand};

fn main() -> ExitCode {
    let parsed = Cli::command()
        .after_help(cli::AFTER_HELP)
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        // `--help` and `--version` through `out`, so a closed pipe or a full disk is not a
        // silent success (clap ignores write errors).
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            return match out::print(&e.render().to_string()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(w) => exit_for(&w.into()),
            };
        }
        Err(e) => e.exit(),
    };
    let debug = matches!(cli.command, Command::Run { debug: true } | Command::Debug);
    let default = if matches!(cli.command, Command::Run { .. } | Command::Debug) {
        log::LevelFilter::Info
    } else {
        log::LevelFilter::Warn
    };
    init_logging(&LogChoice {
        default,
        debug,
        verbose: cli.verbose,
        quiet: cli.quiet,
    });
    match run(cli) {
        Ok(code) => code,
        Err(err) => exit_for(&err),
    }
}

/// The exit status and the one message for an error that ends a command: a write error
/// on a closed pipe is quiet ([`out::EXIT_BROKEN_PIPE`]), any other write error is one
/// line and [`out::EXIT_WRITE_ERROR`], everything else `pawl: <error chain>` and 1.
fn exit_for(err: &anyhow::Error) -> ExitCode {
    use std::io::Write;
    let write = err
        .chain()
        .find_map(|e| e.downcast_ref::<out::WriteError>());
    let (message, code) = match write {
        Some(w) if w.is_broken_pipe() => (None, out::EXIT_BROKEN_PIPE),
        Some(w) => (Some(format!("pawl: {w}")), out::EXIT_WRITE_ERROR),
        None => (Some(format!("pawl: {err:#}")), 1),
    };
    if let Some(message) = message {
        // Nowhere to report a failing stderr: the exit status says it.
        let _ = writeln!(std::io::stderr(), "{message}");
    }
    ExitCode::from(code)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run { debug } => run_daemon(cli.config.as_deref(), cli.worker, debug),
        Command::Debug => run_daemon(cli.config.as_deref(), cli.worker, true),
        Command::Replay {
            file,
            device,
            desc,
            summary,
            plot,
            device_index,
            app,
            title,
        } => {
            let loaded = config_file::load(cli.config.as_deref())?;
            replay::run(
                &loaded.config,
                &replay::Args {
                    file: &file,
                    device: device.as_deref(),
                    desc: desc.as_deref(),
                    summary,
                    plot: plot.as_deref(),
                    device_index,
                    app: app.as_deref(),
                    title: title.as_deref(),
                },
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::On(args) => control::on(&control::OnOptions {
            config: cli.config,
            debug: args.debug,
            log: args.log,
            timeout: seconds(args.timeout)?,
            verbose: cli.verbose,
            quiet: cli.quiet,
        }),
        Command::Off(args) => control::off(seconds(args.timeout)?, args.kill),
        Command::Status { json } => control::status(json),
        Command::Devices { json } => {
            devices::command(&config_or_defaults(cli.config.as_deref()), json)
        }
        Command::Inspect { device, record } => inspect::command(
            &config_or_defaults(cli.config.as_deref()),
            &device,
            record.as_deref(),
        ),
        Command::Service { command } => {
            let plan = service::this_platform_plan(cli.config.as_deref())?;
            let exe = std::env::current_exe()?;
            let lines = match command {
                ServiceCommand::Install { dry_run } => {
                    for warning in service::install_warnings(&exe, cli.config.as_deref()) {
                        log::warn!("{warning}");
                    }
                    if dry_run {
                        out::print(&service::dry_run_text(&plan))?;
                        return Ok(ExitCode::SUCCESS);
                    }
                    service::install(&plan, &mut |c| service::run_command(c))?
                }
                ServiceCommand::Uninstall => {
                    service::uninstall(&plan, &mut |c| service::run_command(c))?
                }
            };
            for line in lines {
                out::println(&line)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Config { command } => match command {
            ConfigCommand::Path => {
                out::println(
                    &config_file::path(cli.config.as_deref())?
                        .display()
                        .to_string(),
                )?;
                Ok(ExitCode::SUCCESS)
            }
            ConfigCommand::Default => {
                out::print(&pawl_engine::config::default_config_text(
                    pawl_engine::Platform::current(),
                ))?;
                Ok(ExitCode::SUCCESS)
            }
            ConfigCommand::Keys => {
                out::print(&config_file::keys_listing(pawl_engine::Platform::current()))?;
                Ok(ExitCode::SUCCESS)
            }
            ConfigCommand::Check { file } => {
                let path = file.as_deref().or(cli.config.as_deref());
                let loaded = config_file::load(path)?;
                let apps = config_file::app_listing(&loaded.config);
                out::println(format!("{}: ok\n{apps}", loaded.origin).trim_end())?;
                Ok(ExitCode::SUCCESS)
            }
        },
    }
}

/// The config for the diagnostic commands: a broken config is reported and the defaults
/// are used, so `pawl devices` and `pawl inspect` still help.
fn config_or_defaults(path: Option<&Path>) -> pawl_engine::Config {
    match config_file::load(path) {
        Ok(loaded) => loaded.config,
        Err(e) => {
            log::warn!("{e:#}");
            log::warn!("showing what the defaults would do");
            pawl_engine::Config::default_for(pawl_engine::Platform::current())
        }
    }
}

/// A `--timeout SECONDS` value.
fn seconds(s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| anyhow::format_err!("invalid timeout {s} s"))
}

/// `pawl run`: takes the single-instance lock, loads the config (a bad one exits non-zero
/// with `file:line:column` before any device is touched), grabs the devices, reports
/// ready (metadata for `pawl status`, the readiness line for `pawl on`), runs until
/// SIGTERM/SIGINT.
fn run_daemon(config: Option<&Path>, detached: bool, debug: bool) -> anyhow::Result<ExitCode> {
    let mut worker = match worker::Worker::start(detached) {
        Ok(w) => w,
        Err(e) => match e.downcast::<worker::AlreadyRunning>() {
            // Another worker already does the job: nothing to do, and not a failure (a
            // service manager must not restart us for it: Restart=on-failure, KeepAlive
            // SuccessfulExit).
            Ok(already) if already.pid.is_some() => {
                out::eprintln(&format!("pawl: {already}; not starting another"))?;
                return Ok(ExitCode::SUCCESS);
            }
            // The lock is held but its holder has not identified itself: the same line and
            // status as `pawl status` (a service manager retries later).
            Ok(already) => {
                out::eprintln(&format!("pawl: {already}; not starting another"))?;
                return Ok(ExitCode::from(control::EXIT_UNIDENTIFIED));
            }
            Err(e) => return Err(e),
        },
    };
    let started = config_file::load(config).and_then(|loaded| {
        log::info!("config: {}", loaded.origin);
        Ok((platform::start(loaded.config, debug)?, loaded.origin))
    });
    #[cfg_attr(
        not(target_os = "linux"),
        expect(unused_mut, reason = "only Linux reloads")
    )]
    let (mut daemon, origin) = match started {
        Ok(s) => s,
        Err(err) => {
            worker.fail(&err);
            return Err(err);
        }
    };
    #[cfg(target_os = "linux")]
    {
        // SIGHUP reads the same file again (or the default path, which may exist now).
        let path = config.map(Path::to_owned);
        daemon.set_reload(Box::new(move || {
            config_file::load(path.as_deref())
                .map(|loaded| loaded.config)
                .map_err(|e| format!("{e:#}"))
        }));
    }
    let grabbed = platform::grabbed(&daemon);
    log::info!("running: {} device(s) grabbed", grabbed.devices.len());
    worker.ready(&origin, grabbed)?;
    platform::run(daemon, &mut |devices| {
        if let Err(e) = worker.set_devices(devices) {
            log::warn!("cannot update the worker metadata: {e}");
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The platform backend behind `pawl run`.
#[cfg(target_os = "linux")]
mod platform {
    use crate::lifecycle::{GrabbedDevice, Handled};

    pub type Daemon = pawl_linux::Daemon;

    /// Starts the Linux daemon; the desktop for default chords comes from
    /// `XDG_CURRENT_DESKTOP` unless the config names one. (`debug` only sets the log
    /// level on Linux, done by the caller.)
    pub fn start(config: pawl_engine::Config, _debug: bool) -> anyhow::Result<Daemon> {
        let xdg = std::env::var("XDG_CURRENT_DESKTOP").unwrap_or_default();
        let desktop = pawl_engine::Desktop::from_xdg_current_desktop(&xdg);
        Ok(pawl_linux::start(
            config,
            &pawl_linux::Options::new(desktop),
        )?)
    }

    /// The grabbed devices and the handled mice, for the worker metadata.
    pub fn grabbed(daemon: &Daemon) -> Handled {
        convert(&daemon.devices(), &daemon.mice(), &daemon.focus())
    }

    /// Runs until SIGTERM/SIGINT; `changed` receives the devices and mice when they change.
    pub fn run(daemon: Daemon, changed: &mut dyn FnMut(Handled)) -> anyhow::Result<()> {
        daemon.run(&mut |devices, mice, focus| changed(convert(devices, mice, focus)))?;
        Ok(())
    }

    fn convert(
        devices: &[pawl_linux::DeviceSummary],
        mice: &[pawl_linux::MouseSummary],
        focus: &pawl_linux::FocusSummary,
    ) -> Handled {
        Handled {
            devices: devices
                .iter()
                .map(|d| GrabbedDevice {
                    path: d.path.display().to_string(),
                    name: d.name.clone(),
                    vendor: d.vendor,
                    product: d.product,
                })
                .collect(),
            mice: mice.iter().map(super::mouse_record).collect(),
            focus: Some(crate::lifecycle::FocusRecord {
                backend: focus.backend.clone(),
                app: focus.app.clone(),
                profile: focus.profile.clone(),
            }),
        }
    }
}

/// A Linux mouse summary as the metadata records it (also `pawl devices`' prediction).
#[cfg(target_os = "linux")]
fn mouse_record(m: &pawl_linux::MouseSummary) -> lifecycle::MouseRecord {
    use lifecycle::{MouseRecord, NodeRecord, PathRecord};
    let text = |p: &Path| p.display().to_string();
    MouseRecord {
        name: m.name.clone(),
        vendor: m.vendor,
        product: m.product,
        nodes: m
            .nodes
            .iter()
            .map(|n| NodeRecord {
                path: text(&n.path),
                state: n.state.code().to_owned(),
                clone: n.clone.as_deref().map(text),
            })
            .collect(),
        hidraw: m.hidraw.as_deref().map(text),
        paths: m
            .paths
            .iter()
            .map(|p| PathRecord {
                part: p.part.clone(),
                path: p.carrier.code().to_owned(),
                reason: p.why.code().to_owned(),
                text: p.text.clone(),
            })
            .collect(),
        settings: (!m.settings.is_empty()).then(|| lifecycle::SettingsRecord {
            dpi: m.settings.dpi,
            smartshift: m.settings.smartshift.map(|s| s.to_string()),
            thumb_wheel_invert: m.settings.thumb_wheel_invert,
        }),
        battery: None,
    }
}

#[cfg(target_os = "macos")]
use crate::macos as platform;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod platform {
    use crate::lifecycle::Handled;

    pub enum Daemon {}

    pub fn start(_config: pawl_engine::Config, _debug: bool) -> anyhow::Result<Daemon> {
        anyhow::bail!("`pawl run` is not available on this platform")
    }

    pub fn grabbed(daemon: &Daemon) -> Handled {
        match *daemon {}
    }

    pub fn run(daemon: Daemon, _changed: &mut dyn FnMut(Handled)) -> anyhow::Result<()> {
        match daemon {}
    }
}

/// What decides the log level (see [`init_logging`]).
struct LogChoice {
    /// The level without flags or variables: info for `run`, warn for the other commands.
    default: log::LevelFilter,
    /// `run --debug` / `debug`: at least debug.
    debug: bool,
    /// `-v` count.
    verbose: u8,
    /// `-q` count.
    quiet: u8,
}

/// The level the flags ask for, `None` without `-v`, `-q` or `--debug`: each `-v` one level
/// up from the default (or from debug with `--debug`), each `-q` one down, clamped to
/// off..=trace.
fn flag_level(choice: &LogChoice) -> Option<log::LevelFilter> {
    use log::LevelFilter;
    if choice.verbose == 0 && choice.quiet == 0 && !choice.debug {
        return None;
    }
    const LEVELS: [LevelFilter; 6] = [
        LevelFilter::Off,
        LevelFilter::Error,
        LevelFilter::Warn,
        LevelFilter::Info,
        LevelFilter::Debug,
        LevelFilter::Trace,
    ];
    let base = if choice.debug {
        LevelFilter::Debug.max(choice.default)
    } else {
        choice.default
    };
    let at = LEVELS.iter().position(|l| *l == base).unwrap_or(3) as i32;
    let at = (at + i32::from(choice.verbose) - i32::from(choice.quiet)).clamp(0, 5);
    Some(LEVELS[at as usize])
}

/// Logs to stderr as `pawl: LEVEL message`. Precedence, later wins for the global level:
/// the default (info for `run`, warn otherwise), then `RUST_LOG`, then `PAWL_LOG` (both
/// env_logger filter syntax, e.g. `debug` or `pawl_linux=debug`), then the flags
/// (`-v`/`-q`, repeatable, and `--debug`: [`flag_level`]). Module directives from the
/// variables (`pawl_linux=trace`) always apply. Failed writes to stderr are dropped by
/// env_logger, never a panic.
fn init_logging(choice: &LogChoice) {
    use std::io::Write;
    let mut builder = env_logger::Builder::new();
    builder
        .filter_level(choice.default)
        .parse_env(env_logger::Env::new().filter("RUST_LOG"))
        .parse_env(env_logger::Env::new().filter("PAWL_LOG"));
    if let Some(level) = flag_level(choice) {
        builder.filter_level(level);
    }
    builder
        .format(|buf, record| writeln!(buf, "pawl: {:5} {}", record.level(), record.args()))
        .init();
    if let Some(spec) = std::env::var_os("PAWL_LOG") {
        for directive in ignored_directives(&spec.to_string_lossy()) {
            log::warn!(
                "PAWL_LOG: `{}` is neither a level (off, error, warn, info, debug, trace) nor \
                 one of pawl's modules (pawl, pawl_linux, pawl_engine, …): it changes nothing",
                out::escape_control(directive)
            );
        }
    }
}

/// The directives of an env_logger filter `spec` (`directive,directive…[/regex]`, each
/// `level`, `module` or `module=level`) that can change none of pawl's logs: a bare word
/// that is not a level and names no module of pawl's crates (`pawl`, `pawl_*`), the usual
/// mistake (`PAWL_LOG=verbose`, which env_logger takes for a module name). Directives for
/// other modules (`libbpf_rs=debug`) are the user's choice and kept quiet.
fn ignored_directives(spec: &str) -> Vec<&str> {
    const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];
    let filters = spec.split('/').next().unwrap_or("");
    filters
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty() && !d.contains('='))
        .filter(|d| !LEVELS.iter().any(|l| l.eq_ignore_ascii_case(d)))
        .filter(|d| *d != "pawl" && !d.starts_with("pawl_") && !d.starts_with("pawl::"))
        .collect()
}

#[cfg(test)]
mod tests {
    use log::LevelFilter;

    use super::*;

    fn level(default: LevelFilter, debug: bool, verbose: u8, quiet: u8) -> Option<LevelFilter> {
        flag_level(&LogChoice {
            default,
            debug,
            verbose,
            quiet,
        })
    }

    #[test]
    fn a_log_word_that_is_no_level_and_no_pawl_module_is_reported() {
        assert_eq!(ignored_directives("verbose"), ["verbose"]);
        assert_eq!(ignored_directives("DEBUG"), [] as [&str; 0]);
        assert_eq!(
            ignored_directives("pawl_linux=trace, info,pawl,garbage/x"),
            ["garbage"]
        );
        assert!(ignored_directives("libbpf_rs=debug,pawl_engine::scroll").is_empty());
        assert!(ignored_directives("").is_empty());
    }

    #[test]
    fn each_v_raises_and_each_q_lowers_the_log_level_from_the_default() {
        use LevelFilter::*;
        assert_eq!(
            level(Info, false, 0, 0),
            None,
            "no flag: the variables decide"
        );
        assert_eq!(level(Info, false, 1, 0), Some(Debug));
        assert_eq!(level(Info, false, 2, 0), Some(Trace));
        assert_eq!(level(Info, false, 9, 0), Some(Trace));
        assert_eq!(level(Info, false, 0, 1), Some(Warn));
        assert_eq!(level(Info, false, 0, 3), Some(Off));
        assert_eq!(level(Warn, false, 0, 9), Some(Off));
        assert_eq!(level(Warn, false, 1, 0), Some(Info));
        assert_eq!(level(Info, true, 0, 0), Some(Debug), "--debug");
        assert_eq!(level(Info, true, 1, 0), Some(Trace));
        assert_eq!(level(Info, true, 0, 1), Some(Info));
        assert_eq!(level(Info, false, 1, 1), Some(Info));
    }
}
