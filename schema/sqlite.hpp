// Thin RAII layer over the SQLite C API, private to perfgate::store.
//
// - connection owns a sqlite3* (unique_ptr, sqlite3_close_v2) and a cache of
//   prepared statements (each a unique_ptr with sqlite3_finalize).
// - statement is a short-lived lease on one cached sqlite3_stmt: binds by
//   name, steps, reads columns, and resets + clears its bindings when it goes
//   out of scope, so a cached statement never keeps a read transaction open.
//   Every parameter of its SQL must be bound (bind_null for NULL) before it
//   runs; one that is not is a bug in our code and aborts (check_failed,
//   as PERFGATE_CHECK does), naming the parameter and the SQL.
// - transaction is BEGIN IMMEDIATE ... COMMIT that rolls back unless commit()
//   was called; its destructor is noexcept.
//
// Errors are perfgate::error: "store.constraint" for SQLITE_CONSTRAINT, else
// "store.io", with the database path and SQLite's message. A connection is
// not thread-safe; store.cpp serialises access to each one.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace perfgate::store::detail {

struct db_closer {
    void operator()(sqlite3* db) const noexcept;
};
struct stmt_finalizer {
    void operator()(sqlite3_stmt* stmt) const noexcept;
};
using db_handle = std::unique_ptr<sqlite3, db_closer>;
using stmt_handle = std::unique_ptr<sqlite3_stmt, stmt_finalizer>;

class statement;

class connection {
public:
    enum class mode { read_write_create, read_only };

    // Opens path (":memory:" allowed) in SQLite's multi-thread mode (no
    // per-connection mutex: callers serialise). Error: "store.open".
    connection(const std::string& path, mode m);

    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    // Runs fixed SQL without parameters (pragmas, migrations). Never pass it
    // text that came from a user.
    void exec(std::string_view sql);

    // A lease on the prepared statement for sql, prepared once per connection.
    statement prepare(std::string_view sql);

    // Throws the perfgate::error for SQLite result code rc, naming the path
    // and what was being done. id_override replaces the derived id.
    [[noreturn]] void fail(int rc, std::string_view what, const char* id_override = nullptr) const;

    [[nodiscard]] sqlite3* get() const noexcept { return db_.get(); }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    // Write transactions committed on this connection (transaction::commit),
    // counted after the COMMIT returned. Read from any thread.
    [[nodiscard]] std::uint64_t commits() const noexcept { return commits_.load(std::memory_order_acquire); }

private:
    struct cached {
        stmt_handle stmt;
        bool in_use = false;
    };
    std::string path_;
    db_handle db_;
    std::unordered_map<std::string, cached> cache_;
    std::atomic<std::uint64_t> commits_{0};

    friend class statement;
    friend class transaction;
};

class statement {
public:
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;
    ~statement();

    // Binds by parameter name (":project"). Text is copied (SQLITE_TRANSIENT).
    // A name the SQL does not use is ignored, so one binder serves several
    // variants of a query (store::history). What catches a misspelt name is
    // step(): the parameter it should have bound is still unbound there.
    statement& bind(const char* name, std::int64_t v);
    statement& bind(const char* name, double v);
    statement& bind(const char* name, std::string_view v);
    statement& bind(const char* name, const std::string& v) { return bind(name, std::string_view(v)); }
    statement& bind(const char* name, const char* v) { return bind(name, std::string_view(v)); }
    statement& bind(const char* name, std::optional<double> v);
    statement& bind(const char* name, std::optional<std::int64_t> v);
    statement& bind(const char* name, const std::optional<std::string>& v);
    statement& bind_null(const char* name);

    // true: a row is available; false: done. Errors throw. Before the first
    // step (and after a reset) every parameter of the SQL must have been
    // bound on this lease, else an internal check aborts with the name of
    // the unbound parameter and the SQL: silently running with NULL there
    // would be a wrong answer, not an error anyone sees.
    bool step();
    // Steps to the end (discarding rows) and resets, keeping the bindings,
    // so the statement can be re-bound and run again.
    void run();

    [[nodiscard]] bool is_null(int col) const noexcept;
    [[nodiscard]] std::int64_t int64(int col) const noexcept;
    [[nodiscard]] double real(int col) const noexcept;
    [[nodiscard]] std::string text(int col) const;
    [[nodiscard]] std::optional<double> opt_real(int col) const noexcept;
    [[nodiscard]] std::optional<std::int64_t> opt_int64(int col) const noexcept;

private:
    friend class connection;
    statement(connection& conn, sqlite3_stmt* stmt, bool& in_use) noexcept
        : conn_(conn), stmt_(stmt), in_use_(in_use) {}
    int index(const char* name) const noexcept;
    void check_bind(int rc, int index, const char* name);
    void check_all_bound() const;

    connection& conn_;
    sqlite3_stmt* stmt_;   // owned by conn_'s cache
    bool& in_use_;
    std::vector<bool> bound_;   // [index - 1]: bound on this lease; sized on the first bind
};

// BEGIN ... COMMIT; ROLLBACK unless committed.
// write: BEGIN IMMEDIATE takes the write lock up front, so a write
//        transaction never fails half-way with SQLITE_BUSY on its first write.
// read:  BEGIN (deferred): one consistent snapshot for several SELECTs.
class transaction {
public:
    enum class kind { write, read };
    explicit transaction(connection& conn, kind k = kind::write);
    transaction(const transaction&) = delete;
    transaction& operator=(const transaction&) = delete;
    ~transaction();   // noexcept: rollback errors are ignored (SQLite rolls back anyway on close)
    void commit();

private:
    connection& conn_;
    kind kind_;
    bool done_ = false;
};

} // namespace perfgate::store::detail
