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
//! The walk also sums each local's accesses (its values' operand counts and sets);
//! [`layout`] then gives the locals their indices, the most accessed first in functions
//! with more than 50 locals.
//!
//! Why this is sound: a block's code is emitted once, contiguously (the structurizer
//! emits a node's statements, then its terminator, which reads its operands before any
//! other block's code; phi copies on edges read phi sources and write phi locals, never
//! shared ones). The reads of a statement and of the instructions inlined into it all
//! happen while that statement is emitted, before its own `local.set`. So when a value's
//! last user is instruction `e`, a statement at `s >= e` (the statement emitting `e` is
//! the first statement at or after it) may write the same local: every read of the value
//! comes first.

use super::cfg::NONE;
use super::LowerCtx;
use crate::ir::{Function, InstKind};

/// Bits of the ordinal in `local_of` while locals are numbered (the type above them).
pub(crate) const ORD_BITS: u32 = 29;
const ORD_MASK: u32 = (1 << ORD_BITS) - 1;

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

/// Marks the values a phi touches as needing locals of their own: the phi itself (its
/// local is written on the edges into its block) and its incoming values (read on those
/// edges, after their block's statements).
#[inline]
pub(crate) fn mark_phi(
    f: &Function,
    result: u32,
    incoming: crate::ir::Span,
    first: u32,
    last: &mut [u32],
) {
    let mut escapes = |v: u32| {
        if let Some(l) = last.get_mut(v.wrapping_sub(first) as usize) {
            *l = ESCAPES;
        }
    };
    escapes(result);
    for &(v, _) in f.incoming(incoming) {
        escapes(v.0);
    }
}

/// The shared locals of each type, oldest owner first: (ordinal, owner's definition).
/// Kept from function to function (`Scratch`).
#[derive(Default)]
pub(crate) struct Queues([Vec<(u32, u32)>; 5]);

/// Per type, per local in the order the walk creates them (its ordinal): how often the
/// function's code will access it, as the walk counts it (see [`Numbering::statement`]);
/// [`layout`] turns each entry into the local's index. Kept from function to function
/// (`Scratch`).
pub(crate) type Weights = [Vec<u32>; 5];

/// The numbering, fed one statement at a time by `stackify::analyze` (blocks last to
/// first, each backwards).
pub(crate) struct Numbering<'a, 'm> {
    cx: &'a LowerCtx<'m>,
    f: &'a Function,
    first: u32,
    users: &'a [u32],
    /// Per value: its last user, or [`ESCAPES`] (see [`last_use`]).
    last: &'a [u32],
    /// Per value: how many operands name it (`stackify::count_uses`).
    uses: &'a [u16],
    /// Per instruction value: type slot and ordinal (`slot << ORD_BITS | ordinal`), or
    /// `NONE`. Ordinals count the type's locals in the order the walk creates them,
    /// shared or not.
    pub local_of: Vec<u32>,
    /// Per block: it holds a phi with a local.
    pub phi_blocks: Vec<bool>,
    /// Per type and ordinal: the local's access count (its length is the type's count).
    pub weights: Weights,
    queues: Queues,
    /// Where each type's queue starts (the locals before it were moved to its back).
    head: [usize; 5],
    /// The current block and where it ends.
    block: usize,
    end: u32,
    /// Share locals at all.
    share: bool,
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
        uses: &'a [u16],
        local_of: Vec<u32>,
        phi_blocks: Vec<bool>,
        (mut queues, mut weights): (Queues, Weights),
        share: bool,
    ) -> Self {
        for q in &mut queues.0 {
            q.clear();
        }
        for w in &mut weights {
            w.clear();
        }
        Numbering {
            cx,
            f,
            first: f.first_inst_value(),
            users,
            last,
            uses,
            local_of,
            phi_blocks,
            weights,
            queues,
            head: [0; 5],
            block: usize::MAX,
            end: 0,
            share,
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
        // Not an instruction value (or `NO_RESULT`): wraps out of range.
        let n = inst.result.wrapping_sub(self.first) as usize;
        let Some(&u) = self.users.get(n) else {
            return;
        };
        if f.value_insts[n] != j as u32 {
            self.forward = true;
            return;
        }
        self.numbered += 1;
        if u == NONE {
            return;
        }
        let Some(s) = self.cx.slot(inst.ty) else {
            self.forward = true;
            return;
        };
        // Its accesses: a `local.get` per operand naming it (`uses`, the same length as
        // `users`), and its `local.set` (a phi's are counted below).
        let mut weight = u32::from(self.uses[n]) + 1;
        if self.share {
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
                self.share(n, s, e, j as u32, weight);
                return;
            }
        }
        // A local of its own. A phi's local is set on each incoming edge (a copy that
        // would read the phi's own local is left out: counted anyway).
        if let InstKind::Phi { incoming } = inst.kind {
            self.phi_blocks[b] = true;
            weight = weight.wrapping_add(incoming.len).wrapping_sub(1);
        }
        let w = &mut self.weights[s];
        self.local_of[n] = (s as u32) << ORD_BITS | w.len() as u32;
        w.push(weight);
    }

    /// Value `n` of type slot `s`, defined at `d` and last used at `e`, takes a shared
    /// local: the one whose owner is oldest if that owner is defined at or after `e`
    /// (then the two never hold a value at once), else a new one.
    #[inline]
    fn share(&mut self, n: usize, s: usize, e: u32, d: u32, weight: u32) {
        let q = &mut self.queues.0[s];
        let w = &mut self.weights[s];
        let h = self.head[s];
        let p = match q.get(h) {
            Some(&(p, owner)) if owner >= e => {
                self.head[s] = h + 1;
                // `p` is an ordinal `weights[s]` holds (it was pushed when `p` was new).
                w[p as usize] = w[p as usize].wrapping_add(weight);
                p
            }
            _ => {
                w.push(weight);
                w.len() as u32 - 1
            }
        };
        q.push((p, d));
        self.local_of[n] = (s as u32) << ORD_BITS | p;
    }
}

