//! The body being written, and the peepholes that rewrite its last bytes: the emitter's
//! output state, apart from what it writes (`inst.rs`, `structurize.rs`, ...).
//!
//! - `local.set l` then at once `local.get l` becomes `local.tee l` ([`Code::get_local`]);
//! - a branch condition read as a boolean only, right after an integer compare, inverts
//!   the compare or drops its trailing `i32.eqz` instead of appending one
//!   ([`Code::negate_cond`], [`Code::drop_eqz`]).

use super::locals::Local;
use super::sink::Sink;

/// Opcode of `i32.eqz`.
const I32_EQZ: u8 = 0x45;

/// A function body under construction: the local declarations, then the code.
pub(crate) struct Code {
    pub bytes: Vec<u8>,
    /// The last statement's `local.set`: where its opcode is, the body length right
    /// after it, and the local. A `local.get` of that local emitted right there turns the
    /// set into a `local.tee` instead ([`Code::get_local`]).
    tee: (usize, usize, Local),
    /// The body length right after the last operator of a compare (an integer compare's
    /// opcode, or the `i32.eqz` an integer or unordered float compare ends with), whose
    /// 0/1 result is the value on top of the stack while nothing follows it:
    /// [`Code::negate_cond`] and [`Code::drop_eqz`] rewrite that last byte instead of
    /// appending an `i32.eqz`.
    cmp_end: usize,
}

impl Code {
    /// A body that starts with `bytes` (the local declarations).
    pub fn new(bytes: Vec<u8>) -> Code {
        Code {
            bytes,
            tee: (0, usize::MAX, Local::NONE),
            cmp_end: usize::MAX,
        }
    }

    /// Appends instructions (`sink.rs`).
    #[inline(always)]
    pub fn sink(&mut self) -> Sink<'_> {
        Sink::new(&mut self.bytes)
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// `local.set l` ending a statement, remembered for [`Code::get_local`].
    #[inline]
    pub fn set_local(&mut self, l: Local) {
        let at = self.bytes.len();
        self.sink().local_set(l);
        self.tee = (at, self.bytes.len(), l);
    }

    /// `local.get l` of an instruction value. Right after the statement that set `l`
    /// (nothing emitted in between) the `local.set` becomes a `local.tee`: the same
    /// value stays on the stack, one operator fewer to encode and to validate.
    ///
    /// With shared locals (`locals.rs`) the `local.get` right there still reads the value
    /// just set: a value read at this point is live here, so its life covers the
    /// statement that just set `l`; two values whose lives meet never share a local, so
    /// the value read is the one that statement wrote.
    #[inline(always)]
    pub fn get_local(&mut self, l: Local) {
        let (at, end, local) = self.tee;
        if end == self.bytes.len() && local == l {
            // Same immediate, opcode 0x21 (local.set) → 0x22 (local.tee).
            self.bytes[at] = 0x22;
            self.tee.1 = usize::MAX;
        } else {
            self.sink().local_get(l);
        }
    }

    /// Marks the end of a compare whose 0/1 result is now on top of the stack.
    #[inline(always)]
    pub fn compare_ends(&mut self) {
        self.cmp_end = self.bytes.len();
    }

    /// Removes `n` bytes of code at `at` (an operator that turned out not to be needed),
    /// keeping the positions recorded past it in step.
    pub fn remove(&mut self, at: usize, n: usize) {
        let len = self.bytes.len();
        self.bytes.copy_within(at + n..len, at);
        self.bytes.truncate(len - n);
        if self.tee.1 != usize::MAX && self.tee.0 > at {
            self.tee.0 -= n;
            self.tee.1 -= n;
        }
        self.cmp_end = usize::MAX;
    }

    /// Negates the branch condition on top of the stack (`i32.eqz`), for a `br_if` or
    /// `if` that reads it as a boolean only. Right after an integer compare
    /// ([`Code::cmp_end`]) the compare itself is rewritten: its inverse predicate
    /// (`a < b` → `a >= b`: exact for integers, both give 0 or 1), or, if it ends with an
    /// `i32.eqz`, without that `eqz` (`x; i32.eqz; i32.eqz` tests what `x` does). Float
    /// compares are never flipped (with a NaN, `!(a < b)` is not `a >= b`); those that
    /// end with an `i32.eqz` (the unordered ones) only lose it.
    pub fn negate_cond(&mut self) {
        if !self.drop_eqz() {
            let n = self.bytes.len();
            if self.cmp_end == n {
                if let Some(inv) = n
                    .checked_sub(1)
                    .and_then(|i| inverse_compare(self.bytes[i]))
                {
                    self.bytes[n - 1] = inv;
                    return;
                }
            }
            self.sink().i32_eqz();
        }
    }

