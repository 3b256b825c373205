//! Every runnable real pexe (one with `void _start(i32)`) converts, with the runtime
//! linked, to a module that validates (convert validates before returning); the other
//! well-formed ones are refused.

use pexe2wasm_testkit::corpus as common;

use pexe2wasm::convert::{convert, ConvertOptions};

fn check(name: &str) {
    let Some(data) = common::real_pexe(name) else {
        return;
    };
    // The two without `void _start(i32)` are refused, for that reason.
    if common::NOT_RUNNABLE.contains(&name) {
        let e = convert(&data, &ConvertOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{name}: converted without a runnable _start"));
        assert!(e.to_string().contains("_start"), "{name}: {e}");
        return;
    }
    let out = convert(&data, &ConvertOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    // Validate again independently, with every feature the output claims.
    let mut v = wasmparser::Validator::new();
    v.validate_all(&out.wasm)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(out.stats.emit.functions > 0, "{name}: no functions");
    // Threaded modules (those naming nacl-irt-thread-0.1) also import wasi-threads' spawn
    // and the host's thread exit.
    let threaded = [
        ("wasi", "thread-spawn"),
        ("pexe2wasm", "thread_exit"),
        ("pexe2wasm", "cpu_count"),
    ];
    // A Pepper plugin also imports the Pepper runtime's host interface and, one by one,
    // the functions of the PPB interfaces it names that the description knows.
    let m = pexe2wasm::decode::decode(&data).unwrap();
    let (_, ppapi) = pexe2wasm::info::interface_names(&m);
    let plugin = pexe2wasm::info::names_irt_interface(&m, pexe2wasm::needs::PPAPI_HOOK_INTERFACE);
    let pepper_host = crate::PEPPER_HOST_FUNCTIONS;
    let d = pexe2wasm_ppapi::description();
    let mut ppb_imports = 0;
    for (m, n) in &out.imports {
        let ok = m == "wasi_snapshot_preview1"
            || (out.features.threads && threaded.contains(&(m.as_str(), n.as_str())))
            || (plugin
                && m == pexe2wasm::runtime::PEPPER_HOST
                && pepper_host.contains(&n.as_str()))
            || (plugin
                && ppapi.contains(m)
                && d.interface(m).is_some_and(|i| i.function(n).is_some()));
        assert!(ok, "{name}: unexpected import {m}.{n}");
        ppb_imports += m.starts_with("PPB_") as usize;
    }
    if plugin {
        assert!(out.features.threads, "{name}: a plugin gets threads");
        let want: usize = ppapi
            .iter()
            .filter_map(|i| d.interface(i))
            .filter(|i| i.kind == pexe2wasm_ppapi::Kind::Ppb)
            .map(|i| i.functions.len())
            .sum();
        assert_eq!(ppb_imports, want, "{name}: one import per function");
        let exports: Vec<String> = wasmparser::Parser::new(0)
            .parse_all(&out.wasm)
            .filter_map(|p| match p {
                Ok(wasmparser::Payload::ExportSection(r)) => Some(
                    r.into_iter()
                        .map(|e| e.unwrap().name.to_string())
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
            .flatten()
            .collect();
        for e in pexe2wasm::runtime::PEPPER_EXPORTS {
            assert!(exports.iter().any(|x| x == e), "{name}: no export {e}");
        }
    }
}

pexe2wasm_testkit::test_each_well_formed_pexe!(check);

/// With `threads`, atomics become wasm atomic instructions on a shared memory.
#[test]
fn threads_option_uses_wasm_atomics() {
    for name in [
        "binji-binarytrees.pexe",
        "stockfish-170317.pexe",
        "webpenc.pexe",
    ] {
        let Some(data) = common::real_pexe(name) else {
            return;
        };
        let opts = ConvertOptions {
            threads: pexe2wasm::convert::Threads::On,
            ..Default::default()
        };
        let out = convert(&data, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out.features.threads, "{name}");
        let text = wasmprinter::print_bytes(&out.wasm).unwrap();
        assert!(
            text.contains("atomic.rmw"),
            "{name}: no atomic instructions"
        );
        assert!(text.contains("shared"), "{name}: memory is not shared");
    }
}

/// The placeholder runtime of `emit` (the env contract with an empty IRT) links too.
#[test]
fn placeholder_runtime_links() {
    let Some(data) = common::real_pexe("binji-puts.pexe") else {
        return;
    };
    let opts = ConvertOptions {
        runtime: Some(pexe2wasm::emit::placeholder_runtime().unwrap().to_vec()),
        ..Default::default()
    };
    let out = convert(&data, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        out.imports,
        [(
            "wasi_snapshot_preview1".to_string(),
            "proc_exit".to_string()
        )]
    );
}

/// `Threads::Auto` asks `info::names_irt_interface`, a direct search; it must agree with
/// the full interface scan (`info::interface_names`) for every name either could see, on
/// every well-formed real pexe.
#[test]
fn thread_detection_agrees_with_the_interface_scan() {
    let mut checked = 0;
    for (f, data) in common::real_pexes(common::WELL_FORMED) {
        let m = pexe2wasm::decode::decode(&data).unwrap_or_else(|e| panic!("{f}: {e}"));
        let (irt, _) = pexe2wasm::info::interface_names(&m);
        let candidates = pexe2wasm::runtime::INTERFACES
            .iter()
            .map(|(n, _)| n.to_string())
            .chain(irt.iter().cloned())
            .chain([
                "nacl-irt-ppapihook-0.1".to_string(),
                "nacl-irt-".to_string(),
            ]);
        for name in candidates {
            assert_eq!(
                pexe2wasm::info::names_irt_interface(&m, &name),
                irt.contains(&name),
                "{f}: {name}"
            );
            checked += 1;
        }
    }
    if checked > 0 {
        assert!(checked >= 30 * 17, "{checked} checks");
    }
}
