//! Lazy flags: a flag-setting instruction only records what it did (the kind of operation,
//! its width, operands, result, and a carry-in or kept CF); the flags are computed where
//! a later instruction reads them, by [`emit_eflags`], a helper function of the module.
//!
//! The record is five wasm values (`op`, `a`, `b`, `r`, `c`), locals inside a function and
//! globals across calls. `op` is `kind << 2 | width`, width 0..3 for 8, 16, 32, 64 bits.
//! Operations whose flags are cheaper computed at once (multiplication, rotates) store
//! the finished RFLAGS bits as kind [`RAW`] in `r`.

use wasm_encoder::{Function, ValType};

pub const RAW: i32 = 0;
/// `r = a + b + c` (add: c = 0; adc: c = CF in).
pub const ADD: i32 = 1;
/// `r = a - b - c` (sub, cmp, neg as 0 - a; sbb: c = CF in).
pub const SUB: i32 = 2;
/// and, or, xor, test: CF = OF = 0.
pub const LOGIC: i32 = 3;
/// inc: as ADD with b = 1, but CF is the kept `c`.
pub const INC: i32 = 4;
/// dec: as SUB with b = 1, but CF is the kept `c`.
pub const DEC: i32 = 5;
/// shl by `b` (1..): CF the last bit out, OF for counts of 1.
pub const SHL: i32 = 6;
pub const SHR: i32 = 7;
pub const SAR: i32 = 8;

pub const CF: i32 = 1;
pub const PF: i32 = 1 << 2;
pub const AF: i32 = 1 << 4;
pub const ZF: i32 = 1 << 6;
pub const SF: i32 = 1 << 7;
pub const OF: i32 = 1 << 11;

/// The flags x86 defines after each kind (the rest are undefined and not compared by
/// tests): all six except AF after shifts.
pub const STATUS: i32 = CF | PF | AF | ZF | SF | OF;

/// `op` for a kind and an operand width in bytes.
pub fn op(kind: i32, width_bytes: u32) -> i32 {
    let w = match width_bytes {
        1 => 0,
        2 => 1,
        4 => 2,
        _ => 3,
    };
    kind << 2 | w
}

