// The real `perfgate serve` on 127.0.0.1 with an ephemeral port and a temp
// database, driven over real sockets: the API end to end, the auth matrix,
// every bad input (the server must keep serving), timeouts, SIGTERM and a
// SIGKILL in the middle of a stream of uploads.
#include "server_cases.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::server_cases;

// Built with a sanitizer (gcc says so with __SANITIZE_*__, clang with __has_feature).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PERFGATE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PERFGATE_TEST_SANITIZED 1
#endif
#endif
#ifndef PERFGATE_TEST_SANITIZED
#define PERFGATE_TEST_SANITIZED 0
#endif

TEST_CASE("retain_freed_memory: perfgate serve's malloc settings, unless the operator set glibc's")
{
    // The decision only: the effect (no page-table churn per request) is a
    // figure of bench/e2e/bench_engines.sh, not something a test can time.
    const char* before = std::getenv("GLIBC_TUNABLES");
    const std::string saved = before ? before : "";
    ::unsetenv("GLIBC_TUNABLES");
#if defined(__GLIBC__) && !PERFGATE_TEST_SANITIZED
    CHECK(perfgate::server::retain_freed_memory());
    ::setenv("GLIBC_TUNABLES", "glibc.rtld.optional_static_tls=1024", 1);
    CHECK(perfgate::server::retain_freed_memory()); // not a malloc tunable
#elif !defined(__GLIBC__)
    CHECK_FALSE(perfgate::server::retain_freed_memory());
#endif
    // (Under a sanitizer malloc is the sanitizer's: ASan's mallopt refuses,
    // so there the settings' outcome is not glibc's to check.)
    ::setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1048576", 1);
    CHECK_FALSE(perfgate::server::retain_freed_memory());
    if (before) {
        ::setenv("GLIBC_TUNABLES", saved.c_str(), 1);
    } else {
        ::unsetenv("GLIBC_TUNABLES");
    }
}

