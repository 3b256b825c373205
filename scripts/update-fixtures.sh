#!/usr/bin/env bash
# Regenerates fixtures/semantics/*.pnaclasm from their Rust description (tests/fixtures_gen/)
# and reassembles every fixtures/**/*.pnaclasm into the .pexe beside it, with our assembler.
# Commit the results; crates/pexe2wasm/tests/it/fixtures_fresh.rs fails while they are out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
PEXE2WASM_UPDATE_FIXTURES=1 cargo test --release -p pexe2wasm --test it fixtures_fresh
