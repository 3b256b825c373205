//! Uploads the way a bad network or a bad client sends them: drip-fed bodies (cut off by
//! the body time limit with 408 while other requests go on), a slow upload that still
//! arrives in time, broken multipart bodies, graceful shutdown with a request in flight,
//! and uploads beyond the body-memory budget (refused before their bodies are read).

use crate::common::{fixture, validate_wasm, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Sends a POST's head by hand; the body follows with `drip`.
fn open_post(s: &Server, path: &str, content_type: &str, len: usize) -> TcpStream {
    let mut t = TcpStream::connect(s.addr).unwrap();
    t.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        t,
        "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: {content_type}\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n",
        s.addr
    )
    .unwrap();
    t
}

/// Writes `data` in `pieces` pieces with `gap` between them; stops early (false) when the
/// server closed the connection.
fn drip(t: &mut TcpStream, data: &[u8], pieces: usize, gap: Duration) -> bool {
    let size = data.len().div_ceil(pieces);
    for chunk in data.chunks(size) {
        if t.write_all(chunk).and_then(|_| t.flush()).is_err() {
            return false;
        }
        std::thread::sleep(gap);
    }
    true
}

/// Reads a whole `Connection: close` response: (status, headers, body).
fn read_response(t: &mut TcpStream) -> (u16, String, Vec<u8>) {
    let mut raw = Vec::new();
    let _ = t.read_to_end(&mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head, raw[split + 4..].to_vec())
}

#[test]
fn a_drip_fed_upload_is_cut_off_with_408_and_others_are_served_meanwhile() {
    let s = Server::start(&["--body-timeout-ms", "1000"]);
    let pexe = fixture("hello.pexe");
    let start = Instant::now();
    let mut t = open_post(&s, "/v1/convert", "application/octet-stream", pexe.len());
    let addr = s.addr;
    // 1 byte every 100 ms would take minutes; the server gives up after 1 s.
    let dripper = std::thread::spawn(move || {
        drip(&mut t, &pexe[..30], 30, Duration::from_millis(100));
        read_response(&mut t)
    });
    // Meanwhile, health checks and a conversion are answered at once.
    std::thread::sleep(Duration::from_millis(200));
    let c = reqwest::blocking::Client::new();
    let t0 = Instant::now();
    assert_eq!(
        c.get(format!("http://{addr}/healthz"))
            .send()
            .unwrap()
            .status(),
        200
    );
    let r = c
        .post(format!("http://{addr}/v1/convert"))
        .header("content-type", "application/octet-stream")
        .body(fixture("semantics/bits.pexe"))
        .send()
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(t0.elapsed() < Duration::from_secs(5));
    let (status, head, body) = dripper.join().unwrap();
    assert_eq!(status, 408, "{head}");
    assert!(head
        .to_ascii_lowercase()
        .contains("content-type: application/problem+json"));
    let p: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(p["type"], "urn:pexe2wasm:problem:body-timeout");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
}

#[test]
fn a_slow_upload_within_the_time_limit_converts() {
    let s = Server::start(&["--body-timeout-ms", "10000"]);
    let pexe = fixture("hello.pexe");
    let mut t = open_post(&s, "/v1/convert", "application/octet-stream", pexe.len());
    assert!(drip(&mut t, &pexe, 8, Duration::from_millis(50)));
    let (status, head, body) = read_response(&mut t);
    assert_eq!(status, 200, "{head}");
    validate_wasm(&body);
}

#[test]
fn broken_multipart_bodies_are_400() {
    let s = Server::start(&[]);
    let c = reqwest::blocking::Client::new();
    let url = s.url("/v1/convert");
    // A boundary that never appears in the body.
    let r = c
        .post(&url)
        .header("content-type", "multipart/form-data; boundary=XYZ")
        .body("no parts here")
        .send()
        .unwrap();
    assert_eq!(r.status(), 400);
    // No boundary parameter at all.
    let r = c
        .post(&url)
        .header("content-type", "multipart/form-data")
        .body("x")
        .send()
        .unwrap();
    assert_eq!(r.status(), 400);
    // A form without a file field.
    let form = reqwest::blocking::multipart::Form::new().text("note", "no file");
    let r = c.post(&url).multipart(form).send().unwrap();
    assert_eq!(r.status(), 400);
    let p: serde_json::Value = r.json().unwrap();
    assert!(p["detail"].as_str().unwrap().contains("file"), "{p}");
    // A truncated multipart body (the closing boundary is missing).
    let body =
        b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pexe\"\r\n\r\nPEXE"
            .to_vec();
    let r = c
        .post(&url)
        .header("content-type", "multipart/form-data; boundary=B")
        .body(body)
        .send()
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(c.get(s.url("/healthz")).send().unwrap().status(), 200);
}