TEST_CASE("end to end over loopback: token, upload, compare, comparison, history")
{
    temp_dir dir;
    const auto db = dir.path() / "e2e.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    server_process srv(db, log);
    const auto port = srv.port();

    auto health = send(port, http::verb::get, "/healthz");
    CHECK(health.status == 200);

    auto base = send(port, http::verb::post, "/api/v1/projects/demo/runs", run_body("baseline").dump(),
                     "application/json", token);
    REQUIRE(base.status == 201);
    CHECK(base.parsed().at("samples") == 40);
    // The candidate through text/csv with the fields in the query string.
    auto cand = send(port, http::verb::post,
                     "/api/v1/projects/demo/runs?role=candidate&git_sha=4567ef&branch=feature%2Fx&testbed=ci-box",
                     perfgate::test::read_testdata("appended-10-runs.csv"), "text/csv", token);
    REQUIRE(cand.status == 201);
    const auto base_id = base.parsed().at("run_id").get<std::int64_t>();
    const auto cand_id = cand.parsed().at("run_id").get<std::int64_t>();

    auto cmp = send(port, http::verb::post, "/api/v1/projects/demo/compare",
                    json{{"baseline_run", base_id}, {"candidate_run", cand_id}}.dump(), "application/json", token);
    REQUIRE(cmp.status == 201);
    const auto report = cmp.parsed();
    CHECK(report.at("schema") == "perfgate.report/v1");
    const auto id = report.at("comparison_id").get<std::int64_t>();

    auto stored = send(port, http::verb::get, "/api/v1/projects/demo/comparisons/" + std::to_string(id), {}, {}, token);
    REQUIRE(stored.status == 200);
    CHECK(stored.parsed().at("verdict") == report.at("verdict"));
    CHECK(stored.parsed().at("benchmarks") == report.at("benchmarks"));
    auto md = send(port, http::verb::get,
                   "/api/v1/projects/demo/comparisons/" + std::to_string(id) + "?format=markdown", {}, {}, token);
    REQUIRE(md.status == 200);
    CHECK(md.content_type.starts_with("text/markdown"));
    CHECK(md.body.find("task-clock") != std::string::npos);

    auto hist = send(port, http::verb::get,
                     "/api/v1/projects/demo/history?benchmark=default&counter=task-clock&role=all&branch=*", {}, {},
                     token);
    REQUIRE(hist.status == 200);
    auto points = hist.parsed().at("points");
    REQUIRE(points.size() == 2);
    CHECK(points[0].at("run_id") == base_id);
    CHECK(points[1].at("branch") == "feature/x");
    CHECK(points[1].at("role") == "candidate");
    // By default the series the watch sees: the baseline runs of main.
    auto watched = send(port, http::verb::get, "/api/v1/projects/demo/history?benchmark=default&counter=task-clock", {},
                        {}, token);
    REQUIRE(watched.parsed().at("points").size() == 1);
    CHECK(watched.parsed().at("points")[0].at("run_id") == base_id);
    auto csv = send(port, http::verb::get,
                    "/api/v1/projects/demo/history?benchmark=default&counter=task-clock&branch=main&format=csv", {}, {},
                    token);
    REQUIRE(csv.status == 200);
    CHECK(csv.body.starts_with("run_id,git_sha,branch,created_at,n,median,mean,stddev,cov,role\n"));
    CHECK(std::count(csv.body.begin(), csv.body.end(), '\n') == 2); // header + the one run on main

    SUBCASE("perfgate upload and history --server use the same API")
    {
        auto [up_status, up_out, up_status_err] = run_perfgate(
            {"upload", "--server", srv.url(), "--project", "demo", "--token", token, "--role", "baseline", "--git-sha",
             "89abcd", "--branch", "main", "--benchmark", "default", "--format", "json",
             std::string(PERFGATE_TESTDATA_DIR) + "/perf-stat/appended-10-runs.csv"});
        REQUIRE(up_status == 0);
        CHECK(json::parse(up_out).at("samples") == 40);
        auto [h_status, h_out,
              h_status_err] = run_perfgate({"history", "--server", srv.url(), "--project", "demo", "--token", token,
                                            "--benchmark", "default", "--counter", "task-clock", "--format", "csv"});
        REQUIRE(h_status == 0);
        // The baseline runs of main (the default): the first upload and this one.
        CHECK(std::count(h_out.begin(), h_out.end(), '\n') == 3);
        CHECK(h_out.find(",89abcd,main,") != std::string::npos);
        auto [all_status, all_out, all_err] = run_perfgate(
            {"history", "--server", srv.url(), "--project", "demo", "--token", token, "--benchmark", "default",
             "--counter", "task-clock", "--format", "csv", "--role", "all", "--branch", "*"});
        REQUIRE(all_status == 0);
        CHECK(std::count(all_out.begin(), all_out.end(), '\n') == 4);
        CHECK(all_out.find(",feature/x,") != std::string::npos);
        // A token of no project: the CLI reports the server's 401 as an input error (exit 2).
        auto [bad_status, bad_out,
              bad_status_err] = run_perfgate({"history", "--server", srv.url(), "--project", "demo", "--token",
                                              "pg_nope", "--benchmark", "default", "--counter", "task-clock"});
        CHECK(bad_status == 2);
        // The same database read locally gives the same points.
        auto [l_status, l_out,
              l_status_err] = run_perfgate({"history", "--db", db.string(), "--project", "demo", "--benchmark",
                                            "default", "--counter", "task-clock", "--format", "csv"});
        CHECK(l_status == 0);
        CHECK(l_out == h_out);
    }
    SUBCASE("metrics count what happened")
    {
        auto m = send(port, http::verb::get, "/metrics");
        REQUIRE(m.status == 200);
        CHECK(m.body.find("perfgate_runs_ingested_total 2") != std::string::npos);
        CHECK(m.body.find(
                  "perfgate_http_requests_total{route=\"POST /api/v1/projects/{project}/runs\",status=\"201\"} 2") !=
              std::string::npos);
    }
}

