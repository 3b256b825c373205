//! Type rules: which integer widths, vector shapes and function types PNaCl allows, and the
//! check of the type table itself.

use super::{Context, Rule, Sink};
use crate::bitstream::Position;
use crate::ir::{Module, Type, TypeId, TypeTable};

/// Integer widths PNaCl allows anywhere.
pub fn is_valid_int_width(w: u32) -> bool {
    matches!(w, 1 | 8 | 16 | 32 | 64)
}

/// The allowed vector shapes: 128-bit vectors of i8/i16/i32/float, and i1 vectors with
/// the element counts of those (4, 8, 16).
pub fn is_valid_vector(types: &TypeTable, len: u32, elem: TypeId) -> bool {
    match types.get(elem) {
        Some(Type::Int(1)) => matches!(len, 4 | 8 | 16),
        Some(Type::Int(8)) => len == 16,
        Some(Type::Int(16)) => len == 8,
        Some(Type::Int(32)) => len == 4,
        Some(Type::Float) => len == 4,
        _ => false,
    }
}

/// A scalar type a value may have: i1, i8, i16, i32, i64, float, double.
pub fn is_scalar(types: &TypeTable, t: TypeId) -> bool {
    match types.get(t) {
        Some(Type::Int(w)) => is_valid_int_width(*w),
        Some(Type::Float | Type::Double) => true,
        _ => false,
    }
}

/// A type a value may have: a valid scalar or a valid vector.
pub fn is_value_type(types: &TypeTable, t: TypeId) -> bool {
    match types.get(t) {
        Some(Type::Vector { len, elem }) => is_valid_vector(types, *len, *elem),
        _ => is_scalar(types, t),
    }
}

/// `IsFcnArgType`: i32, i64, float, double or a valid vector. Narrower integers are not
/// allowed for ordinary functions (to avoid ABI-dependent extension).
pub fn is_param_type(types: &TypeTable, t: TypeId) -> bool {
    match types.get(t) {
        Some(Type::Int(w)) => matches!(w, 32 | 64),
        Some(Type::Float | Type::Double) => true,
        Some(Type::Vector { len, elem }) => is_valid_vector(types, *len, *elem),
        _ => false,
    }
}

/// A return type of an ordinary function: void or a parameter type.
pub fn is_return_type(types: &TypeTable, t: TypeId) -> bool {
    types.is_void(t) || is_param_type(types, t)
}

/// True for `i1` and vectors of `i1`.
pub fn is_bool_like(types: &TypeTable, t: TypeId) -> bool {
    types.get(types.element(t)) == Some(&Type::Int(1))
}

/// Why a type table entry is not a PNaCl type, if it is not.
fn type_problem(types: &TypeTable, id: TypeId) -> Option<String> {
    let show = |t: TypeId| types.display(t).to_string();
    match types.get(id)? {
        Type::Void | Type::Float | Type::Double => None,
        Type::Int(w) => (!is_valid_int_width(*w))
            .then(|| format!("integer type i{w} is not allowed (only i1, i8, i16, i32, i64)")),
        Type::Vector { len, elem } => (!is_valid_vector(types, *len, *elem)).then(|| {
            format!(
                "vector type <{len} x {}> is not allowed (only <16 x i8>, <8 x i16>, \
                 <4 x i32>, <4 x float> and <4|8|16 x i1>)",
                show(*elem)
            )
        }),
        Type::Function(ft) => {
            if ft.vararg {
                return Some(format!("function type {} is vararg", show(id)));
            }
            if !(types.is_void(ft.ret) || is_value_type(types, ft.ret)) {
                return Some(format!(
                    "function type {} returns {}, which is not a value type",
                    show(id),
                    show(ft.ret)
                ));
            }
            ft.params
                .iter()
                .find(|p| !is_value_type(types, **p))
                .map(|p| {
                    format!(
                        "function type {} has a parameter of type {}",
                        show(id),
                        show(*p)
                    )
                })
        }
    }
}

/// Composite types must be built from simpler ones: a vector's element is a scalar (or
/// at least not a vector or function), a function's members are not functions. The IR's
/// type helpers recurse through these links, so a table that breaks this (only possible
/// in hand-built IR) is reported and nothing else is checked.
pub(super) fn check_sound(m: &Module, out: &mut Sink) -> bool {
    let types = &m.types;
    let leaf = |t: TypeId, allow_vector: bool| match types.get(t) {
        None | Some(Type::Function(_)) => false,
        Some(Type::Vector { .. }) => allow_vector,
        Some(_) => true,
    };
    let mut sound = true;
    for (id, t) in types.iter() {
        let ok = match t {
            Type::Vector { elem, .. } => leaf(*elem, false),
            Type::Function(ft) => leaf(ft.ret, true) && ft.params.iter().all(|p| leaf(*p, true)),
            _ => true,
        };
        if !ok {
            sound = false;
            out.push(
                Rule::Type,
                Position::default(),
                Context::Type { index: id.0 },
                "composite type refers to a missing, vector-of-vector or function member type",
            );
        }
    }
    sound
}

/// Every entry of the type table must be a PNaCl type.
pub(super) fn check_type_table(m: &Module, out: &mut Sink) {
    for (id, _) in m.types.iter() {
        // The decoder appends types it needed but the types block lacked (the i1 of a
        // compare, say). Google's writer declares every type it uses; no real pexe lacks one.
        if id.0 >= m.types.num_declared {
            out.push(
                Rule::UndeclaredType,
                Position::default(),
                Context::Type { index: id.0 },
                format!(
                    "type {} is used but not declared in the types block",
                    m.types.display(id)
                ),
            );
        }
        if let Some(msg) = type_problem(&m.types, id) {
            out.push(
                Rule::Type,
                Position::default(),
                Context::Type { index: id.0 },
                msg,
            );
        }
    }
}
