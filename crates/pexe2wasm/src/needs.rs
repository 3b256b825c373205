//! What a pexe needs to run: which kind of host, and why.
//!
//! Every surface (`info`, `verify`, `convert`, `run`, `batch`, the service) says this the
//! same way, from the IRT and Pepper interface names the pexe carries (a pexe queries
//! only the interfaces it names, see [`crate::info::interface_names`]) and whether it has
//! `_start`. A Pepper plugin runs under the command-line Pepper host when every PPB
//! interface it names is one that host offers (`pexe2wasm_ppapi::hosts::CLI`); one that
//! names others (Graphics3D, Audio …) needs a browser.

use serde::Serialize;
use std::fmt;

/// The IRT interface a Pepper (PPAPI) plugin queries at startup (`PpapiPluginStart`): the
/// hook through which the browser drives the plugin's PPP_* interfaces.
pub const PPAPI_HOOK_INTERFACE: &str = "nacl-irt-ppapihook-0.1";

/// The kind of host a converted module needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Host {
    /// Any WASI preview 1 runtime (stock `wasmtime run`, `pexe2wasm run`, ...).
    Wasi,
    /// `pexe2wasm run`: the threaded module needs wasi-threads (`wasi`.`thread-spawn`) and
    /// the runtime's `pexe2wasm`.`thread_exit`, which stock runtimes do not provide.
    Runner,
    /// A Pepper (PPAPI) plugin that the command-line Pepper host (`pexe2wasm run`) can
    /// run: every PPB interface it names is one that host offers.
    Pepper,
    /// A Pepper plugin that names interfaces only a browser can back (Graphics3D, Audio,
    /// …): under `pexe2wasm run` it gets NULL for them, as in a browser without them.
    Browser,
}

impl Host {
    /// Every kind, in the order reports list them.
    pub const ALL: [Host; 4] = [Host::Wasi, Host::Runner, Host::Pepper, Host::Browser];

    /// The hosts on this machine's command line that run this kind, by name (empty for a
    /// plugin that needs a browser: `pexe2wasm web` makes it a page for one).
    pub fn provided_by(self) -> &'static [&'static str] {
        match self {
            Host::Wasi | Host::Runner | Host::Pepper => &["pexe2wasm run"],
            Host::Browser => &[],
        }
    }

    /// Whether pexe2wasm runs such a module here, without a browser.
    pub fn available(self) -> bool {
        !self.provided_by().is_empty()
    }

    /// Short words for reports: `WASI program`, `needs pexe2wasm run (threads)`, ...
    pub fn label(self) -> &'static str {
        match self {
            Host::Wasi => "WASI program",
            Host::Runner => "needs pexe2wasm run (threads)",
            Host::Pepper => "Pepper plugin (pexe2wasm run)",
            Host::Browser => "Pepper plugin needing a browser (pexe2wasm web)",
        }
    }
}

/// What a pexe needs to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Needs {
    /// The host it needs; `None` when it cannot run at all (no `void _start(i32)`: a
    /// library or a test input).
    pub host: Option<Host>,
    /// The interface that decided it (`nacl-irt-ppapihook-0.1`, `nacl-irt-thread-0.1`, or
    /// for [`Host::Browser`] the first PPB interface the command-line host lacks), when
    /// one did.
    pub interface: Option<String>,
    /// Whether pexe2wasm runs it here, without a browser ([`Host::available`]); a plugin
    /// that needs a browser runs through `pexe2wasm web`.
    pub available: bool,
    /// For a Pepper plugin: the PPB interfaces it names that the command-line Pepper host
    /// does not offer (it gets NULL for them there).
    pub lacking: Vec<String>,
    /// One line for people (the [`fmt::Display`] text).
    pub summary: String,
}

