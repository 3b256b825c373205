//! What every front end says when it is handed native NaCl code where a pexe goes: a nexe
//! ([`NativeInput`], from its bytes), a manifest or Chrome app that names only nexes
//! ([`NativeApp`]), and what `info`/`verify` print about a nexe ([`NexeReport`]). The words
//! live here once, so the CLI, `batch`, `web` and the service say the same thing.

use crate::info::{AppKind, Arch, Layout, Linking, NexeInfo, Translation};
use crate::x86_64::{ValidationError, Warning};
use serde::Serialize;
use std::fmt;

/// Native code where a pexe was expected: why it does not convert, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NativeInput {
    /// A NaCl executable (nexe); `description` names its architecture, linking, libc and
    /// kind, e.g. `x86-64 (static, newlib, Pepper)`.
    #[error("a native NaCl executable for {description}: not translated: of native executables, only static x86-64 ones translate yet (not the 2011 pre-1.0 Pepper or SRPC ones); PNaCl pexes convert")]
    Nexe { arch: Arch, description: String },
    /// An ELF file that is no nexe NaCl would load (a Linux program, a broken file).
    #[error("an ELF file, not a pexe ({reason}); only PNaCl pexes convert")]
    OtherElf { reason: String },
}

/// When `bytes` are native code (an ELF file), what it is; `None` for anything else (a
/// pexe, a wasm module, text). Costs one comparison for anything that is not ELF.
pub fn recognize(bytes: &[u8]) -> Option<NativeInput> {
    if !crate::is_elf(bytes) {
        return None;
    }
    Some(match crate::elf::read(bytes) {
        Ok(read) => NativeInput::Nexe {
            arch: read.info.arch,
            description: describe(&read.info),
        },
        Err(e) => NativeInput::OtherElf {
            reason: e.to_string(),
        },
    })
}

/// `x86-64 (static, newlib, Pepper)`: architecture, then linking and libc, kind, and
/// NaCl's refusal when its loader would refuse the file.
pub fn describe(info: &NexeInfo) -> String {
    let linking = match (&info.linking, info.layout) {
        (Linking::Dynamic { .. }, _) => "dynamic, glibc",
        (Linking::Static, Layout::GlibcDynamicText) => "static, glibc",
        (Linking::Static, Layout::Program) => "static, newlib",
        (Linking::Static, _) => "static",
    };
    let kind = match &info.app {
        AppKind::Cli => "command-line",
        AppKind::Pepper { pre_1_0: false } => "Pepper",
        AppKind::Pepper { pre_1_0: true } => "Pepper, pre-1.0",
        AppKind::Srpc => "legacy SRPC service",
        AppKind::Translator { .. } => "PNaCl translator",
        AppKind::Irt => "IRT image",
    };
    let refused = match &info.translation {
        Translation::Refused { error } => format!("; NaCl's loader refuses it: {error}"),
        _ => String::new(),
    };
    format!("{} ({linking}, {kind}{refused})", info.arch)
}

/// A NaCl manifest (`.nmf`) or Chrome app whose programs are all native: only nexes, no
/// portable (`pnacl-translate`) entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("a native NaCl app for {}{}: only PNaCl pexes convert", .arches.join("/"), if *.dynamic { " (glibc dynamic: runnable-ld.so and shared objects)" } else { "" })]
pub struct NativeApp {
    /// Architectures as people write them (`x86-64`, `x86-32`, `ARM`, `MIPS`), in that
    /// order.
    pub arches: Vec<String>,
    /// A program is glibc's `runnable-ld.so` (the nexe and its `.so` files are `files`).
    pub dynamic: bool,
}

impl NativeApp {
    /// From architecture names as manifests write them (`x86-64`, `x86-32`, `arm`,
    /// `mips32`, `nacl_arch` values such as `x86-64`/`arm`).
    pub fn from_arches<'s>(arches: impl IntoIterator<Item = &'s str>, dynamic: bool) -> Self {
        let mut arches: Vec<String> = arches.into_iter().map(arch_name).collect();
        let rank = |a: &String| {
            ["x86-64", "x86-32", "ARM", "MIPS"]
                .iter()
                .position(|k| k == a)
        };
        arches
            .sort_by(|a, b| (rank(a).is_none(), rank(a), a).cmp(&(rank(b).is_none(), rank(b), b)));
        arches.dedup();
        NativeApp { arches, dynamic }
    }
}

