#!/usr/bin/python3
"""perfgate's own time to gate a big google/benchmark suite, and the size of its PR comment.

    /usr/bin/python3 bench/e2e/bench_suite.py BUILD_DIR [--benchmarks 500] [--repetitions 10] [--runs 5] [--keep DIR]

1. Writes a pair of google/benchmark JSON outputs (--benchmark_format=json with
   --benchmark_repetitions=10, aggregates included as google/benchmark writes them):
   BENCHMARKS benchmarks x 4 counters (real_time, cpu_time, items_per_second and the perf
   counter column INSTRUCTIONS), deterministic (random.Random(30) and (31)). In the candidate every
   50th benchmark (from 7) is 30% slower and every 100th (from 3) 20% faster; the rest is
   the same distribution.
2. Runs `perfgate compare --baseline A.json --candidate B.json --format F` RUNS times per format
   (markdown, json, text) and prints the median wall time and CPU time (user + sys of the child;
   the target is < 5 s for markdown at 500 benchmarks), the output's length in characters, and
   whether the markdown fits GitHub's 65,536-character comment limit.
"""
import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

COMMENT_LIMIT = 65536


def suite(n, reps, candidate):
    rnd = random.Random(31 if candidate else 30)  # two independent draws of the noise
    rows = []
    for i in range(n):
        name = "BM_Suite/%d/%s" % (i // 4, ("copy", "parse", "hash", "sort")[i % 4])
        level = 200.0 + 37.0 * i  # ns per iteration
        factor = 1.0
        if candidate and i % 50 == 7:
            factor = 1.3
        elif candidate and i % 100 == 3:
            factor = 0.8
        times = []
        for k in range(reps):
            noise = 1 + rnd.gauss(0, 0.01)
            real = level * factor * noise
            cpu = real * (0.98 + 0.01 * rnd.random())
            times.append(real)
            rows.append({"name": name, "family_index": i, "per_family_instance_index": 0, "run_name": name,
                         "run_type": "iteration", "repetitions": reps, "repetition_index": k, "threads": 1,
                         "iterations": int(1e8 / level), "real_time": real, "cpu_time": cpu, "time_unit": "ns",
                         "INSTRUCTIONS": round(level * 3.1 * factor * (1 + rnd.gauss(0, 0.001))),
                         "items_per_second": 1e9 / cpu})
        mean = statistics.mean(times)
        for agg, value in (("mean", mean), ("median", statistics.median(times)),
                           ("stddev", statistics.stdev(times)), ("cv", statistics.stdev(times) / mean)):
            rows.append({"name": name + "_" + agg, "family_index": i, "per_family_instance_index": 0,
                         "run_name": name, "run_type": "aggregate", "repetitions": reps, "threads": 1,
                         "aggregate_name": agg, "aggregate_unit": "percentage" if agg == "cv" else "time",
                         "iterations": reps, "real_time": value, "cpu_time": value, "time_unit": "ns"})
    return {"context": {"date": "2026-11-26T22:00:00+00:00", "host_name": "bench", "executable": "./suite",
                        "num_cpus": 2, "mhz_per_cpu": 2000, "cpu_scaling_enabled": False, "caches": [],
                        "load_avg": [0.1, 0.1, 0.1], "library_build_type": "release"},
            "benchmarks": rows}


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode not in (0, 1, 2):  # pass, fail, inconclusive
        sys.exit("perfgate failed (%d): %s" % (p.returncode, p.stderr.decode()[:2000]))
    return wall, cpu, p.stdout.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--benchmarks", type=int, default=500)
    ap.add_argument("--repetitions", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", help="write A.json and B.json here and keep them")
    a = ap.parse_args()
    perfgate = os.path.join(a.build, "bin", "perfgate")
    out_dir = a.keep or tempfile.mkdtemp()
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for side, candidate in (("A.json", False), ("B.json", True)):
        path = os.path.join(out_dir, side)
        with open(path, "w") as f:
            json.dump(suite(a.benchmarks, a.repetitions, candidate), f, indent=2)
        paths.append(path)
    print("suite: %d benchmarks x 4 counters x %d repetitions; A.json %.1f MiB, B.json %.1f MiB" %
          (a.benchmarks, a.repetitions, os.path.getsize(paths[0]) / 2**20, os.path.getsize(paths[1]) / 2**20))
    for fmt in ("markdown", "json", "text"):
        cmd = [perfgate, "compare", "--baseline", paths[0], "--candidate", paths[1], "--format", fmt]
        runs = [timed(cmd) for _ in range(a.runs)]
        walls = [r[0] for r in runs]
        cpus = [r[1] for r in runs]
        text = runs[0][2]
        line = ("%-8s wall median %.3f s (min %.3f, max %.3f), CPU median %.3f s; output %d characters" %
                (fmt, statistics.median(walls), min(walls), max(walls), statistics.median(cpus), len(text)))
        if fmt == "markdown":
            rows = [ln for ln in text.splitlines() if ln.startswith("| ") and " | BM" in ln]
            line += ("; %s GitHub's %d-character comment limit; rows: %d regression, %d improvement, "
                     "%d unchanged listed" % ("within" if len(text) <= COMMENT_LIMIT else "OVER", COMMENT_LIMIT,
                                              sum(r.startswith("| 🔴 |") for r in rows),
                                              sum(r.startswith("| 🟢 |") for r in rows),
                                              sum(r.startswith("| ⚪ |") for r in rows)))
        print(line)
    print("command: %s compare --baseline %s --candidate %s --format markdown" % (perfgate, paths[0], paths[1]))
    if not a.keep:
        for p in paths:
            os.remove(p)
        os.rmdir(out_dir)


if __name__ == "__main__":
    main()
