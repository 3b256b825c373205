//! `pexe2wasm web INPUT` on the real sites, Chrome apps and extension of
//! `../shared/fixtures/sites` (SOURCES.md there), untouched: each written as a site,
//! its modules checked against `convert`, its input unchanged, then opened in Chromium,
//! Firefox and WebKitGTK as its author opened it, with the behaviour SOURCES.md names.

use std::path::{Path, PathBuf};

use pexe2wasm_testkit::corpus;
use serde_json::{json, Value};

use crate::cmd::fails_saying;
use crate::web::{bin, files_under, run_page, scratch, text, Browser};

/// Every file under `dir` with its bytes, to check that `web` changed nothing.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files_under(dir)
        .into_iter()
        .map(|p| {
            let b = std::fs::read(dir.join(&p)).unwrap();
            (p, b)
        })
        .collect()
}

/// `pexe2wasm web SITE -o DIR/site` (plus `args`): the site folder and web's stdout.
fn web_site(input: &Path, dir: &Path, args: &[&str]) -> (PathBuf, String) {
    let out = dir.join("site");
    // A manifest.json or a page stands for its folder.
    let tree = if input.is_file() {
        input.parent().unwrap()
    } else {
        input
    };
    let before = snapshot(tree);
    let o = bin()
        .arg("web")
        .arg(input)
        .arg("-o")
        .arg(&out)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(snapshot(tree) == before, "web changed its input");
    (out, text(&o.stdout))
}

fn report_of(site: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(site.join("pexe2wasm-site.json")).unwrap()).unwrap()
}

#[test]
fn every_real_site_becomes_a_site_with_valid_modules_equal_to_convert() {
    let Some(_) = corpus::real_site("astar") else {
        return;
    };
    let dir = scratch("sites-all");
    let mut names: Vec<String> = std::fs::read_dir(corpus::sites_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir() && e.file_name() != "LICENSES")
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 11, "{names:?}");
    for name in &names {
        let input = corpus::sites_dir().join(name);
        let (site, stdout) = web_site(&input, &dir.join(name), &[]);
        let r = report_of(&site);
        assert_eq!(r["runs"], true, "{name}: {r:#}");
        // Every input file is there, byte for byte, but pages, which gained the scripts.
        for f in files_under(&input) {
            let got = std::fs::read(site.join(&f)).unwrap();
            let want = std::fs::read(input.join(&f)).unwrap();
            let ext = f.extension().and_then(|e| e.to_str()).unwrap_or_default();
            if ext == "html" || ext == "htm" {
                let page = String::from_utf8_lossy(&got);
                assert!(
                    page.contains("pexe2wasm.js\"></script>")
                        && page.contains("\"preconverted\":true"),
                    "{name}/{}",
                    f.display()
                );
                assert!(got.len() > want.len());
            } else {
                assert!(got == want, "{name}/{} changed", f.display());
            }
        }
        // Each module is valid and exactly what `convert` makes of its pexe.
        let modules = r["modules"].as_array().unwrap();
        assert!(!modules.is_empty(), "{name}: {stdout}");
        for m in modules {
            let pexe = input.join(m["pexe"].as_str().unwrap());
            let wasm = std::fs::read(site.join(m["module"].as_str().unwrap())).unwrap();
            wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
                .validate_all(&wasm)
                .unwrap_or_else(|e| panic!("{name}: {}: {e}", pexe.display()));
            let conv = dir.join("c.wasm");
            let o = bin()
                .arg("convert")
                .arg(&pexe)
                .arg("-o")
                .arg(&conv)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", text(&o.stderr));
            assert!(
                std::fs::read(&conv).unwrap() == wasm,
                "{name}: differs from convert"
            );
        }
        assert!(stdout.contains("open "), "{stdout}");
    }
}

