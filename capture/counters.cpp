#include "capture/counters.hpp"

#include <array>

namespace perfgate::capture {

namespace {

struct known_counter {
    std::string_view name;
    std::string_view unit;
    better direction;
    bool gated;
    bool fallback_gate = false;
    bool time_like = false;
    bool any_increase = false;
};

// docs/statistics.md: lower is better for counts and times, higher for IPC. Gated by
// default: the time- and instruction-like counters. Wall-clock style counters
// (duration_time, wall-time) and the rusage times are reported but not gated
// by default when task-clock or instructions exist, because they include
// perf's own start-up and scheduling noise; user-time and wall-time are the
// fallback that compare() gates when none of the default-gated counters has
// data (the rusage backend). Policy files override all of this.
constexpr std::array<known_counter, 33> registry{{
    {"instructions", "", better::lower, true},
    {"cycles", "", better::lower, true},
    {"ref-cycles", "", better::lower, true},
    {"task-clock", "msec", better::lower, true, false, true},
    {"cpu-clock", "msec", better::lower, true, false, true},
    {"duration_time", "ns", better::lower, false, false, true},
    {"wall-time", "ns", better::lower, false, true, true},
    {"user-time", "ns", better::lower, false, true, true},
    {"sys-time", "ns", better::lower, false, false, true},
    {"max-rss", "KiB", better::lower, false},
    {"page-faults", "", better::lower, false},
    {"minor-faults", "", better::lower, false},
    {"major-faults", "", better::lower, false},
    {"context-switches", "", better::lower, false},
    {"cpu-migrations", "", better::lower, false},
    {"branch-misses", "", better::lower, false},
    {"cache-misses", "", better::lower, false},
    // callgrind --cache-sim's stand-in for cycles (runner/measure.hpp,
    // estimated_cycles): deterministic, gated like cycles.
    {"estimated-cycles", "", better::lower, true},
    // google/benchmark's times per iteration (capture/harness.hpp), in ns.
    {"real_time", "ns", better::lower, true, false, true},
    {"cpu_time", "ns", better::lower, true, false, true},
    {"L1-dcache-load-misses", "", better::lower, false},
    {"LLC-load-misses", "", better::lower, false},
    {"branches", "", better::lower, false},
    {"cache-references", "", better::lower, false},
    {"ipc", "insn/cycle", better::higher, false},
    {"cache-miss-rate", "%", better::lower, false},
    {"branch-miss-rate", "%", better::lower, false},
    // --backend memcheck (docs/memory.md): valgrind's deterministic heap
    // counts follow the deterministic rule and the threshold; a leak or an
    // error fails on any increase. Suppressed errors are reported only.
    {"heap-allocs", "", better::lower, true},
    {"heap-bytes", "B", better::lower, true},
    {"heap-peak-bytes", "B", better::lower, true},
    {"leaked-bytes", "B", better::lower, true, false, false, true},
    {"memcheck-errors", "", better::lower, true, false, false, true},
    {"memcheck-suppressed", "", better::lower, false},
}};

} // namespace

std::string base_event_name(std::string_view name)
{
    // PMU-qualified form: "cpu_core/cycles/" or "cpu/event=0x3c/" -> inner part.
    if (auto open = name.find('/'); open != std::string_view::npos) {
        auto close = name.find('/', open + 1);
        if (close != std::string_view::npos) name = name.substr(open + 1, close - open - 1);
    }
    // Modifiers: "cycles:u", "instructions:uk".
    if (auto colon = name.find(':'); colon != std::string_view::npos) name = name.substr(0, colon);
    return std::string(name);
}

counter_traits lookup_counter(std::string_view name, std::string_view perf_unit)
{
    const std::string base = base_event_name(name);
    for (const auto& k : registry) {
        if (k.name == base) {
            return {perf_unit.empty() ? std::string(k.unit) : std::string(perf_unit),
                    k.direction,
                    k.gated,
                    k.fallback_gate,
                    k.time_like,
                    k.any_increase};
        }
    }
    // Rates (google/benchmark's items_per_second, bytes_per_second and a
    // user counter made with kIsRate, which its JSON does not mark): by
    // name or unit. Better higher, not gated by default.
    if (base.ends_with("per_second") || base.ends_with("_per_sec") || perf_unit.ends_with("/s"))
        return {std::string(perf_unit), better::higher, false};
    return {std::string(perf_unit), better::lower, false};
}

std::string_view to_string(better b) { return b == better::lower ? "lower" : "higher"; }

std::optional<better> parse_better(std::string_view s)
{
    if (s == "lower") return better::lower;
    if (s == "higher") return better::higher;
    return std::nullopt;
}

} // namespace perfgate::capture
