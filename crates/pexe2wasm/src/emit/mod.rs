//! Module assembly: memory layout and data (`layout`), the runtime and helper modules
//! linked in (`link`), and the sections of the output (`module`), with the pexe's
//! functions lowered in parallel.

mod adapt;
pub mod layout;
pub mod link;
mod module;
pub mod pepper;
mod validate;

pub use module::{emit, lower_module, EmitOptions, EmitStats, Emitted, Pending};

use crate::lower::LowerError;
use crate::ErrorClass;

/// Why the module could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    #[error("memory layout: {0}")]
    Layout(#[from] LayoutError),
    /// A module linked into the output (the runtime, the fmod helpers) cannot be linked.
    #[error("linking: {module}: {problem}")]
    Link {
        module: &'static str,
        problem: LinkProblem,
    },
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// A defined function's type has no wasm equivalent.
    #[error("function @f{function} has a type without a wasm equivalent")]
    NoWasmType { function: u32 },
    /// The address of a function without a body (a declaration) is taken.
    #[error("the address of function @f{function}, which has no body, is taken")]
    AddressOfBodiless { function: u32 },
    /// A converter bug found while assembling the module.
    #[error("internal error: {0}")]
    Internal(#[from] InternalError),
    /// The output did not validate (a converter bug): with the pexe function whose body
    /// is at fault, when one is.
    #[error("the output does not validate{}: {message}", function.as_ref().map(|f| format!(" (in function {f})")).unwrap_or_default())]
    Invalid {
        function: Option<String>,
        message: String,
    },
}

impl EmitError {
    /// Whose problem this is (see [`ErrorClass`]).
    pub fn class(&self) -> ErrorClass {
        match self {
            EmitError::Layout(e) => e.class(),
            EmitError::Link { problem, .. } => problem.class(),
            EmitError::Lower(e) => e.class(),
            EmitError::NoWasmType { .. } | EmitError::AddressOfBodiless { .. } => {
                ErrorClass::Unsupported
            }
            EmitError::Internal(_) | EmitError::Invalid { .. } => ErrorClass::Internal,
        }
    }

    fn link(module: &'static str, problem: impl Into<LinkProblem>) -> EmitError {
        EmitError::Link {
            module,
            problem: problem.into(),
        }
    }
}

/// Why the pexe's globals and stack do not fit the wasm memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("global alignment of {align} bytes is larger than a page")]
    AlignmentOverPage { align: u64 },
    #[error("globals do not fit in 4 GiB")]
    GlobalsOver4GiB,
    #[error("globals and a {stack_size}-byte stack do not fit in 4 GiB")]
    StackOver4GiB { stack_size: u64 },
    /// A relocation in global data names a value that is not a global.
    #[error("relocation to value {target}, which is not a global")]
    RelocationTarget { target: u32 },
}

impl LayoutError {
    /// Whose problem this is: a relocation to a non-global is a bad pexe; the rest are
    /// valid pexes too large for a 32-bit wasm memory.
    pub fn class(&self) -> ErrorClass {
        match self {
            LayoutError::RelocationTarget { .. } => ErrorClass::Input,
            _ => ErrorClass::Unsupported,
        }
    }
}

/// What is wrong with a module linked into the output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkProblem {
    /// wasmparser could not read it (its message and byte offset).
    #[error("{message} (at offset {offset:#x})")]
    Malformed { message: String, offset: u64 },
    /// wasm-encoder could not re-encode a part of it.
    #[error("{message}")]
    Reencode { message: String },
    #[error("reference-typed values")]
    ReferenceTypes,
    #[error("unresolved import env.{name}")]
    UnresolvedEnvImport { name: String },
    #[error("import {module}.{name} is not a function; only env may provide others")]
    NonFunctionImport { module: String, name: String },
    #[error("defines its own table")]
    OwnTable,
    #[error("defines its own memory")]
    OwnMemory,
    #[error("uses exception tags")]
    Tags,
    #[error("has a start function")]
    StartFunction,
    #[error("function and code sections disagree")]
    FunctionCodeMismatch,
    #[error("import type {ty} out of range")]
    ImportTypeRange { ty: u32 },
    #[error("function type {ty} out of range")]
    FunctionTypeRange { ty: u32 },
    #[error("element offset is not a constant")]
    ElementOffset,
    /// The runtime calls the pexe's `_start`, which the pexe does not define.
    #[error("imports env.pexe_start but the pexe defines no _start")]
    NoPexeStart,
    #[error("a threaded module needs a runtime that exports _start")]
    NoRuntimeStart,
}