#[test]
fn chrome_packages_are_known_and_launch_from_the_index() {
    let Some(iguana) = corpus::real_site("supernet-iguana-app") else {
        return;
    };
    let dir = scratch("sites-packages");
    // The app's folder, and its manifest.json, give the same site.
    let (site, stdout) = web_site(&iguana.join("iguana"), &dir.join("dir"), &[]);
    assert!(
        stdout.contains("a Chrome app at the root: iguana 44.1.2"),
        "{stdout}"
    );
    let r = report_of(&site);
    assert_eq!(r["start"], "pexe2wasm-launch.html");
    assert_eq!(r["icon"], "icon128.png");
    let summary = r["summary"].as_str().unwrap();
    assert!(
        summary.contains("chrome.sockets") && summary.contains("chrome.system.network"),
        "{summary}"
    );
    // iguana has its own index.html (its window page): kept, with the app's scripts.
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(
        index.contains("<script src=\"pexe2wasm/chrome/apis.js\" data-package=\"\"></script>"),
        "{index}"
    );
    let (site2, _) = web_site(
        &iguana.join("iguana/manifest.json"),
        &dir.join("manifest"),
        &[],
    );
    assert_eq!(files_under(&site), files_under(&site2));

    let Some(ext) = corpus::real_site("optionsplayers-extension") else {
        return;
    };
    let (site, stdout) = web_site(&ext, &dir.join("ext"), &[]);
    assert!(
        stdout.contains("a Chrome extension at the root"),
        "{stdout}"
    );
    let r = report_of(&site);
    assert_eq!(r["packages"][0]["start_page"], "popup.html");
    // No index.html of its own: the generated one goes to the launcher.
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains("url=pexe2wasm-launch.html"), "{index}");
}

#[test]
fn web_refuses_bad_archives_and_outputs_inside_the_input() {
    let dir = scratch("sites-refuse");
    std::fs::write(dir.join("bad.crx"), b"Cr24\x03\x00\x00\x00\xff\xff\xff\x00").unwrap();
    let o = bin()
        .arg("web")
        .arg(dir.join("bad.crx"))
        .arg("-o")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("bad.crx") && err.contains("past the end of the file"),
        "{err}"
    );
    assert!(!dir.join("o").exists());

    let app = dir.join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("index.html"), "<p>").unwrap();
    let o = bin()
        .arg("web")
        .arg(&app)
        .arg("-o")
        .arg(app.join("site"))
        .output()
        .unwrap();
    fails_saying(&o, 1, "is inside the input");
    assert!(!app.join("site").exists());
    let o = bin()
        .arg("web")
        .arg(&app)
        .arg("-o")
        .arg(dir.join("s"))
        .arg("--page")
        .arg(app.join("index.html"))
        .output()
        .unwrap();
    fails_saying(&o, 1, "--page and --size go with a pexe");
}

/// A real site in a browser: written, served, opened at `page`, `steps` run (the `steps`
/// scenario of web/tests/browser/run.mjs); every step must come true. The report.
fn open_site(
    browser: Browser,
    name: &str,
    input_rel: &str,
    page: &str,
    steps: Value,
    args: &[&str],
) -> Option<Value> {
    if !browser.ready() {
        return None;
    }
    let input = corpus::real_site(name)?.join(input_rel);
    let dir = scratch(&format!("site-{name}-{}", browser.name()));
    web_site(&input, &dir, args);
    let steps_s = steps.to_string();
    let report = run_page(
        browser,
        &dir,
        page,
        "steps",
        &[("STEPS", &steps_s), ("PAGE_ERRORS_OK", "1")],
    );
    let got = report["steps"].as_array().cloned().unwrap_or_default();
    assert_eq!(got.len(), steps.as_array().unwrap().len(), "{report:#}");
    for (i, v) in got.iter().enumerate() {
        assert!(
            !v.is_null() && v != &json!(false),
            "{name} in {}: step {i} ({}) did not come true:\n{report:#}",
            browser.name(),
            steps[i]
        );
    }
    Some(report)
}

fn status_is(s: &str) -> Value {
    json!({"wait": format!("document.getElementById('statusField')?.textContent === {s:?}"), "ms": 120000})
}

/// A real site of `../shared/fixtures/sites` that is a web page (not a Chrome app or
/// extension): where its author opened it and what SOURCES.md says it does there, as steps
/// of run.mjs's `steps` scenario. One table for `web`'s tests (below) and the drop-in
/// script's (dropin_sites.rs), so both check the same behaviour.
pub(crate) struct PageSite {
    /// Its folder under the sites corpus.
    pub(crate) name: &'static str,
    /// The page to open, relative to the folder.
    pub(crate) page: &'static str,
    /// Servers that are gone, mapped (FROM, TO): `web --url-map FROM=TO`, the drop-in's
    /// `pexe2wasmConfig.urlMap`.
    pub(crate) url_map: &'static [(&'static str, &'static str)],
    /// Whether the page embeds its module offline (ui3 does only with its server).
    pub(crate) embeds: bool,
    /// What to do and check on the page.
    pub(crate) steps: fn() -> Vec<Value>,
}

