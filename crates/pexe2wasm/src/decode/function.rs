//! Function blocks: the basic-block count, the constants block, instruction records and the
//! function-level value symbol table. Operands are relative value ids in the file; here
//! they become absolute [`ValueId`]s, and every operand's type is known (forward references
//! need a forward type declaration, except phi operands, whose type the phi gives).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

/// Value ids to what is known of them: SipHash's DoS resistance buys nothing for keys
/// bounded by the input's own size, and it was a tenth of decode time.
type IdMap<V> = FxHashMap<u32, V>;

use std::sync::atomic::{AtomicBool, Ordering};

use super::{block_id, next_leaf_record, next_leaf_short, symbol_name, DecodeError, FnJob, Result};
use crate::bitstream::{Cursor, Kind, SHORT_RECORD};
use crate::ir::summary::is_sjlj;
use crate::ir::{
    Align, BinOp, BlockId, Call, Callee, CastOp, CmpPred, ConstValue, Constant, FuncId, Function,
    FunctionDecl, Inst, InstKind, Scalar, Span, SummaryBuilder, Switch, SwitchCase, Type, TypeId,
    TypeTable, ValueId,
};

/// Instruction record codes.
mod records;

mod code {
    pub const DECLAREBLOCKS: u64 = 1;
    pub const BINOP: u64 = 2;
    pub const CAST: u64 = 3;
    pub const EXTRACTELT: u64 = 6;
    pub const INSERTELT: u64 = 7;
    pub const CMP: u64 = 9;
    pub const RET: u64 = 10;
    pub const BR: u64 = 11;
    pub const SWITCH: u64 = 12;
    pub const UNREACHABLE: u64 = 15;
    pub const PHI: u64 = 16;
    pub const ALLOCA: u64 = 19;
    pub const LOAD: u64 = 20;
    pub const STORE: u64 = 24;
    pub const CMP2: u64 = 28;
    pub const VSELECT: u64 = 29;
    pub const CALL: u64 = 34;
    pub const FORWARDTYPEREF: u64 = 43;
    pub const CALL_INDIRECT: u64 = 44;
}

/// Decodes PNaCl's sign-rotated integers (sign in bit 0). `1` is INT64_MIN, as LLVM writes it.
pub fn sign_unrotate(v: u64) -> i64 {
    if v & 1 == 0 {
        (v >> 1) as i64
    } else if v != 1 {
        -((v >> 1) as i64)
    } else {
        i64::MIN
    }
}

/// The inverse of [`sign_unrotate`] (the writer side lives in `text::asm`; kept here to test
/// the decoding against).
#[cfg(test)]
pub fn sign_rotate(v: i64) -> u64 {
    if v >= 0 {
        (v as u64) << 1
    } else if v == i64::MIN {
        1
    } else {
        ((v.unsigned_abs()) << 1) | 1
    }
}

/// Types the decoder may need that a types block can fail to declare (the result of a
/// compare, an alloca's address, "no result"). Function bodies are decoded in parallel
/// against one shared table, so these get ids reserved up front, after the declared types;
/// [`Implied::finish`] keeps only those some function used, so the final table does not
/// depend on thread timing and never grows types nobody needed.
pub(crate) struct Implied {
    /// The declared types followed by the reserved ones.
    ext: TypeTable,
    base_len: u32,
    void: TypeId,
    i32: TypeId,
    i1: TypeId,
    used: Vec<AtomicBool>,
    /// `ext.scalar(t)` for every type, looked up once instead of per instruction.
    scalars: Vec<Option<Scalar>>,
}

/// A decoded body and whether it used a reserved type id.
pub(crate) struct Decoded {
    f: Function,
    used_implied: bool,
}

