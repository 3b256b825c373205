//! Vector arithmetic, compares, selects and float operations, lane by lane: every integer
//! operator on `<16 x i8>`, `<8 x i16>` and `<4 x i32>` (with wrapping lanes, shifts by
//! per-lane and splat amounts, per-lane division), icmp/fcmp to masks, mask logic and
//! compares, select on a mask, and float arithmetic with NaN, -0.0 and infinities.
//! Expected lanes are computed here in Rust, one lane at a time.

use super::float::{fcmp, FCMPS};
use super::int::{icmp, ICMPS};
use super::*;

/// An integer vector shape: its type, element type, mask type, lane count and width.
#[derive(Clone, Copy)]
pub struct V {
    pub ty: &'static str,
    pub elem: &'static str,
    pub mask: &'static str,
    pub n: usize,
    pub w: u32,
}

pub const I8X16: V = V {
    ty: "<16 x i8>",
    elem: "i8",
    mask: "<16 x i1>",
    n: 16,
    w: 8,
};
pub const I16X8: V = V {
    ty: "<8 x i16>",
    elem: "i16",
    mask: "<8 x i1>",
    n: 8,
    w: 16,
};
pub const I32X4: V = V {
    ty: "<4 x i32>",
    elem: "i32",
    mask: "<4 x i1>",
    n: 4,
    w: 32,
};
pub const INT_SHAPES: [V; 3] = [I8X16, I16X8, I32X4];
pub const F32X4: &str = "<4 x float>";

impl V {
    /// Element size in bytes: the alignment PNaCl requires for vector loads and stores.
    pub fn align(&self) -> usize {
        (self.w / 8) as usize
    }
    /// Short name for kernels: v16i8, v8i16, v4i32.
    pub fn short(&self) -> String {
        format!("v{}{}", self.n, self.elem)
    }
}

/// Lanes (the low `w` bits of each) as little-endian bytes.
pub fn lane_bytes(lanes: &[u64], w: u32) -> Vec<u8> {
    lanes
        .iter()
        .flat_map(|&x| x.to_le_bytes()[..(w / 8) as usize].to_vec())
        .collect()
}

