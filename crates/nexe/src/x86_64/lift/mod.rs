//! The translator of static x86-64 nexes into WebAssembly (decision 0025).
//!
//! ```text
//!  validated code + CodeFacts
//!     │  cfg::discover                 functions (entry, call targets, bundle starts after
//!     ▼                                padding, jump targets outside their function), blocks
//!  Function { start, end, blocks }
//!     │  func::lift (iced-x86 decode)   one wasm function per x86 function: registers and
//!     ▼                                the lazy flag record as locals, control flow
//!  wasm functions                      structured (structure.rs) or blocks dispatched by a
//!     │                                loop + br_table, memory at the sandbox offset
//!     │  module::assemble
//!     ▼
//!  wasm module (memory = the sandbox image, table = bundle starts → functions)
//! ```
//!
//! Every lifted function has the type `(ret i32) -> i32`: `ret` is the return address its
//! caller pushed; it returns the address its return (NaCl's `pop; and $-32; add %r15;
//! jmp`) went to, which the caller checks. Registers and the flag record live in wasm
//! globals between functions and in locals within one.

pub mod browser;
pub mod cfg;
pub mod flags;
mod func;
pub use func::CPUID;
mod module;
pub mod pepper;
pub mod runtime;
mod sink;
pub mod translator;

pub use cfg::Function;
pub use module::{
    dyncode_interface, function_name, is_compile_translator, is_link_translator, lift_code,
    lift_nexe, program_options, runs_with_runtime, translatable, translate, translate_code,
    translate_program, Lifted, Options, Program, Translated, REGISTERS,
};

use iced_x86::{Formatter, GasFormatter, Instruction};

/// Why code was not translated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiftError {
    /// An instruction (or a use of one) the translator does not cover yet.
    #[error("not translated yet: {what} `{text}` at {address:#x}")]
    NotTranslatedYet {
        address: u32,
        /// The instruction in AT&T syntax.
        text: String,
        /// The mnemonic (what the corpus tally counts), e.g. `fld` or `rep movsb`.
        mnemonic: String,
        /// What kind of thing: `x87 instruction`, `instruction`, `call to NaCl's syscall
        /// trampoline`, ...
        what: &'static str,
    },
    /// An interface the program asks the runtime for that is not translated yet.
    #[error("not translated yet: the {what} interface `{interface}`")]
    InterfaceNotTranslatedYet {
        interface: String,
        what: &'static str,
    },
    /// The code does not decode (validated code always does).
    #[error("undecodable instruction at {address:#x}")]
    Invalid { address: u32 },
    /// A block boundary is not an instruction start (validated code has none).
    #[error("a jump to {address:#x}, which is not an instruction start")]
    NotInstructionStart { address: u32 },
    /// The nexe is not one this stage translates (its verdict says why).
    #[error("{0}")]
    Verdict(String),
    /// NaCl's validator rejects the code.
    #[error("NaCl's x86-64 validator rejects the code: {0}")]
    Invalid86(String),
}

/// AT&T text of an instruction.
pub(crate) fn att(i: &Instruction) -> String {
    let mut f = GasFormatter::new();
    let mut s = String::new();
    f.format(i, &mut s);
    s
}

/// Mnemonic as the tally counts it: the AT&T mnemonic with its prefixes.
pub(crate) fn mnemonic_of(i: &Instruction) -> String {
    let t = att(i);
    let mut words = t.split_whitespace();
    let mut m = String::new();
    for w in words.by_ref() {
        if !m.is_empty() {
            m.push(' ');
        }
        m.push_str(w);
        if !matches!(
            w,
            "lock" | "rep" | "repe" | "repne" | "data16" | "addr32" | "rex" | "rex.w"
        ) {
            break;
        }
    }
    m
}

impl LiftError {
    pub(crate) fn not_yet(i: &Instruction, what: &'static str) -> LiftError {
        LiftError::NotTranslatedYet {
            address: i.ip() as u32,
            text: att(i),
            mnemonic: mnemonic_of(i),
            what,
        }
    }
}
