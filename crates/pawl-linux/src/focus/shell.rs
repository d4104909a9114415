//! GNOME Shell and KWin push the focused application over the session bus: pawl owns
//! [`BUS_NAME`] and serves one method, `Activated(app_id: s, title: s)` ([`INTERFACE`] at
//! [`OBJECT_PATH`]), which the shell side calls on every focus change: the GNOME Shell
//! extension in `contrib/gnome-shell/`, or the KWin script `contrib/kwin/pawl-focus.js`
//! that [`Shell::connect`] loads into KWin itself.
//!
//! zbus serves the bus on a thread of its own; each call stores the latest focus and adds
//! one to an eventfd, which is what the daemon's epoll loop waits on ([`Shell::fd`]). A
//! second thread blocks on `NameOwnerChanged` for the shell's own bus name
//! ([`Desktop::shell_name`]) and reports the shell gone the same way. Neither thread wakes
//! while nothing happens.
//!
//! Only the connection that owns the shell's bus name may call `Activated`: others get
//! `org.freedesktop.DBus.Error.AccessDenied`, so no other program of the session picks
//! pawl's profile.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustix::event::{EventfdFlags, eventfd};

use super::{FocusEvent, Readout};

/// The session-bus name pawl owns while it serves focus: the shell side calls it, and the
/// GNOME Shell extension watches it appear to push the current focus once.
pub const BUS_NAME: &str = "io.github.pawl.Focus1";
/// The object the shell side calls.
pub const OBJECT_PATH: &str = "/io/github/pawl/Focus1";
/// The interface of `Activated(app_id: s, title: s)`; an empty `app_id` means no app.
pub const INTERFACE: &str = "io.github.pawl.Focus1";
/// The KWin script, loaded into KWin on connect.
pub const KWIN_SCRIPT: &str = include_str!("../../../../contrib/kwin/pawl-focus.js");
/// The plugin name the KWin script is loaded under (`loadScript`'s second argument).
pub const KWIN_PLUGIN_NAME: &str = "pawl-focus";
/// The uuid of the GNOME Shell extension (`contrib/gnome-shell/legacy/` for GNOME 42 to 44,
/// `contrib/gnome-shell/esm/` for 45 and later).
pub const GNOME_EXTENSION_UUID: &str = "focus@pawl.github.io";
/// The file name of the KWin script in pawl's runtime directory.
pub const KWIN_SCRIPT_FILE: &str = "pawl-focus.js";

/// The desktop whose shell pushes focus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Desktop {
    /// GNOME Shell with pawl's extension.
    Gnome,
    /// KDE Plasma's KWin with pawl's script.
    Kde,
}

impl Desktop {
    /// The bus name the shell owns while it runs: `org.gnome.Shell` or `org.kde.KWin`.
    pub fn shell_name(self) -> &'static str {
        match self {
            Desktop::Gnome => "org.gnome.Shell",
            Desktop::Kde => "org.kde.KWin",
        }
    }
}

/// What the bus threads leave for [`Shell::read`].
#[derive(Debug, Default)]
struct Latest {
    /// The focus of the last call not read yet.
    focus: Option<FocusEvent>,
    /// The shell lost its bus name, or the bus connection ended.
    closed: bool,
}

/// The state the bus threads and the daemon share.
#[derive(Debug)]
struct Shared {
    latest: Mutex<Latest>,
    /// Readable while something is in `latest` (non-blocking, close-on-exec).
    wake: OwnedFd,
}

impl Shared {
    fn post(&self, f: impl FnOnce(&mut Latest)) {
        f(&mut self.latest.lock().unwrap_or_else(|e| e.into_inner()));
        let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
    }
}

/// The object at [`OBJECT_PATH`].
struct Focus1 {
    shared: Arc<Shared>,
    shell: &'static str,
}

