//! PNaCl vectors on wasm SIMD128 (see docs/decisions/0004-simd-lowering.md).
//!
//! Every allowed vector type is one `v128`: `<16 x i8>` as i8x16, `<8 x i16>` as i16x8,
//! `<4 x i32>` as i32x4, `<4 x float>` as f32x4. A mask `<N x i1>` uses the lanes of the
//! N-lane integer shape, each all ones (true) or all zeros (false); every producer of a
//! mask (compares, `trunc` to i1 lanes, inserting an i1, bitcast from an integer) makes
//! that canonical form, so `select` is one `v128.bitselect` and `sext` is nothing.
//!
//! Operations with a SIMD128 instruction use it. Those without one are lowered per lane
//! on the wasm stack (the accumulating vector stays under the scalar work, each lane is
//! put back with `replace_lane`): integer division and remainder (so division by zero
//! traps as the scalar instructions do), `frem` (the runtime's fmodf), and shifts whose
//! amounts differ between lanes (a splat amount, checked at run time, uses the SIMD shift;
//! amounts are taken modulo the lane width, as wasm's shifts do).
//!
//! Scratch: two v128 locals (`s_v128`, `s_v128 + 1`), declared only in functions that
//! have vectors; an instruction writes them only after all its operands are pushed, so
//! operands emitted inline cannot clobber them.

use wasm_encoder::{BlockType, MemArg, ValType};

use super::inst::{FnLower, R};
use super::locals::Local;
use super::sink::Sink;
use crate::ir::{Align, BinOp, CastOp, CmpPred, Type, TypeId, ValueId};

/// v128 scratch locals per function that uses vectors.
pub(crate) const SCRATCH_V128: u32 = 2;

/// Lane shape of a vector's `v128`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lanes {
    I8,
    I16,
    I32,
    F32,
}

impl Lanes {
    fn count(self) -> u8 {
        match self {
            Lanes::I8 => 16,
            Lanes::I16 => 8,
            Lanes::I32 | Lanes::F32 => 4,
        }
    }
    fn bits(self) -> u32 {
        128 / self.count() as u32
    }
    /// Index into per-shape instruction tables `[i8x16, i16x8, i32x4]`.
    fn int(self) -> usize {
        match self {
            Lanes::I8 => 0,
            Lanes::I16 => 1,
            Lanes::I32 | Lanes::F32 => 2,
        }
    }
}

/// A vector type as lowered: its lanes and whether it is an `<N x i1>` mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub lanes: Lanes,
    pub mask: bool,
}

