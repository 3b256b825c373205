//! `pexe2wasm batch`: converts every pexe under a directory, and every pexe its NaCl
//! manifests (`.nmf`) name, into a mirrored output tree, and reports on each file.
//!
//! Three steps: [`plan`] finds the work ([`discover`] walks the tree and reads the
//! manifests), [`Plan::run`] converts the pexes in parallel (one failure never stops the
//! others), [`write_reports`] writes `report.json` ([`Report`]) and `report.md`.
//!
//! Safety of the user's files: inputs are only read; outputs are written only inside the
//! output directory, each to a temporary name and renamed into place once complete, so a
//! file that fails leaves no `.wasm` (a stale one from an earlier run is removed, so the
//! tree agrees with the report). The output directory may lie inside the input directory
//! (it is then not scanned) but may not be it or contain it.

use pexe2wasm::bitstream::Position;
use pexe2wasm::convert::{convert_module, ConvertError, ConvertOptions};
use pexe2wasm::needs::{Host, Needs};
use pexe2wasm::ErrorClass;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

/// Version of the `report.json` layout; bumped when a field changes meaning or goes away.
/// 2: a conversion failure's kind is its [`ErrorClass`] (`input`, `unsupported`,
/// `internal`) instead of the stage that failed; every member of a position is present.
/// 3: a Pepper plugin needs `pepper` (the command-line host runs it) or `browser` (it uses
/// interfaces only a browser backs, listed in `needs.lacking`); `converted_by_host` counts
/// both.
pub const REPORT_SCHEMA: u32 = 3;

/// The manifest key of the program a browser runs: the only one a batch converts (besides
/// `files` entries that are pexes). The SDK's `pnacl-debug` entry names unfinalized LLVM
/// bitcode (`*_unstripped.bc`), not a pexe: it is reported as skipped.
pub const PNACL_TRANSLATE: &str = "program.portable.pnacl-translate";

/// Manifests larger than this are refused rather than read (real ones are under 1 KiB).
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// Why a whole batch could not run (per-file problems go into the report instead). The
/// messages name their path; the `io::Error` is the source, not repeated in the message
/// (an error chain prints it once).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("{}: cannot read the input directory", path.display())]
    Input { path: PathBuf, source: io::Error },
    #[error("{}: cannot create the output directory", path.display())]
    Output { path: PathBuf, source: io::Error },
    /// Outputs would land among the inputs.
    #[error(
        "{}: the output directory must not be the input directory or contain it",
        path.display()
    )]
    Overlap { path: PathBuf },
    #[error("{}: cannot write the report", path.display())]
    Report { path: PathBuf, source: io::Error },
    #[error("cannot start {threads} worker threads: {message}")]
    Threads { threads: usize, message: String },
}

/// Outcome of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Converted,
    Failed,
    /// Named by a manifest entry that is not a program to convert (`pnacl-debug`).
    Skipped,
}

/// What kind of failure a file had: a problem with the file itself, or the
/// [`ErrorClass`] of its conversion error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The file (or a directory on the way) could not be read.
    Read,
    /// A manifest names a file that does not exist.
    Missing,
    /// The path leaves the input directory (through `..` or a symbolic link).
    OutsideDir,
    /// The path names something that is not a regular file.
    NotAFile,
    /// A manifest is not valid JSON, has the wrong shape, or names a non-local URL.
    Manifest,
    /// [`ErrorClass::Input`]: not a valid pexe (malformed, breaks the PNaCl ABI, or no
    /// `void _start(i32)`).
    Input,
    /// [`ErrorClass::Unsupported`]: a valid pexe using something the converter does not
    /// handle.
    Unsupported,
    /// The `.wasm` could not be written.
    Write,
    /// Another input already maps to the same output file.
    OutputCollision,
    /// [`ErrorClass::Internal`]: a converter bug (output that does not validate, a
    /// panic); the batch went on.
    Internal,
}

impl From<ErrorClass> for ErrorKind {
    fn from(c: ErrorClass) -> Self {
        match c {
            ErrorClass::Input => ErrorKind::Input,
            ErrorClass::Unsupported => ErrorKind::Unsupported,
            ErrorClass::Internal => ErrorKind::Internal,
        }
    }
}

/// A failure of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorReport {
    pub kind: ErrorKind,
    /// One line (several findings are joined with `; `).
    pub message: String,
    /// Where in the pexe, when the error has a position.
    pub position: Option<Position>,
}

impl ErrorReport {
    fn new(kind: ErrorKind, message: impl Into<String>) -> ErrorReport {
        ErrorReport {
            kind,
            message: one_line(&message.into()),
            position: None,
        }
    }

    fn from_convert(e: &ConvertError) -> ErrorReport {
        ErrorReport {
            kind: e.class().into(),
            message: one_line(&e.to_string()),
            position: e.position(),
        }
    }
}

/// Joins a multi-line message (a list of verifier findings) into one line.
fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Everything the report says about one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileReport {
    /// Path relative to the input directory, `/`-separated, symbolic links resolved. A
    /// path that leaves the directory starts with `../`.
    pub path: String,
    /// How the file was found: `scan`, or `MANIFEST: KEY` for a manifest entry
    /// (`app.nmf: program.portable.pnacl-translate`, `app.nmf: files.NAME.ARCH`).
    pub found_by: Vec<String>,
    pub status: Status,
    /// The `.wasm` written, relative to the output directory (converted files only).
    pub output: Option<String>,
    /// Size of the pexe, when it could be read.
    pub pexe_bytes: Option<u64>,
    /// Size of the `.wasm` (converted files only).
    pub wasm_bytes: Option<u64>,
    /// Wall-clock time spent on this file (read, convert, write), in milliseconds.
    pub time_ms: f64,
    /// wasm features the output needs beyond MVP (converted files only).
    pub features: Vec<String>,
    /// `_start` is defined (`None` when the pexe did not decode).
    pub has_start: Option<bool>,
    /// IRT interfaces (`nacl-irt-*`) the pexe asks for (when it decodes).
    pub irt_interfaces: Vec<String>,
    /// PPAPI interfaces (`PPB_*`, `PPP_*`) the pexe asks for (when it decodes).
    pub ppapi_interfaces: Vec<String>,
    /// What the output needs to run (converted files only).
    pub needs: Option<Needs>,
    /// Why the file was skipped (skipped files only).
    pub skipped: Option<String>,
    pub error: Option<ErrorReport>,
}

