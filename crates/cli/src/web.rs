//! `pexe2wasm web`: a folder that runs a Pepper plugin in a browser as it is. The converted
//! module beside the pexe and its manifest, the drop-in script (pexe2wasm.js) and the browser
//! host (web/src, embedded in this binary) without the browser converter, and a page: a
//! generated one with the app, a message console and its canvas, or the app's own page, each
//! with the drop-in script and a config saying `preconverted` (docs/WEB.md, docs/DROP-IN.md).

use std::fs;
use std::path::{Component, Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

pub use pexe2wasm_webhost::HOST_FILES;

/// What `web` wrote, for its summary.
pub struct Written {
    pub dir: PathBuf,
    pub page: String,
    pub module: String,
    pub copied: Vec<String>,
}

/// The options of `pexe2wasm web`.
pub struct WebArgs<'a> {
    pub input: &'a Path,
    pub out: &'a Path,
    pub page: Option<&'a Path>,
    pub size: (u32, u32),
    /// `--url-map FROM=TO`, as given.
    pub url_map: &'a [String],
    /// `--refuse-unmapped`: URL loads of other origins only through the map.
    pub refuse_unmapped: bool,
}

/// The page config's settings from `--url-map` and `--refuse-unmapped` (`{"urlMap": {FROM:
/// TO}, "refuseUnmapped": true}`; pexe2wasm_site::html::config_element adds `preconverted`).
/// Each FROM and TO must be an absolute URL (scheme://...), a TO may be a path starting with
/// /; a FROM given twice is an error.
pub fn config_settings(
    url_map: &[String],
    refuse_unmapped: bool,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let mut settings = serde_json::Map::new();
    if url_map.is_empty() && !refuse_unmapped {
        return Ok(settings);
    }
    let mut map = serde_json::Map::new();
    for entry in url_map {
        let (from, to) = entry
            .split_once('=')
            .ok_or_else(|| anyhow!("--url-map {entry}: expected FROM=TO"))?;
        for (what, u) in [("FROM", from), ("TO", to)] {
            // A TO that is a path is on the site's own server (whatever host serves it).
            if what == "TO" && u.starts_with('/') && !u.starts_with("//") {
                if u.chars().any(char::is_whitespace) {
                    bail!(
                        "--url-map {entry}: TO must be an absolute URL or a path starting with /"
                    );
                }
                continue;
            }
            let scheme_ok = u.split_once("://").is_some_and(|(s, rest)| {
                !s.is_empty()
                    && !rest.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            });
            if !scheme_ok || u.chars().any(char::is_whitespace) {
                bail!(
                    "--url-map {entry}: {what} must be an absolute URL (scheme://host/...){}",
                    if what == "TO" {
                        " or a path starting with /"
                    } else {
                        ""
                    }
                );
            }
        }
        if map
            .insert(from.to_owned(), serde_json::Value::from(to))
            .is_some()
        {
            bail!("--url-map {entry}: {from} is mapped twice");
        }
    }
    settings.insert("urlMap".into(), map.into());
    if refuse_unmapped {
        settings.insert("refuseUnmapped".into(), true.into());
    }
    Ok(settings)
}

/// A manifest's program: the pexe's URL as the manifest gives it; without a pexe, the
/// x86-64 nexe's (a native app of other architectures only is refused with its words).
fn manifest_program(nmf: &[u8], name: &str) -> Result<String> {
    let v = pexe2wasm_nexe::native::parse_manifest(nmf)
        .with_context(|| format!("{name} is not a JSON manifest"))?;
    if let Some(app) = pexe2wasm_nexe::native::manifest_native_app(&v) {
        // The browser host reads `program["x86-64"]` (web/src/embed.js); glibc's dynamic
        // apps (runnable-ld.so) keep the app's words.
        return v
            .pointer("/program/x86-64/url")
            .and_then(|u| u.as_str())
            .filter(|_| !app.dynamic)
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("{app}"));
    }
    v.pointer("/program/portable/pnacl-translate/url")
        .and_then(|u| u.as_str())
        .map(str::to_owned)
        .ok_or_else(|| {
            anyhow!("{name} names no program.portable.pnacl-translate.url (the entry of a pexe)")
        })
}