pub fn f32_bytes(lanes: &[f32]) -> Vec<u8> {
    lanes.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A mask's lanes as the program stores them after `sext` to `w`-bit lanes.
pub fn mask_lanes(bits: &[bool], w: u32) -> Vec<u64> {
    bits.iter().map(|&b| if b { mask(w) } else { 0 }).collect()
}

/// Emits a load of a vector of type `ty` with alignment `align` from `base + off`.
pub fn vload(f: &mut Fb, ty: &str, align: usize, base: &str, off: usize) -> String {
    let p = f.at(base, off);
    f.v(format!("load {ty}* {p}, align {align}"))
}

/// Emits a store of vector `val` of type `ty` at `base + off`.
pub fn vstore(f: &mut Fb, ty: &str, align: usize, val: &str, base: &str, off: usize) {
    let p = f.at(base, off);
    f.s(format!("store {ty} {val}, {ty}* {p}, align {align}"));
}

/// A deterministic pseudo-random sequence (xorshift64*), so the fixtures never change.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Test vectors of shape `v`: the boundary lanes (0, 1, 2, -1, -2, MIN, MAX, a pattern)
/// rotated through every lane position, then pseudo-random ones.
pub fn int_vectors(v: V, seed: u64) -> Vec<Vec<u64>> {
    let m = mask(v.w);
    let min = 1u64 << (v.w - 1);
    let special = [0, 1, 2, m, m - 1, min, min - 1, 0x5555_5555 & m, min + 1, 3];
    let mut out = Vec::new();
    for k in 0..special.len() {
        out.push(
            (0..v.n)
                .map(|i| special[(i * 3 + k) % special.len()])
                .collect(),
        );
    }
    let mut rng = Rng(seed);
    for _ in 0..6 {
        out.push((0..v.n).map(|_| rng.next() & m).collect());
    }
    out
}

/// Pairs of test vectors: each with a differently rotated partner.
pub fn int_pairs(v: V, seed: u64) -> Vec<(Vec<u64>, Vec<u64>)> {
    let vs = int_vectors(v, seed);
    let n = vs.len();
    (0..n)
        .flat_map(|i| [(i, (i + 1) % n), (i, (i * 7 + 3) % n)])
        .map(|(i, j)| (vs[i].clone(), vs[j].clone()))
        .collect()
}

const INT_OPS: [&str; 13] = [
    "add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "udiv", "sdiv", "urem", "srem",
];

/// Adjusts a right operand lane so the operation is defined: shift amounts below the
/// width, divisors nonzero, no signed MIN / -1.
fn defined_rhs(op: &str, w: u32, a: u64, b: u64) -> u64 {
    let m = mask(w);
    match op {
        "shl" | "lshr" | "ashr" => b % w as u64,
        "udiv" | "urem" if b == 0 => 1,
        "sdiv" | "srem" if b == 0 => 1,
        "sdiv" | "srem" if b == m && a == 1 << (w - 1) => 1,
        _ => b,
    }
}

/// One lane of an integer operator, in `w` bits.
fn int_lane(op: &str, w: u32, a: u64, b: u64) -> u64 {
    let m = mask(w);
    let (sa, sb) = (sext(a, w), sext(b, w));
    let r = match op {
        "add" => a.wrapping_add(b),
        "sub" => a.wrapping_sub(b),
        "mul" => a.wrapping_mul(b),
        "and" => a & b,
        "or" => a | b,
        "xor" => a ^ b,
        "shl" => a << b,
        "lshr" => a >> b,
        "ashr" => (sa >> b) as u64,
        "udiv" => a / b,
        "urem" => a % b,
        "sdiv" => (sa / sb) as u64,
        "srem" => (sa % sb) as u64,
        _ => unreachable!("{op}"),
    };
    r & m
}

fn int_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "simd_int",
        "Every integer operator on <16 x i8>, <8 x i16> and <4 x i32>, lane by lane: add, sub\n\
         and mul wrap around per lane; shl, lshr and ashr by a vector of different amounts\n\
         and by a splat amount; udiv, sdiv, urem, srem per lane (divisors nonzero); and, or,\n\
         xor. Lanes cover 0, 1, -1, MIN, MAX and pseudo-random values.",
    );
    for (si, v) in INT_SHAPES.into_iter().enumerate() {
        for op in INT_OPS {
            let mut f = Fb::new();
            let a = vload(&mut f, v.ty, v.align(), "%p0", 0);
            let b = vload(&mut f, v.ty, v.align(), "%p0", 16);
            let r = f.v(format!("{op} {} {a}, {b}", v.ty));
            vstore(&mut f, v.ty, v.align(), &r, "%p1", 0);
            f.s("ret void");
            let mut pairs = int_pairs(v, 0x1234_5678 + si as u64);
            if matches!(op, "shl" | "lshr" | "ashr") {
                // Splat amounts too: the SIMD shift instruction's path.
                let n = pairs.len();
                for k in 0..n.min(2 * v.w as usize) {
                    let (a, _) = pairs[k % n].clone();
                    pairs.push((a, vec![k as u64 % v.w as u64; v.n]));
                }
            }
            let cases = pairs
                .into_iter()
                .map(|(a, b)| {
                    let b: Vec<u64> = a
                        .iter()
                        .zip(&b)
                        .map(|(&x, &y)| defined_rhs(op, v.w, x, y))
                        .collect();
                    let r: Vec<u64> = a
                        .iter()
                        .zip(&b)
                        .map(|(&x, &y)| int_lane(op, v.w, x, y))
                        .collect();
                    Case {
                        label: format!("{a:x?} {op} {b:x?}"),
                        input: [lane_bytes(&a, v.w), lane_bytes(&b, v.w)].concat(),
                        want: vec![Want::Bytes(lane_bytes(&r, v.w))],
                    }
                })
                .collect();
            fx.kernel(Kernel::new(
                format!("{op}_{}", v.short()),
                f.finish(),
                cases,
            ));
        }
    }
    fx
}

/// Float lanes for compares and arithmetic: zeros of both signs, finite values, a
/// denormal, the largest float, infinities and NaN.
pub const FLOAT_VALUES: [f32; 14] = [
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
    f32::MAX,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
];

/// Every (a, b) pair of [`FLOAT_VALUES`], four to a vector pair.
pub fn float_pairs() -> Vec<([f32; 4], [f32; 4])> {
    let mut all = Vec::new();
    for &a in &FLOAT_VALUES {
        for &b in &FLOAT_VALUES {
            all.push((a, b));
        }
    }
    all.chunks(4)
        .map(|c| {
            let mut a = [0f32; 4];
            let mut b = [0f32; 4];
            for (i, &(x, y)) in c.iter().enumerate() {
                a[i] = x;
                b[i] = y;
            }
            (a, b)
        })
        .collect()
}

