#!/bin/sh
# What a google/benchmark sample should be on this machine (issue 41,
# docs/cli.md#harnesses): the six benchmarks of bench/e2e/real_suite.cpp run as
# PROCS separate processes under each way of running them, and per way:
#   cov_sample  the spread (coefficient of variation, %) of the per-process
#               sample perfgate gates: one process's median of its rows of
#               cpu_time; the median over the six benchmarks;
#   within      the spread of the rows inside one process (CoV %, pooled);
#   between     the spread of the process means beyond what the rows inside
#               explain (CoV %; one-way ANOVA's between-process component);
#   s/proc      seconds per process;
#   cost        cov_sample^2 x s/proc: the time a test needs to resolve a
#               given change is proportional to it (lower is better).
# Ways: google/benchmark's defaults (one repetition of 0.5 s), repetitions
# inside the process (--benchmark_repetitions, the median per process as the
# sample), its random interleaving of the repetitions, a shorter min-time,
# pinned to one CPU (taskset), and real_time beside cpu_time.
#
#   bench/e2e/gbench_spread.sh            PROCS (default 12) processes per way
set -eu

PROCS=${PROCS:-12}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/perfgate-spread.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
c++ -O2 -o suite "$HERE/real_suite.cpp" -lbenchmark -lpthread
CPU=$(($(nproc) - 1))

# label, then the command; PROCS processes, interleaved across ways so
# that the machine's load drifts over all of them alike.
WAYS='default|./suite
min_time 0.17|./suite --benchmark_min_time=0.17
3 reps x 0.17 s, median|./suite --benchmark_repetitions=3 --benchmark_min_time=0.17
3 reps x 0.17 s, interleaved, median|./suite --benchmark_repetitions=3 --benchmark_min_time=0.17 --benchmark_enable_random_interleaving=true
5 reps x 0.1 s, interleaved, median|./suite --benchmark_repetitions=5 --benchmark_min_time=0.1 --benchmark_enable_random_interleaving=true
3 reps x 0.17 s, interleaved, pinned|taskset -c '"$CPU"' ./suite --benchmark_repetitions=3 --benchmark_min_time=0.17 --benchmark_enable_random_interleaving=true'
p=0
while [ "$p" -lt "$PROCS" ]; do
    p=$((p + 1))
    w=0
    echo "$WAYS" | while IFS='|' read -r label cmd; do
        w=$((w + 1))
        start=$(date +%s.%N)
        sh -c "$cmd --benchmark_out=way$w-$p.json --benchmark_out_format=json" > /dev/null 2>&1
        echo "$label|$(echo "$(date +%s.%N) - $start" | bc)" > "way$w-$p.time"
    done
    echo "  process $p of $PROCS done for every way" >&2
done

python3 - "$PROCS" <<'PY'
import glob, json, math, statistics, sys
procs = int(sys.argv[1])
ways = sorted({int(f.split("-")[0][3:]) for f in glob.glob("way*-*.json")})
print(f"{'way':<40} {'time':<9} {'cov_sample':>10} {'within':>7} {'between':>8} {'s/proc':>7} {'cost':>8}")
for w in ways:
    label = open(f"way{w}-1.time").read().split("|")[0]
    secs = [float(open(f"way{w}-{p}.time").read().split("|")[1]) for p in range(1, procs + 1)]
    for time in ("cpu_time", "real_time"):
        per_bench = {}
        for p in range(1, procs + 1):
            rows = [r for r in json.load(open(f"way{w}-{p}.json"))["benchmarks"] if r.get("run_type") == "iteration"]
            for r in rows:
                per_bench.setdefault(r["name"], {}).setdefault(p, []).append(r[time])
        covs, within, between = [], [], []
        for name, by_proc in per_bench.items():
            samples = [statistics.median(v) for v in by_proc.values()]
            mean = statistics.mean(samples)
            covs.append(statistics.stdev(samples) / mean)
            k = statistics.mean(len(v) for v in by_proc.values())
            if k > 1:
                w_var = statistics.mean(statistics.variance(v) for v in by_proc.values())
                b_var = max(statistics.variance([statistics.mean(v) for v in by_proc.values()]) - w_var / k, 0.0)
                within.append(math.sqrt(w_var) / mean)
                between.append(math.sqrt(b_var) / mean)
        cov = 100 * statistics.median(covs)
        wi = f"{100 * statistics.median(within):.1f}" if within else "-"
        be = f"{100 * statistics.median(between):.1f}" if between else "-"
        s = statistics.mean(secs)
        print(f"{label:<40} {time:<9} {cov:>9.1f}% {wi:>7} {be:>8} {s:>7.2f} {cov * cov * s:>8.1f}")
PY
