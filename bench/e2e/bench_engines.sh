#!/usr/bin/env bash
# The store's engines side by side under `perfgate serve` (issue 13):
#
#   bench/e2e/bench_engines.sh [BUILD_DIR] [SECONDS]
#   (CONFIGS="sqlite pg1 pg2" by default; THREADS: --threads of each server, 2;
#   PAIRS=apart|session as in bench_server.sh: runs measured apart, the
#   default, or all of one session, as `perfgate run` uploads a pair)
#
# For SQLite (one server), PostgreSQL with one server and PostgreSQL with two
# servers on one database (each --threads 2, the load split evenly between
# them, as a load balancer would):
#  1. fresh compares: wrk, 64 connections in all, every request a different
#     (baseline, candidate) pair out of FRESH_RUNS^2 (default 250^2), so each
#     one is computed and stored: requests/s and p99 (two servers: the sum of
#     their requests/s and the larger p99); baselines on main, candidates on
#     a feature branch, 30 repetitions x 10 counters each. FRESH_WARMUP
#     seconds (3) of such compares run first, unmeasured, on pairs the
#     measurement does not repeat: right after the uploads no run or history
#     is cached yet, and that start is what 3. measures;
#     Then the CPU per fresh compare: the servers' and PostgreSQL's CPU
#     seconds over the compares served (issue 47's figure);
#  2. ingest: wrk, 4 connections in all, POSTs of a run of 30 repetitions x 10
#     counters: runs/s and samples/s.
#  3. cold compares: COLD_RUNS (2000) more pairs uploaded, the servers
#     restarted, then COLD_SECONDS (1) of wrk as in 1 where request i
#     compares the i-th new baseline with the i-th new candidate: no run or
#     history in any cache (1's pairs reuse their runs: each candidate meets
#     every baseline in turn).
# PostgreSQL is a private server (tests/pg_server.sh) with its default
# durability (fsync, synchronous_commit on: every commit waits for its WAL
# flush; SQLite's WAL with synchronous=NORMAL does not). PG_SYNC=off sets
# synchronous_commit=off on the benchmark's database (durable against a crash
# of PostgreSQL, may lose the last commits on power loss: SQLite NORMAL's
# guarantee). Needs wrk, python3, PostgreSQL's server binaries; a Release
# build (cmake -DCMAKE_BUILD_TYPE=Release).
set -euo pipefail

BUILD=${1:-build}
SECONDS_PER_RUN=${2:-10}
FRESH_RUNS=${FRESH_RUNS:-250}
FRESH_WARMUP=${FRESH_WARMUP:-3}
COLD_RUNS=${COLD_RUNS:-2000}
COLD_SECONDS=${COLD_SECONDS:-1}
PG_SYNC=${PG_SYNC:-on}
PAIRS=${PAIRS:-apart}
case $PAIRS in
apart) SESSION= ;;
session) SESSION=bench-session ;;
*) echo "PAIRS must be apart or session, not '$PAIRS'" >&2; exit 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
PERFGATE=$(cd "$BUILD" && pwd)/bin/perfgate
WORK=$(mktemp -d /tmp/perfgate-bench-engines.XXXXXX)
PIDS=()
stop_servers() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  PIDS=()
}
cleanup() {
  stop_servers
  PERFGATE_PG_DURABLE=1 bash "$HERE/../../tests/pg_server.sh" stop "$WORK/pg" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

PERFGATE_PG_DURABLE=1 bash "$HERE/../../tests/pg_server.sh" start "$WORK/pg"
PG_ADMIN=$(cat "$WORK/pg/uri")
pg_uri() { echo "$PG_ADMIN" | sed "s|///postgres?|///$1?|"; }

python3 "$HERE/server_capture.py" 30 baseline "$WORK/ingest.json"

# start_servers DB N: N servers on DB; their URLs in URLS.
start_servers() {
  local db=$1 n=$2 i
  URLS=()
  for ((i = 0; i < n; i++)); do
    "$PERFGATE" serve --db "$db" --listen 127.0.0.1:0 --threads "${THREADS:-2}" --no-access-log \
      >"$WORK/serve-$i.out" 2>"$WORK/serve-$i.err" &
    PIDS+=($!)
    for _ in $(seq 200); do grep -q listening "$WORK/serve-$i.out" 2>/dev/null && break; sleep 0.05; done
    URLS+=("$(sed -n 's/^perfgate: listening on //p' "$WORK/serve-$i.out")")
  done
}

# CPU seconds used so far by the perfgate servers and by the benchmark's
# PostgreSQL (the postmaster and its children): "perfgate postgres".
# (Backends that exited are not counted; the servers' connections do not.)
cpu_seconds() {
  local pg=0 pf=0 pid
  local tick
  tick=$(getconf CLK_TCK)
  for pid in "${PIDS[@]}"; do
    pf=$(awk -v a="$pf" -v t="$tick" '{printf "%.2f", a + ($14 + $15) / t}' "/proc/$pid/stat" 2>/dev/null || echo "$pf")
  done
  local postmaster
  postmaster=$(head -1 "$(cat "$WORK/pg/cluster")/data/postmaster.pid")
  for pid in "$postmaster" $(pgrep -P "$postmaster"); do
    pg=$(awk -v a="$pg" -v t="$tick" '{printf "%.2f", a + ($14 + $15) / t}' "/proc/$pid/stat" 2>/dev/null || echo "$pg")
  done
  echo "$pf $pg"
}

rps() { awk '/Requests\/sec/ {print $2}' "$1"; }
# Rows PostgreSQL's sequential scans have read in DB's tables so far (a
# compare's lookups are all by index: a number growing with the compares is
# a plan gone wrong).
seq_rows() { psql -qtA "$1" -c "SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables"; }
p99_ms() { pct_ms 99% "$1"; }
p50_ms() { pct_ms 50% "$1"; }
pct_ms() {  # PCT FILE: wrk's PCT latency in ms
  awk -v pct="$1" '$1 == pct { v = $2; if (v ~ /us$/) { sub(/us/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms/, "", v) }
                     else if (v ~ /s$/) { sub(/s/, "", v); v *= 1000 } printf "%.1f", v }' "$2"
}

