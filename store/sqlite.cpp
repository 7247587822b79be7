#include "store/sqlite.hpp"

#include "model/error.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cerrno>
#include <climits>

namespace perfgate::store::detail {

void db_closer::operator()(sqlite3* db) const noexcept
{
    // _v2: if a statement were still alive the close is deferred instead of
    // failing; the cache finalizes all of them first anyway.
    sqlite3_close_v2(db);
}

namespace {

struct stmt_finalizer {
    void operator()(sqlite3_stmt* stmt) const noexcept { sqlite3_finalize(stmt); }
};
using stmt_handle = std::unique_ptr<sqlite3_stmt, stmt_finalizer>;

class sqlite_prepared final : public prepared {
public:
    sqlite_prepared(const sqlite_connection& conn, stmt_handle stmt) : conn_(conn), stmt_(std::move(stmt)) {}

    [[nodiscard]] int parameter_count() const noexcept override { return sqlite3_bind_parameter_count(stmt_.get()); }
    [[nodiscard]] int parameter_index(const char* name) const noexcept override
    {
        return sqlite3_bind_parameter_index(stmt_.get(), name);
    }
    [[nodiscard]] std::string parameter_name(int index) const override
    {
        const char* name = sqlite3_bind_parameter_name(stmt_.get(), index);
        return name ? std::string(name) : fmt::format("?{}", index);
    }
    [[nodiscard]] std::string sql() const override { return sqlite3_sql(stmt_.get()); }

    void bind_int64(int index, std::int64_t v) override { check(sqlite3_bind_int64(stmt_.get(), index, v), index); }
    void bind_real(int index, double v) override { check(sqlite3_bind_double(stmt_.get(), index, v), index); }
    void bind_text(int index, std::string_view v) override
    {
        check(sqlite3_bind_text64(stmt_.get(), index, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8), index);
    }
    void bind_null(int index) override { check(sqlite3_bind_null(stmt_.get(), index), index); }

    [[nodiscard]] bool active() const noexcept override { return sqlite3_stmt_busy(stmt_.get()) != 0; }
    bool step() override
    {
        const int rc = sqlite3_step(stmt_.get());
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        conn_.fail(rc, "executing a statement");
    }
    void reset() noexcept override { sqlite3_reset(stmt_.get()); }
    void clear_bindings() noexcept override { sqlite3_clear_bindings(stmt_.get()); }

    [[nodiscard]] bool is_null(int col) const noexcept override
    {
        return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL;
    }
    [[nodiscard]] std::int64_t int64(int col) const override { return sqlite3_column_int64(stmt_.get(), col); }
    [[nodiscard]] double real(int col) const override { return sqlite3_column_double(stmt_.get(), col); }
    [[nodiscard]] std::string text(int col) const override
    {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), col));
        const int n = sqlite3_column_bytes(stmt_.get(), col); // after _text, as the docs require
        return p ? std::string(p, static_cast<std::size_t>(n)) : std::string();
    }

private:
    void check(int rc, int index) const
    {
        if (rc != SQLITE_OK) conn_.fail(rc, fmt::format("binding {}", parameter_name(index)));
    }

    const sqlite_connection& conn_;
    stmt_handle stmt_;
};

} // namespace

