// The store: one set of queries over SQLite or PostgreSQL (store/db.hpp).
//
// Connections: store/store_impl.hpp (SQLite: one writer, a pool of
// readers, WAL; PostgreSQL: one pool). Every write runs in impl::write.
//
// Writes that two processes can race on are idempotent in the database:
// names (projects, benchmarks, testbeds, counters) are INSERT ... ON CONFLICT
// DO NOTHING and then read back, so on PostgreSQL the second of two
// replicas creating the same project waits for the first's commit and reads
// its row (read committed: each statement sees what was committed before it).
#include "store/store.hpp"

#include "store/history_sql.hpp"
#include "store/listing_sql.hpp"
#include "store/store_impl.hpp"
#include "store/migrations.hpp"
#include "store/postgres.hpp"
#include "store/sqlite.hpp"
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
#include <functional>
#include <numeric>
#include <limits>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace perfgate::store {

using detail::connection;
using detail::pg_connection;
using detail::sqlite_connection;
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
// PostgreSQL's counterpart: how long a statement waits for a row lock
// another transaction holds (lock_timeout), then fails (store.io).
constexpr int lock_timeout_ms = 5000;
// The advisory lock that migrations run under, so replicas starting together
// apply each migration once: "perfgate" in ASCII.
constexpr std::int64_t migration_lock_key = 0x7065726667617465;

// Tokens: 32 random bytes (256 bits, as GitHub's and most API tokens) in hex,
// with a prefix that makes a leaked token recognisable to secret scanners.
constexpr std::string_view token_prefix = "pg_";
constexpr std::size_t token_random_bytes = 32;
constexpr std::size_t token_length = token_prefix.size() + 2 * token_random_bytes;

} // namespace

// Helpers shared with the store's other sources (store/store_impl.hpp).
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

// A comparison's request key: a hex SHA-256, lowercase.
void check_request_key(std::string_view store_name, std::string_view request_key)
{
    const bool hex_digest = request_key.size() == 64 &&
                            std::all_of(request_key.begin(), request_key.end(), [](char ch) {
                                return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
                            });
    if (!hex_digest) {
        throw error("store.constraint",
                    fmt::format("{}: comparison request_key must be 64 lowercase hex digits (a SHA-256), got {}",
                                store_name, shown_name(request_key)));
    }
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
void configure_sqlite(connection& c, bool writer, bool memory)
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
        if (e.id() == "store.open" || e.id() == "store.corrupt") throw;
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
void migrate_sqlite(connection& c)
{
    const auto all = detail::migrations();
    const int latest = all.back().version;
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

// PostgreSQL's migrations (store/migrations/pg/), each in its own
// transaction with its row in perfgate_migrations (DDL is transactional
// there), all under a session advisory lock: replicas that start together
// take turns, and each finds the versions the first one applied.
void migrate_pg(connection& c)
{
    const auto all = detail::pg_migrations();
    const int latest = all.back().version;
    try {
        c.exec(fmt::format("SELECT pg_advisory_lock({})", migration_lock_key));
    } catch (const error& e) {
        throw error("store.migrate", fmt::format("cannot take the migration lock: {}", e.what()));
    }
    struct unlock_at_exit {
        connection& c;
        ~unlock_at_exit()
        {
            try {
                c.exec(fmt::format("SELECT pg_advisory_unlock({})", migration_lock_key));
            } catch (...) {
                // The session ends with the connection, and the lock with it.
            }
        }
    } unlock{c};
    int current = 0;
    try {
        c.exec("CREATE TABLE IF NOT EXISTS perfgate_migrations ("
               "version integer PRIMARY KEY, file text NOT NULL, applied_at bigint NOT NULL)");
        auto st = c.prepare("SELECT coalesce(max(version), 0) FROM perfgate_migrations");
        st.step();
        current = static_cast<int>(st.int64(0));
    } catch (const error& e) {
        throw error("store.migrate", fmt::format("cannot read the schema version: {}", e.what()));
    }
    if (current > latest) {
        throw error("store.migrate", fmt::format("{}: database schema version {} is newer than this perfgate "
                                                 "knows (version {}, pg/{}); upgrade perfgate",
                                                 c.path(), current, latest, all.back().file));
    }
    for (const auto& m : all) {
        if (m.version <= current) continue;
        try {
            transaction tx(c);
            c.exec(m.sql);
            c.prepare("INSERT INTO perfgate_migrations (version, file, applied_at) VALUES (:version, :file, :now)")
                .bind(":version", std::int64_t{m.version}).bind(":file", m.file).bind(":now", unix_now()).run();
            tx.commit();
        } catch (const error& e) {
            throw error("store.migrate", fmt::format("{}: migration pg/{} (to version {}) failed: {}", c.path(),
                                                     m.file, m.version, e.what()));
        }
    }
}

// Per-connection settings of a PostgreSQL session.
void configure_pg(connection& c)
{
    try {
        // UTF-8 both ways whatever the client's locale says; the lock wait of
        // SQLite's busy timeout.
        c.exec(fmt::format("SET client_encoding = 'UTF8'; SET lock_timeout = {}", lock_timeout_ms));
    } catch (const error& e) {
        throw error("store.open", e.what());
    }
}

std::string id_cache::key(kind k, std::string_view name, std::string_view scope)
{
    std::string out(1, static_cast<char>(k));
    out += scope;
    out += '\0';
    out += name;
    return out;
}

std::optional<std::int64_t> id_cache::find(kind k, std::string_view name, std::string_view scope) const
{
    const std::string wanted = key(k, name, scope);
    std::lock_guard lock(mu_);
    if (auto it = ids_.find(wanted); it != ids_.end()) return it->second;
    return std::nullopt;
}

void id_cache::put(kind k, std::string_view name, std::int64_t id, std::string_view scope)
{
    std::string entry = key(k, name, scope);
    std::lock_guard lock(mu_);
    if (ids_.size() >= max_entries) ids_.clear();
    ids_.emplace(std::move(entry), id);
}

std::optional<std::pair<std::string, std::string>> id_cache::testbed(std::int64_t id) const
{
    std::lock_guard lock(mu_);
    if (auto it = testbeds_.find(id); it != testbeds_.end()) return it->second;
    return std::nullopt;
}

void id_cache::put_testbed(std::int64_t id, std::string fingerprint, std::string name)
{
    std::lock_guard lock(mu_);
    if (testbeds_.size() >= max_entries) testbeds_.clear();
    testbeds_.emplace(id, std::pair{std::move(fingerprint), std::move(name)});
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

std::optional<std::int64_t> project_id(id_cache& ids, connection& c, std::string_view project, bool fill)
{
    if (auto id = ids.find(id_cache::kind::project, project)) return id;
    auto id = lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}});
    if (id && fill) ids.put(id_cache::kind::project, project, *id);
    return id;
}

