//! A bounded load test: 64 concurrent clients send 2,000 requests (conversions of several
//! pexes, inspections, health checks) to the real server. Every answer is 200 or an
//! intended 503; every module served for one input is the same valid module; the server
//! is alive and its metrics add up afterwards.

use crate::common::{fixture, real_pexe, sha256_hex, validate_wasm, Server};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const CLIENTS: usize = 64;
const REQUESTS: usize = 2000;

#[test]
fn sixty_four_clients_two_thousand_requests() {
    let _heavy = crate::common::heavy();
    // A small cache (some inputs evicted and converted again) and a short queue, so the
    // run exercises misses, hits and possibly 503s.
    let s = Server::start(&["--cache-bytes", "400000", "--queue-depth", "16"]);
    let mut inputs: Vec<(String, Vec<u8>)> = [
        "hello.pexe",
        "semantics/bits.pexe",
        "semantics/memory.pexe",
        "semantics/control.pexe",
    ]
    .iter()
    .map(|n| (n.to_string(), fixture(n)))
    .collect();
    for n in ["binji-nbody.pexe", "binji-fasta.pexe"] {
        if let Some(p) = real_pexe(n) {
            inputs.push((n.to_string(), p));
        }
    }
    let inputs = Arc::new(inputs);
    let next = Arc::new(AtomicUsize::new(0));
    // sha of input → sha of every module served for it.
    let served: Arc<Mutex<HashMap<String, Vec<u8>>>> = Arc::default();
    let statuses: Arc<Mutex<HashMap<(&'static str, u16), usize>>> = Arc::default();
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (inputs, next, served, statuses, base) = (
                inputs.clone(),
                next.clone(),
                served.clone(),
                statuses.clone(),
                s.base.clone(),
            );
            std::thread::spawn(move || {
                let c = reqwest::blocking::Client::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= REQUESTS {
                        break;
                    }
                    let (route, r) = match i % 10 {
                        0 => ("healthz", c.get(format!("{base}/healthz")).send()),
                        1 | 2 => {
                            let (_, p) = &inputs[i % inputs.len()];
                            (
                                "inspect",
                                c.post(format!("{base}/v1/inspect"))
                                    .header("content-type", "application/octet-stream")
                                    .body(p.clone())
                                    .send(),
                            )
                        }
                        _ => {
                            let (_, p) = &inputs[i % inputs.len()];
                            (
                                "convert",
                                c.post(format!("{base}/v1/convert"))
                                    .header("content-type", "application/octet-stream")
                                    .body(p.clone())
                                    .send(),
                            )
                        }
                    };
                    let r = r.unwrap_or_else(|e| panic!("request {i} ({route}) failed: {e}"));
                    let status = r.status().as_u16();
                    *statuses.lock().unwrap().entry((route, status)).or_default() += 1;
                    if route == "convert" && status == 200 {
                        let sha = r.headers()["x-pexe-sha256"].to_str().unwrap().to_string();
                        let body = r.bytes().unwrap().to_vec();
                        let mut m = served.lock().unwrap();
                        match m.get(&sha) {
                            Some(prev) => assert!(prev == &body, "different modules for one input"),
                            None => {
                                m.insert(sha, body);
                            }
                        }
                    } else {
                        let _ = r.bytes();
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a client thread failed");
    }
    let statuses = statuses.lock().unwrap().clone();
    eprintln!("statuses: {statuses:?}");
    let total: usize = statuses.values().sum();
    assert_eq!(total, REQUESTS);
    for ((route, status), n) in &statuses {
        assert!(
            *status == 200 || (*status == 503 && *route != "healthz"),
            "{n} × {route} {status}"
        );
    }
    let ok_conversions = statuses.get(&("convert", 200)).copied().unwrap_or(0);
    assert!(
        ok_conversions > REQUESTS / 2,
        "too few conversions succeeded: {statuses:?}"
    );
    // Every input's module validates.
    let served = served.lock().unwrap();
    for (name, p) in inputs.iter() {
        let wasm = served
            .get(&sha256_hex(p))
            .unwrap_or_else(|| panic!("{name} never converted"));
        validate_wasm(wasm);
    }
    // Alive, idle, and the metrics agree with what the clients saw.
    let c = reqwest::blocking::Client::new();
    let h: serde_json::Value = c.get(s.url("/healthz")).send().unwrap().json().unwrap();
    assert_eq!(h["conversions_in_flight"], 0);
    let m = c.get(s.url("/metrics")).send().unwrap().text().unwrap();
    let count = |line: &str| -> usize {
        m.lines()
            .find(|l| l.starts_with(line))
            .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
            .unwrap_or(0)
    };
    assert_eq!(
        count("pexe2wasm_http_requests_total{route=\"/v1/convert\",status=\"200\"}"),
        ok_conversions
    );
    let hits = count("pexe2wasm_cache_hits_total");
    let misses = count("pexe2wasm_cache_misses_total");
    assert!(
        hits > 0 && misses >= inputs.len(),
        "hits {hits} misses {misses}"
    );
}
