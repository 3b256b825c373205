//! The runtime's standard output buffer (docs/RUNTIME-ABI.md, "Standard output"): a
//! converted module buffers fd 1 itself when it is not a terminal, so it makes few `write`
//! calls under any WASI host, and writes the buffer out at each point a C library would
//! (every way out, a read of stdin, a write to stderr, fsync, a sleep). Each test runs the
//! same `pexe2wasm_testkit::stdio_script` pexe under the stock wasmtime CLI (the module
//! converted unthreaded: stock wasmtime has no `pexe2wasm` thread imports) and under
//! `pexe2wasm run` with the unthreaded and the threaded runtime. `pexe2wasm run` coalesces
//! stdout on its own as well (run_stdio.rs), so the write counts that show the module's
//! buffer are the stock wasmtime ones.
use pexe2wasm::convert::{convert, ConvertOptions, Threads};
use pexe2wasm_testkit::corpus::Scratch;
use pexe2wasm_testkit::stdio_script::{err, expected_output, out, program, Op};

use crate::cmd::{fd1_writes, have, packet_pipe, same};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// A line as fasta prints them (61 bytes): 16 fit in the runtime's 1 KiB buffer.
const LINE: &str = "GGCCGGGCGCGGTGGCTCACGCCTGTAATCCCAGCACTTTGGGAGGCCGAGGCGGGCGGA\n";
/// The runtime's buffer size (`pexe2wasm::runtime::STDOUT_BUFFER_BYTES`).
const BUFFER: usize = pexe2wasm::runtime::STDOUT_BUFFER_BYTES as usize;

/// Where a program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host {
    /// `wasmtime run script.wasm`, the module converted unthreaded.
    Wasmtime,
    /// `pexe2wasm run --threads off|on script.pexe`.
    Run { threads: bool },
}

/// The hosts a test runs under: stock wasmtime only when it is installed (else a loud
/// skip, a failure under CI).
fn hosts() -> Vec<Host> {
    let mut h = Vec::new();
    if pexe2wasm_testkit::wasmtime_cli::or_skip().is_some() {
        h.push(Host::Wasmtime);
    }
    h.extend([Host::Run { threads: false }, Host::Run { threads: true }]);
    h
}

/// A script as a pexe and as the unthreaded module stock wasmtime runs, in a scratch
/// directory. Both runtime variants of it are validated.
struct Prog {
    dir: Scratch,
    pexe: PathBuf,
    wasm: PathBuf,
}

impl Prog {
    fn new(ops: &[Op]) -> Prog {
        let pexe = pexe2wasm::text::assemble(&program(ops)).expect("the script assembles");
        let dir = Scratch::new("stdout-buffer");
        dir.put("script.pexe", &pexe);
        for threads in [Threads::Off, Threads::On] {
            let opts = ConvertOptions {
                threads,
                ..Default::default()
            };
            let wasm = convert(&pexe, &opts).expect("the script converts").wasm;
            wasmparser::Validator::new()
                .validate_all(&wasm)
                .unwrap_or_else(|e| panic!("{threads:?}: the module does not validate: {e}"));
            if threads == Threads::Off {
                dir.put("script.wasm", &wasm);
            }
        }
        Prog {
            pexe: dir.join("script.pexe"),
            wasm: dir.join("script.wasm"),
            dir,
        }
    }

    /// The command line that runs the program under `host`, as words.
    fn argv(&self, host: Host) -> Vec<String> {
        match host {
            Host::Wasmtime => vec![
                pexe2wasm_testkit::wasmtime_cli::find()
                    .unwrap()
                    .display()
                    .to_string(),
                "run".into(),
                self.wasm.display().to_string(),
            ],
            Host::Run { threads } => vec![
                env!("CARGO_BIN_EXE_pexe2wasm").into(),
                "run".into(),
                "--threads".into(),
                if threads { "on" } else { "off" }.into(),
                self.pexe.display().to_string(),
            ],
        }
    }

