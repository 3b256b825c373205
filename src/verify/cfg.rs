//! Control flow rules: `blocks N` basic blocks, each ending in exactly one terminator;
//! branch targets in range and never the entry block; phis first in their block, never in
//! the entry block, with one incoming block per predecessor; and SSA dominance.

use super::function::FnCx;
use super::Rule;
use crate::ir::{InstKind, ValueId, ValueRef};
use std::collections::HashMap;
use std::ops::Range;

/// The blocks of a function as instruction ranges, plus edges.
struct Graph {
    blocks: Vec<Range<usize>>,
    /// Successor blocks of each block, one entry per edge (a switch may repeat one).
    succs: Vec<Vec<u32>>,
    /// Predecessor blocks with multiplicity, in edge order.
    preds: Vec<Vec<u32>>,
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
    let mut succs = vec![Vec::new(); n];
    let mut preds = vec![Vec::new(); n];
    let mut ok = true;
    for (b, r) in ranges.iter().enumerate() {
        let last = r.end - 1;
        for i in r.clone() {
            let inst = &f.insts[i];
            if inst.kind.is_terminator() && i != last {
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
        for t in term.successors() {
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
                succs[b].push(t);
                preds[t as usize].push(b as u32);
            }
        }
    }
    ok.then_some(Graph {
        blocks: ranges,
        succs,
        preds,
    })
}

/// Phis: only at the start of a non-entry block, one incoming entry per CFG edge. The
/// manual's "M > 1" (at least two entries) is not a rule: real pexes have single-entry
/// phis (15 in the corpus).
fn phis(cx: &mut FnCx<'_>, g: &Graph) {
    let f = cx.f;
    let n = g.blocks.len();
    for (b, r) in g.blocks.iter().enumerate() {
        // Edges from each predecessor.
        let mut edges: HashMap<u32, usize> = HashMap::new();
        for &p in &g.preds[b] {
            *edges.entry(p).or_default() += 1;
        }
        let mut seen_non_phi = false;
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
            // Entries per incoming block, with the value of the first.
            let mut entries: HashMap<u32, (usize, ValueId)> = HashMap::new();
            for &(v, pb) in incoming.iter() {
                if pb as usize >= n {
                    cx.at_inst(
                        i,
                        Rule::Phi,
                        format!("incoming block %b{pb} is out of range ({n} blocks)"),
                    );
                    continue;
                }
                let e = entries.entry(pb).or_insert((0, v));
                e.0 += 1;
                if e.1 != v {
                    cx.at_inst(
                        i,
                        Rule::Phi,
                        format!("incoming block %b{pb} is listed with different values"),
                    );
                }
            }
            let mut listed: Vec<_> = entries.iter().map(|(k, v)| (*k, v.0)).collect();
            listed.sort_unstable();
            for (pb, count) in listed {
                match edges.get(&pb) {
                    None => cx.at_inst(
                        i,
                        Rule::Phi,
                        format!("incoming block %b{pb} is not a predecessor of %b{b}"),
                    ),
                    // One entry per edge, as LLVM requires: a switch with three cases to
                    // this block lists its block three times. Every real pexe does so
                    // (pnacl.c prints them deduplicated, see binji-dedupe_incoming).
                    Some(&e) if count != e => cx.at_inst(
                        i,
                        Rule::Phi,
                        format!(
                            "incoming block %b{pb} is listed {count} times but has {e} edges \
                             to %b{b}"
                        ),
                    ),
                    Some(_) => {}
                }
            }
            let mut missing: Vec<u32> = edges
                .keys()
                .filter(|p| !entries.contains_key(p))
                .copied()
                .collect();
            missing.sort_unstable();
            for pb in missing {
                cx.at_inst(
                    i,
                    Rule::Phi,
                    format!("no incoming value for predecessor %b{pb}"),
                );
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
        if let Some(&s) = g.succs[bb].get(*k) {
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
            for &p in &g.preds[b as usize] {
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

/// True if block `a` dominates block `b` (both reachable).
fn dominates(idom: &[Option<u32>], a: u32, mut b: u32) -> bool {
    loop {
        if a == b {
            return true;
        }
        match idom[b as usize] {
            Some(p) if p != b => b = p,
            _ => return false,
        }
    }
}

/// Every use of an instruction value is dominated by its definition: in the same block
/// before the use, or in a dominating block. Phi uses count at the end of the incoming
/// block. Uses in unreachable blocks are not checked (LLVM does not either).
fn dominance(cx: &mut FnCx<'_>, g: &Graph) {
    let f = cx.f;
    let (idom, rpo) = dominators(g);
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
                if !(reachable(db) && dominates(&idom, db, pb)) {
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
                reachable(db) && dominates(&idom, db, ub)
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
