//! `PPB_WebSocket;1.0`: WebSocket clients under the network rule (`pepper::net`): only
//! `ws://` URLs whose host is loopback (`localhost`, 127.0.0.0/8, `[::1]`), only with
//! `--net loopback`. `--url-map FROM=TO` applies to `ws://` URLs too (the first FROM the
//! URL starts with is replaced by TO, which must then pass the rule), so that an app with
//! a hard-coded server URL can be pointed at a server on another port.
//!
//! The rules are Chrome's `WebSocketResource` (plugin side) and `PepperWebSocketHost`
//! (renderer side). The connection is `tungstenite`'s: Connect's operation thread makes
//! the TCP connection and the handshake, then a connection thread per socket sends what
//! SendMessage and Close queue and keeps what the server sends until ReceiveMessage
//! takes it (a string var for a text message, an ArrayBuffer for a binary one).

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tungstenite::client::IntoClientRequest;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::CloseFrame;
use tungstenite::{Error as WsError, Message};
use wasmtime::{Caller, Linker};

use super::super::mem;
use super::super::net::{self as pnet, ready, Verdict, WebSocket, WsCommand, WsMessage, WsShared};
use super::super::resources::Resource;
use super::super::var::PpVar;
use super::super::{answer_now, lock, pp_error, start_async, state, Completion, PepperState};
use super::net::{allow, string_var};
use super::{link_create, link_is, link_query};
use super::{link_entered, Entered, Kind};
use crate::host::Ctx;

const WS: &str = "PPB_WebSocket;1.0";
const FAMILY: &str = "PPB_WebSocket";

/// `PP_WebSocketStatusCode`s the rules name.
const NORMAL_CLOSURE: u16 = 1000;
const NOT_SPECIFIED: u16 = 1005;
const ABNORMAL_CLOSURE: u16 = 1006;
const USER_REGISTERED_MIN: u16 = 3000;
const USER_PRIVATE_MAX: u16 = 4999;
const MAX_REASON_BYTES: usize = 123;
/// Protocols a Connect may name (Chrome had no limit but memory).
const MAX_PROTOCOLS: u32 = 1024;
/// How long the TCP connection and the handshake may take, and how long the closing
/// handshake may take before the connection is dropped.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

const WEB_SOCKET: Kind<Arc<WsShared>> = Kind {
    name: "WebSocket",
    find: ws_of,
};

fn ws_of(s: &PepperState, id: i32) -> Option<Arc<WsShared>> {
    match lock(&s.resources).get(id) {
        Some(Resource::WebSocket(w)) => Some(w.0.clone()),
        _ => None,
    }
}

/// Chrome's estimate of a frame's size on the wire (`GetFrameSize`).
fn frame_size(payload: u64) -> u64 {
    let overhead = 2
        + 4
        + if payload > 0x10000 {
            8
        } else if payload > 125 {
            2
        } else {
            0
        };
    payload.saturating_add(overhead)
}

/// Whether `p` is a valid subprotocol name (RFC 6455: a token of U+0021..U+007E).
fn valid_protocol(p: &str) -> bool {
    !p.is_empty()
        && p.bytes()
            .all(|c| (b'!'..=b'~').contains(&c) && !b"\"(),/:;<=>?@[\\]{}".contains(&c))
}

/// The Fetch standard's bad ports (https://fetch.spec.whatwg.org/#port-blocking), which
/// Chrome's PepperWebSocketHost refused with PP_ERROR_BADARGUMENT. The browser host has
/// the same list (web/src/host/io/websocket.js `BAD_PORTS`).
const BAD_PORTS: &[u16] = &[
    1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102,
    103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465,
    512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993,
    995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668,
    6669, 6679, 6697, 10080,
];

/// Where a Connect goes: the URL the app sees (canonical) and the one connected to (after
/// `--url-map`), with the addresses to try.
struct Target {
    canonical: String,
    effective: url::Url,
    addrs: Vec<SocketAddr>,
}

