//! The clap definition of every subcommand and flag. Docs sit beside each definition; the
//! man page and shell completions are generated from it.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// A small, fast, event-driven mouse daemon: gestures, back/forward, per-device scroll.
#[derive(Debug, Parser)]
#[command(name = "pawl", version = crate::version::VERSION, about, long_about = None)]
pub struct Cli {
    /// Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Log more to stderr: -v debug, -vv trace (each -v one level up from the default:
    /// info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Log less to stderr: each -q one level down from the default (info for `run`, warn
    /// otherwise; down to nothing). Errors that end a command are always printed.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub quiet: u8,

    /// Internal: started by `pawl on` (stdin is the lock, stdout the readiness pipe).
    #[arg(long, hide = true)]
    pub worker: bool,

    #[command(subcommand)]
    pub command: Command,
}

/// The end of `pawl --help` (added in `main`, beside the derived definition).
pub const AFTER_HELP: &str = "Exit status, every command: 141 when stdout is a pipe whose \
    reader has gone (nothing printed), 74 when stdout or stderr cannot be written (one \
    message), 1 for other errors; `pawl status`, `pawl devices`, `pawl on`/`off`/`run` \
    document their own codes. Log level: -v/-q, else PAWL_LOG, else RUST_LOG.";

/// pawl's subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the daemon in the foreground until SIGTERM or Ctrl-C: grab the devices the
    /// config handles, transform them, release everything on exit. Refuses to start
    /// while another pawl worker runs: exit 0 "already running (pid N)", or, after
    /// waiting 10 s for a holder of the lock to identify itself, exit 4 "starting (pid
    /// unknown)".
    Run {
        /// Log every decision (each frame, each device) to stderr.
        #[arg(long)]
        debug: bool,
    },
    /// Same as `pawl run --debug`.
    Debug,
    /// Replay a recorded event stream (evemu, `libinput record` YAML, DOM wheel JSON)
    /// through the engine: no device or permissions needed. Prints the output frames as
    /// evemu `E:` lines and the actions fired.
    Replay {
        /// The recording (`-`: standard input). At most 256 MiB and 2,000,000 events.
        file: PathBuf,
        /// Device identity, overriding the recording's header: `[BUS:]VVVV:PPPP[:NAME]`.
        /// VVVV and PPPP are the vendor and product ids, 4 hex digits each; BUS is usb,
        /// bluetooth, i2c, i8042, virtual or the bus number in hex as evemu writes it (3,
        /// 0005); NAME is the rest, colons allowed, quotes removed. E.g. `046d:b034`,
        /// `5:046d:b034`, `bluetooth:046d:b034:"MX Master 3S"`.
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
        /// Which device of a `libinput record` with several (0-based, in file order);
        /// without it, a record whose events come from several devices is an error.
        #[arg(long, value_name = "N")]
        device_index: Option<usize>,
        /// Replay under the profile the `[[app]]` tables give this application id (exact,
        /// case-sensitive: a Wayland app_id, X11 WM_CLASS or macOS bundle id), as if it
        /// were focused throughout.
        #[arg(long, value_name = "APP")]
        app: Option<String>,
        /// With --app: the window's title, for `[[app]]` tables with a `title` pattern
        /// (without it, those tables do not apply).
        #[arg(long, value_name = "TITLE", requires = "app")]
        title: Option<String>,
    },
    /// Start the background worker (detached) and wait until it has grabbed its devices.
    ///
    /// Prints one line: "started (pid N): grabbed …", or "already running (pid N)" when a
    /// worker runs (nothing is started). Exit 0 when a worker runs afterwards; 4 with
    /// "starting (pid …)" when the lock is held (or the new worker runs) but no worker has
    /// identified itself within --timeout.
    On(OnArgs),
    /// Stop the background worker: SIGTERM, then wait for it to exit.
    ///
    /// Prints "stopped (pid N)", or "not running" (exit 0 too). Signals only a process
    /// that holds the lock and matches its metadata (pid and start time); exit 4 with
    /// "starting (pid unknown)" when the lock's holder is not identified within --timeout.
    /// Never sends SIGKILL unless --kill is given.
    Off(OffArgs),
    /// Show whether the worker runs: pid, uptime, grabbed devices, config, mice, battery,
    /// focus.
    ///
    /// The focus line names the focus backend (where pawl learns the focused application),
    /// the focused application and the profile in force: the device's, or the [[app]]
    /// tables that apply. Decided by the lock, never by pawl.json alone. Exit status (LSB): 0 running, 1
    /// stopped with stale metadata (the worker died without cleaning up, or the file
    /// describes no lock holder), 3 stopped, 4 unknown: the lock is held but its holder
    /// has not identified itself ("starting (pid unknown)"), or the state cannot be read.
    Status {
        /// Print one JSON object: {"state": "running"|"stopped"|"stale"|"starting"|"unknown", …}.
        #[arg(long)]
        json: bool,
    },
    /// Show pointer input live, read-only (nothing is grabbed): time, device, event type
    /// and code, value, pawl's button number and what pawl would do with each frame.
    ///
    /// The shape of `evtest` / `libinput record` output, for bug reports. A device the
    /// running worker grabs sends its events only to pawl; its virtual device shows pawl's
    /// output. Stop with Ctrl-C.
    Inspect {
        /// Only this device: its node (/dev/input/event5 or event5) or a name glob
        /// ("*MX Master*"); may be repeated.
        #[arg(long, value_name = "DEVICE")]
        device: Vec<String>,
        /// Also write the events to FILE as evemu text (one device), which `pawl replay`
        /// reads.
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
    },
    /// List pointer devices: bus, vendor:product, name, MX Master family member or not,
    /// what the config does with each, who grabs it.
    ///
    /// Exit status: 0 when an MX Master is connected, 1 when none is.
    Devices {
        /// Print one JSON object: {"mx_master_present": bool, "devices": […]}.
        #[arg(long)]
        json: bool,
    },
    /// Start the worker at login: a systemd user unit (Linux) or a LaunchAgent (macOS).
    Service {
        #[command(subcommand)]
        command: ServiceCommand,
    },
    /// Show, print or check the configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
}

