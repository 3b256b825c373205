#!/usr/bin/env bash
# RUSTC_WRAPPER for scripts/fuzz.sh's lower_diff build: libFuzzer's coverage instrumentation
# for our crates only.
#
# Why: cargo-fuzz puts its SanitizerCoverage flags in RUSTFLAGS, so every crate is
# instrumented, Cranelift and wasmtime included. Their coverage is not what the
# differential fuzzer should chase, and it is most of its time: on 300 corpus inputs,
# libFuzzer's per-run scan of the PC table took a third of the profile (perf), and
# instrumented Cranelift compiled each module more slowly. Stable cargo has no per-crate
# RUSTFLAGS; a wrapper sees each crate's name and drops those flags for the others.
set -euo pipefail
rustc="$1"
shift
name=""
prev=""
for a in "$@"; do
  [[ "$prev" == --crate-name ]] && name="$a"
  prev="$a"
done
case "$name" in
  pexe2wasm* | lower_diff | decode | decode_verify | "") exec "$rustc" "$@" ;;
esac
args=()
for a in "$@"; do
  case "$a" in
    -Cpasses=sancov-module | -Cllvm-args=-sanitizer-coverage-*) ;;
    *) args+=("$a") ;;
  esac
done
exec "$rustc" "${args[@]}"
