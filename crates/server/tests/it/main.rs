//! Integration tests of the HTTP service against the real `pexe2wasm-server` binary on
//! loopback ports, in one binary so the workspace links fewer test executables. Each
//! module was a test file of its own; `common` starts the server and finds fixtures.

mod api;
mod browser;
mod common;
mod connections;
mod load;
mod sites;
mod uploads;
