//! Threads through the IRT (nacl-irt-thread-0.1, nacl-irt-futex-0.1): 8 threads contending
//! on one word with every atomic rmw operation at every width and with cmpxchg loops,
//! futex_wait_abs timeouts, and thread exit + join through the stack flag.
//!
//! Each contention kernel starts 8 threads (`run_threads`): every thread gets a stack of
//! its own and a parameter block as its thread pointer, counts itself in `ready`, waits on
//! the `go` futex, then runs its loop helper (N operations on the shared `cell`) and ends
//! with thread_exit(&its flag); the kernel joins by futex-waiting on each flag until it is
//! 0. The operand of thread t's i-th operation is a function of (t, i) computed both in the
//! program and here, so the final value is exact whatever the interleaving: add, sub, or,
//! and, xor and the cmpxchg loop commute; for xchg, the values returned plus the final
//! value are the initial value plus every value written.

use super::*;

/// Threads per contention kernel.
const THREADS: u32 = 8;
/// Operations per thread.
const N: u32 = 1_000_000;
/// Bytes of stack per thread.
const STACK: u32 = 16384;
/// Bytes of a thread's parameter block (its thread pointer): flag @0, index @4, loop
/// helper @8, target @12, N @16, alloca address @20, result (i64) @24.
const PARAMS: u32 = 32;

const RMW: [(u32, &str); 6] = [
    (1, "add"),
    (2, "sub"),
    (3, "or"),
    (4, "and"),
    (5, "xor"),
    (6, "xchg"),
];
const SEQ_CST: i64 = 6;

/// Operand of thread `t`'s `i`-th operation for `op` at width `w` (as the program computes
/// it; see `operand`).
fn x_of(op: &str, w: u32, t: u32, i: u32) -> u64 {
    let bit = |k: u32| 1u64 << k;
    match op {
        "or" => bit((t * N + i) % w),
        "and" => !bit((t * N + i) % w) & mask(w),
        _ => {
            let x32 = t
                .wrapping_mul(7919)
                .wrapping_add(i.wrapping_mul(31))
                .wrapping_add(1);
            if w == 64 {
                u64::from(x32).wrapping_mul(0x1_0000_000f)
            } else {
                u64::from(x32) & mask(w)
            }
        }
    }
}

/// The operand in the program: `t` and `i` are i32 values; the result has type `ty`.
fn operand(f: &mut Fb, op: &str, ty: &str, w: u32, t: &str, i: &str) -> String {
    match op {
        "or" | "and" => {
            let tn = f.v(format!("mul i32 {t}, {}", "%p2"));
            let k0 = f.v(format!("add i32 {tn}, {i}"));
            let wc = f.i32c(i64::from(w));
            let k = f.v(format!("urem i32 {k0}, {wc}"));
            let bit = if w == 64 {
                let k64 = f.v(format!("zext i32 {k} to i64"));
                let one = f.c("i64", 1);
                f.v(format!("shl i64 {one}, {k64}"))
            } else {
                let one = f.i32c(1);
                let b = f.v(format!("shl i32 {one}, {k}"));
                if w == 32 {
                    b
                } else {
                    f.v(format!("trunc i32 {b} to {ty}"))
                }
            };
            if op == "or" {
                bit
            } else {
                let m1 = f.c(ty, -1);
                f.v(format!("xor {ty} {bit}, {m1}"))
            }
        }
        _ => {
            let c7919 = f.i32c(7919);
            let c31 = f.i32c(31);
            let c1 = f.i32c(1);
            let a = f.v(format!("mul i32 {t}, {c7919}"));
            let b = f.v(format!("mul i32 {i}, {c31}"));
            let s = f.v(format!("add i32 {a}, {b}"));
            let x = f.v(format!("add i32 {s}, {c1}"));
            match w {
                64 => {
                    let z = f.v(format!("zext i32 {x} to i64"));
                    let k = f.c("i64", 0x1_0000_000fu64);
                    f.v(format!("mul i64 {z}, {k}"))
                }
                32 => x,
                _ => f.v(format!("trunc i32 {x} to {ty}")),
            }
        }
    }
}

