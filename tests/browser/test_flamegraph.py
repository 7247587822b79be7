#!/usr/bin/python3
"""The differential flame graph SVG (profile/flamegraph.hpp) in a real headless Chromium.

Run by ctest (tests/CMakeLists.txt) as
    /usr/bin/python3 tests/browser/test_flamegraph.py --tool build/tests/make_flamegraph \
        --data tests/data/perf-script --out build/tests/screenshots
It draws the flame graph of the recorded examples/checksum.cpp profiles (baseline vs the vector taken by
value) and of a hand-written profile with C++ template names, then checks what issue 12 asks: well-formed
XML (xml.etree), no script/stylesheet/link to anything outside, and in Chromium: it loads as SVG (no parser
error), has frames (<g> with <rect>), the frame under the mouse has a hover <title> with both counts and the
change, the copy is drawn red, names with < > & show as written, and no console error. Screenshots (PNG) go to
--out. Exits 77 (ctest: skipped) when Chromium or chromedriver is missing.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pgserver  # noqa: E402 (after the path)

ARGS = None
SVG_NS = "{http://www.w3.org/2000/svg}"

# A profile with C++ names full of markup characters, as perf script prints them.
TEMPLATES = """app 1 1.0: 250000 cpu-clock:
\t 401000 std::vector<int, std::allocator<int> >::vector(std::vector<int, std::allocator<int> > const&)+0x10 (/bin/app)
\t 402000 main+0x1 (/bin/app)

app 1 1.1: 250000 cpu-clock:
\t 401000 std::vector<int, std::allocator<int> >::vector(std::vector<int, std::allocator<int> > const&)+0x10 (/bin/app)
\t 402000 main+0x1 (/bin/app)

app 1 1.2: 250000 cpu-clock:
\t 403000 operator&<a "b" 'c'>(x&, y&)+0x2 (/bin/app)
\t 402000 main+0x1 (/bin/app)

"""
TEMPLATES_BASE = """app 1 1.0: 250000 cpu-clock:
\t 403000 operator&<a "b" 'c'>(x&, y&)+0x2 (/bin/app)
\t 402000 main+0x1 (/bin/app)

"""


def make_svg(base, cand, out, title):
    subprocess.run([ARGS.tool, base, cand, out, title], check=True)
    with open(out, encoding="utf-8") as f:
        return f.read()


def frames_of(root):
    """(title text, rect attributes) of every frame <g>."""
    out = []
    for g in root.iter(SVG_NS + "g"):
        title = g.find(SVG_NS + "title")
        rect = g.find(SVG_NS + "rect")
        if title is not None and rect is not None:
            out.append((title.text, rect.attrib))
    return out


class FlameGraphXml(unittest.TestCase):
    """Without a browser: the document is well-formed and self-contained."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.svg_path = os.path.join(cls.tmp.name, "checksum.svg")
        cls.text = make_svg(os.path.join(ARGS.data, "checksum_base_1.script"),
                            os.path.join(ARGS.data, "checksum_regressed.script"), cls.svg_path, "checksum <by value>")

    def test_well_formed_and_self_contained(self):
        root = ET.fromstring(self.text.encode("utf-8"))
        self.assertEqual(root.tag, SVG_NS + "svg")
        self.assertEqual(root.find(SVG_NS + "title").text, "checksum <by value>")
        frames = frames_of(root)
        self.assertGreater(len(frames), 10)
        for tag in root.iter():
            self.assertNotIn(tag.tag, (SVG_NS + "script", SVG_NS + "style", SVG_NS + "image", SVG_NS + "a",
                                       SVG_NS + "foreignObject"))
            for k, v in tag.attrib.items():
                self.assertNotIn("href", k)
                self.assertNotIn("url(", v)
                self.assertFalse(k.startswith("on"), k)   # no event handlers

    def test_the_copy_is_red(self):
        root = ET.fromstring(self.text.encode("utf-8"))
        copy = [a for t, a in frames_of(root) if t.startswith("__memmove_avx512_unaligned_erms\n")]
        self.assertEqual(len(copy), 1)
        r, g, b = map(int, re.match(r"rgb\((\d+),(\d+),(\d+)\)", copy[0]["fill"]).groups())
        self.assertGreater(r, 225)
        self.assertLess(g, 100)
        self.assertLess(b, 100)

    def test_template_names_escaped(self):
        base = os.path.join(self.tmp.name, "t-base.script")
        cand = os.path.join(self.tmp.name, "t-cand.script")
        with open(base, "w") as f:
            f.write(TEMPLATES_BASE)
        with open(cand, "w") as f:
            f.write(TEMPLATES)
        text = make_svg(base, cand, os.path.join(self.tmp.name, "templates.svg"), "a & b")
        titles = [t.split("\n")[0] for t, _ in frames_of(ET.fromstring(text.encode("utf-8")))]
        self.assertIn("std::vector<int, std::allocator<int> >::vector(std::vector<int, std::allocator<int> > const&)",
                      titles)
        self.assertIn("operator&<a \"b\" 'c'>(x&, y&)", titles)


