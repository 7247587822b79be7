#!/usr/bin/python3
"""Reference values for the perf attribution intervals (stats/proportions.hpp)
pinned in tests/test_flame.cpp.

Run with Debian's interpreter, which has scipy:
    /usr/bin/python3 tests/reference/gen_attribution_refs.py
Prints C++ initialiser rows; each block names what produced it.

  * Wilson's score interval, from its formula, cross-checked against
    scipy.stats.binomtest(k, n).proportion_ci(confidence_level, method="wilson")
    for integer counts (scipy computes it separately, by its own code).
  * Newcombe's hybrid score interval (Newcombe 1998, method 10) for p2 - p1
    from the two Wilson intervals; the paper's example 56/70 vs 48/80 gives
    0.0524 to 0.3339 for p1 - p2 at 95%.
  * Pearson dispersion: sum over sides of sum_i (x_i - n_i p)^2 / (n_i p (1-p)),
    over the sum of (executions - 1) of the sides with 0 < p < 1, floored at 1.
  * Bonferroni critical values: scipy.stats.norm.ppf(1 - alpha / (2 m)).
"""
import math

import scipy
import scipy.stats as st


def wilson(x, n, z):
    p = x / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    lo = 0.0 if x == 0 else max(0.0, centre - half)
    hi = 1.0 if x == n else min(1.0, centre + half)
    return lo, hi


def newcombe(x1, n1, x2, n2, z):
    l1, u1 = wilson(x1, n1, z)
    l2, u2 = wilson(x2, n2, z)
    p1, p2 = x1 / n1, x2 / n2
    d = p2 - p1
    return d - math.hypot(p2 - l2, u1 - p1), d + math.hypot(u2 - p2, p1 - l1)


def dispersion(sides):
    chi2 = df = 0.0
    for ex in sides:
        x = sum(e[0] for e in ex)
        n = sum(e[1] for e in ex)
        p = x / n if n > 0 else 0
        if len(ex) < 2 or p <= 0 or p >= 1:
            continue
        for xi, ni in ex:
            chi2 += (xi - ni * p) ** 2 / (ni * p * (1 - p))
        df += len(ex) - 1
    return max(1.0, chi2 / df) if df > 0 else 1.0


print("// scipy", scipy.__version__)
z95 = st.norm.ppf(0.975)
print("// z95 = norm.ppf(0.975) = %.17g" % z95)

print("// Wilson: {x, n, z, lo, hi}")
for x, n, z in [(0, 10, z95), (3, 10, z95), (10, 10, z95), (304, 1613, 3.5), (1, 2, 1.0), (50.5, 101.25, z95)]:
    lo, hi = wilson(x, n, z)
    if float(x).is_integer() and x not in (0, n):
        ci = st.binomtest(int(x), int(n)).proportion_ci(confidence_level=2 * st.norm.cdf(z) - 1, method="wilson")
        assert abs(ci.low - lo) < 1e-12 and abs(ci.high - hi) < 1e-12, (ci, lo, hi)
    print("{%r, %r, %.17g, %.17g, %.17g}," % (x, n, z, lo, hi))

print("// Newcombe p2 - p1: {x1, n1, x2, n2, z, lo, hi}")
lo, hi = newcombe(48, 80, 56, 70, z95)
assert abs(lo - 0.0524) < 5e-5 and abs(hi - 0.3339) < 5e-5, (lo, hi)   # Newcombe (1998), Table II, method 10
for x1, n1, x2, n2, z in [(48, 80, 56, 70, z95), (0, 1198, 304, 1613, 3.5), (83, 95, 83, 95, z95),
                          (5, 1000, 0, 900, 3.0), (20.25, 300.5, 10.5, 280.75, z95)]:
    lo, hi = newcombe(x1, n1, x2, n2, z)
    print("{%r, %r, %r, %r, %.17g, %.17g, %.17g}," % (x1, n1, x2, n2, z, lo, hi))

print("// Dispersion")
for sides in [[[(10, 100), (20, 100), (15, 100)], [(5, 80), (9, 90)]],
              [[(10, 100), (10, 100), (10, 100)], [(10, 100)]],
              [[(0, 100), (0, 120)], [(40, 100), (10, 100), (25, 110)]],
              [[(5, 50)], [(7, 60)]]]:
    print("// %r -> %.17g" % (sides, dispersion(sides)))

print("// Bonferroni z: {alpha, m, z}")
for alpha, m in [(0.05, 1), (0.05, 100), (0.05, 37)]:
    print("{%r, %d, %.17g}," % (alpha, m, st.norm.ppf(1 - alpha / (2 * m))))
