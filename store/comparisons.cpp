// Stored comparison reports: one row per compare, found again by its
// request key (a SHA-256 of what was compared).
#include "store/store.hpp"

#include "model/error.hpp"
#include "store/listing_sql.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace perfgate::store {

using detail::connection;
using detail::shown_name;
using detail::unix_now;

namespace {

// A comparison's request key: a hex SHA-256, lowercase.
void check_request_key(std::string_view store_name, std::string_view request_key)
{
    const bool hex_digest = request_key.size() == 64 &&
                            std::all_of(request_key.begin(), request_key.end(),
                                        [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); });
    if (!hex_digest) {
        throw error(errors::store_constraint,
                    fmt::format("{}: comparison request_key must be 64 lowercase hex digits (a SHA-256), got {}",
                                store_name, shown_name(request_key)));
    }
}

} // namespace

std::int64_t comparisons::insert(std::string_view project, std::int64_t baseline_run, std::int64_t candidate_run,
                                 std::string_view report_json)
{
    return insert_row(project, baseline_run, candidate_run, report_json, std::nullopt, std::nullopt);
}

std::int64_t comparisons::insert(std::string_view project, std::int64_t baseline_run, std::int64_t candidate_run,
                                 std::string_view report_json, std::string_view request_key,
                                 const std::optional<report_facts>& facts)
{
    check_request_key(impl_->name_, request_key);
    return insert_row(project, baseline_run, candidate_run, report_json, std::string(request_key), facts);
}

std::vector<std::int64_t> comparisons::insert_all(std::span<const comparison_row> rows)
{
    for (const auto& row : rows) check_request_key(impl_->name_, row.request_key);
    if (rows.empty()) return {};
    std::vector<std::optional<std::string>> keys;
    keys.reserve(rows.size());
    for (const auto& row : rows) keys.emplace_back(row.request_key);
    // In key order: two PostgreSQL replicas whose batches share keys then
    // take the keys' index entries in the same order, so one waits for the
    // other instead of both deadlocking (which would abort one batch, to be
    // retried: store_impl.hpp, write).
    std::vector<std::size_t> order(rows.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(rows[a].project, rows[a].request_key) < std::tie(rows[b].project, rows[b].request_key);
    });
    return impl_->write([&](connection& c) {
        std::vector<std::int64_t> ids(rows.size());
        for (const std::size_t i : order) {
            const auto& row = rows[i];
            ids[i] = insert_on(c, row.project, row.baseline_run, row.candidate_run, row.report_json, keys[i],
                               report_facts{row.verdict, row.benchmark_count});
        }
        return ids;
    });
}

std::int64_t comparisons::insert_row(std::string_view project, std::int64_t baseline_run, std::int64_t candidate_run,
                                     std::string_view report_json, const std::optional<std::string>& request_key,
                                     const std::optional<report_facts>& facts)
{
    return impl_->write([&](connection& c) {
        return insert_on(c, project, baseline_run, candidate_run, report_json, request_key, facts);
    });
}

namespace {

// Both runs of a comparison in its project, in one statement (a round trip
// on PostgreSQL), by primary key: "WHERE project_id = ? AND id IN (...)"
// let SQLite's planner pick runs_project_sha and walk every run of the
// project (comparison_runs_sql).
void check_comparison_runs(connection& c, std::string_view store_name, std::string_view project,
                           std::int64_t project_id, std::int64_t baseline_run, std::int64_t candidate_run)
{
    auto st = c.prepare(detail::comparison_runs_sql);
    st.bind(":baseline", baseline_run).bind(":candidate", candidate_run);
    std::vector<std::int64_t> found;
    while (st.step()) {
        if (st.int64(1) == project_id) found.push_back(st.int64(0));
    }
    for (const auto run : {baseline_run, candidate_run}) {
        if (std::find(found.begin(), found.end(), run) == found.end()) {
            throw error(errors::store_not_found,
                        fmt::format("{}: run {} not found in project {}", store_name, run, shown_name(project)));
        }
    }
}

// The insert of a comparison whose facts the caller gives (the compare
// path, through the commit queue), with the check of its runs inside: a row
// only when both runs are in the project (counted by primary key: the
// unary + keeps SQLite's planner off runs_project_sha, as above). One
// statement instead of two, one round trip less per compare on PostgreSQL
// inside the group commit's transaction (issue 47). No row back: a run is
// missing or the key was stored first, which the caller tells apart.
constexpr detail::dialect_sql insert_checked_comparison_sql{
    "INSERT INTO comparisons (project_id, baseline_run, candidate_run, report, created_at, request_key, "
    "verdict, benchmark_count) "
    "SELECT :project_id, :baseline, :candidate, :report, :now, :request_key, :verdict, :benchmark_count "
    "WHERE (SELECT count(*) FROM runs WHERE id IN (:baseline, :candidate) AND +project_id = :project_id) = "
    "CASE WHEN :baseline = :candidate THEN 1 ELSE 2 END "
    "ON CONFLICT DO NOTHING RETURNING id",
    "INSERT INTO comparisons (project_id, baseline_run, candidate_run, report, created_at, request_key, "
    "verdict, benchmark_count) "
    "SELECT :project_id::bigint, :baseline::bigint, :candidate::bigint, :report::text, :now::bigint, "
    ":request_key::text, :verdict::text, :benchmark_count::bigint "
    "WHERE (SELECT count(*) FROM runs WHERE id IN (:baseline::bigint, :candidate::bigint) "
    "AND project_id = :project_id::bigint) = CASE WHEN :baseline::bigint = :candidate::bigint THEN 1 ELSE 2 END "
    "ON CONFLICT DO NOTHING RETURNING id",
};

} // namespace

