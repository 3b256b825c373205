//! The IRT runtime module (`src/runtime/irt.wat`) under wasmtime + WASI preview 1.
//!
//! The runtime is instantiated on its own with its `env` imports provided by the test: a
//! host memory, table and globals, and `pexe_start` from a small WAT module that plays the
//! pexe. That module finds `__nacl_irt_query` the way libnacl does (auxv AT_SYSINFO in the
//! startup block) and then either runs a scenario by itself or exports `call_indirect`
//! trampolines through which the test calls IRT entries directly.

use pexe2wasm_testkit::corpus as common;

use pexe2wasm::runtime;
use pexe2wasm_runner::{self as run, CapturedStreams, Ctx, RunOptions};
use wasmtime::{
    Global, GlobalType, Instance, Memory, MemoryType, Module, Mutability, Ref, RefType, Store,
    Table, TableType, Val, ValType,
};

const HEAP_BASE: u32 = 0x10_0000;
const TABLE_BASE: u32 = 16;
/// Scratch area of the test "pexe" (its globals would live here).
const STR: u32 = 0x1_0000;
const STR2: u32 = 0x1_0400;
const TBL: u32 = 0x1_0800;
const OUT: u32 = 0x1_0c00;
const BUF: u32 = 0x1_1000;
const BIG: u32 = 0x1_8000;

const ENOENT: i32 = 2;
const EAGAIN: i32 = 11;
const ENOMEM: i32 = 12;
const EEXIST: i32 = 17;
const ENOTDIR: i32 = 20;
const EINVAL: i32 = 22;
const ENOTTY: i32 = 25;
const ERANGE: i32 = 34;
const ENOSYS: i32 = 38;
const ENOTEMPTY: i32 = 39;
const EBADF: i32 = 9;

/// The test pexe: `pexe_start` records the startup block and the query function pointer
/// from auxv, then returns (the runtime then exits with status 0). The exports call IRT
/// function pointers with each signature the IRT uses.
const DRIVER_WAT: &str = r#"
(module
  (import "env" "memory" (memory 1))
  (import "env" "__indirect_function_table" (table 0 funcref))
  (type $v_i (func (param i32)))
  (type $i_ (func (result i32)))
  (type $i_i (func (param i32) (result i32)))
  (type $i_ii (func (param i32 i32) (result i32)))
  (type $i_iii (func (param i32 i32 i32) (result i32)))
  (type $i_iiii (func (param i32 i32 i32 i32) (result i32)))
  (type $i_ili (func (param i32 i64 i32 i32) (result i32)))
  (type $i_il (func (param i32 i64) (result i32)))
  (type $i_mmap (func (param i32 i32 i32 i32 i32 i64) (result i32)))
  (global $block (mut i32) (i32.const 0))
  (global $query (mut i32) (i32.const 0))
  (func (export "pexe_start") (param $info i32)
    (local $aux i32)
    (global.set $block (local.get $info))
    ;; auxv = &envp[envc + 1], envp = &argv[argc + 1], argv = &info[3]
    (local.set $aux (i32.add (local.get $info)
      (i32.shl (i32.add (i32.add (i32.load offset=4 (local.get $info)) (i32.load offset=8 (local.get $info)))
                        (i32.const 5))
               (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load (local.get $aux))))
        (if (i32.eq (i32.load (local.get $aux)) (i32.const 32))
          (then (global.set $query (i32.load offset=4 (local.get $aux)))))
        (local.set $aux (i32.add (local.get $aux) (i32.const 8)))
        (br $next))))
  (func (export "block") (result i32) (global.get $block))
  (func (export "query_ptr") (result i32) (global.get $query))
  (func (export "c0") (param $f i32) (result i32) (call_indirect (type $i_) (local.get $f)))
  (func (export "v1") (param $f i32) (param i32) (call_indirect (type $v_i) (local.get 1) (local.get $f)))
  (func (export "c1") (param $f i32) (param i32) (result i32)
    (call_indirect (type $i_i) (local.get 1) (local.get $f)))
  (func (export "c2") (param $f i32) (param i32 i32) (result i32)
    (call_indirect (type $i_ii) (local.get 1) (local.get 2) (local.get $f)))
  (func (export "c3") (param $f i32) (param i32 i32 i32) (result i32)
    (call_indirect (type $i_iii) (local.get 1) (local.get 2) (local.get 3) (local.get $f)))
  (func (export "c4") (param $f i32) (param i32 i32 i32 i32) (result i32)
    (call_indirect (type $i_iiii) (local.get 1) (local.get 2) (local.get 3) (local.get 4) (local.get $f)))
  (func (export "c_ili") (param $f i32) (param i32 i64 i32 i32) (result i32)
    (call_indirect (type $i_ili) (local.get 1) (local.get 2) (local.get 3) (local.get 4) (local.get $f)))
  (func (export "c_il") (param $f i32) (param i32 i64) (result i32)
    (call_indirect (type $i_il) (local.get 1) (local.get 2) (local.get $f)))
  (func (export "c_mmap") (param $f i32) (param i32 i32 i32 i32 i32 i64) (result i32)
    (call_indirect (type $i_mmap) (local.get 1) (local.get 2) (local.get 3) (local.get 4)
                   (local.get 5) (local.get 6) (local.get $f)))
)
"#;

/// The scenario from the brief, entirely in wasm: find the query function through
/// AT_SYSINFO, get fdio, write "hello\n" with fdio.write, then basic.exit(7).
const HELLO_WAT: &str = r#"
(module
  (import "env" "memory" (memory 1))
  (import "env" "__indirect_function_table" (table 0 funcref))
  (type $query (func (param i32 i32 i32) (result i32)))
  (type $write (func (param i32 i32 i32 i32) (result i32)))
  (type $exit (func (param i32)))
  (data (i32.const 0x10000) "nacl-irt-fdio-0.1\00")
  (data (i32.const 0x10020) "nacl-irt-basic-0.1\00")
  (data (i32.const 0x10040) "hello\n")
  (func (export "pexe_start") (param $info i32)
    (local $aux i32) (local $q i32)
    (local.set $aux (i32.add (local.get $info)
      (i32.shl (i32.add (i32.add (i32.load offset=4 (local.get $info)) (i32.load offset=8 (local.get $info)))
                        (i32.const 5))
               (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load (local.get $aux))))
        (if (i32.eq (i32.load (local.get $aux)) (i32.const 32))
          (then (local.set $q (i32.load offset=4 (local.get $aux)))))
        (local.set $aux (i32.add (local.get $aux) (i32.const 8)))
        (br $next)))
    ;; fdio table (32 bytes) at 0x10100; basic (24 bytes) at 0x10200
    (if (i32.ne (call_indirect (type $query) (i32.const 0x10000) (i32.const 0x10100) (i32.const 32) (local.get $q))
                (i32.const 32))
      (then (unreachable)))
    (if (i32.ne (call_indirect (type $query) (i32.const 0x10020) (i32.const 0x10200) (i32.const 24) (local.get $q))
                (i32.const 24))
      (then (unreachable)))
    ;; fdio slot 4: write(fd, buf, count, &nwrote)
    (drop (call_indirect (type $write) (i32.const 1) (i32.const 0x10040) (i32.const 6) (i32.const 0x10300)
                         (i32.load offset=16 (i32.const 0x10100))))
    ;; basic slot 0: exit(status)
    (call_indirect (type $exit) (i32.const 7) (i32.load (i32.const 0x10200)))
    (unreachable))
)
"#;

