//! sway's IPC (sway-ipc(7)): connect to `$SWAYSOCK`, `subscribe ["window","workspace"]`,
//! then read `window` events (`change = "focus"` carries the focused container) and
//! `workspace` events. A message is the magic `i3-ipc`, the payload length and the message
//! type (both `u32` in the host's byte order), then a JSON payload.
//!
//! sway sends `window focus` only when the newly focused container is a view (sway's
//! `sway/input/seat.c`, `seat_set_workspace_focus`: `workspace focus` first, then
//! `window focus` if `container->view`). Focusing an empty workspace therefore sends only
//! `workspace focus`, which pawl reads as [`FocusEvent::Unknown`], as the other backends
//! report no focused window; for a workspace with a view, the `window` event that follows
//! decides. Moving the focused window to another workspace (`move container to workspace
//! N`) leaves the focus where it was: sway sends the window's `move` (no longer visible),
//! and a `window focus` only when a view there takes the focus, so such a `move` of the
//! focused container is [`FocusEvent::Unknown`] unless a focus event follows
//! ([`window_focus_id`]).
//!
//! [`Decoder`] (framing), [`window_event`] and [`workspace_event`] (the payloads) are pure;
//! [`Sway`] owns the socket, non-blocking, for the daemon's epoll set.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use super::FocusEvent;
pub use super::Readout;

/// The magic every message starts with.
pub const MAGIC: &[u8; 6] = b"i3-ipc";
/// Magic, payload length and message type: 14 bytes.
pub const HEADER_BYTES: usize = 14;
/// The `SUBSCRIBE` message type (sway-ipc(7), "MESSAGES AND REPLIES": 2).
pub const SUBSCRIBE: u32 = 2;
/// The type of `window` events: the event bit `0x80000000` plus 3 (sway-ipc(7), "EVENTS").
pub const WINDOW_EVENT: u32 = 0x8000_0003;
/// The type of `workspace` events: the event bit `0x80000000` plus 0 (sway-ipc(7),
/// "EVENTS").
pub const WORKSPACE_EVENT: u32 = 0x8000_0000;
/// The largest payload pawl reads, bytes (1 MiB). A `window` event carries one container
/// and its children, a few KiB; a larger message is skipped unread.
pub const MAX_PAYLOAD_BYTES: usize = 1 << 20;

/// How long connecting may wait for sway's answer to the subscribe. The same as X11's.
pub const CONNECT_TIMEOUT: Duration = super::x11::CONNECT_TIMEOUT;

/// The longest subscribe reply pawl reads, bytes (4 KiB). sway's is `{"success": true}`,
/// or `{"success": false}` with an `error` string on a refusal (sway's `ipc-server.c`).
pub const MAX_REPLY_BYTES: usize = 4096;

/// The type of `GET_TREE` (sway-ipc(7), "MESSAGES AND REPLIES": 4): the reply is the
/// whole layout tree, each node with `focused`.
pub const GET_TREE: u32 = 4;

/// The `GET_TREE` request: a header with an empty payload.
pub fn get_tree_message() -> Vec<u8> {
    let mut m = Vec::with_capacity(HEADER_BYTES);
    m.extend_from_slice(MAGIC);
    m.extend_from_slice(&0u32.to_ne_bytes());
    m.extend_from_slice(&GET_TREE.to_ne_bytes());
    m
}

/// The `subscribe ["window","workspace"]` message.
pub fn subscribe_message() -> Vec<u8> {
    let payload = br#"["window","workspace"]"#;
    let mut m = Vec::with_capacity(HEADER_BYTES + payload.len());
    m.extend_from_slice(MAGIC);
    m.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
    m.extend_from_slice(&SUBSCRIBE.to_ne_bytes());
    m.extend_from_slice(payload);
    m
}

/// A framing error: the stream is not sway's IPC.
#[derive(Debug, PartialEq, Eq)]
pub struct BadMagic;

/// Splits the byte stream into messages. Bytes may arrive in any pieces.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
    /// Payload bytes still to drop of a message larger than [`MAX_PAYLOAD_BYTES`].
    skip: usize,
}

