//! `pexe2wasm run` and `pexe2wasm convert`: real pexes print what pnacl.c's tests expect,
//! the program's exit status becomes ours, a trap prints a backtrace and exits 134.
use pexe2wasm_testkit::corpus as common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
}

fn run_in(dir: Option<&Path>, args: &[&str]) -> Output {
    let mut c = bin();
    c.args(args).stdin(Stdio::null());
    if let Some(d) = dir {
        c.current_dir(d);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The expected stdout in one of pnacl.c's test files (the text after `# STDOUT:`).
fn expected(name: &str) -> Option<Vec<u8>> {
    let path = common::real_corpus_dir().join("expected").join(name);
    let text = std::fs::read(path).ok()?;
    let marker = b"# STDOUT:\n";
    let at = text.windows(marker.len()).position(|w| w == marker)?;
    Some(text[at + marker.len()..].to_vec())
}

/// Runs a real pexe from a scratch directory where it sits at `res/NAME.pexe`, the path
/// pnacl.c's tests ran it by (argv[0] is the path as given).
fn run_real(pexe: &str, res_name: &str, args: &[&str]) -> Option<Output> {
    let data = common::real_pexe(pexe)?;
    let dir = common::Scratch::new("real");
    std::fs::create_dir_all(dir.join("res")).unwrap();
    std::fs::write(dir.join(res_name), data).unwrap();
    let mut all = vec!["run", res_name];
    all.extend_from_slice(args);
    Some(run_in(Some(&dir.0), &all))
}

#[test]
fn puts_prints_hello_world() {
    let Some(out) = run_real("binji-puts.pexe", "res/puts.pexe", &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Hello, World!"));
    if let Some(want) = expected("binji-puts.txt") {
        assert_eq!(out.stdout, want);
    }
}

#[test]
fn printf_sees_its_arguments() {
    for (file, args) in [
        ("binji-printf-printf-0.txt", &[][..]),
        ("binji-printf-printf-1.txt", &["one"][..]),
        ("binji-printf-printf-3.txt", &["one", "two", "three"][..]),
    ] {
        let Some(out) = run_real("binji-printf.pexe", "res/printf.pexe", args) else {
            return;
        };
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        if let Some(want) = expected(file) {
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&want),
                "{file}"
            );
        }
    }
}

#[test]
fn convert_then_run_the_wasm() {
    let Some(_) = common::real_pexe("binji-puts.pexe") else {
        return;
    };
    let pexe = common::real_corpus_dir().join("binji-puts.pexe");
    let dir = common::Scratch::new("convert");
    let out = run_in(
        None,
        &[
            "convert",
            &pexe.display().to_string(),
            "-o",
            &dir.arg("puts.wasm"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let wasm = std::fs::read(dir.join("puts.wasm")).unwrap();
    assert!(wasm.starts_with(b"\0asm"));
    let out = run_in(None, &["run", &dir.arg("puts.wasm")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Hello, World!"));

    let out = run_in(
        None,
        &[
            "convert",
            &pexe.display().to_string(),
            "--wat",
            "-o",
            &dir.arg("puts.wat"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.join("puts.wat")).unwrap();
    assert!(
        text.starts_with("(module"),
        "{}",
        &text[..text.len().min(100)]
    );
    assert!(text.contains("__nacl_irt_query") || text.contains("_start"));
}

/// Writes a WASI command module compiled from `wat` and returns its path.
fn module(dir: &common::Scratch, name: &str, wat: &str) -> String {
    std::fs::write(dir.join(name), wat::parse_str(wat).unwrap()).unwrap();
    dir.arg(name)
}

#[test]
fn exit_status_and_traps() {
    let dir = common::Scratch::new("status");
    let exit42 = module(
        &dir,
        "exit42.wasm",
        r#"(module
          (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
          (memory (export "memory") 1)
          (func (export "_start") (call $exit (i32.const 42))))"#,
    );
    let out = run_in(None, &["run", &exit42]);
    assert_eq!(out.status.code(), Some(42));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));

    let trap = module(
        &dir,
        "trap.wasm",
        r#"(module
          (memory (export "memory") 1)
          (func $deep_inside (unreachable))
          (func (export "_start") (call $deep_inside)))"#,
    );
    let out = run_in(None, &["run", &trap]);
    assert_eq!(out.status.code(), Some(134));
    let err = stderr(&out);
    let first = err.lines().next().unwrap();
    assert!(first.starts_with("error: "), "{err}");
    assert_eq!(first.matches("wasm trap").count(), 1, "{err}");
    assert!(first.contains("unreachable"), "{err}");
    assert!(err.contains("deep_inside"), "{err}");
}

#[test]
fn env_and_dirs_are_opt_in() {
    let dir = common::Scratch::new("env");
    // Exits with envc * 10 + (1 if fd 3 is a preopened directory).
    let probe = module(
        &dir,
        "probe.wasm",
        r#"(module
          (import "wasi_snapshot_preview1" "environ_sizes_get" (func $env (param i32 i32) (result i32)))
          (import "wasi_snapshot_preview1" "fd_prestat_get" (func $prestat (param i32 i32) (result i32)))
          (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
          (memory (export "memory") 1)
          (func (export "_start")
            (drop (call $env (i32.const 0) (i32.const 4)))
            (call $exit (i32.add (i32.mul (i32.load (i32.const 0)) (i32.const 10))
                                 (i32.eqz (call $prestat (i32.const 3) (i32.const 8)))))))"#,
    );
    let out = run_in(None, &["run", &probe]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run_in(
        None,
        &[
            "run",
            &probe,
            "--env",
            "A=1",
            "--env",
            "B=x=y",
            "--dir",
            &dir.0.display().to_string(),
        ],
    );
    assert_eq!(out.status.code(), Some(21), "{}", stderr(&out));
    let host_guest = format!("{}::/data", dir.0.display());
    let out = run_in(None, &["run", &probe, "--dir", &host_guest]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    let out = run_in(None, &["run", &probe, "--env", "NOEQUALS"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1);
    let out = run_in(
        None,
        &["run", &probe, "--dir", "/nonexistent/pexe2wasm/dir"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

#[test]
fn bad_inputs_fail_with_one_line() {
    let dir = common::Scratch::new("bad");
    let out = run_in(None, &["run", &dir.arg("missing.pexe")]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    std::fs::write(dir.join("junk.pexe"), b"PEXE junk").unwrap();
    let out = run_in(None, &["run", &dir.arg("junk.pexe")]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    let out = run_in(
        None,
        &[
            "convert",
            &dir.arg("junk.pexe"),
            "-o",
            &dir.arg("junk.wasm"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.join("junk.wasm").exists(), "no partial output");
    let out = run_in(None, &["run"]);
    assert_eq!(out.status.code(), Some(2), "usage error");
}

/// `--timeout` stops a command-line program that runs too long, with one error line.
#[test]
fn timeout_stops_a_long_program() {
    let Some(_) = common::real_pexe("binji-fasta.pexe") else {
        return;
    };
    let path = common::real_corpus_dir().join("binji-fasta.pexe");
    let start = std::time::Instant::now();
    let o = bin()
        .arg("run")
        .arg(&path)
        .args(["--timeout", "0.5", "250000000"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("time limit of 500ms exceeded"),
        "{}",
        stderr(&o)
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    // A bad value is a usage error of ours, before anything runs.
    let o = bin()
        .arg("run")
        .arg(&path)
        .args(["--timeout", "-1", "10"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
}

/// `--max-threads` caps the threads a program may have: binji-thread's one extra thread
/// cannot start under a cap of 1 (pthread_create fails, the program goes on without it).
#[test]
fn max_threads_caps_the_threads_a_program_starts() {
    let Some(_) = common::real_pexe("binji-thread.pexe") else {
        return;
    };
    let path = common::real_corpus_dir().join("binji-thread.pexe");
    let out = |extra: &[&str]| {
        let o = bin()
            .arg("run")
            .arg(&path)
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(out(&[]).starts_with("data = 10\n"), "{}", out(&[]));
    assert!(out(&["--max-threads", "2"]).starts_with("data = 10\n"));
    let capped = out(&["--max-threads", "1"]);
    assert!(capped.starts_with("data = 0\n"), "{capped}");
    // Zero is refused as a usage error.
    let o = bin()
        .arg("run")
        .arg(&path)
        .args(["--max-threads", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// `--dir HOST::GUEST:ro` gives the program a directory it cannot change.
#[test]
fn dir_ro_is_read_only() {
    // Creates `new` in the first preopened directory; exits with path_open's errno.
    let module = wat::parse_str(
        r#"(module
  (import "wasi_snapshot_preview1" "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "new")
  (func (export "_start")
    (call $exit (call $open (i32.const 3) (i32.const 0) (i32.const 16) (i32.const 3)
                            (i32.const 1) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 32)))))"#,
    )
    .unwrap();
    let s = common::Scratch::new("dir-ro");
    s.put("create.wasm", &module);
    std::fs::create_dir(s.join("data")).unwrap();
    let run = |dir: String| {
        bin()
            .arg("run")
            .arg(s.join("create.wasm"))
            .args(["--dir", &dir])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let data = s.arg("data");
    let o = run(format!("{data}::/data:ro"));
    assert_ne!(o.status.code(), Some(0), "created in a read-only directory");
    assert!(!s.join("data/new").exists());
    let o = run(format!("{data}::/data"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(s.join("data/new").exists());
}

/// The code section's size (section 10) of a module.
fn code_section_size(wasm: &[u8]) -> usize {
    wasmparser::Parser::new(0)
        .parse_all(wasm)
        .find_map(|p| match p {
            Ok(wasmparser::Payload::CodeSectionStart { size, .. }) => Some(size as usize),
            _ => None,
        })
        .expect("a code section")
}

#[test]
fn small_code_converts_to_a_smaller_module_that_prints_the_same() {
    let Some(_) = common::real_pexe("binji-nbody.pexe") else {
        return;
    };
    let pexe = common::real_corpus_dir().join("binji-nbody.pexe");
    let dir = common::Scratch::new("small-code");
    let mut sizes = Vec::new();
    let mut outputs = Vec::new();
    for (name, extra) in [("default.wasm", None), ("small.wasm", Some("--small-code"))] {
        let mut args = vec!["convert".to_string(), pexe.display().to_string()];
        args.extend(extra.map(str::to_string));
        args.extend(["-o".to_string(), dir.arg(name)]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_in(None, &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let wasm = std::fs::read(dir.join(name)).unwrap();
        wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
            .validate_all(&wasm)
            .unwrap_or_else(|e| panic!("{name}: invalid module: {e}"));
        sizes.push(code_section_size(&wasm));
        let out = run_in(None, &["run", &dir.arg(name), "1000"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        outputs.push(out.stdout);
    }
    assert_eq!(
        outputs[0], outputs[1],
        "--small-code changed what nbody prints"
    );
    // Locals shared with liveness make the code section well over 5% smaller (13.6% when
    // written).
    assert!(
        sizes[1] * 100 < sizes[0] * 95,
        "code sections: default {} bytes, --small-code {} bytes",
        sizes[0],
        sizes[1]
    );
}

/// `PEXE2WASM_PERFMAP=1` makes wasmtime write /tmp/perf-PID.map, the compiled functions'
/// addresses and names `perf` reads (docs/PERFORMANCE.md, "Profiling"); without it,
/// nothing is written.
#[test]
fn perfmap_names_the_compiled_functions_for_perf() {
    let hello = pexe2wasm_testkit::repo_path("fixtures/hello.pexe");
    for on in [true, false] {
        let mut c = bin();
        c.args(["run", hello.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if on {
            c.env("PEXE2WASM_PERFMAP", "1");
        } else {
            c.env_remove("PEXE2WASM_PERFMAP");
        }
        let mut child = c.spawn().unwrap();
        let map = std::path::PathBuf::from(format!("/tmp/perf-{}.map", child.id()));
        assert!(child.wait().unwrap().success());
        let text = std::fs::read_to_string(&map).unwrap_or_default();
        let _ = std::fs::remove_file(&map);
        assert_eq!(
            text.lines().any(|l| l.contains("wasm[0]::function[")),
            on,
            "{}: {text:.200}",
            map.display()
        );
    }
}
