//! Replays fuzz inputs: prints the generated program and what the check found.
//!
//!     cargo run --release -p pexe2wasm-difftest --example replay -- FILE...
//!     cargo run --release -p pexe2wasm-difftest --example replay -- --seed N   (the test's seed N)
//!
//! With `--text`, only the program's PNaClAsm is printed (to assemble it with
//! `pexe2wasm asm` and trace a function with `pexe2wasm interp`).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let text_only = args.iter().any(|a| a == "--text");
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut it = args.iter().filter(|a| *a != "--text");
    while let Some(a) = it.next() {
        if a == "--seed" {
            let n: u64 = it.next().and_then(|s| s.parse().ok()).expect("--seed N");
            inputs.push((format!("seed {n}"), pexe2wasm_difftest::seed_bytes(n)));
        } else {
            inputs.push((a.clone(), std::fs::read(a).expect("read input")));
        }
    }
    let cfg = pexe2wasm_difftest::Config::default();
    for (name, data) in inputs {
        let mut src = pexe2wasm_difftest::Src(arbitrary::Unstructured::new(&data));
        let prog = pexe2wasm_difftest::generate(&mut src, &cfg);
        if text_only {
            print!("{}", prog.text);
            continue;
        }
        println!("=== {name}\n{}", prog.text);
        for c in &prog.calls {
            println!("call fn{}({:?})", c.func, c.args);
        }
        match pexe2wasm_difftest::check_program(&prog) {
            Ok(r) => println!("agree: {r:?}"),
            Err(f) => println!("FINDING: {}", f.message),
        }
    }
}
