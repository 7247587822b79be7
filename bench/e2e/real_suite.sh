#!/bin/sh
# Issue 41's "Done when" for suites, on this machine: a real google/benchmark
# suite (bench/e2e/real_suite.cpp, six benchmarks, built against Debian's
# libbenchmark) gated with `perfgate run --harness gbench`, RUNS times A/A
# (the baseline against itself) and RUNS times A/B (a candidate whose
# BM_Hash does 10% more work). Prints, per mode:
#   A/A runs that fail (exit 1);
#   the share of A/A benchmark verdicts that are unchanged (verdict pass
#   without an improved gated counter);
#   the share of A/B runs where BM_Hash is a regression;
#   how many times another benchmark was called a regression (A/A and A/B);
#   the repetitions per side the gated time used (mean, max).
#
#   bench/e2e/real_suite.sh [PERFGATE] [MODE]
#     PERFGATE  the perfgate binary (default build/dev/bin/perfgate)
#     MODE      before: today's fixed count, `-r $REPS` (default 10)
#               after:  sequential sampling, `--budget $BUDGET` (default 120)
#               both (default)
#
# Environment: RUNS (default 10), REPS, BUDGET, EXTRA (more perfgate run
# options, e.g. "--cpus 1"), KEEP=1 keeps the work directory (its JSON
# reports, one per run) and prints where it is.
set -eu

PERFGATE=${1:-build/dev/bin/perfgate}
MODE=${2:-both}
case "$PERFGATE" in /*) ;; *) PERFGATE=$(pwd)/$PERFGATE ;; esac
[ -x "$PERFGATE" ] || { echo "no perfgate binary at $PERFGATE (build the perfgate target)" >&2; exit 2; }
RUNS=${RUNS:-10}
REPS=${REPS:-10}
BUDGET=${BUDGET:-120}
EXTRA=${EXTRA:-}
HERE=$(cd "$(dirname "$0")" && pwd)

WORK=$(mktemp -d /tmp/perfgate-suite.XXXXXX)
if [ "${KEEP:-0}" = 1 ]; then echo "work directory: $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi
cd "$WORK"
c++ -O2 -o suite_a "$HERE/real_suite.cpp" -lbenchmark -lpthread
c++ -O2 -DSLOW_PCT=10 -o suite_b "$HERE/real_suite.cpp" -lbenchmark -lpthread
echo "suite: 6 benchmarks (bench/e2e/real_suite.cpp); A/B: BM_Hash +10% work; $RUNS runs per kind; $("$PERFGATE" --version | head -1)"

# kind (aa|ab), label, then perfgate run's options
run_kind() {
    kind=$1; label=$2; shift 2
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        i=$((i + 1))
        candidate=./suite_a
        [ "$kind" = ab ] && candidate=./suite_b
        start=$(date +%s)
        code=0
        # shellcheck disable=SC2086
        "$PERFGATE" run -q --db "$WORK/h.db" --harness gbench --baseline ./suite_a --candidate "$candidate" \
            --format json $EXTRA "$@" > "$label-$kind-$i.json" 2> "$label-$kind-$i.err" || code=$?
        echo "$code $(( $(date +%s) - start ))" > "$label-$kind-$i.code"
        echo "  $label $kind run $i: exit $code in $(( $(date +%s) - start )) s" >&2
    done
}

summarise() {
    python3 - "$1" "$RUNS" <<'PY'
import json, statistics, sys
label, runs = sys.argv[1], int(sys.argv[2])
def load(kind, i):
    code, secs = open(f"{label}-{kind}-{i}.code").read().split()
    try:
        report = json.load(open(f"{label}-{kind}-{i}.json"))
    except (OSError, ValueError):
        report = None
    return int(code), int(secs), report
def bench_state(b):
    if b["verdict"] == "fail":
        return "regression"
    if b["verdict"] == "inconclusive":
        return "inconclusive"
    gated = [c for c in b["counters"] if c.get("gated")]
    return "improvement" if any(c["status"] == "improvement" for c in gated) else "unchanged"
aa_fail = aa_unchanged = aa_verdicts = ab_caught = others = broken = 0
reps, secs = [], []
states = {}
for kind in ("aa", "ab"):
    for i in range(1, runs + 1):
        code, s, report = load(kind, i)
        secs.append(s)
        if report is None or code not in (0, 1, 3):
            broken += 1
            continue
        if kind == "aa" and code == 1:
            aa_fail += 1
        for b in report["benchmarks"]:
            st = bench_state(b)
            states[(kind, st)] = states.get((kind, st), 0) + 1
            if kind == "aa":
                aa_verdicts += 1
                aa_unchanged += st == "unchanged"
            if b["name"].startswith("BM_Hash") and kind == "ab":
                caught = st == "regression"
                ab_caught += caught
            elif st == "regression":
                others += 1
            for c in b["counters"]:
                if c.get("gated") and c.get("baseline"):
                    reps.append(c["baseline"]["n"])
print(f"{label}:")
print(f"  A/A runs that fail:                      {aa_fail} of {runs}")
print(f"  A/A benchmark verdicts unchanged:        {aa_unchanged} of {aa_verdicts}"
      f" ({100 * aa_unchanged / max(aa_verdicts, 1):.0f}%)")
print(f"  A/B runs with BM_Hash a regression:      {ab_caught} of {runs} ({100 * ab_caught / runs:.0f}%)")
print(f"  other benchmarks called a regression:    {others}")
if reps:
    print(f"  repetitions per side (gated time):       mean {statistics.mean(reps):.1f}, max {max(reps)}")
print(f"  wall time per run:                       mean {statistics.mean(secs):.0f} s")
print("  benchmark states: " + ", ".join(f"{k}/{s} {n}" for (k, s), n in sorted(states.items())))
if broken:
    print(f"  runs without a report (exit 2/4):        {broken}  (see the .err files with KEEP=1)")
PY
}

if [ "$MODE" = before ] || [ "$MODE" = both ]; then
    run_kind aa before -r "$REPS"
    run_kind ab before -r "$REPS"
    summarise before
fi
if [ "$MODE" = after ] || [ "$MODE" = both ]; then
    run_kind aa after --budget "$BUDGET"
    run_kind ab after --budget "$BUDGET"
    summarise after
fi
