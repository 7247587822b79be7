// Storing runs (names, samples, summaries; with or without an idempotency
// key) and loading them back.
//
// Writes that two processes can race on are idempotent in the database:
// names (projects, benchmarks, testbeds, counters) are INSERT ... ON CONFLICT
// DO NOTHING and then read back, so on PostgreSQL the second of two
// replicas creating the same project waits for the first's commit and reads
// its row (read committed: each statement sees what was committed before it).
#include "store/store.hpp"

#include "model/error.hpp"
#include "model/testbed.hpp"
#include "stats/descriptive.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace perfgate::store {

using detail::connection;
using detail::ensure_project_row;
using detail::shown_name;
using detail::statement;
using detail::to_int64;
using detail::transaction;
using detail::unix_now;

namespace {

// The row named by a unique key, created when missing: SELECT, else INSERT
// ... ON CONFLICT DO NOTHING and SELECT again, which finds the row whether
// this transaction inserted it or another one committed it in between.
std::int64_t ensure_row(connection& c, std::string_view select, std::string_view insert,
                        const std::function<void(statement&)>& bind_key,
                        const std::function<void(statement&)>& bind_rest)
{
    auto find = [&]() -> std::optional<std::int64_t> {
        auto st = c.prepare(select);
        bind_key(st);
        if (!st.step()) return std::nullopt;
        return st.int64(0);
    };
    if (auto id = find()) return *id;
    auto ins = c.prepare(insert);
    bind_key(ins);
    bind_rest(ins);
    ins.run();
    const auto id = find();
    PERFGATE_CHECK(id.has_value()); // inserted, or the conflicting row is committed
    return *id;
}

} // namespace

namespace detail {

std::int64_t ensure_project_row(connection& c, std::string_view project, std::int64_t now, const id_cache* ids)
{
    if (ids) {
        if (auto id = ids->find(id_cache::kind::project, project)) return *id;
    }
    return ensure_row(
        c, "SELECT id FROM projects WHERE name = :name",
        "INSERT INTO projects (name, created_at) VALUES (:name, :now) ON CONFLICT DO NOTHING",
        [&](statement& st) { st.bind(":name", project); }, [&](statement& st) { st.bind(":now", now); });
}

} // namespace detail

