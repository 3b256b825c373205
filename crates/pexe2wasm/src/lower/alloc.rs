//! Local allocation with liveness across blocks: cross-block values (phis, values used by
//! phis or outside their block) whose lives never meet share a wasm local, a phi takes
//! the local of an incoming value when it can (its copy on that edge goes away), and the
//! busiest of these locals get the lowest indices after the shared pool (an index below
//! 128 is one LEB128 byte).
//!
//! An option (`Locals::Liveness`, `pexe2wasm convert --small-code`), off by default: it
//! makes the code section 7-14% smaller but conversion 12-13% slower (decision 0020).
//!
//! Runs after placement, the numbering (`locals.rs`) and the CFG, in functions without
//! setjmp (a longjmp re-enters with the locals as they were: every value keeps a local of
//! its own there), and only where it can shrink the code ([`worth_it`]): in a function
//! with phis, or with locals past index 127. Block-local values keep the locals the numbering shared between them
//! (its pool, numbered first); the numbering lists the others as it meets them
//! (`Numbering::cross`), and only they are colored here, in locals after the pool: the
//! two pools never share, so a colored value never meets a pool value in one local. The
//! use walk (`analysis::scan_uses`) gathers what this needs from the operands, since it
//! visits them all anyway: each value's accesses, the uses by instructions outside the
//! value's block and every phi operand (with the edge's source block), and the phis.
//!
//! 1. **Cross-block values**: phis, values used by phis, values used after the end of
//!    their block (`locals::last_use`'s slot at or past it): the values the numbering
//!    gave no pool local. They get dense numbers and are listed per block, in order.
//! 2. **Uses**: the reachable predecessors of each block and the uses of cross-block
//!    values in reachable blocks (from the use walk)
//!    grouped by value (a counting sort). A value fed to phis remembers one of them for
//!    step 4: one fed on a back edge (whose copy runs once per iteration) if any, else
//!    the last in layout.
//! 3. **Liveness**, sparse, value by value: a use by a non-phi instruction outside the
//!    definition's block makes the value live-in there; a phi's use on the edge from `P`
//!    makes it live-out of `P` (and live-in there unless `P` defines it); a block it is
//!    live-in at has it live-out of every predecessor, and live-in there too unless that
//!    defines it. The walk stops at blocks already marked for the value (per-block stamps,
//!    nothing to clear between values), so its cost follows the live range. It yields
//!    per block the values live-in there, and the deaths: in each block with uses, after
//!    the last one unless the value is live-out; in the definition's block, if the value
//!    is not live-out of it, after its last use there (its last user) or its definition. Unreachable blocks are left out (their uses are not
//!    recorded, predecessors are the reachable ones): their code is never emitted, and
//!    edges from them carry no copies. A value found live-in at more than
//!    [`MAX_LIVE_BLOCKS`] blocks stops the walk and gets a local of its own (it takes no
//!    part in step 4, like a value of an unreachable block): long lives made up most of
//!    the cost, and such a value meets most others anyway.
//! 4. **Assignment** in reverse postorder (a value's definition comes before its uses in
//!    every block that sees it live): at a block's start the colors of its live-in values
//!    are busy; its phis take a color then (preferably an incoming value's); then each
//!    cross-block definition frees the colors of the values that died at or before it and
//!    takes the lowest free color, preferring that of the phi it feeds (or, before that phi has one,
//!    that of another of the phi's incoming values). A statement reads its operands
//!    before it sets its own local, so a value dying at a statement may pass its local to
//!    that statement's result (as in `locals.rs`). In SSA form two values interfere when
//!    one is live where the other is defined; the colors busy at a definition are exactly
//!    those of the values live there, so values that interfere never share a color.
//! 5. **Ordering**: per type, the colors sorted by their accesses (gets and sets), the
//!    busiest first (after the pool's locals).
//!
//! Why phi copies stay right: the copies of an edge are a parallel copy placed on the
//! edge itself (`phi.rs`); a phi's color is not busy at its block's start, so no value
//! live into the block holds it, and values live only along the predecessor's other
//! edges may hold it (those paths never run the copy). Two phis of one block never share
//! (their colors are taken while both are busy), and deaths are only freed at statements,
//! after all of a block's phis have theirs.
//!
//! Irreducible CFGs need nothing special: the walk back from the uses follows any graph
//! and ends (each block is marked at most once per value); liveness is computed on the
//! function's own blocks and edges, which is right because the dispatch nodes (`cfg.rs`)
//! only read and write the label local; and a reverse postorder of the graph with
//! dispatch nodes still puts every dominator first.

