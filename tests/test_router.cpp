// The router without sockets: every route, the auth matrix and every bad
// input, against the real store on a temp file and the real gate service.
#include "server/auth_gate.hpp"
#include "server/router.hpp"

#include <doctest/doctest.h>

#include "support/process.hpp"

#include "support/answers.hpp"
#include "support/database.hpp"
#include "support/numbers.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "api/wire.hpp"
#include "capture/names.hpp"
#include "model/error.hpp"
#include "server/metrics.hpp"
#include "server/openapi.hpp"
#include "server/routes.hpp"
#include "service/service.hpp"
#include "store/alerts.hpp"
#include "store/comparisons.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"
#include "store/store.hpp"
#include "store/tokens.hpp"

namespace {

namespace http = boost::beast::http;
using nlohmann::json;
using perfgate::server::request;
using perfgate::server::response;

// A temp database with projects "demo" and "other", a token for each.
struct fixture {
    perfgate::test::temp_dir scratch{"perfgate-router"};
    std::filesystem::path dir = scratch.path();
    // SQLite, or PostgreSQL under the "postgresql/" variant (the cases
    // that do not reach behind the store's back; tests/CMakeLists.txt).
    perfgate::test::test_database database;
    std::filesystem::path db_file = database.location(); // SQLite: the file
    perfgate::store::store db;
    perfgate::service::service service{db};
    perfgate::server::metrics stats;
    perfgate::server::context ctx{service, stats};
    std::string demo_token, other_token;

    fixture() : db(database.location())
    {
        db.projects().ensure("demo");
        db.projects().ensure("other");
        demo_token = db.tokens().create("demo", "test");
        other_token = db.tokens().create("other", "test");
    }

    response call(http::verb method, const std::string& target, const std::string& body = {},
                  const std::string& content_type = "application/json", const std::string& token = "demo")
    {
        response res = perfgate::server::route(make_request(method, target, body, content_type, token), ctx);
        perfgate::test::record_answer(std::string(http::to_string(method)), target, res.result_int(),
                                      std::string(res[http::field::content_type]), res.body());
        return res;
    }

    request make_request(http::verb method, const std::string& target, const std::string& body = {},
                         const std::string& content_type = "application/json", const std::string& token = "demo")
    {
        request req{method, target, 11};
        req.set(http::field::host, "localhost");
        if (!content_type.empty() && (method == http::verb::post || method == http::verb::put)) {
            req.set(http::field::content_type, content_type);
        }
        if (token == "demo") req.set(http::field::authorization, "Bearer " + demo_token);
        else if (token == "other") req.set(http::field::authorization, "Bearer " + other_token);
        else if (!token.empty()) req.set(http::field::authorization, token);
        req.body() = body;
        req.prepare_payload();
        return req;
    }

    std::int64_t upload(const std::string& role, const std::string& file = "appended-10-runs.csv",
                        const std::string& benchmark = "default")
    {
        return upload_text(role, perfgate::test::read_testdata(file), benchmark);
    }

    // project "demo" or "other" (with that project's token).
    std::int64_t upload_text(const std::string& role, const std::string& csv, const std::string& benchmark,
                             const std::string& project = "demo")
    {
        json body = {{"benchmark", benchmark},
                     {"role", role},
                     {"git_sha", "0123abcd"},
                     {"branch", "main"},
                     // One perfgate run's session: these tests' pairs were
                     // measured interleaved (test_server_interleaved.cpp
                     // has pairs that were not).
                     {"session", "session-1"},
                     {"perf_csv", csv}};
        auto res = call(http::verb::post, "/api/v1/projects/" + project + "/runs", body.dump(), "application/json",
                        project);
        REQUIRE(res.result_int() == 201);
        return json::parse(res.body()).at("run_id").get<std::int64_t>();
    }
};

json error_of(const response& res)
{
    auto j = json::parse(res.body());
    REQUIRE(j.contains("error"));
    return j["error"];
}

void check_error(const response& res, unsigned status, const std::string& id, const std::string& message_part)
{
    CHECK(res.result_int() == status);
    CHECK(res[http::field::content_type] == "application/json");
    auto e = error_of(res);
    CHECK(e.at("id") == id);
    const std::string message = e.at("message").get<std::string>();
    INFO("message: " << message);
    CHECK(message.find(message_part) != std::string::npos);
}

json valid_run(const std::string& role = "baseline")
{
    return {{"role", role},
            {"git_sha", "0123abcd"},
            {"branch", "main"},
            {"perf_csv", perfgate::test::read_testdata("appended-10-runs.csv")}};
}

} // namespace

TEST_CASE("status_for maps error ids through one table")
{
    using perfgate::server::status_for;
    CHECK(status_for("ingest.bad_csv") == 422);
    CHECK(status_for("ingest.bad_field") == 400);
    CHECK(status_for("auth.missing_token") == 401);
    CHECK(status_for("auth.forbidden") == 403);
    CHECK(status_for("project.not_found") == 404);
    CHECK(status_for("http.method_not_allowed") == 405);
    CHECK(status_for("http.body_too_large") == 413);
    CHECK(status_for("http.unsupported_media_type") == 415);
    CHECK(status_for("compare.not_found") == 404);
    CHECK(status_for("policy.unknown_key") == 400);
    CHECK(status_for("store.io") == 500);
    CHECK(status_for("something.unknown") == 500);
}

TEST_CASE("validate_name accepts real names and rejects long, SQL-ish and control input")
{
    using perfgate::capture::validate_name;
    CHECK_NOTHROW(validate_name("benchmark", "BM_Sort/1024/real_time"));
    CHECK_NOTHROW(validate_name("counter", "cpu_core/cycles/"));
    CHECK_NOTHROW(validate_name("counter", "task-clock:u"));
    CHECK_NOTHROW(validate_name("branch", "feature/x-1.2"));
    CHECK_THROWS_WITH_AS(validate_name("benchmark", std::string(10240, 'a')),
                         "field 'benchmark': 10240 bytes, longer than the limit of 256", perfgate::error);
    CHECK_THROWS_WITH_AS(validate_name("benchmark", "x'; DROP TABLE runs; --"),
                         doctest::Contains("field 'benchmark': ''' at offset 1 is not allowed"), perfgate::error);
    CHECK_THROWS_WITH_AS(validate_name("branch", "a\nb"), doctest::Contains("field 'branch': byte 0x0a at offset 1"),
                         perfgate::error);
    CHECK_THROWS_WITH_AS(validate_name("branch", ""), "field 'branch': must not be empty", perfgate::error);
    try {
        validate_name("benchmark", "a b");
        FAIL("expected an error");
    } catch (const perfgate::error& e) {
        CHECK(e.id() == "ingest.bad_field");
    }
}

TEST_CASE("transport routes: healthz, metrics, unknown route, wrong method, bench route")
{
    fixture f;
    SUBCASE("healthz")
    {
        auto res = f.call(http::verb::get, "/healthz", {}, {}, "");
        CHECK(res.result_int() == 200);
        CHECK(json::parse(res.body()) == json{{"status", "ok"}});
    }
    SUBCASE("unknown route -> 404")
    {
        check_error(f.call(http::verb::get, "/api/v2/nothing", {}, {}, ""), 404, "http.not_found",
                    "no route for '/api/v2/nothing'");
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/unknown"), 404, "http.not_found", "no route");
    }
    SUBCASE("no route takes a trailing slash or an empty segment")
    {
        // Without the slash each of these is a resource (200), with it 404.
        f.ctx.bench_routes = true;
        for (const std::string path : {"/healthz", "/metrics", "/bench/constant", "/api/v1/projects/demo/benchmarks",
                                       "/api/v1/projects/demo/history"}) {
            CAPTURE(path);
            const std::string query = path.ends_with("history") ? "?benchmark=default&counter=task-clock" : "";
            CHECK(f.call(http::verb::get, path + query).result_int() == 200);
            check_error(f.call(http::verb::get, path + "/" + query), 404, "http.not_found",
                        "no route for '" + path + "/' (paths take no trailing slash)");
        }
        check_error(f.call(http::verb::post, "/api/v1/projects/demo/runs/", valid_run().dump()), 404, "http.not_found",
                    "(paths take no trailing slash)");
        check_error(f.call(http::verb::post, "/api/v1/projects/demo/compare/", "{}"), 404, "http.not_found",
                    "(paths take no trailing slash)");
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/comparisons/1/"), 404, "http.not_found",
                    "(paths take no trailing slash)");
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/comparisons/"), 404, "http.not_found",
                    "(paths take no trailing slash)");
        check_error(f.call(http::verb::get, "/api/v1/projects//benchmarks"), 404, "http.not_found", "no route");
        check_error(f.call(http::verb::get, "/api//v1/projects/demo/benchmarks"), 404, "http.not_found", "no route");
        check_error(f.call(http::verb::get, "//healthz"), 404, "http.not_found", "no route");
        request slash{http::verb::get, "/healthz/", 11};
        CHECK(perfgate::server::route_label(slash) == "unmatched");
        CHECK(f.db.maintenance().runs_count() == 0);
    }
    SUBCASE("wrong method -> 405 with Allow")
    {
        auto res = f.call(http::verb::get, "/api/v1/projects/demo/runs");
        check_error(res, 405, "http.method_not_allowed",
                    "GET is not allowed on /api/v1/projects/{project}/runs; use POST");
        CHECK(res[http::field::allow] == "POST");
        check_error(f.call(http::verb::delete_, "/healthz", {}, {}, ""), 405, "http.method_not_allowed", "use GET");
    }
    SUBCASE("bench route only when enabled")
    {
        check_error(f.call(http::verb::get, "/bench/constant", {}, {}, ""), 404, "http.not_found", "no route");
        f.ctx.bench_routes = true;
        CHECK(f.call(http::verb::get, "/bench/constant", {}, {}, "").result_int() == 200);
    }
    SUBCASE("metrics in Prometheus text")
    {
        f.stats.observe("GET /healthz", 200, 0.0007);
        f.stats.run_ingested();
        auto res = f.call(http::verb::get, "/metrics", {}, {}, "");
        CHECK(res.result_int() == 200);
        const std::string& text = res.body();
        CHECK(text.find("perfgate_http_requests_total{route=\"GET /healthz\",status=\"200\"} 1") != std::string::npos);
        CHECK(text.find("perfgate_http_request_duration_seconds_bucket{route=\"GET /healthz\",le=\"0.001\"} 1") !=
              std::string::npos);
        CHECK(text.find("perfgate_http_request_duration_seconds_bucket{route=\"GET /healthz\",le=\"0.0005\"} 0") !=
              std::string::npos);
        CHECK(text.find("perfgate_runs_ingested_total 1") != std::string::npos);
        CHECK(text.find("perfgate_db_size_bytes ") != std::string::npos);
    }
    SUBCASE("route labels are templates")
    {
        request req{http::verb::get, "/api/v1/projects/p%20q/comparisons/7?format=markdown", 11};
        CHECK(perfgate::server::route_label(req) == "GET /api/v1/projects/{project}/comparisons/{id}");
        request junk{http::verb::get, "/wp-login.php", 11};
        CHECK(perfgate::server::route_label(junk) == "unmatched");
    }
}

TEST_CASE("auth matrix")
{
    fixture f;
    const std::string runs = "/api/v1/projects/demo/runs";
    const std::string benchmarks = "/api/v1/projects/demo/benchmarks";
    SUBCASE("no token -> 401 with WWW-Authenticate")
    {
        auto res = f.call(http::verb::post, runs, valid_run().dump(), "application/json", "");
        check_error(res, 401, "auth.missing_token", "Authorization: Bearer");
        CHECK(res[http::field::www_authenticate].starts_with("Bearer"));
        check_error(f.call(http::verb::get, benchmarks, {}, {}, ""), 401, "auth.missing_token", "Bearer");
    }
    SUBCASE("wrong scheme or unknown token -> 401")
    {
        check_error(f.call(http::verb::get, benchmarks, {}, {}, "Basic dXNlcjpwYXNz"), 401, "auth.bad_token",
                    "expected 'Bearer <token>'");
        check_error(f.call(http::verb::get, benchmarks, {}, {}, "Bearer pg_0000"), 401, "auth.bad_token", "unknown");
    }
    SUBCASE("token of another project -> 403")
    {
        check_error(f.call(http::verb::post, runs, valid_run().dump(), "application/json", "other"), 403,
                    "auth.forbidden", "project 'demo'");
        check_error(f.call(http::verb::get, benchmarks, {}, {}, "other"), 403, "auth.forbidden", "project 'demo'");
        CHECK(f.db.maintenance().runs_count() == 0);
    }
    SUBCASE("right token -> 201 / 200; bearer scheme is case-insensitive")
    {
        CHECK(f.call(http::verb::post, runs, valid_run().dump()).result_int() == 201);
        CHECK(f.call(http::verb::get, benchmarks, {}, {}, "bearer " + f.demo_token).result_int() == 200);
    }
    SUBCASE("--public-read opens GETs, not writes")
    {
        f.ctx.public_read = true;
        CHECK(f.call(http::verb::get, benchmarks, {}, {}, "").result_int() == 200);
        check_error(f.call(http::verb::post, runs, valid_run().dump(), "application/json", ""), 401,
                    "auth.missing_token", "Bearer");
        check_error(f.call(http::verb::get, "/api/v1/projects/nope/benchmarks", {}, {}, ""), 404, "project.not_found",
                    "no project 'nope'");
    }
    SUBCASE("the header stage says when it authorized the token, so route() need not look it up again")
    {
        const auto header = [&](http::verb method, const std::string& target, const std::string& token) {
            request h{method, target, 11};
            if (!token.empty()) h.set(http::field::authorization, "Bearer " + token);
            h.set(http::field::content_length, "10");
            return h;
        };
        std::optional<perfgate::service::token_grant> checked;
        CHECK_FALSE(perfgate::server::refuse_before_body(header(http::verb::post, runs, f.demo_token), f.ctx,
                                                         &checked));
        REQUIRE(checked);
        CHECK(checked->scopes.is_legacy()); // the fixture's tokens predate scopes
        const perfgate::service::token_grant grant = *checked;
        // Refused, or passed without a token: not authorized.
        checked = perfgate::service::token_grant{};
        CHECK(perfgate::server::refuse_before_body(header(http::verb::post, runs, f.other_token), f.ctx, &checked));
        CHECK_FALSE(checked);
        checked = perfgate::service::token_grant{};
        CHECK(perfgate::server::refuse_before_body(header(http::verb::post, runs, ""), f.ctx, &checked));
        CHECK_FALSE(checked);
        checked = perfgate::service::token_grant{};
        CHECK_FALSE(perfgate::server::refuse_before_body(header(http::verb::get, "/healthz", ""), f.ctx, &checked));
        CHECK_FALSE(checked);
        f.ctx.public_read = true;
        checked = perfgate::service::token_grant{};
        CHECK_FALSE(perfgate::server::refuse_before_body(header(http::verb::get, benchmarks, ""), f.ctx, &checked));
        CHECK_FALSE(checked);
        f.ctx.public_read = false;
        // route() with a checked grant skips only the token lookup (the session
        // passes it for the request whose header was authorized): the request
        // is still routed and answered (an unknown project is still a 404).
        request req{http::verb::get, benchmarks, 11};
        check_error(perfgate::server::route(req, f.ctx), 401, "auth.missing_token", "Bearer");
        CHECK(perfgate::server::route(req, f.ctx, &grant).result_int() == 200);
        request nope{http::verb::get, "/api/v1/projects/nope/benchmarks", 11};
        check_error(perfgate::server::route(nope, f.ctx, &grant), 404, "project.not_found", "no project 'nope'");
    }
}

