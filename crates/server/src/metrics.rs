//! Prometheus metrics on `prometheus-client`, rendered in the text exposition format
//! (version 0.0.4) at `GET /metrics`. The names below are part of the interface: the
//! docs/SERVICE.md, the tests and dashboards use them.

use prometheus_client::encoding::{
    prometheus_text, EncodeLabelSet, EncodeLabelValue, LabelValueEncoder,
};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// Upper bounds (seconds) of the latency histogram's buckets.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// The `Content-Type` of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = prometheus_text::CONTENT_TYPE;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteStatus {
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Route {
    route: String,
}

/// Why the server closed a connection before its client did (the `reason` label of
/// `pexe2wasm_connections_cut_total`).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum CutReason {
    /// A request head did not arrive in full within the header timeout.
    HeaderTimeout,
    /// No byte moved for the idle timeout while no handler was at work.
    IdleTimeout,
    /// Closed to make room for a new connection at the connection cap.
    Evicted,
    /// A new connection at the cap with no idle connection to replace: 503 and closed.
    OverCapacity,
    /// Still open when the shutdown grace period ended.
    Shutdown,
}

impl CutReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CutReason::HeaderTimeout => "header_timeout",
            CutReason::IdleTimeout => "idle_timeout",
            CutReason::Evicted => "evicted",
            CutReason::OverCapacity => "over_capacity",
            CutReason::Shutdown => "shutdown",
        }
    }
}

impl EncodeLabelValue for CutReason {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        EncodeLabelValue::encode(&self.as_str(), encoder)
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reason {
    reason: CutReason,
}

type U64Gauge = Gauge<u64, AtomicU64>;

pub struct Metrics {
    registry: Registry,
    requests: Family<RouteStatus, Counter>,
    latency: Family<Route, Histogram, fn() -> Histogram>,
    pub bytes_in: Counter,
    pub bytes_out: Counter,
    pub cache_hits: Counter,
    pub cache_misses: Counter,
    pub queue_rejections: Counter,
    pub timeouts: Counter,
    pub body_memory_rejections: Counter,
    /// Connections open now (kept by the accept loop).
    pub connections_open: U64Gauge,
    cuts: Family<Reason, Counter>,
    cache_bytes: U64Gauge,
    in_flight: U64Gauge,
    body_memory: U64Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("pexe2wasm");
        let requests = Family::<RouteStatus, Counter>::default();
        // Counters get their `_total` suffix from the encoder.
        registry.register(
            "http_requests",
            "HTTP requests by route and status",
            requests.clone(),
        );
        let latency = Family::<Route, Histogram>::new_with_constructor(
            (|| Histogram::new(LATENCY_BUCKETS.iter().copied())) as fn() -> Histogram,
        );
        registry.register(
            "http_request_duration_seconds",
            "Request latency by route",
            latency.clone(),
        );
        let counter = |registry: &mut Registry, name: &str, help: &str| {
            let c = Counter::default();
            registry.register(name, help, c.clone());
            c
        };
        let bytes_in = counter(
            &mut registry,
            "request_bytes",
            "Request body bytes received",
        );
        let bytes_out = counter(&mut registry, "response_bytes", "Response body bytes sent");
        let cache_hits = counter(
            &mut registry,
            "cache_hits",
            "Conversions answered from the result cache",
        );
        let cache_misses = counter(
            &mut registry,
            "cache_misses",
            "Conversions not found in the result cache",
        );
        let cache_bytes = U64Gauge::default();
        registry.register(
            "cache_bytes",
            "Bytes held by the result cache",
            cache_bytes.clone(),
        );
        let in_flight = U64Gauge::default();
        registry.register(
            "conversions_in_flight",
            "Jobs running on the worker pool",
            in_flight.clone(),
        );
        let queue_rejections = counter(
            &mut registry,
            "queue_rejections",
            "Requests refused with 503 because the work queue was full",
        );
        let timeouts = counter(
            &mut registry,
            "conversion_timeouts",
            "Jobs abandoned with 504 after their time limit",
        );
        let body_memory_rejections = counter(
            &mut registry,
            "body_memory_rejections",
            "Requests refused with 503 because their body did not fit the body-memory budget",
        );
        let body_memory = U64Gauge::default();
        registry.register(
            "body_memory_bytes",
            "Request-body bytes charged to the body-memory budget",
            body_memory.clone(),
        );
        let connections_open = U64Gauge::default();
        registry.register(
            "connections_open",
            "HTTP connections open",
            connections_open.clone(),
        );
        let cuts = Family::<Reason, Counter>::default();
        registry.register(
            "connections_cut",
            "Connections the server closed before their client did, by reason",
            cuts.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            bytes_in,
            bytes_out,
            cache_hits,
            cache_misses,
            queue_rejections,
            timeouts,
            body_memory_rejections,
            connections_open,
            cuts,
            cache_bytes,
            in_flight,
            body_memory,
        }
    }

