//! Integration tests of the converter library, in one binary so the workspace links fewer test
//! executables. Each module was a test file of its own; shared helpers are in
//! `pexe2wasm_testkit`.

mod bitstream_real;
mod code_summary;
mod decode_regressions;
mod dependencies;
mod error_class;
mod fixtures_fresh;
mod lower_semantics;
mod lower_snapshots;
mod needs_real;
mod simd_lowering;
mod stock_wasmtime;
mod text_asm_errors;
mod text_constructs;
mod text_factorial;
mod text_roundtrip_real;
mod text_spec_examples;
mod verify_real;
mod verify_rules;
