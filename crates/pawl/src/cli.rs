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
    /// Replay a recorded event stream (evemu, `libinput record` YAML, DOM wheel JSON)
    /// through the engine: no device or permissions needed. Prints the output frames as
    /// evemu `E:` lines and the actions fired.
    Replay {
        /// The recording.
        file: PathBuf,
        /// Device identity, overriding the recording's header: `[BUS:]VID:PID[:NAME]`, ids
        /// in hex, e.g. `046d:b034:"MX Master 3S"` or `bluetooth:046d:b034`.
        #[arg(long, value_name = "ID")]
        device: Option<String>,
        /// evemu device description (`.desc`) for a recording without header (default:
        /// `NAME.desc` beside `NAME.WHAT.events`, when present).
        #[arg(long, value_name = "FILE")]
        desc: Option<PathBuf>,
        /// Print per-axis totals in and out, max steps and frame counts instead of the
        /// frames.
        #[arg(long)]
        summary: bool,
        /// Draw raw vs transformed scroll over time to FILE (`.svg` or `.png`).
        #[arg(long, value_name = "FILE")]
        plot: Option<PathBuf>,
    },
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
    fn replay_takes_a_file_device_summary_and_plot() {
        let cli = Cli::try_parse_from([
            "pawl",
            "replay",
            "x.events",
            "--device",
            "046d:b034:MX Master 3S",
            "--summary",
            "--plot",
            "p.svg",
        ])
        .unwrap();
        let Command::Replay {
            file,
            device,
            summary,
            plot,
            desc,
        } = cli.command
        else {
            panic!("not replay")
        };
        assert_eq!(file, PathBuf::from("x.events"));
        assert_eq!(device.as_deref(), Some("046d:b034:MX Master 3S"));
        assert!(summary && desc.is_none());
        assert_eq!(plot, Some(PathBuf::from("p.svg")));
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