/// Checks `given` as Chrome did (a ws or wss URL without fragment), maps it and applies
/// the network rule.
fn target(s: &PepperState, given: &str) -> Result<Target, i32> {
    let app_url = url::Url::parse(given).map_err(|_| pp_error::BADARGUMENT)?;
    let ws_scheme = |u: &url::Url| matches!(u.scheme(), "ws" | "wss");
    if !ws_scheme(&app_url) || app_url.fragment().is_some() {
        return Err(pp_error::BADARGUMENT);
    }
    let canonical = app_url.as_str().to_string();
    let mapped = s.config.url_map.iter().find_map(|(from, to)| {
        [given, canonical.as_str()]
            .into_iter()
            .find_map(|u| u.strip_prefix(from.as_str()))
            .map(|rest| format!("{to}{rest}"))
    });
    let effective = match mapped {
        Some(m) => {
            match url::Url::parse(&m) {
                Ok(u) if ws_scheme(&u) && u.fragment().is_none() => u,
                _ => {
                    s.net.note_once(
                    s.sink(),
                    "PPB_WebSocket url-map",
                    &format!("PPB_WebSocket: --url-map made {given} into {m}, which is not a ws:// URL"),
                );
                    return Err(pp_error::BADARGUMENT);
                }
            }
        }
        None => app_url,
    };
    let port = effective.port_or_known_default().unwrap_or(80);
    // Chrome refused the app's URL on a port browsers block; the browser host refuses the
    // mapped one too (browsers never connect there), and so does this host, so that an app
    // behaves the same on both.
    let app_port = url::Url::parse(&canonical)
        .ok()
        .and_then(|u| u.port_or_known_default());
    if let Some(bad) = [app_port, Some(port)]
        .into_iter()
        .flatten()
        .find(|p| BAD_PORTS.contains(p))
    {
        s.net.note_once(
            s.sink(),
            &format!("PPB_WebSocket port {bad}"),
            &format!("PPB_WebSocket: refused {effective} (PP_ERROR_BADARGUMENT): port {bad} is one browsers block (Fetch's bad ports), as Chrome refused it"),
        );
        return Err(pp_error::BADARGUMENT);
    }
    let ips: Vec<IpAddr> = match effective.host() {
        Some(url::Host::Ipv4(ip)) => vec![ip.into()],
        Some(url::Host::Ipv6(ip)) => vec![ip.into()],
        Some(url::Host::Domain(name)) => pnet::resolve_loopback(name, 0).unwrap_or_default(),
        None => return Err(pp_error::BADARGUMENT),
    };
    let loopback = !ips.is_empty() && ips.iter().all(|ip| pnet::is_loopback(*ip));
    if let Verdict::Refused(e) = allow(s, FAMILY, &format!("connection to {effective}"), loopback) {
        return Err(e);
    }
    if effective.scheme() == "wss" {
        s.net.note_once(
            s.sink(),
            "PPB_WebSocket wss",
            &format!("PPB_WebSocket: {effective} failed: the command-line host has no TLS for wss:// (map it to a ws:// server with --url-map)"),
        );
        return Err(pp_error::FAILED);
    }
    Ok(Target {
        canonical,
        effective,
        addrs: ips
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect(),
    })
}

