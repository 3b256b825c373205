//! Speed of the command-line Pepper host: `cargo bench -p pexe2wasm-runner --bench pepper`.
//!
//! 1. PPB call cost from the module: 10^6 `PPB_Var;1.1` AddRef/Release pairs and 10^5
//!    `PPB_Messaging;1.0` PostMessage calls of a short string, each a `call_indirect`
//!    through the table from a small module over a store holding the host's state (what a
//!    converted plugin does: its PPB function pointers are table slots of these imports).
//! 2. Message round trip host → app → host: lpdevs-part2.pexe (the SDK's messaging
//!    sample: "hello" → "hello from NaCl") under the host in this process, 2000 messages
//!    one at a time; p50, p90, p99.
//! 3. Stockfish 170317 (stockfish-170317.pexe) nodes/s at a fixed depth on 1 and 2
//!    threads (`go depth D`, D = first argument, default 16), from its own `info` line.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pexe2wasm_runner::pepper::{CaptureSink, MessageSource, PepperConfig, PepperHost, INSTANCE};
use pexe2wasm_runner::wasmtime::{Linker, Module, Store};
use pexe2wasm_runner::{new_engine, Ctx, Host, Program, RunOptions};
use pexe2wasm_testkit::corpus as common;

/// Calls AddRef/Release through the table, and PostMessage: what a plugin's code does.
const CALLER: &str = r#"
(module
  (import "PPB_Var;1.1" "AddRef" (func $addref (param i32)))
  (import "PPB_Var;1.1" "Release" (func $release (param i32)))
  (import "PPB_Var;1.1" "VarFromUtf8" (func $from_utf8 (param i32 i32 i32)))
  (import "PPB_Messaging;1.0" "PostMessage" (func $post (param i32 i32)))
  (memory (export "memory") 32)
  (table (export "__indirect_function_table") 8 funcref)
  (elem (i32.const 1) func $addref $release $post)
  (global $next (mut i32) (i32.const 0x100000))
  (data (i32.const 0x2000) "ping")
  (func (export "__ppapi_alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $next))
    (global.set $next (i32.and (i32.add (i32.add (global.get $next) (local.get $len)) (i32.const 65535))
                               (i32.const -65536)))
    (local.get $p))
  (func (export "__ppapi_free") (param i32 i32))
  (func (export "make_string") (call $from_utf8 (i32.const 0x1000) (i32.const 0x2000) (i32.const 4)))
  (func (export "ref_pairs") (param $n i32)
    (loop $l
      (call_indirect (param i32) (i32.const 0x1000) (i32.const 1))
      (call_indirect (param i32) (i32.const 0x1000) (i32.const 2))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "posts") (param $n i32) (param $instance i32)
    (loop $l
      (call_indirect (param i32 i32) (local.get $instance) (i32.const 0x1000) (i32.const 3))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
)
"#;

fn ppb_call_cost() {
    let engine = new_engine(false).unwrap();
    let mut linker: Linker<Ctx> = Linker::new(&engine);
    let sink = Arc::new(CaptureSink::default());
    let host = PepperHost::new(PepperConfig::new(Vec::new(), sink.clone()));
    Host::link(&host, &mut linker).unwrap();
    let opts = RunOptions::default();
    let wasi = pexe2wasm_runner::wasi_ctx(&opts).unwrap().0;
    let ctx = Ctx::standalone_with_host(wasi, host, &opts).unwrap();
    let mut store = Store::new(&engine, ctx);
    let module = Module::new(&engine, wat::parse_str(CALLER).unwrap()).unwrap();
    let instance = linker.instantiate(&mut store, &module).unwrap();
    store.data_mut().set_instance_for_tests(instance);
    let make = instance
        .get_typed_func::<(), ()>(&mut store, "make_string")
        .unwrap();
    make.call(&mut store, ()).unwrap();
    let pairs = instance
        .get_typed_func::<i32, ()>(&mut store, "ref_pairs")
        .unwrap();
    let posts = instance
        .get_typed_func::<(i32, i32), ()>(&mut store, "posts")
        .unwrap();
    pairs.call(&mut store, 1000).unwrap(); // warm up
    let t = Instant::now();
    pairs.call(&mut store, 1_000_000).unwrap();
    let e = t.elapsed();
    println!(
        "PPB_Var AddRef+Release: 10^6 pairs in {:.3} s = {:.0} ns per call",
        e.as_secs_f64(),
        e.as_nanos() as f64 / 2e6
    );
    let t = Instant::now();
    posts.call(&mut store, (100_000, INSTANCE)).unwrap();
    let e = t.elapsed();
    let n = sink.messages.lock().unwrap().len();
    assert_eq!(n, 100_000);
    println!(
        "PPB_Messaging PostMessage of \"ping\" (to a capturing sink): 10^5 in {:.3} s = {:.0} ns per call",
        e.as_secs_f64(),
        e.as_nanos() as f64 / 1e5
    );
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Runs plugin `wasm` with input lines from a channel; the sender, the replies, the run.
fn start_plugin(
    wasm: &[u8],
) -> (
    mpsc::Sender<String>,
    mpsc::Receiver<String>,
    std::thread::JoinHandle<i32>,
) {
    let (in_tx, in_rx) = mpsc::channel::<String>();
    let (out_tx, out_rx) = mpsc::sync_channel::<String>(1 << 16);
    let sink = Arc::new(CaptureSink {
        on_message: Some(out_tx),
        ..Default::default()
    });
    let mut config = PepperConfig::new(Vec::new(), sink);
    config.input = MessageSource::Channel(std::sync::Mutex::new(Some(in_rx)));
    let mut program = Program::new(wasm, true).unwrap();
    program.add_host(PepperHost::new(config)).unwrap();
    let run = std::thread::spawn(move || {
        let opts = RunOptions {
            stdout: pexe2wasm_runner::Output::Discard,
            stderr: pexe2wasm_runner::Output::Discard,
            ..Default::default()
        };
        program.run(&opts).map(|o| o.exit_code).unwrap_or(-1)
    });
    (in_tx, out_rx, run)
}

fn convert(name: &str) -> Option<Vec<u8>> {
    let data = common::real_pexe(name)?;
    Some(
        pexe2wasm::convert::convert(&data, &Default::default())
            .unwrap()
            .wasm,
    )
}

fn round_trip() {
    let Some(wasm) = convert("lpdevs-part2.pexe") else {
        return;
    };
    let (tx, rx, run) = start_plugin(&wasm);
    let mut times = Vec::new();
    for i in 0..2200 {
        let t = Instant::now();
        tx.send("hello".into()).unwrap();
        let reply = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        if i >= 200 {
            times.push(t.elapsed());
        }
        assert_eq!(reply, "hello from NaCl");
    }
    drop(tx);
    assert_eq!(run.join().unwrap(), 0);
    times.sort();
    println!(
        "message round trip host -> lpdevs-part2 -> host (2000, after 200 warm-up): p50 {:.1} us, p90 {:.1} us, p99 {:.1} us",
        percentile(&times, 0.5).as_secs_f64() * 1e6,
        percentile(&times, 0.9).as_secs_f64() * 1e6,
        percentile(&times, 0.99).as_secs_f64() * 1e6,
    );
}

fn stockfish(depth: u32) {
    let Some(wasm) = convert("stockfish-170317.pexe") else {
        return;
    };
    for threads in [1, 2] {
        let (tx, rx, run) = start_plugin(&wasm);
        for l in [
            "uci".to_string(),
            format!("setoption name Threads value {threads}"),
            "setoption name Hash value 64".into(),
            "isready".into(),
        ] {
            tx.send(l).unwrap();
        }
        while rx.recv().unwrap() != "readyok" {}
        tx.send("position startpos".into()).unwrap();
        let t = Instant::now();
        tx.send(format!("go depth {depth}")).unwrap();
        let mut last_info = String::new();
        loop {
            let l = rx.recv().unwrap();
            if l.starts_with("bestmove") {
                break;
            }
            if l.starts_with(&format!("info depth {depth} ")) {
                last_info = l;
            }
        }
        let wall = t.elapsed();
        drop(tx);
        assert_eq!(run.join().unwrap(), 0);
        let field = |k: &str| {
            let w: Vec<&str> = last_info.split_whitespace().collect();
            w.iter()
                .position(|x| *x == k)
                .and_then(|i| w.get(i + 1))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        println!(
            "stockfish go depth {depth}, {threads} thread(s): {} nodes, {} nodes/s (engine's figure), {:.2} s wall",
            field("nodes"),
            field("nps"),
            wall.as_secs_f64()
        );
    }
}

fn main() {
    let depth = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .find_map(|a| a.parse().ok())
        .unwrap_or(16);
    ppb_call_cost();
    round_trip();
    stockfish(depth);
}