type Op = fn(&mut Sink<'_>, usize);
type LaneOp = fn(&mut Sink<'_>, usize, u8);

// One instruction per integer shape, chosen by `Lanes::int()` (0 i8x16, 1 i16x8, 2 i32x4).
macro_rules! by_shape {
    ($($name:ident: $a:ident, $b:ident, $c:ident;)*) => {$(
        fn $name(k: &mut Sink<'_>, i: usize) {
            match i {
                0 => k.$a(),
                1 => k.$b(),
                _ => k.$c(),
            };
        }
    )*};
}
macro_rules! by_shape_lane {
    ($($name:ident: $a:ident, $b:ident, $c:ident;)*) => {$(
        fn $name(k: &mut Sink<'_>, i: usize, lane: u8) {
            match i {
                0 => k.$a(lane),
                1 => k.$b(lane),
                _ => k.$c(lane),
            };
        }
    )*};
}
by_shape! {
    splat: i8x16_splat, i16x8_splat, i32x4_splat;
    eq: i8x16_eq, i16x8_eq, i32x4_eq;
    ne: i8x16_ne, i16x8_ne, i32x4_ne;
    neg: i8x16_neg, i16x8_neg, i32x4_neg;
    shl: i8x16_shl, i16x8_shl, i32x4_shl;
    shr_s: i8x16_shr_s, i16x8_shr_s, i32x4_shr_s;
    shr_u: i8x16_shr_u, i16x8_shr_u, i32x4_shr_u;
    all_true: i8x16_all_true, i16x8_all_true, i32x4_all_true;
}
by_shape_lane! {
    extract_s: i8x16_extract_lane_s, i16x8_extract_lane_s, i32x4_extract_lane;
    extract_u: i8x16_extract_lane_u, i16x8_extract_lane_u, i32x4_extract_lane;
    replace: i8x16_replace_lane, i16x8_replace_lane, i32x4_replace_lane;
}

/// Every lane of `lanes` holding its own index.
fn iota(lanes: Lanes) -> i128 {
    let n = lanes.count() as u32;
    let bits = lanes.bits();
    let mut v: u128 = 0;
    for i in 0..n {
        v |= (i as u128) << (i * bits);
    }
    v as i128
}

/// Lane i holding `1 << (i mod 8)`: the bit of the packed mask byte it stands for.
fn lane_bits(lanes: Lanes) -> i128 {
    let n = lanes.count() as u32;
    let bits = lanes.bits();
    let mut v: u128 = 0;
    for i in 0..n {
        v |= (1u128 << (i % 8)) << (i * bits);
    }
    v as i128
}

/// Shuffle indices taking byte `2 * i` of the 32 bytes of two vectors (the low byte of
/// each i16 lane): narrows two i16x8 to one i8x16 without saturating.
const EVEN_BYTES: [u8; 16] = [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30];

impl FnLower<'_, '_> {
    /// The lowered shape of vector type `t`.
    pub(crate) fn shape(&self, t: TypeId, idx: usize) -> R<Shape> {
        let types = &self.m.types;
        let len = types.vector_len(t);
        let elem = types.get(types.element(t));
        let (lanes, mask) = match (len, elem) {
            (16, Some(Type::Int(8))) => (Lanes::I8, false),
            (8, Some(Type::Int(16))) => (Lanes::I16, false),
            (4, Some(Type::Int(32))) => (Lanes::I32, false),
            (4, Some(Type::Float)) => (Lanes::F32, false),
            (16, Some(Type::Int(1))) => (Lanes::I8, true),
            (8, Some(Type::Int(1))) => (Lanes::I16, true),
            (4, Some(Type::Int(1))) => (Lanes::I32, true),
            _ => return Err(self.unsupported(idx, format!("vector type {:?}", types.get(t)))),
        };
        Ok(Shape { lanes, mask })
    }

    /// Pushes two operands and parks them in the v128 scratch locals (lhs, rhs).
    fn push_pair(&mut self, lhs: ValueId, rhs: ValueId) -> R<(Local, Local)> {
        self.push(lhs)?;
        self.push(rhs)?;
        let (a, b) = (self.a.locals.s_v128, self.a.locals.s_v128 + 1);
        self.sink().local_set(b).local_set(a);
        Ok((a, b))
    }

    pub(crate) fn simd_binop(
        &mut self,
        idx: usize,
        op: BinOp,
        lhs: ValueId,
        rhs: ValueId,
        ty: TypeId,
    ) -> R<bool> {
        let sh = self.shape(ty, idx)?;
        self.used.simd = true;
        use BinOp::*;
        if sh.lanes == Lanes::F32 {
            if op == FRem {
                return self.simd_frem(lhs, rhs);
            }
            self.push(lhs)?;
            self.push(rhs)?;
            let mut k = self.sink();
            match op {
                FAdd => k.f32x4_add(),
                FSub => k.f32x4_sub(),
                FMul => k.f32x4_mul(),
                FDiv => k.f32x4_div(),
                _ => return Err(self.err_at(idx, "integer operator on a float vector")),
            };
            return Ok(true);
        }
        let l = sh.lanes;
        let i = l.int();
        match op {
            And | Or | Xor => {
                self.push(lhs)?;
                self.push(rhs)?;
                let mut k = self.sink();
                match op {
                    And => k.v128_and(),
                    Or => k.v128_or(),
                    _ => k.v128_xor(),
                };
            }
            Add | Sub => {
                self.push(lhs)?;
                self.push(rhs)?;
                let mut k = self.sink();
                match (op, l) {
                    (Add, Lanes::I8) => k.i8x16_add(),
                    (Add, Lanes::I16) => k.i16x8_add(),
                    (Add, _) => k.i32x4_add(),
                    (_, Lanes::I8) => k.i8x16_sub(),
                    (_, Lanes::I16) => k.i16x8_sub(),
                    _ => k.i32x4_sub(),
                };
            }
            Mul => match l {
                Lanes::I16 | Lanes::I32 => {
                    self.push(lhs)?;
                    self.push(rhs)?;
                    if l == Lanes::I16 {
                        self.sink().i16x8_mul();
                    } else {
                        self.sink().i32x4_mul();
                    }
                }
                _ => {
                    // No i8x16.mul: 16-bit products of both halves, low bytes kept.
                    let (a, b) = self.push_pair(lhs, rhs)?;
                    self.sink()
                        .local_get(a)
                        .local_get(b)
                        .i16x8_extmul_low_i8x16_u()
                        .local_get(a)
                        .local_get(b)
                        .i16x8_extmul_high_i8x16_u()
                        .i8x16_shuffle(EVEN_BYTES);
                }
            },
            Shl | LShr | AShr => self.simd_shift(op, l, lhs, rhs)?,
            UDiv | SDiv | URem | SRem => {
                let (a, b) = self.push_pair(lhs, rhs)?;
                let signed = matches!(op, SDiv | SRem);
                let ext: LaneOp = if signed { extract_s } else { extract_u };
                let mut k = self.sink();
                k.local_get(a);
                for lane in 0..l.count() {
                    k.local_get(a);
                    ext(&mut k, i, lane);
                    k.local_get(b);
                    ext(&mut k, i, lane);
                    match op {
                        UDiv => k.i32_div_u(),
                        SDiv => k.i32_div_s(),
                        URem => k.i32_rem_u(),
                        _ => k.i32_rem_s(),
                    };
                    replace(&mut k, i, lane);
                }
            }
            _ => return Err(self.err_at(idx, "floating-point operator on an integer vector")),
        }
        Ok(true)
    }

    /// `frem` per lane through the runtime's fmodf.
    fn simd_frem(&mut self, lhs: ValueId, rhs: ValueId) -> R<bool> {
        let (a, b) = self.push_pair(lhs, rhs)?;
        let fmodf = self.cx.fmodf;
        let mut k = self.sink();
        k.local_get(a);
        for lane in 0..4 {
            k.local_get(a)
                .f32x4_extract_lane(lane)
                .local_get(b)
                .f32x4_extract_lane(lane)
                .call(fmodf)
                .f32x4_replace_lane(lane);
        }
        Ok(true)
    }

    /// Shifts by a vector of amounts: the SIMD shift when all amounts are equal (checked
    /// at run time), else per lane. Amounts count modulo the lane width either way.
    fn simd_shift(&mut self, op: BinOp, l: Lanes, lhs: ValueId, rhs: ValueId) -> R<()> {
        let (a, b) = self.push_pair(lhs, rhs)?;
        let i = l.int();
        let (simd, ext): (Op, LaneOp) = match op {
            BinOp::Shl => (shl, extract_u),
            BinOp::LShr => (shr_u, extract_u),
            _ => (shr_s, extract_s),
        };
        let wmask = l.bits() as i32 - 1;
        let mut k = self.sink();
        // all_true(b == splat(b[0]))
        k.local_get(b).local_get(b);
        extract_u(&mut k, i, 0);
        splat(&mut k, i);
        eq(&mut k, i);
        all_true(&mut k, i);
        k.if_(BlockType::Result(ValType::V128)).local_get(a);
        k.local_get(b);
        extract_u(&mut k, i, 0);
        simd(&mut k, i);
        k.else_().local_get(a);
        for lane in 0..l.count() {
            k.local_get(a);
            ext(&mut k, i, lane);
            k.local_get(b);
            extract_u(&mut k, i, lane);
            k.i32_const(wmask).i32_and();
            match op {
                BinOp::Shl => k.i32_shl(),
                BinOp::LShr => k.i32_shr_u(),
                _ => k.i32_shr_s(),
            };
            replace(&mut k, i, lane);
        }
        k.end();
        Ok(())
    }

    /// icmp/fcmp on vectors: a mask in the lanes of the operands' shape.
    pub(crate) fn simd_cmp(
        &mut self,
        idx: usize,
        pred: CmpPred,
        lhs: ValueId,
        rhs: ValueId,
    ) -> R<bool> {
        let t = self.ty(lhs)?;
        let sh = self.shape(t, idx)?;
        self.used.simd = true;
        use CmpPred::*;
        if pred.is_float() {
            if sh.lanes != Lanes::F32 {
                return Err(self.err_at(idx, "fcmp on an integer vector"));
            }
            match pred {
                FFalse | FTrue | FOne | FOrd | FUno | FUeq => {
                    let (a, b) = self.push_pair(lhs, rhs)?;
                    let mut k = self.sink();
                    match pred {
                        FFalse => k.v128_const(0),
                        FTrue => k.v128_const(-1),
                        FOne | FUeq => {
                            k.local_get(a)
                                .local_get(b)
                                .f32x4_lt()
                                .local_get(a)
                                .local_get(b)
                                .f32x4_gt()
                                .v128_or();
                            if pred == FUeq {
                                k.v128_not();
                            }
                            &mut k
                        }
                        FOrd => k
                            .local_get(a)
                            .local_get(a)
                            .f32x4_eq()
                            .local_get(b)
                            .local_get(b)
                            .f32x4_eq()
                            .v128_and(),
                        _ => k
                            .local_get(a)
                            .local_get(a)
                            .f32x4_ne()
                            .local_get(b)
                            .local_get(b)
                            .f32x4_ne()
                            .v128_or(),
                    };
                }
                _ => {
                    self.push(lhs)?;
                    self.push(rhs)?;
                    let mut k = self.sink();
                    match pred {
                        FOeq => k.f32x4_eq(),
                        FOgt => k.f32x4_gt(),
                        FOge => k.f32x4_ge(),
                        FOlt => k.f32x4_lt(),
                        FOle => k.f32x4_le(),
                        FUne => k.f32x4_ne(),
                        FUgt => k.f32x4_le().v128_not(),
                        FUge => k.f32x4_lt().v128_not(),
                        FUlt => k.f32x4_ge().v128_not(),
                        _ => k.f32x4_gt().v128_not(), // FUle
                    };
                }
            }
            return Ok(true);
        }
        if sh.lanes == Lanes::F32 {
            return Err(self.err_at(idx, "icmp on a float vector"));
        }
        // Masks compare as their canonical lanes: all ones is below zero signed (i1 true
        // is -1) and above it unsigned (i1 true is 1), as the i1 predicates need.
        self.push(lhs)?;
        self.push(rhs)?;
        let mut k = self.sink();
        macro_rules! by_shape {
            ($a:ident, $b:ident, $c:ident) => {
                match sh.lanes {
                    Lanes::I8 => k.$a(),
                    Lanes::I16 => k.$b(),
                    _ => k.$c(),
                }
            };
        }
        match pred {
            IEq => by_shape!(i8x16_eq, i16x8_eq, i32x4_eq),
            INe => by_shape!(i8x16_ne, i16x8_ne, i32x4_ne),
            IUgt => by_shape!(i8x16_gt_u, i16x8_gt_u, i32x4_gt_u),
            IUge => by_shape!(i8x16_ge_u, i16x8_ge_u, i32x4_ge_u),
            IUlt => by_shape!(i8x16_lt_u, i16x8_lt_u, i32x4_lt_u),
            IUle => by_shape!(i8x16_le_u, i16x8_le_u, i32x4_le_u),
            ISgt => by_shape!(i8x16_gt_s, i16x8_gt_s, i32x4_gt_s),
            ISge => by_shape!(i8x16_ge_s, i16x8_ge_s, i32x4_ge_s),
            ISlt => by_shape!(i8x16_lt_s, i16x8_lt_s, i32x4_lt_s),
            ISle => by_shape!(i8x16_le_s, i16x8_le_s, i32x4_le_s),
            _ => return Err(self.err_at(idx, "fcmp predicate on an integer vector")),
        };
        Ok(true)
    }

    /// Turns the i32 on the stack into a mask lane: bit 0 → all ones or zero.
    fn bit0_to_lane(k: &mut Sink<'_>) {
        k.i32_const(31).i32_shl().i32_const(31).i32_shr_s();
    }

    /// Turns the lanes on the stack into a mask: bit 0 of each lane → all ones or zero.
    fn bit0_to_mask(k: &mut Sink<'_>, l: Lanes) {
        let i = l.int();
        let s = l.bits() as i32 - 1;
        k.i32_const(s);
        shl(k, i);
        k.i32_const(s);
        shr_s(k, i);
    }

    /// `select`: a mask condition picks per lane; a scalar i1 (which the verifier does not
    /// allow for vectors, but LLVM does) picks the whole vector.
    pub(crate) fn simd_select(
        &mut self,
        idx: usize,
        cond: ValueId,
        t: ValueId,
        f: ValueId,
    ) -> R<bool> {
        self.used.simd = true;
        self.push(t)?;
        self.push(f)?;
        let ct = self.ty(cond)?;
        if self.m.types.is_vector(ct) {
            self.shape(ct, idx)?;
            self.push(cond)?;
            self.sink().v128_bitselect();
        } else {
            let c = self.push(cond)?;
            self.zext(1, c);
            self.sink().select();
        }
        Ok(true)
    }

    /// Casts with a vector operand or result.
    pub(crate) fn simd_cast(
        &mut self,
        idx: usize,
        op: CastOp,
        val: ValueId,
        to: TypeId,
    ) -> R<bool> {
        self.used.simd = true;
        let from = self.ty(val)?;
        let types = &self.m.types;
        let (fv, tv) = (types.is_vector(from), types.is_vector(to));
        use CastOp::*;
        if fv && !tv || !fv && tv {
            // Masks of 8 and 16 lanes and the integers of as many bits.
            let scalar_bits = match types.get(if fv { to } else { from }) {
                Some(Type::Int(b)) => *b,
                _ => 0,
            };
            let v = if fv { from } else { to };
            let sh = self.shape(v, idx)?;
            if op != Bitcast || !sh.mask || scalar_bits != sh.lanes.count() as u32 {
                return Err(self.unsupported(idx, "this cast between a vector and a scalar"));
            }
            self.push(val)?;
            let l = sh.lanes;
            let mut k = self.sink();
            if fv {
                // Lane i's top bit becomes bit i, as LLVM packs <N x i1> (element 0 lowest).
                match l {
                    Lanes::I8 => k.i8x16_bitmask(),
                    _ => k.i16x8_bitmask(),
                };
                return Ok(true);
            }
            let bits = lane_bits(l);
            match l {
                Lanes::I8 => {
                    // Low byte to lanes 0-7, high byte to lanes 8-15, then test bit i.
                    k.i16x8_splat()
                        .v128_const(0x0101_0101_0101_0101_0000_0000_0000_0000)
                        .i8x16_swizzle()
                        .v128_const(bits)
                        .v128_and()
                        .v128_const(bits)
                        .i8x16_eq();
                }
                _ => {
                    k.i16x8_splat()
                        .v128_const(bits)
                        .v128_and()
                        .v128_const(bits)
                        .i16x8_eq();
                }
            }
            return Ok(true);
        }
        let fs = self.shape(from, idx)?;
        let ts = self.shape(to, idx)?;
        if op != Bitcast && fs.lanes.count() != ts.lanes.count() {
            return Err(self.err_at(idx, "cast between vectors of different lengths"));
        }
        self.push(val)?;
        let mut k = self.sink();
        match op {
            Bitcast => {
                if fs.mask || ts.mask {
                    return Err(self.unsupported(idx, "bitcast of an i1 vector to a vector"));
                }
            }
            Trunc if ts.mask && !fs.mask => Self::bit0_to_mask(&mut k, fs.lanes),
            ZExt if fs.mask && !ts.mask => {
                neg(&mut k, ts.lanes.int());
            }
            SExt if fs.mask && !ts.mask => {}
            SiToFp | UiToFp if ts.lanes == Lanes::F32 && fs.lanes == Lanes::I32 => {
                if fs.mask && op == UiToFp {
                    k.i32x4_neg();
                }
                if op == SiToFp || fs.mask {
                    k.f32x4_convert_i32x4_s();
                } else {
                    k.f32x4_convert_i32x4_u();
                }
            }
            FpToSi | FpToUi if fs.lanes == Lanes::F32 && ts.lanes == Lanes::I32 => {
                if op == FpToSi {
                    k.i32x4_trunc_sat_f32x4_s();
                } else {
                    k.i32x4_trunc_sat_f32x4_u();
                }
                if ts.mask {
                    Self::bit0_to_mask(&mut k, Lanes::I32);
                }
            }
            _ => return Err(self.unsupported(idx, format!("{} between these vectors", op.name()))),
        }
        Ok(true)
    }

    /// `extractelement`: `extract_lane` for a constant index; a variable one (which the
    /// verifier rejects) swizzles the element's bytes to lane 0 first.
    pub(crate) fn simd_extract(&mut self, idx: usize, vec: ValueId, index: ValueId) -> R<bool> {
        self.used.simd = true;
        let sh = self.shape(self.ty(vec)?, idx)?;
        let l = sh.lanes;
        self.push(vec)?;
        let lane = match self.const_int(index) {
            Some(c) => (c % l.count() as u64) as u8,
            None => {
                self.push_byte_offsets(l, index)?;
                self.sink().i8x16_swizzle();
                0
            }
        };
        let mut k = self.sink();
        if l == Lanes::F32 {
            k.f32x4_extract_lane(lane);
            return Ok(true);
        }
        extract_u(&mut k, l.int(), lane);
        // A mask lane is all ones: only bit 0 counts, the rest is garbage.
        Ok(!sh.mask)
    }

    /// For a variable lane index: the swizzle indices that bring lane `index mod N`'s
    /// bytes to the bottom (byte offset of the lane + 0, 1, ... in each lane's bytes).
    fn push_byte_offsets(&mut self, l: Lanes, index: ValueId) -> R<()> {
        self.push(index)?;
        let bytes = l.bits() / 8;
        let mut within: u128 = 0;
        for i in 0..16u32 {
            within |= ((i % bytes) as u128) << (i * 8);
        }
        self.sink()
            .i32_const(l.count() as i32 - 1)
            .i32_and()
            .i32_const(bytes.trailing_zeros() as i32)
            .i32_shl()
            .i8x16_splat()
            .v128_const(within as i128)
            .i8x16_add();
        Ok(())
    }

    /// `insertelement`: `replace_lane` for a constant index; a variable one selects the
    /// splatted element where the lane number equals `index mod N`.
    pub(crate) fn simd_insert(
        &mut self,
        idx: usize,
        vec: ValueId,
        elt: ValueId,
        index: ValueId,
    ) -> R<bool> {
        self.used.simd = true;
        let sh = self.shape(self.ty(vec)?, idx)?;
        let l = sh.lanes;
        let i = l.int();
        self.push(vec)?;
        self.push(elt)?;
        if sh.mask {
            Self::bit0_to_lane(&mut self.sink());
        }
        match self.const_int(index) {
            Some(c) => {
                let lane = (c % l.count() as u64) as u8;
                let mut k = self.sink();
                if l == Lanes::F32 {
                    k.f32x4_replace_lane(lane);
                } else {
                    replace(&mut k, i, lane);
                }
            }
            None => {
                if l == Lanes::F32 {
                    self.sink().f32x4_splat();
                } else {
                    splat(&mut self.sink(), i);
                }
                self.push(index)?;
                let mut k = self.sink();
                k.i32_const(l.count() as i32 - 1).i32_and();
                splat(&mut k, i);
                k.v128_const(iota(l));
                ne(&mut k, i);
                // bitselect(vec, splat(elt), lane != index)
                k.v128_bitselect();
            }
        }
        Ok(true)
    }

    pub(crate) fn simd_load(
        &mut self,
        idx: usize,
        ptr: ValueId,
        align: Align,
        ty: TypeId,
    ) -> R<bool> {
        self.shape(ty, idx)?;
        self.used.simd = true;
        let off = self.push_addr(ptr)?;
        self.sink().v128_load(v128_memarg(off, align));
        Ok(true)
    }

    pub(crate) fn simd_store(
        &mut self,
        idx: usize,
        ptr: ValueId,
        val: ValueId,
        align: Align,
    ) -> R<bool> {
        self.shape(self.ty(val)?, idx)?;
        self.used.simd = true;
        let off = self.push_addr(ptr)?;
        self.push(val)?;
        self.sink().v128_store(v128_memarg(off, align));
        Ok(true)
    }

    /// `llvm.fabs.v4f32`.
    pub(crate) fn simd_fabs(&mut self, v: ValueId) -> R<bool> {
        self.used.simd = true;
        self.push(v)?;
        self.sink().f32x4_abs();
        Ok(true)
    }
}

/// A v128 memarg: the alignment hint is the pexe's (the element size), at most 16.
fn v128_memarg(offset: u64, align: Align) -> MemArg {
    MemArg {
        offset,
        align: align.bytes().map_or(0, |b| b.trailing_zeros().min(4)),
        target: wasm_encoder::MemArgTarget::Memory(0),
        ordering: None,
    }
}