/// Zero-extends a `ty` value to i64.
fn zext64(f: &mut Fb, ty: &str, v: &str) -> String {
    if ty == "i64" {
        v.to_string()
    } else {
        f.v(format!("zext {ty} {v} to i64"))
    }
}

/// `i64 loop_<op>_<ty>(i32 target, i32 t, i32 n)`: n rmw operations; returns the sum of
/// the old values (zero-extended).
fn rmw_loop(code: u32, op: &str, ty: &str, w: u32) -> String {
    let mut f = Fb::new();
    let zero = f.i32c(0);
    let zero64 = f.c("i64", 0);
    let (b_loop, b_end) = (f.block(), f.block());
    f.s(format!("br label %b{b_loop}"));
    f.label(b_loop);
    let (i_next, acc_next) = (f.fwd(), f.fwd());
    let i = f.v(format!("phi i32 [{zero}, %b0], [{i_next}, %b{b_loop}]"));
    let acc = f.v(format!("phi i64 [{zero64}, %b0], [{acc_next}, %b{b_loop}]"));
    let x = operand(&mut f, op, ty, w, "%p1", &i);
    let opc = f.i32c(i64::from(code));
    let o = f.i32c(SEQ_CST);
    let old = f.v(format!(
        "call {ty} @[llvm.nacl.atomic.rmw.{ty}](i32 {opc}, i32 %p0, {ty} {x}, i32 {o})"
    ));
    let z = zext64(&mut f, ty, &old);
    let acc1 = f.v(format!("add i64 {acc}, {z}"));
    f.bind(&acc_next, &acc1);
    let one = f.i32c(1);
    let i1 = f.v(format!("add i32 {i}, {one}"));
    f.bind(&i_next, &i1);
    let more = f.v(format!("icmp ult i32 {i1}, %p2"));
    f.s(format!("br i1 {more}, label %b{b_loop}, label %b{b_end}"));
    f.label(b_end);
    f.s(format!("ret i64 {acc1}"));
    f.finish()
}

/// `i64 loop_cas_<ty>(i32 target, i32 t, i32 n)`: n additions, each an atomic load and a
/// cmpxchg retried until it succeeds; returns 0.
fn cas_loop(ty: &str, w: u32) -> String {
    let mut f = Fb::new();
    let zero = f.i32c(0);
    let zero64 = f.c("i64", 0);
    let o = f.i32c(SEQ_CST);
    let (b_loop, b_cas, b_next, b_end) = (f.block(), f.block(), f.block(), f.block());
    f.s(format!("br label %b{b_loop}"));
    f.label(b_loop);
    let i_next = f.fwd();
    let i = f.v(format!("phi i32 [{zero}, %b0], [{i_next}, %b{b_next}]"));
    let x = operand(&mut f, "add", ty, w, "%p1", &i);
    let old0 = f.v(format!(
        "call {ty} @[llvm.nacl.atomic.load.{ty}](i32 %p0, i32 {o})"
    ));
    f.s(format!("br label %b{b_cas}"));
    f.label(b_cas);
    let r_fwd = f.fwd();
    let old = f.v(format!(
        "phi {ty} [{old0}, %b{b_loop}], [{r_fwd}, %b{b_cas}]"
    ));
    let new = f.v(format!("add {ty} {old}, {x}"));
    let r = f.v(format!(
        "call {ty} @[llvm.nacl.atomic.cmpxchg.{ty}](i32 %p0, {ty} {old}, {ty} {new}, i32 {o}, i32 {o})"
    ));
    f.bind(&r_fwd, &r);
    let ok = f.v(format!("icmp eq {ty} {r}, {old}"));
    f.s(format!("br i1 {ok}, label %b{b_next}, label %b{b_cas}"));
    f.label(b_next);
    let one = f.i32c(1);
    let i1 = f.v(format!("add i32 {i}, {one}"));
    f.bind(&i_next, &i1);
    let more = f.v(format!("icmp ult i32 {i1}, %p2"));
    f.s(format!("br i1 {more}, label %b{b_loop}, label %b{b_end}"));
    f.label(b_end);
    f.s(format!("ret i64 {zero64}"));
    f.finish()
}

