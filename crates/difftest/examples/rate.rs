//! Measures the harness's rate: the seeded test's programs (`--seeds N`, default 300)
//! checked one after the other, repeated `--rounds R` times; prints checks per second.
//! `DIFFTEST_REGALLOC=backtracking` measures without the single-pass register allocator.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str, d: u64| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(d)
    };
    let (seeds, rounds) = (get("--seeds", 300), get("--rounds", 3));
    let cfg = pexe2wasm_difftest::Config::default();
    let inputs: Vec<Vec<u8>> = (0..seeds).map(pexe2wasm_difftest::seed_bytes).collect();
    let t = std::time::Instant::now();
    let mut rechecked = 0;
    for _ in 0..rounds {
        for d in &inputs {
            if let Ok(r) = pexe2wasm_difftest::check(d, &cfg) {
                if let Some(w) = &r.single_pass_differed {
                    rechecked += 1;
                    eprintln!("single-pass differed: {}", w.lines().next().unwrap_or(""));
                }
            }
        }
    }
    let n = seeds * rounds;
    let s = t.elapsed().as_secs_f64();
    println!("{n} checks in {s:.2} s: {:.0} per second", n as f64 / s);
    println!("{rechecked} rechecked with the backtracking register allocator");
}