/// The helper `(op i32, a i64, b i64, r i64, c i64) -> i32`: RFLAGS' status bits of the
/// recorded operation.
pub fn emit_eflags() -> Function {
    // params 0 op, 1 a, 2 b, 3 r, 4 c; locals 5 w, 6 m, 7 s (i64), 8 k, 9 cf, 10 of, 11 af (i32)
    let (op_, a, b, r, c, w, m, s, k, cf, of, af) = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    let mut f = Function::new([(3, ValType::I64), (4, ValType::I32)]);
    let mut i = f.instructions();
    // RAW: the bits themselves.
    i.local_get(op_).i32_const(2).i32_shr_u().local_tee(k);
    i.i32_eqz().if_(wasm_encoder::BlockType::Empty);
    i.local_get(r).i32_wrap_i64().return_();
    i.end();
    // w = 8 << (op & 3); m = w == 64 ? -1 : (1 << w) - 1; s = 1 << (w - 1)
    i.i64_const(8)
        .local_get(op_)
        .i32_const(3)
        .i32_and()
        .i64_extend_i32_u()
        .i64_shl()
        .local_set(w);
    i.i64_const(-1)
        .i64_const(1)
        .local_get(w)
        .i64_shl()
        .i64_const(1)
        .i64_sub()
        .local_get(w)
        .i64_const(64)
        .i64_eq()
        .select()
        .local_set(m);
    i.i64_const(1)
        .local_get(w)
        .i64_const(1)
        .i64_sub()
        .i64_shl()
        .local_set(s);
    for x in [a, b, r] {
        i.local_get(x).local_get(m).i64_and().local_set(x);
    }
    // AF (for the arithmetic kinds) = bit 4 of a ^ b ^ r.
    i.local_get(a)
        .local_get(b)
        .i64_xor()
        .local_get(r)
        .i64_xor()
        .i64_const(4)
        .i64_shr_u()
        .i32_wrap_i64()
        .i32_const(1)
        .i32_and()
        .local_set(af);
    // kinds ADD and INC
    i.local_get(k)
        .i32_const(ADD)
        .i32_eq()
        .local_get(k)
        .i32_const(INC)
        .i32_eq()
        .i32_or()
        .if_(wasm_encoder::BlockType::Empty);
    {
        // cf = c ? r <= a : r < a   (INC: cf = c)
        i.local_get(r)
            .local_get(a)
            .i64_le_u()
            .local_get(r)
            .local_get(a)
            .i64_lt_u()
            .local_get(c)
            .i64_const(0)
            .i64_ne()
            .select()
            .local_get(c)
            .i32_wrap_i64()
            .local_get(k)
            .i32_const(INC)
            .i32_ne()
            .select()
            .local_set(cf);
        // of = ((a ^ r) & (b ^ r) & s) != 0
        i.local_get(a)
            .local_get(r)
            .i64_xor()
            .local_get(b)
            .local_get(r)
            .i64_xor()
            .i64_and()
            .local_get(s)
            .i64_and()
            .i64_const(0)
            .i64_ne()
            .local_set(of);
    }
    i.end();
    // kinds SUB and DEC
    i.local_get(k)
        .i32_const(SUB)
        .i32_eq()
        .local_get(k)
        .i32_const(DEC)
        .i32_eq()
        .i32_or()
        .if_(wasm_encoder::BlockType::Empty);
    {
        // cf = c ? a <= b : a < b   (DEC: cf = c)
        i.local_get(a)
            .local_get(b)
            .i64_le_u()
            .local_get(a)
            .local_get(b)
            .i64_lt_u()
            .local_get(c)
            .i64_const(0)
            .i64_ne()
            .select()
            .local_get(c)
            .i32_wrap_i64()
            .local_get(k)
            .i32_const(DEC)
            .i32_ne()
            .select()
            .local_set(cf);
        // of = ((a ^ b) & (a ^ r) & s) != 0
        i.local_get(a)
            .local_get(b)
            .i64_xor()
            .local_get(a)
            .local_get(r)
            .i64_xor()
            .i64_and()
            .local_get(s)
            .i64_and()
            .i64_const(0)
            .i64_ne()
            .local_set(of);
    }
    i.end();
    // LOGIC and the shifts: AF is 0 (undefined after shifts).
    i.local_get(k)
        .i32_const(LOGIC)
        .i32_ge_u()
        .local_get(k)
        .i32_const(INC)
        .i32_ne()
        .i32_and()
        .local_get(k)
        .i32_const(DEC)
        .i32_ne()
        .i32_and()
        .if_(wasm_encoder::BlockType::Empty);
    i.i32_const(0).local_set(af);
    i.end();
    // SHL: cf = (a >> (w - b)) & 1; of = msb(r) ^ cf
    i.local_get(k)
        .i32_const(SHL)
        .i32_eq()
        .if_(wasm_encoder::BlockType::Empty);
    i.local_get(a)
        .local_get(w)
        .local_get(b)
        .i64_sub()
        .i64_shr_u()
        .i32_wrap_i64()
        .i32_const(1)
        .i32_and()
        .local_tee(cf);
    i.local_get(r)
        .local_get(s)
        .i64_and()
        .i64_const(0)
        .i64_ne()
        .i32_xor()
        .local_set(of);
    i.end();
    // SHR: cf = (a >> (b - 1)) & 1; of = msb(a)
    i.local_get(k)
        .i32_const(SHR)
        .i32_eq()
        .if_(wasm_encoder::BlockType::Empty);
    i.local_get(a)
        .local_get(b)
        .i64_const(1)
        .i64_sub()
        .i64_shr_u()
        .i32_wrap_i64()
        .i32_const(1)
        .i32_and()
        .local_set(cf);
    i.local_get(a)
        .local_get(s)
        .i64_and()
        .i64_const(0)
        .i64_ne()
        .local_set(of);
    i.end();
    // SAR: cf = (sext(a) >> min(b - 1, 63)) & 1; of = 0
    i.local_get(k)
        .i32_const(SAR)
        .i32_eq()
        .if_(wasm_encoder::BlockType::Empty);
    i.local_get(a)
        .local_get(s)
        .i64_xor()
        .local_get(s)
        .i64_sub()
        .local_get(b)
        .i64_const(1)
        .i64_sub()
        .i64_const(63)
        .local_get(b)
        .i64_const(1)
        .i64_sub()
        .i64_const(63)
        .i64_lt_u()
        .select()
        .i64_shr_s()
        .i32_wrap_i64()
        .i32_const(1)
        .i32_and()
        .local_set(cf);
    i.end();
    // ZF, SF, PF from r; then CF, AF, OF.
    i.local_get(r).i64_eqz().i32_const(6).i32_shl();
    i.local_get(r)
        .local_get(s)
        .i64_and()
        .i64_const(0)
        .i64_ne()
        .i32_const(7)
        .i32_shl()
        .i32_or();
    i.local_get(r)
        .i64_const(0xff)
        .i64_and()
        .i64_popcnt()
        .i32_wrap_i64()
        .i32_const(1)
        .i32_and()
        .i32_eqz()
        .i32_const(2)
        .i32_shl()
        .i32_or();
    i.local_get(cf).i32_or();
    i.local_get(af).i32_const(4).i32_shl().i32_or();
    i.local_get(of).i32_const(11).i32_shl().i32_or();
    i.end();
    f
}

