//! `pexe2wasm run`: who owns the message PPP_Messaging.HandleMessage is given. Chrome's
//! proxy gave the app a reference of its own (the C++ wrapper takes it with
//! `Var(PASS_REF, var)` and releases it later), so an app may keep a message past the call
//! without AddRef, as bp2008's player queues its ArrayBuffers; the host must not release
//! it as well. The plugin (`fixtures/pepper/keep-message.pnaclasm`) keeps each message it
//! is given and posts back, then releases, the one it kept before: messages m1 … mN come
//! back as m1 … m(N-1), whole. A host that released them after HandleMessage freed each
//! kept message before it was posted back.

use crate::cmd::{run_assembled, text};
use std::process::Output;

use base64::Engine;

const KEEP: &str = include_str!("../../../../fixtures/pepper/keep-message.pnaclasm");

/// Runs the keep-message plugin with `args` and `input` on its standard input.
fn run_keep(args: &[&str], input: &str) -> Output {
    let o = run_assembled("keep-message", KEEP, "20", args, input.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    o
}

/// Checks that exactly `want` came back, and that no PostMessage was refused (a var freed
/// under the app is, with a console error).
#[track_caller]
fn came_back(o: &Output, want: &str) {
    assert_eq!(text(&o.stdout), want, "stderr: {}", text(&o.stderr));
    assert!(
        !text(&o.stderr).contains("PostMessage"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn handle_message_gives_the_app_its_reference_text_lines() {
    // Longer than any small-string optimisation, so a freed string cannot pass for it.
    let lines = [
        "one: the first message, kept by the plugin until the next one arrives",
        "two: the second message, which a host that releases it as well frees too early",
        "three: the last message, which the plugin still holds when the input ends",
    ];
    let o = run_keep(&[], &format!("{}\n", lines.join("\n")));
    came_back(&o, &format!("{}\n{}\n", lines[0], lines[1]));
}

#[test]
fn handle_message_gives_the_app_its_reference_json_lines() {
    // A string, an array buffer and a dictionary (with an array in it) are kept and come
    // back whole; the last line is still kept at the end.
    let bytes: Vec<u8> = (0..64u32).map(|i| (3 * i + 1) as u8).collect();
    let buffer = format!(
        r#"{{"$arraybuffer":"{}"}}"#,
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    );
    let string =
        r#""the first message, longer than any small-string optimisation: 0123456789abcdef""#;
    let dict = r#"{"kept":"a dictionary's value, long enough to live on the heap as well","list":[1,"two"],"n":7}"#;
    let last = r#""the last message, which the plugin still holds when the input ends""#;
    let o = run_keep(
        &["--messages", "json"],
        &format!("{string}\n{buffer}\n{dict}\n{last}\n"),
    );
    came_back(&o, &format!("{string}\n{buffer}\n{dict}\n"));
}
