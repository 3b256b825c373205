//! Control flow and calls: phi cycles (swap, rotation, lost copy), an irreducible CFG,
//! nested loops, recursion, indirect calls through relocated function tables, pointers
//! relocated with addends, and argument passing of every type.

use super::*;

pub fn fixture() -> Fixture {
    let mut fx = Fixture::new(
        "control",
        "phi swap and rotation cycles, the lost-copy case, an irreducible loop entered at\n\
         either block, nested loops, direct recursion (i64 factorial, fibonacci), indirect\n\
         calls through a function table initialized by relocations, data pointers\n\
         relocated with addends, and calls passing and returning i32, i64, float and double.",
    );
    phi_kernels(&mut fx);
    irreducible(&mut fx);
    nested_loops(&mut fx);
    recursion(&mut fx);
    tables(&mut fx);
    arguments(&mut fx);
    fx
}

fn n_cases(ns: impl IntoIterator<Item = i32>, want: impl Fn(i32) -> Vec<Want>) -> Vec<Case> {
    ns.into_iter()
        .map(|n| Case {
            label: format!("n = {n}"),
            input: n.to_le_bytes().to_vec(),
            want: want(n),
        })
        .collect()
}

fn phi_kernels(fx: &mut Fixture) {
    // (a, b) = (b, a), n - 1 times; stores a * 1000 + b.
    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let (c0, c1, c2, c1000) = (f.i32c(0), f.i32c(1), f.i32c(2), f.i32c(1000));
    let (b_loop, b_exit) = (f.block(), f.block());
    f.s(format!("br label %b{b_loop}"));
    f.label(b_loop);
    let (fa, fb, fk) = (f.fwd(), f.fwd(), f.fwd());
    let a = f.v(format!("phi i32 [{c1}, %b0], [{fb}, %b{b_loop}]"));
    let b = f.v(format!("phi i32 [{c2}, %b0], [{fa}, %b{b_loop}]"));
    f.bind(&fa, &a);
    f.bind(&fb, &b);
    let k = f.v(format!("phi i32 [{n}, %b0], [{fk}, %b{b_loop}]"));
    let k2 = f.v(format!("sub i32 {k}, {c1}"));
    f.bind(&fk, &k2);
    let more = f.v(format!("icmp sgt i32 {k2}, {c0}"));
    f.s(format!("br i1 {more}, label %b{b_loop}, label %b{b_exit}"));
    f.label(b_exit);
    let m = f.v(format!("mul i32 {a}, {c1000}"));
    let r = f.v(format!("add i32 {m}, {b}"));
    f.store("i32", &r, "%p1", 0);
    f.s("ret void");
    let cases = n_cases(1..=8, |n| {
        let (mut a, mut b) = (1, 2);
        for _ in 1..n {
            std::mem::swap(&mut a, &mut b);
        }
        vec![u32w((a * 1000 + b) as u32)]
    });
    fx.kernel(Kernel::new("phi_swap", f.finish(), cases));

    // (x, y, z) = (y, z, x), n - 1 times; stores x * 100 + y * 10 + z.
    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let (c0, c1, c2, c3) = (f.i32c(0), f.i32c(1), f.i32c(2), f.i32c(3));
    let (c10, c100) = (f.i32c(10), f.i32c(100));
    let (b_loop, b_exit) = (f.block(), f.block());
    f.s(format!("br label %b{b_loop}"));
    f.label(b_loop);
    let (fx_, fy, fz, fk) = (f.fwd(), f.fwd(), f.fwd(), f.fwd());
    let x = f.v(format!("phi i32 [{c1}, %b0], [{fy}, %b{b_loop}]"));
    let y = f.v(format!("phi i32 [{c2}, %b0], [{fz}, %b{b_loop}]"));
    let z = f.v(format!("phi i32 [{c3}, %b0], [{fx_}, %b{b_loop}]"));
    f.bind(&fx_, &x);
    f.bind(&fy, &y);
    f.bind(&fz, &z);
    let k = f.v(format!("phi i32 [{n}, %b0], [{fk}, %b{b_loop}]"));
    let k2 = f.v(format!("sub i32 {k}, {c1}"));
    f.bind(&fk, &k2);
    let more = f.v(format!("icmp sgt i32 {k2}, {c0}"));
    f.s(format!("br i1 {more}, label %b{b_loop}, label %b{b_exit}"));
    f.label(b_exit);
    let a = f.v(format!("mul i32 {x}, {c100}"));
    let b = f.v(format!("mul i32 {y}, {c10}"));
    let s = f.v(format!("add i32 {a}, {b}"));
    let r = f.v(format!("add i32 {s}, {z}"));
    f.store("i32", &r, "%p1", 0);
    f.s("ret void");
    let cases = n_cases(1..=8, |n| {
        let (mut x, mut y, mut z) = (1, 2, 3);
        for _ in 1..n {
            (x, y, z) = (y, z, x);
        }
        vec![u32w((x * 100 + y * 10 + z) as u32)]
    });
    fx.kernel(Kernel::new("phi_rotate", f.finish(), cases));

    // The lost copy: the exit reads both the phi (the old value) and its update.
    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let (c0, c1) = (f.i32c(0), f.i32c(1));
    let (b_loop, b_exit) = (f.block(), f.block());
    f.s(format!("br label %b{b_loop}"));
    f.label(b_loop);
    let fi = f.fwd();
    let i = f.v(format!("phi i32 [{c0}, %b0], [{fi}, %b{b_loop}]"));
    let i2 = f.v(format!("add i32 {i}, {c1}"));
    f.bind(&fi, &i2);
    let more = f.v(format!("icmp ult i32 {i2}, {n}"));
    f.s(format!("br i1 {more}, label %b{b_loop}, label %b{b_exit}"));
    f.label(b_exit);
    f.store("i32", &i, "%p1", 0);
    f.store("i32", &i2, "%p1", 4);
    f.s("ret void");
    let cases = n_cases([1, 2, 3, 10], |n| vec![u32w(n as u32 - 1), u32w(n as u32)]);
    fx.kernel(Kernel::new("phi_lost_copy", f.finish(), cases));
}

