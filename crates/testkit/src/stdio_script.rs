//! Small pexes that do a list of standard-stream operations straight through the IRT, for
//! the tests of how `pexe2wasm run` passes a program's output to the host (stdio.rs in the
//! runner).
//!
//! Each write is one call of `nacl-irt-fdio-0.1`'s `write`, as the C library inside real
//! pexes makes one per line (it line-buffers stdout whatever fd 1 is). [`program`] returns
//! PNaClAsm text; assemble it with `pexe2wasm::text::assemble` or `pexe2wasm asm`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The interfaces beyond fdio and basic that some ops ask `__nacl_irt_query` for.
const DEV_FDIO: &[u8] = b"nacl-irt-dev-fdio-0.3\0";
const THREAD: &[u8] = b"nacl-irt-thread-0.1\0";

/// One step of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `write(fd, text)`, `times` times in a row (one IRT call each).
    Write { fd: u32, text: Vec<u8>, times: u32 },
    /// One `read(0, buf, max)` (max ≤ 960), then `write(1, buf, nread)` of what it read.
    Echo { max: u32 },
    /// `nanosleep` for this many milliseconds.
    SleepMs(u32),
    /// `fsync(fd)` (`nacl-irt-dev-fdio-0.3`), as `fflush` and `fsync` reach the IRT.
    Fsync(u32),
    /// `exit(status)`.
    Exit(u32),
    /// `thread_exit(NULL)` (`nacl-irt-thread-0.1`) in the main thread: the program ends with
    /// its last thread.
    ThreadExit,
    /// Return from `_start` (the WASI command ends with status 0).
    Return,
    /// `llvm.trap`.
    Trap,
}

/// `times` writes of `text` to fd 1.
pub fn out(text: &str, times: u32) -> Op {
    Op::Write {
        fd: 1,
        text: text.as_bytes().to_vec(),
        times,
    }
}

/// One write of `text` to fd 2.
pub fn err(text: &str) -> Op {
    Op::Write {
        fd: 2,
        text: text.as_bytes().to_vec(),
        times: 1,
    }
}

/// What the script writes to fd 1 and fd 2, given what one `Echo` reads each (in order).
pub fn expected_output(ops: &[Op], echoed: &[&[u8]]) -> (Vec<u8>, Vec<u8>) {
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let mut echoed = echoed.iter();
    for op in ops {
        match op {
            Op::Write { fd, text, times } => {
                let dst = if *fd == 2 { &mut e } else { &mut o };
                for _ in 0..*times {
                    dst.extend_from_slice(text);
                }
            }
            Op::Echo { .. } => o.extend_from_slice(echoed.next().copied().unwrap_or_default()),
            Op::SleepMs(_) | Op::Fsync(_) => {}
            Op::Exit(_) | Op::Trap | Op::ThreadExit | Op::Return => break,
        }
    }
    (o, e)
}

