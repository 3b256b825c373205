//! The container layer is lossless on every well-formed real pexe: reading every entry and
//! writing it back gives the same bytes.
use pexe2wasm_testkit::corpus as common;

#[test]
fn reencode_is_bit_identical_on_real_pexes() {
    let mut checked = 0;
    for (name, data) in common::real_pexes(common::WELL_FORMED) {
        let out = pexe2wasm::bitstream::reencode(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            out == data,
            "{name}: re-encoded bytes differ ({} vs {} bytes)",
            out.len(),
            data.len()
        );
        checked += 1;
    }
    eprintln!("re-encoded {checked} real pexes bit-identically");
}
