//! Snapshots of the lowering: each `tests/snapshots/NAME.pnaclasm` is assembled,
//! converted without the runtime and validated, and the WAT of its functions (only those:
//! no runtime, no sections around them) is compared with `tests/snapshots/NAME.wat`. A
//! change in emitted code shows up as a diff of that file in review. Each input is also
//! converted with `Locals::Liveness` (`--small-code`): its WAT is `NAME.small.wat` where
//! it differs from the default's, and must equal `NAME.wat` where there is no such file.
//!
//! `UPDATE_SNAPSHOTS=1 cargo test -p pexe2wasm --test it lower_snapshots` rewrites the
//! `.wat` files instead of comparing.

use std::path::{Path, PathBuf};

use pexe2wasm::convert::{convert, ConvertOptions, Locals};
use pexe2wasm::text::assemble;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// The `(func ...)` fields of a module's text (wasmprinter indents module fields by two
/// spaces, so a function runs up to the next line that opens another field or closes the
/// module).
fn functions_wat(wasm: &[u8]) -> String {
    let text = wasmprinter::print_bytes(wasm).expect("print");
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("  (") || !line.starts_with("  ") {
            inside = line.starts_with("  (func ");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The WAT of one snapshot input, after checking that the module validates.
fn lower(name: &str, locals: Locals) -> String {
    let path = dir().join(format!("{name}.pnaclasm"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let pexe = assemble(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let opts = ConvertOptions {
        link_runtime: false,
        locals,
        ..Default::default()
    };
    let out = convert(&pexe, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    // `convert` validates in pieces; the whole module once more, on its own.
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&out.wasm)
        .unwrap_or_else(|e| panic!("{name}: invalid module: {e}"));
    functions_wat(&out.wasm)
}

fn check(name: &str) {
    let got = lower(name, Locals::Blocks);
    compare(name, &got, &dir().join(format!("{name}.wat")));
    // With liveness: its own file where the output differs, else the same as the default.
    let small = lower(name, Locals::Liveness);
    let path = dir().join(format!("{name}.small.wat"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") && small == got {
        let _ = std::fs::remove_file(&path);
        return;
    }
    if path.exists() || small != got {
        compare(name, &small, &path);
    }
}

fn compare(name: &str, got: &str, path: &Path) {
    assert!(got.contains("(func "), "{name}: no function printed");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") {
        std::fs::write(path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!("{path:?}: {e} (UPDATE_SNAPSHOTS=1 writes it)");
    });
    if got != want {
        let first = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "{name}: the lowering's output differs from {path:?} from line {} on \
             (UPDATE_SNAPSHOTS=1 rewrites it if the change is meant):\n{got}",
            first + 1
        );
    }
}

#[test]
fn loops() {
    check("loops");
}

#[test]
fn irreducible() {
    check("irreducible");
}

#[test]
fn switch() {
    check("switch");
}

#[test]
fn phi_cycles() {
    check("phi_cycles");
}

#[test]
fn narrow_integers() {
    check("narrow");
}

#[test]
fn nbody_advance() {
    check("nbody_advance");
}

#[test]
fn mandelbrot() {
    check("mandelbrot");
}

#[test]
fn libm_sqrt() {
    check("libm_sqrt");
}

#[test]
fn alloca_dynamic() {
    check("alloca_dynamic");
}

#[test]
fn sdiv_even() {
    check("sdiv_even");
}

/// Every input has a test above (a new file is not silently left out).
#[test]
fn every_input_is_checked() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "pnaclasm").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "alloca_dynamic",
            "irreducible",
            "libm_sqrt",
            "loops",
            "mandelbrot",
            "narrow",
            "nbody_advance",
            "phi_cycles",
            "sdiv_even",
            "switch"
        ]
    );
}
