//! Control flow rules: `blocks N` basic blocks, each ending in exactly one terminator;
//! branch targets in range and never the entry block; phis first in their block, never in
//! the entry block, with one incoming block per predecessor; and SSA dominance.
//!
//! [`Cfg`] holds the graph and dominator tree of the body being checked, in flat vectors
//! that are reused from one body to the next. [`Cfg::blocks`] and [`Cfg::dominators`] run
//! first; the phi and dominance rules then run per instruction inside the function walk
//! (`function::walk`).

use super::function::{FnCx, Phase};
use super::Rule;
use crate::ir::ValueId;
use std::ops::Range;

/// "None" in the `u32` vectors below.
const NONE: u32 = u32::MAX;

/// The blocks, edges and dominator tree of one function body.
#[derive(Default)]
pub(super) struct Cfg {
    /// First instruction of each block, and the number of instructions at the end.
    starts: Vec<u32>,
    /// Successor blocks of block `b`: `succ[succ_start[b]..succ_start[b + 1]]`, one entry
    /// per edge (a switch may repeat one).
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    /// Predecessor blocks with multiplicity, in edge order, laid out like `succ`.
    pred_start: Vec<u32>,
    pred: Vec<u32>,
    /// Working space of `blocks`.
    fill: Vec<u32>,
    /// True once `dom` and `order` describe this body. The dominator tree is built on
    /// demand, by the first use that is not preceded by its definition in its own block:
    /// many bodies (all single-block ones, say) never need it.
    dom_ready: bool,
    /// Per block: reverse postorder number and dominator-tree interval.
    dom: Vec<BlockDom>,
    /// The reachable blocks in reverse postorder, with their dominator-tree links.
    order: Vec<DomNode>,
    /// The block of every instruction.
    block_of: Vec<u32>,
    /// Explicit DFS stack: (block, next successor edge).
    dfs: Vec<(u32, u32)>,
    /// Retreating edges met by the first pass: (rpo number of the target, of the source).
    retreating: Vec<(u32, u32)>,
    phis: PhiScratch,
}

/// A block's place in the dominator tree: `a` dominates `b` iff `b`'s preorder number
/// lies in `a`'s subtree interval `[pre, end)` (an O(1) test instead of a walk up the
/// tree). `pre == NONE` for a block unreachable from the entry.
#[derive(Clone, Copy)]
struct BlockDom {
    /// Reverse postorder number (NONE if not reached).
    rpo: u32,
    pre: u32,
    end: u32,
}

/// A reachable block, by reverse postorder number.
#[derive(Clone, Copy)]
struct DomNode {
    block: u32,
    /// Immediate dominator's reverse postorder number (NONE until known).
    idom: u32,
    /// Number of blocks in its dominator subtree.
    size: u32,
    /// The next free preorder number inside its interval (while numbering children).
    next: u32,
}

/// Counters of the phi rules, valid where their stamp says so (so that they need no
/// clearing per block or per phi).
#[derive(Default)]
struct PhiScratch {
    /// False until the first phi of the body sized and reset `per_block`.
    ready: bool,
    per_block: Vec<PhiCounts>,
    /// Distinct predecessors of the current block (sorted when `PhiBlock::preds_sorted`).
    preds: Vec<u32>,
    /// Distinct incoming blocks of the current phi.
    listed: Vec<u32>,
}

/// The phi counters of one block `p`.
#[derive(Clone, Copy)]
struct PhiCounts {
    /// Edges from `p` into the current block (valid where `edge_stamp == b`).
    edge_cnt: u32,
    edge_stamp: u32,
    /// Entries for `p` in the current phi (valid where `ent_stamp == i`), with the value
    /// of the first.
    ent_cnt: u32,
    ent_val: ValueId,
    ent_stamp: u32,
}

