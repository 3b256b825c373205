fn main() {
    for p in std::env::args().skip(1) {
        let data = std::fs::read(&p).unwrap();
        let t = std::time::Instant::now();
        match pexe2wasm::decode::decode(&data) {
            Ok(m) => {
                let insts: usize = m.function_bodies.iter().map(|f| f.insts.len()).sum();
                println!(
                    "{p}: ok {} fns {} bodies {} globals {} insts {:?}",
                    m.functions.len(),
                    m.function_bodies.len(),
                    m.globals.len(),
                    insts,
                    t.elapsed()
                );
            }
            Err(e) => println!("{p}: ERROR {e}"),
        }
    }
}
