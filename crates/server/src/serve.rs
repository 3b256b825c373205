//! Serving connections: the accept loop, the connection cap, per-connection timeouts and
//! graceful shutdown.
//!
//! Written by hand over hyper's HTTP/1 connection because `axum::serve` has none of
//! these: a connection that sends nothing, or a head that never ends, stays open forever;
//! connections are not capped, so accept fails with EMFILE and the service locks up; and
//! its graceful shutdown waits for connections that never sent a request (hyper counts a
//! fresh connection as busy), so SIGTERM never completes while one is open. hyper's own
//! `header_read_timeout` is not used either: it also runs while a kept-alive connection
//! waits for its next request, so the idle limit could never exceed the header limit.
//!
//! Each connection has a [`Conn`]: when a byte last moved (seen by [`Tracked`], the socket
//! wrapper), when the current request head began, how many requests are in flight (from
//! a complete head until hyper drops the response body) and whether a handler is at work.
//! A watchdog in the connection's own task closes it when
//! - a request head is not complete `header_timeout` after its first byte, or
//! - no byte has moved for `idle_timeout` while no handler is at work (silent since it
//!   opened, between requests, or a client that stopped reading its answer).
//!
//! While a handler is at work its own limits apply (the body's time limit, the
//! conversion's). The cap (`max_connections`, kept below the descriptor limit by
//! [`connection_cap`]) is a semaphore; a connection over it takes the place of the open
//! connection with no request in flight that moved a byte longest ago, and only when every
//! connection has a request in flight is it answered 503 and closed. On shutdown the
//! listener closes, connections with no request in flight close at once, the others finish
//! their request (hyper's graceful shutdown: no keep-alive) within `shutdown_grace`.

use crate::metrics::CutReason;
use crate::problem::{Problem, PROBLEM_JSON};
use crate::AppState;
use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::Router;
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tower::ServiceExt;

/// Descriptors the connection cap leaves to everything else: the listener, the runtime's
/// epoll and wakers, standard streams, and the connection being accepted over the cap.
pub const FD_RESERVE: u64 = 64;

/// hyper's read buffer per connection (its default is 400 KiB): a request head must fit in
/// it, and it bounds what a connection that never finishes its head can make us hold.
const MAX_BUF: usize = 64 << 10;

/// The listen backlog: connections the kernel completes before we accept them.
const BACKLOG: u32 = 1024;

/// How long a connection over the cap waits for the connection it replaces to close.
const EVICTION_WAIT: Duration = Duration::from_millis(200);

#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections open at once (after [`connection_cap`]).
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub shutdown_grace: Duration,
}

/// The connection cap: the one asked for, lowered so that the connections and
/// [`FD_RESERVE`] fit in the soft descriptor limit (RLIMIT_NOFILE), which the server
/// never raises: then accept never fails for want of a descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cap {
    pub wanted: usize,
    /// The soft descriptor limit, when there is one.
    pub nofile: Option<u64>,
    pub cap: usize,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CapError {
    #[error(
        "the descriptor limit (ulimit -n) is {nofile}, which leaves no room for connections \
         beside the {FD_RESERVE} descriptors the server keeps for itself"
    )]
    TooFewDescriptors { nofile: u64 },
}

/// The cap for `wanted` connections under this process's descriptor limit.
pub fn connection_cap(wanted: usize) -> Result<Cap, CapError> {
    cap_under(wanted, nofile_limit())
}

fn cap_under(wanted: usize, nofile: Option<u64>) -> Result<Cap, CapError> {
    // The shutdown waits for every slot at once, and a semaphore counts in u32.
    let mut cap = wanted.min(u32::MAX as usize).min(Semaphore::MAX_PERMITS);
    if let Some(n) = nofile {
        let room = n.saturating_sub(FD_RESERVE);
        if room == 0 {
            return Err(CapError::TooFewDescriptors { nofile: n });
        }
        cap = cap.min(usize::try_from(room).unwrap_or(usize::MAX));
    }
    Ok(Cap {
        wanted,
        nofile,
        cap,
    })
}

#[cfg(unix)]
fn nofile_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct it is given, which lives across the call.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0;
    #[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not everywhere
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur as u64)
}

#[cfg(not(unix))]
fn nofile_limit() -> Option<u64> {
    None
}

