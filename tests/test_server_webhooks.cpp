// Alert webhooks over a real server: a local receiver on an ephemeral port
// gets the alert an upload series opens, signed (the HMAC recomputed here)
// and Slack-shaped; a receiver answering 500 is retried, then logged, while
// uploads keep answering; bad URLs are refused; secrets never shown.
#include "server_cases.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <condition_variable>

#include <boost/asio/read_until.hpp>

#include <doctest/doctest.h>

using namespace perfgate::test::server_cases;

namespace {

// A webhook receiver: one thread accepting on 127.0.0.1:0, each request read
// whole (Beast), recorded, and answered with `status`.
class receiver {
public:
    struct hit {
        std::string target;
        std::map<std::string, std::string> headers;
        std::string body;
    };

    // delay: how long each answer takes (a slow receiver); location: sent
    // with the answer (a redirecting one).
    explicit receiver(unsigned status, std::chrono::milliseconds delay = {}, std::string location = {})
        : status_(status), delay_(delay), location_(std::move(location)),
          acceptor_(ioc_, {net::ip::make_address("127.0.0.1"), 0})
    {
        thread_ = std::jthread([this] { serve(); });
    }
    receiver(const receiver&) = delete;
    receiver& operator=(const receiver&) = delete;
    ~receiver()
    {
        stopping_ = true;
        boost::system::error_code ec;
        // Wake the blocking accept with a connection of our own.
        net::io_context wake;
        tcp::socket s(wake);
        s.connect({net::ip::make_address("127.0.0.1"), port()}, ec);
    }

    [[nodiscard]] unsigned short port() const { return acceptor_.local_endpoint().port(); }
    [[nodiscard]] std::string url(const std::string& path) const
    {
        return "http://127.0.0.1:" + std::to_string(port()) + path;
    }
    // Waits (at most 60 s) until n requests came; all of them.
    std::vector<hit> wait_for(std::size_t n)
    {
        std::unique_lock lock(mutex_);
        arrived_.wait_for(lock, std::chrono::seconds(60), [&] { return hits_.size() >= n; });
        return hits_;
    }
    std::vector<hit> hits()
    {
        std::lock_guard lock(mutex_);
        return hits_;
    }

private:
    void serve()
    {
        while (!stopping_) {
            tcp::socket s(ioc_);
            boost::system::error_code ec;
            acceptor_.accept(s, ec);
            if (ec || stopping_) return;
            set_receive_timeout(s, 10s);
            beast::flat_buffer buffer;
            http::request<http::string_body> req;
            http::read(s, buffer, req, ec);
            if (ec) continue;
            hit h{std::string(req.target()), {}, req.body()};
            for (const auto& f : req) h.headers[std::string(f.name_string())] = std::string(f.value());
            {
                std::lock_guard lock(mutex_);
                hits_.push_back(std::move(h));
            }
            arrived_.notify_all();
            if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
            http::response<http::string_body> res{static_cast<http::status>(status_), req.version()};
            if (!location_.empty()) res.set(http::field::location, location_);
            res.body() = status_ == 200 ? "ok" : "no";
            res.keep_alive(false);
            res.prepare_payload();
            http::write(s, res, ec);
        }
    }

    unsigned status_;
    std::chrono::milliseconds delay_;
    std::string location_;
    net::io_context ioc_;
    tcp::acceptor acceptor_;
    std::atomic<bool> stopping_{false};
    std::mutex mutex_;
    std::condition_variable arrived_;
    std::vector<hit> hits_;
    std::jthread thread_;
};

// HMAC-SHA256 of "TIMESTAMP.BODY" under secret, as a receiver checks it
// (docs/history.md "Signatures"), from the request's own timestamp header.
std::string expected_signature(const std::string& secret, const std::string& timestamp, const std::string& body)
{
    const std::string text = timestamp + "." + body;
    std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
    unsigned int length = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac.data(), &length);
    std::string hex = "sha256=";
    for (unsigned i = 0; i < length; ++i) hex += fmt::format("{:02x}", mac[i]);
    return hex;
}

reply post_webhook(unsigned short port, const std::string& token, const json& body)
{
    return send(port, http::verb::post, "/api/v1/projects/demo/webhooks", body.dump(), "application/json", token);
}

} // namespace

