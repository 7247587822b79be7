// The diff of two profiles: which functions' exclusive cost changed most.
//
// Functions are matched by name only: the baseline and the candidate are
// different binaries (different object paths) often built in different
// directories (different file paths). Same-named functions of one profile
// (e.g. two static helpers called "init" in two files) are summed.
//
// Deterministic: functions ordered by |delta| descending, ties by name; the
// same profile twice gives no entries (only nonzero deltas are listed).
#pragma once

#include "profile/callgrind.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::profile {

// Top entries a report shows by default.
inline constexpr std::size_t default_top_functions = 10;

struct function_change {
    std::string name;
    std::uint64_t before = 0; // exclusive cost in the baseline (0 when absent)
    std::uint64_t after = 0;  // exclusive cost in the candidate (0 when absent)
    std::int64_t delta = 0;   // after - before
    // delta / (sum of |delta| over all functions): signed, in [-1, 1]; the
    // listed and unlisted shares' absolute values add up to 1. Absolute
    // changes as denominator, so that functions that shrank while others
    // grew cannot push a share above 100%.
    double share = 0;
};

struct profile_diff {
    std::string event;              // "Ir"
    std::uint64_t total_before = 0; // sum of exclusive costs
    std::uint64_t total_after = 0;
    std::uint64_t total_abs_change = 0; // sum of |delta|, the shares' denominator
    std::size_t changed_functions = 0;  // functions with a nonzero delta (listed or not)
    std::vector<function_change> top;   // at most top_n, see the order above
};

// Exclusive cost per function name, for any profile source.
using cost_by_name = std::map<std::string, std::uint64_t, std::less<>>;

// The exclusive cost of `event` per function name (summed over objects and files).
// Errors: "profile.unknown_event" naming the event and the profile's events.
cost_by_name exclusive_costs(const callgrind_profile& p, std::string_view event);

// The top_n functions by |after - before|.
profile_diff diff_costs(const cost_by_name& before, const cost_by_name& after,
                        std::size_t top_n = default_top_functions);

// diff_costs of the two profiles' exclusive cost of `event` ("Ir").
profile_diff diff_profiles(const callgrind_profile& baseline, const callgrind_profile& candidate,
                           std::string_view event = "Ir", std::size_t top_n = default_top_functions);

} // namespace perfgate::profile
