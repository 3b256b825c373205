//! The fixtures run: `fixtures/hello.pexe` and every `fixtures/semantics/*.pexe` is
//! converted (with the runtime), validated with wasmparser, and run under wasmtime with
//! `pexe2wasm_runner::run_wasm`; stdout is compared byte for byte with what the fixture's
//! Rust description (`crates/testkit/src/fixtures`) says each case must produce.

use pexe2wasm_testkit::fixtures as fixtures_gen;

use std::path::PathBuf;

use pexe2wasm::convert::{convert, ConvertOptions};
use pexe2wasm_runner::{run_wasm, RunOptions};

fn fixture_path(rel: &str) -> PathBuf {
    pexe2wasm_testkit::repo_path("fixtures").join(rel)
}

/// Converts, validates and runs a pexe; returns (exit code, stdout) or panics.
fn convert_and_run(pexe: &[u8], name: &str, args: &[&str]) -> (i32, Vec<u8>) {
    let out = convert(pexe, &ConvertOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut validator = wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all());
    validator
        .validate_all(&out.wasm)
        .unwrap_or_else(|e| panic!("{name}: converted module does not validate: {e}"));
    let mut argv = vec![name.to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    let opts = RunOptions {
        args: argv,
        timeout: Some(std::time::Duration::from_secs(60)),
        ..Default::default()
    };
    let r = run_wasm(&out.wasm, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    (r.exit_code, r.stdout)
}

#[test]
fn hello_prints_its_message_without_libc() {
    let pexe = std::fs::read(fixture_path("hello.pexe")).unwrap();
    let want = b"Hello from a pexe with no libc, via the NaCl IRT!\n";
    // With no arguments, with some, and with an environment: the auxv walk must find
    // AT_SYSINFO after argv and envp whatever their lengths.
    for args in [&[][..], &["a", "bb", "ccc"][..]] {
        let (code, out) = convert_and_run(&pexe, "fixtures/hello.pexe", args);
        assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(want));
        assert_eq!(code, 0);
    }
    let out = convert(&pexe, &ConvertOptions::default()).unwrap();
    let opts = RunOptions {
        args: vec!["hello".into()],
        env: vec![("A".into(), "1".into()), ("BB".into(), "two".into())],
        ..Default::default()
    };
    let r = run_wasm(&out.wasm, &opts).unwrap();
    assert_eq!(r.stdout, want);
    assert_eq!(r.exit_code, 0);
}

/// The factorial fixture is a library (no `_start`): converted without the runtime and
/// with its function exported, `fact` computes factorials.
#[test]
fn factorial_fixture_computes_factorials() {
    let pexe = std::fs::read(fixture_path("factorial.pexe")).unwrap();
    let opts = ConvertOptions::functions_only();
    let out = convert(&pexe, &opts).unwrap();
    let engine = wasmtime::Engine::default();
    let module = wasmtime::Module::new(&engine, &out.wasm).unwrap();
    let mut store = wasmtime::Store::new(&engine, ());
    let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
    let fact = instance
        .get_typed_func::<i32, i32>(&mut store, "fact")
        .unwrap();
    for (n, want) in [(1, 1), (5, 120), (10, 3_628_800), (13, 1_932_053_504)] {
        assert_eq!(fact.call(&mut store, n).unwrap(), want, "fact({n})");
    }
}

/// Runs one semantics fixture and checks every case.
fn check_semantics(name: &str) {
    let fixtures = fixtures_gen::all();
    let f = fixtures
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no fixture {name}"));
    let path = fixture_path(&format!("semantics/{name}.pexe"));
    let pexe = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (code, out) = convert_and_run(&pexe, &format!("{name}.pexe"), &[]);
    let errs = fixtures_gen::compare(f, &out);
    let shown: Vec<&String> = errs.iter().take(40).collect();
    assert!(
        errs.is_empty(),
        "{name}: {} wrong fields of {} cases:\n{}",
        errs.len(),
        f.cases(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(code, 0, "{name}: exit code");
    eprintln!("{name}: {} cases ok", f.cases());
}

macro_rules! semantics_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_semantics(stringify!($name));
            }
        )*

        #[test]
        fn every_semantics_fixture_has_a_test() {
            let tested = [$(stringify!($name)),*];
            for f in fixtures_gen::all() {
                assert!(
                    tested.contains(&f.name) || TRAPPING.contains(&f.name),
                    "fixture {} has no test here",
                    f.name
                );
            }
        }
    };
}

