// The report of `perfgate qualify` (docs/cli.md#perfgate-qualify): its
// types and its text, JSON ("perfgate.qualify/v1") and markdown renderings.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/output.hpp"
#include "gate/qualify.hpp"

namespace perfgate::cli {

// How the injected work was sized on one counter: its median cost per
// execution in the first A/A gate and the spin loop's cost per iteration
// (calibration gate), in the counter's unit.
struct calibration_row {
    std::string counter, unit;
    double median = 0;
    double per_iteration = 0;
};

struct qualify_result {
    std::string benchmark, backend, testbed;
    std::string testbed_fingerprint; // model::testbed_info::fingerprint, the history's key of this machine
    std::string date;                // ISO 8601, when the qualification finished
    std::string calibrated_on;       // the counter the slowdowns are sized on
    std::vector<double> slowdowns;   // requested, % of calibrated_on's median
    std::vector<calibration_row> calibration;
    std::vector<gate::counter_qualification> counters;
    std::size_t gates = 0; // qualification gates run (the calibration gate not counted)
    double elapsed_s = 0, time_budget_s = 0;
    // "settled" (the intervals are tight), "gates" (--gates reached), "time
    // budget" or "interrupted".
    std::string stopped;
    std::vector<std::string> warnings;
};

nlohmann::json to_json(const qualify_result& r);
std::string render_qualify(const qualify_result& r, report_format format);

} // namespace perfgate::cli