/// `i32 setup(i32)`: queries thread-0.1, futex-0.1 and basic-0.1 into their tables (traps
/// unless all three answer).
fn setup_body() -> String {
    let mut f = Fb::new();
    let q = f.load("i32", "@[g:query]", 0);
    let mut oks = Vec::new();
    for (name, table, size) in [
        ("thread_name", "tirt", 12),
        ("futex_name", "firt", 8),
        ("basic_name", "basic", 24),
    ] {
        let sz = f.i32c(size);
        let r = f.v(format!(
            "call i32 {q}(i32 @[g:{name}], i32 @[g:{table}], i32 {sz})"
        ));
        oks.push(f.v(format!("icmp eq i32 {r}, {sz}")));
    }
    let a = f.v(format!("and i1 {}, {}", oks[0], oks[1]));
    let ok = f.v(format!("and i1 {a}, {}", oks[2]));
    let (b_trap, b_ok) = (f.block(), f.block());
    f.s(format!("br i1 {ok}, label %b{b_ok}, label %b{b_trap}"));
    f.label(b_trap);
    f.s("call void @[llvm.trap]()");
    f.s("unreachable");
    f.label(b_ok);
    let zero = f.i32c(0);
    f.s(format!("ret i32 {zero}"));
    f.finish()
}

