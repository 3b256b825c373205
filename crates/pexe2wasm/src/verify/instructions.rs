//! Per-instruction rules: operand and result types, alignments, call signatures. Each
//! instruction kind has its own small function returning the problems it found.

use super::function::{FnCx, Phase};
use super::globals::MAX_ALIGN_CODE;
use super::intrinsics;
use super::types::{self, is_param_type, is_return_type, TypeFacts};
use super::Rule;
use crate::ir::{
    Align, BinOp, BlockId, Call, Callee, CastOp, CmpPred, Inst, InstKind, Span, Switch, Type,
    TypeId, ValueId,
};

/// The problems found on one instruction (a buffer the walk reuses; empty between calls).
pub(super) type Problems = Vec<(Rule, String)>;

/// Checks instruction `i` (`inst`) and reports its problems. `p` is an empty buffer.
///
/// Speed: nearly every instruction passes, so a short test inlined into the walk
/// ([`passes`]) accepts the common valid kinds, and only the rest (rarer kinds, and
/// anything that might have a problem) go through the full rules, out of line.
#[inline(always)]
pub(super) fn check(cx: &mut FnCx<'_>, i: usize, inst: &Inst, p: &mut Problems) {
    if !passes(cx, inst) {
        check_all(cx, i, inst, p);
    }
}

/// True only if the full rules ([`check_all`]) find nothing on `inst`; false when they
/// might (or when the kind is not one of the common ones tested here). Each arm is the
/// success condition of the matching rule function below, on the same facts; the walk
/// over a sound body calls the per-kind tests directly with the operand types it looked
/// up.
#[inline(always)]
fn passes(cx: &FnCx<'_>, inst: &Inst) -> bool {
    let facts = cx.facts;
    // check_result_type
    if inst.result().is_some() && !facts.is_value_type(inst.ty) {
        return false;
    }
    match &inst.kind {
        InstKind::Binop {
            op,
            lhs,
            rhs,
            flags,
        } => binop_passes(facts, inst, *op, *flags, cx.ty(*lhs), cx.ty(*rhs)),
        InstKind::Load { ptr, align } => load_passes(facts, inst, *align, cx.ty(*ptr)),
        InstKind::Store { ptr, val, align } => {
            store_passes(facts, *align, cx.ty(*ptr), cx.ty(*val))
        }
        InstKind::Cmp { pred, lhs, rhs } => {
            cmp_passes(facts, inst, *pred, cx.ty(*lhs), cx.ty(*rhs))
        }
        InstKind::Br { .. } | InstKind::Unreachable => true,
        InstKind::CondBr { cond, .. } => cx.ty(*cond).is_some_and(|t| facts.is_i1(t)),
        InstKind::Phi { incoming } => {
            cx.f.incoming(*incoming)
                .iter()
                .all(|(v, _)| cx.ty(*v).is_none_or(|t| t == inst.ty))
        }
        InstKind::Select { cond, t, f } => {
            select_passes(facts, inst, cx.ty(*cond), cx.ty(*t), cx.ty(*f))
        }
        InstKind::Call(c) => direct_call_passes(cx, inst, c),
        InstKind::Cast { op, val } => cx
            .ty(*val)
            .is_some_and(|src| cast_passes(facts, *op, src, inst.ty)),
        InstKind::Ret { val } => ret_passes(cx, val.map(|v| cx.ty(v))),
        InstKind::Alloca { size, align } => alloca_passes(facts, inst, *align, cx.ty(*size)),
        _ => false,
    }
}

