// The store's connections and lifecycle: opening a database (SQLite or
// PostgreSQL, store/db.hpp), each connection's settings, the pool, the
// generation and read scopes; and the small helpers every source shares.
//
// Connections: store/store_impl.hpp (SQLite: one writer, a pool of
// readers, WAL; PostgreSQL: one pool). Every write runs in impl::write.
//
// The store's queries live in one source per concept, each behind a facet
// (store.hpp's accessors; the header named in brackets):
//   migrate.cpp      the schema migrations, per engine (maintenance.hpp: schema_version)
//   id_cache.cpp     the ids of names (projects, benchmarks, counters, testbeds)
//   projects.cpp     projects and their API tokens (projects.hpp, tokens.hpp)
//   ingest.cpp       storing runs and loading them back (runs.hpp)
//   comparisons.cpp  stored comparison reports (comparisons.hpp)
//   history.cpp      a benchmark's series and its list of counters (history.hpp)
//   maintenance.cpp  integrity and writability checks, backups, sizes (maintenance.hpp)
//   alerts.cpp       project settings, change points and alerts (projects.hpp, alerts.hpp)
//   listing.cpp      the dashboard's listings: recent comparisons, runs by id or sha
//                    (comparisons.hpp, runs.hpp)
//   artifacts.cpp    a comparison's artifacts (flame graphs, attributions; artifacts.hpp)
//   acceptances.cpp  reviewers' acceptances of a regression (acceptances.hpp)
//   qualifications.cpp  perfgate qualify's figures per testbed and benchmark (qualifications.hpp)
//   webhooks.cpp     alert webhooks and their deliveries (webhooks.hpp)
//   prune.cpp        retention: pruning, giving space back, a project's
//                    retention (maintenance.hpp, projects.hpp, prune.hpp)
// and the engines below them: db.cpp (the statement layer), sqlite.cpp,
// postgres.cpp.
#include "store/store.hpp"

#include "model/error.hpp"
#include "store/postgres.hpp"
#include "store/sqlite.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>

