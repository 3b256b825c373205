//! The output module: index spaces, sections, parallel lowering, names.
//!
//! Index spaces (docs/ARCHITECTURE.md): functions = WASI imports, linked modules'
//! functions (runtime, then helpers), the pexe's defined functions in function-id order,
//! the threaded start, the call adapters (`adapt.rs`); globals = `__stack_pointer`,
//! `__thread_pointer`, `__heap_base`, `__table_base`, then linked modules' globals; table
//! 0 = null, the pexe's address-taken functions grouped by wasm type, the linked modules'
//! element segments from `__table_base`.

use std::borrow::Cow;
use std::collections::HashMap;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use wasm_encoder::reencode::Reencode;
use wasm_encoder::{
    CodeSection, ConstExpr, DataCountSection, DataSection, ElementSection, Elements, Encode,
    EntityType, ExportKind, ExportSection, FunctionSection, GlobalSection, GlobalType,
    ImportSection, MemorySection, MemoryType, NameMap, NameSection, RefType, TableSection,
    TableType, TagKind, TagSection, TagType, TypeSection, ValType,
};

use super::layout::{layout, Layout};
use super::link::{self, Import, Linked, Remap};
use super::validate::{leb_len, wasm_features, BodyCheck, Checker, Walked};
use super::{EmitError, InternalError, LinkProblem};
use crate::ir::{CodeSummary, Module};
use crate::lower::{self, LowerCtx, Sig, SigTable, Used, NO_FUNC};

#[derive(Debug, Clone)]
pub struct EmitOptions {
    pub stack_size: u32,
    /// Wasm threads: atomics lower to wasm atomics on a shared memory. With a runtime
    /// linked, the module also imports that memory (`env`.`memory`, as wasi-threads hosts
    /// share it between instances), its data segments are passive and initialized once by
    /// the exported `_start` (a wrapper around the runtime's), and it exports the runtime's
    /// `wasi_thread_start`.
    pub threads: bool,
    /// Export every pexe function (by name, else `f<N>`): for tests.
    pub export_all_functions: bool,
    /// A Pepper plugin: the names of the interfaces the pexe names (`info::interface_names`).
    /// The glue for the PPB ones the description knows is linked after the runtime, which
    /// must be the Pepper runtime (`emit/pepper.rs`, docs/PEPPER-ABI.md).
    pub pepper: Option<Vec<String>>,
    /// Validate the module with wasmparser as it is built (`validate.rs`): the sections
    /// before the code alongside the lowering, the bodies while they are copied into
    /// place, the rest at the end. An invalid module is then an [`EmitError::Invalid`],
    /// never returned.
    pub validate: bool,
    /// Locals shared across blocks with liveness (`lower/alloc.rs`,
    /// [`crate::convert::Locals::Liveness`]).
    pub liveness_locals: bool,
}

/// A command-line program's options as [`crate::convert::convert`] gives them by default:
/// no threads, no Pepper, the default stack, validated as it is built.
impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions {
            stack_size: crate::convert::ConvertOptions::default().stack_size,
            threads: false,
            export_all_functions: false,
            pepper: None,
            validate: true,
            liveness_locals: false,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmitStats {
    pub functions: usize,
    pub irreducible_functions: usize,
    pub code_bytes: usize,
    pub data_bytes: usize,
    pub data_segments: usize,
    pub table_size: u32,
    pub memory_pages: u64,
    pub stack_top: u64,
}

pub struct Emitted {
    pub wasm: Vec<u8>,
    pub used: Used,
    /// Imports of the output (module, name).
    pub imports: Vec<(String, String)>,
    pub stats: EmitStats,
}

const SP: u32 = 0;
const TP: u32 = 1;
const HEAP_BASE: u32 = 2;
const TABLE_BASE: u32 = 3;

/// What the module-level parts of emission need from the pexe's instructions: the
/// bodies' code summaries (gathered by the decoder, `ir::summary`) put together, with the
/// indirect calls' wasm signatures.
#[derive(Default)]
struct CodeFacts {
    /// Function ids whose address is taken in code (repeats across bodies).
    taken: Vec<u32>,
    /// Some `frem` needs the fmod helpers.
    frem: bool,
    /// Signatures of indirect calls, in instruction order (repeats removed per body).
    indirect: Vec<Sig>,
    /// Some function calls `llvm.nacl.setjmp` or `llvm.nacl.longjmp`: the module then gets
    /// the longjmp tag and the invocation counter (`lower/sjlj.rs`).
    sjlj: bool,
}

impl CodeFacts {
    /// Adds a body's summary (the bodies are added in order).
    fn add(&mut self, vt: &[Option<ValType>], s: &CodeSummary) {
        self.taken.extend_from_slice(s.taken());
        self.frem |= s.frem;
        self.sjlj |= s.sjlj;
        let first = self.indirect.len();
        for sig in s.indirect_sigs() {
            let params: Option<Vec<ValType>> =
                sig.params().map(|t| *vt.get(t.0 as usize)?).collect();
            if let Some(params) = params {
                let results = vt.get(sig.ret.0 as usize).copied().flatten();
                let sig = Sig {
                    params,
                    results: results.into_iter().collect(),
                };
                // Interning keeps the first occurrence: dropping later repeats of the
                // same body keeps the order of first occurrences.
                if !self.indirect[first..].contains(&sig) {
                    self.indirect.push(sig);
                }
            }
        }
    }

    /// The facts of every body: from the decoder's summaries, else (bodies built by
    /// hand) from the same facts scanned here. Serial: a summary is a few words.
    fn of_module(m: &Module, vt: &[Option<ValType>]) -> CodeFacts {
        let mut facts = CodeFacts::default();
        for f in &m.function_bodies {
            match &f.summary {
                Some(s) => facts.add(vt, s),
                None => facts.add(vt, &CodeSummary::scan(m, f)),
            }
        }
        facts
    }
}

/// Assembles the output module. `runtime` is the compiled runtime (linked with its
/// `_start` exported), or `None` for a bare module (tests).
pub fn emit(m: &Module, runtime: Option<&[u8]>, opts: &EmitOptions) -> Result<Emitted, EmitError> {
    lower_module(m, runtime, opts)?.finish()
}

/// The first part of [`emit`]: lays out memory, lowers every pexe function and prepares
/// the rest of the module; [`Pending::finish`] (which needs nothing of `m`) completes it.
pub fn lower_module(
    m: &Module,
    runtime: Option<&[u8]>,
    opts: &EmitOptions,
) -> Result<Pending, EmitError> {
    Emission::new(m, runtime, opts).lower()
}

/// Emission's orchestration. [`Emission::lower`] is the list of stages up to the lowered
/// bodies, each a function of what the ones before it made; [`Pending::finish`] lists
/// the rest (copy, validate, write).
struct Emission<'m> {
    m: &'m Module,
    runtime: Option<&'m [u8]>,
    opts: &'m EmitOptions,
    vt: Vec<Option<ValType>>,
    facts: CodeFacts,
}

/// Stage 1: memory layout and table slots, and a Pepper plugin's glue.
struct Memory {
    lay: Layout,
    table_base: u32,
    glue: Option<super::pepper::Glue>,
}

