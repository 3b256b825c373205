//! Memory: alloca, loads and stores of every width and alignment, memcpy, memmove,
//! memset, stacksave/stackrestore, and the thread pointer (llvm.nacl.read.tp) as set
//! through the IRT's tls interface.

use super::*;

pub fn fixture() -> Fixture {
    let mut fx = Fixture::new(
        "memory",
        "Stores of i8, i16, i32, i64, float and double at unaligned and aligned offsets of an\n\
         alloca, read back byte for byte and at every width (little-endian); alloca alignment;\n\
         memcpy, memmove (overlapping both ways) and memset (with a value carrying garbage);\n\
         stacksave/stackrestore around dynamic allocas, and a callee's frame released on\n\
         return; llvm.nacl.read.tp after the IRT's tls_init.",
    );
    widths(&mut fx);
    alloca_alignment(&mut fx);
    mem_intrinsics(&mut fx);
    stack(&mut fx);
    thread_pointer(&mut fx);
    fx
}

fn widths(fx: &mut Fixture) {
    // Input: x (i64). A 32-byte alloca (align 8) is zeroed with memset; then
    //   i64 x at 0, i32 (x >> 8) at 9, i16 (x >> 16) at 14, i8 (x >> 24) at 17,
    //   float (bits of x's low word) at 20 (align 4), double (bits of x) at 24 (align 8)
    // are stored; the 32 bytes are copied out with i64 loads, then read back at odd
    // offsets: i16 at 1, i32 at 3, i64 at 5 (zero-extended to i64 each) and the float
    // and double (stored as their bits).
    let mut f = Fb::new();
    let c32 = f.i32c(32);
    let a = f.v(format!("alloca i8, i32 {c32}, align 8"));
    let zero8 = f.c("i8", 0);
    let c1 = f.i32c(1);
    let false_ = f.c("i1", 0);
    f.s(format!(
        "call void @[llvm.memset.p0i8.i32](i32 {a}, i8 {zero8}, i32 {c32}, i32 {c1}, i1 {false_})"
    ));
    let x = f.load("i64", "%p0", 0);
    f.store("i64", &x, &a, 0);
    let sh = |f: &mut Fb, n: i64| {
        let c = f.c("i64", n);
        f.v(format!("lshr i64 {x}, {c}"))
    };
    let x8 = sh(&mut f, 8);
    let t32 = f.v(format!("trunc i64 {x8} to i32"));
    f.store("i32", &t32, &a, 9);
    let x16 = sh(&mut f, 16);
    let t16 = f.v(format!("trunc i64 {x16} to i16"));
    f.store("i16", &t16, &a, 14);
    let x24 = sh(&mut f, 24);
    let t8 = f.v(format!("trunc i64 {x24} to i8"));
    f.store("i8", &t8, &a, 17);
    let lo = f.v(format!("trunc i64 {x} to i32"));
    let fl = f.v(format!("bitcast i32 {lo} to float"));
    let p20 = f.at(&a, 20);
    f.s(format!("store float {fl}, float* {p20}, align 4"));
    let d = f.v(format!("bitcast i64 {x} to double"));
    let p24 = f.at(&a, 24);
    f.s(format!("store double {d}, double* {p24}, align 8"));
    for i in 0..4 {
        let v = f.load("i64", &a, i * 8);
        f.store("i64", &v, "%p1", i * 8);
    }
    let l16 = f.load("i16", &a, 1);
    let z16 = f.v(format!("zext i16 {l16} to i64"));
    f.store("i64", &z16, "%p1", 32);
    let l32 = f.load("i32", &a, 3);
    let z32 = f.v(format!("zext i32 {l32} to i64"));
    f.store("i64", &z32, "%p1", 40);
    let l64 = f.load("i64", &a, 5);
    f.store("i64", &l64, "%p1", 48);
    let lf = f.v(format!("load float* {p20}, align 4"));
    let lfb = f.v(format!("bitcast float {lf} to i32"));
    f.store("i32", &lfb, "%p1", 56);
    let l8 = f.load("i8", &a, 17);
    let z8 = f.v(format!("zext i8 {l8} to i32"));
    f.store("i32", &z8, "%p1", 60);
    let ld = f.v(format!("load double* {p24}, align 8"));
    let ldb = f.v(format!("bitcast double {ld} to i64"));
    f.store("i64", &ldb, "%p1", 64);
    f.s("ret void");
    let cases = [0x0102_0304_0506_0708u64, 0xf1e2_d3c4_b5a6_9788, 0, u64::MAX]
        .iter()
        .map(|&x| {
            let mut m = [0u8; 32];
            m[0..8].copy_from_slice(&x.to_le_bytes());
            m[9..13].copy_from_slice(&((x >> 8) as u32).to_le_bytes());
            m[14..16].copy_from_slice(&((x >> 16) as u16).to_le_bytes());
            m[17] = (x >> 24) as u8;
            m[20..24].copy_from_slice(&(x as u32).to_le_bytes());
            m[24..32].copy_from_slice(&x.to_le_bytes());
            let rd = |o: usize, n: usize| {
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(&m[o..o + n]);
                u64::from_le_bytes(b)
            };
            Case {
                label: format!("{x:#x}"),
                input: x.to_le_bytes().to_vec(),
                want: vec![
                    Want::Bytes(m.to_vec()),
                    u64w(rd(1, 2)),
                    u64w(rd(3, 4)),
                    u64w(rd(5, 8)),
                    u32w(rd(20, 4) as u32),
                    u32w(m[17] as u32),
                    u64w(rd(24, 8)),
                ],
            }
        })
        .collect();
    fx.kernel(Kernel::new("store_load_widths", f.finish(), cases));
}

