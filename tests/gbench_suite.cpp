// A google/benchmark program of three benchmarks for tests/test_harness_run.cpp
// (perfgate run --harness gbench), built in four variants:
//   gbench_suite        the baseline
//   gbench_suite_slow   PERFGATE_GBENCH_SLOW: BM_Hash does its work 3 times
//   gbench_suite_skip   PERFGATE_GBENCH_SKIP: BM_Copy calls SkipWithError
//   gbench_suite_more   PERFGATE_GBENCH_MORE: a fourth benchmark, BM_New
//   gbench_suite_timed  PERFGATE_GBENCH_TIMED: two more that declare their
//                       time, BM_Wall (UseRealTime) and BM_Manual (UseManualTime)
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

void BM_Work(benchmark::State& state)
{
    const auto n = static_cast<std::uint64_t>(state.range(0));
    for (auto _ : state) {
        std::uint64_t acc = 0;
        for (std::uint64_t i = 0; i < n; ++i) acc += i * i;
        benchmark::DoNotOptimize(acc);
    }
}
BENCHMARK(BM_Work)->Arg(2048);

void BM_Copy(benchmark::State& state)
{
#ifdef PERFGATE_GBENCH_SKIP
    state.SkipWithError("input file missing");
#endif
    std::vector<char> from(16384, 'x'), to(16384);
    for (auto _ : state) {
        std::memcpy(to.data(), from.data(), from.size());
        benchmark::DoNotOptimize(to.data());
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Copy);

void BM_Hash(benchmark::State& state)
{
#ifdef PERFGATE_GBENCH_SLOW
    constexpr int passes = 3;
#else
    constexpr int passes = 1;
#endif
    for (auto _ : state) {
        std::uint64_t h = 0;
        for (int p = 0; p < passes; ++p) {
            for (std::uint64_t i = 0; i < 4096; ++i) {
                h = mix(h, i);
                benchmark::DoNotOptimize(h);
            }
        }
    }
}
BENCHMARK(BM_Hash);

#ifdef PERFGATE_GBENCH_MORE
void BM_New(benchmark::State& state)
{
    for (auto _ : state) {
        std::uint64_t h = 1;
        for (std::uint64_t i = 0; i < 512; ++i) h = mix(h, i);
        benchmark::DoNotOptimize(h);
    }
}
BENCHMARK(BM_New);
#endif

#ifdef PERFGATE_GBENCH_TIMED
void BM_Wall(benchmark::State& state)
{
    for (auto _ : state) {
        std::uint64_t h = 2;
        for (std::uint64_t i = 0; i < 512; ++i) h = mix(h, i);
        benchmark::DoNotOptimize(h);
    }
}
BENCHMARK(BM_Wall)->UseRealTime();

void BM_Manual(benchmark::State& state)
{
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        std::uint64_t h = 3;
        for (std::uint64_t i = 0; i < 512; ++i) h = mix(h, i);
        benchmark::DoNotOptimize(h);
        state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
}
BENCHMARK(BM_Manual)->UseManualTime();
#endif

} // namespace

BENCHMARK_MAIN();