/// `void run_threads(i32 start, i32 helper)`: starts THREADS threads at `start` with
/// parameter blocks {flag 1, t, helper, cell, N}, waits until all are ready, releases them
/// through the `go` futex and joins them through their flags.
fn run_threads_body() -> String {
    let mut f = Fb::new();
    let zero = f.i32c(0);
    let one = f.i32c(1);
    let o = f.i32c(SEQ_CST);
    let nthreads = f.i32c(i64::from(THREADS));
    let psize = f.i32c(i64::from(PARAMS));
    let ssize = f.i32c(i64::from(STACK));
    let n = f.i32c(i64::from(N));
    f.store("i32", &zero, "@[g:ready]", 0);
    f.store("i32", &zero, "@[g:go]", 0);
    // Blocks are numbered in the order their labels appear.
    let (b_create, b_created, b_spin, b_release, b_join, b_wait, b_sleep) = (
        f.block(),
        f.block(),
        f.block(),
        f.block(),
        f.block(),
        f.block(),
        f.block(),
    );
    let (b_joined, b_done, b_trap) = (f.block(), f.block(), f.block());
    f.s(format!("br label %b{b_create}"));

    f.label(b_create);
    let t_next = f.fwd();
    let t = f.v(format!("phi i32 [{zero}, %b0], [{t_next}, %b{b_created}]"));
    let off = f.v(format!("mul i32 {t}, {psize}"));
    let pb = f.v(format!("add i32 @[g:params], {off}"));
    f.store("i32", &one, &pb, 0);
    f.store("i32", &t, &pb, 4);
    f.store("i32", "%p1", &pb, 8);
    f.store("i32", "@[g:cell]", &pb, 12);
    f.store("i32", &n, &pb, 16);
    let t1 = f.v(format!("add i32 {t}, {one}"));
    f.bind(&t_next, &t1);
    let soff = f.v(format!("mul i32 {t1}, {ssize}"));
    let top = f.v(format!("add i32 @[g:stacks], {soff}"));
    let create = f.load("i32", "@[g:tirt]", 0);
    let r = f.v(format!("call i32 {create}(i32 %p0, i32 {top}, i32 {pb})"));
    let bad = f.v(format!("icmp ne i32 {r}, {zero}"));
    f.s(format!(
        "br i1 {bad}, label %b{b_trap}, label %b{b_created}"
    ));
    f.label(b_created);
    let more = f.v(format!("icmp ult i32 {t1}, {nthreads}"));
    f.s(format!(
        "br i1 {more}, label %b{b_create}, label %b{b_spin}"
    ));

    f.label(b_spin);
    let rd = f.v(format!(
        "call i32 @[llvm.nacl.atomic.load.i32](i32 @[g:ready], i32 {o})"
    ));
    let all = f.v(format!("icmp eq i32 {rd}, {nthreads}"));
    f.s(format!(
        "br i1 {all}, label %b{b_release}, label %b{b_spin}"
    ));

    f.label(b_release);
    f.s(format!(
        "call void @[llvm.nacl.atomic.store.i32](i32 {one}, i32 @[g:go], i32 {o})"
    ));
    let wake = f.load("i32", "@[g:firt]", 4);
    let _ = f.v(format!(
        "call i32 {wake}(i32 @[g:go], i32 {nthreads}, i32 @[g:count])"
    ));
    f.s(format!("br label %b{b_join}"));

    f.label(b_join);
    let j_next = f.fwd();
    let j = f.v(format!(
        "phi i32 [{zero}, %b{b_release}], [{j_next}, %b{b_joined}]"
    ));
    let joff = f.v(format!("mul i32 {j}, {psize}"));
    let jpb = f.v(format!("add i32 @[g:params], {joff}"));
    f.s(format!("br label %b{b_wait}"));
    f.label(b_wait);
    let flag = f.v(format!(
        "call i32 @[llvm.nacl.atomic.load.i32](i32 {jpb}, i32 {o})"
    ));
    let gone = f.v(format!("icmp eq i32 {flag}, {zero}"));
    f.s(format!(
        "br i1 {gone}, label %b{b_joined}, label %b{b_sleep}"
    ));
    f.label(b_sleep);
    let fwait = f.load("i32", "@[g:firt]", 0);
    let _ = f.v(format!(
        "call i32 {fwait}(i32 {jpb}, i32 {flag}, i32 {zero})"
    ));
    f.s(format!("br label %b{b_wait}"));
    f.label(b_joined);
    let j1 = f.v(format!("add i32 {j}, {one}"));
    f.bind(&j_next, &j1);
    let jmore = f.v(format!("icmp ult i32 {j1}, {nthreads}"));
    f.s(format!("br i1 {jmore}, label %b{b_join}, label %b{b_done}"));

    f.label(b_done);
    f.s("ret void");
    f.label(b_trap);
    f.s("call void @[llvm.trap]()");
    f.s("unreachable");
    f.finish()
}

/// Counts the calling thread in `ready` (both workers start so).
fn count_ready(f: &mut Fb) {
    let one = f.i32c(1);
    let add = f.i32c(1);
    let o = f.i32c(SEQ_CST);
    let _ = f.v(format!(
        "call i32 @[llvm.nacl.atomic.rmw.i32](i32 {add}, i32 @[g:ready], i32 {one}, i32 {o})"
    ));
}

/// Ends the calling thread: thread_exit(tp), tp's first word being its flag.
fn exit_thread(f: &mut Fb, tp: &str) {
    let exit = f.load("i32", "@[g:tirt]", 4);
    f.s(format!("call void {exit}(i32 {tp})"));
    f.s("unreachable");
}

