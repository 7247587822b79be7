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

#include "support/database.hpp"
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
    CHECK(listed[0] == "id\tlabel\tcreated\tlast_used\texpires");
    CHECK(listed[1].find("\tdefault\t") != std::string::npos);
    CHECK(listed[1].ends_with("\tnever\tnever"));
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

} // namespace

TEST_CASE("tokens (sqlite): listed without secrets, revoked by id or token, expiring, revoking ends sessions")
{
    token_lifecycle(db_engine::sqlite);
}

TEST_CASE("tokens (postgresql): listed without secrets, revoked by id or token, expiring, revoking ends sessions")
{
    token_lifecycle(db_engine::postgresql);
}
