//! `pexe2wasm host -o DIR`: the folder a site hosts so that its NaCl pages run with one
//! added `<script src="DIR/pexe2wasm.js"></script>` and no build step (docs/DROP-IN.md):
//! pexe2wasm.js (the drop-in script), the browser host in pexe2wasm/ (as `web` writes it),
//! the converter for the browser (pexe2wasm/convert/converter.wasm, crates/browser-converter,
//! built into this binary by build.rs) and its version, the isolation helper, and the player
//! page (player.html?src=URL: a pexe or manifest of the site, on the console page `web`
//! generates for a bare pexe).

use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

/// The browser converter's module, built by build.rs (empty when it could not be).
pub const CONVERTER_WASM: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/browser-converter.wasm"));

/// Why build.rs could not build the converter, when it could not.
const CONVERTER_MISSING: Option<&str> = option_env!("PEXE2WASM_CONVERTER_MISSING");

/// The converter's version, as the browser's cache keys name it: the crate's version and
/// the start of its module's SHA-256, so that any change of the converter's output (a new
/// module) converts again.
pub fn converter_version(wasm: &[u8]) -> String {
    let hash = Sha256::digest(wasm);
    let hex: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}+{hex}", env!("CARGO_PKG_VERSION"))
}

/// The converter module, or the error that says how to get one.
pub fn converter_wasm() -> Result<&'static [u8]> {
    if CONVERTER_WASM.is_empty() {
        bail!(
            "this pexe2wasm was built without the browser converter ({}): run `rustup target add wasm32-unknown-unknown` (scripts/install-deps.sh does) and build pexe2wasm again, or build it with PEXE2WASM_CONVERTER_WASM=FILE naming a built converter",
            CONVERTER_MISSING.unwrap_or("not built")
        );
    }
    Ok(CONVERTER_WASM)
}

/// Whether `dir` holds a host folder (this command's output). A `web` folder has the drop-in
/// script and the host too, but no converter: it is refused, as its other files are a site's
/// (its own player.html, say).
fn is_host_folder(dir: &Path) -> bool {
    dir.join("pexe2wasm.js").is_file()
        && dir.join("pexe2wasm/embed.js").is_file()
        && dir.join("pexe2wasm/convert/converter.json").is_file()
}

/// Refuses `dir` unless it is new, empty, or `ours` says pexe2wasm wrote it: no user file
/// is overwritten.
pub fn check_folder(dir: &Path, ours: impl Fn(&Path) -> bool, what: &str) -> Result<()> {
    if dir.exists() {
        let mut entries = fs::read_dir(dir)
            .with_context(|| format!("{}: cannot read the folder", dir.display()))?;
        if entries.next().is_some() && !ours(dir) {
            bail!(
                "not empty and not {what} pexe2wasm wrote; give a new or empty folder (nothing there is overwritten)"
            );
        }
    }
    Ok(())
}

/// Writes `bytes` at `rel` under `dir` (its folders created), and notes `rel` in `written`.
pub fn put(dir: &Path, written: &mut Vec<String>, rel: &str, bytes: &[u8]) -> Result<()> {
    let path = dir.join(rel);
    if let Some(d) = path.parent() {
        fs::create_dir_all(d).with_context(|| format!("{}: cannot create", d.display()))?;
    }
    fs::write(&path, bytes).with_context(|| format!("{}: cannot write", path.display()))?;
    written.push(rel.to_owned());
    Ok(())
}

/// The browser host and the converter, in `dir`/pexe2wasm/ (as `host` and `extension`
/// write them).
pub fn put_host_files(dir: &Path, written: &mut Vec<String>) -> Result<()> {
    let wasm = converter_wasm()?;
    for (file, text) in pexe2wasm_webhost::HOST_FILES {
        put(dir, written, &format!("pexe2wasm/{file}"), text.as_bytes())?;
    }
    put(dir, written, "pexe2wasm/convert/converter.wasm", wasm)?;
    let info = serde_json::json!({
        "version": converter_version(wasm),
        "wasm": "converter.wasm",
    });
    put(
        dir,
        written,
        "pexe2wasm/convert/converter.json",
        serde_json::to_string_pretty(&info)?.as_bytes(),
    )
}

