//! Every runnable real pexe (one with `void _start(i32)`) converts, with the runtime
//! linked, to a module that validates (convert validates before returning).

use pexe2wasm_testkit::corpus as common;

use pexe2wasm::convert::{convert, ConvertOptions};

fn check(name: &str) {
    let Some(data) = common::real_pexe(name) else {
        return;
    };
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

macro_rules! real {
    ($($test:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check($file);
            }
        )*

        /// The list above covers every well-formed pexe but the two without `_start`.
        #[test]
        fn covers_every_runnable_pexe() {
            let listed = [$($file),*];
            for f in common::WELL_FORMED {
                let runnable = !common::NOT_RUNNABLE.contains(f);
                assert_eq!(listed.contains(f), runnable, "{f}");
            }
        }
    };
}

real! {
    astar_star => "astar-star.pexe",
    binji_binarytrees => "binji-binarytrees.pexe",
    binji_dedupe_incoming => "binji-dedupe_incoming.pexe",
    binji_fannkuchredux => "binji-fannkuchredux.pexe",
    binji_fasta => "binji-fasta.pexe",
    binji_main => "binji-main.pexe",
    binji_mandelbrot => "binji-mandelbrot.pexe",
    binji_meteor => "binji-meteor.pexe",
    binji_nbody => "binji-nbody.pexe",
    binji_printf => "binji-printf.pexe",
    binji_puts => "binji-puts.pexe",
    binji_sem => "binji-sem.pexe",
    binji_setjmp => "binji-setjmp.pexe",
    binji_spectralnorm => "binji-spectralnorm.pexe",
    binji_start => "binji-start.pexe",
    binji_thread => "binji-thread.pexe",
    bp2008_pnacl_player => "bp2008-pnacl_player.pexe",
    cptaffe_hello_tutorial => "cptaffe-hello_tutorial.pexe",
    ds923y_compress => "ds923y-compress.pexe",
    ds923y_decompress => "ds923y-decompress.pexe",
    glbench27 => "glbench27.pexe",
    lpdevs_part2 => "lpdevs-part2.pexe",
    optionsplayers_hello_tutorial => "optionsplayers-hello_tutorial.pexe",
    path_tracer => "path-tracer.pexe",
    shhnjk_url_loader => "shhnjk-url_loader.pexe",
    stockfish_170317 => "stockfish-170317.pexe",
    supernet_iguana => "supernet-iguana.pexe",
    webpenc => "webpenc.pexe",
}

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
    for f in common::WELL_FORMED {
        let Some(data) = common::real_pexe(f) else {
            continue;
        };
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
