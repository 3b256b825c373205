//! The host modules generated from the description: `web/src/host/contract.js` for the
//! browser host and `src/contract.rs` (this crate's [`crate::contract`]) for the Rust
//! host. Both are committed; a test fails when either differs from what these functions
//! write, and `cargo run -p pexe2wasm-ppapi --bin ppapi-json -- --write-contract`
//! rewrites them.

use std::fmt::Write as _;

use crate::model::{CallbackKind, Description, Kind, ValType, WasmSignature};

/// Where the generated JavaScript module lives, from the repository root.
pub const JS_CONTRACT_PATH: &str = "web/src/host/contract.js";
/// Where the generated Rust module lives, from the repository root.
pub const RUST_CONTRACT_PATH: &str = "crates/ppapi/src/contract.rs";
/// The command that rewrites both.
pub const REGENERATE: &str = "cargo run -p pexe2wasm-ppapi --bin ppapi-json -- --write-contract";

/// The compact signature the browser host's registry reads: `params->results` with
/// `i` = i32, `I` = i64, `f` = f32, `d` = f64 (`iiii->i`, `->d`, `ii->`).
pub fn js_signature(sig: &WasmSignature) -> String {
    let letters = |v: &[ValType]| -> String {
        v.iter()
            .map(|t| match t {
                ValType::I32 => 'i',
                ValType::I64 => 'I',
                ValType::F32 => 'f',
                ValType::F64 => 'd',
            })
            .collect()
    };
    format!("{}->{}", letters(&sig.params), letters(&sig.results))
}

/// The name of an enum in the generated modules: `PP_InputEvent_Type` ->
/// `PP_INPUTEVENT_TYPE` (JavaScript) / `pp_inputevent_type` (Rust module).
fn js_enum_name(name: &str) -> String {
    name.to_ascii_uppercase()
}

const HEADER: &str = "Generated from crates/ppapi/interfaces.pepper by";

impl Description {
    /// The browser host's contract module: every enum with values as a frozen object of
    /// short names, and for the interfaces the host offers (`offered`, e.g.
    /// [`crate::hosts::BROWSER`]) each function's signature, its completion callback's
    /// wasm parameter index, and the versions offered per interface.
    pub fn javascript_contract(&self, offered: &[&str]) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "// {HEADER}\n// `{REGENERATE}`: do not edit.");
        s.push_str(
            "// A test (crates/ppapi tests/it/contract.rs) fails when it is not current.\n\
             //\n\
             // The Pepper contract of the browser host: the named values of the description's\n\
             // enums; for each PPB interface the host offers, each function's wasm signature\n\
             // (params->results; i = i32, I = i64, f = f32, d = f64) and which parameter is a\n\
             // completion callback; and the versions offered of each interface.\n",
        );
        for (name, values) in self.enums() {
            let _ = writeln!(s, "\n/** {name} */");
            let _ = writeln!(s, "export const {} = Object.freeze({{", js_enum_name(name));
            for v in values {
                let _ = writeln!(s, "  {}: {},", v.short, v.value);
            }
            s.push_str("});\n");
        }
        let ifaces: Vec<_> = self
            .interfaces
            .iter()
            .filter(|i| i.kind == Kind::Ppb && offered.contains(&i.name.as_str()))
            .collect();
        s.push_str(
            "\n/**\n * Each offered PPB function's wasm signature, by interface and function name.\n \
             * @type {Readonly<Record<string, Readonly<Record<string, string>>>>}\n */\n\
             export const SIGNATURES = Object.freeze({\n",
        );
        for i in &ifaces {
            let _ = writeln!(s, "  \"{}\": Object.freeze({{", i.name);
            for f in &i.functions {
                let _ = writeln!(s, "    {}: \"{}\",", f.name, js_signature(&f.wasm));
            }
            s.push_str("  }),\n");
        }
        s.push_str("});\n");
        s.push_str(
            "\n/**\n * The wasm parameter index of each offered function's completion callback (a\n \
             * PP_CompletionCallback passed by value: a pointer to the caller's copy); functions\n \
             * whose callback only schedules work (CallOnMainThread, PostWork) are not listed.\n \
             * @type {Readonly<Record<string, Readonly<Record<string, number>>>>}\n */\n\
             export const COMPLETION_CALLBACKS = Object.freeze({\n",
        );
        for i in &ifaces {
            let with: Vec<_> = i
                .functions
                .iter()
                .filter_map(|f| match f.callback {
                    Some(c) if c.kind == CallbackKind::Completion => Some((f, c.wasm_param)),
                    _ => None,
                })
                .collect();
            if with.is_empty() {
                continue;
            }
            let _ = writeln!(s, "  \"{}\": Object.freeze({{", i.name);
            for (f, at) in with {
                let _ = writeln!(s, "    {}: {at},", f.name);
            }
            s.push_str("  }),\n");
        }
        s.push_str("});\n");
        s.push_str(
            "\n/** The versions of each interface the browser host offers (crates/ppapi/src/hosts.rs). */\n\
             export const OFFERED = Object.freeze({\n",
        );
        let mut bases: Vec<&str> = Vec::new();
        for i in &ifaces {
            if !bases.contains(&i.base.as_str()) {
                bases.push(&i.base);
            }
        }
        for base in bases {
            let names: Vec<String> = ifaces
                .iter()
                .filter(|i| i.base == base)
                .map(|i| format!("\"{}\"", i.name))
                .collect();
            let key = if base.contains('(') {
                format!("\"{base}\"")
            } else {
                base.to_string()
            };
            let _ = writeln!(s, "  {key}: Object.freeze([{}]),", names.join(", "));
        }
        s.push_str("});\n");
        s
    }

    /// The Rust host's constants: one module per enum with values (`pp_error::FAILED`,
    /// `pp_inputevent_class::MOUSE`), each value an `i32` under its short name.
    pub fn rust_contract(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "//! {HEADER}\n//! `{REGENERATE}`: do not edit.");
        s.push_str(
            "//! A test (tests/it/contract.rs) fails when it is not current.\n\
             //!\n\
             //! The named values of the description's enums, one module per enum, each value\n\
             //! under its short name (the C name without the enum's `strip` prefix).\n",
        );
        for (name, values) in self.enums() {
            let _ = writeln!(s, "\n/// `{name}`.");
            let _ = writeln!(s, "pub mod {} {{", name.to_ascii_lowercase());
            for v in values {
                let _ = writeln!(s, "    /// `{}`", v.name);
                let _ = writeln!(s, "    pub const {}: i32 = {};", v.short, v.value);
            }
            s.push_str("}\n");
        }
        s
    }
}

