fn main() {
    let p = std::env::args().nth(1).unwrap();
    let data = std::fs::read(&p).unwrap();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut best = f64::MAX;
        for _ in 0..15 {
            let t = std::time::Instant::now();
            let m = pool.install(|| pexe2wasm::decode::decode(&data).unwrap());
            best = best.min(t.elapsed().as_secs_f64());
            drop(m);
        }
        println!(
            "{threads} thread(s): best {:.1} ms, {:.1} MB/s",
            best * 1e3,
            data.len() as f64 / best / 1e6
        );
    }
}
