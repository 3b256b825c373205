//! `pexe2wasm info` against the facts recorded in the corpus's SOURCES.md: defined function
//! and type counts, symbol names, intrinsics, IRT and PPAPI interface names, `_start`.
use pexe2wasm_testkit::corpus as common;

use pexe2wasm::info::{info, Info};
use std::collections::BTreeSet;
use std::process::Command;

/// The facts of one SOURCES.md table row that `info` reports too.
#[derive(Debug, Default)]
struct Facts {
    functions: Option<u32>,
    types: Option<u32>,
    irt: BTreeSet<String>,
    ppb: BTreeSet<String>,
    ppp: BTreeSet<String>,
    intrinsics: Vec<String>,
    /// `Some(n)`: "UNSTRIPPED (n/n defined functions named)"; `None`: stripped.
    unstripped: Option<u32>,
    has_start: bool,
}

fn sources_md() -> Option<String> {
    let path = common::real_corpus_dir().join("SOURCES.md");
    match std::fs::read_to_string(&path) {
        Ok(s) => Some(s),
        Err(e) => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{} is missing under CI: {e}", path.display());
            }
            eprintln!("SKIPPED: {} not found ({e})", path.display());
            None
        }
    }
}

/// `"a 1.0, b 1.1"` → `["a;1.0", "b;1.1"]` with `prefix` added.
fn name_versions(list: &str, prefix: &str, sep: &str) -> BTreeSet<String> {
    list.split(", ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (name, ver) = item.rsplit_once(' ').unwrap_or((item, ""));
            format!("{prefix}{name}{sep}{ver}")
        })
        .collect()
}

fn parse_row(md: &str, file: &str) -> Facts {
    let row = md
        .lines()
        .find(|l| l.starts_with(&format!("| {file} |")))
        .unwrap_or_else(|| panic!("SOURCES.md has no row for {file}"));
    let cols: Vec<&str> = row.split(" | ").collect();
    let what = cols[6];
    let needs = cols[7];
    let symbols = cols[9];
    let mut f = Facts::default();

    // "[48 fn, 22 types; ...]"
    if let Some(stats) = what.rsplit_once('[').map(|(_, s)| s) {
        let mut parts = stats.split(&[',', ';', ']'][..]).map(str::trim);
        f.functions = parts
            .next()
            .and_then(|p| p.strip_suffix(" fn"))
            .and_then(|n| n.parse().ok());
        f.types = parts
            .next()
            .and_then(|p| p.strip_suffix(" types"))
            .and_then(|n| n.parse().ok());
        if let Some(i) = stats.find("intrinsics ") {
            let rest = &stats[i + "intrinsics ".len()..];
            let end = rest.find([';', ']']).unwrap_or(rest.len());
            f.intrinsics = rest[..end]
                .split_whitespace()
                .map(|n| format!("llvm.{n}"))
                .collect();
        }
    }

    // IRT: "IRT only: a, b" or "(+IRT: a, b)".
    let irt_list = if let Some(rest) = needs.strip_prefix("IRT only: ") {
        Some(rest)
    } else {
        needs.find("(+IRT: ").map(|i| {
            let rest = &needs[i + 7..];
            &rest[..rest.find(')').unwrap_or(rest.len())]
        })
    };
    if let Some(list) = irt_list {
        f.irt = list
            .split(", ")
            .map(|s| format!("nacl-irt-{}", s.trim()))
            .collect();
    }
    // PPAPI: "PPAPI: A 1.0, B 1.1; exports C 0.1 (+IRT: ...)".
    if let Some(i) = needs.find("PPAPI: ") {
        let rest = &needs[i + 7..];
        let rest = &rest[..rest.find(" (+IRT").unwrap_or(rest.len())];
        let (imports, exports) = rest.split_once("; exports ").unwrap_or((rest, ""));
        f.ppb = name_versions(imports, "PPB_", ";");
        f.ppp = name_versions(exports, "PPP_", ";");
    }

    if let Some(i) = symbols.find("UNSTRIPPED (") {
        let n = &symbols[i + 12..];
        f.unstripped = n.split('/').next().and_then(|n| n.parse().ok());
    }
    f.has_start = !what.contains("no `_start`");
    f
}

fn check(file: &str, info: &Info, facts: &Facts) {
    if let Some(n) = facts.functions {
        assert_eq!(info.num_defined_functions, n, "{file}: defined functions");
    }
    if let Some(n) = facts.types {
        assert_eq!(info.num_types, n, "{file}: types");
    }
    let irt: BTreeSet<String> = info.irt_interfaces.iter().cloned().collect();
    assert_eq!(irt, facts.irt, "{file}: IRT interfaces");
    let named = |prefix: &str| -> BTreeSet<String> {
        let names = info.ppapi_interfaces.iter();
        names.filter(|s| s.starts_with(prefix)).cloned().collect()
    };
    let (ppb, ppp) = (named("PPB_"), named("PPP_"));
    assert_eq!(ppb, facts.ppb, "{file}: PPB interfaces");
    assert_eq!(ppp, facts.ppp, "{file}: PPP interfaces");
    for i in &facts.intrinsics {
        assert!(
            info.intrinsics.iter().any(|x| &x.name == i && x.allowed),
            "{file}: intrinsic {i} missing from {:?}",
            info.intrinsics
        );
    }
    match facts.unstripped {
        Some(n) => {
            assert!(info.symbols.unstripped, "{file}: should carry names");
            assert_eq!(info.symbols.named_defined_functions, n, "{file}");
            assert_eq!(info.symbols.defined_functions, n, "{file}");
        }
        None => assert!(
            info.symbols.named_defined_functions <= 1,
            "{file}: stripped, yet {} defined functions are named",
            info.symbols.named_defined_functions
        ),
    }
    assert_eq!(info.has_start, facts.has_start, "{file}: _start");
    assert_eq!(
        info.num_defined_functions + info.num_declared_functions,
        info.num_functions
    );
    assert_eq!(info.functions.len() as u32, info.num_functions);
}