TEST_CASE("webhooks over a real server: an alert opened by uploads reaches the receiver signed and Slack-shaped")
{
    temp_dir dir;
    const auto db = dir.path() / "hooks.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    const std::string secret = "receiver-shared-secret-1234";
    receiver rx(200);
    server_process srv(db, log,
                       {"--public-url", "https://perf.example.com", "--public-read", "--webhook-allow-private",
                        "127.0.0.0/8"});
    const auto port = srv.port();

    REQUIRE(run_perfgate({"project", "--db", db.string(), "--project", "demo", "--repository-url",
                          "https://github.com/acme/demo"})
                .code == 0);
    auto signed_hook = post_webhook(port, token, {{"url", rx.url("/generic")}, {"secret", secret}});
    REQUIRE_MESSAGE(signed_hook.status == 201, signed_hook.body);
    CHECK(signed_hook.parsed().at("signed") == true);
    CHECK(signed_hook.parsed().at("format") == "json");
    auto slack_hook = post_webhook(port, token, {{"url", rx.url("/slack")}, {"format", "slack"}});
    REQUIRE_MESSAGE(slack_hook.status == 201, slack_hook.body);
    CHECK(signed_hook.body.find(secret) == std::string::npos);

    SUBCASE("bad URLs and formats are refused naming the field, nothing stored")
    {
        check_error(post_webhook(port, token, {{"url", "ftp://x.org/h"}}), 400, "ingest.bad_field");
        check_error(post_webhook(port, token, {{"url", "https://"}}), 400, "ingest.bad_field");
        check_error(post_webhook(port, token, {{"url", "https://x.org/" + std::string(2100, 'a')}}), 400,
                    "ingest.bad_field");
        check_error(post_webhook(port, token, {{"url", rx.url("/x")}, {"format", "xml"}}), 400, "ingest.bad_field");
        // A misspelt field is named, not dropped (issue 43 finding 17: "secrte" made an unsigned webhook).
        const auto typo = post_webhook(port, token, {{"url", rx.url("/x")}, {"secrte", "s3"}});
        check_error(typo, 400, "ingest.bad_field");
        CHECK(typo.error().at("message") == "request body: unknown field 'secrte' (known: url, format, secret)");
        const auto bad = post_webhook(port, token, {{"format", "json"}});
        check_error(bad, 400, "ingest.bad_field");
        CHECK(bad.error().at("message").get<std::string>().find("'url'") != std::string::npos);
        // Listing needs the token even with --public-read: a URL can be a credential.
        check_error(send(port, http::verb::get, "/api/v1/projects/demo/webhooks"), 401, "auth.missing_token");
        const auto listed = send(port, http::verb::get, "/api/v1/projects/demo/webhooks", {}, {}, token);
        REQUIRE(listed.status == 200);
        CHECK(listed.parsed().at("webhooks").size() == 2);
    }

    SUBCASE("an alert opened, then acknowledged: each webhook hears both")
    {
        upload_series(port, "demo", token, 60, 40, 0.05);
        const auto hits = rx.wait_for(2);
        REQUIRE(hits.size() >= 2);
        const auto generic = std::find_if(hits.begin(), hits.end(),
                                          [](const auto& h) { return h.target == "/generic"; });
        const auto slack = std::find_if(hits.begin(), hits.end(), [](const auto& h) { return h.target == "/slack"; });
        REQUIRE(generic != hits.end());
        REQUIRE(slack != hits.end());

        // The generic body: signed over its raw bytes with the webhook's secret.
        // Signed over "TIMESTAMP.BODY" (issue 43 finding 12): a recent timestamp and a delivery id.
        const std::string ts = generic->headers.at("X-Perfgate-Timestamp");
        const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        CHECK(std::llabs(std::stoll(ts) - now) < 120);
        CHECK(generic->headers.at("X-Perfgate-Signature") == expected_signature(secret, ts, generic->body));
        CHECK(generic->headers.at("X-Perfgate-Signature") != expected_signature(secret + "x", ts, generic->body));
        CHECK(generic->headers.at("X-Perfgate-Signature") !=
              expected_signature(secret, std::to_string(std::stoll(ts) - 1), generic->body));
        CHECK(generic->headers.at("X-Perfgate-Delivery").size() == 32);
        CHECK(generic->headers.at("X-Perfgate-Delivery") != slack->headers.at("X-Perfgate-Delivery"));
        CHECK(generic->headers.at("Content-Type") == "application/json");
        const json body = json::parse(generic->body);
        CHECK(body.at("event") == "alert.opened");
        CHECK(body.at("project") == "demo");
        CHECK(body.at("alert").at("benchmark") == "parse");
        CHECK(body.at("alert").at("counter") == "task-clock");
        CHECK(body.at("alert").at("status") == "untriaged");
        CHECK(body.at("alert").at("delta_pct").get<double>() == doctest::Approx(5.0).epsilon(0.2));
        const std::string sha = body.at("alert").at("commit");
        CHECK(body.at("commit_url") == "https://github.com/acme/demo/commit/" + sha);
        CHECK(body.at("dashboard_url") == "https://perf.example.com/p/demo/alerts");
        const auto id = body.at("alert").at("id").get<std::int64_t>();

        // The Slack body: an incoming-webhook message, no signature header without a secret.
        CHECK(slack->headers.count("X-Perfgate-Signature") == 0);
        const json s = json::parse(slack->body);
        CHECK(s.at("text").get<std::string>().find("regression") != std::string::npos);
        REQUIRE(s.at("blocks").is_array());
        CHECK(s.at("blocks").at(0).at("type") == "header");
        const std::string fields = s.at("blocks").at(1).at("fields").dump();
        CHECK(fields.find("task-clock") != std::string::npos);
        CHECK(fields.find(fmt::format("{:+.2f}%", body.at("alert").at("delta_pct").get<double>())) !=
              std::string::npos);
        CHECK(fields.find("<https://github.com/acme/demo/commit/" + sha + "|") != std::string::npos);
        // The testbed by its name, not its fingerprint; values with their unit, no exponent.
        CHECK(fields.find("*Testbed*\\nci-box") != std::string::npos);
        CHECK(fields.find(body.at("alert").at("testbed").get<std::string>()) == std::string::npos);
        CHECK(fields.find(" ms -> ") != std::string::npos);
        CHECK(fields.find("e+") == std::string::npos);
        CHECK(s.dump().find("https://perf.example.com/p/demo/alerts") != std::string::npos);

        // Triage over the API: a status change is posted too.
        const auto patched = send(port, http::verb::patch, "/api/v1/projects/demo/alerts/" + std::to_string(id),
                                  R"({"status": "acknowledged"})", "application/json", token);
        REQUIRE(patched.status == 200);
        const auto more = rx.wait_for(4);
        REQUIRE(more.size() >= 4);
        const auto changed = std::find_if(more.begin() + 2, more.end(),
                                          [](const auto& h) { return h.target == "/generic"; });
        REQUIRE(changed != more.end());
        CHECK(json::parse(changed->body).at("event") == "alert.status_changed");
        CHECK(json::parse(changed->body).at("alert").at("status") == "acknowledged");
        // The Slack message of the change says who made it.
        const auto slack_changed = std::find_if(more.begin() + 2, more.end(),
                                                [](const auto& h) { return h.target == "/slack"; });
        REQUIRE(slack_changed != more.end());
        const std::string changed_by = json::parse(changed->body).at("alert").at("changed_by");
        CHECK_FALSE(changed_by.empty());
        CHECK(json::parse(slack_changed->body)
                  .at("blocks")
                  .at(1)
                  .at("fields")
                  .dump()
                  .find("acknowledged (by " + changed_by + ")") != std::string::npos);
        CHECK(changed->headers.at("X-Perfgate-Signature") ==
              expected_signature(secret, changed->headers.at("X-Perfgate-Timestamp"), changed->body));
        CHECK(changed->headers.at("X-Perfgate-Delivery") != generic->headers.at("X-Perfgate-Delivery"));

        // The delivery log: over HTTP and in perfgate project; the secret in neither, nor in the log.
        for (int i = 0; i < 200 && metric_of(port, token, "perfgate_webhook_queued") != 0; ++i) {
            std::this_thread::sleep_for(50ms);
        }
        const auto listed = send(port, http::verb::get, "/api/v1/projects/demo/webhooks", {}, {}, token);
        REQUIRE(listed.status == 200);
        CHECK(listed.body.find(secret) == std::string::npos);
        CHECK(listed.parsed().at("webhooks").at(0).at("last_delivery").at("outcome") == "delivered");
        const auto shown = run_perfgate({"project", "--db", db.string(), "--project", "demo"});
        REQUIRE(shown.code == 0);
        CHECK(shown.out.find("webhooks 2\n") != std::string::npos);
        CHECK(shown.out.find("json signed " + rx.url("/generic") + " last=delivered attempts=1") != std::string::npos);
        CHECK(shown.out.find(secret) == std::string::npos);
        CHECK(read_text(log).find(secret) == std::string::npos);
        const std::string metrics = send(port, http::verb::get, "/metrics", {}, {}, token).body;
        CHECK(metrics.find("perfgate_webhook_deliveries_total{outcome=\"delivered\"} 4") != std::string::npos);
    }
}