fn alloca_alignment(fx: &mut Fixture) {
    // Input: n. Allocas of n bytes at alignments 1, 4, 8, 16 and 32 (after a 1-byte one
    // that misaligns the stack pointer); stores address & (align - 1) for each (all 0),
    // as bytes.
    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let c1 = f.i32c(1);
    let _ = f.v(format!("alloca i8, i32 {c1}, align 1"));
    for (i, al) in [1i64, 4, 8, 16, 32].iter().enumerate() {
        let p = f.v(format!("alloca i8, i32 {n}, align {al}"));
        let m = f.i32c(al - 1);
        let r = f.v(format!("and i32 {p}, {m}"));
        let t = f.v(format!("trunc i32 {r} to i8"));
        f.store("i8", &t, "%p1", i);
        // Touch the last byte: it must be inside the frame (no trap, no clobbering).
        let last = f.v(format!("add i32 {p}, {n}"));
        let last = f.v(format!("sub i32 {last}, {c1}"));
        let ff = f.c("i8", -1);
        f.s(format!("store i8 {ff}, i8* {last}, align 1"));
    }
    f.s("ret void");
    let cases = [1u32, 3, 17, 100, 4000]
        .iter()
        .map(|&n| Case {
            label: format!("n = {n}"),
            input: n.to_le_bytes().to_vec(),
            want: vec![Want::Bytes(vec![0; 5])],
        })
        .collect();
    fx.kernel(Kernel::new("alloca_alignment", f.finish(), cases));
}

