//! The network resources of the command-line host (`PPB_NetAddress`, `PPB_HostResolver`,
//! `PPB_TCPSocket`, `PPB_UDPSocket`, `PPB_WebSocket`; the functions are in `ppb/`) and the
//! one rule they all follow, [`NetState::allow`]:
//!
//! * without `--net loopback` (`PepperConfig::net_loopback`) every operation that would
//!   touch the network (a bind, connect, send, resolution or WebSocket connection) gets
//!   `PP_ERROR_NOACCESS`, as Chrome answered a page that was not allowed sockets;
//! * with it, only loopback addresses (127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104) may be
//!   bound, connected to or sent to, and only `localhost` (and `*.localhost`) and loopback
//!   literals resolve. Another address gets `PP_ERROR_NOACCESS`; another name gets
//!   `PP_ERROR_NAME_NOT_RESOLVED` (no DNS query is ever made). A bind to the unspecified
//!   address (0.0.0.0 or ::) binds the loopback address of its family instead, so that a
//!   server the app opens is reachable from this machine only.
//!
//! The host notes each refused interface once on the sink.
//!
//! Every socket is a host thread's blocking operation (`start_async`); `Close`, the last
//! release of the resource and the end of the run shut the socket down, which wakes those
//! operations, and their callbacks get `PP_ERROR_ABORTED`.

use std::collections::{BTreeSet, VecDeque};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Condvar, Mutex};

use socket2::Socket;

use super::{lock, pp_error};

/// Whether `ip` is a loopback address (IPv4-mapped loopback included).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// The Pepper error for an I/O error of a socket (Chrome's mapping of net errors).
pub fn io_error(e: &io::Error) -> i32 {
    use io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => pp_error::CONNECTION_REFUSED,
        K::ConnectionReset | K::BrokenPipe => pp_error::CONNECTION_RESET,
        K::ConnectionAborted => pp_error::CONNECTION_ABORTED,
        K::NotConnected => pp_error::CONNECTION_CLOSED,
        K::TimedOut => pp_error::CONNECTION_TIMEDOUT,
        K::AddrInUse => pp_error::ADDRESS_IN_USE,
        K::AddrNotAvailable => pp_error::ADDRESS_INVALID,
        K::HostUnreachable | K::NetworkUnreachable => pp_error::ADDRESS_UNREACHABLE,
        K::PermissionDenied => pp_error::NOACCESS,
        K::InvalidInput => pp_error::ADDRESS_INVALID,
        _ => match e.raw_os_error() {
            Some(libc::EMSGSIZE) => pp_error::MESSAGE_TOO_BIG,
            _ => pp_error::FAILED,
        },
    }
}

/// What the network rule says of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// Refused with this Pepper error.
    Refused(i32),
}

/// The network part of the host's state: the rule and the notes already made.
#[derive(Debug, Default)]
pub struct NetState {
    noted: Mutex<BTreeSet<String>>,
}

impl NetState {
    /// Whether the app may reach `target` (a description for the note), a loopback
    /// address or not. Notes `interface` once when refused.
    pub fn allow(
        &self,
        loopback_allowed: bool,
        sink: &dyn super::Sink,
        interface: &str,
        target: &str,
        loopback: bool,
    ) -> Verdict {
        let why = if !loopback_allowed {
            "the command-line host gives no network access without --net loopback"
        } else if !loopback {
            "--net loopback allows loopback addresses only"
        } else {
            return Verdict::Allowed;
        };
        self.note_once(
            sink,
            interface,
            &format!("{interface}: {target} refused (PP_ERROR_NOACCESS): {why}"),
        );
        Verdict::Refused(pp_error::NOACCESS)
    }

    /// Notes `text` on the sink unless `interface` was noted before.
    pub fn note_once(&self, sink: &dyn super::Sink, interface: &str, text: &str) {
        if lock(&self.noted).insert(interface.to_string()) {
            sink.note(text);
        }
    }
}

/// The address a bind really uses: the unspecified address becomes loopback.
pub fn bind_address(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port())
        }
        IpAddr::V6(v6) if v6.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), addr.port())
        }
        _ => addr,
    }
}

/// What `localhost`-style names and address literals resolve to under `--net loopback`
/// for a hint `family` (0 any, 1 IPv4, 2 IPv6): the addresses, or the Pepper error.
pub fn resolve_loopback(host: &str, family: i32) -> Result<Vec<IpAddr>, i32> {
    let want = |ip: &IpAddr| match family {
        1 => ip.is_ipv4(),
        2 => ip.is_ipv6(),
        _ => true,
    };
    let literal = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = literal.parse::<IpAddr>() {
        if !is_loopback(ip) {
            return Err(pp_error::NOACCESS);
        }
        return if want(&ip) {
            Ok(vec![ip])
        } else {
            Err(pp_error::NAME_NOT_RESOLVED)
        };
    }
    let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        let all = [
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(Ipv6Addr::LOCALHOST),
        ];
        return Ok(all.into_iter().filter(want).collect());
    }
    Err(pp_error::NAME_NOT_RESOLVED)
}

