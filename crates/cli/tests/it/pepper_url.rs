//! `pexe2wasm run` of a Pepper plugin that loads URLs: shhnjk-url_loader.pexe, a
//! proof of concept that fetches `https://test.shhnjk.com/secret.html` and sends what it
//! read to `https://attack.shhnjk.com/?leak=...` (SOURCES.md, "Safety notes"). With
//! `--url-map` both hosts are loopback servers of the test; without it nothing is fetched
//! and the app is told so. Nothing leaves loopback either way: unmapped URLs are refused
//! before any connection, and the host's resolver gives loopback addresses only.

use crate::cmd::stderr;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use pexe2wasm_testkit::corpus::{real_pexe, Scratch};
use pexe2wasm_testkit::http::{Reply, TestServer};

const POC: &str = "shhnjk-url_loader.pexe";
const SECRET: &str = "TOPSECRET-42";

fn run(pexe: &std::path::Path, args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
        .arg("run")
        .args(args)
        .args(["--timeout", "60"])
        .arg(pexe)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The PoC in a scratch directory, or `None` (with a SKIPPED line) without the corpus.
fn poc() -> Option<(Scratch, std::path::PathBuf)> {
    let bytes = real_pexe(POC)?;
    let dir = Scratch::new("pepper-url-cli");
    let path = dir.join(POC);
    std::fs::write(&path, bytes).unwrap();
    Some((dir, path))
}

#[test]
fn the_url_loader_poc_reads_the_mapped_secret_and_leaks_it_to_the_mapped_attacker() {
    let Some((_dir, pexe)) = poc() else { return };
    let site = TestServer::start(|r| {
        if r.target == "/secret.html" {
            Reply::text(SECRET)
        } else {
            Reply::status(404, "Not Found")
        }
    });
    // "test" is the answer after which the PoC stops leaking.
    let attacker = TestServer::start(|_| Reply::text("test"));
    let o = run(
        &pexe,
        &[
            "--url-map".into(),
            format!("https://test.shhnjk.com/={}", site.url("/")),
            "--url-map".into(),
            format!("https://attack.shhnjk.com/={}", attacker.url("/")),
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let asked = site.wait_for(1, Duration::from_secs(5));
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        (asked[0].method.as_str(), asked[0].target.as_str()),
        ("GET", "/secret.html")
    );
    let leaked = attacker.wait_for(1, Duration::from_secs(5));
    assert_eq!(leaked.len(), 1, "{leaked:?}");
    assert_eq!(leaked[0].method, "GET");
    assert_eq!(
        leaked[0].target,
        format!("/?leak={SECRET}"),
        "the body it read"
    );
    // Both loads reported success (the app prints to its stdout, which is our stderr).
    assert_eq!(
        err.matches("URLLoaderHandler::ReportResult(Ok).").count(),
        2,
        "{err}"
    );
    assert!(!err.contains("refused"), "{err}");
}

#[test]
fn without_a_map_the_url_loader_poc_fetches_nothing_and_is_told_so() {
    let Some((_dir, pexe)) = poc() else { return };
    // Servers that would answer, reachable on loopback but mapped to nothing.
    let site = TestServer::start(|_| Reply::text(SECRET));
    let o = run(&pexe, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("refused to fetch https://test.shhnjk.com/secret.html"),
        "{err}"
    );
    assert!(
        err.contains("URLLoaderHandler::ReportResult(Err). pp::URLLoader::Open() failed"),
        "{err}"
    );
    assert!(!err.contains("attack.shhnjk.com"), "{err}");
    std::thread::sleep(Duration::from_millis(100));
    assert!(site.requests().is_empty());

    // A map to a host other than this machine is refused before the run starts.
    let o = run(
        &pexe,
        &[
            "--url-map".into(),
            "https://test.shhnjk.com/=http://test.shhnjk.com/".into(),
        ],
    );
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("--url-map https://test.shhnjk.com/=http://test.shhnjk.com/")
            && err.contains("this machine"),
        "{err}"
    );
    assert!(!err.contains("ReportResult"), "the app never ran: {err}");
}

#[test]
fn origins_are_checked_before_the_run() {
    let Some((dir, pexe)) = poc() else { return };
    let o = run(&pexe, &["--origin".into(), dir.arg("no-such-dir")]);
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("--origin") && err.contains("no-such-dir"),
        "{err}"
    );
    let o = run(&pexe, &["--origin".into(), "http://192.0.2.1/".into()]);
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("this machine"), "{err}");
}