impl LinkProblem {
    /// Whose problem this is: a pexe without `_start` is bad input; anything else is in
    /// the module we link, ours (the runtime, the fmod helpers).
    pub fn class(&self) -> ErrorClass {
        match self {
            LinkProblem::NoPexeStart => ErrorClass::Input,
            _ => ErrorClass::Internal,
        }
    }
}

impl From<wasmparser::BinaryReaderError> for LinkProblem {
    fn from(e: wasmparser::BinaryReaderError) -> Self {
        LinkProblem::Malformed {
            message: e.message().to_string(),
            offset: e.offset(),
        }
    }
}

impl From<wasm_encoder::reencode::Error<String>> for LinkProblem {
    fn from(e: wasm_encoder::reencode::Error<String>) -> Self {
        LinkProblem::Reencode {
            message: e.to_string(),
        }
    }
}

/// A converter bug met while assembling the module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InternalError {
    /// The lowering panicked (caught, so one bad module does not take the process down).
    #[error("the lowering panicked{}", message.as_ref().map(|m| format!(": {m}")).unwrap_or_default())]
    Panicked { message: Option<String> },
    /// A built-in WAT module (placeholder runtime) does not compile.
    #[error("built-in module: {message}")]
    BuiltinModule { message: String },
    /// A section's bytes differ from the length computed for it in advance.
    #[error("section {section:?} wrote {wrote} bytes, {computed} computed")]
    SectionLength {
        section: wasm_encoder::SectionId,
        wrote: usize,
        computed: usize,
    },
    /// A section `wasm_encoder` encoded does not read back (its size or item count).
    #[error("an encoded section does not read back: {message}")]
    EncodedSection { message: String },
    #[error("longjmp tag type not interned")]
    LongjmpTagType,
    #[error("the setjmp counter global has index {actual}, {expected} expected")]
    SetjmpCounterIndex { expected: u32, actual: u32 },
}

/// The fmod helpers (`__pnacl_fmodf`, `__pnacl_fmod`), linked when the pexe uses `frem`
/// and the runtime does not export them.
pub const FMOD_WAT: &str = include_str!("fmod.wat");

/// A minimal runtime following the `env` contract, for tests and until the real IRT is
/// linked: `_start` builds an empty startup block (argc 0, no env, auxv with
/// AT_SYSINFO = 0) just below the stack top and calls `pexe_start`.
pub const PLACEHOLDER_RUNTIME_WAT: &str = include_str!("placeholder_irt.wat");

fn compiled(
    cell: &'static std::sync::OnceLock<Vec<u8>>,
    wat: &str,
) -> Result<&'static [u8], EmitError> {
    if let Some(b) = cell.get() {
        return Ok(b);
    }
    let b = wat::parse_str(wat).map_err(|e| InternalError::BuiltinModule {
        message: e.to_string(),
    })?;
    Ok(cell.get_or_init(|| b))
}

/// The compiled fmod helper module ([`FMOD_WAT`], compiled by build.rs).
pub fn fmod_module() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/fmod.wasm"))
}

/// The compiled placeholder runtime.
pub fn placeholder_runtime() -> Result<&'static [u8], EmitError> {
    static CELL: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    compiled(&CELL, PLACEHOLDER_RUNTIME_WAT)
}
