#!/usr/bin/env bash
# What the memory gate costs (issue 32's figure): valgrind's slowdown on the
# examples/ demo. hyperfine times the program natively, under each of the
# two valgrind tools --backend memcheck runs (memcheck with --xml=yes
# --leak-check=full, then DHAT), and the whole `perfgate run --backend
# memcheck` gate (both sides, one execution each).
#
# Usage: bench/e2e/bench_memcheck.sh PERFGATE BASELINE CANDIDATE [RUNS]
#   e.g. bench/e2e/bench_memcheck.sh build/dev/bin/perfgate build/dev/examples/example-baseline \
#          build/dev/examples/example-regressed 5
# A regression exits 1: hyperfine is told to ignore the exit code.
set -euo pipefail
perfgate=$(realpath "$1"); baseline=$(realpath "$2"); candidate=$(realpath "$3"); runs=${4:-5}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
hyperfine --runs "$runs" --warmup 1 -i -N --export-markdown "$work/table.md" \
  -n 'native' "$candidate" \
  -n 'memcheck' "valgrind -q --xml=yes --xml-file=$work/m.xml --leak-check=full $candidate" \
  -n 'dhat' "valgrind -q --tool=dhat --dhat-out-file=$work/d.json $candidate" \
  -n 'perfgate run --backend memcheck' \
  "$perfgate run -q --backend memcheck --db $work/h.db --baseline $baseline --candidate $candidate --format json"
cat "$work/table.md"
