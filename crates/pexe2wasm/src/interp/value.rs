//! Values of the reference interpreter and the arithmetic on them, written from the PNaCl
//! bitcode reference and LLVM's semantics, not from the lowering. Where LLVM leaves a
//! result undefined (poison), the interpreter gives what the converter's output defines,
//! as documented here (see the module comment of [`super`]).

use crate::ir::{BinOp, CastOp, CmpPred, Scalar};

use super::Trap;

/// The canonical quiet NaNs: arithmetic that makes a NaN makes exactly these (the
/// differential harness runs wasm with NaN canonicalization on, so the bits agree).
pub const CANON_F32: u32 = 0x7fc0_0000;
pub const CANON_F64: u64 = 0x7ff8_0000_0000_0000;

/// A value: an integer of a PNaCl width (bits kept masked to the width), a float or
/// double by its bits, or a vector (up to 16 lanes, integer lanes masked, float lanes as
/// f32 bits).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Val {
    Int {
        bits: u8,
        v: u64,
    },
    F32(u32),
    F64(u64),
    Vector {
        elem: Scalar,
        n: u8,
        lanes: [u64; 16],
    },
}

impl std::fmt::Debug for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Val::Int { bits, v } => {
                let s = sext(v, bits as u32) as i64;
                if bits == 1 || s >= 0 {
                    write!(f, "i{bits} {v}")
                } else {
                    write!(f, "i{bits} {v} ({s})")
                }
            }
            Val::F32(b) => write!(f, "float {:?} ({b:#010x})", f32::from_bits(b)),
            Val::F64(b) => write!(f, "double {:?} ({b:#018x})", f64::from_bits(b)),
            Val::Vector { elem, n, lanes } => {
                write!(f, "<{n} x {}>", elem.name())?;
                write!(f, " <")?;
                for (i, l) in lanes[..n as usize].iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    match elem {
                        Scalar::F32 => write!(f, "{:?}", f32::from_bits(*l as u32))?,
                        _ => write!(f, "{l}")?,
                    }
                }
                write!(f, ">")
            }
        }
    }
}

#[inline]
pub fn mask(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// Sign-extends the low `bits` of `v` to 64 bits.
#[inline]
pub fn sext(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        let s = 64 - bits;
        (((v << s) as i64) >> s) as u64
    }
}

fn canon32(x: f32) -> u32 {
    if x.is_nan() {
        CANON_F32
    } else {
        x.to_bits()
    }
}

fn canon64(x: f64) -> u64 {
    if x.is_nan() {
        CANON_F64
    } else {
        x.to_bits()
    }
}

impl Val {
    pub fn int(bits: u32, v: u64) -> Val {
        Val::Int {
            bits: bits as u8,
            v: mask(v, bits),
        }
    }
    pub fn bool(b: bool) -> Val {
        Val::Int {
            bits: 1,
            v: b as u64,
        }
    }
    /// A scalar of kind `s` from raw bits (integers masked, floats as bits).
    pub fn scalar(s: Scalar, raw: u64) -> Val {
        match s {
            Scalar::F32 => Val::F32(raw as u32),
            Scalar::F64 => Val::F64(raw),
            _ => Val::int(s.bits(), raw),
        }
    }
    /// The raw bits of a scalar (integers zero-extended, floats as bits).
    pub fn raw(&self) -> u64 {
        match *self {
            Val::Int { v, .. } => v,
            Val::F32(b) => b as u64,
            Val::F64(b) => b,
            Val::Vector { .. } => 0,
        }
    }
    pub fn as_u32(&self) -> u32 {
        self.raw() as u32
    }
    /// True for a NaN float or double (used by comparisons that treat NaNs as equal).
    pub fn is_nan(&self) -> bool {
        match *self {
            Val::F32(b) => f32::from_bits(b).is_nan(),
            Val::F64(b) => f64::from_bits(b).is_nan(),
            _ => false,
        }
    }
    /// Lanes of a vector as scalars (a scalar is one lane).
    fn lane(&self, i: usize) -> Val {
        match *self {
            Val::Vector { elem, lanes, .. } => Val::scalar(elem, lanes[i]),
            v => v,
        }
    }
    /// The memory image (little-endian) of a scalar or vector; i1 vectors have none.
    pub fn to_bytes(&self, out: &mut Vec<u8>) {
        match *self {
            Val::Int { bits, v } => {
                let n = (bits as usize).div_ceil(8);
                out.extend_from_slice(&v.to_le_bytes()[..n]);
            }
            Val::F32(b) => out.extend_from_slice(&b.to_le_bytes()),
            Val::F64(b) => out.extend_from_slice(&b.to_le_bytes()),
            Val::Vector { elem, n, lanes } => {
                let w = (elem.bits() as usize).div_ceil(8);
                for l in &lanes[..n as usize] {
                    out.extend_from_slice(&l.to_le_bytes()[..w]);
                }
            }
        }
    }
}

