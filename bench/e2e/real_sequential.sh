#!/bin/sh
# Real runs of sequential sampling on this machine (issue 14's figures, issue
# 41's single-program ones): a CPU-bound C loop (~15 ms) as the baseline, the
# same loop with EXTRA_PCT% more iterations as the candidate (A/B), and the
# baseline against itself (A/A), RUNS times each, with `--budget` (sequential
# sampling) and with a fixed `-r 10`. Prints, per mode, the verdict counts,
# task-clock's status counts (regression / improvement / unchanged /
# inconclusive), the repetitions per side that task-clock used, and the
# median CoV of task-clock that the runs saw.
#
#   bench/e2e/real_sequential.sh [BUILD_DIR]      (default: ./build)
#
# Environment: RUNS (default 20), BUDGET (seconds, default 60), ITER (loop
# iterations of the baseline, default 15000000), EXTRA_PCT (default 10),
# BACKEND (perf, the default, or native), MODES (which of ab-budget, ab-r10,
# aa-budget, aa-r10 to run, in that order; default all four), NOISE_PCT
# (default 0): each execution of the loop draws its iterations from
# ITER x (1 + NOISE_PCT/100 x z), z standard normal (getrandom), on both
# sides alike: noise of a known CoV on top of the machine's, for figures "at
# CoV ~5%" on a machine whose own task-clock noise is lower or varies.
# THRESHOLD (percent, default: the policy's 2%): task-clock's threshold, set
# through a policy file; at CoV 5% an equivalence test needs about 150
# repetitions a side to show "unchanged" within +-2% (docs/statistics.md).
set -eu

BUILD=${1:-build}
PERFGATE=$(cd "$BUILD/bin" && pwd)/perfgate
[ -x "$PERFGATE" ] || { echo "no perfgate binary in $BUILD/bin (build the perfgate target)" >&2; exit 2; }
RUNS=${RUNS:-20}
BUDGET=${BUDGET:-60}
ITER=${ITER:-15000000}
EXTRA_PCT=${EXTRA_PCT:-10}
BACKEND=${BACKEND:-perf}
MODES=${MODES:-ab-budget ab-r10 aa-budget aa-r10}
NOISE_PCT=${NOISE_PCT:-0}
THRESHOLD=${THRESHOLD:-}

WORK=$(mktemp -d /tmp/perfgate-seq.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
cat > loop.c <<'C'
#include <math.h>
#include <stdlib.h>
#include <sys/random.h>
int main(int argc, char** argv)
{
    volatile long s = 0;
    long n = atol(argv[1]);
    double noise = argc > 2 ? atof(argv[2]) / 100 : 0;
    if (noise > 0) {
        /* Box-Muller from two uniform draws in (0, 1]. */
        unsigned long long r[2];
        if (getrandom(r, sizeof r, 0) != sizeof r) return 2;
        double u1 = ((r[0] >> 11) + 1) * 0x1p-53, u2 = (r[1] >> 11) * 0x1p-53;
        double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
        n = (long)(n * (1 + noise * z));
        if (n < 0) n = 0;
    }
    for (long i = 0; i < n; i++) s += i;
    return 0;
}
C
cc -O1 -o loop loop.c -lm
if [ -n "$THRESHOLD" ]; then
    printf '{"threshold_pct": %s}\n' "$THRESHOLD" > policy.json
    POLICY="--policy $WORK/policy.json"
else
    POLICY=""
fi
CAND_ITER=$((ITER + ITER * EXTRA_PCT / 100))
echo "perfgate: $PERFGATE; backend $BACKEND; baseline: ./loop $ITER $NOISE_PCT; A/B candidate: ./loop $CAND_ITER $NOISE_PCT (+$EXTRA_PCT% work; noise $NOISE_PCT% of the iterations); $RUNS runs per mode; threshold ${THRESHOLD:-2 (default)}%; load: $(cut -d' ' -f1-3 /proc/loadavg)"

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
        "$PERFGATE" run -q --db "$WORK/h.db" --backend "$BACKEND" -e task-clock --format json $POLICY "$@" > out.json \
            2>/dev/null || code=$?
        end=$(date +%s.%N)
        python3 - "$code" "$start" "$end" >> "$tsv" <<'PY'
import json, sys
code, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
r = json.load(open("out.json"))
tc = next(c for c in r["benchmarks"][0]["counters"] if c["name"].startswith("task-clock"))
cov = tc["baseline"]["cov"]
print(f'{r["verdict"]}\t{tc["baseline"]["n"]}\t{end - start:.2f}\t{code}\t{tc["status"]}\t{cov if cov is not None else "nan"}')
PY
    done
    python3 - "$label" "$tsv" <<'PY'
import math, statistics, sys
label = sys.argv[1]
rows = [l.split("\t") for l in open(sys.argv[2]).read().split("\n") if l]
counts = {v: sum(r[0] == v for r in rows) for v in ("pass", "fail", "inconclusive")}
status = {v: sum(r[4] == v for r in rows) for v in ("regression", "improvement", "unchanged", "inconclusive")}
reps = [int(r[1]) for r in rows]
secs = [float(r[2]) for r in rows]
covs = [float(r[5]) for r in rows if not math.isnan(float(r[5]))]
print(f"{label:<26} pass {counts['pass']:>2}  fail {counts['fail']:>2}  inconclusive {counts['inconclusive']:>2}  "
      f"reps/side mean {statistics.mean(reps):5.1f} median {statistics.median(reps):4.1f} "
      f"[{min(reps)}-{max(reps)}]  wall/run mean {statistics.mean(secs):5.1f} s")
print(f"{'':<26} task-clock: regression {status['regression']}, improvement {status['improvement']}, "
      f"unchanged {status['unchanged']}, inconclusive {status['inconclusive']}; baseline CoV median "
      f"{100 * statistics.median(covs):.1f}% [{100 * min(covs):.1f}-{100 * max(covs):.1f}%]")
PY
}

for mode in $MODES; do
    case $mode in
    ab-budget) run_mode "A/B +${EXTRA_PCT}% --budget $BUDGET" --name ab --baseline "./loop $ITER $NOISE_PCT" \
        --candidate "./loop $CAND_ITER $NOISE_PCT" --budget "$BUDGET" ;;
    ab-r10) run_mode "A/B +${EXTRA_PCT}% -r 10" --name ab --baseline "./loop $ITER $NOISE_PCT" \
        --candidate "./loop $CAND_ITER $NOISE_PCT" -r 10 ;;
    aa-budget) run_mode "A/A --budget $BUDGET" --name aa --baseline "./loop $ITER $NOISE_PCT" \
        --candidate "./loop $ITER $NOISE_PCT" --budget "$BUDGET" ;;
    aa-r10) run_mode "A/A -r 10" --name aa --baseline "./loop $ITER $NOISE_PCT" --candidate "./loop $ITER $NOISE_PCT" \
        -r 10 ;;
    *) echo "unknown mode '$mode' in MODES (ab-budget, ab-r10, aa-budget, aa-r10)" >&2; exit 2 ;;
    esac
done
