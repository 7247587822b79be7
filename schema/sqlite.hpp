// The SQLite engine of the store's database layer (schema/db.hpp), private
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

#include "schema/db.hpp"

#include <memory>
#include <string>
#include <string_view>

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

} // namespace perfgate::store::detail
