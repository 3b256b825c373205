//! The command-line Pepper host: runs one instance of a Pepper plugin, with the messages of
//! its page on standard input and output (docs/PEPPER-ABI.md, docs/PEPPER-CLI.md).
//!
//! The module side is the Pepper runtime (`irt.wat`, Pepper variant) and the glue the
//! converter generates (`pexe2wasm::emit::pepper`). This host answers:
//! * `pexe2wasm_ppapi.*`: `start` (the main loop, below), `get_interface`,
//!   `register_thread_creator`, `fill`/`done` ([`ppp`]) and `wait` (futex waits, for the
//!   end-of-input rule);
//! * every function of the PPB interfaces in [`OFFERED`], one import each, in `ppb/`
//!   (one file per interface family: where a Pepper call is answered);
//! * every other PPB import as a trap naming it (nothing reaches those: `PPB_GetInterface`
//!   answered NULL for their interfaces).
//!
//! # The main loop
//! `start` runs on the thread that called `ppapi_start` (the main thread, tid 0):
//! `PPP_InitializeModule`, then `DidCreate` with the embed attributes, `DidChangeView`,
//! `DidChangeFocus(true)`, then tasks posted to the main thread's mailbox (messages from
//! the input, `CallOnMainThread`, completion callbacks, the input events of `--events`:
//! [`events`]) until the instance ends. A reader
//! thread turns each input line into a message. When the input has ended, the instance
//! ends (`DidDestroy`, then `start` returns and the program exits with status 0) as soon as
//! the app can make no further progress: no task queued or running on any thread, no timer
//! or callback pending, and every other thread blocked in a futex wait without deadline or
//! idle in `PPB_MessageLoop.Run`, seen twice 20 ms apart with nothing happening between.
//! With `timeout` set, it ends that long after the input ended at the latest.

pub mod events;
pub mod fetch;
pub mod gfx;
pub mod json;
pub mod loader;
mod mem;
pub mod net;
mod ppb;
mod ppp;
pub mod resources;
pub mod storage;
pub mod var;

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use wasmtime::{AsContextMut, Caller, Linker};

use crate::host::{Ctx, Host, ThreadInfo, ThreadKind};
use crate::{call_export, Process, RunOptions};
use resources::{Resource, Resources, View};
use var::{PpVar, VarStore};

pub use ppb::OFFERED;

/// The module id handed to `PPP_InitializeModule`.
pub const MODULE: i32 = 1;
/// The one instance's id.
pub const INSTANCE: i32 = 2;

/// Pepper's result codes (`pp_errors.h`).
pub mod pp_error {
    pub const OK: i32 = 0;
    pub const COMPLETIONPENDING: i32 = -1;
    pub const FAILED: i32 = -2;
    pub const ABORTED: i32 = -3;
    pub const BADARGUMENT: i32 = -4;
    pub const BADRESOURCE: i32 = -5;
    pub const NOINTERFACE: i32 = -6;
    pub const NOACCESS: i32 = -7;
    pub const NOMEMORY: i32 = -8;
    pub const INPROGRESS: i32 = -11;
    pub const NOTSUPPORTED: i32 = -12;
    pub const BLOCKS_MAIN_THREAD: i32 = -13;
    pub const FILENOTFOUND: i32 = -20;
    pub const NO_MESSAGE_LOOP: i32 = -51;
    pub const WRONG_THREAD: i32 = -52;
    pub const CONNECTION_CLOSED: i32 = -100;
    pub const CONNECTION_RESET: i32 = -101;
    pub const CONNECTION_REFUSED: i32 = -102;
    pub const CONNECTION_ABORTED: i32 = -103;
    pub const CONNECTION_FAILED: i32 = -104;
    pub const CONNECTION_TIMEDOUT: i32 = -105;
    pub const ADDRESS_INVALID: i32 = -106;
    pub const ADDRESS_UNREACHABLE: i32 = -107;
    pub const ADDRESS_IN_USE: i32 = -108;
    pub const MESSAGE_TOO_BIG: i32 = -109;
    pub const NAME_NOT_RESOLVED: i32 = -110;
}

/// How messages are written and read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MessageFormat {
    /// Each input line is a string message; a string message out is its text, anything
    /// else JSON ([`json::to_text_line`]).
    #[default]
    Text,
    /// JSON Lines both ways ([`json`]).
    Json,
}

/// Where messages to the instance come from.
pub enum MessageSource {
    /// The host's standard input, a line a message.
    Stdin,
    /// These lines, then end of input.
    Lines(Vec<String>),
    /// Lines from a channel; its end is the end of input (benchmarks, embedders).
    Channel(Mutex<Option<std::sync::mpsc::Receiver<String>>>),
}