TEST_CASE("bad uploads: clear JSON error, nothing stored")
{
    fixture f;
    const std::string runs = "/api/v1/projects/demo/runs";
    auto post = [&](const std::string& body, const std::string& type = "application/json") {
        return f.call(http::verb::post, runs, body, type);
    };
    SUBCASE("malformed JSON -> 400")
    {
        // The position, without nlohmann's "[json.exception.parse_error.101] parse error at" lead.
        check_error(post("{\"role\": \"baseline\","), 400, "http.bad_json",
                    "request body: line 1, column 21: syntax error while parsing object key - unexpected end of input");
        check_error(post("{\n  \"role\": baseline}"), 400, "http.bad_json",
                    "request body: line 2, column 11: syntax error while parsing value - invalid literal");
        for (const std::string bad : {"{\"role\": \"baseline\",", "{\"a\": tru}", "{} x", ""}) {
            CAPTURE(bad);
            const std::string message = error_of(post(bad)).at("message").get<std::string>();
            CHECK(message.starts_with("request body: line 1, column "));
            CHECK(message.find("json.exception") == std::string::npos);
            CHECK(message.find("parse error") == std::string::npos);
        }
        check_error(post("[1,2]"), 400, "http.bad_json", "expected a JSON object, got array");
    }
    SUBCASE("missing field -> 400 naming it")
    {
        json body = valid_run();
        body.erase("perf_csv");
        check_error(post(body.dump()), 400, "ingest.bad_field", "field 'perf_csv' is required");
        body = valid_run();
        body.erase("branch");
        check_error(post(body.dump()), 400, "ingest.bad_field", "field 'branch' is required");
    }
    SUBCASE("wrong types -> 400 naming the field")
    {
        json body = valid_run();
        body["role"] = 3;
        check_error(post(body.dump()), 400, "ingest.bad_field", "field 'role' must be a string, got number");
        body = valid_run();
        body["pr"] = "12";
        check_error(post(body.dump()), 400, "ingest.bad_field", "field 'pr' must be a positive integer");
        body = valid_run();
        body["testbed"] = {{"name", "box"}, {"cores", "two"}};
        check_error(post(body.dump()), 400, "ingest.bad_field", "testbed.cores");
        body = valid_run();
        body["environment"] = "quiet";
        check_error(post(body.dump()), 400, "ingest.bad_field", "field 'environment' must be an object");
        body = valid_run();
        body["role"] = "reference";
        check_error(post(body.dump()), 400, "ingest.bad_field", "expected 'baseline' or 'candidate'");
    }
    SUBCASE("unknown fields -> 400 naming the field and the known ones; environment is free-form")
    {
        json body = valid_run();
        body["benchmrak"] = "parse";
        check_error(post(body.dump()), 400, "ingest.bad_field",
                    "request body: unknown field 'benchmrak' (known: benchmark, role, git_sha, branch, pr, testbed, "
                    "backend, environment, session, perf_csv, input_format, toolchain, mainline)");
        body = valid_run();
        body["mainline"] = "yes";
        check_error(post(body.dump()), 400, "ingest.bad_field", "field 'mainline' must be true or false, got \"yes\"");
        body["mainline"] = true;
        body["pr"] = 12;
        check_error(post(body.dump()), 400, "ingest.bad_field",
                    "field 'mainline': a run of pull request 12 cannot feed the series of branch");
        body = valid_run();
        body["comment"] = nullptr; // null is not a way around it
        check_error(post(body.dump()), 400, "ingest.bad_field", "unknown field 'comment'");
        body = valid_run();
        body[std::string(1000, 'k')] = 1;
        check_error(post(body.dump()), 400, "ingest.bad_field",
                    "unknown field '" + std::string(64, 'k') + "...' (known:");
        body = valid_run();
        body["testbed"] = {{"name", "box"}, {"crores", 4}};
        check_error(post(body.dump()), 400, "ingest.bad_field",
                    "unknown field 'testbed.crores' (known: name, cpu, cores, kernel, fingerprint)");
    }
    SUBCASE("10 KB benchmark name and SQL in a name -> 400")
    {
        json body = valid_run();
        body["benchmark"] = std::string(10 * 1024, 'b');
        check_error(post(body.dump()), 400, "ingest.bad_field", "field 'benchmark': 10240 bytes");
        body["benchmark"] = "x'); DROP TABLE runs; --";
        check_error(post(body.dump()), 400, "ingest.bad_field", "field 'benchmark'");
        body = valid_run();
        body["branch"] = "main\"; DELETE FROM samples";
        check_error(post(body.dump()), 400, "ingest.bad_field", "field 'branch'");
    }
    SUBCASE("CSV that does not parse -> 422")
    {
        json body = valid_run();
        body["perf_csv"] = perfgate::test::read_testdata("bad-event.txt");
        check_error(post(body.dump()), 422, "ingest.bad_csv", "");
        body["perf_csv"] = "hello,world\nthis is not perf\n";
        check_error(post(body.dump()), 422, "ingest.bad_csv", "");
    }
    SUBCASE("over the per-run limits -> 413 naming the limit and the count")
    {
        std::string wide, deep;
        for (int e = 0; e < 257; ++e) wide += "1,,ev" + std::to_string(e) + ",100,100.00,,\n";
        for (int r = 0; r < 10001; ++r) deep += std::to_string(r + 1) + ",,ev0,100,100.00,,\n";
        json body = valid_run();
        body["perf_csv"] = wide;
        check_error(post(body.dump()), 413, "ingest.too_many_counters",
                    "request body: perf_csv:257: event 'ev256' is counter 257 of this capture; at most 256 counters "
                    "per run");
        body["perf_csv"] = deep;
        check_error(post(body.dump()), 413, "ingest.too_many_repetitions",
                    "request body: perf_csv:10001: this line begins run 10001 of this capture; at most 10000 "
                    "repetitions per run");
        check_error(f.call(http::verb::post, runs + "?role=baseline&git_sha=abc&branch=main", wide, "text/csv"), 413,
                    "ingest.too_many_counters", "request body (text/csv):257: event 'ev256' is counter 257");
        CHECK(perfgate::server::status_for("ingest.too_many_counters") == 413);
        CHECK(perfgate::server::status_for("ingest.too_many_repetitions") == 413);
        CHECK(perfgate::server::status_for("compare.too_large") == 422);
    }
    SUBCASE("wrong content type -> 415")
    {
        check_error(post(valid_run().dump(), "text/plain"), 415, "http.unsupported_media_type", "'text/plain'");
        check_error(post(valid_run().dump(), ""), 415, "http.unsupported_media_type", "application/json or text/csv");
    }
    SUBCASE("unknown project -> 404 (with a token that would fit)")
    {
        // A token belongs to one project, so an unknown project is reported
        // as 403 for writers; readers with --public-read see the 404.
        check_error(f.call(http::verb::post, "/api/v1/projects/ghost/runs", valid_run().dump()), 403, "auth.forbidden",
                    "'ghost'");
        f.ctx.public_read = true;
        check_error(f.call(http::verb::get, "/api/v1/projects/ghost/history?benchmark=a&counter=b", {}, {}, ""), 404,
                    "project.not_found", "no project 'ghost'");
        // A token that is sent is checked even for a public read: what
        // perfgate run relies on to find a bad token before measuring.
        check_error(f.call(http::verb::get, "/api/v1/projects/ghost/history?benchmark=a&counter=b"), 403,
                    "auth.forbidden", "'ghost'");
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/comparisons?limit=1", {}, {}, "Bearer nope"), 401,
                    "auth.bad_token", "unknown, revoked or expired token");
        CHECK(f.call(http::verb::get, "/api/v1/projects/demo/comparisons?limit=1", {}, {}, "").result_int() == 200);
    }
    CHECK(f.db.maintenance().runs_count() == 0);
}

TEST_CASE("Idempotency-Key: a retried upload gets the first run, another body under the key is 409")
{
    fixture f;
    const json body = {{"benchmark", "default"},
                       {"role", "baseline"},
                       {"git_sha", "0123abcd"},
                       {"branch", "main"},
                       {"perf_csv", perfgate::test::read_testdata("appended-10-runs.csv")}};
    auto post = [&](const std::string& payload, const std::vector<std::string>& keys) {
        request req{http::verb::post, "/api/v1/projects/demo/runs", 11};
        req.set(http::field::host, "localhost");
        req.set(http::field::content_type, "application/json");
        req.set(http::field::authorization, "Bearer " + f.demo_token);
        for (const auto& k : keys) req.insert("Idempotency-Key", k);
        req.body() = payload;
        req.prepare_payload();
        return perfgate::server::route(req, f.ctx);
    };
    const auto first = post(body.dump(), {"run-42"});
    REQUIRE(first.result_int() == 201);
    CHECK(first.find("Idempotent-Replayed") == first.end());
    const auto run_id = json::parse(first.body()).at("run_id").get<std::int64_t>();

    const auto retry = post(body.dump(), {"run-42"});
    CHECK(retry.result_int() == 201);
    CHECK(retry["Idempotent-Replayed"] == "true");
    CHECK(json::parse(retry.body()).at("run_id") == run_id);
    // The same request in other JSON whitespace is the same request.
    CHECK(json::parse(post(body.dump(2), {"run-42"}).body()).at("run_id") == run_id);

    json other = body;
    other["branch"] = "feature";
    check_error(post(other.dump(), {"run-42"}), 409, "ingest.idempotency_conflict",
                "Idempotency-Key 'run-42' was already used for a different upload to project 'demo'");
    check_error(post(body.dump(), {"a", "b"}), 400, "ingest.bad_idempotency_key", "appears more than once");
    check_error(post(body.dump(), {std::string(300, 'k')}), 400, "ingest.bad_idempotency_key",
                "expected 1 to 255 printable ASCII characters");
    CHECK(f.db.maintenance().runs_count() == 1);
}

TEST_CASE("every known field is accepted, and the client sends only known fields")
{
    fixture f;
    json body = valid_run();
    body["environment"] = {{"anything", {{"goes", {1, 2}}}}, {"verdict", "ok"}};
    body["testbed"] = {{"name", "box"}, {"cpu", "x"}, {"cores", 4}, {"kernel", "6.1"}, {"fingerprint", "fp"}};
    body["benchmark"] = "typo-free";
    body["backend"] = "perf";
    body["pr"] = 3;
    CHECK(f.call(http::verb::post, "/api/v1/projects/demo/runs", body.dump()).result_int() == 201);

    // What server_client sends: api::to_json of a full request, and
    // api::compare_request_json with a policy.
    perfgate::model::ingest_request in;
    in.benchmark = "b";
    in.role = "candidate";
    in.git_sha = "abc";
    in.branch = "main";
    in.pr = 5;
    in.testbed = {"box", "cpu", 2, "6.1", "fp"};
    in.environment_json = R"({"checks": [{"name": "governor", "state": "ok"}]})";
    in.perf_csv = perfgate::test::read_testdata("appended-10-runs.csv");
    const json sent = perfgate::api::to_json(in);
    const auto back = perfgate::api::ingest_request_from_json(sent);
    CHECK(back.benchmark == "b");
    CHECK(back.pr == 5);
    CHECK(back.testbed.fingerprint == "fp");
    const json policy = {{"threshold_pct", 3}};
    const json compare = perfgate::api::compare_request_json({{1, 2}, {3, 4}}, &policy);
    CHECK(perfgate::api::compare_pairs_from_json(compare).size() == 2);
    CHECK(f.call(http::verb::post, "/api/v1/projects/demo/runs", sent.dump()).result_int() == 201);
}

TEST_CASE("text/csv upload takes the fields from the query string")
{
    fixture f;
    const std::string csv = perfgate::test::read_testdata("appended-10-runs.csv");
    auto res = f.call(
        http::verb::post,
        "/api/v1/projects/demo/runs?benchmark=parse&role=candidate&git_sha=abc123&branch=feature%2Fx&pr=7", csv,
        "text/csv; charset=utf-8");
    REQUIRE(res.result_int() == 201);
    auto j = json::parse(res.body());
    CHECK(j.at("samples") == 40); // 10 runs x 4 supported counters; instructions is <not supported>
    CHECK(j.at("counters").get<int>() >= 4);
    auto run = f.db.runs().load("demo", j.at("run_id").get<std::int64_t>());
    REQUIRE(run);
    CHECK(run->benchmark == "parse");
    CHECK(run->branch == "feature/x");
    CHECK(run->pr == 7);

    check_error(f.call(http::verb::post, "/api/v1/projects/demo/runs?role=candidate&git_sha=abc", csv, "text/csv"), 400,
                "http.missing_param", "'branch'");
    check_error(f.call(http::verb::post, "/api/v1/projects/demo/runs?role=candidate&git_sha=abc&branch=m%ZZ", csv,
                       "text/csv"),
                400, "http.bad_param", "percent-encoding");
    // A typo is not the default benchmark.
    check_error(f.call(http::verb::post,
                       "/api/v1/projects/demo/runs?benchmrak=parse&role=candidate&git_sha=abc&branch=m", csv,
                       "text/csv"),
                400, "http.bad_param",
                "unknown query parameter 'benchmrak' (known: benchmark, role, git_sha, branch, backend, pr, testbed, "
                "testbed_cpu, testbed_kernel, testbed_fingerprint, testbed_cores, session, input_format, toolchain, "
                "mainline)");
    // With a JSON body the fields are in the body, not the query.
    check_error(f.call(http::verb::post, "/api/v1/projects/demo/runs?benchmark=parse", valid_run().dump()), 400,
                "http.bad_param", "unknown query parameter 'benchmark' (this request takes none)");
    CHECK(f.db.maintenance().runs_count() == 1);
}