TEST_CASE("auth matrix over a socket")
{
    temp_dir dir;
    const auto db = dir.path() / "auth.db";
    const auto log = dir.path() / "server.log";
    const std::string demo = create_token(db, "demo");
    const std::string other = create_token(db, "other");
    const std::string runs = "/api/v1/projects/demo/runs";
    const std::string history = "/api/v1/projects/demo/history?benchmark=default&counter=task-clock";

    SUBCASE("private reads")
    {
        server_process srv(db, log);
        check_error(send(srv.port(), http::verb::post, runs, run_body("baseline").dump()), 401, "auth.missing_token");
        check_error(send(srv.port(), http::verb::post, runs, run_body("baseline").dump(), "application/json",
                         "pg_bogus"),
                    401, "auth.bad_token");
        check_error(send(srv.port(), http::verb::post, runs, run_body("baseline").dump(), "application/json", other),
                    403, "auth.forbidden");
        check_error(send(srv.port(), http::verb::get, history), 401, "auth.missing_token");
        check_error(send(srv.port(), http::verb::get, history, {}, {}, other), 403, "auth.forbidden");
        CHECK(send(srv.port(), http::verb::get, history, {}, {}, demo).status == 200);
        CHECK(send(srv.port(), http::verb::post, runs, run_body("baseline").dump(), "application/json", demo).status ==
              201);
        CHECK(count_runs(srv.port(), demo) == 1);
    }
    SUBCASE("--public-read")
    {
        server_process srv(db, log, {"--public-read"});
        CHECK(send(srv.port(), http::verb::get, history).status == 200);
        check_error(send(srv.port(), http::verb::post, runs, run_body("baseline").dump()), 401, "auth.missing_token");
        check_error(send(srv.port(), http::verb::get, "/api/v1/projects/ghost/benchmarks"), 404, "project.not_found");
    }
}

