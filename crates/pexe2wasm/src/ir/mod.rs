//! Stage 2's output: the typed IR of a pexe. One [`Module`] holds the type table, function
//! declarations, global variables and one [`Function`] per defined function. Instructions
//! keep the record order of the file, so the disassembler can walk records and IR together,
//! and operands are absolute value ids ([`ValueId`]) in PNaCl's single index space:
//! functions, then globals, then (inside a function) parameters, constants, instructions.

/// Defines an entity index (as Cranelift's `entity_impl!`): a `u32` newtype naming one kind
/// of entity, so that a block number cannot be passed where a function id is expected.
/// The field stays public for pattern matching and the text format's `%bN`/`@fN`.
macro_rules! entity {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        #[repr(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The entity at `index` (which must fit in 32 bits, as every count the
            /// decoder accepts does).
            #[inline]
            pub const fn new(index: usize) -> Self {
                debug_assert!(index <= u32::MAX as usize);
                Self(index as u32)
            }
            /// Its index, for the tables it names an entry of.
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        /// The bare number: the text format's prefix (`@f`, `%b`, ...) is the caller's.
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

pub mod intrinsics;
pub mod summary;
pub mod types;

pub use intrinsics::Intrinsic;
pub use summary::{CodeSummary, SummaryBuilder};
pub use types::{FunctionType, Scalar, Type, TypeId, TypeTable};

use crate::bitstream::Header;
use std::fmt;

entity! {
    /// An absolute value index (PNaCl's `AbsoluteIndex`).
    ValueId
}

impl ValueId {
    /// No value: an instruction without a result ([`Inst::result`]). A sentinel rather
    /// than `Option<ValueId>`, which would grow [`Inst`] past 32 bytes.
    pub const NONE: ValueId = ValueId(u32::MAX);
}

entity! {
    /// A basic block index within a function (`%bN`).
    BlockId
}

entity! {
    /// A function id: the index of its address record in [`Module::functions`] (`@fN`).
    FuncId
}

entity! {
    /// A global variable id: its index in [`Module::globals`] (`@gN`).
    GlobalId
}

/// "No index" in the passes' dense per-value, per-instruction and per-node tables (an
/// `Option<u32>` would double them): the one such sentinel for the lowering and the
/// verifier. No table can have `u32::MAX` entries, as the decoder checks counts against
/// the input's size.
pub(crate) const NONE: u32 = u32::MAX;

/// What a value id refers to, with the index inside its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueRef {
    Function(FuncId),
    Global(GlobalId),
    Param(u32),
    Const(u32),
    Inst(u32),
}

impl fmt::Display for ValueRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueRef::Function(i) => write!(f, "@f{}", i.0),
            ValueRef::Global(i) => write!(f, "@g{}", i.0),
            ValueRef::Param(i) => write!(f, "%p{i}"),
            ValueRef::Const(i) => write!(f, "%c{i}"),
            ValueRef::Inst(i) => write!(f, "%v{i}"),
        }
    }
}

/// An alignment as stored in records: 0 means "none given", otherwise log2(bytes) + 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Align(pub u32);

impl Align {
    /// Alignment in bytes, `None` when the record gave 0.
    pub fn bytes(self) -> Option<u64> {
        match self.0 {
            0 => None,
            n if n <= 64 => Some(1u64 << (n - 1)),
            _ => None,
        }
    }
    /// Bytes as printed by PNaClAsm (`align 0` when none was given).
    pub fn display_bytes(self) -> u64 {
        self.bytes().unwrap_or(0)
    }
    pub fn from_bytes(bytes: u64) -> Option<Align> {
        if bytes == 0 {
            return Some(Align(0));
        }
        if !bytes.is_power_of_two() {
            return None;
        }
        Some(Align(bytes.trailing_zeros() + 1))
    }
}

/// Linkage of a function or global.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linkage {
    External,
    Internal,
    /// A value PNaCl does not allow (kept so the verifier can report it).
    Other(u64),
}