/// The runtime instantiated with a test pexe, after `_start` returned or exited.
struct Harness {
    store: Store<Ctx>,
    memory: Memory,
    thread_pointer: Global,
    pexe: Instance,
    runtime: Instance,
    captured: CapturedStreams,
    /// How `_start` ended.
    start: Result<run::RunOutcome, run::RunError>,
}

impl Harness {
    fn new(pexe_wat: &str, opts: &RunOptions) -> Harness {
        let engine = run::new_engine(false).unwrap();
        let mut linker = run::wasi_linker(&engine).unwrap();
        let (ctx, captured) = run::wasi_ctx(opts).unwrap();
        let mut store = Store::new(&engine, Ctx::standalone(ctx));
        // Exactly up to __heap_base: the runtime must grow memory for its state.
        let memory =
            Memory::new(&mut store, MemoryType::new(HEAP_BASE >> 16, Some(65536))).unwrap();
        // Exactly large enough for the runtime's element segment.
        let table = Table::new(
            &mut store,
            TableType::new(RefType::FUNCREF, TABLE_BASE + runtime::TABLE_SLOTS, None),
            Ref::Func(None),
        )
        .unwrap();
        let i32_global = |store: &mut Store<Ctx>, mutable, v: u32| {
            let m = if mutable {
                Mutability::Var
            } else {
                Mutability::Const
            };
            Global::new(store, GlobalType::new(ValType::I32, m), Val::I32(v as i32)).unwrap()
        };
        let stack_pointer = i32_global(&mut store, true, HEAP_BASE);
        let thread_pointer = i32_global(&mut store, true, 0);
        let heap_base = i32_global(&mut store, false, HEAP_BASE);
        let table_base = i32_global(&mut store, false, TABLE_BASE);
        let env = runtime::ENV;
        linker
            .define(&store, env, runtime::ENV_MEMORY, memory)
            .unwrap();
        linker
            .define(&store, env, runtime::ENV_TABLE, table)
            .unwrap();
        linker
            .define(&store, env, runtime::ENV_STACK_POINTER, stack_pointer)
            .unwrap();
        linker
            .define(&store, env, runtime::ENV_THREAD_POINTER, thread_pointer)
            .unwrap();
        linker
            .define(&store, env, runtime::ENV_HEAP_BASE, heap_base)
            .unwrap();
        linker
            .define(&store, env, runtime::ENV_TABLE_BASE, table_base)
            .unwrap();

        let pexe_module = Module::new(&engine, pexe_wat).unwrap();
        let pexe = linker.instantiate(&mut store, &pexe_module).unwrap();
        let pexe_start = pexe.get_func(&mut store, "pexe_start").unwrap();
        linker
            .define(&store, env, runtime::ENV_PEXE_START, pexe_start)
            .unwrap();
        let rt_module = Module::new(&engine, runtime::irt_module()).unwrap();
        let rt = linker.instantiate(&mut store, &rt_module).unwrap();
        let start = rt
            .get_typed_func::<(), ()>(&mut store, runtime::EXPORT_START)
            .unwrap();
        let result = start.call(&mut store, ());
        let (out, err) = captured.contents();
        let start = match result {
            Ok(()) => Ok(run::RunOutcome {
                exit_code: 0,
                stdout: out,
                stderr: err,
            }),
            Err(e) => run::ended(e, None, out, err),
        };
        Harness {
            store,
            memory,
            thread_pointer,
            pexe,
            runtime: rt,
            captured,
            start,
        }
    }

    fn driver(opts: &RunOptions) -> Harness {
        let h = Harness::new(DRIVER_WAT, opts);
        match &h.start {
            Ok(o) => assert_eq!(o.exit_code, 0, "pexe_start returned, so _start exits 0"),
            Err(e) => panic!("_start failed: {e}"),
        }
        h
    }

    fn read(&self, addr: u32, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        self.memory
            .read(&self.store, addr as usize, &mut v)
            .unwrap();
        v
    }
    fn write(&mut self, addr: u32, bytes: &[u8]) {
        self.memory
            .write(&mut self.store, addr as usize, bytes)
            .unwrap();
    }
    fn cstr(&mut self, addr: u32, s: &str) -> u32 {
        let mut b = s.as_bytes().to_vec();
        b.push(0);
        self.write(addr, &b);
        addr
    }
    fn u32_at(&self, addr: u32) -> u32 {
        u32::from_le_bytes(self.read(addr, 4).try_into().unwrap())
    }
    fn i64_at(&self, addr: u32) -> i64 {
        i64::from_le_bytes(self.read(addr, 8).try_into().unwrap())
    }
    fn set_u32(&mut self, addr: u32, v: u32) {
        self.write(addr, &v.to_le_bytes());
    }

    fn call<P: wasmtime::WasmParams, R: wasmtime::WasmResults>(
        &mut self,
        name: &str,
        args: P,
    ) -> R {
        let f = self
            .pexe
            .get_typed_func::<P, R>(&mut self.store, name)
            .unwrap();
        f.call(&mut self.store, args).unwrap()
    }

    /// `__nacl_irt_query(name, TBL, size)` through the pointer found in auxv.
    fn query(&mut self, name: &str, size: u32) -> u32 {
        let q = self.call::<(), i32>("query_ptr", ());
        self.cstr(STR, name);
        self.call::<_, i32>("c3", (q, STR as i32, TBL as i32, size as i32)) as u32
    }

    /// The function pointers of an interface.
    fn iface(&mut self, name: &str) -> Vec<i32> {
        let size = runtime::INTERFACES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
            .unwrap();
        assert_eq!(self.query(name, size), size, "{name}");
        (0..size / 4)
            .map(|i| self.u32_at(TBL + 4 * i) as i32)
            .collect()
    }
}

fn opts() -> RunOptions {
    RunOptions {
        args: vec!["test.pexe".into()],
        ..RunOptions::default()
    }
}

