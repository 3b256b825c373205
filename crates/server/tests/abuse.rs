//! The service under abuse, tried as a hostile client on loopback would (the issue "three
//! denial-of-service holes"): the real server under a descriptor limit of 256, with its
//! default sizes and short timeouts, then
//! 1. 300 TCP connections that send nothing, a request head that never ends and one that
//!    drips a byte at a time;
//! 2. 60 uploads of the largest size (64 MiB) that stall before their last byte, and 100
//!    that only declare that size;
//! 3. SIGTERM with idle, half-sent and stalled connections open and a request in flight.
//!
//! Throughout 1 and 2 a fresh connection asks `/healthz` every 20 ms: every answer must
//! be a 200 within 100 ms. The server must never run out of descriptors, its peak RSS
//! (VmHWM) must stay under 256 MB, and it must exit within its grace period.
//!
//! A test binary of its own: cargo runs test binaries one after another, so the latency
//! measured here is not the other service tests' load. It is the machine's, though: on
//! 2 cores kept busy by other builds (load average 4 and more) a check now and then
//! takes over 100 ms (1 run in 16 at load average 4-5 while this was written; the
//! slowest check is 6-40 ms otherwise), and the failure message lists the slow ones. Its figures (printed with
//! `-- --nocapture`) are in docs/PERFORMANCE.md, "Service under abuse".
#![cfg(target_os = "linux")]

#[path = "it/common.rs"]
#[allow(dead_code, unused_imports)]
mod common;

use common::{fixture, Server};
use pexe2wasm_testkit::corpus::Scratch;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The server's descriptor limit (soft and hard), as `prlimit --nofile=256:256`.
const NOFILE: u64 = 256;
/// Every health check must be answered within this.
const HEALTH_LIMIT: Duration = Duration::from_millis(100);
/// The server's peak resident memory must stay under this.
const RSS_LIMIT: u64 = 256 << 20;
/// The default `--max-body-bytes`.
const MAX_BODY: usize = 64 << 20;
const HEADER_MS: u64 = 1000;
const IDLE_MS: u64 = 2000;
const BODY_MS: u64 = 3000;
const GRACE_MS: u64 = 2000;