impl Linkage {
    pub fn from_code(c: u64) -> Linkage {
        match c {
            0 => Linkage::External,
            3 => Linkage::Internal,
            x => Linkage::Other(x),
        }
    }
    pub fn code(self) -> u64 {
        match self {
            Linkage::External => 0,
            Linkage::Internal => 3,
            Linkage::Other(x) => x,
        }
    }
}

/// A function address record (`declare`/`define`).
#[derive(Debug, Clone)]
pub struct FunctionDecl {
    /// Its function type.
    pub ty: TypeId,
    /// Calling convention code (0 = C, the only one allowed).
    pub cc: u64,
    /// True for `declare` (no body in this module).
    pub is_proto: bool,
    pub linkage: Linkage,
    /// Name from the module value symbol table, if the pexe has one for it.
    pub name: Option<String>,
    /// The intrinsic this declaration names, resolved from its name.
    pub intrinsic: Option<Intrinsic>,
    /// Index into [`Module::functions_bodies`] for defined functions.
    pub body: Option<u32>,
    /// Bit position of the record.
    pub bit: u64,
}

/// One piece of a global's initializer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Element {
    Zerofill(u64),
    Data(Vec<u8>),
    /// The address of a function or global (an absolute value id below functions+globals),
    /// plus an optional addend stored as a 32-bit two's complement value.
    Reloc {
        target: u32,
        addend: Option<u32>,
    },
}

impl Element {
    pub fn size(&self) -> u64 {
        match self {
            Element::Zerofill(n) => *n,
            Element::Data(d) => d.len() as u64,
            Element::Reloc { .. } => 4,
        }
    }
}

/// A global's initializer: one simple element or a compound (`initializers N { ... }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Initializer {
    Simple(Element),
    Compound(Vec<Element>),
}

impl Initializer {
    pub fn elements(&self) -> &[Element] {
        match self {
            Initializer::Simple(e) => std::slice::from_ref(e),
            Initializer::Compound(v) => v,
        }
    }
    pub fn size(&self) -> u64 {
        self.elements().iter().map(Element::size).sum()
    }
}

/// A global variable or constant (`var @gN` / `const @gN`).
#[derive(Debug, Clone)]
pub struct GlobalVar {
    pub align: Align,
    pub is_const: bool,
    pub init: Initializer,
    pub name: Option<String>,
    pub bit: u64,
}

/// A function-local constant (`%cN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constant {
    pub ty: TypeId,
    pub value: ConstValue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstValue {
    Undef,
    /// Integer bits, truncated to the type's width (two's complement).
    Int(u64),
    /// IEEE bits (f32 in the low 32 bits).
    Float(u64),
}

/// Binary operators. Integer and float forms share record opcodes; the operand type tells
/// them apart, and the decoder picks the right variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    UDiv,
    SDiv,
    URem,
    SRem,
    Shl,
    LShr,
    AShr,
    And,
    Or,
    Xor,
    FAdd,
    FSub,
    FMul,
    FDiv,
    FRem,
}