TEST_CASE("webhooks over a real server: a culprit stored on an alert is an alert.culprit_found delivery, signed")
{
    temp_dir dir;
    const auto db = dir.path() / "hooks.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    const std::string secret = "receiver-shared-secret-1234";
    receiver rx(200);
    server_process srv(db, log, {"--webhook-allow-private", "127.0.0.0/8"});
    const auto port = srv.port();
    REQUIRE(run_perfgate({"project", "--db", db.string(), "--project", "demo", "--repository-url",
                          "https://github.com/acme/demo"})
                .code == 0);
    REQUIRE(post_webhook(port, token, {{"url", rx.url("/generic")}, {"secret", secret}}).status == 201);
    REQUIRE(post_webhook(port, token, {{"url", rx.url("/slack")}, {"format", "slack"}}).status == 201);
    upload_series(port, "demo", token, 60, 40, 0.05);
    const auto opened = rx.wait_for(2);
    REQUIRE(opened.size() >= 2);
    const auto id = json::parse(opened[0].body).at("alert").at("id").get<std::int64_t>();
    const std::string culprit_sha(40, 'c');
    const json found = {{"status", "found"},
                        {"backend", "callgrind"},
                        {"counter", "instructions"},
                        {"good", std::string(40, 'a')},
                        {"bad", std::string(40, 'b')},
                        {"commits", 12},
                        {"steps", 4},
                        {"builds", 6},
                        {"culprits", json::array({{{"sha", culprit_sha},
                                                   {"subject", "parse: copy <the> buffer"},
                                                   {"author", "Ana <ana@example.com>"},
                                                   {"share", 1.0},
                                                   {"effects", json::array({{{"counter", "instructions"},
                                                                             {"status", "regression"},
                                                                             {"before", 1e6},
                                                                             {"after", 1.05e6},
                                                                             {"delta_pct", 5.0},
                                                                             {"ci_pct", {5.0, 5.0}}}})}}})}};
    const std::string path = "/api/v1/projects/demo/alerts/" + std::to_string(id) + "/culprit";
    const auto put = send(port, http::verb::put, path, found.dump(), "application/json", token);
    REQUIRE_MESSAGE(put.status == 200, put.body);

    const auto hits = rx.wait_for(4);
    REQUIRE(hits.size() >= 4);
    const auto generic = std::find_if(hits.begin() + 2, hits.end(),
                                      [](const auto& h) { return h.target == "/generic"; });
    const auto slack = std::find_if(hits.begin() + 2, hits.end(), [](const auto& h) { return h.target == "/slack"; });
    REQUIRE(generic != hits.end());
    REQUIRE(slack != hits.end());
    CHECK(generic->headers.at("X-Perfgate-Event") == "alert.culprit_found");
    CHECK(generic->headers.at("X-Perfgate-Signature") ==
          expected_signature(secret, generic->headers.at("X-Perfgate-Timestamp"), generic->body));
    const json body = json::parse(generic->body);
    CHECK(body.at("event") == "alert.culprit_found");
    CHECK(body.at("alert").at("id") == id);
    const json& k = body.at("culprit");
    CHECK(k.at("status") == "found");
    CHECK(k.at("good") == std::string(40, 'a'));
    CHECK(k.at("written_by").at("id").get<std::int64_t>() > 0);
    REQUIRE(k.at("culprits").size() == 1);
    CHECK(k.at("culprits").at(0).at("sha") == culprit_sha);
    CHECK(k.at("culprits").at(0).at("commit_url") == "https://github.com/acme/demo/commit/" + culprit_sha);
    CHECK(k.at("culprits").at(0).at("effects").at(0).at("delta_pct") == 5.0);
    // Slack: the culprit linked in the title's section, user text escaped.
    const json s = json::parse(slack->body);
    CHECK(s.at("text").get<std::string>().find("Culprit found for alert " + std::to_string(id)) != std::string::npos);
    const std::string fields = s.at("blocks").at(1).at("fields").dump();
    CHECK(fields.find("<https://github.com/acme/demo/commit/" + culprit_sha + "|cccccccccccc>") != std::string::npos);
    CHECK(fields.find("copy &lt;the&gt; buffer") != std::string::npos);
    CHECK(fields.find("100% of the change") != std::string::npos);

    // An undecided bisection is stored (replacing it) and posts nothing:
    // the delivery is queued before the PUT answers, so none is pending.
    json undecided = found;
    undecided["status"] = "undecided";
    undecided["culprits"] = json::array();
    undecided["detail"] = "undecided: after aaaaaaaaaaaa up to bbbbbbbbbbbb (3 commits)";
    REQUIRE(send(port, http::verb::put, path, undecided.dump(), "application/json", token).status == 200);
    for (int i = 0; i < 200 && metric_of(port, token, "perfgate_webhook_queued") != 0; ++i) {
        std::this_thread::sleep_for(50ms);
    }
    CHECK(metric_of(port, token, "perfgate_webhook_queued") == 0);
    CHECK(rx.hits().size() == 4);
}

