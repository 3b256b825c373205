//! Running the `pexe2wasm` binary under test, and reading what it printed: the helpers
//! every module of these tests shares.

use std::process::{Command, Output, Stdio};

/// `pexe2wasm ARGS` with no standard input, run to its end.
pub(crate) fn pexe2wasm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// What a run printed, as text.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
