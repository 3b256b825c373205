//! Intrinsic calls. Operands are pushed in the order `stackify::push_order` lists them.
//!
//! Atomics: without threads the memory is not shared and nothing runs concurrently, so
//! they are plain loads, stores and read-modify-write sequences; with `threads` they are
//! wasm atomic instructions (every PNaCl memory order maps to wasm's seq-cst).
//! setjmp/longjmp are in `sjlj.rs`.

use wasm_encoder::{MemArg, Ordering};

use super::inst::{memarg, FnLower, R};
use crate::ir::intrinsics::atomic_rmw;
use crate::ir::{Intrinsic, Scalar, TypeId, ValueId};

impl FnLower<'_, '_> {
    fn arg(&self, idx: usize, args: &[ValueId], i: usize) -> R<ValueId> {
        args.get(i)
            .copied()
            .ok_or_else(|| self.err_at(idx, "intrinsic call has too few arguments"))
    }

    pub fn intrinsic(
        &mut self,
        idx: usize,
        i: Intrinsic,
        args: &[ValueId],
        _ty: TypeId,
    ) -> R<bool> {
        use Intrinsic::*;
        let a = |k: usize| self.arg(idx, args, k);
        match i {
            Memcpy | Memmove | Memset => {
                let (d, s, n) = (a(0)?, a(1)?, a(2)?);
                self.push(d)?;
                self.push(s)?;
                self.push(n)?;
                self.used.bulk_memory = true;
                if i == Memset {
                    self.sink().memory_fill(0);
                } else {
                    self.sink().memory_copy(0, 0);
                }
                Ok(true)
            }
            Bswap(s) => {
                let x = a(0)?;
                self.push(x)?;
                match s {
                    Scalar::I16 => {
                        let t = self.a.locals.s_i32;
                        self.sink()
                            .local_tee(t)
                            .i32_const(8)
                            .i32_shl()
                            .i32_const(0xff00)
                            .i32_and()
                            .local_get(t)
                            .i32_const(8)
                            .i32_shr_u()
                            .i32_const(0xff)
                            .i32_and()
                            .i32_or();
                    }
                    Scalar::I32 => {
                        let t = self.a.locals.s_i32;
                        self.sink()
                            .local_tee(t)
                            .i32_const(8)
                            .i32_rotl()
                            .i32_const(0x00ff_00ff)
                            .i32_and()
                            .local_get(t)
                            .i32_const(8)
                            .i32_rotr()
                            .i32_const(0xff00_ff00u32 as i32)
                            .i32_and()
                            .i32_or();
                    }
                    Scalar::I64 => {
                        let t = self.a.locals.s_i64;
                        let m1 = 0x00ff_00ff_00ff_00ffi64;
                        let m2 = 0x0000_ffff_0000_ffffi64;
                        self.sink()
                            .local_tee(t)
                            .i64_const(8)
                            .i64_shr_u()
                            .i64_const(m1)
                            .i64_and()
                            .local_get(t)
                            .i64_const(m1)
                            .i64_and()
                            .i64_const(8)
                            .i64_shl()
                            .i64_or()
                            .local_tee(t)
                            .i64_const(16)
                            .i64_shr_u()
                            .i64_const(m2)
                            .i64_and()
                            .local_get(t)
                            .i64_const(m2)
                            .i64_and()
                            .i64_const(16)
                            .i64_shl()
                            .i64_or()
                            .i64_const(32)
                            .i64_rotl();
                    }
                    _ => return Err(self.unsupported(idx, "bswap of this width")),
                }
                Ok(true)
            }
            Ctlz(s) | Cttz(s) | Ctpop(s) => {
                self.push(a(0)?)?;
                let mut k = self.sink();
                match (i, s == Scalar::I64) {
                    (Ctlz(_), false) => k.i32_clz(),
                    (Ctlz(_), true) => k.i64_clz(),
                    (Cttz(_), false) => k.i32_ctz(),
                    (Cttz(_), true) => k.i64_ctz(),
                    (_, false) => k.i32_popcnt(),
                    (_, true) => k.i64_popcnt(),
                };
                Ok(true)
            }
            Fabs(_, true) => self.simd_fabs(a(0)?),
            Fabs(s, false) | Sqrt(s) => {
                self.push(a(0)?)?;
                let mut k = self.sink();
                match (i, s == Scalar::F32) {
                    (Fabs(..), true) => k.f32_abs(),
                    (Fabs(..), false) => k.f64_abs(),
                    (_, true) => k.f32_sqrt(),
                    (_, false) => k.f64_sqrt(),
                };
                Ok(true)
            }
            Stacksave => {
                let sp = self.cx.stack_pointer;
                self.sink().global_get(sp);
                Ok(true)
            }
            Stackrestore => {
                self.push(a(0)?)?;
                let sp = self.cx.stack_pointer;
                self.sink().global_set(sp);
                Ok(true)
            }
            Trap => {
                self.sink().unreachable();
                Ok(true)
            }
            NaclReadTp => {
                let tp = self.cx.thread_pointer;
                self.sink().global_get(tp);
                Ok(true)
            }
            NaclSetjmp => self.setjmp(idx, a(0)?),
            NaclLongjmp => {
                let (buf, val) = (a(0)?, a(1)?);
                self.longjmp(idx, buf, val)
            }
            AtomicLoad(s) => {
                self.push(a(0)?)?;
                let ma = natural(s);
                let threads = self.cx.threads;
                self.used.threads |= threads;
                let mut k = self.sink();
                match (s, threads) {
                    (Scalar::I8, false) => k.i32_load8_u(ma),
                    (Scalar::I16, false) => k.i32_load16_u(ma),
                    (Scalar::I64, false) => k.i64_load(ma),
                    (_, false) => k.i32_load(ma),
                    (Scalar::I8, true) => k.i32_atomic_load8_u(ma),
                    (Scalar::I16, true) => k.i32_atomic_load16_u(ma),
                    (Scalar::I64, true) => k.i64_atomic_load(ma),
                    (_, true) => k.i32_atomic_load(ma),
                };
                Ok(true)
            }
            AtomicStore(s) => {
                let (v, p) = (a(0)?, a(1)?);
                self.push(p)?;
                self.push(v)?;
                let ma = natural(s);
                let threads = self.cx.threads;
                self.used.threads |= threads;
                let mut k = self.sink();
                match (s, threads) {
                    (Scalar::I8, false) => k.i32_store8(ma),
                    (Scalar::I16, false) => k.i32_store16(ma),
                    (Scalar::I64, false) => k.i64_store(ma),
                    (_, false) => k.i32_store(ma),
                    (Scalar::I8, true) => k.i32_atomic_store8(ma),
                    (Scalar::I16, true) => k.i32_atomic_store16(ma),
                    (Scalar::I64, true) => k.i64_atomic_store(ma),
                    (_, true) => k.i32_atomic_store(ma),
                };
                Ok(true)
            }
            AtomicRmw(s) => {
                let op = self
                    .const_int(a(0)?)
                    .ok_or_else(|| self.unsupported(idx, "atomic rmw with a non-constant op"))?;
                if !(atomic_rmw::ADD..=atomic_rmw::XCHG).contains(&op) {
                    return Err(self.err_at(idx, format!("invalid atomic rmw operation {op}")));
                }
                let (p, v) = (a(1)?, a(2)?);
                self.push(p)?;
                self.push(v)?;
                if self.cx.threads {
                    self.used.threads = true;
                    self.atomic_rmw(op, s);
                } else {
                    self.plain_rmw(op, s);
                }
                Ok(true)
            }
            AtomicCmpxchg(s) => {
                let (p, e, d) = (a(0)?, a(1)?, a(2)?);
                self.push(p)?;
                let ce = self.push(e)?;
                if s.bits() < 32 {
                    self.zext(s.bits(), ce);
                }
                self.push(d)?;
                let ma = natural(s);
                if self.cx.threads {
                    self.used.threads = true;
                    let mut k = self.sink();
                    match s {
                        Scalar::I8 => k.i32_atomic_rmw8_cmpxchg_u(ma),
                        Scalar::I16 => k.i32_atomic_rmw16_cmpxchg_u(ma),
                        Scalar::I64 => k.i64_atomic_rmw_cmpxchg(ma),
                        _ => k.i32_atomic_rmw_cmpxchg(ma),
                    };
                    return Ok(true);
                }
                let is64 = s == Scalar::I64;
                let sa = self.a.locals.s_i32;
                let (sd, se, old) = if is64 {
                    (
                        self.a.locals.s_i64,
                        self.a.locals.s_i64 + 1,
                        self.a.locals.s_i64 + 2,
                    )
                } else {
                    (
                        self.a.locals.s_i32 + 1,
                        self.a.locals.s_i32 + 2,
                        self.a.locals.s_i32 + 3,
                    )
                };
                let mut k = self.sink();
                k.local_set(sd).local_set(se).local_set(sa).local_get(sa);
                load(&mut k, s, ma);
                k.local_tee(old).local_get(se);
                if is64 {
                    k.i64_eq();
                } else {
                    k.i32_eq();
                }
                k.if_(wasm_encoder::BlockType::Empty)
                    .local_get(sa)
                    .local_get(sd);
                store(&mut k, s, ma);
                k.end().local_get(old);
                Ok(true)
            }
            AtomicFence | AtomicFenceAll => {
                if self.cx.threads {
                    self.used.threads = true;
                    self.sink().atomic_fence(Ordering::SeqCst);
                }
                Ok(true)
            }
            AtomicIsLockFree => {
                // Every size up to 8 bytes is lock free in wasm.
                self.push(a(0)?)?;
                self.sink().i32_const(9).i32_lt_u();
                Ok(true)
            }
        }
    }

