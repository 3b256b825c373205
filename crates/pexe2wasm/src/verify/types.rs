//! Type rules: which integer widths, vector shapes and function types PNaCl allows, and the
//! check of the type table itself.

use super::{Context, Rule, Sink};
use crate::bitstream::Position;
use crate::ir::{Align, Module, Type, TypeId, TypeTable};

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

/// The load/store alignment table: integers `align 1`, float 1 or 4, double 1 or 8,
/// vectors exactly their element size. 0 (unspecified) is not allowed.
pub(super) fn allowed_alignment(types: &TypeTable, t: TypeId, align: Align) -> bool {
    let Some(bytes) = align.bytes() else {
        return false;
    };
    match types.get(t) {
        Some(Type::Vector { elem, .. }) => {
            types.get(*elem) != Some(&Type::Int(1))
                && bytes.checked_mul(8) == Some(types.bit_size(*elem) as u64)
        }
        Some(Type::Float) => bytes == 1 || bytes == 4,
        Some(Type::Double) => bytes == 1 || bytes == 8,
        _ => bytes == 1,
    }
}

/// Answers to the type questions the per-instruction rules ask for nearly every
/// instruction, computed once per module: one array lookup each instead of matches on the
/// type table (two for a vector's element). Ids outside the table answer false, as the
/// functions above do.
pub(super) struct TypeFacts {
    facts: Vec<Fact>,
}

/// What [`TypeFacts`] knows about one type.
#[derive(Clone, Copy, Default)]
struct Fact {
    flags: u16,
    /// Bit size of a scalar value type (0 for every other type).
    scalar_bits: u32,
    /// Bit `k` set: [`allowed_alignment`] accepts alignment code `k` (codes 0..32; larger
    /// codes are never answered from here).
    align_codes: u32,
}

impl TypeFacts {
    /// [`is_value_type`].
    pub(super) const VALUE: u16 = 1;
    /// The type is `i32`.
    pub(super) const I32: u16 = 2;
    /// [`is_bool_like`].
    pub(super) const BOOL_LIKE: u16 = 4;
    /// The type or its vector element is an integer.
    pub(super) const ELEM_INT: u16 = 8;
    /// The type or its vector element is float or double.
    pub(super) const ELEM_FLOAT: u16 = 16;
    /// The type is `i1` (scalar).
    pub(super) const I1: u16 = 32;
    /// The type is a vector.
    pub(super) const VECTOR: u16 = 64;
    /// The type is `float` (scalar).
    pub(super) const FLOAT: u16 = 128;
    /// The type is `double` (scalar).
    pub(super) const DOUBLE: u16 = 256;
    /// [`is_param_type`].
    pub(super) const PARAM: u16 = 512;

    pub(super) fn new(types: &TypeTable) -> TypeFacts {
        let facts = types
            .iter()
            .map(|(t, ty)| {
                let elem = types.get(types.element(t));
                let mut f = 0;
                if is_value_type(types, t) {
                    f |= Self::VALUE;
                }
                if *ty == Type::Int(32) {
                    f |= Self::I32;
                }
                if is_bool_like(types, t) {
                    f |= Self::BOOL_LIKE;
                }
                if matches!(elem, Some(Type::Int(_))) {
                    f |= Self::ELEM_INT;
                }
                if matches!(elem, Some(Type::Float | Type::Double)) {
                    f |= Self::ELEM_FLOAT;
                }
                if *ty == Type::Int(1) {
                    f |= Self::I1;
                }
                if matches!(ty, Type::Vector { .. }) {
                    f |= Self::VECTOR;
                }
                if *ty == Type::Float {
                    f |= Self::FLOAT;
                }
                if *ty == Type::Double {
                    f |= Self::DOUBLE;
                }
                if is_param_type(types, t) {
                    f |= Self::PARAM;
                }
                // Only for value types: their sizes are small (the table is sound, so
                // `bit_size` does not recurse deeper than one vector element).
                let value = f & Self::VALUE != 0;
                let align_codes = if value {
                    (0..32u32)
                        .filter(|&k| allowed_alignment(types, t, Align(k)))
                        .fold(0u32, |m, k| m | 1 << k)
                } else {
                    0
                };
                let scalar_bits = if value && f & Self::VECTOR == 0 {
                    types.bit_size(t)
                } else {
                    0
                };
                Fact {
                    flags: f,
                    scalar_bits,
                    align_codes,
                }
            })
            .collect();
        TypeFacts { facts }
    }

    /// All the flags of `t` (0 for an id outside the table), for tests of several.
    #[inline]
    pub(super) fn bits(&self, t: TypeId) -> u16 {
        self.facts.get(t.0 as usize).map_or(0, |f| f.flags)
    }

    #[inline]
    fn has(&self, t: TypeId, flag: u16) -> bool {
        self.facts
            .get(t.0 as usize)
            .is_some_and(|f| f.flags & flag != 0)
    }

    #[inline]
    pub(super) fn is_value_type(&self, t: TypeId) -> bool {
        self.has(t, Self::VALUE)
    }

    #[inline]
    pub(super) fn is_i32(&self, t: TypeId) -> bool {
        self.has(t, Self::I32)
    }

    #[inline]
    pub(super) fn is_bool_like(&self, t: TypeId) -> bool {
        self.has(t, Self::BOOL_LIKE)
    }

    #[inline]
    pub(super) fn elem_is_int(&self, t: TypeId) -> bool {
        self.has(t, Self::ELEM_INT)
    }

    #[inline]
    pub(super) fn elem_is_float(&self, t: TypeId) -> bool {
        self.has(t, Self::ELEM_FLOAT)
    }

    /// The type is the scalar `i1`.
    #[inline]
    pub(super) fn is_i1(&self, t: TypeId) -> bool {
        self.has(t, Self::I1)
    }

    /// The bit size of `t` if it is a scalar value type.
    #[inline]
    pub(super) fn scalar_bits(&self, t: TypeId) -> Option<u32> {
        self.facts
            .get(t.0 as usize)
            .and_then(|f| (f.scalar_bits != 0).then_some(f.scalar_bits))
    }

    #[inline]
    pub(super) fn is_float(&self, t: TypeId) -> bool {
        self.has(t, Self::FLOAT)
    }

    #[inline]
    pub(super) fn is_double(&self, t: TypeId) -> bool {
        self.has(t, Self::DOUBLE)
    }

    /// A load or store of a value type `t` that is not bool-like, with alignment `align`,
    /// passes every memory rule on the accessed type (false means "ask the full rules").
    #[inline]
    pub(super) fn plain_access(&self, t: TypeId, align: Align) -> bool {
        self.facts.get(t.0 as usize).is_some_and(|f| {
            f.flags & (Self::VALUE | Self::BOOL_LIKE) == Self::VALUE
                && align.0 < 32
                && f.align_codes & (1 << align.0) != 0
        })
    }
}
