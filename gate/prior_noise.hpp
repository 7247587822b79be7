// What a testbed's history says about a benchmark's noise before it is
// measured: `perfgate run` with sequential sampling reads the last runs of
// each benchmark's gated counters on this testbed (from its store or
// server) and uses their noise for the plan and for an early warning.
//
// - The noise of a counter is the median of the per-run CoVs of its last
//   runs there (each run's own repetitions; between-run drift is the change
//   points' business, not this one's). At least min_prior_runs runs.
// - repetitions_needed: the fixed-N sample size per side at which the
//   gate's minimum detectable effect (stats/mde.hpp) reaches the threshold
//   at that CoV, at the counter's share alpha / m of the gate's alpha (as
//   the sequential test spends it). A sequential plan needs a little more
//   (stats/SEQUENTIAL.md: about 5% with HSD(-4)).
// - The first look: the "unchanged" verdict, the common one, needs about
//   repetitions_needed per side at any look, and a change of k times the
//   threshold about repetitions_needed / k^2. So the plan's first look is put
//   where a change of twice the threshold becomes decidable at the run's
//   least noisy benchmark, repetitions_needed / 4 rounded up to the block
//   (at least the rule's min_repetitions; at most its max). Looks before it
//   could only decide changes of more than twice the threshold, which the
//   first look then decides. A quiet testbed keeps the rule's first look.
// - The warning: when repetitions_needed exceeds the plan's maximum, the run
//   will most likely end inconclusive at the threshold: said before
//   measuring, with the count and the alternatives.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gate/policy.hpp"
#include "model/run.hpp"

namespace perfgate::gate {

inline constexpr std::size_t min_prior_runs = 3;      // fewer: no prior
inline constexpr std::size_t prior_history_runs = 20; // the last this many runs
inline constexpr std::size_t prior_repetitions_cap = 10000;

struct prior_noise {
    std::string benchmark, counter;
    double cov = 0;       // median per-run CoV, a fraction
    std::size_t runs = 0; // runs it is the median of
    double threshold_pct = 0;
    // Per side, fixed N; nullopt: more than prior_repetitions_cap.
    std::optional<std::size_t> repetitions_needed;
};

// The prior of one counter from its history points on one testbed (any
// order); nullopt with fewer than min_prior_runs points that have a CoV.
// alpha is the counter's share of the gate's alpha.
std::optional<prior_noise> prior_noise_of(const std::string& benchmark, const std::string& counter,
                                          const std::vector<model::history_point>& points, double threshold_pct,
                                          double alpha);

// The sequential rule with its first look moved as above (min_repetitions
// only; block, max and spending unchanged). `priors` holds every prior of
// the run; a benchmark is counted by its noisiest counter (all of its gated
// counters must be decided), the run by its least noisy benchmark.
sequential_rule rule_from_priors(const sequential_rule& rule, const std::vector<prior_noise>& priors);

// The warnings: one per counter whose repetitions_needed exceeds
// rule.max_repetitions (or the cap), naming benchmark, counter, CoV, runs,
// the count and what to do.
std::vector<std::string> prior_warnings(const std::vector<prior_noise>& priors, const sequential_rule& rule);

} // namespace perfgate::gate
