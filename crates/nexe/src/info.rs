//! What a nexe is, as [`crate::inspect`] reads it: the typed facts every front end (CLI,
//! service, batch) prints and decides on.

use crate::layout::LoadError;
use serde::Serialize;
use std::fmt;

/// The machine a nexe's code is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arch {
    #[serde(rename = "x86-32")]
    X86_32,
    #[serde(rename = "x86-64")]
    X86_64,
    Arm,
    Mips,
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Arch::X86_32 => "x86-32",
            Arch::X86_64 => "x86-64",
            Arch::Arm => "ARM",
            Arch::Mips => "MIPS",
        })
    }
}

/// How the file was recognized as a NaCl executable rather than an ordinary ELF one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "kebab-case")]
pub enum Recognition {
    /// ELF OS/ABI 123 (`ELFOSABI_NACL`): every nacl-gcc build.
    OsAbi { abi_version: u8 },
    /// A `NaCl` ELF note (`.note.NaCl.ABI.<arch>`): nacl-clang and PNaCl's translator.
    AbiNote { arch: String },
    /// A `Native Client` compiler note in `.comment`.
    Comment,
    /// Only NaCl's memory layout: text at 0x20000, 64 KiB segment alignment.
    Layout,
}

impl fmt::Display for Recognition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recognition::OsAbi { abi_version } => {
                write!(f, "OS/ABI 123 (NaCl), ABI version {abi_version}")
            }
            Recognition::AbiNote { arch } => write!(f, "NaCl ABI note ({arch})"),
            Recognition::Comment => f.write_str("\"Native Client\" compiler comment"),
            Recognition::Layout => f.write_str("NaCl layout (text at 0x20000, 64 KiB alignment)"),
        }
    }
}

/// Static, or linked at run time by glibc's `runnable-ld.so`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Linking {
    Static,
    /// `PT_INTERP` names the dynamic linker; the `.so` files it needs come with the app
    /// (the `.nmf`'s `files`).
    Dynamic {
        interpreter: String,
        needed: Vec<String>,
    },
}

/// Where the code sits in the sandbox, which says which loader loads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Text at 0x20000, loaded by `sel_ldr` itself (newlib, PNaCl translations).
    Program,
    /// Text at 0x1000000 and above, the dynamic-code area where glibc's `runnable-ld.so`
    /// loads a program (glibc builds, static ones included).
    GlibcDynamicText,
    /// Text in the IRT region (0x0fc00000..0x10000000): an IRT image `sel_ldr -B` loads.
    Irt,
    /// Text anywhere else.
    Other,
}

/// Which generation of NaCl's runtime interface the program calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuntimeAbi {
    /// Before the IRT (2010-11): direct system calls through the trampolines at 0x10000.
    PreIrt,
    /// The early IRT (2011): `nacl-irt-*-0.1` names such as `nacl-irt-file-0.1`, and no
    /// `nacl-irt-basic-0.1`.
    EarlyIrt,
    /// The stable IRT (2012+): `nacl-irt-basic-0.1`, `-fdio-`, `-filename-`, ...
    StableIrt,
    /// A glibc dynamic program: its shared libc and `runnable-ld.so` query the IRT.
    ThroughLibc,
}

impl fmt::Display for RuntimeAbi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RuntimeAbi::PreIrt => "pre-IRT (direct syscalls through the trampolines at 0x10000)",
            RuntimeAbi::EarlyIrt => "early IRT (2011 interface names)",
            RuntimeAbi::StableIrt => "stable IRT",
            RuntimeAbi::ThroughLibc => "the IRT through glibc's shared objects",
        })
    }
}

