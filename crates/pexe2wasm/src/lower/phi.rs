//! Phi resolution: each phi has its own local, written on every incoming edge. The copies
//! of one edge are a parallel copy: [`edge_copies`] lists them (phi local, source), and
//! the emitter pushes every source on the wasm stack first, then pops the destinations in
//! reverse ([`FnLower::emit_copies`]), so swaps and cycles need no temporaries. Because
//! the copies sit on the edge itself (inside the branch arm), a value that stays live on
//! another edge is never overwritten (no lost copy).

use super::analysis::FnAnalysis;
use super::cfg::Node;
use super::inst::{FnLower, R};
use super::locals::Local;
use crate::ir::{BlockId, Function, Inst, InstKind, ValueId};

/// Phis at the start of block `to`, with their instruction indices.
fn phis(f: &Function, to: BlockId) -> impl Iterator<Item = (usize, &Inst)> + '_ {
    let start = f.block_starts.get(to.index()).copied().unwrap_or(0) as usize;
    f.block_insts(to)
        .iter()
        .enumerate()
        .map(move |(i, inst)| (start + i, inst))
        .take_while(|(_, i)| matches!(i.kind, InstKind::Phi { .. }))
}

/// The local of instruction value `v`, if it has one.
fn local_of(a: &FnAnalysis, first_inst: u32, v: ValueId) -> Option<Local> {
    a.local_of
        .get(v.0.wrapping_sub(first_inst) as usize)
        .copied()
        .filter(|l| l.is_some())
}

/// Whether edge `from → to` (CFG nodes) may carry copies: not from a dispatch node nor
/// into a resume node (neither has phis), and into a block with a phi that has a local
/// (most blocks have none: a quick filter, the phis are looked at only otherwise).
#[inline]
fn may_copy(a: &FnAnalysis, from: Node, to: Node) -> bool {
    !a.cfg.is_dispatch(from)
        && to.0 < a.cfg.n_real
        && a.phi_blocks.get(to.index()).copied().unwrap_or(false)
}

/// True if the edge `from → to` writes any phi local.
pub(crate) fn has_copies(
    a: &FnAnalysis,
    f: &Function,
    first_inst: u32,
    from: Node,
    to: Node,
) -> bool {
    may_copy(a, from, to)
        && phis(f, BlockId(to.0)).any(|(_, i)| {
            i.result()
                .and_then(|v| local_of(a, first_inst, v))
                .is_some()
        })
}

/// The parallel copy of edge `from → to` into `out` (cleared first): (phi local, source)
/// for every phi of `to` with a local, in phi order, leaving out `x = phi [x, ...]` on
/// this edge (it copies nothing). The copies are meant all at once: every source is read
/// before any local is written. `Err` is the index of a phi without a value for the edge.
pub(crate) fn edge_copies(
    a: &FnAnalysis,
    f: &Function,
    first_inst: u32,
    from: Node,
    to: Node,
    out: &mut Vec<(Local, ValueId)>,
) -> Result<(), (usize, BlockId)> {
    out.clear();
    if !may_copy(a, from, to) {
        return Ok(());
    }
    // A resume node's edges are its block's.
    let from = a.cfg.block_of(from);
    for (idx, inst) in phis(f, BlockId(to.0)) {
        let Some(l) = inst.result().and_then(|v| local_of(a, first_inst, v)) else {
            continue;
        };
        let InstKind::Phi { incoming } = &inst.kind else {
            continue;
        };
        let Some(&(src, _)) = f.incoming(*incoming).iter().find(|(_, b)| *b == from) else {
            return Err((idx, from));
        };
        if local_of(a, first_inst, src) == Some(l) && is_inst_result(f, first_inst, src) {
            continue;
        }
        out.push((l, src));
    }
    Ok(())
}

/// Whether `v` is the result of an instruction (not a parameter or constant that happens
/// to share a number range).
fn is_inst_result(f: &Function, first_inst: u32, v: ValueId) -> bool {
    v.0 >= first_inst
        && f.value_insts
            .get((v.0 - first_inst) as usize)
            .and_then(|&d| f.insts.get(d as usize))
            .and_then(|i| i.result())
            .is_some()
}

impl FnLower<'_, '_> {
    /// True if the edge `from → to` (blocks) writes any phi local.
    pub fn has_copies(&self, from: Node, to: Node) -> bool {
        has_copies(&self.a, self.f, self.first_inst, from, to)
    }

    /// Emits the parallel copy of edge `from → to`: its sources pushed in order, then its
    /// locals set in reverse.
    pub fn emit_copies(&mut self, from: Node, to: Node) -> R<()> {
        let mut list = std::mem::take(&mut self.copies);
        if let Err((idx, from)) = edge_copies(&self.a, self.f, self.first_inst, from, to, &mut list)
        {
            self.copies = list;
            return Err(self.err_at(idx, format!("phi has no value for edge from %b{from}")));
        }
        for &(_, src) in &list {
            self.push(src)?;
        }
        for &(l, _) in list.iter().rev() {
            self.sink().local_set(l);
        }
        self.copies = list;
        Ok(())
    }
}
