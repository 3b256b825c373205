//! `pexe2wasm batch`: discovery (scan and `.nmf` manifests), the exact per-file report,
//! valid `.wasm` outputs in a mirrored tree, failures that are reported but not fatal, no
//! partial or stale outputs, the input tree untouched, exit codes; and the real corpus.
use pexe2wasm_testkit::corpus as common;

use crate::cmd::stderr;
use pexe2wasm::convert::{convert, ConvertOptions};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn batch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
        .arg("batch")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(pexe2wasm_testkit::repo_path("fixtures").join(rel)).unwrap()
}

/// Every file under `dir` (links not followed) with its contents, by `/`-separated path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let ty = e.file_type().unwrap();
            let p = e.path();
            let rel = p
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if ty.is_dir() {
                walk(base, &p, out);
            } else if ty.is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(rel, target.to_string_lossy().as_bytes().to_vec());
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn read_report(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("report.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The report's files by path, each without `time_ms` (checked to be a number).
fn files_by_path(report: &Value) -> BTreeMap<String, Value> {
    let mut m = BTreeMap::new();
    for f in report["files"].as_array().unwrap() {
        let mut f = f.clone();
        let t = f.as_object_mut().unwrap().remove("time_ms").unwrap();
        assert!(t.as_f64().is_some_and(|t| t >= 0.0), "time_ms {t}");
        m.insert(f["path"].as_str().unwrap().to_string(), f);
    }
    m
}

fn validate(wasm: &[u8], what: &str) {
    wasmparser::Validator::new()
        .validate_all(wasm)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// What the report must say about a pexe that converts, computed with the library.
fn expect_converted(path: &str, output: &str, found_by: &[&str], data: &[u8]) -> Value {
    let c = convert(data, &ConvertOptions::default()).unwrap_or_else(|e| panic!("{path}: {e}"));
    let info = pexe2wasm::info::info(data).unwrap();
    json!({
        "path": path,
        "found_by": found_by,
        "status": "converted",
        "output": output,
        "pexe_bytes": data.len(),
        "wasm_bytes": c.wasm.len(),
        "features": c.features.names(),
        "has_start": true,
        "irt_interfaces": info.irt_interfaces,
        "ppapi_interfaces": info.ppapi_interfaces,
        "needs": info.needs,
        "skipped": null,
        "error": null,
    })
}

fn position_json(p: pexe2wasm::bitstream::Position) -> Value {
    json!({
        "bit": p.bit,
        "byte": p.bit / 8,
        "block": p.block,
        "block_name": p.block.map(pexe2wasm::bitstream::block_name),
        "record": p.record,
        "record_index": p.record_index,
    })
}

/// What the report must say about a pexe that fails to convert.
fn expect_failed_conversion(path: &str, kind: &str, data: &[u8]) -> Value {
    let e = convert(data, &ConvertOptions::default()).unwrap_err();
    let info = pexe2wasm::info::info(data).ok();
    json!({
        "path": path,
        "found_by": ["scan"],
        "status": "failed",
        "output": null,
        "pexe_bytes": data.len(),
        "wasm_bytes": null,
        "features": [],
        "has_start": info.as_ref().map(|i| i.has_start),
        "irt_interfaces": info.as_ref().map(|i| i.irt_interfaces.clone()).unwrap_or_default(),
        "ppapi_interfaces": info.as_ref().map(|i| i.ppapi_interfaces.clone()).unwrap_or_default(),
        "needs": null,
        "skipped": null,
        "error": {
            "kind": kind,
            "message": e.to_string(),
            "position": position_json(e.position().expect("a position")),
        },
    })
}

/// A report entry for a file that was never read: its status, why it was skipped and
/// its error.
fn expect_unread(path: &str, found_by: &str, status: &str, skipped: Value, error: Value) -> Value {
    json!({
        "path": path,
        "found_by": [found_by],
        "status": status,
        "output": null,
        "pexe_bytes": null,
        "wasm_bytes": null,
        "features": [],
        "has_start": null,
        "irt_interfaces": [],
        "ppapi_interfaces": [],
        "needs": null,
        "skipped": skipped,
        "error": error,
    })
}

/// A failure found while discovering (no file was read).
fn expect_found_failure(path: &str, found_by: &str, kind: &str, message: &str) -> Value {
    let error = json!({"kind": kind, "message": message, "position": null});
    expect_unread(path, found_by, "failed", Value::Null, error)
}

/// A manifest entry that is reported as skipped (nothing was read).
fn expect_skipped(path: &str, found_by: &str, why: &str) -> Value {
    expect_unread(path, found_by, "skipped", json!(why), Value::Null)
}

/// The fixture tree: pexes at the top and in subdirectories, a truncated one, a pexe
/// without `_start`, manifests that point into a subdirectory, at a missing file, out of
/// the tree, and one that is not JSON; on Unix also a symbolic link out of the tree.
fn make_tree(s: &common::Scratch) {
    let hello = fixture("hello.pexe");
    s.put("in/hello.pexe", &hello);
    s.put("in/factorial.pexe", &fixture("factorial.pexe"));
    s.put("in/sub/deeper/bits.pexe", &fixture("semantics/bits.pexe"));
    s.put("in/broken/truncated.pexe", &hello[..hello.len() / 2]);
    s.put("in/app/pnacl/app.pexe", &fixture("semantics/control.pexe"));
    // Named only by the manifest (not *.pexe, so the scan does not see it).
    s.put(
        "in/app/pnacl/app_debug.bc",
        &fixture("semantics/memory.pexe"),
    );
    s.put(
        "in/app/app.nmf",
        br#"{"program": {"portable": {
               "pnacl-translate": {"url": "pnacl/app.pexe", "optlevel": 2},
               "pnacl-debug": {"url": "./pnacl/../pnacl/app_debug.bc"}}},
             "files": {"readme": {"portable": {"url": "README.txt"}},
                       "worker": {"portable": {"url": "pnacl/app.pexe?v=2"}}}}"#,
    );
    // Two inputs with one output name: `prog` (named by a manifest) and `prog.pexe`.
    s.put("in/coll/prog", &fixture("semantics/bits.pexe"));
    s.put("in/coll/prog.pexe", &hello);
    s.put(
        "in/coll/c.nmf",
        br#"{"program": {"portable": {"pnacl-translate": {"url": "prog"}}}}"#,
    );
    s.put(
        "in/missing.nmf",
        br#"{"program": {"portable": {"pnacl-translate": {"url": "gone/nothing.pexe"}}}}"#,
    );
    // The target exists, but outside the tree: it must not be converted.
    s.put("outside/x.pexe", &hello);
    s.put(
        "in/escape.nmf",
        br#"{"program": {"portable": {"pnacl-translate": {"url": "../outside/x.pexe"}}}}"#,
    );
    s.put("in/bad.nmf", b"{ not json");
    // Files that are not pexes are left alone.
    s.put("in/notes.txt", b"not a pexe");
    #[cfg(unix)]
    std::os::unix::fs::symlink(s.join("outside/x.pexe"), s.join("in/link.pexe")).unwrap();
}