fn irreducible(fx: &mut Fixture) {
    // b0 enters the cycle b1 <-> b2 at either block. State (n, s): b1 exits with s when
    // n == 0, else goes to b2 with (n - 1, s + 1); b2 goes back to b1 with (n, s + 10).
    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let start = f.load("i32", "%p0", 4);
    let (c0, c1, c10) = (f.i32c(0), f.i32c(1), f.i32c(10));
    let (b1, b2, b3) = (f.block(), f.block(), f.block());
    let at_b1 = f.v(format!("icmp ne i32 {start}, {c0}"));
    f.s(format!("br i1 {at_b1}, label %b{b1}, label %b{b2}"));
    f.label(b1);
    let (fn2, fs2) = (f.fwd(), f.fwd());
    let n1 = f.v(format!("phi i32 [{n}, %b0], [{fn2}, %b{b2}]"));
    let s1 = f.v(format!("phi i32 [{c0}, %b0], [{fs2}, %b{b2}]"));
    let n1m = f.v(format!("sub i32 {n1}, {c1}"));
    let s1p = f.v(format!("add i32 {s1}, {c1}"));
    let done = f.v(format!("icmp eq i32 {n1}, {c0}"));
    f.s(format!("br i1 {done}, label %b{b3}, label %b{b2}"));
    f.label(b2);
    let n2 = f.v(format!("phi i32 [{n}, %b0], [{n1m}, %b{b1}]"));
    let s2 = f.v(format!("phi i32 [{c0}, %b0], [{s1p}, %b{b1}]"));
    let s2p = f.v(format!("add i32 {s2}, {c10}"));
    f.bind(&fn2, &n2);
    f.bind(&fs2, &s2p);
    f.s(format!("br label %b{b1}"));
    f.label(b3);
    f.store("i32", &s1, "%p1", 0);
    f.s("ret void");
    let mut cases = Vec::new();
    for n in 0..6u32 {
        for start in 0..2u32 {
            let (mut n_, mut s_) = (n, 0u32);
            let mut in_b1 = start != 0;
            let result = loop {
                if in_b1 {
                    if n_ == 0 {
                        break s_;
                    }
                    (n_, s_) = (n_ - 1, s_ + 1);
                    in_b1 = false;
                } else {
                    s_ += 10;
                    in_b1 = true;
                }
            };
            cases.push(Case {
                label: format!("n = {n}, enter at b{}", if start != 0 { 1 } else { 2 }),
                input: [n.to_le_bytes(), start.to_le_bytes()].concat(),
                want: vec![u32w(result)],
            });
        }
    }
    fx.kernel(Kernel::new("irreducible", f.finish(), cases));
}

