// Comparisons of stored runs that were not measured interleaved (issue 29,
// finding 4), over a real server: A/A runs of two sessions whose levels
// differ by far more than their within-run spread, compared through the
// compare route with and without a history of consecutive baseline runs,
// a real shift, the dashboard's page, and runs of one session.
#include "server_cases.hpp"

#include <doctest/doctest.h>

#include "service/service.hpp"
#include "store/runs.hpp"
#include "store/store.hpp"

using namespace perfgate::test::server_cases;

namespace {

// perf stat -x, output of ten repetitions of task-clock at `level` msec,
// spread +-0.1% by a fixed LCG: a session's level shows, its noise hardly.
std::string session_capture(double level, std::uint64_t& state)
{
    std::string out;
    for (int rep = 0; rep < 10; ++rep) {
        const double v = level * (1 + 0.002 * (perfgate::test::lcg_uniform(state) - 0.5));
        out += "# started on Sun Nov 22 02:11:05 2026\n\n";
        out += fmt::format("{:.4f},msec,task-clock,{},100.00,0.999,CPUs utilized\n", v,
                           static_cast<long long>(v * 1e6));
    }
    return out;
}

struct uploader {
    unsigned short port;
    std::string token;
    std::uint64_t state = 7;

    std::int64_t run(const std::string& benchmark, const std::string& role, const std::string& branch, double level,
                     const std::string& session = {}, const std::string& testbed = "ci-box",
                     std::string* capture = nullptr)
    {
        json body = {{"benchmark", benchmark},
                     {"role", role},
                     {"git_sha", fmt::format("{:040x}", state)},
                     {"branch", branch},
                     {"testbed", {{"name", testbed}, {"cores", 2}}},
                     {"perf_csv", session_capture(level, state)}};
        if (!session.empty()) body["session"] = session;
        if (capture) *capture = body["perf_csv"].get<std::string>();
        const auto r = send(port, http::verb::post, "/api/v1/projects/demo/runs", body.dump(), "application/json",
                            token);
        REQUIRE_MESSAGE(r.status == 201, r.body);
        return r.parsed().at("run_id").get<std::int64_t>();
    }

    json compare(std::int64_t base, std::int64_t head)
    {
        const auto r = send(port, http::verb::post, "/api/v1/projects/demo/compare",
                            json{{"baseline_run", base}, {"candidate_run", head}}.dump(), "application/json", token);
        REQUIRE_MESSAGE(r.status == 201, r.body);
        return r.parsed();
    }
};

const json& task_clock(const json& report)
{
    for (const auto& c : report.at("benchmarks").at(0).at("counters")) {
        if (c.at("name") == "task-clock") return c;
    }
    FAIL("no task-clock in the report");
    return report;
}

// Session effects of 20 consecutive baseline runs, in % of the level: about
// 1.2% sd, 10x the within-run spread.
constexpr double history_effects[] = {0.9,  -1.4, 0.3, 1.8,  -0.6, -1.9, 1.1,  0.2, -0.8, 1.5,
                                      -1.1, 0.6,  1.9, -0.2, -1.6, 0.8,  -0.4, 1.3, -1.3, 0.1};

} // namespace

