#include "support/database.hpp"

#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace perfgate::test {

namespace {

fs::path make_temp_dir(const char* prefix)
{
    std::string tmpl = (fs::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
    return tmpl;
}

std::string read_file(const fs::path& p)
{
    std::ifstream in(p);
    std::string line;
    std::getline(in, line);
    return line;
}

// A server this process started (no ctest fixture): stopped when the
// process that started it exits (not a forked child).
struct own_server {
    fs::path state;
    pid_t owner = 0;
    ~own_server()
    {
        if (owner != ::getpid()) return;
        const std::string cmd = "bash '" + std::string(PERFGATE_SOURCE_DIR) + "/tests/pg_server.sh' stop '" +
                                state.string() + "' >/dev/null 2>&1";
        [[maybe_unused]] const int rc = std::system(cmd.c_str());
        std::error_code ec;
        fs::remove_all(state, ec);
    }
};

std::string start_own_server()
{
    static own_server server;
    server.state = make_temp_dir("perfgate-pg-state");
    server.owner = ::getpid();
    const fs::path log = server.state / "start.log";
    const std::string cmd = "bash '" + std::string(PERFGATE_SOURCE_DIR) + "/tests/pg_server.sh' start '" +
                            server.state.string() + "' >'" + log.string() + "' 2>&1";
    const int rc = std::system(cmd.c_str());
    if (rc != 0) {
        std::ifstream in(log);
        std::stringstream text;
        text << in.rdbuf();
        throw std::runtime_error("cannot start the tests' PostgreSQL server (tests/pg_server.sh start): " + text.str());
    }
    return read_file(server.state / "uri");
}

struct pg_closer {
    void operator()(PGconn* c) const noexcept { PQfinish(c); }
};
struct pg_clear {
    void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using pg_conn_ptr = std::unique_ptr<PGconn, pg_closer>;
using pg_result_ptr = std::unique_ptr<PGresult, pg_clear>;

pg_conn_ptr pg_connect(const std::string& uri)
{
    pg_conn_ptr c(PQconnectdb(uri.c_str()));
    if (!c || PQstatus(c.get()) != CONNECTION_OK) {
        throw std::runtime_error("cannot connect to the tests' PostgreSQL server at " + uri + ": " +
                                 (c ? PQerrorMessage(c.get()) : "out of memory"));
    }
    PQsetNoticeProcessor(
        c.get(), [](void*, const char*) {}, nullptr);
    return c;
}

std::vector<std::string> pg_rows(PGconn* c, const std::string& sql)
{
    pg_result_ptr r(PQexec(c, sql.c_str()));
    const auto status = PQresultStatus(r.get());
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
        throw std::runtime_error("PostgreSQL: " + sql + ": " + PQresultErrorMessage(r.get()));
    }
    std::vector<std::string> out;
    for (int row = 0; row < PQntuples(r.get()); ++row) {
        std::string line;
        for (int col = 0; col < PQnfields(r.get()); ++col) {
            if (col) line += '|';
            line += PQgetisnull(r.get(), row, col) ? "NULL" : PQgetvalue(r.get(), row, col);
        }
        out.push_back(line);
    }
    return out;
}

// The database's URI: the server's with its path replaced.
std::string database_uri(const std::string& server_uri, const std::string& name)
{
    const auto path = server_uri.find("///");
    const auto query = server_uri.find('?');
    return server_uri.substr(0, path + 3) + name + server_uri.substr(query);
}

} // namespace

db_engine engine_under_test()
{
    const char* e = std::getenv("PERFGATE_TEST_ENGINE");
    if (!e || !*e || std::string(e) == "sqlite") return db_engine::sqlite;
    if (std::string(e) == "postgresql") return db_engine::postgresql;
    throw std::runtime_error(std::string("PERFGATE_TEST_ENGINE='") + e + "': expected sqlite or postgresql");
}

const std::string& pg_server_uri()
{
    static std::mutex mu;
    static std::string uri;
    std::lock_guard lock(mu);
    if (!uri.empty()) return uri;
    // $PERFGATE_TEST_PG_STATE, else the ctest fixture's directory: a server
    // that answers there is the one to use.
    const char* env = std::getenv("PERFGATE_TEST_PG_STATE");
    const fs::path state = env && *env ? fs::path(env) : fs::path(PERFGATE_TEST_PG_STATE_DIR);
    if (const std::string named = read_file(state / "uri"); !named.empty()) {
        pg_conn_ptr probe(PQconnectdb(named.c_str()));
        if (probe && PQstatus(probe.get()) == CONNECTION_OK) {
            uri = named;
            return uri;
        }
        if (env && *env) {
            throw std::runtime_error("PERFGATE_TEST_PG_STATE=" + std::string(env) + ": the server named in " +
                                     (state / "uri").string() +
                                     " does not answer: " + (probe ? PQerrorMessage(probe.get()) : "out of memory"));
        }
    }
    uri = start_own_server();
    return uri;
}

test_database::test_database(db_engine engine, sqlite_kind kind) : engine_(engine)
{
    dir_ = make_temp_dir("perfgate-db");
    if (engine_ == db_engine::sqlite) {
        location_ = kind == sqlite_kind::memory ? ":memory:" : (dir_ / "perfgate.db").string();
        return;
    }
    static std::atomic<int> next{0};
    pg_name_ = "perfgate_test_" + std::to_string(::getpid()) + "_" + std::to_string(next++);
    auto admin = pg_connect(pg_server_uri());
    pg_rows(admin.get(), "DROP DATABASE IF EXISTS " + pg_name_ + " WITH (FORCE)");
    pg_rows(admin.get(), "CREATE DATABASE " + pg_name_ + " TEMPLATE template0 STRATEGY FILE_COPY");
    location_ = database_uri(pg_server_uri(), pg_name_);
}

test_database::~test_database()
{
    if (engine_ == db_engine::postgresql) {
        try {
            auto admin = pg_connect(pg_server_uri());
            pg_rows(admin.get(), "DROP DATABASE IF EXISTS " + pg_name_ + " WITH (FORCE)");
        } catch (const std::exception& e) {
            std::fprintf(stderr, "test_database: cannot drop %s: %s\n", pg_name_.c_str(), e.what());
        }
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
}

std::vector<std::string> test_database::rows(const std::string& sql) const
{
    if (engine_ == db_engine::postgresql) {
        auto c = pg_connect(location_);
        try {
            return pg_rows(c.get(), sql);
        } catch (const std::exception& e) {
            FAIL(e.what());
        }
        return {};
    }
    REQUIRE_MESSAGE(location_ != ":memory:", "a :memory: database is private to its one connection");
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(location_.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
    std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close_v2);
    REQUIRE(rc == SQLITE_OK);
    return sqlite_rows(db.get(), sql);
}

std::vector<std::string> sqlite_rows(sqlite3* db, const std::string& sql)
{
    sqlite3_stmt* st_raw = nullptr;
    REQUIRE_MESSAGE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st_raw, nullptr) == SQLITE_OK, sqlite3_errmsg(db));
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> st(st_raw, sqlite3_finalize);
    std::vector<std::string> out;
    int step;
    while ((step = sqlite3_step(st.get())) == SQLITE_ROW) {
        std::string row;
        for (int i = 0; i < sqlite3_column_count(st.get()); ++i) {
            if (i) row += '|';
            const auto* t = sqlite3_column_text(st.get(), i);
            row += t ? reinterpret_cast<const char*>(t) : "NULL";
        }
        out.push_back(row);
    }
    REQUIRE_MESSAGE(step == SQLITE_DONE, sqlite3_errmsg(db));
    return out;
}

std::string test_database::one(const std::string& sql) const
{
    auto r = rows(sql);
    REQUIRE_MESSAGE(r.size() == 1, sql);
    return r.front();
}

std::vector<std::string> pg_admin_rows(const std::string& sql)
{
    const auto admin = pg_connect(pg_server_uri());
    return pg_rows(admin.get(), sql);
}

} // namespace perfgate::test
