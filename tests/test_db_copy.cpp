// perfgate db copy, export and import (store/copy.hpp,
// store/project_export.hpp): a store made through the real server, with
// every kind of row, moved SQLite -> PostgreSQL -> SQLite and exported into
// an empty store; every GET route of the route table and the dashboard's
// pages answer the same before and after.
#include "store/copy.hpp"

#include <doctest/doctest.h>

#include "server/routes.hpp"
#include "store/project_export.hpp"
#include "support/database.hpp"
#include "support/process.hpp"
#include "support/server.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace perfgate::test;
using nlohmann::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string file_text(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A 5-repetition task-clock capture at level ms (+-1%), deterministic.
std::string capture(double level, int salt)
{
    std::string out;
    for (int rep = 0; rep < 5; ++rep) {
        const double v = level * (1 + 0.002 * ((rep * 7 + salt * 3) % 11 - 5));
        out += "# started on Sun Nov 22 02:11:05 2026\n\n";
        out += fmt::format("{:.3f},msec,task-clock,{},100.00,0.999,CPUs utilized\n", v,
                           static_cast<long long>(v * 1e6));
    }
    return out;
}

// What the test store holds, for the routes' parameters.
struct made_store {
    fs::path dir;
    fs::path db;
    std::string token;
    std::int64_t comparison = 0; // with a flame graph and an acceptance
    std::int64_t alert = 0;      // triaged
    std::int64_t run = 0;
    std::string testbed; // a fingerprint
    std::string candidate_sha;
    std::string flame_benchmark; // the comparison's benchmark with a flame graph
};

// The store, made once per process through the real server: a series of
// 24 main-line runs with a 3x step (a change point and an alert, triaged),
// a google/benchmark suite of 4 benchmarks (baseline and candidate of one
// session) compared as one gate, a flame graph, an acceptance, a webhook,
// a second project (so ids of the two interleave), and a revoked token.
const made_store& test_store()
{
    // Removed at exit with everything in it.
    static const temp_dir scratch("perfgate-db-copy");
    static const made_store made = [] {
        made_store m;
        m.dir = scratch.path();
        m.db = m.dir / "made.db";
        m.token = create_token(m.db, "demo");
        const std::string other = create_token(m.db, "other");
        const std::string revoked = create_token(m.db, "demo");
        REQUIRE(run_perfgate({"token", "revoke", "--db", m.db.string(), "--project", "demo", revoked}).code == 0);
        REQUIRE(run_perfgate({"project", "--db", m.db.string(), "--project", "demo", "--repository-url",
                              "https://github.com/acme/demo"})
                    .code == 0);
        server_process srv(m.db, m.dir / "made.log", {"--public-url", "https://perf.example.com"});
        const auto port = srv.port();
        for (int i = 0; i < 24; ++i) {
            for (const auto& [token, project] :
                 {std::pair{m.token, std::string("demo")}, std::pair{other, std::string("other")}}) {
                const json body = {{"benchmark", "parse"},
                                   {"role", "baseline"},
                                   {"git_sha", fmt::format("{:040x}", i + 1)},
                                   {"branch", "main"},
                                   {"testbed", {{"name", "ci-box"}, {"cores", 2}}},
                                   {"perf_csv", capture(i >= 16 ? 30.0 : 10.0, i)}};
                const auto r = send(port, http::verb::post, "/api/v1/projects/" + project + "/runs", body.dump(),
                                    "application/json", token);
                REQUIRE_MESSAGE(r.status == 201, r.body);
                if (project == "demo") m.run = r.parsed().at("run_id").get<std::int64_t>();
            }
        }
        // The watch runs after each upload's answer: wait for the alert.
        for (int i = 0; i < 600 && m.alert == 0; ++i) {
            const auto list = send(port, http::verb::get, "/api/v1/projects/demo/alerts", {}, {}, m.token);
            REQUIRE(list.status == 200);
            if (!list.parsed().at("alerts").empty())
                m.alert = list.parsed().at("alerts")[0].at("id").get<std::int64_t>();
            else std::this_thread::sleep_for(50ms);
        }
        REQUIRE_MESSAGE(m.alert != 0, "no alert within 30 s");
        const auto triaged = send(port, http::verb::patch, fmt::format("/api/v1/projects/demo/alerts/{}", m.alert),
                                  R"({"status":"acknowledged","note":"known: the parser rewrite"})", "application/json",
                                  m.token);
        REQUIRE_MESSAGE(triaged.status == 200, triaged.body);
        // Its bisection's culprit (alert_culprits and the two tables under it).
        const std::string culprit =
            R"({"status":"found","backend":"callgrind","counter":"instructions","good":")" + std::string(40, 'a') +
            R"(","bad":")" + std::string(40, 'b') +
            R"(","commits":64,"steps":6,"builds":8,"detail":"","culprits":[{"sha":")" + std::string(40, 'c') +
            R"(","subject":"parse: copy the buffer","author":"Ana <ana@example.com>","share":1.0,"effects":[)"
            R"({"counter":"instructions","unit":"","status":"regression","before":2.53e6,"after":2.62e6,)"
            R"("delta_pct":3.79,"ci_pct":[3.79,3.79]}]}]})";
        const auto found = send(port, http::verb::put, fmt::format("/api/v1/projects/demo/alerts/{}/culprit", m.alert),
                                culprit, "application/json", m.token);
        REQUIRE_MESSAGE(found.status == 200, found.body);

        // A suite: google/benchmark's output, both sides in one session.
        const std::string gbench_dir = std::string(PERFGATE_TESTDATA_DIR) + "/gbench/";
        m.candidate_sha = std::string(40, 'c');
        std::vector<std::vector<std::int64_t>> sides;
        for (const auto& [role, file, sha] : {std::tuple{"baseline", "baseline.json", std::string(40, 'b')},
                                              std::tuple{"candidate", "candidate.json", m.candidate_sha}}) {
            const auto r = send(port, http::verb::post,
                                fmt::format("/api/v1/projects/demo/runs?role={}&git_sha={}&branch=feature%2Fx&pr=7"
                                            "&session=s1&toolchain=gcc-12",
                                            role, sha),
                                file_text(gbench_dir + file), "text/csv", m.token);
            REQUIRE_MESSAGE(r.status == 201, r.body);
            sides.push_back(r.parsed().at("run_ids").get<std::vector<std::int64_t>>());
        }
        json pairs = json::array();
        for (std::size_t i = 0; i < sides[0].size(); ++i) pairs.push_back({sides[0][i], sides[1][i]});
        const auto compared = send(port, http::verb::post, "/api/v1/projects/demo/compare",
                                   json{{"pairs", pairs}}.dump(), "application/json", m.token);
        REQUIRE_MESSAGE(compared.status == 201, compared.body.substr(0, 500));
        m.comparison = compared.parsed().at("comparison_id").get<std::int64_t>();
        m.flame_benchmark = compared.parsed().at("benchmarks")[0].at("name").get<std::string>();
        const std::string& benchmark = m.flame_benchmark;
        const auto flame = send(
            port, http::verb::put,
            fmt::format("/api/v1/projects/demo/comparisons/{}/flame-graph?benchmark={}", m.comparison, benchmark),
            "<svg xmlns=\"http://www.w3.org/2000/svg\"><text>parse</text></svg>", "image/svg+xml", m.token);
        REQUIRE_MESSAGE(flame.status / 100 == 2, flame.body);
        const auto accepted = send(
            port, http::verb::post, "/api/v1/projects/demo/acceptances",
            json{{"head_sha", m.candidate_sha}, {"login", "octocat"}, {"reason", "the fix costs 4%"}}.dump(),
            "application/json", m.token);
        REQUIRE_MESSAGE(accepted.status == 201, accepted.body);
        // A comparison of two main-line runs measured apart, too.
        const auto apart = send(port, http::verb::post, "/api/v1/projects/demo/compare",
                                json{{"baseline_run", m.run - 2}, {"candidate_run", m.run}}.dump(), "application/json",
                                m.token);
        REQUIRE_MESSAGE(apart.status == 201, apart.body.substr(0, 500));
        const auto hook = send(port, http::verb::post, "/api/v1/projects/demo/webhooks",
                               json{{"url", "https://hooks.example.com/perfgate"}, {"secret", "s3cret-s3cret"}}.dump(),
                               "application/json", m.token);
        REQUIRE_MESSAGE(hook.status == 201, hook.body);
        sqlite3* raw = nullptr;
        REQUIRE(sqlite3_open_v2(m.db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
        const std::unique_ptr<sqlite3, decltype(&sqlite3_close)> handle(raw, &sqlite3_close);
        m.testbed = sqlite_rows(raw, "SELECT fingerprint FROM testbeds ORDER BY id LIMIT 1").at(0);
        // A qualification of that testbed (issue 46): its row and its counters' rows.
        const auto qualified = send(port, http::verb::post, "/api/v1/projects/demo/qualifications",
                                    json{{"testbed_fingerprint", m.testbed},
                                         {"benchmark", "parse"},
                                         {"backend", "perf"},
                                         {"date", "2026-11-28T16:05:00Z"},
                                         {"counters", json::array({json{{"counter", "task-clock"},
                                                                        {"threshold_pct", 5},
                                                                        {"detects_80_pct", 12.5},
                                                                        {"detects_95_pct", nullptr},
                                                                        {"reaches_threshold", false},
                                                                        {"deterministic", false}}})}}
                                        .dump(),
                                    "application/json", m.token);
        REQUIRE_MESSAGE(qualified.status == 201, qualified.body);
        return m;
    }();
    return made;
}

// Every GET route of the route table with the test store's ids and
// parameters, and the dashboard's pages: target -> "status content-type\nbody".
// A GET route this test does not know how to call fails it: a new route is
// added here on purpose.
std::map<std::string, std::string> all_answers(unsigned short port, const made_store& m, const std::string& token)
{
    const std::string p = "/api/v1/projects/demo";
    const std::string c = std::to_string(m.comparison);
    const std::string series = "benchmark=parse&counter=task-clock";
    const std::map<std::string, std::vector<std::string>, std::less<>> calls{
        {"/api/v1/projects/{project}/comparisons", {p + "/comparisons", p + "/comparisons?limit=1"}},
        {"/api/v1/projects/{project}/comparisons/{id}",
         {p + "/comparisons/" + c, p + "/comparisons/" + c + "?format=markdown",
          p + "/comparisons/" + c + "?format=text", p + "/comparisons/" + std::to_string(m.comparison + 1)}},
        {"/api/v1/projects/{project}/comparisons/{id}/flame-graph",
         {p + "/comparisons/" + c + "/flame-graph?benchmark=" + m.flame_benchmark}},
        {"/api/v1/projects/{project}/comparisons/{id}/attribution",
         {p + "/comparisons/" + c + "/attribution?benchmark=" + m.flame_benchmark}},
        {"/api/v1/projects/{project}/history",
         {p + "/history?" + series, p + "/history?" + series + "&format=csv",
          p + "/history?" + series + "&role=all&branch=*",
          p + "/history?benchmark=" + m.flame_benchmark + "&counter=real_time&branch=*&role=all"}},
        {"/api/v1/projects/{project}/benchmarks", {p + "/benchmarks"}},
        {"/api/v1/projects/{project}/baseline-run",
         {p + "/baseline-run?benchmark=parse&git_sha=" + fmt::format("{:040x}", 24) + "&testbed=" + m.testbed +
          "&backend=perf&toolchain=gcc-12"}},
        {"/api/v1/projects/{project}/alerts", {p + "/alerts", p + "/alerts?status=acknowledged"}},
        {"/api/v1/projects/{project}/alerts/{id}", {p + "/alerts/" + std::to_string(m.alert)}},
        {"/api/v1/projects/{project}/change-points", {p + "/change-points?" + series}},
        {"/api/v1/projects/{project}/webhooks", {p + "/webhooks"}},
        {"/api/v1/projects/{project}/qualifications",
         {p + "/qualifications", p + "/qualifications?testbed=" + m.testbed + "&benchmark=parse"}},
        {"/api/v1/openapi.json", {"/api/v1/openapi.json"}},
    };
    // Open routes whose answers are the process's, not the store's.
    const std::vector<std::string_view> not_of_the_store{"/healthz", "/metrics", "/bench/constant"};
    std::map<std::string, std::string> out;
    for (const auto& r : perfgate::server::routes()) {
        if (r.method != http::verb::get) continue;
        if (std::find(not_of_the_store.begin(), not_of_the_store.end(), r.path) != not_of_the_store.end()) continue;
        const auto it = calls.find(r.path);
        INFO("GET " << r.path);
        REQUIRE_MESSAGE(it != calls.end(), "a GET route this test does not call: add it to all_answers");
        for (const auto& target : it->second) {
            const auto a = send(port, http::verb::get, target, {}, {}, token);
            out[target] = fmt::format("{} {}\n{}", a.status, a.content_type, a.body);
        }
    }
    // The dashboard (the server runs with --public-read in all_answers' callers).
    for (const std::string& page :
         std::vector<std::string>{"/p/demo", "/p/demo/comparisons/" + c, "/p/demo/alerts", "/p/demo/series?" + series,
                                  "/p/demo/runs/" + std::to_string(m.run),
                                  "/p/demo/comparisons/" + c + "/flame.svg?benchmark=" + m.flame_benchmark}) {
        const auto a = send(port, http::verb::get, page, {}, {}, {});
        out[page] = fmt::format("{} {}\n{}", a.status, a.content_type, a.body);
    }
    return out;
}

// The answers of a server on db, and whether the token signs in on the dashboard.
std::map<std::string, std::string> answers_of(const std::string& db, const made_store& m, const fs::path& log)
{
    server_process srv(db, log, {"--public-url", "https://perf.example.com", "--public-read"});
    auto out = all_answers(srv.port(), m, m.token);
    const auto signin = send(srv.port(), http::verb::post, "/p/demo/signin", "token=" + m.token,
                             "application/x-www-form-urlencoded");
    CHECK(signin.status == 303);
    CHECK(std::string(signin.raw[http::field::set_cookie]).starts_with("perfgate_session="));
    const auto wrong = send(srv.port(), http::verb::get, "/api/v1/projects/demo/benchmarks", {}, {},
                            "pg_" + std::string(40, 'x'));
    CHECK(wrong.status == 401);
    return out;
}

void check_same(const std::map<std::string, std::string>& before, const std::map<std::string, std::string>& after)
{
    REQUIRE(before.size() == after.size());
    for (const auto& entry : before) {
        // Named copies: clang 14 cannot capture a structured binding in INFO.
        const std::string& target = entry.first;
        const std::string& answer = entry.second;
        INFO("GET " << target);
        REQUIRE(after.count(target) == 1);
        const std::string& other = after.at(target);
        std::size_t at = 0;
        while (at < answer.size() && at < other.size() && answer[at] == other[at]) ++at;
        const std::size_t from = at < 120 ? 0 : at - 120;
        INFO("first difference at byte " << at << ": expected ..." << answer.substr(from, 240) << "... got ..."
                                         << other.substr(from, 240) << "...");
        CHECK(other == answer);
    }
}

} // namespace

TEST_CASE("db copy: the copy's table list is the schema's, on both engines")
{
    temp_dir dir;
    const std::string sqlite = (dir.path() / "s.db").string();
    test_database pg(db_engine::postgresql);
    std::vector<std::string> listed(perfgate::store::copied_tables().begin(), perfgate::store::copied_tables().end());
    std::sort(listed.begin(), listed.end());
    // A table a migration adds and the copy does not list fails here (and the
    // copy refuses to run: store.copy_unknown_table).
    CHECK(perfgate::store::schema_tables(sqlite) == listed);
    CHECK(perfgate::store::schema_tables(pg.location()) == listed);
}

TEST_CASE(
    "db copy (postgresql): SQLite -> PostgreSQL -> SQLite, every GET route and page answers the same, tokens sign in")
{
    const auto& m = test_store();
    temp_dir dir;
    const auto before = answers_of(m.db.string(), m, dir.path() / "a.log");
    REQUIRE(before.at("/api/v1/projects/demo/alerts/" + std::to_string(m.alert)).starts_with("200 "));
    REQUIRE(before.at("/api/v1/projects/demo/comparisons/" + std::to_string(m.comparison)).find("octocat") !=
            std::string::npos);
    CHECK(before.at("/api/v1/projects/demo/webhooks").find("hooks.example.com") != std::string::npos);
    // Every call finds its object (a 404 everywhere would compare equal too).
    for (const auto& entry : before) {
        const std::string& target = entry.first;
        const std::string& a = entry.second;
        INFO(target << ": " << a.substr(0, 300));
        CHECK(a.starts_with("200 "));
    }
    CHECK(before.at("/p/demo/comparisons/" + std::to_string(m.comparison) + "/flame.svg?benchmark=" + m.flame_benchmark)
              .starts_with("200 "));
    CHECK(before
              .at("/api/v1/projects/demo/comparisons/" + std::to_string(m.comparison) +
                  "/flame-graph?benchmark=" + m.flame_benchmark)
              .starts_with("200 image/svg+xml"));

    test_database pg(db_engine::postgresql);
    auto to_pg = run_perfgate({"db", "copy", "--from", m.db.string(), "--to", pg.location(), "--batch-rows", "7"});
    INFO(to_pg.err);
    REQUIRE(to_pg.code == 0);
    CHECK(to_pg.out.find("every table verified") != std::string::npos);
    CHECK(to_pg.out.find("samples") != std::string::npos);
    check_same(before, answers_of(pg.location(), m, dir.path() / "pg.log"));

    const auto back = dir.path() / "back.db";
    auto to_sqlite = run_perfgate({"db", "copy", "--from", pg.location(), "--to", back.string()});
    INFO(to_sqlite.err);
    REQUIRE(to_sqlite.code == 0);
    check_same(before, answers_of(back.string(), m, dir.path() / "back.log"));
    // Every table's digest, the same on all three.
    const auto d0 = perfgate::store::digest_tables(m.db.string());
    CHECK(perfgate::store::digest_tables(pg.location()) == d0);
    CHECK(perfgate::store::digest_tables(back.string()) == d0);

    // New rows on the copies get ids past the copied ones (sequences moved).
    const std::string token = create_token(back, "demo");
    CHECK(!token.empty());
    CHECK(pg.integer("SELECT count(*) FROM api_tokens") > 0);
    const std::string pg_token = create_token(pg.location(), "third");
    CHECK(
        pg.integer("SELECT max(id) FROM api_tokens") ==
        pg.integer("SELECT max(id) FROM api_tokens WHERE project_id = (SELECT id FROM projects WHERE name = 'third')"));
}

TEST_CASE(
    "db copy (postgresql): a copy stopped after 3 batches, rerun, completes, and a target with rows is refused, unchanged")
{
    const auto& m = test_store();
    temp_dir dir;
    test_database pg(db_engine::postgresql);
    auto stopped = run_perfgate({"db", "copy", "--from", m.db.string(), "--to", pg.location(), "--batch-rows", "10"},
                                {}, {{"PERFGATE_TEST_COPY_FAIL_AFTER_BATCHES", "3"}});
    CHECK(stopped.code != 0);
    CHECK(stopped.err.find("copy stopped after 3 batches") != std::string::npos);
    CHECK(pg.integer("SELECT count(*) FROM projects") == 2);
    CHECK(pg.integer("SELECT count(*) FROM perfgate_copy_state") == 1);

    // Another source is refused while the copy is unfinished.
    const auto other = dir.path() / "other.db";
    create_token(other, "x");
    auto wrong = run_perfgate({"db", "copy", "--from", other.string(), "--to", pg.location()});
    CHECK(wrong.code == 2);
    CHECK(wrong.err.find("unfinished copy of") != std::string::npos);

    auto rerun = run_perfgate({"db", "copy", "--from", m.db.string(), "--to", pg.location(), "--batch-rows", "10"});
    INFO(rerun.err);
    REQUIRE(rerun.code == 0);
    CHECK(rerun.out.find("finished the copy of") != std::string::npos);
    CHECK(perfgate::store::digest_tables(pg.location()) == perfgate::store::digest_tables(m.db.string()));
    CHECK(pg.integer("SELECT count(*) FROM information_schema.tables WHERE table_name = 'perfgate_copy_state'") == 0);

    // Now the target has rows: refused, exit 2, nothing changed.
    const auto digest = perfgate::store::digest_tables(pg.location());
    auto again = run_perfgate({"db", "copy", "--from", other.string(), "--to", pg.location()});
    CHECK(again.code == 2);
    CHECK(again.err.find("store.copy_target_not_empty") != std::string::npos);
    CHECK(again.err.find("is not empty") != std::string::npos);
    CHECK(perfgate::store::digest_tables(pg.location()) == digest);
    // And a SQLite target too.
    const auto sqlite_digest = perfgate::store::digest_tables(other.string());
    auto into_sqlite = run_perfgate({"db", "copy", "--from", m.db.string(), "--to", other.string()});
    CHECK(into_sqlite.code == 2);
    CHECK(perfgate::store::digest_tables(other.string()) == sqlite_digest);
    // The same database on both sides.
    CHECK(run_perfgate({"db", "copy", "--from", m.db.string(), "--to", m.db.string()}).code == 2);
}

TEST_CASE("db export/import: a project into an empty store answers every GET route the same")
{
    const auto& m = test_store();
    temp_dir dir;
    const auto file = dir.path() / "demo.jsonl";
    auto exported = run_perfgate({"db", "export", "--db", m.db.string(), "--project", "demo", "-o", file.string()});
    INFO(exported.err);
    REQUIRE(exported.code == 0);
    const std::string text = file_text(file);
    CHECK(text.starts_with("{\"format\":\"perfgate-project-export\",\"version\":1,\"project\":\"demo\""));
    CHECK(text.find("\"project_id\":2") == std::string::npos); // project "other" stays behind
    CHECK(run_perfgate({"db", "export", "--db", m.db.string(), "--project", "demo", "-o", file.string()}).code == 2);

    const auto target = dir.path() / "imported.db";
    auto imported = run_perfgate({"db", "import", "--db", target.string(), file.string()});
    INFO(imported.err);
    REQUIRE(imported.code == 0);
    CHECK(imported.out.find("project 'demo' (format version 1)") != std::string::npos);
    const auto before = answers_of(m.db.string(), m, dir.path() / "a.log");
    check_same(before, answers_of(target.string(), m, dir.path() / "b.log"));

    SUBCASE("into PostgreSQL, too")
    {
        test_database pg(db_engine::postgresql);
        REQUIRE(run_perfgate({"db", "import", "--db", pg.location(), file.string()}).code == 0);
        check_same(before, answers_of(pg.location(), m, dir.path() / "c.log"));
    }
    SUBCASE("twice: the project exists, exit 2, nothing written")
    {
        const auto digest = perfgate::store::digest_tables(target.string());
        auto again = run_perfgate({"db", "import", "--db", target.string(), file.string()});
        CHECK(again.code == 2);
        CHECK(again.err.find("store.import_conflict") != std::string::npos);
        CHECK(perfgate::store::digest_tables(target.string()) == digest);
    }
    SUBCASE("a file cut short, or of a newer version: exit 2 naming the line, nothing written")
    {
        const auto empty = dir.path() / "empty.db";
        const auto cut = dir.path() / "cut.jsonl";
        std::ofstream(cut, std::ios::binary) << text.substr(0, text.rfind("{\"end\""));
        auto r = run_perfgate({"db", "import", "--db", empty.string(), cut.string()});
        CHECK(r.code == 2);
        CHECK(r.err.find("cut short") != std::string::npos);
        const auto digests = perfgate::store::digest_tables(empty.string());
        CHECK(std::all_of(digests.begin(), digests.end(), [](const auto& d) { return d.rows == 0; }));

        const auto newer = dir.path() / "newer.jsonl";
        std::string bumped = text;
        bumped.replace(bumped.find("\"version\":1"), 11, "\"version\":99");
        std::ofstream(newer, std::ios::binary) << bumped;
        r = run_perfgate({"db", "import", "--db", empty.string(), newer.string()});
        CHECK(r.code == 2);
        CHECK(r.err.find(newer.string() + ":1: format version 99") != std::string::npos);

        const auto bad = dir.path() / "bad.jsonl";
        std::string broken = text;
        const auto at = broken.find("\"git_sha\":\"");
        broken.replace(at, 11, "\"git_sha\":4,\"x\":\"");
        std::ofstream(bad, std::ios::binary) << broken;
        r = run_perfgate({"db", "import", "--db", empty.string(), bad.string()});
        CHECK(r.code == 2);
        CHECK(r.err.find("bad.jsonl:") != std::string::npos);
    }
}

TEST_CASE("db import: the checked-in version 1 file imports")
{
    // tests/data/export/v1-demo.jsonl: written by perfgate db export at
    // format version 1 (schema version 19): a later schema must still read it.
    temp_dir dir;
    const auto target = dir.path() / "v1.db";
    const std::string file = std::string(PERFGATE_TESTDATA_DIR) + "/export/v1-demo.jsonl";
    auto r = run_perfgate({"db", "import", "--db", target.string(), file});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("format version 1") != std::string::npos);
    // The token that project had, stored as its hash: it still opens it.
    const std::string token = "pg_32a501b4d71f91e4fad8aea7ef181ef7c298e227d7fb477bf4262f9894275ac7";
    server_process srv(target, dir.path() / "v1.log");
    CHECK(send(srv.port(), http::verb::get, "/api/v1/projects/v1/comparisons/1").status == 401);
    const auto cmp = send(srv.port(), http::verb::get, "/api/v1/projects/v1/comparisons/1", {}, {}, token);
    REQUIRE_MESSAGE(cmp.status == 200, cmp.body);
    CHECK(cmp.parsed().at("comparison_id") == 1);
    const auto runs = send(srv.port(), http::verb::get, "/api/v1/projects/v1/benchmarks", {}, {}, token);
    REQUIRE(runs.status == 200);
    CHECK(runs.parsed().at("benchmarks").size() == 1);
}

namespace {

// The ids a merge or a renumbering import changed (--id-map FILE): table ->
// old -> new.
using id_changes = std::map<std::string, std::map<std::int64_t, std::int64_t>>;

id_changes read_id_map(const fs::path& file)
{
    id_changes out;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        const auto j = json::parse(line);
        out[j.at("table").get<std::string>()][j.at("old").get<std::int64_t>()] = j.at("new").get<std::int64_t>();
    }
    return out;
}

std::int64_t mapped(const id_changes& ids, const std::string& table, std::int64_t id)
{
    const auto t = ids.find(table);
    if (t == ids.end()) return id;
    const auto it = t->second.find(id);
    if (it != t->second.end()) return it->second;
    // An id no row has (a 404 the test asks for): a shifted table's shift.
    const auto& any = *t->second.begin();
    return id + (any.second - any.first);
}

// "/comparisons/12" and the like, with the id mapped (URLs in pages, in
// markdown and in JSON strings).
std::string map_urls(const std::string& text, const id_changes& ids)
{
    // Where the API and the pages show ids: URLs, anchors, titles, link
    // texts, and the JSON a page embeds for its charts.
    static const std::vector<std::pair<std::string, std::string>> kinds{{"/comparisons/", "comparisons"},
                                                                        {"/alerts/", "alerts"},
                                                                        {"/runs/", "runs"},
                                                                        {"#comparison-", "comparisons"},
                                                                        {"id=\"comparison-", "comparisons"},
                                                                        {"<title>Comparison ", "comparisons"},
                                                                        {"<h1>Comparison ", "comparisons"},
                                                                        {"<title>Run ", "runs"},
                                                                        {"<h1>Run ", "runs"},
                                                                        {">run ", "runs"},
                                                                        {"\"run_id\":", "runs"},
                                                                        {"\"since_run\":", "runs"},
                                                                        {"\"baseline_run\":", "runs"},
                                                                        {"\"candidate_run\":", "runs"},
                                                                        {"\"comparison_id\":", "comparisons"},
                                                                        {"%2Fcomparisons%2F", "comparisons"},
                                                                        {"%2Fruns%2F", "runs"},
                                                                        {"%2Falerts%2F", "alerts"},
                                                                        {"&#39; (#", "api_tokens"},
                                                                        {"\"written_by\":{\"id\":", "api_tokens"}};
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t best = std::string::npos;
        const std::pair<std::string, std::string>* kind = nullptr;
        for (const auto& k : kinds) {
            const auto p = text.find(k.first, at);
            if (p < best) {
                best = p;
                kind = &k;
            }
        }
        if (best == std::string::npos) break;
        auto digits = best + kind->first.size();
        auto end = digits;
        while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
        out += text.substr(at, digits - at);
        if (end > digits)
            out += std::to_string(mapped(ids, kind->second, std::stoll(text.substr(digits, end - digits))));
        at = end;
        // A link's text that is its id: <a href=".../comparisons/12">12</a>.
        if (text.compare(at, 2, "\">") == 0) {
            auto e = at + 2;
            while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e]))) ++e;
            if (e > at + 2 && text.compare(e, 4, "</a>") == 0) {
                out += "\">" + std::to_string(mapped(ids, kind->second, std::stoll(text.substr(at + 2, e - at - 2))));
                at = e;
            }
        }
    }
    out += text.substr(at);
    // A series page's chart data: "points":[[run_id,value],...].
    for (std::size_t p = out.find("\"points\":["); p != std::string::npos; p = out.find("\"points\":[", p + 1)) {
        std::size_t q = p + 10;
        while (q < out.size() && out[q] == '[') {
            auto e = q + 1;
            while (e < out.size() && std::isdigit(static_cast<unsigned char>(out[e]))) ++e;
            if (e == q + 1) break;
            const auto id = std::to_string(mapped(ids, "runs", std::stoll(out.substr(q + 1, e - q - 1))));
            out.replace(q + 1, e - q - 1, id);
            q = out.find(']', q) + 1;
            if (q < out.size() && out[q] == ',') ++q;
        }
    }
    // A comparison page's highlighted runs: "highlight":[run_id,...].
    for (std::size_t p = out.find("\"highlight\":["); p != std::string::npos; p = out.find("\"highlight\":[", p + 1)) {
        std::size_t q = p + 13;
        for (;;) {
            auto e = q;
            while (e < out.size() && std::isdigit(static_cast<unsigned char>(out[e]))) ++e;
            if (e == q) break;
            const auto id = std::to_string(mapped(ids, "runs", std::stoll(out.substr(q, e - q))));
            out.replace(q, e - q, id);
            q += id.size();
            if (q >= out.size() || out[q] != ',') break;
            ++q;
        }
    }
    return out;
}

