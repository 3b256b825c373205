//! The PPB interfaces of the command-line host, one file per family: where each Pepper
//! call is answered. Each function is one import (module = the interface string, name =
//! the function), with the description's PNaCl/wasm signature (`pexe2wasm-ppapi`; a test
//! checks every one, `tests/it/pepper_host.rs`).

use wasmtime::Linker;

use crate::host::Ctx;

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