/// Lane-wise application over vectors, or the scalar operation on scalars.
fn lanewise(a: &Val, b: &Val, f: impl Fn(Val, Val) -> Result<Val, Trap>) -> Result<Val, Trap> {
    match *a {
        Val::Vector { n, .. } => {
            let mut lanes = [0u64; 16];
            let mut elem = Scalar::I1;
            for (i, l) in lanes.iter_mut().enumerate().take(n as usize) {
                let r = f(a.lane(i), b.lane(i))?;
                elem = scalar_of(&r);
                *l = r.raw();
            }
            Ok(Val::Vector { elem, n, lanes })
        }
        _ => f(*a, *b),
    }
}

fn map(a: &Val, f: impl Fn(Val) -> Result<Val, Trap>) -> Result<Val, Trap> {
    lanewise(a, a, |x, _| f(x))
}

pub fn scalar_of(v: &Val) -> Scalar {
    match *v {
        Val::Int { bits, .. } => match bits {
            1 => Scalar::I1,
            8 => Scalar::I8,
            16 => Scalar::I16,
            32 => Scalar::I32,
            _ => Scalar::I64,
        },
        Val::F32(_) => Scalar::F32,
        Val::F64(_) => Scalar::F64,
        Val::Vector { elem, .. } => elem,
    }
}

/// A binary operator. `vector` tells whether the operands were vector lanes (shifts
/// differ: see [`shift_amount`]).
pub fn binop(op: BinOp, a: &Val, b: &Val) -> Result<Val, Trap> {
    let vector = matches!(a, Val::Vector { .. });
    lanewise(a, b, |x, y| scalar_binop(op, x, y, vector))
}

/// The shift amount actually used. LLVM makes a shift by the width or more poison; the
/// converter's output shifts scalars of 32 and 64 bits modulo the width (wasm's rule),
/// narrower scalars as an i32 shift (amount modulo 32, then truncated), and vector lanes
/// modulo the lane width (decision 0004).
fn shift_amount(y: u64, bits: u32, vector: bool) -> u32 {
    if vector || bits >= 32 {
        (y % bits as u64) as u32
    } else {
        (y & 31) as u32
    }
}

/// `op` on two floats of one width; `None` for an integer operator.
fn float_binop<T>(op: BinOp, a: T, b: T) -> Option<T>
where
    T: std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>
        + std::ops::Rem<Output = T>,
{
    use BinOp::*;
    Some(match op {
        FAdd => a + b,
        FSub => a - b,
        FMul => a * b,
        FDiv => a / b,
        FRem => a % b,
        _ => return None,
    })
}

fn scalar_binop(op: BinOp, x: Val, y: Val, vector: bool) -> Result<Val, Trap> {
    use BinOp::*;
    match (x, y) {
        (Val::Int { bits, v: a }, Val::Int { v: b, .. }) => {
            let w = bits as u32;
            let (sa, sb) = (sext(a, w) as i64, sext(b, w) as i64);
            let r = match op {
                Add => a.wrapping_add(b),
                Sub => a.wrapping_sub(b),
                Mul => a.wrapping_mul(b),
                UDiv | URem | SDiv | SRem if b == 0 => return Err(Trap::DivisionByZero),
                UDiv => a / b,
                URem => a % b,
                SDiv => {
                    // i32/i64 MIN / -1 traps in wasm; narrower types divide in 32 bits
                    // and wrap (LLVM: undefined).
                    if w >= 32 && sb == -1 && sa == sext(1 << (w - 1), w) as i64 {
                        return Err(Trap::IntegerOverflow);
                    }
                    sa.wrapping_div(sb) as u64
                }
                SRem => sa.wrapping_rem(sb) as u64,
                Shl => {
                    let s = shift_amount(b, w, vector);
                    if s >= 64 {
                        0
                    } else {
                        a << s
                    }
                }
                LShr => {
                    let s = shift_amount(b, w, vector);
                    if s >= 64 {
                        0
                    } else {
                        a >> s
                    }
                }
                AShr => {
                    let s = shift_amount(b, w, vector).min(63);
                    (sa >> s) as u64
                }
                And => a & b,
                Or => a | b,
                Xor => a ^ b,
                _ => return Err(Trap::Invalid("float operator on integers")),
            };
            Ok(Val::int(w, r))
        }
        (Val::F32(a), Val::F32(b)) => {
            let r = float_binop(op, f32::from_bits(a), f32::from_bits(b));
            Ok(Val::F32(canon32(
                r.ok_or(Trap::Invalid("integer operator on float"))?,
            )))
        }
        (Val::F64(a), Val::F64(b)) => {
            let r = float_binop(op, f64::from_bits(a), f64::from_bits(b));
            Ok(Val::F64(canon64(
                r.ok_or(Trap::Invalid("integer operator on double"))?,
            )))
        }
        _ => Err(Trap::Invalid("binop operand types")),
    }
}

