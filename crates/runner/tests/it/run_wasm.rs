//! `pexe2wasm_runner::run_wasm` on small WASI modules: exit statuses, traps with named
//! backtraces, time limits, and what the program sees of the host (nothing unless asked).

use std::time::Duration;

use pexe2wasm_runner::{run_wasm, Input, Output, RunError, RunOptions};

fn wasm(wat: &str) -> Vec<u8> {
    wat::parse_str(wat).unwrap()
}

fn opts() -> RunOptions {
    RunOptions {
        args: vec!["prog".into()],
        ..RunOptions::default()
    }
}

/// A command that exits with the status in its body.
fn exiting(status: i32) -> Vec<u8> {
    wasm(&format!(
        r#"(module
          (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
          (memory (export "memory") 1)
          (func (export "_start") (call $exit (i32.const {status}))))"#
    ))
}

#[test]
fn exit_status_reaches_the_caller() {
    for status in [0, 1, 3, 125, 126, 200, 255, 256, -1] {
        let out = run_wasm(&exiting(status), &opts()).unwrap();
        assert_eq!(out.exit_code, status);
    }
    let returns = wasm(r#"(module (memory (export "memory") 1) (func (export "_start")))"#);
    assert_eq!(run_wasm(&returns, &opts()).unwrap().exit_code, 0);
}

#[test]
fn trap_has_a_named_backtrace_and_keeps_output() {
    let w = wasm(
        r#"(module
          (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (data (i32.const 16) "before\n")
          (data (i32.const 0) "\10\00\00\00\07\00\00\00")
          (func $innermost (unreachable))
          (func $middle (call $innermost))
          (func (export "_start")
            (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 32)))
            (call $middle)))"#,
    );
    let err = run_wasm(&w, &opts()).unwrap_err();
    let RunError::Trap(t) = &err else {
        panic!("not a trap: {err}")
    };
    assert!(t.message.contains("unreachable"), "{}", t.message);
    assert!(!t.message.starts_with("wasm trap"), "{}", t.message);
    assert!(t.backtrace[0].contains("innermost"), "{:?}", t.backtrace);
    assert!(t.backtrace[1].contains("middle"), "{:?}", t.backtrace);
    assert_eq!(t.stdout, b"before\n");
    let text = err.to_string();
    assert!(text.starts_with("wasm trap: "), "{text}");
    assert!(text.contains("innermost"), "{text}");
}

#[test]
fn other_traps() {
    let div = wasm(
        r#"(module (memory (export "memory") 1)
          (func $divide (param i32) (result i32) (i32.div_s (i32.const 1) (local.get 0)))
          (func (export "_start") (drop (call $divide (i32.const 0)))))"#,
    );
    let Err(RunError::Trap(t)) = run_wasm(&div, &opts()) else {
        panic!("expected a trap")
    };
    assert!(t.message.contains("divide by zero"), "{}", t.message);
    let oob = wasm(
        r#"(module (memory (export "memory") 1)
          (func (export "_start") (drop (i32.load (i32.const 70000)))))"#,
    );
    assert!(matches!(run_wasm(&oob, &opts()), Err(RunError::Trap(_))));
}

#[test]
fn time_limit() {
    let spin = wasm(
        r#"(module (memory (export "memory") 1)
          (func (export "_start") (loop $l (br $l))))"#,
    );
    let o = RunOptions {
        timeout: Some(Duration::from_millis(200)),
        ..opts()
    };
    assert!(matches!(run_wasm(&spin, &o), Err(RunError::Timeout(_))));
    // A quick program is not affected by a limit.
    assert_eq!(run_wasm(&exiting(4), &o).unwrap().exit_code, 4);
}

