//! Pepper for translated nexes: the module presents the imports and exports of a converted
//! Pepper pexe (docs/PEPPER-ABI.md), so both Pepper hosts run it unchanged.
//!
//! A nexe's Pepper calls are native x86-64 calls (System V convention over NaCl's ILP32
//! layouts: a struct by value travels in registers when it fits in two eightbytes, else
//! on the stack). The pexe ABI the hosts implement passes structs as pointers to copies.
//! So each function of every PPB interface the nexe names (and the description knows)
//! gets a table slot in NaCl's trampoline region with an adapter that takes the
//! arguments from the registers and the stack, copies register-passed structs to its
//! scratch below the stack pointer, calls the import, and puts the result back where
//! x86-64 returns it. In the other direction, the exports `__ppp_call_*` and
//! `__ppp_callbuf_*` call the nexe's functions (code addresses) with the arguments in
//! registers; the one PPP function that takes a struct by value,
//! `PPP_Messaging.HandleMessage(instance, PP_Var)`, is recognized by its address (noted
//! when `PPP_GetInterface("PPP_Messaging;1.0")` answers) and its `PP_Var` goes in two
//! registers.
//!
//! `nacl-irt-ppapihook-0.1` answers `ppapi_start` (the host's `start` with the app's three
//! entry points and this runtime's `PPB_GetInterface`) and `register_thread_creator`.
//! `PPB_GetInterface(name)` asks the host's `get_interface` (which notes what it lacks) and
//! answers the interface's table from the directory in the constants, or NULL.

use super::func::{G_XMM, TY_LIFTED};
use super::runtime::{self, ReturnToCaller, IRT_QUERY, L_RA, TRAMPOLINES};
use pexe2wasm_ppapi::{Function as PpbFunction, Interface, TypeKind, ValType as PVal};
use wasm_encoder::{BlockType, Function, InstructionSink, MemArg, ValType};

/// The host module of the Pepper runtime's imports (`pexe2wasm::runtime::PEPPER_HOST`).
pub const HOST: &str = "pexe2wasm_ppapi";

/// The host imports, in import order, with their signatures.
const HOST_IMPORTS: &[(&str, &[ValType], &[ValType])] = &[
    ("start", &[ValType::I32; 4], &[ValType::I32]),
    ("get_interface", &[ValType::I32; 2], &[ValType::I32]),
    ("register_thread_creator", &[ValType::I32; 2], &[]),
    ("fill", &[ValType::I32; 2], &[]),
    ("done", &[ValType::I32; 2], &[]),
];
const H_START: u32 = 0;
const H_GET_INTERFACE: u32 = 1;
const H_REGISTER: u32 = 2;
const H_FILL: u32 = 3;
const H_DONE: u32 = 4;

/// The scalar PPP entry points (`__ppp_call_<params>_<result>`): after the function
/// pointer, these arguments (`i` i32, `d` f64) and an i32 result or none.
const CALLS: &[(&str, &str, bool)] = &[
    ("__ppp_call_v", "", false),
    ("__ppp_call_i_v", "i", false),
    ("__ppp_call_i_i", "i", true),
    ("__ppp_call_ii_v", "ii", false),
    ("__ppp_call_ii_i", "ii", true),
    ("__ppp_call_iii_v", "iii", false),
    ("__ppp_call_iii_i", "iii", true),
    ("__ppp_call_iidi_v", "iidi", false),
];
/// The PPP entry points with a buffer (`(fn, n, mask, args…)`): the number of i32
/// arguments and whether there is a result.
const CALLBUFS: &[(&str, usize, bool)] = &[
    ("__ppp_callbuf_i_i", 1, true),
    ("__ppp_callbuf_ii_v", 2, false),
    ("__ppp_callbuf_iii_v", 3, false),
    ("__ppp_callbuf_iii_i", 3, true),
    ("__ppp_callbuf_iiii_v", 4, false),
    ("__ppp_callbuf_iiii_i", 4, true),
];

/// What a translated Pepper nexe is given: the PPB interfaces it names that the
/// description knows, in the order named.
#[derive(Debug, Clone)]
pub struct Pepper {
    pub interfaces: Vec<&'static Interface>,
}

/// The x86-64 registers' globals.
const G_RAX: u32 = 0;
const G_RDX: u32 = 2;
const G_RSP: u32 = 4;
/// The integer argument registers in order: rdi rsi rdx rcx r8 r9.
const GPR_ARGS: [u32; 6] = [7, 6, 2, 1, 8, 9];