/// `pawl on` flags.
#[derive(Debug, clap::Args)]
pub struct OnArgs {
    /// Run the worker with --debug (every decision logged); logs to
    /// $XDG_STATE_HOME/pawl/pawl.log (macOS: ~/Library/Logs/pawl.log) unless --log is given.
    #[arg(long)]
    pub debug: bool,
    /// Append the worker's log to FILE (by default the worker logs nowhere).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Seconds to wait for the worker to report that it has started.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub timeout: f64,
}

/// `pawl off` flags.
#[derive(Debug, clap::Args)]
pub struct OffArgs {
    /// Seconds to wait for the worker to exit after SIGTERM.
    #[arg(long, value_name = "SECONDS", default_value_t = 3.0)]
    pub timeout: f64,
    /// Send SIGKILL if it has not exited by then (a killed worker cannot release buttons
    /// it holds on its virtual devices; the kernel still drops its grabs).
    #[arg(long)]
    pub kill: bool,
}

/// `pawl service …`.
#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Write the service file (runs `pawl [--config FILE] run`) and enable it.
    ///
    /// Linux: ~/.config/systemd/user/pawl.service (Restart=on-failure, started with the
    /// graphical session), then `systemctl --user daemon-reload` and `enable`. macOS:
    /// ~/Library/LaunchAgents/dev.pawl.worker.plist (RunAtLoad, KeepAlive unless it exited
    /// successfully, ProcessType Interactive), then `launchctl bootstrap`.
    Install {
        /// Print the file, where it would go and the notes an install prints; change
        /// nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Stop and disable the service and remove its file (nothing to do is fine).
    Uninstall,
}

/// `pawl config …`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the config file path pawl reads.
    Path,
    /// Print the default configuration, every key documented.
    Default,
    /// Check a config file (default: the one pawl reads) and exit non-zero on errors.
    ///
    /// A valid file prints "FILE: ok", then one line per `[[app]]` table: the applications
    /// it names, the devices it applies to and what it sets.
    Check {
        /// The file to check.
        file: Option<PathBuf>,
    },
    /// List the key names a chord may use (`{ key = "Super+Page_Up" }`,
    /// `[actions.chords]`), with their aliases; keys this platform cannot press are marked.
    Keys,
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
            ..
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
    fn status_help_names_the_focus_backend_app_and_profile() {
        use clap::CommandFactory;
        let mut cmd = Cli::command();
        let status = cmd.find_subcommand_mut("status").unwrap();
        let help = status.render_long_help().to_string();
        assert!(
            help.contains("names the focus backend (where pawl learns the focused application), the focused application and the profile in force"),
            "{help}"
        );
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
