//! The clap definition of every subcommand and flag. Docs sit beside each definition; the
//! man page and shell completions are generated from it.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// A small, fast, event-driven mouse daemon: gestures, back/forward, per-device scroll.
#[derive(Debug, Parser)]
#[command(name = "pawl", version, about, long_about = None)]
pub struct Cli {
    /// Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// pawl's subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the daemon in the foreground until SIGTERM or Ctrl-C: grab the devices the
    /// config handles, transform them, release everything on exit.
    Run {
        /// Log every decision (each frame, each device) to stderr.
        #[arg(long)]
        debug: bool,
    },
    /// Same as `pawl run --debug`.
    Debug,
    /// Show, print or check the configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
}

/// `pawl config …`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the config file path pawl reads.
    Path,
    /// Print the default configuration, every key documented.
    Default,
    /// Check a config file (default: the one pawl reads) and exit non-zero on errors.
    Check {
        /// The file to check.
        file: Option<PathBuf>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_check_takes_an_optional_file() {
        let cli = Cli::try_parse_from(["pawl", "config", "check", "x.toml"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Config {
                command: ConfigCommand::Check { file: Some(_) }
            }
        ));
        let cli = Cli::try_parse_from(["pawl", "--config", "a.toml", "config", "check"]).unwrap();
        assert_eq!(cli.config, Some(PathBuf::from("a.toml")));
    }

    #[test]
    fn run_takes_debug_and_debug_is_its_own_command() {
        let cli = Cli::try_parse_from(["pawl", "run"]).unwrap();
        assert!(matches!(cli.command, Command::Run { debug: false }));
        let cli = Cli::try_parse_from(["pawl", "run", "--debug"]).unwrap();
        assert!(matches!(cli.command, Command::Run { debug: true }));
        let cli = Cli::try_parse_from(["pawl", "--config", "c.toml", "debug"]).unwrap();
        assert!(matches!(cli.command, Command::Debug));
        assert_eq!(cli.config, Some(PathBuf::from("c.toml")));
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
