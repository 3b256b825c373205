//! Many apps at once: a tree of sites, Chrome packages, `.crx` and `.zip` files made into
//! one site per app under an output folder, and a gallery (`index.html`, `gallery.json`)
//! that names each app, what it needs and whether it runs, and links to it.
//!
//! Resumable: an app whose input did not change since its last build (same files, sizes
//! and times, same converter) is skipped. One bad package is one error line in the gallery,
//! never the end of the run.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::SiteError;
use crate::html::attr_escape;
use crate::{build, check_output, open, write, Converter, Limits, Options, Report};

/// The gallery page (web/templates/gallery.html).
const GALLERY_PAGE: &str = include_str!("../../../web/templates/gallery.html");

/// One app in the gallery.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    /// Its folder under the output (and its URL from the gallery).
    pub slug: String,
    /// The input, relative to the tree given.
    pub input: String,
    pub title: String,
    pub description: String,
    /// The icon's URL from the gallery, when the app has one.
    pub icon: Option<String>,
    /// The page to open, from the gallery; `None` when the app could not be built.
    pub start: Option<String>,
    /// "app", "extension", "site"…
    pub kind: String,
    pub runs: bool,
    /// Whether and how it runs (the site report's summary), or why it was not built.
    pub summary: String,
    /// Chrome permissions it asks for.
    pub permissions: Vec<String>,
    /// Fingerprint of the input when it was built.
    pub fingerprint: String,
}

