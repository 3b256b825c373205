//! Decode throughput and peak memory: `cargo bench --bench decode [-- N [FILE]]`.
//!
//! Decodes FILE (default: supernet-iguana.pexe from the real corpus) once to measure the
//! peak heap (a counting global allocator) and the process's peak resident set (VmHWM from
//! /proc/self/status), then N more times (default 20) for throughput. MB = 10^6 bytes.
//! Targets: at least 100 MB/s single-threaded, peak heap at most 10x the input size.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use pexe2wasm_testkit::counting_alloc::{Counting, CURRENT, PEAK};
use pexe2wasm_testkit::measure::{self as support, mb, vm_hwm};

#[global_allocator]
static ALLOC: Counting = Counting;

fn main() {
    // As the CLI and the server do (src/malloc.rs); PEXE2WASM_MALLOC=system for glibc's
    // defaults.
    println!("allocator: {}", pexe2wasm::malloc::tune_for_conversion());
    let Some((n, path, data)) = support::input("decode", 20) else {
        return;
    };
    let size = data.len() as u64;

    // Decoding runs function bodies in parallel (rayon); the target is for one
    // thread, so memory and the headline throughput are measured in a 1-thread pool, and
    // all cores are reported alongside.
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    let decode = |data: &[u8]| single.install(|| pexe2wasm::decode::decode(data));

    // One decode for memory.
    let hwm_before = vm_hwm();
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let t = Instant::now();
    let module = match decode(&data) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            std::process::exit(1);
        }
    };
    let first = t.elapsed();
    let peak_heap = (PEAK.load(Ordering::Relaxed) - base) as u64;
    let hwm_after = vm_hwm();
    let functions = module.function_bodies.len();
    let insts: usize = module.function_bodies.iter().map(|f| f.insts.len()).sum();
    drop(module);

    // N decodes for throughput, one thread and then all cores. Dropping the module is not
    // part of decoding and is left out of the timing.
    let time_n = |f: &dyn Fn() -> pexe2wasm::ir::Module| {
        let mut times: Vec<Duration> = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            let m = f();
            times.push(t.elapsed());
            drop(std::hint::black_box(m));
        }
        times.sort();
        (times[0], times[n / 2])
    };
    let (best, median) = time_n(&|| decode(&data).expect("decoded once already"));
    let (best_all, median_all) =
        time_n(&|| pexe2wasm::decode::decode(&data).expect("decoded once already"));
    let rate = |d: Duration| mb(size) / d.as_secs_f64();

    println!("file:              {}", path.display());
    println!("input:             {size} bytes ({:.2} MB)", mb(size));
    println!("decoded:           {functions} function bodies, {insts} instructions");
    println!(
        "first decode:      {:.1} ms ({:.1} MB/s, cold)",
        first.as_secs_f64() * 1e3,
        rate(first)
    );
    println!(
        "throughput:        {:.1} MB/s median, {:.1} MB/s best over {n} decodes, 1 thread ({:.1} ms median)",
        rate(median),
        rate(best),
        median.as_secs_f64() * 1e3
    );
    println!(
        "all cores ({}):     {:.1} MB/s median, {:.1} MB/s best ({:.1} ms median)",
        rayon::current_num_threads(),
        rate(median_all),
        rate(best_all),
        median_all.as_secs_f64() * 1e3
    );
    println!(
        "peak heap:         {peak_heap} bytes ({:.2} MB) = {:.2}x the input",
        mb(peak_heap),
        peak_heap as f64 / size as f64
    );
    if let (Some(a), Some(b)) = (hwm_before, hwm_after) {
        println!(
            "VmHWM:             {:.2} MB before decode (input loaded), {:.2} MB after; growth {:.2}x the input",
            mb(a),
            mb(b),
            b.saturating_sub(a) as f64 / size as f64
        );
    }
    let speed_ok = rate(median) >= 100.0;
    let mem_ok = peak_heap <= 10 * size;
    println!(
        "targets:           >= 100 MB/s: {}; peak heap <= 10x input: {}",
        if speed_ok { "met" } else { "NOT met" },
        if mem_ok { "met" } else { "NOT met" }
    );
    println!(
        "table row:         | {} | {size} | {:.1} | {:.1} | {:.1} | {:.2} MB ({:.2}x) | {} |",
        path.file_name().unwrap_or_default().to_string_lossy(),
        rate(median),
        rate(best),
        rate(median_all),
        mb(peak_heap),
        peak_heap as f64 / size as f64,
        hwm_after.map_or("n/a".to_string(), |h| format!("{:.2} MB", mb(h)))
    );
}
