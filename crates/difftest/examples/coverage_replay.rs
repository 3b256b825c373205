//! Converts the program of every input in the given directories (a fuzz corpus), without
//! running it: built with `-C instrument-coverage` and without wasmtime
//! (`--no-default-features`), it measures which lines of the lowering the corpus reaches
//! (scripts/difftest-coverage.sh, docs/FUZZING.md).
fn main() {
    let cfg = pexe2wasm_difftest::Config::default();
    let (mut n, mut failed) = (0, 0);
    for dir in std::env::args().skip(1) {
        for e in std::fs::read_dir(&dir).expect("read corpus directory") {
            let data = std::fs::read(e.expect("entry").path()).expect("read input");
            n += 1;
            if let Err(e) = pexe2wasm_difftest::convert_generated(&data, &cfg) {
                failed += 1;
                eprintln!("{e}");
            }
        }
    }
    println!("{n} inputs converted ({failed} failed)");
}