TEST_CASE("upload, compare, read the comparison, history, benchmarks")
{
    fixture f;
    const auto base = f.upload("baseline");
    const auto cand = f.upload("candidate", "appended-10-runs.csv");

    auto res = f.call(http::verb::post, "/api/v1/projects/demo/compare",
                      json{{"baseline_run", base}, {"candidate_run", cand}}.dump());
    REQUIRE(res.result_int() == 201);
    auto report = json::parse(res.body());
    CHECK(report.at("schema") == "perfgate.report/v1");
    const auto id = report.at("comparison_id").get<std::int64_t>();
    CHECK(id > 0);
    CHECK(res[http::field::location] == "/api/v1/projects/demo/comparisons/" + std::to_string(id));

    SUBCASE("comparison as JSON and markdown")
    {
        auto got = f.call(http::verb::get, "/api/v1/projects/demo/comparisons/" + std::to_string(id));
        REQUIRE(got.result_int() == 200);
        auto j = json::parse(got.body());
        CHECK(j.at("verdict") == report.at("verdict"));
        CHECK(j.at("comparison_id") == id);
        auto md = f.call(http::verb::get,
                         "/api/v1/projects/demo/comparisons/" + std::to_string(id) + "?format=markdown");
        REQUIRE(md.result_int() == 200);
        CHECK(md[http::field::content_type].starts_with("text/markdown"));
        CHECK(md.body().find("task-clock") != std::string::npos);
        // Without --public-url no link (a relative one breaks once posted,
        // and the Host header is the client's): a note says why.
        CHECK(md.body().find("](/") == std::string::npos);
        CHECK(md.body().find("\n_stored comparison " + std::to_string(id) +
                             ": no link, the server has no --public-url_\n") != std::string::npos);
        CHECK(md.body().find("/api/v1/") == std::string::npos);
        // With it: the dashboard's page of the comparison, absolute, whatever Host the request named.
        f.ctx.public_url = "https://perf.example.com";
        auto req = f.make_request(http::verb::get,
                                  "/api/v1/projects/demo/comparisons/" + std::to_string(id) + "?format=markdown");
        req.set(http::field::host, "evil.example");
        const auto linked = perfgate::server::route(req, f.ctx);
        REQUIRE(linked.result_int() == 200);
        CHECK(linked.body().find("[stored comparison](https://perf.example.com/p/demo/comparisons/" +
                                 std::to_string(id) + ")") != std::string::npos);
        CHECK(linked.body().find("evil.example") == std::string::npos);
        CHECK(linked.body().find("no --public-url") == std::string::npos);
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/comparisons/999"), 404, "comparison.not_found",
                    "no comparison 999");
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/comparisons/abc"), 400, "http.bad_param",
                    "positive integer");
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/comparisons/1?format=pdf"), 400, "http.bad_param",
                    "'format'");
        // Another project cannot read it, even with its own valid token.
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/comparisons/1", {}, {}, "other"), 403,
                    "auth.forbidden", "");
    }
    SUBCASE("compare errors")
    {
        check_error(f.call(http::verb::post, "/api/v1/projects/demo/compare", json{{"baseline_run", base}}.dump()), 400,
                    "ingest.bad_field", "'candidate_run' is required");
        check_error(f.call(http::verb::post, "/api/v1/projects/demo/compare",
                           json{{"baseline_run", "one"}, {"candidate_run", cand}}.dump()),
                    400, "ingest.bad_field", "'baseline_run' must be a positive run id");
        auto missing = f.call(http::verb::post, "/api/v1/projects/demo/compare",
                              json{{"baseline_run", base}, {"candidate_run", 12345}}.dump());
        CHECK(missing.result_int() == 404);
        CHECK(error_of(missing).at("id") == "compare.not_found");
        auto bad_policy = f.call(
            http::verb::post, "/api/v1/projects/demo/compare",
            json{{"baseline_run", base}, {"candidate_run", cand}, {"policy", {{"alpah", 0.1}}}}.dump());
        CHECK(bad_policy.result_int() == 400);
        CHECK(error_of(bad_policy).at("id").get<std::string>().starts_with("policy."));
        // Parse limits of a policy: history depth and override counts.
        auto with_policy = [&](const json& policy) {
            return f.call(http::verb::post, "/api/v1/projects/demo/compare",
                          json{{"baseline_run", base}, {"candidate_run", cand}, {"policy", policy}}.dump());
        };
        CHECK(with_policy({{"history", 1000}, {"history_min", 1000}}).result_int() == 201);
        check_error(with_policy({{"history", 1001}}), 400, "policy.bad_value",
                    "request body: policy: history: expected an integer in [2, 1000], got 1001");
        json counters = json::object(), benchmarks = json::object();
        for (int i = 0; i < 1000; ++i) {
            counters["c" + std::to_string(i)] = {{"gate", false}};
            benchmarks["b" + std::to_string(i)] = {{"threshold_pct", 5}};
        }
        CHECK(with_policy({{"counters", counters}, {"benchmarks", benchmarks}}).result_int() == 201);
        counters["one-more"] = json::object();
        benchmarks["one-more"] = json::object();
        check_error(with_policy({{"counters", counters}}), 400, "policy.too_large",
                    "request body: policy: counters: 1001 entries; at most 1000 per map");
        check_error(with_policy({{"benchmarks", benchmarks}}), 400, "policy.too_large",
                    "request body: policy: benchmarks: 1001 entries; at most 1000 per map");
        check_error(with_policy({{"benchmarks", {{"b", {{"counters", counters}}}}}}), 400, "policy.too_large",
                    "request body: policy: benchmarks.b.counters: 1001 entries");
    }
    SUBCASE("history as JSON and CSV, oldest first")
    {
        // By default the runs that feed the baseline branch's series (what the
        // watch sees): an upload without `mainline` does when it is a baseline.
        auto watched = f.call(http::verb::get, "/api/v1/projects/demo/history?benchmark=default&counter=task-clock");
        REQUIRE(watched.result_int() == 200);
        auto only_base = json::parse(watched.body()).at("points");
        REQUIRE(only_base.size() == 1);
        CHECK(only_base[0].at("run_id") == base);
        CHECK(only_base[0].at("role") == "baseline");
        CHECK(only_base[0].at("mainline") == true);
        auto candidates = f.call(http::verb::get,
                                 "/api/v1/projects/demo/history?benchmark=default&counter=task-clock&role=candidate");
        REQUIRE(candidates.result_int() == 200);
        REQUIRE(json::parse(candidates.body()).at("points").size() == 1);
        CHECK(json::parse(candidates.body()).at("points")[0].at("run_id") == cand);
        // Another branch is another series; branch=* is every branch.
        auto other = f.call(http::verb::get,
                            "/api/v1/projects/demo/history?benchmark=default&counter=task-clock&role=all&branch=dev");
        CHECK(json::parse(other.body()).at("points").empty());
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/history?benchmark=default&counter=x&role=both"), 400,
                    "http.bad_param",
                    "query parameter 'role': expected mainline, baseline, candidate or all, got 'both'");

        auto h = f.call(http::verb::get,
                        "/api/v1/projects/demo/history?benchmark=default&counter=task-clock&role=all&branch=*");
        REQUIRE(h.result_int() == 200);
        auto points = json::parse(h.body()).at("points");
        REQUIRE(points.size() == 2);
        CHECK(points[0].at("run_id") == base);
        CHECK(points[1].at("run_id") == cand);
        CHECK(points[1].at("role") == "candidate");
        CHECK(points[0].at("n") == 10);
        CHECK(points[0].at("median").get<double>() == doctest::Approx(4.605)); // median of the 10 task-clock values
        CHECK(points[0].at("min").get<double>() <= points[0].at("median").get<double>());
        CHECK(points[0].at("max").get<double>() >= points[0].at("median").get<double>());
        // These uploads name no testbed: the store computes its fingerprint.
        CHECK(points[0].at("testbed").get<std::string>().size() == 16);
        CHECK(points[0].at("testbed_name") == "");
        auto csv = f.call(
            http::verb::get,
            "/api/v1/projects/demo/history?benchmark=default&counter=task-clock&format=csv&limit=1&role=all");
        REQUIRE(csv.result_int() == 200);
        CHECK(csv.body().starts_with("run_id,git_sha,branch,created_at,n,median,mean,stddev,cov,role\n"));
        CHECK(csv.body().find(std::to_string(cand) + ",0123abcd,main,") != std::string::npos);
        CHECK(csv.body().ends_with(",candidate\n"));
        CHECK(csv.body().find("\n" + std::to_string(base) + ",") == std::string::npos); // limit=1: the latest only
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/history?benchmark=default"), 400,
                    "http.missing_param", "'counter' is required");
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/history?benchmark=default&counter=x&limit=0"), 400,
                    "http.bad_param", "'limit'");
        check_error(f.call(http::verb::get,
                           "/api/v1/projects/demo/history?benchmark=default&counter=x&since=yesterday"),
                    400, "http.bad_param", "'since'");
        for (const std::string bad : {"2026-02-31", "9999-12-31T99:99:99Z", "2026-1-1"}) {
            check_error(
                f.call(http::verb::get, "/api/v1/projects/demo/history?benchmark=default&counter=x&since=" + bad), 400,
                "http.bad_param", "query parameter 'since': expected unix seconds or an ISO 8601 UTC date");
        }
        check_error(
            f.call(http::verb::get, "/api/v1/projects/demo/history?benchmark=default&counter=x&brnach=main"), 400,
            "http.bad_param",
            "unknown query parameter 'brnach' (known: benchmark, counter, branch, role, testbed, since, limit, format)");
        auto leap = f.call(
            http::verb::get,
            "/api/v1/projects/demo/history?benchmark=default&counter=task-clock&since=2024-02-29T00:00:00Z&role=all");
        REQUIRE(leap.result_int() == 200);
        CHECK(json::parse(leap.body()).at("points").size() == 2);
        auto since = f.call(http::verb::get,
                            "/api/v1/projects/demo/history?benchmark=default&counter=task-clock&since=2999-01-01");
        CHECK(json::parse(since.body()).at("points").empty());
    }
    SUBCASE("benchmarks")
    {
        auto b = f.call(http::verb::get, "/api/v1/projects/demo/benchmarks");
        REQUIRE(b.result_int() == 200);
        auto list = json::parse(b.body()).at("benchmarks");
        REQUIRE(list.size() == 1);
        CHECK(list[0].at("name") == "default");
        CHECK(list[0].at("runs") == 2);
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/benchmarks?limit=1"), 400, "http.bad_param",
                    "unknown query parameter 'limit' (this request takes none)");
        check_error(f.call(http::verb::get, "/api/v1/projects/demo/comparisons/" + std::to_string(id) + "?fromat=text"),
                    400, "http.bad_param", "unknown query parameter 'fromat' (known: format)");
        check_error(f.call(http::verb::post, "/api/v1/projects/demo/compare?dry_run=1",
                           json{{"baseline_run", base}, {"candidate_run", cand}}.dump()),
                    400, "http.bad_param", "unknown query parameter 'dry_run' (this request takes none)");
    }
}

namespace {

// The real 10-run capture with task-clock and duration_time multiplied by
// `factor`: a candidate that is slower in every run, so the rank tests give
// p-values far below 1 and the multiplicity adjustment shows.
std::string slowed(const std::string& csv, double factor)
{
    std::istringstream in(csv);
    std::string line, out;
    while (std::getline(in, line)) {
        const auto c1 = line.find(',');
        const auto c2 = c1 == std::string::npos ? c1 : line.find(',', c1 + 1);
        const auto c3 = c2 == std::string::npos ? c2 : line.find(',', c2 + 1);
        if (c3 != std::string::npos) {
            const std::string event = line.substr(c2 + 1, c3 - c2 - 1);
            if (event == "task-clock" || event == "duration_time") {
                char buf[64];
                std::snprintf(buf, sizeof buf, event == "task-clock" ? "%.2f" : "%.0f",
                              std::stod(line.substr(0, c1)) * factor);
                line = buf + line.substr(c1);
            }
        }
        out += line + "\n";
    }
    return out;
}

struct tested_counter {
    std::string benchmark, counter;
    double p_value = 0, p_adjusted = 0;
};

// The gated counters that carry a p-value: the family the gate adjusts over.
std::vector<tested_counter> family_of(const json& report)
{
    std::vector<tested_counter> out;
    for (const auto& b : report.at("benchmarks")) {
        for (const auto& c : b.at("counters")) {
            if (!c.at("gated").get<bool>() || c.at("p_value").is_null()) continue;
            REQUIRE_FALSE(c.at("p_adjusted").is_null());
            out.push_back({b.at("name").get<std::string>(), c.at("name").get<std::string>(),
                           c.at("p_value").get<double>(), c.at("p_adjusted").get<double>()});
        }
    }
    return out;
}

} // namespace

