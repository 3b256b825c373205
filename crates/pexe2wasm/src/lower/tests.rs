//! Tests of the lowering's passes one at a time: the analysis (placement, locals, CFG
//! facts), phi resolution, the structurizer's nesting state, and the control skeleton the
//! structurizer gives a few CFG shapes. Modules are written in PNaClAsm.

use super::analysis::FnAnalysis;
use super::cfg::{Cfg, Node, NONE};
use super::locals::Local;
use super::structurize::{Close, Ctx, Nest};
use super::{lower_function, LowerCtx, Scratch, SigTable, NO_FUNC};
use crate::ir::{Module, ValueId};

/// A module with one function `f` of type `ret (params)` and the given body.
fn module(ret: &str, params: &[&str], body: &str) -> Module {
    let ps: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{t} %p{i}"))
        .collect();
    let text = format!(
        "module {{ version 1; types {{ count 5; @t0 = i1; @t1 = i32; @t2 = void; @t3 = double; \
         @t4 = {ret} ({}); }} define internal {ret} @f0({}); globals {{ count 0; }} \
         valuesymtab {{ @f0 : \"f\"; }} function {ret} @f0({}) {{ {body} }} }}",
        params.join(", "),
        params.join(", "),
        ps.join(", ")
    );
    let pexe = crate::text::assemble(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    crate::decode::decode(&pexe).unwrap()
}

/// [`module`] for a function `i32 f(i32 %p0)`, the shape most tests use.
fn unary(body: &str) -> Module {
    module("i32", &["i32"], body)
}

/// A lowering context for a module linked with nothing: the functions numbered from 0.
/// Locals with liveness across blocks (`Locals::Liveness`); [`analyze_blocks`] for the
/// default allocation.
fn ctx(m: &Module) -> LowerCtx<'_> {
    let vt = super::valtypes(m);
    LowerCtx {
        module: m,
        slots: super::slots(&vt),
        valtypes: vt,
        scalars: super::scalars(m),
        narrow: super::narrow(m),
        i32_type: m.types.find(&crate::ir::Type::Int(32)),
        func_index: (0..m.functions.len() as u32).collect(),
        table_slot: vec![0; m.functions.len()],
        global_addr: Vec::new(),
        sigs: SigTable::default(),
        stack_pointer: 0,
        thread_pointer: 1,
        libm: super::libm(m),
        fmodf: NO_FUNC,
        fmod: NO_FUNC,
        threads: false,
        liveness_locals: true,
        sjlj_tag: NO_FUNC,
        sjlj_counter: NO_FUNC,
        sjlj_catch_type: NO_FUNC,
        icall_adapters: Default::default(),
    }
}

