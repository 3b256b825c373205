//! `pexe2wasm run` with Pepper 2D graphics and input events: the real path tracer draws
//! frames (`--frames`), and `--events` files are checked before the app starts and
//! replayed to it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pexe2wasm_testkit::corpus::{self as common, Scratch};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
}

/// A decoded frame: width, height, RGBA bytes.
fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap();
    let mut dec = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = vec![0; dec.output_buffer_size().unwrap()];
    let info = dec.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba, "{}", path.display());
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// The PNG files in `dir`, sorted (none when it does not exist yet).
fn frames(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".png"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn path_tracer_draws_frames_that_change() {
    let Some(_) = common::real_pexe("path-tracer.pexe") else {
        return;
    };
    let pexe = common::real_corpus_dir().join("path-tracer.pexe");
    let out = Scratch::new("path-tracer");
    // It renders its scene (450 x 337, of which a 64 x 48 view shows the top left corner)
    // forever, one frame a pass, a pass taking seconds: run until two frames are out,
    // then end the input; the instance ends half a second later.
    let mut child = bin()
        .args(["run", &pexe.display().to_string(), "--size", "64x48"])
        .args(["--frames", &out.arg("frames"), "--timeout", "0.5"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let start = Instant::now();
    let dir = out.join("frames");
    while start.elapsed() < Duration::from_secs(60) {
        if frames(&dir).len() >= 2 || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let names = frames(&dir);
    assert!(
        names.len() >= 2,
        "{names:?} after {:?}\n{stderr}",
        start.elapsed()
    );
    assert_eq!(names[0], "frame-00000.png");
    let first = decode(&dir.join(&names[0]));
    let last = decode(&dir.join(names.last().unwrap()));
    for (w, h, px) in [&first, &last] {
        assert_eq!((*w, *h), (64, 48));
        // Not one colour: a rendered, noisy sky.
        assert!(px.chunks_exact(4).any(|p| p != &px[..4]));
        // The context is always opaque.
        assert!(px.chunks_exact(4).all(|p| p[3] == 255));
    }
    assert_ne!(first.2, last.2, "a later pass changes the picture");
    // It posts its pass counter with each frame it paints.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(stdout.lines().next(), Some("1"), "{stdout}");
    assert!(!stderr.contains("Unable to bind 2d context"), "{stderr}");
}

/// The small Pepper plugin of the corpus (messages only), for the events file checks.
fn small_plugin() -> Option<std::path::PathBuf> {
    common::real_pexe("lpdevs-part2.pexe")?;
    Some(common::real_corpus_dir().join("lpdevs-part2.pexe"))
}

#[test]
fn a_bad_events_file_is_reported_with_its_line_before_the_app_starts() {
    let Some(pexe) = small_plugin() else { return };
    let dir = Scratch::new("bad-events");
    dir.put(
        "ev.jsonl",
        b"{\"at_ms\": 0, \"type\": \"mousedown\", \"x\": 1, \"y\": 2}\n{\"at_ms\": 5, \"type\": \"mousedown\", \"button\": \"fourth\"}\n",
    );
    let o = bin()
        .args([
            "run",
            &pexe.display().to_string(),
            "--events",
            &dir.arg("ev.jsonl"),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(o.stdout.is_empty());
    let line = stderr.lines().next().unwrap_or_default();
    assert!(line.starts_with("error: "), "{stderr}");
    assert!(
        line.contains("--events ")
            && line.contains("ev.jsonl: line 2: \"button\": unknown button \"fourth\""),
        "{stderr}"
    );
    // A file that does not exist.
    let o = bin()
        .args([
            "run",
            &pexe.display().to_string(),
            "--events",
            &dir.arg("none.jsonl"),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("none.jsonl"), "{stderr}");
}

#[test]
fn events_wait_as_pending_work_and_are_dropped_for_an_app_that_did_not_ask() {
    let Some(pexe) = small_plugin() else { return };
    let dir = Scratch::new("events");
    dir.put(
        "ev.jsonl",
        b"{\"at_ms\": 400, \"type\": \"mousedown\", \"x\": 1, \"y\": 2}\n{\"at_ms\": 450, \"type\": \"keydown\", \"key_code\": 65}\n",
    );
    let start = Instant::now();
    let mut child = bin()
        .args([
            "run",
            &pexe.display().to_string(),
            "--events",
            &dir.arg("ev.jsonl"),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"hello\n").unwrap();
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello from NaCl\n");
    // The instance lived until the last event was due.
    assert!(start.elapsed() >= Duration::from_millis(450));
    // The app never requested input events: Chrome would not send them either.
    assert!(
        stderr.contains("--events: mouse events are dropped until the app requests them"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--events: keyboard events are dropped"),
        "{stderr}"
    );
}
