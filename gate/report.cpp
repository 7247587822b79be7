#include "gate/report.hpp"

#include <algorithm>
#include <cmath>

namespace perfgate::gate {

std::size_t report::count(status s) const
{
    std::size_t n = 0;
    for (const auto& b : benchmarks) {
        for (const auto& c : b.counters) n += c.gated && c.state == s;
    }
    return n;
}

bool is_suite(const report& r)
{
    return r.benchmarks.size() + r.added.size() + r.removed.size() + r.failed.size() >= 2;
}

suite_counts count_benchmarks(const report& r)
{
    suite_counts n;
    n.compared = r.benchmarks.size();
    for (const auto& b : r.benchmarks) {
        if (b.result == verdict::fail) {
            ++n.regressions;
        } else if (b.result == verdict::inconclusive) {
            ++n.inconclusive;
        } else {
            const bool improved = std::any_of(b.counters.begin(), b.counters.end(), [](const counter_report& c) {
                return c.gated && c.state == status::improvement;
            });
            ++(improved ? n.improvements : n.unchanged);
        }
    }
    n.added = r.added.size();
    n.removed = r.removed.size();
    n.failed = r.failed.size();
    return n;
}

namespace {
// The fewest ratios an overall geometric mean is given for: of two
// benchmarks it is only the midpoint of their two ratios, which the report
// already shows, in a row a reader takes for a suite-wide figure.
constexpr std::size_t overall_geomean_min_benchmarks = 3;
} // namespace

std::vector<overall_geomean> overall_geomeans(const report& r)
{
    struct sum {
        overall_geomean row;
        double log_sum = 0;
    };
    std::vector<sum> sums;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            if (!c.gated || !c.baseline.median || !c.candidate.median) continue;
            const double base = *c.baseline.median, cand = *c.candidate.median;
            if (!std::isfinite(base) || !std::isfinite(cand) || base <= 0 || cand <= 0) continue;
            auto it = std::find_if(sums.begin(), sums.end(), [&](const sum& s) { return s.row.counter == c.name; });
            if (it == sums.end()) {
                it = sums.insert(sums.end(), sum{});
                it->row.counter = c.name;
                it->row.direction = c.direction;
            }
            it->log_sum += std::log(cand / base);
            ++it->row.benchmarks;
        }
    }
    std::vector<overall_geomean> out;
    for (auto& s : sums) {
        if (s.row.benchmarks < overall_geomean_min_benchmarks) continue;
        s.row.ratio = std::exp(s.log_sum / static_cast<double>(s.row.benchmarks));
        out.push_back(std::move(s.row));
    }
    return out;
}

std::string_view to_string(status s)
{
    switch (s) {
    case status::unsupported: return "unsupported";
    case status::insufficient: return "insufficient";
    case status::regression: return "regression";
    case status::improvement: return "improvement";
    case status::inconclusive: return "inconclusive";
    case status::unchanged: return "unchanged";
    }
    return "unsupported";
}

std::string_view to_string(verdict v)
{
    switch (v) {
    case verdict::pass: return "pass";
    case verdict::fail: return "fail";
    case verdict::inconclusive: return "inconclusive";
    }
    return "inconclusive";
}

std::string_view to_string(method m)
{
    switch (m) {
    case method::exact: return "exact";
    case method::asymptotic: return "asymptotic";
    case method::deterministic: return "deterministic";
    case method::welch: return "welch";
    }
    return "exact";
}

} // namespace perfgate::gate
