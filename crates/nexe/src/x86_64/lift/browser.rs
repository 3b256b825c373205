//! A Pepper nexe's module in the form the browser host (web/src/host) runs, the form a
//! converted Pepper pexe has: its memory imported as `env.memory`, shared, so that the
//! host's workers (the instance worker, the IO worker, thread workers) all see it; and
//! `__ppapi_alloc`/`__ppapi_free` keeping the host heap's top in that memory rather than
//! in a global, because the IO worker allocates through its own instance of the module,
//! whose globals are its own. The translation is otherwise the command-line one (the
//! module `translate_program` gives, which `pexe2wasm run` runs with its own memory).

use std::ops::Range;

use wasm_encoder::{BlockType, Encode, Function, Instruction as I, MemArg, ValType};
use wasmparser::{Parser, Payload};

/// Why a nexe did not translate for the browser.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(transparent)]
    Lift(#[from] super::LiftError),
    #[error("the translated module does not parse: {0}")]
    Parse(#[from] wasmparser::BinaryReaderError),
    #[error("the translated module is not a Pepper plugin with its own memory: {0}")]
    NotPepper(&'static str),
    /// A static x86-64 command-line nexe: `pexe2wasm run` runs it.
    #[error("a native NaCl executable for x86-64 (command-line): not a Pepper plugin; run it with `pexe2wasm run`")]
    CommandLine,
    /// Any other nexe, or an ELF file that is none: what it is (native::NativeInput).
    #[error("{0}")]
    Native(String),
}

/// Whether [`translate_for_browser`] takes this nexe: a static x86-64 Pepper plugin the
/// runtime runs (`runs_with_runtime`), not of the 2011 interfaces.
pub fn is_browser_plugin(info: &crate::NexeInfo) -> bool {
    super::runs_with_runtime(info) && matches!(info.app, crate::AppKind::Pepper { pre_1_0: false })
}

/// A Pepper nexe translated (as [`super::translate_program`] does) into the browser's form.
pub fn translate_for_browser(nexe: &crate::Nexe<'_>) -> Result<super::Program, BrowserError> {
    if !is_browser_plugin(&nexe.info) {
        return Err(BrowserError::NotPepper(
            "not a Pepper nexe the runtime runs",
        ));
    }
    let mut p = super::translate_program(nexe)?;
    let heap = p.host_heap.ok_or(BrowserError::NotPepper("no host heap"))?;
    p.wasm = for_browser(&p.wasm, heap)?;
    Ok(p)
}

/// When `bytes` is an ELF file: the nexe's module for the browser host when it is a
/// Pepper nexe [`translate_for_browser`] takes, else what it is; `None` for anything else.
pub fn nexe_plugin(bytes: &[u8]) -> Option<Result<super::Program, BrowserError>> {
    let native = crate::recognize(bytes)?;
    Some(match crate::inspect(bytes) {
        Ok(n) if is_browser_plugin(&n.info) => translate_for_browser(&n),
        Ok(n) if super::runs_with_runtime(&n.info) => Err(BrowserError::CommandLine),
        _ => Err(BrowserError::Native(native.to_string())),
    })
}

/// The first 64 KiB of the host heap hold its top (a 32-bit cell at the start, 0 until
/// the first allocation); blocks are taken above it.
const CELL_ROOM: u32 = 0x1_0000;

/// `wasm` (a Pepper plugin from [`super::translate_program`], whose host heap is
/// `host_heap`) with its memory imported shared and its host heap's top in memory.
pub fn for_browser(wasm: &[u8], host_heap: (u32, u32)) -> Result<Vec<u8>, BrowserError> {
    let mut sections: Vec<(u8, Vec<u8>)> = Vec::new();
    let mut imported_funcs = 0u32;
    let mut memory_min: Option<u64> = None;
    // A threaded module (one that names nacl-irt-thread) already imports its memory,
    // shared, as the browser needs; only its allocator changes.
    let mut imports_shared = false;
    let (mut alloc, mut free) = (None, None);
    let mut code: Option<(u32, Vec<u8>)> = None;
    let mut index = 0u32;
    let range = |r: Range<u64>| r.start as usize..r.end as usize;
    for payload in Parser::new(0).parse_all(wasm) {
        let payload = payload?;
        match &payload {
            Payload::ImportSection(r) => {
                for imp in r.clone().into_imports() {
                    match imp?.ty {
                        wasmparser::TypeRef::Func(_) => imported_funcs += 1,
                        wasmparser::TypeRef::Memory(m) if m.shared && !m.memory64 => {
                            imports_shared = true
                        }
                        wasmparser::TypeRef::Memory(_) => {
                            return Err(BrowserError::NotPepper("it imports an unshared memory"))
                        }
                        _ => {}
                    }
                }
                let body = &wasm[range(r.range())];
                if imports_shared {
                    sections.push((2, body.to_vec()));
                    continue;
                }
                // The imports (their groups) as they are, then the memory's.
                let mut br = wasmparser::BinaryReader::new(body, 0);
                let groups = br.read_var_u32()?;
                let mut data = Vec::new();
                (groups + 1).encode(&mut data);
                data.extend_from_slice(&body[br.current_position()..]);
                sections.push((2, data));
                continue;
            }
            Payload::MemorySection(r) => {
                let mems: Vec<_> = r.clone().into_iter().collect::<Result<_, _>>()?;
                match mems.as_slice() {
                    [m] if !m.shared && !m.memory64 => memory_min = Some(m.initial),
                    _ => return Err(BrowserError::NotPepper("not one 32-bit unshared memory")),
                }
                continue;
            }
            Payload::ExportSection(r) => {
                for e in r.clone() {
                    let e = e?;
                    match (e.name, e.kind) {
                        ("__ppapi_alloc", wasmparser::ExternalKind::Func) => alloc = Some(e.index),
                        ("__ppapi_free", wasmparser::ExternalKind::Func) => free = Some(e.index),
                        _ => {}
                    }
                }
            }
            Payload::CodeSectionStart { count, .. } => {
                let mut data = Vec::new();
                count.encode(&mut data);
                code = Some((sections.len() as u32, data));
                sections.push((10, Vec::new()));
                continue;
            }
            Payload::CodeSectionEntry(body) => {
                let (alloc, free) = match (alloc, free) {
                    (Some(a), Some(f)) => (a, f),
                    _ => return Err(BrowserError::NotPepper("no __ppapi_alloc/__ppapi_free")),
                };
                let Some((_, data)) = code.as_mut() else {
                    unreachable!("entries come after the code section's start")
                };
                let f = imported_funcs + index;
                index += 1;
                if f == alloc {
                    alloc_body(host_heap).encode(data);
                } else if f == free {
                    free_body(host_heap).encode(data);
                } else {
                    let bytes = body.as_bytes();
                    bytes.len().encode(data);
                    data.extend_from_slice(bytes);
                }
                continue;
            }
            _ => {}
        }
        if let Some((id, r)) = payload.as_section() {
            sections.push((id, wasm[range(r)].to_vec()));
        }
    }
    if let Some((at, data)) = code {
        sections[at as usize].1 = data;
    }
    if imports_shared {
        return Ok(assemble(&wasm[..8], sections));
    }
    let min = memory_min.ok_or(BrowserError::NotPepper("no memory"))?;
    // The memory import: the module's minimum, 4 GiB at most (NaCl's sandbox), shared.
    let mut memory = Vec::new();
    "env".encode(&mut memory);
    "memory".encode(&mut memory);
    memory.push(0x02);
    memory.push(0x03);
    (min as u32).encode(&mut memory);
    65536u32.encode(&mut memory);
    match sections.iter_mut().find(|(id, _)| *id == 2) {
        Some((_, data)) => data.extend_from_slice(&memory),
        None => return Err(BrowserError::NotPepper("no imports")),
    }
    Ok(assemble(&wasm[..8], sections))
}

/// A module from its header and sections.
fn assemble(header: &[u8], sections: Vec<(u8, Vec<u8>)>) -> Vec<u8> {
    let mut out = Vec::with_capacity(sections.iter().map(|(_, d)| d.len() + 6).sum::<usize>() + 8);
    out.extend_from_slice(header);
    for (id, data) in sections {
        out.push(id);
        data.len().encode(&mut out);
        out.extend_from_slice(&data);
    }
    out
}

fn m32() -> MemArg {
    MemArg {
        offset: 0,
        align: 2,
        target: wasm_encoder::MemArgTarget::Memory(0),
        ordering: None,
    }
}

/// `(len + 0xffff) & -0x10000`: whole 64 KiB pages.
fn pages(len: u32) -> [I<'static>; 4] {
    [
        I::LocalGet(len),
        I::I32Const(0xffff),
        I::I32Add,
        I::I32Const(-0x1_0000),
    ]
}

/// `__ppapi_alloc(len)`: 64 KiB pages of the host heap, zeroed, or 0 when it is full; the
/// top moves by compare-and-exchange, so any worker's instance may allocate.
fn alloc_body((start, end): (u32, u32)) -> Function {
    // locals: 1 the raw cell, 2 the block, 3 the size
    let mut f = Function::new([(3, ValType::I32)]);
    let cell = start as i32;
    let first = (start + CELL_ROOM) as i32;
    for i in [
        I::LocalGet(0),
        I::I32Eqz,
        I::LocalGet(0),
        I::I32Const(-0x1_0000),
        I::I32GtU,
        I::I32Or,
        I::If(BlockType::Empty),
        I::I32Const(0),
        I::Return,
        I::End,
    ] {
        f.instruction(&i);
    }
    for i in pages(0) {
        f.instruction(&i);
    }
    for i in [
        I::I32And,
        I::LocalSet(3),
        I::Loop(BlockType::Empty),
        I::I32Const(cell),
        I::I32AtomicLoad(m32()),
        I::LocalTee(1),
        I::I32Const(first),
        I::LocalGet(1),
        I::Select,
        I::LocalTee(2),
        I::I64ExtendI32U,
        I::LocalGet(3),
        I::I64ExtendI32U,
        I::I64Add,
        I::I64Const(end as i64),
        I::I64GtU,
        I::If(BlockType::Empty),
        I::I32Const(0),
        I::Return,
        I::End,
        I::I32Const(cell),
        I::LocalGet(1),
        I::LocalGet(2),
        I::LocalGet(3),
        I::I32Add,
        I::I32AtomicRmwCmpxchg(m32()),
        I::LocalGet(1),
        I::I32Ne,
        I::BrIf(0),
        I::End,
        I::LocalGet(2),
        I::I32Const(0),
        I::LocalGet(3),
        I::MemoryFill(0),
        I::LocalGet(2),
        I::End,
    ] {
        f.instruction(&i);
    }
    f
}

/// `__ppapi_free(addr, len)`: the top block gives its room back; others stay taken.
fn free_body((start, _): (u32, u32)) -> Function {
    // local 2: the top
    let mut f = Function::new([(1, ValType::I32)]);
    let cell = start as i32;
    for i in [I::I32Const(cell), I::I32AtomicLoad(m32()), I::LocalTee(2)] {
        f.instruction(&i);
    }
    for i in [I::If(BlockType::Empty), I::LocalGet(0)] {
        f.instruction(&i);
    }
    for i in pages(1) {
        f.instruction(&i);
    }
    for i in [
        I::I32And,
        I::I32Add,
        I::LocalGet(2),
        I::I32Eq,
        I::If(BlockType::Empty),
        I::I32Const(cell),
        I::LocalGet(2),
        I::LocalGet(0),
        I::I32AtomicRmwCmpxchg(m32()),
        I::Drop,
        I::End,
        I::End,
        I::End,
    ] {
        f.instruction(&i);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::{
        CodeSection, EntityType, ExportKind, ExportSection, FunctionSection, ImportSection,
        MemorySection, MemoryType, Module, TypeSection,
    };

    const PAGE: u32 = 0x1_0000;
    /// The host heap: the cell's page, then four pages of blocks.
    const HEAP: (u32, u32) = (PAGE, 6 * PAGE);

    /// A module of the shape `translate_program` gives: a function import before
    /// `__ppapi_alloc`/`__ppapi_free` (whose bodies are replaced), its own memory.
    fn plugin() -> Vec<u8> {
        let mut m = Module::new();
        let mut t = TypeSection::new();
        t.ty().function([ValType::I32], [ValType::I32]);
        t.ty().function([ValType::I32, ValType::I32], []);
        m.section(&t);
        let mut i = ImportSection::new();
        i.import("x", "f", EntityType::Function(0));
        m.section(&i);
        let mut f = FunctionSection::new();
        f.function(0).function(1);
        m.section(&f);
        let mut mem = MemorySection::new();
        mem.memory(MemoryType {
            minimum: 6,
            maximum: Some(65536),
            memory64: false,
            shared: false,
            page_size_log2: None,
        });
        m.section(&mem);
        let mut e = ExportSection::new();
        e.export("memory", ExportKind::Memory, 0)
            .export("__ppapi_alloc", ExportKind::Func, 1)
            .export("__ppapi_free", ExportKind::Func, 2);
        m.section(&e);
        let mut c = CodeSection::new();
        for _ in 0..2 {
            let mut b = Function::new([]);
            b.instructions().unreachable().end();
            c.function(&b);
        }
        m.section(&c);
        m.finish()
    }

    /// Two instances over one shared memory (the instance worker's and the IO worker's)
    /// take distinct blocks, zeroed, and the top block's room comes back.
    #[test]
    fn instances_share_the_host_heap_through_memory() {
        let wasm = for_browser(&plugin(), HEAP).unwrap();
        wasmparser::Validator::new().validate_all(&wasm).unwrap();
        let mut config = wasmtime::Config::new();
        config.wasm_threads(true).shared_memory(true);
        let engine = wasmtime::Engine::new(&config).unwrap();
        let module = wasmtime::Module::new(&engine, &wasm).unwrap();
        let memory =
            wasmtime::SharedMemory::new(&engine, wasmtime::MemoryType::shared(6, 65536)).unwrap();
        let mut store = wasmtime::Store::new(&engine, ());
        let f = wasmtime::Func::wrap(&mut store, |x: i32| x);
        let mut instance = || {
            let i =
                wasmtime::Instance::new(&mut store, &module, &[f.into(), memory.clone().into()])
                    .unwrap();
            (
                i.get_typed_func::<i32, i32>(&mut store, "__ppapi_alloc")
                    .unwrap(),
                i.get_typed_func::<(i32, i32), ()>(&mut store, "__ppapi_free")
                    .unwrap(),
            )
        };
        let (alloc_a, _) = instance();
        let (alloc_b, free_b) = instance();
        let heap = (HEAP.0 + CELL_ROOM) as i32;
        assert_eq!(alloc_a.call(&mut store, 0).unwrap(), 0);
        assert_eq!(alloc_a.call(&mut store, 1).unwrap(), heap);
        let b = alloc_b.call(&mut store, PAGE as i32 + 1).unwrap();
        assert_eq!(b, heap + PAGE as i32, "B's block is above A's");
        // Full: two pages taken of four, three more do not fit.
        assert_eq!(alloc_a.call(&mut store, 3 * PAGE as i32).unwrap(), 0);
        let data = memory.data();
        // The shared view is UnsafeCell bytes; no other thread runs.
        unsafe { *data[b as usize].get() = 7 };
        free_b.call(&mut store, (b, PAGE as i32 + 1)).unwrap();
        let again = alloc_a.call(&mut store, 1).unwrap();
        assert_eq!(again, b, "the top block's room came back");
        assert_eq!(
            unsafe { *data[again as usize].get() },
            0,
            "blocks are zeroed"
        );
    }

    #[test]
    fn a_module_that_imports_shared_memory_keeps_it_and_gets_the_allocator() {
        // A threaded nexe's module imports its memory shared already: the rewrite of an
        // already rewritten module changes nothing.
        let once = for_browser(&plugin(), HEAP).unwrap();
        assert_eq!(for_browser(&once, HEAP).unwrap(), once);
    }
}
