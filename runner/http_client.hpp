// A small synchronous HTTP/1.1 client over Boost.Beast, for http:// and
// https:// URLs (HTTPS via OpenSSL, certificates verified against the system
// store, SNI set). Used for --server mode (upload, history) and the GitHub API.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfgate::runner {

struct http_request {
    std::string method = "GET";
    std::string url;   // http://host[:port]/path?query or https://...
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::chrono::milliseconds timeout{30000};   // whole exchange
};

struct http_response {
    int status = 0;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    // Case-insensitive header lookup.
    [[nodiscard]] std::optional<std::string> header(std::string_view name) const;
};

// Sends one request and reads the whole response. Any HTTP status is a
// response, not an error. Errors (perfgate::error): "http.bad_url",
// "http.unreachable" (resolve/connect/TLS/timeout), naming the URL.
http_response http_send(const http_request& req);

// Percent-encodes a query parameter value.
std::string url_encode(std::string_view s);

} // namespace perfgate::runner
