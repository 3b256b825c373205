//! Translation throughput of x86-64 nexes: `cargo bench -p pexe2wasm-nexe --bench
//! translate [-- N [FILE...]]`.
//!
//! Translates each FILE (default: every static x86-64 nexe of the nexe corpus,
//! $PEXE2WASM_NEXE_CORPUS or ../shared/fixtures/nexe) N times (default 5) on rayon's threads,
//! as `pexe2wasm convert` does (`translate_program`: the runtime linked, functions that do
//! not lift stubbed), and prints MB/s of code (MB = 10^6 bytes of the text segment) for
//! the whole translation and for its phases: reading and validating, lifting (decoding,
//! function discovery, one wasm body per function) and assembling the module. The target
//! is 20 MB/s for the whole translation (issue 35). With $PEXE2WASM_NEXE_BENCH_OUT set to
//! a folder, each module is written there (NAME.wasm), to compare outputs across changes;
//! with $PEXE2WASM_NEXE_BENCH_WHOLE set, only the whole translation runs (for instruction
//! counts under `valgrind --tool=callgrind`, which do not depend on the machine's load).

use pexe2wasm_nexe::x86_64::lift::{lift_nexe, program_options, translate_program};
use pexe2wasm_nexe::{inspect, Arch, Translation};
use std::time::{Duration, Instant};

mod common;

fn main() {
    let (n, files) = common::args(5, pexe2wasm_testkit::corpus::NEXES);
    let mut totals = common::Totals::default();
    for path in &files {
        let Some(bytes) = common::read(path) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(nexe) = inspect(&bytes) else {
            eprintln!("{name}: not a nexe");
            continue;
        };
        if nexe.info.arch != Arch::X86_64 || nexe.info.translation != Translation::Translatable {
            continue;
        }
        let code = nexe.code().map(|(_, c)| c.len() as u64).unwrap_or(0);
        let (mut whole, mut validate, mut lift, mut assemble) =
            (Duration::MAX, Duration::MAX, Duration::MAX, Duration::MAX);
        let mut sum = Duration::ZERO;
        let mut out = 0usize;
        for _ in 0..n {
            let t = Instant::now();
            let nexe = inspect(&bytes).expect("a nexe");
            let p = translate_program(&nexe).expect("a translation");
            let dt = t.elapsed();
            out = p.wasm.len();
            if let Some(dir) = std::env::var_os("PEXE2WASM_NEXE_BENCH_OUT") {
                let to = std::path::Path::new(&dir).join(format!("{name}.wasm"));
                std::fs::write(&to, &p.wasm).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
            }
            whole = whole.min(dt);
            sum += dt;

            if std::env::var_os("PEXE2WASM_NEXE_BENCH_WHOLE").is_some() {
                continue;
            }
            let t = Instant::now();
            let nexe = inspect(&bytes).expect("a nexe");
            let v = nexe.validate_x86_64().expect("x86-64 code");
            std::hint::black_box(v);
            validate = validate.min(t.elapsed());

            let options = program_options(&nexe);
            let t = Instant::now();
            let l = lift_nexe(&nexe, &options).expect("lifted");
            lift = lift.min(t.elapsed());
            let t = Instant::now();
            let m = l
                .assemble(&nexe.memory_image(), Some(nexe.info.entry), &options)
                .expect("assembled");
            std::hint::black_box(m);
            assemble = assemble.min(t.elapsed());
        }
        let mean = sum / n as u32;
        let mbs = |d: Duration| code as f64 / 1e6 / d.as_secs_f64();
        println!(
            "{name}: {:.2} MB of code -> {:.2} MB of wasm: mean {:.0} ms ({:.1} MB/s), best {:.0} ms ({:.1} MB/s)",
            code as f64 / 1e6,
            out as f64 / 1e6,
            mean.as_secs_f64() * 1e3,
            mbs(mean),
            whole.as_secs_f64() * 1e3,
            mbs(whole),
        );
        println!(
            "  best: inspect + validate {:.0} ms, lift (validate included) {:.0} ms, assemble {:.0} ms",
            validate.as_secs_f64() * 1e3,
            lift.as_secs_f64() * 1e3,
            assemble.as_secs_f64() * 1e3,
        );
        totals.add(code, mean);
    }
    totals.print(1, "inspect + translate_program");
}
