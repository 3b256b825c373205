//! The PNaCl type table.

use std::fmt;

entity! {
    /// Index into [`TypeTable`] (`@tN`).
    TypeId
}

impl TypeId {
    /// No type: the verifier's placeholder in its dense per-value type table for a value
    /// whose definition is broken (reported, never looked up in the table).
    pub const NONE: TypeId = TypeId(u32::MAX);
}

/// A PNaCl type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    Void,
    /// Integer of this many bits (1, 8, 16, 32 or 64 in valid bitcode).
    Int(u32),
    Float,
    Double,
    /// `<len x elem>`; `elem` is a scalar type.
    Vector {
        len: u32,
        elem: TypeId,
    },
    Function(FunctionType),
}

/// A function signature.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FunctionType {
    /// The vararg flag of the record (always false in valid PNaCl).
    pub vararg: bool,
    pub ret: TypeId,
    pub params: Vec<TypeId>,
}

/// Scalar kinds, the element types the lowering cares about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    I1,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

impl Scalar {
    /// The type as PNaClAsm spells it.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::I1 => "i1",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        }
    }

    pub fn bits(self) -> u32 {
        match self {
            Scalar::I1 => 1,
            Scalar::I8 => 8,
            Scalar::I16 => 16,
            Scalar::I32 | Scalar::F32 => 32,
            Scalar::I64 | Scalar::F64 => 64,
        }
    }
    pub fn is_int(self) -> bool {
        !matches!(self, Scalar::F32 | Scalar::F64)
    }
    pub fn is_float(self) -> bool {
        !self.is_int()
    }
}

/// The module's types. The first `num_declared` entries come from the types block, in
/// order; entries after them are types the decoder needed but the file did not declare
/// (e.g. the `i1` of a compare); the verifier reports those.
#[derive(Debug, Clone, Default)]
pub struct TypeTable {
    types: Vec<Type>,
    pub num_declared: u32,
}

impl TypeTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.types.len()
    }

    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    pub fn get(&self, id: TypeId) -> Option<&Type> {
        self.types.get(id.0 as usize)
    }

    /// The type with this id; panics on an id the decoder never handed out.
    pub fn ty(&self, id: TypeId) -> &Type {
        &self.types[id.0 as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = (TypeId, &Type)> {
        self.types
            .iter()
            .enumerate()
            .map(|(i, t)| (TypeId(i as u32), t))
    }

    /// Appends a declared type (from the types block).
    pub fn push_declared(&mut self, t: Type) -> TypeId {
        let id = TypeId(self.types.len() as u32);
        self.types.push(t);
        self.num_declared = self.types.len() as u32;
        id
    }

    /// Finds `t`, or appends it as an implied (undeclared) type.
    pub fn intern(&mut self, t: Type) -> TypeId {
        if let Some(i) = self.types.iter().position(|x| *x == t) {
            return TypeId(i as u32);
        }
        let id = TypeId(self.types.len() as u32);
        self.types.push(t);
        id
    }

    /// Finds `t` without adding it.
    pub fn find(&self, t: &Type) -> Option<TypeId> {
        self.types
            .iter()
            .position(|x| x == t)
            .map(|i| TypeId(i as u32))
    }

    /// The scalar kind of a scalar type, or of a vector's elements.
    pub fn scalar(&self, id: TypeId) -> Option<Scalar> {
        match self.get(id)? {
            Type::Int(1) => Some(Scalar::I1),
            Type::Int(8) => Some(Scalar::I8),
            Type::Int(16) => Some(Scalar::I16),
            Type::Int(32) => Some(Scalar::I32),
            Type::Int(64) => Some(Scalar::I64),
            Type::Float => Some(Scalar::F32),
            Type::Double => Some(Scalar::F64),
            Type::Vector { elem, .. } => self.scalar(*elem),
            _ => None,
        }
    }

    pub fn is_vector(&self, id: TypeId) -> bool {
        matches!(self.get(id), Some(Type::Vector { .. }))
    }

    /// Element count of a vector, 0 for anything else ("UnderlyingCount").
    pub fn vector_len(&self, id: TypeId) -> u32 {
        match self.get(id) {
            Some(Type::Vector { len, .. }) => *len,
            _ => 0,
        }
    }

    /// Element type of a vector; the type itself otherwise ("UnderlyingType").
    pub fn element(&self, id: TypeId) -> TypeId {
        match self.get(id) {
            Some(Type::Vector { elem, .. }) => *elem,
            _ => id,
        }
    }

    pub fn is_void(&self, id: TypeId) -> bool {
        matches!(self.get(id), Some(Type::Void))
    }

    pub fn function(&self, id: TypeId) -> Option<&FunctionType> {
        match self.get(id)? {
            Type::Function(f) => Some(f),
            _ => None,
        }
    }

    /// Size in bits ("BitSizeOf"); 0 for void and functions.
    pub fn bit_size(&self, id: TypeId) -> u32 {
        match self.get(id) {
            Some(Type::Int(b)) => *b,
            Some(Type::Float) => 32,
            Some(Type::Double) => 64,
            Some(Type::Vector { len, elem }) => len * self.bit_size(*elem),
            _ => 0,
        }
    }

    /// Displays a type in PNaClAsm syntax (`i32`, `<4 x float>`, `i32 (i32, double)`).
    pub fn display(&self, id: TypeId) -> TypeDisplay<'_> {
        TypeDisplay { table: self, id }
    }
}

/// Helper returned by [`TypeTable::display`].
pub struct TypeDisplay<'a> {
    table: &'a TypeTable,
    id: TypeId,
}

impl fmt::Display for TypeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.table.get(self.id) {
            None => write!(f, "@t{}", self.id.0),
            Some(Type::Void) => write!(f, "void"),
            Some(Type::Int(b)) => write!(f, "i{b}"),
            Some(Type::Float) => write!(f, "float"),
            Some(Type::Double) => write!(f, "double"),
            Some(Type::Vector { len, elem }) => {
                write!(f, "<{len} x {}>", self.table.display(*elem))
            }
            Some(Type::Function(ft)) => {
                write!(f, "{} (", self.table.display(ft.ret))?;
                for (i, p) in ft.params.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{}", self.table.display(*p))?;
                }
                if ft.vararg {
                    if !ft.params.is_empty() {
                        write!(f, ", ")?;
                    }
                    write!(f, "...")?;
                }
                write!(f, ")")
            }
        }
    }
}
