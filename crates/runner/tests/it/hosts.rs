//! Hosts besides the IRT's plug into the runner from outside it: a host that adds one
//! import (called from the main thread and from a module thread), and hosts that take over
//! the main thread with a loop that runs work posted from other threads, including a thread
//! the host started itself. The modules are small hand-written WAT.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pexe2wasm_runner::{
    call_export, call_function_pointer, read_memory, run_loop, write_memory, Ctx, Host, PostError,
    Program, RunError, RunOptions, SpawnError, ThreadInfo,
};
use wasmtime::{Caller, Linker};

fn opts() -> RunOptions {
    RunOptions {
        args: vec!["prog".into()],
        ..RunOptions::default()
    }
}

/// What a test host saw, shared between the test and every run's state.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn push(&self, event: String) {
        self.0.lock().unwrap().push(event);
    }
    fn events(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
    fn has(&self, event: &str) -> bool {
        self.events().iter().any(|e| e == event)
    }
}

fn thread_name(t: &ThreadInfo) -> String {
    format!("{} {:?}", t.tid, t.kind)
}

/// `test`.`add(i32, i32) -> i32`, logging which thread called it, and every thread's
/// start and end.
struct AddHost {
    log: Arc<Log>,
}

impl Host for AddHost {
    type State = Arc<Log>;

    fn name(&self) -> &str {
        "test-add"
    }

    fn link(&self, linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
        linker.func_wrap(
            "test",
            "add",
            |caller: Caller<'_, Ctx>, a: i32, b: i32| -> i32 {
                let cx = caller.data();
                if let Some(log) = cx.state::<AddHost>() {
                    log.push(format!("add {a} {b} in {}", thread_name(&cx.thread())));
                }
                a.wrapping_add(b)
            },
        )?;
        Ok(())
    }

    fn new_state(&self, _opts: &RunOptions) -> wasmtime::Result<Arc<Log>> {
        Ok(self.log.clone())
    }

    fn thread_started(&self, log: &Arc<Log>, thread: &ThreadInfo) {
        log.push(format!("start {}", thread_name(thread)));
    }

    fn thread_exited(&self, log: &Arc<Log>, thread: &ThreadInfo) {
        log.push(format!("exit {}", thread_name(thread)));
    }

    fn stopping(&self, log: &Arc<Log>) {
        log.push("stopping".into());
    }
}

fn program(wat: &str) -> Program {
    Program::new(&wat::parse_str(wat).unwrap(), true).unwrap()
}

#[test]
fn a_host_adds_an_import() {
    let wat = r#"(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (import "test" "add" (func $add (param i32 i32) (result i32)))
      (memory (export "memory") 1)
      (func (export "_start") (call $exit (call $add (i32.const 40) (i32.const 2)))))"#;
    // Without the host the import is missing.
    let Err(RunError::Instantiate(m)) = program(wat).run(&opts()) else {
        panic!("expected a missing import");
    };
    assert!(m.contains("add"), "{m}");

    let log = Arc::new(Log::default());
    let mut p = program(wat);
    p.add_host(AddHost { log: log.clone() }).unwrap();
    assert_eq!(p.run(&opts()).unwrap().exit_code, 42);
    assert_eq!(
        log.events(),
        [
            "start 0 Main",
            "add 40 2 in 0 Main",
            "exit 0 Main",
            "stopping"
        ]
    );
    // Every run gets the host's state afresh (here the same log, so the events repeat).
    assert_eq!(p.run(&opts()).unwrap().exit_code, 42);
    assert_eq!(log.events().len(), 8);

    // A host type joins once.
    let again = p.add_host(AddHost { log: log.clone() });
    assert!(matches!(again, Err(RunError::Host(_))));
}

#[test]
fn a_host_import_from_a_module_thread() {
    // The spawned thread adds 1 + 2 and hands the sum over; the main thread adds 10 and
    // exits with it.
    let log = Arc::new(Log::default());
    let mut p = program(
        r#"(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
      (import "pexe2wasm" "thread_exit" (func $thread_exit))
      (import "test" "add" (func $add (param i32 i32) (result i32)))
      (import "env" "memory" (memory 1 1 shared))
      (func (export "_start")
        (if (i32.le_s (call $spawn (i32.const 0)) (i32.const 0)) (then (unreachable)))
        (block $done (loop $wait
          (br_if $done (i32.atomic.load (i32.const 100)))
          (drop (memory.atomic.wait32 (i32.const 100) (i32.const 0) (i64.const -1)))
          (br $wait)))
        (call $exit (call $add (i32.load (i32.const 104)) (i32.const 10))))
      (func (export "wasi_thread_start") (param $tid i32) (param $arg i32)
        (i32.store (i32.const 104) (call $add (i32.const 1) (i32.const 2)))
        (i32.atomic.store (i32.const 100) (i32.const 1))
        (drop (memory.atomic.notify (i32.const 100) (i32.const 1)))
        (call $thread_exit)))"#,
    );
    assert!(p.is_threaded());
    p.add_host(AddHost { log: log.clone() }).unwrap();
    assert_eq!(p.run(&opts()).unwrap().exit_code, 13);
    for e in [
        "start 0 Main",
        "start 1 Module",
        "add 1 2 in 1 Module",
        "add 3 10 in 0 Main",
    ] {
        assert!(log.has(e), "{e:?} in {:?}", log.events());
    }
    assert_eq!(log.events().iter().filter(|e| *e == "stopping").count(), 1);
}

