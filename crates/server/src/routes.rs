//! The router and its handlers.

use crate::budget::{BodyBudget, Reservation};
use crate::cache::{Cache, CacheKey, Cached};
use crate::config::Config;
use crate::metrics::Metrics;
use crate::openapi::{
    Binary, ConvertQuery, Format, Health, HealthStatus, Info, ThreadsParam, UploadForm,
};
use crate::pool::{Pool, PoolError};
use crate::problem::{Problem, PROBLEM_JSON};
use crate::sites::{SiteFiles, SiteStore};
use crate::upload::{extract_pexe, read_body, site_upload_kind, upload_kind, UploadKind};
use axum::body::{Body, HttpBody};
use axum::extract::{MatchedPath, Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use pexe2wasm::convert::{convert_module, ConvertError, ConvertOptions, Locals, Threads};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Instant;
use tower::ServiceBuilder;
use tower_http::limit::{RequestBodyLimitLayer, ResponseBody};
use tracing::Level;

/// Shared by every request.
pub struct AppState {
    pub config: Config,
    pub pool: Pool,
    pub cache: Cache,
    pub metrics: Metrics,
    /// Request-body bytes held in memory, all requests together (`--max-body-memory`).
    pub budget: Arc<BodyBudget>,
    /// The sites `/v1/site` built, for `/sites/{sha}/…`.
    pub sites: SiteStore,
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
            budget: BodyBudget::new(config.max_body_memory),
            sites: SiteStore::new(SITE_STORE_BYTES),
            config,
        })
    }
}

const PAGE: &str = include_str!("page.html");

/// The whole service. The middleware, outermost first:
///
/// 1. `CatchPanicLayer`: a panic anywhere below becomes a 500, not a dropped connection.
/// 2. `TraceLayer`: one span per request.
/// 3. `record_metrics`: requests by route and status, latency, response bytes.
/// 4. Per route group: `/v1/*` uploads get `RequestBodyLimitLayer` (413 on a declared
///    `Content-Length` over the limit before the handler runs, and while streaming),
///    its bare 413 turned into a problem by `too_large_problem`.
///
/// Connection hygiene (header-read and idle timeouts, the connection cap, shutdown) is the
/// accept loop's (`serve.rs`); the global body-memory budget is charged by the `/v1`
/// handlers before they read a body (`read_pexe`), so its 503s are counted and traced
/// like any answer.
pub fn app(state: Arc<AppState>) -> Router {
    let limit = state.config.max_body_bytes;
    let uploads =
        Router::new()
            .route("/v1/convert", post(convert_handler))
            .route("/v1/inspect", post(inspect_handler))
            .route("/v1/site", post(site_handler))
            .layer(
                ServiceBuilder::new()
                    .layer(middleware::map_response(
                        move |r: Response<ResponseBody<Body>>| async move {
                            too_large_problem(r, limit)
                        },
                    ))
                    .layer(RequestBodyLimitLayer::new(limit)),
            );
    Router::new()
        .route("/", get(page))
        .route("/pexe2wasm/{*path}", get(host_file))
        .route("/sites/{sha}/{*path}", get(site_file))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics_text))
        .route("/openapi.json", get(openapi_json))
        .merge(uploads)
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
        .layer(
            ServiceBuilder::new()
                .layer(tower_http::catch_panic::CatchPanicLayer::new())
                .layer(
                    // One span per request (method, URI) at INFO; 5xx answers (503 and 504
                    // included) log at WARN: they are load the service sheds, not faults.
                    tower_http::trace::TraceLayer::new_for_http()
                        .make_span_with(
                            tower_http::trace::DefaultMakeSpan::new().level(Level::INFO),
                        )
                        .on_response(tower_http::trace::DefaultOnResponse::new().level(Level::INFO))
                        .on_failure(tower_http::trace::DefaultOnFailure::new().level(Level::WARN)),
                )
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    record_metrics,
                )),
        )
        .with_state(state)
}