use super::cfg::NONE;
use super::locals::{Ordinal, ESCAPES};
use crate::ir::{Function, InstKind};

/// A value found live-in at more blocks than this keeps a local of its own (see
/// [`PRIVATE`]): the walk and the busy colors at block starts then cost at most this much
/// per value. Values live that long meet most others anyway. (On iguana, 8: 1,062M
/// instructions, 16: 1,075M, 32: 1,091M, no limit: 1,199M; the code gets 1-4% bigger
/// than without a limit, docs/PERFORMANCE.md.)
const MAX_LIVE_BLOCKS: usize = 16;

/// Most scratch and fixed-role locals `LocalLayout::assign` adds after the allocated
/// ones (i32: 4 scratch, label, saved stack pointer, frame base, setjmp id; i64: 3;
/// f32, f64, v128: 2 each).
const MAX_EXTRAS: u64 = 17;

/// In `pref`: the phi is fed on a retreating edge (a loop's back edge), whose copy runs
/// once per iteration; such a phi is preferred to one fed on a forward edge.
const BACK: u32 = 1 << 31;

/// In a use's instruction (`AllocScratch::ev`): a phi's use on an edge; the rest is the
/// phi's instruction (`FnAnalysis::compute` runs the allocation only below it).
pub(crate) const PHI_USE: u32 = 1 << 31;

/// The color of a value with a local of its own (numbered after the shared ones).
const PRIVATE: u32 = NONE - 1;

/// Whether the allocation can make `f`'s code smaller: without phis there are no copies
/// to remove, and when every local's index stays below 128 anyway (one LEB128 byte) the
/// numbering's locals give the same code bytes. Such functions keep the numbering.
pub(crate) fn worth_it(f: &Function, pool: &[u32; 5], counts: &[u32; 5], s: &AllocScratch) -> bool {
    let total: u64 = pool.iter().chain(counts).map(|&c| u64::from(c)).sum();
    !s.phis.is_empty() || f.num_params as u64 + total + MAX_EXTRAS > 128
}

/// Working memory, kept from function to function (`Scratch`).
#[derive(Default)]
pub(crate) struct AllocScratch {
    /// The values the numbering gave no shared local, (block, instruction), last first
    /// (`locals::Numbering::cross`).
    pub(crate) cross: Vec<(u32, u32)>,
    /// Per value: its cross-block number, or [`NONE`].
    gid: Vec<u32>,
    /// Per cross-block number: the value, its block and its instruction.
    gval: Vec<u32>,
    gdef: Vec<(u32, u32)>,
    /// The cross-block values in instruction order: (instruction, value); block `b`'s
    /// are `defs[def_start[b]..def_start[b + 1]]`.
    defs: Vec<(u32, u32)>,
    def_start: Vec<u32>,
    /// Per value: gets and sets of it (the gets counted by `analysis::scan_uses`).
    pub(crate) count: Vec<u32>,
    /// The phis, (instruction, block), listed by `scan_uses`.
    pub(crate) phis: Vec<(u32, u32)>,
    /// Per value: a phi it feeds ([`NONE`] if none), with [`BACK`] if on a back edge.
    pref: Vec<u32>,
    /// Uses by instructions outside the value's block, in instruction order, listed by
    /// `scan_uses`: (value, block, instruction); for a phi's use on the edge from that
    /// block (listed for every phi operand) [`PHI_USE`] and the phi's instruction.
    pub(crate) ev: Vec<(u32, u32, u32)>,
    /// The same uses grouped by value (`by_start`), in the walk's order within a value:
    /// (block, instruction).
    by: Vec<(u32, u32)>,
    by_start: Vec<u32>,
    /// Per block: the head of its list in `preds` of (predecessor, next), the reachable
    /// predecessors, each once.
    pred_head: Vec<u32>,
    preds: Vec<(u32, u32)>,
    /// Per block: the last block whose successors listed it.
    seen: Vec<u32>,
    /// Per block: the last cross-block number found live-in / live-out there (stamps:
    /// nothing to clear from one value to the next).
    in_at: Vec<u32>,
    out_at: Vec<u32>,
    stack: Vec<u32>,
    /// Values with a local of their own ([`PRIVATE`]).
    private: Vec<u32>,
    /// Per block: the head of its list in `live_in` of (value, next).
    live_head: Vec<u32>,
    live_in: Vec<(u32, u32)>,
    /// Per instruction: the head of its list in `deaths` of (value, next), the values
    /// whose locals are free again from that instruction on.
    death_head: Vec<u32>,
    deaths: Vec<(u32, u32)>,
    /// Reachable blocks in reverse postorder.
    order: Vec<u32>,
    /// Per value: its color (a local of its type), [`NONE`] before it has one.
    color: Vec<u32>,
    /// Busy colors per type.
    busy: [Vec<u64>; 5],
    /// Accesses per color, then the colors' ranks.
    weight: [Vec<(u32, u32)>; 5],
    rank: [Vec<u32>; 5],
}

