//! Every function of the corpus's static x86-64 nexes either lifts, into a module
//! wasmparser validates, or stops at an instruction "not translated yet": nothing else.
//! The tally of those instructions (printed; docs/NEXE.md keeps it) is the next work list.

use pexe2wasm_nexe::x86_64::lift::{lift_nexe, LiftError, Options};
use pexe2wasm_nexe::{inspect, Arch, Translation};
use pexe2wasm_testkit::corpus::{real_nexe, NEXES};
use std::collections::BTreeMap;

#[test]
fn corpus_functions_lift_or_name_what_is_missing() {
    // With the runtime linked, as `pexe2wasm convert` translates: calls to the syscall
    // trampolines reach its adapters.
    let options = Options {
        stub_failures: true,
        runtime: true,
        export_state: false,
        ..Options::default()
    };
    let mut tally: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let (mut total, mut lifted, mut nexes, mut structured) = (0usize, 0usize, 0usize, 0usize);
    let mut bytes = 0usize;
    let t0 = std::time::Instant::now();
    for name in NEXES {
        let Some(file) = real_nexe(name) else {
            continue;
        };
        let nexe = inspect(&file).expect("the corpus's nexes read");
        if nexe.info.arch != Arch::X86_64 || nexe.info.translation != Translation::Translatable {
            continue;
        }
        nexes += 1;
        let l = lift_nexe(&nexe, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        bytes += (l.end - l.base) as usize;
        let s = l.structured;
        structured += s;
        let (mut ok, mut n) = (0, 0);
        for (f, r) in l.functions.iter().zip(&l.results) {
            n += 1;
            match r {
                Ok(_) => ok += 1,
                Err(LiftError::NotTranslatedYet { mnemonic, what, .. }) => {
                    let e = tally
                        .entry(mnemonic.clone())
                        .or_insert((0, what.to_string()));
                    e.0 += 1;
                }
                Err(e) => panic!("{name}: function {:#x}: {e}", f.start),
            }
        }
        assert!(n > 0, "{name}: no functions found");
        let wasm = l
            .assemble(&nexe.memory_image(), Some(nexe.info.entry), &options)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .wasm;
        wasmparser::Validator::new()
            .validate_all(&wasm)
            .unwrap_or_else(|e| panic!("{name}: the lifted module is invalid: {e}"));
        eprintln!(
            "{name}: {ok} of {n} functions lift ({s} structured); module {} bytes, valid",
            wasm.len()
        );
        total += n;
        lifted += ok;
    }
    if nexes == 0 {
        eprintln!("SKIPPED: no x86-64 nexes in the corpus");
        return;
    }
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "{nexes} nexes, {lifted} of {total} functions lift ({:.1}%); {:.1} MB of code lifted, assembled and validated in {secs:.2}s",
        100.0 * lifted as f64 / total as f64,
        bytes as f64 / 1e6
    );
    eprintln!(
        "{structured} of the {lifted} lifted functions have structured control flow ({:.1}%), the others the dispatch loop",
        100.0 * structured as f64 / lifted.max(1) as f64
    );
    assert!(structured <= lifted);
    let mut top: Vec<_> = tally.into_iter().collect();
    top.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    eprintln!("functions stopped by a missing instruction (first one each), top 30:");
    for (m, (n, what)) in top.iter().take(30) {
        eprintln!("  {n:6}  {m}  ({what})");
    }
    assert!(lifted > 0, "no function lifted");
}

/// The function names of a module's name section, by function index.
fn function_names(wasm: &[u8]) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let wasmparser::Payload::CustomSection(c) = payload.expect("parses") else {
            continue;
        };
        let wasmparser::KnownCustom::Name(names) = c.as_known() else {
            continue;
        };
        for name in names {
            if let wasmparser::Name::Function(map) = name.expect("a name subsection") {
                for n in map {
                    let n = n.expect("a name");
                    out.insert(n.index, n.name.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn functions_are_named_after_their_symbols_or_addresses() {
    use pexe2wasm_nexe::x86_64::lift::translate_program;
    // fftw-wisdom keeps its symbol table; ckauth is stripped
    for (name, stripped) in [
        ("fftw-wisdom-x86_64.nexe", false),
        ("ckauth-x86_64.nexe", true),
    ] {
        let Some(file) = real_nexe(name) else {
            continue;
        };
        let nexe = inspect(&file).expect("reads");
        assert_eq!(nexe.function_symbols.is_empty(), stripped, "{name}");
        let p = translate_program(&nexe).unwrap_or_else(|e| panic!("{name}: {e}"));
        let names = function_names(&p.wasm);
        let mut by_symbol = 0;
        for (k, &start) in p.starts.iter().enumerate() {
            let got = names
                .get(&(p.first_function + k as u32))
                .unwrap_or_else(|| panic!("{name}: function {start:#x} has no name"));
            match nexe.function_symbols.binary_search_by_key(&start, |s| s.0) {
                Ok(i) => {
                    assert_eq!(got, &nexe.function_symbols[i].1, "{name}: {start:#x}");
                    by_symbol += 1;
                }
                Err(_) if stripped => assert_eq!(got, &format!("x86_{start:x}"), "{name}"),
                // a piece of a symbol's function, or an address
                Err(_) => assert!(
                    got.contains("+0x") || got == &format!("x86_{start:x}"),
                    "{name}: {start:#x} is named {got}"
                ),
            }
        }
        if !stripped {
            assert!(names.values().any(|n| n == "main"), "{name}: main is named");
            // every function symbol of the code (gcc aligns functions to bundles) starts a
            // function
            let (lo, hi) = (p.starts[0], *p.starts.last().unwrap());
            let aligned: Vec<u32> = nexe
                .function_symbols
                .iter()
                .map(|s| s.0)
                .filter(|a| a % 32 == 0 && (lo..=hi).contains(a))
                .collect();
            let missing: Vec<&u32> = aligned
                .iter()
                .filter(|a| p.starts.binary_search(a).is_err())
                .collect();
            assert!(
                missing.is_empty(),
                "{name}: symbols that start no function: {missing:x?}"
            );
            eprintln!(
                "{name}: {by_symbol} of {} functions named by their symbol",
                p.starts.len()
            );
        }
    }
}