fn nested_loops(fx: &mut Fixture) {
    // sum over i < n, j <= i of (i * j) ^ j, wrapping.
    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let (c0, c1) = (f.i32c(0), f.i32c(1));
    let (b_outer, b_inner, b_next, b_exit) = (f.block(), f.block(), f.block(), f.block());
    let empty = f.v(format!("icmp eq i32 {n}, {c0}"));
    f.s(format!(
        "br i1 {empty}, label %b{b_exit}, label %b{b_outer}"
    ));
    f.label(b_outer);
    let (fi, fs_outer) = (f.fwd(), f.fwd());
    let i = f.v(format!("phi i32 [{c0}, %b0], [{fi}, %b{b_next}]"));
    let s_o = f.v(format!("phi i32 [{c0}, %b0], [{fs_outer}, %b{b_next}]"));
    f.s(format!("br label %b{b_inner}"));
    f.label(b_inner);
    let (fj, fs_inner) = (f.fwd(), f.fwd());
    let j = f.v(format!("phi i32 [{c0}, %b{b_outer}], [{fj}, %b{b_inner}]"));
    let s_i = f.v(format!(
        "phi i32 [{s_o}, %b{b_outer}], [{fs_inner}, %b{b_inner}]"
    ));
    let ij = f.v(format!("mul i32 {i}, {j}"));
    let x = f.v(format!("xor i32 {ij}, {j}"));
    let s2 = f.v(format!("add i32 {s_i}, {x}"));
    f.bind(&fs_inner, &s2);
    let j2 = f.v(format!("add i32 {j}, {c1}"));
    f.bind(&fj, &j2);
    let more_j = f.v(format!("icmp ule i32 {j2}, {i}"));
    f.s(format!(
        "br i1 {more_j}, label %b{b_inner}, label %b{b_next}"
    ));
    f.label(b_next);
    f.bind(&fs_outer, &s2);
    let i2 = f.v(format!("add i32 {i}, {c1}"));
    f.bind(&fi, &i2);
    let more_i = f.v(format!("icmp ult i32 {i2}, {n}"));
    f.s(format!(
        "br i1 {more_i}, label %b{b_outer}, label %b{b_exit}"
    ));
    f.label(b_exit);
    let r = f.v(format!("phi i32 [{c0}, %b0], [{s2}, %b{b_next}]"));
    f.store("i32", &r, "%p1", 0);
    f.s("ret void");
    let cases = n_cases([0, 1, 2, 5, 30, 200], |n| {
        let mut s = 0u32;
        for i in 0..n as u32 {
            for j in 0..=i {
                s = s.wrapping_add(i.wrapping_mul(j) ^ j);
            }
        }
        vec![u32w(s)]
    });
    fx.kernel(Kernel::new("nested_loops", f.finish(), cases));
}

fn recursion(fx: &mut Fixture) {
    // fact64(n) = n <= 1 ? 1 : n * fact64(n - 1)
    let mut f = Fb::new();
    let one = f.c("i64", 1);
    let (b_base, b_rec) = (f.block(), f.block());
    let small = f.v(format!("icmp sle i64 %p0, {one}"));
    f.s(format!("br i1 {small}, label %b{b_base}, label %b{b_rec}"));
    f.label(b_base);
    f.s(format!("ret i64 {one}"));
    f.label(b_rec);
    let m = f.v(format!("sub i64 %p0, {one}"));
    let r = f.v(format!("call i64 @[fact64](i64 {m})"));
    let p = f.v(format!("mul i64 %p0, {r}"));
    f.s(format!("ret i64 {p}"));
    fx.helper("fact64", "i64", &["i64"], f.finish());

    // fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)
    let mut f = Fb::new();
    let (c1, c2) = (f.i32c(1), f.i32c(2));
    let (b_base, b_rec) = (f.block(), f.block());
    let small = f.v(format!("icmp slt i32 %p0, {c2}"));
    f.s(format!("br i1 {small}, label %b{b_base}, label %b{b_rec}"));
    f.label(b_base);
    f.s("ret i32 %p0");
    f.label(b_rec);
    let a = f.v(format!("sub i32 %p0, {c1}"));
    let fa = f.v(format!("call i32 @[fib](i32 {a})"));
    let b = f.v(format!("sub i32 %p0, {c2}"));
    let fb = f.v(format!("call i32 @[fib](i32 {b})"));
    let s = f.v(format!("add i32 {fa}, {fb}"));
    f.s(format!("ret i32 {s}"));
    fx.helper("fib", "i32", &["i32"], f.finish());

    let mut f = Fb::new();
    let n = f.load("i64", "%p0", 0);
    let r = f.v(format!("call i64 @[fact64](i64 {n})"));
    f.store("i64", &r, "%p1", 0);
    f.s("ret void");
    let cases = [0u64, 1, 2, 5, 10, 20, 21, 25]
        .iter()
        .map(|&n| Case {
            label: format!("fact64({n})"),
            input: n.to_le_bytes().to_vec(),
            want: vec![u64w((1..=n.max(1)).fold(1u64, |a, b| a.wrapping_mul(b)))],
        })
        .collect();
    fx.kernel(Kernel::new("recursion_fact64", f.finish(), cases));

    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let r = f.v(format!("call i32 @[fib](i32 {n})"));
    f.store("i32", &r, "%p1", 0);
    f.s("ret void");
    fn fib(n: u32) -> u32 {
        if n < 2 {
            n
        } else {
            fib(n - 1) + fib(n - 2)
        }
    }
    let cases = n_cases([0, 1, 2, 10, 20], |n| vec![u32w(fib(n as u32))]);
    fx.kernel(Kernel::new("recursion_fib", f.finish(), cases));
}

