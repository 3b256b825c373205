//! The var family: `PPB_Var;1.0/1.1/1.2`, `PPB_VarArray;1.0`, `PPB_VarDictionary;1.0`,
//! `PPB_VarArrayBuffer;1.0`. The values live in the host ([`super::super::var::VarStore`]);
//! a var result goes to the hidden struct-result pointer, a var argument is read from the
//! pointer PNaCl passes in its place. These are thread-safe, as in Chrome.

use wasmtime::{AsContextMut, Caller, Linker};

use super::super::heap::Copy;
use super::super::var::PpVar;
use super::super::{lock, mem, state, PepperState};
use crate::host::Ctx;
use crate::write_memory;

/// Longest string `VarFromUtf8` takes (Chrome's limit was the IPC message size).
const MAX_STRING: u32 = 256 << 20;

/// Drops a reference on `v`, then frees the module copies of vars that are gone.
pub(crate) fn release(
    cx: impl AsContextMut<Data = Ctx>,
    s: &PepperState,
    v: PpVar,
) -> wasmtime::Result<()> {
    let vars = &mut *lock(&s.vars);
    let before = vars.live_count();
    vars.release(v);
    if vars.live_count() < before {
        let mut heap = lock(&s.heap);
        if !heap.is_empty() {
            heap.sweep(cx, vars)?;
        }
    }
    Ok(())
}

fn var_from_utf8(
    mut caller: Caller<'_, Ctx>,
    ret: i32,
    data: i32,
    len: i32,
) -> wasmtime::Result<()> {
    let s = state(&caller)?;
    let v = if (len as u32) > MAX_STRING {
        PpVar::Null
    } else {
        let bytes = crate::read_memory(&mut caller, data as u32, len as u32)?;
        lock(&s.vars).string_from_utf8(&bytes)
    };
    mem::write_var(&mut caller, ret as u32, v)
}

/// `VarToUtf8`: a pointer to the string's bytes in module memory (valid while the var
/// lives), its length at `len`; NULL and 0 for a var that is not a string.
fn var_to_utf8(mut caller: Caller<'_, Ctx>, var: i32, len: i32) -> wasmtime::Result<i32> {
    let s = state(&caller)?;
    let v = mem::read_var(&mut caller, var as u32)?;
    let text = match v {
        PpVar::String(_) => lock(&s.vars).string(v).map(|t| t.as_bytes().to_vec()),
        _ => None,
    };
    let (PpVar::String(id), Some(text)) = (v, text) else {
        mem::write_u32(&mut caller, len as u32, 0)?;
        return Ok(0);
    };
    let existing = lock(&s.heap).get(id);
    let addr = match existing {
        Some(c) => c.addr,
        None => {
            let size = text.len() as u32 + 1;
            let addr = lock(&s.heap).alloc(&mut caller, size)?;
            let mut b = text.clone();
            b.push(0);
            write_memory(&mut caller, addr, &b)?;
            lock(&s.heap).insert(
                id,
                Copy {
                    addr,
                    size,
                    buffer: false,
                },
            );
            addr
        }
    };
    mem::write_u32(&mut caller, len as u32, text.len() as u32)?;
    Ok(addr as i32)
}