#[test]
fn setup_errors() {
    assert!(matches!(
        run_wasm(b"\0asm\x01\0\0\0\x99", &opts()),
        Err(RunError::Compile(_))
    ));
    assert!(matches!(
        run_wasm(b"not wasm at all", &opts()),
        Err(RunError::Compile(_))
    ));
    let no_start = wasm(r#"(module (memory (export "memory") 1))"#);
    assert!(matches!(
        run_wasm(&no_start, &opts()),
        Err(RunError::NoStart)
    ));
    let bad_import = wasm(r#"(module (import "env" "nope" (func)) (func (export "_start")))"#);
    assert!(matches!(
        run_wasm(&bad_import, &opts()),
        Err(RunError::Instantiate(_))
    ));
    let o = RunOptions {
        dirs: vec![(
            "/nonexistent/pexe2wasm/test/dir".into(),
            "/data".to_string(),
        )],
        ..opts()
    };
    assert!(matches!(
        run_wasm(&exiting(0), &o),
        Err(RunError::Dir { .. })
    ));
}

/// Exits with (argc * 100 + envc): what the program sees of its command line and
/// environment.
const COUNTS: &str = r#"(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $env (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (drop (call $args (i32.const 0) (i32.const 4)))
    (drop (call $env (i32.const 8) (i32.const 12)))
    (call $exit (i32.add (i32.mul (i32.load (i32.const 0)) (i32.const 100)) (i32.load (i32.const 8))))))"#;

#[test]
fn nothing_from_the_host_unless_asked() {
    let w = wasm(COUNTS);
    assert_eq!(run_wasm(&w, &opts()).unwrap().exit_code, 100);
    let o = RunOptions {
        args: vec!["prog".into(), "a".into(), "b".into()],
        env: vec![("A".into(), "1".into()), ("B".into(), "2".into())],
        ..RunOptions::default()
    };
    assert_eq!(run_wasm(&w, &o).unwrap().exit_code, 302);
}

#[test]
fn stdin_bytes_echo_to_stdout_and_stderr() {
    let w = wasm(
        r#"(module
          (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
          (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (func (export "_start")
            (i32.store (i32.const 0) (i32.const 100))
            (i32.store (i32.const 4) (i32.const 64))
            (drop (call $read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
            (i32.store (i32.const 4) (i32.load (i32.const 8)))
            (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 12)))
            (drop (call $write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 12)))))"#,
    );
    let o = RunOptions {
        stdin: Input::Bytes(b"ping".to_vec()),
        ..opts()
    };
    let out = run_wasm(&w, &o).unwrap();
    assert_eq!(out.stdout, b"ping");
    assert_eq!(out.stderr, b"ping");
    let o = RunOptions {
        stdout: Output::Discard,
        ..opts()
    };
    let out = run_wasm(&w, &o).unwrap();
    assert!(out.stdout.is_empty(), "empty stdin, discarded stdout");
}

