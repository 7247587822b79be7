// Microbenchmark of stats::change_points: one call on 500, 5,000 and 50,000
// points (gaussian noise, CoV 1%, a 5% step every 500 points) with the
// default window of 50, for both methods. The budget: < 20 ms at
// 5,000 points and linear growth in n.
#include "stats/change_points.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

namespace stats = perfgate::stats;

std::vector<double> series(std::size_t n)
{
    std::mt19937_64 rng(42);
    std::normal_distribution<double> z(0.0, 1.0);
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double level = (i / 500) % 2 == 0 ? 1000.0 : 1050.0;
        x[i] = level * (1 + 0.01 * z(rng));
    }
    return x;
}

void run(benchmark::State& state, stats::change_point_method method)
{
    const auto x = series(static_cast<std::size_t>(state.range(0)));
    stats::change_point_options o;
    o.method = method;
    std::size_t found = 0;
    for (auto _ : state) {
        const auto cps = stats::change_points(x, o);
        found = cps.size();
        benchmark::DoNotOptimize(cps.data());
    }
    state.counters["change_points"] = static_cast<double>(found);
    state.SetComplexityN(state.range(0));
}

void bm_change_points_perfgate(benchmark::State& state) { run(state, stats::change_point_method::perfgate); }
BENCHMARK(bm_change_points_perfgate)->Arg(500)->Arg(5000)->Arg(50000)->Unit(benchmark::kMillisecond)->Complexity();

void bm_change_points_otava(benchmark::State& state) { run(state, stats::change_point_method::otava); }
BENCHMARK(bm_change_points_otava)->Arg(500)->Arg(5000)->Arg(50000)->Unit(benchmark::kMillisecond)->Complexity();

} // namespace

BENCHMARK_MAIN();