TEST_CASE("compare any two: runs measured apart are judged against the testbed's between-run variation")
{
    temp_dir dir;
    const auto db = dir.path() / "apart.db";
    const std::string token = create_token(db, "demo");
    server_process srv(db, dir.path() / "server.log", {"--public-read"});
    uploader up{srv.port(), token};

    for (const double e : history_effects) up.run("parse", "baseline", "main", 100.0 * (1 + e / 100));
    // An A/A pair of two sessions: the machine 1.2% slower in the second,
    // 24 times the within-run spread of +-0.1%.
    std::string base_csv, head_csv;
    const auto base = up.run("parse", "baseline", "main", 98.8, {}, "ci-box", &base_csv);
    const auto head = up.run("parse", "candidate", "feature", 101.2, {}, "ci-box", &head_csv);

    SUBCASE("the old rule, perfgate compare of the same captures as if interleaved, fails them")
    {
        std::ofstream(dir.path() / "b.csv") << base_csv;
        std::ofstream(dir.path() / "c.csv") << head_csv;
        auto r = run_perfgate({"compare", "--baseline", "b.csv", "--candidate", "c.csv", "--format", "json"},
                              dir.path());
        CHECK(r.code == 1);
        const json report = json::parse(r.out);
        CHECK(task_clock(report).at("status") == "regression");
        CHECK_FALSE(report.at("benchmarks").at(0).contains("interleaved"));
        // Declared not interleaved, with no history to judge: inconclusive.
        auto apart = run_perfgate({"compare", "--baseline", "b.csv", "--candidate", "c.csv", "--format", "json",
                                   "--not-interleaved"},
                                  dir.path());
        CHECK(apart.code == 0);
        const json declared = json::parse(apart.out);
        CHECK(declared.at("verdict") == "inconclusive");
        CHECK(declared.at("benchmarks").at(0).at("interleaved") == false);
        CHECK(task_clock(declared).at("reason").get<std::string>().find("no store") != std::string::npos);
    }
    SUBCASE("with 21 consecutive baseline runs: not a fail, and the report says how it was judged")
    {
        const json report = up.compare(base, head);
        CHECK(report.at("verdict") != "fail");
        CHECK(report.at("benchmarks").at(0).at("interleaved") == false);
        const json& tc = task_clock(report);
        CHECK(tc.at("status") == "inconclusive");
        CHECK(tc.at("delta_pct").get<double>() > 2.0); // above the threshold, yet no regression
        CHECK(tc.at("p_value").get<double>() < 1e-4);  // the within-run rank test alone would fail it
        const json& between = tc.at("between_runs");
        CHECK(between.at("history_runs") == 21);
        CHECK(between.at("p_value").get<double>() > 0.05);
        CHECK(tc.at("p_adjusted") == between.at("p_value")); // the only gated counter: Holm leaves it
        CHECK(between.at("sd").get<double>() > 1.0);         // msec: ~1.2% session effects, in differences
        CHECK(tc.at("reason").get<std::string>().starts_with("not measured interleaved: the between-run interval ["));

        SUBCASE("the dashboard's \"compare any two\" (signed in) reaches the same verdict")
        {
            const auto signin = send(srv.port(), http::verb::post, "/p/demo/signin", "token=" + token,
                                     "application/x-www-form-urlencoded");
            REQUIRE(signin.status == 303);
            const std::string set_cookie(signin.raw[http::field::set_cookie]);
            const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
            const std::string answer = raw_exchange(
                srv.port(), fmt::format("GET /p/demo/compare?base={}&head={} HTTP/1.1\r\nHost: x\r\nCookie: {}\r\n"
                                        "Connection: close\r\n\r\n",
                                        base, head, cookie));
            REQUIRE(answer.starts_with("HTTP/1.1 303"));
            const auto at = answer.find("/p/demo/comparisons/");
            REQUIRE(at != std::string::npos);
            const auto id = std::stoll(answer.substr(at + std::string("/p/demo/comparisons/").size()));
            CHECK(id == report.at("comparison_id").get<std::int64_t>()); // the same gate: the stored comparison
            const auto page = send(srv.port(), http::verb::get, fmt::format("/p/demo/comparisons/{}", id));
            REQUIRE(page.status == 200);
            CHECK(page.body.find("id=\"verdict\">inconclusive<") != std::string::npos);
            CHECK(page.body.find("these runs were not measured interleaved") != std::string::npos);
        }
        SUBCASE("the dashboard's comparison page says the runs were not interleaved")
        {
            const auto id = report.at("comparison_id").get<std::int64_t>();
            const auto page = send(srv.port(), http::verb::get, fmt::format("/p/demo/comparisons/{}", id));
            REQUIRE(page.status == 200);
            CHECK(page.body.find("these runs were not measured interleaved") != std::string::npos);
            const auto text = send(srv.port(), http::verb::get,
                                   fmt::format("/api/v1/projects/demo/comparisons/{}?format=text", id), {}, {}, token);
            REQUIRE(text.status == 200);
            CHECK(text.body.find("note: these runs were not measured interleaved") != std::string::npos);
            const auto md = send(srv.port(), http::verb::get,
                                 fmt::format("/api/v1/projects/demo/comparisons/{}?format=markdown", id), {}, {},
                                 token);
            REQUIRE(md.status == 200);
            CHECK(md.body.find("> these runs were not measured interleaved") != std::string::npos);
        }
    }
    SUBCASE("a real shift much larger than the between-run spread still fails")
    {
        const auto slow = up.run("parse", "candidate", "feature", 115.0);
        const json report = up.compare(base, slow);
        CHECK(report.at("verdict") == "fail");
        const json& tc = task_clock(report);
        CHECK(tc.at("status") == "regression");
        CHECK(tc.at("between_runs").at("p_value").get<double>() < 0.01);
        CHECK(tc.at("reason").get<std::string>().starts_with("not measured interleaved: against"));
    }
    SUBCASE("without history: inconclusive, saying there is none to judge between-run variation")
    {
        const auto b = up.run("fresh", "baseline", "main", 98.8);
        const auto c = up.run("fresh", "candidate", "feature", 101.2);
        const json report = up.compare(b, c);
        CHECK(report.at("verdict") == "inconclusive");
        const json& tc = task_clock(report);
        CHECK(tc.at("status") == "inconclusive");
        CHECK(tc.at("between_runs").at("history_runs") == 1);
        CHECK(tc.at("between_runs").at("p_value").is_null());
        CHECK(tc.at("reason") == "not measured interleaved, and the testbed's history has 1 baseline run of this "
                                 "counter, 10 are needed to judge between-run variation: measure baseline and "
                                 "candidate in one perfgate run");
    }
    SUBCASE("runs on two testbeds: no history of one measures their difference")
    {
        const auto other = up.run("parse", "candidate", "feature", 101.2, {}, "other-box");
        const json report = up.compare(base, other);
        const json& tc = task_clock(report);
        CHECK(tc.at("status") == "inconclusive");
        CHECK(tc.at("reason").get<std::string>().find("different testbeds ('ci-box' and 'other-box')") !=
              std::string::npos);
    }
    SUBCASE("two runs of one session (as perfgate run stores them) are interleaved: the rank test, as before")
    {
        const auto b = up.run("parse", "baseline", "main", 98.8, "0123456789abcdef");
        const auto c = up.run("parse", "candidate", "feature", 101.2, "0123456789abcdef");
        const json report = up.compare(b, c);
        CHECK(report.at("verdict") == "fail");
        CHECK(report.at("benchmarks").at(0).at("interleaved") == true);
        const json& tc = task_clock(report);
        CHECK(tc.at("status") == "regression");
        CHECK_FALSE(tc.contains("between_runs"));
        CHECK(tc.at("p_adjusted") == tc.at("p_value"));
        const auto page = send(srv.port(), http::verb::get,
                               fmt::format("/p/demo/comparisons/{}", report.at("comparison_id").get<std::int64_t>()));
        REQUIRE(page.status == 200);
        CHECK(page.body.find("not measured interleaved") == std::string::npos);
    }
}