pub fn cmp(pred: CmpPred, a: &Val, b: &Val) -> Result<Val, Trap> {
    lanewise(a, b, |x, y| Ok(Val::bool(scalar_cmp(pred, x, y)?)))
}

fn scalar_cmp(pred: CmpPred, x: Val, y: Val) -> Result<bool, Trap> {
    use CmpPred::*;
    if pred.is_float() {
        let (a, b) = match (x, y) {
            (Val::F32(a), Val::F32(b)) => (f32::from_bits(a) as f64, f32::from_bits(b) as f64),
            (Val::F64(a), Val::F64(b)) => (f64::from_bits(a), f64::from_bits(b)),
            _ => return Err(Trap::Invalid("fcmp on integers")),
        };
        let uno = a.is_nan() || b.is_nan();
        return Ok(match pred {
            FFalse => false,
            FTrue => true,
            FOeq => !uno && a == b,
            FOgt => !uno && a > b,
            FOge => !uno && a >= b,
            FOlt => !uno && a < b,
            FOle => !uno && a <= b,
            FOne => !uno && a != b,
            FOrd => !uno,
            FUno => uno,
            FUeq => uno || a == b,
            FUgt => uno || a > b,
            FUge => uno || a >= b,
            FUlt => uno || a < b,
            FUle => uno || a <= b,
            FUne => uno || a != b,
            _ => unreachable!(),
        });
    }
    let (Val::Int { bits, v: a }, Val::Int { v: b, .. }) = (x, y) else {
        return Err(Trap::Invalid("icmp on floating point"));
    };
    let w = bits as u32;
    let (sa, sb) = (sext(a, w) as i64, sext(b, w) as i64);
    Ok(match pred {
        IEq => a == b,
        INe => a != b,
        IUgt => a > b,
        IUge => a >= b,
        IUlt => a < b,
        IUle => a <= b,
        ISgt => sa > sb,
        ISge => sa >= sb,
        ISlt => sa < sb,
        ISle => sa <= sb,
        _ => unreachable!(),
    })
}

/// A cast to a value of kind `to` (the element kind for vectors).
pub fn cast(op: CastOp, a: &Val, to: Scalar) -> Result<Val, Trap> {
    if op == CastOp::Bitcast {
        return Err(Trap::Invalid("bitcast goes through `bitcast`"));
    }
    map(a, |x| scalar_cast(op, x, to))
}

fn scalar_cast(op: CastOp, x: Val, to: Scalar) -> Result<Val, Trap> {
    use CastOp::*;
    let tb = to.bits();
    Ok(match (op, x) {
        (Trunc | ZExt | PtrToInt | IntToPtr, Val::Int { v, .. }) => Val::int(tb, v),
        (SExt, Val::Int { bits, v }) => Val::int(tb, sext(v, bits as u32)),
        (FpToSi | FpToUi, f) => {
            let d = match f {
                Val::F32(b) => f32::from_bits(b) as f64,
                Val::F64(b) => f64::from_bits(b),
                _ => return Err(Trap::Invalid("fptoi of an integer")),
            };
            // Saturating (wasm's `trunc_sat`, NaN → 0) to i32 or i64, then truncated to
            // narrower types (LLVM: poison when out of range).
            let v = match (op == FpToSi, tb > 32) {
                (true, false) => d as i32 as u32 as u64,
                (false, false) => d as u32 as u64,
                (true, true) => d as i64 as u64,
                (false, true) => d as u64,
            };
            Val::int(tb, v)
        }
        (UiToFp | SiToFp, Val::Int { bits, v }) => {
            let w = bits as u32;
            let signed = op == SiToFp;
            match to {
                Scalar::F32 => Val::F32(
                    if signed {
                        (sext(v, w) as i64) as f32
                    } else {
                        v as f32
                    }
                    .to_bits(),
                ),
                _ => Val::F64(
                    if signed {
                        (sext(v, w) as i64) as f64
                    } else {
                        v as f64
                    }
                    .to_bits(),
                ),
            }
        }
        (FpTrunc, Val::F64(b)) => Val::F32(canon32(f64::from_bits(b) as f32)),
        (FpExt, Val::F32(b)) => Val::F64(canon64(f32::from_bits(b) as f64)),
        _ => return Err(Trap::Invalid("cast operand type")),
    })
}

