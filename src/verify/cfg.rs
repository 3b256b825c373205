//! Control flow rules: `blocks N` basic blocks, each ending in exactly one terminator;
//! branch targets in range and never the entry block; phis first in their block, never in
//! the entry block, with one incoming block per predecessor; and SSA dominance.

use super::function::FnCx;
use super::Rule;
use crate::ir::{InstKind, ValueId, ValueRef};
use std::ops::Range;

/// The blocks of a function as instruction ranges, plus edges (flat adjacency lists).
struct Graph {
    blocks: Vec<Range<usize>>,
    /// Successor blocks of block `b`: `succ[succ_start[b]..succ_start[b + 1]]`, one entry
    /// per edge (a switch may repeat one).
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    /// Predecessor blocks with multiplicity, in edge order, laid out like `succ`.
    pred_start: Vec<u32>,
    pred: Vec<u32>,
}

impl Graph {
    fn succs(&self, b: usize) -> &[u32] {
        &self.succ[self.succ_start[b] as usize..self.succ_start[b + 1] as usize]
    }
    fn preds(&self, b: usize) -> &[u32] {
        &self.pred[self.pred_start[b] as usize..self.pred_start[b + 1] as usize]
    }
}

pub(super) fn check(cx: &mut FnCx<'_>) {
    let Some(g) = blocks(cx) else {
        return;
    };
    phis(cx, &g);
    dominance(cx, &g);
}

/// Splits the body into blocks and checks terminators and targets. `None` when the block
/// layout is too broken to check phis and dominance.
fn blocks(cx: &mut FnCx<'_>) -> Option<Graph> {
    let f = cx.f;
    let n = f.num_blocks as usize;
    if n == 0 {
        cx.at_fn(Rule::Cfg, "function declares 0 basic blocks");
        return None;
    }
    if f.block_starts.len() != n {
        cx.at_fn(
            Rule::Cfg,
            format!(
                "{n} basic blocks declared but {} defined",
                f.block_starts.len()
            ),
        );
        return None;
    }
    let mut ranges = Vec::with_capacity(n);
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
            return None;
        }
        ranges.push(start..end);
    }
    let mut succ_start = Vec::with_capacity(n + 1);
    let mut succ: Vec<u32> = Vec::with_capacity(n * 2);
    let mut pred_count = vec![0u32; n + 1];
    let mut ok = true;
    let mut bad: Vec<(usize, String)> = Vec::new();
    for (b, r) in ranges.iter().enumerate() {
        succ_start.push(succ.len() as u32);
        let last = r.end - 1;
        for i in r.start..last {
            if f.insts[i].kind.is_terminator() {
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
                bad.push((
                    last,
                    format!("branch target %b{t} is out of range ({n} blocks)"),
                ));
                ok = false;
            } else if t == 0 {
                // The entry block has no predecessors.
                bad.push((last, "branch to the entry block %b0".to_string()));
                ok = false;
            } else {
                succ.push(t);
                pred_count[t as usize + 1] += 1;
            }
        });
        for (i, msg) in bad.drain(..) {
            cx.at_inst(i, Rule::Cfg, msg);
        }
    }
    succ_start.push(succ.len() as u32);
    if !ok {
        return None;
    }
    // Predecessors in edge order: blocks ascending, each block's edges in order.
    for b in 0..n {
        pred_count[b + 1] += pred_count[b];
    }
    let pred_start = pred_count;
    let mut fill = pred_start.clone();
    let mut pred = vec![0u32; succ.len()];
    for b in 0..n {
        for &t in &succ[succ_start[b] as usize..succ_start[b + 1] as usize] {
            pred[fill[t as usize] as usize] = b as u32;
            fill[t as usize] += 1;
        }
    }
    Some(Graph {
        blocks: ranges,
        succ_start,
        succ,
        pred_start,
        pred,
    })
}

