//! The round of one input: generate, convert, run under wasmtime, compare.

use std::sync::OnceLock;

use pexe2wasm::convert::{convert_module, ConvertOptions, Threads};
use pexe2wasm::interp::{Machine, Trap, TrapKind, Val};
use pexe2wasm::ir::{FuncId, GlobalId};
use wasmtime::{Engine, Instance, Module, Store, Val as WVal};

use crate::gen::{generate, Config, Program, Src};

/// What one input came to, when it found nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Calls compared.
    pub calls: usize,
    /// Calls that trapped (on both sides alike), and how.
    pub traps: usize,
    pub trap_kinds: Vec<TrapKind>,
    /// Calls that ran out of fuel in the interpreter (not compared further).
    pub out_of_fuel: usize,
    /// Set when the converter refused the module as unsupported (not a finding).
    pub unsupported: Option<String>,
    /// Whether the module used setjmp/longjmp, SIMD, wasm atomics.
    pub exceptions: bool,
    pub simd: bool,
    pub threads: bool,
    /// Whether the module was converted with locals allocated by liveness
    /// ([`crate::Program::locals`]).
    pub liveness_locals: bool,
    /// Set when the run compiled with the single-pass register allocator differed from
    /// the interpreter and the backtracking one's agreed: not a finding of ours (see
    /// [`Regalloc`]), kept so that it can be counted and looked at.
    pub single_pass_differed: Option<String>,
}

/// A difference between the converted module and the interpreter, or a converter error
/// on a valid module.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}\n--- program ---\n{text}")]
pub struct Finding {
    pub message: String,
    pub text: String,
}

/// Stack size the harness converts with (small memory: quick to instantiate).
const STACK: u32 = 64 << 10;
/// wasmtime fuel per call (the generated programs stop long before).
const WASM_FUEL: u64 = 50_000_000;
/// Interpreter steps per call.
const INTERP_STEPS: u64 = 5_000_000;

/// Which register allocator Cranelift compiles the converted module with. Compilation
/// was most of a round (perf: Cranelift and regalloc2 ~60% of the samples), and
/// regalloc2's single-pass allocator makes a round about 1.4 times quicker than its
/// backtracking one (`--example rate`). The backtracking allocator, wasmtime's default
/// and the one its fuzzing covers, stays the judge: a difference seen with the
/// single-pass one is checked again with it, and only a difference there is a finding
/// (the single-pass allocator is not production-ready, says wasmtime's documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Regalloc {
    SinglePass,
    #[default]
    Backtracking,
}

/// The engine that compiles with `regalloc`: every feature a converted module may use,
/// NaN canonicalization (so NaN bits are deterministic), fuel, and the quickest
/// compilation. `DIFFTEST_REGALLOC=backtracking` makes [`Regalloc::SinglePass`] the
/// backtracking one too.
pub fn engine(regalloc: Regalloc) -> &'static Engine {
    static E: [OnceLock<Engine>; 2] = [OnceLock::new(), OnceLock::new()];
    let single = regalloc == Regalloc::SinglePass
        && !std::env::var("DIFFTEST_REGALLOC").is_ok_and(|v| v == "backtracking");
    E[single as usize].get_or_init(|| {
        let mut c = wasmtime::Config::new();
        c.cranelift_regalloc_algorithm(if single {
            wasmtime::RegallocAlgorithm::SinglePass
        } else {
            wasmtime::RegallocAlgorithm::Backtracking
        });
        c.wasm_bulk_memory(true)
            .wasm_multi_value(true)
            .wasm_simd(true)
            .wasm_exceptions(true)
            .wasm_threads(true)
            .shared_memory(true)
            .cranelift_nan_canonicalization(true)
            .cranelift_opt_level(wasmtime::OptLevel::None)
            .parallel_compilation(false)
            .consume_fuel(true);
        Engine::new(&c).expect("wasmtime engine")
    })
}

fn finding(message: impl Into<String>, p: &Program) -> Finding {
    Finding {
        message: message.into(),
        text: p.text.clone(),
    }
}

