//! X11's active window (EWMH): connect to `$DISPLAY`, select `PropertyChangeMask` on the
//! root window, and on each `PropertyNotify` of `_NET_ACTIVE_WINDOW` read that property,
//! then the window's `WM_CLASS` (ICCCM §4.1.2.5: two NUL-terminated strings, the instance
//! then the class; users match on the class) and `_NET_WM_NAME` (EWMH, `UTF8_STRING`) as
//! its title. When titles are followed (some `[[app]]` table has a `title`), pawl also
//! selects `PropertyChangeMask` on the active window (and drops it from the one before), so
//! a change of its `_NET_WM_NAME` is read too; that window's other property changes then
//! wake pawl as well (GTK's `_NET_WM_USER_TIME` on each key press, for one).
//!
//! Nothing here waits for the server once connected: the requests go out, the replies come
//! back on the socket the daemon's epoll set watches, and [`X11::read`] takes whatever is
//! there. A server grabbed by another client (`XGrabServer`) therefore never stalls the
//! daemon's input path; the focus is reported once the grab ends.
//!
//! The protocol's encodings (setup, requests, replies, `Xauthority`) are x11rb's sans-I/O
//! half, `x11rb-protocol`; [`active_window`], [`wm_class`] and [`utf8_title`] (the
//! property bytes) are pure. Local displays only: the Unix socket `/tmp/.X11-unix/X<n>`
//! (Linux's abstract one first, as libxcb does), not TCP.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use x11rb_protocol::packet_reader::PacketReader;
use x11rb_protocol::parse_display::{ConnectAddress, parse_display};
use x11rb_protocol::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ChangeWindowAttributesRequest, EventMask,
    GetPropertyReply, GetPropertyRequest, InternAtomReply, InternAtomRequest,
    PROPERTY_NOTIFY_EVENT,
};
use x11rb_protocol::x11_utils::TryParse;
use x11rb_protocol::xauth::{Family, get_auth};

use super::{FocusEvent, Readout};

/// The most bytes of one property pawl reads (1 KiB, 256 of the protocol's 4-byte units).
/// A `WM_CLASS` is two short names; a class past this is not read, and the window counts as
/// one without an id.
pub const MAX_PROPERTY_BYTES: u32 = 1024;

/// How long connecting may wait for the server (the setup and the atoms), at start and on
/// reload only.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// X11 error packets start with 0, replies with 1 (X11 protocol, "Encoding::Errors",
/// "Encoding::Replies"); an event's code has bit 7 set when another client sent it.
const ERROR: u8 = 0;
const REPLY: u8 = 1;

/// The active window an `_NET_ACTIVE_WINDOW` property reply names: `None` for window 0
/// (EWMH: "None if no window is active"), a missing property, or one of another type.
/// [`X11`] also reads the root window named here as none.
pub fn active_window(reply: &GetPropertyReply) -> Option<u32> {
    if reply.format != 32 || reply.type_ != u32::from(AtomEnum::WINDOW) {
        return None;
    }
    let bytes: [u8; 4] = reply.value.get(..4)?.try_into().ok()?;
    Some(u32::from_ne_bytes(bytes)).filter(|&w| w != 0)
}

/// The class in a `WM_CLASS` value (the second of its NUL-terminated strings; the first is
/// the instance). `complete` is false when the property is longer than what was read. `None`
/// when there is no second string, it is empty, cut off by the read limit, not UTF-8, or
/// longer than [`pawl_engine::config::MAX_APP_ID_BYTES`].
pub fn wm_class(value: &[u8], complete: bool) -> Option<&str> {
    let (_instance, rest) = value.split_at(value.iter().position(|&b| b == 0)? + 1);
    let class = match rest.iter().position(|&b| b == 0) {
        Some(end) => &rest[..end],
        // Some clients leave the last NUL out; a cut-off class is not the class.
        None if complete => rest,
        None => return None,
    };
    std::str::from_utf8(class)
        .ok()
        .filter(|c| !c.is_empty() && c.len() <= pawl_engine::config::MAX_APP_ID_BYTES)
}