/// The return address the runtime pushes when it calls into the nexe: a trampoline slot no
/// code returns to.
const SENTINEL: i32 = (IRT_QUERY - 32) as i32;
/// Below the stack pointer, left alone before the runtime's own space (x86-64's red zone).
const RED_ZONE: i32 = 128;

/// Where the Pepper constants go: the second half of the runtime's constants.
pub(crate) const PEPPER_DATA: i32 = runtime::IRT_DATA + 0x4000;
const PEPPER_DATA_MAX: usize = 0x4000;
/// `PPP_Messaging;1.0` (what `__ppp_callbuf_i_i` compares the name asked for with).
const MESSAGING: &[u8] = b"PPP_Messaging;1.0\0";
const DIR: i32 = PEPPER_DATA + 32;

/// The memory the host may take (`__ppapi_alloc`), between the stack and the break.
pub const HOST_HEAP: u32 = 32 << 20;

/// How a System V eightbyte travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Integer,
    Sse,
}

fn m(align: u32, offset: u64) -> MemArg {
    MemArg {
        offset,
        align,
        target: wasm_encoder::MemArgTarget::Memory(0),
        ordering: None,
    }
}

impl Pepper {
    /// The PPB interfaces among `names` that the description knows.
    pub fn new<S: AsRef<str>>(names: &[S]) -> Pepper {
        let d = pexe2wasm_ppapi::description();
        let mut interfaces: Vec<&'static Interface> = Vec::new();
        for n in names {
            if let Some(i) = d.interface(n.as_ref()) {
                if i.kind == pexe2wasm_ppapi::Kind::Ppb
                    && !interfaces.iter().any(|o| o.name == i.name)
                {
                    interfaces.push(i);
                }
            }
        }
        Pepper { interfaces }
    }