/// Where the instance's messages, console lines and the host's notes go.
pub trait Sink: Send + Sync {
    /// One message the app posted, as one line (no newline).
    fn message(&self, line: &str);
    /// A `PPB_Console` line: level (TIP 0, LOG 1, WARNING 2, ERROR 3), source, text.
    fn console(&self, level: i32, source: Option<&str>, text: &str);
    /// A note of the host's own (an interface the app asked for and did not get, …).
    fn note(&self, text: &str);
}

/// Messages to standard output, console lines and notes to standard error.
pub struct StdioSink;

fn level_name(level: i32) -> &'static str {
    match level {
        0 => "tip",
        1 => "log",
        2 => "warning",
        3 => "error",
        _ => "log",
    }
}

impl Sink for StdioSink {
    fn message(&self, line: &str) {
        let mut out = std::io::stdout().lock();
        // A closed standard output (the reader went away) is not the app's failure.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
    fn console(&self, level: i32, source: Option<&str>, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = match source {
            Some(s) => writeln!(err, "console {}: [{s}] {text}", level_name(level)),
            None => writeln!(err, "console {}: {text}", level_name(level)),
        };
    }
    fn note(&self, text: &str) {
        let _ = writeln!(std::io::stderr().lock(), "pexe2wasm: {text}");
    }
}

/// Everything written, kept in memory (tests, the service).
#[derive(Default)]
pub struct CaptureSink {
    pub messages: Mutex<Vec<String>>,
    pub console: Mutex<Vec<(i32, String)>>,
    pub notes: Mutex<Vec<String>>,
    /// Told of each message as it arrives (round-trip benchmarks).
    pub on_message: Option<std::sync::mpsc::SyncSender<String>>,
}

impl Sink for CaptureSink {
    fn message(&self, line: &str) {
        lock(&self.messages).push(line.to_string());
        if let Some(tx) = &self.on_message {
            let _ = tx.send(line.to_string());
        }
    }
    fn console(&self, level: i32, _source: Option<&str>, text: &str) {
        lock(&self.console).push((level, text.to_string()));
    }
    fn note(&self, text: &str) {
        lock(&self.notes).push(text.to_string());
    }
}

/// How the one instance is set up.
pub struct PepperConfig {
    /// The embed element's attributes, in order (`DidCreate`'s argn/argv).
    pub attrs: Vec<(String, String)>,
    /// The view's size.
    pub size: (i32, i32),
    pub format: MessageFormat,
    pub input: MessageSource,
    pub sink: Arc<dyn Sink>,
    /// End the instance at most this long after the input ended.
    pub timeout: Option<Duration>,
    /// `--frames DIR`: every `PPB_Graphics2D` Flush writes the view as a PNG there.
    pub frames: Option<std::path::PathBuf>,
    /// `--events FILE`: input events replayed to the instance (docs/PEPPER-CLI.md).
    pub events: Option<std::path::PathBuf>,
    /// `--origin DIR|http://HOST:PORT/`: what relative URLs resolve against.
    pub origin: Option<String>,
    /// `--url-map FROM=TO`: absolute URLs starting with FROM are fetched from TO instead
    /// (which must be loopback).
    pub url_map: Vec<(String, String)>,
    /// `--storage DIR`: where the persistent and temporary file systems live (`None`: a
    /// temporary directory removed at the end).
    pub storage: Option<std::path::PathBuf>,
    /// `--net loopback`: sockets, name resolution and WebSockets may reach loopback
    /// addresses; otherwise they get PP_ERROR_NOACCESS.
    pub net_loopback: bool,
}

impl PepperConfig {
    /// One instance of the default size (300 x 150) that receives `lines` as text
    /// messages and writes everything to `sink` (a [`CaptureSink`] to read it back).
    pub fn new(lines: Vec<String>, sink: Arc<CaptureSink>) -> PepperConfig {
        PepperConfig {
            attrs: vec![
                ("src".into(), "app.nmf".into()),
                ("type".into(), "application/x-pnacl".into()),
            ],
            size: (300, 150),
            format: MessageFormat::Text,
            input: MessageSource::Lines(lines),
            sink,
            timeout: None,
            frames: None,
            events: None,
            origin: None,
            url_map: Vec::new(),
            storage: None,
            net_loopback: false,
        }
    }
}

/// The command-line Pepper host (a [`Host`]).
pub struct PepperHost {
    config: Mutex<Option<PepperConfig>>,
    missing: Arc<Mutex<Vec<String>>>,
}

impl PepperHost {
    /// A host for one run with `config` (a second run of the same program has no input).
    pub fn new(config: PepperConfig) -> PepperHost {
        PepperHost {
            config: Mutex::new(Some(config)),
            missing: Arc::default(),
        }
    }

