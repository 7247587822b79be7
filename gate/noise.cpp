#include "gate/noise.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gate/compare.hpp"
#include "stats/dip_test.hpp"
#include "stats/kendall.hpp"
#include "stats/mann_whitney.hpp"
#include "stats/mde.hpp"

namespace perfgate::gate {

namespace {

// Either side true; false when a side was tested and neither is true; null
// when neither side was tested.
std::optional<bool> either(const std::optional<bool>& b, const std::optional<bool>& c)
{
    if (!b && !c) return std::nullopt;
    return b.value_or(false) || c.value_or(false);
}

// What the MDE formula needs from a report: both sides' standard
// deviations and a non-zero baseline median, finite. nullopt otherwise (the
// gate had no MDE either: no relative change from a median of 0).
struct mde_inputs {
    double sd_b, sd_c, centre;
};

std::optional<mde_inputs> mde_inputs_of(const counter_report& r)
{
    if (!r.baseline.stddev || !r.candidate.stddev || !r.baseline.median) return std::nullopt;
    const mde_inputs in{*r.baseline.stddev, *r.candidate.stddev, std::abs(*r.baseline.median)};
    if (!std::isfinite(in.sd_b) || !std::isfinite(in.sd_c) || !std::isfinite(in.centre) || in.centre == 0) {
        return std::nullopt;
    }
    return in;
}

// The repetitions per side at which the gate's own MDE rule (compare.cpp,
// estimate_shift) would let this counter reach its threshold: the MDE
// formula at alpha, and for a gated counter an exact rank test that can get
// below the detection level at all (2 / C(2n, n) < level; the asymptotic
// test from stats::mwu_exact_limit on has no such floor). nullopt when
// max_repetitions_advised is not enough.
std::optional<std::size_t> repetitions_to_decide(const counter_report& r, const mde_inputs& in, double alpha,
                                                 double level)
{
    auto n = stats::repetitions_for_mde(in.sd_b, in.sd_c, in.centre, r.threshold_pct, alpha, max_repetitions_advised);
    if (!n || !r.gated) return n;
    while (*n < stats::mwu_exact_limit && stats::shared_exact_u_distribution(*n, *n)->min_p_two_sided() >= level) {
        ++*n;
    }
    return n;
}

// The report's interval of the shift in % of |median(B)|, with the shift
// estimate inside it; nullopt without one.
struct interval_now {
    double lo, hi, shift;
};

std::optional<interval_now> interval_of(const counter_report& r)
{
    if (!r.shift_ci || !r.shift_pct || !r.baseline.median || *r.baseline.median == 0) return std::nullopt;
    const double base = std::abs(*r.baseline.median);
    const interval_now in{r.shift_ci->first / base * 100, r.shift_ci->second / base * 100, *r.shift_pct};
    if (!std::isfinite(in.lo) || !std::isfinite(in.hi) || !std::isfinite(in.shift) || !(in.hi > in.lo)) {
        return std::nullopt;
    }
    return in;
}

// gate/noise.hpp "Repetitions": the equal n per side at which the
// interval's half-width, now h at n_b / n_c and shrinking as
// sqrt(1/n_b + 1/n_c), is half the threshold. For a gated counter also an
// n at which the exact rank test can reach the gate's detection level
// (alpha / m): below it no regression can be confirmed. nullopt above
// max_repetitions_advised.
std::optional<std::size_t> repetitions_from_interval(const counter_report& r, const interval_now& in, double level)
{
    const double half = (in.hi - in.lo) / 2;
    const double target = r.threshold_pct / 2;
    if (!(target > 0)) return std::nullopt;
    const double s2 = 1.0 / static_cast<double>(r.baseline.n) + 1.0 / static_cast<double>(r.candidate.n);
    const double n = std::ceil(2 / s2 * (half / target) * (half / target));
    if (!std::isfinite(n) || n > static_cast<double>(max_repetitions_advised)) return std::nullopt;
    std::size_t need = std::max(static_cast<std::size_t>(std::max(n, 2.0)), std::max(r.baseline.n, r.candidate.n) + 1);
    if (r.gated) {
        while (need < stats::mwu_exact_limit &&
               stats::shared_exact_u_distribution(need, need)->min_p_two_sided() >= level) {
            ++need;
        }
    }
    return need;
}

// The smallest multiple of 0.5 strictly above both |bounds|: a threshold
// under which the interval lies inside +-threshold now.
double threshold_to_decide(const interval_now& in)
{
    return std::floor(std::max(std::abs(in.lo), std::abs(in.hi)) * 2) / 2 + 0.5;
}

// "baseline", "candidate" or "both sides" for the sides whose flag is set.
std::string sides_flagged(const std::optional<bool>& b, const std::optional<bool>& c)
{
    if (b.value_or(false) && c.value_or(false)) return "both sides";
    return b.value_or(false) ? "baseline" : "candidate";
}

std::string advise(const noise_diagnosis& d, const counter_report& r, double cov, const counter_rule& rule)
{
    std::vector<std::string> parts;
    if (r.state == status::inconclusive) {
        if (d.source == source_near_threshold) {
            parts.push_back(fmt::format("the shift, about {:+.2f}%, is close to the {}% threshold: {}decide whether "
                                        "a change of that size matters (threshold_pct)",
                                        r.shift_pct.value_or(0.0), r.threshold_pct,
                                        d.repetitions_needed ? fmt::format("about {} repetitions per side tell which "
                                                                           "side of it it lies, or ",
                                                                           *d.repetitions_needed)
                                                             : std::string()));
        } else if (d.repetitions_needed) {
            // Under sequential sampling the budget, not -r, sets the count.
            parts.push_back(fmt::format("about {0} repetitions per side ({1} {0}) would decide it at this noise",
                                        *d.repetitions_needed, r.sequential ? "--max-repetitions" : "-r"));
        } else if (d.too_noisy && cov > rule.max_cov && !r.sequential) {
            parts.push_back(fmt::format("CoV above max_cov {:.1f}%, which more repetitions do not lower: a "
                                        "quieter machine, or --backend callgrind (deterministic instruction counts)",
                                        rule.max_cov * 100));
        } else if (d.too_noisy) {
            parts.push_back(fmt::format("too noisy for a {}% threshold (more than {} repetitions per side "
                                        "needed): --backend callgrind gives deterministic instruction counts",
                                        r.threshold_pct, max_repetitions_advised));
        }
    }
    if (d.bimodal.value_or(false)) {
        parts.push_back("the samples form separate groups: the machine switching speeds (CPU frequency, a busy "
                        "neighbour; see perfgate check-env), or a coarse counter (rusage times in scheduler ticks)");
    }
    if (d.drift.value_or(false)) {
        const bool both = d.baseline.drift.value_or(false) && d.candidate.drift.value_or(false);
        parts.push_back(both ? "the machine's speed changed during the run: the interleaved rounds keep the sides "
                               "comparable, but the spread grows"
                             : fmt::format("only the {} drifts: the program itself changes from run to run "
                                           "(warm-up, state kept between runs; try --warmup)",
                                           sides_flagged(d.baseline.drift, d.candidate.drift)));
    }
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
    return out;
}

// |CoV|, the larger side: stddev / mean is negative for a negative mean.
double larger_cov(const counter_report& r)
{
    return std::max(std::abs(r.baseline.cov.value_or(0.0)), std::abs(r.candidate.cov.value_or(0.0)));
}

// ---- JSON -------------------------------------------------------------------

nlohmann::json noise_num(const std::optional<double>& v)
{
    if (!v || !std::isfinite(*v)) return nullptr;
    return *v;
}

nlohmann::json noise_bool(const std::optional<bool>& v)
{
    if (!v) return nullptr;
    return *v;
}

std::optional<double> noise_read_num(const nlohmann::json& j, const char* key)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return it->get<double>();
}

std::optional<bool> noise_read_bool(const nlohmann::json& j, const char* key)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return it->get<bool>();
}