/// Buffers one thread reuses from function to function, so decoding a body allocates only
/// its exactly sized results (no growth, no over-reservation, no shrinking).
#[derive(Default)]
pub(crate) struct Scratch<'a> {
    /// The cursor of the previous function, reforked for the next (keeps its buffers).
    cur: Option<Cursor<'a>>,
    value_types: Vec<TypeId>,
    forward: IdMap<TypeId>,
    forward_order: BinaryHeap<Reverse<u32>>,
    pending: Vec<(u32, TypeId, u32)>,
    rec: Vec<u64>,
    block_starts: Vec<u32>,
    consts: Vec<Constant>,
    call_args: Vec<ValueId>,
    phi_incoming: Vec<(ValueId, BlockId)>,
    summary: SummaryBuilder,
}

impl Implied {
    pub(crate) fn new(types: &TypeTable) -> Self {
        let mut ext = types.clone();
        let base_len = ext.len() as u32;
        let void = ext.intern(Type::Void);
        let i32 = ext.intern(Type::Int(32));
        let i1 = ext.intern(Type::Int(1));
        for len in [4, 8, 16] {
            ext.intern(Type::Vector { len, elem: i1 });
        }
        let used = (base_len as usize..ext.len())
            .map(|_| AtomicBool::new(false))
            .collect();
        let scalars = (0..ext.len() as u32)
            .map(|t| ext.scalar(TypeId(t)))
            .collect();
        Implied {
            scalars,
            ext,
            base_len,
            void,
            i32,
            i1,
            used,
        }
    }

    /// Records that `t` was handed out (a vector of i1 needs its i1 too).
    fn mark(&self, t: TypeId) -> bool {
        if t.0 < self.base_len {
            return false;
        }
        if let Some(Type::Vector { elem, .. }) = self.ext.get(t) {
            self.mark(*elem);
        }
        self.used[(t.0 - self.base_len) as usize].store(true, Ordering::Relaxed);
        true
    }

    /// Appends the used reserved types to `types` and renumbers them in the bodies if
    /// unused ones left gaps.
    pub(crate) fn finish(self, types: &mut TypeTable, decoded: Vec<Decoded>) -> Vec<Function> {
        let mut remap: Vec<Option<TypeId>> = vec![None; self.used.len()];
        let mut identity = true;
        for (k, flag) in self.used.iter().enumerate() {
            if !flag.load(Ordering::Relaxed) {
                continue;
            }
            let old = TypeId(self.base_len + k as u32);
            let t = match self.ext.ty(old).clone() {
                Type::Vector { len, elem } if elem.0 >= self.base_len => Type::Vector {
                    len,
                    elem: remap[(elem.0 - self.base_len) as usize].unwrap_or(elem),
                },
                t => t,
            };
            let new = types.intern(t);
            identity &= new == old;
            remap[k] = Some(new);
        }
        let base = self.base_len;
        let fix = |t: &mut TypeId| {
            if t.0 >= base {
                if let Some(n) = remap[(t.0 - base) as usize] {
                    *t = n;
                }
            }
        };
        decoded
            .into_iter()
            .map(|mut d| {
                if d.used_implied && !identity {
                    d.f.insts.iter_mut().for_each(|i| fix(&mut i.ty));
                    d.f.forward_decls.iter_mut().for_each(|(_, t)| fix(t));
                    if let Some(s) = &mut d.f.summary {
                        s.map_types(fix);
                    }
                }
                d.f
            })
            .collect()
    }
}

struct FnDecoder<'d, 'a> {
    cur: Cursor<'a>,
    /// Declared types plus the reserved implied ones.
    types: &'d TypeTable,
    implied: &'d Implied,
    used_implied: bool,
    functions: &'d [FunctionDecl],
    num_module_values: u32,
    f: Function,
    ret_ty: TypeId,
    /// Types of params, constants and instruction values, indexed by `abs - base`.
    value_types: Vec<TypeId>,
    /// Types declared for values not yet defined.
    forward: IdMap<TypeId>,
    /// The keys of `forward`, smallest first: defining a value looks in `forward` only
    /// when it is the smallest (most values were never forward declared).
    forward_order: BinaryHeap<Reverse<u32>>,
    /// Phi operands that referred to values not yet defined: (value, type, phi index).
    pending: Vec<(u32, TypeId, u32)>,
    num_blocks: Option<u32>,
    /// True when the next instruction starts a new basic block.
    block_ended: bool,
    void_ty: TypeId,
    /// Where the `blocks N` record was, for errors about the count found at the end.
    blocks_pos: Option<crate::bitstream::Position>,
    rec: Vec<u64>,
    /// The body's code summary, gathered as the records are decoded (see
    /// [`crate::ir::CodeSummary::scan`], which finds the same from the instructions).
    summary: SummaryBuilder,
}