TEST_CASE("bad input over a socket: a JSON error each, nothing stored, the server keeps serving")
{
    temp_dir dir;
    const auto db = dir.path() / "bad.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    server_process srv(db, log, {"--max-body", "65536"});
    const auto port = srv.port();
    const std::string runs = "/api/v1/projects/demo/runs";
    auto post_json = [&](const json& body) {
        return send(port, http::verb::post, runs, body.dump(), "application/json", token);
    };

    check_error(send(port, http::verb::post, runs, "{\"role\": ", "application/json", token), 400, "http.bad_json");
    json bad = run_body("baseline");
    bad["perf_csv"] = "this,is\nnot,perf\n";
    check_error(post_json(bad), 422, "ingest.bad_csv");
    bad = run_body("baseline");
    bad["perf_csv"] = perfgate::test::read_testdata("bad-event.txt");
    check_error(post_json(bad), 422, "ingest.bad_csv");
    check_error(send(port, http::verb::post, "/api/v1/projects/ghost/runs", run_body("baseline").dump(),
                     "application/json", token),
                403, "auth.forbidden");
    bad = run_body("baseline");
    bad.erase("role");
    check_error(post_json(bad), 400, "ingest.bad_field");
    bad = run_body("baseline");
    bad["git_sha"] = 1234;
    check_error(post_json(bad), 400, "ingest.bad_field");
    bad = run_body("baseline");
    bad["benchmark"] = std::string(10 * 1024, 'x');
    auto long_name = post_json(bad);
    check_error(long_name, 400, "ingest.bad_field");
    CHECK(long_name.error().at("message").get<std::string>().find("'benchmark'") != std::string::npos);
    bad["benchmark"] = "x'); DROP TABLE runs; --";
    check_error(post_json(bad), 400, "ingest.bad_field");
    // The same 10 KB name in a query string (text/csv upload).
    check_error(send(port, http::verb::post,
                     runs + "?role=baseline&git_sha=a1&branch=main&benchmark=" + std::string(10240, 'y'),
                     perfgate::test::read_testdata("appended-10-runs.csv"), "text/csv", token),
                400, "ingest.bad_field");
    check_error(send(port, http::verb::post, runs, run_body("baseline").dump(), "application/xml", token), 415,
                "http.unsupported_media_type");
    check_error(send(port, http::verb::get, "/api/v1/nowhere", {}, {}, token), 404, "http.not_found");
    check_error(send(port, http::verb::put, runs, {}, {}, token), 405, "http.method_not_allowed");

    SUBCASE("body over --max-body -> 413")
    {
        json big = run_body("baseline");
        big["perf_csv"] = std::string(200 * 1024, '#');
        check_error(post_json(big), 413, "http.body_too_large");
        // Also when the client waits for 100-continue before sending the body.
        const std::string head = "POST " + runs +
                                 " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                 "Authorization: Bearer " +
                                 token + "\r\nExpect: 100-continue\r\nContent-Length: 10000000\r\n\r\n";
        const std::string got = raw_exchange(port, head);
        CHECK(got.starts_with("HTTP/1.1 413"));
        CHECK(got.find("\"http.body_too_large\"") != std::string::npos);
    }
    SUBCASE("malformed HTTP and oversized header")
    {
        const std::string garbage = raw_exchange(port, "HELLO THERE\r\n\r\n");
        CHECK(garbage.starts_with("HTTP/1.1 400"));
        CHECK(garbage.find("\"http.bad_request\"") != std::string::npos);
        const std::string huge = raw_exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " +
                                                        std::string(100 * 1024, 'p') + "\r\n\r\n");
        CHECK(huge.starts_with("HTTP/1.1 431"));
    }

    // Still serving, and nothing was stored.
    CHECK(send(port, http::verb::get, "/healthz").status == 200);
    CHECK(count_runs(port, token) == 0);
    CHECK(post_json(run_body("baseline")).status == 201);
    CHECK(count_runs(port, token) == 1);
}

TEST_CASE("a silent or slow client cannot hold a connection")
{
    temp_dir dir;
    const auto db = dir.path() / "slow.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    server_process srv(db, log, {"--idle-timeout-ms", "300", "--read-timeout-ms", "300"});

    const auto start = std::chrono::steady_clock::now();
    SUBCASE("silent: closed after the idle timeout") { CHECK(raw_exchange(srv.port(), "", 5s).empty()); }
    SUBCASE("dribbling a header: closed") { CHECK(raw_exchange(srv.port(), "GET /heal", 5s).empty()); }
    SUBCASE("body never completes: closed")
    {
        // beast::tcp_stream closes the socket when its deadline passes, so
        // there is no 408: the connection just ends. (With a valid token: a
        // request without one is answered 401 from its header.)
        CHECK(raw_exchange(srv.port(),
                           "POST /api/v1/projects/demo/runs HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\n"
                           "Authorization: Bearer " +
                               token + "\r\nContent-Length: 100\r\n\r\nabc",
                           5s)
                  .empty());
    }
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(took < 3s); // the server closed it, not our 5 s receive timeout
    CHECK(send(srv.port(), http::verb::get, "/healthz").status == 200);
}