fn arch_name(key: &str) -> String {
    match key.to_ascii_lowercase().as_str() {
        "x86-64" | "x86_64" => "x86-64".into(),
        "x86-32" | "x86_32" | "i686" => "x86-32".into(),
        "arm" => "ARM".into(),
        "mips32" | "mips" => "MIPS".into(),
        _ => key.to_string(),
    }
}

/// Reads a NaCl manifest. Chrome's parser took trailing commas (`{"a": 1,}`), and shipped
/// manifests have them (the 2011 SDK examples), so a manifest that is not JSON is read
/// again without the commas that close a list or object.
pub fn parse_manifest(bytes: &[u8]) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_slice(bytes).or_else(|e| {
        let fixed = without_trailing_commas(bytes);
        if fixed.len() == bytes.len() {
            return Err(e);
        }
        serde_json::from_slice(&fixed).map_err(|_| e)
    })
}

/// `bytes` without the commas followed (after blanks) by `}` or `]`, outside strings.
fn without_trailing_commas(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            in_string = b != b'"' || escaped;
            escaped = b == b'\\' && !escaped;
        } else if b == b'"' {
            in_string = true;
        } else if b == b',' {
            let next = bytes[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
            if matches!(next, Some(b'}' | b']')) {
                continue;
            }
        }
        out.push(b);
    }
    out
}

/// The native programs of a NaCl manifest as `(ARCH, url)`, in the manifest's order:
/// `program.ARCH.url` (ARCH other than `portable`), and the 2011 form `nexes.ARCH`
/// (a URL string).
pub fn manifest_native_programs(nmf: &serde_json::Value) -> Vec<(String, String)> {
    use serde_json::Value;
    let program = nmf
        .get("program")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(arch, _)| *arch != "portable")
        .filter_map(|(arch, e)| Some((arch.clone(), e.get("url")?.as_str()?.to_string())));
    let nexes = nmf
        .get("nexes")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(arch, url)| Some((arch.clone(), url.as_str()?.to_string())));
    program.chain(nexes).collect()
}

/// When a NaCl manifest names native programs and no pexe (`program.portable.pnacl-translate`),
/// what it is. A program URL that ends in `runnable-ld.so` makes it glibc dynamic.
pub fn manifest_native_app(nmf: &serde_json::Value) -> Option<NativeApp> {
    if nmf
        .pointer("/program/portable/pnacl-translate/url")
        .is_some()
    {
        return None;
    }
    let programs = manifest_native_programs(nmf);
    if programs.is_empty() {
        return None;
    }
    let dynamic = programs.iter().any(|(_, url)| {
        url.split(['?', '#'])
            .next()
            .unwrap_or_default()
            .ends_with("runnable-ld.so")
    });
    Some(NativeApp::from_arches(
        programs.iter().map(|(a, _)| a.as_str()),
        dynamic,
    ))
}

/// What `info` and `verify` print about a nexe: its facts and, for x86-64, NaCl's
/// validator's verdict on its code.
#[derive(Debug, Clone, Serialize)]
pub struct NexeReport {
    /// Always `nexe` (a pexe's `info --json` has other members).
    pub format: &'static str,
    #[serde(flatten)]
    pub info: NexeInfo,
    /// `x86-64 (static, newlib, Pepper)`.
    pub description: String,
    /// The x86-64 validator's result; `None` for other architectures (and for a text
    /// segment NaCl would not load).
    pub validation: Option<ValidationReport>,
    /// Why it does not convert (the same words `convert` says).
    pub not_converted: String,
}

/// NaCl's x86-64 validator on the text segment.
#[derive(Debug, Clone, Serialize)]
pub struct ValidationReport {
    pub valid: bool,
    /// Bytes of code validated (padded to whole bundles).
    pub code_bytes: u32,
    pub instructions: u64,
    pub error_count: usize,
    /// The first errors (bundle, instruction and rule each).
    pub errors: Vec<ValidationError>,
    pub warning_count: usize,
    pub warnings: Vec<Warning>,
}

/// How many validation errors and warnings a report lists (the counts cover all).
pub const REPORT_ERRORS: usize = 10;

