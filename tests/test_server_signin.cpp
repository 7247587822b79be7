// Issue 31, findings 3, 10, 12 and 14, over real sockets: dashboard sessions
// capped per project, sign-ins throttled per client address (429 with
// Retry-After), refused sign-ins logged and counted, `next=` resolved before
// it is checked, nosniff and a CSP on every kind of answer, the triage
// recorded with the session's token label, and a full disk answered 507.
#include "server_cases.hpp"

using namespace perfgate::test::server_cases;

namespace {

using message = http::request<http::string_body>;
using answer = http::response<http::string_body>;

// Many requests on one keep-alive connection.
class keep_alive_client {
public:
    explicit keep_alive_client(unsigned short port) : socket_(connect_to(ioc_, port))
    {
        set_receive_timeout(socket_, 10s);
    }

    answer exchange(message req)
    {
        req.keep_alive(true);
        req.prepare_payload();
        http::write(socket_, req);
        answer res;
        http::read(socket_, buffer_, res);
        return res;
    }

private:
    net::io_context ioc_;
    tcp::socket socket_;
    beast::flat_buffer buffer_;
};

// application/x-www-form-urlencoded: every byte but [A-Za-z0-9-._~] as %XX.
std::string form_encode(std::string_view s)
{
    std::string out;
    for (const unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') out += static_cast<char>(c);
        else out += fmt::format("%{:02X}", c);
    }
    return out;
}

// POST /p/{project}/signin, as from client address `from` behind the
// loopback proxy (X-Forwarded-For), with `next` when given.
message signin_request(const std::string& project, const std::string& token, const std::string& from,
                       const std::optional<std::string>& next = std::nullopt)
{
    message req{http::verb::post, "/p/" + project + "/signin", 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/x-www-form-urlencoded");
    if (!from.empty()) req.set("X-Forwarded-For", "203.0.113.250, " + from);
    req.body() = "token=" + form_encode(token) + (next ? "&next=" + form_encode(*next) : "");
    return req;
}

// "perfgate_session=ID" of a sign-in's Set-Cookie.
std::string cookie_of(const answer& res)
{
    const std::string set_cookie(res[http::field::set_cookie]);
    return set_cookie.substr(0, set_cookie.find(';'));
}

message get_request(const std::string& target, const std::string& cookie = {})
{
    message req{http::verb::get, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!cookie.empty()) req.set(http::field::cookie, cookie);
    return req;
}

// Sign-ins from one address until the first 429 (at most `tries`): how many
// were answered `status` before it, and the 429 (status 0 if none came).
struct burst_result {
    int answered = 0;
    answer refused;
    double seconds = 0;
};

burst_result burst(keep_alive_client& c, const std::string& project, const std::string& token, const std::string& from,
                   unsigned status, int tries = 40)
{
    burst_result r;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < tries; ++i) {
        answer res = c.exchange(signin_request(project, token, from));
        if (res.result_int() == 429) {
            r.refused = std::move(res);
            break;
        }
        REQUIRE(res.result_int() == status);
        ++r.answered;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

} // namespace

TEST_CASE("dashboard sessions: 10,050 sign-ins with project beta's token do not sign out project alpha's session")
{
    temp_dir dir("perfgate-sessions");
    const auto db = dir.path() / "sessions.db";
    const std::string alpha = create_token(db, "alpha");
    const std::string beta = create_token(db, "beta");
    server_process srv(db, dir.path() / "server.log");
    keep_alive_client c(srv.port());

    const answer a = c.exchange(signin_request("alpha", alpha, "198.51.100.1"));
    REQUIRE(a.result_int() == 303);
    const std::string alpha_session = cookie_of(a);
    REQUIRE(c.exchange(get_request("/p/alpha", alpha_session)).result_int() == 200);

    // One client address each, so that the throttle lets every one through:
    // what is left to stop them is the per-project cap of 1000 sessions.
    constexpr int sign_ins = 10050;
    std::vector<std::string> beta_sessions;
    int refused = 0;
    for (int i = 0; i < sign_ins; ++i) {
        const std::string from = fmt::format("10.{}.{}.{}", (i >> 16) & 255, (i >> 8) & 255, i & 255);
        const answer b = c.exchange(signin_request("beta", beta, from));
        if (b.result_int() != 303) ++refused;
        else beta_sessions.push_back(cookie_of(b));
    }
    CHECK(refused == 0);
    REQUIRE(beta_sessions.size() == static_cast<std::size_t>(sign_ins));

    // alpha's user is still signed in; beta's oldest sessions made room for
    // its newest, exactly 1000 of them live.
    CHECK(c.exchange(get_request("/p/alpha", alpha_session)).result_int() == 200);
    CHECK(c.exchange(get_request("/p/beta", beta_sessions.front())).result_int() == 303);
    CHECK(c.exchange(get_request("/p/beta", beta_sessions[sign_ins - 1001])).result_int() == 303);
    CHECK(c.exchange(get_request("/p/beta", beta_sessions[sign_ins - 1000])).result_int() == 200);
    CHECK(c.exchange(get_request("/p/beta", beta_sessions.back())).result_int() == 200);
}

TEST_CASE("sign-in throttle: a burst of failures from one address gets 429 with Retry-After, logged and counted")
{
    temp_dir dir("perfgate-throttle");
    const auto db = dir.path() / "throttle.db";
    const auto log = dir.path() / "server.log";
    const std::string alpha = create_token(db, "alpha");
    // The test's client plays the proxy on this host, named as the operator must.
    server_process srv(db, log, {"--trusted-proxy", "127.0.0.1"});
    keep_alive_client c(srv.port());
    const std::string wrong = "pg_" + std::string(64, '7');

    // Failed sign-ins: 10 in a burst (one more each 6 s the burst takes), then 429.
    const burst_result failed = burst(c, "alpha", wrong, "192.0.2.1", 401);
    REQUIRE(failed.refused.result_int() == 429);
    CHECK(failed.answered >= 10);
    CHECK(failed.answered <= 10 + 1 + static_cast<int>(failed.seconds / 6));
    const std::string retry_after(failed.refused[http::field::retry_after]);
    REQUIRE_FALSE(retry_after.empty());
    CHECK(std::stoi(retry_after) >= 1);
    CHECK(std::stoi(retry_after) <= 6);
    CHECK(failed.refused.body().find("Too many failed sign-ins") != std::string::npos);
    CHECK(failed.refused.body().find("Set-Cookie") == std::string::npos);
    CHECK(failed.refused[http::field::set_cookie].empty());
    // The right token from that address is let in all the same (issue 43
    // finding 15: a user behind an address shared with a guessing client).
    CHECK(c.exchange(signin_request("alpha", alpha, "192.0.2.1")).result_int() == 303);
    // Successful sign-ins are never throttled.
    const burst_result good = burst(c, "alpha", alpha, "192.0.2.2", 303, 30);
    CHECK(good.refused.result_int() != 429); // none came
    CHECK(good.answered == 30);

    // Another address is not held up; nor a direct client (no proxy header).
    CHECK(c.exchange(signin_request("alpha", alpha, "192.0.2.3")).result_int() == 303);
    CHECK(c.exchange(signin_request("alpha", alpha, "")).result_int() == 303);
    // An IPv6 client counts by its /64: other addresses of it share the bucket.
    const burst_result v6 = burst(c, "alpha", wrong, "2001:db8:1:2::1", 401);
    REQUIRE(v6.refused.result_int() == 429);
    if (v6.seconds < 5) CHECK(c.exchange(signin_request("alpha", wrong, "2001:db8:1:2::99")).result_int() == 429);
    CHECK(c.exchange(signin_request("alpha", wrong, "2001:db8:1:3::1")).result_int() == 401);

    // The operator's signal: one log line per refused sign-in, with the
    // address, the project and why, never the token; and the counters.
    const std::string text = read_text(log);
    CHECK(text.find(wrong) == std::string::npos);
    CHECK(text.find(alpha) == std::string::npos);
    std::istringstream lines(text);
    std::string line;
    int bad_token = 0, throttled = 0;
    while (std::getline(lines, line)) {
        if (line.find("\"event\":\"signin_refused\"") == std::string::npos) continue;
        const json j = json::parse(line);
        CHECK(j.at("project") == "alpha");
        if (j.at("reason") == "auth.bad_token" && j.at("remote") == "192.0.2.1") ++bad_token;
        if (j.at("reason") == "throttled") ++throttled;
    }
    CHECK(bad_token == failed.answered);
    CHECK(throttled >= 2);
    const std::string metrics = send(srv.port(), http::verb::get, "/metrics").body;
    CHECK(metric_value(metrics, "perfgate_signin_failures_total") == failed.answered + v6.answered + 1);
    CHECK(metric_value(metrics, "perfgate_signin_throttled_total") == throttled);
}

TEST_CASE("sign-in throttle: X-Forwarded-For is believed only from a --trusted-proxy, not from any loopback peer")
{
    temp_dir dir("perfgate-forwarded");
    const auto db = dir.path() / "forwarded.db";
    const std::string alpha = create_token(db, "alpha");
    const std::string wrong = "pg_" + std::string(64, '6');
    server_process srv(db, dir.path() / "server.log");
    keep_alive_client c(srv.port());
    // A forwarder on this host that passes the client's header on: each
    // try names another address, and all of them are one client, 127.0.0.1.
    int answered = 0;
    int refused = 0;
    for (int i = 0; i < 12; ++i) {
        const int status = c.exchange(signin_request("alpha", wrong, fmt::format("192.0.2.{}", i + 1))).result_int();
        if (status == 401) ++answered;
        if (status == 429) ++refused;
    }
    CHECK(answered >= 10);
    CHECK(answered <= 11);
    CHECK(refused >= 1);
    const std::string text = read_text(dir.path() / "server.log");
    CHECK(text.find("\"remote\":\"127.0.0.1\"") != std::string::npos);
    CHECK(text.find("\"remote\":\"192.0.2.1\"") == std::string::npos);
}

TEST_CASE("sign-in next=: controls are refused, dot segments, encoded dots, slashes and backslashes are resolved first")
{
    temp_dir dir("perfgate-next");
    const auto db = dir.path() / "next.db";
    const std::string alpha = create_token(db, "alpha");
    (void)create_token(db, "beta");
    server_process srv(db, dir.path() / "server.log");
    keep_alive_client c(srv.port());

    const std::vector<std::pair<std::string, std::string>> cases = {
        // Pages of the project: kept (resolved).
        {"/p/alpha/series?benchmark=a&counter=b", "/p/alpha/series?benchmark=a&counter=b"},
        {"/p/alpha/alerts#alert-3", "/p/alpha/alerts#alert-3"},
        {"/p/alpha/x/../series", "/p/alpha/series"},
        {"/p/alpha//runs//4", "/p/alpha/runs/4"},
        {"/p/alpha/./runs/4", "/p/alpha/runs/4"},
        {"/p/alpha", "/p/alpha"},
        // Out of the project: home.
        {"/p/alpha/../../x", "/p/alpha"},
        {"/p/alpha/../beta", "/p/alpha"},
        {"/p/alpha/%2e%2e/%2E%2E/x", "/p/alpha"},
        {"/p/alpha/.%2e/beta", "/p/alpha"},
        {"/p/alpha/%2e%2e", "/p/alpha"},
        {"/p/alpha//..//..//x", "/p/alpha"},
        {"/p/alpha\\..\\..\\x", "/p/alpha"},
        {"/p/alpha/..\\..\\x", "/p/alpha"},
        {"/p/alphabet/x", "/p/alpha"},
        {"//evil.example/p/alpha/", "/p/alpha"},
        {"https://evil.example/p/alpha/", "/p/alpha"},
        {"/p/alpha/signin", "/p/alpha"},
        {"/p/alpha/x/../signin?next=//evil.example", "/p/alpha"},
        // Bytes that are not printable URL characters: home, never in Location.
        {std::string("/p/alpha/a\0b", 12), "/p/alpha"},
        {"/p/alpha/a\x0b"
         "b",
         "/p/alpha"},
        {"/p/alpha/a\x7f", "/p/alpha"},
        {"/p/alpha/a\r\nSet-Cookie: x=y", "/p/alpha"},
        {"/p/alpha/a b", "/p/alpha"},
        {"/p/alpha/\xc3\xa9", "/p/alpha"},
    };
    int n = 0;
    for (const auto& variant : cases) {
        // Named, not a structured binding: INFO captures it (clang 14).
        const std::string& next = variant.first;
        const std::string& location = variant.second;
        INFO("next=" << next);
        // A fresh address each: the throttle is not what this tests.
        const answer res = c.exchange(signin_request("alpha", alpha, fmt::format("192.0.2.{}", ++n), next));
        REQUIRE(res.result_int() == 303);
        CHECK(std::string(res[http::field::location]) == location);
        // The sign-in form carries the same resolved value.
        const answer form = c.exchange(get_request("/p/alpha/signin?next=" + form_encode(next)));
        REQUIRE(form.result_int() == 200);
        std::string escaped = location;
        for (std::size_t at = 0; (at = escaped.find('&', at)) != std::string::npos; at += 5)
            escaped.replace(at, 1, "&amp;");
        CHECK(form.body().find("name=\"next\" value=\"" + escaped + "\"") != std::string::npos);
    }
}

TEST_CASE("every kind of answer has X-Content-Type-Options: nosniff and a Content-Security-Policy")
{
    temp_dir dir("perfgate-headers");
    const auto db = dir.path() / "headers.db";
    const std::string token = create_token(db, "demo");
    server_process srv(db, dir.path() / "server.log");
    const auto port = srv.port();
    (void)upload_pair(port, token);

    const std::string api_policy = "default-src 'none'; frame-ancestors 'none'";
    struct probe {
        std::string what;
        reply r;
        unsigned status;
        std::string policy; // expected CSP; "page": the dashboard's
    };
    std::vector<probe> probes = {
        {"healthz", send(port, http::verb::get, "/healthz"), 200, api_policy},
        {"metrics", send(port, http::verb::get, "/metrics"), 200, api_policy},
        {"API JSON", send(port, http::verb::get, "/api/v1/projects/demo/benchmarks", {}, {}, token), 200, api_policy},
        {"API 401", send(port, http::verb::get, "/api/v1/projects/demo/benchmarks"), 401, api_policy},
        {"API 404", send(port, http::verb::get, "/api/v1/nothing"), 404, api_policy},
        {"API 400", send(port, http::verb::post, "/api/v1/projects/demo/runs", "{", "application/json", token), 400,
         api_policy},
        {"asset", send(port, http::verb::get, "/assets/dashboard.css"), 200, api_policy},
        {"asset 404", send(port, http::verb::get, "/assets/nothing.js"), 404, api_policy},
        {"page redirect", send(port, http::verb::get, "/p/demo"), 303, "page"},
        {"sign-in page", send(port, http::verb::get, "/p/demo/signin"), 200, "page"},
        {"page 405", send(port, http::verb::put, "/p/demo/signin"), 405, api_policy},
    };
    const std::string raw = raw_exchange(port, "GET /healthz HTTP/1.1\r\n\r\n"); // no Host: refused by the transport
    for (const auto& p : probes) {
        INFO(p.what << ": " << p.r.body.substr(0, 200));
        CHECK(p.r.status == p.status);
        CHECK(p.r.raw["X-Content-Type-Options"] == "nosniff");
        const std::string policy(p.r.raw["Content-Security-Policy"]);
        if (p.policy == "page") CHECK(policy.find("script-src 'self'") != std::string::npos);
        else CHECK(policy == p.policy);
    }
    INFO(raw);
    CHECK(raw.starts_with("HTTP/1.1 400"));
    CHECK(raw.find("X-Content-Type-Options: nosniff\r\n") != std::string::npos);
    CHECK(raw.find("Content-Security-Policy: " + api_policy + "\r\n") != std::string::npos);
}

TEST_CASE("dashboard triage is recorded as the session's token label")
{
    temp_dir dir("perfgate-triage");
    const auto db = dir.path() / "triage.db";
    const std::string token = create_token(db, "demo");
    const auto made = run_perfgate(
        {"token", "create", "--db", db.string(), "--project", "demo", "--label", "alice-laptop"}, {}, {}, 60s);
    REQUIRE(made.code == 0);
    const std::string alice = made.out.substr(0, made.out.find('\n'));
    server_process srv(db, dir.path() / "server.log");
    const auto port = srv.port();
    (void)upload_series(port, "demo", token, 60, 40, 0.05);
    const json alert = wait_for_alert(port, token);
    const auto id = alert.at("id").get<std::int64_t>();

    keep_alive_client c(port);
    const answer signed_in = c.exchange(signin_request("demo", alice, ""));
    REQUIRE(signed_in.result_int() == 303);
    const std::string cookie = cookie_of(signed_in);
    const answer page = c.exchange(get_request("/p/demo/alerts", cookie));
    REQUIRE(page.result_int() == 200);
    const std::string marker = "name=\"csrf\" value=\"";
    const auto at = page.body().find(marker);
    REQUIRE(at != std::string::npos);
    const std::string csrf = page.body().substr(at + marker.size(), 64);

    message triage{http::verb::post, fmt::format("/p/demo/alerts/{}", id), 11};
    triage.set(http::field::host, "127.0.0.1");
    triage.set(http::field::cookie, cookie);
    triage.set(http::field::content_type, "application/x-www-form-urlencoded");
    triage.body() = "status=acknowledged&note=looking&csrf=" + csrf;
    REQUIRE(c.exchange(triage).result_int() == 303);

    const auto after = send(port, http::verb::get, fmt::format("/api/v1/projects/demo/alerts/{}", id), {}, {}, token);
    REQUIRE(after.status == 200);
    CHECK(after.parsed().at("status") == "acknowledged");
    CHECK(after.parsed().at("changed_by") == "dashboard:alice-laptop");
}

TEST_CASE("a full disk (sqlite, a 1 MiB tmpfs): uploads are 507 store.full saying storage full, reads still served")
{
    // A real full file system without root: a tmpfs in a user and mount
    // namespace of the server's own (unshare(1), util-linux).
    temp_dir dir("perfgate-full");
    const auto mnt = dir.path() / "mnt";
    std::filesystem::create_directory(mnt);
    const auto token_file = dir.path() / "token";
    // A prerequisite, not an option: without it this is a failure, never a silent pass.
    REQUIRE_MESSAGE(std::system("unshare --user --map-root-user --mount true 2>/dev/null") == 0,
                    "unshare --user --mount is not allowed here (unprivileged user namespaces are off)");
    const std::string script = "mount -t tmpfs -o size=1m tmpfs \"$1\" && \"$2\" token create --db \"$1/full.db\" "
                               "--project demo > \"$3\" && exec \"$2\" serve --db \"$1/full.db\" --listen "
                               "127.0.0.1:0 --threads 2";
    child server({"/usr/bin/unshare", "--user", "--map-root-user", "--mount", "/bin/sh", "-c", script, "sh",
                  mnt.string(), perfgate_exe, token_file.string()},
                 dir.path() / "server.log");
    const std::string out = server.read_until("\n", 15s);
    const std::string prefix = "perfgate: listening on http://127.0.0.1:";
    const auto at = out.find(prefix);
    REQUIRE_MESSAGE(at != std::string::npos, "server did not start: " << out << read_text(dir.path() / "server.log"));
    const auto port = static_cast<unsigned short>(std::stoi(out.substr(at + prefix.size())));
    std::string token = read_text(token_file);
    token = token.substr(0, token.find('\n'));

    reply full;
    int stored = 0;
    for (int i = 0; i < 400 && full.status != 507; ++i) {
        full = send(port, http::verb::post, "/api/v1/projects/demo/runs", run_body("baseline").dump(),
                    "application/json", token);
        REQUIRE_MESSAGE((full.status == 201 || full.status == 507), full.body);
        if (full.status == 201) ++stored;
    }
    INFO(full.body);
    REQUIRE(full.status == 507);
    CHECK(stored >= 1);
    check_error(full, 507, "store.full");
    CHECK(full.error().at("message").get<std::string>().starts_with("storage full"));
    CHECK(full.body.find("full.db") == std::string::npos);
    // perfgate upload says so at once: a full disk is not retried.
    const auto cli = run_perfgate({"upload", "--server", "http://127.0.0.1:" + std::to_string(port), "--project",
                                   "demo", "--token", token, "--role", "baseline", "--git-sha", "0123abcd", "--branch",
                                   "main", std::string(PERFGATE_TESTDATA_DIR) + "/perf-stat/appended-10-runs.csv"},
                                  {}, {}, 60s);
    CHECK(cli.code == 4);
    CHECK(cli.err.find("HTTP 507: [store.full] storage full") != std::string::npos);
    CHECK(cli.err.find("attempts") == std::string::npos);
    // What was acknowledged is there; reads still work.
    CHECK(count_runs(port, token) >= stored);
    CHECK(send(port, http::verb::get, "/healthz").status == 200);
    CHECK(read_text(dir.path() / "server.log").find("store.full") != std::string::npos);
}

TEST_CASE("perfgate serve --trusted-proxy takes IP addresses, anything else is exit 2 naming the option")
{
    temp_dir dir("perfgate-proxy");
    const auto db = dir.path() / "proxy.db";
    const auto bad = run_perfgate({"serve", "--db", db.string(), "--listen", "127.0.0.1:0", "--trusted-proxy",
                                   "10.0.0.5,proxy.example"},
                                  {}, {}, 60s);
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--trusted-proxy: 'proxy.example' is not an IP address") != std::string::npos);
    CHECK(run_perfgate({"serve", "--db", db.string(), "--trusted-proxy", ""}, {}, {}, 60s).code == 2);
    (void)create_token(db, "demo");
    server_process srv(db, dir.path() / "server.log", {"--trusted-proxy", "10.0.0.5,fd00::5"});
    CHECK(send(srv.port(), http::verb::get, "/healthz").status == 200);
}

// Issue 31, finding 5: under --public-read, page renders (cache misses) and
// history reads without a token or session are bounded per client address.
TEST_CASE("anonymous reads: a burst of renders and history reads from one address, then 429 with Retry-After")
{
    temp_dir dir("perfgate-anon");
    const auto db = dir.path() / "anon.db";
    const std::string token = create_token(db, "demo");
    server_process srv(db, dir.path() / "server.log", {"--public-read", "--trusted-proxy", "127.0.0.1"});
    keep_alive_client c(srv.port());
    const auto from = [](message req, const std::string& address) {
        req.set("X-Forwarded-For", address);
        return req;
    };
    // Distinct renders: a series of a counter nobody measured is an empty page, each its own entry.
    int rendered = 0;
    answer refused;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 60; ++i) {
        answer res = c.exchange(from(get_request(fmt::format("/p/demo/series?benchmark=b&counter=c{}", i)),
                                     "192.0.2.10"));
        if (res.result_int() == 429) {
            refused = std::move(res);
            break;
        }
        REQUIRE(res.result_int() == 200);
        ++rendered;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(refused.result_int() == 429);
    CHECK(rendered >= 20);
    CHECK(rendered <= 20 + 1 + static_cast<int>(seconds * 2));
    const std::string retry_after(refused[http::field::retry_after]);
    REQUIRE_FALSE(retry_after.empty());
    CHECK(std::stoi(retry_after) >= 1);
    CHECK(refused.body().find("Too many pages without signing in") != std::string::npos);
    CHECK(refused[http::field::content_type].starts_with("text/html"));

    // A page already rendered costs nothing: still served to that address.
    CHECK(c.exchange(from(get_request("/p/demo/series?benchmark=b&counter=c0&from=5"), "192.0.2.10")).result_int() ==
          200);
    // The history API without a token shares the allowance: JSON 429.
    message history = get_request("/api/v1/projects/demo/history?benchmark=b&counter=c0");
    const answer api = c.exchange(from(history, "192.0.2.10"));
    CHECK(api.result_int() == 429);
    CHECK(api.body().find("\"http.too_many_requests\"") != std::string::npos);
    CHECK_FALSE(std::string(api[http::field::retry_after]).empty());
    // With a token: never throttled. Another address: its own allowance.
    history.set(http::field::authorization, "Bearer " + token);
    CHECK(c.exchange(from(history, "192.0.2.10")).result_int() == 200);
    CHECK(c.exchange(from(get_request("/p/demo/series?benchmark=b&counter=c99"), "192.0.2.11")).result_int() == 200);
    CHECK(c.exchange(from(get_request("/api/v1/projects/demo/history?benchmark=b&counter=c0"), "192.0.2.11"))
              .result_int() == 200);
    // /healthz is never throttled.
    CHECK(send(srv.port(), http::verb::get, "/healthz").status == 200);
}
