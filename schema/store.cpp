// The SQLite store.
//
// Concurrency design (the server runs N worker threads on one store):
// - One writer connection behind writer_mu_. Every write (ingest, token,
//   comparison) holds the mutex for its whole transaction; SQLite allows one
//   writer at a time anyway, and serialising in-process means we never spin
//   in the busy handler against ourselves.
// - A pool of up to max_readers read-only connections for the const calls.
//   WAL lets them read a consistent snapshot while the writer commits
//   (https://www.sqlite.org/wal.html, "Concurrency"). A connection is used by
//   one thread at a time (opened with SQLITE_OPEN_NOMUTEX, leased from the pool).
// - ":memory:" (and "", SQLite's private temporary database) is one database
//   per connection, so there the writer connection also serves reads, under
//   the same mutex.
// Other processes (a CLI next to a server) are covered by WAL and busy_timeout.
#include "schema/store.hpp"

#include "schema/history_sql.hpp"
#include "schema/store_impl.hpp"
#include "schema/migrations.hpp"
#include "schema/sqlite.hpp"
#include "stats/descriptive.hpp"
#include "model/digest.hpp"
#include "model/error.hpp"
#include "model/testbed.hpp"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace perfgate::store {

using detail::connection;
using detail::statement;
using detail::transaction;
using model::sha256_hex;
using namespace detail;

namespace {

// How long a connection waits for another process's write lock before
// failing with "database is locked" (store.io). Ingest transactions take
// milliseconds; 5 s absorbs a checkpoint or a slow disk without hanging a
// request for long.
constexpr int busy_timeout_ms = 5000;

// Tokens: 32 random bytes (256 bits, as GitHub's and most API tokens) in hex,
// with a prefix that makes a leaked token recognisable to secret scanners.
constexpr std::string_view token_prefix = "pg_";
constexpr std::size_t token_random_bytes = 32;
constexpr std::size_t token_length = token_prefix.size() + 2 * token_random_bytes;

} // namespace

// Helpers shared with the store's other sources (schema/store_impl.hpp).
namespace detail {

std::int64_t unix_now()
{
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Names in error messages: quoted, and cut so a 10 KB hostile name does not
// become a 10 KB log line.
std::string shown_name(std::string_view name)
{
    constexpr std::size_t max_shown = 120;
    if (name.size() <= max_shown) return fmt::format("'{}'", name);
    return fmt::format("'{}...' ({} bytes)", name.substr(0, max_shown), name.size());
}

bool is_memory(const std::string& path) { return path.empty() || path == ":memory:"; }

std::int64_t to_int64(std::size_t v)
{
    return v > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())
               ? std::numeric_limits<std::int64_t>::max()
               : static_cast<std::int64_t>(v);
}

// Per-connection settings. Errors here mean the file is not a usable
// database (not SQLite, unreadable, locked for good): "store.open".
void configure(connection& c, bool writer, bool memory)
{
    try {
        c.exec(fmt::format("PRAGMA busy_timeout = {}", busy_timeout_ms));
        c.exec("PRAGMA foreign_keys = ON");
        if (writer && !memory) {
            // WAL: readers do not block the writer nor the writer readers.
            // synchronous=NORMAL is safe from corruption in WAL mode and only
            // risks the last commits on power loss (sqlite.org/pragma.html#pragma_synchronous).
            auto st = c.prepare("PRAGMA journal_mode = WAL");
            if (!st.step() || st.text(0) != "wal") {
                throw error("store.open", fmt::format("{}: cannot switch the database to WAL mode", c.path()));
            }
            c.exec("PRAGMA synchronous = NORMAL");
        }
        // The first real read: fails here with "file is not a database".
        auto st = c.prepare("SELECT count(*) FROM sqlite_schema");
        st.step();
    } catch (const error& e) {
        if (e.id() == "store.open") throw;
        throw error("store.open", e.what());
    }
}

int user_version(connection& c)
{
    auto st = c.prepare("PRAGMA user_version");
    st.step();
    return static_cast<int>(st.int64(0));
}

// Applies the embedded migrations newer than PRAGMA user_version, each in its
// own transaction that also bumps user_version, so a failure leaves the
// database at the last complete version.
void migrate(connection& c)
{
    const auto all = detail::migrations();
    const int latest = static_cast<int>(all.size());
    auto check_not_newer = [&](int current) {
        if (current > latest) {
            throw error("store.migrate",
                        fmt::format("{}: database schema version {} is newer than this perfgate "
                                    "knows (version {}, {}); upgrade perfgate",
                                    c.path(), current, latest, all.back().file));
        }
    };
    check_not_newer(user_version(c));
    for (const auto& m : all) {
        if (m.version <= user_version(c)) continue;
        transaction tx(c);
        // Re-read under the write lock: another process may have migrated.
        const int current = user_version(c);
        check_not_newer(current);
        if (m.version <= current) continue;
        try {
            c.exec(m.sql);
            // An integer from our own table, not user text.
            c.exec(fmt::format("PRAGMA user_version = {}", m.version));
            tx.commit();
        } catch (const error& e) {
            throw error("store.migrate", fmt::format("{}: migration {} (to version {}) failed: {}",
                                                     c.path(), m.file, m.version, e.what()));
        }
    }
}

// SELECT id ... WHERE name-ish = :name, or nullopt.
std::optional<std::int64_t> lookup_id(connection& c, std::string_view sql,
                                      std::initializer_list<std::pair<const char*, std::string_view>> binds)
{
    auto st = c.prepare(sql);
    for (const auto& [name, value] : binds) st.bind(name, value);
    if (!st.step()) return std::nullopt;
    return st.int64(0);
}

} // namespace detail

