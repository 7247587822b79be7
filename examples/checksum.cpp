// perfgate's demo benchmark: checksums a 4 MiB array many times.
//
// Built twice: the baseline, and a "regressed" candidate with the most common
// C++ performance bug there is: a parameter that used to be taken by const
// reference is now taken by value, so every call copies the whole array
// (more time, and a page fault per fresh page of every copy). A machine
// without a PMU still sees it in task-clock and page-faults.
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace {

#ifdef PERFGATE_EXAMPLE_REGRESSED
long checksum(std::vector<int> values) // the regression: a copy per call
#else
long checksum(const std::vector<int>& values)
#endif
{
    // A serial dependency so the compiler cannot vectorise the work away.
    long sum = 0;
    for (int v : values) sum = sum * 31 + v;
    return sum;
}

} // namespace

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 24;
    std::vector<int> data(1 << 20);
    std::iota(data.begin(), data.end(), 1);
    long total = 0;
    for (int r = 0; r < rounds; ++r) total += checksum(data) ^ r;
    std::printf("%ld\n", total);
    return 0;
}
