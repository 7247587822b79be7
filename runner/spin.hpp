// The injected slowdown of `perfgate qualify` (docs/cli.md#perfgate-qualify):
// a loop of plain integer work whose cost per iteration is the same on every
// backend's counter up to a constant: a fixed number of instructions (and of
// callgrind's Ir), and, on one machine at one frequency, a fixed time and
// number of cycles. perfgate-exec runs it inside the measured process tree
// (runner/exec_helper.cpp); perfgate qualify calibrates its cost on the gated
// counter. Header-only and free of libstdc++: perfgate-exec is linked
// statically without it.
#pragma once

namespace perfgate::runner {

// Runs `iterations` steps of a 64-bit linear congruential generator (Knuth's
// MMIX constants). Each step depends on the previous one, so the loop cannot
// be vectorised or folded away, and the empty asm keeps the value live.
// Touches no memory: the injected work changes no cache state the benchmark
// sees (docs/statistics.md#qualification says what that leaves out).
inline unsigned long long spin(unsigned long long iterations)
{
    unsigned long long x = 0x9e3779b97f4a7c15ULL;
    for (unsigned long long i = 0; i < iterations; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        asm volatile("" : "+r"(x));
    }
    return x;
}

} // namespace perfgate::runner