/// What a pexe with these IRT and Pepper interface names needs, converted with the
/// default `Threads::Auto` (threads exactly when it names `nacl-irt-thread-0.1`, or is a
/// Pepper plugin). `has_start`: it has the entry point `void _start(i32)`
/// ([`crate::verify::check_runnable`]).
pub fn needs<S: AsRef<str>, P: AsRef<str>>(
    irt_interfaces: &[S],
    ppapi_interfaces: &[P],
    has_start: bool,
) -> Needs {
    let names = |n: &str| irt_interfaces.iter().any(|i| i.as_ref() == n);
    let thread = crate::convert::THREAD_INTERFACE;
    if !has_start {
        return Needs::new(None, None, Vec::new());
    }
    if names(PPAPI_HOOK_INTERFACE) {
        let lacking = lacking_on_cli(ppapi_interfaces);
        return match lacking.first() {
            None => Needs::new(
                Some(Host::Pepper),
                Some(PPAPI_HOOK_INTERFACE.into()),
                lacking,
            ),
            Some(first) => Needs::new(Some(Host::Browser), Some(first.clone()), lacking),
        };
    }
    if names(thread) {
        Needs::new(Some(Host::Runner), Some(thread.into()), Vec::new())
    } else {
        Needs::new(Some(Host::Wasi), None, Vec::new())
    }
}

