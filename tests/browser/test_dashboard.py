#!/usr/bin/python3
"""The dashboard in a real headless Chromium against a real `perfgate serve`.

Run by ctest (tests/CMakeLists.txt) as
    /usr/bin/python3 tests/browser/test_dashboard.py --perfgate build/bin/perfgate --out build/tests/screenshots
It seeds a fresh SQLite database through the JSON API (60 baseline runs of main with a 5% step at
run 40, so the history watch opens one alert there; 12 runs of a feature branch), then drives the
pages with selenium and asserts what the issue asks: points drawn == the API's points,
change-point marker at the alert's run, hover shows the run's sha, dragging zooms, triage changes
the alert in the API, sign-in works and a wrong token is refused, a note with <script> is shown as
text, and no page logs a console error. Every test saves a screenshot into --out. A second
project of 55 benchmarks checks that the overview's pages (50 benchmarks a page) each draw their
own sparklines.
"""
import argparse
import http.cookiejar
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pgbrowser import (start_driver, console_errors, console_logs, wait_ready, pg, hover_point,  # noqa: E402
                       drag_zoom, full_page_screenshot, screenshot)
from selenium.webdriver.support.expected_conditions import staleness_of  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ARGS = None
EVIL = "<script>alert(1)</script> bisecting"
REPO = "https://git.example/org/repo"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