impl Decoder {
    /// Appends bytes read from the socket.
    pub fn push(&mut self, mut bytes: &[u8]) {
        let dropped = self.skip.min(bytes.len());
        self.skip -= dropped;
        bytes = &bytes[dropped..];
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole message (type, payload); `Ok(None)` until one is complete. A message
    /// over [`MAX_PAYLOAD_BYTES`] is dropped as it arrives, without being kept.
    pub fn next_message(&mut self) -> Result<Option<(u32, Vec<u8>)>, BadMagic> {
        loop {
            if self.skip > 0 || self.buf.len() < HEADER_BYTES {
                return Ok(None);
            }
            if &self.buf[..6] != MAGIC {
                return Err(BadMagic);
            }
            let word = |i: usize| {
                u32::from_ne_bytes([
                    self.buf[i],
                    self.buf[i + 1],
                    self.buf[i + 2],
                    self.buf[i + 3],
                ])
            };
            let (len, kind) = (word(6) as usize, word(10));
            if len > MAX_PAYLOAD_BYTES {
                let have = self.buf.len() - HEADER_BYTES;
                let dropped = have.min(len);
                self.buf.drain(..HEADER_BYTES + dropped);
                self.skip = len - dropped;
                log::warn!(
                    "sway IPC: a message of {len} bytes (type {kind:#x}) is over the {MAX_PAYLOAD_BYTES} byte limit: skipped"
                );
                continue;
            }
            if self.buf.len() < HEADER_BYTES + len {
                return Ok(None);
            }
            let payload = self.buf[HEADER_BYTES..HEADER_BYTES + len].to_vec();
            self.buf.drain(..HEADER_BYTES + len);
            return Ok(Some((kind, payload)));
        }
    }
}

/// What a `window` event says of its container's id (sway's `container.id`): the one
/// given the focus (`change = "focus"`), or one moved out of sight or focus
/// (`change = "move"` with `visible` false or `focused` false). `move container to
/// workspace N` (and `move scratchpad`) sends the window's `move` while it still has the
/// focus, then leaves the focus on the workspace it came from: sway 1.7 sends no
/// `workspace focus` and, when no window is left there, no `window focus` either
/// (observed in the VM with `swaymsg -t subscribe`: a workspace `init`, then the `move`
/// with `"focused": true, "visible": false`). A move within the workspace keeps the
/// window visible and focused. `None` for anything else, and for a payload `v` that is
/// not such an event.
pub fn window_focus_id(v: &serde_json::Value) -> Option<(WindowFocus, i64)> {
    let con = v.get("container")?;
    let id = con.get("id")?.as_i64()?;
    let flag = |key: &str| con.get(key).and_then(|f| f.as_bool());
    match v.get("change")?.as_str()? {
        "focus" => Some((WindowFocus::Gained, id)),
        "move" if flag("focused") == Some(false) || flag("visible") == Some(false) => {
            Some((WindowFocus::MovedAway, id))
        }
        _ => None,
    }
}

/// What [`window_focus_id`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowFocus {
    /// The container was given the focus.
    Gained,
    /// The container moved out of sight (another workspace, the scratchpad) or lost the
    /// focus.
    MovedAway,
}

/// The focus change a `window` event's payload `v` says, `None` for other changes (`move`,
/// …), a title change of a window without focus, or a payload that is not such an event.
/// `change = "focus"`, or `"title"` of the focused container: the container's `app_id`,
/// else (an Xwayland window) its `window_properties.class`, else [`FocusEvent::Unknown`],
/// with its `name` (the title); `change = "close"` of the focused container:
/// [`FocusEvent::Unknown`].
pub fn window_event(v: &serde_json::Value) -> Option<FocusEvent> {
    let con = v.get("container")?;
    let focused = con.get("focused").and_then(|f| f.as_bool()) == Some(true);
    match v.get("change")?.as_str()? {
        "focus" => {}
        "title" if focused => {}
        "close" if focused => return Some(FocusEvent::Unknown),
        _ => return None,
    }
    Some(container_focus(con))
}

/// What container `con` (a node of a `window` event or of the tree) names as focused: its
/// `app_id`, else (an Xwayland window) its `window_properties.class`, else
/// [`FocusEvent::Unknown`], with its `name` (the title).
fn container_focus(con: &serde_json::Value) -> FocusEvent {
    let id = con
        .get("app_id")
        .and_then(|a| a.as_str())
        .or_else(|| {
            con.get("window_properties")?
                .get("class")
                .and_then(|c| c.as_str())
        })
        .filter(|id| !id.is_empty() && id.len() <= pawl_engine::config::MAX_APP_ID_BYTES);
    let title = con.get("name").and_then(|n| n.as_str());
    id.map_or(FocusEvent::Unknown, |id| FocusEvent::app(id, title))
}