/// Where the walk is in a block, for the phi placement rules.
pub(super) struct PhiBlock {
    block: u32,
    seen_non_phi: bool,
    /// The predecessor counts of this block are in `PhiScratch`.
    edges_ready: bool,
    /// `PhiScratch::preds` is sorted (done only when a finding needs the order).
    preds_sorted: bool,
}

impl PhiBlock {
    pub(super) fn new(block: usize) -> PhiBlock {
        PhiBlock {
            block: block as u32,
            seen_non_phi: false,
            edges_ready: false,
            preds_sorted: false,
        }
    }

    pub(super) fn non_phi(&mut self) {
        self.seen_non_phi = true;
    }
}

impl Cfg {
    pub(super) fn num_blocks(&self) -> usize {
        self.starts.len() - 1
    }

    /// Instruction indices of block `b`.
    pub(super) fn range(&self, b: usize) -> Range<usize> {
        self.starts[b] as usize..self.starts[b + 1] as usize
    }

    /// True if block `b` is reachable from the entry (after `dominators`).
    fn reachable(&self, b: u32) -> bool {
        self.dom[b as usize].pre != NONE
    }

    /// True if block `a` dominates block `b`, both reachable (after `dominators`).
    fn dominates(&self, a: u32, b: u32) -> bool {
        let (da, pb) = (self.dom[a as usize], self.dom[b as usize].pre);
        da.pre <= pb && pb < da.end
    }

    /// True if instruction `d` is in the entry block. The entry dominates every
    /// reachable block, so a definition there never breaks dominance in another block.
    fn in_entry(&self, d: usize) -> bool {
        d < self.starts[1] as usize
    }

    /// The block of instruction `d` (0 for an index out of range; after `dominators`).
    fn block_of(&self, d: usize) -> u32 {
        self.block_of.get(d).copied().unwrap_or(0)
    }

    /// Splits the body into blocks and checks terminators and targets. False when the
    /// block layout is too broken to check phis and dominance.
    pub(super) fn blocks(&mut self, cx: &mut FnCx<'_>) -> bool {
        let f = cx.f;
        let n = f.num_blocks as usize;
        if n == 0 {
            cx.at_fn(Rule::Cfg, "function declares 0 basic blocks");
            return false;
        }
        if f.block_starts.len() != n {
            cx.at_fn(
                Rule::Cfg,
                format!(
                    "{n} basic blocks declared but {} defined",
                    f.block_starts.len()
                ),
            );
            return false;
        }
        self.starts.clear();
        for b in 0..n {
            let start = f.block_starts[b] as usize;
            let end = f
                .block_starts
                .get(b + 1)
                .map_or(f.insts.len(), |&e| e as usize);
            if (b == 0 && start != 0) || start >= end || end > f.insts.len() {
                cx.at_block(
                    b as u32,
                    None,
                    Rule::Cfg,
                    "basic block is empty or its instruction range is invalid",
                );
                return false;
            }
            self.starts.push(start as u32);
        }
        // The blocks now tile 0..insts.len() in order.
        self.starts.push(f.insts.len() as u32);
        self.succ_start.clear();
        self.succ.clear();
        self.pred_start.clear();
        self.pred_start.resize(n + 1, 0);
        let mut ok = true;
        for b in 0..n {
            self.succ_start.push(self.succ.len() as u32);
            let r = self.range(b);
            let last = r.end - 1;
            for (i, inst) in (r.start..).zip(&f.insts[r.start..last]) {
                if inst.kind.is_terminator() {
                    cx.at_inst(
                        i,
                        Rule::Cfg,
                        format!("terminator in the middle of block %b{b}"),
                    );
                }
            }
            let term = &f.insts[last].kind;
            if !term.is_terminator() {
                cx.at_inst(
                    last,
                    Rule::Cfg,
                    format!("block %b{b} does not end with a terminator"),
                );
            }
            term.for_each_successor(|t| {
                if t as usize >= n {
                    cx.at_inst(
                        last,
                        Rule::Cfg,
                        format!("branch target %b{t} is out of range ({n} blocks)"),
                    );
                    ok = false;
                } else if t == 0 {
                    // The entry block has no predecessors.
                    cx.at_inst(last, Rule::Cfg, "branch to the entry block %b0");
                    ok = false;
                } else {
                    self.succ.push(t);
                    self.pred_start[t as usize + 1] += 1;
                }
            });
        }
        self.succ_start.push(self.succ.len() as u32);
        if !ok {
            return false;
        }
        // Predecessors in edge order: blocks ascending, each block's edges in order.
        for b in 0..n {
            self.pred_start[b + 1] += self.pred_start[b];
        }
        self.fill.clear();
        self.fill.extend_from_slice(&self.pred_start);
        self.pred.clear();
        self.pred.resize(self.succ.len(), 0);
        for b in 0..n {
            for e in self.succ_start[b]..self.succ_start[b + 1] {
                let t = self.succ[e as usize] as usize;
                self.pred[self.fill[t] as usize] = b as u32;
                self.fill[t] += 1;
            }
        }
        self.phis.ready = false;
        self.dom_ready = false;
        true
    }

