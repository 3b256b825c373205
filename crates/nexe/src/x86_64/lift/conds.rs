//! Conditions computed from the instruction that set the flags.
//!
//! The flag record is lazy (see `flags.rs`): any reader could call the module's
//! `eflags` helper and take bits of its answer, a call and dozens of operations for a
//! `cmp; jl`. Where the lifter knows statically which kind of instruction wrote the
//! record last (in the same block, with nothing in between that may have written it
//! otherwise), a condition is instead a wasm comparison of the record's own locals:
//! `cmp; jl` is a signed compare of `a` and `b`, `test; je` a test of `r`. The record
//! is written as before (a later block or a callee may read it), so every other reader
//! still finds it; forms not specialized here still go through the helper.

use super::*;

/// The last writer of the flag record, as the lifter knows it at the current point.
#[derive(Clone, Copy)]
pub(super) struct Setter {
    /// The record's `op` (`kind << 2 | width`), or [`flags::RAW`].
    op: i32,
    /// The record's `c` is a carry-in (adc, sbb) or a kept CF (inc, dec), not 0.
    carry: bool,
    /// The block nesting level it was recorded at: leaving that level (out of a
    /// conditional or loop that may not have run it) forgets it.
    level: u32,
}

/// A relation between two integers.
#[derive(Clone, Copy)]
enum Rel {
    LtU,
    LeU,
    LtS,
    LeS,
}