TEST_CASE("a run's session: uploaded, validated, part of the idempotency digest")
{
    temp_dir dir;
    const auto db = dir.path() / "session.db";
    const std::string token = create_token(db, "demo");
    server_process srv(db, dir.path() / "server.log");
    json body = run_body("baseline");
    body["session"] = "has space";
    const auto bad = send(srv.port(), http::verb::post, "/api/v1/projects/demo/runs", body.dump(), "application/json",
                          token);
    check_error(bad, 400, "ingest.bad_field");
    CHECK(bad.error().at("message").get<std::string>().find("session") != std::string::npos);
    body["session"] = 12;
    check_error(send(srv.port(), http::verb::post, "/api/v1/projects/demo/runs", body.dump(), "application/json",
                     token),
                400, "ingest.bad_field");
    CHECK(count_runs(srv.port(), token) == 0);
    // text/csv uploads take it in the query string.
    const auto csv = send(srv.port(), http::verb::post,
                          "/api/v1/projects/demo/runs?role=candidate&git_sha=4567ef&branch=main&session=s-1",
                          perfgate::test::read_testdata("appended-10-runs.csv"), "text/csv", token);
    REQUIRE(csv.status == 201);
    perfgate::store::store s(db);
    const auto stored = s.runs().load("demo", csv.parsed().at("run_id").get<std::int64_t>());
    REQUIRE(stored.has_value());
    CHECK(stored->session == "s-1");
    // perfgate upload --session: two captures measured together by the user's own harness.
    std::vector<std::int64_t> ids;
    for (const char* role : {"baseline", "candidate"}) {
        auto up = run_perfgate({"upload",    "--server",
                                srv.url(),   "--project",
                                "demo",      "--token",
                                token,       "--role",
                                role,        "--git-sha",
                                "89abcd",    "--branch",
                                "main",      "--benchmark",
                                "own",       "--session",
                                "harness-7", "--format",
                                "json",      std::string(PERFGATE_TESTDATA_DIR) + "/perf-stat/appended-10-runs.csv"});
        REQUIRE_MESSAGE(up.code == 0, up.err);
        ids.push_back(json::parse(up.out).at("run_id").get<std::int64_t>());
    }
    const auto cmp = send(srv.port(), http::verb::post, "/api/v1/projects/demo/compare",
                          json{{"baseline_run", ids[0]}, {"candidate_run", ids[1]}}.dump(), "application/json", token);
    REQUIRE(cmp.status == 201);
    CHECK(cmp.parsed().at("benchmarks").at(0).at("interleaved") == true);
    CHECK(perfgate::service::ingest_request_digest(perfgate::model::ingest_request{}) !=
          perfgate::service::ingest_request_digest([] {
              perfgate::model::ingest_request r;
              r.session = "s-1";
              return r;
          }()));
}