/// The focus a `GET_TREE` reply `tree` says: the node with `"focused": true` (searched
/// through `nodes` and `floating_nodes`, at most [`MAX_TREE_DEPTH`] deep) with its `id`
/// when it is a view (it has a `pid`), else [`FocusEvent::Unknown`] (a workspace or
/// split container has the focus, or none is found).
pub fn tree_focus(tree: &serde_json::Value) -> (FocusEvent, Option<i64>) {
    fn find(node: &serde_json::Value, depth: usize) -> Option<&serde_json::Value> {
        if node.get("focused").and_then(|f| f.as_bool()) == Some(true) {
            return Some(node);
        }
        if depth == MAX_TREE_DEPTH {
            return None;
        }
        ["nodes", "floating_nodes"]
            .iter()
            .filter_map(|k| node.get(*k)?.as_array())
            .flatten()
            .find_map(|n| find(n, depth + 1))
    }
    match find(tree, 0) {
        Some(con) if con.get("pid").is_some() => {
            (container_focus(con), con.get("id").and_then(|i| i.as_i64()))
        }
        _ => (FocusEvent::Unknown, None),
    }
}

/// How deep [`tree_focus`] looks: root, output, workspace, then nested split containers
/// (sway nests one per split; 64 is far beyond any layout a user makes).
pub const MAX_TREE_DEPTH: usize = 64;

/// The focus change a `workspace` event's payload says: [`FocusEvent::Unknown`] for
/// `change = "focus"` when the newly focused workspace (`current`) holds no view (its
/// `nodes` and `floating_nodes` empty or missing) or holds the focus itself (`focused`:
/// no view in it has it). `None` otherwise: for a workspace with a focused view, sway's
/// `window` event that follows says the focus. `None` too for other changes (`init`,
/// `empty`, `move`, …) and a payload that is not such an event.
pub fn workspace_event(payload: &[u8]) -> Option<FocusEvent> {
    let v: serde_json::Value = serde_json::from_slice(payload).ok()?;
    if v.get("change")?.as_str()? != "focus" {
        return None;
    }
    let ws = v.get("current")?.as_object()?;
    let none_in = |key: &str| {
        ws.get(key)
            .and_then(|n| n.as_array())
            .is_none_or(|n| n.is_empty())
    };
    let focused = ws.get("focused").and_then(|f| f.as_bool()) == Some(true);
    (focused || (none_in("nodes") && none_in("floating_nodes"))).then_some(FocusEvent::Unknown)
}

/// Reads one whole message from a blocking `stream` (at connect): its type and payload.
/// Errors: reading failed, the stream is not sway's IPC, or the payload is over `max`
/// bytes.
fn read_message(stream: &mut impl Read, max: usize) -> io::Result<(u32, Vec<u8>)> {
    let mut header = [0u8; HEADER_BYTES];
    stream.read_exact(&mut header)?;
    if &header[..6] != MAGIC {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the socket does not speak sway's IPC",
        ));
    }
    let word =
        |i: usize| u32::from_ne_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
    let (len, kind) = (word(6) as usize, word(10));
    if len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "sway sent a message of {len} bytes (type {kind:#x}), over the {max} byte limit"
            ),
        ));
    }
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload)?;
    Ok((kind, payload))
}

/// Reads sway's reply to the subscribe, the first message on a new connection, and
/// nothing past it (the events after it stay in the socket for [`Sway::read`]). Errors:
/// reading failed, the stream is not sway's IPC, the reply is not the subscribe's or is
/// over [`MAX_REPLY_BYTES`], or it is not `"success": true`.
fn subscribe_reply(stream: &mut impl Read) -> io::Result<()> {
    let (kind, payload) = read_message(stream, MAX_REPLY_BYTES)?;
    if kind != SUBSCRIBE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("sway answered the subscribe with a message of type {kind:#x}"),
        ));
    }
    let reply = serde_json::from_slice::<serde_json::Value>(&payload).ok();
    let success = reply.as_ref().and_then(|v| v.get("success")?.as_bool());
    if success == Some(true) {
        return Ok(());
    }
    let error = reply
        .as_ref()
        .and_then(|v| v.get("error")?.as_str())
        .unwrap_or("no reason given");
    Err(io::Error::other(format!(
        "sway refused subscribe [\"window\",\"workspace\"]: {}",
        error.chars().take(200).collect::<String>()
    )))
}

/// Reads messages until sway's reply to `GET_TREE` and returns it parsed. Events before it
/// (sent after the subscribe) are dropped: the tree is newer. Errors: reading failed, the
/// stream is not sway's IPC, a message is over [`MAX_PAYLOAD_BYTES`], a reply of another
/// type, or a tree that is not JSON.
fn tree_reply(stream: &mut impl Read) -> io::Result<serde_json::Value> {
    let bad = |why: String| io::Error::new(io::ErrorKind::InvalidData, why);
    loop {
        let (kind, payload) = read_message(stream, MAX_PAYLOAD_BYTES)?;
        match kind {
            GET_TREE => {
                return serde_json::from_slice(&payload)
                    .map_err(|e| bad(format!("sway's tree is not JSON: {e}")));
            }
            k if k & 0x8000_0000 != 0 => {}
            k => return Err(bad(format!("sway answered GET_TREE with type {k:#x}"))),
        }
    }
}

