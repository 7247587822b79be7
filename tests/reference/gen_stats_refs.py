#!/usr/bin/python3
"""Reference values for tests/test_stats.cpp.

Run with Debian's interpreter, which has scipy:  /usr/bin/python3 gen_stats_refs.py
(the pyenv python3 on PATH has no scipy). Prints C++ initialiser rows and
literals that are pasted into tests/test_stats.cpp; each row's comment names
the call that produced it. Versions used for the pinned values: see the first
line of the output.

Where scipy has no function, the reference is computed here from the
definition, by code that shares nothing with the C++ under test:
  * exact U distribution / R's qwilcox: exact integer counts by the
    recurrence "the largest pooled value is a baseline value (it beats all j
    candidate values) or a candidate value", in Python big integers;
  * Hodges-Lehmann estimate and CI: all m*n differences materialised and
    sorted; the exact CI uses qwilcox as R's wilcox.test does; the asymptotic
    CI is R's own procedure (wdiff + uniroot, R 4.x stats/R/wilcox.test.R)
    transcribed with scipy.stats.rankdata and solved with scipy.optimize.brentq
    at a tight tolerance; the root is asserted to coincide with an order
    statistic of the differences, and that order statistic is pinned;
  * Holm and BH: R's p.adjust definitions (scipy 1.10 has neither;
    false_discovery_control arrived in scipy 1.11).
"""
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import scipy
import scipy.optimize
import scipy.stats as st

HERE = Path(__file__).resolve().parent
TESTDATA = HERE.parent / "data" / "perf-stat"


# ---------------------------------------------------------------- data sets
# Mirrored exactly in test_stats.cpp (same IEEE operations in the same order).
def lcg_next(s):
    return (s * 1664525 + 1013904223) % 2**32


def lcg_uniform(seed, n, offset, scale):
    """offset + scale * u, u = state / 2^32: untied with near certainty."""
    out, s = [], seed
    for _ in range(n):
        s = lcg_next(s)
        out.append(offset + scale * (s / 4294967296.0))
    return out


def lcg_cents(seed, n, base_cents, buckets):
    """(base + state % buckets) / 100: msec with 2 decimals, as perf prints
    task-clock, so ties are frequent. Integer/100.0 is the double strtod gives
    for the decimal text."""
    out, s = [], seed
    for _ in range(n):
        s = lcg_next(s)
        out.append((base_cents + s % buckets) / 100.0)
    return out


def perf_task_clock():
    """task-clock msec values of tests/data/perf-stat/appended-10-runs.csv."""
    vals = []
    for line in (TESTDATA / "appended-10-runs.csv").read_text().splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] == "task-clock":
            vals.append(float(f[0]))
    return vals


# ---------------------------------------------------- exact U (big integers)
_counts_cache = {}


def u_counts(m, n):
    """counts[u] = number of arrangements with U = u, exact integers."""
    key = (m, n)
    if key in _counts_cache:
        return _counts_cache[key]
    prev = [[1] for _ in range(n + 1)]  # i = 0 baseline values: U = 0
    for i in range(1, m + 1):
        cur = [[1]]
        for j in range(1, n + 1):
            a = [0] * j + prev[j]       # largest value is baseline: +j
            b = cur[j - 1]              # largest value is candidate
            size = max(len(a), len(b))
            cur.append([(a[k] if k < len(a) else 0) + (b[k] if k < len(b) else 0)
                        for k in range(size)])
        prev = cur
    _counts_cache[key] = prev[n]
    return prev[n]


def exact_cdf(m, n, k):
    c = u_counts(m, n)
    return Fraction(sum(c[: k + 1]), math.comb(m + n, m))