@unittest.skipUnless(os.path.exists("/usr/bin/chromium") and os.path.exists("/usr/bin/chromedriver"),
                     "Chromium or chromedriver missing (ci/install-deps.sh installs them)")
class FlameGraphInChromium(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from pgbrowser import start_driver
        os.makedirs(ARGS.out, exist_ok=True)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.svg_path = os.path.join(cls.tmp.name, "checksum.svg")
        make_svg(os.path.join(ARGS.data, "checksum_base_1.script"),
                 os.path.join(ARGS.data, "checksum_regressed.script"), cls.svg_path, "checksum: vector by value")
        cls.d = start_driver(width=1220, height=700)   # the whole graph in the viewport

    @classmethod
    def tearDownClass(cls):
        cls.d.quit()

    def open(self, path):
        from pgbrowser import console_errors
        self.d.get("file://" + path)
        # An XML error would make Chromium show its error page instead of the drawing.
        self.assertEqual(self.d.execute_script("return document.documentElement.localName"), "svg")
        self.assertEqual(self.d.execute_script("return document.getElementsByTagName('parsererror').length"), 0)
        return console_errors

    def test_loads_with_frames_and_hover_titles(self):
        console_errors = self.open(self.svg_path)
        frames = self.d.execute_script(
            "return Array.from(document.querySelectorAll('g')).filter(g => g.querySelector('title') && "
            "g.querySelector('rect')).length")
        self.assertGreater(frames, 10)
        self.assertGreater(self.d.execute_script("return document.querySelectorAll('rect').length"), 10)
        # The copy's frame: where the browser laid it out, what is under the mouse there, and its tooltip.
        box = self.d.execute_script(
            "const g = Array.from(document.querySelectorAll('g')).find(g => g.querySelector('title') && "
            "g.querySelector('title').textContent.startsWith('__memmove_avx512_unaligned_erms\\n'));"
            "const r = g.querySelector('rect').getBoundingClientRect();"
            "return {x: r.x, y: r.y, w: r.width, h: r.height, fill: getComputedStyle(g.querySelector('rect')).fill};")
        self.assertGreater(box["w"], 100)   # 49 of 197 samples of a 1180 px plot
        self.assertGreater(box["h"], 10)
        # Red: the largest growth (main's larger shrinkage sets the full-colour scale).
        r, g, b = map(int, re.match(r"rgb\((\d+), (\d+), (\d+)\)", box["fill"]).groups())
        self.assertGreater(r, 225)
        self.assertLess(g, 100)
        self.assertLess(b, 100)
        from selenium.webdriver.common.actions.action_builder import ActionBuilder
        pointer = ActionBuilder(self.d)
        pointer.pointer_action.move_to_location(int(box["x"] + box["w"] / 2), int(box["y"] + box["h"] / 2))
        pointer.perform()
        hovered = self.d.execute_script(
            "const e = document.elementFromPoint(arguments[0], arguments[1]);"
            "const g = e.closest('g'); const t = g && g.querySelector(':scope > title');"
            "return t ? t.textContent : null;", box["x"] + box["w"] / 2, box["y"] + box["h"] / 2)
        self.assertIsNotNone(hovered)
        self.assertTrue(hovered.startswith("__memmove_avx512_unaligned_erms\ncandidate: 49 samples"), hovered)
        self.assertIn("baseline: 0 samples", hovered)
        self.assertIn("change of self share: +21.32 pp", hovered)
        self.assertEqual(console_errors(self.d), [])
        self.d.save_screenshot(os.path.join(ARGS.out, "flamegraph-checksum.png"))

    def test_template_names_render_as_text(self):
        tmp = self.tmp.name
        with open(os.path.join(tmp, "t-base.script"), "w") as f:
            f.write(TEMPLATES_BASE)
        with open(os.path.join(tmp, "t-cand.script"), "w") as f:
            f.write(TEMPLATES)
        path = os.path.join(tmp, "templates.svg")
        make_svg(os.path.join(tmp, "t-base.script"), os.path.join(tmp, "t-cand.script"), path, "templates <&>")
        console_errors = self.open(path)
        titles = self.d.execute_script(
            "return Array.from(document.querySelectorAll('g > title')).map(t => t.textContent.split('\\n')[0])")
        self.assertIn("operator&<a \"b\" 'c'>(x&, y&)", titles)
        self.assertEqual(self.d.title, "templates <&>")
        self.assertEqual(console_errors(self.d), [])
        self.d.save_screenshot(os.path.join(ARGS.out, "flamegraph-templates.png"))


class Server(pgserver.Server):
    """The shared server (pgserver.py), with a PUT for flame graphs."""

    def put(self, path, body, content_type="image/svg+xml"):
        req = urllib.request.Request(self.url + path, data=body, method="PUT")
        req.add_header("Authorization", "Bearer " + self.token)
        req.add_header("Content-Type", content_type)
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())


