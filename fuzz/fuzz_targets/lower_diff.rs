//! Differential fuzzing of the lowering: the input's bytes drive the generator of valid
//! PNaCl modules (`crates/difftest/src/gen.rs`); each module is assembled, decoded,
//! verified, converted, validated and run under wasmtime, and every call's result and
//! the compared memory must equal the reference interpreter's (`pexe2wasm::interp`).
//! Any difference, invalid wasm or conversion error on a valid module panics (a finding).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let cfg = pexe2wasm_difftest::Config::default();
    if let Err(f) = pexe2wasm_difftest::check(data, &cfg) {
        panic!("{f}");
    }
});
