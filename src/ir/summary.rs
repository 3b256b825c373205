//! A body's code summary: the few facts about its instructions that the module level of
//! the output needs (address-taken functions, `frem`, setjmp/longjmp, indirect calls).
//!
//! The decoder computes it right after decoding each body, while the instructions are
//! still in cache; emission reads it instead of walking every instruction of the module a
//! second time, long after they left the cache (decision 0010, session 8). Bodies built
//! by hand have none, and emission runs the same [`CodeSummary::scan`] on them.

use super::{BinOp, Callee, Function, FunctionDecl, InstKind, Intrinsic};

/// What [`CodeSummary::scan`] found in one body. Only the IR's own terms: the indirect
/// calls are instruction indices, and emission derives their wasm signatures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeSummary {
    /// Function ids used as operands anywhere but as a direct callee (address-taken
    /// functions; repeats kept, as found).
    pub taken: Vec<u32>,
    /// Indices into [`Function::insts`] of the indirect calls, in instruction order.
    pub indirect_calls: Vec<u32>,
    /// Some `frem` (the output then needs the fmod helpers).
    pub frem: bool,
    /// Some direct call to `llvm.nacl.setjmp` or `llvm.nacl.longjmp` (the output then
    /// gets the longjmp tag and the invocation counter, `lower/sjlj.rs`).
    pub sjlj: bool,
}

impl CodeSummary {
    /// Walks `body` once. `functions` are the module's declarations, their intrinsics
    /// resolved; function ids are the value ids below `functions.len()`.
    pub fn scan(body: &Function, functions: &[FunctionDecl]) -> CodeSummary {
        let mut s = CodeSummary::default();
        let nf = functions.len() as u32;
        for (i, inst) in body.insts.iter().enumerate() {
            if let InstKind::Binop {
                op: BinOp::FRem, ..
            } = inst.kind
            {
                s.frem = true;
            }
            let taken = &mut s.taken;
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
                        Callee::Direct(fid) => {
                            s.sjlj |= matches!(
                                functions.get(fid as usize).and_then(|d| d.intrinsic),
                                Some(Intrinsic::NaclSetjmp | Intrinsic::NaclLongjmp)
                            );
                        }
                        Callee::Indirect(_) => s.indirect_calls.push(i as u32),
                    }
                }
            });
        }
        s
    }
}
