// Helpers shared by the suites that build samples and read reports
// (test_gate, test_service).
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <string_view>
#include <vector>

#include "gate/report.hpp"

namespace perfgate::test {

// 10 values 100.0, 100.1, ... 100.9 scaled by factor: CoV ~0.3%.
inline std::vector<double> ramp(double factor = 1.0, std::size_t n = 10)
{
    std::vector<double> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back((100.0 + 0.1 * static_cast<double>(i)) * factor);
    return v;
}

// The counter of that name in benchmark `bench` of a report; fails the test if absent.
inline const gate::counter_report& counter(const gate::report& r, std::string_view name, std::size_t bench = 0)
{
    for (const auto& c : r.benchmarks.at(bench).counters) {
        if (c.name == name) return c;
    }
    FAIL("counter not in report: " << name);
    throw 0;
}

} // namespace perfgate::test
