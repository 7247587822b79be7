// The store's database layer, private to perfgate::store: one connection,
// statement and transaction API over two engines, SQLite (store/sqlite.hpp)
// and PostgreSQL (store/postgres.hpp), so that the store's logic and most
// of its SQL are written once.
//
// - connection: an engine's connection with a cache of prepared statements,
//   each prepared once per connection (SQLite: sqlite3_prepare_v3;
//   PostgreSQL: PQprepare, the SQL's :name parameters numbered $1, $2, ...).
// - statement: a short-lived lease on one cached prepared statement: binds
//   by name (":project"), steps, reads columns, and resets and clears its
//   bindings when it goes out of scope. Every parameter of its SQL must be
//   bound (bind_null for NULL) before it runs; one that is not is a bug in
//   our code and aborts (check_failed, as PERFGATE_CHECK does), naming the
//   parameter and the SQL.
// - transaction: BEGIN ... COMMIT that rolls back unless commit() was
//   called; its destructor is noexcept.
//
// Errors are perfgate::error: "store.constraint" for a constraint the data
// breaks (and, on PostgreSQL, a value the column cannot hold),
// "store.conflict" for a transaction PostgreSQL aborted to resolve a
// deadlock or a serialization failure (store::impl retries those), else
// "store.io", each with the database's name and the engine's message. A
// connection is not thread-safe; the store leases each to one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace perfgate::store::detail {

enum class engine { sqlite, postgresql };

// SQL that differs between the engines, side by side where it is used.
struct dialect_sql {
    std::string_view sqlite;
    std::string_view postgresql;
};

// What a statement leases: one engine's prepared statement. Parameter
// indexes are 1-based; 0 means "not in this SQL".
class prepared {
public:
    virtual ~prepared() = default;

    [[nodiscard]] virtual int parameter_count() const noexcept = 0;
    [[nodiscard]] virtual int parameter_index(const char* name) const noexcept = 0;
    [[nodiscard]] virtual std::string parameter_name(int index) const = 0;
    [[nodiscard]] virtual std::string sql() const = 0;

    virtual void bind_int64(int index, std::int64_t v) = 0;
    virtual void bind_real(int index, double v) = 0;
    virtual void bind_text(int index, std::string_view v) = 0;
    virtual void bind_null(int index) = 0;

    // Between the first step of a run and its last row (or a reset).
    [[nodiscard]] virtual bool active() const noexcept = 0;
    virtual bool step() = 0;
    virtual void reset() noexcept = 0; // keeps the bindings
    virtual void clear_bindings() noexcept = 0;

    [[nodiscard]] virtual bool is_null(int col) const noexcept = 0;
    [[nodiscard]] virtual std::int64_t int64(int col) const = 0;
    [[nodiscard]] virtual double real(int col) const = 0;
    [[nodiscard]] virtual std::string text(int col) const = 0;
};

class statement;

class connection {
public:
    enum class tx_kind { write, read };

    virtual ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    [[nodiscard]] virtual engine kind() const noexcept = 0;
    // The SQL of this connection's engine.
    [[nodiscard]] std::string_view pick(const dialect_sql& sql) const noexcept
    {
        return kind() == engine::sqlite ? sql.sqlite : sql.postgresql;
    }

    // Runs fixed SQL without parameters (pragmas, migrations); several
    // statements allowed. Never pass it text that came from a user.
    virtual void exec(std::string_view sql) = 0;

    // A lease on the prepared statement for sql, prepared once per connection.
    statement prepare(std::string_view sql);

    // The database as error messages name it: the file, or the URI without
    // its password.
    [[nodiscard]] const std::string& path() const noexcept { return name_; }

protected:
    explicit connection(std::string name) : name_(std::move(name)) {}
    // Engines call this first in their destructors: statements go before
    // the handle they were prepared on.
    void drop_statements() noexcept { cache_.clear(); }
    virtual std::unique_ptr<prepared> compile(std::string_view sql) = 0;
    virtual void begin(tx_kind k) = 0;
    virtual void commit() = 0;
    virtual void rollback() noexcept = 0;

private:
    struct cached {
        std::unique_ptr<prepared> stmt;
        bool in_use = false;
    };
    std::string name_;
    std::unordered_map<std::string, cached> cache_;
    // A store::read_scope's read transaction is open on this connection: a
    // read transaction inside it is part of it.
    bool scoped_ = false;

    friend class transaction;
    friend struct scoped_read;
};

class statement {
public:
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;
    ~statement();

    // Binds by parameter name (":project"); text is copied. A name the SQL
    // does not use is ignored, so one binder serves several variants of a
    // query (store::history). What catches a misspelt name is step(): the
    // parameter it should have bound is still unbound there.
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
    // Ends the current run (its rows are dropped), keeping the bindings:
    // after reading rows up to step() == false, before re-binding.
    void reset() noexcept { stmt_.reset(); }

    [[nodiscard]] bool is_null(int col) const noexcept { return stmt_.is_null(col); }
    [[nodiscard]] std::int64_t int64(int col) const { return stmt_.int64(col); }
    [[nodiscard]] double real(int col) const { return stmt_.real(col); }
    [[nodiscard]] std::string text(int col) const { return stmt_.text(col); }
    [[nodiscard]] std::optional<double> opt_real(int col) const;
    [[nodiscard]] std::optional<std::int64_t> opt_int64(int col) const;

private:
    friend class connection;
    statement(prepared& stmt, bool& in_use) noexcept : stmt_(stmt), in_use_(in_use) {}
    void mark_bound(int index);
    void check_all_bound() const;

    prepared& stmt_; // owned by the connection's cache
    bool& in_use_;
    std::vector<bool> bound_; // [index - 1]: bound on this lease; sized on the first bind
};

// BEGIN ... COMMIT; ROLLBACK unless committed.
// write: SQLite's BEGIN IMMEDIATE takes the write lock up front, so a write
//        transaction never fails half-way with SQLITE_BUSY on its first
//        write; PostgreSQL's BEGIN (read committed: each statement sees what
//        was committed before it; rows and unique keys lock as written).
// read:  SQLite: one consistent snapshot for several SELECTs (a deferred
//        BEGIN). PostgreSQL: nothing is sent; each statement reads what is
//        committed when it runs. The store's multi-statement reads read
//        rows that never change once committed (a run with its summaries
//        and samples, committed together; names and their ids; summaries),
//        so a snapshot would change no answer, and costs two round trips.
class transaction {
public:
    using kind = connection::tx_kind;
    explicit transaction(connection& conn, kind k = kind::write);
    transaction(const transaction&) = delete;
    transaction& operator=(const transaction&) = delete;
    ~transaction(); // noexcept: rollback errors are ignored
    void commit();

private:
    connection& conn_;
    bool done_ = false;
    bool inner_ = false; // a read inside a read_scope's transaction: begins and ends nothing
};

// store::read_scope's transaction: a read transaction that the reads on its
// connection join (transaction::kind::read inside it does nothing) until it
// ends.
struct scoped_read {
    explicit scoped_read(connection& conn);
    scoped_read(const scoped_read&) = delete;
    scoped_read& operator=(const scoped_read&) = delete;
    ~scoped_read(); // noexcept: ends the read transaction

    connection& conn;
};

} // namespace perfgate::store::detail
