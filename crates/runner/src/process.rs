//! One run of a program: its threads, how it ends, and what the hosts share.
//!
//! Every thread is an instance of the module in a store of its own ([`Ctx`]), on an OS
//! thread of its own; threads of a threaded module share the one memory (the module's
//! `env`.`memory` import, made here). Each store has its own WASI preview 1 context built
//! from the same [`RunOptions`] (same arguments, environment, preopened directories and
//! standard streams; file descriptors opened later are per thread). The run ends at the
//! first of: `exit()` (`proc_exit`) in any thread, the end of the last thread, a trap in
//! any thread, or the time limit. Threads still running then are stopped by epoch
//! interruption, threads in [`crate::run_loop`] by closing their mailboxes, hosts by
//! [`crate::Host::stopping`]; threads blocked in `memory.atomic.wait32` stay parked until
//! the process ends (the CLI exits at once).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use wasmtime::{
    AsContextMut, Engine, ExternType, InstancePre, Linker, SharedMemory, Store, StoreContextMut,
    WasmBacktrace,
};
use wasmtime_wasi::I32Exit;

use crate::guest::call_export;
use crate::host::{Ctx, HostStates, ThreadInfo, ThreadKind};
use crate::irt::ThreadExit;
use crate::mailbox::Mailbox;
use crate::{ended, wasi_ctx_with, CapturedStreams, Program, RunError, RunOptions, RunOutcome};
use pexe2wasm::runtime;

/// How the run ended (the first ending wins), and whether the hosts know.
#[derive(Default)]
struct End {
    ending: Option<Ending>,
    told: bool,
}

/// Whether a thread's entry call ended by a fault of the program (a trap, an uncaught
/// longjmp), not by `exit()` or the end of the thread.
fn ended_by_fault(e: &wasmtime::Error) -> bool {
    !e.is::<ThreadExit>() && e.downcast_ref::<I32Exit>().is_none()
}

/// How the run ended.
enum Ending {
    Exit(i32),
    /// A thread ended with an error (a trap, a host failure): thread id (0 = main).
    Failed(i32, wasmtime::Error),
    Timeout,
}

/// Why a thread could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The module is not threaded: a new instance would not share its memory.
    #[error("the module is not threaded (it does not import wasi-threads' thread-spawn)")]
    NotThreaded,
    /// The run is ending.
    #[error("the program is ending")]
    Stopping,
    /// Thread ids are used up.
    #[error("no thread ids left")]
    NoIds,
    /// The program has as many threads as it may ([`crate::RunOptions::max_threads`]).
    #[error("the program already has {0} threads, its limit")]
    TooMany(usize),
    /// The OS refused a thread.
    #[error("cannot start a thread: {0}")]
    Os(#[from] std::io::Error),
}

/// What every thread of one run shares; hosts reach it through [`Ctx::process`].
pub struct Process {
    engine: Engine,
    pre: InstancePre<Ctx>,
    opts: RunOptions,
    streams: CapturedStreams,
    hosts: Arc<HostStates>,
    threaded: bool,
    interruptible: bool,
    next_tid: AtomicI32,
    live: AtomicUsize,
    stopping: AtomicBool,
    ending: Mutex<End>,
    ended: Condvar,
    /// The mailboxes of the threads running now.
    threads: Mutex<HashMap<i32, Arc<Mailbox>>>,
}