    /// Counts a connection the server closed before its client did.
    pub fn connection_cut(&self, reason: CutReason) {
        self.cuts.get_or_create(&Reason { reason }).inc();
    }

    /// Counts one finished request of `route` (the matched path template).
    pub fn record_request(&self, route: &str, status: u16, elapsed: Duration, bytes_out: u64) {
        self.requests
            .get_or_create(&RouteStatus {
                route: route.to_string(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&Route {
                route: route.to_string(),
            })
            .observe(elapsed.as_secs_f64());
        self.bytes_out.inc_by(bytes_out);
    }

    /// The text exposition; `in_flight`, `cache_bytes` and `body_memory` are read from
    /// their owners.
    pub fn render(&self, in_flight: u64, cache_bytes: u64, body_memory: u64) -> String {
        self.in_flight.set(in_flight);
        self.cache_bytes.set(cache_bytes);
        self.body_memory.set(body_memory);
        let mut s = String::new();
        prometheus_text::encode(&mut s, &self.registry).expect("writing to a String cannot fail");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_documented_names_with_labels() {
        let m = Metrics::new();
        m.record_request("/v1/convert", 200, Duration::from_millis(3), 10);
        m.record_request("/v1/convert", 200, Duration::from_secs(60), 5);
        m.record_request("a\"b", 404, Duration::from_millis(1), 0);
        m.cache_hits.inc();
        m.connection_cut(CutReason::HeaderTimeout);
        m.connections_open.inc();
        let text = m.render(2, 1234, 77);
        for line in [
            "pexe2wasm_http_requests_total{route=\"/v1/convert\",status=\"200\"} 2",
            "pexe2wasm_http_requests_total{route=\"a\\\"b\",status=\"404\"} 1",
            "pexe2wasm_http_request_duration_seconds_bucket{route=\"/v1/convert\",le=\"0.005\"} 1",
            "pexe2wasm_http_request_duration_seconds_bucket{route=\"/v1/convert\",le=\"30\"} 1",
            "pexe2wasm_http_request_duration_seconds_bucket{route=\"/v1/convert\",le=\"+Inf\"} 2",
            "pexe2wasm_http_request_duration_seconds_count{route=\"/v1/convert\"} 2",
            "pexe2wasm_response_bytes_total 15",
            "pexe2wasm_cache_hits_total 1",
            "pexe2wasm_cache_bytes 1234",
            "pexe2wasm_conversions_in_flight 2",
            "pexe2wasm_body_memory_bytes 77",
            "pexe2wasm_connections_open 1",
            "pexe2wasm_connections_cut_total{reason=\"header_timeout\"} 1",
            "pexe2wasm_body_memory_rejections_total 0",
            "# TYPE pexe2wasm_conversion_timeouts_total counter",
            "# TYPE pexe2wasm_http_request_duration_seconds histogram",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
        }
    }
}
