//! Bit and math intrinsics: bswap, ctlz, cttz, ctpop, fabs, sqrt.

use super::float::{fbytes, fwant, FLOATS};
use super::*;

fn ivals(w: u32) -> Vec<u64> {
    let m = mask(w);
    let mut v = vec![
        0,
        1,
        2,
        0x80,
        0x8000 & m,
        0x0010_0000 & m,
        0x8000_0000 & m,
        1u64 << (w - 1),
        m,
        0x0102_0304_0506_0708 & m,
        0xf0f0_0f0f_ff00_1234 & m,
        0x0000_0100_0000_0000 & m,
    ];
    v.sort();
    v.dedup();
    v
}

pub fn fixture() -> Fixture {
    let mut fx = Fixture::new(
        "bits",
        "llvm.bswap (i16, i32, i64; the i16 operand carries garbage), llvm.ctlz and llvm.cttz\n\
         (i32, i64, zero input defined: is_zero_undef = false), llvm.ctpop (i32, i64),\n\
         llvm.fabs and llvm.sqrt (float, double; negative zero, infinities, NaN, denormals).",
    );
    for (t, w) in [("i16", 16u32), ("i32", 32), ("i64", 64)] {
        let mut f = Fb::new();
        let x = f.load_int(w, "%p0", 0);
        let r = f.v(format!("call {t} @[llvm.bswap.{t}]({t} {x})"));
        f.store_int_result(w, &r, "%p1", 0);
        f.s("ret void");
        let cases = ivals(w)
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let r = match w {
                    16 => (v as u16).swap_bytes() as u64,
                    32 => (v as u32).swap_bytes() as u64,
                    _ => v.swap_bytes(),
                };
                let input = if w == 64 {
                    v.to_le_bytes().to_vec()
                } else {
                    raw32(v, w, i).to_le_bytes().to_vec()
                };
                Case {
                    label: format!("{v:#x}"),
                    input,
                    want: super::int::int_result(w, r),
                }
            })
            .collect();
        fx.kernel(Kernel::new(format!("bswap_{t}"), f.finish(), cases));
    }
    for op in ["ctlz", "cttz", "ctpop"] {
        for (t, w) in [("i32", 32u32), ("i64", 64)] {
            let mut f = Fb::new();
            let x = f.load_int(w, "%p0", 0);
            let r = if op == "ctpop" {
                f.v(format!("call {t} @[llvm.{op}.{t}]({t} {x})"))
            } else {
                let no = f.c("i1", 0);
                f.v(format!("call {t} @[llvm.{op}.{t}]({t} {x}, i1 {no})"))
            };
            f.store_int_result(w, &r, "%p1", 0);
            f.s("ret void");
            let cases = ivals(w)
                .iter()
                .map(|&v| {
                    let r = match (op, w) {
                        ("ctlz", 32) => (v as u32).leading_zeros() as u64,
                        ("ctlz", _) => v.leading_zeros() as u64,
                        ("cttz", 32) => (v as u32).trailing_zeros() as u64,
                        ("cttz", _) => v.trailing_zeros() as u64,
                        _ => v.count_ones() as u64,
                    };
                    Case {
                        label: format!("{v:#x}"),
                        input: v.to_le_bytes()[..container(w)].to_vec(),
                        want: super::int::int_result(w, r),
                    }
                })
                .collect();
            fx.kernel(Kernel::new(format!("{op}_{t}"), f.finish(), cases));
        }
    }
    let fvals = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        16.0,
        -2.25,
        0.1,
        1e-40,
        1e-310,
        -1e-310,
        1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
    ];
    for (t, _) in FLOATS {
        let sfx = if t == "float" { "f32" } else { "f64" };
        for op in ["fabs", "sqrt"] {
            let mut f = Fb::new();
            let x = f.load(t, "%p0", 0);
            let r = f.v(format!("call {t} @[llvm.{op}.{sfx}]({t} {x})"));
            f.store(t, &r, "%p1", 0);
            f.s("ret void");
            let cases = fvals
                .iter()
                .map(|&x| {
                    let want = if t == "float" {
                        let x = x as f32;
                        Want::F32(if op == "fabs" { x.abs() } else { x.sqrt() })
                    } else {
                        fwant(t, if op == "fabs" { x.abs() } else { x.sqrt() })
                    };
                    Case {
                        label: format!("{x:?}"),
                        input: fbytes(t, x),
                        want: vec![want],
                    }
                })
                .collect();
            fx.kernel(Kernel::new(format!("{op}_{t}"), f.finish(), cases));
        }
    }
    fx
}