/// The real sites that are web pages. The others are Chrome apps (supernet-iguana-app,
/// nacl-seek-bug-demo-app: manifest.json with app.background) and an extension
/// (optionsplayers-extension), which run through `web`'s launcher only.
pub(crate) const PAGE_SITES: &[PageSite] = &[
    PageSite {
        name: "lpdevs-part2",
        page: "pepper_49/getting_started/part2/index.html",
        url_map: &[],
        embeds: true,
        steps: || {
            vec![
                status_is("RUNNING"),
                json!({"wait": "document.getElementById('log').textContent === 'hello from NaCl'"}),
            ]
        },
    },
    // The page posts 'uci' from an inline script right after the <embed>, before anything
    // has loaded: the element's API must exist and queue it.
    PageSite {
        name: "stockfish-pexe",
        page: "nacl/index.html",
        url_map: &[],
        embeds: true,
        steps: || {
            vec![
                json!({"wait": "document.getElementById('out').textContent.includes('uciok')", "ms": 120000}),
                json!({"eval": "document.querySelector('#out out')?.textContent.startsWith('Stockfish 170317 64 POPCNT by T. Romstad')"}),
            ]
        },
    },
    PageSite {
        name: "astar",
        page: "index.html",
        url_map: &[],
        embeds: true,
        steps: || {
            vec![
                json!({"wait": "typeof $ === 'function' && document.querySelector('embed')?.readyState === 4", "ms": 120000}),
                json!({"click": "#sendToNative"}),
                json!({"wait": "document.getElementById('output').textContent.includes('{\"array\":[0, 2, 4]}')"}),
            ]
        },
    },
    PageSite {
        name: "cptaffe-pnacl-test",
        page: "index.html",
        url_map: &[],
        embeds: true,
        steps: || {
            vec![
                status_is("success"),
                json!({"wait": "document.getElementById('message-log').textContent.includes('C++ program online.')"}),
                json!({"eval": "(document.getElementById('input-box').value = '30')"}),
                json!({"click": "button"}),
                json!({"wait": "document.getElementById('message-log').textContent.includes('2, 3, 5, 7, 11, 13, 17, 19')"}),
            ]
        },
    },
    // The lossless WebP the module makes of the page's 1920x1080 canvas decodes to the
    // same pixels.
    PageSite {
        name: "webpenc",
        page: "index.html",
        url_map: &[],
        embeds: true,
        steps: || {
            let same_pixels = "(async () => { const img = document.querySelector('#input_row img'); \
                const bmp = await createImageBitmap(await (await fetch(img.src)).blob()); \
                const c = new OffscreenCanvas(bmp.width, bmp.height); const x = c.getContext('2d'); x.drawImage(bmp, 0, 0); \
                const got = x.getImageData(0, 0, bmp.width, bmp.height).data; \
                const want = document.getElementById('myCanvas').getContext('2d').getImageData(0, 0, 1920, 1080).data; \
                if (bmp.width !== 1920 || bmp.height !== 1080) return false; \
                for (let i = 0; i < want.length; i++) if (got[i] !== want[i]) return false; return true; })()";
            vec![
                status_is("SUCCESS"),
                json!({"click": "#pingTest"}),
                json!({"wait": "document.querySelector('#input_row img')?.src.startsWith('data:image/webp;base64,')", "ms": 180000}),
                json!({"eval": same_pixels}),
            ]
        },
    },
    PageSite {
        name: "path-tracer",
        page: "index.html",
        url_map: &[],
        embeds: true,
        steps: || {
            vec![
                status_is("RUNNING"),
                json!({"wait": "Number(document.getElementById('iterationCount').textContent) >= 2", "ms": 120000}),
            ]
        },
    },
    // No server at ws://localhost:8081 (SOURCES.md; mapped to port 9, one browsers block,
    // which the host refuses as Chrome did, in every browser: WebKitGTK itself would leave
    // such a connect pending for good): each of the page's posts, 1 s after the
    // decompressor loads, is answered with an error that the page logs on the console
    // (read here from the page itself: not every driver reports a page's console).
    PageSite {
        name: "ds923y-pnacl-compress",
        page: "index.html",
        url_map: &[("ws://localhost:8081/", "ws://127.0.0.1:9/")],
        embeds: true,
        steps: || {
            vec![
                status_is("SUCCESS"),
                json!({"eval": "(window.__log = [], (() => { const log = console.log; console.log = (...a) => { window.__log.push(a.join(' ')); return log.apply(console, a); }; })(), true)"}),
                // The decompressor may load well after SUCCESS (the compressor's load sets it)
                // when converted in the browser on a loaded machine.
                json!({"wait": "window.__log.some((l) => l.includes('happyk_st.js.lzo:ERROR:'))", "ms": 120000}),
            ]
        },
    },
    // Blue Iris's UI3 needs its server (offline it shows its error UI, SOURCES.md); what the
    // site must give it is NaCl where it looks for it, so that it would choose the native
    // player.
    PageSite {
        name: "ui3-pnacl-player",
        page: "ui3.htm",
        url_map: &[],
        embeds: false,
        steps: || {
            vec![
                json!({"wait": "document.readyState === 'complete'"}),
                json!({"eval": "navigator.mimeTypes['application/x-pnacl']?.type === 'application/x-pnacl' && typeof HTMLEmbedElement.prototype.postMessage === 'function'"}),
            ]
        },
    },
];