/// Instructions `start..end` of block `b` (empty if the block table is inconsistent).
#[inline]
fn range(f: &Function, b: usize) -> (usize, usize) {
    let n = f.insts.len();
    let start = f.block_starts.get(b).map_or(n, |&s| (s as usize).min(n));
    let end = f
        .block_starts
        .get(b + 1)
        .map_or(n, |&e| (e as usize).min(n));
    (start, end.max(start))
}

#[inline]
fn set(v: &mut [u64], i: usize) {
    v[i >> 6] |= 1 << (i & 63);
}
#[inline]
fn clear(v: &mut [u64], i: usize) {
    v[i >> 6] &= !(1 << (i & 63));
}

/// Pushes `item` on the list whose head is `*head` (lists of (item, next) in `list`).
#[inline]
fn push_list(head: &mut u32, list: &mut Vec<(u32, u32)>, item: u32) {
    list.push((item, *head));
    *head = (list.len() - 1) as u32;
}

/// The items of the list that starts at `head` (see [`push_list`]), last pushed first.
#[inline]
fn list_items(head: u32, list: &[(u32, u32)]) -> impl Iterator<Item = usize> + '_ {
    let mut k = head;
    std::iter::from_fn(move || {
        let &(item, next) = list.get(k as usize)?;
        k = next;
        Some(item as usize)
    })
}

/// Allocates the locals of the cross-block values of `f` (`s.cross`). `local_of` is the
/// numbering (per value: its [`Ordinal`], or [`Ordinal::NONE`] without a local; the
/// pool's locals, `pool` per type, left as they are); `last` each value's last user
/// (`locals::last_use`); `rpo_index` the CFG's reverse-postorder positions (blocks
/// first). On success the cross-block values' `local_of` hold their own ordinal, a rank
/// (ranks from 0 per type, busiest first) and the result is the number of such locals
/// per type; `None` (nothing changed) when the listed values are not in instruction
/// order. The steps of the module's documentation, one function each.
pub(crate) fn allocate(
    f: &Function,
    last: &[u32],
    rpo_index: &[u32],
    pool: [u32; 5],
    local_of: &mut [Ordinal],
    s: &mut AllocScratch,
) -> Option<[u32; 5]> {
    let fx = Fx {
        f,
        first: f.first_inst_value(),
        nb: f.block_starts.len(),
        rpo_index,
    };
    // Taken out of the scratch for the run: steps read them while they fill others.
    let mut gid = std::mem::take(&mut s.gid);
    let mut count = std::mem::take(&mut s.count);
    let mut pref = std::mem::take(&mut s.pref);
    let colors = cross_block_values(&fx, local_of, &mut gid, s).map(|()| {
        uses(&fx, local_of, &gid, &mut count, &mut pref, s);
        liveness(&fx, last, s);
        reverse_postorder(&fx, s);
        let colors = assign(&fx, local_of, &pref, s);
        number(f, pool, local_of, &count, colors, s);
        colors
    });
    s.gid = gid;
    s.count = count;
    s.pref = pref;
    colors
}