/// Takes a reused buffer out of the scratch space, emptied.
fn take<T>(v: &mut Vec<T>) -> Vec<T> {
    let mut v = std::mem::take(v);
    v.clear();
    v
}

pub(super) fn decode_function<'a>(
    data: &'a [u8],
    functions: &[FunctionDecl],
    num_globals: u32,
    implied: &Implied,
    job: &FnJob,
    scratch: &mut Scratch<'a>,
) -> Result<Decoded> {
    let types = &implied.ext;
    let decl = &functions[job.decl.index()];
    let ft = types
        .function(decl.ty)
        .expect("checked when the function address was read");
    let num_module_values = functions.len() as u32 + num_globals;
    let (width, start, words) = (job.abbrev_width, job.body_start, job.len_words as u64);
    let cur = match scratch.cur.take() {
        Some(mut cur) => {
            cur.refork_block(&job.scopes, block_id::FUNCTION, width, start, words)?;
            cur
        }
        None => Cursor::fork_block(
            data,
            job.scopes.detached(),
            block_id::FUNCTION,
            width,
            start,
            words,
        )?,
    };
    let mut value_types = take(&mut scratch.value_types);
    value_types.extend_from_slice(&ft.params);
    let mut forward = std::mem::take(&mut scratch.forward);
    forward.clear();
    let mut forward_order = std::mem::take(&mut scratch.forward_order);
    forward_order.clear();
    // The per-instruction vectors are decoded in place into buffers sized from the
    // block's length, then shrunk: shrinking hands the unused tail back to the allocator
    // without moving the instructions, where a reused buffer copied out at exact size
    // cost a memcpy of every body. Real pexes hold at most 1.8 instructions per 32-bit
    // word of function block (median 0.8 over the corpus); a denser block just grows the
    // vectors as usual. The bound is fixed, so a hostile block cannot raise it: the
    // estimate (40 bytes per instruction over the three vectors) stays within 18 bytes
    // of memory per byte of input.
    let est = (words as usize).saturating_mul(7) / 4 + 8;
    let mut fd = FnDecoder {
        cur,
        types,
        implied,
        used_implied: false,
        functions,
        num_module_values,
        f: Function {
            decl: job.decl,
            base: num_module_values,
            num_params: ft.params.len() as u32,
            bit: job.bit,
            insts: Vec::with_capacity(est),
            inst_bits: Vec::with_capacity(est),
            value_insts: Vec::with_capacity(est),
            block_starts: take(&mut scratch.block_starts),
            consts: take(&mut scratch.consts),
            call_args: take(&mut scratch.call_args),
            phi_incoming: take(&mut scratch.phi_incoming),
            ..Default::default()
        },
        ret_ty: ft.ret,
        value_types,
        forward,
        forward_order,
        pending: take(&mut scratch.pending),
        num_blocks: None,
        block_ended: true,
        void_ty: implied.void,
        blocks_pos: None,
        rec: take(&mut scratch.rec),
        summary: std::mem::take(&mut scratch.summary),
    };
    fd.run()?;
    // Shrink the per-instruction vectors in place; copy the others (short) out at their
    // exact sizes and keep the grown buffers for the next function.
    let used_implied = fd.used_implied;
    let mut f = fd.f;
    // The summary, gathered while decoding, saves emission a walk over every
    // instruction (decision 0010).
    f.summary = Some(fd.summary.finish());
    scratch.summary = fd.summary;
    f.insts.shrink_to_fit();
    f.inst_bits.shrink_to_fit();
    f.value_insts.shrink_to_fit();
    let block_starts = f.block_starts.to_vec();
    let consts = f.consts.to_vec();
    let call_args = f.call_args.to_vec();
    let phi_incoming = f.phi_incoming.to_vec();
    scratch.block_starts = std::mem::replace(&mut f.block_starts, block_starts);
    scratch.consts = std::mem::replace(&mut f.consts, consts);
    scratch.call_args = std::mem::replace(&mut f.call_args, call_args);
    scratch.phi_incoming = std::mem::replace(&mut f.phi_incoming, phi_incoming);
    scratch.value_types = fd.value_types;
    scratch.forward = fd.forward;
    scratch.forward_order = fd.forward_order;
    scratch.cur = Some(fd.cur);
    scratch.pending = fd.pending;
    scratch.rec = fd.rec;
    Ok(Decoded { used_implied, f })
}

