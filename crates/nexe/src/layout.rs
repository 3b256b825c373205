//! NaCl's loader rules for a program's segments: what `sel_ldr` checks before it maps a
//! nexe (its program-header checks and its address-space layout sanity check), with the
//! same error names, so a nexe NaCl refuses to load is refused here with NaCl's reason.

use serde::Serialize;
use std::fmt;

/// The end of the syscall trampolines, where a program's text must start.
pub const TRAMPOLINE_END: u64 = 0x20000;
/// NaCl's allocation page (its mapping granularity on every OS).
pub const ALLOC_PAGE: u64 = 0x10000;

pub const PT_NULL: u32 = 0;
pub const PT_LOAD: u32 = 1;
pub const PT_DYNAMIC: u32 = 2;
pub const PT_INTERP: u32 = 3;
pub const PT_NOTE: u32 = 4;
pub const PT_PHDR: u32 = 6;
pub const PT_TLS: u32 = 7;
pub const PT_GNU_EH_FRAME: u32 = 0x6474_e550;
pub const PT_GNU_STACK: u32 = 0x6474_e551;
pub const PT_GNU_RELRO: u32 = 0x6474_e552;
pub const PT_ARM_EXIDX: u32 = 0x7000_0001;
pub const PF_X: u32 = 1;
pub const PF_W: u32 = 2;
pub const PF_R: u32 = 4;

/// Why NaCl's loader refuses a program (`sel_ldr`'s `LOAD_*` codes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "load_error", rename_all = "snake_case")]
pub enum LoadError {
    /// A segment of a type/flags pair NaCl does not load (`LOAD_BAD_SEGMENT`).
    BadSegment {
        index: usize,
        p_type: u32,
        p_flags: u32,
    },
    /// A second segment of the same type and flags (`LOAD_DUP_SEGMENT`).
    DupSegment { index: usize },
    /// The text segment does not start at 0x20000 (`LOAD_SEGMENT_BAD_LOC`).
    TextNotAtTrampolineEnd { vaddr: u64 },
    /// A segment below 0x20000 or past the address space (`LOAD_SEGMENT_OUTSIDE_ADDRSPACE`).
    OutsideAddressSpace { index: usize },
    /// A segment with more file bytes than memory bytes (`LOAD_SEGMENT_BAD_PARAM`).
    FileSizeOverMemSize { index: usize },
    /// No text segment (`LOAD_REQUIRED_SEG_MISSING`).
    NoText,
    /// The data segment is not the last one (`LOAD_DATA_NOT_LAST_SEGMENT`).
    DataNotLast,
    /// No data segment and the rodata segment is not last
    /// (`LOAD_NO_DATA_BUT_RODATA_NOT_LAST_SEGMENT`).
    RodataNotLast,
    /// `LOAD_RODATA_OVERLAPS_DATA`.
    RodataOverlapsData,
    /// `LOAD_TEXT_OVERLAPS_RODATA`.
    TextOverlapsRodata,
    /// `LOAD_TEXT_OVERLAPS_DATA`.
    TextOverlapsData,
    /// `LOAD_BAD_RODATA_ALIGNMENT`.
    RodataAlignment,
    /// The entry point is not in the text segment (`LOAD_BAD_ENTRY`).
    BadEntry { entry: u64 },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The first sentence of each is NaCl's own message for the code.
        match self {
            LoadError::BadSegment {
                index,
                p_type,
                p_flags,
            } => write!(
                f,
                "ELF program header {index} (type {p_type:#x}, flags {p_flags:#x}) is of a kind \
                 NaCl does not load (LOAD_BAD_SEGMENT)"
            ),
            LoadError::DupSegment { index } => write!(
                f,
                "ELF program header {index} repeats a segment kind NaCl allows once \
                 (LOAD_DUP_SEGMENT)"
            ),
            LoadError::TextNotAtTrampolineEnd { vaddr } => write!(
                f,
                "the text segment starts at {vaddr:#x}, not at 0x20000 (LOAD_SEGMENT_BAD_LOC)"
            ),
            LoadError::OutsideAddressSpace { index } => write!(
                f,
                "segment {index} lies outside the sandbox address space \
                 (LOAD_SEGMENT_OUTSIDE_ADDRSPACE)"
            ),
            LoadError::FileSizeOverMemSize { index } => write!(
                f,
                "segment {index} has more file bytes than memory bytes (LOAD_SEGMENT_BAD_PARAM)"
            ),
            LoadError::NoText => f.write_str("no text segment (LOAD_REQUIRED_SEG_MISSING)"),
            LoadError::DataNotLast => {
                f.write_str("The data segment is not last (LOAD_DATA_NOT_LAST_SEGMENT)")
            }
            LoadError::RodataNotLast => f.write_str(
                "No data segment, but the rodata segment is not last \
                 (LOAD_NO_DATA_BUT_RODATA_NOT_LAST_SEGMENT)",
            ),
            LoadError::RodataOverlapsData => f.write_str(
                "Read-only data segment overlaps data segment (LOAD_RODATA_OVERLAPS_DATA)",
            ),
            LoadError::TextOverlapsRodata => f.write_str(
                "Text segment overlaps read-only data segment (LOAD_TEXT_OVERLAPS_RODATA)",
            ),
            LoadError::TextOverlapsData => f.write_str(
                "No rodata segment, and text segment overlaps data segment \
                 (LOAD_TEXT_OVERLAPS_DATA)",
            ),
            LoadError::RodataAlignment => f.write_str(
                "The rodata segment does not start on a 64 KiB boundary (LOAD_BAD_RODATA_ALIGNMENT)",
            ),
            LoadError::BadEntry { entry } => write!(
                f,
                "the entry point {entry:#x} is not in the text segment (LOAD_BAD_ENTRY)"
            ),
        }
    }
}