class Server:
    """perfgate serve on 127.0.0.1 with an ephemeral port, over a fresh database."""

    def __init__(self, workdir, public_read=False):
        self.db = os.path.join(workdir, "dash.db")
        self.token = self._token("demo")
        subprocess.run([ARGS.perfgate, "project", "--db", self.db, "--project", "demo", "--repository-url", REPO],
                       check=True, capture_output=True)
        args = [ARGS.perfgate, "serve", "--db", self.db, "--listen", "127.0.0.1:0"]
        if public_read:
            args.append("--public-read")
        self.log = open(os.path.join(workdir, "server.log"), "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if not m:
            raise RuntimeError("perfgate serve did not start: %r" % line)
        self.url = m.group(1)

    def _token(self, project):
        out = subprocess.run([ARGS.perfgate, "token", "create", "--db", self.db, "--project", project, "--name", "t"],
                             check=True, capture_output=True, text=True).stdout
        return out.strip().splitlines()[-1]

    def api(self, method, path, body=None, token=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + (token or self.token))
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.log.close()


def capture(level, rnd):
    return "".join("%.3f,msec,task-clock,1,100.00,,\n" % (level * (1 + 0.02 * (rnd.random() - 0.5)))
                   for _ in range(5))


def seed(srv):
    rnd = random.Random(7)
    ids = []
    for i in range(60):
        level = 100 * (1.05 if i >= 40 else 1.0)
        r = srv.api("POST", "/api/v1/projects/demo/runs",
                    {"benchmark": "parse", "role": "baseline", "git_sha": "%040x" % (0xabc000 + i), "branch": "main",
                     "testbed": {"name": "ci-box", "cores": 2}, "perf_csv": capture(level, rnd)})
        ids.append(r["run_id"])
    for i in range(12):
        srv.api("POST", "/api/v1/projects/demo/runs",
                {"benchmark": "parse", "role": "baseline", "git_sha": "%040x" % (0xfea000 + i), "branch": "feature",
                 "testbed": {"name": "ci-box", "cores": 2}, "perf_csv": capture(103, rnd)})
    for i in range(8):   # main on a second machine: a line of its own
        srv.api("POST", "/api/v1/projects/demo/runs",
                {"benchmark": "parse", "role": "baseline", "git_sha": "%040x" % (0xa11000 + i), "branch": "main",
                 "testbed": {"name": "ci-arm", "cores": 4}, "perf_csv": capture(80, rnd)})
    # The history watch runs after the uploads answer: wait for its alert.
    for _ in range(200):
        alerts = srv.api("GET", "/api/v1/projects/demo/alerts")["alerts"]
        if alerts:
            return ids, alerts
        time.sleep(0.05)
    raise AssertionError("the history watch opened no alert")


class Dashboard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.srv = Server(cls.tmp.name)
        cls.ids, cls.alerts = seed(cls.srv)
        cls.d = start_driver()

    @classmethod
    def tearDownClass(cls):
        cls.d.quit()
        cls.srv.stop()
        cls.tmp.cleanup()

    def shot(self, name):
        os.makedirs(ARGS.out, exist_ok=True)
        full_page_screenshot(self.d, os.path.join(ARGS.out, name + ".png"))
        self.d.set_window_size(1280, 900)

    def open(self, path):
        console_logs(self.d)   # drain
        self.d.get(self.srv.url + path)
        wait_ready(self.d, 20)
        errors = console_errors(self.d)
        self.assertEqual(errors, [], "console errors on " + path)

    def sign_in(self, token=None, project="demo"):
        self.d.get(self.srv.url + "/p/%s/signin" % project)
        self.d.find_element("id", "token").send_keys(token or self.srv.token)
        self.d.find_element("id", "signin").click()
        # The form's answer, not the sign-in page it replaces (whose ready
        # flag is already set): the redirect away from it, or the refusal.
        # Waiting only for "ready" let the next d.get race the POST and load
        # a page without the session cookie (seen once in CI).
        WebDriverWait(self.d, 20).until(
            lambda d: "/signin" not in d.current_url or d.find_elements("id", "signin-error"))
        wait_ready(self.d, 20)

    def test_1_signin_refuses_a_wrong_token_and_accepts_the_right_one(self):
        self.d.delete_all_cookies()
        self.d.get(self.srv.url + "/p/demo/alerts")
        wait_ready(self.d, 20)
        self.assertIn("/p/demo/signin", self.d.current_url)   # not signed in: the sign-in page
        self.sign_in("pg_" + "0" * 64)
        self.assertEqual(self.d.find_element("id", "signin-error").text, "That token does not open this project.")
        self.shot("signin-refused")
        console_logs(self.d)   # the refusal's 401 is logged by the browser as a failed load: expected
        self.sign_in()
        self.assertTrue(self.d.current_url.endswith("/p/demo"), self.d.current_url)
        cookie = self.d.get_cookie("perfgate_session")
        self.assertTrue(cookie["httpOnly"])
        self.assertEqual(cookie["sameSite"], "Strict")
        self.assertEqual(console_errors(self.d), [])

    def test_2_series_draws_the_api_points_and_marks_the_alert(self):
        self.sign_in()
        # By default the watched series: the baseline branch's baseline runs (68 of the 80).
        watched = self.srv.api("GET", "/api/v1/projects/demo/history?benchmark=parse&counter=task-clock&limit=10000")
        self.assertEqual(len(watched["points"]), 68)
        self.assertEqual({p["branch"] for p in watched["points"]}, {"main"})
        self.open("/p/demo/series?benchmark=parse&counter=task-clock")
        self.assertEqual(pg(self.d, "drawnPoints"), 68)
        # Every branch on request.
        api = self.srv.api("GET", "/api/v1/projects/demo/history?benchmark=parse&counter=task-clock&limit=10000"
                           "&branch=*")
        self.open("/p/demo/series?benchmark=parse&counter=task-clock&branch=*")
        self.assertEqual(pg(self.d, "drawnPoints"), len(api["points"]))
        self.assertEqual(len(api["points"]), 80)
        self.assertEqual(pg(self.d, "markerRuns"), [self.alerts[0]["run_id"]])
        # One toggleable line per (branch, role, testbed), the baseline branch first.
        labels = [e.text for e in self.d.find_elements("css selector", "#controls .lines label")]
        self.assertEqual(labels, ["main · mainline @ ci-box", "main · mainline @ ci-arm", "feature · mainline @ ci-box"])
        # No hover box before a point is hovered; y labels with their unit.
        self.assertFalse(self.d.find_element("id", "hover").is_displayed())
        ylabels = [e.text for e in self.d.find_elements("css selector", ".dygraph-axis-label-y") if e.text]
        self.assertTrue(ylabels and all(t.endswith(" ms") for t in ylabels), ylabels)
        self.shot("series")

        # Hover: the run's sha, and a link to its commit (the project's repository URL).
        run = self.ids[20]
        sha = "%040x" % (0xabc000 + 20)
        text = hover_point(self.d, run)
        self.assertIn(sha[:12], text)
        self.assertIn("mainline", text)   # where the point came from: a run that feeds the series
        commit = self.d.find_element("css selector", "#hover a.commit")
        self.assertEqual(commit.get_attribute("href"), REPO + "/commit/" + sha)

        # Drag to zoom: a narrower x range, kept in the URL.
        before = pg(self.d, "xRange()")
        drag_zoom(self.d, 0.3, 0.6)
        after = pg(self.d, "xRange()")
        self.assertGreater(after[0], before[0])
        self.assertLess(after[1], before[1])
        self.assertIn("from=", self.d.current_url)
        # The address's zoom is the initial zoom of the page loaded from it
        # (the server caches one page for every zoom: dashboard.js reads it).
        self.d.get(self.d.current_url)
        wait_ready(self.d, 20)
        reloaded = pg(self.d, "xRange()")
        self.assertAlmostEqual(reloaded[0], after[0], delta=1)
        self.assertAlmostEqual(reloaded[1], after[1], delta=1)
        self.shot("series-zoomed")
        self.assertEqual(console_errors(self.d), [])

    def test_3_triage_changes_the_alert_in_the_api_and_a_script_note_is_text(self):
        self.sign_in()
        alert = self.alerts[0]
        self.open("/p/demo/alerts")
        row = self.d.find_element("id", "alert-%d" % alert["id"])
        row.find_element("css selector", "select[name=status] option[value=acknowledged]").click()
        note = row.find_element("css selector", "input[name=note]")
        note.clear()
        note.send_keys(EVIL)
        row.find_element("css selector", "button[type=submit]").click()
        # The old page stays "ready" until the form's answer replaces it: wait
        # for that first, or a busy machine reads the API before the POST.
        WebDriverWait(self.d, 20).until(staleness_of(row))
        wait_ready(self.d, 20)
        got = self.srv.api("GET", "/api/v1/projects/demo/alerts/%d" % alert["id"])
        self.assertEqual(got["status"], "acknowledged")
        self.assertEqual(got["note"], EVIL)
        self.assertEqual(got["changed_by"], "dashboard:t")   # the session token's label
        row = self.d.find_element("id", "alert-%d" % alert["id"])
        self.assertEqual(row.find_element("css selector", "td.note").text, EVIL)   # shown as text
        self.assertEqual(self.d.execute_script("return document.querySelectorAll('main script').length"), 0)
        self.assertEqual(console_errors(self.d), [])
        self.shot("alerts")

    def test_4_every_page_loads_without_console_errors(self):
        self.sign_in()
        self.open("/p/demo")
        # One row per testbed of the baseline branch, the one measured last first.
        rows = [r.text for r in self.d.find_elements("css selector", "#benchmarks tr.benchmark")]
        self.assertEqual(len(rows), 2, rows)
        self.assertIn("ci-arm", rows[0])
        self.assertIn("ci-box", rows[1])
        self.shot("overview")
        self.open("/p/demo/runs/%d" % self.ids[0])
        self.assertIn("task-clock", self.d.find_element("id", "samples").text)
        self.assertNotRegex(self.d.find_element("id", "samples").text, r"\de[+-]\d")
        self.assertEqual(self.d.find_element("css selector", "#run-meta a.commit").get_attribute("href"),
                         REPO + "/commit/" + "%040x" % 0xabc000)
        self.shot("run")
        # Compare any two: stored, then shown.
        self.open("/p/demo/compare?base=%d&head=%d" % (self.ids[0], self.ids[59]))
        self.assertRegex(self.d.current_url, r"/p/demo/comparisons/\d+$")
        self.assertIn(self.d.find_element("id", "verdict").text, ("pass", "fail", "inconclusive"))
        self.shot("comparison")

    def test_6_comparison_by_sha_shows_distributions_and_histories_and_is_listed(self):
        self.sign_in()
        base_sha, head_sha = "%040x" % (0xabc000 + 10), "%040x" % (0xabc000 + 50)
        self.open("/p/demo/compare?base=%s&head=%s" % (base_sha, head_sha))
        m = re.search(r"/p/demo/comparisons/(\d+)$", self.d.current_url)
        self.assertIsNotNone(m, self.d.current_url)
        cid = int(m.group(1))
        runs = self.d.find_element("css selector", "p.runs").text
        self.assertIn("run %d" % self.ids[10], runs)
        self.assertIn("run %d" % self.ids[50], runs)
        # task-clock: five samples a side in the strip plot, its history drawn with both runs marked.
        row = self.d.find_element("css selector", "tr.detail")
        self.assertEqual(len(row.find_elements("css selector", "svg.strip circle.base")), 5)
        self.assertEqual(len(row.find_elements("css selector", "svg.strip circle.head")), 5)
        self.assertGreaterEqual(len(row.find_elements("css selector", ".history canvas")), 1)
        marks = sorted(e.text for e in row.find_elements("css selector", ".history .pg-marker"))
        self.assertEqual(marks, ["base", "head"])
        # Values with their unit, never in scientific notation; every sha a link to its commit.
        # (The "why" column quotes the report's reason, as the text report words it.)
        cells = [e.text for e in self.d.find_elements("css selector", "table.report tr.counter td:not(:last-child)")]
        self.assertTrue(cells)
        self.assertNotRegex(" ".join(cells), r"\de[+-]\d")
        self.assertRegex(self.d.find_element("css selector", "table.report").text, r"\d ms")
        links = [a.get_attribute("href") for a in self.d.find_elements("css selector", "p.runs a.commit")]
        self.assertEqual(links, [REPO + "/commit/" + base_sha, REPO + "/commit/" + head_sha])
        # Its attribution, stored after the comparison: "Where did it come from" on the page.
        row = {"name": "parse_number(std::string_view)", "file": "parse.cpp", "before": 1200000, "after": 31050000,
               "delta": 29850000, "share": 0.93}
        attribution = {"callgrind": {"event": "Ir", "total_before": 3105000, "total_after": 33900000, "top": [row]},
                       "perf": {"event": "cpu-clock", "executions": 3, "samples_before": 4800, "samples_after": 6000,
                                "top": [dict(row, before=4560, after=5760, delta=1200, interval=[-0.9, 2.9],
                                             significant=False)]}}
        req = urllib.request.Request(self.srv.url + "/api/v1/projects/demo/comparisons/%d/attribution?benchmark=parse"
                                     % cid, data=json.dumps(attribution).encode(), method="PUT")
        req.add_header("Authorization", "Bearer " + self.srv.token)
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req) as r:
            self.assertEqual(r.status, 201)
        self.open("/p/demo/comparisons/%d" % cid)
        section = self.d.find_element("css selector", "section.attribution").text
        self.assertIn("Where did it come from", section)
        self.assertIn("total 3.105 M → 33.9 M", section)
        self.assertIn("parse_number(std::string_view)", section)
        self.assertIn("reddest frame, parse_number", self.d.find_element("id", "perf-noise-note").text)
        # The browser's formatting is the server's (server/pages/quantity.hpp, tests/test_pages.cpp).
        cases = [[31050000, "", "31.05 M"], [999960, "", "1 M"], [12.3, "msec", "12.3 ms"], [0.25, "msec", "250 µs"],
                 [1258291, "KiB", "1.2 GiB"], [1023.99, "KiB", "1 MiB"], [12.345, "%", "12.35%"],
                 [1.234, "insn/cycle", "1.234 insn/cycle"], [0.0123, "", "0.0123"], [-4194360, "", "-4.194 M"]]
        for v, unit, want in cases:
            self.assertEqual(self.d.execute_script("return window.perfgate.fmtValue(arguments[0], arguments[1]);",
                                                   v, unit), want)
        self.shot("comparison-detail")
        # The overview lists it among the recent comparisons, with its verdict.
        self.open("/p/demo")
        listed = self.d.find_element("id", "comparison-%d" % cid)
        self.assertRegex(listed.get_attribute("class"), r"verdict-(pass|fail|inconclusive)")
        # A sha that names no run: a page that says so.
        self.d.get(self.srv.url + "/p/demo/compare?base=deadbeef00&head=%s" % head_sha)
        wait_ready(self.d, 20)
        self.assertIn("deadbeef00", self.d.find_element("id", "page-error").text)
        console_logs(self.d)   # the page's 4xx status is logged by the browser as a failed load: expected

    def test_7_a_triaged_alert_shows_on_the_series_at_once_and_unknown_pages_are_pages(self):
        self.sign_in()
        self.open("/p/demo/series?benchmark=parse&counter=task-clock")   # cached once
        alert = self.alerts[0]["id"]
        self.srv.api("PATCH", "/api/v1/projects/demo/alerts/%d" % alert, {"status": "wontfix", "note": "known"})
        self.open("/p/demo/series?benchmark=parse&counter=task-clock")
        status = self.d.execute_script(
            "return JSON.parse(document.getElementById('perfgate-data').textContent).markers[0].status")
        self.assertEqual(status, "wontfix")
        self.d.get(self.srv.url + "/p/demo/no-such-page")
        wait_ready(self.d, 20)
        self.assertIn("There is no page at", self.d.find_element("id", "page-error").text)
        console_logs(self.d)
        self.shot("not-found")

    def test_5_forms_need_the_session_csrf_token(self):
        # A triage post with a session cookie but without the page's CSRF token is refused.
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
        form = urllib.parse.urlencode({"token": self.srv.token}).encode()
        with self.assertRaises(urllib.error.HTTPError) as redirected:
            opener.open(self.srv.url + "/p/demo/signin", form)
        self.assertEqual(redirected.exception.code, 303)
        self.assertTrue(any(c.name == "perfgate_session" for c in jar))
        alert = self.alerts[0]["id"]
        bad = urllib.parse.urlencode({"status": "fixed", "csrf": "forged"}).encode()
        with self.assertRaises(urllib.error.HTTPError) as refused:
            opener.open(self.srv.url + "/p/demo/alerts/%d" % alert, bad)
        self.assertEqual(refused.exception.code, 403)
        self.assertNotEqual(self.srv.api("GET", "/api/v1/projects/demo/alerts/%d" % alert)["status"], "fixed")
        # No session at all: back to the sign-in page, nothing changed.
        plain = urllib.request.build_opener(NoRedirect)
        with self.assertRaises(urllib.error.HTTPError) as bounced:
            plain.open(self.srv.url + "/p/demo/alerts/%d" % alert, bad)
        self.assertEqual(bounced.exception.code, 303)
        self.assertIn("/p/demo/signin", bounced.exception.headers["Location"])


