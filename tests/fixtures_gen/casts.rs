//! Every cast: integer truncations and extensions, float <-> integer conversions (NaN and
//! out-of-range inputs included), fptrunc, fpext and bitcasts.

use super::float::{fbytes, fwant, FLOATS};
use super::*;

const ALL_INTS: [(&str, u32); 5] = [("i1", 1), ("i8", 8), ("i16", 16), ("i32", 32), ("i64", 64)];

/// Raw 64-bit inputs: every boundary of every width, and mixed patterns.
const RAW: [u64; 18] = [
    0,
    1,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    0x8000_0000_0000_0000,
    u64::MAX,
    0x0123_4567_89ab_cdef,
    0xfedc_ba98_7654_3211,
];

/// Emits: load the i64 at %p0 and truncate it to `w` bits (a narrow value carries the
/// rest of the i64's low 32 bits as garbage in its container).
fn load_source(f: &mut Fb, w: u32) -> String {
    let x = f.load("i64", "%p0", 0);
    if w == 64 {
        x
    } else {
        f.v(format!("trunc i64 {x} to i{w}"))
    }
}

/// Emits the stores of a `w`-bit integer result: zext to i64 at +0 and sext to i64 at +8
/// (for i64, the value twice).
fn store_result16(f: &mut Fb, w: u32, r: &str) {
    if w == 64 {
        f.store("i64", r, "%p1", 0);
        f.store("i64", r, "%p1", 8);
    } else {
        let z = f.v(format!("zext i{w} {r} to i64"));
        f.store("i64", &z, "%p1", 0);
        let s = f.v(format!("sext i{w} {r} to i64"));
        f.store("i64", &s, "%p1", 8);
    }
}

fn want16(w: u32, r: u64) -> Vec<Want> {
    let r = r & mask(w);
    vec![u64w(r), u64w(sext(r, w) as u64)]
}

pub fn int_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "casts_int",
        "trunc, zext and sext between every pair of integer widths (i1 to i64) where the\n\
         cast exists, and sitofp/uitofp from every integer width to float and double. Sources\n\
         are truncated from an i64, so narrow ones carry garbage; integer results are stored\n\
         both zero- and sign-extended to i64.",
    );
    for (st, sw) in ALL_INTS {
        for (dt, dw) in ALL_INTS {
            let ops: &[&str] = if dw < sw {
                &["trunc"]
            } else if dw > sw {
                &["zext", "sext"]
            } else {
                &[]
            };
            for &op in ops {
                let mut f = Fb::new();
                let x = load_source(&mut f, sw);
                let r = f.v(format!("{op} {st} {x} to {dt}"));
                store_result16(&mut f, dw, &r);
                f.s("ret void");
                let cases = RAW
                    .iter()
                    .map(|&raw| {
                        let v = raw & mask(sw);
                        let r = match op {
                            "trunc" | "zext" => v,
                            _ => sext(v, sw) as u64,
                        };
                        Case {
                            label: format!("{raw:#x}"),
                            input: raw.to_le_bytes().to_vec(),
                            want: want16(dw, r),
                        }
                    })
                    .collect();
                fx.kernel(Kernel::new(format!("{op}_{st}_{dt}"), f.finish(), cases));
            }
        }
    }
    for (st, sw) in ALL_INTS {
        for (ft, _) in FLOATS {
            for op in ["sitofp", "uitofp"] {
                let mut f = Fb::new();
                let x = load_source(&mut f, sw);
                let r = f.v(format!("{op} {st} {x} to {ft}"));
                f.store(ft, &r, "%p1", 0);
                f.s("ret void");
                let cases = RAW
                    .iter()
                    .map(|&raw| {
                        let v = raw & mask(sw);
                        // Rust's integer-to-float `as` rounds to nearest, ties to even, as
                        // LLVM and wasm do.
                        let want = match (op, ft) {
                            ("sitofp", "float") => Want::F32(sext(v, sw) as f32),
                            ("sitofp", _) => Want::F64(sext(v, sw) as f64),
                            (_, "float") => Want::F32(v as f32),
                            _ => Want::F64(v as f64),
                        };
                        Case {
                            label: format!("{raw:#x}"),
                            input: raw.to_le_bytes().to_vec(),
                            want: vec![want],
                        }
                    })
                    .collect();
                fx.kernel(Kernel::new(format!("{op}_{st}_{ft}"), f.finish(), cases));
            }
        }
    }
    fx
}

/// The result of fptosi/fptoui of `x` to `w` bits. In range (after truncation toward
/// zero) it is exact. Out of range and NaN, LLVM leaves the result undefined; pexe2wasm
/// defines it as wasm's saturating conversion to the container (i32 for i8..i32, i64 for
/// i64: NaN -> 0, too large -> the container's maximum, too small -> its minimum), wrapped
/// to `w` bits. Rust's float-to-int `as` is that saturating conversion.
pub fn fp_to_int(signed: bool, w: u32, x: f64, is_f32: bool) -> u64 {
    let x = if is_f32 { (x as f32) as f64 } else { x };
    let r = match (signed, w) {
        (true, 64) => (x as i64) as u64,
        (false, 64) => x as u64,
        (true, _) => (x as i32) as u32 as u64,
        (false, _) => (x as u32) as u64,
    };
    r & mask(w)
}

