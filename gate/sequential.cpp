#include "gate/sequential.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

namespace perfgate::gate {

namespace {

// Plans by (rule, alpha, end look): a gate with a handful of gated counters
// and one rule needs one or two; the bound keeps a server that receives many
// different policies from growing without end.
constexpr std::size_t max_cached_plans = 256;

using plan_key = std::tuple<std::size_t, std::size_t, std::size_t, int, double, std::size_t>;

struct plan_cache {
    std::mutex mutex;
    std::map<plan_key, std::shared_ptr<const stats::sequential_plan>> plans;
};

plan_cache& cache()
{
    static plan_cache c;
    return c;
}

constexpr std::size_t no_end = static_cast<std::size_t>(-1);

} // namespace

std::shared_ptr<const stats::sequential_plan> sequential_plan_for(const sequential_rule& rule, double alpha,
                                                                  std::optional<std::size_t> end_look)
{
    const plan_key key{
        rule.min_repetitions,     rule.block, rule.max_repetitions, static_cast<int>(rule.spending), alpha,
        end_look.value_or(no_end)};
    auto& c = cache();
    {
        std::lock_guard lock(c.mutex);
        if (auto it = c.plans.find(key); it != c.plans.end()) return it->second;
    }
    // Computed outside the lock: two threads may both compute a new plan;
    // both results are the same.
    std::shared_ptr<const stats::sequential_plan> plan;
    if (end_look) {
        plan = std::make_shared<const stats::sequential_plan>(sequential_plan_for(rule, alpha)->ending_at(*end_look));
    } else {
        plan = std::make_shared<const stats::sequential_plan>(alpha, rule.min_repetitions, rule.max_repetitions,
                                                              rule.block, rule.spending);
    }
    std::lock_guard lock(c.mutex);
    if (c.plans.size() >= max_cached_plans) c.plans.clear();
    return c.plans.emplace(key, std::move(plan)).first->second;
}

std::optional<sequential_replay> replay_looks(const sequential_rule& rule, double alpha, std::span<const double> b,
                                              std::span<const double> c, double threshold_pct,
                                              capture::better direction, bool stopped,
                                              std::optional<double> equivalence_alpha)
{
    const std::size_t n = std::min(b.size(), c.size());
    if (n < rule.min_repetitions) return std::nullopt;
    const double eq_alpha = equivalence_alpha.value_or(alpha);
    const auto plan = sequential_plan_for(rule, alpha);
    const auto equivalence = sequential_plan_for(rule, eq_alpha);
    const auto worse = direction == capture::better::lower ? stats::worse_if::higher : stats::worse_if::lower;
    std::size_t reached = 0;
    while (reached + 1 < plan->looks() && plan->look_n(reached + 1) <= n) ++reached;

    auto look = [&](const stats::sequential_plan& p, const stats::sequential_plan& eq, std::size_t k) {
        const std::size_t at = p.look_n(k);
        return stats::sequential_look(p, eq, k, b.first(at), c.first(at), threshold_pct, worse);
    };
    sequential_replay out;
    out.looks = plan->looks();
    for (std::size_t k = 0; k <= reached; ++k) {
        out.result = look(*plan, *equivalence, k);
        out.n = plan->look_n(k);
        if (out.result.decision != stats::sequential_decision::continue_sampling) return out;
    }
    if (stopped && !out.result.final_look) {
        // Both plans end there: each spends what is left of its alpha.
        const auto cut = sequential_plan_for(rule, alpha, reached);
        const auto cut_equivalence = sequential_plan_for(rule, eq_alpha, reached);
        out.result = look(*cut, *cut_equivalence, reached);
        out.looks = cut->looks();
        out.cut = true;
    }
    return out;
}

} // namespace perfgate::gate
