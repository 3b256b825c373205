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
    env: Vec<Vec<u8>>,
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
    match c.get_export("memory").unwrap() {
        wasmtime::Extern::SharedMemory(m) => {
            let data = m.data();
            // SAFETY: these runs have one thread (thread-spawn fails), so nothing else
            // touches the shared memory while a host function has it.
            let bytes =
                unsafe { std::slice::from_raw_parts_mut(data.as_ptr() as *mut u8, data.len()) };
            (bytes, c.data_mut())
        }
        e => e.into_memory().unwrap().data_and_store_mut(c),
    }
}

fn u32_at(m: &[u8], at: u32) -> u32 {
    let at = at as usize;
    u32::from_le_bytes(m[at..at + 4].try_into().unwrap())
}

fn run(wasm: &[u8], args: &[&str]) -> Ran {
    run_with(wasm, args, &[])
}

/// [`run`] with an environment.
fn run_with(wasm: &[u8], args: &[&str], env: &[&str]) -> Ran {
    wasmparser::Validator::new()
        .validate_all(wasm)
        .expect("the translated program validates");
    let mut config = wasmtime::Config::new();
    config.shared_memory(true);
    let engine = Engine::new(&config).expect("engine");
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
    // The standard streams are pipes: no seeking, filetype unknown.
    linker
        .func_wrap(
            w,
            "fd_seek",
            |_: Caller<'_, Host>, fd: i32, _off: i64, _whence: i32, _new: i32| -> i32 {
                if (0..3).contains(&fd) {
                    70
                } else {
                    8
                }
            },
        )
        .unwrap();
    for (name, size) in [("fd_filestat_get", 64usize), ("fd_fdstat_get", 24)] {
        linker
            .func_wrap(
                w,
                name,
                move |mut c: Caller<'_, Host>, fd: i32, buf: i32| -> i32 {
                    if !(0..3).contains(&fd) {
                        return 8;
                    }
                    let (m, _) = mem(&mut c);
                    m[buf as usize..buf as usize + size].fill(0);
                    0
                },
            )
            .unwrap();
    }
    linker
        .func_wrap(
            w,
            "clock_time_get",
            |mut c: Caller<'_, Host>, _id: i32, _precision: i64, at: i32| -> i32 {
                let (m, _) = mem(&mut c);
                let ns: u64 = 1_700_000_000_123_456_789;
                m[at as usize..at as usize + 8].copy_from_slice(&ns.to_le_bytes());
                0
            },
        )
        .unwrap();
    linker
        .func_wrap(
            w,
            "random_get",
            |mut c: Caller<'_, Host>, buf: i32, n: i32| -> i32 {
                let (m, _) = mem(&mut c);
                m[buf as usize..(buf + n) as usize].fill(0x5a);
                0
            },
        )
        .unwrap();
    linker
        .func_wrap(
            w,
            "poll_oneoff",
            |mut c: Caller<'_, Host>, _in: i32, _out: i32, _n: i32, nevents: i32| -> i32 {
                let (m, _) = mem(&mut c);
                m[nevents as usize..nevents as usize + 4].copy_from_slice(&1u32.to_le_bytes());
                0
            },
        )
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
    for (sizes, get, env) in [
        ("args_sizes_get", "args_get", false),
        ("environ_sizes_get", "environ_get", true),
    ] {
        let list = move |h: &Host| if env { h.env.clone() } else { h.args.clone() };
        linker
            .func_wrap(
                w,
                sizes,
                move |mut c: Caller<'_, Host>, argc: i32, size: i32| -> i32 {
                    let (m, h) = mem(&mut c);
                    let l = list(h);
                    let n = l.len() as u32;
                    let s: u32 = l.iter().map(|a| a.len() as u32 + 1).sum();
                    m[argc as usize..argc as usize + 4].copy_from_slice(&n.to_le_bytes());
                    m[size as usize..size as usize + 4].copy_from_slice(&s.to_le_bytes());
                    0
                },
            )
            .unwrap();
        linker
            .func_wrap(
                w,
                get,
                move |mut c: Caller<'_, Host>, argv: i32, buf: i32| -> i32 {
                    let (m, h) = mem(&mut c);
                    let mut at = buf as usize;
                    for (k, a) in list(h).iter().enumerate() {
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
    }
    // No preopened directories; the functions on paths are never reached then.
    linker
        .func_wrap(
            w,
            "fd_prestat_get",
            |_: Caller<'_, Host>, _: i32, _: i32| -> i32 { 8 },
        )
        .unwrap();
    let host = Host {
        args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
        env: env.iter().map(|a| a.as_bytes().to_vec()).collect(),
        ..Host::default()
    };
    let mut store = Store::new(&engine, host);
    // A threaded program (it names `nacl-irt-thread`): its shared memory, and no threads
    // (`thread-spawn` fails, as when a runtime has none to give).
    let shared = module.imports().find_map(|i| match i.ty() {
        wasmtime::ExternType::Memory(t) if t.is_shared() => Some(t),
        _ => None,
    });
    if let Some(t) = shared {
        let m = wasmtime::SharedMemory::new(&engine, t).expect("shared memory");
        linker.define(&store, "env", "memory", m).unwrap();
        linker
            .func_wrap(
                "wasi",
                "thread-spawn",
                |_: Caller<'_, Host>, _: i32| -> i32 { -1 },
            )
            .unwrap();
        linker
            .func_wrap(
                "pexe2wasm",
                "thread_exit",
                |_: Caller<'_, Host>| -> wasmtime::Result<()> { wasmtime::bail!("thread_exit") },
            )
            .unwrap();
    }
    linker
        .define_unknown_imports_as_traps(&module)
        .expect("the path functions");
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

/// The stdout, exit status and trap of `name` run with `args`, with where it trapped.
fn outcome(
    p: &pexe2wasm_nexe::x86_64::lift::Program,
    args: &[&str],
) -> (String, Option<i32>, String) {
    let r = run(&p.wasm, args);
    let trap = r
        .trap
        .as_deref()
        .map(|t| format!("trapped: {t}; in{}", where_(p, t)))
        .unwrap_or_default();
    eprintln!("stderr: {}", String::from_utf8_lossy(&r.stderr));
    (
        String::from_utf8_lossy(&r.stdout).into_owned(),
        r.exit,
        trap,
    )
}

/// fftw-wisdom (stable IRT, newlib) through the runtime's `nacl_irt_query`: `-V` prints
/// its version and copyright and exits 0, `-h` its usage and exits 0, an unknown option
/// exits 1 (SOURCES.md, from FFTW's `tools/fftw-wisdom.c`).
#[test]
fn irt_fftw_wisdom_answers_version_and_help() {
    let Some(p) = program("fftw-wisdom-x86_64.nexe") else {
        return;
    };
    let (out, exit, trap) = outcome(&p, &["fftw-wisdom", "-V"]);
    assert_eq!((exit, trap.as_str()), (Some(0), ""), "stdout: {out}");
    assert!(
        out.starts_with(
            "fftw-wisdom tool for FFTW version 3.3.2.\n\nCopyright (c) 2003, 2007-11 Matteo Frigo\n\
             Copyright (c) 2003, 2007-11 Massachusetts Institute of Technology\n\n"
        ),
        "{out}"
    );
    assert!(out.contains("GNU General Public License"), "{out}");
    let (out, exit, trap) = outcome(&p, &["fftw-wisdom", "-h"]);
    assert_eq!((exit, trap.as_str()), (Some(0), ""), "stdout: {out}");
    assert!(
        out.starts_with("Usage: fftw-wisdom [options] [sizes]\n"),
        "{out}"
    );
    let (out, exit, trap) = outcome(&p, &["fftw-wisdom", "-n", "-Z"]);
    assert_eq!((exit, trap.as_str()), (Some(1), ""), "stdout: {out}");
}

/// glibc's static `sln` (stable IRT, glibc) with no arguments prints its usage to stdout
/// and exits 1 (SOURCES.md, from glibc's `elf/sln.c`).
#[test]
fn irt_glibc_sln_prints_its_usage() {
    let Some(p) = program("glibc-sln-x86_64.nexe") else {
        return;
    };
    let (out, exit, trap) = outcome(&p, &["sln"]);
    assert_eq!(
        (out.as_str(), exit, trap.as_str()),
        ("Usage: sln src dest|file\n", Some(1), "")
    );
}

/// A program that asks the runtime's `nacl_irt_query` (found as `AT_SYSINFO` in the
/// startup block's auxv) for interface `argv[1]` with a 24-byte table, `argv[2]` with
/// 64 bytes and `argv[1]` again with 16 bytes, then calls the first table's first
/// function (`exit` of `nacl-irt-basic-0.1`) with the three sizes as `a | b << 8 | c <<
/// 16`. Each call is NaCl's (`and $-32; add %r15; call`) and ends a bundle.
fn query_program() -> Vec<u8> {
    use iced_x86::code_asm::*;
    let steps: [Step; 4] = [
        |a| {
            a.mov(ebx, edi)?; // the startup block
            a.mov(ecx, dword_ptr(rbx + 8))?; // argc
            a.lea(r12, qword_ptr(rbx + rcx * 4 + 20))?; // auxv, after argv's and envp's NULLs
            a.mov(r13d, dword_ptr(r12 + 4))?; // AT_SYSINFO's value
            a.sub(rsp, 128)?;
            a.mov(edi, dword_ptr(rbx + 16))?;
            a.mov(rsi, rsp)?;
            a.mov(edx, 24u32)
        },
        |a| {
            a.mov(r14d, eax)?;
            a.mov(edi, dword_ptr(rbx + 20))?;
            a.lea(rsi, qword_ptr(rsp + 32))?;
            a.mov(edx, 64u32)
        },
        |a| {
            a.shl(eax, 8)?;
            a.or(r14d, eax)?;
            a.mov(edi, dword_ptr(rbx + 16))?;
            a.lea(rsi, qword_ptr(rsp + 32))?;
            a.mov(edx, 16u32)
        },
        |a| {
            a.shl(eax, 16)?;
            a.or(r14d, eax)?;
            a.mov(edi, r14d)?;
            a.mov(r13d, dword_ptr(rsp))
        },
    ];
    step_code(&steps)
}

fn query_module() -> Vec<u8> {
    with_runtime(&query_program())
}

/// NaCl's indirect call (`and $-32; add %r15; call`) to the address in `%r11d`.
fn naclcall_r11(a: &mut iced_x86::code_asm::CodeAssembler) -> Result<(), iced_x86::IcedError> {
    use iced_x86::code_asm::*;
    a.and(r11d, -32)?;
    a.add(r11, r15)?;
    a.call(r11)
}

/// A program at 0x20000 of `count` pieces, piece `i` assembled by `piece(i, ..)` and
/// preceded by the `nop`s that make it end its 32-byte bundle (each piece ends in a
/// call, which must end a bundle), then a bundle of `hlt`.
fn bundle_ended(
    count: usize,
    piece: impl Fn(usize, &mut iced_x86::code_asm::CodeAssembler),
) -> Vec<u8> {
    let mut code: Vec<u8> = Vec::new();
    for i in 0..count {
        let at = |ip: u64| {
            let mut a = iced_x86::code_asm::CodeAssembler::new(64).unwrap();
            piece(i, &mut a);
            a.assemble(ip).unwrap()
        };
        let ip = 0x20000 + code.len() as u64;
        let pad = (32 - at(ip).len() % 32) % 32;
        code.resize(code.len() + pad, 0x90);
        code.extend(at(ip + pad as u64));
    }
    code.resize(code.len() + 32, 0xf4);
    code
}

/// `code` at 0x20000, entered there, translated with the runtime linked.
fn with_runtime(code: &[u8]) -> Vec<u8> {
    use pexe2wasm_nexe::x86_64::lift::{translate_code, Options};
    let options = Options {
        export_state: false,
        runtime: true,
        ..Options::default()
    };
    translate_code(code, 0x20000, &[0x20000], &options)
        .expect("lifts")
        .wasm
}

/// `nacl_irt_query` answers an interface's size and fills its table when the table is
/// large enough (NaCl's rule), and 0 for an unknown name or a table too small.
#[test]
fn irt_query_answers_sizes_and_fills_tables() {
    let wasm = query_module();
    let r = run(&wasm, &["q", "nacl-irt-basic-0.1", "nacl-irt-nope-0.1"]);
    assert_eq!((r.exit, r.trap.as_deref()), (Some(24), None));
    // a prefix of a known name is no match
    let r = run(&wasm, &["q", "nacl-irt-basic-0.1", "nacl-irt-basic-0."]);
    assert_eq!((r.exit, r.trap.as_deref()), (Some(24), None));
    let r = run(&wasm, &["q", "nacl-irt-basic-0.1", "nacl-irt-memory-0.3"]);
    assert_eq!((r.exit, r.trap.as_deref()), (Some(24 | 12 << 8), None));
}

/// The environment WASI gives is the program's, in both startup blocks: `envc` and
/// `envp` after argv's NULL in the IRT era's (the same strings as the pre-IRT block's).
/// The program exits with `envp[0][0] + envc` plus the difference of the two blocks'
/// `envp[0]`.
#[test]
fn the_environment_reaches_both_startup_blocks() {
    use iced_x86::code_asm::*;
    let code = bundle_ended(1, |_, a| {
        a.mov(ebx, edi).unwrap(); // the IRT era's block
        a.mov(ecx, dword_ptr(rbx + 8)).unwrap(); // argc
        a.mov(eax, dword_ptr(rbx + rcx * 4 + 16)).unwrap(); // envp[0]
        a.mov(esi, dword_ptr(rsp + rcx * 4 + 12)).unwrap(); // the pre-IRT block's
        a.sub(esi, eax).unwrap();
        a.movzx(eax, byte_ptr(r15 + rax)).unwrap();
        a.add(eax, dword_ptr(rbx + 4)).unwrap(); // envc
        a.add(eax, esi).unwrap();
        a.mov(edi, eax).unwrap();
        // exit through the pre-IRT trampoline
        a.mov(r11d, 0x10000 + 32 * 30).unwrap();
        naclcall_r11(a).unwrap();
    });
    let wasm = with_runtime(&code);
    let r = run_with(&wasm, &["e", "a"], &["X=1", "Y=22"]);
    assert_eq!((r.exit, r.trap.as_deref()), (Some(b'X' as i32 + 2), None));
    let r = run_with(&wasm, &["e"], &["HOME=/data"]);
    assert_eq!((r.exit, r.trap.as_deref()), (Some(b'H' as i32 + 1), None));
}

/// One step of a hand-assembled program: its instructions before a syscall.
type Step = fn(&mut iced_x86::code_asm::CodeAssembler) -> Result<(), iced_x86::IcedError>;

/// `steps` as a program at 0x20000 ([`bundle_ended`]), each ending in NaCl's call
/// through `%r11` to the address in `%r13d` (a trampoline slot or an IRT function).
fn step_code(steps: &[Step]) -> Vec<u8> {
    use iced_x86::code_asm::*;
    bundle_ended(steps.len(), |i, a| {
        steps[i](a).unwrap();
        a.mov(r11d, r13d).unwrap();
        naclcall_r11(a).unwrap();
    })
}

/// [`step_code`] translated with the runtime.
fn syscall_steps(steps: &[Step]) -> Vec<u8> {
    with_runtime(&step_code(steps))
}

/// The break never grows over a mapping, through the IRT's `sysbrk` or the trampoline's
/// (glibc calls the trampoline's when its IRT table has no `sysbrk`, and maps through the
/// IRT's `mmap`): a program asks for `nacl-irt-memory-0.3`, reads the break
/// (`sysbrk(0)`), maps 64 KiB (it lands above the break), then asks the trampoline to move
/// the break 128 KiB up, over the mapping. It exits with the mapping's result (0) plus the
/// distance the break moved in 64 KiB units (0: refused, the break stays).
#[test]
fn the_trampoline_sysbrk_does_not_grow_over_a_mapping() {
    use iced_x86::code_asm::*;
    const SYSBRK: u32 = 0x10000 + 32 * 20;
    const EXIT: u32 = 0x10000 + 32 * 30;
    let steps: [Step; 5] = [
        |a| {
            a.mov(ebx, edi)?; // the startup block
            a.mov(ecx, dword_ptr(rbx + 8))?; // argc
            a.lea(r12, qword_ptr(rbx + rcx * 4 + 20))?; // auxv
            a.mov(r13d, dword_ptr(r12 + 4))?; // AT_SYSINFO: nacl_irt_query
            a.sub(rsp, 128)?;
            a.mov(edi, dword_ptr(rbx + 16))?; // argv[1]
            a.mov(rsi, rsp)?;
            a.mov(edx, 24u32)
        },
        |a| {
            a.mov(edi, 0u32)?;
            a.mov(r13d, SYSBRK)
        },
        |a| {
            a.mov(r14d, eax)?; // the break
            a.mov(qword_ptr(rsp + 64), 0)?;
            a.lea(rdi, qword_ptr(rsp + 64))?;
            a.mov(esi, 0x10000u32)?;
            a.mov(edx, 3u32)?; // PROT_READ | PROT_WRITE
            a.mov(ecx, 0x22u32)?; // MAP_PRIVATE | MAP_ANONYMOUS
            a.mov(r8d, -1)?;
            a.mov(r9d, 0u32)?;
            a.mov(r13d, dword_ptr(rsp)) // the table's mmap
        },
        |a| {
            a.mov(r12d, eax)?; // mmap's result
            a.lea(edi, dword_ptr(r14 + 0x20000))?;
            a.mov(r13d, SYSBRK)
        },
        |a| {
            a.sub(eax, r14d)?;
            a.shr(eax, 16)?;
            a.add(eax, r12d)?;
            a.mov(edi, eax)?;
            a.mov(r13d, EXIT)
        },
    ];
    let wasm = syscall_steps(&steps);
    let r = run(&wasm, &["b", "nacl-irt-memory-0.3"]);
    assert_eq!((r.exit, r.trap.as_deref()), (Some(0), None));
}

/// The pre-IRT `fstat` syscall (17) answers as the IRT's: 0 and the stat for a stream, and
/// NaCl's negative errno for a descriptor that is not open (it answered `-ENOSYS`, so
/// newlib's stdio could not tell a terminal from a file).
#[test]
fn the_trampoline_fstat_answers_as_the_irts() {
    use iced_x86::code_asm::*;
    const FSTAT: u32 = 0x10000 + 32 * 17;
    const EXIT: u32 = 0x10000 + 32 * 30;
    let steps: [Step; 3] = [
        |a| {
            a.sub(rsp, 256)?;
            a.mov(edi, 1u32)?;
            a.mov(rsi, rsp)?;
            a.mov(r13d, FSTAT)
        },
        |a| {
            a.mov(r14d, eax)?; // 0 expected
            a.mov(edi, 7u32)?; // not open: -EBADF
            a.mov(rsi, rsp)?;
            a.mov(r13d, FSTAT)
        },
        |a| {
            // exit(first | (second != -9) << 8): 0 when both answered as expected
            a.cmp(eax, -9)?;
            a.setne(cl)?;
            a.movzx(ecx, cl)?;
            a.shl(ecx, 8)?;
            a.or(ecx, r14d)?;
            a.mov(edi, ecx)?;
            a.mov(r13d, EXIT)
        },
    ];
    let wasm = syscall_steps(&steps);
    let r = run(&wasm, &["f"]);
    assert_eq!((r.exit, r.trap.as_deref()), (Some(0), None));
}

/// The dynamic-code interface is answered (12 bytes), and calling it says that it is not
/// translated yet (the translator's words, on stderr), then traps.
#[test]
fn irt_dyncode_says_not_translated_yet() {
    let wasm = query_module();
    let r = run(&wasm, &["q", "nacl-irt-dyncode-0.1", "nacl-irt-basic-0.1"]);
    assert_eq!(r.exit, None);
    assert!(r.trap.is_some());
    assert_eq!(
        String::from_utf8_lossy(&r.stderr),
        "not translated yet: the dynamic-code interface `nacl-irt-dyncode-0.1`\n"
    );
}

/// A pre-IRT program's mutex and condition syscalls (70-79, through the trampolines) are
/// a single thread's: creates answer consecutive handles, locks, unlocks and signals 0,
/// a wait nothing could end `-EDEADLK` and a timed one `-ETIMEDOUT`, without hanging.
#[test]
fn pre_irt_mutex_and_cond_syscalls_end() {
    use iced_x86::code_asm::*;
    // (syscall, what to do with its %rax): r12 the first handle, r14 the results
    // ORed (shifted by the step's bits), then exit(r14)
    let calls: &[(u32, u32)] = &[
        (70, 0), // mutex_create → r12
        (74, 1), // cond_create: r14 |= (rax - r12) << 24
        (71, 2), // mutex_lock(r12): r14 |= rax
        (73, 2), // trylock
        (72, 2), // unlock
        (76, 2), // cond_signal
        (77, 2), // cond_broadcast
        (75, 3), // cond_wait: r14 |= -rax << 8
        (79, 4), // cond_timed_wait_abs: r14 |= -rax << 16
        (30, 5), // exit(r14)
    ];
    let code = bundle_ended(calls.len(), |i, a| {
        let n = calls[i].0;
        // what to do with the previous call's %rax
        let prev = i.checked_sub(1).map_or(0, |p| calls[p].1);
        match prev {
            0 if i == 0 => {
                a.xor(r14d, r14d).unwrap();
            }
            0 => a.mov(r12, rax).unwrap(),
            1 => {
                a.sub(rax, r12).unwrap();
                a.shl(rax, 24).unwrap();
                a.or(r14, rax).unwrap();
            }
            2 => a.or(r14, rax).unwrap(),
            3 | 4 => {
                a.neg(rax).unwrap();
                a.shl(rax, if prev == 3 { 8 } else { 16 }).unwrap();
                a.or(r14, rax).unwrap();
            }
            _ => {}
        }
        a.mov(rdi, r12).unwrap();
        a.mov(rsi, r12).unwrap();
        if n == 30 {
            a.mov(rdi, r14).unwrap();
        }
        a.mov(r11d, 0x10000 + 32 * n).unwrap();
        naclcall_r11(a).unwrap();
    });
    let wasm = with_runtime(&code);
    let r = run(&wasm, &["m"]);
    assert_eq!(
        (r.exit, r.trap.as_deref()),
        (Some(1 << 24 | 35 << 8 | 110 << 16), None)
    );
}

/// A static Pepper nexe translates into a module with the Pepper ABI of converted pexes
/// (docs/PEPPER-ABI.md): the host imports, one import per function of each PPB interface
/// it names with the description's wasm signature, and the `__ppp_*`/`__ppapi_*` exports;
/// it names `nacl-irt-thread`, so it is threaded as such a pexe is (a shared memory,
/// wasi-threads, the host's `wait`).
#[test]
fn pepper_nexe_has_the_pexe_pepper_abi() {
    let Some(p) = program("ckauth-x86_64.nexe") else {
        return;
    };
    wasmparser::Validator::new()
        .validate_all(&p.wasm)
        .expect("the translated plugin validates");
    let d = pexe2wasm_ppapi::description();
    let mut types: Vec<wasmparser::FuncType> = Vec::new();
    let mut host = Vec::new();
    let mut threads = Vec::new();
    let mut exports = Vec::new();
    let mut ppb = 0;
    for payload in wasmparser::Parser::new(0).parse_all(&p.wasm) {
        match payload.unwrap() {
            wasmparser::Payload::TypeSection(r) => {
                for t in r.into_iter_err_on_gc_types() {
                    types.push(t.unwrap());
                }
            }
            wasmparser::Payload::ImportSection(r) => {
                for i in r.into_imports() {
                    let i = i.unwrap();
                    let wasmparser::TypeRef::Func(t) = i.ty else {
                        if let wasmparser::TypeRef::Memory(m) = i.ty {
                            assert!(m.shared, "{}.{}", i.module, i.name);
                            threads.push(format!("{}.{}", i.module, i.name));
                        }
                        continue;
                    };
                    match i.module {
                        "pexe2wasm_ppapi" => host.push(i.name.to_string()),
                        "wasi" | "pexe2wasm" => threads.push(format!("{}.{}", i.module, i.name)),
                        "wasi_snapshot_preview1" => {}
                        m => {
                            let iface = d.interface(m).unwrap_or_else(|| panic!("{m}"));
                            let want = iface.function(i.name).unwrap().wasm_signature();
                            let f = &types[t as usize];
                            let got: Vec<String> =
                                f.params().iter().map(|t| t.to_string()).collect();
                            let want_params: Vec<String> =
                                want.params.iter().map(|t| t.as_str().to_string()).collect();
                            assert_eq!(got, want_params, "{m}.{}", i.name);
                            assert_eq!(f.results().len(), want.results.len(), "{m}.{}", i.name);
                            ppb += 1;
                        }
                    }
                }
            }
            wasmparser::Payload::ExportSection(r) => {
                for e in r {
                    exports.push(e.unwrap().name.to_string());
                }
            }
            _ => {}
        }
    }
    assert_eq!(
        host,
        [
            "start",
            "get_interface",
            "register_thread_creator",
            "fill",
            "done",
            "wait"
        ]
    );
    assert_eq!(
        threads,
        ["wasi.thread-spawn", "pexe2wasm.thread_exit", "env.memory"]
    );
    // ckauth names 21 PPB interfaces, 126 functions in all
    assert_eq!(ppb, 126);
    let module = pexe2wasm_ppapi::MODULE_EXPORTS.iter();
    let wanted = module.filter(|e| !pexe2wasm_ppapi::PEXE_ONLY_EXPORTS.contains(e));
    // ckauth names nacl-irt-thread: a threaded module, which threads start through
    for e in ["_start", "memory", "wasi_thread_start"]
        .iter()
        .chain(wanted)
    {
        assert!(exports.iter().any(|x| x == e), "{e} is not exported");
    }
}
