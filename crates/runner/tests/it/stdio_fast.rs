//! The runner's own `fd_write` for fd 1 and 2 (`crates/runner/src/fastwrite.rs`) against
//! wasmtime-wasi's: each case is a small WASI module that makes one `fd_write` (after some
//! setup: closing or renumbering a standard descriptor, opening a file) and exits with the
//! call's errno and `nwritten`. It runs twice: through the runner ([`run_wasm`], the fast
//! path where it applies) and in a store linked with nothing but wasmtime-wasi's preview 1
//! (`add_to_linker_sync`, plus the runner's `proc_exit` so that statuses compare), and
//! both runs must end alike: the same exit status or trap message, the same bytes on
//! stdout and stderr, the same file contents. Plain and shared memory (a threaded module)
//! both.

use pexe2wasm_runner::wasmtime::{Engine, Linker, MemoryType, Module, SharedMemory, Store};
use pexe2wasm_runner::{ended, new_engine, run_wasm, wasi_ctx, Ctx, Output, RunOptions};

/// Where the module keeps things.
const IOVS: u32 = 256;
const NWRITTEN: u32 = 200;
const TEXT: u32 = 1024;
const FILE_NAME: u32 = 1100;

/// One call to compare.
struct Case {
    name: &'static str,
    /// Instructions run before the call (their results dropped).
    setup: &'static str,
    fd: i32,
    /// The iovecs written at [`IOVS`]: (buffer, length).
    iovs: &'static [(u32, u32)],
    /// The call's iovec array and count, and result pointer.
    iovs_at: u32,
    iovs_len: u32,
    nwritten: u32,
    pages: u32,
}

const fn case(name: &'static str, iovs: &'static [(u32, u32)]) -> Case {
    Case {
        name,
        setup: "",
        fd: 1,
        iovs,
        iovs_at: IOVS,
        iovs_len: iovs.len() as u32,
        nwritten: NWRITTEN,
        pages: 1,
    }
}

const HELLO: &[(u32, u32)] = &[(TEXT, 6)];

const CLOSE_1: &str = "(drop (call $close (i32.const 1)))";
const CLOSE_2: &str = "(drop (call $close (i32.const 2)))";
const MOVE_1_TO_2: &str = "(drop (call $renumber (i32.const 1) (i32.const 2)))";
const MOVE_2_TO_1: &str = "(drop (call $renumber (i32.const 2) (i32.const 1)))";
/// Opens (creates) `out.txt` in the preopened directory (fd 3); its fd at 208.
const OPEN: &str = "(drop (call $open (i32.const 3) (i32.const 0) (i32.const 1100) (i32.const 7)
    (i32.const 9) (i64.const 0x1fffffff) (i64.const 0x1fffffff) (i32.const 0) (i32.const 208)))";
const OPEN_AS_1: &str =
    "(drop (call $open (i32.const 3) (i32.const 0) (i32.const 1100) (i32.const 7)
    (i32.const 9) (i64.const 0x1fffffff) (i64.const 0x1fffffff) (i32.const 0) (i32.const 208)))
    (drop (call $renumber (i32.load (i32.const 208)) (i32.const 1)))";

