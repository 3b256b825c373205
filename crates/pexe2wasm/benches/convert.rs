//! Conversion throughput and peak memory: `cargo bench --bench convert [-- N [FILE]]`.
//!
//! Converts FILE (default: supernet-iguana.pexe from the real corpus) and the whole
//! runnable real corpus (the 28 pexes with `_start`) with the runtime linked, exactly as
//! `pexe2wasm convert` does (decode, verify, lower + emit, validate):
//! - once on all cores for memory: the peak heap of the conversion (a counting global
//!   allocator; peak above what was live before) and the process's peak resident set
//!   (VmHWM from /proc/self/status, which includes the input, the output and the
//!   allocator's retained pages), then the peak heap again on one thread;
//! - the time of each stage, on one thread (decode, verify, emit, validate);
//! - N times (default 10) on a one-thread rayon pool and N times on all cores, for the
//!   median and best throughput in MB/s of pexe (MB = 10^6 bytes).
//!
//! Targets: at least 60 MB/s on 2 cores, peak memory at most 60 MB for iguana.
//! Ends with a `table row:` line for docs/PERFORMANCE.md.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use pexe2wasm::convert::{convert, ConvertOptions};

use pexe2wasm_testkit::corpus as common;
use pexe2wasm_testkit::counting_alloc::{Counting, CURRENT, PEAK};
use pexe2wasm_testkit::measure::{self as support, mb, minor_faults, vm_hwm};

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak heap (bytes above what was live before) while `f` runs.
fn peak_heap<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let r = f();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base) as u64;
    (r, peak)
}

/// Sorted times of `n` runs of `f`.
fn timed(n: usize, mut f: impl FnMut()) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("rayon pool")
}

fn convert_ok(name: &str, data: &[u8]) -> usize {
    match convert(data, &ConvertOptions::default()) {
        Ok(c) => c.wasm.len(),
        Err(e) => {
            eprintln!("error: {name}: {e}");
            std::process::exit(1);
        }
    }
}

/// The runnable pexes of the real corpus (every well-formed one with `_start`).
fn corpus() -> Vec<(String, Vec<u8>)> {
    common::WELL_FORMED
        .iter()
        .filter(|f| !common::NOT_RUNNABLE.contains(f))
        .filter_map(|f| common::real_pexe(f).map(|d| (f.to_string(), d)))
        .collect()
}

