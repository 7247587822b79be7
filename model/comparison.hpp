// A stored comparison as a listing shows it (store::comparisons::recent,
// GET /api/v1/projects/{project}/comparisons, the dashboard): its verdict and
// the commits it compared, without the report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace perfgate::model {

// Which commit a comparison's baseline build is, and by which rule
// (docs/github.md "The baseline"): the report's "baseline_ref", the compare
// request's field of the same name.
struct baseline_choice {
    std::string rule;         // "merge-base", "base-tip" or "parent"
    std::string baseline_sha; // the baseline build's commit
    std::string base_tip_sha; // the base branch's tip when the event fired; "" when not known
    std::string head_sha;     // the candidate's commit
};

struct comparison_summary {
    // One side of the comparison: a stored run and its commit.
    struct side {
        std::int64_t run_id = 0;
        std::string git_sha, branch;
    };

    std::int64_t id = 0;
    std::int64_t created_at = 0; // unix seconds
    // "pass", "fail" or "inconclusive", as the report says; nullopt when the
    // stored report names none (reports are stored verbatim).
    std::optional<std::string> verdict;
    std::optional<std::size_t> benchmarks; // benchmarks in the report; nullopt as verdict
    // The runs of the comparison's first pair: a gate of several benchmarks
    // stores the runs of its first (baseline, candidate) pair, and its pairs
    // normally share their commits (one CI job measures one commit).
    side baseline, candidate;
};

} // namespace perfgate::model
