// The history query's SQL, private to perfgate::store (and its tests, which
// check the query plan with EXPLAIN QUERY PLAN on SQLite and EXPLAIN on
// PostgreSQL).
//
// Three fixed variants, one per covering index of 002_history_indexes.sql
// (recreated with min and max by 005_history_minmax.sql; on PostgreSQL the
// same three of pg/001_initial.sql, with INCLUDE columns). On SQLite,
// INDEXED BY pins each variant to its index: if a schema change ever made the
// index unusable, preparing the statement fails loudly instead of silently
// falling back to a scan. PostgreSQL has no such clause: its planner picks
// the index (test_store checks the plans). No variant contains text from
// the caller; every value is a bound parameter:
//   :benchmark_id :counter_id  equality, the index prefix
//   :branch                    equality (branch variants)
//   :testbed_id                equality (testbed variant)
//   :testbed                   name or fingerprint, residual filter (other variants)
//   :role                      residual filter, NULL = any
//   :mainline                  residual filter, 1 = only runs that feed the
//                              branch's series (018_mainline_runs.sql), NULL = any
// (An optional filter compares first and tests for NULL second: PostgreSQL
// infers a parameter's type where it first meets it.)
//   :since                     created_at >= :since (index range)
//   :before_run                run_id < :before_run (residual)
//   :limit
// Result columns: run_id, git_sha, branch, created_at, n, median, mean, stddev, cov,
// min, max, testbed_id, role, mainline, newest first (role and mainline are in every covering index); the
// medians variants (what a compare reads: store::history_detail::medians) run_id, median, testbed_id.
#pragma once

#include "store/db.hpp"

#include <string_view>