namespace {

std::int64_t ensure_testbed_row(connection& c, const testbed_info& t)
{
    const std::string fp = model::fingerprint_of(t);
    return ensure_row(
        c, "SELECT id FROM testbeds WHERE fingerprint = :fp",
        "INSERT INTO testbeds (fingerprint, name, cpu, cores, kernel) "
        "VALUES (:fp, :name, :cpu, :cores, :kernel) ON CONFLICT DO NOTHING",
        [&](statement& st) { st.bind(":fp", fp); },
        [&](statement& st) {
            st.bind(":name", t.name)
                .bind(":cpu", t.cpu)
                .bind(":cores", std::int64_t{t.cores})
                .bind(":kernel", t.kernel);
        });
}

std::int64_t ensure_benchmark_row(connection& c, std::int64_t project_id, std::string_view project,
                                  std::string_view name, const detail::id_cache* ids = nullptr)
{
    if (ids) {
        if (auto id = ids->find(detail::id_cache::kind::benchmark, name, project)) return *id;
    }
    return ensure_row(
        c, "SELECT id FROM benchmarks WHERE project_id = :project_id AND name = :name",
        "INSERT INTO benchmarks (project_id, name) VALUES (:project_id, :name) ON CONFLICT DO NOTHING",
        [&](statement& st) { st.bind(":project_id", project_id).bind(":name", name); }, [](statement&) {});
}

std::int64_t ensure_counter_row(connection& c, std::string_view name, const detail::id_cache* ids = nullptr)
{
    if (ids) {
        if (auto id = ids->find(detail::id_cache::kind::counter, name)) return *id;
    }
    return ensure_row(
        c, "SELECT id FROM counters WHERE name = :name",
        "INSERT INTO counters (name) VALUES (:name) ON CONFLICT DO NOTHING",
        [&](statement& st) { st.bind(":name", name); }, [](statement&) {});
}

// SQLite stores NaN as NULL, which would turn a broken value into "absent";
// and stats::summarize treats NaN/inf as a bug. Reject them here.
// A counter listed twice would otherwise surface as a cryptic primary-key
// failure on samples.
void validate_values(const std::string& path, const run_record& run)
{
    std::unordered_set<std::string_view> seen;
    for (const auto& cs : run.counters) {
        if (!seen.insert(cs.counter).second) {
            throw error(errors::store_constraint, fmt::format("{}: run of benchmark {}: counter {} appears twice", path,
                                                              shown_name(run.benchmark), shown_name(cs.counter)));
        }
        std::unordered_set<int> repetitions;
        for (const auto& s : cs.samples) {
            const bool ok = (!s.value || std::isfinite(*s.value)) && std::isfinite(s.pcnt_running) &&
                            (!s.variance_pct || std::isfinite(*s.variance_pct));
            if (!ok) {
                throw error(errors::store_constraint,
                            fmt::format("{}: run of benchmark {}: counter {} repetition {}: "
                                        "value, pcnt_running and variance_pct must be finite",
                                        path, shown_name(run.benchmark), shown_name(cs.counter), s.repetition));
            }
            // The samples table's key, checked here so that the message
            // names the counter (PostgreSQL inserts a run's samples in one
            // statement: its own message could not).
            if (!repetitions.insert(s.repetition).second) {
                throw error(errors::store_constraint,
                            fmt::format("{}: run of benchmark {}: counter {} repetition {} "
                                        "appears twice",
                                        path, shown_name(run.benchmark), shown_name(cs.counter), s.repetition));
            }
        }
    }
}

// PostgreSQL: every sample of a run in one INSERT (arrays, unnest) rather
// than a round trip to the server per sample; a run of 50 counters at 1,000
// repetitions is then one statement, not 50,000. SQLite inserts row by row
// (insert_run_rows): a statement there is a function call.
void insert_samples_at_once(connection& c, std::int64_t run_id, const run_record& run,
                            const std::vector<std::int64_t>& counter_ids)
{
    std::string counters = "{", repetitions = "{", values = "{", pcnt = "{", variance = "{";
    auto add = [](std::string& array, const auto& v) {
        if (array.size() > 1) array += ',';
        array += v;
    };
    auto real = [](const std::optional<double>& v) { return v ? fmt::format("{}", *v) : std::string("NULL"); };
    for (std::size_t i = 0; i < run.counters.size(); ++i) {
        const std::string id = fmt::format("{}", counter_ids[i]);
        for (const auto& s : run.counters[i].samples) {
            add(counters, id);
            add(repetitions, fmt::format("{}", s.repetition));
            add(values, real(s.value));
            add(pcnt, fmt::format("{}", s.pcnt_running));
            add(variance, real(s.variance_pct));
        }
    }
    for (auto* array : {&counters, &repetitions, &values, &pcnt, &variance}) *array += '}';
    c.prepare("INSERT INTO samples (run_id, counter_id, repetition, value, pcnt_running, variance_pct) "
              "SELECT :run_id, u.counter_id, u.repetition, u.value, u.pcnt_running, u.variance_pct "
              "FROM unnest(:counters::bigint[], :repetitions::bigint[], :values::float8[], :pcnt::float8[], "
              ":variance::float8[]) AS u (counter_id, repetition, value, pcnt_running, variance_pct)")
        .bind(":run_id", run_id)
        .bind(":counters", counters)
        .bind(":repetitions", repetitions)
        .bind(":values", values)
        .bind(":pcnt", pcnt)
        .bind(":variance", variance)
        .run();
}

// The keys a run's rows share, as insert_run_rows's steps pass them on.
struct run_keys {
    std::int64_t project_id = 0;
    std::int64_t benchmark_id = 0;
    std::int64_t testbed_id = 0;
    std::int64_t created_at = 0;
};

// Runs body; an error it throws then names the run's benchmark and the counter.
template <typename F>
void with_run_counter(const run_record& run, const counter_samples& cs, F&& body)
{
    try {
        body();
    } catch (const error& e) {
        throw error(e.id(), fmt::format("{} (run of benchmark {}, counter {})", e.what(), shown_name(run.benchmark),
                                        shown_name(cs.counter)));
    }
}

// The ids of the run's counters (parallel to run.counters), their rows
// created when missing, and the benchmark's counter list completed.
std::vector<std::int64_t> ensure_run_counters(connection& c, const run_record& run, std::int64_t benchmark_id,
                                              const detail::id_cache& ids)
{
    // Counter rows, then the benchmark's counter list, in name order: two
    // runs stored at once on PostgreSQL take these unique keys in the same
    // order, so neither waits for a key the other holds while holding one
    // it wants (a deadlock PostgreSQL would break by aborting one).
    std::vector<std::size_t> by_name(run.counters.size());
    std::iota(by_name.begin(), by_name.end(), std::size_t{0});
    std::sort(by_name.begin(), by_name.end(),
              [&](std::size_t a, std::size_t b) { return run.counters[a].counter < run.counters[b].counter; });
    std::vector<std::int64_t> counter_ids(run.counters.size());
    for (const auto i : by_name) {
        with_run_counter(run, run.counters[i],
                         [&] { counter_ids[i] = ensure_counter_row(c, run.counters[i].counter, &ids); });
    }
    auto ins_bc = c.prepare("INSERT INTO benchmark_counters (benchmark_id, counter_id) "
                            "VALUES (:benchmark_id, :counter_id) ON CONFLICT DO NOTHING");
    ins_bc.bind(":benchmark_id", benchmark_id);
    for (const auto i : by_name) ins_bc.bind(":counter_id", counter_ids[i]).run();
    return counter_ids;
}

// The run's own row; its id.
std::int64_t insert_run_row(connection& c, const run_record& run, const run_keys& keys)
{
    auto ins_run = c.prepare(
        "INSERT INTO runs (project_id, benchmark_id, testbed_id, role, git_sha, branch, pr, backend, "
        "environment, summary_only, created_at, session, toolchain, mainline, token_id, token_name) VALUES "
        "(:project_id, :benchmark_id, :testbed_id, :role, :git_sha, :branch, :pr, :backend, :environment, "
        ":summary_only, :created_at, :session, :toolchain, :mainline, :token_id, :token_name) RETURNING id");
    ins_run.bind(":project_id", keys.project_id)
        .bind(":benchmark_id", keys.benchmark_id)
        .bind(":testbed_id", keys.testbed_id)
        .bind(":role", run.role)
        .bind(":git_sha", run.git_sha)
        .bind(":branch", run.branch)
        .bind(":pr", run.pr)
        .bind(":backend", run.backend)
        .bind(":environment", run.environment_json)
        .bind(":summary_only", std::int64_t{run.summary_only ? 1 : 0})
        .bind(":created_at", keys.created_at)
        .bind(":session", run.session.empty() ? std::optional<std::string>() : std::optional<std::string>(run.session))
        .bind(":toolchain", run.toolchain)
        .bind(":mainline", std::int64_t{run.mainline ? 1 : 0})
        .bind(":token_id", run.written_by ? std::optional(run.written_by->id) : std::nullopt)
        .bind(":token_name", run.written_by ? std::optional(run.written_by->name) : std::nullopt);
    ins_run.step();
    const std::int64_t run_id = ins_run.int64(0);
    ins_run.run(); // finish the statement (RETURNING yields one row)
    return run_id;
}

// A summary row's statistics of values: NULL when there are none.
void bind_summary_statistics(statement& ins_summary, const std::vector<double>& values)
{
    const auto sum = stats::summarize(values);
    if (sum) {
        ins_summary.bind(":median", sum->median)
            .bind(":mean", sum->mean)
            .bind(":stddev", sum->stddev)
            .bind(":cov", sum->cov)
            .bind(":min", sum->min)
            .bind(":max", sum->max);
    } else {
        for (const char* col : {":median", ":mean", ":stddev", ":cov", ":min", ":max"}) {
            ins_summary.bind_null(col);
        }
    }
}

// Each counter's samples and its summary row. PostgreSQL inserts every
// sample in one statement (insert_samples_at_once), SQLite row by row.
void insert_counter_rows(connection& c, const run_record& run, std::int64_t run_id, const run_keys& keys,
                         const std::vector<std::int64_t>& counter_ids)
{
    auto ins_sample = c.prepare(
        "INSERT INTO samples (run_id, counter_id, repetition, value, pcnt_running, variance_pct) "
        "VALUES (:run_id, :counter_id, :repetition, :value, :pcnt_running, :variance_pct)");
    auto ins_summary = c.prepare(
        "INSERT INTO summaries (run_id, counter_id, ordinal, unit, benchmark_id, testbed_id, branch, "
        "role, mainline, git_sha, created_at, n, median, mean, stddev, cov, min, max) VALUES (:run_id, "
        ":counter_id, :ordinal, :unit, :benchmark_id, :testbed_id, :branch, :role, :mainline, :git_sha, "
        ":created_at, :n, :median, :mean, :stddev, :cov, :min, :max)");
    // The run-level columns copied into every summary row (see 001_initial.sql).
    ins_summary.bind(":run_id", run_id)
        .bind(":benchmark_id", keys.benchmark_id)
        .bind(":testbed_id", keys.testbed_id)
        .bind(":branch", run.branch)
        .bind(":role", run.role)
        .bind(":mainline", std::int64_t{run.mainline ? 1 : 0})
        .bind(":git_sha", run.git_sha)
        .bind(":created_at", keys.created_at);
    ins_sample.bind(":run_id", run_id);

    const bool at_once = c.kind() == detail::engine::postgresql;
    if (at_once) insert_samples_at_once(c, run_id, run, counter_ids);
    std::vector<double> values;
    for (std::size_t ordinal = 0; ordinal < run.counters.size(); ++ordinal) {
        const auto& cs = run.counters[ordinal];
        with_run_counter(run, cs, [&] {
            const auto counter_id = counter_ids[ordinal];
            values.clear();
            ins_sample.bind(":counter_id", counter_id);
            for (const auto& s : cs.samples) {
                if (!at_once) {
                    ins_sample.bind(":repetition", std::int64_t{s.repetition})
                        .bind(":value", s.value)
                        .bind(":pcnt_running", s.pcnt_running)
                        .bind(":variance_pct", s.variance_pct);
                    ins_sample.run();
                }
                if (s.value) values.push_back(*s.value);
            }
            ins_summary.bind(":counter_id", counter_id)
                .bind(":ordinal", to_int64(ordinal))
                .bind(":unit", cs.unit)
                .bind(":n", to_int64(values.size()));
            bind_summary_statistics(ins_summary, values);
            ins_summary.run();
        });
    }
}

// insert_run's body, in its write transaction.
// ids: names' ids known from committed reads (never filled here: this
// transaction may roll back).
std::int64_t insert_run_rows(connection& c, const run_record& run, const detail::id_cache& ids)
{
    run_keys keys;
    keys.created_at = run.created_at != 0 ? run.created_at : unix_now();
    keys.project_id = ensure_project_row(c, run.project, keys.created_at, &ids);
    keys.benchmark_id = ensure_benchmark_row(c, keys.project_id, run.project, run.benchmark, &ids);
    keys.testbed_id = ensure_testbed_row(c, run.testbed);

    const auto counter_ids = ensure_run_counters(c, run, keys.benchmark_id, ids);
    const std::int64_t run_id = insert_run_row(c, run, keys);
    insert_counter_rows(c, run, run_id, keys, counter_ids);

    // The benchmark's row last: on PostgreSQL its row lock is what orders
    // concurrent runs of one benchmark, held for the commit only.
    c.prepare("UPDATE benchmarks SET runs = runs + 1, last_run_at = "
              "CASE WHEN last_run_at > :created_at THEN last_run_at ELSE :created_at END "
              "WHERE id = :benchmark_id")
        .bind(":created_at", keys.created_at)
        .bind(":benchmark_id", keys.benchmark_id)
        .run();
    return run_id;
}

} // namespace

