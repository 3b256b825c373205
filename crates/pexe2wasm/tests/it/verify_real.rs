//! Every well-formed real pexe decodes and verifies with zero findings, and `check_runnable`
//! accepts exactly those with a `void (i32)` `_start`.
use pexe2wasm_testkit::corpus as common;
use pexe2wasm_testkit::Rng;

use pexe2wasm::verify::{check_runnable, verify, Rule};

/// The decoder puts calls' arguments and phis' incoming pairs in their body's pools one
/// run after another, in instruction order, with nothing left over.
fn pools_tiled(name: &str, m: &pexe2wasm::ir::Module) {
    use pexe2wasm::ir::InstKind;
    for (bi, f) in m.function_bodies.iter().enumerate() {
        let (mut args, mut incoming) = (0u32, 0u32);
        for (i, inst) in f.insts.iter().enumerate() {
            let (at, s) = match &inst.kind {
                InstKind::Call(c) => (&mut args, c.args),
                InstKind::Phi { incoming: s } => (&mut incoming, *s),
                _ => continue,
            };
            assert_eq!(s.start, *at, "{name}: body {bi} instruction {i}: {s:?}");
            *at += s.len;
        }
        assert_eq!(args as usize, f.call_args.len(), "{name}: body {bi}");
        assert_eq!(incoming as usize, f.phi_incoming.len(), "{name}: body {bi}");
    }
}

/// What `check_runnable` should say about a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// Has `_start` with signature `void (i32)`.
    Yes,
    /// No `_start` at all (pnacl-llvm-array-of-lit.pexe only defines `fib`).
    NoStart,
    /// `_start` exists but has another signature (binji-bitcast.pexe: `float (i32)`).
    BadSignature,
}

fn check(name: &str, run: Run) {
    let Some(data) = common::real_pexe(name) else {
        return;
    };
    let m = pexe2wasm::decode::decode(&data).unwrap_or_else(|e| panic!("{name}: decode: {e}"));
    pools_tiled(name, &m);
    let findings = verify(&m);
    if !findings.is_empty() {
        let shown: Vec<String> = findings.iter().take(20).map(|f| f.to_string()).collect();
        panic!(
            "{name}: {} finding(s), first ones:\n{}",
            findings.len(),
            shown.join("\n")
        );
    }
    match (run, check_runnable(&m)) {
        (Run::Yes, Ok(idx)) => {
            assert_eq!(m.functions[idx.index()].name.as_deref(), Some("_start"));
        }
        (Run::Yes, Err(e)) => panic!("{name}: expected runnable: {e}"),
        (_, Ok(idx)) => panic!("{name}: expected not runnable, got @f{idx}"),
        (Run::NoStart, Err(e)) => {
            assert_eq!(e.rule, Rule::EntryPoint);
            assert!(
                e.message.contains("no function named _start"),
                "{name}: {e}"
            );
        }
        (Run::BadSignature, Err(e)) => {
            assert_eq!(e.rule, Rule::EntryPoint);
            assert!(e.message.contains("must be void (i32)"), "{name}: {e}");
        }
    }
}

/// What `check_runnable` should say about a well-formed file: every one runs but two.
fn expected_run(name: &str) -> Run {
    match name {
        "binji-bitcast.pexe" => Run::BadSignature,
        "pnacl-llvm-array-of-lit.pexe" => Run::NoStart,
        _ => Run::Yes,
    }
}

/// The files `expected_run` says cannot run are `common::NOT_RUNNABLE`.
#[test]
fn not_runnable_files_are_the_corpus_list() {
    for f in common::WELL_FORMED {
        let runs = expected_run(f) == Run::Yes;
        assert_eq!(runs, !common::NOT_RUNNABLE.contains(f), "{f}");
    }
}

/// [`check`] of a file with what [`expected_run`] says of it.
fn check_file(name: &str) {
    check(name, expected_run(name));
}

pexe2wasm_testkit::test_each_well_formed_pexe!(check_file);

/// Numbers for corruptions, from the deterministic generator so failures reproduce.
trait Nums {
    /// Mostly small numbers, sometimes huge ones.
    fn num(&mut self) -> u32;
}

impl Nums for Rng {
    fn num(&mut self) -> u32 {
        match self.next_u64() % 4 {
            0 => u32::MAX - (self.next_u64() % 4) as u32,
            _ => (self.next_u64() % 64) as u32,
        }
    }
}

