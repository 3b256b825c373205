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
    ConstValue, Function, InstKind, Intrinsic, Module, Type, TypeId, ValueId, ValueRef,
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
    local_tys: Vec<TypeId>,
    cfg: Cfg,
}

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
    pub index: u32,
    pub ret: TypeId,
    /// Type of every local value (params, constants, instruction values) by `v - base`.
    local_tys: Vec<TypeId>,
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
        self.local_tys.get(i as usize).copied()
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
    pub fn intrinsic_of(&self, func: u32) -> Option<Intrinsic> {
        self.intrinsics.get(func as usize).copied().flatten()
    }

    fn name(&self) -> Option<String> {
        self.m
            .functions
            .get(self.index as usize)
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
            function: self.index,
            name: self.name(),
            inst: i as u32,
        };
        let pos = self.inst_pos(i);
        self.push(rule, pos, ctx, msg.into());
    }

    /// Reports a finding on basic block `b`, positioned at instruction `first` of it.
    pub fn at_block(&mut self, b: u32, first: Option<usize>, rule: Rule, msg: impl Into<String>) {
        let ctx = Context::Block {
            function: self.index,
            name: self.name(),
            block: b,
        };
        let pos = first.map_or_else(|| self.fn_pos(), |i| self.inst_pos(i));
        self.push(rule, pos, ctx, msg.into());
    }

    /// Reports a finding on the function as a whole.
    pub fn at_fn(&mut self, rule: Rule, msg: impl Into<String>) {
        let ctx = Context::Function {
            index: self.index,
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
        ret: TypeId(u32::MAX),
        local_tys: std::mem::take(&mut scratch.local_tys),
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
        let sound = g.blocks(&mut cx);
        walk(&mut cx, sound.then_some(g));
    }
    scratch.local_tys = std::mem::take(&mut cx.local_tys);
    for list in &mut cx.findings {
        out.append(list);
    }
}

/// The per-instruction checks in one walk over the body: operands, the instruction's own
/// rules and, when the block layout is sound (`g`), phi placement and dominance. Each
/// reports under its own [`Phase`], so the findings come out as from one walk per check.
fn walk(cx: &mut FnCx<'_>, g: Option<&mut Cfg>) {
    let f = cx.f;
    let mut p = Problems::new();
    let Some(g) = g else {
        for (i, inst) in f.insts.iter().enumerate() {
            inst.kind.for_each_operand(|v| check_operand(cx, i, v));
            instructions::check(cx, i, inst, &mut p);
        }
        return;
    };
    for b in 0..g.num_blocks() {
        let r = g.range(b);
        let start = r.start;
        let mut phis = cfg::PhiBlock::new(b);
        for (i, inst) in r.clone().zip(&f.insts[r]) {
            match &inst.kind {
                InstKind::Phi { incoming } => {
                    inst.kind.for_each_operand(|v| check_operand(cx, i, v));
                    g.phi(cx, &mut phis, i, incoming);
                    g.phi_dominance(cx, i, incoming);
                }
                kind => {
                    phis.non_phi();
                    each_operand(kind, |v| check_use(cx, g, b as u32, start, i, v));
                }
            }
            instructions::check(cx, i, inst, &mut p);
        }
    }
}

/// Calls `f` on every value operand of `kind`, in the order of
/// [`InstKind::for_each_operand`] (a test checks they agree), but inlined into the walk so
/// that the per-operand checks inline into each arm instead of being called per operand.
#[inline(always)]
pub(super) fn each_operand(kind: &InstKind, mut f: impl FnMut(ValueId)) {
    match kind {
        InstKind::Binop { lhs, rhs, .. } | InstKind::Cmp { lhs, rhs, .. } => {
            f(*lhs);
            f(*rhs);
        }
        InstKind::Cast { val, .. } => f(*val),
        InstKind::Load { ptr, .. } => f(*ptr),
        InstKind::Store { ptr, val, .. } => {
            f(*ptr);
            f(*val);
        }
        InstKind::Br { .. } | InstKind::Unreachable => {}
        InstKind::CondBr { cond, .. } => f(*cond),
        InstKind::Call(c) => {
            if let crate::ir::Callee::Indirect(v) = c.callee {
                f(v);
            }
            c.args.iter().for_each(|a| f(*a));
        }
        // The rarer kinds.
        other => other.for_each_operand(f),
    }
}