TEST_CASE("multi-benchmark compare: one gate, p-values adjusted across all pairs")
{
    fixture f;
    const std::string csv = perfgate::test::read_testdata("appended-10-runs.csv");
    const std::string slow = slowed(csv, 3.0);
    const auto b1 = f.upload_text("baseline", csv, "default");
    const auto c1 = f.upload_text("candidate", slow, "default");
    const auto b2 = f.upload_text("baseline", csv, "second");
    const auto c2 = f.upload_text("candidate", slow, "second");
    const std::string url = "/api/v1/projects/demo/compare";

    auto single = f.call(http::verb::post, url, json{{"baseline_run", b1}, {"candidate_run", c1}}.dump());
    REQUIRE(single.result_int() == 201);
    const json one = json::parse(single.body());
    REQUIRE(one.at("benchmarks").size() == 1);

    auto res = f.call(http::verb::post, url, json{{"baseline_run", {b1, b2}}, {"candidate_run", {c1, c2}}}.dump());
    REQUIRE(res.result_int() == 201);
    const json multi = json::parse(res.body());
    const auto id = multi.at("comparison_id").get<std::int64_t>();
    CHECK(res[http::field::location] == "/api/v1/projects/demo/comparisons/" + std::to_string(id));
    REQUIRE(multi.at("benchmarks").size() == 2);
    CHECK(multi.at("benchmarks")[0].at("name") == "default");
    CHECK(multi.at("benchmarks")[1].at("name") == "second");
    CHECK(multi.at("verdict") == "fail");
    CHECK(multi.at("policy").at("correction") == "holm");

    SUBCASE("the Holm family spans both benchmarks")
    {
        const auto fam = family_of(multi);
        const auto fam_one = family_of(one);
        REQUIRE(fam_one.size() >= 1);
        // Both benchmarks contribute the same gated counters.
        REQUIRE(fam.size() == 2 * fam_one.size());
        std::vector<double> raw;
        for (const auto& t : fam) raw.push_back(t.p_value);
        const auto expected = perfgate::test::reference_holm(raw);
        for (std::size_t i = 0; i < fam.size(); ++i) {
            CAPTURE(fam[i].benchmark);
            CAPTURE(fam[i].counter);
            CHECK(fam[i].p_adjusted >= fam[i].p_value);
            CHECK(fam[i].p_adjusted == doctest::Approx(expected[i]).epsilon(1e-12));
        }
        // The same pair alone is a smaller family: its smallest p-value is
        // multiplied by m = fam_one.size() there and by twice that here.
        double p_min = 1, adj_one = 1, adj_multi = 1;
        for (std::size_t i = 0; i < fam_one.size(); ++i) {
            if (fam_one[i].p_value < p_min) {
                p_min = fam_one[i].p_value;
                adj_one = fam_one[i].p_adjusted;
                adj_multi = fam[i].p_adjusted;
            }
        }
        REQUIRE(p_min * static_cast<double>(fam.size()) < 1.0);
        CHECK(adj_one == doctest::Approx(p_min * static_cast<double>(fam_one.size())).epsilon(1e-12));
        CHECK(adj_multi == doctest::Approx(p_min * static_cast<double>(fam.size())).epsilon(1e-12));
    }
    SUBCASE("the \"pairs\" form is the same gate")
    {
        auto p = f.call(http::verb::post, url, json{{"pairs", {{b1, c1}, {b2, c2}}}}.dump());
        REQUIRE(p.result_int() == 201);
        const json j = json::parse(p.body());
        // Compare is idempotent by (project, pairs, policy) (service/service.cpp):
        // the same pairs in the other spelling are the stored comparison.
        CHECK(j.at("comparison_id").get<std::int64_t>() == id);
        const auto a = family_of(multi), b = family_of(j);
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].p_adjusted == b[i].p_adjusted);
    }
    SUBCASE("the stored comparison holds both benchmarks")
    {
        auto got = f.call(http::verb::get, "/api/v1/projects/demo/comparisons/" + std::to_string(id));
        REQUIRE(got.result_int() == 200);
        const json j = json::parse(got.body());
        REQUIRE(j.at("benchmarks").size() == 2);
        CHECK(j.at("benchmarks")[1].at("name") == "second");
        CHECK(j.at("comparison_id") == id);
    }
    SUBCASE("bad shapes are 400 naming the field; nothing is stored")
    {
        auto post = [&](const json& body) { return f.call(http::verb::post, url, body.dump()); };
        check_error(post({{"baseline_run", {b1, b2}}, {"candidate_run", {c1}}}), 400, "ingest.bad_field",
                    "'baseline_run' has 2 run ids but 'candidate_run' has 1");
        check_error(post({{"baseline_run", json::array()}, {"candidate_run", json::array()}}), 400, "ingest.bad_field",
                    "field 'baseline_run' must hold 1..1000 run ids, got 0");
        check_error(post({{"baseline_run", {b1, "two"}}, {"candidate_run", {c1, c2}}}), 400, "ingest.bad_field",
                    "field 'baseline_run[1]' must be a positive run id, got \"two\"");
        check_error(post({{"baseline_run", {b1, b2}}, {"candidate_run", {c1, -4}}}), 400, "ingest.bad_field",
                    "field 'candidate_run[1]' must be a positive run id, got -4");
        check_error(post({{"baseline_run", {b1, b2}}, {"candidate_run", {c1, 2.5}}}), 400, "ingest.bad_field",
                    "'candidate_run[1]'");
        check_error(post({{"baseline_run", {b1}}, {"candidate_run", c1}}), 400, "ingest.bad_field",
                    "field 'baseline_run' is an array but 'candidate_run' is number");
        check_error(post({{"baseline_run", b1}, {"candidate_run", {{"id", c1}}}}), 400, "ingest.bad_field",
                    "'candidate_run' must be a positive run id");
        check_error(post({{"pairs", {{"b", b1}, {"c", c1}}}}), 400, "ingest.bad_field",
                    "field 'pairs' must be an array of [baseline_run, candidate_run], got object");
        check_error(post({{"pairs", json::array()}}), 400, "ingest.bad_field", "'pairs' must hold 1..1000");
        check_error(post({{"pairs", {{b1, c1}, {b2}}}}), 400, "ingest.bad_field",
                    "field 'pairs[1]' must be [baseline_run, candidate_run]");
        check_error(post({{"pairs", {{b1, c1}, {b2, c2, c2}}}}), 400, "ingest.bad_field", "'pairs[1]'");
        check_error(post({{"pairs", {{b1, c1}, {b2, true}}}}), 400, "ingest.bad_field",
                    "field 'pairs[1][1]' must be a positive run id, got true");
        check_error(post({{"pairs", {{b1, c1}}}, {"baseline_run", b1}}), 400, "ingest.bad_field",
                    "either 'pairs' or 'baseline_run' and 'candidate_run', not both");
        check_error(post(json::object()), 400, "ingest.bad_field",
                    "field 'baseline_run' is required (or give 'pairs')");
        check_error(post({{"baseline_run", b1}, {"candidate_run", c1}, {"polciy", {{"alpha", 0.01}}}}), 400,
                    "ingest.bad_field",
                    "request body: unknown field 'polciy' (known: baseline_run, candidate_run, pairs, policy, "
                    "baseline_ref)");
        check_error(post({{"pairs", {{b1, c1}}}, {"baseline", b1}}), 400, "ingest.bad_field",
                    "unknown field 'baseline'");
        // baseline_ref (issue 33): a rule and commit names, checked.
        const std::string a(40, 'a'), h(40, 'c');
        const auto with_ref = [&](const json& ref) { return post({{"pairs", {{b1, c1}}}, {"baseline_ref", ref}}); };
        check_error(with_ref("merge-base"), 400, "ingest.bad_field", "field 'baseline_ref' must be an object");
        check_error(with_ref({{"rule", "fork-point"}, {"baseline_sha", a}, {"head_sha", h}}), 400, "ingest.bad_field",
                    "'baseline_ref.rule' must be merge-base, base-tip or parent");
        check_error(with_ref({{"rule", "parent"}, {"baseline_sha", "../../x"}, {"head_sha", h}}), 400,
                    "ingest.bad_field", "'baseline_ref.baseline_sha' must be a commit's 40 or 64 hex digits");
        check_error(with_ref({{"rule", "parent"}, {"baseline_sha", a}}), 400, "ingest.bad_field",
                    "'baseline_ref.head_sha' is required");
        check_error(with_ref({{"rule", "parent"}, {"baseline_sha", a}, {"head_sha", h}, {"x", 1}}), 400,
                    "ingest.bad_field", "unknown field 'baseline_ref.x'");
        CHECK_FALSE(f.service.comparisons().load("demo", id + 1).has_value());
    }
    SUBCASE("at most api::max_compare_pairs pairs: 413 compare.too_many_pairs, before any run is read")
    {
        using perfgate::api::max_compare_pairs;
        REQUIRE(max_compare_pairs == 1000);
        auto post = [&](const json& body) { return f.call(http::verb::post, url, body.dump()); };
        json base = json::array(), cand = json::array(), list = json::array();
        for (std::size_t i = 0; i < max_compare_pairs; ++i) {
            base.push_back(1000 + 2 * i);
            cand.push_back(1001 + 2 * i);
            list.push_back({1000 + 2 * i, 1001 + 2 * i});
        }
        // At the limit the request is read (and its run ids are not found).
        CHECK(perfgate::api::compare_pairs_from_json({{"baseline_run", base}, {"candidate_run", cand}}).size() == 1000);
        CHECK(perfgate::api::compare_pairs_from_json({{"pairs", list}}).size() == 1000);
        check_error(post({{"pairs", list}}), 404, "compare.not_found", "baseline run 1000 not found");
        base.push_back(b1);
        cand.push_back(c1);
        list.push_back({b1, c1});
        check_error(post({{"baseline_run", base}, {"candidate_run", cand}}), 413, "compare.too_many_pairs",
                    "request body: field 'baseline_run' holds 1001 run ids; at most 1000 pairs per compare");
        check_error(post({{"pairs", list}}), 413, "compare.too_many_pairs",
                    "request body: field 'pairs' holds 1001 [baseline_run, candidate_run] pairs; at most 1000 pairs "
                    "per compare");
        CHECK(perfgate::server::status_for("compare.too_many_pairs") == 413);
        CHECK_FALSE(f.service.comparisons().load("demo", id + 1).has_value());
    }
    SUBCASE("runs the gate cannot use: another project's run is 404, a repeated benchmark 422")
    {
        auto post = [&](const json& body) { return f.call(http::verb::post, url, body.dump()); };
        const auto foreign = f.upload_text("candidate", slow, "second", "other");
        check_error(post({{"baseline_run", {b1, b2}}, {"candidate_run", {c1, foreign}}}), 404, "compare.not_found",
                    "candidate run " + std::to_string(foreign) + " not found in project 'demo'");
        check_error(post({{"pairs", {{b1, c1}, {b2, foreign}}}}), 404, "compare.not_found",
                    "candidate run " + std::to_string(foreign) + " not found in project 'demo'");
        check_error(post({{"baseline_run", {b1, b1}}, {"candidate_run", {c1, c1}}}), 422, "compare.mismatch",
                    "benchmark 'default' appears in two pairs");
        check_error(post({{"pairs", {{b1, c1}, {b2, c1}}}}), 422, "compare.mismatch",
                    "is benchmark 'second' but run " + std::to_string(c1) + " is 'default'");
        CHECK_FALSE(f.service.comparisons().load("demo", id + 1).has_value());
    }
}

TEST_CASE("json_error_text drops nlohmann's tag and keeps the position")
{
    using perfgate::api::json_error_text;
    CHECK(json_error_text("[json.exception.parse_error.101] parse error at line 1, column 7: syntax error while "
                          "parsing value - invalid literal; last read: 'x'") ==
          "line 1, column 7: syntax error while parsing value - invalid literal; last read: 'x'");
    CHECK(json_error_text("[json.exception.parse_error.110] parse error at byte 3: unexpected end") ==
          "byte 3: unexpected end");
    CHECK(json_error_text("[json.exception.parse_error.101] parse error: bad") == "bad");
    CHECK(json_error_text("[json.exception.type_error.302] type must be number, but is string") ==
          "type must be number, but is string");
    CHECK(json_error_text("no tag here") == "no tag here");
    // The real thing, from nlohmann itself.
    try {
        const json j = json::parse("{\"a\": x}");
        FAIL("expected a parse error, got " << j.dump());
    } catch (const json::parse_error& e) {
        CHECK(json_error_text(e.what()).starts_with("line 1, column 7: syntax error while parsing value"));
    }
}

TEST_CASE("parse_timestamp: unix seconds or strict ISO 8601 UTC, real calendar dates only")
{
    using perfgate::api::parse_timestamp;
    // References: Python's calendar.timegm(datetime.datetime(...).timetuple()).
    CHECK(parse_timestamp("1795313465") == 1795313465);
    CHECK(parse_timestamp("0") == 0);
    CHECK(parse_timestamp("-1") == -1);
    CHECK(parse_timestamp("2026-11-22T02:11:05Z") == 1795313465);
    CHECK(parse_timestamp("2026-11-22") == 1795305600);
    CHECK(parse_timestamp("2024-02-29") == 1709164800); // leap year
    CHECK(parse_timestamp("2000-02-29") == 951782400);  // divisible by 400: leap
    CHECK(parse_timestamp("1969-12-31T23:59:59Z") == -1);
    CHECK(parse_timestamp("9999-12-31T23:59:59Z") == 253402300799);
    CHECK(parse_timestamp("0001-01-01") == -62135596800);
    CHECK(parse_timestamp("2016-12-31T23:59:60Z") == 1483228800); // leap second: the next second
    // clang-format off
    for (const char* bad : {"2026-02-31", "2026-02-29", "1900-02-29", "2026-04-31", "2026-13-01", "2026-00-10",
                            "2026-01-00", "2026-1-1", "2026-01-1", "26-01-01", "+2026-01-01",
                            "9999-12-31T99:99:99Z", "2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z",
                            "2026-01-01T12:00:60Z", "2026-01-01T23:59:61Z", "2026-01-01T2:00:00Z",
                            "2026-01-01t00:00:00z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00",
                            "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00.5Z", "2026-01-01Z", " 2026-01-01",
                            "2026-01-01 ", "2026/01/01", "2026-0a-01", "", "-", "--1", "1e9", "12 ", "+5",
                            "99999999999999999999", "yesterday"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_timestamp(bad).has_value());
    }
    // clang-format on
}