/// `void worker()`: ready, wait for go, run the loop helper, keep its result, exit.
fn worker_body() -> String {
    let mut f = Fb::new();
    let zero = f.i32c(0);
    let o = f.i32c(SEQ_CST);
    let tp = f.v("call i32 @[llvm.nacl.read.tp]()");
    count_ready(&mut f);
    let (b_wait, b_sleep, b_run) = (f.block(), f.block(), f.block());
    f.s(format!("br label %b{b_wait}"));
    f.label(b_wait);
    let go = f.v(format!(
        "call i32 @[llvm.nacl.atomic.load.i32](i32 @[g:go], i32 {o})"
    ));
    let set = f.v(format!("icmp ne i32 {go}, {zero}"));
    f.s(format!("br i1 {set}, label %b{b_run}, label %b{b_sleep}"));
    f.label(b_sleep);
    let fwait = f.load("i32", "@[g:firt]", 0);
    let _ = f.v(format!(
        "call i32 {fwait}(i32 @[g:go], i32 {zero}, i32 {zero})"
    ));
    f.s(format!("br label %b{b_wait}"));
    f.label(b_run);
    let t = f.load("i32", &tp, 4);
    let helper = f.load("i32", &tp, 8);
    let target = f.load("i32", &tp, 12);
    let n = f.load("i32", &tp, 16);
    let s = f.v(format!("call i64 {helper}(i32 {target}, i32 {t}, i32 {n})"));
    f.store("i64", &s, &tp, 24);
    exit_thread(&mut f, &tp);
    f.finish()
}

/// `void joiner()`: ready; records an alloca's address (on its own stack), its thread
/// pointer and 3t + 1; exits.
fn joiner_body() -> String {
    let mut f = Fb::new();
    let tp = f.v("call i32 @[llvm.nacl.read.tp]()");
    count_ready(&mut f);
    let c16 = f.i32c(16);
    let a = f.v(format!("alloca i8, i32 {c16}, align 8"));
    f.store("i32", &a, &tp, 20);
    f.store("i32", &tp, &tp, 28);
    let t = f.load("i32", &tp, 4);
    let c3 = f.i32c(3);
    let c1 = f.i32c(1);
    let m = f.v(format!("mul i32 {t}, {c3}"));
    let v = f.v(format!("add i32 {m}, {c1}"));
    f.store("i32", &v, &tp, 24);
    exit_thread(&mut f, &tp);
    f.finish()
}

/// Expected final value (or, for xchg, final + sum of returned values) of a kernel.
fn expected_total(op: &str, w: u32, init: u64) -> u64 {
    let m = mask(w);
    let xs = (0..THREADS).flat_map(|t| (0..N).map(move |i| x_of(op, w, t, i)));
    match op {
        "add" | "cas" => xs.fold(init, |a, x| a.wrapping_add(x)) & m,
        "sub" => xs.fold(init, |a, x| a.wrapping_sub(x)) & m,
        "or" => xs.fold(init, |a, x| a | x) & m,
        "and" => xs.fold(init, |a, x| a & x) & m,
        "xor" => xs.fold(init, |a, x| a ^ x) & m,
        "xchg" => xs.fold(init, |a, x| a.wrapping_add(x)),
        _ => unreachable!(),
    }
}

/// A contention kernel: cell = init; 8 threads run `helper`; out = the cell (for xchg plus
/// the old values the threads saw).
fn contention_kernel(op: &str, ty: &str, w: u32, init: u64) -> Kernel {
    let mut f = Fb::new();
    let zero = f.i32c(0);
    let _ = f.v(format!("call i32 @[setup](i32 {zero})"));
    let v = f.load_int(w, "%p0", 0);
    f.store(ty, &v, "@[g:cell]", 0);
    f.s(format!(
        "call void @[run_threads](i32 @[worker], i32 @[loop_{op}_{ty}])"
    ));
    let fin = f.load(ty, "@[g:cell]", 0);
    let mut total = zext64(&mut f, ty, &fin);
    if op == "xchg" {
        for t in 0..THREADS {
            let s = f.load("i64", "@[g:params]", (t * PARAMS + 24) as usize);
            total = f.v(format!("add i64 {total}, {s}"));
        }
    }
    f.store("i64", &total, "%p1", 0);
    f.s("ret void");
    let input = if w == 64 {
        init.to_le_bytes().to_vec()
    } else {
        let mut b = raw32(init, w, 1).to_le_bytes().to_vec();
        b.extend([0; 4]);
        b
    };
    Kernel::new(
        format!("contend_{op}_{ty}"),
        f.finish(),
        vec![Case {
            label: format!("{THREADS} threads x {N} {op} on {ty}, initially {init:#x}"),
            input,
            want: vec![u64w(expected_total(op, w, init))],
        }],
    )
}

