#!/usr/bin/env bash
# What --cache-sim adds to a `perfgate run --backend callgrind` (issue 12's
# figure): hyperfine runs the same gate with and without it, several times.
#
# Usage: bench/e2e/bench_cache_sim.sh PERFGATE BASELINE CANDIDATE [RUNS]
#   e.g. bench/e2e/bench_cache_sim.sh build/bin/perfgate build/examples/example-baseline \
#          build/examples/example-regressed 5
# A regression exits 1: hyperfine is told to ignore the exit code.
set -euo pipefail
perfgate=$(realpath "$1"); baseline=$(realpath "$2"); candidate=$(realpath "$3"); runs=${4:-5}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
run="$perfgate run -q --backend callgrind --db $work/h.db --baseline $baseline --candidate $candidate --format json"
hyperfine --runs "$runs" --warmup 1 -i --export-markdown "$work/table.md" \
  -n 'callgrind' "$run" \
  -n 'callgrind --cache-sim' "$run --cache-sim"
cat "$work/table.md"
