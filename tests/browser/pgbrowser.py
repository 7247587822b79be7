"""Reusable selenium helpers for perfgate dashboard browser tests (headless Chromium).

Use /usr/bin/python3 (Debian python3-selenium).  Typical use:
    from pgbrowser import start_driver, console_errors, wait_ready, hover_point, drag_zoom, screenshot
    d = start_driver()
    d.get(url); wait_ready(d); assert not console_errors(d)
"""
import time
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def start_driver(width=1280, height=900, headless=True):
    """Headless Chromium (--no-sandbox) with browser console logging enabled."""
    o = Options()
    o.binary_location = CHROMIUM
    if headless:
        o.add_argument("--headless=new")
    for a in ("--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              "--window-size=%d,%d" % (width, height), "--force-device-scale-factor=1",
              "--disable-extensions", "--no-first-run", "--hide-scrollbars"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=o)
    d.set_page_load_timeout(30)
    return d


def console_logs(driver):
    """All browser console entries since the last call (the log is drained by reading)."""
    return driver.get_log("browser")


def console_errors(driver, include_warnings=True):
    """Console entries at SEVERE (and WARNING) level since the last call.
    Includes uncaught exceptions and CSP violations."""
    bad = {"SEVERE", "WARNING"} if include_warnings else {"SEVERE"}
    return [e for e in console_logs(driver) if e.get("level") in bad]


def wait_ready(driver, timeout=10):
    """Wait until document.body.dataset.ready == '1'; returns window.perfgate.drawnAt."""
    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return document.body && document.body.dataset.ready === '1'"))
    return driver.execute_script("return window.perfgate ? window.perfgate.drawnAt : null")


def pg(driver, expr):
    """Evaluate an expression on window.perfgate, e.g. pg(d, 'drawnPoints')."""
    return driver.execute_script("return window.perfgate." + expr)


def _move_to(driver, x, y, actions=None):
    """Pointer move to page-relative CSS pixel (x, y) (scrolls so it is in the viewport)."""
    sx, sy, vh = driver.execute_script(
        "const y=arguments[0]; if (y < scrollY + 20 || y > scrollY + innerHeight - 20)"
        " window.scrollTo(0, Math.max(0, y - innerHeight/2));"
        " return [scrollX, scrollY, innerHeight];", y)
    ab = actions or ActionBuilder(driver)
    ab.pointer_action.move_to_location(int(round(x - sx)), int(round(y - sy)))
    return ab


def hover_point(driver, run_id):
    """Move the mouse onto the chart point of run_id (window.perfgate.pointPosition); returns #hover text."""
    pos = driver.execute_script("return window.perfgate.pointPosition(arguments[0])", run_id)
    if not pos:
        raise AssertionError("no point for run %r" % (run_id,))
    # Approach from a nearby pixel so that a mousemove is certainly generated.
    ab = _move_to(driver, pos["x"] - 3, pos["y"])
    ab.perform()
    ab = _move_to(driver, pos["x"], pos["y"])
    ab.perform()
    time.sleep(0.05)
    return driver.execute_script("const h=document.getElementById('hover'); return h ? h.textContent : ''")


def drag_zoom(driver, x0_frac=0.3, x1_frac=0.6, y_frac=0.5, chart_id="chart"):
    """Drag horizontally across the chart's plot area (fractions of the plot area width)."""
    x0, x1, y = driver.execute_script(
        "const g = window.perfgate.chart, a = g.getArea(), r = document.getElementById(arguments[3]).getBoundingClientRect();"
        "return [r.left + scrollX + a.x + a.w*arguments[0], r.left + scrollX + a.x + a.w*arguments[1],"
        "        r.top + scrollY + a.y + a.h*arguments[2]];", x0_frac, x1_frac, y_frac, chart_id)
    ab = _move_to(driver, x0, y)
    ab.pointer_action.pointer_down()
    steps = 8
    for i in range(1, steps + 1):
        _move_to(driver, x0 + (x1 - x0) * i / steps, y, ab)
        ab.pointer_action.pause(0.02)
    ab.pointer_action.pointer_up()
    ab.perform()
    time.sleep(0.1)


def double_click_chart(driver, chart_id="chart"):
    x, y = driver.execute_script(
        "const g = window.perfgate.chart, a = g.getArea(), r = document.getElementById(arguments[0]).getBoundingClientRect();"
        "return [r.left + scrollX + a.x + a.w/2, r.top + scrollY + a.y + a.h/2];", chart_id)
    _move_to(driver, x, y).perform()
    ActionChains(driver).double_click().perform()
    time.sleep(0.1)


def screenshot(driver, path, element_id=None):
    """Save a PNG of the viewport (or of one element)."""
    if element_id:
        driver.find_element("id", element_id).screenshot(path)
    else:
        driver.save_screenshot(path)
    return path


def full_page_screenshot(driver, path, width=1280):
    h = driver.execute_script("return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)")
    driver.set_window_size(width, min(max(h + 100, 600), 4000))
    driver.save_screenshot(path)
    return path