TEST_CASE("history wire format round-trips")
{
    perfgate::model::history_point p;
    p.run_id = 3;
    p.git_sha = "abc";
    p.branch = "a,b";
    p.created_at = 1700000000;
    p.n = 5;
    p.median = 1.5;
    p.mean = 1.25;
    p.cov = 0.5;
    p.min = 1.0;
    p.testbed = "0123456789abcdef";
    p.testbed_name = "ci-runner-1";
    p.role = "baseline";
    const json doc = perfgate::api::history_to_json({p});
    CHECK(doc.at("points")[0].at("role") == "baseline");
    CHECK(doc.at("points")[0].at("min") == 1.0);
    CHECK(doc.at("points")[0].at("max").is_null()); // absent is null, not 0
    CHECK(doc.at("points")[0].at("testbed") == "0123456789abcdef");
    CHECK(doc.at("points")[0].at("testbed_name") == "ci-runner-1");
    auto back = perfgate::api::history_from_json(doc);
    REQUIRE(back.size() == 1);
    CHECK(back[0].branch == "a,b");
    CHECK(back[0].cov == 0.5);
    CHECK_FALSE(back[0].stddev.has_value());
    CHECK(back[0].min == 1.0);
    CHECK_FALSE(back[0].max.has_value());
    CHECK(back[0].testbed == "0123456789abcdef");
    CHECK(back[0].testbed_name == "ci-runner-1");
    CHECK(back[0].role == "baseline");

    // An older server's points have no min, max, testbed, testbed_name or role.
    json old = doc;
    for (const char* key : {"min", "max", "testbed", "testbed_name", "change_point", "role"})
        old["points"][0].erase(key);
    auto from_old = perfgate::api::history_from_json(old);
    REQUIRE(from_old.size() == 1);
    CHECK(from_old[0].run_id == 3);
    CHECK(from_old[0].median == 1.5);
    CHECK_FALSE(from_old[0].min.has_value());
    CHECK_FALSE(from_old[0].max.has_value());
    CHECK(from_old[0].testbed.empty());
    CHECK(from_old[0].testbed_name.empty());
    CHECK(from_old[0].role.empty());
    CHECK(perfgate::api::history_to_csv({p}).find("3,abc,\"a,b\",1700000000,5,1.5,1.25,,0.5,baseline\n") !=
          std::string::npos);
    CHECK_THROWS_WITH_AS(perfgate::api::history_from_json(json{{"points", {{{"run_id", "x"}}}}}),
                         doctest::Contains("history response"), perfgate::error);
}

namespace {

// n arrays or objects nested in each other: "[[[...]]]" or {"a":{"a":...{}}}.
std::string nested(std::size_t n, bool objects = false)
{
    std::string s;
    s.reserve(n * 6);
    for (std::size_t i = 0; i < n; ++i) s += objects ? "{\"a\":" : "[";
    s += objects ? "{}" : "[]";
    for (std::size_t i = 0; i < n; ++i) s += objects ? '}' : ']';
    return s;
}

// body with `field` replaced by `raw` JSON text, in place of its value.
std::string with_raw_field(json body, const std::string& field, const std::string& raw)
{
    body[field] = "@RAW@";
    std::string text = body.dump();
    const auto at = text.find("\"@RAW@\"");
    REQUIRE(at != std::string::npos);
    return text.replace(at, 7, raw);
}

} // namespace

TEST_CASE("request bodies nested deeper than api::max_json_depth are 400 http.too_deep, not a crash")
{
    using perfgate::api::max_json_depth;
    using perfgate::api::parse_request_body;
    SUBCASE("the limit itself: max_json_depth levels parse, one more does not")
    {
        // nested(n) is n + 1 levels; inside {"x": ...} one more.
        CHECK(parse_request_body("{\"x\":" + nested(max_json_depth - 2) + "}").is_object());
        CHECK(parse_request_body("{\"x\":" + nested(max_json_depth - 2, true) + "}").is_object());
        CHECK_THROWS_WITH_AS(parse_request_body("{\"x\":" + nested(max_json_depth - 1) + "}"),
                             "request body: objects and arrays nested deeper than 32 levels (the limit)",
                             perfgate::error);
        try {
            parse_request_body("{\"x\":" + nested(max_json_depth - 1, true) + "}");
            FAIL("expected http.too_deep");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "http.too_deep");
        }
        CHECK(perfgate::server::status_for("http.too_deep") == 400);
    }

    fixture f;
    constexpr std::size_t deep = 100000;
    const std::string arrays = nested(deep), objects = nested(deep, true);
    const std::string runs = "/api/v1/projects/demo/runs", compare = "/api/v1/projects/demo/compare";
    SUBCASE("every field of a run upload, and the body itself")
    {
        for (const std::string field : {"environment", "pr", "testbed", "benchmark", "perf_csv", "role", "unknown"}) {
            CAPTURE(field);
            check_error(f.call(http::verb::post, runs, with_raw_field(valid_run(), field, arrays)), 400,
                        "http.too_deep", "nested deeper than 32 levels");
            check_error(f.call(http::verb::post, runs, with_raw_field(valid_run(), field, objects)), 400,
                        "http.too_deep", "nested deeper than 32 levels");
        }
        json tb = valid_run();
        tb["testbed"] = {{"name", "@RAW@"}};
        std::string text = tb.dump();
        text.replace(text.find("\"@RAW@\""), 7, arrays);
        check_error(f.call(http::verb::post, runs, text), 400, "http.too_deep", "32");
        check_error(f.call(http::verb::post, runs, arrays), 400, "http.too_deep", "32");
        check_error(f.call(http::verb::post, runs, objects), 400, "http.too_deep", "32");
        // Unterminated: the limit is met before the syntax error.
        check_error(f.call(http::verb::post, runs, std::string(deep, '[')), 400, "http.too_deep", "32");
        CHECK(f.db.maintenance().runs_count() == 0);
    }
    SUBCASE("every field of a compare request")
    {
        const json body = {{"baseline_run", 1}, {"candidate_run", 2}};
        for (const std::string field : {"baseline_run", "candidate_run", "policy", "pairs"}) {
            CAPTURE(field);
            check_error(f.call(http::verb::post, compare, with_raw_field(body, field, arrays)), 400, "http.too_deep",
                        "32");
            check_error(f.call(http::verb::post, compare, with_raw_field(body, field, objects)), 400, "http.too_deep",
                        "32");
        }
        check_error(f.call(http::verb::post, compare, "{\"pairs\": [[1, 2], " + arrays + "]}"), 400, "http.too_deep",
                    "32");
        check_error(f.call(http::verb::post, compare,
                           "{\"baseline_run\": 1, \"candidate_run\": 2, \"policy\": {\"benchmarks\": {\"b\": " +
                               objects + "}}}"),
                    400, "http.too_deep", "32");
    }
    // Still serving.
    CHECK(f.call(http::verb::get, "/healthz", {}, {}, "").result_int() == 200);
    CHECK(f.call(http::verb::post, runs, valid_run().dump()).result_int() == 201);
}

namespace {

// Runs sql on the fixture's database through a second connection, behind
// the store's back: the way to make the store fail on demand.
void sabotage(const std::filesystem::path& db, const std::string& sql)
{
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
    char* message = nullptr;
    const int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &message);
    INFO((message ? message : ""));
    sqlite3_free(message);
    sqlite3_close(raw);
    REQUIRE(rc == SQLITE_OK);
}

// stderr of a block, through a temp file.
class stderr_capture {
public:
    explicit stderr_capture(const std::filesystem::path& file) : file_(file)
    {
        std::fflush(stderr);
        saved_ = ::dup(2);
        std::FILE* f = std::fopen(file_.c_str(), "w");
        REQUIRE(f);
        ::dup2(::fileno(f), 2);
        std::fclose(f);
    }
    ~stderr_capture() { restore(); }
    std::string text()
    {
        restore();
        std::ifstream in(file_);
        return {std::istreambuf_iterator<char>(in), {}};
    }

private:
    void restore()
    {
        if (saved_ < 0) return;
        std::fflush(stderr);
        ::dup2(saved_, 2);
        ::close(saved_);
        saved_ = -1;
    }
    std::filesystem::path file_;
    int saved_ = -1;
};

// The "(reference R)" of a scrubbed message.
std::string reference_in(const std::string& message)
{
    const auto at = message.find("(reference ");
    REQUIRE(at != std::string::npos);
    const std::string ref = message.substr(at + 11, 8);
    CHECK(ref.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(message.substr(at + 19) == ")");
    return ref;
}

} // namespace

TEST_CASE("store errors reach the server log with a reference, never the response body")
{
    fixture f;
    const auto base = f.upload("baseline");
    const auto cand = f.upload("candidate");
    const std::string db_path = f.db_file.string();

    SUBCASE("an I/O-class store error is 500 internal")
    {
        sabotage(f.db_file, "DROP TABLE comparisons;");
        stderr_capture log(f.dir / "stderr.txt");
        auto res = f.call(http::verb::post, "/api/v1/projects/demo/compare",
                          json{{"baseline_run", base}, {"candidate_run", cand}}.dump());
        const std::string logged = log.text();
        check_error(res, 500, "internal", "internal server error (reference ");
        CHECK(res.body().find(db_path) == std::string::npos);
        CHECK(res.body().find("comparisons") == std::string::npos);
        CHECK(res.body().find("store.") == std::string::npos);
        const std::string ref = reference_in(error_of(res).at("message").get<std::string>());
        // The log line has it all: reference, request, id, path, SQLite's words.
        INFO("log: " << logged);
        CHECK(logged.find("perfgate serve: error " + ref + " on POST /api/v1/projects/demo/compare: [store.io] " +
                          db_path) != std::string::npos);
        CHECK(logged.find("no such table: comparisons") != std::string::npos);
        CHECK(std::count(logged.begin(), logged.end(), '\n') == 1);
    }
    SUBCASE("a store constraint keeps its status and id, not its message")
    {
        sabotage(f.db_file,
                 "CREATE TRIGGER no_runs BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'secret detail'); END;");
        stderr_capture log(f.dir / "stderr.txt");
        auto res = f.call(http::verb::post, "/api/v1/projects/demo/runs", valid_run().dump());
        const std::string logged = log.text();
        check_error(res, 422, "store.constraint", "the store refused the request (reference ");
        CHECK(res.body().find(db_path) == std::string::npos);
        CHECK(res.body().find("secret detail") == std::string::npos);
        const std::string ref = reference_in(error_of(res).at("message").get<std::string>());
        INFO("log: " << logged);
        CHECK(logged.find("perfgate serve: error " + ref + " on POST /api/v1/projects/demo/runs: [store.constraint] " +
                          db_path) != std::string::npos);
        CHECK(logged.find("secret detail") != std::string::npos);
    }
    SUBCASE("error_response scrubs a 500 for every caller, and references differ")
    {
        stderr_capture log(f.dir / "stderr.txt");
        auto a = perfgate::server::error_response("internal", "/srv/secret.db: disk I/O error\nsecond line");
        auto b = perfgate::server::error_response("something.unknown", "/srv/secret.db: oops");
        const std::string logged = log.text();
        check_error(a, 500, "internal", "internal server error (reference ");
        check_error(b, 500, "internal", "internal server error (reference ");
        CHECK(a.body().find("secret") == std::string::npos);
        CHECK(b.body().find("secret") == std::string::npos);
        const std::string ra = reference_in(error_of(a).at("message").get<std::string>());
        const std::string rb = reference_in(error_of(b).at("message").get<std::string>());
        CHECK(ra != rb);
        INFO("log: " << logged);
        CHECK(logged.find("perfgate serve: error " + ra +
                          ": [internal] /srv/secret.db: disk I/O error second line\n") != std::string::npos);
        CHECK(logged.find("perfgate serve: error " + rb + ": [something.unknown] /srv/secret.db: oops\n") !=
              std::string::npos);
        // A client error keeps its message.
        check_error(perfgate::server::error_response("ingest.bad_field", "field 'x'"), 400, "ingest.bad_field",
                    "field 'x'");
    }
}

TEST_CASE("a compare stored by the service's committer is answered later, once, from its thread")
{
    fixture f;
    const auto base = f.upload("baseline");
    const auto cand = f.upload("candidate");
    f.service.background().commit_in_background();
    const std::string body = json{{"baseline_run", base}, {"candidate_run", cand}}.dump();

    std::mutex mu;
    std::condition_variable cv;
    std::vector<response> later;
    std::vector<std::thread::id> threads;
    const perfgate::server::responder take = [&](response&& res) {
        std::lock_guard lock(mu);
        later.push_back(std::move(res));
        threads.push_back(std::this_thread::get_id());
        cv.notify_all();
    };
    const auto wait_for = [&](std::size_t n) {
        std::unique_lock lock(mu);
        REQUIRE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return later.size() >= n; }));
    };

    SUBCASE("a fresh report: nullopt now, then 201 with the report and its Location; a repeat is answered now")
    {
        const auto now = perfgate::server::route(
            f.make_request(http::verb::post, "/api/v1/projects/demo/compare", body), f.ctx, nullptr, take);
        CHECK_FALSE(now.has_value());
        wait_for(1);
        f.service.background().drain_commits();
        std::lock_guard lock(mu);
        REQUIRE(later.size() == 1);
        CHECK(threads[0] != std::this_thread::get_id());
        const response& res = later[0];
        CHECK(res.result_int() == 201);
        CHECK(res[http::field::content_type] == "application/json");
        CHECK(res.keep_alive());
        const auto report = json::parse(res.body());
        const auto id = report.at("comparison_id").get<std::int64_t>();
        CHECK(res[http::field::location] == "/api/v1/projects/demo/comparisons/" + std::to_string(id));
        CHECK(f.db.comparisons().load("demo", id).has_value());
        // The same request again: the stored report, answered by route() itself.
        const auto again = perfgate::server::route(
            f.make_request(http::verb::post, "/api/v1/projects/demo/compare", body), f.ctx, nullptr, take);
        REQUIRE(again.has_value());
        CHECK(again->result_int() == 201);
        CHECK(again->body() == res.body());
        CHECK(later.size() == 1);
    }
    SUBCASE("errors found before the write are answered now, as route() answers them")
    {
        const auto now = perfgate::server::route(
            f.make_request(http::verb::post, "/api/v1/projects/demo/compare",
                           json{{"baseline_run", base}, {"candidate_run", 999999}}.dump()),
            f.ctx, nullptr, take);
        REQUIRE(now.has_value());
        check_error(*now, 404, "compare.not_found", "candidate run 999999 not found");
        f.service.background().drain_commits();
        CHECK(later.empty());
    }
    SUBCASE("a store error at the commit is answered later, scrubbed, and logged with its reference")
    {
        const std::string db_path = f.db_file.string();
        sabotage(f.db_file,
                 "CREATE TRIGGER no_compares BEFORE INSERT ON comparisons BEGIN SELECT RAISE(ABORT, 'secret detail'); "
                 "END;");
        stderr_capture log(f.dir / "stderr.txt");
        const auto now = perfgate::server::route(
            f.make_request(http::verb::post, "/api/v1/projects/demo/compare", body), f.ctx, nullptr, take);
        CHECK_FALSE(now.has_value());
        wait_for(1);
        f.service.background().drain_commits();
        const std::string logged = log.text();
        std::lock_guard lock(mu);
        REQUIRE(later.size() == 1);
        check_error(later[0], 422, "store.constraint", "the store refused the request (reference ");
        CHECK(later[0].body().find("secret detail") == std::string::npos);
        CHECK(later[0].body().find(db_path) == std::string::npos);
        const std::string ref = reference_in(error_of(later[0]).at("message").get<std::string>());
        INFO("log: " << logged);
        CHECK(logged.find("perfgate serve: error " + ref +
                          " on POST /api/v1/projects/demo/compare: [store.constraint] " + db_path) !=
              std::string::npos);
        CHECK(f.service.background().commit_stats().failed == 1);
        CHECK(f.db.comparisons().recent("demo", 10).empty());
    }
}

