//! pexe2wasm-server: the HTTP conversion service. The real service (axum + tokio)
//! arrives with the service issue; until then this binary only reports its version.
fn main() {
    println!(
        "pexe2wasm-server {} (service not yet implemented)",
        env!("CARGO_PKG_VERSION")
    );
}
