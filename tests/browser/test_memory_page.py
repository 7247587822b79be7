#!/usr/bin/python3
"""The memory gate on the dashboard's comparison page (issue 32), in a real headless Chromium.

Run by ctest (tests/CMakeLists.txt) as
    /usr/bin/python3 tests/browser/test_memory_page.py --perfgate build/bin/perfgate \
        --memprog build/tests/memprog --out build/tests/screenshots
perfgate serve on 127.0.0.1 (ephemeral port, fresh database); perfgate run --backend memcheck --server on
tests/memcheck/memprog.c's base against grow_cache (1,000 more allocations) and against leaky_parse (10 lost
blocks); the comparison page must show the memory attribution naming grow_cache / leaky_parse, with no console
error. Screenshots (PNG) go to --out. Exits 77 (ctest: skipped) when Chromium, chromedriver or valgrind is
missing.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pgserver  # noqa: E402 (after the path)
from pgserver import Server  # noqa: E402

ARGS = None


@unittest.skipUnless(os.path.exists("/usr/bin/chromium") and os.path.exists("/usr/bin/chromedriver")
                     and shutil.which("valgrind"),
                     "Chromium, chromedriver or valgrind missing (ci/install-deps.sh installs them)")
class MemoryRegressionPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from pgbrowser import start_driver
        os.makedirs(ARGS.out, exist_ok=True)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.srv = Server(ARGS.perfgate, cls.tmp.name, "mem.db")
        cls.reports = {}
        for variant in ("grow_cache", "leaky_parse"):
            run = subprocess.run([ARGS.perfgate, "run", "--server", cls.srv.url, "--project", "demo",
                                  "--token", cls.srv.token, "--sha", "a" * 40, "--branch", "main",
                                  "--backend", "memcheck", "--name", variant,
                                  "--baseline", ARGS.memprog + " base", "--candidate", ARGS.memprog + " " + variant,
                                  "--format", "json", "-q"], cwd=cls.tmp.name, capture_output=True, text=True)
            if run.returncode != 1:
                raise AssertionError("perfgate run: expected exit 1 (a regression), got %d: %s"
                                     % (run.returncode, run.stderr))
            cls.reports[variant] = json.loads(run.stdout)
        cls.d = start_driver(width=1300, height=1000)

    @classmethod
    def tearDownClass(cls):
        cls.d.quit()
        cls.srv.stop()

    def page(self, variant):
        from pgbrowser import console_errors
        cid = self.reports[variant]["comparison_id"]
        self.d.get("%s/p/demo/comparisons/%d" % (self.srv.url, cid))
        table = self.d.find_element("css selector", "table.attribution.memory")
        self.d.execute_script("arguments[0].scrollIntoView()", table)
        rows = self.d.execute_script(
            "return Array.from(arguments[0].querySelectorAll('tbody tr'))"
            ".map(r => Array.from(r.cells).map(c => c.textContent))", table)
        self.d.save_screenshot(os.path.join(ARGS.out, "memory-comparison-%s.png" % variant))
        self.assertEqual(console_errors(self.d), [])
        return rows

    def test_heap_allocs_names_grow_cache(self):
        rows = self.page("grow_cache")
        mine = [r for r in rows if r[0] == "heap-allocs"]
        self.assertTrue(mine, rows)
        self.assertEqual(mine[0][1], "grow_cache")
        self.assertIn("grow_cache (memprog.c:", mine[0][6])

    def test_leak_names_leaky_parse(self):
        rows = self.page("leaky_parse")
        mine = [r for r in rows if r[0] == "leaked-bytes"]
        self.assertEqual(len(mine), 1, rows)
        self.assertEqual(mine[0][1], "leaky_parse")
        self.assertEqual(mine[0][2], "Leak_DefinitelyLost")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--perfgate", required=True)
    p.add_argument("--memprog", required=True)
    p.add_argument("--out", required=True)
    pgserver.run_tests(p, lambda args: globals().update(ARGS=args))


if __name__ == "__main__":
    main()