/// wasmparser's validator keeps the types of a function's first 50 locals (parameters
/// included) in an array and binary-searches the declaration runs for any other
/// (`Locals::get_bsearch`, on every access).
pub(crate) const ARRAY_LOCALS: u32 = 50;
/// Local indices below 128 take one LEB128 byte, the others two (or more).
pub(crate) const ONE_BYTE_LOCALS: u32 = 128;
/// Access counts from here on rank together (the ranking only needs the heaviest 128,
/// and few locals are accessed this often).
const MAX_WEIGHT: usize = 31;
/// Declaration runs of a ranked layout: three tiers of up to five types.
const MAX_RUNS: usize = 15;

/// Where a function's locals go: its declaration runs and each type's scratch locals.
pub(crate) struct Layout {
    /// Local declarations (count, slot), in index order.
    pub decls: [(u32, usize); MAX_RUNS],
    pub n_decls: usize,
    /// The index of each type's first scratch local (they are contiguous).
    pub scratch: [u32; 5],
    /// Unranked: the index of each type's ordinal 0 (ordinals count up from it). Ranked:
    /// unused, the index of each local is in its `weights` entry.
    base: [u32; 5],
    pub ranked: bool,
}

impl Layout {
    fn push_run(&mut self, n: u32, s: usize) {
        if n == 0 {
            return;
        }
        match self.decls[..self.n_decls].last_mut() {
            Some((count, slot)) if *slot == s => *count += n,
            _ => {
                self.decls[self.n_decls] = (n, s);
                self.n_decls += 1;
            }
        }
    }

    /// Turns each numbered `local_of` entry (type slot and ordinal, else `NONE`) into
    /// its local index; `weights` as [`layout`] left them. Two loops, so that the
    /// ranked/unranked choice is not made per value.
    pub fn assign(&self, local_of: &mut [u32], weights: &Weights) {
        if self.ranked {
            for l in local_of.iter_mut() {
                if *l != NONE {
                    *l = weights[(*l >> ORD_BITS) as usize][(*l & ORD_MASK) as usize];
                }
            }
        } else {
            for l in local_of.iter_mut() {
                if *l != NONE {
                    *l = self.base[(*l >> ORD_BITS) as usize] + (*l & ORD_MASK);
                }
            }
        }
    }
}

