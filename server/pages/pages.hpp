// The dashboard: HTML pages under /p/{project} and their static files under
// /assets/, served by the gate server next to the JSON API and built from
// the same service calls, so a page shows what the API returns.
//
//   GET  /p/{project}                       overview: benchmarks x testbeds, sparklines, recent comparisons, open alerts
//   GET  /p/{project}/series?benchmark=&counter=[&testbed=][&branch=][&range=30d|90d|all][&x=run|date][&log=1][&from=&to=]
//   GET  /p/{project}/comparisons/{id}[?only=regressions][&gated=1]
//   GET  /p/{project}/compare?base=REF&head=REF   REF: run id or git sha (service::pairs_for); runs the
//                                            comparison (stored, idempotent), shows it
//   GET  /p/{project}/alerts[?status=&benchmark=&testbed=]
//   POST /p/{project}/alerts/{id}            triage form (status, note, csrf) -> 303
//   GET  /p/{project}/runs/{id}
//   GET  /p/{project}/signin[?next=], POST /p/{project}/signin (token, next) -> 303 + cookie
//   POST /p/{project}/signout (csrf)
//   any other /p/{project}/... path         an HTML 404 page
//   GET  /assets/{name}                      embedded static files (ETag, 304)
//
// Access: with --public-read the pages are open; otherwise a page without a
// session for its project is a 303 to the sign-in page, which takes a project
// token and sets an HttpOnly, SameSite=Strict session cookie (Secure when
// the request came through TLS: X-Forwarded-Proto: https). Triage always
// needs a session (a token: a write) and the session's CSRF token, and a
// cross-origin Origin header is refused.
//
// The read-only pages (overview, series, comparison, run) are served from a
// page cache (page_cache.hpp) while the store has not been written.
//
// Every page is sent with a Content-Security-Policy without 'unsafe-inline':
// the only scripts are /assets/*.js; page data travels as JSON in a
// <script type="application/json"> element (html::writer::json_data).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include "server/router.hpp"

namespace perfgate::server::pages {

// Forms are small: a triage note is at most 4 KiB. Whatever the framing
// (Content-Length or chunked), a longer form body is 413 as soon as it is
// exceeded, and the whole body must arrive within form_read_timeout (or
// --read-timeout-ms if shorter): a browser sends it at once. The sender may
// have no token (sign-in), so while its body is read the connection stays
// evictable at the connection cap, like one waiting for a header
// (server/session.cpp, docs/http-api.md#connections).
inline constexpr std::size_t max_form_bytes = 16 * 1024;
inline constexpr std::chrono::milliseconds form_read_timeout{5000};

inline constexpr std::string_view content_security_policy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

// The /metrics label of a page or asset request ("GET /p/{project}/series"),
// nullopt when the path is not under /p/ or /assets/.
std::optional<std::string_view> page_label(const request& req);

// Answers a request whose page_label() is set. Page errors are HTML pages
// with the error's status; errors with internal detail are rethrown for the
// router to scrub. peer: the connection's "address:port" (route()).
response handle(const request& req, context& ctx, std::string_view peer = {});

} // namespace perfgate::server::pages
