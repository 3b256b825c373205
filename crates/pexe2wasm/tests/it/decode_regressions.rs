//! Regression tests for decoder bugs found by fuzzing. Each input is rebuilt here from
//! records (no corpus bytes are copied): the bug's shape, not the fuzzer's file.

use pexe2wasm::bitstream::{Header, StreamWriter};

/// One item of a hand-built bitstream.
enum It<'a> {
    Enter(u32),
    Rec(&'a [u64]),
    Exit,
}

/// Writes a pexe from items, all records unabbreviated, block abbreviation width 2.
fn build(items: &[It]) -> Vec<u8> {
    let mut w = StreamWriter::new(&Header::standard().to_bytes());
    for it in items {
        match it {
            It::Enter(id) => w.enter_block(*id, 2).unwrap(),
            It::Rec(v) => w.write_record(3, v).unwrap(),
            It::Exit => w.end_block().unwrap(),
        }
    }
    w.finish().unwrap()
}

/// A module with types {i32, void, void()} and one defined function `void @f0()`, whose
/// body is `body` (records after `blocks N`).
fn one_function(blocks: u64, body: &[&[u64]]) -> Vec<u8> {
    let mut items = vec![
        It::Enter(8),
        It::Rec(&[1, 1]),
        It::Enter(17),
        It::Rec(&[1, 3]),
        It::Rec(&[7, 32]),
        It::Rec(&[2]),
        It::Rec(&[21, 0, 1]),
        It::Exit,
        It::Rec(&[8, 2, 0, 0, 0]),
        It::Enter(19),
        It::Rec(&[5, 0]),
        It::Exit,
        It::Enter(12),
    ];
    let blocks_rec = [1, blocks];
    items.push(It::Rec(&blocks_rec));
    for r in body {
        items.push(It::Rec(r));
    }
    items.push(It::Exit);
    items.push(It::Exit);
    build(&items)
}

/// A module with no types and a globals block that says it holds `count` globals and
/// defines one (alignment 1) whose initializer is `init`.
fn one_global(count: u64, init: &[u64]) -> Vec<u8> {
    build(&[
        It::Enter(8),
        It::Rec(&[1, 1]),
        It::Enter(17),
        It::Rec(&[1, 0]),
        It::Exit,
        It::Enter(19),
        It::Rec(&[5, count]),
        It::Rec(&[0, 1, 0]),
        It::Rec(init),
        It::Exit,
        It::Exit,
    ])
}

#[test]
fn builder_makes_a_valid_module() {
    // The scaffolding itself must decode, or the regressions below prove nothing.
    let data = one_function(1, &[&[10]]);
    let m = pexe2wasm::decode::decode(&data).expect("valid module");
    assert_eq!(m.function_bodies.len(), 1);
    assert_eq!(m.function_bodies[0].insts.len(), 1);
}

/// Decoding `data` fails in the function block, saying `want`.
#[track_caller]
fn fails_in_function_block(data: &[u8], want: &str) {
    let err = pexe2wasm::decode::decode(data).unwrap_err().to_string();
    assert!(err.contains(want), "{err}");
    assert!(err.contains("function block"), "{err}");
}

#[test]
fn phi_operand_of_i64_min_is_an_error_not_an_overflow() {
    // Fuzz finding: a phi operand whose sign-rotated value is 1 decodes to i64::MIN, and
    // `next - operand` overflowed. It must be reported as an out-of-range value id.
    let data = one_function(2, &[&[11, 1], &[16, 0, 1, 0], &[10]]);
    // The id is next - i64::MIN = 1 + 2^63 computed without wrapping (a wrapped i64 would
    // print as a negative number), so this fails on the old arithmetic even in release.
    fails_in_function_block(&data, "value id 9223372036854775809 is out of range");
}

#[test]
fn relocation_target_with_huge_globals_count_is_an_error() {
    // A globals count near u64::MAX must not overflow the relocation range check.
    let data = one_global(u64::MAX, &[4, 7]);
    let err = pexe2wasm::decode::decode(&data).unwrap_err().to_string();
    assert!(err.contains("globals"), "{err}");
}

#[test]
fn data_byte_over_255_is_an_error_in_short_and_long_records() {
    // The global data check narrows and checks bytes in one pass; the error must still name
    // the offending byte, whether the record came back short (one window) or long.
    for bytes in [
        &[1u64, 300, 2][..],
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 700, 1],
    ] {
        let mut rec = vec![3u64];
        rec.extend_from_slice(bytes);
        let data = one_global(1, &rec);
        let err = pexe2wasm::decode::decode(&data).unwrap_err().to_string();
        let bad = bytes.iter().find(|&&b| b > 255).unwrap();
        assert!(
            err.contains(&format!("data byte {bad} is over 255")),
            "{err}"
        );
        assert!(err.contains("globals"), "{err}");
    }
}

#[test]
fn call_calling_convention_word_wider_than_32_bits_is_an_error() {
    // `Call::cc_info` is 32 bits (it keeps an instruction at 32 bytes); a wider word in the
    // record is reported at the record, not truncated. Record: call [cc, callee, args...],
    // callee relative 1 = @f0 (a self-call of `void @f0()`).
    let ok = one_function(1, &[&[34, 1, 1], &[10]]);
    let m = pexe2wasm::decode::decode(&ok).expect("a tail call with cc word 1 decodes");
    let f = &m.function_bodies[0];
    let pexe2wasm::ir::InstKind::Call(c) = &f.insts[0].kind else {
        panic!("not a call: {:?}", f.insts[0].kind);
    };
    assert_eq!((c.cc_info, f.args(c).len()), (1, 0));
    let wide = one_function(1, &[&[34, 1 << 32 | 1, 1], &[10]]);
    fails_in_function_block(
        &wide,
        "calling-convention word 4294967297 does not fit in 32 bits",
    );
}

/// The decoder sizes a body's per-instruction vectors from the block's length and shrinks
/// them when the body is done: a decoded module holds no slack there (which would count
/// against the peak-memory target), and the instructions are not copied to get there.
#[test]
fn decoded_bodies_hold_no_spare_capacity() {
    let root = pexe2wasm_testkit::repo_path("fixtures");
    let mut bodies = 0;
    for name in ["hello.pexe", "semantics/bits.pexe"] {
        let data = std::fs::read(root.join(name)).expect("project fixture");
        let m = pexe2wasm::decode::decode(&data).expect("decodes");
        for f in &m.function_bodies {
            assert!(!f.insts.is_empty(), "{name}");
            assert_eq!(f.insts.capacity(), f.insts.len(), "{name}: insts");
            assert_eq!(
                f.inst_bits.capacity(),
                f.inst_bits.len(),
                "{name}: inst_bits"
            );
            assert_eq!(
                f.value_insts.capacity(),
                f.value_insts.len(),
                "{name}: value_insts"
            );
            bodies += 1;
        }
    }
    assert!(bodies >= 2);
}
