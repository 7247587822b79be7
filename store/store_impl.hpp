// The store's private parts, shared by its sources (store.cpp lists them):
// the connections behind store::store (detail::store_impl), its facets, and
// small helpers. Not an interface:
// nothing outside store/ includes this.
//
// Connections, per engine:
// - SQLite: one writer connection behind writer_mu_ (SQLite has one writer
//   at a time anyway; serialising in-process means we never spin in the busy
//   handler against ourselves) and a pool of up to max_readers read-only
//   connections, which read WAL snapshots while the writer commits. ":memory:"
//   is one database per connection, so there the writer also serves reads.
// - PostgreSQL: one pool of up to store_options::connections connections,
//   each leased to one thread at a time for reads and writes alike; the
//   server orders concurrent writers (row locks, unique keys).
// Every write transaction goes through impl::write, which commits, moves the
// generation, and on PostgreSQL retries a transaction the server aborted to
// break a deadlock ("store.conflict").
#pragma once

#include "model/error.hpp"
#include "store/acceptances.hpp"
#include "store/alerts.hpp"
#include "store/artifacts.hpp"
#include "store/comparisons.hpp"
#include "store/db.hpp"
#include "store/history.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/qualifications.hpp"
#include "store/runs.hpp"
#include "store/store.hpp"
#include "store/tokens.hpp"
#include "store/webhooks.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace perfgate::store {

namespace detail {

// SQLite read connections kept per store. The server's default worker
// count is far below this; more readers than cores buys nothing.
inline constexpr std::size_t max_readers = 8;
// PostgreSQL connections per store when store_options::connections is 0:
// the CLI's commands use one; a server passes its worker count.
inline constexpr std::size_t default_pg_connections = 4;
// Attempts of a write transaction that PostgreSQL aborted as a deadlock
// victim or a serialization failure: each retry runs after the other
// transaction finished, so a second attempt nearly always succeeds.
inline constexpr int max_write_attempts = 5;

std::int64_t unix_now();
// Names in error messages: quoted, and cut so a 10 KB hostile name does not
// become a 10 KB log line.
std::string shown_name(std::string_view name);
std::int64_t to_int64(std::size_t v);
// SELECT id ... WHERE name-ish = :name, or nullopt.
std::optional<std::int64_t> lookup_id(connection& c, std::string_view sql,
                                      std::initializer_list<std::pair<const char*, std::string_view>> binds);

// Brings a freshly opened database to the newest schema (migrate.cpp):
// store.migrate when a migration fails or the database is newer than this
// perfgate.
void migrate_sqlite(connection& c);
void migrate_pg(connection& c);

class pg_listener;      // store/postgres.hpp
class wal_checkpointer; // store/sqlite.hpp

// The thread's open store::read_scope: its store's impl and connection.
struct open_read_scope {
    const void* owner = nullptr;
    connection* conn = nullptr;
};
inline thread_local open_read_scope current_read_scope;

// Ids of names that every compare and history query looks up again
// (projects, benchmarks, counters) and the names of testbeds by id. A row
// of these tables is never updated nor deleted once committed (no API
// renames or deletes one), so an id read from committed data stays right
// for the life of the process, on every replica: only reads of committed
// data fill the cache (never a write transaction, which may roll back), and
// a name not found is not remembered (it may be created next). Bounded:
// emptied when it reaches max_entries (names are few; a store with more
// simply looks them up again).
class id_cache {
public:
    static constexpr std::size_t max_entries = 100000;
    enum class kind : char { project = 'p', counter = 'c', benchmark = 'b' };

    [[nodiscard]] std::optional<std::int64_t> find(kind k, std::string_view name, std::string_view scope = {}) const;
    void put(kind k, std::string_view name, std::int64_t id, std::string_view scope = {});
    // Testbeds: id -> (fingerprint, name).
    [[nodiscard]] std::optional<std::pair<std::string, std::string>> testbed(std::int64_t id) const;
    void put_testbed(std::int64_t id, std::string fingerprint, std::string name);

private:
    static std::string key(kind k, std::string_view name, std::string_view scope);
    mutable std::mutex mu_;
    std::unordered_map<std::string, std::int64_t> ids_;
    std::unordered_map<std::int64_t, std::pair<std::string, std::string>> testbeds_;
};

// The id of a name, through the cache; fill: c reads committed data only
// (a read lease, not a write transaction), so a found id may be kept.
std::optional<std::int64_t> project_id(id_cache& ids, connection& c, std::string_view project, bool fill);
std::optional<std::int64_t> counter_id(id_cache& ids, connection& c, std::string_view counter, bool fill);
std::optional<std::int64_t> benchmark_id(id_cache& ids, connection& c, std::string_view project,
                                         std::string_view benchmark, bool fill);

// The id of project's row, created (at now) when missing (ingest.cpp). ids:
// ids known from committed reads, looked in first (never filled: the
// caller's transaction may roll back).
std::int64_t ensure_project_row(connection& c, std::string_view project, std::int64_t now,
                                const id_cache* ids = nullptr);

} // namespace detail

// What the store's sources call the state behind store::store and its facets.
using impl = detail::store_impl;

struct detail::store_impl {
    std::string location_; // what a connection opens: the path or the URI
    std::string name_;     // what messages call the database (no password)
    detail::engine engine_ = detail::engine::sqlite;
    bool memory_ = false;
    std::size_t max_pooled_ = detail::max_readers; // SQLite: readers; PostgreSQL: connections

    std::atomic<std::uint64_t> generation_{0};
    std::unique_ptr<detail::pg_listener> listener_;
    detail::id_cache ids_;