#[test]
fn module_matches_the_contract() {
    let wasm = runtime::irt_module();
    let mut features = wasmparser::WasmFeatures::default();
    features |= wasmparser::WasmFeatures::MULTI_VALUE | wasmparser::WasmFeatures::BULK_MEMORY;
    wasmparser::Validator::new_with_features(features)
        .validate_all(wasm)
        .unwrap();
    let mut imports = Vec::new();
    let mut exports = Vec::new();
    let mut elems = Vec::new();
    let mut data_lens = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload.unwrap() {
            wasmparser::Payload::ImportSection(r) => {
                for imp in r.into_imports() {
                    let imp = imp.unwrap();
                    imports.push((imp.module.to_string(), imp.name.to_string()));
                }
            }
            wasmparser::Payload::ExportSection(r) => {
                for e in r {
                    exports.push(e.unwrap().name.to_string());
                }
            }
            wasmparser::Payload::ElementSection(r) => {
                for e in r {
                    let e = e.unwrap();
                    if let wasmparser::ElementItems::Functions(f) = e.items {
                        elems.push(f.count());
                    }
                }
            }
            wasmparser::Payload::DataSection(r) => {
                for d in r {
                    let d = d.unwrap();
                    assert!(matches!(d.kind, wasmparser::DataKind::Passive));
                    data_lens.push(d.data.len());
                    // The errno table at the start of the data agrees with nacl_errno.
                    for (w, &n) in d.data[..77].iter().enumerate() {
                        assert_eq!(
                            i32::from(n),
                            runtime::nacl_errno(w as u16),
                            "wasi errno {w}"
                        );
                    }
                }
            }
            _ => {}
        }
    }
    let env: Vec<&str> = imports
        .iter()
        .filter(|(m, _)| m == runtime::ENV)
        .map(|(_, n)| n.as_str())
        .collect();
    assert_eq!(
        env,
        [
            runtime::ENV_MEMORY,
            runtime::ENV_TABLE,
            runtime::ENV_STACK_POINTER,
            runtime::ENV_THREAD_POINTER,
            runtime::ENV_HEAP_BASE,
            runtime::ENV_TABLE_BASE,
            runtime::ENV_PEXE_START
        ]
    );
    assert!(imports
        .iter()
        .all(|(m, _)| m == runtime::ENV || m == runtime::WASI));
    for e in [
        runtime::EXPORT_START,
        runtime::EXPORT_IRT_QUERY,
        runtime::EXPORT_FMOD,
        runtime::EXPORT_FMODF,
    ] {
        assert!(exports.iter().any(|x| x == e), "missing export {e}");
    }
    assert_eq!(elems, [runtime::TABLE_SLOTS]);
    // _start copies exactly this many bytes with memory.init.
    assert_eq!(data_lens, [431]);
}

#[test]
fn hello_through_auxv_query_and_fdio_write() {
    let h = Harness::new(HELLO_WAT, &opts());
    let out = h.start.as_ref().unwrap();
    assert_eq!(out.stdout, b"hello\n");
    assert_eq!(out.exit_code, 7);
}

#[test]
fn startup_block_layout() {
    let o = RunOptions {
        args: vec!["prog".into(), "a".into(), "bc".into()],
        env: vec![("K".into(), "V".into()), ("HOME".into(), "/".into())],
        ..RunOptions::default()
    };
    let mut h = Harness::driver(&o);
    let b = h.call::<(), i32>("block", ()) as u32;
    let word = |h: &Harness, i: u32| h.u32_at(b + 4 * i);
    let cstring = |h: &Harness, p: u32| {
        let mut s = Vec::new();
        let mut a = p;
        loop {
            let c = h.read(a, 1)[0];
            if c == 0 {
                break;
            }
            s.push(c);
            a += 1;
        }
        String::from_utf8(s).unwrap()
    };
    assert!(
        b >= HEAP_BASE + 0x1_0000,
        "block above the runtime state page"
    );
    assert_eq!(word(&h, 0), 0, "fini");
    assert_eq!(word(&h, 1), 2, "envc");
    assert_eq!(word(&h, 2), 3, "argc");
    let argv: Vec<String> = (0..3).map(|i| cstring(&h, word(&h, 3 + i))).collect();
    assert_eq!(argv, ["prog", "a", "bc"]);
    assert_eq!(word(&h, 6), 0, "argv NULL");
    let envp: Vec<String> = (0..2).map(|i| cstring(&h, word(&h, 7 + i))).collect();
    assert_eq!(envp, ["K=V", "HOME=/"]);
    assert_eq!(word(&h, 9), 0, "envp NULL");
    assert_eq!((word(&h, 10), word(&h, 11)), (32, TABLE_BASE), "AT_SYSINFO");
    assert_eq!((word(&h, 12), word(&h, 13)), (0, 0), "AT_NULL");
    assert_eq!(h.call::<(), i32>("query_ptr", ()) as u32, TABLE_BASE);
    // Nothing from the host environment unless asked.
    let mut h2 = Harness::driver(&opts());
    let blk = h2.call::<(), i32>("block", ()) as u32;
    assert_eq!(h2.u32_at(blk + 4), 0, "envc");
    assert_eq!(h2.u32_at(blk + 8), 1, "argc");
}

#[test]
fn query_answers_every_interface_with_its_exact_size() {
    let mut h = Harness::driver(&opts());
    for &(name, size) in runtime::INTERFACES {
        assert_eq!(h.query(name, size), size, "{name} exact");
        let ptrs: Vec<u32> = (0..size / 4).map(|i| h.u32_at(TBL + 4 * i)).collect();
        for p in &ptrs {
            assert!(
                (TABLE_BASE + 1..TABLE_BASE + runtime::TABLE_SLOTS).contains(p),
                "{name}: pointer {p}"
            );
        }
        assert_eq!(h.query(name, size + 16), size, "{name} larger table");
        // Too small: 0, and the table is left alone.
        h.write(TBL, &[0xee; 64]);
        assert_eq!(h.query(name, size - 4), 0, "{name} too small");
        assert_eq!(h.query(name, 0), 0, "{name} zero");
        assert_eq!(h.read(TBL, 4), [0xee; 4]);
    }
    // The sizes of §2.2.
    let size = |n: &str| runtime::INTERFACES.iter().find(|x| x.0 == n).unwrap().1;
    assert_eq!(size("nacl-irt-basic-0.1"), 24);
    assert_eq!(size("nacl-irt-fdio-0.1"), 32);
    assert_eq!(size("nacl-irt-dev-fdio-0.2"), 52);
    assert_eq!(size("nacl-irt-dev-fdio-0.3"), 56);
    assert_eq!(size("nacl-irt-dev-filename-0.3"), 64);
    // fdio and dev-fdio-0.1 are the same table; dev-fdio-0.3 extends it.
    h.iface("nacl-irt-fdio-0.1");
    let fdio = h.read(TBL, 32);
    h.iface("nacl-irt-dev-fdio-0.3");
    assert_eq!(h.read(TBL, 32), fdio);
    for name in [
        "",
        "nacl-irt-basic-0.2",
        "nacl-irt-basic-0.1x",
        "nacl-irt-basic-0.",
        "nacl-irt-ppapihook-0.1",
        "nacl-irt-memory-0.1",
        "nacl-irt-exception-handling-0.1",
        "nacl-irt-dyncode-0.1",
        "NACL-IRT-BASIC-0.1",
    ] {
        assert_eq!(h.query(name, 256), 0, "{name:?}");
    }
    // A name longer than any record.
    let long = "x".repeat(300);
    assert_eq!(h.query(&long, 256), 0);
}

#[test]
fn exit_status_is_preserved() {
    for status in [0, 1, 42, 125, 126, 200, 255] {
        let mut h = Harness::driver(&opts());
        let exit = h.iface("nacl-irt-basic-0.1")[0];
        let f = h
            .pexe
            .get_typed_func::<(i32, i32), ()>(&mut h.store, "v1")
            .unwrap();
        let err = f.call(&mut h.store, (exit, status)).unwrap_err();
        let (o, e) = h.captured.contents();
        let outcome = run::ended(err, None, o, e).unwrap();
        assert_eq!(outcome.exit_code, status);
    }
}