    /// The dominator tree (`dom`), by the iterative algorithm of Cooper, Harvey and
    /// Kennedy on reverse postorder numbers, unless it is built already. Needs a sound
    /// `blocks`.
    #[inline]
    fn dominators(&mut self) {
        if !self.dom_ready {
            self.build_dominators();
        }
    }

    #[inline(never)]
    fn build_dominators(&mut self) {
        self.dom_ready = true;
        let n = self.num_blocks();
        self.block_of.clear();
        self.block_of.resize(self.starts[n] as usize, 0);
        for b in 1..n {
            let r = self.range(b);
            self.block_of[r].fill(b as u32);
        }
        self.dom.clear();
        self.dom.resize(
            n,
            BlockDom {
                rpo: NONE,
                pre: NONE,
                end: 0,
            },
        );
        // Postorder by an explicit-stack DFS from the entry (`rpo` 0 marks "visited").
        self.order.clear();
        self.dfs.clear();
        self.dfs.push((0, self.succ_start[0]));
        self.dom[0].rpo = 0;
        while let Some(top) = self.dfs.last_mut() {
            let (b, e) = *top;
            if e < self.succ_start[b as usize + 1] {
                top.1 += 1;
                let s = self.succ[e as usize] as usize;
                if self.dom[s].rpo == NONE {
                    self.dom[s].rpo = 0;
                    self.dfs.push((s as u32, self.succ_start[s]));
                }
            } else {
                self.order.push(DomNode {
                    block: b,
                    idom: NONE,
                    size: 1,
                    next: 0,
                });
                self.dfs.pop();
            }
        }
        self.order.reverse();
        for (k, node) in self.order.iter().enumerate() {
            self.dom[node.block as usize].rpo = k as u32;
        }
        // Immediate dominators by rpo number: a dominator comes before the blocks it
        // dominates, so walking up the tree means going to smaller numbers.
        let r = self.order.len();
        self.order[0].idom = 0;
        let intersect = |order: &[DomNode], mut a: u32, mut b: u32| -> u32 {
            while a != b {
                while a > b {
                    a = order[a as usize].idom;
                }
                while b > a {
                    b = order[b as usize].idom;
                }
            }
            a
        };
        // The first pass skips retreating edges (from a block later in the order, whose
        // idom is not known yet). If every retreating edge p -> b comes from a descendant
        // of idom(b) in the resulting tree, which is true of every loop's back edge, a
        // second pass would change nothing, so the tree is final; checking just those
        // edges is much cheaper than that pass. Otherwise iterate to the fixpoint.
        self.retreating.clear();
        let mut first_pass = true;
        let mut changed = true;
        while changed {
            changed = false;
            for k in 1..r {
                let b = self.order[k].block as usize;
                let mut new = NONE;
                for &p in &self.pred[self.pred_start[b] as usize..self.pred_start[b + 1] as usize] {
                    let rp = self.dom[p as usize].rpo;
                    if rp == NONE {
                        continue; // unreachable
                    }
                    if first_pass && rp as usize >= k {
                        self.retreating.push((k as u32, rp));
                    }
                    if self.order[rp as usize].idom == NONE {
                        continue; // not processed yet
                    }
                    new = if new == NONE {
                        rp
                    } else {
                        intersect(&self.order, rp, new)
                    };
                }
                if new != NONE && self.order[k].idom != new {
                    self.order[k].idom = new;
                    changed = true;
                }
            }
            if first_pass {
                first_pass = false;
                let order = &self.order;
                changed = !self.retreating.iter().all(|&(k, rp)| {
                    let idom = order[k as usize].idom;
                    intersect(order, rp, idom) == idom
                });
            }
        }
        // Subtree sizes (children have larger numbers than their parent), then preorder
        // intervals: each child takes the next free stretch of its parent's interval.
        for k in (1..r).rev() {
            let p = self.order[k].idom as usize;
            self.order[p].size += self.order[k].size;
        }
        for k in 0..r {
            let pre = if k == 0 {
                0
            } else {
                let p = self.order[k].idom as usize;
                let pre = self.order[p].next;
                self.order[p].next += self.order[k].size;
                pre
            };
            let node = &mut self.order[k];
            node.next = pre + 1;
            let d = &mut self.dom[node.block as usize];
            d.pre = pre;
            d.end = pre + node.size;
        }
    }

