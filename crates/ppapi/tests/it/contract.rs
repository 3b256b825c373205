//! The generated host modules (web/src/host/contract.js, src/contract.rs) are what the
//! generator writes from the description, and say what the description says.

use std::path::Path;

use pexe2wasm_ppapi::{
    contract, description, hosts, js_signature, ValType, WasmSignature, JS_CONTRACT_PATH,
    REGENERATE, RUST_CONTRACT_PATH,
};

fn committed(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

#[test]
fn committed_javascript_contract_is_current() {
    let want = description().javascript_contract(hosts::BROWSER);
    assert!(
        committed(JS_CONTRACT_PATH) == want,
        "{JS_CONTRACT_PATH} is not what the description gives: regenerate it with `{REGENERATE}`"
    );
}

#[test]
fn committed_rust_contract_is_current() {
    let want = description().rust_contract();
    assert!(
        committed(RUST_CONTRACT_PATH) == want,
        "{RUST_CONTRACT_PATH} is not what the description gives: regenerate it with `{REGENERATE}`"
    );
}

#[test]
fn compact_signatures() {
    use ValType::*;
    assert_eq!(js_signature(&WasmSignature::new(&[], &[F64])), "->d");
    assert_eq!(
        js_signature(&WasmSignature::new(&[I32, I64, F32], &[])),
        "iIf->"
    );
    let d = description();
    let sig = |i: &str, f: &str| js_signature(&d.interface(i).unwrap().function(f).unwrap().wasm);
    assert_eq!(sig("PPB_FileSystem;1.0", "Open"), "iIi->i");
    assert_eq!(sig("PPB_Var;1.1", "VarFromUtf8"), "iii->");
}

#[test]
fn javascript_contract_says_what_the_description_says() {
    let d = description();
    let js = d.javascript_contract(&["PPB_FileIO;1.0", "PPB_FileIO;1.1", "PPB_Core;1.0"]);
    assert!(js.contains("export const PP_ERROR = Object.freeze({\n  OK: 0,\n  COMPLETIONPENDING: -1,\n  FAILED: -2,\n"), "{js}");
    assert!(js.contains(
        "export const PP_INPUTEVENT_CLASS = Object.freeze({\n  MOUSE: 1,\n  KEYBOARD: 2,\n"
    ));
    // Only the offered interfaces, with every function.
    assert!(js.contains("  \"PPB_FileIO;1.0\": Object.freeze({\n    Create: \"i->i\",\n"));
    assert!(js.contains("    ReadToArray: \"iIiii->i\",\n"), "{js}");
    assert!(!js.contains("PPB_Var;1.0"));
    // Open's callback is its fourth wasm parameter; CallOnMainThread's schedules work.
    assert!(js.contains("    Open: 3,\n"));
    assert!(!js.contains("CallOnMainThread: 1"));
    assert!(js.contains("  PPB_FileIO: Object.freeze([\"PPB_FileIO;1.0\", \"PPB_FileIO;1.1\"]),\n"));
    assert!(js.contains("  PPB_Core: Object.freeze([\"PPB_Core;1.0\"]),\n"));
}

#[test]
fn rust_contract_matches_the_description() {
    let d = description();
    let value = |e: &str, short: &str| {
        d.enum_values(e)
            .unwrap()
            .iter()
            .find(|v| v.short == short)
            .unwrap()
            .value
    };
    assert_eq!(
        contract::pp_error::BADRESOURCE,
        value("PP_Error", "BADRESOURCE")
    );
    assert_eq!(contract::pp_error::COMPLETIONPENDING, -1);
    assert_eq!(
        contract::pp_completioncallback_flag::OPTIONAL,
        value("PP_CompletionCallback_Flag", "OPTIONAL")
    );
    assert_eq!(contract::pp_vartype::RESOURCE, 10);
    assert_eq!(contract::pp_inputevent_type::UNDEFINED, -1);
}

#[test]
fn entry_facts_say_where_the_instance_resource_and_callback_are() {
    use pexe2wasm_ppapi::{CallbackKind, EntryFacts};
    let d = description();
    let facts = |i: &str, f: &str| {
        let iface = d.interface(i).unwrap();
        iface.function(f).unwrap().entry_facts(iface)
    };
    let cases = [
        (
            ("PPB_TCPSocket;1.1", "Bind"),
            EntryFacts {
                instance: None,
                resource: Some((0, Some("TCPSocket".into()))),
                callback: Some((2, CallbackKind::Completion)),
            },
        ),
        (
            // The struct result's hidden pointer comes first.
            ("PPB_MouseInputEvent;1.1", "GetPosition"),
            EntryFacts {
                instance: None,
                resource: Some((1, Some("MouseInputEvent".into()))),
                callback: None,
            },
        ),
        (
            // PPB_Core has no IsX: its resources are of any type.
            ("PPB_Core;1.0", "AddRefResource"),
            EntryFacts {
                instance: None,
                resource: Some((0, None)),
                callback: None,
            },
        ),
        (
            ("PPB_Core;1.0", "CallOnMainThread"),
            EntryFacts {
                instance: None,
                resource: None,
                callback: Some((1, CallbackKind::Schedules)),
            },
        ),
        (
            ("PPB_FileIO;1.0", "Create"),
            EntryFacts {
                instance: Some(0),
                resource: None,
                callback: None,
            },
        ),
    ];
    for ((i, f), want) in cases {
        assert_eq!(facts(i, f), want, "{i} {f}");
    }
    let rules = d.rust_entry_rules(hosts::CLI);
    assert!(
        rules.contains("    (\"PPB_FileIO;1.0\", \"Read\", EntryRule { instance: None, resource: Some((0, Some(\"FileIO\"))), callback: Some((4, CallbackKind::Completion)) }),\n"),
        "{rules}"
    );
    // Only what the host offers.
    assert!(!rules.contains("PPB_Audio;"), "{rules}");
}
