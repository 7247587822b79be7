// The comparison report's types (docs/report.md "Report JSON"): what the
// gate decided, per benchmark and counter. Its renderers (JSON, text,
// markdown) are in report/render.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture/counters.hpp"
#include "gate/policy.hpp"
#include "model/alert.hpp"
#include "model/comparison.hpp"
#include "model/qualification.hpp"

namespace perfgate::gate {

enum class status { unsupported, insufficient, regression, improvement, inconclusive, unchanged };
enum class verdict { pass, fail, inconclusive };
enum class method { exact, asymptotic, deterministic, welch };

struct side_summary {
    std::size_t n = 0;
    std::optional<double> mean, median, stddev, cov, min, max;
};

// An alert that is still open (untriaged or acknowledged) on the series the
// counter is gated against (model/alert.hpp): where its change starts and by
// how much.
struct open_alert {
    std::int64_t id = 0;
    model::alert_status state = model::alert_status::untriaged;
    std::optional<double> delta_pct; // median after vs before the change, in %
    std::int64_t run_id = 0;         // first run of the new segment
    std::string git_sha;
};

// The baseline branch's recent band: [lo, hi] = the smallest and largest of
// the per-run medians of the series since its last stored change point, at
// most policy.history of them, runs older than the candidate (see
// service::compare). A candidate median outside it is lower or higher than
// every recent run of the baseline branch. Distribution-free, but context,
// not a test: for n exchangeable points a new one from the same distribution
// falls outside with probability 2/(n+1) (~6.5% at the default n = 30).
struct history_band {
    double lo = 0, hi = 0;
    std::size_t n = 0;                     // medians in the band, >= policy.history_min
    std::optional<std::int64_t> since_run; // the change point's run it starts at; none: no change point in the window
};

// Sequential sampling (policy.sequential; gate/sequential.hpp): the look
// that decided a gated counter, or the last one its samples reached.
struct sequential_report {
    std::size_t look = 0;     // 1-based
    std::size_t looks = 0;    // looks of the plan applied (the cut plan's when ended_early)
    std::size_t n = 0;        // repetitions per side at that look
    double alpha = 0;         // the counter's two-sided level: policy alpha / m gated counters
    double level = 0;         // the look's one-sided nominal level p_k
    double p_one_sided = 0.5; // Mann-Whitney, toward the direction the ranks moved
    // Repeated confidence interval of the shift at the look's equivalence
    // level, % of median(B); null when none is attainable at these sizes.
    std::optional<std::pair<double, double>> ci_pct;
    bool ended_early = false; // the run stopped there (budget) undecided: that look was made final
    // The look's one-sided level q_k of the equivalence test (the plan at
    // the gate's alpha, not alpha / m: docs/statistics.md "Equivalence");
    // ci_pct is at two-sided 1 - 2 q_k. 0 in reports stored before it.
    double equivalence_level = 0;
};

// One side's noise tests (gate/noise.hpp has the methods, levels and
// sources). A test's members are all set or all null: null when the side
// has fewer samples than the test needs (dip: stats::dip_min_n = 4; trend:
// drift_min_n = 6), and for the trend also when all its values are equal.
struct side_noise {
    std::optional<double> dip;          // Hartigan's dip statistic, in [1/(2n), 1/4]
    std::optional<double> dip_critical; // the dip at which the dip test's p-value is 0.05 at this n
    std::optional<bool> bimodal;        // dip > dip_critical: unimodality rejected at 0.05
    std::optional<double> kendall_tau;  // Kendall's tau-b of value vs round order, in [-1, 1]
    std::optional<double> kendall_p;    // its two-sided p-value
    std::optional<bool> drift;          // kendall_p < drift_level (0.01)
};

// How noisy a counter's per-run samples are, and what would decide it
// (counter_report::noise; JSON "noise"). The CoV (side_summary::cov) and
// the MDE this run achieved (counter_report::mde_pct) are not repeated here.
struct noise_diagnosis {
    std::optional<bool> bimodal; // either side bimodal; null when neither side had enough samples
    std::optional<bool> drift;   // either side drifts; null when neither side could be tested
    side_noise baseline, candidate;
    // Inconclusive counters: the repetitions per side (perfgate run -r N, a
    // total, not an increment) at which the interval the report prints
    // would decide the counter if the shift and the spread stay as they are
    // (gate/noise.hpp). Null otherwise, and when more than
    // max_repetitions_advised would be needed (too_noisy).
    std::optional<std::size_t> repetitions_needed;
    // Inconclusive, and no repetition count would decide it: more than
    // max_repetitions_advised per side would be needed, or the CoV exceeds
    // the policy's max_cov (more repetitions do not lower it).
    bool too_noisy = false;
    std::string advice; // what to do, one sentence or a few joined by "; " (empty: JSON null)
    // Inconclusive counters: where the spread comes from (noise_source;
    // empty: JSON null), and the smallest threshold_pct (a multiple of 0.5)
    // under which its interval already lies inside +-threshold (null without
    // an interval). Both added in v1.
    std::string source;
    std::optional<double> threshold_needed_pct;
};

// The between-run test of a counter whose benchmark was not measured
// interleaved (benchmark_report::interleaved false; stats/between_run.hpp,
// docs/statistics.md "Runs not measured interleaved"). history_runs is 0
// and the statistics null when there was no history to read; with fewer
// than stats::between_run_min_history runs they are null too and the
// counter, if it was tested, is inconclusive.
struct between_runs_report {
    std::size_t history_runs = 0;                    // baseline-run medians of the testbed's history read
    std::optional<double> sd;                        // scale of a difference of two run medians there (unit)
    std::optional<double> se;                        // the test's standard error of the shift (unit)
    std::optional<double> df;                        // Student t degrees of freedom
    std::optional<double> t, p_value;                // median(C) - median(B) over se; two-sided p
    std::optional<std::pair<double, double>> ci_pct; // interval of delta_pct at 1 - alpha
};

struct counter_report {
    std::string name, unit;
    capture::better direction = capture::better::lower;
    bool gated = false;
    status state = status::unsupported;
    std::optional<method> test;
    side_summary baseline, candidate;
    std::optional<double> delta_pct, shift, shift_pct;
    std::optional<std::pair<double, double>> shift_ci;
    std::optional<double> u, p_value, p_adjusted, mde_pct;
    double threshold_pct = default_threshold_pct;
    std::optional<double> running_pct_min;
    std::optional<double> z_score;
    bool anomaly = false;
    // History context, filled in by service::compare from the store (null
    // for files compared without one): open alerts on the series (empty when
    // there are none; nullopt when the report had no store or the baseline
    // run no branch), the recent band (nullopt with fewer than
    // policy.history_min points) and whether the candidate median lies
    // outside it (nullopt without a band or a candidate median).
    std::optional<std::vector<open_alert>> open_alerts;
    std::optional<history_band> band;
    std::optional<bool> outside_band;
    std::optional<sequential_report> sequential;
    std::string reason; // one line: why this status (for text/markdown details)
    // Noise diagnosis (gate/noise.hpp) of counters tested on per-run samples
    // (method exact or asymptotic); null for summary-only input (welch),
    // deterministic counters, and counters with no test (unsupported,
    // insufficient), and in reports stored before it existed.
    std::optional<noise_diagnosis> noise;
    // Only in benchmarks not measured interleaved (JSON "between_runs",
    // absent otherwise): the between-run test. When it judged the counter
    // (sd > 0), p_adjusted and mde_pct are its, and p_value stays the
    // within-run Mann-Whitney p.
    std::optional<between_runs_report> between_runs;
};

// Where a regression came from (issue 12): the functions whose cost changed
// most between the baseline's and the candidate's profiles. Filled by
// `perfgate run` after the comparison (runner/attribution.hpp for callgrind;
// perf record for --profile), never by service::compare: attribution never
// changes the verdict.
struct function_change {          // one row of a top-N table
    std::string name;             // demangled function / symbol
    std::string file;             // source or object file, may be empty
    double before = 0, after = 0; // exclusive cost (callgrind: Ir; perf: self samples)
    double delta = 0;             // after - before
    double share = 0;             // delta / sum of |delta| over all functions, in [-1, 1]
    std::optional<std::pair<double, double>>
        interval;                    // perf only: interval for the change of self share, in percentage points
    std::optional<bool> significant; // perf only: interval excludes 0
};

struct callgrind_attribution {
    std::string event = "Ir";
    double total_before = 0, total_after = 0;
    std::vector<function_change> top; // by |delta| descending; empty: no function changed
};

struct perf_attribution {
    std::string event;          // "cpu-clock" or "cycles"
    std::size_t executions = 0; // profiled executions per side
    double samples_before = 0, samples_after = 0;
    std::vector<function_change> top;
    std::optional<std::string> flame_graph; // file name of the SVG inside --artifacts DIR
};

// --backend memcheck (issue 32): for each failing memory counter, what grew
// most, as valgrind names it. Heap counters: DHAT's allocation sites grouped
// by the function that allocates; leaked-bytes: the allocation stacks of the
// lost blocks; memcheck-errors: each error's kind and top frames.
struct memory_culprit {
    std::string counter;            // "heap-allocs", "leaked-bytes", "memcheck-errors", ...
    std::string function;           // "grow_cache", or "0x109263 (in prog)" without symbols
    std::vector<std::string> stack; // frames as valgrind prints them, innermost first (at most 8)
    std::string kind, what;         // memcheck's error / leak kind and sentence; empty for heap sites
    double before = 0, after = 0;   // the counter's value at this site or function
};

struct memory_attribution {
    std::vector<memory_culprit> top;                       // per failing counter, largest growth first
    long long suppressed_before = 0, suppressed_after = 0; // errors the suppression files hid
};

// Why a part of the attribution is missing: source "callgrind" or "perf",
// id a perfgate::error id ("profile.bad_callgrind", "attribution.stripped").
struct attribution_error {
    std::string source, id, message;
};

struct attribution {
    std::optional<callgrind_attribution> callgrind;
    std::optional<perf_attribution> perf;
    std::optional<memory_attribution> memory;
    std::vector<attribution_error> errors;
};

// An instruction count and a time counter of one benchmark that both
// changed beyond the test and the threshold, in opposite directions
// (docs/statistics.md#instruction-counts): the count stands in for time,
// and on this benchmark it does not. The verdict still follows the policy's
// gated counters; the report says the two disagree.
struct count_time_disagreement {
    std::string count_counter, time_counter; // "instructions", "task-clock"
    status count_state = status::regression; // regression or improvement
    status time_state = status::improvement; // the other one
    double count_delta_pct = 0, time_delta_pct = 0;
};

struct benchmark_report {
    std::string name;
    verdict result = verdict::pass;
    std::vector<counter_report> counters;
    // The stored runs compared (set by service::compare; absent when files
    // were compared, and from reports stored before they were recorded).
    std::optional<std::int64_t> baseline_run, candidate_run;
    // Whether the two sides were measured interleaved (in one perfgate run
    // session): true / false when known (stored runs; perfgate compare
    // --not-interleaved), absent when files were compared as the user
    // measured them (treated as interleaved) and in older reports.
    std::optional<bool> interleaved;
    // JSON "attribution"; absent when nothing was profiled. (Not named
    // `attribution`: a member may not change the meaning of the type's name.)
    std::optional<attribution> attribution_info;
    // JSON "count_vs_time"; absent when empty (at most one per count counter).
    std::vector<count_time_disagreement> count_vs_time;
};

// A benchmark the harness reported as failed (google/benchmark's
// SkipWithError, error_occurred) on one side or both: not compared, and
// the verdict is at best inconclusive: the gate did not see it run.
struct failed_benchmark {
    std::string name;
    std::string side; // "baseline", "candidate" or "both"
    std::string message;
};

using model::baseline_choice;

// What the compared runs were measured with and at (JSON "measured",
// docs/report.md), as the stored runs record it: the first pair's, a
// member left empty (JSON null) when the pairs disagree on it or the runs
// do not record it. Set by service::compare; absent when files were compared.
struct measurement {
    std::string backend;       // "perf", "callgrind", "memcheck", ...
    std::string testbed;       // the testbed's name ("ci-runner-2")
    std::string baseline_sha;  // the baseline run's commit
    std::string candidate_sha; // the candidate run's commit
};

// A benchmark whose baseline was not measured by this run but taken from
// the store: a deterministic backend's run of the baseline commit
// (perfgate run --baseline-source server; docs/github.md "Reusing the
// baseline").
struct reused_baseline {
    std::string benchmark;
    std::int64_t run_id = 0;
    std::string commit;
    std::int64_t created_at = 0; // unix seconds
};

struct report {
    verdict result = verdict::pass;
    policy rules;
    std::vector<std::string> warnings;
    std::vector<benchmark_report> benchmarks;
    // Benchmarks on one side only (a suite gained or lost them): listed,
    // not compared, not part of the verdict. JSON "added" / "removed",
    // absent when empty.
    std::vector<std::string> added, removed;
    // JSON "failed", absent when empty.
    std::vector<failed_benchmark> failed;
    // JSON "baseline_ref", absent when no baseline rule was applied.
    std::optional<baseline_choice> baseline;
    // JSON "measured", absent when not known (files compared).
    std::optional<measurement> measured;
    // JSON "baseline_reused", absent when every baseline was measured.
    std::vector<reused_baseline> reused;
    std::optional<std::int64_t> comparison_id; // set by the service when stored
    // What the stored qualifications of the run's testbed say (perfgate run
    // with a store or server, report/qualification.hpp): JSON
    // "qualification", absent when none covers a gated counter; "advice",
    // absent when empty. Context for the reader, never part of the verdict.
    std::optional<model::testbed_qualifications> qualification;
    std::vector<model::qualification_advice> advice;