#[zbus::interface(name = "io.github.pawl.Focus1")]
impl Focus1 {
    /// The shell says `app_id` is focused now (`""`: no app), its window titled `title`
    /// (`""`: none).
    #[zbus(name = "Activated")]
    async fn activated(
        &self,
        app_id: String,
        title: String,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> zbus::fdo::Result<()> {
        let owner = conn
            .call_method(
                Some("org.freedesktop.DBus"),
                "/org/freedesktop/DBus",
                Some("org.freedesktop.DBus"),
                "GetNameOwner",
                &(self.shell,),
            )
            .await
            .ok()
            .and_then(|reply| reply.body().deserialize::<String>().ok());
        let sender = header.sender().map(|s| s.as_str());
        if owner.is_none() || owner.as_deref() != sender {
            log::warn!(
                "focus: Activated from {}, not from {}'s owner: refused",
                sender.unwrap_or("?"),
                self.shell
            );
            return Err(zbus::fdo::Error::AccessDenied(format!(
                "only {} may call Activated",
                self.shell
            )));
        }
        let focus = if app_id.is_empty() || app_id.len() > pawl_engine::config::MAX_APP_ID_BYTES {
            FocusEvent::Unknown
        } else {
            FocusEvent::app(&app_id, Some(&title))
        };
        self.shared.post(|l| l.focus = Some(focus));
        Ok(())
    }
}

/// Why [`Shell::connect`] failed.
#[derive(Debug)]
pub enum ConnectError {
    /// The eventfd, or the KWin script's file (with its path).
    Io(std::io::Error, Option<PathBuf>),
    /// The bus: connecting, owning [`BUS_NAME`], subscribing, or a KWin scripting call.
    Bus(zbus::Error),
    /// KWin answered, but did not load the script: why, for `pawl status`.
    Refused(String),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Io(e, Some(p)) => write!(f, "{}: {e}", p.display()),
            ConnectError::Io(e, None) => write!(f, "{e}"),
            ConnectError::Bus(e) => write!(f, "session bus: {e}"),
            ConnectError::Refused(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for ConnectError {}

impl From<zbus::Error> for ConnectError {
    fn from(e: zbus::Error) -> Self {
        ConnectError::Bus(e)
    }
}

impl From<zbus::fdo::Error> for ConnectError {
    fn from(e: zbus::fdo::Error) -> Self {
        ConnectError::Bus(e.into())
    }
}

/// pawl's end of the session bus, serving [`BUS_NAME`] for one desktop's shell.
#[derive(Debug)]
pub struct Shell {
    conn: zbus::blocking::Connection,
    shared: Arc<Shared>,
    last: Option<FocusEvent>,
}

impl Shell {
    /// Connects to the session bus at `address` (`None`: `$DBUS_SESSION_BUS_ADDRESS`), owns
    /// [`BUS_NAME`], serves [`OBJECT_PATH`] and starts watching `desktop`'s shell name. On
    /// KDE it then loads the KWin script: [`KWIN_SCRIPT`] is written to
    /// `runtime_dir/`[`KWIN_SCRIPT_FILE`] (the directory made 0700 when missing, and
    /// refused unless it is the user's own with no access for group or others), a script
    /// of that plugin name is unloaded, and `loadScript` and `start` run the new one (a
    /// `loadScript` answering a negative id is tried once more after another unload).
    /// Errors: the bus is not there, the name is owned already (another pawl), KWin refused
    /// the script ([`ConnectError::Refused`] when `loadScript` answered a negative id
    /// twice), or the file could not be written.
    pub fn connect(
        desktop: Desktop,
        address: Option<&str>,
        runtime_dir: &Path,
    ) -> Result<Shell, ConnectError> {
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
            .map_err(|e| ConnectError::Io(e.into(), None))?;
        let shared = Arc::new(Shared {
            latest: Mutex::new(Latest::default()),
            wake,
        });
        let address = match address {
            Some(a) => a.to_owned(),
            None => std::env::var("DBUS_SESSION_BUS_ADDRESS").map_err(|_| {
                ConnectError::Bus(zbus::Error::Address(
                    "DBUS_SESSION_BUS_ADDRESS is not set".into(),
                ))
            })?,
        };
        // pawl connects the socket itself where it can: zbus's own connect runs on the
        // `blocking` crate's thread pool, whose first thread then stays and wakes every
        // 500 ms for the rest of the run (blocking 1.7 `main_loop`).
        let builder = match unix_socket(&address) {
            Some(addr) => {
                let stream = std::os::unix::net::UnixStream::connect_addr(&addr)
                    .map_err(|e| ConnectError::Io(e, None))?;
                zbus::blocking::connection::Builder::async_io_unix_stream(stream)
            }
            None => zbus::blocking::connection::Builder::address(address.as_str())?,
        };
        let conn = builder
            .serve_at(
                OBJECT_PATH,
                Focus1 {
                    shared: shared.clone(),
                    shell: desktop.shell_name(),
                },
            )?
            .build()?;
        // Not queued behind another owner: a second pawl fails here.
        let flags = zbus::fdo::RequestNameFlags::DoNotQueue.into();
        match conn.request_name_with_flags(BUS_NAME, flags)? {
            zbus::fdo::RequestNameReply::PrimaryOwner
            | zbus::fdo::RequestNameReply::AlreadyOwner => {}
            _ => return Err(ConnectError::Bus(zbus::Error::NameTaken)),
        }
        let dbus = zbus::blocking::fdo::DBusProxy::new(&conn)?;
        let changes = dbus.receive_name_owner_changed_with_args(&[(0, desktop.shell_name())])?;
        let watch = shared.clone();
        std::thread::Builder::new()
            .name("pawl-focus-bus".into())
            .spawn(move || {
                for change in changes {
                    let gone = change.args().is_ok_and(|a| a.new_owner().is_none());
                    if gone {
                        break;
                    }
                }
                // The shell lost its name, or the stream ended with the connection.
                watch.post(|l| l.closed = true);
            })
            .map_err(|e| ConnectError::Io(e, None))?;
        if desktop == Desktop::Kde {
            load_kwin_script(&conn, runtime_dir)?;
        }
        Ok(Shell {
            conn,
            shared,
            last: None,
        })
    }

    /// The eventfd, for epoll (readable: call [`Shell::read`]).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.shared.wake.as_fd()
    }

    /// Drains the eventfd and returns the latest focus since the last read (`None` when it
    /// repeats the one before), or [`Readout::Closed`] once the shell or the bus is gone.
    pub fn read(&mut self) -> Readout {
        let mut count = [0u8; 8];
        let _ = rustix::io::read(&self.shared.wake, &mut count);
        let (focus, closed) = {
            let mut l = self.shared.latest.lock().unwrap_or_else(|e| e.into_inner());
            (l.focus.take(), l.closed)
        };
        if closed {
            return Readout::Closed;
        }
        super::changed(&mut self.last, focus)
    }
}

impl Drop for Shell {
    /// Closes the bus connection, which releases [`BUS_NAME`] and ends the watch thread.
    fn drop(&mut self) {
        let _ = self.conn.clone().close();
    }
}

/// The first `unix:path=` or `unix:abstract=` socket of a D-Bus server address list
/// (`;`-separated, values `%`-escaped: the D-Bus specification, "Server Addresses"); `None`
/// when there is none, or it is malformed (zbus then connects, and reports the error).
fn unix_socket(address: &str) -> Option<std::os::unix::net::SocketAddr> {
    use std::os::linux::net::SocketAddrExt;
    for entry in address.split(';') {
        let Some(params) = entry.strip_prefix("unix:") else {
            continue;
        };
        for kv in params.split(',') {
            let (key, value) = kv.split_once('=')?;
            let value = unescape(value)?;
            match key {
                "path" => {
                    return std::os::unix::net::SocketAddr::from_pathname(
                        std::ffi::OsStr::from_bytes(&value),
                    )
                    .ok();
                }
                "abstract" => {
                    return std::os::unix::net::SocketAddr::from_abstract_name(&value).ok();
                }
                _ => {}
            }
        }
    }
    None
}

/// A D-Bus address value with its `%XX` escapes decoded; `None` when an escape is broken.
fn unescape(value: &str) -> Option<Vec<u8>> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Writes [`KWIN_SCRIPT`] under `runtime_dir` and has KWin run it (see [`Shell::connect`]).
fn load_kwin_script(
    conn: &zbus::blocking::Connection,
    runtime_dir: &Path,
) -> Result<(), ConnectError> {
    use std::os::unix::fs::DirBuilderExt;
    let io = |p: &Path| {
        let p = p.to_owned();
        move |e| ConnectError::Io(e, Some(p))
    };
    match std::fs::DirBuilder::new().mode(0o700).create(runtime_dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(ConnectError::Io(e, Some(runtime_dir.to_owned()))),
    }
    private_dir(runtime_dir).map_err(io(runtime_dir))?;
    let path = runtime_dir.join(KWIN_SCRIPT_FILE);
    std::fs::write(&path, KWIN_SCRIPT).map_err(io(&path))?;
    let Some(path_str) = path.to_str() else {
        return Err(ConnectError::Io(
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not UTF-8"),
            Some(path),
        ));
    };
    // An older pawl's script, or one left by a pawl that died: unloaded, whether or not.
    // KWin answers a negative id (-1) while a script of that name is still loaded, and its
    // unloadScript only deleteLater()s the script (KWin's scripting.cpp): a second unload
    // and load give KWin's event loop the turn that deletes it.
    let mut id = -1;
    for _ in 0..2 {
        let _ = kwin_scripting(conn, "unloadScript", &(KWIN_PLUGIN_NAME,));
        id = kwin_scripting(conn, "loadScript", &(path_str, KWIN_PLUGIN_NAME))?
            .body()
            .deserialize()?;
        if id >= 0 {
            break;
        }
    }
    if id < 0 {
        return Err(ConnectError::Refused(format!(
            "KWin refused the script {} (loadScript answered {id}: a script named \
             {KWIN_PLUGIN_NAME} is still loaded; restarting KWin unloads it)",
            path.display()
        )));
    }
    kwin_scripting(conn, "start", &())?;
    log::debug!(
        "focus: KWin script {} loaded as script {id}",
        path.display()
    );
    Ok(())
}

/// Whether `dir` is a directory (not a symbolic link) the user owns, with no permission
/// bits for group or others: the CLI's rule for pawl's runtime directory
/// (`lifecycle::dir_problem`). Another user who could write there could swap the KWin
/// script before KWin reads it, and so run JavaScript inside KWin. Errors
/// (`PermissionDenied`) say which part fails and what to do.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir)?;
    let uid = rustix::process::getuid().as_raw();
    let problem = if !meta.file_type().is_dir() {
        Some("it is not a directory (or is a symbolic link); remove it".to_owned())
    } else if meta.uid() != uid {
        Some(format!(
            "it belongs to uid {}, not to you (uid {uid}); have it removed",
            meta.uid()
        ))
    } else if meta.mode() & 0o077 != 0 {
        Some(format!(
            "it is accessible by other users (mode {:o}); expected 0700: remove it (`rm -r`) \
             and pawl makes a private one",
            meta.mode() & 0o7777
        ))
    } else {
        None
    };
    match problem {
        Some(p) => Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, p)),
        None => Ok(()),
    }
}