/// [`passes`] for a binop with operand types `tl`, `tr` (the rules of [`binop`]).
#[inline(always)]
pub(super) fn binop_passes(
    facts: &TypeFacts,
    inst: &Inst,
    op: BinOp,
    flags: Option<u32>,
    tl: Option<TypeId>,
    tr: Option<TypeId>,
) -> bool {
    let (Some(tl), Some(tr)) = (tl, tr) else {
        return false;
    };
    let bits = facts.bits(tl);
    let float = bits & TypeFacts::ELEM_FLOAT != 0;
    let logic = matches!(op, BinOp::And | BinOp::Or | BinOp::Xor);
    tl == tr
        && inst.ty == tl
        && (float || bits & TypeFacts::ELEM_INT != 0)
        && op.is_float() == float
        && (logic || float || bits & TypeFacts::BOOL_LIKE == 0)
        && flags.is_none_or(|fl| fl == 0)
        // check_result_type, on the facts already looked up (inst.ty == tl).
        && (inst.result == ValueId::NONE || bits & TypeFacts::VALUE != 0)
}

/// [`passes`] for a load through a pointer of type `tp` (the rules of [`load`]).
#[inline(always)]
pub(super) fn load_passes(
    facts: &TypeFacts,
    inst: &Inst,
    align: Align,
    tp: Option<TypeId>,
) -> bool {
    tp.is_some_and(|tp| facts.is_i32(tp)) && facts.plain_access(inst.ty, align)
}

/// [`passes`] for a store of a value of type `tv` through a pointer of type `tp`.
#[inline(always)]
pub(super) fn store_passes(
    facts: &TypeFacts,
    align: Align,
    tp: Option<TypeId>,
    tv: Option<TypeId>,
) -> bool {
    tp.is_some_and(|tp| facts.is_i32(tp)) && tv.is_some_and(|t| facts.plain_access(t, align))
}

/// [`passes`] for a compare of scalars: then the result must be the scalar i1.
#[inline(always)]
pub(super) fn cmp_passes(
    facts: &TypeFacts,
    inst: &Inst,
    pred: CmpPred,
    tl: Option<TypeId>,
    tr: Option<TypeId>,
) -> bool {
    let (Some(tl), Some(tr)) = (tl, tr) else {
        return false;
    };
    let bits = facts.bits(tl);
    let elem_ok = if pred.is_float() {
        bits & TypeFacts::ELEM_FLOAT != 0
    } else {
        bits & TypeFacts::ELEM_INT != 0
    };
    tl == tr && elem_ok && bits & TypeFacts::VECTOR == 0 && facts.is_i1(inst.ty)
}

/// [`passes`] for a select of scalar values with a scalar i1 condition.
#[inline(always)]
pub(super) fn select_passes(
    facts: &TypeFacts,
    inst: &Inst,
    tc: Option<TypeId>,
    tt: Option<TypeId>,
    tf: Option<TypeId>,
) -> bool {
    let (Some(tc), Some(tt), Some(tf)) = (tc, tt, tf) else {
        return false;
    };
    let bits = facts.bits(tt);
    tt == tf
        && inst.ty == tt
        && facts.is_i1(tc)
        && bits & TypeFacts::VECTOR == 0
        // check_result_type, on the facts already looked up (inst.ty == tt).
        && (inst.result == ValueId::NONE || bits & TypeFacts::VALUE != 0)
}

/// [`passes`] for `ret`, with the type of its value if it has one (the rules of [`ret`]).
#[inline(always)]
pub(super) fn ret_passes(cx: &FnCx<'_>, val: Option<Option<TypeId>>) -> bool {
    let void = cx.types().is_void(cx.ret);
    match val {
        None => void,
        Some(t) => !void && t.is_none_or(|t| t == cx.ret),
    }
}

/// [`passes`] for an alloca with a size of type `ts` (the rules of [`alloca`]).
#[inline(always)]
pub(super) fn alloca_passes(
    facts: &TypeFacts,
    inst: &Inst,
    align: Align,
    ts: Option<TypeId>,
) -> bool {
    ts.is_none_or(|t| facts.is_i32(t)) && facts.is_i32(inst.ty) && align.0 <= MAX_ALIGN_CODE
}