    // SQLite: the one writer, and its checkpoints' thread when the store
    // has one (declared after the writer: it goes first).
    mutable std::mutex writer_mu_;
    std::unique_ptr<detail::connection> writer_;
    std::unique_ptr<detail::wal_checkpointer> checkpointer_;

    // SQLite: read-only connections; PostgreSQL: every connection.
    mutable std::mutex pool_mu_;
    mutable std::condition_variable pool_cv_;
    mutable std::vector<std::unique_ptr<detail::connection>> idle_;
    mutable std::size_t open_ = 0; // pooled connections that exist: idle, leased or being opened

    // SQLite file: the device and inode of the file the writer opened, to
    // notice the path deleted or replaced under a running server (issue 31,
    // finding 2). Unknown (not checked) for :memory: or a path stat(2)
    // could not see at open.
    bool file_known_ = false;
    std::uint64_t file_dev_ = 0, file_ino_ = 0;
    // Why the path no longer names the file the store has open, or "".
    [[nodiscard]] std::string file_lost() const;

    [[nodiscard]] bool sqlite() const noexcept { return engine_ == detail::engine::sqlite; }
    // A new pooled connection, configured (store.cpp).
    [[nodiscard]] std::unique_ptr<detail::connection> open_pooled() const;

    // A connection, exclusively for this thread until destroyed.
    class lease {
    public:
        lease(const impl& s, bool write) : s_(s)
        {
            if (detail::current_read_scope.owner == &s_) {
                if (write) {
                    throw error("internal", "a write to the store inside a read_scope of it on the same thread");
                }
                conn_ = detail::current_read_scope.conn; // the scope's: neither pooled_ nor the writer lock
                return;
            }
            if (s_.sqlite() && (write || s_.memory_)) {
                writer_lock_ = std::unique_lock(s_.writer_mu_);
                conn_ = s_.writer_.get();
                return;
            }
            std::unique_lock lock(s_.pool_mu_);
            s_.pool_cv_.wait(lock, [&] { return !s_.idle_.empty() || s_.open_ < s_.max_pooled_; });
            while (!s_.idle_.empty()) {
                pooled_ = std::move(s_.idle_.back());
                s_.idle_.pop_back();
                // A PostgreSQL session the server ended while it sat idle
                // (a restart, a failover) is replaced here, not found dead
                // by the request that leased it.
                if (s_.reusable(*pooled_)) {
                    conn_ = pooled_.get();
                    return;
                }
                pooled_.reset();
                --s_.open_;
            }
            // Open a new one outside the pool lock (it touches the file or the network).
            ++s_.open_;
            lock.unlock();
            try {
                pooled_ = s_.open_pooled();
            } catch (...) {
                lock.lock();
                --s_.open_;
                s_.pool_cv_.notify_one();
                throw;
            }
            conn_ = pooled_.get();
        }
        lease(const lease&) = delete;
        lease& operator=(const lease&) = delete;
        ~lease()
        {
            if (!pooled_) return; // writer_lock_ releases
            {
                std::lock_guard lock(s_.pool_mu_);
                if (s_.reusable(*pooled_)) s_.idle_.push_back(std::move(pooled_));
                else --s_.open_;
            }
            s_.pool_cv_.notify_one();
        }
        detail::connection& operator*() const noexcept { return *conn_; }
        detail::connection* operator->() const noexcept { return conn_; }

    private:
        const impl& s_;
        std::unique_lock<std::mutex> writer_lock_;
        std::unique_ptr<detail::connection> pooled_;
        detail::connection* conn_ = nullptr;
    };
    struct read_lease : lease {
        explicit read_lease(const impl& s) : lease(s, false) {}
    };

    // Whether a connection goes back to (or out of) the pool (store.cpp):
    // not one whose PostgreSQL session is gone.
    [[nodiscard]] bool reusable(detail::connection& c) const noexcept;

    // Runs body(connection&) in a write transaction and commits it; the
    // generation moves once it is committed. On PostgreSQL a transaction
    // aborted as a deadlock victim runs again (max_write_attempts), so body
    // must only touch the database and its own locals.
    template <typename F>
    auto write(F&& body) -> std::invoke_result_t<F&, detail::connection&>
    {
        using result = std::invoke_result_t<F&, detail::connection&>;
        if (file_known_) {
            // A write to a deleted or replaced file would be acknowledged and
            // lost at the next start: refuse it (one stat(2) per transaction).
            if (std::string why = file_lost(); !why.empty()) throw error(errors::store_lost, why);
        }
        for (int attempt = 1;; ++attempt) {
            try {
                lease c(*this, true);
                detail::transaction tx(*c);
                if constexpr (std::is_void_v<result>) {
                    body(*c);
                    tx.commit();
                    generation_.fetch_add(1, std::memory_order_acq_rel);
                    return;
                } else {
                    result r = body(*c);
                    tx.commit();
                    generation_.fetch_add(1, std::memory_order_acq_rel);
                    return r;
                }
            } catch (const error& e) {
                if (e.id() != errors::store_conflict || attempt >= detail::max_write_attempts) throw;
            }
        }
    }
    // The facets store::store hands out (store.hpp), each a view of this.
    perfgate::store::projects projects_{*this};
    perfgate::store::tokens tokens_{*this};
    perfgate::store::webhooks webhooks_{*this};
    perfgate::store::acceptances acceptances_{*this};
    perfgate::store::qualifications qualifications_{*this};
    perfgate::store::runs runs_{*this};
    perfgate::store::comparisons comparisons_{*this};
    perfgate::store::history history_{*this};
    perfgate::store::alerts alerts_{*this};
    perfgate::store::artifacts artifacts_{*this};
    perfgate::store::maintenance maintenance_{*this};
};

} // namespace perfgate::store