std::optional<std::int64_t> counter_id(id_cache& ids, connection& c, std::string_view counter, bool fill)
{
    if (auto id = ids.find(id_cache::kind::counter, counter)) return id;
    auto id = lookup_id(c, "SELECT id FROM counters WHERE name = :name", {{":name", counter}});
    if (id && fill) ids.put(id_cache::kind::counter, counter, *id);
    return id;
}

std::optional<std::int64_t> benchmark_id(id_cache& ids, connection& c, std::string_view project,
                                         std::string_view benchmark, bool fill)
{
    if (auto id = ids.find(id_cache::kind::benchmark, benchmark, project)) return id;
    auto st = c.prepare("SELECT b.id FROM benchmarks b JOIN projects p ON p.id = b.project_id "
                        "WHERE p.name = :project AND b.name = :benchmark");
    st.bind(":project", project).bind(":benchmark", benchmark);
    if (!st.step()) return std::nullopt;
    const auto id = st.int64(0);
    if (fill) ids.put(id_cache::kind::benchmark, benchmark, id, project);
    return id;
}

} // namespace detail

namespace {

// The row named by a unique key, created when missing: SELECT, else INSERT
// ... ON CONFLICT DO NOTHING and SELECT again, which finds the row whether
// this transaction inserted it or another one committed it in between.
std::int64_t ensure_row(connection& c, std::string_view select, std::string_view insert,
                        const std::function<void(statement&)>& bind_key, const std::function<void(statement&)>& bind_rest)
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
    PERFGATE_CHECK(id.has_value());   // inserted, or the conflicting row is committed
    return *id;
}

std::int64_t ensure_project_row(connection& c, std::string_view project, std::int64_t now,
                                const detail::id_cache* ids = nullptr)
{
    if (ids) {
        if (auto id = ids->find(detail::id_cache::kind::project, project)) return *id;
    }
    return ensure_row(
        c, "SELECT id FROM projects WHERE name = :name",
        "INSERT INTO projects (name, created_at) VALUES (:name, :now) ON CONFLICT DO NOTHING",
        [&](statement& st) { st.bind(":name", project); }, [&](statement& st) { st.bind(":now", now); });
}

