//! The lifter's instruction sink: `wasm_encoder::InstructionSink`'s methods, with the
//! ones every x86 instruction emits several times (locals, globals, constants, branches,
//! calls) encoded inline. wasm-encoder's own encoding of an index or a constant is an
//! out-of-line call and a slice copy per integer, which was the largest single cost of
//! the translation. The bytes are the same.

use wasm_encoder::{BlockType, Ieee64, InstructionSink, MemArg, MemArgTarget};

pub(crate) struct Sink<'a>(pub(crate) &'a mut Vec<u8>);

impl Sink<'_> {
    /// wasm-encoder's sink over the same bytes (for code that takes one).
    pub(crate) fn w(&mut self) -> InstructionSink<'_> {
        InstructionSink::new(self.0)
    }

    #[inline]
    fn u32(&mut self, v: u32) {
        self.u64(u64::from(v));
    }

    #[inline]
    fn u64(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }

    #[inline]
    fn s64(&mut self, mut v: i64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if (v == 0 && b & 0x40 == 0) || (v == -1 && b & 0x40 != 0) {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }

    #[inline]
    fn op_u32(&mut self, op: u8, v: u32) -> &mut Self {
        self.0.push(op);
        self.u32(v);
        self
    }

    #[inline]
    pub(crate) fn local_get(&mut self, l: u32) -> &mut Self {
        self.op_u32(0x20, l)
    }
    #[inline]
    pub(crate) fn local_set(&mut self, l: u32) -> &mut Self {
        self.op_u32(0x21, l)
    }
    #[inline]
    pub(crate) fn local_tee(&mut self, l: u32) -> &mut Self {
        self.op_u32(0x22, l)
    }
    #[inline]
    pub(crate) fn global_get(&mut self, g: u32) -> &mut Self {
        self.op_u32(0x23, g)
    }
    #[inline]
    pub(crate) fn global_set(&mut self, g: u32) -> &mut Self {
        self.op_u32(0x24, g)
    }
    #[inline]
    pub(crate) fn br(&mut self, l: u32) -> &mut Self {
        self.op_u32(0x0c, l)
    }
    #[inline]
    pub(crate) fn br_if(&mut self, l: u32) -> &mut Self {
        self.op_u32(0x0d, l)
    }
    #[inline]
    pub(crate) fn call(&mut self, f: u32) -> &mut Self {
        self.op_u32(0x10, f)
    }
    #[inline]
    pub(crate) fn return_call(&mut self, f: u32) -> &mut Self {
        self.op_u32(0x12, f)
    }
    #[inline]
    pub(crate) fn i32_const(&mut self, x: i32) -> &mut Self {
        self.0.push(0x41);
        self.s64(x as i64);
        self
    }
    #[inline]
    pub(crate) fn i64_const(&mut self, x: i64) -> &mut Self {
        self.0.push(0x42);
        self.s64(x);
        self
    }
    /// `block`, `loop` and `if` without a result (all the lifter opens) are two bytes.
    #[inline]
    fn open(&mut self, op: u8, bt: BlockType) -> &mut Self {
        if matches!(bt, BlockType::Empty) {
            self.0.extend_from_slice(&[op, 0x40]);
        } else {
            match op {
                0x02 => self.w().block(bt),
                0x03 => self.w().loop_(bt),
                _ => self.w().if_(bt),
            };
        }
        self
    }
    #[inline]
    pub(crate) fn block(&mut self, bt: BlockType) -> &mut Self {
        self.open(0x02, bt)
    }
    #[inline]
    pub(crate) fn loop_(&mut self, bt: BlockType) -> &mut Self {
        self.open(0x03, bt)
    }
    #[inline]
    pub(crate) fn if_(&mut self, bt: BlockType) -> &mut Self {
        self.open(0x04, bt)
    }
    #[inline]
    pub(crate) fn end(&mut self) -> &mut Self {
        self.0.push(0x0b);
        self
    }
    pub(crate) fn br_table<V: IntoIterator<Item = u32>>(&mut self, ls: V, l: u32) -> &mut Self
    where
        V::IntoIter: ExactSizeIterator,
    {
        let ls = ls.into_iter();
        self.0.push(0x0e);
        self.u32(ls.len() as u32);
        for t in ls {
            self.u32(t);
        }
        self.u32(l);
        self
    }
}

/// The scalar loads and stores: one opcode byte and the memory argument, inline for
/// memory 0 without an ordering (all the lifter emits), else wasm-encoder's.
macro_rules! memory {
    ($($name:ident = $op:literal;)*) => {
        impl Sink<'_> {
            $(
                #[inline]
                pub(crate) fn $name(&mut self, m: MemArg) -> &mut Self {
                    if m.target == MemArgTarget::Memory(0) && m.ordering.is_none() {
                        self.0.push($op);
                        self.u32(m.align);
                        self.u64(m.offset);
                    } else {
                        self.w().$name(m);
                    }
                    self
                }
            )*
        }
    };
}

