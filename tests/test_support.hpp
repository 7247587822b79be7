// Helpers shared by several test suites.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace perfgate::test {

// A real perf capture from tests/data/perf-stat/.
inline std::string read_testdata(const std::string& name)
{
    std::ifstream in(std::string(PERFGATE_TESTDATA_DIR) + "/perf-stat/" + name, std::ios::binary);
    REQUIRE(in);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Holm's step-down adjustment as R's p.adjust(p, "holm") computes it:
// pmin(1, cummax((m - i + 1) * p[o]))[ro]. Written independently of
// stats/multiplicity.cpp so that tests check the family, not the code.
inline std::vector<double> reference_holm(const std::vector<double>& p)
{
    std::vector<std::size_t> order(p.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
    std::vector<double> out(p.size());
    double running = 0;
    for (std::size_t k = 0; k < order.size(); ++k) {
        running = std::max(running, static_cast<double>(p.size() - k) * p[order[k]]);
        out[order[k]] = std::min(1.0, running);
    }
    return out;
}

} // namespace perfgate::test
