#include "gate/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "gate/noise.hpp"
#include "gate/sequential.hpp"
#include "model/error.hpp"
#include "stats/between_run.hpp"
#include "stats/descriptive.hpp"
#include "stats/hodges_lehmann.hpp"
#include "stats/mann_whitney.hpp"
#include "stats/mde.hpp"
#include "stats/multiplicity.hpp"
#include "stats/welch.hpp"
#include "stats/zscore.hpp"

// compare() runs in named steps, as google/benchmark's runner does:
//   1. pair_benchmarks        benchmarks and counters present, rules, gating
//   2. describe_and_test      per counter: statistics, method, raw p-value
//   2b. weigh_between_runs    benchmarks not measured interleaved: the
//                             between-run test against the history
//   3. adjust_p_values        Holm / BH across the gated counters of the gate
//   4. estimate_shift         Hodges-Lehmann or mean shift, detectable effect
//   5. classify               status and reason (docs/statistics.md, in order)
//   6. score_against_history  z-score and anomaly
//   7. warn_about_counter, benchmark_verdict, gate_verdict
// Steps 1 and 7 are the only ones that add warnings, in input order.

namespace perfgate::gate {

namespace {

std::optional<bool> explicit_gate(const policy& rules, std::string_view bench, std::string_view counter)
{
    std::optional<bool> g;
    if (auto it = rules.counters.find(counter); it != rules.counters.end()) g = it->second.gate;
    if (auto b = rules.benchmarks.find(bench); b != rules.benchmarks.end()) {
        if (auto it = b->second.counters.find(counter); it != b->second.counters.end() && it->second.gate) {
            g = it->second.gate;
        }
    }
    return g;
}

side_summary summarize_values(const capture::counter_series& s)
{
    side_summary out;
    auto sum = stats::summarize(s.values);
    if (!sum) return out;
    out.n = sum->n;
    out.mean = sum->mean;
    out.median = sum->median;
    out.min = sum->min;
    out.max = sum->max;
    out.stddev = sum->stddev;
    out.cov = sum->cov;
    return out;
}

side_summary summarize_side(const capture::counter_series& s)
{
    return s.derived ? s.derived->summary : summarize_values(s);
}

bool zero_spread(const std::vector<double>& v)
{
    return !v.empty() && std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); });
}

// Relative change in percent of the baseline value; nullopt when the
// baseline is 0 (a relative change is undefined there).
std::optional<double> pct_of(double delta, double base)
{
    if (base == 0) return std::nullopt;
    return delta / std::abs(base) * 100.0;
}

// The minimum detectable effect, or nullopt when an input overflowed: values
// near 1e154 and above are finite, but their variance is +inf, and
// minimum_detectable_effect_pct takes finite inputs only (an invariant, not an
// error). No MDE means inconclusive, never a crash on uploaded data.
std::optional<double> mde_of(double sd_b, std::size_t n_b, double sd_c, std::size_t n_c, double centre, double alpha)
{
    if (!std::isfinite(sd_b) || !std::isfinite(sd_c) || !std::isfinite(centre)) return std::nullopt;
    return stats::minimum_detectable_effect_pct(sd_b, n_b, sd_c, n_c, centre, alpha);
}

// "Worse" in the counter's own direction.
bool is_worse(double delta, capture::better direction)
{
    return direction == capture::better::lower ? delta > 0 : delta < 0;
}

// One counter on its way through the steps; rep is what the report gets.
struct pending_counter {
    counter_report rep;
    const capture::counter_series* b = nullptr;
    const capture::counter_series* c = nullptr;
    counter_rule rule;
    bool testable = false;                    // has a p-value from a test (MWU or Welch)
    std::optional<stats::welch_result> welch; // summary-only input: the test, for its interval
    // rep.shift_ci has its nominal level 1 - alpha (stats::shift_estimate::attained).
    bool ci_attained = false;
    bool summary = false;
    bool decided = false; // unsupported or insufficient: no test
    // Both sides counted by a simulator (benchmark_samples::deterministic_counts).
    bool simulated = false;
    // Benchmarks not measured interleaved (step 2b). history: the counter's
    // history medians, read once for the between-run test and the z-score.
    bool apart = false;
    std::optional<std::vector<double>> history;
    std::optional<stats::between_run_result> between; // judged: sd > 0
    std::string unjudged;                             // why there is no between-run test, when none
    bool between_decided = false;                     // the between-run rule set the status
};

// One benchmark present on both sides.
struct pending_benchmark {
    std::string name;
    std::size_t summary_repeats = 0; // perf -r N: N when given, else 0
    std::optional<pairing> how;      // nullopt: not declared (as interleaved)
    std::vector<pending_counter> counters;
};

// ---- Step 1: pair benchmarks and counters ---------------------------------

// Baseline counters in their order, then those only the candidate has.
std::vector<std::string> counter_names(const capture::benchmark_samples& b, const capture::benchmark_samples& c)
{
    std::vector<std::string> names;
    for (const auto& s : b.counters) names.push_back(s.name);
    for (const auto& s : c.counters) {
        if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
    }
    return names;
}

// A counter of benchmark b/c with its resolved rule; either side may lack it.
pending_counter set_up_counter(const capture::benchmark_samples& b, const capture::benchmark_samples& c,
                               const std::string& name, bool summary, const policy& rules)
{
    pending_counter pc;
    pc.b = b.find(name);
    pc.c = c.find(name);
    const capture::counter_series& either = pc.b ? *pc.b : *pc.c;
    const std::string unit = either.unit;
    pc.rule = rules.resolve(b.name, name, unit, either.direction, either.gated);
    pc.summary = summary;
    pc.simulated = b.deterministic_counts && c.deterministic_counts;
    counter_report& r = pc.rep;
    r.name = name;
    r.unit = capture::lookup_counter(name, unit).unit;
    r.direction = pc.rule.direction;
    r.gated = pc.rule.gated;
    r.threshold_pct = pc.rule.threshold_pct;
    return pc;
}

