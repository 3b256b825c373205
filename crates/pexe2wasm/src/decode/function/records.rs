//! One function per instruction record of a function block: each checks its operands
//! (counts, types, ranges) and returns the instruction and its result type, for
//! `FnDecoder::instruction` to append. All are inlined into that dispatch (the hot path of
//! decoding), so the split costs nothing at run time.

use super::*;

impl FnDecoder<'_, '_> {
    #[inline(always)]
    pub(super) fn binop(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let (a, b, opc, flags) = match *ops {
            [a, b, opc] => (a, b, opc, None),
            [a, b, opc, fl] => {
                let fl = u32::try_from(fl)
                    .or_else(|_| self.err(format!("binop flags {fl} are too large")))?;
                (a, b, opc, Some(fl))
            }
            _ => return self.err("binary operator record needs 3 or 4 operands"),
        };
        let (lhs, tl) = self.operand(a)?;
        let (rhs, tr) = self.operand(b)?;
        if tl != tr {
            return self.err(format!(
                "operands of a binary operator have different types ({} and {})",
                self.ty_name(tl),
                self.ty_name(tr)
            ));
        }
        let Some(s) = self.scalar(tl) else {
            return self.err(format!("binary operator on type {}", self.ty_name(tl)));
        };
        let Some(op) = BinOp::from_code(opc, s.is_float()) else {
            return self.err(format!(
                "binary opcode {opc} is not valid for type {}",
                self.ty_name(tl)
            ));
        };
        // For the code summary: the output then needs the fmod helpers.
        self.summary.frem |= op == BinOp::FRem;
        Ok((
            InstKind::Binop {
                op,
                lhs,
                rhs,
                flags,
            },
            tl,
        ))
    }

    #[inline(always)]
    pub(super) fn cast(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [v, t, opc] = *ops else {
            return self.err("cast record needs 3 operands");
        };
        let (val, tv) = self.operand(v)?;
        let dest = self.type_id(t)?;
        let Some(op) = CastOp::from_code(opc) else {
            return self.err(format!("unknown cast opcode {opc}"));
        };
        if self.scalar(tv).is_none() || self.scalar(dest).is_none() {
            return self.err(format!(
                "{} from {} to {}",
                op.name(),
                self.ty_name(tv),
                self.ty_name(dest)
            ));
        }
        Ok((InstKind::Cast { op, val }, dest))
    }

    #[inline(always)]
    pub(super) fn extract_element(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [v, i] = *ops else {
            return self.err("extractelement record needs 2 operands");
        };
        let (vec, tv) = self.operand(v)?;
        let (index, _) = self.operand(i)?;
        if !self.types.is_vector(tv) {
            return self.err(format!(
                "extractelement from non-vector type {}",
                self.ty_name(tv)
            ));
        }
        Ok((
            InstKind::ExtractElement { vec, index },
            self.types.element(tv),
        ))
    }

    #[inline(always)]
    pub(super) fn insert_element(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [v, e, i] = *ops else {
            return self.err("insertelement record needs 3 operands");
        };
        let (vec, tv) = self.operand(v)?;
        let (elt, te) = self.operand(e)?;
        let (index, _) = self.operand(i)?;
        if !self.types.is_vector(tv) || self.types.element(tv) != te {
            return self.err(format!(
                "insertelement of {} into {}",
                self.ty_name(te),
                self.ty_name(tv)
            ));
        }
        Ok((InstKind::InsertElement { vec, elt, index }, tv))
    }

    #[inline(always)]
    pub(super) fn ret(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        self.block_ended = true;
        let void = self.void();
        Ok(match *ops {
            [] => {
                if self.ret_ty != void {
                    return self.err(format!(
                        "ret void in a function returning {}",
                        self.ty_name(self.ret_ty)
                    ));
                }
                (InstKind::Ret { val: None }, void)
            }
            [v] => {
                let (val, t) = self.operand(v)?;
                if t != self.ret_ty {
                    return self.err(format!(
                        "ret {} in a function returning {}",
                        self.ty_name(t),
                        self.ty_name(self.ret_ty)
                    ));
                }
                (InstKind::Ret { val: Some(val) }, void)
            }
            _ => return self.err("ret record needs 0 or 1 operands"),
        })
    }

    #[inline(always)]
    pub(super) fn br(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        self.block_ended = true;
        let void = self.void();
        Ok(match *ops {
            [b] => (
                InstKind::Br {
                    target: self.block(b)?,
                },
                void,
            ),
            [t, f, c] => {
                let then_bb = self.block(t)?;
                let else_bb = self.block(f)?;
                let (cond, tc) = self.operand(c)?;
                let i1 = self.i1();
                if tc != i1 {
                    return self.err(format!(
                        "branch condition has type {}, not i1",
                        self.ty_name(tc)
                    ));
                }
                (
                    InstKind::CondBr {
                        cond,
                        then_bb,
                        else_bb,
                    },
                    void,
                )
            }
            _ => return self.err("br record needs 1 or 3 operands"),
        })
    }

