#!/usr/bin/python3
# Reference values of perfgate qualify's rates (gate/qualify.hpp rate_of):
# Wilson score intervals at 95%, from scipy (Debian python3-scipy 1.10.1):
#   scipy.stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
# Run with /usr/bin/python3; pasted into tests/test_qualify.cpp.
from scipy.stats import binomtest, norm

print(f"z = {norm.ppf(0.975)!r}")
for k, n in [(0, 4), (0, 20), (1, 20), (20, 20), (16, 20), (19, 20), (0, 5), (3, 7)]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    print(f"{{{k}, {n}, {ci.low!r}, {ci.high!r}}},")
