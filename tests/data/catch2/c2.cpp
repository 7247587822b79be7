#ifdef CATCH_V3
#include "catch_amalgamated.hpp"
#else
#define CATCH_CONFIG_MAIN
#define CATCH_CONFIG_ENABLE_BENCHMARKING
#include <catch2/catch.hpp>
#endif
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>
#ifndef SCALE
#define SCALE 1
#endif

static std::uint64_t fib(std::uint64_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

TEST_CASE("fibonacci", "[bench]")
{
    CHECK(fib(10) == 55);
    BENCHMARK("fib 20") { return fib(20 + (SCALE - 1)); };
    BENCHMARK("fib 15") { return fib(15); };
}

TEST_CASE("sorting", "[bench]")
{
    BENCHMARK_ADVANCED("sort 10000 ints")(Catch::Benchmark::Chronometer meter)
    {
        std::vector<int> v(10000);
        meter.measure([&] {
            for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>((i * 2654435761u) % 100003u);
            std::sort(v.begin(), v.end());
            return v.front();
        });
    };
}

TEST_CASE("broken", "[broken]")
{
    BENCHMARK("accumulate")
    {
        std::vector<int> v(100, 1);
        return std::accumulate(v.begin(), v.end(), 0);
    };
    REQUIRE(fib(5) == 6); // fails on purpose: a failed test case with a benchmark
}
