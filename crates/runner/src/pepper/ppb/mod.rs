//! The PPB interfaces of the command-line host, one file per family: where each Pepper
//! call is answered. Each function is one import (module = the interface string, name =
//! the function), with the description's PNaCl/wasm signature (`pexe2wasm-ppapi`; a test
//! checks every one, `tests/it/pepper_host.rs`).

use wasmtime::Linker;

use crate::host::Ctx;

mod core;
mod input;
mod message_loop;
mod messaging;
mod var;
mod view;

/// The interfaces this host offers (`PPB_GetInterface` answers NULL for the rest).
pub const OFFERED: &[&str] = &[
    "PPB_Core;1.0",
    "PPB_Var;1.0",
    "PPB_Var;1.1",
    "PPB_Var;1.2",
    "PPB_VarArray;1.0",
    "PPB_VarDictionary;1.0",
    "PPB_VarArrayBuffer;1.0",
    "PPB_Messaging;1.0",
    "PPB_Messaging;1.2",
    "PPB_Console;1.0",
    "PPB_MessageLoop;1.0",
    "PPB_View;1.0",
    "PPB_View;1.1",
    "PPB_View;1.2",
    "PPB_Instance;1.0",
    "PPB_InputEvent;1.0",
];

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    core::link(linker)?;
    var::link(linker)?;
    messaging::link(linker)?;
    message_loop::link(linker)?;
    view::link(linker)?;
    input::link(linker)?;
    Ok(())
}
