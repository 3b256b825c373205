//! Assembling the lifted functions into one wasm module.
//!
//! Layout: helper functions first ([`F_EFLAGS`], [`F_MULHU`], [`F_UDIV128`],
//! [`F_NULL_PAGE`]), then one function per x86 function in address order; globals 0..16
//! are the registers (RAX … R15 in x86's numbering), 16..21 the flag record; memory 0 is
//! the sandbox (its image at the segments' addresses); table 0 maps bundle index `(addr -
//! base) / 32` to the function starting there (indirect calls and jumps; other slots
//! trap).

use super::cfg::{self, Function};
use super::flags;
use super::func::{
    self, Ctx, F_EFLAGS, F_MULHU, F_NULL_PAGE, F_UDIV128, G_FOP, G_XMM, HELPERS, TY_LIFTED,
};
use super::pepper::Pepper;
use super::runtime::{self, Runtime};
use super::LiftError;
use crate::{ImageSegment, Nexe, Translation};
use iced_x86::Instruction;
use rayon::prelude::*;
use std::collections::HashMap;
/// The imports a threaded module adds after WASI's and Pepper's: `wasi`.`thread-spawn`
/// and `pexe2wasm`.`thread_exit`, then for a Pepper plugin `pexe2wasm_ppapi`.`wait` (its
/// memory, `env`.`memory`, is not a function).
const THREAD_IMPORTS: u32 = 2;

use wasm_encoder::{
    CodeSection, ConstExpr, DataSection, ElementSection, Elements, Encode, ExportKind,
    ExportSection, FunctionSection, GlobalSection, GlobalType, MemorySection, MemoryType, Module,
    RefType, TableSection, TableType, TypeSection, ValType,
};

/// How to translate.
#[derive(Debug, Clone)]
pub struct Options {
    /// Also start functions at bundle starts that follow padding after an unconditional
    /// transfer (functions reached only through pointers).
    pub padded_starts: bool,
    /// Export every register and flag global, and `eflags` (tests read them).
    pub export_state: bool,
    /// At least this many 64 KiB pages of memory.
    pub min_pages: u32,
    /// Give functions that did not lift a body that traps instead of failing (the corpus
    /// test validates every function that does lift).
    pub stub_failures: bool,
    /// Link the runtime (`runtime.rs`): the module imports WASI, exports `_start` (the
    /// startup, then the entry) and `memory`, and the syscall trampolines are its
    /// adapters. Without it the entry is exported as `_start` and nothing is imported.
    pub runtime: bool,
    /// With the runtime: a Pepper plugin's imports, exports and adapters (`pepper.rs`).
    pub pepper: Option<Pepper>,
    /// With the runtime: the PNaCl translator's compile interface and its object file
    /// (`translator.rs`).
    pub translator: bool,
    /// With the runtime: PNaCl's linker (`pnacl-ld`): the link and resource-open
    /// interfaces, WASI's `path_open` (imported last) for its inputs, and the nexe it
    /// writes (`translator.rs`).
    pub linker: bool,
    /// With the runtime: threads as converted pexes have them (docs/RUNTIME-ABI.md,
    /// "Threads"): the memory is imported and shared (`env`.`memory`, its data copied in
    /// once by `_start`), `thread_create` is `wasi`.`thread-spawn` and each thread an
    /// instance of its own (`wasi_thread_start`), futexes are wasm's wait and notify, and
    /// `lock`-prefixed instructions and `xchg` with memory are wasm atomics.
    pub threads: bool,
    /// Memory accesses to NaCl's unmapped first 64 KiB fault (`func::Em::null_check`):
    /// every translation of a program; tests of instruction semantics whose memory sits
    /// there turn it off.
    pub null_page: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            padded_starts: true,
            export_state: true,
            min_pages: 1,
            stub_failures: false,
            runtime: false,
            pepper: None,
            translator: false,
            linker: false,
            threads: false,
            null_page: true,
        }
    }
}

