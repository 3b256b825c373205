//! setjmp/longjmp (`llvm.nacl.setjmp` / `llvm.nacl.longjmp`): a longjmp in the same
//! frame and from deeper frames reached by direct and indirect calls, `val` 0 read back
//! as 1, the stack pointer of the setjmp frame restored, repeated, nested and looping
//! setjmps in one function, the C++ exception pattern PNaCl's SjLj EH lowering produces,
//! and (in a fixture of its own) a longjmp to a frame that has returned.
//!
//! Expected values come from what C says each program returns; jmp_bufs are 1024-byte,
//! 8-aligned allocas as the PNaCl ABI asks.

use super::*;

/// `val` as setjmp returns it after `longjmp(buf, val)`.
fn landed(v: i32) -> u32 {
    if v == 0 {
        1
    } else {
        v as u32
    }
}

fn i32s(xs: &[i32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A 1024-byte jmp_buf in the entry block.
fn jmp_buf(f: &mut Fb) -> String {
    let size = f.i32c(1024);
    f.v(format!("alloca i8, i32 {size}, align 8"))
}

fn setjmp(f: &mut Fb, buf: &str) -> String {
    f.v(format!("call i32 @[llvm.nacl.setjmp](i32 {buf})"))
}

/// `br (r == 0) ? zero : nonzero`: returns the two new block ids (labels not emitted;
/// blocks must be labelled in id order).
fn branch_zero(f: &mut Fb, r: &str) -> (usize, usize) {
    let c0 = f.i32c(0);
    let z = f.v(format!("icmp eq i32 {r}, {c0}"));
    let (bz, bn) = (f.block(), f.block());
    f.s(format!("br i1 {z}, label %b{bz}, label %b{bn}"));
    (bz, bn)
}

/// [`branch_zero`], continuing in the zero block.
fn branch_on_zero(f: &mut Fb, r: &str) -> (usize, usize) {
    let (bz, bn) = branch_zero(f, r);
    f.label(bz);
    (bz, bn)
}

pub fn fixture() -> Fixture {
    let mut fx = Fixture::new(
        "setjmp_cases",
        "setjmp/longjmp: the same frame, deeper frames through direct and indirect calls,\n\
         val 0 returned as 1, the setjmp frame's stack pointer restored, repeated, nested and\n\
         looping setjmps in one function, and the C++ exception pattern of PNaCl's SjLj EH\n\
         (an exception-frame list, a setjmp_caller helper, a resume that longjmps on).",
    );
    helpers(&mut fx);
    same_frame(&mut fx);
    outer_frames(&mut fx);
    stack_pointer(&mut fx);
    repeated(&mut fx);
    nested(&mut fx);
    in_a_loop(&mut fx);
    exceptions(&mut fx);
    fx
}

/// `dive(buf, d, v)`: recurses `d` levels, each with a 64-byte frame, then
/// `longjmp(buf, v)`. Also reachable through `sj_fntab[0]`.
fn helpers(fx: &mut Fixture) {
    let mut f = Fb::new();
    let c64 = f.i32c(64);
    let pad = f.v(format!("alloca i8, i32 {c64}, align 8"));
    f.store("i32", "%p1", &pad, 0);
    let (_, deeper) = branch_on_zero(&mut f, "%p1");
    f.s("call void @[llvm.nacl.longjmp](i32 %p0, i32 %p2)");
    f.s("unreachable");
    f.label(deeper);
    let c1 = f.i32c(1);
    let d1 = f.v(format!("sub i32 %p1, {c1}"));
    f.s(format!("call void @[dive](i32 %p0, i32 {d1}, i32 %p2)"));
    f.s("ret void");
    fx.helper("dive", "void", &["i32", "i32", "i32"], f.finish());
    fx.global(
        "sj_fntab",
        true,
        "align 4, initializers 2 { reloc @[dive]; zerofill 4; }".into(),
    );
}

fn same_frame(fx: &mut Fixture) {
    // Input: v. r = setjmp(buf); count returns in out[0]; r == 0: longjmp(buf, v);
    // else out[4] = r.
    let mut f = Fb::new();
    let v = f.load("i32", "%p0", 0);
    let buf = jmp_buf(&mut f);
    let r = setjmp(&mut f, &buf);
    let n = f.load("i32", "%p1", 0);
    let c1 = f.i32c(1);
    let n1 = f.v(format!("add i32 {n}, {c1}"));
    f.store("i32", &n1, "%p1", 0);
    let (_, back) = branch_on_zero(&mut f, &r);
    f.s(format!(
        "call void @[llvm.nacl.longjmp](i32 {buf}, i32 {v})"
    ));
    f.s("unreachable");
    f.label(back);
    f.store("i32", &r, "%p1", 4);
    f.s("ret void");
    let cases = [0, 1, 7, -1, i32::MIN, i32::MAX]
        .iter()
        .map(|&v| Case {
            label: format!("longjmp(buf, {v})"),
            input: i32s(&[v]),
            want: vec![u32w(2), u32w(landed(v))],
        })
        .collect();
    fx.kernel(Kernel::new("sj_same_frame", f.finish(), cases));
}

fn outer_frames(fx: &mut Fixture) {
    // Input: d, v. r = setjmp(buf); r == 0: dive(buf, d, v) (directly, or through the
    // table), then out[4] = 0xdead (never); else out[0] = r.
    for indirect in [false, true] {
        let mut f = Fb::new();
        let d = f.load("i32", "%p0", 0);
        let v = f.load("i32", "%p0", 4);
        let buf = jmp_buf(&mut f);
        let r = setjmp(&mut f, &buf);
        let (_, back) = branch_on_zero(&mut f, &r);
        if indirect {
            let fp = f.load("i32", "@[g:sj_fntab]", 0);
            f.s(format!("call void {fp}(i32 {buf}, i32 {d}, i32 {v})"));
        } else {
            f.s(format!("call void @[dive](i32 {buf}, i32 {d}, i32 {v})"));
        }
        let dead = f.i32c(0xdead);
        f.store("i32", &dead, "%p1", 4);
        f.s("ret void");
        f.label(back);
        f.store("i32", &r, "%p1", 0);
        f.s("ret void");
        let cases = [(0, 5), (1, 0), (3, 42), (20, -7), (100, 1)]
            .iter()
            .map(|&(d, v)| Case {
                label: format!("{d} frames down, longjmp(buf, {v})"),
                input: i32s(&[d, v]),
                want: vec![u32w(landed(v)), u32w(0)],
            })
            .collect();
        let name = if indirect {
            "sj_outer_indirect"
        } else {
            "sj_outer_direct"
        };
        fx.kernel(Kernel::new(name, f.finish(), cases));
    }
}

fn stack_pointer(fx: &mut Fixture) {
    // Input: n. A dynamic alloca of n bytes, s0 = stacksave, r = setjmp(buf). On the first
    // return: a 48-byte dynamic alloca and dive(buf, 3, 5), whose frames are abandoned.
    // After the longjmp: s1 = stacksave and a 16-byte dynamic alloca p. out = s1 - s0
    // (0: restored), s0 - p (16: p lies right below the restored pointer), r.
    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let buf = jmp_buf(&mut f);
    let c0 = f.i32c(0);
    let (b_dyn, b_set) = (f.block(), f.block());
    f.s(format!("br label %b{b_dyn}"));
    f.label(b_dyn);
    let _ = f.v(format!("alloca i8, i32 {n}, align 8"));
    let s0 = f.v("call i32 @[llvm.stacksave]()");
    f.s(format!("br label %b{b_set}"));
    f.label(b_set);
    let r = setjmp(&mut f, &buf);
    let (_, back) = branch_on_zero(&mut f, &r);
    let c48 = f.i32c(48);
    let junk = f.v(format!("alloca i8, i32 {c48}, align 8"));
    f.store("i32", &c0, &junk, 0);
    let (c3, c5) = (f.i32c(3), f.i32c(5));
    f.s(format!("call void @[dive](i32 {buf}, i32 {c3}, i32 {c5})"));
    f.s("unreachable");
    f.label(back);
    let s1 = f.v("call i32 @[llvm.stacksave]()");
    let c16 = f.i32c(16);
    let p = f.v(format!("alloca i8, i32 {c16}, align 8"));
    let moved = f.v(format!("sub i32 {s1}, {s0}"));
    f.store("i32", &moved, "%p1", 0);
    let below = f.v(format!("sub i32 {s0}, {p}"));
    f.store("i32", &below, "%p1", 4);
    f.store("i32", &r, "%p1", 8);
    f.s("ret void");
    let cases = [0, 8, 24, 100]
        .iter()
        .map(|&n| Case {
            label: format!("{n}-byte alloca before setjmp"),
            input: i32s(&[n]),
            want: vec![u32w(0), u32w(16), u32w(5)],
        })
        .collect();
    fx.kernel(Kernel::new("sj_stack_pointer", f.finish(), cases));
}

fn repeated(fx: &mut Fixture) {
    // Input: n. r = setjmp(buf); count returns in out[0]; while r < n: longjmp(buf, r + 1)
    // from one frame down; then out[4] = r.
    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let buf = jmp_buf(&mut f);
    let r = setjmp(&mut f, &buf);
    let k = f.load("i32", "%p1", 0);
    let c1 = f.i32c(1);
    let k1 = f.v(format!("add i32 {k}, {c1}"));
    f.store("i32", &k1, "%p1", 0);
    let lt = f.v(format!("icmp slt i32 {r}, {n}"));
    let (b_again, b_done) = (f.block(), f.block());
    f.s(format!("br i1 {lt}, label %b{b_again}, label %b{b_done}"));
    f.label(b_again);
    let r1 = f.v(format!("add i32 {r}, {c1}"));
    f.s(format!("call void @[dive](i32 {buf}, i32 {c1}, i32 {r1})"));
    f.s("unreachable");
    f.label(b_done);
    f.store("i32", &r, "%p1", 4);
    f.s("ret void");
    let cases = [0, 1, 2, 5, 30]
        .iter()
        .map(|&n: &i32| Case {
            label: format!("{n} longjmps"),
            input: i32s(&[n]),
            want: vec![u32w(n as u32 + 1), u32w(n as u32)],
        })
        .collect();
    fx.kernel(Kernel::new("sj_repeated_returns", f.finish(), cases));

    // Input: a, b. Two setjmp sites on one buffer, one after the other: the second
    // replaces the first. out = r1 (from longjmp(buf, a)), r2 (from longjmp(buf, b)).
    let mut f = Fb::new();
    let a = f.load("i32", "%p0", 0);
    let b = f.load("i32", "%p0", 4);
    let buf = jmp_buf(&mut f);
    let c0 = f.i32c(0);
    let c2 = f.i32c(2);
    let r1 = setjmp(&mut f, &buf);
    let (_, second) = branch_on_zero(&mut f, &r1);
    f.s(format!("call void @[dive](i32 {buf}, i32 {c0}, i32 {a})"));
    f.s("unreachable");
    f.label(second);
    f.store("i32", &r1, "%p1", 0);
    let r2 = setjmp(&mut f, &buf);
    let (_, done) = branch_on_zero(&mut f, &r2);
    f.s(format!("call void @[dive](i32 {buf}, i32 {c2}, i32 {b})"));
    f.s("unreachable");
    f.label(done);
    f.store("i32", &r2, "%p1", 4);
    f.s("ret void");
    let cases = [(1, 2), (0, 9), (77, 0)]
        .iter()
        .map(|&(a, b)| Case {
            label: format!("a = {a}, b = {b}"),
            input: i32s(&[a, b]),
            want: vec![u32w(landed(a)), u32w(landed(b))],
        })
        .collect();
    fx.kernel(Kernel::new("sj_two_sites", f.finish(), cases));
}

fn nested(fx: &mut Fixture) {
    // Input: a. r1 = setjmp(b1); r1 == 0: { r2 = setjmp(b2); r2 == 0: longjmp(b2, a) from
    // two frames down; else out[0] = r2 and longjmp(b1, r2 + 100) from one frame down }
    // else out[4] = r1.
    let mut f = Fb::new();
    let a = f.load("i32", "%p0", 0);
    let b1 = jmp_buf(&mut f);
    let b2 = jmp_buf(&mut f);
    let r1 = setjmp(&mut f, &b1);
    let (_, outer_back) = branch_on_zero(&mut f, &r1);
    let r2 = setjmp(&mut f, &b2);
    let (inner_first, inner_back) = branch_zero(&mut f, &r2);
    f.label(outer_back);
    f.store("i32", &r1, "%p1", 4);
    f.s("ret void");
    f.label(inner_first);
    let (c1, c2, c100) = (f.i32c(1), f.i32c(2), f.i32c(100));
    f.s(format!("call void @[dive](i32 {b2}, i32 {c2}, i32 {a})"));
    f.s("unreachable");
    f.label(inner_back);
    f.store("i32", &r2, "%p1", 0);
    let s = f.v(format!("add i32 {r2}, {c100}"));
    f.s(format!("call void @[dive](i32 {b1}, i32 {c1}, i32 {s})"));
    f.s("unreachable");
    let cases = [0, 3, -50]
        .iter()
        .map(|&a| Case {
            label: format!("a = {a}"),
            input: i32s(&[a]),
            want: vec![u32w(landed(a)), u32w(landed(a).wrapping_add(100))],
        })
        .collect();
    fx.kernel(Kernel::new("sj_nested", f.finish(), cases));
}

fn in_a_loop(fx: &mut Fixture) {
    // Input: n. for i in 0..max(n, 1): r = setjmp(buf); r == 0: longjmp(buf, i + 100)
    // from one frame down; else out[0] += r. The resume point is a second entry into the
    // loop (irreducible), and i (a phi) keeps its value across the longjmp.
    let mut f = Fb::new();
    let n = f.load("i32", "%p0", 0);
    let buf = jmp_buf(&mut f);
    let (c0, c1, c100) = (f.i32c(0), f.i32c(1), f.i32c(100));
    let (b_loop, b_throw, b_next, b_exit) = (f.block(), f.block(), f.block(), f.block());
    f.s(format!("br label %b{b_loop}"));
    f.label(b_loop);
    let next = f.fwd();
    let i = f.v(format!("phi i32 [{c0}, %b0], [{next}, %b{b_next}]"));
    let r = setjmp(&mut f, &buf);
    let z = f.v(format!("icmp eq i32 {r}, {c0}"));
    f.s(format!("br i1 {z}, label %b{b_throw}, label %b{b_next}"));
    f.label(b_throw);
    let v = f.v(format!("add i32 {i}, {c100}"));
    f.s(format!("call void @[dive](i32 {buf}, i32 {c1}, i32 {v})"));
    f.s("unreachable");
    f.label(b_next);
    let s = f.load("i32", "%p1", 0);
    let s1 = f.v(format!("add i32 {s}, {r}"));
    f.store("i32", &s1, "%p1", 0);
    let i1 = f.v(format!("add i32 {i}, {c1}"));
    f.bind(&next, &i1);
    let more = f.v(format!("icmp slt i32 {i1}, {n}"));
    f.s(format!("br i1 {more}, label %b{b_loop}, label %b{b_exit}"));
    f.label(b_exit);
    f.s("ret void");
    let cases = [0, 1, 4, 20]
        .iter()
        .map(|&n: &i32| Case {
            label: format!("n = {n}"),
            input: i32s(&[n]),
            want: vec![u32w((0..n.max(1)).map(|i| i as u32 + 100).sum())],
        })
        .collect();
    fx.kernel(Kernel::new("sj_in_a_loop", f.finish(), cases));
}

/// ExceptionFrame as PNaCl's SjLj EH lays it out: a 1024-byte jmp_buf (whose start holds
/// the landing pad result {exception, clause} once an exception arrives), `next`, the
/// clause list id.
const FRAME_NEXT: usize = 1024;
const FRAME_CLAUSES: usize = 1028;
const FRAME_SIZE: i64 = 1032;

fn exceptions(fx: &mut Fixture) {
    fx.global("eh_stack", false, "align 4, zerofill 4;".into());
    fx.global(
        "eh_fntab",
        true,
        "align 4, initializers 2 { reloc @[eh_thrower]; reloc @[eh_catcher]; }".into(),
    );

    // eh_resume(exc) (the role of __pnacl_eh_resume): pops the top frame, copies its
    // jmp_buf aside, stores {exc, clause 1} in the frame and longjmps through the copy.
    let mut f = Fb::new();
    let copy = jmp_buf(&mut f);
    let frame = f.load("i32", "@[g:eh_stack]", 0);
    let (_, have) = branch_on_zero(&mut f, &frame);
    f.s("call void @[llvm.trap]()");
    f.s("unreachable");
    f.label(have);
    let next = f.load("i32", &frame, FRAME_NEXT);
    f.store("i32", &next, "@[g:eh_stack]", 0);
    let (c1, c1024) = (f.i32c(1), f.i32c(1024));
    let no = f.c("i1", 0);
    f.s(format!(
        "call void @[llvm.memcpy.p0i8.p0i8.i32](i32 {copy}, i32 {frame}, i32 {c1024}, i32 {c1}, i1 {no})"
    ));
    f.store("i32", "%p0", &frame, 0);
    f.store("i32", &c1, &frame, 4);
    f.s(format!(
        "call void @[llvm.nacl.longjmp](i32 {copy}, i32 {c1})"
    ));
    f.s("unreachable");
    fx.helper("eh_resume", "void", &["i32"], f.finish());

    // eh_thrower(d, x): d levels down, throws x if x != 0, else returns 1000; each level
    // adds 1 on the way back.
    let mut f = Fb::new();
    let (_, deeper) = branch_on_zero(&mut f, "%p0");
    let (no_throw, throw) = branch_zero(&mut f, "%p1");
    f.label(deeper);
    let c1 = f.i32c(1);
    let d1 = f.v(format!("sub i32 %p0, {c1}"));
    let r = f.v(format!("call i32 @[eh_thrower](i32 {d1}, i32 %p1)"));
    let r1 = f.v(format!("add i32 {r}, {c1}"));
    f.s(format!("ret i32 {r1}"));
    f.label(no_throw);
    let c1000 = f.i32c(1000);
    f.s(format!("ret i32 {c1000}"));
    f.label(throw);
    f.s("call void @[eh_resume](i32 %p1)");
    f.s("unreachable");
    fx.helper("eh_thrower", "i32", &["i32", "i32"], f.finish());

    // eh_setjmp_caller(func, a, b, jmpbuf, result): the helper the EH lowering calls
    // through: 0 after *result = func(a, b), 1 when an exception lands.
    let mut f = Fb::new();
    let sj = setjmp(&mut f, "%p3");
    let (_, exc) = branch_on_zero(&mut f, &sj);
    let r = f.v("call i32 %p0(i32 %p1, i32 %p2)");
    f.store("i32", &r, "%p4", 0);
    let c0 = f.i32c(0);
    f.s(format!("ret i32 {c0}"));
    f.label(exc);
    let c1 = f.i32c(1);
    f.s(format!("ret i32 {c1}"));
    fx.helper(
        "eh_setjmp_caller",
        "i32",
        &["i32", "i32", "i32", "i32", "i32"],
        f.finish(),
    );

    // An invoke of table[k](a, b) with a frame pushed on eh_stack: returns (is_exc, frame)
    // with the old list restored afterwards, as the lowering does.
    fn invoke(f: &mut Fb, k: usize, a: &str, b: &str, frame: &str, result: &str) -> String {
        let old = f.load("i32", "@[g:eh_stack]", 0);
        f.store("i32", &old, frame, FRAME_NEXT);
        let clauses = f.i32c(7);
        f.store("i32", &clauses, frame, FRAME_CLAUSES);
        f.store("i32", frame, "@[g:eh_stack]", 0);
        let fp = f.load("i32", "@[g:eh_fntab]", 4 * k);
        let is_exc = f.v(format!(
            "call i32 @[eh_setjmp_caller](i32 {fp}, i32 {a}, i32 {b}, i32 {frame}, i32 {result})"
        ));
        f.store("i32", &old, "@[g:eh_stack]", 0);
        is_exc
    }

    // eh_catcher(d, x): try { return eh_thrower(d, x) + 100 } catch (exc < 1000) { return
    // exc + 200 } — larger exceptions are resumed to the next frame.
    let mut f = Fb::new();
    let size = f.i32c(FRAME_SIZE);
    let frame = f.v(format!("alloca i8, i32 {size}, align 8"));
    let c4 = f.i32c(4);
    let result = f.v(format!("alloca i8, i32 {c4}, align 4"));
    let is_exc = invoke(&mut f, 0, "%p0", "%p1", &frame, &result);
    let (_, lpad) = branch_on_zero(&mut f, &is_exc);
    let r = f.load("i32", &result, 0);
    let c100 = f.i32c(100);
    let r1 = f.v(format!("add i32 {r}, {c100}"));
    f.s(format!("ret i32 {r1}"));
    f.label(lpad);
    let exc = f.load("i32", &frame, 0);
    let c1000 = f.i32c(1000);
    let ours = f.v(format!("icmp slt i32 {exc}, {c1000}"));
    let (b_catch, b_resume) = (f.block(), f.block());
    f.s(format!(
        "br i1 {ours}, label %b{b_catch}, label %b{b_resume}"
    ));
    f.label(b_catch);
    let c200 = f.i32c(200);
    let e1 = f.v(format!("add i32 {exc}, {c200}"));
    f.s(format!("ret i32 {e1}"));
    f.label(b_resume);
    f.s(format!("call void @[eh_resume](i32 {exc})"));
    f.s("unreachable");
    fx.helper("eh_catcher", "i32", &["i32", "i32"], f.finish());

    // Kernel: input d, x. try { out = (eh_catcher(d, x), 0) } catch (everything) { out =
    // (exc, 1) }; out[8] = eh_stack afterwards (0: the list is empty again).
    let mut f = Fb::new();
    let d = f.load("i32", "%p0", 0);
    let x = f.load("i32", "%p0", 4);
    let size = f.i32c(FRAME_SIZE);
    let frame = f.v(format!("alloca i8, i32 {size}, align 8"));
    let c4 = f.i32c(4);
    let result = f.v(format!("alloca i8, i32 {c4}, align 4"));
    let is_exc = invoke(&mut f, 1, &d, &x, &frame, &result);
    let (_, caught) = branch_on_zero(&mut f, &is_exc);
    let r = f.load("i32", &result, 0);
    let b_end = f.block();
    f.store("i32", &r, "%p1", 0);
    f.s(format!("br label %b{b_end}"));
    f.label(caught);
    let exc = f.load("i32", &frame, 0);
    f.store("i32", &exc, "%p1", 0);
    let c1 = f.i32c(1);
    f.store("i32", &c1, "%p1", 4);
    f.s(format!("br label %b{b_end}"));
    f.label(b_end);
    let top = f.load("i32", "@[g:eh_stack]", 0);
    f.store("i32", &top, "%p1", 8);
    f.s("ret void");
    let cases = [
        (0, 0),
        (3, 0),
        (0, 5),
        (4, 17),
        (2, 999),
        (0, 1000),
        (6, 4242),
    ]
    .iter()
    .map(|&(d, x): &(i32, i32)| {
        let (value, escaped) = match x {
            0 => (1000 + d + 100, 0),
            x if x < 1000 => (x + 200, 0),
            x => (x, 1),
        };
        Case {
            label: format!("d = {d}, throw {x}"),
            input: i32s(&[d, x]),
            want: vec![u32w(value as u32), u32w(escaped), u32w(0)],
        }
    })
    .collect();
    fx.kernel(Kernel::new("sj_cxx_exceptions", f.finish(), cases));
}

/// A longjmp to a frame that has returned: the program must end in a trap (the runner
/// reports an uncaught longjmp), not resume anywhere.
pub fn dangling_fixture() -> Fixture {
    let mut fx = Fixture::new(
        "setjmp_dangling",
        "A longjmp to a jmp_buf whose setjmp frame has returned, past a live frame with a\n\
         setjmp of its own: must trap. (out[0] = 1 would show a wrong resume.)",
    );
    let mut f = Fb::new();
    let r = setjmp(&mut f, "%p0");
    f.s(format!("ret i32 {r}"));
    fx.helper("sj_set_and_return", "i32", &["i32"], f.finish());

    let mut f = Fb::new();
    let own = jmp_buf(&mut f);
    let gone = jmp_buf(&mut f);
    let r = setjmp(&mut f, &own);
    let (_, wrong) = branch_on_zero(&mut f, &r);
    let _ = f.v(format!("call i32 @[sj_set_and_return](i32 {gone})"));
    let c3 = f.i32c(3);
    f.s(format!(
        "call void @[llvm.nacl.longjmp](i32 {gone}, i32 {c3})"
    ));
    f.s("unreachable");
    f.label(wrong);
    let c1 = f.i32c(1);
    f.store("i32", &c1, "%p1", 0);
    f.s("ret void");
    fx.kernel(Kernel::new(
        "sj_dangling",
        f.finish(),
        vec![Case {
            label: "longjmp to a returned frame".into(),
            input: i32s(&[0]),
            want: vec![u32w(0)],
        }],
    ));
    fx
}
