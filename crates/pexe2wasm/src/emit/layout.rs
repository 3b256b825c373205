//! Memory layout (docs/RUNTIME-ABI.md, "Memory layout"): the null region, the pexe's
//! globals from 64 KiB with their alignment, the main-thread stack, the heap; and the
//! table slots of address-taken functions.

use super::{EmitError, LayoutError};
use crate::ir::{Element, Module, ValueRef};

pub const PAGE: u64 = 65536;
pub const DATA_START: u64 = PAGE;

pub struct Layout {
    /// Table slot per function id (0 = not address-taken).
    pub table_slot: Vec<u32>,
    /// Function ids in slot order (slot 1 first).
    pub slot_funcs: Vec<u32>,
    pub global_addr: Vec<u32>,
    pub data_end: u64,
    pub stack_top: u64,
    /// Initial memory size in pages.
    pub pages: u64,
}

/// Initialized data: (address, bytes) runs; everything else is zero.
pub type Segments = Vec<(u32, Vec<u8>)>;

/// Zero runs at least this long split a data segment.
const ZERO_SPLIT: usize = 128;

/// The layout; `taken_in_code` holds the function ids whose address the bodies take
/// (their code summaries' `taken`, `ir::CodeSummary`).
pub fn layout(m: &Module, stack_size: u64, taken_in_code: &[u32]) -> Result<Layout, EmitError> {
    let nf = m.num_functions();
    // Address-taken functions: relocation targets and function ids used as operands
    // anywhere but as a direct callee.
    let mut taken = vec![false; nf as usize];
    for g in &m.globals {
        for e in g.init.elements() {
            if let Element::Reloc { target, .. } = e {
                if *target < nf {
                    taken[*target as usize] = true;
                }
            }
        }
    }
    for &i in taken_in_code {
        if let Some(t) = taken.get_mut(i as usize) {
            *t = true;
        }
    }
    let mut table_slot = vec![0u32; nf as usize];
    let mut slot_funcs = Vec::new();
    for (i, t) in taken.iter().enumerate() {
        if *t {
            slot_funcs.push(i as u32);
            table_slot[i] = slot_funcs.len() as u32;
        }
    }

    let mut addr = DATA_START;
    let mut global_addr = Vec::with_capacity(m.globals.len());
    for g in &m.globals {
        let a = g.align.bytes().unwrap_or(1).max(1);
        if a > PAGE {
            return Err(LayoutError::AlignmentOverPage { align: a }.into());
        }
        addr = addr.div_ceil(a) * a;
        global_addr.push(addr as u32);
        addr += g.init.size();
        if addr > 1 << 32 {
            return Err(LayoutError::GlobalsOver4GiB.into());
        }
    }
    let data_end = addr;
    let stack_base = data_end.div_ceil(PAGE) * PAGE;
    let stack_top = (stack_base + stack_size).div_ceil(PAGE) * PAGE;
    if stack_top >= 1 << 32 {
        return Err(LayoutError::StackOver4GiB { stack_size }.into());
    }

    Ok(Layout {
        table_slot,
        slot_funcs,
        global_addr,
        data_end,
        stack_top,
        pages: stack_top / PAGE,
    })
}

/// The data segments of the globals at `lay`'s addresses (relocations resolved to table
/// slots and addresses). Apart from [`layout`] because nothing but the data section needs
/// them: the caller builds them alongside the lowering, off the serial path.
pub fn data_segments(m: &Module, lay: &Layout) -> Result<Segments, EmitError> {
    let (table_slot, global_addr) = (&lay.table_slot, &lay.global_addr);
    // Built global by global: zero fills are skipped (memory starts zeroed), short zero
    // runs stay inside a segment, long ones split it.
    let mut seg = Builder::default();
    for (gi, g) in m.globals.iter().enumerate() {
        let mut p = global_addr[gi] as u64;
        for e in g.init.elements() {
            match e {
                Element::Zerofill(n) => p += *n,
                Element::Data(d) => {
                    seg.put(p, d);
                    p += d.len() as u64;
                }
                Element::Reloc { target, addend } => {
                    let base = match m.global_ref(*target) {
                        ValueRef::Function(i) => table_slot.get(i.index()).copied().unwrap_or(0),
                        ValueRef::Global(i) => {
                            global_addr.get(i.index()).copied().ok_or_else(|| {
                                EmitError::from(LayoutError::RelocationTarget { target: *target })
                            })?
                        }
                        _ => 0,
                    };
                    let v = base.wrapping_add(addend.unwrap_or(0));
                    seg.put(p, &v.to_le_bytes());
                    p += 4;
                }
            }
        }
    }
    Ok(seg.finish())
}

/// Accumulates initialized bytes in address order into segments.
#[derive(Default)]
struct Builder {
    out: Vec<(u32, Vec<u8>)>,
    start: u64,
    cur: Vec<u8>,
}