#[test]
fn binji_puts_facts() {
    let Some(data) = common::real_pexe("binji-puts.pexe") else {
        return;
    };
    let i = info(&data).unwrap_or_else(|e| panic!("binji-puts.pexe: {e}"));
    assert_eq!(i.file_size, 29_740);
    assert_eq!(i.pnacl_version, Some(2));
    assert_eq!(i.num_defined_functions, 32);
    assert!(i.symbols.unstripped);
    assert!(i.has_start);
    assert!(i.irt_interfaces.iter().any(|s| s == "nacl-irt-fdio-0.1"));
    assert!(i.ppapi_interfaces.is_empty(), "{:?}", i.ppapi_interfaces);
    assert!(i.num_instructions > 0 && i.num_basic_blocks > 0);
    assert!(i
        .functions
        .iter()
        .any(|f| f.defined && f.name.as_deref() == Some("_start")));
}

#[test]
fn astar_star_lists_ppapi_interfaces() {
    let Some(data) = common::real_pexe("astar-star.pexe") else {
        return;
    };
    let i = info(&data).unwrap_or_else(|e| panic!("astar-star.pexe: {e}"));
    for name in ["PPB_Core;1.0", "PPB_URLLoader;1.0", "PPP_Instance;1.1"] {
        assert!(
            i.ppapi_interfaces.iter().any(|s| s == name),
            "{name} missing from {:?}",
            i.ppapi_interfaces
        );
    }
    assert!(!i.symbols.unstripped);
}

#[test]
fn every_well_formed_pexe_matches_sources_md() {
    let Some(md) = sources_md() else {
        return;
    };
    let mut checked = 0;
    for file in common::WELL_FORMED {
        let Some(data) = common::real_pexe(file) else {
            continue;
        };
        let i = info(&data).unwrap_or_else(|e| panic!("{file}: {e}"));
        check(file, &i, &parse_row(&md, file));
        checked += 1;
    }
    eprintln!("info matches SOURCES.md for {checked} pexes");
}

#[test]
fn cli_info_text_and_json() {
    let path = common::real_corpus_dir().join("binji-puts.pexe");
    if common::real_pexe("binji-puts.pexe").is_none() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_pexe2wasm");
    let out = Command::new(bin).arg("info").arg(&path).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "file size:        29740 bytes",
        "PNaCl version:    2",
        "defined",
        "nacl-irt-fdio-0.1",
        "_start",
    ] {
        assert!(text.contains(needle), "text lacks {needle:?}:\n{text}");
    }

    let out = Command::new(bin)
        .args(["info", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["file_size"], 29_740);
    assert_eq!(v["num_defined_functions"], 32);
    assert_eq!(v["has_start"], true);
    assert_eq!(v["symbols"]["unstripped"], true);
    assert!(v["irt_interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s == "nacl-irt-fdio-0.1"));
    assert_eq!(
        v["functions"].as_array().unwrap().len() as u64,
        v["num_functions"]
    );
}

#[test]
fn sources_md_parser_reads_rows() {
    let Some(md) = sources_md() else {
        return;
    };
    let f = parse_row(&md, "binji-puts.pexe");
    assert_eq!(f.functions, Some(32));
    assert_eq!(f.types, Some(19));
    assert_eq!(f.unstripped, Some(32));
    assert!(f.irt.contains("nacl-irt-fdio-0.1"));
    assert!(f.irt.contains("nacl-irt-dev-fdio-0.3"));
    assert_eq!(f.irt.len(), 8);
    assert!(f.ppb.is_empty());
    let f = parse_row(&md, "astar-star.pexe");
    assert!(f.ppb.contains("PPB_Core;1.0"));
    assert!(f.ppb.contains("PPB_MouseInputEvent;1.1"));
    assert!(f.ppp.contains("PPP_Instance;1.1"));
    assert!(f.irt.contains("nacl-irt-ppapihook-0.1"));
    assert_eq!(f.intrinsics, ["llvm.sqrt.f32"]);
    assert_eq!(f.unstripped, None);
    let f = parse_row(&md, "pnacl-llvm-array-of-lit.pexe");
    assert!(!f.has_start);
    assert!(f.irt.is_empty() && f.ppb.is_empty());
}