namespace {

std::int64_t ensure_project_row(connection& c, std::string_view project, std::int64_t now)
{
    if (auto id = lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}})) return *id;
    auto st = c.prepare("INSERT INTO projects (name, created_at) VALUES (:name, :now)");
    st.bind(":name", project).bind(":now", now).run();
    return lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}}).value();
}

std::int64_t ensure_testbed_row(connection& c, const testbed_info& t)
{
    const std::string fp = model::fingerprint_of(t);
    constexpr std::string_view select = "SELECT id FROM testbeds WHERE fingerprint = :fp";
    if (auto id = lookup_id(c, select, {{":fp", fp}})) return *id;
    auto st = c.prepare("INSERT INTO testbeds (fingerprint, name, cpu, cores, kernel) "
                        "VALUES (:fp, :name, :cpu, :cores, :kernel)");
    st.bind(":fp", fp).bind(":name", t.name).bind(":cpu", t.cpu)
        .bind(":cores", std::int64_t{t.cores}).bind(":kernel", t.kernel).run();
    return lookup_id(c, select, {{":fp", fp}}).value();
}

std::int64_t ensure_benchmark_row(connection& c, std::int64_t project_id, std::string_view name)
{
    auto find = [&]() -> std::optional<std::int64_t> {
        auto st = c.prepare("SELECT id FROM benchmarks WHERE project_id = :project_id AND name = :name");
        st.bind(":project_id", project_id).bind(":name", name);
        if (!st.step()) return std::nullopt;
        return st.int64(0);
    };
    if (auto id = find()) return *id;
    auto st = c.prepare("INSERT INTO benchmarks (project_id, name) VALUES (:project_id, :name)");
    st.bind(":project_id", project_id).bind(":name", name).run();
    return find().value();
}

std::int64_t ensure_counter_row(connection& c, std::string_view name)
{
    constexpr std::string_view select = "SELECT id FROM counters WHERE name = :name";
    if (auto id = lookup_id(c, select, {{":name", name}})) return *id;
    c.prepare("INSERT INTO counters (name) VALUES (:name)").bind(":name", name).run();
    return lookup_id(c, select, {{":name", name}}).value();
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
            throw error("store.constraint", fmt::format("{}: run of benchmark {}: counter {} appears twice",
                                                        path, shown_name(run.benchmark), shown_name(cs.counter)));
        }
        for (const auto& s : cs.samples) {
            const bool ok = (!s.value || std::isfinite(*s.value)) && std::isfinite(s.pcnt_running) &&
                            (!s.variance_pct || std::isfinite(*s.variance_pct));
            if (!ok) {
                throw error("store.constraint",
                            fmt::format("{}: run of benchmark {}: counter {} repetition {}: "
                                        "value, pcnt_running and variance_pct must be finite",
                                        path, shown_name(run.benchmark), shown_name(cs.counter), s.repetition));
            }
        }
    }
}

} // namespace