// When no primary counter has data on both sides, the fallback counters
// gate, unless the policy says explicitly whether they do.
void apply_fallback_gating(std::vector<pending_counter>& counters, std::string_view bench, const policy& rules)
{
    const bool primary_present = std::any_of(counters.begin(), counters.end(), [&](const pending_counter& pc) {
        return capture::lookup_counter(pc.rep.name).gated && pc.b && pc.c && !pc.b->values.empty() &&
               !pc.c->values.empty();
    });
    if (primary_present) return;
    for (auto& pc : counters) {
        if (capture::lookup_counter(pc.rep.name).fallback_gate && !explicit_gate(rules, bench, pc.rep.name))
            pc.rep.gated = true;
    }
}

// The benchmarks both sides have, in baseline order, each with the union of
// its counters and their resolved rules. A benchmark on one side only is a
// warning, not a comparison.
std::vector<pending_benchmark> pair_benchmarks(const capture::sample_set& baseline,
                                               const capture::sample_set& candidate, const policy& rules, report& out)
{
    std::vector<pending_benchmark> benches;
    for (const auto& bb : baseline.benchmarks) {
        const capture::benchmark_samples* cb = candidate.find(bb.name);
        if (add_unpaired(out, bb.name, {true, bb.error}, cb ? side_outcome{true, cb->error} : side_outcome{})) continue;
        const bool summary = bb.summary_only || cb->summary_only;
        pending_benchmark bench;
        bench.name = bb.name;
        // Both sides by name (find: the first benchmark of that name).
        bench.summary_repeats = baseline.find(bb.name)->summary_repeats.value_or(cb->summary_repeats.value_or(0));
        for (const auto& name : counter_names(bb, *cb)) {
            bench.counters.push_back(set_up_counter(bb, *cb, name, summary, rules));
        }
        apply_fallback_gating(bench.counters, bb.name, rules);
        benches.push_back(std::move(bench));
        if (summary) {
            out.warnings.push_back(
                fmt::format("benchmark '{}': summary-only input (perf stat -r N aggregates): Welch's t-test on means; "
                            "per-run samples (perf stat -o FILE --append, or perfgate run) give a better test",
                            bb.name));
        }
    }
    for (const auto& cb : candidate.benchmarks) {
        if (!baseline.find(cb.name)) add_unpaired(out, cb.name, {}, {true, cb.error});
    }
    return benches;
}

// ---- Step 2: describe and test each counter -------------------------------

// A status reached before any test: unsupported or insufficient.
void decide(pending_counter& pc, status s, std::string reason)
{
    pc.rep.state = s;
    pc.rep.reason = std::move(reason);
    pc.decided = true;
}

// Zero spread on both sides: the change is known exactly (docs/statistics.md
// "Deterministic counters"), and decided on the threshold alone.
void mark_deterministic(counter_report& r, double base, double cand)
{
    r.test = method::deterministic;
    r.shift = cand - base;
    r.shift_pct = pct_of(*r.shift, base);
    r.shift_ci = std::pair{*r.shift, *r.shift};
    r.mde_pct = 0.0;
}

void run_rank_test(pending_counter& pc)
{
    counter_report& r = pc.rep;
    const auto& b = pc.b->values;
    const auto& c = pc.c->values;
    const auto mwu = stats::mann_whitney_u(b, c);
    r.test = mwu.method == stats::mwu_method::exact ? method::exact : method::asymptotic;
    r.u = mwu.u;
    r.p_value = mwu.p_value;
    pc.testable = true;
}

void run_welch(pending_counter& pc, std::size_t repeats)
{
    counter_report& r = pc.rep;
    // perf -r N prints the mean and variance% = stddev of the mean / mean * 100
    // (perf's stddev_stats / rel_stddev_stats), so the per-run stddev is
    // variance% / 100 * mean * sqrt(N).
    auto sd_of = [repeats](const capture::counter_series& s) {
        return s.variance_pct.front() / 100.0 * std::abs(s.values.front()) * std::sqrt(static_cast<double>(repeats));
    };
    const double sd_b = sd_of(*pc.b), sd_c = sd_of(*pc.c);
    const double m_b = pc.b->values.front(), m_c = pc.c->values.front();
    r.baseline.n = r.candidate.n = repeats;
    if (sd_b == 0 && sd_c == 0) {
        // perf prints variance% with two decimals: "0.00%" on both sides is
        // zero spread, where Welch has no answer; the deterministic rule of
        // docs/statistics.md decides on the threshold alone.
        r.baseline.stddev = r.candidate.stddev = 0.0;
        if (m_b != 0) r.baseline.cov = 0.0;
        if (m_c != 0) r.candidate.cov = 0.0;
        mark_deterministic(r, m_b, m_c);
        return;
    }
    r.test = method::welch;
    r.baseline.stddev = sd_b;
    r.candidate.stddev = sd_c;
    if (m_b != 0) r.baseline.cov = sd_b / m_b;
    if (m_c != 0) r.candidate.cov = sd_c / m_c;
    // A stddev that overflowed (variance% of a mean near DBL_MAX) is outside
    // welch_t_test's finite-input contract: no test, so no p-value.
    if (!std::isfinite(sd_b) || !std::isfinite(sd_c)) return;
    if (auto w = stats::welch_t_test(m_b, sd_b, repeats, m_c, sd_c, repeats)) {
        r.p_value = w->p_value;
        pc.welch = w;
        pc.testable = true;
    }
}

// perf -r N aggregates: Welch's t-test from mean, N and variance%.
void test_aggregates(pending_counter& pc, std::size_t repeats)
{
    if (pc.b->variance_pct.empty() || pc.c->variance_pct.empty() || repeats < 2) {
        decide(pc, status::insufficient,
               repeats < 2 ? "perf -r N aggregates do not record N: give the repetition count "
                             "(perfgate compare --repeats N)"
                           : "aggregate without variance%");
        return;
    }
    run_welch(pc, repeats);
}