fn cases() -> Vec<Case> {
    vec![
        case("one buffer", HELLO),
        case(
            "the first non-empty buffer only",
            &[(TEXT, 0), (TEXT + 6, 2), (TEXT, 6)],
        ),
        case("all buffers empty", &[(TEXT, 0), (TEXT + 3, 0)]),
        case("no buffer", &[]),
        Case {
            fd: 2,
            ..case("stderr", HELLO)
        },
        Case {
            fd: 0,
            ..case("stdin", HELLO)
        },
        Case {
            fd: 9,
            ..case("a descriptor never opened", HELLO)
        },
        Case {
            fd: -1,
            ..case("a negative descriptor", HELLO)
        },
        case("buffer past the end of memory", &[(65530, 100)]),
        case("buffer wrapping the address space", &[(u32::MAX - 1, 4)]),
        case(
            "empty buffer out of bounds, then a good one",
            &[(70000, 0), (TEXT, 6)],
        ),
        Case {
            iovs_at: 65532,
            ..case("iovec array past the end of memory", HELLO)
        },
        Case {
            iovs_at: IOVS + 2,
            ..case("misaligned iovec array", HELLO)
        },
        Case {
            nwritten: NWRITTEN + 1,
            ..case("misaligned result pointer", HELLO)
        },
        Case {
            nwritten: 65534,
            ..case("result pointer past the end of memory", HELLO)
        },
        Case {
            iovs_len: 0x1000_0000,
            ..case("more iovecs than the host-call fuel", HELLO)
        },
        Case {
            iovs_len: 4000,
            ..case("more iovecs than the fast path takes", HELLO)
        },
        Case {
            pages: 40,
            ..case(
                "a buffer longer than the fast path takes",
                &[(TEXT, 1_500_000)],
            )
        },
        Case {
            setup: CLOSE_1,
            ..case("stdout closed", HELLO)
        },
        Case {
            setup: CLOSE_2,
            fd: 2,
            ..case("stderr closed", HELLO)
        },
        Case {
            setup: MOVE_1_TO_2,
            fd: 2,
            ..case("stdout renumbered to 2, write to 2", HELLO)
        },
        Case {
            setup: MOVE_1_TO_2,
            ..case("stdout renumbered to 2, write to 1", HELLO)
        },
        Case {
            setup: MOVE_2_TO_1,
            ..case("stderr renumbered to 1, write to 1", HELLO)
        },
        Case {
            setup: OPEN_AS_1,
            ..case("a file renumbered to 1", HELLO)
        },
        Case {
            setup: "(drop (call $close (i32.const 1))) (drop (call $open (i32.const 3)
                (i32.const 0) (i32.const 1100) (i32.const 7) (i32.const 9)
                (i64.const 0x1fffffff) (i64.const 0x1fffffff) (i32.const 0) (i32.const 208)))",
            ..case("stdout closed, a file opened as 1", HELLO)
        },
        Case {
            setup: OPEN,
            ..case("a file open beside stdout", HELLO)
        },
    ]
}

/// Little-endian bytes as a WAT data string.
fn data_string(words: &[u32]) -> String {
    words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .map(|b| format!("\\{b:02x}"))
        .collect()
}

