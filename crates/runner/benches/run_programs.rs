//! Run time of the converted benchmark programs under wasmtime, measured as
//! `wasmtime compile` then `wasmtime run --allow-precompiled` would:
//! `cargo bench -p pexe2wasm-runner --bench run_programs [-- ROUNDS [PROGRAM...]]`.
//!
//! Converts each of the 7 benchmarks-game pexes of the real corpus (binji-*.pexe) and
//! precompiles it once ([`Program::precompile`], wasmtime's `Engine::precompile_module`).
//! Each program then runs once with its output captured (its size and FNV-1a hash are
//! printed, so that a change to the lowering that changes what a program prints shows),
//! and then ROUNDS times (default 7) timed, the programs alternating (round 1 runs every
//! program once, then round 2, …, each round starting one program further on), so that a
//! slow stretch of a shared machine spreads over all programs instead of landing on one.
//! A timed run is what one `wasmtime run --allow-precompiled` process does in wasmtime:
//! a new engine, the precompiled module deserialized, instantiated and run to its end,
//! with its output discarded (as into /dev/null). Prints a Markdown table with, per
//! program, the median, the fastest and slowest run and the spread ((max − min) / median),
//! and ends with a `table row:` of the medians.
//!
//! With `PEXE2WASM_BENCH_REFERENCE=DIR`, DIR holds a reference build of each program,
//! `DIR/<program>.wasm` (e.g. the same C compiled by clang for wasm32-wasi; never in this
//! repository, see docs/PERFORMANCE.md): each is precompiled and run the same way, in the
//! same rounds, its output checked against ours, and the table gains its median and the
//! ratio ours / reference, with their geometric mean.
//!
//! A second table gives the medians of the CPU time of the same runs (the process's user
//! and system time, all threads, across each run): on a shared machine the wall time also
//! counts the time a run waited for a processor, which CPU time leaves out.

use pexe2wasm_testkit::corpus as common;

use std::time::{Duration, Instant};

use pexe2wasm::convert::{convert, ConvertOptions};
use pexe2wasm_runner::{Output, Program, RunOptions};

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

/// One program ready to run.
struct Bench {
    short: String,
    arg: &'static str,
    precompiled: pexe2wasm_runner::Precompiled,
    compile: Duration,
    stdout_len: usize,
    stdout_hash: u64,
    times: Vec<Duration>,
    /// The CPU time of the same runs.
    cpu: Vec<Duration>,
    /// The CPU time of the reference's runs.
    reference_cpu: Vec<Duration>,
    /// The reference build, precompiled, and its times.
    reference: Option<(pexe2wasm_runner::Precompiled, Vec<Duration>)>,
}

/// Runs `pre` once with `opts`: its output, after checking it exited with 0.
fn run_once(pre: &pexe2wasm_runner::Precompiled, opts: &RunOptions, what: &str) -> Vec<u8> {
    let r = Program::from_precompiled(pre)
        .and_then(|p| p.run(opts))
        .unwrap_or_else(|e| fail(what, e));
    if r.exit_code != 0 {
        fail(what, format!("exit code {}", r.exit_code));
    }
    r.stdout
}

