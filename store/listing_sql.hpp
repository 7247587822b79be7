// The SQL of the dashboard's listings, of insert_comparison's run check and
// of the alerts, private to perfgate::store (and its tests, which check the query plans
// with EXPLAIN QUERY PLAN).
//
// As history_sql.hpp: on SQLite, INDEXED BY pins each query to the index
// 006_project_settings.sql made for it, so a schema change that made the
// index unusable fails at prepare time instead of turning into a scan;
// PostgreSQL's planner picks pg/001_initial.sql's (test_store checks the
// plans). Every value is a bound parameter.
#pragma once

#include "store/db.hpp"

#include <string_view>

namespace perfgate::store::detail {

// store::comparisons::insert's check that both runs exist in the project:
// by primary key on both engines. Columns: id, project_id.
inline constexpr std::string_view comparison_runs_sql =
    "SELECT id, project_id FROM runs WHERE id IN (:baseline, :candidate)";

// One alert row with its names (store/alerts.cpp, read_alert): columns
// 0..7 identity and triage, then the numbers from column 8, then the run's
// sha and time, the note and the triage and row times.
#define PERFGATE_ALERT_SELECT(indexed_by) \
    "SELECT a.id, p.name, b.name, c.name, t.fingerprint, a.branch, a.run_id, a.status, " \
    "a.p_value, a.mean_before, a.mean_after, a.median_before, a.median_after, a.delta_pct, a.shift, " \
    "a.shift_lower, a.shift_upper, r.git_sha, r.created_at, a.note, a.changed_by, a.changed_at, " \
    "a.created_at, a.updated_at " \
    "FROM alerts a" indexed_by " JOIN projects p ON p.id = a.project_id " \
    "JOIN benchmarks b ON b.id = a.benchmark_id " \
    "JOIN counters c ON c.id = a.counter_id JOIN testbeds t ON t.id = a.testbed_id " \
    "JOIN runs r ON r.id = a.run_id "
inline constexpr std::string_view alert_select = PERFGATE_ALERT_SELECT("");

// store::alerts::open: :project, :benchmark, :testbed (a fingerprint),
// :branch, :limit. The project, benchmark and testbed by their unique
// names, then one backward range of alerts_open (009_open_alerts.sql), a
// partial index of the open alerts: its WHERE is repeated word for word,
// or SQLite could not use it.
#define PERFGATE_OPEN_ALERTS(indexed_by) \
    PERFGATE_ALERT_SELECT(indexed_by) \
    "WHERE p.name = :project AND b.project_id = p.id AND b.name = :benchmark " \
    "AND t.fingerprint = :testbed AND a.branch = :branch " \
    "AND a.status IN ('untriaged', 'acknowledged') ORDER BY a.id DESC LIMIT :limit"
inline constexpr dialect_sql open_alerts_sql{
    PERFGATE_OPEN_ALERTS(" INDEXED BY alerts_open"),
    PERFGATE_OPEN_ALERTS(""),
};
#undef PERFGATE_OPEN_ALERTS
#undef PERFGATE_ALERT_SELECT

// store::comparisons::recent. :project_id, :limit. Walks the project's range
// of comparisons_recent backwards (newest id first) and stops after :limit
// entries; each row looks its two runs up by id.
// Columns: id, created_at, verdict, benchmark_count, baseline_run,
// baseline git_sha, baseline branch, candidate_run, candidate git_sha,
// candidate branch.
#define PERFGATE_RECENT_COMPARISONS(indexed_by) \
    "SELECT c.id, c.created_at, c.verdict, c.benchmark_count, c.baseline_run, b.git_sha, b.branch, " \
    "c.candidate_run, h.git_sha, h.branch " \
    "FROM comparisons c" indexed_by " " \
    "JOIN runs b ON b.id = c.baseline_run JOIN runs h ON h.id = c.candidate_run " \
    "WHERE c.project_id = :project_id ORDER BY c.id DESC LIMIT :limit"
inline constexpr dialect_sql recent_comparisons_sql{
    PERFGATE_RECENT_COMPARISONS(" INDEXED BY comparisons_recent"),
    PERFGATE_RECENT_COMPARISONS(""),
};
#undef PERFGATE_RECENT_COMPARISONS

// store::runs::by_sha. :project_id; :sha_from <= git_sha < :sha_to is the
// prefix as an index range (sha_to: the prefix with its last byte raised by
// one). The inner query reads that range of runs_project_sha, already
// ordered by (git_sha, benchmark_id, testbed_id), and keeps the largest run
// id of each group; the outer one names benchmark and testbed by id.
// Columns: id, git_sha, branch, role, benchmark, testbed fingerprint,
// testbed name, created_at.
#define PERFGATE_RUNS_BY_SHA(indexed_by) \
    "SELECT r.id, r.git_sha, r.branch, r.role, b.name, t.fingerprint, t.name, r.created_at " \
    "FROM (SELECT max(id) AS id FROM runs" indexed_by " " \
    "      WHERE project_id = :project_id AND git_sha >= :sha_from AND git_sha < :sha_to " \
    "      GROUP BY git_sha, benchmark_id, testbed_id) g " \
    "JOIN runs r ON r.id = g.id JOIN benchmarks b ON b.id = r.benchmark_id " \
    "JOIN testbeds t ON t.id = r.testbed_id"
inline constexpr dialect_sql runs_by_sha_sql{
    PERFGATE_RUNS_BY_SHA(" INDEXED BY runs_project_sha"),
    PERFGATE_RUNS_BY_SHA(""),
};
#undef PERFGATE_RUNS_BY_SHA

} // namespace perfgate::store::detail