    fn functions(&self) -> impl Iterator<Item = (&'static Interface, &'static PpbFunction)> + '_ {
        self.interfaces
            .iter()
            .flat_map(|i| i.functions.iter().map(move |f| (*i, f)))
    }

    fn ppb_count(&self) -> u32 {
        self.functions().count() as u32
    }

    /// Functions imported (after WASI's).
    pub fn import_count(&self) -> u32 {
        HOST_IMPORTS.len() as u32 + self.ppb_count()
    }

    /// Adapters with a table slot: `ppapi_start`, `register_thread_creator`,
    /// `PPB_GetInterface`, then one per PPB function.
    pub fn adapter_count(&self) -> u32 {
        3 + self.ppb_count()
    }

    /// Functions this adds: the adapters, then the exports.
    pub fn count(&self) -> u32 {
        self.adapter_count() + CALLS.len() as u32 + 1 + CALLBUFS.len() as u32 + 2
    }

    /// The table slot address of adapter `k`, given the number of IRT slots before.
    fn slot(irt_slots: u32, k: u32) -> u32 {
        IRT_QUERY + 32 * (irt_slots + k)
    }

    /// The signatures this needs, in a fixed order (type indices from `first`).
    fn signatures(&self) -> Vec<(Vec<ValType>, Vec<ValType>)> {
        let mut v: Vec<(Vec<ValType>, Vec<ValType>)> = Vec::new();
        let mut add = |p: Vec<ValType>, r: Vec<ValType>| {
            if !v.iter().any(|(a, b)| *a == p && *b == r) {
                v.push((p, r));
            }
        };
        for (_, p, r) in HOST_IMPORTS {
            add(p.to_vec(), r.to_vec());
        }
        for (_, f) in self.functions() {
            let s = f.wasm_signature();
            add(
                s.params.iter().map(|&t| val(t)).collect(),
                s.results.iter().map(|&t| val(t)).collect(),
            );
        }
        for (_, args, result) in CALLS {
            add(call_params(args), result_of(*result));
        }
        add(vec![ValType::I32; 2], vec![ValType::I32]);
        for (_, n, result) in CALLBUFS {
            add(vec![ValType::I32; 3 + n], result_of(*result));
        }
        add(vec![ValType::I32], vec![ValType::I32]);
        add(vec![ValType::I32; 2], vec![]);
        v
    }

    fn type_of(&self, first: u32, p: &[ValType], r: &[ValType]) -> u32 {
        first
            + self
                .signatures()
                .iter()
                .position(|(a, b)| a == p && b == r)
                .expect("every signature is listed") as u32
    }

    /// Adds the types (from index `first`).
    pub fn types(&self, t: &mut wasm_encoder::TypeSection) {
        for (p, r) in self.signatures() {
            t.ty().function(p, r);
        }
    }

    /// Adds the imports (after WASI's; `first` is the first Pepper type index).
    pub fn imports(&self, imports: &mut wasm_encoder::ImportSection, first: u32) {
        for (name, p, r) in HOST_IMPORTS {
            imports.import(
                HOST,
                name,
                wasm_encoder::EntityType::Function(self.type_of(first, p, r)),
            );
        }
        for (i, f) in self.functions() {
            let s = f.wasm_signature();
            let p: Vec<ValType> = s.params.iter().map(|&t| val(t)).collect();
            let r: Vec<ValType> = s.results.iter().map(|&t| val(t)).collect();
            imports.import(
                &i.name,
                &f.name,
                wasm_encoder::EntityType::Function(self.type_of(first, &p, &r)),
            );
        }
    }

    /// The type of each function added, in order.
    pub fn function_types(&self, first: u32) -> Vec<u32> {
        let mut v = vec![TY_LIFTED; self.adapter_count() as usize];
        for (_, args, result) in CALLS {
            v.push(self.type_of(first, &call_params(args), &result_of(*result)));
        }
        v.push(self.type_of(first, &[ValType::I32; 2], &[ValType::I32]));
        for (_, n, result) in CALLBUFS {
            v.push(self.type_of(first, &vec![ValType::I32; 3 + n], &result_of(*result)));
        }
        v.push(self.type_of(first, &[ValType::I32], &[ValType::I32]));
        v.push(self.type_of(first, &[ValType::I32; 2], &[]));
        v
    }

    /// The exports: names and function indices (the functions start at `first_fn`).
    pub fn exports(&self, first_fn: u32) -> Vec<(&'static str, u32)> {
        let mut k = first_fn + self.adapter_count();
        let mut v = Vec::new();
        for (name, _, _) in CALLS {
            v.push((*name, k));
            k += 1;
        }
        v.push(("__ppp_initialize_module", k));
        k += 1;
        for (name, _, _) in CALLBUFS {
            v.push((*name, k));
            k += 1;
        }
        v.push(("__ppapi_alloc", k));
        v.push(("__ppapi_free", k + 1));
        v
    }

    /// `nacl-irt-ppapihook-0.1`'s table: the first two adapters' slots.
    pub fn ppapihook_table(irt_slots: u32) -> [u32; 2] {
        [Self::slot(irt_slots, 0), Self::slot(irt_slots, 1)]
    }

    /// The constants at [`PEPPER_DATA`]: the name `__ppp_callbuf_i_i` watches for, then
    /// the directory `PPB_GetInterface` reads (per interface: its name's address and
    /// length, its table's address; a zero name ends it), the names and the tables (the
    /// adapters' slot addresses, in the C struct's order).
    pub fn data(&self, irt_slots: u32) -> Result<Vec<u8>, super::LiftError> {
        let mut d = vec![0u8; 32 + 12 * (self.interfaces.len() + 1)];
        d[..MESSAGING.len()].copy_from_slice(MESSAGING);
        let mut k = 3;
        for (n, i) in self.interfaces.iter().enumerate() {
            let name_at = PEPPER_DATA as u32 + d.len() as u32;
            d.extend_from_slice(i.name.as_bytes());
            d.push(0);
            d.resize(d.len().next_multiple_of(4), 0);
            let table_at = PEPPER_DATA as u32 + d.len() as u32;
            for _ in &i.functions {
                d.extend_from_slice(&Self::slot(irt_slots, k).to_le_bytes());
                k += 1;
            }
            let e = 32 + 12 * n;
            for (j, w) in [name_at, i.name.len() as u32, table_at]
                .into_iter()
                .enumerate()
            {
                d[e + 4 * j..e + 4 * j + 4].copy_from_slice(&w.to_le_bytes());
            }
        }
        if d.len() > PEPPER_DATA_MAX
            || Self::slot(irt_slots, self.adapter_count()) > TRAMPOLINES + 0x1_0000
        {
            return Err(super::LiftError::Verdict(format!(
                "the nexe names more Pepper interfaces than the runtime has room for ({} functions)",
                self.ppb_count()
            )));
        }
        Ok(d)
    }

    /// The bodies, in function order. `import_base` is the first Pepper import's
    /// function index, `heap` the host heap's start and end.
    pub fn bodies(&self, import_base: u32, irt_slots: u32, heap: (u32, u32)) -> Vec<Function> {
        let host = |k: u32| import_base + k;
        let get_interface = Self::slot(irt_slots, 2);
        let mut v = Vec::new();
        // ppapi_start(const struct PP_StartFunctions *)
        v.push(adapter(|s| {
            for off in [0, 4, 8] {
                s.global_get(GPR_ARGS[0]).i32_wrap_i64().i32_load(m(2, off));
            }
            s.i32_const(get_interface as i32)
                .call(host(H_START))
                .i64_extend_i32_s();
        }));
        // register_thread_creator(const struct PP_ThreadFunctions *)
        v.push(adapter(|s| {
            for off in [0, 4] {
                s.global_get(GPR_ARGS[0]).i32_wrap_i64().i32_load(m(2, off));
            }
            s.call(host(H_REGISTER)).i64_const(0);
        }));
        // PPB_GetInterface(const char *name)
        v.push(adapter(|s| ppb_get_interface(s, host(H_GET_INTERFACE))));
        for (import, (_, f)) in (host(HOST_IMPORTS.len() as u32)..).zip(self.functions()) {
            v.push(ppb_adapter(f, import));
        }
        for (_, args, result) in CALLS {
            v.push(ppp_call(args, *result));
        }
        v.push(initialize_module(get_interface));
        for (_, n, result) in CALLBUFS {
            v.push(ppp_callbuf(*n, *result, host(H_FILL), host(H_DONE)));
        }
        v.push(alloc(heap.1));
        v.push(free());
        v
    }
}