    #[inline(always)]
    pub(super) fn switch(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        self.block_ended = true;
        let [t, c, def, n, cases @ ..] = ops else {
            return self.err("switch record needs at least 4 operands");
        };
        let ty = self.type_id(*t)?;
        let Type::Int(w) = *self.types.ty(ty) else {
            return self.err(format!("switch on non-integer type {}", self.ty_name(ty)));
        };
        let (cond, tc) = self.operand(*c)?;
        if tc != ty {
            return self.err(format!(
                "switch condition has type {}, not {}",
                self.ty_name(tc),
                self.ty_name(ty)
            ));
        }
        let default = self.block(*def)?;
        if *n > (cases.len() / 4) as u64 || cases.len() as u64 != n * 4 {
            return self.err(format!(
                "switch declares {n} cases but has {} case operands",
                cases.len()
            ));
        }
        let mut out = Vec::with_capacity(*n as usize);
        for c in cases.chunks_exact(4) {
            if c[0] != 1 || c[1] != 1 {
                return self.err("switch case ranges are not allowed in PNaCl bitcode");
            }
            let value = sign_unrotate(c[2]);
            let v = value as u64;
            let fits = w == 64 || {
                let sh = 64 - w;
                (((v << sh) as i64) >> sh) as u64 == v || (v >> w) == 0
            };
            if !fits {
                return self.err(format!("switch case value {value} does not fit i{w}"));
            }
            out.push(SwitchCase {
                value,
                target: self.block(c[3])?,
            });
        }
        let void = self.void();
        Ok((
            InstKind::Switch(Box::new(Switch {
                cond,
                default,
                cases: out,
            })),
            void,
        ))
    }

    #[inline(always)]
    pub(super) fn unreachable(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        self.block_ended = true;
        if !ops.is_empty() {
            return self.err("unreachable record takes no operands");
        }
        Ok((InstKind::Unreachable, self.void()))
    }

    #[inline(always)]
    pub(super) fn phi(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [t, pairs @ ..] = ops else {
            return self.err("phi record needs a type");
        };
        let ty = self.type_id(*t)?;
        if pairs.is_empty() || pairs.len() % 2 != 0 {
            return self.err("phi record needs (value, block) pairs");
        }
        let phi_value = self.next_value() - self.f.first_const_rel();
        let next = self.next_value() as i64;
        // Straight into the body's pool (a failed record fails the whole body).
        let start = self.f.phi_incoming.len() as u32;
        for p in pairs.chunks_exact(2) {
            // i128: a sign-rotated operand can decode to i64::MIN.
            let v = next as i128 - sign_unrotate(p[0]) as i128;
            if !(0..=u32::MAX as i128).contains(&v) {
                return self.err(format!("phi operand value id {v} is out of range"));
            }
            let v = v as u32;
            if v >= self.next_value() && v >= self.num_module_values {
                self.pending.push((v, ty, phi_value));
            } else {
                let tv = self.operand_ty(v)?;
                if tv != ty {
                    return self.err(format!(
                        "phi of type {} has incoming {} of type {}",
                        self.ty_name(ty),
                        self.name_of(v),
                        self.ty_name(tv)
                    ));
                }
            }
            let b = self.block(p[1])?;
            self.f.phi_incoming.push((ValueId(v), b));
        }
        let incoming = Span {
            start,
            len: (pairs.len() / 2) as u32,
        };
        Ok((InstKind::Phi { incoming }, ty))
    }

    #[inline(always)]
    pub(super) fn alloca(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [s, a] = *ops else {
            return self.err("alloca record needs 2 operands");
        };
        let (size, _) = self.operand(s)?;
        let align = self.align(a)?;
        Ok((InstKind::Alloca { size, align }, self.i32()))
    }

    #[inline(always)]
    pub(super) fn load(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [p, a, t] = *ops else {
            return self.err("load record needs 3 operands");
        };
        let (ptr, tp) = self.operand(p)?;
        self.expect_ptr(tp, "load")?;
        let align = self.align(a)?;
        let ty = self.type_id(t)?;
        if self.scalar(ty).is_none() {
            return self.err(format!("load of type {}", self.ty_name(ty)));
        }
        Ok((InstKind::Load { ptr, align }, ty))
    }

    #[inline(always)]
    pub(super) fn store(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [p, v, a] = *ops else {
            return self.err("store record needs 3 operands");
        };
        let (ptr, tp) = self.operand(p)?;
        self.expect_ptr(tp, "store")?;
        let (val, tv) = self.operand(v)?;
        if self.scalar(tv).is_none() {
            return self.err(format!("store of type {}", self.ty_name(tv)));
        }
        let align = self.align(a)?;
        Ok((InstKind::Store { ptr, val, align }, self.void()))
    }

