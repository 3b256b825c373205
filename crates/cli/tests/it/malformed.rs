//! Bad input: every malformed pexe is rejected with a one-line error that names the bit
//! offset, the block and the record; nothing panics; the CLI exits with code 1 and prints
//! one line. Inputs are built here with `StreamWriter`/`BitWriter` or by editing bytes.
use pexe2wasm_testkit::corpus as common;

use pexe2wasm::bitstream::bits::BitWriter;
use pexe2wasm::bitstream::{Header, StreamWriter};
use pexe2wasm::decode::{decode, DecodeError};
use pexe2wasm::ir::Module;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Adapters to the later stages (one line each to wire).

/// `pexe2wasm::verify::verify`: the first ABI finding, if any, as one line.
fn verify_finding(m: &Module) -> Option<String> {
    pexe2wasm::verify::verify(m).first().map(|f| f.to_string())
}

/// `pexe2wasm::verify::check_runnable`: why the module cannot run, if it cannot.
fn runnable_finding(m: &Module) -> Option<String> {
    pexe2wasm::verify::check_runnable(m)
        .err()
        .map(|f| f.to_string())
}

// ---------------------------------------------------------------------------------------
// Building inputs.

/// One entry of a bitstream written with [`StreamWriter`] (records unabbreviated).
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Enter(u32),
    End,
    Rec(Vec<u64>),
}
use Op::*;

fn rec(v: &[u64]) -> Op {
    Rec(v.to_vec())
}

/// The factorial module of the PNaCl bitcode reference ("an example"), record by record.
fn factorial() -> Vec<Op> {
    vec![
        Enter(8),
        rec(&[1, 1]), // version 1
        Enter(0),
        End,
        Enter(17),
        rec(&[1, 4]),        // count 4
        rec(&[7, 32]),       // @t0 = i32
        rec(&[2]),           // @t1 = void
        rec(&[21, 0, 0, 0]), // @t2 = i32 (i32)
        rec(&[7, 1]),        // @t3 = i1
        End,
        rec(&[8, 2, 0, 0, 0]), // define external i32 @f0(i32)
        Enter(19),
        rec(&[5, 0]), // count 0
        End,
        Enter(14),
        rec(&[1, 0, 102, 97, 99, 116]), // @f0 : "fact"
        End,
        Enter(12),
        rec(&[1, 3]), // blocks 3
        Enter(11),
        rec(&[1, 0]), // i32:
        rec(&[4, 2]), // %c0 = i32 1
        End,
        rec(&[28, 2, 1, 32]), // %v0 = icmp eq i32 %p0, %c0
        rec(&[11, 1, 2, 1]),  // br i1 %v0, label %b1, label %b2
        rec(&[10, 2]),        // ret i32 %c0
        rec(&[2, 3, 2, 1]),   // %v1 = sub i32 %p0, %c0
        rec(&[34, 0, 5, 1]),  // %v2 = call i32 @f0(i32 %v1)
        rec(&[2, 5, 1, 2]),   // %v3 = mul i32 %p0, %v2
        rec(&[10, 1]),        // ret i32 %v3
        End,
        End,
    ]
}

/// The factorial module with its function named `_start`.
fn factorial_start() -> Vec<Op> {
    replace(
        factorial(),
        &[1, 0, 102, 97, 99, 116],
        &[1, 0, 95, 115, 116, 97, 114, 116],
    )
}

fn build(ops: &[Op]) -> Vec<u8> {
    let mut w = StreamWriter::new(&Header::standard().to_bytes());
    for op in ops {
        match op {
            Enter(id) => w.enter_block(*id, 2).unwrap(),
            End => w.end_block().unwrap(),
            Rec(v) => w.write_record(3, v).unwrap(),
        }
    }
    w.finish().unwrap()
}