store::store(const std::filesystem::path& path) : impl_(std::make_unique<impl>())
{
    impl_->path_ = path.string();
    impl_->memory_ = is_memory(impl_->path_);
    impl_->writer_ = std::make_unique<connection>(impl_->path_, connection::mode::read_write_create);
    configure(*impl_->writer_, true, impl_->memory_);
    migrate(*impl_->writer_);
}

store::~store() = default;

std::uint64_t store::generation() const noexcept { return impl_->writer_->commits(); }

std::int64_t store::ensure_project(std::string_view project)
{
    std::lock_guard lock(impl_->writer_mu_);
    auto& c = *impl_->writer_;
    transaction tx(c);
    const auto id = ensure_project_row(c, project, unix_now());
    tx.commit();
    return id;
}

bool store::project_exists(std::string_view project) const
{
    impl::read_lease c(*impl_);
    return lookup_id(*c, "SELECT id FROM projects WHERE name = :name", {{":name", project}}).has_value();
}

std::string store::create_token(std::string_view project, std::string_view name)
{
    std::array<unsigned char, token_random_bytes> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
        throw error("store.io", fmt::format("{}: cannot create a token: OpenSSL RAND_bytes failed", impl_->path_));
    }
    std::string token = std::string(token_prefix) + model::to_hex(bytes.data(), bytes.size());
    OPENSSL_cleanse(bytes.data(), bytes.size());

    std::lock_guard lock(impl_->writer_mu_);
    auto& c = *impl_->writer_;
    transaction tx(c);
    const auto now = unix_now();
    const auto project_id = ensure_project_row(c, project, now);
    c.prepare("INSERT INTO api_tokens (project_id, name, sha256, created_at) "
              "VALUES (:project_id, :name, :sha256, :now)")
        .bind(":project_id", project_id).bind(":name", name)
        .bind(":sha256", sha256_hex(token)).bind(":now", now).run();
    tx.commit();
    return token;
}

std::optional<std::string> store::token_project(std::string_view token) const
{
    if (token.size() != token_length || !token.starts_with(token_prefix)) return std::nullopt;
    const std::string hash = sha256_hex(token);

    impl::read_lease c(*impl_);
    // Looking up by the hash leaks nothing useful through timing (an attacker
    // cannot choose hash prefixes); the final comparison is constant-time
    // anyway, as the issue asks.
    auto st = (*c).prepare("SELECT t.sha256, p.name FROM api_tokens t "
                           "JOIN projects p ON p.id = t.project_id WHERE t.sha256 = :sha256");
    st.bind(":sha256", hash);
    if (!st.step()) return std::nullopt;
    const std::string stored = st.text(0);
    if (stored.size() != hash.size() || CRYPTO_memcmp(stored.data(), hash.data(), hash.size()) != 0) {
        return std::nullopt;
    }
    return st.text(1);
}