/// The functions of some code and each one's lifting.
pub struct Lifted {
    pub base: u32,
    /// Functions imported before the module's own.
    pub fbase: u32,
    /// The address of table 0's slot 0.
    pub tbase: u32,
    pub end: u32,
    pub functions: Vec<Function>,
    /// Each function's body (locals and code, without its size), or why it did not lift.
    pub results: Vec<Result<Vec<u8>, LiftError>>,
    /// How many of the lifted functions have structured control flow (the others
    /// dispatch their blocks through a loop).
    pub structured: usize,
    /// The program's function symbols (address, name), by address: the name section
    /// names each function after the symbol at or before its start.
    pub symbols: Vec<(u32, String)>,
}

/// A translated module.
pub struct Translated {
    pub wasm: Vec<u8>,
    /// Start address of each lifted function, in function-index order (after the helpers).
    pub functions: Vec<u32>,
    /// A Pepper plugin's host heap (`__ppapi_alloc`'s room): its start and end.
    pub host_heap: Option<(u32, u32)>,
}

/// The register names in x86's numbering (the exported globals' names).
pub const REGISTERS: [&str; 16] = [
    "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15",
];

/// The exported function name of the x86 function at `addr`.
pub fn function_name(addr: u32) -> String {
    format!("f_{addr:x}")
}

/// Lifts every function of `code` (at `base`), starting from `known` starts.
pub fn lift_code(code: &[u8], base: u32, known: &[u32], options: &Options) -> Lifted {
    let insns = cfg::decode_all(code, base);
    let end = base.saturating_add(code.len() as u32);
    lift_decoded(&insns, base, end, known, options)
}