semantics_tests!(
    atomics,
    bits,
    casts_float,
    casts_int,
    control,
    fcmp,
    float_arith,
    icmp,
    int_binops,
    memory,
    select_switch,
    setjmp_cases,
    simd_casts,
    simd_cmp,
    simd_float,
    simd_flow,
    simd_int,
    simd_lanes,
    threads_atomics,
    threads_futex,
);

/// Fixtures that must end in a trap; each has its own test below.
const TRAPPING: [&str; 1] = ["setjmp_dangling"];

/// A setjmp outside any loop keeps the function reducible (structured without a dispatch
/// loop); only the setjmp inside a loop (`sj_in_a_loop`) makes its function irreducible.
#[test]
fn setjmp_keeps_reducible_code_structured() {
    let pexe = std::fs::read(fixture_path("semantics/setjmp_cases.pexe")).unwrap();
    let out = convert(&pexe, &ConvertOptions::default()).unwrap();
    assert!(out.features.exceptions);
    assert_eq!(out.stats.emit.irreducible_functions, 1, "{:?}", out.stats);
}

/// A longjmp to a frame that has returned (past a live frame with its own setjmp) ends
/// in a trap that says so, with no output: it resumes nowhere.
#[test]
fn setjmp_dangling_traps() {
    let pexe = std::fs::read(fixture_path("semantics/setjmp_dangling.pexe")).unwrap();
    let out = convert(&pexe, &ConvertOptions::default()).unwrap();
    assert!(out.features.exceptions, "{:?}", out.features);
    let opts = RunOptions {
        args: vec!["setjmp_dangling".into()],
        timeout: Some(std::time::Duration::from_secs(60)),
        ..Default::default()
    };
    match run_wasm(&out.wasm, &opts) {
        Err(pexe2wasm_runner::RunError::Trap(t)) => {
            assert!(t.message.contains("longjmp"), "{}", t.message);
            assert!(t.stdout.is_empty(), "{:?}", t.stdout);
        }
        other => panic!("expected a trap, got {other:?}"),
    }
}

/// The comparison can fail: a stdout with one wrong byte, one missing byte or a wrong
/// NaN-ness is reported, and the report names the case.
#[test]
fn comparison_reports_wrong_output() {
    let fixtures = fixtures_gen::all();
    let f = fixtures.iter().find(|f| f.name == "int_binops").unwrap();
    let (size, fields) = fixtures_gen::expected(f);
    let mut good = vec![0u8; size];
    for (off, _, w) in &fields {
        let bytes = match w {
            fixtures_gen::Want::Bytes(b) => b.clone(),
            fixtures_gen::Want::F32(x) => x.to_le_bytes().to_vec(),
            fixtures_gen::Want::F64(x) => x.to_le_bytes().to_vec(),
        };
        good[*off..*off + bytes.len()].copy_from_slice(&bytes);
    }
    assert!(fixtures_gen::compare(f, &good).is_empty());
    let mut bad = good.clone();
    let (off, what, _) = &fields[fields.len() / 2];
    bad[*off] ^= 1;
    let errs = fixtures_gen::compare(f, &bad);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains(what.as_str()), "{errs:?}");
    assert!(!fixtures_gen::compare(f, &good[..size - 1]).is_empty());

    let nan = fixtures_gen::Want::F64(f64::NAN);
    assert!(nan.matches(&f64::from_bits(0xfff8_0000_0000_0001).to_le_bytes()));
    assert!(!nan.matches(&1.0f64.to_le_bytes()));
    let one = fixtures_gen::Want::F32(1.0);
    assert!(!one.matches(&f32::NAN.to_le_bytes()));
    assert!(!fixtures_gen::Want::F32(0.0).matches(&(-0.0f32).to_le_bytes()));
}