#[test]
fn the_service_survives_idle_floods_slow_heads_stalled_uploads_and_stops_in_time() {
    let logs = Scratch::new("abuse");
    let log_path = logs.join("server.log");
    let mut cmd = Server::command(&[
        "--header-timeout-ms",
        &HEADER_MS.to_string(),
        "--idle-timeout-ms",
        &IDLE_MS.to_string(),
        "--body-timeout-ms",
        &BODY_MS.to_string(),
        "--shutdown-grace-ms",
        &GRACE_MS.to_string(),
    ]);
    cmd.env("PEXE2WASM_LOG", "warn")
        .stderr(std::fs::File::create(&log_path).unwrap());
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: NOFILE as libc::rlim_t,
                rlim_max: NOFILE as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let started = Instant::now();
    let mut s = Server::spawn(cmd);
    let (addr, pid) = (s.addr, s.child.id());
    let rss_at_start = vm(pid, "VmRSS:");
    let sampler = Sampler::start(pid);
    let prober = Prober::start(addr);

    // 1a. 300 connections that send nothing. The cap (256 - 64 = 192) keeps descriptors
    // free; each connection over it, the probes' included, takes an idle one's place.
    let t0 = Instant::now();
    let mut idle: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(addr).expect("connect"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let (status, _) = request(addr, "/v1/convert", Some(&fixture("hello.pexe")));
    assert_eq!(status, 200, "a conversion among 300 idle connections");
    let mut refused = 0;
    for t in &mut idle {
        let left =
            (t0 + Duration::from_millis(IDLE_MS + 1500)).saturating_duration_since(Instant::now());
        match closed_within(t, left.max(Duration::from_millis(1))) {
            Closed::Eof | Closed::Reset => {}
            Closed::Answered(head) => {
                assert!(head.starts_with("HTTP/1.1 503"), "{head}");
                refused += 1;
            }
            Closed::Open => panic!("an idle connection is still open after {:?}", t0.elapsed()),
        }
    }
    let idle_closed = t0.elapsed();
    drop(idle);

    // 1b. A head that never ends, and one that drips a byte every 100 ms (so it is never
    // idle): both closed by the header timeout.
    let t1 = Instant::now();
    let mut stuck = TcpStream::connect(addr).unwrap();
    stuck
        .write_all(b"POST /v1/convert HTTP/1.1\r\nHost: x\r\nX: a")
        .unwrap();
    let dripper = std::thread::spawn(move || {
        let mut t = TcpStream::connect(addr).unwrap();
        t.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Drip: ")
            .unwrap();
        let start = Instant::now();
        while t.write_all(b"a").is_ok() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(100));
        }
        start.elapsed()
    });
    let outcome = closed_within(&mut stuck, Duration::from_millis(HEADER_MS + 2000));
    let stuck_closed = t1.elapsed();
    assert!(
        matches!(outcome, Closed::Eof | Closed::Reset),
        "a head that never ends: {outcome:?}"
    );
    assert!(
        stuck_closed >= Duration::from_millis(HEADER_MS - 50)
            && stuck_closed < Duration::from_millis(HEADER_MS + 1000),
        "closed after {stuck_closed:?}"
    );
    let drip_closed = dripper.join().unwrap();
    assert!(
        drip_closed < Duration::from_millis(HEADER_MS + 1500),
        "a dripping head was closed after {drip_closed:?}"
    );

    // 2. 60 uploads of 64 MiB that stall before their last byte, then 100 that send only
    // their head. The 128 MiB body-memory budget admits two 64 MiB bodies; the others
    // are refused before their bodies are read, the admitted ones get 408. All 160 run
    // on one thread (async), so that the client's threads do not crowd out the probes.
    let t2 = Instant::now();
    let attack = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut uploads = tokio::task::JoinSet::new();
            for _ in 0..60 {
                uploads.spawn(stalled_upload(addr, MAX_BODY - 1));
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            for _ in 0..100 {
                uploads.spawn(stalled_upload(addr, 0));
            }
            uploads.join_all().await
        })
    });
    std::thread::sleep(Duration::from_millis(500));
    // Meanwhile a small conversion is answered at once: converted, or refused while the
    // stalled bodies hold the budget.
    let q = Instant::now();
    let (convert_status, body) = request(addr, "/v1/convert", Some(&fixture("hello.pexe")));
    let convert_during = q.elapsed();
    assert!(
        convert_status == 200 || (convert_status == 503 && body.contains("body-memory-full")),
        "{convert_status} {body}"
    );
    assert!(
        convert_during < Duration::from_secs(1),
        "{convert_during:?}"
    );
    let outcomes: Vec<Outcome> = attack.join().unwrap();
    let uploads_done = t2.elapsed();
    let count = |o: Outcome| outcomes.iter().filter(|&&x| x == o).count();
    let (timed_out, refused_503, reset) = (
        count(Outcome::Status(408)),
        count(Outcome::Status(503)),
        count(Outcome::Reset),
    );
    assert_eq!(
        timed_out + refused_503 + reset,
        160,
        "every upload gets 408 or 503 (or a reset after its 503): {outcomes:?}"
    );
    assert!(
        (1..=2).contains(&timed_out),
        "{timed_out} uploads were admitted (the budget holds 2)"
    );
    // The budget is given back, and so is the room for a conversion.
    let (_, metrics) = request(addr, "/metrics", None);
    assert!(
        metrics
            .lines()
            .any(|l| l == "pexe2wasm_body_memory_bytes 0"),
        "{metrics}"
    );
    let (status, _) = request(addr, "/v1/convert", Some(&fixture("hello.pexe")));
    assert_eq!(status, 200);
    let rss_after = vm(pid, "VmRSS:");
    let peak_rss = vm(pid, "VmHWM:");

    // 3. SIGTERM with 20 idle connections, a half-sent head, an upload that stalls, and
    // one that finishes after the signal.
    let probes = prober.stop();
    let mut idle: Vec<TcpStream> = (0..20).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let mut half_head = TcpStream::connect(addr).unwrap();
    half_head.write_all(b"GET /healthz HTTP/1.1\r\nHo").unwrap();
    let mut stalled = TcpStream::connect(addr).unwrap();
    write!(
        stalled,
        "POST /v1/inspect HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\nPEXE"
    )
    .unwrap();
    let pexe = fixture("hello.pexe");
    let mut finishing = TcpStream::connect(addr).unwrap();
    write!(
        finishing,
        "POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
        pexe.len()
    )
    .unwrap();
    finishing.write_all(&pexe[..pexe.len() / 2]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let t3 = Instant::now();
    s.terminate();
    for t in idle.iter_mut().chain([&mut half_head]) {
        let o = closed_within(t, Duration::from_millis(1000));
        assert!(matches!(o, Closed::Eof | Closed::Reset), "{o:?}");
    }
    let idle_closed_after_term = t3.elapsed();
    std::thread::sleep(Duration::from_millis(200));
    finishing.write_all(&pexe[pexe.len() / 2..]).unwrap();
    assert_eq!(
        outcome_of(&mut finishing, Duration::from_secs(5)),
        Outcome::Status(200),
        "the request in flight finishes"
    );
    let exit = s
        .wait_exit(Duration::from_millis(GRACE_MS + 3000))
        .expect("the server did not exit after SIGTERM");
    let exited_after = t3.elapsed();
    assert!(exit.success(), "{exit:?}");
    assert!(
        exited_after < Duration::from_millis(GRACE_MS + 1000),
        "exited {exited_after:?} after SIGTERM"
    );
    let stalled_outcome = closed_within(&mut stalled, Duration::from_millis(100));
    let (max_rss, max_fds) = sampler.stop();

    // The figures (docs/PERFORMANCE.md, "Service under abuse").
    let log = std::fs::read_to_string(&log_path).unwrap();
    let mut lat: Vec<Duration> = probes.iter().map(|p| p.took).collect();
    lat.sort();
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p).round() as usize];
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    eprintln!("abuse: descriptor limit {NOFILE}, timeouts header {HEADER_MS} ms, idle {IDLE_MS} ms, body {BODY_MS} ms, grace {GRACE_MS} ms");
    eprintln!(
        "abuse: 300 idle connections: all closed {idle_closed:.2?} after opening ({refused} answered 503)"
    );
    eprintln!(
        "abuse: a head that never ends closed after {stuck_closed:.2?}; a dripping one after {drip_closed:.2?}"
    );
    eprintln!(
        "abuse: 60 stalled 64 MiB uploads + 100 declared only: {timed_out} x 408, {refused_503} x 503, {reset} reset after their 503, all done in {uploads_done:.2?}; a conversion meanwhile answered {convert_status} in {convert_during:.2?}"
    );
    eprintln!(
        "abuse: server RSS {:.1} MiB at start, peak (VmHWM) {:.1} MiB (sampled max {:.1} MiB), {:.1} MiB after the 408s; most descriptors open {max_fds}",
        mib(rss_at_start),
        mib(peak_rss),
        mib(max_rss),
        mib(rss_after)
    );
    eprintln!(
        "abuse: /healthz x {} on fresh connections: p50 {:.2?}, p99 {:.2?}, max {:.2?}",
        lat.len(),
        pct(0.5),
        pct(0.99),
        lat[lat.len() - 1]
    );
    eprintln!(
        "abuse: SIGTERM: idle and half-sent connections closed within {idle_closed_after_term:.2?}, in-flight conversion answered 200, stalled upload {stalled_outcome:?}, exit {exited_after:.2?} after the signal (grace {GRACE_MS} ms); whole test {:.1?}",
        started.elapsed()
    );

    // The bounds.
    let failed: Vec<&Probe> = probes
        .iter()
        .filter(|p| p.status != Some(200) || p.took > HEALTH_LIMIT)
        .collect();
    let shown: Vec<String> = failed
        .iter()
        .take(10)
        .map(|p| {
            format!(
                "at {:.2?}: {:?} after {:.2?} {}",
                p.at,
                p.status,
                p.took,
                p.error.as_deref().unwrap_or("")
            )
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} health checks failed or took over {HEALTH_LIMIT:?}: {shown:#?}",
        failed.len(),
        probes.len(),
    );
    assert!(probes.len() > 100, "only {} health checks", probes.len());
    assert!(
        peak_rss < RSS_LIMIT,
        "peak RSS {:.1} MiB over {} MiB",
        mib(peak_rss),
        RSS_LIMIT >> 20
    );
    assert!(max_fds < NOFILE, "{max_fds} descriptors open");
    assert!(
        log.contains("--max-connections lowered"),
        "the cap was not lowered to the descriptor limit:\n{log}"
    );
    for bad in ["accept error", "Too many open files"] {
        assert!(!log.contains(bad), "{bad:?} in the server's log:\n{log}");
    }
    assert!(
        log.contains("grace period over"),
        "the stalled upload was not cut at the end of the grace period:\n{log}"
    );
}