nlohmann::json side_noise_json(const side_noise& s)
{
    return {{"dip", noise_num(s.dip)},
            {"dip_critical", noise_num(s.dip_critical)},
            {"bimodal", noise_bool(s.bimodal)},
            {"kendall_tau", noise_num(s.kendall_tau)},
            {"kendall_p", noise_num(s.kendall_p)},
            {"drift", noise_bool(s.drift)}};
}

side_noise side_noise_from_json(const nlohmann::json& j, const char* key)
{
    side_noise s;
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return s;
    s.dip = noise_read_num(*it, "dip");
    s.dip_critical = noise_read_num(*it, "dip_critical");
    s.bimodal = noise_read_bool(*it, "bimodal");
    s.kendall_tau = noise_read_num(*it, "kendall_tau");
    s.kendall_p = noise_read_num(*it, "kendall_p");
    s.drift = noise_read_bool(*it, "drift");
    return s;
}

} // namespace

// Values are finite: compare's contract.
side_noise side_shape(std::span<const double> values)
{
    side_noise s;
    if (auto dip = stats::dip_test(values)) {
        s.dip = dip->dip;
        s.dip_critical = dip->critical;
        s.bimodal = dip->bimodal;
    }
    if (values.size() >= drift_min_n) {
        if (auto trend = stats::kendall_trend(values)) {
            s.kendall_tau = trend->tau;
            s.kendall_p = trend->p_value;
            s.drift = trend->p_value < drift_level;
        }
    }
    return s;
}