/// The table's entry for site `name`.
pub(crate) fn page_site(name: &str) -> &'static PageSite {
    PAGE_SITES
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} is not in PAGE_SITES"))
}

/// A web page site of the table written by `web` and opened in `browser`.
fn page_site_in(browser: Browser, name: &str) {
    let site = page_site(name);
    let map: Vec<String> = site
        .url_map
        .iter()
        .map(|(from, to)| format!("{from}={to}"))
        .collect();
    let mut args = Vec::new();
    for m in &map {
        args.extend(["--url-map", m.as_str()]);
    }
    open_site(
        browser,
        site.name,
        "",
        site.page,
        Value::Array((site.steps)()),
        &args,
    );
}

fn lpdevs(browser: Browser) {
    page_site_in(browser, "lpdevs-part2");
}

fn stockfish(browser: Browser) {
    page_site_in(browser, "stockfish-pexe");
}

fn astar(browser: Browser) {
    page_site_in(browser, "astar");
}

fn cptaffe(browser: Browser) {
    page_site_in(browser, "cptaffe-pnacl-test");
}

fn webpenc(browser: Browser) {
    page_site_in(browser, "webpenc");
}

fn path_tracer(browser: Browser) {
    page_site_in(browser, "path-tracer");
}

fn ds923y(browser: Browser) {
    page_site_in(browser, "ds923y-pnacl-compress");
}

fn ui3(browser: Browser) {
    page_site_in(browser, "ui3-pnacl-player");
}

both_browsers!(ui3: ui3_site_in_chromium, ui3_site_in_firefox);
both_browsers!(lpdevs: lpdevs_site_in_chromium, lpdevs_site_in_firefox);
both_browsers!(stockfish: stockfish_site_in_chromium, stockfish_site_in_firefox);
both_browsers!(astar: astar_site_in_chromium, astar_site_in_firefox);
both_browsers!(cptaffe: cptaffe_site_in_chromium, cptaffe_site_in_firefox);
both_browsers!(webpenc: webpenc_site_in_chromium, webpenc_site_in_firefox);
both_browsers!(path_tracer: path_tracer_site_in_chromium, path_tracer_site_in_firefox);
both_browsers!(ds923y: ds923y_site_in_chromium, ds923y_site_in_firefox);

#[test]
fn real_sites_in_webkit() {
    for s in PAGE_SITES {
        page_site_in(Browser::WebKit, s.name);
    }
}

/// Copies folder `from` to `to` (a scratch copy for a test's tree; never into the project).
fn copy_dir(from: &Path, to: &Path) {
    for f in files_under(from) {
        let dest = to.join(&f);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&f), dest).unwrap();
    }
}

