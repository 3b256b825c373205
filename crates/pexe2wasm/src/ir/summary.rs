//! A body's code summary: the few facts about its instructions that the module level of
//! the output needs (address-taken functions, `frem`, setjmp/longjmp, the signatures of
//! indirect calls).
//!
//! The decoder gathers it while it decodes each body, where each fact costs a test on a
//! path it takes anyway and every operand's type is at hand; emission reads it instead of
//! walking every instruction of the module a second time, long after they left the cache
//! (decision 0010). Bodies built by hand have none, and emission runs
//! [`CodeSummary::scan`] on them; a test checks that the decoder's summaries equal the
//! scan's.

use super::{BinOp, Callee, FuncId, Function, FunctionDecl, InstKind, Intrinsic, Module, TypeId};

/// What one body's instructions hold that the module level of the output needs, in the
/// IR's own terms (emission derives the wasm signatures). Kept small, one allocation at
/// most: every body has one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeSummary {
    /// The [`Self::taken`] ids, then the [`Self::indirect_sigs`] as runs of
    /// `ret, param count, params...` (type ids).
    words: Box<[u32]>,
    num_taken: u32,
    /// Some `frem` (the output then needs the fmod helpers).
    pub frem: bool,
    /// Some direct call to `llvm.nacl.setjmp` or `llvm.nacl.longjmp` (the output then
    /// gets the longjmp tag and the invocation counter, `lower/sjlj.rs`).
    pub sjlj: bool,
}

/// The pexe types of an indirect call: its result type and its arguments' types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndirectSig<'a> {
    pub ret: TypeId,
    params: &'a [u32],
}

impl IndirectSig<'_> {
    pub fn params(&self) -> impl ExactSizeIterator<Item = TypeId> + '_ {
        self.params.iter().map(|&t| TypeId(t))
    }
}

impl CodeSummary {
    /// Function ids used as operands anywhere but as a direct callee (address-taken
    /// functions), ascending, without repeats.
    pub fn taken(&self) -> &[u32] {
        &self.words[..self.num_taken as usize]
    }

    /// The types of the body's indirect calls, in the order of their first call, repeats
    /// (the same types) removed.
    pub fn indirect_sigs(&self) -> impl Iterator<Item = IndirectSig<'_>> + '_ {
        sig_runs(&self.words[self.num_taken as usize..])
    }

    /// Applies `f` to every type id held (the decoder renumbers the types it reserved).
    pub fn map_types(&mut self, mut f: impl FnMut(&mut TypeId)) {
        let mut i = self.num_taken as usize;
        while i + 2 <= self.words.len() {
            let n = self.words[i + 1] as usize;
            for k in std::iter::once(i).chain(i + 2..i + 2 + n) {
                let mut t = TypeId(self.words[k]);
                f(&mut t);
                self.words[k] = t.0;
            }
            i += 2 + n;
        }
    }

    /// Walks `body` (a body of `m`) once.
    pub fn scan(m: &Module, body: &Function) -> CodeSummary {
        let mut b = SummaryBuilder::default();
        let nf = m.num_functions();
        for inst in &body.insts {
            if let InstKind::Binop {
                op: BinOp::FRem, ..
            } = inst.kind
            {
                b.frem = true;
            }
            inst.kind.for_each_operand(body, |v| {
                if v.0 < nf {
                    b.taken.push(v.0);
                }
            });
            let InstKind::Call(c) = &inst.kind else {
                continue;
            };
            match c.callee {
                Callee::Direct(fid) => b.sjlj |= is_sjlj(&m.functions, fid),
                Callee::Indirect(_) => {
                    // A call whose argument has no type (a body built by hand) gets no
                    // signature: emission finds none to give it either.
                    let params: Option<Vec<TypeId>> = body
                        .args(c)
                        .iter()
                        .map(|&a| m.value_type(body, a))
                        .collect();
                    if let Some(params) = params {
                        b.begin_sig(inst.ty);
                        params.into_iter().for_each(|t| b.sig_param(t));
                        b.end_sig();
                    }
                }
            }
        }
        b.finish()
    }
}

