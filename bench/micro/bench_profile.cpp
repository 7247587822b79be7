// Parses callgrind output files the way perfgate run's attribution does and
// says how long it took (issue 12's figure: parsing a 100 MB output). Peak
// memory: run it under /usr/bin/time -v.
//
//   bench_profile FILE...          parse each file (read_callgrind)
//   bench_profile --diff A B       the attribution of A (baseline) vs B
//                                  (candidate): both parsed, summed, diffed
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "profile/callgrind.hpp"
#include "runner/attribution.hpp"

using namespace perfgate;
using clock_type = std::chrono::steady_clock;

namespace {

double seconds_since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

void parse_one(const std::filesystem::path& file)
{
    const auto bytes = std::filesystem::file_size(file);
    const auto t = clock_type::now();
    const auto p = profile::read_callgrind(file);
    const double s = seconds_since(t);
    fmt::print("{}: {:.1f} MB, {} functions, {} events: parsed in {:.2f} s ({:.0f} MB/s)\n", file.string(),
               static_cast<double>(bytes) / 1e6, p.functions.size(), p.events.size(), s,
               static_cast<double>(bytes) / 1e6 / s);
}

void diff_two(const std::filesystem::path& a, const std::filesystem::path& b)
{
    const auto t = clock_type::now();
    const auto result = runner::callgrind_attribution({a}, {b});
    const double s = seconds_since(t);
    if (!result.errors.empty()) throw std::runtime_error(result.errors.front().message);
    fmt::print("attribution of {} vs {}: {} rows in {:.2f} s\n", a.string(), b.string(),
               result.callgrind ? result.callgrind->top.size() : 0, s);
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        if (args.size() == 3 && args[0] == "--diff") {
            diff_two(args[1], args[2]);
            return 0;
        }
        if (args.empty() || args[0].starts_with("--")) {
            std::fputs("usage: bench_profile FILE... | bench_profile --diff BASELINE CANDIDATE\n", stderr);
            return 2;
        }
        for (const auto& f : args) parse_one(f);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_profile: %s\n", e.what());
        return 1;
    }
    return 0;
}
