//! A small HTTP/1.1 server on loopback for tests of what programs fetch: it records every
//! request and answers each with what a handler says. It listens on `127.0.0.1` on a port
//! of the system's choosing, answers one request per connection (`Connection: close`),
//! gives up on a client after 10 seconds of silence, and stops when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A request as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The request target as sent (path and query).
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What to answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// 200 with `body` as `text/plain`.
    pub fn text(body: &str) -> Reply {
        Reply {
            status: 200,
            reason: "OK".into(),
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    /// `status` with `reason` and an empty body.
    pub fn status(status: u16, reason: &str) -> Reply {
        Reply {
            status,
            reason: reason.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A redirect (`status`, 3xx) to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        let mut r = Reply::status(status, "Found");
        r.headers.push(("Location".into(), location.into()));
        r
    }

    /// This reply with one more header.
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

struct Shared {
    requests: Mutex<Vec<Request>>,
    arrived: Condvar,
    stop: AtomicBool,
}

/// The server; dropping it stops it.
pub struct TestServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server that answers every request with `handler`'s reply.
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("the port");
        let shared = Arc::new(Shared {
            requests: Mutex::new(Vec::new()),
            arrived: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let handler: Arc<Handler> = Arc::new(handler);
        let s2 = shared.clone();
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s2.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (s3, h) = (s2.clone(), handler.clone());
                std::thread::spawn(move || serve(conn, &s3, &*h));
            }
        });
        TestServer {
            addr,
            shared,
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.addr.port())
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Waits until `n` requests have arrived or `timeout` passes; those received.
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Request> {
        let deadline = Instant::now() + timeout;
        let mut r = self.shared.requests.lock().unwrap();
        while r.len() < n {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            r = self
                .shared
                .arrived
                .wait_timeout(r, deadline - now)
                .unwrap()
                .0;
        }
        r.clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(conn: TcpStream, shared: &Shared, handler: &Handler) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = conn.set_write_timeout(Some(Duration::from_secs(10)));
    let Ok(mut out) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return;
    };
    let (method, target) = (method.to_string(), target.to_string());
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            return;
        }
        let h = h.trim_end_matches(['\r', '\n']);
        if h.is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            headers.push((n.trim().to_string(), v.trim().to_string()));
        }
        if headers.len() > 200 {
            return;
        }
    }
    let len = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0)
        .min(16 << 20);
    let mut body = vec![0; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let req = Request {
        method,
        target,
        headers,
        body,
    };
    let reply = handler(&req);
    {
        let mut r = shared.requests.lock().unwrap();
        r.push(req);
        shared.arrived.notify_all();
    }
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reply.reason);
    for (n, v) in &reply.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        reply.body.len()
    ));
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(&reply.body);
    let _ = out.flush();
}
