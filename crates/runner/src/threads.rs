//! Running a threaded module (one that imports `wasi`.`thread-spawn`): wasi-threads
//! implemented here, since wasmtime 47+ no longer ships it.
//!
//! Every thread is an instance of the same module in a store of its own, on an OS thread of
//! its own, over the one shared memory (the module's `env`.`memory` import). Each store has
//! its own WASI preview 1 context built from the same [`RunOptions`] (same arguments,
//! environment, preopened directories and standard streams; file descriptors opened later
//! are per thread). The run ends at the first of: `exit()` (`proc_exit`) in any thread, the
//! end of the last thread, a trap in any thread, or the time limit. Threads still running
//! then are stopped by epoch interruption; threads blocked in `memory.atomic.wait32` stay
//! parked until the process ends (the CLI exits at once).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Instant;

use wasmtime::{
    Caller, Engine, ExternType, InstancePre, Linker, Module, SharedMemory, Store, WasmBacktrace,
};
use wasmtime_wasi::p1::{self, WasiP1Ctx};
use wasmtime_wasi::I32Exit;

use super::{ended, wasi_ctx_with, CapturedStreams, RunError, RunOptions, RunOutcome};
use pexe2wasm::runtime;

/// The error `pexe2wasm`.`thread_exit` unwinds its thread with.
#[derive(Debug)]
struct ThreadExit;

impl std::fmt::Display for ThreadExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("thread exited")
    }
}

impl std::error::Error for ThreadExit {}

/// Whether the module needs [`run_threaded`]: it imports wasi-threads' `thread-spawn`.
/// (An invalid module answers false and fails to compile later.)
pub fn imports_thread_spawn(wasm: &[u8]) -> bool {
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload {
            Ok(wasmparser::Payload::ImportSection(r)) => {
                return r.into_imports().any(|i| {
                    i.is_ok_and(|i| {
                        i.module == runtime::WASI_THREADS && i.name == runtime::THREAD_SPAWN
                    })
                });
            }
            Ok(wasmparser::Payload::CodeSectionStart { .. }) | Err(_) => return false,
            _ => {}
        }
    }
    false
}

/// A store's data: its WASI context and the run it belongs to.
struct Ctx {
    wasi: WasiP1Ctx,
    run: Weak<Run>,
}

/// How the run ended (the first ending wins).
enum Ending {
    Exit(i32),
    /// A thread ended with an error (a trap, a host failure): thread id (0 = main).
    Failed(i32, wasmtime::Error),
    Timeout,
}

/// What every thread of one run shares.
struct Run {
    engine: Engine,
    pre: InstancePre<Ctx>,
    opts: RunOptions,
    streams: CapturedStreams,
    next_tid: AtomicI32,
    live: AtomicUsize,
    stopping: AtomicBool,
    ending: Mutex<Option<Ending>>,
    ended: Condvar,
}

impl Run {
    /// Records how the run ended (unless it already had) and stops every running thread.
    fn finish(&self, e: Ending) {
        let mut ending = self.ending.lock().unwrap_or_else(|p| p.into_inner());
        if ending.is_none() {
            *ending = Some(e);
        }
        self.stopping.store(true, Ordering::SeqCst);
        self.engine.increment_epoch();
        self.ended.notify_all();
    }

    /// A thread ended; the last one ends the run (status 0).
    fn thread_done(&self) {
        if self.live.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.finish(Ending::Exit(0));
        }
    }

    fn new_store(self: &Arc<Self>) -> Result<Store<Ctx>, RunError> {
        let wasi = wasi_ctx_with(&self.opts, &self.streams)?;
        let mut store = Store::new(
            &self.engine,
            Ctx {
                wasi,
                run: Arc::downgrade(self),
            },
        );
        store.set_epoch_deadline(1);
        Ok(store)
    }

    /// Sorts out what the end of thread `tid`'s entry call (0: `_start`) means for the run.
    fn settle(&self, tid: i32, r: wasmtime::Result<()>) {
        match r {
            // Returning from `_start` ends a WASI command (the runtime's calls proc_exit).
            Ok(()) if tid == 0 => self.finish(Ending::Exit(0)),
            Ok(()) => self.thread_done(),
            Err(e) if e.downcast_ref::<ThreadExit>().is_some() => self.thread_done(),
            Err(e) => {
                if let Some(exit) = e.downcast_ref::<I32Exit>() {
                    self.finish(Ending::Exit(exit.0));
                } else if !self.stopping.load(Ordering::SeqCst) {
                    self.finish(Ending::Failed(tid, e));
                }
            }
        }
    }

    /// `thread-spawn(arg)`: a new thread running `wasi_thread_start(tid, arg)`; the tid, or
    /// -1 when the run is ending or the OS refuses a thread.
    fn spawn(self: &Arc<Self>, arg: i32) -> i32 {
        if self.stopping.load(Ordering::SeqCst) {
            return -1;
        }
        let tid = self.next_tid.fetch_add(1, Ordering::SeqCst);
        if tid <= 0 {
            return -1;
        }
        self.live.fetch_add(1, Ordering::SeqCst);
        let run = self.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("wasm thread {tid}"))
            .spawn(move || {
                let r = (|| -> wasmtime::Result<()> {
                    let mut store = run
                        .new_store()
                        .map_err(|e| wasmtime::Error::msg(e.to_string()))?;
                    let instance = run.pre.instantiate(&mut store)?;
                    let start = instance.get_typed_func::<(i32, i32), ()>(
                        &mut store,
                        runtime::EXPORT_THREAD_START,
                    )?;
                    start.call(&mut store, (tid, arg))
                })();
                run.settle(tid, r);
            });
        match spawned {
            Ok(_) => tid,
            Err(_) => {
                self.live.fetch_sub(1, Ordering::SeqCst);
                -1
            }
        }
    }
}