/// `RequestBodyLimitLayer` refuses a declared `Content-Length` over the limit with a bare
/// 413; the service answers every error as a problem.
fn too_large_problem(r: Response<ResponseBody<Body>>, limit: usize) -> Response {
    let is_problem = r
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == PROBLEM_JSON.as_bytes());
    if r.status() == StatusCode::PAYLOAD_TOO_LARGE && !is_problem {
        Problem::too_large(limit).into_response()
    } else {
        r.map(Body::new)
    }
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

#[utoipa::path(
    get,
    path = "/",
    operation_id = "page",
    tag = "service",
    summary = "The upload page: drop a pexe, see its facts, download the wasm.",
    responses((status = 200, description = "An HTML page.", body = String, content_type = "text/html"))
)]
pub(crate) async fn page() -> Response {
    isolated(Html(PAGE).into_response())
}

/// The page and the browser host it runs apps with are cross-origin isolated: module
/// threads need SharedArrayBuffer (docs/JS-HOST.md). Everything they load is same-origin
/// (the host's files, and blob: URLs of the converted module).
fn isolated(mut r: Response) -> Response {
    let h = r.headers_mut();
    for (name, value) in [
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-embedder-policy", "require-corp"),
        ("cross-origin-resource-policy", "same-origin"),
    ] {
        h.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    r
}

#[utoipa::path(
    get,
    path = "/pexe2wasm/{path}",
    operation_id = "host_file",
    tag = "service",
    summary = "The browser Pepper host's files (web/src), which the page's Run button runs apps with.",
    params(("path" = String, Path, description = "A file of the host, e.g. embed.js or host/instance-worker.js.")),
    responses(
        (status = 200, description = "A JavaScript module.", body = String, content_type = "text/javascript"),
        (status = 404, description = "No such file in the host.", body = Problem, content_type = "application/problem+json")
    )
)]
pub(crate) async fn host_file(Path(path): Path<String>) -> Response {
    match pexe2wasm_webhost::file(&path) {
        Some(text) => isolated(
            (
                [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                text,
            )
                .into_response(),
        ),
        None => Problem::new(
            StatusCode::NOT_FOUND,
            "not-found",
            "Not found",
            "no such file in the browser host",
        )
        .into_response(),
    }
}

#[utoipa::path(
    get,
    path = "/healthz",
    operation_id = "healthz",
    tag = "service",
    summary = "Liveness: answers while the server runs, even when every worker is busy.",
    responses((status = 200, description = "The server is up.", body = Health))
)]
pub(crate) async fn healthz(State(state): State<Arc<AppState>>) -> Json<Health> {
    Json(Health {
        status: HealthStatus::Ok,
        conversions_in_flight: state.pool.in_flight(),
    })
}

#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "service",
    summary = "Prometheus metrics (text exposition format 0.0.4).",
    responses((status = 200, description = "The metrics.", body = String, content_type = "text/plain"))
)]
pub(crate) async fn metrics_text(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
        state.metrics.render(
            state.pool.in_flight(),
            state.cache.used_bytes(),
            state.budget.used() as u64,
        ),
    )
}

#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "openapi",
    tag = "service",
    summary = "This document.",
    responses((status = 200, description = "OpenAPI description of the API.", body = Object))
)]
pub(crate) async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(crate::openapi::document())
}

/// Reads the pexe of a `/v1/*` request (415, 503, 413, 408, 400 on the way), with the
/// charge to the body-memory budget that the caller keeps as long as it keeps the bytes.
/// The declared length is charged before a byte of the body is read, so a request the
/// budget cannot hold is refused at once.
async fn read_pexe(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Bytes, Reservation), Problem> {
    let kind = upload_kind(headers)?;
    let (pexe, reservation) = read_upload(state, kind, body).await?;
    if pexe.is_empty() {
        return Err(Problem::bad_request("the pexe is empty"));
    }
    Ok((pexe, reservation))
}

