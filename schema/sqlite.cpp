#include "schema/sqlite.hpp"

#include "model/error.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <climits>

namespace perfgate::store::detail {

void db_closer::operator()(sqlite3* db) const noexcept
{
    // _v2: if a statement were still alive the close is deferred instead of
    // failing; the cache finalizes all of them first anyway.
    sqlite3_close_v2(db);
}

void stmt_finalizer::operator()(sqlite3_stmt* stmt) const noexcept { sqlite3_finalize(stmt); }

connection::connection(const std::string& path, mode m) : path_(path)
{
    const int flags = (m == mode::read_only ? SQLITE_OPEN_READONLY
                                            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                      SQLITE_OPEN_NOMUTEX;
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
    db_.reset(raw);   // owned even on failure: sqlite3_open_v2 may allocate a handle
    if (rc != SQLITE_OK) {
        throw error("store.open", fmt::format("{}: cannot open database: {}", path_,
                                              raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
    }
    sqlite3_extended_result_codes(raw, 1);
}

void connection::fail(int rc, std::string_view what, const char* id_override) const
{
    const char* id = id_override ? id_override
                     : (rc & 0xff) == SQLITE_CONSTRAINT ? "store.constraint"
                                                        : "store.io";
    throw error(id, fmt::format("{}: {}: {}", path_, what, sqlite3_errmsg(db_.get())));
}

void connection::exec(std::string_view sql)
{
    // Fixed, multi-statement SQL (migrations): prepare each statement in turn.
    const char* tail = sql.data();
    const char* end = sql.data() + sql.size();
    while (tail < end) {
        sqlite3_stmt* raw = nullptr;
        const int rc = sqlite3_prepare_v2(db_.get(), tail, static_cast<int>(end - tail), &raw, &tail);
        stmt_handle stmt(raw);
        if (rc != SQLITE_OK) fail(rc, "preparing SQL");
        if (!stmt) continue;   // whitespace or a comment
        int step_rc;
        while ((step_rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {}
        if (step_rc != SQLITE_DONE) fail(step_rc, fmt::format("executing '{}'", sqlite3_sql(stmt.get())));
    }
}

statement connection::prepare(std::string_view sql)
{
    auto it = cache_.find(std::string(sql));
    if (it == cache_.end()) {
        sqlite3_stmt* raw = nullptr;
        // PERSISTENT: these statements live as long as the connection.
        const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                          SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
        stmt_handle stmt(raw);
        if (rc != SQLITE_OK) fail(rc, "preparing a statement");
        it = cache_.emplace(std::string(sql), cached{std::move(stmt), false}).first;
    }
    // Two live leases on one sqlite3_stmt would clobber each other's bindings.
    PERFGATE_CHECK(!it->second.in_use);
    it->second.in_use = true;
    return statement(*this, it->second.stmt.get(), it->second.in_use);
}

statement::~statement()
{
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    in_use_ = false;
}

int statement::index(const char* name) const noexcept { return sqlite3_bind_parameter_index(stmt_, name); }

void statement::check_bind(int rc, int index, const char* name)
{
    if (rc != SQLITE_OK) conn_.fail(rc, fmt::format("binding {}", name));
    if (bound_.empty()) bound_.resize(static_cast<std::size_t>(sqlite3_bind_parameter_count(stmt_)));
    bound_[static_cast<std::size_t>(index - 1)] = true;
}

void statement::check_all_bound() const
{
    const int count = sqlite3_bind_parameter_count(stmt_);
    for (int i = 1; i <= count; ++i) {
        if (static_cast<std::size_t>(i) <= bound_.size() && bound_[static_cast<std::size_t>(i - 1)]) continue;
        // SQLite would run it with NULL there. The usual cause is a misspelt
        // name in bind(), which binds nothing (see sqlite.hpp): name the
        // parameter and the SQL, so the typo is found from the message.
        const char* name = sqlite3_bind_parameter_name(stmt_, i);
        const std::string what =
            fmt::format("every parameter is bound before the statement runs: {} is not, in \"{}\"",
                        name ? std::string(name) : fmt::format("?{}", i), sqlite3_sql(stmt_));
        check_failed(what.c_str(), __FILE__, __LINE__);
    }
}

statement& statement::bind(const char* name, std::int64_t v)
{
    if (const int i = index(name)) check_bind(sqlite3_bind_int64(stmt_, i, v), i, name);
    return *this;
}

statement& statement::bind(const char* name, double v)
{
    if (const int i = index(name)) check_bind(sqlite3_bind_double(stmt_, i, v), i, name);
    return *this;
}

statement& statement::bind(const char* name, std::string_view v)
{
    if (const int i = index(name)) {
        check_bind(sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8), i, name);
    }
    return *this;
}

statement& statement::bind(const char* name, std::optional<double> v)
{
    return v ? bind(name, *v) : bind_null(name);
}

statement& statement::bind(const char* name, std::optional<std::int64_t> v)
{
    return v ? bind(name, *v) : bind_null(name);
}

statement& statement::bind(const char* name, const std::optional<std::string>& v)
{
    return v ? bind(name, std::string_view(*v)) : bind_null(name);
}

statement& statement::bind_null(const char* name)
{
    if (const int i = index(name)) check_bind(sqlite3_bind_null(stmt_, i), i, name);
    return *this;
}

bool statement::step()
{
    // Not busy: before the first row of a run (after prepare or a reset).
    if (!sqlite3_stmt_busy(stmt_)) check_all_bound();
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    conn_.fail(rc, "executing a statement");
}

void statement::run()
{
    while (step()) {}
    // Ready to be bound and run again (bindings are kept).
    sqlite3_reset(stmt_);
}

bool statement::is_null(int col) const noexcept { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::int64_t statement::int64(int col) const noexcept { return sqlite3_column_int64(stmt_, col); }
double statement::real(int col) const noexcept { return sqlite3_column_double(stmt_, col); }

std::string statement::text(int col) const
{
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    const int n = sqlite3_column_bytes(stmt_, col);   // after _text, as the docs require
    return p ? std::string(p, static_cast<std::size_t>(n)) : std::string();
}

std::optional<double> statement::opt_real(int col) const noexcept
{
    if (is_null(col)) return std::nullopt;
    return real(col);
}

std::optional<std::int64_t> statement::opt_int64(int col) const noexcept
{
    if (is_null(col)) return std::nullopt;
    return int64(col);
}

// BEGIN and COMMIT go through the statement cache: preparing them anew
// costs more than executing them.
transaction::transaction(connection& conn, kind k) : conn_(conn), kind_(k)
{
    conn_.prepare(k == kind::write ? "BEGIN IMMEDIATE" : "BEGIN").run();
}

transaction::~transaction()
{
    if (done_) return;
    // No-throw: if ROLLBACK itself fails (e.g. the transaction was already
    // rolled back by SQLite after SQLITE_FULL), there is nothing left to undo.
    sqlite3_exec(conn_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void transaction::commit()
{
    conn_.prepare("COMMIT").run();
    done_ = true;
    if (kind_ == kind::write) conn_.commits_.fetch_add(1, std::memory_order_release);
}

} // namespace perfgate::store::detail
