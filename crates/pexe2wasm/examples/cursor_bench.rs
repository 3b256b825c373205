use pexe2wasm::bitstream::{Cursor, Entry, Header};
fn main() {
    let p = std::env::args().nth(1).unwrap();
    let data = std::fs::read(&p).unwrap();
    let n = 10;
    let t = std::time::Instant::now();
    let (mut recs, mut vals) = (0u64, 0u64);
    let mut by_block = std::collections::HashMap::<u32, (u64, u64)>::new();
    for _ in 0..n {
        let h = Header::parse(&data).unwrap();
        let mut c = Cursor::new(&data, h.size);
        let mut stack = vec![];
        while let Some(i) = c.next().unwrap() {
            match i.entry {
                Entry::EnterBlock { block_id, .. } => stack.push(block_id),
                Entry::EndBlock => {
                    stack.pop();
                }
                Entry::Record(r) => {
                    recs += 1;
                    vals += r.values.len() as u64;
                    let e = by_block.entry(*stack.last().unwrap()).or_default();
                    e.0 += 1;
                    e.1 += r.values.len() as u64;
                }
                _ => {}
            }
        }
    }
    let dt = t.elapsed().as_secs_f64() / n as f64;
    println!(
        "{:.1} ms/scan, {:.1} MB/s, {} records {} values per pass",
        dt * 1e3,
        data.len() as f64 / dt / 1e6,
        recs / n,
        vals / n
    );
    for (b, (r, v)) in by_block {
        println!("block {b}: {} records {} values", r / n, v / n);
    }
}
