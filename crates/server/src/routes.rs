//! The router and its handlers.

use crate::cache::{Cache, CacheKey, Cached};
use crate::config::Config;
use crate::metrics::Metrics;
use crate::pool::{Pool, PoolError};
use crate::problem::Problem;
use crate::upload::{extract_pexe, read_body, upload_kind};
use axum::body::{Body, HttpBody};
use axum::extract::{MatchedPath, RawQuery, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use pexe2wasm::convert::{convert_module, ConvertError, ConvertOptions, Threads};
use pexe2wasm::emit::EmitError;
use pexe2wasm::lower::LowerError;
use sha2::{Digest, Sha256};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use tracing::Level;

/// Shared by every request.
pub struct AppState {
    pub config: Config,
    pub pool: Pool,
    pub cache: Cache,
    pub metrics: Metrics,
}

impl AppState {
    pub fn new(config: Config) -> Arc<AppState> {
        Arc::new(AppState {
            pool: Pool::new(
                config.workers(),
                config.queue_depth,
                config.convert_timeout(),
            ),
            cache: Cache::new(config.cache_bytes),
            metrics: Metrics::default(),
            config,
        })
    }
}

const PAGE: &str = include_str!("page.html");

/// The whole service.
pub fn app(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(|| async { Html(PAGE) }))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics_text))
        .route(
            "/openapi.json",
            get(|| async { Json(crate::openapi::document()) }),
        )
        .route("/v1/convert", post(convert_handler))
        .route("/v1/inspect", post(inspect_handler))
        .fallback(|| async {
            Problem::new(
                StatusCode::NOT_FOUND,
                "not-found",
                "Not found",
                "no such endpoint; see /openapi.json",
            )
        })
        .method_not_allowed_fallback(|| async {
            Problem::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "Method not allowed",
                "this endpoint does not take that method; see /openapi.json",
            )
        })
        .layer(middleware::from_fn_with_state(
            state.clone(),
            record_metrics,
        ))
        .layer(
            // One span per request (method, URI) at INFO; 5xx answers (503 and 504 included) log at WARN: they
            // are load the service sheds, not faults of the service.
            tower_http::trace::TraceLayer::new_for_http()
                .make_span_with(tower_http::trace::DefaultMakeSpan::new().level(Level::INFO))
                .on_response(tower_http::trace::DefaultOnResponse::new().level(Level::INFO))
                .on_failure(tower_http::trace::DefaultOnFailure::new().level(Level::WARN)),
        )
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
        .with_state(state)
}

/// Counts every request by route and status, its latency and its response bytes.
async fn record_metrics(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let start = Instant::now();
    let response = next.run(req).await;
    let bytes_out = response.body().size_hint().exact().unwrap_or(0);
    state.metrics.record_request(
        &route,
        response.status().as_u16(),
        start.elapsed(),
        bytes_out,
    );
    response
}

async fn healthz(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "status": "ok",
        "conversions_in_flight": state.pool.in_flight(),
    }))
}

async fn metrics_text(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state
            .metrics
            .render(state.pool.in_flight(), state.cache.used_bytes()),
    )
}

/// Reads the pexe of a `/v1/*` request (415, 413, 408, 400 on the way).
async fn read_pexe(state: &AppState, headers: &HeaderMap, body: Body) -> Result<Bytes, Problem> {
    let kind = upload_kind(headers)?;
    let raw = read_body(
        headers,
        body,
        state.config.max_body_bytes,
        state.config.body_timeout(),
    )
    .await?;
    state
        .metrics
        .bytes_in
        .fetch_add(raw.len() as u64, Ordering::Relaxed);
    let pexe = extract_pexe(&kind, raw).await?;
    if pexe.is_empty() {
        return Err(Problem::bad_request("the pexe is empty"));
    }
    Ok(pexe)
}

/// Output format of `/v1/convert`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Wasm,
    Wat,
}

