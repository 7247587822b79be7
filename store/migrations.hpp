// The schema migrations, embedded at build time: SQLite's
// (store/migrations/NNN_*.sql) and PostgreSQL's (store/migrations/pg/NNN_*.sql).
// Private to perfgate::store.
#pragma once

#include <span>
#include <string_view>

namespace perfgate::store::detail {

struct migration {
    int version;           // the file's number; PRAGMA user_version (SQLite) after applying it
    std::string_view file; // "001_initial.sql"
    std::string_view sql;  // one or more statements
};

// In order of strictly increasing version (the file numbers).
std::span<const migration> migrations() noexcept;
// PostgreSQL's, the same way.
std::span<const migration> pg_migrations() noexcept;

} // namespace perfgate::store::detail
