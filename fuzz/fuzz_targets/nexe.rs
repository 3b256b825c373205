//! Reading arbitrary bytes as a nexe (ELF, NaCl's loader rules, interface strings) and
//! validating them as x86-64 code must never panic, hang or allocate hugely: errors and
//! refusals are fine. The input is tried both ways: as a whole file and as raw code.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(nexe) = pexe2wasm_nexe::inspect(data) {
        let _ = nexe.info.to_string();
        let _ = nexe.memory_image();
        if let Some(v) = nexe.validate_x86_64() {
            for e in &v.errors {
                let _ = e.to_string();
            }
        }
    }
    let mut code = data.to_vec();
    code.resize(code.len().next_multiple_of(32), pexe2wasm_nexe::HLT);
    let v = pexe2wasm_nexe::x86_64::validate(&code, 0x20000);
    assert!(v.error_count >= v.errors.len());
});
