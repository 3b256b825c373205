//! `pexe2wasm host --npm`: the npm package (docs/NPM.md). `npm pack` packs exactly the
//! files written; its declarations (index.d.ts) type a typed use of the API and reject a
//! wrong one; and in Chromium and Firefox a plain page (no <embed> in its HTML) imports
//! `load` from the package, runs our Pepper plugin from its .nmf with its pexe converted in
//! the browser, exchanges messages both ways (also with an <embed> the page made and gave
//! to `load`), and sees the `error` event, with the CLI's positioned text in lastError, for
//! a broken .pexe given directly.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::cmd::{have, pexe2wasm, text};
use crate::host::{ci, cli_convert};
use crate::web::{pepper_fixture, scratch, web_dir, Browser};
use serde_json::{json, Value};

/// `pexe2wasm host --npm -o DIR`; false (after a SKIPPED line) when this pexe2wasm was
/// built without the browser converter (no wasm32 target), which fails under CI.
fn write_package(dir: &Path) -> bool {
    let o = pexe2wasm(&["host", "--npm", "-o", dir.to_str().unwrap()]);
    let e = text(&o.stderr);
    if !o.status.success() && e.contains("built without the browser converter") && !ci() {
        eprintln!("SKIPPED: {e}");
        return false;
    }
    assert!(o.status.success(), "{e}");
    assert!(text(&o.stdout).contains("npm pack"), "{}", text(&o.stdout));
    true
}

/// The files the package must hold: its own, and the host folder's.
fn expected_files() -> BTreeSet<String> {
    let mut want: BTreeSet<String> = [
        "package.json",
        "README.md",
        "index.js",
        "index.d.ts",
        "pexe2wasm.js",
        "pexe2wasm-isolation.js",
        "pexe2wasm/convert/converter.wasm",
        "pexe2wasm/convert/converter.json",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    for (file, _) in pexe2wasm_webhost::HOST_FILES {
        want.insert(format!("pexe2wasm/{file}"));
    }
    want
}

/// tsc (web/node_modules) over the project in `dir`; its output and whether it passed.
fn tsc(dir: &Path) -> (bool, String) {
    let o = Command::new("node")
        .arg(web_dir().join("node_modules/typescript/bin/tsc"))
        .args(["-p", "."])
        .current_dir(dir)
        .output()
        .unwrap();
    (
        o.status.success(),
        format!("{}{}", text(&o.stdout), text(&o.stderr)),
    )
}

/// A typed use of the API, as a TypeScript project would write it.
const TYPED_USE: &str = r#"
import { load, type Instance, type LoadOptions } from "pexe2wasm";

const options: LoadOptions = {
  baseUrl: "/static/pexe2wasm/",
  container: document.body,
  width: 640,
  height: 480,
  attributes: { "data-level": 3 },
  urlMap: { "ws://localhost:8081/": "ws://127.0.0.1:9000/" },
  refuseUnmapped: true,
  threads: 8,
  preconverted: "auto",
};
const app: Instance = load("/app.nmf", options);
app.addEventListener("message", (e: MessageEvent) => console.log(e.data));
app.addEventListener("progress", (e) => console.log(e.loaded, e.total));
app.addEventListener("error", () => console.error(app.lastError.length, app.readyState));
app.addEventListener("crash", () => console.error(app.exitStatus));
app.postMessage({ any: ["structured", "clone"] });
const source: "converted" | "cache" | undefined = app.source;
const el: HTMLEmbedElement | HTMLObjectElement = app.element;
app.ready.then((i: Instance) => i.destroy(), (e: Error) => console.error(e.message, source, el));
const embed = document.querySelector("embed");
if (embed) load(embed).destroy();
load(new URL("https://example.org/app.pexe"));
"#;

/// Uses the declarations reject (each line one error).
const WRONG_USES: &[(&str, &str)] = &[
    ("load(42);", "TS2345"),
    ("load(\"/a.nmf\", { threads: \"8\" });", "TS2322"),
    ("const n: number = load(\"/a.nmf\").lastError;", "TS2322"),
    (
        "load(\"/a.nmf\").addEventListener(\"mesage\", () => {});",
        "TS2345",
    ),
    ("load(\"/a.nmf\").postMessage();", "TS2554"),
];

const TSCONFIG: &str = r#"{
  "compilerOptions": {
    "strict": true, "noEmit": true, "target": "es2022", "module": "es2022",
    "moduleResolution": "bundler", "lib": ["es2022", "dom"], "types": []
  },
  "include": ["*.ts"]
}"#;

