//! Lowering: one pexe function → one wasm function body.
//!
//! [`LowerCtx`] is built once per module by `emit` (indices of functions, table slots,
//! global addresses, interned signatures, runtime helpers) and shared read-only, so
//! functions are lowered in parallel. [`lower_function`] does one function:
//! - `cfg`: reachable blocks, irreducible regions made reducible with dispatch nodes,
//!   reverse postorder, dominator tree, loop headers and merge nodes;
//! - `structurize`: block/loop/if/br/br_table nesting from the dominator tree ("Beyond
//!   Relooper", Ramsey 2022);
//! - `stackify`: which single-use values stay on the wasm stack instead of a local;
//! - `locals`: which local each remaining value gets (block-local values share);
//! - `inst`, `intrinsics`: instructions; `phi`: parallel copies on CFG edges;
//! - `sjlj`: setjmp/longjmp with wasm exception handling.
//! - `simd`: vector instructions on wasm SIMD128 (`inst` dispatches vector cases to it).

mod alloc;
mod analysis;
mod cfg;
mod code;
mod inst;
mod intrinsics;
mod known;
mod locals;
mod phi;
mod simd;
pub(crate) mod sink;
mod sjlj;
mod stackify;
mod structurize;

use rustc_hash::FxHashMap;

use wasm_encoder::ValType;

use crate::bitstream::Position;
use crate::ir::{FuncId, Function, Module, Scalar, Type, TypeId, ValueId};
use crate::ErrorClass;

/// Why a function could not be lowered. The verifier runs first, so these are either
/// features this converter does not support yet or inconsistencies in hand-built IR.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    #[error("{position}: in function @f{function}: {message} is not supported")]
    Unsupported {
        function: FuncId,
        message: String,
        position: Position,
    },
    #[error("{position}: in function @f{function}: {message}")]
    Invalid {
        function: FuncId,
        message: String,
        position: Position,
    },
}

impl LowerError {
    /// Whose problem this is: [`LowerError::Invalid`] counts as bad input (the IR breaks
    /// a rule the lowering relies on) and [`LowerError::Unsupported`] as unsupported.
    pub fn class(&self) -> ErrorClass {
        match self {
            LowerError::Unsupported { .. } => ErrorClass::Unsupported,
            LowerError::Invalid { .. } => ErrorClass::Input,
        }
    }

    /// Where in the pexe (the function or the instruction).
    pub fn position(&self) -> Position {
        match self {
            LowerError::Unsupported { position, .. } | LowerError::Invalid { position, .. } => {
                *position
            }
        }
    }
}

/// A wasm function signature (params, results).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sig {
    pub params: Vec<ValType>,
    pub results: Vec<ValType>,
}

/// Interned wasm function types, in type-section order.
#[derive(Debug, Default, Clone)]
pub struct SigTable {
    pub list: Vec<Sig>,
    /// Fx, not SipHash: the keys are a few bytes of our own making, looked up on every
    /// indirect call, so DoS resistance buys nothing.
    map: FxHashMap<Sig, u32>,
}

impl SigTable {
    pub fn intern(&mut self, sig: Sig) -> u32 {
        if let Some(&i) = self.map.get(&sig) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(sig.clone());
        self.map.insert(sig, i);
        i
    }
    pub fn get(&self, sig: &Sig) -> Option<u32> {
        self.map.get(sig).copied()
    }
}

/// Marks a function id without a wasm function (declarations, intrinsics).
pub const NO_FUNC: u32 = u32::MAX;

