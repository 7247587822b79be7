#include "runner/http_client.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "stats/error.hpp"

namespace perfgate::runner {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// Largest response body we accept. GitHub's biggest answers we read are
// comment pages (100 comments of up to 65,536 characters each, JSON-escaped),
// so 64 MiB leaves room; Beast's default of 8 MiB would not.
constexpr std::uint64_t body_limit = 64ull * 1024 * 1024;
// Response header limit. Beast's default (8 KiB) is below what some proxies
// and GitHub (CSP, Link, rate-limit headers) can send in one response.
constexpr std::uint32_t header_limit = 64 * 1024;

constexpr const char* user_agent = "perfgate/0.1 (+https://github.com/perfgate/perfgate)";

struct parsed_url {
    bool tls = false;
    std::string host;     // without brackets for IPv6 literals
    std::string port;
    std::string target;   // path and query, at least "/"
    bool default_port = true;
};

bool iequals(std::string_view a, std::string_view b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
}

[[noreturn]] void bad_url(std::string_view url, std::string_view why)
{
    throw error("http.bad_url", fmt::format("bad URL '{}': {}", url, why));
}

parsed_url parse_url(std::string_view url)
{
    parsed_url out;
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) bad_url(url, "expected http://HOST[:PORT]/PATH or https://...");
    std::string_view scheme = url.substr(0, scheme_end);
    if (iequals(scheme, "https")) {
        out.tls = true;
        out.port = "443";
    } else if (iequals(scheme, "http")) {
        out.port = "80";
    } else {
        bad_url(url, fmt::format("unsupported scheme '{}' (only http and https)", scheme));
    }

    std::string_view rest = url.substr(scheme_end + 3);
    auto path_start = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, path_start);
    std::string_view target = path_start == std::string_view::npos ? std::string_view{} : rest.substr(path_start);
    // A fragment is never sent to the server (RFC 9110 §7.1).
    if (auto hash = target.find('#'); hash != std::string_view::npos) target = target.substr(0, hash);
    if (authority.find('@') != std::string_view::npos) {
        bad_url(url, "user:password@ in URLs is not supported; pass credentials as a header");
    }
    if (authority.empty()) bad_url(url, "no host");

    std::string_view host = authority;
    std::string_view port;
    if (authority.front() == '[') {   // IPv6 literal, RFC 3986 §3.2.2
        auto close = authority.find(']');
        if (close == std::string_view::npos) bad_url(url, "unterminated '[' in host");
        host = authority.substr(1, close - 1);
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') bad_url(url, "unexpected characters after ']'");
            port = after.substr(1);
        }
    } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (host.empty()) bad_url(url, "no host");
    if (!port.empty()) {
        unsigned value = 0;
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
            bad_url(url, fmt::format("bad port '{}'", port));
        }
        out.default_port = port == out.port;
        out.port = std::string(port);
    }
    out.host = std::string(host);
    out.target = target.empty() ? "/" : std::string(target);
    if (out.target.front() == '?') out.target.insert(0, "/");
    return out;
}

