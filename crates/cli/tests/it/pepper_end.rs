//! `pexe2wasm run`: the end-of-input rule of the command-line Pepper host with a thread
//! that waits with a far deadline, as an engine's timer thread sleeps INT_MAX ms between
//! searches. A deadline more than a minute away counts as none (docs/PEPPER-CLI.md), so
//! the run ends once the input has, by the rule and not by `--timeout`. The plugin
//! (`fixtures/pepper/far-wait.pnaclasm`) starts that thread at its first message and
//! answers each message with 1 + the threads it had started before.

use std::process::Command;

use pexe2wasm_testkit::corpus::Scratch;

const FAR_WAIT: &str = include_str!("../../../../fixtures/pepper/far-wait.pnaclasm");

#[test]
fn a_thread_waiting_until_a_far_deadline_does_not_keep_the_run_alive() {
    let dir = Scratch::new("far-wait");
    dir.put(
        "far-wait.pexe",
        &pexe2wasm::text::assemble(FAR_WAIT).expect("the fixture assembles"),
    );
    let o = pexe2wasm_testkit::output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
            .arg("run")
            .arg(dir.join("far-wait.pexe"))
            // Only a guard: the end must come from the rule, which says nothing.
            .args(["--timeout", "30"]),
        b"1\n2\n",
    );
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{err}");
    // The thread started (the second answer counts it) and was still waiting at the end.
    assert_eq!(out, "1\n2\n", "{err}");
    assert!(
        !err.contains("time limit after the end of input"),
        "the run was ended by --timeout, not by the end-of-input rule: {err}"
    );
}