/// futex_wait_abs with a deadline in the past, with a wrong value, with a deadline 50 ms
/// ahead (and whether it returned no earlier), wrong value without deadline, and a wake
/// with no waiter.
fn futex_kernel() -> Kernel {
    let mut f = Fb::new();
    let zero = f.i32c(0);
    let _ = f.v(format!("call i32 @[setup](i32 {zero})"));
    f.store("i32", &zero, "@[g:word]", 0);
    let fwait = f.load("i32", "@[g:firt]", 0);
    let fwake = f.load("i32", "@[g:firt]", 4);
    let gettod = f.load("i32", "@[g:basic]", 4);
    // 1 s after the epoch: long past.
    let one64 = f.c("i64", 1);
    f.store("i64", &one64, "@[g:ts]", 0);
    f.store("i32", &zero, "@[g:ts]", 8);
    let r_past = f.v(format!(
        "call i32 {fwait}(i32 @[g:word], i32 {zero}, i32 @[g:ts])"
    ));
    f.store("i32", &r_past, "%p1", 0);
    let five = f.i32c(5);
    let r_ne = f.v(format!(
        "call i32 {fwait}(i32 @[g:word], i32 {five}, i32 @[g:ts])"
    ));
    f.store("i32", &r_ne, "%p1", 4);
    // now + 50 ms as a timespec.
    let now_us = |f: &mut Fb| -> String {
        let _ = f.v(format!("call i32 {gettod}(i32 @[g:tv])"));
        let sec = f.load("i64", "@[g:tv]", 0);
        let usec = f.load("i32", "@[g:tv]", 8);
        let mil = f.c("i64", 1_000_000);
        let s_us = f.v(format!("mul i64 {sec}, {mil}"));
        let u = f.v(format!("zext i32 {usec} to i64"));
        f.v(format!("add i64 {s_us}, {u}"))
    };
    let now = now_us(&mut f);
    let delay = f.c("i64", 50_000);
    let deadline = f.v(format!("add i64 {now}, {delay}"));
    let mil = f.c("i64", 1_000_000);
    let sec = f.v(format!("udiv i64 {deadline}, {mil}"));
    let rem = f.v(format!("urem i64 {deadline}, {mil}"));
    let thousand = f.c("i64", 1000);
    let ns64 = f.v(format!("mul i64 {rem}, {thousand}"));
    let ns = f.v(format!("trunc i64 {ns64} to i32"));
    f.store("i64", &sec, "@[g:ts]", 0);
    f.store("i32", &ns, "@[g:ts]", 8);
    let r_future = f.v(format!(
        "call i32 {fwait}(i32 @[g:word], i32 {zero}, i32 @[g:ts])"
    ));
    f.store("i32", &r_future, "%p1", 8);
    let after = now_us(&mut f);
    let late = f.v(format!("icmp uge i64 {after}, {deadline}"));
    let late32 = f.v(format!("zext i1 {late} to i32"));
    f.store("i32", &late32, "%p1", 12);
    let one = f.i32c(1);
    let r_ne2 = f.v(format!(
        "call i32 {fwait}(i32 @[g:word], i32 {one}, i32 {zero})"
    ));
    f.store("i32", &r_ne2, "%p1", 16);
    let seven = f.i32c(7);
    f.store("i32", &seven, "@[g:count]", 0);
    let r_wake = f.v(format!(
        "call i32 {fwake}(i32 @[g:word], i32 {one}, i32 @[g:count])"
    ));
    f.store("i32", &r_wake, "%p1", 20);
    let woke = f.load("i32", "@[g:count]", 0);
    f.store("i32", &woke, "%p1", 24);
    f.store("i32", &zero, "%p1", 28);
    f.s("ret void");
    Kernel::new(
        "futex_timeouts",
        f.finish(),
        vec![Case {
            label: "past deadline, wrong value, 50 ms deadline, no waiter".into(),
            input: vec![0; 8],
            want: vec![
                u32w(110), // ETIMEDOUT: deadline in the past
                u32w(11),  // EAGAIN: *addr != value
                u32w(110), // ETIMEDOUT: 50 ms later
                u32w(1),   // ... and not before the deadline
                u32w(11),  // EAGAIN without a deadline
                u32w(0),   // futex_wake succeeds
                u32w(0),   // and woke nobody
                pad(4),
            ],
        }],
    )
}