/// Runs a threaded module to its end (see the module documentation). `engine` must have
/// epoch interruption enabled.
pub fn run_threaded(
    engine: &Engine,
    module: &Module,
    opts: &RunOptions,
) -> Result<RunOutcome, RunError> {
    let setup = |e: wasmtime::Error| RunError::Instantiate(format!("{e:#}"));
    let mut linker: Linker<Ctx> = Linker::new(engine);
    p1::add_to_linker_sync(&mut linker, |cx: &mut Ctx| &mut cx.wasi)
        .map_err(|e| RunError::Engine(format!("{e:#}")))?;
    linker.allow_shadowing(true);
    linker
        .func_wrap(
            runtime::WASI,
            "proc_exit",
            |_caller: Caller<'_, Ctx>, status: i32| -> wasmtime::Result<()> {
                Err(I32Exit(status).into())
            },
        )
        .map_err(setup)?;
    linker.allow_shadowing(false);
    linker
        .func_wrap(
            runtime::WASI_THREADS,
            runtime::THREAD_SPAWN,
            |caller: Caller<'_, Ctx>, arg: i32| -> i32 {
                match caller.data().run.upgrade() {
                    Some(run) => run.spawn(arg),
                    None => -1,
                }
            },
        )
        .map_err(setup)?;
    linker
        .func_wrap(
            runtime::HOST,
            runtime::HOST_THREAD_EXIT,
            |_caller: Caller<'_, Ctx>| -> wasmtime::Result<()> {
                Err(wasmtime::Error::new(ThreadExit))
            },
        )
        .map_err(setup)?;

    // The shared memory, made from the module's import.
    let memory_type = module
        .imports()
        .find(|i| i.module() == runtime::ENV && i.name() == runtime::ENV_MEMORY)
        .and_then(|i| match i.ty() {
            ExternType::Memory(m) if m.is_shared() => Some(m),
            _ => None,
        })
        .ok_or_else(|| {
            RunError::Instantiate(
                "a threaded module must import a shared memory as env.memory".into(),
            )
        })?;
    let memory = SharedMemory::new(engine, memory_type).map_err(setup)?;

    // Defining the memory takes a store; the memory itself belongs to the engine.
    let placeholder = Store::new(
        engine,
        Ctx {
            wasi: wasmtime_wasi::WasiCtxBuilder::new().build_p1(),
            run: Weak::new(),
        },
    );
    linker
        .define(&placeholder, runtime::ENV, runtime::ENV_MEMORY, memory)
        .map_err(setup)?;
    drop(placeholder);
    let pre = linker.instantiate_pre(module).map_err(setup)?;

    let run = Arc::new(Run {
        engine: engine.clone(),
        pre,
        opts: opts.clone(),
        streams: CapturedStreams::new(opts),
        next_tid: AtomicI32::new(1),
        live: AtomicUsize::new(1),
        stopping: AtomicBool::new(false),
        ending: Mutex::new(None),
        ended: Condvar::new(),
    });

    // The main thread runs `_start` on an OS thread of its own, so that this one can wait
    // for whichever thread ends the run. Its store and instance are made here, so setup
    // errors are reported as such.
    let mut store = run.new_store()?;
    let instance = run
        .pre
        .instantiate(&mut store)
        .map_err(|e| RunError::Instantiate(format!("{e:#}")))?;
    let start = instance
        .get_typed_func::<(), ()>(&mut store, runtime::EXPORT_START)
        .map_err(|_| RunError::NoStart)?;
    let main_run = run.clone();
    std::thread::Builder::new()
        .name("wasm main thread".into())
        .spawn(move || {
            let r = start.call(&mut store, ());
            main_run.settle(0, r);
        })
        .map_err(|e| RunError::Host(format!("cannot start the main thread: {e}")))?;

    let deadline = opts.timeout.map(|t| Instant::now() + t);
    let mut ending = run.ending.lock().unwrap_or_else(|p| p.into_inner());
    while ending.is_none() {
        match deadline {
            None => ending = run.ended.wait(ending).unwrap_or_else(|p| p.into_inner()),
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    drop(ending);
                    run.finish(Ending::Timeout);
                    ending = run.ending.lock().unwrap_or_else(|p| p.into_inner());
                    continue;
                }
                ending = run
                    .ended
                    .wait_timeout(ending, d - now)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
    }
    let what = ending.take();
    drop(ending);
    let (stdout, stderr) = run.streams.contents();
    match what {
        Some(Ending::Exit(code)) => Ok(RunOutcome {
            exit_code: code,
            stdout,
            stderr,
        }),
        Some(Ending::Timeout) | None => Err(RunError::Timeout(opts.timeout.unwrap_or_default())),
        Some(Ending::Failed(tid, e)) => {
            let function = e
                .downcast_ref::<WasmBacktrace>()
                .and_then(|bt| bt.frames().first().and_then(|f| f.func_name()))
                .map(str::to_string);
            let who = if tid == 0 {
                "the main thread".to_string()
            } else {
                format!("thread {tid}")
            };
            match ended(e, None, stdout, stderr) {
                Err(RunError::Trap(mut t)) => {
                    t.message = match function {
                        Some(f) => format!("{} (in {who}, function {f})", t.message),
                        None => format!("{} (in {who})", t.message),
                    };
                    Err(RunError::Trap(t))
                }
                Err(RunError::Host(m)) => Err(RunError::Host(format!("{who}: {m}"))),
                other => other,
            }
        }
    }
}
