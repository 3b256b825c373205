#!/usr/bin/env bash
# Executions of libFuzzer jobs so far: the last "#N" of every job log (scripts/fuzz.sh with
# -jobs writes fuzz/fuzz-J.log; older runs' logs may be kept under fuzz/artifacts/runs/),
# their sum, the current rate and the artifacts (findings) saved.
#
#   scripts/fuzz-status.sh [TARGET]            default: lower_diff
#   scripts/fuzz-status.sh --ledger [TARGET]   one line per job log (date, log, count, last
#                                              status line), for docs/fuzz-ledger.txt
#
# The logs live in the worktree, which a machine reset loses (it did on 2026-11-27, with
# runs 1-10's logs): append the --ledger lines to docs/fuzz-ledger.txt and commit them
# before a session ends, so every counted execution has a record in the repository.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
ledger=0
if [[ "${1:-}" == "--ledger" ]]; then
  ledger=1
  shift
fi
target="${1:-lower_diff}"
total=0
rate=0
for f in "$root"/fuzz/fuzz-*.log "$root"/fuzz/artifacts/runs/*.log; do
  [[ -f "$f" ]] || continue
  last="$(grep -aE '^#[0-9]+' "$f" | tail -n 1 || true)"
  [[ -n "$last" ]] || continue
  n="${last%%[!#0-9]*}"
  n="${n#\#}"
  total=$((total + n))
  if ((ledger)); then
    printf '%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "${f#"$root"/}" "$n" "$(cut -c1-160 <<<"$last")"
    continue
  fi
  if [[ "$f" == "$root"/fuzz/fuzz-*.log ]]; then
    r="$(sed -n 's/.*exec\/s: \([0-9]*\).*/\1/p' <<<"$last")"
    rate=$((rate + ${r:-0}))
    echo "$(basename "$f"): $last" | cut -c1-150
  fi
done
if ((ledger)); then
  printf '%s\ttotal\t%s\n' "$(date -u +%FT%TZ)" "$total"
  exit 0
fi
echo "executions: $total (all job logs); current rate: $rate exec/s (running jobs)"
ls "$root/fuzz/artifacts/$target" 2>/dev/null | sed 's/^/finding: /' || true
