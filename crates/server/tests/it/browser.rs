//! The upload page tested as a person uses it: headless Chromium (Debian's package) driven
//! by playwright-core (tests/browser/upload.mjs) opens `/`, uploads a pexe, reads the facts
//! and downloads the wasm, which must validate and equal what `/v1/convert` serves.
//! Under CI=true a missing chromium, node or node_modules is a failure; elsewhere SKIPPED.

use crate::common::{fixture_path, under_ci, validate_wasm, Server};
use std::path::{Path, PathBuf};
use std::process::Command;

fn missing(what: &str) {
    if under_ci() {
        panic!("{what} is missing under CI (scripts/install-deps.sh installs it)");
    }
    eprintln!("SKIPPED: {what} is missing; run scripts/install-deps.sh");
}

/// Whether Chromium, node and the page driver are here (else SKIPPED, or a failure
/// under CI).
fn driver_ready(dir: &Path) -> bool {
    if !Path::new("/usr/bin/chromium").exists() {
        missing("/usr/bin/chromium (Debian package chromium)");
        return false;
    }
    if Command::new("node").arg("--version").output().is_err() {
        missing("node");
        return false;
    }
    if !dir.join("node_modules/playwright-core").exists() {
        missing("tests/browser/node_modules (npm ci in crates/server/tests/browser)");
        return false;
    }
    true
}

/// Runs tests/browser/upload.mjs on `pexe` against `s`, with Run pressed (RUN=1) and
/// `env` added; its report, checked for page errors. The download goes to WORK/download.wasm.
fn upload(
    s: &Server,
    dir: &Path,
    work: &Path,
    pexe: &Path,
    env: &[(&str, &str)],
) -> serde_json::Value {
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work).unwrap();
    let mut c = Command::new("node");
    c.arg("upload.mjs")
        .current_dir(dir)
        .env("SERVER_URL", &s.base)
        .env("PEXE", pexe)
        .env("OUT", work.join("download.wasm"))
        .env("SCREENSHOT", work.join("page.png"))
        .env("USER_DATA_DIR", work.join("profile"))
        .env("RUN", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    let run = c.output().expect("run node");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "node upload.mjs failed: {}\n{stdout}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(report["pageErrors"], serde_json::json!([]), "{report}");
    report
}

#[test]
fn upload_page_converts_a_pexe_in_chromium() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    if !driver_ready(&dir) {
        return;
    }
    let _heavy = crate::common::heavy();
    let s = Server::start(&[]);
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-test");
    let out = work.join("download.wasm");
    let pexe = fixture_path("hello.pexe");
    let report = upload(&s, &dir, &work, &pexe, &[]);
    assert_eq!(report["filename"], "hello.wasm");
    let facts = &report["facts"];
    let size = std::fs::metadata(&pexe).unwrap().len();
    assert_eq!(facts["File size"], format!("{size} bytes"), "{report}");
    assert_eq!(
        facts["Passes this browser's WebAssembly.validate"], "yes",
        "{report}"
    );
    assert!(
        facts["Runs on"]
            .as_str()
            .unwrap()
            .starts_with("any WASI runtime"),
        "{report}"
    );
    assert!(
        facts["Needs to run"]
            .as_str()
            .unwrap()
            .starts_with("runs on any WASI runtime"),
        "{report}"
    );
    assert_eq!(
        facts["SHA-256 of the pexe"],
        crate::common::sha256_hex(&std::fs::read(&pexe).unwrap())
    );
    assert!(
        facts["Features"]
            .as_str()
            .unwrap()
            .contains("mutable-globals"),
        "{report}"
    );
    // The download is a valid module, the one the API serves.
    let wasm = std::fs::read(&out).expect("the download was saved");
    validate_wasm(&wasm);
    let api = reqwest::blocking::Client::new()
        .post(s.url("/v1/convert"))
        .header("content-type", "application/octet-stream")
        .body(std::fs::read(&pexe).unwrap())
        .send()
        .unwrap()
        .bytes()
        .unwrap();
    assert_eq!(wasm, api.to_vec());
    assert_eq!(facts["Size"], format!("{} bytes", wasm.len()));
    // Run: the program runs in the page's terminal, as under `pexe2wasm run`.
    let run = &report["run"];
    assert_eq!(run["isolated"], true, "{report}");
    assert_eq!(run["status"], "exited with status 0", "{report}");
    assert_eq!(
        run["terminal"], "Hello from a pexe with no libc, via the NaCl IRT!\n",
        "{report}"
    );
}