/// The TCP connection and the opening handshake: the socket and the protocol the server
/// chose.
fn open(
    t: &Target,
    protocols: &[String],
    origin: Option<&str>,
) -> Result<(tungstenite::WebSocket<TcpStream>, String), i32> {
    let mut last = pp_error::FAILED;
    let mut stream = None;
    for a in &t.addrs {
        match TcpStream::connect_timeout(a, CONNECT_TIMEOUT) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = pnet::io_error(&e),
        }
    }
    let Some(stream) = stream else {
        // Chrome reported any failure to connect as PP_ERROR_FAILED.
        let _ = last;
        return Err(pp_error::FAILED);
    };
    let _ = stream.set_read_timeout(Some(CONNECT_TIMEOUT));
    let _ = stream.set_write_timeout(Some(CONNECT_TIMEOUT));
    let _ = stream.set_nodelay(true);
    let mut request = t
        .effective
        .as_str()
        .into_client_request()
        .map_err(|_| pp_error::BADARGUMENT)?;
    let headers = request.headers_mut();
    if !protocols.is_empty() {
        if let Ok(v) = protocols.join(", ").parse() {
            headers.insert("Sec-WebSocket-Protocol", v);
        }
    }
    if let Some(o) = origin.and_then(|o| o.parse().ok()) {
        headers.insert("Origin", o);
    }
    let (ws, response) =
        tungstenite::client::client(request, stream).map_err(|_| pp_error::FAILED)?;
    let protocol = response
        .headers()
        .get("Sec-WebSocket-Protocol")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let s = ws.get_ref();
    let _ = s.set_read_timeout(None);
    let _ = s.set_write_timeout(None);
    s.set_nonblocking(true).map_err(|_| pp_error::FAILED)?;
    Ok((ws, protocol))
}

/// The page's origin for the handshake's Origin header, when `--origin` is an http URL.
fn origin(s: &PepperState) -> Option<String> {
    let o = url::Url::parse(s.config.origin.as_deref()?).ok()?;
    matches!(o.scheme(), "http" | "https").then(|| o.origin().ascii_serialization())
}

