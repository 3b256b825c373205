//! `pexe2wasm run --net loopback` with the real WebSocket plugins of the corpus,
//! ds923y-compress.pexe and ds923y-decompress.pexe, against a loopback WebSocket server
//! made here that stands in for theirs (a Java servlet at ws://localhost:8081/prj2/...).
//!
//! What the pexes do (their strings and runs; the source is in their repository):
//! * compress: on a string message, connects to `ws://localhost:8081/prj2/websocket/b`,
//!   posts "compressing", LZO1X-1-compresses the message, posts "done compressing",
//!   sends an ArrayBuffer of the compressed size, and posts the server's reply.
//!   Its code copies the bytes the wrong way round (`memcpy(compressed, buffer, len)`),
//!   so what it sends is the right size and all zeros: no server could get the compressed
//!   bytes from it.
//! * decompress: opens 75 sockets to `ws://localhost:8081/prj2/websocket/a` when created;
//!   on a string message (a file name) a thread of its own sends the name as an
//!   ArrayBuffer on one of them, waits (blocking callback) for the server's ArrayBuffer,
//!   LZO1X-decompresses it and posts "NAME:OK:TEXT" (or "NAME:ERROR:").
//!
//! The URL is hard-coded, so the tests point it at the server's free port with
//! `--url-map ws://localhost:8081/=ws://127.0.0.1:PORT/`.
//!
//! The round trip: a message goes into compress, which uploads its compressed size and
//! posts the name the server gave the upload; the name goes into decompress, which gets
//! the file back and posts the message. Because compress uploads zeros, the server's file
//! holds the message's LZO1X stream made by this test (`lzo1x_literals`), checked first to
//! be exactly as long as what compress uploaded: for a message without a repeated 3-byte
//! sequence LZO1X-1 emits one literal run, which is what `lzo1x_literals` writes.

use pexe2wasm_testkit::corpus as common;

use crate::cmd::text;
use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tungstenite::Message;

/// What the server saw and keeps.
#[derive(Default)]
pub(crate) struct Seen {
    /// Connections by path.
    pub(crate) connections: HashMap<String, usize>,
    /// Uploads (path /b), in order.
    pub(crate) uploads: Vec<Vec<u8>>,
    /// Files by name, served on path /a.
    pub(crate) files: HashMap<String, Vec<u8>>,
}

/// One connection: /b stores each binary message as `upload-N.lzo` and answers the name;
/// /a answers a file name (binary or text) with the file (binary). At most 100 messages,
/// and the connection ends after 60 s without one.
// The handshake callback's error type is tungstenite's.
#[allow(clippy::result_large_err)]
fn serve(stream: TcpStream, seen: Arc<Mutex<Seen>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let mut path = String::new();
    let callback = |req: &tungstenite::handshake::server::Request, resp| {
        path = req.uri().path().to_string();
        Ok(resp)
    };
    let Ok(mut ws) = tungstenite::accept_hdr(stream, callback) else {
        return;
    };
    *seen
        .lock()
        .unwrap()
        .connections
        .entry(path.clone())
        .or_default() += 1;
    for _ in 0..100 {
        let Ok(m) = ws.read() else { return };
        let reply = match (path.as_str(), m) {
            ("/prj2/websocket/b", Message::Binary(b)) => {
                let mut s = seen.lock().unwrap();
                let name = format!("upload-{}.lzo", s.uploads.len());
                s.uploads.push(b.to_vec());
                s.files.insert(name.clone(), b.to_vec());
                Message::text(name)
            }
            ("/prj2/websocket/a", Message::Binary(b)) => {
                let name = String::from_utf8_lossy(&b).into_owned();
                match seen.lock().unwrap().files.get(&name) {
                    Some(f) => Message::binary(f.clone()),
                    None => Message::text(format!("no file {name}")),
                }
            }
            _ => continue,
        };
        if ws.send(reply).is_err() {
            return;
        }
    }
}

/// Starts the server on a free loopback port; it takes at most 200 connections.
pub(crate) fn start_server() -> (u16, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(200) {
            let Ok(stream) = stream else { continue };
            let s = s.clone();
            std::thread::spawn(move || serve(stream, s));
        }
    });
    (port, seen)
}

/// The LZO1X stream of `data` as one literal run and the end marker: what LZO1X-1 makes
/// of data in which it finds no match.
pub(crate) fn lzo1x_literals(data: &[u8]) -> Vec<u8> {
    let n = data.len();
    let mut out = Vec::new();
    if n == 0 {
    } else if n <= 238 {
        out.push(17 + n as u8);
    } else {
        // A run of 18 + 255 * zeros + last bytes, last in 1..=255.
        let mut rest = n - 18;
        out.push(0);
        while rest > 255 {
            rest -= 255;
            out.push(0);
        }
        out.push(rest as u8);
    }
    out.extend_from_slice(data);
    out.extend_from_slice(&[0x11, 0, 0]);
    out
}

pub(crate) fn has_repeated_trigram(data: &[u8]) -> bool {
    let mut seen = std::collections::HashSet::new();
    data.windows(3).any(|w| !seen.insert(w))
}

