//! What validation learns about the code that the translator builds on: the instructions
//! that may be jumped to, the direct jump and call targets, the function starts.

use serde::Serialize;

/// One bit per code byte.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ByteSet {
    words: Vec<u64>,
}

impl ByteSet {
    pub fn new(len: usize) -> ByteSet {
        ByteSet {
            words: vec![0; len.div_ceil(64)],
        }
    }
    #[inline]
    pub fn set(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }
    #[inline]
    pub fn clear(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    /// How many bits are set.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// Bundle-level control-flow facts of validated x86-64 code.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CodeFacts {
    /// Address (sandbox offset) of the first code byte.
    pub base: u32,
    /// Bytes of code validated (the text segment, padded with `hlt` to whole bundles).
    pub size: u32,
    /// Instructions decoded (the parts of pseudo-instructions counted one by one).
    pub instructions: u64,
    /// Offsets (from `base`) where execution may arrive by a jump: every instruction start
    /// except inside pseudo-instructions. Every bundle start is one.
    #[serde(skip)]
    pub valid_targets: ByteSet,
    /// Targets of direct jumps (conditional or not) inside the code, sorted, unique.
    pub jump_targets: Vec<u32>,
    /// Targets of direct calls inside the code, sorted, unique: the function starts that
    /// calls reveal (indirect calls may reach any bundle start). PNaCl's `push $return;
    /// jmp target` calls count as calls.
    pub call_targets: Vec<u32>,
    /// How many calls were `push $return; jmp target` (PNaCl-translated code).
    pub pushed_return_calls: u32,
    /// Bundle-aligned targets of direct jumps and calls outside the code, sorted, unique:
    /// before the IRT, NaCl's syscall trampolines at 0x10000.. (one 32-byte slot each).
    pub outside_targets: Vec<u32>,
    /// `nacljmp` sequences (indirect jumps through the bundle-start table).
    pub indirect_jumps: u32,
    /// `naclcall` sequences (indirect calls through the bundle-start table).
    pub indirect_calls: u32,
}

impl CodeFacts {
    /// Whether execution may arrive at `address` by a jump.
    pub fn is_valid_target(&self, address: u32) -> bool {
        let Some(off) = address.checked_sub(self.base) else {
            return false;
        };
        off < self.size && self.valid_targets.get(off as usize)
    }

    /// Function starts: the entry point and every direct call target, sorted, unique.
    pub fn function_starts(&self, entry: u32) -> Vec<u32> {
        let mut v = self.call_targets.clone();
        if self.is_valid_target(entry) {
            v.push(entry);
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The first 32-byte slots of NaCl's syscall trampolines (0x10000..0x20000) that the
    /// code calls or jumps to directly, as syscall numbers (slot index).
    pub fn trampoline_slots(&self) -> Vec<u32> {
        self.outside_targets
            .iter()
            .filter(|&&t| (0x10000..0x20000).contains(&t))
            .map(|t| (t - 0x10000) / 32)
            .collect()
    }
}