#[test]
fn basic_sysconf_clocks_and_sleep() {
    let mut h = Harness::driver(&opts());
    let basic = h.iface("nacl-irt-basic-0.1");
    let (gettod, clock, nanosleep, sched_yield, sysconf) =
        (basic[1], basic[2], basic[3], basic[4], basic[5]);
    assert_eq!(h.call::<_, i32>("c2", (sysconf, 2, OUT as i32)), 0);
    assert_eq!(h.u32_at(OUT), 65536, "_SC_PAGESIZE");
    assert_eq!(h.call::<_, i32>("c2", (sysconf, 1, OUT as i32)), 0);
    assert_eq!(h.u32_at(OUT), 1, "_SC_NPROCESSORS_ONLN");
    assert_eq!(h.call::<_, i32>("c2", (sysconf, 12345, OUT as i32)), EINVAL);
    assert_eq!(h.call::<_, i32>("c0", (sched_yield,)), 0);

    assert_eq!(h.call::<_, i32>("c1", (gettod, OUT as i32)), 0);
    let sec = h.i64_at(OUT);
    let usec = h.u32_at(OUT + 8);
    assert!(sec > 1_600_000_000, "gettod seconds {sec}");
    assert!(usec < 1_000_000);
    assert_eq!(h.call::<_, i32>("c1", (clock, OUT as i32)), 0);

    let cg = h.iface("nacl-irt-clock_get-0.1");
    let (getres, gettime) = (cg[0], cg[1]);
    let now = |h: &mut Harness, id: i32| {
        assert_eq!(
            h.call::<_, i32>("c2", (gettime, id, OUT as i32)),
            0,
            "clock {id}"
        );
        let s = h.i64_at(OUT);
        let ns = h.u32_at(OUT + 8);
        assert!(ns < 1_000_000_000);
        s as i128 * 1_000_000_000 + ns as i128
    };
    let mut last = now(&mut h, 1);
    for _ in 0..100 {
        let t = now(&mut h, 1);
        assert!(t >= last, "monotonic");
        last = t;
    }
    assert!(now(&mut h, 0) > 1_600_000_000 * 1_000_000_000);
    now(&mut h, 2);
    now(&mut h, 3);
    assert_eq!(h.call::<_, i32>("c2", (gettime, 99, OUT as i32)), EINVAL);
    assert_eq!(h.call::<_, i32>("c2", (getres, 99, OUT as i32)), EINVAL);
    assert_eq!(h.call::<_, i32>("c2", (gettime, -1, OUT as i32)), EINVAL);
    assert_eq!(h.call::<_, i32>("c2", (getres, 1, OUT as i32)), 0);
    let res = h.i64_at(OUT) as i128 * 1_000_000_000 + h.u32_at(OUT + 8) as i128;
    assert!(res > 0 && res <= 1_000_000_000, "resolution {res}");
    assert_eq!(h.call::<_, i32>("c2", (getres, 0, 0)), 0, "res may be NULL");

    // nanosleep 2 ms
    h.write(BUF, &0i64.to_le_bytes());
    h.set_u32(BUF + 8, 2_000_000);
    let t0 = now(&mut h, 1);
    assert_eq!(
        h.call::<_, i32>("c2", (nanosleep, BUF as i32, OUT as i32)),
        0
    );
    let t1 = now(&mut h, 1);
    assert!(t1 - t0 >= 2_000_000, "slept {} ns", t1 - t0);
    h.set_u32(BUF + 8, 1_000_000_000);
    assert_eq!(h.call::<_, i32>("c2", (nanosleep, BUF as i32, 0)), EINVAL);
}

#[test]
fn tls_random_getpid_threads() {
    let mut h = Harness::driver(&opts());
    let tls = h.iface("nacl-irt-tls-0.1");
    assert_eq!(h.call::<_, i32>("c1", (tls[0], 0x12340)), 0);
    assert_eq!(h.call::<_, i32>("c0", (tls[1],)), 0x12340);
    assert_eq!(h.thread_pointer.get(&mut h.store).i32(), Some(0x12340));

    let random = h.iface("nacl-irt-random-0.1")[0];
    h.write(BIG, &[0; 256]);
    assert_eq!(
        h.call::<_, i32>("c3", (random, BIG as i32, 256, OUT as i32)),
        0
    );
    assert_eq!(h.u32_at(OUT), 256);
    assert!(h.read(BIG, 256).iter().filter(|&&b| b != 0).count() > 200);

    let getpid = h.iface("nacl-irt-dev-getpid-0.1")[0];
    assert_eq!(h.call::<_, i32>("c1", (getpid, OUT as i32)), 0);
    assert_eq!(h.u32_at(OUT), 1);

    let thread = h.iface("nacl-irt-thread-0.1");
    assert_eq!(
        h.call::<_, i32>("c3", (thread[0], 1, BIG as i32, 0)),
        EAGAIN
    );
    assert_eq!(h.call::<_, i32>("c1", (thread[2], 0)), 0);
    let futex = h.iface("nacl-irt-futex-0.1");
    h.set_u32(BUF, 5);
    assert_eq!(h.call::<_, i32>("c3", (futex[0], BUF as i32, 6, 0)), EAGAIN);
    assert_eq!(
        h.call::<_, i32>("c3", (futex[1], BUF as i32, 1, OUT as i32)),
        0
    );
    assert_eq!(h.u32_at(OUT), 0);
    // A deadline already past: ETIMEDOUT at once.
    h.write(BUF + 16, &1i64.to_le_bytes());
    h.set_u32(BUF + 24, 0);
    assert_eq!(
        h.call::<_, i32>("c3", (futex[0], BUF as i32, 5, (BUF + 16) as i32)),
        110
    );
}

