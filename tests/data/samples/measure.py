#!/usr/bin/env python3
"""Writes perfgate's samples format (docs/inputs.md) from real timings:
   measure.py OUT.json [SCALE]  -- SCALE multiplies the work of json_dumps."""
import json, sys, time, hashlib, resource

scale = int(sys.argv[2]) if len(sys.argv) > 2 else 1
reps = 12
doc = {"perfgate_samples": 1, "benchmarks": {}}

def timed(fn):
    t0 = time.perf_counter_ns(); fn(); return time.perf_counter_ns() - t0

data = {str(i): list(range(20)) for i in range(2000)}
lat, thr = [], []
for _ in range(reps):
    ns = timed(lambda: [json.dumps(data) for _ in range(scale)])
    lat.append(ns); thr.append(1e9 / ns)
doc["benchmarks"]["json_dumps"] = {"counters": {
    "latency": {"unit": "ns", "better": "lower", "samples": lat},
    "throughput": {"unit": "ops/s", "better": "higher", "gate": True, "samples": thr}}}

blob = b"x" * (1 << 20)
sha = [timed(lambda: hashlib.sha256(blob).digest()) for _ in range(reps)]
rss = [resource.getrusage(resource.RUSAGE_SELF).ru_maxrss for _ in range(reps)]
rss[3] = None  # a repetition without a value for this counter
doc["benchmarks"]["sha256_1MiB"] = {"counters": {
    "latency": {"unit": "ns", "samples": sha},
    "max-rss": {"unit": "KiB", "gate": False, "samples": rss}}}
with open(sys.argv[1], "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
