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
