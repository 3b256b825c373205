//! Prints the Pepper description as JSON, with `--table` the Markdown table of interfaces,
//! with `--hosts` the table of what each host offers (in docs/WEB.md), with `--js` /
//! `--rust` the generated host modules; `--write-contract` rewrites both generated files
//! (web/src/host/contract.js, crates/ppapi/src/contract.rs) in this checkout.

use std::path::Path;

use pexe2wasm_ppapi::{hosts, JS_CONTRACT_PATH, RUST_CONTRACT_PATH};

fn main() {
    let desc = pexe2wasm_ppapi::description();
    let out = match std::env::args().nth(1).as_deref() {
        None => desc.to_json(),
        Some("--table") => desc.markdown_table(),
        Some("--hosts") => desc.hosts_table(),
        Some("--js") => desc.javascript_contract(hosts::BROWSER),
        Some("--rust") => desc.rust_contract(),
        Some("--write-contract") => {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            for (path, text) in [
                (JS_CONTRACT_PATH, desc.javascript_contract(hosts::BROWSER)),
                (RUST_CONTRACT_PATH, desc.rust_contract()),
            ] {
                if let Err(e) = std::fs::write(root.join(path), text) {
                    eprintln!("ppapi-json: cannot write {path}: {e}");
                    std::process::exit(1);
                }
                eprintln!("wrote {path}");
            }
            return;
        }
        Some(other) => {
            eprintln!(
                "usage: ppapi-json [--table | --hosts | --js | --rust | --write-contract]   (unknown argument {other:?})"
            );
            std::process::exit(2);
        }
    };
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    // A closed pipe ends quietly.
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.write_all(b"\n");
}
