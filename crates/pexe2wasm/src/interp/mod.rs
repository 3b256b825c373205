//! A reference interpreter of the IR ([`crate::ir::Module`], decoded and verified): what
//! a pexe function computes and writes to memory, independently of the lowering. The
//! differential fuzzer (`crates/difftest`, `fuzz/fuzz_targets/lower_diff.rs`) compares it
//! with the converted module under wasmtime; `pexe2wasm interp` runs one function of a
//! pexe with a trace, to debug a function that misbehaves after conversion.
//!
//! The machine follows the converted module where the program can see it:
//! - memory has the layout of `emit/layout.rs` (globals from 64 KiB with their
//!   initializers, then the stack), as many bytes as the module's initial memory, and
//!   accesses outside it trap;
//! - function pointers are table slots (slot `id + 1` here; the converter's numbering
//!   differs, so a program whose output depends on the numbers is not compared);
//! - where LLVM leaves a result undefined, the converter's output defines one, and this
//!   interpreter gives the same: division by zero and `i32`/`i64` `MIN / -1` trap,
//!   narrower `sdiv` wraps, `srem` of `MIN` by `-1` is 0, `fptosi`/`fptoui` saturate
//!   (NaN → 0) to 32 or 64 bits and then truncate, shifts by the width or more: see
//!   [`value::binop`]; a NaN made by arithmetic is the canonical quiet NaN (the harness
//!   runs wasm with NaN canonicalization), while loads, stores, bitcasts, `select`, phis
//!   and `fabs` keep NaN bits as they are;
//! - atomics are plain memory operations (one thread), `is.lock.free` is true up to 8
//!   bytes;
//! - setjmp/longjmp follow the converter's scheme (`lower/sjlj.rs`): each invocation of a
//!   function that calls setjmp takes the next id of one counter, `setjmp(buf)` writes
//!   the id, its call site and the stack pointer to `buf[0..12]` and returns 0,
//!   `longjmp(buf, val)` unwinds to the frame whose id is `buf[0]` (a trap when no active
//!   frame has it) and resumes after that site with `val` (0 → 1); values keep what they
//!   last held. The site and the stack pointer are this machine's own, so the jmp_buf's
//!   bytes are not comparable with the wasm's.
//!
//! A step limit ([`Machine::max_steps`]) ends a run that does not finish ([`Trap::OutOfFuel`]).

pub mod value;

use crate::ir::{
    Callee, ConstValue, FuncId, Function, InstKind, Intrinsic, Module, Scalar, Type, TypeId,
    ValueId, ValueRef,
};
pub use value::Val;

/// How a run ended abnormally. Traps of the program compare with wasm traps by
/// [`Trap::kind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Trap {
    #[error("integer division by zero")]
    DivisionByZero,
    #[error("integer overflow (MIN / -1)")]
    IntegerOverflow,
    #[error("memory access out of bounds at {addr:#x} ({len} bytes)")]
    OutOfBounds { addr: u64, len: u64 },
    #[error("unreachable executed")]
    Unreachable,
    #[error("llvm.trap called")]
    TrapCalled,
    #[error("indirect call through {0:#x}, which names no function of that type")]
    BadIndirectCall(u32),
    #[error("a longjmp found no active setjmp (id {0})")]
    UncaughtLongjmp(u32),
    #[error("call depth over the limit")]
    StackExhausted,
    #[error("out of fuel (step limit)")]
    OutOfFuel,
    /// The IR breaks a rule the verifier checks (the interpreter does not re-verify).
    #[error("invalid IR: {0}")]
    Invalid(&'static str),
    #[error("not supported by the interpreter: {0}")]
    Unsupported(String),
}

/// Trap kinds that the converted module and the interpreter must agree on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrapKind {
    DivisionByZero,
    IntegerOverflow,
    OutOfBounds,
    Unreachable,
    IndirectCall,
    UncaughtLongjmp,
    StackExhausted,
    OutOfFuel,
    Other,
}

