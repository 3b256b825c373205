//! Converted real pexes run under wasmtime + WASI with the real runtime linked, and print
//! what pnacl.c's test suite expects (`expected/*.txt`, the "program stdout" entries),
//! converted with either local allocation (the default and `Locals::Liveness`).

use pexe2wasm_testkit::corpus as common;

use pexe2wasm::convert::{convert, ConvertOptions, Locals};
use pexe2wasm_runner::{run_wasm, RunOptions};

/// Runs `name` with `args` (argv[0] = `argv0`); returns exit code and stdout.
fn run(name: &str, argv0: &str, args: &str, locals: Locals) -> Option<(i32, Vec<u8>)> {
    let data = common::real_pexe(name)?;
    let opts = ConvertOptions {
        locals,
        ..Default::default()
    };
    let out = convert(&data, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut argv = vec![argv0.to_string()];
    argv.extend(args.split_whitespace().map(str::to_string));
    let opts = RunOptions {
        args: argv,
        timeout: Some(std::time::Duration::from_secs(120)),
        ..Default::default()
    };
    let r = run_wasm(&out.wasm, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    Some((r.exit_code, r.stdout))
}

/// The expected stdout in `expected/<file>`: the text after `# STDOUT:`, or the file
/// named by `# STDOUT_FILE:` (relative to `expected/`, by its last path component).
fn expected(file: &str) -> Option<Vec<u8>> {
    let dir = common::real_corpus_dir().join("expected");
    let text = std::fs::read(dir.join(file)).ok()?;
    let s = String::from_utf8_lossy(&text);
    if let Some(i) = s.find("# STDOUT:\n") {
        return Some(text[i + "# STDOUT:\n".len()..].to_vec());
    }
    let line = s.lines().find_map(|l| l.strip_prefix("# STDOUT_FILE: "))?;
    let base = line.rsplit('/').next()?;
    let alt = format!("binji-benchmark-{base}");
    std::fs::read(dir.join(&alt))
        .or_else(|_| std::fs::read(dir.join(base)))
        .ok()
}

fn check(pexe: &str, argv0: &str, args: &str, expect: &str) {
    let Some(want) = expected(expect) else {
        eprintln!("SKIPPED: expected/{expect} not found");
        return;
    };
    for locals in [Locals::Blocks, Locals::Liveness] {
        let Some((code, out)) = run(pexe, argv0, args, locals) else {
            return;
        };
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want),
            "{pexe} {args} ({locals:?}): stdout differs"
        );
        assert_eq!(code, 0, "{pexe} {args} ({locals:?}): exit code");
    }
}

#[test]
fn binji_puts() {
    // puts("Hello, World!\n"): the expected output has the extra newline puts adds.
    check("binji-puts.pexe", "res/puts.pexe", "", "binji-puts.txt");
}

#[test]
fn binji_printf_args() {
    check(
        "binji-printf.pexe",
        "res/printf.pexe",
        "",
        "binji-printf-printf-0.txt",
    );
    check(
        "binji-printf.pexe",
        "res/printf.pexe",
        "one",
        "binji-printf-printf-1.txt",
    );
    check(
        "binji-printf.pexe",
        "res/printf.pexe",
        "one two three",
        "binji-printf-printf-3.txt",
    );
}

#[test]
fn binji_binarytrees() {
    check(
        "binji-binarytrees.pexe",
        "binarytrees",
        "10",
        "binji-benchmark-binarytrees.txt",
    );
}

#[test]
fn binji_fannkuchredux() {
    check(
        "binji-fannkuchredux.pexe",
        "fannkuchredux",
        "7",
        "binji-benchmark-fannkuchredux.txt",
    );
}

#[test]
fn binji_fasta() {
    check(
        "binji-fasta.pexe",
        "fasta",
        "1000",
        "binji-benchmark-fasta.txt",
    );
}

#[test]
fn binji_mandelbrot() {
    check(
        "binji-mandelbrot.pexe",
        "mandelbrot",
        "200",
        "binji-benchmark-mandelbrot.txt",
    );
}

#[test]
fn binji_meteor() {
    check(
        "binji-meteor.pexe",
        "meteor",
        "2098",
        "binji-benchmark-meteor.txt",
    );
}