TEST_CASE("the markdown of a comparison links its dashboard page, the project percent-encoded")
{
    fixture f;
    const std::string project = "web@v2+x";
    const std::string token = "Bearer " + f.db.tokens().create(project, "test");
    const std::string csv = perfgate::test::read_testdata("appended-10-runs.csv");
    std::int64_t runs[2] = {};
    for (int i = 0; i < 2; ++i) {
        json body = {{"role", i ? "candidate" : "baseline"},
                     {"git_sha", "0123abcd"},
                     {"branch", "main"},
                     {"perf_csv", csv}};
        auto res = f.call(http::verb::post, "/api/v1/projects/web%40v2%2Bx/runs", body.dump(), "application/json",
                          token);
        REQUIRE(res.result_int() == 201);
        runs[i] = json::parse(res.body()).at("run_id").get<std::int64_t>();
    }
    auto res = f.call(http::verb::post, "/api/v1/projects/web%40v2%2Bx/compare",
                      json{{"baseline_run", runs[0]}, {"candidate_run", runs[1]}}.dump(), "application/json", token);
    REQUIRE(res.result_int() == 201);
    const auto id = json::parse(res.body()).at("comparison_id").get<std::int64_t>();
    auto md = f.call(http::verb::get,
                     "/api/v1/projects/web%40v2%2Bx/comparisons/" + std::to_string(id) + "?format=markdown", {}, {},
                     token);
    REQUIRE(md.result_int() == 200);
    CHECK(md.body().find("no --public-url") != std::string::npos);
    f.ctx.public_url = "https://perf.example.com";
    md = f.call(http::verb::get, "/api/v1/projects/web%40v2%2Bx/comparisons/" + std::to_string(id) + "?format=markdown",
                {}, {}, token);
    CHECK(md.body().find("(https://perf.example.com/p/web%40v2%2Bx/comparisons/" + std::to_string(id) + ")") !=
          std::string::npos);
}

