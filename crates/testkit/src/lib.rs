//! Test-only helpers shared by the workspace's test and benchmark crates.
//!
//! - [`corpus`]: where the real-pexe corpus lives and how a test behaves when it is
//!   missing (a failure under `CI=true`, a loud `SKIPPED:` line elsewhere), scratch dirs.
//! - [`fixtures`]: the generators behind `fixtures/semantics` (PNaClAsm text with the
//!   expected results computed alongside).
//! - [`counting_alloc`]: a counting global allocator for memory tests and benchmarks.
//! - [`measure`]: peak RSS, page faults, MB.
//! - [`http`]: a loopback HTTP server that records what it is asked.
//! - [`stdio_script`]: small pexes that write, read, exit and trap through the IRT.
//! - [`wasmtime_cli`]: the stock wasmtime CLI, or a loud skip.
pub mod corpus;
pub mod counting_alloc;
pub mod fixtures;
pub mod http;
pub mod measure;
pub mod stdio_script;
pub mod wasmtime_cli;

use std::path::PathBuf;

/// A deterministic pseudo-random sequence (xorshift64*), so generated cases and fixtures
/// never change and a failure names a reproducible case. The seed must not be 0.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// The repository's root directory (the workspace root).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A path below the repository's root, e.g. `repo_path("fixtures/hello.pexe")`.
pub fn repo_path(rel: &str) -> PathBuf {
    repo_root().join(rel)
}

/// `fixtures/hello.pnaclasm` with each `(from, to)` replaced once, for tests that need a
/// small variation of a known-good program. Panics when the text no longer holds a `from`,
/// so an edit cannot silently miss.
pub fn edited_hello(edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(repo_path("fixtures/hello.pnaclasm"))
        .expect("read fixtures/hello.pnaclasm");
    for (from, to) in edits {
        assert!(text.contains(from), "hello.pnaclasm no longer has {from:?}");
        text = text.replacen(from, to, 1);
    }
    text
}

/// hello with one more global of 5 GB of zeros, as PNaClAsm text: a valid pexe whose data
/// cannot fit a 32-bit wasm memory, which the converter reports as unsupported.
pub fn huge_global_hello() -> String {
    edited_hello(&[
        ("count 3;", "count 4;"),
        (
            "\n  }\n  valuesymtab {",
            "\n    var @g3, align 1, zerofill 5000000000;\n  }\n  valuesymtab {",
        ),
    ])
}

/// Runs `cmd` with `input` on its standard input (then closed) and its standard output
/// and error captured: how the tests drive `pexe2wasm run` with a plugin's messages.
pub fn output_with_stdin(cmd: &mut std::process::Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the command");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input)
        .expect("write the input");
    child.wait_with_output().expect("wait for the command")
}
