//! Quick decode timing (the full benchmark with memory figures is `cargo bench --bench decode`).
fn main() {
    let p = std::env::args()
        .nth(1)
        .expect("usage: decode_bench FILE [N]");
    let n: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(20);
    let data = std::fs::read(&p).unwrap();
    let mut best = f64::MAX;
    for _ in 0..n {
        let t = std::time::Instant::now();
        let m = pexe2wasm::decode::decode(&data).unwrap();
        let dt = t.elapsed().as_secs_f64();
        best = best.min(dt);
        drop(std::hint::black_box(m));
    }
    println!(
        "best {:.1} ms/decode, {:.1} MB/s",
        best * 1e3,
        data.len() as f64 / best / 1e6
    );
}