/// [`passes`] for a cast between scalar value types (the rules of [`cast`], with the
/// element count rule trivially met).
#[inline(always)]
pub(super) fn cast_passes(facts: &TypeFacts, op: CastOp, src: TypeId, dst: TypeId) -> bool {
    let (Some(sb), Some(db)) = (facts.scalar_bits(src), facts.scalar_bits(dst)) else {
        return false;
    };
    let (si, di) = (facts.elem_is_int(src), facts.elem_is_int(dst));
    match op {
        CastOp::Trunc => si && di && sb > db,
        CastOp::ZExt | CastOp::SExt => si && di && sb < db,
        CastOp::FpTrunc => facts.is_double(src) && facts.is_float(dst),
        CastOp::FpExt => facts.is_float(src) && facts.is_double(dst),
        CastOp::FpToUi | CastOp::FpToSi => facts.elem_is_float(src) && di,
        CastOp::UiToFp | CastOp::SiToFp => si && facts.elem_is_float(dst),
        CastOp::Bitcast => sb == db,
        CastOp::PtrToInt | CastOp::IntToPtr => false,
    }
}

/// [`passes`] for a call: a direct call to a non-intrinsic function with matching
/// argument and result types.
#[inline(always)]
pub(super) fn direct_call_passes(cx: &FnCx<'_>, inst: &Inst, c: &Call) -> bool {
    let Callee::Direct(func) = c.callee else {
        return indirect_call_passes(cx, inst, c);
    };
    if c.cc_info >> 1 != 0 || cx.intrinsic_of(func).is_some() {
        return false;
    }
    let Some(ft) =
        cx.m.functions
            .get(func.index())
            .and_then(|d| cx.types().function(d.ty))
    else {
        return false;
    };
    let args = cx.f.args(c);
    if ft.params.len() != args.len()
        || args.len() != c.args.len as usize
        || !args
            .iter()
            .zip(&ft.params)
            .all(|(a, pt)| cx.ty(*a).is_none_or(|at| at == *pt))
    {
        return false;
    }
    match inst.result() {
        None => cx.types().is_void(ft.ret),
        Some(_) => inst.ty == ft.ret && !cx.types().is_void(ft.ret),
    }
}

/// [`passes`] for an indirect call (the rules of [`call`] for `Callee::Indirect`): an i32
/// callee, parameter-type arguments, and a result exactly when the type is not void.
#[inline(always)]
fn indirect_call_passes(cx: &FnCx<'_>, inst: &Inst, c: &Call) -> bool {
    let facts = cx.facts;
    let Callee::Indirect(v) = c.callee else {
        return false;
    };
    let param = |t: TypeId| facts.bits(t) & TypeFacts::PARAM != 0;
    let void = cx.types().is_void(inst.ty);
    c.cc_info >> 1 == 0
        && cx.ty(v).is_none_or(|t| facts.is_i32(t))
        && cx.f.args(c).len() == c.args.len as usize
        && cx.f.args(c).iter().all(|a| cx.ty(*a).is_none_or(param))
        && (void || param(inst.ty))
        && inst.result().is_some() != void
}

/// All the rules on instruction `i`; reports its problems. Out of line: [`check`] calls it
/// only for the instructions [`passes`] does not accept.
#[inline(never)]
pub(super) fn check_all(cx: &mut FnCx<'_>, i: usize, inst: &Inst, p: &mut Problems) {
    check_result_type(cx, inst, p);
    match &inst.kind {
        InstKind::Binop {
            op,
            lhs,
            rhs,
            flags,
        } => binop(cx, inst, *op, *lhs, *rhs, *flags, p),
        InstKind::Cast { op, val } => cast(cx, inst, *op, *val, p),
        InstKind::ExtractElement { vec, index } => extract(cx, inst, *vec, *index, p),
        InstKind::InsertElement { vec, elt, index } => insert(cx, inst, *vec, *elt, *index, p),
        InstKind::Ret { val } => ret(cx, *val, p),
        InstKind::CondBr { cond, .. } => cond_br(cx, *cond, p),
        InstKind::Switch(s) => switch(cx, s, p),
        InstKind::Br { .. } | InstKind::Unreachable => {}
        InstKind::Phi { incoming } => {
            if cx.f.incoming(*incoming).len() != incoming.len as usize {
                p.push((Rule::Phi, span_outside("phi's incoming list", *incoming)));
            }
            phi_types(cx, inst, cx.f.incoming(*incoming), p)
        }
        InstKind::Alloca { size, align } => alloca(cx, inst, *size, *align, p),
        InstKind::Load { ptr, align } => load(cx, inst, *ptr, *align, p),
        InstKind::Store { ptr, val, align } => store(cx, *ptr, *val, *align, p),
        InstKind::Cmp { pred, lhs, rhs } => cmp(cx, inst, *pred, *lhs, *rhs, p),
        InstKind::Select { cond, t, f } => select(cx, inst, *cond, *t, *f, p),
        InstKind::Call(c) => call(cx, inst, c, p),
    }
    if !p.is_empty() {
        report(cx, i, p);
    }
}