fn mem_intrinsics(fx: &mut Fixture) {
    // Input: 32 bytes of pattern, then dst, src, len (i32 each), then a value for memset
    // (i32 with garbage above the byte). The pattern is copied to the output record, then
    // the operation runs on the record: memmove(out + dst, out + src, len),
    // memcpy(out + dst, in + src, len) or memset(out + dst, value, len).
    let pattern: Vec<u8> = (0..32u8)
        .map(|i| i.wrapping_mul(7).wrapping_add(0x41))
        .collect();
    for op in ["memmove", "memcpy", "memset"] {
        let mut f = Fb::new();
        let c32 = f.i32c(32);
        let c1 = f.i32c(1);
        let false_ = f.c("i1", 0);
        f.s(format!(
            "call void @[llvm.memcpy.p0i8.p0i8.i32](i32 %p1, i32 %p0, i32 {c32}, i32 {c1}, i1 {false_})"
        ));
        let dst = f.load("i32", "%p0", 32);
        let src = f.load("i32", "%p0", 36);
        let len = f.load("i32", "%p0", 40);
        let d = f.v(format!("add i32 %p1, {dst}"));
        match op {
            "memmove" => {
                let s = f.v(format!("add i32 %p1, {src}"));
                f.s(format!("call void @[llvm.memmove.p0i8.p0i8.i32](i32 {d}, i32 {s}, i32 {len}, i32 {c1}, i1 {false_})"));
            }
            "memcpy" => {
                let s = f.v(format!("add i32 %p0, {src}"));
                f.s(format!("call void @[llvm.memcpy.p0i8.p0i8.i32](i32 {d}, i32 {s}, i32 {len}, i32 {c1}, i1 {false_})"));
            }
            _ => {
                let v = f.load("i32", "%p0", 44);
                let b = f.v(format!("trunc i32 {v} to i8"));
                f.s(format!("call void @[llvm.memset.p0i8.i32](i32 {d}, i8 {b}, i32 {len}, i32 {c1}, i1 {false_})"));
            }
        }
        f.s("ret void");
        let params: &[(u32, u32, u32)] = match op {
            // forward overlap, backward overlap, disjoint, empty, whole, one byte
            "memmove" => &[
                (4, 0, 20),
                (0, 4, 20),
                (20, 0, 10),
                (3, 9, 0),
                (0, 0, 32),
                (31, 0, 1),
            ],
            "memcpy" => &[(0, 16, 16), (5, 0, 11), (3, 9, 0), (0, 0, 32), (31, 7, 1)],
            _ => &[(0, 0, 32), (5, 0, 11), (3, 0, 0), (31, 0, 1)],
        };
        let cases = params
            .iter()
            .enumerate()
            .map(|(i, &(dst, src, len))| {
                let value = 0x1234_5600u32 | (0x7a + i as u32);
                let mut m = pattern.clone();
                let (d, s, l) = (dst as usize, src as usize, len as usize);
                match op {
                    "memmove" => m.copy_within(s..s + l, d),
                    "memcpy" => m[d..d + l].copy_from_slice(&pattern[s..s + l]),
                    _ => m[d..d + l].fill(value as u8),
                }
                Case {
                    label: format!("dst {dst}, src {src}, len {len}"),
                    input: [
                        pattern.clone(),
                        dst.to_le_bytes().to_vec(),
                        src.to_le_bytes().to_vec(),
                        len.to_le_bytes().to_vec(),
                        value.to_le_bytes().to_vec(),
                    ]
                    .concat(),
                    want: vec![Want::Bytes(m)],
                }
            })
            .collect();
        fx.kernel(Kernel::new(op, f.finish(), cases));
    }
}

