//! Integer binary operators and comparisons at every width.

use super::*;

pub const BINOPS: [&str; 13] = [
    "add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor",
];

/// Interesting values of a `w`-bit integer.
pub fn values(w: u32) -> Vec<u64> {
    let m = mask(w);
    let mut v = vec![
        0,
        1,
        2,
        3,
        m >> 1,       // largest signed
        (m >> 1) + 1, // smallest signed
        m,            // -1
        m - 6,        // -7
        0x5a5a_5a5a_5a5a_5a5a & m,
        0x1234_5678_9abc_def1 & m,
    ];
    v.dedup();
    v
}

/// `op` at width `w`; `None` where LLVM leaves the result undefined or the program would
/// trap (division by zero, signed overflow of division, shifts by the width or more).
pub fn binop(op: &str, w: u32, a: u64, b: u64) -> Option<u64> {
    let m = mask(w);
    let (a, b) = (a & m, b & m);
    let (sa, sb) = (sext(a, w), sext(b, w));
    let min = sext(1 << (w - 1), w);
    let r = match op {
        "add" => a.wrapping_add(b),
        "sub" => a.wrapping_sub(b),
        "mul" => a.wrapping_mul(b),
        "udiv" | "urem" | "sdiv" | "srem" if b == 0 => return None,
        "udiv" => a / b,
        "urem" => a % b,
        "sdiv" | "srem" if sa == min && sb == -1 => return None,
        "sdiv" => (sa / sb) as u64,
        "srem" => (sa % sb) as u64,
        "shl" | "lshr" | "ashr" if b >= w as u64 => return None,
        "shl" => a << b,
        "lshr" => a >> b,
        "ashr" => (sa >> b) as u64,
        "and" => a & b,
        "or" => a | b,
        "xor" => a ^ b,
        _ => unreachable!("{op}"),
    };
    Some(r & m)
}

/// The operand pairs for `op` at width `w`.
fn pairs(op: &str, w: u32) -> Vec<(u64, u64)> {
    let vals = values(w);
    let mut v = Vec::new();
    if matches!(op, "shl" | "lshr" | "ashr") {
        for &a in &vals {
            for b in [0, 1, 3, w as u64 / 2, w as u64 - 1] {
                v.push((a, b));
            }
        }
    } else {
        for &a in &vals {
            for &b in &vals {
                v.push((a, b));
            }
        }
    }
    v.retain(|&(a, b)| binop(op, w, a, b).is_some());
    v
}

/// The input record of a pair: two containers (narrow values carry garbage).
fn pair_input(w: u32, a: u64, b: u64, i: usize) -> Vec<u8> {
    if w == 64 {
        [a.to_le_bytes(), b.to_le_bytes()].concat()
    } else {
        [
            raw32(a, w, 2 * i).to_le_bytes(),
            raw32(b, w, 2 * i + 1).to_le_bytes(),
        ]
        .concat()
    }
}

/// What `Fb::store_int_result` writes for a `w`-bit result `r`.
pub fn int_result(w: u32, r: u64) -> Vec<Want> {
    match w {
        64 => vec![u64w(r)],
        32 => vec![u32w(r as u32)],
        _ => vec![
            u32w((r & mask(w)) as u32),
            u32w(sext(r & mask(w), w) as u32),
        ],
    }
}

fn binop_kernel(op: &str, t: &str, w: u32) -> Kernel {
    let mut f = Fb::new();
    let a = f.load_int(w, "%p0", 0);
    let b = f.load_int(w, "%p0", container(w));
    let r = f.v(format!("{op} {t} {a}, {b}"));
    f.store_int_result(w, &r, "%p1", 0);
    f.s("ret void");
    let cases = if w == 1 {
        // i1: and, or, xor over both values, with garbage in the containers.
        let mut v = Vec::new();
        for (i, (a, b)) in [(0, 0), (0, 1), (1, 0), (1, 1)].into_iter().enumerate() {
            let r = binop(op, 1, a, b).unwrap();
            v.push(Case {
                label: format!("{a}, {b}"),
                input: pair_input(1, a, b, i),
                want: int_result(1, r),
            });
        }
        v
    } else {
        pairs(op, w)
            .into_iter()
            .enumerate()
            .map(|(i, (a, b))| Case {
                label: format!("{a:#x}, {b:#x}"),
                input: pair_input(w, a, b, i),
                want: int_result(w, binop(op, w, a, b).unwrap()),
            })
            .collect()
    };
    Kernel::new(format!("{op}_{t}"), f.finish(), cases)
}

pub fn binops_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "int_binops",
        "Integer binary operators at i1 (and, or, xor), i8, i16, i32 and i64. Narrow operands\n\
         come from i32 containers with garbage in the upper bits (truncated by the kernel);\n\
         narrow results are stored zero- and sign-extended to i32. Cases whose result LLVM\n\
         leaves undefined (division by zero, MIN / -1, shifts by the width or more) are left out.",
    );
    for op in ["and", "or", "xor"] {
        fx.kernel(binop_kernel(op, "i1", 1));
    }
    for (t, w) in INT_TYPES {
        for op in BINOPS {
            fx.kernel(binop_kernel(op, t, w));
        }
    }
    fx
}

pub const ICMPS: [&str; 10] = [
    "eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle",
];

/// What `icmp pred` gives on the low `w` bits of `a` and `b` (compared unsigned and
/// signed); also the reference of the SIMD lane compares and of `tests/lower_semantics.rs`.
pub fn icmp(pred: &str, w: u32, a: u64, b: u64) -> bool {
    let (ua, ub) = (a & mask(w), b & mask(w));
    let (sa, sb) = (sext(ua, w), sext(ub, w));
    match pred {
        "eq" => ua == ub,
        "ne" => ua != ub,
        "ugt" => ua > ub,
        "uge" => ua >= ub,
        "ult" => ua < ub,
        "ule" => ua <= ub,
        "sgt" => sa > sb,
        "sge" => sa >= sb,
        "slt" => sa < sb,
        "sle" => sa <= sb,
        _ => unreachable!("{pred}"),
    }
}

pub fn icmp_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "icmp",
        "Every icmp predicate at i8, i16, i32 and i64 (narrow operands with garbage in their\n\
         containers), and eq/ne at i1. Each result is stored as one byte (zext i1 to i8).",
    );
    let mut widths = vec![("i1", 1)];
    widths.extend(INT_TYPES);
    for (t, w) in widths {
        for pred in ICMPS {
            if w == 1 && !matches!(pred, "eq" | "ne") {
                continue;
            }
            let mut f = Fb::new();
            let a = f.load_int(w, "%p0", 0);
            let b = f.load_int(w, "%p0", container(w));
            let r = f.v(format!("icmp {pred} {t} {a}, {b}"));
            let z = f.v(format!("zext i1 {r} to i8"));
            f.store("i8", &z, "%p1", 0);
            f.s("ret void");
            let vals = if w == 1 { vec![0, 1] } else { values(w) };
            let mut cases = Vec::new();
            for &a in &vals {
                for &b in &vals {
                    let i = cases.len();
                    cases.push(Case {
                        label: format!("{a:#x}, {b:#x}"),
                        input: pair_input(w, a, b, i),
                        want: vec![u8w(icmp(pred, w, a, b) as u8)],
                    });
                }
            }
            fx.kernel(Kernel::new(format!("icmp_{pred}_{t}"), f.finish(), cases));
        }
    }
    fx
}