fn val(t: PVal) -> ValType {
    match t {
        PVal::I32 => ValType::I32,
        PVal::I64 => ValType::I64,
        PVal::F32 => ValType::F32,
        PVal::F64 => ValType::F64,
    }
}

fn call_params(args: &str) -> Vec<ValType> {
    std::iter::once(ValType::I32)
        .chain(
            args.chars()
                .map(|c| if c == 'd' { ValType::F64 } else { ValType::I32 }),
        )
        .collect()
}

fn result_of(r: bool) -> Vec<ValType> {
    if r {
        vec![ValType::I32]
    } else {
        vec![]
    }
}

/// The eightbytes of a C type by value (System V), `None` when it goes in memory (more
/// than 16 bytes), with its size.
fn classify(base: &str) -> Option<(u32, Vec<Class>)> {
    let d = pexe2wasm_ppapi::description();
    let t = d.type_def(base)?;
    if t.size > 16 {
        return None;
    }
    let mut classes = vec![None; t.size.div_ceil(8).max(1) as usize];
    mark(base, 0, &mut classes)?;
    Some((
        t.size,
        classes
            .into_iter()
            .map(|c| c.unwrap_or(Class::Integer))
            .collect(),
    ))
}

/// Marks the eightbytes the scalars of `base` at `offset` fall in (an integer anywhere in
/// an eightbyte makes it INTEGER).
fn mark(base: &str, offset: u32, classes: &mut [Option<Class>]) -> Option<()> {
    let d = pexe2wasm_ppapi::description();
    let t = d.type_def(base)?;
    fn put(classes: &mut [Option<Class>], c: Class, at: u32) {
        let e = (at / 8) as usize;
        if e < classes.len() {
            classes[e] = Some(match (classes[e], c) {
                (Some(Class::Integer), _) | (_, Class::Integer) => Class::Integer,
                _ => Class::Sse,
            });
        }
    }
    match &t.kind {
        TypeKind::Primitive {
            wasm: Some(PVal::F32 | PVal::F64),
        } => put(classes, Class::Sse, offset),
        TypeKind::Typedef { target } if target.pointers == 0 => {
            mark(&target.base, offset, classes)?
        }
        TypeKind::Struct { fields } | TypeKind::Union { fields } => {
            for f in fields {
                let n = f.count.unwrap_or(1);
                let size = if f.ty.pointers > 0 {
                    4
                } else {
                    d.type_def(&f.ty.base)?.size
                };
                for k in 0..n {
                    if f.ty.pointers > 0 {
                        put(classes, Class::Integer, offset + f.offset + k * size);
                    } else {
                        mark(&f.ty.base, offset + f.offset + k * size, classes)?;
                    }
                }
            }
        }
        _ => put(classes, Class::Integer, offset),
    }
    Some(())
}

