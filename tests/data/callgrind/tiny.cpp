// A few functions for the callgrind golden file (tests/data/callgrind).
#include <cstdio>
#include <cstdlib>

__attribute__((noinline)) long leaf(long n)
{
    long s = 0;
    for (long i = 0; i < n; ++i) s = s * 31 + i;
    return s;
}

__attribute__((noinline)) long middle(long n) { return leaf(n) + leaf(n / 2); }

int main(int argc, char** argv)
{
    long n = argc > 1 ? std::atol(argv[1]) : 1000;
    long total = 0;
    for (int r = 0; r < 3; ++r) total += middle(n + r);
    std::printf("%ld\n", total);
    return 0;
}