/// Lays out a function's locals after its `np` parameters: per type `counts[s]` locals
/// (ordinals `0..counts[s]`), then `extras[s]` scratch locals, which must stay
/// contiguous. `None` when the indices would not fit a `u32`.
///
/// With `weights` (each local's access count, `weights[s].len() == counts[s]`) and more
/// than [`ARRAY_LOCALS`] locals in all, the locals are **ranked**: the most accessed go
/// below index 50 (their type found in wasmparser's array, not by a binary search) and
/// the next below 128 (one LEB128 byte). Only these two boundaries matter, so a counting
/// pass over capped weights replaces a sort: the heaviest locals fill tier 0 (below 50),
/// the next tier 1 (below 128), the rest tier 2 with the scratch locals; ties go by type,
/// then ordinal. Each tier declares its types in a run each, tier 1 in the reverse type
/// order, so that the last run of a tier and the first of the next merge when they share
/// a type (a function of i32 locals only keeps a single run). Each local's index then
/// replaces its weight in `weights`. Functions with fewer locals keep one run per type,
/// in ordinal order (every index is below 50 anyway).
///
/// The weights are static counts, not weighted by loop depth: what this saves is work per
/// access in the validator and bytes in the output, both paid once per access in the
/// code, however often it runs (engines allocate registers whatever the index).
pub(crate) fn layout(
    np: u32,
    counts: &[u32; 5],
    extras: &[u32; 5],
    weights: Option<&mut Weights>,
) -> Option<Layout> {
    let mut lay = Layout {
        decls: [(0, 0); MAX_RUNS],
        n_decls: 0,
        scratch: [0; 5],
        base: [0; 5],
        ranked: false,
    };
    // Scratch locals come last either way: ranking pays only when the values' locals
    // alone pass index 50.
    let mut ranked = np;
    for &n in counts {
        ranked = ranked.checked_add(n)?;
    }
    let mut all = ranked;
    for &n in extras {
        all = all.checked_add(n)?;
    }
    let mut next = np;
    let Some(weights) = weights.filter(|_| ranked > ARRAY_LOCALS) else {
        for s in 0..5 {
            lay.base[s] = next;
            lay.scratch[s] = next + counts[s];
            lay.push_run(counts[s] + extras[s], s);
            next += counts[s] + extras[s];
        }
        return Some(lay);
    };
    lay.ranked = true;
    // Per type, how many locals of each capped weight.
    let mut hist = [[0u32; MAX_WEIGHT + 1]; 5];
    let mut all_hist = [0u32; MAX_WEIGHT + 1];
    for (ws, h) in weights.iter().zip(hist.iter_mut()) {
        if ws.is_empty() {
            continue;
        }
        for &w in ws {
            h[(w as usize).min(MAX_WEIGHT)] += 1;
        }
        for (a, &n) in all_hist.iter_mut().zip(h.iter()) {
            *a += n;
        }
    }
    // The bucket a tier ends at: the locals of every heavier bucket fit in its `room`.
    // The boundary bucket itself goes to the next tier, whose first locals fill the
    // room left (so each tier is a range of weights, and a local's tier a table lookup).
    let cut = |room: u32| {
        let mut above = 0;
        for b in (0..=MAX_WEIGHT).rev() {
            above += all_hist[b];
            if above > room {
                return b;
            }
        }
        0
    };
    let c0 = cut(ARRAY_LOCALS.saturating_sub(np));
    let c1 = cut(ONE_BYTE_LOCALS.saturating_sub(np)).min(c0);
    let mut tier = [2u8; MAX_WEIGHT + 1];
    tier[c1 + 1..].fill(1);
    tier[c0 + 1..].fill(0);
    // The runs: tier 0 in type order, tier 1 reversed, tier 2 in type order with each
    // type's scratch locals after its ranked ones.
    const RUNS: [(usize, usize); 15] = [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 4),
        (1, 3),
        (1, 2),
        (1, 1),
        (1, 0),
        (2, 0),
        (2, 1),
        (2, 2),
        (2, 3),
        (2, 4),
    ];
    let mut first = [[0u32; 3]; 5];
    for (t, s) in RUNS {
        if counts[s] + extras[s] == 0 {
            continue;
        }
        let h = &hist[s];
        let mut n = match t {
            0 => h[c0 + 1..].iter().sum(),
            1 => h[c1 + 1..=c0].iter().sum(),
            _ => h[..=c1].iter().sum::<u32>(),
        };
        first[s][t] = next;
        next += n;
        if t == 2 {
            lay.scratch[s] = next;
            next += extras[s];
            n += extras[s];
        }
        lay.push_run(n, s);
    }
    // Each local's index replaces its weight.
    for (ws, first) in weights.iter_mut().zip(first.iter_mut()) {
        for w in ws.iter_mut() {
            let at = &mut first[usize::from(tier[(*w as usize).min(MAX_WEIGHT)]).min(2)];
            *w = *at;
            *at += 1;
        }
    }
    Some(lay)
}
