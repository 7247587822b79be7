#!/usr/bin/env bash
# Benchmarks `perfgate serve` over loopback (issue: server/ performance).
#
#   [PAIRS=apart|session] bench/e2e/bench_server.sh [BUILD_DIR] [SECONDS] [MIXED_SECONDS]
#
#  1. ingest: wrk POSTs a run of 30 repetitions x 10 counters; runs/s and samples/s
#  2. compare: wrk at 64 connections on POST .../compare, and on the hidden
#     constant endpoint GET /bench/constant (--bench-routes) of the same server,
#     requests/s, p99, and the ratio compare/constant. Two compare cases:
#     "repeated" posts the same request again and again (after the first one
#     it is served from the stored comparison: compares are idempotent), and
#     "fresh" gives every request a different (baseline, candidate) pair out
#     of FRESH_RUNS^2 (default 150^2 = 22,500), so each one is computed and
#     stored; the number of requests sent says whether pairs were reused.
#  3. RSS of the server over MIXED_SECONDS (default 600) of mixed load
#     (ingest + compare + history + healthz at once), sampled every 10 s
#
# PAIRS says how the compared runs were measured (issue 47):
#   apart   (default) no run names a session: every compare is of runs
#           measured apart and runs the between-run test against the history
#           of main's baselines (docs/statistics.md#runs-not-measured-interleaved);
#   session every run names the same session, as `perfgate run` uploads a
#           baseline and a candidate it measured interleaved: the rank test
#           only (the z-score and the band still read the history).
#
# Needs wrk and python3. Use a Release build: cmake -DCMAKE_BUILD_TYPE=Release.
set -euo pipefail