impl FileReport {
    fn failed(path: String, found_by: Vec<String>, error: ErrorReport) -> FileReport {
        FileReport {
            path,
            found_by,
            status: Status::Failed,
            output: None,
            pexe_bytes: None,
            wasm_bytes: None,
            time_ms: 0.0,
            features: Vec::new(),
            has_start: None,
            irt_interfaces: Vec::new(),
            ppapi_interfaces: Vec::new(),
            needs: None,
            skipped: None,
            error: Some(error),
        }
    }

    fn skipped(path: String, found_by: Vec<String>, why: String) -> FileReport {
        FileReport {
            status: Status::Skipped,
            skipped: Some(why),
            error: None,
            ..FileReport::failed(path, found_by, ErrorReport::new(ErrorKind::Internal, ""))
        }
    }
}

/// Counts over the whole batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub files: usize,
    pub converted: usize,
    pub failed: usize,
    pub skipped: usize,
    /// The converted files by what they need to run.
    pub converted_by_host: ByHost,
}

/// Converted files counted by the host they need ([`Host`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ByHost {
    /// Plain WASI programs: any WASI runtime runs them.
    pub wasi: usize,
    /// Threaded modules: they need `pexe2wasm run` (wasi-threads).
    pub runner: usize,
    /// Pepper (PPAPI) plugins the command-line Pepper host runs (`pexe2wasm run`).
    pub pepper: usize,
    /// Pepper plugins that use interfaces only a browser backs (`pexe2wasm web`).
    pub browser: usize,
}

impl ByHost {
    fn count(files: &[FileReport]) -> ByHost {
        let mut c = ByHost::default();
        for n in files.iter().filter_map(|f| f.needs.as_ref()) {
            match n.host {
                Some(Host::Wasi) => c.wasi += 1,
                Some(Host::Runner) => c.runner += 1,
                Some(Host::Pepper) => c.pepper += 1,
                Some(Host::Browser) => c.browser += 1,
                None => {}
            }
        }
        c
    }

    /// `13 WASI programs, 2 need pexe2wasm run (threads), 10 Pepper plugins (pexe2wasm
    /// run), 3 need a browser (pexe2wasm web)`.
    pub fn text(&self) -> String {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        [
            plural(self.wasi, "WASI program", "WASI programs"),
            plural(
                self.runner,
                "needs pexe2wasm run (threads)",
                "need pexe2wasm run (threads)",
            ),
            plural(
                self.pepper,
                "Pepper plugin (pexe2wasm run)",
                "Pepper plugins (pexe2wasm run)",
            ),
            plural(
                self.browser,
                "needs a browser (pexe2wasm web)",
                "need a browser (pexe2wasm web)",
            ),
        ]
        .join(", ")
    }
}

/// The whole `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// [`REPORT_SCHEMA`].
    pub schema: u32,
    /// `pexe2wasm VERSION`.
    pub tool: String,
    /// The input and output directories as given.
    pub input_dir: String,
    pub output_dir: String,
    /// Worker threads used.
    pub threads: usize,
    /// Wall-clock time of the conversions, in milliseconds.
    pub time_ms: f64,
    pub summary: Summary,
    /// One entry per file, sorted by path.
    pub files: Vec<FileReport>,
}

/// A pexe to convert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Relative to the input directory, symbolic links resolved.
    pub rel: PathBuf,
    /// How it was found (see [`FileReport::found_by`]).
    pub found_by: Vec<String>,
}

/// What [`discover`] found: pexes to convert, paths that already failed, and manifest
/// entries skipped.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// Sorted by path; each pexe once, however many times it was reached.
    pub targets: Vec<Target>,
    /// Missing or escaping manifest targets, bad manifests, unreadable directories; and
    /// skipped manifest entries (status [`Status::Skipped`]).
    pub failures: Vec<FileReport>,
}

/// One path reached during discovery, before deduplication.
enum Found {
    Pexe(PathBuf),
    Failed(String, ErrorReport),
    /// A manifest entry not converted, and why.
    Skipped(String, String),
}

/// Collects what discovery reaches, merging a path reached twice.
#[derive(Default)]
struct Collector {
    targets: BTreeMap<String, Target>,
    failures: BTreeMap<String, FileReport>,
    skipped: BTreeMap<String, FileReport>,
}

/// Notes that discovery `by` reached a path too (once each).
fn add_finder(found_by: &mut Vec<String>, by: String) {
    if !found_by.contains(&by) {
        found_by.push(by);
    }
}

impl Collector {
    fn add(&mut self, found: Found, by: String) {
        match found {
            Found::Pexe(rel) => {
                let key = slash_path(&rel);
                let t = self.targets.entry(key).or_insert_with(|| Target {
                    rel,
                    found_by: Vec::new(),
                });
                add_finder(&mut t.found_by, by);
            }
            Found::Failed(key, error) => {
                let f = self.failures.entry(key.clone());
                let f = f.or_insert_with(|| FileReport::failed(key, Vec::new(), error));
                add_finder(&mut f.found_by, by);
            }
            Found::Skipped(key, why) => {
                let f = self.skipped.entry(key.clone());
                let f = f.or_insert_with(|| FileReport::skipped(key, Vec::new(), why));
                add_finder(&mut f.found_by, by);
            }
        }
    }

