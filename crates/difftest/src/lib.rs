//! Differential testing of the lowering: a generated PNaCl module ([`gen`]) is assembled,
//! decoded, verified and converted as any pexe is, validated, run under wasmtime, and
//! every call's result and the compared globals' bytes are checked against the
//! reference interpreter ([`pexe2wasm::interp`]).
//!
//! [`check`] is the whole round for one input; the fuzz target `lower_diff` and the
//! seeded test (`tests/it`) call it. A [`Finding`] is a converter (or interpreter) bug:
//! a conversion error on a valid module, invalid wasm, a module wasmtime refuses, or a
//! difference in a result, a trap or memory.

pub mod gen;
#[cfg(feature = "run")]
mod run;

pub use gen::{generate, Config, Program, Src};
#[cfg(feature = "run")]
pub use run::{check, check_program, engine, Finding, Regalloc, Report};

/// The input of the seeded test's seed `n`: deterministic pseudo-random bytes
/// (xorshift64*), of a length that varies with the seed.
pub fn seed_bytes(n: u64) -> Vec<u8> {
    let len = 64 + (n as usize * 37) % 4000;
    let mut x = n.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

/// Generates a program from `data` and converts it as a pexe is (assemble, decode,
/// verify, convert), without running it: what the coverage measurement replays
/// (`examples/coverage_replay.rs`, built without wasmtime). Returns the conversion's
/// error, if any.
pub fn convert_generated(data: &[u8], cfg: &Config) -> Result<(), String> {
    let mut src = Src(arbitrary::Unstructured::new(data));
    let prog = generate(&mut src, cfg);
    let pexe = pexe2wasm::text::assemble(&prog.text).map_err(|e| e.to_string())?;
    let opts = pexe2wasm::convert::ConvertOptions {
        stack_size: 64 << 10,
        threads: if prog.threads {
            pexe2wasm::convert::Threads::On
        } else {
            pexe2wasm::convert::Threads::Off
        },
        link_runtime: false,
        export_all_functions: true,
        runtime: None,
        locals: prog.locals(),
    };
    pexe2wasm::convert::convert(&pexe, &opts)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