TEST_CASE("SIGTERM: idle connections close, the request in flight is answered, the process exits 0")
{
    temp_dir dir;
    const auto db = dir.path() / "term.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    server_process srv(db, log);

    // An idle keep-alive connection must not keep the server alive.
    net::io_context ioc;
    tcp::socket idle(ioc);
    idle.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), srv.port()));
    CHECK(send(srv.port(), http::verb::post, "/api/v1/projects/demo/runs", run_body("baseline").dump(),
               "application/json", token)
              .status == 201);
    // A request in flight: header and half the body sent before the signal.
    const std::string body = run_body("candidate").dump();
    const std::string head = "POST /api/v1/projects/demo/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             "Authorization: Bearer " +
                             token + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    tcp::socket busy(ioc);
    busy.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), srv.port()));
    set_receive_timeout(busy, 10s);
    net::write(busy, net::buffer(head + body.substr(0, body.size() / 2)));
    std::this_thread::sleep_for(200ms); // let the server read the header

    srv.proc().signal(SIGTERM);
    std::this_thread::sleep_for(200ms);
    net::write(busy, net::buffer(body.substr(body.size() / 2)));
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(busy, buffer, res);
    CHECK(res.result_int() == 201);
    CHECK_FALSE(res.keep_alive()); // closing after the last answer
    CHECK(srv.proc().wait(5s) == 0);

    sqlite_db check(db);
    CHECK(check.column("PRAGMA integrity_check") == std::vector<std::string>{"ok"});
    CHECK(check.column("SELECT COUNT(*) FROM runs") == std::vector<std::string>{"2"});
}