/// Waits until `fd` is readable (or writable too, with `write`), `wake` is readable, or
/// `timeout` passes.
fn wait(fd: &TcpStream, wake: &UnixStream, write: bool, timeout: Option<Duration>) {
    let mut fds = [
        libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN | if write { libc::POLLOUT } else { 0 },
            revents: 0,
        },
        libc::pollfd {
            fd: wake.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
    // SAFETY: `fds` is a valid array of two pollfd for the call's duration.
    unsafe {
        libc::poll(fds.as_mut_ptr(), 2, ms);
    }
}

/// How a connection ended: code, reason, whether the closing handshake completed.
type Ending = (u16, String, bool);

/// The connection thread: sends what the app queued, keeps what the server sends, and at
/// the end records how the connection closed.
fn run_connection(
    shared: Arc<WsShared>,
    mut ws: tungstenite::WebSocket<TcpStream>,
    wake: UnixStream,
) {
    let _ = wake.set_nonblocking(true);
    let mut in_flight = 0u64;
    let mut want_write;
    let mut deadline: Option<Instant> = None;
    let mut peer_close: Option<(u16, String)> = None;
    let abnormal = |peer: &Option<(u16, String)>| -> Ending {
        match peer {
            Some((c, r)) => (*c, r.clone(), false),
            None => (ABNORMAL_CLOSURE, String::new(), false),
        }
    };
    let ending: Ending = 'run: loop {
        let commands: Vec<WsCommand> = lock(&shared.inner).outgoing.drain(..).collect();
        for c in commands {
            let r = match c {
                WsCommand::Send(m) => {
                    let (msg, len) = match m {
                        WsMessage::Text(t) => {
                            let n = t.len() as u64;
                            (Message::text(t), n)
                        }
                        WsMessage::Binary(b) => {
                            let n = b.len() as u64;
                            (Message::binary(b), n)
                        }
                    };
                    in_flight += len;
                    ws.write(msg)
                }
                WsCommand::Close(code, reason) => {
                    deadline.get_or_insert(Instant::now() + CLOSE_TIMEOUT);
                    let frame = code.map(|c| CloseFrame {
                        code: CloseCode::from(c),
                        reason: reason.into(),
                    });
                    ws.close(frame)
                }
            };
            match r {
                Ok(()) => {}
                Err(WsError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                // Sends after the server's close are dropped, as the renderer dropped them.
                Err(WsError::Protocol(_)) => {}
                Err(WsError::ConnectionClosed | WsError::AlreadyClosed) => {
                    break 'run match &peer_close {
                        Some((c, r)) => (*c, r.clone(), true),
                        None => abnormal(&peer_close),
                    }
                }
                Err(_) => break 'run abnormal(&peer_close),
            }
        }
        loop {
            match ws.read() {
                Ok(Message::Text(t)) => {
                    let mut w = lock(&shared.inner);
                    if !w.error_received && matches!(w.state, ready::OPEN | ready::CLOSING) {
                        w.received
                            .push_back(WsMessage::Text(t.as_str().to_string()));
                    }
                    drop(w);
                    shared.changed.notify_all();
                }
                Ok(Message::Binary(b)) => {
                    let mut w = lock(&shared.inner);
                    if !w.error_received && matches!(w.state, ready::OPEN | ready::CLOSING) {
                        w.received.push_back(WsMessage::Binary(b.to_vec()));
                    }
                    drop(w);
                    shared.changed.notify_all();
                }
                Ok(Message::Close(frame)) => {
                    peer_close = Some(match frame {
                        Some(f) => (u16::from(f.code), f.reason.as_str().to_string()),
                        None => (NOT_SPECIFIED, String::new()),
                    });
                    deadline.get_or_insert(Instant::now() + CLOSE_TIMEOUT);
                    let mut w = lock(&shared.inner);
                    if w.state == ready::OPEN {
                        w.state = ready::CLOSING;
                    }
                    drop(w);
                    shared.changed.notify_all();
                }
                Ok(_) => {}
                Err(WsError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(WsError::ConnectionClosed | WsError::AlreadyClosed) => {
                    break 'run match &peer_close {
                        Some((c, r)) => (*c, r.clone(), true),
                        None => abnormal(&peer_close),
                    }
                }
                Err(_) => break 'run abnormal(&peer_close),
            }
        }
        match ws.flush() {
            Ok(()) => {
                want_write = false;
                if in_flight > 0 {
                    let mut w = lock(&shared.inner);
                    w.buffered = w.buffered.saturating_sub(in_flight);
                    in_flight = 0;
                }
            }
            Err(WsError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => want_write = true,
            Err(WsError::ConnectionClosed | WsError::AlreadyClosed) => {
                break 'run match &peer_close {
                    Some((c, r)) => (*c, r.clone(), true),
                    None => abnormal(&peer_close),
                }
            }
            Err(_) => break 'run abnormal(&peer_close),
        }
        let timeout = match deadline {
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    // The closing handshake did not finish in time: it finished if both
                    // close frames were exchanged.
                    break 'run match &peer_close {
                        Some((c, r)) => (*c, r.clone(), !ws.can_write()),
                        None => abnormal(&peer_close),
                    };
                }
                Some(d - now)
            }
            None => None,
        };
        // A command queued before the wait wakes it through `wake`.
        if !lock(&shared.inner).outgoing.is_empty() {
            continue;
        }
        wait(ws.get_ref(), &wake, want_write, timeout);
        let mut b = [0u8; 64];
        while matches!(std::io::Read::read(&mut &wake, &mut b), Ok(n) if n > 0) {}
    };
    let _ = ws.get_ref().shutdown(std::net::Shutdown::Both);
    let mut w = lock(&shared.inner);
    w.state = ready::CLOSED;
    w.close_code = ending.0;
    w.close_reason = ending.1;
    w.close_was_clean = ending.2;
    w.waker = None;
    w.socket = None;
    drop(w);
    shared.changed.notify_all();
}