fn tables(fx: &mut Fixture) {
    // Four binary operations, called through a table of their addresses.
    let ops = [
        ("op_add", "add"),
        ("op_sub", "sub"),
        ("op_mul", "mul"),
        ("op_xor", "xor"),
    ];
    for (name, op) in ops {
        fx.helper(
            name,
            "i32",
            &["i32", "i32"],
            format!("  blocks 1;\n  %v0 = {op} i32 %p0, %p1;\n  ret i32 %v0;\n"),
        );
    }
    fx.global(
        "fntab",
        true,
        "align 4, initializers 4 { reloc @[op_add]; reloc @[op_sub]; reloc @[op_mul]; reloc @[op_xor]; }"
            .into(),
    );
    let mut f = Fb::new();
    let k = f.load("i32", "%p0", 0);
    let a = f.load("i32", "%p0", 4);
    let b = f.load("i32", "%p0", 8);
    let c4 = f.i32c(4);
    let off = f.v(format!("mul i32 {k}, {c4}"));
    let slot = f.v(format!("add i32 @[g:fntab], {off}"));
    let fp = f.v(format!("load i32* {slot}, align 1"));
    let r = f.v(format!("call i32 {fp}(i32 {a}, i32 {b})"));
    f.store("i32", &r, "%p1", 0);
    f.s("ret void");
    let mut cases = Vec::new();
    for k in 0..4u32 {
        for (a, b) in [(7u32, 3u32), (0x8000_0000, 0xffff_ffff), (12345, 678)] {
            let r = match k {
                0 => a.wrapping_add(b),
                1 => a.wrapping_sub(b),
                2 => a.wrapping_mul(b),
                _ => a ^ b,
            };
            cases.push(Case {
                label: format!("{}({a:#x}, {b:#x})", ops[k as usize].0),
                input: [k.to_le_bytes(), a.to_le_bytes(), b.to_le_bytes()].concat(),
                want: vec![u32w(r)],
            });
        }
    }
    fx.kernel(Kernel::new("indirect_call_table", f.finish(), cases));

    // Pointers into data, relocated with addends, in a compound initializer that mixes
    // data, relocations and zero fill.
    fx.global(
        "words",
        true,
        "align 4, { 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0 }".into(),
    );
    fx.global(
        "ptrs",
        true,
        "align 4, initializers 5 { reloc @[g:words] + 8; { 9, 9, 9, 9 } reloc @[g:words]; zerofill 4; reloc @[g:words] + 12; }"
            .into(),
    );
    let mut f = Fb::new();
    let k = f.load("i32", "%p0", 0);
    let c4 = f.i32c(4);
    let off = f.v(format!("mul i32 {k}, {c4}"));
    let slot = f.v(format!("add i32 @[g:ptrs], {off}"));
    let raw = f.v(format!("load i32* {slot}, align 1"));
    let c0 = f.i32c(0);
    let is_ptr = f.v(format!("icmp ugt i32 {raw}, {c4}"));
    let (b_ptr, b_val, b_join) = (f.block(), f.block(), f.block());
    f.s(format!("br i1 {is_ptr}, label %b{b_ptr}, label %b{b_val}"));
    f.label(b_ptr);
    let v = f.v(format!("load i32* {raw}, align 1"));
    f.s(format!("br label %b{b_join}"));
    f.label(b_val);
    f.s(format!("br label %b{b_join}"));
    f.label(b_join);
    let r = f.v(format!("phi i32 [{v}, %b{b_ptr}], [{c0}, %b{b_val}]"));
    f.store("i32", &r, "%p1", 0);
    f.s("ret void");
    // Slot 1 holds the bytes 9, 9, 9, 9 (not a small number: read through as a pointer
    // would fault), so that one is left out; slot 3 is zero fill.
    let cases = [(0u32, 3u32), (2, 1), (3, 0), (4, 4)]
        .iter()
        .map(|&(k, v)| Case {
            label: format!("ptrs[{k}]"),
            input: k.to_le_bytes().to_vec(),
            want: vec![u32w(v)],
        })
        .collect();
    fx.kernel(Kernel::new("relocated_pointers", f.finish(), cases));
}

