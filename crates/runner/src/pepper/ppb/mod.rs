//! The PPB interfaces of the command-line host, one file per family: where each Pepper
//! call is answered. Each function is one import (module = the interface string, name =
//! the function), with the description's PNaCl/wasm signature (`pexe2wasm-ppapi`; a test
//! checks every one, `tests/it/pepper_host.rs`). What several families register the same
//! way (`Create`, `Is*`) is here; the common entry check of a call on a resource with a
//! completion callback, generated from the description, is `entry.rs`.

use wasmtime::{Caller, Linker, WasmRet};

use super::resources::{Resource, Resources};
use super::{lock, state, PepperState, INSTANCE};
use crate::host::Ctx;

mod core;
mod entry;
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

pub use entry::entered_calls;
use entry::{link_entered, Entered, Kind};

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
