use pexe2wasm_difftest::{check, seed_bytes, Config};

#[test]
fn seeded_programs_agree() {
    // DIFFTEST_LARGE=1: larger modules (more functions, blocks and instructions).
    let cfg = if std::env::var("DIFFTEST_LARGE").is_ok() {
        Config {
            max_funcs: 6,
            max_blocks: 16,
            max_insts: 20,
            ..Config::default()
        }
    } else {
        Config::default()
    };
    let n: u64 = std::env::var("DIFFTEST_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let (mut calls, mut traps, mut fuel, mut unsupported, mut exc, mut simd, mut thr) =
        (0, 0, 0, 0, 0, 0, 0);
    let mut live = 0;
    let start: u64 = std::env::var("DIFFTEST_SEED_START")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut kinds = std::collections::BTreeMap::new();
    for seed in start..start + n {
        let data = seed_bytes(seed);
        match check(&data, &cfg) {
            Ok(r) => {
                calls += r.calls;
                traps += r.traps;
                fuel += r.out_of_fuel;
                exc += r.exceptions as usize;
                simd += r.simd as usize;
                thr += r.threads as usize;
                live += r.liveness_locals as usize;
                if let Some(d) = &r.single_pass_differed {
                    // Not a finding (the backtracking allocator agreed), but worth a look.
                    eprintln!("seed {seed}: only the single-pass register allocator differed: {d}");
                }
                if std::env::var("DIFFTEST_TRAPS").is_ok() && !r.trap_kinds.is_empty() {
                    eprintln!("seed {seed}: {:?}", r.trap_kinds);
                }
                for k in r.trap_kinds {
                    *kinds.entry(format!("{k:?}")).or_insert(0usize) += 1;
                }
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
         {unsupported} unsupported, {exc} with setjmp/longjmp, {simd} with SIMD, {thr} with wasm atomics, \
         {live} with locals allocated by liveness"
    );
    eprintln!("traps: {kinds:?}");
    assert!(calls > n as usize);
    // Both local allocations are checked (`Program::locals` takes half the programs each).
    if n >= 50 {
        assert!(live > 0 && live < n as usize, "{live} of {n} with liveness");
    }
}