std::int64_t ensure_testbed_row(connection& c, const testbed_info& t)
{
    const std::string fp = model::fingerprint_of(t);
    return ensure_row(
        c, "SELECT id FROM testbeds WHERE fingerprint = :fp",
        "INSERT INTO testbeds (fingerprint, name, cpu, cores, kernel) "
        "VALUES (:fp, :name, :cpu, :cores, :kernel) ON CONFLICT DO NOTHING",
        [&](statement& st) { st.bind(":fp", fp); },
        [&](statement& st) {
            st.bind(":name", t.name).bind(":cpu", t.cpu).bind(":cores", std::int64_t{t.cores}).bind(":kernel", t.kernel);
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
            throw error("store.constraint", fmt::format("{}: run of benchmark {}: counter {} appears twice",
                                                        path, shown_name(run.benchmark), shown_name(cs.counter)));
        }
        std::unordered_set<int> repetitions;
        for (const auto& s : cs.samples) {
            const bool ok = (!s.value || std::isfinite(*s.value)) && std::isfinite(s.pcnt_running) &&
                            (!s.variance_pct || std::isfinite(*s.variance_pct));
            if (!ok) {
                throw error("store.constraint",
                            fmt::format("{}: run of benchmark {}: counter {} repetition {}: "
                                        "value, pcnt_running and variance_pct must be finite",
                                        path, shown_name(run.benchmark), shown_name(cs.counter), s.repetition));
            }
            // The samples table's key, checked here so that the message
            // names the counter (PostgreSQL inserts a run's samples in one
            // statement: its own message could not).
            if (!repetitions.insert(s.repetition).second) {
                throw error("store.constraint", fmt::format("{}: run of benchmark {}: counter {} repetition {} "
                                                            "appears twice",
                                                            path, shown_name(run.benchmark), shown_name(cs.counter),
                                                            s.repetition));
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
        .bind(":run_id", run_id).bind(":counters", counters).bind(":repetitions", repetitions)
        .bind(":values", values).bind(":pcnt", pcnt).bind(":variance", variance).run();
}

} // namespace

bool is_postgres(std::string_view db) noexcept { return detail::is_postgres_uri(db); }

std::string shown_location(std::string_view db)
{
    return is_postgres(db) ? detail::redacted_uri(db) : std::string(db);
}

store::store(const std::string& db, store_options options) : impl_(std::make_unique<impl>())
{
    auto& s = *impl_;
    s.location_ = db;
    s.name_ = shown_location(db);
    if (is_postgres(db)) {
        s.engine_ = detail::engine::postgresql;
        s.max_pooled_ = options.connections ? options.connections : detail::default_pg_connections;
        auto first = s.open_pooled();
        migrate_pg(*first);
        s.idle_.push_back(std::move(first));
        s.open_ = 1;
        s.listener_ = std::make_unique<detail::pg_listener>(s.location_, s.name_);
        return;
    }
    s.memory_ = is_memory(db);
    auto writer = std::make_unique<sqlite_connection>(db, sqlite_connection::mode::read_write_create);
    configure_sqlite(*writer, true, s.memory_);
    migrate_sqlite(*writer);
    if (options.background_checkpoints && !s.memory_) {
        s.checkpointer_ = std::make_unique<detail::wal_checkpointer>(*writer, s.writer_mu_, db);
    }
    s.writer_ = std::move(writer);
}

store::~store() = default;

std::uint64_t store::background_checkpoints() const noexcept
{
    return impl_->checkpointer_ ? impl_->checkpointer_->completed() : 0;
}

std::unique_ptr<connection> store::impl::open_pooled() const
{
    if (sqlite()) {
        auto c = std::make_unique<sqlite_connection>(location_, sqlite_connection::mode::read_only);
        configure_sqlite(*c, false, false);
        return c;
    }
    auto c = std::make_unique<pg_connection>(location_, name_);
    configure_pg(*c);
    return c;
}

bool store::impl::reusable(connection& c) const noexcept
{
    return sqlite() || !static_cast<pg_connection&>(c).broken();
}

std::uint64_t store::generation() const noexcept
{
    const std::uint64_t own = impl_->generation_.load(std::memory_order_acquire);
    return impl_->listener_ ? own + impl_->listener_->notifications() : own;
}

struct store::read_scope::state {
    explicit state(const impl& s) : lease(s), tx(*lease) {}
    impl::read_lease lease;
    detail::scoped_read tx;
};

store::read_scope::read_scope(const store& db)
{
    const impl& s = *db.impl_;
    if (detail::current_read_scope.owner || (s.sqlite() && s.memory_)) return;
    state_ = std::make_unique<state>(s);
    detail::current_read_scope = {&s, &*state_->lease};
}

store::read_scope::~read_scope()
{
    if (!state_) return;
    detail::current_read_scope = {};
    state_.reset();
}

std::string_view store::engine() const noexcept { return impl_->sqlite() ? "sqlite" : "postgresql"; }

const std::string& store::location() const noexcept { return impl_->name_; }

std::int64_t store::ensure_project(std::string_view project)
{
    return impl_->write([&](connection& c) { return ensure_project_row(c, project, unix_now()); });
}

bool store::project_exists(std::string_view project) const
{
    impl::read_lease c(*impl_);
    return detail::project_id(impl_->ids_, *c, project, true).has_value();
}

std::string store::create_token(std::string_view project, std::string_view name)
{
    std::array<unsigned char, token_random_bytes> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
        throw error("store.io", fmt::format("{}: cannot create a token: OpenSSL RAND_bytes failed", impl_->name_));
    }
    std::string token = std::string(token_prefix) + model::to_hex(bytes.data(), bytes.size());
    OPENSSL_cleanse(bytes.data(), bytes.size());
    const std::string hash = sha256_hex(token);

    impl_->write([&](connection& c) {
        const auto now = unix_now();
        const auto project_id = ensure_project_row(c, project, now);
        c.prepare("INSERT INTO api_tokens (project_id, name, sha256, created_at) "
                  "VALUES (:project_id, :name, :sha256, :now)")
            .bind(":project_id", project_id).bind(":name", name).bind(":sha256", hash).bind(":now", now).run();
    });
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

namespace {

// insert_run's body, in its write transaction.
// ids: names' ids known from committed reads (never filled here: this
// transaction may roll back).
std::int64_t insert_run_rows(connection& c, const run_record& run, const detail::id_cache& ids)
{
    const std::int64_t created_at = run.created_at != 0 ? run.created_at : unix_now();
    const auto project_id = ensure_project_row(c, run.project, created_at, &ids);
    const auto benchmark_id = ensure_benchmark_row(c, project_id, run.project, run.benchmark, &ids);
    const auto testbed_id = ensure_testbed_row(c, run.testbed);

    auto with_counter = [&](const counter_samples& cs, auto&& body) {
        try {
            body();
        } catch (const error& e) {
            throw error(e.id(), fmt::format("{} (run of benchmark {}, counter {})", e.what(),
                                            shown_name(run.benchmark), shown_name(cs.counter)));
        }
    };
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
        with_counter(run.counters[i], [&] { counter_ids[i] = ensure_counter_row(c, run.counters[i].counter, &ids); });
    }
    auto ins_bc = c.prepare("INSERT INTO benchmark_counters (benchmark_id, counter_id) "
                            "VALUES (:benchmark_id, :counter_id) ON CONFLICT DO NOTHING");
    ins_bc.bind(":benchmark_id", benchmark_id);
    for (const auto i : by_name) ins_bc.bind(":counter_id", counter_ids[i]).run();

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
    // The run-level columns copied into every summary row (see 001_initial.sql).
    ins_summary.bind(":run_id", run_id).bind(":benchmark_id", benchmark_id)
        .bind(":testbed_id", testbed_id).bind(":branch", run.branch).bind(":role", run.role)
        .bind(":git_sha", run.git_sha).bind(":created_at", created_at);
    ins_sample.bind(":run_id", run_id);

    const bool at_once = c.kind() == detail::engine::postgresql;
    if (at_once) insert_samples_at_once(c, run_id, run, counter_ids);
    std::vector<double> values;
    for (std::size_t ordinal = 0; ordinal < run.counters.size(); ++ordinal) {
        const auto& cs = run.counters[ordinal];
        with_counter(cs, [&] {
            const auto counter_id = counter_ids[ordinal];
            values.clear();
            ins_sample.bind(":counter_id", counter_id);
            for (const auto& s : cs.samples) {
                if (!at_once) {
                    ins_sample.bind(":repetition", std::int64_t{s.repetition}).bind(":value", s.value)
                        .bind(":pcnt_running", s.pcnt_running).bind(":variance_pct", s.variance_pct);
                    ins_sample.run();
                }
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
        });
    }

    // The benchmark's row last: on PostgreSQL its row lock is what orders
    // concurrent runs of one benchmark, held for the commit only.
    c.prepare("UPDATE benchmarks SET runs = runs + 1, last_run_at = "
              "CASE WHEN last_run_at > :created_at THEN last_run_at ELSE :created_at END "
              "WHERE id = :benchmark_id")
        .bind(":created_at", created_at).bind(":benchmark_id", benchmark_id).run();
    return run_id;
}

} // namespace

std::int64_t store::insert_run(const run_record& run)
{
    validate_values(impl_->name_, run);
    // Rolls back on any exception: nothing is stored.
    return impl_->write([&](connection& c) { return insert_run_rows(c, run, impl_->ids_); });
}

store::keyed_run store::insert_run(const run_record& run, std::string_view key, std::string_view request_sha256)
{
    validate_values(impl_->name_, run);
    return impl_->write([&](connection& c) -> keyed_run {
        const auto project_id = ensure_project_row(c, run.project, unix_now(), &impl_->ids_);
        // The key first: a concurrent claim of the same key waits here for
        // this transaction (PostgreSQL: the unique key; SQLite: the write
        // lock), then finds the key with its run.
        auto claim = c.prepare("INSERT INTO ingest_keys (project_id, key, request_sha256, run_id, created_at) "
                               "VALUES (:project_id, :key, :sha256, NULL, :now) ON CONFLICT DO NOTHING RETURNING 1");
        claim.bind(":project_id", project_id).bind(":key", key).bind(":sha256", request_sha256)
            .bind(":now", unix_now());
        const bool claimed = claim.step();
        claim.run();
        if (!claimed) {
            auto st = c.prepare("SELECT request_sha256, run_id FROM ingest_keys "
                                "WHERE project_id = :project_id AND key = :key");
            st.bind(":project_id", project_id).bind(":key", key);
            const bool found = st.step();
            PERFGATE_CHECK(found);             // the conflicting row is committed
            PERFGATE_CHECK(!st.is_null(1));    // and has its run: both go in one transaction
            if (st.text(0) != request_sha256) {
                throw error("store.key_conflict",
                            fmt::format("{}: idempotency key {} of project {} was used for another request",
                                        impl_->name_, shown_name(key), shown_name(run.project)));
            }
            return {st.int64(1), true};
        }
        const auto run_id = insert_run_rows(c, run, impl_->ids_);
        c.prepare("UPDATE ingest_keys SET run_id = :run_id WHERE project_id = :project_id AND key = :key")
            .bind(":run_id", run_id).bind(":project_id", project_id).bind(":key", key).run();
        return {run_id, false};
    });
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
    return insert_comparison_row(project, baseline_run, candidate_run, report_json, std::nullopt, std::nullopt);
}

std::int64_t store::insert_comparison(std::string_view project, std::int64_t baseline_run,
                                      std::int64_t candidate_run, std::string_view report_json,
                                      std::string_view request_key, const std::optional<report_facts>& facts)
{
    check_request_key(impl_->name_, request_key);
    return insert_comparison_row(project, baseline_run, candidate_run, report_json, std::string(request_key), facts);
}

std::vector<std::int64_t> store::insert_comparisons(std::span<const comparison_row> rows)
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
            ids[i] = insert_comparison_on(c, row.project, row.baseline_run, row.candidate_run, row.report_json, keys[i],
                                          report_facts{row.verdict, row.benchmark_count});
        }
        return ids;
    });
}