/// What kind of program it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AppKind {
    /// A command-line program (standard streams, files, arguments).
    Cli,
    /// A Pepper (PPAPI) plugin: `nacl-irt-ppapihook-0.1`, `PPP_*` entry points, `PPB_*`
    /// interface names. `pre_1_0` for the 2011 interfaces (versions below 1.0).
    Pepper { pre_1_0: bool },
    /// A legacy SRPC service driven over IMC (`NaClSrpcAcceptClientConnection`), not
    /// Pepper and not a command-line program.
    Srpc,
    /// A PNaCl translator (Subzero, the linker): command-line-like, served by the private
    /// translator IRT interface named.
    Translator { interface: String },
    /// An IRT image: the runtime `sel_ldr` loads with `-B`, not a program.
    Irt,
}

impl fmt::Display for AppKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppKind::Cli => f.write_str("command-line program"),
            AppKind::Pepper { pre_1_0: false } => f.write_str("Pepper plugin"),
            AppKind::Pepper { pre_1_0: true } => {
                f.write_str("Pepper plugin (pre-1.0 interfaces, 2011)")
            }
            AppKind::Srpc => {
                f.write_str("legacy SRPC service (not Pepper, not a command-line program)")
            }
            AppKind::Translator { interface } => {
                write!(
                    f,
                    "PNaCl translator (command-line-like, through {interface})"
                )
            }
            AppKind::Irt => f.write_str("IRT image (the runtime sel_ldr loads, not a program)"),
        }
    }
}

/// One loadable segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    pub kind: SegmentKind,
    /// Sandbox address of its first byte.
    pub vaddr: u32,
    /// Bytes in memory (the part past `filesz` is zero).
    pub memsz: u32,
    /// Bytes in the file.
    pub filesz: u32,
    /// Where those bytes are in the file.
    pub offset: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SegmentKind {
    /// Read + execute: code.
    Text,
    /// Read-only data.
    Rodata,
    /// Read-write data and bss.
    Data,
}

/// Whether pexe2wasm translates the nexe, and if not, exactly why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Translation {
    /// A static x86-64 program: the translator's input (subject to validation).
    Translatable,
    /// NaCl itself would refuse to load it.
    Refused { error: LoadError },
    /// A kind of nexe the translator does not handle (yet).
    NotTranslated { reason: NotTranslated },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotTranslated {
    /// Code for another machine than x86-64.
    Arch(Arch),
    /// Linked at run time by `runnable-ld.so` with shared objects.
    Dynamic,
    /// An IRT image, not a program.
    IrtImage,
}

impl fmt::Display for Translation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Translation::Translatable => f.write_str("static x86-64: translatable"),
            Translation::Refused { error } => {
                write!(f, "refused: NaCl's loader rejects it: {error}")
            }
            Translation::NotTranslated { reason } => write!(f, "not translated: {reason}"),
        }
    }
}

impl fmt::Display for NotTranslated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotTranslated::Arch(Arch::X86_32) => f.write_str(
                "x86-32 code (segment-register sandbox, x87 floating point) is not translated yet",
            ),
            NotTranslated::Arch(Arch::Arm) => {
                f.write_str("ARM code (address masking, constant pools) is not translated yet")
            }
            NotTranslated::Arch(a) => write!(f, "{a} code is not translated"),
            NotTranslated::Dynamic => f.write_str(
                "a glibc dynamic nexe (runnable-ld.so and shared objects) is not translated yet",
            ),
            NotTranslated::IrtImage => {
                f.write_str("an IRT image is the runtime itself, not a program to run")
            }
        }
    }
}

/// Everything [`crate::inspect`] reads from a nexe.
#[derive(Debug, Clone, Serialize)]
pub struct NexeInfo {
    pub arch: Arch,
    /// 32 or 64 (the ELF class).
    pub elf_class: u8,
    pub recognized_by: Recognition,
    pub os_abi: u8,
    pub abi_version: u8,
    pub e_flags: u32,
    pub entry: u32,
    pub linking: Linking,
    pub layout: Layout,
    pub segments: Vec<Segment>,
    /// `nacl-irt-*` interface names found in the file, sorted.
    pub irt_interfaces: Vec<String>,
    pub runtime_abi: RuntimeAbi,
    pub app: AppKind,
    /// `PPB_*` interface names (with versions) found in the file, sorted.
    pub ppb_interfaces: Vec<String>,
    /// `PPP_*` interface names (with versions) found in the file, sorted.
    pub ppp_interfaces: Vec<String>,
    /// Whether it keeps a symbol table.
    pub symbols: bool,
    /// The compiler's `.comment` lines, when there are any.
    pub compiler: Vec<String>,
    pub translation: Translation,
}