// A JSON answer with its ids mapped: by key (run and comparison ids), "id"
// by what the route lists, and the URLs in strings.
void map_json(json& j, const id_changes& ids, const std::string& id_table)
{
    if (j.is_array()) {
        for (auto& item : j) map_json(item, ids, id_table);
        return;
    }
    if (j.is_string()) {
        j = map_urls(j.get<std::string>(), ids);
        return;
    }
    if (!j.is_object()) return;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        auto& v = it.value();
        std::string table;
        if (k == "baseline_run" || k == "candidate_run" || k == "run_id" || k == "since_run" || k == "run_ids" ||
            k == "baseline_run_id" || k == "candidate_run_id")
            table = "runs";
        else if (k == "comparison_id") table = "comparisons";
        else if (k == "alert_id") table = "alerts";
        else if (k == "id") table = id_table;
        if (!table.empty() && v.is_number_integer()) {
            v = mapped(ids, table, v.get<std::int64_t>());
        } else if (!table.empty() && v.is_array()) {
            for (auto& x : v) {
                if (x.is_number_integer()) x = mapped(ids, table, x.get<std::int64_t>());
            }
        } else {
            std::string inner = id_table;
            if (k == "open_alerts" || k == "alerts") inner = "alerts";
            else if (k == "written_by" || k == "accepted_by") inner = "api_tokens";
            map_json(v, ids, inner);
        }
    }
}

