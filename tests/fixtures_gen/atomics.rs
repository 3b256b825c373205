//! The PNaCl atomic intrinsics at every width: load, store, the six read-modify-write
//! operations, cmpxchg (succeeding and failing), the fences, and is.lock.free.

use super::*;

/// llvm.nacl.atomic.rmw operation codes.
const RMW: [(u32, &str); 6] = [
    (1, "add"),
    (2, "sub"),
    (3, "or"),
    (4, "and"),
    (5, "xor"),
    (6, "xchg"),
];

/// memory_order_seq_cst, the only order PNaCl allows.
const SEQ_CST: i64 = 6;

fn rmw(op: u32, w: u32, old: u64, v: u64) -> u64 {
    let r = match op {
        1 => old.wrapping_add(v),
        2 => old.wrapping_sub(v),
        3 => old | v,
        4 => old & v,
        5 => old ^ v,
        _ => v,
    };
    r & mask(w)
}

/// The output record of the rmw and cmpxchg kernels: the memory word after the operation
/// (its width, zero-padded to 8 bytes), then the returned old value zero-extended to i64.
fn mem_and_old(w: u32, mem: u64, old: u64) -> Vec<Want> {
    let n = (w / 8) as usize;
    let mut b = (mem & mask(w)).to_le_bytes().to_vec();
    b[n..].fill(0);
    vec![Want::Bytes(b), u64w(old & mask(w))]
}

/// Stores the returned `w`-bit value zero-extended to i64 at out + 8.
fn store_old(f: &mut Fb, w: u32, t: &str, old: &str) {
    if w == 64 {
        f.store("i64", old, "%p1", 8);
    } else {
        let z = f.v(format!("zext {t} {old} to i64"));
        f.store("i64", &z, "%p1", 8);
    }
}