impl BinOp {
    /// Decodes a binop record opcode given whether the operands are floating point.
    #[inline]
    pub fn from_code(code: u64, float: bool) -> Option<BinOp> {
        use BinOp::*;
        Some(match (code, float) {
            (0, false) => Add,
            (1, false) => Sub,
            (2, false) => Mul,
            (3, false) => UDiv,
            (4, false) => SDiv,
            (5, false) => URem,
            (6, false) => SRem,
            (7, false) => Shl,
            (8, false) => LShr,
            (9, false) => AShr,
            (10, false) => And,
            (11, false) => Or,
            (12, false) => Xor,
            (0, true) => FAdd,
            (1, true) => FSub,
            (2, true) => FMul,
            (4, true) => FDiv,
            (6, true) => FRem,
            _ => return None,
        })
    }
    pub fn code(self) -> u64 {
        use BinOp::*;
        match self {
            Add | FAdd => 0,
            Sub | FSub => 1,
            Mul | FMul => 2,
            UDiv => 3,
            SDiv | FDiv => 4,
            URem => 5,
            SRem | FRem => 6,
            Shl => 7,
            LShr => 8,
            AShr => 9,
            And => 10,
            Or => 11,
            Xor => 12,
        }
    }
    pub fn name(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "add",
            Sub => "sub",
            Mul => "mul",
            UDiv => "udiv",
            SDiv => "sdiv",
            URem => "urem",
            SRem => "srem",
            Shl => "shl",
            LShr => "lshr",
            AShr => "ashr",
            And => "and",
            Or => "or",
            Xor => "xor",
            FAdd => "fadd",
            FSub => "fsub",
            FMul => "fmul",
            FDiv => "fdiv",
            FRem => "frem",
        }
    }
    pub fn is_float(self) -> bool {
        use BinOp::*;
        matches!(self, FAdd | FSub | FMul | FDiv | FRem)
    }
}

/// Cast operators with their record codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CastOp {
    Trunc = 0,
    ZExt = 1,
    SExt = 2,
    FpToUi = 3,
    FpToSi = 4,
    UiToFp = 5,
    SiToFp = 6,
    FpTrunc = 7,
    FpExt = 8,
    PtrToInt = 9,
    IntToPtr = 10,
    Bitcast = 11,
}

impl CastOp {
    pub fn from_code(c: u64) -> Option<CastOp> {
        use CastOp::*;
        Some(match c {
            0 => Trunc,
            1 => ZExt,
            2 => SExt,
            3 => FpToUi,
            4 => FpToSi,
            5 => UiToFp,
            6 => SiToFp,
            7 => FpTrunc,
            8 => FpExt,
            9 => PtrToInt,
            10 => IntToPtr,
            11 => Bitcast,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        use CastOp::*;
        match self {
            Trunc => "trunc",
            ZExt => "zext",
            SExt => "sext",
            FpToUi => "fptoui",
            FpToSi => "fptosi",
            UiToFp => "uitofp",
            SiToFp => "sitofp",
            FpTrunc => "fptrunc",
            FpExt => "fpext",
            PtrToInt => "ptrtoint",
            IntToPtr => "inttoptr",
            Bitcast => "bitcast",
        }
    }
}

/// Comparison predicates with their record codes (0..=15 float, 32..=41 integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpPred {
    FFalse = 0,
    FOeq = 1,
    FOgt = 2,
    FOge = 3,
    FOlt = 4,
    FOle = 5,
    FOne = 6,
    FOrd = 7,
    FUno = 8,
    FUeq = 9,
    FUgt = 10,
    FUge = 11,
    FUlt = 12,
    FUle = 13,
    FUne = 14,
    FTrue = 15,
    IEq = 32,
    INe = 33,
    IUgt = 34,
    IUge = 35,
    IUlt = 36,
    IUle = 37,
    ISgt = 38,
    ISge = 39,
    ISlt = 40,
    ISle = 41,
}

impl CmpPred {
    pub fn from_code(c: u64) -> Option<CmpPred> {
        use CmpPred::*;
        const ALL: [CmpPred; 26] = [
            FFalse, FOeq, FOgt, FOge, FOlt, FOle, FOne, FOrd, FUno, FUeq, FUgt, FUge, FUlt, FUle,
            FUne, FTrue, IEq, INe, IUgt, IUge, IUlt, IUle, ISgt, ISge, ISlt, ISle,
        ];
        ALL.into_iter().find(|p| *p as u64 == c)
    }
    pub fn is_float(self) -> bool {
        (self as u32) < 16
    }
    /// Predicate name as PNaClAsm prints it (`eq`, `ult`, `oeq`, `uno`, ...).
    pub fn name(self) -> &'static str {
        use CmpPred::*;
        match self {
            FFalse => "false",
            FOeq => "oeq",
            FOgt => "ogt",
            FOge => "oge",
            FOlt => "olt",
            FOle => "ole",
            FOne => "one",
            FOrd => "ord",
            FUno => "uno",
            FUeq => "ueq",
            FUgt => "ugt",
            FUge => "uge",
            FUlt => "ult",
            FUle => "ule",
            FUne => "une",
            FTrue => "true",
            IEq => "eq",
            INe => "ne",
            IUgt => "ugt",
            IUge => "uge",
            IUlt => "ult",
            IUle => "ule",
            ISgt => "sgt",
            ISge => "sge",
            ISlt => "slt",
            ISle => "sle",
        }
    }
}

