//! select (with an i1 condition that carries garbage), conditional branches, and switch:
//! dense, sparse, narrow (i8 with garbage), i64, shared targets, default only.

use super::*;

pub fn fixture() -> Fixture {
    let mut fx = Fixture::new(
        "select_switch",
        "select on every type with a condition truncated from an i32 (only bit 0 counts),\n\
         br on such a condition, and switch: dense i32 cases (a jump table), sparse i32 cases,\n\
         i8 cases on a value with garbage, i64 cases beyond 32 bits, two cases sharing a\n\
         target, and a switch with only a default.",
    );
    let conds: [u32; 8] = [0, 1, 2, 3, 0xffff_fffe, 0xffff_ffff, 0x100, 0x8000_0001];

    // select on each type: input {cond i32, pad, a (8), b (8)}.
    let types: [(&str, u32); 7] = [
        ("i1", 1),
        ("i8", 8),
        ("i16", 16),
        ("i32", 32),
        ("i64", 64),
        ("float", 0),
        ("double", 0),
    ];
    for (t, w) in types {
        let mut f = Fb::new();
        let c = f.load("i32", "%p0", 0);
        let c1 = f.v(format!("trunc i32 {c} to i1"));
        let (a, b) = if w == 0 {
            (f.load(t, "%p0", 8), f.load(t, "%p0", 16))
        } else {
            (f.load_int(w, "%p0", 8), f.load_int(w, "%p0", 16))
        };
        let r = f.v(format!("select i1 {c1}, {t} {a}, {t} {b}"));
        match (t, w) {
            ("float", _) => {
                let i = f.v(format!("bitcast float {r} to i32"));
                f.store("i32", &i, "%p1", 0);
                f.store("i32", &i, "%p1", 4);
            }
            ("double", _) => f.store(t, &r, "%p1", 0),
            _ => f.store_int_result(w, &r, "%p1", 0),
        }
        f.s("ret void");
        let (va, vb): (u64, u64) = match t {
            "float" => (1.5f32.to_bits() as u64, (-2.25f32).to_bits() as u64),
            "double" => (1.5f64.to_bits(), (-2.25f64).to_bits()),
            _ => (
                0x1122_3344_5566_7788 & mask(w),
                0x99aa_bbcc_ddee_ff01 & mask(w),
            ),
        };
        let cases = conds
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let pick = if c & 1 == 1 { va } else { vb };
                let (ia, ib) = if w == 0 || w == 64 {
                    (va, vb)
                } else {
                    (raw32(va, w, 2 * i) as u64, raw32(vb, w, 2 * i + 1) as u64)
                };
                let want = match (t, w) {
                    ("float", _) => vec![u32w(pick as u32), u32w(pick as u32)],
                    ("double", _) => vec![u64w(pick)],
                    (_, 32) => vec![u32w(pick as u32), pad(4)],
                    _ => super::int::int_result(w, pick),
                };
                Case {
                    label: format!("cond {c:#x}"),
                    input: [
                        c.to_le_bytes().to_vec(),
                        vec![0; 4],
                        ia.to_le_bytes().to_vec(),
                        ib.to_le_bytes().to_vec(),
                    ]
                    .concat(),
                    want,
                }
            })
            .collect();
        fx.kernel(Kernel::new(format!("select_{t}"), f.finish(), cases));
    }

    // br on a truncated condition: writes 1 on the true edge, 2 on the false one.
    {
        let mut f = Fb::new();
        let c = f.load("i32", "%p0", 0);
        let c1 = f.v(format!("trunc i32 {c} to i1"));
        let (bt, bf, bj) = (f.block(), f.block(), f.block());
        f.s(format!("br i1 {c1}, label %b{bt}, label %b{bf}"));
        f.label(bt);
        let one = f.c("i8", 1);
        let two = f.c("i8", 2);
        f.s(format!("br label %b{bj}"));
        f.label(bf);
        f.s(format!("br label %b{bj}"));
        f.label(bj);
        let r = f.v(format!("phi i8 [{one}, %b{bt}], [{two}, %b{bf}]"));
        f.store("i8", &r, "%p1", 0);
        f.s("ret void");
        let cases = conds
            .iter()
            .map(|&c| Case {
                label: format!("cond {c:#x}"),
                input: c.to_le_bytes().to_vec(),
                want: vec![u8w(if c & 1 == 1 { 1 } else { 2 })],
            })
            .collect();
        fx.kernel(Kernel::new("br_i1", f.finish(), cases));
    }

    // Switches: each case k (in the order given) stores k + 1; the default stores 0.
    let dense: Vec<i64> = (-3..=12).collect();
    let sparse: Vec<i64> = vec![-1000, 5, 77, 1 << 20, 3, i32::MIN as i64, i32::MAX as i64];
    let narrow: Vec<i64> = vec![-1, 5, 100, -128, 127, 0];
    let wide: Vec<i64> = vec![-5, 1 << 40, 0, i64::MIN, (1 << 32) + 7, 7];
    let mut inputs_i32: Vec<i64> = (-20..=20).collect();
    inputs_i32.extend([-1000, 77, 1 << 20, i32::MIN as i64, i32::MAX as i64, 1000]);
    let inputs_i8: Vec<u64> = vec![
        0xff,
        0x1ff,
        5,
        0x305,
        100,
        0x80,
        0x180,
        0x7f,
        0xffff_ff7f,
        0,
        0x100,
        8,
        0xffff_ff05,
    ];
    let inputs_i64: Vec<i64> = vec![
        -5,
        1 << 40,
        0,
        1,
        (1 << 40) + 1,
        i64::MIN,
        (1 << 32) + 7,
        7,
        -1,
        (-5i64) & 0xffff_ffff,
    ];
    switch_kernel(
        &mut fx,
        "switch_dense_i32",
        "i32",
        &dense,
        &[],
        &ints_i32(&inputs_i32),
    );
    switch_kernel(
        &mut fx,
        "switch_sparse_i32",
        "i32",
        &sparse,
        &[],
        &ints_i32(&inputs_i32),
    );
    switch_kernel(
        &mut fx,
        "switch_i8",
        "i8",
        &narrow,
        &[],
        &inputs_i8.iter().map(|&x| x as i64).collect::<Vec<_>>(),
    );
    switch_kernel(&mut fx, "switch_i64", "i64", &wide, &[], &inputs_i64);
    // Cases 10 and 20 share a target (both store 1), 30 has its own.
    switch_kernel(
        &mut fx,
        "switch_shared_target",
        "i32",
        &[10, 30],
        &[(20, 0)],
        &ints_i32(&[10, 20, 30, 0, 15]),
    );
    switch_kernel(
        &mut fx,
        "switch_default_only",
        "i32",
        &[],
        &[],
        &ints_i32(&[0, 1, -1]),
    );
    fx
}

