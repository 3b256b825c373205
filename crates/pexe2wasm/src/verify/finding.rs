//! What the verifier reports: one [`Finding`] per broken rule, with the rule, a message, the
//! bit position of the offending record and where in the module it is.

use crate::bitstream::Position;
use std::fmt;

/// The rule a finding breaks. Tests match on this; messages carry the details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The module `version` record must be 1.
    ModuleVersion,
    /// A type in the types block is not a PNaCl type (integer width, vector shape,
    /// function type members).
    Type,
    /// A value's type is not declared in the types block.
    UndeclaredType,
    /// Calling convention other than C (on a function or a call).
    CallingConv,
    /// Linkage other than internal/external, or a declaration that is not external.
    Linkage,
    /// More than one externally visible definition (entry point).
    EntryPoints,
    /// A non-intrinsic function type with disallowed parameter/return types or varargs.
    FunctionSignature,
    /// A function that is declared but not defined and is not an intrinsic.
    UndefinedFunction,
    /// An intrinsic that is not allowed, is defined, or has the wrong signature.
    Intrinsic,
    /// A global variable's alignment is out of range.
    GlobalAlign,
    /// A global variable's initializer is not in PNaCl's flattened form.
    GlobalInit,
    /// The IR itself is inconsistent (only hand-built modules hit this).
    Structure,
    /// A function-local constant with a disallowed type or value.
    Constant,
    /// An operand that names no value, or the address of an intrinsic used as a value.
    Operand,
    /// Basic block structure: counts, terminators, branch targets, the entry block.
    Cfg,
    /// Phi placement and incoming edges.
    Phi,
    /// A use that is not dominated by its definition.
    Dominance,
    /// Binary operator operand/result types.
    Arithmetic,
    /// Cast operand/result types.
    Cast,
    /// Compare operand/result types.
    Compare,
    /// Select operand/result types.
    Select,
    /// extractelement/insertelement types and indices.
    Vector,
    /// Load/store pointer and value types.
    Memory,
    /// Load/store/alloca alignment.
    Alignment,
    /// alloca size type and result.
    Alloca,
    /// ret value vs. the function's return type.
    Return,
    /// Conditional branch condition type.
    Branch,
    /// switch condition type and case values.
    Switch,
    /// Call callee, argument and result types.
    Call,
    /// Atomic intrinsic operands: memory orders and read-modify-write operations.
    Atomic,
    /// An instruction result of a type PNaCl does not allow.
    ResultType,
    /// The module cannot be run: no `_start` with signature `void (i32)`.
    EntryPoint,
}

impl Rule {
    /// A short stable name (`load-store-alignment` style) for messages and tests.
    pub fn name(self) -> &'static str {
        use Rule::*;
        match self {
            ModuleVersion => "module-version",
            Type => "type",
            UndeclaredType => "undeclared-type",
            CallingConv => "calling-convention",
            Linkage => "linkage",
            EntryPoints => "entry-points",
            FunctionSignature => "function-signature",
            UndefinedFunction => "undefined-function",
            Intrinsic => "intrinsic",
            GlobalAlign => "global-alignment",
            GlobalInit => "global-initializer",
            Structure => "ir-structure",
            Constant => "constant",
            Operand => "operand",
            Cfg => "cfg",
            Phi => "phi",
            Dominance => "dominance",
            Arithmetic => "arithmetic",
            Cast => "cast",
            Compare => "compare",
            Select => "select",
            Vector => "vector",
            Memory => "memory",
            Alignment => "alignment",
            Alloca => "alloca",
            Return => "return",
            Branch => "branch",
            Switch => "switch",
            Call => "call",
            Atomic => "atomic",
            ResultType => "result-type",
            EntryPoint => "entry-point",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where in the module a finding is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Context {
    Module,
    /// A type table entry (`@tN`).
    Type {
        index: u32,
    },
    /// A function address record (`@fN`).
    Function {
        index: u32,
        name: Option<String>,
    },
    /// A global variable (`@gN`).
    Global {
        index: u32,
        name: Option<String>,
    },
    /// A basic block of a function body.
    Block {
        function: u32,
        name: Option<String>,
        block: u32,
    },
    /// An instruction of a function body (`inst` counts records in `Function::insts`).
    Instruction {
        function: u32,
        name: Option<String>,
        inst: u32,
    },
}

fn fn_label(f: &mut fmt::Formatter<'_>, index: u32, name: &Option<String>) -> fmt::Result {
    write!(f, "function @f{index}")?;
    if let Some(n) = name {
        write!(f, " ({n:?})")?;
    }
    Ok(())
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Context::Module => write!(f, "module"),
            Context::Type { index } => write!(f, "type @t{index}"),
            Context::Function { index, name } => fn_label(f, *index, name),
            Context::Global { index, name } => {
                write!(f, "global @g{index}")?;
                if let Some(n) = name {
                    write!(f, " ({n:?})")?;
                }
                Ok(())
            }
            Context::Block {
                function,
                name,
                block,
            } => {
                fn_label(f, *function, name)?;
                write!(f, ", block %b{block}")
            }
            Context::Instruction {
                function,
                name,
                inst,
            } => {
                fn_label(f, *function, name)?;
                write!(f, ", instruction {inst}")
            }
        }
    }
}

/// One violation of a PNaCl ABI rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Finding {
    pub rule: Rule,
    pub message: String,
    /// Bit offset of the offending record (0 when the IR keeps none, e.g. for types).
    pub position: Position,
    pub context: Context,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Only the bit part of the position: the context already says where it is.
        let bit = self.position.bit;
        write!(
            f,
            "bit {bit} (byte {}:{}): {}: {}",
            bit / 8,
            bit % 8,
            self.context,
            self.message
        )
    }
}

/// All findings of a module that failed verification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct VerifyErrors(pub Vec<Finding>);

impl fmt::Display for VerifyErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} PNaCl ABI violation(s)", self.0.len())?;
        for x in &self.0 {
            write!(f, "\n  {x}")?;
        }
        Ok(())
    }
}
