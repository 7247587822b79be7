// Helpers shared by the suites that build samples and read reports
// (test_gate, test_service, test_comments).
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capture/samples.hpp"
#include "gate/report.hpp"
#include "support/numbers.hpp"

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

// A google/benchmark-like suite of `n` benchmarks, the baseline and the
// candidate: real_time and cpu_time (ns) and instructions, plus
// items_per_second (/s, better higher) when with_rate; 10 repetitions each
// from a fixed LCG: deterministic. In the candidate, every 50th benchmark
// (from 7) is 30% slower, every 100th (from 3) 25% faster; "BM_Gone/<k>"
// (2) are in the baseline only, "BM_New/<k>" (3) in the candidate only, and
// BM_Suite/11 fails in the candidate (SkipWithError).
inline std::pair<capture::sample_set, capture::sample_set> generated_suite(int n, bool with_rate = true)
{
    std::uint64_t state = 30;
    auto reps = [&state](double level, double factor) {
        std::vector<double> v;
        for (int i = 0; i < 10; ++i) v.push_back(level * factor * (1 + 0.002 * lcg_uniform(state)));
        return v;
    };
    auto counter = [](std::string name, std::vector<double> values, std::string unit) {
        capture::counter_series c;
        c.name = std::move(name);
        c.unit = std::move(unit);
        c.values = std::move(values);
        return c;
    };
    auto bench = [&](const std::string& name, double level, double factor) {
        capture::benchmark_samples b;
        b.name = name;
        // One statement per counter: the LCG's draws go in this order.
        b.counters.push_back(counter("real_time", reps(level, factor), "ns"));
        b.counters.push_back(counter("cpu_time", reps(level, factor), "ns"));
        b.counters.push_back(counter("instructions", reps(level * 40, factor), ""));
        if (with_rate) {
            b.counters.push_back(counter("items_per_second", reps(1e9 / level, 1 / factor), "/s"));
            b.counters.back().direction = capture::better::higher;
        }
        return b;
    };
    capture::sample_set base, cand;
    for (int i = 0; i < n; ++i) {
        const std::string name = "BM_Suite/" + std::to_string(i) + "/real_time";
        const double level = 1000 + 37 * i;
        const double factor = i % 50 == 7 ? 1.3 : i % 100 == 3 ? 0.75 : 1.0;
        base.benchmarks.push_back(bench(name, level, 1.0));
        cand.benchmarks.push_back(bench(name, level, factor));
        if (i == 11) {
            cand.benchmarks.back().counters.clear();
            cand.benchmarks.back().error = "out of memory";
        }
    }
    for (int k = 0; k < 2; ++k) base.benchmarks.push_back(bench("BM_Gone/" + std::to_string(k), 500, 1.0));
    for (int k = 0; k < 3; ++k) cand.benchmarks.push_back(bench("BM_New/" + std::to_string(k), 500, 1.0));
    return {base, cand};
}

} // namespace perfgate::test
