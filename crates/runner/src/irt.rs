//! The NaCl IRT's host side: the first [`Host`] of every program.
//!
//! The runtime linked into every converted module (`irt.wat`) implements the IRT over
//! WASI preview 1; what it imports from the host is WASI itself, and for threaded modules
//! wasi-threads' `thread-spawn` and `pexe2wasm`.`thread_exit`.

use wasmtime::{Caller, Linker};
use wasmtime_wasi::p1;
use wasmtime_wasi::I32Exit;

use crate::fastwrite;
use crate::host::{Ctx, Host};
use crate::RunOptions;
use pexe2wasm::runtime;

/// The error `pexe2wasm`.`thread_exit` unwinds its thread with; the runner counts it as a
/// normal end of the thread.
#[derive(Debug, thiserror::Error)]
#[error("thread exited")]
pub(crate) struct ThreadExit;

/// WASI preview 1 (with `proc_exit` replaced so that every status reaches the caller:
/// wasmtime-wasi turns statuses of 126 and above into an error, and `fd_write`,
/// `fd_close` and `fd_renumber` in front of wasmtime-wasi's for the fast path to
/// standard output and error, `fastwrite.rs`), `wasi`.`thread-spawn`
/// (a new module thread, see [`crate::Process::spawn_module_thread`]) and
/// `pexe2wasm`.`thread_exit`.
#[derive(Debug, Clone, Copy, Default)]
pub struct IrtHost;

impl Host for IrtHost {
    type State = ();

    fn name(&self) -> &str {
        "nacl-irt"
    }

    fn link(&self, linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
        p1::add_to_linker_sync(linker, |cx: &mut Ctx| cx.wasi())?;
        linker.allow_shadowing(true);
        linker.func_wrap(
            runtime::WASI,
            "proc_exit",
            |_caller: Caller<'_, Ctx>, status: i32| -> wasmtime::Result<()> {
                Err(I32Exit(status).into())
            },
        )?;
        // Standard output and error without wasmtime-wasi's per-call cost (`fastwrite.rs`);
        // everything else goes to wasmtime-wasi's own implementation.
        linker.func_wrap(runtime::WASI, "fd_write", fastwrite::fd_write)?;
        linker.func_wrap(runtime::WASI, "fd_close", fastwrite::fd_close)?;
        linker.func_wrap(runtime::WASI, "fd_renumber", fastwrite::fd_renumber)?;
        linker.allow_shadowing(false);
        linker.func_wrap(
            runtime::WASI_THREADS,
            runtime::THREAD_SPAWN,
            |caller: Caller<'_, Ctx>, arg: i32| -> i32 {
                match caller.data().process() {
                    Some(p) => p.spawn_module_thread(arg).unwrap_or(-1),
                    None => -1,
                }
            },
        )?;
        linker.func_wrap(
            runtime::HOST,
            runtime::HOST_CPU_COUNT,
            |_caller: Caller<'_, Ctx>| -> i32 { cpu_count() },
        )?;
        linker.func_wrap(
            runtime::HOST,
            runtime::HOST_THREAD_EXIT,
            |_caller: Caller<'_, Ctx>| -> wasmtime::Result<()> {
                Err(wasmtime::Error::new(ThreadExit))
            },
        )?;
        Ok(())
    }

    fn new_state(&self, _opts: &RunOptions) -> wasmtime::Result<()> {
        Ok(())
    }
}

/// The processors this machine offers the process (at least 1), for the threaded
/// runtime's `pexe2wasm`.`cpu_count`: what `sysconf(_SC_NPROCESSORS_ONLN)` answered under
/// NaCl.
pub fn cpu_count() -> i32 {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(i32::MAX as usize) as i32)
}

/// Whether the module is threaded: it imports wasi-threads' `thread-spawn`. (An invalid
/// module answers false and fails to compile later.)
pub fn imports_thread_spawn(wasm: &[u8]) -> bool {
    imports_any(wasm, |module, name| {
        module == runtime::WASI_THREADS && name == runtime::THREAD_SPAWN
    })
}

/// Whether the module imports anything from `module` (e.g. the Pepper runtime's host
/// interface, `pexe2wasm_ppapi`). An invalid module answers false.
pub fn imports_module(wasm: &[u8], module: &str) -> bool {
    imports_any(wasm, |m, _| m == module)
}

/// Whether some import (module, name) of `wasm` satisfies `pred`, read from the import
/// section alone.
fn imports_any(wasm: &[u8], pred: impl Fn(&str, &str) -> bool) -> bool {
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload {
            Ok(wasmparser::Payload::ImportSection(r)) => {
                return r
                    .into_imports()
                    .any(|i| i.is_ok_and(|i| pred(i.module, i.name)));
            }
            Ok(wasmparser::Payload::CodeSectionStart { .. }) | Err(_) => return false,
            _ => {}
        }
    }
    false
}