    #[inline(always)]
    pub(super) fn cmp(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [a, b, p] = *ops else {
            return self.err("compare record needs 3 operands");
        };
        let (lhs, tl) = self.operand(a)?;
        let (rhs, tr) = self.operand(b)?;
        if tl != tr {
            return self.err(format!(
                "compared values have different types ({} and {})",
                self.ty_name(tl),
                self.ty_name(tr)
            ));
        }
        let Some(s) = self.scalar(tl) else {
            return self.err(format!("compare of type {}", self.ty_name(tl)));
        };
        let Some(pred) = CmpPred::from_code(p) else {
            return self.err(format!("unknown compare predicate {p}"));
        };
        if pred.is_float() != s.is_float() {
            return self.err(format!(
                "predicate {} cannot compare {}",
                pred.name(),
                self.ty_name(tl)
            ));
        }
        let i1 = self.i1();
        let ty = match *self.types.ty(tl) {
            Type::Vector { len, .. } => {
                let Some(t) = self.types.find(&Type::Vector { len, elem: i1 }) else {
                    return self.err(format!(
                        "a compare of {} needs type <{len} x i1>, which is not declared",
                        self.ty_name(tl)
                    ));
                };
                self.use_type(t)
            }
            _ => i1,
        };
        Ok((InstKind::Cmp { pred, lhs, rhs }, ty))
    }

    #[inline(always)]
    pub(super) fn select(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [t, f, c] = *ops else {
            return self.err("select record needs 3 operands");
        };
        let (tv, tt) = self.operand(t)?;
        let (fv, tf) = self.operand(f)?;
        let (cond, tc) = self.operand(c)?;
        if tt != tf {
            return self.err(format!(
                "select between different types ({} and {})",
                self.ty_name(tt),
                self.ty_name(tf)
            ));
        }
        let i1 = self.i1();
        let cond_ok = tc == i1
            || (self.types.element(tc) == i1
                && self.types.vector_len(tc) == self.types.vector_len(tt));
        if !cond_ok {
            return self.err(format!(
                "select condition of type {} for values of type {}",
                self.ty_name(tc),
                self.ty_name(tt)
            ));
        }
        Ok((InstKind::Select { cond, t: tv, f: fv }, tt))
    }

    #[inline(always)]
    pub(super) fn call(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [cc, callee, args @ ..] = ops else {
            return self.err("call record needs at least 2 operands");
        };
        let target = self.rel(*callee)?;
        if target as usize >= self.functions.len() {
            return self.err(format!(
                "direct call to {}, which is not a function",
                self.name_of(target)
            ));
        }
        // The table outlives `self`'s borrow: no copy of the signature needed.
        let types: &TypeTable = self.types;
        let ft = types
            .function(self.functions[target as usize].ty)
            .expect("checked when read");
        let ret = ft.ret;
        let params = &ft.params;
        if params.len() != args.len() {
            return self.err(format!(
                "call to @f{target} passes {} arguments but it takes {}",
                args.len(),
                params.len()
            ));
        }
        let cc_info = self.cc_word(*cc)?;
        // For the code summary: the output then needs the longjmp machinery.
        self.summary.sjlj |= is_sjlj(self.functions, FuncId(target));
        let start = self.f.call_args.len() as u32;
        for (i, (&a, &pt)) in args.iter().zip(params).enumerate() {
            let (v, t) = self.operand(a)?;
            if t != pt {
                return self.err(format!(
                    "argument {i} of the call to @f{target} has type {}, expected {}",
                    self.ty_name(t),
                    self.ty_name(pt)
                ));
            }
            self.f.call_args.push(v);
        }
        let args = Span {
            start,
            len: args.len() as u32,
        };
        Ok((
            InstKind::Call(Call {
                callee: Callee::Direct(FuncId(target)),
                args,
                cc_info,
            }),
            ret,
        ))
    }

    #[inline(always)]
    pub(super) fn call_indirect(&mut self, ops: &[u64]) -> Result<(InstKind, TypeId)> {
        let [cc, callee, ret, args @ ..] = ops else {
            return self.err("indirect call record needs at least 3 operands");
        };
        let (callee, tc) = self.operand(*callee)?;
        self.expect_ptr(tc, "indirect call")?;
        let ret = self.type_id(*ret)?;
        if matches!(self.types.ty(ret), Type::Function(_)) {
            return self.err("indirect call returning a function type");
        }
        let cc_info = self.cc_word(*cc)?;
        let start = self.f.call_args.len() as u32;
        // The code summary keeps the call's types (emission derives the wasm
        // signature from them): they are at hand here, and cold by emission.
        self.summary.begin_sig(ret);
        for &a in args {
            let (v, t) = self.operand(a)?;
            if matches!(self.types.ty(t), Type::Void | Type::Function(_)) {
                return self.err("indirect call argument of void or function type");
            }
            self.f.call_args.push(v);
            self.summary.sig_param(t);
        }
        self.summary.end_sig();
        let args = Span {
            start,
            len: args.len() as u32,
        };
        Ok((
            InstKind::Call(Call {
                callee: Callee::Indirect(callee),
                args,
                cc_info,
            }),
            ret,
        ))
    }
}