TEST_CASE("webhooks over a real server: a receiver answering 500 is retried, then logged, uploads unaffected")
{
    temp_dir dir;
    const auto db = dir.path() / "failing.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    receiver rx(500);
    // Back-off from 50 ms (1 s in service): 4 attempts within a second.
    server_process srv(db, log, {"--webhook-backoff-ms", "50", "--webhook-allow-private", "127.0.0.0/8"});
    const auto port = srv.port();

    // Added with the CLI: a bad URL is exit 2 naming --webhook, nothing stored.
    const auto bad = run_perfgate({"project", "--db", db.string(), "--project", "demo", "--webhook", "hooks.example"});
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--webhook: 'hooks.example' must start with https:// or http://") != std::string::npos);
    const auto added = run_perfgate({"project", "--db", db.string(), "--project", "demo", "--webhook", rx.url("/fail"),
                                     "--secret", "cli-secret-xyz"});
    REQUIRE_MESSAGE(added.code == 0, added.err);
    CHECK(added.out.find("webhooks 1\n") != std::string::npos);
    CHECK(added.out.find("cli-secret-xyz") == std::string::npos);
    CHECK(added.out.find("last=never") != std::string::npos);

    // Uploads answer 201 throughout (upload_series REQUIREs each), before and
    // while the receiver fails; time both halves.
    const auto t0 = std::chrono::steady_clock::now();
    upload_series(port, "demo", token, 40, 40, 0.0);
    const auto quiet = std::chrono::steady_clock::now() - t0;
    const auto t1 = std::chrono::steady_clock::now();
    // Steps at run 40 of 60: the alert, and the deliveries failing, come while these upload.
    std::uint64_t state = 7;
    for (std::size_t i = 0; i < 40; ++i) {
        json body = {{"benchmark", "parse"},
                     {"role", "baseline"},
                     {"git_sha", fmt::format("{:040x}", 1000 + i)},
                     {"branch", "main"},
                     {"testbed", {{"name", "ci-box"}, {"cores", 2}}},
                     {"perf_csv", task_clock_capture(i < 5 ? 100.0 : 110.0, state)}};
        const auto r = send(port, http::verb::post, "/api/v1/projects/demo/runs", body.dump(), "application/json",
                            token);
        REQUIRE_MESSAGE(r.status == 201, r.body);
    }
    const auto busy = std::chrono::steady_clock::now() - t1;
    MESSAGE("40 uploads: " << std::chrono::duration<double>(quiet).count() << " s before, "
                           << std::chrono::duration<double>(busy).count() << " s with a failing receiver");
    CHECK(busy < 3 * quiet + 2s);

    // Four attempts (webhook_max_attempts), then the failure is logged and counted.
    const auto hits = rx.wait_for(4);
    CHECK(hits.size() >= 4);
    for (int i = 0; i < 200 && metric_of(port, token, "perfgate_webhook_queued") != 0; ++i) {
        std::this_thread::sleep_for(50ms);
    }
    const auto after = rx.hits();
    CHECK(after.size() % 4 == 0); // whole deliveries: four attempts each
    const std::string metrics = send(port, http::verb::get, "/metrics", {}, {}, token).body;
    CHECK(metrics.find(fmt::format("perfgate_webhook_deliveries_total{{outcome=\"failed\"}} {}", after.size() / 4)) !=
          std::string::npos);
    CHECK(metrics.find("perfgate_webhook_deliveries_total{outcome=\"delivered\"} 0") != std::string::npos);
    CHECK(metric_of(port, token, "perfgate_webhook_retries_total") == static_cast<double>(after.size() / 4 * 3));
    CHECK(read_text(log).find(fmt::format("(http://127.0.0.1:{}) delivery failed after 4 attempts: HTTP status 5xx "
                                          "(HTTP 500)",
                                          rx.port())) != std::string::npos);
    CHECK(read_text(log).find(rx.url("/fail")) == std::string::npos); // the URL by scheme and host only
    const auto shown = run_perfgate({"project", "--db", db.string(), "--project", "demo"});
    REQUIRE(shown.code == 0);
    CHECK(shown.out.find("last=failed attempts=4") != std::string::npos);
    CHECK(shown.out.find("error=HTTP status 5xx") != std::string::npos);
    CHECK(shown.out.find("cli-secret-xyz") == std::string::npos);
    CHECK(read_text(log).find("cli-secret-xyz") == std::string::npos);

    // Removal: by id; an unknown id is exit 2.
    const auto removed = run_perfgate({"project", "--db", db.string(), "--project", "demo", "--remove-webhook", "1"});
    CHECK(removed.code == 0);
    CHECK(removed.out.find("webhooks 0\n") != std::string::npos);
    const auto again = run_perfgate({"project", "--db", db.string(), "--project", "demo", "--remove-webhook", "1"});
    CHECK(again.code == 2);
    CHECK(again.err.find("--remove-webhook: project 'demo' has no webhook 1") != std::string::npos);
}