/// Reports (and drains) the problems of instruction `i`; out of line, as it is rare.
#[cold]
#[inline(never)]
fn report(cx: &mut FnCx<'_>, i: usize, p: &mut Problems) {
    cx.phase = Phase::Instructions;
    for (rule, msg) in p.drain(..) {
        cx.at_inst(i, rule, msg);
    }
}

/// Values must have a PNaCl value type; void results are "no result".
fn check_result_type(cx: &FnCx<'_>, inst: &Inst, p: &mut Problems) {
    if inst.result().is_some() && !cx.facts.is_value_type(inst.ty) {
        p.push((
            Rule::ResultType,
            format!("result of type {} is not allowed", cx.show(inst.ty)),
        ));
    }
}

/// The element count of a vector, 0 for scalars (`UnderlyingCount`).
fn count(cx: &FnCx<'_>, t: TypeId) -> u32 {
    cx.types().vector_len(t)
}

/// Bit width of a type's element (`BitSizeOf(UnderlyingType(T))`).
fn elem_bits(cx: &FnCx<'_>, t: TypeId) -> u32 {
    cx.types().bit_size(cx.types().element(t))
}

fn elem_is_int(cx: &FnCx<'_>, t: TypeId) -> bool {
    cx.facts.elem_is_int(t)
}

fn elem_is(cx: &FnCx<'_>, t: TypeId, want: &Type) -> bool {
    cx.types().get(cx.types().element(t)) == Some(want)
}

fn elem_is_float(cx: &FnCx<'_>, t: TypeId) -> bool {
    cx.facts.elem_is_float(t)
}

fn binop(
    cx: &FnCx<'_>,
    inst: &Inst,
    op: BinOp,
    lhs: ValueId,
    rhs: ValueId,
    flags: Option<u32>,
    p: &mut Problems,
) {
    let (Some(tl), Some(tr)) = (cx.ty(lhs), cx.ty(rhs)) else {
        return;
    };
    let name = op.name();
    if tl != tr {
        p.push((
            Rule::Arithmetic,
            format!(
                "{name} of {} and {}: operand types differ",
                cx.show(tl),
                cx.show(tr)
            ),
        ));
        return;
    }
    if inst.ty != tl {
        p.push((
            Rule::Arithmetic,
            format!(
                "{name} of {} has result type {}",
                cx.show(tl),
                cx.show(inst.ty)
            ),
        ));
    }
    let float = elem_is_float(cx, tl);
    if !(float || elem_is_int(cx, tl)) || op.is_float() != float {
        p.push((
            Rule::Arithmetic,
            format!("{name} is not allowed on {}", cx.show(tl)),
        ));
        return;
    }
    // Only the bitwise logic operators work on i1: arithmetic and shifts do not.
    let logic = matches!(op, BinOp::And | BinOp::Or | BinOp::Xor);
    if !logic && !op.is_float() && cx.facts.is_bool_like(tl) {
        p.push((
            Rule::Arithmetic,
            format!("{name} on {} is not allowed", cx.show(tl)),
        ));
    }
    // nsw/nuw/exact are disallowed; the old 4-operand record form carries them.
    if let Some(fl) = flags {
        if fl != 0 {
            p.push((
                Rule::Arithmetic,
                format!("{name} has optimization flags {fl:#x} (nsw/nuw/exact are not allowed)"),
            ));
        }
    }
}

