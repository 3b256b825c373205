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

pub(crate) fn push_order<'a>(
    cx: &LowerCtx<'_>,
    body: &'a Function,
    kind: &'a InstKind,
) -> PushOrder<'a> {
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
                    .get(fid.index())
                    .and_then(|d| d.intrinsic);
                match intr {
                    None => PushOrder {
                        args: body.args(c),
                        tail: [z; 3],
                        n_tail: 0,
                    },
                    Some(i) => intrinsic_push_order(i, body.args(c)),
                }
            }
            Callee::Indirect(v) => PushOrder {
                args: body.args(c),
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
                    .get(fid.index())
                    .and_then(|d| d.intrinsic),
                Some(Intrinsic::NaclSetjmp)
            ),
            Callee::Indirect(_) => false,
        },
        _ => false,
    }
}

/// Records instruction `i` as a user of each of its operands in `users` (per instruction
/// value: [`NONE`] while unused, the one user's index after the first use, [`MANY`] after
/// a second, also by the same instruction). One slot per value instead of a count and a
/// last user: that is all stackify (a single use, by whom) and the local allocation (any
/// use) ask. The caller runs it over every instruction, fused with its own walk; `users`
/// starts filled with [`NONE`]. `other` is called with the kinds not handled inline
/// (calls, allocas, phis, ...), so a caller that only cares about those needs no second
/// `match` per instruction; `each` with the index of every instruction value used.
///
/// It also keeps each value's last user in `last` (same length as `users`, starting
/// after each value's definition), for the sharing of locals (`locals::last_use`).
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn count_uses(
    body: &Function,
    kind: &InstKind,
    i: u32,
    first: u32,
    users: &mut [u32],
    last: &mut [u32],
    other: impl FnOnce(&InstKind),
    mut each: impl FnMut(usize),
) {
    let count = |v: ValueId| {
        // Below `first` (not an instruction value) wraps to an index out of range.
        let n = v.0.wrapping_sub(first) as usize;
        if let (Some(u), Some(l)) = (users.get_mut(n), last.get_mut(n)) {
            *u = if *u == NONE { i } else { MANY };
            super::locals::last_use(l, i);
            each(n);
        }
    };
    kind.for_each_operand_unordered(body, count, other);
}

/// [`count_uses`]' mark of a value used more than once (never an instruction index: a
/// function cannot hold `u32::MAX - 1` instructions).
pub(crate) const MANY: u32 = u32::MAX - 1;

/// Marks in `inline`, per instruction index, whether the instruction is emitted at its
/// single use. `users` comes from [`count_uses`]. `inline` is scratch space whose
/// allocation is reused.
///
/// `statement(j, b)` is called for every instruction `j` left out of line, once its
/// operands are decided, in reverse order: blocks last to first, each block backwards;
/// `b` is its block. The caller numbers the locals there instead of walking the values
/// again.
/// Returns how many instructions were inlined.
pub(crate) fn analyze(
    cx: &LowerCtx<'_>,
    f: &Function,
    users: &[u32],
    inline: &mut Vec<bool>,
    mut statement: impl FnMut(usize, usize),
) -> usize {
    inline.clear();
    inline.resize(f.insts.len(), false);
    let mut st = Walk {
        cx,
        f,
        first: f.first_inst_value(),
        users,
        inline,
        start: 0,
        inlined: 0,
    };
    let n = f.block_starts.len();
    // Blocks are independent here; last to first so `statement` sees reverse order.
    for b in (0..n).rev() {
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
            statement(ju, b);
        }
    }
    st.inlined
}

struct Walk<'a, 'm> {
    cx: &'a LowerCtx<'m>,
    f: &'a Function,
    first: u32,
    users: &'a [u32],
    inline: &'a mut Vec<bool>,
    start: usize,
    /// Instructions inlined so far (each one's `value_insts` entry checked).
    inlined: usize,
}

impl Walk<'_, '_> {
    /// True when candidate `k` might be inlined into `user` (else none of `user`'s
    /// operands can be): its value's single user is `user`. Most statements need no look
    /// at their operands: the candidate before them is not theirs. Phis and setjmp calls
    /// pass here and are refused by [`Walk::visit`].
    #[inline]
    fn may_take(&self, user: usize, k: isize) -> bool {
        if k < self.start as isize {
            return false;
        }
        // No result (`ValueId::NONE`) or a value below `first` wraps out of range.
        let r = self.f.insts[k as usize].result;
        self.users.get(r.0.wrapping_sub(self.first) as usize) == Some(&(user as u32))
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
        let ops = push_order(self.cx, f, &f.insts[user].kind);
        // The candidate's value: `try_visit` found its single user is `user`.
        let mut kv = f.insts[k as usize].result;
        // Last pushed first: the tail backwards, then the arguments backwards.
        let tail = &ops.tail[..ops.n_tail];
        for &v in tail.iter().rev().chain(ops.args.iter().rev()) {
            // An operand that is not the candidate (a constant, a value in a local)
            // leaves it for an earlier operand.
            if v != kv {
                continue;
            }
            // The verifier checked that `value_insts` and the results agree; a table
            // that does not is left alone rather than trusted.
            let n = v.0.wrapping_sub(self.first) as usize;
            if f.value_insts.get(n) != Some(&(k as u32)) {
                continue;
            }
            // A phi is a local written on edges, never an expression; a setjmp call
            // returns twice: its result must live in a local that the longjmp path can
            // set, and nothing may stay on the stack across it.
            let kind = &f.insts[k as usize].kind;
            if matches!(kind, InstKind::Phi { .. }) || is_setjmp(self.cx, kind) {
                continue;
            }
            self.inline[k as usize] = true;
            self.inlined += 1;
            k = self.try_visit(k as usize, k - 1, depth + 1);
            if !self.may_take(user, k) {
                break;
            }
            kv = f.insts[k as usize].result;
        }
        k
    }
}
