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

/// The operands an instruction pushes exactly once onto the stack, in the order the
/// lowering pushes them: `args` (a call's arguments), then `tail[..n_tail]`. Operands the
/// lowering does not push (intrinsic flags, phi inputs) are left out, so they are never
/// inlined. Held inline (no buffer): it is asked for on every inlining candidate.
pub(crate) struct PushOrder<'a> {
    args: &'a [ValueId],
    tail: [ValueId; 3],
    n_tail: usize,
}

impl PushOrder<'_> {
    pub fn len(&self) -> usize {
        self.args.len() + self.n_tail
    }
    /// The `i`-th operand pushed.
    pub fn get(&self, i: usize) -> ValueId {
        match i.checked_sub(self.args.len()) {
            Some(t) => self.tail[t],
            None => self.args[i],
        }
    }
}

pub(crate) fn push_order<'a>(cx: &LowerCtx<'_>, kind: &'a InstKind) -> PushOrder<'a> {
    let z = ValueId(0);
    let fixed = |tail: &[ValueId]| {
        let mut t = [z; 3];
        t[..tail.len()].copy_from_slice(tail);
        PushOrder {
            args: &[],
            tail: t,
            n_tail: tail.len(),
        }
    };
    match kind {
        InstKind::Binop { lhs, rhs, .. } | InstKind::Cmp { lhs, rhs, .. } => fixed(&[*lhs, *rhs]),
        InstKind::Cast { val, .. } => fixed(&[*val]),
        InstKind::ExtractElement { vec, index } => fixed(&[*vec, *index]),
        InstKind::InsertElement { vec, elt, index } => fixed(&[*vec, *elt, *index]),
        InstKind::Select { cond, t, f } => fixed(&[*t, *f, *cond]),
        InstKind::Load { ptr, .. } => fixed(&[*ptr]),
        InstKind::Store { ptr, val, .. } => fixed(&[*ptr, *val]),
        InstKind::Alloca { size, .. } => fixed(&[*size]),
        InstKind::Ret { val: Some(v) } => fixed(&[*v]),
        InstKind::CondBr { cond, .. } => fixed(&[*cond]),
        InstKind::Switch(s) => fixed(&[s.cond]),
        InstKind::Call(c) => match c.callee {
            Callee::Direct(fid) => {
                let intr = cx
                    .module
                    .functions
                    .get(fid as usize)
                    .and_then(|d| d.intrinsic);
                match intr {
                    None => PushOrder {
                        args: &c.args,
                        tail: [z; 3],
                        n_tail: 0,
                    },
                    Some(i) => intrinsic_push_order(i, &c.args),
                }
            }
            Callee::Indirect(v) => PushOrder {
                args: &c.args,
                tail: [v, z, z],
                n_tail: 1,
            },
        },
        _ => fixed(&[]),
    }
}

fn intrinsic_push_order(i: Intrinsic, a: &[ValueId]) -> PushOrder<'static> {
    use Intrinsic::*;
    let take = |idx: &[usize]| {
        let mut out = PushOrder {
            args: &[],
            tail: [ValueId(0); 3],
            n_tail: 0,
        };
        for &k in idx {
            if let Some(v) = a.get(k) {
                out.tail[out.n_tail] = *v;
                out.n_tail += 1;
            }
        }
        out
    };
    match i {
        Memcpy | Memmove | Memset => take(&[0, 1, 2]),
        Bswap(_) | Ctlz(_) | Cttz(_) | Ctpop(_) | Fabs(..) | Sqrt(_) | Stackrestore => take(&[0]),
        AtomicLoad(_) => take(&[0]),
        AtomicStore(_) => take(&[1, 0]),
        AtomicRmw(_) => take(&[1, 2]),
        AtomicCmpxchg(_) => take(&[0, 1, 2]),
        AtomicIsLockFree => take(&[0]),
        Stacksave | Trap | NaclReadTp | NaclSetjmp | NaclLongjmp | AtomicFence | AtomicFenceAll => {
            take(&[])
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
/// `other` is called with the kinds not handled inline (calls, allocas, phis, ...), so a
/// caller that only cares about those needs no second `match` per instruction.
#[inline]
pub(crate) fn count_uses(
    kind: &InstKind,
    i: u32,
    first: u32,
    uses: &mut [u32],
    user: &mut [u32],
    other: impl FnOnce(&InstKind),
) {
    let count = |v: ValueId| {
        if v.0 >= first {
            let n = (v.0 - first) as usize;
            if let Some(u) = uses.get_mut(n) {
                *u = u.saturating_add(1);
                user[n] = i;
            }
        }
    };
    kind.for_each_operand_unordered(count, other);
}

/// Marks an instruction whose value has one use in `want` but two values claim it (only
/// in malformed IR): such a candidate is checked operand by operand.
const MANY: u32 = u32::MAX - 1;

/// Marks in `inline`, per instruction index, whether the instruction is emitted at its
/// single use. `uses` and `user` come from [`count_uses`]; `setjmps` are the setjmp calls.
/// `want` and `inline` are scratch space whose allocations are reused.
pub(crate) fn analyze(
    cx: &LowerCtx<'_>,
    f: &Function,
    uses: &[u32],
    user: &[u32],
    setjmps: &[u32],
    want: &mut Vec<u32>,
    inline: &mut Vec<bool>,
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
    let mut st = Walk {
        cx,
        f,
        first: f.first_inst_value(),
        uses,
        want,
        inline,
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
        let f = self.f;
        let ops = push_order(self.cx, &f.insts[user].kind);
        let first = self.first;
        for i in (0..ops.len()).rev() {
            if !self.may_take(user, k) {
                break;
            }
            let v = ops.get(i);
            if v.0 < first {
                continue;
            }
            let n = (v.0 - first) as usize;
            let Some(&def) = f.value_insts.get(n) else {
                continue;
            };
            if def as isize != k || self.uses.get(n) != Some(&1) {
                continue;
            }
            // Only a [`MANY`] candidate can be one of these: `want` leaves them out.
            let kind = &f.insts[def as usize].kind;
            if matches!(kind, InstKind::Phi { .. }) || is_setjmp(self.cx, kind) {
                continue;
            }
            self.inline[def as usize] = true;
            k = self.try_visit(def as usize, k - 1, depth + 1);
        }
        k
    }
}
