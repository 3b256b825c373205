//! Vector casts and lanes: trunc/zext/sext between masks and lanes, int <-> float
//! conversions (NaN and out-of-range lanes), bitcasts between the 128-bit types and
//! between masks and integers; insertelement/extractelement at every constant index
//! (masks included) from an undef start; loads and stores at element alignment; vector
//! phis; calls with vector arguments and results. Expected lanes are computed here.

use super::simd::{
    f32_bytes, int_vectors, lane_bytes, mask_lanes, vload, vstore, Rng, F32X4, I32X4, INT_SHAPES, V,
};
use super::*;

fn casts_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "simd_casts",
        "trunc of lanes to a mask (bit 0 of each lane) and sext/zext of it back; sitofp and\n\
         uitofp from <4 x i32> and <4 x i1>; fptosi and fptoui to <4 x i32> and <4 x i1>\n\
         (NaN, infinities and out-of-range lanes saturate, as scalar fptosi does in\n\
         pexe2wasm); bitcasts between every pair of 128-bit types (NaN payloads kept); bitcast\n\
         of <16 x i1> and <8 x i1> to i16 and i8 and back.",
    );
    for (si, v) in INT_SHAPES.into_iter().enumerate() {
        let mut f = Fb::new();
        let a = vload(&mut f, v.ty, v.align(), "%p0", 0);
        let m = f.v(format!("trunc {} {a} to {}", v.ty, v.mask));
        let s = f.v(format!("sext {} {m} to {}", v.mask, v.ty));
        vstore(&mut f, v.ty, v.align(), &s, "%p1", 0);
        let z = f.v(format!("zext {} {m} to {}", v.mask, v.ty));
        vstore(&mut f, v.ty, v.align(), &z, "%p1", 16);
        f.s("ret void");
        let cases = int_vectors(v, 77 + si as u64)
            .into_iter()
            .map(|a| {
                let bits: Vec<bool> = a.iter().map(|x| x & 1 == 1).collect();
                let ones: Vec<u64> = bits.iter().map(|&b| b as u64).collect();
                Case {
                    label: format!("{a:x?}"),
                    input: lane_bytes(&a, v.w),
                    want: vec![
                        Want::Bytes(lane_bytes(&mask_lanes(&bits, v.w), v.w)),
                        Want::Bytes(lane_bytes(&ones, v.w)),
                    ],
                }
            })
            .collect();
        fx.kernel(Kernel::new(
            format!("trunc_ext_{}", v.short()),
            f.finish(),
            cases,
        ));
    }

    // sitofp/uitofp from <4 x i32>, and from the mask of its bit 0.
    let mut f = Fb::new();
    let a = vload(&mut f, "<4 x i32>", 4, "%p0", 0);
    let s = f.v(format!("sitofp <4 x i32> {a} to {F32X4}"));
    let u = f.v(format!("uitofp <4 x i32> {a} to {F32X4}"));
    let m = f.v(format!("trunc <4 x i32> {a} to <4 x i1>"));
    let ms = f.v(format!("sitofp <4 x i1> {m} to {F32X4}"));
    let mu = f.v(format!("uitofp <4 x i1> {m} to {F32X4}"));
    for (k, r) in [s, u, ms, mu].iter().enumerate() {
        vstore(&mut f, F32X4, 4, r, "%p1", 16 * k);
    }
    f.s("ret void");
    let cases = int_vectors(I32X4, 99)
        .into_iter()
        .map(|a| {
            let mut want = Vec::new();
            want.extend(a.iter().map(|&x| Want::F32(x as u32 as i32 as f32)));
            want.extend(a.iter().map(|&x| Want::F32(x as u32 as f32)));
            want.extend(
                a.iter()
                    .map(|&x| Want::F32(if x & 1 == 1 { -1.0 } else { 0.0 })),
            );
            want.extend(a.iter().map(|&x| Want::F32((x & 1) as f32)));
            Case {
                label: format!("{a:x?}"),
                input: lane_bytes(&a, 32),
                want,
            }
        })
        .collect();
    fx.kernel(Kernel::new("int_to_fp_v4i32", f.finish(), cases));

    // fptosi/fptoui to <4 x i32> and to <4 x i1> (stored sign-extended).
    let mut f = Fb::new();
    let a = vload(&mut f, F32X4, 4, "%p0", 0);
    let mut k = 0;
    for op in ["fptosi", "fptoui"] {
        let r = f.v(format!("{op} {F32X4} {a} to <4 x i32>"));
        vstore(&mut f, "<4 x i32>", 4, &r, "%p1", 16 * k);
        let m = f.v(format!("{op} {F32X4} {a} to <4 x i1>"));
        let s = f.v(format!("sext <4 x i1> {m} to <4 x i32>"));
        vstore(&mut f, "<4 x i32>", 4, &s, "%p1", 16 * (k + 1));
        k += 2;
    }
    f.s("ret void");
    let vals: [f32; 20] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.5,
        -2.5,
        3.0,
        -7.9,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        -2147483904.0,
        3e9,
        4294967040.0,
        4294967296.0,
        1e20,
        -1e20,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let cases = vals
        .chunks(4)
        .map(|c| {
            // Rust's float-to-int `as` saturates (NaN -> 0), as wasm's trunc_sat does.
            let s: Vec<u64> = c.iter().map(|&x| x as i32 as u32 as u64).collect();
            let u: Vec<u64> = c.iter().map(|&x| x as u32 as u64).collect();
            let sb: Vec<bool> = s.iter().map(|x| x & 1 == 1).collect();
            let ub: Vec<bool> = u.iter().map(|x| x & 1 == 1).collect();
            Case {
                label: format!("{c:?}"),
                input: f32_bytes(c),
                want: vec![
                    Want::Bytes(lane_bytes(&s, 32)),
                    Want::Bytes(lane_bytes(&mask_lanes(&sb, 32), 32)),
                    Want::Bytes(lane_bytes(&u, 32)),
                    Want::Bytes(lane_bytes(&mask_lanes(&ub, 32), 32)),
                ],
            }
        })
        .collect();
    fx.kernel(Kernel::new("fp_to_int_v4float", f.finish(), cases));

    // Bitcasts between every pair of 128-bit types keep every bit.
    let wide: [(&str, usize); 4] = [
        ("<16 x i8>", 1),
        ("<8 x i16>", 2),
        ("<4 x i32>", 4),
        (F32X4, 4),
    ];
    let mut rng = Rng(0x5eed);
    let mut blobs: Vec<Vec<u8>> = (0..4)
        .map(|_| {
            (0..2)
                .flat_map(|_| rng.next().to_le_bytes())
                .collect::<Vec<u8>>()
        })
        .collect();
    // NaNs with payloads and both signs, and -0.0, as float lanes.
    blobs.push(
        [0x7fc0_0001u32, 0xffa0_0002, 0x8000_0000, 0x7f80_0001]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
    );
    for (ft, fa) in wide {
        for (tt, ta) in wide {
            if ft == tt {
                continue;
            }
            let mut f = Fb::new();
            let a = vload(&mut f, ft, fa, "%p0", 0);
            let r = f.v(format!("bitcast {ft} {a} to {tt}"));
            vstore(&mut f, tt, ta, &r, "%p1", 0);
            f.s("ret void");
            let cases = blobs
                .iter()
                .map(|b| Case {
                    label: format!("{b:02x?}"),
                    input: b.clone(),
                    want: vec![Want::Bytes(b.clone())],
                })
                .collect();
            let name = |t: &str| t.replace(['<', '>', ' '], "");
            fx.kernel(Kernel::new(
                format!("bitcast_{}_{}", name(ft), name(tt)),
                f.finish(),
                cases,
            ));
        }
    }

    // Masks <-> integers: lane i is bit i. Masks come from icmp slt, integers from an i32
    // container with garbage above the width.
    for (v, it, iw) in [(INT_SHAPES[0], "i16", 16u32), (INT_SHAPES[1], "i8", 8)] {
        let mut f = Fb::new();
        let a = vload(&mut f, v.ty, v.align(), "%p0", 0);
        let b = vload(&mut f, v.ty, v.align(), "%p0", 16);
        let m = f.v(format!("icmp slt {} {a}, {b}", v.ty));
        let x = f.v(format!("bitcast {} {m} to {it}", v.mask));
        let z = f.v(format!("zext {it} {x} to i32"));
        f.store("i32", &z, "%p1", 0);
        let c = f.load("i32", "%p0", 32);
        let t = f.v(format!("trunc i32 {c} to {it}"));
        let m2 = f.v(format!("bitcast {it} {t} to {}", v.mask));
        let s = f.v(format!("sext {} {m2} to {}", v.mask, v.ty));
        vstore(&mut f, v.ty, v.align(), &s, "%p1", 4);
        f.s("ret void");
        let vs = int_vectors(v, 4242);
        let cases = (0..vs.len())
            .map(|i| {
                let (a, b) = (&vs[i], &vs[(i + 3) % vs.len()]);
                let bits: u64 = (0..v.n)
                    .filter(|&j| sext(a[j], v.w) < sext(b[j], v.w))
                    .map(|j| 1u64 << j)
                    .sum();
                let raw = raw32(0x9a5c_u64.rotate_left(i as u32 * 5), iw, i);
                let back: Vec<bool> = (0..v.n).map(|j| raw >> j & 1 == 1).collect();
                Case {
                    label: format!("{a:x?} slt {b:x?}, {raw:#x}"),
                    input: [
                        lane_bytes(a, v.w),
                        lane_bytes(b, v.w),
                        raw.to_le_bytes().to_vec(),
                    ]
                    .concat(),
                    want: vec![
                        u32w(bits as u32),
                        Want::Bytes(lane_bytes(&mask_lanes(&back, v.w), v.w)),
                    ],
                }
            })
            .collect();
        fx.kernel(Kernel::new(format!("bitcast_mask_{it}"), f.finish(), cases));
    }
    fx
}