    /// The work found. A skipped path that is converted or fails another way is listed
    /// once, as that.
    fn finish(mut self) -> Discovery {
        self.skipped
            .retain(|k, _| !self.targets.contains_key(k) && !self.failures.contains_key(k));
        let mut failures: Vec<FileReport> = self.failures.into_values().collect();
        failures.extend(self.skipped.into_values());
        failures.sort_by(|a, b| a.path.cmp(&b.path));
        Discovery {
            targets: self.targets.into_values().collect(),
            failures,
        }
    }
}

/// A relative path written with `/`, as the report shows it.
fn slash_path(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Finds the work under `root` (which must be canonical): every `*.pexe` file, and every
/// pexe named by a `*.nmf` manifest. Directories are walked in name order without
/// following symbolic links to directories; `skip` (the output directory) is not entered.
pub fn discover(root: &Path, skip: Option<&Path>) -> Result<Discovery, BatchError> {
    let mut found = Collector::default();
    let mut manifests = Vec::new();
    let walk = walkdir::WalkDir::new(root)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !(e.file_type().is_dir() && skip == Some(e.path())));
    for entry in walk {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let io = e
                    .io_error()
                    .map_or_else(|| e.to_string(), ToString::to_string);
                let dir = e.path().unwrap_or(root);
                if dir == root {
                    return Err(BatchError::Input {
                        path: root.to_path_buf(),
                        source: e.into_io_error().unwrap_or_else(|| io::Error::other(io)),
                    });
                }
                let rel = dir.strip_prefix(root).unwrap_or(dir);
                let err = ErrorReport::new(ErrorKind::Read, format!("cannot read directory: {io}"));
                found.add(Found::Failed(slash_path(rel), err), "scan".into());
                continue;
            }
        };
        if entry.file_type().is_dir() {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        if has_extension(entry.file_name(), "pexe") {
            found.add(resolve(root, rel), "scan".into());
        } else if has_extension(entry.file_name(), "nexe") {
            found.add(native_or_pexe(root, rel), "scan".into());
        } else if has_extension(entry.file_name(), "nmf") {
            manifests.push(rel.to_path_buf());
        }
    }
    manifests.sort();
    for m in &manifests {
        read_manifest(root, m, &mut found);
    }
    Ok(found.finish())
}

/// A `.nexe` file: skipped with what it is (native code does not convert), or converted
/// when it is a pexe after all.
fn native_or_pexe(root: &Path, rel: &Path) -> Found {
    match resolve(root, rel) {
        Found::Pexe(inside) => match native_file(root, &inside) {
            Ok(Some(native)) => Found::Skipped(slash_path(&inside), native.to_string()),
            Ok(None) => Found::Pexe(inside),
            Err(e) => Found::Failed(
                slash_path(&inside),
                ErrorReport::new(ErrorKind::Read, format!("cannot read: {e}")),
            ),
        },
        other => other,
    }
}

/// What the file at `inside` (relative to `root`, resolved) is when it is native code.
fn native_file(root: &Path, inside: &Path) -> io::Result<Option<pexe2wasm_nexe::NativeInput>> {
    Ok(pexe2wasm_nexe::recognize(&fs::read(root.join(inside))?))
}

fn has_extension(name: &std::ffi::OsStr, ext: &str) -> bool {
    Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

/// Checks a path (relative to `root`, already free of `..`) names a regular file inside
/// `root` once symbolic links are resolved, and returns it relative to `root`.
fn resolve(root: &Path, rel: &Path) -> Found {
    let fail = |kind, msg: String| Found::Failed(slash_path(rel), ErrorReport::new(kind, msg));
    let canonical = match fs::canonicalize(root.join(rel)) {
        Ok(c) => c,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return fail(ErrorKind::Missing, "no such file".into())
        }
        Err(e) => return fail(ErrorKind::Read, format!("cannot read: {e}")),
    };
    let Ok(inside) = canonical.strip_prefix(root) else {
        return fail(
            ErrorKind::OutsideDir,
            format!(
                "resolves to {}, outside the input directory",
                canonical.display()
            ),
        );
    };
    match fs::metadata(&canonical) {
        Ok(m) if m.is_file() => Found::Pexe(inside.to_path_buf()),
        Ok(_) => fail(ErrorKind::NotAFile, "not a regular file".into()),
        Err(e) => fail(ErrorKind::Read, format!("cannot read: {e}")),
    }
}