/// What the common entry check of a PPB call looks at, as Chrome's thunks
/// (`ppapi/thunk/enter.h`) applied it: the `PP_Instance` the call is made on, the
/// resource it is made on with that resource's type, and its completion callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryFacts {
    /// The wasm index of the first parameter when it is a `PP_Instance`.
    pub instance: Option<usize>,
    /// The wasm index of the first parameter when it is a `PP_Resource`, with the type the
    /// interface's `IsX(PP_Resource)` names (`TCPSocket`, `FileIO`); `None` as the type
    /// for an interface with no such function (`PPB_Core.AddRefResource` takes any).
    pub resource: Option<(usize, Option<String>)>,
    /// The wasm index of the completion callback and its kind.
    pub callback: Option<(usize, CallbackKind)>,
}

impl crate::model::Interface {
    /// The resource type an interface's calls are made on: `X` of its `IsX(PP_Resource)`.
    pub fn resource_type(&self) -> Option<&str> {
        self.functions.iter().find_map(|f| {
            let rest = f.name.strip_prefix("Is")?;
            let one = matches!(f.params.as_slice(), [p] if p.ty.text == "PP_Resource");
            (one && f.ret.text == "PP_Bool").then_some(rest)
        })
    }
}

impl crate::model::Function {
    /// The facts of this function's entry check (`iface`: its interface).
    pub fn entry_facts(&self, iface: &crate::model::Interface) -> EntryFacts {
        let first = usize::from(self.sret);
        let ty = self.params.first().map(|p| p.ty.text.as_str());
        EntryFacts {
            instance: (ty == Some("PP_Instance")).then_some(first),
            resource: (ty == Some("PP_Resource"))
                .then(|| (first, iface.resource_type().map(str::to_string))),
            callback: self.callback.map(|c| (c.wasm_param, c.kind)),
        }
    }
}

impl Description {
    /// The command-line host's entry rules (written by crates/runner/build.rs into the
    /// build's `OUT_DIR`): for every function of the `offered` PPB interfaces with an
    /// instance, a resource or a callback, sorted by (interface, function), one
    /// `(interface, function, EntryRule { .. })` of the host's `EntryRule` type.
    pub fn rust_entry_rules(&self, offered: &[&str]) -> String {
        let mut rows: Vec<(String, String, EntryFacts)> = Vec::new();
        for i in &self.interfaces {
            if i.kind != Kind::Ppb || !offered.contains(&i.name.as_str()) {
                continue;
            }
            for f in &i.functions {
                let e = f.entry_facts(i);
                if e.instance.is_some() || e.resource.is_some() || e.callback.is_some() {
                    rows.push((i.name.clone(), f.name.clone(), e));
                }
            }
        }
        rows.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let mut s = String::new();
        let _ = writeln!(
            s,
            "// {HEADER} crates/runner/build.rs\n// (pexe2wasm_ppapi::Description::rust_entry_rules).\n\
             /// Each offered PPB function's entry facts, sorted by (interface, function).\n\
             pub(crate) const ENTRY_RULES: &[(&str, &str, EntryRule)] = &["
        );
        for (iface, func, e) in rows {
            let opt = |v: Option<usize>| v.map_or("None".to_string(), |i| format!("Some({i})"));
            let resource = match e.resource {
                None => "None".to_string(),
                Some((at, None)) => format!("Some(({at}, None))"),
                Some((at, Some(t))) => format!("Some(({at}, Some({t:?})))"),
            };
            let callback = match e.callback {
                None => "None".to_string(),
                Some((at, kind)) => format!("Some(({at}, CallbackKind::{kind:?}))"),
            };
            let _ = writeln!(
                s,
                "    ({iface:?}, {func:?}, EntryRule {{ instance: {}, resource: {resource}, callback: {callback} }}),",
                opt(e.instance)
            );
        }
        s.push_str("];\n");
        s
    }
}