namespace {

reply post_hook(unsigned short port, const std::string& project, const std::string& token, const json& body)
{
    return send(port, http::verb::post, "/api/v1/projects/" + project + "/webhooks", body.dump(), "application/json",
                token);
}

// The project's webhooks once none has a delivery waiting (at most 30 s).
json settled_webhooks(unsigned short port, const std::string& project, const std::string& token, std::size_t n)
{
    json hooks;
    for (int i = 0; i < 600; ++i) {
        hooks = send(port, http::verb::get, "/api/v1/projects/" + project + "/webhooks", {}, {}, token).parsed();
        const auto& list = hooks.at("webhooks");
        const auto done = std::count_if(list.begin(), list.end(), [](const json& w) {
            return !w.at("last_delivery").is_null() && w.at("last_delivery").at("outcome") != "dropped";
        });
        if (static_cast<std::size_t>(done) >= n && metric_of(port, token, "perfgate_webhook_queued") == 0) break;
        std::this_thread::sleep_for(50ms);
    }
    return hooks.at("webhooks");
}

} // namespace

TEST_CASE("webhooks over a real server: a receiver on loopback is refused by default, reached with "
          "--webhook-allow-private")
{
    temp_dir dir;
    const auto db = dir.path() / "egress.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    receiver rx(200);
    const std::string port_text = std::to_string(rx.port());
    {
        server_process srv(db, log, {"--webhook-backoff-ms", "20"});
        const auto port = srv.port();
        // At creation: every spelling of the receiver's address, and the
        // other inside ranges, are a 400 naming the field.
        for (const std::string host : {"127.0.0.1",
                                       "2130706433",
                                       "0177.0.0.1",
                                       "0x7f.0.0.1",
                                       "0x7f000001",
                                       "127.1",
                                       "127.0.1",
                                       "127.0.0.1.",
                                       "localhost",
                                       "LOCALHOST.",
                                       "hooks.localhost",
                                       "[::1]",
                                       "[::ffff:127.0.0.1]",
                                       "[::ffff:7f00:1]",
                                       "[::127.0.0.1]",
                                       "[64:ff9b::7f00:1]",
                                       "169.254.169.254",
                                       "10.0.0.1",
                                       "172.16.1.1",
                                       "192.168.1.1",
                                       "100.64.0.1",
                                       "[fd00::1]",
                                       "[fe80::1]",
                                       "224.0.0.1",
                                       "0.0.0.0",
                                       "0",
                                       "[::]",
                                       "255.255.255.255"}) {
            INFO(host);
            const auto r = post_webhook(port, token, {{"url", "http://" + host + ":" + port_text + "/hook"}});
            check_error(r, 400, "ingest.bad_field");
            CHECK(r.error().at("message").get<std::string>().starts_with("field 'url': host "));
            CHECK(r.error().at("message").get<std::string>().find("--webhook-allow-private") != std::string::npos);
        }
        CHECK(send(port, http::verb::get, "/api/v1/projects/demo/webhooks", {}, {}, token)
                  .parsed()
                  .at("webhooks")
                  .empty());

        // The operator's CLI does not judge a URL; every delivery does: the
        // receiver is never reached, and the log says only "refused by policy".
        REQUIRE(run_perfgate({"project", "--db", db.string(), "--project", "demo", "--webhook",
                              rx.url("/cli-added-path")})
                    .code == 0);
        upload_series(port, "demo", token, 60, 40, 0.05);
        const auto hooks = settled_webhooks(port, "demo", token, 1);
        REQUIRE(hooks.size() == 1);
        CHECK(hooks.at(0).at("last_delivery").at("outcome") == "failed");
        CHECK(hooks.at(0).at("last_delivery").at("error") == "refused by policy");
        CHECK(hooks.at(0).at("last_delivery").at("attempts") == 4);
        CHECK(rx.hits().empty());
        const std::string text = read_text(log);
        CHECK(text.find("delivery failed after 4 attempts: refused by policy (host 127.0.0.1 is a loopback address") !=
              std::string::npos);
        CHECK(text.find("/cli-added-path") == std::string::npos);
    }
    {
        // The same database, the flag given: the next notification arrives,
        // and an octal spelling is accepted and connected to as 127.0.0.1.
        server_process srv(db, log, {"--webhook-backoff-ms", "20", "--webhook-allow-private", "127.0.0.0/8"});
        const auto port = srv.port();
        const auto octal = post_webhook(port, token, {{"url", "http://0177.0.0.1:" + port_text + "/octal"}});
        REQUIRE_MESSAGE(octal.status == 201, octal.body);
        check_error(post_webhook(port, token, {{"url", "http://[::1]:" + port_text + "/v6"}}), 400,
                    "ingest.bad_field"); // ::1 is not in 127.0.0.0/8
        const auto alerts = send(port, http::verb::get, "/api/v1/projects/demo/alerts", {}, {}, token).parsed();
        REQUIRE_FALSE(alerts.at("alerts").empty());
        const auto id = alerts.at("alerts").at(0).at("id").get<std::int64_t>();
        const auto patched = send(port, http::verb::patch, "/api/v1/projects/demo/alerts/" + std::to_string(id),
                                  R"({"status": "acknowledged"})", "application/json", token);
        REQUIRE(patched.status == 200);
        const auto hits = rx.wait_for(2);
        REQUIRE(hits.size() == 2);
        std::set<std::string> targets;
        for (const auto& h : hits) targets.insert(h.target);
        CHECK(targets == std::set<std::string>{"/cli-added-path", "/octal"});
        for (const auto& w : settled_webhooks(port, "demo", token, 2)) {
            CHECK(w.at("last_delivery").at("outcome") == "delivered");
        }
    }
}