fn analyze(m: &Module) -> FnAnalysis {
    let cx = ctx(m);
    FnAnalysis::compute(&cx, &m.function_bodies[0], &mut Scratch::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// [`analyze`] with the default allocation (`Locals::Blocks`).
fn analyze_blocks(m: &Module) -> FnAnalysis {
    let cx = LowerCtx {
        liveness_locals: false,
        ..ctx(m)
    };
    FnAnalysis::compute(&cx, &m.function_bodies[0], &mut Scratch::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The local of instruction value `%vN` (`Local::NONE` if it has none).
fn local(a: &FnAnalysis, n: usize) -> Local {
    a.local_of[n]
}

// ---- analysis: placement and locals ----

#[test]
fn single_use_values_stay_on_the_stack() {
    // %v0 and %v1 each have one use, by the next instruction: a tree, no locals.
    let m = module(
        "i32",
        &["i32", "i32"],
        "blocks 1; %v0 = add i32 %p0, %p1; %v1 = mul i32 %v0, %p1; ret i32 %v1;",
    );
    let a = analyze(&m);
    assert_eq!(a.inline, [true, true, false]);
    assert_eq!(local(&a, 0), Local::NONE);
    assert_eq!(local(&a, 1), Local::NONE);
}

#[test]
fn a_chain_of_block_local_values_shares_one_local() {
    // Each value is used twice by the next one (so it needs a local) and is dead once
    // that next one is defined: the statement reads it before its own `local.set`, so
    // the whole chain can live in one local.
    let m = unary(
        "blocks 1; %v0 = add i32 %p0, %p0; %v1 = mul i32 %v0, %v0; \
         %v2 = add i32 %v1, %v1; %v3 = mul i32 %v2, %v2; ret i32 %v3;",
    );
    let a = analyze(&m);
    let (l0, l1, l2) = (local(&a, 0), local(&a, 1), local(&a, 2));
    assert_ne!(l0, Local::NONE);
    assert_eq!((l1, l2), (l0, l0));
    // The last one is the return's operand: on the stack.
    assert_eq!(local(&a, 3), Local::NONE);
    assert!(a.inline[3]);
    // The parameter, the one shared local, then the scratch locals.
    assert_eq!(l0, Local::new(1));
    assert_eq!(a.locals.s_i32, Local::new(2));
}

#[test]
fn block_local_values_live_at_once_do_not_share() {
    // %v0 and %v1 are both read by %v2 and %v3 (two users each: not inlined); %v2 and
    // %v3 are the operands of %v4, emitted there.
    let m = unary(
        "blocks 1; %v0 = add i32 %p0, %p0; %v1 = mul i32 %p0, %p0; \
         %v2 = add i32 %v0, %v1; %v3 = mul i32 %v0, %v1; %v4 = add i32 %v2, %v3; \
         ret i32 %v4;",
    );
    let a = analyze(&m);
    assert_eq!(a.inline, [false, false, true, true, true, false]);
    let (l0, l1) = (local(&a, 0), local(&a, 1));
    assert!(l0 != Local::NONE && l1 != Local::NONE);
    assert_ne!(l0, l1);
    assert_eq!(a.locals.s_i32, Local::new(3));
}

#[test]
fn a_one_block_loop_phi_shares_the_local_of_its_next_value() {
    // %v1 = %v0 + 1 is the loop phi's value on the back edge; the loop's test reads
    // `tested` (%v1 or %v0).
    let counting = |tested: &str| {
        unary(&format!(
            "blocks 3; constants {{ i32: %c0 = i32 0; %c1 = i32 1; }}
             br label %b1;
           %b1:
             %v0 = phi i32 [%c0, %b0], [%v1, %b1];
             %v1 = add i32 %v0, %c1;
             %v2 = icmp ult i32 {tested}, %p0;
             br i1 %v2, label %b1, label %b2;
           %b2:
             ret i32 %v1;"
        ))
    };
    // %v0 is last read by %v1 itself: one local for both, and no copy on the back edge.
    let m = counting("%v1");
    let a = analyze(&m);
    assert_ne!(local(&a, 0), Local::NONE);
    assert_eq!(local(&a, 0), local(&a, 1));
    assert!(copies(&m, &a, 1, 1).is_empty());
    // A phi still read after the next value is defined keeps its own local.
    let a = analyze(&counting("%v0"));
    assert_ne!(local(&a, 0), local(&a, 1));
}

/// %v0 is used in %b1, %v1 and %v3 by the phi of %b2: values live across blocks.
fn cross_block_module() -> Module {
    unary(
        "blocks 3; constants { i32: %c0 = i32 1; }
         %v0 = add i32 %p0, %c0;
         %v1 = add i32 %v0, %v0;
         %v2 = icmp eq i32 %v1, %c0;
         br i1 %v2, label %b1, label %b2;
       %b1:
         %v3 = add i32 %v0, %c0;
         br label %b2;
       %b2:
         %v4 = phi i32 [%v1, %b0], [%v3, %b1];
         ret i32 %v4;",
    )
}

#[test]
fn values_used_in_another_block_or_by_phis_get_locals_of_their_own() {
    let m = cross_block_module();
    let a = analyze_blocks(&m);
    // Without liveness (the default): %v0 is used in %b1, %v1 and %v3 by the phi, so
    // none is block-local and each has a local of its own.
    let own = [local(&a, 0), local(&a, 1), local(&a, 3), local(&a, 4)];
    for (i, l) in own.iter().enumerate() {
        assert_ne!(*l, Local::NONE, "value {i}");
        for m in &own[i + 1..] {
            assert_ne!(l, m, "two values with a local of their own share it");
        }
    }
    assert!(a.inline[2]);
    assert_eq!(a.phi_blocks, [false, false, true]);
}

#[test]
fn values_live_across_blocks_share_only_where_their_lives_do_not_meet() {
    let m = cross_block_module();
    let a = analyze(&m);
    // %v0 is used in %b1, %v1 and %v3 by the phi: none is block-local. %v0 and %v1
    // meet at the end of %b0; %v1 is dead in %b1, where %v3 takes its local, and the
    // phi takes it too: no copy on either edge.
    let (l0, l1) = (local(&a, 0), local(&a, 1));
    assert!(l0 != Local::NONE && l1 != Local::NONE && l0 != l1);
    assert_eq!((local(&a, 3), local(&a, 4)), (l1, l1));
    assert!(copies(&m, &a, 0, 2).is_empty() && copies(&m, &a, 1, 2).is_empty());
    // The compare is the branch's single operand: on the stack.
    assert!(a.inline[2]);
    assert_eq!(a.phi_blocks, [false, false, true]);
}

// ---- local allocation across blocks (`alloc.rs`) ----

#[test]
fn without_phis_and_with_few_locals_the_allocation_keeps_the_numbering() {
    // %v0 dies in %b1 before %v2 is defined there: liveness could share one local, but
    // with every index below 128 and no phi copies to remove the code bytes would be the
    // same, so `alloc::worth_it` skips the allocation and both ways give the numbering's
    // locals (each cross-block value its own).
    let m = unary(
        "blocks 3; constants { i32: %c0 = i32 1; }
         %v0 = add i32 %p0, %c0;
         br label %b1;
       %b1:
         %v1 = mul i32 %v0, %v0;
         %v2 = add i32 %v1, %p0;
         br label %b2;
       %b2:
         %v3 = add i32 %v2, %v2;
         ret i32 %v3;",
    );
    let (a, b) = (analyze(&m), analyze_blocks(&m));
    let (l0, l2) = (local(&a, 0), local(&a, 2));
    assert!(
        l0 != Local::NONE && l2 != Local::NONE && l0 != l2,
        "{l0} {l2}"
    );
    assert_eq!(a.local_of, b.local_of);
    assert_eq!(
        a.locals.decls[..a.locals.n_decls],
        b.locals.decls[..b.locals.n_decls]
    );
}

/// The copies of edge `from → to`.
fn copies(m: &Module, a: &FnAnalysis, from: u32, to: u32) -> Vec<(Local, ValueId)> {
    let (mut out, f) = (Vec::new(), &m.function_bodies[0]);
    super::phi::edge_copies(a, f, f.first_inst_value(), Node(from), Node(to), &mut out).unwrap();
    out
}

#[test]
fn values_of_two_arms_share_a_local_and_the_phi_takes_it() {
    // %v2 lives from %b1 to the edge, %v4 from %b2 to the edge: one local for both, and
    // the phi of %b3 takes it too, so neither edge copies anything. The block-local %v1
    // and %v3 share a local of the numbering's pool (`locals.rs`), apart from it.
    let m = unary(
        "blocks 4; constants { i32: %c0 = i32 1; }
         %v0 = icmp eq i32 %p0, %c0;
         br i1 %v0, label %b1, label %b2;
       %b1:
         %v1 = add i32 %p0, %c0;
         %v2 = mul i32 %v1, %v1;
         br label %b3;
       %b2:
         %v3 = add i32 %p0, %p0;
         %v4 = mul i32 %v3, %v3;
         br label %b3;
       %b3:
         %v5 = phi i32 [%v2, %b1], [%v4, %b2];
         %v6 = add i32 %v5, %v5;
         ret i32 %v6;",
    );
    let a = analyze(&m);
    let (l, pool) = (local(&a, 2), local(&a, 1));
    assert!(l != Local::NONE && pool != Local::NONE && l != pool);
    assert_eq!([local(&a, 4), local(&a, 5)], [l; 2]);
    assert_eq!(local(&a, 3), pool);
    assert!(copies(&m, &a, 1, 3).is_empty() && copies(&m, &a, 2, 3).is_empty());
    // The parameter, the pool's local (first), the colored one, then the scratch locals.
    assert_eq!(
        (pool, l, a.locals.s_i32),
        (Local::new(1), Local::new(2), Local::new(3))
    );
}

#[test]
fn a_loop_phi_and_its_next_value_share_across_blocks() {
    // The loop is two blocks: the phi is last read in %b1, the next value is defined in
    // %b2 and brought back on the back edge: one local, no copy on the back edge; %v0
    // (live around the loop) and the bound keep theirs.
    let m = unary(
        "blocks 4; constants { i32: %c0 = i32 0; %c1 = i32 1; }
         %v0 = add i32 %p0, %p0;
         br label %b1;
       %b1:
         %v1 = phi i32 [%c0, %b0], [%v3, %b2];
         %v2 = add i32 %v1, %c1;
         br label %b2;
       %b2:
         %v3 = mul i32 %v2, %v2;
         %v4 = icmp ult i32 %v3, %v0;
         br i1 %v4, label %b1, label %b3;
       %b3:
         ret i32 %v3;",
    );
    let a = analyze(&m);
    let (l0, l1) = (local(&a, 0), local(&a, 1));
    assert!(l0 != Local::NONE && l1 != Local::NONE && l0 != l1);
    assert_eq!(local(&a, 3), l1);
    assert!(copies(&m, &a, 2, 1).is_empty());
    // %v2 dies at %v3, so it may share too; it must not share %v0's.
    assert_ne!(local(&a, 2), l0);
}

#[test]
fn values_live_at_once_across_blocks_do_not_share() {
    // %v0 and %v1 are both live from %b0 to their uses in %b2.
    let m = unary(
        "blocks 3; constants { i32: %c0 = i32 1; }
         %v0 = add i32 %p0, %c0;
         %v1 = mul i32 %p0, %p0;
         br label %b1;
       %b1:
         %v2 = add i32 %p0, %p0;
         %v3 = mul i32 %v2, %v2;
         br label %b2;
       %b2:
         %v4 = add i32 %v0, %v1;
         %v5 = add i32 %v4, %v3;
         ret i32 %v5;",
    );
    let a = analyze(&m);
    let l = [local(&a, 0), local(&a, 1), local(&a, 2), local(&a, 3)];
    assert!(l.iter().all(|&x| x != Local::NONE));
    // %v0, %v1 and %v3 meet in %b2, %v2 meets %v0 and %v1 in %b1; %v2 dies where
    // %v3 is defined, so those two may share.
    for (i, j) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3)] {
        assert_ne!(l[i], l[j], "%v{i} and %v{j}");
    }
}

#[test]
fn the_busiest_local_gets_the_lowest_index() {
    // %v1 is read 20 times, %v0 and %v2..%v139 once each; all live into %b1, so the
    // function needs more than 128 locals and the order decides which get one byte.
    // (The chain of adds is deeper than stackify's limit: every 48th add gets a local,
    // in the numbering's pool of block-local values, which comes first.) Colored in
    // order, %v1 would be second of the colored locals.
    let n = 140;
    let mut body = String::from(
        "blocks 2; constants { i32: %c0 = i32 1; }
         %v0 = add i32 %p0, %c0;
         %v1 = mul i32 %p0, %p0;\n",
    );
    for i in 2..n {
        body += &format!("%v{i} = add i32 %p0, %c0;\n");
    }
    body += &format!(
        "br label %b1;
       %b1:
         %v{n} = add i32 %v1, %v1;
         %v{} = mul i32 %v{n}, %v1;
         %v{} = add i32 %v{}, %v1;
         %v{} = add i32 %v{}, %v1;\n",
        n + 1,
        n + 2,
        n + 1,
        n + 3,
        n + 2
    );
    let mut last = n + 3;
    for i in (0..n).filter(|&i| i != 1).chain([1; 15]) {
        body += &format!("%v{} = add i32 %v{last}, %v{i};\n", last + 1);
        last += 1;
    }
    body += &format!("ret i32 %v{last};");
    let m = module("i32", &["i32"], &body);
    let a = analyze(&m);
    assert!(
        a.locals.decls[..a.locals.n_decls]
            .iter()
            .map(|d| d.0)
            .sum::<u32>()
            > 128
    );
    let busiest = local(&a, 1).index();
    assert!(busiest < 128);
    for i in (0..n).filter(|&i| i != 1) {
        assert!(busiest < local(&a, i).index(), "%v{i} before %v1");
    }
}

#[test]
fn a_small_function_keeps_its_colors_as_indices() {
    // Fewer than 128 locals in all: every index is one byte whatever the order, so the
    // ranking is skipped and %v0 (colored first) keeps the lower index although %v1 is
    // read more often.
    let m = unary(
        "blocks 2; constants { i32: %c0 = i32 1; }
         %v0 = add i32 %p0, %c0;
         %v1 = mul i32 %p0, %p0;
         br label %b1;
       %b1:
         %v2 = add i32 %v1, %v1;
         %v3 = mul i32 %v2, %v1;
         %v4 = add i32 %v3, %v1;
         %v5 = add i32 %v4, %v1;
         %v6 = add i32 %v5, %v0;
         ret i32 %v6;",
    );
    let a = analyze(&m);
    assert_eq!(local(&a, 0), Local::new(1));
    assert_eq!(local(&a, 1), Local::new(2));
}

#[test]
fn the_cfg_facts_of_a_loop() {
    let m = unary(
        "blocks 3; constants { i32: %c0 = i32 0; %c1 = i32 1; }
         %v0 = icmp sgt i32 %p0, %c0;
         br i1 %v0, label %b1, label %b2;
       %b1:
         %v1 = phi i32 [%c0, %b0], [%v2, %b1];
         %v2 = add i32 %v1, %c1;
         %v3 = icmp slt i32 %v2, %p0;
         br i1 %v3, label %b1, label %b2;
       %b2:
         ret i32 %c0;",
    );
    let a = analyze(&m);
    let cfg = &a.cfg;
    assert!(cfg.reducible);
    assert_eq!(cfg.loop_header, [false, true, false]);
    // %b2 has two forward in-edges (from %b0 and from the loop): a merge node.
    assert_eq!(cfg.merge, [false, false, true]);
    assert!(cfg.is_backward(Node(1), Node(1)));
    assert!(!cfg.is_backward(Node(0), Node(1)));
    assert_eq!(cfg.irreducible_dispatchers(), 0);
}

#[test]
fn an_irreducible_cycle_gets_one_dispatcher() {
    let m = unary(
        "blocks 4; constants { i32: %c0 = i32 0; %c1 = i32 1; }
         %v0 = icmp eq i32 %p0, %c0;
         br i1 %v0, label %b1, label %b2;
       %b1:
         %v1 = icmp eq i32 %p0, %c1;
         br i1 %v1, label %b3, label %b2;
       %b2:
         br label %b1;
       %b3:
         ret i32 %c0;",
    );
    let a = analyze(&m);
    assert_eq!(a.cfg.irreducible_dispatchers(), 1);
    // The dispatcher branches on a label local of its own.
    assert_ne!(a.locals.label, Local::NONE);
    let d = a.cfg.dispatch_base;
    let mut entries = a.cfg.dispatch_of(d).to_vec();
    entries.sort_unstable();
    assert_eq!(entries, [Node(1), Node(2)]);
}

// ---- phi resolution ----

/// Runs a parallel copy as the emitter does: every source read (pushed) first, then the
/// locals written in reverse. `env` maps locals to values; a source is a value id whose
/// local is looked up in `local_of_value`.
fn run_copies(
    copies: &[(Local, ValueId)],
    env: &mut std::collections::HashMap<Local, i64>,
    local_of_value: impl Fn(ValueId) -> Local,
) {
    let stack: Vec<i64> = copies
        .iter()
        .map(|&(_, src)| env[&local_of_value(src)])
        .collect();
    for (&(l, _), v) in copies.iter().zip(stack).rev() {
        env.insert(l, v);
    }
}

#[test]
fn phi_copies_of_a_rotation_are_one_parallel_copy() {
    // (a, b, c) <- (b, c, a) on the back edge; the counter %v3 alongside.
    let m = module(
        "i32",
        &["i32", "i32", "i32"],
        "blocks 3; constants { i32: %c0 = i32 0; %c1 = i32 1; %c2 = i32 10; }
         br label %b1;
       %b1:
         %v0 = phi i32 [%p0, %b0], [%v1, %b1];
         %v1 = phi i32 [%p1, %b0], [%v2, %b1];
         %v2 = phi i32 [%p2, %b0], [%v0, %b1];
         %v3 = phi i32 [%c0, %b0], [%v4, %b1];
         %v4 = add i32 %v3, %c1;
         %v5 = icmp ult i32 %v4, %c2;
         br i1 %v5, label %b1, label %b2;
       %b2:
         %v6 = add i32 %v0, %v1;
         %v7 = add i32 %v6, %v2;
         ret i32 %v7;",
    );
    let a = analyze(&m);
    let f = &m.function_bodies[0];
    let first = f.first_inst_value();
    let mut copies = Vec::new();
    super::phi::edge_copies(&a, f, first, Node(1), Node(1), &mut copies).unwrap();
    let (la, lb, lc, ln) = (local(&a, 0), local(&a, 1), local(&a, 2), local(&a, 3));
    let v = |n: u32| ValueId(first + n);
    // The counter's next value %v4 has the counter's local (`locals::Numbering::coalesce`):
    // no copy for it.
    assert_eq!(local(&a, 4), ln);
    assert_eq!(copies, [(la, v(1)), (lb, v(2)), (lc, v(0))]);
    // Run as a parallel copy: a rotation, whatever order the list is in.
    let mut env: std::collections::HashMap<Local, i64> =
        [(la, 1), (lb, 2), (lc, 3), (ln, 8)].into();
    run_copies(&copies, &mut env, |s| a.local_of[(s.0 - first) as usize]);
    assert_eq!((env[&la], env[&lb], env[&lc], env[&ln]), (2, 3, 1, 8));
    // The same copies done one after the other would lose a value: the cycle is real.
    let mut seq: std::collections::HashMap<Local, i64> = [(la, 1), (lb, 2), (lc, 3)].into();
    for &(l, src) in &copies[..3] {
        let x = seq[&a.local_of[(src.0 - first) as usize]];
        seq.insert(l, x);
    }
    assert_ne!((seq[&la], seq[&lb], seq[&lc]), (2, 3, 1));
    // The entry edge copies the parameters in.
    super::phi::edge_copies(&a, f, first, Node(0), Node(1), &mut copies).unwrap();
    assert_eq!(
        copies,
        [
            (la, ValueId(f.base)),
            (lb, ValueId(f.base + 1)),
            (lc, ValueId(f.base + 2)),
            (ln, ValueId(f.first_const()))
        ]
    );
    // No phis in %b2: nothing on the exit edge.
    super::phi::edge_copies(&a, f, first, Node(1), Node(2), &mut copies).unwrap();
    assert!(copies.is_empty());
}

#[test]
fn a_phi_that_keeps_its_value_copies_nothing() {
    let m = unary(
        "blocks 3; constants { i32: %c0 = i32 0; %c1 = i32 1; }
         br label %b1;
       %b1:
         %v0 = phi i32 [%p0, %b0], [%v0, %b1];
         %v1 = phi i32 [%c0, %b0], [%v2, %b1];
         %v2 = add i32 %v1, %c1;
         %v3 = icmp ult i32 %v2, %v0;
         br i1 %v3, label %b1, label %b2;
       %b2:
         ret i32 %v1;",
    );
    let a = analyze(&m);
    let f = &m.function_bodies[0];
    let first = f.first_inst_value();
    assert_eq!(copies(&m, &a, 1, 1), [(local(&a, 1), ValueId(first + 2))]);
    assert!(super::phi::has_copies(&a, f, first, Node(1), Node(1)));
}

// ---- the structurizer's nesting state ----

#[test]
fn depths_count_from_the_innermost_construct() {
    let mut n = Nest::new(8, &mut Scratch::default());
    n.open(Ctx::Block(Node(5)), 10);
    n.open(Ctx::Loop(Node(3)), 0);
    n.open(Ctx::If, 0);
    assert_eq!(n.depth_to(Node(3)), Some(1));
    assert_eq!(n.depth_to(Node(5)), Some(2));
    assert_eq!(n.depth_to(Node(4)), None);
    assert_eq!(n.close(), Close::End); // the if
    assert_eq!(n.depth_to(Node(3)), Some(0));
    assert_eq!(n.close(), Close::End); // the loop: its label closes with it
    assert_eq!(n.depth_to(Node(3)), None);
    assert_eq!(n.depth_to(Node(5)), Some(0));
}

#[test]
fn a_block_nothing_branches_to_or_across_is_cut() {
    let mut n = Nest::new(8, &mut Scratch::default());
    n.open(Ctx::Block(Node(2)), 7);
    assert_eq!(n.close(), Close::Unused(7));

    // A branch to it keeps it.
    n.open(Ctx::Block(Node(2)), 7);
    n.open(Ctx::If, 0);
    n.note_branch(1);
    assert_eq!(n.close(), Close::End);
    assert_eq!(n.close(), Close::End);

    // A branch across it (to an outer block) keeps it too: the depth counted it.
    n.open(Ctx::Block(Node(4)), 3);
    n.open(Ctx::Block(Node(2)), 7);
    n.note_branch(1);
    assert_eq!(n.close(), Close::End);
    assert_eq!(n.close(), Close::End);

    // A branch to an inner loop leaves the block around it unused.
    n.open(Ctx::Block(Node(4)), 3);
    n.open(Ctx::Loop(Node(1)), 0);
    n.note_branch(0);
    assert_eq!(n.close(), Close::End);
    assert_eq!(n.close(), Close::Unused(3));
}

#[test]
fn a_branch_to_where_control_falls_is_left_out() {
    let mut n = Nest::new(8, &mut Scratch::default());
    n.open(Ctx::Block(Node(2)), 0);
    n.open(Ctx::Loop(Node(1)), 0);
    // Depth 1 is the block: falls through if two `end`s are ahead, not one.
    assert!(n.falls_through(1, 2));
    assert!(!n.falls_through(1, 1));
    // Depth 0 is a loop: a branch to it goes back, never falls.
    assert!(!n.falls_through(0, 5));
}

// ---- the structurizer's output for a few CFG shapes ----

/// The control operators of a lowered body, as text (`block`, `br 1`, ...).
fn skeleton(m: &Module) -> Vec<String> {
    let cx = ctx(m);
    let l = lower_function(&cx, 0).unwrap_or_else(|e| panic!("{e}"));
    let body = wasmparser::FunctionBody::new(wasmparser::BinaryReader::new(&l.body, 0));
    let mut out = Vec::new();
    let mut ops = body.get_operators_reader().unwrap();
    while !ops.eof() {
        use wasmparser::Operator::*;
        let s = match ops.read().unwrap() {
            Block { .. } => "block".to_string(),
            Loop { .. } => "loop".to_string(),
            If { .. } => "if".to_string(),
            Else => "else".to_string(),
            End => "end".to_string(),
            Br { relative_depth } => format!("br {relative_depth}"),
            BrIf { relative_depth } => format!("br_if {relative_depth}"),
            BrTable { .. } => "br_table".to_string(),
            Return => "return".to_string(),
            _ => continue,
        };
        out.push(s);
    }
    out
}

/// A few CFG shapes, each with the control operators the structurizer must give it.
const SHAPES: &[(&str, &str, &str, &[&str])] = &[
    (
        // Both arms fall into the merge: no block for it, no branch.
        "a diamond is an if-else without a block",
        "i32",
        "blocks 4; constants { i32: %c0 = i32 0; %c1 = i32 1; }
         %v0 = icmp eq i32 %p0, %c0;
         br i1 %v0, label %b1, label %b2;
       %b1:
         %v1 = add i32 %p0, %c1;
         br label %b3;
       %b2:
         %v2 = sub i32 %p0, %c1;
         br label %b3;
       %b3:
         %v3 = phi i32 [%v1, %b1], [%v2, %b2];
         ret i32 %v3;",
        &["if", "else", "end", "return", "end"],
    ),
    (
        // %b0 tests and leaves for %b2 (a merge: reached from %b0 and %b1) without copies.
        "an early exit is a br_if out of a block",
        "i32",
        "blocks 3; constants { i32: %c0 = i32 0; }
         %v0 = icmp eq i32 %p0, %c0;
         br i1 %v0, label %b2, label %b1;
       %b1:
         br label %b2;
       %b2:
         ret i32 %p0;",
        &["block", "br_if 0", "end", "return", "end"],
    ),
    (
        // No phi copies on the back edge (the loop counts down in memory): `br_if 0` to
        // the loop, then the exit inline after it.
        "a loop without copies branches back with br_if",
        "void",
        "blocks 3; constants { i32: %c0 = i32 0; %c1 = i32 1; }
         br label %b1;
       %b1:
         %v0 = load i32* %p0, align 4;
         %v1 = sub i32 %v0, %c1;
         store i32 %v1, i32* %p0, align 4;
         %v2 = icmp ne i32 %v1, %c0;
         br i1 %v2, label %b1, label %b2;
       %b2:
         ret void;",
        &["loop", "br_if 0", "return", "end", "end"],
    ),
];

#[test]
fn cfg_shapes_get_their_control_skeletons() {
    let wrong: Vec<String> = SHAPES
        .iter()
        .filter_map(|&(name, ret, body, want)| {
            let got = skeleton(&module(ret, &["i32"], body));
            (got != want).then(|| format!("{name}: got {got:?}, want {want:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// ---- the CFG alone, from graphs built directly ----

/// Immediate dominators, read off the dominator tree (`NONE` for the entry and for
/// unreachable nodes).
fn idoms(cfg: &Cfg) -> Vec<u32> {
    let n = cfg.succs.len();
    let mut idom = vec![NONE; n];
    for v in 0..n {
        for k in cfg.children.range(Node(v as u32)) {
            idom[cfg.children.item(k).index()] = v as u32;
        }
    }
    idom
}

fn dominates(idom: &[u32], a: u32, mut b: u32) -> bool {
    loop {
        if a == b {
            return true;
        }
        if idom[b as usize] == NONE {
            return false;
        }
        b = idom[b as usize];
    }
}

/// What the structurizer relies on: every retreating edge (by reverse postorder) goes to
/// a loop header that dominates its source, every loop header has one, and merge nodes
/// are exactly those with two or more forward in-edges (one per predecessor node).
fn check_structured(cfg: &Cfg) {
    let n = cfg.succs.len();
    let idom = idoms(cfg);
    let rpo = &cfg.rpo_index;
    let mut forward_in = vec![0u32; n];
    let mut retreating_in = vec![false; n];
    for u in 0..n {
        if rpo[u] == NONE {
            continue;
        }
        for &Node(v) in &cfg.succs[Node(u as u32)] {
            if rpo[v as usize] <= rpo[u] {
                assert!(
                    dominates(&idom, v, u as u32),
                    "retreating edge {u} -> {v} to a node that does not dominate it"
                );
                retreating_in[v as usize] = true;
            } else {
                forward_in[v as usize] += 1;
            }
        }
    }
    for v in 0..n {
        if rpo[v] == NONE {
            continue;
        }
        assert_eq!(cfg.loop_header[v], retreating_in[v], "loop header {v}");
        assert_eq!(cfg.merge[v], forward_in[v] >= 2, "merge node {v}");
    }
}

/// Reducibility computed here the textbook way, on the graph as given: remove the edges
/// whose target dominates their source (dominator sets by iteration, as bit masks);
/// reducible when what is left has no cycle.
fn reducible(succs: &[Vec<u32>]) -> bool {
    let n = succs.len();
    let mut reach = vec![false; n];
    let mut stack = vec![0usize];
    reach[0] = true;
    while let Some(u) = stack.pop() {
        for &v in &succs[u] {
            if !reach[v as usize] {
                reach[v as usize] = true;
                stack.push(v as usize);
            }
        }
    }
    let all = (1u32 << n) - 1;
    let mut dom = vec![all; n];
    dom[0] = 1;
    let mut changed = true;
    while changed {
        changed = false;
        for v in 1..n {
            let mut d = all;
            for u in 0..n {
                if reach[u] && succs[u].contains(&(v as u32)) {
                    d &= dom[u];
                }
            }
            let d = d | 1 << v;
            if reach[v] && d != dom[v] {
                dom[v] = d;
                changed = true;
            }
        }
    }
    // Kahn's algorithm on the forward edges of the reachable nodes.
    let mut indeg = vec![0; n];
    for u in (0..n).filter(|&u| reach[u]) {
        for &v in &succs[u] {
            if dom[u] & 1 << v == 0 {
                indeg[v as usize] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&u| reach[u] && indeg[u] == 0).collect();
    let mut seen = 0;
    while let Some(u) = ready.pop() {
        seen += 1;
        for &v in &succs[u] {
            if dom[u] & 1 << v == 0 {
                indeg[v as usize] -= 1;
                if indeg[v as usize] == 0 {
                    ready.push(v as usize);
                }
            }
        }
    }
    seen == reach.iter().filter(|&&r| r).count()
}

#[test]
fn nested_loops_have_two_headers_and_no_merge() {
    // 0 -> 1 (outer header) -> 2 (inner header, self loop) -> 3 (latch: back to 1, or
    // out to 4).
    let g = vec![vec![1], vec![2], vec![2, 3], vec![1, 4], vec![]];
    let cfg = Cfg::of_graph(&g);
    assert_eq!(cfg.loop_header, [false, true, true, false, false]);
    assert_eq!(cfg.merge, [false; 5]);
    assert_eq!(cfg.irreducible_dispatchers(), 0);
    check_structured(&cfg);
}

#[test]
fn a_diamond_merges_below_its_head() {
    let g = vec![vec![1, 2], vec![3], vec![3], vec![]];
    let cfg = Cfg::of_graph(&g);
    assert_eq!(cfg.merge, [false, false, false, true]);
    // The head dominates the arms and the merge: three children.
    let mut kids: Vec<u32> = cfg.children[Node(0)].iter().map(|k| k.0).collect();
    kids.sort_unstable();
    assert_eq!(kids, [1, 2, 3]);
    check_structured(&cfg);
}

#[test]
fn a_cycle_with_two_entries_gets_a_dispatcher_that_dominates_it() {
    // 0 enters the cycle 1 <-> 2 at both nodes; 1 also leaves to 3.
    let g = vec![vec![1, 2], vec![2, 3], vec![1], vec![]];
    assert!(!reducible(&g));
    let cfg = Cfg::of_graph(&g);
    assert_eq!(cfg.irreducible_dispatchers(), 1);
    let d = cfg.dispatch_base.0;
    let idom = idoms(&cfg);
    assert!(dominates(&idom, d, 1) && dominates(&idom, d, 2));
    assert!(cfg.loop_header[d as usize]);
    check_structured(&cfg);
}

#[test]
fn random_graphs_come_out_structured_with_dispatchers_only_when_irreducible() {
    // A fixed xorshift sequence: the same graphs on every run.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let (mut irreducible, mut total) = (0, 0);
    for _ in 0..2000 {
        let n = 2 + next(7) as usize;
        let g: Vec<Vec<u32>> = (0..n)
            .map(|_| {
                // Up to two successors among nodes 1.. (block 0 is never a target).
                let k = next(3);
                let mut s: Vec<u32> = (0..k).map(|_| 1 + next(n as u64 - 1) as u32).collect();
                s.dedup();
                s
            })
            .collect();
        let cfg = Cfg::of_graph(&g);
        check_structured(&cfg);
        let red = reducible(&g);
        assert_eq!(cfg.irreducible_dispatchers() == 0, red, "graph {g:?}");
        irreducible += !red as u32;
        total += 1;
    }
    // The sample has both kinds.
    assert!(
        irreducible > 50 && irreducible < total - 50,
        "{irreducible} of {total}"
    );
}

// ---- switch lowering: table or compares ----

#[test]
fn a_switch_gets_a_table_when_dense_enough() {
    use super::structurize::table_range;
    let cases = |vs: &[i64]| -> Vec<(i64, Node)> { vs.iter().map(|&v| (v, Node(1))).collect() };
    assert_eq!(table_range(&cases(&[0, 1, 2]), false), Some((0, 3)));
    assert_eq!(table_range(&cases(&[-3, 2, -1]), false), Some((-3, 6)));
    // Two cases: compares.
    assert_eq!(table_range(&cases(&[0, 1]), false), None);
    // A range of at most 2 * cases + 8: 14 for three cases.
    assert_eq!(table_range(&cases(&[0, 5, 13]), false), Some((0, 14)));
    assert_eq!(table_range(&cases(&[0, 5, 14]), false), None);
    // Never on an i64 condition.
    assert_eq!(table_range(&cases(&[0, 1, 2]), true), None);
    // Values an i32 compare cannot hold.
    assert_eq!(
        table_range(&cases(&[-(1 << 31) - 1, -(1 << 31), -(1 << 31) + 1]), false),
        None
    );
    assert_eq!(
        table_range(&cases(&[(1 << 32) - 2, (1 << 32) - 1, 1 << 32]), false),
        None
    );
    assert_eq!(
        table_range(
            &cases(&[(1 << 32) - 3, (1 << 32) - 2, (1 << 32) - 1]),
            false
        ),
        Some(((1 << 32) - 3, 3))
    );
    // At most 65536 slots, however many cases.
    let many: Vec<i64> = (0..40_000).map(|i| i * 2).collect();
    assert_eq!(table_range(&cases(&many), false), None);
    let many: Vec<i64> = (0..40_000).map(|i| i + i / 2).collect();
    assert_eq!(table_range(&cases(&many), false), Some((0, 59_999)));
}
