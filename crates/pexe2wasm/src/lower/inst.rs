//! Instructions: values, operands, arithmetic, compares, casts, memory, calls.
//!
//! Narrow integers (i1, i8, i16) live in i32 and may carry garbage above their width;
//! `push` reports whether a value is "clean" (zero-extended), and users normalize only
//! when the result depends on the upper bits. Parameters, call results, loads and
//! compare results are clean; calls and returns pass narrow values clean.

use wasm_encoder::{Ieee32, Ieee64, MemArg, ValType};

use super::analysis::{reuse, FnAnalysis};
use super::cfg::NONE;
use super::code::Code;
use super::locals::Local;
use super::sink::Sink;
use super::structurize::Nest;
use super::{Libm, LowerCtx, LowerError, Lowered, Scratch, Used};
use crate::bitstream::Position;
use crate::ir::{
    BinOp, Callee, CastOp, CmpPred, ConstValue, Function as IrFunction, Inst, InstKind, Module,
    Scalar, TypeId, ValueId, ValueRef,
};

/// The lowering's internal result. The error is boxed so `R<T>` stays a register or two
/// wide: every `push`/`emit_inst`/`scalar` call returns one, and a full [`LowerError`]
/// (message, position) would go through memory on every call. Errors are rare (the
/// verifier ran first); `lower_function_with` unboxes at the public boundary.
pub(crate) type R<T> = Result<T, Box<LowerError>>;

/// The emitter of one function: writes the body from the analysis (`analysis.rs`). It
/// holds the analysis (read only), the body with its peephole state (`code.rs`), the
/// structurizer's open constructs (`structurize.rs`) and what emission learns as it goes
/// (clean flags, features used).
pub(crate) struct FnLower<'a, 'm> {
    pub cx: &'a LowerCtx<'m>,
    pub m: &'m Module,
    pub f: &'a IrFunction,
    pub nf: u32,
    pub first_inst: u32,
    /// Types of operands (`ty`), with the module-wide lookups done once.
    vtypes: super::ValueTypes<'a>,
    /// Values from here on are instruction values (see [`FnLower::value_ref`]).
    inst_min: u32,
    /// What the analysis computed (never changed while emitting).
    pub a: FnAnalysis,
    /// The body being written.
    pub code: Code,
    /// The structurizer's open constructs and work list.
    pub nest: Nest,
    /// Per instruction value: clean flag (narrow integers zero-extended), set as its
    /// statement is emitted.
    pub clean: Vec<bool>,
    pub used: Used,
    /// Scratch for the parallel copies of one edge: (phi local, source).
    pub copies: Vec<(Local, ValueId)>,
}

impl<'a, 'm> FnLower<'a, 'm> {
    /// The emitter of `f`, with the body started (its local declarations).
    pub fn new(
        cx: &'a LowerCtx<'m>,
        f: &'a IrFunction,
        a: FnAnalysis,
        scratch: &mut Scratch,
    ) -> Self {
        let m = cx.module;
        let first_inst = f.first_inst_value();
        let clean = reuse(&mut scratch.clean, f.value_insts.len(), false);
        // The body is built in place, the local declarations first, and `run` hands it
        // over whole: no copy into an exact-size body at the end.
        let mut bytes = Vec::with_capacity(a.locals.n_decls * 6 + 5 + f.insts.len() * 8 + 16);
        a.locals.write_decls(&mut bytes);
        let nest = Nest::new(a.cfg.succs.len(), scratch);
        let mut copies = std::mem::take(&mut scratch.copies);
        copies.clear();
        FnLower {
            cx,
            m,
            f,
            nf: m.num_functions(),
            first_inst,
            vtypes: super::ValueTypes::new(m, f, cx.i32_type),
            inst_min: m
                .num_functions()
                .max(f.base)
                .max(f.first_const())
                .max(first_inst),
            used: Used {
                simd: a.vectors,
                ..Used::default()
            },
            a,
            code: Code::new(bytes),
            nest,
            clean,
            copies,
        }
    }

    /// Lowers the function; its working memory goes back to `scratch` for the next one.
    pub fn run(mut self, scratch: &mut Scratch) -> R<Lowered> {
        self.prologue();
        let calls_setjmp = !self.a.cfg.sites.is_empty();
        if calls_setjmp {
            self.sjlj_enter()?;
        }
        self.structurize()?;
        if calls_setjmp {
            self.sjlj_leave()?;
        }
        if self.a.has_result {
            self.sink().unreachable();
        }
        self.sink().end();
        // The body: local declarations (written by `new`), then the code.
        let FnLower {
            a,
            code,
            nest,
            clean,
            used,
            copies,
            ..
        } = self;
        scratch.clean = clean;
        scratch.copies = copies;
        nest.recycle(scratch);
        let irreducible = a.cfg.irreducible_dispatchers() > 0;
        a.recycle(scratch);
        Ok(Lowered {
            body: code.bytes,
            used,
            irreducible,
        })
    }

