#!/usr/bin/python3
"""Reference values of stats/between_run.hpp for tests/test_stats.cpp.

Run with Debian's python3-scipy: /usr/bin/python3 tests/reference/gen_between_run_refs.py
Each case: history medians h, shift, within (v_B + v_C); prints sd, se, df,
t, p, the 95% interval and the 80%-power MDE at alpha 0.05, each from the
scipy call named next to it.
"""
import numpy as np
from scipy import stats

CASES = [
    # 12 runs, session effects about 1%: the between-run scale dominates
    ("session", [100.0, 101.2, 99.1, 100.4, 98.7, 100.9, 101.5, 99.6, 100.2, 98.9, 100.7, 99.8], 2.4, 0.0004),
    # 10 runs (the minimum), a level step in the middle: the MAD ignores it
    ("step", [50.0, 50.3, 49.8, 50.1, 49.9, 55.2, 55.0, 55.4, 54.9, 55.1], -0.9, 0.01),
    # within-run variance larger than the history's: it is the se
    ("within", [10.0, 10.01, 9.99, 10.0, 10.02, 9.98, 10.0, 10.01, 9.99, 10.0, 10.01], 0.05, 0.0016),
]

print("// clang-format off")
for name, h, shift, within in CASES:
    h = np.array(h)
    d = np.diff(h)
    sd = stats.median_abs_deviation(d, scale="normal")  # scipy.stats.median_abs_deviation(np.diff(h), scale="normal")
    se = np.sqrt(max(sd * sd, within))
    df = 0.3675 * (len(h) - 1)
    t = shift / se
    p = 2 * stats.t.sf(abs(t), df)  # scipy.stats.t.sf(abs(t), df) * 2
    q = stats.t.ppf(0.975, df)  # scipy.stats.t.ppf(1 - 0.05 / 2, df)
    mde = (q + stats.t.ppf(0.8, df)) * se  # (t.ppf(0.975, df) + t.ppf(0.8, df)) * se
    print(f'{{"{name}", {{{", ".join(repr(x) for x in h)}}}, {shift!r}, {within!r}, '
          f'{sd!r}, {se!r}, {df!r}, {t!r}, {p!r}, {shift - q * se!r}, {shift + q * se!r}, {mde!r}}},')
print("// clang-format on")