/// `bitcast` to a type of the same size: `to` is the target's element kind and lane count
/// (0 lanes for a scalar).
pub fn bitcast(a: &Val, to: Scalar, to_lanes: u32) -> Result<Val, Trap> {
    // The value's bits as a 128-bit little-endian integer (lane 0 lowest).
    let bits: u128 = match *a {
        Val::Vector { elem, n, lanes } => {
            let w = elem.bits();
            let mut r = 0u128;
            for (i, l) in lanes[..n as usize].iter().enumerate() {
                r |= (*l as u128) << (i as u32 * w);
            }
            r
        }
        v => v.raw() as u128,
    };
    if to_lanes == 0 {
        return Ok(Val::scalar(to, bits as u64));
    }
    let w = to.bits();
    let mut lanes = [0u64; 16];
    for (i, l) in lanes.iter_mut().enumerate().take(to_lanes as usize) {
        *l = mask((bits >> (i as u32 * w)) as u64, w);
    }
    Ok(Val::Vector {
        elem: to,
        n: to_lanes as u8,
        lanes,
    })
}

/// `select`: a scalar condition picks a whole operand, a vector condition lane by lane.
pub fn select(c: &Val, t: &Val, f: &Val) -> Result<Val, Trap> {
    match (*c, *t, *f) {
        (Val::Int { v, .. }, _, _) => Ok(if v & 1 != 0 { *t } else { *f }),
        (
            Val::Vector { lanes: cl, n, .. },
            Val::Vector {
                elem, lanes: tl, ..
            },
            Val::Vector { lanes: fl, .. },
        ) => {
            let mut lanes = [0u64; 16];
            for i in 0..n as usize {
                lanes[i] = if cl[i] & 1 != 0 { tl[i] } else { fl[i] };
            }
            Ok(Val::Vector { elem, n, lanes })
        }
        _ => Err(Trap::Invalid("select operand types")),
    }
}

pub fn extract(v: &Val, i: u64) -> Result<Val, Trap> {
    match *v {
        Val::Vector { n, .. } if i < n as u64 => Ok(v.lane(i as usize)),
        _ => Err(Trap::Invalid("extractelement index")),
    }
}

pub fn insert(v: &Val, x: &Val, i: u64) -> Result<Val, Trap> {
    match *v {
        Val::Vector { elem, n, mut lanes } if i < n as u64 => {
            lanes[i as usize] = x.raw();
            Ok(Val::Vector { elem, n, lanes })
        }
        _ => Err(Trap::Invalid("insertelement index")),
    }
}

/// `llvm.fabs` (scalar or `<4 x float>`): clears the sign bit, NaNs included.
pub fn fabs(a: &Val) -> Result<Val, Trap> {
    map(a, |x| match x {
        Val::F32(b) => Ok(Val::F32(b & 0x7fff_ffff)),
        Val::F64(b) => Ok(Val::F64(b & 0x7fff_ffff_ffff_ffff)),
        _ => Err(Trap::Invalid("fabs of an integer")),
    })
}

