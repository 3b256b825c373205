//! Phis: each phi has its own local, written on every incoming edge. The copies of one
//! edge are a parallel copy: all sources are pushed on the wasm stack first, then the
//! destinations are popped in reverse, so swaps and cycles need no temporaries. Because
//! the copies sit on the edge itself (inside the branch arm), a value that stays live on
//! another edge is never overwritten (no lost copy).

use super::cfg::NONE;
use super::inst::{FnLower, R};
use crate::ir::{BlockId, InstKind};

impl FnLower<'_, '_> {
    /// Phis at the start of block `to` that need a copy.
    fn phis(&self, to: BlockId) -> impl Iterator<Item = (usize, &crate::ir::Inst)> + '_ {
        let start = self.f.block_starts.get(to.index()).copied().unwrap_or(0) as usize;
        self.f
            .block_insts(to)
            .iter()
            .enumerate()
            .map(move |(i, inst)| (start + i, inst))
            .take_while(|(_, i)| matches!(i.kind, InstKind::Phi { .. }))
    }

    fn phi_local(&self, inst: &crate::ir::Inst) -> u32 {
        inst.result()
            .and_then(|v| {
                self.local_of
                    .get(v.0.wrapping_sub(self.first_inst) as usize)
            })
            .copied()
            .unwrap_or(NONE)
    }

    /// False when block `to` has no phi with a local (most blocks): a quick filter, the
    /// phis themselves are looked at only otherwise.
    #[inline]
    fn phi_block(&self, to: u32) -> bool {
        self.phi_blocks.get(to as usize).copied().unwrap_or(false)
    }

    /// True if the edge `from → to` (blocks) writes any phi local.
    pub fn has_copies(&self, from: u32, to: u32) -> bool {
        // Dispatch nodes and resume nodes (after a setjmp) have no phis.
        if self.cfg.is_dispatch(from) || to >= self.cfg.n_real || !self.phi_block(to) {
            return false;
        }
        self.phis(BlockId(to))
            .any(|(_, i)| self.phi_local(i) != NONE)
    }

    /// Emits the parallel copy of edge `from → to`.
    pub fn emit_copies(&mut self, from: u32, to: u32) -> R<()> {
        if self.cfg.is_dispatch(from) || to >= self.cfg.n_real || !self.phi_block(to) {
            return Ok(());
        }
        // A resume node's edges are its block's.
        let from = self.cfg.block_of(from);
        // (phi local, source) of every phi with a local, in phi order.
        let mut list = std::mem::take(&mut self.copies);
        list.clear();
        for (idx, inst) in self.phis(BlockId(to)) {
            let l = self.phi_local(inst);
            if l == NONE {
                continue;
            }
            let InstKind::Phi { incoming } = &inst.kind else {
                continue;
            };
            let Some(&(src, _)) = self.f.incoming(*incoming).iter().find(|(_, b)| *b == from)
            else {
                return Err(self.err_at(idx, format!("phi has no value for edge from %b{from}")));
            };
            // `x = phi [x, ...]` on this edge copies nothing.
            if self
                .def_of(src)
                .and_then(|d| self.f.insts[d].result())
                .is_some()
                && self.local_of_value(src) == Some(l)
            {
                continue;
            }
            list.push((l, src));
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

    fn local_of_value(&self, v: crate::ir::ValueId) -> Option<u32> {
        if v.0 < self.first_inst {
            return None;
        }
        self.local_of
            .get((v.0 - self.first_inst) as usize)
            .copied()
            .filter(|&l| l != NONE)
    }
}
