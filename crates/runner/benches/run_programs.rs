//! Run time of the converted benchmark programs under wasmtime:
//! `cargo bench --bench run_programs [-- N [PROGRAM...]]`.
//!
//! Converts each of the 7 benchmarks-game pexes of the real corpus (binji-*.pexe) and runs
//! it N times (default 3) with `pexe2wasm_runner::run_wasm`, stdout captured, at the sizes
//! of the issue. `run_wasm` compiles the module on every call, so the compile time (one
//! `wasmtime::Module::new` on the same engine configuration, timed separately) is shown
//! too and subtracted for the "run" column. Output size and an FNV-1a hash of stdout are
//! printed so that a change to the lowering that changes what a program prints shows.
//! Ends with a Markdown `table row:` (median seconds of run_wasm per program).

use pexe2wasm_testkit::corpus as common;

use std::time::{Duration, Instant};

use pexe2wasm::convert::{convert, ConvertOptions};
use pexe2wasm_runner::{new_engine, run_wasm, Output, RunOptions};

/// (pexe, argument) at the sizes of the issue.
const PROGRAMS: &[(&str, &str)] = &[
    ("binji-binarytrees.pexe", "16"),
    ("binji-fannkuchredux.pexe", "10"),
    ("binji-fasta.pexe", "2500000"),
    ("binji-mandelbrot.pexe", "1600"),
    ("binji-meteor.pexe", "2098"),
    ("binji-nbody.pexe", "2000000"),
    ("binji-spectralnorm.pexe", "1000"),
];

fn fnv1a(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let (n, filter): (usize, Vec<String>) = match args.first().map(|a| a.parse::<usize>()) {
        Some(Ok(n)) if n > 0 => (n, args[1..].to_vec()),
        _ => (3, args.clone()),
    };
    let mut cells = Vec::new();
    let mut total = 0.0;
    println!("| program | arg | compile (s) | run_wasm median (s) | best (s) | run without compile (s) | stdout bytes | stdout fnv1a |");
    println!("|---|---|---|---|---|---|---|---|");
    for &(pexe, arg) in PROGRAMS {
        let short = pexe.trim_start_matches("binji-").trim_end_matches(".pexe");
        if !filter.is_empty() && !filter.iter().any(|f| short.contains(f.as_str())) {
            continue;
        }
        let Some(data) = common::real_pexe(pexe) else {
            continue;
        };
        let wasm = match convert(&data, &ConvertOptions::default()) {
            Ok(c) => c.wasm,
            Err(e) => {
                eprintln!("error: {pexe}: {e}");
                std::process::exit(1);
            }
        };
        let engine = new_engine(false).expect("engine");
        let t = Instant::now();
        wasmtime::Module::new(&engine, &wasm).expect("compiles");
        let compile = t.elapsed();
        let opts = RunOptions {
            args: vec![short.to_string(), arg.to_string()],
            stdout: Output::Capture,
            stderr: Output::Capture,
            ..Default::default()
        };
        let mut times: Vec<Duration> = Vec::with_capacity(n);
        let mut stdout = Vec::new();
        for _ in 0..n {
            let t = Instant::now();
            let r = match run_wasm(&wasm, &opts) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error: {pexe} {arg}: {e}");
                    std::process::exit(1);
                }
            };
            times.push(t.elapsed());
            if r.exit_code != 0 {
                eprintln!("error: {pexe} {arg}: exit code {}", r.exit_code);
                std::process::exit(1);
            }
            stdout = r.stdout;
        }
        times.sort();
        let med = times[n / 2].as_secs_f64();
        total += med;
        println!(
            "| {short} | {arg} | {:.3} | {med:.3} | {:.3} | {:.3} | {} | {:016x} |",
            compile.as_secs_f64(),
            times[0].as_secs_f64(),
            (med - compile.as_secs_f64()).max(0.0),
            stdout.len(),
            fnv1a(&stdout)
        );
        cells.push(format!("{med:.2}"));
    }
    println!("table row: | {} | {total:.2} |", cells.join(" | "));
}
