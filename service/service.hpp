// The gate service: the one facade that both the CLI's local mode and the
// HTTP server call, so a verdict is the same on a laptop and on a server.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "schema/store.hpp"

namespace perfgate::gate {

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
    model::ingest_result ingest(const model::ingest_request& req);
    // For the runner, which already holds samples (incl. wall-time etc.).
    model::ingest_result ingest_run(model::run_record run);

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

    // Projects and tokens. authorize: the token belongs to `project`, else
    // "auth.bad_token" (unknown or revoked) or "auth.forbidden" (another
    // project's). require_project: "project.not_found" unless it exists
    // (and "ingest.bad_field" for a malformed name).
    void authorize(std::string_view token, const std::string& project) const;
    void require_project(const std::string& project) const;
    [[nodiscard]] bool project_exists(const std::string& project) const;
    void ensure_project(const std::string& project);
    // A new token of the project (created if needed), shown once.
    std::string create_token(const std::string& project, std::string_view name);

    [[nodiscard]] std::optional<report> load_comparison(const std::string& project, std::int64_t id) const;
    // Validates the query's names ("ingest.bad_field"); unknown names give
    // no points.
    [[nodiscard]] std::vector<model::history_point> history(const model::history_query& q) const;
    [[nodiscard]] std::vector<model::benchmark_info> benchmarks(const std::string& project) const;

    [[nodiscard]] std::int64_t store_size_bytes() const;

private:
    // Reports this service stored or found by request key, most recently
    // used first (see service.cpp). Shared by copies of the service.
    struct recent_comparisons;

    store::store& db_;
    std::shared_ptr<recent_comparisons> recent_;
};

} // namespace perfgate::gate