fn cmp_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "simd_cmp",
        "icmp (every predicate) on <16 x i8>, <8 x i16>, <4 x i32> and fcmp (every predicate,\n\
         NaN, -0.0, infinities) on <4 x float>, each mask stored sign-extended to the lanes;\n\
         and, or, xor and compares of masks; select with a mask condition.",
    );
    for (si, v) in INT_SHAPES.into_iter().enumerate() {
        let pairs = int_pairs(v, 0x9e37_79b9 + si as u64);
        for pred in ICMPS {
            let mut f = Fb::new();
            let a = vload(&mut f, v.ty, v.align(), "%p0", 0);
            let b = vload(&mut f, v.ty, v.align(), "%p0", 16);
            let m = f.v(format!("icmp {pred} {} {a}, {b}", v.ty));
            let s = f.v(format!("sext {} {m} to {}", v.mask, v.ty));
            vstore(&mut f, v.ty, v.align(), &s, "%p1", 0);
            f.s("ret void");
            let cases = pairs
                .iter()
                .map(|(a, b)| {
                    let bits: Vec<bool> = a
                        .iter()
                        .zip(b)
                        .map(|(&x, &y)| icmp(pred, v.w, x, y))
                        .collect();
                    Case {
                        label: format!("{a:x?} {pred} {b:x?}"),
                        input: [lane_bytes(a, v.w), lane_bytes(b, v.w)].concat(),
                        want: vec![Want::Bytes(lane_bytes(&mask_lanes(&bits, v.w), v.w))],
                    }
                })
                .collect();
            fx.kernel(Kernel::new(
                format!("icmp_{pred}_{}", v.short()),
                f.finish(),
                cases,
            ));
        }

        // Masks as operands: m1 = a slt b, m2 = a ult b; logic on them, compares of them
        // (i1 true is -1 signed and 1 unsigned), and select(m1, a, b) = signed min.
        let mut f = Fb::new();
        let a = vload(&mut f, v.ty, v.align(), "%p0", 0);
        let b = vload(&mut f, v.ty, v.align(), "%p0", 16);
        let m1 = f.v(format!("icmp slt {} {a}, {b}", v.ty));
        let m2 = f.v(format!("icmp ult {} {a}, {b}", v.ty));
        let ops = [
            "and", "or", "xor", "icmp eq", "icmp ne", "icmp slt", "icmp ult", "icmp sge",
        ];
        for (k, op) in ops.iter().enumerate() {
            let r = f.v(format!("{op} {} {m1}, {m2}", v.mask));
            let s = f.v(format!("sext {} {r} to {}", v.mask, v.ty));
            vstore(&mut f, v.ty, v.align(), &s, "%p1", 16 * k);
        }
        let sel = f.v(format!(
            "select {} {m1}, {} {a}, {} {b}",
            v.mask, v.ty, v.ty
        ));
        vstore(&mut f, v.ty, v.align(), &sel, "%p1", 16 * ops.len());
        f.s("ret void");
        let cases = pairs
            .iter()
            .map(|(a, b)| {
                let m1: Vec<bool> = a
                    .iter()
                    .zip(b)
                    .map(|(&x, &y)| icmp("slt", v.w, x, y))
                    .collect();
                let m2: Vec<bool> = a
                    .iter()
                    .zip(b)
                    .map(|(&x, &y)| icmp("ult", v.w, x, y))
                    .collect();
                let mut want = Vec::new();
                for op in ops {
                    let bits: Vec<bool> = m1
                        .iter()
                        .zip(&m2)
                        .map(|(&x, &y)| match op {
                            "and" => x & y,
                            "or" => x | y,
                            "xor" => x ^ y,
                            // As i1: compare the 1-bit values.
                            _ => icmp(&op[5..], 1, x as u64, y as u64),
                        })
                        .collect();
                    want.push(Want::Bytes(lane_bytes(&mask_lanes(&bits, v.w), v.w)));
                }
                let sel: Vec<u64> = (0..v.n).map(|i| if m1[i] { a[i] } else { b[i] }).collect();
                want.push(Want::Bytes(lane_bytes(&sel, v.w)));
                Case {
                    label: format!("{a:x?}, {b:x?}"),
                    input: [lane_bytes(a, v.w), lane_bytes(b, v.w)].concat(),
                    want,
                }
            })
            .collect();
        fx.kernel(Kernel::new(
            format!("masks_{}", v.short()),
            f.finish(),
            cases,
        ));
    }

    let fpairs = float_pairs();
    for pred in FCMPS {
        let mut f = Fb::new();
        let a = vload(&mut f, F32X4, 4, "%p0", 0);
        let b = vload(&mut f, F32X4, 4, "%p0", 16);
        let m = f.v(format!("fcmp {pred} {F32X4} {a}, {b}"));
        let s = f.v(format!("sext <4 x i1> {m} to <4 x i32>"));
        vstore(&mut f, "<4 x i32>", 4, &s, "%p1", 0);
        f.s("ret void");
        let cases = fpairs
            .iter()
            .map(|(a, b)| {
                let bits: Vec<bool> = (0..4)
                    .map(|i| fcmp(pred, a[i] as f64, b[i] as f64))
                    .collect();
                Case {
                    label: format!("{a:?} {pred} {b:?}"),
                    input: [f32_bytes(a), f32_bytes(b)].concat(),
                    want: vec![Want::Bytes(lane_bytes(&mask_lanes(&bits, 32), 32))],
                }
            })
            .collect();
        fx.kernel(Kernel::new(
            format!("fcmp_{pred}_v4float"),
            f.finish(),
            cases,
        ));
    }

    // select on an fcmp mask: the ordered minimum (b where NaN is involved).
    let mut f = Fb::new();
    let a = vload(&mut f, F32X4, 4, "%p0", 0);
    let b = vload(&mut f, F32X4, 4, "%p0", 16);
    let m = f.v(format!("fcmp olt {F32X4} {a}, {b}"));
    let s = f.v(format!("select <4 x i1> {m}, {F32X4} {a}, {F32X4} {b}"));
    vstore(&mut f, F32X4, 4, &s, "%p1", 0);
    f.s("ret void");
    let cases = fpairs
        .iter()
        .map(|(a, b)| {
            // Exact bits: select moves lanes, it never computes.
            let r: Vec<f32> = (0..4)
                .map(|i| if a[i] < b[i] { a[i] } else { b[i] })
                .collect();
            Case {
                label: format!("{a:?}, {b:?}"),
                input: [f32_bytes(a), f32_bytes(b)].concat(),
                want: vec![Want::Bytes(f32_bytes(&r))],
            }
        })
        .collect();
    fx.kernel(Kernel::new("select_olt_v4float", f.finish(), cases));
    fx
}

