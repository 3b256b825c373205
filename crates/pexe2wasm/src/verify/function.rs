//! Per-function checking: builds a safe view of one body (value types, blocks) and runs
//! the constant, instruction, CFG and dominance rules on it.
//!
//! Speed: this runs on every instruction of every pexe, so the per-instruction rules run
//! in one walk over the body (see [`walk`]), type questions are answered from a per-module
//! table ([`TypeFacts`]), and the buffers live in a [`Scratch`] reused from body to body.
//! Strings are built only when a finding is reported.

use super::cfg::{self, Cfg};
use super::instructions::{self, Problems};
use super::types::{is_valid_int_width, is_value_type, TypeFacts};
use super::{block_id, position, Context, Finding, Rule};
use crate::bitstream::Position;
use crate::ir::{
    BlockId, Callee, ConstValue, FuncId, Function, InstKind, Intrinsic, Module, Type, TypeId,
    ValueId, ValueRef,
};

/// What the check of every body needs from the module, computed once per module.
pub(super) struct ModuleFacts<'a> {
    pub m: &'a Module,
    /// The intrinsic each function id is (`module::resolve_intrinsic`), if any.
    pub intrinsics: Vec<Option<Intrinsic>>,
    pub types: TypeFacts,
    /// The `i32` type: the type of function and global addresses.
    pub i32_ty: Option<TypeId>,
    /// Number of module values (functions + globals).
    pub num_module_values: u32,
}

impl<'a> ModuleFacts<'a> {
    pub(super) fn new(m: &'a Module) -> ModuleFacts<'a> {
        ModuleFacts {
            m,
            intrinsics: m
                .functions
                .iter()
                .map(super::module::resolve_intrinsic)
                .collect(),
            types: TypeFacts::new(&m.types),
            i32_ty: m.types.find(&Type::Int(32)),
            num_module_values: m.num_functions() + m.globals.len() as u32,
        }
    }
}

/// Buffers reused from one body to the next (one set per rayon job), so that checking a
/// valid body allocates nothing once they have grown.
#[derive(Default)]
pub(super) struct Scratch {
    locals: Vec<Local>,
    cfg: Cfg,
}

/// A local value (parameter, constant or instruction value) of the body being checked.
#[derive(Clone, Copy)]
pub(super) struct Local {
    pub ty: TypeId,
    /// Where the value is defined, as far as the walk has come: block 0 for parameters
    /// and constants (they dominate everything, like the entry block), the block of an
    /// instruction value the walk has passed, [`NOT_YET`] for one it has not reached.
    pub block: u32,
}

/// [`Local::block`] of an instruction value the walk has not reached yet.
pub(super) const NOT_YET: u32 = crate::ir::NONE;

/// Which check a finding comes from. The walk runs several checks at once; each keeps
/// its findings in its own list, and the lists are joined in this order, which is the
/// order of the checks (one walk each) the verifier has always reported in.
#[derive(Debug, Clone, Copy)]
pub(super) enum Phase {
    /// The body's structure, forward declarations and constants.
    Body,
    Operands,
    Instructions,
    /// Block layout, terminators and branch targets.
    Blocks,
    Phis,
    Dominance,
}

const NUM_PHASES: usize = Phase::Dominance as usize + 1;

/// A checked view of one function body. Every lookup is bounds-checked.
pub(super) struct FnCx<'a> {
    pub m: &'a Module,
    pub f: &'a Function,
    /// The intrinsic each function id is (resolved by name), if any.
    intrinsics: &'a [Option<Intrinsic>],
    pub facts: &'a TypeFacts,
    /// Index of the function address record this body defines.
    pub index: FuncId,
    pub ret: TypeId,
    /// Every local value (params, constants, instruction values) by `v - base`.
    pub locals: Vec<Local>,
    pub i32_ty: Option<TypeId>,
    /// Number of module values (functions + globals).
    pub num_module_values: u32,
    /// Absolute id of the first instruction value (`f.first_inst_value()`, set by `build`).
    pub first_inst_value: u32,
    /// The check now reporting: findings go to `findings[phase]`.
    pub phase: Phase,
    findings: [Vec<Finding>; NUM_PHASES],
}