/// Run on a Pepper plugin: the page embeds it with the browser host and a message console;
/// lpdevs-part2 answers "hello" as under `pexe2wasm run`.
#[test]
fn upload_page_runs_a_pepper_plugin_in_chromium() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    if !driver_ready(&dir) {
        return;
    }
    // real_pexe says SKIPPED, or fails under CI, when the corpus is missing.
    if crate::common::real_pexe("lpdevs-part2.pexe").is_none() {
        return;
    }
    let pexe = pexe2wasm_testkit::corpus::real_corpus_dir().join("lpdevs-part2.pexe");
    let _heavy = crate::common::heavy();
    let s = Server::start(&[]);
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-test-plugin");
    let report = upload(&s, &dir, &work, &pexe, &[("RUN_SEND", "hello")]);
    let run = &report["run"];
    assert_eq!(run["isolated"], true, "{report}");
    assert_eq!(run["status"], "running", "{report}");
    assert_eq!(run["messages"], "→ hello\n← hello from NaCl\n", "{report}");
}

/// A Chrome app package uploaded on the page: `/v1/site` makes its site, the download is
/// the zip, and Run opens it in the page, where the launcher runs the app and its window's
/// module answers (fixtures/apps/message-app with the keep-message plugin).
#[test]
fn upload_page_runs_a_chrome_app_package_in_chromium() {
    use std::io::Write;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    if !driver_ready(&dir) {
        return;
    }
    let root = pexe2wasm_testkit::repo_root();
    let app = root.join("fixtures/apps/message-app");
    let src = std::fs::read_to_string(root.join("fixtures/pepper/keep-message.pnaclasm")).unwrap();
    let pexe = pexe2wasm::text::assemble(&src).unwrap();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let o = zip::write::SimpleFileOptions::default();
    for e in std::fs::read_dir(&app).unwrap().flatten() {
        w.start_file(e.file_name().to_str().unwrap(), o).unwrap();
        w.write_all(&std::fs::read(e.path()).unwrap()).unwrap();
    }
    w.start_file("app.pexe", o).unwrap();
    w.write_all(&pexe).unwrap();
    let zip = w.finish().unwrap().into_inner();
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-test-package");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let package = work.join("message-app.zip");
    std::fs::write(&package, &zip).unwrap();
    let _heavy = crate::common::heavy();
    let s = Server::start(&[]);
    let report = upload(
        &s,
        &dir,
        &work.join("run"),
        &package,
        &[(
            "SITE_WAIT",
            "window.appStatus?.naclDone && window.appStatus",
        )],
    );
    assert_eq!(report["filename"], "message-app-site.zip", "{report}");
    assert!(
        report["facts"]["Runs here"]
            .as_str()
            .unwrap()
            .starts_with("runs: 1 module(s) converted"),
        "{report}"
    );
    let site = &report["run"]["site"];
    assert_eq!(site["messages"], serde_json::json!(["first"]), "{report}");
    assert_eq!(site["naclEvents"][0], "load", "{report}");
    assert_eq!(report["run"]["isolated"], true, "{report}");
    // The download is the site.
    let got = std::fs::read(work.join("run/download.wasm")).unwrap();
    let z = zip::ZipArchive::new(std::io::Cursor::new(got)).unwrap();
    assert!(z.file_names().any(|n| n.is_ok_and(|n| n == "app.wasm")));
}
