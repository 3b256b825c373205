//! Whole nexes translated with the runtime linked (`translate_program`) and run under
//! wasmtime, with the WASI functions the runtime imports provided here: the program's
//! standard output and exit status must be what SOURCES.md derives from its sources.

use pexe2wasm_nexe::inspect;
use pexe2wasm_nexe::x86_64::lift::translate_program;
use pexe2wasm_testkit::corpus::real_nexe;
use wasmtime::{Caller, Engine, Linker, Module, Store};

#[derive(Default)]
struct Host {
    args: Vec<Vec<u8>>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: Option<i32>,
}

/// The outcome of a run: stdout, stderr, the exit status (None when it trapped) and the
/// trap's words.
struct Ran {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: Option<i32>,
    trap: Option<String>,
}

fn mem<'a>(c: &'a mut Caller<'_, Host>) -> (&'a mut [u8], &'a mut Host) {
    let m = c.get_export("memory").unwrap().into_memory().unwrap();
    m.data_and_store_mut(c)
}

fn u32_at(m: &[u8], at: u32) -> u32 {
    let at = at as usize;
    u32::from_le_bytes(m[at..at + 4].try_into().unwrap())
}

fn run(wasm: &[u8], args: &[&str]) -> Ran {
    wasmparser::Validator::new()
        .validate_all(wasm)
        .expect("the translated program validates");
    let engine = Engine::default();
    let module = Module::new(&engine, wasm).expect("wasmtime compiles it");
    let mut linker: Linker<Host> = Linker::new(&engine);
    let w = "wasi_snapshot_preview1";
    for (name, out) in [("fd_write", true), ("fd_read", false)] {
        linker
            .func_wrap(
                w,
                name,
                move |mut c: Caller<'_, Host>, fd: i32, iov: i32, n: i32, done: i32| -> i32 {
                    let (m, h) = mem(&mut c);
                    if !out {
                        // standard input is empty
                        m[done as usize..done as usize + 4].copy_from_slice(&0u32.to_le_bytes());
                        return 0;
                    }
                    let mut total = 0u32;
                    for k in 0..n as u32 {
                        let base = u32_at(m, iov as u32 + 8 * k);
                        let len = u32_at(m, iov as u32 + 8 * k + 4);
                        let bytes = m[base as usize..(base + len) as usize].to_vec();
                        match fd {
                            1 => h.stdout.extend(bytes),
                            2 => h.stderr.extend(bytes),
                            _ => return 8,
                        }
                        total += len;
                    }
                    m[done as usize..done as usize + 4].copy_from_slice(&total.to_le_bytes());
                    0
                },
            )
            .unwrap();
    }
    linker
        .func_wrap(w, "fd_close", |_: Caller<'_, Host>, _fd: i32| -> i32 { 0 })
        .unwrap();
    linker
        .func_wrap(
            w,
            "proc_exit",
            |mut c: Caller<'_, Host>, code: i32| -> wasmtime::Result<()> {
                c.data_mut().exit = Some(code);
                Err(wasmtime::Error::msg("exit"))
            },
        )
        .unwrap();
    linker
        .func_wrap(
            w,
            "args_sizes_get",
            |mut c: Caller<'_, Host>, argc: i32, size: i32| -> i32 {
                let (m, h) = mem(&mut c);
                let n = h.args.len() as u32;
                let s: u32 = h.args.iter().map(|a| a.len() as u32 + 1).sum();
                m[argc as usize..argc as usize + 4].copy_from_slice(&n.to_le_bytes());
                m[size as usize..size as usize + 4].copy_from_slice(&s.to_le_bytes());
                0
            },
        )
        .unwrap();
    linker
        .func_wrap(
            w,
            "args_get",
            |mut c: Caller<'_, Host>, argv: i32, buf: i32| -> i32 {
                let (m, h) = mem(&mut c);
                let mut at = buf as usize;
                for (k, a) in h.args.iter().enumerate() {
                    let p = argv as usize + 4 * k;
                    m[p..p + 4].copy_from_slice(&(at as u32).to_le_bytes());
                    m[at..at + a.len()].copy_from_slice(a);
                    m[at + a.len()] = 0;
                    at += a.len() + 1;
                }
                0
            },
        )
        .unwrap();
    let host = Host {
        args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
        ..Host::default()
    };
    let mut store = Store::new(&engine, host);
    let inst = linker
        .instantiate(&mut store, &module)
        .expect("instantiates");
    let start = inst
        .get_typed_func::<(), ()>(&mut store, "_start")
        .expect("exports _start");
    let r = start.call(&mut store, ());
    let h = store.into_data();
    let trap = match (r, h.exit) {
        (Err(e), None) => Some(format!("{e:#}")),
        _ => None,
    };
    Ran {
        stdout: h.stdout,
        stderr: h.stderr,
        exit: h.exit,
        trap,
    }
}

/// The x86 function of each wasm function named in a trap's backtrace.
fn where_(p: &pexe2wasm_nexe::x86_64::lift::Program, trap: &str) -> String {
    let mut out = String::new();
    for w in trap.split("<wasm function ").skip(1) {
        let n: u32 = w.split('>').next().unwrap().parse().unwrap();
        let at = n
            .checked_sub(p.first_function)
            .and_then(|k| p.starts.get(k as usize));
        out.push_str(&format!(" {n}={at:x?}"));
    }
    out
}

fn program(name: &str) -> Option<pexe2wasm_nexe::x86_64::lift::Program> {
    let Some(file) = real_nexe(name) else {
        eprintln!("SKIPPED: {name} is not in the corpus");
        return None;
    };
    let nexe = inspect(&file).expect("reads");
    let p = translate_program(&nexe).unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!(
        "{name}: {} of {} functions lift; {} bytes of wasm",
        p.lifted,
        p.functions,
        p.wasm.len()
    );
    Some(p)
}

/// The pre-IRT hello world (direct syscalls through the trampolines) prints its
/// greeting and exits 0 (SOURCES.md; NaCl's golden `hello_world.stdout`).
#[test]
fn pre_irt_hello_world_prints_its_greeting() {
    let Some(p) = program("nacl-hello_world-x86_64.nexe") else {
        return;
    };
    let r = run(&p.wasm, &["hello_world"]);
    assert_eq!(
        (
            String::from_utf8_lossy(&r.stdout).as_ref(),
            r.exit,
            r.trap.as_deref()
        ),
        ("Hello, World!\n", Some(0), None),
        "stderr: {}; trapped in{}",
        String::from_utf8_lossy(&r.stderr),
        where_(&p, r.trap.as_deref().unwrap_or(""))
    );
}
