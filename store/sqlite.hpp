// The SQLite engine of the store's database layer (store/db.hpp), private
// to perfgate::store: a thin RAII layer over the SQLite C API.
//
// - sqlite_connection owns a sqlite3* (unique_ptr, sqlite3_close_v2) and,
//   through connection, its prepared statements (each finalized with it).
// - Statements are prepared with SQLITE_PREPARE_PERSISTENT and reset (and
//   their bindings cleared) when a lease ends, so a cached statement never
//   keeps a read transaction open.
// - BEGIN IMMEDIATE for writes, a deferred BEGIN for read snapshots.
//
// Errors: "store.constraint" for SQLITE_CONSTRAINT, "store.corrupt" for
// SQLITE_CORRUPT (a damaged page), else "store.io", with the database path
// and SQLite's message; "store.open" when the file cannot be opened.
#pragma once

#include "store/db.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

struct sqlite3;

namespace perfgate::store::detail {

struct db_closer {
    void operator()(sqlite3* db) const noexcept;
};
using db_handle = std::unique_ptr<sqlite3, db_closer>;

class sqlite_connection final : public connection {
public:
    enum class mode { read_write_create, read_only };

    // Opens path (":memory:" allowed) in SQLite's multi-thread mode (no
    // per-connection mutex: callers serialise). Error: "store.open".
    sqlite_connection(const std::string& path, mode m);
    ~sqlite_connection() override;

    [[nodiscard]] engine kind() const noexcept override { return engine::sqlite; }
    void exec(std::string_view sql) override;

    // Throws the perfgate::error for SQLite result code rc, naming the path
    // and what was being done. id_override replaces the derived id.
    [[noreturn]] void fail(int rc, std::string_view what, const char* id_override = nullptr) const;

    [[nodiscard]] sqlite3* get() const noexcept { return db_.get(); }

protected:
    std::unique_ptr<prepared> compile(std::string_view sql) override;
    void begin(tx_kind k) override;
    void commit() override;
    void rollback() noexcept override;

private:
    db_handle db_;
};

// Checkpoints a WAL database on a thread of its own, so that no commit
// copies the log back into the database file (and fsyncs both) while it
// holds the write lock: with SQLite's automatic checkpoint, every ~1000th
// commit did, and the server's other requests queued behind it.
// The constructor replaces the writer connection's automatic checkpoint
// with a hook: a commit that leaves the log at start_pages or more wakes the
// thread, which checkpoints on a connection of its own: PASSIVE (never
// waiting for nor blocking readers), first while commits go on (a few
// passes, each copying what the commits added during the one before), then
// the last few frames under the write lock, so that the log is wholly
// copied and the next commit restarts it. A log at
// backstop_pages or more is checkpointed by the committing writer itself,
// as SQLite would, so a thread that falls behind cannot let the log grow
// without bound. A checkpoint that fails (busy: another one runs) is simply
// tried again at the next wake-up.
class wal_checkpointer {
public:
    static constexpr int start_pages = 1000;     // SQLite's own automatic threshold
    static constexpr int backstop_pages = 16000; // 64 MiB of 4 KiB pages
    // Passes without the write lock before the one under it: at most this
    // many, fewer once a pass finds fewer than small_rest_pages new frames.
    static constexpr int max_unlocked_passes = 4;
    static constexpr int small_rest_pages = 64;

    // writer: the store's write connection on path (a file, in WAL mode),
    // used under writer_mu; both must outlive this object. Error:
    // "store.open" when the checkpoint connection cannot be opened.
    wal_checkpointer(sqlite_connection& writer, std::mutex& writer_mu, const std::string& path);
    // Restores the writer's automatic checkpoint, then stops the thread.
    ~wal_checkpointer();
    wal_checkpointer(const wal_checkpointer&) = delete;
    wal_checkpointer& operator=(const wal_checkpointer&) = delete;

    // Checkpoints the thread has run that copied pages into the database.
    [[nodiscard]] std::uint64_t completed() const noexcept { return completed_.load(std::memory_order_acquire); }

private:
    static int on_commit(void* self, sqlite3* db, const char* name, int pages) noexcept;
    void run() noexcept;

    sqlite_connection& writer_;
    std::mutex& writer_mu_;
    std::unique_ptr<sqlite_connection> own_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool due_ = false;
    bool stop_ = false;
    std::atomic<std::uint64_t> completed_{0};
    std::thread thread_;
};

} // namespace perfgate::store::detail
