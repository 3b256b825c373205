//! The PPB interfaces of the command-line host, one file per family: where each Pepper
//! call is answered. Each function is one import (module = the interface string, name =
//! the function), with the description's PNaCl/wasm signature (`pexe2wasm-ppapi`; a test
//! checks every one, `tests/it/pepper_host.rs`). What several families register the same
//! way (`Create`, `Is*`, the checks on entering a call with a callback) is here.

use std::sync::Arc;

use wasmtime::{Caller, Linker, WasmRet};

use super::mem::{self, Callback};
use super::resources::{Resource, Resources};
use super::{callback_error, lock, pp_error, state, PepperState, INSTANCE};
use crate::host::Ctx;

/// [`enter`]'s checks, or a return from the host function with what the call returns
/// when they fail: `let (s, cb, x) = enter_or_return!(caller, res, cb, find, answer);`.
macro_rules! enter_or_return {
    ($caller:expr, $res:expr, $cb:expr, $find:expr, $answer:expr) => {
        match super::enter($caller, $res, $cb, $find, $answer)? {
            Ok(v) => v,
            Err(r) => return Ok(r),
        }
    };
}

mod core;
mod files;
mod graphics_2d;
mod image_data;
mod input;
mod message_loop;
mod messaging;
mod net;
mod tcp;
mod udp;
mod url;
mod var;
mod view;
mod websocket;

/// The interfaces this host offers (`PPB_GetInterface` answers NULL for the rest): the
/// description crate's list for this host (`pexe2wasm_ppapi::hosts::CLI`).
pub const OFFERED: &[&str] = pexe2wasm_ppapi::hosts::CLI;

/// Links `name(arg) -> R` of `iface`, a call answered from the state alone:
/// `answer(state, arg)`.
fn link_query<R: WasmRet + 'static>(
    linker: &mut Linker<Ctx>,
    iface: &'static str,
    name: &'static str,
    answer: impl Fn(&PepperState, i32) -> R + Send + Sync + 'static,
) -> wasmtime::Result<()> {
    linker.func_wrap(
        iface,
        name,
        move |caller: Caller<'_, Ctx>, arg: i32| -> wasmtime::Result<R> {
            Ok(answer(&*state(&caller)?, arg))
        },
    )?;
    Ok(())
}

/// What `f` reads from resource `res` when `kind` (`Resources::view`, …) finds it there:
/// `None` for a resource of another kind.
fn read_resource<T, R>(
    caller: &Caller<'_, Ctx>,
    res: i32,
    kind: fn(&Resources, i32) -> Option<&T>,
    f: impl FnOnce(&T) -> R,
) -> wasmtime::Result<Option<R>> {
    let s = state(caller)?;
    let r = lock(&s.resources);
    Ok(kind(&r, res).map(f))
}

/// Links `Create(instance) -> PP_Resource` of `iface`: a new resource `make` makes (the
/// caller's reference), 0 for an instance that is not ours.
fn link_create(
    linker: &mut Linker<Ctx>,
    iface: &'static str,
    make: impl Fn() -> Resource + Send + Sync + 'static,
) -> wasmtime::Result<()> {
    link_query(linker, iface, "Create", move |s, instance| {
        if instance != INSTANCE {
            return 0;
        }
        s.resources().add(make())
    })
}

/// Links `name(resource) -> PP_Bool` of `iface`: whether the resource is one `is` accepts.
fn link_is(
    linker: &mut Linker<Ctx>,
    iface: &'static str,
    name: &'static str,
    is: fn(&Resource) -> bool,
) -> wasmtime::Result<()> {
    link_query(linker, iface, name, move |s, res| {
        s.resources().get(res).is_some_and(is) as i32
    })
}

/// How a call that ends at once answers through its callback: [`super::answer_now`], or
/// the socket families' `net::finish_now`.
type Answer = fn(&mut Caller<'_, Ctx>, Callback, i32) -> wasmtime::Result<i32>;

/// What [`enter`] found: the state, the callback and the resource; or what the call
/// returns.
type Entered<T> = Result<(Arc<PepperState>, Callback, T), i32>;

/// Chrome's checks on entering a call on resource `res` that takes the completion
/// callback at `cb` (ppapi/thunk/enter.cc): the callback errors ([`callback_error`]),
/// then the resource `find` finds. A bad resource wins: `PP_ERROR_BADRESOURCE` through
/// `answer`, or returned at once when the callback was refused as well (Chrome dropped
/// the refused callback, then reported the resource). `Ok(Err(r))`: the call returns `r`.
fn enter<T>(
    caller: &mut Caller<'_, Ctx>,
    res: i32,
    cb: i32,
    find: impl FnOnce(&PepperState, i32) -> Option<T>,
    answer: Answer,
) -> wasmtime::Result<Entered<T>> {
    let s = state(caller)?;
    let cb = mem::read_callback(&mut *caller, cb as u32)?;
    let refused = callback_error(caller, &cb);
    match (find(&s, res), refused) {
        (Some(_), Some(e)) => Ok(Err(e)),
        (Some(x), None) => Ok(Ok((s, cb, x))),
        (None, Some(_)) => Ok(Err(pp_error::BADRESOURCE)),
        (None, None) => answer(caller, cb, pp_error::BADRESOURCE).map(Err),
    }
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    core::link(linker)?;
    var::link(linker)?;
    messaging::link(linker)?;
    message_loop::link(linker)?;
    view::link(linker)?;
    input::link(linker)?;
    url::link(linker)?;
    files::link(linker)?;
    image_data::link(linker)?;
    graphics_2d::link(linker)?;
    net::link(linker)?;
    tcp::link(linker)?;
    udp::link(linker)?;
    websocket::link(linker)?;
    Ok(())
}
