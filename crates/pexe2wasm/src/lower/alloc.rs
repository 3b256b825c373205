//! Local allocation with liveness across blocks: values whose lives never meet share a
//! wasm local, a phi takes the local of an incoming value when it can (its copy on that
//! edge goes away), and the busiest locals of each type get the lowest indices (an index
//! below 128 is one LEB128 byte).
//!
//! Runs after placement, the block-local numbering (`locals.rs`, which says which values
//! need a local and of which type) and the CFG, on functions with at least one value
//! live across blocks (the others keep the block-local numbering, which is already this
//! allocation for them) and without setjmp (a longjmp re-enters with the locals as they
//! were: every value keeps a local of its own there).
//!
//! 1. **Cross-block values**: phis, values used by phis, values used after the end of
//!    their block (`locals::last_use`'s slot at or past it). They get dense numbers; the
//!    rest are block-local and die at their last user.
//! 2. **Events**: one walk over the operands records, per block, the uses of cross-block
//!    values by non-phi instructions and the definitions (a phi's at its block's start),
//!    and counts every access of every value (for the ordering).
//! 3. **Liveness**: live-in bitsets per block over the cross-block values, by backward
//!    dataflow in postorder until nothing changes. A block's live-out is the live-in of
//!    its successors and, per successor, the values its phis take on the edge from the
//!    block (a phi copy reads them there). Unreachable blocks are left out: their code is
//!    never emitted, and edges from them carry no copies.
//! 4. **Assignment** in reverse postorder (a value's definition comes before its uses in
//!    every block that sees it live): at a block's start the colors of its live-in values
//!    are busy; its phis take a color then (preferably an incoming value's); then each
//!    statement frees the colors of the values that die at or before it and takes the
//!    lowest free color, preferring that of a phi it feeds (or, before that phi has one,
//!    that of another of the phi's incoming values). A statement reads its operands
//!    before it sets its own local, so a value dying at a statement may pass its local to
//!    that statement's result (as in `locals.rs`). In SSA form two values interfere when
//!    one is live where the other is defined; the colors busy at a definition are exactly
//!    those of the values live there, so values that interfere never share a color.
//! 5. **Ordering**: per type, the colors sorted by their accesses (gets and sets), the
//!    busiest first.
//!
//! Why phi copies stay right: the copies of an edge are a parallel copy placed on the
//! edge itself (`phi.rs`); a phi's color is not busy at its block's start, so no value
//! live into the block holds it, and values live only along the predecessor's other
//! edges may hold it (those paths never run the copy). Two phis of one block never share
//! (their colors are taken while both are busy), and deaths are only freed at statements,
//! after all of a block's phis have theirs.
//!
//! Irreducible CFGs need nothing special: the dataflow runs to its fixed point on any
//! graph, the dispatch nodes (`cfg.rs`) only read and write the label local, and a
//! reverse postorder of the graph with dispatch nodes still puts every dominator first.

use super::cfg::NONE;
use super::locals::ORD_BITS;
use crate::ir::{Function, InstKind};

/// At most this many 64-bit words of live-in bitsets (blocks × cross-block values / 64),
/// 4 MiB; a function that needs more keeps the block-local numbering.
const MAX_WORDS: usize = 1 << 19;

