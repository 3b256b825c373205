//! Running a converted module under wasmtime (`pexe2wasm run`), and the framework its
//! hosts plug into.
//!
//! [`run_wasm`] compiles the module (once per call; nothing is cached on disk), links its
//! hosts, calls `_start` and reports how the program ended: its exit status, or a trap with
//! a backtrace named from the module's name section. [`Program`] compiles once and runs
//! any number of times.
//!
//! # Hosts
//!
//! Everything a module imports comes from a [`Host`]. A host implements [`Host::link`]
//! (adds its import functions to the [`Linker`] every thread's store is instantiated
//! with), [`Host::new_state`] (its state for one run, shared by all the run's threads as
//! an `Arc`), and optionally [`Host::thread_started`] / [`Host::thread_exited`] (told on
//! each thread, main included) and [`Host::stopping`] (the run is ending). Imports are
//! plain wasmtime host functions over the one store data type, [`Ctx`]: from their `Caller`
//! they reach this thread's WASI context, [`Ctx::thread`] (tid, main/module/host),
//! [`Ctx::state`] (a host's state for this run), [`Ctx::process`] (the run: spawn threads,
//! other threads' mailboxes, exit) and the module: [`call_export`],
//! [`call_function_pointer`] (a pexe's function pointers are indices in the exported
//! table), [`read_memory`] and [`write_memory`].
//!
//! [`Program::new`] adds [`IrtHost`], the host side of the NaCl IRT that `irt.wat`
//! implements in the module: WASI preview 1, wasi-threads' `thread-spawn` and
//! `pexe2wasm`.`thread_exit`; further hosts join with [`Program::add_host`]. Single-threaded
//! and threaded runs go through the same [`Process`]: same linker, same store data, same
//! ending rules (the first of `exit` in any thread, the last thread's end, a trap, the time
//! limit); they differ only in that a threaded module's threads share an imported memory
//! and its main thread gets an OS thread of its own.
//!
//! # Threads
//!
//! Every thread of a run (main, spawned by the module, or by a host with
//! [`Process::spawn_thread`]) is its own instance in its own store on its own OS thread;
//! a store never leaves its thread. So: import functions may run on several threads at
//! once and share only the host state (make it `Sync`, lock briefly); anything that must
//! run in a particular thread's instance (a callback into the module, its globals) is a
//! [`Task`] posted to that thread's [`Mailbox`], which runs it the next time the thread is
//! in [`run_loop`]. A host takes over a thread by not returning from an import: the import
//! calls [`run_loop`] with its `Caller` and serves posted tasks until [`Mailbox::quit`].
//! When the run ends, loops return [`Stopped`] (let it propagate), threads in wasm are
//! interrupted, and [`Host::stopping`] must wake whatever else of the host blocks. A host
//! thread's instance starts with the module's initial stack pointer: it needs a stack of
//! its own before it runs code that uses one.
//!
//! # Where Pepper goes
//!
//! A Pepper host is one more [`Host`]: its state holds resources, vars and message
//! queues; it links the PPB imports (signatures from the `pexe2wasm-ppapi` crate; pointers
//! are offsets into the memory) and `ppapi_start`, which calls `PPP_InitializeModule`
//! through [`call_function_pointer`], posts `DidCreate` to the main thread and stays in
//! [`run_loop`]; `PostMessage` from the embedder, `CallOnMainThread` and completion
//! callbacks become tasks posted to thread 0's mailbox (`process.mailbox(0)`), and the
//! audio thread is started with [`Process::spawn_thread`] or through the thread creator the
//! module registers.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use wasmtime::{Config, Engine, Linker, Module, Trap, WasmBacktrace};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

mod fastwrite;
mod guest;
mod host;
mod irt;
mod mailbox;
pub mod pepper;
mod process;
mod stdio;

pub use guest::{call_export, call_function_pointer, read_memory, read_memory_into, write_memory};
pub use host::{Ctx, Host, ThreadInfo, ThreadKind};
pub use irt::{cpu_count, imports_module, imports_thread_spawn, IrtHost};
pub use mailbox::{run_loop, Mailbox, PostError, Stopped, Task};
pub use process::{Process, SpawnError};
/// The wasmtime this crate runs on, for hosts (their imports take its `Linker` and `Caller`).
pub use wasmtime;