std::int64_t store::insert_comparison_row(std::string_view project, std::int64_t baseline_run,
                                          std::int64_t candidate_run, std::string_view report_json,
                                          const std::optional<std::string>& request_key,
                                          const std::optional<report_facts>& facts)
{
    return impl_->write([&](connection& c) {
        return insert_comparison_on(c, project, baseline_run, candidate_run, report_json, request_key, facts);
    });
}

std::int64_t store::insert_comparison_on(connection& c, std::string_view project, std::int64_t baseline_run,
                                         std::int64_t candidate_run, std::string_view report_json,
                                         const std::optional<std::string>& request_key,
                                         const std::optional<report_facts>& facts)
{
    const auto project_id = detail::project_id(impl_->ids_, c, project, false);
    if (!project_id) {
        throw error("store.not_found", fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
    }
    {
        // Both runs in one statement (a round trip on PostgreSQL), by
        // primary key; the project is checked here. "WHERE project_id =
        // ? AND id IN (...)" let SQLite's planner pick runs_project_sha
        // and walk every run of the project (comparison_runs_sql).
        auto st = c.prepare(detail::comparison_runs_sql);
        st.bind(":baseline", baseline_run).bind(":candidate", candidate_run);
        std::vector<std::int64_t> found;
        while (st.step()) {
            if (st.int64(1) == *project_id) found.push_back(st.int64(0));
        }
        for (const auto run : {baseline_run, candidate_run}) {
            if (std::find(found.begin(), found.end(), run) == found.end()) {
                throw error("store.not_found", fmt::format("{}: run {} not found in project {}", impl_->name_, run,
                                                           shown_name(project)));
            }
        }
    }
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
        auto st = c.prepare(facts ? std::string_view(
            "INSERT INTO comparisons (project_id, baseline_run, candidate_run, report, created_at, request_key, "
            "verdict, benchmark_count) "
            "VALUES (:project_id, :baseline, :candidate, :report, :now, :request_key, :verdict, :benchmark_count) "
            "ON CONFLICT DO NOTHING RETURNING id") : c.pick({
            "INSERT INTO comparisons (project_id, baseline_run, candidate_run, report, created_at, request_key, "
            "verdict, benchmark_count) "
            "VALUES (:project_id, :baseline, :candidate, :report, :now, :request_key, "
            "CASE WHEN json_valid(:report) AND json_extract(:report, '$.verdict') IN ('pass', 'fail', "
            "'inconclusive') THEN json_extract(:report, '$.verdict') END, "
            "CASE WHEN json_valid(:report) AND json_type(:report, '$.benchmarks') = 'array' "
            "THEN json_array_length(:report, '$.benchmarks') END) "
            "ON CONFLICT DO NOTHING RETURNING id",
            "INSERT INTO comparisons (project_id, baseline_run, candidate_run, report, created_at, request_key, "
            "verdict, benchmark_count) "
            "SELECT :project_id::bigint, :baseline::bigint, :candidate::bigint, :report::text, :now::bigint, "
            ":request_key::text, s.verdict, s.benchmark_count "
            "FROM perfgate_report_summary(:report) s "
            "ON CONFLICT DO NOTHING RETURNING id",
        }));
        st.bind(":project_id", *project_id).bind(":baseline", baseline_run).bind(":candidate", candidate_run)
            .bind(":report", report_json).bind(":now", unix_now()).bind(":request_key", request_key);
        if (facts) st.bind(":verdict", facts->verdict).bind(":benchmark_count", facts->benchmark_count);
        if (st.step()) id = st.int64(0);
        st.run();
    }
    if (!id) {
        auto st = c.prepare(
            "SELECT id FROM comparisons WHERE project_id = :project_id AND request_key = :request_key");
        st.bind(":project_id", *project_id).bind(":request_key", request_key);
        // Only a key can conflict (id is fresh), so the row is there.
        const bool found = request_key && st.step();
        PERFGATE_CHECK(found);
        id = st.int64(0);
    }
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

namespace {

// One row of history_sql.hpp's columns, from column `first` on; the
// testbed's id goes to testbed_id (named after the query). Not full: the
// medians variant's row (run_id, median, testbed_id; history_sql.hpp).
history_point history_point_of(const statement& st, int first, std::int64_t& testbed_id, bool full)
{
    history_point p;
    p.run_id = st.int64(first);
    if (!full) {   // the medians variant's columns
        p.median = st.real(first + 1);
        testbed_id = st.int64(first + 2);
        return p;
    }
    p.median = st.real(first + 5);
    testbed_id = st.int64(first + 11);
    p.git_sha = st.text(first + 1);
    p.branch = st.text(first + 2);
    p.created_at = st.int64(first + 3);
    p.n = static_cast<std::size_t>(st.int64(first + 4));
    p.mean = st.real(first + 6);
    p.stddev = st.opt_real(first + 7);
    p.cov = st.opt_real(first + 8);
    p.min = st.opt_real(first + 9);
    p.max = st.opt_real(first + 10);
    return p;
}

// A PostgreSQL array literal of texts: each element double-quoted, '"' and
// '\' escaped (PostgreSQL, 8.15.6 "Array Input and Output Syntax").
std::string text_array(const std::vector<std::string>& items)
{
    std::string out = "{";
    for (const auto& item : items) {
        if (out.size() > 1) out += ',';
        out += '"';
        for (const char ch : item) {
            if (ch == '"' || ch == '\\') out += '\\';
            out += ch;
        }
        out += '"';
    }
    return out + "}";
}

// The ids of counter names (nullopt: no such counter), through the cache;
// on PostgreSQL the names it does not know in one statement.
std::vector<std::optional<std::int64_t>> counter_ids_of(detail::id_cache& ids, connection& c,
                                                        const std::vector<std::string>& names)
{
    std::vector<std::optional<std::int64_t>> out(names.size());
    std::vector<std::string> unknown;
    for (std::size_t i = 0; i < names.size(); ++i) {
        out[i] = ids.find(detail::id_cache::kind::counter, names[i]);
        if (!out[i]) unknown.push_back(names[i]);
    }
    if (unknown.empty()) return out;
    if (c.kind() == detail::engine::sqlite) {
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (!out[i]) out[i] = detail::counter_id(ids, c, names[i], true);
        }
        return out;
    }
    auto st = c.prepare("SELECT name, id FROM counters WHERE name = ANY (:names::text[])");
    st.bind(":names", text_array(unknown));
    std::unordered_map<std::string, std::int64_t> found;
    while (st.step()) found.emplace(st.text(0), st.int64(1));
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (out[i]) continue;
        if (auto it = found.find(names[i]); it != found.end()) {
            out[i] = it->second;
            ids.put(detail::id_cache::kind::counter, names[i], it->second);
        }
    }
    return out;
}

} // namespace

