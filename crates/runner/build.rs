//! Writes the command-line Pepper host's entry rules from the interface description
//! (crates/ppapi/interfaces.pepper): for each offered PPB function, where its instance,
//! resource (with the resource's type) and completion callback are. The host's common
//! entry check (`src/pepper/ppb/entry.rs`) reads them; nothing about them is written by
//! hand.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=../ppapi/interfaces.pepper");
    println!("cargo:rerun-if-changed=../ppapi/src");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let rules = pexe2wasm_ppapi::description().rust_entry_rules(pexe2wasm_ppapi::hosts::CLI);
    let path = Path::new(&out).join("entry_rules.rs");
    std::fs::write(&path, rules).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
