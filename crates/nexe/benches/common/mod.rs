//! What the nexe benches share: their arguments (`N [FILE...]`), reading a corpus file,
//! and the closing line of totals.

use std::path::PathBuf;
use std::time::Duration;

/// `N [FILE...]` from the command line (cargo's `--bench` and other flags skipped): N
/// (`default_n` when absent, at least 1) and the files, `corpus` (names in the nexe
/// corpus, $PEXE2WASM_NEXE_CORPUS) when none is given.
pub fn args(default_n: usize, corpus: &[&str]) -> (usize, Vec<PathBuf>) {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let n = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(default_n)
        .max(1);
    let files = if args.len() > 1 {
        args[1..].iter().map(Into::into).collect()
    } else {
        let dir = pexe2wasm_testkit::corpus::nexe_corpus_dir();
        corpus.iter().map(|f| dir.join(f)).collect()
    };
    (n, files)
}

/// The file's bytes, or `None` after saying it was skipped.
pub fn read(path: &std::path::Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok();
    if bytes.is_none() {
        eprintln!(
            "SKIPPED: {} not found; set PEXE2WASM_NEXE_CORPUS",
            path.display()
        );
    }
    bytes
}

/// Code measured and the mean time it took, over every file.
#[derive(Default)]
pub struct Totals {
    code: u64,
    time: Duration,
}

impl Totals {
    pub fn add(&mut self, code: u64, mean: Duration) {
        self.code += code;
        self.time += mean;
    }

    /// `all: X MB of code, Y MB/s (mean, WHAT)`, with `decimals` digits of MB/s.
    pub fn print(&self, decimals: usize, what: &str) {
        if self.time > Duration::ZERO {
            println!(
                "all: {:.2} MB of code, {:.decimals$} MB/s (mean, {what})",
                self.code as f64 / 1e6,
                self.code as f64 / 1e6 / self.time.as_secs_f64()
            );
        }
    }
}