/// Phis: only at the start of a non-entry block, one incoming entry per CFG edge. The
/// manual's "M > 1" (at least two entries) is not a rule: real pexes have single-entry
/// phis (15 in the corpus).
fn phis(cx: &mut FnCx<'_>, g: &Graph) {
    let f = cx.f;
    if !f
        .insts
        .iter()
        .any(|i| matches!(i.kind, InstKind::Phi { .. }))
    {
        return;
    }
    let n = g.blocks.len();
    // Edges into the current block per predecessor (valid where `edge_stamp[p] == b`),
    // and entries of the current phi per incoming block (valid where `ent_stamp[p] == i`).
    let mut edge_cnt = vec![0u32; n];
    let mut edge_stamp = vec![u32::MAX; n];
    let mut ent_cnt = vec![0u32; n];
    let mut ent_val = vec![ValueId(0); n];
    let mut ent_stamp = vec![u32::MAX; n];
    let mut preds: Vec<u32> = Vec::new();
    let mut listed: Vec<u32> = Vec::new();
    for (b, r) in g.blocks.iter().enumerate() {
        let mut seen_non_phi = false;
        let mut edges_ready = false;
        for i in r.clone() {
            let InstKind::Phi { incoming } = &f.insts[i].kind else {
                seen_non_phi = true;
                continue;
            };
            if b == 0 {
                cx.at_inst(i, Rule::Phi, "phi in the entry block");
                continue;
            }
            if seen_non_phi {
                cx.at_inst(
                    i,
                    Rule::Phi,
                    "phi after a non-phi instruction; phis must start the block",
                );
            }
            if !edges_ready {
                // Edges from each predecessor; `preds` sorted and distinct.
                preds.clear();
                for &p in g.preds(b) {
                    let p = p as usize;
                    if edge_stamp[p] != b as u32 {
                        edge_stamp[p] = b as u32;
                        edge_cnt[p] = 0;
                        preds.push(p as u32);
                    }
                    edge_cnt[p] += 1;
                }
                preds.sort_unstable();
                edges_ready = true;
            }
            // Entries per incoming block, with the value of the first.
            let stamp = i as u32;
            listed.clear();
            for &(v, pb) in incoming.iter() {
                if pb as usize >= n {
                    cx.at_inst(
                        i,
                        Rule::Phi,
                        format!("incoming block %b{pb} is out of range ({n} blocks)"),
                    );
                    continue;
                }
                let k = pb as usize;
                if ent_stamp[k] != stamp {
                    ent_stamp[k] = stamp;
                    ent_cnt[k] = 0;
                    ent_val[k] = v;
                    listed.push(pb);
                }
                ent_cnt[k] += 1;
                if ent_val[k] != v {
                    cx.at_inst(
                        i,
                        Rule::Phi,
                        format!("incoming block %b{pb} is listed with different values"),
                    );
                }
            }
            listed.sort_unstable();
            for &pb in &listed {
                let (count, k) = (ent_cnt[pb as usize], pb as usize);
                if edge_stamp[k] != b as u32 {
                    cx.at_inst(
                        i,
                        Rule::Phi,
                        format!("incoming block %b{pb} is not a predecessor of %b{b}"),
                    );
                } else if count != edge_cnt[k] {
                    // One entry per edge, as LLVM requires: a switch with three cases to
                    // this block lists its block three times. Every real pexe does so
                    // (pnacl.c prints them deduplicated, see binji-dedupe_incoming).
                    let e = edge_cnt[k];
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
            for &pb in &preds {
                if ent_stamp[pb as usize] != stamp {
                    cx.at_inst(
                        i,
                        Rule::Phi,
                        format!("no incoming value for predecessor %b{pb}"),
                    );
                }
            }
        }
    }
}

/// Immediate dominators by the iterative algorithm of Cooper, Harvey and Kennedy.
/// Returns (idom, rpo number) per block; unreachable blocks have neither.
fn dominators(g: &Graph) -> (Vec<Option<u32>>, Vec<Option<u32>>) {
    let n = g.blocks.len();
    // Reverse postorder by an explicit-stack DFS from the entry.
    let mut post = Vec::with_capacity(n);
    let mut visited = vec![false; n];
    let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
    visited[0] = true;
    while let Some((b, k)) = stack.last_mut() {
        let bb = *b as usize;
        if let Some(&s) = g.succs(bb).get(*k) {
            *k += 1;
            if !visited[s as usize] {
                visited[s as usize] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(*b);
            stack.pop();
        }
    }
    let mut rpo_num = vec![None; n];
    let rpo: Vec<u32> = post.iter().rev().copied().collect();
    for (k, &b) in rpo.iter().enumerate() {
        rpo_num[b as usize] = Some(k as u32);
    }
    let mut idom: Vec<Option<u32>> = vec![None; n];
    idom[0] = Some(0);
    let intersect = |idom: &[Option<u32>], mut a: u32, mut b: u32| -> u32 {
        let num = |x: u32| rpo_num[x as usize].unwrap_or(0);
        while a != b {
            while num(a) > num(b) {
                a = idom[a as usize].unwrap_or(0);
            }
            while num(b) > num(a) {
                b = idom[b as usize].unwrap_or(0);
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new: Option<u32> = None;
            for &p in g.preds(b as usize) {
                if idom[p as usize].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(x) => intersect(&idom, p, x),
                });
            }
            if new.is_some() && idom[b as usize] != new {
                idom[b as usize] = new;
                changed = true;
            }
        }
    }
    (idom, rpo_num)
}

/// Preorder interval of every reachable block in the dominator tree: `a` dominates `b`
/// iff `b`'s interval lies inside `a`'s (an O(1) test instead of a walk up the tree).
struct DomTree {
    pre: Vec<u32>,
    /// One past the largest preorder number in the subtree.
    end: Vec<u32>,
}

impl DomTree {
    fn new(idom: &[Option<u32>]) -> DomTree {
        let n = idom.len();
        // Children lists, flat.
        let mut start = vec![0u32; n + 1];
        for (b, d) in idom.iter().enumerate() {
            if let Some(d) = *d {
                if d as usize != b {
                    start[d as usize + 1] += 1;
                }
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut kids = vec![0u32; start[n] as usize];
        for (b, d) in idom.iter().enumerate() {
            if let Some(d) = *d {
                if d as usize != b {
                    kids[fill[d as usize] as usize] = b as u32;
                    fill[d as usize] += 1;
                }
            }
        }
        let mut pre = vec![u32::MAX; n];
        let mut end = vec![0u32; n];
        let mut counter = 0u32;
        let mut stack: Vec<(u32, u32)> = vec![(0, start[0])];
        pre[0] = 0;
        counter += 1;
        while let Some(top) = stack.last_mut() {
            let (v, k) = *top;
            if k < start[v as usize + 1] {
                top.1 += 1;
                let c = kids[k as usize];
                pre[c as usize] = counter;
                counter += 1;
                stack.push((c, start[c as usize]));
            } else {
                end[v as usize] = counter;
                stack.pop();
            }
        }
        DomTree { pre, end }
    }

    /// True if block `a` dominates block `b` (both reachable).
    fn dominates(&self, a: u32, b: u32) -> bool {
        let (pa, pb) = (self.pre[a as usize], self.pre[b as usize]);
        pa <= pb && pb < self.end[a as usize]
    }
}

/// Every use of an instruction value is dominated by its definition: in the same block
/// before the use, or in a dominating block. Phi uses count at the end of the incoming
/// block. Uses in unreachable blocks are not checked (LLVM does not either).
fn dominance(cx: &mut FnCx<'_>, g: &Graph) {
    let f = cx.f;
    let (idom, rpo) = dominators(g);
    let tree = DomTree::new(&idom);
    let reachable = |b: u32| rpo[b as usize].is_some();
    let mut block_of = vec![0u32; f.insts.len()];
    for (b, r) in g.blocks.iter().enumerate() {
        for i in r.clone() {
            block_of[i] = b as u32;
        }
    }
    // Defining instruction of an instruction value.
    let def_of = |v: ValueId| -> Option<usize> {
        match cx.value_ref(v) {
            ValueRef::Inst(k) => f.value_insts.get(k as usize).map(|&i| i as usize),
            _ => None,
        }
    };
    let mut problems = Vec::new();
    for (i, inst) in f.insts.iter().enumerate() {
        let ub = block_of[i];
        if let InstKind::Phi { incoming } = &inst.kind {
            for &(v, pb) in incoming.iter() {
                let Some(d) = def_of(v) else { continue };
                if pb as usize >= g.blocks.len() || !reachable(pb) {
                    continue;
                }
                let db = block_of.get(d).copied().unwrap_or(0);
                if !(reachable(db) && tree.dominates(db, pb)) {
                    problems.push((
                        i,
                        format!(
                            "{} does not dominate the end of incoming block %b{pb}",
                            cx.value_ref(v)
                        ),
                    ));
                }
            }
            continue;
        }
        if !reachable(ub) {
            continue;
        }
        inst.kind.for_each_operand(|v| {
            let Some(d) = def_of(v) else { return };
            let db = block_of.get(d).copied().unwrap_or(0);
            let ok = if db == ub {
                d < i
            } else {
                reachable(db) && tree.dominates(db, ub)
            };
            if !ok {
                problems.push((
                    i,
                    format!(
                        "use of {} is not dominated by its definition",
                        cx.value_ref(v)
                    ),
                ));
            }
        });
    }
    for (i, msg) in problems {
        cx.at_inst(i, Rule::Dominance, msg);
    }
}
