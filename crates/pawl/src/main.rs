//! The `pawl` command line: parses flags, loads the config, hands over to the platform
//! crate. No gesture or scroll logic lives here; exit codes and error printing are decided
//! in [`main`] only.

mod cli;
mod config_file;
mod control;
#[allow(
    dead_code,
    reason = "driven by the Linux backend's device reader, landing next"
)]
mod devices;
#[cfg(test)]
mod generated;
#[allow(
    dead_code,
    reason = "driven by the Linux backend's device reader, landing next"
)]
mod inspect;
mod lifecycle;
#[cfg(target_os = "macos")]
#[allow(
    dead_code,
    reason = "`run` is called by `pawl run`, which lands with the Linux backend"
)]
mod macos;
mod replay;
mod service;
#[allow(
    dead_code,
    reason = "called by `pawl run`, which lands with the Linux backend"
)]
mod worker;

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
            ConfigCommand::Check { file } => {
                let path = file.as_deref().or(cli.config.as_deref());
                let loaded = config_file::load(path)?;
                println!("{}: ok", loaded.origin);
                Ok(ExitCode::SUCCESS)
            }
        },
    }
}

/// A `--timeout SECONDS` value.
fn seconds(s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| anyhow::format_err!("invalid timeout {s} s"))
}