/// What every step reads of the function.
struct Fx<'f> {
    f: &'f Function,
    /// The first instruction value.
    first: u32,
    /// The number of blocks.
    nb: usize,
    rpo_index: &'f [u32],
}

impl Fx<'_> {
    /// The value defined by instruction `j` with a local, if any.
    #[inline]
    fn value_at(&self, local_of: &[Ordinal], j: usize) -> Option<usize> {
        let n = self.f.insts[j].result.0.wrapping_sub(self.first) as usize;
        (local_of.get(n).is_some_and(|l| l.is_some())
            && self.f.value_insts.get(n) == Some(&(j as u32)))
        .then_some(n)
    }

    #[inline]
    fn reachable(&self, b: usize) -> bool {
        b < self.nb && self.rpo_index.get(b).is_some_and(|&r| r != NONE)
    }
}

/// Step 1: the cross-block values (those the numbering gave no shared local, listed by
/// it last first) in order, per block (`defs`, `def_start`), numbered (`gid`, `gval`,
/// `gdef`). `None` when they are not in instruction order.
fn cross_block_values(
    fx: &Fx<'_>,
    local_of: &[Ordinal],
    gid: &mut Vec<u32>,
    s: &mut AllocScratch,
) -> Option<()> {
    let (f, first, nb) = (fx.f, fx.first, fx.nb);
    gid.clear();
    gid.resize(local_of.len(), NONE);
    s.gval.clear();
    s.gdef.clear();
    let defs = &mut s.defs;
    defs.clear();
    s.def_start.clear();
    s.def_start.push(0);
    let mut prev = None;
    for &(b, j) in s.cross.iter().rev() {
        let (bu, ju) = (b as usize, j as usize);
        let n = f.insts.get(ju)?.result.0.wrapping_sub(first) as usize;
        let (start, end) = range(f, bu);
        if bu >= nb
            || ju < start
            || ju >= end
            || prev.is_some_and(|p| p >= j)
            || local_of.get(n).is_none_or(|l| l.is_none())
            || f.value_insts.get(n) != Some(&j)
        {
            return None;
        }
        prev = Some(j);
        while s.def_start.len() <= bu {
            s.def_start.push(defs.len() as u32);
        }
        defs.push((j, n as u32));
        gid[n] = s.gval.len() as u32;
        s.gval.push(n as u32);
        s.gdef.push((b, j));
    }
    while s.def_start.len() <= nb {
        s.def_start.push(defs.len() as u32);
    }
    Some(())
}

