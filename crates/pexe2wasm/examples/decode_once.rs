//! Decodes one pexe N times on a one-thread pool (default: once). A driver for
//! instruction counts, e.g.
//! `valgrind --tool=callgrind target/release/examples/decode_once FILE`.
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: decode_once FILE [N]");
    let n: usize = args.next().map_or(1, |s| s.parse().expect("N"));
    let data = std::fs::read(&path).expect("read the pexe");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    for _ in 0..n {
        let m = pool
            .install(|| pexe2wasm::decode::decode(&data))
            .expect("decode");
        let insts: usize = m.function_bodies.iter().map(|f| f.insts.len()).sum();
        println!("{} bodies, {insts} instructions", m.function_bodies.len());
    }
}