/// Replaces the one record equal to `old` by `new`.
fn replace(mut ops: Vec<Op>, old: &[u64], new: &[u64]) -> Vec<Op> {
    let hits: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| **o == Rec(old.to_vec()))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hits.len(), 1, "record {old:?} is not unique in the module");
    ops[hits[0]] = Rec(new.to_vec());
    ops
}

/// Raw bits, for what `StreamWriter` refuses to write. Blocks get their real lengths.
struct Raw {
    w: BitWriter,
    widths: Vec<u32>,
    len_at: Vec<usize>,
}

impl Raw {
    fn new() -> Raw {
        let mut w = BitWriter::new();
        w.write_bytes(&Header::standard().to_bytes());
        Raw {
            w,
            widths: vec![2],
            len_at: Vec::new(),
        }
    }
    fn width(&self) -> u32 {
        *self.widths.last().unwrap()
    }
    fn enter(&mut self, id: u64, width: u64) -> &mut Self {
        let cur = self.width();
        self.w.write(1, cur);
        self.w.write_vbr(id, 8);
        self.w.write_vbr(width, 4);
        self.w.align32();
        self.len_at.push((self.w.pos() / 8) as usize);
        self.w.write(0, 32);
        self.widths.push(width.min(64) as u32);
        self
    }
    fn end(&mut self) -> &mut Self {
        let cur = self.width();
        self.w.write(0, cur);
        self.w.align32();
        let at = self.len_at.pop().unwrap();
        let words = (self.w.pos() / 8 - at as u64 - 4) / 4;
        self.w.patch_u32(at, words as u32);
        self.widths.pop();
        self
    }
    fn fixed(&mut self, v: u64, n: u32) -> &mut Self {
        self.w.write(v, n);
        self
    }
    fn vbr(&mut self, v: u64, n: u32) -> &mut Self {
        self.w.write_vbr(v, n);
        self
    }
    fn abbrev_id(&mut self, id: u64) -> &mut Self {
        let cur = self.width();
        self.w.write(id, cur);
        self
    }
    /// Closes every open block and returns the bytes.
    fn finish(mut self) -> Vec<u8> {
        while !self.len_at.is_empty() {
            self.end();
        }
        self.w.align32();
        self.w.finish()
    }
}

// ---------------------------------------------------------------------------------------
// Checking errors.

/// Decodes `data`; if that succeeds, runs the ABI verifier. Returns the error line, or
/// panics if the input was accepted.
fn reject(what: &str, data: &[u8]) -> String {
    let msg = reject_inner(what, data);
    if std::env::var_os("SHOW_ERRORS").is_some() {
        eprintln!("{what}: {msg}");
    }
    msg
}

fn reject_inner(what: &str, data: &[u8]) -> String {
    match decode(data) {
        Err(e) => check_decode_error(what, data, &e),
        Ok(m) => match verify_finding(&m) {
            Some(f) => {
                assert_one_line(what, &f);
                f
            }
            None => panic!("{what}: the malformed input was accepted"),
        },
    }
}

fn assert_one_line(what: &str, msg: &str) {
    assert!(!msg.trim().is_empty(), "{what}: empty error message");
    assert!(
        !msg.contains('\n') && !msg.contains('\r'),
        "{what}: error is not one line: {msg:?}"
    );
}

/// Checks a decode error: one line, starting with the bit position, naming the block when
/// the error is inside one, with the bit offset inside the file.
fn check_decode_error(what: &str, data: &[u8], e: &DecodeError) -> String {
    let msg = e.to_string();
    assert_one_line(what, &msg);
    // Native code (ELF) is named as what it is instead: no bit of a pexe to point at.
    if e.native().is_some() {
        assert!(
            msg.contains("not a pexe") && msg.ends_with("only PNaCl pexes convert"),
            "{what}: {msg}"
        );
        return msg;
    }
    let pos = e.position();
    assert!(
        msg.starts_with(&format!(
            "bit {} (byte {}:{})",
            pos.bit,
            pos.bit / 8,
            pos.bit % 8
        )),
        "{what}: error does not start with its bit position: {msg}"
    );
    assert!(
        pos.bit <= data.len() as u64 * 8,
        "{what}: bit {} is past the end of the {}-byte input: {msg}",
        pos.bit,
        data.len()
    );
    if let Some(b) = pos.block {
        assert!(
            msg.contains(&format!("block (id {b})")),
            "{what}: error does not name its block: {msg}"
        );
    }
    msg
}

