//! Raw bit I/O: fixed-width fields, VBR fields and 32-bit alignment, LSB first, as the LLVM
//! bitstream container defines them. Written by hand because the container is small, hot
//! (every byte of a pexe passes through here) and no maintained crate reads PNaCl's flavour.

/// Reads bits from a byte slice, least significant bit of each byte first. Keeps up to 64
/// unread bits in a register so the common read is a compare, a mask and a shift.
#[derive(Clone)]
pub struct BitReader<'a> {
    data: &'a [u8],
    /// Next byte of `data` to load into `word`.
    next_byte: usize,
    /// Unread bits, lowest first.
    word: u64,
    /// How many bits of `word` are unread.
    bits: u32,
    len_bits: u64,
}

/// The reader ran out of input; `needed` is how many more bits the read wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eof {
    pub needed: u64,
}

/// A VBR field was malformed: too many continuation chunks for a 64-bit value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VbrError {
    Eof(Eof),
    Overflow,
}

impl From<Eof> for VbrError {
    fn from(e: Eof) -> Self {
        VbrError::Eof(e)
    }
}

#[inline]
fn low_bits(v: u64, n: u32) -> u64 {
    if n >= 64 {
        v
    } else {
        v & ((1u64 << n) - 1)
    }
}

impl<'a> BitReader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        BitReader {
            data,
            next_byte: 0,
            word: 0,
            bits: 0,
            len_bits: data.len() as u64 * 8,
        }
    }

    /// Current bit position.
    #[inline]
    pub fn pos(&self) -> u64 {
        self.next_byte as u64 * 8 - self.bits as u64
    }

    /// Total length in bits.
    #[inline]
    pub fn len_bits(&self) -> u64 {
        self.len_bits
    }

    #[inline]
    pub fn remaining(&self) -> u64 {
        self.len_bits - self.pos()
    }

    #[inline]
    pub fn at_end(&self) -> bool {
        self.pos() >= self.len_bits
    }

    /// Loads the next (up to) 8 bytes into the empty register.
    #[inline]
    fn refill(&mut self) {
        debug_assert_eq!(self.bits, 0);
        let rest = &self.data[self.next_byte..];
        if rest.len() >= 8 {
            self.word = u64::from_le_bytes(rest[..8].try_into().unwrap());
            self.bits = 64;
            self.next_byte += 8;
        } else {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.word = u64::from_le_bytes(buf);
            self.bits = rest.len() as u32 * 8;
            self.next_byte += rest.len();
        }
    }

    /// Moves to an absolute bit position (must be within the input).
    pub fn seek(&mut self, bit: u64) -> Result<(), Eof> {
        if bit > self.len_bits {
            return Err(Eof {
                needed: bit - self.len_bits,
            });
        }
        self.next_byte = (bit / 8) as usize;
        self.bits = 0;
        self.word = 0;
        self.refill();
        let skip = (bit % 8) as u32;
        self.word >>= skip;
        self.bits -= skip;
        Ok(())
    }

    /// Reads a fixed-width field of `n` bits (0..=64).
    #[inline]
    pub fn read(&mut self, n: u32) -> Result<u64, Eof> {
        debug_assert!(n <= 64);
        if n <= self.bits && n < 64 {
            let v = self.word & ((1u64 << n) - 1);
            self.word >>= n;
            self.bits -= n;
            return Ok(v);
        }
        // Refill from a full 8-byte load when possible: the register's bits are the low
        // part of the result, the new word supplies the rest.
        if n < 64 && self.next_byte + 8 <= self.data.len() {
            let new = u64::from_le_bytes(
                self.data[self.next_byte..self.next_byte + 8]
                    .try_into()
                    .unwrap(),
            );
            let have = self.bits;
            let need = n - have;
            let lo = self.word;
            let hi = new & ((1u64 << need) - 1);
            self.word = new >> need;
            self.bits = 64 - need;
            self.next_byte += 8;
            return Ok(lo | (hi << have));
        }
        self.read_slow(n)
    }

    #[cold]
    fn read_slow(&mut self, n: u32) -> Result<u64, Eof> {
        if n == 0 {
            return Ok(0);
        }
        let remaining = self.remaining();
        if (n as u64) > remaining {
            return Err(Eof {
                needed: n as u64 - remaining,
            });
        }
        // Take what the register holds, refill, take the rest.
        let have = self.bits;
        let lo = low_bits(self.word, have);
        self.word = 0;
        self.bits = 0;
        self.refill();
        let need = n - have;
        let hi = low_bits(self.word, need);
        self.word = if need >= 64 { 0 } else { self.word >> need };
        self.bits -= need;
        Ok(if have == 0 { hi } else { lo | (hi << have) })
    }

    /// Reads a variable-bit-rate field with chunks of `n` bits (2..=64).
    #[inline(always)]
    pub fn read_vbr(&mut self, n: u32) -> Result<u64, VbrError> {
        debug_assert!((2..=64).contains(&n));
        let hi_bit = 1u64 << (n - 1);
        let mask = hi_bit - 1;
        let mut piece = self.read(n)?;
        if piece & hi_bit == 0 {
            return Ok(piece);
        }
        let mut result = piece & mask;
        let mut shift = n - 1;
        loop {
            piece = self.read(n)?;
            let data = piece & mask;
            if shift < 64 {
                if data >> (64 - shift) != 0 {
                    return Err(VbrError::Overflow);
                }
                result |= data << shift;
            } else if data != 0 {
                return Err(VbrError::Overflow);
            }
            if piece & hi_bit == 0 {
                return Ok(result);
            }
            shift += n - 1;
            // A 64-bit value needs at most ceil(64 / (n-1)) chunks; allow one zero chunk of
            // slack (some writers pad) and then give up rather than loop over garbage.
            if shift > 64 + (n - 1) {
                return Err(VbrError::Overflow);
            }
        }
    }

    /// Skips to the next multiple of 32 bits.
    pub fn align32(&mut self) -> Result<(), Eof> {
        let pos = self.pos();
        let aligned = (pos + 31) & !31;
        if aligned > self.len_bits {
            return Err(Eof {
                needed: aligned - self.len_bits,
            });
        }
        let skip = (aligned - pos) as u32;
        if skip <= self.bits && skip < 64 {
            self.word >>= skip;
            self.bits -= skip;
            Ok(())
        } else {
            self.seek(aligned)
        }
    }
}

