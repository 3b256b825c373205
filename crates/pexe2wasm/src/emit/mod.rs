//! Module assembly: memory layout and data (`layout`), the runtime and helper modules
//! linked in (`link`), and the sections of the output (`module`), with the pexe's
//! functions lowered in parallel.

pub mod layout;
pub mod link;
mod module;
mod validate;

pub use module::{emit, lower_module, EmitOptions, EmitStats, Emitted, Pending};

use crate::lower::LowerError;

/// Why the module could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    #[error("memory layout: {0}")]
    Layout(String),
    #[error("linking: {0}")]
    Link(String),
    #[error(transparent)]
    Lower(#[from] LowerError),
    #[error("{0}")]
    Other(String),
    /// The output did not validate (a converter bug): with the pexe function whose body
    /// is at fault, when one is.
    #[error("the output does not validate{}: {message}", function.as_ref().map(|f| format!(" (in function {f})")).unwrap_or_default())]
    Invalid {
        function: Option<String>,
        message: String,
    },
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
    let b = wat::parse_str(wat).map_err(|e| EmitError::Other(format!("built-in module: {e}")))?;
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
