//! The stock wasmtime CLI, for tests that run converted modules as plain WASI commands.
//!
//! The `wasmtime` binary (48.x; `scripts/install-deps.sh` installs it) is looked up on
//! PATH, then in `$CARGO_HOME/bin` (default `~/.cargo/bin`). When it is missing, tests
//! print `SKIPPED` and pass, except under `CI=true`, where they fail.

use std::path::PathBuf;
use std::process::Command;

/// The wasmtime CLI: the first candidate (PATH, then `$CARGO_HOME/bin`) whose version is
/// 48.x, else the first that answers `--version` at all.
pub fn find() -> Option<PathBuf> {
    let mut candidates = vec![PathBuf::from("wasmtime")];
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(h) = cargo_home {
        candidates.push(h.join("bin").join("wasmtime"));
    }
    let mut any = None;
    for c in candidates {
        let Ok(out) = Command::new(&c).arg("--version").output() else {
            continue;
        };
        if !out.status.success() {
            continue;
        }
        let version = String::from_utf8_lossy(&out.stdout).into_owned();
        if version.starts_with("wasmtime 48.") {
            return Some(c);
        }
        eprintln!("note: {} is {}, not 48.x", c.display(), version.trim());
        any.get_or_insert(c);
    }
    any
}

/// The wasmtime binary, or `None` after printing SKIPPED (panics under `CI=true`).
pub fn or_skip() -> Option<PathBuf> {
    match find() {
        Some(w) => Some(w),
        None if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("the wasmtime CLI is missing under CI; scripts/install-deps.sh installs it")
        }
        None => {
            eprintln!(
                "SKIPPED: the wasmtime CLI is not installed (scripts/install-deps.sh installs it)"
            );
            None
        }
    }
}
