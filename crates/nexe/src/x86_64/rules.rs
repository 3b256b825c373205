//! The rules of NaCl's x86-64 sandbox that the validator checks, and its positioned
//! findings. The rules are those of NaCl's x86-64 validator (native_client_sdk's
//! `sandbox_internals/x86-64-sandbox` and the DFA validator's checks); each [`Rule`] names
//! one, so a refusal says which rule a bundle broke.

use serde::Serialize;
use std::fmt;

/// NaCl's x86-64 code is made of bundles of this many bytes.
pub const BUNDLE_SIZE: u32 = 32;

/// One rule of the x86-64 sandbox, as broken by one instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Rule {
    /// The bytes decode to no x86-64 instruction (or the code ends inside one).
    Undecodable,
    /// An instruction crosses a 32-byte bundle boundary.
    CrossesBundle,
    /// An instruction NaCl does not allow at all (`what` names it and why).
    Forbidden { what: String },
    /// A prefix NaCl does not allow on this instruction.
    BadPrefix { what: &'static str },
    /// `jmp`/`call` through a register or memory that is not the `nacljmp`/`naclcall`
    /// sequence `and $-32,%eXX; add %r15,%rXX; jmp/call *%rXX` within one bundle.
    IndirectNotSandboxed,
    /// A string instruction (or `maskmov*`) without its `mov %edi,%edi; lea
    /// (%r15,%rdi,1),%rdi` (and `%rsi`) sandboxing right before it in the same bundle.
    StringNotSandboxed,
    /// A memory operand whose base is not `%r15`, `%rsp`, `%rbp` or `%rip`.
    ForbiddenBase { base: String },
    /// A memory operand whose index register was not zero-extended (written as a 32-bit
    /// register) by the instruction just before it in the same bundle.
    UnrestrictedIndex { index: String },
    /// The instruction writes `%r15`, the sandbox base.
    R15Modified,
    /// The instruction changes `%rsp` outside the allowed sequences.
    RspModified,
    /// The instruction changes `%rbp` outside the allowed sequences.
    RbpModified,
    /// `%esp` was written as a 32-bit register and the next instruction in the bundle is
    /// not `add %r15,%rsp` (or `lea (%rsp,%r15,1),%rsp`).
    RspNotResandboxed,
    /// `%ebp` was written as a 32-bit register and the next instruction in the bundle is
    /// not `add %r15,%rbp` (or `lea 0(%rbp,%r15,1),%rbp`).
    RbpNotResandboxed,
    /// `add %r15,%rsp`/`%rbp` without a 32-bit write of `%esp`/`%ebp` right before it.
    ResandboxWithoutRestrict,
    /// A direct jump or call to an address that is neither bundle-aligned nor inside the
    /// code.
    JumpOutOfRange { target: u32 },
    /// A direct jump or call to an address inside the code that is not an instruction
    /// start, or is inside a pseudo-instruction (a `nacljmp`, a sandboxed string
    /// instruction, the instruction after a zero-extension it relies on).
    BadJumpTarget { target: u32 },
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Undecodable => f.write_str("not a valid x86-64 instruction"),
            Rule::CrossesBundle => f.write_str("instruction crosses a 32-byte bundle boundary"),
            Rule::Forbidden { what } => write!(f, "instruction not allowed in NaCl: {what}"),
            Rule::BadPrefix { what } => write!(f, "prefix not allowed: {what}"),
            Rule::IndirectNotSandboxed => f.write_str(
                "indirect jump or call not sandboxed: it must be `and $-32,%eXX; add %r15,%rXX; \
                 jmp/call *%rXX` within one bundle",
            ),
            Rule::StringNotSandboxed => f.write_str(
                "string instruction not sandboxed: it must follow `mov %edi,%edi; lea \
                 (%r15,%rdi,1),%rdi` (and the same for %rsi when it reads (%rsi)) in the same bundle",
            ),
            Rule::ForbiddenBase { base } => write!(
                f,
                "memory access with base {base}: the base must be %r15, %rsp, %rbp or %rip"
            ),
            Rule::UnrestrictedIndex { index } => write!(
                f,
                "memory index {index} was not zero-extended (a 32-bit write) by the instruction \
                 just before, in the same bundle"
            ),
            Rule::R15Modified => f.write_str("writes %r15, the sandbox base"),
            Rule::RspModified => f.write_str(
                "changes %rsp outside the allowed sequences (push/pop/call, `mov %rbp,%rsp`, \
                 `and $-N,%rsp`, a 32-bit write of %esp then `add %r15,%rsp`)",
            ),
            Rule::RbpModified => f.write_str(
                "changes %rbp outside the allowed sequences (`mov %rsp,%rbp`, a 32-bit write of \
                 %ebp then `add %r15,%rbp`)",
            ),
            Rule::RspNotResandboxed => f.write_str(
                "%esp was written as a 32-bit register and the next instruction in the bundle is \
                 not `add %r15,%rsp`",
            ),
            Rule::RbpNotResandboxed => f.write_str(
                "%ebp was written as a 32-bit register and the next instruction in the bundle is \
                 not `add %r15,%rbp`",
            ),
            Rule::ResandboxWithoutRestrict => f.write_str(
                "`add %r15,%rsp`/`%rbp` without a 32-bit write of %esp/%ebp just before it",
            ),
            Rule::JumpOutOfRange { target } => write!(
                f,
                "direct jump to {target:#x}, outside the code and not bundle-aligned"
            ),
            Rule::BadJumpTarget { target } => write!(
                f,
                "direct jump to {target:#x}, which is not an instruction start or is inside a \
                 pseudo-instruction"
            ),
        }
    }
}

/// A broken rule at one instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValidationError {
    /// Address (sandbox offset) of the instruction.
    pub address: u32,
    /// Address of the bundle it is in.
    pub bundle: u32,
    /// The instruction in AT&T syntax, or its bytes in hex when it does not decode.
    pub instruction: String,
    /// Its bytes in hex.
    pub bytes: String,
    #[serde(flatten)]
    pub rule: Rule,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bundle {:#x} +{}: {:#x} `{}` ({}): {}",
            self.bundle,
            self.address - self.bundle,
            self.address,
            self.instruction,
            self.bytes,
            self.rule
        )
    }
}

/// Something NaCl's validator only warns about (it accepts the code).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "warning", rename_all = "snake_case")]
pub enum Warning {
    /// A `call` that does not end at a bundle boundary: its return address is not a
    /// bundle start, so a NaCl return (masked to 32 bytes) cannot come back to it.
    CallNotAtBundleEnd { address: u32 },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::CallNotAtBundleEnd { address } => write!(
                f,
                "{address:#x}: call does not end at a bundle boundary (its return lands mid-bundle)"
            ),
        }
    }
}