pub fn float_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "casts_float",
        "fptosi and fptoui from float and double to i8, i16, i32 and i64, over in-range,\n\
         boundary, out-of-range, infinite and NaN inputs (out of range and NaN: pexe2wasm's\n\
         saturate-to-the-container result, see tests/fixtures_gen/casts.rs), stored zero- and\n\
         sign-extended to i64; fptrunc and fpext (rounding, overflow to infinity, NaN);\n\
         bitcasts between i32 and float and between i64 and double, NaN payloads included.",
    );
    let vals = [
        0.0,
        -0.0,
        0.5,
        1.9,
        -1.9,
        100.5,
        -100.5,
        127.9,
        128.5,
        -128.9,
        -129.0,
        255.9,
        256.0,
        32767.5,
        32768.0,
        -32769.0,
        65535.0,
        65536.0,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        -2147483904.0,
        4294967040.0,
        4294967296.0,
        9.2e18,
        9.3e18,
        -9.3e18,
        1.8e19,
        1e30,
        -1e30,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for (ft, _) in FLOATS {
        for (it, w) in INT_TYPES {
            for op in ["fptosi", "fptoui"] {
                let mut f = Fb::new();
                let x = f.load(ft, "%p0", 0);
                let r = f.v(format!("{op} {ft} {x} to {it}"));
                store_result16(&mut f, w, &r);
                f.s("ret void");
                let cases = vals
                    .iter()
                    .map(|&x| Case {
                        label: format!("{x:?}"),
                        input: [fbytes(ft, x), vec![0; 8 - fbytes(ft, x).len()]].concat(),
                        want: want16(w, fp_to_int(op == "fptosi", w, x, ft == "float")),
                    })
                    .collect();
                fx.kernel(Kernel::new(format!("{op}_{ft}_{it}"), f.finish(), cases));
            }
        }
    }

    // fptrunc and fpext.
    let dvals = [
        1.0,
        0.1,
        -0.0,
        1.0000000596046448, // halfway between two floats: ties to even
        1.0000001788139343,
        3.4028235677973366e38, // rounds up to infinity
        3.4028234e38,
        1e300,
        -1e300,
        1e-300,
        1e-45,
        f64::INFINITY,
        f64::NAN,
    ];
    let mut f = Fb::new();
    let x = f.load("double", "%p0", 0);
    let r = f.v(format!("fptrunc double {x} to float"));
    f.store("float", &r, "%p1", 0);
    f.s("ret void");
    let cases = dvals
        .iter()
        .map(|&x| Case {
            label: format!("{x:?}"),
            input: x.to_le_bytes().to_vec(),
            want: vec![Want::F32(x as f32)],
        })
        .collect();
    fx.kernel(Kernel::new("fptrunc", f.finish(), cases));
    let mut f = Fb::new();
    let x = f.load("float", "%p0", 0);
    let r = f.v(format!("fpext float {x} to double"));
    f.store("double", &r, "%p1", 0);
    f.s("ret void");
    let cases = dvals
        .iter()
        .map(|&x| Case {
            label: format!("{x:?}"),
            input: fbytes("float", x),
            want: vec![fwant("double", (x as f32) as f64)],
        })
        .collect();
    fx.kernel(Kernel::new("fpext", f.finish(), cases));

    // Bitcasts keep every bit, NaN payloads included.
    let bits32: [u32; 7] = [
        0,
        0x8000_0000,
        0x3f80_0000,
        0x7f80_0001, // signaling NaN
        0xffc0_1234,
        0x0000_0001,
        0xdead_beef,
    ];
    let bits64: [u64; 6] = [
        0,
        0x8000_0000_0000_0000,
        0x3ff0_0000_0000_0000,
        0x7ff0_0000_0000_0001,
        0xfff8_0000_dead_beef,
        0x0123_4567_89ab_cdef,
    ];
    for (from, to) in [("i32", "float"), ("float", "i32")] {
        let mut f = Fb::new();
        let x = f.load(from, "%p0", 0);
        let r = f.v(format!("bitcast {from} {x} to {to}"));
        f.store(to, &r, "%p1", 0);
        f.s("ret void");
        let cases = bits32
            .iter()
            .map(|&b| Case {
                label: format!("{b:#010x}"),
                input: b.to_le_bytes().to_vec(),
                want: vec![u32w(b)],
            })
            .collect();
        fx.kernel(Kernel::new(
            format!("bitcast_{from}_{to}"),
            f.finish(),
            cases,
        ));
    }
    for (from, to) in [("i64", "double"), ("double", "i64")] {
        let mut f = Fb::new();
        let x = f.load(from, "%p0", 0);
        let r = f.v(format!("bitcast {from} {x} to {to}"));
        f.store(to, &r, "%p1", 0);
        f.s("ret void");
        let cases = bits64
            .iter()
            .map(|&b| Case {
                label: format!("{b:#018x}"),
                input: b.to_le_bytes().to_vec(),
                want: vec![u64w(b)],
            })
            .collect();
        fx.kernel(Kernel::new(
            format!("bitcast_{from}_{to}"),
            f.finish(),
            cases,
        ));
    }
    fx
}
