//! What the benchmarks share: their command line (`[ITERATIONS] [FILE]`), reading the input
//! pexe (SKIPPED outside CI when the real corpus is missing, an error under CI), MB and VmHWM.

use crate::corpus as common;
use std::path::PathBuf;

/// Peak resident set (VmHWM) in bytes, where /proc exists.
pub fn vm_hwm() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Minor page faults of this process so far (/proc/self/stat field 10), where /proc exists.
pub fn minor_faults() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &s[s.rfind(')')? + 1..];
    rest.split_whitespace().nth(7)?.parse().ok()
}

/// Bytes as MB (10^6 bytes).
pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// Parses `[ITERATIONS] [FILE]` (cargo bench's own `--bench` and other dashed words are
/// ignored) and reads FILE, by default supernet-iguana.pexe from the real corpus. Returns
/// `None` after printing SKIPPED when the file is missing outside CI; exits 1 under CI and 2
/// on a usage error.
pub fn input(bench: &str, default_n: usize) -> Option<(usize, PathBuf, Vec<u8>)> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let n: usize = match args.first().map(|a| a.parse()) {
        None => default_n,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: cargo bench --bench {bench} -- [ITERATIONS] [FILE]");
            std::process::exit(2);
        }
    };
    let path: PathBuf = match args.get(1) {
        Some(p) => PathBuf::from(p),
        None => common::real_corpus_dir().join("supernet-iguana.pexe"),
    };
    match std::fs::read(&path) {
        Ok(d) => Some((n, path, d)),
        Err(e) => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                eprintln!("error: {}: {e}", path.display());
                std::process::exit(1);
            }
            eprintln!(
                "SKIPPED: {}: {e} (set PEXE2WASM_REAL_CORPUS or pass FILE)",
                path.display()
            );
            None
        }
    }
}
