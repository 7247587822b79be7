// compare: baseline samples vs candidate samples under a policy -> report.
// The statistical rules are docs/statistics.md; the order of statuses is
// unsupported, insufficient, regression/improvement, unchanged when the
// interval of the shift lies inside +-threshold ("Equivalence"), else
// inconclusive.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/samples.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"

namespace perfgate::gate {

// Baseline-branch history for the z-score: the last K run medians of
// (benchmark, counter), oldest first. May return fewer than history_min points.
using history_fn = std::function<std::vector<double>(std::string_view benchmark, std::string_view counter)>;

// How a benchmark's two sides were measured (docs/statistics.md "Runs not
// measured interleaved"). interleaved: in one session with alternating
// executions (perfgate run), where the rank test applies; false: runs
// measured apart, whose tested counters are judged by the between-run test
// (stats/between_run.hpp) against the history (history_fn: consecutive
// baseline runs of the counter on the candidate's testbed), or are
// inconclusive without enough of it. unjudgeable: why no history can judge
// this pair (e.g. runs on two testbeds); empty when it can.
struct pairing {
    bool interleaved = true;
    std::string unjudgeable;
};
// nullopt: not declared (files compared as the user measured them): judged
// as interleaved, and the report's benchmark has no "interleaved" member.
using pairing_fn = std::function<std::optional<pairing>(std::string_view benchmark)>;

// What compare() derives from one series's values alone: the side's
// summary and, for per-run samples, its noise shape (dip test, trend). A run
// that meets many candidates (a main-branch baseline) computes them once.
struct series_derived {
    side_summary summary;
    std::optional<side_noise> shape; // null for summary-only (perf -r) series
};

// Sets counter_series::derived on each of b's series: the very values
// compare() would compute, so reports are the same with or without.
void derive_series(capture::benchmark_samples& b);

// One side of a benchmark as it came: absent (the suite did not run it
// there), failed (the harness's message) or measured.
struct side_outcome {
    bool present = false;
    std::string error; // non-empty: failed
};
// A benchmark that cannot be compared, listed in the report with its
// warning as compare() lists it: removed (no candidate), added (no
// baseline) or failed (on one side or both; a pass verdict then becomes
// inconclusive: what failed was not seen). perfgate run's stored pairs and
// compare()'s own pairing both go through here. False, and nothing
// listed, when both sides were measured.
bool add_unpaired(report& out, std::string_view benchmark, const side_outcome& baseline, const side_outcome& candidate);
// A report with failed benchmarks never passes: a pass becomes inconclusive.
void settle_failed(report& out);
// Whether a report's stated verdicts follow from its own counters (issue 43,
// finding 7): each benchmark's from its gated counters' states, the
// report's from its benchmarks and failed ones, by the rules compare()
// decides with. The first disagreement, in words ("the report says pass but
// its benchmarks give fail (1 gated counters regressed)"), or nullopt. A
// report from compare() always agrees; perfgate github refuses one that
// does not (a fork's artifact is the fork's word).
std::optional<std::string> inconsistent_verdict(const report& r);

// Under rules.sequential the gated counters with per-run samples are judged
// by the sequential rule (gate/sequential.hpp) at alpha / m each for
// regressions and improvements, m being the gated counters with per-run
// data on both sides, and at alpha for "unchanged" (the equivalence plan);
// the others as always.
// Benchmarks not measured interleaved are never judged by the sequential
// rule: its looks assume one interleaved session.
report compare(const capture::sample_set& baseline, const capture::sample_set& candidate, const policy& rules,
               const history_fn& history = {}, const pairing_fn& pairing_of = {});

// For perfgate run between blocks (rules.sequential must be set): gated is
// m of these samples; decided is true when every gated counter is decided
// at the look the samples reached, with the plan not cut, i.e. whether the
// run may stop here. Each counter is tested at alpha / family_of(m), the
// family of the whole gate (default: m itself).
struct sequential_progress {
    std::size_t gated = 0;
    bool decided = true;
};
sequential_progress sequential_check(const capture::sample_set& baseline, const capture::sample_set& candidate,
                                     const policy& rules,
                                     const std::function<std::size_t(std::size_t)>& family_of = {});

} // namespace perfgate::gate
