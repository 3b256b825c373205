//! `pexe2wasm run`: a program's standard output is coalesced when the host's stdout is
//! not a terminal (a pipe, a file, /dev/null), as a C library would buffer it, and nothing
//! is lost or reordered for that (crates/runner/src/stdio.rs). The programs are
//! `pexe2wasm_testkit::stdio_script` pexes: each of their writes is one IRT `write`, as the
//! newlib inside real pexes makes one per line.
use pexe2wasm_testkit::corpus::Scratch;
use pexe2wasm_testkit::stdio_script::{err, expected_output, out, program, Op};

use crate::cmd::{fd1_writes, have, packet_pipe, same};
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
}

/// `ops` as a pexe in a scratch directory.
fn script(ops: &[Op]) -> (Scratch, PathBuf) {
    let pexe = pexe2wasm::text::assemble(&program(ops)).expect("the script assembles");
    let dir = Scratch::new("stdio");
    dir.put("script.pexe", &pexe);
    let path = dir.join("script.pexe");
    (dir, path)
}

/// 2000 lines of 61 bytes, as fasta prints them.
const LINE: &str = "GGCCGGGCGCGGTGGCTCACGCCTGTAATCCCAGCACTTTGGGAGGCCGAGGCGGGCGGA\n";
const LINES: u32 = 2000;

/// Runs `pexe2wasm ARGS` with its stdout into a packet pipe: (status, bytes, packets read).
/// Its stderr goes to a file (a trap's report is expected there).
fn run_into_packet_pipe(args: &[&OsStr]) -> (Option<i32>, Vec<u8>, usize) {
    let (r, w) = packet_pipe();
    let errs = Scratch::new("stdio-err");
    let mut child = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(w))
        .stderr(std::fs::File::create(errs.join("stderr")).unwrap())
        .spawn()
        .unwrap();
    let mut reader = std::fs::File::from(r);
    let (mut bytes, mut packets) = (Vec::new(), 0);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        packets += 1;
        bytes.extend_from_slice(&buf[..n]);
    }
    (child.wait().unwrap().code(), bytes, packets)
}

/// `pexe2wasm run FLAGS` of `ops` into a packet pipe: it exits with `status`, its output
/// whole, in few writes.
fn into_a_pipe_in_few_writes(ops: &[Op], flags: &[&str], status: Option<i32>) {
    let (_dir, pexe) = script(ops);
    let mut args: Vec<&OsStr> = vec!["run".as_ref()];
    args.extend(flags.iter().map(OsStr::new));
    args.push(pexe.as_ref());
    let (got, bytes, packets) = run_into_packet_pipe(&args);
    assert_eq!(got, status);
    same(&bytes, &expected_output(ops, &[]).0, "stdout");
    // Line by line it would be 2000 writes; coalesced it is about 122 KB / 8 KiB of them
    // (each read as two 4 KiB packets), with room for a few early flushes on a slow machine.
    assert!(
        packets <= LINES as usize / 20,
        "{packets} writes for {LINES} lines"
    );
}

#[test]
fn many_lines_into_a_pipe_take_few_writes() {
    into_a_pipe_in_few_writes(&[out(LINE, LINES)], &[], Some(0));
}

#[test]
fn threaded_program_into_a_pipe_takes_few_writes() {
    let ops = [out(LINE, LINES), Op::Exit(3)];
    into_a_pipe_in_few_writes(&ops, &["--threads", "on"], Some(3));
}

#[test]
fn many_lines_into_a_file_take_few_writes() {
    if !have("strace") {
        return;
    }
    let ops = [out(LINE, LINES)];
    let (dir, pexe) = script(&ops);
    let log = dir.join("strace.log");
    let file = std::fs::File::create(dir.join("out.txt")).unwrap();
    let status = Command::new("strace")
        .args(["-f", "-e", "trace=write,writev", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_pexe2wasm"))
        .arg("run")
        .arg(&pexe)
        .stdin(Stdio::null())
        .stdout(file)
        .status()
        .unwrap();
    assert!(status.success());
    same(
        &std::fs::read(dir.join("out.txt")).unwrap(),
        &expected_output(&ops, &[]).0,
        "the file",
    );
    let writes = fd1_writes(&log);
    assert!(
        writes <= LINES as usize / 40,
        "{writes} writes for {LINES} lines"
    );
}

#[test]
fn a_terminal_still_gets_one_write_per_line() {
    if !have("strace") || !have("script") {
        return;
    }
    let ops = [out("a line\n", 50)];
    let (dir, pexe) = script(&ops);
    let log = dir.join("strace.log");
    // script(1) runs the command on a new pseudo-terminal.
    let cmd = format!(
        "strace -f -e trace=write,writev -o '{}' '{}' run '{}'",
        log.display(),
        env!("CARGO_BIN_EXE_pexe2wasm"),
        pexe.display()
    );
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The terminal turns "\n" into "\r\n".
    assert_eq!(o.stdout, "a line\r\n".repeat(50).into_bytes());
    let writes = fd1_writes(&log);
    assert_eq!(writes, 50, "one write per line on a terminal");
}

#[test]
fn dev_null_takes_the_output() {
    let ops = [out(LINE, LINES), err("done\n")];
    let (_dir, pexe) = script(&ops);
    let o = bin()
        .arg("run")
        .arg(&pexe)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create("/dev/null").unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stderr, b"done\n");
}

/// Runs `pexe` with stdout and stderr into one pipe: (status, what the pipe got).
fn run_into_one_pipe(pexe: &Path, extra: &[&str]) -> (Option<i32>, Vec<u8>) {
    let (mut r, w) = std::io::pipe().unwrap();
    let mut child = bin()
        .arg("run")
        .args(extra)
        .arg(pexe)
        .stdin(Stdio::null())
        .stdout(w.try_clone().unwrap())
        .stderr(w)
        .spawn()
        .unwrap();
    let mut got = Vec::new();
    r.read_to_end(&mut got).unwrap();
    (child.wait().unwrap().code(), got)
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
    let (_dir, pexe) = script(&ops);
    let (status, got) = run_into_one_pipe(&pexe, &[]);
    assert_eq!(status, Some(0));
    let mut want = b"o1\ne1\no2\no2\no2\ne2\n".to_vec();
    want.extend(LINE.repeat(300).into_bytes());
    want.extend(b"e3\no3\n");
    same(&got, &want, "the pipe");
}

#[test]
fn output_before_a_trap_or_an_exit_is_kept() {
    for (end, status) in [(Op::Trap, 134), (Op::Exit(7), 7)] {
        for threads in ["off", "on"] {
            let ops = [out("before the end\n", 100), end.clone()];
            let (_dir, pexe) = script(&ops);
            let (code, got, _) = run_into_packet_pipe(&[
                "run".as_ref(),
                "--threads".as_ref(),
                threads.as_ref(),
                pexe.as_ref(),
            ]);
            assert_eq!(code, Some(status), "{end:?}, threads {threads}");
            same(
                &got,
                &expected_output(&ops, &[]).0,
                &format!("{end:?}, threads {threads}"),
            );
        }
    }
}

/// Reads `r` on a thread of its own: each chunk with the time it arrived.
fn timed_reader(
    mut r: impl Read + Send + 'static,
) -> std::sync::mpsc::Receiver<(Instant, Vec<u8>)> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 || tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                break;
            }
        }
    });
    rx
}

