// Folding a large `perf script` output (issue 12's figure: 1M samples), and
// the flame graph of it. Not a Google Benchmark: one run, so that
// /usr/bin/time -v gives the peak memory of exactly this work.
//
//   bench_fold --generate N FILE     write N synthetic samples (perf script's
//                                    default format, 3-24 frames, C++ names)
//   bench_fold [--in-memory] FILE    fold it (streamed, or read whole first),
//                                    diff and draw it against itself
//
//   ./build/bench/bench_fold --generate 1000000 /tmp/1m.script
//   /usr/bin/time -v ./build/bench/bench_fold /tmp/1m.script
#include "model/file.hpp"
#include "profile/flamegraph.hpp"
#include "profile/perf_diff.hpp"
#include "profile/perf_script.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

// Deterministic: the same file on every machine.
struct bench_lcg {
    std::uint64_t state = 42;
    std::uint64_t next(std::uint64_t bound)
    {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return (state >> 33) % bound;
    }
};

int generate(std::size_t samples, const char* path)
{
    bench_lcg rng;
    // 3000 functions, one in ten with a long C++ template name; 20,000
    // distinct call paths of 3-24 frames: about 900 bytes per sample, as
    // perf script prints a C++ program with frame pointers.
    std::vector<std::string> functions;
    for (int i = 0; i < 3000; ++i) {
        functions.push_back(
            i % 10 == 0
                ? fmt::format("ns{}::Widget<std::vector<int, std::allocator<int> > >::get_{}(int) const", i % 37, i)
                : fmt::format("parse_token_{}", i));
    }
    std::vector<std::vector<int>> paths(20000);
    for (auto& p : paths) {
        const auto depth = 3 + rng.next(22);
        for (std::uint64_t d = 0; d < depth; ++d) p.push_back(static_cast<int>(rng.next(functions.size())));
    }
    std::ofstream out(path, std::ios::binary);
    std::string block;
    for (std::size_t s = 0; s < samples; ++s) {
        // Skewed: a few paths are hot, as in a real profile.
        const auto& p = paths[rng.next(rng.next(paths.size()) + 1)];
        block += fmt::format("bench 4242 {}.{:06}:     250000 cpu-clock: \n", 1000 + s / 4000, s % 4000 * 250);
        for (auto it = p.rbegin(); it != p.rend(); ++it) {
            block += fmt::format("\t    {:x} {}+0x{:x} (/usr/local/bin/bench)\n", 0x401000 + *it * 64, functions[*it],
                                 *it % 61);
        }
        block += "\n";
        if (block.size() > (1u << 20)) {
            out << block;
            block.clear();
        }
    }
    out << block;
    return out ? 0 : 1;
}

double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

int main(int argc, char** argv)
{
    using namespace perfgate;
    if (argc == 4 && std::string(argv[1]) == "--generate")
        return generate(std::strtoull(argv[2], nullptr, 10), argv[3]);
    const bool in_memory = argc == 3 && std::string(argv[1]) == "--in-memory";
    if (argc != 2 && !in_memory) {
        std::fprintf(stderr, "usage: bench_fold --generate N FILE | bench_fold [--in-memory] FILE\n");
        return 2;
    }
    const char* path = argv[argc - 1];
    const auto bytes = std::filesystem::file_size(path);
    auto t = std::chrono::steady_clock::now();
    profile::folded_stacks folded;
    if (in_memory) { // the whole text in memory, then fold_perf_script
        const auto text = model::read_text_file(path, "input.unreadable", std::size_t{16} << 30);
        folded = profile::fold_perf_script(text, path);
    } else { // streamed in 1 MiB chunks (what perfgate run --profile does)
        folded = profile::read_perf_script(path);
    }
    const double fold_s = seconds_since(t);
    t = std::chrono::steady_clock::now();
    const auto diff = profile::diff_self_samples({folded}, {folded}, 10);
    const double diff_s = seconds_since(t);
    t = std::chrono::steady_clock::now();
    const auto svg = profile::differential_flame_graph(folded, folded);
    const double svg_s = seconds_since(t);
    std::printf("%.0f MB, %llu samples, %zu stacks (%s): read and fold %.2f s (%.0f MB/s), diff %.2f s, "
                "flame graph %.2f s (%zu KB SVG, %zu frames)\n",
                static_cast<double>(bytes) / 1e6, static_cast<unsigned long long>(folded.samples), folded.stacks.size(),
                in_memory ? "in memory" : "streamed", fold_s, static_cast<double>(bytes) / 1e6 / fold_s, diff_s, svg_s,
                svg.size() / 1024, static_cast<std::size_t>(std::count(svg.begin(), svg.end(), '\n')));
    return diff.top.empty() ? 0 : 1; // A/A of a profile with itself: nothing changed
}