#[test]
fn mmap_grows_reuses_and_zeroes() {
    let mut h = Harness::driver(&opts());
    let mem = h.iface("nacl-irt-memory-0.3");
    let (mmap, munmap, mprotect) = (mem[0], mem[1], mem[2]);
    const RW: i32 = 3;
    const PRIV_ANON: i32 = 0x22;
    let map = |h: &mut Harness, len: u32| -> (i32, u32) {
        h.set_u32(OUT, 0);
        let r = h.call::<_, i32>(
            "c_mmap",
            (mmap, OUT as i32, len as i32, RW, PRIV_ANON, -1, 0i64),
        );
        (r, h.u32_at(OUT))
    };
    let (r, a) = map(&mut h, 65536);
    assert_eq!(r, 0);
    assert_eq!(a % 65536, 0);
    assert!(a >= HEAP_BASE + 0x1_0000, "above the state page: {a:#x}");
    let pages_before = h.memory.size(&h.store);
    assert!(u64::from(a) + 65536 <= pages_before * 65536);
    let (_, b) = map(&mut h, 1000);
    assert_eq!(b, a + 65536);
    // Dirty a, free it, map again: the same pages, zeroed.
    h.write(a, &[0xab; 64]);
    assert_eq!(h.call::<_, i32>("c2", (munmap, a as i32, 65536)), 0);
    let (_, c) = map(&mut h, 65536);
    assert_eq!(c, a, "freed page reused");
    assert_eq!(h.read(a, 64), [0; 64]);
    // A larger mapping grows memory.
    let (r, d) = map(&mut h, 3 * 65536 + 1);
    assert_eq!(r, 0);
    assert!(d > b);
    assert!(h.memory.size(&h.store) >= u64::from(d / 65536 + 4));
    assert!(h.memory.size(&h.store) > pages_before);
    // Free the middle two pages of it, then ask for two: first fit finds them.
    assert_eq!(
        h.call::<_, i32>("c2", (munmap, (d + 65536) as i32, 2 * 65536)),
        0
    );
    let (_, e) = map(&mut h, 2 * 65536);
    assert_eq!(e, d + 65536);
    assert_eq!(h.call::<_, i32>("c3", (mprotect, a as i32, 65536, 0)), 0);
    // MAP_FIXED on a heap page.
    let fixed = d + 8 * 65536;
    h.set_u32(OUT, fixed);
    assert_eq!(
        h.call::<_, i32>(
            "c_mmap",
            (mmap, OUT as i32, 65536, RW, PRIV_ANON | 0x10, -1, 0i64)
        ),
        0
    );
    assert_eq!(h.u32_at(OUT), fixed);
    assert!(h.memory.size(&h.store) > u64::from(fixed / 65536));
    // MAP_FIXED below the heap (the program's data or stack) is refused.
    h.set_u32(OUT, 0x1_0000);
    assert_eq!(
        h.call::<_, i32>(
            "c_mmap",
            (mmap, OUT as i32, 65536, RW, PRIV_ANON | 0x10, -1, 0i64)
        ),
        EINVAL
    );
    // File mappings, empty mappings and misaligned unmaps: EINVAL.
    assert_eq!(
        h.call::<_, i32>("c_mmap", (mmap, OUT as i32, 65536, RW, 2, 3, 0i64)),
        EINVAL
    );
    assert_eq!(map(&mut h, 0).0, EINVAL);
    assert_eq!(
        h.call::<_, i32>("c2", (munmap, (a + 4) as i32, 65536)),
        EINVAL
    );
    assert_eq!(h.call::<_, i32>("c2", (munmap, 0x1_0000, 65536)), EINVAL);
    // More than the address space: ENOMEM, nothing written.
    h.set_u32(OUT, 77);
    assert_eq!(
        h.call::<_, i32>("c_mmap", (mmap, OUT as i32, -1, RW, PRIV_ANON, -1, 0i64)),
        ENOMEM
    );
    assert_eq!(h.u32_at(OUT), 77);
}

/// Offsets in the NaCl stat.
const ST_MODE: u32 = 16;
const ST_SIZE: u32 = 40;

#[test]
fn fdio_on_standard_streams() {
    let mut h = Harness::driver(&opts());
    let fdio = h.iface("nacl-irt-dev-fdio-0.3");
    let (close, dup, dup2, write, seek, fstat, isatty) = (
        fdio[0], fdio[1], fdio[2], fdio[4], fdio[5], fdio[6], fdio[13],
    );
    h.write(BUF, &[0xff; 104]);
    assert_eq!(h.call::<_, i32>("c2", (fstat, 1, BUF as i32)), 0);
    let mode = h.u32_at(BUF + ST_MODE);
    // Captured stdout is no terminal: no S_IFCHR.
    assert_ne!(mode & 0o170000, 0o020000, "mode {mode:o}");
    assert_eq!(h.call::<_, i32>("c2", (fstat, 99, BUF as i32)), EBADF);
    assert_eq!(h.call::<_, i32>("c2", (isatty, 1, OUT as i32)), ENOTTY);
    assert_eq!(h.u32_at(OUT), 0);
    assert_eq!(h.call::<_, i32>("c2", (isatty, 99, OUT as i32)), EBADF);
    h.cstr(STR, "to stdout");
    assert_eq!(
        h.call::<_, i32>("c4", (write, 1, STR as i32, 9, OUT as i32)),
        0
    );
    assert_eq!(h.u32_at(OUT), 9);
    h.cstr(STR, "to stderr");
    assert_eq!(
        h.call::<_, i32>("c4", (write, 2, STR as i32, 9, OUT as i32)),
        0
    );
    assert_eq!(
        h.call::<_, i32>("c4", (write, 99, STR as i32, 9, OUT as i32)),
        EBADF
    );
    // A pipe cannot seek.
    assert_eq!(
        h.call::<_, i32>("c_ili", (seek, 1, 0i64, 0, OUT as i32)),
        29,
        "ESPIPE"
    );
    assert_eq!(h.call::<_, i32>("c2", (dup, 1, OUT as i32)), ENOSYS);
    assert_eq!(h.call::<_, i32>("c2", (dup2, 1, 1)), 0);
    assert_eq!(h.call::<_, i32>("c2", (dup2, 1, 2)), ENOSYS);
    let (out, err) = h.captured.contents();
    assert_eq!(out, b"to stdout");
    assert_eq!(err, b"to stderr");
    assert_eq!(h.call::<_, i32>("c1", (close, 1)), 0);
    assert_eq!(h.call::<_, i32>("c1", (close, 1)), EBADF);
    // The runtime's own exports are callable directly too.
    assert!(h
        .runtime
        .get_func(&mut h.store, runtime::EXPORT_IRT_QUERY)
        .is_some());
}

