// The real server storing fresh comparisons through its committer, and
// opening and triaging alerts as a series steps.
#include "server_cases.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::server_cases;


TEST_CASE("fresh compares are stored by the committer: pipelined and concurrent, each answered with its comparison")
{
    temp_dir dir;
    const auto db = dir.path() / "commits.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    server_process srv(db, log);
    const auto port = srv.port();
    const auto uploaded = upload_pair(port, token);
    const std::int64_t base = uploaded.first, cand = uploaded.second;
    // A distinct threshold makes a distinct (fresh) comparison of the same runs.
    const auto compare_body = [&](double threshold_pct) {
        return json{{"baseline_run", base}, {"candidate_run", cand}, {"policy", {{"threshold_pct", threshold_pct}}}}
            .dump();
    };
    std::set<std::int64_t> ids;

    // Three fresh compares and a GET pipelined on one keep-alive connection:
    // answers come from the committer's thread, in order, and the stream
    // stays in step.
    {
        net::io_context ioc;
        tcp::socket s = connect_to(ioc, port);
        set_receive_timeout(s, 10s);
        std::string pipelined;
        for (const double t : {3.0, 4.0, 5.0}) pipelined += raw_compare(token, compare_body(t));
        pipelined += "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        net::write(s, net::buffer(pipelined));
        beast::flat_buffer buffer;
        for (const double t : {3.0, 4.0, 5.0}) {
            http::response<http::string_body> res;
            http::read(s, buffer, res);
            REQUIRE(res.result_int() == 201);
            CHECK(res.keep_alive());
            const auto report = json::parse(res.body());
            CHECK(report.at("policy").at("threshold_pct") == t);
            const auto id = report.at("comparison_id").get<std::int64_t>();
            CHECK(res[http::field::location] == "/api/v1/projects/demo/comparisons/" + std::to_string(id));
            ids.insert(id);
        }
        http::response<http::string_body> health;
        http::read(s, buffer, health);
        CHECK(health.result_int() == 200);
        CHECK_FALSE(health.keep_alive());
    }
    CHECK(ids.size() == 3);

    // Eight clients at once: the even requests of each are one comparison
    // (one id for all), the odd ones each a comparison of its own.
    constexpr int clients = 8, each = 10;
    std::mutex mu;
    std::vector<std::pair<int, reply>> replies;
    {
        std::vector<std::jthread> pool;
        for (int c = 0; c < clients; ++c) {
            pool.emplace_back([&, c] {
                for (int i = 0; i < each; ++i) {
                    const double t = i % 2 ? 10.0 + c * each + i : 7.0;
                    reply r = send(port, http::verb::post, "/api/v1/projects/demo/compare", compare_body(t),
                                   "application/json", token);
                    std::lock_guard lock(mu);
                    replies.emplace_back(i, std::move(r));
                }
            });
        }
    }
    REQUIRE(replies.size() == clients * each);
    std::set<std::int64_t> shared, own;
    for (const auto& [i, r] : replies) {
        REQUIRE(r.status == 201);
        (i % 2 ? own : shared).insert(r.parsed().at("comparison_id").get<std::int64_t>());
    }
    CHECK(shared.size() == 1);
    CHECK(own.size() == clients * each / 2);
    for (const auto id : own) CHECK_FALSE(ids.contains(id));
    // Every answer is a stored comparison.
    for (const auto id : {*shared.begin(), *own.begin(), *own.rbegin(), *ids.begin()}) {
        const auto stored = send(port, http::verb::get, "/api/v1/projects/demo/comparisons/" + std::to_string(id), {},
                                 {}, token);
        CHECK(stored.status == 200);
    }
    const auto listed = send(port, http::verb::get, "/api/v1/projects/demo/comparisons?limit=200", {}, {}, token);
    REQUIRE(listed.status == 200);
    CHECK(listed.parsed().at("comparisons").size() == 3 + 1 + clients * each / 2);

    // The committer's counters: every fresh compare went through it (a
    // repeat of a stored one may be answered before it), no failures.
    const double rows = metric_of(port, token, "perfgate_compare_commit_rows_total");
    const double commits = metric_of(port, token, "perfgate_compare_commits_total");
    CHECK(rows >= 3 + 1 + clients * each / 2);
    CHECK(rows <= 3 + clients * each);
    CHECK(commits >= 1);
    CHECK(commits <= rows);
    CHECK(metric_of(port, token, "perfgate_compare_commit_failed_total") == 0);
    CHECK(metric_of(port, token, "perfgate_compare_commit_largest") >= 1);
}