impl<'a> FnCx<'a> {
    pub fn types(&self) -> &'a crate::ir::TypeTable {
        &self.m.types
    }

    pub fn show(&self, t: TypeId) -> String {
        self.m.types.display(t).to_string()
    }

    /// The type of a value, `None` if the id names nothing. (After `build`, so the locals
    /// start right after the module values.)
    #[inline]
    pub fn ty(&self, v: ValueId) -> Option<TypeId> {
        if v.0 < self.num_module_values {
            return self.i32_ty;
        }
        let i = v.0 - self.num_module_values;
        self.locals.get(i as usize).map(|l| l.ty)
    }

    pub fn value_ref(&self, v: ValueId) -> ValueRef {
        self.f.value_ref(v, self.m.num_functions())
    }

    /// The index in `f.insts` of the instruction defining `v`, if `v` is an instruction
    /// value (`ValueRef::Inst`).
    #[inline]
    pub fn def_of(&self, v: ValueId) -> Option<usize> {
        let k = v.0.checked_sub(self.first_inst_value)?;
        self.f.value_insts.get(k as usize).map(|&i| i as usize)
    }

    /// The integer value of `v` if it is an integer constant (not undef).
    pub fn const_int(&self, v: ValueId) -> Option<u64> {
        match self.value_ref(v) {
            ValueRef::Const(c) => match self.f.consts.get(c as usize)?.value {
                ConstValue::Int(x) => Some(x),
                _ => None,
            },
            _ => None,
        }
    }

    /// The intrinsic function `@fN` is, if any.
    pub fn intrinsic_of(&self, func: FuncId) -> Option<Intrinsic> {
        self.intrinsics.get(func.index()).copied().flatten()
    }

    fn name(&self) -> Option<String> {
        self.m
            .functions
            .get(self.index.index())
            .and_then(|d| d.name.clone())
    }

    fn fn_pos(&self) -> Position {
        position(self.f.bit, block_id::FUNCTION)
    }

    pub fn inst_pos(&self, i: usize) -> Position {
        // Function::inst_bit, without overflow on hand-built positions.
        let off = self.f.inst_bits.get(i).copied().unwrap_or(0) as u64;
        position(self.f.bit.saturating_add(off), block_id::FUNCTION)
    }

    /// The findings reported so far under `phase`.
    pub fn findings_of(&mut self, phase: Phase) -> &mut Vec<Finding> {
        &mut self.findings[phase as usize]
    }

    fn push(&mut self, rule: Rule, position: Position, context: Context, message: String) {
        self.findings[self.phase as usize].push(Finding {
            rule,
            message,
            position,
            context,
        });
    }

    /// Reports a finding on instruction `i`.
    pub fn at_inst(&mut self, i: usize, rule: Rule, msg: impl Into<String>) {
        let ctx = Context::Instruction {
            function: self.index.0,
            name: self.name(),
            inst: i as u32,
        };
        let pos = self.inst_pos(i);
        self.push(rule, pos, ctx, msg.into());
    }

    /// Reports a finding on basic block `b`, positioned at instruction `first` of it.
    pub fn at_block(&mut self, b: u32, first: Option<usize>, rule: Rule, msg: impl Into<String>) {
        let ctx = Context::Block {
            function: self.index.0,
            name: self.name(),
            block: b,
        };
        let pos = first.map_or_else(|| self.fn_pos(), |i| self.inst_pos(i));
        self.push(rule, pos, ctx, msg.into());
    }

    /// Reports a finding on the function as a whole.
    pub fn at_fn(&mut self, rule: Rule, msg: impl Into<String>) {
        let ctx = Context::Function {
            index: self.index.0,
            name: self.name(),
        };
        let pos = self.fn_pos();
        self.push(rule, pos, ctx, msg.into());
    }
}