std::int64_t runs::insert(const run_record& run)
{
    validate_values(impl_->name_, run);
    // Rolls back on any exception: nothing is stored.
    return impl_->write([&](connection& c) { return insert_run_rows(c, run, impl_->ids_); });
}

keyed_run runs::insert(const run_record& run, std::string_view key, std::string_view request_sha256)
{
    keyed_runs r = insert_all(std::vector<run_record>{run}, key, request_sha256);
    return {r.run_ids.front(), r.replayed};
}

std::vector<std::int64_t> runs::insert_all(const std::vector<run_record>& runs)
{
    for (const auto& run : runs) validate_values(impl_->name_, run);
    return impl_->write([&](connection& c) {
        std::vector<std::int64_t> ids;
        ids.reserve(runs.size());
        for (const auto& run : runs) ids.push_back(insert_run_rows(c, run, impl_->ids_));
        return ids;
    });
}

namespace {

// ingest_keys.run_ids: "12,13,14".
std::string join_ids(const std::vector<std::int64_t>& ids)
{
    std::string out;
    for (auto id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
    return out;
}

std::vector<std::int64_t> split_ids(std::string_view text)
{
    std::vector<std::int64_t> out;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const std::string_view part = text.substr(0, comma);
        std::int64_t id = 0;
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), id);
        PERFGATE_CHECK(ec == std::errc() && end == part.data() + part.size());
        out.push_back(id);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    return out;
}

} // namespace

