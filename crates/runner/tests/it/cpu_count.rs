//! `sysconf(_SC_NPROCESSORS_ONLN)` answers as NaCl did: the host's processor count in a
//! threaded module (apps size their thread pools from it), 1 in an unthreaded one (which
//! cannot start threads and imports nothing beyond WASI).

use pexe2wasm::convert::{convert, ConvertOptions, Threads};
use pexe2wasm_runner::{run_wasm, Output, RunOptions};

/// fixtures/hello.pnaclasm, changed to exit with what basic.sysconf (slot 5, at +20 of the
/// basic table) answers for `_SC_NPROCESSORS_ONLN` (1), read through the nwrote slot.
fn sysconf_pexe() -> Vec<u8> {
    let text = pexe2wasm_testkit::edited_hello(&[
        ("count 8;", "count 9;"),
        (
            "@t7 = i32 (i32, i32, i32, i32);         // fdio.write(fd, buf, count, *nwrote)",
            "@t7 = i32 (i32, i32, i32, i32);         // fdio.write(fd, buf, count, *nwrote)\n    @t8 = i32 (i32, i32);",
        ),
        (
            "    call void %v29(i32 %c0);",
            "    %v30 = add i32 %v25, %c3;\n    %v31 = load i32* %v30, align 1;\n    \
             %v32 = call i32 %v31(i32 %c5, i32 %v20);\n    %v33 = load i32* %v20, align 1;\n    \
             call void %v29(i32 %v33);",
        ),
    ]);
    pexe2wasm::text::assemble(&text).unwrap()
}

fn exit_code(threads: Threads) -> i32 {
    let opts = ConvertOptions {
        threads,
        ..Default::default()
    };
    let out = convert(&sysconf_pexe(), &opts).unwrap();
    assert_eq!(out.features.threads, threads == Threads::On);
    let run = RunOptions {
        stdout: Output::Capture,
        ..Default::default()
    };
    run_wasm(&out.wasm, &run).unwrap().exit_code
}

#[test]
fn threaded_modules_see_the_hosts_processor_count() {
    let want = pexe2wasm_runner::cpu_count();
    assert_eq!(
        want as usize,
        std::thread::available_parallelism().unwrap().get()
    );
    assert_eq!(exit_code(Threads::On), want);
}

#[test]
fn unthreaded_modules_see_one_processor() {
    assert_eq!(exit_code(Threads::Off), 1);
}
