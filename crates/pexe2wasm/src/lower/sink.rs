//! The instruction encoder of the lowering: [`Sink`] appends wasm instructions to a
//! function body's `Vec<u8>`.
//!
//! Why hand-written: emitting instructions is the hottest path of a conversion (iguana's
//! ~1.36M operators), and `wasm_encoder::InstructionSink` spends far more than the bytes
//! need: one out-of-line call per instruction, then every immediate through its generic
//! LEB128 encoder into a stack buffer and `Vec::extend_from_slice` (a `memcpy` call of a
//! variable length). Here the operators the lowering emits often (locals, globals,
//! constants, arithmetic, compares, conversions, loads and stores, control flow, calls)
//! are `#[inline]` methods that write the opcode and a small immediate in one fixed-size
//! append, and longer LEB128s through a fixed-size buffer. Rare operators (SIMD, atomics,
//! exceptions) keep going through `InstructionSink` on the same `Vec` ([`Sink::wasm`]).
//!
//! The methods have `InstructionSink`'s names and immediates and produce its exact bytes
//! (the tests below compare both, operator by operator and at LEB128 edge values).
//!
//! The LEB128 encoders stay hand-written for the same reason: on 20M immediates of the
//! lowering's mix (80% below 128, 15% below 16384), `leb128fmt::encode_u32` plus
//! `extend_from_slice` (what `wasm_encoder::Encode for u32` does) took 1226M instructions
//! (callgrind) and 0.66-0.72 s against 391M and 0.32-0.34 s for `leb_u32`: 3x. Emission's
//! per-section and per-body LEB128s go through `wasm_encoder::Encode`.

use wasm_encoder::{BlockType, Catch, Ieee32, Ieee64, InstructionSink, MemArg, MemArgTarget};

use super::locals::Local;

/// Appends the unsigned LEB128 of `v` (1 to 5 bytes).
#[inline]
pub(crate) fn leb_u32(out: &mut Vec<u8>, v: u32) {
    if v < 0x80 {
        out.push(v as u8);
    } else if v < 0x4000 {
        out.extend_from_slice(&[v as u8 | 0x80, (v >> 7) as u8]);
    } else {
        leb_u32_long(out, v);
    }
}

/// Appends the unsigned LEB128 of `v` (1 to 10 bytes).
#[inline]
pub(crate) fn leb_u64(out: &mut Vec<u8>, v: u64) {
    if v < 0x80 {
        out.push(v as u8);
    } else {
        leb_u64_long(out, v);
    }
}

/// Appends the signed LEB128 of `v` (1 to 10 bytes).
#[inline]
pub(crate) fn leb_i64(out: &mut Vec<u8>, v: i64) {
    if (-64..64).contains(&v) {
        out.push(v as u8 & 0x7f);
    } else {
        leb_i64_long(out, v);
    }
}

// The long forms, for any value: the length comes from the count of significant bits;
// every 7-bit group of the widest form is written with its continuation bit, the last
// kept group's bit is cleared, and the `Vec` is cut to length. One fixed-size append, no
// loop over the bytes and no `memcpy` call.
macro_rules! leb_long {
    ($name:ident, $t:ty, $bytes:literal, $significant:expr) => {
        fn $name(out: &mut Vec<u8>, v: $t) {
            let n = $significant(v).div_ceil(7).max(1) as usize;
            let mut buf = [0u8; $bytes];
            for (i, b) in buf.iter_mut().enumerate() {
                *b = (v >> (7 * i)) as u8 | 0x80;
            }
            buf[n - 1] &= 0x7f;
            let len = out.len();
            out.extend_from_slice(&buf);
            out.truncate(len + n);
        }
    };
}
leb_long!(leb_u32_long, u32, 5, |v: u32| 32 - v.leading_zeros());
leb_long!(leb_u64_long, u64, 10, |v: u64| 64 - v.leading_zeros());
// Signed: the magnitude's bits plus the sign bit (`!v` counts a negative's).
leb_long!(leb_i32_long, i32, 5, |v: i32| 33
    - (if v < 0 { !v } else { v }).leading_zeros());
leb_long!(leb_i64_long, i64, 10, |v: i64| 65
    - (if v < 0 { !v } else { v }).leading_zeros());

/// Appends instructions to a function body (see the module documentation).
pub(crate) struct Sink<'a> {
    code: &'a mut Vec<u8>,
}