/// Stage 3: the output's index spaces (types of the linked modules, imports, functions,
/// globals) and how each linked module's indices map into them.
struct Spaces {
    sigs: SigTable,
    imports: Vec<(String, String, u32)>,
    func_index: Vec<u32>,
    /// (function id, body index) of each pexe function, in output order.
    pexe_order: Vec<(u32, usize)>,
    /// The generated `_start` of a threaded module (function index).
    threaded_start: Option<u32>,
    /// The next function index after the pexe's functions.
    next_func: u32,
    /// The next global index after the linked modules' globals.
    next_global: u32,
    remaps: Vec<Remap>,
}

/// Stage 4: what calls need: the fmod helpers, the pexe functions' and indirect calls'
/// types, the call adapters, setjmp/longjmp's tag.
struct Calls {
    fmodf: u32,
    fmod: u32,
    pexe_types: Vec<u32>,
    void_type: Option<u32>,
    adapters: Vec<super::adapt::Adapter>,
    adapter_base: u32,
    icall_adapters: FxHashMap<u32, u32>,
    sjlj: (u32, u32, u32),
}

impl<'m> Emission<'m> {
    fn new(m: &'m Module, runtime: Option<&'m [u8]>, opts: &'m EmitOptions) -> Self {
        let vt = lower::valtypes(m);
        let facts = CodeFacts::of_module(m, &vt);
        Emission {
            m,
            runtime,
            opts,
            vt,
            facts,
        }
    }

    /// The stages up to the lowered bodies.
    fn lower(mut self) -> Result<Pending, EmitError> {
        let memory = self.memory()?;
        let linked = self.linked(&memory)?;
        let mut spaces = self.index_spaces(&memory, &linked)?;
        let mut calls = self.calls(&memory, &linked, &mut spaces)?;
        let cx = self.lower_ctx(&memory, &mut spaces, &mut calls);
        self.lower_beside_the_rest(&memory, &linked, &mut spaces, &calls, &cx)
    }

    /// Stage 1: memory layout, table slots grouped by type, the Pepper glue's directory
    /// after the runtime's state page.
    fn memory(&self) -> Result<Memory, EmitError> {
        let (m, opts) = (self.m, self.opts);
        let mut lay = layout(m, opts.stack_size as u64, &self.facts.taken)?;
        group_slots_by_type(m, &self.vt, &mut lay);
        let table_base = 1 + lay.slot_funcs.len() as u32;
        let glue = opts.pepper.as_ref().map(|names| {
            let interfaces = super::pepper::known_ppb_interfaces(names);
            super::pepper::glue(&interfaces, table_base, lay.stack_top, opts.threads)
        });
        if let Some(g) = &glue {
            lay.pages = lay.pages.max(g.end.div_ceil(super::layout::PAGE));
        }
        Ok(Memory {
            lay,
            table_base,
            glue,
        })
    }

