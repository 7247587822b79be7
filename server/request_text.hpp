// Reading the parts of a request that the router and the header-stage gate
// (auth_gate.hpp) both read: one definition each, so the two agree.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/core/string.hpp>

#include "server/router.hpp"

namespace perfgate::server::detail {

// Boost 1.74's beast::string_view is boost::string_view.
inline std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

// RFC 3986 percent-decoding; '+' is a space only in query strings
// (application/x-www-form-urlencoded). nullopt on a broken %XX.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space);

// The segments of a path: "/a/b/" -> {"a", "b", ""} (the leading '/'
// dropped, empty segments kept so that callers can refuse them).
std::vector<std::string_view> path_segments(std::string_view path);

// The token of "Authorization: Bearer <token>" ("Bearer" in any case, spaces
// around the token trimmed). Errors: "auth.missing_token" (no header),
// "auth.bad_token" (another scheme, or no token).
std::string_view bearer_token(const request& req);

// A query string (or an application/x-www-form-urlencoded body), decoded.
// A repeated key keeps its last value. Errors: "http.bad_param" for a
// broken %XX.
class query_params {
public:
    explicit query_params(std::string_view query);

    [[nodiscard]] std::optional<std::string> get(std::string_view key) const;
    // "http.missing_param" when absent or empty.
    [[nodiscard]] std::string required(std::string_view key) const;
    // Every parameter is one of `known`, else "http.bad_param" naming it: a
    // typo (`brnach=main`) must not silently widen a query or store a run
    // under the default benchmark.
    void only(std::initializer_list<std::string_view> known) const;
    // The same for a route's declared parameters (routes.hpp).
    void only(std::span<const std::string_view> known) const;
    // The parameters, decoded, one per key (the first given), in key order,
    // as one string that tells any two different sets apart: what a cache
    // keys a page on, so that reordered or re-encoded spellings of one
    // request are one entry. Parameters named in `ignored` are left out.
    [[nodiscard]] std::string canonical(std::initializer_list<std::string_view> ignored = {}) const;

private:
    std::map<std::string, std::string, std::less<>> values_;
};

} // namespace perfgate::server::detail