/// The apps found under `root`: each `.crx` and `.zip`, each folder with a Chrome
/// `manifest.json`, and each folder with a page or a NaCl manifest at its top; a folder
/// with none of these is searched further. `root` itself is one app when it is one.
pub fn find_apps(root: &Path) -> Result<Vec<PathBuf>, SiteError> {
    let mut out = Vec::new();
    if is_app_dir(root)? {
        out.push(root.to_path_buf());
        return Ok(out);
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<_> = fs::read_dir(&d)
            .map_err(|e| SiteError::io("cannot list", &d, e))?
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_symlink() {
                continue;
            }
            let name = e.file_name().to_string_lossy().to_ascii_lowercase();
            if ft.is_file() && (name.ends_with(".crx") || name.ends_with(".zip")) {
                out.push(p);
            } else if ft.is_dir() && !name.starts_with('.') {
                if is_app_dir(&p)? {
                    out.push(p);
                } else {
                    stack.push(p);
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

fn is_app_dir(d: &Path) -> Result<bool, SiteError> {
    for e in fs::read_dir(d)
        .map_err(|e| SiteError::io("cannot list", d, e))?
        .flatten()
    {
        let n = e.file_name().to_string_lossy().to_ascii_lowercase();
        if e.file_type().is_ok_and(|t| t.is_file())
            && (n == "manifest.json"
                || n.ends_with(".html")
                || n.ends_with(".htm")
                || n.ends_with(".nmf"))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A fingerprint of an input (names, sizes and modification times of its files, and the
/// converter's version): what decides whether a build is still current.
pub fn fingerprint(input: &Path, version: &str) -> String {
    let mut h = DefaultHasher::new();
    version.hash(&mut h);
    let mut stack = vec![input.to_path_buf()];
    let mut files = Vec::new();
    while let Some(p) = stack.pop() {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => {
                for e in fs::read_dir(&p).into_iter().flatten().flatten() {
                    stack.push(e.path());
                }
            }
            Ok(m) => files.push((p, m.len(), m.modified().ok())),
            Err(_) => {}
        }
    }
    files.sort();
    files.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// A folder name for the app at `input` (relative `rel`): its path with `/` as `--`,
/// letters, digits, `-`, `_` and `.` kept.
pub fn slug(rel: &str) -> String {
    let s: String = rel
        .trim_end_matches('/')
        .replace('/', "--")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.').to_owned();
    if s.is_empty() {
        "app".into()
    } else {
        s
    }
}

/// How one app went, for the caller's progress line.
pub enum Outcome {
    Built(Entry),
    Skipped(Entry),
    Failed(Entry),
}

/// Builds one app of the gallery into `out/slug`, unless `previous` says it is current.
pub fn build_app(
    input: &Path,
    rel: &str,
    out: &Path,
    previous: Option<&Entry>,
    version: &str,
    opts: &Options,
    convert: &Converter,
) -> Outcome {
    let slug = slug(rel);
    let fp = fingerprint(input, version);
    if let Some(p) = previous {
        if p.fingerprint == fp && p.start.is_some() && out.join(&slug).join(crate::REPORT).is_file()
        {
            return Outcome::Skipped(p.clone());
        }
    }
    let dest = out.join(&slug);
    let result = (|| -> Result<Report, SiteError> {
        let opened = open(input, &Limits::default())?;
        check_output(&opened, &dest)?;
        let site = build(&opened, opts, convert)?;
        if dest.exists() {
            fs::remove_dir_all(&dest).map_err(|e| SiteError::io("cannot replace", &dest, e))?;
        }
        write(&site, &dest)?;
        Ok(site.report)
    })();
    match result {
        Ok(r) => Outcome::Built(Entry {
            start: Some(format!("{slug}/{}", r.start)),
            icon: r.icon.as_ref().map(|i| format!("{slug}/{i}")),
            kind: r
                .packages
                .first()
                .map_or("site", |k| k.kind.label())
                .to_owned(),
            permissions: r
                .packages
                .iter()
                .flat_map(|k| k.permissions.clone())
                .collect(),
            title: r.title,
            description: r.description,
            runs: r.runs,
            summary: r.summary,
            slug,
            input: rel.to_owned(),
            fingerprint: fp,
        }),
        Err(e) => Outcome::Failed(Entry {
            title: rel.to_owned(),
            description: String::new(),
            icon: None,
            start: None,
            kind: "unreadable".into(),
            runs: false,
            summary: e.to_string(),
            permissions: Vec::new(),
            slug,
            input: rel.to_owned(),
            fingerprint: String::new(),
        }),
    }
}

/// The gallery's JSON (as written to `gallery.json`), read back for a resumed run.
pub fn read_previous(out: &Path) -> Vec<Entry> {
    fs::read(out.join("gallery.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Writes `gallery.json` and `index.html` into `out`.
pub fn write_gallery(out: &Path, title: &str, entries: &[Entry]) -> Result<(), SiteError> {
    let json = serde_json::to_vec_pretty(entries).expect("entries serialize");
    let p = out.join("gallery.json");
    fs::write(&p, json).map_err(|e| SiteError::io("cannot write", &p, e))?;
    let e = attr_escape;
    let mut cards = String::new();
    for a in entries {
        let icon = a
            .icon
            .as_ref()
            .map(|i| format!("<img src=\"{}\" alt=\"\" width=\"64\" height=\"64\">", e(i)))
            .unwrap_or_else(|| "<div class=\"noicon\"></div>".into());
        let name = match &a.start {
            Some(s) => format!("<a href=\"{}\">{}</a>", e(s), e(&a.title)),
            None => e(&a.title),
        };
        let needs = if a.permissions.is_empty() {
            String::new()
        } else {
            format!(
                "<p class=\"needs\">asks for: {}</p>",
                e(&a.permissions.join(", "))
            )
        };
        cards.push_str(&format!(
            "<li class=\"{}\">{icon}<div><h2>{name}</h2><p class=\"kind\">{} · {}</p><p>{}</p>{needs}<p class=\"status\">{}</p></div></li>\n",
            if a.runs { "runs" } else { "no" },
            e(&a.kind),
            e(&a.input),
            e(&a.description),
            e(&a.summary),
        ));
    }
    let runs = entries.iter().filter(|a| a.runs).count();
    let html = crate::with_head(GALLERY_PAGE)
        .replace("{{TITLE}}", &e(title))
        .replace(
            "{{COUNT}}",
            &format!("{runs} of {} run here", entries.len()),
        )
        .replace("{{CARDS}}", &cards);
    let p = out.join("index.html");
    fs::write(&p, html).map_err(|e| SiteError::io("cannot write", &p, e))
}
