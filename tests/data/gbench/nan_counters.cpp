#include <benchmark/benchmark.h>
#include <limits>
static void BM_n(benchmark::State& s)
{
    for (auto _ : s) benchmark::DoNotOptimize(1);
    s.counters["nan"] = std::numeric_limits<double>::quiet_NaN();
    s.counters["inf"] = std::numeric_limits<double>::infinity();
    s.counters["ninf"] = -std::numeric_limits<double>::infinity();
}
BENCHMARK(BM_n)->Iterations(10)->Repetitions(5);
BENCHMARK_MAIN();