    fn command(&self, host: Host) -> Command {
        let argv = self.argv(host);
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..]);
        c
    }

    /// Runs under `host` with stdout into a file and stderr into another: (exit status,
    /// the stdout file).
    fn run_into_file(&self, host: Host) -> (Option<i32>, Vec<u8>) {
        let path = self.dir.join("out.txt");
        let status = self
            .command(host)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&path).unwrap())
            .stderr(std::fs::File::create(self.dir.join("err.txt")).unwrap())
            .status()
            .unwrap();
        (status.code(), std::fs::read(path).unwrap())
    }

    /// Runs under `host` with stdout into a file, traced by strace: (stdout, the number
    /// of write(2)/writev(2) calls to fd 1).
    fn strace_into_file(&self, host: Host) -> (Vec<u8>, usize) {
        let log = self.dir.join("strace.log");
        let path = self.dir.join("out.txt");
        let status = Command::new("strace")
            .args(["-f", "-e", "trace=write,writev", "-o"])
            .arg(&log)
            .args(self.argv(host))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&path).unwrap())
            .status()
            .unwrap();
        assert!(status.success(), "{host:?}: {status}");
        (std::fs::read(path).unwrap(), fd1_writes(&log))
    }
}

#[test]
fn every_way_out_writes_the_buffer_out() {
    // 40 lines and a line without its newline: the last 8 lines and the tail are in the
    // buffer when the program ends (16 lines fill it), so an end that skips the write-out
    // loses them.
    let ends = [
        (None, 0),
        (Some(Op::Exit(7)), 7),
        (Some(Op::Return), 0),
        (Some(Op::ThreadExit), 0),
    ];
    for host in hosts() {
        for (end, status) in &ends {
            let mut ops = vec![out(LINE, 40), out("the tail, no newline", 1)];
            ops.extend(end.clone());
            let p = Prog::new(&ops);
            let (code, got) = p.run_into_file(host);
            let what = format!("{host:?}, ending {end:?}");
            assert_eq!(code, Some(*status), "{what}");
            same(&got, &expected_output(&ops, &[]).0, &what);
        }
    }
}

#[test]
fn a_trap_loses_at_most_the_buffer() {
    let ops = [out(LINE, 40), out("the tail, no newline", 1), Op::Trap];
    let want = expected_output(&ops, &[]).0;
    let p = Prog::new(&ops);
    for host in hosts() {
        let (code, got) = p.run_into_file(host);
        assert_ne!(code, Some(0), "{host:?}: a trap is a failure");
        match host {
            // Stock wasmtime does not know the module's buffer: what it held is lost, as a
            // wasi-libc program loses its stdout buffer; everything before it is there.
            Host::Wasmtime => {
                assert!(want.starts_with(&got), "{host:?}: not a prefix");
                let lost = want.len() - got.len();
                assert!(lost <= BUFFER, "{host:?}: {lost} bytes lost");
            }
            // pexe2wasm run writes it out after the trap (__pexe2wasm_flush_stdout).
            Host::Run { .. } => same(&got, &want, &format!("{host:?}")),
        }
    }
}

#[test]
fn many_lines_into_a_file_take_few_writes() {
    if !have("strace") {
        return;
    }
    const LINES: u32 = 2000;
    let ops = [out(LINE, LINES)];
    let p = Prog::new(&ops);
    for host in hosts() {
        let (got, writes) = p.strace_into_file(host);
        same(&got, &expected_output(&ops, &[]).0, &format!("{host:?}"));
        // Line by line: 2000 writes; through the buffer, 16 lines (976 bytes) a write.
        assert!(
            writes <= (LINES / 14) as usize,
            "{host:?}: {writes} writes for {LINES} lines"
        );
    }
}

