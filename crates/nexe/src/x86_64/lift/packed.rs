//! Packed SSE/SSE2 onto SIMD128, and the scalar SSE operations that are easiest as a
//! packed operation whose low lane is merged (min, max, sqrt, compares).
//!
//! Every operation here is exact in wasm: the lane arithmetic is IEEE with the default
//! rounding (MXCSR's round-to-nearest, as NaCl programs run), integer lanes wrap or
//! saturate as x86's do, and x86's `min`/`max` (`a < b ? a : b`, the second operand when
//! unordered) are wasm's `pmin`/`pmax` with the operands swapped. Shift counts of an
//! element's width or more give x86's zero (or sign fill), not wasm's count modulo width.

use super::*;
use wasm_encoder::InstructionSink;

/// Emits one wasm instruction.
type Emit = fn(&mut InstructionSink<'_>);

/// How a two-operand packed operation is emitted.
enum Bin {
    /// `d = op(d, s)`.
    Op(Emit),
    /// `d = op(s, d)` (x86's min/max as wasm's pmin/pmax).
    Swapped(Emit),
    /// `d = shuffle(d, s)` by byte lanes.
    Shuffle([u8; 16]),
}

/// Byte lanes of an interleave of `width`-byte elements from the low (`high` false) or
/// high half of d (lanes 0..16) and s (16..32).
fn interleave(width: u8, high: bool) -> [u8; 16] {
    let mut l = [0u8; 16];
    let half = if high { 8 } else { 0 };
    let n = 16 / (2 * width);
    for k in 0..n {
        for b in 0..width {
            l[(2 * k * width + b) as usize] = half + k * width + b;
            l[((2 * k + 1) * width + b) as usize] = 16 + half + k * width + b;
        }
    }
    l
}

/// Byte lanes of 4-byte element `e` (0..8 over d then s) at element position `at`.
fn put32(l: &mut [u8; 16], at: usize, e: u8) {
    for b in 0..4 {
        l[4 * at + b as usize] = 4 * e + b;
    }
}

impl Em<'_> {
    /// Pushes operand `n` as a v128: an XMM register, or memory of the operand's size
    /// (16 bytes, or 8/4 zero-extended).
    fn v128_src(&mut self, ins: &Instruction, n: u32) -> R {
        match Self::xmm_of(ins, n) {
            Some(x) => {
                self.i().local_get(xmm(x));
            }
            None if ins.op_kind(n) == OpKind::Memory => {
                self.i().local_get(EA);
                match ins.memory_size().size() {
                    8 => self.i().v128_load64_zero(mem(1)),
                    4 => self.i().v128_load32_zero(mem(1)),
                    16 => self.i().v128_load(mem(1)),
                    _ => return Err(LiftError::not_yet(ins, "instruction")),
                };
            }
            None => return Err(LiftError::not_yet(ins, "instruction")),
        }
        Ok(())
    }

    /// The v128 on the stack into the low lane (8 or 4 bytes) of XMM register `d`.
    fn merge_low(&mut self, d: u32, wide: bool) {
        self.i().local_set(V0).local_get(xmm(d)).local_get(V0);
        if wide {
            self.i().i64x2_extract_lane(0).i64x2_replace_lane(0);
        } else {
            self.i().i32x4_extract_lane(0).i32x4_replace_lane(0);
        }
        self.i().local_set(xmm(d));
    }

    /// The x86 compare predicate `p` (0..7: eq lt le unord neq nlt nle ord) of the two
    /// v128 in V0 (a) and V1 (b), as lane masks.
    fn compare(&mut self, ins: &Instruction, p: u32, double: bool) -> R {
        let (eq, lt, le, ne): (Emit, Emit, Emit, Emit) = if double {
            (
                |s| {
                    s.f64x2_eq();
                },
                |s| {
                    s.f64x2_lt();
                },
                |s| {
                    s.f64x2_le();
                },
                |s| {
                    s.f64x2_ne();
                },
            )
        } else {
            (
                |s| {
                    s.f32x4_eq();
                },
                |s| {
                    s.f32x4_lt();
                },
                |s| {
                    s.f32x4_le();
                },
                |s| {
                    s.f32x4_ne();
                },
            )
        };
        let ab = |e: &mut Self| {
            e.i().local_get(V0).local_get(V1);
        };
        match p & 3 {
            0 if p == 0 => {
                ab(self);
                eq(&mut self.i().w());
            }
            0 => {
                ab(self);
                ne(&mut self.i().w());
            }
            1 => {
                ab(self);
                lt(&mut self.i().w());
            }
            2 => {
                ab(self);
                le(&mut self.i().w());
            }
            _ => {
                // unordered: either is NaN
                self.i().local_get(V0).local_get(V0);
                ne(&mut self.i().w());
                self.i().local_get(V1).local_get(V1);
                ne(&mut self.i().w());
                self.i().v128_or();
            }
        }
        if p >= 8 {
            return Err(LiftError::not_yet(ins, "instruction"));
        }
        // 5 nlt, 6 nle, 7 ord negate 1, 2, 3 (4 neq is ne itself)
        if p >= 5 {
            self.i().v128_not();
        }
        Ok(())
    }

    /// Lifts a packed SSE/SSE2 instruction (or scalar min/max/sqrt/compare); false when
    /// `m` is not one of them.
    pub(super) fn packed(&mut self, ins: &Instruction, m: Mnemonic) -> R<bool> {
        use Mnemonic as M;
        let not_yet = || LiftError::not_yet(ins, "instruction");
        macro_rules! op {
            ($f:ident) => {
                Bin::Op(|s| {
                    s.$f();
                })
            };
        }
        macro_rules! swapped {
            ($f:ident) => {
                Bin::Swapped(|s| {
                    s.$f();
                })
            };
        }
        let bin = match m {
            M::Addpd => Some(op!(f64x2_add)),
            M::Subpd => Some(op!(f64x2_sub)),
            M::Mulpd => Some(op!(f64x2_mul)),
            M::Divpd => Some(op!(f64x2_div)),
            M::Addps => Some(op!(f32x4_add)),
            M::Subps => Some(op!(f32x4_sub)),
            M::Mulps => Some(op!(f32x4_mul)),
            M::Divps => Some(op!(f32x4_div)),
            M::Minpd => Some(swapped!(f64x2_pmin)),
            M::Maxpd => Some(swapped!(f64x2_pmax)),
            M::Minps => Some(swapped!(f32x4_pmin)),
            M::Maxps => Some(swapped!(f32x4_pmax)),
            M::Paddb => Some(op!(i8x16_add)),
            M::Paddw => Some(op!(i16x8_add)),
            M::Paddd => Some(op!(i32x4_add)),
            M::Paddq => Some(op!(i64x2_add)),
            M::Psubb => Some(op!(i8x16_sub)),
            M::Psubw => Some(op!(i16x8_sub)),
            M::Psubd => Some(op!(i32x4_sub)),
            M::Psubq => Some(op!(i64x2_sub)),
            M::Paddsb => Some(op!(i8x16_add_sat_s)),
            M::Paddsw => Some(op!(i16x8_add_sat_s)),
            M::Paddusb => Some(op!(i8x16_add_sat_u)),
            M::Paddusw => Some(op!(i16x8_add_sat_u)),
            M::Psubsb => Some(op!(i8x16_sub_sat_s)),
            M::Psubsw => Some(op!(i16x8_sub_sat_s)),
            M::Psubusb => Some(op!(i8x16_sub_sat_u)),
            M::Psubusw => Some(op!(i16x8_sub_sat_u)),
            M::Pcmpeqb => Some(op!(i8x16_eq)),
            M::Pcmpeqw => Some(op!(i16x8_eq)),
            M::Pcmpeqd => Some(op!(i32x4_eq)),
            M::Pcmpgtb => Some(op!(i8x16_gt_s)),
            M::Pcmpgtw => Some(op!(i16x8_gt_s)),
            M::Pcmpgtd => Some(op!(i32x4_gt_s)),
            M::Pminub => Some(op!(i8x16_min_u)),
            M::Pmaxub => Some(op!(i8x16_max_u)),
            M::Pminsw => Some(op!(i16x8_min_s)),
            M::Pmaxsw => Some(op!(i16x8_max_s)),
            M::Pmullw => Some(op!(i16x8_mul)),
            M::Pavgb => Some(op!(i8x16_avgr_u)),
            M::Pavgw => Some(op!(i16x8_avgr_u)),
            M::Unpcklpd | M::Punpcklqdq | M::Movlhps => Some(Bin::Shuffle(interleave(8, false))),
            M::Unpckhpd | M::Punpckhqdq => Some(Bin::Shuffle(interleave(8, true))),
            M::Unpcklps | M::Punpckldq => Some(Bin::Shuffle(interleave(4, false))),
            M::Unpckhps | M::Punpckhdq => Some(Bin::Shuffle(interleave(4, true))),
            M::Punpcklwd => Some(Bin::Shuffle(interleave(2, false))),
            M::Punpckhwd => Some(Bin::Shuffle(interleave(2, true))),
            M::Punpcklbw => Some(Bin::Shuffle(interleave(1, false))),
            M::Punpckhbw => Some(Bin::Shuffle(interleave(1, true))),
            M::Movhlps => {
                // d.lo = s.hi, d.hi kept
                let mut l = [0u8; 16];
                for b in 0..8 {
                    l[b as usize] = 24 + b;
                    l[8 + b as usize] = 8 + b;
                }
                Some(Bin::Shuffle(l))
            }
            M::Shufpd => {
                let imm = ins.immediate8();
                let (lo, hi) = (imm & 1, (imm >> 1) & 1);
                let mut l = [0u8; 16];
                for b in 0..8 {
                    l[b as usize] = lo * 8 + b;
                    l[8 + b as usize] = 16 + hi * 8 + b;
                }
                Some(Bin::Shuffle(l))
            }
            M::Shufps => {
                let imm = ins.immediate8();
                let mut l = [0u8; 16];
                for at in 0..4 {
                    let e = (imm >> (2 * at)) & 3;
                    put32(&mut l, at, if at < 2 { e } else { 4 + e });
                }
                Some(Bin::Shuffle(l))
            }
            _ => None,
        };
        if let Some(bin) = bin {
            let d = Self::xmm_of(ins, 0).ok_or_else(not_yet)?;
            match bin {
                Bin::Op(f) => {
                    self.i().local_get(xmm(d));
                    self.v128_src(ins, 1)?;
                    f(&mut self.i().w());
                }
                Bin::Swapped(f) => {
                    self.v128_src(ins, 1)?;
                    self.i().local_get(xmm(d));
                    f(&mut self.i().w());
                }
                Bin::Shuffle(l) => {
                    self.i().local_get(xmm(d));
                    self.v128_src(ins, 1)?;
                    self.i().i8x16_shuffle(l);
                }
            }
            self.i().local_set(xmm(d));
            return Ok(true);
        }
        match m {
            M::Sqrtpd | M::Sqrtps | M::Cvtdq2pd | M::Cvtps2pd | M::Cvtpd2ps | M::Cvtdq2ps => {
                let d = Self::xmm_of(ins, 0).ok_or_else(not_yet)?;
                self.v128_src(ins, 1)?;
                match m {
                    M::Sqrtpd => self.i().f64x2_sqrt(),
                    M::Sqrtps => self.i().f32x4_sqrt(),
                    M::Cvtdq2pd => self.i().f64x2_convert_low_i32x4_s(),
                    M::Cvtps2pd => self.i().f64x2_promote_low_f32x4(),
                    M::Cvtpd2ps => self.i().f32x4_demote_f64x2_zero(),
                    _ => self.i().f32x4_convert_i32x4_s(),
                };
                self.i().local_set(xmm(d));
            }
            M::Pmuludq => {
                // the low 32 bits of each 64-bit lane, multiplied to 64 bits
                let d = Self::xmm_of(ins, 0).ok_or_else(not_yet)?;
                let low = 0x0000_0000_ffff_ffff_0000_0000_ffff_ffffu128 as i128;
                self.i().local_get(xmm(d)).v128_const(low).v128_and();
                self.v128_src(ins, 1)?;
                self.i()
                    .v128_const(low)
                    .v128_and()
                    .i64x2_mul()
                    .local_set(xmm(d));
            }
            M::Pshufd => {
                let d = Self::xmm_of(ins, 0).ok_or_else(not_yet)?;
                let imm = ins.immediate8();
                let mut l = [0u8; 16];
                for at in 0..4 {
                    put32(&mut l, at, (imm >> (2 * at)) & 3);
                }
                self.v128_src(ins, 1)?;
                self.i().local_tee(V0).local_get(V0).i8x16_shuffle(l);
                self.i().local_set(xmm(d));
            }
            M::Pslldq | M::Psrldq => {
                let d = Self::xmm_of(ins, 0).ok_or_else(not_yet)?;
                let k = ins.immediate8().min(16);
                let mut l = [0u8; 16];
                if m == M::Pslldq {
                    // shuffle(zero, d): byte i = i >= k ? d[i - k] : 0
                    for i in 0..16u8 {
                        l[i as usize] = if i >= k { 16 + i - k } else { 0 };
                    }
                    self.i().v128_const(0).local_get(xmm(d));
                } else {
                    // shuffle(d, zero): byte i = i + k < 16 ? d[i + k] : 0
                    for i in 0..16u8 {
                        l[i as usize] = if i + k < 16 { i + k } else { 16 };
                    }
                    self.i().local_get(xmm(d)).v128_const(0);
                }
                self.i().i8x16_shuffle(l).local_set(xmm(d));
            }
            M::Psllw
            | M::Pslld
            | M::Psllq
            | M::Psrlw
            | M::Psrld
            | M::Psrlq
            | M::Psraw
            | M::Psrad => {
                let d = Self::xmm_of(ins, 0).ok_or_else(not_yet)?;
                if !matches!(ins.op_kind(1), OpKind::Immediate8) {
                    return Err(not_yet());
                }
                let bits: u32 = match m {
                    M::Psllw | M::Psrlw | M::Psraw => 16,
                    M::Pslld | M::Psrld | M::Psrad => 32,
                    _ => 64,
                };
                let k = ins.immediate8() as u32;
                let arith = matches!(m, M::Psraw | M::Psrad);
                if k >= bits && !arith {
                    self.i().v128_const(0).local_set(xmm(d));
                    return Ok(true);
                }
                let k = k.min(bits - 1) as i32;
                self.i().local_get(xmm(d)).i32_const(k);
                match m {
                    M::Psllw => self.i().i16x8_shl(),
                    M::Pslld => self.i().i32x4_shl(),
                    M::Psllq => self.i().i64x2_shl(),
                    M::Psrlw => self.i().i16x8_shr_u(),
                    M::Psrld => self.i().i32x4_shr_u(),
                    M::Psrlq => self.i().i64x2_shr_u(),
                    M::Psraw => self.i().i16x8_shr_s(),
                    _ => self.i().i32x4_shr_s(),
                };
                self.i().local_set(xmm(d));
            }
            M::Movmskpd | M::Movmskps | M::Pmovmskb => {
                let s = Self::xmm_of(ins, 1).ok_or_else(not_yet)?;
                self.i().local_get(xmm(s));
                match m {
                    M::Movmskpd => self.i().i64x2_bitmask(),
                    M::Movmskps => self.i().i32x4_bitmask(),
                    _ => self.i().i8x16_bitmask(),
                };
                self.i().i64_extend_i32_u();
                let w = Self::width(ins, 0);
                self.write(ins, 0, w)?;
            }
            M::Pextrw if ins.op_kind(1) == OpKind::Register => {
                // the word at the immediate's low 3 bits, zero-extended
                let s = Self::xmm_of(ins, 1).ok_or_else(not_yet)?;
                self.i()
                    .local_get(xmm(s))
                    .i16x8_extract_lane_u(ins.immediate8() & 7)
                    .i64_extend_i32_u();
                let w = Self::width(ins, 0);
                self.write(ins, 0, w)?;
            }
            M::Movhpd | M::Movhps | M::Movlpd | M::Movlps => {
                let lane = u8::from(matches!(m, M::Movhpd | M::Movhps));
                match (Self::xmm_of(ins, 0), Self::xmm_of(ins, 1)) {
                    (Some(d), None) if ins.op_kind(1) == OpKind::Memory => {
                        self.i()
                            .local_get(xmm(d))
                            .local_get(EA)
                            .i64_load(mem(1))
                            .i64x2_replace_lane(lane)
                            .local_set(xmm(d));
                    }
                    (None, Some(s)) if ins.op_kind(0) == OpKind::Memory => {
                        self.i()
                            .local_get(EA)
                            .local_get(xmm(s))
                            .i64x2_extract_lane(lane)
                            .i64_store(mem(1));
                    }
                    _ => return Err(not_yet()),
                }
            }
            M::Cmppd | M::Cmpps | M::Cmpsd | M::Cmpss => {
                let d = Self::xmm_of(ins, 0).ok_or_else(not_yet)?;
                let double = matches!(m, M::Cmppd | M::Cmpsd);
                self.v128_src(ins, 1)?;
                self.i().local_set(V1);
                self.i().local_get(xmm(d)).local_set(V0);
                self.compare(ins, ins.immediate8() as u32, double)?;
                if matches!(m, M::Cmppd | M::Cmpps) {
                    self.i().local_set(xmm(d));
                } else {
                    self.merge_low(d, double);
                }
            }
            M::Minsd | M::Maxsd | M::Minss | M::Maxss | M::Sqrtsd | M::Sqrtss => {
                let d = Self::xmm_of(ins, 0).ok_or_else(not_yet)?;
                let double = matches!(m, M::Minsd | M::Maxsd | M::Sqrtsd);
                match m {
                    M::Sqrtsd => {
                        self.v128_src(ins, 1)?;
                        self.i().f64x2_sqrt();
                    }
                    M::Sqrtss => {
                        self.v128_src(ins, 1)?;
                        self.i().f32x4_sqrt();
                    }
                    _ => {
                        self.v128_src(ins, 1)?;
                        self.i().local_get(xmm(d));
                        match m {
                            M::Minsd => self.i().f64x2_pmin(),
                            M::Maxsd => self.i().f64x2_pmax(),
                            M::Minss => self.i().f32x4_pmin(),
                            _ => self.i().f32x4_pmax(),
                        };
                    }
                }
                self.merge_low(d, double);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
