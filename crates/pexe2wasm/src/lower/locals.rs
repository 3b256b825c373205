//! Wasm locals of instruction values, numbered in stackify's backward walk.
//!
//! A value needs a local when it is a phi or a statement with uses (inlined values live on
//! the stack). Values that are **block-local** (not a phi, not used by a phi, every use in
//! the block of the definition, after it) share locals; every other value gets a local of
//! its own, as do all values of a function that calls setjmp (a longjmp re-enters at the
//! setjmp call, and every local must still hold what it held there).
//!
//! The facts come from `FnLower::new`'s walk over the instructions, which records per
//! value the index of its last user ([`last_use`]; [`ESCAPES`] when a phi uses it, or
//! when it is used at or before its definition, i.e. in a block laid out earlier). A value
//! is block-local when that index lies before the end of its block. The sharing itself is
//! a linear scan over the definitions in stackify's backward walk: per type, a queue of
//! the shared locals, each with the definition of its current owner (the value that took
//! it last). The walk meets definitions bottom up, so each local taken goes to the back
//! with the lowest owner so far, and the front's owner is the one defined furthest down.
//! A value takes the front local when that owner is defined at or after the value's last
//! use (then their lives do not meet, nor those of the local's earlier owners, further
//! down still), else a new local: if the front's owner starts within the value's life,
//! every other local's owner does too. Owners in blocks further down are defined after
//! the end of the current block, so its values take their locals freely. No walk over
//! the operands is needed.
//!
//! With the allocation with liveness (`alloc.rs`) the numbering is the same, and it
//! lists the values it gave no shared local ([`Numbering::cross`]): that allocation
//! colors those, the shared ones keep their pool.
//!
//! A phi of a one-block loop may share the local of the value its back edge brings
//! ([`Numbering::coalesce`]): the copy on that edge goes away.
//!
//! Why this is sound: a block's code is emitted once, contiguously (the structurizer
//! emits a node's statements, then its terminator, which reads its operands before any
//! other block's code; phi copies on edges read phi sources and write phi locals, never
//! shared ones). The reads of a statement and of the instructions inlined into it all
//! happen while that statement is emitted, before its own `local.set`. So when a value's
//! last user is instruction `e`, a statement at `s >= e` (the statement emitting `e` is
//! the first statement at or after it) may write the same local: every read of the value
//! comes first.

use super::LowerCtx;
use crate::ir::{Function, InstKind};

/// A wasm local of the function being lowered, by its index: the parameters first, then
/// the declared locals ([`super::analysis::LocalLayout`]). A type of its own so that a
/// local is never confused with the other `u32`s of the lowering (values, instructions,
/// type slots, the numbering's ordinals, globals, labels).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Local(u32);

impl Local {
    /// No local (a value kept on the stack, a role the function does not need).
    pub const NONE: Local = Local(u32::MAX);

    /// The local with index `index` (parameter `p` is local `p`).
    #[inline(always)]
    pub const fn new(index: u32) -> Local {
        Local(index)
    }

    /// Its index, as `local.get` and the like encode it.
    #[inline(always)]
    pub const fn index(self) -> u32 {
        self.0
    }

    #[inline(always)]
    pub fn is_none(self) -> bool {
        self == Local::NONE
    }

    #[inline(always)]
    pub fn is_some(self) -> bool {
        self != Local::NONE
    }
}

/// The local `k` places after this one (the next scratch locals of a type).
impl std::ops::Add<u32> for Local {
    type Output = Local;
    #[inline(always)]
    fn add(self, k: u32) -> Local {
        Local(self.0 + k)
    }
}

impl From<Local> for u32 {
    #[inline(always)]
    fn from(l: Local) -> u32 {
        l.index()
    }
}

impl std::fmt::Display for Local {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "${}", self.0)
    }
}

/// Bits of the ordinal in an [`Ordinal`] (the type slot above them).
pub(crate) const ORD_BITS: u32 = 29;
const ORD_MASK: u32 = (1 << ORD_BITS) - 1;

/// A value's local while the locals are numbered (the numbering, `alloc.rs`): its type
/// slot and its ordinal among the type's own locals, or its place in the type's pool of
/// shared locals. The layout turns it into a [`Local`] ([`Numbering::index`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Ordinal(u32);

impl Ordinal {
    /// No local.
    pub const NONE: Ordinal = Ordinal(u32::MAX);

    /// Own local `ord` of type slot `slot`.
    #[inline(always)]
    pub fn own(slot: usize, ord: u32) -> Ordinal {
        Ordinal((slot as u32) << ORD_BITS | ord)
    }

    /// Shared local `p` of type slot `slot` (stored as `ORD_MASK - p`, above every own
    /// ordinal).
    #[inline(always)]
    fn shared(slot: usize, p: u32) -> Ordinal {
        Ordinal((slot as u32) << ORD_BITS | (ORD_MASK - p))
    }

