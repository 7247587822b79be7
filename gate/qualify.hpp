// perfgate qualify (docs/cli.md#perfgate-qualify, the method in
// docs/statistics.md#qualification): what a gate on this machine sees. The
// command runs many gates of a benchmark against itself (A/A) and against
// itself with an injected slowdown of known sizes; this file counts their
// outcomes per gated counter and turns the counts into rates with
// intervals, the smallest slowdown caught in 80% and 95% of gates, and a
// recommendation. No measuring here: cli/cmd_qualify.cpp measures.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gate/report.hpp"

namespace perfgate::gate {

// The rates' intervals are Wilson score intervals at this confidence
// (stats/proportions.hpp): two-sided 95%, z = Phi^-1(0.975).
inline constexpr double qualify_confidence = 0.95;
inline constexpr double qualify_z = 1.959963984540054; // scipy.stats.norm.ppf(0.975)
// The two detection goals the report names (issue 46): a slowdown caught
// in at least this share of gates.
inline constexpr double qualify_power_80 = 0.80;
inline constexpr double qualify_power_95 = 0.95;
// A gate fails only on a shift beyond its threshold, so a slowdown at the
// threshold itself is caught about half the time however quiet the runner:
// the runner "reaches" a counter's threshold when a slowdown of at most
// this many thresholds is caught in 80% of gates (2: a slowdown of twice
// the threshold leaves the test a margin of one threshold beyond it; a
// stated convention, docs/statistics.md#qualification, not a fitted value).
inline constexpr double qualify_reach_factor = 2.0;
// A point (A/A or one slowdown) is not settled before this many gates: a
// Wilson interval of 0 caught in 1 gate already lies below 80%, which is
// too thin to stop on.
inline constexpr std::size_t qualify_min_gates = 5;

// One counter's outcomes at one point.
struct qualify_tally {
    std::size_t gates = 0;
    std::size_t regressions = 0;  // A/A: false fails; injected: caught
    std::size_t inconclusive = 0; // the counter was inconclusive
    std::size_t repetitions = 0;  // per side, summed over the gates
    // The injected slowdown on this counter, % of its median (0 for A/A):
    // the spin's calibrated cost on this counter times its iterations.
    double injected_pct = 0;
};

// One point of the plan: the A/A gates (requested_pct 0) or the gates of
// one slowdown.
struct qualify_point {
    double requested_pct = 0;    // on the calibration counter
    unsigned long long spin = 0; // iterations of runner/spin.hpp injected in the candidate
    std::map<std::string, qualify_tally, std::less<>> counters;
    std::size_t gates = 0;
};

// Counts one gate's report (one benchmark) into the point: per gated
// counter that was tested (not unsupported).
void tally(qualify_point& point, const report& gate_report);

// k of n with its Wilson interval at qualify_confidence; n = 0: rate 0 and
// the interval [0, 1].
struct qualify_rate {
    std::size_t k = 0, n = 0;
    double value = 0, lo = 0, hi = 1;
};
qualify_rate rate_of(std::size_t k, std::size_t n);

// Whether the points' figures can no longer change the report's answers:
// every injected point of every counter has at least qualify_min_gates
// gates and a catch-rate interval that lies wholly above or below 80%
// and 95% alike (or is deterministic: one gate says it all).
bool settled(const std::vector<qualify_point>& points, const std::vector<std::string>& counters, bool deterministic);

struct slowdown_row {
    double requested_pct = 0, injected_pct = 0;
    qualify_rate caught;
    std::size_t inconclusive = 0;
    double repetitions = 0; // per side, mean over the gates
};

struct counter_qualification {
    std::string counter;
    bool deterministic = false; // callgrind: one execution per side is exact
    double threshold_pct = default_threshold_pct;
    double alpha = default_alpha;
    qualify_rate false_fails; // A/A gates in which the counter regressed
    double inconclusive_share = 0;
    double repetitions = 0; // A/A gates, per side, mean
    std::vector<slowdown_row> slowdowns;
    // The smallest injected slowdown caught in at least 80% (95%) of its
    // gates, and in at least that share at every larger slowdown tried.
    std::optional<slowdown_row> detects_80, detects_95;
    // False when no slowdown of at most qualify_reach_factor thresholds is
    // caught in 80% of gates: a gate on this runner cannot promise the
    // threshold. Always true for deterministic counters.
    bool reaches_threshold = false;
    std::string recommendation;
};

// Per counter: the figures of points[0] (the A/A point) and the others.
counter_qualification summarize(std::string_view counter, const std::vector<qualify_point>& points, bool deterministic,
                                double threshold_pct, double alpha);

} // namespace perfgate::gate