#[test]
fn files_in_a_preopened_directory() {
    let dir = common::Scratch::new("files");
    std::fs::write(dir.dir().join("existing.txt"), b"0123456789").unwrap();
    std::fs::create_dir(dir.dir().join("sub")).unwrap();
    let o = RunOptions {
        dirs: vec![(dir.dir().to_path_buf(), "/data".into())],
        ..opts()
    };
    let mut h = Harness::driver(&o);
    let fdio = h.iface("nacl-irt-dev-fdio-0.3");
    let (close, read, write, seek, fstat, getdents, fsync, ftruncate, isatty) = (
        fdio[0], fdio[3], fdio[4], fdio[5], fdio[6], fdio[7], fdio[10], fdio[12], fdio[13],
    );
    let fname = h.iface("nacl-irt-dev-filename-0.3");
    let (open, stat, mkdir, rmdir, chdir, getcwd, unlink) = (
        fname[0], fname[1], fname[2], fname[3], fname[4], fname[5], fname[6],
    );
    let (truncate, lstat, link, rename, symlink, access, readlink, utimes) = (
        fname[7], fname[8], fname[9], fname[10], fname[11], fname[13], fname[14], fname[15],
    );
    const O_RDONLY: i32 = 0;
    const O_WRONLY: i32 = 1;
    const O_RDWR: i32 = 2;
    const O_CREAT: i32 = 0o100;
    const O_EXCL: i32 = 0o200;
    const O_TRUNC: i32 = 0o1000;
    const O_APPEND: i32 = 0o2000;
    const O_DIRECTORY: i32 = 0o200000;
    let open_fd = |h: &mut Harness, path: &str, flags: i32| -> Result<i32, i32> {
        h.cstr(STR, path);
        match h.call::<_, i32>("c4", (open, STR as i32, flags, 0o644, OUT as i32)) {
            0 => Ok(h.u32_at(OUT) as i32),
            e => Err(e),
        }
    };

    // Missing files: ENOENT, mapped from WASI's errno 44.
    assert_eq!(open_fd(&mut h, "/data/missing", O_RDONLY), Err(ENOENT));
    assert_eq!(open_fd(&mut h, "/elsewhere/x", O_RDONLY), Err(ENOENT));
    assert_eq!(open_fd(&mut h, "", O_RDONLY), Err(ENOENT));

    // Create and write.
    let fd = open_fd(&mut h, "/data/new.txt", O_WRONLY | O_CREAT | O_TRUNC).unwrap();
    assert!(fd >= 3);
    h.write(BUF, b"hello, file");
    assert_eq!(
        h.call::<_, i32>("c4", (write, fd, BUF as i32, 11, OUT as i32)),
        0
    );
    assert_eq!(h.u32_at(OUT), 11);
    assert_eq!(h.call::<_, i32>("c1", (fsync, fd)), 0);
    assert_eq!(h.call::<_, i32>("c2", (isatty, fd, OUT as i32)), ENOTTY);
    assert_eq!(h.call::<_, i32>("c1", (close, fd)), 0);
    assert_eq!(
        std::fs::read(dir.dir().join("new.txt")).unwrap(),
        b"hello, file"
    );
    assert_eq!(
        open_fd(&mut h, "/data/new.txt", O_WRONLY | O_CREAT | O_EXCL),
        Err(EEXIST)
    );

    // Read and seek, with the 64-bit offset written in full.
    let fd = open_fd(&mut h, "/data/existing.txt", O_RDONLY).unwrap();
    h.write(OUT, &[0xff; 8]);
    assert_eq!(
        h.call::<_, i32>("c_ili", (seek, fd, 3i64, 0, OUT as i32)),
        0
    );
    assert_eq!(h.i64_at(OUT), 3);
    assert_eq!(
        h.call::<_, i32>("c4", (read, fd, BUF as i32, 4, OUT as i32)),
        0
    );
    assert_eq!(h.u32_at(OUT), 4);
    assert_eq!(h.read(BUF, 4), b"3456");
    assert_eq!(
        h.call::<_, i32>("c_ili", (seek, fd, -2i64, 2, OUT as i32)),
        0
    );
    assert_eq!(h.i64_at(OUT), 8);
    assert_eq!(
        h.call::<_, i32>("c_ili", (seek, fd, 1i64, 1, OUT as i32)),
        0
    );
    assert_eq!(h.i64_at(OUT), 9);
    assert_eq!(
        h.call::<_, i32>("c_ili", (seek, fd, -100i64, 0, OUT as i32)),
        EINVAL
    );
    assert_eq!(
        h.call::<_, i32>("c_ili", (seek, fd, 0i64, 7, OUT as i32)),
        EINVAL
    );
    assert_eq!(
        h.call::<_, i32>("c4", (read, fd, BUF as i32, 100, OUT as i32)),
        0
    );
    assert_eq!(h.u32_at(OUT), 1);
    assert_eq!(
        h.call::<_, i32>("c4", (read, fd, BUF as i32, 100, OUT as i32)),
        0
    );
    assert_eq!(h.u32_at(OUT), 0, "end of file");
    // fstat of an open file
    assert_eq!(h.call::<_, i32>("c2", (fstat, fd, BUF as i32)), 0);
    assert_eq!(h.u32_at(BUF + ST_MODE) & 0o170000, 0o100000, "S_IFREG");
    assert_eq!(h.i64_at(BUF + ST_SIZE), 10);
    // Writing a read-only descriptor fails.
    assert_ne!(
        h.call::<_, i32>("c4", (write, fd, BUF as i32, 1, OUT as i32)),
        0
    );
    assert_eq!(h.call::<_, i32>("c1", (close, fd)), 0);

    // O_RDWR | O_APPEND
    let fd = open_fd(&mut h, "/data/new.txt", O_RDWR | O_APPEND).unwrap();
    h.write(BUF, b"!");
    assert_eq!(
        h.call::<_, i32>("c4", (write, fd, BUF as i32, 1, OUT as i32)),
        0
    );
    assert_eq!(h.call::<_, i32>("c_il", (ftruncate, fd, 5i64)), 0);
    assert_eq!(h.call::<_, i32>("c_il", (ftruncate, fd, -1i64)), EINVAL);
    assert_eq!(h.call::<_, i32>("c1", (close, fd)), 0);
    assert_eq!(std::fs::read(dir.dir().join("new.txt")).unwrap(), b"hello");

    // stat / lstat / access
    h.cstr(STR, "/data/existing.txt");
    assert_eq!(h.call::<_, i32>("c2", (stat, STR as i32, BUF as i32)), 0);
    assert_eq!(h.i64_at(BUF + ST_SIZE), 10);
    assert_eq!(h.u32_at(BUF + ST_MODE) & 0o170000, 0o100000);
    let mtime = h.i64_at(BUF + 72);
    assert!(mtime > 1_600_000_000, "st_mtime {mtime}");
    h.cstr(STR, "/data/sub");
    assert_eq!(h.call::<_, i32>("c2", (stat, STR as i32, BUF as i32)), 0);
    assert_eq!(h.u32_at(BUF + ST_MODE) & 0o170000, 0o040000, "S_IFDIR");
    h.cstr(STR, "/data/nope");
    assert_eq!(
        h.call::<_, i32>("c2", (stat, STR as i32, BUF as i32)),
        ENOENT
    );
    assert_eq!(h.call::<_, i32>("c2", (access, STR as i32, 0)), ENOENT);
    h.cstr(STR, "/data/existing.txt");
    assert_eq!(h.call::<_, i32>("c2", (access, STR as i32, 4)), 0);
    assert_eq!(h.call::<_, i32>("c2", (lstat, STR as i32, BUF as i32)), 0);

    // chdir, getcwd and relative paths ("." and ".." resolved).
    h.cstr(STR, "/data/sub/..");
    assert_eq!(h.call::<_, i32>("c1", (chdir, STR as i32)), 0);
    assert_eq!(h.call::<_, i32>("c2", (getcwd, BUF as i32, 64)), 0);
    assert_eq!(h.read(BUF, 6), b"/data\0");
    assert_eq!(h.call::<_, i32>("c2", (getcwd, BUF as i32, 5)), ERANGE);
    assert_eq!(
        open_fd(&mut h, "./sub/../existing.txt", O_RDONLY).map(|_| ()),
        Ok(())
    );
    h.cstr(STR, "existing.txt");
    assert_eq!(h.call::<_, i32>("c1", (chdir, STR as i32)), ENOTDIR);
    h.cstr(STR, "/");
    assert_eq!(h.call::<_, i32>("c1", (chdir, STR as i32)), 0);
    h.cstr(STR, "data");
    assert_eq!(h.call::<_, i32>("c1", (chdir, STR as i32)), 0);

    // mkdir / rmdir / rename / link / unlink / truncate / symlink / readlink / utimes
    h.cstr(STR, "made");
    assert_eq!(h.call::<_, i32>("c2", (mkdir, STR as i32, 0o755)), 0);
    assert!(dir.dir().join("made").is_dir());
    assert_eq!(h.call::<_, i32>("c2", (mkdir, STR as i32, 0o755)), EEXIST);
    std::fs::write(dir.dir().join("made/f"), b"x").unwrap();
    assert_eq!(h.call::<_, i32>("c1", (rmdir, STR as i32)), ENOTEMPTY);
    std::fs::remove_file(dir.dir().join("made/f")).unwrap();
    assert_eq!(h.call::<_, i32>("c1", (rmdir, STR as i32)), 0);
    assert!(!dir.dir().join("made").exists());
    h.cstr(STR, "new.txt");
    h.cstr(STR2, "/data/sub/renamed.txt");
    assert_eq!(h.call::<_, i32>("c2", (rename, STR as i32, STR2 as i32)), 0);
    assert!(dir.dir().join("sub/renamed.txt").is_file());
    h.cstr(STR, "sub/renamed.txt");
    h.cstr(STR2, "hard.txt");
    assert_eq!(h.call::<_, i32>("c2", (link, STR as i32, STR2 as i32)), 0);
    assert_eq!(std::fs::read(dir.dir().join("hard.txt")).unwrap(), b"hello");
    assert_eq!(h.call::<_, i32>("c_il", (truncate, STR2 as i32, 2i64)), 0);
    assert_eq!(std::fs::read(dir.dir().join("hard.txt")).unwrap(), b"he");
    assert_eq!(h.call::<_, i32>("c1", (unlink, STR2 as i32)), 0);
    assert!(!dir.dir().join("hard.txt").exists());
    assert_eq!(h.call::<_, i32>("c1", (unlink, STR2 as i32)), ENOENT);
    h.cstr(STR, "existing.txt");
    h.cstr(STR2, "sym");
    if h.call::<_, i32>("c2", (symlink, STR as i32, STR2 as i32)) == 0 {
        assert_eq!(
            h.call::<_, i32>("c4", (readlink, STR2 as i32, BUF as i32, 100, OUT as i32)),
            0
        );
        assert_eq!(h.u32_at(OUT), 12);
        assert_eq!(h.read(BUF, 12), b"existing.txt");
        assert_eq!(h.call::<_, i32>("c2", (lstat, STR2 as i32, BUF as i32)), 0);
        assert_eq!(h.u32_at(BUF + ST_MODE) & 0o170000, 0o120000, "S_IFLNK");
        assert_eq!(h.call::<_, i32>("c2", (stat, STR2 as i32, BUF as i32)), 0);
        assert_eq!(h.u32_at(BUF + ST_MODE) & 0o170000, 0o100000);
    }
    // utimes: set both times to 1e9 s + 5 µs.
    h.cstr(STR, "existing.txt");
    for i in 0..2 {
        h.write(BUF + 16 * i, &1_000_000_000i64.to_le_bytes());
        h.set_u32(BUF + 16 * i + 8, 5);
    }
    assert_eq!(h.call::<_, i32>("c2", (utimes, STR as i32, BUF as i32)), 0);
    assert_eq!(h.call::<_, i32>("c2", (stat, STR as i32, BUF as i32)), 0);
    assert_eq!(h.i64_at(BUF + 72), 1_000_000_000, "st_mtime");
    assert_eq!(h.call::<_, i32>("c2", (utimes, STR as i32, 0)), 0);

    // getdents on the directory, in a buffer that fits a few entries at a time.
    let fd = open_fd(&mut h, "/data", O_RDONLY | O_DIRECTORY).unwrap();
    let mut names = Vec::new();
    for _ in 0..100 {
        let r = h.call::<_, i32>("c4", (getdents, fd, BIG as i32, 80, OUT as i32));
        assert_eq!(r, 0);
        let n = h.u32_at(OUT);
        if n == 0 {
            break;
        }
        let bytes = h.read(BIG, n as usize);
        let mut off = 0usize;
        while off < bytes.len() {
            let reclen = u16::from_le_bytes([bytes[off + 16], bytes[off + 17]]) as usize;
            assert_eq!(reclen % 8, 0);
            let name = &bytes[off + 18..off + reclen];
            let end = name.iter().position(|&c| c == 0).unwrap();
            names.push(String::from_utf8(name[..end].to_vec()).unwrap());
            off += reclen;
        }
    }
    names.sort();
    let mut expect = vec![".", "..", "existing.txt", "sub"];
    if dir.dir().join("sym").exists() {
        expect.push("sym");
    }
    expect.sort();
    assert_eq!(names, expect);
    // rewinddir: seek to 0 reads from the start again.
    assert_eq!(
        h.call::<_, i32>("c_ili", (seek, fd, 0i64, 0, OUT as i32)),
        0
    );
    assert_eq!(
        h.call::<_, i32>("c4", (getdents, fd, BIG as i32, 4096, OUT as i32)),
        0
    );
    assert!(h.u32_at(OUT) > 0);
    // A buffer too small for one entry.
    assert_eq!(
        h.call::<_, i32>("c_ili", (seek, fd, 0i64, 0, OUT as i32)),
        0
    );
    assert_eq!(
        h.call::<_, i32>("c4", (getdents, fd, BIG as i32, 8, OUT as i32)),
        EINVAL
    );
    assert_eq!(h.call::<_, i32>("c1", (close, fd)), 0);
    assert_eq!(
        h.call::<_, i32>("c4", (getdents, 1, BIG as i32, 4096, OUT as i32)),
        EBADF
    );
}

