//! The `pawl` command line: parses flags, loads the config, hands over to the platform
//! crate. No gesture or scroll logic lives here; exit codes and error printing are decided
//! in [`main`] only.

mod cli;
mod config_file;

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command, ConfigCommand};

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
        Command::Run { debug } => run_daemon(cli.config.as_deref(), debug),
        Command::Debug => run_daemon(cli.config.as_deref(), true),
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

/// `pawl run`: the config is loaded and validated before any device is touched, so a bad
/// config exits non-zero (with `file:line:column`) having grabbed nothing.
fn run_daemon(config: Option<&Path>, debug: bool) -> anyhow::Result<ExitCode> {
    init_logging(debug);
    let loaded = config_file::load(config)?;
    log::info!("config: {}", loaded.origin);
    run_platform(loaded.config)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(target_os = "linux")]
fn run_platform(config: pawl_engine::Config) -> anyhow::Result<()> {
    let xdg = std::env::var("XDG_CURRENT_DESKTOP").unwrap_or_default();
    let desktop = pawl_engine::Desktop::from_xdg_current_desktop(&xdg);
    pawl_linux::run(config, &pawl_linux::Options::new(desktop))?;
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn run_platform(_config: pawl_engine::Config) -> anyhow::Result<()> {
    anyhow::bail!("`pawl run` is not available on this platform yet")
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
