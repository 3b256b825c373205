//! Raw bit I/O: fixed-width fields, VBR fields and 32-bit alignment, LSB first, as the LLVM
//! bitstream container defines them. Written by hand because the container is small, hot
//! (every byte of a pexe passes through here) and no maintained crate reads PNaCl's flavour.

/// Reads bits from a byte slice, least significant bit of each byte first. Holds only a
/// bit position: a read loads the 8 bytes starting at the position's byte (one unaligned
/// load), shifts and masks, so there is no register to refill and no state besides `pos`.
/// Near the end of the input, where 8 bytes are not there, reads go bit by bit.
#[derive(Clone)]
pub struct BitReader<'a> {
    data: &'a [u8],
    /// Next unread bit.
    pos: u64,
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

#[inline(always)]
fn mask(n: u32) -> u64 {
    debug_assert!(n < 64);
    (1u64 << n) - 1
}

/// Bits a [`BitReader::peek`] word is guaranteed to hold (64 minus a byte's 7-bit offset).
pub(crate) const PEEK_BITS: u32 = 57;

impl<'a> BitReader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        BitReader {
            data,
            pos: 0,
            len_bits: data.len() as u64 * 8,
        }
    }

    /// Current bit position.
    #[inline]
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Total length in bits.
    #[inline]
    pub fn len_bits(&self) -> u64 {
        self.len_bits
    }

    #[inline]
    pub fn remaining(&self) -> u64 {
        self.len_bits - self.pos
    }

    #[inline]
    pub fn at_end(&self) -> bool {
        self.pos >= self.len_bits
    }

    /// The next [`PEEK_BITS`] (or more) bits in the low end of a word, if 8 bytes are left
    /// from the current byte.
    #[inline(always)]
    pub(crate) fn peek(&self) -> Option<u64> {
        let b = (self.pos >> 3) as usize;
        let bytes = self.data.get(b..b.wrapping_add(8))?;
        let w = u64::from_le_bytes(bytes.try_into().ok()?);
        Some(w >> (self.pos & 7))
    }

    /// Consumes `n` bits the caller took from a [`BitReader::peek`] window (`n <=
    /// PEEK_BITS`, so they are in the input).
    #[inline(always)]
    pub(crate) fn consume(&mut self, n: u32) {
        debug_assert!(n <= PEEK_BITS);
        self.pos += n as u64;
    }

    /// Moves to an absolute bit position (must be within the input).
    pub fn seek(&mut self, bit: u64) -> Result<(), Eof> {
        if bit > self.len_bits {
            return Err(Eof {
                needed: bit - self.len_bits,
            });
        }
        self.pos = bit;
        Ok(())
    }

    /// Reads a fixed-width field of `n` bits (0..=64).
    #[inline(always)]
    pub fn read(&mut self, n: u32) -> Result<u64, Eof> {
        debug_assert!(n <= 64);
        if n < PEEK_BITS {
            if let Some(w) = self.peek() {
                self.pos += n as u64;
                return Ok(w & mask(n));
            }
        }
        self.read_slow(n)
    }

    /// Bit by bit (a byte at a time): the last 8 bytes of the input and 57..64-bit fields.
    #[cold]
    fn read_slow(&mut self, n: u32) -> Result<u64, Eof> {
        let remaining = self.remaining();
        if (n as u64) > remaining {
            return Err(Eof {
                needed: n as u64 - remaining,
            });
        }
        let mut v = 0u64;
        let mut got = 0u32;
        while got < n {
            let byte = self.data[(self.pos >> 3) as usize] as u64;
            let off = (self.pos & 7) as u32;
            let take = (8 - off).min(n - got);
            v |= ((byte >> off) & mask(take)) << got;
            got += take;
            self.pos += take as u64;
        }
        Ok(v)
    }

    /// Reads a variable-bit-rate field with chunks of `n` bits (2..=64).
    #[inline(always)]
    pub fn read_vbr(&mut self, n: u32) -> Result<u64, VbrError> {
        debug_assert!((2..=64).contains(&n));
        // Fast path: every chunk lies in one peeked word (values below 2^45 for vbr6).
        if n <= 32 {
            if let Some(w) = self.peek() {
                let hi_bit = 1u64 << (n - 1);
                let piece = w & mask(n);
                if piece & hi_bit == 0 {
                    self.pos += n as u64;
                    return Ok(piece);
                }
                let mut result = piece & (hi_bit - 1);
                let (mut used, mut shift) = (n, n - 1);
                while used + n <= PEEK_BITS {
                    let piece = (w >> used) & mask(n);
                    result |= (piece & (hi_bit - 1)) << shift;
                    used += n;
                    shift += n - 1;
                    if piece & hi_bit == 0 {
                        self.pos += used as u64;
                        return Ok(result);
                    }
                }
            }
        }
        self.read_vbr_slow(n)
    }

    /// Chunk by chunk, with overflow checks (long values, the end of the input).
    #[cold]
    fn read_vbr_slow(&mut self, n: u32) -> Result<u64, VbrError> {
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

    /// Appends the next `len` bytes of input (at any bit offset) to `out`, 8 at a time, or
    /// returns false having read nothing if fewer than `len * 8` bits are left.
    pub(crate) fn read_bytes(&mut self, len: u64, out: &mut Vec<u8>) -> bool {
        if len > self.remaining() / 8 {
            return false;
        }
        let len = len as usize;
        let b = (self.pos >> 3) as usize;
        let off = (self.pos & 7) as u32;
        if out.capacity() == 0 {
            // A fresh vector (global data): one allocation of exactly `len`, without the
            // growth path `reserve_exact` takes.
            *out = Vec::with_capacity(len);
        } else {
            out.reserve_exact(len);
        }
        if off == 0 {
            out.extend_from_slice(&self.data[b..b + len]);
        } else {
            // Output byte i is the high bits of input byte b+i and the low bits of b+i+1;
            // b+len exists because the bits end `off` bits into it.
            let src = &self.data[b..=b + len];
            let mut i = 0;
            while i + 8 <= len {
                let lo = u64::from_le_bytes(src[i..i + 8].try_into().expect("8 bytes"));
                let v = (lo >> off) | ((src[i + 8] as u64) << (64 - off));
                out.extend_from_slice(&v.to_le_bytes());
                i += 8;
            }
            // The last few bytes: from one more 9-byte window if the input has it (its
            // bytes past the array belong to what follows and are not kept), else byte
            // by byte.
            let rest = len - i;
            match self.data.get(b + i..b + i + 9) {
                Some(win) if rest > 0 => {
                    let lo = u64::from_le_bytes(win[..8].try_into().expect("8 bytes"));
                    let v = (lo >> off) | ((win[8] as u64) << (64 - off));
                    out.extend_from_slice(&v.to_le_bytes()[..rest]);
                }
                _ => out.extend(
                    src[i..]
                        .windows(2)
                        .map(|p| (p[0] >> off) | (p[1] << (8 - off))),
                ),
            }
        }
        self.pos += len as u64 * 8;
        true
    }

    /// Skips to the next multiple of 32 bits.
    pub fn align32(&mut self) -> Result<(), Eof> {
        let aligned = (self.pos + 31) & !31;
        if aligned > self.len_bits {
            return Err(Eof {
                needed: aligned - self.len_bits,
            });
        }
        self.pos = aligned;
        Ok(())
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
    fn bytes_at_every_offset_match_fixed_reads() {
        let data: Vec<u8> = (0..40u32)
            .map(|i| (i.wrapping_mul(151) ^ 0x5a) as u8)
            .collect();
        for start in 0..24u64 {
            for len in 0..=(data.len() as u64 - start / 8) {
                let mut r = BitReader::new(&data);
                r.seek(start).unwrap();
                let mut want = Vec::new();
                let fits = (0..len).all(|_| r.read(8).map(|v| want.push(v as u8)).is_ok());
                let mut r = BitReader::new(&data);
                r.seek(start).unwrap();
                let mut got = vec![7u8];
                assert_eq!(r.read_bytes(len, &mut got), fits, "start {start} len {len}");
                if fits {
                    assert_eq!(got[1..], want[..], "start {start} len {len}");
                    assert_eq!(r.pos(), start + len * 8);
                } else {
                    assert_eq!((got.len(), r.pos()), (1, start));
                }
            }
        }
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
