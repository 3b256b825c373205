//! `pexe2wasm extension`: the unpacked browser extension (docs/EXTENSION.md), its folder for
//! Chromium and Firefox, and in each browser, with real sites served unedited by a server
//! that sets no isolation or CORS headers (web/tests/browser/serve.mjs, PLAIN=1): the SDK
//! tutorial lpdevs-part2 and stockfish (threaded), a page laid out as a web-archive capture
//! (rewritten URLs, a toolbar and its script, an `id_` pexe on another origin, wrong MIME
//! types), a direct link to a pexe opening the player, a site turned off in the options
//! page, and then every web-page site of the corpus (sites.rs's `PAGE_SITES`, checked as
//! the drop-in's and `web`'s tests check them) with the URL map set in the options page.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::cmd::{pexe2wasm, text};
use crate::sites::PAGE_SITES;
use crate::web::{scratch, Browser};
use pexe2wasm_testkit::corpus as common;

/// `pexe2wasm extension -o DIR [--firefox]`; false (after a SKIPPED line) when this
/// pexe2wasm was built without the browser converter, which fails under CI.
fn write_extension(dir: &Path, firefox: bool) -> bool {
    let mut args = vec!["extension", "-o", dir.to_str().unwrap()];
    if firefox {
        args.push("--firefox");
    }
    let o = pexe2wasm(&args);
    let e = text(&o.stderr);
    if !o.status.success()
        && e.contains("built without the browser converter")
        && !crate::web::under_ci()
    {
        eprintln!("SKIPPED: {e}");
        return false;
    }
    assert!(o.status.success(), "{e}");
    true
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap())
        .expect("manifest.json is JSON")
}

