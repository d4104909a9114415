//! Hyprland's event socket, "socket2": connect, then read the lines Hyprland writes to
//! every client; nothing is sent.
//!
//! The protocol, from Hyprland's wiki page "IPC" (wiki.hypr.land/IPC) and its source
//! (`src/managers/EventManager.cpp`, `src/Compositor.cpp`, `src/desktop/Window.cpp`), as
//! shell clients use it (`socat` on socket2, `awk -F '>>|,'` taking the class):
//! - The socket is `$XDG_RUNTIME_DIR/hypr/$HYPRLAND_INSTANCE_SIGNATURE/.socket2.sock`
//!   since Hyprland 0.40, `/tmp/hypr/$HYPRLAND_INSTANCE_SIGNATURE/.socket2.sock` before
//!   (Hyprland commit a5a6480, "for consumers, check if `$XDG_RUNTIME_DIR/hypr` exists. If
//!   so, use it. If not, use the old `/tmp/hypr`"); [`socket2_paths`] follows that rule,
//!   so `/tmp`, where any local user may create the path first, is not tried when the
//!   runtime directory's `hypr` folder exists.
//! - Each event is one line, `EVENT>>DATA\n`. Hyprland cuts `DATA` at 1024 bytes and
//!   turns newlines in it into spaces, so a line is short and whole.
//! - A focus change is `activewindow>>WINDOWCLASS,WINDOWTITLE`, also sent again when the
//!   focused window's title changes. The class is the part before the first comma (the
//!   title may hold commas). `activewindow>>,` means no window is focused. Every other
//!   event (`activewindowv2>>ADDRESS`, `workspace>>NAME`, …) is ignored.
//! - Hyprland queues up to 64 events for a client whose socket is full, then drops it
//!   (`MAX_QUEUED_EVENTS`); pawl reads whenever epoll says the socket is readable.
//!
//! [`LineDecoder`] (framing) and [`focus_line`] (one line) are pure; [`Hyprland`] owns the
//! socket, non-blocking, for the daemon's epoll set.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use super::{FocusEvent, Readout};

/// The longest line pawl keeps, bytes, without its newline (4 KiB). Hyprland's lines are
/// at most the event name plus 1027 bytes (`EventManager.cpp` cuts the data at 1024); a
/// longer line is dropped as it arrives, without being kept.
pub const MAX_LINE_BYTES: usize = 4096;

/// The prefix of a focus change (wiki "IPC", event `activewindow`).
pub const ACTIVE_WINDOW: &[u8] = b"activewindow>>";

/// The socket2 path for instance `signature`, by Hyprland's rule for clients (commit
/// a5a6480): under `runtime_dir` (`$XDG_RUNTIME_DIR`, Hyprland 0.40 and later) when it is
/// set, not empty and holds `hypr`; else under `/tmp` (older Hyprland). One path, never
/// both: the `/tmp` one is not tried when the runtime one refuses. Looks at the file
/// system (whether `hypr` exists) each call.
pub fn socket2_paths(runtime_dir: Option<&OsStr>, signature: &OsStr) -> Vec<PathBuf> {
    let tail = Path::new("hypr").join(signature).join(".socket2.sock");
    let base = runtime_dir
        .filter(|d| !d.is_empty())
        .map(Path::new)
        .filter(|d| d.join("hypr").exists())
        .unwrap_or(Path::new("/tmp"));
    vec![base.join(tail)]
}

/// Splits the byte stream into lines. Bytes may arrive in any pieces.
#[derive(Debug, Default)]
pub struct LineDecoder {
    /// The line so far, at most [`MAX_LINE_BYTES`].
    buf: Vec<u8>,
    /// The line being read is over the limit: drop bytes until its newline.
    dropping: bool,
}