fn cast(cx: &FnCx<'_>, inst: &Inst, op: CastOp, val: ValueId, p: &mut Problems) {
    let Some(src) = cx.ty(val) else {
        return;
    };
    let dst = inst.ty;
    let name = op.name();
    let bad = |why: &str| {
        (
            Rule::Cast,
            format!("{name} from {} to {}: {why}", cx.show(src), cx.show(dst)),
        )
    };
    if !cx.facts.is_value_type(src) || !cx.facts.is_value_type(dst) {
        p.push(bad("operand and result must be value types"));
        return;
    }
    if op != CastOp::Bitcast && count(cx, src) != count(cx, dst) {
        p.push(bad("element counts differ"));
        return;
    }
    let (sb, db) = (elem_bits(cx, src), elem_bits(cx, dst));
    let (si, di) = (elem_is_int(cx, src), elem_is_int(cx, dst));
    let problem = match op {
        CastOp::Trunc => (!(si && di && sb > db)).then_some("needs a wider integer source"),
        CastOp::ZExt | CastOp::SExt => {
            (!(si && di && sb < db)).then_some("needs a narrower integer source")
        }
        CastOp::FpTrunc => (!(elem_is(cx, src, &Type::Double) && elem_is(cx, dst, &Type::Float)))
            .then_some("needs double to float"),
        CastOp::FpExt => (!(elem_is(cx, src, &Type::Float) && elem_is(cx, dst, &Type::Double)))
            .then_some("needs float to double"),
        CastOp::FpToUi | CastOp::FpToSi => {
            (!(elem_is_float(cx, src) && di)).then_some("needs floating point to integer")
        }
        CastOp::UiToFp | CastOp::SiToFp => {
            (!(si && elem_is_float(cx, dst))).then_some("needs integer to floating point")
        }
        CastOp::Bitcast => {
            (cx.types().bit_size(src) != cx.types().bit_size(dst)).then_some("sizes differ")
        }
        // PNaCl bitcode has no pointer types (pointers are i32), so these never type-check.
        CastOp::PtrToInt | CastOp::IntToPtr => {
            Some("not allowed: PNaCl bitcode has no pointer types")
        }
    };
    if let Some(why) = problem {
        p.push(bad(why));
    }
}

/// Vector element indices must be i32 constants in range.
fn vector_index(cx: &FnCx<'_>, what: &str, vt: TypeId, index: ValueId, p: &mut Problems) {
    let Some(ti) = cx.ty(index) else {
        return;
    };
    if !is_i32(cx, ti) {
        p.push((
            Rule::Vector,
            format!("{what} index has type {}, not i32", cx.show(ti)),
        ));
        return;
    }
    let n = count(cx, vt);
    match cx.const_int(index) {
        None => p.push((Rule::Vector, format!("{what} index must be a constant"))),
        Some(k) if k >= n as u64 => p.push((
            Rule::Vector,
            format!("{what} index {k} is out of range for {}", cx.show(vt)),
        )),
        Some(_) => {}
    }
}

fn extract(cx: &FnCx<'_>, inst: &Inst, vec: ValueId, index: ValueId, p: &mut Problems) {
    let Some(tv) = cx.ty(vec) else {
        return;
    };
    if !cx.types().is_vector(tv) {
        p.push((
            Rule::Vector,
            format!("extractelement from non-vector {}", cx.show(tv)),
        ));
        return;
    }
    if inst.ty != cx.types().element(tv) {
        p.push((
            Rule::Vector,
            format!(
                "extractelement from {} has result type {}",
                cx.show(tv),
                cx.show(inst.ty)
            ),
        ));
    }
    vector_index(cx, "extractelement", tv, index, p);
}