/// Applies one random corruption to a decoded module.
fn mutate(m: &mut pexe2wasm::ir::Module, r: &mut Rng) {
    use pexe2wasm::ir::{Align, BlockId, Callee, FuncId, InstKind, Type, TypeId, ValueId};
    let nb = m.function_bodies.len();
    let fi = r.below(nb);
    match r.next_u64() % 10 {
        0 => {
            // Retype an instruction.
            let f = &mut m.function_bodies[fi];
            let i = r.below(f.insts.len());
            if let Some(inst) = f.insts.get_mut(i) {
                inst.ty = TypeId(r.num());
            }
        }
        1 => {
            // Point an operand or target elsewhere.
            let f = &mut m.function_bodies[fi];
            let i = r.below(f.insts.len());
            let (a, b) = (r.num(), r.num());
            if let Some(inst) = f.insts.get_mut(i) {
                match &mut inst.kind {
                    InstKind::Binop { lhs, .. } | InstKind::Cmp { lhs, .. } => *lhs = ValueId(a),
                    InstKind::Store { ptr, .. } | InstKind::Load { ptr, .. } => *ptr = ValueId(a),
                    InstKind::Br { target } => *target = BlockId(b),
                    InstKind::CondBr { then_bb, .. } => *then_bb = BlockId(b),
                    InstKind::Switch(s) => s.default = BlockId(b),
                    InstKind::Phi { incoming } => {
                        if a % 5 == 0 {
                            // An incoming list outside the body's pool.
                            incoming.start = b;
                        } else if let Some(e) = f.phi_incoming.get_mut(incoming.range()) {
                            if let Some(e) = e.first_mut() {
                                *e = (ValueId(a), BlockId(b));
                            }
                        }
                    }
                    InstKind::Call(c) => {
                        if a % 5 == 0 {
                            // An argument list outside the body's pool.
                            c.args.len = b;
                        } else if a % 2 == 0 {
                            c.callee = Callee::Direct(FuncId(b));
                        } else {
                            c.callee = Callee::Indirect(ValueId(a));
                        }
                    }
                    InstKind::Alloca { align, .. } => *align = Align(b),
                    _ => {}
                }
            }
        }
        2 => {
            let f = &mut m.function_bodies[fi];
            let k = r.below(f.block_starts.len());
            if let Some(s) = f.block_starts.get_mut(k) {
                *s = r.num();
            }
        }
        3 => m.function_bodies[fi].num_blocks = r.num(),
        4 => {
            let f = &mut m.function_bodies[fi];
            let k = r.below(f.value_insts.len());
            if let Some(v) = f.value_insts.get_mut(k) {
                *v = r.num();
            }
        }
        5 => {
            // Corrupt the type table, including self-referential composites.
            let n = m.types.len() as u32;
            let t = match r.next_u64() % 3 {
                0 => Type::Vector {
                    len: r.num(),
                    elem: TypeId(r.below(n as usize + 2) as u32),
                },
                1 => Type::Int(r.num()),
                _ => Type::Vector {
                    len: 4,
                    elem: TypeId(n),
                },
            };
            m.types.push_declared(t);
        }
        6 => {
            let k = r.below(m.functions.len());
            let (a, b) = (r.num(), r.next_u64());
            if let Some(d) = m.functions.get_mut(k) {
                match b % 4 {
                    0 => d.ty = TypeId(a),
                    1 => d.body = Some(a),
                    2 => d.is_proto = !d.is_proto,
                    _ => d.name = Some("llvm.nacl.atomic.rmw.i32".into()),
                }
            }
        }
        7 => {
            let f = &mut m.function_bodies[fi];
            match r.next_u64() % 3 {
                0 => f.base = r.num(),
                1 => f.num_params = r.num(),
                _ => f.decl = FuncId(r.num()),
            }
        }
        8 => {
            let f = &mut m.function_bodies[fi];
            let i = r.below(f.insts.len());
            if i < f.insts.len() {
                f.insts.remove(i);
            }
        }
        _ => {
            let f = &mut m.function_bodies[fi];
            let k = r.below(f.consts.len());
            if let Some(c) = f.consts.get_mut(k) {
                c.ty = TypeId(r.num());
            }
        }
    }
}

/// The verifier never panics, however the IR is corrupted.
#[test]
fn corrupted_real_modules_do_not_panic() {
    for name in ["binji-main.pexe", "binji-dedupe_incoming.pexe"] {
        let Some(data) = common::real_pexe(name) else {
            return;
        };
        let m = pexe2wasm::decode::decode(&data).unwrap();
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..300 {
            let mut c = m.clone();
            for _ in 0..1 + round % 5 {
                mutate(&mut c, &mut r);
            }
            let _ = verify(&c);
            let _ = check_runnable(&c);
        }
    }
}