def examples():
    return [os.path.join(ARGS.examples or "", n) for n in ("example-baseline", "example-regressed")]


@unittest.skipUnless(os.path.exists("/usr/bin/chromium") and os.path.exists("/usr/bin/chromedriver"),
                     "Chromium or chromedriver missing (ci/install-deps.sh installs them)")
class FlameGraphOnTheServer(unittest.TestCase):
    """perfgate run --profile --server uploads the flame graph; the comparison page frames it."""

    @classmethod
    def setUpClass(cls):
        if not ARGS.perfgate or not all(os.path.exists(e) for e in examples()) or not shutil.which("perf"):
            raise unittest.SkipTest("needs --perfgate, --examples (PERFGATE_BUILD_EXAMPLES) and perf")
        from pgbrowser import start_driver
        os.makedirs(ARGS.out, exist_ok=True)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.srv = Server(ARGS.perfgate, cls.tmp.name, "flame.db")
        base, cand = examples()
        run = subprocess.run([ARGS.perfgate, "run", "--server", cls.srv.url, "--project", "demo", "--token", cls.srv.token,
                              "--sha", "a" * 40, "--branch", "main", "--backend", "rusage", "-r", "3",
                              "--baseline", base + " 150", "--candidate", cand + " 150", "--profile",
                              "--format", "json", "-q"], cwd=cls.tmp.name, capture_output=True, text=True)
        if run.returncode not in (0, 1, 3):
            raise AssertionError("perfgate run failed: %s" % run.stderr)
        cls.report = json.loads(run.stdout)
        cls.d = start_driver(width=1300, height=1000)

    @classmethod
    def tearDownClass(cls):
        cls.d.quit()
        cls.srv.stop()

    def test_the_comparison_page_frames_the_flame_graph(self):
        from pgbrowser import console_errors
        cid = self.report["comparison_id"]
        self.assertEqual([w for w in self.report["warnings"] if "flame graph" in w], [])   # uploaded
        self.d.get("%s/p/demo/comparisons/%d" % (self.srv.url, cid))
        frame = self.d.find_element("css selector", "figure.flame-graph iframe")
        self.assertEqual(frame.get_attribute("sandbox"), "")   # sandboxed, nothing allowed
        self.d.execute_script("arguments[0].scrollIntoView()", frame)
        self.d.save_screenshot(os.path.join(ARGS.out, "flamegraph-comparison-page.png"))
        self.d.switch_to.frame(frame)
        self.assertEqual(self.d.execute_script("return document.documentElement.localName"), "svg")
        self.assertGreater(self.d.execute_script("return document.querySelectorAll('g > rect').length"), 10)
        copy = self.d.execute_script(
            "return Array.from(document.querySelectorAll('g > title')).map(t => t.textContent)"
            ".filter(t => /^__mem(move|cpy)/.test(t))")
        self.assertTrue(copy, "no memmove/memcpy frame in the served flame graph")
        self.d.switch_to.default_content()
        self.assertEqual(console_errors(self.d), [])

    def test_an_upload_over_the_limit_is_413(self):
        cid = self.report["comparison_id"]
        big = b"<svg>" + b" " * (4 * 1024 * 1024) + b"</svg>"
        with self.assertRaises(urllib.error.HTTPError) as refused:
            self.srv.put("/api/v1/projects/demo/comparisons/%d/flame-graph?benchmark=default" % cid, big)
        self.assertEqual(refused.exception.code, 413)
        body = json.loads(refused.exception.read())
        self.assertEqual(body["error"]["id"], "artifact.too_large")
        self.assertIn("4194304 bytes (4 MiB)", body["error"]["message"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tool", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--perfgate")
    p.add_argument("--examples", help="the build's examples/ directory (example-baseline, example-regressed)")
    pgserver.run_tests(p, lambda args: globals().update(ARGS=args))


if __name__ == "__main__":
    main()
