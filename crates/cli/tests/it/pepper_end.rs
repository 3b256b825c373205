//! `pexe2wasm run`: the end-of-input rule of the command-line Pepper host with a thread
//! that waits with a far deadline, as an engine's timer thread sleeps INT_MAX ms between
//! searches. A deadline more than a minute away counts as none (docs/PEPPER-CLI.md), so
//! the run ends once the input has, by the rule and not by `--timeout`. The plugin
//! (`fixtures/pepper/far-wait.pnaclasm`) starts that thread at its first message and
//! answers each message with 1 + the threads it had started before.

use crate::cmd::run_assembled;

const FAR_WAIT: &str = include_str!("../../../../fixtures/pepper/far-wait.pnaclasm");

#[test]
fn a_thread_waiting_until_a_far_deadline_does_not_keep_the_run_alive() {
    // The timeout is only a guard: the end must come from the rule, which says nothing.
    let o = run_assembled("far-wait", FAR_WAIT, "30", &[], b"1\n2\n");
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
