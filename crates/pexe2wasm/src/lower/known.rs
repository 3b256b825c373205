//! Known zero bits of an integer value, asked for where a cheaper lowering depends on
//! them (`sdiv`/`srem` by a power of two: `inst.rs`'s `binop`).
//!
//! Pexes carry no `nsw`/`nuw` flags, so arithmetic wraps and a product or sum is never
//! known non-negative from its operands' signs; what survives wrapping is the low bits
//! (a product's trailing zeros, `x * (x + 1)` even), the high bits of a `zext`, `lshr`
//! or `and`, and the bits of constants. Computed on demand from the operands' definitions,
//! to a small depth, without phis (so no cycles): the few divisions that ask pay for it.

use super::inst::FnLower;
use crate::ir::{BinOp, CastOp, InstKind, ValueId};

/// How many definitions deep the walk goes.
const DEPTH: u32 = 4;

/// The mask of the low `n` bits (all 64 for n >= 64).
fn low(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

impl FnLower<'_, '_> {
    /// The bits of `v` (an integer of `bits` bits) known to be zero, as a mask of the low
    /// `bits` bits.
    pub fn known_zero(&self, v: ValueId, bits: u32) -> u64 {
        self.known_zero_at(v, bits, DEPTH)
    }

    fn known_zero_at(&self, v: ValueId, bits: u32, depth: u32) -> u64 {
        let w = low(bits);
        if let Some(c) = self.const_int(v) {
            return !c & w;
        }
        let Some(d) = self.def_of(v).filter(|_| depth > 0) else {
            return 0;
        };
        let kz = |x: ValueId| self.known_zero_at(x, bits, depth - 1);
        // The bits of a shift's constant amount, if it is below the width.
        let amount = |x: ValueId| self.const_int(x).filter(|&c| c < bits as u64);
        // The low bits known zero in both (an add's or sub's low bits come from theirs).
        let trailing = |a: u64| a.trailing_ones();
        let k = match self.f.insts.get(d).map(|i| &i.kind) {
            Some(&InstKind::Binop { op, lhs, rhs, .. }) => match op {
                BinOp::And => kz(lhs) | kz(rhs),
                BinOp::Or | BinOp::Xor => kz(lhs) & kz(rhs),
                BinOp::Add | BinOp::Sub => low(trailing(kz(lhs)).min(trailing(kz(rhs)))),
                BinOp::Mul => {
                    let tz = trailing(kz(lhs)) + trailing(kz(rhs));
                    // One of `x` and `x ± odd` is even, wrapped or not.
                    let even = self.odd_apart(lhs, rhs) || self.odd_apart(rhs, lhs);
                    low(tz.max(even as u32))
                }
                BinOp::Shl => match amount(rhs) {
                    Some(c) => (kz(lhs) << c) | low(c as u32),
                    None => 0,
                },
                BinOp::LShr => match amount(rhs) {
                    Some(c) => ((kz(lhs) & w) >> c) | (w & !(w >> c)),
                    None => 0,
                },
                BinOp::AShr => match amount(rhs) {
                    Some(c) => {
                        let a = kz(lhs) & w;
                        let sign = a >> (bits - 1) & 1 == 1;
                        (a >> c) | if sign { w & !(w >> c) } else { 0 }
                    }
                    None => 0,
                },
                _ => 0,
            },
            Some(&InstKind::Cast { op, val }) => {
                let from = self.ty(val).ok().and_then(|t| self.cx.scalar(t));
                match (op, from) {
                    // The low bits of the wider value, its own width for its shifts.
                    (CastOp::Trunc, Some(s)) if s.is_int() && s.bits() > bits => {
                        self.known_zero_at(val, s.bits(), depth - 1)
                    }
                    (CastOp::ZExt, Some(s)) if s.is_int() && s.bits() < bits => {
                        (self.known_zero_at(val, s.bits(), depth - 1) & low(s.bits()))
                            | (w & !low(s.bits()))
                    }
                    (CastOp::SExt, Some(s)) if s.is_int() && s.bits() < bits => {
                        let a = self.known_zero_at(val, s.bits(), depth - 1) & low(s.bits());
                        let sign = a >> (s.bits() - 1) & 1 == 1;
                        a | if sign { w & !low(s.bits()) } else { 0 }
                    }
                    _ => 0,
                }
            }
            Some(&InstKind::Select { t, f, .. }) => kz(t) & kz(f),
            _ => 0,
        };
        k & w
    }

    /// Whether `b` is `a + C` or `a - C` with C odd.
    fn odd_apart(&self, a: ValueId, b: ValueId) -> bool {
        let Some(d) = self.def_of(b) else {
            return false;
        };
        let odd = |c: ValueId| self.const_int(c).is_some_and(|c| c & 1 == 1);
        match self.f.insts.get(d).map(|i| &i.kind) {
            Some(&InstKind::Binop {
                op: BinOp::Add,
                lhs,
                rhs,
                ..
            }) => (lhs == a && odd(rhs)) || (rhs == a && odd(lhs)),
            Some(&InstKind::Binop {
                op: BinOp::Sub,
                lhs,
                rhs,
                ..
            }) => lhs == a && odd(rhs),
            _ => false,
        }
    }
}