/// An adapter with a table slot: pops the return address its call pushed, runs `body`
/// (which leaves the i64 for `%rax`; locals from 1: i32 1..=6, i64 7..=8) and returns to
/// the caller (`ReturnToCaller`).
fn adapter(body: impl FnOnce(&mut InstructionSink<'_>)) -> Function {
    let mut f = Function::new([(6, ValType::I32), (2, ValType::I64), (1, ValType::I32)]);
    {
        let s = &mut f.instructions();
        s.global_get(G_RSP)
            .i32_wrap_i64()
            .i32_load(m(2, 0))
            .local_set(L_RA)
            .global_get(G_RSP)
            .i64_const(8)
            .i64_add()
            .global_set(G_RSP);
        body(s);
        s.global_set(G_RAX).return_to_caller(L_RA).end();
    }
    f
}

/// `PPB_GetInterface(name)`: the host's answer (it notes what it lacks), then the
/// directory's table for the name, or NULL.
fn ppb_get_interface(s: &mut InstructionSink<'_>, get_interface: u32) {
    // locals: 1 name, 2 len, 3 entry, 4 i
    s.global_get(GPR_ARGS[0]).i32_wrap_i64().local_set(1);
    s.i32_const(0).local_set(2);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(1)
        .local_get(2)
        .i32_add()
        .i32_load8_u(m(0, 0))
        .i32_eqz()
        .br_if(1);
    s.local_get(2).i32_const(1).i32_add().local_tee(2);
    s.i32_const(256).i32_lt_u().br_if(0);
    s.end().end();
    s.local_get(1).local_get(2).call(get_interface).i32_eqz();
    s.if_(BlockType::Empty)
        .i64_const(0)
        .global_set(G_RAX)
        .return_to_caller(L_RA)
        .end();
    s.i32_const(DIR).local_set(3);
    s.block(BlockType::Result(ValType::I64));
    s.loop_(BlockType::Empty);
    s.local_get(3).i32_load(m(2, 0)).i32_eqz();
    s.if_(BlockType::Empty).i64_const(0).br(2).end();
    s.block(BlockType::Empty); // a mismatch
    s.local_get(3)
        .i32_load(m(2, 4))
        .local_get(2)
        .i32_ne()
        .br_if(0);
    s.i32_const(0).local_set(4);
    s.loop_(BlockType::Empty);
    s.local_get(4).local_get(2).i32_ge_u();
    s.if_(BlockType::Empty)
        .local_get(3)
        .i32_load(m(2, 8))
        .i64_extend_i32_u()
        .br(4)
        .end();
    s.local_get(3)
        .i32_load(m(2, 0))
        .local_get(4)
        .i32_add()
        .i32_load8_u(m(0, 0))
        .local_get(1)
        .local_get(4)
        .i32_add()
        .i32_load8_u(m(0, 0))
        .i32_ne()
        .br_if(1);
    s.local_get(4).i32_const(1).i32_add().local_set(4).br(0);
    s.end();
    s.end(); // mismatch
    s.local_get(3).i32_const(12).i32_add().local_set(3).br(0);
    s.end();
    s.unreachable();
    s.end();
}

/// Where a C argument is: the next registers of its class, else the stack.
struct Args {
    gpr: usize,
    xmm: u32,
    stack: u64,
}

/// The adapter of one PPB function: the x86-64 arguments to the pexe convention, the
/// import, the result back to `%rax`/`%rdx`/`%xmm0`/`%xmm1`.
fn ppb_adapter(f: &PpbFunction, import: u32) -> Function {
    // locals: 0 ret; 1 stack args (the stack pointer after the pop); 2 scratch; 3 rdi;
    // 4 the return address on the stack
    let (sp, scr, rdi, ra) = (1, 2, 3, 4);
    let mut fun = Function::new([(4, ValType::I32)]);
    let s = &mut fun.instructions();
    s.global_get(G_RSP)
        .i32_wrap_i64()
        .i32_load(m(2, 0))
        .local_set(ra);
    let structs = f.params.iter().filter(|p| p.by_pointer).count() as i32 + 1;
    s.global_get(G_RSP)
        .i64_const(8)
        .i64_add()
        .i32_wrap_i64()
        .local_tee(sp)
        .i32_const(RED_ZONE + 16 * structs)
        .i32_sub()
        .i32_const(-16)
        .i32_and()
        .local_tee(scr)
        .i64_extend_i32_u()
        .global_set(G_RSP);
    s.global_get(GPR_ARGS[0]).i32_wrap_i64().local_set(rdi);
    let mut a = Args {
        gpr: 0,
        xmm: 0,
        stack: 0,
    };
    // The result: in memory (the caller's pointer in %rdi) or in registers (scratch 0).
    let ret = if f.sret { classify(&f.ret.base) } else { None };
    if f.sret {
        match ret {
            None => {
                s.local_get(rdi);
                a.gpr = 1;
            }
            Some(_) => {
                s.local_get(scr);
            }
        }
    }
    let mut copy = 16u64;
    for p in &f.params {
        if p.by_pointer {
            let cls = classify(&p.ty.base);
            let fits = cls.as_ref().is_some_and(|(_, c)| {
                let g = c.iter().filter(|&&c| c == Class::Integer).count();
                let x = c.len() - g;
                a.gpr + g <= 6 && a.xmm as usize + x <= 8
            });
            match cls {
                Some((_, c)) if fits => {
                    for (k, class) in c.iter().enumerate() {
                        s.local_get(scr);
                        match class {
                            Class::Integer => {
                                s.global_get(GPR_ARGS[a.gpr]);
                                a.gpr += 1;
                            }
                            Class::Sse => {
                                s.global_get(G_XMM + a.xmm).i64x2_extract_lane(0);
                                a.xmm += 1;
                            }
                        }
                        s.i64_store(m(3, copy + 8 * k as u64));
                    }
                    s.local_get(scr).i32_const(copy as i32).i32_add();
                    copy += 16;
                }
                _ => {
                    let size = pexe2wasm_ppapi::description()
                        .type_def(&p.ty.base)
                        .map_or(8, |t| t.size);
                    s.local_get(sp).i32_const(a.stack as i32).i32_add();
                    a.stack += u64::from(size.div_ceil(8) * 8);
                }
            }
            continue;
        }
        match p.wasm {
            PVal::I32 | PVal::I64 if a.gpr < 6 => {
                s.global_get(GPR_ARGS[a.gpr]);
                if p.wasm == PVal::I32 {
                    s.i32_wrap_i64();
                }
                a.gpr += 1;
            }
            PVal::F32 | PVal::F64 if a.xmm < 8 => {
                s.global_get(G_XMM + a.xmm);
                if p.wasm == PVal::F32 {
                    s.f32x4_extract_lane(0);
                } else {
                    s.f64x2_extract_lane(0);
                }
                a.xmm += 1;
            }
            t => {
                s.local_get(sp);
                match t {
                    PVal::I32 => s.i32_load(m(2, a.stack)),
                    PVal::I64 => s.i64_load(m(3, a.stack)),
                    PVal::F32 => s.f32_load(m(2, a.stack)),
                    PVal::F64 => s.f64_load(m(3, a.stack)),
                };
                a.stack += 8;
            }
        }
    }
    s.call(import);
    match f.wasm_signature().results.first() {
        Some(PVal::I32) => {
            s.i64_extend_i32_u().global_set(G_RAX);
        }
        Some(PVal::I64) => {
            s.global_set(G_RAX);
        }
        Some(PVal::F32) => {
            s.f32x4_splat().global_set(G_XMM);
        }
        Some(PVal::F64) => {
            s.f64x2_splat().global_set(G_XMM);
        }
        None => {}
    }
    if f.sret {
        match ret {
            None => {
                s.local_get(rdi).i64_extend_i32_u().global_set(G_RAX);
            }
            Some((_, c)) => {
                let (mut g, mut x) = (0, 0);
                for (k, class) in c.iter().enumerate() {
                    match class {
                        Class::Integer => {
                            s.local_get(scr).i64_load(m(3, 8 * k as u64));
                            s.global_set([G_RAX, G_RDX][g]);
                            g += 1;
                        }
                        Class::Sse => {
                            s.local_get(scr)
                                .i64_load(m(3, 8 * k as u64))
                                .i64x2_splat()
                                .global_set(G_XMM + x);
                            x += 1;
                        }
                    }
                }
            }
        }
    }
    s.local_get(sp)
        .i64_extend_i32_u()
        .global_set(G_RSP)
        .return_to_caller(ra)
        .end();
    fun
}

/// Calls the nexe's function at the address in local `fn_local` with the registers as
/// set: pushes the sentinel return address, calls through the table and checks that the
/// function returned to it.
pub(super) fn call_x86(s: &mut InstructionSink<'_>, fn_local: u32) {
    s.global_get(G_RSP)
        .i64_const(8)
        .i64_sub()
        .global_set(G_RSP)
        .global_get(G_RSP)
        .i32_wrap_i64()
        .i64_const(SENTINEL as i64)
        .i64_store(m(3, 0));
    s.i32_const(SENTINEL)
        .local_get(fn_local)
        .i32_const(TRAMPOLINES as i32)
        .i32_sub()
        .i32_const(5)
        .i32_shr_u()
        .call_indirect(0, TY_LIFTED)
        .i32_const(SENTINEL)
        .i32_ne()
        .if_(BlockType::Empty)
        .unreachable()
        .end();
}

/// `__ppp_call_<args>_<r>(fn, args…)`.
fn ppp_call(args: &str, result: bool) -> Function {
    let params = args.len() as u32 + 1;
    // locals after the params: saved rsp, new rsp
    let (saved, to) = (params, params + 1);
    let mut f = Function::new([(2, ValType::I32)]);
    let s = &mut f.instructions();
    s.i32_const(0);
    reserve_n(s, saved, to);
    let (mut g, mut x) = (0, 0);
    for (k, c) in args.chars().enumerate() {
        let p = k as u32 + 1;
        if c == 'd' {
            s.local_get(p).f64x2_splat().global_set(G_XMM + x);
            x += 1;
        } else {
            s.local_get(p).i64_extend_i32_u().global_set(GPR_ARGS[g]);
            g += 1;
        }
    }
    call_x86(s, 0);
    s.local_get(saved).i64_extend_i32_u().global_set(G_RSP);
    if result {
        s.global_get(G_RAX).i32_wrap_i64();
    }
    s.end();
    f
}

/// With `n` on the stack: moves the stack pointer below the red zone and `n` more bytes,
/// 16-aligned; the old one goes to local `saved`, the new one to local `to`.
fn reserve_n(s: &mut InstructionSink<'_>, saved: u32, to: u32) {
    // stack: n → rsp - RED_ZONE - n
    s.local_set(to);
    s.global_get(G_RSP)
        .i32_wrap_i64()
        .local_tee(saved)
        .i32_const(RED_ZONE)
        .i32_sub()
        .local_get(to)
        .i32_sub()
        .i32_const(-16)
        .i32_and()
        .local_tee(to)
        .i64_extend_i32_u()
        .global_set(G_RSP);
}

/// `__ppp_initialize_module(fn, module)`: `PPP_InitializeModule(module, PPB_GetInterface)`.
fn initialize_module(get_interface: u32) -> Function {
    let (saved, to) = (2, 3);
    let mut f = Function::new([(2, ValType::I32)]);
    let s = &mut f.instructions();
    s.i32_const(0);
    reserve_n(s, saved, to);
    s.local_get(1)
        .i64_extend_i32_u()
        .global_set(GPR_ARGS[0])
        .i64_const(get_interface as i64)
        .global_set(GPR_ARGS[1]);
    call_x86(s, 0);
    s.local_get(saved).i64_extend_i32_u().global_set(G_RSP);
    s.global_get(G_RAX).i32_wrap_i64().end();
    f
}

/// `__ppp_callbuf_<n i32s>(fn, size, mask, args…)`: `size` bytes on the stack that the
/// host fills, the masked arguments offsets into them. After `PPP_GetInterface`
/// (`__ppp_callbuf_i_i`) answers `PPP_Messaging;1.0`, its `HandleMessage` is noted; called
/// through `__ppp_callbuf_ii_v`, its `PP_Var` goes by value in two registers.
fn ppp_callbuf(n: usize, result: bool, fill: u32, done: u32) -> Function {
    let params = 3 + n as u32;
    // locals: saved rsp, buffer, result, i
    let (saved, buf, r, i) = (params, params + 1, params + 2, params + 3);
    let mut f = Function::new([(4, ValType::I32)]);
    let s = &mut f.instructions();
    s.local_get(1);
    reserve_n(s, saved, buf);
    s.local_get(buf).local_get(1).call(fill);
    let arg = |s: &mut InstructionSink<'_>, k: u32| {
        s.local_get(3 + k)
            .local_get(buf)
            .i32_const(0)
            .local_get(2)
            .i32_const(1 << k)
            .i32_and()
            .select()
            .i32_add();
    };
    let by_value = n == 2;
    for k in 0..n as u32 {
        if by_value && k == 1 {
            // HandleMessage(instance, PP_Var): the var's two eightbytes
            s.local_get(0)
                .global_get(runtime::G_PPP_HANDLE_MESSAGE)
                .i32_eq()
                .if_(BlockType::Empty);
            arg(s, k);
            s.local_tee(i).i64_load(m(3, 0)).global_set(GPR_ARGS[1]);
            s.local_get(i).i64_load(m(3, 8)).global_set(GPR_ARGS[2]);
            s.else_();
            arg(s, k);
            s.i64_extend_i32_u().global_set(GPR_ARGS[1]);
            s.end();
            continue;
        }
        arg(s, k);
        s.i64_extend_i32_u().global_set(GPR_ARGS[k as usize]);
    }
    call_x86(s, 0);
    s.global_get(G_RAX).i32_wrap_i64().local_set(r);
    if n == 1 && result {
        // PPP_GetInterface("PPP_Messaging;1.0"): note HandleMessage
        s.local_get(r).if_(BlockType::Empty);
        s.block(BlockType::Empty);
        s.i32_const(0).local_set(i);
        s.loop_(BlockType::Empty);
        arg(s, 0);
        s.local_get(i)
            .i32_add()
            .i32_load8_u(m(0, 0))
            .local_get(i)
            .i32_const(PEPPER_DATA)
            .i32_add()
            .i32_load8_u(m(0, 0))
            .i32_ne()
            .br_if(1);
        s.local_get(i)
            .i32_const(1)
            .i32_add()
            .local_tee(i)
            .i32_const(MESSAGING.len() as i32)
            .i32_lt_u()
            .br_if(0);
        s.local_get(r)
            .i32_load(m(2, 0))
            .global_set(runtime::G_PPP_HANDLE_MESSAGE);
        s.end(); // loop
        s.end(); // block
        s.end(); // if
    }
    s.local_get(buf).local_get(1).call(done);
    s.local_get(saved).i64_extend_i32_u().global_set(G_RSP);
    if result {
        s.local_get(r);
    }
    s.end();
    f
}

