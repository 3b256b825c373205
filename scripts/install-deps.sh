#!/usr/bin/env bash
# Installs what building and testing pexe2wasm needs beyond the Rust toolchain.
#
# Idempotent: safe to run any number of times; it changes nothing when all is present.
# Today nothing is needed besides a stable Rust toolchain (cargo, rustc; rust-version in
# Cargo.toml): every dependency is a crate that cargo fetches itself. Optional tools:
#   --fuzz   also install cargo-fuzz (for scripts/fuzz.sh; needs a C++ compiler for
#            libFuzzer, which it installs with apt-get when missing).
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found; install a stable Rust toolchain (https://rustup.rs)" >&2
  exit 1
fi
echo "rust: $(rustc --version)"

if [[ "${1:-}" == "--fuzz" ]]; then
  if ! command -v c++ >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
      apt-get update && apt-get install -y g++
    else
      echo "error: no C++ compiler and no apt-get; install g++ or clang++" >&2
      exit 1
    fi
  fi
  if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
  fi
  echo "cargo-fuzz: $(cargo fuzz --version)"
fi
echo "all dependencies present"