fn float_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "simd_float",
        "fadd, fsub, fmul, fdiv and frem (C fmod, per lane) on <4 x float> over every pair of\n\
         zeros of both signs, finite values, a denormal, the largest float, infinities and NaN\n\
         (a NaN result may be any NaN); llvm.fabs.v4f32, bit-exact (NaN payloads kept, sign\n\
         cleared).",
    );
    let fpairs = float_pairs();
    for op in ["fadd", "fsub", "fmul", "fdiv", "frem"] {
        let mut f = Fb::new();
        let a = vload(&mut f, F32X4, 4, "%p0", 0);
        let b = vload(&mut f, F32X4, 4, "%p0", 16);
        let r = f.v(format!("{op} {F32X4} {a}, {b}"));
        vstore(&mut f, F32X4, 4, &r, "%p1", 0);
        f.s("ret void");
        let cases = fpairs
            .iter()
            .map(|(a, b)| Case {
                label: format!("{a:?} {op} {b:?}"),
                input: [f32_bytes(a), f32_bytes(b)].concat(),
                want: (0..4)
                    .map(|i| {
                        let (x, y) = (a[i], b[i]);
                        Want::F32(match op {
                            "fadd" => x + y,
                            "fsub" => x - y,
                            "fmul" => x * y,
                            "fdiv" => x / y,
                            _ => x % y,
                        })
                    })
                    .collect(),
            })
            .collect();
        fx.kernel(Kernel::new(format!("{op}_v4float"), f.finish(), cases));
    }

    let mut f = Fb::new();
    let a = vload(&mut f, F32X4, 4, "%p0", 0);
    let r = f.v(format!("call {F32X4} @[llvm.fabs.v4f32]({F32X4} {a})"));
    vstore(&mut f, F32X4, 4, &r, "%p1", 0);
    f.s("ret void");
    let mut bits: Vec<u32> = FLOAT_VALUES.iter().map(|x| x.to_bits()).collect();
    // Negative NaNs with payloads, and the smallest denormals.
    bits.extend([
        0xffc0_0001,
        0xff80_0123,
        0x7fa0_0000,
        0x8000_0001,
        0x0000_0001,
        0x8080_0000,
    ]);
    while !bits.len().is_multiple_of(4) {
        bits.push(0xbf80_0000);
    }
    let cases = bits
        .chunks(4)
        .map(|c| Case {
            label: format!("{c:08x?}"),
            input: c.iter().flat_map(|x| x.to_le_bytes()).collect(),
            want: vec![Want::Bytes(
                c.iter()
                    .flat_map(|x| (x & 0x7fff_ffff).to_le_bytes())
                    .collect(),
            )],
        })
        .collect();
    fx.kernel(Kernel::new("fabs_v4float", f.finish(), cases));
    fx
}

pub fn fixtures() -> Vec<Fixture> {
    vec![int_fixture(), cmp_fixture(), float_fixture()]
}
