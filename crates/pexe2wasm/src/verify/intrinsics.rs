//! Call-site rules of intrinsics: the memory orders and read-modify-write operations of
//! the atomic intrinsics must be compile-time constants with allowed values.
//!
//! The allowed orders are those of PNaCl's ABI checker (abi-atomics.ll in pnacl-llvm):
//! C11's rules, minus relaxed and consume, which the toolchain's RewriteAtomics pass
//! upgrades to seq_cst before a pexe is written.

use super::function::FnCx;
use super::Rule;
use crate::ir::intrinsics::{atomic_rmw, memory_order as mo};
use crate::ir::{Intrinsic, ValueId};

fn order_name(o: u64) -> String {
    match o {
        mo::RELAXED => "relaxed".into(),
        mo::CONSUME => "consume".into(),
        mo::ACQUIRE => "acquire".into(),
        mo::RELEASE => "release".into(),
        mo::ACQ_REL => "acq_rel".into(),
        mo::SEQ_CST => "seq_cst".into(),
        x => format!("{x} (not a memory order)"),
    }
}

const LOAD: &[u64] = &[mo::ACQUIRE, mo::SEQ_CST];
const STORE: &[u64] = &[mo::RELEASE, mo::SEQ_CST];
const RMW_FENCE: &[u64] = &[mo::ACQUIRE, mo::RELEASE, mo::ACQ_REL, mo::SEQ_CST];
/// (success, failure) pairs: failure is no stronger than success and neither release nor
/// acq_rel.
const CMPXCHG: &[(u64, u64)] = &[
    (mo::SEQ_CST, mo::SEQ_CST),
    (mo::SEQ_CST, mo::ACQUIRE),
    (mo::ACQ_REL, mo::ACQUIRE),
    (mo::ACQUIRE, mo::ACQUIRE),
];

type Problems = Vec<(Rule, String)>;

/// The constant value of argument `k`, reporting it when it is not a constant.
fn constant(
    cx: &FnCx<'_>,
    args: &[ValueId],
    k: usize,
    what: &str,
    p: &mut Problems,
) -> Option<u64> {
    let v = *args.get(k)?;
    let c = cx.const_int(v);
    if c.is_none() {
        p.push((
            Rule::Atomic,
            format!("the {what} (argument {k}) must be a constant"),
        ));
    }
    c
}

fn order(cx: &FnCx<'_>, name: &str, args: &[ValueId], k: usize, allowed: &[u64], p: &mut Problems) {
    if let Some(o) = constant(cx, args, k, "memory order", p) {
        if !allowed.contains(&o) {
            p.push((
                Rule::Atomic,
                format!("{name} with memory order {} is not allowed", order_name(o)),
            ));
        }
    }
}

pub(super) fn check_call(cx: &FnCx<'_>, intr: Intrinsic, args: &[ValueId], p: &mut Problems) {
    match intr {
        Intrinsic::AtomicLoad(_) => order(cx, "atomic load", args, 1, LOAD, p),
        Intrinsic::AtomicStore(_) => order(cx, "atomic store", args, 2, STORE, p),
        Intrinsic::AtomicRmw(_) => {
            if let Some(op) = constant(cx, args, 0, "operation", p) {
                if !(atomic_rmw::ADD..=atomic_rmw::XCHG).contains(&op) {
                    p.push((
                        Rule::Atomic,
                        format!("atomic rmw operation {op} is not one of 1 (add) .. 6 (xchg)"),
                    ));
                }
            }
            order(cx, "atomic rmw", args, 3, RMW_FENCE, p);
        }
        Intrinsic::AtomicCmpxchg(_) => {
            let s = constant(cx, args, 3, "success memory order", p);
            let f = constant(cx, args, 4, "failure memory order", p);
            if let (Some(s), Some(f)) = (s, f) {
                if !CMPXCHG.contains(&(s, f)) {
                    p.push((
                        Rule::Atomic,
                        format!(
                            "atomic cmpxchg with memory orders {}/{} is not allowed",
                            order_name(s),
                            order_name(f)
                        ),
                    ));
                }
            }
        }
        Intrinsic::AtomicFence => order(cx, "atomic fence", args, 0, RMW_FENCE, p),
        Intrinsic::AtomicIsLockFree => {
            // The byte size is a compile-time constant (the translator answers it).
            constant(cx, args, 0, "byte size", p);
        }
        _ => {}
    }
}