/// `__ppapi_alloc(len)`: 64 KiB pages of the host heap, zeroed, or 0 when it is full.
fn alloc(end: u32) -> Function {
    let mut f = Function::new([(1, ValType::I32)]);
    let s = &mut f.instructions();
    s.local_get(0)
        .i32_eqz()
        .local_get(0)
        .i32_const(-0x1_0000)
        .i32_gt_u()
        .i32_or()
        .if_(BlockType::Empty)
        .i32_const(0)
        .return_()
        .end();
    s.local_get(0)
        .i32_const(0xffff)
        .i32_add()
        .i32_const(-0x1_0000)
        .i32_and()
        .local_tee(0)
        .i64_extend_i32_u()
        .i32_const(0)
        .i32_load(runtime::at(runtime::HOST_HEAP_AT))
        .i64_extend_i32_u()
        .i64_add()
        .i64_const(end as i64)
        .i64_gt_u()
        .if_(BlockType::Empty)
        .i32_const(0)
        .return_()
        .end();
    s.i32_const(0)
        .i32_load(runtime::at(runtime::HOST_HEAP_AT))
        .local_tee(1)
        .i32_const(0)
        .local_get(0)
        .memory_fill(0);
    s.i32_const(0)
        .local_get(1)
        .local_get(0)
        .i32_add()
        .i32_store(runtime::at(runtime::HOST_HEAP_AT));
    s.local_get(1).end();
    f
}