/// Thread exit and join: 8 threads record 3t + 1, an alloca on their own stack and their
/// thread pointer, and exit; after the join (flags back to 0) all of it is visible.
fn join_kernel() -> Kernel {
    let mut f = Fb::new();
    let zero = f.i32c(0);
    let one = f.i32c(1);
    let _ = f.v(format!("call i32 @[setup](i32 {zero})"));
    f.s(format!(
        "call void @[run_threads](i32 @[joiner], i32 {zero})"
    ));
    let (mut sum, mut in_stack, mut tp_ok, mut flags_clear) =
        (zero.clone(), zero.clone(), zero.clone(), zero.clone());
    for t in 0..THREADS {
        let pb_off = (t * PARAMS) as usize;
        let v = f.load("i32", "@[g:params]", pb_off + 24);
        sum = f.v(format!("add i32 {sum}, {v}"));
        let a = f.load("i32", "@[g:params]", pb_off + 20);
        let lo = f.at("@[g:stacks]", (t * STACK) as usize);
        let hi = f.at("@[g:stacks]", ((t + 1) * STACK) as usize);
        let ge = f.v(format!("icmp uge i32 {a}, {lo}"));
        let lt = f.v(format!("icmp ult i32 {a}, {hi}"));
        let both = f.v(format!("and i1 {ge}, {lt}"));
        let z = f.v(format!("zext i1 {both} to i32"));
        in_stack = f.v(format!("add i32 {in_stack}, {z}"));
        let tp = f.load("i32", "@[g:params]", pb_off + 28);
        let pb = f.at("@[g:params]", pb_off);
        let same = f.v(format!("icmp eq i32 {tp}, {pb}"));
        let z2 = f.v(format!("zext i1 {same} to i32"));
        tp_ok = f.v(format!("add i32 {tp_ok}, {z2}"));
        let flag = f.load("i32", "@[g:params]", pb_off);
        let clear = f.v(format!("icmp eq i32 {flag}, {zero}"));
        let z3 = f.v(format!("zext i1 {clear} to i32"));
        flags_clear = f.v(format!("add i32 {flags_clear}, {z3}"));
    }
    let _ = one;
    f.store("i32", &sum, "%p1", 0);
    f.store("i32", &in_stack, "%p1", 4);
    f.store("i32", &tp_ok, "%p1", 8);
    f.store("i32", &flags_clear, "%p1", 12);
    f.s("ret void");
    let sum: u32 = (0..THREADS).map(|t| 3 * t + 1).sum();
    Kernel::new(
        "exit_join",
        f.finish(),
        vec![Case {
            label: "8 threads: results, own stacks, own thread pointers, flags".into(),
            input: vec![0; 8],
            want: vec![u32w(sum), u32w(THREADS), u32w(THREADS), u32w(THREADS)],
        }],
    )
}

