//! The command-line Pepper host against the interface description: every function it
//! registers exists with the description's wasm signature, and every interface it offers
//! is complete.

use std::collections::BTreeSet;

use pexe2wasm_ppapi::{description, HostFunction, ValType, WasmSignature};
use pexe2wasm_runner::pepper::{PepperConfig, PepperHost, OFFERED};
use pexe2wasm_runner::wasmtime::{Extern, Linker, Store};
use pexe2wasm_runner::{new_engine, Ctx, Host};

fn valtype(t: &pexe2wasm_runner::wasmtime::ValType) -> ValType {
    match t {
        pexe2wasm_runner::wasmtime::ValType::I32 => ValType::I32,
        pexe2wasm_runner::wasmtime::ValType::I64 => ValType::I64,
        pexe2wasm_runner::wasmtime::ValType::F32 => ValType::F32,
        pexe2wasm_runner::wasmtime::ValType::F64 => ValType::F64,
        other => panic!("a Pepper import with a {other} parameter"),
    }
}

/// What the host registers for PPB interfaces, as the description's check takes it.
pub fn registered_ppb_functions() -> Vec<HostFunction> {
    let engine = new_engine(false).unwrap();
    let mut linker: Linker<Ctx> = Linker::new(&engine);
    let host = PepperHost::new(PepperConfig::new(Vec::new(), Default::default()));
    Host::link(&host, &mut linker).unwrap();
    let mut store = Store::new(
        &engine,
        Ctx::standalone(pexe2wasm_runner::wasi_ctx(&Default::default()).unwrap().0),
    );
    let mut out = Vec::new();
    let items: Vec<(String, String, Extern)> = linker
        .iter(&mut store)
        .map(|(m, n, e)| (m.to_string(), n.to_string(), e))
        .collect();
    for (module, name, ext) in items {
        if !module.starts_with("PPB_") {
            continue;
        }
        let Extern::Func(f) = ext else {
            panic!("{module}.{name} is not a function")
        };
        let ty = f.ty(&store);
        let params: Vec<ValType> = ty.params().map(|t| valtype(&t)).collect();
        let results: Vec<ValType> = ty.results().map(|t| valtype(&t)).collect();
        out.push(HostFunction::new(
            &module,
            &name,
            WasmSignature::new(&params, &results),
        ));
    }
    out
}

#[test]
fn cli_host_matches_the_description() {
    let funcs = registered_ppb_functions();
    assert!(
        funcs.len() > 50,
        "only {} functions registered",
        funcs.len()
    );
    let mismatches = description().check_host(&funcs);
    assert!(
        mismatches.is_empty(),
        "{}",
        mismatches
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // It registers exactly the interfaces it offers.
    let registered: BTreeSet<&str> = funcs.iter().map(|f| f.interface.as_str()).collect();
    let offered: BTreeSet<&str> = OFFERED.iter().copied().collect();
    assert_eq!(registered, offered);
}

#[test]
fn the_check_catches_a_wrong_signature_and_a_missing_function() {
    // The same check must fail when the host is wrong: drop one function, change another.
    // The linker lists its items in hash order, so sort them, and drop a function from an
    // interface that keeps others: an interface with none left is simply not offered, which
    // the check rightly accepts.
    let mut funcs = registered_ppb_functions();
    funcs.sort_by(|a, b| (&a.interface, &a.function).cmp(&(&b.interface, &b.function)));
    let at = (1..funcs.len())
        .find(|&i| funcs[i].interface == funcs[i - 1].interface)
        .expect("an interface with two functions");
    let dropped = funcs.remove(at);
    let changed = if at + 1 < funcs.len() { at + 1 } else { 0 };
    funcs[changed].signature = WasmSignature::new(&[ValType::F64], &[]);
    let text: Vec<String> = description()
        .check_host(&funcs)
        .iter()
        .map(|m| m.to_string())
        .collect();
    assert!(
        text.iter()
            .any(|t| t.contains(&dropped.interface) && t.contains(&dropped.function)),
        "{dropped:?} missing from {text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains(&funcs[changed].function) && t.contains("(f64) -> ()")),
        "{text:?}"
    );
    assert!(text.len() >= 2, "{text:?}");
}

/// Calls with a completion callback that keep an entry of their own, and why.
const OWN_ENTRY: &[(&str, &str, &str)] = &[
    (
        "PPB_Graphics2D;1.0",
        "Flush",
        "finds the context and marks its flush pending under one lock",
    ),
    (
        "PPB_Graphics2D;1.1",
        "Flush",
        "finds the context and marks its flush pending under one lock",
    ),
    (
        "PPB_Graphics2D;1.2",
        "Flush",
        "finds the context and marks its flush pending under one lock",
    ),
];

#[test]
fn calls_with_a_completion_callback_take_the_generated_entry_check() {
    // Linking the host records which calls went through the common check.
    registered_ppb_functions();
    let entered = pexe2wasm_runner::pepper::entered_calls();
    let d = description();
    let mut wrong = Vec::new();
    for name in OFFERED {
        let iface = d.interface(name).unwrap();
        for f in &iface.functions {
            let completion = matches!(
                f.callback,
                Some(c) if c.kind == pexe2wasm_ppapi::CallbackKind::Completion
            );
            let is_entered = entered.contains(&(iface.name.as_str(), f.name.as_str()));
            let own = OWN_ENTRY
                .iter()
                .any(|(i, n, _)| *i == iface.name && *n == f.name);
            match (completion, is_entered, own) {
                (true, false, false) => wrong.push(format!("{name} {}: not entered", f.name)),
                (_, true, true) => {
                    wrong.push(format!("{name} {}: entered, yet listed as own", f.name))
                }
                (false, true, _) => {
                    wrong.push(format!("{name} {}: entered without a callback", f.name))
                }
                _ => {}
            }
        }
    }
    for (i, n, _) in OWN_ENTRY {
        assert!(OFFERED.contains(i), "{i} {n}: listed but not offered");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(entered.len() > 30, "only {} calls entered", entered.len());
}