std::int64_t store::insert_run(const run_record& run)
{
    validate_values(impl_->path_, run);

    std::lock_guard lock(impl_->writer_mu_);
    auto& c = *impl_->writer_;
    transaction tx(c);   // rolls back on any exception below: nothing is stored

    const std::int64_t created_at = run.created_at != 0 ? run.created_at : unix_now();
    const auto project_id = ensure_project_row(c, run.project, created_at);
    const auto benchmark_id = ensure_benchmark_row(c, project_id, run.benchmark);
    const auto testbed_id = ensure_testbed_row(c, run.testbed);

    auto ins_run = c.prepare(
        "INSERT INTO runs (project_id, benchmark_id, testbed_id, role, git_sha, branch, pr, backend, "
        "environment, summary_only, created_at) VALUES (:project_id, :benchmark_id, :testbed_id, "
        ":role, :git_sha, :branch, :pr, :backend, :environment, :summary_only, :created_at) RETURNING id");
    ins_run.bind(":project_id", project_id).bind(":benchmark_id", benchmark_id)
        .bind(":testbed_id", testbed_id).bind(":role", run.role).bind(":git_sha", run.git_sha)
        .bind(":branch", run.branch).bind(":pr", run.pr).bind(":backend", run.backend)
        .bind(":environment", run.environment_json)
        .bind(":summary_only", std::int64_t{run.summary_only ? 1 : 0})
        .bind(":created_at", created_at);
    ins_run.step();
    const std::int64_t run_id = ins_run.int64(0);
    ins_run.run();   // finish the statement (RETURNING yields one row)

    auto ins_sample = c.prepare(
        "INSERT INTO samples (run_id, counter_id, repetition, value, pcnt_running, variance_pct) "
        "VALUES (:run_id, :counter_id, :repetition, :value, :pcnt_running, :variance_pct)");
    auto ins_summary = c.prepare(
        "INSERT INTO summaries (run_id, counter_id, ordinal, unit, benchmark_id, testbed_id, branch, "
        "role, git_sha, created_at, n, median, mean, stddev, cov, min, max) VALUES (:run_id, "
        ":counter_id, :ordinal, :unit, :benchmark_id, :testbed_id, :branch, :role, :git_sha, "
        ":created_at, :n, :median, :mean, :stddev, :cov, :min, :max)");
    auto ins_bc = c.prepare("INSERT OR IGNORE INTO benchmark_counters (benchmark_id, counter_id) "
                            "VALUES (:benchmark_id, :counter_id)");
    // The run-level columns copied into every summary row (see 001_initial.sql).
    ins_summary.bind(":run_id", run_id).bind(":benchmark_id", benchmark_id)
        .bind(":testbed_id", testbed_id).bind(":branch", run.branch).bind(":role", run.role)
        .bind(":git_sha", run.git_sha).bind(":created_at", created_at);
    ins_sample.bind(":run_id", run_id);
    ins_bc.bind(":benchmark_id", benchmark_id);

    std::vector<double> values;
    for (std::size_t ordinal = 0; ordinal < run.counters.size(); ++ordinal) {
        const auto& cs = run.counters[ordinal];
        try {
            const auto counter_id = ensure_counter_row(c, cs.counter);
            values.clear();
            ins_sample.bind(":counter_id", counter_id);
            for (const auto& s : cs.samples) {
                ins_sample.bind(":repetition", std::int64_t{s.repetition}).bind(":value", s.value)
                    .bind(":pcnt_running", s.pcnt_running).bind(":variance_pct", s.variance_pct);
                ins_sample.run();
                if (s.value) values.push_back(*s.value);
            }
            const auto sum = stats::summarize(values);
            ins_summary.bind(":counter_id", counter_id).bind(":ordinal", to_int64(ordinal))
                .bind(":unit", cs.unit).bind(":n", to_int64(values.size()));
            if (sum) {
                ins_summary.bind(":median", sum->median).bind(":mean", sum->mean)
                    .bind(":stddev", sum->stddev).bind(":cov", sum->cov)
                    .bind(":min", sum->min).bind(":max", sum->max);
            } else {
                for (const char* col : {":median", ":mean", ":stddev", ":cov", ":min", ":max"}) {
                    ins_summary.bind_null(col);
                }
            }
            ins_summary.run();
            ins_bc.bind(":counter_id", counter_id).run();
        } catch (const error& e) {
            throw error(e.id(), fmt::format("{} (run of benchmark {}, counter {})", e.what(),
                                            shown_name(run.benchmark), shown_name(cs.counter)));
        }
    }

    c.prepare("UPDATE benchmarks SET runs = runs + 1, last_run_at = max(last_run_at, :created_at) "
              "WHERE id = :benchmark_id")
        .bind(":created_at", created_at).bind(":benchmark_id", benchmark_id).run();
    tx.commit();
    return run_id;
}