namespace perfgate::store::detail {

enum class history_index {
    all,     // summaries_history: no branch filter
    branch,  // summaries_history_branch: branch = :branch
    testbed, // summaries_history_testbed: testbed_id = :testbed_id AND branch = :branch
};

// The SQL is laid out by hand.
// clang-format off
#define PERFGATE_HISTORY_FULL                                                          \
    "run_id, git_sha, branch, created_at, n, median, mean, stddev, cov, "              \
    "min, max, testbed_id, role, mainline"
#define PERFGATE_HISTORY_MEDIANS "run_id, median, testbed_id"
#define PERFGATE_HISTORY_SELECT(columns) "SELECT " columns " FROM summaries"
#define PERFGATE_INDEXED_BY(index) " INDEXED BY " index
// n > 0 repeats the indexes' partial-index condition so SQLite may use them.
#define PERFGATE_HISTORY_COMMON                                                        \
    " WHERE benchmark_id = :benchmark_id AND counter_id = :counter_id AND n > 0"       \
    " AND created_at >= :since AND run_id < :before_run"                               \
    " AND (role = :role OR :role IS NULL)"                                            \
    " AND (mainline = :mainline OR :mainline IS NULL)"
#define PERFGATE_HISTORY_TESTBED_RESIDUAL                                              \
    " AND (testbed_id IN"                                                              \
    " (SELECT id FROM testbeds WHERE fingerprint = :testbed OR name = :testbed)"       \
    " OR :testbed IS NULL)"
#define PERFGATE_HISTORY_ORDER " ORDER BY created_at DESC, run_id DESC LIMIT :limit"

#define PERFGATE_HISTORY_ALL(columns, indexed_by)                                       \
    PERFGATE_HISTORY_SELECT(columns) indexed_by PERFGATE_HISTORY_COMMON                 \
    PERFGATE_HISTORY_TESTBED_RESIDUAL PERFGATE_HISTORY_ORDER
#define PERFGATE_HISTORY_BRANCH(columns, indexed_by)                                    \
    PERFGATE_HISTORY_SELECT(columns) indexed_by PERFGATE_HISTORY_COMMON                 \
    " AND branch = :branch" PERFGATE_HISTORY_TESTBED_RESIDUAL PERFGATE_HISTORY_ORDER
#define PERFGATE_HISTORY_TESTBED(columns, indexed_by)                                   \
    PERFGATE_HISTORY_SELECT(columns) indexed_by PERFGATE_HISTORY_COMMON                 \
    " AND branch = :branch AND testbed_id = :testbed_id" PERFGATE_HISTORY_ORDER
#define PERFGATE_HISTORY_DIALECTS(variant, index, columns)                              \
    dialect_sql { variant(columns, PERFGATE_INDEXED_BY(index)), variant(columns, "") }

// [0]: every column; [1]: the medians variant (run_id, median, testbed_id).
inline constexpr dialect_sql history_sql_all[2]{
    PERFGATE_HISTORY_DIALECTS(PERFGATE_HISTORY_ALL, "summaries_history", PERFGATE_HISTORY_FULL),
    PERFGATE_HISTORY_DIALECTS(PERFGATE_HISTORY_ALL, "summaries_history", PERFGATE_HISTORY_MEDIANS),
};
inline constexpr dialect_sql history_sql_branch[2]{
    PERFGATE_HISTORY_DIALECTS(PERFGATE_HISTORY_BRANCH, "summaries_history_branch", PERFGATE_HISTORY_FULL),
    PERFGATE_HISTORY_DIALECTS(PERFGATE_HISTORY_BRANCH, "summaries_history_branch", PERFGATE_HISTORY_MEDIANS),
};
inline constexpr dialect_sql history_sql_testbed[2]{
    PERFGATE_HISTORY_DIALECTS(PERFGATE_HISTORY_TESTBED, "summaries_history_testbed", PERFGATE_HISTORY_FULL),
    PERFGATE_HISTORY_DIALECTS(PERFGATE_HISTORY_TESTBED, "summaries_history_testbed", PERFGATE_HISTORY_MEDIANS),
};

// PostgreSQL: the same three queries for several counters at once, one
// LATERAL subquery per counter of :counter_ids (a bigint[] array text,
// "{3,5,8}"), each the query above with counter_id taken from the array.
// Result columns: the array position of the counter (1-based), then those
// above. O(counters x (log n + k)): each subquery is its own backward range
// of the index. SQLite runs the single-counter query per counter instead.
#define PERFGATE_HISTORY_BATCH(columns, filters)                                       \
    "SELECT u.ord, h.* FROM unnest(:counter_ids::bigint[]) WITH ORDINALITY AS u (id, ord) " \
    "CROSS JOIN LATERAL (" PERFGATE_HISTORY_SELECT(columns)                              \
    " WHERE benchmark_id = :benchmark_id AND counter_id = u.id AND n > 0"             \
    " AND created_at >= :since AND run_id < :before_run"                               \
    " AND (role = :role OR :role IS NULL)"                                            \
    " AND (mainline = :mainline OR :mainline IS NULL)" filters PERFGATE_HISTORY_ORDER ") h"

#define PERFGATE_HISTORY_BATCHES(filters)                                              \
    { PERFGATE_HISTORY_BATCH(PERFGATE_HISTORY_FULL, filters), PERFGATE_HISTORY_BATCH(PERFGATE_HISTORY_MEDIANS, filters) }
// clang-format on

inline constexpr std::string_view history_batch_sql_all[2] = PERFGATE_HISTORY_BATCHES(
    PERFGATE_HISTORY_TESTBED_RESIDUAL);
inline constexpr std::string_view history_batch_sql_branch[2] = PERFGATE_HISTORY_BATCHES(
    " AND branch = :branch" PERFGATE_HISTORY_TESTBED_RESIDUAL);
inline constexpr std::string_view history_batch_sql_testbed[2] = PERFGATE_HISTORY_BATCHES(
    " AND branch = :branch AND testbed_id = :testbed_id");

#undef PERFGATE_HISTORY_BATCHES
#undef PERFGATE_HISTORY_BATCH
#undef PERFGATE_HISTORY_DIALECTS
#undef PERFGATE_HISTORY_FULL
#undef PERFGATE_HISTORY_MEDIANS
#undef PERFGATE_HISTORY_SELECT
#undef PERFGATE_INDEXED_BY
#undef PERFGATE_HISTORY_COMMON
#undef PERFGATE_HISTORY_TESTBED_RESIDUAL
#undef PERFGATE_HISTORY_ORDER
#undef PERFGATE_HISTORY_ALL
#undef PERFGATE_HISTORY_BRANCH
#undef PERFGATE_HISTORY_TESTBED

// medians: the variant whose rows are (run_id, median, testbed_id) only.
constexpr std::string_view history_batch_sql(history_index which, bool medians = false) noexcept
{
    const int v = medians ? 1 : 0;
    switch (which) {
    case history_index::all: return history_batch_sql_all[v];
    case history_index::branch: return history_batch_sql_branch[v];
    case history_index::testbed: return history_batch_sql_testbed[v];
    }
    return history_batch_sql_all[v];
}

constexpr std::string_view history_sql(history_index which, engine e = engine::sqlite, bool medians = false) noexcept
{
    const int v = medians ? 1 : 0;
    const auto pick = [e](const dialect_sql& d) { return e == engine::sqlite ? d.sqlite : d.postgresql; };
    switch (which) {
    case history_index::all: return pick(history_sql_all[v]);
    case history_index::branch: return pick(history_sql_branch[v]);
    case history_index::testbed: return pick(history_sql_testbed[v]);
    }
    return pick(history_sql_all[v]);
}

} // namespace perfgate::store::detail
