#!/usr/bin/env python3
"""ctest junit_schema: `perfgate compare --format junit` (docs/report.md
"JUnit XML") on a failing, a passing, an inconclusive and a suite report, and
on hostile benchmark names, each checked against tests/data/junit/junit.xsd
with xmllint and read back: the counts agree with the test cases, a
regression is a <failure> with its interval, an inconclusive counter a
<skipped> with its reason, a failed benchmark an <error>. The schema itself
must refuse two broken documents, so the check cannot pass vacuously.

usage: check_junit.py PERFGATE SOURCE_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

PERFGATE, SOURCE, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
SCHEMA = os.path.join(SOURCE, "tests", "data", "junit", "junit.xsd")
GBENCH = os.path.join(SOURCE, "tests", "data", "gbench")
os.makedirs(WORK, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def perf_csv(path, task_clock_ms, instructions=None):
    """perf stat -x, output of len(task_clock_ms) appended runs."""
    with open(path, "w") as f:
        for i, ms in enumerate(task_clock_ms):
            f.write("# started on Sun Nov 22 02:11:05 2026\n\n")
            f.write(f"{ms:.3f},msec,task-clock,{int(ms * 1e6)},100.00,0.9,CPUs utilized\n")
            f.write(f"64,,page-faults,{int(ms * 1e6)},100.00,13.9,K/sec\n")
            f.write(f"{instructions[i] if instructions else '<not supported>'},,instructions,0,100.00,,\n")
    return path


def validate(xml_path):
    r = subprocess.run(["xmllint", "--noout", "--schema", SCHEMA, xml_path], capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()


def junit(name, baseline, candidate, expect_exit):
    out = os.path.join(WORK, name + ".xml")
    r = subprocess.run([PERFGATE, "compare", "--baseline", baseline, "--candidate", candidate, "--format", "junit",
                        "--output", out], capture_output=True, text=True)
    check(r.returncode == expect_exit, f"{name}: exit {r.returncode}, expected {expect_exit}: {r.stderr.strip()}")
    check(r.stdout.startswith("<?xml"), f"{name}: stdout is the XML")
    ok, why = validate(out)
    check(ok, f"{name}: not valid against junit.xsd: {why}")
    root = ET.parse(out).getroot()
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    for node in (root, suite):
        check(int(node.get("tests")) == len(cases), f"{name}: tests= {node.get('tests')} vs {len(cases)} cases")
        for kind, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            n = sum(1 for c in cases if c.find(kind) is not None)
            check(int(node.get(attr)) == n, f"{name}: {attr}={node.get(attr)} but {n} <{kind}> cases")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    return cases, props


def by_key(cases):
    return {(c.get("classname"), c.get("name")): c for c in cases}


# A 3x slower candidate: a regression, a <failure> naming the change and its interval.
base = perf_csv(os.path.join(WORK, "base.csv"), [10.0 + 0.1 * i for i in range(12)])
slow = perf_csv(os.path.join(WORK, "slow.csv"), [30.0 + 0.3 * i for i in range(12)])
cases, props = junit("fail", base, slow, 1)
check(props.get("verdict") == "fail", f"fail: verdict property {props.get('verdict')}")
tc = [c for c in cases if c.get("name") == "task-clock"]
check(len(tc) == 1 and tc[0].find("failure") is not None, "fail: task-clock is a <failure>")
if tc and tc[0].find("failure") is not None:
    f = tc[0].find("failure")
    check(f.get("type") == "regression", "fail: failure type regression")
    check("+" in f.get("message") and "interval" in f.get("message") and "threshold" in f.get("message"),
          f"fail: message gives change, interval and threshold: {f.get('message')}")

# The same samples on both sides: unchanged, every gated counter passes.
tight = perf_csv(os.path.join(WORK, "tight.csv"), [10.0 + 0.01 * i for i in range(12)])
same = perf_csv(os.path.join(WORK, "same.csv"), [10.0 + 0.01 * i for i in range(12)])
cases, props = junit("pass", tight, same, 0)
check(props.get("verdict") == "pass", f"pass: verdict property {props.get('verdict')}")
check(all(c.find("failure") is None and c.find("error") is None for c in cases), "pass: no failure or error")
check(any(c.get("name") == "task-clock" and c.find("system-out") is not None for c in cases),
      "pass: task-clock passes with its change in <system-out>")

# Three noisy samples a side: inconclusive, a <skipped> with the reason.
few_b = perf_csv(os.path.join(WORK, "few_b.csv"), [10.0, 14.0, 8.0])
few_c = perf_csv(os.path.join(WORK, "few_c.csv"), [11.0, 7.0, 15.0])
cases, props = junit("inconclusive", few_b, few_c, 0)
check(props.get("verdict") == "inconclusive", f"inconclusive: verdict property {props.get('verdict')}")
tc = [c for c in cases if c.get("name") == "task-clock"]
check(len(tc) == 1 and tc[0].find("skipped") is not None, "inconclusive: task-clock is <skipped>")
if tc and tc[0].find("skipped") is not None:
    s = tc[0].find("skipped")
    check(s.get("type") in ("inconclusive", "insufficient") and len(s.get("message")) > len(s.get("type")),
          f"inconclusive: skipped says why: {s.get('message')}")

# A google/benchmark suite (56 benchmarks; the candidate doubles BM_Accumulate's work).
cases, props = junit("suite", os.path.join(GBENCH, "baseline.json"), os.path.join(GBENCH, "candidate.json"), 1)
names = {c.get("classname") for c in cases}
check(len(names) >= 3, f"suite: {len(names)} benchmarks as classnames")
check(any(c.get("classname").startswith("BM_Accumulate") and c.find("failure") is not None for c in cases),
      "suite: BM_Accumulate regressed")

# A benchmark that failed to run (SkipWithError): an <error>.
cases, props = junit("failed", os.path.join(GBENCH, "with_error.json"), os.path.join(GBENCH, "with_error.json"), 0)
errs = [c for c in cases if c.find("error") is not None]
check(len(errs) == 1 and "no input file" in errs[0].find("error").get("message"),
      f"failed: one <error> with the harness' message: {[ET.tostring(c) for c in errs]}")

# Hostile names: markup characters, a quote, an escape byte, a line break.
hostile = "BM_<x>&\"y'\x1b[31m\nz"
for side in ("baseline", "candidate"):
    d = json.load(open(os.path.join(GBENCH, side + ".json")))
    d["benchmarks"] = [b for b in d["benchmarks"] if b["name"] == "BM_Sort/64"]
    for b in d["benchmarks"]:
        b["name"] = b["run_name"] = hostile
    json.dump(d, open(os.path.join(WORK, side + "_hostile.json"), "w"))
cases, props = junit("hostile", os.path.join(WORK, "baseline_hostile.json"),
                     os.path.join(WORK, "candidate_hostile.json"), 0)
check(len(cases) >= 1 and all(c.get("classname").startswith("BM_<x>") and "\x1b" not in c.get("classname")
                              for c in cases),
      f"hostile: the name reads back, markup intact, no escape byte: {[c.get('classname') for c in cases]}")

# The schema compiles and accepts a minimal document, and refuses what it must: a test case without a name, a negative count.
broken = {
    "no_name": '<testsuites tests="1" failures="0" errors="0"><testsuite name="s" tests="1" failures="0" errors="0">'
               '<testcase classname="c"/></testsuite></testsuites>',
    "negative": '<testsuites tests="-1" failures="0" errors="0"><testsuite name="s" tests="1" failures="0" '
                'errors="0"><testcase classname="c" name="n"/></testsuite></testsuites>',
}
minimal = os.path.join(WORK, "minimal.xml")
open(minimal, "w").write('<testsuites tests="1" failures="0" errors="0"><testsuite name="s" tests="1" failures="0" '
                         'errors="0"><testcase classname="c" name="n"/></testsuite></testsuites>')
ok, why = validate(minimal)
check(ok, f"the schema accepts a minimal document: {why}")
for name, text in broken.items():
    path = os.path.join(WORK, f"broken_{name}.xml")
    open(path, "w").write(text)
    ok, _ = validate(path)
    check(not ok, f"the schema refuses {name}")

# A bad --format names the choices.
r = subprocess.run([PERFGATE, "compare", "--baseline", base, "--candidate", same, "--format", "xunit"],
                   capture_output=True, text=True)
check(r.returncode == 2 and "junit" in r.stderr, f"--format xunit: exit 2 naming junit: {r.returncode} {r.stderr}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