impl FnDecoder<'_, '_> {
    // Out of line and cold: the hot decoding functions keep only the call.
    #[cold]
    #[inline(never)]
    fn err<T>(&self, message: impl Into<String>) -> Result<T> {
        let name = self.functions[self.f.decl.index()]
            .name
            .as_deref()
            .map(|n| format!(" (\"{n}\")"))
            .unwrap_or_default();
        let mut position = self.cur.position();
        if position.block.is_none() {
            // Errors found at the end of the block belong to the function block.
            position.block = Some(block_id::FUNCTION);
        }
        Err(DecodeError::Invalid {
            message: format!("in function @f{}{}: {}", self.f.decl, name, message.into()),
            position,
        })
    }

    /// Absolute id of the next value an instruction would define.
    fn next_value(&self) -> u32 {
        self.f.base + self.value_types.len() as u32
    }

    fn name_of(&self, v: u32) -> String {
        if v < self.f.base {
            if (v as usize) < self.functions.len() {
                format!("@f{v}")
            } else {
                format!("@g{}", v as usize - self.functions.len())
            }
        } else {
            let i = v - self.f.base;
            let np = self.f.num_params;
            let nc = self.f.consts.len() as u32;
            if i < np {
                format!("%p{i}")
            } else if i < np + nc {
                format!("%c{}", i - np)
            } else {
                format!("%v{}", i - np - nc)
            }
        }
    }

    fn ty_name(&self, t: TypeId) -> String {
        self.types.display(t).to_string()
    }

    /// [`next_leaf_record`] with this function named in errors; false at the block's end.
    fn next_leaf(&mut self, buf: &mut Vec<u64>, what: &str) -> Result<bool> {
        match next_leaf_record(&mut self.cur, buf, what) {
            Ok(r) => Ok(r.is_some()),
            Err(DecodeError::Invalid { message, .. }) => self.err(message),
            Err(e) => Err(e),
        }
    }

    /// [`next_leaf_short`] with this function named in errors; `None` at the block's end,
    /// else how many values are in `short` (0: in `buf`).
    #[inline]
    fn next_leaf_short(
        &mut self,
        buf: &mut Vec<u64>,
        short: &mut [u64; SHORT_RECORD],
        what: &str,
    ) -> Result<Option<usize>> {
        match next_leaf_short(&mut self.cur, buf, short, None, what) {
            Ok(r) => Ok(r.map(|(_, n, _)| n)),
            Err(DecodeError::Invalid { message, .. }) => self.err(message),
            Err(e) => Err(e),
        }
    }

    /// Hands out an implied type id, noting when it is one the file did not declare.
    #[inline(always)]
    fn use_type(&mut self, t: TypeId) -> TypeId {
        if t.0 >= self.implied.base_len {
            self.used_implied |= self.implied.mark(t);
        }
        t
    }

    #[inline(always)]
    fn i32(&mut self) -> TypeId {
        self.use_type(self.implied.i32)
    }

    /// A call record's calling-convention word, which [`Call`] keeps in 32 bits.
    fn cc_word(&self, cc: u64) -> Result<u32> {
        u32::try_from(cc).or_else(|_| {
            self.err(format!(
                "call record's calling-convention word {cc} does not fit in 32 bits"
            ))
        })
    }

    #[inline(always)]
    fn i1(&mut self) -> TypeId {
        self.use_type(self.implied.i1)
    }

