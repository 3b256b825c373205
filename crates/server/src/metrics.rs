//! Prometheus metrics, kept by hand (a few counters and one histogram need no framework)
//! and rendered in the text exposition format at `GET /metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the latency histogram's buckets.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

#[derive(Default)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
    pub cache_hits: AtomicU64,
    pub cache_misses: AtomicU64,
    pub queue_rejections: AtomicU64,
    pub timeouts: AtomicU64,
}

impl Metrics {
    /// Counts one finished request of `route` (the matched path template).
    pub fn record_request(&self, route: &str, status: u16, elapsed: Duration, bytes_out: u64) {
        *self
            .requests
            .lock()
            .unwrap()
            .entry((route.to_string(), status))
            .or_default() += 1;
        let secs = elapsed.as_secs_f64();
        let mut lat = self.latency.lock().unwrap();
        let h = lat.entry(route.to_string()).or_default();
        if h.counts.is_empty() {
            h.counts = vec![0; LATENCY_BUCKETS.len()];
        }
        if let Some(i) = LATENCY_BUCKETS.iter().position(|&b| secs <= b) {
            h.counts[i] += 1;
        }
        h.sum += secs;
        h.count += 1;
        self.bytes_out.fetch_add(bytes_out, Ordering::Relaxed);
    }

    /// The text exposition; `in_flight` and `cache_bytes` are read from their owners.
    pub fn render(&self, in_flight: u64, cache_bytes: usize) -> String {
        let mut s = String::new();
        let c = |a: &AtomicU64| a.load(Ordering::Relaxed);
        s.push_str("# HELP pexe2wasm_http_requests_total HTTP requests by route and status.\n");
        s.push_str("# TYPE pexe2wasm_http_requests_total counter\n");
        for ((route, status), n) in self.requests.lock().unwrap().iter() {
            let _ = writeln!(
                s,
                "pexe2wasm_http_requests_total{{route=\"{}\",status=\"{status}\"}} {n}",
                escape(route)
            );
        }
        s.push_str("# HELP pexe2wasm_http_request_duration_seconds Request latency by route.\n");
        s.push_str("# TYPE pexe2wasm_http_request_duration_seconds histogram\n");
        for (route, h) in self.latency.lock().unwrap().iter() {
            let route = escape(route);
            let mut cumulative = 0;
            for (b, n) in LATENCY_BUCKETS.iter().zip(&h.counts) {
                cumulative += n;
                let _ = writeln!(
                    s,
                    "pexe2wasm_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{b}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                s,
                "pexe2wasm_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                s,
                "pexe2wasm_http_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                s,
                "pexe2wasm_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                h.count
            );
        }
        let mut scalar = |name: &str, kind: &str, help: &str, v: u64| {
            let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
        };
        scalar(
            "pexe2wasm_request_bytes_total",
            "counter",
            "Request body bytes received.",
            c(&self.bytes_in),
        );
        scalar(
            "pexe2wasm_response_bytes_total",
            "counter",
            "Response body bytes sent.",
            c(&self.bytes_out),
        );
        scalar(
            "pexe2wasm_cache_hits_total",
            "counter",
            "Conversions answered from the result cache.",
            c(&self.cache_hits),
        );
        scalar(
            "pexe2wasm_cache_misses_total",
            "counter",
            "Conversions not found in the result cache.",
            c(&self.cache_misses),
        );
        scalar(
            "pexe2wasm_cache_bytes",
            "gauge",
            "Bytes held by the result cache.",
            cache_bytes as u64,
        );
        scalar(
            "pexe2wasm_conversions_in_flight",
            "gauge",
            "Jobs running on the worker pool.",
            in_flight,
        );
        scalar(
            "pexe2wasm_queue_rejections_total",
            "counter",
            "Requests refused with 503 because the work queue was full.",
            c(&self.queue_rejections),
        );
        scalar(
            "pexe2wasm_conversion_timeouts_total",
            "counter",
            "Jobs abandoned with 504 after their time limit.",
            c(&self.timeouts),
        );
        s
    }
}

fn escape(label: &str) -> String {
    label
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