/// The module for `c`; `shared`: its memory is a shared one, imported as threaded
/// converted modules do (and exported as theirs is).
fn module(c: &Case, shared: bool) -> Vec<u8> {
    let words: Vec<u32> = c.iovs.iter().flat_map(|&(b, l)| [b, l]).collect();
    let memory = if shared {
        format!(
            r#"(import "env" "memory" (memory {p} {p} shared))
               (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
               (export "memory" (memory 0))"#,
            p = c.pages
        )
    } else {
        format!(r#"(memory (export "memory") {})"#, c.pages)
    };
    let wat = format!(
        r#"(module
          (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
          (import "wasi_snapshot_preview1" "fd_close" (func $close (param i32) (result i32)))
          (import "wasi_snapshot_preview1" "fd_renumber" (func $renumber (param i32 i32) (result i32)))
          (import "wasi_snapshot_preview1" "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
          (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
          {memory}
          (data (i32.const {IOVS}) "{iovs}")
          (data (i32.const {TEXT}) "hello\nab")
          (data (i32.const {FILE_NAME}) "out.txt")
          (func (export "_start") (local $e i32)
            {setup}
            (local.set $e (call $write (i32.const {fd}) (i32.const {iovs_at}) (i32.const {iovs_len}) (i32.const {nwritten})))
            ;; errno << 24 | nwritten (the result is read only when the call succeeded)
            (call $exit (i32.or (i32.shl (local.get $e) (i32.const 24))
              (if (result i32) (local.get $e) (then (i32.const 0))
                (else (i32.and (i32.load (i32.const {nwritten})) (i32.const 0xffffff)))))))
        )"#,
        iovs = data_string(&words),
        setup = c.setup,
        fd = c.fd,
        iovs_at = c.iovs_at,
        iovs_len = c.iovs_len,
        nwritten = c.nwritten,
    );
    wat::parse_str(&wat).unwrap_or_else(|e| panic!("{}: {e}", c.name))
}

/// How a run ended, in terms both runs share: the exit status or the trap's message, what
/// the program wrote to stdout and stderr, and the file it may have written.
#[derive(Debug, PartialEq, Eq)]
struct Ending {
    ended: String,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    file: Option<Vec<u8>>,
}

fn ending(
    r: Result<pexe2wasm_runner::RunOutcome, pexe2wasm_runner::RunError>,
    dir: &std::path::Path,
) -> Ending {
    let file = std::fs::read(dir.join("out.txt")).ok();
    match r {
        Ok(o) => Ending {
            ended: format!("exit {:#x}", o.exit_code),
            stdout: o.stdout,
            stderr: o.stderr,
            file,
        },
        Err(pexe2wasm_runner::RunError::Trap(t)) => Ending {
            // A threaded run names the thread that trapped; the store run by hand has one.
            ended: format!(
                "trap: {}",
                t.message.trim_end_matches(" (in the main thread)")
            ),
            stdout: t.stdout,
            stderr: t.stderr,
            file,
        },
        Err(e) => Ending {
            ended: format!("error: {e}"),
            stdout: Vec::new(),
            stderr: Vec::new(),
            file,
        },
    }
}

fn opts(dir: &std::path::Path) -> RunOptions {
    RunOptions {
        args: vec!["prog".into()],
        dirs: vec![(dir.to_path_buf(), ".".into())],
        stdout: Output::Capture,
        stderr: Output::Capture,
        ..RunOptions::default()
    }
}

/// Through the runner, with its fast path.
fn through_runner(wasm: &[u8]) -> Ending {
    let dir = tempfile::tempdir().unwrap();
    ending(run_wasm(wasm, &opts(dir.path())), dir.path())
}

/// In a store linked with wasmtime-wasi's preview 1 alone (and a `proc_exit` that keeps
/// every status, as the runner's).
fn through_wasmtime_wasi(engine: &Engine, wasm: &[u8], shared: Option<u32>) -> Ending {
    let dir = tempfile::tempdir().unwrap();
    let opts = opts(dir.path());
    let module = Module::new(engine, wasm).unwrap();
    let mut linker: Linker<Ctx> = Linker::new(engine);
    wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |cx: &mut Ctx| cx.wasi()).unwrap();
    linker.allow_shadowing(true);
    linker
        .func_wrap(
            "wasi_snapshot_preview1",
            "proc_exit",
            |status: i32| -> pexe2wasm_runner::wasmtime::Result<()> {
                Err(wasmtime_wasi::I32Exit(status).into())
            },
        )
        .unwrap();
    linker
        .func_wrap("wasi", "thread-spawn", |_: i32| -> i32 { -1 })
        .unwrap();
    let (wasi, streams) = wasi_ctx(&opts).unwrap();
    let mut store = Store::new(engine, Ctx::standalone(wasi));
    if let Some(pages) = shared {
        let m = SharedMemory::new(engine, MemoryType::shared(pages, pages)).unwrap();
        linker.define(&store, "env", "memory", m).unwrap();
    }
    let r = linker
        .instantiate(&mut store, &module)
        .and_then(|i| i.get_typed_func::<(), ()>(&mut store, "_start"))
        .and_then(|start| start.call(&mut store, ()));
    let (stdout, stderr) = streams.contents();
    let r = match r {
        Ok(()) => Ok(pexe2wasm_runner::RunOutcome {
            exit_code: 0,
            stdout,
            stderr,
        }),
        Err(e) => ended(e, None, stdout, stderr),
    };
    ending(r, dir.path())
}

fn compare(shared: bool) {
    let engine = new_engine(false).unwrap();
    let mut failed = Vec::new();
    for c in cases() {
        let wasm = module(&c, shared);
        let fast = through_runner(&wasm);
        let reference = through_wasmtime_wasi(&engine, &wasm, shared.then_some(c.pages));
        if fast != reference {
            failed.push(format!(
                "{}:\n  runner:        {fast:?}\n  wasmtime-wasi: {reference:?}",
                c.name
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn fd_write_answers_as_wasmtime_wasi_does() {
    compare(false);
}

#[test]
fn fd_write_answers_as_wasmtime_wasi_does_over_shared_memory() {
    compare(true);
}

/// What the cases above must show, beyond agreeing: the fast path's own results, and the
/// descriptors the program moved or closed no longer reaching the run's stdout.
#[test]
fn fd_write_cases_end_as_expected() {
    // (case, how it ends, stdout, stderr, the file's contents)
    type Expected = (
        &'static str,
        &'static str,
        &'static [u8],
        &'static [u8],
        Option<&'static [u8]>,
    );
    let expect: &[Expected] = &[
        ("one buffer", "exit 0x6", b"hello\n", b"", None),
        (
            "the first non-empty buffer only",
            "exit 0x2",
            b"ab",
            b"",
            None,
        ),
        ("all buffers empty", "exit 0x0", b"", b"", None),
        ("stderr", "exit 0x6", b"", b"hello\n", None),
        // EBADF (8)
        ("stdout closed", "exit 0x8000000", b"", b"", None),
        (
            "stdout renumbered to 2, write to 2",
            "exit 0x6",
            b"hello\n",
            b"",
            None,
        ),
        (
            "stdout renumbered to 2, write to 1",
            "exit 0x8000000",
            b"",
            b"",
            None,
        ),
        (
            "stderr renumbered to 1, write to 1",
            "exit 0x6",
            b"",
            b"hello\n",
            None,
        ),
        (
            "a file renumbered to 1",
            "exit 0x6",
            b"",
            b"",
            Some(b"hello\n"),
        ),
        (
            "stdout closed, a file opened as 1",
            "exit 0x6",
            b"",
            b"",
            Some(b"hello\n"),
        ),
        (
            "a file open beside stdout",
            "exit 0x6",
            b"hello\n",
            b"",
            Some(b""),
        ),
    ];
    let all = cases();
    for &(name, ended, stdout, stderr, file) in expect {
        let c = all.iter().find(|c| c.name == name).unwrap();
        for shared in [false, true] {
            let got = through_runner(&module(c, shared));
            let want = Ending {
                ended: ended.into(),
                stdout: stdout.to_vec(),
                stderr: stderr.to_vec(),
                file: file.map(<[u8]>::to_vec),
            };
            assert_eq!(got, want, "{name} (shared memory: {shared})");
        }
    }
    // Bad pointers trap (wasmtime-wasi's answer, which the runner keeps), without a panic.
    for name in [
        "buffer past the end of memory",
        "iovec array past the end of memory",
        "misaligned iovec array",
        "result pointer past the end of memory",
    ] {
        let c = all.iter().find(|c| c.name == name).unwrap();
        let got = through_runner(&module(c, false));
        assert!(got.ended.starts_with("trap: "), "{name}: {got:?}");
    }
    // ENOMEM (48) for an iovec array beyond the host-call fuel.
    let c = all
        .iter()
        .find(|c| c.name == "more iovecs than the host-call fuel")
        .unwrap();
    assert_eq!(through_runner(&module(c, false)).ended, "exit 0x30000000");
}

/// A discarded stream answers as wasmtime-wasi's sink does: everything written.
#[test]
fn discarded_output_counts_as_written() {
    for (fd, iovs) in [(1, HELLO), (2, &[(TEXT, 0), (TEXT + 6, 2)][..])] {
        let c = Case {
            fd,
            ..case("discarded", iovs)
        };
        let opts = RunOptions {
            args: vec!["prog".into()],
            stdout: Output::Discard,
            stderr: Output::Discard,
            ..RunOptions::default()
        };
        let out = run_wasm(&module(&c, false), &opts).unwrap();
        let n = iovs.iter().map(|&(_, l)| l).find(|&l| l > 0).unwrap();
        assert_eq!(out.exit_code, n as i32);
        assert!(out.stdout.is_empty() && out.stderr.is_empty());
    }
}
