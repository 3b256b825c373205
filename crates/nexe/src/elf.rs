//! Reading a nexe's ELF structure with the `object` crate (bounds-checked: hostile input
//! gives an error, never a panic) into [`NexeInfo`] and the segments of its memory image.

use crate::error::NexeError;
use crate::info::*;
use crate::layout::{self, Phdr, PF_R, PF_W, PF_X, PT_LOAD};
use crate::strings;
use object::elf;
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader, Sym};
use object::LittleEndian as LE;

const ELFOSABI_NACL: u8 = 123;
/// glibc's runnable-ld.so loads programs from here up (NaCl's dynamic-code area).
const GLIBC_TEXT_START: u64 = 0x100_0000;
/// Where sel_ldr places an IRT image's text.
const IRT_START: u64 = 0x0fc0_0000;
const IRT_END: u64 = 0x1000_0000;

/// What [`read`] gives besides the info: the loadable segments with their file bytes.
pub(crate) struct Read<'a> {
    pub info: NexeInfo,
    pub segment_bytes: Vec<&'a [u8]>,
    /// The symbol table's functions (address, name), when it has one.
    pub function_symbols: Vec<(u32, String)>,
}

pub(crate) fn read(data: &[u8]) -> Result<Read<'_>, NexeError> {
    if data.len() < 16 || &data[..4] != b"\x7fELF" {
        return Err(NexeError::NotElf);
    }
    if data[5] != elf::ELFDATA2LSB {
        return Err(NexeError::UnsupportedElf { what: "big-endian" });
    }
    match data[4] {
        elf::ELFCLASS32 => read_class::<elf::FileHeader32<LE>>(data, 32),
        elf::ELFCLASS64 => read_class::<elf::FileHeader64<LE>>(data, 64),
        _ => Err(NexeError::UnsupportedElf {
            what: "of an unknown class",
        }),
    }
}