/// Operators without immediates: one byte each.
macro_rules! plain {
    ($($name:ident = $op:literal,)*) => {
        $(
            #[inline]
            pub fn $name(&mut self) -> &mut Self {
                self.code.push($op);
                self
            }
        )*
        /// Every operator of [`plain!`] (the tests compare them with `InstructionSink`).
        #[cfg(test)]
        const PLAIN: &'static [(&'static str, fn(&mut Sink<'_>), fn(&mut InstructionSink<'_>))] = &[
            $((stringify!($name),
               |s: &mut Sink<'_>| { s.$name(); },
               |s: &mut InstructionSink<'_>| { s.$name(); }),)*
        ];
    };
}

/// Operators with the 0xFC prefix and no immediates (saturating truncation).
macro_rules! prefixed {
    ($($name:ident = $op:literal,)*) => {
        $(
            #[inline]
            pub fn $name(&mut self) -> &mut Self {
                self.code.extend_from_slice(&[0xFC, $op]);
                self
            }
        )*
        #[cfg(test)]
        const PREFIXED: &'static [(&'static str, fn(&mut Sink<'_>), fn(&mut InstructionSink<'_>))] = &[
            $((stringify!($name),
               |s: &mut Sink<'_>| { s.$name(); },
               |s: &mut InstructionSink<'_>| { s.$name(); }),)*
        ];
    };
}

/// Operators with one index: `$table` lists them for the tests, the index of type `$ty`
/// (`u32`, or a [`Local`]), made from a `u32` by `$make`.
macro_rules! indexed {
    ($table:ident: $ty:ty = $make:path; $($name:ident = $op:literal,)*) => {
        $(
            #[inline]
            pub fn $name(&mut self, i: $ty) -> &mut Self {
                self.op_u32($op, u32::from(i))
            }
        )*
        #[cfg(test)]
        const $table: &'static [(&'static str, fn(&mut Sink<'_>, u32), fn(&mut InstructionSink<'_>, u32))] = &[
            $((stringify!($name),
               |s: &mut Sink<'_>, i: u32| { s.$name($make(i)); },
               |s: &mut InstructionSink<'_>, i: u32| { s.$name(i); }),)*
        ];
    };
}

/// Loads and stores: opcode and memarg.
macro_rules! memory {
    ($($name:ident = $op:literal,)*) => {
        $(
            #[inline]
            pub fn $name(&mut self, m: MemArg) -> &mut Self {
                self.op_memarg($op, m)
            }
        )*
        #[cfg(test)]
        const MEMORY: &'static [(&'static str, fn(&mut Sink<'_>, MemArg), fn(&mut InstructionSink<'_>, MemArg))] = &[
            $((stringify!($name),
               |s: &mut Sink<'_>, m: MemArg| { s.$name(m); },
               |s: &mut InstructionSink<'_>, m: MemArg| { s.$name(m); }),)*
        ];
    };
}

/// Rare operators, encoded by `InstructionSink` (same name and immediates).
macro_rules! delegated {
    ($($name:ident($($arg:ident: $t:ty),*);)*) => {$(
        pub fn $name(&mut self, $($arg: $t),*) -> &mut Self {
            self.wasm().$name($($arg),*);
            self
        }
    )*};
}

impl<'a> Sink<'a> {
    pub fn new(code: &'a mut Vec<u8>) -> Self {
        Sink { code }
    }