/// Like [`reject`] for errors that concern one record: the message must also name the
/// block and the record.
fn reject_record(what: &str, data: &[u8]) -> String {
    let msg = reject(what, data);
    assert!(msg.contains("block (id"), "{what}: no block named: {msg}");
    assert!(msg.contains("record"), "{what}: no record named: {msg}");
    msg
}

/// Runs `f` and fails if it takes longer than `limit` (a claimed count was trusted).
fn quickly<T>(what: &str, limit: Duration, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    assert!(
        t.elapsed() < limit,
        "{what}: took {:?}, more than {limit:?}",
        t.elapsed()
    );
    r
}

// ---------------------------------------------------------------------------------------
// The well-formed baseline: every malformed variant below differs from it in one place.

#[test]
fn factorial_baseline_is_the_spec_example_and_decodes() {
    let data = build(&factorial());
    // The spec's listing ends with the module's end block at 156:0, padded to 160 bytes.
    assert_eq!(data.len(), 160);
    let m = decode(&data).unwrap_or_else(|e| panic!("factorial: {e}"));
    assert_eq!(m.functions.len(), 1);
    assert_eq!(m.function_bodies.len(), 1);
    assert_eq!(m.function_bodies[0].num_blocks, 3);
    // It defines no _start, so it decodes but cannot run.
    let no_start = runnable_finding(&m).expect("factorial has no _start");
    assert!(no_start.contains("_start"), "{no_start}");
    decode(&build(&factorial_start())).unwrap();
}

// ---------------------------------------------------------------------------------------
// Header.

#[test]
fn wrong_magic() {
    let mut data = build(&factorial());
    data[..4].copy_from_slice(b"\x7fELF");
    let msg = reject("ELF magic", &data);
    assert!(msg.contains("not a pexe"), "{msg}");
    data[..4].copy_from_slice(b"BC\xc0\xde");
    let msg = reject("LLVM magic", &data);
    assert!(msg.contains("raw LLVM bitcode"), "{msg}");
    reject("empty file", &[]);
    reject("3 bytes", b"PEX");
}

#[test]
fn unsupported_pnacl_version() {
    for v in [0u8, 1, 3, 255] {
        let mut data = build(&factorial());
        data[12] = v;
        let msg = reject(&format!("version {v}"), &data);
        assert!(msg.contains("version"), "version {v}: {msg}");
    }
}

#[test]
fn header_field_lengths_past_the_end() {
    let mut data = build(&factorial());
    data[6] = 0xff; // header claims 255 bytes of fields
    reject("header byte count", &data);
    let mut data = build(&factorial());
    data[10] = 0xf0; // the version field claims 240 bytes
    reject("header field length", &data);
}

// ---------------------------------------------------------------------------------------
// Truncation.

/// Every cut of `data` shorter than the whole must be rejected cleanly.
fn check_cuts(name: &str, data: &[u8], cuts: impl Iterator<Item = usize>) -> usize {
    let mut n = 0;
    for cut in cuts {
        if cut >= data.len() {
            continue;
        }
        reject(&format!("{name} cut at byte {cut}"), &data[..cut]);
        n += 1;
    }
    n
}

#[test]
fn truncated_factorial_at_every_byte() {
    let data = build(&factorial());
    assert_eq!(check_cuts("factorial", &data, 0..data.len()), 160);
}