/// Lifts every function of the decoded code `insns` (of `base..end`).
fn lift_decoded(
    insns: &[Instruction],
    base: u32,
    end: u32,
    known: &[u32],
    options: &Options,
) -> Lifted {
    let functions = cfg::discover(insns, base, end, known, options.padded_starts);
    let (fbase, tbase) = if options.runtime && base >= runtime::TRAMPOLINES + 0x1_0000 {
        (
            runtime::IMPORTS.len() as u32
                + options.pepper.as_ref().map_or(0, |p| p.import_count())
                + if options.threads {
                    THREAD_IMPORTS + u32::from(options.pepper.is_some())
                } else {
                    0
                },
            runtime::TRAMPOLINES,
        )
    } else {
        (0, base)
    };
    let mut funcs: HashMap<u32, u32> = functions
        .iter()
        .enumerate()
        .map(|(k, f)| (f.start, fbase + HELPERS + k as u32))
        .collect();
    if fbase > 0 {
        let rt = Runtime {
            first: fbase + HELPERS + functions.len() as u32,
            image_top: 0,
            heap: 0,
            translator: options.translator,
            path_open: None,
            threads: None,
            wait: None,
        };
        funcs.extend(rt.trampolines());
    }
    let ctx = Ctx {
        base,
        fbase,
        tbase,
        end,
        funcs: &funcs,
        threads: options.threads,
        null_page: options.null_page,
    };
    // Functions lift independently: in parallel, in jobs of a few dozen so that no thread
    // ends the pass alone on a long run (decision 0010's rule for the converter).
    let structured = std::sync::atomic::AtomicUsize::new(0);
    let results = functions
        .par_iter()
        .with_max_len(32)
        .map(|f| {
            let lo = insns.partition_point(|i| (i.ip() as u32) < f.start);
            let hi = insns.partition_point(|i| (i.ip() as u32) < f.end);
            let slice: &[Instruction] = &insns[lo..hi];
            func::lift(f, slice, &ctx, true).map(|(body, s)| {
                if s {
                    structured.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                body
            })
        })
        .collect();
    Lifted {
        base,
        fbase,
        tbase,
        end,
        functions,
        results,
        structured: structured.into_inner(),
        symbols: Vec::new(),
    }
}

impl Lifted {
    /// The module, or the first function's error.
    pub fn assemble(
        self,
        image: &[ImageSegment<'_>],
        entry: Option<u32>,
        options: &Options,
    ) -> Result<Translated, LiftError> {
        let mut bodies = Vec::with_capacity(self.results.len());
        for r in self.results {
            match r {
                Ok(b) => bodies.push(b),
                Err(_) if options.stub_failures => {
                    let mut b = wasm_encoder::Function::new([]);
                    b.instructions().unreachable().end();
                    bodies.push(b.into_raw_body());
                }
                Err(e) => return Err(e),
            }
        }
        let mut m = Module::new();
        let mut types = TypeSection::new();
        let i64s = |n| std::iter::repeat_n(ValType::I64, n);
        types.ty().function(
            [
                ValType::I32,
                ValType::I64,
                ValType::I64,
                ValType::I64,
                ValType::I64,
            ],
            [ValType::I32],
        );
        types.ty().function(i64s(2), i64s(1));
        types.ty().function(i64s(3), i64s(2));
        types.ty().function([ValType::I32], [ValType::I32]);
        let image_top = image
            .iter()
            .map(|s| s.vaddr as u64 + s.memsz as u64)
            .max()
            .unwrap_or(0)
            .max(self.end as u64)
            .next_multiple_of(65536);
        let fbase = self.fbase;
        let pepper = options.pepper.as_ref().filter(|_| fbase > 0);
        let threads = options.threads && fbase > 0;
        // the thread imports follow WASI's and Pepper's
        let spawn = runtime::IMPORTS.len() as u32 + pepper.map_or(0, |p| p.import_count());
        let rt = (fbase > 0).then(|| Runtime {
            first: fbase + HELPERS + bodies.len() as u32,
            image_top: image_top as u32,
            heap: if pepper.is_some() {
                super::pepper::HOST_HEAP
            } else {
                0
            },
            translator: options.translator,
            // the runtime's own WASI import, which its file functions use too
            path_open: options.linker.then_some(runtime::I_PATH_OPEN),
            threads: threads.then_some(spawn),
            wait: (threads && pepper.is_some()).then_some(spawn + THREAD_IMPORTS),
        });
        let top = match rt {
            Some(rt) => rt.initial_break() as u64,
            None => image_top,
        };
        let pages = top.div_ceil(65536).max(options.min_pages as u64);
        let memory_type = |shared| MemoryType {
            minimum: pages,
            maximum: Some(65536),
            memory64: false,
            shared,
            page_size_log2: None,
        };
        // Pepper's types follow the runtime's.
        let pepper_types = runtime::TY_END;
        let pepper_data = match pepper {
            Some(p) => Some(p.data(runtime::irt_slot_count())?),
            None => None,
        };
        if let Some(rt) = rt {
            if image_top + runtime::STACK_SIZE as u64 + rt.heap as u64 >= 1 << 32 {
                return Err(LiftError::Verdict(
                    "the image leaves no room for the stack".into(),
                ));
            }
            runtime::types(&mut types);
            if let Some(p) = pepper {
                p.types(&mut types);
            }
            m.section(&types);
            let mut imports = wasm_encoder::ImportSection::new();
            for (name, ty) in runtime::IMPORTS {
                imports.import(
                    "wasi_snapshot_preview1",
                    name,
                    wasm_encoder::EntityType::Function(*ty),
                );
            }
            if let Some(p) = pepper {
                p.imports(&mut imports, pepper_types);
            }
            if threads {
                use wasm_encoder::EntityType;
                imports.import("wasi", "thread-spawn", EntityType::Function(TY_LIFTED));
                imports.import(
                    "pexe2wasm",
                    "thread_exit",
                    EntityType::Function(runtime::TY_START),
                );
                if pepper.is_some() {
                    imports.import(
                        "pexe2wasm_ppapi",
                        "wait",
                        EntityType::Function(runtime::TY_EXIT),
                    );
                }
                imports.import("env", "memory", EntityType::Memory(memory_type(true)));
            }
            m.section(&imports);
        } else {
            m.section(&types);
        }

        let mut fs = FunctionSection::new();
        fs.function(0).function(1).function(2).function(TY_LIFTED);
        for _ in &bodies {
            fs.function(TY_LIFTED);
        }
        if rt.is_some() {
            for t in Runtime::function_types() {
                fs.function(t);
            }
            if let Some(p) = pepper {
                for t in p.function_types(pepper_types) {
                    fs.function(t);
                }
            }
            if threads {
                fs.function(runtime::TY_THREAD_START);
            }
        }
        m.section(&fs);

        let bundles = ((self.end - self.tbase) / 32).max(1) as u64;
        let mut tables = TableSection::new();
        tables.table(TableType {
            element_type: RefType::FUNCREF,
            table64: false,
            minimum: bundles,
            maximum: Some(bundles),
            shared: false,
        });
        m.section(&tables);

        if !threads {
            let mut mems = MemorySection::new();
            mems.memory(memory_type(false));
            m.section(&mems);
        }

        let mut globals = GlobalSection::new();
        let g = |t| GlobalType {
            val_type: t,
            mutable: true,
            shared: false,
        };
        for _ in 0..16 {
            globals.global(g(ValType::I64), &ConstExpr::i64_const(0));
        }
        globals.global(g(ValType::I32), &ConstExpr::i32_const(0));
        for _ in 0..4 {
            globals.global(g(ValType::I64), &ConstExpr::i64_const(0));
        }
        for _ in 0..16 {
            globals.global(g(ValType::V128), &ConstExpr::v128_const(0));
        }
        // the x87 control word (func::G_X87CW): x87's default after `fninit`
        globals.global(g(ValType::I32), &ConstExpr::i32_const(0x037f));
        if rt.is_some() {
            // the thread pointer, HandleMessage, the thread's scratch (runtime::G_TLS,
            // G_PPP_HANDLE_MESSAGE, G_SCRATCH: the main thread's)
            globals.global(g(ValType::I64), &ConstExpr::i64_const(0));
            globals.global(g(ValType::I32), &ConstExpr::i32_const(0));
            globals.global(
                g(ValType::I32),
                &ConstExpr::i32_const(runtime::TRAMPOLINES as i32),
            );
        }
        m.section(&globals);

        let mut ex = ExportSection::new();
        ex.export("memory", ExportKind::Memory, 0);
        if options.export_state {
            for (n, name) in REGISTERS.iter().enumerate() {
                ex.export(name, ExportKind::Global, n as u32);
            }
            for (k, name) in ["flags_op", "flags_a", "flags_b", "flags_r", "flags_c"]
                .iter()
                .enumerate()
            {
                ex.export(name, ExportKind::Global, G_FOP + k as u32);
            }
            for n in 0..16u32 {
                ex.export(&format!("xmm{n}"), ExportKind::Global, G_XMM + n);
            }
            ex.export("eflags", ExportKind::Func, fbase + F_EFLAGS);
        }
        let entry_index = self
            .functions
            .iter()
            .position(|f| entry == Some(f.start))
            .map(|k| fbase + HELPERS + k as u32);
        match rt {
            Some(rt) => {
                ex.export("_start", ExportKind::Func, rt.first);
                if let Some(p) = pepper {
                    for (name, f) in p.exports(rt.first + Runtime::count()) {
                        ex.export(name, ExportKind::Func, f);
                    }
                }
                if threads {
                    let pepper_fns = pepper.map_or(0, |p| p.function_types(0).len() as u32);
                    ex.export(
                        "wasi_thread_start",
                        ExportKind::Func,
                        rt.first + Runtime::count() + pepper_fns,
                    );
                }
            }
            None => {
                for (k, f) in self.functions.iter().enumerate() {
                    ex.export(
                        &function_name(f.start),
                        ExportKind::Func,
                        fbase + HELPERS + k as u32,
                    );
                }
                if let Some(e) = entry_index {
                    ex.export("_start", ExportKind::Func, e);
                }
            }
        }
        m.section(&ex);

        let mut els = ElementSection::new();
        for (k, f) in self.functions.iter().enumerate() {
            if (f.start - self.tbase).is_multiple_of(32) {
                let idx = [fbase + HELPERS + k as u32];
                els.active(
                    Some(0),
                    &ConstExpr::i32_const(((f.start - self.tbase) / 32) as i32),
                    Elements::Functions(idx[..].into()),
                );
            }
        }
        if let Some(rt) = rt {
            let mut idx: Vec<u32> = rt.trampolines().map(|(_, f)| f).collect();
            // Pepper's adapters take the slots after the IRT's
            if let Some(p) = pepper {
                let first = rt.first + Runtime::count();
                idx.extend(first..first + p.adapter_count());
            }
            els.active(
                Some(0),
                &ConstExpr::i32_const(0),
                Elements::Functions(idx[..].into()),
            );
        }
        m.section(&els);

        // The data: with threads, passive segments `_start` copies into the shared
        // memory once (an instance per thread must not copy them again).
        let mut segments: Vec<(u32, &[u8])> = image
            .iter()
            .filter(|s| !s.bytes.is_empty())
            .map(|s| (s.vaddr, s.bytes))
            .collect();
        let irt_data =
            rt.map(|_| runtime::irt_data(pepper.is_some(), options.translator, options.linker));
        if let Some(d) = &irt_data {
            segments.push((runtime::IRT_DATA as u32, d));
        }
        if let Some(d) = &pepper_data {
            segments.push((super::pepper::PEPPER_DATA as u32, d));
        }
        let passive: Vec<(u32, u32)> = if threads {
            segments.iter().map(|(a, b)| (*a, b.len() as u32)).collect()
        } else {
            Vec::new()
        };
        if threads {
            m.section(&wasm_encoder::DataCountSection {
                count: segments.len() as u32,
            });
        }

        // The code section is written into one buffer of its final size (CodeSection
        // would grow by doubling, copying the bodies as it goes).
        let mut head = CodeSection::new();
        head.function(&flags::emit_eflags());
        head.function(&flags::emit_mulhu());
        head.function(&flags::emit_udiv128());
        head.function(&runtime::null_page_fault(rt.is_some()));
        let mut tail = CodeSection::new();
        if let Some(rt) = rt {
            let e = entry_index.ok_or_else(|| {
                LiftError::Verdict("the entry point is not a function start".into())
            })?;
            for b in rt.bodies(e, &passive) {
                tail.function(&b);
            }
            if let Some(p) = pepper {
                let import_base = runtime::IMPORTS.len() as u32;
                for b in p.bodies(import_base, runtime::irt_slot_count(), rt.host_heap()) {
                    tail.function(&b);
                }
            }
            if let Some(b) = rt.thread_start() {
                tail.function(&b);
            }
        }
        let count = head.len() + bodies.len() as u32 + tail.len();
        let size = 5
            + head.byte_len()
            + tail.byte_len()
            + bodies.iter().map(|b| 5 + b.len()).sum::<usize>();
        let mut code = Vec::with_capacity(size);
        count.encode(&mut code);
        encode_head(&head, &mut code);
        for b in &bodies {
            b.len().encode(&mut code);
            code.extend_from_slice(b);
        }
        encode_head(&tail, &mut code);
        drop(bodies);
        m.section(&wasm_encoder::RawSection {
            id: wasm_encoder::SectionId::Code as u8,
            data: &code,
        });
        drop(code);

        let mut data = DataSection::new();
        for (addr, bytes) in segments {
            if threads {
                data.passive(bytes.iter().copied());
            } else {
                data.active(0, &ConstExpr::i32_const(addr as i32), bytes.iter().copied());
            }
        }
        m.section(&data);
        m.section(&names(fbase, &self.functions, &self.symbols));

        let _ = (F_MULHU, F_UDIV128, F_NULL_PAGE);
        Ok(Translated {
            wasm: m.finish(),
            functions: self.functions.iter().map(|f| f.start).collect(),
            host_heap: rt.filter(|r| r.heap > 0).map(|r| r.host_heap()),
        })
    }
}

/// The name section: the helpers', and each lifted function's, after the symbol at or
/// before its start (`memcpy`, `main+0x40` for a piece split off at a jump target) or,
/// without one, its address (`x86_20400`). Profilers and backtraces (wasmtime's, the
/// browsers') show these names.
fn names(
    fbase: u32,
    functions: &[Function],
    symbols: &[(u32, String)],
) -> wasm_encoder::NameSection {
    let mut map = wasm_encoder::NameMap::new();
    for (k, name) in ["eflags", "mulhu", "udiv128", "null_page_fault"]
        .iter()
        .enumerate()
    {
        map.append(fbase + k as u32, name);
    }
    let mut name = String::new();
    for (k, f) in functions.iter().enumerate() {
        use std::fmt::Write;
        name.clear();
        let at = symbols.partition_point(|s| s.0 <= f.start);
        // a symbol before the function names it only when nothing else starts between
        match at.checked_sub(1).map(|i| &symbols[i]) {
            Some((a, sym)) if *a == f.start => name.push_str(sym),
            Some((a, sym)) if k > 0 && functions[k - 1].start >= *a && f.start - a < 1 << 20 => {
                let _ = write!(name, "{sym}+{:#x}", f.start - a);
            }
            _ => {
                let _ = write!(name, "x86_{:x}", f.start);
            }
        }
        map.append(fbase + HELPERS + k as u32, &name);
    }
    let mut section = wasm_encoder::NameSection::new();
    section.functions(&map);
    section
}

/// Appends the function entries of `section` (its encoding without the section size and
/// the function count).
fn encode_head(section: &CodeSection, out: &mut Vec<u8>) {
    let mut all = Vec::with_capacity(section.byte_len() + 10);
    section.encode(&mut all);
    // skip the section's size and count (two LEB128 numbers)
    let mut at = 0;
    for _ in 0..2 {
        while all[at] & 0x80 != 0 {
            at += 1;
        }
        at += 1;
    }
    out.extend_from_slice(&all[at..]);
}

/// Translates raw code at `base` whose functions start at `known` (tests, tools): no
/// validation, no memory image besides the code itself.
pub fn translate_code(
    code: &[u8],
    base: u32,
    known: &[u32],
    options: &Options,
) -> Result<Translated, LiftError> {
    let image = [ImageSegment {
        kind: crate::SegmentKind::Text,
        vaddr: base,
        memsz: code.len() as u32,
        bytes: code,
    }];
    lift_code(code, base, known, options).assemble(&image, known.first().copied(), options)
}

/// Lifts a nexe's code: refused unless it is a static x86-64 program NaCl's validator
/// accepts. The result holds every function's lifting (the corpus tally reads it).
pub fn lift_nexe(nexe: &Nexe<'_>, options: &Options) -> Result<Lifted, LiftError> {
    if nexe.info.translation != Translation::Translatable {
        return Err(LiftError::Verdict(nexe.info.translation.to_string()));
    }
    let text = nexe.code();
    let entry = nexe.info.entry;
    // A symbol table names every function: its starts replace the guess at functions
    // reached only through pointers (bundle starts after padding), which also splits a
    // function at each aligned block after a return, every jump to it then a tail call.
    let symbolized = text.as_ref().is_some_and(|(base, code)| {
        let end = base.saturating_add(code.len() as u32);
        nexe.function_symbols
            .iter()
            .any(|s| (*base..end).contains(&s.0))
    });
    let options = &Options {
        padded_starts: options.padded_starts && !symbolized,
        ..options.clone()
    };
    // The lifting runs beside the validation and is used only when the code is valid. It
    // starts from the entry (when an instruction starts there), the address-taken bundle
    // starts, the function symbols and the direct call targets (discovery adds those),
    // which is what the validator's facts give for valid code; the check below makes sure
    // of it.
    let (v, lifted) = rayon::join(
        || nexe.validate_x86_64(),
        || {
            text.as_ref().map(|(base, code)| {
                let insns = cfg::decode_all(code, *base);
                let end = base.saturating_add(code.len() as u32);
                let with_entry = insns
                    .binary_search_by_key(&entry, |i| i.ip() as u32)
                    .is_ok();
                let mut taken = address_taken(&insns, *base, end, &nexe.memory_image());
                // symbols at instruction starts (not data in the code, nor its end)
                taken.extend(
                    nexe.function_symbols
                        .iter()
                        .map(|s| s.0)
                        .filter(|&a| insns.binary_search_by_key(&a, |i| i.ip() as u32).is_ok()),
                );
                let mut starts = taken.clone();
                if with_entry {
                    starts.push(entry);
                }
                starts.sort_unstable();
                starts.dedup();
                let lifted = lift_decoded(&insns, *base, end, &starts, options);
                (insns, taken, with_entry, lifted)
            })
        },
    );
    let v = v.ok_or_else(|| LiftError::Verdict("no x86-64 code to translate".into()))?;
    if let Some(e) = v.errors.first() {
        return Err(LiftError::Invalid86(e.to_string()));
    }
    let ((base, code), (insns, mut starts, with_entry, lifted)) = text
        .zip(lifted)
        .ok_or_else(|| LiftError::Verdict("no text segment".into()))?;
    let end = base.saturating_add(code.len() as u32);
    let known = v.facts.function_starts(entry);
    let found = |a: &u32| {
        lifted
            .functions
            .binary_search_by_key(a, |f| f.start)
            .is_ok()
    };
    if with_entry == v.facts.is_valid_target(entry)
        && known.iter().filter(|&&a| a >= base && a < end).all(found)
    {
        return Ok(Lifted {
            symbols: nexe.function_symbols.clone(),
            ..lifted
        });
    }
    // The validator's starts differ from what the lifting started from: lift again from
    // them and the address-taken ones (`starts` holds those).
    starts.extend(known);
    starts.sort_unstable();
    starts.dedup();
    Ok(Lifted {
        symbols: nexe.function_symbols.clone(),
        ..lift_decoded(&insns, base, end, &starts, options)
    })
}

/// Bundle starts whose address the program takes: immediates and RIP-relative `lea`s in
/// the code, and 32-bit words of the data (function pointer tables, `.ctors`, vtables).
/// Only bundle starts can be indirect targets, and each one found becomes a function
/// start, so that its table slot is filled (`atexit(_fini)`, a callback): a word that
/// only looks like one just splits a function at a bundle boundary, which is harmless.
fn address_taken(
    insns: &[Instruction],
    base: u32,
    end: u32,
    image: &[ImageSegment<'_>],
) -> Vec<u32> {
    let end = end as u64;
    let is_start = |v: u64| v >= base as u64 && v < end && (v - base as u64).is_multiple_of(32);
    let mut out = Vec::new();
    for (k, i) in insns.iter().enumerate() {
        // a pushed-return call's return address is no function start (as a call's)
        if cfg::is_call_push(insns, k) {
            continue;
        }
        if i.mnemonic() == iced_x86::Mnemonic::Lea && i.is_ip_rel_memory_operand() {
            let t = i.memory_displacement64();
            if is_start(t) {
                out.push(t as u32);
            }
        }
        for n in 0..i.op_count() {
            use iced_x86::OpKind as K;
            if matches!(
                i.op_kind(n),
                K::Immediate32 | K::Immediate32to64 | K::Immediate64
            ) {
                let t = i.immediate(n);
                if is_start(t) {
                    out.push(t as u32);
                }
            }
        }
    }
    for s in image.iter().filter(|s| s.kind != crate::SegmentKind::Text) {
        for (k, w) in s.bytes.chunks_exact(4).enumerate() {
            let at = s.vaddr as u64 + 4 * k as u64;
            if !at.is_multiple_of(4) {
                continue;
            }
            let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as u64;
            if is_start(v) {
                out.push(v as u32);
            }
        }
    }
    out
}

/// The dynamic-code interface the nexe names, as the error its use gives: code written
/// at run time is not translated yet. The runtime's IRT query answers it with this error
/// (the name in the file alone does not mean the program uses it).
pub fn dyncode_interface(nexe: &Nexe<'_>) -> Option<LiftError> {
    let i = nexe
        .info
        .irt_interfaces
        .iter()
        .find(|i| i.starts_with("nacl-irt-dyncode"))?;
    Some(LiftError::InterfaceNotTranslatedYet {
        interface: i.clone(),
        what: "dynamic-code",
    })
}

/// Translates a static x86-64 nexe into a wasm module (its memory holds the image).
pub fn translate(nexe: &Nexe<'_>, options: &Options) -> Result<Translated, LiftError> {
    let lifted = lift_nexe(nexe, options)?;
    let image = nexe.memory_image();
    lifted.assemble(&image, Some(nexe.info.entry), options)
}

/// A nexe translated into a program: a WASI command with the runtime linked.
pub struct Program {
    pub wasm: Vec<u8>,
    /// Functions lifted and functions in all.
    pub lifted: usize,
    pub functions: usize,
    /// The functions that did not lift (each traps when called), with why, in address
    /// order.
    pub not_lifted: Vec<(u32, LiftError)>,
    /// The start address of each lifted function, in function-index order from
    /// `first_function` (a trap's wasm function index names its x86 function).
    pub starts: Vec<u32>,
    pub first_function: u32,
    /// A Pepper plugin's host heap: its start and end (browser::for_browser's input).
    pub host_heap: Option<(u32, u32)>,
}

/// The options [`translate_program`] translates `nexe` with (a Pepper plugin's glue for a
/// Pepper nexe); the translate bench times its phases with the same.
pub fn program_options(nexe: &Nexe<'_>) -> Options {
    Options {
        padded_starts: true,
        export_state: false,
        min_pages: 1,
        stub_failures: true,
        runtime: true,
        pepper: matches!(nexe.info.app, crate::AppKind::Pepper { pre_1_0: false })
            .then(|| Pepper::new(&nexe.info.ppb_interfaces)),
        translator: is_compile_translator(&nexe.info),
        linker: is_link_translator(&nexe.info),
        // threaded when the program can ask for threads, as pexes are (`Threads::Auto`)
        threads: nexe
            .info
            .irt_interfaces
            .iter()
            .any(|i| i.starts_with("nacl-irt-thread")),
        null_page: true,
    }
}

/// Translates a static x86-64 nexe into a WASI command (`Options::runtime`): functions
/// that do not lift trap when reached, and are listed.
pub fn translate_program(nexe: &Nexe<'_>) -> Result<Program, LiftError> {
    let options = program_options(nexe);
    let lifted = lift_nexe(nexe, &options)?;
    let functions = lifted.functions.len();
    let not_lifted: Vec<(u32, LiftError)> = lifted
        .functions
        .iter()
        .zip(&lifted.results)
        .filter_map(|(f, r)| r.as_ref().err().map(|e| (f.start, e.clone())))
        .collect();
    let first_function = lifted.fbase + HELPERS;
    let t = lifted.assemble(&nexe.memory_image(), Some(nexe.info.entry), &options)?;
    Ok(Program {
        host_heap: t.host_heap,
        starts: t.functions,
        first_function,
        wasm: t.wasm,
        lifted: functions - not_lifted.len(),
        functions,
        not_lifted,
    })
}

/// Whether `translate_program` gives a module our runtime runs: a static x86-64
/// command-line program, pre-IRT (its syscalls go through the trampolines) or of the IRT
/// era (it queries the interfaces through `AT_SYSINFO`; the 2011 libc falls back to the
/// trampolines for the interfaces not answered), a Pepper plugin, or PNaCl's compiler
/// (Subzero, through the translator's compile interface) or its linker (`pnacl-ld`,
/// through the link interface). SRPC and libc-dynamic programs need more than the runtime gives.
pub fn runs_with_runtime(info: &crate::NexeInfo) -> bool {
    use crate::RuntimeAbi::*;
    info.arch == crate::Arch::X86_64
        && info.translation == Translation::Translatable
        && matches!(info.runtime_abi, PreIrt | EarlyIrt | StableIrt)
        && (matches!(
            info.app,
            crate::AppKind::Cli | crate::AppKind::Pepper { pre_1_0: false }
        ) || is_compile_translator(info)
            || is_link_translator(info))
}

/// `data` inspected, when it is a nexe [`translate_program`] makes a module of that our
/// runtime runs ([`runs_with_runtime`]); `None` for anything else (a pexe, another nexe:
/// the decoder's words name those). The CLI's `convert`/`run` and the service's
/// `/v1/convert` ask this first.
pub fn translatable(data: &[u8]) -> Option<Nexe<'_>> {
    if !crate::is_elf(data) {
        return None;
    }
    let nexe = crate::inspect(data).ok()?;
    runs_with_runtime(&nexe.info).then_some(nexe)
}

/// Whether the nexe is PNaCl's linker: it asks for the translator's link interface.
pub fn is_link_translator(info: &crate::NexeInfo) -> bool {
    matches!(&info.app, crate::AppKind::Translator { interface }
        if interface.starts_with(super::translator::LINK_INTERFACE_PREFIX))
}

/// Whether the nexe is PNaCl's compiler: it asks for the translator's compile interface.
pub fn is_compile_translator(info: &crate::NexeInfo) -> bool {
    matches!(&info.app, crate::AppKind::Translator { interface }
        if interface.starts_with(super::translator::COMPILE_INTERFACE_PREFIX))
}