    fn atomic_rmw(&mut self, op: u64, s: Scalar) {
        let ma = natural(s);
        let mut k = self.sink();
        use atomic_rmw::*;
        macro_rules! pick {
            ($b8:ident, $b16:ident, $b32:ident, $b64:ident) => {
                match s {
                    Scalar::I8 => k.$b8(ma),
                    Scalar::I16 => k.$b16(ma),
                    Scalar::I64 => k.$b64(ma),
                    _ => k.$b32(ma),
                }
            };
        }
        match op {
            ADD => pick!(
                i32_atomic_rmw8_add_u,
                i32_atomic_rmw16_add_u,
                i32_atomic_rmw_add,
                i64_atomic_rmw_add
            ),
            SUB => pick!(
                i32_atomic_rmw8_sub_u,
                i32_atomic_rmw16_sub_u,
                i32_atomic_rmw_sub,
                i64_atomic_rmw_sub
            ),
            OR => pick!(
                i32_atomic_rmw8_or_u,
                i32_atomic_rmw16_or_u,
                i32_atomic_rmw_or,
                i64_atomic_rmw_or
            ),
            AND => pick!(
                i32_atomic_rmw8_and_u,
                i32_atomic_rmw16_and_u,
                i32_atomic_rmw_and,
                i64_atomic_rmw_and
            ),
            XOR => pick!(
                i32_atomic_rmw8_xor_u,
                i32_atomic_rmw16_xor_u,
                i32_atomic_rmw_xor,
                i64_atomic_rmw_xor
            ),
            _ => pick!(
                i32_atomic_rmw8_xchg_u,
                i32_atomic_rmw16_xchg_u,
                i32_atomic_rmw_xchg,
                i64_atomic_rmw_xchg
            ),
        };
    }