// One answer ("status content-type\nbody") of target with the ids mapped.
std::string map_answer(const std::string& target, const std::string& answer, const id_changes& ids)
{
    const auto nl = answer.find('\n');
    const std::string head = answer.substr(0, nl);
    const std::string body = answer.substr(nl + 1);
    if (head.find("text/csv") != std::string::npos) {
        // The history's CSV: run_id first on every line after the header.
        std::istringstream in(body);
        std::string line, out;
        bool header = true;
        while (std::getline(in, line)) {
            const auto comma = line.find(',');
            if (!header && comma != std::string::npos && comma > 0 &&
                std::isdigit(static_cast<unsigned char>(line[0]))) {
                line = std::to_string(mapped(ids, "runs", std::stoll(line.substr(0, comma)))) + line.substr(comma);
            }
            header = false;
            out += line + "\n";
        }
        return head + "\n" + out;
    }
    if (head.find("application/json") == std::string::npos) return head + "\n" + map_urls(body, ids);
    std::string id_table;
    for (const auto* t : {"webhooks", "qualifications", "alerts", "comparisons"}) {
        if (target.find(std::string("/") + t) != std::string::npos) {
            id_table = t;
            break;
        }
    }
    auto j = json::parse(body);
    map_json(j, ids, id_table);
    return head + "\n" + j.dump();
}