/// The PNaClAsm text of a program that runs `ops` and then exits with status 0 (unless an
/// `Exit`, `Trap`, `ThreadExit` or `Return` ends it first). Its `_start` finds the IRT as `fixtures/hello.pnaclasm`
/// does.
pub fn program(ops: &[Op]) -> String {
    // Constants: value → name, in ascending order.
    let mut consts: BTreeMap<u32, String> = BTreeMap::new();
    let base = [0u32, 1, 4, 8, 12, 16, 20, 24, 32, 40, 56, 60, 64, 1024];
    let mut wanted: Vec<u32> = base.to_vec();
    let mut texts: Vec<&[u8]> = Vec::new();
    for op in ops {
        match op {
            Op::Write { fd, text, times } => {
                assert!(!text.is_empty() && *times >= 1);
                wanted.extend([*fd, text.len() as u32, *times]);
                if !texts.contains(&text.as_slice()) {
                    texts.push(text);
                }
            }
            Op::Echo { max } => {
                assert!(*max >= 1 && *max <= 960);
                wanted.push(*max);
            }
            Op::SleepMs(ms) => wanted.extend([ms / 1000, (ms % 1000) * 1_000_000]),
            Op::Fsync(fd) => {
                wanted.push(*fd);
                if !texts.contains(&DEV_FDIO) {
                    texts.push(DEV_FDIO);
                }
            }
            Op::ThreadExit => {
                if !texts.contains(&THREAD) {
                    texts.push(THREAD);
                }
            }
            Op::Exit(s) => wanted.push(*s),
            Op::Trap | Op::Return => {}
        }
    }
    wanted.sort_unstable();
    wanted.dedup();
    for (i, v) in wanted.iter().enumerate() {
        consts.insert(*v, format!("%c{i}"));
    }
    let c = |v: u32| consts[&v].clone();
    let g = |t: &[u8]| format!("@g{}", 2 + texts.iter().position(|x| *x == t).unwrap());

    let bytes = |b: &[u8]| {
        b.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = String::new();
    s.push_str(
        "module {\n  version 1;\n  types {\n    count 10;\n    @t0 = i32;\n    @t1 = void;\n    \
         @t2 = void (i32);\n    @t3 = i1;\n    @t4 = i8;\n    @t5 = void ();\n    \
         @t6 = i32 (i32, i32, i32);\n    @t7 = i32 (i32, i32, i32, i32);\n    @t8 = i32 (i32, i32);\n    \
         @t9 = i32 (i32);\n  }\n  \
         define external void @f0(i32);\n  declare external void @f1();\n  globals {\n",
    );
    writeln!(s, "    count {};", 2 + texts.len()).unwrap();
    writeln!(
        s,
        "    const @g0, align 1, {{ {} }}",
        bytes(b"nacl-irt-fdio-0.1\0")
    )
    .unwrap();
    writeln!(
        s,
        "    const @g1, align 1, {{ {} }}",
        bytes(b"nacl-irt-basic-0.1\0")
    )
    .unwrap();
    for (i, t) in texts.iter().enumerate() {
        writeln!(s, "    const @g{}, align 1, {{ {} }}", 2 + i, bytes(t)).unwrap();
    }
    s.push_str("  }\n  valuesymtab {\n    @f0 : \"_start\";\n    @f1 : \"llvm.trap\";\n  }\n");

    // The body, then its header (the block count is known at the end).
    let mut body = String::new();
    let mut v = 0usize;
    let mut val = || {
        v += 1;
        format!("%v{}", v - 1)
    };
    let (frame, envc_p, envc, argc_p, argc) = (val(), val(), val(), val(), val());
    let (sum, scaled, at, auxv) = (val(), val(), val(), val());
    writeln!(
        body,
        "  %b0:\n    {frame} = alloca i8, i32 {}, align 8;",
        c(1024)
    )
    .unwrap();
    writeln!(
        body,
        "    {envc_p} = add i32 %p0, {};\n    {envc} = load i32* {envc_p}, align 1;",
        c(4)
    )
    .unwrap();
    writeln!(
        body,
        "    {argc_p} = add i32 %p0, {};\n    {argc} = load i32* {argc_p}, align 1;",
        c(8)
    )
    .unwrap();
    writeln!(body, "    {sum} = add i32 {envc}, {argc};\n    {scaled} = mul i32 {sum}, {};\n    {at} = add i32 %p0, {scaled};\n    {auxv} = add i32 {at}, {};\n    br label %b1;", c(4), c(20)).unwrap();
    let (pair, ty, found) = (val(), val(), val());
    let (is_null, next) = (val(), val());
    writeln!(
        body,
        "  %b1:\n    {pair} = phi i32 [{auxv}, %b0], [{next}, %b2];\n    {ty} = load i32* {pair}, align 1;\n    {found} = icmp eq i32 {ty}, {};\n    br i1 {found}, label %b4, label %b2;",
        c(32)
    )
    .unwrap();
    writeln!(
        body,
        "  %b2:\n    {is_null} = icmp eq i32 {ty}, {};\n    {next} = add i32 {pair}, {};\n    br i1 {is_null}, label %b3, label %b1;",
        c(0),
        c(8)
    )
    .unwrap();
    body.push_str("  %b3:\n    call void @f1();\n    unreachable;\n");
    let (qp, query, r1, basic, r2) = (val(), val(), val(), val(), val());
    let (wp, write, rp, read, exit, nw, nr, buf) =
        (val(), val(), val(), val(), val(), val(), val(), val());
    writeln!(body, "  %b4:\n    {qp} = add i32 {pair}, {};\n    {query} = load i32* {qp}, align 1;\n    {r1} = call i32 {query}(i32 @g0, i32 {frame}, i32 {});\n    {basic} = add i32 {frame}, {};\n    {r2} = call i32 {query}(i32 @g1, i32 {basic}, i32 {});", c(4), c(32), c(32), c(24)).unwrap();
    writeln!(body, "    {wp} = add i32 {frame}, {};\n    {write} = load i32* {wp}, align 1;\n    {rp} = add i32 {frame}, {};\n    {read} = load i32* {rp}, align 1;\n    {exit} = load i32* {basic}, align 1;", c(16), c(12)).unwrap();
    writeln!(body, "    {nw} = add i32 {frame}, {};\n    {nr} = add i32 {frame}, {};\n    {buf} = add i32 {frame}, {};", c(56), c(60), c(64)).unwrap();
    let _ = (r1, r2);
    let exit_call = |status: u32| {
        format!(
            "    call void {exit}(i32 {});\n    unreachable;\n",
            c(status)
        )
    };
    // One IRT write of a whole text, its result in `r`.
    let write_call = |r: &str, fd: u32, text: &[u8]| {
        format!(
            "    {r} = call i32 {write}(i32 {}, i32 {}, i32 {}, i32 {nw});\n",
            c(fd),
            g(text),
            c(text.len() as u32)
        )
    };
    let mut block = 4usize;
    let mut ended = false;
    for op in ops {
        match op {
            Op::Write { fd, text, times: 1 } => {
                let r = val();
                body.push_str(&write_call(&r, *fd, text));
            }
            Op::Write { fd, text, times } => {
                let (i, r, i2, done) = (val(), val(), val(), val());
                let lp = block + 1;
                let after = block + 2;
                writeln!(body, "    br label %b{lp};\n  %b{lp}:\n    {i} = phi i32 [{}, %b{block}], [{i2}, %b{lp}];", c(0)).unwrap();
                body.push_str(&write_call(&r, *fd, text));
                writeln!(body, "    {i2} = add i32 {i}, {};\n    {done} = icmp eq i32 {i2}, {};\n    br i1 {done}, label %b{after}, label %b{lp};\n  %b{after}:", c(1), c(*times)).unwrap();
                block = after;
            }
            Op::Echo { max } => {
                let (r, n, w) = (val(), val(), val());
                writeln!(
                    body,
                    "    {r} = call i32 {read}(i32 {}, i32 {buf}, i32 {}, i32 {nr});\n    {n} = load i32* {nr}, align 1;\n    {w} = call i32 {write}(i32 {}, i32 {buf}, i32 {n}, i32 {nw});",
                    c(0),
                    c(*max),
                    c(1)
                )
                .unwrap();
            }
            Op::SleepMs(ms) => {
                // NaCl's struct timespec: i64 tv_sec, i32 tv_nsec; in the echo buffer.
                let (hi, nsec_p, sleep_p, sleep, r) = (val(), val(), val(), val(), val());
                writeln!(
                    body,
                    "    store i32 {}, i32* {buf}, align 1;\n    {hi} = add i32 {buf}, {};\n    store i32 {}, i32* {hi}, align 1;\n    {nsec_p} = add i32 {buf}, {};\n    store i32 {}, i32* {nsec_p}, align 1;",
                    c(ms / 1000),
                    c(4),
                    c(0),
                    c(8),
                    c((ms % 1000) * 1_000_000)
                )
                .unwrap();
                writeln!(
                    body,
                    "    {sleep_p} = add i32 {basic}, {};\n    {sleep} = load i32* {sleep_p}, align 1;\n    {r} = call i32 {sleep}(i32 {buf}, i32 {});",
                    c(12),
                    c(0)
                )
                .unwrap();
            }
            Op::Fsync(fd) => {
                // The dev-fdio table goes in the echo buffer; fsync is its slot 10.
                let (r, fp, f, e) = (val(), val(), val(), val());
                writeln!(
                    body,
                    "    {r} = call i32 {query}(i32 {}, i32 {buf}, i32 {});\n    {fp} = add i32 {buf}, {};\n    {f} = load i32* {fp}, align 1;\n    {e} = call i32 {f}(i32 {});",
                    g(DEV_FDIO),
                    c(56),
                    c(40),
                    c(*fd)
                )
                .unwrap();
            }
            Op::ThreadExit => {
                // The thread table goes in the echo buffer; thread_exit is its slot 1.
                let (r, fp, f) = (val(), val(), val());
                writeln!(
                    body,
                    "    {r} = call i32 {query}(i32 {}, i32 {buf}, i32 {});\n    {fp} = add i32 {buf}, {};\n    {f} = load i32* {fp}, align 1;\n    call void {f}(i32 {});\n    unreachable;",
                    g(THREAD),
                    c(12),
                    c(4),
                    c(0)
                )
                .unwrap();
            }
            Op::Return => body.push_str("    ret void;\n"),
            Op::Exit(status) => body.push_str(&exit_call(*status)),
            Op::Trap => body.push_str("    call void @f1();\n    unreachable;\n"),
        }
        // These end the program: nothing after them would run.
        if matches!(op, Op::ThreadExit | Op::Return | Op::Exit(_) | Op::Trap) {
            ended = true;
            break;
        }
    }
    if !ended {
        body.push_str(&exit_call(0));
    }
    writeln!(
        s,
        "  function void @f0(i32 %p0) {{\n    blocks {};",
        block + 1
    )
    .unwrap();
    s.push_str("    constants {\n      i32:\n");
    for (i, v) in wanted.iter().enumerate() {
        writeln!(s, "        %c{i} = i32 {v};").unwrap();
    }
    s.push_str("    }\n");
    s.push_str(&body);
    s.push_str("  }\n}\n");
    s
}