use host::AnyHost;

/// Where the program's standard input comes from.
#[derive(Debug, Clone, Default)]
pub enum Input {
    /// The host's standard input.
    Inherit,
    /// Nothing: reads see end of file.
    #[default]
    Empty,
    /// These bytes, then end of file.
    Bytes(Vec<u8>),
}

/// Where the program's standard output or error goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Output {
    /// The host's stream.
    Inherit,
    /// Collected into [`RunOutcome`] (or [`TrapInfo`]), up to [`CAPTURE_LIMIT`] bytes; a
    /// write beyond that traps.
    #[default]
    Capture,
    /// Dropped.
    Discard,
    /// The host's standard error (a Pepper app's standard output: NaCl sent both of an
    /// app's streams to the browser's log, never to the page, and the command-line Pepper
    /// host keeps standard output for the app's messages).
    HostStderr,
}

/// The default of [`RunOptions::max_threads`]: every NaCl thread is an OS thread and a
/// module instance here, so a program that starts threads without end is stopped well
/// before it exhausts the machine; NaCl's own limit was of the same order.
pub const DEFAULT_MAX_THREADS: usize = 512;

/// Most bytes [`Output::Capture`] keeps per stream.
pub const CAPTURE_LIMIT: usize = 256 << 20;

/// How to run a program. Nothing of the host (environment, files) is visible unless it is
/// listed here.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The program's argv, argv\[0\] included.
    pub args: Vec<String>,
    /// The program's environment.
    pub env: Vec<(String, String)>,
    /// Preopened directories: (host path, guest path). The guest sees one tree rooted at
    /// "/"; a relative guest path such as "." is taken relative to "/".
    pub dirs: Vec<(PathBuf, String)>,
    /// Preopened directories the program may read but not change (created, written,
    /// renamed, removed: all refused with EACCES/EPERM as a read-only file system would).
    pub readonly_dirs: Vec<(PathBuf, String)>,
    pub stdin: Input,
    pub stdout: Output,
    pub stderr: Output,
    /// Stop the program (as [`RunError::Timeout`]) after this long.
    pub timeout: Option<Duration>,
    /// Most threads the program may have running at once, its main thread included
    /// (`None`: [`DEFAULT_MAX_THREADS`]). One more `pthread_create` fails with EAGAIN, as
    /// it does when a system runs out of threads.
    pub max_threads: Option<usize>,
}

/// How a program that ran to its end finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    /// The status passed to `exit` (0 when `_start` returned).
    pub exit_code: i32,
    /// Captured standard output (empty unless [`Output::Capture`]).
    pub stdout: Vec<u8>,
    /// Captured standard error (empty unless [`Output::Capture`]).
    pub stderr: Vec<u8>,
}

/// A trap: what happened, where, and the output up to that point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrapInfo {
    /// The trap's description (e.g. "wasm `unreachable` instruction executed").
    pub message: String,
    /// Innermost frame first: `#N name (function index)`.
    pub backtrace: Vec<String>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl std::fmt::Display for TrapInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "wasm trap: {}", self.message)?;
        if !self.backtrace.is_empty() {
            write!(f, "\nbacktrace:")?;
            for frame in &self.backtrace {
                write!(f, "\n  {frame}")?;
            }
        }
        Ok(())
    }
}

/// Why a program did not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The engine rejected the configuration (a bug or an unusual host).
    #[error("cannot set up the wasm engine: {0}")]
    Engine(String),
    /// The module failed to validate or compile.
    #[error("invalid wasm module: {0}")]
    Compile(String),
    /// A preopened directory could not be opened.
    #[error("{}: cannot open directory: {message}", host.display())]
    Dir { host: PathBuf, message: String },
    /// Instantiation failed (a missing import, a failing start function, …).
    #[error("cannot instantiate the module: {0}")]
    Instantiate(String),
    /// The module exports no `_start` function of type `() -> ()`.
    #[error("the module has no `_start` function of type () -> ()")]
    NoStart,
    /// The program trapped.
    #[error("{0}")]
    Trap(Box<TrapInfo>),
    /// The program ran longer than [`RunOptions::timeout`].
    #[error("time limit of {0:?} exceeded")]
    Timeout(Duration),
    /// The host failed in a way that is not a trap of the program.
    #[error("{0}")]
    Host(String),
}