#[test]
fn fixture_tree_report_is_exact_per_file() {
    let s = common::Scratch::new("tree");
    make_tree(&s);
    let before = tree(&s.0);
    let hello = fixture("hello.pexe");

    let mut expected: BTreeMap<String, Value> = BTreeMap::new();
    let mut add = |v: Value| {
        expected.insert(v["path"].as_str().unwrap().to_string(), v);
    };
    add(expect_converted(
        "hello.pexe",
        "hello.wasm",
        &["scan"],
        &hello,
    ));
    add(expect_converted(
        "sub/deeper/bits.pexe",
        "sub/deeper/bits.wasm",
        &["scan"],
        &fixture("semantics/bits.pexe"),
    ));
    add(expect_converted(
        "app/pnacl/app.pexe",
        "app/pnacl/app.wasm",
        &[
            "scan",
            "app/app.nmf: program.portable.pnacl-translate",
            "app/app.nmf: files.worker.portable",
        ],
        &fixture("semantics/control.pexe"),
    ));
    // The SDK's debug entry (unfinalized bitcode in real apps) is not converted.
    add(expect_skipped(
        "app/pnacl/app_debug.bc",
        "app/app.nmf: program.portable.pnacl-debug",
        "a pnacl-debug entry: unfinalized debug bitcode, not the pexe a browser runs",
    ));
    add(expect_converted(
        "coll/prog",
        "coll/prog.wasm",
        &["coll/c.nmf: program.portable.pnacl-translate"],
        &fixture("semantics/bits.pexe"),
    ));
    add(expect_found_failure(
        "coll/prog.pexe",
        "scan",
        "output_collision",
        "its output coll/prog.wasm is already the output of coll/prog",
    ));
    // Conversion failures are reported by their class: no `_start` and truncated bits
    // are both bad input.
    add(expect_failed_conversion(
        "factorial.pexe",
        "input",
        &fixture("factorial.pexe"),
    ));
    add(expect_failed_conversion(
        "broken/truncated.pexe",
        "input",
        &hello[..hello.len() / 2],
    ));
    add(expect_found_failure(
        "gone/nothing.pexe",
        "missing.nmf: program.portable.pnacl-translate",
        "missing",
        "no such file",
    ));
    add(expect_found_failure(
        "../outside/x.pexe",
        "escape.nmf: program.portable.pnacl-translate",
        "outside_dir",
        "escape.nmf names \"../outside/x.pexe\", outside the input directory",
    ));
    let bad_json = serde_json::from_slice::<Value>(b"{ not json").unwrap_err();
    add(expect_found_failure(
        "bad.nmf",
        "scan",
        "manifest",
        &format!("not valid JSON: {bad_json}"),
    ));
    #[cfg(unix)]
    add(expect_found_failure(
        "link.pexe",
        "scan",
        "outside_dir",
        &format!(
            "resolves to {}, outside the input directory",
            std::fs::canonicalize(s.join("outside/x.pexe"))
                .unwrap()
                .display()
        ),
    ));
    // Facts about hello known independently of the library: it asks for exactly these.
    assert_eq!(
        expected["hello.pexe"]["irt_interfaces"],
        json!(["nacl-irt-basic-0.1", "nacl-irt-fdio-0.1"])
    );

    let mut reports = Vec::new();
    for jobs in ["1", "2"] {
        let out = format!("out{jobs}");
        let o = batch(&[&s.arg("in"), "-o", &s.arg(&out), "-j", jobs]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let report = read_report(&s.join(&out));
        let files = files_by_path(&report);
        assert_eq!(
            files.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>()
        );
        for (path, want) in &expected {
            assert_eq!(&files[path], want, "{path}");
        }
        let count = |status: &str| expected.values().filter(|v| v["status"] == status).count();
        let failed = count("failed");
        let by_host = |host: &str| {
            expected
                .values()
                .filter(|v| v["needs"]["host"] == host)
                .count()
        };
        assert_eq!(count("converted"), 4);
        assert_eq!(by_host("wasi"), 4);
        assert_eq!(
            report["summary"],
            json!({"files": expected.len(), "converted": 4, "failed": failed, "skipped": 1,
                   "converted_by_host": {"wasi": 4, "runner": 0, "pepper": 0, "browser": 0}})
        );
        assert_eq!(report["schema"], 3);
        assert_eq!(report["threads"], jobs.parse::<u64>().unwrap());
        assert_eq!(report["input_dir"], s.arg("in"));
        assert_eq!(report["output_dir"], s.arg(&out));
        assert!(report["time_ms"].as_f64().is_some());

        // The output tree: exactly the converted modules and the reports; each module is
        // the library's conversion, byte for byte, and validates.
        let written = tree(&s.join(&out));
        let mut want_files: Vec<String> = expected
            .values()
            .filter_map(|v| v["output"].as_str().map(String::from))
            .collect();
        want_files.extend(["report.json".into(), "report.md".into()]);
        want_files.sort();
        assert_eq!(written.keys().cloned().collect::<Vec<_>>(), want_files);
        for v in expected.values() {
            if let Some(o) = v["output"].as_str() {
                let wasm = &written[o];
                assert_eq!(wasm.len() as u64, v["wasm_bytes"].as_u64().unwrap(), "{o}");
                validate(wasm, o);
            }
        }
        assert_eq!(
            written["hello.wasm"],
            convert(&hello, &ConvertOptions::default()).unwrap().wasm
        );

        // One error line per failed file, in path order, naming it under DIR.
        let e = stderr(&o);
        let lines: Vec<&str> = e.lines().collect();
        let want: Vec<String> = expected
            .values()
            .filter_map(|v| {
                let msg = v["error"]["message"].as_str()?;
                Some(format!(
                    "error: {}: {msg}",
                    s.join("in").join(v["path"].as_str().unwrap()).display()
                ))
            })
            .collect();
        assert_eq!(lines, want);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.starts_with(&format!(
                "4 of {} files converted: 4 WASI programs, 0 need pexe2wasm run (threads), \
                 0 Pepper plugins (pexe2wasm run), 0 need a browser (pexe2wasm web); \
                 {failed} failed, 1 skipped;",
                expected.len()
            )),
            "{stdout}"
        );

        // report.md: a row per file, a failure section with positions.
        let md = std::fs::read_to_string(s.join(&out).join("report.md")).unwrap();
        for path in expected.keys() {
            assert!(md.contains(&format!("| `{path}` |")), "{path} row:\n{md}");
        }
        let failures = md.split("\n## Failures\n").nth(1).expect("failure section");
        assert!(
            failures.contains("### `broken/truncated.pexe`"),
            "{failures}"
        );
        let pos = &expected["broken/truncated.pexe"]["error"]["position"];
        assert!(
            failures.contains(&format!(
                "- position: bit {} (byte {}:",
                pos["bit"], pos["byte"]
            )),
            "{failures}"
        );
        assert!(!failures.contains("### `hello.pexe`"));
        reports.push(report);
    }
    // The input tree (and what lies outside it) is untouched.
    let mut after = tree(&s.0);
    after.retain(|k, _| !k.starts_with("out1/") && !k.starts_with("out2/"));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    assert!(before == after, "the input tree changed");
}

