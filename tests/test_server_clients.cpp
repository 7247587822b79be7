// The real server and every client of it: the same thing through every
// client is the same thing in the store, and the same failure is the same
// exit code.
#include "server_cases.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::server_cases;

namespace {

// Runs perfgate and returns {exit status, stdout + stderr}.
std::pair<int, std::string> run_logged(const std::vector<std::string>& args)
{
    auto r = run_perfgate(args);
    return {r.code, r.out + r.err};
}

} // namespace

TEST_CASE("perfgate run --server checks the token and the server before measuring anything")
{
    temp_dir dir;
    const auto db = dir.path() / "check.db";
    const std::string token = create_token(db, "demo");
    server_process srv(db, dir.path() / "server.log", {"--public-read"});
    const auto marker = dir.path() / "measured";
    const std::string touch = "touch " + marker.string();
    const auto run_with = [&](const std::string& url, const std::string& tok) {
        return run_perfgate({"run",      "-q",   "--backend",  "rusage", "-r",          "2",  "--warmup", "0",
                             "--server", url,    "--project",  "demo",   "--token",     tok,  "--sha",    "abc123",
                             "--branch", "main", "--baseline", touch,    "--candidate", touch});
    };
    // An unknown token, even on a --public-read server: exit 2, nothing run.
    auto bad = run_with(srv.url(), "pg_nope");
    CHECK(bad.code == 2);
    CHECK(bad.err.find("nothing measured") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(marker));
    // A server that does not answer: exit 4, nothing run.
    auto gone = run_with("http://127.0.0.1:1", token);
    CHECK(gone.code == 4);
    CHECK(gone.err.find("nothing measured") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(marker));
    // The right token: measured and stored.
    auto good = run_with(srv.url(), token);
    INFO(good.err);
    CHECK((good.code == 0 || good.code == 3));
    CHECK(std::filesystem::exists(marker));
}

TEST_CASE("the same testbed through perfgate run --server and a bare HTTP upload is one testbed")
{
    temp_dir dir;
    const auto db = dir.path() / "tb.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    const std::string testbed_name = "shared-box";
    {
        server_process srv(db, log);
        // Client 1: perfgate run --server, which detects this machine.
        const auto logged = run_logged({"run",       "-q",         "--backend",  "rusage",  "-r",          "2",
                                        "--warmup",  "0",          "--server",   srv.url(), "--project",   "demo",
                                        "--token",   token,        "--sha",      "abc123",  "--branch",    "main",
                                        "--testbed", testbed_name, "--baseline", "true",    "--candidate", "true"});
        const int status = logged.first;
        const std::string& out = logged.second;
        INFO(out);
        REQUIRE((status == 0 || status == 1 || status == 3));

        // Client 2: a bare HTTP upload naming the same machine, without a fingerprint.
        const perfgate::model::testbed_info here = perfgate::runner::detect_testbed(testbed_name);
        json body = run_body("baseline");
        body["testbed"] = {{"name", here.name}, {"cpu", here.cpu}, {"cores", here.cores}, {"kernel", here.kernel}};
        auto r = send(srv.port(), http::verb::post, "/api/v1/projects/demo/runs", body.dump(), "application/json",
                      token);
        REQUIRE(r.status == 201);

        // Both land on one testbed, whose history holds all three runs.
        auto h = send(srv.port(), http::verb::get,
                      "/api/v1/projects/demo/history?benchmark=default&counter=task-clock&testbed=" + here.fingerprint,
                      {}, {}, token);
        REQUIRE(h.status == 200);
        CHECK(h.parsed()["points"].size() == 1); // the upload's task-clock (rusage has user-time, not task-clock)
        auto w = send(srv.port(), http::verb::get,
                      "/api/v1/projects/demo/history?benchmark=default&counter=user-time&role=all&testbed=" +
                          here.fingerprint,
                      {}, {}, token);
        REQUIRE(w.status == 200);
        CHECK(w.parsed()["points"].size() == 2); // perfgate run's baseline and candidate
    }
    sqlite_db check(db);
    CHECK(check.column("SELECT fingerprint FROM testbeds") ==
          std::vector<std::string>{
              perfgate::model::testbed_fingerprint(perfgate::runner::detect_testbed(testbed_name))});
}

