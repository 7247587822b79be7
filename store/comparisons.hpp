// Stored comparisons (store::store::comparisons(); store/comparisons.cpp,
// the listing in store/listing.cpp): the report JSON, stored verbatim.
#pragma once

#include "model/comparison.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfgate::store {

namespace detail {
class connection;
struct store_impl;
} // namespace detail

// The report's verdict and number of benchmarks as the caller knows them
// (service::service serialised the report from them), stored as given
// instead of being read back out of the JSON (18 KB for 10 counters:
// parsing it was a fifth of PostgreSQL's work per compare). A verdict other
// than pass / fail / inconclusive is "store.constraint".
struct report_facts {
    std::string_view verdict;
    std::int64_t benchmark_count = 0;
};

// One comparison of comparisons::insert_all: insert's arguments, with the
// facts given.
struct comparison_row {
    std::string project;
    std::int64_t baseline_run = 0;
    std::int64_t candidate_run = 0;
    std::string report_json;
    std::string request_key;
    std::string verdict;
    std::int64_t benchmark_count = 0;
};

class comparisons {
public:
    explicit comparisons(detail::store_impl& s) noexcept : impl_(&s) {}
    comparisons(const comparisons&) = delete;
    comparisons& operator=(const comparisons&) = delete;

    // "store.not_found" when the project or either run (in that project)
    // does not exist. The report's top-level "verdict" and the length of its
    // "benchmarks" array are copied into columns for listings (SQLite's JSON
    // functions; NULL when the text does not have them;
    // 006_project_settings.sql).
    std::int64_t insert(std::string_view project, std::int64_t baseline_run, std::int64_t candidate_run,
                        std::string_view report_json);
    // Idempotent comparisons (store/migrations/003_comparison_key.sql).
    // request_key identifies the inputs of a comparison (service::service uses
    // the hex SHA-256 of project, run pairs and policy). Inserting a key that
    // the project already has stores nothing and returns the existing row's
    // id, so two identical compares racing each other (threads or processes)
    // end with one row. Errors: as above, and "store.constraint" when the key
    // is not 64 lowercase hex digits. facts: see report_facts.
    std::int64_t insert(std::string_view project, std::int64_t baseline_run, std::int64_t candidate_run,
                        std::string_view report_json, std::string_view request_key,
                        const std::optional<report_facts>& facts = {});
    // Several comparisons in one write transaction: group commit, for perfgate
    // serve's committer (service/commit_queue.hpp). Returns their ids in
    // order, each what insert would return for its row (a key the store or
    // an earlier row of the batch holds gives that row's id). Rows are
    // inserted in (project, key) order, so replicas whose batches share keys
    // do not deadlock. All or nothing: an error of any row (insert's) rolls
    // the batch back and is thrown; nothing is stored.
    std::vector<std::int64_t> insert_all(std::span<const comparison_row> rows);
    // (comparison id, report JSON) stored under request_key, or nullopt.
    [[nodiscard]] std::optional<std::pair<std::int64_t, std::string>> find(std::string_view project,
                                                                           std::string_view request_key) const;
    [[nodiscard]] std::optional<std::string> load(std::string_view project, std::int64_t id) const;

    // The project's most recent comparisons, newest first (by id), at most
    // `limit`, each with its first pair's runs (model/comparison.hpp).
    // O(log n + limit): a backward range of the covering index
    // comparisons_recent (006_project_settings.sql) and two run lookups by
    // id per row; no report is read. Unknown project: empty.
    [[nodiscard]] std::vector<model::comparison_summary> recent(std::string_view project, std::size_t limit) const;

private:
    std::int64_t insert_row(std::string_view project, std::int64_t baseline_run, std::int64_t candidate_run,
                            std::string_view report_json, const std::optional<std::string>& request_key,
                            const std::optional<report_facts>& facts);
    // The row's statements on c, in the caller's write transaction.
    std::int64_t insert_on(detail::connection& c, std::string_view project, std::int64_t baseline_run,
                           std::int64_t candidate_run, std::string_view report_json,
                           const std::optional<std::string>& request_key, const std::optional<report_facts>& facts);

    detail::store_impl* impl_;
};

} // namespace perfgate::store
