// The counter registry: what perfgate knows about each counter (unit, which
// direction is better, whether it gates by default) and the derived metrics.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace perfgate::capture {

enum class better { lower, higher };

struct counter_traits {
    std::string unit;
    better direction = better::lower;
    // Gates by default: time- and instruction-like counters (docs/statistics.md).
    bool gated = false;
    // Gates instead when no default-gated counter has data (the rusage backend).
    bool fallback_gate = false;
    // Measures time: never deterministic, even with one sample per side.
    bool time_like = false;
    // Fails on any increase over the baseline, whatever the threshold: a
    // new leak or a new memcheck error (--backend memcheck). What the
    // baseline already has is reported, not failed.
    bool any_increase = false;
};

// "cycles:u" -> "cycles", "cpu_core/cycles/" -> "cycles", "task-clock" -> same.
std::string base_event_name(std::string_view perf_name);

// Traits for a counter by its perf (or derived) name; perf_unit is the unit
// perf printed, used when the registry has none. Unknown counters are not
// gated, and "lower is better" unless they are rates: a name ending in
// "per_second" or "_per_sec", or a unit ending in "/s", is better higher.
counter_traits lookup_counter(std::string_view name, std::string_view perf_unit = {});

std::string_view to_string(better b);
std::optional<better> parse_better(std::string_view s);

} // namespace perfgate::capture