/// `PPB_NetAddress.DescribeAsString`, as Chrome wrote addresses: IPv4 dotted, IPv6 after
/// RFC 5952 except that an address whose first 80 bits are zero and whose next 16 are
/// 0 or ffff is written with its last 32 bits dotted (`::ffff:1.2.3.4`, and so `::0.0.0.1`
/// for ::1); with the port, `a.b.c.d:port` and `[v6]:port`.
pub fn describe(addr: SocketAddr, include_port: bool) -> String {
    match addr {
        SocketAddr::V4(a) => {
            if include_port {
                format!("{}:{}", a.ip(), a.port())
            } else {
                a.ip().to_string()
            }
        }
        SocketAddr::V6(a) => {
            let s = a.ip().segments();
            let o = a.ip().octets();
            let text = if s[..5].iter().all(|&x| x == 0) && (s[5] == 0 || s[5] == 0xffff) {
                format!(
                    "::{}{}.{}.{}.{}",
                    if s[5] == 0 { "" } else { "ffff:" },
                    o[12],
                    o[13],
                    o[14],
                    o[15]
                )
            } else {
                // Rust writes the rest after RFC 5952 (longest run of zeros, the first of
                // equals, only runs of two or more).
                Ipv6Addr::from(s).to_string()
            };
            if include_port {
                format!("[{text}]:{}", a.port())
            } else {
                text
            }
        }
    }
}

/// A host resolver (`PPB_HostResolver`): the last resolution's results, if it succeeded.
#[derive(Debug, Default)]
pub struct HostResolver {
    pub results: Option<(String, Vec<SocketAddr>)>,
}

/// A TCP socket's state (Chrome's `TCPSocketState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpPhase {
    Initial,
    Bound,
    Connected,
    Listening,
    Closed,
}

/// What a TCP socket resource shares with the operations running on its behalf.
#[derive(Debug)]
pub struct TcpInner {
    /// Made through `PPB_TCPSocket;1.0` (no Bind; a failed connect may be retried).
    pub v1_0: bool,
    pub phase: TcpPhase,
    /// The transition in flight (Bind, Connect, Listen): its target.
    pub pending: Option<TcpPhase>,
    pub read_pending: bool,
    pub write_pending: bool,
    pub accept_pending: bool,
    pub socket: Option<Arc<Socket>>,
    pub local: Option<SocketAddr>,
    pub remote: Option<SocketAddr>,
    /// Options set before the socket existed (1.2): applied at connect.
    pub no_delay: Option<bool>,
    pub send_buffer: Option<i32>,
    pub recv_buffer: Option<i32>,
}

/// A TCP socket resource; its last release closes it.
#[derive(Debug)]
pub struct TcpSocket(pub Arc<Mutex<TcpInner>>);

impl TcpSocket {
    pub fn new(v1_0: bool) -> TcpSocket {
        TcpSocket(Arc::new(Mutex::new(TcpInner {
            v1_0,
            phase: TcpPhase::Initial,
            pending: None,
            read_pending: false,
            write_pending: false,
            accept_pending: false,
            socket: None,
            local: None,
            remote: None,
            no_delay: None,
            send_buffer: None,
            recv_buffer: None,
        })))
    }

    /// Closes the socket: operations in flight wake and end with `PP_ERROR_ABORTED`.
    pub fn close(&self) {
        lock(&self.0).close();
    }
}

