#!/usr/bin/env bash
# The store's size under retention, on both engines (issue 47; figures in
# docs/performance.md "Store size and retention"):
#
#   bench/e2e/bench_retention.sh [BUILD_DIR] [DAYS] [BENCHMARKS] [PRS_A_DAY] [PUSHES_A_DAY] [ENGINES]
#
# Runs bench_retention (bench/micro/bench_retention.cpp) on a fresh SQLite
# file and on a fresh database of a private PostgreSQL (tests/pg_server.sh,
# PostgreSQL's default durability): bytes per run, per comparison, per flame
# graph and attribution, then DAYS simulated days (default 365) of
# PRS_A_DAY pull requests (50) and PUSHES_A_DAY pushes (10) over BENCHMARKS
# benchmarks (3: a tenth of the issue's 30; sizes grow in proportion), each
# day followed by the daily prune (--older-than 90d --thin-after 365d).
# The reports are a real one's (perfgate compare --format json on
# examples/data), once per benchmark. ENGINES: "sqlite", "postgresql" or
# "both" (the default: SQLite, then PostgreSQL), or "parallel" (both at once,
# each line prefixed with its engine: for the long runs).
set -euo pipefail

BUILD=${1:-build}
DAYS=${2:-365}
BENCHMARKS=${3:-3}
PRS=${4:-50}
PUSHES=${5:-10}
ENGINES=${6:-both}
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "$BUILD" && pwd)
WORK=$(mktemp -d /tmp/perfgate-bench-retention.XXXXXX)
cleanup() {
  PERFGATE_PG_DURABLE=1 bash "$HERE/../../tests/pg_server.sh" stop "$WORK/pg" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BUILD/bin/perfgate" compare --baseline "$HERE/../../examples/data/baseline.csv" \
  --candidate "$HERE/../../examples/data/regressed.csv" --format json >"$WORK/report.json" || [ $? -eq 1 ]

sqlite_year() {
  "$BUILD/bench/bench_retention" "$WORK/retention.db" "$WORK/report.json" "$DAYS" "$BENCHMARKS" "$PRS" "$PUSHES"
  ls -l "$WORK/retention.db"
  rm -f "$WORK"/retention.db*
}

postgresql_year() {
  PERFGATE_PG_DURABLE=1 bash "$HERE/../../tests/pg_server.sh" start "$WORK/pg" >/dev/null
  PG_ADMIN=$(cat "$WORK/pg/uri")
  psql -q "$PG_ADMIN" -c "CREATE DATABASE retention"
  "$BUILD/bench/bench_retention" "$(echo "$PG_ADMIN" | sed "s|///postgres?|///retention?|")" "$WORK/report.json" \
    "$DAYS" "$BENCHMARKS" "$PRS" "$PUSHES"
}

case "$ENGINES" in
  sqlite) echo "== SQLite"; sqlite_year ;;
  postgresql) echo "== PostgreSQL"; postgresql_year ;;
  both) echo "== SQLite"; sqlite_year; echo "== PostgreSQL"; postgresql_year ;;
  parallel)
    (sqlite_year 2>&1 | sed -u 's/^/sqlite: /') &
    s_pid=$!
    (postgresql_year 2>&1 | sed -u 's/^/postgresql: /') &
    p_pid=$!
    s_rc=0; wait "$s_pid" || s_rc=$?
    p_rc=0; wait "$p_pid" || p_rc=$?
    [ "$s_rc" -eq 0 ] && [ "$p_rc" -eq 0 ] ;;
  *) echo "bench_retention.sh: ENGINES is sqlite, postgresql, both or parallel, not '$ENGINES'" >&2; exit 2 ;;
esac
