//! Shrinks a finding: deletes lines of the generated program's function bodies (one at a
//! time, then blocks of lines) while the check still reports a finding whose message
//! starts like the original one (up to its first `:`), and prints the smallest program.
//!
//!     cargo run --release -p pexe2wasm-difftest --example minimize -- FILE [--text PROG]
//!
//! With `--text PROG`, the program's text is taken from PROG (the calls still come from
//! FILE's generation); with `--call-i32 N` as well, the one call is `fn0(i32 N)`. Deleting a line may leave text that does not assemble or verify;
//! those candidates are skipped (the check panics on them, which is caught).

use std::panic::{catch_unwind, AssertUnwindSafe};

use pexe2wasm_difftest::{check_program, generate, Config, Program, Src};

fn finding(p: &Program) -> Option<String> {
    match catch_unwind(AssertUnwindSafe(|| check_program(p))) {
        Ok(Err(f)) => Some(f.message),
        _ => None,
    }
}

/// Lines that may be deleted: instructions inside function bodies, not terminators,
/// labels, declarations or constants, nor the fuel's load and store.
fn deletable(line: &str) -> bool {
    let t = line.trim_start();
    let indent = line.len() - t.len();
    indent == 4
        && (t.starts_with('%') || t.starts_with("store ") || t.starts_with("call "))
        && !t.starts_with("%b")
        && !t.contains("llvm.nacl")
        && !t.contains("@g1") // the fuel: without it, loops run until the step limit
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = args.first().expect("FILE");
    let data = std::fs::read(file).expect("read input");
    let mut src = Src(arbitrary::Unstructured::new(&data));
    let mut prog = generate(&mut src, &Config::default());
    if let Some(i) = args.iter().position(|a| a == "--text") {
        prog.text = std::fs::read_to_string(&args[i + 1]).expect("read text");
    }
    if let Some(i) = args.iter().position(|a| a == "--call-i32") {
        let n: u64 = args[i + 1].parse().expect("--call-i32 N");
        prog.calls = vec![pexe2wasm_difftest::gen::PlannedCall {
            func: 0,
            args: vec![pexe2wasm::interp::Val::int(32, n)],
        }];
    }
    let first = match check_program(&prog) {
        Err(f) => f.message,
        Ok(r) => {
            println!("no finding: {r:?}");
            return;
        }
    };
    std::panic::set_hook(Box::new(|_| {}));
    let key = first.split(':').next().unwrap_or("").to_string();
    eprintln!("finding: {first}");
    let mut lines: Vec<String> = prog.text.lines().map(String::from).collect();
    let mut chunk = 16;
    while chunk >= 1 {
        let mut i = 0;
        let mut progress = false;
        while i < lines.len() {
            let idx: Vec<usize> = (i..lines.len())
                .filter(|&k| deletable(&lines[k]))
                .take(chunk)
                .collect();
            if idx.is_empty() {
                break;
            }
            let cand: Vec<String> = lines
                .iter()
                .enumerate()
                .filter(|(k, _)| !idx.contains(k))
                .map(|(_, l)| l.clone())
                .collect();
            prog.text = cand.join("\n") + "\n";
            match finding(&prog) {
                Some(m) if m.starts_with(&key) => {
                    lines = cand;
                    progress = true;
                    eprintln!("{} lines", lines.len());
                }
                _ => i = idx[idx.len() - 1] + 1,
            }
        }
        if !progress {
            chunk /= 2;
        }
    }
    prog.text = lines.join("\n") + "\n";
    eprintln!("finding: {}", finding(&prog).unwrap_or_default());
    for c in &prog.calls {
        eprintln!("call fn{}({:?})", c.func, c.args);
    }
    print!("{}", prog.text);
}