TEST_CASE("alerts over a real server: a 5% step at run 40 opens one alert there, PATCH triages it")
{
    temp_dir dir;
    const auto db = dir.path() / "alerts.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    const std::string calm_token = create_token(db, "calm");
    server_process srv(db, log);
    const auto port = srv.port();

    const auto ids = upload_series(port, "demo", token, 60, 40, 0.05);
    const auto calm = upload_series(port, "calm", calm_token, 60, 60, 0.0);
    REQUIRE(calm.size() == 60);

    auto none = send(port, http::verb::get, "/api/v1/projects/calm/alerts", {}, {}, calm_token);
    REQUIRE(none.status == 200);
    CHECK(none.parsed().at("alerts").empty());

    // Detection runs after the upload has answered (a worker thread): wait
    // until the worker has been through all 120 baseline uploads.
    const auto metric = [&](const std::string& name) {
        const std::string text = send(port, http::verb::get, "/metrics", {}, {}, token).body;
        const auto at = text.find("\n" + name + " ");
        return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
    };
    for (int i = 0; i < 300 && metric("perfgate_watch_jobs_total") + metric("perfgate_watch_coalesced_total") < 120;
         ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(metric("perfgate_watch_jobs_total") + metric("perfgate_watch_coalesced_total") == 120);
    for (int i = 0; i < 100 && metric("perfgate_watch_pending") != 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(metric("perfgate_watch_failed_total") == 0);

    auto list = send(port, http::verb::get, "/api/v1/projects/demo/alerts", {}, {}, token);
    REQUIRE(list.status == 200);
    const json alerts = list.parsed().at("alerts");
    REQUIRE(alerts.size() == 1);
    const json a = alerts.front();
    const auto at = std::find(ids.begin(), ids.end(), a.at("run_id").get<std::int64_t>()) - ids.begin();
    CHECK(at >= 39);
    CHECK(at <= 41);
    CHECK(a.at("status") == "untriaged");
    CHECK(a.at("benchmark") == "parse");
    CHECK(a.at("counter") == "task-clock");
    CHECK(a.at("delta_pct").get<double>() == doctest::Approx(5.0).epsilon(0.2));
    CHECK(a.at("shift_ci").size() == 2);
    const auto id = a.at("id").get<std::int64_t>();
    const std::string path = "/api/v1/projects/demo/alerts/" + std::to_string(id);
    // The server's log says which upload opened it.
    CHECK(read_text(log).find(fmt::format("alert {} opened for project 'demo' benchmark 'parse' by detection after run",
                                          id)) != std::string::npos);

    // The change point is listed, and history marks the run where it starts.
    auto cps = send(port, http::verb::get, "/api/v1/projects/demo/change-points?benchmark=parse&counter=task-clock", {},
                    {}, token);
    REQUIRE(cps.status == 200);
    REQUIRE(cps.parsed().at("change_points").size() == 1);
    CHECK(cps.parsed().at("change_points").front().at("run_id") == a.at("run_id"));
    auto hist = send(port, http::verb::get, "/api/v1/projects/demo/history?benchmark=parse&counter=task-clock", {}, {},
                     token);
    REQUIRE(hist.status == 200);
    const json points = hist.parsed().at("points");
    REQUIRE(points.size() == 60);
    CHECK(points.at(static_cast<std::size_t>(at)).at("change_point") == true);
    CHECK(std::count_if(points.begin(), points.end(), [](const json& p) { return p.at("change_point") == true; }) == 1);

    SUBCASE("bad triage requests: a clear error each, nothing changed")
    {
        check_error(send(port, http::verb::patch, path, R"({"status":"acknowledged"})", "application/json", {}), 401,
                    "auth.missing_token");
        check_error(send(port, http::verb::patch, path, R"({"status":"acknowledged"})", "application/json", calm_token),
                    403, "auth.forbidden");
        check_error(send(port, http::verb::patch, "/api/v1/projects/calm/alerts/" + std::to_string(id),
                         R"({"status":"acknowledged"})", "application/json", calm_token),
                    404, "alert.not_found");
        check_error(send(port, http::verb::patch, path, R"({"status":"closed"})", "application/json", token), 400,
                    "alert.bad_status");
        check_error(send(port, http::verb::patch, path, R"({"status":"fixed","owner":"me"})", "application/json",
                         token),
                    400, "ingest.bad_field");
        check_error(send(port, http::verb::patch, path, R"({"status":"fixed","note":7})", "application/json", token),
                    400, "ingest.bad_field");
        check_error(send(port, http::verb::patch, path, "{", "application/json", token), 400, "http.bad_json");
        check_error(send(port, http::verb::patch, path, R"({"status":"fixed"})", "text/plain", token), 415,
                    "http.unsupported_media_type");
        check_error(send(port, http::verb::delete_, path, {}, {}, token), 405, "http.method_not_allowed");
        check_error(send(port, http::verb::get, "/api/v1/projects/demo/alerts/0", {}, {}, token), 400,
                    "http.bad_param");
        check_error(send(port, http::verb::get, "/api/v1/projects/demo/alerts/99999999999999999999", {}, {}, token),
                    400, "http.bad_param");
        check_error(send(port, http::verb::get, "/api/v1/projects/demo/alerts?status=open", {}, {}, token), 400,
                    "http.bad_param");
        check_error(send(port, http::verb::get, "/api/v1/projects/demo/alerts?limit=1000000", {}, {}, token), 400,
                    "http.bad_param");
        check_error(send(port, http::verb::get, "/api/v1/projects/demo/alerts?stauts=fixed", {}, {}, token), 400,
                    "http.bad_param");
        check_error(send(port, http::verb::get, "/api/v1/projects/demo/change-points?benchmark=parse", {}, {}, token),
                    400, "http.missing_param");
        auto same = send(port, http::verb::get, path, {}, {}, token);
        REQUIRE(same.status == 200);
        CHECK(same.parsed().at("status") == "untriaged");
        CHECK(same.parsed().at("note") == "");
    }
    SUBCASE("PATCH acknowledges; the CLI lists and triages the same alert")
    {
        auto r = send(port, http::verb::patch, path, R"({"status":"acknowledged","note":"bisecting"})",
                      "application/json", token);
        REQUIRE_MESSAGE(r.status == 200, r.body);
        CHECK(r.parsed().at("status") == "acknowledged");
        CHECK(r.parsed().at("note") == "bisecting");
        CHECK(r.parsed().at("changed_at").get<std::int64_t>() > 0);
        auto acked = send(port, http::verb::get, "/api/v1/projects/demo/alerts?status=acknowledged", {}, {}, token);
        CHECK(acked.parsed().at("alerts").size() == 1);

        auto [lst, lst_out,
              lst_err] = run_perfgate({"alerts", "list", "--server", srv.url(), "--project", "demo", "--token", token});
        CHECK(lst == 0);
        CHECK(lst_out.find("acknowledged") != std::string::npos);
        CHECK(lst_out.find("task-clock") != std::string::npos);
        // One alert's numbers as the dashboard writes them: task-clock in ms,
        // never in scientific notation (report/quantity.hpp).
        auto [one, one_out, one_err] = run_perfgate({"alerts", "show", std::to_string(id), "--server", srv.url(),
                                                     "--project", "demo", "--token", token});
        const std::string one_stderr = one_err; // INFO captures it: clang 14 cannot capture a structured binding
        INFO(one_stderr);
        CHECK(one == 0);
        CHECK(one_out.find("  change     mean ") != std::string::npos);
        CHECK(one_out.find(" ms -> ") != std::string::npos);
        CHECK(one_out.find("e+") == std::string::npos);
        auto [set, set_out, set_err] = run_perfgate({"alerts", "set", std::to_string(id), "fixed", "--note",
                                                     "reverted in #9", "--server", srv.url(), "--project", "demo",
                                                     "--token", token, "--format", "json"});
        CHECK(set == 0);
        const json fixed = json::parse(set_out);
        CHECK(fixed.at("status") == "fixed");
        CHECK(fixed.at("note") == "reverted in #9");
        auto [bad, bad_out, bad_err] = run_perfgate({"alerts", "set", std::to_string(id), "closed", "--server",
                                                     srv.url(), "--project", "demo", "--token", token});
        CHECK(bad == 2);
        auto [missing, missing_out, missing_err] = run_perfgate({"alerts", "show", "424242", "--server", srv.url(),
                                                                 "--project", "demo", "--token", token});
        CHECK(missing == 2);
    }
}

TEST_CASE("alerts over a real server: perfgate serve --change-point-* is the default, a project's setting wins")
{
    temp_dir dir;
    const auto db = dir.path() / "settings.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    const std::string strict_token = create_token(db, "strict");
    // "demo" lowers min_magnitude below its 5% step; "strict" keeps the
    // server's 10%.
    auto [set, set_out, set_err] = run_perfgate({"project", "--db", db.string(), "--project", "demo",
                                                 "--change-point-min-magnitude", "0.02"});
    REQUIRE(set == 0);
    CHECK(set_out.find("change_point_min_magnitude 0.02\n") != std::string::npos);
    server_process srv(db, log, {"--change-point-min-magnitude", "0.1"});
    const auto port = srv.port();
    (void)upload_series(port, "demo", token, 60, 40, 0.05);
    (void)upload_series(port, "strict", strict_token, 60, 40, 0.05);
    const auto metric = [&](const std::string& name) {
        const std::string text = send(port, http::verb::get, "/metrics", {}, {}, token).body;
        const auto at = text.find("\n" + name + " ");
        return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
    };
    for (int i = 0; i < 300 && metric("perfgate_watch_jobs_total") + metric("perfgate_watch_coalesced_total") < 120;
         ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (int i = 0; i < 100 && metric("perfgate_watch_pending") != 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE(metric("perfgate_watch_jobs_total") + metric("perfgate_watch_coalesced_total") == 120);
    CHECK(metric("perfgate_watch_failed_total") == 0);
    const auto demo = send(port, http::verb::get, "/api/v1/projects/demo/alerts", {}, {}, token);
    REQUIRE(demo.status == 200);
    CHECK(demo.parsed().at("alerts").size() == 1);
    const auto strict = send(port, http::verb::get, "/api/v1/projects/strict/alerts", {}, {}, strict_token);
    REQUIRE(strict.status == 200);
    CHECK(strict.parsed().at("alerts").empty());
}

TEST_CASE("alerts over a real server: a heap-peak-bytes staircase of memcheck runs is two change points and alerts")
{
    // Memcheck's counts are exact: each step of the staircase is flat, with
    // no variance at all, and one sample per run (one execution a side).
    // Three levels of 14 runs (a leak that grows the peak heap twice); the
    // other memory counters stay flat.
    constexpr std::size_t per_level = 14;
    constexpr double levels[] = {1048576, 1572864, 2621440};
    temp_dir dir;
    const auto db = dir.path() / "memory.db";
    const std::string token = create_token(db, "demo");
    server_process srv(db, dir.path() / "server.log");
    const auto port = srv.port();
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < 3 * per_level; ++i) {
        const std::string csv = fmt::format("# started on perfgate run parse repetition 1\n\n"
                                            "1200,,heap-allocs,1,100.00,,\n"
                                            "4325376,B,heap-bytes,1,100.00,,\n"
                                            "{},B,heap-peak-bytes,1,100.00,,\n"
                                            "0,B,leaked-bytes,1,100.00,,\n"
                                            "0,,memcheck-errors,1,100.00,,\n"
                                            "0,,memcheck-suppressed,1,100.00,,\n",
                                            levels[i / per_level]);
        const json body = {
            {"benchmark", "parse"}, {"role", "baseline"},    {"git_sha", fmt::format("{:040x}", i + 1)},
            {"branch", "main"},     {"backend", "memcheck"}, {"testbed", {{"name", "ci-box"}, {"cores", 2}}},
            {"perf_csv", csv}};
        auto r = send(port, http::verb::post, "/api/v1/projects/demo/runs", body.dump(), "application/json", token);
        REQUIRE_MESSAGE(r.status == 201, r.body);
        ids.push_back(r.parsed().at("run_id").get<std::int64_t>());
    }
    for (int i = 0; i < 300 && metric_of(port, token, "perfgate_watch_jobs_total") +
                                       metric_of(port, token, "perfgate_watch_coalesced_total") <
                                   3 * per_level;
         ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (int i = 0; i < 100 && metric_of(port, token, "perfgate_watch_pending") != 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(metric_of(port, token, "perfgate_watch_failed_total") == 0);

    // The history marks both steps, and only on heap-peak-bytes.
    auto hist = send(port, http::verb::get, "/api/v1/projects/demo/history?benchmark=parse&counter=heap-peak-bytes", {},
                     {}, token);
    REQUIRE(hist.status == 200);
    const json points = hist.parsed().at("points");
    REQUIRE(points.size() == 3 * per_level);
    for (std::size_t i = 0; i < points.size(); ++i) {
        CAPTURE(i);
        CHECK(points[i].at("median").get<double>() == levels[i / per_level]);
        CHECK(points[i].at("change_point") == (i == per_level || i == 2 * per_level));
    }
    auto flat = send(port, http::verb::get, "/api/v1/projects/demo/change-points?benchmark=parse&counter=heap-allocs",
                     {}, {}, token);
    REQUIRE(flat.status == 200);
    CHECK(flat.parsed().at("change_points").empty());

    // An alert for each step, on the run that made it, with its size.
    auto list = send(port, http::verb::get, "/api/v1/projects/demo/alerts", {}, {}, token);
    REQUIRE(list.status == 200);
    const json alerts = list.parsed().at("alerts");
    std::map<std::int64_t, double> opened; // run id -> delta %
    for (const auto& a : alerts) {
        CHECK(a.at("counter") == "heap-peak-bytes");
        opened[a.at("run_id").get<std::int64_t>()] = a.at("delta_pct").get<double>();
    }
    CHECK(opened.size() == alerts.size());
    REQUIRE(opened.contains(ids[per_level]));
    REQUIRE(opened.contains(ids[2 * per_level]));
    CHECK(opened[ids[per_level]] == doctest::Approx(50.0).epsilon(0.01));
    CHECK(opened[ids[2 * per_level]] == doctest::Approx(100.0 * (2621440.0 / 1572864.0 - 1)).epsilon(0.01));
    CHECK(alerts.size() == 2);
}