/// The helper `(a i64, b i64) -> i64`: the high 64 bits of the unsigned 128-bit product
/// (core wasm has no widening multiply).
pub fn emit_mulhu() -> Function {
    // params 0 a, 1 b; locals 2 al, 3 ah, 4 bl, 5 bh, 6 t, 7 u
    let (a, b, al, ah, bl, bh, t, u) = (0, 1, 2, 3, 4, 5, 6, 7);
    let mut f = Function::new([(6, ValType::I64)]);
    let mut i = f.instructions();
    let lo = 0xffff_ffffi64;
    i.local_get(a).i64_const(lo).i64_and().local_set(al);
    i.local_get(a).i64_const(32).i64_shr_u().local_set(ah);
    i.local_get(b).i64_const(lo).i64_and().local_set(bl);
    i.local_get(b).i64_const(32).i64_shr_u().local_set(bh);
    // t = ah*bl + (al*bl >> 32)
    i.local_get(ah)
        .local_get(bl)
        .i64_mul()
        .local_get(al)
        .local_get(bl)
        .i64_mul()
        .i64_const(32)
        .i64_shr_u()
        .i64_add()
        .local_set(t);
    // u = al*bh + (t & lo)
    i.local_get(al)
        .local_get(bh)
        .i64_mul()
        .local_get(t)
        .i64_const(lo)
        .i64_and()
        .i64_add()
        .local_set(u);
    // hi = ah*bh + (t >> 32) + (u >> 32)
    i.local_get(ah)
        .local_get(bh)
        .i64_mul()
        .local_get(t)
        .i64_const(32)
        .i64_shr_u()
        .i64_add()
        .local_get(u)
        .i64_const(32)
        .i64_shr_u()
        .i64_add();
    i.end();
    f
}

/// The helper `(hi i64, lo i64, d i64) -> (q i64, r i64)`: unsigned 128-by-64 division,
/// trapping as x86's #DE does when `d` is 0 or the quotient does not fit 64 bits.
/// Restoring division, one bit a step (64 steps): `div` with a non-zero high half is rare.
pub fn emit_udiv128() -> Function {
    // params 0 hi, 1 lo, 2 d; locals 3 q, 4 n (i64), 5 top (i32)
    let (hi, lo, d, q, n, top) = (0, 1, 2, 3, 4, 5);
    let mut f = Function::new([(2, ValType::I64), (1, ValType::I32)]);
    let mut i = f.instructions();
    i.local_get(hi)
        .local_get(d)
        .i64_ge_u()
        .if_(wasm_encoder::BlockType::Empty)
        .unreachable()
        .end();
    i.i64_const(64).local_set(n);
    i.loop_(wasm_encoder::BlockType::Empty);
    // top = hi >> 63; hi:lo <<= 1
    i.local_get(hi)
        .i64_const(63)
        .i64_shr_u()
        .i32_wrap_i64()
        .local_set(top);
    i.local_get(hi)
        .i64_const(1)
        .i64_shl()
        .local_get(lo)
        .i64_const(63)
        .i64_shr_u()
        .i64_or()
        .local_set(hi);
    i.local_get(lo).i64_const(1).i64_shl().local_set(lo);
    i.local_get(q).i64_const(1).i64_shl().local_set(q);
    // if top or hi >= d: hi -= d; q |= 1
    i.local_get(top)
        .local_get(hi)
        .local_get(d)
        .i64_ge_u()
        .i32_or()
        .if_(wasm_encoder::BlockType::Empty);
    i.local_get(hi).local_get(d).i64_sub().local_set(hi);
    i.local_get(q).i64_const(1).i64_or().local_set(q);
    i.end();
    i.local_get(n)
        .i64_const(1)
        .i64_sub()
        .local_tee(n)
        .i64_eqz()
        .i32_eqz()
        .br_if(0);
    i.end();
    i.local_get(q).local_get(hi);
    i.end();
    f
}
