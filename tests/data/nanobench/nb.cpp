#define ANKERL_NANOBENCH_IMPLEMENT
#include "nanobench.h"
#include <algorithm>
#include <fstream>
#include <random>
#include <vector>
#ifndef SCALE
#define SCALE 1
#endif
int main(int argc, char** argv)
{
    std::ofstream out(argv[1]);
    ankerl::nanobench::Bench b;
    b.title("perfgate capture").epochs(15).minEpochIterations(200).performanceCounters(true).output(nullptr);
    std::vector<int> v(1000 * SCALE);
    std::mt19937 rng(1);
    b.run("sort 1000 ints", [&] {
        for (auto& x : v) x = static_cast<int>(rng());
        std::sort(v.begin(), v.end());
        ankerl::nanobench::doNotOptimizeAway(v.front());
    });
    uint64_t x = 1;
    b.run("xorshift", [&] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ankerl::nanobench::doNotOptimizeAway(x);
    });
    b.render(ankerl::nanobench::templates::json(), out);
}
