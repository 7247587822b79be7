// Which functions' share of the perf samples changed between the baseline's
// and the candidate's profiled executions, beyond sampling noise (issue 12).
//
// A function's self samples are the samples whose leaf frame it is (folded
// stacks' last frame; matched by name across sides, as diff.hpp does). Each
// side's share of a function is its self samples over the side's samples,
// pooled over the side's executions; the change is share_after -
// share_before, in percentage points. Its interval is Newcombe's hybrid
// score interval for a difference of proportions, with each side's sample
// count divided by the function's dispersion over executions, at a
// Bonferroni level alpha / m for the m functions compared; significant when
// it excludes 0. stats/ATTRIBUTION.md has the reasons and the references.
//
// Rows: the top_n functions by |change of share|, ties by name; functions
// with the same share on both sides are not listed.
#pragma once

#include "profile/perf_script.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace perfgate::profile {

// The family-wise level of the intervals: with it, an A/A comparison reports
// a function as changed in at most ~5% of runs, whatever the number of
// functions (when the samples behave as the dispersion model says).
inline constexpr double default_attribution_alpha = 0.05;

struct self_sample_change {
    std::string name;
    std::uint64_t before = 0, after = 0;      // self samples, summed over the side's executions
    double share_before = 0, share_after = 0; // fractions of the side's samples
    double change_pp = 0;                     // (share_after - share_before) * 100
    double lo_pp = 0, hi_pp = 0;              // its interval, percentage points
    double dispersion = 1;                    // stats::pearson_dispersion over executions (>= 1)
    bool significant = false;                 // the interval excludes 0
    // delta / (sum of |delta| over all functions), delta = after - before in
    // samples (the contract's `share`, gate/report.hpp).
    double share_of_change = 0;
};

struct self_sample_diff {
    std::uint64_t samples_before = 0, samples_after = 0;
    std::size_t functions = 0; // m: functions with self samples on either side
    double z = 0;              // critical value of the intervals: Phi^-1(1 - alpha / (2 m))
    std::vector<self_sample_change> top;
};

// Self samples per function name of one folded profile.
std::map<std::string, std::uint64_t, std::less<>> self_samples(const folded_stacks& folded);

// `before` and `after`: one folded profile per profiled execution (counted
// in samples, not weighted by period). Errors: "profile.no_samples" when a
// side has no samples (naming the side).
self_sample_diff diff_self_samples(const std::vector<folded_stacks>& before, const std::vector<folded_stacks>& after,
                                   std::size_t top_n, double alpha = default_attribution_alpha);

} // namespace perfgate::profile