std::optional<noise_diagnosis> diagnose_noise(const capture::counter_series& baseline,
                                              const capture::counter_series& candidate, const counter_report& r,
                                              const counter_rule& rule, double alpha, double level)
{
    if (!r.test || (*r.test != method::exact && *r.test != method::asymptotic)) return std::nullopt;
    noise_diagnosis d;
    auto shape_of = [](const capture::counter_series& s) {
        return s.derived && s.derived->shape ? *s.derived->shape : side_shape(s.values);
    };
    d.baseline = shape_of(baseline);
    d.candidate = shape_of(candidate);
    d.bimodal = either(d.baseline.bimodal, d.candidate.bimodal);
    d.drift = either(d.baseline.drift, d.candidate.drift);
    const double cov = larger_cov(r);
    if (r.state == status::inconclusive) {
        // compare.cpp's classify(): inconclusive because the interval is not
        // inside +-threshold (nor a significant shift beyond it), or because
        // the CoV exceeds max_cov, which no repetition count lowers.
        const auto in = interval_of(r);
        if (cov > rule.max_cov && !r.sequential) { // max_cov does not apply under sequential sampling
            d.too_noisy = true;
        } else if (in) {
            d.repetitions_needed = repetitions_from_interval(r, *in, level);
            d.too_noisy = !d.repetitions_needed;
        } else if (auto sd = mde_inputs_of(r)) {
            d.repetitions_needed = repetitions_to_decide(r, *sd, alpha, level);
            d.too_noisy = !d.repetitions_needed;
        }
        // A larger threshold decides it unless max_cov stands in the way.
        if (in && !(cov > rule.max_cov && !r.sequential)) d.threshold_needed_pct = threshold_to_decide(*in);
        // The interval narrower than the threshold yet reaching across it:
        // the shift itself is about the threshold's size.
        const bool near = in && in->hi - in->lo < r.threshold_pct &&
                          ((in->lo < r.threshold_pct && in->hi >= r.threshold_pct) ||
                           (in->lo <= -r.threshold_pct && in->hi > -r.threshold_pct));
        d.source = d.bimodal.value_or(false) ? source_bimodal
                   : d.drift.value_or(false) ? source_drift
                   : near                    ? source_near_threshold
                                             : source_executions;
    }
    d.advice = advise(d, r, cov, rule);
    return d;
}

std::string noise_summary(const counter_report& c)
{
    std::string out = noise_facts(c);
    if (!out.empty() && !c.noise->advice.empty()) out += ": " + c.noise->advice;
    return out;
}