#[test]
fn binji_nbody() {
    check(
        "binji-nbody.pexe",
        "nbody",
        "1000",
        "binji-benchmark-nbody.txt",
    );
}

#[test]
fn binji_setjmp_10() {
    // fact(10) recursing, then a longjmp out of the recursion at fact(6).
    check(
        "binji-setjmp.pexe",
        "res/setjmp.pexe",
        "10",
        "binji-setjmp.txt",
    );
}

/// Only modules that call setjmp/longjmp need exception handling: they get a tag and the
/// `exceptions` feature; others stay without (and run on engines without it).
#[test]
fn exceptions_only_where_setjmp_is_used() {
    for (name, wants) in [("binji-setjmp.pexe", true), ("binji-puts.pexe", false)] {
        let Some(data) = common::real_pexe(name) else {
            return;
        };
        let out = convert(&data, &ConvertOptions::default()).unwrap();
        assert_eq!(out.features.exceptions, wants, "{name}");
        assert_eq!(
            out.features.names().contains(&"exceptions"),
            wants,
            "{name}"
        );
        let tags = wasmparser::Parser::new(0)
            .parse_all(&out.wasm)
            .filter(|p| matches!(p, Ok(wasmparser::Payload::TagSection(_))))
            .count();
        assert_eq!(tags, usize::from(wants), "{name}: tag sections");
        // Without the feature a validator rejects exactly the modules that use it.
        let mut f = wasmparser::WasmFeatures::all();
        f.remove(wasmparser::WasmFeatures::EXCEPTIONS);
        let ok = wasmparser::Validator::new_with_features(f)
            .validate_all(&out.wasm)
            .is_ok();
        assert_eq!(ok, !wants, "{name}: validates without exceptions");
    }
}

#[test]
fn binji_spectralnorm() {
    check(
        "binji-spectralnorm.pexe",
        "spectralnorm",
        "100",
        "binji-benchmark-spectralnorm.txt",
    );
}

#[test]
fn binji_sem() {
    // Threads post a semaphore the main thread waits on.
    check("binji-sem.pexe", "res/sem.pexe", "", "binji-sem.txt");
}

#[test]
fn binji_thread() {
    // pthread_create, a thread writing through a pointer, pthread_join with a return value.
    check(
        "binji-thread.pexe",
        "res/thread.pexe",
        "",
        "binji-thread.txt",
    );
}

/// Runs a threaded pexe `times` times on one compiled module; every run must print the
/// expected stdout and exit 0.
fn repeat(pexe: &str, argv0: &str, expect: &str, times: usize) {
    let Some(want) = expected(expect) else {
        eprintln!("SKIPPED: expected/{expect} not found");
        return;
    };
    let Some(data) = common::real_pexe(pexe) else {
        return;
    };
    let out = convert(&data, &ConvertOptions::default()).unwrap_or_else(|e| panic!("{pexe}: {e}"));
    assert!(out.features.threads, "{pexe} converts for threads");
    let program = pexe2wasm_runner::Program::new(&out.wasm, true).unwrap();
    assert!(program.is_threaded());
    let opts = RunOptions {
        args: vec![argv0.to_string()],
        timeout: Some(std::time::Duration::from_secs(60)),
        ..Default::default()
    };
    for i in 0..times {
        let r = program
            .run(&opts)
            .unwrap_or_else(|e| panic!("{pexe} run {i}: {e}"));
        assert_eq!(
            String::from_utf8_lossy(&r.stdout),
            String::from_utf8_lossy(&want),
            "{pexe} run {i}: stdout differs"
        );
        assert_eq!(r.exit_code, 0, "{pexe} run {i}: exit code");
    }
}

#[test]
fn binji_thread_50_runs() {
    repeat(
        "binji-thread.pexe",
        "res/thread.pexe",
        "binji-thread.txt",
        50,
    );
}

#[test]
fn binji_sem_50_runs() {
    repeat("binji-sem.pexe", "res/sem.pexe", "binji-sem.txt", 50);
}

#[test]
fn binji_main_exits_0() {
    let Some((code, out)) = run("binji-main.pexe", "main", "", Locals::Blocks) else {
        return;
    };
    assert_eq!(code, 0);
    assert!(out.is_empty());
}