#[test]
fn many_lines_into_a_pipe_take_few_writes() {
    const LINES: u32 = 2000;
    let ops = [out(LINE, LINES)];
    let p = Prog::new(&ops);
    for host in hosts() {
        let (r, w) = packet_pipe();
        let mut child = p
            .command(host)
            .stdin(Stdio::null())
            .stdout(Stdio::from(w))
            .spawn()
            .unwrap();
        let mut reader = std::fs::File::from(r);
        let (mut bytes, mut packets) = (Vec::new(), 0usize);
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            packets += 1;
            bytes.extend_from_slice(&buf[..n]);
        }
        assert_eq!(child.wait().unwrap().code(), Some(0), "{host:?}");
        same(&bytes, &expected_output(&ops, &[]).0, &format!("{host:?}"));
        assert!(
            packets <= (LINES / 14) as usize,
            "{host:?}: {packets} writes for {LINES} lines"
        );
    }
}

#[test]
fn a_terminal_gets_one_write_per_line() {
    if !have("strace") || !have("script") {
        return;
    }
    let ops = [out("a line\n", 50)];
    let p = Prog::new(&ops);
    for host in hosts() {
        let log = p.dir.join("strace.log");
        // script(1) runs the command on a new pseudo-terminal.
        let words: Vec<String> = p.argv(host).iter().map(|w| format!("'{w}'")).collect();
        let cmd = format!(
            "strace -f -e trace=write,writev -o '{}' {}",
            log.display(),
            words.join(" ")
        );
        let o = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{host:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // The terminal turns "\n" into "\r\n".
        assert_eq!(
            o.stdout,
            "a line\r\n".repeat(50).into_bytes(),
            "{host:?}: the terminal's output"
        );
        assert_eq!(fd1_writes(&log), 50, "{host:?}: one write per line");
    }
}

/// Reads `r` on a thread of its own, chunk by chunk.
fn reader(mut r: impl Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits until what `rx` delivered (appended to `got`) holds `want`: the time it did, or
/// `None` at `limit`.
fn wait_for(
    rx: &Receiver<Vec<u8>>,
    got: &mut Vec<u8>,
    want: &[u8],
    limit: Duration,
) -> Option<Instant> {
    let end = Instant::now() + limit;
    loop {
        if got.windows(want.len()).any(|w| w == want) {
            return Some(Instant::now());
        }
        let left = end.checked_duration_since(Instant::now())?;
        got.extend(rx.recv_timeout(left).ok()?);
    }
}

#[test]
fn a_prompt_shows_before_the_program_reads_stdin() {
    // Lines first, so the prompt is not alone in the buffer.
    let ops = [
        out(LINE, 3),
        out("prompt> ", 1),
        Op::Echo { max: 100 },
        out("bye\n", 1),
    ];
    let p = Prog::new(&ops);
    for host in hosts() {
        let mut child = p
            .command(host)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let rx = reader(child.stdout.take().unwrap());
        let mut got = Vec::new();
        // Standard input stays open until the prompt arrived: the program waits reading.
        let seen = wait_for(&rx, &mut got, b"prompt> ", Duration::from_secs(30));
        let mut stdin = child.stdin.take().unwrap();
        if seen.is_none() {
            let _ = child.kill();
        }
        assert!(
            seen.is_some(),
            "{host:?}: no prompt while the program waits"
        );
        stdin.write_all(b"hello\n").unwrap();
        drop(stdin);
        assert!(wait_for(&rx, &mut got, b"bye\n", Duration::from_secs(30)).is_some());
        assert_eq!(child.wait().unwrap().code(), Some(0), "{host:?}");
        let (want, _) = expected_output(&ops, &[b"hello\n".as_slice()]);
        same(&got, &want, &format!("{host:?}"));
    }
}

#[test]
fn stdout_and_stderr_keep_their_order_in_one_pipe() {
    let ops = [
        out("o1\n", 1),
        err("e1\n"),
        out("o2\n", 3),
        err("e2\n"),
        out(LINE, 300),
        err("e3\n"),
        out("o3\n", 1),
    ];
    let mut want = b"o1\ne1\no2\no2\no2\ne2\n".to_vec();
    want.extend(LINE.repeat(300).into_bytes());
    want.extend(b"e3\no3\n");
    let p = Prog::new(&ops);
    for host in hosts() {
        let (mut r, w) = std::io::pipe().unwrap();
        let mut child = p
            .command(host)
            .stdin(Stdio::null())
            .stdout(w.try_clone().unwrap())
            .stderr(w)
            .spawn()
            .unwrap();
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(0), "{host:?}");
        same(&got, &want, &format!("{host:?}"));
    }
}

#[test]
fn fsync_of_stdout_writes_the_buffer_out() {
    if !have("strace") {
        return;
    }
    let ops = [
        out("one\n", 1),
        Op::Fsync(1),
        out("two\n", 1),
        Op::Fsync(1),
        out("three\n", 1),
    ];
    let p = Prog::new(&ops);
    for host in hosts() {
        let (got, writes) = p.strace_into_file(host);
        same(&got, &expected_output(&ops, &[]).0, &format!("{host:?}"));
        // Buffered, the three lines would be one write; each fsync writes out the buffer.
        // (pexe2wasm run coalesces what reaches it again, so only the count under stock
        // wasmtime shows the module's write-outs.)
        if host == Host::Wasmtime {
            assert_eq!(writes, 3, "{host:?}: writes");
        }
    }
}

#[test]
fn a_sleep_writes_the_buffer_out() {
    // Two lines 1.5 s apart: the first must not wait in the buffer for the second.
    let ops = [out("early\n", 1), Op::SleepMs(1500), out("late\n", 1)];
    let p = Prog::new(&ops);
    for host in hosts() {
        let mut child = p
            .command(host)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let rx = reader(child.stdout.take().unwrap());
        let mut got = Vec::new();
        let early = wait_for(&rx, &mut got, b"early\n", Duration::from_secs(60)).unwrap();
        let late = wait_for(&rx, &mut got, b"late\n", Duration::from_secs(60)).unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(0), "{host:?}");
        assert_eq!(got, b"early\nlate\n", "{host:?}");
        assert!(
            late - early >= Duration::from_millis(1000),
            "{host:?}: \"early\" came only {:?} before \"late\"",
            late - early
        );
    }
}