    /// The interfaces the app asked for and did not get, in order of first asking: filled
    /// as the run goes, readable after it.
    pub fn missing_interfaces_handle(&self) -> Arc<Mutex<Vec<String>>> {
        self.missing.clone()
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the end-of-input rule watches.
#[derive(Default)]
struct Activity {
    /// Tasks posted to module threads and not yet run, timers armed, operations in flight.
    pending: AtomicI64,
    /// Threads blocked in a futex wait without deadline or in `MessageLoop.Run`.
    waiting: AtomicI64,
    /// Live threads other than the main one.
    others: AtomicI64,
    /// Bumped by every change of the above.
    generation: AtomicU64,
    input_done: AtomicBool,
}

impl Activity {
    fn add(&self, counter: &AtomicI64, d: i64) {
        counter.fetch_add(d, Ordering::SeqCst);
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether nothing can happen any more, and the generation it was seen at.
    fn quiet(&self) -> (bool, u64) {
        let g = self.generation.load(Ordering::SeqCst);
        let q = self.input_done.load(Ordering::SeqCst)
            && self.pending.load(Ordering::SeqCst) <= 0
            && self.waiting.load(Ordering::SeqCst) >= self.others.load(Ordering::SeqCst);
        (q && self.generation.load(Ordering::SeqCst) == g, g)
    }
}

/// The app's entry points, found at start.
#[derive(Debug, Default, Clone, Copy)]
struct Ppp {
    /// `PPP_Instance` table and whether it is version 1.0 (DidChangeView with rects).
    instance: u32,
    instance_1_0: bool,
    /// `PPP_Messaging;1.0` table.
    messaging: u32,
    /// `PPP_InputEvent;0.1` table.
    input_event: u32,
}

/// A registered `PPP_MessageHandler;0.2`.
#[derive(Debug, Clone, Copy)]
struct MessageHandler {
    user_data: u32,
    /// Its table: HandleMessage, HandleBlockingMessage, Destroy.
    table: [u32; 3],
    /// The thread of its message loop.
    tid: i32,
}

/// What the threads of one run share.
pub struct PepperState {
    config: PepperConfig,
    vars: Mutex<VarStore>,
    resources: Mutex<Resources>,
    activity: Activity,
    ppp: Mutex<Ppp>,
    handler: Mutex<Option<MessageHandler>>,
    /// Interfaces the app asked for and did not get, in order of first asking.
    missing: Arc<Mutex<Vec<String>>>,
    asked: Mutex<BTreeSet<String>>,
    thread_creator: Mutex<Option<(u32, u32)>>,
    /// Copies of vars in module memory (`VarToUtf8`, `Map`): var id → (address, size).
    heap: Mutex<heap::ModuleCopies>,
    started: Instant,
    /// The main thread's message loop resource, and every loop the app made.
    main_loop: Mutex<i32>,
    loops: Mutex<Vec<i32>>,
    timers: timers::Timers,
    ended: AtomicBool,
    /// `--origin` and `--url-map`, checked (`PPB_URLLoader`).
    urls: fetch::UrlPolicy,
    /// `--storage` (`PPB_FileSystem`).
    storage: storage::Storage,
    /// ImageData and Graphics2D: memory to give back, the bound context, frames.
    gfx: gfx::GfxState,
    /// Input event requests and the `--events` replay.
    input: events::InputState,
    /// The network rule's notes (`net`).
    net: net::NetState,
}

mod heap;
mod timers;

impl PepperState {
    /// The vars, locked.
    pub fn vars(&self) -> MutexGuard<'_, VarStore> {
        lock(&self.vars)
    }

    /// The resources, locked.
    pub fn resources(&self) -> MutexGuard<'_, Resources> {
        lock(&self.resources)
    }

    /// Interfaces the app asked for and did not get.
    pub fn missing_interfaces(&self) -> Vec<String> {
        lock(&self.missing).clone()
    }

    fn sink(&self) -> &dyn Sink {
        self.config.sink.as_ref()
    }
}

/// The host state of the store's run.
pub(crate) fn state(caller: &Caller<'_, Ctx>) -> wasmtime::Result<Arc<PepperState>> {
    caller
        .data()
        .state::<PepperHost>()
        .cloned()
        .ok_or_else(|| wasmtime::Error::msg("the Pepper host is not part of this run"))
}

pub(crate) fn process(caller: &Caller<'_, Ctx>) -> wasmtime::Result<Arc<Process>> {
    caller
        .data()
        .process()
        .ok_or_else(|| wasmtime::Error::msg("no run"))
}

/// Posts `task` to thread `tid`, counted as pending work until it has run. False when the
/// thread is gone.
pub(crate) fn post_counted<F>(
    state: &Arc<PepperState>,
    process: &Process,
    tid: i32,
    task: F,
) -> bool
where
    F: for<'a> FnOnce(wasmtime::StoreContextMut<'a, Ctx>) -> wasmtime::Result<()> + Send + 'static,
{
    state.activity.add(&state.activity.pending, 1);
    let s = state.clone();
    let posted = process.mailbox(tid).and_then(|m| {
        m.post(move |cx| {
            let r = task(cx);
            s.activity.add(&s.activity.pending, -1);
            r
        })
    });
    if posted.is_err() {
        state.activity.add(&state.activity.pending, -1);
    }
    posted.is_ok()
}

/// Runs completion callback `cb` with `result` on thread `tid`, after `delay`.
pub(crate) fn complete_later(
    state: &Arc<PepperState>,
    process: &Arc<Process>,
    tid: i32,
    cb: mem::Callback,
    result: i32,
    delay: Duration,
) {
    let task = move |cx: wasmtime::StoreContextMut<'_, Ctx>| {
        ppp::run_callback(cx, cb.func, cb.user_data, result)
    };
    if delay.is_zero() {
        post_counted(state, process, tid, task);
    } else {
        // The timer counts as pending until its task is posted (then the task does).
        state.activity.add(&state.activity.pending, 1);
        let s = state.clone();
        let p = Arc::downgrade(process);
        state.timers.after(delay, move || {
            if let Some(p) = p.upgrade() {
                post_counted(&s, &p, tid, task);
            }
            s.activity.add(&s.activity.pending, -1);
        });
    }
}