/// Reads one manifest and adds the pexes it names; a manifest that cannot be used is
/// reported under its own path.
fn read_manifest(root: &Path, rel: &Path, found: &mut Collector) {
    let name = slash_path(rel);
    let fail = |found: &mut Collector, msg: String| {
        let err = ErrorReport::new(ErrorKind::Manifest, msg);
        found.add(Found::Failed(name.clone(), err), "scan".into());
    };
    let path = root.join(rel);
    let text = match fs::metadata(&path) {
        Ok(m) if m.len() > MAX_MANIFEST_BYTES => {
            return fail(
                found,
                format!(
                    "manifest is {} bytes, over the limit of {MAX_MANIFEST_BYTES}",
                    m.len()
                ),
            )
        }
        _ => match fs::read(&path) {
            Ok(t) => t,
            Err(e) => return fail(found, format!("cannot read: {e}")),
        },
    };
    let json: serde_json::Value = match pexe2wasm_nexe::native::parse_manifest(&text) {
        Ok(j) => j,
        Err(e) => return fail(found, format!("not valid JSON: {e}")),
    };
    let (urls, skipped, mut problems) = manifest_urls(&json);
    let base = rel.parent().unwrap_or(Path::new(""));
    let native_app = pexe2wasm_nexe::native::manifest_native_app(&json);
    for (key, url) in skipped {
        // Shown where it would be; only a native program is read, to say what it is.
        let shown = match resolve_url(base, &url) {
            Ok(UrlTarget::Inside(p)) => slash_path(&p),
            Ok(UrlTarget::Outside(shown)) => shown,
            Err(_) => url.clone(),
        };
        let why = if !key.starts_with("program.portable.") {
            // A native program (`program.ARCH`, `nexes.ARCH`): the nexe named by what it
            // is, else (glibc's runnable-ld.so, a missing file) the app as a whole.
            let nexe = match resolve_url(base, &url) {
                Ok(UrlTarget::Inside(p)) => match resolve(root, &p) {
                    Found::Pexe(inside) => native_file(root, &inside).ok().flatten(),
                    _ => None,
                },
                _ => None,
            };
            match (nexe, &native_app) {
                (Some(n @ pexe2wasm_nexe::NativeInput::Nexe { .. }), _) => n.to_string(),
                (_, Some(app)) => app.to_string(),
                _ => format!("{key} is a native NaCl program: not translated: of native executables, only static x86-64 ones translate yet (not the 2011 pre-1.0 Pepper or SRPC ones); PNaCl pexes convert"),
            }
        } else if key.ends_with(".pnacl-debug") {
            "a pnacl-debug entry: unfinalized debug bitcode, not the pexe a browser runs".into()
        } else {
            format!("{key} is not the pexe a browser runs ({PNACL_TRANSLATE})")
        };
        found.add(Found::Skipped(shown, why), format!("{name}: {key}"));
    }
    for (key, url) in urls {
        let by = format!("{name}: {key}");
        match resolve_url(base, &url) {
            Ok(UrlTarget::Inside(target)) => found.add(resolve(root, &target), by),
            Ok(UrlTarget::Outside(shown)) => {
                let err = ErrorReport::new(
                    ErrorKind::OutsideDir,
                    format!("{name} names {url:?}, outside the input directory"),
                );
                found.add(Found::Failed(shown, err), by);
            }
            Err(why) => problems.push(format!("{key}: {why}")),
        }
    }
    if !problems.is_empty() {
        fail(found, problems.join("; "));
    }
}

/// URLs of a manifest, each with the key it came from.
pub type KeyedUrls = Vec<(String, String)>;

/// The pexe URLs in a NaCl manifest, each with the key it came from; the other
/// `program.portable` entries (`pnacl-debug`) and the native programs (`program.ARCH`, the
/// 2011 `nexes.ARCH`), which are skipped; and the problems with its
/// shape. Followed: [`PNACL_TRANSLATE`]`.url` and every `files.NAME.ARCH.url` that ends in
/// `.pexe` (other `files` entries are data the program loads, not code).
pub fn manifest_urls(json: &serde_json::Value) -> (KeyedUrls, KeyedUrls, Vec<String>) {
    use serde_json::Value;
    let mut urls = Vec::new();
    let mut skipped = Vec::new();
    let mut problems = Vec::new();
    let Some(top) = json.as_object() else {
        return (
            urls,
            skipped,
            vec!["the manifest is not a JSON object".into()],
        );
    };
    let mut url_of = |key: String, v: &Value, urls: &mut Vec<(String, String)>| match v.get("url") {
        Some(Value::String(u)) => urls.push((key, u.clone())),
        Some(_) => problems.push(format!("{key}.url is not a string")),
        None => problems.push(format!("{key} has no url")),
    };
    if let Some(portable) = top
        .get("program")
        .and_then(|p| p.get("portable"))
        .and_then(Value::as_object)
    {
        for (which, v) in portable {
            let key = format!("program.portable.{which}");
            if key == PNACL_TRANSLATE {
                url_of(key, v, &mut urls);
            } else if let Some(u) = v.get("url").and_then(Value::as_str) {
                skipped.push((key, u.to_string()));
            }
        }
    }
    // Native programs are reported as skipped, with what they are.
    for (arch, url) in pexe2wasm_nexe::native::manifest_native_programs(json) {
        let key = if top.contains_key("program") && top["program"].get(&arch).is_some() {
            format!("program.{arch}")
        } else {
            format!("nexes.{arch}")
        };
        skipped.push((key, url));
    }
    if let Some(files) = top.get("files").and_then(Value::as_object) {
        for (name, archs) in files {
            let Some(archs) = archs.as_object() else {
                continue;
            };
            for (arch, v) in archs {
                let is_pexe = v
                    .get("url")
                    .and_then(Value::as_str)
                    .is_some_and(|u| has_extension(std::ffi::OsStr::new(strip_query(u)), "pexe"));
                if is_pexe {
                    url_of(format!("files.{name}.{arch}"), v, &mut urls);
                }
            }
        }
    }
    (urls, skipped, problems)
}

/// Where a manifest URL leads.
#[derive(Debug, PartialEq, Eq)]
pub enum UrlTarget {
    /// A path relative to the input directory, free of `.` and `..`.
    Inside(PathBuf),
    /// A path that climbs out of the input directory, as the report shows it (`../x.pexe`).
    Outside(String),
}

fn strip_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or("")
}