std::vector<history_point> store::history(const history_query& q) const
{
    return std::move(histories(q, {q.counter}).front());
}

std::vector<std::vector<history_point>> store::histories(const history_query& q,
                                                         const std::vector<std::string>& counters,
                                                         history_detail detail) const
{
    const bool full = detail == history_detail::full;
    std::vector<std::vector<history_point>> out(counters.size());
    if (q.limit == 0 || counters.empty()) return out;

    impl::read_lease lease(*impl_);
    auto& c = *lease;
    transaction tx(c, transaction::kind::read);

    const auto benchmark_id = detail::benchmark_id(impl_->ids_, c, q.project, q.benchmark, true);
    if (!benchmark_id) return out;
    std::vector<std::optional<std::int64_t>> counter_ids = counter_ids_of(impl_->ids_, c, counters);

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
        if (ids.empty()) return out;
        if (ids.size() == 1) {
            which = detail::history_index::testbed;
            testbed_id = ids.front();
        }
    }
    auto bind_filters = [&](statement& st) {
        st.bind(":benchmark_id", *benchmark_id).bind(":branch", q.branch).bind(":testbed", q.testbed)
            .bind(":testbed_id", testbed_id).bind(":role", q.role)
            .bind(":since", q.since.value_or(std::numeric_limits<std::int64_t>::min()))
            .bind(":before_run", q.before_run.value_or(std::numeric_limits<std::int64_t>::max()))
            .bind(":limit", to_int64(q.limit));
    };

    std::vector<std::vector<std::int64_t>> testbed_ids(counters.size());   // parallel to out
    if (c.kind() == detail::engine::sqlite) {
        // A statement is a function call here: one per counter.
        auto st = c.prepare(detail::history_sql(which, detail::engine::sqlite, !full));
        bind_filters(st);
        for (std::size_t i = 0; i < counters.size(); ++i) {
            if (!counter_ids[i]) continue;
            st.bind(":counter_id", *counter_ids[i]);
            while (st.step()) {
                std::int64_t tb = 0;
                out[i].push_back(history_point_of(st, 0, tb, full));
                testbed_ids[i].push_back(tb);
            }
            st.reset();
        }
    } else {
        // PostgreSQL: every counter in one statement, a round trip saved per
        // counter (history_sql.hpp, history_batch_sql).
        std::string ids = "{";
        std::vector<std::size_t> slot;   // array position -> index in counters
        for (std::size_t i = 0; i < counters.size(); ++i) {
            if (!counter_ids[i]) continue;
            ids += fmt::format("{}{}", slot.empty() ? "" : ",", *counter_ids[i]);
            slot.push_back(i);
        }
        ids += '}';
        if (!slot.empty()) {
            auto st = c.prepare(detail::history_batch_sql(which, !full));
            bind_filters(st);
            st.bind(":counter_ids", ids);
            while (st.step()) {
                const auto at = slot.at(static_cast<std::size_t>(st.int64(0) - 1));   // WITH ORDINALITY: 1-based
                std::int64_t tb = 0;
                out[at].push_back(history_point_of(st, 1, tb, full));
                testbed_ids[at].push_back(tb);
            }
        }
    }

    // Name each point's testbed with one lookup per distinct testbed (a
    // series spans a few at most; the names are cached) rather than a join,
    // which would take the query off its covering index.
    struct testbed_names {
        std::string fingerprint, name;
    };
    std::unordered_map<std::int64_t, testbed_names> testbeds;
    for (std::size_t k = 0; k < out.size(); ++k) {
        auto& points = out[k];
        for (std::size_t i = 0; full && i < points.size(); ++i) {
            auto [it, fresh] = testbeds.try_emplace(testbed_ids[k][i]);
            if (fresh) {
                if (auto known = impl_->ids_.testbed(testbed_ids[k][i])) {
                    it->second = {std::move(known->first), std::move(known->second)};
                } else {
                    auto tb = c.prepare("SELECT fingerprint, name FROM testbeds WHERE id = :id");
                    tb.bind(":id", testbed_ids[k][i]);
                    const bool found = tb.step();
                    PERFGATE_CHECK(found);   // summaries.testbed_id is copied from runs.testbed_id, a foreign key
                    it->second = {tb.text(0), tb.text(1)};
                    impl_->ids_.put_testbed(testbed_ids[k][i], it->second.fingerprint, it->second.name);
                }
            }
            points[i].testbed = it->second.fingerprint;
            points[i].testbed_name = it->second.name;
        }
        std::reverse(points.begin(), points.end());   // the query reads newest first
    }
    return out;
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
    // PostgreSQL checks its pages as it reads them (and with data checksums,
    // initdb -k); what is left to check here is that it answers.
    const char* sql = impl_->sqlite() ? "PRAGMA quick_check(1)" : "SELECT 'ok'";
    std::string verdict;
    try {
        impl::read_lease c(*impl_);
        auto st = (*c).prepare(sql);
        verdict = st.step() ? st.text(0) : std::string("no answer");
    } catch (const error& e) {
        throw error("store.corrupt", fmt::format("{}: the database fails its integrity check: {}", impl_->name_, e.what()));
    }
    if (verdict != "ok") {
        throw error("store.corrupt", fmt::format("{}: the database fails its integrity check (PRAGMA quick_check): {}",
                                                 impl_->name_, verdict));
    }
}