/// Who a call calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callee {
    /// A function address (`@fN`).
    Direct(FuncId),
    /// A computed function pointer.
    Indirect(ValueId),
}

/// A run of one of a body's operand pools ([`Function::call_args`] for calls,
/// [`Function::phi_incoming`] for phis). Variable-length operand lists live in the body,
/// not in the instruction, so no instruction owns an allocation: a body is a few flat
/// vectors, cheap to build, walk and free (decision 0010).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    /// The span as an index range of its pool.
    #[inline]
    pub fn range(self) -> std::ops::Range<usize> {
        let start = self.start as usize;
        start..start.saturating_add(self.len as usize)
    }
}

/// A call instruction. Its arguments are `Function::args(call)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub callee: Callee,
    /// The arguments, in [`Function::call_args`].
    pub args: Span,
    /// The record's calling-convention word: bit 0 is the `tail` flag, the rest the
    /// calling convention (0 = C). 32 bits keep [`Inst`] at 32 bytes; the decoder refuses
    /// a wider word (PNaCl defines calling conventions 0 to 1023).
    pub cc_info: u32,
}

impl Call {
    pub fn is_tail(&self) -> bool {
        self.cc_info & 1 == 1
    }
}

/// A switch case: a value (sign-extended to 64 bits) and its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchCase {
    pub value: i64,
    pub target: BlockId,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    pub cond: ValueId,
    pub default: BlockId,
    pub cases: Vec<SwitchCase>,
}

/// An instruction. Result types live in [`Inst::ty`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstKind {
    Binop {
        op: BinOp,
        lhs: ValueId,
        rhs: ValueId,
        /// Optimization flags of the old 4-operand record form (ignored, kept for the
        /// round trip).
        flags: Option<u32>,
    },
    Cast {
        op: CastOp,
        val: ValueId,
    },
    ExtractElement {
        vec: ValueId,
        index: ValueId,
    },
    InsertElement {
        vec: ValueId,
        elt: ValueId,
        index: ValueId,
    },
    Ret {
        val: Option<ValueId>,
    },
    Br {
        target: BlockId,
    },
    CondBr {
        cond: ValueId,
        then_bb: BlockId,
        else_bb: BlockId,
    },
    Switch(Box<Switch>),
    Unreachable,
    Phi {
        /// The (value, block) pairs, in [`Function::phi_incoming`].
        incoming: Span,
    },
    Alloca {
        size: ValueId,
        align: Align,
    },
    Load {
        ptr: ValueId,
        align: Align,
    },
    Store {
        ptr: ValueId,
        val: ValueId,
        align: Align,
    },
    Cmp {
        pred: CmpPred,
        lhs: ValueId,
        rhs: ValueId,
    },
    Select {
        cond: ValueId,
        t: ValueId,
        f: ValueId,
    },
    Call(Call),
}

