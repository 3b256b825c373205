//! A body's code summary: the few facts about its instructions that the module level of
//! the output needs (address-taken functions, `frem`, setjmp/longjmp, indirect calls).
//!
//! The decoder gathers it while it decodes each body, where each fact costs a test on a
//! path it takes anyway; emission reads it instead of walking every instruction of the
//! module a second time, long after they left the cache (decision 0010, session 8).
//! Bodies built by hand have none, and emission runs [`CodeSummary::scan`] on them; a
//! test checks that the decoder's summaries equal the scan's.

use super::{BinOp, Callee, Function, FunctionDecl, InstKind, Intrinsic};

/// What one body's instructions hold that the module level of the output needs. Only the
/// IR's own terms: the indirect calls are instruction indices, and emission derives
/// their wasm signatures. Kept small (one allocation at most): every body has one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeSummary {
    /// [`Self::taken`] then [`Self::indirect_calls`].
    ids: Box<[u32]>,
    num_taken: u32,
    /// Some `frem` (the output then needs the fmod helpers).
    pub frem: bool,
    /// Some direct call to `llvm.nacl.setjmp` or `llvm.nacl.longjmp` (the output then
    /// gets the longjmp tag and the invocation counter, `lower/sjlj.rs`).
    pub sjlj: bool,
}

impl CodeSummary {
    /// Function ids used as operands anywhere but as a direct callee (address-taken
    /// functions), ascending, without repeats.
    pub fn taken(&self) -> &[u32] {
        &self.ids[..self.num_taken as usize]
    }

    /// Indices into [`Function::insts`] of the indirect calls, in instruction order.
    pub fn indirect_calls(&self) -> &[u32] {
        &self.ids[self.num_taken as usize..]
    }

    /// Walks `body` once. `functions` are the module's declarations, their intrinsics
    /// resolved; function ids are the value ids below `functions.len()`.
    pub fn scan(body: &Function, functions: &[FunctionDecl]) -> CodeSummary {
        let mut b = SummaryBuilder::default();
        let nf = functions.len() as u32;
        for (i, inst) in body.insts.iter().enumerate() {
            if let InstKind::Binop {
                op: BinOp::FRem, ..
            } = inst.kind
            {
                b.frem = true;
            }
            let taken = &mut b.taken;
            let take = |v: super::ValueId| {
                if v.0 < nf {
                    taken.push(v.0);
                }
            };
            // The frequent kinds are handled inline; calls come back in the second
            // closure, so they need no second `match`.
            inst.kind.for_each_operand_unordered(body, take, |kind| {
                if let InstKind::Call(call) = kind {
                    match call.callee {
                        Callee::Direct(fid) => b.sjlj |= is_sjlj(functions, fid),
                        Callee::Indirect(_) => b.indirect_calls.push(i as u32),
                    }
                }
            });
        }
        b.finish()
    }
}

/// Whether a direct call to function `fid` is a setjmp or longjmp.
#[inline]
pub fn is_sjlj(functions: &[FunctionDecl], fid: u32) -> bool {
    matches!(
        functions.get(fid as usize).and_then(|d| d.intrinsic),
        Some(Intrinsic::NaclSetjmp | Intrinsic::NaclLongjmp)
    )
}

/// A [`CodeSummary`] being gathered; the decoder keeps one per thread and reuses its
/// buffers from body to body.
#[derive(Debug, Default)]
pub struct SummaryBuilder {
    /// Function ids as met (repeats and any order).
    pub taken: Vec<u32>,
    pub indirect_calls: Vec<u32>,
    pub frem: bool,
    pub sjlj: bool,
}

impl SummaryBuilder {
    /// The summary (`taken` sorted without repeats, so the decoder, which meets
    /// operands in record order, and [`CodeSummary::scan`] agree); empties the builder.
    pub fn finish(&mut self) -> CodeSummary {
        self.taken.sort_unstable();
        self.taken.dedup();
        let num_taken = self.taken.len() as u32;
        self.taken.extend_from_slice(&self.indirect_calls);
        let s = CodeSummary {
            ids: Box::from(self.taken.as_slice()),
            num_taken,
            frem: self.frem,
            sjlj: self.sjlj,
        };
        self.taken.clear();
        self.indirect_calls.clear();
        self.frem = false;
        self.sjlj = false;
        s
    }
}
