#!/usr/bin/env bash
# Line coverage of the lowering (and the rest of the converter) reached by the programs of
# the lower_diff corpus: every input is generated and converted (not run) by
# crates/difftest/examples/coverage_replay.rs, built with `-C instrument-coverage` and
# without wasmtime.
#
#   scripts/difftest-coverage.sh [DIR...]      default: fuzz/corpus/lower_diff
#
# Needs the llvm-tools component (`rustup component add llvm-tools`): llvm-profdata and
# llvm-cov of the compiler's own LLVM version. The instrumented build has a target
# directory of its own ($CARGO_TARGET_DIR or target/, then coverage/).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ $# -eq 0 ]]; then
  set -- "$root/fuzz/corpus/lower_diff"
fi
host="$(rustc -vV | sed -n 's/^host: //p')"
tools="$(rustc --print sysroot)/lib/rustlib/$host/bin"
if [[ ! -x "$tools/llvm-cov" ]]; then
  echo "error: no llvm-cov in $tools; run: rustup component add llvm-tools" >&2
  exit 2
fi
target="${CARGO_TARGET_DIR:-$root/target}/coverage"
cd "$root"
prof="$(mktemp -d)"
trap 'rm -rf "$prof"' EXIT
# Build scripts and proc macros are instrumented too: their profiles go to a scratch
# directory, not into the working tree.
LLVM_PROFILE_FILE="$prof/build/%p.profraw" RUSTFLAGS="-C instrument-coverage" \
  cargo build --release -p pexe2wasm-difftest \
  --no-default-features --example coverage_replay --target-dir "$target" >&2
bin="$target/release/examples/coverage_replay"
LLVM_PROFILE_FILE="$prof/%p-%m.profraw" "$bin" "$@" 2>/dev/null
"$tools/llvm-profdata" merge -sparse "$prof"/*.profraw -o "$prof/merged.profdata"
mapfile -t sources < <(find crates/pexe2wasm/src/lower crates/pexe2wasm/src/emit \
  crates/pexe2wasm/src/verify crates/pexe2wasm/src/decode crates/pexe2wasm/src/text/asm.rs \
  -name '*.rs' | sort)
"$tools/llvm-cov" report "$bin" -instr-profile="$prof/merged.profdata" \
  -ignore-filename-regex='/(\.cargo|rustc)/' "${sources[@]}"
