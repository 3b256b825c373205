//! `pexe2wasm interp`: a function of a fixture run in the reference interpreter, with its
//! result, a trace and a dump of a global.
use std::process::{Command, Output, Stdio};

fn pexe2wasm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn interp_runs_a_function_by_name_or_id() {
    let o = pexe2wasm(&["interp", "fixtures/semantics/control.pexe", "fact64", "20"]);
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("result: i64 2432902008176640000\n"),
        "{out}"
    );
    // By id, a negative argument after `--`, and a trace on stderr.
    let o = pexe2wasm(&[
        "interp",
        "--trace",
        "fixtures/semantics/control.pexe",
        "@f2",
        "--",
        "-3",
    ]);
    assert!(o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("result: i64 1\n"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("enter @f2 fact64 [i64 18446744073709551613 (-3)]"),
        "{err}"
    );
    assert!(err.contains("return i64 1"), "{err}");
}

#[test]
fn interp_dumps_globals_and_reports_errors() {
    // phi_swap(in, out) stores 1000 * 2 + 1 for an even count read from `in`: point
    // `in` at the constant input table (@g1) and `out` into the output buffer (@g0).
    let o = pexe2wasm(&[
        "interp",
        "fixtures/semantics/control.pexe",
        "phi_swap",
        "0x10000",
        "0x10000",
        "--dump",
        "@g0",
    ]);
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("result: void"), "{out}");
    assert!(out.contains("@g0 at 0x10000, 480 bytes:"), "{out}");
    let o = pexe2wasm(&["interp", "fixtures/semantics/control.pexe", "fact64"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("takes 1 arguments (i64), got 0"));
    let o = pexe2wasm(&["interp", "fixtures/semantics/control.pexe", "nosuch"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no function named \"nosuch\""));
}
