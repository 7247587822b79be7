#!/bin/sh
# What one measured execution costs under each counting backend, against
# hyperfine (which only times): side by side, in one run, the wall time of
#
#   perfgate run --backend native -r R --warmup 1 --baseline CMD --candidate CMD
#   perfgate run --backend perf   -r R --warmup 1 --baseline CMD --candidate CMD
#   hyperfine -N -r R --warmup 1 CMD CMD
#
# (2R + 2 executions each) at R = 20 and R = 60, for programs of about 10, 5
# and 1 ms, TRIALS times in rotating order. Prints per program and tool the
# median wall time at -r 20 and its ratio to hyperfine's, then splits it
# into a cost per execution (the slope between -r 20 and -r 60) and a fixed
# cost per run (what is left at -r 20), each with its ratio to hyperfine's,
# and the CPU time of the whole run at -r 20 (perfgate or hyperfine and
# every execution: what the machine's load changes least) with its ratio.
# Targets (issue 41): native <= 1.05x hyperfine at 5 ms, <= 1.15x at 1 ms.
#
# Then perfgate's fixed cost per run on its own (start-up, environment checks,
# git, the store, the report): `perfgate run -r 1 --warmup 0` of `true`,
# less hyperfine's time for the same 2 executions, warm (right after another
# run) and cold (after 1.2 s without one: the kernel has switched its perf
# hooks off, runner/perf_event.hpp; other perf users on the machine can keep
# them on). Target: <= 10 ms.
#
#   bench/e2e/bench_backends.sh [BUILD_DIR]      (default: ./build; needs hyperfine and perf)
#
# Environment: TRIALS (default 5), EVENTS (default: perfgate's default
# events), PROGRAMS_MS (default "10 5 1"), BACKENDS (default "native perf"),
# BEFORE (another perfgate binary, e.g. main's: timed as "native-before" in
# the same rotation, for a before/after comparison).
set -eu