/// Everything the lowering of one function needs to know about the module.
pub struct LowerCtx<'m> {
    pub module: &'m Module,
    /// wasm value type of each pexe type (`None` for void and function types).
    pub valtypes: Vec<Option<ValType>>,
    /// Local slot of each pexe type: 0..=4 for i32, i64, f32, f64, v128 (the order locals
    /// are declared in), [`NO_SLOT`] without a wasm type. A byte per type: cheaper to
    /// look up per operand than the `ValType`.
    pub slots: Vec<u8>,
    /// Scalar kind of each pexe type (of the elements for vectors), as
    /// `TypeTable::scalar` gives it: looked up per operand, so kept in a flat table.
    pub scalars: Vec<Option<Scalar>>,
    /// Width of each integer type narrower than 32 bits, [`NOT_NARROW`] for every other
    /// type: asked for every call argument (`FnLower::push_arg`).
    pub narrow: Vec<u8>,
    /// The id of `i32` (the type of function and global addresses), if the module has it.
    pub i32_type: Option<TypeId>,
    /// wasm function index of each pexe function id ([`NO_FUNC`] for declarations).
    pub func_index: Vec<u32>,
    /// Table slot of each pexe function id (0 = address never taken).
    pub table_slot: Vec<u32>,
    /// Linear-memory address of each global.
    pub global_addr: Vec<u32>,
    /// Every signature the module needs (pexe functions and indirect calls).
    pub sigs: SigTable,
    pub stack_pointer: u32,
    pub thread_pointer: u32,
    /// C library functions recognised by name, per pexe function id ([`libm`]).
    pub libm: Vec<Libm>,
    /// `__pnacl_fmodf` (f32, f32) -> f32 and `__pnacl_fmod` (f64, f64) -> f64.
    pub fmodf: u32,
    pub fmod: u32,
    /// Lower atomics to wasm atomic instructions (shared memory) instead of plain accesses.
    pub threads: bool,
    /// Allocate locals with liveness across blocks (`alloc.rs`) instead of giving each
    /// value live across blocks a local of its own.
    pub liveness_locals: bool,
    /// setjmp/longjmp (`sjlj.rs`): the tag `(param i32 i32)`, the invocation counter
    /// global and the type `[] -> [i32 i32]` of the catching block; [`NO_FUNC`] when the
    /// module calls neither.
    pub sjlj_tag: u32,
    pub sjlj_counter: u32,
    pub sjlj_catch_type: u32,
    /// Indirect-call type index → the function that makes such calls when the pointer may
    /// name a function of another, adaptable type (`emit/adapt.rs`).
    pub icall_adapters: rustc_hash::FxHashMap<u32, u32>,
}

impl LowerCtx<'_> {
    /// The wasm value type of a pexe type.
    pub fn valtype(&self, t: TypeId) -> Option<ValType> {
        self.valtypes.get(t.0 as usize).copied().flatten()
    }
    /// True for vector types (the only types lowered to v128).
    #[inline]
    pub fn is_vector(&self, t: TypeId) -> bool {
        self.slots.get(t.0 as usize) == Some(&SLOT_V128)
    }
    /// The local slot of a type (see [`LowerCtx::slots`]).
    #[inline]
    pub fn slot(&self, t: TypeId) -> Option<usize> {
        match self.slots.get(t.0 as usize) {
            Some(&s) if s != NO_SLOT => Some(s as usize),
            _ => None,
        }
    }
    /// The width of an integer type narrower than 32 bits (they are zero-extended as call
    /// arguments and return values).
    #[inline]
    pub fn narrow_int(&self, t: TypeId) -> Option<u32> {
        match self.narrow.get(t.0 as usize) {
            Some(&b) if b != NOT_NARROW => Some(b as u32),
            _ => None,
        }
    }
    /// `TypeTable::scalar`, from the flat table.
    pub fn scalar(&self, t: TypeId) -> Option<Scalar> {
        self.scalars.get(t.0 as usize).copied().flatten()
    }
}

/// [`LowerCtx::slots`] value of types without a wasm type.
pub const NO_SLOT: u8 = u8::MAX;
const SLOT_V128: u8 = 4;

/// Local slots of every pexe type, from its wasm value type (see [`LowerCtx::slots`]).
pub fn slots(valtypes: &[Option<ValType>]) -> Vec<u8> {
    valtypes
        .iter()
        .map(|t| match t {
            Some(ValType::I32) => 0,
            Some(ValType::I64) => 1,
            Some(ValType::F32) => 2,
            Some(ValType::F64) => 3,
            Some(_) => SLOT_V128,
            None => NO_SLOT,
        })
        .collect()
}

