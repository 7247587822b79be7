#!/bin/sh
# Real runs of sequential sampling on this machine (issue 14's figures):
# a CPU-bound C loop (~15 ms) as the baseline, the same loop with 10% more
# iterations as the candidate (A/B), and the baseline against itself (A/A),
# RUNS times each, with `--budget` (sequential sampling) and with a fixed
# `-r 10`. Prints, per mode, the verdict counts and the repetitions per side
# that task-clock used.
#
#   bench/real_sequential.sh [BUILD_DIR]      (default: ./build)
#
# Environment: RUNS (default 20), BUDGET (seconds, default 60), ITER (loop
# iterations of the baseline, default 15000000), EXTRA_PCT (default 10).
set -eu

BUILD=${1:-build}
PERFGATE=$(cd "$BUILD/bin" && pwd)/perfgate
[ -x "$PERFGATE" ] || { echo "no perfgate binary in $BUILD/bin (build the perfgate target)" >&2; exit 2; }
RUNS=${RUNS:-20}
BUDGET=${BUDGET:-60}
ITER=${ITER:-15000000}
EXTRA_PCT=${EXTRA_PCT:-10}

WORK=$(mktemp -d /tmp/perfgate-seq.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
cat > loop.c <<'C'
#include <stdlib.h>
int main(int argc, char** argv)
{
    volatile long s = 0;
    long n = atol(argv[1]);
    for (long i = 0; i < n; i++) s += i;
    return 0;
}
C
cc -O1 -o loop loop.c
CAND_ITER=$((ITER + ITER * EXTRA_PCT / 100))
echo "baseline: ./loop $ITER; A/B candidate: ./loop $CAND_ITER (+$EXTRA_PCT% work); $RUNS runs per mode"

# mode label, then perfgate run arguments
run_mode() {
    label=$1; shift
    tsv=$(echo "$label" | tr -c 'A-Za-z0-9\n' '_').tsv
    : > "$tsv"
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        i=$((i + 1))
        start=$(date +%s.%N)
        code=0
        "$PERFGATE" run -q --db "$WORK/h.db" -e task-clock --format json "$@" > out.json 2>/dev/null || code=$?
        end=$(date +%s.%N)
        python3 - "$code" "$start" "$end" >> "$tsv" <<'PY'
import json, sys
code, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
r = json.load(open("out.json"))
tc = next(c for c in r["benchmarks"][0]["counters"] if c["name"] == "task-clock")
print(f'{r["verdict"]}\t{tc["baseline"]["n"]}\t{end - start:.2f}\t{code}')
PY
    done
    python3 - "$label" "$tsv" <<'PY'
import statistics, sys
label = sys.argv[1]
rows = [l.split("\t") for l in open(sys.argv[2]).read().split("\n") if l]
counts = {v: sum(r[0] == v for r in rows) for v in ("pass", "fail", "inconclusive")}
reps = [int(r[1]) for r in rows]
secs = [float(r[2]) for r in rows]
print(f"{label:<26} pass {counts['pass']:>2}  fail {counts['fail']:>2}  inconclusive {counts['inconclusive']:>2}  "
      f"reps/side mean {statistics.mean(reps):5.1f} median {statistics.median(reps):4.1f} "
      f"[{min(reps)}-{max(reps)}]  wall/run mean {statistics.mean(secs):5.1f} s")
PY
}

run_mode "A/B +${EXTRA_PCT}% --budget $BUDGET" --name ab --baseline "./loop $ITER" --candidate "./loop $CAND_ITER" --budget "$BUDGET"
run_mode "A/B +${EXTRA_PCT}% -r 10" --name ab --baseline "./loop $ITER" --candidate "./loop $CAND_ITER" -r 10
run_mode "A/A --budget $BUDGET" --name aa --baseline "./loop $ITER" --candidate "./loop $ITER" --budget "$BUDGET"
run_mode "A/A -r 10" --name aa --baseline "./loop $ITER" --candidate "./loop $ITER" -r 10