// The answers of before (made with m's ids) as the merged store should give
// them: targets and bodies with the ids mapped, JSON bodies re-dumped.
std::map<std::string, std::string> mapped_answers(const std::map<std::string, std::string>& before,
                                                  const id_changes& ids)
{
    std::map<std::string, std::string> out;
    for (const auto& entry : before) out[map_urls(entry.first, ids)] = map_answer(entry.first, entry.second, ids);
    return out;
}

// JSON bodies re-dumped (so that both sides compare in the same form).
std::map<std::string, std::string> redumped(const std::map<std::string, std::string>& answers)
{
    return mapped_answers(answers, {});
}

made_store mapped_store(const made_store& m, const id_changes& ids)
{
    made_store out = m;
    out.comparison = mapped(ids, "comparisons", m.comparison);
    out.alert = mapped(ids, "alerts", m.alert);
    out.run = mapped(ids, "runs", m.run);
    return out;
}

// A second team's store: project "teamb" with 6 runs on the same testbed and
// counter as demo's (matched by fingerprint and name), a comparison, a
// webhook; its ids overlap demo's.
struct team_store {
    fs::path db;
    std::string token;
};

team_store make_team_store(const fs::path& dir)
{
    team_store t;
    t.db = dir / "teamb.db";
    t.token = create_token(t.db, "teamb");
    server_process srv(t.db, dir / "teamb.log");
    std::vector<std::int64_t> runs;
    for (int i = 0; i < 6; ++i) {
        const json body = {{"benchmark", "render"},
                           {"role", "baseline"},
                           {"git_sha", fmt::format("{:040x}", 1000 + i)},
                           {"branch", "main"},
                           {"testbed", {{"name", "ci-box"}, {"cores", 2}}},
                           {"perf_csv", capture(i >= 3 ? 40.0 : 20.0, i)}};
        const auto r = send(srv.port(), http::verb::post, "/api/v1/projects/teamb/runs", body.dump(),
                            "application/json", t.token);
        REQUIRE_MESSAGE(r.status == 201, r.body);
        runs.push_back(r.parsed().at("run_id").get<std::int64_t>());
    }
    const auto cmp = send(srv.port(), http::verb::post, "/api/v1/projects/teamb/compare",
                          json{{"baseline_run", runs[0]}, {"candidate_run", runs[5]}}.dump(), "application/json",
                          t.token);
    REQUIRE_MESSAGE(cmp.status == 201, cmp.body.substr(0, 300));
    const auto hook = send(srv.port(), http::verb::post, "/api/v1/projects/teamb/webhooks",
                           json{{"url", "https://hooks.example.com/teamb"}}.dump(), "application/json", t.token);
    REQUIRE_MESSAGE(hook.status == 201, hook.body);
    return t;
}

