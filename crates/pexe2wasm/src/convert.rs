//! The whole conversion: decode → verify → lower + emit → validate.

use crate::bitstream::Position;
use crate::decode::{decode, DecodeError};
use crate::emit::{self, EmitError, EmitOptions, EmitStats, InternalError};
use crate::lower::LowerError;
use crate::verify::{self, Finding, VerifyErrors};
use crate::ErrorClass;

/// Conversion options.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// Main-thread stack size in bytes (rounded up to 64 KiB).
    pub stack_size: u32,
    /// Whether the output uses wasm threads (see [`Threads`]).
    pub threads: Threads,
    /// Link the runtime (`_start` and the IRT). Off, the output is a bare module that
    /// needs no `_start` (for tests of the lowering).
    pub link_runtime: bool,
    /// Export every pexe function by name (else `f<N>`); for tests.
    pub export_all_functions: bool,
    /// The compiled runtime to link; `None` uses [`crate::runtime::irt_module`].
    pub runtime: Option<Vec<u8>>,
    /// How wasm locals are allocated (see [`Locals`]).
    pub locals: Locals,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            stack_size: 4 << 20,
            threads: Threads::Auto,
            link_runtime: true,
            export_all_functions: false,
            runtime: None,
            locals: Locals::Blocks,
        }
    }
}

impl ConvertOptions {
    /// The defaults but for a bare module with every function exported: what tests and
    /// benchmarks use to call the lowered functions one by one.
    pub fn functions_only() -> Self {
        ConvertOptions {
            link_runtime: false,
            export_all_functions: true,
            ..Default::default()
        }
    }
}

/// Whether a module is converted for threads.
///
/// A threaded module imports one shared memory (`env`.`memory`), lowers atomics to wasm
/// atomics, links the threaded runtime (wasi-threads `thread-spawn`, `wasi_thread_start`,
/// futexes as `memory.atomic.wait32`/`notify`) and initializes its data once, in `_start`
/// (docs/decisions/0006-threads.md). It needs a host with wasi-threads and the runtime's
/// `pexe2wasm`.`thread_exit`, as `pexe2wasm run` has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Threads {
    /// On when the pexe names `nacl-irt-thread-0.1` (it may start threads), else off.
    #[default]
    Auto,
    On,
    Off,
}

/// How the lowering gives values wasm locals (decision 0020).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Locals {
    /// Values used only in their block share locals; each value live across blocks has
    /// one of its own. The fast default.
    #[default]
    Blocks,
    /// Liveness across blocks (`lower/alloc.rs`): values whose lives never meet share a
    /// local and phis take an incoming value's local. The code section is 7-14% smaller;
    /// conversion takes 13-15% more instructions (the CLI's `--small-code`).
    Liveness,
}

impl Locals {
    /// The choice the CLI's `--small-code` and the service's `small_code=true` name:
    /// [`Locals::Liveness`] when set, else the default [`Locals::Blocks`].
    pub fn for_small_code(small_code: bool) -> Locals {
        if small_code {
            Locals::Liveness
        } else {
            Locals::Blocks
        }
    }
}

/// The IRT interface whose query makes [`Threads::Auto`] convert for threads.
pub const THREAD_INTERFACE: &str = "nacl-irt-thread-0.1";

/// wasm features the output uses (beyond MVP).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Features {
    pub bulk_memory: bool,
    pub sign_ext: bool,
    pub sat_float_to_int: bool,
    pub threads: bool,
    pub simd: bool,
    /// Exception handling (exnref form), only for setjmp/longjmp.
    pub exceptions: bool,
}

impl Features {
    /// Feature names as wasm tools spell them.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v = vec!["mutable-globals"];
        if self.bulk_memory {
            v.push("bulk-memory");
        }
        if self.sign_ext {
            v.push("sign-ext");
        }
        if self.sat_float_to_int {
            v.push("nontrapping-fptoint");
        }
        if self.threads {
            v.push("threads");
        }
        if self.simd {
            v.push("simd");
        }
        if self.exceptions {
            v.push("exceptions");
        }
        v
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConvertStats {
    pub pexe_bytes: usize,
    pub wasm_bytes: usize,
    pub emit: EmitStats,
}

/// A converted module.
#[derive(Debug, Clone)]
pub struct Converted {
    pub wasm: Vec<u8>,
    pub features: Features,
    /// Imports of the module (module, name).
    pub imports: Vec<(String, String)>,
    pub stats: ConvertStats,
}

/// Why a conversion failed. [`ConvertError::class`] says whose problem it is, and
/// [`ConvertError::position`] where in the pexe, when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error(transparent)]
    Verify(#[from] VerifyErrors),
    #[error("{0}")]
    NotRunnable(Finding),
    #[error(transparent)]
    Lower(LowerError),
    #[error(transparent)]
    Emit(EmitError),
    /// The output did not validate: a converter bug.
    #[error("internal error: the output does not validate{}: {message}", function.as_ref().map(|f| format!(" (in function {f})")).unwrap_or_default())]
    Invalid {
        message: String,
        function: Option<String>,
    },
}

impl From<EmitError> for ConvertError {
    fn from(e: EmitError) -> Self {
        match e {
            EmitError::Lower(l) => ConvertError::Lower(l),
            EmitError::Invalid { function, message } => ConvertError::Invalid { message, function },
            e => ConvertError::Emit(e),
        }
    }
}

impl ConvertError {
    /// Whose problem this is: the one classification the CLI and the service report
    /// from. Decoding, ABI and runnability errors are bad input; the lowering's and
    /// assembly's errors say themselves; output that does not validate is ours.
    pub fn class(&self) -> ErrorClass {
        match self {
            ConvertError::Decode(e) => e.class(),
            ConvertError::Verify(_) | ConvertError::NotRunnable(_) => ErrorClass::Input,
            ConvertError::Lower(e) => e.class(),
            ConvertError::Emit(e) => e.class(),
            ConvertError::Invalid { .. } => ErrorClass::Internal,
        }
    }