impl Builder {
    fn put(&mut self, addr: u64, bytes: &[u8]) {
        // Leading and trailing zeros need no bytes in the module.
        let Some(first) = first_nonzero(bytes) else {
            return;
        };
        let last = last_nonzero(bytes).unwrap_or(first);
        let mut bytes = &bytes[first..=last];
        let mut addr = addr + first as u64;
        // Split inside the data at long zero runs.
        while let Some((z, zlen)) = zero_run(bytes) {
            self.append(addr, &bytes[..z]);
            let skip = z + zlen;
            addr += skip as u64;
            bytes = &bytes[skip..];
        }
        self.append(addr, bytes);
    }

    fn append(&mut self, addr: u64, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let end = self.start + self.cur.len() as u64;
        if !self.cur.is_empty() && addr >= end && addr - end < ZERO_SPLIT as u64 {
            self.cur.resize((addr - self.start) as usize, 0);
        } else if !self.cur.is_empty() || addr != self.start {
            self.flush();
            self.start = addr;
        }
        self.cur.extend_from_slice(bytes);
    }

    fn flush(&mut self) {
        if !self.cur.is_empty() {
            self.out
                .push((self.start as u32, std::mem::take(&mut self.cur)));
        }
    }

    fn finish(mut self) -> Vec<(u32, Vec<u8>)> {
        self.flush();
        self.out
    }
}

// The scans below look at 8 bytes at a time: a large pexe has a megabyte of global data
// and this runs serially, between the parallel stages (docs/PERFORMANCE.md).

/// The 8 bytes at `i` as one word.
#[inline]
fn word(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

/// The index of the first non-zero byte.
fn first_nonzero(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i + 8 <= b.len() && word(b, i) == 0 {
        i += 8;
    }
    b[i..].iter().position(|&x| x != 0).map(|p| i + p)
}

/// The index of the last non-zero byte.
fn last_nonzero(b: &[u8]) -> Option<usize> {
    let mut end = b.len();
    while end >= 8 && word(b, end - 8) == 0 {
        end -= 8;
    }
    b[..end].iter().rposition(|&x| x != 0)
}

/// The first run of at least [`ZERO_SPLIT`] zeros: (offset, length).
fn zero_run(b: &[u8]) -> Option<(usize, usize)> {
    if b.len() < ZERO_SPLIT {
        return None;
    }
    // A run of at least ZERO_SPLIT (>= 16) zeros covers a whole 8-byte word at some
    // multiple of 8, so only runs around a zero word are measured; shorter runs found on
    // the way are skipped past.
    let mut i = 0;
    while i + 8 <= b.len() {
        if word(b, i) != 0 {
            i += 8;
            continue;
        }
        let start = b[..i].iter().rposition(|&x| x != 0).map_or(0, |p| p + 1);
        let mut end = i + 8;
        while end + 8 <= b.len() && word(b, end) == 0 {
            end += 8;
        }
        end += b[end..].iter().take_while(|&&x| x == 0).count();
        if end - start >= ZERO_SPLIT {
            return Some((start, end - start));
        }
        i = end.next_multiple_of(8).max(i + 8);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time definitions the word scans must agree with.
    fn zero_run_bytewise(b: &[u8]) -> Option<(usize, usize)> {
        let mut i = 0;
        while let Some(z) = b[i..].iter().position(|&x| x == 0) {
            let s = i + z;
            let run = b[s..].iter().take_while(|&&x| x == 0).count();
            if run >= ZERO_SPLIT {
                return Some((s, run));
            }
            i = s + run;
        }
        None
    }

    #[test]
    fn word_scans_agree_with_byte_scans() {
        // Deterministic pseudo-random buffers with zero runs of every length around the
        // split threshold, at every alignment.
        let mut next = crate::test_rng(0x2545_f491_4f6c_dd1du64);
        let mut checked = 0;
        for len in [0usize, 1, 7, 8, 9, 127, 128, 129, 300, 1000] {
            for _ in 0..200 {
                let mut b: Vec<u8> = (0..len).map(|_| (next() % 255 + 1) as u8).collect();
                // Zero a few runs of random lengths.
                for _ in 0..(next() % 4) {
                    if len == 0 {
                        break;
                    }
                    let at = (next() as usize) % len;
                    let run = [1, 7, 8, 15, 120, 127, 128, 129, 200][(next() % 9) as usize];
                    let end = (at + run).min(len);
                    b[at..end].fill(0);
                }
                let first = b.iter().position(|&x| x != 0);
                let last = b.iter().rposition(|&x| x != 0);
                assert_eq!(first_nonzero(&b), first, "{b:?}");
                assert_eq!(last_nonzero(&b), last, "{b:?}");
                if b.len() >= ZERO_SPLIT {
                    assert_eq!(zero_run(&b), zero_run_bytewise(&b), "{b:?}");
                } else {
                    assert_eq!(zero_run(&b), None);
                }
                checked += 1;
            }
        }
        assert_eq!(checked, 2000);
        // All zeros and no zeros.
        assert_eq!(first_nonzero(&[0; 100]), None);
        assert_eq!(last_nonzero(&[0; 100]), None);
        assert_eq!(zero_run(&[0; 200]), Some((0, 200)));
        assert_eq!(zero_run(&[5; 200]), None);
    }
}
