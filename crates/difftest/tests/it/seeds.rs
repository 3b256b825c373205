use pexe2wasm_difftest::{check, Config};

/// Deterministic pseudo-random bytes (xorshift64*).
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

#[test]
fn seeded_programs_agree() {
    let cfg = Config::default();
    let n: u64 = std::env::var("DIFFTEST_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let (mut calls, mut traps, mut fuel, mut unsupported, mut exc, mut simd, mut thr) =
        (0, 0, 0, 0, 0, 0, 0);
    for seed in 0..n {
        let data = bytes(seed, 64 + (seed as usize * 37) % 4000);
        match check(&data, &cfg) {
            Ok(r) => {
                calls += r.calls;
                traps += r.traps;
                fuel += r.out_of_fuel;
                exc += r.exceptions as usize;
                simd += r.simd as usize;
                thr += r.threads as usize;
                if let Some(u) = r.unsupported {
                    eprintln!("seed {seed}: unsupported: {u}");
                    unsupported += 1;
                }
            }
            Err(f) => panic!("seed {seed}: {f}"),
        }
    }
    eprintln!(
        "{n} programs: {calls} calls compared ({traps} trapped alike), {fuel} out of interpreter fuel, \
         {unsupported} unsupported, {exc} with setjmp/longjmp, {simd} with SIMD, {thr} with wasm atomics"
    );
    assert!(calls > n as usize);
}