// Per-run samples: the deterministic rule, else at least min_samples per
// side for a rank test.
void test_samples(pending_counter& pc)
{
    counter_report& r = pc.rep;
    const auto& b = pc.b->values;
    const auto& c = pc.c->values;
    const bool deterministic = zero_spread(b) && zero_spread(c) &&
                               ((b.size() >= 2 && c.size() >= 2) || !capture::lookup_counter(r.name).time_like);
    if (deterministic) {
        mark_deterministic(r, *r.baseline.median, *r.candidate.median);
        return;
    }
    const std::size_t need = pc.rule.min_samples;
    if (b.size() < need || c.size() < need) {
        decide(pc, status::insufficient,
               fmt::format("{} baseline / {} candidate samples; at least {} per side are needed", b.size(), c.size(),
                           need));
        return;
    }
    run_rank_test(pc);
}

// Everything about one counter that does not depend on the other counters:
// descriptive statistics, delta_pct, the method and the raw p-value, or the
// reason no test applies.
void describe_and_test(pending_counter& pc, std::size_t summary_repeats)
{
    counter_report& r = pc.rep;
    if (!pc.b || !pc.c || pc.b->values.empty() || pc.c->values.empty()) {
        decide(pc, status::unsupported,
               !pc.b || !pc.c ? fmt::format("only measured on the {} side", pc.b ? "baseline" : "candidate")
                              : "no values (perf: <not supported> / <not counted>)");
        if (pc.b) r.baseline = summarize_side(*pc.b);
        if (pc.c) r.candidate = summarize_side(*pc.c);
        return;
    }
    r.baseline = summarize_side(*pc.b);
    r.candidate = summarize_side(*pc.c);
    r.running_pct_min = std::min(pc.b->running_pct_min, pc.c->running_pct_min);
    r.delta_pct = pct_of(*r.candidate.median - *r.baseline.median, *r.baseline.median);
    if (pc.summary) {
        test_aggregates(pc, summary_repeats);
    } else {
        test_samples(pc);
    }
}

// ---- Step 2b: runs not measured interleaved --------------------------------

// Why a counter of a benchmark measured apart has no between-run test.
std::string no_between_run_test(const pairing& how, const history_fn& history, std::size_t history_runs)
{
    if (!how.unjudgeable.empty()) return how.unjudgeable;
    if (!history) return "there is no history of consecutive baseline runs (no store) to judge between-run variation";
    return fmt::format("the testbed's history has {} baseline run{} of this counter, {} are needed to judge "
                       "between-run variation",
                       history_runs, history_runs == 1 ? "" : "s", stats::between_run_min_history);
}

// A tested counter of a benchmark whose runs were measured apart
// (docs/statistics.md "Runs not measured interleaved"): the between-run
// test of its median shift against the history's consecutive differences.
// Judged (pc.between) when the history's scale is above 0; a scale of
// exactly 0 leaves the within-run rules in charge.
void weigh_between_runs(pending_counter& pc, const pending_benchmark& bench, const policy& rules,
                        const history_fn& history)
{
    pc.apart = true;
    if (pc.decided) return;
    counter_report& r = pc.rep;
    between_runs_report out;
    if (history && bench.how->unjudgeable.empty()) pc.history = history(bench.name, r.name);
    const double base = *r.baseline.median;
    const double shift = *r.candidate.median - base;
    const double within = stats::median_variance(r.baseline.stddev.value_or(0.0), r.baseline.n) +
                          stats::median_variance(r.candidate.stddev.value_or(0.0), r.candidate.n);
    std::optional<stats::between_run_result> res;
    if (pc.history && std::isfinite(shift) && std::isfinite(within)) {
        res = stats::between_run_test(shift, within, *pc.history);
    }
    if (pc.history) {
        out.history_runs = static_cast<std::size_t>(std::count_if(pc.history->begin(), pc.history->end(),
                                                                  [](double x) { return std::isfinite(x); }));
    }
    if (!res) {
        pc.unjudged = no_between_run_test(*bench.how, history, out.history_runs);
        r.between_runs = out;
        return;
    }
    out.sd = res->sd;
    out.se = res->se;
    out.df = res->df;
    out.t = res->t;
    out.p_value = res->p_value;
    if (base != 0 && res->se > 0) {
        const auto ci = stats::between_run_interval(shift, *res, rules.alpha);
        out.ci_pct = std::pair{*pct_of(ci.lo, base), *pct_of(ci.hi, base)};
    }
    r.between_runs = out;
    if (res->sd > 0 && res->p_value) pc.between = res;
}

// ---- Step 3: multiplicity across the gate ---------------------------------

// Sets p_adjusted on every gated counter with a p-value, adjusted together
// (docs/statistics.md "Multiplicity"); returns how many there are.
std::size_t adjust_p_values(std::vector<pending_benchmark>& benches, const policy& rules)
{
    std::vector<pending_counter*> family;
    for (auto& bench : benches) {
        for (auto& pc : bench.counters) {
            if ((pc.testable || pc.between) && pc.rep.gated) family.push_back(&pc);
        }
    }
    // A counter judged by the between-run test enters with that test's p.
    std::vector<double> raw;
    raw.reserve(family.size());
    for (const pending_counter* pc : family) raw.push_back(pc->between ? *pc->between->p_value : *pc->rep.p_value);
    const std::vector<double> adjusted = stats::adjust(raw, rules.correction);
    for (std::size_t i = 0; i < family.size(); ++i) family[i]->rep.p_adjusted = adjusted[i];
    return family.size();
}

// The level a lone real effect must reach among m gated tests: alpha/m is the
// first step of both Holm and Benjamini-Hochberg.
double detection_level(const policy& rules, std::size_t gated_tests)
{
    if (rules.correction == stats::correction::none || gated_tests <= 1) return rules.alpha;
    return rules.alpha / static_cast<double>(gated_tests);
}

// ---- Step 4: shift estimate and minimum detectable effect -----------------