keyed_runs runs::insert_all(const std::vector<run_record>& runs, std::string_view key, std::string_view request_sha256)
{
    PERFGATE_CHECK(!runs.empty());
    for (const auto& run : runs) validate_values(impl_->name_, run);
    const std::string& project = runs.front().project;
    for (const auto& run : runs) PERFGATE_CHECK(run.project == project);
    return impl_->write([&](connection& c) -> keyed_runs {
        const auto project_id = ensure_project_row(c, project, unix_now(), &impl_->ids_);
        // The key first: a concurrent claim of the same key waits here for
        // this transaction (PostgreSQL: the unique key; SQLite: the write
        // lock), then finds the key with its runs.
        auto claim = c.prepare("INSERT INTO ingest_keys (project_id, key, request_sha256, run_id, created_at) "
                               "VALUES (:project_id, :key, :sha256, NULL, :now) ON CONFLICT DO NOTHING RETURNING 1");
        claim.bind(":project_id", project_id)
            .bind(":key", key)
            .bind(":sha256", request_sha256)
            .bind(":now", unix_now());
        const bool claimed = claim.step();
        claim.run();
        if (!claimed) {
            auto st = c.prepare("SELECT request_sha256, run_id, run_ids FROM ingest_keys "
                                "WHERE project_id = :project_id AND key = :key");
            st.bind(":project_id", project_id).bind(":key", key);
            const bool found = st.step();
            PERFGATE_CHECK(found);          // the conflicting row is committed
            PERFGATE_CHECK(!st.is_null(1)); // and has its run: both go in one transaction
            if (st.text(0) != request_sha256) {
                throw error(errors::store_key_conflict,
                            fmt::format("{}: idempotency key {} of project {} was used for another request",
                                        impl_->name_, shown_name(key), shown_name(project)));
            }
            if (st.is_null(2)) return {{st.int64(1)}, true};
            return {split_ids(st.text(2)), true};
        }
        std::vector<std::int64_t> ids;
        ids.reserve(runs.size());
        for (const auto& run : runs) ids.push_back(insert_run_rows(c, run, impl_->ids_));
        auto update = c.prepare("UPDATE ingest_keys SET run_id = :run_id, run_ids = :run_ids "
                                "WHERE project_id = :project_id AND key = :key");
        const std::optional<std::string> listed = ids.size() > 1 ? std::optional(join_ids(ids)) : std::nullopt;
        update.bind(":run_id", ids.front()).bind(":run_ids", listed);
        update.bind(":project_id", project_id).bind(":key", key).run();
        return {ids, false};
    });
}