/// Checks one function body and appends its findings to `out`.
pub(super) fn check(
    mf: &ModuleFacts<'_>,
    body: u32,
    f: &Function,
    scratch: &mut Scratch,
    out: &mut Vec<Finding>,
) {
    let mut cx = FnCx {
        m: mf.m,
        f,
        intrinsics: &mf.intrinsics,
        facts: &mf.types,
        index: f.decl,
        ret: TypeId::NONE,
        locals: std::mem::take(&mut scratch.locals),
        i32_ty: mf.i32_ty,
        num_module_values: mf.num_module_values,
        first_inst_value: u32::MAX,
        phase: Phase::Body,
        findings: Default::default(),
    };
    if build(&mut cx, body) {
        check_forward_decls(&mut cx);
        check_constants(&mut cx);
        cx.phase = Phase::Blocks;
        let g = &mut scratch.cfg;
        let sound = g.blocks(&mut cx, false);
        if walk(&mut cx, sound.then_some(g)) {
            // A terminator inside a block: report the layout again, with that check.
            cx.findings_of(Phase::Blocks).clear();
            cx.phase = Phase::Blocks;
            scratch.cfg.blocks(&mut cx, true);
        }
    }
    scratch.locals = std::mem::take(&mut cx.locals);
    for list in &mut cx.findings {
        out.append(list);
    }
}

