//! The decoder's code summaries (`ir::CodeSummary`, what emission needs from each body's
//! instructions) against emission's own scan: for every project fixture and every runnable
//! real pexe, each decoded body carries a summary equal to a fresh scan of the body, and
//! converting with the summaries gives the same bytes as converting with them removed (so
//! emission scans every body itself). Also: the types in a summary follow the decoder's
//! renumbering of the types it reserved.

use pexe2wasm_testkit::corpus as common;

use std::path::{Path, PathBuf};

use pexe2wasm::convert::{convert_module, ConvertOptions};
use pexe2wasm::decode::decode;
use pexe2wasm::ir::CodeSummary;

/// Which facts the checked pexes exercised, so the comparison cannot pass vacuously.
#[derive(Default)]
struct Seen {
    taken: bool,
    indirect: bool,
    frem: bool,
    sjlj: bool,
}

fn check(name: &str, pexe: &[u8], seen: &mut Seen) {
    let m = decode(pexe).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (i, f) in m.function_bodies.iter().enumerate() {
        let s = f
            .summary
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: body {i} has no code summary"));
        assert_eq!(
            *s,
            CodeSummary::scan(&m, f),
            "{name}: body {i}'s summary differs from a scan of the body"
        );
        seen.taken |= !s.taken().is_empty();
        seen.indirect |= s.indirect_sigs().next().is_some();
        seen.frem |= s.frem;
        seen.sjlj |= s.sjlj;
    }
    let mut scanned = m.clone();
    for f in &mut scanned.function_bodies {
        f.summary = None;
    }
    // Pexes without `_start` (a benchmark kernel) convert to a bare module.
    let opts = ConvertOptions {
        link_runtime: m.function_by_name("_start").is_some(),
        ..ConvertOptions::default()
    };
    let with = convert_module(m, pexe.len(), &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let without = convert_module(scanned, pexe.len(), &opts)
        .unwrap_or_else(|e| panic!("{name} (summaries removed): {e}"));
    assert!(
        with.wasm == without.wasm,
        "{name}: the output with the decoder's summaries differs from emission's own scan"
    );
}

fn pexes_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            pexes_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "pexe") {
            out.push(p);
        }
    }
}

#[test]
fn fixture_summaries_match_the_scan() {
    let mut files = Vec::new();
    pexes_under(&pexe2wasm_testkit::repo_path("fixtures"), &mut files);
    files.sort();
    assert!(files.len() >= 20, "fixtures not found: {files:?}");
    let mut seen = Seen::default();
    for p in &files {
        check(
            &p.display().to_string(),
            &std::fs::read(p).unwrap(),
            &mut seen,
        );
    }
    // The fixtures hold address-taken functions, indirect calls, frem and setjmp.
    assert!(seen.taken && seen.indirect && seen.frem && seen.sjlj);
}

#[test]
fn real_summaries_match_the_scan() {
    let mut seen = Seen::default();
    let mut checked = 0;
    for name in common::WELL_FORMED {
        if common::NOT_RUNNABLE.contains(name) {
            continue;
        }
        let Some(pexe) = common::real_pexe(name) else {
            return;
        };
        check(name, &pexe, &mut seen);
        checked += 1;
    }
    assert_eq!(checked, 28);
    // No real pexe uses `frem` (the fixtures do).
    assert!(seen.taken && seen.indirect && seen.sjlj);
}

/// A type the file does not declare (`<8 x i1>`, a vector compare's result) gets a
/// reserved id while decoding and a smaller one when the unused reserved ids before it
/// are dropped: the indirect call's argument type in the summary is renumbered with it.
#[test]
fn renumbered_reserved_types_are_renumbered_in_the_summary() {
    let text = "module {
  version 1;
  abbreviations {
  }
  types {
    count 5;
    @t0 = i32;
    @t1 = void;
    @t2 = i16;
    @t3 = <8 x i16>;
    @t4 = void (i32, <8 x i16>);
  }
  define external void @f0(i32, <8 x i16>);
  globals {
    count 0;
  }
  function void @f0(i32 %p0, <8 x i16> %p1) {
    blocks 1;
  %b0:
    %v0 = icmp eq <8 x i16> %p1, %p1;
    call void %p0(<8 x i1> %v0);
    ret void;
  }
}
";
    let pexe = pexe2wasm::text::asm::assemble(text).unwrap();
    let m = decode(&pexe).unwrap();
    let f = &m.function_bodies[0];
    let s = f.summary.as_ref().unwrap();
    assert_eq!(*s, CodeSummary::scan(&m, f));
    let sig = s.indirect_sigs().next().unwrap();
    let arg = sig.params().next().unwrap();
    // The call's argument is the compare's result, of the type the compare was given.
    assert_eq!(arg, f.insts[0].ty);
    assert_eq!(m.types.display(arg).to_string(), "<8 x i1>");
    // Declared types 0..5, then i1 and <8 x i1> (the reserved <4 x i1> was not used).
    assert_eq!(arg.0, 6);
}
