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
//! - `inst`, `intrinsics`: instructions; `phi`: parallel copies on CFG edges;
//! - `sjlj`: setjmp/longjmp with wasm exception handling.
//! - `simd`: vector instructions on wasm SIMD128 (`inst` dispatches vector cases to it).

mod cfg;
mod inst;
mod intrinsics;
mod phi;
mod simd;
mod sink;
mod sjlj;
mod stackify;
mod structurize;

use std::collections::HashMap;

use wasm_encoder::ValType;

use crate::bitstream::Position;
use crate::ir::{Module, Scalar, Type, TypeId};

/// Why a function could not be lowered. The verifier runs first, so these are either
/// features this converter does not support yet or inconsistencies in hand-built IR.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    #[error("{position}: in function @f{function}: {message} is not supported")]
    Unsupported {
        function: u32,
        message: String,
        position: Position,
    },
    #[error("{position}: in function @f{function}: {message}")]
    Invalid {
        function: u32,
        message: String,
        position: Position,
    },
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
    map: HashMap<Sig, u32>,
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
    /// Scalar kind of each scalar pexe type (`None` for vectors and the rest): the
    /// lowering asks for one per instruction ([`scalars`]).
    pub scalars: Vec<Option<Scalar>>,
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
    /// `__pnacl_fmodf` (f32, f32) -> f32 and `__pnacl_fmod` (f64, f64) -> f64.
    pub fmodf: u32,
    pub fmod: u32,
    /// Lower atomics to wasm atomic instructions (shared memory) instead of plain accesses.
    pub threads: bool,
    /// setjmp/longjmp (`sjlj.rs`): the tag `(param i32 i32)`, the invocation counter
    /// global and the type `[] -> [i32 i32]` of the catching block; [`NO_FUNC`] when the
    /// module calls neither.
    pub sjlj_tag: u32,
    pub sjlj_counter: u32,
    pub sjlj_catch_type: u32,
}

impl LowerCtx<'_> {
    /// The wasm value type of a pexe type.
    pub fn valtype(&self, t: TypeId) -> Option<ValType> {
        self.valtypes.get(t.0 as usize).copied().flatten()
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

/// Scalar kind of every pexe type that is a scalar (vectors get `None`).
pub fn scalars(m: &Module) -> Vec<Option<Scalar>> {
    m.types
        .iter()
        .map(|(id, t)| match t {
            Type::Vector { .. } => None,
            _ => m.types.scalar(id),
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
    pub(crate) code: Vec<u8>,
    pub(crate) uses: Vec<u32>,
    pub(crate) inline: Vec<bool>,
    pub(crate) buf: Vec<crate::ir::ValueId>,
    pub(crate) local_of: Vec<u32>,
    pub(crate) ordinal: Vec<(usize, u32)>,
    pub(crate) clean: Vec<bool>,
    pub(crate) static_off: Vec<u32>,
    pub(crate) label_pos: Vec<u32>,
    pub(crate) ctx: Vec<structurize::Ctx>,
    pub(crate) copies: Vec<(u32, crate::ir::ValueId)>,
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
        .ok_or(LowerError::Invalid {
            function: 0,
            message: format!("no function body #{body}"),
            position: Position::at_bit(0),
        })?;
    inst::FnLower::new(cx, f, scratch)?.run(scratch)
}