#[test]
fn extension_writes_chromium_and_firefox_folders_and_refuses_a_foreign_one() {
    let dir = common::Scratch::new("extension-folder");
    let chromium = dir.join("chromium");
    if !write_extension(&chromium, false) {
        return;
    }
    let firefox = dir.join("firefox");
    assert!(write_extension(&firefox, true));
    let (c, f) = (manifest(&chromium), manifest(&firefox));
    for m in [&c, &f] {
        assert_eq!(m["manifest_version"], 3, "{m:#}");
        // Every file the manifest names is there.
        let mut named = vec![m["options_ui"]["page"].as_str().unwrap().to_owned()];
        for s in m["content_scripts"].as_array().unwrap() {
            for js in s["js"].as_array().unwrap() {
                named.push(js.as_str().unwrap().to_owned());
            }
            assert_eq!(s["run_at"], "document_start");
            assert_eq!(s["all_frames"], true);
        }
        let folder = if m == &c { &chromium } else { &firefox };
        for n in named {
            assert!(folder.join(&n).is_file(), "{n} in {}", folder.display());
        }
        // The page's own world answers mimeTypes before its scripts run.
        let main = &m["content_scripts"][0];
        assert_eq!(main["world"], "MAIN");
        assert_eq!(main["js"][0], "pexe2wasm/advertise.js");
        for p in ["declarativeNetRequest", "storage", "tabs"] {
            assert!(
                m["permissions"].as_array().unwrap().contains(&json!(p)),
                "{p}"
            );
        }
    }
    assert_eq!(c["background"]["service_worker"], "background.js");
    assert!(chromium.join("background.js").is_file());
    assert_eq!(f["background"]["scripts"][0], "background.js");
    // Firefox's player in place: a blocking webRequest rewrites a direct link's response
    // into the console page, whose host comes from the content scripts, not the page.
    for p in [
        "webRequest",
        "webRequestBlocking",
        "webRequestFilterResponse",
    ] {
        assert!(
            f["permissions"].as_array().unwrap().contains(&json!(p)),
            "{p}"
        );
        assert!(
            !c["permissions"].as_array().unwrap().contains(&json!(p)),
            "{p}"
        );
    }
    let document = std::fs::read_to_string(firefox.join("player-document.html")).unwrap();
    for part in [
        "{{TITLE}}",
        "src=\"{{NMF}}\"",
        "id=\"options\" href=\"{{OPTIONS}}\"",
        "id=\"app\"",
        "<script>",
    ] {
        assert!(document.contains(part), "{part} in {document}");
    }
    assert!(
        !document.contains("pexe2wasm/") && !document.contains("isolation"),
        "{document}"
    );
    assert!(!chromium.join("player-document.html").exists());
    assert!(f["browser_specific_settings"]["gecko"]["id"].is_string());
    assert!(c.get("browser_specific_settings").is_none());
    // The host and the converter are the same files `host` writes.
    let host = dir.join("host");
    let o = pexe2wasm(&["host", "-o", host.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for (file, _) in pexe2wasm_webhost::HOST_FILES {
        let rel = format!("pexe2wasm/{file}");
        assert_eq!(
            std::fs::read(chromium.join(&rel)).unwrap(),
            std::fs::read(host.join(&rel)).unwrap(),
            "{rel}"
        );
    }
    for rel in [
        "pexe2wasm/convert/converter.wasm",
        "pexe2wasm/convert/converter.json",
    ] {
        assert_eq!(
            std::fs::read(firefox.join(rel)).unwrap(),
            std::fs::read(host.join(rel)).unwrap(),
            "{rel}"
        );
    }
    // The player page: the console page with no inline script (extension pages forbid it).
    let player = std::fs::read_to_string(chromium.join("player.html")).unwrap();
    assert!(
        player.contains("id=\"app\"") && !player.contains("<script>"),
        "{player}"
    );
    // player.js runs after the element exists and before the deferred embed.js; the
    // console's script is the page's own.
    assert!(player.find("id=\"app\"").unwrap() < player.find("player.js").unwrap());
    assert!(player.contains("pexe2wasm/embed.js") && !player.contains("pexe2wasm-isolation.js"));
    let console = std::fs::read_to_string(chromium.join("player-console.js")).unwrap();
    assert!(
        console.contains("addEventListener(\"message\""),
        "{console}"
    );
    // Written again over itself: fine; a foreign folder, or the host folder: refused.
    assert!(write_extension(&chromium, false));
    let foreign = dir.join("mine");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("manifest.json"), "{}").unwrap();
    for d in [&foreign, &host] {
        let o = pexe2wasm(&["extension", "-o", d.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", d.display());
        assert!(
            text(&o.stderr).contains("not empty and not an extension folder"),
            "{}",
            text(&o.stderr)
        );
    }
    assert_eq!(
        std::fs::read_to_string(foreign.join("manifest.json")).unwrap(),
        "{}"
    );
}

// --- the extension in a browser ------------------------------------------------------------

const TS: &str = "20150101000000";

/// A web-archive capture of a page embedding lpdevs-part2's pexe, as an archive serves it:
/// the page at /web/TS/http://nacl.example/demo/ with the archive's toolbar and script, the
/// embed's manifest at its rewritten URL (served as text/plain), and the manifest naming
/// the pexe in the archive's raw `id_` form on another origin (localhost, not 127.0.0.1;
/// served as application/octet-stream, with no CORS header).
fn write_archive(root: &Path, pexe: &Path, port: u16) {
    let page_dir = root.join(format!("web/{TS}/http:/nacl.example/demo"));
    let raw_dir = root.join(format!("web/{TS}id_/http:/nacl.example/demo"));
    std::fs::create_dir_all(&page_dir).unwrap();
    std::fs::create_dir_all(&raw_dir).unwrap();
    std::fs::create_dir_all(root.join("_static/js")).unwrap();
    std::os::unix::fs::symlink(pexe, raw_dir.join("part2.pexe")).unwrap();
    std::fs::write(
        page_dir.join("part2.nmf"),
        json!({"program": {"portable": {"pnacl-translate": {
            "url": format!("http://localhost:{port}/web/{TS}id_/http://nacl.example/demo/part2.pexe")
        }}}})
        .to_string(),
    )
    .unwrap();
    // The archive's script: wraps the page's globals as replay scripts do.
    std::fs::write(
        root.join("_static/js/wombat.js"),
        "window.__wm = { wombat: true, ts: '20150101000000' };\n\
         const realOpen = window.open; window.open = function (u, ...r) { return realOpen.call(window, u, ...r); };\n\
         document.addEventListener('DOMContentLoaded', () => { document.getElementById('wm-ipp').dataset.ready = '1'; });\n",
    )
    .unwrap();
    std::fs::write(
        page_dir.join("index.html"),
        format!(
            r#"<!doctype html><html><head>
<script src="/_static/js/wombat.js"></script>
<title>NaCl demo (archived)</title></head><body>
<!-- BEGIN WAYBACK TOOLBAR INSERT -->
<div id="wm-ipp"><img src="http://localhost:{port}/_static/images/logo.png" alt="archive"> captured {TS}</div>
<!-- END WAYBACK TOOLBAR INSERT -->
<h1>A NaCl demo</h1>
<embed id="m" type="application/x-pnacl" src="/web/{TS}/http://nacl.example/demo/part2.nmf" width="10" height="10">
<p><a id="raw" href="/web/{TS}id_/http://nacl.example/demo/part2.pexe">the pexe</a></p>
<script>
  window.got = [];
  const m = document.getElementById("m");
  m.addEventListener("message", (e) => window.got.push(e.data));
  m.addEventListener("load", () => m.postMessage("hello"));
</script>
</body></html>
"#
        ),
    )
    .unwrap();
}

/// One browser session with the extension: lpdevs-part2, stockfish, the archive capture, a
/// direct link to the pexe (the player), then lpdevs on a site turned off in the options.
fn extension_sites(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let (Some(lpdevs), Some(stockfish)) = (
        common::real_site("lpdevs-part2"),
        common::real_site("stockfish-pexe"),
    ) else {
        return;
    };
    let dir = scratch(&format!("extension-{}", browser.name()));
    let ext = dir.join("extension");
    if !write_extension(&ext, browser == Browser::Firefox) {
        return;
    }
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(&lpdevs, root.join("lpdevs")).unwrap();
    std::os::unix::fs::symlink(&stockfish, root.join("stockfish")).unwrap();
    for site in PAGE_SITES {
        std::os::unix::fs::symlink(common::sites_dir().join(site.name), root.join(site.name))
            .unwrap();
    }
    // The sites' URL maps, one FROM=TO a line as the options page takes them.
    let url_map: Vec<String> = PAGE_SITES
        .iter()
        .flat_map(|s| s.url_map.iter().map(|(from, to)| format!("{from}={to}")))
        .collect();
    // PLAIN=1: no isolation or CORS headers, wrong MIME types, as an old server sends.
    let server = crate::host::StaticServer::serve(&root, &[("PLAIN", "1")]);
    let port = server.port();
    let pexe: PathBuf = lpdevs.join("pepper_49/getting_started/part2/pnacl/Release/part2.pexe");
    write_archive(&root, &pexe, port);
    let base = format!("http://127.0.0.1:{port}");
    let lpdevs_page = "/lpdevs/pepper_49/getting_started/part2/index.html";
    let mut steps = vec![
        // lpdevs-part2, unedited: it tests mimeTypes, embeds, and its module answers.
        json!({"wait": "document.getElementById('statusField')?.textContent === 'RUNNING'", "ms": 180000}),
        json!({"wait": "document.getElementById('log').textContent === 'hello from NaCl'"}),
        json!({"eval": "crossOriginIsolated && document.querySelector('embed')?.pexe2wasm?.source === 'converted'"}),
        // stockfish (threaded), unedited.
        json!({"goto": format!("{base}/stockfish/nacl/index.html")}),
        json!({"wait": "document.getElementById('out')?.textContent.includes('uciok')", "ms": 240000}),
        json!({"eval": "document.querySelector('#out out')?.textContent.startsWith('Stockfish 170317 64 POPCNT by T. Romstad')"}),
        // The archive capture.
        json!({"goto": format!("{base}/web/{TS}/http://nacl.example/demo/index.html")}),
        json!({"wait": "window.got?.includes('hello from NaCl')", "ms": 120000}),
        json!({"eval": "crossOriginIsolated && window.__wm?.wombat === true && document.getElementById('wm-ipp').dataset.ready === '1'"}),
    ];
    // A direct link to the pexe (the archive's id_ URL, served as octet-stream) opens the
    // player, whose console talks to the module. Chromium redirects to the extension's
    // player page; Firefox gives extension pages no shared memory, so there the response
    // becomes the player in place, isolated on the link's own origin.
    let pexe_link = format!("{base}/web/{TS}id_/http://nacl.example/demo/part2.pexe");
    let (player_at, options) = if browser == Browser::Chromium {
        (
            format!("location.href.endsWith('/player.html?src={pexe_link}')"),
            "'options.html'",
        )
    } else {
        (
            format!("location.href === '{pexe_link}' && crossOriginIsolated && document.contentType === 'text/html'"),
            "document.getElementById('options').href",
        )
    };
    steps.extend([
        json!({"goto": pexe_link, "nowait": true}),
        json!({"wait": format!("{player_at} && document.getElementById('status')?.textContent !== 'loading…'"), "ms": 120000}),
        json!({"wait": "document.getElementById('status').textContent === 'running'", "ms": 120000}),
        json!({"eval": "(document.getElementById('message').value = 'hello', document.querySelector('#console button').click(), true)"}),
        json!({"wait": "document.getElementById('log').textContent.includes('← hello from NaCl')"}),
    ]);
    steps.extend([
        // The options page (opened from the player: Firefox's driver may not navigate to an
        // extension's page) turns localhost off: lpdevs there stays as the browser has it.
        json!({"eval": format!("(location.href = {options}, true)")}),
        json!({"wait": format!("document.body?.dataset.loaded === 'true' && (document.getElementById('disabled').value = 'localhost', document.getElementById('urlmap').value = {:?}, document.getElementById('save').click(), true)", url_map.join("\n"))}),
        json!({"wait": "document.getElementById('status').textContent === 'saved'"}),
        json!({"goto": format!("http://localhost:{port}{lpdevs_page}")}),
        json!({"sleep": 4000}),
        json!({"eval": "!navigator.mimeTypes['application/x-pnacl'] && !document.querySelector('canvas.pexe2wasm-canvas') && document.getElementById('statusField').textContent !== 'RUNNING'"}),
    ]);
    // Every web-page site, unedited, on the origin still switched on; lpdevs-part2 and
    // stockfish were converted above (at other URLs), so theirs come from the cache.
    for site in PAGE_SITES {
        steps.push(json!({"goto": format!("{base}/{}/{}", site.name, site.page)}));
        steps.extend((site.steps)());
        if site.embeds {
            steps.push(json!({"eval": "[...document.querySelectorAll('embed')].some((e) => ['converted', 'cache'].includes(e.pexe2wasm?.source))"}));
        }
    }
    let steps = Value::Array(steps);
    let url = format!("{base}{lpdevs_page}");
    let ext_dir = ext.to_string_lossy();
    let report = crate::host::run_steps(
        browser,
        &url,
        &steps,
        &dir.join("profile"),
        &[("EXTENSION", &ext_dir)],
    );
    crate::host::assert_steps_true(&report, &steps, &format!("extension in {}", browser.name()));
    // It says what it replaced, once per element.
    let said = |what: &str| {
        report["console"].as_array().map_or(0, |l| {
            l.iter()
                .filter(|m| m.as_str().is_some_and(|m| m.contains(what)))
                .count()
        })
    };
    assert!(
        said(
            r#"replacing <embed type="application/x-pnacl" src="/web/20150101000000/http://nacl.example/demo/part2.nmf">"#
        ) == 1,
        "{report:#}"
    );
}

both_browsers!(extension_sites: extension_sites_chromium, extension_sites_firefox);