/// What the main thread's loop import does.
#[derive(Clone, Copy)]
enum Mode {
    /// Starts a host thread that computes `work(21)` in its own instance, writes it to the
    /// shared memory at 256 and posts it to the main thread, which stores it (function
    /// pointer 1) in its instance's global; then quits the loop. The import returns `get()`
    /// if the memory holds the same, else -1.
    Deliver,
    /// Just runs the loop (until the run ends under it).
    Idle,
    /// Posts a task that calls `boom` (a trap) to itself, then runs the loop.
    Boom,
    /// Checks the primitives' errors in a module that is not threaded; returns 5.
    Probe,
}

/// `test`.`main_loop() -> i32`: takes over the main thread (see [`Mode`]).
struct LoopHost {
    mode: Mode,
    log: Arc<Log>,
}

impl Host for LoopHost {
    type State = (Mode, Arc<Log>);

    fn name(&self) -> &str {
        "test-loop"
    }

    fn link(&self, linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
        linker.func_wrap("test", "main_loop", main_loop)?;
        Ok(())
    }

    fn new_state(&self, _opts: &RunOptions) -> wasmtime::Result<Self::State> {
        Ok((self.mode, self.log.clone()))
    }

    fn stopping(&self, (_, log): &Self::State) {
        log.push("stopping".into());
    }
}

fn main_loop(mut caller: Caller<'_, Ctx>) -> wasmtime::Result<i32> {
    let process = caller.data().process().expect("a run");
    let (mode, log) = caller.data().state::<LoopHost>().expect("state").as_ref();
    let (mode, log) = (*mode, log.clone());
    let main = caller.data().mailbox().clone();
    match mode {
        Mode::Deliver => {
            process.spawn_thread(move |mut cx| {
                log.push(format!("host thread {}", thread_name(&cx.data().thread())));
                let v: i32 = call_export(&mut cx, "work", 21)?;
                write_memory(&mut cx, 256, &v.to_le_bytes())?;
                main.post(move |cx| call_function_pointer::<i32, ()>(cx, 1, v))?;
                main.quit()?;
                Ok(())
            })?;
            run_loop(&mut caller)?;
            let got = call_export::<(), i32>(&mut caller, "get", ())?;
            let bytes = read_memory(&mut caller, 256, 4)?;
            Ok(if bytes == got.to_le_bytes() { got } else { -1 })
        }
        Mode::Idle => {
            run_loop(&mut caller)?;
            Ok(0)
        }
        Mode::Boom => {
            main.post(|cx| call_export::<(), ()>(cx, "boom", ()))?;
            run_loop(&mut caller)?;
            Ok(0)
        }
        Mode::Probe => {
            let spawned = process.spawn_thread(|_| Ok(()));
            log.push(format!(
                "spawn: {}",
                matches!(spawned, Err(SpawnError::NotThreaded))
            ));
            let posted = process.mailbox(5).map(|_| ());
            log.push(format!(
                "mailbox 5: {}",
                posted == Err(PostError::NoThread(5))
            ));
            for pointer in [0, 1, 99] {
                let r = call_function_pointer::<i32, ()>(&mut caller, pointer, 0);
                log.push(format!("pointer {pointer}: {}", r.is_err()));
            }
            let r = call_export::<(), ()>(&mut caller, "missing", ());
            log.push(format!("missing export: {}", r.is_err()));
            write_memory(&mut caller, 64, b"abcd")?;
            let back = read_memory(&mut caller, 62, 6)?;
            log.push(format!("memory: {back:?}"));
            let end = 65536 - 2;
            log.push(format!(
                "out of bounds: {} {} {}",
                read_memory(&mut caller, end, 4).is_err(),
                write_memory(&mut caller, end, b"abcd").is_err(),
                read_memory(&mut caller, u32::MAX, 2).is_err(),
            ));
            // Nothing of the failed write landed.
            log.push(format!("tail: {:?}", read_memory(&mut caller, end, 2)?));
            // Quitting before the loop: it runs what was posted, then returns.
            main.post(|cx| call_export::<i32, ()>(cx, "set", 5))?;
            main.quit()?;
            run_loop(&mut caller)?;
            call_export::<(), i32>(&mut caller, "get", ())
        }
    }
}

