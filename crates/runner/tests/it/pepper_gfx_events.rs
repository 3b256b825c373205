//! The `--events` replay end to end: a Pepper plugin written in PNaClAsm
//! (`fixtures/pepper/input-echo.pnaclasm`) requests mouse and keyboard events (and wheel
//! events, filtering) and posts one message per event it gets; the host replays a file to
//! it after DidChangeFocus, at the events' times, through PPP_InputEvent.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pexe2wasm::convert::{convert, ConvertOptions};
use pexe2wasm_runner::pepper::{CaptureSink, PepperConfig, PepperHost};
use pexe2wasm_runner::{Program, RunOptions};
use pexe2wasm_testkit::corpus::Scratch;

const ECHO: &str = include_str!("../../../../fixtures/pepper/input-echo.pnaclasm");

/// Runs the echo plugin with `events` as its events file; its messages and notes, and how
/// long the run took.
fn run_echo(events: &str) -> (Vec<String>, Vec<String>, Duration) {
    let pexe = pexe2wasm::text::assemble(ECHO).unwrap();
    let wasm = convert(&pexe, &ConvertOptions::default()).unwrap().wasm;
    let dir = Scratch::new("echo-events");
    dir.put("ev.jsonl", events.as_bytes());
    let sink = Arc::new(CaptureSink::default());
    let mut config = PepperConfig::new(Vec::new(), sink.clone());
    config.events = Some(dir.join("ev.jsonl"));
    config.timeout = Some(Duration::from_secs(20));
    let mut program = Program::new(&wasm, true).unwrap();
    program.add_host(PepperHost::new(config)).unwrap();
    let start = Instant::now();
    let outcome = program.run(&RunOptions::default()).unwrap();
    let took = start.elapsed();
    assert_eq!(outcome.exit_code, 0);
    let messages = sink.messages.lock().unwrap().clone();
    let notes = sink.notes.lock().unwrap().clone();
    (messages, notes, took)
}

#[test]
fn replayed_events_reach_handle_input_event_at_their_times() {
    let (messages, notes, took) = run_echo(
        r#"{"at_ms": 0, "type": "mousedown", "x": 10, "y": 20}
{"at_ms": 30, "type": "mousemove", "x": 3, "y": 4, "modifiers": ["shift"]}
{"at_ms": 60, "type": "keydown", "key_code": 65, "code": "KeyA"}
{"at_ms": 90, "type": "wheel", "dy": -5}
{"at_ms": 120, "type": "touchstart", "touches": [{"x": 1, "y": 1}]}
{"at_ms": 150, "type": "mouseup", "x": 7, "y": 8}
"#,
    );
    // type * 1000000 + x * 1000 + y + key code, in order; the touch event was not
    // requested, so it was dropped (with a note), as Chrome would.
    assert_eq!(
        messages,
        ["10020", "2003004", "7000065", "5000000", "1007008"]
    );
    assert_eq!(
        notes,
        ["--events: touch events are dropped until the app requests them (RequestInputEvents), as in Chrome"]
    );
    // The instance waited for the last event.
    assert!(took >= Duration::from_millis(150), "{took:?}");
}

#[test]
fn without_events_the_plugin_just_starts_and_ends() {
    let (messages, notes, _) = run_echo("# nothing\n\n");
    assert!(messages.is_empty(), "{messages:?}");
    assert!(notes.is_empty(), "{notes:?}");
}