// Runs one asynchronous operation to completion on ioc and returns its error.
// Beast's tcp_stream timeouts only apply to asynchronous operations, so the
// client is written as a sequence of async steps, each run to completion here.
template <class Start>
error_code run_step(asio::io_context& ioc, Start&& start)
{
    error_code result = asio::error::would_block;
    start([&result](error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
}

class exchange {
public:
    exchange(const http_request& req, const parsed_url& url)
        : req_(req), url_(url), deadline_(std::chrono::steady_clock::now() + req.timeout) {}

    http_response run()
    {
        tcp::resolver resolver(ioc_);
        tcp::resolver::results_type endpoints;
        check(run_step(ioc_, [&](auto handler) {
                  resolver.async_resolve(url_.host, url_.port,
                                         [&endpoints, handler](error_code ec, tcp::resolver::results_type r) {
                                             endpoints = std::move(r);
                                             handler(ec);
                                         });
              }),
              "resolve");

        http::request<http::string_body> request = build_request();
        http::response_parser<http::string_body> parser;
        parser.body_limit(body_limit);
        parser.header_limit(header_limit);
        beast::flat_buffer buffer;

        if (url_.tls) {
            ssl::context ctx(ssl::context::tls_client);
            // The system store (/etc/ssl/certs; SSL_CERT_FILE / SSL_CERT_DIR
            // override it as OpenSSL documents for its default paths).
            ctx.set_default_verify_paths();
            ctx.set_verify_mode(ssl::verify_peer);
            beast::ssl_stream<beast::tcp_stream> stream(ioc_, ctx);
            // Certificate must name the host we asked for (RFC 6125).
            stream.set_verify_callback(ssl::host_name_verification(url_.host));
            // SNI: without it, shared front ends (GitHub's included) may serve
            // the wrong certificate.
            if (!SSL_set_tlsext_host_name(stream.native_handle(), url_.host.c_str())) {
                fail("TLS setup", error_code(static_cast<int>(::ERR_get_error()), asio::error::get_ssl_category()));
            }
            connect(beast::get_lowest_layer(stream), endpoints);
            expire(beast::get_lowest_layer(stream));
            check(run_step(ioc_, [&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); }),
                  "TLS handshake");
            transfer(stream, request, parser, buffer);
            // Best effort: many servers close without close_notify, and the
            // response is complete already.
            expire(beast::get_lowest_layer(stream));
            run_step(ioc_, [&](auto handler) { stream.async_shutdown(handler); });
        } else {
            beast::tcp_stream stream(ioc_);
            connect(stream, endpoints);
            transfer(stream, request, parser, buffer);
            error_code ignored;
            stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        }
        return to_response(parser.release());
    }

private:
    [[noreturn]] void fail(std::string_view step, error_code ec) const
    {
        std::string why = ec == beast::error::timeout
            ? fmt::format("timed out after {} ms", req_.timeout.count())
            : ec.message();
        throw error("http.unreachable", fmt::format("{} {}: {} failed: {}", req_.method, req_.url, step, why));
    }
    void check(error_code ec, std::string_view step) const
    {
        if (ec) fail(step, ec);
    }
    void expire(beast::tcp_stream& s) const { s.expires_at(deadline_); }

    void connect(beast::tcp_stream& s, const tcp::resolver::results_type& endpoints)
    {
        expire(s);
        check(run_step(ioc_, [&](auto handler) { s.async_connect(endpoints, handler); }), "connect");
    }

    template <class Stream>
    void transfer(Stream& stream, http::request<http::string_body>& request,
                  http::response_parser<http::string_body>& parser, beast::flat_buffer& buffer)
    {
        expire(beast::get_lowest_layer(stream));
        check(run_step(ioc_, [&](auto handler) { http::async_write(stream, request, handler); }), "write");
        expire(beast::get_lowest_layer(stream));
        check(run_step(ioc_, [&](auto handler) { http::async_read(stream, buffer, parser, handler); }), "read");
    }

    http::request<http::string_body> build_request() const
    {
        http::verb verb = http::string_to_verb(req_.method);
        if (verb == http::verb::unknown) {
            throw error("http.bad_method", fmt::format("unknown HTTP method '{}' for {}", req_.method, req_.url));
        }
        http::request<http::string_body> r{verb, url_.target, 11};
        // IPv6 literals go back into brackets; the port only when not the default.
        std::string host = url_.host.find(':') != std::string::npos ? "[" + url_.host + "]" : url_.host;
        if (!url_.default_port) host += ":" + url_.port;
        r.set(http::field::host, host);
        r.set(http::field::user_agent, user_agent);
        for (const auto& [name, value] : req_.headers) r.set(name, value);
        r.body() = req_.body;
        r.prepare_payload();
        return r;
    }

    static http_response to_response(http::response<http::string_body>&& r)
    {
        http_response out;
        out.status = static_cast<int>(r.result_int());
        for (const auto& field : r) {
            out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
        }
        out.body = std::move(r.body());
        return out;
    }

    const http_request& req_;
    const parsed_url& url_;
    std::chrono::steady_clock::time_point deadline_;
    asio::io_context ioc_;
};

} // namespace

std::optional<std::string> http_response::header(std::string_view name) const
{
    for (const auto& [key, value] : headers) {
        if (iequals(key, name)) return value;
    }
    return std::nullopt;
}

http_response http_send(const http_request& req)
{
    parsed_url url = parse_url(req.url);
    return exchange(req, url).run();
}

std::string url_encode(std::string_view s)
{
    // RFC 3986 §2.3: unreserved characters stay, everything else is %XX.
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += c;
        } else {
            out += fmt::format("%{:02X}", u);
        }
    }
    return out;
}

} // namespace perfgate::runner