    /// Stage 2: the modules linked in: the runtime, the Pepper glue, the fmod helpers
    /// (when some `frem` needs them and the runtime lacks them).
    fn linked<'a>(&self, memory: &'a Memory) -> Result<Vec<Linked<'a>>, EmitError>
    where
        'm: 'a,
    {
        let mut linked: Vec<Linked<'_>> = Vec::new();
        if let Some(rt) = self.runtime {
            linked.push(link::parse("runtime", rt)?);
        }
        if let Some(g) = &memory.glue {
            linked.push(link::parse("Pepper glue", &g.module)?);
        }
        let has_fmod = |l: &Linked<'_>| {
            l.exports.contains_key("__pnacl_fmodf") && l.exports.contains_key("__pnacl_fmod")
        };
        if self.facts.frem && !linked.iter().any(has_fmod) {
            linked.push(link::parse("fmod helpers", super::fmod_module())?);
        }
        Ok(linked)
    }

    /// Stage 3: the index spaces.
    fn index_spaces(&self, memory: &Memory, linked: &[Linked<'_>]) -> Result<Spaces, EmitError> {
        let (m, opts) = (self.m, self.opts);
        // Types: linked modules' first, then the pexe's.
        let mut sigs = SigTable::default();
        let linked_types: Vec<Vec<u32>> = linked
            .iter()
            .map(|l| l.types.iter().map(|s| sigs.intern(s.clone())).collect())
            .collect();

        // Imports (deduplicated by module and name).
        let mut imports: Vec<(String, String, u32)> = Vec::new();
        let mut import_idx: HashMap<(String, String), u32> = HashMap::new();
        for (li, l) in linked.iter().enumerate() {
            for imp in &l.imports {
                if let Import::Func(module, name, ty) = imp {
                    let key = (module.clone(), name.clone());
                    if import_idx.contains_key(&key) {
                        continue;
                    }
                    let t = *linked_types[li].get(*ty as usize).ok_or_else(|| {
                        EmitError::link(l.name, LinkProblem::ImportTypeRange { ty: *ty })
                    })?;
                    import_idx.insert(key, imports.len() as u32);
                    imports.push((module.clone(), name.clone(), t));
                }
            }
        }
        let n_imports = imports.len() as u32;

        // Function index space.
        let mut next = n_imports;
        let mut linked_func_base = Vec::new();
        for l in linked {
            linked_func_base.push(next);
            next += l.funcs.len() as u32;
        }
        let mut func_index = vec![NO_FUNC; m.functions.len()];
        let mut pexe_order: Vec<(u32, usize)> = Vec::new(); // (function id, body index)
        for (fid, d) in m.functions.iter().enumerate() {
            if let (Some(b), None) = (d.body, d.intrinsic) {
                if (b as usize) < m.function_bodies.len() {
                    func_index[fid] = next;
                    next += 1;
                    pexe_order.push((fid as u32, b as usize));
                }
            }
        }
        // Threaded with a runtime: a generated `_start` (data init, then the runtime's)
        // follows the pexe's functions.
        let threaded_start = (opts.threads && self.runtime.is_some()).then_some(next);
        let pexe_start = m.function_by_name("_start").and_then(|i| {
            let fi = func_index[i.index()];
            (fi != NO_FUNC).then_some(fi)
        });

        // Remaps for linked modules.
        let mut global_consts = HashMap::new();
        global_consts.insert(HEAP_BASE, memory.lay.stack_top as u32 as i32);
        global_consts.insert(TABLE_BASE, memory.table_base as i32);
        let mut remaps = Vec::new();
        let mut gnext = 4u32;
        let mut enext = 1u32;
        let mut dnext = 0u32;
        for (li, l) in linked.iter().enumerate() {
            let mut funcs = Vec::new();
            let mut globals = Vec::new();
            let mut varying_func = u32::MAX;
            for imp in &l.imports {
                match imp {
                    Import::PexeStart => funcs.push({
                        varying_func = funcs.len() as u32;
                        pexe_start
                            .ok_or_else(|| EmitError::link(l.name, LinkProblem::NoPexeStart))?
                    }),
                    Import::Func(module, name, _) => {
                        funcs.push(import_idx[&(module.clone(), name.clone())]);
                    }
                    Import::EnvGlobal(g) => globals.push(*g),
                    Import::EnvMemory | Import::EnvTable => {}
                }
            }
            for j in 0..l.funcs.len() as u32 {
                funcs.push(linked_func_base[li] + j);
            }
            for _ in 0..l.num_globals {
                globals.push(gnext);
                gnext += 1;
            }
            remaps.push(Remap {
                name: l.name,
                types: linked_types[li].clone(),
                funcs,
                globals,
                global_consts: global_consts.clone(),
                elem_base: enext,
                data_base: dnext,
                varying_func,
                used_varying: false,
            });
            enext += l.num_elements;
            dnext += l.num_data;
        }
        Ok(Spaces {
            sigs,
            imports,
            func_index,
            pexe_order,
            threaded_start,
            next_func: next,
            next_global: gnext,
            remaps,
        })
    }

    /// Stage 4: the helpers the lowering calls, the pexe functions' types and the
    /// indirect calls' signatures (interned after the linked modules' types), the call
    /// adapters, and setjmp/longjmp's tag and counter.
    fn calls(
        &self,
        memory: &Memory,
        linked: &[Linked<'_>],
        spaces: &mut Spaces,
    ) -> Result<Calls, EmitError> {
        let (m, vt) = (self.m, &self.vt);
        let export_of = |name: &str| -> Option<u32> {
            linked.iter().zip(&spaces.remaps).find_map(|(l, r)| {
                l.exports
                    .get(name)
                    .and_then(|&i| r.funcs.get(i as usize).copied())
            })
        };
        let fmodf = export_of("__pnacl_fmodf").unwrap_or(NO_FUNC);
        let fmod = export_of("__pnacl_fmod").unwrap_or(NO_FUNC);

        let sigs = &mut spaces.sigs;
        let mut pexe_types = Vec::with_capacity(spaces.pexe_order.len());
        for &(fid, _) in &spaces.pexe_order {
            let d = &m.functions[fid as usize];
            let sig = lower::fn_sig(m, vt, d.ty).ok_or(EmitError::NoWasmType { function: fid })?;
            pexe_types.push(sigs.intern(sig));
        }
        let void_type = spaces.threaded_start.map(|_| {
            sigs.intern(Sig {
                params: vec![],
                results: vec![],
            })
        });
        let mut indirect_types = Vec::with_capacity(self.facts.indirect.len());
        for sig in &self.facts.indirect {
            indirect_types.push(sigs.intern(sig.clone()));
        }
        indirect_types.sort_unstable();
        indirect_types.dedup();
        // Adapters for indirect calls that may reach a function of another type
        // (`adapt.rs`): over the table's runs of functions of one type
        // (`group_slots_by_type` made them).
        let adapters = {
            let mut groups: Vec<(u32, u32, u32)> = Vec::new();
            for (i, &fid) in memory.lay.slot_funcs.iter().enumerate() {
                let d = &m.functions[fid as usize];
                let Some(t) = lower::fn_sig(m, vt, d.ty).map(|sig| sigs.intern(sig)) else {
                    continue;
                };
                let slot = i as u32 + 1;
                match groups.last_mut() {
                    Some((first, len, ty)) if *ty == t && *first + *len == slot => *len += 1,
                    _ => groups.push((slot, 1, t)),
                }
            }
            super::adapt::plan(sigs, &indirect_types, &groups)
        };
        let adapter_base = spaces.next_func + spaces.threaded_start.is_some() as u32;
        let icall_adapters: FxHashMap<u32, u32> = adapters
            .iter()
            .enumerate()
            .map(|(k, a)| (a.call_type, adapter_base + k as u32))
            .collect();

        // setjmp/longjmp: tag 0 and a counter global after the linked modules' globals.
        let sjlj = if self.facts.sjlj {
            let i32s = vec![ValType::I32, ValType::I32];
            let tag_type = sigs.intern(Sig {
                params: i32s.clone(),
                results: vec![],
            });
            let catch_type = sigs.intern(Sig {
                params: vec![],
                results: i32s,
            });
            debug_assert!(tag_type != catch_type);
            (0, spaces.next_global, catch_type)
        } else {
            (NO_FUNC, NO_FUNC, NO_FUNC)
        };
        Ok(Calls {
            fmodf,
            fmod,
            pexe_types,
            void_type,
            adapters,
            adapter_base,
            icall_adapters,
            sjlj,
        })
    }

    /// Stage 5: what the lowering of every body shares (the signatures, function indices
    /// and adapters move into it).
    fn lower_ctx(
        &mut self,
        memory: &Memory,
        spaces: &mut Spaces,
        calls: &mut Calls,
    ) -> LowerCtx<'m> {
        let m = self.m;
        let (sjlj_tag, sjlj_counter, sjlj_catch_type) = calls.sjlj;
        LowerCtx {
            module: m,
            slots: lower::slots(&self.vt),
            valtypes: std::mem::take(&mut self.vt),
            scalars: lower::scalars(m),
            narrow: lower::narrow(m),
            i32_type: m.types.find(&crate::ir::Type::Int(32)),
            func_index: std::mem::take(&mut spaces.func_index),
            table_slot: memory.lay.table_slot.clone(),
            global_addr: memory.lay.global_addr.clone(),
            sigs: std::mem::take(&mut spaces.sigs),
            stack_pointer: SP,
            thread_pointer: TP,
            libm: lower::libm(m),
            fmodf: calls.fmodf,
            fmod: calls.fmod,
            threads: self.opts.threads,
            liveness_locals: self.opts.liveness_locals,
            sjlj_tag,
            sjlj_counter,
            sjlj_catch_type,
            icall_adapters: std::mem::take(&mut calls.icall_adapters),
        }
    }

    /// Stage 6: the bodies lowered in parallel while the rest of the module is written
    /// beside them ([`side`]: the data segments, the module up to its code section with
    /// the linked bodies, the data and name sections, and the validator's view of the
    /// sections before the code). All of it is ready when the last body is lowered, so
    /// the serial work left after the lowering is copying the bodies into place.
    fn lower_beside_the_rest(
        &self,
        memory: &Memory,
        linked: &[Linked<'_>],
        spaces: &mut Spaces,
        calls: &Calls,
        cx: &LowerCtx<'_>,
    ) -> Result<Pending, EmitError> {
        let (m, opts) = (self.m, self.opts);
        let lay = &memory.lay;
        let prefix_used = Used {
            bulk_memory: true,
            // A v128 in any signature (even of a function no body calls) needs SIMD.
            simd: cx.sigs.list.iter().any(|s| {
                s.params
                    .iter()
                    .chain(&s.results)
                    .any(|&t| t == ValType::V128)
            }),
            // The tag section alone needs the feature, even if no setjmp was reachable.
            exceptions: self.facts.sjlj,
            ..Used::default()
        };
        let pexe_order = &spaces.pexe_order;
        let remaps = &mut spaces.remaps;
        let (side, lowered) = rayon::join(
            // The outer error is the layout's (it comes before any lowering error, as it
            // would if the segments were built first); the inner one comes after them.
            || -> Result<Result<Side, EmitError>, EmitError> {
                let mut segments = super::layout::data_segments(m, lay)?;
                if let Some(g) = &memory.glue {
                    segments.push(g.directory.clone());
                }
                let parts = Parts {
                    m,
                    lay,
                    opts,
                    linked,
                    cx,
                    imports: &spaces.imports,
                    pexe_order,
                    pexe_types: &calls.pexe_types,
                    table_base: memory.table_base,
                    threaded_start: spaces.threaded_start.zip(calls.void_type),
                    adapters: &calls.adapters,
                    adapter_base: calls.adapter_base,
                };
                Ok(side(&parts, segments, remaps, &prefix_used))
            },
            || -> Vec<Result<lower::Lowered, lower::LowerError>> {
                // Results come back in order. Jobs of 4 to 16 bodies, each with the
                // buffers an earlier job grew (`crate::scratch_pool`).
                let scratch = crate::scratch_pool::Pool::<lower::Scratch>::new();
                pexe_order
                    .par_iter()
                    .with_min_len(4)
                    .with_max_len(16)
                    .map_init(
                        || scratch.lend(),
                        |s, &(_, b)| lower::lower_function_with(cx, b, s),
                    )
                    .collect()
            },
        );
        let side = side?;
        let mut used = prefix_used;
        let mut bodies: Vec<Vec<u8>> = Vec::with_capacity(lowered.len());
        let mut irreducible = 0;
        for r in lowered {
            let l = r?;
            used.merge(l.used);
            irreducible += l.irreducible as usize;
            bodies.push(l.body);
        }
        let side = side?;
        Ok(Pending {
            side,
            bodies,
            used,
            irreducible,
            threads: opts.threads,
            memory_pages: lay.pages,
            stack_top: lay.stack_top,
            imports: std::mem::take(&mut spaces.imports)
                .into_iter()
                .map(|(a, b, _)| (a, b))
                .collect(),
        })
    }
}

/// Orders the table slots of the address-taken functions by wasm type (types in order of
/// their first function, functions in id order within a type), so that the functions of
/// one type are one run of slots: an indirect call's adapter (`adapt.rs`) then tells a
/// type by one range check.
fn group_slots_by_type(m: &Module, vt: &[Option<ValType>], lay: &mut Layout) {
    let mut group_of: FxHashMap<Option<Sig>, usize> = FxHashMap::default();
    let mut keyed: Vec<(usize, u32)> = lay
        .slot_funcs
        .iter()
        .map(|&fid| {
            let sig = m
                .functions
                .get(fid as usize)
                .and_then(|d| lower::fn_sig(m, vt, d.ty));
            let n = group_of.len();
            (*group_of.entry(sig).or_insert(n), fid)
        })
        .collect();
    keyed.sort_by_key(|&(g, fid)| (g, fid));
    for (i, &(_, fid)) in keyed.iter().enumerate() {
        lay.slot_funcs[i] = fid;
        lay.table_slot[fid as usize] = i as u32 + 1;
    }
}

/// A module whose pexe bodies are lowered: what [`lower_module`] leaves for
/// [`Pending::finish`]. It holds no reference to the IR, so the IR can be freed while the
/// module is finished.
pub struct Pending {
    side: Side,
    bodies: Vec<Vec<u8>>,
    used: Used,
    irreducible: usize,
    threads: bool,
    memory_pages: u64,
    stack_top: u64,
    imports: Vec<(String, String)>,
}

/// The parts of the module written alongside the lowering (see [`side`]).
struct Side {
    /// The header and every section before the code section.
    head: ModuleBytes,
    table_size: u32,
    /// Bodies of the code section before the pexe's (the linked modules') and after them
    /// (the threaded start function).
    before: CodeSection,
    after: CodeSection,
    /// The linked modules' data segments, then the pexe's (active unless threaded).
    linked_data: DataSection,
    segments: Vec<(u32, Vec<u8>)>,
    active_data: bool,
    /// The name section, encoded (id and size included).
    names: Vec<u8>,
    /// The validator after the sections before the code, and one check per pexe body
    /// (`None` when validation is off).
    checker: Option<(Checker, Vec<BodyCheck>)>,
}

/// What the module's sections outside the code are written from ([`side`]).
#[derive(Clone, Copy)]
struct Parts<'p> {
    m: &'p Module,
    lay: &'p Layout,
    opts: &'p EmitOptions,
    linked: &'p [Linked<'p>],
    cx: &'p LowerCtx<'p>,
    imports: &'p [(String, String, u32)],
    /// (function id, body index) of each pexe function, in output order.
    pexe_order: &'p [(u32, usize)],
    /// Their type indices.
    pexe_types: &'p [u32],
    table_base: u32,
    /// The generated `_start` of a threaded module and its type index.
    threaded_start: Option<(u32, u32)>,
    /// Adapters of indirect calls (`adapt.rs`), from function `adapter_base`.
    adapters: &'p [super::adapt::Adapter],
    adapter_base: u32,
}