    /// `old = *p; *p = old OP v; old` without atomics (address and value on the stack).
    fn plain_rmw(&mut self, op: u64, s: Scalar) {
        let ma = natural(s);
        let is64 = s == Scalar::I64;
        let sa = self.a.locals.s_i32;
        let (sv, old) = if is64 {
            (self.a.locals.s_i64, self.a.locals.s_i64 + 1)
        } else {
            (self.a.locals.s_i32 + 1, self.a.locals.s_i32 + 2)
        };
        let mut k = self.sink();
        k.local_set(sv).local_set(sa).local_get(sa).local_get(sa);
        load(&mut k, s, ma);
        k.local_tee(old);
        use atomic_rmw::*;
        if op == XCHG {
            k.drop().local_get(sv);
        } else {
            k.local_get(sv);
            match (op, is64) {
                (ADD, false) => k.i32_add(),
                (SUB, false) => k.i32_sub(),
                (OR, false) => k.i32_or(),
                (AND, false) => k.i32_and(),
                (_, false) => k.i32_xor(),
                (ADD, true) => k.i64_add(),
                (SUB, true) => k.i64_sub(),
                (OR, true) => k.i64_or(),
                (AND, true) => k.i64_and(),
                (_, true) => k.i64_xor(),
            };
        }
        store(&mut k, s, ma);
        k.local_get(old);
    }
}

fn natural(s: Scalar) -> MemArg {
    memarg(0, None, s)
}

fn load(k: &mut super::sink::Sink<'_>, s: Scalar, ma: MemArg) {
    match s {
        Scalar::I1 | Scalar::I8 => k.i32_load8_u(ma),
        Scalar::I16 => k.i32_load16_u(ma),
        Scalar::I64 => k.i64_load(ma),
        _ => k.i32_load(ma),
    };
}

fn store(k: &mut super::sink::Sink<'_>, s: Scalar, ma: MemArg) {
    match s {
        Scalar::I1 | Scalar::I8 => k.i32_store8(ma),
        Scalar::I16 => k.i32_store16(ma),
        Scalar::I64 => k.i64_store(ma),
        _ => k.i32_store(ma),
    };
}