// For a tested counter (deterministic ones have theirs from step 2): the
// shift with its confidence interval, and the smallest shift this gate
// could have detected. level is detection_level() of this gate.
void estimate_shift(pending_counter& pc, const policy& rules, double level)
{
    counter_report& r = pc.rep;
    const double med_b = *r.baseline.median;
    if (*r.test == method::welch) {
        r.shift = *r.candidate.mean - *r.baseline.mean;
        r.shift_pct = pct_of(*r.shift, med_b);
        if (pc.welch && std::isfinite(pc.welch->df)) {
            r.shift_ci = stats::welch_interval(*pc.welch, *r.shift, rules.alpha);
            pc.ci_attained = true;
        }
        if (auto m = mde_of(*r.baseline.stddev, r.baseline.n, *r.candidate.stddev, r.candidate.n, std::abs(med_b),
                            rules.alpha)) {
            r.mde_pct = *m;
        }
        return;
    }
    const auto hl = stats::hodges_lehmann(pc.b->values, pc.c->values, rules.alpha, *r.test == method::exact);
    r.shift = hl.estimate;
    r.shift_pct = pct_of(hl.estimate, med_b);
    r.shift_ci = std::pair{hl.lower, hl.upper};
    pc.ci_attained = hl.attained;
    if (auto m = mde_of(r.baseline.stddev.value_or(0), r.baseline.n, r.candidate.stddev.value_or(0), r.candidate.n,
                        std::abs(med_b), rules.alpha)) {
        r.mde_pct = *m;
    }
    // The MDE is at alpha (docs/statistics.md), but among m gated counters a lone
    // effect must reach alpha/m after Holm or BH. When even complete
    // separation cannot get there, no shift of any size was detectable: say
    // so, never "pass". The smallest p the exact test can report is that of
    // complete separation, 2 / C(m+n, m), read from the distribution that
    // mann_whitney_u used (cached): the very double the test reports. An
    // lgamma estimate, 1e-13 off, judged 7 vs 9 samples among 286 gated
    // counters at alpha 0.05 detectable, where 2 / C(16, 7) is exactly
    // alpha/286 and Holm's p never gets below alpha.
    if (r.gated && *r.test == method::exact &&
        stats::shared_exact_u_distribution(r.baseline.n, r.candidate.n)->min_p_two_sided() >= level) {
        r.mde_pct = std::numeric_limits<double>::infinity();
    }
}

// ---- Step 5: status ---------------------------------------------------------

// Status and reason of a counter that reached step 2's end undecided, in the
// order of docs/statistics.md: regression / improvement, inconclusive, unchanged.
// A leak or a memcheck error (capture::counter_traits::any_increase),
// counted exactly: any increase is new and fails; what the baseline already
// has is said, and passes.
void classify_any_increase(counter_report& r)
{
    const double base = *r.baseline.median, cand = *r.candidate.median;
    if (cand > base) {
        r.state = status::regression;
        r.reason = fmt::format("deterministic counter: {} -> {}, and any increase fails (new ones)", base, cand);
    } else if (cand < base) {
        r.state = status::improvement;
        r.reason = fmt::format("deterministic counter: {} -> {}", base, cand);
    } else {
        r.state = status::unchanged;
        r.reason = base == 0 ? std::string("deterministic counter: none on either side")
                             : fmt::format("deterministic counter: {} on both sides, already in the baseline "
                                           "(not new, not failing)",
                                           base);
    }
}

// The interval of the shift that decides "unchanged", in % of |median(B)|:
// the report's shift_ci (the one it prints), when it has its level 1 - alpha
// and the baseline median is not 0 (no relative interval from 0).
std::optional<std::pair<double, double>> interval_pct(const pending_counter& pc)
{
    const counter_report& r = pc.rep;
    if (!r.shift_ci || !pc.ci_attained || !r.baseline.median) return std::nullopt;
    const auto lo = pct_of(r.shift_ci->first, *r.baseline.median);
    const auto hi = pct_of(r.shift_ci->second, *r.baseline.median);
    if (!lo || !hi || !std::isfinite(*lo) || !std::isfinite(*hi)) return std::nullopt;
    return std::pair{*lo, *hi};
}

// docs/statistics.md "Equivalence": the interval lies strictly inside
// (-threshold, +threshold), the test of Schuirmann's two one-sided tests.
bool inside_threshold(const std::optional<std::pair<double, double>>& ci, double threshold)
{
    return ci && ci->first > -threshold && ci->second < threshold;
}

std::string ci_str(const std::optional<std::pair<double, double>>& ci)
{
    return ci ? fmt::format("[{:+.2f}%, {:+.2f}%]", ci->first, ci->second) : std::string("none attainable yet");
}

// Why a tested counter whose interval is not inside +-threshold is
// inconclusive (classify's last row), one line.
std::string undecided_reason(const pending_counter& pc, const std::optional<std::pair<double, double>>& ci,
                             const std::optional<double>& p, bool significant, bool big, double delta,
                             const policy& rules)
{
    const counter_report& r = pc.rep;
    const double threshold = pc.rule.threshold_pct;
    if (!ci && (!r.baseline.median || *r.baseline.median == 0)) {
        return fmt::format("{} (p={:.3g}), and a baseline median of 0 has no relative interval to compare with +-{}%",
                           significant ? "significant" : "not significant", p.value_or(1.0), threshold);
    }
    const std::string interval = ci ? fmt::format("the interval {} reaches beyond +-{}%", ci_str(ci), threshold)
                                    : fmt::format("{} baseline / {} candidate samples give no interval at level {}",
                                                  r.baseline.n, r.candidate.n, 1 - rules.alpha);
    if (significant) {
        // Significant, yet the change of the medians is below the threshold
        // while the interval reaches beyond it: the shift may be as large as
        // the threshold, so neither a regression nor unchanged.
        return fmt::format("p={:.3g} < alpha={} and |delta| {:.2f}% < {}%, but {}: the shift may be as large as the "
                           "threshold; more repetitions needed",
                           *p, rules.alpha, std::abs(delta), threshold, interval);
    }
    if (big) {
        // The shift seen is beyond the threshold and the test could not
        // confirm it (ties, or a level too strict for these sample sizes
        // after the family's adjustment): never "unchanged".
        return fmt::format("|delta| {:.2f}% >= {}%, but not significant (p={:.3g}, alpha={}) and {}: more "
                           "repetitions needed",
                           std::abs(delta), threshold, p.value_or(1.0), rules.alpha, interval);
    }
    return fmt::format("not significant (p={:.3g}), but {}: more repetitions or less noise needed", p.value_or(1.0),
                       interval);
}