    /// Removes the `i32.eqz` that ends the compare just emitted (`x == 0`, or an
    /// unordered float compare), if there is one (see [`Code::cmp_end`]): the stack then
    /// holds a value that is zero exactly when the compare was true. For a condition read
    /// as a boolean only.
    pub fn drop_eqz(&mut self) -> bool {
        let n = self.bytes.len();
        if self.cmp_end != n || n == 0 || self.bytes[n - 1] != I32_EQZ {
            return false;
        }
        self.bytes.truncate(n - 1);
        self.cmp_end = usize::MAX;
        // A `local.set` ending at or after the new end is no longer where `get_local`
        // would find it (none does: the `eqz` had an operand pushed after any set).
        if self.tee.1 >= n - 1 {
            self.tee.1 = usize::MAX;
        }
        true
    }
}

/// The integer compare opcode with the inverse predicate (`i32.eq` ↔ `i32.ne`,
/// `lt_s` ↔ `ge_s`, `gt_u` ↔ `le_u`, ..., the same for `i64`); `None` for any other byte
/// (`i32.eqz`, `i64.eqz` and float compares have no one-operator inverse).
fn inverse_compare(op: u8) -> Option<u8> {
    // 0x46..=0x4f: i32 eq ne lt_s lt_u gt_s gt_u le_s le_u ge_s ge_u; 0x51..=0x5a: i64.
    let base = match op {
        0x46..=0x4f => 0x46,
        0x51..=0x5a => 0x51,
        _ => return None,
    };
    const INVERSE: [u8; 10] = [1, 0, 8, 9, 6, 7, 4, 5, 2, 3];
    Some(base + INVERSE[(op - base) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    const L0: Local = Local::new(0);
    const L1: Local = Local::new(1);
    const L2: Local = Local::new(2);
    const L3: Local = Local::new(3);
    const L4: Local = Local::new(4);

    fn code() -> Code {
        Code::new(Vec::new())
    }

    #[test]
    fn get_right_after_set_becomes_tee() {
        let mut c = code();
        c.sink().i32_const(1);
        c.set_local(L3);
        c.get_local(L3);
        // i32.const 1; local.tee 3
        assert_eq!(c.bytes, [0x41, 1, 0x22, 3]);
        // A second get of the same local is a plain get.
        c.get_local(L3);
        assert_eq!(c.bytes, [0x41, 1, 0x22, 3, 0x20, 3]);
    }

    #[test]
    fn no_tee_for_another_local_or_after_other_code() {
        let mut c = code();
        c.sink().i32_const(1);
        c.set_local(L3);
        c.get_local(L4);
        assert_eq!(c.bytes, [0x41, 1, 0x21, 3, 0x20, 4]);
        let mut c = code();
        c.sink().i32_const(1);
        c.set_local(L3);
        c.sink().i32_const(0);
        c.get_local(L3);
        assert_eq!(c.bytes, [0x41, 1, 0x21, 3, 0x41, 0, 0x20, 3]);
    }

    #[test]
    fn negating_a_compare_inverts_it() {
        let mut c = code();
        c.sink().local_get(L0).local_get(L1).i32_lt_s();
        c.compare_ends();
        c.negate_cond();
        // lt_s (0x48) → ge_s (0x4e), no eqz.
        assert_eq!(c.bytes, [0x20, 0, 0x20, 1, 0x4e]);
        // i64.gt_u (0x56) → i64.le_u (0x58).
        let mut c = code();
        c.sink().local_get(L0).local_get(L1).i64_gt_u();
        c.compare_ends();
        c.negate_cond();
        assert_eq!(c.bytes, [0x20, 0, 0x20, 1, 0x58]);
    }

    #[test]
    fn negating_an_eqz_drops_it() {
        let mut c = code();
        c.sink().local_get(L0).i32_eqz();
        c.compare_ends();
        c.negate_cond();
        assert_eq!(c.bytes, [0x20, 0]);
    }

    #[test]
    fn negating_a_float_compare_or_a_stale_one_appends_eqz() {
        let mut c = code();
        c.sink().local_get(L0).local_get(L1).f64_lt();
        c.compare_ends();
        c.negate_cond();
        assert_eq!(c.bytes, [0x20, 0, 0x20, 1, 0x63, I32_EQZ]);
        // A compare followed by other code is not the condition any more.
        let mut c = code();
        c.sink().local_get(L0).local_get(L1).i32_lt_s();
        c.compare_ends();
        c.sink().i32_const(1).i32_and();
        c.negate_cond();
        assert_eq!(*c.bytes.last().unwrap(), I32_EQZ);
    }

    #[test]
    fn every_inverse_is_an_involution_on_compares() {
        for op in (0x46..=0x4f).chain(0x51..=0x5a) {
            let inv = inverse_compare(op).unwrap();
            assert_ne!(inv, op);
            assert_eq!(inverse_compare(inv), Some(op));
        }
        assert_eq!(inverse_compare(I32_EQZ), None);
        assert_eq!(inverse_compare(0x50), None); // i64.eqz
    }

    #[test]
    fn removing_code_keeps_the_tee_in_step() {
        let mut c = code();
        c.sink().block(wasm_encoder::BlockType::Empty); // 2 bytes at 0
        c.sink().i32_const(1);
        c.set_local(L2);
        c.remove(0, 2);
        c.get_local(L2);
        assert_eq!(c.bytes, [0x41, 1, 0x22, 2]);
    }
}