TEST_CASE("webhooks over a real server: redirects are not followed, failures are coarse classes, logs show no path")
{
    temp_dir dir;
    const auto db = dir.path() / "classes.db";
    const auto log = dir.path() / "server.log";
    const std::string token = create_token(db, "demo");
    receiver inside(200);
    // 307 keeps the method and body: it would have carried the alert inside.
    receiver redirecting(307, {}, inside.url("/metadata"));
    // A port nothing listens on: bound, then closed.
    unsigned short closed_port = 0;
    {
        net::io_context ioc;
        tcp::acceptor a(ioc, {net::ip::make_address("127.0.0.1"), 0});
        closed_port = a.local_endpoint().port();
    }
    server_process srv(db, log, {"--webhook-backoff-ms", "20", "--webhook-allow-private", "127.0.0.0/8"});
    const auto port = srv.port();
    REQUIRE(post_webhook(port, token, {{"url", redirecting.url("/redirect-path-secret")}}).status == 201);
    REQUIRE(post_webhook(port, token, {{"url", fmt::format("http://127.0.0.1:{}/closed-path-secret", closed_port)}})
                .status == 201);
    REQUIRE(post_webhook(port, token, {{"url", "http://no-such-host.invalid/dns-path-secret"}}).status == 201);
    upload_series(port, "demo", token, 60, 40, 0.05);
    std::map<std::string, std::string> errors;
    for (const auto& w : settled_webhooks(port, "demo", token, 3)) {
        CHECK(w.at("last_delivery").at("outcome") == "failed");
        errors[w.at("url")] = w.at("last_delivery").at("error");
    }
    CHECK(errors[redirecting.url("/redirect-path-secret")] == "HTTP status 3xx");
    CHECK(errors[fmt::format("http://127.0.0.1:{}/closed-path-secret", closed_port)] == "could not connect");
    CHECK(errors["http://no-such-host.invalid/dns-path-secret"] == "could not resolve");
    CHECK(redirecting.hits().size() == 4);
    CHECK(inside.hits().empty());
    const std::string text = read_text(log);
    CHECK(text.find("path-secret") == std::string::npos);
    CHECK(text.find(fmt::format("webhook 2 (http://127.0.0.1:{}) delivery failed after 4 attempts: could not connect",
                                closed_port)) != std::string::npos);
}

