//! Converted programs are plain WASI commands: real pexes and `fixtures/hello.pexe` are
//! converted to a `.wasm` file and run by the stock wasmtime CLI (`wasmtime run FILE.wasm
//! ARGS`, no other flags), and their stdout must match the expected output byte for byte.
//! Modules that use setjmp/longjmp need wasm exception handling and are run with
//! `-W exceptions=y` (wasmtime 48 enables it by default; the flag says what they need).
//!
//! The `wasmtime` binary is found by `pexe2wasm_testkit::wasmtime_cli` (48.x, on PATH or
//! in `$CARGO_HOME/bin`); when it is missing the tests print `SKIPPED` and pass, except
//! under `CI=true`, where they fail.

use pexe2wasm_testkit::corpus as common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pexe2wasm::convert::{convert, ConvertOptions};

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The wasmtime binary, or `None` after printing SKIPPED (panics under CI).
fn wasmtime_or_skip() -> Option<PathBuf> {
    pexe2wasm_testkit::wasmtime_cli::or_skip()
}

/// Converts `pexe` to `dir/rel` and runs `wasmtime run FLAGS rel ARGS` in `dir`, with no
/// stdin, no environment passed through and no directories. Returns (exit code, stdout,
/// stderr). (wasmtime passes the file's name, without its directory, as argv[0] unless
/// `--argv0` says otherwise.)
fn run_stock(
    wasmtime: &Path,
    pexe: &[u8],
    dir: &Path,
    rel: &str,
    flags: &[&str],
    args: &[&str],
) -> (i32, Vec<u8>, String) {
    let out = convert(pexe, &ConvertOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let file = dir.join(rel);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, &out.wasm).unwrap();
    let mut child = Command::new(wasmtime)
        .arg("run")
        .args(flags)
        .arg(rel)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", wasmtime.display()));
    // Read the pipes on threads so a large output cannot block the child.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut b).map(|_| b)
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut b).map(|_| b)
    });
    let limit = Duration::from_secs(300);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{rel}: wasmtime ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = t_out.join().unwrap().unwrap();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap().unwrap()).into_owned();
    (status.code().unwrap_or(-1), stdout, stderr)
}

/// The expected stdout in `expected/<file>`: the text after `# STDOUT:`, or the file
/// named by `# STDOUT_FILE:` (found in `expected/` by its last path component).
fn expected(file: &str) -> Option<Vec<u8>> {
    let dir = common::real_corpus_dir().join("expected");
    let text = match std::fs::read(dir.join(file)) {
        Ok(t) => t,
        Err(e) if under_ci() => panic!("expected/{file} is missing under CI: {e}"),
        Err(e) => {
            eprintln!("SKIPPED: expected/{file} not found ({e})");
            return None;
        }
    };
    let s = String::from_utf8_lossy(&text);
    if let Some(i) = s.find("# STDOUT:\n") {
        return Some(text[i + "# STDOUT:\n".len()..].to_vec());
    }
    let line = s
        .lines()
        .find_map(|l| l.strip_prefix("# STDOUT_FILE: "))
        .unwrap_or_else(|| panic!("expected/{file} has neither STDOUT nor STDOUT_FILE"));
    let base = line.rsplit('/').next().unwrap();
    let alt = format!("binji-benchmark-{base}");
    Some(
        std::fs::read(dir.join(&alt))
            .or_else(|_| std::fs::read(dir.join(base)))
            .unwrap_or_else(|e| panic!("expected/{alt}: {e}")),
    )
}

fn assert_same(what: &str, got: &[u8], want: &[u8], code: i32, stderr: &str) {
    if got != want {
        let at = got
            .iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        panic!(
            "{what}: stdout differs from the expected output at byte {at} ({} bytes, want {}); exit {code}\n\
             --- got (from byte {at}):\n{}\n--- want:\n{}\n--- stderr:\n{stderr}",
            got.len(),
            want.len(),
            String::from_utf8_lossy(&got[at.min(got.len())..(at + 300).min(got.len())]),
            String::from_utf8_lossy(&want[at.min(want.len())..(at + 300).min(want.len())]),
        );
    }
    assert_eq!(code, 0, "{what}: exit status (stderr: {stderr})");
}

/// Converts the real pexe `name`, runs it as `res/<stem>.wasm ARGS` and compares stdout
/// with `expected/<expect>`.
fn check_real(name: &str, args: &[&str], expect: &str) {
    check_real_with(name, &[], args, expect);
}

