// The store's engine under test, for the suites that run on both engines
// (test_store, test_service) and the replica tests (test_replicas).
//
// ctest runs each of those suites twice: as registered (SQLite), and with
// PERFGATE_TEST_ENGINE=postgresql and the prefix "postgresql/" (only the
// test cases whose names say nothing of an engine: "store: ...", not
// "store (sqlite): ..."). The PostgreSQL server is a private one that the
// ctest fixture pg_server starts (tests/pg_server.sh) and names in
// BUILD/tests/pg-server/uri ($PERFGATE_TEST_PG_STATE/uri when set); a suite
// run by hand without it starts its own and stops it at exit. Nothing is
// skipped: without PostgreSQL's binaries a test that needs them fails,
// saying what to install.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

struct sqlite3;

namespace perfgate::test {

enum class db_engine { sqlite, postgresql };

// $PERFGATE_TEST_ENGINE: "sqlite" (the default, also when unset) or
// "postgresql"; anything else throws.
db_engine engine_under_test();
inline bool on_postgres() { return engine_under_test() == db_engine::postgresql; }

// The URI of the tests' PostgreSQL server's "postgres" database (see above).
const std::string& pg_server_uri();
// SQL on that "postgres" database as its superuser (ALTER DATABASE, ending
// other sessions): every row as test_database::rows gives it; throws on an error.
std::vector<std::string> pg_admin_rows(const std::string& sql);

// All rows of a query on an open SQLite connection, each row's columns joined
// with '|' (NULL as "NULL"); fails the test when the query does.
std::vector<std::string> sqlite_rows(sqlite3* db, const std::string& sql);

// A fresh, empty database, removed with everything in it when destroyed.
// SQLite: a file in a new temporary directory, or ":memory:" when asked for
// (one connection's private database: no second store can open it).
// PostgreSQL: a new database on the test server.
class test_database {
public:
    enum class sqlite_kind { file, memory };
    explicit test_database(sqlite_kind kind = sqlite_kind::file) : test_database(engine_under_test(), kind) {}
    explicit test_database(db_engine engine, sqlite_kind kind = sqlite_kind::file);
    ~test_database();
    test_database(const test_database&) = delete;
    test_database& operator=(const test_database&) = delete;

    [[nodiscard]] db_engine engine() const noexcept { return engine_; }
    // What store::store opens (--db): the file, ":memory:", or the URI.
    [[nodiscard]] const std::string& location() const noexcept { return location_; }
    // Another file in the SQLite database's directory (a fresh temporary
    // directory for PostgreSQL): for tests that write files next to it.
    [[nodiscard]] std::filesystem::path dir() const { return dir_; }

    // SQL behind the store's back, on a connection of its own: every row,
    // its columns joined with '|', NULL as "NULL". Fails the test on an error.
    std::vector<std::string> rows(const std::string& sql) const;
    [[nodiscard]] std::string one(const std::string& sql) const;
    [[nodiscard]] long long integer(const std::string& sql) const { return std::stoll(one(sql)); }

private:
    db_engine engine_;
    std::filesystem::path dir_;
    std::string location_, pg_name_;
};

} // namespace perfgate::test