fn insert(
    cx: &FnCx<'_>,
    inst: &Inst,
    vec: ValueId,
    elt: ValueId,
    index: ValueId,
    p: &mut Problems,
) {
    let (Some(tv), Some(te)) = (cx.ty(vec), cx.ty(elt)) else {
        return;
    };
    if !cx.types().is_vector(tv) {
        p.push((
            Rule::Vector,
            format!("insertelement into non-vector {}", cx.show(tv)),
        ));
        return;
    }
    if te != cx.types().element(tv) {
        p.push((
            Rule::Vector,
            format!("insertelement of {} into {}", cx.show(te), cx.show(tv)),
        ));
    }
    if inst.ty != tv {
        p.push((
            Rule::Vector,
            format!(
                "insertelement into {} has result type {}",
                cx.show(tv),
                cx.show(inst.ty)
            ),
        ));
    }
    vector_index(cx, "insertelement", tv, index, p);
}

fn ret(cx: &FnCx<'_>, val: Option<ValueId>, p: &mut Problems) {
    let void = cx.types().is_void(cx.ret);
    match val {
        None if !void => p.push((
            Rule::Return,
            format!("ret void in a function returning {}", cx.show(cx.ret)),
        )),
        Some(_) if void => p.push((
            Rule::Return,
            "ret with a value in a function returning void".into(),
        )),
        Some(v) => {
            if let Some(t) = cx.ty(v) {
                if t != cx.ret {
                    p.push((
                        Rule::Return,
                        format!(
                            "ret {} in a function returning {}",
                            cx.show(t),
                            cx.show(cx.ret)
                        ),
                    ));
                }
            }
        }
        None => {}
    }
}

fn cond_br(cx: &FnCx<'_>, cond: ValueId, p: &mut Problems) {
    if let Some(t) = cx.ty(cond) {
        if cx.types().get(t) != Some(&Type::Int(1)) {
            p.push((
                Rule::Branch,
                format!("branch condition has type {}, not i1", cx.show(t)),
            ));
        }
    }
}

fn switch(cx: &FnCx<'_>, s: &Switch, p: &mut Problems) {
    let Some(t) = cx.ty(s.cond) else {
        return;
    };
    let w = match cx.types().get(t) {
        Some(Type::Int(1)) => {
            p.push((Rule::Switch, "switch on i1 is not allowed".into()));
            return;
        }
        Some(Type::Int(w)) => *w,
        _ => {
            p.push((
                Rule::Switch,
                format!("switch on {}, not an integer", cx.show(t)),
            ));
            return;
        }
    };
    let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    let mut seen = std::collections::HashSet::new();
    for c in &s.cases {
        let v = c.value as u64;
        let t = v & mask;
        // Stored sign-extended; accept the sign- or zero-extension of a w-bit value.
        let sext = if w >= 64 {
            t
        } else {
            (((t << (64 - w)) as i64) >> (64 - w)) as u64
        };
        if v != t && v != sext {
            p.push((
                Rule::Switch,
                format!("case value {} does not fit i{w}", c.value),
            ));
        } else if !seen.insert(t) {
            p.push((Rule::Switch, format!("duplicate case value {}", c.value)));
        }
    }
}

/// A [`Span`] that does not lie within its pool (the decoder never makes one; a body built
/// by hand can).
fn span_outside(what: &str, s: Span) -> String {
    format!(
        "{what} (entries {} to {}) lies outside the body's pool",
        s.start,
        s.start as u64 + s.len as u64
    )
}

fn phi_types(cx: &FnCx<'_>, inst: &Inst, incoming: &[(ValueId, BlockId)], p: &mut Problems) {
    for (v, _) in incoming {
        if let Some(t) = cx.ty(*v) {
            if t != inst.ty {
                p.push((
                    Rule::Phi,
                    format!(
                        "phi of type {} has an incoming value of type {}",
                        cx.show(inst.ty),
                        cx.show(t)
                    ),
                ));
            }
        }
    }
}

fn is_i32(cx: &FnCx<'_>, t: TypeId) -> bool {
    cx.facts.is_i32(t)
}

