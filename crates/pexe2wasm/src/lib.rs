//! pexe2wasm: Portable Native Client executables (`.pexe`, PNaCl bitcode) to WebAssembly.
//!
//! This crate is the converter; it has no WebAssembly engine and no command line (those
//! are the `pexe2wasm-runner` and `pexe2wasm-cli` crates; the service is
//! `pexe2wasm-server`). [`convert::convert`] runs the whole pipeline:
//!
//! 1. [`bitstream`]: the PNaCl header, then bits → blocks, abbreviations and records.
//! 2. [`decode`]: records → the typed IR of [`ir`] (function bodies in parallel).
//! 3. [`verify`]: the PNaCl ABI rules and "can it run" (`_start`), alongside step 4.
//! 4. [`lower`] + [`emit`]: each function body → one wasm body (in parallel); emission lays
//!    out memory and the table, links the [`runtime`] (the NaCl IRT written in WAT, over
//!    WASI) and validates the finished module.
//!
//! Beside the pipeline: [`text`] (PNaClAsm: disassembler and assembler), [`info`] (what a
//! pexe holds and asks for, for `info` and `batch`), [`needs`] (what kind of host it needs
//! to run), [`malloc`] (allocator settings the
//! binaries apply at startup) and [`scratch_pool`] (buffers lent to the parallel passes).
//! docs/ARCHITECTURE.md describes each stage; docs/RUNTIME-ABI.md what a converted module
//! imports and exports. [`ErrorClass`] classifies every conversion error (input,
//! unsupported, internal) for the CLI, `batch` and the service alike.
pub mod bitstream;
pub mod convert;
pub mod decode;
pub mod emit;
mod error;
pub mod info;
pub mod interp;
pub mod ir;
pub mod lower;
pub mod malloc;
pub mod needs;
pub mod runtime;
pub mod scratch_pool;
pub mod text;
pub mod verify;

pub use error::ErrorClass;

/// A deterministic xorshift64 generator for the unit tests' pseudo-random inputs.
#[cfg(test)]
pub(crate) fn test_rng(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