/// What an asynchronous PPB operation ends with: its result code, and the bytes to write
/// into module memory before its callback runs (what a read read, an output value), so
/// that the app sees them when the callback runs, as in Chrome.
#[derive(Debug, Default)]
pub(crate) struct Completion {
    pub result: i32,
    pub writes: Vec<(u32, Vec<u8>)>,
}

impl Completion {
    pub fn result(result: i32) -> Completion {
        Completion {
            result,
            writes: Vec::new(),
        }
    }
}

/// Runs an asynchronous PPB operation (`work`, which may block: it runs on a thread of
/// its own) with Chrome's callback rules:
/// * a blocking callback (`PP_BlockUntilComplete()`) is refused on the main thread with
///   `PP_ERROR_BLOCKS_MAIN_THREAD`; elsewhere the call waits and returns the result;
/// * otherwise the call returns `PP_OK_COMPLETIONPENDING` and the callback runs later on
///   the calling thread (the main thread, or a thread whose message loop is attached;
///   a thread without one gets `PP_ERROR_NO_MESSAGE_LOOP`), after `writes` are made.
pub(crate) fn start_async(
    caller: &mut Caller<'_, Ctx>,
    cb: mem::Callback,
    work: impl FnOnce() -> Completion + Send + 'static,
) -> wasmtime::Result<i32> {
    let s = state(caller)?;
    let tid = caller.data().thread().tid;
    if cb.is_blocking() {
        if tid == 0 {
            return Ok(pp_error::BLOCKS_MAIN_THREAD);
        }
        s.activity.add(&s.activity.pending, 1);
        let done = work();
        s.activity.add(&s.activity.pending, -1);
        for (addr, bytes) in done.writes {
            crate::write_memory(&mut *caller, addr, &bytes)?;
        }
        return Ok(done.result);
    }
    if tid != 0 && !has_attached_loop(&s, tid) {
        return Ok(pp_error::NO_MESSAGE_LOOP);
    }
    let p = process(caller)?;
    s.activity.add(&s.activity.pending, 1);
    let s2 = s.clone();
    let spawned = std::thread::Builder::new()
        .name("pepper operation".into())
        .spawn(move || {
            let done = work();
            post_counted(&s2, &p, tid, move |mut cx| {
                for (addr, bytes) in done.writes {
                    crate::write_memory(&mut cx, addr, &bytes)?;
                }
                ppp::run_callback(cx, cb.func, cb.user_data, done.result)
            });
            s2.activity.add(&s2.activity.pending, -1);
        });
    if spawned.is_err() {
        s.activity.add(&s.activity.pending, -1);
        return Ok(pp_error::NOMEMORY);
    }
    Ok(pp_error::COMPLETIONPENDING)
}

/// The error Chrome answers before anything else for callback `cb` on this thread, if
/// any: a blocking callback on the main thread (`PP_ERROR_BLOCKS_MAIN_THREAD`), a
/// non-blocking one on a thread without a message loop (`PP_ERROR_NO_MESSAGE_LOOP`).
pub(crate) fn callback_error(caller: &Caller<'_, Ctx>, cb: &mem::Callback) -> Option<i32> {
    let tid = caller.data().thread().tid;
    if cb.is_blocking() {
        (tid == 0).then_some(pp_error::BLOCKS_MAIN_THREAD)
    } else if tid != 0 {
        let s = state(caller).ok()?;
        (!has_attached_loop(&s, tid)).then_some(pp_error::NO_MESSAGE_LOOP)
    } else {
        None
    }
}