    /// Phis: only at the start of a non-entry block, one incoming entry per CFG edge. The
    /// manual's "M > 1" (at least two entries) is not a rule: real pexes have single-entry
    /// phis (15 in the corpus). `at` is where the walk is in the block; `i` is the phi.
    pub(super) fn phi(
        &mut self,
        cx: &mut FnCx<'_>,
        at: &mut PhiBlock,
        i: usize,
        incoming: &[(ValueId, u32)],
    ) {
        cx.phase = Phase::Phis;
        let b = at.block as usize;
        if b == 0 {
            cx.at_inst(i, Rule::Phi, "phi in the entry block");
            return;
        }
        if at.seen_non_phi {
            cx.at_inst(
                i,
                Rule::Phi,
                "phi after a non-phi instruction; phis must start the block",
            );
        }
        let n = self.num_blocks();
        let ps = &mut self.phis;
        if !ps.ready {
            ps.per_block.clear();
            ps.per_block.resize(
                n,
                PhiCounts {
                    edge_cnt: 0,
                    edge_stamp: NONE,
                    ent_cnt: 0,
                    ent_val: ValueId(0),
                    ent_stamp: NONE,
                },
            );
            ps.ready = true;
        }
        let pc = &mut ps.per_block;
        if !at.edges_ready {
            // Edges from each predecessor; `preds` sorted and distinct.
            ps.preds.clear();
            for &p in &self.pred[self.pred_start[b] as usize..self.pred_start[b + 1] as usize] {
                let p = p as usize;
                if pc[p].edge_stamp != b as u32 {
                    pc[p].edge_stamp = b as u32;
                    pc[p].edge_cnt = 0;
                    ps.preds.push(p as u32);
                }
                pc[p].edge_cnt += 1;
            }
            at.edges_ready = true;
            at.preds_sorted = false;
        }
        // Entries per incoming block, with the value of the first.
        let stamp = i as u32;
        ps.listed.clear();
        for &(v, pb) in incoming {
            if pb as usize >= n {
                cx.at_inst(
                    i,
                    Rule::Phi,
                    format!("incoming block %b{pb} is out of range ({n} blocks)"),
                );
                continue;
            }
            let k = pb as usize;
            if pc[k].ent_stamp != stamp {
                pc[k].ent_stamp = stamp;
                pc[k].ent_cnt = 0;
                pc[k].ent_val = v;
                ps.listed.push(pb);
            }
            pc[k].ent_cnt += 1;
            if pc[k].ent_val != v {
                cx.at_inst(
                    i,
                    Rule::Phi,
                    format!("incoming block %b{pb} is listed with different values"),
                );
            }
        }
        // The findings below come in block order: sort only when there is one.
        let listed_ok = ps.listed.iter().all(|&pb| {
            let c = &pc[pb as usize];
            c.edge_stamp == b as u32 && c.ent_cnt == c.edge_cnt
        });
        if !listed_ok {
            ps.listed.sort_unstable();
            for &pb in &ps.listed {
                let (count, k) = (pc[pb as usize].ent_cnt, pb as usize);
                if pc[k].edge_stamp != b as u32 {
                    cx.at_inst(
                        i,
                        Rule::Phi,
                        format!("incoming block %b{pb} is not a predecessor of %b{b}"),
                    );
                } else if count != pc[k].edge_cnt {
                    // One entry per edge, as LLVM requires: a switch with three cases to
                    // this block lists its block three times. Every real pexe does so
                    // (pnacl.c prints them deduplicated, see binji-dedupe_incoming).
                    let e = pc[k].edge_cnt;
                    cx.at_inst(
                        i,
                        Rule::Phi,
                        format!(
                            "incoming block %b{pb} is listed {count} times but has {e} edges \
                             to %b{b}"
                        ),
                    );
                }
            }
        }
        if ps
            .preds
            .iter()
            .all(|&pb| pc[pb as usize].ent_stamp == stamp)
        {
            return;
        }
        if !at.preds_sorted {
            ps.preds.sort_unstable();
            at.preds_sorted = true;
        }
        for &pb in &ps.preds {
            if pc[pb as usize].ent_stamp != stamp {
                cx.at_inst(
                    i,
                    Rule::Phi,
                    format!("no incoming value for predecessor %b{pb}"),
                );
            }
        }
    }