/// Binds `addr` with a listen backlog of [`BACKLOG`]. tokio's `TcpListener::bind` asks for
/// 128, which a burst of connections overflows (300 at once, in the abuse test); the
/// kernel then drops their SYNs, and clients retry only a second later.
pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // As std and tokio do on Unix: a restarted server can bind while old connections
    // linger in TIME_WAIT.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// How the server stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// Connections still open when the grace period ended (their requests were cut).
    pub cut: usize,
}

/// Serves `state`'s app on `listener` until `shutdown` resolves, then shuts down: stops
/// accepting, closes connections with no request in flight at once, and gives the
/// others `limits.shutdown_grace` to finish.
pub async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) -> Stopped {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let shared = Arc::new(Shared {
        base: Instant::now(),
        app: crate::app(state.clone()),
        conns: Mutex::new(HashMap::new()),
        refusal: refusal(limits.max_connections),
        state,
        limits,
    });
    let mut next_id = 0u64;
    let mut backoff: Option<Duration> = None;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            r = listener.accept() => r,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                backoff = None;
                stream
            }
            // The client gave up before we took it: nothing is wrong with the listener.
            Err(e) if is_per_connection(&e) => continue,
            // Out of descriptors or memory (the cap should prevent the first): wait
            // before trying again instead of spinning, and keep listening for shutdown.
            Err(e) => {
                let delay = backoff.map_or(Duration::from_millis(10), |d| {
                    (d * 2).min(Duration::from_secs(1))
                });
                backoff = Some(delay);
                tracing::warn!(error = %e, delay_ms = delay.as_millis() as u64, "accept error; backing off");
                tokio::select! {
                    biased;
                    _ = &mut shutdown => break,
                    _ = tokio::time::sleep(delay) => continue,
                }
            }
        };
        let permit = match slots.clone().try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) if shared.evict_one() => {
                tokio::time::timeout(EVICTION_WAIT, slots.clone().acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok)
            }
            Err(_) => None,
        };
        let Some(permit) = permit else {
            shared.cut(CutReason::OverCapacity);
            refuse(&stream, &shared.refusal);
            continue;
        };
        next_id += 1;
        let conn = Arc::new(Conn::new(next_id, shared.base));
        shared.conns.lock().unwrap().insert(next_id, conn.clone());
        shared.state.metrics.connections_open.inc();
        tokio::spawn(connection(shared.clone(), conn, stream, permit));
    }
    drop(listener);

    let open: Vec<Arc<Conn>> = shared.conns.lock().unwrap().values().cloned().collect();
    tracing::info!(
        open = open.len(),
        grace_ms = shared.limits.shutdown_grace.as_millis() as u64,
        "stopped accepting; closing idle connections, finishing requests in flight"
    );
    for conn in &open {
        conn.order(SHUTDOWN);
    }
    drop(open);
    let all = slots.acquire_many_owned(shared.limits.max_connections as u32);
    match tokio::time::timeout(shared.limits.shutdown_grace, all).await {
        Ok(_) => Stopped { cut: 0 },
        Err(_) => {
            let cut = shared.conns.lock().unwrap().len();
            for _ in 0..cut {
                shared.cut(CutReason::Shutdown);
            }
            tracing::warn!(
                cut,
                "shutdown grace period over; cutting the connections still open"
            );
            Stopped { cut }
        }
    }
}

fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
    )
}

/// The whole answer to a connection over the cap: a 503 problem, then close.
fn refusal(max: usize) -> Vec<u8> {
    let problem = Problem::too_many_connections(max);
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    let mut r = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: {PROBLEM_JSON}\r\nretry-after: 1\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(&body);
    r
}

/// Answers `stream` with `response` and lets it close, never waiting: what the client sent
/// already is read first, so that closing sends FIN rather than RST and the client can
/// read the answer.
fn refuse(stream: &TcpStream, response: &[u8]) {
    let mut scratch = [0u8; 4096];
    for _ in 0..16 {
        match stream.try_read(&mut scratch) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
    }
    let _ = stream.try_write(response);
}

struct Shared {
    base: Instant,
    app: Router,
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
    refusal: Vec<u8>,
    state: Arc<AppState>,
    limits: Limits,
}

impl Shared {
    fn cut(&self, reason: CutReason) {
        self.state.metrics.connection_cut(reason);
    }

    /// Orders the connection with no request in flight that moved a byte longest ago to
    /// close; false when every connection has a request in flight.
    fn evict_one(&self) -> bool {
        let conns = self.conns.lock().unwrap();
        let victim = conns
            .values()
            .filter(|c| c.evictable() && c.order.load(Relaxed) == NONE)
            .min_by_key(|c| c.last_io.load(Relaxed));
        match victim {
            Some(c) => {
                c.order(EVICT);
                true
            }
            None => false,
        }
    }
}