/// Resolves a relative URL against the directory of its manifest (`base`, relative to the
/// input directory), decoding `%XX` escapes. Absolute URLs and paths are refused: a batch
/// converts local files only.
pub fn resolve_url(base: &Path, url: &str) -> Result<UrlTarget, String> {
    let path = strip_query(url);
    if path.is_empty() {
        return Err("empty url".into());
    }
    if path.starts_with('/') || path.starts_with('\\') {
        return Err(format!("{url:?} is an absolute path, not a relative URL"));
    }
    if let Some(colon) = path.find(':') {
        if !path[..colon].contains('/') {
            return Err(format!("{url:?} is not a relative URL"));
        }
    }
    let mut parts: Vec<String> = base
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let mut above = 0usize;
    // A URL ending in `/`, `.` or `..` names a directory, not a file.
    let mut names_dir = false;
    for seg in path.split('/') {
        let seg = percent_decode(seg).ok_or_else(|| format!("{url:?} has a bad %-escape"))?;
        names_dir = matches!(seg.as_str(), "" | "." | "..");
        match seg.as_str() {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    above += 1;
                }
            }
            s if s.contains(['/', '\\', '\0']) => {
                return Err(format!("{url:?} has an escaped separator"))
            }
            _ => parts.push(seg),
        }
    }
    if names_dir || parts.is_empty() {
        return Err(format!("{url:?} names a directory"));
    }
    if above > 0 {
        let mut shown = "../".repeat(above);
        shown.push_str(&parts.join("/"));
        return Ok(UrlTarget::Outside(shown));
    }
    Ok(UrlTarget::Inside(parts.iter().collect()))
}

/// Decodes `%XX` escapes (`percent-encoding`); `None` for a malformed escape or bytes that
/// are not UTF-8. The crate passes a malformed escape through as text; a manifest URL with
/// one is refused instead, so that check comes first.
fn percent_decode(s: &str) -> Option<String> {
    let well_formed = s
        .split('%')
        .skip(1)
        .all(|rest| rest.len() >= 2 && rest.as_bytes()[..2].iter().all(u8::is_ascii_hexdigit));
    if !well_formed {
        return None;
    }
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .ok()
        .map(|c| c.into_owned())
}

/// The output file of a pexe, relative to the output directory: the same path with
/// `.pexe` replaced by `.wasm` (or `.wasm` appended to another name).
pub fn output_rel(rel: &Path) -> PathBuf {
    let name = rel.file_name().unwrap_or_default();
    let mut out = if has_extension(name, "pexe") {
        Path::new(name).with_extension("").into_os_string()
    } else {
        name.to_os_string()
    };
    out.push(".wasm");
    rel.with_file_name(out)
}

/// A batch ready to run: the directories checked and the work found.
#[derive(Debug)]
pub struct Plan {
    input: PathBuf,
    output: PathBuf,
    /// Canonical input and output directories.
    root: PathBuf,
    out_root: PathBuf,
    pub discovery: Discovery,
}

/// Checks the directories, creates the output directory and finds the work.
pub fn plan(input: &Path, output: &Path) -> Result<Plan, BatchError> {
    let root = fs::canonicalize(input).map_err(|source| BatchError::Input {
        path: input.to_path_buf(),
        source,
    })?;
    if !root.is_dir() {
        return Err(BatchError::Input {
            path: input.to_path_buf(),
            source: io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
        });
    }
    let out_err = |source| BatchError::Output {
        path: output.to_path_buf(),
        source,
    };
    // Refuse before creating anything.
    if root.starts_with(canonical_to_be(output).map_err(out_err)?) {
        return Err(BatchError::Overlap {
            path: output.to_path_buf(),
        });
    }
    fs::create_dir_all(output).map_err(out_err)?;
    let out_root = fs::canonicalize(output).map_err(out_err)?;
    if root.starts_with(&out_root) {
        return Err(BatchError::Overlap {
            path: output.to_path_buf(),
        });
    }
    let discovery = discover(&root, Some(&out_root))?;
    Ok(Plan {
        input: input.to_path_buf(),
        output: output.to_path_buf(),
        root,
        out_root,
        discovery,
    })
}

/// The canonical form of a path that may not exist yet: its longest existing prefix with
/// links resolved, then the rest applied lexically (a missing directory is not a link).
fn canonical_to_be(p: &Path) -> io::Result<PathBuf> {
    let mut cur = PathBuf::new();
    let mut exists = true;
    for c in std::path::absolute(p)?.components() {
        if exists {
            let next = cur.join(c);
            if fs::symlink_metadata(&next).is_ok() {
                cur = fs::canonicalize(next)?;
                continue;
            }
            exists = false;
        }
        match c {
            Component::ParentDir => {
                cur.pop();
            }
            Component::CurDir => {}
            c => cur.push(c),
        }
    }
    Ok(cur)
}

/// How to run a batch.
#[derive(Debug, Clone, Default)]
pub struct BatchOptions {
    /// Worker threads (0: one per core). Conversions inside share the same threads.
    pub threads: usize,
    pub convert: ConvertOptions,
}

impl Plan {
    /// Files the report will list.
    pub fn len(&self) -> usize {
        self.discovery.targets.len() + self.discovery.failures.len()
    }

