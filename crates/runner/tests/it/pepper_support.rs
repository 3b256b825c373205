//! Calling the command-line Pepper host's PPB functions one by one, from Rust, as a
//! module would: a store holding the host's state and a small module (`HARNESS`) that
//! provides what the host needs of a converted plugin (its memory, the page allocator and
//! the entry points for callbacks). Tests read and write the memory directly.

use std::sync::Arc;

use pexe2wasm_runner::pepper::var::PpVar;
use pexe2wasm_runner::pepper::{CaptureSink, PepperConfig, PepperHost, PepperState};
use pexe2wasm_runner::wasmtime::{Extern, Linker, Memory, Store, Val};
use pexe2wasm_runner::{new_engine, Ctx, Host, RunOptions, ThreadInfo, ThreadKind};

/// What the host calls in a plugin, done minimally: a bump allocator for
/// `__ppapi_alloc` (from 1 MiB), `__ppp_call_ii_v` and a 64-entry table; the rest of a
/// harness module ([`module`]) follows it.
const BASE: &str = r#"
  (memory (export "memory") 64)
  (table (export "__indirect_function_table") 64 funcref)
  (global $next (mut i32) (i32.const 0x100000))
  (func (export "__ppapi_alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $next))
    (global.set $next (i32.and (i32.add (i32.add (global.get $next) (local.get $len)) (i32.const 65535))
                               (i32.const -65536)))
    (local.get $p))
  (func (export "__ppp_call_ii_v") (param $f i32) (param $a i32) (param $b i32)
    (call_indirect (param i32 i32) (local.get $a) (local.get $b) (local.get $f)))
"#;

/// A harness module: [`BASE`] and `more` (`__ppapi_free`, callbacks in the table, …).
pub fn module(more: &str) -> String {
    format!("(module{BASE}{more})")
}

/// The rest of the usual harness module ([`Harness::new`]).
const HARNESS: &str = r#"
  (func (export "__ppapi_free") (param i32 i32))
  (func (export "__ppp_call_iii_i") (param $f i32) (param $a i32) (param $b i32) (param $c i32)
    (result i32)
    (call_indirect (param i32 i32 i32) (result i32)
      (local.get $a) (local.get $b) (local.get $c) (local.get $f)))
  ;; Table slot 1: a PP_ArrayOutput GetDataBuffer that notes its count and size at
  ;; GET_BUFFER_LOG and hands out user_data as the buffer (NULL for user_data 0).
  (func $get_buffer (param $ud i32) (param $count i32) (param $size i32) (result i32)
    (i32.store (i32.const 0x40) (local.get $count))
    (i32.store (i32.const 0x44) (local.get $size))
    (i32.store (i32.const 0x48) (i32.add (i32.load (i32.const 0x48)) (i32.const 1)))
    (local.get $ud))
  ;; Table slot 2: a completion callback that does nothing.
  (func $callback (param i32 i32))
  (elem (i32.const 1) $get_buffer $callback)
"#;

/// Table slot of the harness's `PP_ArrayOutput.GetDataBuffer`; it writes the count and
/// size it was asked for at `GET_BUFFER_LOG` and `+ 4`, counts its calls at `+ 8`.
pub const GET_BUFFER: u32 = 1;
pub const GET_BUFFER_LOG: u32 = 0x40;
/// Table slot of a completion callback that does nothing (for optional callbacks).
pub const NOOP_CALLBACK: u32 = 2;

pub struct Harness {
    pub store: Store<Ctx>,
    pub linker: Linker<Ctx>,
    pub memory: Memory,
    pub sink: Arc<CaptureSink>,
}

impl Harness {
    pub fn new() -> Harness {
        Harness::with_config(|_| {})
    }

    /// A harness whose host's configuration `edit` changed (`--origin`, `--storage`, …).
    pub fn with_config(edit: impl FnOnce(&mut PepperConfig)) -> Harness {
        let sink = Arc::new(CaptureSink::default());
        let mut config = PepperConfig::new(Vec::new(), sink.clone());
        edit(&mut config);
        Harness::custom(config, sink, &module(HARNESS))
    }

    /// The host's state could not be made (a bad configuration): the error.
    pub fn start_error(edit: impl FnOnce(&mut PepperConfig)) -> String {
        let mut config = PepperConfig::new(Vec::new(), Arc::default());
        edit(&mut config);
        let wasi = pexe2wasm_runner::wasi_ctx(&RunOptions::default())
            .unwrap()
            .0;
        match Ctx::standalone_with_host(wasi, PepperHost::new(config), &RunOptions::default()) {
            Ok(_) => panic!("the host started"),
            Err(e) => e.to_string(),
        }
    }

    /// Calls from now on come from thread `tid` (0: the main thread; others are module
    /// threads without a message loop).
    pub fn on_thread(&mut self, tid: i32) {
        self.set_thread(tid);
    }

    /// Calls from now on come from thread `tid` (a module thread) instead of the main one.
    pub fn set_thread(&mut self, tid: i32) {
        let kind = if tid == 0 {
            ThreadKind::Main
        } else {
            ThreadKind::Module
        };
        self.store
            .data_mut()
            .set_thread_for_tests(ThreadInfo { tid, kind });
    }

    /// Writes `PP_BlockUntilComplete()` at `at`; its address.
    pub fn blocking_callback(&mut self, at: u32) -> i32 {
        self.write(at, &[0; 12]);
        at as i32
    }

    /// Writes an optional callback (one that need not run when the call completes at
    /// once) at `at`; its address.
    pub fn optional_callback(&mut self, at: u32) -> i32 {
        let mut b = Vec::new();
        for v in [NOOP_CALLBACK, 0, 1] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        self.write(at, &b);
        at as i32
    }

    /// The string a var at `at` holds (None for other vars).
    pub fn string_at(&self, at: u32) -> Option<String> {
        let v = self.read_var(at);
        self.state().vars().string(v).map(str::to_string)
    }

    /// Writes a NUL-terminated `text` at `at`; its address.
    pub fn cstr(&mut self, at: u32, text: &[u8]) -> i32 {
        let mut b = text.to_vec();
        b.push(0);
        self.write(at, &b);
        at as i32
    }

    /// Calls with arguments of any type; the first result as i32 (0 for none).
    pub fn call_vals(&mut self, interface: &str, function: &str, args: &[Val]) -> i32 {
        match self.try_call(interface, function, args) {
            Ok(r) => match r.first() {
                Some(Val::I32(v)) => *v,
                None => 0,
                Some(other) => panic!("{interface}.{function} returned {other:?}"),
            },
            Err(e) => panic!("{interface}.{function}: {e}"),
        }
    }

    pub fn read_i64(&self, addr: u32) -> i64 {
        i64::from_le_bytes(self.read(addr, 8).try_into().unwrap())
    }

    pub fn read_f64(&self, addr: u32) -> f64 {
        f64::from_le_bytes(self.read(addr, 8).try_into().unwrap())
    }

    /// A harness whose host runs with `config` (its sink is `sink`) over the module `wat`,
    /// which provides what [`BASE`] does and adds to it (callbacks in its table, a
    /// `__ppapi_free` that records its calls).
    pub fn custom(config: PepperConfig, sink: Arc<CaptureSink>, wat: &str) -> Harness {
        let engine = new_engine(false).unwrap();
        let mut linker: Linker<Ctx> = Linker::new(&engine);
        let host = PepperHost::new(config);
        Host::link(&host, &mut linker).unwrap();
        let wasi = pexe2wasm_runner::wasi_ctx(&RunOptions::default())
            .unwrap()
            .0;
        let ctx = Ctx::standalone_with_host(wasi, host, &RunOptions::default()).unwrap();
        let mut store = Store::new(&engine, ctx);
        let module =
            pexe2wasm_runner::wasmtime::Module::new(&engine, wat::parse_str(wat).unwrap()).unwrap();
        let instance = linker.instantiate(&mut store, &module).unwrap();
        store.data_mut().set_instance_for_tests(instance);
        let memory = instance.get_memory(&mut store, "memory").unwrap();
        Harness {
            store,
            linker,
            memory,
            sink,
        }
    }

    pub fn state(&self) -> Arc<PepperState> {
        self.store.data().state::<PepperHost>().unwrap().clone()
    }

    /// Calls `interface`.`function` with i32 arguments; its i32 result (0 for none).
    pub fn call(&mut self, interface: &str, function: &str, args: &[i32]) -> i32 {
        let f = match self.linker.get(&mut self.store, interface, function) {
            Ok(Extern::Func(f)) => f,
            _ => panic!("{interface}.{function} is not registered"),
        };
        let params: Vec<Val> = args.iter().map(|&a| Val::I32(a)).collect();
        let mut results = vec![Val::I32(0); f.ty(&self.store).results().len()];
        f.call(&mut self.store, &params, &mut results)
            .unwrap_or_else(|e| panic!("{interface}.{function}: {e:#}"));
        match results.first() {
            Some(Val::I32(v)) => *v,
            Some(other) => panic!("{interface}.{function} returned {other:?}"),
            None => 0,
        }
    }

    /// Like [`Harness::call`], the error instead of a panic.
    pub fn try_call(
        &mut self,
        interface: &str,
        function: &str,
        args: &[Val],
    ) -> Result<Vec<Val>, String> {
        let f = match self.linker.get(&mut self.store, interface, function) {
            Ok(Extern::Func(f)) => f,
            _ => return Err(format!("{interface}.{function} is not registered")),
        };
        let mut results = vec![Val::I32(0); f.ty(&self.store).results().len()];
        f.call(&mut self.store, args, &mut results)
            .map_err(|e| format!("{e:#}"))?;
        Ok(results)
    }

    pub fn write(&mut self, addr: u32, bytes: &[u8]) {
        self.memory
            .write(&mut self.store, addr as usize, bytes)
            .unwrap();
    }

    pub fn read(&self, addr: u32, len: u32) -> Vec<u8> {
        let mut b = vec![0; len as usize];
        self.memory
            .read(&self.store, addr as usize, &mut b)
            .unwrap();
        b
    }

    pub fn read_u32(&self, addr: u32) -> u32 {
        u32::from_le_bytes(self.read(addr, 4).try_into().unwrap())
    }

    pub fn write_var(&mut self, addr: u32, v: PpVar) {
        self.write(addr, &v.to_bytes());
    }

    pub fn read_var(&self, addr: u32) -> PpVar {
        PpVar::from_bytes(self.read(addr, 16).try_into().unwrap())
    }

    /// A string var made through `PPB_Var;1.1.VarFromUtf8`, its PP_Var stored at `at`.
    pub fn make_string(&mut self, text: &str, at: u32) -> PpVar {
        let data = at + 0x100;
        self.write(data, text.as_bytes());
        self.call(
            "PPB_Var;1.1",
            "VarFromUtf8",
            &[at as i32, data as i32, text.len() as i32],
        );
        self.read_var(at)
    }
}