std::string noise_facts(const counter_report& c)
{
    if (!c.noise) return {};
    const noise_diagnosis& d = *c.noise;
    if (!d.bimodal.value_or(false) && !d.drift.value_or(false) && !d.repetitions_needed && !d.too_noisy) return {};
    std::vector<std::string> facts;
    auto bimodal_side = [](const char* name, const side_noise& s) {
        return fmt::format("{} (dip {:.3f} > {:.3f})", name, s.dip.value_or(0.0), s.dip_critical.value_or(0.0));
    };
    auto drift_side = [](const char* name, const side_noise& s) {
        return fmt::format("{} (tau {:+.2f}, p={:.2g})", name, s.kendall_tau.value_or(0.0), s.kendall_p.value_or(1.0));
    };
    auto flagged = [&](const char* what, const auto& show, bool b, bool cside) {
        if (!b && !cside) return;
        std::string f = what;
        if (b) f += " " + show("baseline", d.baseline);
        if (b && cside) f += " and";
        if (cside) f += " " + show("candidate", d.candidate);
        facts.push_back(std::move(f));
    };
    flagged("bimodal", bimodal_side, d.baseline.bimodal.value_or(false), d.candidate.bimodal.value_or(false));
    flagged("drift", drift_side, d.baseline.drift.value_or(false), d.candidate.drift.value_or(false));
    auto cov_str = [](const std::optional<double>& v) {
        return v && std::isfinite(*v) ? fmt::format("{:.1f}%", std::abs(*v) * 100) : std::string("—");
    };
    facts.push_back(fmt::format("CoV {} / {}, MDE {}", cov_str(c.baseline.cov), cov_str(c.candidate.cov),
                                c.mde_pct && std::isfinite(*c.mde_pct) ? fmt::format("{:.2f}%", *c.mde_pct)
                                                                       : std::string("—")));
    std::string out;
    for (std::size_t i = 0; i < facts.size(); ++i) out += (i ? "; " : "") + facts[i];
    return out;
}

nlohmann::json noise_to_json(const std::optional<noise_diagnosis>& n)
{
    if (!n) return nullptr;
    return {{"bimodal", noise_bool(n->bimodal)},
            {"drift", noise_bool(n->drift)},
            {"baseline", side_noise_json(n->baseline)},
            {"candidate", side_noise_json(n->candidate)},
            {"repetitions_needed", n->repetitions_needed ? nlohmann::json(*n->repetitions_needed) : nullptr},
            {"too_noisy", n->too_noisy},
            {"advice", n->advice.empty() ? nlohmann::json(nullptr) : nlohmann::json(n->advice)},
            {"source", n->source.empty() ? nlohmann::json(nullptr) : nlohmann::json(n->source)},
            {"threshold_needed_pct", noise_num(n->threshold_needed_pct)}};
}

std::optional<noise_diagnosis> noise_from_json(const nlohmann::json& counter)
{
    auto it = counter.find("noise");
    if (it == counter.end() || it->is_null()) return std::nullopt;
    const nlohmann::json& j = *it;
    noise_diagnosis d;
    d.bimodal = noise_read_bool(j, "bimodal");
    d.drift = noise_read_bool(j, "drift");
    d.baseline = side_noise_from_json(j, "baseline");
    d.candidate = side_noise_from_json(j, "candidate");
    if (auto r = j.find("repetitions_needed"); r != j.end() && !r->is_null()) {
        d.repetitions_needed = r->get<std::size_t>();
    }
    d.too_noisy = j.value("too_noisy", false);
    if (auto a = j.find("advice"); a != j.end() && !a->is_null()) d.advice = a->get<std::string>();
    // Added in v1: absent in older reports.
    if (auto a = j.find("source"); a != j.end() && !a->is_null()) d.source = a->get<std::string>();
    d.threshold_needed_pct = noise_read_num(j, "threshold_needed_pct");
    return d;
}

namespace {

// Priority among sources: the first is the cheapest to act on.
constexpr std::string_view source_order[] = {source_between_runs, source_bimodal, source_drift, source_near_threshold,
                                             source_executions};

std::string_view source_phrase(std::string_view s)
{
    if (s == source_between_runs) return "the runs were measured apart, so the spread is between sessions";
    if (s == source_bimodal) return "the samples form two groups (the machine switching speeds)";
    if (s == source_drift) return "the machine's speed drifted during the run";
    if (s == source_near_threshold) return "the shift is about the size of the threshold";
    return "the spread is between executions (each sample is one process)";
}

} // namespace