void classify(pending_counter& pc, const policy& rules)
{
    counter_report& r = pc.rep;
    if (r.test && *r.test == method::deterministic && capture::lookup_counter(r.name).any_increase) {
        classify_any_increase(r);
        return;
    }
    const double threshold = pc.rule.threshold_pct;
    // delta_pct is null when median(B) is 0 (no relative change from zero),
    // yet any change away from 0 is larger than every threshold: an infinite
    // relative change, not "0.00%".
    const double change = *r.candidate.median - *r.baseline.median;
    const bool from_zero = !r.delta_pct && *r.baseline.median == 0 && change != 0;
    const double delta = from_zero ? std::copysign(std::numeric_limits<double>::infinity(), change)
                                   : r.delta_pct.value_or(0.0);
    const bool big = (r.delta_pct || from_zero) && std::abs(delta) >= threshold;
    const bool deterministic = r.test && *r.test == method::deterministic;
    // Non-gated counters are informational: judged on their raw p.
    const std::optional<double> p = r.p_adjusted ? r.p_adjusted : r.p_value;
    const bool significant = deterministic || (p && *p < rules.alpha);
    // |CoV|: stddev / mean is negative for a negative mean.
    const double cov = std::max(std::abs(r.baseline.cov.value_or(0.0)), std::abs(r.candidate.cov.value_or(0.0)));
    if (significant && big) {
        r.state = is_worse(delta, r.direction) ? status::regression : status::improvement;
        const std::string why = deterministic ? std::string("deterministic counter")
                                              : fmt::format("p={:.3g} < alpha={}", *p, rules.alpha);
        r.reason = from_zero ? fmt::format("{}: changed from a zero baseline median to {} (any change from 0 "
                                           "exceeds threshold {}%)",
                                           why, *r.candidate.median, threshold)
                   : deterministic
                       ? fmt::format("deterministic counter changed by {:+.2f}% (threshold {}%)", delta, threshold)
                       : fmt::format("p={:.3g} < alpha={} and |delta| {:.2f}% >= {}%", *p, rules.alpha, std::abs(delta),
                                     threshold);
        return;
    }
    if (deterministic) {
        r.state = status::unchanged;
        r.reason = fmt::format("deterministic counter: |delta| {:.2f}% < {}%", std::abs(delta), threshold);
        return;
    }
    if (cov > pc.rule.max_cov) {
        r.state = status::inconclusive;
        r.reason = fmt::format("coefficient of variation {:.1f}% exceeds max_cov {:.1f}%", cov * 100,
                               pc.rule.max_cov * 100);
        return;
    }
    // docs/statistics.md "Equivalence": unchanged when the printed interval
    // at 1 - alpha lies inside +-threshold (two one-sided tests at alpha/2
    // each; not adjusted for multiplicity: intersection-union).
    const auto ci = interval_pct(pc);
    if (inside_threshold(ci, threshold)) {
        r.state = status::unchanged;
        r.reason = significant ? fmt::format("interval {} lies inside +-{}%: a significant shift (p={:.3g}) smaller "
                                             "than the threshold",
                                             ci_str(ci), threshold, *p)
                               : fmt::format("interval {} lies inside +-{}% (p={:.3g})", ci_str(ci), threshold,
                                             p.value_or(1.0));
        return;
    }
    r.state = status::inconclusive;
    r.reason = undecided_reason(pc, ci, p, significant, big, delta, rules);
}

// Status and reason of a counter of a benchmark measured apart (step 2b):
// inconclusive without a between-run test, unless the counter is exact
// (deterministic rule) or the history's between-run scale is exactly 0
// (within-run rules); otherwise the rows of classify() with the between-run
// test's p_adjusted and detectable effect.
void classify_between(pending_counter& pc, const policy& rules)
{
    counter_report& r = pc.rep;
    const bool deterministic = r.test && *r.test == method::deterministic;
    if (!pc.between) {
        if (deterministic || pc.unjudged.empty()) {
            classify(pc, rules);
            return;
        }
        pc.between_decided = true;
        r.state = status::inconclusive;
        r.reason = fmt::format("not measured interleaved, and {}: measure baseline and candidate in one perfgate run",
                               pc.unjudged);
        return;
    }
    pc.between_decided = true;
    const stats::between_run_result& b = *pc.between;
    const double threshold = pc.rule.threshold_pct;
    const double base = *r.baseline.median;
    const double change = *r.candidate.median - base;
    const bool from_zero = !r.delta_pct && base == 0 && change != 0;
    const double delta = from_zero ? std::copysign(std::numeric_limits<double>::infinity(), change)
                                   : r.delta_pct.value_or(0.0);
    const bool big = (r.delta_pct || from_zero) && std::abs(delta) >= threshold;
    const std::optional<double> p = r.p_adjusted ? r.p_adjusted : b.p_value;
    const bool significant = p && *p < rules.alpha;
    r.mde_pct = base != 0 ? std::optional<double>(stats::between_run_mde(b, rules.alpha, stats::default_power) /
                                                  std::abs(base) * 100.0)
                          : std::nullopt;
    const double cov = std::max(std::abs(r.baseline.cov.value_or(0.0)), std::abs(r.candidate.cov.value_or(0.0)));
    const std::string against = fmt::format("the between-run spread of {} runs ({} sd), t={:.2f}, p={:.3g}",
                                            b.history_runs,
                                            base != 0 ? fmt::format("{:.2f}%", b.sd / std::abs(base) * 100.0)
                                                      : fmt::format("{:.4g}", b.sd),
                                            b.t.value_or(0.0), p.value_or(1.0));
    // The between-run test's interval of delta_pct at 1 - alpha, the one
    // between_runs.ci_pct reports: the equivalence rule of classify() on it.
    const std::optional<std::pair<double, double>> ci = r.between_runs ? r.between_runs->ci_pct : std::nullopt;
    if (significant && big) {
        r.state = is_worse(delta, r.direction) ? status::regression : status::improvement;
        r.reason = fmt::format("not measured interleaved: against {} < alpha={} and |delta| {:.2f}% >= {}%", against,
                               rules.alpha, std::abs(delta), threshold);
    } else if (!deterministic && cov > pc.rule.max_cov) {
        r.state = status::inconclusive;
        r.reason = fmt::format("coefficient of variation {:.1f}% exceeds max_cov {:.1f}%", cov * 100,
                               pc.rule.max_cov * 100);
    } else if (inside_threshold(ci, threshold)) {
        r.state = status::unchanged;
        r.reason = fmt::format("not measured interleaved: the between-run interval {} lies inside +-{}% (against {})",
                               ci_str(ci), threshold, against);
    } else {
        r.state = status::inconclusive;
        r.reason = fmt::format("not measured interleaved: the between-run interval {} reaches beyond +-{}% (against "
                               "{}): measure baseline and candidate in one perfgate run",
                               ci ? ci_str(ci) : std::string("(none: baseline median 0)"), threshold, against);
    }
}

