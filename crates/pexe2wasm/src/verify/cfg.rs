//! Control flow rules: `blocks N` basic blocks, each ending in exactly one terminator;
//! branch targets in range and never the entry block; phis first in their block, never in
//! the entry block, with one incoming block per predecessor; and SSA dominance.
//!
//! [`Cfg`] holds the graph and dominator tree of the body being checked, in flat vectors
//! that are reused from one body to the next. [`Cfg::blocks`] and [`Cfg::dominators`] run
//! first; the phi and dominance rules then run per instruction inside the function walk
//! (`function::walk`).

use super::function::{FnCx, Phase, NOT_YET};
use super::Rule;
use crate::ir::{common_dominator, BlockId, InstKind, ValueId};
use std::ops::Range;

/// "None" in the `u32` vectors below.
use crate::ir::NONE;

/// The blocks, edges and dominator tree of one function body.
#[derive(Default)]
pub(super) struct Cfg {
    /// First instruction of each block, and the number of instructions at the end.
    starts: Vec<u32>,
    /// Successor blocks of block `b`: `succ[succ_start[b]..succ_start[b + 1]]`, one entry
    /// per edge (a switch may repeat one).
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    /// Number of edges into each block.
    indeg: Vec<u32>,
    /// Predecessor blocks with multiplicity, in edge order, laid out like `succ`. Built
    /// on demand (`preds`), by the phi rules and the general dominator algorithms: the
    /// common phis (`phi_fits`) and the forward dominator tree need only `succ`.
    preds_ready: bool,
    pred_start: Vec<u32>,
    pred: Vec<u32>,
    /// True once `dom` and `order` describe this body. The dominator tree is built on
    /// demand, by the first use of a value defined in another block than the entry
    /// block: many bodies (all single-block ones, say) never need it.
    dom_ready: bool,
    /// Immediate dominators by block, from the edges in layout order (`blocks` fills it
    /// in while it finds the edges); valid when `forward_ok`. See
    /// [`Cfg::forward_dominators`].
    idom: Vec<u32>,
    /// Every block but the entry has a predecessor laid out before it.
    forward_ok: bool,
    /// Per block: number in `order` and dominator-tree interval.
    dom: Vec<BlockDom>,
    /// The reachable blocks, each after its immediate dominator (in the order
    /// `layout_dominators` numbered them, or reverse postorder), with their tree links.
    order: Vec<DomNode>,
    /// Explicit DFS stack: (block, next successor edge).
    dfs: Vec<(u32, u32)>,
    /// Retreating edges met by the first pass: (number of the target, of the source).
    retreating: Vec<(u32, u32)>,
    /// Predecessors skipped by `layout_dominators` (not numbered yet): (number of the
    /// block, predecessor block).
    skipped: Vec<(u32, u32)>,
    /// Blocks `layout_dominators` has not numbered yet.
    pending: Vec<u32>,
    phis: PhiScratch,
}

/// A block's place in the dominator tree: `a` dominates `b` iff `b`'s preorder number
/// lies in `a`'s subtree interval `[pre, end)` (an O(1) test instead of a walk up the
/// tree). `pre == NONE` for a block unreachable from the entry.
#[derive(Clone, Copy)]
struct BlockDom {
    /// Number in `Cfg::order` (NONE if not reached).
    num: u32,
    pre: u32,
    end: u32,
}

/// A reachable block, by its number in `Cfg::order`.
#[derive(Clone, Copy)]
struct DomNode {
    block: u32,
    /// Immediate dominator's number in `Cfg::order` (NONE until known).
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

    /// True if block `a` dominates block `b` and `b` is reachable: the answer of the
    /// dominance rule for most uses, from one interval test (an unreachable block has
    /// `pre == NONE`, outside every interval, and an empty interval itself). Builds the
    /// dominator tree if needed.
    #[inline]
    pub(super) fn dominates_reachable(&mut self, a: u32, b: u32) -> bool {
        self.dominators();
        let (da, pb) = (self.dom[a as usize], self.dom[b as usize].pre);
        da.pre <= pb && pb < da.end
    }

    /// [`Cfg::dominates_reachable`] when the tree is built already, else (or for a block
    /// out of range, such as NOT_YET) false: the test inlined into the walk before a call.
    #[inline(always)]
    pub(super) fn dominates_built(&self, a: u32, b: u32) -> bool {
        if !self.dom_ready {
            return false;
        }
        // `a` may be NOT_YET, and `b` a phi's incoming block out of range.
        let (Some(da), Some(db)) = (self.dom.get(a as usize), self.dom.get(b as usize)) else {
            return false;
        };
        da.pre <= db.pre && db.pre < da.end
    }

