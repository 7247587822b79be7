// Retention: choosing and removing what the history does not need
// (store/prune.hpp), giving the space back, and a project's retention
// settings (022_retention.sql).
//
// A prune reads the runs to remove in one pass per project (two queries:
// the runs that feed no series, past the cutoff; the runs that do, thinned
// past the thinning cutoff), then removes them in batches, each its own
// write transaction: a server's uploads and compares wait for one batch,
// never for the whole prune. A batch's run ids are bound as one parameter
// (a JSON array read by json_each on SQLite, an array on PostgreSQL), so
// every statement is prepared once whatever the batch's size.
#include "store/store.hpp"

#include "model/error.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

namespace perfgate::store {

using detail::connection;
using detail::lookup_id;
using detail::shown_name;
using detail::unix_now;

namespace {

constexpr std::int64_t seconds_per_day = 86400;
// Payload bytes of a stored number (store/prune.hpp, prune_tally).
constexpr std::int64_t number_bytes = 8;
// SQLite pages freed per write transaction by reclaim_space: 1,024 pages of
// 4 KiB, 4 MiB, a few milliseconds of the write lock each.
constexpr int vacuum_step_pages = 1024;

// The SQL for c's engine: BYTES(col) is the column's size in bytes
// (SQLite's length() counts characters of text), IDS the batch's run ids
// as a one-column table (id).
std::string engine_sql(const connection& c, std::string_view sql)
{
    const bool sqlite = c.kind() == detail::engine::sqlite;
    std::string out;
    out.reserve(sql.size() + 64);
    for (std::size_t i = 0; i < sql.size();) {
        if (sql.substr(i, 6) == "BYTES(") {
            const auto close = sql.find(')', i);
            const auto col = sql.substr(i + 6, close - i - 6);
            out += sqlite ? fmt::format("length(CAST({} AS BLOB))", col) : fmt::format("octet_length({})", col);
            i = close + 1;
        } else if (sql.substr(i, 3) == "IDS") {
            out += sqlite ? "(SELECT value AS id FROM json_each(:ids)) AS batch_ids"
                          : "(SELECT unnest(:ids::bigint[]) AS id) AS batch_ids";
            i += 3;
        } else {
            out += sql[i++];
        }
    }
    return out;
}

// The batch's ids as :ids binds them.
std::string ids_text(const connection& c, const std::vector<std::int64_t>& ids)
{
    const bool sqlite = c.kind() == detail::engine::sqlite;
    std::string out(1, sqlite ? '[' : '{');
    for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
    out += sqlite ? ']' : '}';
    return out;
}

// What keeps a run r of project :project_id whatever its age (store/prune.hpp).
// Binds :project_id and :cutoff.
constexpr std::string_view kept_clause =
    " AND r.id NOT IN (SELECT run_id FROM alerts WHERE project_id = :project_id)"
    " AND r.id NOT IN (SELECT run_id FROM change_points)"
    " AND r.id NOT IN (SELECT c.baseline_run FROM comparisons c WHERE c.project_id = :project_id"
    "                  AND (c.created_at >= :cutoff OR c.id IN (SELECT comparison_id FROM acceptances)))"
    " AND r.id NOT IN (SELECT c.candidate_run FROM comparisons c WHERE c.project_id = :project_id"
    "                  AND (c.created_at >= :cutoff OR c.id IN (SELECT comparison_id FROM acceptances)))"
    " AND r.git_sha NOT IN (SELECT a.head_sha FROM acceptances a JOIN comparisons c ON c.id = a.comparison_id"
    "                       WHERE c.project_id = :project_id)"
    " AND (r.session IS NULL OR r.session NOT IN ("
    "      SELECT s.session FROM runs s WHERE s.project_id = :project_id AND s.session IS NOT NULL"
    "        AND s.git_sha IN (SELECT a.head_sha FROM acceptances a JOIN comparisons c ON c.id = a.comparison_id"
    "                          WHERE c.project_id = :project_id)))";

// The runs that feed no series, created before the cutoff, not kept.
std::vector<std::int64_t> unneeded_runs(connection& c, std::int64_t project_id, std::int64_t cutoff)
{
    auto st = c.prepare(engine_sql(c, fmt::format("SELECT r.id FROM runs r WHERE r.project_id = :project_id "
                                                  "AND r.mainline = 0 AND r.created_at < :before{} ORDER BY r.id",
                                                  kept_clause)));
    st.bind(":project_id", project_id).bind(":before", cutoff).bind(":cutoff", cutoff);
    std::vector<std::int64_t> out;
    while (st.step()) out.push_back(st.int64(0));
    return out;
}

// The runs that feed a series, created before thin_cutoff, that thinning
// removes: all but the last of each UTC day of each series, except the
// series' newest keep_tail, the point before a change point and the kept.
std::vector<std::int64_t> thinned_runs(connection& c, std::int64_t project_id, std::int64_t thin_cutoff,
                                       std::int64_t cutoff, std::int64_t keep_tail)
{
    auto st = c.prepare(engine_sql(
        c,
        fmt::format("SELECT r.id FROM runs r JOIN ("
                    "  SELECT s.id, s.created_at,"
                    "    row_number() OVER (PARTITION BY s.benchmark_id, s.testbed_id, s.branch, s.created_at / :day"
                    "                       ORDER BY s.created_at DESC, s.id DESC) AS day_rank,"
                    "    row_number() OVER (PARTITION BY s.benchmark_id, s.testbed_id, s.branch"
                    "                       ORDER BY s.created_at DESC, s.id DESC) AS newest_rank,"
                    "    lead(s.id) OVER (PARTITION BY s.benchmark_id, s.testbed_id, s.branch"
                    "                     ORDER BY s.created_at, s.id) AS next_id"
                    "  FROM runs s WHERE s.project_id = :project_id AND s.mainline = 1) t ON t.id = r.id "
                    "WHERE t.created_at < :thin_before AND t.day_rank > 1 AND t.newest_rank > :keep_tail"
                    " AND (t.next_id IS NULL OR t.next_id NOT IN (SELECT run_id FROM change_points)){} ORDER BY r.id",
                    kept_clause)));
    st.bind(":project_id", project_id)
        .bind(":day", seconds_per_day)
        .bind(":thin_before", thin_cutoff)
        .bind(":keep_tail", keep_tail)
        .bind(":cutoff", cutoff);
    std::vector<std::int64_t> out;
    while (st.step()) out.push_back(st.int64(0));
    return out;
}

// Of a batch chosen earlier, the runs still to remove now (in the batch's
// write transaction): an acceptance, an alert or a comparison made since
// keeps a run.
std::vector<std::int64_t> still_unneeded(connection& c, std::int64_t project_id, std::int64_t cutoff,
                                         const std::vector<std::int64_t>& ids)
{
    auto st = c.prepare(engine_sql(
        c, fmt::format("SELECT r.id FROM runs r WHERE r.id IN (SELECT id FROM IDS) AND r.project_id = :project_id{} "
                       "ORDER BY r.id",
                       kept_clause)));
    st.bind(":ids", ids_text(c, ids)).bind(":project_id", project_id).bind(":cutoff", cutoff);
    std::vector<std::int64_t> out;
    while (st.step()) out.push_back(st.int64(0));
    return out;
}

// The comparisons of a batch's runs (either side), as a table "doomed".
constexpr std::string_view doomed_cte =
    "WITH doomed(id) AS (SELECT id FROM comparisons WHERE baseline_run IN (SELECT id FROM IDS)"
    " UNION SELECT id FROM comparisons WHERE candidate_run IN (SELECT id FROM IDS)) ";

// Adds (count, bytes) of sql's one row to t; extra_per_row bytes per row.
void add_tally(connection& c, std::string_view sql, const std::string& ids, prune_tally& t,
               std::int64_t extra_per_row = 0)
{
    auto st = c.prepare(engine_sql(c, sql));
    st.bind(":ids", ids);
    if (!st.step()) return;
    const std::int64_t rows = st.int64(0);
    t.rows += rows;
    t.bytes += st.int64(1) + rows * extra_per_row;
}

// What removing a batch's runs removes.
// counted_comparisons: the comparisons counted by earlier batches.
void tally_batch(connection& c, const std::vector<std::int64_t>& batch, std::int64_t cutoff, prune_counts& n,
                 std::unordered_set<std::int64_t>& counted_comparisons)
{
    const std::string ids = ids_text(c, batch);
    add_tally(c,
              "SELECT count(*), coalesce(sum(BYTES(role) + BYTES(git_sha) + BYTES(branch) + BYTES(backend) + "
              "BYTES(environment) + BYTES(toolchain) + coalesce(BYTES(session), 0) + coalesce(BYTES(token_name), "
              "0)), 0) FROM runs WHERE id IN (SELECT id FROM IDS)",
              ids, n.runs, 9 * number_bytes);
    add_tally(c, "SELECT count(*), 0 FROM samples WHERE run_id IN (SELECT id FROM IDS)", ids, n.samples,
              6 * number_bytes);
    add_tally(c,
              "SELECT count(*), coalesce(sum(BYTES(unit) + BYTES(branch) + BYTES(role) + BYTES(git_sha)), 0) "
              "FROM summaries WHERE run_id IN (SELECT id FROM IDS)",
              ids, n.summaries, 15 * number_bytes);
    add_tally(
        c, "SELECT count(*), coalesce(sum(BYTES(branch)), 0) FROM change_points WHERE run_id IN (SELECT id FROM IDS)",
        ids, n.change_points, 13 * number_bytes);
    // A comparison of two removed runs is counted once, in the first batch
    // that names it (a dry run removes nothing between batches).
    {
        auto st = c.prepare(engine_sql(
            c, fmt::format("{}SELECT id, BYTES(report) + coalesce(BYTES(request_key), 0) + "
                           "coalesce(BYTES(verdict), 0) FROM comparisons WHERE id IN (SELECT id FROM doomed)",
                           doomed_cte)));
        st.bind(":ids", ids);
        std::vector<std::int64_t> fresh;
        while (st.step()) {
            if (!counted_comparisons.insert(st.int64(0)).second) continue;
            fresh.push_back(st.int64(0));
            ++n.comparisons.rows;
            n.comparisons.bytes += st.int64(1) + 6 * number_bytes;
        }
        if (!fresh.empty()) {
            auto art = c.prepare(engine_sql(c,
                                            "SELECT kind, count(*), coalesce(sum(BYTES(content) + BYTES(benchmark) + "
                                            "BYTES(kind)), 0) FROM comparison_artifacts WHERE comparison_id IN "
                                            "(SELECT id FROM IDS) GROUP BY kind"));
            art.bind(":ids", ids_text(c, fresh));
            while (art.step()) {
                prune_tally& t = art.text(0) == "flame_graph" ? n.flame_graphs : n.attributions;
                t.rows += art.int64(1);
                t.bytes += art.int64(2) + art.int64(1) * 2 * number_bytes;
            }
        }
    }
    // Keys older than the cutoff are counted once per project (old_keys).
    auto st = c.prepare(engine_sql(c, "SELECT count(*), coalesce(sum(BYTES(key) + BYTES(request_sha256) + "
                                      "coalesce(BYTES(run_ids), 0)), 0) FROM ingest_keys "
                                      "WHERE run_id IN (SELECT id FROM IDS) AND created_at >= :cutoff"));
    st.bind(":ids", ids).bind(":cutoff", cutoff);
    if (st.step()) {
        n.ingest_keys.rows += st.int64(0);
        n.ingest_keys.bytes += st.int64(1) + st.int64(0) * 3 * number_bytes;
    }
}

// Removes a batch's runs and everything that refers to them, children first
// (the foreign keys). The acceptances of the doomed comparisons: none, as an
// accepted comparison's runs are kept (a foreign key error says otherwise).
void remove_batch(connection& c, const std::vector<std::int64_t>& batch)
{
    const std::string ids = ids_text(c, batch);
    auto run = [&](std::string_view sql) { c.prepare(engine_sql(c, sql)).bind(":ids", ids).run(); };
    run(fmt::format("{}DELETE FROM comparison_artifacts WHERE comparison_id IN (SELECT id FROM doomed)", doomed_cte));
    run(fmt::format("{}DELETE FROM comparisons WHERE id IN (SELECT id FROM doomed)", doomed_cte));
    run("DELETE FROM change_points WHERE run_id IN (SELECT id FROM IDS)");
    run("DELETE FROM ingest_keys WHERE run_id IN (SELECT id FROM IDS)");
    run("DELETE FROM samples WHERE run_id IN (SELECT id FROM IDS)");
    run("DELETE FROM summaries WHERE run_id IN (SELECT id FROM IDS)");
    // benchmarks.runs counts a benchmark's runs (maintenance::runs_count).
    run("UPDATE benchmarks SET runs = runs - (SELECT count(*) FROM runs r WHERE r.benchmark_id = benchmarks.id "
        "AND r.id IN (SELECT id FROM IDS)) WHERE id IN (SELECT benchmark_id FROM runs WHERE id IN (SELECT id FROM IDS))");
    run("DELETE FROM runs WHERE id IN (SELECT id FROM IDS)");
}

void check_rules(const std::string& name, const prune_rules& rules)
{
    const auto in_bounds = [](std::int64_t s) { return s >= prune_rules::min_age_s && s <= prune_rules::max_age_s; };
    if (!in_bounds(rules.older_than_s) || (rules.thin_after_s && !in_bounds(*rules.thin_after_s))) {
        throw error(errors::store_constraint,
                    fmt::format("{}: retention ages must be between 1 day and 36500 days", name));
    }
    if (rules.thin_after_s && *rules.thin_after_s < rules.older_than_s) {
        throw error(errors::store_constraint,
                    fmt::format("{}: the thinning age ({} s) is below the age runs are removed at ({} s)", name,
                                *rules.thin_after_s, rules.older_than_s));
    }
    if (rules.keep_tail < 0) {
        throw error(errors::store_constraint, fmt::format("{}: keep_tail {} is negative", name, rules.keep_tail));
    }
}

} // namespace

namespace {

// The projects a prune covers: (name, id), in name order.
std::vector<std::pair<std::string, std::int64_t>> prune_targets(const impl& s,
                                                                const std::optional<std::string_view>& project)
{
    std::vector<std::pair<std::string, std::int64_t>> targets;
    impl::read_lease c(s);
    if (project) {
        const auto id = lookup_id(*c, "SELECT id FROM projects WHERE name = :name", {{":name", *project}});
        if (!id) {
            throw error(errors::store_not_found,
                        fmt::format("{}: project {} not found", s.name_, shown_name(*project)));
        }
        targets.emplace_back(std::string(*project), *id);
    } else {
        auto st = (*c).prepare("SELECT name, id FROM projects ORDER BY name");
        while (st.step()) targets.emplace_back(st.text(0), st.int64(1));
    }
    return targets;
}

// The ages' cutoffs, in unix seconds.
struct cutoffs {
    std::int64_t remove = 0; // runs that feed no series, created before it
    std::int64_t thin = 0;   // runs that do, created before it
};

// The project's runs to remove, in id order (one snapshot); n.thinned counts
// those that fed a series.
std::vector<std::int64_t> chosen_runs(const impl& s, std::int64_t project_id, const prune_rules& rules, cutoffs at,
                                      prune_counts& n)
{
    std::vector<std::int64_t> doomed, thinned;
    {
        impl::read_lease c(s);
        detail::transaction snapshot(*c, detail::transaction::kind::read);
        doomed = unneeded_runs(*c, project_id, at.remove);
        if (rules.thin_after_s) thinned = thinned_runs(*c, project_id, at.thin, at.remove, rules.keep_tail);
        snapshot.commit();
    }
    n.thinned += static_cast<std::int64_t>(thinned.size());
    doomed.insert(doomed.end(), thinned.begin(), thinned.end());
    std::sort(doomed.begin(), doomed.end());
    return doomed;
}

// Idempotency keys older than the cutoff, counted (and removed unless
// dry_run): a retry comes within minutes, not after the retention age.
void prune_old_keys(impl& s, std::int64_t project_id, std::int64_t cutoff, bool dry_run, prune_counts& n)
{
    const auto count = [&](connection& c) {
        prune_tally keys;
        auto st = c.prepare(engine_sql(c, "SELECT count(*), coalesce(sum(BYTES(key) + BYTES(request_sha256) + "
                                          "coalesce(BYTES(run_ids), 0)), 0) FROM ingest_keys "
                                          "WHERE project_id = :project_id AND created_at < :cutoff"));
        st.bind(":project_id", project_id).bind(":cutoff", cutoff);
        if (st.step()) {
            keys.rows = st.int64(0);
            keys.bytes = st.int64(1) + keys.rows * 3 * number_bytes;
        }
        return keys;
    };
    prune_tally keys;
    if (dry_run) {
        impl::read_lease c(s);
        keys = count(*c);
    } else {
        keys = s.write([&](connection& c) {
            const prune_tally found = count(c);
            c.prepare("DELETE FROM ingest_keys WHERE project_id = :project_id AND created_at < :cutoff")
                .bind(":project_id", project_id)
                .bind(":cutoff", cutoff)
                .run();
            return found;
        });
    }
    n.ingest_keys.rows += keys.rows;
    n.ingest_keys.bytes += keys.bytes;
}

void add_counts(prune_counts& to, const prune_counts& from)
{
    for (auto [t, f] :
         {std::pair{&to.runs, &from.runs}, std::pair{&to.samples, &from.samples},
          std::pair{&to.summaries, &from.summaries}, std::pair{&to.change_points, &from.change_points},
          std::pair{&to.comparisons, &from.comparisons}, std::pair{&to.flame_graphs, &from.flame_graphs},
          std::pair{&to.attributions, &from.attributions}, std::pair{&to.ingest_keys, &from.ingest_keys}}) {
        t->rows += f->rows;
        t->bytes += f->bytes;
    }
}

// Removes (or with dry_run counts) the chosen runs, prune_batch_runs to a
// write transaction.
void remove_in_batches(impl& s, std::int64_t project_id, std::int64_t cutoff, const std::vector<std::int64_t>& doomed,
                       bool dry_run, prune_counts& n)
{
    std::unordered_set<std::int64_t> counted_comparisons;
    for (std::size_t at = 0; at < doomed.size(); at += maintenance::prune_batch_runs) {
        const std::vector<std::int64_t> chosen(
            doomed.begin() + static_cast<std::ptrdiff_t>(at),
            doomed.begin() + static_cast<std::ptrdiff_t>(std::min(doomed.size(), at + maintenance::prune_batch_runs)));
        if (dry_run) {
            impl::read_lease c(s);
            tally_batch(*c, chosen, cutoff, n, counted_comparisons);
            continue;
        }
        // The counts of a batch are added once it is committed (write may
        // run the body again after a deadlock).
        add_counts(n, s.write([&](connection& c) {
            prune_counts counted;
            const auto batch = still_unneeded(c, project_id, cutoff, chosen);
            if (batch.empty()) return counted;
            std::unordered_set<std::int64_t> none_yet; // the earlier batches' comparisons are gone
            tally_batch(c, batch, cutoff, counted, none_yet);
            remove_batch(c, batch);
            return counted;
        }));
    }
}

} // namespace

prune_report maintenance::prune(const std::optional<std::string_view>& project, const prune_rules& rules, bool dry_run)
{
    check_rules(impl_->name_, rules);
    const std::int64_t now = rules.now != 0 ? rules.now : unix_now();
    cutoffs at;
    at.remove = now - rules.older_than_s;
    at.thin = rules.thin_after_s ? now - *rules.thin_after_s : at.remove;

    prune_report out;
    out.dry_run = dry_run;
    for (const auto& [name, project_id] : prune_targets(*impl_, project)) {
        out.projects.push_back(name);
        const auto doomed = chosen_runs(*impl_, project_id, rules, at, out.removed);
        prune_old_keys(*impl_, project_id, at.remove, dry_run, out.removed);
        remove_in_batches(*impl_, project_id, at.remove, doomed, dry_run, out.removed);
    }
    return out;
}

reclaim_report maintenance::reclaim_space(bool full_vacuum)
{
    reclaim_report out;
    out.size_before = size_bytes();
    if (!impl_->sqlite()) {
        if (full_vacuum) {
            throw error(errors::store_unsupported,
                        fmt::format("{}: perfgate runs no VACUUM FULL on PostgreSQL (it locks each table while it "
                                    "rewrites it); use pg_repack, or VACUUM FULL in a maintenance window",
                                    impl_->name_));
        }
        // Outside a transaction (VACUUM cannot run in one): the dead rows'
        // space becomes reusable now, not when autovacuum gets to it.
        impl::lease c(*impl_, true);
        c->exec("VACUUM (ANALYZE) runs, samples, summaries, change_points, comparisons, comparison_artifacts, "
                "ingest_keys");
        out.size_after = size_bytes();
        return out;
    }
    if (impl_->memory_) {
        out.size_after = out.size_before;
        return out;
    }
    const auto pragma = [&](const char* sql) {
        impl::lease c(*impl_, true);
        auto st = c->prepare(sql);
        const bool row = st.step();
        PERFGATE_CHECK(row);
        return st.int64(0);
    };
    out.free_pages_before = pragma("PRAGMA freelist_count");
    out.incremental = pragma("PRAGMA auto_vacuum") == 2;
    if (full_vacuum) {
        // INCREMENTAL takes effect with the VACUUM that rebuilds the file.
        impl::lease c(*impl_, true);
        c->exec("PRAGMA auto_vacuum = INCREMENTAL");
        c->exec("VACUUM");
        out.vacuumed = true;
        out.incremental = true;
    } else if (out.incremental) {
        for (std::int64_t left = out.free_pages_before; left > 0;) {
            impl_->write([&](connection& c) {
                c.exec(fmt::format("PRAGMA incremental_vacuum({})", vacuum_step_pages));
            });
            const std::int64_t now_free = pragma("PRAGMA freelist_count");
            if (now_free >= left) break; // nothing more to free (a reader's snapshot, or done)
            left = now_free;
        }
    }
    // The file shrinks when the log's frames are copied back into it. A
    // passive checkpoint: it waits for no reader (a server's requests go
    // on); what a reader still holds is copied by the next checkpoint.
    {
        impl::lease c(*impl_, true);
        c->exec("PRAGMA wal_checkpoint(PASSIVE)");
    }
    out.size_after = size_bytes();
    return out;
}

retention_settings projects::retention_of(std::string_view project) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT retention_older_than, retention_thin_after FROM projects WHERE name = :name");
    st.bind(":name", project);
    if (!st.step()) {
        throw error(errors::store_not_found,
                    fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
    }
    return {st.opt_int64(0), st.opt_int64(1)};
}

void projects::set_retention(std::string_view project, const retention_settings& retention)
{
    if (retention.older_than_s) {
        prune_rules rules;
        rules.older_than_s = *retention.older_than_s;
        rules.thin_after_s = retention.thin_after_s;
        check_rules(impl_->name_, rules);
    } else if (retention.thin_after_s) {
        throw error(errors::store_constraint,
                    fmt::format("{}: a thinning age needs an age runs are removed at", impl_->name_));
    }
    impl_->write([&](connection& c) {
        if (!lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}})) {
            throw error(errors::store_not_found,
                        fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
        }
        c.prepare("UPDATE projects SET retention_older_than = :older, retention_thin_after = :thin WHERE name = :name")
            .bind(":older", retention.older_than_s)
            .bind(":thin", retention.thin_after_s)
            .bind(":name", project)
            .run();
    });
}

