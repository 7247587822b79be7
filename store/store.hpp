// The history store: SQLite (the default, embedded) or PostgreSQL (several
// servers on one database), chosen by the --db value, with migrations for
// both. One store class and one set of queries serve both engines
// (store/db.hpp); the SQL differs only where the dialects do.
//
// All SQL is prepared statements with bound parameters; no SQL is built from
// user strings. Ingesting a run is one transaction that rolls back unless it
// commits. Per-run counter summaries are computed at ingest so that history
// queries never scan raw samples.
//
// Thread safety: one store object may be shared by many threads (the server's
// workers). SQLite: writes are serialised on one writer connection (a
// mutex); reads use a pool of up to 8 read-only connections and run
// concurrently with each other and with the writer (WAL snapshots). ":memory:"
// is a single connection (a private database per connection), so there reads
// and writes share the writer's mutex. Other processes on the same file are
// handled by WAL and a 5 s busy timeout. PostgreSQL: a pool of
// store_options::connections connections for reads and writes; other
// processes (replicas) are ordinary concurrent clients of the server, and
// every write that two of them could race on (a project, a testbed, a
// comparison key, an idempotency key, an alert) is made idempotent by a
// unique key or a lock in the database, not in this process.
//
// Schema: store/migrations/NNN_*.sql (SQLite; PRAGMA user_version is the
// number of the last one applied) and store/migrations/pg/NNN_*.sql
// (PostgreSQL; table perfgate_migrations), embedded at build time and
// applied in order on open. On PostgreSQL they run under an advisory lock,
// so replicas that start together apply each one once.
//
// Errors: perfgate::error with ids "store.open", "store.migrate",
// "store.constraint", "store.not_found", "store.io", "store.conflict" (a
// PostgreSQL transaction aborted as a deadlock victim more often than
// retried), "store.key_conflict" (an idempotency key reused for another
// request).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/run.hpp"

namespace perfgate::store {

namespace detail {
class connection;
struct store_impl; // store/store_impl.hpp
} // namespace detail

// The store's facets, one per resource (each header says what it does).
class acceptances;    // store/acceptances.hpp
class alerts;         // store/alerts.hpp
class artifacts;      // store/artifacts.hpp
class comparisons;    // store/comparisons.hpp
class history;        // store/history.hpp
class maintenance;    // store/maintenance.hpp
class projects;       // store/projects.hpp
class qualifications; // store/qualifications.hpp
class runs;           // store/runs.hpp
class tokens;         // store/tokens.hpp
class webhooks;       // store/webhooks.hpp

// The store speaks the shared domain types (model/run.hpp).
using model::benchmark_info;
using model::counter_samples;
using model::counter_summary;
using model::history_point;
using model::history_query;
using model::reusable_run;
using model::reusable_run_query;
using model::run_record;
using model::sample;
using model::testbed_info;

// Whether a --db value names a PostgreSQL database (a postgresql:// or
// postgres:// URI, as libpq reads it) rather than a SQLite file.
bool is_postgres(std::string_view db) noexcept;
// The --db value as messages and logs show it: a URI without its password.
std::string shown_location(std::string_view db);

struct store_options {
    // PostgreSQL: connections in the pool (0: detail::default_pg_connections).
    // `perfgate serve` passes its worker count plus one (the history watch).
    // SQLite ignores it (one writer, up to 8 readers).
    std::size_t connections = 0;
    // SQLite files: checkpoint the WAL on a thread of the store's own
    // (detail::wal_checkpointer), not inside the commit of whichever write
    // crossed SQLite's threshold, which held the write lock meanwhile.
    // `perfgate serve` sets it; PostgreSQL and ":memory:" ignore it.
    bool background_checkpoints = false;
};

class store {
public:
    // Opens the database and applies pending migrations. db is a SQLite file
    // (created if missing; ":memory:" for tests) or a PostgreSQL URI
    // ("postgresql://user@host:5432/perfgate", libpq's syntax; the database
    // must exist, its tables are created).
    // Errors: "store.open" (cannot open, not a database, server unreachable,
    // login refused), "store.corrupt" (SQLite: a damaged page read while
    // opening), "store.migrate" (a migration failed, or the database's
    // schema is newer than this build knows).
    explicit store(const std::string& db, store_options options = {});
    ~store();
    store(const store&) = delete;
    store& operator=(const store&) = delete;

