#include "model/qualification.hpp"

#include <algorithm>
#include <ctime>
#include <string_view>

#include <fmt/format.h>

namespace perfgate::model {

namespace {

std::string utc_date(std::int64_t unix_seconds)
{
    const auto t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    if (gmtime_r(&t, &tm) == nullptr) return "?";
    return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

// One counter over the qualified benchmarks that gate it (qualification_line).
struct counter_reach {
    std::string counter;
    bool all_deterministic = true;
    std::optional<double> threshold; // the deterministic ones' threshold
    bool thresholds_differ = false;
    std::optional<double> worst; // the largest 80% figure
    std::string worst_benchmark;
    std::size_t blind = 0; // benchmarks whose qualification caught no slowdown tried
    std::string blind_benchmark;
};

void add_reach(counter_reach& r, const std::string& benchmark, const qualified_counter& c)
{
    if (c.deterministic) {
        if (r.threshold && *r.threshold != c.threshold_pct) r.thresholds_differ = true;
        r.threshold = c.threshold_pct;
        return;
    }
    r.all_deterministic = false;
    if (!c.detects_80_pct) {
        if (r.blind++ == 0) r.blind_benchmark = benchmark;
    } else if (!r.worst || *c.detects_80_pct > *r.worst) {
        r.worst = c.detects_80_pct;
        r.worst_benchmark = benchmark;
    }
}

std::vector<counter_reach> reaches_of(const testbed_qualifications& q)
{
    std::vector<counter_reach> out;
    for (const auto& b : q.benchmarks) {
        for (const auto& c : b.counters) {
            auto it = std::find_if(out.begin(), out.end(),
                                   [&](const counter_reach& r) { return r.counter == c.counter; });
            if (it == out.end()) {
                counter_reach first;
                first.counter = c.counter;
                it = out.insert(out.end(), std::move(first));
            }
            add_reach(*it, b.benchmark, c);
        }
    }
    return out;
}

std::string reach_piece(const counter_reach& r, bool suite)
{
    if (r.all_deterministic) {
        if (r.thresholds_differ || !r.threshold)
            return fmt::format("detects any change of {} at or above its threshold (deterministic)", r.counter);
        return fmt::format("detects any change of {} at or above the {:g}% threshold (deterministic)", r.counter,
                           *r.threshold);
    }
    if (r.blind > 0) {
        if (!suite) return fmt::format("caught no slowdown of {} in 80% of gates", r.counter);
        return fmt::format("caught no slowdown of {} in 80% of gates ({}{})", r.counter, r.blind_benchmark,
                           r.blind > 1 ? fmt::format(" and {} more", r.blind - 1) : std::string());
    }
    std::string piece = fmt::format("detects \u2265 {:.3g}% of {}", *r.worst, r.counter);
    if (suite) piece += fmt::format(" (worst: {})", r.worst_benchmark);
    return piece;
}

// "qualified 2026-11-28", or "qualified 2026-11-20 to 2026-11-28" when the
// benchmarks were qualified on different days.
std::string qualified_dates(const testbed_qualifications& q)
{
    const auto [first, last] = std::minmax_element(q.benchmarks.begin(), q.benchmarks.end(),
                                                   [](const qualification& a, const qualification& b) {
                                                       return a.qualified_at < b.qualified_at;
                                                   });
    const std::string from = utc_date(first->qualified_at), to = utc_date(last->qualified_at);
    return from == to ? "qualified " + from : fmt::format("qualified {} to {}", from, to);
}

} // namespace

std::string detects_line(const qualification& q, const qualified_counter& c)
{
    const std::string date = utc_date(q.qualified_at);
    if (c.deterministic) {
        return fmt::format("this testbed detects any change of {} at or above the {:g}% threshold (deterministic, "
                           "qualified {})",
                           c.counter, c.threshold_pct, date);
    }
    if (!c.detects_80_pct) {
        return fmt::format("this testbed caught no slowdown of {} in 80% of gates (qualified {})", c.counter, date);
    }
    return fmt::format("this testbed detects \u2265 {:.3g}% of {} (qualified {})", *c.detects_80_pct, c.counter, date);
}

std::string qualification_line(const testbed_qualifications& q, std::size_t compared)
{
    auto reaches = reaches_of(q);
    if (reaches.empty()) return {};
    const bool suite = compared >= 2;
    if (!suite && q.benchmarks.size() == 1 && q.benchmarks[0].counters.size() == 1)
        return detects_line(q.benchmarks[0], q.benchmarks[0].counters[0]);
    // The counters a gate catches first, one verb for them all ("detects
    // >= 10% of a, >= 4% of b"), then the deterministic ones, then those
    // that no slowdown tried was caught on.
    const auto rank = [](const counter_reach& r) { return r.all_deterministic ? 1 : r.blind > 0 ? 2 : 0; };
    std::stable_sort(reaches.begin(), reaches.end(),
                     [&](const counter_reach& a, const counter_reach& b) { return rank(a) < rank(b); });
    std::string pieces;
    bool caught_before = false;
    for (const auto& r : reaches) {
        std::string piece = reach_piece(r, suite);
        if (rank(r) == 0) {
            if (caught_before) piece.erase(0, std::string_view("detects ").size());
            caught_before = true;
        }
        pieces += (pieces.empty() ? "" : ", ") + piece;
    }
    std::string line = fmt::format("this testbed {} ({})", pieces, qualified_dates(q));
    if (suite) line = fmt::format("{} of {} benchmarks qualified: {}", q.benchmarks.size(), compared, line);
    return line;
}

std::optional<qualification_advice> advice_for(const qualification& q, const qualified_counter& c, double threshold_pct)
{
    if (c.deterministic || (c.detects_80_pct && *c.detects_80_pct <= threshold_pct)) return std::nullopt;
    qualification_advice a{q.benchmark, c.counter, threshold_pct, c.detects_80_pct, q.qualified_at, {}};
    const std::string date = utc_date(q.qualified_at);
    a.message = c.detects_80_pct
                    ? fmt::format("{} of {}: this testbed detects \u2265 {:.3g}% in 80% of gates (qualified {}), "
                                  "above the {:g}% threshold: a smaller regression is likely to pass unseen here",
                                  c.counter, q.benchmark, *c.detects_80_pct, date, threshold_pct)
                    : fmt::format("{} of {}: this testbed caught no slowdown tried in 80% of gates (qualified {}): "
                                  "the {:g}% threshold is out of its reach",
                                  c.counter, q.benchmark, date, threshold_pct);
    // Its gates judged at another threshold: what a gate at this one sees
    // was not measured (qualify's caught gates are regressions beyond it).
    if (c.threshold_pct != threshold_pct)
        a.message += fmt::format(" (qualified at a {:g}% threshold: qualify again with this policy)", c.threshold_pct);
    return a;
}

} // namespace perfgate::model
