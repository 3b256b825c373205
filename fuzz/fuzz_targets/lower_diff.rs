//! Differential fuzzing of the lowering: the input's bytes drive the generator of valid
//! PNaCl modules (`crates/difftest/src/gen.rs`); each module is assembled, decoded,
//! verified, converted, validated and run under wasmtime, and every call's result and
//! the compared memory must equal the reference interpreter's (`pexe2wasm::interp`).
//! Any difference, invalid wasm or conversion error on a valid module panics (a finding).
#![no_main]

use libfuzzer_sys::fuzz_target;

// Cranelift allocates heavily and glibc's malloc was a tenth of the profile (perf):
// mimalloc makes each round quicker (docs/FUZZING.md, "Runs").
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fuzz_target!(|data: &[u8]| {
    let cfg = pexe2wasm_difftest::Config::default();
    if let Err(f) = pexe2wasm_difftest::check(data, &cfg) {
        panic!("{f}");
    }
});