/// When `bytes` is a nexe: its module for the browser host when it is a static x86-64
/// Pepper nexe (pexe2wasm_nexe's browser form), else what it is, as an error. `None` for
/// anything else (a pexe).
pub fn nexe_plugin(name: &str, bytes: &[u8]) -> Result<Option<Vec<u8>>> {
    let Some(p) = pexe2wasm_nexe::x86_64::lift::browser::nexe_plugin(bytes) else {
        return Ok(None);
    };
    let p = p.map_err(|e| anyhow!("{e}"))?;
    if let Some((_, first)) = p.not_lifted.first() {
        eprintln!(
            "note: {name}: {} of {} functions are not translated yet and trap if reached (the first: {first})",
            p.not_lifted.len(),
            p.functions
        );
    }
    Ok(Some(p.wasm))
}

/// A relative URL of a file inside the folder: no scheme, no `..`, no root.
fn relative_inside(url: &str) -> Result<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    if url.contains("://") || path.starts_with('/') || path.is_empty() {
        bail!("the manifest's program URL {url:?} is not a relative path beside it");
    }
    let p = PathBuf::from(path);
    if p.components().any(|c| !matches!(c, Component::Normal(_))) {
        bail!("the manifest's program URL {url:?} leaves the manifest's folder");
    }
    Ok(p)
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(d) = path.parent() {
        fs::create_dir_all(d).with_context(|| format!("{}: cannot create", d.display()))?;
    }
    fs::write(path, bytes).with_context(|| format!("{}: cannot write", path.display()))
}

/// The page with the replacement's scripts added before anything of its own (after
/// `<head>`, a charset declaration, or the doctype: `pexe2wasm_site::html::add_scripts`, the
/// same insertion every page of a site gets), `config` (pexe2wasm_site::html::config_element)
/// first.
pub fn add_scripts(page: &[u8], config: &str) -> Vec<u8> {
    let scripts = pexe2wasm_site::html::PageScripts {
        to_root: "",
        to_package: None,
        config,
    };
    pexe2wasm_site::html::add_scripts(page, &scripts)
}