fn link_var(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    for iface in ["PPB_Var;1.0", "PPB_Var;1.1", "PPB_Var;1.2"] {
        linker.func_wrap(
            iface,
            "AddRef",
            |mut caller: Caller<'_, Ctx>, var: i32| -> wasmtime::Result<()> {
                let s = state(&caller)?;
                let v = mem::read_var(&mut caller, var as u32)?;
                lock(&s.vars).add_ref(v);
                Ok(())
            },
        )?;
        linker.func_wrap(
            iface,
            "Release",
            |mut caller: Caller<'_, Ctx>, var: i32| -> wasmtime::Result<()> {
                let s = state(&caller)?;
                let v = mem::read_var(&mut caller, var as u32)?;
                release(&mut caller, &s, v)
            },
        )?;
        linker.func_wrap(iface, "VarToUtf8", var_to_utf8)?;
    }
    linker.func_wrap(
        "PPB_Var;1.0",
        "VarFromUtf8",
        |caller: Caller<'_, Ctx>, ret: i32, _module: i32, data: i32, len: i32| {
            var_from_utf8(caller, ret, data, len)
        },
    )?;
    for iface in ["PPB_Var;1.1", "PPB_Var;1.2"] {
        linker.func_wrap(iface, "VarFromUtf8", var_from_utf8)?;
    }
    linker.func_wrap(
        "PPB_Var;1.2",
        "VarToResource",
        |mut caller: Caller<'_, Ctx>, var: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            match mem::read_var(&mut caller, var as u32)? {
                // The caller gets a reference of its own.
                PpVar::Resource(r) if lock(&s.resources).add_ref(r) => Ok(r),
                _ => Ok(0),
            }
        },
    )?;
    linker.func_wrap(
        "PPB_Var;1.2",
        "VarFromResource",
        |mut caller: Caller<'_, Ctx>, ret: i32, res: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let v = if lock(&s.resources).get(res).is_some() {
                PpVar::Resource(res)
            } else {
                PpVar::Null
            };
            mem::write_var(&mut caller, ret as u32, v)
        },
    )?;
    Ok(())
}

fn link_array(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    const A: &str = "PPB_VarArray;1.0";
    linker.func_wrap(
        A,
        "Create",
        |mut caller: Caller<'_, Ctx>, ret: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let v = lock(&s.vars).array_create();
            mem::write_var(&mut caller, ret as u32, v)
        },
    )?;
    linker.func_wrap(
        A,
        "Get",
        |mut caller: Caller<'_, Ctx>, ret: i32, arr: i32, index: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let a = mem::read_var(&mut caller, arr as u32)?;
            let v = lock(&s.vars).array_get(a, index as u32);
            mem::write_var(&mut caller, ret as u32, v)
        },
    )?;
    linker.func_wrap(
        A,
        "Set",
        |mut caller: Caller<'_, Ctx>, arr: i32, index: i32, value: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let a = mem::read_var(&mut caller, arr as u32)?;
            let v = mem::read_var(&mut caller, value as u32)?;
            let ok = lock(&s.vars).array_set(a, index as u32, v);
            Ok(ok as i32)
        },
    )?;
    linker.func_wrap(
        A,
        "GetLength",
        |mut caller: Caller<'_, Ctx>, arr: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let a = mem::read_var(&mut caller, arr as u32)?;
            let n = lock(&s.vars).array_length(a);
            Ok(n as i32)
        },
    )?;
    linker.func_wrap(
        A,
        "SetLength",
        |mut caller: Caller<'_, Ctx>, arr: i32, len: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let a = mem::read_var(&mut caller, arr as u32)?;
            let ok = lock(&s.vars).array_set_length(a, len as u32);
            Ok(ok as i32)
        },
    )?;
    Ok(())
}

fn link_dictionary(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    const D: &str = "PPB_VarDictionary;1.0";
    linker.func_wrap(
        D,
        "Create",
        |mut caller: Caller<'_, Ctx>, ret: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let v = lock(&s.vars).dict_create();
            mem::write_var(&mut caller, ret as u32, v)
        },
    )?;
    linker.func_wrap(
        D,
        "Get",
        |mut caller: Caller<'_, Ctx>, ret: i32, dict: i32, key: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let d = mem::read_var(&mut caller, dict as u32)?;
            let k = mem::read_var(&mut caller, key as u32)?;
            let v = lock(&s.vars).dict_get(d, k);
            mem::write_var(&mut caller, ret as u32, v)
        },
    )?;
    linker.func_wrap(
        D,
        "Set",
        |mut caller: Caller<'_, Ctx>, dict: i32, key: i32, value: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let d = mem::read_var(&mut caller, dict as u32)?;
            let k = mem::read_var(&mut caller, key as u32)?;
            let v = mem::read_var(&mut caller, value as u32)?;
            let ok = lock(&s.vars).dict_set(d, k, v);
            Ok(ok as i32)
        },
    )?;
    linker.func_wrap(
        D,
        "Delete",
        |mut caller: Caller<'_, Ctx>, dict: i32, key: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let d = mem::read_var(&mut caller, dict as u32)?;
            let k = mem::read_var(&mut caller, key as u32)?;
            lock(&s.vars).dict_delete(d, k);
            Ok(())
        },
    )?;
    linker.func_wrap(
        D,
        "HasKey",
        |mut caller: Caller<'_, Ctx>, dict: i32, key: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let d = mem::read_var(&mut caller, dict as u32)?;
            let k = mem::read_var(&mut caller, key as u32)?;
            let has = lock(&s.vars).dict_has_key(d, k);
            Ok(has as i32)
        },
    )?;
    linker.func_wrap(
        D,
        "GetKeys",
        |mut caller: Caller<'_, Ctx>, ret: i32, dict: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let d = mem::read_var(&mut caller, dict as u32)?;
            let v = lock(&s.vars).dict_get_keys(d);
            mem::write_var(&mut caller, ret as u32, v)
        },
    )?;
    Ok(())
}

