//! `pexe2wasm::run::run_wasm` on small WASI modules: exit statuses, traps with named
//! backtraces, time limits, and what the program sees of the host (nothing unless asked).

use std::time::Duration;

use pexe2wasm::run::{run_wasm, Input, Output, RunError, RunOptions};

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