/// Writes bits, least significant first, into a growing byte buffer.
#[derive(Default, Clone)]
pub struct BitWriter {
    out: Vec<u8>,
    /// Pending bits not yet flushed to `out`.
    acc: u64,
    acc_bits: u32,
}

impl BitWriter {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(bytes: usize) -> Self {
        BitWriter {
            out: Vec::with_capacity(bytes),
            acc: 0,
            acc_bits: 0,
        }
    }

    /// Current position in bits.
    #[inline]
    pub fn pos(&self) -> u64 {
        self.out.len() as u64 * 8 + self.acc_bits as u64
    }

    /// Writes the low `n` bits of `v` (n in 0..=64). Higher bits of `v` must be zero.
    #[inline]
    pub fn write(&mut self, v: u64, n: u32) {
        debug_assert!(n <= 64);
        debug_assert!(n == 64 || v >> n == 0, "value {v} does not fit in {n} bits");
        if n == 0 {
            return;
        }
        if n > 32 {
            self.write(v & 0xffff_ffff, 32);
            self.write(v >> 32, n - 32);
            return;
        }
        self.acc |= v << self.acc_bits;
        self.acc_bits += n;
        while self.acc_bits >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.acc_bits -= 8;
        }
    }

    /// Writes `v` as a VBR field with `n`-bit chunks (n in 2..=64), canonically (no extra
    /// zero chunks), as every known writer does.
    #[inline]
    pub fn write_vbr(&mut self, mut v: u64, n: u32) {
        debug_assert!((2..=64).contains(&n));
        if n == 64 {
            // Only one chunk can hold 63 data bits; larger values need two.
            let hi = 1u64 << 63;
            if v & hi == 0 {
                self.write(v, 64);
            } else {
                self.write((v & (hi - 1)) | hi, 64);
                self.write(1, 64);
            }
            return;
        }
        let hi_bit = 1u64 << (n - 1);
        while v >= hi_bit {
            self.write((v & (hi_bit - 1)) | hi_bit, n);
            v >>= n - 1;
        }
        self.write(v, n);
    }

    /// Pads with zero bits to the next multiple of 32 bits.
    pub fn align32(&mut self) {
        let pad = (32 - (self.pos() % 32) as u32) % 32;
        self.write(0, pad);
    }

    /// Overwrites a little-endian 32-bit word at a byte offset already flushed to the buffer.
    pub fn patch_u32(&mut self, byte_offset: usize, v: u32) {
        self.out[byte_offset..byte_offset + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// Appends raw bytes; the writer must be byte aligned.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        assert_eq!(self.acc_bits, 0, "write_bytes needs byte alignment");
        self.out.extend_from_slice(bytes);
    }

    /// Returns the bytes written, padding a partial final byte with zeros.
    pub fn finish(mut self) -> Vec<u8> {
        if self.acc_bits > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_and_vbr_round_trip() {
        let mut w = BitWriter::new();
        let vals: Vec<(u64, u32, bool)> = vec![
            (5, 3, false),
            (27, 4, true),
            (0, 6, true),
            (u64::MAX, 64, false),
            (u64::MAX, 6, true),
            (1 << 63, 8, true),
            (12345678901234, 64, true),
            (u64::MAX, 64, true),
            (3, 2, false),
        ];
        for &(v, n, vbr) in &vals {
            if vbr {
                w.write_vbr(v, n)
            } else {
                w.write(v, n)
            }
        }
        w.align32();
        let bytes = w.finish();
        assert_eq!(bytes.len() % 4, 0);
        let mut r = BitReader::new(&bytes);
        for &(v, n, vbr) in &vals {
            let got = if vbr {
                r.read_vbr(n).unwrap()
            } else {
                r.read(n).unwrap()
            };
            assert_eq!(got, v, "width {n} vbr {vbr}");
        }
    }

    #[test]
    fn vbr4_example_from_llvm_docs() {
        // 27 as vbr4 is 1011 0011 (LSB-first chunks 011+cont, then 011).
        let mut w = BitWriter::new();
        w.write_vbr(27, 4);
        let b = w.finish();
        assert_eq!(b, vec![0b0011_1011]);
    }

    #[test]
    fn eof_is_reported() {
        let mut r = BitReader::new(&[0xff]);
        assert_eq!(r.read(9), Err(Eof { needed: 1 }));
        assert_eq!(r.pos(), 0);
        assert_eq!(r.read(8), Ok(0xff));
        assert!(matches!(r.read_vbr(6), Err(VbrError::Eof(_))));
    }

    #[test]
    fn reads_across_register_boundaries() {
        // Every width at every offset, against a bit-by-bit reference.
        let data: Vec<u8> = (0..40u32)
            .map(|i| (i.wrapping_mul(151) ^ 0x5a) as u8)
            .collect();
        let bit = |i: u64| (data[(i / 8) as usize] >> (i % 8)) & 1;
        for start in 0..70u64 {
            for n in 0..=64u32 {
                if start + n as u64 > data.len() as u64 * 8 {
                    continue;
                }
                let mut r = BitReader::new(&data);
                r.seek(start).unwrap();
                let want = (0..n as u64).fold(0u64, |a, k| a | ((bit(start + k) as u64) << k));
                assert_eq!(r.read(n).unwrap(), want, "start {start} width {n}");
                assert_eq!(r.pos(), start + n as u64);
            }
        }
    }

    #[test]
    fn vbr_overflow_is_reported() {
        // An endless run of continuation chunks must not loop forever.
        let data = vec![0xffu8; 64];
        let mut r = BitReader::new(&data);
        assert_eq!(r.read_vbr(6), Err(VbrError::Overflow));
    }
}