/// Writes everything of the module but the pexe's bodies (see [`Side`]).
fn side(
    parts: &Parts<'_>,
    segments: Vec<(u32, Vec<u8>)>,
    remaps: &mut [Remap],
    prefix_used: &Used,
) -> Result<Side, EmitError> {
    let Parts {
        opts,
        linked,
        pexe_order,
        threaded_start,
        ..
    } = *parts;
    let mut head = ModuleBytes::with_capacity(64 << 10);
    let pre = prefix(&mut head, parts, &segments, remaps)?;
    let mut linked_data = DataSection::new();
    for (l, r) in linked.iter().zip(remaps.iter_mut()) {
        if let Some(d) = &l.data {
            for datum in d.clone() {
                let datum = datum.map_err(|e| EmitError::link(l.name, e))?;
                r.parse_data(&mut linked_data, datum)
                    .map_err(|e| EmitError::link(l.name, e))?;
            }
        }
    }
    let names = name_section(parts, remaps);
    let checker = if opts.validate {
        Some(Checker::new(
            &head.0,
            wasm_features(prefix_used, opts.threads),
            pre.before.len() as usize,
            pexe_order.len(),
            pre.after.len() as usize,
        )?)
    } else {
        None
    };
    Ok(Side {
        head,
        table_size: pre.table_size,
        before: pre.before,
        after: pre.after,
        linked_data,
        segments,
        active_data: threaded_start.is_none(),
        names,
        checker,
    })
}