/// Working memory, kept from function to function (`Scratch`).
#[derive(Default)]
pub(crate) struct AllocScratch {
    /// Per value: its cross-block number, or [`NONE`].
    gid: Vec<u32>,
    /// Per cross-block number: the value.
    gval: Vec<u32>,
    /// Per value: gets and sets of it.
    count: Vec<u32>,
    /// Per value: a phi it feeds ([`NONE`] if none).
    pref: Vec<u32>,
    /// Per block, in order: (instruction, cross-block number << 1 | 1 for a definition).
    ev: Vec<(u32, u32)>,
    ev_start: Vec<u32>,
    /// Per block: its successors, each once (`succ_start` as `ev_start`).
    succ: Vec<u32>,
    succ_start: Vec<u32>,
    /// (predecessor, cross-block number) of every value a phi with a local reads on an
    /// edge, sorted by predecessor (`pe_start` per block).
    pe: Vec<(u32, u32)>,
    pe_start: Vec<u32>,
    /// Per block: the last block whose successors listed it.
    seen: Vec<u32>,
    /// Live-in bitsets, `w` words per block.
    live: Vec<u64>,
    tmp: Vec<u64>,
    /// Reachable blocks in reverse postorder.
    order: Vec<u32>,
    /// Per value: its color (a local of its type), [`NONE`] before it has one.
    color: Vec<u32>,
    /// The block's deaths: (instruction at which the color is free again, value).
    deaths: Vec<(u32, u32)>,
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
fn bit(v: &[u64], i: usize) -> bool {
    v[i >> 6] >> (i & 63) & 1 != 0
}
#[inline]
fn set(v: &mut [u64], i: usize) {
    v[i >> 6] |= 1 << (i & 63);
}
#[inline]
fn clear(v: &mut [u64], i: usize) {
    v[i >> 6] &= !(1 << (i & 63));
}

/// The type slot of a numbered `local_of` entry.
#[inline]
fn slot(l: u32) -> usize {
    (l >> ORD_BITS) as usize
}

/// Allocates the locals of `f`. `local_of` is the block-local numbering (per value:
/// `slot << ORD_BITS | ordinal`, or [`NONE`] without a local); `last` each value's last
/// user (`locals::last_use`); `rpo_index` the CFG's reverse-postorder positions (blocks
/// first). On success `local_of` holds `slot << ORD_BITS | rank` (ranks from 0 per type,
/// busiest first) and the result is the number of locals per type; `None` (nothing
/// changed) when no value lives across blocks or the bitsets would be too large.
pub(crate) fn allocate(
    f: &Function,
    last: &[u32],
    rpo_index: &[u32],
    local_of: &mut [u32],
    s: &mut AllocScratch,
) -> Option<[u32; 5]> {
    let first = f.first_inst_value();
    let nv = local_of.len();
    let nb = f.block_starts.len();
    // The value defined by instruction `j` with a local, if any.
    let value_at = |local_of: &[u32], j: usize| -> Option<usize> {
        let n = f.insts[j].result.0.wrapping_sub(first) as usize;
        (local_of.get(n).is_some_and(|&l| l != NONE) && f.value_insts.get(n) == Some(&(j as u32)))
            .then_some(n)
    };

    // 1. Cross-block values.
    let mut gid = std::mem::take(&mut s.gid);
    gid.clear();
    gid.resize(nv, NONE);
    s.gval.clear();
    for b in 0..nb {
        let (start, end) = range(f, b);
        for j in start..end {
            let Some(n) = value_at(local_of, j) else {
                continue;
            };
            let phi = matches!(f.insts[j].kind, InstKind::Phi { .. });
            if phi || last.get(n).is_none_or(|&e| e as usize >= end) {
                gid[n] = s.gval.len() as u32;
                s.gval.push(n as u32);
            }
        }
    }
    let g = s.gval.len();
    let w = g.div_ceil(64);
    if g == 0 || w.saturating_mul(nb) > MAX_WORDS {
        s.gid = gid;
        return None;
    }

    // 2. Events and access counts.
    let mut count = std::mem::take(&mut s.count);
    count.clear();
    count.resize(nv, 0);
    let mut pref = std::mem::take(&mut s.pref);
    pref.clear();
    pref.resize(nv, NONE);
    let mut ev = std::mem::take(&mut s.ev);
    ev.clear();
    s.ev_start.clear();
    s.succ.clear();
    s.succ_start.clear();
    s.pe.clear();
    s.seen.clear();
    s.seen.resize(nb, NONE);
    for b in 0..nb {
        s.ev_start.push(ev.len() as u32);
        s.succ_start.push(s.succ.len() as u32);
        let (start, end) = range(f, b);
        if start < end {
            let (succ, seen) = (&mut s.succ, &mut s.seen);
            f.insts[end - 1].kind.for_each_successor(|t| {
                if let Some(x) = seen.get_mut(t.index()).filter(|x| **x != b as u32) {
                    *x = b as u32;
                    succ.push(t.0);
                }
            });
        }
        for j in start..end {
            let inst = &f.insts[j];
            if let InstKind::Phi { incoming } = inst.kind {
                if let Some(p) = value_at(local_of, j) {
                    for &(x, from) in f.incoming(incoming) {
                        let m = x.0.wrapping_sub(first) as usize;
                        if let Some(c) = count.get_mut(m) {
                            *c += 1;
                            pref[m] = p as u32;
                            if gid[m] != NONE && from.index() < nb {
                                s.pe.push((from.0, gid[m]));
                            }
                        }
                    }
                    count[p] += f.incoming(incoming).len() as u32;
                    if gid[p] != NONE {
                        ev.push((j as u32, gid[p] << 1 | 1));
                    }
                }
                continue;
            }
            inst.kind.for_each_operand(f, |v| {
                let m = v.0.wrapping_sub(first) as usize;
                if let Some(&x) = gid.get(m) {
                    count[m] += 1;
                    if x != NONE {
                        ev.push((j as u32, x << 1));
                    }
                }
            });
            if let Some(n) = value_at(local_of, j) {
                count[n] += 1;
                if gid[n] != NONE {
                    ev.push((j as u32, gid[n] << 1 | 1));
                }
            }
        }
    }
    s.ev_start.push(ev.len() as u32);
    s.succ_start.push(s.succ.len() as u32);
    s.pe.sort_unstable();
    s.pe_start.clear();
    let mut k = 0;
    for b in 0..=nb {
        while s.pe.get(k).is_some_and(|&(from, _)| (from as usize) < b) {
            k += 1;
        }
        s.pe_start.push(k as u32);
    }

    // 3. Liveness.
    let order = &mut s.order;
    order.clear();
    order.resize(rpo_index.len(), NONE);
    for (b, &r) in rpo_index.iter().enumerate().take(nb) {
        if let Some(o) = order.get_mut(r as usize) {
            *o = b as u32;
        }
    }
    order.retain(|&b| b != NONE);
    let live = &mut s.live;
    live.clear();
    live.resize(w * nb, 0);
    let tmp = &mut s.tmp;
    tmp.clear();
    tmp.resize(w, 0);
    // The live-out set of block `b` into `tmp`: its successors' live-in sets and the
    // values their phis read on the edges from `b`.
    let (succ, succ_start, pe, pe_start) = (&s.succ, &s.succ_start, &s.pe, &s.pe_start);
    let live_out = |b: usize, live: &[u64], tmp: &mut [u64]| {
        tmp.fill(0);
        for &t in &succ[succ_start[b] as usize..succ_start[b + 1] as usize] {
            let t = t as usize;
            for (o, &x) in tmp.iter_mut().zip(&live[t * w..t * w + w]) {
                *o |= x;
            }
        }
        for &(_, x) in &pe[pe_start[b] as usize..pe_start[b + 1] as usize] {
            set(tmp, x as usize);
        }
    };
    let events = |b: usize| &ev[s.ev_start[b] as usize..s.ev_start[b + 1] as usize];
    loop {
        let mut changed = false;
        for &b in order.iter().rev() {
            let b = b as usize;
            live_out(b, live, tmp);
            for &(_, e) in events(b).iter().rev() {
                if e & 1 == 1 {
                    clear(tmp, (e >> 1) as usize);
                } else {
                    set(tmp, (e >> 1) as usize);
                }
            }
            if live[b * w..b * w + w] != tmp[..] {
                live[b * w..b * w + w].copy_from_slice(tmp);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    // 4. Assignment.
    let color = &mut s.color;
    color.clear();
    color.resize(nv, NONE);
    let busy = &mut s.busy;
    let mut colors = [0u32; 5];
    let deaths = &mut s.deaths;
    let gval = &s.gval;
    for &b in order.iter() {
        let b = b as usize;
        for (sl, v) in busy.iter_mut().enumerate() {
            v.clear();
            v.resize(colors[sl] as usize / 64 + 1, 0);
        }
        for (k, &word) in live[b * w..b * w + w].iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let n = gval[k * 64 + word.trailing_zeros() as usize] as usize;
                word &= word - 1;
                if color[n] != NONE {
                    set(&mut busy[slot(local_of[n])], color[n] as usize);
                }
            }
        }
        // Deaths: cross-block values from the live-out set, block-local ones at their
        // last user.
        deaths.clear();
        live_out(b, live, tmp);
        for &(j, e) in events(b).iter().rev() {
            let x = (e >> 1) as usize;
            let n = gval[x];
            if e & 1 == 1 {
                if !bit(tmp, x) {
                    deaths.push((j + 1, n));
                }
                clear(tmp, x);
            } else if !bit(tmp, x) {
                deaths.push((j, n));
                set(tmp, x);
            }
        }
        let (start, end) = range(f, b);
        for j in start..end {
            if let Some(n) = value_at(local_of, j) {
                if gid[n] == NONE {
                    deaths.push((last[n], n as u32));
                }
            }
        }
        deaths.sort_unstable();
        let mut di = 0;
        for j in start..end {
            let inst = &f.insts[j];
            let phi = if let InstKind::Phi { incoming } = inst.kind {
                Some(incoming)
            } else {
                // Deaths are freed at statements only: a block's phis all have their
                // colors by then.
                while let Some(&(at, m)) = deaths.get(di) {
                    if at as usize > j {
                        break;
                    }
                    if color[m as usize] != NONE {
                        clear(
                            &mut busy[slot(local_of[m as usize])],
                            color[m as usize] as usize,
                        );
                    }
                    di += 1;
                }
                None
            };
            let Some(n) = value_at(local_of, j) else {
                continue;
            };
            if color[n] != NONE {
                continue;
            }
            let sl = slot(local_of[n]);
            let free = |m: usize, busy: &[u64]| -> Option<u32> {
                let c = *color.get(m)?;
                (c != NONE
                    && slot(local_of[m]) == sl
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
                    let p = pref[n] as usize;
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
    // Values in unreachable blocks (never emitted) or that the walk did not meet in
    // input the verifier rejects: a color of their own.
    for (n, &l) in local_of.iter().enumerate() {
        if l != NONE && color[n] == NONE {
            color[n] = colors[slot(l)];
            colors[slot(l)] += 1;
        }
    }

    // 5. Ordering: the busiest colors of each type first.
    for (wt, &k) in s.weight.iter_mut().zip(&colors) {
        wt.clear();
        wt.extend((0..k).map(|c| (0, c)));
    }
    for (n, &l) in local_of.iter().enumerate() {
        if l != NONE {
            s.weight[slot(l)][color[n] as usize].0 += count[n];
        }
    }
    for ((wt, rank), &k) in s.weight.iter_mut().zip(&mut s.rank).zip(&colors) {
        wt.sort_unstable_by_key(|&(a, c)| (std::cmp::Reverse(a), c));
        rank.clear();
        rank.resize(k as usize, 0);
        for (r, &(_, c)) in wt.iter().enumerate() {
            rank[c as usize] = r as u32;
        }
    }
    for (n, l) in local_of.iter_mut().enumerate() {
        if *l != NONE {
            let sl = slot(*l);
            *l = (sl as u32) << ORD_BITS | s.rank[sl][color[n] as usize];
        }
    }
    s.gid = gid;
    s.count = count;
    s.pref = pref;
    s.ev = ev;
    Some(colors)
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
