#!/usr/bin/python3
"""The dashboard with a big suite stored: render time and size of the overview and a series page.

    /usr/bin/python3 bench/e2e/bench_dashboard_suite.py BUILD_DIR [--benchmarks 500] [--runs 20] [--samples 5] [--browser]

1. Seeds a fresh SQLite database through the JSON API (POST /api/v1/projects/bench/runs, one
   keep-alive connection, the upload path a CI job uses) with RUNS baseline runs of BENCHMARKS
   benchmarks, each run 3 repetitions x 4 counters (task-clock, instructions and cycles gated,
   page-faults not): BENCHMARKS x 4 series, deterministic (random.Random(5)).
2. Serves it with --public-read and times GET /p/bench (the overview, every page of it when
   it is paginated) and GET /p/bench/series?benchmark=...&counter=task-clock: SAMPLES renders
   each, every one after the page cache's 5-second expiry (server/pages/page_cache.hpp), so
   each is a full render (store queries + HTML); then the same page from the page cache. Also
   the comparison page of the first 100 benchmarks' first and last runs (100 pairs: the most
   one compare request takes).
   Prints medians, the HTML size and the rows on the page.
3. With --browser (chromium, chromium-driver, python3-selenium): navigation to dashboard.js
   ready on the overview's first page in headless Chromium (median of 3).
"""
import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE_AGE_S = 5.2  # page_cache_max_age (5 s) and a margin
COMPARE_PAIRS = 100  # the compare route's limit (docs/http-api.md#compare-runs)


def start(perfgate, db, public):
    args = [perfgate, "serve", "--db", db, "--listen", "127.0.0.1:0"] + (["--public-read"] if public else [])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = re.search(r"(http://\S+)", proc.stdout.readline()).group(1)
    return proc, urllib.parse.urlparse(url)


def capture(rnd, level):
    lines = []
    for _ in range(3):
        t = level * (1 + 0.01 * rnd.random())
        lines.append("%.3f,msec,task-clock,1,100.00,," % t)
        lines.append("%d,,instructions,1,100.00,," % int(t * 3.1e6))
        lines.append("%d,,cycles,1,100.00,," % int(t * 2.0e6 * (1 + 0.01 * rnd.random())))
        lines.append("%d,,page-faults,1,100.00,," % (120 + rnd.randrange(5)))
    return "\n".join(lines) + "\n"


def get(conn, path):
    t0 = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    ms = (time.perf_counter() - t0) * 1000
    if r.status != 200:
        sys.exit("GET %s: %d %s" % (path, r.status, body[:500]))
    return ms, body.decode()


def pages_of(html):
    """The overview's other pages, from its pager links (none when it is one page)."""
    return sorted(set(re.findall(r'href="(/p/bench\?page=\d+)"', html)), key=lambda u: int(u.split("=")[1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--benchmarks", type=int, default=500)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--browser", action="store_true")
    a = ap.parse_args()
    perfgate = os.path.join(a.build, "bin", "perfgate")
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.db")
        token = subprocess.run([perfgate, "token", "create", "--db", db, "--project", "bench", "--name", "b"],
                               check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        proc, url = start(perfgate, db, False)
        rnd = random.Random(5)
        t0 = time.time()
        conn = http.client.HTTPConnection(url.hostname, url.port)
        headers = {"Content-Type": "application/json", "Authorization": "Bearer " + token}
        names = ["BM_Suite/%d/%s" % (i // 4, ("copy", "parse", "hash", "sort")[i % 4]) for i in range(a.benchmarks)]
        ids = {}  # benchmark index -> [first run id, last run id], for the comparison
        for run in range(a.runs):
            for i, name in enumerate(names):
                body = {"benchmark": name, "role": "baseline", "git_sha": "%040x" % run, "branch": "main",
                        "testbed": {"name": "box"}, "perf_csv": capture(rnd, 1.0 + 0.05 * i)}
                conn.request("POST", "/api/v1/projects/bench/runs", json.dumps(body), headers)
                r = conn.getresponse()
                answer = r.read()
                if r.status not in (200, 201):
                    sys.exit("upload: %d" % r.status)
                if run in (0, a.runs - 1) and i < COMPARE_PAIRS:
                    ids.setdefault(i, []).append(json.loads(answer)["run_id"])
        print("seeded %d benchmarks x 4 counters x %d runs (%d uploads) in %.1f s" %
              (a.benchmarks, a.runs, a.benchmarks * a.runs, time.time() - t0))
        # The largest comparison one request may ask for (compare.too_many_pairs above 100 pairs).
        pairs = [ids[i] for i in sorted(ids)]
        t0 = time.perf_counter()
        conn.request("POST", "/api/v1/projects/bench/compare", json.dumps({"pairs": pairs}), headers)
        r = conn.getresponse()
        answer = r.read()
        if r.status not in (200, 201):
            sys.exit("compare: %d %s" % (r.status, answer[:300]))
        comparison = json.loads(answer)["comparison_id"]
        print("compare of %d pairs: %.0f ms" % (len(pairs), (time.perf_counter() - t0) * 1000))
        conn.close()
        proc.terminate()
        proc.wait()

        proc, url = start(perfgate, db, True)
        try:
            conn = http.client.HTTPConnection(url.hostname, url.port)
            series = "/p/bench/series?" + urllib.parse.urlencode(
                {"benchmark": names[len(names) // 2], "counter": "task-clock"})
            _, first = get(conn, "/p/bench")
            targets = [("overview", "/p/bench")]
            others = pages_of(first)  # the first page links the next and the last one
            if others:
                targets.append(("overview, last page", others[-1]))
            targets.append(("series page", series))
            targets.append(("comparison, %d bm." % len(pairs), "/p/bench/comparisons/%d" % comparison))
            for label, path in targets:
                cold = []
                for _ in range(a.samples):
                    time.sleep(CACHE_AGE_S)
                    ms, html = get(conn, path)
                    cold.append(ms)
                warm = [get(conn, path)[0] for _ in range(20)]
                rows = ", %d rows" % html.count('<tr class="benchmark"') if label.startswith("overview") else ""
                print("%-20s render median %7.1f ms (%s), from the page cache %.2f ms; HTML %.0f KiB%s%s" %
                      (label, statistics.median(cold), ", ".join("%.0f" % c for c in cold), statistics.median(warm),
                       len(html.encode()) / 1024, rows,
                       "; " + re.search(r"page 1 of \d+", html).group(0) if label == "overview" and others else ""))
            if a.browser:
                sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "browser"))
                from pgbrowser import start_driver, wait_ready  # noqa: E402
                d = start_driver()
                times = []
                for _ in range(3):
                    d.get("about:blank")
                    d.get("%s://%s:%d/p/bench" % (url.scheme, url.hostname, url.port))
                    times.append(wait_ready(d, 60))
                d.quit()
                print("overview in Chromium: navigation -> ready median %.0f ms (%s)" %
                      (statistics.median(times), ", ".join("%.0f" % t for t in times)))
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
