//! Decoding + validation throughput of x86-64 nexes: `cargo bench -p pexe2wasm-nexe
//! --bench validate [-- N [FILE...]]`.
//!
//! Reads each FILE (default: the largest x86-64 nexes of the nexe corpus,
//! $PEXE2WASM_NEXE_CORPUS or ../shared/fixtures/nexe), then inspects and validates it N
//! times (default 10) on one thread and prints MB/s of code (MB = 10^6 bytes; the code is
//! the text segment NaCl validates). The translator's target is 20 MB/s for the whole
//! translation, so decoding and validation must be far above it.

use std::time::{Duration, Instant};

const DEFAULT: &[&str] = &[
    "nassh-ssh_client-x86_64.nexe",
    "pnacl-ld-x86_64.nexe",
    "fftw-wisdom-x86_64.nexe",
    "naclports-gallery-sine_synth-x86_64.nexe",
];

mod common;

fn main() {
    let (n, files) = common::args(10, DEFAULT);
    let mut totals = common::Totals::default();
    for path in &files {
        let Some(bytes) = common::read(path) else {
            continue;
        };
        let mut best = Duration::MAX;
        let mut sum = Duration::ZERO;
        let mut code = 0u64;
        let mut instructions = 0u64;
        for _ in 0..n {
            let t = Instant::now();
            let nexe = pexe2wasm_nexe::inspect(&bytes).expect("a nexe");
            let v = nexe.validate_x86_64().expect("an x86-64 nexe");
            let dt = t.elapsed();
            assert!(v.is_valid(), "{}: {}", path.display(), v.errors[0]);
            code = v.facts.size as u64;
            instructions = v.facts.instructions;
            best = best.min(dt);
            sum += dt;
        }
        let mean = sum / n as u32;
        // The decoder alone (iced-x86 over the same code), for the share validation adds.
        let nexe = pexe2wasm_nexe::inspect(&bytes).expect("a nexe");
        let (base, text) = nexe.code().expect("a text segment");
        let mut decode_best = Duration::MAX;
        for _ in 0..n {
            let t = Instant::now();
            let mut d = iced_x86::Decoder::with_ip(64, &text, base as u64, 0);
            let mut i = iced_x86::Instruction::default();
            let mut count = 0u64;
            while d.can_decode() {
                d.decode_out(&mut i);
                count += i.len() as u64;
            }
            std::hint::black_box(count);
            decode_best = decode_best.min(t.elapsed());
        }
        let mbs = |d: Duration| code as f64 / 1e6 / d.as_secs_f64();
        println!(
            "{}: {:.2} MB of code, {} instructions: mean {:.1} ms ({:.0} MB/s), best {:.1} ms ({:.0} MB/s), {:.0} M instructions/s",
            path.file_name().unwrap().to_string_lossy(),
            code as f64 / 1e6,
            instructions,
            mean.as_secs_f64() * 1e3,
            mbs(mean),
            best.as_secs_f64() * 1e3,
            mbs(best),
            instructions as f64 / 1e6 / mean.as_secs_f64(),
        );
        println!(
            "  iced-x86 decoding alone: best {:.0} MB/s",
            mbs(decode_best)
        );
        totals.add(code, mean);
    }
    totals.print(0, "one thread, inspect + decode + validate");
}