/// How a connection the test holds ended.
#[derive(Debug)]
enum Closed {
    Eof,
    Reset,
    /// The server answered (the head of its answer) and closed.
    Answered(String),
    Open,
}

/// Waits up to `limit` for the server to close `t`.
fn closed_within(t: &mut TcpStream, limit: Duration) -> Closed {
    t.set_read_timeout(Some(limit)).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match t.read(&mut buf) {
            Ok(0) if raw.is_empty() => return Closed::Eof,
            Ok(0) => return Closed::Answered(String::from_utf8_lossy(&raw).into_owned()),
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Closed::Open
            }
            Err(_) if raw.is_empty() => return Closed::Reset,
            Err(_) => return Closed::Answered(String::from_utf8_lossy(&raw).into_owned()),
        }
    }
}

/// The answer to an upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Status(u16),
    /// The connection was reset before an answer could be read (the server answered
    /// and closed while the client was still sending).
    Reset,
    /// No answer in time.
    Silent,
}

fn outcome_of(t: &mut TcpStream, limit: Duration) -> Outcome {
    match closed_within(t, limit) {
        Closed::Answered(head) => status_of(&head).map_or(Outcome::Silent, Outcome::Status),
        Closed::Eof | Closed::Reset => Outcome::Reset,
        Closed::Open => Outcome::Silent,
    }
}