/// The uploaded file of a body of `kind` (raw, or a multipart form's file field), charged
/// to the body-memory budget as [`read_pexe`] says.
async fn read_upload(
    state: &AppState,
    kind: UploadKind,
    body: Body,
) -> Result<(Bytes, Reservation), Problem> {
    let declared = body
        .size_hint()
        .exact()
        .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let mut reservation = state.budget.try_reserve(declared).map_err(|e| {
        state.metrics.body_memory_rejections.inc();
        tracing::info!(%e, "upload refused");
        Problem::body_memory_full(e.limit)
    })?;
    let raw = read_body(
        body,
        state.config.max_body_bytes,
        state.config.body_timeout(),
        &mut reservation,
    )
    .await
    .inspect_err(|p| {
        if p.status == StatusCode::SERVICE_UNAVAILABLE.as_u16() {
            state.metrics.body_memory_rejections.inc();
        }
    })?;
    state.metrics.bytes_in.inc_by(raw.len() as u64);
    let file = extract_pexe(&kind, raw).await?;
    Ok((file, reservation))
}

/// `threads=` as the library takes it and the cache key records it.
fn threads_of(t: ThreadsParam) -> (Threads, &'static str) {
    match t {
        ThreadsParam::Auto => (Threads::Auto, "auto"),
        ThreadsParam::On => (Threads::On, "on"),
        ThreadsParam::Off => (Threads::Off, "off"),
    }
}

/// The query of `/v1/convert`, percent-decoded by `serde_urlencoded` (400 when unknown).
fn parse_query(uri: &Uri) -> Result<ConvertQuery, Problem> {
    Query::<ConvertQuery>::try_from_uri(uri)
        .map(|Query(q)| q)
        .map_err(|e| {
            Problem::bad_request(format!(
                "bad query {:?}: {} (format=wasm|wat, threads=auto|on|off, small_code=true|false)",
                uri.query().unwrap_or(""),
                e.body_text()
            ))
        })
}