/// The contention fixture: every rmw operation and cmpxchg loops at every width.
pub fn atomics_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "threads_atomics",
        "Threads through nacl-irt-thread-0.1 and nacl-irt-futex-0.1: 8 threads contending on\n\
         one word with every llvm.nacl.atomic.rmw operation (add, sub, or, and, xor, xchg)\n\
         at i8, i16, i32 and i64, and with cmpxchg loops, each with an exact total. Each\n\
         thread has its own stack and thread pointer (llvm.nacl.read.tp), waits on a futex\n\
         for the start and ends with thread_exit(&flag), which the joiner futex-waits on.",
    );
    common_parts(&mut fx);
    fx.helper("worker", "void", &[], worker_body());
    for (ty, w) in INT_TYPES {
        for (code, op) in RMW {
            fx.helper(
                &format!("loop_{op}_{ty}"),
                "i64",
                &["i32", "i32", "i32"],
                rmw_loop(code, op, ty, w),
            );
        }
        fx.helper(
            &format!("loop_cas_{ty}"),
            "i64",
            &["i32", "i32", "i32"],
            cas_loop(ty, w),
        );
    }
    let inits: [(&str, u64); 7] = [
        ("add", 0x0123_4567_89ab_cdef),
        ("sub", 0xfedc_ba98_7654_3210),
        ("or", 0),
        ("and", u64::MAX),
        ("xor", 0x5555_aaaa_5555_aaaa),
        ("xchg", 0x1357_9bdf_2468_ace0),
        ("cas", 0x0f0f_0f0f_0f0f_0f0f),
    ];
    for (ty, w) in INT_TYPES {
        for (op, init) in inits {
            fx.kernel(contention_kernel(op, ty, w, init & mask(w)));
        }
    }
    fx
}

/// futex_wait_abs timeouts and thread exit + join.
pub fn futex_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "threads_futex",
        "nacl-irt-futex-0.1: futex_wait_abs with a deadline in the past, 50 ms ahead (and\n\
         not returning before it), with a value that differs (with and without deadline);\n\
         futex_wake's count with no waiter. nacl-irt-thread-0.1: 8 threads record a value,\n\
         an alloca address (on their own stack) and llvm.nacl.read.tp (their own thread\n\
         pointer), and thread_exit(&flag); the joiner futex-waits until each flag is 0.",
    );
    common_parts(&mut fx);
    fx.helper("joiner", "void", &[], joiner_body());
    fx.kernel(futex_kernel());
    fx.kernel(join_kernel());
    fx
}

/// Globals and helpers both fixtures use.
fn common_parts(fx: &mut Fixture) {
    fx.global(
        "thread_name",
        true,
        format!("align 1, {}", cstr_data("nacl-irt-thread-0.1")),
    );
    fx.global(
        "futex_name",
        true,
        format!("align 1, {}", cstr_data("nacl-irt-futex-0.1")),
    );
    fx.global("tirt", false, "align 4, zerofill 12;".into());
    fx.global("firt", false, "align 4, zerofill 8;".into());
    fx.global("basic", false, "align 4, zerofill 24;".into());
    fx.global("cell", false, "align 8, zerofill 8;".into());
    fx.global("ready", false, "align 4, zerofill 4;".into());
    fx.global("go", false, "align 4, zerofill 4;".into());
    fx.global("count", false, "align 4, zerofill 4;".into());
    fx.global("word", false, "align 4, zerofill 4;".into());
    fx.global("ts", false, "align 8, zerofill 16;".into());
    fx.global("tv", false, "align 8, zerofill 16;".into());
    fx.global(
        "params",
        false,
        format!("align 8, zerofill {};", THREADS * PARAMS),
    );
    fx.global(
        "stacks",
        false,
        format!("align 16, zerofill {};", THREADS * STACK),
    );
    fx.helper("setup", "i32", &["i32"], setup_body());
    fx.helper("run_threads", "void", &["i32", "i32"], run_threads_body());
}