/// `pexe2wasm run PEXE` with `stdin` and its standard output piped, read by
/// [`timed_reader`].
fn run_timed(
    pexe: &Path,
    stdin: Stdio,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<(Instant, Vec<u8>)>,
) {
    let mut child = bin()
        .arg("run")
        .arg(pexe)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let rx = timed_reader(child.stdout.take().unwrap());
    (child, rx)
}

/// Waits for `rx` to have delivered `want` (appending to `got`); false at `limit`.
fn wait_for(
    rx: &std::sync::mpsc::Receiver<(Instant, Vec<u8>)>,
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
        match rx.recv_timeout(left) {
            Ok((_, chunk)) => got.extend(chunk),
            Err(_) => return None,
        }
    }
}

#[test]
fn a_prompt_shows_before_the_program_waits_for_input() {
    let ops = [out("prompt> ", 1), Op::Echo { max: 100 }, out("bye\n", 1)];
    let (_dir, pexe) = script(&ops);
    let (mut child, rx) = run_timed(&pexe, Stdio::piped());
    let mut got = Vec::new();
    // Standard input stays open until the prompt arrived: the program is blocked reading.
    let seen = wait_for(&rx, &mut got, b"prompt> ", Duration::from_secs(30));
    let mut stdin = child.stdin.take().unwrap();
    assert!(
        seen.is_some(),
        "no prompt while the program waits for input"
    );
    stdin.write_all(b"hello\n").unwrap();
    drop(stdin);
    assert!(wait_for(&rx, &mut got, b"bye\n", Duration::from_secs(30)).is_some());
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(got, b"prompt> hello\nbye\n");
}

#[test]
fn output_is_not_held_back_while_the_program_works() {
    // Two lines 1.5 s apart, the program neither reading nor exiting between them (as a
    // search thread prints while the main thread waits): the first must not wait for the
    // second.
    let ops = [out("early\n", 1), Op::SleepMs(1500), out("late\n", 1)];
    let (_dir, pexe) = script(&ops);
    let (mut child, rx) = run_timed(&pexe, Stdio::null());
    let mut got = Vec::new();
    let early = wait_for(&rx, &mut got, b"early\n", Duration::from_secs(60)).unwrap();
    let late = wait_for(&rx, &mut got, b"late\n", Duration::from_secs(60)).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(got, b"early\nlate\n");
    assert!(
        late - early >= Duration::from_millis(1000),
        "\"early\" came only {:?} before \"late\"",
        late - early
    );
}

#[test]
fn fasta_into_a_pipe_prints_the_same_with_few_writes() {
    let Some(data) = pexe2wasm_testkit::corpus::real_pexe("binji-fasta.pexe") else {
        return;
    };
    let dir = Scratch::new("stdio-fasta");
    dir.put("fasta.pexe", &data);
    // What it prints captured in memory (no host stdout involved) is the reference.
    let wasm = pexe2wasm::convert::convert(&data, &Default::default())
        .unwrap()
        .wasm;
    let opts = pexe2wasm_runner::RunOptions {
        args: vec!["fasta".into(), "25000".into()],
        ..Default::default()
    };
    let want = pexe2wasm_runner::run_wasm(&wasm, &opts).unwrap().stdout;
    let pexe = dir.join("fasta.pexe");
    let (status, bytes, packets) =
        run_into_packet_pipe(&["run".as_ref(), pexe.as_ref(), "25000".as_ref()]);
    assert_eq!(status, Some(0));
    same(&bytes, &want, "fasta into a pipe");
    let lines = want.iter().filter(|&&b| b == b'\n').count();
    // Line by line: 4,168 writes; coalesced: about 254 KB / 4 KiB packets.
    assert!(packets <= lines / 10, "{packets} writes for {lines} lines");
}
