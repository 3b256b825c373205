//! Native Client executables (`.nexe`): the nexe stage of pexe2wasm (decision 0023).
//!
//! ```text
//!  .nexe bytes
//!     │  inspect (elf.rs, object crate)      ELF → NexeInfo: architecture, how it was
//!     │                                      recognized, linking, layout, runtime ABI,
//!     │                                      CLI/Pepper, NaCl's loader rules (layout.rs),
//!     ▼                                      the verdict (Translation)
//!  Nexe { info, segments }
//!     │  memory_image / code                 segments → the sandbox image; the text
//!     ▼                                      padded with hlt to whole bundles
//!  x86_64::validate (iced-x86 decoder)       NaCl's x86-64 rules, positioned errors
//!     ▼
//!  CodeFacts                                 valid jump targets, direct jump/call
//!                                            targets, trampoline calls: the CFG's input
//! ```
//!
//! [`native`] holds the words every front end uses for native code it does not convert
//! (a nexe, a manifest or app with only nexes) and the report `info`/`verify` print.
//!
//! No runtime and no I/O: it builds for `wasm32-unknown-unknown` too, so the converter
//! library can depend on it. Hostile input gives a typed error, never a panic.

pub mod elf;
pub mod error;
pub mod info;
pub mod layout;
pub mod native;
pub mod strings;
pub mod x86_64;

pub use error::NexeError;
pub use info::{
    AppKind, Arch, Layout, Linking, NexeInfo, NotTranslated, Recognition, RuntimeAbi, Segment,
    SegmentKind, Translation,
};
pub use layout::LoadError;
pub use native::{recognize, NativeApp, NativeInput, NexeReport};

/// The hlt instruction NaCl pads code with.
pub const HLT: u8 = 0xf4;

/// Whether `bytes` start like an ELF file (what a nexe is, and no pexe or wasm module).
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

/// A nexe read from its bytes.
pub struct Nexe<'a> {
    pub info: NexeInfo,
    /// The file bytes of each of `info.segments`, in the same order.
    segment_bytes: Vec<&'a [u8]>,
    /// The symbol table's functions (address, name), by address; empty when stripped.
    pub function_symbols: Vec<(u32, String)>,
}

/// Reads a nexe: its ELF structure, what it is and whether it is translated.
pub fn inspect(bytes: &[u8]) -> Result<Nexe<'_>, NexeError> {
    let read = elf::read(bytes)?;
    Ok(Nexe {
        info: read.info,
        segment_bytes: read.segment_bytes,
        function_symbols: read.function_symbols,
    })
}

/// One segment of the sandbox memory image: `bytes` at `vaddr`, zeros up to `memsz`.
#[derive(Debug, Clone, Copy)]
pub struct ImageSegment<'a> {
    pub kind: SegmentKind,
    pub vaddr: u32,
    pub memsz: u32,
    pub bytes: &'a [u8],
}

impl<'a> Nexe<'a> {
    /// The segments as they are placed in the sandbox's memory.
    pub fn memory_image(&self) -> Vec<ImageSegment<'a>> {
        self.info
            .segments
            .iter()
            .zip(&self.segment_bytes)
            .map(|(s, b)| ImageSegment {
                kind: s.kind,
                vaddr: s.vaddr,
                memsz: s.memsz,
                bytes: b,
            })
            .collect()
    }

    /// The text segment's address and bytes, padded with `hlt` to whole 32-byte bundles
    /// as NaCl's loader pads it before validation.
    pub fn code(&self) -> Option<(u32, Vec<u8>)> {
        let i = self
            .info
            .segments
            .iter()
            .position(|s| s.kind == SegmentKind::Text)?;
        let bytes = self.segment_bytes[i];
        let mut code = bytes.to_vec();
        let padded = code.len().next_multiple_of(x86_64::BUNDLE_SIZE as usize);
        code.resize(padded, HLT);
        Some((self.info.segments[i].vaddr, code))
    }

    /// Validates the code by NaCl's x86-64 rules; `None` for other architectures (and for
    /// a text segment not on a bundle boundary, which NaCl never loads).
    pub fn validate_x86_64(&self) -> Option<x86_64::Validation> {
        if self.info.arch != Arch::X86_64 {
            return None;
        }
        let (base, code) = self.code()?;
        if base % x86_64::BUNDLE_SIZE != 0 {
            return None;
        }
        Some(x86_64::validate(&code, base))
    }
}