fn read_class<Elf: FileHeader<Endian = LE>>(data: &[u8], class: u8) -> Result<Read<'_>, NexeError> {
    let e = LE;
    let header = Elf::parse(data).map_err(|err| NexeError::malformed(err.to_string()))?;
    let arch = match header.e_machine(e) {
        elf::EM_386 => Arch::X86_32,
        elf::EM_X86_64 => Arch::X86_64,
        elf::EM_ARM => Arch::Arm,
        elf::EM_MIPS => Arch::Mips,
        machine => return Err(NexeError::Machine { machine }),
    };
    match header.e_type(e) {
        elf::ET_EXEC => {}
        elf::ET_DYN => {
            return Err(NexeError::NotExecutable {
                e_type: elf::ET_DYN,
                what: "shared object (a .so such as glibc's runnable-ld.so or a library)",
            })
        }
        elf::ET_REL => {
            return Err(NexeError::NotExecutable {
                e_type: elf::ET_REL,
                what: "object file (.o)",
            })
        }
        t => {
            return Err(NexeError::NotExecutable {
                e_type: t,
                what: "file of another type",
            })
        }
    }
    let ident = header.e_ident();
    let (os_abi, abi_version) = (ident.os_abi, ident.abi_version);
    let entry: u64 = header.e_entry(e).into();
    let phdrs = header
        .program_headers(e, data)
        .map_err(|err| NexeError::malformed(err.to_string()))?;

    let mut segments = Vec::new();
    let mut segment_bytes = Vec::new();
    let mut checked = Vec::new();
    let mut interpreter = None;
    let mut note_arch = None;
    let mut needed = Vec::new();
    for ph in phdrs {
        let p = Phdr {
            p_type: ph.p_type(e),
            p_flags: ph.p_flags(e),
            vaddr: ph.p_vaddr(e).into(),
            filesz: ph.p_filesz(e).into(),
            memsz: ph.p_memsz(e).into(),
        };
        checked.push(p);
        match p.p_type {
            PT_LOAD if p.memsz > 0 => {
                let kind = match p.p_flags & (PF_R | PF_W | PF_X) {
                    f if f & PF_X != 0 => SegmentKind::Text,
                    f if f & PF_W != 0 => SegmentKind::Data,
                    _ => SegmentKind::Rodata,
                };
                let bytes = ph.data(e, data).map_err(|()| {
                    NexeError::malformed("a loadable segment lies outside the file")
                })?;
                let vaddr = u32::try_from(p.vaddr)
                    .ok()
                    .filter(|v| (*v as u64) + p.memsz <= 1 << 32)
                    .ok_or_else(|| NexeError::malformed("a segment lies past 4 GiB"))?;
                if p.filesz > p.memsz {
                    return Err(NexeError::malformed(
                        "a segment has more file bytes than memory bytes",
                    ));
                }
                segments.push(Segment {
                    kind,
                    vaddr,
                    memsz: p.memsz as u32,
                    filesz: p.filesz as u32,
                    offset: ph.p_offset(e).into(),
                });
                segment_bytes.push(bytes);
            }
            elf::PT_INTERP if p.filesz > 0 => {
                // glibc's static tools carry an empty PT_INTERP: only a named one counts.
                if let Ok(Some(name)) = ph.interpreter(e, data) {
                    if !name.is_empty() {
                        interpreter = Some(String::from_utf8_lossy(name).into_owned());
                    }
                }
            }
            elf::PT_NOTE => {
                if let Ok(Some(mut notes)) = ph.notes(e, data) {
                    while let Ok(Some(note)) = notes.next() {
                        if note.name() == b"NaCl" {
                            let desc = note.desc();
                            let end = desc.iter().position(|&b| b == 0).unwrap_or(desc.len());
                            note_arch = Some(String::from_utf8_lossy(&desc[..end]).into_owned());
                        }
                    }
                }
            }
            elf::PT_DYNAMIC => {
                if let Ok(Some(dynamic)) = ph.dynamic(e, data) {
                    needed = dynamic_needed::<Elf>(dynamic, phdrs, data);
                }
            }
            _ => {}
        }
    }

    // Sections are optional (stripped files may keep few): their absence is no error.
    let sections = header.sections(e, data).ok();
    let mut compiler = Vec::new();
    let mut symbols = false;
    let mut function_symbols = Vec::new();
    if let Some(sections) = &sections {
        if let Ok(table) = sections.symbols(e, data, elf::SHT_SYMTAB) {
            function_symbols = functions_of(&table);
        }
        for s in sections.iter() {
            if s.sh_type(e) == elf::SHT_SYMTAB {
                symbols = true;
            }
            if note_arch.is_none() {
                if let Ok(name) = sections.section_name(e, s) {
                    if let Some(arch) = name.strip_prefix(b".note.NaCl.ABI.") {
                        note_arch = Some(String::from_utf8_lossy(arch).into_owned());
                    }
                }
            }
        }
        if let Some((_, comment)) = sections.section_by_name(e, b".comment") {
            if let Ok(bytes) = comment.data(e, data) {
                let mut lines: Vec<String> = bytes
                    .split(|&b| b == 0)
                    .filter(|l| !l.is_empty() && l.iter().all(|b| b.is_ascii() && *b >= b' '))
                    .map(|l| String::from_utf8_lossy(l).into_owned())
                    .collect();
                lines.dedup();
                lines.truncate(8);
                compiler = lines;
            }
        }
    }

    let text = segments.iter().find(|s| s.kind == SegmentKind::Text);
    let text_start = text.map(|t| t.vaddr as u64);
    let nacl_aligned = phdrs.iter().filter(|ph| ph.p_type(e) == PT_LOAD).all(|ph| {
        let a: u64 = ph.p_align(e).into();
        a >= layout::ALLOC_PAGE
    });
    let recognized_by = if os_abi == ELFOSABI_NACL {
        Recognition::OsAbi { abi_version }
    } else if let Some(arch) = note_arch {
        Recognition::AbiNote { arch }
    } else if compiler.iter().any(|c| c.contains("Native Client")) {
        Recognition::Comment
    } else if text_start == Some(layout::TRAMPOLINE_END) && nacl_aligned {
        Recognition::Layout
    } else {
        return Err(NexeError::NotNacl { os_abi });
    };

    let layout = match text_start {
        Some(layout::TRAMPOLINE_END) => Layout::Program,
        Some(t) if (IRT_START..IRT_END).contains(&t) => Layout::Irt,
        Some(t) if (GLIBC_TEXT_START..IRT_START).contains(&t) => Layout::GlibcDynamicText,
        _ => Layout::Other,
    };

    let linking = match interpreter {
        Some(interpreter) => Linking::Dynamic {
            interpreter,
            needed,
        },
        None => Linking::Static,
    };

    let irt_interfaces = strings::strings_with_prefix(data, "nacl-irt-");
    let ppb_interfaces = strings::pepper_interfaces(data, "PPB_");
    let ppp_interfaces = strings::pepper_interfaces(data, "PPP_");
    let runtime_abi = if matches!(linking, Linking::Dynamic { .. }) {
        RuntimeAbi::ThroughLibc
    } else if irt_interfaces.is_empty() {
        RuntimeAbi::PreIrt
    } else if irt_interfaces.iter().any(|s| s == "nacl-irt-file-0.1")
        || !irt_interfaces.iter().any(|s| s == "nacl-irt-basic-0.1")
    {
        RuntimeAbi::EarlyIrt
    } else {
        RuntimeAbi::StableIrt
    };
    // PNaCl's IRT shim (`libpnacl_irt_shim.a`), which PNaCl's linker puts in every
    // nexe, names the Pepper hooks: with no Pepper interface named, the program is a
    // command-line one
    let shim_only = irt_interfaces
        .iter()
        .any(|s| s == "nacl-irt-ppapihook-pnacl-private-0.1")
        && ppb_interfaces.is_empty()
        && ppp_interfaces.is_empty()
        && !strings::has_c_string(data, "PPP_InitializeModule");
    let pepper = !shim_only
        && (irt_interfaces.iter().any(|s| s == "nacl-irt-ppapihook-0.1")
            || strings::has_c_string(data, "PPP_InitializeModule")
            || !ppp_interfaces.is_empty());
    let translator = irt_interfaces
        .iter()
        .find(|s| s.starts_with("nacl-irt-private-pnacl-translator-"));
    let app = if layout == Layout::Irt {
        AppKind::Irt
    } else if pepper {
        AppKind::Pepper {
            pre_1_0: strings::pre_1_0(&ppb_interfaces) || strings::pre_1_0(&ppp_interfaces),
        }
    } else if let Some(t) = translator {
        AppKind::Translator {
            interface: t.clone(),
        }
    } else if strings::has_c_string(data, "NaClSrpcAcceptClientConnection")
        || strings::has_c_string(data, "NaClSrpcModuleInit")
    {
        AppKind::Srpc
    } else {
        AppKind::Cli
    };

    // What NaCl's loader would say: sel_ldr's own rules for a program at 0x20000; glibc
    // programs are loaded by runnable-ld.so and IRT images by sel_ldr's IRT loader.
    let addr_bits = if arch == Arch::X86_64 { 32 } else { 30 };
    let load = match layout {
        Layout::Program | Layout::Other => {
            layout::check_program(&checked, entry, addr_bits, arch == Arch::Arm).err()
        }
        Layout::GlibcDynamicText | Layout::Irt => None,
    };
    let translation = if let Some(error) = load {
        Translation::Refused { error }
    } else if arch != Arch::X86_64 {
        Translation::NotTranslated {
            reason: NotTranslated::Arch(arch),
        }
    } else if layout == Layout::Irt {
        Translation::NotTranslated {
            reason: NotTranslated::IrtImage,
        }
    } else if matches!(linking, Linking::Dynamic { .. }) {
        Translation::NotTranslated {
            reason: NotTranslated::Dynamic,
        }
    } else {
        Translation::Translatable
    };

    let entry = u32::try_from(entry).map_err(|_| NexeError::malformed("entry point past 4 GiB"))?;
    Ok(Read {
        info: NexeInfo {
            arch,
            elf_class: class,
            recognized_by,
            os_abi,
            abi_version,
            e_flags: header.e_flags(e),
            entry,
            linking,
            layout,
            segments,
            irt_interfaces,
            runtime_abi,
            app,
            ppb_interfaces,
            ppp_interfaces,
            symbols,
            compiler,
            translation,
        },
        segment_bytes,
        function_symbols,
    })
}