// ---- Step 5 under policy.sequential ---------------------------------------

// The gated counters judged by the sequential rule: per-run samples, a rank
// test (zero-spread counters keep the deterministic rule, which is also
// what the rule's first look says for them).
bool is_sequential(const pending_counter& pc, const policy& rules)
{
    return rules.sequential && !pc.apart && pc.rep.gated && !pc.decided && !pc.summary && pc.rep.test &&
           *pc.rep.test != method::deterministic;
}

// m for the Bonferroni split of alpha: the gated counters with per-run data
// on both sides (deterministic ones included, so that m does not depend on
// whether a count happened to vary).
std::size_t sequential_family(const std::vector<pending_benchmark>& benches)
{
    std::size_t m = 0;
    for (const auto& bench : benches) {
        for (const auto& pc : bench.counters) m += pc.rep.gated && !pc.decided && !pc.summary ? 1 : 0;
    }
    return m;
}

double sequential_alpha(const policy& rules, std::size_t family)
{
    return rules.alpha / static_cast<double>(std::max<std::size_t>(family, 1));
}

std::optional<sequential_replay> replay_counter(const pending_counter& pc, const policy& rules, std::size_t family,
                                                bool stopped)
{
    // Regressions at alpha / m, equivalence at alpha (docs/statistics.md
    // "Equivalence": intersection-union).
    return replay_looks(*rules.sequential, sequential_alpha(rules, family), pc.b->values, pc.c->values,
                        pc.rule.threshold_pct, pc.rule.direction, stopped, rules.alpha);
}

// Status and reason from the counter's replayed looks (gate/sequential.hpp).
// Replaces classify(): the Holm adjustment and max_cov do not apply, the
// spending plan at alpha / m and the repeated confidence interval do.
void classify_sequential(pending_counter& pc, const policy& rules, std::size_t family)
{
    counter_report& r = pc.rep;
    const double threshold = pc.rule.threshold_pct;
    const auto rep = replay_counter(pc, rules, family, true);
    if (!rep) {
        r.state = status::insufficient;
        r.reason = fmt::format("{} baseline / {} candidate samples; the sequential plan's first look needs {} per side",
                               r.baseline.n, r.candidate.n, rules.sequential->min_repetitions);
        return;
    }
    const stats::sequential_result& res = rep->result;
    sequential_report s;
    s.look = res.look + 1;
    s.looks = rep->looks;
    s.n = rep->n;
    s.alpha = sequential_alpha(rules, family);
    s.level = res.nominal_p;
    s.equivalence_level = res.equivalence_p;
    s.p_one_sided = res.p_one_sided;
    s.ci_pct = res.ci_pct;
    s.ended_early = rep->cut;
    r.sequential = s;
    r.p_value = res.p_value;
    r.mde_pct = res.mde_pct;
    const std::string at = fmt::format("look {} of {} ({} per side{})", s.look, s.looks, s.n,
                                       rep->cut ? ", budget spent" : "");
    switch (res.decision) {
    case stats::sequential_decision::regression:
    case stats::sequential_decision::improvement:
        r.state = res.decision == stats::sequential_decision::regression ? status::regression : status::improvement;
        r.reason = fmt::format("{}: one-sided p={:.3g} < look level {:.3g} and |delta| {:.2f}% >= {}%", at,
                               res.p_one_sided, res.nominal_p, std::abs(res.delta_pct.value_or(0.0)), threshold);
        return;
    case stats::sequential_decision::unchanged:
        r.state = status::unchanged;
        r.reason = fmt::format("{}: repeated confidence interval {} lies inside +-{}%", at, ci_str(res.ci_pct),
                               threshold);
        return;
    case stats::sequential_decision::inconclusive:
    case stats::sequential_decision::continue_sampling:
        r.state = status::inconclusive;
        r.reason = fmt::format(
            "{}: not decided; repeated confidence interval {} is not inside +-{}%{}", at, ci_str(res.ci_pct), threshold,
            res.mde_pct && std::isfinite(*res.mde_pct)
                ? fmt::format(", shifts above {:.2f}% were detectable: a larger budget or less noise needed",
                              *res.mde_pct)
                : ", no shift was detectable at this look's level: a larger budget needed");
        return;
    }
}

// ---- Step 6: history --------------------------------------------------------

// z-score of the candidate median against the baseline branch's history
// (docs/statistics.md "History z-score"), when there are history_min points.
void score_against_history(pending_counter& pc, std::string_view bench, const policy& rules, const history_fn& history)
{
    counter_report& r = pc.rep;
    if (!r.candidate.median) return;
    const std::vector<double> hist = pc.history ? std::move(*pc.history) : history(bench, r.name);
    if (hist.size() < rules.history_min) return;
    r.z_score = rules.robust_z ? stats::robust_z_score(*r.candidate.median, hist)
                               : stats::z_score(*r.candidate.median, hist);
    r.anomaly = r.z_score && std::abs(*r.z_score) > rules.z_threshold;
}

// ---- Step 7: warnings and verdicts -----------------------------------------