impl InstKind {
    /// True for instructions that end a basic block.
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            InstKind::Ret { .. }
                | InstKind::Br { .. }
                | InstKind::CondBr { .. }
                | InstKind::Switch(_)
                | InstKind::Unreachable
        )
    }

    /// [`for_each_operand`](Self::for_each_operand) for walks that do not care about
    /// operand order, with the most frequent kinds (binop, cmp, store, load, cast,
    /// condbr, br) matched inline; `other` is called with every other kind (calls, phis,
    /// allocas, ...) after its operands, so a caller that also looks at those kinds
    /// needs no second `match` per instruction. Hot in the lowering's per-body walks.
    #[inline]
    pub fn for_each_operand_unordered(
        &self,
        body: &Function,
        mut f: impl FnMut(ValueId),
        other: impl FnOnce(&InstKind),
    ) {
        match self {
            InstKind::Binop { lhs, rhs, .. }
            | InstKind::Cmp { lhs, rhs, .. }
            | InstKind::Store {
                ptr: lhs, val: rhs, ..
            } => {
                f(*lhs);
                f(*rhs);
            }
            InstKind::Load { ptr: v, .. }
            | InstKind::Cast { val: v, .. }
            | InstKind::CondBr { cond: v, .. } => f(*v),
            InstKind::Br { .. } => {}
            _ => {
                self.for_each_operand(body, &mut f);
                other(self);
            }
        }
    }

    /// Calls `f` on every value operand (not block targets); `body` is the function the
    /// instruction belongs to (it holds calls' and phis' operand lists).
    #[inline]
    pub fn for_each_operand(&self, body: &Function, mut f: impl FnMut(ValueId)) {
        match self {
            InstKind::Binop { lhs, rhs, .. } | InstKind::Cmp { lhs, rhs, .. } => {
                f(*lhs);
                f(*rhs)
            }
            InstKind::Cast { val, .. } => f(*val),
            InstKind::ExtractElement { vec, index } => {
                f(*vec);
                f(*index)
            }
            InstKind::InsertElement { vec, elt, index } => {
                f(*vec);
                f(*elt);
                f(*index)
            }
            InstKind::Ret { val } => {
                if let Some(v) = val {
                    f(*v)
                }
            }
            InstKind::Br { .. } | InstKind::Unreachable => {}
            InstKind::CondBr { cond, .. } => f(*cond),
            InstKind::Switch(s) => f(s.cond),
            InstKind::Phi { incoming } => body.incoming(*incoming).iter().for_each(|(v, _)| f(*v)),
            InstKind::Alloca { size, .. } => f(*size),
            InstKind::Load { ptr, .. } => f(*ptr),
            InstKind::Store { ptr, val, .. } => {
                f(*ptr);
                f(*val)
            }
            InstKind::Select { cond, t, f: fv } => {
                f(*cond);
                f(*t);
                f(*fv)
            }
            InstKind::Call(c) => {
                if let Callee::Indirect(v) = c.callee {
                    f(v)
                }
                body.args(c).iter().for_each(|a| f(*a))
            }
        }
    }

    /// Calls `f` on each successor block of a terminator, in operand order, repeats
    /// included (nothing for other instructions).
    pub fn for_each_successor(&self, mut f: impl FnMut(BlockId)) {
        match self {
            InstKind::Br { target } => f(*target),
            InstKind::CondBr {
                then_bb, else_bb, ..
            } => {
                f(*then_bb);
                f(*else_bb);
            }
            InstKind::Switch(s) => {
                f(s.default);
                s.cases.iter().for_each(|c| f(c.target));
            }
            _ => {}
        }
    }
}

/// An instruction with its result type (void when it produces no value) and the value id
/// of its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inst {
    pub kind: InstKind,
    pub ty: TypeId,
    /// Absolute value id of the result, or [`ValueId::NONE`].
    pub result: ValueId,
}

impl Inst {
    pub fn result(&self) -> Option<ValueId> {
        (self.result != ValueId::NONE).then_some(self.result)
    }
}