fn alloca(cx: &FnCx<'_>, inst: &Inst, size: ValueId, align: Align, p: &mut Problems) {
    if let Some(t) = cx.ty(size) {
        if !is_i32(cx, t) {
            p.push((
                Rule::Alloca,
                format!("alloca size has type {}, not i32", cx.show(t)),
            ));
        }
    }
    if !is_i32(cx, inst.ty) {
        p.push((
            Rule::Alloca,
            format!("alloca result has type {}, not i32", cx.show(inst.ty)),
        ));
    }
    if align.0 > MAX_ALIGN_CODE {
        p.push((
            Rule::Alignment,
            format!("alloca alignment 2^{} exceeds 2^29", align.0 - 1),
        ));
    }
}

/// The load/store alignment table ([`types::allowed_alignment`]).
pub(super) fn allowed_alignment(cx: &FnCx<'_>, t: TypeId, align: Align) -> bool {
    types::allowed_alignment(cx.types(), t, align)
}

/// Shared load/store rules for the pointer and the accessed type.
fn access(cx: &FnCx<'_>, what: &str, ptr: ValueId, t: TypeId, align: Align, p: &mut Problems) {
    if let Some(tp) = cx.ty(ptr) {
        if !is_i32(cx, tp) {
            p.push((
                Rule::Memory,
                format!("{what} address has type {}, not i32", cx.show(tp)),
            ));
        }
    }
    if !cx.facts.is_value_type(t) {
        p.push((
            Rule::Memory,
            format!("{what} of {} is not allowed", cx.show(t)),
        ));
        return;
    }
    if cx.facts.is_bool_like(t) {
        p.push((
            Rule::Memory,
            format!("{what} of {} is not allowed", cx.show(t)),
        ));
        return;
    }
    if !allowed_alignment(cx, t, align) {
        p.push((
            Rule::Alignment,
            format!(
                "{what} of {} with align {} is not allowed (integers: 1, float: 1 or 4, \
                 double: 1 or 8, vectors: the element size)",
                cx.show(t),
                align.display_bytes()
            ),
        ));
    }
}

fn load(cx: &FnCx<'_>, inst: &Inst, ptr: ValueId, align: Align, p: &mut Problems) {
    access(cx, "load", ptr, inst.ty, align, p);
}

fn store(cx: &FnCx<'_>, ptr: ValueId, val: ValueId, align: Align, p: &mut Problems) {
    if let Some(t) = cx.ty(val) {
        access(cx, "store", ptr, t, align, p);
    }
}

fn cmp(cx: &FnCx<'_>, inst: &Inst, pred: CmpPred, lhs: ValueId, rhs: ValueId, p: &mut Problems) {
    let (Some(tl), Some(tr)) = (cx.ty(lhs), cx.ty(rhs)) else {
        return;
    };
    let what = if pred.is_float() { "fcmp" } else { "icmp" };
    if tl != tr {
        p.push((
            Rule::Compare,
            format!(
                "{what} of {} and {}: operand types differ",
                cx.show(tl),
                cx.show(tr)
            ),
        ));
        return;
    }
    let ok = if pred.is_float() {
        elem_is_float(cx, tl)
    } else {
        elem_is_int(cx, tl)
    };
    if !ok {
        p.push((
            Rule::Compare,
            format!("{what} {} on {}", pred.name(), cx.show(tl)),
        ));
    }
    // The result is i1, or <N x i1> for N-element vectors.
    if !(cx.facts.is_bool_like(inst.ty) && count(cx, inst.ty) == count(cx, tl)) {
        p.push((
            Rule::Compare,
            format!(
                "{what} of {} has result type {}",
                cx.show(tl),
                cx.show(inst.ty)
            ),
        ));
    }
}