std::optional<decide_advice> decide_report(const report& r)
{
    decide_advice d;
    std::size_t counts[std::size(source_order)] = {};
    std::size_t above_max_cov = 0; // fixed-N counters whose CoV exceeds their max_cov
    bool every_repetitions = true, every_threshold = true;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            if (!c.gated || (c.state != status::inconclusive && c.state != status::insufficient)) continue;
            ++d.counters;
            d.sequential = d.sequential || c.sequential.has_value();
            const double cov = larger_cov(c);
            if (!c.sequential && c.state == status::inconclusive && cov > r.rules.resolve(b.name, c.name).max_cov)
                ++above_max_cov;
            if (!c.noise) {
                every_repetitions = every_threshold = false;
                continue;
            }
            for (std::size_t i = 0; i < std::size(source_order); ++i) counts[i] += c.noise->source == source_order[i];
            if (c.noise->repetitions_needed) {
                d.repetitions = std::max(d.repetitions.value_or(0), *c.noise->repetitions_needed);
            } else {
                every_repetitions = false;
            }
            if (c.noise->threshold_needed_pct) {
                d.threshold_pct = std::max(d.threshold_pct.value_or(0.0), *c.noise->threshold_needed_pct);
            } else {
                every_threshold = false;
            }
        }
    }
    if (d.counters == 0) return std::nullopt;
    if (!every_repetitions) d.repetitions.reset();
    if (!every_threshold) d.threshold_pct.reset();
    std::size_t best = std::size(source_order);
    for (std::size_t i = 0; i < std::size(source_order); ++i) {
        if (counts[i] > 0 && (best == std::size(source_order) || counts[i] > counts[best])) best = i;
    }
    if (best < std::size(source_order)) d.source = source_order[best];

    const bool one = d.counters == 1;
    const std::string them = one ? "it" : "them";
    std::string advice = fmt::format("{} gated counter{} undecided", d.counters, one ? "" : "s");
    if (!d.source.empty()) advice += fmt::format(": {}", source_phrase(d.source));
    if (above_max_cov > 0) {
        advice += fmt::format("; {} a CoV above max_cov, which more repetitions do not lower",
                              above_max_cov == d.counters ? std::string(one ? "it has" : "all have")
                                                          : fmt::format("{} of them have", above_max_cov));
    }
    const std::string reps = d.repetitions ? fmt::format("about {0} repetitions per side ({1} {0})", *d.repetitions,
                                                         d.sequential ? "--max-repetitions" : "-r")
                                           : std::string();
    std::vector<std::string> fixes;
    if (d.source == source_between_runs) {
        fixes.push_back(fmt::format("measure baseline and candidate in one perfgate run (more repetitions do not "
                                    "lower the spread between sessions)"));
    } else if (d.source == source_bimodal || d.source == source_drift) {
        fixes.push_back(fmt::format("pin the benchmark to quiet CPUs (--cpus; perfgate check-env says what moves){}",
                                    reps.empty() ? std::string() : ", then " + reps));
    } else if (!reps.empty()) {
        fixes.push_back(reps + " would decide " + them + " at this noise");
    } else {
        fixes.push_back("no repetition count would (too noisy for the threshold)");
    }
    if (d.source != source_between_runs)
        fixes.push_back("--backend callgrind (exact instruction counts, a proxy for time)");
    if (d.threshold_pct) fixes.push_back(fmt::format("threshold_pct {} would decide {} now", *d.threshold_pct, them));
    advice += ". Cheapest fix: " + fixes.front();
    for (std::size_t i = 1; i < fixes.size(); ++i) advice += (i == 1 ? "; or " : ", or ") + fixes[i];
    d.advice = std::move(advice);
    return d;
}

nlohmann::json decide_to_json(const decide_advice& d)
{
    return {{"counters", d.counters},
            {"source", d.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.source)},
            {"repetitions", d.repetitions ? nlohmann::json(*d.repetitions) : nlohmann::json(nullptr)},
            {"threshold_pct", noise_num(d.threshold_pct)},
            {"advice", d.advice}};
}

} // namespace perfgate::gate
