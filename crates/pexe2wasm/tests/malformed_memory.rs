//! Memory stays bounded by what the input holds: a tiny file claiming 2^32 types, basic
//! blocks, globals, operands or array elements is rejected quickly without allocating from
//! the claim, and real pexes (whole or damaged) use no more than a small multiple of their
//! size.
//!
//! A counting global allocator measures the peak heap of each decode. This file holds one
//! #[test] so no other test thread allocates while it measures.
use pexe2wasm_testkit::corpus as common;

use pexe2wasm::bitstream::bits::BitWriter;
use pexe2wasm::bitstream::{Header, StreamWriter};
use pexe2wasm::decode::decode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use pexe2wasm_testkit::counting_alloc::{Counting, CURRENT, PEAK};

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak heap growth (bytes above what was live before) while decoding `data`, and the time.
fn measure(data: &[u8]) -> (usize, Duration, bool) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let t = Instant::now();
    let ok = decode(data).is_ok();
    let elapsed = t.elapsed();
    (PEAK.load(Ordering::Relaxed) - base, elapsed, ok)
}

/// A factorial-like module whose record `old` is replaced by `new`.
fn module_with(old: &[u64], new: &[u64]) -> Vec<u8> {
    let recs: Vec<Option<(u32, Vec<u64>)>> = vec![
        Some((8, vec![])),
        Some((0, vec![1, 1])),
        Some((17, vec![])),
        Some((0, vec![1, 4])),
        Some((0, vec![7, 32])),
        Some((0, vec![2])),
        Some((0, vec![21, 0, 0, 0])),
        Some((0, vec![7, 1])),
        None,
        Some((0, vec![8, 2, 0, 0, 0])),
        Some((19, vec![])),
        Some((0, vec![5, 0])),
        None,
        Some((12, vec![])),
        Some((0, vec![1, 3])),
        Some((11, vec![])),
        Some((0, vec![1, 0])),
        Some((0, vec![4, 2])),
        None,
        Some((0, vec![28, 2, 1, 32])),
        Some((0, vec![11, 1, 2, 1])),
        Some((0, vec![10, 2])),
        Some((0, vec![2, 3, 2, 1])),
        Some((0, vec![34, 0, 5, 1])),
        Some((0, vec![2, 5, 1, 2])),
        Some((0, vec![10, 1])),
        None,
        None,
    ];
    let mut w = StreamWriter::new(&Header::standard().to_bytes());
    let mut replaced = false;
    for r in recs {
        match r {
            None => w.end_block().unwrap(),
            Some((id, v)) if v.is_empty() => w.enter_block(id, 2).unwrap(),
            Some((_, v)) => {
                let v = if v == old {
                    replaced = true;
                    new.to_vec()
                } else {
                    v
                };
                w.write_record(3, &v).unwrap()
            }
        }
    }
    assert!(replaced, "no record {old:?}");
    w.finish().unwrap()
}

/// A module block holding one abbreviated record `<fixed(4), array(fixed(8))>` whose array
/// claims `len` elements.
fn long_array(len: u64) -> Vec<u8> {
    let mut w = BitWriter::new();
    w.write_bytes(&Header::standard().to_bytes());
    w.write(1, 2);
    w.write_vbr(8, 8);
    w.write_vbr(3, 4);
    w.align32();
    let at = (w.pos() / 8) as usize;
    w.write(0, 32);
    w.write(2, 3);
    w.write_vbr(3, 5);
    for (enc, width) in [(1u64, Some(4u64)), (3, None), (1, Some(8))] {
        w.write(0, 1);
        w.write(enc, 3);
        if let Some(x) = width {
            w.write_vbr(x, 5);
        }
    }
    w.write(4, 3);
    w.write(1, 4);
    w.write_vbr(len, 6);
    w.write(0, 3);
    w.align32();
    let words = (w.pos() / 8 - at as u64 - 4) / 4;
    w.patch_u32(at, words as u32);
    w.finish()
}

#[test]
fn memory_is_bounded_by_the_input() {
    // Warm up lazily initialized state (stderr, thread-locals) outside the measurement.
    let _ = decode(&module_with(&[1, 4], &[1, 4]));

    // 1. Tiny files claiming huge counts: a few hundred KiB at most, fast, rejected.
    const TINY_LIMIT: usize = 256 * 1024;
    let claims: Vec<(String, Vec<u8>)> = vec![
        ("2^32 types".into(), module_with(&[1, 4], &[1, 1 << 32])),
        (
            "2^32-1 types".into(),
            module_with(&[1, 4], &[1, u32::MAX as u64]),
        ),
        (
            "2^32 basic blocks".into(),
            module_with(&[1, 3], &[1, 1 << 32]),
        ),
        (
            "2^32-1 basic blocks".into(),
            module_with(&[1, 3], &[1, u32::MAX as u64]),
        ),
        ("2^32 globals".into(), module_with(&[5, 0], &[5, 1 << 32])),
        (
            "2^32-1 globals".into(),
            module_with(&[5, 0], &[5, u32::MAX as u64]),
        ),
        ("2^32 array elements".into(), long_array(1 << 32)),
        ("2^60 array elements".into(), long_array(1 << 60)),
    ];
    for (what, data) in &claims {
        let (peak, took, ok) = measure(data);
        eprintln!(
            "{what}: {} bytes in, peak heap {peak} bytes, {took:?}",
            data.len()
        );
        assert!(!ok, "{what}: accepted");
        assert!(
            peak <= TINY_LIMIT,
            "{what}: decoding a {}-byte file allocated {peak} bytes",
            data.len()
        );
        assert!(took < Duration::from_secs(1), "{what}: took {took:?}");
    }

    // 2. Real pexes, whole and with their last bytes garbled (so decoding runs through
    //    nearly the whole file before it fails; a cut file fails at once, its module block
    //    being longer than the input): peak heap within a small multiple of the input.
    for name in ["binji-puts.pexe", "lpdevs-part2.pexe", "astar-star.pexe"] {
        let Some(data) = common::real_pexe(name) else {
            continue;
        };
        let mut garbled = data.clone();
        let n = garbled.len();
        garbled[n - 16..n - 4].fill(0xff);
        for (what, input, should_decode) in [("whole", &data, true), ("garbled", &garbled, false)] {
            let (peak, _, ok) = measure(input);
            eprintln!(
                "{name} {what}: peak heap {peak} bytes ({:.1}x the input)",
                peak as f64 / input.len() as f64
            );
            assert_eq!(ok, should_decode, "{name} {what}");
            assert!(
                peak <= 16 * input.len() + TINY_LIMIT,
                "{name} {what}: peak heap {peak} bytes is more than 16x the {}-byte input",
                input.len()
            );
        }
    }
}