impl Pending {
    /// Completes the module: the code section (the linked bodies around the pexe's), the
    /// data and name sections; with validation on, the pexe's bodies are validated (in
    /// parallel) while they are copied into place, and the rest of the module after.
    /// Stages 7 to 9 of emission (1 to 6: `Emission::lower`).
    pub fn finish(self) -> Result<Emitted, EmitError> {
        let Pending {
            side,
            bodies,
            used,
            irreducible,
            threads,
            memory_pages,
            stack_top,
            imports,
        } = self;
        let Side {
            mut head,
            table_size,
            before,
            after,
            linked_data,
            segments,
            active_data,
            names,
            checker,
        } = side;
        // Stage 7: one buffer of the module's full size, the code section opened.
        // The code and data sections are nearly all of the module: the buffer is grown
        // once to its full size, and their bytes are copied once, straight from the
        // function bodies and the layout's segments (through `wasm_encoder`'s
        // `CodeSection` and `DataSection` they would be copied into the section, then into
        // the module, and again each time the module's buffer doubled).
        let body_bytes: usize = bodies.iter().map(|b| b.len() + 5).sum();
        let seg_bytes: usize = segments.iter().map(|(_, b)| b.len() + 16).sum();
        head.0.reserve(
            body_bytes
                + seg_bytes
                + before.byte_len()
                + after.byte_len()
                + names.len()
                // The linked modules' data (a few KB).
                + (64 << 10),
        );
        let code = head.code_section_start(&before, &bodies, &after)?;
        let offsets = body_offsets(head.0.len(), &bodies);
        let features = wasm_features(&used, threads);
        let (checker, checks, linked, walk) = match checker {
            Some((mut c, checks)) => {
                // The linked bodies before the pexe's are validated alongside them, from
                // where they are already written; the code section's entries are walked
                // by the side that writes them.
                let linked = c.take_before();
                let walk = c.take_code_walk();
                (Some(c), checks, linked, Some(walk))
            }
            None => (None, Vec::new(), Vec::new(), None),
        };
        let lens: Vec<usize> = bodies.iter().map(Vec::len).collect();
        // The code section's entries start with the linked ones before the pexe's (a few
        // KB, copied: the writer goes on appending to `head`).
        let entries_at = code.items_start;
        let linked_code = head.0[entries_at..code.start].to_vec();
        // Stage 8: the bodies validated in parallel while the code, data and name
        // sections are written.
        let (first_error, written) = rayon::join(
            || {
                let a = super::validate::check_linked(&linked_code, entries_at, linked, features);
                let b = super::validate::check_bodies(checks, &bodies, &offsets, features);
                // The error at the lowest offset: the linked bodies come first.
                a.or(b)
            },
            || -> Result<Written, EmitError> {
                let mut out = head;
                let code_bytes = out.code_section_end(code, &bodies)?;
                // Its result counts after the bodies' validation (as when the finished
                // module's code section was walked).
                let walked = walk.map(|w| {
                    let code = &out.0[entries_at..];
                    w.walk(code, entries_at, &lens, features)
                });
                out.data_section(&linked_data, &segments, active_data)?;
                out.0.extend_from_slice(&names);
                Ok((out, code_bytes, walked))
            },
        );
        let (out, code_bytes, walked) = written?;
        let wasm = out.0;
        if let Some(e) = first_error {
            return Err(super::validate::invalid_at(&wasm, e));
        }
        // Stage 9: the rest of the module validated (`Checker::finish`).
        let walked = walked.transpose()?;
        let n_bodies = bodies.len();
        // The bodies' buffers (thousands, freed at ≈ 0.1 µs each) are freed on both
        // threads while the rest is checked.
        let (checked, ()) = rayon::join(
            || checker.map_or(Ok(()), |c| c.finish(&wasm, &lens, features, walked)),
            move || bodies.into_par_iter().with_min_len(256).for_each(drop),
        );
        checked?;
        let stats = EmitStats {
            functions: n_bodies,
            irreducible_functions: irreducible,
            code_bytes,
            data_bytes: segments.iter().map(|(_, b)| b.len()).sum(),
            data_segments: segments.len(),
            table_size,
            memory_pages,
            stack_top,
        };
        Ok(Emitted {
            wasm,
            used,
            imports,
            stats,
        })
    }
}

/// The finished module's bytes, the length of its code section's bodies, and the walk of
/// that section's entries (when validating).
type Written = (ModuleBytes, usize, Option<Result<Walked, EmitError>>);

/// What [`prefix`] leaves for the rest of the module.
struct Prefix {
    table_size: u32,
    before: CodeSection,
    after: CodeSection,
}

/// Writes the module's header and sections up to the data count section (everything
/// before the code) into `out`, and prepares the linked bodies of the code section. The
/// sections in their order, each written by a function of its own.
fn prefix(
    out: &mut ModuleBytes,
    parts: &Parts<'_>,
    segments: &[(u32, Vec<u8>)],
    remaps: &mut [Remap],
) -> Result<Prefix, EmitError> {
    let memory_type = MemoryType {
        minimum: parts.lay.pages,
        maximum: Some(65536),
        memory64: false,
        shared: parts.opts.threads,
        page_size_log2: None,
    };
    out.section(&type_section(parts));
    out.section(&import_section(parts, memory_type));
    out.section(&function_section(parts, remaps)?);
    let table_size = table_size(parts, remaps)?;
    let mut tsec = TableSection::new();
    tsec.table(TableType {
        element_type: RefType::FUNCREF,
        table64: false,
        minimum: table_size as u64,
        maximum: None,
        shared: false,
    });
    out.section(&tsec);
    // A threaded module imports its memory (every thread's instance shares it).
    if parts.threaded_start.is_none() {
        let mut msec = MemorySection::new();
        msec.memory(memory_type);
        out.section(&msec);
    }
    if let Some(tags) = tag_section(parts)? {
        out.section(&tags);
    }
    out.section(&global_section(parts, remaps)?);
    let (exports, runtime_start) = export_section(parts, remaps);
    out.section(&exports);
    out.section(&element_section(parts, remaps)?);
    let n_linked_data: u32 = parts.linked.iter().map(|l| l.num_data).sum();
    let n_data = n_linked_data + segments.len() as u32;
    out.section(&DataCountSection { count: n_data });
    let (before, after) =
        code_around_the_pexe(parts, segments, remaps, n_linked_data, runtime_start)?;
    Ok(Prefix {
        table_size,
        before,
        after,
    })
}

/// Every signature the module uses, in `cx.sigs`' order.
fn type_section(parts: &Parts<'_>) -> TypeSection {
    let mut types = TypeSection::new();
    for s in &parts.cx.sigs.list {
        types
            .ty()
            .function(s.params.iter().copied(), s.results.iter().copied());
    }
    types
}

/// The runtime's and the pexe's imported functions, and a threaded module's memory.
fn import_section(parts: &Parts<'_>, memory_type: MemoryType) -> ImportSection {
    let mut isec = ImportSection::new();
    for (module, name, t) in parts.imports {
        isec.import(module, name, EntityType::Function(*t));
    }
    if parts.threaded_start.is_some() {
        isec.import(
            crate::runtime::ENV,
            crate::runtime::ENV_MEMORY,
            EntityType::Memory(memory_type),
        );
    }
    isec
}

/// The defined functions' types: the linked modules' (remapped), the pexe's, the
/// threaded start, the adapters.
fn function_section(parts: &Parts<'_>, remaps: &[Remap]) -> Result<FunctionSection, EmitError> {
    let mut fsec = FunctionSection::new();
    for (l, r) in parts.linked.iter().zip(remaps.iter()) {
        for &t in &l.funcs {
            let t =
                r.types.get(t as usize).copied().ok_or_else(|| {
                    EmitError::link(l.name, LinkProblem::FunctionTypeRange { ty: t })
                })?;
            fsec.function(t);
        }
    }
    for &t in parts.pexe_types {
        fsec.function(t);
    }
    if let Some((_, void_type)) = parts.threaded_start {
        fsec.function(void_type);
    }
    for a in parts.adapters {
        fsec.function(a.helper_type);
    }
    Ok(fsec)
}

