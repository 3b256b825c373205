//! Builds the browser converter (crates/browser-converter) for wasm32-unknown-unknown, so
//! that `pexe2wasm host` can write it into a host folder (docs/decisions/0024-*.md).
//!
//! A nested `cargo build --profile wasm-converter --target wasm32-unknown-unknown` with its
//! own target dir (TARGET/wasm-converter, beside the outer build's profiles), rerun only
//! when the converter's sources change. `PEXE2WASM_CONVERTER_WASM=FILE` takes a prebuilt
//! module instead (`=none`: build without it). Without the wasm32 target the CLI still
//! builds, with a warning, and `pexe2wasm host` says how to fix it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let dest = out.join("browser-converter.wasm");
    println!("cargo:rerun-if-env-changed=PEXE2WASM_CONVERTER_WASM");
    println!("cargo:rerun-if-changed=build.rs");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let why_not = match std::env::var_os("PEXE2WASM_CONVERTER_WASM") {
        Some(v) if v == "none" => Some("PEXE2WASM_CONVERTER_WASM=none".to_owned()),
        Some(v) => {
            let src = PathBuf::from(v);
            println!("cargo:rerun-if-changed={}", src.display());
            std::fs::copy(&src, &dest)
                .unwrap_or_else(|e| panic!("PEXE2WASM_CONVERTER_WASM={}: {e}", src.display()));
            None
        }
        None => build(&root, &out, &dest),
    };
    if let Some(why) = why_not {
        println!("cargo:warning=the browser converter is not built into pexe2wasm ({why}); `pexe2wasm host` will fail until it is");
        std::fs::write(&dest, b"").unwrap();
        println!("cargo:rustc-env=PEXE2WASM_CONVERTER_MISSING={why}");
    }
}

/// The nested build; `Some(reason)` when the wasm32 target is not installed.
fn build(root: &Path, out: &Path, dest: &Path) -> Option<String> {
    for dir in [
        "crates/browser-converter",
        "crates/pexe2wasm/src",
        "crates/pexe2wasm/build.rs",
        "crates/pexe2wasm/Cargo.toml",
        "crates/ppapi",
        "crates/nexe/src",
        "crates/nexe/Cargo.toml",
        "Cargo.lock",
        "Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let has_target = sysroot.as_deref().is_some_and(|s| {
        Path::new(s)
            .join("lib/rustlib/wasm32-unknown-unknown/lib")
            .is_dir()
    });
    if !has_target {
        return Some(
            "the wasm32-unknown-unknown target is not installed: rustup target add wasm32-unknown-unknown"
                .into(),
        );
    }
    // OUT_DIR is TARGET/[TRIPLE/]PROFILE/build/pexe2wasm-cli-HASH/out.
    let target_dir = out
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "build"))
        .and_then(|b| b.parent()?.parent())
        .map(|t| t.join("wasm-converter"))
        .unwrap_or_else(|| out.join("wasm-converter"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args([
            "build",
            "--profile",
            "wasm-converter",
            "--target",
            "wasm32-unknown-unknown",
            "-p",
            "pexe2wasm-browser-converter",
            "--lib",
            "--locked",
            "--target-dir",
        ])
        .arg(&target_dir);
    // The outer build's settings are for the host target (and clippy's driver, under
    // `cargo clippy`); the nested one has its own.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("CARGO_")
            && !matches!(&*k, "CARGO_HOME" | "CARGO_MAKEFLAGS" | "CARGO_NET_OFFLINE")
            || matches!(
                &*k,
                "RUSTFLAGS" | "RUSTC_WRAPPER" | "RUSTC_WORKSPACE_WRAPPER" | "RUSTDOCFLAGS"
            )
        {
            cmd.env_remove(&*k);
        }
    }
    cmd.env("RUSTC", &rustc);
    let status = cmd
        .status()
        .expect("cannot run cargo for the browser converter");
    assert!(
        status.success(),
        "building the browser converter (crates/browser-converter) for wasm32-unknown-unknown failed"
    );
    let built =
        target_dir.join("wasm32-unknown-unknown/wasm-converter/pexe2wasm_browser_converter.wasm");
    std::fs::copy(&built, dest).unwrap_or_else(|e| panic!("{}: {e}", built.display()));
    None
}
