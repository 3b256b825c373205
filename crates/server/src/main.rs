//! pexe2wasm-server: binds the service, prints its address and serves until SIGTERM or
//! ctrl-c, then stops accepting, closes idle connections and finishes the requests in
//! flight within the shutdown grace period (`pexe2wasm_server::serve`).

use anyhow::Context;
use clap::Parser;
use pexe2wasm_server::config::{Config, LogFormat};
use pexe2wasm_server::serve::{bind, connection_cap, serve as serve_connections, Limits};
use pexe2wasm_server::AppState;
use std::io::Write;
use tracing_subscriber::EnvFilter;

fn main() -> anyhow::Result<()> {
    // Before the runtime's threads start: conversions reuse freed memory instead of
    // page-faulting it in again (pexe2wasm's src/malloc.rs).
    let malloc = pexe2wasm::malloc::tune_for_conversion();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(serve(malloc));
    // A conversion whose request was cut at the end of the grace period may still run on
    // a blocking thread: the process does not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    result
}

async fn serve(malloc: pexe2wasm::malloc::Tuning) -> anyhow::Result<()> {
    let config = Config::parse();
    config.check()?;
    let filter = EnvFilter::try_from_env("PEXE2WASM_LOG")
        .unwrap_or_else(|_| EnvFilter::new("info,tower_http=info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match config.log_format {
        LogFormat::Json => logs.json().init(),
        LogFormat::Text => logs.init(),
    }
    let listener =
        bind(config.listen).with_context(|| format!("cannot listen on {}", config.listen))?;
    let addr = listener.local_addr()?;
    let cap = connection_cap(config.max_connections)?;
    if cap.cap < cap.wanted {
        tracing::warn!(
            wanted = cap.wanted,
            cap = cap.cap,
            nofile = cap.nofile,
            "--max-connections lowered to fit the descriptor limit (ulimit -n) with a reserve"
        );
    }
    let limits = Limits {
        max_connections: cap.cap,
        header_timeout: config.header_timeout(),
        idle_timeout: config.idle_timeout(),
        shutdown_grace: config.shutdown_grace(),
    };
    tracing::info!(
        %addr,
        workers = config.workers(),
        queue_depth = config.queue_depth,
        max_body_bytes = config.max_body_bytes,
        max_body_memory = config.max_body_memory,
        max_connections = cap.cap,
        header_timeout_ms = config.header_timeout_ms,
        idle_timeout_ms = config.idle_timeout_ms,
        cache_bytes = config.cache_bytes,
        convert_timeout_ms = config.convert_timeout_ms,
        %malloc,
        "pexe2wasm-server listening"
    );
    // Scripts and tests read the bound address (port 0 picks one) from this line.
    println!("listening on http://{addr}");
    std::io::stdout().flush()?;
    let state = AppState::new(config);
    let stopped = serve_connections(listener, state, limits, shutdown_signal()).await;
    if stopped.cut == 0 {
        tracing::info!("pexe2wasm-server stopped: in-flight requests finished");
    } else {
        tracing::warn!(
            cut = stopped.cut,
            "pexe2wasm-server stopped: requests still in flight at the end of the grace period were cut"
        );
    }
    Ok(())
}

/// Resolves on ctrl-c or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutdown signal received");
}