/// A `_NET_WM_NAME` value as text: `None` when it is empty or not UTF-8 (a value cut by the
/// read limit in the middle of a character loses that character).
pub fn utf8_title(value: &[u8]) -> Option<&str> {
    super::utf8_before_cut(value).filter(|t| !t.is_empty())
}

/// The reply pawl waits for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    Nothing,
    /// `GetProperty(root, _NET_ACTIVE_WINDOW)`, sent as request `seq`.
    Active {
        seq: u16,
    },
    /// `GetProperty(window, WM_CLASS)` then `GetProperty(window, _NET_WM_NAME)`, sent as
    /// `seq` and `seq + 1`.
    Window {
        window: u32,
        seq: u16,
    },
}

/// A connection to the X server, watching the root window's `_NET_ACTIVE_WINDOW`.
#[derive(Debug)]
pub struct X11 {
    stream: UnixStream,
    reader: PacketReader,
    root: u32,
    net_active_window: u32,
    net_wm_name: u32,
    utf8_string: u32,
    /// The sequence number of the last request sent (the server echoes its low 16 bits).
    seq: u16,
    pending: Pending,
    /// The class read for the window of [`Pending::Window`], until its title arrives.
    class: Option<FocusEvent>,
    /// The last focus reported, so a property set again to the same window says nothing.
    last: Option<FocusEvent>,
    /// Whether the active window's title changes are followed.
    follow_titles: bool,
    /// The window whose property changes pawl selected (0: none).
    watched: u32,
}

impl X11 {
    /// Connects to `display` (`$DISPLAY`, e.g. `:0`) with the `Xauthority` cookie when one
    /// matches, interns the atoms, selects `PropertyChangeMask` on the root window and asks
    /// for the active window (its answer is the first [`X11::read`]); with `follow_titles`,
    /// the active window's own title changes are read too. Blocks up to
    /// [`CONNECT_TIMEOUT`] per step; non-blocking afterwards. Errors: the display string,
    /// the socket, a refused setup (e.g. no authorization), or a server that does not answer.
    pub fn connect(display: &str, follow_titles: bool) -> io::Result<X11> {
        let parsed = parse_display(Some(display))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let mut last_error = io::Error::new(io::ErrorKind::Unsupported, "only local displays");
        let mut stream = None;
        for addr in parsed.connect_instruction() {
            if let ConnectAddress::Socket(path) = addr {
                match connect_unix(&path) {
                    Ok(s) => {
                        stream = Some(s);
                        break;
                    }
                    Err(e) => last_error = e,
                }
            }
        }
        let mut stream = stream.ok_or(last_error)?;
        stream.set_read_timeout(Some(CONNECT_TIMEOUT))?;
        stream.set_write_timeout(Some(CONNECT_TIMEOUT))?;
        let hostname = std::fs::read("/proc/sys/kernel/hostname").unwrap_or_default();
        let hostname = hostname.strip_suffix(b"\n").unwrap_or(&hostname);
        let (name, data) = get_auth(Family::LOCAL, hostname, parsed.display)
            .ok()
            .flatten()
            .unwrap_or_default();
        let (mut connect, request) =
            x11rb_protocol::connect::Connect::with_authorization(name, data);
        stream.write_all(&request)?;
        loop {
            let n = stream.read(connect.buffer())?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            if connect.advance(n) {
                break;
            }
        }
        let setup = connect
            .into_setup()
            .map_err(|e| io::Error::new(io::ErrorKind::PermissionDenied, e.to_string()))?;
        let root = setup
            .roots
            .get(usize::from(parsed.screen))
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such screen"))?
            .root;
        let mut x = X11 {
            stream,
            reader: PacketReader::new(),
            root,
            net_active_window: 0,
            net_wm_name: 0,
            utf8_string: 0,
            seq: 0,
            pending: Pending::Nothing,
            class: None,
            last: None,
            follow_titles,
            watched: 0,
        };
        x.net_active_window = x.intern(b"_NET_ACTIVE_WINDOW")?;
        x.net_wm_name = x.intern(b"_NET_WM_NAME")?;
        x.utf8_string = x.intern(b"UTF8_STRING")?;
        x.select(root, EventMask::PROPERTY_CHANGE)?;
        x.stream.set_nonblocking(true)?;
        x.ask_active()?;
        Ok(x)
    }

