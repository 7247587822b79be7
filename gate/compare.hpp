// compare: baseline samples vs candidate samples under a policy -> report.
// The statistical rules are design.md §3; the order of statuses is
// unsupported, insufficient, regression/improvement, inconclusive, unchanged.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "gate/samples.hpp"

namespace perfgate::gate {

// Baseline-branch history for the z-score: the last K run medians of
// (benchmark, counter), oldest first. May return fewer than history_min points.
using history_fn = std::function<std::vector<double>(std::string_view benchmark,
                                                      std::string_view counter)>;

report compare(const sample_set& baseline, const sample_set& candidate, const policy& rules,
               const history_fn& history = {});

} // namespace perfgate::gate
