#!/usr/bin/python3
"""Reference values for tests/test_noise.cpp (the noise diagnosis).

Run with Debian's interpreter, which has scipy, on a machine with R and the
diptest package (apt-get install r-base-core r-cran-diptest):
    /usr/bin/python3 gen_noise_refs.py
Prints C++ initialiser rows that are pasted into tests/test_noise.cpp; each
block names the call that produced it. Versions: see the first lines.

  * Kendall's trend: scipy.stats.kendalltau(numpy.arange(n), x) (variant
    "b", method "auto", two-sided).
  * Dip: R's diptest::dip(x) and diptest::dip.test(x)$p.value, on the very
    doubles of the C++ generators (passed to R as 17-digit decimals, which
    round-trip).
  * Critical dip: dip.test's own table interpolation at the 0.95 column of
    diptest's qDiptab (the body of dip.test, without the data set), divided
    by sqrt(n).
  * repetitions_for_mde: the smallest n with
    (norm.ppf(1 - a/2) + norm.ppf(power)) * sqrt((sb^2 + sc^2) / n)
      * sqrt(pi/3) / |centre| * 100 <= target,
    from the closed form ceil(...) checked at n - 1 and n, and the exact
    test's floor 2 / C(2n, n) <= alpha (as stats/mde.cpp).
"""
import math
import subprocess
import sys

import numpy as np
import scipy
import scipy.stats as st


# ---------------------------------------------------------------- data sets
# Mirrored exactly in test_noise.cpp (same IEEE operations in the same order).
def lcg_next(s):
    return (s * 1664525 + 1013904223) % 2**32


def uni(seed, n, offset, scale):
    out, s = [], seed
    for _ in range(n):
        s = lcg_next(s)
        out.append(offset + scale * (s / 4294967296.0))
    return out


def cents(seed, n, base_cents, buckets):
    out, s = [], seed
    for _ in range(n):
        s = lcg_next(s)
        out.append((base_cents + s % buckets) / 100.0)
    return out


def two_speed(seed, n, share, fast, slow, spread):
    """Each value: fast with probability `share`, else slow, plus uniform
    [0, spread): a host that flips between two speeds."""
    out, s = [], seed
    for _ in range(n):
        s = lcg_next(s)
        base = fast if s / 4294967296.0 < share else slow
        s = lcg_next(s)
        out.append(base + spread * (s / 4294967296.0))
    return out


def drift(seed, n, start, slope, spread):
    """start + slope * i + uniform [0, spread): a machine slowing down."""
    out, s = [], seed
    for i in range(n):
        s = lcg_next(s)
        out.append(start + slope * i + spread * (s / 4294967296.0))
    return out


def ramp(factor=1.0, n=10):
    return [(100.0 + 0.1 * i) * factor for i in range(n)]


def r_eval(code, stdin=""):
    res = subprocess.run(["Rscript", "-e", code], input=stdin, capture_output=True, text=True, check=True)
    return res.stdout.strip()


def r_input(x):
    """x as R reads it with scan(): 17 significant digits round-trip."""
    return "\n".join(repr(float(v)) for v in x) + "\n"


def cpp(v):
    return repr(float(v))


