//! The converter library stays a library: no embedded runtime, no CLI toolkit, no `anyhow`
//! among its normal or build dependencies (`cargo tree`), so the service and other users
//! of the converter do not build them.

use std::process::Command;

/// Crates that belong to the runner, the CLI or the service, never to the library.
const FORBIDDEN: &[&str] = &[
    "wasmtime",
    "wasmtime-wasi",
    "cranelift-codegen",
    "clap",
    "anyhow",
    "indicatif",
    "tokio",
    "axum",
];

#[test]
fn library_builds_without_runtime_or_cli_crates() {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "pexe2wasm",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--offline",
            "--locked",
        ])
        .current_dir(pexe2wasm_testkit::repo_root())
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        crates.contains(&"wasm-encoder") && crates.contains(&"wasmparser"),
        "cargo tree did not list the library's dependencies:\n{tree}"
    );
    let found: Vec<&&str> = FORBIDDEN.iter().filter(|f| crates.contains(f)).collect();
    assert!(
        found.is_empty(),
        "the library depends on {found:?}:\n{tree}"
    );
}
