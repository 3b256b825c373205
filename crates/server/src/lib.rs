//! pexe2wasm-server: the HTTP conversion service.
//!
//! [`app`] builds the router: `POST /v1/convert` and `POST /v1/inspect` read a pexe
//! ([`upload`]), run the library on the bounded [`pool`], keep results in the byte-bounded
//! LRU [`cache`] and answer errors as RFC 9457 [`problem`] details; `GET /healthz`,
//! `GET /metrics` ([`metrics`]), `GET /openapi.json` ([`openapi`]) and the upload page at
//! `/` complete it. `POST /v1/site` makes a package (.crx, .zip) into a site and keeps it
//! in the [`sites`] store, served at `GET /sites/{sha}/…` for the page's Run. Uploads are charged to a global body-memory [`budget`]. [`serve`] is
//! the accept loop: connection cap, header and idle timeouts, graceful shutdown; `main.rs`
//! binds the listener and runs it.

pub mod budget;
pub mod cache;
pub mod config;
pub mod metrics;
pub mod openapi;
pub mod pool;
pub mod problem;
mod routes;
pub mod serve;
pub mod sites;
pub mod upload;

pub use config::Config;
pub use routes::{app, AppState};