#[derive(Debug, Clone, Copy)]
struct ConvertQuery {
    format: Format,
    threads: Threads,
}

/// `threads=` as the query spells it (and as the cache key records it).
fn threads_name(t: Threads) -> &'static str {
    match t {
        Threads::Auto => "auto",
        Threads::On => "on",
        Threads::Off => "off",
    }
}

fn parse_query(q: Option<&str>) -> Result<ConvertQuery, Problem> {
    let mut out = ConvertQuery {
        format: Format::Wasm,
        threads: Threads::Auto,
    };
    for pair in q.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match (k, v) {
            ("format", "wasm") => out.format = Format::Wasm,
            ("format", "wat") => out.format = Format::Wat,
            ("threads", "auto") => out.threads = Threads::Auto,
            ("threads", "on" | "true" | "1") => out.threads = Threads::On,
            ("threads", "off" | "false" | "0") => out.threads = Threads::Off,
            _ => {
                return Err(Problem::bad_request(format!(
                    "unknown query parameter {pair:?} (format=wasm|wat, threads=auto|on|off)"
                )))
            }
        }
    }
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A conversion error as a problem, with the decoder's position when it has one.
fn convert_problem(e: &ConvertError) -> Problem {
    let (status, kind, title) = match e {
        ConvertError::Decode(_)
        | ConvertError::Verify(_)
        | ConvertError::NotRunnable(_)
        | ConvertError::Lower(LowerError::Invalid { .. }) => {
            (StatusCode::BAD_REQUEST, "bad-pexe", "Invalid pexe")
        }
        ConvertError::Lower(LowerError::Unsupported { .. })
        | ConvertError::Emit(EmitError::Layout(_) | EmitError::Link(_)) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsupported",
            "The pexe uses something the converter does not support",
        ),
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Internal converter error",
        ),
    };
    Problem::new(status, kind, title, e.to_string()).with_position(e.position())
}

fn pool_problem(state: &AppState, e: PoolError) -> Problem {
    match e {
        PoolError::QueueFull => {
            state
                .metrics
                .queue_rejections
                .fetch_add(1, Ordering::Relaxed);
            Problem::queue_full()
        }
        PoolError::TimedOut(limit) => {
            state.metrics.timeouts.fetch_add(1, Ordering::Relaxed);
            Problem::new(
                StatusCode::GATEWAY_TIMEOUT,
                "timeout",
                "Conversion timed out",
                format!(
                    "the job exceeded its time limit of {} ms",
                    limit.as_millis()
                ),
            )
        }
        PoolError::Panicked => Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Internal converter error",
            "the job panicked",
        ),
    }
}