fn connect(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<WsShared>>,
    (_, url, protocols, count, _): (i32, i32, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: ws } = e;
    {
        let mut w = lock(&ws.inner);
        if w.connect_pending || w.state != ready::INVALID {
            drop(w);
            return answer_now(caller, cb, pp_error::INPROGRESS);
        }
        // Connect can be called once: from here on the socket is closed until it opens.
        w.state = ready::CLOSED;
    }
    let url = mem::read_var(&mut *caller, url as u32)?;
    let Some(given) = s.vars().string(url).map(str::to_string) else {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    };
    lock(&ws.inner).url = Some(given.clone());
    let count = count as u32;
    if count > MAX_PROTOCOLS || (count > 0 && protocols == 0) {
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    }
    let mut names = Vec::new();
    let mut seen = BTreeSet::new();
    for i in 0..count {
        let v = mem::read_var(&mut *caller, protocols as u32 + 16 * i)?;
        let name = s.vars().string(v).map(str::to_string);
        match name {
            Some(n) if valid_protocol(&n) && seen.insert(n.clone()) => names.push(n),
            _ => return answer_now(caller, cb, pp_error::BADARGUMENT),
        }
    }
    let t = match target(&s, &given) {
        Ok(t) => t,
        Err(e) => return answer_now(caller, cb, e),
    };
    {
        let mut w = lock(&ws.inner);
        w.state = ready::CONNECTING;
        w.connect_pending = true;
    }
    let origin = origin(&s);
    let shared = ws.clone();
    start_async(caller, cb, move || {
        let opened = open(&t, &names, origin.as_deref());
        let mut w = lock(&shared.inner);
        w.connect_pending = false;
        let aborted = std::mem::take(&mut w.connect_aborted);
        let result = match opened {
            Ok((socket, protocol)) if !aborted => {
                let wakers = UnixStream::pair();
                let clone = socket.get_ref().try_clone();
                match (wakers, clone) {
                    (Ok((tx, rx)), Ok(clone)) => {
                        let _ = tx.set_nonblocking(true);
                        w.waker = Some(tx);
                        w.socket = Some(clone);
                        w.state = ready::OPEN;
                        w.protocol = protocol;
                        w.url = Some(t.canonical.clone());
                        let sh = shared.clone();
                        let spawned = std::thread::Builder::new()
                            .name("pepper websocket".into())
                            .spawn(move || run_connection(sh, socket, rx));
                        if spawned.is_ok() {
                            pp_error::OK
                        } else {
                            w.state = ready::CLOSED;
                            w.close_code = ABNORMAL_CLOSURE;
                            pp_error::NOMEMORY
                        }
                    }
                    _ => {
                        w.state = ready::CLOSED;
                        w.close_code = ABNORMAL_CLOSURE;
                        pp_error::FAILED
                    }
                }
            }
            other => {
                w.state = ready::CLOSED;
                w.close_code = ABNORMAL_CLOSURE;
                if aborted {
                    drop(other);
                    pp_error::ABORTED
                } else {
                    other.err().unwrap_or(pp_error::FAILED)
                }
            }
        };
        drop(w);
        shared.changed.notify_all();
        Completion::result(result)
    })
}

fn close(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<WsShared>>,
    (_, code, reason, _): (i32, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: ws } = e;
    {
        let w = lock(&ws.inner);
        let early = if w.close_pending {
            Some(pp_error::INPROGRESS)
        } else if w.state == ready::INVALID {
            Some(pp_error::FAILED)
        } else {
            None
        };
        if let Some(e) = early {
            drop(w);
            return answer_now(caller, cb, e);
        }
    }
    let code = code as u16;
    let reason = mem::read_var(&mut *caller, reason as u32)?;
    let mut reason_text = String::new();
    if code != NOT_SPECIFIED {
        if code != NORMAL_CLOSURE && !(USER_REGISTERED_MIN..=USER_PRIVATE_MAX).contains(&code) {
            return answer_now(caller, cb, pp_error::NOACCESS);
        }
        if reason != PpVar::Undefined {
            match s.vars().string(reason) {
                Some(r) if r.len() <= MAX_REASON_BYTES => reason_text = r.to_string(),
                _ => return answer_now(caller, cb, pp_error::BADARGUMENT),
            }
        }
    }
    {
        let mut w = lock(&ws.inner);
        match w.state {
            ready::CLOSING => {
                drop(w);
                return answer_now(caller, cb, pp_error::INPROGRESS);
            }
            ready::CLOSED => {
                drop(w);
                return answer_now(caller, cb, pp_error::OK);
            }
            ready::CONNECTING => {
                // The connect's callback gets PP_ERROR_ABORTED; this one runs once the
                // attempt is over.
                w.connect_aborted = true;
            }
            _ => {
                if w.receive_pending {
                    w.receive_aborted = true;
                }
                let code = (code != NOT_SPECIFIED).then_some(code);
                w.outgoing.push_back(WsCommand::Close(code, reason_text));
                WsShared::wake(&w);
            }
        }
        w.state = ready::CLOSING;
        w.close_pending = true;
    }
    ws.changed.notify_all();
    let shared = ws.clone();
    start_async(caller, cb, move || {
        let mut w = lock(&shared.inner);
        while w.state != ready::CLOSED {
            w = shared.changed.wait(w).unwrap_or_else(|p| p.into_inner());
        }
        w.close_pending = false;
        Completion::result(pp_error::OK)
    })
}