// The team's answers: every listing and its first comparison.
std::map<std::string, std::string> team_answers(const std::string& db, const team_store& t, const fs::path& log)
{
    server_process srv(db, log, {"--public-read"});
    std::map<std::string, std::string> out;
    const std::string p = "/api/v1/projects/teamb";
    for (const std::string& target :
         {p + "/comparisons", p + "/comparisons/1", p + "/benchmarks", p + "/alerts", p + "/webhooks",
          p + "/history?benchmark=render&counter=task-clock", p + "/change-points?benchmark=render&counter=task-clock",
          std::string("/p/teamb"), std::string("/p/teamb/comparisons/1")}) {
        const auto a = send(srv.port(), http::verb::get, target, {}, {}, t.token);
        out[target] = fmt::format("{} {}\n{}", a.status, a.content_type, a.body);
    }
    CHECK(out.at(p + "/comparisons/1").starts_with("200 "));
    return out;
}

// Merges the test store into target (interrupted once, then rerun), and
// checks: demo's answers are its source's with the ids mapped, the team's
// are byte-identical, the token signs in.
void merge_and_check(const std::string& target, const team_store& team, const fs::path& dir)
{
    const auto& m = test_store();
    const auto team_before = team_answers(target, team, dir / "t0.log");
    const auto before = answers_of(m.db.string(), m, dir / "s.log");

    auto stopped = run_perfgate({"db", "copy", "--merge", "--from", m.db.string(), "--to", target, "--batch-rows",
                                 "10"},
                                {}, {{"PERFGATE_TEST_COPY_FAIL_AFTER_BATCHES", "4"}});
    CHECK(stopped.code != 0);
    CHECK(stopped.err.find("merge stopped after 4 batches") != std::string::npos);
    if (!target.starts_with("postgresql:")) {
        // A merged row changed in the target: the rerun's verification
        // fails naming it (exit 4), and passes once it is put back.
        const auto sql = [&](const char* statement) {
            sqlite3* raw = nullptr;
            REQUIRE(sqlite3_open(target.c_str(), &raw) == SQLITE_OK);
            const std::unique_ptr<sqlite3, decltype(&sqlite3_close)> handle(raw, &sqlite3_close);
            REQUIRE(sqlite3_exec(raw, statement, nullptr, nullptr, nullptr) == SQLITE_OK);
        };
        sql("UPDATE projects SET created_at = created_at + 1 WHERE name = 'other'");
        auto tampered = run_perfgate({"db", "copy", "--merge", "--from", m.db.string(), "--to", target});
        CHECK(tampered.code == 4);
        CHECK(tampered.err.find("store.copy_mismatch") != std::string::npos);
        CHECK(tampered.err.find("other/projects (1 rows, 1 there)") != std::string::npos);
        sql("UPDATE projects SET created_at = created_at - 1 WHERE name = 'other'");
    }
    // A plain copy into the half-merged target is refused.
    CHECK(run_perfgate({"db", "copy", "--from", m.db.string(), "--to", target}).code == 2);

    const auto map_file = dir / "ids.jsonl";
    auto merged = run_perfgate({"db", "copy", "--merge", "--from", m.db.string(), "--to", target, "--id-map",
                                map_file.string()});
    INFO(merged.out);
    INFO(merged.err);
    REQUIRE(merged.code == 0);
    CHECK(merged.out.find("finished merging project(s) 'demo', 'other'") != std::string::npos);
    CHECK(merged.out.find("the ids in URLs changed: ") != std::string::npos);
    CHECK(merged.out.find("demo/runs") != std::string::npos);
    const auto ids = read_id_map(map_file);
    // teamb's comparison 1 and runs 1-6 were there: demo's moved past them.
    REQUIRE(ids.count("comparisons") == 1);
    CHECK(ids.at("comparisons").at(m.comparison) > m.comparison);
    CHECK(ids.at("runs").at(1) == 7);
    CHECK(ids.at("projects").at(1) == 2);
    CHECK(ids.count("testbeds") == 0); // matched by fingerprint: teamb's is demo's, id 1 on both

    const auto after = answers_of(target, mapped_store(m, ids), dir / "t1.log");
    check_same(mapped_answers(before, ids), redumped(after));
    CHECK(team_answers(target, team, dir / "t2.log") == team_before);
    // New rows get ids past the merged ones.
    create_token(target, "third");
}

} // namespace