    // The store by resource, grouped as the HTTP route table groups routes
    // (server/routes.hpp): db.tokens().create(...), db.runs().load(...).
    // Include the facet's header to call it. A const store gives const
    // facets: their reads only.
    perfgate::store::projects& projects() noexcept;
    [[nodiscard]] const perfgate::store::projects& projects() const noexcept;
    perfgate::store::tokens& tokens() noexcept;
    [[nodiscard]] const perfgate::store::tokens& tokens() const noexcept;
    perfgate::store::webhooks& webhooks() noexcept;
    [[nodiscard]] const perfgate::store::webhooks& webhooks() const noexcept;
    perfgate::store::acceptances& acceptances() noexcept;
    [[nodiscard]] const perfgate::store::acceptances& acceptances() const noexcept;
    perfgate::store::qualifications& qualifications() noexcept;
    [[nodiscard]] const perfgate::store::qualifications& qualifications() const noexcept;
    perfgate::store::runs& runs() noexcept;
    [[nodiscard]] const perfgate::store::runs& runs() const noexcept;
    perfgate::store::comparisons& comparisons() noexcept;
    [[nodiscard]] const perfgate::store::comparisons& comparisons() const noexcept;
    perfgate::store::history& history() noexcept;
    [[nodiscard]] const perfgate::store::history& history() const noexcept;
    perfgate::store::alerts& alerts() noexcept;
    [[nodiscard]] const perfgate::store::alerts& alerts() const noexcept;
    perfgate::store::artifacts& artifacts() noexcept;
    [[nodiscard]] const perfgate::store::artifacts& artifacts() const noexcept;
    perfgate::store::maintenance& maintenance() noexcept;
    [[nodiscard]] const perfgate::store::maintenance& maintenance() const noexcept;

    // "sqlite" or "postgresql".
    [[nodiscard]] std::string_view engine() const noexcept;
    // The database as messages name it (shown_location of db).
    [[nodiscard]] const std::string& location() const noexcept;
    // Moves with every write this store object committed (any write
    // method), never backwards: equal generations, equal data as far as
    // this process wrote it. SQLite: other processes' writes are not seen.
    // PostgreSQL: it also moves when any process commits a write to the
    // database (LISTEN/NOTIFY, a few milliseconds after the commit).
    [[nodiscard]] std::uint64_t generation() const noexcept;

    // One snapshot for a request's reads. While a read_scope of this store
    // lives, every read of the store on the constructing thread runs on one
    // connection inside one read transaction: SQLite takes its WAL snapshot
    // and read lock once, not once per statement (each new snapshot also
    // throws away the connection's page cache when anyone has committed
    // since); PostgreSQL keeps one pooled connection (its reads stay
    // statement-level). The reads see the store as of the scope's first
    // read. A write to the store from that thread meanwhile is an error
    // ("internal"): on PostgreSQL it would wait for a second pooled
    // connection while holding one. A scope inside another on the same
    // thread, and a scope of a ":memory:" store (one connection for all),
    // change nothing. Keep scopes short: an open SQLite snapshot holds back
    // checkpoints past it.
    class read_scope {
    public:
        explicit read_scope(const store& db);
        read_scope(const read_scope&) = delete;
        read_scope& operator=(const read_scope&) = delete;
        ~read_scope();

    private:
        struct state;
        std::unique_ptr<state> state_;
    };

private:
    std::unique_ptr<detail::store_impl> impl_;
};

} // namespace perfgate::store