TEST_CASE("every command that talks to a server maps the same failure to the same exit code")
{
    temp_dir dir;
    const auto db = dir.path() / "codes.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    const auto capture = dir.path() / "capture.csv";
    std::ofstream(capture) << perfgate::test::read_testdata("appended-10-runs.csv");

    // The three commands, with the server, project and token filled in per case.
    auto commands = [&](const std::string& url, const std::string& tok) {
        std::vector<std::string> run = {"run",       "-q",         "--backend", "rusage",      "-r",
                                        "1",         "--warmup",   "0",         "--server",    url,
                                        "--project", "demo",       "--sha",     "abc",         "--branch",
                                        "main",      "--baseline", "true",      "--candidate", "true"};
        std::vector<std::string> upload = {"upload",   "--server",  url,   "--project", "demo", "--role",
                                           "baseline", "--git-sha", "abc", "--branch",  "main", capture.string()};
        std::vector<std::string> history = {"history",     "--server", url,         "--project", "demo",
                                            "--benchmark", "default",  "--counter", "task-clock"};
        std::vector<std::vector<std::string>> all = {run, upload, history};
        if (!tok.empty()) {
            for (auto& c : all) c.insert(c.end(), {"--token", tok});
        }
        return all;
    };

    server_process srv(db, log);
    SUBCASE("a token the server refuses: exit 2, [server.auth], from run, upload and history")
    {
        for (auto& args : commands(srv.url(), "pg_wrong")) {
            CAPTURE(args.front());
            const auto logged = run_logged(args);
            const int status = logged.first;
            const std::string& out = logged.second;
            CHECK(status == 2);
            CHECK(out.find("[server.auth]") != std::string::npos);
            CHECK(out.find("HTTP 401") != std::string::npos);
        }
    }
    SUBCASE("another project's token: exit 2 (403) from every command")
    {
        const std::string other = create_token(db, "other");
        for (auto& args : commands(srv.url(), other)) {
            CAPTURE(args.front());
            const auto logged = run_logged(args);
            const int status = logged.first;
            const std::string& out = logged.second;
            CHECK(status == 2);
            CHECK(out.find("HTTP 403") != std::string::npos);
        }
    }
    SUBCASE("the token from PERFGATE_TOKEN works like --token")
    {
        ::setenv("PERFGATE_TOKEN", token.c_str(), 1);
        for (auto& args : commands(srv.url(), "")) {
            CAPTURE(args.front());
            const auto logged = run_logged(args);
            const int status = logged.first;
            const std::string& out = logged.second;
            INFO(out);
            CHECK((status == 0 || status == 1 || status == 3));
        }
        ::unsetenv("PERFGATE_TOKEN");
    }
    SUBCASE("no token at all: exit 2 before anything is sent")
    {
        ::unsetenv("PERFGATE_TOKEN");
        for (auto& args : commands(srv.url(), "")) {
            CAPTURE(args.front());
            CHECK(run_logged(args).first == 2);
        }
    }
    SUBCASE("an unreachable server: exit 4 from every command")
    {
        temp_dir other;
        std::uint16_t closed = 0;
        {
            net::io_context ioc;
            tcp::acceptor a(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
            closed = a.local_endpoint().port();
        }
        for (auto& args : commands("http://127.0.0.1:" + std::to_string(closed), token)) {
            CAPTURE(args.front());
            const auto logged = run_logged(args);
            const int status = logged.first;
            const std::string& out = logged.second;
            CHECK(status == 4);
            CHECK(out.find("[http.unreachable]") != std::string::npos);
        }
    }
    SUBCASE("a malformed --server URL: exit 2 from every command")
    {
        for (auto& args : commands("ftp://127.0.0.1/", token)) {
            CAPTURE(args.front());
            const auto logged = run_logged(args);
            const int status = logged.first;
            const std::string& out = logged.second;
            CHECK(status == 2);
            CHECK(out.find("[http.bad_url]") != std::string::npos);
        }
    }
}