    /// Converts every target, calling `progress` as each file finishes (from worker
    /// threads, in completion order). Never stops at a failed file.
    pub fn run(
        self,
        opts: &BatchOptions,
        progress: &(dyn Fn(&FileReport) + Sync),
    ) -> Result<Report, BatchError> {
        use rayon::prelude::*;
        let start = Instant::now();
        let mut files: Vec<FileReport> = Vec::with_capacity(self.len());
        for f in &self.discovery.failures {
            progress(f);
            files.push(f.clone());
        }
        // Two inputs may map to one output (`a.pexe` and a manifest's `a`): the first by
        // path wins, the others fail rather than overwrite it.
        let mut claimed = BTreeMap::new();
        let mut jobs = Vec::new();
        for t in &self.discovery.targets {
            let out = output_rel(&t.rel);
            if let Some(first) = claimed.get(&out) {
                let err = ErrorReport::new(
                    ErrorKind::OutputCollision,
                    format!(
                        "its output {} is already the output of {first}",
                        slash_path(&out)
                    ),
                );
                let f = FileReport::failed(slash_path(&t.rel), t.found_by.clone(), err);
                progress(&f);
                files.push(f);
                continue;
            }
            claimed.insert(out.clone(), slash_path(&t.rel));
            // Largest first, so one big file does not start last and run alone.
            let size = fs::metadata(self.root.join(&t.rel)).map_or(0, |m| m.len());
            jobs.push((size, t, out));
        }
        jobs.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.rel.cmp(&b.1.rel)));

        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.threads)
            .build()
            .map_err(|e| BatchError::Threads {
                threads: opts.threads,
                message: e.to_string(),
            })?;
        let threads = pool.current_num_threads();
        let converted: Vec<FileReport> = pool.install(|| {
            jobs.par_iter()
                .with_max_len(1)
                .map(|(_, t, out)| {
                    let r = self.convert_one(t, out, &opts.convert);
                    progress(&r);
                    r
                })
                .collect()
        });
        files.extend(converted);
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let count = |status| files.iter().filter(|f| f.status == status).count();
        let (converted, failed, skipped) = (
            count(Status::Converted),
            count(Status::Failed),
            count(Status::Skipped),
        );
        Ok(Report {
            schema: REPORT_SCHEMA,
            tool: format!("pexe2wasm {}", env!("CARGO_PKG_VERSION")),
            input_dir: self.input.display().to_string(),
            output_dir: self.output.display().to_string(),
            threads,
            time_ms: millis(start),
            summary: Summary {
                files: files.len(),
                converted,
                failed,
                skipped,
                converted_by_host: ByHost::count(&files),
            },
            files,
        })
    }

    /// Converts one pexe; every failure, a panic included, becomes the report's error.
    fn convert_one(&self, t: &Target, out_rel: &Path, opts: &ConvertOptions) -> FileReport {
        let start = Instant::now();
        let mut r = FileReport::failed(
            slash_path(&t.rel),
            t.found_by.clone(),
            ErrorReport::new(ErrorKind::Internal, ""),
        );
        let dest = self.out_root.join(out_rel);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.convert_into(t, &dest, opts, &mut r)
        }));
        match outcome {
            Ok(Ok(())) => {
                r.status = Status::Converted;
                r.output = Some(slash_path(out_rel));
                r.error = None;
            }
            Ok(Err(e)) => r.error = Some(e),
            Err(_) => {
                r.error = Some(ErrorReport::new(
                    ErrorKind::Internal,
                    "internal error: the converter panicked",
                ))
            }
        }
        if r.status == Status::Failed {
            // The tree must agree with the report: no .wasm for a failed file.
            self.remove_stale(&dest);
            r.wasm_bytes = None;
            r.features.clear();
            r.needs = None;
        }
        r.time_ms = millis(start);
        r
    }

    fn convert_into(
        &self,
        t: &Target,
        dest: &Path,
        opts: &ConvertOptions,
        r: &mut FileReport,
    ) -> Result<(), ErrorReport> {
        let data = fs::read(self.root.join(&t.rel))
            .map_err(|e| ErrorReport::new(ErrorKind::Read, format!("cannot read: {e}")))?;
        r.pexe_bytes = Some(data.len() as u64);
        // Decoded once: the facts come from the module even when conversion fails later.
        let module = pexe2wasm::decode::decode(&data)
            .map_err(|e| ErrorReport::from_convert(&ConvertError::Decode(e)))?;
        let pexe_bytes = data.len();
        drop(data);
        r.has_start = Some(module.function_by_name("_start").is_some());
        (r.irt_interfaces, r.ppapi_interfaces) = pexe2wasm::info::interface_names(&module);
        let needs = pexe2wasm::needs::needs(
            &r.irt_interfaces,
            &r.ppapi_interfaces,
            pexe2wasm::verify::check_runnable(&module).is_ok(),
        );
        let converted =
            convert_module(module, pexe_bytes, opts).map_err(|e| ErrorReport::from_convert(&e))?;
        r.needs = Some(needs.for_output(converted.features.threads));
        r.wasm_bytes = Some(converted.wasm.len() as u64);
        r.features = converted
            .features
            .names()
            .into_iter()
            .map(String::from)
            .collect();
        write_atomically(&self.out_root, dest, &converted.wasm)
            .map_err(|e| ErrorReport::new(ErrorKind::Write, format!("cannot write: {e}")))
    }

    /// Removes an output left by an earlier run, if it is a plain file inside the output
    /// directory.
    fn remove_stale(&self, dest: &Path) {
        let inside = dest
            .parent()
            .and_then(|p| fs::canonicalize(p).ok())
            .is_some_and(|p| p.starts_with(&self.out_root));
        let is_file = fs::symlink_metadata(dest).is_ok_and(|m| m.is_file());
        if inside && is_file {
            let _ = fs::remove_file(dest);
        }
    }
}