namespace perfgate::store {

using detail::connection;
using detail::pg_connection;
using detail::sqlite_connection;

namespace {

// How long a connection waits for another process's write lock before
// failing with "database is locked" (store.io). Ingest transactions take
// milliseconds; 5 s absorbs a checkpoint or a slow disk without hanging a
// request for long.
constexpr int busy_timeout_ms = 5000;
// PostgreSQL's counterpart: how long a statement waits for a row lock
// another transaction holds (lock_timeout), then fails (store.io).
constexpr int lock_timeout_ms = 5000;

} // namespace

// Helpers shared with the store's other sources (store/store_impl.hpp), and
// the per-connection settings.
namespace detail {

std::int64_t unix_now()
{
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
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
void configure_sqlite(connection& c, bool writer, bool memory)
{
    try {
        c.exec(fmt::format("PRAGMA busy_timeout = {}", busy_timeout_ms));
        c.exec("PRAGMA foreign_keys = ON");
        if (writer && !memory) {
            // A file created now frees the pages of removed rows on request
            // (PRAGMA incremental_vacuum: maintenance::reclaim_space). The
            // setting takes effect only before the first table exists: set
            // on an empty file only (an older one is switched by a VACUUM,
            // perfgate db prune --vacuum; a read-only one is left alone).
            auto pages = c.prepare("PRAGMA page_count");
            const bool empty = pages.step() && pages.int64(0) == 0;
            pages.reset();
            if (empty) c.exec("PRAGMA auto_vacuum = INCREMENTAL");
            // WAL: readers do not block the writer nor the writer readers.
            // synchronous=NORMAL is safe from corruption in WAL mode and only
            // risks the last commits on power loss (sqlite.org/pragma.html#pragma_synchronous).
            auto st = c.prepare("PRAGMA journal_mode = WAL");
            if (!st.step() || st.text(0) != "wal") {
                throw error(errors::store_open, fmt::format("{}: cannot switch the database to WAL mode", c.path()));
            }
            c.exec("PRAGMA synchronous = NORMAL");
        }
        // The first real read: fails here with "file is not a database".
        auto st = c.prepare("SELECT count(*) FROM sqlite_schema");
        st.step();
    } catch (const error& e) {
        if (e.id() == errors::store_open || e.id() == errors::store_corrupt) throw;
        throw error(errors::store_open, e.what());
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
        throw error(errors::store_open, e.what());
    }
}

} // namespace detail

bool is_postgres(std::string_view db) noexcept { return detail::is_postgres_uri(db); }

std::string shown_location(std::string_view db) { return is_postgres(db) ? detail::redacted_uri(db) : std::string(db); }

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
    s.memory_ = detail::is_memory(db);
    auto writer = std::make_unique<sqlite_connection>(db, sqlite_connection::mode::read_write_create);
    configure_sqlite(*writer, true, s.memory_);
    migrate_sqlite(*writer);
    if (options.background_checkpoints && !s.memory_) {
        s.checkpointer_ = std::make_unique<detail::wal_checkpointer>(*writer, s.writer_mu_, db);
    }
    s.writer_ = std::move(writer);
    struct stat st {};
    if (!s.memory_ && ::stat(db.c_str(), &st) == 0) {
        s.file_known_ = true;
        s.file_dev_ = static_cast<std::uint64_t>(st.st_dev);
        s.file_ino_ = static_cast<std::uint64_t>(st.st_ino);
    }
}

std::string detail::store_impl::file_lost() const
{
    struct stat st {};
    if (::stat(location_.c_str(), &st) != 0) {
        const int err = errno;
        if (err == ENOENT) {
            return fmt::format("{}: the database file was deleted (or moved away) after it was opened: writes "
                               "are refused, they would be lost; restore the file and restart",
                               name_);
        }
        return fmt::format("{}: cannot check the database file: {}", name_, std::strerror(err));
    }
    if (static_cast<std::uint64_t>(st.st_dev) != file_dev_ || static_cast<std::uint64_t>(st.st_ino) != file_ino_) {
        return fmt::format("{}: the path names another file than the one opened (replaced after start): writes "
                           "are refused, they would go to the old file; restart to open the new one",
                           name_);
    }
    return {};
}

void maintenance::check_health() const
{
    const impl& s = *impl_;
    if (s.file_known_) {
        if (std::string why = s.file_lost(); !why.empty()) throw error(errors::store_lost, why);
    }
    // A trivial read through the pool: a truncated or damaged file, a
    // PostgreSQL server that is down or refuses the login, all fail here.
    impl::read_lease c(s);
    auto st = (*c).prepare("SELECT 1 FROM projects LIMIT 1");
    (void)st.step();
}

store::~store() = default;

std::uint64_t maintenance::background_checkpoints() const noexcept
{
    return impl_->checkpointer_ ? impl_->checkpointer_->completed() : 0;
}

std::unique_ptr<connection> detail::store_impl::open_pooled() const
{
    if (sqlite()) {
        // Opening the path again would open another file, or none: say why.
        if (file_known_) {
            if (std::string why = file_lost(); !why.empty()) throw error(errors::store_lost, why);
        }
        auto c = std::make_unique<sqlite_connection>(location_, sqlite_connection::mode::read_only);
        configure_sqlite(*c, false, false);
        return c;
    }
    auto c = std::make_unique<pg_connection>(location_, name_);
    configure_pg(*c);
    return c;
}

bool detail::store_impl::reusable(connection& c) const noexcept
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

// The facets (store.hpp): views of impl_, which holds them.
projects& store::projects() noexcept { return impl_->projects_; }
const projects& store::projects() const noexcept { return impl_->projects_; }
tokens& store::tokens() noexcept { return impl_->tokens_; }
const tokens& store::tokens() const noexcept { return impl_->tokens_; }
webhooks& store::webhooks() noexcept { return impl_->webhooks_; }
const webhooks& store::webhooks() const noexcept { return impl_->webhooks_; }
acceptances& store::acceptances() noexcept { return impl_->acceptances_; }
const acceptances& store::acceptances() const noexcept { return impl_->acceptances_; }
qualifications& store::qualifications() noexcept { return impl_->qualifications_; }
const qualifications& store::qualifications() const noexcept { return impl_->qualifications_; }
runs& store::runs() noexcept { return impl_->runs_; }
const runs& store::runs() const noexcept { return impl_->runs_; }
comparisons& store::comparisons() noexcept { return impl_->comparisons_; }
const comparisons& store::comparisons() const noexcept { return impl_->comparisons_; }
history& store::history() noexcept { return impl_->history_; }
const history& store::history() const noexcept { return impl_->history_; }
alerts& store::alerts() noexcept { return impl_->alerts_; }
const alerts& store::alerts() const noexcept { return impl_->alerts_; }
artifacts& store::artifacts() noexcept { return impl_->artifacts_; }
const artifacts& store::artifacts() const noexcept { return impl_->artifacts_; }
maintenance& store::maintenance() noexcept { return impl_->maintenance_; }
const maintenance& store::maintenance() const noexcept { return impl_->maintenance_; }

std::string_view store::engine() const noexcept { return impl_->sqlite() ? "sqlite" : "postgresql"; }

const std::string& store::location() const noexcept { return impl_->name_; }

} // namespace perfgate::store
