#!/usr/bin/python3
"""The between-run test's statistic alone (stats/between_run.hpp): its two-sided
rejection rate on A/A pairs at alpha 0.05, for the reference distribution
Student t with df = 0.3675 (K - 1) (the rule) against other df choices.

Each trial: K history runs and a baseline and a candidate run, each run's
median = session effect + the median of n = 10 executions' noise; the
statistic is (m_C - m_B) / sqrt(max(sd^2, v_B + v_C)) with sd the normal-
consistent MAD of the history's consecutive differences and
v = (pi/2) stddev^2 / n. Needs Debian's python3-numpy and python3-scipy.

Usage: /usr/bin/python3 bench/sim/sim_between_run_stat.py [trials]   (default 40000; about a minute)
"""
import sys

import numpy as np
from scipy import stats

rng = np.random.default_rng(1)
TRIALS = int(sys.argv[1]) if len(sys.argv) > 1 else 40000


def rejection_rates(k, session_sd, within_sd, n=10, shape="normal"):
    runs = k + 2
    if shape == "normal":
        s = rng.normal(0, session_sd, (TRIALS, runs))
    else:  # Student t with 3 df, scaled to the same sd
        s = rng.standard_t(3, (TRIALS, runs)) * session_sd / np.sqrt(3)
    w = rng.normal(0, within_sd, (TRIALS, runs, n))
    med = np.median(w, axis=2) + s
    v = np.var(w, axis=2, ddof=1) * np.pi / 2 / n
    d = np.diff(med[:, :k], axis=1)
    sd = stats.median_abs_deviation(d, axis=1, scale="normal")
    t = (med[:, k + 1] - med[:, k]) / np.sqrt(np.maximum(sd**2, v[:, k] + v[:, k + 1]))
    out = {}
    for name, df in [("0.3675(K-1)", 0.3675 * (k - 1)), ("K-2", k - 2), ("normal", np.inf)]:
        out[name] = float(np.mean(2 * stats.t.sf(np.abs(t), df) < 0.05))
    return out


print(f"{TRIALS} A/A pairs per row, alpha 0.05; rejection rate per reference distribution")
print(f"{'tails':>7} {'K':>3} {'session':>8} {'within':>7} | {'0.3675(K-1)':>11} {'K-2':>7} {'normal':>7}")
for shape in ["normal", "t3"]:
    for k in [10, 20, 30]:
        for session_sd, within_sd in [(1, 0.01), (1, 1), (1, 3), (0.0001, 1)]:
            r = rejection_rates(k, session_sd, within_sd, shape=shape)
            print(f"{shape:>7} {k:>3} {session_sd:>8} {within_sd:>7} | {r['0.3675(K-1)']:>11.4f} "
                  f"{r['K-2']:>7.4f} {r['normal']:>7.4f}")