# (name, C++ expression, values)
DIP_CASES = [
    ("hand: 8/14 ms", "{8.1, 8.2, 7.9, 14.1, 14.0, 8.0, 13.9, 8.3, 14.2, 8.1}",
     [8.1, 8.2, 7.9, 14.1, 14.0, 8.0, 13.9, 8.3, 14.2, 8.1]),
    ("hand: 2/3 point masses", "{8, 8, 14, 14, 14}", [8, 8, 14, 14, 14]),
    ("hand: all tied", "{5, 5, 5, 5}", [5, 5, 5, 5]),
    ("hand: 0/1 halves", "{0, 0, 0, 1, 1, 1}", [0, 0, 0, 1, 1, 1]),
    ("hand: one outlier", "{100, 100.2, 99.9, 100.1, 100.3, 99.8, 100, 100.1, 99.9, 140}",
     [100, 100.2, 99.9, 100.1, 100.3, 99.8, 100, 100.1, 99.9, 140]),
    ("hand: range overflows", "{-1e308, 1e308, 0, 5e307, -5e307}", [-1e308, 1e308, 0, 5e307, -5e307]),
    ("uniform 5", "uni(11, 5, 1000, 100)", uni(11, 5, 1000, 100)),
    ("uniform 10", "uni(21, 10, 1000, 100)", uni(21, 10, 1000, 100)),
    ("uniform 37", "uni(31, 37, 1000, 100)", uni(31, 37, 1000, 100)),
    ("msec ties 30", "cents(41, 30, 1500, 40)", cents(41, 30, 1500, 40)),
    ("msec ties 200", "cents(51, 200, 1500, 300)", cents(51, 200, 1500, 300)),
    ("two speeds 10", "two_speed(61, 10, 0.5, 8, 14, 0.8)", two_speed(61, 10, 0.5, 8, 14, 0.8)),
    ("two speeds 20, 30% fast", "two_speed(71, 20, 0.3, 8, 14, 1.5)", two_speed(71, 20, 0.3, 8, 14, 1.5)),
    ("two speeds 60", "two_speed(81, 60, 0.5, 8, 14, 2.5)", two_speed(81, 60, 0.5, 8, 14, 2.5)),
    ("close speeds 40", "two_speed(91, 40, 0.5, 14, 15, 1.0)", two_speed(91, 40, 0.5, 14, 15, 1.0)),
    ("drift 12", "drift(101, 12, 100, 0.5, 1.0)", drift(101, 12, 100, 0.5, 1.0)),
    ("uniform 1000", "uni(111, 1000, 0, 1)", uni(111, 1000, 0, 1)),
]

KENDALL_CASES = [
    ("2 values", "{2.0, 1.0}", [2.0, 1.0]),
    ("3 values", "{3.0, 1.0, 2.0}", [3.0, 1.0, 2.0]),
    ("ramp 10", "ramp()", ramp()),
    ("reversed 6", "{6, 5, 4, 3, 2, 1}", [6, 5, 4, 3, 2, 1]),
    ("uniform 5", "uni(11, 5, 1000, 100)", uni(11, 5, 1000, 100)),
    ("uniform 10", "uni(21, 10, 1000, 100)", uni(21, 10, 1000, 100)),
    ("uniform 33", "uni(121, 33, 1000, 100)", uni(121, 33, 1000, 100)),
    ("uniform 34 (asymptotic)", "uni(131, 34, 1000, 100)", uni(131, 34, 1000, 100)),
    ("drift 12", "drift(101, 12, 100, 0.5, 1.0)", drift(101, 12, 100, 0.5, 1.0)),
    ("drift 25 weak", "drift(141, 25, 100, 0.05, 1.0)", drift(141, 25, 100, 0.05, 1.0)),
    ("ramp 40, one swap (exact, c = 1)", "swapped(ramp(1.0, 40), 17)",
     None),
    ("msec ties 30", "cents(41, 30, 1500, 40)", cents(41, 30, 1500, 40)),
    ("msec ties 200", "cents(51, 200, 1500, 300)", cents(51, 200, 1500, 300)),
    ("two levels", "{1, 1, 2, 2, 2, 1, 2, 2}", [1, 1, 2, 2, 2, 1, 2, 2]),
    ("uniform 3000", "uni(151, 3000, 0, 1)", uni(151, 3000, 0, 1)),
]


def swapped(v, i):
    v = list(v)
    v[i], v[i + 1] = v[i + 1], v[i]
    return v


