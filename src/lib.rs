//! pexe2wasm: Portable Native Client executables (`.pexe`, PNaCl bitcode) to WebAssembly.
//!
//! The pipeline, one module per stage:
//! 1. [`bitstream`]: bits ↔ blocks, abbreviations and records.
pub mod bitstream;
