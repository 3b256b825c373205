//! Every PPAPI interface name a pexe of the real corpus asks for is described.
//!
//! The pexes hold the names as NUL-terminated strings in their global data, but PNaCl
//! bitcode stores data records in a bitstream whose fields need not start on a byte
//! boundary, so a plain `strings` misses most of them. Each data byte is a run of 8
//! consecutive bits, so the scan reads the file at each of the 8 bit offsets (LLVM's
//! bitstream is little-endian, least significant bit first).

use std::collections::BTreeSet;
use std::path::PathBuf;

use pexe2wasm_ppapi::description;

/// The file's bytes as seen from bit offset `shift` (0..8).
fn shifted(data: &[u8], shift: u32) -> Vec<u8> {
    if shift == 0 {
        return data.to_vec();
    }
    (0..data.len())
        .map(|i| {
            let lo = data[i] >> shift;
            let hi = data.get(i + 1).map_or(0, |b| b << (8 - shift));
            lo | hi
        })
        .collect()
}

/// `PPB_`/`PPP_` + name characters + `;` + version digits and dots + NUL.
fn names_in(bytes: &[u8], out: &mut BTreeSet<String>) {
    let mut i = 0;
    while i + 4 <= bytes.len() {
        let prefix = &bytes[i..i + 4];
        if prefix != b"PPB_" && prefix != b"PPP_" {
            i += 1;
            continue;
        }
        let mut j = i + 4;
        while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || b"_()".contains(&bytes[j])) {
            j += 1;
        }
        if j > i + 4 && bytes.get(j) == Some(&b';') {
            let mut k = j + 1;
            while k < bytes.len() && (bytes[k].is_ascii_digit() || bytes[k] == b'.') {
                k += 1;
            }
            if k > j + 1 && bytes.get(k) == Some(&0) {
                out.insert(String::from_utf8_lossy(&bytes[i..k]).into_owned());
            }
        }
        i += 1;
    }
}

fn corpus_dir() -> PathBuf {
    pexe2wasm_testkit::corpus::real_corpus_dir()
}

#[test]
fn scanner_finds_names_at_any_bit_offset() {
    let text =
        b"\x07PPB_Var;1.2\0PPB_OpenGLES2DrawBuffers(Dev);1.0\0PPB_Bad;\0PPP_Instance;1.1\xff";
    for shift in 0..8u32 {
        // Store the text `shift` bits into a buffer, then scan.
        let mut bits: Vec<u8> = vec![0; text.len() + 2];
        for (i, &b) in text.iter().enumerate() {
            let at = i * 8 + shift as usize;
            bits[at / 8] |= b << (at % 8);
            if !at.is_multiple_of(8) {
                bits[at / 8 + 1] |= b >> (8 - at % 8);
            }
        }
        let mut found = BTreeSet::new();
        for s in 0..8 {
            names_in(&shifted(&bits, s), &mut found);
        }
        let want: BTreeSet<String> = ["PPB_Var;1.2", "PPB_OpenGLES2DrawBuffers(Dev);1.0"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(found, want, "shift {shift}");
    }
}

#[test]
fn every_corpus_name_is_described() {
    let dir = corpus_dir();
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if ci => panic!("real corpus missing at {}: {e}", dir.display()),
        Err(e) => {
            println!(
                "SKIPPED: real corpus not found at {} ({e}); set PEXE2WASM_REAL_CORPUS",
                dir.display()
            );
            return;
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pexe"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .pexe in {}", dir.display());

    let desc = description();
    let mut all = BTreeSet::new();
    let mut missing = Vec::new();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let mut names = BTreeSet::new();
        for shift in 0..8 {
            names_in(&shifted(&data, shift), &mut names);
        }
        for n in &names {
            if desc.interface(n).is_none() {
                missing.push(format!("{}: {n}", f.file_name().unwrap().to_string_lossy()));
            }
        }
        all.extend(names);
    }
    // Sanity: SOURCES.md lists PPB_Core;1.0 for many corpus files, so a scanner that
    // finds nothing is broken.
    assert!(all.contains("PPB_Core;1.0"), "scanner found only {all:?}");
    println!(
        "{} distinct interface names in {} pexes",
        all.len(),
        files.len()
    );
    assert!(missing.is_empty(), "not described: {missing:#?}");
}