#[test]
fn truncated_real_pexes() {
    // Small files at every byte; larger ones at a few hundred offsets spread over the file
    // plus every byte of the last 64 (where the closing blocks are).
    for name in ["binji-start.pexe", "binji-bitcast.pexe", "binji-main.pexe"] {
        let Some(data) = common::real_pexe(name) else {
            continue;
        };
        check_cuts(name, &data, 0..data.len());
    }
    for name in ["binji-puts.pexe", "lpdevs-part2.pexe"] {
        let Some(data) = common::real_pexe(name) else {
            continue;
        };
        let len = data.len();
        let spread = (0..300).map(|i| i * len / 300 + i % 7);
        let tail = len.saturating_sub(64)..len;
        let n = check_cuts(name, &data, spread.chain(tail));
        assert!(n > 300, "{name}: only {n} cuts checked");
    }
}

// ---------------------------------------------------------------------------------------
// Abbreviations and arrays.

#[test]
fn abbreviation_operand_width_over_64() {
    for (enc, width) in [(1u64, 65u64), (2, 65), (1, 100), (2, 1000)] {
        let mut r = Raw::new();
        r.enter(8, 2).abbrev_id(2).vbr(2, 5); // DEFINE_ABBREV, 2 operands
        r.fixed(1, 1).vbr(1, 8); // literal 1
        r.fixed(0, 1).fixed(enc, 3).vbr(width, 5); // fixed/vbr(width)
        let msg = reject(&format!("operand width {width}"), &r.finish());
        assert!(msg.contains("module block (id 8)"), "{msg}");
        assert!(msg.contains(&width.to_string()), "{msg}");
    }
}

#[test]
fn abbreviation_id_width_over_the_limit() {
    for width in [33u64, 64, 65, 1000] {
        let mut r = Raw::new();
        r.enter(8, 2).enter(17, width);
        let msg = reject(&format!("block abbreviation width {width}"), &r.finish());
        assert!(msg.contains(&width.to_string()), "{msg}");
    }
    let mut r = Raw::new();
    r.enter(8, 0);
    reject("abbreviation width 0", &r.finish());
}

#[test]
fn array_longer_than_the_remaining_input() {
    for len in [1000u64, 1 << 32, 1 << 40, u64::MAX >> 1] {
        let mut r = Raw::new();
        r.enter(8, 3).abbrev_id(2).vbr(3, 5); // <fixed(4), array(fixed(8))>
        r.fixed(0, 1).fixed(1, 3).vbr(4, 5);
        r.fixed(0, 1).fixed(3, 3);
        r.fixed(0, 1).fixed(1, 3).vbr(8, 5);
        r.abbrev_id(4).fixed(1, 4).vbr(len, 6).fixed(0xab, 8);
        let data = r.finish();
        let msg = quickly("array", Duration::from_secs(2), || {
            reject_record(&format!("array of {len}"), &data)
        });
        assert!(msg.contains(&len.to_string()), "{msg}");
    }
}

#[test]
fn unabbreviated_record_with_too_many_operands() {
    for n in [100u64, 1 << 32, u64::MAX >> 2] {
        let mut r = Raw::new();
        r.enter(8, 2).abbrev_id(3).vbr(1, 6).vbr(n, 6).vbr(1, 6);
        let data = r.finish();
        quickly("operands", Duration::from_secs(2), || {
            reject_record(&format!("{n} operands"), &data)
        });
    }
}

