#include "gate/qualify.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "stats/proportions.hpp"

namespace perfgate::gate {

void tally(qualify_point& point, const report& gate_report)
{
    ++point.gates;
    for (const auto& b : gate_report.benchmarks) {
        for (const auto& c : b.counters) {
            if (!c.gated || c.state == status::unsupported) continue;
            auto& t = point.counters[c.name];
            ++t.gates;
            if (c.state == status::regression) ++t.regressions;
            if (c.state == status::inconclusive) ++t.inconclusive;
            t.repetitions += c.baseline.n;
        }
    }
}

qualify_rate rate_of(std::size_t k, std::size_t n)
{
    qualify_rate r;
    r.k = k;
    r.n = n;
    if (n == 0) return r;
    const auto w = stats::wilson_interval(static_cast<double>(k), static_cast<double>(n), qualify_z);
    r.value = static_cast<double>(k) / static_cast<double>(n);
    r.lo = w.lo;
    r.hi = w.hi;
    return r;
}

namespace {

// The interval lies wholly on one side of `goal`.
bool decided_against(const qualify_rate& r, double goal) { return r.lo >= goal || r.hi < goal; }

std::string pct(double v) { return fmt::format("{:.3g}%", v); }

} // namespace

bool settled(const std::vector<qualify_point>& points, const std::vector<std::string>& counters, bool deterministic)
{
    if (points.empty()) return false;
    for (const auto& p : points) {
        if (p.gates == 0) return false;
        if (deterministic) continue;
        if (p.gates < qualify_min_gates) return false;
        if (p.requested_pct == 0) continue; // the A/A point runs as long as the others
        for (const auto& name : counters) {
            const auto t = p.counters.find(name);
            if (t == p.counters.end()) continue;
            const auto r = rate_of(t->second.regressions, t->second.gates);
            if (!decided_against(r, qualify_power_80) || !decided_against(r, qualify_power_95)) return false;
        }
    }
    return true;
}

namespace {

// The smallest slowdown whose rate, and every larger one's, is at least goal.
std::optional<slowdown_row> smallest_caught(const std::vector<slowdown_row>& rows, double goal)
{
    std::optional<slowdown_row> found;
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
        if (it->caught.n == 0 || it->caught.value < goal) break;
        found = *it;
    }
    return found;
}

std::string recommendation_of(const counter_qualification& q)
{
    if (q.slowdowns.empty()) return "no slowdown was measured: give --slowdowns and a longer --time-budget";
    std::string out;
    if (q.deterministic) {
        out = fmt::format("deterministic: one execution per side sees any change of {} or more exactly "
                          "(the threshold); {}",
                          pct(q.threshold_pct),
                          q.detects_95 ? fmt::format("the smallest slowdown tried that it catches is {}",
                                                     pct(q.detects_95->injected_pct))
                                       : std::string("no slowdown tried reached the threshold"));
    } else if (q.detects_95) {
        out = fmt::format("catches {} in {:.0f}% of gates at {:.0f} repetitions per side (threshold {})",
                          pct(q.detects_95->injected_pct), q.detects_95->caught.value * 100, q.detects_95->repetitions,
                          pct(q.threshold_pct));
        if (q.detects_80 && q.detects_80->injected_pct < q.detects_95->injected_pct) {
            out += fmt::format(", and {} in {:.0f}%", pct(q.detects_80->injected_pct),
                               q.detects_80->caught.value * 100);
        }
    } else if (q.detects_80) {
        out = fmt::format("catches {} in {:.0f}% of gates at {:.0f} repetitions per side (threshold {}); no "
                          "slowdown tried was caught in 95%: more repetitions (--budget) or a quieter runner",
                          pct(q.detects_80->injected_pct), q.detects_80->caught.value * 100, q.detects_80->repetitions,
                          pct(q.threshold_pct));
    } else {
        out = fmt::format("this runner cannot gate {} below {} (the largest slowdown tried, caught in {:.0f}% of "
                          "gates): more repetitions (--budget), or --backend callgrind to see changes of the "
                          "threshold exactly",
                          q.counter, pct(q.slowdowns.back().injected_pct), q.slowdowns.back().caught.value * 100);
    }
    if (!q.deterministic && q.false_fails.n > 0 && q.false_fails.lo > q.alpha) {
        out += fmt::format("; A/A gates failed in {:.0f}% (interval above alpha {}): raise threshold_pct above "
                           "this runner's A/A shifts or measure quieter",
                           q.false_fails.value * 100, q.alpha);
    }
    if (!q.reaches_threshold && q.detects_80) {
        out += fmt::format("; the threshold {} is out of reach: a gate here misses slowdowns below {} in more "
                           "than 20% of gates",
                           pct(q.threshold_pct), pct(q.detects_80->injected_pct));
    }
    return out;
}

} // namespace

counter_qualification summarize(std::string_view counter, const std::vector<qualify_point>& points, bool deterministic,
                                double threshold_pct, double alpha)
{
    counter_qualification q;
    q.counter = std::string(counter);
    q.deterministic = deterministic;
    q.threshold_pct = threshold_pct;
    q.alpha = alpha;
    for (const auto& p : points) {
        const auto t = p.counters.find(counter);
        if (t == p.counters.end()) continue;
        const qualify_tally& c = t->second;
        const double reps = c.gates ? static_cast<double>(c.repetitions) / static_cast<double>(c.gates) : 0;
        if (p.requested_pct == 0) {
            q.false_fails = rate_of(c.regressions, c.gates);
            q.inconclusive_share = c.gates ? static_cast<double>(c.inconclusive) / static_cast<double>(c.gates) : 0;
            q.repetitions = reps;
            continue;
        }
        q.slowdowns.push_back({p.requested_pct, c.injected_pct, rate_of(c.regressions, c.gates), c.inconclusive, reps});
    }
    q.detects_80 = smallest_caught(q.slowdowns, qualify_power_80);
    q.detects_95 = smallest_caught(q.slowdowns, qualify_power_95);
    q.reaches_threshold = deterministic ||
                          (q.detects_80 && q.detects_80->injected_pct <= qualify_reach_factor * threshold_pct);
    q.recommendation = recommendation_of(q);
    return q;
}

} // namespace perfgate::gate