def qwilcox(q, m, n):
    """R's qwilcox (src/nmath/wilcox.c) on exact fractions, with its fuzz."""
    eps = 10 * sys.float_info.epsilon
    c = u_counts(m, n)
    total = math.comb(m + n, m)
    if q == 0:
        return 0
    if q == 1:
        return m * n
    acc = 0
    if q <= 0.5:
        x = Fraction(q) - Fraction(eps)
        for k, ck in enumerate(c):
            acc += ck
            if Fraction(acc, total) >= x:
                return k
    else:
        x = 1 - Fraction(q) + Fraction(eps)
        for k, ck in enumerate(c):
            acc += ck
            if Fraction(acc, total) > x:
                return m * n - k
    raise AssertionError("unreachable")


def exact_p_two_sided(u, m, n):
    lo = math.floor(u)
    p_le = exact_cdf(m, n, lo)
    p_ge = exact_cdf(m, n, math.floor(m * n - u))
    return min(Fraction(1), 2 * min(p_le, p_ge))


# --------------------------------------------------------- Hodges-Lehmann
def sorted_diffs(b, c):
    return sorted(cj - bi for cj in c for bi in b)


def r_median(d):
    n = len(d)
    return d[n // 2] if n % 2 else (d[n // 2 - 1] + d[n // 2]) / 2


def hl_exact(b, c, alpha):
    """R wilcox.test(c, b, conf.int=TRUE, exact=TRUE): x = c, y = b."""
    d = sorted_diffs(b, c)
    mn = len(d)
    qu = qwilcox(alpha / 2, len(c), len(b))
    if qu == 0:
        qu = 1
    return r_median(d), d[qu - 1], d[mn - qu], qu


def hl_asymptotic(b, c, alpha):
    """R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) CI,
    transcribed: wdiff() and root() of stats/R/wilcox.test.R."""
    x, y = np.asarray(c, float), np.asarray(b, float)
    nx, ny = len(x), len(y)
    d = sorted_diffs(b, c)
    mumin, mumax = min(x) - max(y), max(x) - min(y)

    def wdiff(dd, zq):
        dr = st.rankdata(np.concatenate([x - dd, y]))
        _, nties = np.unique(dr, return_counts=True)
        dz = dr[:nx].sum() - nx * (nx + 1) / 2 - nx * ny / 2
        corr = np.sign(dz) * 0.5
        sigma = math.sqrt((nx * ny / 12) * ((nx + ny + 1)
                          - (nties**3 - nties).sum() / ((nx + ny) * (nx + ny - 1))))
        return (dz - corr) / sigma - zq

    def root(zq):
        fl, fu = wdiff(mumin, zq), wdiff(mumax, zq)
        if fl <= 0:
            return mumin
        if fu >= 0:
            return mumax
        return scipy.optimize.brentq(wdiff, mumin, mumax, args=(zq,), xtol=1e-13, rtol=1e-15)

    lo = root(st.norm.ppf(1 - alpha / 2))
    hi = root(st.norm.ppf(alpha / 2))
    # The root of the step function sits on a jump, i.e. on a difference.
    scale = max(1.0, abs(mumin), abs(mumax))
    k_lo = min(range(len(d)), key=lambda i: abs(d[i] - lo))
    k_hi = min(range(len(d)), key=lambda i: abs(d[i] - hi))
    assert abs(d[k_lo] - lo) <= 1e-9 * scale, (lo, d[k_lo])
    assert abs(d[k_hi] - hi) <= 1e-9 * scale, (hi, d[k_hi])
    return r_median(d), d[k_lo], d[k_hi], k_lo + 1


# ------------------------------------------------------------------ output
def lit(v):
    if v == math.inf:
        return "inf"
    return repr(float(v)) if isinstance(v, (float, np.floating)) else str(v)


def mwu_cases():
    tc = perf_task_clock()
    return [
        # name, b expr (C++), c expr (C++), b, c
        ("1/1", "{1.0}", "{2.0}", [1.0], [2.0]),
        ("hand 3/4", "{1.1, 2.2, 3.3}", "{0.5, 4.4, 5.5, 6.6}", [1.1, 2.2, 3.3], [0.5, 4.4, 5.5, 6.6]),
        ("2/3", "uni(11, 2, 1000, 100)", "uni(12, 3, 1000, 100)",
         lcg_uniform(11, 2, 1000, 100), lcg_uniform(12, 3, 1000, 100)),
        ("5/5 shifted", "uni(21, 5, 1000, 100)", "uni(22, 5, 1030, 100)",
         lcg_uniform(21, 5, 1000, 100), lcg_uniform(22, 5, 1030, 100)),
        ("7/10", "uni(31, 7, 1000, 100)", "uni(32, 10, 1010, 100)",
         lcg_uniform(31, 7, 1000, 100), lcg_uniform(32, 10, 1010, 100)),
        ("10/4 improvement", "uni(41, 10, 1000, 100)", "uni(42, 4, 960, 100)",
         lcg_uniform(41, 10, 1000, 100), lcg_uniform(42, 4, 960, 100)),
        ("10/10", "uni(51, 10, 1000, 100)", "uni(52, 10, 1020, 100)",
         lcg_uniform(51, 10, 1000, 100), lcg_uniform(52, 10, 1020, 100)),
        ("1/49", "uni(61, 1, 1000, 100)", "uni(62, 49, 1000, 100)",
         lcg_uniform(61, 1, 1000, 100), lcg_uniform(62, 49, 1000, 100)),
        ("49/1", "uni(71, 49, 1000, 100)", "uni(72, 1, 1050, 100)",
         lcg_uniform(71, 49, 1000, 100), lcg_uniform(72, 1, 1050, 100)),
        ("20/30", "uni(81, 20, 1000, 100)", "uni(82, 30, 1015, 100)",
         lcg_uniform(81, 20, 1000, 100), lcg_uniform(82, 30, 1015, 100)),
        ("49/49 null", "uni(91, 49, 1000, 100)", "uni(92, 49, 1000, 100)",
         lcg_uniform(91, 49, 1000, 100), lcg_uniform(92, 49, 1000, 100)),
        ("49/49 shifted", "uni(93, 49, 1000, 100)", "uni(94, 49, 1010, 100)",
         lcg_uniform(93, 49, 1000, 100), lcg_uniform(94, 49, 1010, 100)),
        ("49/49 separated", "uni(95, 49, 1000, 100)", "uni(96, 49, 1200, 100)",
         lcg_uniform(95, 49, 1000, 100), lcg_uniform(96, 49, 1200, 100)),
        ("50/50 asymptotic", "uni(101, 50, 1000, 100)", "uni(102, 50, 1010, 100)",
         lcg_uniform(101, 50, 1000, 100), lcg_uniform(102, 50, 1010, 100)),
        ("60/45 asymptotic", "uni(111, 60, 1000, 100)", "uni(112, 45, 992, 100)",
         lcg_uniform(111, 60, 1000, 100), lcg_uniform(112, 45, 992, 100)),
        ("12/15 ties msec", "cents(121, 12, 300, 30)", "cents(122, 15, 305, 30)",
         lcg_cents(121, 12, 300, 30), lcg_cents(122, 15, 305, 30)),
        ("perf task-clock 5/5", "task_clock(0, 5)", "task_clock(5, 10)", tc[0:5], tc[5:10]),
        ("200/200 ties msec", "cents(131, 200, 300, 200)", "cents(132, 200, 303, 200)",
         lcg_cents(131, 200, 300, 200), lcg_cents(132, 200, 303, 200)),
        ("200/200", "uni(141, 200, 1000, 100)", "uni(142, 200, 1003, 100)",
         lcg_uniform(141, 200, 1000, 100), lcg_uniform(142, 200, 1003, 100)),
        ("500/500 separated", "uni(151, 500, 1000, 100)", "uni(152, 500, 1100.5, 100)",
         lcg_uniform(151, 500, 1000, 100), lcg_uniform(152, 500, 1100.5, 100)),
        ("2000/1500 ties msec", "cents(161, 2000, 1000, 400)", "cents(162, 1500, 1010, 400)",
         lcg_cents(161, 2000, 1000, 400), lcg_cents(162, 1500, 1010, 400)),
        ("all tied 3/4", "{5.0, 5.0, 5.0}", "{5.0, 5.0, 5.0, 5.0}", [5.0] * 3, [5.0] * 4),
        ("1/1 tied", "{2.0}", "{2.0}", [2.0], [2.0]),
    ]


def main():
    print(f"// generated by tests/reference/gen_stats_refs.py with scipy {scipy.__version__}, "
          f"numpy {np.__version__}, Python {sys.version.split()[0]}")
    alpha = 0.05

    print("\n// ---- Mann-Whitney U + Hodges-Lehmann (alpha = 0.05)")
    for name, bx, cx, b, c in mwu_cases():
        pooled = b + c
        ties = len(set(pooled)) != len(pooled)
        exact = (not ties) and len(b) < 50 and len(c) < 50
        method = "exact" if exact else "asymptotic"
        res = st.mannwhitneyu(b, c, method=method, use_continuity=True, alternative="two-sided")
        u, p = float(res.statistic), float(res.pvalue)
        if all(v == pooled[0] for v in pooled):
            assert p == 1.0
        if exact:
            ours = float(exact_p_two_sided(u, len(b), len(c)))
            assert abs(ours - p) <= 1e-12 * p, (name, ours, p)
            est, lo, hi, k = hl_exact(b, c, alpha)
            hl_call = "R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=%d)" % k
        else:
            est, lo, hi, k = hl_asymptotic(b, c, alpha)
            hl_call = ("R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure "
                       "(brentq root = d_(%d))" % k)
        print(f"    // {name}: scipy.stats.mannwhitneyu(b, c, method=\"{method}\") (u, p);\n"
              f"    //   HL: {hl_call}")
        print(f"    {{\"{name}\", {bx}, {cx}, {lit(u)}, {lit(p)}, mwu_method::{method}, "
              f"{str(ties).lower()}, {lit(est)}, {lit(lo)}, {lit(hi)}}},")

    print("\n// ---- exact U distribution, exact big-integer counts")
    for m, n in [(49, 49), (10, 4), (3, 5)]:
        cdfs = [float(exact_cdf(m, n, k)) for k in range(4)]
        print(f"    // ({m}, {n}) P(U <= k), k = 0..3: {', '.join(lit(v) for v in cdfs)}")
        mid = m * n // 2
        print(f"    // ({m}, {n}) P(U <= {mid}) = {lit(float(exact_cdf(m, n, mid)))}")
        for q in (0.005, 0.025, 0.5, 0.975):
            print(f"    // ({m}, {n}) qwilcox({q}) = {qwilcox(q, m, n)}")
        print(f"    // ({m}, {n}) min p = 2 / C = {lit(2 / math.comb(m + n, m))}")

    print("\n// ---- Holm / BH by R's p.adjust definition")
    p_sets = {
        "small": [0.01, 0.04, 0.03, 0.005, 0.5],
        "ties": [0.02, 0.02, 0.001, 0.9, 0.02, 0.04],
    }
    s, ps = 201, []
    for _ in range(50):
        s = lcg_next(s)
        ps.append((s / 4294967296.0) ** 3)  # skewed towards 0, as in a real gate
    p_sets["lcg50"] = ps
    for key, p in p_sets.items():
        p = np.asarray(p)
        n = len(p)
        o = np.argsort(p, kind="stable")
        holm = np.empty(n)
        holm[o] = np.minimum(1, np.maximum.accumulate((n - np.arange(n)) * p[o]))
        od = np.argsort(-p, kind="stable")
        i = np.arange(n, 0, -1)
        bh = np.empty(n)
        bh[od] = np.minimum(1, np.minimum.accumulate(n / i * p[od]))
        print(f"    // {key}: p.adjust(p, \"holm\"): {', '.join(lit(v) for v in holm)}")
        print(f"    // {key}: p.adjust(p, \"BH\"):   {', '.join(lit(v) for v in bh)}")

    print("\n// ---- Welch: scipy.stats.ttest_ind_from_stats(m1, s1, n1, m2, s2, n2, equal_var=False)")
    for args in [(100.0, 2.0, 10, 103.0, 2.5, 12), (4.57, 0.0, 5, 4.70, 0.3, 5),
                 (1000.0, 1.0, 30, 1000.0, 1.0, 30), (50.0, 0.5, 3, 20.0, 4.0, 40),
                 (1.0, 0.01, 20, 1.02, 0.01, 20)]:
        r = st.ttest_ind_from_stats(*args, equal_var=False)
        m1, s1, n1, m2, s2, n2 = args
        v1, v2 = s1 * s1 / n1, s2 * s2 / n2
        df = (v1 + v2) ** 2 / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1))
        print(f"    // {args}: t(scipy) = {lit(r.statistic)}, p = {lit(r.pvalue)}, df = {lit(df)}")

    print("\n// ---- descriptive: numpy / scipy")
    tc = perf_task_clock()
    for key, x in {"task-clock": tc, "odd": [3.0, 1.0, 2.0, 10.0, 7.0]}.items():
        print(f"    // {key}: np.median {lit(np.median(x))}, np.mean {lit(np.mean(x))}, "
              f"np.std(ddof=1) {lit(np.std(x, ddof=1))}, "
              f"scipy.stats.variation(ddof=1) {lit(st.variation(x, ddof=1))}, "
              f"median_abs_deviation(scale=1) {lit(st.median_abs_deviation(x))}")

    print("\n// ---- z-scores")
    hist = [10.0, 10.2, 9.9, 10.1, 10.0, 10.3, 9.8, 15.0]
    for x in (10.5, 12.0):
        z = (x - np.mean(hist)) / np.std(hist, ddof=1)
        rz = (x - np.median(hist)) / st.median_abs_deviation(hist, scale="normal")
        print(f"    // x={x}: (x - np.mean(h)) / np.std(h, ddof=1) = {lit(z)}; "
              f"(x - np.median(h)) / median_abs_deviation(h, scale='normal') = {lit(rz)}")

    print("\n// ---- normal helpers: scipy.stats.norm")
    for p in (0.975, 0.8, 1e-10, 0.5):
        print(f"    // norm.ppf({p}) = {lit(st.norm.ppf(p))}")
    for x in (1.959963984540054, -3.0, 10.0, 30.0):
        print(f"    // norm.cdf({x}) = {lit(st.norm.cdf(x))}, norm.sf = {lit(st.norm.sf(x))}")

    print("\n// ---- MDE: (norm.ppf(1-a/2) + norm.ppf(power)) * sqrt(sb^2/nb + sc^2/nc) * sqrt(pi/3) / centre * 100")
    for sb, nb, sc, nc, centre, a, pw in [(0.5, 10, 0.6, 10, 100.0, 0.05, 0.8),
                                          (2.0, 30, 2.0, 20, -50.0, 0.01, 0.9),
                                          (0.5, 4, 0.5, 4, 100.0, 0.05, 0.8)]:
        mde = ((st.norm.ppf(1 - a / 2) + st.norm.ppf(pw)) * math.sqrt(sb**2 / nb + sc**2 / nc)
               * math.sqrt(math.pi / 3) / abs(centre) * 100)
        print(f"    // ({sb}, {nb}, {sc}, {nc}, {centre}, {a}, {pw}) -> {lit(mde)}; "
              f"min exact p = 2/C = {lit(2 / math.comb(nb + nc, nb))}")


if __name__ == "__main__":
    main()
