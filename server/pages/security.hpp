// The dashboard's defences (private to server/pages/): the headers every
// page is sent with, the session cookie, and the checks a form post passes
// (its Origin, the session's CSRF token). pages.hpp says what they guard.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "server/pages/sessions.hpp"
#include "server/request_text.hpp"
#include "server/router.hpp"

namespace perfgate::server::pages {

// Content-Security-Policy (pages.hpp), nosniff, no framing, same-origin referrers.
void security_headers(response& res);

inline constexpr std::string_view cookie_name = "perfgate_session";

// The value of cookie `name` in the request's Cookie header(s); empty when absent.
std::string cookie_value(const request& req, std::string_view name);

// The session cookie for project's pages: HttpOnly, SameSite=Strict, Secure
// behind TLS (X-Forwarded-Proto: https); `expire` clears it.
std::string session_cookie(const request& req, const std::string& project, std::string_view id, bool expire);

// The live session the request's cookie names for project, if any.
std::optional<web_session> session_of(const request& req, context& ctx, const std::string& project);

// A form post must come from our own pages: the session's CSRF token, and
// an Origin header (browsers send one with every POST) naming this host.
// Both throw "auth.forbidden".
void check_form_origin(const request& req);
void check_csrf(const detail::query_params& form, const web_session& s);

} // namespace perfgate::server::pages
