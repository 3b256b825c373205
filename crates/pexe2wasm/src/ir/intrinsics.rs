//! The intrinsics PNaCl allows, resolved from declaration names, with the signature each
//! must have.

use super::types::{Scalar, Type, TypeId, TypeTable};

/// An allowed PNaCl intrinsic. Overloaded intrinsics carry their overload type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Intrinsic {
    Memcpy,
    Memmove,
    Memset,
    Bswap(Scalar),
    Ctlz(Scalar),
    Cttz(Scalar),
    Ctpop(Scalar),
    /// `llvm.fabs.f32`, `.f64`, or `.v4f32` (vector = true, scalar F32).
    Fabs(Scalar, bool),
    Sqrt(Scalar),
    Stacksave,
    Stackrestore,
    Trap,
    NaclReadTp,
    NaclSetjmp,
    NaclLongjmp,
    AtomicLoad(Scalar),
    AtomicStore(Scalar),
    AtomicRmw(Scalar),
    AtomicCmpxchg(Scalar),
    AtomicFence,
    AtomicFenceAll,
    AtomicIsLockFree,
}

/// A type in an intrinsic signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SigTy {
    Void,
    S(Scalar),
    V4F32,
}

fn int_suffix(s: &str) -> Option<Scalar> {
    Some(match s {
        "i8" => Scalar::I8,
        "i16" => Scalar::I16,
        "i32" => Scalar::I32,
        "i64" => Scalar::I64,
        _ => return None,
    })
}

impl Intrinsic {
    /// Resolves a declaration name. Returns `None` for names that are not allowed PNaCl
    /// intrinsics (including allowed intrinsics with a disallowed overload).
    pub fn from_name(name: &str) -> Option<Intrinsic> {
        use Intrinsic::*;
        use Scalar::*;
        Some(match name {
            "llvm.memcpy.p0i8.p0i8.i32" => Memcpy,
            "llvm.memmove.p0i8.p0i8.i32" => Memmove,
            "llvm.memset.p0i8.i32" => Memset,
            "llvm.bswap.i16" => Bswap(I16),
            "llvm.bswap.i32" => Bswap(I32),
            "llvm.bswap.i64" => Bswap(I64),
            "llvm.ctlz.i32" => Ctlz(I32),
            "llvm.ctlz.i64" => Ctlz(I64),
            "llvm.cttz.i32" => Cttz(I32),
            "llvm.cttz.i64" => Cttz(I64),
            "llvm.ctpop.i32" => Ctpop(I32),
            "llvm.ctpop.i64" => Ctpop(I64),
            "llvm.fabs.f32" => Fabs(F32, false),
            "llvm.fabs.f64" => Fabs(F64, false),
            "llvm.fabs.v4f32" => Fabs(F32, true),
            "llvm.sqrt.f32" => Sqrt(F32),
            "llvm.sqrt.f64" => Sqrt(F64),
            "llvm.stacksave" => Stacksave,
            "llvm.stackrestore" => Stackrestore,
            "llvm.trap" => Trap,
            "llvm.nacl.read.tp" => NaclReadTp,
            "llvm.nacl.setjmp" => NaclSetjmp,
            "llvm.nacl.longjmp" => NaclLongjmp,
            "llvm.nacl.atomic.fence" => AtomicFence,
            "llvm.nacl.atomic.fence.all" => AtomicFenceAll,
            "llvm.nacl.atomic.is.lock.free" => AtomicIsLockFree,
            _ => {
                let rest = name.strip_prefix("llvm.nacl.atomic.")?;
                let (op, ty) = rest.rsplit_once('.')?;
                let t = int_suffix(ty)?;
                match op {
                    "load" => AtomicLoad(t),
                    "store" => AtomicStore(t),
                    "rmw" => AtomicRmw(t),
                    "cmpxchg" => AtomicCmpxchg(t),
                    _ => return None,
                }
            }
        })
    }

