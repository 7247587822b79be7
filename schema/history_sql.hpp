// The history query's SQL, private to perfgate::store (and its tests, which
// check the query plan with EXPLAIN QUERY PLAN).
//
// Three fixed variants, one per covering index of 002_history_indexes.sql
// (recreated with min and max by 005_history_minmax.sql).
// INDEXED BY pins each variant to its index: if a schema change ever made the
// index unusable, preparing the statement fails loudly instead of silently
// falling back to a scan. No variant contains text from the caller; every
// value is a bound parameter:
//   :benchmark_id :counter_id  equality, the index prefix
//   :branch                    equality (branch variants)
//   :testbed_id                equality (testbed variant)
//   :testbed                   name or fingerprint, residual filter (other variants)
//   :role                      residual filter, NULL = any
//   :since                     created_at >= :since (index range)
//   :before_run                run_id < :before_run (residual)
//   :limit
// Result columns: run_id, git_sha, branch, created_at, n, median, mean, stddev, cov,
// min, max, testbed_id, newest first.
#pragma once

#include <string_view>

namespace perfgate::store::detail {

enum class history_index {
    all,       // summaries_history: no branch filter
    branch,    // summaries_history_branch: branch = :branch
    testbed,   // summaries_history_testbed: testbed_id = :testbed_id AND branch = :branch
};

#define PERFGATE_HISTORY_SELECT                                                        \
    "SELECT run_id, git_sha, branch, created_at, n, median, mean, stddev, cov, "       \
    "min, max, testbed_id "                                                            \
    "FROM summaries INDEXED BY "
// n > 0 repeats the indexes' partial-index condition so SQLite may use them.
#define PERFGATE_HISTORY_COMMON                                                        \
    " WHERE benchmark_id = :benchmark_id AND counter_id = :counter_id AND n > 0"       \
    " AND created_at >= :since AND run_id < :before_run"                               \
    " AND (:role IS NULL OR role = :role)"
#define PERFGATE_HISTORY_TESTBED_RESIDUAL                                              \
    " AND (:testbed IS NULL OR testbed_id IN"                                          \
    " (SELECT id FROM testbeds WHERE fingerprint = :testbed OR name = :testbed))"
#define PERFGATE_HISTORY_ORDER " ORDER BY created_at DESC, run_id DESC LIMIT :limit"

inline constexpr std::string_view history_sql_all =
    PERFGATE_HISTORY_SELECT "summaries_history" PERFGATE_HISTORY_COMMON
    PERFGATE_HISTORY_TESTBED_RESIDUAL PERFGATE_HISTORY_ORDER;

inline constexpr std::string_view history_sql_branch =
    PERFGATE_HISTORY_SELECT "summaries_history_branch" PERFGATE_HISTORY_COMMON
    " AND branch = :branch" PERFGATE_HISTORY_TESTBED_RESIDUAL PERFGATE_HISTORY_ORDER;

inline constexpr std::string_view history_sql_testbed =
    PERFGATE_HISTORY_SELECT "summaries_history_testbed" PERFGATE_HISTORY_COMMON
    " AND branch = :branch AND testbed_id = :testbed_id" PERFGATE_HISTORY_ORDER;

#undef PERFGATE_HISTORY_SELECT
#undef PERFGATE_HISTORY_COMMON
#undef PERFGATE_HISTORY_TESTBED_RESIDUAL
#undef PERFGATE_HISTORY_ORDER

constexpr std::string_view history_sql(history_index which) noexcept
{
    switch (which) {
    case history_index::all: return history_sql_all;
    case history_index::branch: return history_sql_branch;
    case history_index::testbed: return history_sql_testbed;
    }
    return history_sql_all;
}

} // namespace perfgate::store::detail