fn arguments(fx: &mut Fixture) {
    // spill(out, a: i32, b: i64, c: float, d: double, e: i32, f: i64) stores its arguments
    // as {a, e, b, f, c, 0, d}.
    let mut f = Fb::new();
    f.store("i32", "%p1", "%p0", 0);
    f.store("i32", "%p5", "%p0", 4);
    f.store("i64", "%p2", "%p0", 8);
    f.store("i64", "%p6", "%p0", 16);
    f.store("float", "%p3", "%p0", 24);
    f.store("double", "%p4", "%p0", 32);
    f.s("ret void");
    fx.helper(
        "spill",
        "void",
        &["i32", "i32", "i64", "float", "double", "i32", "i64"],
        f.finish(),
    );
    let mut f = Fb::new();
    let a = f.load("i32", "%p0", 0);
    let e = f.load("i32", "%p0", 4);
    let b = f.load("i64", "%p0", 8);
    let g = f.load("i64", "%p0", 16);
    let c = f.load("float", "%p0", 24);
    let d = f.load("double", "%p0", 32);
    f.s(format!(
        "call void @[spill](i32 %p1, i32 {a}, i64 {b}, float {c}, double {d}, i32 {e}, i64 {g})"
    ));
    f.s("ret void");
    let rec = |a: u32, e: u32, b: u64, g: u64, c: f32, d: f64| {
        [
            a.to_le_bytes().to_vec(),
            e.to_le_bytes().to_vec(),
            b.to_le_bytes().to_vec(),
            g.to_le_bytes().to_vec(),
            c.to_le_bytes().to_vec(),
            vec![0; 4],
            d.to_le_bytes().to_vec(),
        ]
        .concat()
    };
    let cases = [
        (1, 2, 3, 4, 5.5, 6.25),
        (
            0xffff_ffff,
            0x8000_0000,
            u64::MAX,
            0x0123_4567_89ab_cdef,
            -0.0,
            -1e300,
        ),
        (0, 0, 0, 0, f32::INFINITY, f64::MIN_POSITIVE),
    ]
    .iter()
    .map(|&(a, e, b, g, c, d)| {
        let r = rec(a, e, b, g, c, d);
        Case {
            label: format!("spill({a:#x}, {b:#x}, {c:?}, {d:?}, {e:#x}, {g:#x})"),
            input: r.clone(),
            want: vec![Want::Bytes(r)],
        }
    })
    .collect();
    fx.kernel(Kernel::new("call_arguments", f.finish(), cases));

    // Returning float and double: pick(k, x, y) = k ? x : y, through a branch.
    for (t, size) in [("float", 4usize), ("double", 8usize)] {
        let mut f = Fb::new();
        let c0 = f.i32c(0);
        let (bx, by) = (f.block(), f.block());
        let nz = f.v(format!("icmp ne i32 %p0, {c0}"));
        f.s(format!("br i1 {nz}, label %b{bx}, label %b{by}"));
        f.label(bx);
        f.s(format!("ret {t} %p1"));
        f.label(by);
        f.s(format!("ret {t} %p2"));
        let name = format!("pick_{t}");
        fx.helper(&name, t, &["i32", t, t], f.finish());
        let mut f = Fb::new();
        let k = f.load("i32", "%p0", 0);
        let x = f.load(t, "%p0", 8);
        let y = f.load(t, "%p0", 8 + size);
        let r = f.v(format!("call {t} @[{name}](i32 {k}, {t} {x}, {t} {y})"));
        f.store(t, &r, "%p1", 0);
        f.s("ret void");
        let (x, y) = (1.25f64, -7.5f64);
        let xb = super::float::fbytes(t, x);
        let yb = super::float::fbytes(t, y);
        let cases = [0u32, 1, 5]
            .iter()
            .map(|&k| Case {
                label: format!("k = {k}"),
                input: [k.to_le_bytes().to_vec(), vec![0; 4], xb.clone(), yb.clone()].concat(),
                want: vec![super::float::fwant(t, if k != 0 { x } else { y })],
            })
            .collect();
        fx.kernel(Kernel::new(format!("return_{t}"), f.finish(), cases));
    }
}
