//! Reaching into the module from a host: its exports, its function pointers (indices in
//! the exported table, which is what a pexe's function pointers are) and its memory
//! (where a pexe's pointers point).
//!
//! All work with a `Caller` (inside an import) or a store context (a host thread's entry,
//! a [`crate::Task`]); calls run on the current thread, in its own instance.

use wasmtime::{
    AsContextMut, Extern, Instance, Memory, Ref, SharedMemory, WasmParams, WasmResults,
};

use crate::host::Ctx;

fn instance(cx: &mut impl AsContextMut<Data = Ctx>) -> wasmtime::Result<Instance> {
    cx.as_context()
        .data()
        .instance()
        .ok_or_else(|| wasmtime::Error::msg("this store has no module instance"))
}

/// Calls the module's export `name` with the given parameters.
pub fn call_export<P, R>(
    mut cx: impl AsContextMut<Data = Ctx>,
    name: &str,
    params: P,
) -> wasmtime::Result<R>
where
    P: WasmParams,
    R: WasmResults,
{
    let instance = instance(&mut cx)?;
    let f = instance
        .get_func(&mut cx, name)
        .ok_or_else(|| wasmtime::Error::msg(format!("the module exports no function {name:?}")))?;
    let f = f
        .typed::<P, R>(&cx)
        .map_err(|e| e.context(format!("export {name:?}")))?;
    f.call(&mut cx, params)
}

/// Calls the function whose pointer (table index) is `pointer`, e.g. a completion
/// callback or a PPP entry the module handed to the host. A null or out-of-range pointer,
/// or one whose function has another type, is an error, not a trap of the module.
pub fn call_function_pointer<P, R>(
    mut cx: impl AsContextMut<Data = Ctx>,
    pointer: u32,
    params: P,
) -> wasmtime::Result<R>
where
    P: WasmParams,
    R: WasmResults,
{
    let instance = instance(&mut cx)?;
    let table = instance
        .get_table(&mut cx, pexe2wasm::runtime::ENV_TABLE)
        .ok_or_else(|| wasmtime::Error::msg("the module exports no function table"))?;
    let f = match table.get(&mut cx, u64::from(pointer)) {
        Some(Ref::Func(Some(f))) => f,
        _ => {
            return Err(wasmtime::Error::msg(format!(
                "function pointer {pointer:#x} names no function"
            )))
        }
    };
    let f = f
        .typed::<P, R>(&cx)
        .map_err(|e| e.context(format!("function pointer {pointer:#x}")))?;
    f.call(&mut cx, params)
}

/// The bytes at `addr..addr + len` of the module's memory (its `memory` export, shared or
/// not). Out of bounds is an error.
pub fn read_memory(
    cx: impl AsContextMut<Data = Ctx>,
    addr: u32,
    len: u32,
) -> wasmtime::Result<Vec<u8>> {
    let mut buf = vec![0; len as usize];
    read_memory_into(cx, addr, &mut buf)?;
    Ok(buf)
}

/// Fills `buf` from the module's memory at `addr` (no allocation: for the small reads of
/// hot host functions, such as a 16-byte `PP_Var`). Out of bounds is an error.
pub fn read_memory_into(
    mut cx: impl AsContextMut<Data = Ctx>,
    addr: u32,
    buf: &mut [u8],
) -> wasmtime::Result<()> {
    match memory(&mut cx)? {
        Mem::Plain(m) => m.read(&cx, addr as usize, buf)?,
        Mem::Shared(m) => {
            let len = u32::try_from(buf.len())
                .map_err(|_| wasmtime::Error::msg("read larger than a wasm32 memory"))?;
            let cells = shared_range(m.data(), addr, len)?;
            // SAFETY: the range is in bounds (checked) and a shared memory never shrinks.
            // Other threads may write it meanwhile; like a wasm thread's plain loads, the
            // bytes read are then unordered with those writes.
            unsafe {
                std::ptr::copy_nonoverlapping(cells.as_ptr().cast(), buf.as_mut_ptr(), buf.len())
            }
        }
    }
    Ok(())
}

/// Writes `bytes` at `addr` in the module's memory (its `memory` export, shared or not).
/// Out of bounds is an error, and then nothing is written.
pub fn write_memory(
    mut cx: impl AsContextMut<Data = Ctx>,
    addr: u32,
    bytes: &[u8],
) -> wasmtime::Result<()> {
    match memory(&mut cx)? {
        Mem::Plain(m) => m.write(&mut cx, addr as usize, bytes)?,
        Mem::Shared(m) => {
            let len = u32::try_from(bytes.len())
                .map_err(|_| wasmtime::Error::msg("write larger than a wasm32 memory"))?;
            let cells = shared_range(m.data(), addr, len)?;
            // SAFETY: as in `read_memory`; the cells are `UnsafeCell`s, so writing through
            // a shared reference to them is allowed.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    cells.as_ptr() as *mut u8,
                    bytes.len(),
                )
            }
        }
    }
    Ok(())
}

#[derive(Clone)]
pub(crate) enum Mem {
    Plain(Memory),
    Shared(SharedMemory),
}

/// The module's `memory` export, looked up once per store (a host function reads memory
/// on nearly every call; the lookup by name cost more than the read).
pub(crate) fn memory(cx: &mut impl AsContextMut<Data = Ctx>) -> wasmtime::Result<Mem> {
    if let Some(m) = cx.as_context().data().memory_cache() {
        return Ok(m.clone());
    }
    let instance = instance(cx)?;
    let m = match instance.get_export(&mut *cx, pexe2wasm::runtime::ENV_MEMORY) {
        Some(Extern::Memory(m)) => Mem::Plain(m),
        Some(Extern::SharedMemory(m)) => Mem::Shared(m),
        _ => return Err(wasmtime::Error::msg("the module exports no memory")),
    };
    cx.as_context_mut().data_mut().set_memory_cache(m.clone());
    Ok(m)
}

fn shared_range(
    data: &[std::cell::UnsafeCell<u8>],
    addr: u32,
    len: u32,
) -> wasmtime::Result<&[std::cell::UnsafeCell<u8>]> {
    let start = addr as usize;
    start
        .checked_add(len as usize)
        .and_then(|end| data.get(start..end))
        .ok_or_else(|| {
            wasmtime::Error::msg(format!(
                "memory access at {addr:#x}, {len} bytes, is out of bounds"
            ))
        })
}