std::optional<run_record> runs::load(std::string_view project, std::int64_t run_id) const
{
    impl::read_lease lease(*impl_);
    auto& c = *lease;
    transaction tx(c, transaction::kind::read); // one snapshot for the three SELECTs

    run_record r;
    {
        auto st = c.prepare(
            "SELECT r.id, p.name, b.name, r.role, r.git_sha, r.branch, r.pr, t.name, t.cpu, t.cores, "
            "t.kernel, t.fingerprint, r.backend, r.environment, r.summary_only, r.created_at, r.session, "
            "r.toolchain, r.mainline, r.token_id, r.token_name "
            "FROM runs r JOIN projects p ON p.id = r.project_id "
            "JOIN benchmarks b ON b.id = r.benchmark_id JOIN testbeds t ON t.id = r.testbed_id "
            "WHERE r.id = :run_id AND p.name = :project");
        st.bind(":run_id", run_id).bind(":project", project);
        if (!st.step()) return std::nullopt;
        r.id = st.int64(0);
        r.project = st.text(1);
        r.benchmark = st.text(2);
        r.role = st.text(3);
        r.git_sha = st.text(4);
        r.branch = st.text(5);
        r.pr = st.opt_int64(6);
        r.testbed = {st.text(7), st.text(8), static_cast<int>(st.int64(9)), st.text(10), st.text(11)};
        r.backend = st.text(12);
        r.environment_json = st.text(13);
        r.summary_only = st.int64(14) != 0;
        r.created_at = st.int64(15);
        if (!st.is_null(16)) r.session = st.text(16);
        r.toolchain = st.text(17);
        r.mainline = st.int64(18) != 0;
        if (!st.is_null(19))
            r.written_by = model::token_ref{st.int64(19), st.is_null(20) ? std::string() : st.text(20)};
    }

    std::unordered_map<std::int64_t, std::size_t> index_of; // counter_id -> position in r.counters
    {
        auto st = c.prepare("SELECT s.counter_id, c.name, s.unit FROM summaries s "
                            "JOIN counters c ON c.id = s.counter_id "
                            "WHERE s.run_id = :run_id ORDER BY s.ordinal");
        st.bind(":run_id", run_id);
        while (st.step()) {
            index_of.emplace(st.int64(0), r.counters.size());
            r.counters.push_back({st.text(1), st.text(2), {}});
        }
    }
    {
        auto st = c.prepare("SELECT counter_id, repetition, value, pcnt_running, variance_pct "
                            "FROM samples WHERE run_id = :run_id ORDER BY counter_id, repetition");
        st.bind(":run_id", run_id);
        while (st.step()) {
            auto it = index_of.find(st.int64(0));
            PERFGATE_CHECK(it != index_of.end()); // every sample's counter has a summary row
            r.counters[it->second].samples.push_back({static_cast<int>(st.int64(1)), st.opt_real(2), st.real(3),
                                                      st.opt_real(4)});
        }
    }
    tx.commit();
    return r;
}