async fn convert_handler(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Problem> {
    let q = parse_query(query.as_deref())?;
    let pexe = read_pexe(&state, &headers, body).await?;
    let sha: [u8; 32] = Sha256::digest(&pexe).into();
    let key = CacheKey {
        sha256: sha,
        options: format!(
            "format={};threads={}",
            if q.format == Format::Wat {
                "wat"
            } else {
                "wasm"
            },
            threads_name(q.threads)
        ),
    };
    if let Some(hit) = state.cache.get(&key) {
        state.metrics.cache_hits.fetch_add(1, Ordering::Relaxed);
        return Ok(converted_response(&hit, &sha, true));
    }
    state.metrics.cache_misses.fetch_add(1, Ordering::Relaxed);
    let result = state
        .pool
        .run(move || -> Result<Cached, Problem> {
            let start = Instant::now();
            let opts = ConvertOptions {
                threads: q.threads,
                ..ConvertOptions::default()
            };
            // Decoded once: what the output needs comes from the module too.
            let module = pexe2wasm::decode::decode(&pexe)
                .map_err(|e| convert_problem(&ConvertError::Decode(e)))?;
            let needs = pexe2wasm::needs::needs_of_module(&module);
            let c = convert_module(module, pexe.len(), &opts).map_err(|e| convert_problem(&e))?;
            let needs = needs.for_output(c.features.threads);
            let (body, content_type) = match q.format {
                Format::Wasm => (Bytes::from(c.wasm), "application/wasm"),
                Format::Wat => {
                    let text = wasmprinter::print_bytes(&c.wasm).map_err(|e| {
                        Problem::new(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            "internal",
                            "Internal converter error",
                            format!("cannot print the module as text: {e}"),
                        )
                    })?;
                    (Bytes::from(text), "text/plain; charset=utf-8")
                }
            };
            Ok(Cached {
                body,
                content_type,
                features: c.features.names(),
                imports: c.imports,
                needs,
                convert_micros: start.elapsed().as_micros() as u64,
            })
        })
        .await
        .map_err(|e| pool_problem(&state, e))?;
    let converted = Arc::new(result.inspect_err(|p| {
        tracing::info!(status = p.status, detail = %p.detail, "conversion refused");
    })?);
    state.cache.insert(key, converted.clone());
    Ok(converted_response(&converted, &sha, false))
}

/// The response headers that describe a conversion.
pub const H_SHA256: &str = "x-pexe-sha256";
pub const H_CONVERT_MS: &str = "x-conversion-time-ms";
pub const H_FEATURES: &str = "x-wasm-features";
pub const H_IMPORTS: &str = "x-wasm-imports";
pub const H_IMPORT_MODULES: &str = "x-wasm-import-modules";
pub const H_CACHE: &str = "x-cache";
/// What the module needs to run: `wasi` (any WASI runtime), `runner` (`pexe2wasm run`:
/// threads) or `pepper` (a Pepper host; none exists yet); `none` without `_start`.
pub const H_NEEDS: &str = "x-pexe-needs";
/// The same in one sentence.
pub const H_NEEDS_DETAIL: &str = "x-pexe-needs-detail";

fn converted_response(c: &Cached, sha: &[u8; 32], hit: bool) -> Response {
    let ms = c.convert_micros as f64 / 1000.0;
    let mut modules: Vec<&str> = c.imports.iter().map(|(m, _)| m.as_str()).collect();
    modules.sort_unstable();
    modules.dedup();
    let imports: Vec<String> = c.imports.iter().map(|(m, n)| format!("{m}/{n}")).collect();
    let mut r = (
        [(header::CONTENT_TYPE, c.content_type)],
        Body::from(c.body.clone()),
    )
        .into_response();
    let h = r.headers_mut();
    let mut set = |name: &'static str, value: String| {
        // Import names are the module's own text: drop a value HTTP cannot carry.
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(HeaderName::from_static(name), v);
        }
    };
    set(H_SHA256, hex(sha));
    set(H_CONVERT_MS, format!("{ms:.3}"));
    set("server-timing", format!("convert;dur={ms:.3}"));
    set(H_FEATURES, c.features.join(", "));
    set(H_IMPORTS, imports.join(", "));
    set(H_IMPORT_MODULES, modules.join(", "));
    set(H_CACHE, if hit { "hit" } else { "miss" }.to_string());
    let host = serde_json::to_value(c.needs.host)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_else(|| "none".to_string());
    set(H_NEEDS, host);
    set(H_NEEDS_DETAIL, c.needs.summary.clone());
    r
}

async fn inspect_handler(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Problem> {
    let pexe = read_pexe(&state, &headers, body).await?;
    let sha: [u8; 32] = Sha256::digest(&pexe).into();
    let info = state
        .pool
        .run(move || pexe2wasm::info::info(&pexe))
        .await
        .map_err(|e| pool_problem(&state, e))?
        .map_err(|e| convert_problem(&ConvertError::Decode(e)))?;
    let mut r = Json(info).into_response();
    r.headers_mut().insert(
        HeaderName::from_static(H_SHA256),
        HeaderValue::from_str(&hex(&sha)).expect("hex is a valid header value"),
    );
    Ok(r)
}