TEST_CASE("webhooks over a real server: one project's slow receiver does not hold up another project's delivery")
{
    temp_dir dir;
    const auto db = dir.path() / "fair.db";
    const auto log = dir.path() / "server.log";
    const std::string slow_token = create_token(db, "slow");
    const std::string quick_token = create_token(db, "quick");
    // Each answer takes 2 s: the slow project's 12 deliveries take 24 s one
    // after the other. One queue and one thread (before issue 43) made the
    // quick project's delivery wait behind all of them.
    receiver slow_rx(200, 2s);
    receiver quick_rx(200);
    server_process srv(db, log, {"--webhook-allow-private", "127.0.0.0/8"});
    const auto port = srv.port();
    for (int i = 0; i < 12; ++i) {
        REQUIRE(post_hook(port, "slow", slow_token, {{"url", slow_rx.url("/slow/" + std::to_string(i))}}).status ==
                201);
    }
    REQUIRE(post_hook(port, "quick", quick_token, {{"url", quick_rx.url("/quick")}}).status == 201);
    upload_series(port, "slow", slow_token, 60, 40, 0.05);
    REQUIRE(slow_rx.wait_for(1).size() >= 1); // the slow backlog has started
    const auto t0 = std::chrono::steady_clock::now();
    upload_series(port, "quick", quick_token, 60, 40, 0.05);
    const auto uploaded = std::chrono::steady_clock::now();
    REQUIRE(quick_rx.wait_for(1).size() == 1);
    const auto arrived = std::chrono::steady_clock::now();
    const double wait = std::chrono::duration<double>(arrived - uploaded).count();
    MESSAGE("quick project's uploads took " << std::chrono::duration<double>(uploaded - t0).count()
                                            << " s, its delivery came " << wait << " s after; slow receiver had "
                                            << slow_rx.hits().size() << " of 12");
    // The bound (docs/history.md "Delivery"): no wait for another project's
    // receiver while fewer than webhook_workers (4) projects are mid-attempt.
    // What is left is the watch's detection: well under 5 s, where one queue
    // left at least 10 s of the slow backlog ahead of it.
    CHECK(wait < 5.0);
    CHECK(slow_rx.hits().size() < 12);
}