/// [`check_real`] with wasmtime flags.
fn check_real_with(name: &str, flags: &[&str], args: &[&str], expect: &str) {
    let Some(wasmtime) = wasmtime_or_skip() else {
        return;
    };
    let Some(pexe) = common::real_pexe(name) else {
        return;
    };
    let Some(want) = expected(expect) else {
        return;
    };
    let stem = name.trim_start_matches("binji-").trim_end_matches(".pexe");
    let dir = common::Scratch::new(stem);
    let rel = format!("res/{stem}.wasm");
    let (code, out, err) = run_stock(&wasmtime, &pexe, &dir.0, &rel, flags, args);
    assert_same(
        &format!("wasmtime run {} {rel} {}", flags.join(" "), args.join(" ")),
        &out,
        &want,
        code,
        &err,
    );
}

#[test]
fn hello_fixture() {
    let Some(wasmtime) = wasmtime_or_skip() else {
        return;
    };
    let pexe = std::fs::read(pexe2wasm_testkit::repo_path("fixtures/hello.pexe")).unwrap();
    let dir = common::Scratch::new("hello");
    let (code, out, err) = run_stock(&wasmtime, &pexe, &dir.0, "hello.wasm", &[], &["x", "y"]);
    assert_same(
        "wasmtime run hello.wasm",
        &out,
        b"Hello from a pexe with no libc, via the NaCl IRT!\n",
        code,
        &err,
    );
}

#[test]
fn binji_puts() {
    // puts("Hello, World!\n"): puts adds a second newline.
    check_real("binji-puts.pexe", &[], "binji-puts.txt");
}

#[test]
fn binji_printf_three_args() {
    // printf prints its argv. pnacl.c's expected output was made with the pexe's path
    // (res/printf.pexe) as argv[0]. Plain `wasmtime run res/printf.wasm` passes the file
    // name, "printf.wasm", so that one line differs; with `--argv0 res/printf.pexe` the
    // output is the expected file byte for byte.
    let Some(wasmtime) = wasmtime_or_skip() else {
        return;
    };
    let Some(pexe) = common::real_pexe("binji-printf.pexe") else {
        return;
    };
    let Some(want) = expected("binji-printf-printf-3.txt") else {
        return;
    };
    let want = String::from_utf8(want).unwrap();
    assert!(want.starts_with("arg0 = res/printf.pexe\n"), "{want}");
    let dir = common::Scratch::new("printf");
    let args = ["one", "two", "three"];
    let rel = "res/printf.wasm";
    let (code, out, err) = run_stock(&wasmtime, &pexe, &dir.0, rel, &[], &args);
    let plain = want.replacen("arg0 = res/printf.pexe\n", "arg0 = printf.wasm\n", 1);
    assert_same(
        "wasmtime run res/printf.wasm one two three",
        &out,
        plain.as_bytes(),
        code,
        &err,
    );
    let flags = ["--argv0", "res/printf.pexe"];
    let (code, out, err) = run_stock(&wasmtime, &pexe, &dir.0, rel, &flags, &args);
    assert_same(
        "wasmtime run --argv0 res/printf.pexe res/printf.wasm one two three",
        &out,
        want.as_bytes(),
        code,
        &err,
    );
}

#[test]
fn binji_binarytrees_10() {
    check_real(
        "binji-binarytrees.pexe",
        &["10"],
        "binji-benchmark-binarytrees.txt",
    );
}

#[test]
fn binji_fannkuchredux_7() {
    check_real(
        "binji-fannkuchredux.pexe",
        &["7"],
        "binji-benchmark-fannkuchredux.txt",
    );
}

#[test]
fn binji_fasta_1000() {
    check_real("binji-fasta.pexe", &["1000"], "binji-benchmark-fasta.txt");
}

#[test]
fn binji_mandelbrot_200() {
    // Binary PBM output: the expected bytes are the `.txt.output` file.
    check_real(
        "binji-mandelbrot.pexe",
        &["200"],
        "binji-benchmark-mandelbrot.txt",
    );
}

#[test]
fn binji_meteor_2098() {
    check_real("binji-meteor.pexe", &["2098"], "binji-benchmark-meteor.txt");
}

#[test]
fn binji_nbody_1000() {
    check_real("binji-nbody.pexe", &["1000"], "binji-benchmark-nbody.txt");
}

#[test]
fn binji_setjmp_10() {
    // longjmp out of a recursion: wasm exception handling.
    check_real_with(
        "binji-setjmp.pexe",
        &["-W", "exceptions=y"],
        &["10"],
        "binji-setjmp.txt",
    );
}

#[test]
fn binji_spectralnorm_100() {
    check_real(
        "binji-spectralnorm.pexe",
        &["100"],
        "binji-benchmark-spectralnorm.txt",
    );
}