    /// Position in the pexe, when the error has one.
    pub fn position(&self) -> Option<Position> {
        match self {
            // Native code has no position worth naming: it is not a pexe at all.
            ConvertError::Decode(e) if e.native().is_some() => None,
            ConvertError::Decode(e) => Some(e.position()),
            ConvertError::Verify(v) => v.0.first().map(|f| f.position),
            ConvertError::NotRunnable(f) => Some(f.position),
            ConvertError::Lower(e) => Some(e.position()),
            ConvertError::Emit(_) | ConvertError::Invalid { .. } => None,
        }
    }
}

/// Converts a pexe to a wasm module.
pub fn convert(data: &[u8], opts: &ConvertOptions) -> Result<Converted, ConvertError> {
    convert_module(decode(data)?, data.len(), opts)
}

/// [`convert`] for a module already decoded from `pexe_bytes` bytes (for callers that
/// also read facts from the module, so it is decoded once).
pub fn convert_module(
    module: crate::ir::Module,
    pexe_bytes: usize,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    // The verifier and the lowering run at the same time; the lowering's result counts
    // only once the verifier accepted the module. The lowering is written not to panic,
    // but on unverified input a panic is caught rather than trusted away. The search for
    // the thread interface (which runtime to link) is on the lowering's side, so it
    // overlaps the verifier instead of delaying both.
    let (verified, (threads, emitted)) = rayon::join(
        || -> Result<(), ConvertError> {
            verify::verify_module(&module)?;
            if opts.link_runtime {
                verify::check_runnable(&module).map_err(ConvertError::NotRunnable)?;
            }
            Ok(())
        },
        || {
            // A Pepper plugin (it asks for the PPAPI hook) gets the Pepper runtime and
            // its glue, and threads, as it had in Chrome; unless threads are refused, when
            // it converts as a command-line program that cannot start.
            let pepper = opts.link_runtime
                && opts.runtime.is_none()
                && opts.threads != Threads::Off
                && crate::info::names_irt_interface(&module, crate::needs::PPAPI_HOOK_INTERFACE);
            let threads = match opts.threads {
                Threads::On => true,
                Threads::Off => false,
                Threads::Auto => {
                    pepper || crate::info::names_irt_interface(&module, THREAD_INTERFACE)
                }
            };
            let runtime: Option<&[u8]> = if opts.link_runtime {
                Some(match &opts.runtime {
                    Some(r) => r.as_slice(),
                    None if pepper => crate::runtime::irt_pepper_module(),
                    None if threads => crate::runtime::irt_threads_module(),
                    None => crate::runtime::irt_module(),
                })
            } else {
                None
            };
            let eopts = EmitOptions {
                stack_size: opts.stack_size,
                threads,
                export_all_functions: opts.export_all_functions,
                pepper: pepper.then(|| crate::info::interface_names(&module).1),
                validate: true,
                liveness_locals: opts.locals == Locals::Liveness,
            };
            let emitted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                emit::lower_module(&module, runtime, &eopts)
            }));
            (threads, emitted)
        },
    );
    verified?;
    let pending = match emitted {
        Ok(r) => r?,
        Err(payload) => {
            let message = (payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .or_else(|| payload.downcast_ref::<String>().cloned());
            return Err(ConvertError::Emit(
                InternalError::Panicked { message }.into(),
            ));
        }
    };
    // The bodies are copied into place and validated (`emit::Pending::finish`) while the
    // IR, tens of thousands of allocations for a large pexe, is freed: freeing it would
    // otherwise be a serial tail of the conversion.
    let (out, ()) = rayon::join(|| pending.finish(), move || drop(module));
    let out = out?;
    let features = Features {
        bulk_memory: true,
        sign_ext: out.used.sign_ext,
        sat_float_to_int: out.used.sat_float_to_int,
        threads,
        simd: out.used.simd,
        exceptions: out.used.exceptions,
    };
    Ok(Converted {
        stats: ConvertStats {
            pexe_bytes,
            wasm_bytes: out.wasm.len(),
            emit: out.stats,
        },
        wasm: out.wasm,
        features,
        imports: out.imports,
    })
}
