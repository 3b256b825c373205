//! The command line's manners: exit codes (0 ok, 1 bad input, 2 usage), one-line errors,
//! `-` for stdin/stdout, no partial output files, quiet exit on a closed pipe, and the
//! dis → asm round trip through files.
use pexe2wasm_testkit::corpus as common;

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).stdin(Stdio::null()).output().unwrap()
}

fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut si = child.stdin.take().unwrap();
    let _ = si.write_all(input);
    drop(si);
    child.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["frobnicate"][..],
        &["info"][..],
        &["dis", "a", "b"][..],
        &["info", "--bogus", "x"][..],
        &["asm", "x.txt"][..], // -o is required
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!o.stderr.is_empty(), "{args:?}: no usage message");
    }
}

#[test]
fn help_and_version_exit_0() {
    for args in [&["--help"][..], &["--version"][..], &["dis", "--help"][..]] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(!o.stdout.is_empty());
    }
    let o = run(&["--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    for cmd in ["dis", "asm", "info", "verify"] {
        assert!(help.contains(cmd), "help lacks {cmd}: {help}");
    }
}

#[test]
fn unreadable_file_is_one_line_exit_1() {
    for cmd in ["dis", "info", "verify"] {
        let o = run(&[cmd, "/nonexistent/x.pexe"]);
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{cmd}: {e}");
        assert!(
            e.starts_with("error: /nonexistent/x.pexe: cannot read"),
            "{cmd}: {e}"
        );
    }
    let o = run(&["asm", "/nonexistent/x.txt", "-o", "/nonexistent/y.pexe"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn bad_input_on_stdin_is_named_stdin() {
    for cmd in ["dis", "info", "verify"] {
        let o = run_stdin(&[cmd, "-"], b"not a pexe at all");
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{cmd}: {e}");
        assert!(e.starts_with("error: <stdin>: bit 0 "), "{cmd}: {e}");
        assert!(o.stdout.is_empty(), "{cmd}: wrote to stdout");
    }
    let o = run_stdin(&["asm", "-", "-o", "-"], b"\xff\xfe not utf-8");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("error: <stdin>: "), "{}", stderr(&o));
}

#[test]
fn failed_output_leaves_no_file() {
    let dir = common::Scratch::new("nofile");
    let bad = dir.arg("bad.pexe");
    std::fs::write(&bad, b"PEXE garbage").unwrap();
    let out = dir.arg("out.txt");
    let o = run(&["dis", &bad, "-o", &out]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let mut left = dir.entries();
    left.sort();
    assert_eq!(left, ["bad.pexe"], "files left behind");

    let text = dir.arg("bad.txt");
    std::fs::write(&text, "this is not PNaClAsm {{{").unwrap();
    let out = dir.arg("out.pexe");
    let o = run(&["asm", &text, "-o", &out]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(!std::path::Path::new(&out).exists());
}

#[test]
fn verify_accepts_runnable_and_rejects_non_runnable() {
    let dir = common::real_corpus_dir();
    if common::real_pexe("binji-puts.pexe").is_none() {
        return;
    }
    let puts = dir.join("binji-puts.pexe").to_string_lossy().into_owned();
    let o = run(&["verify", &puts]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(": ok"));

    // A library-like test input without _start: not runnable, but ABI-valid.
    let lit = dir
        .join("pnacl-llvm-array-of-lit.pexe")
        .to_string_lossy()
        .into_owned();
    let o = run(&["verify", &lit]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("_start"), "{e}");
    let o = run(&["verify", "--no-runnable", &lit]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn dis_to_stdout_and_to_file_agree_and_round_trip() {
    let Some(data) = common::real_pexe("binji-puts.pexe") else {
        return;
    };
    let dir = common::Scratch::new("roundtrip");
    let pexe = dir.arg("puts.pexe");
    std::fs::write(&pexe, &data).unwrap();

    let to_stdout = run_stdin(&["dis", "-"], &data);
    assert_eq!(to_stdout.status.code(), Some(0), "{}", stderr(&to_stdout));
    assert!(to_stdout.stderr.is_empty());

    let txt = dir.arg("puts.txt");
    let o = run(&["dis", &pexe, "-o", &txt]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let file_text = std::fs::read(&txt).unwrap();
    assert!(
        file_text == to_stdout.stdout,
        "dis -o differs from dis to stdout"
    );

    let back = dir.arg("back.pexe");
    let o = run(&["asm", &txt, "-o", &back]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read(&back).unwrap() == data, "round trip differs");

    let o = run_stdin(&["asm", "-", "-o", "-"], &file_text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout == data, "asm to stdout differs");
}

#[test]
fn closed_pipe_exits_quietly() {
    let Some(_) = common::real_pexe("supernet-iguana.pexe") else {
        return;
    };
    let path = common::real_corpus_dir().join("supernet-iguana.pexe");
    let mut child = bin()
        .arg("dis")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Like `| head -c 4096`: read a little, then close the pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = [0u8; 4096];
    stdout.read_exact(&mut buf).unwrap();
    drop(stdout);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "stderr: {}", stderr(&o));
}
