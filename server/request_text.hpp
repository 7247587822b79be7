// Reading the parts of a request that the router and the header-stage gate
// (auth_gate.hpp) both read: one definition each, so the two agree.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/core/string.hpp>

#include "server/router.hpp"

namespace perfgate::server::detail {

// Boost 1.74's beast::string_view is boost::string_view.
inline std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

// RFC 3986 percent-decoding; '+' is a space only in query strings
// (application/x-www-form-urlencoded). nullopt on a broken %XX.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space);

// The token of "Authorization: Bearer <token>" ("Bearer" in any case, spaces
// around the token trimmed). Errors: "auth.missing_token" (no header),
// "auth.bad_token" (another scheme, or no token).
std::string_view bearer_token(const request& req);

} // namespace perfgate::server::detail
