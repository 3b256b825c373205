//! The committed fixtures are what their sources make: every `fixtures/*.pnaclasm` and
//! `fixtures/semantics/*.pnaclasm` assembles (with our assembler) to the `.pexe` beside it,
//! and every semantics text is what `crates/testkit/src/fixtures` generates today. So neither can
//! drift from the description the tests compute their expectations from.
//!
//! `PEXE2WASM_UPDATE_FIXTURES=1 scripts/update-fixtures.sh` rewrites the
//! generated texts and all the pexes instead of comparing.

use pexe2wasm_testkit::fixtures as fixtures_gen;

use std::path::{Path, PathBuf};

use pexe2wasm::text::assemble;

fn root() -> PathBuf {
    pexe2wasm_testkit::repo_path("fixtures")
}

fn updating() -> bool {
    std::env::var("PEXE2WASM_UPDATE_FIXTURES").is_ok_and(|v| v == "1")
}

/// Compares `path` with `want`, or writes it when updating. Returns a problem, if any.
fn check_file(path: &Path, want: &[u8]) -> Option<String> {
    if updating() {
        if std::fs::read(path).ok().as_deref() != Some(want) {
            std::fs::write(path, want).unwrap();
            eprintln!("updated {}", path.display());
        }
        return None;
    }
    match std::fs::read(path) {
        Ok(got) if got == want => None,
        Ok(_) => Some(format!("{} is out of date", path.display())),
        Err(e) => Some(format!("{}: {e}", path.display())),
    }
}

fn assemble_file(path: &Path) -> Vec<u8> {
    let text = std::fs::read_to_string(path).unwrap();
    assemble(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const HINT: &str = "regenerate with PEXE2WASM_UPDATE_FIXTURES=1 scripts/update-fixtures.sh";

#[test]
fn hand_written_fixtures_match_their_pexes() {
    let mut problems = Vec::new();
    for name in ["hello", "factorial"] {
        let src = root().join(format!("{name}.pnaclasm"));
        let pexe = assemble_file(&src);
        problems.extend(check_file(&root().join(format!("{name}.pexe")), &pexe));
    }
    assert!(problems.is_empty(), "{}\n{HINT}", problems.join("\n"));
}

/// The directory `fixtures/NAME` (made when updating).
fn generated_dir(name: &str) -> PathBuf {
    let dir = root().join(name);
    if updating() {
        std::fs::create_dir_all(&dir).unwrap();
    }
    dir
}

/// Checks `dir/NAME.pnaclasm` against the generated `text` and `dir/NAME.pexe` against
/// what it assembles to. Returns the problems.
fn check_generated(dir: &Path, name: &str, text: &str) -> Vec<String> {
    let pexe = assemble(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let asm = check_file(&dir.join(format!("{name}.pnaclasm")), text.as_bytes());
    let bin = check_file(&dir.join(format!("{name}.pexe")), &pexe);
    asm.into_iter().chain(bin).collect()
}

#[test]
fn semantics_fixtures_are_generated_and_assembled() {
    let dir = generated_dir("semantics");
    let mut problems = Vec::new();
    let fixtures = fixtures_gen::all();
    for f in &fixtures {
        problems.extend(check_generated(&dir, f.name, &f.text()));
    }
    // No stray files: every file in the directory belongs to a fixture.
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        if !fixtures.iter().any(|f| f.name == stem) {
            problems.push(format!("{} belongs to no fixture", p.display()));
        }
    }
    assert!(problems.is_empty(), "{}\n{HINT}", problems.join("\n"));
}

/// The benchmark fixtures (`fixtures/bench/`) are what their generators make.
#[test]
fn bench_fixtures_are_generated_and_assembled() {
    let dir = generated_dir("bench");
    let text = fixtures_gen::simd_bench::saxpy_text();
    let problems = check_generated(&dir, "simd_saxpy", &text);
    assert!(problems.is_empty(), "{}\n{HINT}", problems.join("\n"));
}
