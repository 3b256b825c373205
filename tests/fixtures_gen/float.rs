//! Floating-point comparisons (every fcmp predicate, NaN included) and arithmetic.

use super::*;

pub const FCMPS: [&str; 16] = [
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "uno", "ueq", "ugt", "uge", "ult",
    "ule", "une", "true",
];

pub fn fcmp(pred: &str, a: f64, b: f64) -> bool {
    let uno = a.is_nan() || b.is_nan();
    match pred {
        "false" => false,
        "oeq" => !uno && a == b,
        "ogt" => !uno && a > b,
        "oge" => !uno && a >= b,
        "olt" => !uno && a < b,
        "ole" => !uno && a <= b,
        "one" => !uno && a != b,
        "ord" => !uno,
        "uno" => uno,
        "ueq" => uno || a == b,
        "ugt" => uno || a > b,
        "uge" => uno || a >= b,
        "ult" => uno || a < b,
        "ule" => uno || a <= b,
        "une" => uno || a != b,
        "true" => true,
        _ => unreachable!("{pred}"),
    }
}

/// Float types: (name, byte size).
pub const FLOATS: [(&str, usize); 2] = [("float", 4), ("double", 8)];

/// A value of a float type as bytes (f32 values are rounded from f64).
pub fn fbytes(t: &str, x: f64) -> Vec<u8> {
    if t == "float" {
        (x as f32).to_le_bytes().to_vec()
    } else {
        x.to_le_bytes().to_vec()
    }
}

pub fn fwant(t: &str, x: f64) -> Want {
    if t == "float" {
        Want::F32(x as f32)
    } else {
        Want::F64(x)
    }
}

pub fn fcmp_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "fcmp",
        "Every fcmp predicate on float and double over zeros of both signs, finite values,\n\
         infinities, a denormal and NaN (ordered predicates are false on NaN, unordered ones\n\
         true). Each result is stored as one byte.",
    );
    let vals = [
        0.0,
        -0.0,
        1.0,
        -1.5,
        1e-40,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for (t, size) in FLOATS {
        for pred in FCMPS {
            let mut f = Fb::new();
            let a = f.load(t, "%p0", 0);
            let b = f.load(t, "%p0", size);
            let r = f.v(format!("fcmp {pred} {t} {a}, {b}"));
            let z = f.v(format!("zext i1 {r} to i8"));
            f.store("i8", &z, "%p1", 0);
            f.s("ret void");
            let mut cases = Vec::new();
            for &a in &vals {
                for &b in &vals {
                    // Compare in the type's own precision (1e-40 is a float denormal).
                    let (ra, rb) = if t == "float" {
                        ((a as f32) as f64, (b as f32) as f64)
                    } else {
                        (a, b)
                    };
                    cases.push(Case {
                        label: format!("{a:?}, {b:?}"),
                        input: [fbytes(t, a), fbytes(t, b)].concat(),
                        want: vec![u8w(fcmp(pred, ra, rb) as u8)],
                    });
                }
            }
            fx.kernel(Kernel::new(format!("fcmp_{pred}_{t}"), f.finish(), cases));
        }
    }
    fx
}

pub fn arith_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "float_arith",
        "fadd, fsub, fmul, fdiv and frem (C fmod) on float and double, with signed zeros,\n\
         denormals, huge values, infinities and NaN. Results must be bit-exact (IEEE\n\
         round-to-nearest-even); a NaN result may be any NaN.",
    );
    let vals = [
        0.0,
        -0.0,
        1.0,
        -1.5,
        3.25,
        0.1,
        7.0,
        1e30,
        -3e38,
        1e-40,
        1e-310,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for (t, size) in FLOATS {
        for op in ["fadd", "fsub", "fmul", "fdiv", "frem"] {
            let mut f = Fb::new();
            let a = f.load(t, "%p0", 0);
            let b = f.load(t, "%p0", size);
            let r = f.v(format!("{op} {t} {a}, {b}"));
            f.store(t, &r, "%p1", 0);
            f.s("ret void");
            let mut cases = Vec::new();
            for &a in &vals {
                for &b in &vals {
                    let want = if t == "float" {
                        let (a, b) = (a as f32, b as f32);
                        Want::F32(match op {
                            "fadd" => a + b,
                            "fsub" => a - b,
                            "fmul" => a * b,
                            "fdiv" => a / b,
                            _ => a % b,
                        })
                    } else {
                        Want::F64(match op {
                            "fadd" => a + b,
                            "fsub" => a - b,
                            "fmul" => a * b,
                            "fdiv" => a / b,
                            _ => a % b,
                        })
                    };
                    cases.push(Case {
                        label: format!("{a:?}, {b:?}"),
                        input: [fbytes(t, a), fbytes(t, b)].concat(),
                        want: vec![want],
                    });
                }
            }
            fx.kernel(Kernel::new(format!("{op}_{t}"), f.finish(), cases));
        }
    }
    fx
}
