//! Pepper nexes in the browser through `pexe2wasm web`, as pexes: the app's own manifest
//! (`program["x86-64"]`, no pexe) picks the x86-64 nexe, which is translated into the
//! module the browser host runs (its memory imported shared, docs/NEXE.md); ckauth
//! (../shared/fixtures/nexe, SOURCES.md) answers its page's messages in Chromium, Firefox
//! and WebKitGTK as it does on the command-line host; nassh (threaded) runs a `-V` session.

use std::path::{Path, PathBuf};

use pexe2wasm_testkit::corpus::{nexe_corpus_dir, real_nexe};

use crate::web::{bin, run_page, scratch, text, web_dir, Browser};

const CKAUTH: &str = "ckauth-x86_64.nexe";
const PLAIN: &str = "<x>10.0.0.7</x><ip>127.0.0.1</ip>";

/// The app's folder as its manifest lays it out, in DIR/app: the corpus's own `ckauth.nmf`
/// and the x86-64 nexe under the name it gives (the dump keeps the nexe elsewhere).
/// `None` without the corpus.
fn ckauth_app(dir: &Path) -> Option<PathBuf> {
    let nexe = real_nexe(CKAUTH)?;
    let nmf = real_nexe("ckauth-x86_64/newlib/Release/ckauth.nmf")?;
    let app = dir.join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("ckauth.nmf"), nmf).unwrap();
    std::fs::write(app.join("ckauth_x86_64.nexe"), nexe).unwrap();
    Some(app.join("ckauth.nmf"))
}

/// The module `web` wrote: valid, its memory imported shared as the browser host needs.
fn browser_module(path: &Path) -> Vec<u8> {
    let wasm = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    wasmparser::Validator::new()
        .validate_all(&wasm)
        .expect("the nexe's browser module validates");
    let mem = wasmparser::Parser::new(0)
        .parse_all(&wasm)
        .find_map(|p| match p.unwrap() {
            wasmparser::Payload::ImportSection(r) => r
                .into_imports()
                .map(Result::unwrap)
                .find(|i| i.module == "env" && i.name == "memory"),
            _ => None,
        })
        .expect("env.memory is imported");
    assert!(
        matches!(mem.ty, wasmparser::TypeRef::Memory(t) if t.shared && t.maximum == Some(65536)),
        "{mem:?}"
    );
    wasm
}

/// `web` given the app's manifest writes the module beside the nexe it names, keeps the
/// manifest as it is; given the nexe itself, a manifest naming it by architecture.
#[test]
fn web_translates_the_x86_64_nexe_an_app_manifest_names() {
    let d = scratch("nexe-folder");
    let Some(nmf) = ckauth_app(&d) else { return };
    let site = d.join("site");
    let o = bin()
        .arg("web")
        .arg(&nmf)
        .arg("-o")
        .arg(&site)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    browser_module(&site.join("ckauth_x86_64.wasm"));
    assert_eq!(
        std::fs::read(site.join("ckauth.nmf")).unwrap(),
        std::fs::read(&nmf).unwrap(),
        "the app's manifest is kept"
    );
    assert!(site.join("ckauth_x86_64.nexe").exists());

    let direct = d.join("direct");
    let nexe = nexe_corpus_dir().join(CKAUTH);
    let o = bin()
        .arg("web")
        .arg(&nexe)
        .arg("-o")
        .arg(&direct)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    browser_module(&direct.join("ckauth-x86_64.wasm"));
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(direct.join("ckauth-x86_64.nmf")).unwrap()).unwrap();
    assert_eq!(
        written,
        serde_json::json!({"program": {"x86-64": {"url": CKAUTH}}})
    );
    let page = std::fs::read_to_string(direct.join("index.html")).unwrap();
    assert!(page.contains("ckauth-x86_64.nmf"), "{page}");

    // A command-line nexe is no plugin: `run` runs it.
    let hello = nexe_corpus_dir().join("nacl-hello_world-x86_64.nexe");
    let o = bin()
        .arg("web")
        .arg(&hello)
        .arg("-o")
        .arg(d.join("hello"))
        .output()
        .unwrap();
    crate::cmd::fails_saying(&o, 1, "not a Pepper plugin; run it with `pexe2wasm run`");
    assert!(!d.join("hello").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// `batch --site` over a dump holding the ckauth app with its nexe where its manifest
/// says: the app is built with the nexe's module beside it and counted as running.
#[test]
fn batch_site_builds_an_app_of_an_x86_64_nexe() {
    let d = scratch("nexe-batch-site");
    let corpus = nexe_corpus_dir().join("ckauth-x86_64");
    let Some(nexe) = real_nexe(CKAUTH) else {
        return;
    };
    if real_nexe("ckauth-x86_64/manifest.json").is_none() {
        return;
    }
    let app = d.join("dump/ckauth");
    for f in crate::web::files_under(&corpus) {
        let dest = app.join(&f);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(corpus.join(&f), dest).unwrap();
    }
    std::fs::write(app.join("newlib/Release/ckauth_x86_64.nexe"), nexe).unwrap();
    let out = d.join("out");
    let o = bin()
        .arg("batch")
        .arg(d.join("dump"))
        .arg("--site")
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(
        text(&o.stdout).contains("1 apps: 1 built, 0 unchanged, 0 failed;")
            && text(&o.stdout).contains("; 1 run here"),
        "{}",
        text(&o.stdout)
    );
    let g: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("gallery.json")).unwrap()).unwrap();
    let entry = &g[0];
    assert_eq!(entry["runs"], true, "{g:#}");
    let start = entry["start"].as_str().unwrap();
    let root = out.join(start.split('/').next().unwrap());
    browser_module(&root.join("newlib/Release/ckauth_x86_64.wasm"));
    let _ = std::fs::remove_dir_all(&d);
}