# upload_runs K OUT.lua: K baseline and K candidate runs, uploaded through
# the servers (URLS) in turn; their ids as Lua tables bases and cands.
upload_runs() {
  python3 - "$HERE" "$token" "$1" "$2" "$SESSION" "${URLS[@]}" <<'PY'
import json, random, sys, urllib.request
sys.path.insert(0, sys.argv[1])
import server_capture
token, k, out, session, urls = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6:]
n = 0
def post(role, seed):
    global n
    # As a pull request's gate stores them: baselines on main, candidates on
    # the PR's branch (so the z-score's history, main's baselines, is an
    # index range without candidates in it).
    body = {"benchmark": "bench", "role": role, "git_sha": "0123456789ab" if role == "baseline" else "fedcba987654",
            "branch": "main" if role == "baseline" else "feature",
            "testbed": {"name": "bench-box", "cores": 2},
            "perf_csv": server_capture.capture(30, random.Random(seed))}
    if session:
        body["session"] = session
    req = urllib.request.Request(urls[n % len(urls)] + "/api/v1/projects/bench/runs", data=json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    n += 1
    return json.load(urllib.request.urlopen(req))["run_id"]
bases = [post("baseline", 1000 + i) for i in range(k)]
cands = [post("candidate", 5000 + i) for i in range(k)]
with open(out, "w") as f:
    f.write("bases = {%s}\ncands = {%s}\n" % (",".join(map(str, bases)), ",".join(map(str, cands))))
PY
}

