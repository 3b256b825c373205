//! Per-function checking: builds a safe view of one body (value types, blocks) and runs
//! the constant, instruction, CFG and dominance rules on it.

use super::types::{is_valid_int_width, is_value_type};
use super::{block_id, cfg, instructions, position, Context, Rule, Sink};
use crate::bitstream::Position;
use crate::ir::{ConstValue, Function, Intrinsic, Module, Type, TypeId, ValueId, ValueRef};

/// A checked view of one function body. Every lookup is bounds-checked.
pub(super) struct FnCx<'a> {
    pub m: &'a Module,
    pub f: &'a Function,
    /// The intrinsic each function id is (resolved by name), if any.
    intrinsics: &'a [Option<Intrinsic>],
    /// Index of the function address record this body defines.
    pub index: u32,
    pub ret: TypeId,
    /// Type of every local value (params, constants, instruction values) by `v - base`.
    local_tys: Vec<Option<TypeId>>,
    pub i32_ty: Option<TypeId>,
    /// Number of module values (functions + globals).
    pub num_module_values: u32,
    pub out: Sink,
}

impl<'a> FnCx<'a> {
    pub fn types(&self) -> &'a crate::ir::TypeTable {
        &self.m.types
    }

    pub fn show(&self, t: TypeId) -> String {
        self.m.types.display(t).to_string()
    }

    /// The type of a value, `None` if the id names nothing.
    pub fn ty(&self, v: ValueId) -> Option<TypeId> {
        if v.0 < self.num_module_values {
            return self.i32_ty;
        }
        let i = v.0.checked_sub(self.f.base)?;
        self.local_tys.get(i as usize).copied().flatten()
    }

    pub fn value_ref(&self, v: ValueId) -> ValueRef {
        self.f.value_ref(v, self.m.num_functions())
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

    /// Reports a finding on instruction `i`.
    pub fn at_inst(&mut self, i: usize, rule: Rule, msg: impl Into<String>) {
        let ctx = Context::Instruction {
            function: self.index,
            name: self.name(),
            inst: i as u32,
        };
        let pos = self.inst_pos(i);
        self.out.push(rule, pos, ctx, msg);
    }

    /// Reports a finding on basic block `b`, positioned at instruction `first` of it.
    pub fn at_block(&mut self, b: u32, first: Option<usize>, rule: Rule, msg: impl Into<String>) {
        let ctx = Context::Block {
            function: self.index,
            name: self.name(),
            block: b,
        };
        let pos = first.map_or_else(|| self.fn_pos(), |i| self.inst_pos(i));
        self.out.push(rule, pos, ctx, msg);
    }

    /// Reports a finding on the function as a whole.
    pub fn at_fn(&mut self, rule: Rule, msg: impl Into<String>) {
        let ctx = Context::Function {
            index: self.index,
            name: self.name(),
        };
        let pos = self.fn_pos();
        self.out.push(rule, pos, ctx, msg);
    }
}

/// Checks one function body and appends its findings to `out`. `intrinsics` is the
/// intrinsic of each function id (`module::resolve_intrinsic`).
pub(super) fn check(
    m: &Module,
    intrinsics: &[Option<Intrinsic>],
    body: u32,
    f: &Function,
    out: &mut Sink,
) {
    let nmv = m.num_functions() + m.globals.len() as u32;
    let mut cx = FnCx {
        m,
        f,
        intrinsics,
        index: f.decl,
        ret: TypeId(u32::MAX),
        local_tys: Vec::new(),
        i32_ty: m.types.find(&Type::Int(32)),
        num_module_values: nmv,
        out: Sink::default(),
    };
    if build(&mut cx, body) {
        check_forward_decls(&mut cx);
        check_constants(&mut cx);
        check_operands(&mut cx);
        instructions::check(&mut cx);
        cfg::check(&mut cx);
    }
    out.findings.append(&mut cx.out.findings);
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
    let mut tys: Vec<Option<TypeId>> = ft.params.iter().map(|t| Some(*t)).collect();
    tys.extend(f.consts.iter().map(|c| Some(c.ty)));
    let first = f.first_inst_value();
    let mut ok = true;
    for (n, &ii) in f.value_insts.iter().enumerate() {
        let inst = f.insts.get(ii as usize);
        match inst {
            Some(inst) if inst.result == first.wrapping_add(n as u32) => {
                tys.push(Some(inst.ty));
            }
            _ => {
                tys.push(None);
                ok = false;
            }
        }
    }
    let with_result = f.insts.iter().filter(|i| i.result().is_some()).count();
    if !ok || with_result != f.value_insts.len() {
        cx.at_fn(
            Rule::Structure,
            "instruction value table does not match the instructions' results",
        );
        return false;
    }
    cx.local_tys = tys;
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

/// Every operand names a value, and no operand is the address of an intrinsic (intrinsics
/// have no address; only direct calls may name them).
fn check_operands(cx: &mut FnCx<'_>) {
    let f = cx.f;
    for (i, inst) in f.insts.iter().enumerate() {
        let mut bad = Vec::new();
        inst.kind.for_each_operand(|v| {
            if cx.ty(v).is_none() {
                bad.push(format!("operand {} names no value", cx.value_ref(v)));
            } else if let ValueRef::Function(func) = cx.value_ref(v) {
                if cx.intrinsic_of(func).is_some() {
                    bad.push(format!(
                        "the address of intrinsic @f{func} is used as a value"
                    ));
                }
            }
        });
        for b in bad {
            cx.at_inst(i, Rule::Operand, b);
        }
    }
}