/// What ckauth sealed on the command-line host (`encrypted|…` without the prefix).
fn sealed_on_the_command_line() -> String {
    let nexe = nexe_corpus_dir().join(CKAUTH);
    let o = pexe2wasm_testkit::output_with_stdin(
        std::process::Command::new(env!("CARGO_BIN_EXE_pexe2wasm")).args([
            "run",
            nexe.to_str().unwrap(),
            "--timeout",
            "60",
        ]),
        format!("encrypt|{PLAIN}\n").as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    out.strip_prefix("encrypted|")
        .unwrap_or_else(|| panic!("{out:?}"))
        .trim_end()
        .to_owned()
}

/// ckauth on the SDK-style page, from its own manifest: it loads, seals a text
/// (`encrypted|…`, the text not readable in it) and opens what the command-line host
/// sealed (`decrypted|` and the text).
fn ckauth(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let d = scratch(&format!("nexe-ckauth-{}", browser.name()));
    let Some(nmf) = ckauth_app(&d) else { return };
    let sealed = sealed_on_the_command_line();
    let o = bin()
        .arg("web")
        .arg("--refuse-unmapped")
        .arg(&nmf)
        .arg("-o")
        .arg(d.join("site"))
        .arg("--page")
        .arg(web_dir().join("tests/browser/pages/sdk-page.html"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let sends = serde_json::json!([format!("encrypt|{PLAIN}"), format!("decrypt|{sealed}")]);
    let r = run_page(
        browser,
        &d,
        "sdk-page.html?nmf=ckauth.nmf",
        "messages",
        &[("MESSAGES", &sends.to_string()), ("EXPECT", "2")],
    );
    assert_eq!(r["events"], serde_json::json!(["load"]), "{r:#}");
    let m = r["messages"].as_array().unwrap();
    assert_eq!(m.len(), 2, "{r:#}");
    let first = m[0].as_str().unwrap_or_default();
    let got = first
        .strip_prefix("encrypted|")
        .unwrap_or_else(|| panic!("{r:#}"));
    assert!(!got.is_empty() && !got.contains("10.0.0.7"), "{r:#}");
    assert_eq!(m[1], format!("decrypted|{PLAIN}"), "{r:#}");
    let _ = std::fs::remove_dir_all(&d);
}

three_browsers!(ckauth: ckauth_nexe_answers_its_messages_in_chromium, ckauth_nexe_answers_its_messages_in_firefox, ckauth_nexe_answers_its_messages_in_webkit);

const SSH: &str = "nassh-ssh_client-x86_64.nexe";

/// nassh's plugin (PNaCl-translated, threaded: its module keeps its shared memory and the
/// host gives it a thread pool) on the SDK-style page, from its own manifest: given its
/// standard streams (`onOpenFile`) and a session with ssh's argv `-V`, its session thread
/// writes the version to fd 2 and ends with `exit [0]`, as on the command-line host.
fn nassh(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let (Some(nexe), Some(nmf)) = (
        real_nexe(SSH),
        real_nexe("nassh-ssh_client-x86_64/plugin/pnacl/ssh_client.nmf"),
    ) else {
        return;
    };
    let d = scratch(&format!("nexe-nassh-{}", browser.name()));
    let app = d.join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("ssh_client.nmf"), nmf).unwrap();
    std::fs::write(app.join("ssh_client_nl_x86_64.nexe"), nexe).unwrap();
    let o = bin()
        .arg("web")
        .arg(app.join("ssh_client.nmf"))
        .arg("-o")
        .arg(d.join("site"))
        .arg("--page")
        .arg(web_dir().join("tests/browser/pages/sdk-page.html"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    browser_module(&d.join("site/ssh_client_nl_x86_64.wasm"));
    let open = |fd: u32| serde_json::json!({"name": "onOpenFile", "arguments": [fd, true, true]});
    let sends = serde_json::json!([
        open(0),
        open(1),
        open(2),
        {"name": "startSession", "arguments": [{"terminalWidth": 80, "terminalHeight": 24,
            "useJsSocket": false, "environment": {}, "writeWindow": 8192, "arguments": ["-V"]}]}
    ]);
    let r = run_page(
        browser,
        &d,
        "sdk-page.html?nmf=ssh_client.nmf",
        "messages",
        &[("MESSAGES", &sends.to_string()), ("EXPECT", "5")],
    );
    assert_eq!(r["events"], serde_json::json!(["load"]), "{r:#}");
    let m = r["messages"].as_array().unwrap();
    let mut stderr = Vec::new();
    for w in m.iter().filter(|m| m["name"] == "write") {
        assert_eq!(w["arguments"][0], 2, "{r:#}");
        for b in w["arguments"][1]["arrayBuffer"].as_array().unwrap() {
            stderr.push(b.as_u64().unwrap() as u8);
        }
    }
    assert_eq!(
        String::from_utf8_lossy(&stderr),
        "OpenSSH_8.8p1, OpenSSL 1.0.2k  26 Jan 2017\r\n",
        "{r:#}"
    );
    let exit = m.iter().position(|m| m["name"] == "exit");
    assert!(exit > m.iter().rposition(|m| m["name"] == "write"), "{r:#}");
    assert_eq!(
        m[exit.unwrap()]["arguments"],
        serde_json::json!([0]),
        "{r:#}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

three_browsers!(nassh: nassh_nexe_runs_a_version_session_in_chromium, nassh_nexe_runs_a_version_session_in_firefox, nassh_nexe_runs_a_version_session_in_webkit);

// --- nexes translated in the browser (the drop-in script) ------------------------------

/// ckauth's own manifest on a page that embeds it as native apps did
/// (`application/x-nacl`, the type its own common.js picks for a newlib build, after
/// testing `navigator.mimeTypes` for it), served with only the drop-in script added and
/// no `.wasm` beside the nexe: the nexe is translated in the browser, the module answers
/// as on the command-line host, and a second visit takes it from the cache.
fn ckauth_drop_in(browser: Browser) {
    use serde_json::json;
    if !browser.ready() {
        return;
    }
    let root = scratch(&format!("nexe-drop-in-root-{}", browser.name()));
    let Some(nmf) = ckauth_app(&root) else { return };
    let sealed = sealed_on_the_command_line();
    let js = |s: String| serde_json::to_string(&s).unwrap();
    let page = format!(
        r#"<!doctype html><html><head><title>ckauth</title></head><body>
<embed id="m" type="application/x-nacl" src="ckauth.nmf" width="0" height="0">
<script>
window.got = [];
const m = document.getElementById("m");
m.addEventListener("message", (e) => got.push(String(e.data)));
m.addEventListener("load", () => {{ m.postMessage({}); m.postMessage({}); }});
</script></body></html>"#,
        js(format!("encrypt|{PLAIN}")),
        js(format!("decrypt|{sealed}")),
    );
    std::fs::write(nmf.with_file_name("index.html"), page).unwrap();
    let answered = json!({"wait": "window.got.length >= 2", "ms": 240000});
    let source = |s: &str| json!({"eval": format!("document.getElementById('m').pexe2wasm?.source === {s:?}")});
    let steps = json!([
        {"eval": "navigator.mimeTypes['application/x-nacl']?.enabledPlugin?.name === 'Native Client' && navigator.plugins['Native Client']?.length === 2"},
        answered,
        {"eval": "got[0].startsWith('encrypted|') && got[0].length > 10 && !got[0].includes('10.0.0.7')"},
        {"eval": format!("got[1] === {}", js(format!("decrypted|{PLAIN}")))},
        source("converted"),
        {"reload": true},
        answered,
        {"eval": format!("got[1] === {}", js(format!("decrypted|{PLAIN}")))},
        source("cache"),
    ]);
    let Some(report) = crate::host::drop_in(browser, &root, "ckauth", "/app/index.html", &steps)
    else {
        return;
    };
    assert_eq!(
        crate::host::console_with(&report, "converted in the browser in"),
        1,
        "{report:#}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

both_browsers!(ckauth_drop_in: ckauth_nexe_is_translated_in_chromium, ckauth_nexe_is_translated_in_firefox);
