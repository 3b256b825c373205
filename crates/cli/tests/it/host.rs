//! `pexe2wasm host`: the drop-in host folder, and its converter for the browser
//! (crates/browser-converter) run by node over every pexe of the real corpus and the
//! fixtures: the same bytes as the CLI's conversion, or the same error text.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd::{fails_saying, have, pexe2wasm, same, text};
use pexe2wasm_testkit as testkit;
use pexe2wasm_testkit::corpus as common;

pub(crate) fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Every pexe of the repository's fixtures (fixtures/**/*.pexe).
fn fixture_pexes() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![testkit::repo_path("fixtures")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "pexe") {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

/// Every pexe of the real corpus (its three lists), or none after a SKIPPED line.
fn corpus_pexes() -> Vec<PathBuf> {
    let dir = common::real_corpus_dir();
    let names: Vec<&str> = common::WELL_FORMED
        .iter()
        .chain(common::NOT_RUNNABLE)
        .chain(common::MALFORMED)
        .copied()
        .collect();
    if common::real_pexe(names[0]).is_none() {
        return Vec::new();
    }
    names.iter().map(|n| dir.join(n)).collect()
}

/// `pexe2wasm host -o DIR`; false (after a SKIPPED line) when this pexe2wasm was built
/// without the browser converter (no wasm32 target), which fails under CI.
pub(crate) fn write_host(dir: &Path) -> bool {
    let o = pexe2wasm(&["host", "-o", dir.to_str().unwrap()]);
    let e = text(&o.stderr);
    if !o.status.success() && e.contains("built without the browser converter") && !ci() {
        eprintln!("SKIPPED: {e}");
        return false;
    }
    assert!(o.status.success(), "{e}");
    assert!(
        text(&o.stdout).contains("pexe2wasm.js"),
        "{}",
        text(&o.stdout)
    );
    true
}

#[test]
fn host_writes_the_drop_in_folder_and_refuses_a_foreign_one() {
    let dir = common::Scratch::new("host-folder");
    let out = dir.join("site/nacl");
    if !write_host(&out) {
        return;
    }
    // pexe2wasm.js: advertise.js first (a classic script answering mimeTypes at once),
    // then the loader of pexe2wasm/embed.js.
    let script = std::fs::read_to_string(out.join("pexe2wasm.js")).unwrap();
    let advertise = pexe2wasm_webhost::file("advertise.js").unwrap();
    let loader = pexe2wasm_webhost::file("drop-in.js").unwrap();
    let a = script
        .find(advertise)
        .expect("advertise.js in pexe2wasm.js");
    let l = script.find(loader).expect("drop-in.js in pexe2wasm.js");
    assert!(a < l);
    for (file, body) in pexe2wasm_webhost::HOST_FILES {
        let got = std::fs::read_to_string(out.join("pexe2wasm").join(file)).unwrap();
        assert_eq!(&got, body, "{file}");
    }
    let wasm = std::fs::read(out.join("pexe2wasm/convert/converter.wasm")).unwrap();
    wasmparser::Validator::new()
        .validate_all(&wasm)
        .expect("the converter validates");
    let info: serde_json::Value = serde_json::from_slice(
        &std::fs::read(out.join("pexe2wasm/convert/converter.json")).unwrap(),
    )
    .unwrap();
    let version = info["version"].as_str().unwrap();
    assert!(
        version.starts_with(concat!(env!("CARGO_PKG_VERSION"), "+")) && version.len() > 10,
        "{version}"
    );
    assert!(out.join("pexe2wasm-isolation.js").is_file());
    // The player page: web's console page, the drop-in script, player.js for its embed.
    let player = std::fs::read_to_string(out.join("player.html")).unwrap();
    assert!(
        player.contains("<script src=\"pexe2wasm.js\"></script>")
            && player.contains("<script src=\"pexe2wasm/player.js\"></script>")
            && !player.contains("<embed")
            && !player.contains("{{")
            && player.contains("id=\"console\""),
        "{player}"
    );
    // Written again over itself: fine.
    let o = pexe2wasm(&["host", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // A folder with other files is never written into.
    let foreign = dir.join("mine");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("index.html"), "mine").unwrap();
    let o = pexe2wasm(&["host", "-o", foreign.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(e.contains("not a host folder"), "{e}");
    assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 1);
    // Nor a `web` folder (the drop-in script and the host, no converter), whose player.html
    // is the site's.
    let web = dir.join("web");
    for f in ["pexe2wasm.js", "pexe2wasm/embed.js", "player.html"] {
        std::fs::create_dir_all(web.join(f).parent().unwrap()).unwrap();
        std::fs::write(web.join(f), "the site's").unwrap();
    }
    let o = pexe2wasm(&["host", "-o", web.to_str().unwrap()]);
    fails_saying(&o, 1, "not a host folder");
    assert_eq!(
        std::fs::read_to_string(web.join("player.html")).unwrap(),
        "the site's"
    );
}

/// What `pexe2wasm convert` makes of `pexe`: the module, or the error text after
/// `error: FILE: `.
pub(crate) fn cli_convert(pexe: &Path, out: &Path) -> Result<Vec<u8>, String> {
    let o = pexe2wasm(&[
        "convert",
        pexe.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    if o.status.success() {
        return Ok(std::fs::read(out).unwrap());
    }
    let e = text(&o.stderr);
    let prefix = format!("error: {}: ", pexe.display());
    let line = e.lines().next().unwrap_or_default();
    Err(line
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{}: unexpected error line {line:?}", pexe.display()))
        .to_owned())
}

/// Runs the browser converter of a `pexe2wasm host` folder over `inputs` (node running
/// web/bench/convert.mjs) in a new scratch folder `name`: the folder and the one where
/// input `i` left `{i}.wasm` or `{i}.err`; None (skipped) without node, which fails under
/// CI, or without the browser converter ([`write_host`]).
fn browser_convert(name: &str, inputs: &[PathBuf]) -> Option<(common::Scratch, PathBuf)> {
    if !have("node") {
        assert!(!ci(), "node is missing under CI");
        return None;
    }
    let dir = common::Scratch::new(name);
    let host = dir.join("host");
    if !write_host(&host) {
        return None;
    }
    let out = dir.join("browser");
    std::fs::create_dir_all(&out).unwrap();
    let o = Command::new("node")
        .arg(testkit::repo_path("web/bench/convert.mjs"))
        .arg(&host)
        .arg(&out)
        .args(inputs)
        .output()
        .unwrap();
    assert!(o.status.success(), "node: {}", text(&o.stderr));
    Some((dir, out))
}

#[test]
fn the_browser_converter_converts_the_corpus_as_the_cli_does() {
    let mut pexes = fixture_pexes();
    let corpus = corpus_pexes();
    let had_corpus = !corpus.is_empty();
    pexes.extend(corpus);
    let Some((dir, out)) = browser_convert("host-corpus", &pexes) else {
        return;
    };
    let (mut modules, mut errors) = (0, 0);
    for (i, pexe) in pexes.iter().enumerate() {
        let cli = cli_convert(pexe, &dir.join("cli.wasm"));
        let wasm = std::fs::read(out.join(format!("{i}.wasm")));
        let err = std::fs::read_to_string(out.join(format!("{i}.err")));
        let what = pexe.display().to_string();
        match (cli, wasm, err) {
            (Ok(want), Ok(got), _) => {
                same(&got, &want, &what);
                wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
                    .validate_all(&got)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                modules += 1;
            }
            (Err(want), _, Ok(got)) => {
                assert_eq!(got, want, "{what}: the error text");
                errors += 1;
            }
            (cli, wasm, err) => panic!(
                "{what}: the CLI says {:?}, the browser converter wrote a module: {}, an error: {:?}",
                cli.map(|w| w.len()),
                wasm.is_ok(),
                err.ok()
            ),
        }
    }
    eprintln!(
        "{} pexes: {modules} modules and {errors} errors the same",
        pexes.len()
    );
    assert!(modules >= 20, "{modules} modules");
    if had_corpus {
        // The corpus's malformed pexes fail with positioned errors in both.
        assert!(errors >= common::MALFORMED.len(), "{errors} errors");
    }
}

/// The browser converter translates nexes as `pexe2wasm web` does: the static x86-64
/// Pepper ones (ckauth; nassh, threaded) into the same bytes `web` writes beside them, and
/// the rest (a command-line nexe, ARM, 2011's pre-1.0 Pepper, x86-32) into the error text
/// `web` prints for them.
#[test]
fn the_browser_converter_translates_nexes_as_web_does() {
    let names = [
        "ckauth-x86_64.nexe",
        "nassh-ssh_client-x86_64.nexe",
        "fftw-wisdom-x86_64.nexe",
        "ckauth-arm.nexe",
        "naclports-gallery-sine_synth-x86_64.nexe",
        "nassh-ssh_client-x86_32.nexe",
    ];
    let corpus = common::nexe_corpus_dir();
    if common::real_nexe(names[0]).is_none() {
        return;
    }
    let nexes: Vec<PathBuf> = names.iter().map(|n| corpus.join(n)).collect();
    let Some((dir, out)) = browser_convert("host-nexes", &nexes) else {
        return;
    };
    let mut modules = 0;
    for (i, nexe) in nexes.iter().enumerate() {
        let what = nexe.display().to_string();
        let site = dir.join(&format!("web-{i}"));
        let web = pexe2wasm(&["web", nexe.to_str().unwrap(), "-o", site.to_str().unwrap()]);
        let stem = nexe.file_stem().unwrap().to_str().unwrap();
        if web.status.success() {
            let want = std::fs::read(site.join(format!("{stem}.wasm"))).unwrap();
            let got = std::fs::read(out.join(format!("{i}.wasm")))
                .unwrap_or_else(|e| panic!("{what}: no module from the browser converter: {e}"));
            same(&got, &want, &what);
            wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
                .validate_all(&got)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            modules += 1;
        } else {
            let e = text(&web.stderr);
            let want = e
                .lines()
                .next()
                .and_then(|l| l.strip_prefix(&format!("error: {what}: ")))
                .unwrap_or_else(|| panic!("{what}: web says {e:?}"));
            let got = std::fs::read_to_string(out.join(format!("{i}.err")))
                .unwrap_or_else(|e| panic!("{what}: no error from the browser converter: {e}"));
            assert_eq!(got, want, "{what}: the error text");
        }
    }
    assert_eq!(modules, 2, "ckauth's and nassh's modules");
}

// --- the drop-in script in a browser ----------------------------------------------------

use crate::cmd::spawn_announcing;
use crate::web::{driver_report, scratch, web_dir, Browser, ONE_BROWSER};
use serde_json::{json, Value};
use std::process::Child;

/// web/tests/browser/serve.mjs over `root` as it is on disk (for the drop-in script: with
/// `host`, a `pexe2wasm host` folder, at /pexe2wasm-host/ and the script added to every
/// page it serves); killed when dropped.
pub(crate) struct StaticServer {
    child: Child,
    pub(crate) base: String,
}

impl StaticServer {
    /// `root` alone.
    pub(crate) fn start(root: &Path) -> StaticServer {
        Self::serve(root, &[])
    }

    /// The loopback port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.base
            .trim_start_matches("http://127.0.0.1:")
            .parse()
            .unwrap_or_else(|_| panic!("serve.mjs's base {:?}", self.base))
    }

    /// `root` with the drop-in script of `host`.
    fn drop_in(root: &Path, host: &Path) -> StaticServer {
        Self::start_with(root, host, &[])
    }

    /// As `drop_in`, with more of serve.mjs's settings (INJECT_CONFIG, ARCHIVE).
    pub(crate) fn start_with(root: &Path, host: &Path, env: &[(&str, &str)]) -> StaticServer {
        let mount = format!("/pexe2wasm-host/={}", host.display());
        let mut all = vec![
            ("MOUNT", mount.as_str()),
            ("INJECT", "/pexe2wasm-host/pexe2wasm.js"),
        ];
        all.extend_from_slice(env);
        Self::serve(root, &all)
    }

    /// `root` with serve.mjs's settings `env`.
    pub(crate) fn serve(root: &Path, env: &[(&str, &str)]) -> StaticServer {
        let (child, line) = spawn_announcing(
            Command::new("node")
                .arg(web_dir().join("tests/browser/serve.mjs"))
                .arg(root)
                .arg("0")
                .envs(env.iter().copied()),
        );
        // Without its trailing slash: pages are given as /PATH.
        let base = line.trim().trim_end_matches('/').to_owned();
        assert!(
            base.starts_with("http://127.0.0.1:"),
            "serve.mjs said {line:?}"
        );
        StaticServer { child, base }
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `root` served with the drop-in script, opened at `page` in `browser` and `steps` run (the
/// `steps` scenario of web/tests/browser/run.mjs); the report.
pub(crate) fn drop_in(
    browser: Browser,
    root: &Path,
    tag: &str,
    page: &str,
    steps: &Value,
) -> Option<Value> {
    let dir = scratch(&format!("drop-in-{tag}-{}", browser.name()));
    let host = dir.join("host");
    if !write_host(&host) {
        return None;
    }
    let served = StaticServer::drop_in(root, &host);
    let url = format!("{}{page}", served.base);
    let report = run_steps(browser, &url, steps, &dir.join("profile"), &[]);
    assert_steps_true(&report, steps, &format!("{tag} in {}", browser.name()));
    Some(report)
}

/// web/tests/browser/run.mjs's `steps` scenario in `browser` at `url` (its profile in
/// `profile`, more of run.mjs's settings in `env`): the report, which has no driver error
/// and a result for each step.
pub(crate) fn run_steps(
    browser: Browser,
    url: &str,
    steps: &Value,
    profile: &Path,
    env: &[(&str, &str)],
) -> Value {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = run_mjs(browser);
    c.arg("tests/browser/run.mjs")
        .current_dir(web_dir())
        .env("BROWSER", browser.name())
        .env("URL", url)
        .env("SCENARIO", "steps")
        .env("STEPS", steps.to_string())
        .env("PAGE_ERRORS_OK", "1")
        .env("PROFILE", profile)
        .envs(env.iter().copied());
    let report = driver_report(c);
    assert_eq!(report["driverError"], Value::Null, "{report:#}");
    let got = report["steps"].as_array().map_or(0, Vec::len);
    assert_eq!(got, steps.as_array().map_or(0, Vec::len), "{report:#}");
    report
}

/// Asserts each step of `report` came true (neither null nor false); `what` names the run.
pub(crate) fn assert_steps_true(report: &Value, steps: &Value, what: &str) {
    let got = report["steps"].as_array().cloned().unwrap_or_default();
    // A run that stopped early reports fewer steps: the rest did not come true either.
    let want = steps.as_array().map_or(0, Vec::len);
    assert_eq!(
        got.len(),
        want,
        "{what}: {} of {want} steps reported:\n{report:#}",
        got.len()
    );
    for (i, v) in got.iter().enumerate() {
        assert!(
            !v.is_null() && v != &json!(false),
            "{what}: step {i} ({}) did not come true:\n{report:#}",
            steps[i]
        );
    }
}

/// node, to run web/tests/browser/run.mjs in `browser`: under xvfb-run for WebKitGTK,
/// which has no headless mode.
pub(crate) fn run_mjs(browser: Browser) -> Command {
    if browser == Browser::WebKit {
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "node"]);
        c
    } else {
        Command::new("node")
    }
}

/// The console lines of a report that say the converter ran, or took the cache.
pub(crate) fn console_with(report: &Value, what: &str) -> usize {
    report["console"].as_array().map_or(0, |l| {
        l.iter()
            .filter(|m| m.as_str().is_some_and(|m| m.contains(what)))
            .count()
    })
}

/// lpdevs-part2 (the SDK's messaging tutorial) as its author left it, with only the
/// script added: it runs with its pexe converted in the browser, and a second visit takes
/// the module from the cache without converting again.
fn lpdevs_drop_in(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let Some(site) = common::real_site("lpdevs-part2") else {
        return;
    };
    let status = json!({"wait": "document.getElementById('statusField')?.textContent === 'RUNNING'", "ms": 120000});
    let log = json!({"wait": "document.getElementById('log').textContent === 'hello from NaCl'"});
    let source = |s: &str| json!({"eval": format!("document.querySelector('embed')?.pexe2wasm?.source === {s:?}")});
    let steps = json!([
        {"eval": "!!navigator.mimeTypes['application/x-pnacl']"},
        status, log, source("converted"),
        {"reload": true},
        status, log, source("cache"),
    ]);
    let Some(report) = drop_in(
        browser,
        &site,
        "lpdevs",
        "/pepper_49/getting_started/part2/index.html",
        &steps,
    ) else {
        return;
    };
    assert_eq!(
        console_with(&report, "converted in the browser in"),
        1,
        "{report:#}"
    );
    assert_eq!(console_with(&report, "from the cache"), 1, "{report:#}");
}

both_browsers!(lpdevs_drop_in: lpdevs_drop_in_chromium, lpdevs_drop_in_firefox);

/// A pexe that does not convert: the element's error event, with `lastError` the text
/// `pexe2wasm convert` prints for it (its position in the pexe), also on the console.
fn broken_pexe_drop_in(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let Some(pexe) = common::real_pexe("binji-puts.pexe") else {
        return;
    };
    let root = scratch(&format!("drop-in-broken-root-{}", browser.name()));
    std::fs::write(root.join("bad.pexe"), &pexe[..pexe.len() / 2]).unwrap();
    std::fs::write(
        root.join("bad.nmf"),
        r#"{"program": {"portable": {"pnacl-translate": {"url": "bad.pexe"}}}}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("index.html"),
        r#"<!doctype html><html><head><title>broken</title></head><body>
<embed id="m" type="application/x-pnacl" src="bad.nmf" width="10" height="10">
<script>window.errors = []; document.getElementById("m").addEventListener("error", (e) => errors.push(e.target.lastError));</script>
</body></html>"#,
    )
    .unwrap();
    let want = cli_convert(&root.join("bad.pexe"), &root.join("bad.wasm"))
        .expect_err("half a pexe does not convert");
    assert!(want.starts_with("bit "), "{want}");
    let steps = json!([
        {"wait": "window.errors.length > 0", "ms": 120000},
        {"eval": format!("window.errors.length === 1 && window.errors[0] === {want:?}")},
    ]);
    let Some(report) = drop_in(browser, &root, "broken", "/index.html", &steps) else {
        return;
    };
    assert!(console_with(&report, &want) >= 1, "{want}\n{report:#}");
}

three_browsers!(broken_pexe_drop_in: broken_pexe_drop_in_chromium, broken_pexe_drop_in_firefox, broken_pexe_drop_in_webkit);