    /// True if block `a` dominates block `b`, both reachable (after `dominators`).
    fn dominates(&self, a: u32, b: u32) -> bool {
        let (da, pb) = (self.dom[a as usize], self.dom[b as usize].pre);
        da.pre <= pb && pb < da.end
    }

    /// The block of instruction `d` (the last block for an index out of range). A binary
    /// search: the walk knows the block of every definition it has passed, so only
    /// definitions later in the layout are looked up here.
    pub(super) fn block_of(&self, d: usize) -> u32 {
        let after = self.starts[1..].partition_point(|&s| s as usize <= d);
        after.min(self.num_blocks() - 1) as u32
    }

    /// Splits the body into blocks and checks terminators and targets. False when the
    /// block layout is too broken to check phis and dominance.
    ///
    /// Terminators before the end of a block are looked for only with `scan`: without
    /// it, the function walk (which visits every instruction anyway) tells whether there
    /// are any, and the layout is then checked again with `scan`, so that the findings
    /// come in the same order. When the layout is broken (no walk), this rescans itself.
    pub(super) fn blocks(&mut self, cx: &mut FnCx<'_>, scan: bool) -> bool {
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
        // The blocks must tile 0..insts.len() in order: the starts, then the end, strictly
        // increasing from 0. Only when they do not is the first bad block looked for.
        self.starts.clear();
        self.starts.extend_from_slice(&f.block_starts);
        self.starts.push(f.insts.len() as u32);
        if !(self.starts[0] == 0 && self.starts.windows(2).all(|w| w[0] < w[1])) {
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
            }
        }
        // The edges, each block's in terminator order, and the number of edges into each
        // block. The vectors are taken out of `self` so that their lengths stay in
        // registers.
        let insts = &f.insts[..];
        let mut succ = std::mem::take(&mut self.succ);
        let mut succ_start = std::mem::take(&mut self.succ_start);
        let mut indeg = std::mem::take(&mut self.indeg);
        succ.clear();
        succ_start.clear();
        indeg.clear();
        indeg.resize(n, 0);
        let mut idom = std::mem::take(&mut self.idom);
        let mut retreating = std::mem::take(&mut self.retreating);
        idom.clear();
        idom.resize(n, NONE);
        idom[0] = 0;
        retreating.clear();
        let mut forward_ok = true;
        let mut ok = true;
        for (b, w) in self.starts.windows(2).enumerate() {
            succ_start.push(succ.len() as u32);
            // All predecessors of `b` laid out before it have been seen: its idom in the
            // forward tree is final (see `forward_dominators`).
            forward_ok &= idom[b] != NONE;
            let src = b as u32;
            let last = w[1] as usize - 1;
            if scan {
                for (i, inst) in (w[0] as usize..).zip(&insts[w[0] as usize..last]) {
                    if inst.kind.is_terminator() {
                        cx.at_inst(
                            i,
                            Rule::Cfg,
                            format!("terminator in the middle of block %b{b}"),
                        );
                    }
                }
            }
            // The edges of the terminator, matched here rather than through
            // `for_each_successor` so that the common case stays inline. A target is
            // valid when it is not the entry and below `n`.
            // (A macro, not a closure: the closure was compiled out of line.)
            macro_rules! edge {
                ($t:expr) => {{
                    let t: u32 = $t;
                    if t != 0 && (t as usize) < n {
                        succ.push(t);
                        indeg[t as usize] += 1;
                        if forward_ok {
                            if t > src {
                                let cur = idom[t as usize];
                                idom[t as usize] = if cur == NONE {
                                    src
                                } else {
                                    common_dominator(&idom, src, cur)
                                };
                            } else {
                                retreating.push((t, src));
                            }
                        }
                    } else {
                        bad_target(cx, last, t, n);
                        ok = false;
                    }
                }};
            }
            match &insts[last].kind {
                InstKind::Br { target } => edge!(target.0),
                InstKind::CondBr {
                    then_bb, else_bb, ..
                } => {
                    edge!(then_bb.0);
                    edge!(else_bb.0);
                }
                InstKind::Switch(s) => {
                    edge!(s.default.0);
                    for c in &s.cases {
                        edge!(c.target.0);
                    }
                }
                InstKind::Ret { .. } | InstKind::Unreachable => {}
                _ => cx.at_inst(
                    last,
                    Rule::Cfg,
                    format!("block %b{b} does not end with a terminator"),
                ),
            }
        }
        succ_start.push(succ.len() as u32);
        self.succ = succ;
        self.succ_start = succ_start;
        self.indeg = indeg;
        self.preds_ready = false;
        self.idom = idom;
        self.retreating = retreating;
        self.forward_ok = forward_ok;
        if !ok {
            if !scan {
                // The walk that checks for inner terminators does not run on this body.
                cx.findings_of(Phase::Blocks).clear();
                return self.blocks(cx, true);
            }
            return false;
        }
        self.phis.ready = false;
        self.dom_ready = false;
        true
    }

    /// The dominator tree (`dom`, `order`), unless it is built already. Needs a sound
    /// `blocks`.
    #[inline]
    fn dominators(&mut self) {
        if !self.dom_ready {
            self.build_dominators();
        }
    }

    /// The predecessor lists (`pred_start`, `pred`), unless built already. Needs a sound
    /// `blocks`.
    #[inline(never)]
    fn preds(&mut self) {
        if self.preds_ready {
            return;
        }
        self.preds_ready = true;
        // Predecessors in edge order (blocks ascending, each block's edges in order): with
        // `pred_start[t]` first the end of block t's list (a running sum of the counts),
        // the edges placed last to first move each end down to its start.
        let pred_start = &mut self.pred_start;
        pred_start.clear();
        let mut sum = 0;
        pred_start.extend(self.indeg.iter().map(|&c| {
            sum += c;
            sum
        }));
        pred_start.push(sum);
        let pred = &mut self.pred;
        pred.clear();
        pred.resize(self.succ.len(), 0);
        for (b, w) in self.succ_start.windows(2).enumerate().rev() {
            for &t in self.succ[w[0] as usize..w[1] as usize].iter().rev() {
                let end = &mut pred_start[t as usize];
                *end -= 1;
                pred[*end as usize] = b as u32;
            }
        }
    }

    /// Immediate dominators by the iterative algorithm of Cooper, Harvey and Kennedy,
    /// numbering the blocks in an order where every block comes after its immediate
    /// dominator ([`Cfg::layout_dominators`], or reverse postorder when that does not
    /// settle), then the preorder intervals of the tree.
    #[inline(never)]
    fn build_dominators(&mut self) {
        self.dom_ready = true;
        let n = self.num_blocks();
        let unnumbered = BlockDom {
            num: NONE,
            pre: NONE,
            end: 0,
        };
        self.dom.clear();
        if self.forward_dominators() {
            return;
        }
        self.preds();
        self.dom.resize(n, unnumbered);
        self.order.clear();
        if !self.layout_dominators() {
            self.dom.fill(unnumbered);
            self.order.clear();
            self.rpo_dominators();
        }
        self.intervals();
    }

    /// The common case, with no search and no renumbering: when every block but the entry
    /// has a predecessor laid out before it (`forward_ok`), the blocks themselves, in
    /// layout order, are an order where each comes after its immediate dominator.
    /// `blocks`, going through the edges by source block, gave each block the meet of its
    /// earlier predecessors (all of them final by the time they are a source), and every
    /// block is reachable (by induction on the layout). The edges to a block at or before
    /// their source (`retreating`) are checked as in [`Cfg::layout_dominators`]: if each
    /// comes from a descendant of its target's idom, another pass would change nothing,
    /// and the tree is final. Then the preorder intervals, as in [`Cfg::intervals`], with
    /// `dom[b].num` as the next free preorder number and `end` first holding the subtree
    /// size. False (nothing built) when the layout order does not settle.
    fn forward_dominators(&mut self) -> bool {
        let idom = &self.idom[..];
        if !(self.forward_ok
            && self.retreating.iter().all(|&(t, p)| {
                let d = idom[t as usize];
                common_dominator(idom, p, d) == d
            }))
        {
            return false;
        }
        let n = idom.len();
        let dom = &mut self.dom;
        dom.resize(
            n,
            BlockDom {
                num: 0,
                pre: 0,
                end: 1,
            },
        );
        for b in (1..n).rev() {
            let size = dom[b].end;
            dom[idom[b] as usize].end += size;
        }
        dom[0].num = 1;
        for b in 1..n {
            let p = idom[b] as usize;
            let pre = dom[p].num;
            dom[p].num += dom[b].end;
            let d = &mut dom[b];
            d.num = pre + 1;
            d.pre = pre;
            d.end += pre;
        }
        true
    }

    /// The first pass of Cooper–Harvey–Kennedy in layout order instead of reverse
    /// postorder, which saves the depth-first search: a block is numbered (`order`) when
    /// it gets its idom, the meet of its predecessors numbered so far (none numbered yet:
    /// it waits for another sweep). In the order pexes lay blocks out, one sweep numbers
    /// nearly every reachable block; a few more catch the rest (loops entered at a block
    /// laid out later). The predecessors a block's meet skipped are kept; if each comes
    /// from a descendant of that block's idom, another pass would change nothing: the
    /// iteration, started from "everything dominates", has reached its fixpoint, which is
    /// the dominator tree whatever the visiting order. False when it has not (the caller
    /// then runs the reverse-postorder version).
    fn layout_dominators(&mut self) -> bool {
        /// Sweeps after the first before giving up on the layout order.
        const MAX_SWEEPS: u32 = 4;
        let n = self.num_blocks();
        self.dom[0].num = 0;
        self.order.push(DomNode {
            block: 0,
            idom: 0,
            size: 1,
            next: 0,
        });
        self.skipped.clear();
        self.pending.clear();
        for b in 1..n {
            if !self.number_block(b) {
                self.pending.push(b as u32);
            }
        }
        let mut sweeps = 0;
        while !self.pending.is_empty() {
            sweeps += 1;
            if sweeps > MAX_SWEEPS {
                return false;
            }
            let before = self.pending.len();
            let mut pending = std::mem::take(&mut self.pending);
            pending.retain(|&b| !self.number_block(b as usize));
            self.pending = pending;
            if self.pending.len() == before {
                // No predecessor of these is numbered: they are unreachable.
                break;
            }
        }
        let (order, dom) = (&self.order, &self.dom);
        self.skipped.iter().all(|&(k, p)| {
            let rp = dom[p as usize].num;
            let idom = order[k as usize].idom;
            rp == NONE || intersect(order, rp, idom) == idom
        })
    }

    /// One step of [`Cfg::layout_dominators`]: numbers block `b` with the meet of its
    /// numbered predecessors; false if none is numbered yet.
    fn number_block(&mut self, b: usize) -> bool {
        let k = self.order.len() as u32;
        let mark = self.skipped.len();
        let mut new = NONE;
        for &p in &self.pred[self.pred_start[b] as usize..self.pred_start[b + 1] as usize] {
            let rp = self.dom[p as usize].num;
            if rp == NONE {
                self.skipped.push((k, p));
            } else if new == NONE {
                new = rp;
            } else {
                new = intersect(&self.order, rp, new);
            }
        }
        if new == NONE {
            self.skipped.truncate(mark);
            return false;
        }
        self.dom[b].num = k;
        self.order.push(DomNode {
            block: b as u32,
            idom: new,
            size: 1,
            next: 0,
        });
        true
    }

    /// Cooper–Harvey–Kennedy on reverse postorder numbers (from a depth-first search),
    /// iterated to its fixpoint: the general case.
    fn rpo_dominators(&mut self) {
        // Postorder by an explicit-stack DFS from the entry (`num` 0 marks "visited").
        self.order.clear();
        self.dfs.clear();
        self.dfs.push((0, self.succ_start[0]));
        self.dom[0].num = 0;
        while let Some(top) = self.dfs.last_mut() {
            let (b, e) = *top;
            if e < self.succ_start[b as usize + 1] {
                top.1 += 1;
                let s = self.succ[e as usize] as usize;
                if self.dom[s].num == NONE {
                    self.dom[s].num = 0;
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
            self.dom[node.block as usize].num = k as u32;
        }
        // Immediate dominators by rpo number: a dominator comes before the blocks it
        // dominates, so walking up the tree means going to smaller numbers.
        let r = self.order.len();
        self.order[0].idom = 0;
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
                    let rp = self.dom[p as usize].num;
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
    }

    /// Preorder intervals of the dominator tree in `order` (whose blocks come after their
    /// idom): subtree sizes (children have larger numbers than their parent), then each
    /// child takes the next free stretch of its parent's interval.
    fn intervals(&mut self) {
        let r = self.order.len();
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

    /// The common valid phi, tested without the counters of [`Cfg::phi`] and without the
    /// predecessor lists: first in a non-entry block, with one entry per predecessor, all
    /// distinct. That is, as many entries as edges into the block (at most 8, to keep this
    /// short), no block listed twice, and exactly one edge from each listed block to this
    /// one (a `br` or `condbr`; a switch goes to `phi`): then the listed blocks account for every edge, so they are the predecessors,
    /// each with one edge, and `phi` would find nothing.
    #[inline]
    pub(super) fn phi_fits(&self, at: &PhiBlock, incoming: &[(ValueId, BlockId)]) -> bool {
        let b = at.block as usize;
        if b == 0 || at.seen_non_phi {
            return false;
        }
        incoming.len() == self.indeg[b] as usize
            && incoming.len() <= 8
            && incoming.iter().enumerate().all(|(j, &(_, BlockId(pb)))| {
                // Exactly one edge from `pb` to `b` (from a switch: ask `phi`).
                let Some(w) = self.succ_start.get(pb as usize..pb as usize + 2) else {
                    return false;
                };
                let one_edge = match self.succ.get(w[0] as usize..w[1] as usize) {
                    Some(&[t]) => t as usize == b,
                    Some(&[t, u]) => (t as usize == b) != (u as usize == b),
                    _ => false,
                };
                one_edge && !incoming[..j].iter().any(|&(_, q)| q.0 == pb)
            })
    }

    /// Phis: only at the start of a non-entry block, one incoming entry per CFG edge. The
    /// manual's "M > 1" (at least two entries) is not a rule: real pexes have single-entry
    /// phis (15 in the corpus). `at` is where the walk is in the block; `i` is the phi.
    #[inline(never)]
    pub(super) fn phi(
        &mut self,
        cx: &mut FnCx<'_>,
        at: &mut PhiBlock,
        i: usize,
        incoming: &[(ValueId, BlockId)],
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
        self.preds();
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
        for &(v, BlockId(pb)) in incoming {
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

    /// Dominance of a phi's incoming value `v` from block `pb`: it must dominate the end
    /// of `pb` (checked when that block is reachable, wherever the phi is). `block` is
    /// where the walk saw `v` defined ([`NOT_YET`]: not reached yet); the caller has
    /// already accepted values from the entry block and from `pb` itself.
    #[inline(never)]
    pub(super) fn incoming_dominance(
        &mut self,
        cx: &mut FnCx<'_>,
        i: usize,
        v: ValueId,
        pb: u32,
        block: u32,
    ) {
        let Some(d) = cx.def_of(v) else { return };
        let db = if block == NOT_YET {
            self.block_of(d)
        } else {
            block
        };
        if pb as usize >= self.num_blocks() || db == 0 || db == pb {
            return;
        }
        self.dominators();
        if !self.reachable(pb) {
            return;
        }
        if !(self.reachable(db) && self.dominates(db, pb)) {
            let msg = format!(
                "{} does not dominate the end of incoming block %b{pb}",
                cx.value_ref(v)
            );
            cx.phase = Phase::Dominance;
            cx.at_inst(i, Rule::Dominance, msg);
        }
    }

    /// A use of instruction value `v`, defined in block `db` (by instruction `d`, needed
    /// only when `db == ub`), by instruction `i` (not a phi) of block `ub`, when the
    /// definition is not earlier in the same block: the definition must dominate the
    /// use, if `ub` is reachable (uses in unreachable blocks are not checked; LLVM does
    /// not either).
    pub(super) fn dominance(
        &mut self,
        cx: &mut FnCx<'_>,
        ub: u32,
        i: usize,
        v: ValueId,
        d: Option<usize>,
        db: u32,
    ) {
        self.dominators();
        if !self.reachable(ub) {
            return;
        }
        let ok = if db == ub {
            d.is_some_and(|d| d < i)
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

/// A branch target that is out of range or the entry block.
#[cold]
#[inline(never)]
fn bad_target(cx: &mut FnCx<'_>, last: usize, t: u32, n: usize) {
    if t as usize >= n {
        cx.at_inst(
            last,
            Rule::Cfg,
            format!("branch target %b{t} is out of range ({n} blocks)"),
        );
    } else {
        // The entry block has no predecessors.
        cx.at_inst(last, Rule::Cfg, "branch to the entry block %b0");
    }
}

/// The nearest common ancestor of `a` and `b` in the dominator tree being built in
/// `order`, where every block's idom has a smaller number than the block.
fn intersect(order: &[DomNode], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while a > b {
            a = order[a as usize].idom;
        }
        while b > a {
            b = order[b as usize].idom;
        }
    }
    a
}