/// Writes the folder (see the module documentation).
pub fn write_folder(args: &WebArgs, convert: impl Fn(&[u8]) -> Result<Vec<u8>>) -> Result<Written> {
    let input = args.input;
    let name = input
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| anyhow!("{}: not a file name", input.display()))?
        .to_owned();
    let bytes = fs::read(input).with_context(|| format!("{}: cannot read", input.display()))?;
    // A nexe given directly is translated (or named) before anything is written.
    let nexe_module = nexe_plugin(&name, &bytes)?;
    fs::create_dir_all(args.out)
        .with_context(|| format!("{}: cannot create", args.out.display()))?;
    let is_nmf = name.to_ascii_lowercase().ends_with(".nmf");
    // (manifest name, pexe path relative to the folder, pexe bytes)
    let (nmf_name, pexe_rel, pexe) = if is_nmf {
        let url = manifest_program(&bytes, &name)?;
        let rel = relative_inside(&url)?;
        let src = input.parent().unwrap_or(Path::new(".")).join(&rel);
        let pexe = fs::read(&src).with_context(|| {
            format!(
                "{}: cannot read the program the manifest names",
                src.display()
            )
        })?;
        write(&args.out.join(&name), &bytes)?;
        (name.clone(), rel, pexe)
    } else {
        let stem = Path::new(&name)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("app")
            .to_owned();
        let nmf_name = format!("{stem}.nmf");
        // A nexe's manifest names it as Chrome's did, by architecture.
        let nmf = if nexe_module.is_some() {
            serde_json::json!({ "program": { "x86-64": { "url": name } } })
        } else {
            serde_json::json!({
                "program": { "portable": { "pnacl-translate": { "url": name } } }
            })
        };
        write(
            &args.out.join(&nmf_name),
            serde_json::to_string_pretty(&nmf)?.as_bytes(),
        )?;
        (nmf_name, PathBuf::from(&name), bytes)
    };
    // A pexe given directly is named by the caller's context; one a manifest names, here.
    let wasm = if let Some(wasm) = nexe_module {
        wasm
    } else if is_nmf {
        let rel = pexe_rel.display().to_string();
        match nexe_plugin(&rel, &pexe).with_context(|| rel.clone())? {
            Some(wasm) => wasm,
            None => convert(&pexe).with_context(|| rel.clone())?,
        }
    } else {
        convert(&pexe)?
    };
    let wasm_rel = pexe_rel.with_extension("wasm");
    write(&args.out.join(&wasm_rel), &wasm)?;
    // The pexe stays beside its module: the manifest names it, and nothing is lost.
    write(&args.out.join(&pexe_rel), &pexe)?;
    // The drop-in script, as `host` writes it; not the converter: the module is here.
    write(
        &args.out.join(pexe2wasm_site::DROP_IN),
        pexe2wasm_webhost::drop_in_script().as_bytes(),
    )?;
    for (file, text) in HOST_FILES {
        write(&args.out.join("pexe2wasm").join(file), text.as_bytes())?;
    }
    let isolation = HOST_FILES
        .iter()
        .find(|(f, _)| *f == "isolation.js")
        .map(|(_, t)| *t)
        .unwrap_or_default();
    write(
        &args.out.join("pexe2wasm-isolation.js"),
        isolation.as_bytes(),
    )?;

    let config =
        pexe2wasm_site::html::config_element(&config_settings(args.url_map, args.refuse_unmapped)?);
    let mut copied = Vec::new();
    let page = match args.page {
        None => {
            let title = Path::new(&nmf_name)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("app");
            let html = pexe2wasm_webhost::app_page_with_drop_in()
                .replace("{{TITLE}}", &pexe2wasm_site::html::attr_escape(title))
                .replace("{{NMF}}", &pexe2wasm_site::html::attr_escape(&nmf_name))
                .replace("{{WIDTH}}", &args.size.0.to_string())
                .replace("{{HEIGHT}}", &args.size.1.to_string())
                .replace(
                    "<script src=\"pexe2wasm-isolation.js\">",
                    &format!("{config}<script src=\"pexe2wasm-isolation.js\">"),
                );
            write(&args.out.join("index.html"), html.as_bytes())?;
            "index.html".to_owned()
        }
        Some(p) => {
            let page_name = p
                .file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| anyhow!("{}: not a file name", p.display()))?
                .to_owned();
            // Bytes, not text: a page in Latin-1 keeps every byte.
            let html =
                fs::read(p).with_context(|| format!("{}: cannot read the page", p.display()))?;
            // The page's folder comes along, subfolders too (its lib/, css/, js/), unless
            // the output already has a file of that name; never the output itself.
            let page_dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let out_canon = fs::canonicalize(args.out)?;
            if fs::canonicalize(page_dir).is_ok_and(|d| d.starts_with(&out_canon)) {
                bail!(
                    "the page's folder {} is inside the output",
                    page_dir.display()
                );
            }
            let tree =
                pexe2wasm_site::Tree::from_dir(page_dir, &pexe2wasm_site::Limits::default())?;
            for (rel, content) in &tree.files {
                let dest = args.out.join(rel.as_str());
                if rel.as_str() == page_name
                    || dest.exists()
                    || fs::canonicalize(page_dir.join(rel.as_str()))
                        .is_ok_and(|f| f.starts_with(&out_canon))
                {
                    continue;
                }
                let pexe2wasm_site::Content::Disk(src) = content else {
                    continue;
                };
                if let Some(d) = dest.parent() {
                    fs::create_dir_all(d)?;
                }
                fs::copy(src, &dest).with_context(|| format!("{}: cannot copy", src.display()))?;
                copied.push(rel.to_string());
            }
            write(&args.out.join(&page_name), &add_scripts(&html, &config))?;
            page_name
        }
    };
    copied.sort();
    Ok(Written {
        dir: args.out.to_path_buf(),
        page,
        module: wasm_rel.display().to_string(),
        copied,
    })
}