/// A module whose `_start` exits with `main_loop()`; threaded or not. A threaded one's
/// `_start` first spawns a thread that exits 7 if `spawn` is set.
fn loop_module(threaded: bool, spawn: bool) -> String {
    let (imports, thread_start) = if threaded {
        (
            r#"(import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
               (import "env" "memory" (memory 1 1 shared))
               (export "memory" (memory 0))"#,
            r#"(func (export "wasi_thread_start") (param i32 i32) (call $exit (i32.const 7)))"#,
        )
    } else {
        (r#"(memory (export "memory") 1)"#, "")
    };
    let spawn = if spawn {
        "(drop (call $spawn (i32.const 0)))"
    } else {
        ""
    };
    format!(
        r#"(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (import "test" "main_loop" (func $main_loop (result i32)))
      {imports}
      (table (export "__indirect_function_table") 2 funcref)
      (elem (i32.const 1) $set)
      (global $g (mut i32) (i32.const 0))
      (func $set (export "set") (param i32) (global.set $g (local.get 0)))
      (func (export "get") (result i32) (global.get $g))
      (func (export "work") (param i32) (result i32) (i32.mul (local.get 0) (i32.const 2)))
      (func $boom (export "boom") (drop (i32.div_u (i32.const 1) (global.get $g))))
      {thread_start}
      (func (export "_start") {spawn} (call $exit (call $main_loop))))"#
    )
}

fn loop_program(threaded: bool, mode: Mode, log: &Arc<Log>) -> Program {
    let mut p = program(&loop_module(threaded, false));
    assert_eq!(p.is_threaded(), threaded);
    p.add_host(LoopHost {
        mode,
        log: log.clone(),
    })
    .unwrap();
    p
}

#[test]
fn a_host_takes_over_the_main_thread_and_calls_back() {
    let log = Arc::new(Log::default());
    let p = loop_program(true, Mode::Deliver, &log);
    // 21 doubled by the host thread's instance, stored in the main instance's own global
    // by the posted task: the task ran on the main thread.
    assert_eq!(p.run(&opts()).unwrap().exit_code, 42);
    assert!(log.has("host thread 1 Host"), "{:?}", log.events());
}

#[test]
fn primitives_refuse_what_they_cannot_do() {
    let log = Arc::new(Log::default());
    let p = loop_program(false, Mode::Probe, &log);
    assert_eq!(p.run(&opts()).unwrap().exit_code, 5);
    assert_eq!(
        log.events(),
        [
            "spawn: true",
            "mailbox 5: true",
            "pointer 0: true",
            // Function 1 exists and has the type (i32) -> ().
            "pointer 1: false",
            "pointer 99: true",
            "missing export: true",
            "memory: [0, 0, 97, 98, 99, 100]",
            "out of bounds: true true true",
            "tail: [0, 0]",
            "stopping",
        ]
    );
}

#[test]
fn exit_in_another_thread_ends_a_host_loop() {
    // The main thread idles in the loop; a module thread exits 7.
    let log = Arc::new(Log::default());
    let mut p = program(&loop_module(true, true));
    p.add_host(LoopHost {
        mode: Mode::Idle,
        log: log.clone(),
    })
    .unwrap();
    assert_eq!(p.run(&opts()).unwrap().exit_code, 7);
    assert_eq!(log.events(), ["stopping"]);
}

#[test]
fn time_limit_ends_a_host_loop() {
    for threaded in [false, true] {
        let log = Arc::new(Log::default());
        let p = loop_program(threaded, Mode::Idle, &log);
        let o = RunOptions {
            timeout: Some(Duration::from_millis(200)),
            ..opts()
        };
        let start = Instant::now();
        assert!(
            matches!(p.run(&o), Err(RunError::Timeout(_))),
            "threaded {threaded}"
        );
        assert!(start.elapsed() < Duration::from_secs(10));
        assert_eq!(log.events(), ["stopping"]);
    }
}

#[test]
fn a_trap_in_a_posted_task_is_a_trap_of_the_program() {
    for threaded in [false, true] {
        let log = Arc::new(Log::default());
        let p = loop_program(threaded, Mode::Boom, &log);
        let Err(RunError::Trap(t)) = p.run(&opts()) else {
            panic!("expected a trap (threaded {threaded})");
        };
        assert!(t.message.contains("divide by zero"), "{}", t.message);
        assert!(t.backtrace[0].contains("boom"), "{:?}", t.backtrace);
        // Threaded runs name the thread.
        assert_eq!(t.message.contains("main thread"), threaded, "{}", t.message);
    }
}

#[test]
fn clashing_imports_are_a_setup_error() {
    /// Defines `wasi_snapshot_preview1`.`proc_exit`, which the IRT's host already does.
    struct Clash;
    impl Host for Clash {
        type State = ();
        fn name(&self) -> &str {
            "clash"
        }
        fn link(&self, linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
            linker.func_wrap("wasi_snapshot_preview1", "proc_exit", |_: i32| {})?;
            Ok(())
        }
        fn new_state(&self, _opts: &RunOptions) -> wasmtime::Result<()> {
            Ok(())
        }
    }
    let mut p = program(&loop_module(false, false));
    p.add_host(Clash).unwrap();
    let Err(RunError::Instantiate(m)) = p.run(&opts()) else {
        panic!("expected a setup error");
    };
    assert!(m.contains("host clash"), "{m}");
}
