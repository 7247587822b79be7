// The program test_profile runs under callgrind, built twice (tests/CMakeLists.txt):
// by const reference, and with PERFGATE_PROFILE_BY_VALUE the regression of
// examples/checksum.cpp, a std::vector taken by value (a copy per call).
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#ifdef PERFGATE_PROFILE_BY_VALUE
__attribute__((noinline)) long checksum(std::vector<int> values)
#else
__attribute__((noinline)) long checksum(const std::vector<int>& values)
#endif
{
    long sum = 0;
    for (int v : values) sum = sum * 31 + v;
    return sum;
}

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 8;
    std::vector<int> data(1 << 16);
    std::iota(data.begin(), data.end(), 1);
    long total = 0;
    for (int r = 0; r < rounds; ++r) total += checksum(data) ^ r;
    std::printf("%ld\n", total);
    return 0;
}