fn pool_problem(state: &AppState, e: PoolError) -> Problem {
    match e {
        PoolError::QueueFull => {
            state.metrics.queue_rejections.inc();
            Problem::queue_full()
        }
        PoolError::TimedOut(limit) => {
            state.metrics.timeouts.inc();
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

#[utoipa::path(
    post,
    path = "/v1/convert",
    operation_id = "convert",
    tag = "pexe",
    summary = "Convert a pexe to a wasm module (or its text).",
    params(ConvertQuery),
    request_body(
        description = "The pexe: the raw bytes, or a multipart form whose file field (named `file`) holds it.",
        content(
            (inline(Binary) = "application/octet-stream"),
            (UploadForm = "multipart/form-data"),
        ),
    ),
    responses((status = 200, description = "The converted module.",
        content((inline(Binary) = "application/wasm"), (String = "text/plain")),
        headers(
            ("X-Pexe-SHA256" = String, description = "SHA-256 of the pexe, hex."),
            ("X-Conversion-Time-Ms" = String, description = "How long the conversion took, in milliseconds (of the original conversion on a cache hit)."),
            ("Server-Timing" = String, description = "The same time as `convert;dur=MS`."),
            ("X-Wasm-Features" = String, description = "wasm features the module uses beyond MVP, comma-separated (e.g. simd, threads, exceptions)."),
            ("X-Wasm-Imports" = String, description = "The module's imports as module/name, comma-separated."),
            ("X-Wasm-Import-Modules" = String, description = "The host interfaces (import modules) the module needs, comma-separated."),
            ("X-Pexe-Needs" = String, description = "What the output needs to run: wasi (any WASI runtime), runner (`pexe2wasm run`: threads), pepper (a Pepper plugin the command-line host of `pexe2wasm run` runs) or browser (a Pepper plugin using interfaces only a browser backs)."),
            ("X-Pexe-Needs-Detail" = String, description = "The same in one line for people, naming the interface that decided it."),
            ("X-Cache" = String, description = "hit or miss in the result cache."),
        ),
    )),
)]
pub(crate) async fn convert_handler(
    State(state): State<Arc<AppState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Problem> {
    let q = parse_query(&uri)?;
    let (threads, threads_name) = threads_of(q.threads);
    let (pexe, reservation) = read_pexe(&state, &headers, body).await?;
    let digest = Sha256::digest(&pexe);
    let sha = format!("{digest:x}");
    let key = CacheKey {
        sha256: digest.into(),
        options: format!(
            "format={};threads={};small_code={}",
            if q.format == Format::Wat {
                "wat"
            } else {
                "wasm"
            },
            threads_name,
            q.small_code
        ),
    };
    if let Some(hit) = state.cache.get(&key) {
        state.metrics.cache_hits.inc();
        return Ok(converted_response(&hit, &sha, true));
    }
    state.metrics.cache_misses.inc();
    let result = state
        .pool
        .run(move || -> Result<Cached, Problem> {
            // The pexe's bytes stay charged to the budget until the job drops them.
            let _reservation = reservation;
            let start = Instant::now();
            let opts = ConvertOptions {
                threads,
                locals: Locals::for_small_code(q.small_code),
                ..ConvertOptions::default()
            };
            let (wasm, features, imports, needs) = match translate_nexe(&pexe)? {
                Some(t) => t,
                None => {
                    let (c, needs) =
                        convert_with_needs(&pexe, &opts).map_err(|e| Problem::conversion(&e))?;
                    (c.wasm, c.features.names(), c.imports, needs)
                }
            };
            let (body, content_type) = match q.format {
                Format::Wasm => (Bytes::from(wasm), "application/wasm"),
                Format::Wat => {
                    let text = wasmprinter::print_bytes(&wasm).map_err(|e| {
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
                features,
                imports,
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

/// A translated nexe: its module, the wasm features and imports, what it needs to run.
type TranslatedNexe = (
    Vec<u8>,
    Vec<&'static str>,
    Vec<(String, String)>,
    pexe2wasm::needs::Needs,
);

/// When `data` is a static x86-64 nexe the translator's runtime runs (a command-line
/// program, a Pepper plugin, PNaCl's compiler), its module as `pexe2wasm convert` makes it
/// (docs/NEXE.md); `None` for anything else (the decoder names other nexes: 422
/// unsupported).
fn translate_nexe(data: &[u8]) -> Result<Option<TranslatedNexe>, Problem> {
    use pexe2wasm_nexe::x86_64::lift::{translatable, translate_program};
    let Some(nexe) = translatable(data) else {
        return Ok(None);
    };
    let p = translate_program(&nexe).map_err(|e| {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsupported",
            "The pexe uses something the converter does not support",
            e.to_string(),
        )
    })?;
    let mut imports = Vec::new();
    let mut threads = false;
    for payload in wasmparser::Parser::new(0).parse_all(&p.wasm) {
        if let Ok(wasmparser::Payload::ImportSection(r)) = payload {
            for imp in r.into_imports().flatten() {
                match imp.ty {
                    wasmparser::TypeRef::Func(_) => {
                        imports.push((imp.module.to_string(), imp.name.to_string()))
                    }
                    wasmparser::TypeRef::Memory(m) => threads |= m.shared,
                    _ => {}
                }
            }
        }
    }
    // What the translator's modules use: SIMD for the XMM registers, tail calls for the
    // returns through the table, bulk memory in the runtime; threads when the memory is
    // shared.
    let mut features = vec![
        "mutable-globals",
        "bulk-memory",
        "sign-ext",
        "nontrapping-fptoint",
        "simd",
        "tail-call",
    ];
    if threads {
        features.push("threads");
    }
    let info = &nexe.info;
    let needs = pexe2wasm::needs::needs(&info.irt_interfaces, &info.ppb_interfaces, true)
        .for_output(threads);
    Ok(Some((p.wasm, features, imports, needs)))
}

/// `pexe` converted with `opts`, and what the output needs to run, from one decode.
fn convert_with_needs(
    pexe: &[u8],
    opts: &ConvertOptions,
) -> Result<(pexe2wasm::convert::Converted, pexe2wasm::needs::Needs), ConvertError> {
    let module = pexe2wasm::decode::decode(pexe).map_err(ConvertError::Decode)?;
    let needs = pexe2wasm::needs::needs_of_module(&module);
    let c = convert_module(module, pexe.len(), opts)?;
    let needs = needs.for_output(c.features.threads);
    Ok((c, needs))
}

/// The response headers that describe a conversion.
pub const H_SHA256: &str = "x-pexe-sha256";
pub const H_CONVERT_MS: &str = "x-conversion-time-ms";
pub const H_FEATURES: &str = "x-wasm-features";
pub const H_IMPORTS: &str = "x-wasm-imports";
pub const H_IMPORT_MODULES: &str = "x-wasm-import-modules";
pub const H_CACHE: &str = "x-cache";
/// What the module needs to run: `wasi` (any WASI runtime), `runner` (`pexe2wasm run`:
/// threads), `pepper` (a Pepper plugin `pexe2wasm run` runs) or `browser` (a Pepper plugin
/// using interfaces only a browser backs); `none` without `_start`.
pub const H_NEEDS: &str = "x-pexe-needs";
/// The same in one sentence.
pub const H_NEEDS_DETAIL: &str = "x-pexe-needs-detail";

fn converted_response(c: &Cached, sha: &str, hit: bool) -> Response {
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
    set(H_SHA256, sha.to_string());
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

#[utoipa::path(
    post,
    path = "/v1/inspect",
    operation_id = "inspect",
    tag = "pexe",
    summary = "Facts about a pexe (sizes, counts, intrinsics, interfaces).",
    request_body(
        description = "The pexe: the raw bytes, or a multipart form whose file field (named `file`) holds it.",
        content(
            (inline(Binary) = "application/octet-stream"),
            (UploadForm = "multipart/form-data"),
        ),
    ),
    responses((status = 200, description = "Facts about the pexe: the same JSON as `pexe2wasm info --json`.",
        body = Info,
        headers(("X-Pexe-SHA256" = String, description = "SHA-256 of the pexe, hex.")),
    )),
)]
pub(crate) async fn inspect_handler(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Problem> {
    let (pexe, reservation) = read_pexe(&state, &headers, body).await?;
    let sha = format!("{:x}", Sha256::digest(&pexe));
    let info = state
        .pool
        .run(move || {
            let _reservation = reservation;
            pexe2wasm::info::info(&pexe)
        })
        .await
        .map_err(|e| pool_problem(&state, e))?
        .map_err(|e| Problem::conversion(&ConvertError::Decode(e)))?;
    let mut r = Json(info).into_response();
    r.headers_mut().insert(
        HeaderName::from_static(H_SHA256),
        HeaderValue::from_str(&sha).expect("hex is a valid header value"),
    );
    Ok(r)
}

/// How much one uploaded package may unpack to in memory (the body limit bounds the
/// upload itself).
const SITE_UNPACKED_BYTES: u64 = 256 << 20;

#[utoipa::path(
    post,
    path = "/v1/site",
    operation_id = "site",
    tag = "site",
    summary = "A Chrome app, extension or site package (.crx v2/v3 or .zip) made into a static site, as `pexe2wasm web` makes it: a zip of the site.",
    request_body(
        description = "The package: the raw bytes (application/zip, application/x-chrome-extension or application/octet-stream), or a multipart form whose file field (named `file`) holds it.",
        content(
            (inline(Binary) = "application/zip"),
            (UploadForm = "multipart/form-data"),
        ),
    ),
    responses((status = 200, description = "A zip of the site: every file of the package at its path, a module beside each pexe, the host's scripts in every page, a launcher for a Chrome app, and `pexe2wasm-site.json` (what was found and whether it runs). A pexe that does not convert does not fail the request: the report and the headers say so.",
        content((inline(Binary) = "application/zip")),
        headers(
            ("X-Site-Runs" = String, description = "true when every module converted (and the package is not native-only)."),
            ("X-Site-Summary" = String, description = "Whether and how it runs, in one line."),
            ("X-Site-Start" = String, description = "The page to open, inside the zip."),
            ("X-Site-Url" = String, description = "Where this service serves the site's start page for a while (`/sites/{sha}/…`), to run it."),
        ),
    )),
)]
pub(crate) async fn site_handler(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Problem> {
    let kind = site_upload_kind(&headers)?;
    let (package, reservation) = read_upload(&state, kind, body).await?;
    let sha = format!("{:x}", Sha256::digest(&package));
    let result = state
        .pool
        .run(
            move || -> Result<(Vec<u8>, pexe2wasm_site::Report, SiteFiles), Problem> {
                let _reservation = reservation;
                let limits = pexe2wasm_site::Limits {
                    max_total: SITE_UNPACKED_BYTES,
                    ..pexe2wasm_site::Limits::default()
                };
                let input = pexe2wasm_site::open_archive(&package, "the package", &limits)
                    .map_err(site_problem)?;
                let convert = |pexe: &[u8]| -> Result<pexe2wasm_site::Module, String> {
                    let (c, needs) = convert_with_needs(pexe, &ConvertOptions::default())
                        .map_err(|e| e.to_string())?;
                    Ok(pexe2wasm_site::Module {
                        wasm: c.wasm,
                        plugin: matches!(
                            needs.host,
                            Some(pexe2wasm::needs::Host::Pepper | pexe2wasm::needs::Host::Browser)
                        ),
                        needs: needs.summary,
                    })
                };
                let site =
                    pexe2wasm_site::build(&input, &pexe2wasm_site::Options::default(), &convert)
                        .map_err(site_problem)?;
                let zip = pexe2wasm_site::to_zip(&site).map_err(site_problem)?;
                let mut files = std::collections::HashMap::new();
                for (p, c) in &site.files {
                    let b = c.read().map_err(site_problem)?;
                    files.insert(p.to_string(), Bytes::copy_from_slice(&b));
                }
                Ok((zip, site.report, SiteFiles::new(files)))
            },
        )
        .await
        .map_err(|e| pool_problem(&state, e))??;
    let (zip, report, files) = result;
    state.sites.insert(sha.clone(), files);
    let mut r = ([(header::CONTENT_TYPE, "application/zip")], Body::from(zip)).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"site.zip\""),
    );
    let mut set = |name: &'static str, value: String| {
        // The summary quotes the package's own text: drop what HTTP cannot carry.
        let value: String = value
            .chars()
            .filter(|c| *c == ' ' || c.is_ascii_graphic())
            .collect();
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(HeaderName::from_static(name), v);
        }
    };
    set("x-site-runs", report.runs.to_string());
    set("x-site-summary", report.summary.clone());
    set("x-site-start", report.start.to_string());
    set("x-site-url", format!("/sites/{sha}/{}", report.start));
    Ok(r)
}

/// What the site store keeps at most, all sites together.
const SITE_STORE_BYTES: usize = 256 << 20;

#[utoipa::path(
    get,
    path = "/sites/{sha}/{path}",
    operation_id = "site_file",
    tag = "site",
    summary = "A file of a site `POST /v1/site` built (X-Site-Url names its start page), served cross-origin isolated so that its NaCl modules run: the upload page's Run.",
    params(
        ("sha" = String, Path, description = "SHA-256 of the uploaded package, hex."),
        ("path" = String, Path, description = "The file's path in the site."),
    ),
    responses(
        (status = 200, description = "The file, with a Content-Type by its extension."),
        (status = 404, description = "No such site (never built, or evicted: upload it again) or no such file in it.", body = Problem, content_type = "application/problem+json")
    )
)]
pub(crate) async fn site_file(
    State(state): State<Arc<AppState>>,
    Path((sha, path)): Path<(String, String)>,
) -> Response {
    let file = state
        .sites
        .get(&sha)
        .and_then(|s| s.files.get(&path).cloned());
    match file {
        Some(bytes) => {
            let mut r = isolated(
                (
                    [(header::CONTENT_TYPE, crate::sites::content_type(&path))],
                    Body::from(bytes),
                )
                    .into_response(),
            );
            r.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            r
        }
        None => Problem::new(
            StatusCode::NOT_FOUND,
            "not-found",
            "Not found",
            "no such site or file (a site is kept for a while after its upload; upload the package again)",
        )
        .into_response(),
    }
}

/// A package the site writer refuses: 400 with the entry named; anything else is ours.
fn site_problem(e: pexe2wasm_site::SiteError) -> Problem {
    use pexe2wasm_site::SiteError;
    match e {
        SiteError::Archive(_)
        | SiteError::BadName { .. }
        | SiteError::TooManyFiles { .. }
        | SiteError::BadManifest { .. }
        | SiteError::HostNameTaken(_) => Problem::new(
            StatusCode::BAD_REQUEST,
            "bad-package",
            "Invalid package",
            e.to_string(),
        ),
        other => Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Internal error",
            other.to_string(),
        ),
    }
}
