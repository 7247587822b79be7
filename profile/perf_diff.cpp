#include "profile/perf_diff.hpp"

#include "model/error.hpp"
#include "stats/mde.hpp"
#include "stats/proportions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace perfgate::profile {

namespace {

using self_map = std::map<std::string, std::uint64_t, std::less<>>;

struct side_counts {
    std::vector<self_map> executions;
    std::vector<double> totals; // samples of each execution
    self_map pooled;
    std::uint64_t total = 0;
};

side_counts count_side(const std::vector<folded_stacks>& executions, const char* side)
{
    side_counts out;
    for (const auto& f : executions) {
        out.executions.push_back(self_samples(f));
        out.totals.push_back(static_cast<double>(f.total));
        out.total += f.total;
        for (const auto& [name, n] : out.executions.back()) out.pooled[name] += n;
    }
    if (out.total == 0) {
        throw error(errors::profile_no_samples,
                    fmt::format("the {} side's profile has no samples ({} execution(s) recorded): the program ran "
                                "too briefly for the sampling rate, or perf recorded nothing",
                                side, executions.size()));
    }
    return out;
}

std::uint64_t count_of(const self_map& m, const std::string& name)
{
    auto it = m.find(name);
    return it == m.end() ? 0 : it->second;
}

// One function's counts per execution, for the dispersion.
std::vector<stats::execution_count> per_execution(const side_counts& side, const std::string& name)
{
    std::vector<stats::execution_count> out;
    for (std::size_t i = 0; i < side.executions.size(); ++i) {
        if (side.totals[i] > 0)
            out.push_back({static_cast<double>(count_of(side.executions[i], name)), side.totals[i]});
    }
    return out;
}

self_sample_change change_of(const std::string& name, const side_counts& b, const side_counts& a, double z)
{
    self_sample_change c;
    c.name = name;
    c.before = count_of(b.pooled, name);
    c.after = count_of(a.pooled, name);
    const double nb = static_cast<double>(b.total), na = static_cast<double>(a.total);
    c.share_before = static_cast<double>(c.before) / nb;
    c.share_after = static_cast<double>(c.after) / na;
    c.change_pp = (c.share_after - c.share_before) * 100;
    // Overdispersed counts: the binomial interval on the effective sample
    // sizes n / phi (the counts scaled alike keep the shares).
    c.dispersion = stats::pearson_dispersion({per_execution(b, name), per_execution(a, name)});
    const double phi = c.dispersion;
    const auto ci = stats::newcombe_difference(static_cast<double>(c.before) / phi, nb / phi,
                                               static_cast<double>(c.after) / phi, na / phi, z);
    c.lo_pp = ci.lo * 100;
    c.hi_pp = ci.hi * 100;
    c.significant = ci.lo > 0 || ci.hi < 0;
    return c;
}

} // namespace

self_map self_samples(const folded_stacks& folded)
{
    self_map out;
    for (const auto& [stack, n] : folded.stacks) {
        const auto semi = stack.rfind(';');
        out[semi == std::string::npos ? stack : stack.substr(semi + 1)] += n;
    }
    return out;
}

self_sample_diff diff_self_samples(const std::vector<folded_stacks>& before, const std::vector<folded_stacks>& after,
                                   std::size_t top_n, double alpha)
{
    const auto b = count_side(before, "baseline");
    const auto a = count_side(after, "candidate");
    std::set<std::string> names;
    for (const auto& [name, n] : b.pooled) names.insert(name);
    for (const auto& [name, n] : a.pooled) names.insert(name);

    self_sample_diff out;
    out.samples_before = b.total;
    out.samples_after = a.total;
    out.functions = names.size();
    // Bonferroni over every function compared, not only the listed ones: the
    // top rows are chosen by the same data, so the whole family counts.
    out.z = stats::normal_quantile(1 - alpha / (2 * static_cast<double>(out.functions)));

    std::vector<self_sample_change> rows;
    double abs_delta_sum = 0;
    for (const auto& name : names) {
        auto c = change_of(name, b, a, out.z);
        abs_delta_sum += std::fabs(static_cast<double>(c.after) - static_cast<double>(c.before));
        if (c.change_pp != 0) rows.push_back(std::move(c));
    }
    for (auto& c : rows) {
        if (abs_delta_sum > 0)
            c.share_of_change = (static_cast<double>(c.after) - static_cast<double>(c.before)) / abs_delta_sum;
    }
    std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
        const double ax = std::fabs(x.change_pp), ay = std::fabs(y.change_pp);
        return ax != ay ? ax > ay : x.name < y.name;
    });
    if (rows.size() > top_n) rows.resize(top_n);
    out.top = std::move(rows);
    return out;
}

} // namespace perfgate::profile
