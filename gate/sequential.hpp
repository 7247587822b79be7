// The gate's side of sequential sampling (policy.sequential): the plan of a
// rule at a per-counter level, and one counter's looks replayed on its
// samples. The statistics are stats/sequential.hpp; compare.cpp applies
// them to the gated counters, and perfgate run asks after each block
// whether to measure another (compare.hpp, sequential_check).
//
// Replaying, not remembering: a run stores only its samples, in round
// order. A counter with n samples per side reached look k, the last look
// planned at n or fewer. Its looks 1..k are taken again on the prefixes the
// run had at each, and the first decision is the counter's. A counter still
// undecided at look k, where the plan has more looks, means the run stopped
// there for its time budget (perfgate run stops early only when every gated
// counter is decided): look k then becomes the final look and spends the
// error that is left (sequential_plan::ending_at). So the report is the same
// whoever computes it, the runner, `perfgate compare` or the server.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>

#include "capture/counters.hpp"
#include "gate/policy.hpp"
#include "stats/sequential.hpp"

namespace perfgate::gate {

// The plan of `rule` at two-sided level alpha (for one counter: the gate's
// alpha / m), ending at look `end_look` when given (ending_at). Plans are
// computed once per process and shared (tens of ms each; at most a few
// hundred kept).
std::shared_ptr<const stats::sequential_plan> sequential_plan_for(const sequential_rule& rule, double alpha,
                                                                  std::optional<std::size_t> end_look = {});

struct sequential_replay {
    stats::sequential_result result; // of the deciding look, else of the last look reached
    std::size_t looks = 0;           // looks of the plan that was applied (the cut one when cut)
    std::size_t n = 0;               // repetitions per side at result.look
    bool cut = false;                // undecided when the run stopped: that look was made final
};

// Replays the looks a counter's samples reached. b and c in round order.
// stopped: the samples are all the run has (compare), so an undecided
// counter before the plan's last look is cut there; false while the run is
// still deciding whether to go on (perfgate run). nullopt when a side has
// fewer than rule.min_repetitions samples (no look reached).
// alpha: the counter's level for regression and improvement (the gate's
// alpha / m). equivalence_alpha: the level of its equivalence test, the
// repeated confidence interval that decides "unchanged" (docs/statistics.md
// "Equivalence": the gate's alpha, not divided by m); nullopt: alpha.
std::optional<sequential_replay> replay_looks(const sequential_rule& rule, double alpha, std::span<const double> b,
                                              std::span<const double> c, double threshold_pct,
                                              capture::better direction, bool stopped,
                                              std::optional<double> equivalence_alpha = std::nullopt);

} // namespace perfgate::gate
