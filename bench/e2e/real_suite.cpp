// A google/benchmark suite of six benchmarks for bench/e2e/real_suite.sh and
// bench/e2e/gbench_spread.sh (issue 41's "Done when"): typical CPU-bound
// kernels of 10-60 µs per iteration. Built twice against Debian's
// libbenchmark: the baseline, and with -DSLOW_PCT=10 a candidate whose
// BM_Hash does 10% more work (more input words, same code). Each benchmark
// runs for at least 0.1 s (MinTime) instead of google/benchmark's 0.5 s, so
// that bench/e2e/real_suite.sh's 40 gated runs fit in an hour on a busy 2-core
// machine; perfgate's repetitions per process then each take 0.1 s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#ifndef SLOW_PCT
#define SLOW_PCT 0
#endif
#ifndef MIN_TIME
#define MIN_TIME 0.1
#endif

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

void BM_Hash(benchmark::State& state)
{
    const std::uint64_t words = 16384 + 16384 * SLOW_PCT / 100;
    for (auto _ : state) {
        std::uint64_t h = 0;
        for (std::uint64_t i = 0; i < words; ++i) {
            h = mix(h, i);
            benchmark::DoNotOptimize(h);
        }
    }
}
BENCHMARK(BM_Hash)->MinTime(MIN_TIME);

void BM_Sort(benchmark::State& state)
{
    std::vector<std::uint32_t> input(4096);
    std::uint32_t x = 12345;
    for (auto& v : input) v = x = x * 1103515245u + 12345u;
    std::vector<std::uint32_t> work;
    for (auto _ : state) {
        work = input;
        std::sort(work.begin(), work.end());
        benchmark::DoNotOptimize(work.data());
    }
}
BENCHMARK(BM_Sort)->MinTime(MIN_TIME);

void BM_Copy(benchmark::State& state)
{
    std::vector<char> from(256 * 1024, 'x'), to(256 * 1024);
    for (auto _ : state) {
        std::memcpy(to.data(), from.data(), from.size());
        benchmark::DoNotOptimize(to.data());
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Copy)->MinTime(MIN_TIME);

void BM_Accumulate(benchmark::State& state)
{
    std::vector<double> v(16384);
    std::iota(v.begin(), v.end(), 1.0);
    for (auto _ : state) {
        double s = std::accumulate(v.begin(), v.end(), 0.0);
        benchmark::DoNotOptimize(s);
    }
}
BENCHMARK(BM_Accumulate)->MinTime(MIN_TIME);

void BM_StringFind(benchmark::State& state)
{
    std::string hay(64 * 1024, 'a');
    hay += "needle";
    for (auto _ : state) {
        auto at = hay.find("needle");
        benchmark::DoNotOptimize(at);
    }
}
BENCHMARK(BM_StringFind)->MinTime(MIN_TIME);

void BM_Map(benchmark::State& state)
{
    std::vector<std::uint64_t> table(1 << 16);
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = mix(0, i);
    for (auto _ : state) {
        std::uint64_t at = 1, sum = 0;
        for (int i = 0; i < 4096; ++i) {
            at = table[at & (table.size() - 1)];
            sum += at;
        }
        benchmark::DoNotOptimize(sum);
    }
}
BENCHMARK(BM_Map)->MinTime(MIN_TIME);

} // namespace

BENCHMARK_MAIN();