/// An engine with the wasm features converted modules may use; `interruptible` enables
/// the epoch interruption that [`RunOptions::timeout`] needs.
pub fn new_engine(interruptible: bool) -> Result<Engine, RunError> {
    let mut config = Config::new();
    config
        .wasm_bulk_memory(true)
        .wasm_multi_value(true)
        .wasm_simd(true)
        .wasm_exceptions(true)
        .wasm_threads(true)
        .shared_memory(true)
        .wasm_tail_call(true)
        // Innermost frames of a trap's backtrace (wasmtime's default keeps 20).
        .wasm_backtrace_max_frames(NonZeroUsize::new(64))
        .epoch_interruption(interruptible);
    // PEXE2WASM_PERFMAP=1: /tmp/perf-PID.map names the compiled functions for `perf`
    // (docs/PERFORMANCE.md, "Profiling").
    if std::env::var_os("PEXE2WASM_PERFMAP").is_some_and(|v| v == "1") {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    Engine::new(&config).map_err(|e| RunError::Engine(format!("{e:#}")))
}

/// A linker with the NaCl IRT's host side ([`IrtHost`]): WASI preview 1 and the thread
/// imports, for instantiating modules by hand over a [`Ctx::standalone`] store.
pub fn wasi_linker(engine: &Engine) -> Result<Linker<Ctx>, RunError> {
    let mut linker = Linker::new(engine);
    Host::link(&IrtHost, &mut linker).map_err(|e| RunError::Engine(format!("{e:#}")))?;
    Ok(linker)
}

/// The pipes of a WASI context made by [`wasi_ctx`]: captured output, standard input given
/// as bytes, and the buffer in front of an inherited stdout that is not a terminal
/// (`stdio.rs`). Clones share them, so every thread of a run reads and writes the same;
/// the buffer is written out when the run ends, or when the last clone is dropped.
#[derive(Clone)]
pub struct CapturedStreams {
    stdin: Option<MemoryInputPipe>,
    stdout: Option<MemoryOutputPipe>,
    stderr: Option<MemoryOutputPipe>,
    coalesced: Option<Arc<CoalescedOwner>>,
}

/// Owns a run's stdout buffer: closes it (writes it out) when dropped.
struct CoalescedOwner(Arc<stdio::Coalescer>);

impl Drop for CoalescedOwner {
    fn drop(&mut self) {
        self.0.close();
    }
}

impl CapturedStreams {
    /// New pipes for what `opts` captures or feeds.
    pub fn new(opts: &RunOptions) -> CapturedStreams {
        let capture =
            |mode: Output| (mode == Output::Capture).then(|| MemoryOutputPipe::new(CAPTURE_LIMIT));
        CapturedStreams {
            stdin: match &opts.stdin {
                Input::Bytes(bytes) => Some(MemoryInputPipe::new(bytes.clone())),
                _ => None,
            },
            stdout: capture(opts.stdout),
            stderr: capture(opts.stderr),
            coalesced: (opts.stdout == Output::Inherit && stdio::host_stdout_coalesces())
                .then(|| Arc::new(CoalescedOwner(stdio::Coalescer::new()))),
        }
    }

    /// Writes out what the program wrote to a coalesced stdout and not yet written; from
    /// now on its writes go straight through. The run calls it as it ends.
    pub fn finish_stdout(&self) {
        if let Some(c) = &self.coalesced {
            c.0.close();
        }
    }

    /// The runner's own destinations for the program's fd 1 and fd 2 (`fastwrite.rs`),
    /// the same streams [`wasi_ctx_with`] gives the WASI context; `None` for a stream the
    /// runner does not own (a terminal, the host's stderr for a Pepper app's stdout),
    /// which only wasmtime-wasi writes.
    pub(crate) fn std_sinks(&self, opts: &RunOptions) -> fastwrite::StdSinks {
        fastwrite::StdSinks::new(self.stdout_sink(opts), self.stderr_sink(opts))
    }

    fn stdout_sink(&self, opts: &RunOptions) -> Option<fastwrite::Sink> {
        match (opts.stdout, &self.stdout, &self.coalesced) {
            (Output::Inherit, _, Some(c)) => Some(fastwrite::Sink::Coalesced(c.0.clone())),
            (Output::Capture, Some(p), _) => Some(fastwrite::Sink::Capture(p.clone())),
            (Output::Discard, _, _) => Some(fastwrite::Sink::Discard),
            _ => None,
        }
    }

    fn stderr_sink(&self, opts: &RunOptions) -> Option<fastwrite::Sink> {
        match (opts.stderr, &self.stderr, &self.coalesced) {
            (Output::Inherit | Output::HostStderr, _, Some(c)) => {
                Some(fastwrite::Sink::StderrAfterStdout(c.0.clone()))
            }
            (Output::Capture, Some(p), _) => Some(fastwrite::Sink::Capture(p.clone())),
            (Output::Discard, _, _) => Some(fastwrite::Sink::Discard),
            _ => None,
        }
    }

    /// What the program wrote so far: (stdout, stderr), empty for streams not captured.
    pub fn contents(&self) -> (Vec<u8>, Vec<u8>) {
        let get = |p: &Option<MemoryOutputPipe>| {
            p.as_ref()
                .map(|p| p.contents().to_vec())
                .unwrap_or_default()
        };
        (get(&self.stdout), get(&self.stderr))
    }
}

/// The WASI context for `opts`, with the pipes that capture its output.
pub fn wasi_ctx(opts: &RunOptions) -> Result<(WasiP1Ctx, CapturedStreams), RunError> {
    let streams = CapturedStreams::new(opts);
    Ok((wasi_ctx_with(opts, &streams)?, streams))
}

/// The monotonic clock of every WASI context we make: one origin for the whole process.
/// wasmtime-wasi's own counts from each context's creation, and every thread of a run has
/// a context of its own, so times taken on two threads would not compare (Stockfish's
/// search thread then saw its start time in the future).
struct SharedMonotonicClock;

impl wasmtime_wasi::HostMonotonicClock for SharedMonotonicClock {
    fn resolution(&self) -> u64 {
        1
    }
    fn now(&self) -> u64 {
        static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        let origin = *ORIGIN.get_or_init(std::time::Instant::now);
        origin.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64
    }
}

/// The WASI context for `opts` over existing pipes (made for the same `opts`).
pub fn wasi_ctx_with(opts: &RunOptions, streams: &CapturedStreams) -> Result<WasiP1Ctx, RunError> {
    let mut b = WasiCtxBuilder::new();
    b.monotonic_clock(SharedMonotonicClock);
    b.args(&opts.args);
    b.envs(&opts.env);
    let coalesced = streams.coalesced.as_ref().map(|c| c.0.clone());
    match (&opts.stdin, &streams.stdin, &coalesced) {
        (Input::Inherit, _, Some(c)) => {
            b.stdin(stdio::StdinAfterStdout(c.clone()));
        }
        (Input::Inherit, _, None) => {
            b.inherit_stdin();
        }
        (Input::Bytes(_), Some(p), _) => {
            b.stdin(p.clone());
        }
        _ => {}
    }
    // The streams the runner owns are the ones its fast fd_write writes to as well.
    match streams.stdout_sink(opts) {
        Some(fastwrite::Sink::Coalesced(c)) => {
            b.stdout(stdio::CoalescedStdout(c));
        }
        Some(fastwrite::Sink::Capture(p)) => {
            b.stdout(p);
        }
        // wasmtime-wasi's default stdout is a sink.
        Some(fastwrite::Sink::Discard) => {}
        Some(fastwrite::Sink::StderrAfterStdout(_)) => unreachable!("not a stdout sink"),
        None => match opts.stdout {
            Output::Inherit => {
                b.inherit_stdout();
            }
            Output::HostStderr => {
                b.stdout(tokio::io::stderr());
            }
            Output::Capture | Output::Discard => {}
        },
    }
    match streams.stderr_sink(opts) {
        Some(fastwrite::Sink::StderrAfterStdout(c)) => {
            b.stderr(stdio::StderrAfterStdout(c));
        }
        Some(fastwrite::Sink::Capture(p)) => {
            b.stderr(p);
        }
        Some(fastwrite::Sink::Discard) => {}
        Some(fastwrite::Sink::Coalesced(_)) => unreachable!("not a stderr sink"),
        None => match opts.stderr {
            Output::Inherit | Output::HostStderr => {
                b.inherit_stderr();
            }
            Output::Capture | Output::Discard => {}
        },
    }
    let dirs = opts.dirs.iter().map(|d| (d, FsPerms::ReadWrite));
    let readonly = opts.readonly_dirs.iter().map(|d| (d, FsPerms::ReadOnly));
    for ((host, guest), perms) in dirs.chain(readonly) {
        b.preopened_dir(host, guest, perms)
            .map_err(|e| RunError::Dir {
                host: host.clone(),
                message: format!("{e:#}"),
            })?;
    }
    Ok(b.build_p1())
}

/// A module compiled ahead of time by [`Program::precompile`].
pub struct Precompiled {
    bytes: Vec<u8>,
    threaded: bool,
    interruptible: bool,
}

impl Precompiled {
    /// The size of the compiled artefact (what `wasmtime compile` would write).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the artefact is empty (never, for a valid module).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// A compiled module with its hosts, ready to run any number of times (each run is a
/// [`Process`]: its own instances, WASI contexts and host states).
pub struct Program {
    engine: Engine,
    module: Module,
    hosts: Vec<Arc<dyn AnyHost>>,
    threaded: bool,
    interruptible: bool,
}

impl Program {
    /// Compiles `wasm`, with the NaCl IRT's host side ([`IrtHost`]) as its first host.
    /// `interruptible` allows [`RunOptions::timeout`] (threaded modules always are: their
    /// runs stop the remaining threads that way).
    pub fn new(wasm: &[u8], interruptible: bool) -> Result<Program, RunError> {
        // Epoch checks cost time: compile them in only when something needs them.
        let threaded = imports_thread_spawn(wasm);
        let interruptible = interruptible || threaded;
        let engine = new_engine(interruptible)?;
        let module = Module::new(&engine, wasm).map_err(|e| RunError::Compile(format!("{e:#}")))?;
        Ok(Program {
            engine,
            module,
            hosts: vec![Arc::new(IrtHost)],
            threaded,
            interruptible,
        })
    }

    /// Compiles `wasm` ahead of time, as `wasmtime compile` does, for
    /// [`Program::from_precompiled`] (which then only deserializes it, as `wasmtime run
    /// --allow-precompiled` does).
    pub fn precompile(wasm: &[u8], interruptible: bool) -> Result<Precompiled, RunError> {
        let threaded = imports_thread_spawn(wasm);
        let interruptible = interruptible || threaded;
        let engine = new_engine(interruptible)?;
        let bytes = engine
            .precompile_module(wasm)
            .map_err(|e| RunError::Compile(format!("{e:#}")))?;
        Ok(Precompiled {
            bytes,
            threaded,
            interruptible,
        })
    }

    /// The program [`Program::precompile`] compiled, with a new engine (as a new `wasmtime
    /// run` process has).
    pub fn from_precompiled(pre: &Precompiled) -> Result<Program, RunError> {
        let engine = new_engine(pre.interruptible)?;
        // SAFETY: the bytes are what `Engine::precompile_module` made for an engine of
        // this same configuration (`new_engine(pre.interruptible)`), kept private since.
        let module = unsafe { Module::deserialize(&engine, &pre.bytes) }
            .map_err(|e| RunError::Compile(format!("{e:#}")))?;
        Ok(Program {
            engine,
            module,
            hosts: vec![Arc::new(IrtHost)],
            threaded: pre.threaded,
            interruptible: pre.interruptible,
        })
    }

    /// Adds a host: its imports join every thread's linker, and every run gets its state.
    /// A host type can be added once; its imports must not clash with other hosts' (the
    /// run then fails with [`RunError::Instantiate`]).
    pub fn add_host<H: Host>(&mut self, host: H) -> Result<&mut Program, RunError> {
        let id = std::any::TypeId::of::<H>();
        if self.hosts.iter().any(|h| h.host_type() == id) {
            return Err(RunError::Host(format!(
                "host {} is already added",
                Host::name(&host)
            )));
        }
        self.hosts.push(Arc::new(host));
        Ok(self)
    }

    /// Whether the module is threaded (imports wasi-threads' `thread-spawn`).
    pub fn is_threaded(&self) -> bool {
        self.threaded
    }

    /// Runs the program to its end.
    pub fn run(&self, opts: &RunOptions) -> Result<RunOutcome, RunError> {
        if opts.timeout.is_some() && !self.interruptible {
            return Err(RunError::Engine(
                "a time limit needs a program compiled as interruptible".into(),
            ));
        }
        Process::new(self, opts)?.run_main()
    }
}

/// Runs a WASI command module (a converted pexe) to its end.
pub fn run_wasm(wasm: &[u8], opts: &RunOptions) -> Result<RunOutcome, RunError> {
    Program::new(wasm, opts.timeout.is_some())?.run(opts)
}

/// The trap message for a wasm exception that reached the host.
pub const UNCAUGHT_LONGJMP: &str = "uncaught wasm exception: a longjmp found no active \
     setjmp (its frame has returned, or the jmp_buf was never set)";

/// Sorts the error a wasm call ended with into an exit, a timeout, a trap or a host failure.
pub fn ended(
    e: wasmtime::Error,
    timeout: Option<Duration>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
) -> Result<RunOutcome, RunError> {
    if let Some(exit) = e.downcast_ref::<I32Exit>() {
        return Ok(RunOutcome {
            exit_code: exit.0,
            stdout,
            stderr,
        });
    }
    // The only exception converted modules throw is longjmp's; reaching the host means
    // no active setjmp frame took it.
    if e.is::<wasmtime::ThrownException>() {
        return Err(RunError::Trap(Box::new(TrapInfo {
            message: UNCAUGHT_LONGJMP.into(),
            backtrace: Vec::new(),
            stdout,
            stderr,
        })));
    }
    let trap = e.downcast_ref::<Trap>().copied();
    if let (Some(Trap::Interrupt), Some(limit)) = (trap, timeout) {
        return Err(RunError::Timeout(limit));
    }
    let backtrace = e
        .downcast_ref::<WasmBacktrace>()
        .map(format_backtrace)
        .unwrap_or_default();
    let message = match trap {
        // wasmtime writes "wasm trap: <what>"; the prefix is ours to add.
        Some(t) => {
            let m = t.to_string();
            m.strip_prefix("wasm trap: ")
                .map(str::to_string)
                .unwrap_or(m)
        }
        // A host function failed (e.g. captured output over its limit): still the end of
        // the program, with the wasm frames that led there.
        None if !backtrace.is_empty() => format!("{:#}", e.root_cause()),
        None => return Err(RunError::Host(format!("{e:#}"))),
    };
    Err(RunError::Trap(Box::new(TrapInfo {
        message,
        backtrace,
        stdout,
        stderr,
    })))
}

/// One line per frame, innermost first: `#N name (function index, offset)`.
pub fn format_backtrace(bt: &WasmBacktrace) -> Vec<String> {
    bt.frames()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let name = f.func_name().unwrap_or("<unnamed>");
            match f.func_offset() {
                Some(off) => format!("#{i} {name} (function {}, offset {off:#x})", f.func_index()),
                None => format!("#{i} {name} (function {})", f.func_index()),
            }
        })
        .collect()
}
