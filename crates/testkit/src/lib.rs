//! Test-only helpers shared by the workspace's test and benchmark crates.
//!
//! - [`corpus`]: where the real-pexe corpus lives and how a test behaves when it is
//!   missing (a failure under `CI=true`, a loud `SKIPPED:` line elsewhere), scratch dirs.
//! - [`fixtures`]: the generators behind `fixtures/semantics` (PNaClAsm text with the
//!   expected results computed alongside).
//! - [`counting_alloc`]: a counting global allocator for memory tests and benchmarks.
//! - [`measure`]: peak RSS, page faults, MB.
pub mod corpus;
pub mod counting_alloc;
pub mod fixtures;
pub mod measure;

use std::path::PathBuf;

/// The repository's root directory (the workspace root).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A path below the repository's root, e.g. `repo_path("fixtures/hello.pexe")`.
pub fn repo_path(rel: &str) -> PathBuf {
    repo_root().join(rel)
}