    /// The socket, for epoll (readable: call [`X11::read`]).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.stream.as_fd()
    }

    /// Whether the active window's own title changes are followed (chosen at connect).
    pub fn follows_titles(&self) -> bool {
        self.follow_titles
    }

    /// Reads everything the socket holds, sends the requests it calls for and returns the
    /// last focus change (one that differs from the one reported before).
    pub fn read(&mut self) -> Readout {
        let mut chunk = [0u8; 4096];
        let mut focus = None;
        loop {
            let n = match self.stream.read(&mut chunk) {
                Ok(0) => return Readout::Closed,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Readout::Closed,
            };
            let mut bytes = &chunk[..n];
            while !bytes.is_empty() {
                let take = self.reader.remaining_capacity().min(bytes.len());
                self.reader.buffer()[..take].copy_from_slice(&bytes[..take]);
                bytes = &bytes[take..];
                if let Some(packet) = self.reader.advance(take) {
                    match self.on_packet(&packet) {
                        Ok(Some(f)) => focus = Some(f),
                        Ok(None) => {}
                        Err(_) => return Readout::Closed,
                    }
                }
            }
        }
        super::changed(&mut self.last, focus)
    }

    /// One packet from the server; the focus it completes, if any. Errors: writing a
    /// request failed.
    fn on_packet(&mut self, packet: &[u8]) -> io::Result<Option<FocusEvent>> {
        let seq = u16::from_ne_bytes([packet[2], packet[3]]);
        match (packet[0] & 0x7f, self.pending) {
            (PROPERTY_NOTIFY_EVENT, _) => {
                let window = u32::from_ne_bytes([packet[4], packet[5], packet[6], packet[7]]);
                let atom = u32::from_ne_bytes([packet[8], packet[9], packet[10], packet[11]]);
                // The active window's title changed: read the focus again (repeats say
                // nothing).
                let retitled = window == self.watched && atom == self.net_wm_name;
                if (window == self.root && atom == self.net_active_window) || retitled {
                    self.ask_active()?;
                }
                Ok(None)
            }
            (REPLY, Pending::Active { seq: want }) if seq == want => {
                // Any client may set the property; the root is no application's window.
                let window = GetPropertyReply::try_parse(packet)
                    .ok()
                    .and_then(|(r, _)| active_window(&r))
                    .filter(|&w| w != self.root);
                let Some(window) = window else {
                    self.pending = Pending::Nothing;
                    self.watch(0)?;
                    return Ok(Some(FocusEvent::Unknown));
                };
                let class = GetPropertyRequest {
                    delete: false,
                    window,
                    property: AtomEnum::WM_CLASS.into(),
                    type_: AtomEnum::STRING.into(),
                    long_offset: 0,
                    long_length: MAX_PROPERTY_BYTES / 4,
                };
                self.send(&class.serialize().0)?;
                let first = self.seq;
                let title = GetPropertyRequest {
                    property: self.net_wm_name,
                    type_: self.utf8_string,
                    ..class
                };
                self.send(&title.serialize().0)?;
                self.pending = Pending::Window { window, seq: first };
                Ok(None)
            }
            (REPLY, Pending::Window { seq: want, .. }) if seq == want => {
                let id = GetPropertyReply::try_parse(packet)
                    .ok()
                    .and_then(|(r, _)| wm_class(&r.value, r.bytes_after == 0).map(str::to_owned));
                self.class = Some(id.map_or(FocusEvent::Unknown, |id| FocusEvent::app(&id, None)));
                Ok(None)
            }
            (REPLY, Pending::Window { window, seq: want }) if seq == want.wrapping_add(1) => {
                let reply = GetPropertyReply::try_parse(packet).ok();
                let title = reply.as_ref().and_then(|(r, _)| utf8_title(&r.value));
                log::debug!("x11: active window {window:#x}, title {title:?}");
                self.pending = Pending::Nothing;
                self.watch(window)?;
                Ok(self.class.take().map(|class| match class {
                    FocusEvent::App { id, .. } => FocusEvent::app(&id, title),
                    unknown => unknown,
                }))
            }
            // The window went away between the two reads (BadWindow).
            (ERROR, Pending::Window { seq: want, .. }) if seq == want => {
                self.class = Some(FocusEvent::Unknown);
                Ok(None)
            }
            (ERROR, Pending::Window { seq: want, .. }) if seq == want.wrapping_add(1) => {
                self.pending = Pending::Nothing;
                Ok(Some(self.class.take().unwrap_or(FocusEvent::Unknown)))
            }
            (ERROR, _) => {
                log::debug!("x11: error {} for request {seq}", packet[1]);
                Ok(None)
            }
            // Replies to requests superseded by a newer focus change, and other events.
            _ => Ok(None),
        }
    }

    /// Selects `mask` as pawl's event mask on `window` (`ChangeWindowAttributes`; other
    /// clients' masks are their own).
    fn select(&mut self, window: u32, mask: EventMask) -> io::Result<()> {
        let aux = ChangeWindowAttributesAux::new().event_mask(mask);
        let req = ChangeWindowAttributesRequest {
            window,
            value_list: Cow::Owned(aux),
        };
        self.send(&req.serialize().0)
    }

    /// With titles followed, moves pawl's `PropertyChangeMask` from the window watched to
    /// `window` (0 or the root: none). The root's mask is never changed here: it carries
    /// the `_NET_ACTIVE_WINDOW` changes. A window already gone answers `BadWindow`, which
    /// is ignored.
    fn watch(&mut self, window: u32) -> io::Result<()> {
        let window = if window == self.root { 0 } else { window };
        if !self.follow_titles || window == self.watched {
            return Ok(());
        }
        if self.watched != 0 {
            self.select(self.watched, EventMask::NO_EVENT)?;
        }
        if window != 0 {
            self.select(window, EventMask::PROPERTY_CHANGE)?;
        }
        self.watched = window;
        Ok(())
    }

    /// Asks for the root window's `_NET_ACTIVE_WINDOW` (replies to older questions are
    /// ignored from now on).
    fn ask_active(&mut self) -> io::Result<()> {
        let req = GetPropertyRequest {
            delete: false,
            window: self.root,
            property: self.net_active_window,
            type_: AtomEnum::WINDOW.into(),
            long_offset: 0,
            long_length: 1,
        };
        self.send(&req.serialize().0)?;
        self.pending = Pending::Active { seq: self.seq };
        self.class = None;
        Ok(())
    }

    /// Writes one request (its pieces) and counts it. A request is at most a few dozen
    /// bytes and pawl has at most three in flight, so the socket's buffer never fills;
    /// a write that would block is an error.
    fn send(&mut self, pieces: &[Cow<'_, [u8]>]) -> io::Result<()> {
        let bytes: Vec<u8> = pieces.iter().flat_map(|p| p.iter().copied()).collect();
        self.stream.write_all(&bytes)?;
        self.seq = self.seq.wrapping_add(1);
        Ok(())
    }

    /// Interns `name` and waits for the atom (connecting only). Errors: the server's error
    /// or no answer within [`CONNECT_TIMEOUT`].
    fn intern(&mut self, name: &[u8]) -> io::Result<u32> {
        let req = InternAtomRequest {
            only_if_exists: false,
            name: Cow::Borrowed(name),
        };
        self.send(&req.serialize().0)?;
        let want = self.seq;
        loop {
            // Never more than the packet being read: nothing is read ahead of the reply.
            let n = self.stream.read(self.reader.buffer())?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let Some(packet) = self.reader.advance(n) else {
                continue;
            };
            let seq = u16::from_ne_bytes([packet[2], packet[3]]);
            match packet[0] {
                REPLY if seq == want => {
                    return InternAtomReply::try_parse(&packet)
                        .map(|(r, _)| r.atom)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()));
                }
                ERROR if seq == want => {
                    return Err(io::Error::other(format!(
                        "InternAtom {}: X error {}",
                        String::from_utf8_lossy(name),
                        packet[1]
                    )));
                }
                _ => {}
            }
        }
    }
}