/// `__ppapi_free(addr, len)`: the top block gives its room back; others stay taken.
fn free() -> Function {
    let mut f = Function::new([]);
    let s = &mut f.instructions();
    s.local_get(0)
        .local_get(1)
        .i32_const(0xffff)
        .i32_add()
        .i32_const(-0x1_0000)
        .i32_and()
        .i32_add()
        .i32_const(0)
        .i32_load(runtime::at(runtime::HOST_HEAP_AT))
        .i32_eq()
        .if_(BlockType::Empty)
        .i32_const(0)
        .local_get(0)
        .i32_store(runtime::at(runtime::HOST_HEAP_AT))
        .end();
    s.end();
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pp_var_is_two_integer_eightbytes_and_float_points_one_sse() {
        assert_eq!(
            classify("PP_Var"),
            Some((16, vec![Class::Integer, Class::Integer]))
        );
        assert_eq!(classify("PP_FloatPoint"), Some((8, vec![Class::Sse])));
        assert_eq!(classify("PP_Point"), Some((8, vec![Class::Integer])));
        assert_eq!(
            classify("PP_CompletionCallback"),
            Some((12, vec![Class::Integer, Class::Integer]))
        );
        assert_eq!(classify("PP_TouchPoint"), None, "28 bytes go in memory");
    }
}