impl Em<'_> {
    /// Nothing is known about the record (a block start, after a call).
    pub(super) fn flags_unknown(&mut self) {
        self.setter = None;
    }

    /// The record was just written with `op` (`carry`: its `c` may be non-zero).
    pub(super) fn flags_set(&mut self, op: i32, carry: bool) {
        self.setter = Some(Setter {
            op,
            carry,
            level: self.level,
        });
    }

    /// After a construct closed: a record written inside it may not have been.
    pub(super) fn flags_leave(&mut self) {
        if self.setter.is_some_and(|s| s.level > self.level) {
            self.setter = None;
        }
    }

    /// Marks the record RAW (its finished RFLAGS bits already in FR).
    pub(super) fn raw_flags(&mut self) {
        self.i().i32_const(flags::RAW).local_set(FOP);
        self.flags_set(flags::RAW, false);
    }

    /// The record is known to be RAW: RFLAGS is FR itself, no helper call.
    pub(super) fn flags_raw(&self) -> bool {
        self.setter.is_some_and(|s| s.op == flags::RAW)
    }

    /// Pushes CF (i32 0/1).
    pub(super) fn carry_flag(&mut self) {
        if !self.known_cond(ConditionCode::b) {
            self.eflags();
            self.i().i32_const(flags::CF).i32_and();
        }
    }

    /// Pushes condition `cc` (i32 0/1) computed from the known setter's operands, if
    /// there is one and this form is specialized; false (nothing emitted) otherwise.
    pub(super) fn known_cond(&mut self, cc: ConditionCode) -> bool {
        use flags::{ADD, DEC, INC, LOGIC, SUB};
        use ConditionCode as C;
        let Some(s) = self.setter else {
            return false;
        };
        let kind = s.op >> 2;
        let w = 1u32 << (s.op & 3);
        let (base, neg) = match cc {
            C::no => (C::o, true),
            C::ae => (C::b, true),
            C::ne => (C::e, true),
            C::ns => (C::s, true),
            C::np => (C::p, true),
            C::a => (C::be, true),
            C::ge => (C::l, true),
            C::g => (C::le, true),
            C::None => return false,
            c => (c, false),
        };
        let arith = matches!(kind, ADD | SUB | LOGIC | INC | DEC);
        let ok = match base {
            // ZF, SF and PF come from the result for every kind but RAW.
            C::e | C::s | C::p => kind != flags::RAW,
            _ => arith,
        };
        if !ok {
            return false;
        }
        // sub, cmp, neg and dec compare their operands as they are (no carry-in)
        let plain_sub = (kind == SUB && !s.carry) || kind == DEC;
        match base {
            C::e => {
                self.i().local_get(FR).i64_eqz();
                self.not_if(neg);
            }
            C::s => {
                self.i().local_get(FR);
                self.msb(w);
                self.not_if(neg);
            }
            C::p => {
                // PF: an even number of ones in the low byte
                self.i()
                    .local_get(FR)
                    .i64_const(0xff)
                    .i64_and()
                    .i64_popcnt()
                    .i32_wrap_i64()
                    .i32_const(1)
                    .i32_and();
                self.not_if(!neg);
            }
            C::b => match kind {
                SUB if !s.carry => self.rel(FA, FB, w, Rel::LtU, neg),
                ADD if !s.carry => self.rel(FR, FA, w, Rel::LtU, neg),
                LOGIC => {
                    self.i().i32_const(neg as i32);
                }
                _ => {
                    self.cf(kind);
                    self.not_if(neg);
                }
            },
            C::be => match kind {
                SUB if !s.carry => self.rel(FA, FB, w, Rel::LeU, neg),
                LOGIC => {
                    self.i().local_get(FR).i64_eqz();
                    self.not_if(neg);
                }
                _ => {
                    self.cf(kind);
                    self.i().local_get(FR).i64_eqz().i32_or();
                    self.not_if(neg);
                }
            },
            C::o => {
                if kind == LOGIC {
                    self.i().i32_const(neg as i32);
                } else {
                    self.of_bits(kind);
                    self.msb(w);
                    self.not_if(neg);
                }
            }
            C::l => {
                if plain_sub {
                    self.rel(FA, FB, w, Rel::LtS, neg);
                } else {
                    // SF ^ OF: the sign of r ^ (OF's bits)
                    self.i().local_get(FR);
                    if kind != LOGIC {
                        self.of_bits(kind);
                        self.i().i64_xor();
                    }
                    self.msb(w);
                    self.not_if(neg);
                }
            }
            _ => {
                // le: (SF ^ OF) | ZF
                if plain_sub {
                    self.rel(FA, FB, w, Rel::LeS, neg);
                } else if kind == LOGIC {
                    // OF = 0: r <= 0 signed
                    self.i().local_get(FR);
                    self.sext_top(w);
                    if w == 4 {
                        self.i().i32_const(0);
                    } else {
                        self.i().i64_const(0);
                    }
                    self.rel_op(w == 4, Rel::LeS, neg);
                } else {
                    self.i().local_get(FR);
                    self.of_bits(kind);
                    self.i().i64_xor();
                    self.msb(w);
                    self.i().local_get(FR).i64_eqz().i32_or();
                    self.not_if(neg);
                }
            }
        }
        true
    }

    fn not_if(&mut self, neg: bool) {
        if neg {
            self.i().i32_eqz();
        }
    }

    /// The top bit of the `w`-byte value (zero-extended i64) on the stack, as i32 0/1.
    fn msb(&mut self, w: u32) {
        self.i()
            .i64_const(8 * w as i64 - 1)
            .i64_shr_u()
            .i32_wrap_i64();
    }

    /// Sign-extends the zero-extended `w`-byte i64 on the stack for a signed compare:
    /// 32-bit values become i32 (compared as such), others stay i64.
    fn sext_top(&mut self, w: u32) {
        match w {
            1 => {
                self.i().i64_extend8_s();
            }
            2 => {
                self.i().i64_extend16_s();
            }
            4 => {
                self.i().i32_wrap_i64();
            }
            _ => {}
        }
    }

    /// Pushes `x rel y` (negated if `neg`) for `w`-byte values in locals `x` and `y`.
    fn rel(&mut self, x: u32, y: u32, w: u32, r: Rel, neg: bool) {
        let signed = matches!(r, Rel::LtS | Rel::LeS);
        self.i().local_get(x);
        if signed {
            self.sext_top(w);
        }
        self.i().local_get(y);
        if signed {
            self.sext_top(w);
        }
        self.rel_op(signed && w == 4, r, neg);
    }

    fn rel_op(&mut self, i32: bool, r: Rel, neg: bool) {
        let mut i = self.i();
        match (i32, r, neg) {
            (false, Rel::LtU, false) => i.i64_lt_u(),
            (false, Rel::LtU, true) => i.i64_ge_u(),
            (false, Rel::LeU, false) => i.i64_le_u(),
            (false, Rel::LeU, true) => i.i64_gt_u(),
            (false, Rel::LtS, false) => i.i64_lt_s(),
            (false, Rel::LtS, true) => i.i64_ge_s(),
            (false, Rel::LeS, false) => i.i64_le_s(),
            (false, Rel::LeS, true) => i.i64_gt_s(),
            (true, Rel::LtS, false) => i.i32_lt_s(),
            (true, Rel::LtS, true) => i.i32_ge_s(),
            (true, Rel::LeS, false) => i.i32_le_s(),
            (true, Rel::LeS, true) => i.i32_gt_s(),
            (true, Rel::LtU, false) => i.i32_lt_u(),
            (true, Rel::LtU, true) => i.i32_ge_u(),
            (true, Rel::LeU, false) => i.i32_le_u(),
            (true, Rel::LeU, true) => i.i32_gt_u(),
        };
    }

    /// Pushes CF (i32 0/1) of an ADD, SUB (either with a carry-in), INC or DEC record.
    fn cf(&mut self, kind: i32) {
        match kind {
            flags::ADD => {
                // c ? r <= a : r < a
                self.i()
                    .local_get(FR)
                    .local_get(FA)
                    .i64_lt_u()
                    .local_get(FR)
                    .local_get(FA)
                    .i64_eq()
                    .local_get(FC)
                    .i32_wrap_i64()
                    .i32_and()
                    .i32_or();
            }
            flags::SUB => {
                // c ? a <= b : a < b
                self.i()
                    .local_get(FA)
                    .local_get(FB)
                    .i64_lt_u()
                    .local_get(FA)
                    .local_get(FB)
                    .i64_eq()
                    .local_get(FC)
                    .i32_wrap_i64()
                    .i32_and()
                    .i32_or();
            }
            // inc and dec keep CF in c
            _ => {
                self.i().local_get(FC).i32_wrap_i64();
            }
        }
    }

    /// Pushes an i64 whose top bit (of the width) is OF: `(a ^ r) & (b ^ r)` for the
    /// additions, `(a ^ b) & (a ^ r)` for the subtractions.
    fn of_bits(&mut self, kind: i32) {
        if matches!(kind, flags::ADD | flags::INC) {
            self.i()
                .local_get(FA)
                .local_get(FR)
                .i64_xor()
                .local_get(FB)
                .local_get(FR)
                .i64_xor()
                .i64_and();
        } else {
            self.i()
                .local_get(FA)
                .local_get(FB)
                .i64_xor()
                .local_get(FA)
                .local_get(FR)
                .i64_xor()
                .i64_and();
        }
    }
}