/// Connects to the X server's Unix socket at `path`: Linux's abstract socket of that name
/// first (what Xorg and Xvfb listen on besides the file), then the file. Either must be
/// served by this user or root ([`super::check_listener`]): any user may bind an abstract
/// name the X server has not, so a foreign one is passed over for the file.
fn connect_unix(path: &str) -> io::Result<UnixStream> {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(path.as_bytes())?;
    UnixStream::connect_addr(&addr)
        .and_then(|s| super::check_listener(&s, &format!("@{path}")).map(|()| s))
        .or_else(|_| super::connect_own(std::path::Path::new(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(format: u8, type_: u32, value: &[u8], bytes_after: u32) -> GetPropertyReply {
        GetPropertyReply {
            format,
            sequence: 1,
            length: 0,
            type_,
            bytes_after,
            value_len: value.len() as u32,
            value: value.to_vec(),
        }
    }

    /// A `GetProperty` reply packet as the server sends it.
    fn property_packet(seq: u16, format: u8, type_: u32, value: &[u8]) -> Vec<u8> {
        let pad = (4 - value.len() % 4) % 4;
        let units = usize::from(format / 8).max(1);
        let mut p = vec![REPLY, format];
        p.extend(seq.to_ne_bytes());
        p.extend((((value.len() + pad) / 4) as u32).to_ne_bytes());
        p.extend(type_.to_ne_bytes());
        p.extend(0u32.to_ne_bytes());
        p.extend(((value.len() / units) as u32).to_ne_bytes());
        p.extend([0u8; 12]);
        p.extend(value);
        p.extend(vec![0u8; pad]);
        p
    }

    /// The `ChangeWindowAttributes` requests (window, event mask) in `requests`.
    fn masks_set(requests: &[u8]) -> Vec<(u32, u32)> {
        let mut got = Vec::new();
        let mut rest = requests;
        while rest.len() >= 4 {
            let len = 4 * usize::from(u16::from_ne_bytes([rest[2], rest[3]]));
            let (req, tail) = rest.split_at(len);
            if req[0] == 2 {
                let word = |i: usize| u32::from_ne_bytes(req[i..i + 4].try_into().unwrap());
                got.push((word(4), word(12)));
            }
            rest = tail;
        }
        got
    }

    #[test]
    fn the_root_named_as_the_active_window_keeps_its_property_mask() {
        // Any client may set the root's `_NET_ACTIVE_WINDOW` to the root itself. It reads as
        // no active window, and moving the title watch never selects NO_EVENT on the root:
        // that would stop every later `_NET_ACTIVE_WINDOW` change from reaching pawl.
        use std::io::{Read, Write};
        let (client, mut server) = UnixStream::pair().unwrap();
        client.set_nonblocking(true).unwrap();
        server.set_nonblocking(true).unwrap();
        let root = 0x100;
        let mut x = X11 {
            stream: client,
            reader: PacketReader::new(),
            root,
            net_active_window: 300,
            net_wm_name: 301,
            utf8_string: 302,
            seq: 0,
            pending: Pending::Nothing,
            class: None,
            last: None,
            follow_titles: true,
            watched: 0,
        };
        let window = u32::from(AtomEnum::WINDOW);
        let string = u32::from(AtomEnum::STRING);
        x.ask_active().unwrap(); // 1
        server
            .write_all(&property_packet(1, 32, window, &root.to_ne_bytes()))
            .unwrap();
        // The root is no application's window: no active window, and nothing to watch.
        assert_eq!(x.read(), Readout::Focus(Some(FocusEvent::Unknown)));
        // The focus moves to a real window.
        let mut notify = vec![PROPERTY_NOTIFY_EVENT, 0, 1, 0];
        notify.extend(root.to_ne_bytes());
        notify.extend(300u32.to_ne_bytes());
        notify.resize(32, 0);
        server.write_all(&notify).unwrap();
        assert_eq!(x.read(), Readout::Focus(None)); // asks 2
        server
            .write_all(&property_packet(2, 32, window, &0x200u32.to_ne_bytes()))
            .unwrap();
        assert_eq!(x.read(), Readout::Focus(None)); // asks 3 and 4
        server
            .write_all(&property_packet(3, 8, string, b"xterm\0XTerm\0"))
            .unwrap();
        server.write_all(&property_packet(4, 8, 302, b"~")).unwrap();
        assert_eq!(
            x.read(),
            Readout::Focus(Some(FocusEvent::app("XTerm", Some("~"))))
        );
        // Asked to watch the root, then none, the watch only leaves the window it was on.
        x.watch(root).unwrap();
        x.watch(0).unwrap();
        let mut requests = Vec::new();
        let _ = server.read_to_end(&mut requests);
        let on_root: Vec<u32> = masks_set(&requests)
            .into_iter()
            .filter(|&(w, _)| w == root)
            .map(|(_, mask)| mask)
            .collect();
        assert!(
            on_root
                .last()
                .is_none_or(|&m| m & u32::from(EventMask::PROPERTY_CHANGE) != 0),
            "the root's masks, in order: {on_root:x?}"
        );
    }

    #[test]
    fn the_class_is_the_second_of_the_two_strings() {
        assert_eq!(wm_class(b"xterm\0AppA\0", true), Some("AppA"));
        assert_eq!(wm_class(b"navigator\0firefox\0", true), Some("firefox"));
    }

    #[test]
    fn a_class_without_its_last_nul_counts_only_when_the_value_is_whole() {
        assert_eq!(wm_class(b"xterm\0AppA", true), Some("AppA"));
        assert_eq!(wm_class(b"xterm\0AppA", false), None);
    }

    #[test]
    fn a_missing_or_empty_class_is_no_id() {
        assert_eq!(wm_class(b"", true), None);
        assert_eq!(wm_class(b"xterm", true), None);
        assert_eq!(wm_class(b"xterm\0", true), None);
        assert_eq!(wm_class(b"xterm\0\0", true), None);
    }

    #[test]
    fn an_over_long_or_non_utf8_class_is_no_id() {
        let long = "C".repeat(pawl_engine::config::MAX_APP_ID_BYTES + 1);
        let value = format!("i\0{long}\0");
        assert_eq!(wm_class(value.as_bytes(), true), None);
        let just = "C".repeat(pawl_engine::config::MAX_APP_ID_BYTES);
        let value = format!("i\0{just}\0");
        assert_eq!(wm_class(value.as_bytes(), true), Some(just.as_str()));
        assert_eq!(wm_class(b"i\0App\xff\0", true), None);
    }

    #[test]
    fn the_active_window_is_a_32_bit_window_and_0_is_none() {
        let w = 0x0040_0007u32.to_ne_bytes();
        assert_eq!(
            active_window(&reply(32, AtomEnum::WINDOW.into(), &w, 0)),
            Some(0x0040_0007)
        );
        let none = 0u32.to_ne_bytes();
        assert_eq!(
            active_window(&reply(32, AtomEnum::WINDOW.into(), &none, 0)),
            None
        );
        // A root without the property: type None, format 0, no value.
        assert_eq!(active_window(&reply(0, 0, &[], 0)), None);
        assert_eq!(
            active_window(&reply(8, AtomEnum::STRING.into(), b"abcd", 0)),
            None
        );
    }

    #[test]
    fn a_title_is_utf8_and_a_cut_character_is_dropped() {
        assert_eq!(utf8_title("café".as_bytes()), Some("café"));
        let cut = &"café".as_bytes()[..4];
        assert_eq!(utf8_title(cut), Some("caf"));
        assert_eq!(utf8_title(b"a\xffb"), None);
        assert_eq!(utf8_title(b""), None);
    }
}