/// Answers an operation that completed at once with `result` (an error found before any
/// work, data already at hand), as Chrome's `EnterBase::SetResult` did: a required
/// callback runs later with the result and the call returns `PP_OK_COMPLETIONPENDING`;
/// an optional or blocking one is not run and the call returns the result. The callback
/// errors of [`callback_error`] come first.
pub(crate) fn answer_now(
    caller: &mut Caller<'_, Ctx>,
    cb: mem::Callback,
    result: i32,
) -> wasmtime::Result<i32> {
    if let Some(e) = callback_error(caller, &cb) {
        return Ok(e);
    }
    if cb.is_blocking() || cb.flags & mem::CALLBACK_OPTIONAL != 0 {
        return Ok(result);
    }
    start_async(caller, cb, move || Completion::result(result))
}

/// What an asynchronous operation does on its callback's thread just before the callback
/// runs, when plain writes are not enough (it calls into the module: a `PP_ArrayOutput`'s
/// `GetDataBuffer`, say). Returns the callback's result.
pub(crate) type Finish =
    Box<dyn for<'a> FnOnce(wasmtime::StoreContextMut<'a, Ctx>) -> wasmtime::Result<i32> + Send>;

/// [`start_async`] for an operation whose `work` ends with a [`Finish`], run on the
/// callback's thread (the calling thread itself for a blocking callback).
pub(crate) fn start_async_finishing(
    caller: &mut Caller<'_, Ctx>,
    cb: mem::Callback,
    work: impl FnOnce() -> Finish + Send + 'static,
) -> wasmtime::Result<i32> {
    let s = state(caller)?;
    let tid = caller.data().thread().tid;
    if let Some(e) = callback_error(caller, &cb) {
        return Ok(e);
    }
    if cb.is_blocking() {
        s.activity.add(&s.activity.pending, 1);
        let finish = work();
        s.activity.add(&s.activity.pending, -1);
        return finish(caller.as_context_mut());
    }
    let p = process(caller)?;
    s.activity.add(&s.activity.pending, 1);
    let s2 = s.clone();
    let spawned = std::thread::Builder::new()
        .name("pepper operation".into())
        .spawn(move || {
            let finish = work();
            post_counted(&s2, &p, tid, move |mut cx| {
                let result = finish(cx.as_context_mut())?;
                ppp::run_callback(cx, cb.func, cb.user_data, result)
            });
            s2.activity.add(&s2.activity.pending, -1);
        });
    if spawned.is_err() {
        s.activity.add(&s.activity.pending, -1);
        return Ok(pp_error::NOMEMORY);
    }
    Ok(pp_error::COMPLETIONPENDING)
}

/// Whether thread `tid` has a message loop attached (the main thread always has).
pub(crate) fn has_attached_loop(s: &PepperState, tid: i32) -> bool {
    if tid == 0 {
        return true;
    }
    let ids = lock(&s.loops).clone();
    let r = lock(&s.resources);
    ids.iter()
        .any(|&id| matches!(r.get(id), Some(Resource::MessageLoop(l)) if l.tid == Some(tid)))
}

impl Host for PepperHost {
    type State = PepperState;

    fn name(&self) -> &str {
        "pepper"
    }

