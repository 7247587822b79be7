#!/usr/bin/python3
"""Dashboard figures: chart time in headless Chromium, page latency under wrk, embedded asset bytes.

    /usr/bin/python3 bench/e2e/bench_dashboard.py BUILD_DIR [--points 10000] [--seconds 10]

1. Seeds a fresh database through the JSON API with POINTS baseline runs of one series (the upload
   path a CI job uses), then serves it with --public-read.
2. Opens /p/bench/series?... in headless Chromium five times and reports the time from navigation
   start to the chart drawn (window.perfgate.drawnAt, performance.now() in dashboard.js; target < 1 s
   at 10,000 points) and the page's HTML size.
3. wrk -c64 on the overview page, a 60-point series page and the POINTS series page: p50/p99.
4. The bytes the embedded assets add to the binary.
Needs chromium, chromium-driver, python3-selenium and wrk (ci/install-deps.sh installs them).
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "browser"))
from pgbrowser import start_driver, wait_ready  # noqa: E402


def start(perfgate, db, public):
    args = [perfgate, "serve", "--db", db, "--listen", "127.0.0.1:0"] + (["--public-read"] if public else [])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = re.search(r"(http://\S+)", proc.stdout.readline()).group(1)
    return proc, url


def post(url, token, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer " + token})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())


def wrk(url, seconds):
    out = subprocess.run(["wrk", "-t2", "-c64", "-d%ds" % seconds, "--latency", url], capture_output=True,
                         text=True, check=True).stdout
    pct = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", out, re.M))
    rate = re.search(r"Requests/sec:\s+(\S+)", out).group(1)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return pct.get("50"), pct.get("99"), rate, non2xx.group(1) if non2xx else "0"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("--points", type=int, default=10000)
    p.add_argument("--seconds", type=int, default=10)
    a = p.parse_args()
    perfgate = os.path.join(a.build, "bin", "perfgate")
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.db")
        token = subprocess.run([perfgate, "token", "create", "--db", db, "--project", "bench", "--name", "b"],
                               check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        proc, url = start(perfgate, db, False)
        rnd = random.Random(1)
        t0 = time.time()
        for i in range(a.points):
            csv = "".join("%.3f,msec,task-clock,1,100.00,,\n" % (100 * (1 + 0.02 * rnd.random())) for _ in range(3))
            bench = "parse" if i < a.points - 60 or a.points <= 60 else "small"
            post(url + "/api/v1/projects/bench/runs", token,
                 {"benchmark": "parse", "role": "baseline", "git_sha": "%040x" % i, "branch": "main",
                  "testbed": {"name": "box"}, "perf_csv": csv})
            if i < 60:
                post(url + "/api/v1/projects/bench/runs", token,
                     {"benchmark": "small", "role": "baseline", "git_sha": "%040x" % i, "branch": "main",
                      "testbed": {"name": "box"}, "perf_csv": csv})
            del bench
        print("seeded %d runs in %.1f s" % (a.points + 60, time.time() - t0))
        proc.terminate()
        proc.wait()

        proc, url = start(perfgate, db, True)
        try:
            big = url + "/p/bench/series?benchmark=parse&counter=task-clock"
            small = url + "/p/bench/series?benchmark=small&counter=task-clock"
            html_bytes = len(urllib.request.urlopen(big).read())
            d = start_driver()
            times = []
            for _ in range(5):
                d.get("about:blank")
                d.get(big)
                times.append(wait_ready(d, 60))
                drawn = d.execute_script("return window.perfgate.drawnPoints")
            d.quit()
            print("series page, %d points: HTML %.0f KiB; navigation -> chart drawn median %.0f ms (runs: %s); "
                  "points drawn %d" % (a.points, html_bytes / 1024, statistics.median(times),
                                       ", ".join("%.0f" % t for t in times), drawn))
            for name, target in (("overview", url + "/p/bench"), ("series, 60 points", small),
                                 ("series, %d points" % a.points, big)):
                p50, p99, rate, bad = wrk(target, a.seconds)
                print("wrk -c64 %-22s p50 %-9s p99 %-9s %s req/s, non-2xx %s" % (name, p50, p99, rate, bad))
        finally:
            proc.terminate()
            proc.wait()
    files = ["/usr/share/javascript/dygraphs/dygraph.min.js", "/usr/share/javascript/dygraphs/dygraph.min.css",
             os.path.join(HERE, "..", "..", "server", "assets", "dashboard.js"),
             os.path.join(HERE, "..", "..", "server", "assets", "dashboard.css")]
    sizes = {os.path.basename(f): os.path.getsize(f) for f in files}
    print("embedded assets: %s; total %.1f KiB" % (", ".join("%s %d B" % kv for kv in sizes.items()),
                                                    sum(sizes.values()) / 1024))


if __name__ == "__main__":
    main()