std::optional<run_record> store::load_run(std::string_view project, std::int64_t run_id) const
{
    impl::read_lease lease(*impl_);
    auto& c = *lease;
    transaction tx(c, transaction::kind::read);   // one snapshot for the three SELECTs

    run_record r;
    {
        auto st = c.prepare(
            "SELECT r.id, p.name, b.name, r.role, r.git_sha, r.branch, r.pr, t.name, t.cpu, t.cores, "
            "t.kernel, t.fingerprint, r.backend, r.environment, r.summary_only, r.created_at "
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
    }

    std::unordered_map<std::int64_t, std::size_t> index_of;   // counter_id -> position in r.counters
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
            PERFGATE_CHECK(it != index_of.end());   // every sample's counter has a summary row
            r.counters[it->second].samples.push_back(
                {static_cast<int>(st.int64(1)), st.opt_real(2), st.real(3), st.opt_real(4)});
        }
    }
    tx.commit();
    return r;
}

std::int64_t store::insert_comparison(std::string_view project, std::int64_t baseline_run,
                                      std::int64_t candidate_run, std::string_view report_json)
{
    return insert_comparison_row(project, baseline_run, candidate_run, report_json, std::nullopt);
}

std::int64_t store::insert_comparison(std::string_view project, std::int64_t baseline_run,
                                      std::int64_t candidate_run, std::string_view report_json,
                                      std::string_view request_key)
{
    const bool hex_digest = request_key.size() == 64 &&
                            std::all_of(request_key.begin(), request_key.end(), [](char ch) {
                                return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
                            });
    if (!hex_digest) {
        throw error("store.constraint",
                    fmt::format("{}: comparison request_key must be 64 lowercase hex digits (a SHA-256), got {}",
                                impl_->path_, shown_name(request_key)));
    }
    return insert_comparison_row(project, baseline_run, candidate_run, report_json, std::string(request_key));
}

std::int64_t store::insert_comparison_row(std::string_view project, std::int64_t baseline_run,
                                          std::int64_t candidate_run, std::string_view report_json,
                                          const std::optional<std::string>& request_key)
{
    std::lock_guard lock(impl_->writer_mu_);
    auto& c = *impl_->writer_;
    transaction tx(c);
    const auto project_id = lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}});
    if (!project_id) {
        throw error("store.not_found", fmt::format("{}: project {} not found", impl_->path_, shown_name(project)));
    }
    for (const auto run : {baseline_run, candidate_run}) {
        auto st = c.prepare("SELECT 1 FROM runs WHERE id = :run_id AND project_id = :project_id");
        st.bind(":run_id", run).bind(":project_id", *project_id);
        if (!st.step()) {
            throw error("store.not_found",
                        fmt::format("{}: run {} not found in project {}", impl_->path_, run, shown_name(project)));
        }
    }
    // ON CONFLICT DO NOTHING: another process (or a request that computed the
    // same comparison concurrently) stored this key first; the comparison is
    // a pure function of the key, so its row is as good as ours. NULL keys
    // never conflict (NULLs are distinct in a UNIQUE index).
    std::optional<std::int64_t> id;
    {
        // verdict and benchmark_count: the expressions of the backfill in
        // 006_project_settings.sql. Reports are at most a few MB: these
        // expressions take 14 ms on a 2.7 MB one (SQLite 3.40), next to the
        // second a compare of that size takes.
        auto st = c.prepare(
            "INSERT INTO comparisons (project_id, baseline_run, candidate_run, report, created_at, request_key, "
            "verdict, benchmark_count) "
            "VALUES (:project_id, :baseline, :candidate, :report, :now, :request_key, "
            "CASE WHEN json_valid(:report) AND json_extract(:report, '$.verdict') IN ('pass', 'fail', 'inconclusive') "
            "THEN json_extract(:report, '$.verdict') END, "
            "CASE WHEN json_valid(:report) AND json_type(:report, '$.benchmarks') = 'array' "
            "THEN json_array_length(:report, '$.benchmarks') END) "
            "ON CONFLICT DO NOTHING RETURNING id");
        st.bind(":project_id", *project_id).bind(":baseline", baseline_run).bind(":candidate", candidate_run)
            .bind(":report", report_json).bind(":now", unix_now()).bind(":request_key", request_key);
        if (st.step()) id = st.int64(0);
        st.run();
    }
    if (!id) {
        auto st = c.prepare("SELECT id FROM comparisons WHERE project_id = :project_id AND request_key = :request_key");
        st.bind(":project_id", *project_id).bind(":request_key", request_key);
        // Only a key can conflict (id is fresh), so the row is there.
        const bool found = request_key && st.step();
        PERFGATE_CHECK(found);
        id = st.int64(0);
    }
    tx.commit();
    return *id;
}