/// The function symbols (typed as functions, or untyped in a section) of a symbol table
/// with an address and a name, by address (the first name of an address kept), names cut
/// to 200 bytes; the lifting keeps those at instruction starts: the names of the translated
/// functions in a module's name section (profiles, backtraces).
fn functions_of<Elf: FileHeader<Endian = LE>>(
    table: &object::read::elf::SymbolTable<'_, Elf>,
) -> Vec<(u32, String)> {
    let e = LE;
    let mut out: Vec<(u32, String)> = table
        .symbols()
        .iter()
        // Subzero's objects name their functions with untyped local symbols
        .filter(|s| matches!(s.st_type(), elf::STT_FUNC | elf::STT_NOTYPE))
        .filter(|s| s.st_shndx(e) != elf::SHN_UNDEF && s.st_shndx(e) < elf::SHN_LORESERVE)
        .filter_map(|s| {
            let addr = u32::try_from(s.st_value(e).into()).ok()?;
            let name = table.symbol_name(e, s).ok().filter(|n| !n.is_empty())?;
            let name = &name[..name.len().min(200)];
            Some((addr, String::from_utf8_lossy(name).into_owned()))
        })
        .collect();
    out.sort_by_key(|s| s.0);
    out.dedup_by_key(|s| s.0);
    out
}

/// The `DT_NEEDED` names of a dynamic segment, read through `DT_STRTAB` (an address,
/// mapped back to the file through the loadable segments).
fn dynamic_needed<Elf: FileHeader<Endian = LE>>(
    dynamic: &[Elf::Dyn],
    phdrs: &[Elf::ProgramHeader],
    data: &[u8],
) -> Vec<String> {
    use object::read::elf::Dyn;
    let e = LE;
    let mut strtab = None;
    let mut offsets = Vec::new();
    for d in dynamic {
        let val = d.val(e);
        match d.tag(e) {
            elf::DT_NULL => break,
            elf::DT_STRTAB => strtab = Some(val),
            elf::DT_NEEDED => offsets.push(val),
            _ => {}
        }
        if offsets.len() > 256 {
            break;
        }
    }
    let Some(strtab) = strtab else {
        return Vec::new();
    };
    let Some(table) = phdrs.iter().find_map(|ph| {
        if ph.p_type(e) != PT_LOAD {
            return None;
        }
        let seg = ph.data(e, data).ok()?;
        let vaddr: u64 = ph.p_vaddr(e).into();
        let off = strtab.checked_sub(vaddr)?;
        seg.get(usize::try_from(off).ok()?..)
    }) else {
        return Vec::new();
    };
    offsets
        .into_iter()
        .filter_map(|o| {
            let s = table.get(usize::try_from(o).ok()?..)?;
            let end = s.iter().take(256).position(|&b| b == 0)?;
            Some(String::from_utf8_lossy(&s[..end]).into_owned())
        })
        .collect()
}