impl Trap {
    pub fn kind(&self) -> TrapKind {
        match self {
            Trap::DivisionByZero => TrapKind::DivisionByZero,
            Trap::IntegerOverflow => TrapKind::IntegerOverflow,
            Trap::OutOfBounds { .. } => TrapKind::OutOfBounds,
            Trap::Unreachable | Trap::TrapCalled => TrapKind::Unreachable,
            Trap::BadIndirectCall(_) => TrapKind::IndirectCall,
            Trap::UncaughtLongjmp(_) => TrapKind::UncaughtLongjmp,
            Trap::StackExhausted => TrapKind::StackExhausted,
            Trap::OutOfFuel => TrapKind::OutOfFuel,
            Trap::Invalid(_) | Trap::Unsupported(_) => TrapKind::Other,
        }
    }
}

/// Why a machine could not be set up or a function not called.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InterpError {
    #[error("memory layout: {0}")]
    Layout(String),
    #[error("no function @f{0}")]
    NoFunction(u32),
    #[error("@f{0} has no body")]
    NoBody(u32),
    #[error("@f{func} takes {want} arguments, got {got}")]
    Arity { func: u32, want: usize, got: usize },
    #[error("argument {index} of @f{func}: {message}")]
    Argument {
        func: u32,
        index: usize,
        message: String,
    },
}

/// Stack size of the machine (the converter's default is 4 MiB; the differential harness
/// converts with this much).
pub const DEFAULT_STACK: u32 = 64 << 10;

/// An unwinding longjmp (internal: a `Result` error that is not a trap).
enum Stop {
    Trap(Trap),
    Longjmp { buf: u32, val: u32 },
}

impl From<Trap> for Stop {
    fn from(t: Trap) -> Self {
        Stop::Trap(t)
    }
}

type R<T> = Result<T, Stop>;

/// The machine: a module, its memory and its registers.
pub struct Machine<'m> {
    m: &'m Module,
    /// Linear memory, laid out as the converted module's.
    pub mem: Vec<u8>,
    /// Address of each global.
    pub global_addr: Vec<u32>,
    /// The stack pointer (`__stack_pointer`).
    pub sp: u32,
    /// The lowest the stack pointer has been (allocas), to tell how much stack a run
    /// used (the differential harness keeps its programs well inside the stack).
    pub sp_low: u32,
    /// The invocation counter of setjmp-calling functions.
    pub sjlj_counter: u32,
    /// Instructions executed so far, and the limit.
    pub steps: u64,
    pub max_steps: u64,
    /// Maximum call depth.
    pub max_depth: u32,
    depth: u32,
    /// Body index of each function id.
    bodies: Vec<Option<usize>>,
    /// Trace of executed instructions (`pexe2wasm interp --trace`).
    pub trace: Option<Box<dyn std::io::Write + 'm>>,
}

impl<'m> Machine<'m> {
    /// A machine for `m` with memory laid out for a stack of `stack_size` bytes.
    pub fn new(m: &'m Module, stack_size: u32) -> Result<Self, InterpError> {
        let lay = crate::emit::layout::layout(m, stack_size as u64, &[])
            .map_err(|e| InterpError::Layout(e.to_string()))?;
        let mut mem = vec![0u8; (lay.pages * crate::emit::layout::PAGE) as usize];
        let nf = m.num_functions();
        for (gi, g) in m.globals.iter().enumerate() {
            let mut p = lay.global_addr[gi] as usize;
            for e in g.init.elements() {
                match e {
                    crate::ir::Element::Zerofill(n) => p += *n as usize,
                    crate::ir::Element::Data(d) => {
                        mem[p..p + d.len()].copy_from_slice(d);
                        p += d.len();
                    }
                    crate::ir::Element::Reloc { target, addend } => {
                        let base = if *target < nf {
                            *target + 1
                        } else {
                            lay.global_addr
                                .get((*target - nf) as usize)
                                .copied()
                                .unwrap_or(0)
                        };
                        let v = base.wrapping_add(addend.unwrap_or(0));
                        mem[p..p + 4].copy_from_slice(&v.to_le_bytes());
                        p += 4;
                    }
                }
            }
        }
        let mut bodies = vec![None; nf as usize];
        for (i, b) in m.function_bodies.iter().enumerate() {
            if let Some(s) = bodies.get_mut(b.decl.index()) {
                *s = Some(i);
            }
        }
        Ok(Machine {
            m,
            mem,
            global_addr: lay.global_addr,
            sp: lay.stack_top as u32,
            sp_low: lay.stack_top as u32,
            sjlj_counter: 0,
            steps: 0,
            max_steps: 10_000_000,
            max_depth: 200,
            depth: 0,
            bodies,
            trace: None,
        })
    }