TEST_CASE("db copy --merge: the copy's list names every column that names a row, on both engines")
{
    temp_dir dir;
    test_database pg(db_engine::postgresql);
    CHECK(perfgate::store::unlisted_references((dir.path() / "s.db").string()).empty());
    CHECK(perfgate::store::unlisted_references(pg.location()).empty());
}

TEST_CASE(
    "db copy --merge: two stores into one SQLite file, interrupted and rerun, and a project on both sides refused")
{
    temp_dir dir;
    const auto team = make_team_store(dir.path());
    merge_and_check(team.db.string(), team, dir.path());

    // A project name on both sides: exit 2 naming it, the target unchanged.
    const auto& m = test_store();
    const auto clash = dir.path() / "clash.db";
    create_token(clash, "other");
    const auto digest = perfgate::store::digest_tables(clash.string());
    auto refused = run_perfgate({"db", "copy", "--merge", "--from", m.db.string(), "--to", clash.string()});
    CHECK(refused.code == 2);
    CHECK(refused.err.find("store.import_conflict") != std::string::npos);
    CHECK(refused.err.find("has project(s) 'other' already") != std::string::npos);
    CHECK(perfgate::store::digest_tables(clash.string()) == digest);
    CHECK(run_perfgate({"db", "copy", "--from", m.db.string(), "--to", clash.string(), "--id-map",
                        (dir.path() / "x.jsonl").string()})
              .code == 2);
}