TEST_CASE("GET .../comparisons lists the newest comparisons with their commits")
{
    fixture f;
    const std::string list = "/api/v1/projects/demo/comparisons";
    SUBCASE("a project without comparisons")
    {
        auto res = f.call(http::verb::get, list);
        REQUIRE(res.result_int() == 200);
        CHECK(res[http::field::content_type] == "application/json");
        CHECK(json::parse(res.body()) == json{{"repository_url", nullptr}, {"comparisons", json::array()}});
    }
    SUBCASE("newest first, with verdict, benchmarks and both runs' commits")
    {
        const auto base = f.upload("baseline");
        const auto cand = f.upload("candidate");
        std::vector<std::int64_t> ids;
        for (const double threshold : {5.0, 10.0, 20.0}) {
            auto res = f.call(
                http::verb::post, "/api/v1/projects/demo/compare",
                json{{"baseline_run", base}, {"candidate_run", cand}, {"policy", {{"threshold_pct", threshold}}}}
                    .dump());
            REQUIRE(res.result_int() == 201);
            ids.push_back(json::parse(res.body()).at("comparison_id").get<std::int64_t>());
        }
        f.service.projects().set_repository_url("demo", "https://github.com/acme/demo/");

        auto res = f.call(http::verb::get, list);
        REQUIRE(res.result_int() == 200);
        const json doc = json::parse(res.body());
        CHECK(doc.at("repository_url") == "https://github.com/acme/demo");
        const json& items = doc.at("comparisons");
        REQUIRE(items.size() == 3);
        CHECK(items[0].at("id") == ids[2]);
        CHECK(items[1].at("id") == ids[1]);
        CHECK(items[2].at("id") == ids[0]);
        const auto stored = json::parse(f.call(http::verb::get, list + "/" + std::to_string(ids[2])).body());
        CHECK(items[0].at("verdict") == stored.at("verdict"));
        CHECK(items[0].at("benchmarks") == 1);
        CHECK(items[0].at("created_at").get<std::int64_t>() > 1'700'000'000);
        CHECK(items[0].at("baseline") == json{{"run_id", base}, {"git_sha", "0123abcd"}, {"branch", "main"}});
        CHECK(items[0].at("candidate") == json{{"run_id", cand}, {"git_sha", "0123abcd"}, {"branch", "main"}});

        // The client's side of the wire format reads it back.
        const auto back = perfgate::api::comparison_list_from_json(doc);
        CHECK(back.repository_url == "https://github.com/acme/demo");
        REQUIRE(back.comparisons.size() == 3);
        CHECK(back.comparisons[0].id == ids[2]);
        CHECK(back.comparisons[0].verdict == stored.at("verdict").get<std::string>());
        CHECK(back.comparisons[0].benchmarks == 1u);
        CHECK(back.comparisons[2].candidate.run_id == cand);
        CHECK(perfgate::api::to_json(back) == doc);

        auto one = json::parse(f.call(http::verb::get, list + "?limit=1").body());
        REQUIRE(one.at("comparisons").size() == 1);
        CHECK(one.at("comparisons")[0].at("id") == ids[2]);
        CHECK(json::parse(f.call(http::verb::get, list + "?limit=200").body()).at("comparisons").size() == 3);
        // Each project lists its own.
        CHECK(json::parse(f.call(http::verb::get, "/api/v1/projects/other/comparisons", {}, {}, "other").body())
                  .at("comparisons")
                  .empty());
    }
    SUBCASE("a bad limit is 400 naming limit")
    {
        for (const std::string bad : {"0", "201", "-1", "abc", "", "1e2", "20x"}) {
            CAPTURE(bad);
            check_error(f.call(http::verb::get, list + "?limit=" + bad), 400, "http.bad_param",
                        "query parameter 'limit': expected an integer in [1, 200], got '" + bad + "'");
        }
        check_error(f.call(http::verb::get, list + "?limt=5"), 400, "http.bad_param", "unknown query parameter 'limt'");
    }
    SUBCASE("the auth rules of the other reads")
    {
        check_error(f.call(http::verb::get, list, {}, {}, ""), 401, "auth.missing_token", "Bearer");
        check_error(f.call(http::verb::get, list, {}, {}, "other"), 403, "auth.forbidden", "project 'demo'");
        f.ctx.public_read = true;
        CHECK(f.call(http::verb::get, list, {}, {}, "").result_int() == 200);
        check_error(f.call(http::verb::get, "/api/v1/projects/nope/comparisons", {}, {}, ""), 404, "project.not_found",
                    "no project 'nope'");
    }
    SUBCASE("GET only, no trailing slash, its own metrics label")
    {
        auto res = f.call(http::verb::post, list, "{}");
        check_error(res, 405, "http.method_not_allowed",
                    "POST is not allowed on /api/v1/projects/{project}/comparisons; use GET");
        CHECK(res[http::field::allow] == "GET");
        check_error(f.call(http::verb::get, list + "/"), 404, "http.not_found", "(paths take no trailing slash)");
        request req{http::verb::get, "/api/v1/projects/p%20q/comparisons?limit=5", 11};
        CHECK(perfgate::server::route_label(req) == "GET /api/v1/projects/{project}/comparisons");
    }
}

TEST_CASE("a comparison's flame graph: PUT stores it (413 above the limit), GET serves it sandboxed")
{
    fixture f;
    const auto base = f.upload("baseline", "appended-10-runs.csv", "a/b");
    const auto cand = f.upload("candidate", "appended-10-runs.csv", "a/b");
    auto compared = f.call(http::verb::post, "/api/v1/projects/demo/compare",
                           json{{"baseline_run", base}, {"candidate_run", cand}}.dump());
    REQUIRE(compared.result_int() == 201);
    const auto id = json::parse(compared.body()).at("comparison_id").get<std::int64_t>();
    const std::string path = "/api/v1/projects/demo/comparisons/" + std::to_string(id) + "/flame-graph";
    const std::string svg =
        "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><title>a &lt; b</title></svg>\n";

    SUBCASE("stored and served back, with headers that run nothing")
    {
        auto put = f.call(http::verb::put, path + "?benchmark=a%2Fb", svg, "image/svg+xml");
        REQUIRE(put.result_int() == 201);
        const auto answer = json::parse(put.body());
        CHECK(answer["benchmark"] == "a/b");
        CHECK(answer["bytes"] == svg.size());
        CHECK(answer["url"] == path + "?benchmark=a%2Fb");
        auto got = f.call(http::verb::get, path + "?benchmark=a%2Fb");
        CHECK(got.result_int() == 200);
        CHECK(got.body() == svg);
        CHECK(got[http::field::content_type] == "image/svg+xml; charset=utf-8");
        CHECK(got["Content-Security-Policy"].find("sandbox") != boost::beast::string_view::npos);
        CHECK(got["Content-Security-Policy"].find("default-src 'none'") != boost::beast::string_view::npos);
        CHECK(got["X-Content-Type-Options"] == "nosniff");
        CHECK(perfgate::server::route_label(request{http::verb::put, path + "?benchmark=x", 11}) ==
              "PUT /api/v1/projects/{project}/comparisons/{id}/flame-graph");
    }
    SUBCASE("above the limit: 413 with the limit in the message, from the header alone too")
    {
        const std::string big = "<svg>" + std::string(perfgate::service::max_flame_graph_bytes, ' ') + "</svg>";
        check_error(f.call(http::verb::put, path + "?benchmark=a%2Fb", big, "image/svg+xml"), 413, "artifact.too_large",
                    "larger than this server's limit of 4194304 bytes (4 MiB)");
        request header{http::verb::put, path + "?benchmark=a%2Fb", 11};
        header.set(http::field::authorization, "Bearer " + f.demo_token);
        header.set(http::field::content_type, "image/svg+xml");
        header.set(http::field::content_length, std::to_string(big.size()));
        auto refused = perfgate::server::refuse_before_body(header, f.ctx);
        REQUIRE(refused.has_value());
        check_error(*refused, 413, "artifact.too_large", "4 MiB");
        header.set(http::field::content_length, "100");
        CHECK_FALSE(perfgate::server::refuse_before_body(header, f.ctx).has_value());
        CHECK(f.call(http::verb::get, path + "?benchmark=a%2Fb").result_int() == 404);
    }
    SUBCASE("refused: not SVG, another media type, no benchmark, unknown comparison, no or a foreign token")
    {
        check_error(f.call(http::verb::put, path + "?benchmark=a%2Fb", "<html><script>x</script></html>",
                           "image/svg+xml"),
                    422, "artifact.bad_svg", "not an SVG document");
        check_error(f.call(http::verb::put, path + "?benchmark=a%2Fb", "<svg>\xff</svg>", "image/svg+xml"), 422,
                    "artifact.bad_svg", "not UTF-8");
        check_error(f.call(http::verb::put, path + "?benchmark=a%2Fb", svg, "text/html"), 415,
                    "http.unsupported_media_type", "send image/svg+xml");
        check_error(f.call(http::verb::put, path, svg, "image/svg+xml"), 400, "http.missing_param", "benchmark");
        check_error(f.call(http::verb::put, path + "?benchmark=b", svg, "image/svg+xml"), 422, "artifact.bad_benchmark",
                    "has no benchmark 'b'");
        check_error(f.call(http::verb::put, path + "?benchmark=has%20space", svg, "image/svg+xml"), 400,
                    "ingest.bad_field", "benchmark");
        check_error(f.call(http::verb::put, "/api/v1/projects/demo/comparisons/999/flame-graph?benchmark=a%2Fb", svg,
                           "image/svg+xml"),
                    404, "comparison.not_found", "no comparison 999");
        CHECK(f.call(http::verb::put, path + "?benchmark=a%2Fb", svg, "image/svg+xml", "").result_int() == 401);
        CHECK(f.call(http::verb::put, path + "?benchmark=a%2Fb", svg, "image/svg+xml", "other").result_int() == 403);
        check_error(f.call(http::verb::get, path + "?benchmark=a%2Fb"), 404, "artifact.not_found", "no flame graph");
        check_error(f.call(http::verb::post, path + "?benchmark=a%2Fb", svg, "image/svg+xml"), 405,
                    "http.method_not_allowed", "use GET, PUT");
    }
}

TEST_CASE("a comparison's attribution: PUT stores it, the comparison's report and page carry it, limits refuse")
{
    fixture f;
    const auto base = f.upload("baseline");
    const auto cand = f.upload("candidate");
    auto compared = f.call(http::verb::post, "/api/v1/projects/demo/compare",
                           json{{"baseline_run", base}, {"candidate_run", cand}}.dump());
    REQUIRE(compared.result_int() == 201);
    const auto id = json::parse(compared.body()).at("comparison_id").get<std::int64_t>();
    const std::string comparison = "/api/v1/projects/demo/comparisons/" + std::to_string(id);
    const std::string path = comparison + "/attribution";
    const json row = {{"name", "checksum(std::vector<int>)"},
                      {"file", "profile_vector.cpp"},
                      {"before", 0},
                      {"after", 4194360},
                      {"delta", 4194360},
                      {"share", 0.615}};
    const json attribution = {
        {"callgrind", {{"event", "Ir"}, {"total_before", 2613459}, {"total_after", 8384834}, {"top", {row}}}}};

    SUBCASE("stored, then in GET .../comparisons/{id} as JSON and markdown, and on the dashboard page")
    {
        auto put = f.call(http::verb::put, path + "?benchmark=default", attribution.dump());
        REQUIRE(put.result_int() == 201);
        CHECK(json::parse(put.body())["url"] == comparison);
        CHECK(perfgate::server::route_label(request{http::verb::put, path + "?benchmark=x", 11}) ==
              "PUT /api/v1/projects/{project}/comparisons/{id}/attribution");
        const auto got = json::parse(f.call(http::verb::get, comparison).body());
        REQUIRE(got["benchmarks"][0].contains("attribution"));
        CHECK(got["benchmarks"][0]["attribution"] == attribution);
        const auto md = f.call(http::verb::get, comparison + "?format=markdown").body();
        CHECK(md.find("perfgate") != std::string::npos);
        // Stored again: replaced.
        json smaller = attribution;
        smaller["callgrind"]["top"] = json::array();
        REQUIRE(f.call(http::verb::put, path + "?benchmark=default", smaller.dump()).result_int() == 201);
        CHECK(json::parse(f.call(http::verb::get, comparison).body())["benchmarks"][0]["attribution"] == smaller);
    }
    SUBCASE("refused: not JSON, not an attribution, too many rows, too large, unknown benchmark or comparison")
    {
        check_error(f.call(http::verb::put, path + "?benchmark=default", "{nope"), 422, "artifact.bad_attribution",
                    "not JSON");
        check_error(f.call(http::verb::put, path + "?benchmark=default", json{{"callgrind", {{"top", 1}}}}.dump()), 422,
                    "artifact.bad_attribution", "attribution");
        check_error(f.call(http::verb::put, path + "?benchmark=default", json::object().dump()), 422,
                    "artifact.bad_attribution", "empty");
        json many = attribution;
        many["callgrind"]["top"] = json::array();
        for (std::size_t i = 0; i <= perfgate::service::max_attribution_functions; ++i)
            many["callgrind"]["top"].push_back(row);
        check_error(f.call(http::verb::put, path + "?benchmark=default", many.dump()), 422, "artifact.bad_attribution",
                    "callgrind.top has 101 rows; this server keeps at most 100");
        json big = attribution;
        big["callgrind"]["top"][0]["name"] = std::string(perfgate::service::max_attribution_bytes, 'f');
        check_error(f.call(http::verb::put, path + "?benchmark=default", big.dump()), 413, "artifact.too_large",
                    "1024 KiB");
        check_error(f.call(http::verb::put, path + "?benchmark=other", attribution.dump()), 422,
                    "artifact.bad_benchmark", "has no benchmark 'other'");
        check_error(f.call(http::verb::put, "/api/v1/projects/demo/comparisons/999/attribution?benchmark=default",
                           attribution.dump()),
                    404, "comparison.not_found", "no comparison 999");
        check_error(f.call(http::verb::put, path + "?benchmark=default", attribution.dump(), "text/plain"), 415,
                    "http.unsupported_media_type", "send application/json");
        CHECK(f.call(http::verb::put, path + "?benchmark=default", attribution.dump(), "application/json", "other")
                  .result_int() == 403);
        CHECK_FALSE(json::parse(f.call(http::verb::get, comparison).body())["benchmarks"][0].contains("attribution"));
    }
}

TEST_CASE("status_for: refs the compare page cannot resolve are the client's to fix")
{
    using perfgate::server::status_for;
    CHECK(status_for("compare.bad_ref") == 400);
    CHECK(status_for("compare.ambiguous_ref") == 400);
    CHECK(status_for("compare.not_found") == 404);
    CHECK(status_for("compare.mismatch") == 422);
}

TEST_CASE("compare: baseline_ref is kept in the stored report, on the answer and on a later GET")
{
    fixture f;
    const auto base = f.upload("baseline");
    const auto cand = f.upload("candidate");
    const json ref = {{"rule", "merge-base"},
                      {"baseline_sha", std::string(40, 'a')},
                      {"base_tip_sha", std::string(40, 'b')},
                      {"head_sha", std::string(40, 'c')}};
    auto compared = f.call(http::verb::post, "/api/v1/projects/demo/compare",
                           json{{"pairs", {{base, cand}}}, {"baseline_ref", ref}}.dump());
    REQUIRE(compared.result_int() == 201);
    const json answer = json::parse(compared.body());
    CHECK(answer.at("baseline_ref") == ref);
    const auto id = answer.at("comparison_id").get<std::int64_t>();
    auto stored = f.call(http::verb::get, "/api/v1/projects/demo/comparisons/" + std::to_string(id));
    REQUIRE(stored.result_int() == 200);
    CHECK(json::parse(stored.body()).at("baseline_ref") == ref);
    auto md = f.call(http::verb::get, "/api/v1/projects/demo/comparisons/" + std::to_string(id) + "?format=markdown");
    CHECK(md.body().find("Head `ccccccc` vs baseline `aaaaaaa`, the **merge-base** (base tip `bbbbbbb`)") !=
          std::string::npos);
    // A null base tip (parent rule) is kept as null.
    const auto other = f.upload("baseline", "appended-10-runs.csv", "other");
    const auto other_cand = f.upload("candidate", "appended-10-runs.csv", "other");
    json parent = ref;
    parent["rule"] = "parent";
    parent["base_tip_sha"] = nullptr;
    auto second = f.call(http::verb::post, "/api/v1/projects/demo/compare",
                         json{{"pairs", {{other, other_cand}}}, {"baseline_ref", parent}}.dump());
    REQUIRE(second.result_int() == 201);
    CHECK(json::parse(second.body()).at("baseline_ref") == parent);
}

TEST_CASE("the route table: one token rule for the router and the header-stage gate")
{
    fixture f;
    for (const bool public_read : {false, true}) {
        f.ctx.public_read = public_read;
        for (const auto& row : perfgate::server::routes()) {
            if (row.hidden) continue;
            std::string path(row.path);
            for (const std::string_view seg : {std::string_view("{project}"), std::string_view("{id}")}) {
                if (const auto at = path.find(seg); at != std::string::npos)
                    path.replace(at, seg.size(), seg == "{project}" ? "demo" : "1");
            }
            INFO(row.label << (public_read ? " with --public-read" : ""));
            // The row's label is its method and path.
            CHECK(row.label == std::string(http::to_string(row.method)) + " " + std::string(row.path));
            const request anonymous = f.make_request(row.method, path, {}, {}, "");
            CHECK(perfgate::server::route_label(anonymous) == row.label);
            const bool needs = perfgate::server::needs_token(row, anonymous, f.ctx);
            CHECK(needs == (row.who == perfgate::server::access::upload || row.who == perfgate::server::access::admin ||
                            row.who == perfgate::server::access::baseline ||
                            (row.who == perfgate::server::access::read && !public_read)));
            // A token that is sent is checked, even where none is needed.
            const request with_header = f.make_request(row.method, path, {}, {}, "Bearer nope");
            CHECK(perfgate::server::needs_token(row, with_header, f.ctx) ==
                  (row.who != perfgate::server::access::open));
            // The gate refuses exactly what needs a token, with the router's answer.
            const auto refused = perfgate::server::refuse_before_body(anonymous, f.ctx);
            CHECK(refused.has_value() == needs);
            if (needs) {
                check_error(*refused, 401, "auth.missing_token", "");
                check_error(f.call(row.method, path, {}, {}, ""), 401, "auth.missing_token", "");
            } else {
                CHECK(f.call(row.method, path, {}, {}, "").result_int() != 401);
            }
            // Body rule: GETs take none.
            CHECK(perfgate::server::takes_body(anonymous) == (row.body != perfgate::server::body_rule::none));
        }
    }
}

// Issue 43: one rule decides each route's scope (needed_scope), and the
// header stage and the router refuse a token without it alike: 403
// auth.missing_scope naming the scope, before a body is read or a handler runs.
TEST_CASE("the route table: every route refuses a token without its scope, at the header and in the router")
{
    fixture f;
    using perfgate::model::scope;
    using perfgate::model::scope_set;
    const auto all_but = [](scope missing) {
        scope_set s;
        for (const scope each : {scope::read, scope::upload, scope::baseline, scope::admin}) {
            // baseline grants upload: leave it out too when upload is missing.
            if (each != missing && !(missing == scope::upload && each == scope::baseline)) s.add(each);
        }
        return s;
    };
    for (const bool public_read : {false, true}) {
        f.ctx.public_read = public_read;
        for (const auto& row : perfgate::server::routes()) {
            if (row.hidden) continue;
            std::string path(row.path);
            for (const std::string_view seg : {std::string_view("{project}"), std::string_view("{id}")}) {
                if (const auto at = path.find(seg); at != std::string::npos)
                    path.replace(at, seg.size(), seg == "{project}" ? "demo" : "1");
            }
            INFO(row.label << (public_read ? " with --public-read" : ""));
            const auto needed = perfgate::server::needed_scope(row, f.ctx);
            using perfgate::server::access;
            CHECK(needed == (row.who == access::open       ? std::nullopt
                             : row.who == access::read     ? (public_read ? std::nullopt : std::optional(scope::read))
                             : row.who == access::upload   ? std::optional(scope::upload)
                             : row.who == access::baseline ? std::optional(scope::baseline)
                                                           : std::optional(scope::admin)));
            if (!needed) continue;
            const std::string token = f.db.tokens().create("demo", "scoped", std::nullopt, all_but(*needed));
            const request req = f.make_request(row.method, path, {}, {}, "Bearer " + token);
            const auto refused = perfgate::server::refuse_before_body(req, f.ctx);
            REQUIRE(refused.has_value());
            const std::string scope_name(perfgate::model::to_string(*needed));
            check_error(*refused, 403, "auth.missing_scope", "with scope '" + scope_name + "'");
            check_error(f.call(row.method, path, {}, {}, "Bearer " + token), 403, "auth.missing_scope",
                        "with scope '" + scope_name + "'");
            // With the scope alone the token passes the gate.
            scope_set only;
            only.add(*needed);
            const std::string enough = f.db.tokens().create("demo", "enough", std::nullopt, only);
            CHECK_FALSE(perfgate::server::refuse_before_body(
                f.make_request(row.method, path, {}, {}, "Bearer " + enough), f.ctx));
        }
    }
    // baseline grants upload, legacy everything.
    CHECK(scope_set::parse("baseline")->grants(scope::upload));
    CHECK_FALSE(scope_set::parse("upload")->grants(scope::baseline));
    CHECK(scope_set::legacy().grants(scope::admin));
    CHECK(scope_set::parse("upload,read")->to_string() == "read,upload");
    CHECK_FALSE(scope_set::parse("read,"));
    CHECK_FALSE(scope_set::parse("Read"));
}

TEST_CASE("the route table: docs/http-api.md's route list names every route, and only those")
{
    std::ifstream in(std::string(PERFGATE_SOURCE_DIR) + "/docs/http-api.md");
    REQUIRE(in);
    std::set<std::string> documented;
    std::string line;
    bool in_routes = false;
    while (std::getline(in, line)) {
        if (line.starts_with("## ")) in_routes = line == "## Routes";
        if (!in_routes || !line.starts_with("| `")) continue;
        const auto end = line.find('`', 3);
        const std::string cell = line.substr(3, end - 3);
        if (cell.find(' ') != std::string::npos && cell.find('/') != std::string::npos) documented.insert(cell);
    }
    std::set<std::string> table;
    for (const auto& row : perfgate::server::routes()) {
        if (!row.hidden) table.insert(std::string(row.label));
    }
    CHECK(documented == table);
}

// Issue 46: a qualification is stored by a baseline token only (a pull
// request's upload token must not vouch for its runner), bad bodies are 400
// naming the field with nothing stored, and GET answers the newest per
// testbed and benchmark.
TEST_CASE("qualifications: POST needs scope baseline, refuses bad bodies by field, GET answers the newest")
{
    fixture f;
    using perfgate::model::scope;
    using perfgate::model::scope_set;
    const std::string upload = f.db.tokens().create("demo", "pr", std::nullopt, scope_set().add(scope::upload));
    const std::string baseline = f.db.tokens().create("demo", "main", std::nullopt,
                                                      scope_set().add(scope::baseline).add(scope::read));
    const std::string path = "/api/v1/projects/demo/qualifications";
    auto body = [](const std::string& fingerprint, const std::string& date, double detects) {
        return json{{"testbed_fingerprint", fingerprint},
                    {"testbed", "ci-runner"},
                    {"benchmark", "parse"},
                    {"backend", "rusage"},
                    {"date", date},
                    {"counters", json::array({json{{"counter", "task-clock"},
                                                   {"threshold_pct", 5},
                                                   {"detects_80_pct", detects},
                                                   {"detects_95_pct", nullptr},
                                                   {"reaches_threshold", true},
                                                   {"deterministic", false}}})}};
    };
    const auto good = body("fp1", "2026-11-28T16:05:00Z", 10).dump();
    check_error(f.call(http::verb::post, path, good, "application/json", "Bearer " + upload), 403, "auth.missing_scope",
                "with scope 'baseline'");
    auto stored = f.call(http::verb::post, path, good, "application/json", "Bearer " + baseline);
    REQUIRE(stored.result_int() == 201);
    const json first = json::parse(stored.body());
    CHECK(first.at("qualified_at") == 1'795'881'900);
    CHECK(first.at("date") == "2026-11-28T16:05:00Z");
    CHECK(first.at("written_by").at("name") == "main");
    REQUIRE(f.call(http::verb::post, path, body("fp1", "2026-11-29T08:00:00Z", 7.5).dump(), "application/json",
                   "Bearer " + baseline)
                .result_int() == 201);
    REQUIRE(f.call(http::verb::post, path, body("fp2", "2026-11-27T08:00:00Z", 20).dump(), "application/json",
                   "Bearer " + baseline)
                .result_int() == 201);

    // Bad bodies: 400 naming the field.
    auto refused = [&](json doc, const std::string& field) {
        check_error(f.call(http::verb::post, path, doc.dump(), "application/json", "Bearer " + baseline), 400,
                    "ingest.bad_field", field);
    };
    auto b = body("fp1", "2026-11-28T16:05:00Z", 10);
    b.erase("benchmark");
    refused(b, "'benchmark' is required");
    b = body("fp1", "2026-11-28T16:05:00Z", 10);
    b["date"] = "yesterday";
    refused(b, "'date'");
    b = body("fp1", "2026-11-28T16:05:00Z", 10);
    b["counters"][0]["threshold_pct"] = "5";
    refused(b, "'counters[0].threshold_pct' must be a number");
    b = body("fp1", "2026-11-28T16:05:00Z", 10);
    b["counters"][0]["threshold_pct"] = -1;
    refused(b, "counters[0].threshold_pct");
    b = body("fp1", "2026-11-28T16:05:00Z", 10);
    b["counters"][0]["power"] = 1;
    refused(b, "unknown field 'counters[0].power'");
    b = body("fp1", "2026-11-28T16:05:00Z", 10);
    b["counters"] = json::array();
    refused(b, "counters");
    b = body("fp1", "2026-11-28T16:05:00Z", 10);
    const json one = b["counters"][0];
    for (int i = 0; i < 64; ++i) b["counters"].push_back(one);
    refused(b, "expected 1 to 64 counters, got 65");
    b = body("", "2026-11-28T16:05:00Z", 10);
    refused(b, "testbed_fingerprint");
    check_error(f.call(http::verb::post, path, "{", "application/json", "Bearer " + baseline), 400, "http.bad_json",
                "");
    check_error(f.call(http::verb::post, path, good, "text/plain", "Bearer " + baseline), 415,
                "http.unsupported_media_type", "");

    // GET: the newest of each testbed and benchmark, newest first; the
    // refused bodies stored nothing.
    auto got = f.call(http::verb::get, path + "?benchmark=parse", {}, {}, "Bearer " + baseline);
    REQUIRE(got.result_int() == 200);
    const json list = json::parse(got.body()).at("qualifications");
    REQUIRE(list.size() == 2);
    CHECK(list[0].at("testbed_fingerprint") == "fp2"); // stored last
    CHECK(list[1].at("testbed_fingerprint") == "fp1");
    CHECK(list[1].at("counters")[0].at("detects_80_pct") == 7.5);
    const json only = json::parse(f.call(http::verb::get, path + "?testbed=fp1").body()).at("qualifications");
    REQUIRE(only.size() == 1);
    CHECK(only[0].at("date") == "2026-11-29T08:00:00Z");
    CHECK(json::parse(f.call(http::verb::get, path + "?testbed=fp9").body()).at("qualifications").empty());
    check_error(f.call(http::verb::get, path + "?counter=x"), 400, "http.bad_param", "counter");
    check_error(f.call(http::verb::get, path, {}, {}, "other"), 403, "auth.forbidden", "");
}

TEST_CASE("GET /api/v1/openapi.json serves the committed document without a token")
{
    fixture f;
    const auto res = f.call(http::verb::get, "/api/v1/openapi.json", {}, {}, "");
    REQUIRE(res.result_int() == 200);
    CHECK(res[http::field::content_type] == "application/json");
    CHECK(res.body() == perfgate::server::openapi_text());
    const json doc = json::parse(res.body());
    CHECK(doc.at("openapi") == "3.1.0");
    // Every visible route is an operation, with its access rule.
    for (const auto& row : perfgate::server::routes()) {
        INFO(row.label);
        std::string method(http::to_string(row.method));
        std::transform(method.begin(), method.end(), method.begin(), [](unsigned char c) { return std::tolower(c); });
        std::string escaped; // RFC 6901: '~' -> "~0", '/' -> "~1"
        for (const char c : row.path)
            escaped += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
        const auto path = json::json_pointer("/paths/" + escaped);
        CHECK(doc.contains(path) != row.hidden);
        if (row.hidden) continue;
        const json& op = doc.at(path).at(method);
        CHECK(op.at("summary") == row.summary);
        CHECK(op.at("responses").contains("4XX"));
    }
    // A wrong method is 405 naming the one allowed.
    check_error(f.call(http::verb::post, "/api/v1/openapi.json", "{}", "application/json", ""), 405,
                "http.method_not_allowed", "use GET");
}

namespace {

// An alert of project demo on a series of uploaded runs (the store's own
// detection entry point: no watch thread to wait for).
std::int64_t open_alert(fixture& f)
{
    std::vector<std::int64_t> runs;
    for (int i = 0; i < 4; ++i) runs.push_back(f.upload("baseline"));
    perfgate::store::series_detection d;
    d.series = {"default", "task-clock", f.db.runs().load("demo", runs[0])->testbed.fingerprint, "main"};
    d.tail = runs;
    perfgate::store::detected_change change;
    change.record.run_id = runs[2];
    change.record.mean_before = 4.5;
    change.record.mean_after = 5.0;
    change.record.median_before = 4.5;
    change.record.median_after = 5.0;
    change.record.delta_pct = 11.1;
    change.worse = true;
    d.found = {change};
    const auto opened = f.db.alerts().apply_detection("demo", {d});
    REQUIRE(opened.size() == 1);
    return opened[0];
}

json culprit_body()
{
    return json{{"status", "found"},
                {"backend", "callgrind"},
                {"counter", "instructions"},
                {"good", std::string(40, 'a')},
                {"bad", std::string(40, 'b')},
                {"commits", 64},
                {"steps", 6},
                {"builds", 8},
                {"culprits", json::array({{{"sha", std::string(40, 'c')},
                                           {"subject", "parse: copy the buffer"},
                                           {"author", "Ana <ana@example.com>"},
                                           {"share", 1.0},
                                           {"effects", json::array({{{"counter", "instructions"},
                                                                     {"unit", ""},
                                                                     {"status", "regression"},
                                                                     {"before", 2.53e6},
                                                                     {"after", 2.62e6},
                                                                     {"delta_pct", 3.79},
                                                                     {"ci_pct", {3.79, 3.79}}}})}}})},
                {"detail", ""}};
}

} // namespace

TEST_CASE("an alert's culprit: PUT stores it with an admin token, GET answers it, bad bodies store nothing")
{
    fixture f;
    const auto id = open_alert(f);
    const std::string path = fmt::format("/api/v1/projects/demo/alerts/{}", id);
    CHECK(json::parse(f.call(http::verb::get, path).body()).at("culprit").is_null());

    using perfgate::model::scope;
    using perfgate::model::scope_set;
    const auto token_with = [&](std::string_view scopes) {
        std::string label(scopes);
        std::replace(label.begin(), label.end(), ',', '-');
        return "Bearer " + f.db.tokens().create("demo", label, std::nullopt, *scope_set::parse(scopes));
    };
    // Who may write: admin only; a pull request's token (upload, read) may not.
    for (const std::string_view scopes : {"read", "upload,read", "baseline,read"}) {
        INFO(scopes);
        check_error(f.call(http::verb::put, path + "/culprit", culprit_body().dump(), "application/json",
                           token_with(scopes)),
                    403, "auth.missing_scope", "with scope 'admin'");
    }
    const std::string admin = token_with("admin");
    const auto stored = f.call(http::verb::put, path + "/culprit", culprit_body().dump(), "application/json", admin);
    REQUIRE(stored.result_int() == 200);
    const json answer = json::parse(stored.body());
    CHECK(answer.at("id") == id);
    const json& k = answer.at("culprit");
    CHECK(k.at("status") == "found");
    CHECK(k.at("culprits").at(0).at("sha") == std::string(40, 'c'));
    CHECK(k.at("culprits").at(0).at("effects").at(0).at("ci_pct") == json::array({3.79, 3.79}));
    CHECK(k.at("written_by").at("name") == "admin");
    CHECK(k.at("stored_at").get<std::int64_t>() > 0);
    // GET (one alert and the list) carries it.
    CHECK(json::parse(f.call(http::verb::get, path).body()).at("culprit") == k);
    CHECK(
        json::parse(f.call(http::verb::get, "/api/v1/projects/demo/alerts").body()).at("alerts").at(0).at("culprit") ==
        k);

    SUBCASE("bad bodies: 400 naming the field, the stored culprit unchanged")
    {
        const std::pair<std::function<void(json&)>, std::string> cases[] = {
            {[](json& b) { b.erase("status"); }, "field 'status' is required"},
            {[](json& b) { b["status"] = "maybe"; }, "field 'status': 'maybe' is not"},
            {[](json& b) { b["stauts"] = "found"; }, "unknown field 'stauts'"},
            {[](json& b) { b["good"] = "main"; }, "field 'good': 'main' is not a commit id"},
            {[](json& b) { b["commits"] = -1; }, "field 'commits' must be an integer at least 0"},
            {[](json& b) { b["culprits"] = json::array(); }, "status 'found' names at least one culprit"},
            {[](json& b) { b["culprits"][0]["sha"] = std::string(40, 'C'); }, "field 'culprits[0].sha'"},
            {[](json& b) { b["culprits"][0]["subject"] = "two\nlines"; }, "field 'culprits[0].subject'"},
            {[](json& b) { b["culprits"][0]["subject"] = std::string(301, 'x'); },
             "field 'culprits[0].subject': 301 bytes; at most 300"},
            {[](json& b) { b["culprits"][0]["share"] = "all"; }, "field 'culprits[0].share' must be a number"},
            {[](json& b) { b["culprits"][0]["effects"][0]["ci_pct"] = json::array({1}); },
             "field 'culprits[0].effects[0].ci_pct' must be [lower, upper]"},
            {[](json& b) { b["culprits"][0]["effects"][0]["colour"] = 1; },
             "unknown field 'culprits[0].effects[0].colour'"},
            {[](json& b) { b["detail"] = std::string(2001, 'x'); }, "field 'detail': 2001 bytes; at most 2000"},
            {[](json& b) { b["status"] = "no_change"; }, "status 'no_change' has no culprit"},
            {[](json& b) {
                 for (int i = 0; i < 16; ++i) b["culprits"].push_back(b["culprits"][0]);
             },
             "field 'culprits': 17 culprits; at most 16"},
            {[](json& b) {
                 auto& effects = b["culprits"][0]["effects"];
                 for (int i = 0; i < 64; ++i) effects.push_back(effects[0]);
             },
             "field 'culprits[0].effects': 65 effects; at most 64"},
        };
        for (const auto& c : cases) {
            // Named copies: clang 14 cannot capture a structured binding in INFO.
            const auto& mutate = c.first;
            const auto& message = c.second;
            json body = culprit_body();
            mutate(body);
            INFO(message);
            check_error(f.call(http::verb::put, path + "/culprit", body.dump(), "application/json", admin), 400,
                        "ingest.bad_field", message);
        }
        CHECK(json::parse(f.call(http::verb::get, path).body()).at("culprit") == k);
    }
    SUBCASE("at and beyond the body limit")
    {
        // Exactly the limit: read and judged (here: a detail too long);
        // one byte more: 413 before it is parsed.
        json body = culprit_body();
        body["detail"] = "";
        const std::size_t base = body.dump().size();
        body["detail"] = std::string(perfgate::api::max_culprit_body_bytes - base, 'x');
        REQUIRE(body.dump().size() == perfgate::api::max_culprit_body_bytes);
        check_error(f.call(http::verb::put, path + "/culprit", body.dump(), "application/json", admin), 400,
                    "ingest.bad_field", "field 'detail'");
        body["detail"] = std::string(perfgate::api::max_culprit_body_bytes - base + 1, 'x');
        check_error(f.call(http::verb::put, path + "/culprit", body.dump(), "application/json", admin), 413,
                    "http.body_too_large", "larger than the limit of 524288 bytes");
        CHECK(json::parse(f.call(http::verb::get, path).body()).at("culprit") == k);
    }
    SUBCASE("an unknown alert is 404, another project's alert too; a bad id 400; not JSON 415")
    {
        check_error(f.call(http::verb::put, fmt::format("/api/v1/projects/demo/alerts/{}/culprit", id + 1000),
                           culprit_body().dump(), "application/json", admin),
                    404, "alert.not_found", "has no alert");
        check_error(f.call(http::verb::put, fmt::format("/api/v1/projects/other/alerts/{}/culprit", id),
                           culprit_body().dump(), "application/json", "other"),
                    404, "alert.not_found", "has no alert");
        check_error(f.call(http::verb::put, "/api/v1/projects/demo/alerts/x/culprit", culprit_body().dump(),
                           "application/json", admin),
                    400, "http.bad_param", "alert id");
        check_error(f.call(http::verb::put, path + "/culprit", culprit_body().dump(), "text/plain", admin), 415,
                    "http.unsupported_media_type", "application/json");
    }
    SUBCASE("an undecided bisection replaces it, honestly: no culprit, the range left in detail")
    {
        json body = culprit_body();
        body["status"] = "undecided";
        body["culprits"] = json::array();
        body["detail"] = "undecided: after aaaaaaaaaaaa up to bbbbbbbbbbbb (3 commits)";
        const auto res = f.call(http::verb::put, path + "/culprit", body.dump(), "application/json", admin);
        REQUIRE(res.result_int() == 200);
        const json got = json::parse(res.body()).at("culprit");
        CHECK(got.at("status") == "undecided");
        CHECK(got.at("culprits").empty());
        CHECK(got.at("detail") == body["detail"]);
    }
}
