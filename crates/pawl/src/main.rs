//! The `pawl` command line: parses flags, loads the config, hands over to the platform
//! crate. No gesture or scroll logic lives here; exit codes and error printing are decided
//! in [`main`] only.

mod cli;
mod config_file;
mod replay;

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