TEST_CASE("db copy --merge (postgresql): a SQLite store into PostgreSQL that has another team's project")
{
    temp_dir dir;
    const auto team = make_team_store(dir.path());
    test_database pg(db_engine::postgresql);
    REQUIRE(run_perfgate({"db", "copy", "--from", team.db.string(), "--to", pg.location()}).code == 0);
    merge_and_check(pg.location(), team, dir.path());
}

TEST_CASE("db import --renumber: a project into a store that has another, answers the same modulo the id map")
{
    const auto& m = test_store();
    temp_dir dir;
    const auto team = make_team_store(dir.path());
    const auto file = dir.path() / "demo.jsonl";
    REQUIRE(run_perfgate({"db", "export", "--db", m.db.string(), "--project", "demo", "-o", file.string()}).code == 0);
    const auto team_before = team_answers(team.db.string(), team, dir.path() / "t0.log");

    // Without --renumber: the clash is refused, nothing written.
    const auto digest = perfgate::store::digest_tables(team.db.string());
    auto refused = run_perfgate({"db", "import", "--db", team.db.string(), file.string()});
    CHECK(refused.code == 2);
    CHECK(refused.err.find("without --renumber") != std::string::npos);
    CHECK(perfgate::store::digest_tables(team.db.string()) == digest);

    const auto map_file = dir.path() / "ids.jsonl";
    auto imported = run_perfgate({"db", "import", "--db", team.db.string(), file.string(), "--renumber", "--id-map",
                                  map_file.string()});
    INFO(imported.out);
    INFO(imported.err);
    REQUIRE(imported.code == 0);
    CHECK(imported.out.find("the ids in URLs changed") != std::string::npos);
    const auto ids = read_id_map(map_file);
    CHECK(ids.at("runs").at(1) == 7);
    const auto before = answers_of(m.db.string(), m, dir.path() / "s.log");
    const auto after = answers_of(team.db.string(), mapped_store(m, ids), dir.path() / "t1.log");
    check_same(mapped_answers(before, ids), redumped(after));
    CHECK(team_answers(team.db.string(), team, dir.path() / "t2.log") == team_before);

    // The checked-in version 1 file renumbers too.
    const std::string v1 = std::string(PERFGATE_TESTDATA_DIR) + "/export/v1-demo.jsonl";
    auto old = run_perfgate({"db", "import", "--db", team.db.string(), v1, "--renumber"});
    INFO(old.err);
    CHECK(old.code == 0);
    CHECK(old.out.find("format version 1") != std::string::npos);
}