fn lanes_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "simd_lanes",
        "extractelement of every lane (constant indices) of every vector type, masks\n\
         included (each stored zero-extended to i32); vectors built by insertelement from\n\
         undef in a scrambled lane order from garbage-carrying scalars; one lane replaced in\n\
         an existing vector; loads and stores at element alignment off 16-byte boundaries;\n\
         vector phis (a swap and an accumulation in a loop); calls with vector arguments\n\
         and vector and mask results.",
    );
    // Extract every lane.
    let shapes: Vec<(V, bool)> = INT_SHAPES
        .iter()
        .map(|&v| (v, false))
        .chain(INT_SHAPES.iter().map(|&v| (v, true)))
        .collect();
    for (si, &(v, as_mask)) in shapes.iter().enumerate() {
        let mut f = Fb::new();
        let a = vload(&mut f, v.ty, v.align(), "%p0", 0);
        let (src, vt, et) = if as_mask {
            let m = f.v(format!("trunc {} {a} to {}", v.ty, v.mask));
            (m, v.mask, "i1")
        } else {
            (a, v.ty, v.elem)
        };
        for i in 0..v.n {
            let c = f.i32c(i as i64);
            let e = f.v(format!("extractelement {vt} {src}, i32 {c}"));
            if et == "i32" {
                f.store("i32", &e, "%p1", 4 * i);
            } else {
                let z = f.v(format!("zext {et} {e} to i32"));
                f.store("i32", &z, "%p1", 4 * i);
            }
        }
        f.s("ret void");
        let cases = int_vectors(v, 500 + si as u64)
            .into_iter()
            .map(|a| Case {
                label: format!("{a:x?}"),
                input: lane_bytes(&a, v.w),
                want: a
                    .iter()
                    .map(|&x| u32w(if as_mask { (x & 1) as u32 } else { x as u32 }))
                    .collect(),
            })
            .collect();
        let name = if as_mask {
            format!("extract_mask_{}", v.short())
        } else {
            format!("extract_{}", v.short())
        };
        fx.kernel(Kernel::new(name, f.finish(), cases));
    }
    // Float lanes.
    let mut f = Fb::new();
    let a = vload(&mut f, F32X4, 4, "%p0", 0);
    for i in 0..4 {
        let c = f.i32c(i as i64);
        let e = f.v(format!("extractelement {F32X4} {a}, i32 {c}"));
        f.store("float", &e, "%p1", 4 * i);
    }
    f.s("ret void");
    let fl = [
        -0.0f32,
        f32::NAN,
        1.5,
        f32::NEG_INFINITY,
        1e-40,
        -3.0,
        0.0,
        f32::MAX,
    ];
    let cases = fl
        .chunks(4)
        .map(|c| Case {
            label: format!("{c:?}"),
            input: f32_bytes(c),
            want: vec![Want::Bytes(f32_bytes(c))],
        })
        .collect();
    fx.kernel(Kernel::new("extract_v4float", f.finish(), cases));

    // Build from scalars with insertelement, lanes in a scrambled order, from undef.
    for (si, &(v, as_mask)) in shapes.iter().enumerate() {
        let mut f = Fb::new();
        let (vt, et) = if as_mask {
            (v.mask, "i1")
        } else {
            (v.ty, v.elem)
        };
        let mut cur = f.c(vt, "undef");
        for j in 0..v.n {
            let lane = (j * 5 + 3) % v.n;
            let x = f.load("i32", "%p0", 4 * lane);
            let e = if et == "i32" {
                x
            } else {
                f.v(format!("trunc i32 {x} to {et}"))
            };
            let c = f.i32c(lane as i64);
            cur = f.v(format!("insertelement {vt} {cur}, {et} {e}, i32 {c}"));
        }
        let out = if as_mask {
            f.v(format!("sext {} {cur} to {}", v.mask, v.ty))
        } else {
            cur
        };
        vstore(&mut f, v.ty, v.align(), &out, "%p1", 0);
        f.s("ret void");
        let cases = int_vectors(v, 900 + si as u64)
            .into_iter()
            .enumerate()
            .map(|(ci, a)| {
                let input: Vec<u8> = a
                    .iter()
                    .enumerate()
                    .flat_map(|(i, &x)| raw32(x, v.w, ci * 16 + i).to_le_bytes())
                    .collect();
                let want = if as_mask {
                    let bits: Vec<bool> = a.iter().map(|x| x & 1 == 1).collect();
                    lane_bytes(&mask_lanes(&bits, v.w), v.w)
                } else {
                    lane_bytes(&a, v.w)
                };
                Case {
                    label: format!("{a:x?}"),
                    input,
                    want: vec![Want::Bytes(want)],
                }
            })
            .collect();
        let name = if as_mask {
            format!("build_mask_{}", v.short())
        } else {
            format!("build_{}", v.short())
        };
        fx.kernel(Kernel::new(name, f.finish(), cases));
    }
    let mut f = Fb::new();
    let mut cur = f.c(F32X4, "undef");
    for j in [2usize, 0, 3, 1] {
        let x = f.load("float", "%p0", 4 * j);
        let c = f.i32c(j as i64);
        cur = f.v(format!("insertelement {F32X4} {cur}, float {x}, i32 {c}"));
    }
    vstore(&mut f, F32X4, 4, &cur, "%p1", 0);
    f.s("ret void");
    let cases = fl
        .chunks(4)
        .map(|c| Case {
            label: format!("{c:?}"),
            input: f32_bytes(c),
            want: vec![Want::Bytes(f32_bytes(c))],
        })
        .collect();
    fx.kernel(Kernel::new("build_v4float", f.finish(), cases));

    // Replace lane k of a loaded vector (the others stay), stored at element alignment
    // one element past a 16-byte boundary.
    for (si, v) in INT_SHAPES.into_iter().enumerate() {
        let mut f = Fb::new();
        let a = vload(&mut f, v.ty, v.align(), "%p0", v.align());
        let x = f.load("i32", "%p0", 32);
        let e = if v.w == 32 {
            x
        } else {
            f.v(format!("trunc i32 {x} to {}", v.elem))
        };
        for k in 0..v.n {
            let c = f.i32c(k as i64);
            let r = f.v(format!(
                "insertelement {} {a}, {} {e}, i32 {c}",
                v.ty, v.elem
            ));
            vstore(&mut f, v.ty, v.align(), &r, "%p1", 16 * k + v.align());
        }
        f.s("ret void");
        let vs = int_vectors(v, 1300 + si as u64);
        let cases = vs
            .iter()
            .enumerate()
            .map(|(ci, a)| {
                let x = vs[(ci + 1) % vs.len()][0];
                let raw = raw32(x, v.w, ci);
                let mut input = vec![0u8; v.align()];
                input.extend(lane_bytes(a, v.w));
                input.resize(32, 0);
                input.extend(raw.to_le_bytes());
                // Record k is stored at 16k + align: the records tile the output.
                let mut mem = vec![0u8; 16 * v.n + v.align()];
                for k in 0..v.n {
                    let mut r = a.clone();
                    r[k] = x & mask(v.w);
                    let b = lane_bytes(&r, v.w);
                    mem[16 * k + v.align()..16 * k + v.align() + 16].copy_from_slice(&b);
                }
                Case {
                    label: format!("{a:x?} with {x:#x}"),
                    input,
                    want: vec![Want::Bytes(mem)],
                }
            })
            .collect();
        fx.kernel(Kernel::new(
            format!("replace_{}", v.short()),
            f.finish(),
            cases,
        ));
    }
    fx
}