/// A var for a received message (the app's reference).
fn message_var(s: &PepperState, m: WsMessage) -> PpVar {
    let mut vars = s.vars();
    match m {
        WsMessage::Text(t) => vars.string_from_str(&t),
        WsMessage::Binary(b) => vars.array_buffer_from(b),
    }
}

fn receive_message(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<WsShared>>,
    (_, out, _): (i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: ws } = e;
    let at_hand = {
        let mut w = lock(&ws.inner);
        if w.receive_pending {
            Err(pp_error::INPROGRESS)
        } else if matches!(w.state, ready::INVALID | ready::CONNECTING) {
            Err(pp_error::BADARGUMENT)
        } else if let Some(m) = w.received.pop_front() {
            Ok(Some(m))
        } else if w.state == ready::CLOSED {
            Err(pp_error::BADARGUMENT)
        } else if w.error_received {
            Err(pp_error::FAILED)
        } else {
            w.receive_pending = true;
            w.receive_aborted = false;
            Ok(None)
        }
    };
    match at_hand {
        Err(e) => answer_now(caller, cb, e),
        Ok(Some(m)) => {
            // A message already here is the call's result (and the var is written now).
            let v = message_var(&s, m);
            mem::write_var(&mut *caller, out as u32, v)?;
            answer_now(caller, cb, pp_error::OK)
        }
        Ok(None) => {
            let shared = ws.clone();
            let s2 = s.clone();
            start_async(caller, cb, move || {
                let mut w = lock(&shared.inner);
                let got = loop {
                    if w.receive_aborted {
                        break Err(pp_error::ABORTED);
                    }
                    if let Some(m) = w.received.pop_front() {
                        break Ok(m);
                    }
                    if w.state == ready::CLOSED || w.error_received {
                        break Err(pp_error::FAILED);
                    }
                    w = shared.changed.wait(w).unwrap_or_else(|p| p.into_inner());
                };
                w.receive_pending = false;
                w.receive_aborted = false;
                drop(w);
                match got {
                    Ok(m) => {
                        let v = message_var(&s2, m);
                        Completion {
                            result: pp_error::OK,
                            writes: vec![(out as u32, v.to_bytes().to_vec())],
                        }
                    }
                    Err(e) => Completion::result(e),
                }
            })
        }
    }
}