/// Generates a program from `data` (with `cfg`) and checks it.
pub fn check(data: &[u8], cfg: &Config) -> Result<Report, Finding> {
    let mut src = Src(arbitrary::Unstructured::new(data));
    let prog = generate(&mut src, cfg);
    check_program(&prog)
}

/// Checks one generated program. Panics when the generator made an invalid module (a
/// bug of the generator, not of the converter).
pub fn check_program(prog: &Program) -> Result<Report, Finding> {
    let pexe = pexe2wasm::text::assemble(&prog.text).unwrap_or_else(|e| {
        panic!(
            "generator made text that does not assemble: {e}\n{}",
            prog.text
        )
    });
    let module = pexe2wasm::decode::decode(&pexe)
        .map_err(|e| finding(format!("the assembler's output does not decode: {e}"), prog))?;
    let findings = pexe2wasm::verify::verify(&module);
    if !findings.is_empty() {
        let msgs: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
        panic!(
            "generator made a module the verifier rejects:\n{}\n{}",
            msgs.join("\n"),
            prog.text
        );
    }
    let opts = ConvertOptions {
        stack_size: STACK,
        threads: if prog.threads {
            Threads::On
        } else {
            Threads::Off
        },
        link_runtime: false,
        export_all_functions: true,
        runtime: None,
        locals: prog.locals(),
    };
    let mut report = Report {
        liveness_locals: opts.locals == pexe2wasm::convert::Locals::Liveness,
        ..Report::default()
    };
    let converted = match convert_module(module.clone(), pexe.len(), &opts) {
        Ok(c) => c,
        Err(e) if e.class() == pexe2wasm::ErrorClass::Unsupported => {
            report.unsupported = Some(e.to_string());
            return Ok(report);
        }
        Err(e) => return Err(finding(format!("conversion failed: {e}"), prog)),
    };
    report.exceptions = converted.features.exceptions;
    report.simd = converted.features.simd;
    report.threads = converted.features.threads;
    let mut features = wasmparser::WasmFeatures::default();
    features |= wasmparser::WasmFeatures::EXCEPTIONS | wasmparser::WasmFeatures::THREADS;
    wasmparser::Validator::new_with_features(features)
        .validate_all(&converted.wasm)
        .map_err(|e| finding(format!("the output does not validate: {e}"), prog))?;
    let quick = engine(Regalloc::SinglePass);
    let judge = engine(Regalloc::Backtracking);
    match execute(prog, &module, &converted.wasm, quick, report.clone()) {
        Ok(r) => Ok(r),
        // Already the judge's answer (DIFFTEST_REGALLOC=backtracking): no second run.
        Err(f) if std::ptr::eq(quick, judge) => Err(f),
        Err(f) => {
            let mut r = execute(prog, &module, &converted.wasm, judge, report)?;
            r.single_pass_differed = Some(f.message);
            Ok(r)
        }
    }
}

