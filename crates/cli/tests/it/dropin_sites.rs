//! The drop-in script on the real sites of `../shared/fixtures/sites` that are web pages
//! (sites.rs's `PAGE_SITES`, the table `web`'s tests use): each served as its author left
//! it, with only `<script src=…/pexe2wasm.js>` added as it is served (serve.mjs's INJECT)
//! and no conversion step, in Chromium, Firefox and WebKitGTK, and checked as `web`'s tests
//! check it; a cached second visit of a threaded site (stockfish) that does not convert
//! again; a page laid out as a web archive's capture (archive.mjs: rewritten URLs, the
//! archive's toolbar, a redirect to the raw `id_` form, the pexe sent as text/plain); and a
//! pexe linked through the host folder's player page.
//!
//! Not here: the Chrome apps (supernet-iguana-app, nacl-seek-bug-demo-app: a manifest.json
//! with `app.background`) and the extension (optionsplayers-extension). They start from
//! chrome.app.runtime or chrome.tabs, which `web`'s launcher gives them (sites.rs); a script
//! added to a plain page cannot be them.
//!
//! One browser per run visits everything (run.mjs's `goto` step), so the suite stays short.

use serde_json::{json, Value};

use crate::host::{run_steps, write_host, StaticServer};
use crate::sites::{page_site, PAGE_SITES};
use crate::web::{scratch, Browser};
use pexe2wasm_testkit::corpus;

/// The capture the archive replays (serve.mjs's ARCHIVE): lpdevs-part2's page, as
/// http://example.com/ at this timestamp (archive.mjs).
const ARCHIVE_PAGE: &str = "/web/20130101000000/http://example.com/index.html";
const ARCHIVE_PEXE: &str = "/web/20130101000000/http://example.com/pnacl/Release/part2.pexe";
const RAW_PEXE: &str = "/web/20130101000000id_/http://example.com/pnacl/Release/part2.pexe";

/// A check that some embed of the page got its module this way ("converted" in the
/// browser, or from the "cache"), or that every one did (`all`).
fn source(how: &str, all: bool) -> Value {
    let quant = if all { "every" } else { "some" };
    json!({"eval": format!("(() => {{ const es = [...document.querySelectorAll('embed')]; return es.length > 0 && es.{quant}((e) => e.pexe2wasm?.source === {how:?}); }})()")})
}

