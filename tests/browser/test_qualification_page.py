#!/usr/bin/python3
"""A testbed's stored qualification on the dashboard's series page (issue 46), in a real headless Chromium.

Run by ctest (tests/CMakeLists.txt) as
    /usr/bin/python3 tests/browser/test_qualification_page.py --perfgate build/bin/perfgate \
        --out build/tests/screenshots
perfgate serve on 127.0.0.1 (ephemeral port, fresh database); five runs of one benchmark uploaded through
the JSON API, then a qualification of their testbed stored with a baseline-scoped token
(POST .../qualifications; an upload-only token is refused 403). The series page must show
"this testbed detects >= 12.5% of task-clock (qualified 2026-11-28)" and the out-of-reach warning, with no
console error. Screenshot (PNG): qualification-series.png in --out. Exits 77 (ctest: skipped) when Chromium
or chromedriver is missing. About 3 s.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pgserver  # noqa: E402 (after the path)
from pgserver import Server  # noqa: E402

ARGS = None


def api(srv, method, path, token, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(srv.url + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req) as r:
        return r.status, json.loads(r.read())


def token(srv, scopes):
    out = subprocess.run([ARGS.perfgate, "token", "create", "--db", srv.db, "--project", "demo", "--label", scopes,
                          "--scope", scopes], check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


@unittest.skipUnless(os.path.exists("/usr/bin/chromium") and os.path.exists("/usr/bin/chromedriver"),
                     "Chromium or chromedriver missing (ci/install-deps.sh installs them)")
class QualificationOnSeries(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from pgbrowser import start_driver
        os.makedirs(ARGS.out, exist_ok=True)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.srv = Server(ARGS.perfgate, cls.tmp.name, "qual.db")
        for i in range(5):
            csv = "".join("%.3f,msec,task-clock,1,100.00,,\n" % (100 + i + 0.1 * k) for k in range(5))
            api(cls.srv, "POST", "/api/v1/projects/demo/runs", cls.srv.token,
                {"benchmark": "parse", "role": "baseline", "git_sha": "%040x" % (0xabc000 + i), "branch": "main",
                 "testbed": {"name": "ci-box", "cores": 2}, "perf_csv": csv})
        _, hist = api(cls.srv, "GET", "/api/v1/projects/demo/history?benchmark=parse&counter=task-clock",
                      cls.srv.token)
        cls.fingerprint = hist["points"][0]["testbed"]
        cls.body = {"testbed_fingerprint": cls.fingerprint, "testbed": "ci-box", "benchmark": "parse",
                    "backend": "native", "date": "2026-11-28T16:05:00Z",
                    "counters": [{"counter": "task-clock", "threshold_pct": 5, "detects_80_pct": 12.5,
                                  "detects_95_pct": 20, "reaches_threshold": False, "deterministic": False}]}
        cls.d = start_driver(width=1300, height=900)

    @classmethod
    def tearDownClass(cls):
        cls.d.quit()
        cls.srv.stop()

    def test_series_page_shows_the_qualification(self):
        from pgbrowser import console_errors, wait_ready
        path = "/api/v1/projects/demo/qualifications"
        with self.assertRaises(urllib.error.HTTPError) as refused:
            api(self.srv, "POST", path, token(self.srv, "upload"), self.body)
        self.assertEqual(refused.exception.code, 403)
        status, stored = api(self.srv, "POST", path, token(self.srv, "baseline"), self.body)
        self.assertEqual(status, 201)
        self.assertEqual(stored["testbed_fingerprint"], self.fingerprint)
        self.d.get("%s/p/demo/series?benchmark=parse&counter=task-clock" % self.srv.url)
        wait_ready(self.d)
        shown = self.d.find_element("id", "qualifications").text
        self.d.save_screenshot(os.path.join(ARGS.out, "qualification-series.png"))
        self.assertIn("this testbed detects \u2265 12.5% of task-clock (qualified 2026-11-28)", shown)
        self.assertIn("cannot promise the 5% threshold", shown)
        self.assertEqual(console_errors(self.d), [])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--perfgate", required=True)
    p.add_argument("--out", required=True)
    pgserver.run_tests(p, lambda args: globals().update(ARGS=args))


if __name__ == "__main__":
    main()