/// [`LowerCtx::narrow`] value of types that are not integers narrower than 32 bits.
pub const NOT_NARROW: u8 = u8::MAX;

/// Narrow integer widths of every pexe type (see [`LowerCtx::narrow`]).
pub fn narrow(m: &Module) -> Vec<u8> {
    m.types
        .iter()
        .map(|(_, t)| match t {
            Type::Int(b) if *b < 32 => *b as u8,
            _ => NOT_NARROW,
        })
        .collect()
}

/// A C library function whose calls get an inline fast path ([`libm`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Libm {
    None,
    /// `double sqrt(double)`
    Sqrt,
    /// `float sqrtf(float)`
    Sqrtf,
}

/// The defined functions named `sqrt` / `sqrtf` with C's signature, per function id. A
/// call to one gets wasm's `sqrt` inline for arguments >= 0 (or -0), where C's sqrt is
/// exactly IEEE's square root and touches no errno, and still calls the function for the
/// rest (negative or NaN: EDOM, the library's NaN). C reserves these names to its
/// library, which is what clang assumes too when it inlines sqrt. newlib's sqrt in a pexe
/// is a large function with errno handling, and nbody calls it 20 million times: it was
/// most of that program's gap to clang (decision 0020).
pub fn libm(m: &Module) -> Vec<Libm> {
    m.functions
        .iter()
        .map(|d| {
            let (Some(name), false) = (d.name.as_deref(), d.is_proto) else {
                return Libm::None;
            };
            let Some(Type::Function(ft)) = m.types.get(d.ty) else {
                return Libm::None;
            };
            let one = |t: &Type| {
                ft.params.len() == 1
                    && m.types.get(ft.ret) == Some(t)
                    && m.types.get(ft.params[0]) == Some(t)
            };
            match name {
                "sqrt" if one(&Type::Double) => Libm::Sqrt,
                "sqrtf" if one(&Type::Float) => Libm::Sqrtf,
                _ => Libm::None,
            }
        })
        .collect()
}

/// Scalar kinds of every pexe type (see [`LowerCtx::scalars`]).
pub fn scalars(m: &Module) -> Vec<Option<Scalar>> {
    m.types.iter().map(|(id, _)| m.types.scalar(id)).collect()
}

/// [`Module::value_type`] for one function, with the module-wide lookups it repeats per
/// call (the `i32` type, the function's parameter types) done once.
#[derive(Clone, Copy)]
pub struct ValueTypes<'a> {
    f: &'a Function,
    nf: u32,
    i32_type: Option<TypeId>,
    /// The parameter types, `None` when the declaration or its type is missing.
    params: Option<&'a [TypeId]>,
}

impl<'a> ValueTypes<'a> {
    pub fn new(m: &'a Module, f: &'a Function, i32_type: Option<TypeId>) -> Self {
        let params = m
            .functions
            .get(f.decl.index())
            .and_then(|d| m.types.function(d.ty))
            .map(|ft| ft.params.as_slice());
        ValueTypes {
            f,
            nf: m.num_functions(),
            i32_type,
            params,
        }
    }
    /// The type of value `v` (the same answer as `Module::value_type`).
    pub fn get(&self, v: ValueId) -> Option<TypeId> {
        let (x, f) = (v.0, self.f);
        // The order of `Function::value_ref`: functions, globals, params, consts, insts.
        if x < self.nf || x < f.base {
            return self.i32_type;
        }
        let first_const = f.first_const();
        if x < first_const {
            return self.params?.get((x - f.base) as usize).copied();
        }
        let c = x - first_const;
        if (c as usize) < f.consts.len() {
            return Some(f.consts[c as usize].ty);
        }
        let n = c as usize - f.consts.len();
        f.value_insts
            .get(n)
            .and_then(|&i| f.insts.get(i as usize))
            .map(|i| i.ty)
    }
}

