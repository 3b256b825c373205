//! pexe2wasm-server: binds the service, prints its address and serves until SIGTERM or
//! ctrl-c, then stops accepting and finishes the requests in flight.

use anyhow::Context;
use clap::Parser;
use pexe2wasm_server::config::{Config, LogFormat};
use pexe2wasm_server::{app, AppState};
use std::io::Write;
use tracing_subscriber::EnvFilter;

fn main() -> anyhow::Result<()> {
    // Before the runtime's threads start: conversions reuse freed memory instead of
    // page-faulting it in again (pexe2wasm's src/malloc.rs).
    let malloc = pexe2wasm::malloc::tune_for_conversion();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(serve(malloc))
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
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(
        %addr,
        workers = config.workers(),
        queue_depth = config.queue_depth,
        max_body_bytes = config.max_body_bytes,
        max_body_memory = config.max_body_memory,
        cache_bytes = config.cache_bytes,
        convert_timeout_ms = config.convert_timeout_ms,
        %malloc,
        "pexe2wasm-server listening"
    );
    // Scripts and tests read the bound address (port 0 picks one) from this line.
    println!("listening on http://{addr}");
    std::io::stdout().flush()?;
    let state = AppState::new(config);
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("server error")?;
    tracing::info!("pexe2wasm-server stopped: in-flight requests finished");
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
    tracing::info!("shutdown signal received: finishing in-flight requests");
}