#[test]
fn all_converted_exits_0_and_failure_removes_stale_output() {
    let s = common::Scratch::new("rerun");
    let hello = fixture("hello.pexe");
    s.put("in/a/hello.pexe", &hello);
    s.put("in/b/bits.pexe", &fixture("semantics/bits.pexe"));
    let (dir, out) = (s.arg("in"), s.arg("out"));
    for _ in 0..2 {
        // The second run overwrites its own outputs.
        let o = batch(&[&dir, "-o", &out, "-j", "2"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(o.stderr.is_empty(), "{}", stderr(&o));
        validate(&std::fs::read(s.join("out/a/hello.wasm")).unwrap(), "hello");
    }
    // hello.pexe is now broken: its old .wasm goes, the other stays, the exit is 1.
    s.put("in/a/hello.pexe", &hello[..100]);
    let o = batch(&[&dir, "-o", &out, "--quiet"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "--quiet printed {:?}", o.stdout);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(!s.join("out/a/hello.wasm").exists(), "stale output kept");
    assert!(s.join("out/b/bits.wasm").exists());
    let files = files_by_path(&read_report(&s.join("out")));
    assert_eq!(files["a/hello.pexe"]["status"], "failed");
    assert_eq!(files["a/hello.pexe"]["error"]["kind"], "input");
    assert_eq!(files["b/bits.pexe"]["status"], "converted");
}

#[test]
fn small_code_converts_as_the_library_does_with_liveness() {
    use pexe2wasm::convert::Locals;
    let s = common::Scratch::new("small-code");
    let data = fixture("semantics/control.pexe");
    s.put("in/control.pexe", &data);
    let o = batch(&[&s.arg("in"), "-o", &s.arg("out"), "--small-code", "--quiet"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let got = std::fs::read(s.join("out/control.wasm")).unwrap();
    validate(&got, "control");
    let with = |locals| {
        let opts = ConvertOptions {
            locals,
            ..Default::default()
        };
        convert(&data, &opts).unwrap().wasm
    };
    assert_eq!(got, with(Locals::Liveness), "not the --small-code output");
    // The two allocations differ on this fixture, so the flag was not ignored.
    assert_ne!(got, with(Locals::Blocks));
}

#[test]
fn output_dir_inside_input_is_not_scanned() {
    let s = common::Scratch::new("inside");
    s.put("in/hello.pexe", &fixture("hello.pexe"));
    // A pexe already in the output directory is not an input.
    s.put("in/out/old.pexe", b"whatever");
    let o = batch(&[&s.arg("in"), "-o", &s.arg("in/out")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let files = files_by_path(&read_report(&s.join("in/out")));
    assert_eq!(files.keys().collect::<Vec<_>>(), ["hello.pexe"]);
    assert!(s.join("in/out/hello.wasm").exists());
    assert_eq!(
        std::fs::read(s.join("in/out/old.pexe")).unwrap(),
        b"whatever"
    );
}

#[test]
fn empty_tree_converts_nothing_and_exits_0() {
    let s = common::Scratch::new("empty");
    s.put("in/readme.txt", b"no pexes here");
    let o = batch(&[&s.arg("in"), "-o", &s.arg("out")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = read_report(&s.join("out"));
    assert_eq!(
        r["summary"],
        json!({"files": 0, "converted": 0, "failed": 0, "skipped": 0,
               "converted_by_host": {"wasi": 0, "runner": 0, "pepper": 0, "browser": 0}})
    );
    assert_eq!(r["files"], json!([]));
}

#[test]
fn usage_errors_exit_2_and_write_nothing() {
    let s = common::Scratch::new("usage");
    s.put("in/hello.pexe", &fixture("hello.pexe"));
    let dir = s.arg("in");
    for args in [
        vec![dir.as_str()],                          // no -o
        vec![dir.as_str(), "-o", "x", "-j", "0"],    // no threads
        vec![dir.as_str(), "-o", "x", "-j", "many"], // not a number
        vec![dir.as_str(), "-o", "-"],               // not a directory
        vec!["-", "-o", "x"],
        vec![dir.as_str(), "-o", dir.as_str()], // OUTDIR = DIR
        vec![dir.as_str(), "-o", s.0.to_str().unwrap()], // OUTDIR contains DIR
        vec![dir.as_str(), "-o", &format!("{dir}/sub/../../in")], // the same, spelled otherwise
    ] {
        let o = batch(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!o.stderr.is_empty(), "{args:?}");
    }
    let mut left: Vec<String> = tree(&s.0).into_keys().collect();
    left.sort();
    assert_eq!(left, ["in/hello.pexe"], "files written on a usage error");
    assert!(
        !s.join("in/sub").exists(),
        "directory created on a usage error"
    );
    assert!(!Path::new("x").exists());
}

#[test]
fn unreadable_input_dir_is_one_line_exit_1() {
    let s = common::Scratch::new("nodir");
    let o = batch(&[&s.arg("nonexistent"), "-o", &s.arg("out")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with(&format!("error: {}: ", s.arg("nonexistent"))),
        "{e}"
    );
    // The chain names the directory and the OS error once each.
    assert_eq!(e.matches(&s.arg("nonexistent")).count(), 1, "{e}");
    assert_eq!(e.matches("os error").count(), 1, "{e}");
    assert!(
        !s.join("out").exists(),
        "created the output for a missing input"
    );
}

/// The real corpus: the 28 runnable pexes convert to valid modules; the two without a
/// proper `_start` and the six malformed ones are failures with positions, not fatal.
#[test]
fn real_corpus_batch() {
    if common::real_pexe("binji-puts.pexe").is_none() {
        return;
    }
    let s = common::Scratch::new("real");
    let corpus = common::real_corpus_dir();
    let o = batch(&[corpus.to_str().unwrap(), "-o", &s.arg("out"), "-j", "2"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report = read_report(&s.join("out"));
    let files = files_by_path(&report);
    let all: Vec<&str> = common::WELL_FORMED
        .iter()
        .chain(common::MALFORMED)
        .copied()
        .collect();
    let mut names: Vec<&str> = all.clone();
    names.sort();
    assert_eq!(files.keys().map(String::as_str).collect::<Vec<_>>(), names);
    // SOURCES.md: 13 PPAPI apps (Pepper plugins), 2 threaded IRT-only programs. Which
    // plugins need a browser depends on what the command-line host offers: the library
    // decides (`needs`, tested against SOURCES.md on its own).
    let (mut pepper, mut browser) = (0, 0);
    for name in common::WELL_FORMED {
        let m = pexe2wasm::decode::decode(&std::fs::read(corpus.join(name)).unwrap()).unwrap();
        match pexe2wasm::needs::needs_of_module(&m).host {
            Some(pexe2wasm::needs::Host::Pepper) => pepper += 1,
            Some(pexe2wasm::needs::Host::Browser) => browser += 1,
            _ => {}
        }
    }
    assert_eq!(pepper + browser, 13);
    assert_eq!(
        report["summary"],
        json!({"files": 36, "converted": 28, "failed": 8, "skipped": 0,
               "converted_by_host": {"wasi": 13, "runner": 2, "pepper": pepper, "browser": browser}})
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let want = format!(
        "28 of 36 files converted: 13 WASI programs, 2 need pexe2wasm run (threads), {}, {}; 8 failed; report in ",
        plural(pepper, "Pepper plugin (pexe2wasm run)", "Pepper plugins (pexe2wasm run)"),
        plural(browser, "needs a browser (pexe2wasm web)", "need a browser (pexe2wasm web)"),
    );
    assert!(stdout.starts_with(&want), "{stdout}\nwanted: {want}");
    let md = std::fs::read_to_string(s.join("out/report.md")).unwrap();
    assert!(
        md.contains("| `webpenc.pexe` | converted: Pepper plugin (pexe2wasm run) |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| `glbench27.pexe` | converted: Pepper plugin needing a browser (pexe2wasm web) |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| `binji-sem.pexe` | converted: needs pexe2wasm run (threads) |"),
        "{md}"
    );
    for name in all {
        let f = &files[name];
        let size = std::fs::metadata(corpus.join(name)).unwrap().len();
        assert_eq!(f["pexe_bytes"], size, "{name}");
        let not_runnable = common::NOT_RUNNABLE.contains(&name);
        if common::MALFORMED.contains(&name) || not_runnable {
            assert_eq!(f["status"], "failed", "{name}");
            let e = &f["error"];
            let kind = e["kind"].as_str().unwrap();
            // Malformed or without `_start`: bad input either way.
            assert_eq!(kind, "input", "{name}");
            if not_runnable {
                assert!(e["message"].as_str().unwrap().contains("_start"), "{name}");
            }
            assert!(e["position"]["bit"].is_u64(), "{name}: no position: {e}");
            assert!(f["output"].is_null() && f["wasm_bytes"].is_null());
            let wasm = s.join("out").join(name.replace(".pexe", ".wasm"));
            assert!(!wasm.exists(), "{name}: output left");
        } else {
            assert_eq!(f["status"], "converted", "{name}: {}", f["error"]);
            assert_eq!(f["has_start"], true);
            let out = f["output"].as_str().unwrap();
            assert_eq!(out, name.replace(".pexe", ".wasm"));
            let wasm = std::fs::read(s.join("out").join(out)).unwrap();
            assert_eq!(f["wasm_bytes"], wasm.len(), "{name}");
            validate(&wasm, name);
            let ppapi = !f["ppapi_interfaces"].as_array().unwrap().is_empty();
            let threads = f["features"]
                .as_array()
                .unwrap()
                .contains(&json!("threads"));
            let m = pexe2wasm::decode::decode(&std::fs::read(corpus.join(name)).unwrap()).unwrap();
            let browser =
                pexe2wasm::needs::needs_of_module(&m).host == Some(pexe2wasm::needs::Host::Browser);
            let want = if ppapi && browser {
                "browser"
            } else if ppapi {
                "pepper"
            } else if threads {
                "runner"
            } else {
                "wasi"
            };
            assert_eq!(f["needs"]["host"], want, "{name}");
        }
    }
    // Facts from the corpus's SOURCES.md: a PPAPI app and a plain command-line program.
    let iguana = &files["supernet-iguana.pexe"];
    assert!(iguana["ppapi_interfaces"]
        .as_array()
        .unwrap()
        .contains(&json!("PPB_Core;1.0")));
    assert_eq!(files["binji-puts.pexe"]["ppapi_interfaces"], json!([]));
    assert!(files["binji-puts.pexe"]["irt_interfaces"]
        .as_array()
        .unwrap()
        .contains(&json!("nacl-irt-fdio-0.1")));
    assert_eq!(stderr(&o).lines().count(), 8, "{}", stderr(&o));
}

/// Links planted in the output tree cannot make `batch` write outside it.
#[cfg(unix)]
#[test]
fn links_in_the_output_tree_are_not_written_through() {
    let s = common::Scratch::new("outlinks");
    let hello = fixture("hello.pexe");
    s.put("in/sub/deep/hello.pexe", &hello);
    s.put("in/top.pexe", &hello);
    s.put("elsewhere/keep.txt", b"precious");
    std::fs::create_dir_all(s.join("out")).unwrap();
    // out/sub leads outside OUTDIR; out/top.wasm is a link to a file outside it.
    std::os::unix::fs::symlink(s.join("elsewhere"), s.join("out/sub")).unwrap();
    std::os::unix::fs::symlink(s.join("elsewhere/keep.txt"), s.join("out/top.wasm")).unwrap();
    let o = batch(&[&s.arg("in"), "-o", &s.arg("out")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let files = files_by_path(&read_report(&s.join("out")));
    let sub = &files["sub/deep/hello.pexe"];
    assert_eq!(sub["status"], "failed");
    assert_eq!(sub["error"]["kind"], "write", "{sub}");
    // The link itself was replaced by the module; its target is untouched.
    assert_eq!(files["top.pexe"]["status"], "converted");
    let top = s.join("out/top.wasm");
    assert!(!std::fs::symlink_metadata(&top).unwrap().is_symlink());
    validate(&std::fs::read(&top).unwrap(), "top.wasm");
    let elsewhere: Vec<String> = tree(&s.join("elsewhere")).into_keys().collect();
    assert_eq!(elsewhere, ["keep.txt"]);
    assert!(
        !s.join("elsewhere/deep").exists(),
        "created a directory outside OUTDIR"
    );
    assert_eq!(
        std::fs::read(s.join("elsewhere/keep.txt")).unwrap(),
        b"precious"
    );
}

/// hello with one more global of 5 GB of zeros (testkit): a valid pexe the converter does
/// not support.
fn huge_global_pexe() -> Vec<u8> {
    pexe2wasm::text::asm::assemble(&pexe2wasm_testkit::huge_global_hello()).unwrap()
}

/// The kind of a conversion failure is the library's `ErrorClass` of the error, in
/// report.json and report.md alike; the file-level kinds stay beside them.
#[test]
fn conversion_failures_are_reported_by_class() {
    let s = common::Scratch::new("classes");
    let hello = fixture("hello.pexe");
    let huge = huge_global_pexe();
    s.put("in/huge.pexe", &huge);
    s.put("in/truncated.pexe", &hello[..hello.len() / 2]);
    s.put("in/hello.pexe", &hello);
    s.put(
        "in/missing.nmf",
        br#"{"program": {"portable": {"pnacl-translate": {"url": "gone.pexe"}}}}"#,
    );
    let o = batch(&[&s.arg("in"), "-o", &s.arg("out")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let files = files_by_path(&read_report(&s.join("out")));
    let kinds: BTreeMap<&str, &str> = files
        .iter()
        .map(|(p, f)| (p.as_str(), f["error"]["kind"].as_str().unwrap_or("-")))
        .collect();
    assert_eq!(
        kinds,
        BTreeMap::from([
            ("gone.pexe", "missing"),
            ("hello.pexe", "-"),
            ("huge.pexe", "unsupported"),
            ("truncated.pexe", "input"),
        ])
    );
    // Each is the class the library gives the same error.
    for (path, data) in [
        ("huge.pexe", &huge[..]),
        ("truncated.pexe", &hello[..hello.len() / 2]),
    ] {
        let e = convert(data, &ConvertOptions::default()).unwrap_err();
        assert_eq!(files[path]["error"]["kind"], e.class().as_str(), "{path}");
        assert_eq!(files[path]["error"]["message"], e.to_string(), "{path}");
        match e.position() {
            Some(p) => assert_eq!(files[path]["error"]["position"], position_json(p)),
            None => assert!(files[path]["error"]["position"].is_null(), "{path}"),
        }
    }
    assert_eq!(
        files["huge.pexe"]["error"]["message"],
        "memory layout: globals do not fit in 4 GiB"
    );
    let md = std::fs::read_to_string(s.join("out/report.md")).unwrap();
    assert!(md.contains("- kind: unsupported"), "{md}");
    assert!(md.contains("- kind: input"), "{md}");
    assert!(md.contains("- kind: missing"), "{md}");
}

/// A directory as the NaCl SDK leaves it: the manifest's `pnacl-debug` entry names
/// `*_unstripped.bc` (unfinalized bitcode, often not even shipped). It is reported as
/// skipped, not as a failure, and the batch succeeds.
#[test]
fn sdk_manifest_debug_entry_is_skipped_not_failed() {
    let s = common::Scratch::new("sdknmf");
    s.put("in/pnacl/Release/app.pexe", &fixture("hello.pexe"));
    s.put(
        "in/pnacl/Release/app_unstripped.bc",
        b"BC\xc0\xde not a pexe",
    );
    s.put(
        "in/app.nmf",
        br#"{"program": {"portable": {
               "pnacl-translate": {"url": "pnacl/Release/app.pexe"},
               "pnacl-debug": {"url": "pnacl/Release/app_unstripped.bc"}}}}"#,
    );
    // Another manifest whose debug entry is missing altogether.
    s.put(
        "in/other.nmf",
        br#"{"program": {"portable": {
               "pnacl-translate": {"url": "pnacl/Release/app.pexe"},
               "pnacl-debug": {"url": "gone_unstripped.bc"}}}}"#,
    );
    let o = batch(&[&s.arg("in"), "-o", &s.arg("out")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    let report = read_report(&s.join("out"));
    assert_eq!(report["summary"]["converted"], 1);
    assert_eq!(report["summary"]["failed"], 0);
    assert_eq!(report["summary"]["skipped"], 2);
    let files = files_by_path(&report);
    for (path, by) in [
        ("pnacl/Release/app_unstripped.bc", "app.nmf"),
        ("gone_unstripped.bc", "other.nmf"),
    ] {
        let f = &files[path];
        assert_eq!(f["status"], "skipped", "{f}");
        assert_eq!(
            f["found_by"],
            json!([format!("{by}: program.portable.pnacl-debug")])
        );
        assert!(
            f["skipped"].as_str().unwrap().contains("pnacl-debug"),
            "{f}"
        );
        assert!(f["error"].is_null());
    }
    assert!(!s.join("out/pnacl/Release/app_unstripped.bc.wasm").exists());
    assert!(s.join("out/pnacl/Release/app.wasm").exists());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("; 0 failed, 2 skipped; report in"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(s.join("out/report.md")).unwrap();
    let skipped = md.split("\n## Skipped\n").nth(1).expect("skipped section");
    assert!(skipped.contains("`gone_unstripped.bc`"), "{md}");
}
