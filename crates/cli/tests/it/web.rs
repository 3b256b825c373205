//! The browser host (web/) and `pexe2wasm web` / `serve`: the host against the interface
//! description, its unit tests and lint, the folder `web` writes, the headers `serve` sets,
//! and real Pepper apps in real browsers: Debian's Chromium (playwright-core) and Firefox
//! ESR (puppeteer-core over WebDriver BiDi), driven by web/tests/browser/run.mjs. Each
//! browser run saves a screenshot under target/tmp/web-screenshots/.
//!
//! Under CI=true a missing node, node_modules, browser or corpus is a failure; elsewhere
//! the test prints SKIPPED.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use pexe2wasm_ppapi::{description, hosts, HostFunction, ValType, WasmSignature};
use pexe2wasm_testkit::corpus as common;
use serde_json::Value;

pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
}

pub(crate) fn web_dir() -> PathBuf {
    pexe2wasm_testkit::repo_root().join("web")
}

pub(crate) fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Whether `what` is present; a failure under CI, a SKIPPED line elsewhere.
pub(crate) fn have(what: &str, present: bool) -> bool {
    if !present {
        assert!(
            !under_ci(),
            "{what} is missing under CI (scripts/install-deps.sh installs it)"
        );
        eprintln!("SKIPPED: {what} is missing; run scripts/install-deps.sh");
    }
    present
}

pub(crate) fn node_ready() -> bool {
    have(
        "node",
        Command::new("node").arg("--version").output().is_ok(),
    ) && have(
        "web/node_modules (npm ci in web/)",
        web_dir().join("node_modules/playwright-core").exists(),
    )
}

