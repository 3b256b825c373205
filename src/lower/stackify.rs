//! Which values stay on the wasm operand stack instead of going through a local.
//!
//! A value is "inlined" (emitted at its use rather than at its definition) when it has a
//! single use, in the same block, by an instruction that pushes it as an operand, and its
//! definition is the last not-yet-inlined instruction before that operand is pushed. The
//! check walks each block backwards over the operands in push order, so inlined trees are
//! emitted in their original relative order: no side effect is ever reordered.

use super::LowerCtx;
use crate::ir::{Callee, Function, InstKind, Intrinsic, ValueId};

/// Deepest expression tree kept on the stack (bounds recursion when emitting).
const MAX_DEPTH: u32 = 48;

/// Pushes, in the order the lowering pushes them, the operands that are evaluated exactly
/// once onto the stack. Operands the lowering does not push (intrinsic flags, phi inputs)
/// are left out, so they are never inlined.
pub(crate) fn push_order(cx: &LowerCtx<'_>, kind: &InstKind, out: &mut Vec<ValueId>) {
    match kind {
        InstKind::Binop { lhs, rhs, .. } | InstKind::Cmp { lhs, rhs, .. } => {
            out.push(*lhs);
            out.push(*rhs);
        }
        InstKind::Cast { val, .. } => out.push(*val),
        InstKind::ExtractElement { vec, index } => {
            out.push(*vec);
            out.push(*index);
        }
        InstKind::InsertElement { vec, elt, index } => {
            out.push(*vec);
            out.push(*elt);
            out.push(*index);
        }
        InstKind::Select { cond, t, f } => {
            out.push(*t);
            out.push(*f);
            out.push(*cond);
        }
        InstKind::Load { ptr, .. } => out.push(*ptr),
        InstKind::Store { ptr, val, .. } => {
            out.push(*ptr);
            out.push(*val);
        }
        InstKind::Alloca { size, .. } => out.push(*size),
        InstKind::Ret { val: Some(v) } => out.push(*v),
        InstKind::CondBr { cond, .. } => out.push(*cond),
        InstKind::Switch(s) => out.push(s.cond),
        InstKind::Call(c) => match c.callee {
            Callee::Direct(fid) => {
                let intr = cx
                    .module
                    .functions
                    .get(fid as usize)
                    .and_then(|d| d.intrinsic);
                match intr {
                    None => out.extend_from_slice(&c.args),
                    Some(i) => intrinsic_push_order(i, &c.args, out),
                }
            }
            Callee::Indirect(v) => {
                out.extend_from_slice(&c.args);
                out.push(v);
            }
        },
        _ => {}
    }
}

fn intrinsic_push_order(i: Intrinsic, a: &[ValueId], out: &mut Vec<ValueId>) {
    use Intrinsic::*;
    let take = |out: &mut Vec<ValueId>, idx: &[usize]| {
        for &k in idx {
            if let Some(v) = a.get(k) {
                out.push(*v);
            }
        }
    };
    match i {
        Memcpy | Memmove | Memset => take(out, &[0, 1, 2]),
        Bswap(_) | Ctlz(_) | Cttz(_) | Ctpop(_) | Fabs(..) | Sqrt(_) | Stackrestore => {
            take(out, &[0])
        }
        AtomicLoad(_) => take(out, &[0]),
        AtomicStore(_) => take(out, &[1, 0]),
        AtomicRmw(_) => take(out, &[1, 2]),
        AtomicCmpxchg(_) => take(out, &[0, 1, 2]),
        AtomicIsLockFree => take(out, &[0]),
        Stacksave | Trap | NaclReadTp | NaclSetjmp | NaclLongjmp | AtomicFence | AtomicFenceAll => {
        }
    }
}

/// True for a call to `llvm.nacl.setjmp`.
pub(crate) fn is_setjmp(cx: &LowerCtx<'_>, kind: &InstKind) -> bool {
    match kind {
        InstKind::Call(c) => match c.callee {
            Callee::Direct(fid) => matches!(
                cx.module
                    .functions
                    .get(fid as usize)
                    .and_then(|d| d.intrinsic),
                Some(Intrinsic::NaclSetjmp)
            ),
            Callee::Indirect(_) => false,
        },
        _ => false,
    }
}

/// Use counts of instruction values (`%vN`), counting every operand occurrence, into
/// `uses` (cleared first; its allocation is reused).
pub(crate) fn use_counts(f: &Function, uses: &mut Vec<u32>) {
    let first = f.first_inst_value();
    uses.clear();
    uses.resize(f.value_insts.len(), 0);
    for inst in &f.insts {
        inst.kind.for_each_operand(|v| {
            if v.0 >= first {
                if let Some(u) = uses.get_mut((v.0 - first) as usize) {
                    *u = u.saturating_add(1);
                }
            }
        });
    }
}

/// Marks in `inline`, per instruction index, whether the instruction is emitted at its
/// single use. `inline` and `buf` are scratch space whose allocations are reused.
pub(crate) fn analyze(
    cx: &LowerCtx<'_>,
    f: &Function,
    uses: &[u32],
    inline: &mut Vec<bool>,
    buf: &mut Vec<ValueId>,
) {
    inline.clear();
    inline.resize(f.insts.len(), false);
    buf.clear();
    let n = f.block_starts.len();
    for b in 0..n {
        let start = f.block_starts[b] as usize;
        let end = f
            .block_starts
            .get(b + 1)
            .map_or(f.insts.len(), |&e| e as usize)
            .min(f.insts.len());
        if start >= end {
            continue;
        }
        let mut j = end as isize - 1;
        while j >= start as isize {
            let ju = j as usize;
            if inline[ju] {
                j -= 1;
                continue;
            }
            let mut st = Walk {
                cx,
                f,
                uses,
                inline,
                buf,
                start,
            };
            j = st.visit(ju, j - 1, 0);
        }
    }
}

struct Walk<'a, 'm> {
    cx: &'a LowerCtx<'m>,
    f: &'a Function,
    uses: &'a [u32],
    inline: &'a mut Vec<bool>,
    buf: &'a mut Vec<ValueId>,
    start: usize,
}

impl Walk<'_, '_> {
    /// Inlines what it can into instruction `user`; `k` is the candidate position (the
    /// last instruction before `user` not yet inlined). Returns the new candidate.
    fn visit(&mut self, user: usize, mut k: isize, depth: u32) -> isize {
        let lo = self.buf.len();
        push_order(self.cx, &self.f.insts[user].kind, self.buf);
        let hi = self.buf.len();
        if depth < MAX_DEPTH {
            let first = self.f.first_inst_value();
            for i in (lo..hi).rev() {
                if k < self.start as isize {
                    break;
                }
                let v = self.buf[i];
                if v.0 < first {
                    continue;
                }
                let n = (v.0 - first) as usize;
                let Some(&def) = self.f.value_insts.get(n) else {
                    continue;
                };
                if def as isize != k || self.uses.get(n) != Some(&1) {
                    continue;
                }
                if matches!(self.f.insts[def as usize].kind, InstKind::Phi { .. }) {
                    continue;
                }
                // A setjmp call returns twice: its result must live in a local that the
                // longjmp path can set, and nothing may stay on the stack across it.
                if is_setjmp(self.cx, &self.f.insts[def as usize].kind) {
                    continue;
                }
                self.inline[def as usize] = true;
                k = self.visit(def as usize, k - 1, depth + 1);
            }
        }
        self.buf.truncate(lo);
        k
    }
}