/// Step 2: predecessors, the phis' preferences (`pref`), the sets (`count`; the gets
/// come from `scan_uses`), and the uses of cross-block values grouped by value (`by`,
/// `by_start`).
fn uses(
    fx: &Fx<'_>,
    local_of: &[Ordinal],
    gid: &[u32],
    count: &mut Vec<u32>,
    pref: &mut Vec<u32>,
    s: &mut AllocScratch,
) {
    let (f, first, nb, rpo_index) = (fx.f, fx.first, fx.nb, fx.rpo_index);
    let nv = local_of.len();
    let g = s.gval.len();
    if count.len() != nv {
        count.clear();
        count.resize(nv, 0);
    }
    pref.clear();
    pref.resize(nv, NONE);
    s.pred_head.clear();
    s.pred_head.resize(nb, NONE);
    s.preds.clear();
    s.seen.clear();
    s.seen.resize(nb, NONE);
    s.death_head.clear();
    s.death_head.resize(f.insts.len(), NONE);
    s.deaths.clear();
    for &(j, b) in &s.phis {
        let (j, b) = (j as usize, b as usize);
        let InstKind::Phi { incoming } = f.insts[j].kind else {
            continue;
        };
        let Some(p) = fx.value_at(local_of, j) else {
            continue;
        };
        let here = rpo_index.get(b).copied().unwrap_or(NONE);
        for &(x, from) in f.incoming(incoming) {
            let m = x.0.wrapping_sub(first) as usize;
            if let Some(pm) = pref.get_mut(m) {
                // A back edge's phi wins; among the others, the last one.
                let back = rpo_index.get(from.index()).is_some_and(|&r| r >= here);
                if back {
                    *pm = p as u32 | BACK;
                } else if *pm == NONE || *pm & BACK == 0 {
                    *pm = p as u32;
                }
            }
        }
        count[p] += f.incoming(incoming).len() as u32;
    }
    for b in 0..nb {
        let (start, end) = range(f, b);
        let live = fx.reachable(b);
        if live && start < end {
            let (pred_head, preds, seen) = (&mut s.pred_head, &mut s.preds, &mut s.seen);
            f.insts[end - 1].kind.for_each_successor(|t| {
                if let Some(x) = seen.get_mut(t.index()).filter(|x| **x != b as u32) {
                    *x = b as u32;
                    push_list(&mut pred_head[t.index()], preds, b as u32);
                }
            });
        }
        for &(j, n) in &s.defs[s.def_start[b] as usize..s.def_start[b + 1] as usize] {
            if !matches!(f.insts[j as usize].kind, InstKind::Phi { .. }) {
                count[n as usize] += 1;
            }
        }
    }
    // The uses of cross-block values in reachable blocks, counted per value.
    let by_start = &mut s.by_start;
    by_start.clear();
    by_start.resize(g + 2, 0);
    // (A phi without a local, i.e. unused, reads nothing.)
    let counted = |n: u32, b: u32, j: u32| -> Option<u32> {
        let x = *gid.get(n as usize)?;
        (x != NONE
            && fx.reachable(b as usize)
            && (j & PHI_USE == 0 || fx.value_at(local_of, (j & !PHI_USE) as usize).is_some()))
        .then_some(x)
    };
    for &(n, b, j) in s.ev.iter() {
        if let Some(x) = counted(n, b, j) {
            by_start[x as usize + 2] += 1;
        }
    }
    // Group the uses by value (a counting sort: the walk's order stays within a value).
    for x in 2..g + 2 {
        by_start[x] += by_start[x - 1];
    }
    let by = &mut s.by;
    by.clear();
    by.resize(by_start[g + 1] as usize, (0, 0));
    for &(n, b, j) in s.ev.iter() {
        if let Some(x) = counted(n, b, j) {
            let k = &mut by_start[x as usize + 1];
            by[*k as usize] = (b, if j & PHI_USE != 0 { NONE } else { j });
            *k += 1;
        }
    }
}

