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