/// Calls `method` of `org.kde.kwin.Scripting` on `org.kde.KWin` `/Scripting`.
fn kwin_scripting<B>(
    conn: &zbus::blocking::Connection,
    method: &str,
    body: &B,
) -> zbus::Result<zbus::message::Message>
where
    B: zbus::export::serde::Serialize + zbus::zvariant::DynamicType,
{
    conn.call_method(
        Some("org.kde.KWin"),
        "/Scripting",
        Some("org.kde.kwin.Scripting"),
        method,
        body,
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_bus_address_names_its_unix_socket() {
        use std::os::linux::net::SocketAddrExt;
        let path = unix_socket("unix:path=/run/user/1000/bus").unwrap();
        assert_eq!(path.as_pathname(), Some(Path::new("/run/user/1000/bus")));
        let escaped = unix_socket("unix:path=/tmp/a%20b,guid=0123").unwrap();
        assert_eq!(escaped.as_pathname(), Some(Path::new("/tmp/a b")));
        let later =
            unix_socket("tcp:host=localhost,port=1;unix:guid=1,abstract=/tmp/dbus-x").unwrap();
        assert_eq!(later.as_abstract_name(), Some(&b"/tmp/dbus-x"[..]));
        assert!(unix_socket("unix:tmpdir=/tmp").is_none());
        assert!(unix_socket("unix:path=/tmp/%zz").is_none());
        assert!(unix_socket("tcp:host=localhost,port=1").is_none());
        assert!(unix_socket("").is_none());
    }

    use super::*;
    use std::io::BufRead;
    use std::process::{Child, Command, Stdio};

    /// A private session bus: `dbus-daemon` listening in a temporary directory.
    struct Bus {
        child: Child,
        address: String,
        _dir: tempfile::TempDir,
    }

    impl Drop for Bus {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Starts a bus, or `None` (printing why) when `dbus-daemon` is not installed outside
    /// CI; CI installs it, so there its absence fails the test.
    fn bus() -> Option<Bus> {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("bus.conf");
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
                dir.path().display()
            ),
        )
        .unwrap();
        let child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--print-address", "--nofork"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "dbus-daemon is missing, and CI installs it"
                );
                eprintln!("SKIPPED: dbus-daemon is not installed (Debian's dbus-daemon package)");
                return None;
            }
            Err(e) => panic!("cannot start dbus-daemon: {e}"),
        };
        let mut address = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        Some(Bus {
            child,
            address: address.trim().to_owned(),
            _dir: dir,
        })
    }

    /// A second client of the bus that owns `name`, as the shell does.
    fn owner(bus: &Bus, name: &str) -> zbus::blocking::Connection {
        zbus::blocking::connection::Builder::address(bus.address.as_str())
            .unwrap()
            .name(name.to_owned())
            .unwrap()
            .build()
            .unwrap()
    }

    fn activated(conn: &zbus::blocking::Connection, app: &str, title: &str) -> zbus::Result<()> {
        conn.call_method(
            Some(BUS_NAME),
            OBJECT_PATH,
            Some(INTERFACE),
            "Activated",
            &(app, title),
        )
        .map(drop)
    }

    /// Waits up to 10 s for the backend's eventfd to be readable; whether it was.
    fn readable(shell: &Shell) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let fd = shell.fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        let timeout = Timespec {
            tv_sec: 10,
            tv_nsec: 0,
        };
        poll(&mut fds, Some(&timeout)).unwrap() == 1
    }

    fn app(id: &str, title: &str) -> Readout {
        Readout::Focus(Some(FocusEvent::app(id, Some(title))))
    }

    #[test]
    fn gnome_shell_pushes_apps_repeats_are_dropped_and_its_exit_closes() {
        let Some(bus) = bus() else { return };
        let runtime = tempfile::tempdir().unwrap();
        let shell_conn = owner(&bus, "org.gnome.Shell");
        let mut shell = Shell::connect(Desktop::Gnome, Some(&bus.address), runtime.path()).unwrap();
        assert_eq!(shell.read(), Readout::Focus(None), "nothing pushed yet");

        activated(&shell_conn, "firefox", "t").unwrap();
        assert!(readable(&shell));
        assert_eq!(shell.read(), app("firefox", "t"));
        assert!(!readable_now(&shell), "read drains the eventfd");

        activated(&shell_conn, "firefox", "another title").unwrap();
        assert_eq!(shell.read(), app("firefox", "another title"), "a new title");
        activated(&shell_conn, "firefox", "another title").unwrap();
        assert_eq!(
            shell.read(),
            Readout::Focus(None),
            "the same app and title again"
        );
        activated(&shell_conn, "", "").unwrap();
        assert_eq!(shell.read(), Readout::Focus(Some(FocusEvent::Unknown)));
        activated(&shell_conn, "org.gnome.Nautilus", "Home").unwrap();
        activated(&shell_conn, "foot", "~").unwrap();
        assert_eq!(shell.read(), app("foot", "~"), "the latest of two pushes");
        assert!(
            !runtime.path().join(KWIN_SCRIPT_FILE).exists(),
            "no KWin script on GNOME"
        );

        shell_conn.release_name("org.gnome.Shell").unwrap();
        assert!(readable(&shell));
        assert_eq!(shell.read(), Readout::Closed);
        assert_eq!(shell.read(), Readout::Closed, "closed stays closed");
    }

    /// Whether the eventfd is readable without waiting.
    fn readable_now(shell: &Shell) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let fd = shell.fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        poll(&mut fds, Some(&Timespec::default())).unwrap() == 1
    }

    #[test]
    fn only_the_shell_may_push_and_too_long_ids_are_unknown() {
        let Some(bus) = bus() else { return };
        let runtime = tempfile::tempdir().unwrap();
        let shell_conn = owner(&bus, "org.gnome.Shell");
        let mut shell = Shell::connect(Desktop::Gnome, Some(&bus.address), runtime.path()).unwrap();
        let stranger = zbus::blocking::connection::Builder::address(bus.address.as_str())
            .unwrap()
            .build()
            .unwrap();
        let refused = activated(&stranger, "evil", "").unwrap_err();
        assert!(refused.to_string().contains("AccessDenied"), "{refused}");
        assert_eq!(shell.read(), Readout::Focus(None));
        // KWin may not push for GNOME's backend either.
        let kwin = owner(&bus, "org.kde.KWin");
        assert!(activated(&kwin, "evil", "").is_err());
        assert_eq!(shell.read(), Readout::Focus(None));

        activated(&shell_conn, "kitty", "").unwrap();
        assert_eq!(
            shell.read(),
            Readout::Focus(Some(FocusEvent::app("kitty", None))),
            "an empty title is none"
        );
        let long = "x".repeat(pawl_engine::config::MAX_APP_ID_BYTES + 1);
        activated(&shell_conn, &long, "").unwrap();
        assert_eq!(shell.read(), Readout::Focus(Some(FocusEvent::Unknown)));
    }

    #[test]
    fn a_second_pawl_cannot_take_the_name() {
        let Some(bus) = bus() else { return };
        let runtime = tempfile::tempdir().unwrap();
        let _shell_conn = owner(&bus, "org.gnome.Shell");
        let _first = Shell::connect(Desktop::Gnome, Some(&bus.address), runtime.path()).unwrap();
        let second = Shell::connect(Desktop::Gnome, Some(&bus.address), runtime.path());
        assert!(matches!(second, Err(ConnectError::Bus(_))), "{second:?}");
    }

    #[test]
    fn the_bus_going_away_closes_the_backend() {
        let Some(mut bus) = bus() else { return };
        let runtime = tempfile::tempdir().unwrap();
        let _shell_conn = owner(&bus, "org.gnome.Shell");
        let mut shell = Shell::connect(Desktop::Gnome, Some(&bus.address), runtime.path()).unwrap();
        bus.child.kill().unwrap();
        bus.child.wait().unwrap();
        assert!(readable(&shell));
        assert_eq!(shell.read(), Readout::Closed);
    }

    /// What the fake KWin's `/Scripting` was asked, in order.
    #[derive(Debug, Default)]
    struct Calls(Vec<String>);

    /// KWin on `bus`, its `/Scripting` served by `scripting`, until dropped.
    fn fake_kwin(
        bus: &Bus,
        scripting: impl zbus::object_server::Interface,
    ) -> zbus::blocking::Connection {
        zbus::blocking::connection::Builder::address(bus.address.as_str())
            .unwrap()
            .name("org.kde.KWin")
            .unwrap()
            .serve_at("/Scripting", scripting)
            .unwrap()
            .build()
            .unwrap()
    }

    struct FakeScripting {
        calls: Arc<Mutex<Calls>>,
    }

    #[zbus::interface(name = "org.kde.kwin.Scripting")]
    impl FakeScripting {
        #[zbus(name = "unloadScript")]
        fn unload_script(&self, name: String) -> bool {
            self.calls
                .lock()
                .unwrap()
                .0
                .push(format!("unloadScript {name}"));
            false
        }

        #[zbus(name = "loadScript")]
        fn load_script(&self, path: String, name: String) -> i32 {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let same = if text == KWIN_SCRIPT {
                "the script"
            } else {
                "other text"
            };
            self.calls
                .lock()
                .unwrap()
                .0
                .push(format!("loadScript {path} {name}: {same}"));
            7
        }

        #[zbus(name = "start")]
        fn start(&self) {
            self.calls.lock().unwrap().0.push("start".into());
        }
    }

    #[test]
    fn on_kde_the_script_is_written_loaded_and_started_then_kwin_pushes() {
        use std::os::unix::fs::PermissionsExt;
        let Some(bus) = bus() else { return };
        let calls = Arc::new(Mutex::new(Calls::default()));
        let kwin = fake_kwin(
            &bus,
            FakeScripting {
                calls: calls.clone(),
            },
        );
        let runtime = tempfile::tempdir().unwrap();
        let dir = runtime.path().join("pawl");
        let mut shell = Shell::connect(Desktop::Kde, Some(&bus.address), &dir).unwrap();

        let path = dir.join(KWIN_SCRIPT_FILE);
        assert_eq!(
            calls.lock().unwrap().0,
            [
                "unloadScript pawl-focus".to_owned(),
                format!("loadScript {} pawl-focus: the script", path.display()),
                "start".to_owned(),
            ]
        );
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "the runtime directory is the user's");
        assert!(KWIN_SCRIPT.contains(r#""Activated""#));

        activated(&kwin, "org.kde.dolphin", "Home").unwrap();
        assert_eq!(shell.read(), app("org.kde.dolphin", "Home"));
        drop(kwin);
        assert!(readable(&shell));
        assert_eq!(shell.read(), Readout::Closed);
    }

    /// A KWin whose `loadScript` answers -1, as KWin does while a script of that plugin
    /// name is still loaded (`Scripting::loadScript`; `unloadScript` only `deleteLater`s it).
    struct RefusingScripting;

    #[zbus::interface(name = "org.kde.kwin.Scripting")]
    impl RefusingScripting {
        #[zbus(name = "unloadScript")]
        fn unload_script(&self, _name: String) -> bool {
            true
        }

        #[zbus(name = "loadScript")]
        fn load_script(&self, _path: String, _name: String) -> i32 {
            -1
        }

        #[zbus(name = "start")]
        fn start(&self) {}
    }

    #[test]
    fn kwin_answering_minus_one_to_load_script_is_a_refusal() {
        // -1 is KWin's "not loaded": no script will ever call, so the backend is refused,
        // its reason for `pawl status`, rather than reported serving.
        let Some(bus) = bus() else { return };
        let _kwin = fake_kwin(&bus, RefusingScripting);
        let runtime = tempfile::tempdir().unwrap();
        let got = Shell::connect(
            Desktop::Kde,
            Some(&bus.address),
            &runtime.path().join("pawl"),
        );
        let Err(ConnectError::Refused(why)) = got else {
            panic!("connect with no script loaded: {got:?}");
        };
        assert!(why.contains("loadScript answered -1"), "{why}");
    }

    #[test]
    fn the_kwin_script_is_not_written_into_a_directory_others_may_write() {
        // Another user who can write in the directory could swap the script before KWin
        // reads it, and so run JavaScript inside KWin: a directory that exists is used only
        // when it is the user's and 0700, as the CLI's rule for the runtime directory.
        use std::os::unix::fs::PermissionsExt;
        let Some(bus) = bus() else { return };
        let calls = Arc::new(Mutex::new(Calls::default()));
        let _kwin = fake_kwin(
            &bus,
            FakeScripting {
                calls: calls.clone(),
            },
        );
        let runtime = tempfile::tempdir().unwrap();
        let dir = runtime.path().join("pawl");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let got = Shell::connect(Desktop::Kde, Some(&bus.address), &dir);
        assert!(
            matches!(got, Err(ConnectError::Io(..))),
            "a world-writable directory was used (connect is_ok: {}), KWin asked {:?}",
            got.is_ok(),
            calls.lock().unwrap().0
        );
        let why = got.unwrap_err().to_string();
        assert!(
            why.contains("mode 777") && why.contains(&*dir.to_string_lossy()),
            "{why}"
        );
        assert!(calls.lock().unwrap().0.is_empty(), "KWin was asked nothing");
        assert!(!dir.join(KWIN_SCRIPT_FILE).exists(), "nothing was written");
    }

    #[test]
    fn kde_without_kwin_does_not_connect() {
        let Some(bus) = bus() else { return };
        let runtime = tempfile::tempdir().unwrap();
        // A directory pawl makes (0700): the temporary one follows the umask.
        let dir = runtime.path().join("pawl");
        let got = Shell::connect(Desktop::Kde, Some(&bus.address), &dir);
        assert!(matches!(got, Err(ConnectError::Bus(_))), "{got:?}");
    }

    /// The GNOME Shell extension's folder for `variant` (`legacy` or `esm`).
    fn extension(variant: &str, file: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../contrib/gnome-shell")
            .join(variant)
            .join(file);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn both_gnome_extensions_carry_the_uuid_and_their_shell_versions() {
        for (variant, versions) in [
            ("legacy", &["42", "43", "44"][..]),
            ("esm", &["45", "46", "47", "48", "49"][..]),
        ] {
            let meta: serde_json::Value =
                serde_json::from_str(&extension(variant, "metadata.json")).unwrap();
            assert_eq!(meta["uuid"], GNOME_EXTENSION_UUID, "{variant}");
            assert!(meta["name"].as_str().is_some_and(|n| !n.is_empty()));
            assert!(meta["description"].as_str().is_some_and(|n| !n.is_empty()));
            let got: Vec<&str> = meta["shell-version"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(got, versions, "{variant}");
        }
    }

    #[test]
    fn both_gnome_extensions_share_their_logic_and_call_pawls_names() {
        let shared = |text: &str| -> String {
            let start = text.find("// pawl-focus: shared logic").unwrap();
            let end = text.find("// pawl-focus: end of shared logic").unwrap();
            text[start..end].to_owned()
        };
        let (legacy, esm) = (
            extension("legacy", "extension.js"),
            extension("esm", "extension.js"),
        );
        assert_eq!(shared(&legacy), shared(&esm));
        assert!(legacy.contains("function init()") && legacy.contains("imports.gi"));
        assert!(esm.contains("export default class") && esm.contains("extends Extension"));
        for script in [&legacy, &esm, &KWIN_SCRIPT.to_owned()] {
            for name in [BUS_NAME, OBJECT_PATH, INTERFACE, "\"Activated\""] {
                assert!(script.contains(name), "{name} missing");
            }
        }
    }
}