fn main() {
    // As the CLI and the server do (src/malloc.rs); PEXE2WASM_MALLOC=system measures
    // glibc's defaults instead.
    let malloc = pexe2wasm::malloc::tune_for_conversion();
    let Some((n, path, data)) = support::input("convert", 10) else {
        return;
    };
    let name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let size = data.len() as u64;
    let cores = rayon::current_num_threads();
    let one = pool(1);
    let all = pool(cores);

    // Memory first, so that VmHWM is this conversion's.
    let hwm_before = vm_hwm();
    let (wasm_len, heap_all) = peak_heap(|| all.install(|| convert_ok(&name, &data)));
    let hwm_after = vm_hwm();
    let (_, heap_one) = peak_heap(|| one.install(|| convert_ok(&name, &data)));

    // Stages, one thread.
    let stages = one.install(|| {
        let t = Instant::now();
        let m = pexe2wasm::decode::decode(&data).expect("converted once already");
        let decode = t.elapsed();
        let t = Instant::now();
        pexe2wasm::verify::verify_module(&m).expect("converted once already");
        pexe2wasm::verify::check_runnable(&m).expect("converted once already");
        let verify = t.elapsed();
        let t = Instant::now();
        let eopts = pexe2wasm::emit::EmitOptions {
            // Validation is its own stage here (below).
            validate: false,
            ..Default::default()
        };
        let out = pexe2wasm::emit::emit(&m, Some(pexe2wasm::runtime::irt_module()), &eopts)
            .expect("converted once already");
        let emit = t.elapsed();
        let t = Instant::now();
        wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
            .validate_all(&out.wasm)
            .expect("converted once already");
        let validate = t.elapsed();
        [
            ("decode", decode),
            ("verify", verify),
            ("emit", emit),
            ("validate", validate),
        ]
    });

    // Throughput.
    let rate = |bytes: u64, d: Duration| mb(bytes) / d.as_secs_f64();
    let t1 = one.install(|| {
        timed(n, || {
            std::hint::black_box(convert_ok(&name, &data));
        })
    });
    let faults_before = minor_faults();
    let tn = all.install(|| {
        timed(n, || {
            std::hint::black_box(convert_ok(&name, &data));
        })
    });
    let faults = minor_faults()
        .zip(faults_before)
        .map(|(a, b)| (a - b) / n as u64);
    let files = corpus();
    let corpus_bytes: u64 = files.iter().map(|(_, d)| d.len() as u64).sum();
    let pass = || {
        for (f, d) in &files {
            std::hint::black_box(convert_ok(f, d));
        }
    };
    let runs = n.div_ceil(2).max(3);
    let c1 = one.install(|| timed(runs, pass));
    let cn = all.install(|| timed(runs, pass));

    let med = |t: &[Duration]| t[t.len() / 2];
    println!("file:              {}", path.display());
    println!(
        "input:             {size} bytes ({:.2} MB) -> {wasm_len} bytes of wasm",
        mb(size)
    );
    println!("cores:             {cores}");
    println!("allocator:         {malloc}");
    if let Some(f) = faults {
        println!("page faults:       {f} per conversion on {cores} threads (minor faults)");
    }
    for (stage, d) in stages {
        println!(
            "stage (1 thread):  {stage:<8} {:7.1} ms  {:7.1} MB/s",
            d.as_secs_f64() * 1e3,
            rate(size, d)
        );
    }
    // The rates of `bytes` converted in the times `one` (1 thread) and `every` (all cores).
    let rates = |what: &str, bytes: u64, over: &str, one: &[Duration], every: &[Duration]| {
        let all_label = format!("{cores} threads");
        for (label, t) in [("1 thread", one), (all_label.as_str(), every)] {
            println!(
                "{what} ({label}): {:.1} MB/s median, {:.1} MB/s best over {over} ({:.1} ms median)",
                rate(bytes, med(t)),
                rate(bytes, t[0]),
                med(t).as_secs_f64() * 1e3
            );
        }
    };
    rates(&name, size, &n.to_string(), &t1, &tn);
    println!(
        "corpus:            {} files, {corpus_bytes} bytes ({:.2} MB)",
        files.len(),
        mb(corpus_bytes)
    );
    rates("corpus", corpus_bytes, &format!("{runs} passes"), &c1, &cn);
    println!(
        "peak heap:         {:.2} MB on {cores} threads, {:.2} MB on 1 thread ({:.2}x / {:.2}x the input)",
        mb(heap_all),
        mb(heap_one),
        heap_all as f64 / size as f64,
        heap_one as f64 / size as f64
    );
    if let (Some(a), Some(b)) = (hwm_before, hwm_after) {
        println!(
            "VmHWM:             {:.2} MB before the conversion (input loaded), {:.2} MB after",
            mb(a),
            mb(b)
        );
    }
    let speed_ok = rate(size, med(&tn)) >= 60.0 && rate(corpus_bytes, med(&cn)) >= 60.0;
    let mem_ok = heap_all <= 60_000_000 && hwm_after.is_none_or(|h| h <= 60_000_000);
    println!(
        "targets:           >= 60 MB/s on all cores: {}; peak memory <= 60 MB: {}",
        if speed_ok { "met" } else { "NOT met" },
        if mem_ok { "met" } else { "NOT met" }
    );
    println!(
        "table row:         | {name} | {cores} | {:.1} / {:.1} | {:.1} / {:.1} | {:.1} / {:.1} | {:.1} / {:.1} | {:.2} MB | {} |",
        rate(size, med(&t1)),
        rate(size, t1[0]),
        rate(size, med(&tn)),
        rate(size, tn[0]),
        rate(corpus_bytes, med(&c1)),
        rate(corpus_bytes, c1[0]),
        rate(corpus_bytes, med(&cn)),
        rate(corpus_bytes, cn[0]),
        mb(heap_all),
        hwm_after.map_or("n/a".to_string(), |h| format!("{:.2} MB", mb(h)))
    );
}
