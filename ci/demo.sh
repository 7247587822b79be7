#!/usr/bin/env bash
# The demo gate: installs the missing packages of the build and runtime sets
# (ci/install-deps.sh build runtime: not the test set), builds perfgate and the
# example benchmark (examples/checksum.cpp: a baseline and a variant that
# takes its vector by value), then
#   1. gates two bundled perf stat captures of them (perfgate compare), and
#   2. measures both builds live with perf stat and gates them (perfgate run),
#      storing the runs in the embedded SQLite file ./.perfgate/perfgate.db.
# Both find the regression, so perfgate exits 1 each time: that is the demo
# working. This script exits 0 when perfgate found it, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${PERFGATE_BUILD_DIR:-build-demo}"
ci/install-deps.sh build runtime
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPERFGATE_BUILD_TESTS=OFF -DPERFGATE_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target perfgate example-baseline example-regressed
pg="$build/bin/perfgate"

echo
echo "== 1. perfgate compare on bundled captures (examples/data/*.csv) =="
status=0
"$pg" compare --baseline examples/data/baseline.csv --candidate examples/data/regressed.csv || status=$?
echo "perfgate compare exit code: $status (1 = regression found)"
[ "$status" -eq 1 ] || { echo "demo: expected a regression" >&2; exit 1; }

echo
echo "== 2. perfgate run: live measurement, baseline vs regressed, 10 repetitions each =="
status=0
"$pg" run --name checksum \
  --baseline "$build/examples/example-baseline" \
  --candidate "$build/examples/example-regressed" \
  -r 10 --db .perfgate/perfgate.db || status=$?
echo "perfgate run exit code: $status (1 = regression found; runs stored in .perfgate/perfgate.db)"
[ "$status" -eq 1 ] || { echo "demo: expected a regression" >&2; exit 1; }