class Suite(unittest.TestCase):
    """A project holding a suite of 55 benchmarks: the overview is paged, 50 a page."""

    def test_overview_pages_draw_their_own_sparklines(self):
        with tempfile.TemporaryDirectory() as tmp:
            srv = Server(tmp)
            d = start_driver()
            try:
                token = srv._token("suite")
                rnd = random.Random(11)
                for i in range(55):
                    for k in range(2):
                        srv.api("POST", "/api/v1/projects/suite/runs",
                                {"benchmark": "BM_Suite/%03d" % i, "role": "baseline", "git_sha": "%040x" % (k + 1),
                                 "branch": "main", "testbed": {"name": "ci-box"}, "perf_csv": capture(100 + i, rnd)},
                                token=token)
                d.get(srv.url + "/p/suite/signin")
                d.find_element("id", "token").send_keys(token)
                d.find_element("id", "signin").click()
                WebDriverWait(d, 20).until(lambda drv: "/signin" not in drv.current_url)
                for page, first, count in ((1, "BM_Suite/000", 50), (2, "BM_Suite/050", 5)):
                    console_logs(d)
                    d.get(srv.url + "/p/suite?page=%d" % page)
                    wait_ready(d, 20)
                    self.assertEqual(console_errors(d), [], "console errors on page %d" % page)
                    rows = d.find_elements("css selector", "#benchmarks tr.benchmark")
                    self.assertEqual(len(rows), count)
                    self.assertIn(first, rows[0].text)
                    # Every row's sparkline is drawn from this page's data (a Dygraph canvas each).
                    drawn = d.find_elements("css selector", "#benchmarks .sparkline canvas")
                    self.assertGreaterEqual(len(drawn), count)
                    self.assertEqual(len(d.find_elements("css selector", "#benchmarks .sparkline .no-data")), 0)
                    pager = d.find_element("id", "benchmarks-pager").text
                    self.assertIn("page %d of 2" % page, pager)
                    os.makedirs(ARGS.out, exist_ok=True)
                    full_page_screenshot(d, os.path.join(ARGS.out, "overview-suite-page%d.png" % page))
                    d.set_window_size(1280, 900)
                d.find_element("css selector", "#benchmarks-pager a[rel=prev]").click()
                WebDriverWait(d, 20).until(lambda drv: drv.current_url.endswith("/p/suite?page=1"))
            finally:
                d.quit()
                srv.stop()


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--perfgate", required=True)
    p.add_argument("--out", required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