#[test]
fn sigterm_finishes_the_request_in_flight_then_exits() {
    let mut s = Server::start(&["--body-timeout-ms", "20000"]);
    let pexe = fixture("hello.pexe");
    let mut t = open_post(&s, "/v1/convert", "application/octet-stream", pexe.len());
    let half = pexe.len() / 2;
    assert!(drip(&mut t, &pexe[..half], 2, Duration::from_millis(50)));
    s.terminate();
    std::thread::sleep(Duration::from_millis(300));
    // Still running: a request is in flight.
    assert!(
        s.child.try_wait().unwrap().is_none(),
        "exited with a request in flight"
    );
    // New connections are no longer accepted.
    assert!(
        reqwest::blocking::Client::new()
            .get(s.url("/healthz"))
            .timeout(Duration::from_secs(2))
            .send()
            .is_err(),
        "accepted a new request after SIGTERM"
    );
    assert!(drip(&mut t, &pexe[half..], 2, Duration::from_millis(50)));
    let (status, head, body) = read_response(&mut t);
    assert_eq!(status, 200, "{head}");
    validate_wasm(&body);
    let exit = s
        .wait_exit(Duration::from_secs(10))
        .expect("server did not exit after SIGTERM");
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn an_oversize_chunked_upload_is_cut_off_with_413_while_streaming() {
    let s = Server::start(&["--max-body-bytes", "4096"]);
    let mut t = TcpStream::connect(s.addr).unwrap();
    write!(
        t,
        "POST /v1/inspect HTTP/1.1\r\nHost: {}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        s.addr
    )
    .unwrap();
    // 1000-byte chunks, no Content-Length: the server can only count. Stop sending once it
    // answers, so it never has unread bytes when it closes.
    t.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut first = [0u8; 1];
    let mut sent = 0;
    let answered = loop {
        assert!(sent <= 20_000, "no answer after {sent} bytes");
        write!(t, "3e8\r\n").unwrap();
        t.write_all(&[7u8; 1000]).unwrap();
        t.write_all(b"\r\n").unwrap();
        sent += 1000;
        match t.peek(&mut first) {
            Ok(n) if n > 0 => break sent,
            _ => {}
        }
    };
    assert!(answered > 4096, "answered after {answered} bytes");
    t.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let (status, head, body) = read_response(&mut t);
    assert_eq!(status, 413, "{head}");
    let p: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(p["type"], "urn:pexe2wasm:problem:too-large");
}

/// The server's virtual memory size in bytes (Linux: `VmSize` in /proc/PID/status).
#[cfg(target_os = "linux")]
fn vm_size(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmSize in {status}"));
    kb * 1024
}

#[cfg(target_os = "linux")]
#[test]
fn a_declared_content_length_reserves_no_memory() {
    // Each request declares 2 GiB (under a 4 GiB limit, within an 8 GiB body-memory
    // budget, so all four are admitted) and sends 4 bytes. A server that sized its buffer
    // from Content-Length would map 2 GiB per request: 8 GiB here.
    let s = Server::start(&[
        "--max-body-bytes",
        "4294967296",
        "--max-body-memory",
        "8GiB",
        "--body-timeout-ms",
        "30000",
    ]);
    // Warm up the connection path so thread stacks and arenas exist before measuring.
    let c = reqwest::blocking::Client::new();
    assert_eq!(c.get(s.url("/healthz")).send().unwrap().status(), 200);
    let before = vm_size(s.child.id());
    let conns: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut t = open_post(&s, "/v1/convert", "application/octet-stream", 2 << 30);
            t.write_all(b"PEXE").unwrap();
            t
        })
        .collect();
    // The handlers are now waiting for the rest of their bodies.
    std::thread::sleep(Duration::from_millis(1000));
    let after = vm_size(s.child.id());
    let grown = after.saturating_sub(before);
    assert!(
        grown < 512 << 20,
        "the server grew by {} MiB for 16 bytes received",
        grown >> 20
    );
    // The server still answers, and the stalled uploads are cut off by their connections.
    assert_eq!(c.get(s.url("/healthz")).send().unwrap().status(), 200);
    drop(conns);
}