/// Runs the converted module's calls under `engine` beside the interpreter and compares
/// every result, trap and the compared memory.
fn execute(
    prog: &Program,
    module: &pexe2wasm::ir::Module,
    wasm: &[u8],
    engine: &Engine,
    mut report: Report,
) -> Result<Report, Finding> {
    let wmod = Module::new(engine, wasm)
        .map_err(|e| finding(format!("wasmtime refuses the output: {e:#}"), prog))?;
    let mut store = Store::new(engine, ());
    let instance = Instance::new(&mut store, &wmod, &[])
        .map_err(|e| finding(format!("instantiation failed: {e:#}"), prog))?;
    let memory = match instance.get_memory(&mut store, "memory") {
        Some(m) => Mem::Plain(m),
        None => Mem::Shared(
            instance
                .get_shared_memory(&mut store, "memory")
                .ok_or_else(|| finding("no memory export", prog))?,
        ),
    };

    let mut mach = Machine::new(module, STACK)
        .map_err(|e| finding(format!("interpreter setup: {e}"), prog))?;
    mach.max_steps = u64::MAX;
    let stack_top = mach.sp;
    let globals: Vec<(u32, usize)> = prog
        .compared_globals
        .iter()
        .map(|&g| {
            let a = mach.global_addr[g as usize];
            let size = module
                .global(GlobalId(g))
                .map_or(0, |g| g.init.size() as usize);
            (a, size)
        })
        .collect();
    // Memory must agree before any call, too (the data segments).
    compare_memory(
        &mach.mem,
        |a, n| memory.read(&store, a, n),
        &globals,
        "initial data",
        prog,
    )?;

    for (k, call) in prog.calls.iter().enumerate() {
        let name = format!("fn{}", call.func);
        let func = instance
            .get_func(&mut store, &name)
            .ok_or_else(|| finding(format!("no export {name}"), prog))?;
        let wargs: Vec<WVal> = call.args.iter().map(to_wasm).collect();
        let nres = func.ty(&store).results().len();
        let mut wres = vec![WVal::I32(0); nres];
        store.set_fuel(WASM_FUEL).expect("fuel");
        let wasm_out = func.call(&mut store, &wargs, &mut wres);
        mach.max_steps = mach.steps + INTERP_STEPS;
        let interp_out = mach
            .call(FuncId(call.func as u32), &call.args)
            .map_err(|e| finding(format!("interpreter: {e}"), prog))?;
        let what = format!("call #{k} {name}({:?})", call.args);
        // The stack grows down towards the globals and neither side checks for overflow
        // (PNaCl leaves it undefined); the two pad allocas differently (wasm to 16 bytes),
        // so an overflow writes different bytes. The generator keeps well inside the
        // stack; a program that does not is its bug (docs/FUZZING.md, finding 2).
        let used = stack_top.wrapping_sub(mach.sp_low);
        if used > STACK / 2 {
            panic!(
                "generator made a program that uses {used} bytes of the {STACK}-byte stack \
                 (in the interpreter; wasm pads allocas more): {what}\n{}",
                prog.text
            );
        }
        if let Err(Trap::OutOfFuel) = interp_out {
            report.out_of_fuel += 1;
            return Ok(report);
        }
        match (&interp_out, wasm_out) {
            (Ok(r), Ok(())) => {
                let got = wres.first().map(|v| from_wasm(v, r.as_ref()));
                if !same_result(r.as_ref(), got.as_ref()) {
                    return Err(finding(
                        format!("{what}: interpreter returned {r:?}, wasm returned {got:?}"),
                        prog,
                    ));
                }
            }
            (Err(t), Err(e)) => {
                let wk = wasm_trap_kind(&e);
                if wk != t.kind() {
                    return Err(finding(
                        format!(
                            "{what}: interpreter trapped with {t} ({:?}), wasm with {e:#} ({wk:?})",
                            t.kind()
                        ),
                        prog,
                    ));
                }
                report.traps += 1;
                report.trap_kinds.push(wk);
            }
            (Ok(r), Err(e)) => {
                return Err(finding(
                    format!("{what}: interpreter returned {r:?}, wasm trapped: {e:#}"),
                    prog,
                ))
            }
            (Err(t), Ok(())) => {
                return Err(finding(
                    format!("{what}: interpreter trapped ({t}), wasm returned {wres:?}"),
                    prog,
                ))
            }
        }
        compare_memory(
            &mach.mem,
            |a, n| memory.read(&store, a, n),
            &globals,
            &what,
            prog,
        )?;
        report.calls += 1;
    }
    Ok(report)
}

/// The module's memory, plain or shared (a module converted for threads).
enum Mem {
    Plain(wasmtime::Memory),
    Shared(wasmtime::SharedMemory),
}

impl Mem {
    /// A copy of `len` bytes at `addr` (fewer past the end).
    fn read(&self, store: &Store<()>, addr: usize, len: usize) -> Vec<u8> {
        match self {
            Mem::Plain(m) => {
                let d = m.data(store);
                d[addr.min(d.len())..(addr + len).min(d.len())].to_vec()
            }
            Mem::Shared(m) => {
                let d = m.data();
                d[addr.min(d.len())..(addr + len).min(d.len())]
                    .iter()
                    // Only this thread touches the memory: nothing races the reads.
                    .map(|c| unsafe { *c.get() })
                    .collect()
            }
        }
    }
}

