//! Hosts: what a set of imports needs from the runner (see the crate documentation).

use std::any::{Any, TypeId};
use std::sync::{Arc, Weak};

use wasmtime::{Instance, Linker, Module};
use wasmtime_wasi::p1::WasiP1Ctx;

use crate::fastwrite::StdSinks;
use crate::mailbox::Mailbox;
use crate::process::Process;
use crate::RunOptions;

/// A provider of imports (the NaCl IRT's host side, a Pepper host, a test host …).
///
/// One value of the type is added to a [`crate::Program`]; every run of the program makes
/// a fresh [`Host::State`] that all its threads share. Import functions are ordinary
/// wasmtime host functions over the store data [`Ctx`]; they find the state with
/// [`Ctx::state`] and the run with [`Ctx::process`].
pub trait Host: Send + Sync + 'static {
    /// What one run of the program shares between its threads (resources, queues, …).
    type State: Send + Sync + 'static;

    /// A short name for error messages.
    fn name(&self) -> &str;

    /// Adds this host's imports. Every store of the run (every thread) uses this linker, so
    /// the functions must not assume a thread: they read [`Ctx::thread`].
    fn link(&self, linker: &mut Linker<Ctx>) -> wasmtime::Result<()>;

    /// Adds what depends on the module being run (e.g. traps for the imports of a family
    /// this host owns but does not implement), after every host's [`Host::link`].
    fn link_module(&self, _linker: &mut Linker<Ctx>, _module: &Module) -> wasmtime::Result<()> {
        Ok(())
    }

    /// The state for a new run, made before any thread starts.
    fn new_state(&self, opts: &RunOptions) -> wasmtime::Result<Self::State>;

    /// A thread of the run is about to run its entry (main: `_start`), on its own OS thread.
    fn thread_started(&self, _state: &Self::State, _thread: &ThreadInfo) {}

    /// A thread's entry ended (returned, exited or trapped), on that thread.
    fn thread_exited(&self, _state: &Self::State, _thread: &ThreadInfo) {}

    /// The run is ending (exit, last thread, trap or time limit): wake whatever of this
    /// host blocks outside wasm. Called once, from the thread that ended the run.
    fn stopping(&self, _state: &Self::State) {}
}

/// Which thread a store belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadInfo {
    /// 0 for the main thread, then 1, 2, … in spawn order (module and host threads alike).
    pub tid: i32,
    pub kind: ThreadKind,
}

/// How a thread came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadKind {
    /// Runs `_start`.
    Main,
    /// Started by the module (`wasi`.`thread-spawn`); runs `wasi_thread_start`.
    Module,
    /// Started by a host ([`Process::spawn_thread`]); runs the host's entry.
    Host,
}

/// A [`Host`] with its state type erased, so a program can hold several.
pub(crate) trait AnyHost: Send + Sync {
    fn name(&self) -> &str;
    fn host_type(&self) -> TypeId;
    fn link(&self, linker: &mut Linker<Ctx>) -> wasmtime::Result<()>;
    fn link_module(&self, linker: &mut Linker<Ctx>, module: &Module) -> wasmtime::Result<()>;
    /// An `Arc<H::State>`, boxed.
    fn new_state(&self, opts: &RunOptions) -> wasmtime::Result<Box<dyn Any + Send + Sync>>;
    fn thread_started(&self, state: &(dyn Any + Send + Sync), thread: &ThreadInfo);
    fn thread_exited(&self, state: &(dyn Any + Send + Sync), thread: &ThreadInfo);
    fn stopping(&self, state: &(dyn Any + Send + Sync));
}

impl<H: Host> AnyHost for H {
    fn name(&self) -> &str {
        Host::name(self)
    }
    fn host_type(&self) -> TypeId {
        TypeId::of::<H>()
    }
    fn link(&self, linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
        Host::link(self, linker)
    }
    fn link_module(&self, linker: &mut Linker<Ctx>, module: &Module) -> wasmtime::Result<()> {
        Host::link_module(self, linker, module)
    }
    fn new_state(&self, opts: &RunOptions) -> wasmtime::Result<Box<dyn Any + Send + Sync>> {
        Ok(Box::new(Arc::new(Host::new_state(self, opts)?)))
    }
    fn thread_started(&self, state: &(dyn Any + Send + Sync), thread: &ThreadInfo) {
        if let Some(s) = state.downcast_ref::<Arc<H::State>>() {
            Host::thread_started(self, s, thread);
        }
    }
    fn thread_exited(&self, state: &(dyn Any + Send + Sync), thread: &ThreadInfo) {
        if let Some(s) = state.downcast_ref::<Arc<H::State>>() {
            Host::thread_exited(self, s, thread);
        }
    }
    fn stopping(&self, state: &(dyn Any + Send + Sync)) {
        if let Some(s) = state.downcast_ref::<Arc<H::State>>() {
            Host::stopping(self, s);
        }
    }
}

/// The hosts of one run with their states, in the order they were added.
#[derive(Default)]
pub(crate) struct HostStates {
    entries: Vec<(Arc<dyn AnyHost>, Box<dyn Any + Send + Sync>)>,
}

impl HostStates {
    pub(crate) fn new(
        hosts: &[Arc<dyn AnyHost>],
        opts: &RunOptions,
    ) -> Result<HostStates, crate::RunError> {
        let mut entries = Vec::with_capacity(hosts.len());
        for h in hosts {
            let state = h.new_state(opts).map_err(|e| {
                crate::RunError::Host(format!("host {}: cannot start: {e:#}", h.name()))
            })?;
            entries.push((h.clone(), state));
        }
        Ok(HostStates { entries })
    }