/// The table's size: the pexe's slots, then every linked active segment.
fn table_size(parts: &Parts<'_>, remaps: &[Remap]) -> Result<u32, EmitError> {
    let mut table_size = parts.table_base;
    for (l, r) in parts.linked.iter().zip(remaps.iter()) {
        let Some(elems) = &l.elements else { continue };
        for e in elems.clone() {
            let e = e.map_err(|e| EmitError::link(l.name, e))?;
            let count = match &e.items {
                wasmparser::ElementItems::Functions(f) => f.count(),
                wasmparser::ElementItems::Expressions(_, x) => x.count(),
            };
            if let wasmparser::ElementKind::Active { offset_expr, .. } = &e.kind {
                let off = r
                    .eval(offset_expr)
                    .ok_or_else(|| EmitError::link(l.name, LinkProblem::ElementOffset))?;
                table_size = table_size.max((off as u32).saturating_add(count));
            }
        }
    }
    Ok(table_size)
}

/// The longjmp exception tag, when the pexe uses setjmp/longjmp.
fn tag_section(parts: &Parts<'_>) -> Result<Option<TagSection>, EmitError> {
    let cx = parts.cx;
    if cx.sjlj_tag == NO_FUNC {
        return Ok(None);
    }
    let tag_type = cx
        .sigs
        .get(&Sig {
            params: vec![ValType::I32, ValType::I32],
            results: vec![],
        })
        .ok_or(InternalError::LongjmpTagType)?;
    let mut tags = TagSection::new();
    tags.tag(TagType {
        kind: TagKind::Exception,
        func_type_idx: tag_type,
    });
    Ok(Some(tags))
}

/// The stack pointer, TLS base, stack top and table base, the linked modules' globals,
/// and the setjmp counter (whose index the lowering chose before).
fn global_section(parts: &Parts<'_>, remaps: &mut [Remap]) -> Result<GlobalSection, EmitError> {
    let Parts {
        lay,
        linked,
        cx,
        table_base,
        ..
    } = *parts;
    let mut gsec = GlobalSection::new();
    let mutable = |m: bool| GlobalType {
        val_type: ValType::I32,
        mutable: m,
        shared: false,
    };
    gsec.global(
        mutable(true),
        &ConstExpr::i32_const(lay.stack_top as u32 as i32),
    );
    gsec.global(mutable(true), &ConstExpr::i32_const(0));
    gsec.global(
        mutable(false),
        &ConstExpr::i32_const(lay.stack_top as u32 as i32),
    );
    gsec.global(mutable(false), &ConstExpr::i32_const(table_base as i32));
    for (l, r) in linked.iter().zip(remaps.iter_mut()) {
        if let Some(g) = &l.globals {
            for glob in g.clone() {
                let glob = glob.map_err(|e| EmitError::link(l.name, e))?;
                r.parse_global(&mut gsec, glob)
                    .map_err(|e| EmitError::link(l.name, e))?;
            }
        }
    }
    if cx.sjlj_counter != NO_FUNC {
        if gsec.len() != cx.sjlj_counter {
            return Err(InternalError::SetjmpCounterIndex {
                expected: cx.sjlj_counter,
                actual: gsec.len(),
            }
            .into());
        }
        gsec.global(mutable(true), &ConstExpr::i32_const(0));
    }
    Ok(gsec)
}