fn sig_runs(mut w: &[u32]) -> impl Iterator<Item = IndirectSig<'_>> + '_ {
    std::iter::from_fn(move || {
        let (&ret, rest) = w.split_first()?;
        let (&n, rest) = rest.split_first()?;
        let (params, rest) = rest.split_at(n as usize);
        w = rest;
        Some(IndirectSig {
            ret: TypeId(ret),
            params,
        })
    })
}

/// Whether a direct call to function `fid` is a setjmp or longjmp.
#[inline]
pub fn is_sjlj(functions: &[FunctionDecl], fid: FuncId) -> bool {
    matches!(
        functions.get(fid.index()).and_then(|d| d.intrinsic),
        Some(Intrinsic::NaclSetjmp | Intrinsic::NaclLongjmp)
    )
}

/// A [`CodeSummary`] being gathered; the decoder keeps one per thread and reuses its
/// buffers from body to body.
#[derive(Debug, Default)]
pub struct SummaryBuilder {
    /// Function ids as met (repeats and any order).
    pub taken: Vec<u32>,
    /// Indirect calls' types, as in [`CodeSummary`]'s words.
    sigs: Vec<u32>,
    /// Where the signature being built starts in `sigs`.
    sig_start: usize,
    pub frem: bool,
    pub sjlj: bool,
}

impl SummaryBuilder {
    /// Starts an indirect call's signature; [`Self::sig_param`] adds its argument types
    /// in order, [`Self::end_sig`] ends it.
    #[inline]
    pub fn begin_sig(&mut self, ret: TypeId) {
        self.sig_start = self.sigs.len();
        self.sigs.extend_from_slice(&[ret.0, 0]);
    }

    #[inline]
    pub fn sig_param(&mut self, t: TypeId) {
        self.sigs.push(t.0);
        self.sigs[self.sig_start + 1] += 1;
    }

    /// Ends the signature, dropping it when the body's calls had it already.
    pub fn end_sig(&mut self) {
        let (done, new) = self.sigs.split_at(self.sig_start);
        if sig_runs(done).any(|s| s.ret.0 == new[0] && s.params == &new[2..]) {
            self.sigs.truncate(self.sig_start);
        }
    }

    /// The summary (`taken` sorted without repeats, so the decoder, which meets
    /// operands in record order, and [`CodeSummary::scan`] agree); empties the builder.
    pub fn finish(&mut self) -> CodeSummary {
        self.taken.sort_unstable();
        self.taken.dedup();
        let num_taken = self.taken.len() as u32;
        self.taken.extend_from_slice(&self.sigs);
        let s = CodeSummary {
            words: Box::from(self.taken.as_slice()),
            num_taken,
            frem: self.frem,
            sjlj: self.sjlj,
        };
        self.taken.clear();
        self.sigs.clear();
        self.frem = false;
        self.sjlj = false;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sigs(s: &CodeSummary) -> Vec<(u32, Vec<u32>)> {
        s.indirect_sigs()
            .map(|g| (g.ret.0, g.params().map(|t| t.0).collect()))
            .collect()
    }

    #[test]
    fn builder_sorts_taken_and_drops_repeated_signatures() {
        let mut b = SummaryBuilder::default();
        b.taken.extend([7, 3, 7, 5]);
        for (ret, params) in [(1, &[2, 3][..]), (1, &[2]), (1, &[2, 3]), (4, &[])] {
            b.begin_sig(TypeId(ret));
            params.iter().for_each(|&t| b.sig_param(TypeId(t)));
            b.end_sig();
        }
        b.sjlj = true;
        let s = b.finish();
        assert_eq!(s.taken(), &[3, 5, 7]);
        assert_eq!(sigs(&s), vec![(1, vec![2, 3]), (1, vec![2]), (4, vec![])]);
        assert!(s.sjlj && !s.frem);
        // The builder is empty again for the next body.
        assert_eq!(b.finish(), CodeSummary::default());
    }

    #[test]
    fn map_types_renumbers_only_the_signatures() {
        let mut b = SummaryBuilder::default();
        b.taken.extend([2, 9]);
        b.begin_sig(TypeId(9));
        b.sig_param(TypeId(2));
        b.sig_param(TypeId(9));
        b.end_sig();
        let mut s = b.finish();
        s.map_types(|t| t.0 += 100);
        assert_eq!(s.taken(), &[2, 9]);
        assert_eq!(sigs(&s), vec![(109, vec![102, 109])]);
    }
}