/// Operand `v` of instruction `i` (not a phi) in block `ub`, whose first instruction is
/// `start`: the operand rules and dominance in one visit. The common case, a value
/// defined earlier in the same block, needs no dominator tree.
#[inline(always)]
fn check_use(cx: &mut FnCx<'_>, g: &mut Cfg, ub: u32, start: usize, i: usize, v: ValueId) {
    let Some(d) = cx.def_of(v) else {
        // Not an instruction value: no dominance rule.
        check_operand(cx, i, v);
        return;
    };
    // An instruction value that exists: it names a value and is no function address.
    if (start..i).contains(&d) {
        return;
    }
    g.dominance(cx, ub, i, v, d);
}

/// Fills in the value types; false (after reporting) if the body is too inconsistent to
/// check further.
fn build(cx: &mut FnCx<'_>, body: u32) -> bool {
    let (m, f) = (cx.m, cx.f);
    let Some(d) = m.functions.get(f.decl as usize) else {
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
    let mut tys = std::mem::take(&mut cx.local_tys);
    tys.clear();
    tys.extend_from_slice(&ft.params);
    tys.extend(f.consts.iter().map(|c| c.ty));
    let first = f.first_inst_value();
    cx.first_inst_value = first;
    let mut ok = true;
    tys.reserve(f.value_insts.len());
    for (n, &ii) in f.value_insts.iter().enumerate() {
        let inst = f.insts.get(ii as usize);
        match inst {
            Some(inst) if inst.result == first.wrapping_add(n as u32) => {
                tys.push(inst.ty);
            }
            _ => ok = false,
        }
    }
    cx.local_tys = tys;
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
    let types = cx.types();
    for (k, c) in cx.f.consts.iter().enumerate() {
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
    } else if v.0 < cx.m.num_functions() && cx.intrinsic_of(v.0).is_some() {
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

#[cfg(test)]
mod tests {
    use super::each_operand;
    use crate::ir::{
        Align, BinOp, Call, Callee, CastOp, CmpPred, InstKind, Switch, SwitchCase, ValueId,
    };

    fn operands_both_ways(kind: &InstKind) -> (Vec<ValueId>, Vec<ValueId>) {
        let (mut ours, mut ir) = (Vec::new(), Vec::new());
        each_operand(kind, |v| ours.push(v));
        kind.for_each_operand(|v| ir.push(v));
        (ours, ir)
    }

    /// The walk's inlined operand visitor must visit what the IR's does, in its order.
    #[test]
    fn each_operand_agrees_with_for_each_operand() {
        let v = ValueId;
        let call = |callee| {
            InstKind::Call(Box::new(Call {
                callee,
                args: vec![v(7), v(8)],
                cc_info: 0,
            }))
        };
        let kinds = [
            InstKind::Binop {
                op: BinOp::Add,
                lhs: v(1),
                rhs: v(2),
                flags: None,
            },
            InstKind::Cast {
                op: CastOp::Trunc,
                val: v(3),
            },
            InstKind::ExtractElement {
                vec: v(1),
                index: v(2),
            },
            InstKind::InsertElement {
                vec: v(1),
                elt: v(2),
                index: v(3),
            },
            InstKind::Ret { val: None },
            InstKind::Ret { val: Some(v(4)) },
            InstKind::Br { target: 1 },
            InstKind::CondBr {
                cond: v(5),
                then_bb: 1,
                else_bb: 2,
            },
            InstKind::Switch(Box::new(Switch {
                cond: v(6),
                default: 1,
                cases: vec![SwitchCase {
                    value: 3,
                    target: 2,
                }],
            })),
            InstKind::Unreachable,
            InstKind::Phi {
                incoming: vec![(v(1), 0), (v(2), 1)].into_boxed_slice(),
            },
            InstKind::Alloca {
                size: v(3),
                align: Align(1),
            },
            InstKind::Load {
                ptr: v(4),
                align: Align(1),
            },
            InstKind::Store {
                ptr: v(4),
                val: v(5),
                align: Align(1),
            },
            InstKind::Cmp {
                pred: CmpPred::IEq,
                lhs: v(1),
                rhs: v(2),
            },
            InstKind::Select {
                cond: v(1),
                t: v(2),
                f: v(3),
            },
            call(Callee::Direct(0)),
            call(Callee::Indirect(v(9))),
        ];
        for kind in &kinds {
            let (ours, ir) = operands_both_ways(kind);
            assert_eq!(ours, ir, "{kind:?}");
        }
        // Every kind that has operands was seen with some.
        assert!(
            kinds
                .iter()
                .filter(|k| !operands_both_ways(k).0.is_empty())
                .count()
                >= 14
        );
    }
}