/// The app's view of array buffer `v`'s bytes: their copy in module memory, made on the
/// first `Map` (the copy then holds the bytes; see [`sync_buffers`]).
fn map(mut caller: Caller<'_, Ctx>, var: i32) -> wasmtime::Result<i32> {
    let s = state(&caller)?;
    let v = mem::read_var(&mut caller, var as u32)?;
    let PpVar::ArrayBuffer(id) = v else {
        return Ok(0);
    };
    if let Some(c) = lock(&s.heap).get(id) {
        return Ok(c.addr as i32);
    }
    let Some(bytes) = lock(&s.vars).array_buffer_bytes(v).map(|b| b.to_vec()) else {
        return Ok(0);
    };
    let size = (bytes.len() as u32).max(1);
    let addr = lock(&s.heap).alloc(&mut caller, size)?;
    write_memory(&mut caller, addr, &bytes)?;
    lock(&s.heap).insert(
        id,
        Copy {
            addr,
            size,
            buffer: true,
        },
    );
    Ok(addr as i32)
}

/// Copies the bytes of every mapped array buffer back from module memory, where the app
/// may have written them, before the host reads buffers (a message out).
pub(crate) fn sync_buffers(
    mut cx: impl AsContextMut<Data = Ctx>,
    s: &PepperState,
) -> wasmtime::Result<()> {
    let buffers = lock(&s.heap).buffers();
    for (id, c) in buffers {
        let v = PpVar::ArrayBuffer(id);
        let len = lock(&s.vars).array_buffer_byte_length(v);
        if let Some(len) = len {
            let bytes = crate::read_memory(&mut cx, c.addr, len)?;
            if let Some(b) = lock(&s.vars).array_buffer_bytes_mut(v) {
                b.clear();
                b.extend_from_slice(&bytes);
            }
        }
    }
    Ok(())
}

fn link_array_buffer(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    const B: &str = "PPB_VarArrayBuffer;1.0";
    linker.func_wrap(
        B,
        "Create",
        |mut caller: Caller<'_, Ctx>, ret: i32, size: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let v = lock(&s.vars).array_buffer_create(size as u32);
            mem::write_var(&mut caller, ret as u32, v)
        },
    )?;
    linker.func_wrap(
        B,
        "ByteLength",
        |mut caller: Caller<'_, Ctx>, var: i32, len: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let v = mem::read_var(&mut caller, var as u32)?;
            let n = lock(&s.vars).array_buffer_byte_length(v);
            match n {
                Some(n) => {
                    mem::write_u32(&mut caller, len as u32, n)?;
                    Ok(1)
                }
                None => Ok(0),
            }
        },
    )?;
    linker.func_wrap(B, "Map", map)?;
    // The copy stays where it is until the var goes (Chrome's Unmap also left the
    // memory to the buffer; a later Map may return the same address).
    linker.func_wrap(B, "Unmap", |_caller: Caller<'_, Ctx>, _var: i32| {})?;
    Ok(())
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_var(linker)?;
    link_array(linker)?;
    link_dictionary(linker)?;
    link_array_buffer(linker)
}