/// `web` for a site (a folder, .crx, .zip, manifest.json or page): pexe2wasm_site's
/// pipeline, written into `out`.
pub fn write_site(
    input: &Path,
    out: &Path,
    config: serde_json::Map<String, serde_json::Value>,
    convert: impl Fn(&[u8]) -> std::result::Result<pexe2wasm_site::Module, String> + Sync,
) -> Result<pexe2wasm_site::Report> {
    let opened = pexe2wasm_site::open(input, &pexe2wasm_site::Limits::default())?;
    pexe2wasm_site::check_output(&opened, out)?;
    let site = pexe2wasm_site::build(&opened, &pexe2wasm_site::Options { config }, &convert)?;
    pexe2wasm_site::write(&site, out)?;
    Ok(site.report)
}

/// What `web` wrote, for people: the modules, problems, and what to open.
pub fn print_site_summary(r: &pexe2wasm_site::Report, out: &Path) {
    let nacl_pages = r.pages.iter().filter(|p| p.nacl).count();
    println!(
        "wrote {}: {} files of {}, {} module(s), {} page(s) ({} with NaCl) with the host's scripts",
        out.display(),
        r.files,
        r.title,
        r.modules.iter().filter(|m| m.module.is_some()).count(),
        r.pages.len(),
        nacl_pages
    );
    for k in &r.packages {
        println!(
            "a Chrome {} at {}: {} {}",
            k.kind.label(),
            if k.root.is_empty() {
                "the root"
            } else {
                &k.root
            },
            k.name,
            k.version
        );
    }
    if let Some(crx) = &r.crx {
        println!(
            "crx version {}: {} signature(s), not checked",
            crx.version, crx.signatures
        );
    }
    for m in &r.modules {
        match (&m.module, &m.error) {
            (Some(w), _) => println!("  {} -> {w}", m.pexe),
            (None, Some(e)) => eprintln!("error: {}: {e}", m.pexe),
            (None, None) => {}
        }
    }
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    for s in &r.skipped {
        eprintln!("skipped: {s}");
    }
    println!("{}", r.summary);
    println!(
        "open {} (serve it: pexe2wasm serve {})",
        r.start,
        out.display()
    );
}