    // Counts over gated counters, for summaries.
    [[nodiscard]] std::size_t count(status s) const;
};

// A suite's figures (docs/report.md "Suites"), derived from a report by the
// renderers, never stored apart from it: shown when the report holds two or
// more benchmarks (compared, added, removed or failed together).
[[nodiscard]] bool is_suite(const report& r);

// Benchmarks counted by their verdict: fail is a regression, inconclusive
// is inconclusive, pass is an improvement when a gated counter improved and
// unchanged otherwise. added / removed / failed: the report's lists.
struct suite_counts {
    std::size_t compared = 0, regressions = 0, improvements = 0, unchanged = 0, inconclusive = 0;
    std::size_t added = 0, removed = 0, failed = 0;
};
[[nodiscard]] suite_counts count_benchmarks(const report& r);

// The geometric mean over benchmarks of median(candidate) / median(baseline)
// of one counter gated in them (google/benchmark's compare.py
// OVERALL_GEOMEAN): exp(mean(log ratio)) over the benchmarks where the
// counter is gated and both medians are finite and > 0. Context, never part
// of the verdict.
struct overall_geomean {
    std::string counter;
    capture::better direction = capture::better::lower;
    double ratio = 1;
    std::size_t benchmarks = 0; // how many ratios the mean is over, >= 3
};
// One entry per counter name in first-seen order, for counters with ratios
// in three or more benchmarks (report.cpp: overall_geomean_min_benchmarks).
[[nodiscard]] std::vector<overall_geomean> overall_geomeans(const report& r);

std::string_view to_string(status s);
std::string_view to_string(verdict v);
std::string_view to_string(method m);

} // namespace perfgate::gate
