// The PostgreSQL engine of the store's database layer (store/db.hpp),
// private to perfgate::store: a thin RAII layer over libpq's C API.
//
// - pg_connection owns a PGconn* (unique_ptr, PQfinish). Statements are
//   prepared once per connection with PQprepare: the store's SQL names its
//   parameters (:project), which are numbered $1, $2, ... here (the same name
//   twice is the same number), and their types are inferred by the server
//   from where they are used.
// - Values travel as text: integers in decimal, doubles in the shortest form
//   that reads back to the same double; a result's rows are read whole
//   (PQexecPrepared) and parsed when a column is read.
// - Text cannot hold a NUL byte in PostgreSQL (libpq would cut the value
//   there): binding one is "store.constraint", never a silently shorter value.
//
// Errors: SQLSTATE class 23 (integrity) and 22 (data: invalid UTF-8, out of
// range) are "store.constraint"; 40001 and 40P01 (serialization failure,
// deadlock) "store.conflict"; 53100 (disk_full) "store.full"; the rest
// "store.io". "store.open" when the
// server cannot be reached or refuses the login.
#pragma once

#include "store/db.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

struct pg_conn;
struct pg_result;

namespace perfgate::store::detail {

struct pg_closer {
    void operator()(pg_conn* c) const noexcept;
};
struct pg_result_clear {
    void operator()(pg_result* r) const noexcept;
};
using pg_handle = std::unique_ptr<pg_conn, pg_closer>;
using pg_result_handle = std::unique_ptr<pg_result, pg_result_clear>;

// The error id of a SQLSTATE (the mapping above; nullptr: "store.io").
const char* error_id_of(const char* sqlstate);

// Whether --db names a PostgreSQL database: a postgresql:// or postgres://
// URI (libpq's connection URIs).
bool is_postgres_uri(std::string_view db) noexcept;
// The URI without its password (user:password@ and password=...), for
// messages and logs.
std::string redacted_uri(std::string_view uri);

// The store's SQL with :name parameters numbered for PostgreSQL ($1, $2, ...)
// and the names in order, each with its ':' (":project"). Quoted strings,
// quoted identifiers, comments and '::' casts are copied as they are.
struct numbered_sql {
    std::string sql;
    std::vector<std::string> names;
};
numbered_sql number_parameters(std::string_view sql);

// Tests only (the EXPLAIN checks of test_store): called with the SQL as the
// store wrote it and the values bound, for every statement a pg_connection
// executes, until set to an empty function. pg_observe is the call site.
using pg_statement_observer =
    std::function<void(const std::string& sql, const std::vector<std::optional<std::string>>& values)>;
void set_pg_statement_observer(pg_statement_observer o);
void pg_observe(const std::string& sql, const std::vector<std::optional<std::string>>& values);

// libpq (libpq.so.5) is loaded by the first connection, with dlopen. When it
// cannot be: "store.libpq_missing", naming the package (libpq5). Tests only:
// loads soname as the first connection loads libpq, and throws what it would.
void probe_libpq(const char* soname);

class pg_connection final : public connection {
public:
    // Connects to uri; name is what messages call the database (the
    // redacted URI). Error: "store.open" naming it and libpq's reason.
    pg_connection(const std::string& uri, std::string name);
    ~pg_connection() override;

    [[nodiscard]] engine kind() const noexcept override { return engine::postgresql; }
    void exec(std::string_view sql) override;

    // The error for a failed result (or the connection's last error when r
    // is null), naming the database and what was being done.
    [[noreturn]] void fail(const pg_result* r, std::string_view what) const;
    // The connection is gone (server restart, network), or the server sent
    // it something unasked while it sat idle: not worth returning to, or
    // handing out of, a pool. Polls the socket, without blocking.
    [[nodiscard]] bool broken() const noexcept;
    [[nodiscard]] pg_conn* get() const noexcept { return conn_.get(); }

protected:
    std::unique_ptr<prepared> compile(std::string_view sql) override;
    void begin(tx_kind k) override;
    void commit() override;
    void rollback() noexcept override;

private:
    pg_handle conn_;
    std::uint64_t next_statement_ = 0;
    bool in_read_ = false; // in a read "transaction" (none is opened)
};

// A connection that LISTENs on notify_channel and counts the notifications,
// on its own thread, so that store::generation moves with other processes'
// writes (pg/001_initial.sql's triggers NOTIFY on every write to the tables
// pages show). When the connection drops it counts that too (notifications
// may have been missed) and reconnects, once a second.
class pg_listener {
public:
    static constexpr const char* notify_channel = "perfgate_writes";

    pg_listener(std::string uri, std::string name);
    ~pg_listener();
    pg_listener(const pg_listener&) = delete;
    pg_listener& operator=(const pg_listener&) = delete;
    [[nodiscard]] std::uint64_t notifications() const noexcept { return count_.load(std::memory_order_acquire); }

private:
    void loop() noexcept;
    std::string uri_, name_;
    std::atomic<std::uint64_t> count_{0};
    int stop_pipe_[2] = {-1, -1};
    std::thread thread_;
};

} // namespace perfgate::store::detail
