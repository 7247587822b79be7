// The HTTP client of perfgate: libcurl behind a small synchronous interface,
// for http:// and https:// URLs. Used for --server mode (client/server_client)
// and the GitHub API (github/).
//
// What libcurl brings: TLS with certificates verified against the system
// store (or SSL_CERT_FILE / SSL_CERT_DIR / CURL_CA_BUNDLE when set: a
// self-hosted runner behind a TLS-inspecting proxy names its CA there),
// proxies from the environment (HTTPS_PROXY / https_proxy for https URLs,
// http_proxy for http URLs, ALL_PROXY, NO_PROXY / no_proxy), up to 5
// redirects (http and https only; an Authorization header is not sent on to
// another host), and connections kept open and reused: each thread keeps one
// libcurl handle, so the pages of a comment list share one TLS connection.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfgate::client {

struct http_request {
    std::string method = "GET"; // GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS
    std::string url;            // http://host[:port]/path?query or https://...
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::chrono::milliseconds timeout{30000}; // whole exchange
    // Connect to this numeric address and port instead of resolving the
    // URL's host (the Host header and TLS name stay the URL's): the address
    // a caller has checked is the one connected to (libcurl's
    // CURLOPT_CONNECT_TO). No proxy is used then. Empty: resolve as usual.
    std::string connect_address;
    unsigned short connect_port = 0;
    // false: a 3xx is the response, its Location not followed.
    bool follow_redirects = true;
    // A PEM file of CA certificates to verify the server with, instead of
    // the system store and SSL_CERT_FILE / CURL_CA_BUNDLE: GitLab's
    // CI_SERVER_TLS_CA_FILE for a self-managed instance. "" for none.
    std::string ca_file;
};

struct http_response {
    int status = 0;
    std::vector<std::pair<std::string, std::string>> headers; // of the final response
    std::string body;
    // Case-insensitive header lookup.
    [[nodiscard]] std::optional<std::string> header(std::string_view name) const;
};

// Sends one request and reads the whole response (at most 64 MiB of body).
// Any HTTP status is a response, not an error. Errors (perfgate::error), each
// naming the URL: "http.bad_url" (not http(s), no host, a bad port,
// user:password@), "http.bad_method", "http.unreachable" (resolve, connect,
// proxy, TLS, timeout: the message says which step failed),
// "http.bad_response" (a body over the limit, a broken response).
http_response http_send(const http_request& req);

// Why an exchange got no response, in classes a caller may show to whoever
// chose the URL (alert webhooks): no finer (no errno, no TLS detail).
// response: a body over the limit; other: any other failure (a reset, not
// HTTP, a broken response).
enum class http_failure { none, resolve, connect, timeout, tls, response, other };
struct http_outcome {
    std::optional<http_response> response; // set when failure is none
    http_failure failure = http_failure::none;
    std::string message; // as http_send's error would say it, naming the URL
};
// http_send, with a failed exchange (resolve, connect, TLS, timeout, a broken
// or too large response) as an outcome instead of an error. A bad request
// (URL, method, header) or libcurl missing is still thrown.
http_outcome http_try(const http_request& req);

// Percent-encodes a path segment or query value (RFC 3986 unreserved kept).
std::string url_encode(std::string_view s);

} // namespace perfgate::client