/// A defined function's body.
#[derive(Debug, Clone, Default)]
pub struct Function {
    /// Which function address this body defines (`@fN`).
    pub decl: FuncId,
    /// Absolute value id of the first parameter (= number of functions + globals).
    pub base: u32,
    pub num_params: u32,
    /// Number of basic blocks declared by the `blocks N` record.
    pub num_blocks: u32,
    pub consts: Vec<Constant>,
    pub insts: Vec<Inst>,
    /// Index into `insts` of the first instruction of each basic block.
    pub block_starts: Vec<u32>,
    /// For each instruction value `%vN`, the index in `insts` of the instruction defining it.
    pub value_insts: Vec<u32>,
    /// Forward type declarations (`declare T %vN`) in record order: value and type.
    pub forward_decls: Vec<(ValueId, TypeId)>,
    /// Names from the function's value symbol table, if any.
    pub value_names: Vec<(ValueId, String)>,
    pub block_names: Vec<(BlockId, String)>,
    /// Bit position of the function block.
    pub bit: u64,
    /// Bit offset of each instruction record relative to `bit`.
    pub inst_bits: Vec<u32>,
    /// Calls' arguments, one run per call ([`Call::args`]).
    pub call_args: Vec<ValueId>,
    /// Phis' (value, incoming block) pairs, one run per phi.
    pub phi_incoming: Vec<(ValueId, BlockId)>,
    /// What emission needs from the instructions, gathered by the decoder while it
    /// decoded them (what [`CodeSummary::scan`] finds); `None` for bodies built by hand,
    /// which emission scans itself. Code that edits a decoded body must reset it to `None`.
    pub summary: Option<CodeSummary>,
}

impl Function {
    /// A call's arguments.
    #[inline]
    pub fn args(&self, c: &Call) -> &[ValueId] {
        self.call_args.get(c.args.range()).unwrap_or(&[])
    }
    /// A phi's (value, incoming block) pairs.
    #[inline]
    pub fn incoming(&self, s: Span) -> &[(ValueId, BlockId)] {
        self.phi_incoming.get(s.range()).unwrap_or(&[])
    }
    /// Appends `args` to the call-argument pool and returns the call.
    pub fn new_call(&mut self, callee: Callee, args: &[ValueId], cc_info: u32) -> Call {
        let start = self.call_args.len() as u32;
        self.call_args.extend_from_slice(args);
        Call {
            callee,
            args: Span {
                start,
                len: args.len() as u32,
            },
            cc_info,
        }
    }
    /// Appends `incoming` to the phi pool and returns the phi's span.
    pub fn new_phi(&mut self, incoming: &[(ValueId, BlockId)]) -> Span {
        let start = self.phi_incoming.len() as u32;
        self.phi_incoming.extend_from_slice(incoming);
        Span {
            start,
            len: incoming.len() as u32,
        }
    }
    /// Absolute id of the first constant.
    pub fn first_const(&self) -> u32 {
        self.base + self.num_params
    }
    /// Absolute id of the first instruction value.
    pub fn first_inst_value(&self) -> u32 {
        self.first_const() + self.consts.len() as u32
    }
    /// Classifies an absolute value id (`num_functions` splits functions from globals).
    pub fn value_ref(&self, v: ValueId, num_functions: u32) -> ValueRef {
        let v = v.0;
        if v < num_functions {
            ValueRef::Function(FuncId(v))
        } else if v < self.base {
            ValueRef::Global(GlobalId(v - num_functions))
        } else if v < self.first_const() {
            ValueRef::Param(v - self.base)
        } else if v < self.first_inst_value() {
            ValueRef::Const(v - self.first_const())
        } else {
            ValueRef::Inst(v - self.first_inst_value())
        }
    }
    /// Instructions of basic block `b` (empty for an out-of-range block).
    pub fn block_insts(&self, b: BlockId) -> &[Inst] {
        let Some(&start) = self.block_starts.get(b.index()) else {
            return &[];
        };
        let end = self
            .block_starts
            .get(b.index() + 1)
            .map_or(self.insts.len(), |&e| e as usize);
        self.insts.get(start as usize..end).unwrap_or(&[])
    }
    /// Bit position of instruction `i`.
    pub fn inst_bit(&self, i: usize) -> u64 {
        self.bit + self.inst_bits.get(i).copied().unwrap_or(0) as u64
    }
}

