//! Archived NaCl content as archives hold it, made into a static site (docs/SITES.md).
//!
//! The pipeline, one function each:
//! - [`open`] / [`open_archive`]: the input (a folder, a `.crx`, a `.zip`, a Chrome
//!   `manifest.json`, a page) as a [`Tree`] of files by [`SitePath`], every name checked and
//!   every archive bounded by [`Limits`];
//! - [`scan::scan`]: its pages, NaCl manifests, pexes and Chrome packages;
//! - [`build`]: the site's files: every input file at its path, a module beside each pexe
//!   (through the caller's converter), the host's scripts in every page, a launcher per
//!   Chrome package, an index when the root has none, and the [`Report`];
//! - [`write`]: the files into a folder, never outside it.
//!
//! The CLI's `web` and `batch` and the service call these; they stay thin.

pub mod archive;
pub mod chrome;
pub mod error;
pub mod gallery;
pub mod html;
pub mod path;
pub mod scan;
pub mod tree;

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

pub use archive::CrxInfo;
pub use chrome::{Package, PackageKind};
pub use error::{ArchiveError, SiteError};
pub use path::SitePath;
pub use scan::Scan;
pub use tree::{Content, Limits, Tree};

/// The start of every generated page (web/templates/head.html): doctype, charset,
/// viewport and `{{TITLE}}`.
const PAGE_HEAD: &str = include_str!("../../../web/templates/head.html");

/// A page template (which starts with `{{HEAD}}`) with the shared head put in.
pub(crate) fn with_head(template: &str) -> String {
    template.replacen("{{HEAD}}", PAGE_HEAD, 1)
}

/// The launcher page (web/templates/launch.html), written at each Chrome package's root.
const LAUNCH_PAGE: &str = include_str!("../../../web/templates/launch.html");
/// The generated index (web/templates/index.html).
const INDEX_PAGE: &str = include_str!("../../../web/templates/index.html");

/// Names the site's host files take at the root, and at each package's root.
pub const HOST_DIR: &str = "pexe2wasm/";
/// The drop-in script every page loads (pexe2wasm_webhost::drop_in_script, docs/DROP-IN.md).
pub const DROP_IN: &str = "pexe2wasm.js";
pub const ISOLATION: &str = "pexe2wasm-isolation.js";
pub const REPORT: &str = "pexe2wasm-site.json";
pub const LAUNCHER: &str = "pexe2wasm-launch.html";
/// The package's files, for `chrome.runtime.getPackageDirectoryEntry`.
pub const PACKAGE_FILES: &str = "pexe2wasm-files.json";

/// What the input was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputKind {
    Folder,
    Crx,
    Zip,
    ChromeManifest,
    Page,
}

/// An opened input.
#[derive(Debug, Clone)]
pub struct Input {
    /// How to name it to people (the path or file name given).
    pub name: String,
    pub kind: InputKind,
    pub tree: Tree,
    /// The page the user gave, for [`InputKind::Page`].
    pub page: Option<SitePath>,
    pub crx: Option<CrxInfo>,
    /// The folder on disk the tree was read from (not for archives).
    pub dir: Option<PathBuf>,
}