    fn get<H: Host>(&self) -> Option<&Arc<H::State>> {
        let id = TypeId::of::<H>();
        self.entries
            .iter()
            .find(|(h, _)| h.host_type() == id)
            .and_then(|(_, s)| s.downcast_ref::<Arc<H::State>>())
    }

    pub(crate) fn thread_started(&self, thread: &ThreadInfo) {
        for (h, s) in &self.entries {
            h.thread_started(s.as_ref(), thread);
        }
    }

    pub(crate) fn thread_exited(&self, thread: &ThreadInfo) {
        for (h, s) in &self.entries {
            h.thread_exited(s.as_ref(), thread);
        }
    }

    pub(crate) fn stopping(&self) {
        for (h, s) in &self.entries {
            h.stopping(s.as_ref());
        }
    }
}

/// The data of every store: one per thread of a run.
pub struct Ctx {
    wasi: WasiP1Ctx,
    thread: ThreadInfo,
    process: Weak<Process>,
    hosts: Arc<HostStates>,
    instance: Option<Instance>,
    memory: Option<crate::guest::Mem>,
    mailbox: Arc<Mailbox>,
    /// Where fd 1 and 2 go without wasmtime-wasi (`fastwrite.rs`; none outside a run).
    stdio_sinks: StdSinks,
}

impl Ctx {
    pub(crate) fn new(
        wasi: WasiP1Ctx,
        thread: ThreadInfo,
        process: Weak<Process>,
        hosts: Arc<HostStates>,
    ) -> Ctx {
        Ctx {
            wasi,
            thread,
            process,
            hosts,
            instance: None,
            memory: None,
            mailbox: Arc::new(Mailbox::new(thread.tid)),
            stdio_sinks: StdSinks::default(),
        }
    }

    /// A context outside any run (no process, no host state): for instantiating modules
    /// by hand, as tests of the IRT do. Spawning threads fails there.
    pub fn standalone(wasi: WasiP1Ctx) -> Ctx {
        Ctx::new(
            wasi,
            ThreadInfo {
                tid: 0,
                kind: ThreadKind::Main,
            },
            Weak::new(),
            Arc::default(),
        )
    }

    /// A context outside any run that holds `host`'s state for `opts`: for testing a
    /// host's imports one by one over a store of its own (no process: imports that need
    /// one, such as those that start threads or post to other threads, fail there).
    pub fn standalone_with_host<H: Host>(
        wasi: WasiP1Ctx,
        host: H,
        opts: &RunOptions,
    ) -> Result<Ctx, crate::RunError> {
        let hosts: Vec<Arc<dyn AnyHost>> = vec![Arc::new(host)];
        let states = HostStates::new(&hosts, opts)?;
        Ok(Ctx::new(
            wasi,
            ThreadInfo {
                tid: 0,
                kind: ThreadKind::Main,
            },
            Weak::new(),
            Arc::new(states),
        ))
    }

    /// This thread's WASI preview 1 context.
    pub fn wasi(&mut self) -> &mut WasiP1Ctx {
        &mut self.wasi
    }

    /// Which thread this store runs.
    pub fn thread(&self) -> ThreadInfo {
        self.thread
    }

    /// The run this thread belongs to (`None` outside a run, or once the run has ended and
    /// its caller has returned).
    pub fn process(&self) -> Option<Arc<Process>> {
        self.process.upgrade()
    }

    /// Host `H`'s state for this run (`None` if `H` is not among the program's hosts).
    pub fn state<H: Host>(&self) -> Option<&Arc<H::State>> {
        self.hosts.get::<H>()
    }

    /// The module instance of this store (`None` before instantiation).
    pub fn instance(&self) -> Option<Instance> {
        self.instance
    }

    pub(crate) fn set_instance(&mut self, instance: Instance) {
        self.instance = Some(instance);
        self.memory = None;
    }

    pub(crate) fn memory_cache(&self) -> Option<&crate::guest::Mem> {
        self.memory.as_ref()
    }

    pub(crate) fn set_memory_cache(&mut self, m: crate::guest::Mem) {
        self.memory = Some(m);
    }

    pub(crate) fn stdio_sinks(&self) -> &StdSinks {
        &self.stdio_sinks
    }

    pub(crate) fn stdio_sinks_mut(&mut self) -> &mut StdSinks {
        &mut self.stdio_sinks
    }

    pub(crate) fn set_stdio_sinks(&mut self, sinks: StdSinks) {
        self.stdio_sinks = sinks;
    }

    /// Sets the instance of a store made by hand ([`Ctx::standalone_with_host`]), so that
    /// host imports find its memory and exports.
    pub fn set_instance_for_tests(&mut self, instance: Instance) {
        self.set_instance(instance);
    }

    /// Makes a store made by hand pose as `thread`, for tests of what hosts answer on
    /// threads other than the main one.
    pub fn set_thread_for_tests(&mut self, thread: ThreadInfo) {
        self.thread = thread;
    }

    /// This thread's mailbox: tasks posted there run on this thread inside
    /// [`crate::run_loop`].
    pub fn mailbox(&self) -> &Arc<Mailbox> {
        &self.mailbox
    }
}
