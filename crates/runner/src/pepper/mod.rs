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
//! # The main loop (`main_loop.rs`)
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
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use wasmtime::{AsContextMut, Caller, Linker};

use crate::host::{Ctx, Host, ThreadInfo, ThreadKind};
use crate::{Process, RunOptions};
use resources::Resources;
use var::VarStore;

pub use ppb::{entered_calls, OFFERED};

/// The module id handed to `PPP_InitializeModule`.
pub const MODULE: i32 = 1;
/// The one instance's id.
pub const INSTANCE: i32 = 2;

/// Pepper's result codes (`pp_errors.h`), generated from the interface description.
pub use pexe2wasm_ppapi::contract::pp_error;

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

mod callbacks;
mod heap;
mod main_loop;
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

/// The host state for a call on `instance`; `None` for an instance that is not ours (the
/// call then answers at once, as Chrome's `EnterInstance` did).
pub(crate) fn state_for(
    caller: &Caller<'_, Ctx>,
    instance: i32,
) -> wasmtime::Result<Option<Arc<PepperState>>> {
    let s = state(caller)?;
    Ok((instance == INSTANCE).then_some(s))
}

pub(crate) fn process(caller: &Caller<'_, Ctx>) -> wasmtime::Result<Arc<Process>> {
    caller
        .data()
        .process()
        .ok_or_else(|| wasmtime::Error::msg("no run"))
}

pub(crate) use callbacks::{
    answer_now, callback_error, complete_later, has_attached_loop, post_counted, start_async,
    start_async_finishing, Completion, Finish,
};

impl Host for PepperHost {
    type State = PepperState;

    fn name(&self) -> &str {
        "pepper"
    }

    fn link(&self, linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
        let m = pexe2wasm::runtime::PEPPER_HOST;
        linker.func_wrap(m, "start", main_loop::start)?;
        linker.func_wrap(m, "get_interface", main_loop::get_interface)?;
        linker.func_wrap(
            m,
            "register_thread_creator",
            |caller: Caller<'_, Ctx>, create: i32, join: i32| -> wasmtime::Result<()> {
                *lock(&state(&caller)?.thread_creator) = Some((create as u32, join as u32));
                Ok(())
            },
        )?;
        // A thread the host starts in the app (PPB_Audio's, in the browser host): this
        // host offers no interface that starts one, so a call is a bug.
        linker.func_wrap(
            m,
            "host_thread",
            |_caller: Caller<'_, Ctx>, arg: i32| -> wasmtime::Result<()> {
                Err(wasmtime::Error::msg(format!(
                    "pexe2wasm_ppapi.host_thread({arg}): the command-line host starts no threads of its own"
                )))
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

/// Writes a `PP_Rect` at `addr`.
pub(crate) fn write_rect(
    cx: impl AsContextMut<Data = Ctx>,
    addr: i32,
    r: [i32; 4],
) -> wasmtime::Result<()> {
    mem::write_i32s(cx, addr as u32, &r)
}