    #[inline(always)]
    fn type_id(&self, t: u64) -> Result<TypeId> {
        // Records may name declared types only, never the reserved implied ones.
        if t < self.implied.base_len as u64 {
            Ok(TypeId(t as u32))
        } else {
            self.err(format!(
                "type id {t} is out of range ({} types)",
                self.implied.base_len
            ))
        }
    }

    #[inline(always)]
    fn block(&self, b: u64) -> Result<BlockId> {
        let n = self.num_blocks.unwrap_or(0);
        if b < n as u64 {
            Ok(BlockId(b as u32))
        } else {
            self.err(format!(
                "basic block %b{b} is out of range ({n} blocks declared)"
            ))
        }
    }

    /// The scalar kind of a type (of a vector's elements), `None` for other types.
    #[inline]
    fn scalar(&self, t: TypeId) -> Option<Scalar> {
        self.implied.scalars.get(t.0 as usize).copied().flatten()
    }

    /// Resolves a relative operand to an absolute id.
    #[inline(always)]
    fn rel(&self, r: u64) -> Result<u32> {
        if r > u32::MAX as u64 {
            return self.err(format!("relative value index {r} is too large"));
        }
        Ok(self.next_value().wrapping_sub(r as u32))
    }

    /// The type of a value id, which must be defined or forward-declared.
    #[inline(always)]
    fn ty_of(&mut self, v: u32) -> Result<TypeId> {
        if v < self.num_module_values {
            return Ok(self.i32());
        }
        let next = self.next_value();
        if v < next {
            return Ok(self.value_types[(v - self.f.base) as usize]);
        }
        self.ty_of_forward(v, next)
    }

    /// [`Self::ty_of`] for a value not defined yet: its forward declaration, or an error.
    #[inline(never)]
    fn ty_of_forward(&self, v: u32, next: u32) -> Result<TypeId> {
        match self.forward.get(&v) {
            Some(&t) => Ok(t),
            // An id past every defined value is usually a relative index larger than the
            // number of values (it wrapped); say so rather than print a huge %v number.
            None if v - next > (1 << 24) => self.err(format!(
                "relative operand index {} is larger than the {} values defined so far",
                (u32::MAX - (v - next)) as u64 + 1,
                next
            )),
            None => self.err(format!(
                "value {} (id {v}) is used before it is defined and has no forward type \
                 declaration ({} values defined so far)",
                self.name_of(v),
                next
            )),
        }
    }

    /// [`Self::ty_of`] for an instruction's operand (a direct callee is none): a function
    /// used as an operand has its address taken, which the code summary notes. The test
    /// is on the module-value path only, so other operands pay nothing for it.
    #[inline(always)]
    fn operand_ty(&mut self, v: u32) -> Result<TypeId> {
        if v < self.num_module_values {
            if (v as usize) < self.functions.len() {
                self.summary.taken.push(v);
            }
            return Ok(self.i32());
        }
        self.ty_of(v)
    }

    /// Resolves a relative operand and returns it with its type.
    #[inline(always)]
    fn operand(&mut self, r: u64) -> Result<(ValueId, TypeId)> {
        let v = self.rel(r)?;
        let t = self.operand_ty(v)?;
        Ok((ValueId(v), t))
    }