#[test]
fn npm_package_packs_its_files_and_its_declarations_type_the_api() {
    if !have("npm") || !have("node") {
        assert!(!ci(), "npm or node is missing under CI");
        return;
    }
    let dir = scratch("npm-package");
    let pkg = dir.join("pkg");
    if !write_package(&pkg) {
        return;
    }
    let raw = std::fs::read_to_string(pkg.join("package.json")).unwrap();
    let package: Value = serde_json::from_str(&raw).unwrap();
    // In `exports` the first matching condition wins: "types" must come first.
    let at = |s: &str| raw.find(s).unwrap_or_else(|| panic!("{s} in {raw}"));
    assert!(
        at(r#""types": "./index.d.ts""#) < at(r#""default": "./index.js""#),
        "{raw}"
    );
    assert_eq!(package["name"], "pexe2wasm");
    assert_eq!(package["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(package["exports"]["."]["types"], "./index.d.ts");
    for (file, body) in pexe2wasm_webhost::NPM_FILES {
        assert_eq!(&std::fs::read_to_string(pkg.join(file)).unwrap(), body);
    }
    // Written again over itself: fine.
    assert!(write_package(&pkg));

    // npm pack, offline: the tarball holds exactly the files written.
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let o = Command::new("npm")
        .args(["pack", "--offline", "--ignore-scripts", "--json"])
        .arg("--pack-destination")
        .arg(&out)
        .current_dir(&pkg)
        .env("npm_config_cache", dir.join("npm-cache"))
        .env("npm_config_update_notifier", "false")
        .output()
        .unwrap();
    assert!(o.status.success(), "npm pack: {}", text(&o.stderr));
    let packed: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o.stdout)));
    let files: BTreeSet<String> = packed[0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(files, expected_files());
    let tarball = out.join(packed[0]["filename"].as_str().unwrap());
    assert_eq!(
        tarball.file_name().unwrap().to_str().unwrap(),
        format!("pexe2wasm-{}.tgz", env!("CARGO_PKG_VERSION"))
    );
    assert!(std::fs::metadata(&tarball).unwrap().len() > 100_000);

    // The declarations, found by the package's name through its package.json.
    let ts = dir.join("ts");
    std::fs::create_dir_all(ts.join("node_modules")).unwrap();
    std::os::unix::fs::symlink(&pkg, ts.join("node_modules/pexe2wasm")).unwrap();
    std::fs::write(ts.join("tsconfig.json"), TSCONFIG).unwrap();
    std::fs::write(ts.join("use.ts"), TYPED_USE).unwrap();
    let (ok, said) = tsc(&ts);
    assert!(ok, "tsc on the typed use: {said}");
    // Each wrong use fails with its error: one file each, checked in one run of tsc.
    for (i, (line, _)) in WRONG_USES.iter().enumerate() {
        std::fs::write(
            ts.join(format!("wrong{i}.ts")),
            format!("import {{ load }} from \"pexe2wasm\";\n{line}\n"),
        )
        .unwrap();
    }
    let (ok, said) = tsc(&ts);
    assert!(!ok, "tsc passed the wrong uses: {said}");
    for (i, (line, code)) in WRONG_USES.iter().enumerate() {
        let mine: Vec<&str> = said
            .lines()
            .filter(|l| l.starts_with(&format!("wrong{i}.ts(2,")))
            .collect();
        assert!(
            mine.len() == 1 && mine[0].contains(code),
            "{line}: want {code}: {said}"
        );
    }
    assert_eq!(said.matches("error TS").count(), WRONG_USES.len(), "{said}");
}

/// The page: no <embed> in its HTML; `load` from the package runs the plugin
/// (keep-message, which posts back each message when the next arrives) and a broken pexe.
const PAGE: &str = r#"<!doctype html><html><head><title>npm</title></head><body>
<div id="slot"></div><div id="slot2"></div>
<script type="module">
import { load } from "/pkg/index.js";
window.got = [];
window.events = [];
const app = load("keep-message.nmf", { width: 10, height: 10, container: document.getElementById("slot") });
for (const t of ["loadstart", "load", "error", "crash"]) app.addEventListener(t, () => events.push(t));
app.addEventListener("message", (e) => got.push(e.data));
app.postMessage("one, sent before the module loaded");
app.ready.then(() => {
  app.postMessage({ two: [2, "two"] });
  app.postMessage("three, kept by the plugin");
});
window.app = app;
// An element the page made, given to load: its options hold (the host's own scan, which
// would run it as a pre-converted module, leaves it alone).
window.got2 = [];
const existing = document.createElement("embed");
for (const [k, v] of [["type", "application/x-pnacl"], ["src", "keep-message.nmf"], ["width", "10"], ["height", "10"]]) existing.setAttribute(k, v);
document.getElementById("slot2").append(existing);
const app2 = load(existing);
app2.addEventListener("message", (e) => got2.push(e.data));
app2.postMessage("a");
app2.postMessage("b");
window.app2 = app2;
window.badError = null;
window.badRejected = null;
const bad = load("bad.pexe", { width: 10, height: 10 });
bad.addEventListener("error", () => { window.badError = bad.lastError; });
bad.ready.catch((e) => { window.badRejected = e.message; });
</script>
</body></html>"#;

fn npm_load(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let root = scratch(&format!("npm-load-{}", browser.name()));
    if !write_package(&root.join("pkg")) {
        return;
    }
    let pexe = pepper_fixture(&root, "keep-message");
    std::fs::write(
        root.join("keep-message.nmf"),
        r#"{"program": {"portable": {"pnacl-translate": {"url": "keep-message.pexe"}}}}"#,
    )
    .unwrap();
    let bytes = std::fs::read(&pexe).unwrap();
    std::fs::write(root.join("bad.pexe"), &bytes[..bytes.len() / 2]).unwrap();
    let want = cli_convert(&root.join("bad.pexe"), &root.join("bad.wasm"))
        .expect_err("half a pexe does not convert");
    std::fs::write(root.join("index.html"), PAGE).unwrap();
    let steps = json!([
        {"wait": "window.got.length >= 2", "ms": 120000},
        {"eval": "JSON.stringify(window.got) === JSON.stringify(['one, sent before the module loaded', {two: [2, 'two']}])"},
        {"eval": "window.events.join() === 'loadstart,load' && app.lastError === '' && app.readyState === 4 && app.source === 'converted'"},
        {"eval": "!!document.querySelector('#slot embed[type=\"application/x-pnacl\"]') && !!document.querySelector('#slot canvas')"},
        {"wait": "window.got2.length >= 1", "ms": 120000},
        {"eval": "JSON.stringify(window.got2) === '[\"a\"]' && app2.lastError === '' && ['converted', 'cache'].includes(app2.source) && app2.element.isConnected"},
        {"wait": "window.badError !== null && window.badRejected !== null", "ms": 120000},
        {"eval": format!("window.badError === {want:?} && window.badRejected === {want:?}")},
        {"eval": "(app.destroy(), !document.querySelector('#slot embed') && !document.querySelector('#slot canvas'))"},
    ]);
    let server = crate::host::StaticServer::start(&root);
    let url = format!("{}/index.html", server.base);
    let report = crate::host::run_steps(browser, &url, &steps, &root.join("profile"), &[]);
    crate::host::assert_steps_true(&report, &steps, &format!("npm load in {}", browser.name()));
}

both_browsers!(npm_load: npm_load_runs_a_module_in_chromium, npm_load_runs_a_module_in_firefox);