/// The steps of one browser's visit of everything: (what a step is for, the step).
fn visits() -> Vec<(String, Value)> {
    let mut steps: Vec<(String, Value)> = Vec::new();
    let mut add = |what: &str, list: Vec<Value>| {
        for s in list {
            steps.push((what.to_owned(), s));
        }
    };
    // The archive's capture first: its pexe is converted here, and lpdevs's page below (the
    // same pexe at another URL) takes it from the cache.
    // (The browser opens ARCHIVE_PAGE first.)
    let lpdevs = page_site("lpdevs-part2");
    add("archive", (lpdevs.steps)());
    add(
        "archive",
        vec![
            // The toolbar and its script came first in <body>, the page's scripts and its
            // embed's manifest are at the archive's rewritten URLs.
            json!({"eval": "window.__wm?.toolbar === true && document.body.firstElementChild?.id === 'wm-ipp-base'"}),
            json!({"eval": "[...document.scripts].some((s) => s.src.endsWith('/web/20130101000000js_/http://example.com/common.js'))"}),
            json!({"eval": "document.querySelector('embed')?.src === location.origin + '/web/20130101000000/http://example.com/pnacl/Release/part2.nmf'"}),
            // The pexe the manifest names (relative) is a redirect to the raw capture, sent
            // as text/plain.
            json!({"eval": format!("fetch({ARCHIVE_PEXE:?}).then((r) => r.redirected && r.url.includes('id_/http://example.com/') && r.headers.get('content-type') === 'text/plain')")}),
            source("converted", true),
        ],
    );
    for site in PAGE_SITES {
        let page = format!("/{}/{}", site.name, site.page);
        add(site.name, vec![json!({"goto": page})]);
        add(site.name, (site.steps)());
        // What each embed ended as (always true: it is there for a failure's report).
        add(
            site.name,
            vec![
                json!({"eval": "[...document.querySelectorAll('embed')].map((e) => ({ id: e.id, readyState: e.readyState, lastError: e.lastError, pexe2wasm: e.pexe2wasm }))"}),
            ],
        );
        if site.name == "lpdevs-part2" {
            add(site.name, vec![source("cache", true)]);
        } else if site.embeds {
            add(site.name, vec![source("converted", false)]);
        }
        // A threaded site again (another URL: WebKitGTK's driver does not always reload a
        // page asked for again): the module from the cache, nothing converted.
        if site.name == "stockfish-pexe" {
            let what = "stockfish, second visit";
            add(what, vec![json!({"goto": format!("{page}?again")})]);
            add(what, (site.steps)());
            add(what, vec![source("cache", true)]);
        }
    }
    // A direct link to a pexe (the archive's raw form, text/plain) through the player page:
    // web's console page; a message typed there is answered.
    add(
        "player",
        vec![
            json!({"goto": format!("/pexe2wasm-host/player.html?src={RAW_PEXE}")}),
            json!({"wait": "document.getElementById('status')?.textContent === 'running'", "ms": 120000}),
            json!({"eval": "document.querySelector('h1').textContent === 'part2.pexe' && document.title === 'part2.pexe (pexe2wasm)'"}),
            json!({"eval": "(document.getElementById('message').value = 'hello', true)"}),
            json!({"click": "#console button"}),
            json!({"wait": "document.getElementById('log').textContent.includes('← hello from NaCl')"}),
            source("cache", true),
            // Another site's pexe is refused, said on the page.
            json!({"goto": "/pexe2wasm-host/player.html?src=http://example.com/app.pexe"}),
            json!({"eval": "document.getElementById('status').textContent.startsWith('error: http://example.com/app.pexe: not a URL of this site')"}),
        ],
    );
    steps
}

/// Every web page site with the drop-in script in `browser`, one browser for all.
fn page_sites_with_the_drop_in(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let Some(lpdevs) = corpus::real_site("lpdevs-part2") else {
        return;
    };
    let dir = scratch(&format!("drop-in-sites-{}", browser.name()));
    let host = dir.join("host");
    if !write_host(&host) {
        return;
    }
    // The sites' URL maps, as a page's config before the script.
    let mut map = serde_json::Map::new();
    for s in PAGE_SITES {
        for (from, to) in s.url_map {
            map.insert((*from).to_owned(), json!(to));
        }
    }
    let config = json!({ "urlMap": map }).to_string();
    let capture = lpdevs.join("pepper_49/getting_started/part2");
    let served = StaticServer::start_with(
        &corpus::sites_dir(),
        &host,
        &[
            ("INJECT_CONFIG", config.as_str()),
            ("ARCHIVE", capture.to_str().unwrap()),
        ],
    );
    let visits = visits();
    let steps = Value::Array(visits.iter().map(|(_, s)| s.clone()).collect());
    let url = format!("{}{ARCHIVE_PAGE}", served.base);
    let report = run_steps(browser, &url, &steps, &dir.join("profile"), &[]);
    eprintln!(
        "{}: {} steps in {} ms",
        browser.name(),
        visits.len(),
        report["totalMs"]
    );
    let got = report["steps"].as_array().cloned().unwrap_or_default();
    let failed: Vec<String> = got
        .iter()
        .zip(&visits)
        .enumerate()
        .filter(|(_, (v, _))| v.is_null() || **v == json!(false))
        .map(|(i, (_, (what, step)))| format!("step {i} of {what}: {step}"))
        .collect();
    assert!(
        failed.is_empty(),
        "in {}, these did not come true:\n{}\n{report:#}",
        browser.name(),
        failed.join("\n")
    );
}

three_browsers!(page_sites_with_the_drop_in: page_sites_with_the_drop_in_chromium, page_sites_with_the_drop_in_firefox, page_sites_with_the_drop_in_webkit);