    fn run(&mut self) -> Result<()> {
        let mut rec = std::mem::take(&mut self.rec);
        let mut short = [0u64; SHORT_RECORD];
        loop {
            let Some((bit, kind, n)) = self.cur.next_short(&mut rec, &mut short)? else {
                return self.err("input ended inside the function block");
            };
            match kind {
                Kind::EndBlock => break,
                Kind::DefineAbbrev => {}
                Kind::EnterBlock { block_id, .. } => match block_id {
                    block_id::CONSTANTS => {
                        if !self.f.insts.is_empty() {
                            return self.err("constants block after instructions");
                        }
                        self.constants_block(&mut rec)?
                    }
                    block_id::VALUE_SYMTAB => self.symtab_block(&mut rec)?,
                    _ => self.cur.skip_block()?,
                },
                Kind::Record { .. } if n > 0 => self.record(&short[..n], bit)?,
                Kind::Record { .. } => self.record(&rec, bit)?,
            }
        }
        self.rec = rec;
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        let Some(n) = self.num_blocks else {
            return self.err("function block has no basic block count record");
        };
        match self.f.insts.last() {
            None => return self.err("function has no instructions"),
            Some(i) if !i.kind.is_terminator() => {
                return self.err("function ends without a terminator instruction")
            }
            _ => {}
        }
        if self.f.block_starts.len() as u64 != n as u64 {
            let e = self.err(format!(
                "{n} basic blocks were declared but {} were defined",
                self.f.block_starts.len()
            ));
            // Point at the `blocks` record that made the claim.
            return match (e, self.blocks_pos) {
                (Err(DecodeError::Invalid { message, .. }), Some(position)) => {
                    Err(DecodeError::Invalid { message, position })
                }
                (e, _) => e,
            };
        }
        let next = self.next_value();
        if let Some((&v, _)) = self
            .forward
            .iter()
            .filter(|(&v, _)| v >= next)
            .min_by_key(|(&v, _)| v)
        {
            return self.err(format!(
                "value {} was forward-declared but never defined",
                self.name_of(v)
            ));
        }
        for &(v, t, phi) in &self.pending {
            if v >= next {
                return self.err(format!(
                    "phi %v{phi} uses value {} which is never defined",
                    self.name_of(v)
                ));
            }
            let actual = self.value_types[(v - self.f.base) as usize];
            if actual != t {
                return self.err(format!(
                    "phi uses {} as {} but it has type {}",
                    self.name_of(v),
                    self.ty_name(t),
                    self.ty_name(actual)
                ));
            }
        }
        Ok(())
    }

    fn constants_block(&mut self, buf: &mut Vec<u64>) -> Result<()> {
        let mut cur_ty: Option<TypeId> = None;
        let mut short = [0u64; SHORT_RECORD];
        while let Some(n) = self.next_leaf_short(buf, &mut short, "the constants block")? {
            let rec: &[u64] = if n > 0 { &short[..n] } else { buf };
            let (code, ops) = (rec[0], &rec[1..]);
            let (code, op) = (code, ops.first().copied());
            let nops = ops.len();
            if code == 1 {
                let (Some(t), 1) = (op, nops) else {
                    return self.err("set type record needs one operand");
                };
                let t = self.type_id(t)?;
                if matches!(self.types.ty(t), Type::Void | Type::Function(_)) {
                    return self.err("constants cannot have void or function type");
                }
                cur_ty = Some(t);
                continue;
            }
            let Some(ty) = cur_ty else {
                return self.err("constant before any set type record");
            };
            let value = match (code, op, nops) {
                (3, None, 0) => ConstValue::Undef,
                (4, Some(v), 1) => {
                    let Type::Int(w) = *self.types.ty(ty) else {
                        return self.err(format!(
                            "integer constant of non-integer type {}",
                            self.ty_name(ty)
                        ));
                    };
                    let x = sign_unrotate(v) as u64;
                    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
                    let t = x & mask;
                    // Accept the value if it is the sign- or zero-extension of its truncation.
                    let sext = if w == 64 {
                        t
                    } else {
                        (((t << (64 - w)) as i64) >> (64 - w)) as u64
                    };
                    if x != t && x != sext {
                        return self.err(format!(
                            "integer constant {} does not fit type i{w}",
                            sign_unrotate(v)
                        ));
                    }
                    ConstValue::Int(t)
                }
                (6, Some(v), 1) => match self.types.ty(ty) {
                    Type::Float if v <= u32::MAX as u64 => ConstValue::Float(v),
                    Type::Double => ConstValue::Float(v),
                    Type::Float => return self.err("float constant does not fit 32 bits"),
                    _ => {
                        return self.err(format!(
                            "floating point constant of type {}",
                            self.ty_name(ty)
                        ))
                    }
                },
                (3 | 4 | 6, _, _) => {
                    return self.err(format!(
                        "constant record code {code} has the wrong number of operands"
                    ))
                }
                _ => {
                    return self.err(format!(
                        "constant record code {code} is not allowed in PNaCl bitcode"
                    ))
                }
            };
            self.f.consts.push(Constant { ty, value });
            self.value_types.push(ty);
        }
        Ok(())
    }

