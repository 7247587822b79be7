// Issue 31, finding 2: a SQLite file deleted or replaced under a running
// server used to go unnoticed (uploads 201, /healthz 200, everything lost at
// the next start), and /healthz stayed 200 with PostgreSQL down. Now writes
// are refused with 503 store.lost and /healthz is 503. The real server,
// real files, real requests.
#include "server_cases.hpp"

#include "support/database.hpp"

using namespace perfgate::test::server_cases;

namespace {

void check_lost(unsigned short port, const std::string& token)
{
    const auto health = send(port, http::verb::get, "/healthz");
    check_error(health, 503, "store.lost");
    const auto upload = send(port, http::verb::post, "/api/v1/projects/demo/runs", run_body("baseline").dump(),
                             "application/json", token);
    check_error(upload, 503, "store.lost");
    // The message is for the operator: the client gets the id and a reference.
    CHECK(upload.body.find("perfgate.db") == std::string::npos);
}

} // namespace

TEST_CASE("store lost (sqlite): the database file deleted under the server: writes 503 store.lost, /healthz 503")
{
    temp_dir dir("perfgate-lost");
    const auto db = dir.path() / "perfgate.db";
    const std::string token = create_token(db, "demo");
    server_process srv(db, dir.path() / "server.log");
    CHECK(send(srv.port(), http::verb::get, "/healthz").status == 200);
    REQUIRE(send(srv.port(), http::verb::post, "/api/v1/projects/demo/runs", run_body("baseline").dump(),
                 "application/json", token)
                .status == 201);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
    check_lost(srv.port(), token);
    CHECK_FALSE(std::filesystem::exists(db)); // nothing recreated it behind our back
    CHECK(read_text(dir.path() / "server.log").find("was deleted") != std::string::npos);
}

TEST_CASE("store lost (sqlite): another file moved over the database's path: writes 503 store.lost, /healthz 503")
{
    temp_dir dir("perfgate-replaced");
    const auto db = dir.path() / "perfgate.db";
    const auto other = dir.path() / "other.db";
    const std::string token = create_token(db, "demo");
    (void)create_token(other, "demo");
    server_process srv(db, dir.path() / "server.log");
    REQUIRE(send(srv.port(), http::verb::post, "/api/v1/projects/demo/runs", run_body("baseline").dump(),
                 "application/json", token)
                .status == 201);
    std::filesystem::rename(other, db);
    check_lost(srv.port(), token);
    CHECK(read_text(dir.path() / "server.log").find("another file") != std::string::npos);
}

TEST_CASE("store lost (postgresql): the database refusing connections makes /healthz 503, and 200 again after")
{
    test_database where(db_engine::postgresql);
    const std::string name = where.one("SELECT current_database()");
    const std::string token = create_token(where.location(), "demo");
    temp_dir dir("perfgate-pg-down");
    server_process srv(where.location(), dir.path() / "server.log");
    CHECK(send(srv.port(), http::verb::get, "/healthz").status == 200);
    // Down, as far as this server can tell: no new connection is accepted
    // and the open ones are ended.
    pg_admin_rows("ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS false");
    pg_admin_rows("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + name + "'");
    for (int i = 0; i < 3; ++i) {
        const auto health = send(srv.port(), http::verb::get, "/healthz");
        INFO(health.body);
        CHECK(health.status == 503);
        // The client gets a reference, the log the cause (as for any store error).
        const std::string ref = health.error().at("message").get<std::string>();
        CHECK(ref.find("reference ") != std::string::npos);
    }
    CHECK(read_text(dir.path() / "server.log").find("[store.") != std::string::npos);
    CHECK(send(srv.port(), http::verb::post, "/api/v1/projects/demo/runs", run_body("baseline").dump(),
               "application/json", token)
              .status >= 500);
    pg_admin_rows("ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS true");
    CHECK(send(srv.port(), http::verb::get, "/healthz").status == 200);
}