fn stack(fx: &mut Fixture) {
    // A callee with a 1000-byte frame, which it fills.
    let mut f = Fb::new();
    let c1000 = f.i32c(1000);
    let p = f.v(format!("alloca i8, i32 {c1000}, align 16"));
    let c1 = f.i32c(1);
    let false_ = f.c("i1", 0);
    let v = f.c("i8", 0x5a);
    f.s(format!(
        "call void @[llvm.memset.p0i8.i32](i32 {p}, i8 {v}, i32 {c1000}, i32 {c1}, i1 {false_})"
    ));
    f.s(format!("ret i32 {p}"));
    fx.helper("big_frame", "i32", &[], f.finish());

    // Input: n, k. s0 = stacksave; k dynamic allocas of n bytes in a loop; s1 = stacksave;
    // stackrestore(s0); s2 = stacksave; then a call to big_frame and s3 = stacksave.
    // Stores: s0 - s1 >= n * k, s2 == s0, s3 == s0, and whether big_frame's frame was
    // below s0 (one byte each).
    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let k = f.load("i32", "%p0", 4);
    let s0 = f.v("call i32 @[llvm.stacksave]()");
    let (c0, c1) = (f.i32c(0), f.i32c(1));
    let (b_loop, b_done) = (f.block(), f.block());
    f.s(format!("br label %b{b_loop}"));
    f.label(b_loop);
    let fi = f.fwd();
    let i = f.v(format!("phi i32 [{c0}, %b0], [{fi}, %b{b_loop}]"));
    let p = f.v(format!("alloca i8, i32 {n}, align 8"));
    f.store("i32", &i, &p, 0);
    let i2 = f.v(format!("add i32 {i}, {c1}"));
    f.bind(&fi, &i2);
    let more = f.v(format!("icmp ult i32 {i2}, {k}"));
    f.s(format!("br i1 {more}, label %b{b_loop}, label %b{b_done}"));
    f.label(b_done);
    let s1 = f.v("call i32 @[llvm.stacksave]()");
    f.s(format!("call void @[llvm.stackrestore](i32 {s0})"));
    let s2 = f.v("call i32 @[llvm.stacksave]()");
    let bf = f.v("call i32 @[big_frame]()");
    let s3 = f.v("call i32 @[llvm.stacksave]()");
    let used = f.v(format!("sub i32 {s0}, {s1}"));
    let nk = f.v(format!("mul i32 {n}, {k}"));
    let outs = [
        f.v(format!("icmp uge i32 {used}, {nk}")),
        f.v(format!("icmp eq i32 {s2}, {s0}")),
        f.v(format!("icmp eq i32 {s3}, {s0}")),
        f.v(format!("icmp ult i32 {bf}, {s0}")),
    ];
    for (j, o) in outs.iter().enumerate() {
        let z = f.v(format!("zext i1 {o} to i8"));
        f.store("i8", &z, "%p1", j);
    }
    f.s("ret void");
    let cases = [(4u32, 1u32), (16, 10), (1000, 3), (8, 100)]
        .iter()
        .map(|&(n, k)| Case {
            label: format!("n = {n}, k = {k}"),
            input: [n.to_le_bytes(), k.to_le_bytes()].concat(),
            want: vec![Want::Bytes(vec![1, 1, 1, 1])],
        })
        .collect();
    fx.kernel(Kernel::new("stacksave_restore", f.finish(), cases));
}

fn thread_pointer(fx: &mut Fixture) {
    fx.global(
        "tls_name",
        true,
        format!("align 1, {}", cstr_data("nacl-irt-tls-0.1")),
    );
    fx.global("tls_table", false, "align 4, zerofill 8;".into());
    // Input: x. r = query("nacl-irt-tls-0.1", table, 8); e = tls_init(x); then
    // read.tp and tls_get. Stores r, e, read.tp, tls_get.
    let mut f = Fb::new();
    let x = f.load("i32", "%p0", 0);
    let q = f.load("i32", "@[g:query]", 0);
    let c8 = f.i32c(8);
    let r = f.v(format!(
        "call i32 {q}(i32 @[g:tls_name], i32 @[g:tls_table], i32 {c8})"
    ));
    let init = f.load("i32", "@[g:tls_table]", 0);
    let e = f.v(format!("call i32 {init}(i32 {x})"));
    let tp = f.v("call i32 @[llvm.nacl.read.tp]()");
    let get = f.load("i32", "@[g:tls_table]", 4);
    let g = f.v(format!("call i32 {get}()"));
    for (j, v) in [r, e, tp, g].iter().enumerate() {
        f.store("i32", v, "%p1", 4 * j);
    }
    f.s("ret void");
    let cases = [0x0012_3450u32, 0x8000]
        .iter()
        .map(|&x| Case {
            label: format!("tls_init({x:#x})"),
            input: x.to_le_bytes().to_vec(),
            want: vec![u32w(8), u32w(0), u32w(x), u32w(x)],
        })
        .collect();
    fx.kernel(Kernel::new("read_tp", f.finish(), cases));
}