fn upload_head(len: usize) -> String {
    format!(
        "POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: {len}\r\n\r\n"
    )
}

/// Declares `MAX_BODY` bytes, sends `send` of them (until the server closes), then waits
/// for the answer.
async fn stalled_upload(addr: SocketAddr, send: usize) -> Outcome {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    static CHUNK: [u8; 64 << 10] = [0; 64 << 10];
    let mut t = tokio::net::TcpStream::connect(addr).await.unwrap();
    if t.write_all(upload_head(MAX_BODY).as_bytes()).await.is_err() {
        return Outcome::Reset;
    }
    // About 64 MiB a second: what is measured is the memory the uploads hold, not how
    // fast 2 shared cores copy bytes over loopback (a CPU flood is another attack).
    let mut sent = 0;
    while sent < send {
        let n = CHUNK.len().min(send - sent);
        if t.write_all(&CHUNK[..n]).await.is_err() {
            break;
        }
        sent += n;
        if sent % (1 << 20) == 0 {
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
    }
    let mut raw = Vec::new();
    let limit = Duration::from_millis(BODY_MS + 3000);
    match tokio::time::timeout(limit, t.read_to_end(&mut raw)).await {
        Err(_) => Outcome::Silent,
        Ok(_) if raw.is_empty() => Outcome::Reset,
        Ok(_) => status_of(&String::from_utf8_lossy(&raw)).map_or(Outcome::Silent, Outcome::Status),
    }
}

fn status_of(head: &str) -> Option<u16> {
    head.split(' ').nth(1).and_then(|s| s.parse().ok())
}

/// One request on a fresh connection: (status, body as text).
fn request(addr: SocketAddr, path: &str, body: Option<&[u8]>) -> (u16, String) {
    let mut t = TcpStream::connect(addr).unwrap();
    t.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    match body {
        Some(b) => {
            write!(
                t,
                "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                b.len()
            )
            .unwrap();
            t.write_all(b).unwrap();
        }
        None => write!(
            t,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap(),
    }
    let mut raw = Vec::new();
    t.read_to_end(&mut raw).expect("read the answer");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

#[derive(Debug)]
struct Probe {
    /// Since the prober started.
    at: Duration,
    took: Duration,
    status: Option<u16>,
    error: Option<String>,
}

/// Asks `/healthz` on a fresh connection every 20 ms until stopped.
struct Prober {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Vec<Probe>>,
}

impl Prober {
    fn start(addr: SocketAddr) -> Prober {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let start = Instant::now();
            let mut probes = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let at = start.elapsed();
                let t = Instant::now();
                let r = health(addr);
                probes.push(Probe {
                    at,
                    took: t.elapsed(),
                    status: r.as_ref().ok().copied(),
                    error: r.err(),
                });
                std::thread::sleep(Duration::from_millis(20));
            }
            probes
        });
        Prober { stop, handle }
    }

    fn stop(self) -> Vec<Probe> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap()
    }
}

fn health(addr: SocketAddr) -> Result<u16, String> {
    let mut t =
        TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| e.to_string())?;
    t.set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| e.to_string())?;
    t.write_all(b"GET /healthz HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    t.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&raw);
    text.split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status in {text:?}"))
}

/// A /proc/PID/status field in bytes (`VmRSS:`, `VmHWM:`); 0 once the process is gone.
fn vm(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().strip_suffix("kB"))
                .and_then(|v| v.trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Samples the server's RSS and open descriptors every 20 ms; their maxima.
struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<(u64, u64)>,
}

impl Sampler {
    fn start(pid: u32) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let (mut rss, mut fds) = (0, 0);
            while !flag.load(Ordering::Relaxed) {
                rss = rss.max(vm(pid, "VmRSS:"));
                if let Ok(d) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
                    fds = fds.max(d.count() as u64);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            (rss, fds)
        });
        Sampler { stop, handle }
    }

    fn stop(self) -> (u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap()
    }
}