/// Whether `web` treats `path` as a site (a folder, an archive, a Chrome manifest, a
/// page) rather than one module (a pexe or an `.nmf`).
pub fn is_site_input(path: &Path) -> bool {
    if path.is_dir() {
        return true;
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    name == "manifest.json"
        || [".crx", ".zip", ".html", ".htm"]
            .iter()
            .any(|e| name.ends_with(e))
}

/// Opens `path` (see [`is_site_input`]).
pub fn open(path: &Path, limits: &Limits) -> Result<Input, SiteError> {
    let name = path.display().to_string();
    if path.is_dir() {
        let tree = Tree::from_dir(path, limits)?;
        return Ok(Input {
            name,
            kind: InputKind::Folder,
            tree,
            page: None,
            crx: None,
            dir: Some(path.to_path_buf()),
        });
    }
    let file = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| SiteError::UnknownInput(name.clone()))?;
    let lower = file.to_ascii_lowercase();
    if lower.ends_with(".crx") || lower.ends_with(".zip") {
        let bytes = fs::read(path).map_err(|e| SiteError::io("cannot read", path, e))?;
        let mut input = open_archive(&bytes, &name, limits)?;
        input.name = name;
        return Ok(input);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let kind = if lower == "manifest.json" {
        InputKind::ChromeManifest
    } else if lower.ends_with(".html") || lower.ends_with(".htm") {
        InputKind::Page
    } else {
        return Err(SiteError::UnknownInput(name));
    };
    if !path.is_file() {
        return Err(SiteError::io(
            "cannot read",
            path,
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    let tree = Tree::from_dir(&dir, limits)?;
    let page = (kind == InputKind::Page)
        .then(|| SitePath::new(file).ok())
        .flatten();
    if kind == InputKind::ChromeManifest {
        let m = SitePath::new("manifest.json").expect("a plain name");
        if chrome::read_package(&tree, &m)
            .map_err(|why| SiteError::BadManifest {
                path: name.clone(),
                why: format!("a Chrome manifest that is {why}"),
            })?
            .is_none()
        {
            return Err(SiteError::BadManifest {
                path: name,
                why: "not a Chrome app or extension manifest (no manifest_version, no app)".into(),
            });
        }
    }
    Ok(Input {
        name,
        kind,
        tree,
        page,
        crx: None,
        dir: Some(dir),
    })
}

/// Opens an archive held in memory: a `.crx` (recognized by its `Cr24` header) or a zip.
pub fn open_archive(bytes: &[u8], name: &str, limits: &Limits) -> Result<Input, SiteError> {
    let (crx, zip) = archive::split_crx(bytes, name)?;
    let tree = archive::read_zip(zip, name, limits)?;
    Ok(Input {
        name: name.to_owned(),
        kind: if crx.is_some() {
            InputKind::Crx
        } else {
            InputKind::Zip
        },
        tree,
        page: None,
        crx,
        dir: None,
    })
}

/// A converted pexe, as the caller's converter returns it.
#[derive(Debug, Clone)]
pub struct Module {
    pub wasm: Vec<u8>,
    /// What it needs to run, in one line (`pexe2wasm::needs::Needs`'s summary).
    pub needs: String,
    /// Whether it is a Pepper plugin (something a page can embed).
    pub plugin: bool,
}

/// The caller's converter: a pexe's bytes to a module, or why not (one line).
pub type Converter<'a> = dyn Fn(&[u8]) -> Result<Module, String> + Sync + 'a;

/// How to build.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The page config's settings every page gets (`urlMap`, `refuseUnmapped`), written
    /// with `preconverted: true` ([`html::config_element`]).
    pub config: serde_json::Map<String, serde_json::Value>,
}

/// The site's files and its report.
pub struct Site {
    pub files: BTreeMap<SitePath, Content>,
    pub report: Report,
}

/// What a site holds and whether it runs: written as `pexe2wasm-site.json`, shown by the
/// CLI and the service, and read by batch's gallery.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub input: String,
    pub kind: InputKind,
    /// The page to open.
    pub start: SitePath,
    /// The name to show: the Chrome package's, else the start page's title, else the input's.
    pub title: String,
    pub description: String,
    pub icon: Option<SitePath>,
    pub crx: Option<CrxInfo>,
    pub packages: Vec<Package>,
    pub pages: Vec<PageReport>,
    pub modules: Vec<ModuleReport>,
    /// Manifests that name only native (`.nexe`) programs.
    pub native: Vec<NativeReport>,
    pub runs: bool,
    /// One line for people: whether and how it runs here.
    pub summary: String,
    pub warnings: Vec<String>,
    pub skipped: Vec<String>,
    /// Files of the input kept.
    pub files: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct PageReport {
    pub path: SitePath,
    /// Whether it embeds NaCl, or loads a script that does.
    pub nacl: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModuleReport {
    pub pexe: SitePath,
    /// Where its module was written; `None` when it did not convert.
    pub module: Option<SitePath>,
    /// The manifests that name it.
    pub manifests: Vec<SitePath>,
    pub bytes: usize,
    pub needs: Option<String>,
    pub plugin: bool,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NativeReport {
    pub manifest: SitePath,
    pub arches: Vec<String>,
    /// What the app is, in the words every front end uses (pexe2wasm_nexe::NativeApp).
    pub app: pexe2wasm_nexe::NativeApp,
}

fn reserved(p: &SitePath, packages: &[Package]) -> bool {
    let s = p.as_str();
    s.starts_with(HOST_DIR)
        || s == ISOLATION
        || s == DROP_IN
        || s == REPORT
        || packages.iter().any(|k| {
            s == format!("{}{LAUNCHER}", k.root) || s == format!("{}{PACKAGE_FILES}", k.root)
        })
}

/// A program's module: a pexe by the caller's converter; an x86-64 Pepper nexe translated
/// here into the browser host's form (pexe2wasm_nexe's `lift::browser`), any other nexe
/// named.
fn convert_program(bytes: &[u8], convert: &Converter) -> Result<Module, String> {
    match pexe2wasm_nexe::x86_64::lift::browser::nexe_plugin(bytes) {
        None => convert(bytes),
        Some(Err(e)) => Err(e.to_string()),
        Some(Ok(p)) => Ok(Module {
            wasm: p.wasm,
            needs: format!(
                "a Pepper (PPAPI) plugin translated from an x86-64 nexe ({} of {} functions translated)",
                p.lifted, p.functions
            ),
            plugin: true,
        }),
    }
}

/// The site for `input` (module documentation).
pub fn build(input: &Input, opts: &Options, convert: &Converter) -> Result<Site, SiteError> {
    let tree = &input.tree;
    let scan = scan::scan(tree);
    if let Some(taken) = tree.files.keys().find(|p| reserved(p, &scan.packages)) {
        return Err(SiteError::HostNameTaken(taken.to_string()));
    }
    let mut files: BTreeMap<SitePath, Content> = BTreeMap::new();
    let mut warnings = scan.warnings.clone();

    // Modules: every pexe, each distinct one converted once.
    let mut done: HashMap<Arc<[u8]>, Result<Arc<Module>, String>> = HashMap::new();
    let mut modules = Vec::new();
    for pexe in &scan.pexes {
        let bytes = tree.get(pexe).expect("scanned").read()?;
        let manifests: Vec<SitePath> = scan
            .nmfs
            .iter()
            .filter(|n| n.pnacl.as_ref() == Some(pexe))
            .map(|n| n.path.clone())
            .collect();
        let result = done
            .entry(bytes.clone())
            .or_insert_with(|| convert_program(&bytes, convert).map(Arc::new))
            .clone();
        let target = scan::module_path(pexe);
        let mut report = ModuleReport {
            pexe: pexe.clone(),
            module: None,
            manifests,
            bytes: bytes.len(),
            needs: None,
            plugin: false,
            error: None,
        };
        match result {
            Ok(m) => {
                report.needs = Some(m.needs.clone());
                report.plugin = m.plugin;
                if tree.contains(&target) {
                    warnings.push(format!(
                        "{target} is already in the input, so the module of {pexe} is not written (the input's file is kept)"
                    ));
                } else {
                    files.insert(target.clone(), Content::Bytes(Arc::from(m.wasm.as_slice())));
                    report.module = Some(target);
                }
            }
            Err(e) => report.error = Some(e),
        }
        modules.push(report);
    }

    // Pages, each with the host's scripts.
    let mut pages = Vec::new();
    let page_set: std::collections::HashSet<&SitePath> = scan.pages.iter().collect();
    // Whether each script file mentions NaCl, read once however many pages load it.
    let mut script_nacl: HashMap<SitePath, bool> = HashMap::new();
    let config = html::config_element(&opts.config);
    for (p, c) in &tree.files {
        if !page_set.contains(p) {
            files.insert(p.clone(), c.clone());
            continue;
        }
        let bytes = c.read()?;
        let package = scan.package_of(p);
        let to_package = package.and_then(|k| p.up_to(&k.root));
        let to_root = p.to_root();
        let scripts = html::PageScripts {
            to_root: &to_root,
            to_package: to_package.as_deref(),
            config: &config,
        };
        pages.push(PageReport {
            path: p.clone(),
            nacl: page_uses_nacl(tree, p, &bytes, &mut script_nacl),
        });
        files.insert(
            p.clone(),
            Content::Bytes(Arc::from(html::add_scripts(&bytes, &scripts))),
        );
    }

    // Chrome packages: a launcher and the file list at each root.
    for k in &scan.packages {
        let launcher = SitePath::new(&format!("{}{LAUNCHER}", k.root)).expect("a plain name");
        let html = with_head(LAUNCH_PAGE)
            .replace("{{TITLE}}", &html::attr_escape(&k.name))
            .replace("{{ROOT}}", &launcher.to_root())
            .replace("{{CONFIG}}", &config);
        files.insert(launcher, Content::Bytes(Arc::from(html.as_bytes())));
        let list: Vec<&str> = tree
            .under(&k.root)
            .map(|p| &p.as_str()[k.root.len()..])
            .collect();
        let list = serde_json::to_vec(&list).expect("strings");
        files.insert(
            SitePath::new(&format!("{}{PACKAGE_FILES}", k.root)).expect("a plain name"),
            Content::Bytes(Arc::from(list)),
        );
        for p in &k.background {
            if !tree.contains(p) {
                warnings.push(format!(
                    "{}manifest.json: its background {p} is not in the package",
                    k.root
                ));
            }
        }
    }

    // The host.
    for (f, text) in pexe2wasm_webhost::HOST_FILES {
        let p = SitePath::new(&format!("{HOST_DIR}{f}")).expect("host file names are plain");
        files.insert(p, Content::Bytes(Arc::from(text.as_bytes())));
    }
    files.insert(
        SitePath::new(DROP_IN).expect("a plain name"),
        Content::Bytes(Arc::from(pexe2wasm_webhost::drop_in_script().as_bytes())),
    );
    let isolation = pexe2wasm_webhost::file("isolation.js").unwrap_or_default();
    files.insert(
        SitePath::new(ISOLATION).expect("a plain name"),
        Content::Bytes(Arc::from(isolation.as_bytes())),
    );

    let native: Vec<NativeReport> = scan
        .nmfs
        .iter()
        .filter_map(|n| {
            Some(NativeReport {
                manifest: n.path.clone(),
                arches: n.native.clone(),
                app: n.native_app.clone()?,
            })
        })
        .collect();

    // What to open, and the index when the root has none.
    let index = SitePath::new("index.html").expect("a plain name");
    let app = scan
        .packages
        .iter()
        .find(|k| k.kind != PackageKind::HostedApp);
    let title = app.map(|k| k.name.clone()).unwrap_or_else(|| {
        input
            .page
            .as_ref()
            .or(tree.contains(&index).then_some(&index))
            .and_then(|p| page_title(tree, p))
            .unwrap_or_else(|| display_stem(&input.name))
    });
    let start = if let Some(p) = &input.page {
        p.clone()
    } else if let Some(k) = app {
        SitePath::new(&format!("{}{LAUNCHER}", k.root)).expect("a plain name")
    } else {
        index.clone()
    };
    if !tree.contains(&index) {
        let body = index_body(&start, app, &pages, &modules, &native);
        let redirect = if start != index {
            let to = html::attr_escape(start.as_str());
            format!("<meta http-equiv=\"refresh\" content=\"0; url={to}\">\n")
        } else {
            String::new()
        };
        let html = with_head(INDEX_PAGE)
            .replace("{{TITLE}}", &html::attr_escape(&title))
            .replace("{{REDIRECT}}", &redirect)
            .replace("{{BODY}}", &body);
        files.insert(index, Content::Bytes(Arc::from(html.as_bytes())));
    }

    let (runs, summary) = verdict(&scan, &modules, &native);
    let mut report = Report {
        input: input.name.clone(),
        kind: input.kind,
        start,
        title,
        description: app.map(|k| k.description.clone()).unwrap_or_default(),
        icon: app.and_then(|k| k.icon.clone()),
        crx: input.crx.clone(),
        packages: scan.packages.clone(),
        pages,
        modules,
        native,
        runs,
        summary,
        warnings,
        skipped: tree.skipped.clone(),
        files: tree.files.len(),
    };
    report.warnings.dedup();
    let json = serde_json::to_vec_pretty(&report).expect("a report serializes");
    files.insert(
        SitePath::new(REPORT).expect("a plain name"),
        Content::Bytes(Arc::from(json)),
    );
    Ok(Site { files, report })
}

/// Whether the site runs here, and one line that says so.
fn verdict(scan: &Scan, modules: &[ModuleReport], native: &[NativeReport]) -> (bool, String) {
    let failed: Vec<&ModuleReport> = modules.iter().filter(|m| m.error.is_some()).collect();
    let converted = modules.iter().filter(|m| m.module.is_some()).count();
    let mut unavailable: Vec<String> = scan
        .packages
        .iter()
        .flat_map(|k| k.unavailable.iter().map(|u| format!("chrome.{u}")))
        .collect();
    unavailable.dedup();
    let lacks = if unavailable.is_empty() {
        String::new()
    } else {
        format!(
            "; it asks for {}, which a browser tab cannot give (the app gets the error Chrome gave without permission)",
            unavailable.join(", ")
        )
    };
    // Native code only: the manifests' architectures, else a Chrome app's `platforms`
    // (its `_platform_specific` folders) when no manifest was found.
    let platforms: Vec<&str> = scan
        .packages
        .iter()
        .flat_map(|k| k.platforms.iter().map(|(arch, _)| arch.as_str()))
        .collect();
    if modules.is_empty() && (!native.is_empty() || !platforms.is_empty()) {
        let app = if native.is_empty() {
            pexe2wasm_nexe::NativeApp::from_arches(platforms, false)
        } else {
            pexe2wasm_nexe::NativeApp::from_arches(
                native
                    .iter()
                    .flat_map(|n| n.app.arches.iter().map(String::as_str)),
                native.iter().any(|n| n.app.dynamic),
            )
        };
        return (false, app.to_string());
    }
    if let Some(m) = failed.first() {
        return (
            false,
            format!(
                "{} does not convert: {}",
                m.pexe,
                m.error.as_deref().unwrap_or_default()
            ),
        );
    }
    if modules.is_empty() {
        return (
            true,
            format!("no NaCl module in it: the pages are served as they are{lacks}"),
        );
    }
    (
        true,
        format!("runs: {converted} module(s) converted{lacks}"),
    )
}

/// A page embeds NaCl when it, or a script it loads from the site, says
/// `application/x-pnacl` (or a native app's `application/x-nacl`) or names an `.nmf` (the
/// SDK's common.js builds the embed).
/// `scripts` remembers, per script file, whether it mentions NaCl.
fn page_uses_nacl(
    tree: &Tree,
    page: &SitePath,
    bytes: &[u8],
    scripts: &mut HashMap<SitePath, bool>,
) -> bool {
    if html::mentions_nacl(bytes) {
        return true;
    }
    script_srcs(bytes).iter().any(|src| {
        let Some(p) = page.join_url(src.split(['?', '#']).next().unwrap_or_default()) else {
            return false;
        };
        *scripts.entry(p).or_insert_with_key(|p| {
            tree.get(p)
                .and_then(|c| c.read().ok())
                .is_some_and(|b| html::mentions_nacl(&b))
        })
    })
}

/// The `src` values of a page's `<script>` tags (trimmed: pages have `src="example.js "`).
fn script_srcs(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find("<script") {
        let start = from + i;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let tag = &text[start..end];
        let ltag = &lower[start..end];
        if let Some(j) = ltag.find("src=") {
            let v = &tag[j + 4..];
            let val = match v.chars().next() {
                Some(q @ ('"' | '\'')) => v[1..].split(q).next().unwrap_or_default(),
                _ => v.split([' ', '>']).next().unwrap_or_default(),
            };
            out.push(val.trim().to_owned());
        }
        from = end;
    }
    out
}

fn page_title(tree: &Tree, p: &SitePath) -> Option<String> {
    let b = tree.get(p)?.read().ok()?;
    let text = String::from_utf8_lossy(&b);
    let lower = text.to_ascii_lowercase();
    let i = lower.find("<title")?;
    let j = i + lower[i..].find('>')? + 1;
    let k = j + lower[j..].find("</title")?;
    let t = text[j..k].split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

fn display_stem(name: &str) -> String {
    let base = Path::new(name)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(name);
    base.split('.').next().unwrap_or(base).to_owned()
}

fn index_body(
    start: &SitePath,
    app: Option<&Package>,
    pages: &[PageReport],
    modules: &[ModuleReport],
    native: &[NativeReport],
) -> String {
    let e = html::attr_escape;
    let mut s = String::new();
    if let Some(k) = app {
        s.push_str(&format!(
            "<p>A Chrome {}: <a href=\"{}\">launch {}</a>.</p>\n",
            if k.kind == PackageKind::Extension {
                "extension"
            } else {
                "app"
            },
            e(start.as_str()),
            e(&k.name)
        ));
    }
    let mut sorted: Vec<&PageReport> = pages.iter().collect();
    sorted.sort_by_key(|p| !p.nacl);
    if !sorted.is_empty() {
        s.push_str("<h2>Pages</h2>\n<ul>\n");
        for p in sorted {
            let class = if p.nacl { " class=\"nacl\"" } else { "" };
            let tag = if p.nacl { " (NaCl)" } else { "" };
            s.push_str(&format!(
                "<li{class}><a href=\"{0}\">{0}</a>{tag}</li>\n",
                e(p.path.as_str())
            ));
        }
        s.push_str("</ul>\n");
    }
    for m in modules.iter().filter(|m| m.error.is_some()) {
        s.push_str(&format!(
            "<p class=\"bad\">{}: {}</p>\n",
            e(m.pexe.as_str()),
            e(m.error.as_deref().unwrap_or_default())
        ));
    }
    for n in native {
        s.push_str(&format!(
            "<p class=\"bad\">{}: {}.</p>\n",
            e(n.manifest.as_str()),
            e(&n.app.to_string())
        ));
    }
    s
}

/// Refuses an output folder inside the input folder, or one that holds it: the input is
/// never changed, and a site written into its own input would be read again next time.
pub fn check_output(input: &Input, out: &Path) -> Result<(), SiteError> {
    let Some(dir) = &input.dir else { return Ok(()) };
    let canon = |p: &Path| -> PathBuf {
        // The output may not exist yet: its nearest existing ancestor, plus the rest.
        let mut existing = p.to_path_buf();
        let mut rest = Vec::new();
        while !existing.exists() {
            match (existing.file_name(), existing.parent()) {
                (Some(n), Some(parent)) => {
                    rest.push(n.to_owned());
                    existing = if parent.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        parent.to_path_buf()
                    };
                }
                _ => break,
            }
        }
        let mut c = fs::canonicalize(&existing).unwrap_or(existing);
        for n in rest.into_iter().rev() {
            c.push(n);
        }
        c
    };
    let (i, o) = (canon(dir), canon(out));
    let relation = if o.starts_with(&i) {
        "inside"
    } else if i.starts_with(&o) {
        "around"
    } else {
        return Ok(());
    };
    Err(SiteError::OutputOverlapsInput {
        out: out.display().to_string(),
        input: dir.display().to_string(),
        relation,
    })
}

/// Writes the site's files under `out` (created when missing). Each file goes to
/// `out/PATH` with every folder on the way checked not to be a link, so nothing lands
/// outside `out` even when `out` holds links from before.
pub fn write(site: &Site, out: &Path) -> Result<(), SiteError> {
    fs::create_dir_all(out).map_err(|e| SiteError::io("cannot create", out, e))?;
    let mut made: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (p, c) in &site.files {
        let mut dir = out.to_path_buf();
        let mut key = String::new();
        for comp in p.dir().split('/').filter(|s| !s.is_empty()) {
            dir.push(comp);
            key.push_str(comp);
            key.push('/');
            if made.contains(&key) {
                continue;
            }
            match fs::symlink_metadata(&dir) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(SiteError::Unwritable {
                        path: dir.display().to_string(),
                        why: "a link is in the way (nothing is written through links)".into(),
                    })
                }
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(SiteError::Unwritable {
                        path: dir.display().to_string(),
                        why: "a file is in the way of a folder".into(),
                    })
                }
                Err(_) => {
                    fs::create_dir(&dir).map_err(|e| SiteError::io("cannot create", &dir, e))?
                }
            }
            made.insert(key.clone());
        }
        let target = dir.join(p.name());
        if fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(SiteError::Unwritable {
                path: target.display().to_string(),
                why: "a link is in the way (nothing is written through links)".into(),
            });
        }
        match c {
            Content::Bytes(b) => fs::write(&target, b),
            Content::Disk(src) => fs::copy(src, &target).map(|_| ()),
        }
        .map_err(|e| SiteError::io("cannot write", &target, e))?;
    }
    Ok(())
}

/// The site as a zip (what the service answers): every file at its path, deflated (the
/// modules and pages compress well), in path order.
pub fn to_zip(site: &Site) -> Result<Vec<u8>, SiteError> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(false);
    let err = |p: &SitePath, e: String| SiteError::Unwritable {
        path: p.to_string(),
        why: e,
    };
    for (p, c) in &site.files {
        let bytes = c.read()?;
        w.start_file(p.as_str(), opts)
            .map_err(|e| err(p, e.to_string()))?;
        w.write_all(&bytes).map_err(|e| err(p, e.to_string()))?;
    }
    let cursor = w.finish().map_err(|e| SiteError::Unwritable {
        path: "the zip".into(),
        why: e.to_string(),
    })?;
    Ok(cursor.into_inner())
}
