//! `pexe2wasm run` for a Pepper (PPAPI) plugin: one instance under the command-line Pepper
//! host (`pexe2wasm_runner::pepper`), its page's messages on standard input and output
//! (docs/PEPPER-CLI.md).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use pexe2wasm_runner::pepper::{MessageFormat, MessageSource, PepperConfig, PepperHost, StdioSink};
use pexe2wasm_runner::{Program, RunOptions};

/// The Pepper flags of `run`.
#[derive(Debug, Default, Clone)]
pub struct PepperArgs {
    /// `--attr NAME=VALUE`, in order.
    pub attrs: Vec<String>,
    /// `--size WxH`.
    pub size: Option<String>,
    /// `--messages json`.
    pub json: bool,
    /// `--timeout SECS`.
    pub timeout: Option<f64>,
    /// `--frames DIR`.
    pub frames: Option<PathBuf>,
    /// `--events FILE`.
    pub events: Option<PathBuf>,
    /// `--origin DIR|URL`.
    pub origin: Option<String>,
    /// `--url-map FROM=TO`, in order.
    pub url_map: Vec<String>,
    /// `--storage DIR`.
    pub storage: Option<PathBuf>,
    /// `--net loopback`.
    pub net_loopback: bool,
}

impl PepperArgs {
    /// The first flag given that only a Pepper plugin takes, for the error on others.
    pub fn first_given(&self) -> Option<&'static str> {
        if !self.attrs.is_empty() {
            Some("--attr")
        } else if self.size.is_some() {
            Some("--size")
        } else if self.json {
            Some("--messages")
        } else if self.frames.is_some() {
            Some("--frames")
        } else if self.events.is_some() {
            Some("--events")
        } else if self.origin.is_some() {
            Some("--origin")
        } else if !self.url_map.is_empty() {
            Some("--url-map")
        } else if self.storage.is_some() {
            Some("--storage")
        } else if self.net_loopback {
            Some("--net")
        } else {
            None
        }
    }
}

/// The embed's default size when `--size` is not given: an `<embed>` without width and
/// height is 300 x 150 CSS pixels.
pub const DEFAULT_SIZE: (i32, i32) = (300, 150);

pub(crate) fn parse_size(s: &str) -> Result<(i32, i32)> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| anyhow!("--size {s}: expected WIDTHxHEIGHT, e.g. 640x480"))?;
    let dim = |d: &str| -> Result<i32> {
        let v: i32 = d
            .trim()
            .parse()
            .map_err(|_| anyhow!("--size {s}: {d:?} is not a number of pixels"))?;
        if !(0..=16384).contains(&v) {
            bail!("--size {s}: {v} is outside 0..=16384");
        }
        Ok(v)
    };
    Ok((dim(w)?, dim(h)?))
}

/// The attributes `DidCreate` receives: `src` and `type` as Chrome passed them for
/// `<embed src="NAME.nmf" type="application/x-pnacl">`, then `--attr`s (one with the same
/// name replaces the default).
fn attributes(file: &Path, given: &[String]) -> Result<Vec<(String, String)>> {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "app".into());
    let mut attrs = vec![
        ("src".to_string(), format!("{stem}.nmf")),
        ("type".to_string(), "application/x-pnacl".to_string()),
    ];
    for a in given {
        let (k, v) = a
            .split_once('=')
            .ok_or_else(|| anyhow!("--attr {a}: expected NAME=VALUE"))?;
        if k.is_empty() {
            bail!("--attr {a}: the name is empty");
        }
        // HTML attribute names are case-insensitive and Chrome passed them lower-cased.
        let k = k.to_ascii_lowercase();
        match attrs.iter_mut().find(|(n, _)| *n == k) {
            Some(slot) => slot.1 = v.to_string(),
            None => attrs.push((k, v.to_string())),
        }
    }
    Ok(attrs)
}