/// The per-instruction checks in one walk over the body: operands, the instruction's own
/// rules and, when the block layout is sound (`g`), phi placement and dominance. Each
/// reports under its own [`Phase`], so the findings come out as from one walk per check.
///
/// With a sound layout, each instruction is matched once: its operands are looked up once
/// ([`use_value`], which also runs the operand and dominance rules) and the types found
/// feed the inlined success test of its kind (`instructions::*_passes`); only what that
/// test does not accept goes to the full rules. Returns true if a terminator stands
/// before the end of its block (`Cfg::blocks` leaves that check to this walk).
fn walk(cx: &mut FnCx<'_>, g: Option<&mut Cfg>) -> bool {
    let f = cx.f;
    let mut p = Problems::new();
    let Some(g) = g else {
        for (i, inst) in f.insts.iter().enumerate() {
            inst.kind.for_each_operand(f, |v| check_operand(cx, i, v));
            instructions::check(cx, i, inst, &mut p);
        }
        return false;
    };
    let facts = cx.facts;
    let mut mid_terminator = false;
    for b in 0..g.num_blocks() {
        let r = g.range(b);
        let (start, end) = (r.start, r.end);
        let ub = b as u32;
        let mut phis = cfg::PhiBlock::new(b);
        for (k, inst) in f.insts[r].iter().enumerate() {
            let i = start + k;
            // The operands in `InstKind::for_each_operand` order (a test checks it).
            macro_rules! use_ {
                ($v:expr) => {
                    use_value(cx, g, ub, i, $v)
                };
            }
            let passes = match &inst.kind {
                InstKind::Phi { incoming: span } => {
                    let incoming = f.incoming(*span);
                    if !g.phi_fits(&phis, incoming) {
                        g.phi(cx, &mut phis, i, incoming);
                    }
                    // The operand rules, dominance and the type rule per incoming value,
                    // with one lookup each.
                    // A span outside the pool fails here; the full rules report it.
                    let mut types_match = incoming.len() == span.len as usize;
                    for &(v, BlockId(pb)) in incoming.iter() {
                        let k = v.0.wrapping_sub(cx.num_module_values);
                        let t = match cx.locals.get(k as usize) {
                            Some(&Local { ty, block }) => {
                                // Defined in the entry block or in the incoming block
                                // itself (or a parameter or constant): it dominates the
                                // end of the incoming block.
                                if block != 0 && block != pb && !g.dominates_built(block, pb) {
                                    g.incoming_dominance(cx, i, v, pb, block);
                                }
                                Some(ty)
                            }
                            None => module_operand(cx, i, v),
                        };
                        types_match &= t.is_none_or(|t| t == inst.ty);
                    }
                    types_match && valued(facts, inst)
                }
                kind => {
                    phis.non_phi();
                    match kind {
                        InstKind::Binop {
                            op,
                            lhs,
                            rhs,
                            flags,
                        } => {
                            let (tl, tr) = (use_!(*lhs), use_!(*rhs));
                            instructions::binop_passes(facts, inst, *op, *flags, tl, tr)
                        }
                        InstKind::Cmp { pred, lhs, rhs } => {
                            let (tl, tr) = (use_!(*lhs), use_!(*rhs));
                            instructions::cmp_passes(facts, inst, *pred, tl, tr)
                        }
                        InstKind::Load { ptr, align } => {
                            let tp = use_!(*ptr);
                            instructions::load_passes(facts, inst, *align, tp)
                        }
                        InstKind::Store { ptr, val, align } => {
                            let (tp, tv) = (use_!(*ptr), use_!(*val));
                            instructions::store_passes(facts, *align, tp, tv) && valued(facts, inst)
                        }
                        InstKind::Cast { op, val } => {
                            let t = use_!(*val);
                            t.is_some_and(|t| instructions::cast_passes(facts, *op, t, inst.ty))
                        }
                        InstKind::Br { .. } | InstKind::Unreachable => {
                            mid_terminator |= i + 1 != end;
                            valued(facts, inst)
                        }
                        InstKind::CondBr { cond, .. } => {
                            mid_terminator |= i + 1 != end;
                            use_!(*cond).is_some_and(|t| facts.is_i1(t)) && valued(facts, inst)
                        }
                        InstKind::Select { cond, t, f } => {
                            let (tc, tt, tf) = (use_!(*cond), use_!(*t), use_!(*f));
                            instructions::select_passes(facts, inst, tc, tt, tf)
                        }
                        InstKind::Call(c) => {
                            if let Callee::Indirect(v) = c.callee {
                                use_!(v);
                            }
                            for a in f.args(c) {
                                use_!(*a);
                            }
                            instructions::direct_call_passes(cx, inst, c) && valued(facts, inst)
                        }
                        InstKind::Ret { val } => {
                            mid_terminator |= i + 1 != end;
                            let t = val.map(|v| use_!(v));
                            instructions::ret_passes(cx, t) && valued(facts, inst)
                        }
                        InstKind::Alloca { size, align } => {
                            let t = use_!(*size);
                            instructions::alloca_passes(facts, inst, *align, t)
                        }
                        other => {
                            // Switch, extractelement, insertelement: the full rules.
                            mid_terminator |= other.is_terminator() && i + 1 != end;
                            other.for_each_operand(f, |v| {
                                use_!(v);
                            });
                            false
                        }
                    }
                }
            };
            if !passes {
                instructions::check_all(cx, i, inst, &mut p);
            }
            if inst.result != ValueId::NONE {
                // From here on, uses in this block need no dominator tree.
                let k = inst.result.0.wrapping_sub(cx.num_module_values);
                if let Some(l) = cx.locals.get_mut(k as usize) {
                    l.block = ub;
                }
            }
        }
    }
    mid_terminator
}

/// The result rule of the full rules (`check_result_type`): an instruction with a result
/// has a value type. The success tests of binop, select, load, compare, cast and alloca
/// already imply it (or test it on facts they looked up); the walk adds it to the others.
#[inline(always)]
fn valued(facts: &TypeFacts, inst: &crate::ir::Inst) -> bool {
    inst.result == ValueId::NONE || facts.is_value_type(inst.ty)
}

