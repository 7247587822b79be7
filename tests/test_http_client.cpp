#include "client/http.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "client/server_client.hpp"
#include "connect_proxy.hpp"
#include "fake_github.hpp"
#include "model/error.hpp"
#include "test_cert.hpp"

using perfgate::client::http_request;
using perfgate::client::http_send;
using perfgate::test::test_cert;
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

// Builds a request (designated initializers would trip -Wmissing-field-initializers).
http_request make_req(std::string url, std::string method = "GET", std::string body = {},
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(30000))
{
    http_request r;
    r.url = std::move(url);
    r.method = std::move(method);
    r.body = std::move(body);
    r.timeout = timeout;
    return r;
}

std::string error_id_of(const http_request& req)
{
    try {
        http_send(req);
    } catch (const perfgate::error& e) {
        return e.id() + ": " + e.what();
    }
    return "no error";
}

// A port on 127.0.0.1 that nothing listens on: bind, read the port, close.
unsigned short closed_port()
{
    asio::io_context ioc;
    tcp::acceptor a(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
}

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class scoped_env {
public:
    scoped_env(const char* name, const std::optional<std::string>& value) : name_(name)
    {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) ::setenv(name, value->c_str(), 1);
        else ::unsetenv(name);
    }
    ~scoped_env()
    {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

// Serves one HTTPS request on 127.0.0.1 with the given certificate, then stops.
class tls_server {
public:
    explicit tls_server(const test_cert& c) : ctx_(asio::ssl::context::tls_server)
    {
        ctx_.use_certificate_chain_file(c.cert.string());
        ctx_.use_private_key_file(c.key.string(), asio::ssl::context::pem);
        acceptor_.open(tcp::v4());
        acceptor_.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
        acceptor_.listen();
        port_ = acceptor_.local_endpoint().port();
        thread_ = std::thread([this] { serve_one(); });
    }
    ~tls_server() { thread_.join(); }
    tls_server(const tls_server&) = delete;
    tls_server& operator=(const tls_server&) = delete;
    unsigned short port() const { return port_; }

private:
    void serve_one()
    {
        beast::error_code ec;
        tcp::socket sock(ioc_);
        acceptor_.accept(sock, ec);
        if (ec) return;
        beast::ssl_stream<tcp::socket> stream(std::move(sock), ctx_);
        stream.handshake(asio::ssl::stream_base::server, ec);
        if (ec) return; // the client refused our certificate
        beast::flat_buffer buf;
        beast::http::request<beast::http::string_body> req;
        beast::http::read(stream, buf, req, ec);
        if (ec) return;
        beast::http::response<beast::http::string_body> res{beast::http::status::ok, 11};
        res.body() = "secure " + std::string(req.target());
        res.keep_alive(false); // the client closes, so shutdown() below does not wait for it
        res.prepare_payload();
        beast::http::write(stream, res, ec);
        stream.shutdown(ec);
    }

    asio::io_context ioc_;
    asio::ssl::context ctx_;
    tcp::acceptor acceptor_{ioc_};
    unsigned short port_ = 0;
    std::thread thread_;
};

} // namespace

TEST_CASE("http_send talks HTTP/1.1 to a local server")
{
    perfgate::test::fake_github server;

    SUBCASE("GET sends the target, Host with port, User-Agent and custom headers")
    {
        auto req = make_req(server.url() + "/test/echo?a=1&b=x%20y#fragment");
        req.headers = {{"X-Custom", "value"}};
        auto res = http_send(req);
        CHECK(res.status == 200);
        auto j = nlohmann::json::parse(res.body);
        CHECK(j["method"] == "GET");
        CHECK(j["target"] == "/test/echo?a=1&b=x%20y"); // fragment is never sent
        CHECK(j["headers"]["host"] == "127.0.0.1:" + std::to_string(server.port()));
        CHECK(j["headers"]["x-custom"] == "value");
        CHECK(j["headers"]["user-agent"].get<std::string>().starts_with("perfgate/"));
        CHECK(res.header("content-type") == "application/json; charset=utf-8");
        CHECK(res.header("CONTENT-TYPE") == res.header("Content-Type"));
        CHECK_FALSE(res.header("x-not-there").has_value());
    }
    SUBCASE("POST carries the body with its Content-Length")
    {
        auto res = http_send(make_req(server.url() + "/test/echo", "POST", R"({"k":1})"));
        auto j = nlohmann::json::parse(res.body);
        CHECK(j["method"] == "POST");
        CHECK(j["body"] == R"({"k":1})");
        CHECK(j["headers"]["content-length"] == "7");
    }
    SUBCASE("a query-only URL gets the root path")
    {
        auto res = http_send(make_req(server.url() + "?x=1"));
        CHECK(res.status == 401); // the fake checks the token first
        CHECK(server.requests().back().target == "/?x=1");
    }
    SUBCASE("chunked, close-delimited and large bodies are read whole")
    {
        auto chunked = http_send(make_req(server.url() + "/test/chunked"));
        CHECK(chunked.status == 200);
        CHECK(chunked.header("transfer-encoding") == "chunked");
        CHECK(chunked.body == std::string(100000, 'c'));

        auto eof = http_send(make_req(server.url() + "/test/close-delimited"));
        CHECK(eof.body == "until-eof");

        // Above Beast's default 8 MiB body limit.
        constexpr std::size_t big = 10u * 1024 * 1024;
        auto large = http_send(make_req(server.url() + "/test/big?bytes=" + std::to_string(big)));
        CHECK(large.body.size() == big);
    }
    SUBCASE("an HTTP error status is a response, not an exception")
    {
        auto res = http_send(make_req(server.url() + "/repos/o/r/nothing"));
        CHECK(res.status == 401); // no token
        CHECK(res.body.find("Bad credentials") != std::string::npos);
    }
}

TEST_CASE("http_send errors")
{
    SUBCASE("bad URLs are http.bad_url naming the URL")
    {
        for (std::string url :
             {"ftp://example.com/x", "example.com/x", "http://", "http://:80/", "http://127.0.0.1:99999/",
              "http://127.0.0.1:12a/", "http://u:p@127.0.0.1/", "http://[::1/"}) {
            CAPTURE(url);
            auto got = error_id_of(make_req(url));
            CHECK(got.starts_with("http.bad_url: bad URL '" + url + "'"));
        }
        CHECK_THROWS_WITH_AS(http_send(make_req("gopher://h/")),
                             "bad URL 'gopher://h/': unsupported scheme 'gopher' (only http and https)",
                             perfgate::error);
    }
    SUBCASE("an unknown method is refused before connecting")
    {
        CHECK(error_id_of(make_req("http://127.0.0.1:1/", "FROB")) ==
              "http.bad_method: unknown HTTP method 'FROB' for http://127.0.0.1:1/");
    }
    SUBCASE("nothing listening is http.unreachable naming the URL and step")
    {
        std::string url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/x";
        auto got = error_id_of(make_req(url));
        CHECK(got.starts_with("http.unreachable: GET " + url + ": connect failed: "));
        CHECK(got.find("refused") != std::string::npos);
    }
    SUBCASE("an unresolvable host is http.unreachable")
    {
        auto got = error_id_of(make_req("http://perfgate-no-such-host.invalid/"));
        CHECK(got.starts_with("http.unreachable: GET http://perfgate-no-such-host.invalid/: resolve failed"));
    }
    SUBCASE("a server that never answers times out")
    {
        // Listening but never accepting: the kernel completes the connect, then nothing.
        asio::io_context ioc;
        tcp::acceptor silent(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
        std::string url = "http://127.0.0.1:" + std::to_string(silent.local_endpoint().port()) + "/";
        auto start = std::chrono::steady_clock::now();
        auto got = error_id_of(make_req(url, "GET", {}, std::chrono::milliseconds(300)));
        auto took = std::chrono::steady_clock::now() - start;
        CHECK(got.starts_with("http.unreachable: GET " + url + ": timed out after 300 ms"));
        CHECK(took >= std::chrono::milliseconds(250));
        CHECK(took < std::chrono::seconds(5));
    }
    SUBCASE("https to a plain HTTP server fails the TLS handshake")
    {
        perfgate::test::fake_github plain;
        std::string url = "https://127.0.0.1:" + std::to_string(plain.port()) + "/test/echo";
        auto got = error_id_of(make_req(url, "GET", {}, std::chrono::milliseconds(3000)));
        CHECK(got.starts_with("http.unreachable: GET " + url + ": TLS handshake failed"));
    }
}

TEST_CASE("https verifies the certificate chain and the host name")
{
    test_cert cert("DNS:localhost,IP:127.0.0.1");

    SUBCASE("an untrusted self-signed certificate is refused")
    {
        // An empty trust store: only the system store would be consulted otherwise,
        // and it does not hold our test certificate either.
        scoped_env no_store("SSL_CERT_FILE", (cert.dir / "none.pem").string());
        scoped_env no_dir("SSL_CERT_DIR", cert.dir.string());
        tls_server server(cert);
        std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/";
        auto got = error_id_of(make_req(url));
        CHECK(got.starts_with("http.unreachable: GET " + url + ": TLS handshake failed: "));
        CHECK(got.find("certificate") != std::string::npos);
    }
    SUBCASE("a trusted certificate for the host works, by IP and by name (SNI)")
    {
        scoped_env store("SSL_CERT_FILE", cert.cert.string());
        {
            tls_server server(cert);
            auto res = http_send(make_req("https://127.0.0.1:" + std::to_string(server.port()) + "/ok"));
            CHECK(res.status == 200);
            CHECK(res.body == "secure /ok");
        }
        {
            tls_server server(cert);
            auto res = http_send(make_req("https://localhost:" + std::to_string(server.port()) + "/named"));
            CHECK(res.body == "secure /named");
        }
    }
    SUBCASE("a trusted certificate for another host is refused")
    {
        test_cert other("DNS:other.example");
        scoped_env store("SSL_CERT_FILE", other.cert.string());
        tls_server server(other);
        std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/";
        auto got = error_id_of(make_req(url));
        CHECK(got.starts_with("http.unreachable: GET " + url + ": TLS handshake failed: "));
        CHECK(got.find("certificate") != std::string::npos);
    }
}

TEST_CASE("consecutive requests to one host reuse one connection")
{
    // client/http.hpp: one libcurl handle per thread keeps its connections,
    // so the pages of a comment list and the posts after them share one
    // connection (one TLS handshake on GitHub).
    perfgate::test::fake_github server;
    auto first = http_send(make_req(server.url() + "/test/echo?n=1"));
    auto second = http_send(make_req(server.url() + "/test/echo?n=2", "POST", "{}"));
    auto third = http_send(make_req(server.url() + "/test/echo?n=3"));
    CHECK(first.status == 200);
    CHECK(second.status == 200);
    CHECK(third.status == 200);
    CHECK(server.requests().size() == 3);
    CHECK(server.connections() == 1);
}

TEST_CASE("https goes through HTTPS_PROXY in one CONNECT tunnel, NO_PROXY goes direct")
{
    // libcurl (7.88 here) reads the proxy variables on every transfer and has
    // no built-in exception for loopback: 127.0.0.1 is proxied like any host
    // unless NO_PROXY names it. So the fake stays on 127.0.0.1 and a test
    // that had stopped going through the proxy would fail, not pass quietly.
    test_cert cert("IP:127.0.0.1");
    perfgate::test::fake_github server("ghs_faketoken", "github-actions[bot]", "Bot",
                                       perfgate::test::tls_files{cert.cert.string(), cert.key.string()});
    perfgate::test::connect_proxy proxy;
    scoped_env trust("SSL_CERT_FILE", cert.cert.string());
    // curl prefers the lower-case names: clear them so HTTPS_PROXY and NO_PROXY decide.
    scoped_env lower_proxy("https_proxy", std::nullopt);
    scoped_env lower_no_proxy("no_proxy", std::nullopt);
    scoped_env all_proxy("ALL_PROXY", std::nullopt);
    scoped_env upper_proxy("HTTPS_PROXY", proxy.url());
    const std::string authority = "127.0.0.1:" + std::to_string(server.port());
    REQUIRE(server.url() == "https://" + authority);

    SUBCASE("through the proxy: one tunnel for both requests")
    {
        scoped_env no_proxy("NO_PROXY", std::nullopt);
        auto first = http_send(make_req(server.url() + "/test/echo?n=1"));
        auto second = http_send(make_req(server.url() + "/test/echo?n=2", "POST", "{}"));
        CHECK(first.status == 200);
        CHECK(nlohmann::json::parse(second.body)["body"] == "{}");
        CHECK(proxy.connects() == std::vector<std::string>{authority});
        CHECK(proxy.connections() == 1);
        CHECK(server.connections() == 1); // the proxy's single upstream connection
        // The request inside the tunnel is an ordinary origin-form request.
        CHECK(server.requests().at(0).target == "/test/echo?n=1");
    }
    SUBCASE("NO_PROXY naming the host: direct, the proxy sees nothing")
    {
        scoped_env no_proxy("NO_PROXY", std::string("127.0.0.1"));
        auto res = http_send(make_req(server.url() + "/test/echo"));
        CHECK(res.status == 200);
        CHECK(proxy.connections() == 0);
        CHECK(server.requests().size() == 1);
    }
}

TEST_CASE("url_encode keeps unreserved characters only")
{
    using perfgate::client::url_encode;
    CHECK(url_encode("abcXYZ019-._~") == "abcXYZ019-._~");
    CHECK(url_encode("a b/c?d=e&f") == "a%20b%2Fc%3Fd%3De%26f");
    CHECK(url_encode("\xC3\xA9") == "%C3%A9");
    CHECK(url_encode("") == "");
}

TEST_CASE("a malformed --server URL is a usage error (exit 2), not an unreachable server (exit 4)")
{
    // docs/cli.md "Exit codes": exit 2 for usage or input errors, 4 for measurement or
    // environment failures such as an unreachable server. "notaurl" or
    // "ftp://x" is a mistake on the command line, which nothing retried fixes.
    std::string id;
    try {
        http_send(make_req("ftp://example.com/x"));
    } catch (const perfgate::error& e) {
        id = e.id();
    }
    REQUIRE(id == "http.bad_url");
    CHECK(perfgate::exit_code_for(id) == perfgate::exit_usage);
    CHECK(perfgate::exit_code_for("http.unreachable") == perfgate::exit_measurement);
}

TEST_CASE("server_client::upload sends one Idempotency-Key per run and repeats it on every retry")
{
    perfgate::test::fake_github server;
    perfgate::client::server_client client(server.url(), "demo", std::string("pg_token"));
    perfgate::model::ingest_request in;
    in.role = "baseline";
    in.git_sha = "abc1234";
    in.branch = "main";
    in.perf_csv = "10.0,msec,task-clock,10000,100.00,,\n";
    const std::string stored = R"({"run_id": 7, "samples": 1, "counters": 1, "warnings": []})";
    auto posts = [&] {
        std::vector<perfgate::test::recorded_request> out;
        for (const auto& r : server.requests()) {
            if (r.method == "POST" && r.path == "/api/v1/projects/demo/runs") out.push_back(r);
        }
        return out;
    };
    auto fault_of = [](int status, std::string body, int times) {
        perfgate::test::fault f;
        f.method = "POST";
        f.path_contains = "/api/v1/projects/demo/runs";
        f.status = status;
        f.body = std::move(body);
        f.times = times;
        return f;
    };

    SUBCASE("two 503s, then stored: three attempts, one key")
    {
        server.add_fault(fault_of(503, R"({"error":{"id":"http.over_capacity","message":"busy"}})", 2));
        server.add_fault(fault_of(201, stored, 1));
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = client.upload(in);
        CHECK(r.run_id == 7);
        // Pauses of 0.5 s and 1 s between the attempts.
        CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(1400));
        const auto sent = posts();
        REQUIRE(sent.size() == 3);
        const std::string key = sent[0].headers.at("idempotency-key");
        CHECK(key.size() == 64);
        CHECK(key.find_first_not_of("0123456789abcdef") == std::string::npos);
        for (const auto& p : sent) {
            CHECK(p.headers.at("idempotency-key") == key);
            CHECK(p.body == sent[0].body);
        }
        // The next run (even with the same content) gets another key.
        server.add_fault(fault_of(201, stored, 1));
        client.upload(in);
        REQUIRE(posts().size() == 4);
        CHECK(posts().back().headers.at("idempotency-key") != key);
    }
    SUBCASE("a 4xx is not retried")
    {
        server.add_fault(fault_of(409, R"({"error":{"id":"ingest.idempotency_conflict","message":"reused"}})", 1));
        try {
            client.upload(in);
            FAIL("expected server.rejected");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "server.rejected");
            CHECK(std::string(e.what()).find("HTTP 409: [ingest.idempotency_conflict] reused") != std::string::npos);
        }
        CHECK(posts().size() == 1);
    }
    SUBCASE("5xx every time: the last error, after 3 attempts")
    {
        server.add_fault(
            fault_of(500, R"j({"error":{"id":"internal","message":"internal server error (reference 1)"}})j", 3));
        try {
            client.upload(in);
            FAIL("expected server.failed");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "server.failed");
            CHECK(std::string(e.what()).find("(after 3 attempts)") != std::string::npos);
        }
        CHECK(posts().size() == 3);
    }
}
