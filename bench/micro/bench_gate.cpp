// Microbenchmarks of gate/: the cost of one comparison and of rendering it.
//   compare() of 50 gated counters x N samples per side (10 benchmarks x 5
//   counters, as perf stat -e task-clock,cycles,instructions,branch-misses,
//   cache-misses would give), realistic noise, two benchmarks regressed;
//   to_json(report).dump(), render_markdown() and render_text() of that report.
// Data are generated with a fixed seed so runs are comparable.
#include "gate/compare.hpp"
#include "gate/report.hpp"
#include "report/render.hpp"

#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

namespace {

namespace capture = perfgate::capture;
namespace gate = perfgate::gate;
namespace report = perfgate::report;

constexpr std::uint64_t seed = 42;
constexpr std::size_t benchmark_count = 10;

struct counter_model {
    const char* name;
    const char* unit;
    double centre; // typical value of a ~12 ms benchmark
    double cov;    // run-to-run noise on a pinned, quiet machine
    int decimals;  // perf prints task-clock with 2 decimals, counts with none
};

// Five counters per benchmark, 10 benchmarks: 50 gated counters. task-clock
// with 2 decimals ties and takes the asymptotic test, the counts do not.
constexpr std::array<counter_model, 5> models{{
    {"task-clock", "msec", 12.34, 0.015, 2},
    {"cycles", "", 4.1e7, 0.01, 0},
    {"instructions", "", 1.0e8, 0.001, 0},
    {"branch-misses", "", 2.0e5, 0.02, 0},
    {"cache-misses", "", 5.0e4, 0.05, 0},
}};

capture::sample_set make_side(std::mt19937_64& rng, std::size_t n, bool candidate)
{
    std::normal_distribution<double> z(0.0, 1.0);
    capture::sample_set set;
    for (std::size_t b = 0; b < benchmark_count; ++b) {
        capture::benchmark_samples bench;
        bench.name = "bench_" + std::to_string(b);
        // Two candidate benchmarks regressed by 5%, so the report has a fail
        // and the renderers show regressions as well as unchanged rows.
        const double factor = candidate && b < 2 ? 1.05 : 1.0;
        for (const auto& m : models) {
            capture::counter_series s;
            s.name = m.name;
            s.unit = m.unit;
            const double scale = std::pow(10.0, m.decimals);
            for (std::size_t i = 0; i < n; ++i) {
                const double x = m.centre * factor * (1.0 + m.cov * z(rng));
                s.values.push_back(std::round(x * scale) / scale);
            }
            bench.counters.push_back(std::move(s));
        }
        set.benchmarks.push_back(std::move(bench));
    }
    return set;
}

gate::policy gate_all()
{
    gate::policy p;
    for (const auto& m : models) p.counters[m.name].gate = true;
    return p;
}

struct fixture_data {
    capture::sample_set baseline, candidate;
    gate::policy rules = gate_all();
};

fixture_data make_data(std::size_t n)
{
    std::mt19937_64 rng(seed);
    fixture_data d;
    d.baseline = make_side(rng, n, false);
    d.candidate = make_side(rng, n, true);
    return d;
}

void bm_compare_50_counters(benchmark::State& state)
{
    const auto d = make_data(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(gate::compare(d.baseline, d.candidate, d.rules));
    state.counters["counters/s"] = benchmark::Counter(static_cast<double>(benchmark_count * models.size()),
                                                      benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_compare_50_counters)->Arg(10)->Arg(30)->Unit(benchmark::kMicrosecond);

// The report the renderers work on: 50 counters x 30 samples, verdict fail.
const gate::report& report_30()
{
    static const gate::report r = [] {
        const auto d = make_data(30);
        return gate::compare(d.baseline, d.candidate, d.rules);
    }();
    return r;
}

// The renderers are measured on a report that has regressions in it; if the
// data stopped producing one, the figures would measure a different thing.
bool check_report(benchmark::State& state, const gate::report& r)
{
    if (r.result == gate::verdict::fail && r.count(gate::status::regression) >= 2) return true;
    state.SkipWithError("bench_gate: the generated report has no regressions; the data model changed");
    return false;
}

void bm_to_json_dump(benchmark::State& state)
{
    const gate::report& r = report_30();
    if (!check_report(state, r)) return;
    std::size_t bytes = 0;
    for (auto _ : state) {
        const std::string s = report::to_json(r).dump();
        bytes = s.size();
        benchmark::DoNotOptimize(s.data());
    }
    state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(bm_to_json_dump)->Unit(benchmark::kMicrosecond);

void bm_render_markdown(benchmark::State& state)
{
    const gate::report& r = report_30();
    if (!check_report(state, r)) return;
    report::markdown_options opt;
    opt.marker = "<!-- perfgate:bench -->";
    std::size_t bytes = 0;
    for (auto _ : state) {
        const std::string s = report::render_markdown(r, opt);
        bytes = s.size();
        benchmark::DoNotOptimize(s.data());
    }
    state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(bm_render_markdown)->Unit(benchmark::kMicrosecond);

void bm_render_text(benchmark::State& state)
{
    const gate::report& r = report_30();
    if (!check_report(state, r)) return;
    for (auto _ : state) benchmark::DoNotOptimize(report::render_text(r, false));
}
BENCHMARK(bm_render_text)->Unit(benchmark::kMicrosecond);

// Round trip a stored comparison (the service reads reports back from JSON).
void bm_report_from_json(benchmark::State& state)
{
    const nlohmann::json j = report::to_json(report_30());
    for (auto _ : state) benchmark::DoNotOptimize(report::report_from_json(j));
}
BENCHMARK(bm_report_from_json)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