/// A subscribed connection to sway.
#[derive(Debug)]
pub struct Sway {
    stream: UnixStream,
    decoder: Decoder,
    /// The container that last got the focus (`container.id`), while it has it.
    focused: Option<i64>,
    /// The focus the tree said at connect ([`Sway::initial`]).
    initial: FocusEvent,
}

impl Sway {
    /// Connects to the socket at `path` (`$SWAYSOCK`), subscribes to `window` and
    /// `workspace` events and waits up to [`CONNECT_TIMEOUT`] for sway's reply, then reads
    /// what is focused now from `GET_TREE` ([`Sway::initial`]); the stream is non-blocking
    /// afterwards. Errors: connecting, writing or reading failed, no reply in
    /// time (`TimedOut`), or sway refused the subscribe (the reply's `error` in the message).
    pub fn connect(path: &Path) -> io::Result<Sway> {
        Sway::connect_within(path, CONNECT_TIMEOUT)
    }

    /// [`Sway::connect`], waiting at most `timeout` for the reply.
    fn connect_within(path: &Path, timeout: Duration) -> io::Result<Sway> {
        let mut stream = super::connect_own(path)?;
        stream.set_write_timeout(Some(timeout))?;
        stream.set_read_timeout(Some(timeout))?;
        stream.write_all(&subscribe_message())?;
        // A read that timed out says what sway did not answer.
        let timed_out = |what: &'static str| {
            move |e: io::Error| match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "sway did not answer {what} within {} ms",
                        timeout.as_millis()
                    ),
                ),
                _ => e,
            }
        };
        subscribe_reply(&mut stream).map_err(timed_out("the subscribe"))?;
        // Subscribed first, so no change after the tree is missed.
        stream.write_all(&get_tree_message())?;
        let tree = tree_reply(&mut stream).map_err(timed_out("GET_TREE"))?;
        let (initial, focused) = tree_focus(&tree);
        stream.set_nonblocking(true)?;
        Ok(Sway {
            stream,
            decoder: Decoder::default(),
            focused,
            initial,
        })
    }

    /// What was focused when pawl connected (from sway's tree): the first report, before
    /// any event.
    pub fn initial(&self) -> FocusEvent {
        self.initial.clone()
    }

    /// The socket, for epoll (readable: call [`Sway::read`]).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.stream.as_fd()
    }

    /// Reads everything the socket holds and returns the last focus change in it (the
    /// earlier ones are already out of date).
    pub fn read(&mut self) -> Readout {
        let mut last = None;
        let decoder = &mut self.decoder;
        let focused = &mut self.focused;
        let open = super::drain(&mut self.stream, |bytes| {
            decoder.push(bytes);
            loop {
                match decoder.next_message() {
                    Ok(Some((WINDOW_EVENT, payload))) => {
                        // Parsed once for both readings; not JSON is `Null`, no event.
                        let v = serde_json::from_slice(&payload).unwrap_or_default();
                        match window_focus_id(&v) {
                            Some((WindowFocus::Gained, id)) => *focused = Some(id),
                            Some((WindowFocus::MovedAway, id)) if *focused == Some(id) => {
                                // The focused window went to another workspace; the
                                // focus stayed where it was, on no window.
                                *focused = None;
                                last = Some(FocusEvent::Unknown);
                            }
                            _ => {}
                        }
                        if let Some(f) = window_event(&v) {
                            last = Some(f);
                        }
                    }
                    Ok(Some((WORKSPACE_EVENT, payload))) => {
                        if let Some(f) = workspace_event(&payload) {
                            last = Some(f);
                        }
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => return true,
                    Err(BadMagic) => return false,
                }
            }
        });
        if !open {
            return Readout::Closed;
        }
        Readout::Focus(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`super::window_event`] of `payload` read as [`Sway::read`] reads it (not JSON is
    /// `Null`).
    fn window_event(payload: &[u8]) -> Option<FocusEvent> {
        super::window_event(&serde_json::from_slice(payload).unwrap_or_default())
    }
    use std::io::Read;

    /// The shape of sway-ipc(7)'s `window` event example (an Xwayland URxvt), as focus.
    const XWAYLAND_FOCUS: &str = r#"{
        "change": "focus",
        "container": {
            "id": 12, "name": "urxvt", "type": "con", "focused": true,
            "rect": {"x": 0, "y": 0, "width": 1920, "height": 1080},
            "window": 8388611, "urgent": false, "floating_nodes": [], "sticky": false,
            "fullscreen_mode": 0, "pid": 19787, "app_id": null,
            "window_properties": {"class": "URxvt", "instance": "urxvt", "title": "urxvt",
                                  "transient_for": null},
            "nodes": []
        }
    }"#;
    const WAYLAND_FOCUS: &str = r#"{"change":"focus","container":{"id":7,"type":"con",
        "focused":true,"name":"~","app_id":"foot","pid":4242,"shell":"xdg_shell",
        "nodes":[],"floating_nodes":[]}}"#;

    fn message(kind: u32, payload: &[u8]) -> Vec<u8> {
        let mut m = MAGIC.to_vec();
        m.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
        m.extend_from_slice(&kind.to_ne_bytes());
        m.extend_from_slice(payload);
        m
    }

    /// sway's end writes one message of `kind` with `payload`.
    fn send(server: &mut UnixStream, kind: u32, payload: &str) {
        server
            .write_all(&message(kind, payload.as_bytes()))
            .unwrap();
    }

    /// sway's `GET_TREE` with one empty workspace focused (the shape of sway-ipc(7)'s
    /// example, trimmed).
    const EMPTY_TREE: &str = r#"{"id":1,"type":"root","name":"root","focused":false,
        "nodes":[{"id":3,"type":"output","name":"HEADLESS-1","focused":false,
          "nodes":[{"id":4,"type":"workspace","name":"1","focused":true,
            "nodes":[],"floating_nodes":[]}],"floating_nodes":[]}],"floating_nodes":[]}"#;

    /// A tree with foot tiled and an Xwayland URxvt floating, the URxvt focused.
    const TREE_WITH_FOCUSED_XWAYLAND: &str = r#"{"id":1,"type":"root","focused":false,
        "nodes":[{"id":3,"type":"output","focused":false,
          "nodes":[{"id":4,"type":"workspace","name":"1","focused":false,
            "nodes":[{"id":7,"type":"con","focused":false,"app_id":"foot","name":"~",
                      "pid":4242,"nodes":[],"floating_nodes":[]}],
            "floating_nodes":[{"id":12,"type":"floating_con","focused":true,"app_id":null,
                      "name":"urxvt","pid":4243,"window_properties":{"class":"URxvt"},
                      "nodes":[],"floating_nodes":[]}]}],
          "floating_nodes":[]}],"floating_nodes":[]}"#;

    #[test]
    fn the_focus_at_connect_is_read_from_sways_tree() {
        assert_eq!(
            tree_focus(&serde_json::from_str(TREE_WITH_FOCUSED_XWAYLAND).unwrap()),
            (FocusEvent::app("URxvt", Some("urxvt")), Some(12))
        );
        // A workspace (no view) focused, or nothing focused: no app.
        assert_eq!(
            tree_focus(&serde_json::from_str(EMPTY_TREE).unwrap()),
            (FocusEvent::Unknown, None)
        );
        assert_eq!(
            tree_focus(&serde_json::json!({"nodes": []})).0,
            FocusEvent::Unknown
        );
        // Nesting past the limit is not searched.
        let mut deep = serde_json::json!({"focused": true, "pid": 1, "app_id": "deep"});
        for _ in 0..=MAX_TREE_DEPTH {
            deep = serde_json::json!({"focused": false, "nodes": [deep]});
        }
        assert_eq!(tree_focus(&deep).0, FocusEvent::Unknown);
        // Through a connection: events sent before the tree are dropped (it is newer), and
        // the container it names focused is the one a later move is checked against.
        let (sway, mut server) =
            fake_sway_with_tree(Some(br#"{"success":true}"#), TREE_WITH_FOCUSED_XWAYLAND);
        let mut sway = sway.unwrap();
        assert_eq!(sway.initial(), FocusEvent::app("URxvt", Some("urxvt")));
        assert_eq!(sway.read(), Readout::Focus(None));
        let moved = r#"{"change":"move","container":{"id":12,"focused":true,"visible":false}}"#;
        send(&mut server, WINDOW_EVENT, moved);
        assert_eq!(sway.read(), Readout::Focus(Some(FocusEvent::Unknown)));
    }

    #[test]
    fn a_tree_reply_skips_the_events_before_it_and_refuses_what_is_not_sways() {
        let mut stream = message(WINDOW_EVENT, WAYLAND_FOCUS.as_bytes());
        stream.extend(message(GET_TREE, EMPTY_TREE.as_bytes()));
        let tree = tree_reply(&mut &stream[..]).unwrap();
        assert_eq!(tree["type"], "root");
        assert!(tree_reply(&mut &message(SUBSCRIBE, b"{}")[..]).is_err());
        assert!(tree_reply(&mut &message(GET_TREE, b"not json")[..]).is_err());
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&((MAX_PAYLOAD_BYTES + 1) as u32).to_ne_bytes());
        huge.extend_from_slice(&GET_TREE.to_ne_bytes());
        assert!(tree_reply(&mut &huge[..]).is_err(), "over the limit");
    }

    /// A fake sway at a fresh socket that reads the subscribe and answers `reply` (none:
    /// holds the socket without answering); pawl's connection to it, or the connect error,
    /// and sway's end.
    fn fake_sway(reply: Option<&[u8]>) -> (io::Result<Sway>, UnixStream) {
        fake_sway_with_tree(reply, EMPTY_TREE)
    }

    /// [`fake_sway`] whose `GET_TREE` reply is `tree`.
    fn fake_sway_with_tree(reply: Option<&[u8]>, tree: &str) -> (io::Result<Sway>, UnixStream) {
        let tree = tree.to_owned();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sway.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let reply = reply.map(|r| message(SUBSCRIBE, r));
        let server = std::thread::spawn(move || {
            let (mut server, _) = listener.accept().unwrap();
            let mut sub = vec![0u8; subscribe_message().len()];
            server.read_exact(&mut sub).unwrap();
            assert_eq!(sub, subscribe_message());
            if let Some(reply) = reply {
                server.write_all(&reply).unwrap();
                // A pawl that took the subscribe asks for the tree; one that refused it
                // has closed its end.
                let mut ask = [0u8; HEADER_BYTES];
                if server.read_exact(&mut ask).is_ok() {
                    assert_eq!(ask.to_vec(), get_tree_message());
                    server
                        .write_all(&message(GET_TREE, tree.as_bytes()))
                        .unwrap();
                }
            }
            server
        });
        let sway = Sway::connect_within(&path, Duration::from_millis(100));
        (sway, server.join().unwrap())
    }

    #[test]
    fn a_refused_subscribe_fails_the_connect_with_sways_reason() {
        let (got, _server) = fake_sway(Some(br#"{"success": false, "error": "no such event"}"#));
        let e = got.unwrap_err();
        assert!(
            e.to_string().contains("refused") && e.to_string().contains("no such event"),
            "{e}"
        );
        let (got, _server) = fake_sway(Some(b"[]"));
        assert!(got.unwrap_err().to_string().contains("no reason given"));
    }

    #[test]
    fn a_sway_that_does_not_answer_the_subscribe_is_given_up_on() {
        let (got, _server) = fake_sway(None);
        let e = got.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(e.to_string().contains("within 100 ms"), "{e}");
    }

    #[test]
    fn a_reply_that_is_not_the_subscribes_fails_the_connect() {
        let mut wrong = message(WINDOW_EVENT, WAYLAND_FOCUS.as_bytes());
        assert!(subscribe_reply(&mut &wrong[..]).is_err());
        wrong = message(SUBSCRIBE, &vec![b' '; MAX_REPLY_BYTES + 1]);
        assert!(subscribe_reply(&mut &wrong[..]).is_err(), "over the limit");
        assert!(subscribe_reply(&mut &b"HTTP/1.1 200 OK\r\n\r\n"[..]).is_err());
        let ok = message(SUBSCRIBE, br#"{"success":true}"#);
        assert!(subscribe_reply(&mut &ok[..]).is_ok());
    }

    #[test]
    fn a_focus_event_names_the_wayland_app_id_or_the_x11_class_with_the_title() {
        assert_eq!(
            window_event(WAYLAND_FOCUS.as_bytes()),
            Some(FocusEvent::app("foot", Some("~")))
        );
        assert_eq!(
            window_event(XWAYLAND_FOCUS.as_bytes()),
            Some(FocusEvent::app("URxvt", Some("urxvt")))
        );
    }

    #[test]
    fn a_title_change_counts_only_for_the_focused_window() {
        let title = WAYLAND_FOCUS
            .replace("\"focus\"", "\"title\"")
            .replace("\"name\":\"~\"", "\"name\":\"vim notes.txt\"");
        assert_eq!(
            window_event(title.as_bytes()),
            Some(FocusEvent::app("foot", Some("vim notes.txt")))
        );
        let unfocused = title.replace("\"focused\":true", "\"focused\":false");
        assert_eq!(window_event(unfocused.as_bytes()), None);
    }

    #[test]
    fn other_changes_say_nothing_and_closing_the_focused_window_is_unknown() {
        let moved = WAYLAND_FOCUS.replace("\"focus\"", "\"move\"");
        assert_eq!(window_event(moved.as_bytes()), None);
        let close = WAYLAND_FOCUS.replace("\"focus\"", "\"close\"");
        assert_eq!(window_event(close.as_bytes()), Some(FocusEvent::Unknown));
        let unfocused = close.replace("\"focused\":true", "\"focused\":false");
        assert_eq!(window_event(unfocused.as_bytes()), None);
        let no_id = WAYLAND_FOCUS.replace("\"app_id\":\"foot\"", "\"app_id\":null");
        assert_eq!(window_event(no_id.as_bytes()), Some(FocusEvent::Unknown));
        assert_eq!(window_event(b"not json"), None);
        assert_eq!(window_event(b"[1,2]"), None);
    }

    #[test]
    fn the_subscribe_message_is_framed_as_sway_ipc_7_says() {
        let m = subscribe_message();
        assert_eq!(&m[..6], b"i3-ipc");
        assert_eq!(u32::from_ne_bytes(m[6..10].try_into().unwrap()), 22);
        assert_eq!(u32::from_ne_bytes(m[10..14].try_into().unwrap()), 2);
        assert_eq!(&m[14..], br#"["window","workspace"]"#);
    }

    /// sway 1.8's `workspace focus` event for `workspace 3`, an empty workspace (the shape
    /// of sway-ipc(7)'s `workspace` example; `old` trimmed to what pawl might read).
    const EMPTY_WORKSPACE_FOCUS: &str = r#"{
        "change": "focus",
        "old": {
            "id": 4, "type": "workspace", "name": "1", "num": 1, "output": "eDP-1",
            "focused": false, "urgent": false, "layout": "splith", "focus": [7],
            "nodes": [{"id": 7, "type": "con", "app_id": "foot", "name": "~",
                       "focused": false, "nodes": [], "floating_nodes": []}],
            "floating_nodes": []
        },
        "current": {
            "id": 12, "type": "workspace", "name": "3", "num": 3, "output": "eDP-1",
            "rect": {"x": 0, "y": 23, "width": 1920, "height": 1057},
            "focused": true, "urgent": false, "layout": "splith", "orientation": "horizontal",
            "border": "none", "current_border_width": 0, "percent": null,
            "window": null, "representation": null, "marks": [], "fullscreen_mode": 1,
            "sticky": false, "focus": [], "nodes": [], "floating_nodes": []
        }
    }"#;

    #[test]
    fn focusing_an_empty_workspace_is_unknown() {
        assert_eq!(
            workspace_event(EMPTY_WORKSPACE_FOCUS.as_bytes()),
            Some(FocusEvent::Unknown)
        );
        // Only `current` counts: swapped, the new workspace holds foot, whose `window
        // focus` follows; the workspace event says nothing.
        let v: serde_json::Value = serde_json::from_str(EMPTY_WORKSPACE_FOCUS).unwrap();
        let mut with_view = v.clone();
        with_view["current"] = v["old"].clone();
        let with_view = with_view.to_string();
        assert_eq!(workspace_event(with_view.as_bytes()), None);
        // A workspace holding only a floating view is not empty either.
        let mut floating = v.clone();
        floating["current"]["floating_nodes"] = v["old"]["nodes"].clone();
        floating["current"]["focused"] = false.into();
        assert_eq!(workspace_event(floating.to_string().as_bytes()), None);
        // The workspace itself focused (`focus parent` up to it): no view has the focus.
        let mut parent = v.clone();
        parent["current"] = v["old"].clone();
        parent["current"]["focused"] = true.into();
        assert_eq!(
            workspace_event(parent.to_string().as_bytes()),
            Some(FocusEvent::Unknown)
        );
    }

    #[test]
    fn other_workspace_changes_say_nothing() {
        for change in ["init", "empty", "move", "rename", "urgent", "reload"] {
            let other = EMPTY_WORKSPACE_FOCUS.replace("\"focus\",\n", &format!("\"{change}\",\n"));
            assert_ne!(other, EMPTY_WORKSPACE_FOCUS, "{change}");
            assert_eq!(workspace_event(other.as_bytes()), None, "{change}");
        }
        assert_eq!(
            workspace_event(br#"{"change":"focus","current":null}"#),
            None
        );
        assert_eq!(workspace_event(br#"{"change":"focus"}"#), None);
        assert_eq!(workspace_event(b"not json"), None);
    }

    #[test]
    fn the_focused_window_moved_to_another_workspace_leaves_no_app_focused() {
        // `move container to workspace 2` on the only window: sway sends `window move`,
        // the container still focused but no longer visible, and no focus event, as the
        // focus stays on the now empty workspace (what sway 1.7 sent in the VM).
        let moved = |id: i64, visible: bool| {
            format!(
                r#"{{"change":"move","container":{{"id":{id},"type":"con","focused":true,"visible":{visible},"app_id":"foot","name":"~","nodes":[],"floating_nodes":[]}}}}"#
            )
        };
        let (sway, mut server) = fake_sway(Some(br#"{"success":true}"#));
        let mut sway = sway.unwrap();
        send(&mut server, WINDOW_EVENT, WAYLAND_FOCUS);
        assert_eq!(
            sway.read(),
            Readout::Focus(Some(FocusEvent::app("foot", Some("~"))))
        );
        // Another window moved away, or the focused one moved within its workspace: nothing
        // changes.
        send(&mut server, WINDOW_EVENT, &moved(8, false));
        send(&mut server, WINDOW_EVENT, &moved(7, true));
        assert_eq!(sway.read(), Readout::Focus(None));
        send(&mut server, WINDOW_EVENT, &moved(7, false));
        assert_eq!(sway.read(), Readout::Focus(Some(FocusEvent::Unknown)));
        // Moved with the focus following: `window focus` comes after the move and decides.
        send(&mut server, WINDOW_EVENT, WAYLAND_FOCUS);
        assert!(matches!(
            sway.read(),
            Readout::Focus(Some(FocusEvent::App { .. }))
        ));
        send(&mut server, WINDOW_EVENT, &moved(7, false));
        send(&mut server, WINDOW_EVENT, WAYLAND_FOCUS);
        assert_eq!(
            sway.read(),
            Readout::Focus(Some(FocusEvent::app("foot", Some("~"))))
        );
    }

    #[test]
    fn an_empty_workspace_then_a_window_ends_on_the_window() {
        // Switching to a workspace with a view: `workspace focus`, then `window focus`, in
        // one read; the last says the focus.
        let (sway, mut server) = fake_sway(Some(br#"{"success":true}"#));
        let mut sway = sway.unwrap();
        send(&mut server, WORKSPACE_EVENT, EMPTY_WORKSPACE_FOCUS);
        assert_eq!(sway.read(), Readout::Focus(Some(FocusEvent::Unknown)));
        send(&mut server, WORKSPACE_EVENT, EMPTY_WORKSPACE_FOCUS);
        send(&mut server, WINDOW_EVENT, WAYLAND_FOCUS);
        assert_eq!(
            sway.read(),
            Readout::Focus(Some(FocusEvent::app("foot", Some("~"))))
        );
    }

    #[test]
    fn messages_split_anywhere_are_put_back_together() {
        let mut stream = message(SUBSCRIBE, br#"{"success":true}"#);
        stream.extend(message(WINDOW_EVENT, WAYLAND_FOCUS.as_bytes()));
        let mut d = Decoder::default();
        let mut got = Vec::new();
        for byte in &stream {
            d.push(std::slice::from_ref(byte));
            while let Some(m) = d.next_message().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], (SUBSCRIBE, br#"{"success":true}"#.to_vec()));
        assert_eq!(got[1].0, WINDOW_EVENT);
    }

    #[test]
    fn a_message_over_the_limit_is_skipped_and_the_next_one_read() {
        let mut d = Decoder::default();
        let big = vec![b' '; MAX_PAYLOAD_BYTES + 1];
        let stream = message(WINDOW_EVENT, &big);
        for piece in stream.chunks(65_536) {
            d.push(piece);
            assert_eq!(d.next_message(), Ok(None));
        }
        assert!(d.buf.len() < HEADER_BYTES, "the big payload is not kept");
        d.push(&message(WINDOW_EVENT, WAYLAND_FOCUS.as_bytes()));
        assert_eq!(d.next_message().unwrap().unwrap().0, WINDOW_EVENT);
    }

    #[test]
    fn a_stream_that_is_not_sway_ipc_is_refused() {
        let mut d = Decoder::default();
        d.push(b"HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(d.next_message(), Err(BadMagic));
    }

    #[test]
    fn a_connection_subscribes_reads_the_last_focus_and_sees_the_close() {
        let (sway, mut server) = fake_sway(Some(br#"{ "success": true }"#));
        let mut sway = sway.unwrap();
        assert_eq!(sway.read(), Readout::Focus(None), "nothing sent yet");
        send(&mut server, WINDOW_EVENT, XWAYLAND_FOCUS);
        send(&mut server, WINDOW_EVENT, WAYLAND_FOCUS);
        assert_eq!(
            sway.read(),
            Readout::Focus(Some(FocusEvent::app("foot", Some("~"))))
        );
        drop(server);
        assert_eq!(sway.read(), Readout::Closed);
    }
}
