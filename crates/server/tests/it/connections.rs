//! Connection hygiene, one rule at a time (`crates/server/src/serve.rs`): the header
//! timeout counts from a head's first byte, the idle timeout keeps a kept-alive
//! connection open longer than that, and a connection over the cap takes an idle one's
//! place or, when every connection has a request in flight, gets a 503. The same under a
//! hostile load: tests/abuse.rs.

use crate::common::{fixture, Server};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Reads until the server closes `t` or `limit` passes: (what arrived, closed?).
fn read_until_closed(t: &mut TcpStream, limit: Duration) -> (String, bool) {
    t.set_read_timeout(Some(limit)).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = loop {
        match t.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                break false
            }
            Err(_) => break true,
        }
    };
    (String::from_utf8_lossy(&raw).into_owned(), closed)
}

/// Reads one response whose body has a Content-Length, leaving the connection open.
fn read_one_response(t: &mut TcpStream) -> String {
    t.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = t.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "closed mid-response: {:?}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .expect("a content-length");
            if body.len() >= len {
                return text;
            }
        }
    }
}

fn upload_head(path: &str, len: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: {len}\r\n\r\n"
    )
}

#[test]
fn a_head_gets_the_header_timeout_from_its_first_byte_and_a_kept_alive_connection_the_idle_timeout()
{
    let s = Server::start(&["--header-timeout-ms", "300", "--idle-timeout-ms", "1500"]);
    // A kept-alive connection after its first answer: open past the header timeout,
    // closed by the idle timeout.
    let mut kept = TcpStream::connect(s.addr).unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert!(read_one_response(&mut kept).starts_with("HTTP/1.1 200"));
    let answered = Instant::now();
    let (_, closed) = read_until_closed(&mut kept, Duration::from_millis(800));
    assert!(!closed, "closed {:?} after its answer", answered.elapsed());
    // Still usable.
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert!(read_one_response(&mut kept).starts_with("HTTP/1.1 200"));
    // Measured from when the client has read the answer, a little after the server's
    // last byte, which starts the idle time: the lower bound leaves room for that.
    let again = Instant::now();
    let (_, closed) = read_until_closed(&mut kept, Duration::from_secs(5));
    let idle = again.elapsed();
    assert!(closed);
    assert!(
        idle >= Duration::from_millis(1000) && idle < Duration::from_millis(2500),
        "{idle:?}"
    );
    // A head begun and not finished: closed by the header timeout, with no answer.
    let mut head = TcpStream::connect(s.addr).unwrap();
    head.write_all(b"GET /healthz HTTP/1.1\r\nHo").unwrap();
    let begun = Instant::now();
    let (got, closed) = read_until_closed(&mut head, Duration::from_secs(5));
    let took = begun.elapsed();
    assert!(closed && got.is_empty(), "{got:?}");
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_millis(1200),
        "{took:?}"
    );
    // The metrics count both.
    let m = reqwest::blocking::get(s.url("/metrics"))
        .unwrap()
        .text()
        .unwrap();
    for reason in ["idle_timeout", "header_timeout"] {
        let line = format!("pexe2wasm_connections_cut_total{{reason=\"{reason}\"}} ");
        assert!(
            m.lines()
                .any(|l| l.starts_with(&line) && !l.ends_with(" 0")),
            "no {line} in\n{m}"
        );
    }
}

#[test]
fn at_the_cap_a_new_connection_replaces_an_idle_one_or_gets_503() {
    let s = Server::start(&["--max-connections", "2", "--body-timeout-ms", "5000"]);
    // Two idle connections fill the cap; a health check takes the older one's place.
    let mut old = TcpStream::connect(s.addr).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let newer = TcpStream::connect(s.addr).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let c = reqwest::blocking::Client::new();
    assert_eq!(c.get(s.url("/healthz")).send().unwrap().status(), 200);
    let (_, closed) = read_until_closed(&mut old, Duration::from_millis(500));
    assert!(closed, "the oldest idle connection was not replaced");
    drop(newer);
    drop(c);
    std::thread::sleep(Duration::from_millis(100));
    // Two uploads in flight fill the cap: nothing can be replaced, so 503.
    let pexe = fixture("hello.pexe");
    let mut busy: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut t = TcpStream::connect(s.addr).unwrap();
            t.write_all(upload_head("/v1/inspect", pexe.len()).as_bytes())
                .unwrap();
            t.write_all(&pexe[..10]).unwrap();
            t
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut refused = TcpStream::connect(s.addr).unwrap();
    let _ = refused.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    let (got, closed) = read_until_closed(&mut refused, Duration::from_secs(2));
    assert!(closed, "not closed");
    assert!(got.starts_with("HTTP/1.1 503"), "{got:?}");
    assert!(got.contains("retry-after: 1"), "{got:?}");
    assert!(
        got.contains("urn:pexe2wasm:problem:too-many-connections"),
        "{got:?}"
    );
    // The uploads in flight were not disturbed.
    for t in &mut busy {
        t.write_all(&pexe[10..]).unwrap();
        let r = read_one_response(t);
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    }
}