/// Orders to a connection's task (`Conn::order`).
const NONE: u8 = 0;
const EVICT: u8 = 1;
const SHUTDOWN: u8 = 2;

/// What the watchdog of one connection knows. Times are milliseconds since `base`.
struct Conn {
    id: u64,
    base: Instant,
    /// When a byte last moved either way.
    last_io: AtomicU64,
    /// 1 + when the first byte of the request head being read arrived; 0 when none is.
    head_since: AtomicU64,
    /// Requests whose head arrived and whose response body hyper has not dropped yet.
    in_flight: AtomicUsize,
    /// Requests whose handler is at work.
    handling: AtomicUsize,
    order: AtomicU8,
    /// Wakes the watchdog: an order, or a change that may bring a deadline closer.
    wake: Notify,
}

impl Conn {
    fn new(id: u64, base: Instant) -> Conn {
        let conn = Conn {
            id,
            base,
            last_io: AtomicU64::new(0),
            head_since: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            handling: AtomicUsize::new(0),
            order: AtomicU8::new(NONE),
            wake: Notify::new(),
        };
        conn.touch();
        conn
    }

    fn now(&self) -> u64 {
        self.base.elapsed().as_millis() as u64
    }

    fn touch(&self) {
        self.last_io.store(self.now(), Relaxed);
    }

    fn on_read(&self, n: usize) {
        if n == 0 {
            return;
        }
        let now = self.now();
        self.last_io.store(now, Relaxed);
        if self.in_flight.load(Relaxed) == 0 && self.head_since.load(Relaxed) == 0 {
            self.head_since.store(now + 1, Relaxed);
            self.wake.notify_one();
        }
    }

    /// No request in flight: idle, or its head still incomplete.
    fn evictable(&self) -> bool {
        self.in_flight.load(Relaxed) == 0
    }

    fn order(&self, order: u8) {
        self.order.store(order, Relaxed);
        self.wake.notify_one();
    }

    /// When to look again, or why the connection must close now.
    fn check(&self, limits: &Limits, now: u64) -> Result<u64, CutReason> {
        let idle = limits.idle_timeout.as_millis() as u64;
        if self.handling.load(Relaxed) > 0 {
            // The handler's own limits apply; its end wakes the watchdog.
            return Ok(now + idle);
        }
        let idle_end = self.last_io.load(Relaxed) + idle;
        let head = self.head_since.load(Relaxed);
        let head_end = if head == 0 {
            u64::MAX
        } else {
            head - 1 + limits.header_timeout.as_millis() as u64
        };
        if now >= head_end {
            Err(CutReason::HeaderTimeout)
        } else if now >= idle_end {
            Err(CutReason::IdleTimeout)
        } else {
            Ok(idle_end.min(head_end))
        }
    }
}

/// Serves one connection until it ends, its watchdog closes it, or it is ordered to close.
async fn connection(
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    stream: TcpStream,
    permit: OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(Tracked {
        inner: stream,
        conn: conn.clone(),
    });
    let (app, c) = (shared.app.clone(), conn.clone());
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let handling = Handling::begin(c.clone());
        let app = app.clone();
        async move {
            let response = match app.oneshot(req).await {
                Ok(r) => r,
                Err(never) => match never {},
            };
            let in_flight = handling.done();
            Ok::<_, Infallible>(response.map(|inner| CountedBody {
                inner,
                _in_flight: in_flight,
            }))
        }
    });
    let http = hyper::server::conn::http1::Builder::new()
        .header_read_timeout(None)
        .max_buf_size(MAX_BUF)
        .serve_connection(io, service);
    tokio::pin!(http);
    let mut draining = false;
    let cut = loop {
        match conn.order.load(Relaxed) {
            EVICT if conn.evictable() => break Some(CutReason::Evicted),
            // A request arrived since the order: it is no longer a fit victim.
            EVICT => conn.order.store(NONE, Relaxed),
            // Idle or half-sent: nothing to finish.
            SHUTDOWN if conn.evictable() => break None,
            SHUTDOWN if !draining => {
                draining = true;
                http.as_mut().graceful_shutdown();
            }
            _ => {}
        }
        let next = match conn.check(&shared.limits, conn.now()) {
            Ok(next) => next,
            Err(reason) => break Some(reason),
        };
        tokio::select! {
            r = http.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                break None;
            }
            _ = tokio::time::sleep_until(conn.base + Duration::from_millis(next)) => {}
            _ = conn.wake.notified() => {}
        }
    };
    if let Some(reason) = cut {
        tracing::debug!(reason = reason.as_str(), "closing a connection");
        shared.cut(reason);
    }
    shared.conns.lock().unwrap().remove(&conn.id);
    shared.state.metrics.connections_open.dec();
    drop(permit);
}