std::int64_t comparisons::insert_on(connection& c, std::string_view project, std::int64_t baseline_run,
                                    std::int64_t candidate_run, std::string_view report_json,
                                    const std::optional<std::string>& request_key,
                                    const std::optional<report_facts>& facts)
{
    const auto project_id = detail::project_id(impl_->ids_, c, project, false);
    if (!project_id) {
        throw error(errors::store_not_found,
                    fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
    }
    // Checked before the insert when the insert does not check them itself.
    const bool runs_checked = !facts;
    if (runs_checked) check_comparison_runs(c, impl_->name_, project, *project_id, baseline_run, candidate_run);
    // ON CONFLICT DO NOTHING: another process (or a request that computed
    // the same comparison concurrently) stored this key first; the
    // comparison is a pure function of the key, so its row is as good as
    // ours. NULL keys never conflict (NULLs are distinct in a UNIQUE
    // index). On PostgreSQL the second of two such inserts waits for the
    // first's commit, then does nothing and reads its row below.
    std::optional<std::int64_t> id;
    {
        // verdict and benchmark_count: the caller's facts, else
        // SQLite's JSON functions, the
        // expressions of the backfill in 006_project_settings.sql
        // (reports are at most a few MB: these take 14 ms on a 2.7 MB
        // one, SQLite 3.40, next to the second a compare of that size
        // takes); PostgreSQL's perfgate_report_summary (pg/001_initial.sql).
        auto st = c.prepare(
            facts ? c.pick(insert_checked_comparison_sql)
                  : c.pick({
                        "INSERT INTO comparisons (project_id, baseline_run, candidate_run, report, created_at, "
                        "request_key, verdict, benchmark_count) "
                        "VALUES (:project_id, :baseline, :candidate, :report, :now, :request_key, "
                        "CASE WHEN json_valid(:report) AND json_extract(:report, '$.verdict') IN ('pass', 'fail', "
                        "'inconclusive') THEN json_extract(:report, '$.verdict') END, "
                        "CASE WHEN json_valid(:report) AND json_type(:report, '$.benchmarks') = 'array' "
                        "THEN json_array_length(:report, '$.benchmarks') END) "
                        "ON CONFLICT DO NOTHING RETURNING id",
                        "INSERT INTO comparisons (project_id, baseline_run, candidate_run, report, created_at, "
                        "request_key, verdict, benchmark_count) "
                        "SELECT :project_id::bigint, :baseline::bigint, :candidate::bigint, :report::text, "
                        ":now::bigint, :request_key::text, s.verdict, s.benchmark_count "
                        "FROM perfgate_report_summary(:report) s "
                        "ON CONFLICT DO NOTHING RETURNING id",
                    }));
        st.bind(":project_id", *project_id)
            .bind(":baseline", baseline_run)
            .bind(":candidate", candidate_run)
            .bind(":report", report_json)
            .bind(":now", unix_now())
            .bind(":request_key", request_key);
        if (facts) st.bind(":verdict", facts->verdict).bind(":benchmark_count", facts->benchmark_count);
        if (st.step()) id = st.int64(0);
        st.run();
    }
    if (!id) {
        // A missing run (the checked insert's reason), else a conflict.
        if (!runs_checked) check_comparison_runs(c, impl_->name_, project, *project_id, baseline_run, candidate_run);
        auto st = c.prepare("SELECT id FROM comparisons WHERE project_id = :project_id AND request_key = :request_key");
        st.bind(":project_id", *project_id).bind(":request_key", request_key);
        // Only a key can conflict (id is fresh), so the row is there.
        const bool found = request_key && st.step();
        PERFGATE_CHECK(found);
        id = st.int64(0);
    }
    return *id;
}

std::optional<std::pair<std::int64_t, std::string>> comparisons::find(std::string_view project,
                                                                      std::string_view request_key) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT c.id, c.report FROM comparisons c JOIN projects p ON p.id = c.project_id "
                           "WHERE p.name = :project AND c.request_key = :request_key");
    st.bind(":project", project).bind(":request_key", request_key);
    if (!st.step()) return std::nullopt;
    return std::pair{st.int64(0), st.text(1)};
}

std::optional<std::string> comparisons::load(std::string_view project, std::int64_t id) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT c.report FROM comparisons c JOIN projects p ON p.id = c.project_id "
                           "WHERE c.id = :id AND p.name = :project");
    st.bind(":id", id).bind(":project", project);
    if (!st.step()) return std::nullopt;
    return st.text(0);
}

} // namespace perfgate::store