    fn symtab_block(&mut self, buf: &mut Vec<u64>) -> Result<()> {
        while self.next_leaf(buf, "the value symbol table")? {
            let (code, ops) = (buf[0], &buf[1..]);
            match (code, ops.split_first()) {
                (1, Some((&id, name))) => {
                    let name = symbol_name(name);
                    let next = self.next_value() as u64;
                    if id >= next {
                        return self.err(format!(
                            "symbol table names value {id} but only {next} values exist"
                        ));
                    }
                    let name = name.or_else(|m| self.err(m))?;
                    self.f.value_names.push((ValueId(id as u32), name));
                }
                (2, Some((&bb, name))) => {
                    let name = symbol_name(name);
                    let bb = self.block(bb)?;
                    let name = name.or_else(|m| self.err(m))?;
                    self.f.block_names.push((bb, name));
                }
                _ => return self.err(format!("invalid value symbol table record code {code}")),
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn record(&mut self, rec: &[u64], bit: u64) -> Result<()> {
        let code = rec[0];
        let ops = &rec[1..];
        if code == code::DECLAREBLOCKS {
            let [n] = ops else {
                return self.err("blocks record needs one operand");
            };
            if self.num_blocks.is_some() || !self.f.insts.is_empty() {
                return self.err("blocks record must come first, once");
            }
            if *n == 0 || *n > u32::MAX as u64 {
                return self.err(format!("invalid basic block count {n}"));
            }
            self.num_blocks = Some(*n as u32);
            self.f.num_blocks = *n as u32;
            self.blocks_pos = Some(self.cur.position());
            // The count is the file's claim; reserve only what the block can hold.
            let cap = self.f.block_starts.capacity();
            self.f.block_starts.reserve((*n as usize).min(cap.max(16)));
            return Ok(());
        }
        let Some(nblocks) = self.num_blocks else {
            return self.err("instruction before the blocks record");
        };
        if code == code::FORWARDTYPEREF {
            let [v, t] = ops else {
                return self.err("forward type declaration needs 2 operands");
            };
            if *v > u32::MAX as u64 {
                return self.err(format!("forward declared value id {v} is too large"));
            }
            let v = *v as u32;
            let t = self.type_id(*t)?;
            if v < self.next_value() {
                // Declaring an already defined value is harmless if the types agree.
                let actual = self.ty_of(v)?;
                if actual != t {
                    return self.err(format!(
                        "forward declaration of {} as {} but it has type {}",
                        self.name_of(v),
                        self.ty_name(t),
                        self.ty_name(actual)
                    ));
                }
            } else if let Some(&old) = self.forward.get(&v) {
                if old != t {
                    return self.err(format!(
                        "{} is forward declared twice with different types",
                        self.name_of(v)
                    ));
                }
            } else {
                self.forward.insert(v, t);
                self.forward_order.push(Reverse(v));
            }
            self.f.forward_decls.push((ValueId(v), t));
            return Ok(());
        }
        if self.block_ended {
            if self.f.block_starts.len() as u64 >= nblocks as u64 {
                return self.err(format!(
                    "instruction after the last of the {nblocks} declared basic blocks"
                ));
            }
            self.f.block_starts.push(self.f.insts.len() as u32);
            self.block_ended = false;
        }
        let ty = self.instruction(code, ops)?;
        if ty != self.void_ty {
            self.use_type(ty);
            let v = self.next_value();
            let declared = match self.forward_order.peek() {
                Some(&Reverse(k)) if k <= v => self.take_forward(v),
                _ => None,
            };
            if let Some(t) = declared {
                if t != ty {
                    return self.err(format!(
                        "{} was forward declared as {} but is defined as {}",
                        self.name_of(v),
                        self.ty_name(t),
                        self.ty_name(ty)
                    ));
                }
            }
            self.value_types.push(ty);
            self.f.value_insts.push(self.f.insts.len() as u32 - 1);
        }
        // A terminator's arm in `instruction` has set `block_ended` (no test of the code
        // here for every instruction).
        let off = bit - self.f.bit;
        let off = u32::try_from(off).or_else(|_| self.err("function block is too large"))?;
        self.f.inst_bits.push(off);
        Ok(())
    }

    /// The forward declaration of `v`, the value being defined, removed from `forward`.
    /// Smaller keys are skipped in `forward_order` for good: no value below `v` is defined
    /// again (a constant can leave its declaration behind in `forward`; only values not
    /// yet defined are looked up there).
    #[inline(never)]
    fn take_forward(&mut self, v: u32) -> Option<TypeId> {
        while let Some(&Reverse(k)) = self.forward_order.peek() {
            if k > v {
                return None;
            }
            self.forward_order.pop();
            if k == v {
                return self.forward.remove(&v);
            }
        }
        None
    }

    #[inline(always)]
    fn void(&mut self) -> TypeId {
        self.use_type(self.void_ty)
    }

    /// Decodes one instruction record, appends it to the body and returns its result
    /// type (void if none). A terminator (ret, br, switch, unreachable) also ends the
    /// basic block (`block_ended`; on an error nothing reads it again). Each record's
    /// checks are a function of `records.rs`. Always inlined (into both inlined `record`
    /// call sites): with `err` out of line this saves the call and the spills around it
    /// (291.2M → 286.5M).
    #[inline(always)]
    fn instruction(&mut self, code: u64, ops: &[u64]) -> Result<TypeId> {
        let (kind, ty) = match code {
            code::BINOP => self.binop(ops)?,
            code::CAST => self.cast(ops)?,
            code::EXTRACTELT => self.extract_element(ops)?,
            code::INSERTELT => self.insert_element(ops)?,
            code::RET => self.ret(ops)?,
            code::BR => self.br(ops)?,
            code::SWITCH => self.switch(ops)?,
            code::UNREACHABLE => self.unreachable(ops)?,
            code::PHI => self.phi(ops)?,
            code::ALLOCA => self.alloca(ops)?,
            code::LOAD => self.load(ops)?,
            code::STORE => self.store(ops)?,
            code::CMP | code::CMP2 => self.cmp(ops)?,
            code::VSELECT => self.select(ops)?,
            code::CALL => self.call(ops)?,
            code::CALL_INDIRECT => self.call_indirect(ops)?,
            _ => {
                return self.err(format!(
                    "unknown or disallowed instruction record code {code}"
                ))
            }
        };
        // Pushed here, not returned: the instruction is never copied on its way out.
        let result = if ty != self.void_ty {
            ValueId(self.next_value())
        } else {
            ValueId::NONE
        };
        self.f.insts.push(Inst { kind, ty, result });
        Ok(ty)
    }

    #[inline(always)]
    fn align(&self, a: u64) -> Result<Align> {
        if a > 30 {
            return self.err(format!("alignment code {a} is out of range"));
        }
        Ok(Align(a as u32))
    }

    #[inline(always)]
    fn expect_ptr(&mut self, t: TypeId, what: &str) -> Result<()> {
        let i32 = self.i32();
        if t != i32 {
            return self.err(format!(
                "{what} address has type {}, not i32",
                self.ty_name(t)
            ));
        }
        Ok(())
    }
}

impl Function {
    /// Number of params + constants (the relative offset of the first instruction value).
    fn first_const_rel(&self) -> u32 {
        self.base + self.num_params + self.consts.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_rotation() {
        for v in [
            0i64,
            1,
            -1,
            2,
            -2,
            12345,
            -12345,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            assert_eq!(sign_unrotate(sign_rotate(v)), v, "{v}");
        }
        assert_eq!(sign_rotate(-1), 3);
        assert_eq!(sign_rotate(1), 2);
        assert_eq!(sign_unrotate(1), i64::MIN);
    }
}