std::optional<std::pair<std::int64_t, std::string>> store::find_comparison(std::string_view project,
                                                                           std::string_view request_key) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT c.id, c.report FROM comparisons c JOIN projects p ON p.id = c.project_id "
                           "WHERE p.name = :project AND c.request_key = :request_key");
    st.bind(":project", project).bind(":request_key", request_key);
    if (!st.step()) return std::nullopt;
    return std::pair{st.int64(0), st.text(1)};
}

std::optional<std::string> store::load_comparison(std::string_view project, std::int64_t id) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT c.report FROM comparisons c JOIN projects p ON p.id = c.project_id "
                           "WHERE c.id = :id AND p.name = :project");
    st.bind(":id", id).bind(":project", project);
    if (!st.step()) return std::nullopt;
    return st.text(0);
}

std::vector<history_point> store::history(const history_query& q) const
{
    std::vector<history_point> points;
    if (q.limit == 0) return points;

    impl::read_lease lease(*impl_);
    auto& c = *lease;
    transaction tx(c, transaction::kind::read);

    std::optional<std::int64_t> benchmark_id;
    {
        auto st = c.prepare("SELECT b.id FROM benchmarks b JOIN projects p ON p.id = b.project_id "
                            "WHERE p.name = :project AND b.name = :benchmark");
        st.bind(":project", q.project).bind(":benchmark", q.benchmark);
        if (st.step()) benchmark_id = st.int64(0);
    }
    const auto counter_id = lookup_id(c, "SELECT id FROM counters WHERE name = :name", {{":name", q.counter}});
    if (!benchmark_id || !counter_id) return points;

    // Pick the covering index whose equality prefix the filters bind fully
    // (see history_sql.hpp). A testbed name may cover several fingerprints
    // (e.g. after a kernel update); then it is a residual filter.
    auto which = q.branch ? detail::history_index::branch : detail::history_index::all;
    std::optional<std::int64_t> testbed_id;
    if (q.testbed && q.branch) {
        auto st = c.prepare("SELECT id FROM testbeds WHERE fingerprint = :testbed OR name = :testbed LIMIT 2");
        st.bind(":testbed", *q.testbed);
        std::vector<std::int64_t> ids;
        while (st.step()) ids.push_back(st.int64(0));
        if (ids.empty()) return points;
        if (ids.size() == 1) {
            which = detail::history_index::testbed;
            testbed_id = ids.front();
        }
    }

    auto st = c.prepare(detail::history_sql(which));
    st.bind(":benchmark_id", *benchmark_id).bind(":counter_id", *counter_id)
        .bind(":branch", q.branch).bind(":testbed", q.testbed).bind(":testbed_id", testbed_id)
        .bind(":role", q.role)
        .bind(":since", q.since.value_or(std::numeric_limits<std::int64_t>::min()))
        .bind(":before_run", q.before_run.value_or(std::numeric_limits<std::int64_t>::max()))
        .bind(":limit", to_int64(q.limit));
    std::vector<std::int64_t> testbed_ids;   // parallel to points
    while (st.step()) {
        history_point p;
        p.run_id = st.int64(0);
        p.git_sha = st.text(1);
        p.branch = st.text(2);
        p.created_at = st.int64(3);
        p.n = static_cast<std::size_t>(st.int64(4));
        p.median = st.real(5);
        p.mean = st.real(6);
        p.stddev = st.opt_real(7);
        p.cov = st.opt_real(8);
        p.min = st.opt_real(9);
        p.max = st.opt_real(10);
        testbed_ids.push_back(st.int64(11));
        points.push_back(std::move(p));
    }

    // Name each point's testbed with one lookup per distinct testbed (a
    // series spans a few at most) rather than a join, which would take the
    // query off its covering index.
    struct testbed_names {
        std::string fingerprint, name;
    };
    std::unordered_map<std::int64_t, testbed_names> testbeds;
    for (std::size_t i = 0; i < points.size(); ++i) {
        auto [it, fresh] = testbeds.try_emplace(testbed_ids[i]);
        if (fresh) {
            auto tb = c.prepare("SELECT fingerprint, name FROM testbeds WHERE id = :id");
            tb.bind(":id", testbed_ids[i]);
            const bool found = tb.step();
            PERFGATE_CHECK(found);   // summaries.testbed_id is copied from runs.testbed_id, a foreign key
            it->second = {tb.text(0), tb.text(1)};
        }
        points[i].testbed = it->second.fingerprint;
        points[i].testbed_name = it->second.name;
    }
    std::reverse(points.begin(), points.end());   // the query reads newest first
    return points;
}

