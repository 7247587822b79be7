// Issue 31, finding 4: a project's tokens are listed without their secrets,
// revoked by id or by the token, and expire; a dashboard session re-checks
// the token it was made with, so revoking (or expiry) ends it. Real
// processes: `perfgate token`, `perfgate serve`, requests over sockets; on
// SQLite and on PostgreSQL.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/database.hpp"
#include "support/numbers.hpp"
#include "support/process.hpp"
#include "support/server.hpp"

namespace {

using namespace perfgate::test;
using namespace std::chrono_literals;

std::string first_line(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// GET target with the session cookie: the status line's code.
int get_with_cookie(unsigned short port, const std::string& target, const std::string& cookie)
{
    const std::string answer = raw_exchange(
        port, fmt::format("GET {} HTTP/1.1\r\nHost: x\r\nCookie: {}\r\nConnection: close\r\n\r\n", target, cookie));
    REQUIRE(answer.size() > 12);
    return std::stoi(answer.substr(9, 3));
}

std::string sign_in(unsigned short port, const std::string& token)
{
    const auto signin = send(port, http::verb::post, "/p/demo/signin", "token=" + token,
                             "application/x-www-form-urlencoded");
    REQUIRE(signin.status == 303);
    const std::string set_cookie(signin.raw[http::field::set_cookie]);
    return set_cookie.substr(0, set_cookie.find(';'));
}

void token_lifecycle(db_engine engine)
{
    test_database where(engine);
    const std::string db = where.location();
    const std::string ci = create_token(db, "demo");
    const auto made = run_perfgate(
        {"token", "create", "--db", db, "--project", "demo", "--label", "dashboard", "--expires", "30d"}, {}, {}, 60s);
    INFO("stderr: " << made.err);
    REQUIRE(made.code == 0);
    const std::string dash = first_line(made.out);
    CHECK(made.err.find("expiring 20") != std::string::npos);
    const std::string other = create_token(db, "other");

    // list: id, label, created, last used, expires; never a secret or its hash.
    const auto list = [&] {
        const auto r = run_perfgate({"token", "list", "--db", db, "--project", "demo"}, {}, {}, 60s);
        INFO("stderr: " << r.err);
        REQUIRE(r.code == 0);
        return lines_of(r.out);
    };
    auto listed = list();
    REQUIRE(listed.size() == 3);
    CHECK(listed[0] == "id\tlabel\tcreated\tlast_used\texpires\tscopes");
    CHECK(listed[1].find("\tdefault\t") != std::string::npos);
    CHECK(listed[1].ends_with("\tnever\tnever\tread,upload,baseline,admin")); // no --scope: all four
    CHECK(listed[2].find("\tdashboard\t") != std::string::npos);
    CHECK(listed[2].find("\tnever\t20") != std::string::npos); // not used yet, expires in 30 days
    for (const auto& hash : where.rows("SELECT sha256 FROM api_tokens")) {
        for (const auto& line : listed) CHECK(line.find(hash) == std::string::npos);
    }
    for (const auto& line : listed) {
        CHECK(line.find(ci.substr(3)) == std::string::npos);
        CHECK(line.find(dash.substr(3)) == std::string::npos);
    }
    const std::string dash_id = listed[2].substr(0, listed[2].find('\t'));
    const std::string ci_id = listed[1].substr(0, listed[1].find('\t'));

    temp_dir dir("perfgate-tokens");
    server_process srv(db, dir.path() / "server.log");
    const std::string api = "/api/v1/projects/demo/comparisons";
    const std::string cookie = sign_in(srv.port(), dash);
    CHECK(get_with_cookie(srv.port(), "/p/demo", cookie) == 200);
    CHECK(send(srv.port(), http::verb::get, api, {}, {}, dash).status == 200);
    CHECK(list()[2].find("\tnever\t") == std::string::npos); // last used: now

    SUBCASE("revoking by the token ends its dashboard session and its API access, not the others'")
    {
        const auto r = run_perfgate({"token", "revoke", "--db", db, "--project", "demo", dash}, {}, {}, 60s);
        INFO("stderr: " << r.err);
        CHECK(r.code == 0);
        CHECK(r.err.find(dash) == std::string::npos);
        CHECK(get_with_cookie(srv.port(), "/p/demo", cookie) == 303); // back to the sign-in page
        check_error(send(srv.port(), http::verb::get, api, {}, {}, dash), 401, "auth.bad_token");
        CHECK(send(srv.port(), http::verb::get, api, {}, {}, ci).status == 200);
        const auto sign_again = send(srv.port(), http::verb::post, "/p/demo/signin", "token=" + dash,
                                     "application/x-www-form-urlencoded");
        CHECK(sign_again.status == 401);
        CHECK(list().size() == 2);
    }
    SUBCASE("revoking by id; an unknown id, another project's token or a token twice is exit 2 token.not_found")
    {
        CHECK(run_perfgate({"token", "revoke", "--db", db, "--project", "demo", ci_id}, {}, {}, 60s).code == 0);
        check_error(send(srv.port(), http::verb::get, api, {}, {}, ci), 401, "auth.bad_token");
        for (const std::string& bad : {ci_id, std::string("999999"), std::string("x1"), other, ci}) {
            const auto r = run_perfgate({"token", "revoke", "--db", db, "--project", "demo", bad}, {}, {}, 60s);
            INFO(bad << ": " << r.err);
            CHECK(r.code == 2);
            CHECK(r.err.find("token.not_found") != std::string::npos);
            CHECK(r.err.find(other.substr(3)) == std::string::npos); // a secret is never echoed
        }
        CHECK(get_with_cookie(srv.port(), "/p/demo", cookie) == 200); // the dashboard token's session lives on
        CHECK(send(srv.port(), http::verb::get, "/api/v1/projects/other/comparisons", {}, {}, other).status == 200);
    }
    SUBCASE("an expired token opens nothing, and its session ends")
    {
        where.rows("UPDATE api_tokens SET expires_at = 1 WHERE id = " + dash_id);
        CHECK(get_with_cookie(srv.port(), "/p/demo", cookie) == 303);
        check_error(send(srv.port(), http::verb::get, api, {}, {}, dash), 401, "auth.bad_token");
        CHECK(list()[2].find("(expired)") != std::string::npos);
    }
    SUBCASE("--expires in the past or malformed, and --label on list, are exit 2 naming the option")
    {
        for (const std::string& bad : {std::string("2001-01-01"), std::string("0d"), std::string("soon"),
                                       std::string("2027-02-31"), std::string("5y")}) {
            const auto r = run_perfgate({"token", "create", "--db", db, "--project", "demo", "--expires", bad}, {}, {},
                                        60s);
            INFO(bad << ": " << r.err);
            CHECK(r.code == 2);
            CHECK(r.err.find("--expires") != std::string::npos);
        }
        const auto r = run_perfgate({"token", "list", "--db", db, "--project", "demo", "--label", "x"}, {}, {}, 60s);
        CHECK(r.code == 2);
        CHECK(list().size() == 3);
    }
}

// perfgate token create --scope LIST on db: the token.
std::string scoped_token(const std::string& db, const std::string& label, const std::string& scopes)
{
    const auto r = run_perfgate(
        {"token", "create", "--db", db, "--project", "demo", "--label", label, "--scope", scopes}, {}, {}, 60s);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.find("with scopes " + scopes) != std::string::npos);
    CHECK(r.err.find("warning") == std::string::npos);
    return first_line(r.out);
}

// An upload of the bundled capture as a callgrind run of `sha` on main,
// asking to feed the main line: the answer.
reply upload(unsigned short port, const std::string& token, const std::string& sha,
             const std::string& role = "baseline")
{
    const nlohmann::json body = {{"benchmark", "parse"},
                                 {"role", role},
                                 {"git_sha", sha},
                                 {"branch", "main"},
                                 {"backend", "callgrind"},
                                 {"toolchain", "gcc-12 -O2"},
                                 {"mainline", role == "baseline"},
                                 {"testbed", {{"name", "ci-box"}, {"cores", 2}, {"fingerprint", "box-1"}}},
                                 {"perf_csv", read_testdata("appended-10-runs.csv")}};
    return send(port, http::verb::post, "/api/v1/projects/demo/runs", body.dump(), "application/json", token);
}

// The 403 of a token without the route's scope: the id, and a message
// naming the scope the route needs.
void check_scope_refusal(const reply& r, const std::string& scope)
{
    check_error(r, 403, "auth.missing_scope");
    CHECK(r.error().at("message").get<std::string>().find("with scope '" + scope + "'") != std::string::npos);
}

// Issue 43, finding 2 (the scope half) and 10: each route class refuses a
// token without its scope (403 auth.missing_scope naming it), an upload
// token never writes the main line nor a reusable baseline, every run and
// acceptance says which token wrote it, a dashboard session does what its
// token's scopes allow, and a token made before scopes keeps every power.
void token_scopes(db_engine engine)
{
    test_database where(engine);
    const std::string db = where.location();
    const std::string reader = scoped_token(db, "reader", "read");
    const std::string pr = scoped_token(db, "pr-ci", "read,upload");
    const std::string push = scoped_token(db, "push-ci", "read,baseline");
    const std::string admin = scoped_token(db, "maintainers", "admin");
    // A token from before scopes: what 019_token_scopes.sql leaves (no list).
    const std::string legacy = create_token(db, "demo");
    where.rows("UPDATE api_tokens SET scopes = NULL WHERE name = 'default'");
    const auto pr_id = where.integer("SELECT id FROM api_tokens WHERE name = 'pr-ci'");
    const auto push_id = where.integer("SELECT id FROM api_tokens WHERE name = 'push-ci'");

    temp_dir dir("perfgate-scopes");
    server_process srv(db, dir.path() / "server.log");
    const auto port = srv.port();
    const std::string base_sha = "1111111111111111111111111111111111111111";
    const std::string fake_sha = "2222222222222222222222222222222222222222";

    // upload routes: upload or baseline.
    check_scope_refusal(upload(port, reader, base_sha), "upload");
    check_scope_refusal(upload(port, admin, base_sha), "upload");
    const auto by_push = upload(port, push, base_sha);
    REQUIRE(by_push.status == 201);
    CHECK(by_push.parsed().at("warnings").empty());
    // The pull request's job uploads "main at fake_sha" asking for the main
    // line (the issue's poisoning): stored, but never as the main line's.
    const auto by_pr = upload(port, pr, fake_sha);
    REQUIRE(by_pr.status == 201);
    CHECK(by_pr.parsed().at("warnings").dump().find("cannot feed the main line") != std::string::npos);
    const auto push_run = by_push.parsed().at("run_id").get<long long>();
    const auto pr_run = by_pr.parsed().at("run_id").get<long long>();
    CHECK(where.one(fmt::format("SELECT mainline, token_id, token_name FROM runs WHERE id = {}", push_run)) ==
          fmt::format("1|{}|push-ci", push_id));
    CHECK(where.one(fmt::format("SELECT mainline, token_id, token_name FROM runs WHERE id = {}", pr_run)) ==
          fmt::format("0|{}|pr-ci", pr_id));

    // Baseline reuse reads only the push token's run, and says who wrote it.
    const auto reusable = [&](const std::string& sha) {
        const auto r = send(port, http::verb::get,
                            "/api/v1/projects/demo/baseline-run?benchmark=parse&branch=main&testbed=box-1"
                            "&backend=callgrind&toolchain=gcc-12%20-O2&git_sha=" +
                                sha,
                            {}, {}, reader);
        REQUIRE(r.status == 200);
        return r.parsed().at("run");
    };
    CHECK(reusable(fake_sha).is_null());
    const auto reused = reusable(base_sha);
    REQUIRE_FALSE(reused.is_null());
    CHECK(reused.at("run_id") == push_run);
    CHECK(reused.at("written_by") == nlohmann::json{{"id", push_id}, {"name", "push-ci"}});
    // Nor does the pull request's run reach the main line's history.
    const auto history = send(port, http::verb::get, "/api/v1/projects/demo/history?benchmark=parse&counter=task-clock",
                              {}, {}, reader);
    REQUIRE(history.status == 200);
    CHECK(history.body.find(base_sha) != std::string::npos);
    CHECK(history.body.find(fake_sha) == std::string::npos);

    // read routes: read (the admin-only and upload-only tokens may not).
    const std::string comparisons = "/api/v1/projects/demo/comparisons";
    CHECK(send(port, http::verb::get, comparisons, {}, {}, reader).status == 200);
    check_scope_refusal(send(port, http::verb::get, comparisons, {}, {}, admin), "read");
    const std::string upload_only = scoped_token(db, "uploader", "upload");
    check_scope_refusal(send(port, http::verb::get, comparisons, {}, {}, upload_only), "read");

    // A comparison by the pull request's token: an upload route.
    const auto head = upload(port, pr, "3333333333333333333333333333333333333333", "candidate");
    REQUIRE(head.status == 201);
    const nlohmann::json pair = {{"baseline_run", push_run}, {"candidate_run", head.parsed().at("run_id")}};
    check_scope_refusal(send(port, http::verb::post, "/api/v1/projects/demo/compare", pair.dump(), "application/json",
                             reader),
                        "upload");
    const auto compared = send(port, http::verb::post, "/api/v1/projects/demo/compare", pair.dump(), "application/json",
                               pr);
    REQUIRE(compared.status == 201);
    const auto comparison = compared.parsed().at("comparison_id").get<long long>();

    // admin routes: webhooks, acceptances (finding 10: a CI token cannot
    // speak for a maintainer, and the acceptance records its token).
    const std::string webhooks = "/api/v1/projects/demo/webhooks";
    check_scope_refusal(send(port, http::verb::get, webhooks, {}, {}, pr), "admin");
    check_scope_refusal(send(port, http::verb::get, webhooks, {}, {}, push), "admin");
    CHECK(send(port, http::verb::get, webhooks, {}, {}, admin).status == 200);
    const nlohmann::json accept = {{"head_sha", "3333333333333333333333333333333333333333"},
                                   {"login", "maintainer"},
                                   {"reason", "known cost"}};
    const std::string acceptances = "/api/v1/projects/demo/acceptances";
    check_scope_refusal(send(port, http::verb::post, acceptances, accept.dump(), "application/json", pr), "admin");
    CHECK(where.integer("SELECT count(*) FROM acceptances") == 0);
    const auto accepted = send(port, http::verb::post, acceptances, accept.dump(), "application/json", admin);
    REQUIRE(accepted.status == 201);
    const auto admin_id = where.integer("SELECT id FROM api_tokens WHERE name = 'maintainers'");
    CHECK(accepted.parsed().at("written_by") == nlohmann::json{{"id", admin_id}, {"name", "maintainers"}});
    const auto stored = send(port, http::verb::get, comparisons + "/" + std::to_string(comparison), {}, {}, reader);
    REQUIRE(stored.status == 200);
    CHECK(stored.parsed().at("acceptance").at("written_by").at("name") == "maintainers");
    check_scope_refusal(send(port, http::verb::patch, "/api/v1/projects/demo/alerts/1", R"({"status":"ignored"})",
                             "application/json", push),
                        "admin");

    // open routes: no token at all.
    CHECK(send(port, http::verb::get, "/healthz").status == 200);

    // The legacy token keeps every power.
    CHECK(upload(port, legacy, "4444444444444444444444444444444444444444").status == 201);
    CHECK(send(port, http::verb::get, webhooks, {}, {}, legacy).status == 200);
    CHECK(send(port, http::verb::get, comparisons, {}, {}, legacy).status == 200);
    const auto listed = run_perfgate({"token", "list", "--db", db, "--project", "demo"}, {}, {}, 60s);
    REQUIRE(listed.code == 0);
    CHECK(listed.out.find("\tdefault\t") != std::string::npos);
    CHECK(listed.out.find("\tlegacy(all)\n") != std::string::npos);
    CHECK(listed.out.find("\tread,upload\n") != std::string::npos);
    CHECK(listed.err.find("1 token(s) predate scopes and keep every power") != std::string::npos);

    // Dashboard sessions carry their token's scopes; the comparison page
    // says which token stored each side and the acceptance.
    const std::string page = "/p/demo/comparisons/" + std::to_string(comparison);
    const std::string pr_cookie = sign_in(port, pr);
    const std::string page_body = raw_exchange(
        port, fmt::format("GET {} HTTP/1.1\r\nHost: x\r\nCookie: {}\r\nConnection: close\r\n\r\n", page, pr_cookie));
    CHECK(page_body.substr(9, 3) == "200");
    CHECK(page_body.find(fmt::format("base stored by token &#39;push-ci&#39; (#{}) (main line)", push_id)) !=
          std::string::npos);
    CHECK(page_body.find(fmt::format("head stored by token &#39;pr-ci&#39; (#{})", pr_id)) != std::string::npos);
    CHECK(page_body.find(fmt::format("(recorded by token &#39;maintainers&#39; (#{}))", admin_id)) !=
          std::string::npos);
    const std::string run_page = raw_exchange(
        port, fmt::format("GET /p/demo/runs/{} HTTP/1.1\r\nHost: x\r\nCookie: {}\r\nConnection: close\r\n\r\n", pr_run,
                          pr_cookie));
    CHECK(run_page.find(fmt::format("id=\"written-by\">token &#39;pr-ci&#39; (#{})</td></tr><tr><th>main line</th>"
                                    "<td>no</td>",
                                    pr_id)) != std::string::npos);
    CHECK(get_with_cookie(port, "/p/demo/compare?base=" + base_sha.substr(0, 12) + "&head=333333333333", pr_cookie) ==
          303);
    const std::string admin_cookie = sign_in(port, admin);
    CHECK(get_with_cookie(port, "/p/demo", admin_cookie) == 403);
    const std::string reader_cookie = sign_in(port, reader);
    CHECK(get_with_cookie(port, "/p/demo", reader_cookie) == 200);
    CHECK(get_with_cookie(port, "/p/demo/compare?base=" + base_sha.substr(0, 12) + "&head=333333333333",
                          reader_cookie) == 403);

    // --scope is checked.
    for (const std::string& bad : {std::string("write"), std::string("read,read"), std::string(""),
                                   std::string("read, upload"), std::string("legacy")}) {
        const auto r = run_perfgate({"token", "create", "--db", db, "--project", "demo", "--scope", bad}, {}, {}, 60s);
        INFO(bad << ": " << r.err);
        CHECK(r.code == 2);
        CHECK(r.err.find("--scope") != std::string::npos);
    }
}

// Issue 43, finding 3: on SQLite, a revoked newest token's id went to the
// next token, and the revoked token's dashboard session (which names its
// token by id) came back to life with the replacement.
void revoked_ids_stay_dead(db_engine engine)
{
    test_database where(engine);
    const std::string db = where.location();
    const std::string ci = create_token(db, "demo");
    const std::string dash = scoped_token(db, "dash", "read");
    temp_dir dir("perfgate-revoked");
    server_process srv(db, dir.path() / "server.log");
    const std::string cookie = sign_in(srv.port(), dash);
    CHECK(get_with_cookie(srv.port(), "/p/demo", cookie) == 200);
    const auto dash_id = where.integer("SELECT id FROM api_tokens WHERE name = 'dash'");
    REQUIRE(
        run_perfgate({"token", "revoke", "--db", db, "--project", "demo", std::to_string(dash_id)}, {}, {}, 60s).code ==
        0);
    // The replacement, before the revoked session's next request.
    const std::string replacement = scoped_token(db, "dash-2", "read");
    CHECK(where.integer("SELECT id FROM api_tokens WHERE name = 'dash-2'") > dash_id);
    CHECK(get_with_cookie(srv.port(), "/p/demo", cookie) == 303); // signed out
    CHECK(get_with_cookie(srv.port(), "/p/demo", sign_in(srv.port(), replacement)) == 200);
}

} // namespace

TEST_CASE("tokens (sqlite): scopes per route class, upload tokens never write the main line, who wrote what")
{
    token_scopes(db_engine::sqlite);
}

TEST_CASE("tokens (postgresql): scopes per route class, upload tokens never write the main line, who wrote what")
{
    token_scopes(db_engine::postgresql);
}

TEST_CASE("tokens (sqlite): a revoked token's id is never reused, so its dashboard session stays dead")
{
    revoked_ids_stay_dead(db_engine::sqlite);
}

TEST_CASE("tokens (postgresql): a revoked token's id is never reused, so its dashboard session stays dead")
{
    revoked_ids_stay_dead(db_engine::postgresql);
}

TEST_CASE("tokens (sqlite): listed without secrets, revoked by id or token, expiring, revoking ends sessions")
{
    token_lifecycle(db_engine::sqlite);
}

TEST_CASE("tokens (postgresql): listed without secrets, revoked by id or token, expiring, revoking ends sessions")
{
    token_lifecycle(db_engine::postgresql);
}