/// Reads until the server closes `t` or `limit` passes: what arrived.
fn read_until_closed(t: &mut TcpStream, limit: Duration) -> String {
    t.set_read_timeout(Some(limit)).unwrap();
    let mut raw = Vec::new();
    let _ = t.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).into_owned()
}

/// A server taking bodies up to 1 MiB with 1.5 MiB of memory for all bodies at once,
/// each body's bytes due within `timeout_ms`.
fn budget_server(timeout_ms: &str) -> Server {
    Server::start(&[
        "--max-body-bytes",
        "1MiB",
        "--max-body-memory",
        "1536KiB",
        "--body-timeout-ms",
        timeout_ms,
    ])
}

fn upload_head(path: &str, len: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: {len}\r\n\r\n"
    )
}

#[test]
fn uploads_beyond_the_body_memory_budget_are_503_before_their_bodies_are_read() {
    let s = budget_server("1500");
    // 1 MiB + 512 KiB declared and stalled: the budget is full.
    let stalled: Vec<TcpStream> = [1 << 20, 512 << 10]
        .iter()
        .map(|&len| {
            let mut t = TcpStream::connect(s.addr).unwrap();
            t.write_all(upload_head("/v1/convert", len).as_bytes())
                .unwrap();
            t.write_all(b"PEXE").unwrap();
            t
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let c = reqwest::blocking::Client::new();
    let post = || {
        c.post(s.url("/v1/convert"))
            .header("content-type", "application/octet-stream")
            .body(fixture("hello.pexe"))
            .send()
            .unwrap()
    };
    let r = post();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "1");
    let p: serde_json::Value = r.json().unwrap();
    assert_eq!(p["type"], "urn:pexe2wasm:problem:body-memory-full");
    assert!(p["detail"].as_str().unwrap().contains("1.5 MiB"), "{p}");
    // The stalled uploads get 408 and give their budget back.
    for mut t in stalled {
        let got = read_until_closed(&mut t, Duration::from_secs(5));
        assert!(got.starts_with("HTTP/1.1 408"), "{got:?}");
    }
    assert_eq!(post().status(), 200);
    let m = c.get(s.url("/metrics")).send().unwrap().text().unwrap();
    assert!(
        m.lines().any(|l| l == "pexe2wasm_body_memory_bytes 0"),
        "{m}"
    );
    assert!(
        m.lines()
            .any(|l| l == "pexe2wasm_body_memory_rejections_total 1"),
        "{m}"
    );
}

#[test]
fn a_chunked_upload_is_charged_as_it_grows_and_refused_when_the_budget_runs_out() {
    let s = budget_server("3000");
    // 1 MiB declared and stalled leaves 512 KiB for a chunked body of 1 MiB, which
    // starts (it declares nothing) and is refused when its buffer must grow past that.
    let mut stalled = TcpStream::connect(s.addr).unwrap();
    stalled
        .write_all(upload_head("/v1/convert", 1 << 20).as_bytes())
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut t = TcpStream::connect(s.addr).unwrap();
    t.write_all(b"POST /v1/inspect HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        .unwrap();
    t.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut sent = 0;
    let mut first = [0u8; 1];
    while sent < 1 << 20 {
        write!(t, "4000\r\n").unwrap();
        t.write_all(&[7u8; 0x4000]).unwrap();
        t.write_all(b"\r\n").unwrap();
        sent += 0x4000;
        if matches!(t.peek(&mut first), Ok(n) if n > 0) {
            break;
        }
    }
    assert!(
        sent > 512 << 10 && sent < 1 << 20,
        "answered after {sent} bytes"
    );
    let got = read_until_closed(&mut t, Duration::from_secs(5));
    assert!(got.starts_with("HTTP/1.1 503"), "{got:?}");
    assert!(got.contains("body-memory-full"), "{got:?}");
    drop(stalled);
}