fn ints_i32(v: &[i64]) -> Vec<i64> {
    v.to_vec()
}

/// A switch on `ty` over `cases` (case k stores k + 1), plus `extra` cases (value, index
/// of the case whose block they share); the default stores 0. The input record is the
/// value as an i64 (narrow types: its low 32 bits, truncated).
fn switch_kernel(
    fx: &mut Fixture,
    name: &str,
    ty: &str,
    cases: &[i64],
    extra: &[(i64, usize)],
    inputs: &[i64],
) {
    let w: u32 = ty[1..].parse().unwrap();
    let mut f = Fb::new();
    let x = if w == 64 {
        f.load("i64", "%p0", 0)
    } else {
        f.load_int(w, "%p0", 0)
    };
    let b_default = f.block();
    let blocks: Vec<usize> = cases.iter().map(|_| f.block()).collect();
    let b_join = f.block();
    let mut sw = format!("switch {ty} {x} {{ default: br label %b{b_default};");
    for (c, b) in cases.iter().zip(&blocks) {
        sw += &format!(" {ty} {c}: br label %b{b};");
    }
    for (c, k) in extra {
        sw += &format!(" {ty} {c}: br label %b{};", blocks[*k]);
    }
    sw += " }";
    f.raw(sw);
    f.label(b_default);
    f.s(format!("br label %b{b_join}"));
    for b in &blocks {
        f.label(*b);
        f.s(format!("br label %b{b_join}"));
    }
    f.label(b_join);
    let mut phi = format!("phi i32 [{}, %b{b_default}]", f.i32c(0));
    for (k, b) in blocks.iter().enumerate() {
        let c = f.i32c(k as i64 + 1);
        phi += &format!(", [{c}, %b{b}]");
    }
    let r = f.v(phi);
    f.store("i32", &r, "%p1", 0);
    f.s("ret void");
    let m = mask(w);
    let kcases = inputs
        .iter()
        .map(|&x| {
            let v = sext(x as u64 & m, w);
            let k = cases
                .iter()
                .position(|&c| sext(c as u64 & m, w) == v)
                .map(|k| k + 1)
                .or_else(|| {
                    extra
                        .iter()
                        .find(|(c, _)| sext(*c as u64 & m, w) == v)
                        .map(|(_, k)| k + 1)
                })
                .unwrap_or(0);
            Case {
                label: format!("{x:#x}"),
                input: (x as u64).to_le_bytes().to_vec(),
                want: vec![u32w(k as u32)],
            }
        })
        .collect();
    fx.kernel(Kernel::new(name, f.finish(), kcases));
}
