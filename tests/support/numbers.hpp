// Helpers shared by several test suites.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
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

// got == want within a relative tolerance (exact equality also for 0).
inline bool close_rel(double got, double want, double tol)
{
    if (got == want) return true;
    return std::fabs(got - want) <= tol * std::fabs(want);
}

// The next value of a 64-bit LCG (Knuth's MMIX constants) as a uniform double
// in [0, 1): deterministic noise, the same on every machine.
inline double lcg_uniform(std::uint64_t& state)
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0; // 53 bits / 2^53
}

// Data generators mirrored by the reference scripts (gen_stats_refs.py,
// gen_noise_refs.py): the same integer LCG and the same floating-point
// operations in the same order, so both sides see bit-identical samples.
inline std::uint32_t lcg_next(std::uint32_t s) { return s * 1664525u + 1013904223u; }

// n values offset + scale * u, u uniform in [0, 1).
inline std::vector<double> lcg_uni(std::uint32_t seed, std::size_t n, double offset, double scale)
{
    std::vector<double> out;
    for (std::uint32_t s = seed; out.size() < n;) {
        s = lcg_next(s);
        out.push_back(offset + scale * (static_cast<double>(s) / 4294967296.0));
    }
    return out;
}

// msec with two decimals, as perf prints task-clock: many ties.
inline std::vector<double> lcg_cents(std::uint32_t seed, std::size_t n, std::uint32_t base, std::uint32_t buckets)
{
    std::vector<double> out;
    for (std::uint32_t s = seed; out.size() < n;) {
        s = lcg_next(s);
        out.push_back(static_cast<double>(base + s % buckets) / 100.0);
    }
    return out;
}

} // namespace perfgate::test

#define CHECK_REL(got, want, tol) \
    do { \
        const double got_ = (got), want_ = (want); \
        INFO(#got " = " << got_ << ", want " << want_ << " (rel tol " << (tol) << ")"); \
        CHECK(::perfgate::test::close_rel(got_, want_, (tol))); \
    } while (0)