    /// The type slot.
    #[inline(always)]
    pub fn slot(self) -> usize {
        (self.0 >> ORD_BITS) as usize
    }

    #[inline(always)]
    pub fn is_none(self) -> bool {
        self == Ordinal::NONE
    }

    #[inline(always)]
    pub fn is_some(self) -> bool {
        self != Ordinal::NONE
    }
}

/// [`last_use`]'s mark of a value that is not block-local whatever its users' positions.
pub(crate) const ESCAPES: u32 = u32::MAX;

/// Records a use by instruction `i` in the value's `last` slot, which starts as the
/// index of the value's definition. The instructions come in order, so only a first use
/// can be before that (a use in a block laid out earlier); it makes the slot [`ESCAPES`],
/// which no index reaches (sticky). An instruction using the value twice passes twice.
/// (A non-phi instruction using its own result, which the verifier rejects, passes too:
/// its code stays valid wasm.)
#[inline(always)]
pub(crate) fn last_use(last: &mut u32, i: u32) {
    *last = if i >= *last { i } else { ESCAPES };
}

/// Marks the incoming values of a phi as needing locals of their own (read on the edges,
/// after their block's statements). The phi itself always has one (its local is written
/// on the edges into its block: [`Numbering::statement`]); its slot keeps its last user,
/// for [`Numbering::coalesce`].
#[inline]
pub(crate) fn mark_phi(f: &Function, incoming: crate::ir::Span, first: u32, last: &mut [u32]) {
    for &(v, _) in f.incoming(incoming) {
        if let Some(l) = last.get_mut(v.0.wrapping_sub(first) as usize) {
            *l = ESCAPES;
        }
    }
}

/// The shared locals of each type, oldest owner first: (ordinal, owner's definition).
/// Kept from function to function (`Scratch`).
#[derive(Default)]
pub(crate) struct Queues([Vec<(u32, u32)>; 5]);

/// The numbering, fed one statement at a time by `stackify::analyze` (blocks last to
/// first, each backwards).
pub(crate) struct Numbering<'a, 'm> {
    cx: &'a LowerCtx<'m>,
    f: &'a Function,
    first: u32,
    users: &'a [u32],
    /// Per value: its last user, or [`ESCAPES`] (see [`last_use`]).
    last: &'a [u32],
    /// Per instruction value: its [`Ordinal`], or [`Ordinal::NONE`]. Own locals count
    /// from the type's last one (the walk meets them last first).
    pub local_of: Vec<Ordinal>,
    /// Per block: it holds a phi with a local.
    pub phi_blocks: Vec<bool>,
    /// Own locals per type (i32 i64 f32 f64 v128).
    pub counts: [u32; 5],
    /// Shared locals per type.
    pub pool: [u32; 5],
    queues: Queues,
    /// Where each type's queue starts (the locals before it were moved to its back).
    head: [usize; 5],
    /// The current block and where it ends.
    block: usize,
    end: u32,
    /// Share locals at all.
    share: bool,
    /// With the allocation with liveness (`alloc.rs`): the values that got no shared
    /// local (phis, and values not block-local), as (block, instruction) in the walk's
    /// order (last first); the allocation colors them, the rest keep their shared local.
    pub cross: Option<Vec<(u32, u32)>>,
    /// Statements with a result met (the caller adds the inlined instructions and checks
    /// the sum against the value count).
    pub numbered: usize,
    /// The walk cannot vouch for its numbering; `number_locals_forward` redoes it.
    pub forward: bool,
}

