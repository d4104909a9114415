# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_pawl_global_optspecs
    string join \n config= v/verbose q/quiet h/help V/version
end

function __fish_pawl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_pawl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_pawl_using_subcommand
    set -l cmd (__fish_pawl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c pawl -n "__fish_pawl_needs_command" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_needs_command" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_needs_command" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_needs_command" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_needs_command" -s V -l version -d 'Print version'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "run" -d 'Run the daemon in the foreground until SIGTERM or Ctrl-C: grab the devices the config handles, transform them, release everything on exit. Refuses to start while another pawl worker runs: exit 0 "already running (pid N)", or, after waiting 10 s for a holder of the lock to identify itself, exit 4 "starting (pid unknown)"'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "debug" -d 'Same as `pawl run --debug`'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "replay" -d 'Replay a recorded event stream (evemu, `libinput record` YAML, DOM wheel JSON) through the engine: no device or permissions needed. Prints the output frames as evemu `E:` lines and the actions fired'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "on" -d 'Start the background worker (detached) and wait until it has grabbed its devices'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "off" -d 'Stop the background worker: SIGTERM, then wait for it to exit'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "status" -d 'Show whether the worker runs: pid, uptime, grabbed devices, config, mice, battery, focus'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "inspect" -d 'Show pointer input live, read-only (nothing is grabbed): time, device, event type and code, value, pawl\'s button number and what pawl would do with each frame'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "devices" -d 'List pointer devices: bus, vendor:product, name, MX Master family member or not, what the config does with each, who grabs it'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "service" -d 'Start the worker at login: a systemd user unit (Linux) or a LaunchAgent (macOS)'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "config" -d 'Show, print or check the configuration'
complete -c pawl -n "__fish_pawl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pawl -n "__fish_pawl_using_subcommand run" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand run" -l debug -d 'Log every decision (each frame, each device) to stderr'
complete -c pawl -n "__fish_pawl_using_subcommand run" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand run" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand run" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand debug" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand debug" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand debug" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand debug" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand replay" -l device -d 'Device identity, overriding the recording\'s header: `[BUS:]VVVV:PPPP[:NAME]`. VVVV and PPPP are the vendor and product ids, 4 hex digits each; BUS is usb, bluetooth, i2c, i8042, virtual or the bus number in hex as evemu writes it (3, 0005); NAME is the rest, colons allowed, quotes removed. E.g. `046d:b034`, `5:046d:b034`, `bluetooth:046d:b034:"MX Master 3S"`' -r
complete -c pawl -n "__fish_pawl_using_subcommand replay" -l desc -d 'evemu device description (`.desc`) for a recording without header (default: `NAME.desc` beside `NAME.WHAT.events`, when present)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand replay" -l plot -d 'Draw raw vs transformed scroll over time to FILE (`.svg` or `.png`)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand replay" -l device-index -d 'Which device of a `libinput record` with several (0-based, in file order); without it, a record whose events come from several devices is an error' -r
complete -c pawl -n "__fish_pawl_using_subcommand replay" -l app -d 'Replay under the profile the `[[app]]` tables give this application id (exact, case-sensitive: a Wayland app_id, X11 WM_CLASS or macOS bundle id), as if it were focused throughout' -r
complete -c pawl -n "__fish_pawl_using_subcommand replay" -l title -d 'With --app: the window\'s title, for `[[app]]` tables with a `title` pattern (without it, those tables do not apply)' -r
complete -c pawl -n "__fish_pawl_using_subcommand replay" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand replay" -l summary -d 'Print per-axis totals in and out, max steps and frame counts instead of the frames'
complete -c pawl -n "__fish_pawl_using_subcommand replay" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand replay" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand replay" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand on" -l log -d 'Append the worker\'s log to FILE (by default the worker logs nowhere)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand on" -l timeout -d 'Seconds to wait for the worker to report that it has started' -r
complete -c pawl -n "__fish_pawl_using_subcommand on" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand on" -l debug -d 'Run the worker with --debug (every decision logged); logs to $XDG_STATE_HOME/pawl/pawl.log (macOS: ~/Library/Logs/pawl.log) unless --log is given'
complete -c pawl -n "__fish_pawl_using_subcommand on" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand on" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand on" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand off" -l timeout -d 'Seconds to wait for the worker to exit after SIGTERM' -r
complete -c pawl -n "__fish_pawl_using_subcommand off" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand off" -l kill -d 'Send SIGKILL if it has not exited by then (a killed worker cannot release buttons it holds on its virtual devices; the kernel still drops its grabs)'
complete -c pawl -n "__fish_pawl_using_subcommand off" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand off" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand off" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand status" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand status" -l json -d 'Print one JSON object: {"state": "running"|"stopped"|"stale"|"starting"|"unknown", …}'
complete -c pawl -n "__fish_pawl_using_subcommand status" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand status" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand status" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand inspect" -l device -d 'Only this device: its node (/dev/input/event5 or event5) or a name glob ("*MX Master*"); may be repeated' -r
complete -c pawl -n "__fish_pawl_using_subcommand inspect" -l record -d 'Also write the events to FILE as evemu text (one device), which `pawl replay` reads' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand inspect" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand inspect" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand inspect" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand inspect" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand devices" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand devices" -l json -d 'Print one JSON object: {"mx_master_present": bool, "devices": […]}'
complete -c pawl -n "__fish_pawl_using_subcommand devices" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand devices" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand devices" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand service; and not __fish_seen_subcommand_from install uninstall help" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand service; and not __fish_seen_subcommand_from install uninstall help" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand service; and not __fish_seen_subcommand_from install uninstall help" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand service; and not __fish_seen_subcommand_from install uninstall help" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand service; and not __fish_seen_subcommand_from install uninstall help" -f -a "install" -d 'Write the service file (runs `pawl [--config FILE] run`) and enable it'
complete -c pawl -n "__fish_pawl_using_subcommand service; and not __fish_seen_subcommand_from install uninstall help" -f -a "uninstall" -d 'Stop and disable the service and remove its file (nothing to do is fine)'
complete -c pawl -n "__fish_pawl_using_subcommand service; and not __fish_seen_subcommand_from install uninstall help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from install" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from install" -l dry-run -d 'Print the file, where it would go and the notes an install prints; change nothing'
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from install" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from install" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from uninstall" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from uninstall" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from uninstall" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from help" -f -a "install" -d 'Write the service file (runs `pawl [--config FILE] run`) and enable it'
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Stop and disable the service and remove its file (nothing to do is fine)'
complete -c pawl -n "__fish_pawl_using_subcommand service; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pawl -n "__fish_pawl_using_subcommand config; and not __fish_seen_subcommand_from path default check keys help" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand config; and not __fish_seen_subcommand_from path default check keys help" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand config; and not __fish_seen_subcommand_from path default check keys help" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand config; and not __fish_seen_subcommand_from path default check keys help" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand config; and not __fish_seen_subcommand_from path default check keys help" -f -a "path" -d 'Print the config file path pawl reads'
complete -c pawl -n "__fish_pawl_using_subcommand config; and not __fish_seen_subcommand_from path default check keys help" -f -a "default" -d 'Print the default configuration, every key documented'
complete -c pawl -n "__fish_pawl_using_subcommand config; and not __fish_seen_subcommand_from path default check keys help" -f -a "check" -d 'Check a config file (default: the one pawl reads) and exit non-zero on errors'
complete -c pawl -n "__fish_pawl_using_subcommand config; and not __fish_seen_subcommand_from path default check keys help" -f -a "keys" -d 'List the key names a chord may use (`{ key = "Super+Page_Up" }`, `[actions.chords]`), with their aliases; keys this platform cannot press are marked'
complete -c pawl -n "__fish_pawl_using_subcommand config; and not __fish_seen_subcommand_from path default check keys help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from path" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from path" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from path" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from path" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from default" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from default" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from default" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from default" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from check" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from check" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from check" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from keys" -l config -d 'Config file (default: $XDG_CONFIG_HOME/pawl/config.toml; missing = defaults)' -r -F
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from keys" -s v -l verbose -d 'Log more to stderr: -v debug, -vv trace (each -v one level up from the default: info for `run`, warn otherwise). Wins over PAWL_LOG and RUST_LOG for the level'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from keys" -s q -l quiet -d 'Log less to stderr: each -q one level down from the default (info for `run`, warn otherwise; down to nothing). Errors that end a command are always printed'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from keys" -s h -l help -d 'Print help'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "path" -d 'Print the config file path pawl reads'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "default" -d 'Print the default configuration, every key documented'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "check" -d 'Check a config file (default: the one pawl reads) and exit non-zero on errors'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "keys" -d 'List the key names a chord may use (`{ key = "Super+Page_Up" }`, `[actions.chords]`), with their aliases; keys this platform cannot press are marked'
complete -c pawl -n "__fish_pawl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "run" -d 'Run the daemon in the foreground until SIGTERM or Ctrl-C: grab the devices the config handles, transform them, release everything on exit. Refuses to start while another pawl worker runs: exit 0 "already running (pid N)", or, after waiting 10 s for a holder of the lock to identify itself, exit 4 "starting (pid unknown)"'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "debug" -d 'Same as `pawl run --debug`'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "replay" -d 'Replay a recorded event stream (evemu, `libinput record` YAML, DOM wheel JSON) through the engine: no device or permissions needed. Prints the output frames as evemu `E:` lines and the actions fired'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "on" -d 'Start the background worker (detached) and wait until it has grabbed its devices'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "off" -d 'Stop the background worker: SIGTERM, then wait for it to exit'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "status" -d 'Show whether the worker runs: pid, uptime, grabbed devices, config, mice, battery, focus'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "inspect" -d 'Show pointer input live, read-only (nothing is grabbed): time, device, event type and code, value, pawl\'s button number and what pawl would do with each frame'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "devices" -d 'List pointer devices: bus, vendor:product, name, MX Master family member or not, what the config does with each, who grabs it'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "service" -d 'Start the worker at login: a systemd user unit (Linux) or a LaunchAgent (macOS)'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "config" -d 'Show, print or check the configuration'
complete -c pawl -n "__fish_pawl_using_subcommand help; and not __fish_seen_subcommand_from run debug replay on off status inspect devices service config help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pawl -n "__fish_pawl_using_subcommand help; and __fish_seen_subcommand_from service" -f -a "install" -d 'Write the service file (runs `pawl [--config FILE] run`) and enable it'
complete -c pawl -n "__fish_pawl_using_subcommand help; and __fish_seen_subcommand_from service" -f -a "uninstall" -d 'Stop and disable the service and remove its file (nothing to do is fine)'
complete -c pawl -n "__fish_pawl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "path" -d 'Print the config file path pawl reads'
complete -c pawl -n "__fish_pawl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "default" -d 'Print the default configuration, every key documented'
complete -c pawl -n "__fish_pawl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "check" -d 'Check a config file (default: the one pawl reads) and exit non-zero on errors'
complete -c pawl -n "__fish_pawl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "keys" -d 'List the key names a chord may use (`{ key = "Super+Page_Up" }`, `[actions.chords]`), with their aliases; keys this platform cannot press are marked'