pub(crate) fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("web-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub(crate) use crate::cmd::{fails_saying, spawn_announcing, text};

#[test]
fn browser_host_matches_the_description() {
    if !node_ready() {
        return;
    }
    let o = Command::new("node")
        .arg("tests/list-host.mjs")
        .current_dir(web_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let ty = |v: &Value| match v.as_str().unwrap() {
        "i32" => ValType::I32,
        "i64" => ValType::I64,
        "f32" => ValType::F32,
        "f64" => ValType::F64,
        other => panic!("type {other}"),
    };
    let funcs: Vec<HostFunction> = text(&o.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let params: Vec<ValType> = v["params"].as_array().unwrap().iter().map(ty).collect();
            let results: Vec<ValType> = v["results"].as_array().unwrap().iter().map(ty).collect();
            HostFunction::new(
                v["interface"].as_str().unwrap(),
                v["function"].as_str().unwrap(),
                WasmSignature::new(&params, &results),
            )
        })
        .collect();
    assert!(funcs.len() > 60, "only {} functions", funcs.len());
    let mismatches = description().check_host(&funcs);
    assert!(
        mismatches.is_empty(),
        "{}",
        mismatches
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let registered: std::collections::BTreeSet<&str> =
        funcs.iter().map(|f| f.interface.as_str()).collect();
    let listed: std::collections::BTreeSet<&str> = hosts::BROWSER.iter().copied().collect();
    assert_eq!(
        registered, listed,
        "hosts::BROWSER is what the host registers"
    );
}

#[test]
fn browser_host_unit_tests_lint_and_type_check_pass() {
    if !node_ready() {
        return;
    }
    let o = Command::new("node")
        .args(["--test", "tests/unit/"])
        .current_dir(web_dir())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(text(&o.stdout).contains("# fail 0"), "{}", text(&o.stdout));
    let o = Command::new("node")
        .args([
            "node_modules/eslint/bin/eslint.js",
            "src",
            "npm",
            "tests",
            "bench",
        ])
        .current_dir(web_dir())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "eslint: {}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    // The JS is type-checked too: the host (web/tsconfig.json, the browser's globals), the
    // node tests and benchmarks (tsconfig.tests.json) and the browser driver and test pages
    // (tsconfig.browser-tests.json); a type error fails here.
    for project in [".", "tsconfig.tests.json", "tsconfig.browser-tests.json"] {
        let o = Command::new("node")
            .args(["node_modules/typescript/bin/tsc", "-p", project])
            .current_dir(web_dir())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "tsc -p {project}: {}\n{}",
            text(&o.stdout),
            text(&o.stderr)
        );
    }
}

/// `pexe2wasm asm src -o pexe`, which must succeed.
fn assemble(src: &Path, pexe: &Path) {
    let o = bin()
        .arg("asm")
        .arg(src)
        .arg("-o")
        .arg(pexe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// One of our Pepper plugins, fixtures/pepper/NAME.pnaclasm, assembled into `dir`.
pub(crate) fn pepper_fixture(dir: &Path, name: &str) -> PathBuf {
    let pexe = dir.join(format!("{name}.pexe"));
    let src = pexe2wasm_testkit::repo_root().join(format!("fixtures/pepper/{name}.pnaclasm"));
    assemble(&src, &pexe);
    pexe
}

/// Every file under `root`, relative, sorted.
pub(crate) fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn web_writes_a_folder_with_the_module_the_host_and_a_page() {
    let dir = scratch("folder");
    let pexe = pepper_fixture(&dir, "input-echo");
    let out = dir.join("site");
    let o = bin()
        .arg("web")
        .arg(&pexe)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("pexe2wasm serve"),
        "{}",
        text(&o.stdout)
    );
    // The module is what `convert` makes, and valid.
    let wasm = std::fs::read(out.join("input-echo.wasm")).unwrap();
    let conv = dir.join("c.wasm");
    assert!(bin()
        .arg("convert")
        .arg(&pexe)
        .arg("-o")
        .arg(&conv)
        .status()
        .unwrap()
        .success());
    assert_eq!(wasm, std::fs::read(&conv).unwrap());
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&wasm)
        .unwrap();
    // The pexe stays, named by a manifest.
    assert_eq!(
        std::fs::read(out.join("input-echo.pexe")).unwrap(),
        std::fs::read(&pexe).unwrap()
    );
    let nmf: Value =
        serde_json::from_slice(&std::fs::read(out.join("input-echo.nmf")).unwrap()).unwrap();
    assert_eq!(
        nmf["program"]["portable"]["pnacl-translate"]["url"],
        "input-echo.pexe"
    );
    // The host: every file of web/src, unchanged (so none is missing from the binary).
    let src = web_dir().join("src");
    let want = files_under(&src);
    assert_eq!(files_under(&out.join("pexe2wasm")), want);
    for f in &want {
        assert_eq!(
            std::fs::read(out.join("pexe2wasm").join(f)).unwrap(),
            std::fs::read(src.join(f)).unwrap(),
            "{}",
            f.display()
        );
    }
    assert!(out.join("pexe2wasm-isolation.js").is_file());
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains(r#"<embed id="app" type="application/x-pnacl" src="input-echo.nmf" width="640" height="480">"#), "{page}");
    // The one way a page starts the host: the drop-in script `host` writes, its config
    // saying the module is beside the pexe, and no converter in the folder.
    assert!(
        page.contains(r#"<script src="pexe2wasm.js"></script>"#),
        "{page}"
    );
    assert!(
        !page.contains("pexe2wasm/embed.js") && !page.contains("pexe2wasm/advertise.js"),
        "{page}"
    );
    assert!(
        page.contains(r#"<script type="application/json" id="pexe2wasm-config">{"preconverted":true}</script>"#),
        "{page}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("pexe2wasm.js")).unwrap(),
        pexe2wasm_webhost::drop_in_script()
    );
    assert!(!out.join("pexe2wasm/convert/converter.wasm").exists());

    // --small-code: the module `convert --small-code` makes, not the default one.
    let small_site = dir.join("site-small");
    let o = bin()
        .arg("web")
        .arg(&pexe)
        .arg("--small-code")
        .arg("-o")
        .arg(&small_site)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let small = std::fs::read(small_site.join("input-echo.wasm")).unwrap();
    let conv_small = dir.join("c-small.wasm");
    assert!(bin()
        .arg("convert")
        .arg(&pexe)
        .arg("--small-code")
        .arg("-o")
        .arg(&conv_small)
        .status()
        .unwrap()
        .success());
    assert_eq!(small, std::fs::read(&conv_small).unwrap());
    assert!(
        small.len() < wasm.len(),
        "{} vs {}",
        small.len(),
        wasm.len()
    );
}

#[test]
fn web_keeps_the_apps_own_page_and_its_neighbours() {
    let dir = scratch("page");
    let pexe = pepper_fixture(&dir, "input-echo");
    let app = dir.join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("page.html"), "<!DOCTYPE html><HTML><HEAD><title>t</title><script src=common.js></script></HEAD><body></body></HTML>").unwrap();
    std::fs::write(app.join("common.js"), "// the page's own").unwrap();
    // Its subfolders come along (a page's lib/ and css/).
    std::fs::create_dir_all(app.join("lib/cm")).unwrap();
    std::fs::write(app.join("lib/cm/codemirror.js"), "// lib").unwrap();
    let out = dir.join("site");
    let o = bin()
        .arg("web")
        .arg(&pexe)
        .arg("-o")
        .arg(&out)
        .arg("--page")
        .arg(app.join("page.html"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("copied beside the page: common.js, lib/cm/codemirror.js"),
        "{}",
        text(&o.stdout)
    );
    let page = std::fs::read_to_string(out.join("page.html")).unwrap();
    // The replacement's scripts come first in <head>, before the page's own.
    let ours = page.find("<script src=\"pexe2wasm.js\"></script>").unwrap();
    assert!(ours < page.find("common.js").unwrap(), "{page}");
    assert!(
        page.starts_with("<!DOCTYPE html><HTML><HEAD>\n<script type=\"application/json\" id=\"pexe2wasm-config\">{\"preconverted\":true}</script>\n<script src=\"pexe2wasm-isolation.js\">"),
        "{page}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("common.js")).unwrap(),
        "// the page's own"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("lib/cm/codemirror.js")).unwrap(),
        "// lib"
    );
    assert!(!out.join("index.html").exists());
}

#[test]
fn web_refuses_what_is_not_a_plugin_and_manifests_that_leave_their_folder() {
    let dir = scratch("refuse");
    let hello = pexe2wasm_testkit::repo_root().join("fixtures/hello.pexe");
    let o = bin()
        .arg("web")
        .arg(&hello)
        .arg("-o")
        .arg(dir.join("a"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("hello.pexe: not a Pepper plugin") && err.contains("pexe2wasm run"),
        "{err}"
    );
    for (url, why) in [
        ("../x.pexe", "leaves the manifest's folder"),
        ("https://example.com/x.pexe", "is not a relative path"),
        ("/x.pexe", "is not a relative path"),
    ] {
        let nmf = dir.join("bad.nmf");
        std::fs::write(
            &nmf,
            format!(r#"{{"program":{{"portable":{{"pnacl-translate":{{"url":"{url}"}}}}}}}}"#),
        )
        .unwrap();
        let o = bin()
            .arg("web")
            .arg(&nmf)
            .arg("-o")
            .arg(dir.join("b"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(text(&o.stderr).contains(why), "{url}: {}", text(&o.stderr));
    }
    std::fs::write(dir.join("x.nmf"), "{\"program\":{}}").unwrap();
    let o = bin()
        .arg("web")
        .arg(dir.join("x.nmf"))
        .arg("-o")
        .arg(dir.join("c"))
        .output()
        .unwrap();
    assert!(
        text(&o.stderr).contains("names no program.portable.pnacl-translate.url"),
        "{}",
        text(&o.stderr)
    );
}

/// `pexe2wasm serve DIR` on a free loopback port; killed when dropped.
pub(crate) struct Served {
    child: Child,
    base: String,
}

impl Served {
    pub(crate) fn start(dir: &Path) -> Served {
        Served::start_on(dir, "127.0.0.1:0")
    }

    fn start_on(dir: &Path, listen: &str) -> Served {
        let (child, line) = spawn_announcing(
            bin()
                .arg("serve")
                .arg(dir)
                .args(["--listen", listen])
                .stderr(Stdio::inherit()),
        );
        let base = line
            .split(" at ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("serve said {line:?}"))
            .to_owned();
        Served { child, base }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw HTTP GET on loopback: (status line and headers lowercased, body length in bytes).
fn get(base: &str, path: &str) -> (String, usize) {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://").trim_end_matches('/');
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(buf.len());
    let head = text(&buf[..end]).to_ascii_lowercase();
    (head, buf.len().saturating_sub(end + 4))
}

#[test]
fn serve_gives_the_headers_a_converted_app_needs() {
    let dir = scratch("serve");
    let pexe = pepper_fixture(&dir, "input-echo");
    let out = dir.join("site");
    assert!(bin()
        .arg("web")
        .arg(&pexe)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap()
        .success());
    let s = Served::start(&out);
    let (head, len) = get(&s.base, "/input-echo.wasm");
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-type: application/wasm"), "{head}");
    assert!(
        head.contains("cross-origin-opener-policy: same-origin"),
        "{head}"
    );
    assert!(
        head.contains("cross-origin-embedder-policy: require-corp"),
        "{head}"
    );
    assert_eq!(
        len as u64,
        std::fs::metadata(out.join("input-echo.wasm"))
            .unwrap()
            .len()
    );
    let (head, _) = get(&s.base, "/pexe2wasm/embed.js");
    assert!(head.contains("content-type: text/javascript"), "{head}");
    let (head, _) = get(&s.base, "/");
    assert!(
        head.starts_with("http/1.1 200") && head.contains("text/html"),
        "{head}"
    );
    let (head, _) = get(&s.base, "/nothing-here");
    assert!(head.starts_with("http/1.1 404"), "{head}");
    let (head, _) = get(&s.base, "/../../etc/passwd");
    assert!(!head.starts_with("http/1.1 200"), "{head}");
    let o = bin()
        .arg("serve")
        .arg(dir.join("missing"))
        .output()
        .unwrap();
    fails_saying(&o, 1, "not a directory");
}

// --- real apps in real browsers -------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Browser {
    Chromium,
    Firefox,
    /// Safari's engine: Debian's WebKitGTK (MiniBrowser) through WebKitWebDriver. There is
    /// no Safari on Linux; WebKitGTK shares its WebKit and JavaScriptCore.
    WebKit,
}

impl Browser {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Browser::Chromium => "chromium",
            Browser::Firefox => "firefox",
            Browser::WebKit => "webkit",
        }
    }
    pub(crate) fn ready(self) -> bool {
        node_ready()
            && match self {
                Browser::Chromium => have(
                    "/usr/bin/chromium (Debian package chromium)",
                    Path::new("/usr/bin/chromium").exists(),
                ),
                Browser::Firefox => {
                    have(
                        "/usr/bin/firefox-esr (Debian package firefox-esr)",
                        Path::new("/usr/bin/firefox-esr").exists(),
                    ) && have(
                        "web/node_modules/puppeteer-core",
                        web_dir().join("node_modules/puppeteer-core").exists(),
                    )
                }
                Browser::WebKit => {
                    have(
                        "/usr/bin/WebKitWebDriver (Debian package webkit2gtk-driver)",
                        Path::new("/usr/bin/WebKitWebDriver").exists(),
                    ) && have(
                        "xvfb-run (Debian package xvfb)",
                        Path::new("/usr/bin/xvfb-run").exists(),
                    ) && have(
                        "web/node_modules/selenium-webdriver",
                        web_dir().join("node_modules/selenium-webdriver").exists(),
                    )
                }
            }
    }
}

/// `pexe2wasm web PEXE --page sdk-page.html -o DIR/site`.
pub(crate) fn write_site(pexe: &Path, dir: &Path) {
    write_site_with(pexe, dir, &[]);
}

/// The same with more arguments (`--url-map ...`).
/// Every site is written with `--refuse-unmapped`: a corpus app that fetches another
/// origin (shhnjk's PoC does, at start) reaches only what a test mapped to loopback.
fn write_site_with(pexe: &Path, dir: &Path, args: &[&str]) {
    let o = bin()
        .arg("web")
        .arg("--refuse-unmapped")
        .args(args)
        .arg(pexe)
        .arg("-o")
        .arg(dir.join("site"))
        .arg("--page")
        .arg(web_dir().join("tests/browser/pages/sdk-page.html"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// A site for a real plugin (DIR/site); `None` without the corpus. One folder per browser
/// and scenario: tests of one app run at the same time, and one writing its site must not
/// delete the files another is serving (CI saw a thread worker's script 404).
fn site_for(app: &str, browser: Browser, scenario: &str) -> Option<PathBuf> {
    common::real_pexe(&format!("{app}.pexe"))?;
    let dir = scratch(&format!("app-{app}-{}-{scenario}", browser.name()));
    write_site(&common::real_corpus_dir().join(format!("{app}.pexe")), &dir);
    Some(dir)
}

/// One browser at a time: on two cores, browsers started together starve each other and
/// time out in ways that say nothing about the host.
pub(crate) static ONE_BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Serves DIR/site and runs web/tests/browser/run.mjs on `page` (a path with its query):
/// the report it prints, checked for driver and page errors.
pub(crate) fn run_page(
    browser: Browser,
    dir: &Path,
    page: &str,
    scenario: &str,
    env: &[(&str, &str)],
) -> Value {
    let report = run_page_once(browser, dir, page, scenario, env, "");
    // Firefox's nested-worker hang (decision 0017's amendment) left instances at
    // "thread-pool 0/4" before the page created the workers. One retry remains, said out
    // loud, with the last stage reached (pexe2wasm.progress), so a new stall shows in the
    // log rather than as a red run.
    // WebKitGTK's MiniBrowser has ended a session under load now and then (the driver
    // answers NoSuchSessionError mid-scenario): one retry too, said out loud.
    let lost_session = browser == Browser::WebKit
        && report["driverError"]
            .as_str()
            .is_some_and(|e| e.starts_with("NoSuchSessionError"));
    if report["loaded"] == false || lost_session {
        eprintln!(
            "NOTE: {} did not start the instance (last stage: {}; driver: {}); retrying once",
            browser.name(),
            report["pexe2wasm"]["progress"],
            report["driverError"]
        );
        // A fresh profile: nothing the first browser left behind can matter; except for a
        // test that visits twice on one profile (LISTEN: the same origin each visit), whose
        // second visit must find what the first left.
        let keeps_profile = env.iter().any(|(k, _)| *k == "LISTEN");
        let profile = if keeps_profile { "" } else { "retry" };
        let report = run_page_once(browser, dir, page, scenario, env, profile);
        return checked(report, env);
    }
    checked(report, env)
}

/// The report, once the driver and the page said nothing was wrong.
fn checked(report: Value, env: &[(&str, &str)]) -> Value {
    assert_eq!(report["driverError"], Value::Null, "{report:#}");
    // A real site's own errors are the site's test to judge (PAGE_ERRORS_OK).
    if !env.iter().any(|(k, _)| *k == "PAGE_ERRORS_OK") {
        assert_eq!(report["pageErrors"], serde_json::json!([]), "{report:#}");
    }
    report
}

fn run_page_once(
    browser: Browser,
    dir: &Path,
    page: &str,
    scenario: &str,
    env: &[(&str, &str)],
    profile: &str,
) -> Value {
    // LISTEN: a fixed address, for tests that need the same origin on every visit.
    let listen = env
        .iter()
        .find(|(k, _)| *k == "LISTEN")
        .map_or("127.0.0.1:0", |(_, v)| *v);
    let served = Served::start_on(&dir.join("site"), listen);
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    // Headless Firefox gets no WebGL on this machine (no GL driver without a display):
    // a scenario that needs it (HEADFUL=1) runs Firefox in a window on xvfb-run's display.
    // WebKitGTK has no headless mode: it always gets a display.
    let headful = browser == Browser::WebKit
        || browser == Browser::Firefox && env.iter().any(|(k, _)| *k == "HEADFUL");
    let mut c = if headful {
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "node"]);
        c
    } else {
        Command::new("node")
    };
    c.arg("tests/browser/run.mjs")
        .current_dir(web_dir())
        .env("BROWSER", browser.name())
        .env("URL", format!("{}{page}", served.base))
        .env("SCENARIO", scenario)
        .env(
            "PROFILE",
            dir.join(format!("profile-{}{profile}", browser.name())),
        );
    for (k, v) in env {
        c.env(k, v);
    }
    driver_report(c)
}

/// Runs web/tests/browser/run.mjs as `c` says: its report (the last line it prints), after
/// checking that it ended well.
pub(crate) fn driver_report(mut c: Command) -> Value {
    let o = c.output().unwrap();
    let out = text(&o.stdout);
    assert!(
        o.status.success(),
        "run.mjs: {}\n{out}\n{}",
        o.status,
        text(&o.stderr)
    );
    serde_json::from_str(out.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {out}\n{}", text(&o.stderr)))
}

/// A real plugin on the SDK-style page, with a screenshot; `None` without the corpus.
fn drive(browser: Browser, app: &str, scenario: &str, env: &[(&str, &str)]) -> Option<Value> {
    let dir = site_for(app, browser, scenario)?;
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(format!("{app}-{}.png", browser.name()));
    let mut env = env.to_vec();
    env.push(("SCREENSHOT", shot.to_str().unwrap()));
    let report = run_page(
        browser,
        &dir,
        &format!("sdk-page.html?nmf={app}.nmf"),
        scenario,
        &env,
    );
    assert_eq!(report["crossOriginIsolated"], true, "{report:#}");
    Some(report)
}

fn strings(report: &Value) -> Vec<String> {
    report["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m.as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| m.to_string())
        })
        .collect()
}

/// The int32s of an ArrayBuffer message ({"arrayBuffer": [bytes]}).
fn int32s(m: &Value) -> Vec<i32> {
    let bytes: Vec<u8> = m["arrayBuffer"]
        .as_array()
        .unwrap_or_else(|| panic!("not an ArrayBuffer: {m}"))
        .iter()
        .map(|b| b.as_u64().unwrap() as u8)
        .collect();
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn primes(n: i32) -> Vec<i32> {
    (2..=n)
        .filter(|&k| (2..k).take_while(|d| d * d <= k).all(|d| k % d != 0))
        .collect()
}

fn cptaffe(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let Some(r) = drive(
        browser,
        "cptaffe-hello_tutorial",
        "messages",
        &[("MESSAGES", "[30, 100]"), ("EXPECT", "3")],
    ) else {
        return;
    };
    assert_eq!(r["events"], serde_json::json!(["load"]), "{r:#}");
    let m = r["messages"].as_array().unwrap();
    assert_eq!(m.len(), 3, "{r:#}");
    assert_eq!(m[0], "C++ program online.");
    // What the command-line test expects of the app's sieve (see pepper_real.rs): the
    // first K primes, K = the number of primes in (3, N].
    for (n, m) in [(30, &m[1]), (100, &m[2])] {
        let all = primes(n);
        let k = all.iter().filter(|&&p| p > 3).count();
        assert_eq!(int32s(m), all[..k], "N = {n}: {r:#}");
    }
    assert_eq!(r["consoleErrors"], serde_json::json!([]), "{r:#}");
}

both_browsers!(cptaffe: cptaffe_hello_tutorial_in_chromium, cptaffe_hello_tutorial_in_firefox);

fn lpdevs(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let Some(r) = drive(
        browser,
        "lpdevs-part2",
        "messages",
        &[("MESSAGES", r#"["hello", "hello"]"#)],
    ) else {
        return;
    };
    assert_eq!(r["status"], "RUNNING", "{r:#}");
    assert_eq!(strings(&r), ["hello from NaCl", "hello from NaCl"], "{r:#}");
    // The drop-in script with `web`'s config: the module beside the pexe, nothing converted
    // or taken from the conversion cache (either sets `source`; the folder has no converter).
    assert!(r["pexe2wasm"].is_object(), "{r:#}");
    assert_eq!(r["pexe2wasm"]["source"], Value::Null, "{r:#}");
    // Chrome's blocking messages fail at once and say why (a page cannot wait for a
    // worker), and the instance goes on.
    let blocking = r["blockingMessage"].as_str().unwrap_or_default();
    assert!(
        blocking.starts_with(
            "pexe2wasm: postMessageAndAwaitResponse (Pepper's blocking messages) cannot work"
        ),
        "{r:#}"
    );
}

both_browsers!(lpdevs: lpdevs_part2_in_chromium, lpdevs_part2_in_firefox);

fn stockfish(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let Some(r) = drive(browser, "stockfish-170317", "stockfish", &[("DEPTH", "12")]) else {
        return;
    };
    let lines = strings(&r);
    assert!(lines.iter().any(|l| l == "uciok"), "{r:#}");
    assert!(lines.iter().any(|l| l == "readyok"), "{r:#}");
    let best = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("bestmove"))
        .unwrap_or_else(|| panic!("{r:#}"));
    assert!(
        lines.iter().any(|l| l.starts_with("info depth 12 ")),
        "{r:#}"
    );
    let mv = best.split_whitespace().nth(1).unwrap();
    let reply: shakmaty::uci::UciMove = mv.parse().unwrap();
    assert!(
        reply.to_move(&shakmaty::Chess::default()).is_ok(),
        "{mv} is not legal in the start position"
    );
    eprintln!(
        "stockfish in {}: first message after {} ms of page time, go depth 12 took {} ms",
        browser.name(),
        r["firstMessageMs"],
        r["searchMs"]
    );
}

both_browsers!(stockfish: stockfish_plays_a_legal_move_in_chromium, stockfish_plays_a_legal_move_in_firefox);

fn webpenc(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let Some(r) = drive(browser, "webpenc", "webp", &[]) else {
        return;
    };
    let d = &r["decoded"];
    assert_eq!(d["width"], 64, "{r:#}");
    assert_eq!(d["height"], 48, "{r:#}");
    assert_eq!(d["id"], 1, "{r:#}");
    assert!(d["bytes"].as_u64().unwrap() > 20, "{r:#}");
    assert_eq!(
        d["differingBytes"], 0,
        "lossless WebP decodes to the same pixels: {r:#}"
    );
}

both_browsers!(webpenc: webpenc_output_decodes_in_chromium, webpenc_output_decodes_in_firefox);

/// Every Pepper plugin of the corpus reaches DidCreate in each browser with no uncaught
/// error; what each lacks is named on the element (`pexe2wasm.missing`). (glbench27's
/// nacl_io calls the file system interfaces unchecked before DidCreate: it needs them
/// offered. After DidCreate, glbench27 traps without its asset files, and bp2008 aborts
/// where a browser gives its worker no WebGL: headless Firefox, WebKitGTK.)
fn every_corpus_plugin_reaches_did_create(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let mut summary = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for app in [
        "astar-star",
        "bp2008-pnacl_player",
        "cptaffe-hello_tutorial",
        "ds923y-compress",
        "ds923y-decompress",
        "glbench27",
        "lpdevs-part2",
        "optionsplayers-hello_tutorial",
        "path-tracer",
        "shhnjk-url_loader",
        "stockfish-170317",
        "supernet-iguana",
        "webpenc",
    ] {
        let Some(r) = drive(browser, app, "starts", &[("SETTLE_MS", "500")]) else {
            return;
        };
        let info = &r["pexe2wasm"];
        if !info["didCreate"].is_boolean() {
            failed.push(format!("{app} never reached DidCreate: {r:#}"));
        }
        summary.push(format!(
            "{app}: DidCreate {} ; events {} ; missing {}",
            info["didCreate"], r["events"], info["missing"]
        ));
    }
    eprintln!("{}", summary.join("\n"));
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn every_corpus_plugin_reaches_did_create_in_chromium() {
    every_corpus_plugin_reaches_did_create(Browser::Chromium);
}

#[test]
fn every_corpus_plugin_reaches_did_create_in_firefox() {
    every_corpus_plugin_reaches_did_create(Browser::Firefox);
}

/// Our own plugin (fixtures/pepper/input-echo.pnaclasm) answers each input event with
/// type * 1000000 + x * 1000 + y + key code: a click and a key press reach
/// HandleInputEvent as Chrome sent them (RAWKEYDOWN, CHAR, KEYUP; Windows key codes).
fn input_echo(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let dir = scratch(&format!("input-{}", browser.name()));
    write_site(&pepper_fixture(&dir, "input-echo"), &dir);
    let r = run_page(
        browser,
        &dir,
        "sdk-page.html?nmf=input-echo.nmf",
        "input",
        &[],
    );
    let got: Vec<i64> = r["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_i64().unwrap())
        .collect();
    let at = 30 * 1000 + 40;
    // The pointer arrives (enter and moves, in the browser's order), then the click, then
    // the key: 'a' is key code 65 (VK_A), its text 97.
    let tail = [at, 1_000_000 + at, 6_000_065, 9_000_097, 8_000_065];
    assert!(got.ends_with(&tail), "{got:?}: {r:#}");
    assert!(
        got[..got.len() - tail.len()]
            .iter()
            .all(|&m| m == 3_000_000 + at || m == 2_000_000 + at),
        "{got:?}"
    );
}

both_browsers!(input_echo: input_events_reach_the_plugin_in_chromium, input_events_reach_the_plugin_in_firefox);

/// Our plugin that keeps each message it is given, without AddRef, and posts back (then
/// releases) the one it kept before (fixtures/pepper/keep-message.pnaclasm): HandleMessage
/// is given the message's reference, as Chrome's proxy gave it, so every kept message
/// comes back whole. A host that released the message after HandleMessage as well (as
/// ours did before c80be6b) freed it under the app: its slot was used again for the next
/// message, and what came back was something else. The command-line host's test is
/// pepper_messages.rs; web/tests/unit/messaging.test.js tests the delivery alone.
#[test]
fn handle_message_gives_the_app_its_reference_in_chromium() {
    let browser = Browser::Chromium;
    if !browser.ready() {
        return;
    }
    let dir = scratch("keep-message-chromium");
    let pexe = pepper_fixture(&dir, "keep-message");
    write_site(&pexe, &dir);
    let sends = serde_json::json!([
        "the first message, longer than any small-string optimisation: 0123456789abcdef",
        {"kept": "a dictionary's value, long enough to live on the heap as well", "n": 7, "list": [1, "two"]},
        "the third message, which comes back when the fourth arrives",
        "the last message, which the plugin still holds at the end",
    ]);
    let r = run_page(
        browser,
        &dir,
        "sdk-page.html?nmf=keep-message.nmf",
        "messages",
        &[("MESSAGES", &sends.to_string()), ("EXPECT", "3")],
    );
    assert_eq!(r["events"], serde_json::json!(["load"]), "{r:#}");
    assert_eq!(
        r["messages"],
        serde_json::json!(sends.as_array().unwrap()[..3]),
        "{r:#}"
    );
    assert_eq!(r["consoleErrors"], serde_json::json!([]), "{r:#}");
}

/// The same plugin asking for touch events too (its RequestInputEvents classes 3 -> 11):
/// a touch and its release on the canvas reach HandleInputEvent as TOUCHSTART (15) and
/// TOUCHEND (17). Chromium only: Firefox on a desktop has no TouchEvent.
#[test]
fn touch_events_reach_the_plugin_in_chromium() {
    let browser = Browser::Chromium;
    if !browser.ready() {
        return;
    }
    let dir = scratch("touch-chromium");
    let src = pexe2wasm_testkit::repo_root().join("fixtures/pepper/input-echo.pnaclasm");
    let echo = std::fs::read_to_string(src).unwrap();
    let touch = echo.replace(
        "%c1 = i32 3;                        // MOUSE and KEYBOARD",
        "%c1 = i32 11;                       // MOUSE, KEYBOARD and TOUCH",
    );
    assert_ne!(touch, echo, "the fixture's request changed");
    let asm = dir.join("touch-echo.pnaclasm");
    std::fs::write(&asm, touch).unwrap();
    let pexe = dir.join("touch-echo.pexe");
    assemble(&asm, &pexe);
    write_site(&pexe, &dir);
    let r = run_page(
        browser,
        &dir,
        "sdk-page.html?nmf=touch-echo.nmf",
        "touch",
        &[],
    );
    let got: Vec<i64> = r["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_i64().unwrap())
        .collect();
    // A touch event has no mouse position or key code: the plugin reads zeros for them.
    assert_eq!(got, [15_000_000, 17_000_000], "{r:#}");
}

/// The page keeps the thread pool full, not the module's main thread: our thread plugin's
/// main thread, blocked in HandleMessage, starts 6 threads and the first of them starts 6
/// more, with a pool of 2 thread workers (data-pexe2wasm-threads); all 12 live at once
/// (the plugin waits for all before it lets them end), and all end. When the instance
/// worker refilled the pool, the main thread got EAGAIN once the pool was empty, and a
/// module thread waited 10 s for each worker.
fn threads_blocked(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let dir = scratch(&format!("threads-blocked-{}", browser.name()));
    write_site(&pepper_fixture(&dir, "threads-blocked"), &dir);
    let r = run_page(
        browser,
        &dir,
        "sdk-page.html?nmf=threads-blocked.nmf&threads=2",
        "messages",
        &[("MESSAGES", "[6]"), ("EXPECT", "1")],
    );
    assert_eq!(r["events"], serde_json::json!(["load"]), "{r:#}");
    // done * 1000 + failed: 12 threads ran, none failed to start.
    assert_eq!(r["messages"], serde_json::json!([12000]), "{r:#}");
    let console = r["console"].to_string();
    assert!(!console.contains("could not be started"), "{r:#}");
}

both_browsers!(threads_blocked: threads_start_while_the_main_thread_is_blocked_in_chromium, threads_start_while_the_main_thread_is_blocked_in_firefox);

/// One IME event as ime-echo posts it: type, text, segment number, offsets, target,
/// selection (UTF-8 bytes, as Chrome gave them).
fn ime_event(ty: i64, text: &str, offsets: &[i64], target: i64, sel: (i64, i64)) -> Vec<Value> {
    let mut v = vec![ty.into(), text.into(), (offsets.len() as i64 - 1).into()];
    v.extend(offsets.iter().map(|&o| Value::from(o)));
    v.extend([target.into(), sel.0.into(), sel.1.into()]);
    v
}

/// The IME plugin (it asks for KEYBOARD and IME events) under compositions that Chrome
/// DevTools Protocol drives through the browser's IME path (run.mjs's `ime` scenario):
/// the events and their UTF-8 offsets as Chrome's renderer gave them to a plugin, the
/// app's PPB_TextInputController calls acting on the page (caret, surrounding text,
/// cancel, NONE turning IME off), and committed text as CHAR events once the app stops
/// asking for IME events. Chromium only: WebDriver BiDi (Firefox) cannot compose.
#[test]
fn ime_compositions_reach_the_plugin_in_chromium() {
    let browser = Browser::Chromium;
    if !browser.ready() {
        return;
    }
    let dir = scratch("ime-chromium");
    write_site(&pepper_fixture(&dir, "ime-echo"), &dir);
    let r = run_page(browser, &dir, "sdk-page.html?nmf=ime-echo.nmf", "ime", &[]);
    let (start, update, end, commit) = (11, 12, 13, 14);
    let empty = |ty| ime_event(ty, "", &[0], -1, (0, 0));
    // One kana (3 bytes): one segment, the caret after it.
    let kana = |ty, s| ime_event(ty, s, &[0, 3], -1, (3, 3));
    let mut want: Vec<Value> = vec![1100.into(), 1104.into()];
    // Composed, a clause selected (the target segment), committed. The browser sets the
    // composition to the committed text before ending it: one more UPDATE.
    want.extend(empty(start));
    want.extend(kana(update, "に"));
    want.extend(ime_event(update, "にほ", &[0, 6], -1, (6, 6)));
    want.extend(ime_event(update, "日本語", &[0, 3, 9], 0, (0, 3)));
    for ty in [update, end, commit] {
        want.extend(ime_event(ty, "日本語", &[0, 9], -1, (9, 9)));
    }
    // Emptied: an empty END.
    want.extend(empty(start));
    want.extend(kana(update, "か"));
    want.extend(empty(end));
    // Cancelled by the app (after its acknowledgement, which it posts first), then a new one.
    want.extend(empty(start));
    want.extend(kana(update, "さ"));
    want.push(1101.into());
    want.extend(empty(end));
    want.extend(empty(start));
    for ty in [update, update, end, commit] {
        want.extend(kana(ty, "し"));
    }
    // NONE: the composition and commit of "す" reach nothing. Then TEXT, IME events no
    // longer requested: commits are CHAR events (key code: the first UTF-16 unit).
    want.extend([1000, 1001, 1102].map(Value::from));
    for (key, ch) in [(0x306d, "ね"), (0x65e5, "日"), (0xd83d, "😀")] {
        want.extend([9.into(), key.into(), ch.into()]);
    }
    // A key: RAWKEYDOWN, CHAR 'a', KEYUP, and no second CHAR from the editable element.
    want.extend([6.into(), 9.into(), 97.into(), "a".into(), 8.into()]);
    assert_eq!(r["messages"], Value::Array(want), "{r:#}");

    let ime = &r["ime"];
    assert_eq!(ime["clicked"]["focused"], "text-input", "{ime:#}");
    // The caret the app gave ({10, 20, 2, 16}) and its surrounding text: "héllo", the
    // selection from after "h" to after "é" (bytes 1 and 3, UTF-16 units 1 and 2).
    assert_eq!(
        ime["surrounding"]["at"],
        serde_json::json!([10, 20, 16]),
        "{ime:#}"
    );
    let selected = serde_json::json!([1, 2, "forward"]);
    for step in ["surrounding", "committed", "cancelled"] {
        assert_eq!(ime[step]["value"], "héllo", "{step}: {ime:#}");
        assert_eq!(ime[step]["selection"], selected, "{step}: {ime:#}");
    }
    assert_eq!(ime["none"]["focused"], "canvas", "{ime:#}");
    assert_eq!(ime["text"]["focused"], "text-input", "{ime:#}");
    // An IME-unaware app's composition shows at the caret; hidden again after.
    assert_eq!(ime["composingUnaware"]["opacity"], "1", "{ime:#}");
    assert_eq!(ime["afterUnaware"]["opacity"], "0", "{ime:#}");
}

/// The non-blank fraction of a PNG's pixels and its RGBA bytes.
/// A screenshot's pixels as RGBA (Chromium writes RGB, Firefox RGBA).
fn png_pixels(path: &Path) -> Vec<u8> {
    let d = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut r = d.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        other => panic!("{}: a {other:?} screenshot", path.display()),
    }
}

/// An H.264 stream made here with ffmpeg (libx264, access unit delimiters, no B-frames):
/// five frames of `first` then five of `second`, 160x120 at 10 frames a second.
fn h264_stream(out: &Path, first: &str, second: &str) -> bool {
    let ok = Command::new("ffmpeg").arg("-version").output().is_ok();
    if !have("ffmpeg (Debian package ffmpeg)", ok) {
        return false;
    }
    let o = Command::new("ffmpeg")
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
        ])
        .arg(format!(
            "color=c={first}:s=160x120:r=10:d=0.5,format=yuv420p"
        ))
        .args(["-f", "lavfi", "-i"])
        .arg(format!(
            "color=c={second}:s=160x120:r=10:d=0.5,format=yuv420p"
        ))
        .args([
            "-filter_complex",
            "[0][1]concat=n=2:v=1",
            "-c:v",
            "libx264",
            "-profile:v",
            "high",
            "-x264-params",
            "aud=1:keyint=5:bframes=0",
            "-f",
            "h264",
        ])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "ffmpeg: {}", text(&o.stderr));
    true
}

/// bp2008's player (PPB_VideoDecoder + GLES2): the page sends an H.264 stream an access
/// unit at a time, as the player's page did; WebCodecs decodes it into textures of the
/// app's context, every frame is rendered, and the canvas shows the last frame's colour.
fn bp2008_plays(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let Some(dir) = site_for("bp2008-pnacl_player", browser, "video") else {
        return;
    };
    if !h264_stream(&dir.join("site/stream.h264"), "0xE02020", "0x2040E0") {
        return;
    }
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(format!("bp2008-{}.png", browser.name()));
    let _ = std::fs::remove_file(&shot);
    let r = run_page(
        browser,
        &dir,
        "sdk-page.html?nmf=bp2008-pnacl_player.nmf",
        "video",
        &[
            ("STREAM", "stream.h264"),
            ("SHOT1", shot.to_str().unwrap()),
            // Headless Firefox has no WebGL here (see run_page).
            ("HEADFUL", "1"),
        ],
    );
    assert_eq!(r["events"], serde_json::json!(["load"]), "{r:#}");
    assert_eq!(r["sent"], 10, "{r:#}");
    let msgs = strings(&r);
    assert!(msgs.iter().any(|m| m == "decoder initialized"), "{msgs:?}");
    assert!(
        msgs.iter()
            .any(|m| m.starts_with("vr ") && m.contains("\"w\":160,\"h\":120")),
        "the player saw no 160x120 picture: {msgs:?}"
    );
    // Every frame rendered, in order, none dropped ("df").
    let rendered: Vec<&String> = msgs.iter().filter(|m| m.starts_with("rf ")).collect();
    assert_eq!(rendered.len(), 10, "{msgs:?}");
    for (k, m) in rendered.iter().enumerate() {
        assert!(m.contains(&format!("\"t\":{}", k * 100)), "frame {k}: {m}");
    }
    assert!(!msgs.iter().any(|m| m.starts_with("df ")), "{msgs:?}");
    // The last frame is the second colour (H.264's YUV round trip moves it a little).
    let px = png_pixels(&shot);
    let mid = px.len() / 2 / 4 * 4;
    let (red, green, blue) = (px[mid] as i32, px[mid + 1] as i32, px[mid + 2] as i32);
    assert!(
        (red - 0x20).abs() < 24 && (green - 0x40).abs() < 24 && (blue - 0xE0).abs() < 24,
        "the canvas shows rgb({red}, {green}, {blue}), not the last frame's colour"
    );
}

#[test]
fn bp2008_plays_h264_through_webcodecs_in_chromium() {
    bp2008_plays(Browser::Chromium);
}

#[test]
fn bp2008_plays_h264_through_webcodecs_in_firefox() {
    bp2008_plays(Browser::Firefox);
}

/// path-tracer draws with Graphics2D/ImageData: its canvas is not blank and changes as
/// the picture converges.
fn path_tracer(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let Some(dir) = site_for("path-tracer", browser, "canvas") else {
        return;
    };
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let (s1, s2) = (
        shots.join(format!("path-tracer-{}-1.png", browser.name())),
        shots.join(format!("path-tracer-{}-2.png", browser.name())),
    );
    let r = run_page(
        browser,
        &dir,
        "sdk-page.html?nmf=path-tracer.nmf",
        "canvas",
        &[
            ("SHOT1", s1.to_str().unwrap()),
            ("SHOT2", s2.to_str().unwrap()),
        ],
    );
    assert_eq!(r["events"], serde_json::json!(["load"]), "{r:#}");
    let (a, b) = (png_pixels(&s1), png_pixels(&s2));
    assert_eq!(a.len(), b.len());
    // Not blank: many distinct colours (a blank or one-colour canvas has one).
    let colours: std::collections::HashSet<&[u8]> = a.chunks(4).collect();
    assert!(
        colours.len() > 1000,
        "{} colours in the first frame",
        colours.len()
    );
    let changed = a.chunks(4).zip(b.chunks(4)).filter(|(x, y)| x != y).count();
    assert!(
        changed > a.len() / 4 / 10,
        "only {changed} pixels changed between frames"
    );
}

#[test]
fn path_tracer_draws_and_refines_in_chromium() {
    path_tracer(Browser::Chromium);
}

#[test]
fn path_tracer_draws_and_refines_in_firefox() {
    path_tracer(Browser::Firefox);
}

/// astar-star's page sent JSON commands as strings; it answers with the path (as in
/// pepper_real.rs), and "error" for what is not JSON.
fn astar(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let sends = serde_json::json!([
        r#"{"command":"setNodes","nodes":[{"x":0,"y":0},{"x":1,"y":0},{"x":2,"y":0},{"x":1,"y":5}]}"#,
        r#"{"command":"setConnections","nodes":[[1,3],[0,2],[1],[0,2]]}"#,
        r#"{"command":"solve","nodes":[0,2]}"#,
        "not json",
    ])
    .to_string();
    let Some(r) = drive(
        browser,
        "astar-star",
        "messages",
        &[("MESSAGES", &sends), ("EXPECT", "2")],
    ) else {
        return;
    };
    assert_eq!(strings(&r), [r#"{"array":[0, 1, 2]}"#, "error"], "{r:#}");
}

both_browsers!(astar: astar_star_solves_a_path_in_chromium, astar_star_solves_a_path_in_firefox);

/// Runs a harness page (`page`, a path with its query) on our input-echo module and checks
/// its report: no error, at least `min` checks, none failed. `what` names the run.
fn harness(browser: Browser, dir: &Path, page: &str, min: usize, env: &[(&str, &str)], what: &str) {
    let r = run_page(browser, dir, page, "harness", env);
    let res = &r["result"];
    assert_eq!(res["error"], Value::Null, "{what}: {r:#}");
    let checks = res["checks"].as_array().unwrap();
    assert!(
        checks.len() >= min,
        "{what}: {} checks: {r:#}",
        checks.len()
    );
    let failed: Vec<&Value> = checks.iter().filter(|c| c["ok"] != true).collect();
    assert!(failed.is_empty(), "{what}: {failed:#?}");
}

/// The file system interfaces called one by one from a module thread with blocking
/// callbacks, against the real IO worker (web/tests/browser/pages/harness.html, files-harness-worker.js),
/// and Chrome's callback rules checked from the main thread and a thread without a loop.
fn files(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let dir = scratch(&format!("files-{}", browser.name()));
    write_site(&pepper_fixture(&dir, "input-echo"), &dir);
    harness(
        browser,
        &dir,
        "harness.html?worker=files-harness-worker.js&wasm=input-echo.wasm",
        29,
        &[],
        "files",
    );
}

both_browsers!(files: file_systems_answer_as_chrome_did_in_chromium, file_systems_answer_as_chrome_did_in_firefox);

/// Chrome's sandboxed File System API (`webkitRequestFileSystem`, `webkitPersistentStorage`)
/// as NaCl pages and Chrome apps used it: compat/filesystem.js in every browser (over
/// Chromium's own, so that the module shares the files; OPFS, or IndexedDB where there is
/// none), across a reload
/// (web/tests/browser/pages/fs-compat.html).
fn fs_compat(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let dir = scratch(&format!("fs-compat-{}", browser.name()));
    write_site(&pepper_fixture(&dir, "input-echo"), &dir);
    harness(browser, &dir, "fs-compat.html", 26, &[], "fs-compat");
    if browser == Browser::Firefox {
        // The IndexedDB store WebKitGTK uses, and the worker's writer older Safari needs.
        harness(
            browser,
            &dir,
            "fs-compat.html?backend=indexeddb",
            26,
            &[],
            "fs-compat indexeddb",
        );
        harness(
            browser,
            &dir,
            "fs-compat.html?writer=worker",
            26,
            &[],
            "fs-compat worker",
        );
    }
}

three_browsers!(fs_compat: chrome_file_system_api_in_chromium, chrome_file_system_api_in_firefox, chrome_file_system_api_in_webkit);

/// Graphics3D and OpenGLES2 called one by one on a real WebGL 2 context
/// (web/tests/browser/pages/harness.html, gl-harness-worker.js): shaders, programs, buffers, client-side
/// arrays, textures (BGRA swizzled), VAOs, instancing, MapSub, errors, names and threads,
/// with pixels read back as the oracle.
fn gl(browser: Browser) {
    if !browser.ready()
        || (browser == Browser::Firefox
            && !have(
                "xvfb-run (Debian package xvfb)",
                Command::new("xvfb-run").arg("--help").output().is_ok(),
            ))
    {
        return;
    }
    let dir = scratch(&format!("gl-{}", browser.name()));
    write_site(&pepper_fixture(&dir, "input-echo"), &dir);
    let page = "harness.html?worker=gl-harness-worker.js&wasm=input-echo.wasm";
    harness(browser, &dir, page, 65, &[("HEADFUL", "1")], "gl");
}

both_browsers!(gl: gl_calls_draw_on_webgl_in_chromium, gl_calls_draw_on_webgl_in_firefox);

/// ds923y's WebSocket plugins against the loopback server of pepper_ws.rs (their
/// hard-coded ws://localhost:8081/ mapped to it by `web --url-map`): compress uploads the
/// message's compressed size from the main thread's callbacks; decompress opens 75 sockets
/// at load and, on a file name, a thread of its own sends it and blocks in ReceiveMessage
/// for the file, which it decompresses. The same round trip as on the command line.
fn websocket(browser: Browser) {
    use super::pepper_ws::{has_repeated_trigram, lzo1x_literals, start_server};
    if !browser.ready()
        || common::real_pexe("ds923y-compress.pexe").is_none()
        || common::real_pexe("ds923y-decompress.pexe").is_none()
    {
        return;
    }
    let (port, seen) = start_server();
    let map = format!("ws://localhost:8081/=ws://127.0.0.1:{port}/");
    let message = "Pepper in a browser: WebSockets from the IO worker, 0123456789!";
    assert!(!has_repeated_trigram(message.as_bytes()));
    let site = |app: &str| {
        let dir = scratch(&format!("ws-{app}-{}", browser.name()));
        let pexe = common::real_corpus_dir().join(format!("{app}.pexe"));
        write_site_with(&pexe, &dir, &["--url-map", &map]);
        dir
    };
    let sends = serde_json::json!([message]).to_string();
    let dir = site("ds923y-compress");
    let r = run_page(
        browser,
        &dir,
        "sdk-page.html?nmf=ds923y-compress.nmf",
        "messages",
        &[("MESSAGES", &sends), ("EXPECT", "3")],
    );
    let name = "upload-0.lzo";
    assert_eq!(
        strings(&r),
        ["compressing", "done compressing", name],
        "{r:#}"
    );
    let lzo = lzo1x_literals(message.as_bytes());
    {
        let mut s = seen.lock().unwrap();
        assert_eq!(s.uploads.len(), 1, "{r:#}");
        assert_eq!(
            s.uploads[0].len(),
            lzo.len(),
            "the LZO1X-1 size of the message"
        );
        s.files.insert(name.to_string(), lzo);
    }
    let sends = serde_json::json!([name]).to_string();
    let dir = site("ds923y-decompress");
    let r = run_page(
        browser,
        &dir,
        "sdk-page.html?nmf=ds923y-decompress.nmf",
        "messages",
        &[
            ("MESSAGES", &sends),
            ("EXPECT", "1"),
            ("SEND_AFTER_MS", "2000"),
        ],
    );
    assert_eq!(strings(&r), [format!("{name}:OK:{message}")], "{r:#}");
    // Its sockets reached the server; not always all 75 in the few seconds the page is
    // open: browsers open one connection to a host at a time (RFC 6455 4.1), and Chromium
    // throttles the rest, as it did for NaCl.
    let s = seen.lock().unwrap();
    let opened = s.connections.get("/prj2/websocket/a").copied().unwrap_or(0);
    assert!((1..=76).contains(&opened), "{opened} connections: {r:#}");
    assert_eq!(s.connections.get("/prj2/websocket/b"), Some(&1));
}

both_browsers!(websocket: ds923y_websockets_round_trip_in_chromium, ds923y_websockets_round_trip_in_firefox);

/// shhnjk's URLLoader proof of concept (SOURCES.md, "Safety notes"): with `web --url-map`
/// its two hard-coded https hosts are loopback servers of the test (answering with CORS
/// headers, as another origin must for a request with credentials), the secret is read and "leaked" to the second; without
/// a map and with --refuse-unmapped its loads of another origin are refused (NOACCESS) and
/// nothing is fetched.
fn url_loader(browser: Browser) {
    use pexe2wasm_testkit::http::{Reply, TestServer};
    const SECRET: &str = "TOPSECRET-42";
    if !browser.ready() || common::real_pexe("shhnjk-url_loader.pexe").is_none() {
        return;
    }
    // The app asks for credentials, so CORS wants its origin named, not "*".
    let cors = |q: &pexe2wasm_testkit::http::Request, r: Reply| {
        r.with_header(
            "Access-Control-Allow-Origin",
            q.header("Origin").unwrap_or("null"),
        )
        .with_header("Access-Control-Allow-Credentials", "true")
    };
    let site = TestServer::start(move |q| {
        if q.target == "/secret.html" {
            cors(q, Reply::text(SECRET))
        } else {
            cors(q, Reply::status(404, "Not Found"))
        }
    });
    let attacker = TestServer::start(move |q| cors(q, Reply::text("test")));
    let pexe = common::real_corpus_dir().join("shhnjk-url_loader.pexe");
    let logged = |r: &Value, what: &str| {
        r["console"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l.as_str().unwrap_or_default().contains(what))
            .count()
    };

    let dir = scratch(&format!("url-{}", browser.name()));
    let maps = [
        format!("https://test.shhnjk.com/={}", site.url("/")),
        format!("https://attack.shhnjk.com/={}", attacker.url("/")),
    ];
    write_site_with(&pexe, &dir, &["--url-map", &maps[0], "--url-map", &maps[1]]);
    let r = run_page(
        browser,
        &dir,
        "sdk-page.html?nmf=shhnjk-url_loader.nmf",
        "starts",
        &[("SETTLE_MS", "3000")],
    );
    let asked = site.wait_for(1, std::time::Duration::from_secs(5));
    assert_eq!(asked.len(), 1, "{asked:?} {r:#}");
    assert_eq!(
        (asked[0].method.as_str(), asked[0].target.as_str()),
        ("GET", "/secret.html")
    );
    let leaked = attacker.wait_for(1, std::time::Duration::from_secs(5));
    assert_eq!(leaked.len(), 1, "{r:#}");
    assert_eq!(
        leaked[0].target,
        format!("/?leak={SECRET}"),
        "the body it read"
    );
    assert_eq!(
        logged(&r, "URLLoaderHandler::ReportResult(Ok)."),
        2,
        "{r:#}"
    );

    // Unmapped (every test site has --refuse-unmapped): the app allows cross-origin
    // requests, and a page without that flag would try the real host.
    let dir = scratch(&format!("url-unmapped-{}", browser.name()));
    write_site(&pexe, &dir);
    let r = run_page(
        browser,
        &dir,
        "sdk-page.html?nmf=shhnjk-url_loader.nmf",
        "starts",
        &[("SETTLE_MS", "2000")],
    );
    assert_eq!(
        logged(&r, "URLLoader refused https://test.shhnjk.com/secret.html"),
        1,
        "{r:#}"
    );
    assert_eq!(logged(&r, "ReportResult(Err)"), 1, "{r:#}");
    assert_eq!(site.requests().len(), 1, "nothing more was fetched");
}

both_browsers!(url_loader: shhnjk_url_loader_fetches_through_the_url_map_in_chromium, shhnjk_url_loader_fetches_through_the_url_map_in_firefox);

/// LOCALPERSISTENT across visits: a file written and flushed on one visit (the files
/// harness, `?persist=write`) is read back on the next (`?persist=read`), in a new browser
/// on the same profile: the IO worker's file system is the page's PERSISTENT one (OPFS).
fn persistence(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let dir = scratch(&format!("persist-{}", browser.name()));
    write_site(&pepper_fixture(&dir, "input-echo"), &dir);
    // IndexedDB is per origin: both visits on the same port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    for mode in ["write", "read"] {
        let page = format!(
            "harness.html?worker=files-harness-worker.js&wasm=input-echo.wasm&persist={mode}"
        );
        harness(browser, &dir, &page, 4, &[("LISTEN", &listen)], mode);
    }
}

both_browsers!(persistence: persistent_files_outlive_the_visit_in_chromium, persistent_files_outlive_the_visit_in_firefox);

/// The page's side of the cursor, pointer lock and gamepads (web/src/page-services.js),
/// driven alone by web/tests/browser/pages/page-harness.html: cursor types and a custom
/// cursor as CSS, a test gamepad sampled into shared memory and read back as the module
/// reads PP_GamepadsSampleData, and LockMouse answered after a click.
fn page_services(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let dir = scratch(&format!("page-{}", browser.name()));
    write_site(&pepper_fixture(&dir, "input-echo"), &dir);
    harness(browser, &dir, "page-harness.html", 22, &[], "page services");
}

both_browsers!(page_services: page_services_answer_the_module_in_chromium, page_services_answer_the_module_in_firefox);

// --- Safari's engine -------------------------------------------------------------------------
// WebKitGTK (MiniBrowser through WebKitWebDriver, under xvfb-run): the apps and harnesses
// the other two browsers run, each through the same scenario function.

/// Tests of scenarios in WebKitGTK: `scenario: test_name` runs `scenario(Browser::WebKit)`.
macro_rules! webkit_tests {
    ($($f:ident: $name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $f(Browser::WebKit);
            }
        )*
    };
}

webkit_tests! {
    cptaffe: cptaffe_hello_tutorial_in_webkit,
    lpdevs: lpdevs_part2_in_webkit,
    stockfish: stockfish_plays_a_legal_move_in_webkit,
    webpenc: webpenc_output_decodes_in_webkit,
    every_corpus_plugin_reaches_did_create: every_corpus_plugin_reaches_did_create_in_webkit,
    input_echo: input_events_reach_the_plugin_in_webkit,
    astar: astar_star_solves_a_path_in_webkit,
    files: file_systems_answer_as_chrome_did_in_webkit,
    websocket: ds923y_websockets_round_trip_in_webkit,
    url_loader: shhnjk_url_loader_fetches_through_the_url_map_in_webkit,
    page_services: page_services_answer_the_module_in_webkit,
    path_tracer: path_tracer_draws_and_refines_in_webkit,
}

/// WebKitGTK 2.50 gives no WebGL context to an OffscreenCanvas in a worker (its
/// AllowWebGLInWorkers feature is off, and turning it on still gives none without a GPU
/// process; Safari has it from version 17), so GL cannot run there: the gl harness and
/// bp2008's playback are not tried. What is tested is that the user learns why: the console
/// names the missing WebGL, and bp2008, which asserts it has a context, ends with a crash
/// event (its own abort) rather than a hang.
#[test]
fn bp2008_says_why_it_cannot_play_without_webgl_in_webkit() {
    let browser = Browser::WebKit;
    if !browser.ready() {
        return;
    }
    let Some(r) = drive(browser, "bp2008-pnacl_player", "starts", &[]) else {
        return;
    };
    let console = r["console"].to_string();
    assert!(
        console.contains("no WebGL 2 context to an OffscreenCanvas in a worker"),
        "{r:#}"
    );
    assert!(
        console.contains("pnacl_player.cpp"),
        "the app's assertion: {r:#}"
    );
    // The abort comes in the first DidChangeView, before the load event.
    let events = r["events"].as_array().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.as_str().unwrap().starts_with("crash:")),
        "{r:#}"
    );
    assert_eq!(r["status"], "CRASHED", "{r:#}");
}
