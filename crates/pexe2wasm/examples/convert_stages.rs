//! A driver for callgrind instruction counts of the conversion (docs/PERFORMANCE.md):
//!
//! ```sh
//! RAYON_NUM_THREADS=1 valgrind --tool=callgrind target/release/examples/convert_stages MODE FILE...
//! ```
//!
//! MODE `convert` runs `pexe2wasm::convert::convert` on each file (as `pexe2wasm convert`
//! does); `decode`, `verify`, `emit` and `validate` run the pipeline up to and including
//! that stage (decode; decode + verify; decode + emit; decode + emit + validate), so the
//! difference of two totals is one stage's count. `write DIR` converts each file into
//! `DIR/<name>.wasm` (to compare outputs). `REPS=N` repeats the whole list N times.

use pexe2wasm::convert::{convert, ConvertOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let out_dir = if mode == "write" { args.next() } else { None };
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let files: Vec<(String, Vec<u8>)> = args
        .map(|p| {
            let d = std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
            (p, d)
        })
        .collect();
    let eopts = pexe2wasm::emit::EmitOptions {
        // `validate` mode validates the whole module after `emit`.
        validate: false,
        liveness_locals: std::env::var("PEXE2WASM_LOCALS").as_deref() == Ok("liveness"),
        ..Default::default()
    };
    // `PEXE2WASM_LOCALS=blocks|liveness` picks the local allocation (else the default).
    let copts = ConvertOptions {
        locals: match std::env::var("PEXE2WASM_LOCALS").as_deref() {
            Ok("blocks") => pexe2wasm::convert::Locals::Blocks,
            Ok("liveness") => pexe2wasm::convert::Locals::Liveness,
            _ => ConvertOptions::default().locals,
        },
        ..ConvertOptions::default()
    };
    for _ in 0..reps {
        for (p, data) in &files {
            match mode.as_str() {
                "convert" | "write" => {
                    let c = convert(data, &copts).unwrap_or_else(|e| panic!("{p}: {e}"));
                    if let Some(dir) = &out_dir {
                        let name = std::path::Path::new(p).file_stem().unwrap_or_default();
                        let out = std::path::Path::new(dir).join(name).with_extension("wasm");
                        std::fs::write(&out, &c.wasm).expect("write output");
                    }
                }
                "decode" | "verify" | "emit" | "validate" => {
                    let m = pexe2wasm::decode::decode(data).expect("decodes");
                    if mode == "verify" {
                        pexe2wasm::verify::verify_module(&m).expect("verifies");
                        pexe2wasm::verify::check_runnable(&m).expect("runnable");
                    }
                    if mode == "emit" || mode == "validate" {
                        let rt = pexe2wasm::runtime::irt_module();
                        let out = pexe2wasm::emit::emit(&m, Some(rt), &eopts).expect("emits");
                        if mode == "validate" {
                            wasmparser::Validator::new_with_features(
                                wasmparser::WasmFeatures::all(),
                            )
                            .validate_all(&out.wasm)
                            .expect("validates");
                        }
                    }
                    // Freeing the IR is counted in `convert` only.
                    std::mem::forget(m);
                }
                _ => {
                    eprintln!("usage: convert_stages convert|decode|verify|emit|validate|write DIR FILE...");
                    std::process::exit(2);
                }
            }
        }
    }
}