    /// Appends instructions to the body (`sink.rs`).
    #[inline(always)]
    pub fn sink(&mut self) -> Sink<'_> {
        self.code.sink()
    }

    /// An invalid-input error at instruction `idx` (out of line: errors are cold).
    #[cold]
    #[inline(never)]
    pub fn err_at(&self, idx: usize, msg: impl Into<String>) -> Box<LowerError> {
        Box::new(LowerError::Invalid {
            function: self.f.decl,
            message: msg.into(),
            position: Position::at_bit(self.f.inst_bit(idx)),
        })
    }

    /// An unsupported-feature error at instruction `idx` (out of line: errors are cold).
    #[cold]
    #[inline(never)]
    pub fn unsupported(&self, idx: usize, msg: impl Into<String>) -> Box<LowerError> {
        Box::new(LowerError::Unsupported {
            function: self.f.decl,
            message: msg.into(),
            position: Position::at_bit(self.f.inst_bit(idx)),
        })
    }

    /// An invalid-input error at the function's own position (no instruction to name).
    #[cold]
    #[inline(never)]
    fn err_in_function(&self, msg: String) -> Box<LowerError> {
        Box::new(LowerError::Invalid {
            function: self.f.decl,
            message: msg,
            position: Position::at_bit(self.f.bit),
        })
    }

    /// An unsupported-feature error at the function's own position.
    #[cold]
    #[inline(never)]
    fn unsupported_in_function(&self, msg: &str) -> Box<LowerError> {
        Box::new(LowerError::Unsupported {
            function: self.f.decl,
            message: msg.into(),
            position: Position::at_bit(self.f.bit),
        })
    }

    fn prologue(&mut self) {
        if self.a.frame.saved_sp.is_none() {
            return;
        }
        let fr = &self.a.frame;
        let (sp, saved, fp) = (self.cx.stack_pointer, fr.saved_sp, fr.fp);
        let (size, align) = (fr.size, fr.align);
        let mut s = self.sink();
        s.global_get(sp).local_tee(saved);
        if size > 0 {
            s.i32_const(size as i32).i32_sub();
        }
        if align > 16 {
            s.i32_const(-(align as i32)).i32_and();
        }
        s.local_tee(fp).global_set(sp);
    }

    /// Restores `__stack_pointer` before a return.
    pub fn epilogue(&mut self) {
        if self.a.frame.saved_sp.is_some() {
            let (sp, saved) = (self.cx.stack_pointer, self.a.frame.saved_sp);
            self.sink().local_get(saved).global_set(sp);
        }
    }

    /// The type of a value.
    #[inline]
    pub fn ty(&self, v: ValueId) -> R<TypeId> {
        match self.vtypes.get(v) {
            Some(t) => Ok(t),
            None => Err(self.err_in_function(format!("value id {} is out of range", v.0))),
        }
    }

    #[inline]
    pub fn is_vector(&self, t: TypeId) -> bool {
        self.cx.is_vector(t)
    }

    /// [`FnLower::is_vector`] for types of this function's values: false at once in a
    /// function without vectors (the common case).
    #[inline]
    fn vector_value(&self, t: TypeId) -> bool {
        self.a.vectors && self.cx.is_vector(t)
    }

    /// The scalar kind of a non-vector type; the check is inlined, the errors are not.
    #[inline]
    pub fn scalar(&self, t: TypeId, idx: usize) -> R<Scalar> {
        match self.cx.scalar(t) {
            Some(s) if !self.vector_value(t) => Ok(s),
            _ => Err(self.scalar_error(t, idx)),
        }
    }

    #[cold]
    #[inline(never)]
    fn scalar_error(&self, t: TypeId, idx: usize) -> Box<LowerError> {
        if self.cx.is_vector(t) {
            self.unsupported(idx, "vector (SIMD) types")
        } else {
            self.err_at(idx, "operand is not a scalar value")
        }
    }

    /// Index of the instruction defining value `v`, if `v` is an instruction value.
    pub fn def_of(&self, v: ValueId) -> Option<usize> {
        if v.0 < self.first_inst {
            return None;
        }
        self.f
            .value_insts
            .get((v.0 - self.first_inst) as usize)
            .map(|&i| i as usize)
    }

    /// The constant integer value of `v`, if it is an integer constant.
    pub fn const_int(&self, v: ValueId) -> Option<u64> {
        match self.f.value_ref(v, self.nf) {
            ValueRef::Const(c) => match self.f.consts.get(c as usize)?.value {
                ConstValue::Int(n) => Some(n),
                ConstValue::Undef => Some(0),
                _ => None,
            },
            _ => None,
        }
    }

    /// `Function::value_ref`, deciding the common case (an instruction value: at or
    /// above every bound that function compares with) in one comparison.
    #[inline]
    fn value_ref(&self, v: ValueId) -> ValueRef {
        if v.0 >= self.inst_min {
            ValueRef::Inst(v.0 - self.first_inst)
        } else {
            self.f.value_ref(v, self.nf)
        }
    }

    /// Pushes a value; returns whether it is clean (narrow integers zero-extended).
    ///
    /// Inlined: most operands are instruction values in a local, one `local.get`, without
    /// a call; everything else (and every error) is [`FnLower::push_value`].
    #[inline(always)]
    pub fn push(&mut self, v: ValueId) -> R<bool> {
        // A value with a local is never inlined (the analysis gives locals only to phis,
        // which stackify never inlines, and to values it left out of line), so the local
        // alone decides, without looking up the defining instruction.
        if v.0 >= self.inst_min {
            let n = (v.0 - self.first_inst) as usize;
            if let Some(&l) = self.a.local_of.get(n) {
                if l.is_some() {
                    debug_assert!(!self.a.inline[self.f.value_insts[n] as usize]);
                    self.get_local(l);
                    return Ok(self.clean[n]);
                }
            }
        }
        self.push_value(v)
    }

    /// `local.get l` of an instruction value, a `local.tee` right after its set
    /// ([`Code::get_local`]).
    #[inline(always)]
    fn get_local(&mut self, l: Local) {
        self.code.get_local(l);
    }

    /// [`FnLower::push`] in full.
    #[inline(never)]
    fn push_value(&mut self, v: ValueId) -> R<bool> {
        match self.value_ref(v) {
            ValueRef::Function(i) => {
                let slot = self.cx.table_slot.get(i.index()).copied().unwrap_or(0);
                if slot == 0 {
                    return Err(self.err_in_function(format!(
                        "address of @f{i} is used but it has no table slot"
                    )));
                }
                self.sink().i32_const(slot as i32);
                Ok(true)
            }
            ValueRef::Global(i) => {
                let a = self.cx.global_addr.get(i.index()).copied().unwrap_or(0);
                self.sink().i32_const(a as i32);
                Ok(true)
            }
            ValueRef::Param(p) => {
                self.sink().local_get(Local::new(p));
                Ok(true)
            }
            ValueRef::Const(c) => {
                let Some(k) = self.f.consts.get(c as usize).copied() else {
                    return Err(self.err_at(0, format!("constant %c{c} out of range")));
                };
                self.push_const(k.ty, k.value)?;
                Ok(true)
            }
            ValueRef::Inst(n) => {
                let n = n as usize;
                let Some(&idx) = self.f.value_insts.get(n) else {
                    return Err(self.err_at(0, format!("value %v{n} out of range")));
                };
                if self.a.inline[idx as usize] {
                    self.emit_inst(idx as usize)
                } else {
                    let l = self.a.local_of[n];
                    if l.is_none() {
                        return Err(self.err_at(idx as usize, "value used but never stored"));
                    }
                    self.get_local(l);
                    Ok(self.clean[n])
                }
            }
        }
    }

    fn push_const(&mut self, ty: TypeId, val: ConstValue) -> R<()> {
        let bits = match val {
            ConstValue::Int(b) | ConstValue::Float(b) => b,
            ConstValue::Undef => 0,
        };
        // By local slot (a byte per type) rather than by `ValType`: the same cases.
        match self.cx.slot(ty) {
            Some(0) => {
                self.sink().i32_const(bits as u32 as i32);
            }
            Some(1) => {
                self.sink().i64_const(bits as i64);
            }
            Some(2) => {
                self.sink().f32_const(Ieee32::new(bits as u32));
            }
            Some(3) => {
                self.sink().f64_const(Ieee64::new(bits));
            }
            // The only vector constant PNaCl has is undef.
            Some(_) if bits == 0 => {
                self.sink().v128_const(0);
                self.used.simd = true;
            }
            _ => return Err(self.unsupported_in_function("a constant of this type")),
        }
        Ok(())
    }

    /// Zero-extends a narrow value in place (if not already clean).
    pub fn zext(&mut self, bits: u32, clean: bool) {
        if bits < 32 && !clean {
            self.sink().i32_const(((1u64 << bits) - 1) as i32).i32_and();
        }
    }

    /// [`Code::negate_cond`].
    pub fn negate_cond(&mut self) {
        self.code.negate_cond();
    }

    /// [`Code::drop_eqz`].
    pub fn drop_eqz(&mut self) -> bool {
        self.code.drop_eqz()
    }

    /// Sign-extends a narrow value in place.
    pub fn sext(&mut self, bits: u32) {
        match bits {
            8 => {
                self.sink().i32_extend8_s();
                self.used.sign_ext = true;
            }
            16 => {
                self.sink().i32_extend16_s();
                self.used.sign_ext = true;
            }
            b if b < 32 => {
                let sh = (32 - b) as i32;
                self.sink()
                    .i32_const(sh)
                    .i32_shl()
                    .i32_const(sh)
                    .i32_shr_s();
            }
            _ => {}
        }
    }

    /// Pushes a value of integer type `bits` wide, normalized (zero-extended) if narrow.
    pub fn push_zext(&mut self, v: ValueId, bits: u32) -> R<()> {
        let c = self.push(v)?;
        self.zext(bits, c);
        Ok(())
    }

    /// Pushes a value normalized for a call argument or return (narrow ints clean).
    pub fn push_arg(&mut self, v: ValueId) -> R<()> {
        let t = self.ty(v)?;
        match self.cx.narrow_int(t) {
            Some(b) => self.push_zext(v, b),
            None => self.push(v).map(|_| ()),
        }
    }

    /// Emits a statement: an instruction that is not inlined. Values with uses go to their
    /// local; unused values are dropped.
    pub fn emit_stmt(&mut self, idx: usize) -> R<()> {
        let inst = &self.f.insts[idx];
        if matches!(inst.kind, InstKind::Phi { .. }) {
            return Ok(());
        }
        let clean = self.emit_inst(idx)?;
        if let Some(v) = inst.result() {
            if self.cx.slot(inst.ty).is_none() {
                return Ok(());
            }
            let n = (v.0.wrapping_sub(self.first_inst)) as usize;
            match self.a.local_of.get(n).copied() {
                Some(l) if l.is_some() => {
                    self.code.set_local(l);
                    self.clean[n] = clean;
                }
                _ => {
                    self.sink().drop();
                }
            }
        }
        Ok(())
    }

    /// Lowers instruction `idx`, leaving its value (if any) on the stack.
    pub fn emit_inst(&mut self, idx: usize) -> R<bool> {
        let f = self.f;
        let inst: &Inst = &f.insts[idx];
        match &inst.kind {
            InstKind::Binop { op, lhs, rhs, .. } if self.vector_value(inst.ty) => {
                self.simd_binop(idx, *op, *lhs, *rhs, inst.ty)
            }
            InstKind::Binop { op, lhs, rhs, .. } => self.binop(idx, *op, *lhs, *rhs, inst.ty),
            InstKind::Cast { op, val }
                if self.a.vectors
                    && (self.is_vector(inst.ty) || self.is_vector(self.ty(*val)?)) =>
            {
                self.simd_cast(idx, *op, *val, inst.ty)
            }
            InstKind::Cast { op, val } => self.cast(idx, *op, *val, inst.ty),
            InstKind::Cmp { pred, lhs, rhs }
                if self.a.vectors && self.is_vector(self.ty(*lhs)?) =>
            {
                self.simd_cmp(idx, *pred, *lhs, *rhs)
            }
            InstKind::Cmp { pred, lhs, rhs } => self.cmp(idx, *pred, *lhs, *rhs),
            InstKind::Select { cond, t, f: fv } if self.vector_value(inst.ty) => {
                self.simd_select(idx, *cond, *t, *fv)
            }
            InstKind::Select { cond, t, f: fv } => {
                let ct = self.push(*t)?;
                let cf = self.push(*fv)?;
                let cc = self.push(*cond)?;
                self.zext(1, cc);
                self.sink().select();
                Ok(ct && cf)
            }
            InstKind::Load { ptr, align } if self.vector_value(inst.ty) => {
                self.simd_load(idx, *ptr, *align, inst.ty)
            }
            InstKind::Store { ptr, val, align }
                if self.a.vectors && self.is_vector(self.ty(*val)?) =>
            {
                self.simd_store(idx, *ptr, *val, *align)
            }
            InstKind::Load { ptr, align } => {
                let s = self.scalar(inst.ty, idx)?;
                let off = self.push_addr(*ptr)?;
                let ma = memarg(off, align.bytes(), s);
                let mut k = self.sink();
                match s {
                    Scalar::I1 | Scalar::I8 => k.i32_load8_u(ma),
                    Scalar::I16 => k.i32_load16_u(ma),
                    Scalar::I32 => k.i32_load(ma),
                    Scalar::I64 => k.i64_load(ma),
                    Scalar::F32 => k.f32_load(ma),
                    Scalar::F64 => k.f64_load(ma),
                };
                Ok(true)
            }
            InstKind::Store { ptr, val, align } => {
                let s = self.scalar(self.ty(*val)?, idx)?;
                let off = self.push_addr(*ptr)?;
                self.push(*val)?;
                let ma = memarg(off, align.bytes(), s);
                let mut k = self.sink();
                match s {
                    Scalar::I1 | Scalar::I8 => k.i32_store8(ma),
                    Scalar::I16 => k.i32_store16(ma),
                    Scalar::I32 => k.i32_store(ma),
                    Scalar::I64 => k.i64_store(ma),
                    Scalar::F32 => k.f32_store(ma),
                    Scalar::F64 => k.f64_store(ma),
                };
                Ok(true)
            }
            InstKind::Alloca { size, align } => {
                let off = self.a.frame.static_off[idx];
                if off != NONE && self.a.frame.fp.is_some() {
                    let fp = self.a.frame.fp;
                    let mut k = self.sink();
                    k.local_get(fp);
                    if off != 0 {
                        k.i32_const(off as i32).i32_add();
                    }
                    return Ok(true);
                }
                if self.a.frame.saved_sp.is_none() {
                    return Err(self.err_at(idx, "alloca without a frame"));
                }
                let a = align.bytes().unwrap_or(1).clamp(16, 1 << 16) as i32;
                let (sp, s) = (self.cx.stack_pointer, self.a.locals.s_i32);
                self.sink().global_get(sp);
                if a == 16 {
                    // `__stack_pointer` is always 16-aligned (the stack top is page
                    // aligned, frames and thread stacks are multiples of 16), so `sp -
                    // round_up(size, 16)` is the same address as `(sp - size) & -16` and
                    // no longer a mask of a constant: Cranelift rematerializes such masks
                    // at every use, inside loops too (fasta, spectralnorm).
                    match self.const_int(*size) {
                        Some(c) => {
                            let r = (c as u32).wrapping_add(15) & !15;
                            self.sink().i32_const(r as i32);
                        }
                        None => {
                            self.push(*size)?;
                            self.sink().i32_const(15).i32_add().i32_const(-16).i32_and();
                        }
                    }
                    self.sink()
                        .i32_sub()
                        .local_tee(s)
                        .global_set(sp)
                        .local_get(s);
                    return Ok(true);
                }
                self.push(*size)?;
                self.sink()
                    .i32_sub()
                    .i32_const(-a)
                    .i32_and()
                    .local_tee(s)
                    .global_set(sp)
                    .local_get(s);
                Ok(true)
            }
            InstKind::Call(c) => {
                match c.callee {
                    Callee::Direct(fid) => {
                        let decl =
                            self.m.functions.get(fid.index()).ok_or_else(|| {
                                self.err_at(idx, format!("call to unknown @f{fid}"))
                            })?;
                        if let Some(i) = decl.intrinsic {
                            return self.intrinsic(idx, i, self.f.args(c), inst.ty);
                        }
                        let fi = self.cx.func_index.get(fid.index()).copied().unwrap_or(NONE);
                        if fi == NONE {
                            return Err(self.err_at(
                                idx,
                                format!("call to @f{fid}, which is declared but not defined"),
                            ));
                        }
                        let args = self.f.args(c);
                        let libm = self.cx.libm.get(fid.index()).copied();
                        if let (Some(lib @ (Libm::Sqrt | Libm::Sqrtf)), [x]) = (libm, args) {
                            return self.sqrt_fast_path(*x, fi, lib == Libm::Sqrt);
                        }
                        for a in args {
                            self.push_arg(*a)?;
                        }
                        self.sink().call(fi);
                        Ok(true)
                    }
                    Callee::Indirect(callee) => {
                        let args = self.f.args(c);
                        let mut params = Vec::with_capacity(args.len());
                        for a in args {
                            let t = self.ty(*a)?;
                            params.push(
                                self.cx
                                    .valtype(t)
                                    .ok_or_else(|| self.err_at(idx, "argument of type void"))?,
                            );
                            self.push_arg(*a)?;
                        }
                        let results: Vec<ValType> = self.cx.valtype(inst.ty).into_iter().collect();
                        // A call through the address of a known function (C's
                        // `((int (*)(int, char**, char**))main)(…)` in a libc's start code)
                        // is a direct call: wasm's call_indirect would trap where the types
                        // differ, and native code only dropped or left unset the extra or
                        // missing arguments, as done here.
                        if let Some(done) = self.call_known_address(callee, &params, &results)? {
                            return Ok(done);
                        }
                        let sig = super::Sig { params, results };
                        let ti = self.cx.sigs.get(&sig).ok_or_else(|| {
                            self.err_at(idx, "indirect call signature not interned")
                        })?;
                        self.push(callee)?;
                        match self.cx.icall_adapters.get(&ti) {
                            Some(&adapter) => self.sink().call(adapter),
                            None => self.sink().call_indirect(0, ti),
                        };
                        Ok(true)
                    }
                }
            }
            InstKind::ExtractElement { vec, index } => self.simd_extract(idx, *vec, *index),
            InstKind::InsertElement { vec, elt, index } => {
                self.simd_insert(idx, *vec, *elt, *index)
            }
            InstKind::Phi { .. }
            | InstKind::Ret { .. }
            | InstKind::Br { .. }
            | InstKind::CondBr { .. }
            | InstKind::Switch(_)
            | InstKind::Unreachable => Err(self.err_at(idx, "control instruction used as a value")),
        }
    }

    /// A call of C's `sqrt` (`f64`) or `sqrtf` with `x` (see [`super::libm`]):
    /// `x >= 0 (or -0) ? wasm's sqrt : call` (negative and NaN keep C's errno and NaN).
    fn sqrt_fast_path(&mut self, x: ValueId, fi: u32, f64: bool) -> R<bool> {
        let s = if f64 {
            self.a.locals.s_f64
        } else {
            self.a.locals.s_f32
        };
        self.push(x)?;
        let mut k = self.sink();
        k.local_tee(s);
        if f64 {
            k.f64_const(0.0f64.into())
                .f64_ge()
                .if_(wasm_encoder::BlockType::Result(ValType::F64))
                .local_get(s)
                .f64_sqrt();
        } else {
            k.f32_const(0.0f32.into())
                .f32_ge()
                .if_(wasm_encoder::BlockType::Result(ValType::F32))
                .local_get(s)
                .f32_sqrt();
        }
        k.else_().local_get(s).call(fi).end();
        Ok(true)
    }

    /// For an indirect call whose callee is the address of a defined function, with the
    /// call's arguments (`params`) already pushed: a direct call to it, the arguments
    /// adapted to its parameters (extra ones dropped, missing ones zero) and its result
    /// to the call's (dropped, or zero when it has none). `None` (nothing emitted) when the
    /// callee is not such an address or a shared argument's type differs, which stays an
    /// indirect call.
    fn call_known_address(
        &mut self,
        callee: ValueId,
        params: &[ValType],
        results: &[ValType],
    ) -> R<Option<bool>> {
        let ValueRef::Function(fid) = self.value_ref(callee) else {
            return Ok(None);
        };
        let Some(decl) = self.m.functions.get(fid.index()) else {
            return Ok(None);
        };
        if decl.intrinsic.is_some() {
            return Ok(None);
        }
        let fi = self.cx.func_index.get(fid.index()).copied().unwrap_or(NONE);
        let Some(ft) = self.m.types.function(decl.ty) else {
            return Ok(None);
        };
        if fi == NONE {
            return Ok(None);
        }
        let mut fparams = Vec::with_capacity(ft.params.len());
        for &t in &ft.params {
            match self.cx.valtype(t) {
                Some(v) => fparams.push(v),
                None => return Ok(None),
            }
        }
        let fresults: Vec<ValType> = self.cx.valtype(ft.ret).into_iter().collect();
        let shared = params.len().min(fparams.len());
        if params[..shared] != fparams[..shared]
            || (!results.is_empty() && !fresults.is_empty() && results != fresults.as_slice())
        {
            return Ok(None);
        }
        let mut k = self.sink();
        for _ in shared..params.len() {
            k.drop();
        }
        for &t in &fparams[shared..] {
            zero(&mut k, t);
        }
        k.call(fi);
        match (results.first(), fresults.first()) {
            (None, Some(_)) => {
                k.drop();
            }
            (Some(&t), None) => zero(&mut k, t),
            _ => {}
        }
        Ok(Some(true))
    }

    /// Pushes an address; folds `add p, C` (C in [0, 2^31)) into the memarg offset when
    /// that add is emitted here, and `add p, (add q, C)` into `add p, q` and C.
    pub fn push_addr(&mut self, ptr: ValueId) -> R<u64> {
        if let Some((lhs, rhs)) = self.inlined_add(ptr) {
            let small = |c: Option<u64>| c.filter(|&c| c < 0x8000_0000);
            if let Some(c) = small(self.const_int(rhs)) {
                return Ok(self.push_base(lhs)? + c);
            }
            if let Some(c) = small(self.const_int(lhs)) {
                return Ok(self.push_base(rhs)? + c);
            }
            // `p + (q + C)`: the inner add's constant, as it is pushed second (the
            // operands stay in their order).
            if let Some((q, c)) = self.inlined_add(rhs) {
                if let Some(c) = small(self.const_int(c)) {
                    self.push(lhs)?;
                    self.push(q)?;
                    self.sink().i32_add();
                    return Ok(c);
                }
            }
        }
        self.push_base(ptr)
    }

    /// The operands of `v` if it is an `add` emitted where it is pushed (inlined).
    fn inlined_add(&self, v: ValueId) -> Option<(ValueId, ValueId)> {
        let d = self.def_of(v)?;
        if !self.a.inline[d] {
            return None;
        }
        match self.f.insts[d].kind {
            InstKind::Binop {
                op: BinOp::Add,
                lhs,
                rhs,
                ..
            } => Some((lhs, rhs)),
            _ => None,
        }
    }

    /// Pushes an address; a static alloca emitted where it is used pushes the frame base
    /// and returns its offset.
    fn push_base(&mut self, ptr: ValueId) -> R<u64> {
        if let Some(d) = self.def_of(ptr) {
            if let (InstKind::Alloca { .. }, true) = (&self.f.insts[d].kind, self.a.inline[d]) {
                let off = self.a.frame.static_off[d];
                let fp = self.a.frame.fp;
                if off != NONE && fp.is_some() {
                    self.sink().local_get(fp);
                    return Ok(off as u64);
                }
            }
        }
        self.push(ptr)?;
        Ok(0)
    }

    fn binop(&mut self, idx: usize, op: BinOp, lhs: ValueId, rhs: ValueId, ty: TypeId) -> R<bool> {
        let s = self.scalar(ty, idx)?;
        use BinOp::*;
        if s.is_float() {
            let f32 = s == Scalar::F32;
            self.push(lhs)?;
            self.push(rhs)?;
            let (fmodf, fmod) = (self.cx.fmodf, self.cx.fmod);
            let mut k = self.sink();
            match (op, f32) {
                (FAdd, true) => k.f32_add(),
                (FSub, true) => k.f32_sub(),
                (FMul, true) => k.f32_mul(),
                (FDiv, true) => k.f32_div(),
                (FRem, true) => k.call(fmodf),
                (FAdd, false) => k.f64_add(),
                (FSub, false) => k.f64_sub(),
                (FMul, false) => k.f64_mul(),
                (FDiv, false) => k.f64_div(),
                (FRem, false) => k.call(fmod),
                _ => return Err(self.err_at(idx, "integer operator on floating point")),
            };
            return Ok(true);
        }
        let bits = s.bits();
        let narrow = bits < 32;
        if bits == 64 {
            if matches!(op, SDiv | SRem) {
                if let Some(clean) = self.signed_pow2(op, lhs, rhs, bits)? {
                    return Ok(clean);
                }
            }
            self.push(lhs)?;
            self.push(rhs)?;
            let mut k = self.sink();
            match op {
                Add => k.i64_add(),
                Sub => k.i64_sub(),
                Mul => k.i64_mul(),
                UDiv => k.i64_div_u(),
                SDiv => k.i64_div_s(),
                URem => k.i64_rem_u(),
                SRem => k.i64_rem_s(),
                Shl => k.i64_shl(),
                LShr => k.i64_shr_u(),
                AShr => k.i64_shr_s(),
                And => k.i64_and(),
                Or => k.i64_or(),
                Xor => k.i64_xor(),
                _ => return Err(self.err_at(idx, "floating-point operator on integers")),
            };
            return Ok(true);
        }
        if op == Add && bits == 32 {
            // A global's address plus a constant (what a constant offset into a global
            // becomes): one constant.
            if let (ValueRef::Global(g), Some(c)) =
                (self.f.value_ref(lhs, self.nf), self.const_int(rhs))
            {
                let a = self.cx.global_addr.get(g.index()).copied().unwrap_or(0);
                self.sink().i32_const(a.wrapping_add(c as u32) as i32);
                return Ok(true);
            }
        }
        match op {
            Add | Sub | Mul | Shl | And | Or | Xor => {
                let cl = self.push(lhs)?;
                let cr = self.push(rhs)?;
                let mut k = self.sink();
                let clean = match op {
                    Add => {
                        k.i32_add();
                        !narrow
                    }
                    Sub => {
                        k.i32_sub();
                        !narrow
                    }
                    Mul => {
                        k.i32_mul();
                        !narrow
                    }
                    Shl => {
                        k.i32_shl();
                        !narrow
                    }
                    And => {
                        k.i32_and();
                        cl || cr
                    }
                    Or => {
                        k.i32_or();
                        cl && cr
                    }
                    _ => {
                        k.i32_xor();
                        cl && cr
                    }
                };
                Ok(clean)
            }
            UDiv | URem | LShr => {
                self.push_zext(lhs, bits)?;
                if op == LShr {
                    let c = self.push(rhs)?;
                    if bits == 1 {
                        self.zext(1, c);
                    }
                } else {
                    self.push_zext(rhs, bits)?;
                }
                let mut k = self.sink();
                match op {
                    UDiv => k.i32_div_u(),
                    URem => k.i32_rem_u(),
                    _ => k.i32_shr_u(),
                };
                Ok(true)
            }
            SDiv | SRem | AShr => {
                if op != AShr {
                    if let Some(clean) = self.signed_pow2(op, lhs, rhs, bits)? {
                        return Ok(clean);
                    }
                }
                self.push(lhs)?;
                self.sext(bits);
                let c = self.push(rhs)?;
                if op == AShr {
                    if bits == 1 {
                        self.zext(1, c);
                    }
                } else {
                    self.sext(bits);
                }
                let mut k = self.sink();
                match op {
                    SDiv => k.i32_div_s(),
                    SRem => k.i32_rem_s(),
                    _ => k.i32_shr_s(),
                };
                Ok(!narrow)
            }
            _ => Err(self.err_at(idx, "floating-point operator on integers")),
        }
    }

    /// `sdiv x, 2^k` as `x >> k` (arithmetic) and `srem x, 2^k` as `x & (2^k - 1)` where
    /// the known bits make them equal: x non-negative (division rounds down), or its low k
    /// bits zero (the division is exact; the remainder 0). Engines lower a signed
    /// division by a constant to a sequence that rounds negative dividends toward zero
    /// (`x + (x >>> 31) >> 1` for 2): spectralnorm's `(i+j)*(i+j+1)/2`, even but not
    /// known non-negative in wrapping arithmetic, saves it in its inner loop. Returns the
    /// clean flag, or None (nothing emitted) when the division stays. Out of line: the
    /// binop path it leaves is hot, and these divisions are rare.
    #[cold]
    #[inline(never)]
    fn signed_pow2(&mut self, op: BinOp, lhs: ValueId, rhs: ValueId, bits: u32) -> R<Option<bool>> {
        let w = u64::MAX >> (64 - bits);
        let Some(c) = self.const_int(rhs).map(|c| c & w) else {
            return Ok(None);
        };
        let k = c.trailing_zeros();
        // A positive power of two other than 1 (`1 << (bits - 1)` is negative).
        if !c.is_power_of_two() || k == 0 || k + 1 >= bits {
            return Ok(None);
        }
        let kz = self.known_zero(lhs, bits);
        let mask = c - 1;
        let sign = 1u64 << (bits - 1);
        if kz & mask != mask && kz & sign == 0 {
            return Ok(None);
        }
        self.push(lhs)?;
        if bits == 64 {
            let mut s = self.sink();
            if op == BinOp::SDiv {
                s.i64_const(k as i64).i64_shr_s();
            } else {
                s.i64_const(mask as i64).i64_and();
            }
            return Ok(Some(true));
        }
        if op == BinOp::SDiv {
            self.sext(bits);
            self.sink().i32_const(k as i32).i32_shr_s();
            Ok(Some(bits == 32))
        } else {
            // Below the sign bit: the result is zero-extended.
            self.sink().i32_const(mask as i32).i32_and();
            Ok(Some(true))
        }
    }

    fn cmp(&mut self, idx: usize, pred: CmpPred, lhs: ValueId, rhs: ValueId) -> R<bool> {
        let t = self.ty(lhs)?;
        let s = self.scalar(t, idx)?;
        use CmpPred::*;
        if pred.is_float() {
            let f32 = match s {
                Scalar::F32 => true,
                Scalar::F64 => false,
                _ => return Err(self.err_at(idx, "fcmp on integers")),
            };
            self.push(lhs)?;
            self.push(rhs)?;
            let (sa, sb) = if f32 {
                (self.a.locals.s_f32, self.a.locals.s_f32 + 1)
            } else {
                (self.a.locals.s_f64, self.a.locals.s_f64 + 1)
            };
            let mut k = self.sink();
            macro_rules! op {
                ($a:ident, $b:ident) => {
                    if f32 {
                        k.$a();
                    } else {
                        k.$b();
                    }
                };
            }
            match pred {
                FFalse | FTrue => {
                    k.drop().drop().i32_const((pred == FTrue) as i32);
                }
                FOeq => op!(f32_eq, f64_eq),
                FOgt => op!(f32_gt, f64_gt),
                FOge => op!(f32_ge, f64_ge),
                FOlt => op!(f32_lt, f64_lt),
                FOle => op!(f32_le, f64_le),
                FUne => op!(f32_ne, f64_ne),
                FUgt => {
                    op!(f32_le, f64_le);
                    k.i32_eqz();
                }
                FUge => {
                    op!(f32_lt, f64_lt);
                    k.i32_eqz();
                }
                FUlt => {
                    op!(f32_ge, f64_ge);
                    k.i32_eqz();
                }
                FUle => {
                    op!(f32_gt, f64_gt);
                    k.i32_eqz();
                }
                FOne | FOrd | FUno | FUeq => {
                    k.local_set(sb).local_set(sa);
                    match pred {
                        FOne => {
                            k.local_get(sa).local_get(sb);
                            op!(f32_lt, f64_lt);
                            k.local_get(sa).local_get(sb);
                            op!(f32_gt, f64_gt);
                            k.i32_or();
                        }
                        FOrd => {
                            k.local_get(sa).local_get(sa);
                            op!(f32_eq, f64_eq);
                            k.local_get(sb).local_get(sb);
                            op!(f32_eq, f64_eq);
                            k.i32_and();
                        }
                        FUno => {
                            k.local_get(sa).local_get(sa);
                            op!(f32_ne, f64_ne);
                            k.local_get(sb).local_get(sb);
                            op!(f32_ne, f64_ne);
                            k.i32_or();
                        }
                        _ => {
                            k.local_get(sa).local_get(sb);
                            op!(f32_eq, f64_eq);
                            k.local_get(sa).local_get(sa);
                            op!(f32_ne, f64_ne);
                            k.i32_or().local_get(sb).local_get(sb);
                            op!(f32_ne, f64_ne);
                            k.i32_or();
                        }
                    }
                }
                _ => unreachable_pred(&mut k),
            }
            if matches!(pred, FUgt | FUge | FUlt | FUle) {
                // Ends with the `i32.eqz` of the ordered inverse: `negate_cond` drops it.
                self.code.compare_ends();
            }
            return Ok(true);
        }
        if s.is_float() {
            return Err(self.err_at(idx, "icmp on floating point"));
        }
        let bits = s.bits();
        let signed = matches!(pred, ISgt | ISge | ISlt | ISle);
        if bits == 64 {
            self.push(lhs)?;
            if matches!(pred, IEq) && self.const_int(rhs) == Some(0) {
                self.sink().i64_eqz();
                return Ok(true);
            }
            self.push(rhs)?;
            let mut k = self.sink();
            match pred {
                IEq => k.i64_eq(),
                INe => k.i64_ne(),
                IUgt => k.i64_gt_u(),
                IUge => k.i64_ge_u(),
                IUlt => k.i64_lt_u(),
                IUle => k.i64_le_u(),
                ISgt => k.i64_gt_s(),
                ISge => k.i64_ge_s(),
                ISlt => k.i64_lt_s(),
                ISle => k.i64_le_s(),
                _ => return Err(self.err_at(idx, "fcmp predicate on integers")),
            };
            self.code.compare_ends();
            return Ok(true);
        }
        if signed {
            self.push(lhs)?;
            self.sext(bits);
            self.push(rhs)?;
            self.sext(bits);
        } else {
            self.push_zext(lhs, bits)?;
            if matches!(pred, IEq) && self.const_int(rhs) == Some(0) {
                self.sink().i32_eqz();
                self.code.compare_ends();
                return Ok(true);
            }
            self.push_zext(rhs, bits)?;
        }
        let mut k = self.sink();
        match pred {
            IEq => k.i32_eq(),
            INe => k.i32_ne(),
            IUgt => k.i32_gt_u(),
            IUge => k.i32_ge_u(),
            IUlt => k.i32_lt_u(),
            IUle => k.i32_le_u(),
            ISgt => k.i32_gt_s(),
            ISge => k.i32_ge_s(),
            ISlt => k.i32_lt_s(),
            ISle => k.i32_le_s(),
            _ => return Err(self.err_at(idx, "fcmp predicate on integers")),
        };
        self.code.compare_ends();
        Ok(true)
    }

    fn cast(&mut self, idx: usize, op: CastOp, val: ValueId, to: TypeId) -> R<bool> {
        let from = self.ty(val)?;
        let fs = self.scalar(from, idx)?;
        let ts = self.scalar(to, idx)?;
        let (fb, tb) = (fs.bits(), ts.bits());
        use CastOp::*;
        match op {
            Trunc => {
                self.push(val)?;
                if fb == 64 && tb < 64 {
                    self.sink().i32_wrap_i64();
                }
                Ok(tb >= 32)
            }
            ZExt => {
                let c = self.push(val)?;
                if fb < 64 {
                    self.zext(fb, c);
                    if tb == 64 {
                        self.sink().i64_extend_i32_u();
                    }
                }
                Ok(true)
            }
            SExt => {
                self.push(val)?;
                if fb < 64 {
                    self.sext(fb);
                    if tb == 64 {
                        self.sink().i64_extend_i32_s();
                    }
                }
                Ok(tb >= 32)
            }
            FpToSi | FpToUi => {
                self.push(val)?;
                self.used.sat_float_to_int = true;
                let u = op == FpToUi;
                let mut k = self.sink();
                match (fs == Scalar::F32, tb == 64, u) {
                    (true, false, false) => k.i32_trunc_sat_f32_s(),
                    (true, false, true) => k.i32_trunc_sat_f32_u(),
                    (false, false, false) => k.i32_trunc_sat_f64_s(),
                    (false, false, true) => k.i32_trunc_sat_f64_u(),
                    (true, true, false) => k.i64_trunc_sat_f32_s(),
                    (true, true, true) => k.i64_trunc_sat_f32_u(),
                    (false, true, false) => k.i64_trunc_sat_f64_s(),
                    (false, true, true) => k.i64_trunc_sat_f64_u(),
                };
                Ok(tb >= 32)
            }
            UiToFp | SiToFp => {
                let c = self.push(val)?;
                let u = op == UiToFp;
                if fb < 32 {
                    if u {
                        self.zext(fb, c);
                    } else {
                        self.sext(fb);
                    }
                }
                let mut k = self.sink();
                match (fb == 64, ts == Scalar::F32, u) {
                    (false, true, false) => k.f32_convert_i32_s(),
                    (false, true, true) => k.f32_convert_i32_u(),
                    (false, false, false) => k.f64_convert_i32_s(),
                    (false, false, true) => k.f64_convert_i32_u(),
                    (true, true, false) => k.f32_convert_i64_s(),
                    (true, true, true) => k.f32_convert_i64_u(),
                    (true, false, false) => k.f64_convert_i64_s(),
                    (true, false, true) => k.f64_convert_i64_u(),
                };
                Ok(true)
            }
            FpTrunc => {
                self.push(val)?;
                self.sink().f32_demote_f64();
                Ok(true)
            }
            FpExt => {
                self.push(val)?;
                self.sink().f64_promote_f32();
                Ok(true)
            }
            PtrToInt | IntToPtr => self.push(val),
            Bitcast => {
                let c = self.push(val)?;
                let mut k = self.sink();
                match (fs, ts) {
                    (Scalar::I32, Scalar::F32) => k.f32_reinterpret_i32(),
                    (Scalar::F32, Scalar::I32) => k.i32_reinterpret_f32(),
                    (Scalar::I64, Scalar::F64) => k.f64_reinterpret_i64(),
                    (Scalar::F64, Scalar::I64) => k.i64_reinterpret_f64(),
                    (a, b) if a == b => return Ok(c),
                    _ => return Err(self.err_at(idx, "bitcast between sizes")),
                };
                Ok(true)
            }
        }
    }
}

fn unreachable_pred(k: &mut Sink<'_>) {
    k.unreachable();
}

/// A memarg with the alignment hint capped at the natural alignment.
pub(crate) fn memarg(offset: u64, align: Option<u64>, s: Scalar) -> MemArg {
    let natural = match s {
        Scalar::I1 | Scalar::I8 => 0,
        Scalar::I16 => 1,
        Scalar::I32 | Scalar::F32 => 2,
        Scalar::I64 | Scalar::F64 => 3,
    };
    let a = align.map_or(natural, |b| b.trailing_zeros().min(natural));
    MemArg {
        offset,
        align: a,
        target: wasm_encoder::MemArgTarget::Memory(0),
        ordering: None,
    }
}

/// Pushes a zero of type `t`.
fn zero(k: &mut Sink<'_>, t: ValType) {
    match t {
        ValType::I32 => {
            k.i32_const(0);
        }
        ValType::I64 => {
            k.i64_const(0);
        }
        ValType::F32 => {
            k.f32_const(Ieee32::from(0.0));
        }
        ValType::F64 => {
            k.f64_const(Ieee64::from(0.0));
        }
        _ => {
            k.v128_const(0);
        }
    }
}
