#!/usr/bin/python3
"""Reference values for google/benchmark inputs, pinned in tests/test_harness_gbench.cpp.

Run with Debian's interpreter, which has scipy:
    /usr/bin/python3 tests/reference/gen_gbench_refs.py

1. Real JSON (tests/data/gbench/baseline.json, candidate.json; README.txt there):
   per benchmark and counter (real_time, cpu_time in ns per iteration, the
   iteration rows only), the p-value of
       scipy.stats.mannwhitneyu(b, c, alternative="two-sided", method=M)
   where M is the method perfgate names: "exact" without ties and both sides
   below 50, "asymptotic" otherwise (R's wilcox.test rule), and the median
   delta 100 * (median(c) / median(b) - 1).
2. google/benchmark's own compare.py inputs (tools/gbench/Inputs/test3_run0.json
   and test3_run1.json at commit 267a11154f14269384879dc7f6b8d25acb3684db):
   the p-values of gbench.report.get_difference_report(run0, run1, utest=True)
   are those of scipy.stats.mannwhitneyu(x, y, alternative="two-sided") with
   scipy's default method ("auto": exact up to 8 per side without ties,
   asymptotic otherwise) on every row of a name, aggregates included; this
   prints the samples and that call's p-value.
"""
import json
import statistics

import scipy
from scipy.stats import mannwhitneyu

DATA = "tests/data/gbench/"
SCALE = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def iterations(path):
    out = {}
    for r in json.load(open(path))["benchmarks"]:
        if r.get("run_type") == "aggregate" or r.get("error_occurred"):
            continue
        s = SCALE[r["time_unit"]]
        d = out.setdefault(r["name"], {"real_time": [], "cpu_time": []})
        d["real_time"].append(r["real_time"] * s)
        d["cpu_time"].append(r["cpu_time"] * s)
    return out


def method_of(b, c):
    tied = len(set(b + c)) < len(b) + len(c)
    return "asymptotic" if tied or len(b) >= 50 or len(c) >= 50 else "exact"


print(f"// scipy {scipy.__version__}: mannwhitneyu(b, c, alternative=\"two-sided\", method=M), median delta %")
print("// clang-format off")
base, cand = iterations(DATA + "baseline.json"), iterations(DATA + "candidate.json")
for name in base:
    for counter in ("real_time", "cpu_time"):
        b, c = base[name][counter], cand[name][counter]
        m = method_of(b, c)
        p = mannwhitneyu(b, c, alternative="two-sided", method=m).pvalue
        delta = 100.0 * (statistics.median(c) / statistics.median(b) - 1.0)
        print(f'{{"{name}", "{counter}", "{m}", {p!r}, {delta!r}}},')
print("// clang-format on")


def rows(path):
    out = {}
    for r in json.load(open(path))["benchmarks"]:
        d = out.setdefault(r["name"], {"real_time": [], "cpu_time": []})
        d["real_time"].append(float(r["real_time"]))
        d["cpu_time"].append(float(r["cpu_time"]))
    return out


print("// compare.py's utest: scipy.stats.mannwhitneyu(x, y, alternative=\"two-sided\") (method auto)")
r0, r1 = rows(DATA + "compare_py_test3_run0.json"), rows(DATA + "compare_py_test3_run1.json")
for name in r0:
    if name not in r1:
        continue
    for counter in ("real_time", "cpu_time"):
        x, y = r0[name][counter], r1[name][counter]
        if min(len(x), len(y)) < 2:
            continue
        p = mannwhitneyu(x, y, alternative="two-sided").pvalue
        print(f'{{"{name}", "{counter}", {x}, {y}, {p!r}}},')
