//! Wasm locals of instruction values, numbered in stackify's backward walk.
//!
//! A value needs a local when it is a phi or a statement with uses (inlined values live on
//! the stack). Values that are **block-local** (not a phi, not used by a phi, every use in
//! the block of the definition) share locals: within a block a linear scan, backwards,
//! hands out locals from a per-type free list. A value becomes live at its last use and
//! dies at its definition, where its local goes back to the free list for the values
//! defined above it. Every other value (phis, values used by phis or in other blocks)
//! gets a local of its own, as do all values of a function that calls setjmp (a longjmp
//! re-enters at the setjmp call, and every local must still hold what it held there).
//!
//! Why this is sound: a block's code is emitted once, contiguously (the structurizer
//! emits a node's statements, then its terminator; other blocks' code comes only after
//! the terminator has read its operands; phi copies on edges read phi sources and write
//! phi locals, never shared ones). The reads of a statement and of the instructions
//! inlined into it (the contiguous range between the previous statement and it) all
//! happen while that statement is emitted, before its own `local.set`. So a value's uses
//! are counted at the statement that emits them, and a local freed at a definition may be
//! the one the same statement reads (read first, then written).
//!
//! A use met after the definition of a shared value was passed (a use in a block laid
//! out before the definition's block, which a valid function allows when that block is
//! still dominated) cannot be fitted into the scan: the walk gives up
//! ([`Numbering::forward`]) and the caller numbers every value with a local of its own.

use super::LowerCtx;
use crate::ir::{Function, InstKind, Span, ValueId};

/// Bits of the ordinal in `local_of` while locals are numbered (the type above them).
pub(crate) const ORD_BITS: u32 = 29;

/// Per instruction value, its part in the scan (`Numbering::state`).
/// Untouched so far: block-local unless found otherwise.
pub(crate) const UNSEEN: u8 = 0;
/// Needs a local of its own: a phi, used by a phi, or used outside its block.
pub(crate) const OWN: u8 = 1;
/// Holds a shared local, live (its last use passed, its definition not yet).
const LIVE: u8 = 2;
/// Holds a shared local, definition passed (the local is free again above it).
pub(crate) const SHARED: u8 = 3;

/// [`Numbering`]'s free lists, kept from function to function (`Scratch`).
#[derive(Default)]
pub(crate) struct FreeLists([Vec<u32>; 5]);

/// Marks the values a phi touches as needing locals of their own: the phi itself (its
/// local is written on the edges into its block) and its incoming values (read on those
/// edges, after their block's statements). Called from `FnLower::new`'s walk over the
/// instructions, for phis only.
#[inline]
pub(crate) fn mark_phi(f: &Function, result: u32, incoming: Span, first: u32, state: &mut [u8]) {
    let mut own = |v: u32| {
        if let Some(s) = state.get_mut(v.wrapping_sub(first) as usize) {
            *s = OWN;
        }
    };
    own(result);
    for &(v, _) in f.incoming(incoming) {
        own(v.0);
    }
}