#[test]
fn blocks_nested_10000_deep() {
    // 10,000 enter-block headers, each block running to the end of the file, then 10,000
    // end blocks: well-formed lengths, absurd depth.
    const DEPTH: usize = 10_000;
    let mut w = BitWriter::new();
    w.write_bytes(&Header::standard().to_bytes());
    let mut len_at = Vec::with_capacity(DEPTH);
    for i in 0..DEPTH {
        w.write(1, 2);
        w.write_vbr(if i == 0 { 8 } else { 12 }, 8);
        w.write_vbr(2, 4);
        w.align32();
        len_at.push((w.pos() / 8) as usize);
        w.write(0, 32);
    }
    let mut ends = Vec::with_capacity(DEPTH);
    for _ in 0..DEPTH {
        w.write(0, 2);
        w.align32();
        ends.push(w.pos() / 8);
    }
    // Block i (0 = outermost) ends with the (DEPTH - 1 - i)-th end block.
    for (i, &at) in len_at.iter().enumerate() {
        let end = ends[DEPTH - 1 - i];
        w.patch_u32(at, ((end - at as u64 - 4) / 4) as u32);
    }
    let data = w.finish();
    let msg = quickly("deep nesting", Duration::from_secs(2), || {
        reject("10,000 nested blocks", &data)
    });
    assert!(msg.contains("block"), "{msg}");
    // The container layer on its own stops at its depth limit, long before 10,000.
    let e = quickly("deep nesting (bitstream)", Duration::from_secs(2), || {
        pexe2wasm::bitstream::reencode(&data).unwrap_err()
    });
    let msg = e.to_string();
    assert_one_line("10,000 nested blocks (bitstream)", &msg);
    assert!(msg.contains("nested deeper"), "{msg}");
    assert!(msg.contains("function block (id 12)"), "{msg}");
}