void store::check_writable()
{
    if (!impl_->sqlite()) {
        // A hot standby, or a role or database whose transactions default to
        // read-only: every write would fail.
        impl::lease c(*impl_, true);
        auto st = (*c).prepare("SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only')");
        const bool answered = st.step();
        PERFGATE_CHECK(answered);
        const std::string standby = st.text(0), read_only = st.text(1);
        if (standby == "t") {
            throw error("store.read_only", fmt::format("{}: the database cannot be written: the server is a standby "
                                                       "(in recovery); point --db at the primary",
                                                       impl_->name_));
        }
        if (read_only == "on") {
            throw error("store.read_only", fmt::format("{}: the database cannot be written: "
                                                       "default_transaction_read_only is on",
                                                       impl_->name_));
        }
        return;
    }
    std::lock_guard lock(impl_->writer_mu_);
    auto& writer = static_cast<sqlite_connection&>(*impl_->writer_);
    // A read-only file in a writable directory is opened read-only without
    // an error, and an empty transaction succeeds on it: ask SQLite.
    if (sqlite3_db_readonly(writer.get(), "main") == 1) {
        throw error("store.read_only", fmt::format("{}: the database cannot be written: the file is read-only",
                                                   impl_->name_));
    }
    try {
        // A write transaction that writes nothing: it needs the file and its
        // WAL to be writable, and leaves the database as it was.
        writer.exec("BEGIN IMMEDIATE");
        writer.exec("ROLLBACK");
    } catch (const error& e) {
        throw error("store.read_only", fmt::format("{}: the database cannot be written: {}", impl_->name_, e.what()));
    }
}