impl<'a, 'm> Numbering<'a, 'm> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cx: &'a LowerCtx<'m>,
        f: &'a Function,
        users: &'a [u32],
        last: &'a [u32],
        local_of: Vec<Ordinal>,
        phi_blocks: Vec<bool>,
        mut queues: Queues,
        share: bool,
        cross: Option<Vec<(u32, u32)>>,
    ) -> Self {
        for q in &mut queues.0 {
            q.clear();
        }
        Numbering {
            cx,
            f,
            first: f.first_inst_value(),
            users,
            last,
            local_of,
            phi_blocks,
            counts: [0; 5],
            pool: [0; 5],
            queues,
            head: [0; 5],
            block: usize::MAX,
            end: 0,
            share,
            cross: cross.map(|mut c| {
                c.clear();
                c
            }),
            numbered: 0,
            forward: false,
        }
    }

    /// The queues, for the next function.
    pub fn into_queues(self) -> Queues {
        self.queues
    }

    /// Statement `j` of block `b`.
    #[inline]
    pub fn statement(&mut self, j: usize, b: usize) {
        let f = self.f;
        let inst = &f.insts[j];
        // Not an instruction value (or `ValueId::NONE`): wraps out of range.
        let n = inst.result.0.wrapping_sub(self.first) as usize;
        let Some(&u) = self.users.get(n) else {
            return;
        };
        if f.value_insts[n] != j as u32 {
            self.forward = true;
            return;
        }
        self.numbered += 1;
        if u == crate::lower::cfg::NONE {
            return;
        }
        let Some(s) = self.cx.slot(inst.ty) else {
            self.forward = true;
            return;
        };
        let phi = matches!(inst.kind, InstKind::Phi { .. });
        if phi {
            self.phi_blocks[b] = true;
            // Given its local already by `coalesce`.
            if self.local_of[n].is_some() {
                if let Some(c) = &mut self.cross {
                    c.push((b as u32, j as u32));
                }
                return;
            }
        } else if self.share {
            if b != self.block {
                self.block = b;
                self.end = f
                    .block_starts
                    .get(b + 1)
                    .map_or(f.insts.len() as u32, |&e| e);
            }
            // Its last use: in this block (`ESCAPES` is never below the end).
            let e = self.last[n];
            if e < self.end {
                self.share(n, s, e, j as u32);
                return;
            }
        }
        // A local of its own.
        let l = Ordinal::own(s, self.counts[s]);
        self.local_of[n] = l;
        self.counts[s] += 1;
        if let Some(c) = &mut self.cross {
            c.push((b as u32, j as u32));
        }
        if !phi && self.share {
            self.coalesce(b, j as u32, inst.result, l);
        }
    }

    /// Value `v`, defined at `d` in block `b` with local `l`, gives that local to a phi
    /// of `b` that takes `v` on the edge from `b` itself (a one-block loop) and whose
    /// every use is at or before `d` in `b`: the phi is dead once `v` is written, so the
    /// edge's copy `phi = v` goes away (`phi::edge_copies` skips a copy onto itself).
    /// The other edges into `b` write the local while `v` is dead (`b` defines `v` again
    /// before any use). Not in functions with setjmp (`share` is off there).
    #[inline]
    fn coalesce(&mut self, b: usize, d: u32, v: crate::ir::ValueId, l: Ordinal) {
        let f = self.f;
        let Some(&start) = f.block_starts.get(b) else {
            return;
        };
        for (i, inst) in f.insts.iter().enumerate().skip(start as usize) {
            let InstKind::Phi { incoming } = inst.kind else {
                return;
            };
            let p = inst.result.0.wrapping_sub(self.first) as usize;
            // A phi used by a phi has its slot at `ESCAPES`; an unused one keeps its own
            // definition there but has no local.
            let used = self
                .users
                .get(p)
                .is_some_and(|&u| u != crate::lower::cfg::NONE);
            if !used
                || self.last.get(p).is_none_or(|&e| e > d)
                || self.local_of[p].is_some()
                || f.value_insts.get(p) != Some(&(i as u32))
                || self.cx.slot(inst.ty) != self.cx.slot(f.insts[d as usize].ty)
            {
                continue;
            }
            if f.incoming(incoming)
                .iter()
                .any(|&(x, from)| x == v && from.index() == b)
            {
                self.local_of[p] = l;
                return;
            }
        }
    }

    /// Value `n` of type slot `s`, defined at `d` and last used at `e`, takes a shared
    /// local: the one whose owner is oldest if that owner is defined at or after `e`
    /// (then the two never hold a value at once), else a new one.
    #[inline]
    fn share(&mut self, n: usize, s: usize, e: u32, d: u32) {
        let q = &mut self.queues.0[s];
        let h = self.head[s];
        let p = match q.get(h) {
            Some(&(p, owner)) if owner >= e => {
                self.head[s] = h + 1;
                p
            }
            _ => {
                self.pool[s] += 1;
                self.pool[s] - 1
            }
        };
        q.push((p, d));
        self.local_of[n] = Ordinal::shared(s, p);
    }

    /// The local of a numbered value (`l`, not [`Ordinal::NONE`]), once the counts are known:
    /// `pool_base` is the index of the type's first shared local, `own_first` that of its
    /// own ordinal 0 (counting down when `step` is -1).
    #[inline]
    pub fn index(
        l: Ordinal,
        counts: &[u32; 5],
        pool_base: &[u32; 5],
        own_first: &[u32; 5],
        step: &[u32; 5],
    ) -> Local {
        let s = l.slot();
        let ord = l.0 & ORD_MASK;
        // Own ordinals are below `counts[s]`; shared ones (`ORD_MASK - p`) are not:
        // own + shared locals of a type never reach `1 << ORD_BITS` (checked by the
        // caller against the value count).
        Local(if ord >= counts[s] {
            pool_base[s] + (ORD_MASK - ord)
        } else {
            own_first[s].wrapping_add(ord.wrapping_mul(step[s]))
        })
    }
}
