//! Figures on the locals of a converted module (docs/PERFORMANCE.md, decision 0013):
//!
//! ```sh
//! target/release/examples/local_stats FILE.wasm...
//! ```
//!
//! Per file: the declared locals per function (median, p90, max; parameters not counted)
//! and the share of `local.get`/`local.set`/`local.tee` whose index is >= 50 (wasmparser
//! then binary-searches its local declarations) and >= 128 (a two-byte LEB128).

use wasmparser::{Operator, Parser, Payload};

fn main() {
    for path in std::env::args().skip(1) {
        let wasm = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut declared: Vec<u64> = Vec::new();
        let (mut accesses, mut ge50, mut ge128) = (0u64, 0u64, 0u64);
        for payload in Parser::new(0).parse_all(&wasm) {
            let Payload::CodeSectionEntry(body) = payload.expect("parses") else {
                continue;
            };
            let mut n = 0u64;
            for decl in body.get_locals_reader().expect("locals") {
                n += u64::from(decl.expect("local declaration").0);
            }
            declared.push(n);
            let mut ops = body.get_operators_reader().expect("operators");
            while !ops.eof() {
                let idx = match ops.read().expect("operator") {
                    Operator::LocalGet { local_index }
                    | Operator::LocalSet { local_index }
                    | Operator::LocalTee { local_index } => local_index,
                    _ => continue,
                };
                accesses += 1;
                ge50 += u64::from(idx >= 50);
                ge128 += u64::from(idx >= 128);
            }
        }
        declared.sort_unstable();
        let at = |q: f64| {
            let i = ((declared.len() as f64 - 1.0) * q).round() as usize;
            declared.get(i).copied().unwrap_or(0)
        };
        let pct = |k: u64| 100.0 * k as f64 / accesses.max(1) as f64;
        println!(
            "{path}: {} bodies, {} locals; per body median {} p90 {} max {}; \
             {accesses} local accesses, {:.1}% index >= 50, {:.1}% >= 128; {} bytes",
            declared.len(),
            declared.iter().sum::<u64>(),
            at(0.5),
            at(0.9),
            declared.last().copied().unwrap_or(0),
            pct(ge50),
            pct(ge128),
            wasm.len()
        );
    }
}