/// Step 3: liveness, value by value (`live_head`, `live_in`), the deaths of cross-block
/// values, and the values live too long for the walk (`private`).
fn liveness(fx: &Fx<'_>, last: &[u32], s: &mut AllocScratch) {
    let (in_at, out_at, stack) = (&mut s.in_at, &mut s.out_at, &mut s.stack);
    let (by, by_start) = (&s.by, &s.by_start);
    in_at.clear();
    in_at.resize(fx.nb, NONE);
    out_at.clear();
    out_at.resize(fx.nb, NONE);
    s.live_head.clear();
    s.live_head.resize(fx.nb, NONE);
    s.live_in.clear();
    s.private.clear();
    'values: for x in 0..s.gval.len() {
        let stamp = x as u32;
        let (d, dj) = s.gdef[x];
        let n = s.gval[x];
        let uses = &by[by_start[x] as usize..by_start[x + 1] as usize];
        // A use outside the definition's block is live-in there; a phi's use on an edge
        // is live-out of the edge's source (and live-in there unless it defines it).
        stack.clear();
        for &(b, j) in uses {
            if j == NONE {
                out_at[b as usize] = stamp;
            }
            if b != d && in_at[b as usize] != stamp {
                in_at[b as usize] = stamp;
                stack.push(b);
            }
        }
        // Back to the definition: a block the value is live-in at has it live-out of
        // every predecessor, and live-in there too unless that defines it.
        let mut budget = MAX_LIVE_BLOCKS;
        while let Some(b) = stack.pop() {
            if budget == 0 {
                s.private.push(n);
                continue 'values;
            }
            budget -= 1;
            push_list(&mut s.live_head[b as usize], &mut s.live_in, n);
            for p in list_items(s.pred_head[b as usize], &s.preds) {
                out_at[p] = stamp;
                if p as u32 != d && in_at[p] != stamp {
                    in_at[p] = stamp;
                    stack.push(p as u32);
                }
            }
        }
        // Deaths: in each block with uses (by non-phi instructions, met block by block
        // in order), at the last one unless the value is live-out; in the definition's
        // block without uses, after the definition.
        let mut used_in_def = false;
        let mut k = 0;
        while k < uses.len() {
            let (b, mut j) = uses[k];
            k += 1;
            if j == NONE {
                continue;
            }
            while let Some(&(b2, j2)) = uses.get(k) {
                if b2 != b && j2 != NONE {
                    break;
                }
                if j2 != NONE {
                    j = j2;
                }
                k += 1;
            }
            used_in_def |= b == d;
            if out_at[b as usize] != stamp {
                push_list(&mut s.death_head[j as usize], &mut s.deaths, n);
            }
        }
        // Not live-out of its block (`scan_uses` recorded no use there): it dies at its
        // last use in the block, or after its definition if it has none. A value whose
        // last user lies elsewhere but that is still not live-out (uses only in
        // unreachable blocks, or input the verifier rejects) keeps a local of its own.
        if !used_in_def && out_at[d as usize] != stamp {
            let end_d = range(fx.f, d as usize).1;
            let e = last.get(n as usize).map_or(ESCAPES, |&e| e) as usize;
            if e >= end_d || e < dj as usize {
                s.private.push(n);
            } else if e > dj as usize {
                push_list(&mut s.death_head[e], &mut s.deaths, n);
            } else if (dj as usize + 1) < end_d {
                push_list(&mut s.death_head[dj as usize + 1], &mut s.deaths, n);
            }
        }
    }
}

/// The reachable blocks in reverse postorder (`order`).
fn reverse_postorder(fx: &Fx<'_>, s: &mut AllocScratch) {
    let order = &mut s.order;
    order.clear();
    order.resize(fx.rpo_index.len(), NONE);
    for (b, &r) in fx.rpo_index.iter().enumerate().take(fx.nb) {
        if let Some(o) = order.get_mut(r as usize) {
            *o = b as u32;
        }
    }
    order.retain(|&b| b != NONE);
}

