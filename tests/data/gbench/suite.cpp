// The google/benchmark program behind baseline.json and candidate.json
// (README.txt). CANDIDATE makes BM_Accumulate do its loop twice.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

static void BM_Sort(benchmark::State& state)
{
    std::vector<int> v(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>((i * 7919) % 1000);
        std::sort(v.begin(), v.end());
        benchmark::DoNotOptimize(v.data());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Sort)->Arg(64)->Arg(1024);

static void BM_Accumulate(benchmark::State& state)
{
    std::vector<double> v(4096, 1.5);
    for (auto _ : state) {
#ifdef CANDIDATE
        for (int k = 0; k < 2; ++k)
#endif
        {
            double s = std::accumulate(v.begin(), v.end(), 0.0);
            benchmark::DoNotOptimize(s);
        }
    }
    state.SetBytesProcessed(state.iterations() * 4096 * 8);
    state.counters["elements"] = 4096;
}
BENCHMARK(BM_Accumulate);

static void BM_StringCat(benchmark::State& state)
{
    for (auto _ : state) {
        std::string s;
        for (int i = 0; i < 32; ++i) s += std::to_string(i);
        benchmark::DoNotOptimize(s.data());
    }
}
BENCHMARK(BM_StringCat)->Threads(2);

BENCHMARK_MAIN();
