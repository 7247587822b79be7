// The schema migrations (schema/migrations/NNN_*.sql), embedded at build time.
// Private to perfgate::store.
#pragma once

#include <span>
#include <string_view>

namespace perfgate::store::detail {

struct migration {
    int version;             // 1-based; PRAGMA user_version after applying it
    std::string_view file;   // "001_initial.sql"
    std::string_view sql;    // one or more statements
};

// In order: migrations()[i].version == i + 1.
std::span<const migration> migrations() noexcept;

} // namespace perfgate::store::detail