BUILD=${1:-build}
SECONDS_PER_RUN=${2:-10}
MIXED_SECONDS=${3:-600}
PAIRS=${PAIRS:-apart}
case $PAIRS in
apart) SESSION= ;;
session) SESSION=bench-session ;;
*) echo "PAIRS must be apart or session, not '$PAIRS'" >&2; exit 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
PERFGATE=$(cd "$BUILD" && pwd)/bin/perfgate
WORK=$(mktemp -d /tmp/perfgate-bench.XXXXXX)
SERVER_PID=
cleanup() {
  if [[ -n $SERVER_PID ]]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

TOKEN=$("$PERFGATE" token create --db "$WORK/bench.db" --project bench 2>/dev/null)
"$PERFGATE" serve --db "$WORK/bench.db" --listen 127.0.0.1:0 --threads 2 --bench-routes --no-access-log \
  >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVER_PID=$!
for _ in $(seq 100); do grep -q listening "$WORK/serve.out" 2>/dev/null && break; sleep 0.05; done
URL=$(sed -n 's/^perfgate: listening on //p' "$WORK/serve.out")
echo "server $URL (pid $SERVER_PID), build $BUILD, pairs $PAIRS, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# with_session FILE: the body with PAIRS's session (none for apart).
with_session() {
  [[ -z $SESSION ]] && return 0
  python3 -c 'import json, sys; b = json.load(open(sys.argv[1])); b["session"] = sys.argv[2]; json.dump(b, open(sys.argv[1], "w"))' \
    "$1" "$SESSION"
}
python3 "$HERE/server_capture.py" 30 baseline "$WORK/baseline.json"
python3 "$HERE/server_capture.py" 30 candidate "$WORK/candidate.json"
with_session "$WORK/baseline.json"
with_session "$WORK/candidate.json"
post() { curl -sf -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' --data-binary @"$1" "$URL$2"; }
BASE=$(post "$WORK/baseline.json" /api/v1/projects/bench/runs | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
CAND=$(post "$WORK/candidate.json" /api/v1/projects/bench/runs | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
echo "{\"baseline_run\": $BASE, \"candidate_run\": $CAND}" >"$WORK/compare.json"

# wrk scripts: POST a file's content with the token.
lua_post() {  # FILE -> lua script on stdout
  cat <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $TOKEN"
local f = io.open("$1", "rb"); wrk.body = f:read("*a"); f:close()
LUA
}
lua_post "$WORK/baseline.json" >"$WORK/ingest.lua"
lua_post "$WORK/compare.json" >"$WORK/compare.lua"
cat >"$WORK/get.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $TOKEN"
LUA

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$SERVER_PID/status"; }
rps() { awk '/Requests\/sec/ {print $2}' "$1"; }
p50() { awk '$1 == "50%" {print $2}' "$1"; }
p99() { awk '$1 == "99%" {print $2}' "$1"; }

echo "== ingest: 30 repetitions x 10 counters per run, 4 connections, ${SECONDS_PER_RUN}s"
wrk -t2 -c4 -d"${SECONDS_PER_RUN}s" --latency -s "$WORK/ingest.lua" "$URL/api/v1/projects/bench/runs" >"$WORK/ingest.txt"
RUNS=$(rps "$WORK/ingest.txt")
echo "runs/s $RUNS  samples/s $(awk -v r="$RUNS" 'BEGIN {printf "%.0f", r * 300}')  p99 $(p99 "$WORK/ingest.txt")"
grep -E "Non-2xx|Socket errors" "$WORK/ingest.txt" || true

echo "== constant endpoint (transport only), 64 connections, ${SECONDS_PER_RUN}s"
wrk -t2 -c64 -d"${SECONDS_PER_RUN}s" --latency "$URL/bench/constant" >"$WORK/constant.txt"
echo "requests/s $(rps "$WORK/constant.txt")  p99 $(p99 "$WORK/constant.txt")"
echo "== compare endpoint (30x10 vs 30x10, stored), 64 connections, ${SECONDS_PER_RUN}s"
wrk -t2 -c64 -d"${SECONDS_PER_RUN}s" --latency -s "$WORK/compare.lua" "$URL/api/v1/projects/bench/compare" >"$WORK/compare.txt"
echo "requests/s $(rps "$WORK/compare.txt")  p99 $(p99 "$WORK/compare.txt")"
grep -E "Non-2xx|Socket errors" "$WORK/compare.txt" || true
echo "ratio compare/constant $(awk -v a="$(rps "$WORK/compare.txt")" -v b="$(rps "$WORK/constant.txt")" 'BEGIN {printf "%.3f", a / b}')"

# Fresh compares: FRESH_RUNS more baseline and candidate runs (captures with
# other seeds), then every request a different pair of them.
FRESH_RUNS=${FRESH_RUNS:-150}
echo "== compare endpoint, fresh pairs (each computed and stored), 64 connections, ${SECONDS_PER_RUN}s"
python3 - "$HERE" "$URL" "$TOKEN" "$FRESH_RUNS" "$WORK/fresh-ids.lua" "$SESSION" <<'PY'
import json, random, sys, urllib.request
sys.path.insert(0, sys.argv[1])
import server_capture
url, token, k, out, session = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
def post(role, seed):
    body = {"benchmark": "bench", "role": role, "git_sha": "0123456789ab", "branch": "main",
            "testbed": {"name": "bench-box", "cores": 2},
            "perf_csv": server_capture.capture(30, random.Random(seed))}
    if session:
        body["session"] = session
    req = urllib.request.Request(url + "/api/v1/projects/bench/runs", data=json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))["run_id"]
bases = [post("baseline", 1000 + i) for i in range(k)]
cands = [post("candidate", 5000 + i) for i in range(k)]
with open(out, "w") as f:
    f.write("bases = {%s}\ncands = {%s}\n" % (",".join(map(str, bases)), ",".join(map(str, cands))))
PY
{
  cat "$WORK/fresh-ids.lua"
  cat <<LUA
local threads = 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
local sent = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $TOKEN"
function request()
  -- wrk's threads are separate Lua states: thread t takes pairs t, t+2, ...
  local i = sent * 2 + tid
  sent = sent + 1
  local b = bases[(i % #bases) + 1]
  local c = cands[(math.floor(i / #bases) % #cands) + 1]
  return wrk.format(nil, nil, nil, '{"baseline_run": ' .. b .. ', "candidate_run": ' .. c .. '}')
end
LUA
} >"$WORK/fresh.lua"
wrk -t2 -c64 -d"${SECONDS_PER_RUN}s" --latency -s "$WORK/fresh.lua" "$URL/api/v1/projects/bench/compare" >"$WORK/fresh.txt"
echo "requests/s $(rps "$WORK/fresh.txt")  p50 $(p50 "$WORK/fresh.txt")  p99 $(p99 "$WORK/fresh.txt")  requests $(awk '/requests in/ {print $1}' "$WORK/fresh.txt") of $((FRESH_RUNS * FRESH_RUNS)) distinct pairs"
grep -E "Non-2xx|Socket errors" "$WORK/fresh.txt" || true
echo "ratio fresh compare/constant $(awk -v a="$(rps "$WORK/fresh.txt")" -v b="$(rps "$WORK/constant.txt")" 'BEGIN {printf "%.3f", a / b}')"

if ((MIXED_SECONDS <= 0)); then exit 0; fi
echo "== RSS under ${MIXED_SECONDS}s of mixed load"
START_RSS=$(rss_kb)
wrk -t1 -c2 -d"${MIXED_SECONDS}s" -s "$WORK/ingest.lua" "$URL/api/v1/projects/bench/runs" >"$WORK/mixed-ingest.txt" &
W1=$!
wrk -t1 -c8 -d"${MIXED_SECONDS}s" -s "$WORK/compare.lua" "$URL/api/v1/projects/bench/compare" >"$WORK/mixed-compare.txt" &
W2=$!
wrk -t1 -c8 -d"${MIXED_SECONDS}s" -s "$WORK/get.lua" \
  "$URL/api/v1/projects/bench/history?benchmark=bench&counter=task-clock&limit=100" >"$WORK/mixed-history.txt" &
W3=$!
for ((t = 10; t <= MIXED_SECONDS; t += 10)); do sleep 10; echo "t=${t}s rss_kb $(rss_kb)"; done
wait $W1 $W2 $W3
END_RSS=$(rss_kb)
echo "rss_kb start $START_RSS end $END_RSS; db $(du -k "$WORK/bench.db" | cut -f1) KB"
echo "mixed: ingest $(rps "$WORK/mixed-ingest.txt")/s, compare $(rps "$WORK/mixed-compare.txt")/s, history $(rps "$WORK/mixed-history.txt")/s"
