#!/usr/bin/python3
"""The culprit perfgate bisect stores on an alert, on the dashboard's alerts page (issue 45 item 4), in a real
headless Chromium.

Run by ctest (tests/CMakeLists.txt) as
    /usr/bin/python3 tests/browser/test_culprit_page.py --perfgate build/bin/perfgate --out build/tests/screenshots
perfgate serve on 127.0.0.1 (ephemeral port, fresh database, the project's repository URL set); 13 pushes
uploaded with perfgate upload whose instruction counts step +10% at the 9th, so the watch opens an alert; a
culprit stored on it with PUT .../alerts/{id}/culprit (what perfgate bisect --alert sends, test_bisect runs the
real bisection); the alerts page must show the culprit's row with the commit linked to the repository, its
subject, author, share and effect, with no console error; then an undecided result replaces it and the row says
so. Screenshots (PNG) go to --out. Exits 77 (ctest: skipped) when Chromium or chromedriver is missing.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pgserver  # noqa: E402 (after the path)
from pgserver import Server  # noqa: E402

ARGS = None
REPO = "https://github.com/acme/demo"
CULPRIT = "c0ffee" + "1" * 34


def request(method, url, token=None, body=None):
    req = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode())
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read())


def culprit(status="found"):
    found = status == "found"
    return {"status": status, "backend": "callgrind", "counter": "instructions",
            "good": "%040x" % 7, "bad": "%040x" % 8, "commits": 4, "steps": 2, "builds": 4,
            "culprits": [{"sha": CULPRIT, "subject": "parse: copy the <input> buffer", "author": "Ana <ana@example.com>",
                          "share": 1.0,
                          "effects": [{"counter": "instructions", "unit": "", "status": "regression",
                                       "before": 1.0e6, "after": 1.1e6, "delta_pct": 10.0,
                                       "ci_pct": [10.0, 10.0]}]}] if found else [],
            "detail": "" if found else "undecided: after 000000000007 up to 000000000008 (4 commits)"}


@unittest.skipUnless(os.path.exists("/usr/bin/chromium") and os.path.exists("/usr/bin/chromedriver"),
                     "Chromium or chromedriver missing (ci/install-deps.sh installs them)")
class CulpritOnTheAlertsPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from pgbrowser import start_driver
        os.makedirs(ARGS.out, exist_ok=True)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.srv = Server(ARGS.perfgate, cls.tmp.name, "culprit.db")
        subprocess.run([ARGS.perfgate, "project", "--db", cls.srv.db, "--project", "demo", "--repository-url", REPO],
                       check=True, capture_output=True)
        for i in range(13):
            csv = os.path.join(cls.tmp.name, "push-%d.csv" % i)
            with open(csv, "w") as f:
                f.write("# started on Sat Nov 28 12:00:00 2026\n\n%d,,instructions,1000,100.00,,\n"
                        % (1100000 if i >= 8 else 1000000))
            subprocess.run([ARGS.perfgate, "upload", "--server", cls.srv.url, "--token", cls.srv.token,
                            "--project", "demo", "--role", "baseline", "--git-sha", "%040x" % i, "--branch", "main",
                            "--backend", "callgrind", csv], check=True, capture_output=True)
        # The history watch runs after the uploads answer: wait for its alert.
        alerts = []
        for _ in range(100):
            alerts = request("GET", cls.srv.url + "/api/v1/projects/demo/alerts")["alerts"]
            if alerts:
                break
            time.sleep(0.1)
        if not alerts:
            raise AssertionError("no alert opened")
        cls.alert = alerts[0]["id"]
        cls.put = "%s/api/v1/projects/demo/alerts/%d/culprit" % (cls.srv.url, cls.alert)
        cls.d = start_driver(width=1400, height=700)

    @classmethod
    def tearDownClass(cls):
        cls.d.quit()
        cls.srv.stop()

    def row(self, name):
        from pgbrowser import console_errors
        self.d.get("%s/p/demo/alerts" % self.srv.url)
        row = self.d.find_element("css selector", "tr#alert-%d-culprit" % self.alert)
        self.d.execute_script("arguments[0].scrollIntoView()", row)
        self.d.save_screenshot(os.path.join(ARGS.out, name))
        self.assertEqual(console_errors(self.d), [])
        return row

    def test_1_found_culprit_links_its_commit(self):
        stored = request("PUT", self.put, self.srv.token, culprit())
        self.assertEqual(stored["culprit"]["culprits"][0]["sha"], CULPRIT)
        row = self.row("culprit-alerts-page.png")
        self.assertIn("culprit-found", row.get_attribute("class"))
        link = row.find_element("css selector", "li.culprit-commit a.commit")
        self.assertEqual(link.get_attribute("href"), "%s/commit/%s" % (REPO, CULPRIT))
        self.assertEqual(link.text, CULPRIT[:12])
        text = row.text
        self.assertIn("Culprit", text)
        self.assertIn("parse: copy the <input> buffer", text)  # escaped markup, shown as text
        self.assertIn("Ana <ana@example.com>", text)
        self.assertIn("100% of the change", text)
        self.assertIn("instructions +10.00% [+10.00%, +10.00%] (regression)", text)
        self.assertIn("4 commits, 2 steps, 4 builds", text)
        self.assertEqual(row.find_elements("css selector", "li.culprit-commit input"), [])

    def test_2_undecided_result_replaces_it(self):
        request("PUT", self.put, self.srv.token, culprit("undecided"))
        row = self.row("culprit-alerts-page-undecided.png")
        self.assertIn("culprit-undecided", row.get_attribute("class"))
        self.assertIn("Bisected, undecided", row.text)
        self.assertIn("undecided: after 000000000007 up to 000000000008 (4 commits)", row.text)
        self.assertEqual(row.find_elements("css selector", "li.culprit-commit"), [])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--perfgate", required=True)
    p.add_argument("--out", required=True)
    pgserver.run_tests(p, lambda args: globals().update(ARGS=args))


if __name__ == "__main__":
    main()
