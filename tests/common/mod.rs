//! Shared helpers for integration tests: where the real-pexe corpus lives and how a test
//! behaves when it is missing (a failure under CI, a loud skip elsewhere).
#![allow(dead_code)]

use std::path::PathBuf;

/// Directory of the real pexes: `$PEXE2WASM_REAL_CORPUS`, else `../shared/fixtures/real`
/// relative to the repository root.
pub fn real_corpus_dir() -> PathBuf {
    if let Ok(p) = std::env::var("PEXE2WASM_REAL_CORPUS") {
        return PathBuf::from(p);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/real")
}

/// Reads one real pexe. Returns `None` (after printing a clear SKIPPED line) when the corpus
/// is absent outside CI; panics when it is absent under CI (`CI=true`).
pub fn real_pexe(name: &str) -> Option<Vec<u8>> {
    let path = real_corpus_dir().join(name);
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) => {
            if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
                panic!(
                    "real corpus file {} is missing under CI: {e}",
                    path.display()
                );
            }
            eprintln!(
                "SKIPPED: real corpus file {} not found ({e}); set PEXE2WASM_REAL_CORPUS",
                path.display()
            );
            None
        }
    }
}

/// The well-formed real pexes that cannot run: no `void _start(i32)`.
#[allow(dead_code)]
pub const NOT_RUNNABLE: &[&str] = &["binji-bitcast.pexe", "pnacl-llvm-array-of-lit.pexe"];

/// The 30 well-formed real pexes (every file except the binji-regress-* ones).
pub const WELL_FORMED: &[&str] = &[
    "astar-star.pexe",
    "binji-binarytrees.pexe",
    "binji-bitcast.pexe",
    "binji-dedupe_incoming.pexe",
    "binji-fannkuchredux.pexe",
    "binji-fasta.pexe",
    "binji-main.pexe",
    "binji-mandelbrot.pexe",
    "binji-meteor.pexe",
    "binji-nbody.pexe",
    "binji-printf.pexe",
    "binji-puts.pexe",
    "binji-sem.pexe",
    "binji-setjmp.pexe",
    "binji-spectralnorm.pexe",
    "binji-start.pexe",
    "binji-thread.pexe",
    "bp2008-pnacl_player.pexe",
    "cptaffe-hello_tutorial.pexe",
    "ds923y-compress.pexe",
    "ds923y-decompress.pexe",
    "glbench27.pexe",
    "lpdevs-part2.pexe",
    "optionsplayers-hello_tutorial.pexe",
    "path-tracer.pexe",
    "pnacl-llvm-array-of-lit.pexe",
    "shhnjk-url_loader.pexe",
    "stockfish-170317.pexe",
    "supernet-iguana.pexe",
    "webpenc.pexe",
];

/// The fuzzer-found malformed pexes from pnacl.c's regression suite.
pub const MALFORMED: &[&str] = &[
    "binji-regress-1-malformed.pexe",
    "binji-regress-2-malformed.pexe",
    "binji-regress-3-malformed.pexe",
    "binji-regress-4-malformed.pexe",
    "binji-regress-5-malformed.pexe",
    "binji-regress-6-malformed.pexe",
];
