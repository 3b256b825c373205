//! `pexe2wasm extension -o DIR [--firefox]`: the browser extension, unpacked (docs/EXTENSION.md).
//! Its own files (web/extension: the manifest, background, content scripts, options page
//! and player script), the player page made from the console page `web` writes for a bare
//! pexe (web/templates/app.html, its inline script moved to a file: extension pages allow
//! no inline script), and the browser host with the converter in pexe2wasm/, the same files
//! `host` writes. Chromium's manifest is MV3 with a service worker; Firefox's (`--firefox`)
//! has background scripts and a `browser_specific_settings.gecko.id`.

use std::path::Path;

use anyhow::{anyhow, Context, Result};
use serde_json::{json, Value};

use crate::host::{check_folder, put, put_host_files};

/// Firefox's id for the extension (its storage and moz-extension:// UUID are keyed by it).
pub const GECKO_ID: &str = "pexe2wasm@pexe2wasm.invalid";

/// Whether `dir` holds an extension this command wrote.
fn is_extension_folder(dir: &Path) -> bool {
    dir.join("pexe2wasm/embed.js").is_file()
        && std::fs::read_to_string(dir.join("manifest.json"))
            .is_ok_and(|m| m.contains("\"pexe2wasm/advertise.js\""))
}

/// The manifest for Chromium (`firefox` false) or Firefox.
pub fn manifest(firefox: bool) -> Result<Value> {
    let text = pexe2wasm_webhost::EXTENSION_FILES
        .iter()
        .find(|(f, _)| *f == "manifest.json")
        .map(|(_, t)| *t)
        .ok_or_else(|| anyhow!("the extension's manifest is missing from this build"))?;
    let mut m: Value = serde_json::from_str(text).context("web/extension/manifest.json")?;
    m["version"] = json!(env!("CARGO_PKG_VERSION"));
    if firefox {
        let o = m.as_object_mut().expect("the manifest is an object");
        // Firefox runs MV3 backgrounds as event pages (scripts), not service workers, and
        // has no manifest keys for an extension page's isolation headers.
        o.insert("background".into(), json!({ "scripts": ["background.js"] }));
        o.remove("cross_origin_embedder_policy");
        o.remove("cross_origin_opener_policy");
        o.insert(
            "browser_specific_settings".into(),
            json!({ "gecko": { "id": GECKO_ID, "strict_min_version": "128.0" } }),
        );
        // Firefox gives extension pages no shared memory, so a direct link to a pexe or
        // manifest becomes the player in place, on its own origin and isolated there
        // (background.js): that takes a blocking webRequest that rewrites the response.
        // The player links to the options page, so a page may open (not frame) it.
        let permissions = m["permissions"]
            .as_array_mut()
            .ok_or_else(|| anyhow!("web/extension/manifest.json: permissions is not a list"))?;
        for p in [
            "webRequest",
            "webRequestBlocking",
            "webRequestFilterResponse",
        ] {
            permissions.push(json!(p));
        }
        let shared = m["web_accessible_resources"][0]["resources"]
            .as_array_mut()
            .ok_or_else(|| anyhow!("web/extension/manifest.json: no web_accessible_resources"))?;
        shared.push(json!("options.html"));
        shared.push(json!(PLAYER_DOCUMENT));
    }
    Ok(m)
}

/// Firefox's player in place: the console page with the placeholders {{TITLE}} and {{NMF}}
/// left for background.js, and no host scripts (the content scripts bring the host).
pub const PLAYER_DOCUMENT: &str = "player-document.html";

/// The document [`PLAYER_DOCUMENT`] holds.
fn player_document() -> Result<String> {
    let page = pexe2wasm_webhost::APP_PAGE
        .replace("{{WIDTH}}", "640")
        .replace("{{HEIGHT}}", "480");
    let page = page
        .replace("<script src=\"pexe2wasm-isolation.js\"></script>\n", "")
        .replace(
            &format!("{}\n", pexe2wasm_webhost::APP_PAGE_HOST_SCRIPTS),
            "",
        );
    if page.contains("pexe2wasm/") || page.contains("pexe2wasm-isolation") {
        return Err(anyhow!(
            "web/templates/app.html: its host scripts are not the ones the extension replaces"
        ));
    }
    // Where Firefox users reach the extension's settings from a pexe they opened.
    Ok(page.replace(
        "<p id=\"status\">",
        "<p><a id=\"options\" href=\"{{OPTIONS}}\">pexe2wasm extension options</a></p>\n<p id=\"status\">",
    ))
}

/// The player page and its console script, from the page `web` writes for a bare pexe.
fn player_page() -> Result<(String, String)> {
    let page = pexe2wasm_webhost::APP_PAGE
        .replace("{{TITLE}}", "pexe2wasm player")
        .replace("{{NMF}}", "")
        .replace("{{WIDTH}}", "640")
        .replace("{{HEIGHT}}", "480")
        .replace("<script src=\"pexe2wasm-isolation.js\"></script>\n", "");
    let open = page
        .rfind("<script>")
        .ok_or_else(|| anyhow!("web/templates/app.html has no inline script"))?;
    let close = page[open..]
        .find("</script>")
        .map(|i| open + i)
        .ok_or_else(|| anyhow!("web/templates/app.html: an unclosed script"))?;
    let script = page[open + "<script>".len()..close].to_owned();
    let html = format!(
        "{}<script src=\"player.js\"></script>\n<script src=\"player-console.js\"></script>{}",
        &page[..open],
        &page[close + "</script>".len()..]
    );
    Ok((html, script))
}

/// Writes the unpacked extension into `dir` (new, empty, or one written before).
pub fn write_extension(dir: &Path, firefox: bool) -> Result<Vec<String>> {
    crate::host::converter_wasm()?;
    check_folder(dir, is_extension_folder, "an extension folder")?;
    let mut written = Vec::new();
    let manifest = manifest(firefox)?;
    put(
        dir,
        &mut written,
        "manifest.json",
        serde_json::to_string_pretty(&manifest)?.as_bytes(),
    )?;
    for (file, text) in pexe2wasm_webhost::EXTENSION_FILES {
        if *file != "manifest.json" {
            put(dir, &mut written, file, text.as_bytes())?;
        }
    }
    let (html, script) = player_page()?;
    put(dir, &mut written, "player.html", html.as_bytes())?;
    put(dir, &mut written, "player-console.js", script.as_bytes())?;
    if firefox {
        put(
            dir,
            &mut written,
            PLAYER_DOCUMENT,
            player_document()?.as_bytes(),
        )?;
    }
    put_host_files(dir, &mut written)?;
    Ok(written)
}