/// Writes the host folder into `dir`: a new or empty folder, or a host folder written
/// before (its files are replaced); any other folder is refused, so no user file is
/// overwritten.
pub fn write_host(dir: &Path) -> Result<Vec<String>> {
    converter_wasm()?;
    check_folder(dir, is_host_folder, "a host folder")?;
    let mut written = Vec::new();
    put(
        dir,
        &mut written,
        "pexe2wasm.js",
        pexe2wasm_webhost::drop_in_script().as_bytes(),
    )?;
    put_host_files(dir, &mut written)?;
    let isolation = pexe2wasm_webhost::file("isolation.js").unwrap_or_default();
    put(
        dir,
        &mut written,
        "pexe2wasm-isolation.js",
        isolation.as_bytes(),
    )?;
    put(dir, &mut written, "player.html", player_page().as_bytes())?;
    Ok(written)
}

/// The player page, DIR/player.html: `web`'s generated console page (web/templates/app.html)
/// with the drop-in script for the host's scripts, and web/src/player.js where its `<embed>`
/// was (it makes the embed of the page's `?src=`).
pub fn player_page() -> String {
    const EMBED: &str = "<embed id=\"app\" type=\"application/x-pnacl\" src=\"{{NMF}}\" width=\"{{WIDTH}}\" height=\"{{HEIGHT}}\">";
    // The template is ours: a change that drops this line fails host.rs's tests.
    debug_assert!(pexe2wasm_webhost::APP_PAGE.contains(EMBED));
    pexe2wasm_webhost::app_page_with_drop_in()
        .replace(EMBED, "<script src=\"pexe2wasm/player.js\"></script>")
        .replace("{{TITLE}}", "pexe2wasm player")
}

/// The npm package's name (docs/NPM.md).
pub const NPM_NAME: &str = "pexe2wasm";

/// `host --npm`: the host folder as an npm package (docs/NPM.md): the host folder's files,
/// the ES module entry index.js with its declarations index.d.ts (web/npm), a README, and
/// package.json, whose version is this crate's and whose `files` names exactly what is
/// written, so that `npm pack` packs nothing else.
pub fn write_npm(dir: &Path) -> Result<Vec<String>> {
    let mut written = write_host(dir)?;
    for (file, text) in pexe2wasm_webhost::NPM_FILES {
        let path = dir.join(file);
        fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))?;
        written.push((*file).to_owned());
    }
    // Written as text, not through serde_json's map (which sorts keys): in `exports` a
    // condition's order counts, and "types" must come before "default".
    let package = format!(
        r#"{{
  "name": "{NPM_NAME}",
  "version": "{version}",
  "description": "Runs PNaCl (Portable Native Client) modules in today's browsers: the pexe converted to WebAssembly in the browser, on pexe2wasm's Pepper host",
  "license": "{license}",
  "keywords": ["nacl", "pnacl", "pexe", "pepper", "ppapi", "webassembly"],
  "type": "module",
  "exports": {{
    ".": {{ "types": "./index.d.ts", "default": "./index.js" }},
    "./pexe2wasm.js": "./pexe2wasm.js",
    "./pexe2wasm-isolation.js": "./pexe2wasm-isolation.js",
    "./package.json": "./package.json"
  }},
  "main": "./index.js",
  "types": "./index.d.ts",
  "files": ["index.js", "index.d.ts", "pexe2wasm.js", "pexe2wasm-isolation.js", "pexe2wasm/"]
}}
"#,
        version = env!("CARGO_PKG_VERSION"),
        license = env!("CARGO_PKG_LICENSE"),
    );
    let path = dir.join("package.json");
    fs::write(&path, package).with_context(|| format!("{}: cannot write", path.display()))?;
    written.push("package.json".to_owned());
    Ok(written)
}