def main():
    print(f"// Python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}")
    print("// " + r_eval('cat(R.version.string, "diptest", format(packageVersion("diptest")))'))

    print("\n// ---- dip: diptest::dip(x), dip.test(x)$p.value")
    for name, expr, x in DIP_CASES:
        out = r_eval('suppressMessages(library(diptest)); x <- scan(file("stdin"), quiet = TRUE); '
                     'cat(sprintf("%.17g", dip(x)), if (length(x) >= 4) sprintf("%.17g", dip.test(x)$p.value) else "NA")',
                     r_input(x))
        dip, p = out.split()
        print(f'    // dip.test p = {p}\n    {{"{name}", {expr}, {dip}, {"true" if float(p) < 0.05 else "false"}}},')

    print("\n// ---- critical dip: dip.test's interpolation of qDiptab[, \"0.95\"] / sqrt(n)")
    ns = [4, 5, 9, 10, 12, 25, 37, 100, 150, 10000, 72000, 100000]
    code = ('q <- diptest:::rdRDS("extraData", "qDiptab.rds"); nn <- as.integer(dimnames(q)[["n"]]); '
            'for (n in c(' + ",".join(map(str, ns)) + ')) { '
            'if (n >= max(nn)) { y <- sqrt(max(nn)) * q[length(nn), "0.95"] } else { '
            'i <- findInterval(n, nn); f <- (n - nn[i]) / (nn[i + 1] - nn[i]); '
            'y0 <- sqrt(nn[i]) * q[i, "0.95"]; y1 <- sqrt(nn[i + 1]) * q[i + 1, "0.95"]; y <- y0 + f * (y1 - y0) }; '
            'cat(n, sprintf("%.17g", y / sqrt(n)), "\\n") }')
    for line in r_eval(code).splitlines():
        n, c = line.split()
        print(f"    {{{n}, {c}}},")

    print("\n// ---- Kendall: scipy.stats.kendalltau(numpy.arange(n), x)")
    for name, expr, x in KENDALL_CASES:
        if x is None:
            x = swapped(ramp(1.0, 40), 17)
        r = st.kendalltau(np.arange(len(x)), np.array(x, dtype=float))
        ties = len(set(x)) != len(x)
        n = len(x)
        dis = sum(1 for i in range(n) for j in range(i + 1, n) if x[i] > x[j]) if n <= 400 else None
        tot = n * (n - 1) // 2
        exact = (not ties) and (n <= 33 or (dis is not None and min(dis, tot - dis) <= 1))
        print(f'    {{"{name}", {expr}, {cpp(r.statistic)}, {cpp(r.pvalue)}, {"true" if exact else "false"}}},')

    print("\n// ---- repetitions_for_mde")
    cases = [
        (0.5, 0.6, 100.0, 2.0, 0.05, 0.8),
        (1.5, 1.5, 15.0, 2.0, 0.05, 0.8),     # CoV 10% at 15 ms, threshold 2%
        (2.7, 2.4, 15.0, 5.0, 0.05, 0.8),
        (3.0, 3.0, 15.0, 2.0, 0.01, 0.9),
        (0.0, 0.0, 100.0, 2.0, 0.05, 0.8),    # no noise: the exact test's floor, n = 4
        (0.0, 0.0, 100.0, 2.0, 0.001, 0.8),   # 2 / C(2n, n) <= 0.001 first at n = 7
    ]
    for sb, sc, centre, target, alpha, power in cases:
        z = st.norm.ppf(1 - alpha / 2) + st.norm.ppf(power)
        k = (z * math.sqrt(math.pi / 3) * 100 / abs(centre) / target) ** 2 * (sb * sb + sc * sc)
        n = max(2, math.ceil(k))
        def mde(m):
            return z * math.sqrt(sb * sb / m + sc * sc / m) * math.sqrt(math.pi / 3) / abs(centre) * 100
        while n > 2 and mde(n - 1) <= target:
            n -= 1
        while mde(n) > target:
            n += 1
        while 2 / math.comb(2 * n, n) > alpha:
            n += 1
        print(f"    {{{sb}, {sc}, {centre}, {target}, {alpha}, {power}, {n}}},  // k = {k!r}")


if __name__ == "__main__":
    main()