/// A zip of folder `from`, as a store dump holds an app.
fn zip_dir(from: &Path) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let o = zip::write::SimpleFileOptions::default();
    for f in files_under(from) {
        w.start_file(f.to_str().unwrap(), o).unwrap();
        w.write_all(&std::fs::read(from.join(&f)).unwrap()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn batch_site_makes_a_gallery_of_a_mixed_tree_and_resumes() {
    let (Some(cpt), Some(seek)) = (
        corpus::real_site("cptaffe-pnacl-test"),
        corpus::real_site("nacl-seek-bug-demo-app"),
    ) else {
        return;
    };
    let dir = scratch("sites-batch");
    let tree = dir.join("dump");
    copy_dir(&cpt, &tree.join("sites/cptaffe"));
    copy_dir(&cpt, &tree.join("sites/cptaffe-copy"));
    std::fs::write(tree.join("seek.zip"), zip_dir(&seek)).unwrap();
    let mut crx = b"Cr24".to_vec();
    crx.extend(2u32.to_le_bytes());
    crx.extend(0u32.to_le_bytes());
    crx.extend(0u32.to_le_bytes());
    crx.extend(zip_dir(&seek));
    std::fs::create_dir_all(tree.join("store")).unwrap();
    std::fs::write(tree.join("store/seek.crx"), &crx).unwrap();
    // A hostile package: one error line, the rest still built.
    let mut evil = Vec::new();
    {
        use std::io::Write;
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(&mut evil));
        let o = zip::write::SimpleFileOptions::default();
        w.start_file("index.html", o).unwrap();
        w.write_all(b"<p>").unwrap();
        w.add_symlink("lib", "/etc", o).unwrap();
        w.finish().unwrap();
    }
    std::fs::write(tree.join("store/evil.zip"), &evil).unwrap();
    // A native-only app: named as such.
    let native = tree.join("native-app");
    std::fs::create_dir_all(&native).unwrap();
    std::fs::write(native.join("manifest.json"), r#"{"manifest_version": 2, "name": "Native", "version": "1", "app": {"background": {"scripts": ["bg.js"]}}}"#).unwrap();
    std::fs::write(native.join("bg.js"), "").unwrap();
    std::fs::write(
        native.join("app.nmf"),
        r#"{"program": {"x86-64": {"url": "app_x86_64.nexe"}}}"#,
    )
    .unwrap();

    let out = dir.join("out");
    let run = || {
        bin()
            .arg("batch")
            .arg(&tree)
            .arg("--site")
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = run();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let stdout = text(&o.stdout);
    // cptaffe twice and seek (zip, crx): 2 distinct pexes.
    assert!(
        stdout.contains(
            "6 apps: 5 built, 0 unchanged, 1 failed; 2 distinct pexes converted; 4 run here"
        ),
        "{stdout}\n{}",
        text(&o.stderr)
    );
    assert!(
        text(&o.stderr).contains("error: store/evil.zip:") && text(&o.stderr).contains("is a link"),
        "{}",
        text(&o.stderr)
    );
    let g: Value =
        serde_json::from_slice(&std::fs::read(out.join("gallery.json")).unwrap()).unwrap();
    let by = |input: &str| {
        g.as_array()
            .unwrap()
            .iter()
            .find(|e| e["input"] == input)
            .unwrap_or_else(|| panic!("{input}: {g:#}"))
            .clone()
    };
    let seek_crx = by("store/seek.crx");
    assert_eq!(seek_crx["title"], "Using the ppapi_simple library");
    assert_eq!(seek_crx["start"], "store--seek.crx/pexe2wasm-launch.html");
    assert_eq!(seek_crx["icon"], "store--seek.crx/icon128.png");
    assert_eq!(seek_crx["runs"], true);
    assert!(out
        .join("store--seek.crx/pnacl/Release/using_ppapi_simple.wasm")
        .is_file());
    let n = by("native-app");
    assert_eq!(n["runs"], false);
    assert_eq!(
        n["summary"],
        "a native NaCl app for x86-64: only PNaCl pexes convert"
    );
    assert_eq!(by("sites/cptaffe")["start"], "sites--cptaffe/index.html");
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        index.contains("4 of 6 run here")
            && index.contains("href=\"store--seek.crx/pexe2wasm-launch.html\""),
        "{index}"
    );

    // Again: nothing changed, nothing rebuilt; a changed app is rebuilt.
    let o = run();
    assert!(
        text(&o.stdout)
            .contains("6 apps: 0 built, 5 unchanged, 1 failed; 0 distinct pexes converted"),
        "{}",
        text(&o.stdout)
    );
    std::fs::write(tree.join("sites/cptaffe-copy/README.md"), "changed").unwrap();
    let o = run();
    assert!(
        text(&o.stdout)
            .contains("6 apps: 1 built, 4 unchanged, 1 failed; 1 distinct pexes converted"),
        "{}",
        text(&o.stdout)
    );
}

// --- Chrome apps and extensions in the tab ---------------------------------------------------

/// One of our apps (fixtures/apps/NAME; with `pexe`, that Pepper fixture assembled into the
/// app's folder first, in a scratch copy) written by `web`, launched with `scenario` of
/// run.mjs: report.chrome.
fn launch_app(browser: Browser, app: &str, scenario: &str, pexe: Option<&str>) -> Option<Value> {
    launch_app_at(browser, app, "pexe2wasm-launch.html", scenario, pexe, &[])
}

/// As `launch_app`, at `page` of the site (the launcher with a query), with more `env`.
fn launch_app_at(
    browser: Browser,
    app: &str,
    page: &str,
    scenario: &str,
    pexe: Option<&str>,
    env: &[(&str, &str)],
) -> Option<Value> {
    if !browser.ready() {
        return None;
    }
    let dir = scratch(&format!("app-{app}-{}", browser.name()));
    let fixture = pexe2wasm_testkit::repo_root()
        .join("fixtures/apps")
        .join(app);
    let input = match pexe {
        // A corpus pexe, copied in (a scratch copy; the corpus stays outside the project).
        Some(p) if p.ends_with(".pexe") => {
            let bytes = pexe2wasm_testkit::corpus::real_pexe(p)?;
            let copy = dir.join("in");
            copy_dir(&fixture, &copy);
            std::fs::write(copy.join("app.pexe"), bytes).unwrap();
            copy
        }
        // One of our Pepper fixtures, assembled.
        Some(p) => {
            let copy = dir.join("in");
            copy_dir(&fixture, &copy);
            let src = pexe2wasm_testkit::repo_root().join(format!("fixtures/pepper/{p}.pnaclasm"));
            let o = bin()
                .arg("asm")
                .arg(src)
                .arg("-o")
                .arg(copy.join("app.pexe"))
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", text(&o.stderr));
            copy
        }
        None => fixture,
    };
    web_site(&input, &dir, &[]);
    let mut env = env.to_vec();
    if pexe.is_none() {
        env.push(("WAIT_NACL", "0"));
    }
    let report = run_page(browser, &dir, page, scenario, &env);
    let chrome = report["chrome"].clone();
    assert!(!chrome.is_null(), "{report:#}");
    Some(chrome)
}

fn window_status(chrome: &Value) -> &Value {
    &chrome["windows"][0]["status"]
}

fn our_apps(browser: Browser) {
    // Background scripts, onLaunched, a window whose <embed> runs the module, runtime
    // messages, a refused socket.
    if let Some(c) = launch_app(browser, "message-app", "chrome-app", Some("keep-message")) {
        let s = window_status(&c);
        assert_eq!(c["state"], "running", "{c:#}");
        assert_eq!(s["messages"], json!(["first"]), "{c:#}");
        assert_eq!(s["naclEvents"][0], "load", "{c:#}");
        assert_eq!(s["fromBackground"], "set in the create callback", "{c:#}");
        assert_eq!(s["answer"]["pong"], "hello", "{c:#}");
        assert_eq!(s["naclArch"], "x86-64");
        assert!(
            s["socketError"]
                .as_str()
                .unwrap()
                .contains("not available in a browser tab"),
            "{c:#}"
        );
        assert_eq!(c["missing"], json!(["sockets"]));
    }
    // nacl_modules: an embed of the type the app's manifest hands to app.nmf runs that
    // module, which gets HandleDocumentLoad with a loader open on the embed's document and
    // posts back the document's text.
    if let Some(c) = launch_app(browser, "handler-app", "chrome-app", Some("document-echo")) {
        let s = window_status(&c);
        let doc = std::fs::read_to_string(
            pexe2wasm_testkit::repo_root().join("fixtures/apps/handler-app/docs/note.echo"),
        )
        .unwrap();
        assert_eq!(s["naclEvents"], json!(["load"]), "{c:#}");
        assert_eq!(s["messages"], json!([doc]), "{c:#}");
    }
    // ?open=: the document opened with the handler, as a tab navigating to it did: a window
    // of its own with the module full-frame, and the app not launched (no window.html).
    if let Some(c) = launch_app_at(
        browser,
        "handler-app",
        "pexe2wasm-launch.html?open=docs/note.echo",
        "chrome-app",
        Some("document-echo"),
        &[("WAIT_EMBEDS", "1")],
    ) {
        let windows = c["windows"].as_array().unwrap();
        assert_eq!(windows.len(), 1, "{c:#}");
        assert_eq!(
            windows[0]["embeds"],
            json!([{"type": "application/x-pexe2wasm-echo", "readyState": 4, "lastError": ""}]),
            "{c:#}"
        );
    }
    // A threaded 2D plugin in an app window: its frames come, and the canvas is drawn.
    if let Some(c) = launch_app(browser, "paint-app", "chrome-app", Some("path-tracer.pexe")) {
        let s = window_status(&c);
        assert_eq!(s["naclEvents"], json!(["load"]), "{c:#}");
        assert!(s["messages"].as_array().unwrap().len() >= 3, "{c:#}");
        assert!(s["drawnPixels"].as_i64().unwrap() > 1000, "{c:#}");
    }
    // chrome.storage kept across a reload.
    if let Some(c) = launch_app(browser, "storage-app", "chrome-storage-reload", None) {
        let (a, b) = (window_status(&c["runs"][0]), window_status(&c["runs"][1]));
        assert_eq!(
            b["launches"].as_i64().unwrap(),
            a["launches"].as_i64().unwrap() + 1,
            "{c:#}"
        );
        assert_eq!(b["previous"], a["changed"]["newValue"], "{c:#}");
        assert_eq!(b["changed"]["area"], "local");
        assert_eq!(a["syncQuotaError"], "QUOTA_BYTES_PER_ITEM quota exceeded");
    }
    // _locales: the manifest's __MSG_name__ and getMessage with placeholders.
    if let Some(c) = launch_app(browser, "locales-app", "chrome-app", None) {
        let s = window_status(&c);
        assert_eq!(c["name"], "Locales Test App", "{c:#}");
        assert_eq!(s["greeting"], "Hello, World! 3 messages.", "{c:#}");
        assert_eq!(s["launcherTitle"], "Locales Test App");
    }
    // A background page, getBackgroundPage, alarms, notifications, the package's entry.
    if let Some(c) = launch_app(browser, "bgpage-app", "chrome-app", None) {
        let s = window_status(&c);
        assert_eq!(s["backgroundTitle"], "the background page", "{c:#}");
        assert_eq!(s["count"], 42);
        assert_eq!(s["alarmsFired"], json!(["soon"]), "{c:#}");
        assert_eq!(s["manifestFromEntry"], "pexe2wasm background page app");
        assert!(
            s["packageFiles"]
                .as_array()
                .unwrap()
                .contains(&json!("window.js")),
            "{c:#}"
        );
    }
    // Several windows at their bounds, create with an open id, close, minimize.
    if let Some(c) = launch_app(browser, "two-windows-app", "chrome-app", None) {
        let s = window_status(&c);
        assert_eq!(s["windows"], json!(["a", "b"]), "{c:#}");
        assert_eq!(s["sameWindowAgain"], true);
        assert_eq!(s["bClosed"], true);
        assert_eq!(s["restored"], true);
        assert_eq!(
            c["windows"][0]["rect"],
            json!({"left": 10, "top": 10, "width": 300, "height": 200}),
            "{c:#}"
        );
    }
    // A legacy packaged app opens its page with chrome.* there.
    if let Some(c) = launch_app(browser, "legacy-app", "chrome-app", None) {
        let s = window_status(&c);
        assert_eq!(
            (
                s["href"].as_str(),
                s["hasChrome"].as_bool(),
                s["stored"].as_bool()
            ),
            (Some("main.html"), Some(true), Some(true)),
            "{c:#}"
        );
    }
    // An extension: popup, tabs.query/sendMessage to a content script, its background.
    if let Some(c) = launch_app(browser, "popup-ext", "chrome-extension", None) {
        assert_eq!(
            c["popup"]["response"]["shown"], "the popup said: hi",
            "{c:#}"
        );
        assert_eq!(
            c["popup"]["response"]["background"]["installed"], "install",
            "{c:#}"
        );
        assert_eq!(c["popup"]["tabs"], 1);
    }
}

three_browsers!(our_apps: our_chrome_apps_in_chromium, our_chrome_apps_in_firefox, our_chrome_apps_in_webkit);

const WINDOW: &str = "#pexe2wasm-desktop iframe.pexe2wasm-window-content";

fn iguana(browser: Browser) {
    // SuperNET's iguana: the launcher runs background.js, which opens index.html; the
    // module reaches DidCreate ("Pexe state: Loaded"). Its sockets are refused, as a tab
    // has none (PP_ERROR_NOACCESS, as Chrome refused them to web pages). The module saves
    // its keys, encrypted (`{"result":"<hex>",…`), in confs/<64 hex digits> of its
    // LOCALPERSISTENT file system ("save (confs/…)" on its log); the page, through
    // webkitRequestFileSystem(PERSISTENT) as example.js opens it, reads that file: one
    // store for both, as in Chrome.
    const SAVED_BY_MODULE: &str = "new Promise((ok) => webkitRequestFileSystem(PERSISTENT, 0, (fs) => fs.root.getDirectory('confs', {}, (d) => d.createReader().readEntries((es) => { const e = es.find((e) => /^[0-9a-f]{64}$/.test(e.name)); if (!e) return ok(false); e.file((f) => f.text().then((t) => ok(/^[{]\\s*\"result\":\"[0-9a-f]+\"/.test(t) ? e.name : false)), () => ok(false)); }, () => ok(false)), () => ok(false)), () => ok(false)))";
    let r = open_site(
        browser,
        "supernet-iguana-app",
        "iguana",
        "pexe2wasm-launch.html",
        json!([
            {"in": [WINDOW], "wait": "document.getElementById('appstatus')?.textContent.includes('Loaded')", "ms": 120000},
            {"in": [WINDOW], "wait": SAVED_BY_MODULE, "ms": 60000},
            {"in": [WINDOW], "eval": "document.getElementById('log')?.textContent ?? ''"},
        ]),
        &["--refuse-unmapped"],
    );
    if let Some(r) = r {
        // The file the page read is the one the module said it saved.
        let (name, log) = (
            r["steps"][1].as_str().unwrap_or_default(),
            r["steps"][2].as_str().unwrap_or_default(),
        );
        assert!(log.contains(&format!("save (confs/{name})")), "{r:#}");
    }
}

fn seek_demo(browser: Browser) {
    // The seek demo: its window's module writes a 2.4 GB file of 'a' to the persistent file
    // system, seeks to 0, writes 'b' and reads it back. Where the IO worker has OPFS sync
    // access handles (Chromium, Firefox) the file is on disk and the demo ends in
    // TEST SUCCESS. WebKitGTK has no OPFS (no navigator.storage): its files are held whole
    // in IndexedDB's store, at most 1 GiB, and the write past it fails as the docs say.
    let report = open_site(
        browser,
        "nacl-seek-bug-demo-app",
        "",
        "pexe2wasm-launch.html",
        json!([
            {"in": [WINDOW], "wait": "document.getElementById('statusField')?.textContent === 'RUNNING'", "ms": 120000},
            // The page keeps the last 20 lines: the outcome is among them.
            {"in": [WINDOW], "wait": "/TEST (SUCCESS|FAILED)/.test(document.getElementById('log')?.textContent ?? '')", "ms": 900000},
            {"in": [WINDOW], "eval": "document.getElementById('log')?.textContent ?? ''"},
        ]),
        &[],
    );
    if let Some(report) = report {
        let log = report["steps"][2].as_str().unwrap_or_default();
        let expected: &[&str] = if browser == Browser::WebKit {
            &["size 1023 MB", "TEST FAILED: failed to write"]
        } else {
            &["size 2399 MB", "Char at pos 0: b", "TEST SUCCESS"]
        };
        assert!(
            expected.iter().all(|e| log.contains(e)),
            "expected {expected:?}:\n{report:#}"
        );
    }
    // The 2.4 GB file is in the browser's profile: not left on the disk.
    let _ = std::fs::remove_dir_all(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "web-site-nacl-seek-bug-demo-app-{}",
        browser.name()
    )));
}