fn select(cx: &FnCx<'_>, inst: &Inst, cond: ValueId, t: ValueId, f: ValueId, p: &mut Problems) {
    let (Some(tc), Some(tt), Some(tf)) = (cx.ty(cond), cx.ty(t), cx.ty(f)) else {
        return;
    };
    if tt != tf || inst.ty != tt {
        p.push((
            Rule::Select,
            format!(
                "select between {} and {} with result {}",
                cx.show(tt),
                cx.show(tf),
                cx.show(inst.ty)
            ),
        ));
    }
    // LLVM also allows a scalar i1 condition for vector values; the manual requires the
    // counts to match (UnderlyingCount(C) == UnderlyingCount(T)).
    let cond_ok = cx.facts.is_bool_like(tc) && count(cx, tc) == count(cx, tt);
    if !cond_ok {
        p.push((
            Rule::Select,
            format!(
                "select condition of type {} for values of type {}",
                cx.show(tc),
                cx.show(tt)
            ),
        ));
    }
}

fn call(cx: &FnCx<'_>, inst: &Inst, c: &Call, p: &mut Problems) {
    if c.cc_info >> 1 != 0 {
        p.push((
            Rule::CallingConv,
            format!(
                "call with calling convention {} (only 0, the C convention)",
                c.cc_info >> 1
            ),
        ));
    }
    let args = cx.f.args(c);
    if args.len() != c.args.len as usize {
        p.push((Rule::Call, span_outside("call's argument list", c.args)));
    }
    let arg_tys = args.iter().map(|a| cx.ty(*a));
    let ret = match c.callee {
        Callee::Direct(func) => {
            let Some(d) = cx.m.functions.get(func.index()) else {
                p.push((Rule::Call, format!("callee @f{func} is not a function")));
                return;
            };
            let Some(ft) = cx.types().function(d.ty) else {
                return; // Reported at the declaration.
            };
            if ft.params.len() != args.len() {
                p.push((
                    Rule::Call,
                    format!(
                        "call to @f{func} passes {} arguments, it takes {}",
                        args.len(),
                        ft.params.len()
                    ),
                ));
                return;
            }
            for (k, (at, pt)) in arg_tys.zip(&ft.params).enumerate() {
                if let Some(at) = at {
                    if at != *pt {
                        p.push((
                            Rule::Call,
                            format!(
                                "argument {k} of the call to @f{func} has type {}, expected {}",
                                cx.show(at),
                                cx.show(*pt)
                            ),
                        ));
                    }
                }
            }
            if let Some(intr) = cx.intrinsic_of(func) {
                intrinsics::check_call(cx, intr, args, p);
            }
            ft.ret
        }
        Callee::Indirect(v) => {
            if let Some(t) = cx.ty(v) {
                if !is_i32(cx, t) {
                    p.push((
                        Rule::Call,
                        format!("indirect callee has type {}, not i32", cx.show(t)),
                    ));
                }
            }
            // Indirect calls reach ordinary functions only: IsFcnArgType applies.
            for (k, at) in arg_tys.enumerate() {
                if let Some(at) = at {
                    if !is_param_type(cx.types(), at) {
                        p.push((
                            Rule::Call,
                            format!(
                                "indirect call argument {k} has type {}, not allowed \
                                 (only i32, i64, float, double, vectors)",
                                cx.show(at)
                            ),
                        ));
                    }
                }
            }
            if !is_return_type(cx.types(), inst.ty) {
                p.push((
                    Rule::Call,
                    format!(
                        "indirect call returns {}, not allowed (only void, i32, i64, float, \
                         double, vectors)",
                        cx.show(inst.ty)
                    ),
                ));
            }
            inst.ty
        }
    };
    let void = cx.types().is_void(ret);
    match inst.result() {
        Some(_) if void => p.push((Rule::Call, "call of a void function has a result".into())),
        None if !void => p.push((
            Rule::Call,
            format!("call returning {} has no result", cx.show(ret)),
        )),
        Some(_) if inst.ty != ret => p.push((
            Rule::Call,
            format!(
                "call returning {} has result type {}",
                cx.show(ret),
                cx.show(inst.ty)
            ),
        )),
        _ => {}
    }
}
