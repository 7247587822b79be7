// Noise diagnosis of one counter (counter_report::noise): is the machine
// flipping between speeds, is it drifting during the run, and how many
// repetitions would decide an inconclusive counter at this noise?
//
//  - Bimodal: Hartigan's dip test on each side (stats/dip_test.hpp, which
//    says why the dip and not the bimodality coefficient), at p < 0.05 by
//    diptest's table. Its null is the uniform distribution, the least
//    favourable unimodal one: on unimodal timing noise (normal, log-normal,
//    t(3), one outlier) it flags at most 3% of sides at n = 5 and 1.3% at
//    n >= 10, so 0.05 does not cry wolf.
//  - Drift: Kendall's tau of each side's values against their round order
//    (stats/kendall.hpp, scipy.stats.kendalltau). Values are in repetition
//    order (capture/samples.hpp: counter_series.values, built by from_capture
//    from perf's runs and by service::samples_from from the stored
//    repetition index), and perfgate run interleaves the sides in ABBA
//    rounds, so a machine that speeds up or slows down during the run
//    shows as the same trend on both sides, while a trend on one side only
//    is the program changing between its own runs. Flagged at p < 0.01
//    (drift_level): unlike the dip, the exact test flags exactly its level
//    of trend-free sides, and the diagnosis runs on both sides of every
//    counter of every report.
//  - Repetitions: from the width of the interval the report prints
//    (shift_ci, in % of the baseline median), whose half-width shrinks as
//    sqrt(1/n_b + 1/n_c): the equal n per side at which it is half the
//    threshold. There an unchanged counter's interval lies inside
//    +-threshold 95% of the time (its centre is within 1.96 standard errors
//    = the half-width of 0), and a shift of 1.5x the threshold is a
//    regression 97% of the time; a shift about the threshold's size stays
//    undecided at any n (source near_threshold). A gated counter also needs
//    an n at which the exact test can reach the gate's detection level
//    (alpha / m). Without an interval (too few samples),
//    stats::repetitions_for_mde at the sides' standard deviations. At most
//    max_repetitions_advised. An estimate: the spread seen moves.
//  - Source: what the spread of an inconclusive counter comes from, the
//    first that applies: the runs were measured apart ("between_runs",
//    set by compare), bimodal, drift, a shift about the threshold's size
//    with an interval narrower than the threshold ("near_threshold"), else
//    plain spread between executions, each sample one process
//    ("executions").
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "capture/perf_csv.hpp"
#include "capture/samples.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"

namespace perfgate::gate {

// Two-sided level of the drift test per side (see above).
inline constexpr double drift_level = 0.01;

// The smallest n at which the exact trend test can reach drift_level: its
// smallest two-sided p-value is 2 / n!, 0.017 at n = 5 and 0.0028 at n = 6.
inline constexpr std::size_t drift_min_n = 6;

// The most repetitions per side the diagnosis recommends: as many as one
// stored run may hold (capture::max_repetitions, the ingest limit). Needing
// more is "too noisy for this threshold".
inline constexpr std::size_t max_repetitions_advised = capture::max_repetitions;

// The diagnosis of a counter once compare() has classified it: r is its
// report (status, method, sides' standard deviations, baseline median,
// threshold, gated), baseline and candidate its series (values in round
// order; their derived shapes when set), rule its resolved rule (max_cov),
// alpha the policy's and level the gate's detection level (alpha / m).
// nullopt unless r.test is exact or asymptotic.
std::optional<noise_diagnosis> diagnose_noise(const capture::counter_series& baseline,
                                              const capture::counter_series& candidate, const counter_report& r,
                                              const counter_rule& rule, double alpha, double level);

// One side's noise tests on its values in round order.
side_noise side_shape(std::span<const double> values);

// The values of noise_diagnosis::source.
inline constexpr std::string_view source_between_runs = "between_runs";
inline constexpr std::string_view source_bimodal = "bimodal";
inline constexpr std::string_view source_drift = "drift";
inline constexpr std::string_view source_near_threshold = "near_threshold";
inline constexpr std::string_view source_executions = "executions";

// What would decide a report's undecided gated counters, said once for the
// report (JSON "decide", text "to decide:", markdown "What would decide
// it"), derived from the counters' statuses and noise diagnoses, so that a
// stored report gives the same. Absent (nullopt) when every gated counter is
// decided.
struct decide_advice {
    std::size_t counters = 0; // gated counters inconclusive or insufficient
    std::string source;       // the most common noise_diagnosis::source among them (empty: none known)
    // The repetitions per side that would decide them all, the largest of
    // their repetitions_needed; null when one of them has none (too noisy,
    // measured apart, or no diagnosis).
    std::optional<std::size_t> repetitions;
    // The threshold_pct under which all their intervals lie inside it now,
    // the largest of their threshold_needed_pct; null when one has none.
    std::optional<double> threshold_pct;
    bool sequential = false; // they were judged by the sequential rule: repetitions are --max-repetitions
    std::string advice;      // one sentence: the source, the cheapest fix, the alternatives
};
std::optional<decide_advice> decide_report(const report& r);
nlohmann::json decide_to_json(const decide_advice& d);

// One line for the text ("noise: ...") and markdown reports: what is noisy
// about the counter, its CoV and MDE, and the advice, e.g.
//   "bimodal baseline (dip 0.190 > 0.140); CoV 18.2% / 17.9%, MDE 24.10%: about 230 repetitions ..."
// Empty when there is nothing to say (not bimodal, no drift, no repetitions
// needed, not too noisy) or no diagnosis.
std::string noise_summary(const counter_report& c);
// The same line without its advice (noise_diagnosis::advice): the markdown
// report lists each piece of advice once for all the counters it concerns.
std::string noise_facts(const counter_report& c);

// The "noise" member of a counter in the report JSON (report.hpp documents
// the shape) and back; absent or null reads as nullopt. Wrong types throw
// nlohmann::json exceptions, which report_from_json turns into
// "input.bad_report".
nlohmann::json noise_to_json(const std::optional<noise_diagnosis>& n);
std::optional<noise_diagnosis> noise_from_json(const nlohmann::json& counter);

} // namespace perfgate::gate
