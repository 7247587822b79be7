#!/bin/sh
# What one measured execution costs under each counting backend, against
# hyperfine (which only times): side by side, in one run, the wall time of
#
#   perfgate run --backend native -r 20 --warmup 1 --baseline CMD --candidate CMD
#   perfgate run --backend perf   -r 20 --warmup 1 --baseline CMD --candidate CMD
#   hyperfine -N -r 20 --warmup 1 CMD CMD
#
# (42 executions each) for a ~10 ms and a ~1 ms program, TRIALS times in
# rotating order; prints the median wall time of each and its ratio to
# hyperfine. Target: native <= 1.1x hyperfine.
#
# Then splits native's excess over hyperfine into perfgate's fixed cost per
# run (start-up, environment checks, git, the store, the report: `perfgate
# run -r 1 --warmup 0` of `true`, minus its 2 executions) and the rest per
# execution.
#
#   bench/bench_backends.sh [BUILD_DIR]      (default: ./build; needs hyperfine and perf)
#
# Environment: TRIALS (default 5), EVENTS (default: perfgate's default events).
set -eu

BUILD=${1:-build}
PERFGATE=$(cd "$BUILD/bin" && pwd)/perfgate
[ -x "$PERFGATE" ] || { echo "no perfgate binary in $BUILD/bin (build the perfgate target)" >&2; exit 2; }
command -v hyperfine > /dev/null || { echo "bench_backends.sh needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
TRIALS=${TRIALS:-5}
EVENTS=${EVENTS:-}

WORK=$(mktemp -d /tmp/perfgate-backends.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

now_ns() { date +%s%N; }

cat > spin.c <<'EOF'
#include <stdlib.h>
int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    volatile unsigned long x = 1;
    for (long i = 0; i < n; ++i) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return 0;
}
EOF
cc -O2 -o spin spin.c

# Iterations for a program of about $1 ns on an unloaded machine: the
# fastest of 20 runs (start-up included; the mean follows whatever else the
# machine is doing), twice, the second estimate from the first.
calibrate() {
    iters=1000000
    for _ in 1 2; do
        hyperfine -N -r 20 --warmup 2 --export-json cal.json "./spin $iters" > /dev/null 2>&1
        min_ns=$(python3 -c "import json; print(int(json.load(open('cal.json'))['results'][0]['min'] * 1e9))")
        iters=$((iters * $1 / (min_ns + 1)))
    done
    echo "$iters"
}

# One store per backend, kept across trials as a project's .perfgate/ is.
run_perfgate() {   # run_perfgate BACKEND CMD
    if [ -n "$EVENTS" ]; then set -- "$1" "$2" -e "$EVENTS"; fi
    backend=$1 cmd=$2; shift 2
    "$PERFGATE" run -q -r 20 --warmup 1 --backend "$backend" "$@" --db "$backend.db" --name spin \
        --baseline "$cmd" --candidate "$cmd" > /dev/null || true
}
run_hyperfine() {   # run_hyperfine CMD
    hyperfine -N -r 20 --warmup 1 --style none "$1" "$1" > /dev/null 2>&1
}

median() { python3 -c "import statistics,sys; print(int(statistics.median(int(x) for x in sys.argv[1:])))" "$@"; }
ms() { python3 -c "import sys; print(f'{int(sys.argv[1]) / 1e6:.0f} ms')" "$1"; }
ratio() { python3 -c "import sys; print(f'{int(sys.argv[1]) / int(sys.argv[2]):.2f}x')" "$1" "$2"; }

echo "perfgate: $PERFGATE ($("$PERFGATE" --version 2>/dev/null || echo '?')), $(hyperfine --version), $(perf --version)"
echo "each: 20 measured + 1 warmup executions per command, 2 commands; median of $TRIALS trials"
# perfgate's fixed cost: a run of 2 executions of `true`, less hyperfine's
# time for those 2 executions.
fixed_ns() {
    t_fixed=""
    for _ in 1 2 3 4 5; do
        t0=$(now_ns)
        "$PERFGATE" run -q -r 1 --warmup 0 --backend native --db native.db --name true --baseline true \
            --candidate true > /dev/null || true
        t1=$(now_ns)
        hyperfine -N -r 1 --style none true true > /dev/null 2>&1
        t2=$(now_ns)
        t_fixed="$t_fixed $(( (t1 - t0) - (t2 - t1) ))"
    done
    # shellcheck disable=SC2086
    median $t_fixed
}

printf '%-10s %-22s %12s %12s %12s   %-8s %-8s %s\n' program command native perf hyperfine native/h perf/h \
    "native's excess: per execution (hyperfine's mean per execution)"
fixed=$(fixed_ns)
for target_ms in 10 1; do
    iters=$(calibrate $((target_ms * 1000000)))
    cmd="./spin $iters"
    t_native="" t_perf="" t_hf=""
    i=0
    while [ $i -lt "$TRIALS" ]; do
        # Rotate the order so that a drift of the machine's speed is shared.
        for which in $(echo "native perf hyperfine native perf" | cut -d' ' -f$((i % 3 + 1))-$((i % 3 + 3))); do
            t0=$(now_ns)
            case $which in
            hyperfine) run_hyperfine "$cmd" ;;
            *) run_perfgate "$which" "$cmd" ;;
            esac
            t=$(($(now_ns) - t0))
            case $which in
            native) t_native="$t_native $t" ;;
            perf) t_perf="$t_perf $t" ;;
            hyperfine) t_hf="$t_hf $t" ;;
            esac
        done
        i=$((i + 1))
    done
    # shellcheck disable=SC2086
    n=$(median $t_native) p=$(median $t_perf) h=$(median $t_hf)
    per_exec=$(python3 -c "import sys; print(f'{(int(sys.argv[1]) - int(sys.argv[2]) - int(sys.argv[3])) / 42 / 1e6:.2f} ms')" \
        "$n" "$h" "$fixed")
    printf '%-10s %-22s %12s %12s %12s   %-8s %-8s %s\n' "~${target_ms} ms" "$cmd" "$(ms "$n")" "$(ms "$p")" \
        "$(ms "$h")" "$(ratio "$n" "$h")" "$(ratio "$p" "$h")" \
        "$per_exec ($(python3 -c "import sys; print(f'{int(sys.argv[1]) / 42 / 1e6:.1f} ms')" "$h"))"
done
echo "perfgate's fixed cost per run (start-up, checks, git, store, report): $(ms "$fixed")"