/// A wasi-threads module: `_start` spawns one thread (start argument 0) and then does
/// `main`; the thread runs `thread`. Both may use `$wait` (block forever on a word nobody
/// notifies) and `$print` (write "<c>\n" to stdout).
fn threaded(main: &str, thread: &str) -> Vec<u8> {
    wasm(&format!(
        r#"(module
          (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
          (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
          (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
          (import "pexe2wasm" "thread_exit" (func $thread_exit))
          (import "env" "memory" (memory 1 1 shared))
          (export "memory" (memory 0))
          (func $wait (drop (memory.atomic.wait32 (i32.const 100) (i32.const 0) (i64.const -1))))
          (func $print (param $c i32)
            (i32.store8 (i32.const 200) (local.get $c))
            (i32.store8 (i32.const 201) (i32.const 10))
            (i32.store (i32.const 208) (i32.const 200))
            (i32.store (i32.const 212) (i32.const 2))
            (drop (call $fd_write (i32.const 1) (i32.const 208) (i32.const 1) (i32.const 216))))
          (func $boom (param $x i32) (result i32) (i32.div_u (i32.const 1) (local.get $x)))
          (func (export "_start")
            (if (i32.le_s (call $spawn (i32.const 0)) (i32.const 0)) (then (unreachable)))
            {main})
          (func (export "wasi_thread_start") (param $tid i32) (param $arg i32)
            {thread}))"#
    ))
}

#[test]
fn exit_in_any_thread_ends_the_run_with_its_status() {
    // The main thread waits forever; the spawned one prints and exits 7.
    let w = threaded(
        "(call $wait)",
        "(call $print (i32.const 0x41)) (call $exit (i32.const 7))",
    );
    let out = run_wasm(&w, &opts()).unwrap();
    assert_eq!(out.exit_code, 7);
    assert_eq!(out.stdout, b"A\n");
    // The main thread exits while the other one waits forever.
    let w = threaded(
        "(call $print (i32.const 0x42)) (call $exit (i32.const 3))",
        "(call $wait)",
    );
    let out = run_wasm(&w, &opts()).unwrap();
    assert_eq!((out.exit_code, out.stdout.as_slice()), (3, &b"B\n"[..]));
}

#[test]
fn run_ends_with_the_last_thread() {
    // Both threads end through thread_exit: the run ends, status 0.
    let w = threaded(
        "(call $print (i32.const 0x43)) (call $thread_exit)",
        "(call $thread_exit)",
    );
    let out = run_wasm(&w, &opts()).unwrap();
    assert_eq!((out.exit_code, out.stdout.as_slice()), (0, &b"C\n"[..]));
}

#[test]
fn trap_in_a_thread_names_the_thread_and_function() {
    let w = threaded("(call $wait)", "(drop (call $boom (i32.const 0)))");
    let Err(RunError::Trap(t)) = run_wasm(&w, &opts()) else {
        panic!("expected a trap");
    };
    assert!(t.message.contains("divide by zero"), "{}", t.message);
    assert!(t.message.contains("thread 1"), "{}", t.message);
    assert!(t.message.contains("function boom"), "{}", t.message);
    assert!(t.backtrace[0].contains("boom"), "{:?}", t.backtrace);
    // In the main thread, while the other one waits.
    let w = threaded("(drop (call $boom (i32.const 0)))", "(call $wait)");
    let Err(RunError::Trap(t)) = run_wasm(&w, &opts()) else {
        panic!("expected a trap");
    };
    assert!(t.message.contains("main thread"), "{}", t.message);
}

#[test]
fn time_limit_stops_every_thread() {
    // Both threads spin: the epoch interruption stops them.
    let w = threaded("(loop $l (br $l))", "(loop $l (br $l))");
    let o = RunOptions {
        timeout: Some(Duration::from_millis(300)),
        ..opts()
    };
    let start = std::time::Instant::now();
    assert!(matches!(run_wasm(&w, &o), Err(RunError::Timeout(_))));
    assert!(start.elapsed() < Duration::from_secs(10));
}

/// Creates the file `new` in the first preopened directory (fd 3) and exits with the
/// WASI errno of `path_open` (0: created).
const CREATE: &str = r#"(module
  (import "wasi_snapshot_preview1" "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "new")
  ;; dirfd 3, no lookup flags, "new", O_CREAT, rights: fd_write (1 << 6), none inherited.
  (func (export "_start")
    (call $exit (call $open (i32.const 3) (i32.const 0) (i32.const 16) (i32.const 3)
                            (i32.const 1) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 32)))))"#;

#[test]
fn read_only_directories_refuse_changes() {
    let w = wasm(CREATE);
    let dir = pexe2wasm_testkit::corpus::Scratch::new("ro-dir");
    let writable = RunOptions {
        dirs: vec![(dir.dir().to_path_buf(), "/data".into())],
        ..opts()
    };
    assert_eq!(run_wasm(&w, &writable).unwrap().exit_code, 0);
    assert!(dir.join("new").exists());
    std::fs::remove_file(dir.join("new")).unwrap();
    let readonly = RunOptions {
        readonly_dirs: vec![(dir.dir().to_path_buf(), "/data".into())],
        ..opts()
    };
    let errno = run_wasm(&w, &readonly).unwrap().exit_code;
    assert_ne!(
        errno, 0,
        "a read-only directory let the program create a file"
    );
    assert!(!dir.join("new").exists());
}