pub fn fixture() -> Fixture {
    let mut fx = Fixture::new(
        "atomics",
        "llvm.nacl.atomic.{load,store,rmw,cmpxchg} at i8, i16, i32 and i64 (seq_cst), on a\n\
         naturally aligned word of the output record; narrow operands carry garbage in their\n\
         containers. rmw: add, sub, or, and, xor, xchg, each returning the old value.\n\
         cmpxchg succeeds when the expected value matches (after truncation) and otherwise\n\
         returns the current value and stores nothing. Also llvm.nacl.atomic.fence,\n\
         fence.all, and is.lock.free for 1, 2, 4, 8 (true) and 16 (false) bytes.",
    );
    let inits: [u64; 3] = [0x9abc_def0_1234_5677, 0, u64::MAX];
    let vals: [u64; 3] = [0x1_2345_6789_abcd, 1, 0x8000_0000_8000_0080];
    for (t, w) in INT_TYPES {
        let order = |f: &mut Fb| f.i32c(SEQ_CST);
        // rmw: input {init container, v container} (8 bytes each).
        for (code, name) in RMW {
            let mut f = Fb::new();
            let init = f.load_int(w, "%p0", 0);
            let v = f.load_int(w, "%p0", 8);
            f.store(t, &init, "%p1", 0);
            let opc = f.i32c(code as i64);
            let o = order(&mut f);
            let old = f.v(format!(
                "call {t} @[llvm.nacl.atomic.rmw.{t}](i32 {opc}, i32 %p1, {t} {v}, i32 {o})"
            ));
            store_old(&mut f, w, t, &old);
            f.s("ret void");
            let mut cases = Vec::new();
            for (i, &a) in inits.iter().enumerate() {
                for (j, &b) in vals.iter().enumerate() {
                    let (a, b) = (a & mask(w), b & mask(w));
                    let n = cases.len();
                    let input = container_pair(w, a, b, n);
                    cases.push(Case {
                        label: format!("{name} init {a:#x}, v {b:#x} ({i}, {j})"),
                        input,
                        want: mem_and_old(w, rmw(code, w, a, b), a),
                    });
                }
            }
            fx.kernel(Kernel::new(format!("rmw_{name}_{t}"), f.finish(), cases));
        }
        // cmpxchg: input {init, expected, desired} containers.
        {
            let mut f = Fb::new();
            let init = f.load_int(w, "%p0", 0);
            let exp = f.load_int(w, "%p0", 8);
            let des = f.load_int(w, "%p0", 16);
            f.store(t, &init, "%p1", 0);
            let o = order(&mut f);
            let old = f.v(format!(
                "call {t} @[llvm.nacl.atomic.cmpxchg.{t}](i32 %p1, {t} {exp}, {t} {des}, i32 {o}, i32 {o})"
            ));
            store_old(&mut f, w, t, &old);
            f.s("ret void");
            let m = mask(w);
            let mut cases = Vec::new();
            for (k, (init, exp, des)) in [
                (0x2222_2222_2222_2222u64, 0x2222_2222_2222_2222u64, 0x42u64),
                (0x2222_2222_2222_2222, 0x2222_2222_2222_2223, 0x43),
                (0, 0, u64::MAX),
                (u64::MAX, 0x7fff_ffff_ffff_ffff, 5),
            ]
            .into_iter()
            .enumerate()
            {
                let (init, exp, des) = (init & m, exp & m, des & m);
                let mem = if init == exp { des } else { init };
                let input = [
                    container_one(w, init, 3 * k),
                    container_one(w, exp, 3 * k + 1),
                    container_one(w, des, 3 * k + 2),
                ]
                .concat();
                cases.push(Case {
                    label: format!("init {init:#x}, expected {exp:#x}, desired {des:#x}"),
                    input,
                    want: mem_and_old(w, mem, init),
                });
            }
            fx.kernel(Kernel::new(format!("cmpxchg_{t}"), f.finish(), cases));
        }
        // atomic store then atomic load: input {v}; record {memory after store, loaded}.
        {
            let mut f = Fb::new();
            let v = f.load_int(w, "%p0", 0);
            let o = order(&mut f);
            f.s(format!(
                "call void @[llvm.nacl.atomic.store.{t}]({t} {v}, i32 %p1, i32 {o})"
            ));
            let l = f.v(format!(
                "call {t} @[llvm.nacl.atomic.load.{t}](i32 %p1, i32 {o})"
            ));
            store_old(&mut f, w, t, &l);
            f.s("ret void");
            let cases = vals
                .iter()
                .chain(&inits)
                .enumerate()
                .map(|(i, &v)| {
                    let v = v & mask(w);
                    Case {
                        label: format!("{v:#x}"),
                        input: container_one(w, v, i),
                        want: mem_and_old(w, v, v),
                    }
                })
                .collect();
            fx.kernel(Kernel::new(format!("load_store_{t}"), f.finish(), cases));
        }
    }
    // Fences and is.lock.free: one record of 6 bytes.
    let mut f = Fb::new();
    let o = f.i32c(SEQ_CST);
    f.s(format!("call void @[llvm.nacl.atomic.fence](i32 {o})"));
    f.s("call void @[llvm.nacl.atomic.fence.all]()");
    for (i, n) in [1i64, 2, 4, 8, 16].iter().enumerate() {
        let c = f.i32c(*n);
        let r = f.v(format!(
            "call i1 @[llvm.nacl.atomic.is.lock.free](i32 {c}, i32 %p1)"
        ));
        let z = f.v(format!("zext i1 {r} to i8"));
        f.store("i8", &z, "%p1", i);
    }
    let one = f.c("i8", 1);
    f.store("i8", &one, "%p1", 5);
    f.s("ret void");
    fx.kernel(Kernel::new(
        "fences_lock_free",
        f.finish(),
        vec![Case {
            label: "sizes 1, 2, 4, 8, 16".into(),
            input: vec![0; 8],
            want: vec![Want::Bytes(vec![1, 1, 1, 1, 0, 1])],
        }],
    ));
    fx
}

/// One value in an 8-byte input slot: the container (with garbage for narrow widths),
/// zero-padded.
fn container_one(w: u32, v: u64, i: usize) -> Vec<u8> {
    if w == 64 {
        v.to_le_bytes().to_vec()
    } else {
        [raw32(v, w, i).to_le_bytes(), [0; 4]].concat()
    }
}

fn container_pair(w: u32, a: u64, b: u64, i: usize) -> Vec<u8> {
    [container_one(w, a, 2 * i), container_one(w, b, 2 * i + 1)].concat()
}
