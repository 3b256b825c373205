//! Which values stay on the wasm operand stack instead of going through a local.
//!
//! A value is "inlined" (emitted at its use rather than at its definition) when it has a
//! single use, in the same block, by an instruction that pushes it as an operand, and its
//! definition is the last not-yet-inlined instruction before that operand is pushed. The
//! check walks each block backwards over the operands in push order, so inlined trees are
//! emitted in their original relative order: no side effect is ever reordered.

use super::cfg::NONE;
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

/// Counts the operands of instruction `i` into `uses` (per instruction value, every
/// occurrence, saturating) and records `i` in `user` as the value's last user. The caller
/// runs it over every instruction, fused with its own walk; `uses` starts zeroed.
#[inline]
pub(crate) fn count_uses(kind: &InstKind, i: u32, first: u32, uses: &mut [u32], user: &mut [u32]) {
    let mut count = |v: ValueId| {
        if v.0 >= first {
            let n = (v.0 - first) as usize;
            if let Some(u) = uses.get_mut(n) {
                *u = u.saturating_add(1);
                user[n] = i;
            }
        }
    };
    // The most frequent kinds inline (the order of operands does not matter here);
    // `for_each_operand` for the rest.
    match kind {
        InstKind::Binop { lhs, rhs, .. }
        | InstKind::Cmp { lhs, rhs, .. }
        | InstKind::Store {
            ptr: lhs, val: rhs, ..
        } => {
            count(*lhs);
            count(*rhs);
        }
        InstKind::Load { ptr: v, .. }
        | InstKind::Cast { val: v, .. }
        | InstKind::CondBr { cond: v, .. } => count(*v),
        InstKind::Br { .. } => {}
        _ => kind.for_each_operand(count),
    }
}

/// Marks an instruction whose value has one use in `want` but two values claim it (only
/// in malformed IR): such a candidate is checked operand by operand.
const MANY: u32 = u32::MAX - 1;

/// Marks in `inline`, per instruction index, whether the instruction is emitted at its
/// single use. `uses` and `user` come from [`count_uses`]; `setjmps` are the setjmp calls.
/// `want`, `inline` and `buf` are scratch space whose allocations are reused.
#[allow(clippy::too_many_arguments)]
pub(crate) fn analyze(
    cx: &LowerCtx<'_>,
    f: &Function,
    uses: &[u32],
    user: &[u32],
    setjmps: &[u32],
    want: &mut Vec<u32>,
    inline: &mut Vec<bool>,
    buf: &mut Vec<ValueId>,
) {
    // Per instruction: the one instruction that may take it inline (the single user of
    // its value), NONE when it can never be inlined. Most statements then need no look
    // at their operands: the candidate before them is not theirs.
    want.clear();
    want.resize(f.insts.len(), NONE);
    for (n, &u) in uses.iter().enumerate() {
        if u != 1 {
            continue;
        }
        let Some(&def) = f.value_insts.get(n) else {
            continue;
        };
        let Some(inst) = f.insts.get(def as usize) else {
            continue;
        };
        // A phi is a local written on edges, never an expression.
        if matches!(inst.kind, InstKind::Phi { .. }) {
            continue;
        }
        let w = &mut want[def as usize];
        *w = if *w == NONE { user[n] } else { MANY };
    }
    // A setjmp call returns twice: its result must live in a local that the longjmp path
    // can set, and nothing may stay on the stack across it.
    for &s in setjmps {
        if let Some(w) = want.get_mut(s as usize) {
            *w = NONE;
        }
    }
    inline.clear();
    inline.resize(f.insts.len(), false);
    buf.clear();
    let mut st = Walk {
        cx,
        f,
        first: f.first_inst_value(),
        uses,
        want,
        inline,
        buf,
        start: 0,
    };
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
        st.start = start;
        let mut j = end as isize - 1;
        while j >= start as isize {
            let ju = j as usize;
            if st.inline[ju] {
                j -= 1;
                continue;
            }
            j = st.try_visit(ju, j - 1, 0);
        }
    }
}

struct Walk<'a, 'm> {
    cx: &'a LowerCtx<'m>,
    f: &'a Function,
    first: u32,
    uses: &'a [u32],
    want: &'a [u32],
    inline: &'a mut Vec<bool>,
    buf: &'a mut Vec<ValueId>,
    start: usize,
}

impl Walk<'_, '_> {
    /// True when candidate `k` might be inlined into `user` (else none of `user`'s
    /// operands can be).
    #[inline]
    fn may_take(&self, user: usize, k: isize) -> bool {
        if k < self.start as isize {
            return false;
        }
        let w = self.want[k as usize];
        w == user as u32 || w == MANY
    }

    /// Inlines what it can into instruction `user`; `k` is the candidate position (the
    /// last instruction before `user` not yet inlined). Returns the new candidate.
    #[inline]
    fn try_visit(&mut self, user: usize, k: isize, depth: u32) -> isize {
        if depth >= MAX_DEPTH || !self.may_take(user, k) {
            return k;
        }
        self.visit(user, k, depth)
    }

    /// [`Walk::try_visit`] once `k` may be one of `user`'s operands.
    #[inline(never)]
    fn visit(&mut self, user: usize, mut k: isize, depth: u32) -> isize {
        let lo = self.buf.len();
        push_order(self.cx, &self.f.insts[user].kind, self.buf);
        let hi = self.buf.len();
        let first = self.first;
        for i in (lo..hi).rev() {
            if !self.may_take(user, k) {
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
            // Only a [`MANY`] candidate can be one of these: `want` leaves them out.
            let kind = &self.f.insts[def as usize].kind;
            if matches!(kind, InstKind::Phi { .. }) || is_setjmp(self.cx, kind) {
                continue;
            }
            self.inline[def as usize] = true;
            k = self.try_visit(def as usize, k - 1, depth + 1);
        }
        self.buf.truncate(lo);
        k
    }
}