/// Runs a corpus pexe as a plugin with `args`, `input` on standard input.
fn run_plugin(pexe: &str, args: &[&str], input: &str) -> Output {
    let path = common::real_corpus_dir().join(pexe);
    let mut all = vec!["run", path.to_str().unwrap()];
    all.extend_from_slice(args);
    pexe2wasm_testkit::output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_pexe2wasm")).args(&all),
        input.as_bytes(),
    )
}

fn lines(b: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(b)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn pepper_ws_ds923y_compress_then_decompress_round_trips_a_message() {
    if common::real_pexe("ds923y-compress.pexe").is_none()
        || common::real_pexe("ds923y-decompress.pexe").is_none()
    {
        return;
    }
    let (port, seen) = start_server();
    let map = format!("ws://localhost:8081/=ws://127.0.0.1:{port}/");
    let net = ["--net", "loopback", "--url-map", &map, "--timeout", "60"];
    let message = "Pepper round trip: WebSockets on loopback, LZO1X by pexe2wasm, 0123456789!";
    assert!(!has_repeated_trigram(message.as_bytes()));

    let out = run_plugin("ds923y-compress.pexe", &net, &format!("{message}\n"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let name = "upload-0.lzo";
    assert_eq!(
        lines(&out.stdout),
        ["compressing", "done compressing", name],
        "{}",
        text(&out.stderr)
    );
    let upload = seen.lock().unwrap().uploads.clone();
    assert_eq!(upload.len(), 1);
    let lzo = lzo1x_literals(message.as_bytes());
    assert_eq!(
        upload[0].len(),
        lzo.len(),
        "compress uploads the LZO1X-1 size of the message"
    );
    assert!(
        upload[0].iter().all(|&b| b == 0),
        "compress's memcpy goes the wrong way, so its buffer stays as Create made it: zeros"
    );
    // The file the server keeps under that name: the message's LZO1X stream (see above).
    seen.lock().unwrap().files.insert(name.to_string(), lzo);

    let out = run_plugin("ds923y-decompress.pexe", &net, &format!("{name}\n"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        lines(&out.stdout),
        [format!("{name}:OK:{message}")],
        "{}",
        text(&out.stderr)
    );
    // Its 75 sockets (and perhaps one more) reached the server.
    let s = seen.lock().unwrap();
    assert!(s.connections.get("/prj2/websocket/a").copied().unwrap_or(0) >= 75);
    assert_eq!(s.connections.get("/prj2/websocket/b"), Some(&1));
}

#[test]
fn pepper_ws_without_net_loopback_the_websocket_is_refused() {
    if common::real_pexe("ds923y-compress.pexe").is_none() {
        return;
    }
    let (port, seen) = start_server();
    let map = format!("ws://localhost:8081/=ws://127.0.0.1:{port}/");
    let out = run_plugin(
        "ds923y-compress.pexe",
        &["--url-map", &map, "--timeout", "60"],
        "hello\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(
        err.matches("PPB_WebSocket: connection to ws://127.0.0.1")
            .count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("PP_ERROR_NOACCESS") && err.contains("without --net loopback"),
        "{err}"
    );
    // The app goes on regardless (it ignores its connect's result), but nothing is sent.
    let out_lines = lines(&out.stdout);
    assert_eq!(out_lines[..2], ["compressing", "done compressing"], "{err}");
    assert!(seen.lock().unwrap().connections.is_empty());
}

/// ds923y-compress run with `--net loopback` and its server mapped to `target`: what it
/// said on stderr and its stdout lines (it ignores its connect's result and goes on).
fn ds923y_mapped_to(target: &str) -> Option<(String, Vec<String>)> {
    common::real_pexe("ds923y-compress.pexe")?;
    let map = format!("ws://localhost:8081/={target}");
    let args = ["--net", "loopback", "--url-map", &map, "--timeout", "60"];
    let out = run_plugin("ds923y-compress.pexe", &args, "hello\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    Some((text(&out.stderr), lines(&out.stdout)))
}

#[test]
fn pepper_ws_a_url_map_to_another_host_is_refused() {
    // 192.0.2.1 is TEST-NET-1: the host refuses it before any packet is sent.
    let Some((err, _)) = ds923y_mapped_to("ws://192.0.2.1:8081/") else {
        return;
    };
    assert!(
        err.contains("PPB_WebSocket: connection to ws://192.0.2.1:8081/prj2/websocket/b refused (PP_ERROR_NOACCESS): --net loopback allows loopback addresses only"),
        "{err}"
    );
}

#[test]
fn pepper_ws_a_port_browsers_block_is_refused_as_chrome_did() {
    // Port 9 (discard) is one of Fetch's bad ports: Chrome refused it with
    // PP_ERROR_BADARGUMENT before connecting, and so does the browser host.
    let Some((err, out)) = ds923y_mapped_to("ws://127.0.0.1:9/") else {
        return;
    };
    assert_eq!(
        err.matches("PPB_WebSocket: refused ws://127.0.0.1:9/prj2/websocket/")
            .count(),
        1,
        "said once, however many sockets the app opens: {err}"
    );
    assert!(
        err.contains("(PP_ERROR_BADARGUMENT): port 9 is one browsers block"),
        "{err}"
    );
    assert_eq!(out[..2], ["compressing", "done compressing"], "{err}");
}