sqlite_connection::sqlite_connection(const std::string& path, mode m) : connection(path)
{
    const int flags = (m == mode::read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                      SQLITE_OPEN_NOMUTEX;
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
    db_.reset(raw); // owned even on failure: sqlite3_open_v2 may allocate a handle
    if (rc != SQLITE_OK) {
        throw error(errors::store_open,
                    fmt::format("{}: cannot open database: {}", path, raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
    }
    sqlite3_extended_result_codes(raw, 1);
}

sqlite_connection::~sqlite_connection() { drop_statements(); }

void sqlite_connection::fail(int rc, std::string_view what, const char* id_override) const
{
    // A full disk or quota is SQLITE_FULL on a write, and an I/O error whose
    // errno says so on the other calls (ftruncate, fallocate of the WAL).
    const int os_error = sqlite3_system_errno(db_.get());
    const bool full = (rc & 0xff) == SQLITE_FULL ||
                      ((rc & 0xff) == SQLITE_IOERR && (os_error == ENOSPC || os_error == EDQUOT));
    const char* id = id_override                        ? id_override
                     : full                             ? "store.full"
                     : (rc & 0xff) == SQLITE_CONSTRAINT ? "store.constraint"
                     : (rc & 0xff) == SQLITE_CORRUPT    ? "store.corrupt"
                                                        : "store.io";
    throw error(id, fmt::format("{}: {}: {}", path(), what, sqlite3_errmsg(db_.get())));
}

void sqlite_connection::exec(std::string_view sql)
{
    // Fixed, multi-statement SQL (migrations): prepare each statement in turn.
    const char* tail = sql.data();
    const char* end = sql.data() + sql.size();
    while (tail < end) {
        sqlite3_stmt* raw = nullptr;
        const int rc = sqlite3_prepare_v2(db_.get(), tail, static_cast<int>(end - tail), &raw, &tail);
        stmt_handle stmt(raw);
        if (rc != SQLITE_OK) fail(rc, "preparing SQL");
        if (!stmt) continue; // whitespace or a comment
        int step_rc;
        while ((step_rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
        }
        if (step_rc != SQLITE_DONE) fail(step_rc, fmt::format("executing '{}'", sqlite3_sql(stmt.get())));
    }
}

std::unique_ptr<prepared> sqlite_connection::compile(std::string_view sql)
{
    sqlite3_stmt* raw = nullptr;
    // PERSISTENT: these statements live as long as the connection.
    const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                      &raw, nullptr);
    stmt_handle stmt(raw);
    if (rc != SQLITE_OK) fail(rc, "preparing a statement");
    return std::make_unique<sqlite_prepared>(*this, std::move(stmt));
}

// BEGIN and COMMIT go through the statement cache: preparing them anew
// costs more than executing them.
void sqlite_connection::begin(tx_kind k) { prepare(k == tx_kind::write ? "BEGIN IMMEDIATE" : "BEGIN").run(); }

void sqlite_connection::commit() { prepare("COMMIT").run(); }

void sqlite_connection::rollback() noexcept
{
    // No-throw: if ROLLBACK itself fails (e.g. the transaction was already
    // rolled back by SQLite after SQLITE_FULL), there is nothing left to undo.
    sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

wal_checkpointer::wal_checkpointer(sqlite_connection& writer, std::mutex& writer_mu, const std::string& path)
    : writer_(writer), writer_mu_(writer_mu)
{
    own_ = std::make_unique<sqlite_connection>(path, sqlite_connection::mode::read_write_create);
    // A connection learns that the file is in WAL mode when it first reads
    // it; until then a checkpoint on it does nothing.
    own_->exec("SELECT count(*) FROM sqlite_schema");
    sqlite3_wal_hook(writer_.get(), &wal_checkpointer::on_commit, this); // replaces the automatic checkpoint
    thread_ = std::thread([this] { run(); });
}

wal_checkpointer::~wal_checkpointer()
{
    sqlite3_wal_autocheckpoint(writer_.get(), start_pages); // SQLite's hook again
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
}

// Runs on the committing thread, inside its commit, after the log grew.
int wal_checkpointer::on_commit(void* self, sqlite3* db, const char* name, int pages) noexcept
{
    auto& me = *static_cast<wal_checkpointer*>(self);
    if (pages >= backstop_pages) {
        // The thread fell behind: do what SQLite's own hook does.
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
        return SQLITE_OK;
    }
    if (pages >= start_pages) {
        bool wake = false;
        {
            std::lock_guard lock(me.mu_);
            wake = !me.due_;
            me.due_ = true;
        }
        if (wake) me.cv_.notify_one();
    }
    return SQLITE_OK;
}

void wal_checkpointer::run() noexcept
{
    std::unique_lock lock(mu_);
    for (;;) {
        cv_.wait(lock, [this] { return due_ || stop_; });
        if (stop_) return;
        due_ = false;
        lock.unlock();
        // Without the write lock first, while commits go on: the bulk of
        // the log, then again what those commits added, until a pass finds
        // little new (each pass ends with fsyncs, during which more
        // commits land). Then the rest under the lock: a log whose every
        // frame is in the database is where the next commit restarts it
        // (unless a reader still reads an older part). Without that last
        // pass, under steady writes the log would never be wholly copied,
        // never restart, and grow to backstop_pages.
        int log_frames = 0, copied = 0, seen = -1;
        for (int pass = 0; pass < max_unlocked_passes; ++pass) {
            sqlite3_wal_checkpoint_v2(own_->get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_frames, &copied);
            if (seen >= 0 && log_frames - seen < small_rest_pages) break;
            seen = log_frames;
        }
        int rc = SQLITE_OK;
        {
            std::lock_guard writing(writer_mu_);
            rc = sqlite3_wal_checkpoint_v2(own_->get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_frames, &copied);
        }
        if (rc == SQLITE_OK && copied > 0) completed_.fetch_add(1, std::memory_order_acq_rel);
        lock.lock();
        // Commits during the unlocked passes asked again; the last covered them.
        due_ = false;
    }
}

} // namespace perfgate::store::detail
