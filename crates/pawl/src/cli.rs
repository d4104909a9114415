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
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
