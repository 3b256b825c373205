//! Finding what a site holds: its pages, NaCl manifests (`.nmf`), pexes and Chrome packages.

use serde::Serialize;
use serde_json::Value;

use crate::chrome::{read_package, Package};
use crate::path::SitePath;
use crate::tree::Tree;

/// A NaCl manifest and what it names.
#[derive(Debug, Clone, Serialize)]
pub struct Nmf {
    pub path: SitePath,
    /// The pnacl program's URL as written, and the file it names in the site.
    pub pnacl_url: Option<String>,
    pub pnacl: Option<SitePath>,
    /// Architectures with a native program (`x86-64`, `x86-32`, `arm`…).
    pub native: Vec<String>,
    /// When it names only native programs (no pexe): what that app is.
    pub native_app: Option<pexe2wasm_nexe::NativeApp>,
    /// What is wrong with it, when something is.
    pub problem: Option<String>,
}

/// What the input holds.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub pages: Vec<SitePath>,
    pub nmfs: Vec<Nmf>,
    /// Files that start with `PEXE`, the pexe magic.
    pub pexes: Vec<SitePath>,
    pub packages: Vec<Package>,
    /// Problems that do not stop the site (a manifest that names a missing file…).
    pub warnings: Vec<String>,
}

impl Scan {
    /// The package whose folder holds `p`, the innermost one.
    pub fn package_of(&self, p: &SitePath) -> Option<&Package> {
        self.packages
            .iter()
            .filter(|k| p.as_str().starts_with(&k.root))
            .max_by_key(|k| k.root.len())
    }
}

pub fn scan(tree: &Tree) -> Scan {
    let mut s = Scan::default();
    for (path, content) in &tree.files {
        match path.ext().as_str() {
            "html" | "htm" => s.pages.push(path.clone()),
            "nmf" => s.nmfs.push(read_nmf(tree, path)),
            _ => {}
        }
        if path.name() == "manifest.json" {
            match read_package(tree, path) {
                Ok(Some(p)) => s.packages.push(p),
                Ok(None) => {}
                Err(why) => s
                    .warnings
                    .push(format!("{path}: a Chrome manifest that is {why}")),
            }
        }
        if content.head(4).is_ok_and(|h| h == b"PEXE") {
            s.pexes.push(path.clone());
        }
    }
    // The x86-64 nexes manifests name as their program are programs too.
    for n in &s.nmfs {
        if let Some(p) = &n.pnacl {
            if !s.pexes.contains(p)
                && tree
                    .get(p)
                    .is_some_and(|c| c.head(4).is_ok_and(|h| pexe2wasm_nexe::is_elf(&h)))
            {
                s.pexes.push(p.clone());
            }
        }
    }
    for n in &s.nmfs {
        if let Some(problem) = &n.problem {
            s.warnings.push(format!("{}: {problem}", n.path));
        } else if let Some(p) = &n.pnacl {
            if !s.pexes.contains(p) {
                s.warnings.push(format!(
                    "{}: names {p}, which is not a pexe (no PEXE header)",
                    n.path
                ));
            }
        }
    }
    s
}

fn read_nmf(tree: &Tree, path: &SitePath) -> Nmf {
    let mut nmf = Nmf {
        path: path.clone(),
        pnacl_url: None,
        pnacl: None,
        native: Vec::new(),
        native_app: None,
        problem: None,
    };
    let v: Value = match tree
        .get(path)
        .map(|c| c.read())
        .transpose()
        .ok()
        .flatten()
        .and_then(|b| pexe2wasm_nexe::native::parse_manifest(&b).ok())
    {
        Some(v) => v,
        None => {
            nmf.problem = Some("not a JSON manifest".into());
            return nmf;
        }
    };
    // `program.ARCH` and the 2011 `nexes.ARCH`.
    nmf.native = pexe2wasm_nexe::native::manifest_native_programs(&v)
        .into_iter()
        .map(|(arch, _)| arch)
        .collect();
    nmf.native_app = pexe2wasm_nexe::native::manifest_native_app(&v);
    // Without a pexe, the x86-64 nexe is the program (the browser host reads
    // `program["x86-64"]`, web/src/embed.js), when the site has it; glibc's dynamic apps
    // stay native apps.
    let nexe = v
        .pointer("/program/x86-64/url")
        .and_then(Value::as_str)
        .filter(|u| {
            nmf.native_app.as_ref().is_some_and(|a| !a.dynamic)
                && path
                    .join_url(u.split(['?', '#']).next().unwrap_or_default())
                    .is_some_and(|p| tree.contains(&p))
        });
    if nexe.is_some() {
        nmf.native_app = None;
    }
    let url = v
        .pointer("/program/portable/pnacl-translate/url")
        .and_then(Value::as_str)
        .or(nexe);
    match url {
        Some(url) => {
            nmf.pnacl_url = Some(url.to_owned());
            let file = url.split(['?', '#']).next().unwrap_or_default();
            match path.join_url(file) {
                Some(p) if tree.contains(&p) => nmf.pnacl = Some(p),
                Some(p) => nmf.problem = Some(format!("names {url:?}, but {p} is not in the site")),
                None => {
                    nmf.problem = Some(format!(
                        "names {url:?}, which is not a file of the site (another server, or outside the site's folder)"
                    ))
                }
            }
        }
        None if nmf.native.is_empty() => {
            nmf.problem = Some("names no program (program.portable.pnacl-translate.url)".into())
        }
        None => {}
    }
    nmf
}

/// Where the host looks for the module of the pexe (or x86-64 nexe) at `pexe`
/// (web/src/embed.js: `.pexe` or `.nexe` replaced by `.wasm`, or `.wasm` added).
pub fn module_path(pexe: &SitePath) -> SitePath {
    if pexe.ext() == "pexe" || pexe.ext() == "nexe" {
        pexe.with_ext("wasm")
    } else {
        SitePath::new(&format!("{pexe}.wasm")).unwrap_or_else(|_| pexe.with_ext("wasm"))
    }
}
