// The report of `perfgate bisect` (docs/bisect.md#the-report): its types and
// its text, JSON ("perfgate.bisect/v1") and markdown renderings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/output.hpp"
#include "gate/bisect.hpp"
#include "gate/report.hpp"
#include "model/alert.hpp"

namespace perfgate::cli {

struct commit_info {
    std::string sha, subject, author;
};

// One counter's change from a culprit's parent to the culprit.
struct culprit_effect {
    std::string counter, unit;
    bool gated = false;
    std::string status; // the gate's: regression, improvement, unchanged, inconclusive, ...
    std::optional<double> before, after, delta_pct;
    std::optional<std::pair<double, double>> ci_pct; // interval of the shift, % of before
};

struct culprit_report {
    commit_info commit;
    std::string parent; // the commit before it in the range (its first parent along --first-parent)
    double share = 0;   // of the range's effect, as the search measured it
    std::vector<culprit_effect> effects;
    std::optional<gate::attribution> attribution;
};

// A range the search ended without one commit: the change lies in (lo, hi].
struct open_range_report {
    commit_info lo, hi;
    std::size_t commits = 0;
    std::string why; // "undecided" or "every commit inside was skipped"
};

struct skipped_commit {
    commit_info commit;
    std::string why;
};

struct step_report {
    std::string lo, commit, hi, decision;
    gate::shift_reading from_good, to_bad;
    double effect = 0;
    int repetitions = 0;
    std::string why;
};

struct bisect_result {
    std::string status; // "found", "undecided" or "no_change"
    commit_info good, bad;
    std::string backend, counter;
    std::size_t commits = 0; // in the range, bad included
    gate::shift_reading effect;
    std::vector<culprit_report> culprits;
    std::vector<open_range_report> open;
    std::vector<skipped_commit> skipped;
    std::vector<step_report> steps;
    std::size_t builds = 0, measured_commits = 0, executions = 0;
    std::vector<std::string> warnings;
    std::optional<std::int64_t> alert; // --alert: the alert whose range this is
};

nlohmann::json to_json(const bisect_result& r);
// A step's interval as JSON {estimate, lower, upper} (the report and the
// state file write it alike), and a sha as the reports show it (12 digits).
nlohmann::json reading_json(const gate::shift_reading& r);
std::string short_sha(const std::string& sha);
std::string render_bisect(const bisect_result& r, report_format format);
// What is stored on the alert (PUT .../alerts/{id}/culprit): the status, the
// range, the counts, each culprit with its gated counters' effects, and the
// open ranges and skipped commits as lines of `detail`; texts cleaned and
// cut to the server's limits (model/alert.hpp).
model::alert_culprit culprit_of(const bisect_result& r);

} // namespace perfgate::cli
