//! `assemble(disassemble(x)) == x`, bit for bit, for every well-formed real pexe.

use pexe2wasm_testkit::corpus as common;

use pexe2wasm::text::assemble;
use pexe2wasm::text::dis::disassemble_with_stats;

fn round_trip(name: &str) {
    let Some(data) = common::real_pexe(name) else {
        return;
    };
    let mut text = Vec::new();
    let stats = disassemble_with_stats(&data, &mut text)
        .unwrap_or_else(|e| panic!("{name}: disassembly failed: {e}"));
    let text = String::from_utf8(text).expect("the dump is UTF-8");
    let bytes = assemble(&text).unwrap_or_else(|e| panic!("{name}: assembly failed: {e}"));
    if bytes != data {
        let at = bytes.iter().zip(&data).position(|(a, b)| a != b);
        panic!(
            "{name}: round trip differs (lengths {} vs {}, first difference at byte {at:?})",
            bytes.len(),
            data.len()
        );
    }
    // Real pexes come from pnacl-finalize: everything should print as plain PNaClAsm.
    assert_eq!(
        stats.overrides, 0,
        "{name}: {} of {} records needed an extension",
        stats.overrides, stats.records
    );
}

pexe2wasm_testkit::test_each_well_formed_pexe!(round_trip);

/// Whatever the disassembler accepts must round-trip; everything else is a clean error.
fn dis_or_error(name: &str, data: &[u8]) -> bool {
    let mut text = Vec::new();
    match disassemble_with_stats(data, &mut text) {
        Ok(_) => {
            let text = String::from_utf8(text).expect("the dump is UTF-8");
            let bytes = assemble(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(bytes, data, "{name}: round trip differs");
            true
        }
        Err(_) => false,
    }
}

#[test]
fn malformed_files_give_errors() {
    for (name, data) in common::real_pexes(common::MALFORMED) {
        dis_or_error(name, &data);
    }
}

#[test]
fn corrupted_small_files_never_panic() {
    for name in ["binji-bitcast.pexe", "binji-start.pexe"] {
        let Some(data) = common::real_pexe(name) else {
            continue;
        };
        assert!(dis_or_error(name, &data));
        for bit in 0..data.len() * 8 {
            let mut bad = data.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            dis_or_error(&format!("{name} with bit {bit} flipped"), &bad);
        }
        for len in 0..data.len() {
            dis_or_error(&format!("{name} cut at {len}"), &data[..len]);
        }
    }
}
