//! Prints the Pepper description as JSON (for the JavaScript host), with `--table` the
//! Markdown table of interfaces, with `--hosts` the table of what each host offers (in
//! docs/WEB.md).

fn main() {
    let desc = pexe2wasm_ppapi::description();
    let out = match std::env::args().nth(1).as_deref() {
        None => desc.to_json(),
        Some("--table") => desc.markdown_table(),
        Some("--hosts") => desc.hosts_table(),
        Some(other) => {
            eprintln!("usage: ppapi-json [--table | --hosts]   (unknown argument {other:?})");
            std::process::exit(2);
        }
    };
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    // A closed pipe ends quietly.
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.write_all(b"\n");
}