std::vector<std::string> projects::claim_due_retention(std::int64_t now, std::int64_t interval_s)
{
    std::vector<std::pair<std::string, std::int64_t>> due;
    {
        impl::read_lease c(*impl_);
        auto st = (*c).prepare("SELECT name, id FROM projects WHERE retention_older_than IS NOT NULL AND "
                               "(retention_pruned_at IS NULL OR retention_pruned_at <= :due) ORDER BY name");
        st.bind(":due", now - interval_s);
        while (st.step()) due.emplace_back(st.text(0), st.int64(1));
    }
    std::vector<std::string> claimed;
    for (const auto& project : due) {
        // Named copies: clang 14 cannot capture a structured binding.
        const std::string& name = project.first;
        const std::int64_t id = project.second;
        // Another server may have claimed it since the read: the WHERE
        // re-checks under the row's lock, and RETURNING says who won.
        const bool won = impl_->write([&](connection& c) {
            auto st = c.prepare("UPDATE projects SET retention_pruned_at = :now WHERE id = :id AND "
                                "(retention_pruned_at IS NULL OR retention_pruned_at <= :due) RETURNING id");
            st.bind(":now", now).bind(":id", id).bind(":due", now - interval_s);
            const bool row = st.step();
            st.run();
            return row;
        });
        if (won) claimed.push_back(name);
    }
    return claimed;
}

} // namespace perfgate::store