#[test]
fn fasta_into_a_file_under_stock_wasmtime_takes_few_writes() {
    if !have("strace") {
        return;
    }
    let Some(wasmtime) = pexe2wasm_testkit::wasmtime_cli::or_skip() else {
        return;
    };
    let Some(data) = pexe2wasm_testkit::corpus::real_pexe("binji-fasta.pexe") else {
        return;
    };
    let wasm = convert(&data, &ConvertOptions::default()).unwrap().wasm;
    wasmparser::Validator::new()
        .validate_all(&wasm)
        .expect("fasta's module validates");
    // What it prints captured in memory by the runner is the reference.
    let opts = pexe2wasm_runner::RunOptions {
        args: vec!["fasta".into(), "25000".into()],
        ..Default::default()
    };
    let want = pexe2wasm_runner::run_wasm(&wasm, &opts).unwrap().stdout;
    let dir = Scratch::new("stdout-buffer-fasta");
    dir.put("fasta.wasm", &wasm);
    let log = dir.join("strace.log");
    let status = Command::new("strace")
        .args(["-f", "-e", "trace=write,writev", "-o"])
        .arg(&log)
        .arg(wasmtime)
        .arg("run")
        .arg(dir.join("fasta.wasm"))
        .arg("25000")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("out.txt")).unwrap())
        .status()
        .unwrap();
    assert!(status.success());
    same(
        &std::fs::read(dir.join("out.txt")).unwrap(),
        &want,
        "fasta 25000",
    );
    let lines = want.iter().filter(|&&b| b == b'\n').count();
    let writes = fd1_writes(&log);
    // Line by line: 4,168 writes; through the buffer about 254 KB / 1 KiB.
    assert!(writes <= lines / 10, "{writes} writes for {lines} lines");
}