int store::schema_version() const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare((*c).pick({"PRAGMA user_version", "SELECT coalesce(max(version), 0) FROM perfgate_migrations"}));
    st.step();
    return static_cast<int>(st.int64(0));
}

void store::backup_to(const std::filesystem::path& file) const
{
    if (!impl_->sqlite()) {
        throw error("store.unsupported",
                    fmt::format("{}: a PostgreSQL database is backed up with pg_dump, e.g. pg_dump --format=custom "
                                "--file {} '{}' (restore: pg_restore --dbname URI {})",
                                impl_->name_, file.string(), impl_->name_, file.string()));
    }
    if (impl_->memory_) {
        throw error("store.backup", fmt::format("{}: an in-memory database has no backup", impl_->name_));
    }
    std::error_code ec;
    if (std::filesystem::exists(file, ec)) {
        throw error("store.backup", fmt::format("{}: the backup file exists already; perfgate never overwrites one",
                                                file.string()));
    }
    const std::filesystem::path tmp = file.string() + ".tmp";
    std::filesystem::remove(tmp, ec);
    try {
        {
            sqlite_connection dest(tmp.string(), sqlite_connection::mode::read_write_create);
            impl::read_lease source(*impl_);
            auto& from = static_cast<sqlite_connection&>(*source);
            sqlite3_backup* b = sqlite3_backup_init(dest.get(), "main", from.get(), "main");
            if (!b) dest.fail(sqlite3_errcode(dest.get()), "starting the backup", "store.backup");
            // All pages in one step: one read snapshot of the source (WAL:
            // writers go on meanwhile), so the copy is consistent.
            const int rc = sqlite3_backup_step(b, -1);
            sqlite3_backup_finish(b);
            if (rc != SQLITE_DONE) dest.fail(rc, "copying the database", "store.backup");
            auto check = dest.prepare("PRAGMA quick_check(1)");
            const std::string verdict = check.step() ? check.text(0) : std::string("no answer");
            if (verdict != "ok") {
                throw error("store.backup", fmt::format("{}: the copy fails its integrity check: {}", tmp.string(), verdict));
            }
        }
        std::filesystem::rename(tmp, file);
    } catch (const std::filesystem::filesystem_error& e) {
        std::filesystem::remove(tmp, ec);
        throw error("store.backup", fmt::format("{}: {}", file.string(), e.what()));
    } catch (const error& e) {
        std::filesystem::remove(tmp, ec);
        throw error("store.backup", fmt::format("backup of {} to {} failed: {}", impl_->name_, file.string(), e.what()));
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
    auto st = (*c).prepare((*c).pick({"SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
                                      "SELECT pg_database_size(current_database())"}));
    st.step();
    return st.int64(0);
}

} // namespace perfgate::store