std::vector<benchmark_info> store::benchmarks(std::string_view project) const
{
    impl::read_lease lease(*impl_);
    auto& c = *lease;
    transaction tx(c, transaction::kind::read);
    std::vector<benchmark_info> out;
    std::vector<std::int64_t> ids;
    {
        auto st = c.prepare("SELECT b.id, b.name, b.runs, b.last_run_at FROM benchmarks b "
                            "JOIN projects p ON p.id = b.project_id WHERE p.name = :project ORDER BY b.name");
        st.bind(":project", project);
        while (st.step()) {
            ids.push_back(st.int64(0));
            out.push_back({st.text(1), {}, st.int64(2), st.int64(3)});
        }
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
        auto st = c.prepare("SELECT c.name FROM benchmark_counters bc JOIN counters c ON c.id = bc.counter_id "
                            "WHERE bc.benchmark_id = :benchmark_id ORDER BY c.name");
        st.bind(":benchmark_id", ids[i]);
        while (st.step()) out[i].counters.push_back(st.text(0));
    }
    tx.commit();
    return out;
}

void store::check_integrity() const
{
    std::string verdict;
    try {
        impl::read_lease c(*impl_);
        auto st = (*c).prepare("PRAGMA quick_check(1)");
        verdict = st.step() ? st.text(0) : std::string("no answer");
    } catch (const error& e) {
        throw error("store.corrupt", fmt::format("{}: the database fails its integrity check: {}", impl_->path_, e.what()));
    }
    if (verdict != "ok") {
        throw error("store.corrupt", fmt::format("{}: the database fails its integrity check (PRAGMA quick_check): {}",
                                                 impl_->path_, verdict));
    }
}

void store::check_writable()
{
    std::lock_guard lock(impl_->writer_mu_);
    // A read-only file in a writable directory is opened read-only without
    // an error, and an empty transaction succeeds on it: ask SQLite.
    if (sqlite3_db_readonly(impl_->writer_->get(), "main") == 1) {
        throw error("store.read_only", fmt::format("{}: the database cannot be written: the file is read-only",
                                                   impl_->path_));
    }
    try {
        // A write transaction that writes nothing: it needs the file and its
        // WAL to be writable, and leaves the database as it was.
        impl_->writer_->exec("BEGIN IMMEDIATE");
        impl_->writer_->exec("ROLLBACK");
    } catch (const error& e) {
        throw error("store.read_only", fmt::format("{}: the database cannot be written: {}", impl_->path_, e.what()));
    }
}

std::int64_t store::runs_count() const
{
    // Sum of the per-benchmark counters kept by insert_run: O(benchmarks), not O(runs).
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT coalesce(sum(runs), 0) FROM benchmarks");
    st.step();
    return st.int64(0);
}

std::int64_t store::size_bytes() const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()");
    st.step();
    return st.int64(0);
}

} // namespace perfgate::store
