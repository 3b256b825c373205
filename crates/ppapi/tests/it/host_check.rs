//! `Description::check_host` reports every difference between a host's list and the
//! description.

use pexe2wasm_ppapi::{description, HostFunction, HostMismatch, ValType, WasmSignature};

use ValType::{F64, I32, I64};

fn sig(p: &[ValType], r: &[ValType]) -> WasmSignature {
    WasmSignature::new(p, r)
}

#[test]
fn a_correct_host_has_no_mismatches() {
    let d = description();
    let host = d.host_list(&["PPB_Core;1.0", "PPB_Var;1.2", "PPP_Instance;1.1"]);
    assert_eq!(host.len(), 6 + 6 + 5);
    assert_eq!(d.check_host(&host), []);
    assert_eq!(d.check_host(&[]), []);
}

#[test]
fn a_hand_written_host_list_agrees() {
    // Written from the headers and the §6.2 rules, not from the description.
    let core = [
        ("AddRefResource", sig(&[I32], &[])),
        ("ReleaseResource", sig(&[I32], &[])),
        ("GetTime", sig(&[], &[F64])),
        ("GetTimeTicks", sig(&[], &[F64])),
        ("CallOnMainThread", sig(&[I32, I32, I32], &[])),
        ("IsMainThread", sig(&[], &[I32])),
    ];
    let host: Vec<HostFunction> = core
        .iter()
        .map(|(f, s)| HostFunction::new("PPB_Core;1.0", f, s.clone()))
        .collect();
    assert_eq!(description().check_host(&host), []);
}

#[test]
fn every_kind_of_mismatch_is_reported() {
    let d = description();
    let mut host = d.host_list(&["PPB_Core;1.0", "PPB_FileSystem;1.0"]);
    // Wrong signature: Open's int64 expected_size passed as i32.
    let open = host.iter_mut().find(|h| h.function == "Open").unwrap();
    open.signature = sig(&[I32, I32, I32], &[I32]);
    // Missing function: drop IsMainThread.
    host.retain(|h| h.function != "IsMainThread");
    // Unknown function in a known interface.
    host.push(HostFunction::new(
        "PPB_Core;1.0",
        "GetTimeOfDay",
        sig(&[], &[F64]),
    ));
    // Unknown interface (twice: reported once).
    host.push(HostFunction::new("PPB_Nope;1.0", "A", sig(&[], &[])));
    host.push(HostFunction::new("PPB_Nope;1.0", "B", sig(&[], &[])));
    // Duplicate entry.
    host.push(HostFunction::new(
        "PPB_Core;1.0",
        "GetTime",
        sig(&[], &[F64]),
    ));

    let got = d.check_host(&host);
    let want = vec![
        HostMismatch::WrongSignature {
            interface: "PPB_FileSystem;1.0".into(),
            function: "Open".into(),
            expected: sig(&[I32, I64, I32], &[I32]),
            found: sig(&[I32, I32, I32], &[I32]),
        },
        HostMismatch::UnknownFunction {
            interface: "PPB_Core;1.0".into(),
            function: "GetTimeOfDay".into(),
        },
        HostMismatch::UnknownInterface {
            interface: "PPB_Nope;1.0".into(),
        },
        HostMismatch::Duplicate {
            interface: "PPB_Core;1.0".into(),
            function: "GetTime".into(),
        },
        HostMismatch::MissingFunction {
            interface: "PPB_Core;1.0".into(),
            function: "IsMainThread".into(),
        },
    ];
    assert_eq!(got, want);
    // Every mismatch has a readable one-line text naming the interface.
    for m in &got {
        let s = m.to_string();
        assert!(s.starts_with("PPB_") && !s.contains('\n'), "{s}");
    }
    assert!(got[0].to_string().contains("(i32, i64, i32) -> i32"));
}

#[test]
fn versions_are_checked_separately() {
    // A host implementing VarFromUtf8 with the 1.0 argument list under the 1.1 name.
    let d = description();
    let mut host = d.host_list(&["PPB_Var;1.1"]);
    let f = host
        .iter_mut()
        .find(|h| h.function == "VarFromUtf8")
        .unwrap();
    f.signature = d
        .interface("PPB_Var;1.0")
        .unwrap()
        .function("VarFromUtf8")
        .unwrap()
        .wasm
        .clone();
    let got = d.check_host(&host);
    assert_eq!(got.len(), 1);
    assert!(
        matches!(&got[0], HostMismatch::WrongSignature { function, .. } if function == "VarFromUtf8")
    );
}