impl NexeInfo {
    /// The text segment (every accepted nexe has exactly one).
    pub fn text(&self) -> Option<&Segment> {
        self.segments.iter().find(|s| s.kind == SegmentKind::Text)
    }

    /// One line: architecture, linking, kind and verdict (what `verify`/`convert` say).
    pub fn summary(&self) -> String {
        let linking = match &self.linking {
            Linking::Static => "static",
            Linking::Dynamic { .. } => "dynamic (glibc)",
        };
        format!(
            "a native NaCl executable (nexe): {}, {linking}, {}; {}",
            self.arch, self.app, self.translation
        )
    }
}

impl fmt::Display for NexeInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "native NaCl executable (nexe)")?;
        writeln!(f, "  architecture:   {} (ELF{})", self.arch, self.elf_class)?;
        writeln!(f, "  recognized by:  {}", self.recognized_by)?;
        writeln!(
            f,
            "  ELF:            OS/ABI {}, ABI version {}, e_flags {:#x}, entry {:#x}",
            self.os_abi, self.abi_version, self.e_flags, self.entry
        )?;
        match &self.linking {
            Linking::Static => writeln!(f, "  linking:        static")?,
            Linking::Dynamic {
                interpreter,
                needed,
            } => writeln!(
                f,
                "  linking:        dynamic (glibc): interpreter {interpreter}, needs {}",
                if needed.is_empty() {
                    "nothing listed".to_string()
                } else {
                    needed.join(", ")
                }
            )?,
        }
        let layout = match self.layout {
            Layout::Program => "program (text at 0x20000, loaded by sel_ldr)",
            Layout::GlibcDynamicText => {
                "glibc (text in the dynamic-code area, loaded by runnable-ld.so)"
            }
            Layout::Irt => "IRT region",
            Layout::Other => "unusual (text neither at 0x20000 nor in a known area)",
        };
        writeln!(f, "  layout:         {layout}")?;
        for s in &self.segments {
            let kind = match s.kind {
                SegmentKind::Text => "text  ",
                SegmentKind::Rodata => "rodata",
                SegmentKind::Data => "data  ",
            };
            writeln!(
                f,
                "    {kind} {:#010x}..{:#010x} ({} bytes, {} from the file)",
                s.vaddr,
                s.vaddr as u64 + s.memsz as u64,
                s.memsz,
                s.filesz
            )?;
        }
        writeln!(f, "  runtime ABI:    {}", self.runtime_abi)?;
        if !self.irt_interfaces.is_empty() {
            writeln!(f, "  IRT interfaces: {}", self.irt_interfaces.join(", "))?;
        }
        writeln!(f, "  kind:           {}", self.app)?;
        if !self.ppp_interfaces.is_empty() {
            writeln!(f, "  PPP interfaces: {}", self.ppp_interfaces.join(", "))?;
        }
        if !self.ppb_interfaces.is_empty() {
            writeln!(
                f,
                "  PPB interfaces: {} ({})",
                self.ppb_interfaces.len(),
                self.ppb_interfaces.join(", ")
            )?;
        }
        writeln!(
            f,
            "  symbols:        {}",
            if self.symbols { "yes" } else { "stripped" }
        )?;
        if !self.compiler.is_empty() {
            writeln!(f, "  compiler:       {}", self.compiler.join("; "))?;
        }
        writeln!(f, "  translation:    {}", self.translation)
    }
}
