//! `needs`: what each real pexe needs to run agrees with SOURCES.md: the PPAPI apps are
//! Pepper plugins (they query nacl-irt-ppapihook-0.1), the IRT-only programs that query
//! nacl-irt-thread-0.1 need `pexe2wasm run`, the other IRT-only ones any WASI runtime, and
//! the two without a `void _start(i32)` nothing can run.
use pexe2wasm::needs::{needs_of_module, Host};
use pexe2wasm_testkit::corpus as common;

/// The host SOURCES.md's "needs to run" column implies for `file`.
fn expected(md: &str, file: &str) -> Option<Host> {
    let row = md
        .lines()
        .find(|l| l.starts_with(&format!("| {file} |")))
        .unwrap_or_else(|| panic!("SOURCES.md has no row for {file}"));
    let needs = row.split(" | ").nth(7).unwrap();
    if common::NOT_RUNNABLE.contains(&file) {
        None
    } else if let Some(list) = needs.strip_prefix("PPAPI:") {
        // "Core 1.0, Graphics3D 1.0, …; exports …": the PPB interfaces it names.
        let ppb = list.split(';').next().unwrap();
        let lacking = ppb
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .any(|n| {
                let (base, version) = n.rsplit_once(' ').unwrap();
                !pexe2wasm_ppapi::hosts::cli_offers(&format!("PPB_{base};{version}"))
            });
        Some(if lacking { Host::Browser } else { Host::Pepper })
    } else if needs.contains("thread-0.1") {
        Some(Host::Runner)
    } else {
        Some(Host::Wasi)
    }
}

#[test]
fn every_well_formed_pexe_needs_what_sources_md_says() {
    let Ok(md) = std::fs::read_to_string(common::real_corpus_dir().join("SOURCES.md")) else {
        assert!(common::real_pexe("SOURCES.md").is_none());
        return;
    };
    let mut counts = std::collections::BTreeMap::new();
    for (file, data) in common::real_pexes(common::WELL_FORMED) {
        let m = pexe2wasm::decode::decode(&data).unwrap();
        let n = needs_of_module(&m);
        let want = expected(&md, file);
        assert_eq!(n.host, want, "{file}: {n}");
        // info reports the same.
        assert_eq!(pexe2wasm::info::info(&data).unwrap().needs, n, "{file}");
        match n.host {
            Some(Host::Pepper) => {
                assert_eq!(n.interface.as_deref(), Some("nacl-irt-ppapihook-0.1"));
                assert!(n.available, "{file}: the command-line Pepper host runs it");
                assert!(n.lacking.is_empty());
            }
            Some(Host::Browser) => {
                assert!(
                    !n.available,
                    "{file}: only a browser runs it (pexe2wasm web)"
                );
                assert_eq!(n.interface.as_ref(), n.lacking.first());
                assert!(n.summary.contains("needs a browser"), "{}", n.summary);
            }
            Some(Host::Runner) => {
                assert_eq!(n.interface.as_deref(), Some("nacl-irt-thread-0.1"));
                assert!(n.available);
            }
            Some(Host::Wasi) => assert!(n.available && n.interface.is_none()),
            None => assert!(!n.available),
        }
        *counts.entry(format!("{:?}", n.host)).or_insert(0) += 1;
    }
    // The corpus as SOURCES.md describes it: 13 plugins, 2 threaded programs.
    let plugins =
        counts.get("Some(Pepper)").unwrap_or(&0) + counts.get("Some(Browser)").unwrap_or(&0);
    assert_eq!(plugins, 13, "{counts:?}");
    // The message apps run on the command line.
    assert!(
        counts.get("Some(Pepper)").is_some_and(|&n| n >= 5),
        "{counts:?}"
    );
    assert_eq!(counts.get("Some(Runner)"), Some(&2), "{counts:?}");
    assert_eq!(counts.get("None"), Some(&2), "{counts:?}");
}