/// A thread's entry: what it runs in its own store once instantiated.
type Entry = Box<dyn for<'a> FnOnce(StoreContextMut<'a, Ctx>) -> wasmtime::Result<()> + Send>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Process {
    /// Links the program's hosts (one linker for every thread) and makes their states.
    pub(crate) fn new(program: &Program, opts: &RunOptions) -> Result<Arc<Process>, RunError> {
        let engine = &program.engine;
        let setup = |e: wasmtime::Error| RunError::Instantiate(format!("{e:#}"));
        let mut linker: Linker<Ctx> = Linker::new(engine);
        for host in &program.hosts {
            host.link(&mut linker)
                .map_err(|e| RunError::Instantiate(format!("host {}: {e:#}", host.name())))?;
        }
        for host in &program.hosts {
            host.link_module(&mut linker, &program.module)
                .map_err(|e| RunError::Instantiate(format!("host {}: {e:#}", host.name())))?;
        }
        if program.threaded {
            // The shared memory, made from the module's import.
            let memory_type = program
                .module
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
                Ctx::standalone(wasmtime_wasi::WasiCtxBuilder::new().build_p1()),
            );
            linker
                .define(&placeholder, runtime::ENV, runtime::ENV_MEMORY, memory)
                .map_err(setup)?;
        }
        let pre = linker.instantiate_pre(&program.module).map_err(setup)?;
        let hosts = Arc::new(HostStates::new(&program.hosts, opts)?);
        Ok(Arc::new(Process {
            engine: engine.clone(),
            pre,
            opts: opts.clone(),
            streams: CapturedStreams::new(opts),
            hosts,
            threaded: program.threaded,
            interruptible: program.interruptible,
            next_tid: AtomicI32::new(1),
            live: AtomicUsize::new(1),
            stopping: AtomicBool::new(false),
            ending: Mutex::default(),
            ended: Condvar::new(),
            threads: Mutex::default(),
        }))
    }

    /// The options the program runs with.
    pub fn options(&self) -> &RunOptions {
        &self.opts
    }

    /// Whether the module is threaded (threads may be spawned).
    pub fn is_threaded(&self) -> bool {
        self.threaded
    }

    /// Whether the run is ending: hosts' loops should return.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// The mailbox of running thread `tid` (0: the main thread).
    pub fn mailbox(&self, tid: i32) -> Result<Arc<Mailbox>, crate::PostError> {
        lock(&self.threads)
            .get(&tid)
            .cloned()
            .ok_or(crate::PostError::NoThread(tid))
    }

    /// Ends the run with `status`, as `exit(status)` in a thread would.
    pub fn exit(&self, status: i32) {
        self.finish(Ending::Exit(status));
    }

    /// Records how the run ended (unless it already had) and stops every running thread;
    /// the run's caller returns once the hosts have been told.
    fn finish(&self, e: Ending) {
        let first = {
            let mut end = lock(&self.ending);
            let first = end.ending.is_none();
            if first {
                end.ending = Some(e);
            }
            first
        };
        self.stopping.store(true, Ordering::SeqCst);
        self.engine.increment_epoch();
        if first {
            // Whatever the program wrote before its end reaches the host's stdout.
            self.streams.finish_stdout();
            for m in lock(&self.threads).values() {
                m.close();
            }
            self.hosts.stopping();
            lock(&self.ending).told = true;
            self.ended.notify_all();
        }
    }

    /// A thread ended; the last one ends the run (status 0).
    fn thread_done(&self) {
        if self.live.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.finish(Ending::Exit(0));
        }
    }

    fn new_store(self: &Arc<Self>, thread: ThreadInfo) -> Result<Store<Ctx>, RunError> {
        let wasi = wasi_ctx_with(&self.opts, &self.streams)?;
        let mut ctx = Ctx::new(wasi, thread, Arc::downgrade(self), self.hosts.clone());
        ctx.set_stdio_sinks(self.streams.std_sinks(&self.opts));
        let mut store = Store::new(&self.engine, ctx);
        if self.interruptible {
            store.set_epoch_deadline(1);
        }
        Ok(store)
    }

    /// A store for `thread` with the module instantiated in it.
    fn instantiate(self: &Arc<Self>, thread: ThreadInfo) -> Result<Store<Ctx>, RunError> {
        let mut store = self.new_store(thread)?;
        let instance = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| RunError::Instantiate(format!("{e:#}")))?;
        store.data_mut().set_instance(instance);
        Ok(store)
    }

    /// Runs `entry` as thread `store`'s whole life, on the calling OS thread: its mailbox
    /// is reachable meanwhile, hosts hear of its start and end, and its result is settled.
    fn run_thread(self: &Arc<Self>, mut store: Store<Ctx>, entry: Entry) {
        let thread = store.data().thread();
        let mailbox = store.data().mailbox().clone();
        lock(&self.threads).insert(thread.tid, mailbox.clone());
        // A run that ended before the thread registered would not have closed it.
        if self.is_stopping() {
            mailbox.close();
        }
        self.hosts.thread_started(&thread);
        let r = entry(store.as_context_mut());
        if r.as_ref().is_err_and(ended_by_fault) && !self.is_stopping() {
            // The runtime's standard output buffer is still in the module: write it out, so
            // a trap loses nothing the program wrote (docs/RUNTIME-ABI.md, "Standard
            // output"). A module without the export has no buffer.
            let _ = call_export::<(), ()>(store.as_context_mut(), runtime::EXPORT_FLUSH_STDOUT, ());
        }
        self.hosts.thread_exited(&thread);
        lock(&self.threads).remove(&thread.tid);
        mailbox.close();
        self.settle(thread.tid, r);
    }

    /// Sorts out what the end of thread `tid`'s entry call (0: `_start`) means for the run.
    fn settle(&self, tid: i32, r: wasmtime::Result<()>) {
        match r {
            // Returning from `_start` ends a WASI command (the runtime's calls proc_exit).
            Ok(()) if tid == 0 => self.finish(Ending::Exit(0)),
            Ok(()) => self.thread_done(),
            Err(e) if e.is::<ThreadExit>() => self.thread_done(),
            Err(e) => match e.downcast_ref::<I32Exit>() {
                Some(exit) => self.finish(Ending::Exit(exit.0)),
                // Once the run is ending, threads end with whatever stopped them (an
                // interrupt, `Stopped`): not news.
                None if self.is_stopping() => {}
                None => self.finish(Ending::Failed(tid, e)),
            },
        }
    }

    /// Starts a thread of `kind` with a new instance of the module (over the shared memory)
    /// that runs `entry`, on an OS thread of its own; its tid.
    fn spawn(self: &Arc<Self>, kind: ThreadKind, entry: Entry) -> Result<i32, SpawnError> {
        if !self.threaded {
            return Err(SpawnError::NotThreaded);
        }
        if self.is_stopping() {
            return Err(SpawnError::Stopping);
        }
        let max = self.opts.max_threads.unwrap_or(crate::DEFAULT_MAX_THREADS);
        if self.live.fetch_add(1, Ordering::SeqCst) >= max {
            self.live.fetch_sub(1, Ordering::SeqCst);
            return Err(SpawnError::TooMany(max));
        }
        let tid = self.next_tid.fetch_add(1, Ordering::SeqCst);
        if tid <= 0 {
            self.live.fetch_sub(1, Ordering::SeqCst);
            return Err(SpawnError::NoIds);
        }
        let process = self.clone();
        let thread = ThreadInfo { tid, kind };
        let spawned = std::thread::Builder::new()
            .name(format!("wasm thread {tid}"))
            .spawn(move || match process.instantiate(thread) {
                Ok(store) => process.run_thread(store, entry),
                Err(e) => process.settle(tid, Err(wasmtime::Error::msg(e.to_string()))),
            });
        match spawned {
            Ok(_) => Ok(tid),
            Err(e) => {
                self.live.fetch_sub(1, Ordering::SeqCst);
                Err(SpawnError::Os(e))
            }
        }
    }

    /// `thread-spawn(arg)`: a new module thread running `wasi_thread_start(tid, arg)`, as
    /// the IRT's `thread_create` asks for (`arg` is the start record it prepared).
    pub fn spawn_module_thread(self: &Arc<Self>, arg: i32) -> Result<i32, SpawnError> {
        self.spawn(
            ThreadKind::Module,
            Box::new(move |mut cx| {
                let tid = cx.data().thread().tid;
                call_export::<(i32, i32), ()>(&mut cx, runtime::EXPORT_THREAD_START, (tid, arg))
            }),
        )
    }

    /// A new thread started by a host (e.g. an audio thread): a fresh instance of the
    /// module over the shared memory, on an OS thread of its own, running `entry` with its
    /// store. It counts as a thread of the program (the run ends with its last thread), and
    /// gets a tid and a mailbox like any other. Its instance's globals are fresh: in
    /// particular its stack pointer is the module's initial one, so before calling code that
    /// uses the stack the entry must give it a stack of its own, which module threads get
    /// from their start record (`wasi_thread_start`).
    pub fn spawn_thread<F>(self: &Arc<Self>, entry: F) -> Result<i32, SpawnError>
    where
        F: for<'a> FnOnce(StoreContextMut<'a, Ctx>) -> wasmtime::Result<()> + Send + 'static,
    {
        self.spawn(ThreadKind::Host, Box::new(entry))
    }

    /// Runs `_start` (in a non-threaded module, on the calling thread; in a threaded one on
    /// an OS thread of its own, so that this one can wait for whichever thread ends the
    /// run) and reports how the run ended.
    pub(crate) fn run_main(self: &Arc<Self>) -> Result<RunOutcome, RunError> {
        let main = ThreadInfo {
            tid: 0,
            kind: ThreadKind::Main,
        };
        // Made here, so that setup errors are reported as such.
        let mut store = self.instantiate(main)?;
        let start = store
            .data()
            .instance()
            .and_then(|i| {
                i.get_typed_func::<(), ()>(&mut store, runtime::EXPORT_START)
                    .ok()
            })
            .ok_or(RunError::NoStart)?;
        let entry: Entry = Box::new(move |cx| start.call(cx, ()));
        let deadline = self.opts.timeout.map(|t| Instant::now() + t);
        if self.threaded {
            let process = self.clone();
            std::thread::Builder::new()
                .name("wasm main thread".into())
                .spawn(move || process.run_thread(store, entry))
                .map_err(|e| RunError::Host(format!("cannot start the main thread: {e}")))?;
        } else {
            // The watchdog ends the run at the deadline; it returns as soon as the run ends.
            if deadline.is_some() {
                let process = self.clone();
                std::thread::spawn(move || process.wait(deadline));
            }
            self.run_thread(store, entry);
        }
        self.wait(deadline);
        self.outcome()
    }

    /// Waits until the run has ended, ending it at `deadline`.
    fn wait(&self, mut deadline: Option<Instant>) {
        let mut end = lock(&self.ending);
        while !end.told {
            match deadline {
                None => end = self.ended.wait(end).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        drop(end);
                        self.finish(Ending::Timeout);
                        deadline = None;
                        end = lock(&self.ending);
                        continue;
                    }
                    end = self
                        .ended
                        .wait_timeout(end, d - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        }
    }

    /// How the ended run went, with its captured output.
    fn outcome(&self) -> Result<RunOutcome, RunError> {
        let what = lock(&self.ending).ending.take();
        let (stdout, stderr) = self.streams.contents();
        let timeout = self.opts.timeout;
        match what {
            Some(Ending::Exit(code)) => Ok(RunOutcome {
                exit_code: code,
                stdout,
                stderr,
            }),
            Some(Ending::Timeout) | None => Err(RunError::Timeout(timeout.unwrap_or_default())),
            Some(Ending::Failed(_, e)) if !self.threaded => ended(e, timeout, stdout, stderr),
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
}
