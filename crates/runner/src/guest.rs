//! Calling into the module from a host: its exports and its function pointers (indices in
//! the exported table, which is what a pexe's function pointers are).
//!
//! Both work with a `Caller` (inside an import) or a store context (a host thread's entry,
//! a [`crate::Task`]); the call runs on the current thread, in its own instance.

use wasmtime::{AsContextMut, Instance, Ref, WasmParams, WasmResults};

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
