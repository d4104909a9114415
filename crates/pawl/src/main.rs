//! The `pawl` command line: parses flags, loads the config, hands over to the platform
//! crate. No gesture or scroll logic lives here; exit codes and error printing are decided
//! in [`main`] only.

mod cli;
mod config_file;
mod control;
mod devices;
#[cfg(test)]
mod generated;
mod inspect;
mod lifecycle;
#[cfg(target_os = "macos")]
mod macos;
mod replay;
mod service;
mod version;
mod worker;

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::cli::{Cli, Command, ConfigCommand, ServiceCommand};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("pawl: {err:#}");
            ExitCode::FAILURE
        }
    }
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
                },
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::On(args) => control::on(&control::OnOptions {
            config: cli.config,
            debug: args.debug,
            log: args.log,
            timeout: seconds(args.timeout)?,
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
            let lines = match command {
                ServiceCommand::Install { dry_run: true } => {
                    println!("# {}", plan.file.display());
                    print!("{}", plan.contents);
                    return Ok(ExitCode::SUCCESS);
                }
                ServiceCommand::Install { dry_run: false } => {
                    let exe = std::env::current_exe()?;
                    if let Some(warning) = service::exe_warning(&exe) {
                        eprintln!("{warning}");
                    }
                    service::install(&plan, &mut |c| service::run_command(c))?
                }
                ServiceCommand::Uninstall => {
                    service::uninstall(&plan, &mut |c| service::run_command(c))?
                }
            };
            for line in lines {
                println!("{line}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Config { command } => match command {
            ConfigCommand::Path => {
                println!("{}", config_file::path(cli.config.as_deref())?.display());
                Ok(ExitCode::SUCCESS)
            }
            ConfigCommand::Default => {
                print!(
                    "{}",
                    pawl_engine::config::default_config_text(pawl_engine::Platform::current())
                );
                Ok(ExitCode::SUCCESS)
            }
            ConfigCommand::Keys => {
                print!(
                    "{}",
                    config_file::keys_listing(pawl_engine::Platform::current())
                );
                Ok(ExitCode::SUCCESS)
            }
            ConfigCommand::Check { file } => {
                let path = file.as_deref().or(cli.config.as_deref());
                let loaded = config_file::load(path)?;
                println!("{}: ok", loaded.origin);
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
            eprintln!("pawl: {e:#}\npawl: showing what the defaults would do");
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
    init_logging(debug);
    let mut worker = match worker::Worker::start(detached) {
        Ok(w) => w,
        // Another worker already does the job: nothing to do, and not a failure (a service
        // manager must not restart us for it: Restart=on-failure, KeepAlive SuccessfulExit).
        Err(e) if e.is::<worker::AlreadyRunning>() => {
            eprintln!("pawl: {e}; not starting another");
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => return Err(e),
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
    log::info!("running: {} device(s) grabbed", grabbed.len());
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
    use crate::lifecycle::GrabbedDevice;

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

    /// The grabbed devices, for the worker metadata.
    pub fn grabbed(daemon: &Daemon) -> Vec<GrabbedDevice> {
        convert(&daemon.devices())
    }

    /// Runs until SIGTERM/SIGINT; `changed` receives the device list when it changes.
    pub fn run(daemon: Daemon, changed: &mut dyn FnMut(Vec<GrabbedDevice>)) -> anyhow::Result<()> {
        daemon.run(&mut |devices| changed(convert(devices)))?;
        Ok(())
    }

    fn convert(devices: &[pawl_linux::DeviceSummary]) -> Vec<GrabbedDevice> {
        devices
            .iter()
            .map(|d| GrabbedDevice {
                path: d.path.display().to_string(),
                name: d.name.clone(),
                vendor: d.vendor,
                product: d.product,
            })
            .collect()
    }
}

#[cfg(target_os = "macos")]
use crate::macos as platform;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod platform {
    use crate::lifecycle::GrabbedDevice;

    pub enum Daemon {}

    pub fn start(_config: pawl_engine::Config, _debug: bool) -> anyhow::Result<Daemon> {
        anyhow::bail!("`pawl run` is not available on this platform")
    }

    pub fn grabbed(daemon: &Daemon) -> Vec<GrabbedDevice> {
        match *daemon {}
    }

    pub fn run(daemon: Daemon, _changed: &mut dyn FnMut(Vec<GrabbedDevice>)) -> anyhow::Result<()> {
        match daemon {}
    }
}

/// Logs to stderr: `info` and up, `debug` with `--debug`; `PAWL_LOG` (env_logger filter
/// syntax, e.g. `debug` or `pawl_linux=debug`) overrides both.
fn init_logging(debug: bool) {
    use std::io::Write;
    let level = if debug {
        log::LevelFilter::Debug
    } else {
        log::LevelFilter::Info
    };
    env_logger::Builder::new()
        .filter_level(level)
        .parse_env(env_logger::Env::new().filter("PAWL_LOG"))
        .format(|buf, record| writeln!(buf, "pawl: {:5} {}", record.level(), record.args()))
        .init();
}
