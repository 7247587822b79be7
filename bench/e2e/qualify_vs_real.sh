#!/bin/sh
# Does perfgate qualify's injected slowdown predict a real one (issue 46)?
# For a CPU-bound C loop of about 5 ms and 50 ms, on each backend: qualify's
# A/A false-fail rate and smallest slowdown caught in 80% of gates, next to
# an independent check with `perfgate run`: RUNS A/A gates of the program
# against itself, and RUNS A/B gates per size against a second build with an
# extra loop of that size (a real code change: a different loop, compiled
# in). Prints one table row per program and backend.
#
#   bench/e2e/qualify_vs_real.sh [BUILD_DIR]      (default: ./build)
#
# Environment: RUNS (independent gates per point, default 10), GATES
# (qualify's --gates, default 10), SIZES (slowdowns in %, default
# "2 5 10 20"), BACKENDS (default "native callgrind"), PROGRAMS (default
# "5 50": milliseconds), REPS (-r of every gate, default 10).
set -eu

BUILD=${1:-build}
PERFGATE=$(cd "$BUILD/bin" && pwd)/perfgate
[ -x "$PERFGATE" ] || { echo "no perfgate binary in $BUILD/bin (build the perfgate target)" >&2; exit 2; }
RUNS=${RUNS:-10}
GATES=${GATES:-10}
SIZES=${SIZES:-2 5 10 20}
BACKENDS=${BACKENDS:-native callgrind}
PROGRAMS=${PROGRAMS:-5 50}
REPS=${REPS:-10}

WORK=$(mktemp -d /tmp/perfgate-qualify.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# The program: N iterations of its main loop, then EXTRA of a second loop
# that only the "real change" builds have (EXTRA is compiled in).
cat > prog.c <<'C'
#include <stdlib.h>
#ifndef EXTRA
#define EXTRA 0
#endif
int main(int argc, char** argv)
{
    volatile unsigned long s = 0;
    unsigned long n = strtoul(argv[1], 0, 10);
    for (unsigned long i = 0; i < n; i++) s += i * 7;
#if EXTRA > 0
    volatile unsigned long t = 1;
    for (unsigned long i = 0; i < (unsigned long)(EXTRA); i++) t ^= i + (t << 1);
#endif
    return 0;
}
C
cc -O1 -o prog prog.c
SIZES_CSV=$(echo $SIZES | tr ' ' ',')
echo "perfgate: $PERFGATE; sizes $SIZES_CSV%; $RUNS independent gates per point, qualify --gates $GATES; -r $REPS; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# The iterations that cost MS milliseconds of task-clock (time of one run).
iterations_for() {
    probe=20000000
    t0=$(date +%s%N); ./prog $probe; t1=$(date +%s%N)
    python3 -c "print(max(1, int($probe * $1 * 1e6 / ($t1 - $t0))))"
}

# The extra loop's iterations that add SIZE% of the program's cost on the
# counter gated (median of RUNS... one perfgate run of prog vs prog+probe
# extra loop measures the extra loop's cost per iteration).
gated_of() { # backend -> the counter the comparison is read on
    case $1 in callgrind) echo instructions ;; rusage) echo user-time ;; *) echo task-clock ;; esac
}

median_of() { # json file, counter, side -> median
    python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = next(c for c in r["benchmarks"][0]["counters"] if c["name"].startswith(sys.argv[2]))
print(c[sys.argv[3]]["median"])
PY
}

status_of() { # json file, counter -> status
    python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(next(c for c in r["benchmarks"][0]["counters"] if c["name"].startswith(sys.argv[2]))["status"])
PY
}

gate() { # backend, baseline cmd, candidate cmd, out file
    b=$1; shift
    r="-r $REPS"; [ "$b" = callgrind ] && r=""
    "$PERFGATE" run -q --db "$WORK/h.db" --backend "$b" $r --format json --name q --baseline "$1" --candidate "$2" \
        > "$3" 2>/dev/null || true
}

for ms in $PROGRAMS; do
    n=$(iterations_for "$ms")
    for b in $BACKENDS; do
        counter=$(gated_of "$b")
        runs=$RUNS; [ "$b" = callgrind ] && runs=1
        # Calibrate the extra loop: a build with PROBE extra iterations.
        probe=$((n / 2))
        cc -O1 -DEXTRA=$probe -o prog_probe prog.c
        gate "$b" "./prog $n" "./prog_probe $n" probe.json
        base=$(median_of probe.json "$counter" baseline)
        cand=$(median_of probe.json "$counter" candidate)
        # Independent A/A.
        aa=0; i=0
        while [ $i -lt "$runs" ]; do
            i=$((i + 1)); gate "$b" "./prog $n" "./prog $n" aa.json
            [ "$(status_of aa.json "$counter")" = regression ] && aa=$((aa + 1))
        done
        real80=""
        real_rates=""
        for s in $SIZES; do
            extra=$(python3 -c "print(max(1, round($s / 100 * $base / (($cand - $base) / $probe))))")
            cc -O1 -DEXTRA="$extra" -o "prog_$s" prog.c
            caught=0; i=0
            while [ $i -lt "$runs" ]; do
                i=$((i + 1)); gate "$b" "./prog $n" "./prog_$s $n" ab.json
                [ "$(status_of ab.json "$counter")" = regression ] && caught=$((caught + 1))
            done
            real_rates="$real_rates $s:$caught/$runs"
            if [ -z "$real80" ] && [ $((caught * 10)) -ge $((runs * 8)) ]; then real80=$s; fi
            # A smaller size caught more than a larger one: the larger one decides.
            if [ -n "$real80" ] && [ $((caught * 10)) -lt $((runs * 8)) ]; then real80=""; fi
        done
        r="-r $REPS"; [ "$b" = callgrind ] && r=""
        start=$(date +%s)
        "$PERFGATE" qualify -q --backend "$b" $r --baseline "./prog $n" --slowdowns "$SIZES_CSV" --gates "$GATES" \
            --time-budget 1800 --format json > q.json 2>q.err || { cat q.err >&2; exit 1; }
        secs=$(( $(date +%s) - start ))
        python3 - "$ms" "$b" "$counter" "$aa" "$runs" "${real80:-none}" "$real_rates" "$secs" <<'PY'
import json, sys
ms, b, counter, aa, runs, real80, rates, secs = sys.argv[1:]
q = json.load(open("q.json"))
c = next(c for c in q["counters"] if c["counter"] == counter)
ff = c["false_fails"]
d80 = c["detects_80"]
qr = " ".join(f'{s["requested_pct"]:g}:{s["caught"]["k"]}/{s["caught"]["n"]}' for s in c["slowdowns"])
print(f"| {ms} ms | {b} | {counter} | {ff['k']}/{ff['n']} [{100*ff['lower']:.0f}%, {100*ff['upper']:.0f}%] | "
      f"{aa}/{runs} | {d80['requested_pct'] if d80 else 'none':} | {real80} | {qr} | {rates.strip()} | {secs} s |")
PY
    done
done