memory! {
    f32_load = 0x2a; f64_load = 0x2b; i64_load = 0x29; i32_load16_u = 0x2f;
    i64_load8_u = 0x31; i64_load16_u = 0x33; i64_load32_u = 0x35;
    i32_store16 = 0x3b; i64_store = 0x37; i64_store8 = 0x3c; i64_store16 = 0x3d;
    i64_store32 = 0x3e;
}

/// The one-byte operations the lifter emits most.
macro_rules! one_byte {
    ($($name:ident = $op:literal;)*) => {
        impl Sink<'_> {
            $(
                #[inline]
                pub(crate) fn $name(&mut self) -> &mut Self {
                    self.0.push($op);
                    self
                }
            )*
        }
    };
}

one_byte! {
    unreachable = 0x0;
    return_ = 0xf;
    select = 0x1b;
    i32_eqz = 0x45;
    i32_eq = 0x46;
    i32_ne = 0x47;
    i32_lt_s = 0x48;
    i32_lt_u = 0x49;
    i32_gt_s = 0x4a;
    i32_gt_u = 0x4b;
    i32_le_s = 0x4c;
    i32_le_u = 0x4d;
    i32_ge_s = 0x4e;
    i32_ge_u = 0x4f;
    i32_sub = 0x6b;
    i32_mul = 0x6c;
    i32_and = 0x71;
    i32_or = 0x72;
    i32_xor = 0x73;
    i32_shr_u = 0x76;
    i32_rotl = 0x77;
    i32_rotr = 0x78;
    i64_eqz = 0x50;
    i64_eq = 0x51;
    i64_ne = 0x52;
    i64_lt_s = 0x53;
    i64_lt_u = 0x54;
    i64_gt_s = 0x55;
    i64_gt_u = 0x56;
    i64_le_s = 0x57;
    i64_le_u = 0x58;
    i64_ge_s = 0x59;
    i64_ge_u = 0x5a;
    i64_clz = 0x79;
    i64_ctz = 0x7a;
    i64_popcnt = 0x7b;
    i64_add = 0x7c;
    i64_sub = 0x7d;
    i64_mul = 0x7e;
    i64_div_s = 0x7f;
    i64_div_u = 0x80;
    i64_rem_s = 0x81;
    i64_rem_u = 0x82;
    i64_and = 0x83;
    i64_or = 0x84;
    i64_xor = 0x85;
    i64_shl = 0x86;
    i64_shr_s = 0x87;
    i64_shr_u = 0x88;
    i64_rotl = 0x89;
    i64_rotr = 0x8a;
    i32_wrap_i64 = 0xa7;
    i64_extend_i32_u = 0xad;
    i64_extend8_s = 0xc2;
    i64_extend16_s = 0xc3;
    i64_extend32_s = 0xc4;
}

/// The rest: wasm-encoder's encodings.
macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        impl Sink<'_> {
            $(
                #[inline]
                pub(crate) fn $name(&mut self, $($arg: $ty),*) -> &mut Self {
                    self.w().$name($($arg),*);
                    self
                }
            )*
        }
    };
}

forward! {
    else_();
    call_indirect(table: u32, ty: u32); return_call_indirect(table: u32, ty: u32);
    v128_load(m: MemArg); v128_load32_zero(m: MemArg); v128_load64_zero(m: MemArg);
    v128_store(m: MemArg);
    f64_const(x: Ieee64); v128_const(x: i128);
    f32x4_extract_lane(lane: u8); f32x4_replace_lane(lane: u8);
    f64x2_extract_lane(lane: u8); f64x2_replace_lane(lane: u8);
    i16x8_extract_lane_u(lane: u8);
    i32x4_extract_lane(lane: u8); i32x4_replace_lane(lane: u8);
    i64x2_extract_lane(lane: u8); i64x2_replace_lane(lane: u8);
    i8x16_shuffle(lanes: [u8; 16]);
    f32_add(); f32_convert_i32_s(); f32_convert_i64_s(); f32_demote_f64(); f32_div();
    f32_mul(); f32_sub();
    f32x4_convert_i32x4_s(); f32x4_demote_f64x2_zero(); f32x4_pmax(); f32x4_pmin();
    f32x4_sqrt(); f64x2_convert_low_i32x4_s(); f64x2_pmax(); f64x2_pmin();
    f64x2_promote_low_f32x4(); f64x2_sqrt();
    f64_add(); f64_convert_i32_s(); f64_convert_i64_s(); f64_div(); f64_eq(); f64_ge();
    f64_gt(); f64_lt(); f64_mul(); f64_ne(); f64_nearest(); f64_promote_f32(); f64_sub();
    i16x8_shl(); i16x8_shr_s(); i16x8_shr_u();
    i32x4_bitmask(); i32x4_shl(); i32x4_shr_s(); i32x4_shr_u();

    i64_trunc_sat_f64_s();
    i64x2_bitmask(); i64x2_mul(); i64x2_shl(); i64x2_shr_u(); i8x16_bitmask();
    v128_and(); v128_andnot(); v128_not(); v128_or(); v128_xor();
}