    /// The module.
    pub fn module(&self) -> &'m Module {
        self.m
    }

    /// Calls function `f` with `args`. `Ok(Err(trap))` when the program trapped.
    pub fn call(
        &mut self,
        f: FuncId,
        args: &[Val],
    ) -> Result<Result<Option<Val>, Trap>, InterpError> {
        let decl = self.m.function(f).ok_or(InterpError::NoFunction(f.0))?;
        let body = self.bodies[f.index()].ok_or(InterpError::NoBody(f.0))?;
        let ft = self
            .m
            .types
            .function(decl.ty)
            .ok_or(InterpError::NoFunction(f.0))?;
        if ft.params.len() != args.len() {
            return Err(InterpError::Arity {
                func: f.0,
                want: ft.params.len(),
                got: args.len(),
            });
        }
        for (i, (p, a)) in ft.params.iter().zip(args).enumerate() {
            if !self.fits(*p, a) {
                return Err(InterpError::Argument {
                    func: f.0,
                    index: i,
                    message: format!("{a} is not a {}", self.m.types.display(*p)),
                });
            }
        }
        self.depth = 0;
        let r = match self.run(body, args) {
            Ok(v) => Ok(v),
            Err(Stop::Trap(t)) => Err(t),
            Err(Stop::Longjmp { buf, .. }) => {
                let id = self.load_u32(buf).unwrap_or(0);
                Err(Trap::UncaughtLongjmp(id))
            }
        };
        Ok(r)
    }

    /// True if `v` is a value of type `t`.
    pub fn fits(&self, t: TypeId, v: &Val) -> bool {
        match (self.m.types.get(t), v) {
            (Some(Type::Int(b)), Val::Int { bits, .. }) => *b == *bits as u32,
            (Some(Type::Float), Val::F32(_)) | (Some(Type::Double), Val::F64(_)) => true,
            (Some(Type::Vector { len, .. }), Val::Vector { elem, n, .. }) => {
                *len == *n as u32 && self.m.types.scalar(t) == Some(*elem)
            }
            _ => false,
        }
    }

    fn tick(&mut self) -> R<()> {
        self.steps += 1;
        if self.steps > self.max_steps {
            return Err(Trap::OutOfFuel.into());
        }
        Ok(())
    }

    // ---- memory ----

    fn range(&self, addr: u32, len: u64) -> Result<std::ops::Range<usize>, Trap> {
        let end = addr as u64 + len;
        if end > self.mem.len() as u64 {
            return Err(Trap::OutOfBounds {
                addr: addr as u64,
                len,
            });
        }
        Ok(addr as usize..end as usize)
    }

    pub fn load_u32(&self, addr: u32) -> Result<u32, Trap> {
        let r = self.range(addr, 4)?;
        Ok(u32::from_le_bytes(self.mem[r].try_into().unwrap()))
    }

    fn store_u32(&mut self, addr: u32, v: u32) -> Result<(), Trap> {
        let r = self.range(addr, 4)?;
        self.mem[r].copy_from_slice(&v.to_le_bytes());
        Ok(())
    }

    /// Loads a value of type `t` (scalar or vector) at `addr`.
    pub fn load(&self, t: TypeId, addr: u32) -> Result<Val, Trap> {
        let types = &self.m.types;
        let s = types
            .scalar(t)
            .ok_or(Trap::Invalid("load of a non-value type"))?;
        let lanes = types.vector_len(t);
        let eb = (s.bits() as u64).div_ceil(8);
        let size = eb * lanes.max(1) as u64;
        let r = self.range(addr, size)?;
        let bytes = &self.mem[r];
        let word = |i: usize| -> u64 {
            let mut b = [0u8; 8];
            b[..eb as usize].copy_from_slice(&bytes[i * eb as usize..(i + 1) * eb as usize]);
            u64::from_le_bytes(b)
        };
        if lanes == 0 {
            return Ok(Val::scalar(s, word(0)));
        }
        let mut l = [0u64; 16];
        for (i, x) in l.iter_mut().enumerate().take(lanes as usize) {
            *x = word(i);
        }
        Ok(Val::Vector {
            elem: s,
            n: lanes as u8,
            lanes: l,
        })
    }

    pub fn store(&mut self, addr: u32, v: &Val) -> Result<(), Trap> {
        let mut bytes = Vec::with_capacity(16);
        v.to_bytes(&mut bytes);
        let r = self.range(addr, bytes.len() as u64)?;
        self.mem[r].copy_from_slice(&bytes);
        Ok(())
    }

    // ---- functions ----

    fn run(&mut self, body: usize, args: &[Val]) -> R<Option<Val>> {
        self.depth += 1;
        if self.depth > self.max_depth {
            self.depth -= 1;
            return Err(Trap::StackExhausted.into());
        }
        let saved_sp = self.sp;
        let r = self.run_body(body, args);
        self.sp = saved_sp;
        self.depth -= 1;
        r
    }

    fn run_body(&mut self, body: usize, args: &[Val]) -> R<Option<Val>> {
        let m = self.m;
        let f = &m.function_bodies[body];
        let mut fr = Frame::new(m, f, args);
        // A setjmp-calling function takes an invocation id on entry (`lower/sjlj.rs`).
        let calls_setjmp = f.insts.iter().any(|i| match &i.kind {
            InstKind::Call(c) => matches!(
                c.callee,
                Callee::Direct(d) if m.function(d).and_then(|d| d.intrinsic) == Some(Intrinsic::NaclSetjmp)
            ),
            _ => false,
        });
        let id = if calls_setjmp {
            self.sjlj_counter = self.sjlj_counter.wrapping_add(1);
            Some(self.sjlj_counter)
        } else {
            None
        };
        if let Some(t) = self.trace.as_mut() {
            let name = m
                .function(f.decl)
                .and_then(|d| d.name.clone())
                .unwrap_or_default();
            let _ = writeln!(
                t,
                "{:w$}enter @f{} {name} {args:?}",
                "",
                f.decl.0,
                w = 2 * self.depth as usize
            );
        }
        // Where execution continues: (block, instruction index in `insts`, predecessor).
        let mut pc = Pc {
            block: 0,
            inst: f.block_starts.first().copied().unwrap_or(0) as usize,
            pred: u32::MAX,
        };
        loop {
            match self.exec(f, &mut fr, &mut pc, id) {
                Ok(v) => {
                    if let Some(t) = self.trace.as_mut() {
                        let w = 2 * self.depth as usize;
                        let _ = match &v {
                            Some(v) => writeln!(t, "{:w$}return {v}", ""),
                            None => writeln!(t, "{:w$}return void", ""),
                        };
                    }
                    return Ok(v);
                }
                Err(Stop::Longjmp { buf, val }) if id.is_some() => {
                    let bid = self.load_u32(buf)?;
                    if Some(bid) != id {
                        return Err(Stop::Longjmp { buf, val });
                    }
                    let site = self.load_u32(buf.wrapping_add(4))? as usize;
                    self.sp = self.load_u32(buf.wrapping_add(8))?;
                    if let Some(r) = f.insts.get(site).and_then(|i| i.result()) {
                        fr.set(f, r, Val::int(32, val as u64));
                    }
                    pc = Pc {
                        block: block_of(f, site),
                        inst: site + 1,
                        pred: u32::MAX,
                    };
                    if let Some(t) = self.trace.as_mut() {
                        let _ = writeln!(
                            t,
                            "{:w$}longjmp lands at %v (inst {site}) with {val}",
                            "",
                            w = 2 * self.depth as usize
                        );
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Runs from `pc` until the function returns (or unwinds).
    fn exec(
        &mut self,
        f: &Function,
        fr: &mut Frame,
        pc: &mut Pc,
        id: Option<u32>,
    ) -> R<Option<Val>> {
        let m = self.m;
        loop {
            // At a block start (reached by a branch): the phis, as one parallel copy.
            let start = f.block_starts.get(pc.block as usize).copied().unwrap_or(0) as usize;
            if pc.inst == start && pc.pred != u32::MAX {
                let mut vals: Vec<(ValueId, Val)> = Vec::new();
                let mut i = start;
                while let Some(inst) = f.insts.get(i) {
                    let InstKind::Phi { incoming } = &inst.kind else {
                        break;
                    };
                    self.tick()?;
                    let (v, _) = f
                        .incoming(*incoming)
                        .iter()
                        .find(|(_, b)| b.0 == pc.pred)
                        .ok_or(Trap::Invalid("phi without a value for its predecessor"))?;
                    vals.push((inst.result, fr.get(self, f, *v)?));
                    i += 1;
                }
                for (r, v) in vals {
                    self.trace_val(f, r, &v);
                    fr.set(f, r, v);
                }
                pc.inst = i;
            }
            let inst = f
                .insts
                .get(pc.inst)
                .ok_or(Trap::Invalid("fell off the body"))?;
            self.tick()?;
            let idx = pc.inst;
            pc.inst += 1;
            let get = |s: &Self, fr: &Frame, v: ValueId| fr.get(s, f, v);
            let result: Option<Val> = match &inst.kind {
                InstKind::Binop { op, lhs, rhs, .. } => Some(value::binop(
                    *op,
                    &get(self, fr, *lhs)?,
                    &get(self, fr, *rhs)?,
                )?),
                InstKind::Cast { op, val } => {
                    let a = get(self, fr, *val)?;
                    let to = m.types.scalar(inst.ty).ok_or(Trap::Invalid("cast type"))?;
                    Some(if *op == crate::ir::CastOp::Bitcast {
                        value::bitcast(&a, to, m.types.vector_len(inst.ty))?
                    } else {
                        value::cast(*op, &a, to)?
                    })
                }
                InstKind::ExtractElement { vec, index } => {
                    let i = get(self, fr, *index)?.raw();
                    Some(value::extract(&get(self, fr, *vec)?, i)?)
                }
                InstKind::InsertElement { vec, elt, index } => {
                    let i = get(self, fr, *index)?.raw();
                    Some(value::insert(
                        &get(self, fr, *vec)?,
                        &get(self, fr, *elt)?,
                        i,
                    )?)
                }
                InstKind::Ret { val } => {
                    return match val {
                        Some(v) => Ok(Some(get(self, fr, *v)?)),
                        None => Ok(None),
                    };
                }
                InstKind::Br { target } => {
                    self.jump(f, pc, target.0);
                    continue;
                }
                InstKind::CondBr {
                    cond,
                    then_bb,
                    else_bb,
                } => {
                    let c = get(self, fr, *cond)?.raw() & 1 != 0;
                    self.jump(f, pc, if c { then_bb.0 } else { else_bb.0 });
                    continue;
                }
                InstKind::Switch(s) => {
                    let c = get(self, fr, s.cond)?;
                    let Val::Int { bits, v } = c else {
                        return Err(Trap::Invalid("switch on a non-integer").into());
                    };
                    let target = s
                        .cases
                        .iter()
                        .find(|k| value::mask(k.value as u64, bits as u32) == v)
                        .map_or(s.default, |k| k.target);
                    self.jump(f, pc, target.0);
                    continue;
                }
                InstKind::Unreachable => return Err(Trap::Unreachable.into()),
                InstKind::Phi { .. } => {
                    return Err(Trap::Invalid("phi after the block start").into())
                }
                InstKind::Alloca { size, align } => {
                    let n = get(self, fr, *size)?.raw() as u32;
                    let a = align.bytes().unwrap_or(1).max(1) as u32;
                    let sp = self.sp.wrapping_sub(n) & !(a - 1);
                    self.sp = sp;
                    self.sp_low = self.sp_low.min(sp);
                    Some(Val::int(32, sp as u64))
                }
                InstKind::Load { ptr, .. } => {
                    let p = get(self, fr, *ptr)?.as_u32();
                    Some(self.load(inst.ty, p)?)
                }
                InstKind::Store { ptr, val, .. } => {
                    let p = get(self, fr, *ptr)?.as_u32();
                    let v = get(self, fr, *val)?;
                    self.store(p, &v)?;
                    None
                }
                InstKind::Cmp { pred, lhs, rhs } => Some(value::cmp(
                    *pred,
                    &get(self, fr, *lhs)?,
                    &get(self, fr, *rhs)?,
                )?),
                InstKind::Select { cond, t, f: fv } => Some(value::select(
                    &get(self, fr, *cond)?,
                    &get(self, fr, *t)?,
                    &get(self, fr, *fv)?,
                )?),
                InstKind::Call(c) => {
                    let mut args = Vec::with_capacity(c.args.len as usize);
                    for a in f.args(c) {
                        args.push(get(self, fr, *a)?);
                    }
                    match c.callee {
                        Callee::Direct(d) => {
                            let decl = m.function(d).ok_or(Trap::Invalid("callee"))?;
                            if let Some(i) = decl.intrinsic {
                                self.intrinsic(i, idx, &args, inst.ty, id)?
                            } else {
                                let body = self.bodies[d.index()].ok_or_else(|| {
                                    Trap::Unsupported(format!(
                                        "call to the declared function @f{}",
                                        d.0
                                    ))
                                })?;
                                self.run(body, &args)?
                            }
                        }
                        Callee::Indirect(v) => {
                            let slot = get(self, fr, v)?.as_u32();
                            let fid = FuncId(slot.wrapping_sub(1));
                            let Some(body) = self.bodies.get(fid.index()).copied().flatten() else {
                                return Err(Trap::BadIndirectCall(slot).into());
                            };
                            // A function of another type that C tolerates is called with
                            // its arguments and result adapted (decision 0016); any other
                            // mismatch traps, as `call_indirect` does.
                            let Some(adapted) = self.adapt_args(fid, &args, inst.ty) else {
                                return Err(Trap::BadIndirectCall(slot).into());
                            };
                            let r = self.run(body, &adapted)?;
                            self.adapt_result(r, inst.ty)
                        }
                    }
                }
            };
            if let (Some(v), Some(r)) = (result, inst.result()) {
                self.trace_val(f, r, &v);
                fr.set(f, r, v);
            }
        }
    }

    /// The arguments for calling `fid` with `args` from a call whose result type is `ret`:
    /// as they are when the types match; adapted when they differ only in ways decision
    /// 0016 allows (the wasm types agree where both sides have a parameter, the results
    /// agree or one side has none): extra arguments dropped, missing ones zero, a vector
    /// passed for another vector shape reinterpreted (both are a `v128`). `None`: the call
    /// traps.
    fn adapt_args(&self, fid: FuncId, args: &[Val], ret: TypeId) -> Option<Vec<Val>> {
        let m = self.m;
        let ft = m.types.function(m.function(fid)?.ty)?;
        let (callee_void, call_void) = (m.types.is_void(ft.ret), m.types.is_void(ret));
        if !callee_void && !call_void && wasm_kind(&m.types, ft.ret) != wasm_kind(&m.types, ret) {
            return None;
        }
        let mut out = Vec::with_capacity(ft.params.len());
        for (k, &p) in ft.params.iter().enumerate() {
            match args.get(k) {
                Some(a) if self.fits(p, a) => out.push(*a),
                Some(a) if wasm_kind_of(a) == wasm_kind(&m.types, p) => {
                    out.push(value::bitcast(a, m.types.scalar(p)?, m.types.vector_len(p)).ok()?)
                }
                Some(_) => return None,
                None => out.push(zero(&m.types, p)?),
            }
        }
        Some(out)
    }

    /// A callee's result as the call's (`ret`): dropped, zero, or a vector reinterpreted.
    fn adapt_result(&self, r: Option<Val>, ret: TypeId) -> Option<Val> {
        let types = &self.m.types;
        if types.is_void(ret) {
            return None;
        }
        match r {
            Some(v) if self.fits(ret, &v) => Some(v),
            Some(v) => value::bitcast(&v, types.scalar(ret)?, types.vector_len(ret)).ok(),
            None => zero(types, ret),
        }
    }

    fn trace_val(&mut self, f: &Function, r: ValueId, v: &Val) {
        let d = 2 * self.depth as usize + 2;
        if let Some(t) = self.trace.as_mut() {
            let _ = writeln!(
                t,
                "{:d$}%v{} = {v}",
                "",
                r.0.wrapping_sub(f.first_inst_value())
            );
        }
    }

    fn jump(&mut self, f: &Function, pc: &mut Pc, to: u32) {
        pc.pred = pc.block;
        pc.block = to;
        pc.inst = f.block_starts.get(to as usize).copied().unwrap_or(u32::MAX) as usize;
    }

    fn intrinsic(
        &mut self,
        i: Intrinsic,
        idx: usize,
        a: &[Val],
        ty: TypeId,
        id: Option<u32>,
    ) -> R<Option<Val>> {
        use Intrinsic::*;
        let u = |k: usize| a.get(k).map_or(0, |v| v.raw());
        Ok(match i {
            Memcpy | Memmove => {
                let (d, s, n) = (u(0) as u32, u(1) as u32, u(2) as u32 as u64);
                let rs = self.range(s, n)?;
                let rd = self.range(d, n)?;
                self.mem.copy_within(rs, rd.start);
                None
            }
            Memset => {
                let (d, v, n) = (u(0) as u32, u(1) as u8, u(2) as u32 as u64);
                let rd = self.range(d, n)?;
                self.mem[rd].fill(v);
                None
            }
            Bswap(s) => {
                let x = u(0);
                Some(Val::scalar(
                    s,
                    match s {
                        Scalar::I16 => (x as u16).swap_bytes() as u64,
                        Scalar::I32 => (x as u32).swap_bytes() as u64,
                        _ => x.swap_bytes(),
                    },
                ))
            }
            Ctlz(s) => {
                let x = u(0);
                Some(Val::scalar(
                    s,
                    if s == Scalar::I64 {
                        x.leading_zeros() as u64
                    } else {
                        (x as u32).leading_zeros() as u64
                    },
                ))
            }
            Cttz(s) => {
                let x = u(0);
                Some(Val::scalar(
                    s,
                    if s == Scalar::I64 {
                        x.trailing_zeros() as u64
                    } else {
                        (x as u32).trailing_zeros() as u64
                    },
                ))
            }
            Ctpop(s) => Some(Val::scalar(s, u(0).count_ones() as u64)),
            Fabs(..) => Some(value::fabs(&a[0])?),
            Sqrt(_) => Some(value::sqrt(&a[0])?),
            Stacksave => Some(Val::int(32, self.sp as u64)),
            Stackrestore => {
                self.sp = u(0) as u32;
                None
            }
            Trap => return Err(self::Trap::TrapCalled.into()),
            NaclReadTp => Some(Val::int(32, 0)),
            NaclSetjmp => {
                let buf = u(0) as u32;
                let Some(id) = id else {
                    return Err(self::Trap::Invalid("setjmp outside a setjmp frame").into());
                };
                self.store_u32(buf, id)?;
                self.store_u32(buf.wrapping_add(4), idx as u32)?;
                self.store_u32(buf.wrapping_add(8), self.sp)?;
                Some(Val::int(32, 0))
            }
            NaclLongjmp => {
                let (buf, val) = (u(0) as u32, u(1) as u32);
                return Err(Stop::Longjmp {
                    buf,
                    val: if val == 0 { 1 } else { val },
                });
            }
            AtomicLoad(s) => {
                let t = self.scalar_type(s, ty);
                Some(self.load(t, u(0) as u32)?)
            }
            AtomicStore(_) => {
                self.store(u(1) as u32, &a[0])?;
                None
            }
            AtomicRmw(s) => {
                let (op, p) = (u(0), u(1) as u32);
                let t = self.scalar_type(s, ty);
                let old = self.load(t, p)?;
                let (x, y) = (old.raw(), u(2));
                use crate::ir::intrinsics::atomic_rmw::*;
                let new = match op {
                    ADD => x.wrapping_add(y),
                    SUB => x.wrapping_sub(y),
                    OR => x | y,
                    AND => x & y,
                    XOR => x ^ y,
                    XCHG => y,
                    _ => return Err(self::Trap::Invalid("atomic rmw operation").into()),
                };
                self.store(p, &Val::scalar(s, new))?;
                Some(old)
            }
            AtomicCmpxchg(s) => {
                let p = u(0) as u32;
                let t = self.scalar_type(s, ty);
                let old = self.load(t, p)?;
                if old.raw() == u(1) {
                    self.store(p, &Val::scalar(s, u(2)))?;
                }
                Some(old)
            }
            AtomicFence | AtomicFenceAll => None,
            AtomicIsLockFree => Some(Val::bool(u(0) < 9)),
        })
    }

    /// The type id of an atomic's value (its result type; `ty` when it is that scalar).
    fn scalar_type(&self, s: Scalar, ty: TypeId) -> TypeId {
        if self.m.types.scalar(ty) == Some(s) && !self.m.types.is_vector(ty) {
            return ty;
        }
        self.m.types.find(&Type::Int(s.bits())).unwrap_or(ty)
    }
}

use std::io::Write as _;

/// The wasm value type a pexe type lowers to, as a small number (0 none, 1 i32, 2 i64,
/// 3 f32, 4 f64, 5 v128).
fn wasm_kind(types: &crate::ir::TypeTable, t: TypeId) -> u8 {
    match types.get(t) {
        Some(Type::Int(64)) => 2,
        Some(Type::Int(_)) => 1,
        Some(Type::Float) => 3,
        Some(Type::Double) => 4,
        Some(Type::Vector { .. }) => 5,
        _ => 0,
    }
}

fn wasm_kind_of(v: &Val) -> u8 {
    match v {
        Val::Int { bits: 64, .. } => 2,
        Val::Int { .. } => 1,
        Val::F32(_) => 3,
        Val::F64(_) => 4,
        Val::Vector { .. } => 5,
    }
}

/// The zero of a type (a missing argument, a missing result).
fn zero(types: &crate::ir::TypeTable, t: TypeId) -> Option<Val> {
    let s = types.scalar(t)?;
    let n = types.vector_len(t);
    Some(if n > 0 {
        Val::Vector {
            elem: s,
            n: n as u8,
            lanes: [0; 16],
        }
    } else {
        Val::scalar(s, 0)
    })
}

#[derive(Debug, Clone, Copy)]
struct Pc {
    block: u32,
    inst: usize,
    /// The block control came from (`u32::MAX`: none, as at entry or after a longjmp).
    pred: u32,
}

fn block_of(f: &Function, inst: usize) -> u32 {
    match f.block_starts.binary_search(&(inst as u32)) {
        Ok(mut b) => {
            // Empty blocks share a start; the instruction belongs to the last of them.
            while f.block_starts.get(b + 1) == Some(&(inst as u32)) {
                b += 1;
            }
            b as u32
        }
        Err(b) => b.saturating_sub(1) as u32,
    }
}

/// A function's values: parameters, constants and instruction results.
struct Frame {
    base: u32,
    vals: Vec<Option<Val>>,
}

impl Frame {
    fn new(m: &Module, f: &Function, args: &[Val]) -> Frame {
        let n = f.num_params as usize + f.consts.len() + f.value_insts.len();
        let mut vals = Vec::with_capacity(n);
        vals.extend(args.iter().map(|a| Some(*a)));
        vals.resize(f.num_params as usize, None);
        for c in &f.consts {
            let s = m.types.scalar(c.ty);
            let n = m.types.vector_len(c.ty);
            vals.push(s.map(|s| match c.value {
                ConstValue::Undef if n > 0 => Val::Vector {
                    elem: s,
                    n: n as u8,
                    lanes: [0; 16],
                },
                ConstValue::Undef => Val::scalar(s, 0),
                ConstValue::Int(v) | ConstValue::Float(v) => Val::scalar(s, v),
            }));
        }
        vals.resize(n, None);
        Frame { base: f.base, vals }
    }

    fn get(&self, mach: &Machine<'_>, f: &Function, v: ValueId) -> Result<Val, Trap> {
        match f.value_ref(v, mach.m.num_functions()) {
            ValueRef::Function(fid) => Ok(Val::int(32, fid.0 as u64 + 1)),
            ValueRef::Global(g) => mach
                .global_addr
                .get(g.index())
                .map(|a| Val::int(32, *a as u64))
                .ok_or(Trap::Invalid("global id")),
            _ => self
                .vals
                .get(v.0.wrapping_sub(self.base) as usize)
                .copied()
                .flatten()
                .ok_or(Trap::Invalid("value used before it is defined")),
        }
    }

    fn set(&mut self, _f: &Function, v: ValueId, x: Val) {
        if let Some(s) = self.vals.get_mut(v.0.wrapping_sub(self.base) as usize) {
            *s = Some(x);
        }
    }
}