/// The PPB interfaces among `names` that the command-line Pepper host does not offer,
/// sorted.
pub fn lacking_on_cli<P: AsRef<str>>(names: &[P]) -> Vec<String> {
    let mut v: Vec<String> = names
        .iter()
        .map(|n| n.as_ref())
        .filter(|n| n.starts_with("PPB_") && !pexe2wasm_ppapi::hosts::cli_offers(n))
        .map(str::to_string)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// [`needs`] of a decoded module.
pub fn needs_of_module(m: &crate::ir::Module) -> Needs {
    let (irt, ppapi) = crate::info::interface_names(m);
    needs(&irt, &ppapi, crate::verify::check_runnable(m).is_ok())
}

impl Needs {
    fn new(host: Option<Host>, interface: Option<String>, lacking: Vec<String>) -> Needs {
        let mut n = Needs {
            host,
            available: host.is_some_and(Host::available),
            interface,
            lacking,
            summary: String::new(),
        };
        n.summary = n.to_string();
        n
    }

    /// What the output of a conversion needs, given whether it was converted for threads
    /// (`--threads on|off` can override what the pexe asks for). A Pepper plugin stays one.
    pub fn for_output(&self, threads: bool) -> Needs {
        match self.host {
            Some(Host::Wasi) if threads => Needs::new(Some(Host::Runner), None, Vec::new()),
            Some(Host::Runner) if !threads => Needs::new(Some(Host::Wasi), None, Vec::new()),
            _ => self.clone(),
        }
    }

    /// True when a stock WASI runtime runs the module.
    pub fn runs_anywhere(&self) -> bool {
        self.host == Some(Host::Wasi)
    }
}

impl fmt::Display for Needs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = |f: &mut fmt::Formatter<'_>| match &self.interface {
            Some(i) => write!(f, " (it queries {i})"),
            None => Ok(()),
        };
        match self.host {
            None => write!(f, "cannot run: no void _start(i32) entry point"),
            Some(Host::Wasi) => write!(f, "runs on any WASI runtime (e.g. wasmtime)"),
            Some(Host::Runner) => {
                write!(f, "needs pexe2wasm run: a threaded module")?;
                why(f)?;
                write!(
                    f,
                    " uses wasi-threads and pexe2wasm.thread_exit, which stock WASI runtimes lack"
                )
            }
            Some(Host::Pepper) => {
                write!(f, "a Pepper (PPAPI) plugin")?;
                why(f)?;
                write!(
                    f,
                    ": runs under pexe2wasm run, the command-line Pepper host (messages on stdin and stdout)"
                )
            }
            Some(Host::Browser) => {
                write!(
                    f,
                    "a Pepper (PPAPI) plugin that needs a browser: it uses {}",
                    self.lacking.join(", ")
                )?;
                write!(
                    f,
                    ", which the command-line Pepper host does not offer (pexe2wasm run gives it NULL for {}); pexe2wasm web makes it a page that runs in a browser",
                    if self.lacking.len() == 1 { "it" } else { "them" }
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: &[&str] = &[];

    #[test]
    fn decides_by_interface_and_start() {
        let irt = [
            "nacl-irt-thread-0.1",
            PPAPI_HOOK_INTERFACE,
            "nacl-irt-basic-0.1",
        ];
        let pepper = needs(
            &irt,
            &["PPB_Var;1.1", "PPP_Instance;1.1", "PPB_Messaging;1.0"],
            true,
        );
        assert_eq!(pepper.host, Some(Host::Pepper));
        assert_eq!(pepper.interface.as_deref(), Some(PPAPI_HOOK_INTERFACE));
        assert!(pepper.available);
        assert!(pepper.lacking.is_empty());
        assert!(
            pepper.summary.contains("pexe2wasm run"),
            "{}",
            pepper.summary
        );

        // One interface only a browser backs makes it a browser plugin, named.
        let gl = needs(
            &irt,
            &["PPB_Var;1.1", "PPB_Graphics3D;1.0", "PPB_Audio;1.1"],
            true,
        );
        assert_eq!(gl.host, Some(Host::Browser));
        assert_eq!(gl.interface.as_deref(), Some("PPB_Audio;1.1"));
        assert_eq!(gl.lacking, ["PPB_Audio;1.1", "PPB_Graphics3D;1.0"]);
        assert!(!gl.available);
        assert!(gl.summary.contains("PPB_Graphics3D;1.0"), "{}", gl.summary);

        let threads = needs(&["nacl-irt-basic-0.1", "nacl-irt-thread-0.1"], NONE, true);
        assert_eq!(threads.host, Some(Host::Runner));
        assert!(threads.available);
        assert!(threads.summary.contains("pexe2wasm run"));

        let plain = needs(&["nacl-irt-basic-0.1"], NONE, true);
        assert_eq!(
            (plain.host, plain.interface.as_deref()),
            (Some(Host::Wasi), None)
        );
        assert!(plain.runs_anywhere());

        let lib = needs(&[PPAPI_HOOK_INTERFACE], NONE, false);
        assert_eq!(lib.host, None);
        assert!(!lib.available);
    }

    #[test]
    fn output_follows_the_threads_choice() {
        let plain = needs(&["nacl-irt-basic-0.1"], NONE, true);
        assert_eq!(plain.for_output(true).host, Some(Host::Runner));
        assert_eq!(plain.for_output(false), plain);
        let threads = needs(&["nacl-irt-thread-0.1"], NONE, true);
        assert_eq!(threads.for_output(false).host, Some(Host::Wasi));
        let pepper = needs(&[PPAPI_HOOK_INTERFACE], NONE, true);
        assert_eq!(pepper.for_output(false), pepper);
        assert_eq!(pepper.for_output(true), pepper);
    }

    #[test]
    fn serializes_for_tools() {
        let j = serde_json::to_value(needs(&[PPAPI_HOOK_INTERFACE], NONE, true)).unwrap();
        assert_eq!(j["host"], "pepper");
        assert_eq!(j["interface"], PPAPI_HOOK_INTERFACE);
        assert_eq!(j["available"], true);
        let j = serde_json::to_value(needs(
            &[PPAPI_HOOK_INTERFACE],
            &["PPB_Graphics3D;1.0"],
            true,
        ))
        .unwrap();
        assert_eq!(j["host"], "browser");
        assert_eq!(j["lacking"][0], "PPB_Graphics3D;1.0");
        let j = serde_json::to_value(needs::<&str, &str>(&[], &[], false)).unwrap();
        assert!(j["host"].is_null());
    }
}