    fn link(&self, linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
        let m = pexe2wasm::runtime::PEPPER_HOST;
        linker.func_wrap(m, "start", start)?;
        linker.func_wrap(m, "get_interface", get_interface)?;
        linker.func_wrap(
            m,
            "register_thread_creator",
            |caller: Caller<'_, Ctx>, create: i32, join: i32| -> wasmtime::Result<()> {
                *lock(&state(&caller)?.thread_creator) = Some((create as u32, join as u32));
                Ok(())
            },
        )?;
        linker.func_wrap(m, "fill", ppp::fill)?;
        linker.func_wrap(m, "done", ppp::done)?;
        linker.func_wrap(
            m,
            "wait",
            |caller: Caller<'_, Ctx>, what: i32| -> wasmtime::Result<()> {
                let s = state(&caller)?;
                // Only waits without a deadline count; a timed one is a timer.
                thread_local!(static UNTIMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
                match what {
                    1 => {
                        UNTIMED.with(|u| u.set(true));
                        s.activity.add(&s.activity.waiting, 1);
                    }
                    -1 => {
                        if UNTIMED.with(|u| u.replace(false)) {
                            s.activity.add(&s.activity.waiting, -1);
                        } else {
                            s.activity.generation.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    _ => {
                        UNTIMED.with(|u| u.set(false));
                        s.activity.generation.fetch_add(1, Ordering::SeqCst);
                    }
                }
                Ok(())
            },
        )?;
        ppb::link(linker)
    }

    fn link_module(
        &self,
        linker: &mut Linker<Ctx>,
        module: &wasmtime::Module,
    ) -> wasmtime::Result<()> {
        // PPB imports of interfaces this host does not offer: traps naming the function.
        // PPB_GetInterface answers NULL for those interfaces, so only a module that
        // kept a pointer from elsewhere could reach one.
        for import in module.imports() {
            let (iface, name) = (import.module(), import.name());
            if !iface.starts_with("PPB_") || OFFERED.contains(&iface) {
                continue;
            }
            if let wasmtime::ExternType::Func(ty) = import.ty() {
                let what = format!("{iface}.{name}");
                linker.func_new(iface, name, ty, move |_caller, _params, _results| {
                    Err(wasmtime::Error::msg(format!(
                        "the app called {what}, which the command-line Pepper host does not offer"
                    )))
                })?;
            }
        }
        Ok(())
    }

    fn new_state(&self, _opts: &RunOptions) -> wasmtime::Result<PepperState> {
        let config = lock(&self.config)
            .take()
            .unwrap_or_else(|| PepperConfig::new(Vec::new(), Arc::default()));
        let urls = fetch::UrlPolicy::new(config.origin.as_deref(), &config.url_map)
            .map_err(wasmtime::Error::msg)?;
        let storage = storage::Storage::new(config.storage.clone());
        // A bad events file stops the run before the app starts.
        let input = events::InputState::load(config.events.as_deref())?;
        Ok(PepperState {
            config,
            vars: Mutex::default(),
            resources: Mutex::default(),
            activity: Activity::default(),
            ppp: Mutex::default(),
            handler: Mutex::default(),
            missing: self.missing.clone(),
            asked: Mutex::default(),
            thread_creator: Mutex::default(),
            heap: Mutex::default(),
            started: Instant::now(),
            main_loop: Mutex::new(0),
            loops: Mutex::default(),
            timers: timers::Timers::default(),
            ended: AtomicBool::new(false),
            urls,
            storage,
            gfx: gfx::GfxState::default(),
            input,
            net: net::NetState::default(),
        })
    }

    fn thread_started(&self, state: &PepperState, thread: &ThreadInfo) {
        if thread.kind != ThreadKind::Main {
            state.activity.add(&state.activity.others, 1);
        }
    }

    fn thread_exited(&self, state: &PepperState, thread: &ThreadInfo) {
        if thread.kind != ThreadKind::Main {
            state.activity.add(&state.activity.others, -1);
        }
    }

    fn stopping(&self, state: &PepperState) {
        state.ended.store(true, Ordering::SeqCst);
        state.timers.stop();
        state.storage.end();
        net::stop(&state.resources());
    }
}

/// `pexe2wasm_ppapi.get_interface(name, len)`: whether this host offers the interface.
fn get_interface(mut caller: Caller<'_, Ctx>, name: i32, len: i32) -> wasmtime::Result<i32> {
    let s = state(&caller)?;
    let bytes = crate::read_memory(&mut caller, name as u32, len.clamp(0, 255) as u32)?;
    let name = String::from_utf8_lossy(&bytes).into_owned();
    let offered = OFFERED.contains(&name.as_str());
    if lock(&s.asked).insert(name.clone()) && !offered {
        lock(&s.missing).push(name);
    }
    Ok(offered as i32)
}

/// `pexe2wasm_ppapi.start(init, shutdown, get_interface, browser_get_interface)`: the main
/// loop (see the module documentation). Returns what `ppapi_start` returns.
fn start(
    mut caller: Caller<'_, Ctx>,
    init: i32,
    _shutdown: i32,
    get_interface: i32,
    _browser: i32,
) -> wasmtime::Result<i32> {
    let s = state(&caller)?;
    let process = process(&caller)?;
    {
        let main_loop = lock(&s.resources).add(Resource::MessageLoop(resources::MessageLoop {
            tid: Some(0),
            ..Default::default()
        }));
        *lock(&s.main_loop) = main_loop;
    }
    let r: i32 = call_export(&mut caller, "__ppp_initialize_module", (init, MODULE))?;
    if r != pp_error::OK {
        s.sink().note(&format!(
            "the app's PPP_InitializeModule failed ({r}); it does not start"
        ));
        return Ok(1);
    }
    let gi = get_interface as u32;
    let mut ppp = Ppp::default();
    ppp.instance = ppp::get_ppp_interface(&mut caller, gi, "PPP_Instance;1.1")?;
    if ppp.instance == 0 {
        ppp.instance = ppp::get_ppp_interface(&mut caller, gi, "PPP_Instance;1.0")?;
        ppp.instance_1_0 = ppp.instance != 0;
    }
    if ppp.instance == 0 {
        s.sink()
            .note("the app offers no PPP_Instance, so no instance can be made (Chrome unloads such a module)");
        return Ok(1);
    }
    ppp.messaging = ppp::get_ppp_interface(&mut caller, gi, "PPP_Messaging;1.0")?;
    ppp.input_event = ppp::get_ppp_interface(&mut caller, gi, "PPP_InputEvent;0.1")?;
    *lock(&s.ppp) = ppp;
    let [did_create, did_destroy, did_change_view, did_change_focus] =
        mem::read_i32s::<4>(&mut caller, ppp.instance)?;

    // DidCreate(instance, argc, argn, argv): the arrays, then the strings, on the stack.
    let attrs = s.config.attrs.clone();
    let argc = attrs.len() as i32;
    let mut strings = Vec::new();
    let mut offsets = Vec::new();
    let base = 8 * attrs.len();
    for (k, v) in &attrs {
        offsets.push((base + strings.len()) as u32);
        strings.extend_from_slice(k.as_bytes());
        strings.push(0);
        offsets.push((base + strings.len()) as u32);
        strings.extend_from_slice(v.as_bytes());
        strings.push(0);
    }
    let size = (base + strings.len()).max(1) as i32;
    let fill: ppp::Fill = Box::new(move |ptr| {
        let mut b = Vec::with_capacity(size as usize);
        for i in 0..attrs.len() {
            b.extend_from_slice(&(ptr + offsets[2 * i]).to_le_bytes());
        }
        for i in 0..attrs.len() {
            b.extend_from_slice(&(ptr + offsets[2 * i + 1]).to_le_bytes());
        }
        b.extend_from_slice(&strings);
        b
    });
    let created: i32 = ppp::call_with_buffer(
        &mut caller,
        "__ppp_callbuf_iiii_i",
        (did_create, size, 4 | 8, INSTANCE, argc, 0, 4 * argc),
        fill,
        None,
    )?;
    if created == 0 {
        s.sink()
            .note("the app's DidCreate returned false: the instance failed to start");
        return Ok(1);
    }

    // The view, then focus.
    let (w, h) = s.config.size;
    let view = View::of_size(w, h);
    if ppp.instance_1_0 {
        let mut rects = Vec::new();
        for r in [view.rect, view.clip] {
            for x in r {
                rects.extend_from_slice(&x.to_le_bytes());
            }
        }
        ppp::call_with_buffer::<_, ()>(
            &mut caller,
            "__ppp_callbuf_iii_v",
            (did_change_view, 32, 2 | 4, INSTANCE, 0, 16),
            Box::new(move |_| rects),
            None,
        )?;
    } else {
        let res = lock(&s.resources).add(Resource::View(view));
        call_export::<(i32, i32, i32), ()>(
            &mut caller,
            "__ppp_call_ii_v",
            (did_change_view, INSTANCE, res),
        )?;
        lock(&s.resources).release(res);
    }
    call_export::<(i32, i32, i32), ()>(
        &mut caller,
        "__ppp_call_ii_v",
        (did_change_focus, INSTANCE, 1),
    )?;

    events::start_replay(&s, &process);
    start_input(&s, &process)?;
    crate::run_loop(&mut caller)?;

    // The end: the handler's Destroy, then DidDestroy.
    if let Some(h) = lock(&s.handler).take() {
        if h.tid == 0 {
            call_export::<(i32, i32, i32), ()>(
                &mut caller,
                "__ppp_call_ii_v",
                (h.table[2] as i32, INSTANCE, h.user_data as i32),
            )?;
        }
    }
    call_export::<(i32, i32), ()>(&mut caller, "__ppp_call_i_v", (did_destroy, INSTANCE))?;
    Ok(0)
}

/// Starts the thread that reads the input (each line a message to the instance) and, once
/// it ends, watches for the end of the instance.
fn start_input(s: &Arc<PepperState>, process: &Arc<Process>) -> wasmtime::Result<()> {
    let s = s.clone();
    let weak = Arc::downgrade(process);
    std::thread::Builder::new()
        .name("pepper input".into())
        .spawn(move || {
            let deliver = |line: String| match weak.upgrade() {
                Some(p) => deliver_line(&s, &p, line),
                None => false,
            };
            match &s.config.input {
                MessageSource::Stdin => {
                    for line in std::io::stdin().lock().lines() {
                        match line {
                            Ok(l) => {
                                if !deliver(l) {
                                    break;
                                }
                            }
                            Err(e) => {
                                s.sink().note(&format!("standard input: {e}"));
                                break;
                            }
                        }
                    }
                }
                MessageSource::Lines(lines) => {
                    for l in lines {
                        if !deliver(l.clone()) {
                            break;
                        }
                    }
                }
                MessageSource::Channel(rx) => {
                    if let Some(rx) = lock(rx).take() {
                        while let Some(l) = recv_spinning(&rx) {
                            if !deliver(l) {
                                break;
                            }
                        }
                    }
                }
            }
            s.activity.input_done.store(true, Ordering::SeqCst);
            s.activity.generation.fetch_add(1, Ordering::SeqCst);
            watch_for_end(&s, &weak);
        })
        .map_err(|e| wasmtime::Error::msg(format!("cannot start the input thread: {e}")))?;
    Ok(())
}

/// The next line from a channel, spinning up to 50 µs before sleeping, as the mailboxes
/// do: an embedder that sends a message as soon as it has the answer to the last one
/// then finds the input thread awake (`crate::mailbox`). `None` at the channel's end.
fn recv_spinning(rx: &std::sync::mpsc::Receiver<String>) -> Option<String> {
    let start = Instant::now();
    loop {
        match rx.try_recv() {
            Ok(l) => return Some(l),
            Err(std::sync::mpsc::TryRecvError::Disconnected) => return None,
            Err(std::sync::mpsc::TryRecvError::Empty)
                if start.elapsed() < Duration::from_micros(50) =>
            {
                std::hint::spin_loop()
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => return rx.recv().ok(),
        }
    }
}

/// Waits (on the input thread) until the instance can make no progress or the time limit
/// after the input's end passes; then ends it.
fn watch_for_end(s: &Arc<PepperState>, process: &std::sync::Weak<Process>) {
    let deadline = s.config.timeout.map(|t| Instant::now() + t);
    let mut last: Option<u64> = None;
    loop {
        if s.ended.load(Ordering::SeqCst) {
            return;
        }
        let Some(p) = process.upgrade() else { return };
        if p.is_stopping() {
            return;
        }
        let (quiet, generation) = s.activity.quiet();
        let timed_out = deadline.is_some_and(|d| Instant::now() >= d);
        if (quiet && last == Some(generation)) || timed_out {
            if timed_out && !quiet {
                s.sink()
                    .note("the time limit after the end of input passed: ending the instance");
            }
            if let Ok(m) = p.mailbox(0) {
                let _ = m.quit();
            }
            // A main thread that does not take the quit (blocked in the app) ends with
            // the run, a second later.
            if timed_out {
                drop(p);
                std::thread::sleep(Duration::from_secs(1));
                if let Some(p) = process.upgrade() {
                    if !p.is_stopping() {
                        s.sink()
                            .note("the app's main thread did not return to its loop: stopping it");
                        p.exit(124);
                    }
                }
            }
            return;
        }
        last = quiet.then_some(generation);
        drop(p);
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Makes `line` a message and posts it to the instance; false when the run is gone.
fn deliver_line(s: &Arc<PepperState>, process: &Arc<Process>, line: String) -> bool {
    let var = {
        let mut vars = lock(&s.vars);
        match s.config.format {
            MessageFormat::Text => Ok(vars.string_from_utf8(line.as_bytes())),
            MessageFormat::Json => json::parse_line(&mut vars, &line),
        }
    };
    let var = match var {
        Ok(v) => v,
        Err(e) => {
            s.sink().note(&format!("input line not sent: {e}"));
            return true;
        }
    };
    post_message(s, process, var)
}

/// Delivers `var` (one reference, which the delivery releases) to the instance: to the
/// registered message handler's loop, else `PPP_Messaging.HandleMessage` on the main thread.
pub(crate) fn post_message(s: &Arc<PepperState>, process: &Arc<Process>, var: PpVar) -> bool {
    let handler = *lock(&s.handler);
    let messaging = lock(&s.ppp).messaging;
    let s2 = s.clone();
    let bytes = var.to_bytes();
    let posted = match handler {
        Some(h) => post_counted(s, process, h.tid, move |cx| {
            let r = ppp::call_with_buffer::<_, ()>(
                cx,
                "__ppp_callbuf_iii_v",
                (h.table[0] as i32, 16, 4, INSTANCE, h.user_data as i32, 0),
                Box::new(move |_| bytes.to_vec()),
                None,
            );
            lock(&s2.vars).release(var);
            r
        }),
        None if messaging != 0 => post_counted(s, process, 0, move |mut cx| {
            let handle = mem::read_u32(&mut cx, messaging)? as i32;
            let r = ppp::call_with_buffer::<_, ()>(
                cx,
                "__ppp_callbuf_ii_v",
                (handle, 16, 2, INSTANCE, 0),
                Box::new(move |_| bytes.to_vec()),
                None,
            );
            lock(&s2.vars).release(var);
            r
        }),
        None => {
            s.sink()
                .note("the app has no PPP_Messaging: the message is dropped, as in Chrome");
            lock(&s.vars).release(var);
            true
        }
    };
    if !posted {
        lock(&s.vars).release(var);
    }
    posted
}

/// Writes a `PP_Rect` at `addr`.
pub(crate) fn write_rect(
    cx: impl AsContextMut<Data = Ctx>,
    addr: i32,
    r: [i32; 4],
) -> wasmtime::Result<()> {
    mem::write_i32s(cx, addr as u32, &r)
}