#[test]
fn root_preopen_and_relative_guest_names() {
    let dir = common::Scratch::new("root");
    std::fs::write(dir.dir().join("f"), b"abc").unwrap();
    let o = RunOptions {
        dirs: vec![(dir.dir().to_path_buf(), ".".into())],
        ..opts()
    };
    let mut h = Harness::driver(&o);
    let fname = h.iface("nacl-irt-filename-0.1");
    for p in ["/f", "f", "./f", "/../f", "//f"] {
        h.cstr(STR, p);
        assert_eq!(
            h.call::<_, i32>("c2", (fname[1], STR as i32, BUF as i32)),
            0,
            "{p}"
        );
        assert_eq!(h.i64_at(BUF + ST_SIZE), 3, "{p}");
    }
    h.cstr(STR, "/");
    assert_eq!(
        h.call::<_, i32>("c2", (fname[1], STR as i32, BUF as i32)),
        0
    );
    assert_eq!(h.u32_at(BUF + ST_MODE) & 0o170000, 0o040000);
}

#[test]
fn errno_mapping() {
    // WASI errno → NaCl (Linux) errno.
    for (wasi, nacl) in [
        (0, 0),
        (2, 13),   // EACCES
        (6, 11),   // EAGAIN
        (8, 9),    // EBADF
        (20, 17),  // EEXIST
        (28, 22),  // EINVAL
        (29, 5),   // EIO
        (31, 21),  // EISDIR
        (44, 2),   // ENOENT
        (52, 38),  // ENOSYS
        (54, 20),  // ENOTDIR
        (55, 39),  // ENOTEMPTY
        (59, 25),  // ENOTTY
        (63, 1),   // EPERM
        (70, 29),  // ESPIPE
        (73, 110), // ETIMEDOUT
        (76, 13),  // ENOTCAPABLE → EACCES
        (77, 5),
        (1000, 5),
    ] {
        assert_eq!(runtime::nacl_errno(wasi), nacl, "wasi {wasi}");
    }
}