// What a reader of this counter's status should know about how it was reached.
void warn_about_counter(const pending_counter& pc, std::string_view bench, const policy& rules,
                        std::vector<std::string>& warnings)
{
    const counter_report& r = pc.rep;
    if (!pc.decided) {
        // An estimate from multiplexed counting is scaled by perf.
        if (r.running_pct_min && *r.running_pct_min < 100.0) {
            warnings.push_back(
                fmt::format("{}/{}: multiplexed (counted {:.2f}% of the time, scaled by perf): split the events into "
                            "groups (perfgate run --split-events)",
                            bench, r.name, *r.running_pct_min));
        }
        const bool deterministic = r.test && *r.test == method::deterministic;
        const std::size_t fewest = std::min(r.baseline.n, r.candidate.n);
        // Under sequential sampling a look's level accounts for the sample
        // size: few samples decide only a large, clear change.
        // One warning per gated counter of every callgrind run would teach
        // readers to skip the warnings: said only where the source is unknown.
        if (r.gated && deterministic && fewest == 1 && !pc.simulated) {
            warnings.push_back(
                fmt::format("{}/{}: one sample on a side, decided on the threshold alone (deterministic rule); only "
                            "counts that do not vary between runs (callgrind's) justify that",
                            bench, r.name));
        }
        if (r.gated && !deterministic && fewest < rules.warn_samples && !r.sequential) {
            warnings.push_back(fmt::format("{}/{}: only {} samples on a side; {} or more give a "
                                           "reliable rank test",
                                           bench, r.name, fewest, rules.warn_samples));
        }
    }
    if (r.state == status::unsupported && r.gated) {
        warnings.push_back(fmt::format("{}/{}: gated but {}; it does not gate", bench, r.name,
                                       !pc.b || !pc.c ? r.reason : "<not supported> / <not counted> on this machine"));
    }
}

// docs/statistics.md: fail if a gated counter regressed (or is an anomaly under
// fail_on_anomaly), else inconclusive if one is inconclusive or
// insufficient, or if no gated counter has data; else pass.
verdict benchmark_verdict(const benchmark_report& br, const policy& rules, std::vector<std::string>& warnings)
{
    bool fail = false, unsure = false, any_gate_data = false;
    for (const auto& r : br.counters) {
        if (!r.gated) continue;
        if (r.state != status::unsupported) any_gate_data = true;
        if (r.state == status::regression || (rules.fail_on_anomaly && r.anomaly)) fail = true;
        if (r.state == status::inconclusive || r.state == status::insufficient) unsure = true;
    }
    if (!any_gate_data) {
        unsure = true;
        warnings.push_back(fmt::format("benchmark '{}': no gated counter has data on both sides, so nothing was gated "
                                       "(on machines without a PMU use task-clock, or --backend callgrind)",
                                       br.name));
    }
    return fail ? verdict::fail : unsure ? verdict::inconclusive : verdict::pass;
}

// The gate fails if a benchmark fails, else is inconclusive if one is, or if
// nothing was compared.
verdict gate_verdict(const std::vector<benchmark_report>& benchmarks, std::vector<std::string>& warnings)
{
    if (benchmarks.empty()) {
        warnings.push_back("no benchmark present on both sides: nothing was compared");
        return verdict::inconclusive;
    }
    bool fail = false, unsure = false;
    for (const auto& b : benchmarks) {
        fail = fail || b.result == verdict::fail;
        unsure = unsure || b.result == verdict::inconclusive;
    }
    return fail ? verdict::fail : unsure ? verdict::inconclusive : verdict::pass;
}

// Counters that count work rather than time: instructions retired, and
// callgrind's estimate of cycles from instructions and simulated misses.
bool counts_work(std::string_view counter)
{
    const std::string base = capture::base_event_name(counter);
    return base == "instructions" || base == "estimated-cycles";
}

bool moved(status s) { return s == status::regression || s == status::improvement; }

// docs/statistics.md#instruction-counts: for each work counter that moved,
// the first time counter that moved the other way (gated ones first).
std::vector<count_time_disagreement> count_vs_time(const benchmark_report& b)
{
    std::vector<const counter_report*> times;
    for (const bool gated : {true, false}) {
        for (const auto& c : b.counters) {
            if (c.gated == gated && capture::lookup_counter(c.name).time_like && moved(c.state) && c.delta_pct)
                times.push_back(&c);
        }
    }
    std::vector<count_time_disagreement> out;
    for (const auto& c : b.counters) {
        if (!counts_work(c.name) || !moved(c.state) || !c.delta_pct) continue;
        for (const counter_report* t : times) {
            if (t->state == c.state) continue;
            out.push_back({c.name, t->name, c.state, t->state, *c.delta_pct, *t->delta_pct});
            break;
        }
    }
    return out;
}

} // namespace

void derive_series(capture::benchmark_samples& b)
{
    for (auto& s : b.counters) {
        auto d = std::make_shared<series_derived>();
        d->summary = summarize_values(s);
        if (!b.summary_only) d->shape = side_shape(s.values);
        s.derived = std::move(d);
    }
}

