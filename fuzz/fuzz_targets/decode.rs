//! Decoding arbitrary bytes must never panic (errors are fine) and must stay within the
//! memory libFuzzer allows (`-rss_limit_mb`), whatever counts the input claims.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = pexe2wasm::decode::decode(data);
});
