#include "gate/prior_noise.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "stats/mde.hpp"

namespace perfgate::gate {

namespace {

double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The smallest look of the rule's grid (min, min + block, ...) at or above n.
std::size_t look_at_or_above(const sequential_rule& rule, std::size_t n)
{
    if (n <= rule.min_repetitions) return rule.min_repetitions;
    const std::size_t blocks = (n - rule.min_repetitions + rule.block - 1) / rule.block;
    return std::min(rule.min_repetitions + blocks * rule.block, rule.max_repetitions);
}

} // namespace

std::optional<prior_noise> prior_noise_of(const std::string& benchmark, const std::string& counter,
                                          const std::vector<model::history_point>& points, double threshold_pct,
                                          double alpha)
{
    std::vector<double> covs;
    for (const auto& p : points) {
        if (p.cov && *p.cov >= 0) covs.push_back(*p.cov);
    }
    if (covs.size() < min_prior_runs) return std::nullopt;
    prior_noise prior{benchmark, counter, median_of(covs), covs.size(), threshold_pct, std::nullopt};
    if (prior.cov == 0) {
        prior.repetitions_needed = 2; // no noise: the smallest sample decides
    } else {
        // On the unit scale: sd = CoV, centre 1.
        prior.repetitions_needed = stats::repetitions_for_mde(prior.cov, prior.cov, 1.0, threshold_pct, alpha,
                                                              prior_repetitions_cap);
    }
    return prior;
}

sequential_rule rule_from_priors(const sequential_rule& rule, const std::vector<prior_noise>& priors)
{
    // Per benchmark, its noisiest counter; nullopt (beyond the cap) is the noisiest.
    std::map<std::string, std::size_t> needed;
    for (const auto& p : priors) {
        const std::size_t n = p.repetitions_needed.value_or(prior_repetitions_cap + 1);
        auto [it, fresh] = needed.try_emplace(p.benchmark, n);
        if (!fresh) it->second = std::max(it->second, n);
    }
    if (needed.empty()) return rule;
    std::size_t least = needed.begin()->second;
    for (const auto& [name, n] : needed) least = std::min(least, n);
    sequential_rule out = rule;
    // A change of twice the threshold needs a quarter of the sample.
    out.min_repetitions = look_at_or_above(rule, (least + 3) / 4);
    return out;
}

std::vector<std::string> prior_warnings(const std::vector<prior_noise>& priors, const sequential_rule& rule)
{
    std::vector<std::string> out;
    for (const auto& p : priors) {
        if (p.repetitions_needed && *p.repetitions_needed <= rule.max_repetitions) continue;
        const std::string count = p.repetitions_needed ? fmt::format("about {}", *p.repetitions_needed)
                                                       : fmt::format("more than {}", prior_repetitions_cap);
        out.push_back(fmt::format(
            "{}: {} has had a CoV of {:.1f}% on this testbed (median of its last {} runs): deciding +-{}% needs {} "
            "repetitions per side, more than --max-repetitions {}; expect inconclusive. Raise --max-repetitions "
            "(and --budget), or count instructions deterministically with --backend callgrind",
            p.benchmark, p.counter, p.cov * 100, p.runs, p.threshold_pct, count, rule.max_repetitions));
    }
    return out;
}

} // namespace perfgate::gate