fn send_message(mut caller: Caller<'_, Ctx>, res: i32, message: i32) -> wasmtime::Result<i32> {
    let s = state(&caller)?;
    let Some(ws) = ws_of(&s, res) else {
        return Ok(pp_error::BADRESOURCE);
    };
    if matches!(lock(&ws.inner).state, ready::INVALID | ready::CONNECTING) {
        return Ok(pp_error::BADARGUMENT);
    }
    let v = mem::read_var(&mut caller, message as u32)?;
    let m = match v {
        PpVar::String(_) => match s.vars().string(v) {
            Some(t) => WsMessage::Text(t.to_string()),
            None => return Ok(pp_error::BADARGUMENT),
        },
        PpVar::ArrayBuffer(_) => {
            // The app may have written the bytes through Map.
            super::var::sync_buffers(&mut caller, &s)?;
            match s.vars().array_buffer_bytes(v) {
                Some(b) => WsMessage::Binary(b.to_vec()),
                None => return Ok(pp_error::BADARGUMENT),
            }
        }
        _ => return Ok(pp_error::NOTSUPPORTED),
    };
    let len = match &m {
        WsMessage::Text(t) => t.len(),
        WsMessage::Binary(b) => b.len(),
    } as u64;
    let mut w = lock(&ws.inner);
    if matches!(w.state, ready::CLOSING | ready::CLOSED) {
        w.buffered_after_close = w.buffered_after_close.saturating_add(frame_size(len));
        return Ok(pp_error::FAILED);
    }
    // The renderer dropped empty binary messages.
    if !matches!(&m, WsMessage::Binary(b) if b.is_empty()) {
        w.buffered = w.buffered.saturating_add(len);
        w.outgoing.push_back(WsCommand::Send(m));
        WsShared::wake(&w);
    }
    Ok(pp_error::OK)
}

/// Writes a string var of what `f` reads from the socket, or Undefined for a bad resource.
fn string_getter(
    caller: &mut Caller<'_, Ctx>,
    ret: i32,
    res: i32,
    f: impl FnOnce(&pnet::WsInner) -> String,
) -> wasmtime::Result<()> {
    let s = state(caller)?;
    let v = match ws_of(&s, res) {
        Some(ws) => {
            let text = f(&lock(&ws.inner));
            string_var(&s, &text)
        }
        None => PpVar::Undefined,
    };
    mem::write_var(&mut *caller, ret as u32, v)
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_create(linker, WS, || Resource::WebSocket(WebSocket::default()))?;
    link_is(linker, WS, "IsWebSocket", |r| {
        matches!(r, Resource::WebSocket(_))
    })?;
    link_entered(linker, WS, "Connect", &WEB_SOCKET, connect)?;
    link_entered(linker, WS, "Close", &WEB_SOCKET, close)?;
    link_entered(linker, WS, "ReceiveMessage", &WEB_SOCKET, receive_message)?;
    linker.func_wrap(WS, "SendMessage", send_message)?;
    link_query(linker, WS, "GetBufferedAmount", |s, res| {
        let n = ws_of(s, res).map_or(0, |ws| {
            let w = lock(&ws.inner);
            w.buffered.saturating_add(w.buffered_after_close)
        });
        n as i64
    })?;
    link_query(linker, WS, "GetCloseCode", |s, res| {
        ws_of(s, res).map_or(0, |ws| lock(&ws.inner).close_code as i32)
    })?;
    link_query(linker, WS, "GetCloseWasClean", |s, res| {
        ws_of(s, res).is_some_and(|ws| lock(&ws.inner).close_was_clean) as i32
    })?;
    link_query(linker, WS, "GetReadyState", |s, res| {
        ws_of(s, res).map_or(ready::INVALID, |ws| lock(&ws.inner).state)
    })?;
    type Text = fn(&pnet::WsInner) -> String;
    let texts: [(&str, Text); 4] = [
        ("GetCloseReason", |w| w.close_reason.clone()),
        // Chrome never reported an extension to the plugin.
        ("GetExtensions", |_| String::new()),
        ("GetProtocol", |w| w.protocol.clone()),
        ("GetURL", |w| w.url.clone().unwrap_or_default()),
    ];
    for (name, text) in texts {
        linker.func_wrap(
            WS,
            name,
            move |mut caller: Caller<'_, Ctx>, ret: i32, res: i32| -> wasmtime::Result<()> {
                string_getter(&mut caller, ret, res, text)
            },
        )?;
    }
    Ok(())
}
