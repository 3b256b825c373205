//! Calls into the module (PPP functions, completion callbacks) through the Pepper
//! runtime's entry points (docs/PEPPER-ABI.md): `__ppp_call_*` for scalar arguments,
//! `__ppp_callbuf_*` for arguments that point at structs or strings. For the latter the
//! runtime reserves the space on the calling thread's own stack and asks the host to fill
//! it (`pexe2wasm_ppapi.fill`) and, after the call, to read it back
//! (`pexe2wasm_ppapi.done`); the bytes come from the closures pushed here, one frame per
//! call (calls nest: a PPP call may make PPB calls that call into the module again).

use std::cell::RefCell;

use wasmtime::{AsContextMut, Caller, WasmParams, WasmResults};

use crate::host::Ctx;
use crate::{call_export, read_memory, write_memory};

/// What fills a reserved space, given its address (so it can hold pointers into itself).
pub type Fill = Box<dyn FnOnce(u32) -> Vec<u8>>;
/// What reads the space back after the call.
pub type Done = Box<dyn FnOnce(Vec<u8>)>;

struct Frame {
    fill: Option<Fill>,
    done: Option<Done>,
}

thread_local! {
    // A store never leaves its OS thread, so the frames of one thread's calls are its own.
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Calls the module's PPP entry `export` (a `__ppp_callbuf_*`) with `params`, whose first
/// three are the function pointer, the size of the space and the mask of arguments that
/// are offsets into it.
pub fn call_with_buffer<P, R>(
    cx: impl AsContextMut<Data = Ctx>,
    export: &str,
    params: P,
    fill: Fill,
    done: Option<Done>,
) -> wasmtime::Result<R>
where
    P: WasmParams,
    R: WasmResults,
{
    let depth = FRAMES.with(|f| {
        let mut f = f.borrow_mut();
        f.push(Frame {
            fill: Some(fill),
            done,
        });
        f.len() - 1
    });
    let r = call_export::<P, R>(cx, export, params);
    // A call that trapped left its frame.
    FRAMES.with(|f| f.borrow_mut().truncate(depth));
    r
}

/// `pexe2wasm_ppapi.fill(ptr, n)`.
pub fn fill(mut caller: Caller<'_, Ctx>, ptr: i32, n: i32) -> wasmtime::Result<()> {
    let fill = FRAMES.with(|f| f.borrow_mut().last_mut().and_then(|fr| fr.fill.take()));
    let Some(fill) = fill else {
        return Err(wasmtime::Error::msg(
            "pexe2wasm_ppapi.fill called outside a PPP call",
        ));
    };
    let mut bytes = fill(ptr as u32);
    bytes.truncate(n.max(0) as usize);
    write_memory(&mut caller, ptr as u32, &bytes)
}

/// `pexe2wasm_ppapi.done(ptr, n)`.
pub fn done(mut caller: Caller<'_, Ctx>, ptr: i32, n: i32) -> wasmtime::Result<()> {
    let frame = FRAMES.with(|f| f.borrow_mut().pop());
    match frame {
        Some(Frame {
            done: Some(done), ..
        }) => {
            let bytes = read_memory(&mut caller, ptr as u32, n.max(0) as u32)?;
            done(bytes);
            Ok(())
        }
        Some(_) => Ok(()),
        None => Err(wasmtime::Error::msg(
            "pexe2wasm_ppapi.done called outside a PPP call",
        )),
    }
}

/// Calls a completion callback `func(user_data, result)` on this thread.
pub fn run_callback(
    cx: impl AsContextMut<Data = Ctx>,
    func: u32,
    user_data: u32,
    result: i32,
) -> wasmtime::Result<()> {
    call_export::<(i32, i32, i32), ()>(
        cx,
        "__ppp_call_ii_v",
        (func as i32, user_data as i32, result),
    )
}

/// Asks the app's `PPP_GetInterface` (`get_interface`) for `name`: its table's address, or 0.
pub fn get_ppp_interface(
    cx: impl AsContextMut<Data = Ctx>,
    get_interface: u32,
    name: &str,
) -> wasmtime::Result<u32> {
    let mut bytes = name.as_bytes().to_vec();
    bytes.push(0);
    let n = bytes.len() as i32;
    let r: i32 = call_with_buffer(
        cx,
        "__ppp_callbuf_i_i",
        (get_interface as i32, n, 1, 0),
        Box::new(move |_| bytes),
        None,
    )?;
    Ok(r as u32)
}
