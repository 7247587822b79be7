#!/usr/bin/env bash
# History reads on PostgreSQL as the series grows (issue 13: history p99 at
# 10,000,000 runs, flat from 10,000):
#
#   bench/e2e/bench_history_pg.sh [BUILD_DIR] [SECONDS] [SIZES...]   (CONNS="1 4")
#
# For each size N (default 10000 1000000 5000000): a fresh database on a
# private PostgreSQL (tests/pg_server.sh, default durability) holding 2N
# runs: N of one series (benchmark bench, counter task-clock, branch main,
# one testbed) and N spread over 9 other testbeds of the same branch, inserted with SQL
# (generate_series: the rows ingest would write, without its cost), then
# VACUUM ANALYZE; then `perfgate serve --threads 2` and wrk, 4 connections,
# on GET .../history?benchmark=bench&counter=task-clock&branch=main&testbed=T&limit=100
# (the gate's z-score query) and without the testbed, with 1 connection (the
# latency of one request) and with 4 (CONNS="1 4"): requests/s, p50, p99.
# The "runs" column is the database's total, 2N.
set -euo pipefail

BUILD=${1:-build}
SECONDS_PER_RUN=${2:-10}
shift $(($# > 2 ? 2 : $#))
SIZES=("$@")
if [ ${#SIZES[@]} -eq 0 ]; then SIZES=(10000 1000000 5000000); fi
HERE=$(cd "$(dirname "$0")" && pwd)
PERFGATE=$(cd "$BUILD" && pwd)/bin/perfgate
WORK=$(mktemp -d /tmp/perfgate-bench-history.XXXXXX)
SERVER_PID=
cleanup() {
  if [[ -n $SERVER_PID ]]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  PERFGATE_PG_DURABLE=1 bash "$HERE/../../tests/pg_server.sh" stop "$WORK/pg" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
PERFGATE_PG_DURABLE=1 bash "$HERE/../../tests/pg_server.sh" start "$WORK/pg"
PG_ADMIN=$(cat "$WORK/pg/uri")
python3 "$HERE/server_capture.py" 30 baseline "$WORK/run.json"

latency() {  # FILE PERCENT -> ms
  awk -v p="$2" '$1 == p { v = $2; if (v ~ /us$/) { sub(/us/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms/, "", v) }
                  else if (v ~ /s$/) { sub(/s/, "", v); v *= 1000 } printf "%.2f", v }' "$1"
}

printf "%-10s %-9s %6s %10s %9s %9s %9s\n" "runs" "query" "conns" "requests/s" "p50 ms" "p99 ms" "load s"
for n in "${SIZES[@]}"; do
  db="h$n"
  psql -q "$PG_ADMIN" -c "CREATE DATABASE $db"
  uri=$(echo "$PG_ADMIN" | sed "s|///postgres?|///$db?|")
  token=$("$PERFGATE" token create --db "$uri" --project bench 2>/dev/null)
  # One real run through perfgate: names, ids, the schema as ingest fills it.
  "$PERFGATE" serve --db "$uri" --listen 127.0.0.1:0 --threads 2 --no-access-log >"$WORK/serve.out" 2>"$WORK/serve.err" &
  SERVER_PID=$!
  for _ in $(seq 200); do grep -q listening "$WORK/serve.out" 2>/dev/null && break; sleep 0.05; done
  url=$(sed -n 's/^perfgate: listening on //p' "$WORK/serve.out")
  curl -sf -X POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    --data-binary @"$WORK/run.json" "$url/api/v1/projects/bench/runs" >/dev/null
  kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true; SERVER_PID=
  start=$(date +%s.%N)
  psql -q "$uri" <<SQL
INSERT INTO testbeds (fingerprint, name, cpu, cores, kernel)
  SELECT 'fp-other-' || g, 'other-' || g, 'cpu', 2, '6.1' FROM generate_series(1, 9) g;
INSERT INTO runs (project_id, benchmark_id, testbed_id, role, git_sha, branch, backend, environment, summary_only, created_at)
  SELECT r.project_id, r.benchmark_id,
         CASE WHEN g % 2 = 0 THEN r.testbed_id ELSE (SELECT id FROM testbeds WHERE fingerprint = 'fp-other-' || (1 + g % 9)) END,
         'baseline', lpad(to_hex(g), 40, '0'), 'main', 'perf', '{}', 1, 1000000000 + g
  FROM generate_series(1, 2 * $n) g, (SELECT * FROM runs LIMIT 1) r;
INSERT INTO summaries (run_id, counter_id, ordinal, unit, benchmark_id, testbed_id, branch, role, git_sha, created_at,
                       n, median, mean, stddev, cov, min, max)
  SELECT r.id, c.id, 0, 'msec', r.benchmark_id, r.testbed_id, r.branch, r.role, r.git_sha, r.created_at,
         30, 10 + (r.id % 7) * 0.01, 10, 0.1, 0.01, 9.9, 10.1
  FROM runs r, counters c WHERE c.name = 'task-clock' AND r.created_at >= 1000000000 AND r.created_at < 1600000000;
UPDATE benchmarks SET runs = runs + 2 * $n;
VACUUM ANALYZE;
SQL
  load=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.0f", b - a}')
  fp=$(psql -At "$uri" -c "SELECT t.fingerprint FROM runs r JOIN testbeds t ON t.id = r.testbed_id ORDER BY r.id LIMIT 1")
  "$PERFGATE" serve --db "$uri" --listen 127.0.0.1:0 --threads 2 --no-access-log >"$WORK/serve.out" 2>"$WORK/serve.err" &
  SERVER_PID=$!
  for _ in $(seq 200); do grep -q listening "$WORK/serve.out" 2>/dev/null && break; sleep 0.05; done
  url=$(sed -n 's/^perfgate: listening on //p' "$WORK/serve.out")
  echo "wrk.headers[\"Authorization\"] = \"Bearer $token\"" >"$WORK/get.lua"
  for what in testbed branch; do
    q="benchmark=bench&counter=task-clock&branch=main&limit=100"
    if [[ $what == testbed ]]; then q="$q&testbed=$fp"; fi
    for conns in ${CONNS:-1 4}; do
      wrk -t1 -c"$conns" -d"${SECONDS_PER_RUN}s" --latency -s "$WORK/get.lua" "$url/api/v1/projects/bench/history?$q" \
        >"$WORK/h.txt"
      printf "%-10s %-9s %6s %10s %9s %9s %9s\n" "$((2 * n))" "$what" "$conns" \
        "$(awk '/Requests\/sec/ {print $2}' "$WORK/h.txt")" \
        "$(latency "$WORK/h.txt" 50%)" "$(latency "$WORK/h.txt" 99%)" "$load"
      grep -E "Non-2xx|Socket errors" "$WORK/h.txt" || true
    done
  done
  kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true; SERVER_PID=
  psql -q "$PG_ADMIN" -c "DROP DATABASE $db WITH (FORCE)"
done