#[test]
fn block_longer_than_the_input() {
    let mut data = build(&factorial());
    // The module block's length word is at byte 20.
    data[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    reject("module length", &data);
    let mut data = build(&factorial());
    data[20..24].copy_from_slice(&1u32.to_le_bytes());
    reject("module length too short", &data);
}

// ---------------------------------------------------------------------------------------
// Claimed counts: rejected quickly, nothing allocated from the claim
// (tests/malformed_memory.rs measures the memory).

/// The count at `old` (a record's code and its count) replaced by each of `counts`: the
/// reader rejects it within a second, naming `what`.
fn rejects_claimed_count(label: &str, what: &str, old: [u64; 2], counts: &[u64]) {
    for &count in counts {
        let data = build(&replace(factorial(), &old, &[old[0], count]));
        quickly(label, Duration::from_secs(1), || {
            reject_record(&format!("{count} {what}"), &data)
        });
    }
}

#[test]
fn count_of_2_pow_32_types() {
    let counts = [1u64 << 32, u32::MAX as u64, u64::MAX];
    rejects_claimed_count("types count", "types", [1, 4], &counts);
}

#[test]
fn count_of_2_pow_32_basic_blocks() {
    let counts = [1u64 << 32, u32::MAX as u64, u64::MAX];
    rejects_claimed_count("blocks count", "basic blocks", [1, 3], &counts);
}

#[test]
fn count_of_2_pow_32_globals() {
    let counts = [1u64 << 32, u32::MAX as u64];
    rejects_claimed_count("globals count", "globals", [5, 0], &counts);
}

// ---------------------------------------------------------------------------------------
// Value ids and types.

#[test]
fn value_ids_out_of_range() {
    let cases: &[(&str, &[u64], &[u64])] = &[
        ("ret operand", &[10, 2], &[10, 1000]),
        ("icmp operand", &[28, 2, 1, 32], &[28, 200, 1, 32]),
        ("call target", &[34, 0, 5, 1], &[34, 0, 500, 1]),
        ("call argument", &[34, 0, 5, 1], &[34, 0, 5, 1 << 33]),
        ("branch target", &[11, 1, 2, 1], &[11, 1, 7, 1]),
        ("function type id", &[8, 2, 0, 0, 0], &[8, 99, 0, 0, 0]),
        ("param type id", &[21, 0, 0, 0], &[21, 0, 0, 9]),
        ("constant type id", &[1, 0], &[1, 77]),
    ];
    for (what, old, new) in cases {
        let data = build(&replace(factorial(), old, new));
        reject_record(what, &data);
    }
}

#[test]
fn wrongly_typed_operands() {
    let cases: &[(&str, &[u64], &[u64])] = &[
        // br i1 %p0 (an i32)
        ("branch condition", &[11, 1, 2, 1], &[11, 1, 2, 3]),
        // ret i32 %v0 (an i1)
        ("return value", &[10, 2], &[10, 1]),
        // mul i32 %p0, %v0 (an i1)
        ("binop operands", &[2, 5, 1, 2], &[2, 5, 3, 2]),
        // call @f0(%v0) with an i1 for the i32 parameter
        ("call argument", &[34, 0, 5, 1], &[34, 0, 5, 2]),
        // call @f0() with no argument
        ("call arity", &[34, 0, 5, 1], &[34, 0, 5]),
    ];
    for (what, old, new) in cases {
        let data = build(&replace(factorial(), old, new));
        reject(what, &data);
    }
}

// ---------------------------------------------------------------------------------------
// Fuzzer findings, as focused tests.

/// Found by `scripts/fuzz.sh decode_verify` in its first minute: a phi operand whose
/// sign-rotated relative id decodes to i64::MIN (the encoding of -0) overflowed the
/// subtraction that makes it absolute (a panic with overflow checks on).
#[test]
fn fuzz_phi_operand_i64_min() {
    for rotated in [1u64, u64::MAX, u64::MAX - 1, 1 << 63] {
        // %v1 = phi i32 [<rotated>, %b0] in place of the sub.
        let data = build(&replace(factorial(), &[2, 3, 2, 1], &[16, 0, rotated, 0]));
        reject_record(&format!("phi operand {rotated}"), &data);
    }
}

// ---------------------------------------------------------------------------------------
// Random damage never panics (a tiny deterministic fuzzer; cargo-fuzz does the real work).

#[test]
fn random_bit_flips_never_panic() {
    let mut inputs = vec![("factorial".to_string(), build(&factorial_start()))];
    for name in ["binji-start.pexe", "binji-main.pexe"] {
        if let Some(d) = common::real_pexe(name) {
            inputs.push((name.to_string(), d));
        }
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut rejected = 0;
    for (name, data) in &inputs {
        for round in 0..2000 {
            let mut d = data.clone();
            for _ in 0..1 + next() % 4 {
                let bit = (next() % (d.len() as u64 * 8)) as usize;
                d[bit / 8] ^= 1 << (bit % 8);
            }
            if round % 10 == 0 {
                d.truncate((next() % d.len() as u64) as usize);
            }
            let what = format!("{name} mutation {round}");
            match std::panic::catch_unwind(|| decode(&d)) {
                Err(_) => panic!("{what}: decode panicked"),
                Ok(Err(e)) => {
                    check_decode_error(&what, &d, &e);
                    rejected += 1;
                }
                Ok(Ok(m)) => {
                    let r = std::panic::catch_unwind(|| (verify_finding(&m), runnable_finding(&m)));
                    assert!(r.is_ok(), "{what}: verification panicked");
                }
            }
        }
    }
    assert!(rejected > 0, "no mutation was rejected");
}

/// Inputs found by `scripts/fuzz.sh` (copied from `fuzz/artifacts/` into
/// `fuzz/regressions/`): decoding them must not panic, and errors must be one line.
#[test]
fn fuzz_regressions() {
    let dir = pexe2wasm_testkit::repo_path("fuzz/regressions");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("no {} directory: nothing to replay", dir.display());
        return;
    };
    for e in entries {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "md") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        let what = path.display().to_string();
        match std::panic::catch_unwind(|| decode(&data)) {
            Err(_) => panic!("{what}: decode panicked"),
            Ok(Err(e)) => {
                check_decode_error(&what, &data, &e);
            }
            Ok(Ok(m)) => {
                let r = std::panic::catch_unwind(|| (verify_finding(&m), runnable_finding(&m)));
                assert!(r.is_ok(), "{what}: verification panicked");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The fuzzer-found malformed pexes of pnacl.c's regression suite: one test per file.

/// Rejected by decode, or by the runnable check (no `_start`). Returns the message.
fn regress_rejected(n: u32) -> Option<String> {
    let name = format!("binji-regress-{n}-malformed.pexe");
    let data = common::real_pexe(&name)?;
    let msg = match decode(&data) {
        Err(e) => check_decode_error(&name, &data, &e),
        Ok(m) => match verify_finding(&m).or_else(|| runnable_finding(&m)) {
            Some(f) => f,
            None => panic!("{name}: accepted, but it must be rejected"),
        },
    };
    assert_one_line(&name, &msg);
    eprintln!("{name}: {msg}");
    cli_rejects(&name);
    Some(msg)
}

#[test]
fn binji_regress_1_bad_function_id() {
    regress_rejected(1);
}

#[test]
fn binji_regress_2_no_start() {
    regress_rejected(2);
}

#[test]
fn binji_regress_3_either_way_without_panic() {
    let name = "binji-regress-3-malformed.pexe";
    let Some(data) = common::real_pexe(name) else {
        return;
    };
    match decode(&data) {
        Err(e) => {
            check_decode_error(name, &data, &e);
        }
        Ok(m) => {
            let _ = verify_finding(&m);
            let _ = runnable_finding(&m);
        }
    }
    let out = run_cli(&["verify", &corpus_path(name)], None);
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "{name}: exit status {:?}",
        out.status
    );
}

#[test]
fn binji_regress_4_unresolvable_forward_type() {
    regress_rejected(4);
}

#[test]
fn binji_regress_5_bad_function_id() {
    regress_rejected(5);
}

#[test]
fn binji_regress_6_no_functions() {
    regress_rejected(6);
}

// ---------------------------------------------------------------------------------------
// The command line on bad input: exit code 1, one line on stderr.

fn corpus_path(name: &str) -> String {
    common::real_corpus_dir()
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn run_cli(args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pexe2wasm");
    if let Some(input) = stdin {
        let mut si = child.stdin.take().unwrap();
        // The program may stop reading early; a broken pipe here is fine.
        let _ = si.write_all(input);
    }
    child.wait_with_output().unwrap()
}

/// Checks the CLI output for a rejected input: exit 1, nothing on stdout, one stderr line
/// `error: FILE: ...`.
fn assert_cli_error(what: &str, out: &std::process::Output, file: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{what}: exit status {:?}, stderr {stderr}",
        out.status
    );
    assert_eq!(
        stderr.lines().count(),
        1,
        "{what}: stderr is not one line: {stderr}"
    );
    assert!(
        stderr.starts_with(&format!("error: {file}: ")),
        "{what}: stderr does not start with 'error: {file}: ': {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    stderr
}

fn cli_rejects(name: &str) {
    let path = corpus_path(name);
    let out = run_cli(&["verify", &path], None);
    assert_cli_error(name, &out, &path);
}

#[test]
fn cli_rejects_truncated_input_on_stdin() {
    let data = build(&factorial_start());
    for cut in [0usize, 3, 10, 17, 40, 100, 159] {
        for cmd in ["info", "verify"] {
            let out = run_cli(&[cmd, "-"], Some(&data[..cut]));
            let what = format!("{cmd} of factorial cut at {cut}");
            let line = assert_cli_error(&what, &out, "<stdin>");
            assert!(line.contains("bit "), "{what}: {line}");
        }
    }
}

#[test]
fn cli_rejects_malformed_files() {
    let dir = std::env::temp_dir().join(format!("pexe2wasm-malformed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "bad-magic.pexe",
            b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0".to_vec(),
        ),
        (
            "huge-count.pexe",
            build(&replace(factorial_start(), &[1, 4], &[1, 1 << 32])),
        ),
        (
            "bad-value.pexe",
            build(&replace(factorial_start(), &[10, 2], &[10, 1000])),
        ),
    ];
    for (name, data) in cases {
        let path: PathBuf = dir.join(name);
        std::fs::write(&path, &data).unwrap();
        let p = path.to_string_lossy().into_owned();
        for cmd in ["info", "verify"] {
            let out = run_cli(&[cmd, &p], None);
            let line = assert_cli_error(&format!("{cmd} {name}"), &out, &p);
            // A file with ELF's magic is named as an ELF file; the others by their bit.
            let want = if name == "bad-magic.pexe" {
                "an ELF file, not a pexe ("
            } else {
                "bit "
            };
            assert!(line.contains(want), "{cmd} {name}: {line}");
            assert!(out.stdout.is_empty(), "{cmd} {name}: wrote to stdout");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same answer from every command: a file `convert` rejects, `verify` rejects with the
/// same line; a file that does not decode, `dis` names at the same bit as `verify`. Both
/// files are real pexes with two bits flipped (found by a hostile-input campaign).
#[test]
fn every_command_gives_the_same_answer() {
    let s = common::Scratch::new("same-answer");
    let flipped = |name: &str, bits: &[usize]| -> Option<std::path::PathBuf> {
        let mut data = common::real_pexe(name)?;
        for &b in bits {
            data[b / 8] ^= 1 << (b % 8);
        }
        let path = s.join(name);
        std::fs::write(&path, &data).unwrap();
        Some(path)
    };
    let err_line = |args: &[&std::ffi::OsStr]| -> (Option<i32>, String) {
        let o = Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).trim_end().to_string(),
        )
    };
    let null = std::ffi::OsStr::new("/dev/null");
    // A frame no wasm stack can hold: convert and verify reject it the same way.
    if let Some(p) = flipped("binji-puts.pexe", &[98672, 175557]) {
        let v = err_line(&["verify".as_ref(), p.as_os_str()]);
        let c = err_line(&["convert".as_ref(), p.as_os_str(), "-o".as_ref(), null]);
        assert_eq!(v.0, Some(1), "{}", v.1);
        assert_eq!(v, c);
        assert!(v.1.contains("stack frame of 4294966160 bytes"), "{}", v.1);
    }
    // An unknown record code after a non-canonical stretch: dis names the record, as
    // verify does, not the packing.
    if let Some(p) = flipped("binji-nbody.pexe", &[281393, 192938]) {
        let v = err_line(&["verify".as_ref(), p.as_os_str()]);
        let d = err_line(&["dis".as_ref(), p.as_os_str(), "-o".as_ref(), null]);
        assert_eq!(v.0, Some(1));
        assert_eq!(v, d);
        assert!(v.1.contains("bit 281384"), "{}", v.1);
    }
}

/// A file that decodes but whose bits are not packed the way the writer packs them: `dis`
/// says where, as a bit position like every other error.
#[test]
fn dis_names_the_bit_where_packing_stops_being_canonical() {
    let data = std::fs::read(pexe2wasm_testkit::repo_path("fixtures/hello.pexe")).unwrap();
    // Find a bit whose flip still decodes but no longer re-encodes the same.
    let mut found = None;
    for bit in 0..data.len() * 8 {
        let mut d = data.clone();
        d[bit / 8] ^= 1 << (bit % 8);
        if decode(&d).is_ok() && pexe2wasm::bitstream::reencode(&d).is_ok_and(|r| r != d) {
            found = Some((bit, d));
            break;
        }
    }
    let Some((bit, d)) = found else {
        panic!("no flip of hello.pexe decodes but re-encodes differently");
    };
    let s = common::Scratch::new("noncanonical");
    s.put("x.pexe", &d);
    let o = Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
        .args([
            "dis".as_ref(),
            s.join("x.pexe").as_os_str(),
            "-o".as_ref(),
            "/dev/null".as_ref(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not canonically encoded"), "{err}");
    // The first differing bit is at or after the flipped one's byte.
    let named: u64 = err
        .split("bit ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no bit position in {err}"));
    assert!(named / 8 >= bit as u64 / 8 - 8, "{err} (flipped bit {bit})");
}