report compare(const capture::sample_set& baseline, const capture::sample_set& candidate, const policy& rules,
               const history_fn& history, const pairing_fn& pairing_of)
{
    report out;
    out.rules = rules;
    for (const auto& w : baseline.warnings) out.warnings.push_back("baseline: " + w);
    for (const auto& w : candidate.warnings) out.warnings.push_back("candidate: " + w);

    std::vector<pending_benchmark> benches = pair_benchmarks(baseline, candidate, rules, out);
    for (auto& bench : benches) {
        if (pairing_of) bench.how = pairing_of(bench.name);
        for (auto& pc : bench.counters) {
            describe_and_test(pc, bench.summary_repeats);
            // A simulator's count does not vary between runs (docs/statistics.md
            // "Deterministic counters"): measured apart, it is judged as measured
            // together, so a reused baseline (perfgate run --baseline-source
            // server) gates like a measured one.
            const bool simulated_count = pc.simulated && pc.rep.test && *pc.rep.test == method::deterministic;
            if (bench.how && !bench.how->interleaved && !simulated_count) weigh_between_runs(pc, bench, rules, history);
        }
    }
    // Under policy.sequential the gated counters are not adjusted together:
    // each has its own spending plan at alpha / m (classify_sequential).
    const std::size_t family = rules.sequential ? sequential_family(benches) : 0;
    const double level = rules.sequential ? sequential_alpha(rules, family)
                                          : detection_level(rules, adjust_p_values(benches, rules));
    for (auto& bench : benches) {
        for (auto& pc : bench.counters) {
            if (pc.decided) continue;
            if (pc.rep.test && *pc.rep.test != method::deterministic) estimate_shift(pc, rules, level);
            if (pc.apart) {
                classify_between(pc, rules);
            } else if (is_sequential(pc, rules)) {
                classify_sequential(pc, rules, family);
            } else {
                classify(pc, rules);
            }
            pc.rep.noise = diagnose_noise(*pc.b, *pc.c, pc.rep, pc.rule, rules.alpha, level);
            if (pc.between_decided && pc.rep.state == status::inconclusive && pc.rep.noise) {
                // More repetitions shrink the within-run error only.
                pc.rep.noise->repetitions_needed.reset();
                pc.rep.noise->source = std::string(source_between_runs);
                // The between-run interval decides here, not the within-run one.
                const auto& ci = pc.rep.between_runs->ci_pct;
                pc.rep.noise->threshold_needed_pct =
                    ci ? std::optional<double>(std::floor(std::max(std::abs(ci->first), std::abs(ci->second)) * 2) / 2 +
                                               0.5)
                       : std::nullopt;
                pc.rep.noise->advice = "the runs were measured apart: more repetitions do not lower between-run "
                                       "variation; measure baseline and candidate in one perfgate run";
            }
        }
    }
    if (history) {
        for (auto& bench : benches) {
            for (auto& pc : bench.counters) score_against_history(pc, bench.name, rules, history);
        }
    }
    for (auto& bench : benches) {
        benchmark_report br;
        br.name = bench.name;
        if (bench.how) br.interleaved = bench.how->interleaved;
        for (auto& pc : bench.counters) {
            warn_about_counter(pc, bench.name, rules, out.warnings);
            br.counters.push_back(std::move(pc.rep));
        }
        br.result = benchmark_verdict(br, rules, out.warnings);
        br.count_vs_time = count_vs_time(br);
        out.benchmarks.push_back(std::move(br));
    }
    out.result = gate_verdict(out.benchmarks, out.warnings);
    settle_failed(out);
    return out;
}

bool add_unpaired(report& out, std::string_view benchmark, const side_outcome& baseline, const side_outcome& candidate)
{
    const std::string name(benchmark);
    if (!candidate.present) {
        out.removed.push_back(name);
        out.warnings.push_back(fmt::format("benchmark '{}' has no candidate data: not compared", name));
    } else if (!baseline.present) {
        out.added.push_back(name);
        out.warnings.push_back(fmt::format("benchmark '{}' has no baseline data: not compared", name));
    } else if (!baseline.error.empty() || !candidate.error.empty()) {
        const bool both = !baseline.error.empty() && !candidate.error.empty();
        const std::string side = both ? "both" : !baseline.error.empty() ? "baseline" : "candidate";
        const std::string& message = !candidate.error.empty() ? candidate.error : baseline.error;
        out.failed.push_back({name, side, message});
        out.warnings.push_back(fmt::format("benchmark '{}' failed ({}): {}: not compared", name,
                                           both ? "both sides" : side, message));
        settle_failed(out);
    } else {
        return false;
    }
    return true;
}

void settle_failed(report& out)
{
    // A benchmark that failed to run was not seen: never a pass.
    if (!out.failed.empty() && out.result == verdict::pass) out.result = verdict::inconclusive;
}

std::optional<std::string> inconsistent_verdict(const report& r)
{
    std::vector<std::string> ignored;
    std::vector<benchmark_report> recomputed;
    for (const auto& b : r.benchmarks) {
        benchmark_report copy;
        copy.name = b.name;
        copy.counters = b.counters;
        copy.result = benchmark_verdict(b, r.rules, ignored);
        if (copy.result != b.result) {
            return fmt::format(
                "benchmark '{}' says {} but its gated counters give {} ({} regressed, {} inconclusive)", b.name,
                to_string(b.result), to_string(copy.result),
                std::count_if(b.counters.begin(), b.counters.end(),
                              [](const counter_report& c) { return c.gated && c.state == status::regression; }),
                std::count_if(b.counters.begin(), b.counters.end(), [](const counter_report& c) {
                    return c.gated && (c.state == status::inconclusive || c.state == status::insufficient);
                }));
        }
        recomputed.push_back(std::move(copy));
    }
    report whole;
    whole.failed = r.failed;
    whole.result = gate_verdict(recomputed, ignored);
    settle_failed(whole);
    if (whole.result != r.result) {
        return fmt::format("the report says {} but its benchmarks give {} ({} gated counters regressed)",
                           to_string(r.result), to_string(whole.result), r.count(status::regression));
    }
    return std::nullopt;
}

sequential_progress sequential_check(const capture::sample_set& baseline, const capture::sample_set& candidate,
                                     const policy& rules, const std::function<std::size_t(std::size_t)>& family_of)
{
    PERFGATE_CHECK(rules.sequential.has_value());
    report ignored;
    std::vector<pending_benchmark> benches = pair_benchmarks(baseline, candidate, rules, ignored);
    for (auto& bench : benches) {
        for (auto& pc : bench.counters) describe_and_test(pc, bench.summary_repeats);
    }
    sequential_progress out;
    out.gated = sequential_family(benches);
    const std::size_t family = family_of ? family_of(out.gated) : out.gated;
    for (const auto& bench : benches) {
        for (const auto& pc : bench.counters) {
            if (!pc.rep.gated) continue;
            // Too few samples for min_samples: more rounds will tell.
            if (pc.decided && pc.rep.state == status::insufficient) out.decided = false;
            if (!is_sequential(pc, rules)) continue;
            const auto rep = replay_counter(pc, rules, family, false);
            if (!rep || rep->result.decision == stats::sequential_decision::continue_sampling) out.decided = false;
        }
    }
    return out;
}

} // namespace perfgate::gate