pub fn sqrt(a: &Val) -> Result<Val, Trap> {
    match *a {
        Val::F32(b) => Ok(Val::F32(canon32(f32::from_bits(b).sqrt()))),
        Val::F64(b) => Ok(Val::F64(canon64(f64::from_bits(b).sqrt()))),
        _ => Err(Trap::Invalid("sqrt of an integer")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::BinOp::*;

    fn i(bits: u32, v: i64) -> Val {
        Val::int(bits, v as u64)
    }

    #[test]
    fn integer_operators_wrap_at_their_width() {
        assert_eq!(binop(Add, &i(8, 200), &i(8, 100)), Ok(i(8, 44)));
        assert_eq!(
            binop(Mul, &i(16, 300), &i(16, 300)),
            Ok(i(16, 90000 & 0xffff))
        );
        assert_eq!(binop(Sub, &i(1, 0), &i(1, 1)), Ok(i(1, 1)));
        assert_eq!(binop(SRem, &i(8, -7), &i(8, 2)), Ok(i(8, -1)));
        assert_eq!(binop(AShr, &i(16, -32768), &i(16, 15)), Ok(i(16, -1)));
        assert_eq!(binop(LShr, &i(16, -32768), &i(16, 15)), Ok(i(16, 1)));
    }

    #[test]
    fn division_traps_as_the_converted_module_does() {
        assert_eq!(binop(UDiv, &i(32, 1), &i(32, 0)), Err(Trap::DivisionByZero));
        assert_eq!(binop(SRem, &i(8, 1), &i(8, 0)), Err(Trap::DivisionByZero));
        assert_eq!(
            binop(SDiv, &i(32, i32::MIN as i64), &i(32, -1)),
            Err(Trap::IntegerOverflow)
        );
        assert_eq!(
            binop(SDiv, &i(64, i64::MIN), &i(64, -1)),
            Err(Trap::IntegerOverflow)
        );
        // Narrower types divide in 32 bits and wrap; MIN % -1 is 0.
        assert_eq!(binop(SDiv, &i(8, -128), &i(8, -1)), Ok(i(8, -128)));
        assert_eq!(
            binop(SRem, &i(32, i32::MIN as i64), &i(32, -1)),
            Ok(i(32, 0))
        );
    }

    #[test]
    fn shifts_past_the_width() {
        // i32/i64 and vector lanes: modulo the width; narrower scalars: an i32 shift.
        assert_eq!(binop(Shl, &i(32, 1), &i(32, 33)), Ok(i(32, 2)));
        assert_eq!(binop(Shl, &i(8, 1), &i(8, 9)), Ok(i(8, 0)));
        assert_eq!(binop(AShr, &i(8, -2), &i(8, 9)), Ok(i(8, -1)));
        let v = |x| Val::Vector {
            elem: Scalar::I8,
            n: 16,
            lanes: [x; 16],
        };
        assert_eq!(binop(Shl, &v(1), &v(9)), Ok(v(2)));
    }

    #[test]
    fn float_results_are_canonical_nans_and_conversions_saturate() {
        let nan = Val::F32(0x7fc0_0001);
        assert_eq!(binop(FAdd, &nan, &Val::F32(0)), Ok(Val::F32(CANON_F32)));
        assert_eq!(
            binop(
                FSub,
                &Val::F64(f64::INFINITY.to_bits()),
                &Val::F64(f64::INFINITY.to_bits())
            ),
            Ok(Val::F64(CANON_F64))
        );
        assert_eq!(fabs(&Val::F32(0xffc0_0001)), Ok(Val::F32(0x7fc0_0001)));
        assert_eq!(cast(CastOp::FpToSi, &nan, Scalar::I32), Ok(i(32, 0)));
        assert_eq!(
            cast(CastOp::FpToSi, &Val::F32(3e9f32.to_bits()), Scalar::I32),
            Ok(i(32, i32::MAX as i64))
        );
        // 300.0 to i8: saturated to i32 (300), then truncated.
        assert_eq!(
            cast(CastOp::FpToUi, &Val::F64(300f64.to_bits()), Scalar::I8),
            Ok(i(8, 44))
        );
        assert_eq!(
            cast(CastOp::SiToFp, &i(1, 1), Scalar::F32),
            Ok(Val::F32((-1f32).to_bits()))
        );
        assert_eq!(
            cast(CastOp::UiToFp, &i(64, -1), Scalar::F32),
            Ok(Val::F32(18446744073709551615f32.to_bits()))
        );
    }

    #[test]
    fn compares_and_masks() {
        let nan = Val::F64(CANON_F64);
        let one = Val::F64(1f64.to_bits());
        assert_eq!(cmp(CmpPred::FUne, &nan, &one), Ok(Val::bool(true)));
        assert_eq!(cmp(CmpPred::FOne, &nan, &one), Ok(Val::bool(false)));
        assert_eq!(cmp(CmpPred::ISlt, &i(8, -1), &i(8, 1)), Ok(Val::bool(true)));
        assert_eq!(
            cmp(CmpPred::IUlt, &i(8, -1), &i(8, 1)),
            Ok(Val::bool(false))
        );
        // An i16 as <16 x i1>: bit k is lane k.
        let m = bitcast(&i(16, 0b1000_0000_0000_0101), Scalar::I1, 16).unwrap();
        let Val::Vector { lanes, .. } = m else {
            panic!("{m}")
        };
        assert_eq!(&lanes[..4], &[1, 0, 1, 0]);
        assert_eq!(lanes[15], 1);
        assert_eq!(
            bitcast(&m, Scalar::I16, 0),
            Ok(i(16, 0b1000_0000_0000_0101))
        );
    }
}
