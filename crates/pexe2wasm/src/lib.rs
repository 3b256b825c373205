//! pexe2wasm: Portable Native Client executables (`.pexe`, PNaCl bitcode) to WebAssembly.
//!
//! The pipeline, one module per stage:
//! 1. [`bitstream`]: bits ↔ blocks, abbreviations and records.
//! 2. [`decode`]: records → the typed IR in [`ir`]; [`verify`] checks it against the PNaCl ABI.
//! 3. [`text`]: PNaClAsm, the disassembly (`dis`) and the assembler (`asm`).
//!
//! [`malloc`] holds the allocator settings our binaries apply at startup.
//! [`info`] summarizes a pexe for the `info` command; [`needs`] says what kind of host it
//! needs to run.
pub mod bitstream;
pub mod convert;
pub mod decode;
pub mod emit;
pub mod info;
pub mod ir;
pub mod lower;
pub mod malloc;
pub mod needs;
pub mod runtime;
pub mod scratch_pool;
pub mod text;
pub mod verify;

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