fn compare_memory(
    want: &[u8],
    got: impl Fn(usize, usize) -> Vec<u8>,
    globals: &[(u32, usize)],
    what: &str,
    prog: &Program,
) -> Result<(), Finding> {
    for &(a, n) in globals {
        let (a, e) = (a as usize, a as usize + n);
        let g = got(a, n);
        let (w, g) = (&want[a..e], &g[..]);
        if w != g {
            let first = w.iter().zip(g).position(|(x, y)| x != y).unwrap_or(0);
            let lo = first & !15;
            let hi = (lo + 32).min(n);
            return Err(finding(
                format!(
                    "{what}: memory differs at {:#x} (global at {a:#x} + {first}): interpreter {:02x?}, wasm {:02x?} (from +{lo})",
                    a + first,
                    &w[lo..hi],
                    g.get(lo..hi).unwrap_or(&[])
                ),
                prog,
            ));
        }
    }
    Ok(())
}

/// Results agree: equal, or both NaN of the same type.
fn same_result(want: Option<&Val>, got: Option<&Val>) -> bool {
    match (want, got) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a == b
                || (a.is_nan()
                    && b.is_nan()
                    && std::mem::discriminant(a) == std::mem::discriminant(b))
        }
        _ => false,
    }
}

fn to_wasm(v: &Val) -> WVal {
    match *v {
        Val::Int { bits: 64, v } => WVal::I64(v as i64),
        Val::Int { v, bits } => WVal::I32(pexe2wasm::interp::value::sext(v, bits as u32) as i32),
        Val::F32(b) => WVal::F32(b),
        Val::F64(b) => WVal::F64(b),
        Val::Vector { elem, n, lanes } => {
            let w = elem.bits();
            let mut x = 0u128;
            for (i, l) in lanes[..n as usize].iter().enumerate() {
                x |= (*l as u128) << (i as u32 * w);
            }
            WVal::V128(x.into())
        }
    }
}

/// A wasm result as a value of the interpreter's result's type (`like`).
fn from_wasm(v: &WVal, like: Option<&Val>) -> Val {
    match (v, like) {
        (WVal::I32(x), Some(Val::Int { bits, .. })) => Val::int(*bits as u32, *x as u32 as u64),
        (WVal::I32(x), _) => Val::int(32, *x as u32 as u64),
        (WVal::I64(x), _) => Val::int(64, *x as u64),
        (WVal::F32(b), _) => Val::F32(*b),
        (WVal::F64(b), _) => Val::F64(*b),
        (WVal::V128(x), Some(Val::Vector { elem, n, .. })) => {
            pexe2wasm::interp::value::bitcast(&Val::int(64, 0), *elem, *n as u32)
                .map(|_| {
                    let x: u128 = (*x).into();
                    let w = elem.bits();
                    let mut lanes = [0u64; 16];
                    for (i, l) in lanes.iter_mut().enumerate().take(*n as usize) {
                        *l = pexe2wasm::interp::value::mask((x >> (i as u32 * w)) as u64, w);
                    }
                    Val::Vector {
                        elem: *elem,
                        n: *n,
                        lanes,
                    }
                })
                .unwrap_or(Val::int(32, 0))
        }
        _ => Val::int(32, 0),
    }
}

/// The kind of a wasm trap, as [`TrapKind`].
fn wasm_trap_kind(e: &wasmtime::Error) -> TrapKind {
    if e.is::<wasmtime::ThrownException>() {
        return TrapKind::UncaughtLongjmp;
    }
    match e.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::IntegerDivisionByZero) => TrapKind::DivisionByZero,
        Some(wasmtime::Trap::IntegerOverflow) => TrapKind::IntegerOverflow,
        Some(wasmtime::Trap::MemoryOutOfBounds) => TrapKind::OutOfBounds,
        Some(wasmtime::Trap::UnreachableCodeReached) => TrapKind::Unreachable,
        Some(wasmtime::Trap::IndirectCallToNull | wasmtime::Trap::BadSignature) => {
            TrapKind::IndirectCall
        }
        Some(wasmtime::Trap::StackOverflow) => TrapKind::StackExhausted,
        Some(wasmtime::Trap::OutOfFuel) => TrapKind::OutOfFuel,
        _ => TrapKind::Other,
    }
}