/// The numbering, fed one statement at a time by `stackify::analyze` (blocks last to
/// first, each backwards).
pub(crate) struct Numbering<'a, 'm> {
    pub cx: &'a LowerCtx<'m>,
    pub f: &'a Function,
    pub first: u32,
    pub users: &'a [u32],
    /// Per instruction value: type slot and ordinal (`slot << ORD_BITS | ordinal`), or
    /// `NONE`. Shared locals count up from 0 per type; own locals count down (their
    /// ordinal is from the type's last own local, as the walk meets them last first).
    pub local_of: Vec<u32>,
    /// Per instruction value: [`UNSEEN`], [`OWN`], `LIVE` or [`SHARED`].
    pub state: Vec<u8>,
    /// Per block: it holds a phi with a local.
    pub phi_blocks: Vec<bool>,
    /// Own locals per type (i32 i64 f32 f64 v128).
    pub counts: [u32; 5],
    /// Shared locals per type: the most any block needed at once.
    pub pool: [u32; 5],
    /// Shared locals handed out in the current block (the free lists hold those free).
    fresh: [u32; 5],
    free: FreeLists,
    block: usize,
    /// The current block's first instruction.
    start: usize,
    /// Share locals at all (false in functions that call setjmp).
    share: bool,
    /// Statements with a result plus inlined instructions met (checked against the
    /// value count by the caller).
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
        local_of: Vec<u32>,
        state: Vec<u8>,
        phi_blocks: Vec<bool>,
        mut free: FreeLists,
        share: bool,
    ) -> Self {
        for l in &mut free.0 {
            l.clear();
        }
        Numbering {
            cx,
            f,
            first: f.first_inst_value(),
            users,
            local_of,
            state,
            phi_blocks,
            counts: [0; 5],
            pool: [0; 5],
            fresh: [0; 5],
            free,
            block: usize::MAX,
            start: 0,
            share,
            numbered: 0,
            forward: false,
        }
    }

    /// The free lists, for the next function.
    pub fn into_free_lists(self) -> FreeLists {
        self.free
    }

    /// Statement `j` of block `b`; `group..j` are the instructions inlined into it.
    /// Its definition first (the local it frees may serve its own operands: they are read
    /// before it is written), then the uses of the whole group.
    #[inline]
    pub fn statement(&mut self, j: usize, group: usize, b: usize) {
        if b != self.block {
            // Every shared local is free at a block's end (nothing shared lives across
            // blocks); starting afresh also keeps bad input from leaking into the next.
            self.block = b;
            self.start = self.f.block_starts[b] as usize;
            self.fresh = [0; 5];
            for l in &mut self.free.0 {
                l.clear();
            }
        }
        let f = self.f;
        let inst = &f.insts[j];
        // Not an instruction value (or `NO_RESULT`): wraps out of range.
        let n = inst.result.wrapping_sub(self.first) as usize;
        if let Some(&u) = self.users.get(n) {
            if f.value_insts[n] != j as u32 {
                self.forward = true;
                return;
            }
            self.numbered += 1;
            if u != crate::lower::cfg::NONE {
                self.define(n, j, b);
            }
        }
        if !self.share {
            return;
        }
        let start = self.start;
        for i in group..=j {
            let kind = &f.insts[i].kind;
            // A phi is alone in its group; its inputs are read on edges (all `OWN`).
            if matches!(kind, InstKind::Phi { .. }) {
                continue;
            }
            kind.for_each_operand(f, |v| self.use_at(v, start, group));
        }
    }

    /// The definition of value `n` (with uses) at statement `j`.
    #[inline]
    fn define(&mut self, n: usize, j: usize, b: usize) {
        let inst = &self.f.insts[j];
        let Some(s) = self.cx.slot(inst.ty) else {
            self.forward = true;
            return;
        };
        if self.state[n] == LIVE {
            // Above its definition the shared local is free again.
            self.state[n] = SHARED;
            let p = self.local_of[n] & ((1 << ORD_BITS) - 1);
            self.free.0[s].push(p);
            return;
        }
        // A local of its own: phis, values used by phis or in other blocks, every value
        // when nothing is shared, and values whose uses all lie in earlier blocks (the
        // walk met none yet).
        self.local_of[n] = (s as u32) << ORD_BITS | self.counts[s];
        self.counts[s] += 1;
        if matches!(inst.kind, InstKind::Phi { .. }) {
            self.phi_blocks[b] = true;
        }
    }

    /// A use of `v` by the statement whose group starts at `group`, in the block
    /// starting at `start`.
    #[inline]
    fn use_at(&mut self, v: ValueId, start: usize, group: usize) {
        // Not an instruction value: wraps out of range.
        let m = v.0.wrapping_sub(self.first) as usize;
        let Some(&l) = self.local_of.get(m) else {
            return;
        };
        let st = self.state[m];
        if l != crate::lower::cfg::NONE {
            // Live already, or a local of its own. A shared value whose definition was
            // passed is used above it: not a block-local value after all.
            if st == SHARED {
                self.forward = true;
            }
            return;
        }
        if st == OWN {
            return;
        }
        let f = self.f;
        let Some(&d) = f.value_insts.get(m) else {
            return;
        };
        let d = d as usize;
        if d < start {
            // Defined in an earlier block: it gets its own local there.
            self.state[m] = OWN;
            return;
        }
        if d >= group {
            // Inlined into this group (no local), or not defined above this use (its
            // definition decided already).
            return;
        }
        // Defined above in this block, used here last: live from here up to there.
        let Some(s) = self.cx.slot(f.insts[d].ty) else {
            return; // its definition reports the type (`forward`)
        };
        let p = match self.free.0[s].pop() {
            Some(p) => p,
            None => {
                let p = self.fresh[s];
                self.fresh[s] += 1;
                self.pool[s] = self.pool[s].max(self.fresh[s]);
                p
            }
        };
        self.local_of[m] = (s as u32) << ORD_BITS | p;
        self.state[m] = LIVE;
    }
}