/// `batch DIR --site -o OUT`: one site per app under DIR and the gallery
/// (pexe2wasm_site::gallery). A pexe that many apps share is converted once: modules are
/// kept by the pexe's bytes for the whole run. Exit status 1 when any app could not be
/// built.
pub fn batch_sites(
    dir: &Path,
    out: &Path,
    quiet: bool,
    small_code: bool,
) -> Result<std::process::ExitCode> {
    use pexe2wasm_site::gallery::{self, Outcome};
    use std::collections::HashMap;
    use std::sync::Mutex;

    if !dir.is_dir() {
        bail!("{}: not a directory", dir.display());
    }
    let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    let (d, o) = (canon(dir), canon(out));
    if o.starts_with(&d) || d.starts_with(&o) {
        bail!(
            "the output {} and the input {} overlap; the input is never changed: write elsewhere",
            out.display(),
            dir.display()
        );
    }
    let apps = gallery::find_apps(dir)?;
    let previous = gallery::read_previous(out);
    let version = env!("CARGO_PKG_VERSION");
    // Modules by their pexe's bytes, up to CACHE_BYTES of pexes and modules together (a
    // dump of thousands of apps must not hold every module in memory).
    const CACHE_BYTES: usize = 512 << 20;
    type Cached = std::result::Result<pexe2wasm_site::Module, String>;
    let cache: Mutex<(HashMap<Vec<u8>, Cached>, usize)> = Mutex::new((HashMap::new(), 0));
    let converted = std::sync::atomic::AtomicUsize::new(0);
    let convert = |pexe: &[u8]| -> Cached {
        if let Some(hit) = cache.lock().unwrap().0.get(pexe) {
            return hit.clone();
        }
        let r = crate::site_module(pexe, small_code);
        converted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut c = cache.lock().unwrap();
        let size = pexe.len() + r.as_ref().map_or(0, |m| m.wasm.len());
        if c.1 + size <= CACHE_BYTES {
            c.1 += size;
            c.0.insert(pexe.to_vec(), r.clone());
        }
        r
    };
    let mut entries = Vec::new();
    let (mut built, mut skipped, mut failed) = (0, 0, 0);
    for (i, app) in apps.iter().enumerate() {
        let rel = app
            .strip_prefix(dir)
            .ok()
            .and_then(|p| p.to_str())
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .unwrap_or_else(|| {
                app.file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("app")
                    .to_owned()
            });
        let prev = previous.iter().find(|e| e.input == rel);
        let outcome = gallery::build_app(
            app,
            &rel,
            out,
            prev,
            version,
            &pexe2wasm_site::Options::default(),
            &convert,
        );
        let (word, entry) = match outcome {
            Outcome::Built(e) => {
                built += 1;
                ("built", e)
            }
            Outcome::Skipped(e) => {
                skipped += 1;
                ("unchanged", e)
            }
            Outcome::Failed(e) => {
                failed += 1;
                eprintln!("error: {rel}: {}", e.summary);
                ("failed", e)
            }
        };
        if !quiet && word != "failed" {
            eprintln!(
                "[{}/{}] {rel}: {word}; {}",
                i + 1,
                apps.len(),
                entry.summary
            );
        }
        entries.push(entry);
    }
    let title = format!(
        "{} (pexe2wasm)",
        dir.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("NaCl apps")
    );
    gallery::write_gallery(out, &title, &entries)?;
    if !quiet {
        println!(
            "{} apps: {built} built, {skipped} unchanged, {failed} failed; {} distinct pexes converted; {} run here; gallery: {}",
            entries.len(),
            converted.load(std::sync::atomic::Ordering::Relaxed),
            entries.iter().filter(|e| e.runs).count(),
            out.join("index.html").display()
        );
    }
    Ok(if failed > 0 {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_settings_hold_the_url_map_and_refuse_bad_entries() {
        assert!(config_settings(&[], false).unwrap().is_empty());
        assert_eq!(
            serde_json::Value::from(config_settings(&[], true).unwrap()).to_string(),
            r#"{"refuseUnmapped":true,"urlMap":{}}"#
        );
        let s = config_settings(&["ws://localhost:8081/=ws://127.0.0.1:9/".into()], false).unwrap();
        assert_eq!(
            serde_json::Value::from(s).to_string(),
            r#"{"urlMap":{"ws://localhost:8081/":"ws://127.0.0.1:9/"}}"#
        );
        // The page's element: the settings with preconverted, nothing that ends the element.
        let s = config_settings(&["http://a/</script>=/b/".into()], true).unwrap();
        let element = pexe2wasm_site::html::config_element(&s);
        assert!(
            element.starts_with(r#"<script type="application/json" id="pexe2wasm-config">{"preconverted":true,"refuseUnmapped":true,"urlMap":{"http://a/\u003c/script>":"/b/"}}"#),
            "{element}"
        );
        for bad in [
            "no-equals",
            "a=http://b/",
            "http://a/=b",
            "http://a/=//b",
            "http://a/=http://b c/",
        ] {
            let e = config_settings(&[bad.into()], false)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("--url-map {bad}: ")), "{e}");
        }
        let twice = ["http://a/=http://b/".into(), "http://a/=http://c/".into()];
        assert!(config_settings(&twice, false)
            .unwrap_err()
            .to_string()
            .contains("mapped twice"));
    }
}