/// The CPU time the process has used so far (user and system, all threads).
fn process_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn median(times: &mut [Duration]) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64()
}

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("error: {what}: {e}");
    std::process::exit(1);
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let (rounds, filter): (usize, Vec<String>) = match args.first().map(|a| a.parse::<usize>()) {
        Some(Ok(n)) if n > 0 => (n, args[1..].to_vec()),
        _ => (7, args.clone()),
    };
    let reference_dir = std::env::var_os("PEXE2WASM_BENCH_REFERENCE");
    let mut benches = Vec::new();
    for &(pexe, arg) in PROGRAMS {
        let short = pexe.trim_start_matches("binji-").trim_end_matches(".pexe");
        if !filter.is_empty() && !filter.iter().any(|f| short.contains(f.as_str())) {
            continue;
        }
        let Some(data) = common::real_pexe(pexe) else {
            continue;
        };
        let wasm = convert(&data, &ConvertOptions::default())
            .unwrap_or_else(|e| fail(pexe, e))
            .wasm;
        let t = Instant::now();
        let precompiled = Program::precompile(&wasm, false).unwrap_or_else(|e| fail(pexe, e));
        let compile = t.elapsed();
        // The checking run: the output it prints, and that it exits with 0.
        let opts = RunOptions {
            args: vec![short.to_string(), arg.to_string()],
            stdout: Output::Capture,
            stderr: Output::Capture,
            ..Default::default()
        };
        let what = format!("{pexe} {arg}");
        let stdout = run_once(&precompiled, &opts, &what);
        let reference = reference_dir.as_ref().map(|dir| {
            let path = std::path::Path::new(dir).join(format!("{short}.wasm"));
            let wasm =
                std::fs::read(&path).unwrap_or_else(|e| fail(&path.display().to_string(), e));
            let pre = Program::precompile(&wasm, false)
                .unwrap_or_else(|e| fail(&path.display().to_string(), e));
            if run_once(&pre, &opts, &path.display().to_string()) != stdout {
                fail(
                    &path.display().to_string(),
                    "prints something else than ours",
                );
            }
            (pre, Vec::with_capacity(rounds))
        });
        benches.push(Bench {
            short: short.to_string(),
            arg,
            precompiled,
            compile,
            stdout_len: stdout.len(),
            stdout_hash: fnv1a(&stdout),
            times: Vec::with_capacity(rounds),
            cpu: Vec::with_capacity(rounds),
            reference_cpu: Vec::with_capacity(rounds),
            reference,
        });
    }
    if benches.is_empty() {
        eprintln!("no program to run (filter {filter:?}, corpus absent?)");
        return;
    }
    let n = benches.len();
    for round in 0..rounds {
        for k in 0..n {
            let b = &mut benches[(round + k) % n];
            let opts = RunOptions {
                args: vec![b.short.clone(), b.arg.to_string()],
                stdout: Output::Discard,
                stderr: Output::Discard,
                ..Default::default()
            };
            let what = format!("{} {}", b.short, b.arg);
            // Ours and the reference one after the other, in turns which goes first.
            let ours_first = (round + k) % 2 == 0;
            for ours in [ours_first, !ours_first] {
                let (pre, times, cpu) = match (&mut b.reference, ours) {
                    (_, true) => (&b.precompiled, &mut b.times, &mut b.cpu),
                    (Some((pre, times)), false) => (&*pre, times, &mut b.reference_cpu),
                    (None, false) => continue,
                };
                let (t, c) = (Instant::now(), process_cpu());
                run_once(pre, &opts, &what);
                times.push(t.elapsed());
                cpu.push(process_cpu().saturating_sub(c));
            }
        }
        eprintln!("round {}/{rounds} done", round + 1);
    }
    println!(
        "{rounds} timed runs per program, alternating; a run = new engine + deserialize + \
         instantiate + run, output discarded"
    );
    println!();
    let with_ref = benches.iter().any(|b| b.reference.is_some());
    if with_ref {
        println!("| program | arg | median (s) | min (s) | max (s) | spread | reference median (s) | reference spread | ours / reference | compile (s) | stdout bytes | stdout fnv1a |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    } else {
        println!("| program | arg | median (s) | min (s) | max (s) | spread | compile (s) | stdout bytes | stdout fnv1a |");
        println!("|---|---|---|---|---|---|---|---|---|");
    }
    let mut cells = Vec::new();
    let mut log_ratio = 0.0;
    for b in &mut benches {
        let med = median(&mut b.times);
        let secs = |d: Duration| d.as_secs_f64();
        let (min, max) = (secs(b.times[0]), secs(*b.times.last().unwrap()));
        let spread = |min: f64, max: f64, med: f64| format!("{:.1}%", 100.0 * (max - min) / med);
        let reference = match &mut b.reference {
            Some((_, times)) => {
                let rmed = median(times);
                let (rmin, rmax) = (secs(times[0]), secs(*times.last().unwrap()));
                log_ratio += (med / rmed).ln();
                format!(
                    " {rmed:.3} | {} | {:.2} |",
                    spread(rmin, rmax, rmed),
                    med / rmed
                )
            }
            None if with_ref => " - | - | - |".to_string(),
            None => String::new(),
        };
        println!(
            "| {} | {} | {med:.3} | {min:.3} | {max:.3} | {} |{reference} {:.3} | {} | {:016x} |",
            b.short,
            b.arg,
            spread(min, max, med),
            b.compile.as_secs_f64(),
            b.stdout_len,
            b.stdout_hash
        );
        cells.push(format!("{med:.3}"));
    }
    if with_ref {
        println!(
            "\ngeometric mean of ours / reference: {:.2}",
            (log_ratio / benches.len() as f64).exp()
        );
    }
    println!("table row: | {} |", cells.join(" | "));
    println!();
    if with_ref {
        println!("| program | CPU median (s) | reference CPU median (s) | ours / reference |");
        println!("|---|---|---|---|");
    } else {
        println!("| program | CPU median (s) |");
        println!("|---|---|");
    }
    let mut log_ratio = 0.0;
    for b in &mut benches {
        let med = median(&mut b.cpu);
        if b.reference_cpu.is_empty() {
            let none = if with_ref { " - | - |" } else { "" };
            println!("| {} | {med:.3} |{none}", b.short);
            continue;
        }
        let rmed = median(&mut b.reference_cpu);
        log_ratio += (med / rmed).ln();
        println!("| {} | {med:.3} | {rmed:.3} | {:.2} |", b.short, med / rmed);
    }
    if with_ref {
        println!(
            "\ngeometric mean of ours / reference (CPU time): {:.2}",
            (log_ratio / benches.len() as f64).exp()
        );
    }
}