/// Operand `v` of instruction `i` (not a phi) in block `ub`: the operand rules and
/// dominance in one lookup, returning its type (`None` if it names no value). The common
/// cases, a local value defined earlier in the same block or in the entry block (or a
/// parameter or constant), need no dominator tree.
#[inline(always)]
fn use_value(cx: &mut FnCx<'_>, g: &mut Cfg, ub: u32, i: usize, v: ValueId) -> Option<TypeId> {
    let k = v.0.wrapping_sub(cx.num_module_values);
    let Some(&Local { ty, block }) = cx.locals.get(k as usize) else {
        return module_operand(cx, i, v);
    };
    // The entry block dominates every reachable block (and uses in unreachable blocks
    // are not checked).
    if block != ub && block != 0 && !g.dominates_built(block, ub) {
        cross_block_use(cx, g, ub, i, v, block);
    }
    Some(ty)
}

/// [`use_value`] of an instruction value defined in another block than its use (`block`,
/// or [`NOT_YET`]: later in the layout or later in this block).
#[inline(never)]
fn cross_block_use(cx: &mut FnCx<'_>, g: &mut Cfg, ub: u32, i: usize, v: ValueId, block: u32) {
    if block != NOT_YET {
        if !g.dominates_reachable(block, ub) {
            g.dominance(cx, ub, i, v, None, block);
        }
    } else if let Some(d) = cx.def_of(v) {
        let db = g.block_of(d);
        g.dominance(cx, ub, i, v, Some(d), db);
    }
}

/// [`use_value`] of an operand that is not a local value: a function or global address
/// (of type i32) or nothing. The operand rules of [`check_operand`].
#[inline(never)]
pub(super) fn module_operand(cx: &mut FnCx<'_>, i: usize, v: ValueId) -> Option<TypeId> {
    let ty = cx.ty(v);
    check_operand(cx, i, v);
    ty
}

/// Fills in the value types; false (after reporting) if the body is too inconsistent to
/// check further.
fn build(cx: &mut FnCx<'_>, body: u32) -> bool {
    let (m, f) = (cx.m, cx.f);
    let Some(d) = m.functions.get(f.decl.index()) else {
        cx.at_fn(
            Rule::Structure,
            format!(
                "body {body} defines @f{} but only {} functions exist",
                f.decl,
                m.functions.len()
            ),
        );
        return false;
    };
    if d.body != Some(body) {
        cx.at_fn(
            Rule::Structure,
            format!("body {body} is not the body of @f{}", f.decl),
        );
        return false;
    }
    let Some(ft) = m.types.function(d.ty) else {
        // Reported at the declaration.
        return false;
    };
    cx.ret = ft.ret;
    if f.base != cx.num_module_values {
        cx.at_fn(
            Rule::Structure,
            format!(
                "first parameter id is {} but the module has {} functions and globals",
                f.base, cx.num_module_values
            ),
        );
        return false;
    }
    if f.num_params as usize != ft.params.len() {
        cx.at_fn(
            Rule::Structure,
            format!(
                "body has {} parameters but its type {} has {}",
                f.num_params,
                m.types.display(d.ty),
                ft.params.len()
            ),
        );
        return false;
    }
    let mut tys = std::mem::take(&mut cx.locals);
    tys.clear();
    let defined = |ty| Local { ty, block: 0 };
    tys.extend(ft.params.iter().map(|&ty| defined(ty)));
    tys.extend(f.consts.iter().map(|c| defined(c.ty)));
    let first = f.first_inst_value();
    cx.first_inst_value = first;
    // One `extend` (no capacity test per value); a bad entry gets a placeholder, as the
    // body is not checked further.
    let mut ok = true;
    let insts = &f.insts[..];
    tys.extend(f.value_insts.iter().enumerate().map(|(n, &ii)| {
        let ty = match insts.get(ii as usize) {
            Some(inst) if inst.result.0 == first.wrapping_add(n as u32) => inst.ty,
            _ => {
                ok = false;
                TypeId::NONE
            }
        };
        Local { ty, block: NOT_YET }
    }));
    cx.locals = tys;
    let with_result = f.insts.iter().filter(|i| i.result().is_some()).count();
    if !ok || with_result != f.value_insts.len() {
        cx.at_fn(
            Rule::Structure,
            "instruction value table does not match the instructions' results",
        );
        return false;
    }
    true
}

