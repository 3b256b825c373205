//! decode → verify → check_runnable → dis: none of the stages may panic on arbitrary input.
//! Whatever decodes must also verify (with findings or without) and disassemble without
//! panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = pexe2wasm::decode::decode(data) else {
        return;
    };
    stages::verify(&module);
    stages::disassemble(data);
});

/// Adapters to the later stages, one line each to wire.
mod stages {
    use pexe2wasm::ir::Module;

    pub fn verify(module: &Module) {
        let _ = pexe2wasm::verify::verify(module);
        let _ = pexe2wasm::verify::check_runnable(module);
    }

    pub fn disassemble(data: &[u8]) {
        let _ = pexe2wasm::text::dis::disassemble(data, &mut std::io::sink());
    }
}