/// One program header, as the checks need it.
#[derive(Debug, Clone, Copy)]
pub struct Phdr {
    pub p_type: u32,
    pub p_flags: u32,
    pub vaddr: u64,
    pub filesz: u64,
    pub memsz: u64,
}

fn round_page(x: u64) -> u64 {
    x.saturating_add(ALLOC_PAGE - 1) & !(ALLOC_PAGE - 1)
}
fn trunc_page(x: u64) -> u64 {
    x & !(ALLOC_PAGE - 1)
}

/// `sel_ldr`'s checks of a program's program headers and layout, for a sandbox of
/// `2^addr_bits` bytes. `arm` allows ARM's unwind table segment.
pub fn check_program(
    phdrs: &[Phdr],
    entry: u64,
    addr_bits: u32,
    arm: bool,
) -> Result<(), LoadError> {
    // (type, flags) pairs NaCl loads or ignores, each at most once.
    const TEXT: usize = 1;
    const RODATA: usize = 2;
    const DATA: usize = 3;
    let allowed: &[(u32, u32)] = &[
        (PT_PHDR, PF_R),
        (PT_LOAD, PF_R | PF_X),
        (PT_LOAD, PF_R),
        (PT_LOAD, PF_R | PF_W),
        (PT_TLS, PF_R),
        (PT_GNU_STACK, PF_R | PF_W),
        (PT_DYNAMIC, PF_R | PF_W),
        (PT_DYNAMIC, PF_R),
        (PT_INTERP, PF_R),
        (PT_NOTE, PF_R),
        (PT_GNU_EH_FRAME, PF_R),
        (PT_GNU_RELRO, PF_R),
        (PT_NULL, PF_R),
        (PT_ARM_EXIDX, PF_R),
    ];
    let limit = 1u64 << addr_bits;
    let mut seen = [false; 14];
    let mut max_vaddr = TRAMPOLINE_END;
    let (mut text_end, mut text) = (0u64, None::<Phdr>);
    let (mut rodata_start, mut rodata_end) = (0u64, 0u64);
    let (mut data_start, mut data_end) = (0u64, 0u64);
    for (index, p) in phdrs.iter().enumerate() {
        if p.memsz == 0 {
            continue; // NaCl does not load empty segments
        }
        let Some(j) = allowed
            .iter()
            .position(|&(t, fl)| t == p.p_type && fl == p.p_flags)
            .filter(|&j| arm || allowed[j].0 != PT_ARM_EXIDX)
        else {
            return Err(LoadError::BadSegment {
                index,
                p_type: p.p_type,
                p_flags: p.p_flags,
            });
        };
        if seen[j] {
            return Err(LoadError::DupSegment { index });
        }
        seen[j] = true;
        if !(TEXT..=DATA).contains(&j) && j != 5 {
            continue; // ignored kinds (GNU_STACK, index 5, is checked like a load)
        }
        if j == TEXT && p.vaddr != TRAMPOLINE_END {
            return Err(LoadError::TextNotAtTrampolineEnd { vaddr: p.vaddr });
        }
        if p.vaddr < TRAMPOLINE_END || p.vaddr >= limit || limit - p.vaddr < p.memsz {
            return Err(LoadError::OutsideAddressSpace { index });
        }
        if p.filesz > p.memsz {
            return Err(LoadError::FileSizeOverMemSize { index });
        }
        max_vaddr = max_vaddr.max(p.vaddr + p.memsz);
        match j {
            TEXT => {
                text_end = TRAMPOLINE_END + p.filesz;
                text = Some(*p);
            }
            RODATA => (rodata_start, rodata_end) = (p.vaddr, p.vaddr + p.memsz),
            DATA => (data_start, data_end) = (p.vaddr, p.vaddr + p.memsz),
            _ => {}
        }
    }
    let Some(text) = text else {
        return Err(LoadError::NoText);
    };
    if data_start != 0 {
        if data_end != max_vaddr {
            return Err(LoadError::DataNotLast);
        }
    } else if rodata_start != 0 && round_page(rodata_end) != max_vaddr {
        return Err(LoadError::RodataNotLast);
    }
    if rodata_start != 0 && data_start != 0 && rodata_end > trunc_page(data_start) {
        return Err(LoadError::RodataOverlapsData);
    }
    if rodata_start != 0 {
        if round_page(text_end) > rodata_start {
            return Err(LoadError::TextOverlapsRodata);
        }
    } else if data_start != 0 && round_page(text_end) > trunc_page(data_start) {
        return Err(LoadError::TextOverlapsData);
    }
    if rodata_start != 0 && round_page(rodata_start) != rodata_start {
        return Err(LoadError::RodataAlignment);
    }
    if entry < text.vaddr || entry >= text.vaddr + text.memsz {
        return Err(LoadError::BadEntry { entry });
    }
    Ok(())
}
