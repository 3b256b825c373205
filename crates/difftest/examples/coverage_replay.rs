//! Converts the program of every input in the given directories (a fuzz corpus), and with
//! `--seeds N` those of the seeded test's first N seeds, without running them: built with
//! `-C instrument-coverage` and without wasmtime (`--no-default-features`), it measures
//! which lines of the converter the programs reach (scripts/difftest-coverage.sh,
//! docs/FUZZING.md).
fn main() {
    let cfg = pexe2wasm_difftest::Config::default();
    let (mut n, mut failed) = (0, 0);
    let mut run = |data: &[u8]| {
        n += 1;
        if let Err(e) = pexe2wasm_difftest::convert_generated(data, &cfg) {
            failed += 1;
            eprintln!("{e}");
        }
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--seeds" {
            let k: u64 = args.next().and_then(|s| s.parse().ok()).expect("--seeds N");
            (0..k).for_each(|s| run(&pexe2wasm_difftest::seed_bytes(s)));
            continue;
        }
        for e in std::fs::read_dir(&a).expect("read corpus directory") {
            run(&std::fs::read(e.expect("entry").path()).expect("read input"));
        }
    }
    println!("{n} inputs converted ({failed} failed)");
}
