// Microbenchmarks of stats/: the costs a gate pays per counter.
//   exact MWU at 49/49 (the largest exact case, distribution built each call),
//   asymptotic MWU and Hodges-Lehmann estimate + CI at 10,000 per side,
//   Holm over 50 p-values (one gate over many benchmarks x counters).
#include "stats/hodges_lehmann.hpp"
#include "stats/mann_whitney.hpp"
#include "stats/multiplicity.hpp"

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

std::vector<double> sample(std::uint64_t seed, std::size_t n, double shift)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> dist(100.0 + shift, 5.0);
    std::vector<double> v(n);
    for (double& x : v) x = dist(rng);
    return v;
}

void bm_exact_distribution_49(benchmark::State& state)
{
    for (auto _ : state) {
        perfgate::stats::exact_u_distribution d(49, 49);
        benchmark::DoNotOptimize(d.p_two_sided(1000));
    }
}
BENCHMARK(bm_exact_distribution_49)->Unit(benchmark::kMicrosecond);

void bm_mwu_exact_49(benchmark::State& state)
{
    const auto b = sample(1, 49, 0), c = sample(2, 49, 2);
    for (auto _ : state) benchmark::DoNotOptimize(perfgate::stats::mann_whitney_u(b, c));
}
BENCHMARK(bm_mwu_exact_49)->Unit(benchmark::kMicrosecond);

void bm_mwu_asymptotic(benchmark::State& state)
{
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto b = sample(3, n, 0), c = sample(4, n, 0.1);
    for (auto _ : state) benchmark::DoNotOptimize(perfgate::stats::mann_whitney_u(b, c));
    state.SetComplexityN(state.range(0));
}
BENCHMARK(bm_mwu_asymptotic)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

void bm_hodges_lehmann(benchmark::State& state)
{
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto b = sample(5, n, 0), c = sample(6, n, 0.1);
    for (auto _ : state) benchmark::DoNotOptimize(perfgate::stats::hodges_lehmann(b, c, 0.05, false));
}
BENCHMARK(bm_hodges_lehmann)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

void bm_hodges_lehmann_exact_49(benchmark::State& state)
{
    const auto b = sample(7, 49, 0), c = sample(8, 49, 2);
    for (auto _ : state) benchmark::DoNotOptimize(perfgate::stats::hodges_lehmann(b, c, 0.05, true));
}
BENCHMARK(bm_hodges_lehmann_exact_49)->Unit(benchmark::kMicrosecond);

// The gate's usual size: 30 repetitions a side, once per tested counter of a
// compare. Values rounded to 4 significant digits as perf prints them (ties).
// 512 different pairs in turn: on one pair repeated, the branch predictor
// learns the selection's comparisons and the figure flatters it 5x.
void bm_hodges_lehmann_30(benchmark::State& state)
{
    std::vector<std::pair<std::vector<double>, std::vector<double>>> pairs;
    for (std::uint64_t i = 0; i < 512; ++i) {
        auto b = sample(100 + 2 * i, 30, 0), c = sample(101 + 2 * i, 30, 0.02);
        for (auto* v : {&b, &c})
            for (double& x : *v) x = std::round(x * 1000) / 1000;
        pairs.emplace_back(std::move(b), std::move(c));
    }
    std::size_t i = 0;
    for (auto _ : state) {
        const auto& [b, c] = pairs[i++ % pairs.size()];
        benchmark::DoNotOptimize(perfgate::stats::hodges_lehmann(b, c, 0.05, false));
    }
}
BENCHMARK(bm_hodges_lehmann_30)->Unit(benchmark::kMicrosecond);

void bm_holm_50(benchmark::State& state)
{
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<double> p(50);
    for (double& x : p) x = u(rng) * u(rng);
    for (auto _ : state) benchmark::DoNotOptimize(perfgate::stats::holm(p));
}
BENCHMARK(bm_holm_50)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