fn millis(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

/// Writes `bytes` to `dest` (inside `out_root`) through a new temporary file beside it,
/// renamed into place once complete. The directories on the way are created one by one
/// and must be real directories: a symbolic link planted in the output tree could
/// otherwise lead the write (or a created directory) outside it.
fn write_atomically(out_root: &Path, dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let rel = dest
        .strip_prefix(out_root)
        .map_err(|_| io::Error::other("outside the output directory"))?;
    let mut parent = out_root.to_path_buf();
    for c in rel.parent().into_iter().flat_map(Path::components) {
        parent.push(c);
        match fs::symlink_metadata(&parent) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{} is not a directory (a link or a file)",
                    parent.display()
                )))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::create_dir(&parent) {
                // Another worker may have just made it; the next check sees which.
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {
                    if !fs::symlink_metadata(&parent)?.is_dir() {
                        return Err(io::Error::other(format!(
                            "{} is not a directory",
                            parent.display()
                        )));
                    }
                }
            },
            Err(e) => return Err(e),
        }
    }
    // A new temporary file beside `dest` (created exclusively, so never through a file or
    // link already there; removed if anything fails), renamed into place once complete.
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(dest.file_name().unwrap_or_default());
    prefix.push(".");
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(&parent)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    tmp.persist(dest).map_err(|e| e.error)?;
    Ok(())
}

/// Writes `report.json` and `report.md` into the plan's output directory.
pub fn write_reports(report: &Report, output: &Path) -> Result<(), BatchError> {
    let out_root = fs::canonicalize(output).map_err(|source| BatchError::Report {
        path: output.to_path_buf(),
        source,
    })?;
    let mut json = serde_json::to_vec_pretty(report).map_err(|e| BatchError::Report {
        path: output.join("report.json"),
        source: e.into(),
    })?;
    json.push(b'\n');
    for (name, bytes) in [
        ("report.json", json),
        ("report.md", render_markdown(report).into_bytes()),
    ] {
        let dest = out_root.join(name);
        write_atomically(&out_root, &dest, &bytes).map_err(|source| BatchError::Report {
            path: output.join(name),
            source,
        })?;
    }
    Ok(())
}

/// `report.md`: a summary, one table row per file, the PPAPI interfaces each app needs,
/// and every failure with its position.
pub fn render_markdown(r: &Report) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "# pexe2wasm batch report\n");
    let skipped = match r.summary.skipped {
        0 => String::new(),
        n => format!(", {n} skipped"),
    };
    let _ = writeln!(
        s,
        "{} files under {}: **{} converted ({}), {} failed{skipped}**, in {:.1} s on {} \
         threads (output in {}, {}).\n",
        r.summary.files,
        code(&r.input_dir),
        r.summary.converted,
        r.summary.converted_by_host.text(),
        r.summary.failed,
        r.time_ms / 1e3,
        r.threads,
        code(&r.output_dir),
        r.tool
    );
    if r.files.is_empty() {
        let _ = writeln!(s, "No `.pexe` files or manifests were found.");
        return s;
    }
    let _ = writeln!(
        s,
        "| file | status | pexe | wasm | time | features | IRT interfaces | PPAPI |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---|---|---:|");
    for f in &r.files {
        let status = match (&f.status, &f.error) {
            (Status::Converted, _) => match f.needs.as_ref().and_then(|n| n.host) {
                Some(h) => format!("converted: {}", h.label()),
                None => "converted".to_string(),
            },
            (Status::Failed, Some(e)) => format!("**failed** ({})", kind_name(e.kind)),
            (Status::Failed, None) => "**failed**".to_string(),
            (Status::Skipped, _) => "skipped".to_string(),
        };
        let irt: Vec<&str> = f
            .irt_interfaces
            .iter()
            .map(|i| i.strip_prefix("nacl-irt-").unwrap_or(i))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {status} | {} | {} | {} | {} | {} | {} |",
            cell(&code(&f.path)),
            f.pexe_bytes.map(human_bytes).unwrap_or_default(),
            f.wasm_bytes.map(human_bytes).unwrap_or_default(),
            if f.time_ms > 0.0 {
                format!("{:.0} ms", f.time_ms)
            } else {
                String::new()
            },
            cell(&f.features.join(", ")),
            cell(&irt.join(", ")),
            f.ppapi_interfaces.len(),
        );
    }
    let ppapi: Vec<&FileReport> = r
        .files
        .iter()
        .filter(|f| !f.ppapi_interfaces.is_empty())
        .collect();
    if !ppapi.is_empty() {
        let _ = writeln!(s, "\n## PPAPI interfaces\n");
        let _ = writeln!(
            s,
            "Browser interfaces the pexe asks for (pexe2wasm has no Pepper host yet: the \
             plugins convert but cannot run).\n"
        );
        for f in ppapi {
            let names: Vec<String> = f.ppapi_interfaces.iter().map(|n| code(n)).collect();
            let _ = writeln!(s, "- {}: {}", code(&f.path), names.join(", "));
        }
    }
    let skipped: Vec<&FileReport> = r
        .files
        .iter()
        .filter(|f| f.status == Status::Skipped)
        .collect();
    if !skipped.is_empty() {
        let _ = writeln!(s, "\n## Skipped\n");
        for f in skipped {
            let why = f.skipped.as_deref().unwrap_or("");
            let _ = writeln!(
                s,
                "- {}: {why} (found by {})",
                code(&f.path),
                f.found_by.join("; ")
            );
        }
    }
    let failed: Vec<&FileReport> = r
        .files
        .iter()
        .filter(|f| f.status == Status::Failed)
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(s, "\n## Failures\n");
        for f in failed {
            let _ = writeln!(s, "### {}\n", code(&f.path));
            if let Some(e) = &f.error {
                let _ = writeln!(s, "- kind: {}", kind_name(e.kind));
                if let Some(p) = &e.position {
                    let _ = writeln!(s, "- position: {p}");
                }
                let _ = writeln!(s, "- error: {}", code(&e.message));
            }
            let _ = writeln!(s, "- found by: {}\n", f.found_by.join("; "));
        }
    }
    s
}

