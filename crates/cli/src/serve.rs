//! `pexe2wasm serve DIR`: a development server for a folder `pexe2wasm web` wrote. It adds
//! what a converted Pepper app needs from its server: cross-origin isolation (threads need
//! SharedArrayBuffer), WebAssembly's MIME type, and revalidation instead of stale copies.
//! Static files only; the folder works as well on any static host that sets the headers.

use std::net::SocketAddr;
use std::path::Path;

use anyhow::{bail, Context, Result};
use axum::http::{header, HeaderName, HeaderValue};
use axum::Router;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

/// The headers every response gets.
fn headers() -> [(HeaderName, &'static str); 4] {
    [
        (
            HeaderName::from_static("cross-origin-opener-policy"),
            "same-origin",
        ),
        (
            HeaderName::from_static("cross-origin-embedder-policy"),
            "require-corp",
        ),
        (
            HeaderName::from_static("cross-origin-resource-policy"),
            "same-origin",
        ),
        // Revalidate every time (a rebuilt folder is seen at once); unchanged files still
        // answer 304, so the browser keeps its compiled module.
        (header::CACHE_CONTROL, "no-cache"),
    ]
}

pub fn router(dir: &Path) -> Router {
    let mut app = Router::new().fallback_service(ServeDir::new(dir));
    for (name, value) in headers() {
        app = app.layer(SetResponseHeaderLayer::overriding(
            name,
            HeaderValue::from_static(value),
        ));
    }
    app
}

/// Serves `dir` on `listen` until interrupted; prints the URL first (one line on stdout).
pub fn serve(dir: &Path, listen: SocketAddr) -> Result<()> {
    if !dir.is_dir() {
        bail!("{}: not a directory", dir.display());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}"))?;
        let addr = listener.local_addr()?;
        let page = if dir.join("index.html").is_file() {
            ""
        } else {
            " (no index.html: open the app's page by name)"
        };
        println!("serving {} at http://{addr}/{page}", dir.display());
        if !addr.ip().is_loopback() {
            eprintln!(
                "note: {addr} is reachable from other machines; this is a development server"
            );
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
        axum::serve(listener, router(dir))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .context("the server failed")
    })
}
