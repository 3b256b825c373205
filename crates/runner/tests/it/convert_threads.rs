//! Conversion for threads: decided by the pexe (`Threads::Auto` turns threads on exactly
//! when it names nacl-irt-thread-0.1), the shape of a threaded module (one imported shared
//! memory, wasi-threads import and export, data initialized once), unthreaded output left
//! as it was, and the threaded runtime variant.

use pexe2wasm::convert::{convert, ConvertOptions, Threads};
use pexe2wasm::runtime;
use wasmparser::{Parser, Payload, TypeRef, Validator, WasmFeatures};

fn fixture(rel: &str) -> Vec<u8> {
    let p = pexe2wasm_testkit::repo_path("fixtures").join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn with(threads: Threads) -> ConvertOptions {
    ConvertOptions {
        threads,
        ..Default::default()
    }
}

/// What the tests look at in a module.
#[derive(Default, Debug)]
struct Shape {
    imported_memory: Option<wasmparser::MemoryType>,
    defined_memories: u32,
    func_imports: Vec<(String, String)>,
    exports: Vec<String>,
    active_data: u32,
    passive_data: u32,
}

fn shape(wasm: &[u8]) -> Shape {
    let mut s = Shape::default();
    for p in Parser::new(0).parse_all(wasm) {
        match p.unwrap() {
            Payload::ImportSection(r) => {
                for i in r.into_imports() {
                    let i = i.unwrap();
                    match i.ty {
                        TypeRef::Memory(m) => s.imported_memory = Some(m),
                        TypeRef::Func(_) => s.func_imports.push((i.module.into(), i.name.into())),
                        _ => {}
                    }
                }
            }
            Payload::MemorySection(r) => s.defined_memories += r.count(),
            Payload::ExportSection(r) => {
                for e in r {
                    s.exports.push(e.unwrap().name.into());
                }
            }
            Payload::DataSection(r) => {
                for d in r {
                    match d.unwrap().kind {
                        wasmparser::DataKind::Active { .. } => s.active_data += 1,
                        wasmparser::DataKind::Passive => s.passive_data += 1,
                    }
                }
            }
            _ => {}
        }
    }
    s
}

#[test]
fn a_pexe_naming_the_thread_interface_converts_for_threads() {
    let pexe = fixture("semantics/threads_futex.pexe");
    let auto = convert(&pexe, &ConvertOptions::default()).unwrap();
    assert!(auto.features.threads);
    let on = convert(&pexe, &with(Threads::On)).unwrap();
    assert_eq!(auto.wasm, on.wasm, "auto = on for this pexe");
    let s = shape(&auto.wasm);
    let m = s.imported_memory.expect("imports its memory");
    assert!(m.shared && m.maximum == Some(65536), "{m:?}");
    assert_eq!(s.defined_memories, 0);
    assert!(s
        .func_imports
        .contains(&("wasi".to_string(), "thread-spawn".to_string())));
    assert!(s
        .func_imports
        .contains(&("pexe2wasm".to_string(), "thread_exit".to_string())));
    for e in ["_start", "wasi_thread_start", "memory"] {
        assert!(
            s.exports.iter().any(|x| x == e),
            "exports {e}: {:?}",
            s.exports
        );
    }
    // Every data segment is passive: new thread instances must not re-initialize memory.
    assert_eq!(s.active_data, 0);
    assert!(s.passive_data >= 2, "{s:?}");
    // The atomics are wasm atomics: the module validates only with threads.
    let mut v = Validator::new_with_features(WasmFeatures::default() & !WasmFeatures::THREADS);
    assert!(v.validate_all(&auto.wasm).is_err());
}

#[test]
fn threads_off_keeps_a_plain_module() {
    let pexe = fixture("semantics/threads_futex.pexe");
    let off = convert(&pexe, &with(Threads::Off)).unwrap();
    assert!(!off.features.threads);
    let s = shape(&off.wasm);
    assert!(s.imported_memory.is_none());
    assert_eq!(s.defined_memories, 1);
    assert!(!s.func_imports.iter().any(|(m, _)| m != runtime::WASI));
    assert!(!s.exports.iter().any(|e| e == "wasi_thread_start"));
    assert_eq!(s.passive_data, 1, "only the runtime's own constants");
}

#[test]
fn other_pexes_are_unchanged_by_auto() {
    for rel in [
        "hello.pexe",
        "semantics/atomics.pexe",
        "semantics/memory.pexe",
    ] {
        let pexe = fixture(rel);
        let auto = convert(&pexe, &ConvertOptions::default()).unwrap();
        let off = convert(&pexe, &with(Threads::Off)).unwrap();
        assert_eq!(auto.wasm, off.wasm, "{rel}");
        assert!(!auto.features.threads);
        assert!(shape(&auto.wasm).imported_memory.is_none());
    }
}

#[test]
fn threaded_runtime_variant() {
    // As written, irt.wat is the unthreaded runtime.
    assert_eq!(runtime::irt_source(false), runtime::IRT_WAT);
    let src = runtime::irt_source(true);
    for line in src.lines().map(str::trim) {
        assert!(!line.starts_with(";;@threads "), "{line}");
        assert!(!line.ends_with(";;@unthreaded"), "{line}");
        assert!(!["(;@threads", "@threads;)", ";;@unthreaded{"].contains(&line));
    }
    assert!(!src.contains("$futex_deadlock"));
    let wasm = runtime::irt_threads_module();
    let mut v = Validator::new_with_features(WasmFeatures::default() | WasmFeatures::THREADS);
    v.validate_all(wasm).unwrap();
    let s = shape(wasm);
    assert!(s.imported_memory.unwrap().shared);
    assert!(s.exports.iter().any(|e| e == runtime::EXPORT_THREAD_START));
    assert!(s.func_imports.contains(&(
        runtime::WASI_THREADS.to_string(),
        runtime::THREAD_SPAWN.to_string()
    )));
    // The unthreaded one has none of it.
    let s = shape(runtime::irt_module());
    assert!(!s.imported_memory.unwrap().shared);
    assert!(!s.exports.iter().any(|e| e == runtime::EXPORT_THREAD_START));
    // Neither has the Pepper parts, which only the Pepper variant opens.
    for src in [runtime::IRT_WAT.to_string(), runtime::irt_source(true)] {
        let wasm = wat::parse_str(&src).unwrap();
        let s = shape(&wasm);
        assert!(!s
            .func_imports
            .iter()
            .any(|(m, _)| m == runtime::PEPPER_HOST));
        assert!(!s.exports.iter().any(|e| e.starts_with("__ppp_")));
    }
}

#[test]
fn pepper_runtime_variant() {
    let src = runtime::irt_pepper_source();
    for line in src.lines().map(str::trim) {
        assert!(!line.starts_with(";;@pepper "), "{line}");
        assert!(!line.ends_with(";;@unpepper"), "{line}");
        assert!(!line.starts_with(";;@threads "), "{line}");
        assert!(!["(;@pepper", "@pepper;)"].contains(&line));
    }
    let wasm = runtime::irt_pepper_module();
    let mut v = Validator::new_with_features(WasmFeatures::default() | WasmFeatures::THREADS);
    v.validate_all(wasm).unwrap();
    let s = shape(wasm);
    // Threaded, plus the Pepper host's imports and the PPP entry points.
    assert!(s.imported_memory.unwrap().shared);
    assert!(s.exports.iter().any(|e| e == runtime::EXPORT_THREAD_START));
    for name in crate::PEPPER_HOST_FUNCTIONS {
        assert!(
            s.func_imports
                .contains(&(runtime::PEPPER_HOST.to_string(), name.to_string())),
            "{name}"
        );
    }
    for e in runtime::PEPPER_EXPORTS {
        assert!(s.exports.iter().any(|x| x == e), "{e}");
    }
}