/// Runs the plugin `wasm` (converted from `file`) with `opts` as its WASI setting; its exit
/// status, and the interfaces it asked for and did not get.
pub fn run(
    file: &Path,
    wasm: &[u8],
    mut opts: RunOptions,
    args: &PepperArgs,
) -> Result<(i32, Vec<String>)> {
    let timeout = match args.timeout {
        Some(t) if !(t.is_finite() && t >= 0.0) => bail!("--timeout {t}: expected seconds >= 0"),
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    // A bad events file is reported before the app starts (the host reads it again).
    if let Some(events) = &args.events {
        pexe2wasm_runner::pepper::events::load(events).map_err(|e| anyhow!("--events {e}"))?;
    }
    let config = PepperConfig {
        attrs: attributes(file, &args.attrs)?,
        size: match &args.size {
            Some(s) => parse_size(s)?,
            None => DEFAULT_SIZE,
        },
        format: if args.json {
            MessageFormat::Json
        } else {
            MessageFormat::Text
        },
        input: MessageSource::Stdin,
        sink: Arc::new(StdioSink),
        timeout,
        frames: args.frames.clone(),
        events: args.events.clone(),
        origin: args.origin.clone(),
        url_map: args
            .url_map
            .iter()
            .map(|m| {
                m.split_once('=')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .ok_or_else(|| anyhow!("--url-map {m}: expected FROM=TO"))
            })
            .collect::<Result<_>>()?,
        storage: args.storage.clone(),
        net_loopback: args.net_loopback,
    };
    // The host reads standard input itself (the app never had one); the app's own writes
    // to fd 1 go to standard error, so standard output carries only its messages.
    opts.stdin = pexe2wasm_runner::Input::Empty;
    opts.stdout = pexe2wasm_runner::Output::HostStderr;
    opts.stderr = pexe2wasm_runner::Output::Inherit;
    let mut program = Program::new(wasm, true)?;
    let host = PepperHost::new(config);
    let missing = host.missing_interfaces_handle();
    program.add_host(host)?;
    let outcome = program.run(&opts);
    let missing = missing.lock().map(|m| m.clone()).unwrap_or_default();
    // One line names the interfaces the app asked for and did not get: always when only a
    // browser backs one of them (the app is then not what it was, even if it ends
    // cleanly), and when the app did not come up (an error status, a trap), before the
    // error itself.
    let failed = outcome.as_ref().map_or(true, |o| o.exit_code != 0);
    if let Some(line) = missing_note(&missing, failed) {
        eprintln!("note: {}: {line}", file.display());
    }
    Ok((outcome?.exit_code, missing))
}

/// The note about the interfaces the app asked for and did not get, if one is due: the
/// described ones are those only a browser backs (the command-line host offers every
/// other); a name the description lacks is one no host of ours knows.
fn missing_note(missing: &[String], failed: bool) -> Option<String> {
    let d = pexe2wasm_ppapi::description();
    let (browser, unknown): (Vec<&String>, Vec<&String>) =
        missing.iter().partition(|m| d.interface(m).is_some());
    let name_unknown = failed && !unknown.is_empty();
    if browser.is_empty() && !name_unknown {
        return None;
    }
    let list = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
    let mut parts = Vec::new();
    if !browser.is_empty() {
        // Whether pexe2wasm's browser host offers them decides what to tell the user.
        let in_browser = |m: &&String| pexe2wasm_ppapi::hosts::BROWSER.contains(&m.as_str());
        let where_ = if browser.iter().all(in_browser) {
            "run it in a browser: `pexe2wasm web`"
        } else {
            "pexe2wasm's browser host, `pexe2wasm web`, does not offer them all yet either"
        };
        parts.push(format!(
            "{}, which only a browser can back ({where_})",
            list(&browser)
        ));
    }
    if name_unknown {
        parts.push(format!("{}, which no pexe2wasm host knows", list(&unknown)));
    }
    Some(format!(
        "the app asked for {} and got NULL, as a browser without them would answer",
        parts.join("; and for ")
    ))
}