impl NexeReport {
    /// Reads and, for x86-64, validates a nexe.
    pub fn of(bytes: &[u8]) -> Result<NexeReport, crate::NexeError> {
        let nexe = crate::inspect(bytes)?;
        let validation = nexe.validate_x86_64().map(|v| ValidationReport {
            valid: v.is_valid(),
            code_bytes: v.facts.size,
            instructions: v.facts.instructions,
            error_count: v.error_count,
            errors: v.errors.into_iter().take(REPORT_ERRORS).collect(),
            warning_count: v.warning_count,
            warnings: v.warnings.into_iter().take(REPORT_ERRORS).collect(),
        });
        let description = describe(&nexe.info);
        let not_converted = NativeInput::Nexe {
            arch: nexe.info.arch,
            description: description.clone(),
        }
        .to_string();
        Ok(NexeReport {
            format: "nexe",
            info: nexe.info,
            description,
            validation,
            not_converted,
        })
    }

    /// `verify`'s verdict: whether NaCl would load the file and its validator accept the
    /// code (only x86-64 code is validated here: other architectures are not accepted),
    /// and one line that says so, and that it does not convert.
    pub fn verdict(&self) -> (bool, String) {
        let loads = !matches!(self.info.translation, Translation::Refused { .. });
        let valid = self.validation.as_ref().is_some_and(|v| v.valid);
        let line = if self.translates() {
            format!(
                "a native NaCl executable for {}: {}; {}",
                self.description,
                self.validation_line(),
                self.converts()
            )
        } else {
            format!(
                "a native NaCl executable for {}: {}; not translated: of native executables, only static x86-64 ones translate yet (not the 2011 pre-1.0 Pepper or SRPC ones); PNaCl pexes convert",
                self.description,
                self.validation_line()
            )
        };
        (loads && valid, line)
    }

    /// What `convert` makes of a nexe it translates.
    fn converts(&self) -> &'static str {
        if matches!(self.info.app, crate::AppKind::Pepper { .. }) {
            CONVERTS_PEPPER
        } else {
            CONVERTS
        }
    }

    /// Whether `convert` and `run` translate it: a valid static x86-64 command-line or
    /// Pepper nexe (`lift::runs_with_runtime`).
    pub fn translates(&self) -> bool {
        self.validation.as_ref().is_some_and(|v| v.valid)
            && crate::x86_64::lift::runs_with_runtime(&self.info)
    }

    /// One line for `verify`: whether NaCl's validator accepts the code.
    pub fn validation_line(&self) -> String {
        match &self.validation {
            Some(v) if v.valid => format!(
                "valid by NaCl's x86-64 rules ({} instructions, {} bytes of code{})",
                v.instructions,
                v.code_bytes,
                match v.warning_count {
                    0 => String::new(),
                    n => format!(", {n} warnings"),
                }
            ),
            Some(v) => format!(
                "rejected by NaCl's x86-64 rules: {} errors; first: {}",
                v.error_count,
                v.errors
                    .first()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            ),
            None if self.info.arch != Arch::X86_64 => format!(
                "{} code: not validated (only x86-64 code is checked by NaCl's rules here)",
                self.info.arch
            ),
            None => "not validated: the text segment does not start on a 32-byte bundle".into(),
        }
    }
}

/// What `verify` and `info` say of a nexe that `convert` translates.
const CONVERTS: &str =
    "translated with the runtime into a WASI command (`pexe2wasm convert`, `run`)";
/// The same for a Pepper nexe: a plugin with the Pepper ABI of converted pexes.
const CONVERTS_PEPPER: &str =
    "translated with the runtime into a Pepper plugin (`pexe2wasm convert`, `run`)";

impl fmt::Display for NexeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.info)?;
        match &self.validation {
            Some(v) => {
                writeln!(f, "  validation:     {}", self.validation_line())?;
                for e in &v.errors {
                    writeln!(f, "    {e}")?;
                }
                for w in &v.warnings {
                    writeln!(f, "    warning: {w}")?;
                }
            }
            None => writeln!(f, "  validation:     {}", self.validation_line())?,
        }
        if self.translates() {
            writeln!(f, "  converts:       yes: {}", self.converts())
        } else {
            writeln!(f, "  converts:       no: {}", self.not_converted)
        }
    }
}
