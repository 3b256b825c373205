//! What a pexe needs to run: which kind of host, and why.
//!
//! Every surface (`info`, `verify`, `convert`, `run`, `batch`, the service) says this the
//! same way, from the IRT interface names the pexe carries (a pexe queries only the
//! interfaces it names, see [`crate::info::interface_names`]) and whether it has `_start`.

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
    /// A Pepper (PPAPI) host: the pexe is a browser plugin driven through PPP_* calls.
    Pepper,
}

impl Host {
    /// Every kind, in the order reports list them.
    pub const ALL: [Host; 3] = [Host::Wasi, Host::Runner, Host::Pepper];

    /// The hosts pexe2wasm itself provides for this kind, by name (empty: none yet).
    /// Pepper hosts (in `pexe2wasm run`, in the browser) will be named here when they exist.
    pub fn provided_by(self) -> &'static [&'static str] {
        match self {
            Host::Wasi | Host::Runner => &["pexe2wasm run"],
            Host::Pepper => &[],
        }
    }

    /// Whether pexe2wasm can run such a module today.
    pub fn available(self) -> bool {
        !self.provided_by().is_empty()
    }

    /// Short words for reports: `WASI program`, `needs pexe2wasm run (threads)`, ...
    pub fn label(self) -> &'static str {
        match self {
            Host::Wasi => "WASI program",
            Host::Runner => "needs pexe2wasm run (threads)",
            Host::Pepper => "Pepper plugin (no host yet)",
        }
    }
}

/// What a pexe needs to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Needs {
    /// The host it needs; `None` when it cannot run at all (no `void _start(i32)`: a
    /// library or a test input).
    pub host: Option<Host>,
    /// The interface that decided it (`nacl-irt-ppapihook-0.1`, `nacl-irt-thread-0.1`),
    /// when one did.
    pub interface: Option<String>,
    /// Whether pexe2wasm provides such a host today ([`Host::available`]).
    pub available: bool,
    /// One line for people (the [`fmt::Display`] text).
    pub summary: String,
}

/// What a pexe with these IRT interface names needs, converted with the default
/// `Threads::Auto` (threads exactly when it names `nacl-irt-thread-0.1`). `has_start`: it
/// has the entry point `void _start(i32)` ([`crate::verify::check_runnable`]).
pub fn needs<S: AsRef<str>>(irt_interfaces: &[S], has_start: bool) -> Needs {
    let names = |n: &str| irt_interfaces.iter().any(|i| i.as_ref() == n);
    let thread = crate::convert::THREAD_INTERFACE;
    let (host, interface) = if !has_start {
        (None, None)
    } else if names(PPAPI_HOOK_INTERFACE) {
        (Some(Host::Pepper), Some(PPAPI_HOOK_INTERFACE))
    } else if names(thread) {
        (Some(Host::Runner), Some(thread))
    } else {
        (Some(Host::Wasi), None)
    };
    Needs::new(host, interface.map(str::to_string))
}

/// [`needs`] of a decoded module.
pub fn needs_of_module(m: &crate::ir::Module) -> Needs {
    let (irt, _) = crate::info::interface_names(m);
    needs(&irt, crate::verify::check_runnable(m).is_ok())
}

impl Needs {
    fn new(host: Option<Host>, interface: Option<String>) -> Needs {
        let mut n = Needs {
            host,
            available: host.is_some_and(Host::available),
            interface,
            summary: String::new(),
        };
        n.summary = n.to_string();
        n
    }

    /// What the output of a conversion needs, given whether it was converted for threads
    /// (`--threads on|off` can override what the pexe asks for). A Pepper plugin stays one.
    pub fn for_output(&self, threads: bool) -> Needs {
        match self.host {
            Some(Host::Wasi) if threads => Needs::new(Some(Host::Runner), None),
            Some(Host::Runner) if !threads => Needs::new(Some(Host::Wasi), None),
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
                write!(f, ": it converts, but needs a Pepper host")?;
                if self.available {
                    Ok(())
                } else {
                    write!(f, ", which pexe2wasm does not have yet")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decides_by_interface_and_start() {
        let pepper = needs(
            &[
                "nacl-irt-thread-0.1",
                PPAPI_HOOK_INTERFACE,
                "nacl-irt-basic-0.1",
            ],
            true,
        );
        assert_eq!(pepper.host, Some(Host::Pepper));
        assert_eq!(pepper.interface.as_deref(), Some(PPAPI_HOOK_INTERFACE));
        assert!(!pepper.available);
        assert!(pepper.summary.contains("Pepper"), "{}", pepper.summary);

        let threads = needs(&["nacl-irt-basic-0.1", "nacl-irt-thread-0.1"], true);
        assert_eq!(threads.host, Some(Host::Runner));
        assert!(threads.available);
        assert!(threads.summary.contains("pexe2wasm run"));

        let plain = needs(&["nacl-irt-basic-0.1"], true);
        assert_eq!(
            (plain.host, plain.interface.as_deref()),
            (Some(Host::Wasi), None)
        );
        assert!(plain.runs_anywhere());

        let lib = needs(&[PPAPI_HOOK_INTERFACE], false);
        assert_eq!(lib.host, None);
        assert!(!lib.available);
    }

    #[test]
    fn output_follows_the_threads_choice() {
        let plain = needs(&["nacl-irt-basic-0.1"], true);
        assert_eq!(plain.for_output(true).host, Some(Host::Runner));
        assert_eq!(plain.for_output(false), plain);
        let threads = needs(&["nacl-irt-thread-0.1"], true);
        assert_eq!(threads.for_output(false).host, Some(Host::Wasi));
        let pepper = needs(&[PPAPI_HOOK_INTERFACE], true);
        assert_eq!(pepper.for_output(false), pepper);
        assert_eq!(pepper.for_output(true), pepper);
    }

    #[test]
    fn serializes_for_tools() {
        let j = serde_json::to_value(needs(&[PPAPI_HOOK_INTERFACE], true)).unwrap();
        assert_eq!(j["host"], "pepper");
        assert_eq!(j["interface"], PPAPI_HOOK_INTERFACE);
        assert_eq!(j["available"], false);
        let j = serde_json::to_value(needs::<&str>(&[], false)).unwrap();
        assert!(j["host"].is_null());
    }
}