/// Step 4: a color per value (`color`); the number of colors per type.
fn assign(fx: &Fx<'_>, local_of: &[Ordinal], pref: &[u32], s: &mut AllocScratch) -> [u32; 5] {
    let (f, first) = (fx.f, fx.first);
    let color = &mut s.color;
    color.clear();
    color.resize(local_of.len(), NONE);
    for &n in &s.private {
        color[n as usize] = PRIVATE;
    }
    let busy = &mut s.busy;
    let mut colors = [0u32; 5];
    let (deaths, death_head) = (&s.deaths, &s.death_head);
    let (live_in, live_head) = (&s.live_in, &s.live_head);
    let (defs, def_start) = (&s.defs, &s.def_start);
    for &b in s.order.iter() {
        let b = b as usize;
        for (sl, v) in busy.iter_mut().enumerate() {
            v.clear();
            v.resize(colors[sl] as usize / 64 + 1, 0);
        }
        for n in list_items(live_head[b], live_in) {
            if color[n] < PRIVATE {
                set(&mut busy[local_of[n].slot()], color[n] as usize);
            }
        }
        // The block's values with a local, in order.
        let mut freed = range(f, b).0;
        for &(j, n) in &defs[def_start[b] as usize..def_start[b + 1] as usize] {
            let (j, n) = (j as usize, n as usize);
            let inst = &f.insts[j];
            let phi = if let InstKind::Phi { incoming } = inst.kind {
                Some(incoming)
            } else {
                // Deaths are freed at statements only: a block's phis all have their
                // colors by then.
                while freed <= j {
                    for m in list_items(death_head[freed], deaths) {
                        if color[m] < PRIVATE {
                            clear(&mut busy[local_of[m].slot()], color[m] as usize);
                        }
                    }
                    freed += 1;
                }
                None
            };
            if color[n] != NONE {
                continue;
            }
            let sl = local_of[n].slot();
            let free = |m: usize, busy: &[u64]| -> Option<u32> {
                let c = *color.get(m)?;
                (c < PRIVATE
                    && local_of[m].slot() == sl
                    && busy
                        .get(c as usize >> 6)
                        .is_none_or(|x| x >> (c & 63) & 1 == 0))
                .then_some(c)
            };
            let preferred = match phi {
                Some(incoming) => f
                    .incoming(incoming)
                    .iter()
                    .find_map(|&(x, _)| free(x.0.wrapping_sub(first) as usize, &busy[sl])),
                // The phi it feeds, or if that has no color yet, the phi's other
                // incoming values (then that phi can take the same one).
                None => {
                    let p = (pref[n] & !BACK) as usize;
                    free(p, &busy[sl]).or_else(|| {
                        let i = *f.value_insts.get(p)? as usize;
                        let InstKind::Phi { incoming } = f.insts.get(i)?.kind else {
                            return None;
                        };
                        f.incoming(incoming)
                            .iter()
                            .find_map(|&(x, _)| free(x.0.wrapping_sub(first) as usize, &busy[sl]))
                    })
                }
            };
            let c = preferred.unwrap_or_else(|| lowest_free(&busy[sl]));
            let words = &mut busy[sl];
            if c as usize / 64 >= words.len() {
                words.resize(c as usize / 64 + 1, 0);
            }
            set(words, c as usize);
            color[n] = c;
            colors[sl] = colors[sl].max(c + 1);
        }
    }
    // Values live at many blocks, values in unreachable blocks (never emitted) and values
    // the walk did not meet in input the verifier rejects: a color of their own.
    for &n in &s.gval {
        let (n, sl) = (n as usize, local_of[n as usize].slot());
        if color[n] >= PRIVATE {
            color[n] = colors[sl];
            colors[sl] += 1;
        }
    }
    colors
}

/// Step 5: `local_of` gets each value's local, per type the colors ranked by their
/// accesses, the busiest first. When every local's index stays below 128 whatever the
/// order (one LEB128 byte each; at most `MAX_EXTRAS` scratch and fixed-role locals
/// follow), the colors are the indices.
fn number(
    f: &Function,
    pool: [u32; 5],
    local_of: &mut [Ordinal],
    count: &[u32],
    colors: [u32; 5],
    s: &mut AllocScratch,
) {
    let color = &s.color;
    let total: u64 = colors.iter().chain(&pool).map(|&c| u64::from(c)).sum();
    if f.num_params as u64 + total + MAX_EXTRAS <= 128 {
        for &n in &s.gval {
            let l = &mut local_of[n as usize];
            *l = Ordinal::own(l.slot(), color[n as usize]);
        }
        return;
    }
    for (wt, &k) in s.weight.iter_mut().zip(&colors) {
        wt.clear();
        wt.extend((0..k).map(|c| (0, c)));
    }
    for &n in &s.gval {
        let n = n as usize;
        s.weight[local_of[n].slot()][color[n] as usize].0 += count[n];
    }
    for ((wt, rank), &k) in s.weight.iter_mut().zip(&mut s.rank).zip(&colors) {
        wt.sort_unstable_by_key(|&(a, c)| (std::cmp::Reverse(a), c));
        rank.clear();
        rank.resize(k as usize, 0);
        for (r, &(_, c)) in wt.iter().enumerate() {
            rank[c as usize] = r as u32;
        }
    }
    for &n in &s.gval {
        let l = &mut local_of[n as usize];
        let sl = l.slot();
        *l = Ordinal::own(sl, s.rank[sl][color[n as usize] as usize]);
    }
}

/// The lowest color not set in `busy` (past its end if all are).
#[inline]
fn lowest_free(busy: &[u64]) -> u32 {
    for (k, &x) in busy.iter().enumerate() {
        if x != u64::MAX {
            return (k * 64) as u32 + (!x).trailing_zeros();
        }
    }
    (busy.len() * 64) as u32
}