std::optional<reusable_run> runs::find_reusable(const reusable_run_query& q) const
{
    if (q.toolchain.empty()) return std::nullopt; // unknown: never reused
    impl::read_lease lease(*impl_);
    auto& c = *lease;
    transaction tx(c, transaction::kind::read);
    reusable_run out;
    {
        // runs_project_sha (006) narrows to the commit's runs; the newest
        // that feeds the branch's series wins: a pull request's own baseline
        // measurement is never reused (docs/history.md "Which runs feed the
        // series").
        auto st = c.prepare("SELECT r.id, r.git_sha, r.branch, r.role, r.toolchain, r.created_at, r.token_id, "
                            "r.token_name "
                            "FROM runs r JOIN projects p ON p.id = r.project_id "
                            "JOIN benchmarks b ON b.id = r.benchmark_id JOIN testbeds t ON t.id = r.testbed_id "
                            "WHERE p.name = :project AND r.git_sha = :git_sha AND b.name = :benchmark "
                            "AND t.fingerprint = :testbed AND r.branch = :branch AND r.backend = :backend "
                            "AND r.toolchain = :toolchain AND r.summary_only = 0 AND r.mainline = 1 "
                            "ORDER BY r.id DESC LIMIT 1");
        st.bind(":project", q.project)
            .bind(":git_sha", q.git_sha)
            .bind(":benchmark", q.benchmark)
            .bind(":testbed", q.testbed)
            .bind(":branch", q.branch)
            .bind(":backend", q.backend)
            .bind(":toolchain", q.toolchain);
        if (!st.step()) return std::nullopt;
        out.run_id = st.int64(0);
        out.git_sha = st.text(1);
        out.branch = st.text(2);
        out.role = st.text(3);
        out.toolchain = st.text(4);
        out.created_at = st.int64(5);
        if (!st.is_null(6)) out.written_by = model::token_ref{st.int64(6), st.is_null(7) ? std::string() : st.text(7)};
    }
    {
        auto st = c.prepare("SELECT c.name FROM summaries s JOIN counters c ON c.id = s.counter_id "
                            "WHERE s.run_id = :run_id ORDER BY s.ordinal");
        st.bind(":run_id", out.run_id);
        while (st.step()) out.counters.push_back(st.text(0));
    }
    tx.commit();
    return out;
}

} // namespace perfgate::store