fn optionsplayers(browser: Browser) {
    // The extension: its popup sends the page a message, the content script inserts the
    // embed of its (long gone) dev server, mapped to the extension's own copy, which loads.
    open_site(
        browser,
        "optionsplayers-extension",
        "",
        "pexe2wasm-launch.html",
        json!([
            {"in": ["iframe.pexe2wasm-popup"], "wait": "document.getElementById('status')?.textContent.includes('Extension loaded')"},
            // As a user would, once the page in the tab has loaded (and so has the content
            // script: before that, Chrome too answered "Receiving end does not exist").
            {"in": ["iframe.pexe2wasm-tab-frame"], "wait": "document.readyState === 'complete' && !!window.chrome?.runtime?.onMessage && new Promise((r) => setTimeout(() => r(true), 500))"},
            {"in": ["iframe.pexe2wasm-popup"], "eval": "(document.getElementById('linkstext').value = 'hi')"},
            {"in": ["iframe.pexe2wasm-popup"], "click": "#changelinks"},
            {"in": ["iframe.pexe2wasm-popup"], "wait": "document.getElementById('status')?.textContent.includes('changed data in page')"},
            {"in": ["iframe.pexe2wasm-tab-frame"], "wait": "document.getElementById('hello_tutorial')?.readyState === 4 && document.getElementById('hello_tutorial').lastError === ''", "ms": 120000},
        ]),
        &["--url-map", "http://localhost:5103/part1/=/"],
    );
}

both_browsers!(iguana: iguana_app_in_chromium, iguana_app_in_firefox);
both_browsers!(seek_demo: seek_demo_app_in_chromium, seek_demo_app_in_firefox);
both_browsers!(optionsplayers: optionsplayers_extension_in_chromium, optionsplayers_extension_in_firefox);

#[test]
fn real_chrome_apps_in_webkit() {
    for f in [iguana, seek_demo, optionsplayers] {
        f(Browser::WebKit);
    }
}