impl LineDecoder {
    /// Appends bytes read from the socket and calls `line` with each line they complete
    /// (without its newline). A line over [`MAX_LINE_BYTES`] is dropped, not kept.
    pub fn push(&mut self, mut bytes: &[u8], mut line: impl FnMut(&[u8])) {
        while let Some(nl) = bytes.iter().position(|&b| b == b'\n') {
            let head = &bytes[..nl];
            bytes = &bytes[nl + 1..];
            if self.dropping {
                self.dropping = false;
            } else if self.buf.len() + head.len() > MAX_LINE_BYTES {
                log::warn!("Hyprland socket2: a line over {MAX_LINE_BYTES} bytes: skipped");
            } else if self.buf.is_empty() {
                line(head);
            } else {
                self.buf.extend_from_slice(head);
                line(&self.buf);
            }
            self.buf.clear();
        }
        if self.dropping {
            return;
        }
        if self.buf.len() + bytes.len() > MAX_LINE_BYTES {
            log::warn!("Hyprland socket2: a line over {MAX_LINE_BYTES} bytes: skipped");
            self.buf.clear();
            self.dropping = true;
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }
}

/// The focus change one line says: `None` for any other event or an `activewindow` line
/// without a comma. The class (before the first comma) as [`FocusEvent::App`], with the
/// rest as its title: a character Hyprland's 1024-byte cut split at its end is left out,
/// and a title with other bytes that are not UTF-8 is none. [`FocusEvent::Unknown`] when
/// the class is empty (no window focused), not UTF-8, or longer than
/// [`pawl_engine::config::MAX_APP_ID_BYTES`]. Hyprland sends the line again when the
/// focused window's title changes.
pub fn focus_line(line: &[u8]) -> Option<FocusEvent> {
    let data = line.strip_prefix(ACTIVE_WINDOW)?;
    let comma = data.iter().position(|&b| b == b',')?;
    let id = std::str::from_utf8(&data[..comma])
        .ok()
        .filter(|c| !c.is_empty() && c.len() <= pawl_engine::config::MAX_APP_ID_BYTES);
    // Hyprland cuts the data at 1024 bytes, inside a character if need be.
    let title = super::utf8_before_cut(&data[comma + 1..]);
    Some(id.map_or(FocusEvent::Unknown, |id| FocusEvent::app(id, title)))
}

/// A connection to Hyprland's event socket.
#[derive(Debug)]
pub struct Hyprland {
    stream: UnixStream,
    decoder: LineDecoder,
    /// The last focus reported, so a title change of the focused window says nothing.
    last: Option<FocusEvent>,
}

impl Hyprland {
    /// Connects to the first of `paths` (see [`socket2_paths`]) that accepts; the stream is
    /// non-blocking afterwards. Returns the connection and the path. Errors: none accepted
    /// (the error names every path tried and the last failure).
    pub fn connect(paths: &[PathBuf]) -> io::Result<(Hyprland, PathBuf)> {
        let mut last_error = io::Error::new(io::ErrorKind::NotFound, "no socket path");
        for path in paths {
            match super::connect_own(path) {
                Ok(stream) => {
                    stream.set_nonblocking(true)?;
                    let conn = Hyprland {
                        stream,
                        decoder: LineDecoder::default(),
                        last: None,
                    };
                    return Ok((conn, path.clone()));
                }
                Err(e) => last_error = e,
            }
        }
        let tried: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        Err(io::Error::new(
            last_error.kind(),
            format!("{} ({last_error})", tried.join(", ")),
        ))
    }

    /// The socket, for epoll (readable: call [`Hyprland::read`]).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.stream.as_fd()
    }

