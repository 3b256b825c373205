//! Checking a host's list of implemented functions against the description.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use crate::model::{Description, WasmSignature};

/// One function a host says it implements (for a PPB interface) or expects the module
/// to implement (for a PPP interface), with the wasm signature it uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostFunction {
    /// The full interface name string, e.g. `PPB_Var;1.2`.
    pub interface: String,
    pub function: String,
    pub signature: WasmSignature,
}

impl HostFunction {
    pub fn new(interface: &str, function: &str, signature: WasmSignature) -> Self {
        HostFunction {
            interface: interface.to_string(),
            function: function.to_string(),
            signature,
        }
    }
}

/// A difference between a host's list and the description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "mismatch", rename_all = "snake_case")]
pub enum HostMismatch {
    /// The host names an interface the description does not have.
    UnknownInterface { interface: String },
    /// The host names a function the interface does not have.
    UnknownFunction { interface: String, function: String },
    /// The host's signature for a function differs from the description's.
    WrongSignature {
        interface: String,
        function: String,
        expected: WasmSignature,
        found: WasmSignature,
    },
    /// The host claims an interface but lacks one of its functions.
    MissingFunction { interface: String, function: String },
    /// The host lists the same function twice.
    Duplicate { interface: String, function: String },
}

impl fmt::Display for HostMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostMismatch::UnknownInterface { interface } => {
                write!(f, "{interface}: not a described interface")
            }
            HostMismatch::UnknownFunction {
                interface,
                function,
            } => write!(f, "{interface}: has no function {function}"),
            HostMismatch::WrongSignature {
                interface,
                function,
                expected,
                found,
            } => write!(
                f,
                "{interface}: {function} is {expected} in the description, the host has {found}"
            ),
            HostMismatch::MissingFunction {
                interface,
                function,
            } => write!(f, "{interface}: the host lacks {function}"),
            HostMismatch::Duplicate {
                interface,
                function,
            } => write!(f, "{interface}: the host lists {function} twice"),
        }
    }
}

impl Description {
    /// Compares what a host implements with the description and returns every mismatch
    /// (empty when the host agrees). Mismatches of one interface come together, in the
    /// order of the host's list for unknown/wrong/duplicate entries, then the missing
    /// functions in slot order.
    pub fn check_host(&self, host: &[HostFunction]) -> Vec<HostMismatch> {
        let mut out = Vec::new();
        // interface -> functions the host has (known interfaces only), in first-seen order.
        let mut claimed: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut order: Vec<&str> = Vec::new();
        let mut unknown: BTreeSet<&str> = BTreeSet::new();
        for h in host {
            let Some(iface) = self.interface(&h.interface) else {
                if unknown.insert(&h.interface) {
                    out.push(HostMismatch::UnknownInterface {
                        interface: h.interface.clone(),
                    });
                }
                continue;
            };
            let seen = claimed.entry(&iface.name).or_insert_with(|| {
                order.push(&iface.name);
                BTreeSet::new()
            });
            if !seen.insert(&h.function) {
                out.push(HostMismatch::Duplicate {
                    interface: h.interface.clone(),
                    function: h.function.clone(),
                });
                continue;
            }
            match iface.function(&h.function) {
                None => out.push(HostMismatch::UnknownFunction {
                    interface: h.interface.clone(),
                    function: h.function.clone(),
                }),
                Some(f) if f.wasm != h.signature => out.push(HostMismatch::WrongSignature {
                    interface: h.interface.clone(),
                    function: h.function.clone(),
                    expected: f.wasm.clone(),
                    found: h.signature.clone(),
                }),
                Some(_) => {}
            }
        }
        for name in order {
            let iface = self.interface(name).expect("claimed names are described");
            let have = &claimed[name];
            for f in &iface.functions {
                if !have.contains(f.name.as_str()) {
                    out.push(HostMismatch::MissingFunction {
                        interface: iface.name.clone(),
                        function: f.name.clone(),
                    });
                }
            }
        }
        out
    }

    /// Every function of the named interfaces as a host list that agrees with the
    /// description (a starting point for a host's own list, and for tests).
    pub fn host_list(&self, interfaces: &[&str]) -> Vec<HostFunction> {
        interfaces
            .iter()
            .filter_map(|n| self.interface(n))
            .flat_map(|i| {
                i.functions
                    .iter()
                    .map(|f| HostFunction::new(&i.name, &f.name, f.wasm.clone()))
            })
            .collect()
    }
}