/// Memory, table, `_start` (the threaded one if any), the Pepper entry points, the
/// stdout flush, the thread entry, and with `export_all_functions` every pexe function;
/// with the runtime's own `_start`, which the threaded one calls.
fn export_section(parts: &Parts<'_>, remaps: &[Remap]) -> (ExportSection, Option<u32>) {
    let Parts {
        m,
        opts,
        linked,
        cx,
        pexe_order,
        threaded_start,
        ..
    } = *parts;
    let mut esec = ExportSection::new();
    esec.export("memory", ExportKind::Memory, 0);
    esec.export("__indirect_function_table", ExportKind::Table, 0);
    let mut exported: std::collections::HashSet<String> = ["memory", "__indirect_function_table"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut runtime_start = None;
    for (l, r) in linked.iter().zip(remaps.iter()) {
        if let Some(&i) = l.exports.get("_start") {
            if exported.insert("_start".into()) {
                runtime_start = Some(r.funcs[i as usize]);
                let f = threaded_start.map_or(r.funcs[i as usize], |(f, _)| f);
                esec.export("_start", ExportKind::Func, f);
            }
        }
        for &name in crate::runtime::PEPPER_EXPORTS {
            if let Some(&i) = l.exports.get(name) {
                if exported.insert(name.into()) {
                    esec.export(name, ExportKind::Func, r.funcs[i as usize]);
                }
            }
        }
        let flush = crate::runtime::EXPORT_FLUSH_STDOUT;
        if let Some(&i) = l.exports.get(flush) {
            if exported.insert(flush.into()) {
                esec.export(flush, ExportKind::Func, r.funcs[i as usize]);
            }
        }
        let thread_start = crate::runtime::EXPORT_THREAD_START;
        if let (Some(_), Some(&i)) = (threaded_start, l.exports.get(thread_start)) {
            if exported.insert(thread_start.into()) {
                esec.export(thread_start, ExportKind::Func, r.funcs[i as usize]);
            }
        }
    }
    if opts.export_all_functions {
        for &(fid, _) in pexe_order {
            let name = pexe_name(m, fid);
            if exported.insert(name.clone()) {
                esec.export(&name, ExportKind::Func, cx.func_index[fid as usize]);
            }
        }
    }
    (esec, runtime_start)
}

/// The pexe's function-pointer slots from table index 1, then the linked modules'
/// segments.
fn element_section(parts: &Parts<'_>, remaps: &mut [Remap]) -> Result<ElementSection, EmitError> {
    let Parts {
        lay, linked, cx, ..
    } = *parts;
    let mut elsec = ElementSection::new();
    let slot_funcs: Vec<u32> = lay
        .slot_funcs
        .iter()
        .map(|&f| cx.func_index.get(f as usize).copied().unwrap_or(NO_FUNC))
        .collect();
    if let Some(i) = slot_funcs.iter().position(|&f| f == NO_FUNC) {
        return Err(EmitError::AddressOfBodiless {
            function: lay.slot_funcs[i],
        });
    }
    elsec.active(
        Some(0),
        &ConstExpr::i32_const(1),
        Elements::Functions(slot_funcs.into()),
    );
    for (l, r) in linked.iter().zip(remaps.iter_mut()) {
        if let Some(e) = &l.elements {
            for el in e.clone() {
                let el = el.map_err(|e| EmitError::link(l.name, e))?;
                r.parse_element(&mut elsec, el)
                    .map_err(|e| EmitError::link(l.name, e))?;
            }
        }
    }
    Ok(elsec)
}

/// The code section's bodies before the pexe's (the linked modules', re-encoded) and
/// after them (the threaded start, the adapters).
fn code_around_the_pexe(
    parts: &Parts<'_>,
    segments: &[(u32, Vec<u8>)],
    remaps: &mut [Remap],
    n_linked_data: u32,
    runtime_start: Option<u32>,
) -> Result<(CodeSection, CodeSection), EmitError> {
    let mut before = CodeSection::new();
    for (l, r) in parts.linked.iter().zip(remaps.iter_mut()) {
        link::reencode_bodies(l, r, &mut before).map_err(|e| EmitError::link(l.name, e))?;
    }
    let mut after = CodeSection::new();
    if parts.threaded_start.is_some() {
        // Every thread instantiates the module over the same memory, so the pexe's data
        // is passive and copied once, by the main thread's `_start`, before the runtime's.
        let mut f = wasm_encoder::Function::new([]);
        for (i, (addr, bytes)) in segments.iter().enumerate() {
            let seg = n_linked_data + i as u32;
            f.instructions()
                .i32_const(*addr as i32)
                .i32_const(0)
                .i32_const(bytes.len() as i32)
                .memory_init(0, seg)
                .data_drop(seg);
        }
        let start =
            runtime_start.ok_or_else(|| EmitError::link("runtime", LinkProblem::NoRuntimeStart))?;
        f.instructions().call(start).end();
        after.function(&f);
    }
    for a in parts.adapters {
        after.function(&super::adapt::body(a, &parts.cx.sigs));
    }
    Ok((before, after))
}

/// The name section, encoded: imports, linked functions (their own names), pexe
/// functions.
fn name_section(parts: &Parts<'_>, remaps: &[Remap]) -> Vec<u8> {
    let Parts {
        m,
        linked,
        cx,
        imports,
        pexe_order,
        threaded_start,
        ..
    } = *parts;
    // Names: imports, linked functions (their own names), pexe functions (borrowed: one
    // allocation per function name is not needed).
    // A pexe function without a symbol name is named `f<id>` (as `pexe_name` says), written
    // when the map is built instead of allocated per function: stripped pexes have
    // thousands.
    enum Name<'a> {
        Text(Cow<'a, str>),
        Unnamed(u32),
    }
    let mut names: Vec<(u32, Name<'_>)> = Vec::new();
    for (i, (module, name, _)) in imports.iter().enumerate() {
        names.push((i as u32, Name::Text(format!("{module}.{name}").into())));
    }
    for (l, r) in linked.iter().zip(remaps.iter()) {
        let n_imp = l.num_func_imports();
        for (i, n) in &l.func_names {
            if *i >= n_imp {
                if let Some(&fi) = r.funcs.get(*i as usize) {
                    names.push((fi, Name::Text(n.as_str().into())));
                }
            }
        }
    }
    for &(fid, _) in pexe_order {
        let name = match m
            .functions
            .get(fid as usize)
            .and_then(|d| d.name.as_deref())
        {
            Some(n) => Name::Text(Cow::Borrowed(n)),
            None => Name::Unnamed(fid),
        };
        names.push((cx.func_index[fid as usize], name));
    }
    if let Some((f, _)) = threaded_start {
        names.push((f, Name::Text("__pnacl_init_data_and_start".into())));
    }
    for k in 0..parts.adapters.len() as u32 {
        names.push((
            parts.adapter_base + k,
            Name::Text(format!("__pexe2wasm_call_adapted_{k}").into()),
        ));
    }
    names.sort_by_key(|(i, _)| *i);
    names.dedup_by_key(|(i, _)| *i);
    let mut map = NameMap::new();
    let mut buf = String::new();
    for (i, n) in &names {
        match n {
            Name::Text(t) => map.append(*i, t),
            Name::Unnamed(fid) => {
                use std::fmt::Write;
                buf.clear();
                let _ = write!(buf, "f{fid}");
                map.append(*i, &buf);
            }
        }
    }
    let mut nsec = NameSection::new();
    nsec.functions(&map);
    let mut out = vec![wasm_encoder::Section::id(&nsec)];
    wasm_encoder::Encode::encode(&nsec, &mut out);
    out
}

/// Where each of `bodies` will be (its bytes, after its size), written one after the
/// other from `at` by [`ModuleBytes::code_section_end`].
fn body_offsets(mut at: usize, bodies: &[Vec<u8>]) -> Vec<usize> {
    bodies
        .iter()
        .map(|b| {
            let o = at + leb_len(b.len() as u64);
            at = o + b.len();
            o
        })
        .collect()
}

/// A module's bytes, section by section, into a buffer the caller sizes (see
/// `assemble`). Small sections go through `wasm_encoder`; the code and data sections
/// are written here so that their bulk is copied only once. The bytes are exactly what
/// `wasm_encoder::Module` with `CodeSection::raw` and `DataSection::active`/`passive`
/// produce (the byte-identical output checks compare them).
struct ModuleBytes(Vec<u8>);

/// A section being written (see [`ModuleBytes::section_begin`]).
struct OpenSection {
    id: wasm_encoder::SectionId,
    /// Where `pre`'s items begin.
    items_start: usize,
    /// Where the items after `pre`'s begin, and their announced length.
    start: usize,
    len: usize,
    /// Byte length of all the items (without the count).
    items: usize,
    /// Bytes written at the end (the code section's bodies after the pexe's).
    tail: Vec<u8>,
}

impl ModuleBytes {
    fn with_capacity(n: usize) -> Self {
        let mut v = Vec::with_capacity(n);
        v.extend_from_slice(&wasm_encoder::Module::HEADER);
        ModuleBytes(v)
    }

    fn section(&mut self, s: &impl wasm_encoder::Section) {
        self.0.push(s.id());
        s.encode(&mut self.0);
    }

    /// A section whose items are `pre`'s (already encoded by `wasm_encoder`), then
    /// `count` more whose encoding of `len` bytes `write` appends. Returns the byte length
    /// of the items (without the count).
    fn section_with(
        &mut self,
        id: wasm_encoder::SectionId,
        pre: &impl wasm_encoder::Encode,
        count: usize,
        len: usize,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> Result<usize, EmitError> {
        let open = self.section_begin(id, pre, count, len)?;
        write(&mut self.0);
        self.section_end(open)
    }

    /// Writes a section's header and `pre`'s items (see [`ModuleBytes::section_with`]);
    /// the caller appends `len` more bytes of items, then calls `section_end`.
    fn section_begin(
        &mut self,
        id: wasm_encoder::SectionId,
        pre: &impl wasm_encoder::Encode,
        count: usize,
        len: usize,
    ) -> Result<OpenSection, EmitError> {
        // `pre` encodes as: section size, item count, items; keep the items.
        let mut head = Vec::new();
        pre.encode(&mut head);
        let (pre_count, at) = section_items(&head)?;
        let pre_items = &head[at..];
        let count = pre_count as usize + count;
        let items = pre_items.len() + len;
        let size = leb_len(count as u64) + items;
        let out = &mut self.0;
        out.push(id as u8);
        (size as u32).encode(out);
        (count as u32).encode(out);
        out.extend_from_slice(pre_items);
        Ok(OpenSection {
            id,
            items_start: out.len() - pre_items.len(),
            start: out.len(),
            len,
            items,
            tail: Vec::new(),
        })
    }

    /// Checks that the section `open` began got the length it announced.
    fn section_end(&mut self, open: OpenSection) -> Result<usize, EmitError> {
        let OpenSection {
            id,
            start,
            len,
            items,
            ..
        } = open;
        if self.0.len() - start != len {
            return Err(InternalError::SectionLength {
                section: id,
                wrote: self.0.len() - start,
                computed: len,
            }
            .into());
        }
        Ok(items)
    }

    /// Begins the code section: `before`'s bodies, then room for `bodies` (each a
    /// complete body: locals and instructions) and `after`'s, which
    /// [`ModuleBytes::code_section_end`] writes. The pexe's bodies start right after
    /// what this writes.
    fn code_section_start(
        &mut self,
        before: &CodeSection,
        bodies: &[Vec<u8>],
        after: &CodeSection,
    ) -> Result<OpenSection, EmitError> {
        // `after` (at most the threaded start function) is small: appended as encoded.
        let mut tail = Vec::new();
        wasm_encoder::Encode::encode(after, &mut tail);
        let (n_after, at) = section_items(&tail)?;
        tail.drain(..at);
        let len = bodies
            .iter()
            .map(|b| leb_len(b.len() as u64) + b.len())
            .sum::<usize>()
            + tail.len();
        let mut open = self.section_begin(
            wasm_encoder::SectionId::Code,
            before,
            bodies.len() + n_after as usize,
            len,
        )?;
        open.tail = tail;
        Ok(open)
    }

    /// Ends the code section [`ModuleBytes::code_section_start`] began. Returns the byte
    /// length of its bodies.
    fn code_section_end(
        &mut self,
        open: OpenSection,
        bodies: &[Vec<u8>],
    ) -> Result<usize, EmitError> {
        let out = &mut self.0;
        for b in bodies {
            (b.len() as u32).encode(out);
            out.extend_from_slice(b);
        }
        out.extend_from_slice(&open.tail);
        self.section_end(open)
    }

    /// The data section: `linked`'s segments, then the pexe's, active at their address
    /// in memory 0 or (`active` false) passive.
    fn data_section(
        &mut self,
        linked: &DataSection,
        segments: &[(u32, Vec<u8>)],
        active: bool,
    ) -> Result<(), EmitError> {
        let header = |addr: u32, len: usize, out: &mut Vec<u8>| {
            if active {
                // Flags 0 (active, memory 0), offset `i32.const addr; end`.
                out.push(0x00);
                out.push(0x41);
                (addr as i32).encode(out);
                out.push(0x0B);
            } else {
                out.push(0x01);
            }
            (len as u32).encode(out);
        };
        let mut scratch = Vec::with_capacity(16);
        let len = segments
            .iter()
            .map(|(addr, b)| {
                scratch.clear();
                header(*addr, b.len(), &mut scratch);
                scratch.len() + b.len()
            })
            .sum();
        self.section_with(
            wasm_encoder::SectionId::Data,
            linked,
            segments.len(),
            len,
            |out| {
                for (addr, b) in segments {
                    header(*addr, b.len(), out);
                    out.extend_from_slice(b);
                }
            },
        )?;
        Ok(())
    }
}

/// The items of a section `wasm_encoder` encoded (`bytes`: its size, item count, items):
/// the count and where the items begin.
fn section_items(bytes: &[u8]) -> Result<(u32, usize), EmitError> {
    let mut r = wasmparser::BinaryReader::new(bytes, 0);
    let count = r
        .read_var_u32()
        .and_then(|_size| r.read_var_u32())
        .map_err(|e| {
            EmitError::from(InternalError::EncodedSection {
                message: e.to_string(),
            })
        })?;
    Ok((count, r.current_position()))
}

/// A pexe function's name: from the symbol table, else `f<N>`.
pub fn pexe_name(m: &Module, fid: u32) -> String {
    match m
        .functions
        .get(fid as usize)
        .and_then(|d| d.name.as_deref())
    {
        Some(n) => n.to_string(),
        None => format!("f{fid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ModuleBytes` writes the code and data sections exactly as `wasm_encoder` would
    /// (`CodeSection::raw`, `DataSection::active`/`passive`), LEB128 edges included.
    #[test]
    fn direct_sections_match_wasm_encoder() {
        let mut rng = crate::test_rng(7);
        // Bodies of lengths around the 1- and 2-byte LEB128 edges.
        let bodies: Vec<Vec<u8>> = [0usize, 1, 127, 128, 16383, 16384, 40]
            .iter()
            .map(|&n| (0..n).map(|_| rng() as u8).collect())
            .collect();
        // Addresses whose i32 is negative, zero, and at signed LEB128 edges.
        let segments: Vec<(u32, Vec<u8>)> = [0u32, 63, 64, 8191, 8192, 0x8000_0000, u32::MAX]
            .iter()
            .zip(&bodies)
            .map(|(&a, b)| (a, b.clone()))
            .collect();
        for linked_items in [0usize, 2] {
            let mut before = CodeSection::new();
            let mut linked_data = DataSection::new();
            for i in 0..linked_items {
                before.raw(&[0, 0x41, i as u8, 0x0B]);
                linked_data.active(0, &ConstExpr::i32_const(i as i32), [1, 2, 3]);
            }
            let mut after = CodeSection::new();
            after.raw(&[0, 0x0B]);
            for active in [true, false] {
                let mut want = wasm_encoder::Module::new();
                let mut code = before.clone();
                for b in &bodies {
                    code.raw(b);
                }
                code.raw(&[0, 0x0B]);
                want.section(&code);
                let mut data = linked_data.clone();
                for (a, b) in &segments {
                    if active {
                        data.active(0, &ConstExpr::i32_const(*a as i32), b.iter().copied());
                    } else {
                        data.passive(b.iter().copied());
                    }
                }
                want.section(&data);

                let mut got = ModuleBytes::with_capacity(0);
                let open = got.code_section_start(&before, &bodies, &after).unwrap();
                let offsets = body_offsets(got.0.len(), &bodies);
                let n = got.code_section_end(open, &bodies).unwrap();
                assert_eq!(n, code.byte_len());
                // The offsets the bodies are validated at are where they were written.
                let bytes = want.clone().finish();
                // The code section is the first: its id after the header, then its size.
                let at = wasm_encoder::Module::HEADER.len() + 1;
                let mut r = wasmparser::BinaryReader::new(&bytes[at..], 0);
                let size = r.read_var_u32().unwrap();
                let l = r.current_position();
                let content = &bytes[at + l..at + l + size as usize];
                let reader = wasmparser::CodeSectionReader::new(wasmparser::BinaryReader::new(
                    content,
                    (at + l) as u64,
                ))
                .unwrap();
                let found: Vec<usize> = reader
                    .into_iter()
                    .map(|b| b.unwrap().range().start as usize)
                    .skip(linked_items)
                    .take(bodies.len())
                    .collect();
                assert_eq!(offsets, found);
                got.data_section(&linked_data, &segments, active).unwrap();
                assert_eq!(
                    got.0,
                    want.finish(),
                    "linked {linked_items}, active {active}"
                );
            }
        }
    }
}