fn fmod_values_f64() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        3.0,
        -3.0,
        10.0,
        0.1,
        0.3,
        1e-300,
        1e300,
        -1e300,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE / 3.0,
        f64::from_bits(1),
        f64::from_bits(0x8000_0000_0000_0001),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::EPSILON,
        std::f64::consts::PI,
        -std::f64::consts::E,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        123456789.0,
        9007199254740993.0,
        (2.0f64).powi(1023),
        (2.0f64).powi(-1074),
        (2.0f64).powi(-1022) * 1.5,
    ];
    // Pseudo-random bit patterns: every exponent, NaNs and subnormals included.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(f64::from_bits(x));
        // Nearby exponents too, where the loop does real work.
        v.push(f64::from_bits(
            (x & 0x800f_ffff_ffff_ffff) | (0x3ff0_0000_0000_0000 + ((x >> 20) & 0x3f) * (1 << 52)),
        ));
    }
    v
}

#[test]
fn fmod_matches_rust_remainder() {
    let mut h = Harness::driver(&opts());
    let fmod = h
        .runtime
        .get_typed_func::<(f64, f64), f64>(&mut h.store, runtime::EXPORT_FMOD)
        .unwrap();
    let fmodf = h
        .runtime
        .get_typed_func::<(f32, f32), f32>(&mut h.store, runtime::EXPORT_FMODF)
        .unwrap();
    check_fmod(&mut h.store, &fmod, &fmodf);
}

/// The fmod linked into a module converted without the runtime (emit/fmod.wat) gives the
/// same bits, and a huge exponent gap costs it little: fmod(1.2e107, 2.2e-317) took some
/// 200,000 instructions before (the differential fuzzer's finding of 2026-11-27).
#[test]
fn fallback_fmod_matches_rust_remainder_and_is_quick() {
    let mut config = wasmtime::Config::new();
    config.consume_fuel(true);
    let engine = wasmtime::Engine::new(&config).unwrap();
    let module = wasmtime::Module::new(&engine, pexe2wasm::emit::fmod_module()).unwrap();
    let mut store = wasmtime::Store::new(&engine, ());
    store.set_fuel(u64::MAX).unwrap();
    let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
    let fmod = instance
        .get_typed_func::<(f64, f64), f64>(&mut store, "__pnacl_fmod")
        .unwrap();
    let fmodf = instance
        .get_typed_func::<(f32, f32), f32>(&mut store, "__pnacl_fmodf")
        .unwrap();
    check_fmod(&mut store, &fmod, &fmodf);
    for (x, y) in [
        (1.1994016609335816e107, 2.1693983e-317),
        (f64::MAX, f64::from_bits(1)),
        (f64::MAX, 1.0),
    ] {
        store.set_fuel(10_000).unwrap();
        let got = fmod.call(&mut store, (x, y)).expect("within 10,000 fuel");
        assert_eq!(got.to_bits(), (x % y).to_bits(), "fmod({x:e}, {y:e})");
    }
    store.set_fuel(2_000).unwrap();
    let (x, y) = (f32::MAX, f32::from_bits(1));
    let got = fmodf.call(&mut store, (x, y)).expect("within 2,000 fuel");
    assert_eq!(got.to_bits(), (x % y).to_bits());
}

/// fmod and fmodf against Rust's `%` (C's fmod) on a grid of edge values and on random
/// f32 bit patterns, bit for bit.
fn check_fmod<T>(
    store: &mut wasmtime::Store<T>,
    fmod: &wasmtime::TypedFunc<(f64, f64), f64>,
    fmodf: &wasmtime::TypedFunc<(f32, f32), f32>,
) {
    let vals = fmod_values_f64();
    let mut checked = 0;
    for &x in &vals {
        for &y in &vals {
            let got = fmod.call(&mut *store, (x, y)).unwrap();
            let want = x % y;
            if want.is_nan() {
                assert!(got.is_nan(), "fmod({x:e}, {y:e}) = {got:e}, want NaN");
            } else {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "fmod({x:e} [{:#x}], {y:e} [{:#x}]) = {got:e}, want {want:e}",
                    x.to_bits(),
                    y.to_bits()
                );
            }
            let (xf, yf) = (x as f32, y as f32);
            let (xf, yf) = if x.is_finite() && xf.is_infinite() {
                (
                    f32::from_bits(x.to_bits() as u32),
                    f32::from_bits((y.to_bits() >> 32) as u32),
                )
            } else {
                (xf, yf)
            };
            let got = fmodf.call(&mut *store, (xf, yf)).unwrap();
            let want = xf % yf;
            if want.is_nan() {
                assert!(got.is_nan(), "fmodf({xf:e}, {yf:e}) = {got:e}, want NaN");
            } else {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "fmodf({xf:e} [{:#x}], {yf:e} [{:#x}]) = {got:e}, want {want:e}",
                    xf.to_bits(),
                    yf.to_bits()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 300_000);
    // Bit patterns for f32 directly, subnormals included.
    let mut x: u32 = 0x1234_5678;
    let mut pats = vec![
        0u32,
        0x8000_0000,
        1,
        0x8000_0001,
        0x007f_ffff,
        0x0080_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x3f80_0000,
        0x7f7f_ffff,
    ];
    for _ in 0..400 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        pats.push(x);
    }
    for &a in &pats {
        for &b in &pats {
            let (xf, yf) = (f32::from_bits(a), f32::from_bits(b));
            let got = fmodf.call(&mut *store, (xf, yf)).unwrap();
            let want = xf % yf;
            if want.is_nan() {
                assert!(got.is_nan());
            } else {
                assert_eq!(got.to_bits(), want.to_bits(), "fmodf({a:#x}, {b:#x})");
            }
        }
    }
}

/// build.rs compiles the built-in modules when the crate is built; what it embedded is
/// what their WAT sources compile to now (a stale or differently processed copy fails).
#[test]
fn built_in_modules_are_their_sources_compiled() {
    assert_eq!(
        runtime::irt_module(),
        wat::parse_str(runtime::IRT_WAT).unwrap(),
        "irt.wat"
    );
    assert_eq!(
        runtime::irt_threads_module(),
        wat::parse_str(runtime::irt_source(true)).unwrap(),
        "irt.wat, threaded variant"
    );
    assert_eq!(
        runtime::irt_pepper_module(),
        wat::parse_str(runtime::irt_pepper_source()).unwrap(),
        "irt.wat, Pepper variant"
    );
    assert_eq!(
        pexe2wasm::emit::fmod_module(),
        wat::parse_str(pexe2wasm::emit::FMOD_WAT).unwrap(),
        "fmod.wat"
    );
}