TEST_CASE("SIGTERM while a fresh compare waits for the committer: it is stored and answered, then the process exits 0")
{
    temp_dir dir;
    const auto db = dir.path() / "term-compare.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    server_process srv(db, log);
    const auto port = srv.port();
    const auto [base, cand] = upload_pair(port, token);

    // Another writer holds the database's write lock: the compare is computed
    // (reads need no lock), and its row waits with the committer.
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    std::unique_ptr<sqlite3, decltype(&sqlite3_close)> writer(raw, &sqlite3_close);
    REQUIRE(sqlite3_exec(writer.get(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);

    const std::string body = json{{"baseline_run", base}, {"candidate_run", cand}}.dump();
    net::io_context ioc;
    tcp::socket busy(ioc);
    busy.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    set_receive_timeout(busy, 10s);
    net::write(busy, net::buffer(raw_compare(token, body)));
    std::this_thread::sleep_for(300ms); // computed, and queued
    srv.proc().signal(SIGTERM);
    std::this_thread::sleep_for(300ms);
    // Still serving the request in flight: no answer yet, the process alive.
    CHECK(::kill(srv.proc().pid(), 0) == 0);
    pollfd waiting{busy.native_handle(), POLLIN, 0};
    CHECK(::poll(&waiting, 1, 0) == 0);
    REQUIRE(sqlite3_exec(writer.get(), "ROLLBACK", nullptr, nullptr, nullptr) == SQLITE_OK);

    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(busy, buffer, res);
    CHECK(res.result_int() == 201);
    CHECK_FALSE(res.keep_alive()); // closing after the last answer
    const auto id = json::parse(res.body()).at("comparison_id").get<std::int64_t>();
    CHECK(srv.proc().wait(10s) == 0);

    sqlite_db check(db);
    CHECK(check.column("SELECT id FROM comparisons") == std::vector<std::string>{std::to_string(id)});
}

TEST_CASE("SIGKILL in the middle of a stream of uploads leaves no partial run")
{
    temp_dir dir;
    const auto db = dir.path() / "kill.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    std::atomic<int> accepted{0};
    {
        server_process srv(db, log);
        const auto port = srv.port();
        const std::string body = run_body("baseline").dump();
        std::atomic<bool> done{false};
        // Two uploaders, so that the kill lands while writes are in flight.
        std::vector<std::thread> uploaders;
        for (int t = 0; t < 2; ++t) {
            uploaders.emplace_back([&] {
                while (!done) {
                    try {
                        if (send(port, http::verb::post, "/api/v1/projects/demo/runs", body, "application/json", token)
                                .status == 201) {
                            ++accepted;
                        }
                    } catch (const std::exception&) {
                        // Connection refused or reset once the server is gone.
                    }
                }
            });
        }
        while (accepted < 10) std::this_thread::sleep_for(5ms);
        srv.proc().signal(SIGKILL);
        CHECK(srv.proc().wait(5s) == 128 + SIGKILL);
        done = true;
        for (auto& t : uploaders) t.join();
    }

    {
        sqlite_db check(db);
        CHECK(check.column("PRAGMA integrity_check") == std::vector<std::string>{"ok"});
        const auto runs = std::stoi(check.column("SELECT COUNT(*) FROM runs").at(0));
        CHECK(runs >= accepted.load());
        // Every stored run is whole: all its samples and summaries, none partial.
        CHECK(check.column("SELECT COUNT(DISTINCT n) FROM (SELECT COUNT(*) AS n FROM samples GROUP BY run_id)") ==
              std::vector<std::string>{"1"});
        CHECK(check.column(
                  "SELECT COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM samples s WHERE s.run_id = r.id)") ==
              std::vector<std::string>{"0"});
        CHECK(check.column("SELECT COUNT(DISTINCT n) FROM (SELECT COUNT(*) AS n FROM summaries GROUP BY run_id)") ==
              std::vector<std::string>{"1"});
    }

    // Restarted on the same file, it serves and stores again.
    server_process again(db, log);
    const auto before = count_runs(again.port(), token);
    CHECK(send(again.port(), http::verb::post, "/api/v1/projects/demo/runs", run_body("candidate").dump(),
               "application/json", token)
              .status == 201);
    CHECK(count_runs(again.port(), token) == before + 1);
}

TEST_CASE("a google/benchmark suite over a socket: a run per benchmark, all or none, and through perfgate upload")
{
    temp_dir dir;
    const auto db = dir.path() / "suite.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    server_process srv(db, log);
    const auto port = srv.port();
    auto gbench = [](const std::string& name) {
        std::ifstream in(std::string(PERFGATE_TESTDATA_DIR) + "/gbench/" + name, std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    };
    auto benchmarks = [&] {
        auto r = send(port, http::verb::get, "/api/v1/projects/demo/benchmarks", {}, {}, token);
        REQUIRE(r.status == 200);
        return r.parsed().at("benchmarks");
    };

    // The raw output, fields in the query string.
    auto up = send(port, http::verb::post, "/api/v1/projects/demo/runs?role=baseline&git_sha=abc123&branch=main",
                   gbench("baseline.json"), "text/csv", token);
    INFO(up.body);
    REQUIRE(up.status == 201);
    const json answer = up.parsed();
    REQUIRE(answer.at("run_ids").size() == 4);
    CHECK(answer.at("run_id") == answer.at("run_ids")[0]);
    CHECK(answer.at("benchmarks")[3] == "BM_StringCat/threads:2");
    CHECK(benchmarks().size() == 4);

    // A cut file is named with its byte; nothing stored, the server serves on.
    const std::string cut = gbench("candidate.json").substr(0, 5000);
    check_error(send(port, http::verb::post, "/api/v1/projects/demo/runs?role=candidate&git_sha=def456&branch=main",
                     cut, "text/csv", token),
                422, "ingest.bad_input");
    // An unknown input_format in the JSON body: 400 naming the field.
    const json body = {{"role", "candidate"},
                       {"git_sha", "def456"},
                       {"branch", "main"},
                       {"perf_csv", gbench("candidate.json")},
                       {"input_format", "gbench2"}};
    auto bad_format = send(port, http::verb::post, "/api/v1/projects/demo/runs", body.dump(), "application/json",
                           token);
    check_error(bad_format, 400, "ingest.bad_field");
    CHECK(bad_format.body.find("input_format") != std::string::npos);
    // One counter name the store refuses (empty): none of the suite is stored.
    json spaced = json::parse(gbench("candidate.json"));
    spaced["benchmarks"][0][""] = 1.0; // a user counter without a name
    check_error(send(port, http::verb::post, "/api/v1/projects/demo/runs?role=candidate&git_sha=def456&branch=main",
                     spaced.dump(), "text/csv", token),
                400, "ingest.bad_field");
    const json before = benchmarks();
    CHECK(before.size() == 4);

    // perfgate upload --server: the client's path, with its Idempotency-Key.
    const auto cli = run_perfgate({"upload", "--server", "http://127.0.0.1:" + std::to_string(port), "--token", token,
                                   "--project", "demo", "--role", "candidate", "--git-sha", "def456", "--branch",
                                   "main", "--format", "json", PERFGATE_TESTDATA_DIR "/gbench/candidate.json"},
                                  dir.path());
    INFO(cli.err);
    REQUIRE(cli.code == 0);
    const json uploaded = json::parse(cli.out);
    CHECK(uploaded.at("run_ids").size() == 4);
    CHECK(uploaded.at("benchmarks")[2] == "BM_Accumulate");
    const json after = benchmarks();
    REQUIRE(after.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) CHECK(after[i].at("runs") > before[i].at("runs"));
    CHECK(send(port, http::verb::get, "/healthz").status == 200);
}

TEST_CASE("a comparison's markdown over a real server: absolute links on --public-url, none without")
{
    temp_dir dir;
    const auto db = dir.path() / "links.db";
    const std::string token = create_token(db, "demo");
    REQUIRE(run_perfgate({"project", "--db", db.string(), "--project", "demo", "--repository-url",
                          "https://github.com/acme/demo"})
                .code == 0);
    // The markdown of comparison `id`, asked with Host: evil.example.
    auto markdown = [&](unsigned short port, std::int64_t id) {
        const std::string answer = raw_exchange(
            port, fmt::format("GET /api/v1/projects/demo/comparisons/{}?format=markdown HTTP/1.1\r\nHost: "
                              "evil.example\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
                              id, token));
        REQUIRE(answer.starts_with("HTTP/1.1 200"));
        return answer.substr(answer.find("\r\n\r\n") + 4);
    };
    auto compare = [&](unsigned short port) {
        const auto [base, cand] = upload_pair(port, token);
        const auto cmp = send(port, http::verb::post, "/api/v1/projects/demo/compare",
                              json{{"baseline_run", base}, {"candidate_run", cand}}.dump(), "application/json", token);
        REQUIRE(cmp.status == 201);
        // What the runs were measured with and at, for the comment's head.
        CHECK(cmp.parsed().at("measured") == json{{"backend", "perf"},
                                                  {"testbed", "ci-box"},
                                                  {"baseline_sha", "0123abcd"},
                                                  {"candidate_sha", "0123abcd"}});
        return cmp.parsed().at("comparison_id").get<std::int64_t>();
    };
    SUBCASE("with --public-url: the dashboard page, absolute; commits linked to the repository")
    {
        server_process srv(db, dir.path() / "server.log", {"--public-url", "https://perf.example.com/"});
        const auto id = compare(srv.port());
        const std::string md = markdown(srv.port(), id);
        INFO(md);
        CHECK(md.find(fmt::format("[stored comparison](https://perf.example.com/p/demo/comparisons/{})", id)) !=
              std::string::npos);
        CHECK(md.find("Head [`0123abc`](https://github.com/acme/demo/commit/0123abcd) vs baseline [`0123abc`]") !=
              std::string::npos);
        CHECK(md.find("backend **perf** · testbed **ci-box**") != std::string::npos);
        CHECK(md.find("](/") == std::string::npos);
        CHECK(md.find("evil.example") == std::string::npos);
    }
    SUBCASE("without: no link (the Host header is the client's), and a line says why")
    {
        server_process srv(db, dir.path() / "server.log");
        const auto id = compare(srv.port());
        const std::string md = markdown(srv.port(), id);
        INFO(md);
        CHECK(md.find("](/") == std::string::npos);
        CHECK(md.find("evil.example") == std::string::npos);
        CHECK(md.find(fmt::format("_stored comparison {}: no link, the server has no --public-url_", id)) !=
              std::string::npos);
    }
}