/// A forward type declaration (`declare T %vN`) must give the type the value really has.
fn check_forward_decls(cx: &mut FnCx<'_>) {
    for &(v, t) in &cx.f.forward_decls {
        let actual = cx.ty(v);
        if actual != Some(t) {
            let has = actual.map_or_else(|| "no such value".to_string(), |a| cx.show(a));
            let msg = format!(
                "forward declaration of {} as {}, but it is {}",
                cx.value_ref(v),
                cx.show(t),
                has
            );
            cx.at_fn(Rule::Structure, msg);
        }
    }
}

/// Constants: integer or floating point literals of scalar types, or undef (scalars and
/// vectors). Integers must fit their width.
fn check_constants(cx: &mut FnCx<'_>) {
    let (types, facts) = (cx.types(), cx.facts);
    for (k, c) in cx.f.consts.iter().enumerate() {
        // The valid cases from the type facts; the rules below say what is wrong.
        let bits = facts.bits(c.ty);
        let valid = match c.value {
            ConstValue::Undef => bits & TypeFacts::VALUE != 0,
            ConstValue::Int(x) => {
                let int = TypeFacts::VALUE | TypeFacts::ELEM_INT | TypeFacts::VECTOR;
                bits & int == TypeFacts::VALUE | TypeFacts::ELEM_INT
                    && facts
                        .scalar_bits(c.ty)
                        .is_some_and(|w| w >= 64 || x >> w == 0)
            }
            ConstValue::Float(x) => {
                bits & TypeFacts::DOUBLE != 0
                    || (bits & TypeFacts::FLOAT != 0 && x <= u32::MAX as u64)
            }
        };
        if valid {
            continue;
        }
        let problem = match (types.get(c.ty), c.value) {
            (_, ConstValue::Undef) if is_value_type(types, c.ty) => None,
            (Some(Type::Int(w)), ConstValue::Int(x)) if is_valid_int_width(*w) => {
                (*w < 64 && x >> *w != 0).then(|| format!("value {x:#x} does not fit i{w}"))
            }
            (Some(Type::Float), ConstValue::Float(x)) => {
                (x > u32::MAX as u64).then(|| format!("float bits {x:#x} exceed 32 bits"))
            }
            (Some(Type::Double), ConstValue::Float(_)) => None,
            (Some(Type::Vector { .. }), _) => {
                Some("vector constants other than undef are not allowed".to_string())
            }
            _ => Some(format!("{:?} is not allowed for this type", c.value)),
        };
        if let Some(p) = problem {
            let msg = format!("constant %c{k} of type {}: {p}", cx.show(c.ty));
            cx.at_fn(Rule::Constant, msg);
        }
    }
}

/// Operand `v` of instruction `i` names a value, and is not the address of an intrinsic
/// (intrinsics have no address; only direct calls may name them).
#[inline(always)]
fn check_operand(cx: &mut FnCx<'_>, i: usize, v: ValueId) {
    if cx.ty(v).is_none() {
        bad_operand(cx, i, format!("operand {} names no value", cx.value_ref(v)));
    } else if v.0 < cx.m.num_functions() && cx.intrinsic_of(FuncId(v.0)).is_some() {
        // `v` is ValueRef::Function(v).
        let msg = format!("the address of intrinsic @f{} is used as a value", v.0);
        bad_operand(cx, i, msg);
    }
}

#[cold]
#[inline(never)]
fn bad_operand(cx: &mut FnCx<'_>, i: usize, msg: String) {
    cx.phase = Phase::Operands;
    cx.at_inst(i, Rule::Operand, msg);
}