    /// The (return, params) signature PNaCl requires.
    pub fn signature(self) -> (SigTy, Vec<SigTy>) {
        use Intrinsic::*;
        use Scalar::*;
        use SigTy::{Void, S};
        match self {
            Memcpy | Memmove => (Void, vec![S(I32), S(I32), S(I32), S(I32), S(I1)]),
            Memset => (Void, vec![S(I32), S(I8), S(I32), S(I32), S(I1)]),
            Bswap(t) | Ctpop(t) => (S(t), vec![S(t)]),
            Ctlz(t) | Cttz(t) => (S(t), vec![S(t), S(I1)]),
            Fabs(_, true) => (SigTy::V4F32, vec![SigTy::V4F32]),
            Fabs(t, false) | Sqrt(t) => (S(t), vec![S(t)]),
            Stacksave => (S(I32), vec![]),
            Stackrestore => (Void, vec![S(I32)]),
            Trap => (Void, vec![]),
            NaclReadTp => (S(I32), vec![]),
            NaclSetjmp => (S(I32), vec![S(I32)]),
            NaclLongjmp => (Void, vec![S(I32), S(I32)]),
            AtomicLoad(t) => (S(t), vec![S(I32), S(I32)]),
            AtomicStore(t) => (Void, vec![S(t), S(I32), S(I32)]),
            AtomicRmw(t) => (S(t), vec![S(I32), S(I32), S(t), S(I32)]),
            AtomicCmpxchg(t) => (S(t), vec![S(I32), S(t), S(t), S(I32), S(I32)]),
            AtomicFence => (Void, vec![S(I32)]),
            AtomicFenceAll => (Void, vec![]),
            AtomicIsLockFree => (S(I1), vec![S(I32), S(I32)]),
        }
    }

    /// True if `ty` (a function type) matches the required signature.
    pub fn matches(self, types: &TypeTable, ty: TypeId) -> bool {
        let Some(ft) = types.function(ty) else {
            return false;
        };
        if ft.vararg {
            return false;
        }
        let (ret, params) = self.signature();
        let ok = |want: SigTy, got: TypeId| -> bool {
            match (want, types.get(got)) {
                (SigTy::Void, Some(Type::Void)) => true,
                (SigTy::V4F32, Some(Type::Vector { len: 4, elem })) => {
                    types.get(*elem) == Some(&Type::Float)
                }
                (SigTy::S(s), Some(t)) => {
                    !matches!(t, Type::Vector { .. }) && types.scalar(got) == Some(s)
                }
                _ => false,
            }
        };
        ok(ret, ft.ret)
            && params.len() == ft.params.len()
            && params.iter().zip(&ft.params).all(|(w, g)| ok(*w, *g))
    }
}

/// Atomic read-modify-write operation codes (`llvm.nacl.atomic.rmw`'s first operand).
pub mod atomic_rmw {
    pub const ADD: u64 = 1;
    pub const SUB: u64 = 2;
    pub const OR: u64 = 3;
    pub const AND: u64 = 4;
    pub const XOR: u64 = 5;
    pub const XCHG: u64 = 6;
}

/// Memory order codes (NaClAtomicIntrinsics.h).
pub mod memory_order {
    pub const RELAXED: u64 = 1;
    pub const CONSUME: u64 = 2;
    pub const ACQUIRE: u64 = 3;
    pub const RELEASE: u64 = 4;
    pub const ACQ_REL: u64 = 5;
    pub const SEQ_CST: u64 = 6;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve() {
        assert_eq!(
            Intrinsic::from_name("llvm.nacl.atomic.rmw.i32"),
            Some(Intrinsic::AtomicRmw(Scalar::I32))
        );
        assert_eq!(
            Intrinsic::from_name("llvm.memcpy.p0i8.p0i8.i32"),
            Some(Intrinsic::Memcpy)
        );
        assert_eq!(Intrinsic::from_name("llvm.ctlz.i16"), None);
        assert_eq!(Intrinsic::from_name("llvm.nacl.atomic.rmw.i1"), None);
        assert_eq!(Intrinsic::from_name("printf"), None);
    }
}