    /// Reads everything the socket holds and returns the last focus change in it (one
    /// that differs from the one reported before; the earlier ones are out of date).
    pub fn read(&mut self) -> Readout {
        let mut focus = None;
        let decoder = &mut self.decoder;
        let open = super::drain(&mut self.stream, |bytes| {
            decoder.push(bytes, |line| {
                if let Some(f) = focus_line(line) {
                    focus = Some(f);
                }
            });
            true
        });
        if !open {
            return Readout::Closed;
        }
        super::changed(&mut self.last, focus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(pieces: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut d = LineDecoder::default();
        let mut got = Vec::new();
        for piece in pieces {
            d.push(piece, |l| got.push(l.to_vec()));
        }
        got
    }

    #[test]
    fn the_class_before_the_first_comma_is_the_app_and_the_title_may_hold_commas() {
        assert_eq!(
            focus_line(b"activewindow>>firefox,Mozilla Firefox"),
            Some(FocusEvent::app("firefox", Some("Mozilla Firefox")))
        );
        assert_eq!(
            focus_line(b"activewindow>>org.gnome.Nautilus,a, b, and c,"),
            Some(FocusEvent::app("org.gnome.Nautilus", Some("a, b, and c,")))
        );
        assert_eq!(
            focus_line(b"activewindow>>foot,\xff"),
            Some(FocusEvent::app("foot", None)),
            "a title that is not UTF-8 is none"
        );
        assert_eq!(
            focus_line(b"activewindow>>kitty,"),
            Some(FocusEvent::app("kitty", None))
        );
    }

    #[test]
    fn no_window_focused_or_an_unusable_class_is_unknown() {
        assert_eq!(focus_line(b"activewindow>>,"), Some(FocusEvent::Unknown));
        assert_eq!(
            focus_line(b"activewindow>>,a title"),
            Some(FocusEvent::Unknown)
        );
        assert_eq!(
            focus_line(b"activewindow>>\xff\xfe,title"),
            Some(FocusEvent::Unknown)
        );
        let long = [
            ACTIVE_WINDOW,
            &vec![b'a'; pawl_engine::config::MAX_APP_ID_BYTES + 1],
            b",t",
        ]
        .concat();
        assert_eq!(focus_line(&long), Some(FocusEvent::Unknown));
    }

    #[test]
    fn other_events_and_malformed_lines_say_nothing() {
        for line in [
            &b"activewindowv2>>5581d0e1c3a0"[..],
            b"activewindowv2>>",
            b"workspace>>2",
            b"windowtitle>>5581d0e1c3a0",
            b"windowtitlev2>>5581d0e1c3a0,firefox,x",
            b"openwindow>>5581d0e1c3a0,2,firefox,Mozilla Firefox",
            b"activewindow>>no comma",
            b"activewindow",
            b"",
        ] {
            assert_eq!(focus_line(line), None, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn lines_split_anywhere_are_put_back_together() {
        let stream = b"workspace>>2\nactivewindow>>foot,~/src, pawl\nactivewindow>>,\n";
        for cut in 0..=stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(
                lines_of(&[a, b]),
                [
                    &b"workspace>>2"[..],
                    b"activewindow>>foot,~/src, pawl",
                    b"activewindow>>,"
                ],
                "cut at {cut}"
            );
        }
        let bytewise: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(lines_of(&bytewise).len(), 3);
    }

    #[test]
    fn a_line_without_its_newline_yet_is_held_back() {
        assert!(lines_of(&[b"activewindow>>foot,~"]).is_empty());
    }

    #[test]
    fn a_line_over_the_limit_is_dropped_unkept_and_the_next_line_read() {
        let long = [ACTIVE_WINDOW, &vec![b'x'; MAX_LINE_BYTES]].concat();
        let mut d = LineDecoder::default();
        let mut got = Vec::new();
        for piece in long.chunks(1000) {
            d.push(piece, |l| got.push(l.to_vec()));
            assert!(d.buf.len() <= MAX_LINE_BYTES, "the long line is not kept");
        }
        d.push(b",title\nactivewindow>>foot,~\n", |l| got.push(l.to_vec()));
        assert_eq!(got, [b"activewindow>>foot,~".to_vec()]);

        // Over the limit within one read, newline included.
        let mut one = [ACTIVE_WINDOW, &vec![b'y'; MAX_LINE_BYTES], b",t\n"].concat();
        one.extend_from_slice(b"activewindow>>kitty,\n");
        assert_eq!(lines_of(&[&one]), [b"activewindow>>kitty,".to_vec()]);

        // Exactly at the limit is kept.
        let edge = [&vec![b'z'; MAX_LINE_BYTES][..], b"\n"].concat();
        assert_eq!(lines_of(&[&edge]).len(), 1);
    }

    #[test]
    fn the_runtime_dir_is_used_when_it_holds_hypr_else_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = Some(dir.path().as_os_str());
        assert_eq!(
            socket2_paths(runtime, OsStr::new("abc_123")),
            [PathBuf::from("/tmp/hypr/abc_123/.socket2.sock")],
            "no hypr folder in the runtime directory: older Hyprland's /tmp"
        );
        std::fs::create_dir(dir.path().join("hypr")).unwrap();
        assert_eq!(
            socket2_paths(runtime, OsStr::new("abc_123")),
            [dir.path().join("hypr/abc_123/.socket2.sock")]
        );
        for unset in [None, Some(OsStr::new(""))] {
            assert_eq!(
                socket2_paths(unset, OsStr::new("abc_123")),
                [PathBuf::from("/tmp/hypr/abc_123/.socket2.sock")]
            );
        }
    }

    #[test]
    fn a_connection_reads_the_last_focus_skips_repeats_and_sees_the_close() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.sock");
        let path = dir.path().join(".socket2.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let (mut hypr, used) = Hyprland::connect(&[missing, path.clone()]).unwrap();
        assert_eq!(used, path, "the first path that accepts");
        let (mut server, _) = listener.accept().unwrap();
        assert_eq!(hypr.read(), Readout::Focus(None), "nothing sent yet");

        server
            .write_all(b"activewindow>>kitty,~\nactivewindowv2>>55a1\nworkspace>>2\n")
            .unwrap();
        assert_eq!(
            hypr.read(),
            Readout::Focus(Some(FocusEvent::app("kitty", Some("~"))))
        );

        // The last of several changes in one read; a half line waits for its end.
        server
            .write_all(b"activewindow>>foot,a\nactivewindow>>firefox,Tab, with, commas\nactivewindow>>kitty,")
            .unwrap();
        assert_eq!(
            hypr.read(),
            Readout::Focus(Some(FocusEvent::app("firefox", Some("Tab, with, commas"))))
        );
        server.write_all(b"~/src\n").unwrap();
        assert_eq!(
            hypr.read(),
            Readout::Focus(Some(FocusEvent::app("kitty", Some("~/src"))))
        );

        // A title change of the focused window is its new title; a repeat says nothing.
        server.write_all(b"activewindow>>kitty,vim\n").unwrap();
        assert_eq!(
            hypr.read(),
            Readout::Focus(Some(FocusEvent::app("kitty", Some("vim"))))
        );
        server.write_all(b"activewindow>>kitty,vim\n").unwrap();
        assert_eq!(hypr.read(), Readout::Focus(None));

        server.write_all(b"activewindow>>,\n").unwrap();
        assert_eq!(hypr.read(), Readout::Focus(Some(FocusEvent::Unknown)));

        drop(server);
        assert_eq!(hypr.read(), Readout::Closed);
    }

    #[test]
    fn a_title_hyprland_cut_inside_a_character_keeps_what_comes_before() {
        // Hyprland cuts an event's data at 1024 bytes, not at a character boundary
        // (`formatEvent`: `data.substr(0, 1024)`): a long non-ASCII title arrives with half a
        // character at its end. X11's utf8_title drops that half; here the whole title goes.
        let title = format!("a{}", "\u{e9}".repeat(600));
        let data = format!("firefox,{title}");
        let cut = &data.as_bytes()[..1024];
        let line = [ACTIVE_WINDOW, cut].concat();
        let kept = format!("a{}", "\u{e9}".repeat(507));
        assert_eq!(
            focus_line(&line),
            Some(FocusEvent::app("firefox", Some(&kept))),
            "the title up to the cut character"
        );
    }

    #[test]
    fn with_the_runtime_dirs_hypr_folder_present_tmp_is_not_tried() {
        // Hyprland's own rule (commit a5a6480): when `$XDG_RUNTIME_DIR/hypr` exists, use
        // it, else `/tmp/hypr`. Listing `/tmp` regardless means that whenever the runtime
        // socket refuses (Hyprland restarting, pawl started first) pawl connects to
        // `/tmp/hypr/SIG/.socket2.sock`, a path any local user can create first, and
        // takes its focus from them.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("hypr")).unwrap();
        let paths = socket2_paths(Some(dir.path().as_os_str()), OsStr::new("abc_123"));
        assert!(
            paths.iter().all(|p| !p.starts_with("/tmp/hypr")),
            "{paths:?}"
        );
    }

    #[test]
    fn connecting_with_no_socket_names_the_paths_tried() {
        let dir = tempfile::tempdir().unwrap();
        let paths = [dir.path().join("a.sock"), dir.path().join("b.sock")];
        let e = Hyprland::connect(&paths).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("a.sock") && msg.contains("b.sock"), "{msg}");
    }
}