/// wasm value types of every pexe type.
pub fn valtypes(m: &Module) -> Vec<Option<ValType>> {
    m.types
        .iter()
        .map(|(_, t)| match t {
            Type::Int(64) => Some(ValType::I64),
            Type::Int(_) => Some(ValType::I32),
            Type::Float => Some(ValType::F32),
            Type::Double => Some(ValType::F64),
            Type::Vector { .. } => Some(ValType::V128),
            Type::Void | Type::Function(_) => None,
        })
        .collect()
}

/// The wasm signature of a pexe function type.
pub fn fn_sig(m: &Module, vt: &[Option<ValType>], ty: TypeId) -> Option<Sig> {
    let ft = m.types.function(ty)?;
    let mut params = Vec::with_capacity(ft.params.len());
    for p in &ft.params {
        params.push((*vt.get(p.0 as usize)?)?);
    }
    let results = match m.types.get(ft.ret)? {
        Type::Void => vec![],
        _ => vec![(*vt.get(ft.ret.0 as usize)?)?],
    };
    Some(Sig { params, results })
}

/// Which wasm features a lowered function used.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Used {
    pub bulk_memory: bool,
    pub sat_float_to_int: bool,
    pub sign_ext: bool,
    pub threads: bool,
    pub simd: bool,
    /// Exception handling (setjmp/longjmp).
    pub exceptions: bool,
}

impl Used {
    pub fn merge(&mut self, o: Used) {
        self.bulk_memory |= o.bulk_memory;
        self.sat_float_to_int |= o.sat_float_to_int;
        self.sign_ext |= o.sign_ext;
        self.threads |= o.threads;
        self.simd |= o.simd;
        self.exceptions |= o.exceptions;
    }
}

/// A lowered function: its body and what it used.
pub struct Lowered {
    /// The body as a code section entry holds it, without the size prefix: the local
    /// declarations, then the instructions (ending in `end`).
    pub body: Vec<u8>,
    pub used: Used,
    /// Set when the CFG needed a dispatch loop (irreducible control flow).
    pub irreducible: bool,
}

/// Per-thread working memory of the lowering, reused from one function to the next so
/// that lowering a function allocates (almost) only its output.
#[derive(Default)]
pub struct Scratch {
    pub(crate) users: Vec<u32>,
    pub(crate) setjmps: Vec<u32>,
    pub(crate) cfg: cfg::CfgScratch,
    pub(crate) inline: Vec<bool>,
    pub(crate) local_of: Vec<locals::Local>,
    /// The numbering's table before the layout (`analysis::Numbered`).
    pub(crate) numbering: Vec<locals::Ordinal>,
    pub(crate) last_use: Vec<u32>,
    pub(crate) local_queues: locals::Queues,
    pub(crate) alloc: alloc::AllocScratch,
    pub(crate) clean: Vec<bool>,
    pub(crate) static_off: Vec<u32>,
    pub(crate) label_pos: Vec<u32>,
    pub(crate) phi_blocks: Vec<bool>,
    pub(crate) ctx: Vec<structurize::Open>,
    pub(crate) tasks: Vec<structurize::Task>,
    pub(crate) copies: Vec<(locals::Local, crate::ir::ValueId)>,
}

/// Lowers the body `body` (index into `module.function_bodies`).
pub fn lower_function(cx: &LowerCtx<'_>, body: usize) -> Result<Lowered, LowerError> {
    lower_function_with(cx, body, &mut Scratch::default())
}

/// [`lower_function`] with working memory kept between calls (see [`Scratch`]).
pub fn lower_function_with(
    cx: &LowerCtx<'_>,
    body: usize,
    scratch: &mut Scratch,
) -> Result<Lowered, LowerError> {
    let f = cx
        .module
        .function_bodies
        .get(body)
        .ok_or_else(|| LowerError::Invalid {
            function: FuncId(0),
            message: format!("no function body #{body}"),
            position: Position::at_bit(0),
        })?;
    // Analysis, then emission from it. The lowering boxes its errors (see `inst::R`);
    // the public error is unboxed.
    analysis::FnAnalysis::compute(cx, f, scratch)
        .and_then(|a| inst::FnLower::new(cx, f, a, scratch).run(scratch))
        .map_err(|e| *e)
}

#[cfg(test)]
mod tests;