/// A decoded pexe.
#[derive(Debug, Clone)]
pub struct Module {
    pub header: Header,
    /// The module `version` record (1 = relative value ids, the only supported value).
    pub version: u64,
    pub types: TypeTable,
    pub functions: Vec<FunctionDecl>,
    pub globals: Vec<GlobalVar>,
    /// Bodies of defined functions, in file order.
    pub function_bodies: Vec<Function>,
}

impl Module {
    pub fn num_functions(&self) -> u32 {
        self.functions.len() as u32
    }
    /// Classifies a module-level value id (function or global).
    pub fn global_ref(&self, v: u32) -> ValueRef {
        if v < self.num_functions() {
            ValueRef::Function(FuncId(v))
        } else {
            ValueRef::Global(GlobalId(v - self.num_functions()))
        }
    }
    /// The function named `name`, if any.
    pub fn function_by_name(&self, name: &str) -> Option<FuncId> {
        self.functions
            .iter()
            .position(|f| f.name.as_deref() == Some(name))
            .map(FuncId::new)
    }
    /// A function's address record (`None` for an id out of range).
    #[inline]
    pub fn function(&self, f: FuncId) -> Option<&FunctionDecl> {
        self.functions.get(f.index())
    }
    /// A global variable (`None` for an id out of range).
    #[inline]
    pub fn global(&self, g: GlobalId) -> Option<&GlobalVar> {
        self.globals.get(g.index())
    }
    /// The type of a value id inside function `f` (functions and globals are i32 addresses).
    pub fn value_type(&self, f: &Function, v: ValueId) -> Option<TypeId> {
        let i32_ty = self.types.find(&Type::Int(32));
        match f.value_ref(v, self.num_functions()) {
            ValueRef::Function(_) | ValueRef::Global(_) => i32_ty,
            ValueRef::Param(p) => {
                let ft = self.types.function(self.function(f.decl)?.ty)?;
                ft.params.get(p as usize).copied()
            }
            ValueRef::Const(c) => f.consts.get(c as usize).map(|c| c.ty),
            ValueRef::Inst(n) => f
                .value_insts
                .get(n as usize)
                .and_then(|&i| f.insts.get(i as usize))
                .map(|i| i.ty),
        }
    }
}

/// Nearest common dominator of nodes `a` and `b` in a dominator tree given by `idom`
/// (immediate dominator per node), with nodes numbered so that a dominator's number is
/// below those it dominates (reverse postorder, or a layout order whose tree has only
/// forward edges). The lowering's and the verifier's dominator computations share it.
#[inline]
pub(crate) fn common_dominator(idom: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while a > b {
            a = idom[a as usize];
        }
        while b > a {
            b = idom[b as usize];
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_ids_are_bare_u32s() {
        // `repr(transparent)`: the IR's tables cost what raw `u32`s did.
        assert_eq!(std::mem::size_of::<BlockId>(), 4);
        assert_eq!(std::mem::size_of::<Option<FuncId>>(), 8);
        // Why `Inst::result` is `ValueId` with `ValueId::NONE`, not `Option<ValueId>`.
        assert_eq!(std::mem::size_of::<Inst>(), 32);
        assert_eq!(BlockId::new(7).index(), 7);
        assert_eq!(GlobalId::new(3), GlobalId(3));
        // Display is the bare number, so messages keep their `@f`/`%b` prefixes.
        assert_eq!(format!("@f{} %b{}", FuncId(12), BlockId(4)), "@f12 %b4");
        let inst = Inst {
            kind: InstKind::Unreachable,
            ty: TypeId(0),
            result: ValueId::NONE,
        };
        assert_eq!(inst.result(), None);
        let inst = Inst {
            result: ValueId(5),
            ..inst
        };
        assert_eq!(inst.result(), Some(ValueId(5)));
    }
}