    /// `wasm_encoder`'s sink over the same bytes, for operators not written out here.
    pub fn wasm(&mut self) -> InstructionSink<'_> {
        InstructionSink::new(self.code)
    }

    /// An opcode and a u32 immediate. Inlined at every use: the common immediate below
    /// 128 is one 2-byte append; longer ones take the call.
    #[inline(always)]
    fn op_u32(&mut self, op: u8, v: u32) -> &mut Self {
        if v < 0x80 {
            self.code.extend_from_slice(&[op, v as u8]);
        } else {
            self.op_u32_long(op, v);
        }
        self
    }

    #[inline(never)]
    fn op_u32_long(&mut self, op: u8, v: u32) {
        if v < 0x4000 {
            self.code
                .extend_from_slice(&[op, v as u8 | 0x80, (v >> 7) as u8]);
        } else {
            self.code.push(op);
            leb_u32_long(self.code, v);
        }
    }

    /// An opcode and a memarg. Memory 0 without an ordering is alignment then offset; a
    /// small offset makes it one inlined 3-byte append. Other memargs go through
    /// `wasm_encoder`.
    #[inline(always)]
    fn op_memarg(&mut self, op: u8, m: MemArg) -> &mut Self {
        if m.offset < 0x80
            && m.align < 0x80
            && m.ordering.is_none()
            && matches!(m.target, MemArgTarget::Memory(0))
        {
            self.code
                .extend_from_slice(&[op, m.align as u8, m.offset as u8]);
        } else {
            self.op_memarg_long(op, m);
        }
        self
    }

    #[inline(never)]
    fn op_memarg_long(&mut self, op: u8, m: MemArg) {
        self.code.push(op);
        if m.align < 0x80 && m.ordering.is_none() && matches!(m.target, MemArgTarget::Memory(0)) {
            self.code.push(m.align as u8);
            leb_u64(self.code, m.offset);
        } else {
            wasm_encoder::Encode::encode(&m, self.code);
        }
    }

    #[inline]
    fn block_type(&mut self, op: u8, bt: BlockType) -> &mut Self {
        if let BlockType::Empty = bt {
            self.code.extend_from_slice(&[op, 0x40]);
        } else {
            self.code.push(op);
            wasm_encoder::Encode::encode(&bt, self.code);
        }
        self
    }

    #[inline]
    pub fn block(&mut self, bt: BlockType) -> &mut Self {
        self.block_type(0x02, bt)
    }

    #[inline]
    pub fn loop_(&mut self, bt: BlockType) -> &mut Self {
        self.block_type(0x03, bt)
    }

    #[inline]
    pub fn if_(&mut self, bt: BlockType) -> &mut Self {
        self.block_type(0x04, bt)
    }

    /// `br_table`: the targets, then the default.
    pub fn br_table(&mut self, targets: &[u32], default: u32) -> &mut Self {
        self.code.push(0x0E);
        leb_u32(self.code, targets.len() as u32);
        for &t in targets {
            leb_u32(self.code, t);
        }
        leb_u32(self.code, default);
        self
    }

    /// `call_indirect`: the type index comes first in the encoding, then the table.
    #[inline]
    pub fn call_indirect(&mut self, table: u32, ty: u32) -> &mut Self {
        self.op_u32(0x11, ty);
        leb_u32(self.code, table);
        self
    }

    #[inline(always)]
    pub fn i32_const(&mut self, v: i32) -> &mut Self {
        if (-64..64).contains(&v) {
            self.code.extend_from_slice(&[0x41, v as u8 & 0x7f]);
        } else {
            self.i32_const_long(v);
        }
        self
    }

    #[inline(never)]
    fn i32_const_long(&mut self, v: i32) {
        self.code.push(0x41);
        leb_i32_long(self.code, v);
    }

    #[inline]
    pub fn i64_const(&mut self, v: i64) -> &mut Self {
        self.code.push(0x42);
        leb_i64(self.code, v);
        self
    }

    #[inline]
    pub fn f32_const(&mut self, v: Ieee32) -> &mut Self {
        let b = v.bits().to_le_bytes();
        self.code.extend_from_slice(&[0x43, b[0], b[1], b[2], b[3]]);
        self
    }

    #[inline]
    pub fn f64_const(&mut self, v: Ieee64) -> &mut Self {
        self.code.push(0x44);
        self.code.extend_from_slice(&v.bits().to_le_bytes());
        self
    }

    /// `memory.copy dst src` (bulk memory).
    pub fn memory_copy(&mut self, dst: u32, src: u32) -> &mut Self {
        self.code.extend_from_slice(&[0xFC, 0x0A]);
        leb_u32(self.code, dst);
        leb_u32(self.code, src);
        self
    }

    /// `memory.fill mem` (bulk memory).
    pub fn memory_fill(&mut self, mem: u32) -> &mut Self {
        self.code.extend_from_slice(&[0xFC, 0x0B]);
        leb_u32(self.code, mem);
        self
    }

    /// `try_table` with its catch clauses (exception handling).
    pub fn try_table<V>(&mut self, bt: BlockType, catches: V) -> &mut Self
    where
        V: IntoIterator<Item = Catch>,
        V::IntoIter: ExactSizeIterator,
    {
        self.wasm().try_table(bt, catches);
        self
    }

    /// `i8x16.shuffle` with its 16 lane indices.
    pub fn i8x16_shuffle(&mut self, lanes: [u8; 16]) -> &mut Self {
        self.wasm().i8x16_shuffle(lanes);
        self
    }

    plain! {
        unreachable = 0x00,
        else_ = 0x05,
        end = 0x0B,
        return_ = 0x0F,
        drop = 0x1A,
        select = 0x1B,
        i32_eqz = 0x45,
        i32_eq = 0x46,
        i32_ne = 0x47,
        i32_lt_s = 0x48,
        i32_lt_u = 0x49,
        i32_gt_s = 0x4A,
        i32_gt_u = 0x4B,
        i32_le_s = 0x4C,
        i32_le_u = 0x4D,
        i32_ge_s = 0x4E,
        i32_ge_u = 0x4F,
        i64_eqz = 0x50,
        i64_eq = 0x51,
        i64_ne = 0x52,
        i64_lt_s = 0x53,
        i64_lt_u = 0x54,
        i64_gt_s = 0x55,
        i64_gt_u = 0x56,
        i64_le_s = 0x57,
        i64_le_u = 0x58,
        i64_ge_s = 0x59,
        i64_ge_u = 0x5A,
        f32_eq = 0x5B,
        f32_ne = 0x5C,
        f32_lt = 0x5D,
        f32_gt = 0x5E,
        f32_le = 0x5F,
        f32_ge = 0x60,
        f64_eq = 0x61,
        f64_ne = 0x62,
        f64_lt = 0x63,
        f64_gt = 0x64,
        f64_le = 0x65,
        f64_ge = 0x66,
        i32_clz = 0x67,
        i32_ctz = 0x68,
        i32_popcnt = 0x69,
        i32_add = 0x6A,
        i32_sub = 0x6B,
        i32_mul = 0x6C,
        i32_div_s = 0x6D,
        i32_div_u = 0x6E,
        i32_rem_s = 0x6F,
        i32_rem_u = 0x70,
        i32_and = 0x71,
        i32_or = 0x72,
        i32_xor = 0x73,
        i32_shl = 0x74,
        i32_shr_s = 0x75,
        i32_shr_u = 0x76,
        i32_rotl = 0x77,
        i32_rotr = 0x78,
        i64_clz = 0x79,
        i64_ctz = 0x7A,
        i64_popcnt = 0x7B,
        i64_add = 0x7C,
        i64_sub = 0x7D,
        i64_mul = 0x7E,
        i64_div_s = 0x7F,
        i64_div_u = 0x80,
        i64_rem_s = 0x81,
        i64_rem_u = 0x82,
        i64_and = 0x83,
        i64_or = 0x84,
        i64_xor = 0x85,
        i64_shl = 0x86,
        i64_shr_s = 0x87,
        i64_shr_u = 0x88,
        i64_rotl = 0x89,
        f32_abs = 0x8B,
        f32_sqrt = 0x91,
        f32_add = 0x92,
        f32_sub = 0x93,
        f32_mul = 0x94,
        f32_div = 0x95,
        f64_abs = 0x99,
        f64_sqrt = 0x9F,
        f64_add = 0xA0,
        f64_sub = 0xA1,
        f64_mul = 0xA2,
        f64_div = 0xA3,
        i32_wrap_i64 = 0xA7,
        i64_extend_i32_s = 0xAC,
        i64_extend_i32_u = 0xAD,
        f32_convert_i32_s = 0xB2,
        f32_convert_i32_u = 0xB3,
        f32_convert_i64_s = 0xB4,
        f32_convert_i64_u = 0xB5,
        f32_demote_f64 = 0xB6,
        f64_convert_i32_s = 0xB7,
        f64_convert_i32_u = 0xB8,
        f64_convert_i64_s = 0xB9,
        f64_convert_i64_u = 0xBA,
        f64_promote_f32 = 0xBB,
        i32_reinterpret_f32 = 0xBC,
        i64_reinterpret_f64 = 0xBD,
        f32_reinterpret_i32 = 0xBE,
        f64_reinterpret_i64 = 0xBF,
        i32_extend8_s = 0xC0,
        i32_extend16_s = 0xC1,
    }

    prefixed! {
        i32_trunc_sat_f32_s = 0x00,
        i32_trunc_sat_f32_u = 0x01,
        i32_trunc_sat_f64_s = 0x02,
        i32_trunc_sat_f64_u = 0x03,
        i64_trunc_sat_f32_s = 0x04,
        i64_trunc_sat_f32_u = 0x05,
        i64_trunc_sat_f64_s = 0x06,
        i64_trunc_sat_f64_u = 0x07,
    }

    indexed! {
        INDEXED: u32 = u32::from;
        br = 0x0C,
        br_if = 0x0D,
        call = 0x10,
        global_get = 0x23,
        global_set = 0x24,
    }

    indexed! {
        LOCALS: Local = Local::new;
        local_get = 0x20,
        local_set = 0x21,
        local_tee = 0x22,
    }

    memory! {
        i32_load = 0x28,
        i64_load = 0x29,
        f32_load = 0x2A,
        f64_load = 0x2B,
        i32_load8_u = 0x2D,
        i32_load16_u = 0x2F,
        i32_store = 0x36,
        i64_store = 0x37,
        f32_store = 0x38,
        f64_store = 0x39,
        i32_store8 = 0x3A,
        i32_store16 = 0x3B,
    }

    // Exceptions (setjmp/longjmp), atomics with threads, SIMD.
    delegated! {
        throw(tag: u32);
        atomic_fence(o: wasm_encoder::Ordering);
        f32x4_abs();
        f32x4_add();
        f32x4_convert_i32x4_s();
        f32x4_convert_i32x4_u();
        f32x4_div();
        f32x4_eq();
        f32x4_extract_lane(lane: u8);
        f32x4_ge();
        f32x4_gt();
        f32x4_le();
        f32x4_lt();
        f32x4_mul();
        f32x4_ne();
        f32x4_replace_lane(lane: u8);
        f32x4_splat();
        f32x4_sub();
        i16x8_add();
        i16x8_all_true();
        i16x8_bitmask();
        i16x8_eq();
        i16x8_extmul_low_i8x16_u();
        i16x8_extmul_high_i8x16_u();
        i16x8_extract_lane_s(lane: u8);
        i16x8_extract_lane_u(lane: u8);
        i16x8_ge_s();
        i16x8_ge_u();
        i16x8_gt_s();
        i16x8_gt_u();
        i16x8_le_s();
        i16x8_le_u();
        i16x8_lt_s();
        i16x8_lt_u();
        i16x8_mul();
        i16x8_ne();
        i16x8_neg();
        i16x8_replace_lane(lane: u8);
        i16x8_shl();
        i16x8_shr_s();
        i16x8_shr_u();
        i16x8_splat();
        i16x8_sub();
        i32_atomic_load(m: MemArg);
        i32_atomic_load16_u(m: MemArg);
        i32_atomic_load8_u(m: MemArg);
        i32_atomic_rmw16_add_u(m: MemArg);
        i32_atomic_rmw16_and_u(m: MemArg);
        i32_atomic_rmw16_cmpxchg_u(m: MemArg);
        i32_atomic_rmw16_or_u(m: MemArg);
        i32_atomic_rmw16_sub_u(m: MemArg);
        i32_atomic_rmw16_xchg_u(m: MemArg);
        i32_atomic_rmw16_xor_u(m: MemArg);
        i32_atomic_rmw8_add_u(m: MemArg);
        i32_atomic_rmw8_and_u(m: MemArg);
        i32_atomic_rmw8_cmpxchg_u(m: MemArg);
        i32_atomic_rmw8_or_u(m: MemArg);
        i32_atomic_rmw8_sub_u(m: MemArg);
        i32_atomic_rmw8_xchg_u(m: MemArg);
        i32_atomic_rmw8_xor_u(m: MemArg);
        i32_atomic_rmw_add(m: MemArg);
        i32_atomic_rmw_and(m: MemArg);
        i32_atomic_rmw_cmpxchg(m: MemArg);
        i32_atomic_rmw_or(m: MemArg);
        i32_atomic_rmw_sub(m: MemArg);
        i32_atomic_rmw_xchg(m: MemArg);
        i32_atomic_rmw_xor(m: MemArg);
        i32_atomic_store(m: MemArg);
        i32_atomic_store16(m: MemArg);
        i32_atomic_store8(m: MemArg);
        i32x4_add();
        i32x4_all_true();
        i32x4_eq();
        i32x4_extract_lane(lane: u8);
        i32x4_ge_s();
        i32x4_ge_u();
        i32x4_gt_s();
        i32x4_gt_u();
        i32x4_le_s();
        i32x4_le_u();
        i32x4_lt_s();
        i32x4_lt_u();
        i32x4_mul();
        i32x4_ne();
        i32x4_neg();
        i32x4_replace_lane(lane: u8);
        i32x4_shl();
        i32x4_shr_s();
        i32x4_shr_u();
        i32x4_splat();
        i32x4_sub();
        i32x4_trunc_sat_f32x4_s();
        i32x4_trunc_sat_f32x4_u();
        i64_atomic_load(m: MemArg);
        i64_atomic_rmw_add(m: MemArg);
        i64_atomic_rmw_and(m: MemArg);
        i64_atomic_rmw_cmpxchg(m: MemArg);
        i64_atomic_rmw_or(m: MemArg);
        i64_atomic_rmw_sub(m: MemArg);
        i64_atomic_rmw_xchg(m: MemArg);
        i64_atomic_rmw_xor(m: MemArg);
        i64_atomic_store(m: MemArg);
        i8x16_add();
        i8x16_all_true();
        i8x16_bitmask();
        i8x16_eq();
        i8x16_extract_lane_s(lane: u8);
        i8x16_extract_lane_u(lane: u8);
        i8x16_ge_s();
        i8x16_ge_u();
        i8x16_gt_s();
        i8x16_gt_u();
        i8x16_le_s();
        i8x16_le_u();
        i8x16_lt_s();
        i8x16_lt_u();
        i8x16_ne();
        i8x16_neg();
        i8x16_replace_lane(lane: u8);
        i8x16_shl();
        i8x16_shr_s();
        i8x16_shr_u();
        i8x16_splat();
        i8x16_sub();
        i8x16_swizzle();
        v128_and();
        v128_bitselect();
        v128_const(x: i128);
        v128_load(m: MemArg);
        v128_not();
        v128_or();
        v128_store(m: MemArg);
        v128_xor();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::{Encode, ValType};

    /// The bytes `f` writes with wasm_encoder's sink.
    fn reference(f: impl FnOnce(&mut InstructionSink<'_>)) -> Vec<u8> {
        let mut v = Vec::new();
        f(&mut InstructionSink::new(&mut v));
        v
    }

    fn ours(f: impl FnOnce(&mut Sink<'_>)) -> Vec<u8> {
        // Something already in the buffer: appends must not disturb it.
        let mut v = vec![0xAA];
        f(&mut Sink::new(&mut v));
        assert_eq!(v[0], 0xAA);
        v.remove(0);
        v
    }

    const U32S: &[u32] = &[
        0,
        1,
        63,
        64,
        127,
        128,
        129,
        255,
        16383,
        16384,
        (1 << 21) - 1,
        1 << 21,
        (1 << 28) - 1,
        1 << 28,
        i32::MAX as u32,
        u32::MAX - 1,
        u32::MAX,
    ];
    const I64S: &[i64] = &[
        0,
        1,
        -1,
        63,
        64,
        -64,
        -65,
        127,
        128,
        -128,
        -129,
        8191,
        8192,
        -8192,
        -8193,
        i32::MIN as i64,
        i32::MIN as i64 + 1,
        i32::MAX as i64,
        u32::MAX as i64,
        i64::MIN,
        i64::MIN + 1,
        i64::MAX,
        i64::MAX - 1,
    ];

    #[test]
    fn leb128_matches_wasm_encoder() {
        for &v in U32S {
            let mut a = Vec::new();
            leb_u32(&mut a, v);
            let mut b = Vec::new();
            v.encode(&mut b);
            assert_eq!(a, b, "u32 {v}");
            let mut a = Vec::new();
            leb_u64(&mut a, v as u64);
            assert_eq!(a, b, "u64 {v}");
        }
        for v in [u64::MAX, u64::MAX >> 1, 1 << 63, (1 << 35) + 3] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            leb_u64(&mut a, v);
            v.encode(&mut b);
            assert_eq!(a, b, "u64 {v}");
        }
        for &v in I64S {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            leb_i64(&mut a, v);
            v.encode(&mut b);
            assert_eq!(a, b, "i64 {v}");
            if let Ok(w) = i32::try_from(v) {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                leb_i32_long(&mut a, w);
                w.encode(&mut b);
                assert_eq!(a, b, "i32 {w}");
            }
        }
        // Spot checks of the encoding itself.
        let enc = |v: i64| {
            let mut a = Vec::new();
            leb_i64(&mut a, v);
            a
        };
        assert_eq!(enc(-1), [0x7f]);
        assert_eq!(enc(64), [0xc0, 0x00]);
        assert_eq!(enc(-65), [0xbf, 0x7f]);
        let mut a = Vec::new();
        leb_u32(&mut a, u32::MAX);
        assert_eq!(a, [0xff, 0xff, 0xff, 0xff, 0x0f]);
    }

    #[test]
    fn operators_match_wasm_encoder() {
        for (name, a, b) in Sink::PLAIN.iter().chain(Sink::PREFIXED) {
            assert_eq!(ours(a), reference(b), "{name}");
        }
        for (name, a, b) in Sink::INDEXED.iter().chain(Sink::LOCALS) {
            for &i in U32S {
                assert_eq!(ours(|s| a(s, i)), reference(|s| b(s, i)), "{name} {i}");
            }
        }
        for (name, a, b) in Sink::MEMORY {
            for &offset in &[0u64, 1, 127, 128, 4096, u32::MAX as u64, u64::MAX] {
                for align in [0, 1, 2, 3, 200] {
                    let mut mems = vec![MemArg {
                        offset,
                        align,
                        target: MemArgTarget::Memory(0),
                        ordering: None,
                    }];
                    mems.push(MemArg {
                        target: MemArgTarget::Memory(3),
                        ..mems[0]
                    });
                    mems.push(MemArg {
                        ordering: Some(wasm_encoder::MemArgOrdering::Op(
                            wasm_encoder::Ordering::SeqCst,
                        )),
                        ..mems[0]
                    });
                    for m in mems {
                        assert_eq!(
                            ours(|s| a(s, m)),
                            reference(|s| b(s, m)),
                            "{name} {offset} {align}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn immediates_match_wasm_encoder() {
        for &v in I64S {
            assert_eq!(
                ours(|s| {
                    s.i64_const(v);
                }),
                reference(|s| {
                    s.i64_const(v);
                }),
                "i64.const {v}"
            );
            let w = v as i32;
            assert_eq!(
                ours(|s| {
                    s.i32_const(w);
                }),
                reference(|s| {
                    s.i32_const(w);
                }),
                "i32.const {w}"
            );
            let (f, d) = (Ieee32::new(v as u32), Ieee64::new(v as u64));
            assert_eq!(
                ours(|s| {
                    s.f32_const(f).f64_const(d);
                }),
                reference(|s| {
                    s.f32_const(f).f64_const(d);
                }),
                "float consts {v}"
            );
        }
        for &i in U32S {
            assert_eq!(
                ours(|s| {
                    s.call_indirect(i % 3, i).memory_copy(i, 0).memory_fill(i);
                }),
                reference(|s| {
                    s.call_indirect(i % 3, i).memory_copy(i, 0).memory_fill(i);
                }),
                "{i}"
            );
        }
        let tables: [&[u32]; 4] = [&[], &[0], &[1, 200, 3], &[u32::MAX; 130]];
        for t in tables {
            assert_eq!(
                ours(|s| {
                    s.br_table(t, 129);
                }),
                reference(|s| {
                    s.br_table(t.iter().copied(), 129);
                }),
                "br_table of {}",
                t.len()
            );
        }
        for bt in [
            BlockType::Empty,
            BlockType::Result(ValType::I32),
            BlockType::Result(ValType::V128),
            BlockType::FunctionType(0),
            BlockType::FunctionType(64),
            BlockType::FunctionType(100_000),
        ] {
            assert_eq!(
                ours(|s| {
                    s.block(bt).loop_(bt).if_(bt);
                }),
                reference(|s| {
                    s.block(bt).loop_(bt).if_(bt);
                }),
                "{bt:?}"
            );
        }
        // Delegated operators still land in the same buffer, in order.
        let catches = || [Catch::One { tag: 2, label: 0 }];
        assert_eq!(
            ours(|s| {
                s.local_get(Local::new(1))
                    .try_table(BlockType::Empty, catches())
                    .throw(2)
                    .i8x16_shuffle([3; 16])
                    .end();
            }),
            reference(|s| {
                s.local_get(1)
                    .try_table(BlockType::Empty, catches())
                    .throw(2)
                    .i8x16_shuffle([3; 16])
                    .end();
            })
        );
    }
}
