#!/usr/bin/env python3
"""Writes the request bodies bench_server.sh sends: a perf stat -x, capture of
REPS repetitions x 10 counters (as `perf stat -o FILE --append` writes it:
a '# started on' header per repetition), wrapped in the JSON of
POST /api/v1/projects/{p}/runs.

usage: server_capture.py REPS ROLE OUT.json
Counter values jitter by a fixed-seed +-3% so that summaries are not degenerate.
"""
import json
import random
import sys

# (value, unit, event) in the shape of tests/data/perf-stat/public-hw-counters.csv.
COUNTERS = [
    (2.27, "msec", "task-clock"), (64, "", "page-faults"), (1, "", "context-switches"),
    (0, "", "cpu-migrations"), (8_100_000, "", "cycles"), (12_400_000, "", "instructions"),
    (2_300_000, "", "branches"), (41_000, "", "branch-misses"), (310_000, "", "cache-references"),
    (22_000, "", "cache-misses"),
]


def capture(reps, rng):
    lines = []
    for _ in range(reps):
        lines += ["# started on Sun Nov 22 02:11:05 2026", ""]
        for value, unit, event in COUNTERS:
            v = value * rng.uniform(0.97, 1.03)
            text = f"{v:.2f}" if unit == "msec" else f"{v:.0f}"
            lines.append(f"{text},{unit},{event},2268793,100.00,,")
    return "\n".join(lines) + "\n"


def main():
    reps, role, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rng = random.Random(42 if role == "baseline" else 43)
    body = {"benchmark": "bench", "role": role, "git_sha": "0123456789ab", "branch": "main",
            "testbed": {"name": "bench-box", "cores": 2}, "perf_csv": capture(reps, rng)}
    with open(out, "w") as f:
        json.dump(body, f)


if __name__ == "__main__":
    main()