/// Vector phis and calls.
fn flow_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "simd_flow",
        "Vector values across blocks and calls: a loop whose vector phis swap every\n\
         iteration and accumulate (x, y) -> (y, x + y) over n = the input's count; a call\n\
         of a helper taking three <4 x float> and returning a*b+c; a helper returning a\n\
         <16 x i1> mask; a helper taking and returning <8 x i16>.",
    );
    // fib-like loop over <4 x i32>.
    let mut f = Fb::new();
    let x0 = vload(&mut f, "<4 x i32>", 4, "%p0", 0);
    let y0 = vload(&mut f, "<4 x i32>", 4, "%p0", 16);
    let n = f.load("i32", "%p0", 32);
    let zero = f.i32c(0);
    let one = f.i32c(1);
    let (b_loop, b_end) = (f.block(), f.block());
    f.s(format!("br label %b{b_loop}"));
    f.label(b_loop);
    let (xn, yn, in_) = (f.fwd(), f.fwd(), f.fwd());
    let x = f.v(format!("phi <4 x i32> [{x0}, %b0], [{xn}, %b{b_loop}]"));
    let y = f.v(format!("phi <4 x i32> [{y0}, %b0], [{yn}, %b{b_loop}]"));
    let i = f.v(format!("phi i32 [{zero}, %b0], [{in_}, %b{b_loop}]"));
    let s = f.v(format!("add <4 x i32> {x}, {y}"));
    f.bind(&xn, &y);
    f.bind(&yn, &s);
    let i2 = f.v(format!("add i32 {i}, {one}"));
    f.bind(&in_, &i2);
    let more = f.v(format!("icmp ult i32 {i2}, {n}"));
    f.s(format!("br i1 {more}, label %b{b_loop}, label %b{b_end}"));
    f.label(b_end);
    vstore(&mut f, "<4 x i32>", 4, &y, "%p1", 0);
    vstore(&mut f, "<4 x i32>", 4, &s, "%p1", 16);
    f.s("ret void");
    let vs = int_vectors(I32X4, 31);
    let cases = (0..vs.len())
        .map(|k| {
            let (a, b) = (&vs[k], &vs[(k + 5) % vs.len()]);
            let n = (k % 7 + 1) as u32;
            let (mut x, mut y) = (a.clone(), b.clone());
            let mut last_s = vec![0u64; 4];
            let mut last_y = vec![0u64; 4];
            for _ in 0..n {
                let s: Vec<u64> = x
                    .iter()
                    .zip(&y)
                    .map(|(p, q)| p.wrapping_add(*q) & 0xffff_ffff)
                    .collect();
                last_y = y.clone();
                last_s = s.clone();
                x = y;
                y = s;
            }
            Case {
                label: format!("{a:x?}, {b:x?}, n = {n}"),
                input: [
                    lane_bytes(a, 32),
                    lane_bytes(b, 32),
                    n.to_le_bytes().to_vec(),
                ]
                .concat(),
                want: vec![
                    Want::Bytes(lane_bytes(&last_y, 32)),
                    Want::Bytes(lane_bytes(&last_s, 32)),
                ],
            }
        })
        .collect();
    fx.kernel(Kernel::new("phi_loop_v4i32", f.finish(), cases));

    // Helpers with vector parameters and results.
    let mut h = Fb::new();
    let m = h.v(format!("fmul {F32X4} %p0, %p1"));
    let r = h.v(format!("fadd {F32X4} {m}, %p2"));
    h.s(format!("ret {F32X4} {r}"));
    fx.helper("madd", F32X4, &[F32X4, F32X4, F32X4], h.finish());
    let mut h = Fb::new();
    let r = h.v("icmp ugt <16 x i8> %p0, %p1");
    h.s(format!("ret <16 x i1> {r}"));
    fx.helper(
        "ugt16",
        "<16 x i1>",
        &["<16 x i8>", "<16 x i8>"],
        h.finish(),
    );
    let mut h = Fb::new();
    let r = h.v("mul <8 x i16> %p0, %p0");
    h.s(format!("ret <8 x i16> {r}"));
    fx.helper("square8", "<8 x i16>", &["<8 x i16>"], h.finish());

    let mut f = Fb::new();
    let a = vload(&mut f, F32X4, 4, "%p0", 0);
    let b = vload(&mut f, F32X4, 4, "%p0", 16);
    let c = vload(&mut f, F32X4, 4, "%p0", 32);
    let r = f.v(format!(
        "call {F32X4} @[madd]({F32X4} {a}, {F32X4} {b}, {F32X4} {c})"
    ));
    vstore(&mut f, F32X4, 4, &r, "%p1", 0);
    let p = vload(&mut f, "<16 x i8>", 1, "%p0", 0);
    let q = vload(&mut f, "<16 x i8>", 1, "%p0", 16);
    let m = f.v(format!(
        "call <16 x i1> @[ugt16](<16 x i8> {p}, <16 x i8> {q})"
    ));
    let ms = f.v(format!("sext <16 x i1> {m} to <16 x i8>"));
    vstore(&mut f, "<16 x i8>", 1, &ms, "%p1", 16);
    let h8 = vload(&mut f, "<8 x i16>", 2, "%p0", 32);
    let sq = f.v(format!("call <8 x i16> @[square8](<8 x i16> {h8})"));
    vstore(&mut f, "<8 x i16>", 2, &sq, "%p1", 32);
    f.s("ret void");
    let mut rng = Rng(0xca11);
    let cases = (0..12)
        .map(|k| {
            let fv = |x: u64| ((x % 2001) as f32 - 1000.0) / 8.0;
            let mut input: Vec<u8> = (0..12).flat_map(|_| fv(rng.next()).to_le_bytes()).collect();
            if k == 0 {
                // NaN, -0.0 and infinity lanes.
                input[0..4].copy_from_slice(&f32::NAN.to_le_bytes());
                input[4..8].copy_from_slice(&(-0.0f32).to_le_bytes());
                input[20..24].copy_from_slice(&f32::INFINITY.to_le_bytes());
                input[36..40].copy_from_slice(&0.0f32.to_le_bytes());
            }
            let fl = |i: usize| f32::from_le_bytes(input[4 * i..4 * i + 4].try_into().unwrap());
            let mut want: Vec<Want> = (0..4)
                .map(|i| Want::F32(fl(i) * fl(4 + i) + fl(8 + i)))
                .collect();
            let ugt: Vec<u8> = (0..16)
                .map(|i| if input[i] > input[16 + i] { 0xff } else { 0 })
                .collect();
            want.push(Want::Bytes(ugt));
            let sq: Vec<u8> = (0..8)
                .flat_map(|i| {
                    let h = u16::from_le_bytes([input[32 + 2 * i], input[33 + 2 * i]]);
                    h.wrapping_mul(h).to_le_bytes()
                })
                .collect();
            want.push(Want::Bytes(sq));
            Case {
                label: format!("case {k}"),
                input,
                want,
            }
        })
        .collect();
    fx.kernel(Kernel::new("vector_calls", f.finish(), cases));
    fx
}

pub fn fixtures() -> Vec<Fixture> {
    vec![casts_fixture(), lanes_fixture(), flow_fixture()]
}