    /// Dominance of a phi's incoming values: each must dominate the end of its incoming
    /// block (checked when that block is reachable, wherever the phi is).
    pub(super) fn phi_dominance(
        &mut self,
        cx: &mut FnCx<'_>,
        i: usize,
        incoming: &[(ValueId, u32)],
    ) {
        for &(v, pb) in incoming {
            let Some(d) = cx.def_of(v) else { continue };
            if pb as usize >= self.num_blocks() || self.in_entry(d) {
                continue;
            }
            self.dominators();
            if !self.reachable(pb) {
                continue;
            }
            let db = self.block_of(d);
            if !(self.reachable(db) && self.dominates(db, pb)) {
                let msg = format!(
                    "{} does not dominate the end of incoming block %b{pb}",
                    cx.value_ref(v)
                );
                cx.phase = Phase::Dominance;
                cx.at_inst(i, Rule::Dominance, msg);
            }
        }
    }

    /// A use of instruction value `v`, defined by instruction `d`, by instruction `i`
    /// (not a phi) of block `ub`, when `d` is not earlier in the same block: the
    /// definition must dominate the use, if `ub` is reachable (uses in unreachable blocks
    /// are not checked; LLVM does not either).
    #[inline(never)]
    pub(super) fn dominance(&mut self, cx: &mut FnCx<'_>, ub: u32, i: usize, v: ValueId, d: usize) {
        self.dominators();
        if !self.reachable(ub) {
            return;
        }
        let db = self.block_of(d);
        let ok = if db == ub {
            d < i
        } else {
            self.reachable(db) && self.dominates(db, ub)
        };
        if !ok {
            let msg = format!(
                "use of {} is not dominated by its definition",
                cx.value_ref(v)
            );
            cx.phase = Phase::Dominance;
            cx.at_inst(i, Rule::Dominance, msg);
        }
    }
}
