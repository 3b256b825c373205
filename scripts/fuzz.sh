#!/usr/bin/env bash
# Fuzz the decoder with cargo-fuzz (libFuzzer) on the stable toolchain.
#
#   scripts/fuzz.sh [TARGET] [SECONDS] [-- extra libFuzzer flags]
#
# TARGET is `decode` (decode must not panic), `decode_verify` (decode -> verify ->
# check_runnable -> dis must not panic), `lower_diff` (differential fuzzing of the
# lowering: generated valid modules converted and run under wasmtime against the reference
# interpreter, docs/FUZZING.md) or `nexe` (reading a nexe and validating x86-64 code must
# not panic); default `decode`. SECONDS defaults to 1800.
#
# The corpus lives in fuzz/corpus/TARGET (ignored by git). It is seeded at run time from the
# real pexes under 128 KiB ($PEXE2WASM_REAL_CORPUS, else ../shared/fixtures/real) and from
# fixtures/*.pexe; nothing from the real corpus is committed. Crashes land in
# fuzz/artifacts/TARGET/; copy each into fuzz/regressions/ (crates/cli/tests/it/malformed.rs replays every
# file there) and add a focused test for it.
#
# How it runs on stable: cargo-fuzz wants nightly only for its sanitizer flags
# (-Zsanitizer). With `-s none` (no sanitizer; the code under test is safe Rust) it passes
# only stable -C flags (the SanitizerCoverage passes and --cfg fuzzing), so no nightly and
# no RUSTC_BOOTSTRAP are needed. `-a` keeps debug assertions and overflow checks on, which
# `cargo test --release` does not: the fuzzer is what catches arithmetic overflow.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:-decode}"
seconds="${2:-1800}"
shift $(( $# > 2 ? 2 : $# ))
[[ "${1:-}" == "--" ]] && shift

case "$target" in
  decode|decode_verify|lower_diff|nexe) ;;
  *) echo "error: unknown fuzz target '$target' (decode, decode_verify, lower_diff, nexe)" >&2; exit 2 ;;
esac

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "installing cargo-fuzz (cargo install cargo-fuzz --locked)" >&2
  cargo install cargo-fuzz --locked
fi

corpus_src="${PEXE2WASM_REAL_CORPUS:-$root/../shared/fixtures/real}"
corpus="$root/fuzz/corpus/$target"
mkdir -p "$corpus"
seeded=0
max_len=131072
if [[ "$target" == lower_diff ]]; then
  # The input drives a program generator: no pexe seeds; a few KiB make a full module.
  # Random inputs of 0.5-6 KiB start the corpus with whole programs (libFuzzer's own
  # inputs start at a few bytes, which make the plainest programs).
  max_len=8192
  if [[ -z "$(ls -A "$corpus")" ]]; then
    for i in $(seq 1 64); do
      head -c $((512 + RANDOM % 5632)) /dev/urandom > "$corpus/random-$i"
    done
    seeded=64
  fi
elif [[ "$target" == nexe ]]; then
  # The real nexes ($PEXE2WASM_NEXE_CORPUS, else ../shared/fixtures/nexe) are 0.2-4 MB:
  # each seeds its first 128 KiB (ELF and program headers; the segments are cut off) and
  # 128 KiB from 64 KiB on (code, for the raw-code half of the target).
  nexe_src="${PEXE2WASM_NEXE_CORPUS:-$root/../shared/fixtures/nexe}"
  for f in "$nexe_src"/*.nexe; do
    [[ -f "$f" ]] || continue
    b="$(basename "$f" .nexe)"
    [[ -e "$corpus/seed-$b-head" ]] || head -c "$max_len" "$f" > "$corpus/seed-$b-head"
    [[ -e "$corpus/seed-$b-code" ]] || tail -c +65537 "$f" | head -c "$max_len" > "$corpus/seed-$b-code"
    seeded=$((seeded + 2))
  done
else
  for f in "$corpus_src"/*.pexe "$root"/fixtures/*.pexe; do
    [[ -f "$f" ]] || continue
    [[ $(stat -c %s "$f") -le 131072 ]] || continue
    cp -n "$f" "$corpus/seed-$(basename "$f")"
    seeded=$((seeded + 1))
  done
fi
echo "corpus: $corpus ($seeded seed files available, $(ls "$corpus" | wc -l) inputs)" >&2

cd "$root/fuzz"
build_flags=(-s none -a)
if [[ "$target" == lower_diff ]]; then
  # The differential target spends its time in Cranelift compiling the converted module:
  # only our crates are instrumented (scripts/fuzz-rustc.sh, a RUSTC_WRAPPER that drops the
  # coverage flags for every other crate), no debug assertions (-O; a wrong result is found
  # by the comparison, and Cranelift's assertions cost more than they find here) and no
  # compare tracing, in a target directory of its own so the decode targets' build is kept.
  build_flags=(-O -s none --no-trace-compares --target-dir "$root/fuzz/target/lower_diff")
  export RUSTC_WRAPPER="$root/scripts/fuzz-rustc.sh"
  # Cargo does not fingerprint RUSTC_WRAPPER: a target directory built before it came
  # would keep its instrumented Cranelift, so such a directory is rebuilt once.
  marker="$root/fuzz/target/lower_diff/.own-crates-instrumented"
  if [[ -d "$root/fuzz/target/lower_diff" && ! -e "$marker" ]]; then
    echo "rebuilding fuzz/target/lower_diff: it predates scripts/fuzz-rustc.sh" >&2
    rm -rf "$root/fuzz/target/lower_diff"
  fi
  mkdir -p "$root/fuzz/target/lower_diff"
  touch "$marker"
fi
exec cargo fuzz run "${build_flags[@]}" "$target" "$corpus" -- \
  -max_total_time="$seconds" \
  -max_len="$max_len" \
  -rss_limit_mb=2048 \
  -malloc_limit_mb=512 \
  -timeout=10 \
  -print_final_stats=1 \
  "$@"