BUILD=${1:-build}
PERFGATE=$(cd "$BUILD/bin" && pwd)/perfgate
[ -x "$PERFGATE" ] || { echo "no perfgate binary in $BUILD/bin (build the perfgate target)" >&2; exit 2; }
command -v hyperfine > /dev/null || { echo "bench_backends.sh needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
if [ -n "${BEFORE:-}" ]; then
    BEFORE=$(cd "$(dirname "$BEFORE")" && pwd)/$(basename "$BEFORE")
    [ -x "$BEFORE" ] || { echo "BEFORE=$BEFORE is not an executable" >&2; exit 2; }
fi
export PERFGATE BEFORE="${BEFORE:-}" TRIALS="${TRIALS:-5}" EVENTS="${EVENTS:-}" PROGRAMS_MS="${PROGRAMS_MS:-10 5 1}" \
    BACKENDS="${BACKENDS:-native perf}"

WORK=$(mktemp -d /tmp/perfgate-backends.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

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

echo "perfgate: $PERFGATE ($("$PERFGATE" --version 2>/dev/null || echo '?'))${BEFORE:+, before: $BEFORE}"
echo "$(hyperfine --version), $(perf --version); $(nproc) CPUs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - <<'PY'
import json, os, resource, statistics, subprocess, time

perfgate, before = os.environ["PERFGATE"], os.environ["BEFORE"]
trials = int(os.environ["TRIALS"])
events = os.environ["EVENTS"]
programs = [int(x) for x in os.environ["PROGRAMS_MS"].split()]
tools = [b for b in os.environ["BACKENDS"].split()] + (["native-before"] if before else []) + ["hyperfine"]
low, high = 20, 60


def wall_ms(argv):
    return measured(argv)[0]


# Wall time and CPU time (user + sys of the process and every child it
# waited for: the benchmark's executions included), ms. The CPU time barely
# depends on the machine's load, the wall time does.
def measured(argv):
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter_ns()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t1, r1 = time.perf_counter_ns(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (t1 - t0) / 1e6, 1e3 * (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)


def argv_of(tool, cmd, r, warmup=1, db=None):
    if tool == "hyperfine":
        return ["hyperfine", "-N", "-r", str(r), "--warmup", str(warmup), "--style", "none", cmd, cmd]
    exe, backend = (before, "native") if tool == "native-before" else (perfgate, tool)
    extra = ["-e", events] if events else []
    # One store per tool, kept across trials as a project's .perfgate/ is.
    return [exe, "run", "-q", "-r", str(r), "--warmup", str(warmup), "--backend", backend, *extra,
            "--db", db or f"{tool}.db", "--name", "spin", "--baseline", cmd, "--candidate", cmd]


# Iterations for a program of about `ns` on an unloaded machine: the fastest
# of 20 runs (start-up included; the mean follows whatever else the machine
# is doing), twice, the second estimate from the first.
def calibrate(ns):
    iters = 1000000
    for _ in range(2):
        subprocess.run(["hyperfine", "-N", "-r", "20", "--warmup", "2", "--export-json", "cal.json", f"./spin {iters}"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        min_ns = json.load(open("cal.json"))["results"][0]["min"] * 1e9
        iters = int(iters * ns / (min_ns + 1))
    return iters


def spread(v):
    return f"{statistics.median(v):7.1f} [{min(v):.0f}-{max(v):.0f}]"


print(f"each: -r {low} and -r {high} ({2 * low + 2} and {2 * high + 2} executions: 1 warmup and R measured per "
      f"command, 2 commands); median [range] of {trials} trials, ms")
print(f"{'program':<22} {'tool':<14} {'-r 20 wall':>20} {'/hf':>6} {'per execution':>14} {'/hf':>6} "
      f"{'fixed per run':>14} {'-hf':>7} {'CPU at -r 20':>12} {'/hf':>6}")
for target in programs:
    cmd = f"./spin {calibrate(target * 1000000)}"
    times = {(t, r): [] for t in tools for r in (low, high)}
    cpu = {t: [] for t in tools}
    for i in range(trials):
        # Rotate the order so that a drift of the machine's speed is shared.
        order = tools[i % len(tools):] + tools[:i % len(tools)]
        for r in (low, high):
            for t in order:
                wall, used = measured(argv_of(t, cmd, r))
                times[(t, r)].append(wall)
                if r == low:
                    cpu[t].append(used)
    split = {}
    for t in tools:
        lo, hi = statistics.median(times[(t, low)]), statistics.median(times[(t, high)])
        per = (hi - lo) / (2 * (high - low))
        split[t] = (lo, per, lo - (2 * low + 2) * per)
    h_lo, h_per, h_fixed = split["hyperfine"]
    for t in tools:
        lo, per, fixed = split[t]
        c, h_c = statistics.median(cpu[t]), statistics.median(cpu["hyperfine"])
        print(f"{'~%d ms: %s' % (target, cmd):<22} {t:<14} {spread(times[(t, low)]):>20} {lo / h_lo:5.2f}x "
              f"{per:11.3f} ms {per / h_per:5.2f}x {fixed:11.1f} ms {fixed - h_fixed:+6.1f} {c:9.1f} ms {c / h_c:5.2f}x")


# perfgate's fixed cost: a run of 2 executions of `true`, less hyperfine's
# time for those 2 executions, warm and cold.
def fixed(exe, gap):
    diffs, cpus = [], []
    for _ in range(7):
        time.sleep(gap)
        p, p_cpu = measured([exe, "run", "-q", "-r", "1", "--warmup", "0", "--backend", "native", "--db", "true.db",
                             "--name", "true", "--baseline", "true", "--candidate", "true"])
        h, h_cpu = measured(["hyperfine", "-N", "-r", "1", "--style", "none", "true", "true"])
        diffs.append(p - h)
        cpus.append(p_cpu - h_cpu)
    return diffs, cpus


for name, exe in [("perfgate", perfgate)] + ([("before", before)] if before else []):
    (warm, warm_cpu), (cold, cold_cpu) = fixed(exe, 0.0), fixed(exe, 1.2)
    print(f"{name}'s fixed cost per run (start-up, checks, git, store, report), median [range] of 7, ms: "
          f"warm {spread(warm).strip()} (CPU {spread(warm_cpu).strip()}), cold {spread(cold).strip()} "
          f"(CPU {spread(cold_cpu).strip()})")
print(f"load average at the end: {' '.join(open('/proc/loadavg').read().split()[:3])}")
PY