/// The socket, telling its [`Conn`] when bytes move.
struct Tracked {
    inner: TcpStream,
    conn: Arc<Conn>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = r {
            this.conn.on_read(buf.filled().len() - before);
        }
        r
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            if n > 0 {
                this.conn.touch();
            }
        }
        r
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = r {
            if n > 0 {
                this.conn.touch();
            }
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// A request whose handler is at work; becomes [`InFlight`] when the handler answers.
struct Handling(Option<Arc<Conn>>);

impl Handling {
    fn begin(conn: Arc<Conn>) -> Handling {
        conn.in_flight.fetch_add(1, Relaxed);
        conn.handling.fetch_add(1, Relaxed);
        conn.head_since.store(0, Relaxed);
        conn.touch();
        Handling(Some(conn))
    }

    fn done(mut self) -> InFlight {
        let conn = self.0.take().expect("a request is done once");
        conn.handling.fetch_sub(1, Relaxed);
        conn.touch();
        conn.wake.notify_one();
        InFlight(conn)
    }
}

impl Drop for Handling {
    /// The handler was dropped unfinished (hyper dropped the connection).
    fn drop(&mut self) {
        if let Some(conn) = self.0.take() {
            conn.handling.fetch_sub(1, Relaxed);
            drop(InFlight(conn));
        }
    }
}

/// A request in flight, until hyper drops its response body.
struct InFlight(Arc<Conn>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Relaxed);
        self.0.touch();
    }
}

/// A response body that keeps its request in flight while hyper sends it.
struct CountedBody {
    inner: Body,
    _in_flight: InFlight,
}

impl HttpBody for CountedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_stays_below_the_descriptor_limit() {
        let cap = |wanted, nofile| cap_under(wanted, nofile).map(|c| c.cap);
        assert_eq!(cap(1024, Some(256)), Ok(192));
        assert_eq!(cap(100, Some(256)), Ok(100));
        assert_eq!(cap(1024, None), Ok(1024));
        assert_eq!(
            cap(1024, Some(64)),
            Err(CapError::TooFewDescriptors { nofile: 64 })
        );
    }

    fn limits() -> Limits {
        Limits {
            max_connections: 8,
            header_timeout: Duration::from_millis(100),
            idle_timeout: Duration::from_millis(1000),
            shutdown_grace: Duration::from_millis(1000),
        }
    }

    #[test]
    fn the_watchdog_times_heads_from_their_first_byte_and_idleness_from_the_last() {
        let base = Instant::now();
        let c = Arc::new(Conn::new(1, base));
        c.last_io.store(0, Relaxed);
        let l = limits();
        // Silent: the idle limit.
        assert_eq!(c.check(&l, 10), Ok(1000));
        assert_eq!(c.check(&l, 1000), Err(CutReason::IdleTimeout));
        // A head that began at 500 must end by 600.
        c.last_io.store(500, Relaxed);
        c.head_since.store(501, Relaxed);
        assert_eq!(c.check(&l, 550), Ok(600));
        assert_eq!(c.check(&l, 600), Err(CutReason::HeaderTimeout));
        // Its handler at work: no limit of ours applies; answered: idle from then.
        let h = Handling::begin(c.clone());
        assert_eq!(c.head_since.load(Relaxed), 0);
        assert!(!c.evictable());
        assert!(c.check(&l, 5000).is_ok());
        let f = h.done();
        let t = c.last_io.load(Relaxed);
        assert_eq!(c.check(&l, t), Ok(t + 1000));
        assert!(!c.evictable());
        drop(f);
        assert!(c.evictable());
        assert_eq!(c.in_flight.load(Relaxed), 0);
        // A handler dropped unfinished leaves nothing in flight.
        drop(Handling::begin(c.clone()));
        assert_eq!(
            (c.in_flight.load(Relaxed), c.handling.load(Relaxed)),
            (0, 0)
        );
    }
}
