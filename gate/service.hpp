// The gate service: the one facade that both the CLI's local mode and the
// HTTP server call, so a verdict is the same on a laptop and on a server.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "schema/store.hpp"

namespace perfgate::gate {

struct ingest_request {
    std::string project, benchmark = "default", role, git_sha, branch;
    std::optional<std::int64_t> pr;
    store::testbed_info testbed;
    std::string backend = "perf";
    std::string environment_json = "{}";
    std::string perf_csv;          // raw perf stat output (-o --append blocks)
    std::string source = "upload"; // names the input in error messages
};

struct ingest_result {
    std::int64_t run_id = 0;
    std::size_t samples = 0;       // values stored (absent ones not counted)
    std::size_t counters = 0;
    std::vector<std::string> warnings;
};

struct comparison {
    std::int64_t id = 0;
    report result;
    // to_json(result) with comparison_id, serialised once when the report is
    // computed or first loaded; the server answers with it as is. Set by
    // service::compare, never null there.
    std::shared_ptr<const std::string> json;
};

// The key a comparison is stored under: hex SHA-256 of a canonical encoding
// of the project, the (baseline, candidate) pairs in order and the policy
// (to_json(rules).dump()), prefixed with a format version.
std::string comparison_request_key(const std::string& project,
                                   const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                   const policy& rules);

class service {
public:
    explicit service(store::store& db);

    // Validates (role, names), parses perf_csv, stores one run. Nothing is
    // stored on error. Errors: "ingest.bad_csv", "ingest.bad_field".
    ingest_result ingest(const ingest_request& req);
    // For the runner, which already holds samples (incl. wall-time etc.).
    ingest_result ingest_run(store::run_record run);

    // Compares pairs of (baseline run, candidate run) of one project as one
    // gate (p-values adjusted across all of them), fills in history z-scores
    // from the baseline branch, stores and returns the report.
    // Idempotent: the same (project, pairs, policy) again returns the stored
    // report and comparison id without computing or storing anything
    // (comparison_request_key, store::find_comparison).
    // Errors: "compare.not_found", "compare.mismatch".
    comparison compare(const std::string& project,
                       const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                       const policy& rules);

    [[nodiscard]] std::optional<report> load_comparison(const std::string& project, std::int64_t id) const;
    [[nodiscard]] std::vector<store::history_point> history(const store::history_query& q) const;
    [[nodiscard]] std::vector<store::benchmark_info> benchmarks(const std::string& project) const;

    store::store& db() { return db_; }

private:
    // Reports this service stored or found by request key, most recently
    // used first (see service.cpp). Shared by copies of the service.
    struct recent_comparisons;

    store::store& db_;
    std::shared_ptr<recent_comparisons> recent_;
};

} // namespace perfgate::gate