impl TcpInner {
    pub fn close(&mut self) {
        self.phase = TcpPhase::Closed;
        self.pending = None;
        if let Some(s) = self.socket.take() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Drop for TcpSocket {
    fn drop(&mut self) {
        self.close();
    }
}

/// What a UDP socket resource shares with its operations.
#[derive(Debug, Default)]
pub struct UdpInner {
    pub bind_called: bool,
    pub bound: bool,
    pub closed: bool,
    pub recv_pending: bool,
    /// Receives wait in slices of [`UDP_POLL`] to see a close.
    pub socket: Option<Arc<std::net::UdpSocket>>,
    pub bound_addr: Option<SocketAddr>,
    /// Options set before Bind, applied by it.
    pub reuse: Option<bool>,
    pub broadcast: Option<bool>,
    pub send_buffer: Option<i32>,
    pub recv_buffer: Option<i32>,
}

/// A UDP socket resource; its last release closes it.
#[derive(Debug, Default)]
pub struct UdpSocket(pub Arc<Mutex<UdpInner>>);

/// How often a UDP receive looks whether its socket was closed.
pub const UDP_POLL: std::time::Duration = std::time::Duration::from_millis(100);

impl UdpSocket {
    pub fn close(&self) {
        lock(&self.0).close();
    }
}

impl UdpInner {
    pub fn close(&mut self) {
        self.closed = true;
        self.bound = false;
        self.socket = None;
    }
}

impl Drop for UdpSocket {
    fn drop(&mut self) {
        self.close();
    }
}

/// `PP_WebSocketReadyState`.
pub mod ready {
    pub const INVALID: i32 = -1;
    pub const CONNECTING: i32 = 0;
    pub const OPEN: i32 = 1;
    pub const CLOSING: i32 = 2;
    pub const CLOSED: i32 = 3;
}

/// A message from the server, kept until the app receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WsMessage {
    Text(String),
    Binary(Vec<u8>),
}

/// What the app asks of a WebSocket's connection thread.
#[derive(Debug)]
pub enum WsCommand {
    Send(WsMessage),
    /// Close with this code (`None`: no code) and reason.
    Close(Option<u16>, String),
}

/// A WebSocket's state, shared by the resource, its operations and its connection thread.
#[derive(Debug)]
pub struct WsInner {
    pub state: i32,
    pub connect_pending: bool,
    pub close_pending: bool,
    pub receive_pending: bool,
    /// Close was called while connecting, or a pending receive was cut short.
    pub connect_aborted: bool,
    pub receive_aborted: bool,
    pub url: Option<String>,
    pub protocol: String,
    pub received: VecDeque<WsMessage>,
    pub error_received: bool,
    pub outgoing: VecDeque<WsCommand>,
    /// Payload bytes given to SendMessage and not yet written to the connection, and
    /// Chrome's estimate of frames sent after close.
    pub buffered: u64,
    pub buffered_after_close: u64,
    pub close_code: u16,
    pub close_reason: String,
    pub close_was_clean: bool,
    /// Wakes the connection thread (its poll), once it runs.
    pub waker: Option<std::os::unix::net::UnixStream>,
    /// The connection's socket, to shut it down when the resource goes.
    pub socket: Option<std::net::TcpStream>,
}

/// A WebSocket resource; its last release ends the connection.
#[derive(Debug)]
pub struct WebSocket(pub Arc<WsShared>);

#[derive(Debug)]
pub struct WsShared {
    pub inner: Mutex<WsInner>,
    /// Signalled on every change a waiting operation may care about.
    pub changed: Condvar,
}

impl Default for WebSocket {
    fn default() -> Self {
        WebSocket(Arc::new(WsShared {
            inner: Mutex::new(WsInner {
                state: ready::INVALID,
                connect_pending: false,
                close_pending: false,
                receive_pending: false,
                connect_aborted: false,
                receive_aborted: false,
                url: None,
                protocol: String::new(),
                received: VecDeque::new(),
                error_received: false,
                outgoing: VecDeque::new(),
                buffered: 0,
                buffered_after_close: 0,
                close_code: 0,
                close_reason: String::new(),
                close_was_clean: false,
                waker: None,
                socket: None,
            }),
            changed: Condvar::new(),
        }))
    }
}

impl WsShared {
    /// Wakes the connection thread.
    pub fn wake(inner: &WsInner) {
        if let Some(w) = &inner.waker {
            use std::io::Write;
            let _ = (&*w).write(&[1]);
        }
    }

    /// Ends the connection at once (the resource went, or the run ends): operations in
    /// flight end.
    pub fn shut(&self) {
        let mut w = lock(&self.inner);
        if w.state != ready::CLOSED {
            if w.state == ready::CONNECTING {
                w.connect_aborted = true;
            }
            w.receive_aborted = true;
        }
        if let Some(s) = w.socket.take() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        Self::wake(&w);
        drop(w);
        self.changed.notify_all();
    }
}

impl Drop for WebSocket {
    fn drop(&mut self) {
        self.0.shut();
    }
}

/// Closes every socket and connection of the run (its end): operations in flight wake.
pub fn stop(resources: &super::resources::Resources) {
    use super::resources::Resource;
    for (_, r) in resources.iter() {
        match r {
            Resource::TcpSocket(t) => t.close(),
            Resource::UdpSocket(u) => u.close(),
            Resource::WebSocket(w) => w.0.shut(),
            _ => {}
        }
    }
}