# write_lua PATTERN IDS.lua I N TOKEN [FIRST] > OUT.lua: the requests of
# server I of N, from pair FIRST (0; a multiple of 2 * N) on. grid: pair idx
# is (bases[idx % k], cands[idx / k]), each candidate against every baseline
# in turn; diagonal: (bases[idx], cands[idx]), every request two runs no
# compare has loaded (while idx < k).
write_lua() {
  local pattern=$1 ids=$2 i=$3 n=$4 token=$5 first=${6:-0} pick_c
  if [[ $pattern == grid ]]; then
    pick_c='cands[(math.floor(idx / #bases) % #cands) + 1]'
  else
    pick_c='cands[(idx % #cands) + 1]'
  fi
  cat "$ids"
  cat <<LUA
local threads = 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
local sent = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $token"
function request()
  -- wrk's threads are separate Lua states; with $n servers, server $i's
  -- thread t takes pairs $first + (2 * $n) * k + 2 * $i + t: no pair is sent twice.
  local idx = $first + sent * (2 * $n) + 2 * $i + tid
  sent = sent + 1
  local b = bases[(idx % #bases) + 1]
  local c = $pick_c
  return wrk.format(nil, nil, nil, '{"baseline_run": ' .. b .. ', "candidate_run": ' .. c .. '}')
end
LUA
}

# start_compares PATTERN IDS.lua SECONDS NAME [FIRST]: wrk against each of
# the n servers (conns connections each) in the background, from pair FIRST
# on, pids in wrks, output in NAME-i.txt (run_config's locals n, conns,
# token, wrks).
start_compares() {
  local pattern=$1 ids=$2 seconds=$3 name=$4 first=${5:-0} i
  wrks=()
  for ((i = 0; i < n; i++)); do
    write_lua "$pattern" "$ids" "$i" "$n" "$token" "$first" >"$WORK/$name-$i.lua"
    wrk -t2 -c"$conns" -d"${seconds}s" --latency -s "$WORK/$name-$i.lua" \
      "${URLS[$i]}/api/v1/projects/bench/compare" >"$WORK/$name-$i.txt" &
    wrks+=($!)
  done
}

# compare_results NAME: the servers' summed requests/s (RESULT_RPS) and
# requests (RESULT_REQUESTS), the largest p50 and p99 (RESULT_P50, RESULT_P99); wrk's errors
# appended to errors.
compare_results() {
  local name=$1 i
  RESULT_RPS=0 RESULT_P50=0 RESULT_P99=0 RESULT_REQUESTS=0
  for ((i = 0; i < n; i++)); do
    RESULT_RPS=$(awk -v a="$RESULT_RPS" -v b="$(rps "$WORK/$name-$i.txt")" 'BEGIN {printf "%.0f", a + b}')
    RESULT_P50=$(awk -v a="$RESULT_P50" -v b="$(p50_ms "$WORK/$name-$i.txt")" 'BEGIN {printf "%.1f", (b > a ? b : a)}')
    RESULT_P99=$(awk -v a="$RESULT_P99" -v b="$(p99_ms "$WORK/$name-$i.txt")" 'BEGIN {printf "%.1f", (b > a ? b : a)}')
    RESULT_REQUESTS=$((RESULT_REQUESTS + $(awk '/requests in/ {print $1}' "$WORK/$name-$i.txt")))
    errors+=$(grep -E "Non-2xx|Socket errors" "$WORK/$name-$i.txt" || true)
  done
}

# run_config NAME DB N
run_config() {
  local name=$1 db=$2 n=$3 i
  local token
  token=$("$PERFGATE" token create --db "$db" --project bench 2>/dev/null)
  start_servers "$db" "$n"
  upload_runs "$FRESH_RUNS" "$WORK/ids.lua"
  # PostgreSQL as autovacuum keeps it: the new rows' pages all-visible
  # (index-only scans skip the heap) and statistics for the planner.
  if [[ $db == postgresql://* ]]; then psql -q "$db" -c "VACUUM ANALYZE"; fi
  local conns=$((64 / n)) wrks=() errors="" first=0
  if ((FRESH_WARMUP > 0)); then
    start_compares grid "$WORK/ids.lua" "$FRESH_WARMUP" warmup
    wait "${wrks[@]}"
    compare_results warmup
    # Past every pair the warm-up may have sent, on a multiple of 2 * n.
    first=$(((RESULT_REQUESTS + 1000) / (2 * n) * (2 * n) + 2 * n))
  fi
  # The comparisons table as autovacuum keeps it in a live database:
  # analyzed with rows in it. Analyzed empty (above) it is planned as empty:
  # each pooled connection then caches a generic plan that scans the whole
  # table to find a request key, until autovacuum's next ANALYZE (up to a
  # minute: autovacuum_naptime), and the fresh compares below measured those
  # scans (issue 47: 7.8 M rows read in 4,000 compares, half of
  # PostgreSQL's CPU).
  if [[ $db == postgresql://* ]]; then psql -q "$db" -c "ANALYZE comparisons"; fi
  local scanned_before=0
  if [[ $db == postgresql://* ]]; then scanned_before=$(seq_rows "$db"); fi
  start_compares grid "$WORK/ids.lua" "$SECONDS_PER_RUN" fresh "$first"
  local cpu_before
  cpu_before=$(cpu_seconds)
  wait "${wrks[@]}"
  local cpu_used
  cpu_used=$(cpu_seconds | awk -v b="$cpu_before" 'BEGIN {split(b, x, " ")} {printf "%.2f %.2f", $1 - x[1], $2 - x[2]}')
  CPU_SPLIT=$(echo "$cpu_used" | awk '{printf "cpu s: perfgate %.1f, postgres %.1f", $1, $2}')
  if [[ $db == postgresql://* ]]; then
    # Statistics reach the view within PostgreSQL's stats_fetch interval: let them.
    sleep 1
    CPU_SPLIT+=", rows read by sequential scans $(($(seq_rows "$db") - scanned_before))"
  fi
  compare_results fresh
  local fresh_rps=$RESULT_RPS fresh_p50=$RESULT_P50 fresh_p99=$RESULT_P99
  # The figure that the machine's load moves least (issue 47): CPU per
  # compare served, perfgate's and PostgreSQL's.
  CPU_SPLIT+=$(echo "$cpu_used" | awk -v n="$RESULT_REQUESTS" \
    '{if (n > 0) printf ", per compare (%d): perfgate %.0f us, postgres %.0f us", n, $1 / n * 1e6, $2 / n * 1e6}')
  if ((first + RESULT_REQUESTS > FRESH_RUNS * FRESH_RUNS)); then
    errors+="fresh: pairs $first..$((first + RESULT_REQUESTS)) of $((FRESH_RUNS * FRESH_RUNS)), some were repeats: raise FRESH_RUNS"
  fi

  cat >"$WORK/ingest.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $token"
local f = io.open("$WORK/ingest.json", "rb"); wrk.body = f:read("*a"); f:close()
LUA
  wrks=()
  for ((i = 0; i < n; i++)); do
    wrk -t1 -c$((4 / n)) -d"${SECONDS_PER_RUN}s" --latency -s "$WORK/ingest.lua" \
      "${URLS[$i]}/api/v1/projects/bench/runs" >"$WORK/ingest-$i.txt" &
    wrks+=($!)
  done
  wait "${wrks[@]}"
  local runs=0 ingest_p99=0
  for ((i = 0; i < n; i++)); do
    runs=$(awk -v a="$runs" -v b="$(rps "$WORK/ingest-$i.txt")" 'BEGIN {printf "%.1f", a + b}')
    ingest_p99=$(awk -v a="$ingest_p99" -v b="$(p99_ms "$WORK/ingest-$i.txt")" 'BEGIN {printf "%.1f", (b > a ? b : a)}')
    errors+=$(grep -E "Non-2xx|Socket errors" "$WORK/ingest-$i.txt" || true)
  done
  # Cold compares: COLD_RUNS new pairs, then the servers restarted (empty
  # caches, the uploads' watch jobs done), each request two runs that no
  # compare has loaded and a history no compare has read, for COLD_SECONDS.
  upload_runs "$COLD_RUNS" "$WORK/cold-ids.lua"
  stop_servers
  if [[ $db == postgresql://* ]]; then psql -q "$db" -c "VACUUM ANALYZE"; fi
  start_servers "$db" "$n"
  start_compares diagonal "$WORK/cold-ids.lua" "$COLD_SECONDS" cold
  wait "${wrks[@]}"
  compare_results cold
  local cold_rps=$RESULT_RPS cold_p99=$RESULT_P99
  if ((RESULT_REQUESTS > COLD_RUNS)); then
    errors+="cold: $RESULT_REQUESTS requests for $COLD_RUNS pairs, some were repeats: raise COLD_RUNS"
  fi
  printf "%-26s %10s %8s %8s %9s %11s %12s %8s %9s\n" "$name" "$fresh_rps" "$fresh_p50" "$fresh_p99" "$runs" \
    "$(awk -v r="$runs" 'BEGIN {printf "%.0f", r * 300}')" "$ingest_p99" "$cold_rps" "$cold_p99"
  echo "  fresh compares: $CPU_SPLIT"
  if [[ -n $errors ]]; then echo "  errors: $errors"; fi
  stop_servers
}

echo "perfgate bench_engines: build $BUILD, ${SECONDS_PER_RUN}s per measurement, $(nproc) CPUs, PostgreSQL synchronous_commit=$PG_SYNC, pairs $PAIRS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-26s %10s %8s %8s %9s %11s %12s %8s %9s\n" "engine" "compares/s" "p50 ms" "p99 ms" "runs/s" "samples/s" "ingest p99" \
  "cold/s" "cold p99"
for config in ${CONFIGS:-sqlite pg1 pg2}; do
  case $config in
  sqlite) run_config "sqlite, 1 server" "$WORK/bench.db" 1 ;;
  pg1 | pg2)
    n=${config#pg}
    psql -q "$PG_ADMIN" -c "CREATE DATABASE bench$n" -c "ALTER DATABASE bench$n SET synchronous_commit = $PG_SYNC"
    run_config "postgresql, $n server(s)" "$(pg_uri "bench$n")" "$n"
    ;;
  *) echo "unknown configuration $config (sqlite, pg1, pg2)" >&2; exit 2 ;;
  esac
done