fn kind_name(k: ErrorKind) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// A Markdown code span holding `s` whatever backticks it contains.
fn code(s: &str) -> String {
    let mut fence = "`".to_string();
    while s.contains(&fence) {
        fence.push('`');
    }
    if fence.len() > 1 || s.starts_with('`') || s.ends_with('`') {
        format!("{fence} {s} {fence}")
    } else {
        format!("`{s}`")
    }
}

/// Escapes the column separator inside a table cell (needed even in code spans).
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// `512 B`, `29.0 KiB`, `3.2 MiB`.
fn human_bytes(n: u64) -> String {
    bytesize::ByteSize(n).display().iec().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside(base: &str, url: &str) -> String {
        match resolve_url(Path::new(base), url) {
            Ok(UrlTarget::Inside(p)) => slash_path(&p),
            other => panic!("{base} + {url}: {other:?}"),
        }
    }

    #[test]
    fn urls_resolve_against_the_manifest_directory() {
        assert_eq!(inside("", "app.pexe"), "app.pexe");
        assert_eq!(
            inside("web", "pnacl/Release/app.pexe"),
            "web/pnacl/Release/app.pexe"
        );
        assert_eq!(inside("web/a", "../b/./app.pexe"), "web/b/app.pexe");
        assert_eq!(inside("web", "app.pexe?v=3#frag"), "web/app.pexe");
        assert_eq!(inside("", "my%20app.pexe"), "my app.pexe");
        assert_eq!(inside("", "x/dir:app.pexe"), "x/dir:app.pexe");
    }

    #[test]
    fn urls_that_climb_out_are_outside() {
        assert_eq!(
            resolve_url(Path::new("web"), "../../x/app.pexe"),
            Ok(UrlTarget::Outside("../x/app.pexe".into()))
        );
        assert_eq!(
            resolve_url(Path::new(""), "%2e%2e/app.pexe"),
            Ok(UrlTarget::Outside("../app.pexe".into()))
        );
    }

    #[test]
    fn non_local_urls_are_refused() {
        for url in [
            "http://example.com/app.pexe",
            "data:application/x-pnacl,xx",
            "dir:x/app.pexe",
            "/abs/app.pexe",
            "//host/app.pexe",
            "",
            "dir/",
            ".",
            "..",
            "sub/%2E",
            "a%2fb.pexe",
            "bad%zz.pexe",
            "trunc%2",
        ] {
            assert!(resolve_url(Path::new("web"), url).is_err(), "{url:?}");
        }
    }

    #[test]
    fn manifest_urls_follow_program_and_pexe_files() {
        let json = serde_json::json!({
            "program": {
                "portable": {
                    "pnacl-translate": {"url": "app.pexe", "optlevel": 2},
                    "pnacl-debug": {"url": "app_debug.pexe"}
                },
                "x86-64": {"url": "app_x86_64.nexe"}
            },
            "files": {
                "worker": {"portable": {"url": "worker.pexe"}},
                "data": {"portable": {"url": "data.bin"}},
                "bad": {"portable": {"url": 7}}
            }
        });
        let (urls, skipped, problems) = manifest_urls(&json);
        assert_eq!(
            urls,
            [
                ("program.portable.pnacl-translate".into(), "app.pexe".into()),
                ("files.worker.portable".into(), "worker.pexe".into()),
            ]
        );
        // The native program is skipped too (batch says what it is).
        assert_eq!(
            skipped,
            [
                (
                    "program.portable.pnacl-debug".into(),
                    "app_debug.pexe".into()
                ),
                ("program.x86-64".into(), "app_x86_64.nexe".into())
            ]
        );
        assert!(problems.is_empty(), "{problems:?}");
        let (urls, skipped, problems) = manifest_urls(&serde_json::json!({
            "program": {"portable": {"pnacl-translate": {"url": 1}, "pnacl-debug": {}}}
        }));
        assert!(urls.is_empty() && skipped.is_empty());
        assert_eq!(
            problems,
            ["program.portable.pnacl-translate.url is not a string"]
        );
        let (urls, _, problems) = manifest_urls(&serde_json::json!({
            "program": {"portable": {"pnacl-debug": {"url": "x.bc"}}}
        }));
        assert!(urls.is_empty() && problems.is_empty());
        assert_eq!(manifest_urls(&serde_json::json!([1])).2.len(), 1);
    }

    #[test]
    fn output_names_mirror_the_input() {
        assert_eq!(
            output_rel(Path::new("a/b/app.pexe")),
            PathBuf::from("a/b/app.wasm")
        );
        assert_eq!(output_rel(Path::new("APP.PEXE")), PathBuf::from("APP.wasm"));
        assert_eq!(
            output_rel(Path::new("x/app.bin")),
            PathBuf::from("x/app.bin.wasm")
        );
    }

    #[test]
    fn sizes_read_as_before() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(29740), "29.0 KiB");
        assert_eq!(human_bytes(3_400_772), "3.2 MiB");
    }

    #[test]
    fn markdown_escapes_cells_and_backticks() {
        assert_eq!(code("a`b"), "`` a`b ``");
        assert_eq!(code("plain"), "`plain`");
        assert_eq!(cell("a|b"), "a\\|b");
        assert_eq!(one_line("2 findings\n  one\n  two"), "2 findings; one; two");
    }

    #[test]
    fn future_paths_resolve_dot_dot_through_missing_directories() {
        let tmp = fs::canonicalize(std::env::temp_dir()).unwrap();
        let p = tmp.join("pexe2wasm-no-such-dir/sub/../../x/./y");
        assert_eq!(canonical_to_be(&p).unwrap(), tmp.join("x/y"));
    }
}
