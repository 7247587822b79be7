// The router: a pure mapping from one HTTP request to one response, in terms
// of the gate service (docs/http-api.md). No sockets here: the session
// (session.hpp) does transport, this decides meaning, so every route, every
// auth decision and every error body is testable without a network.
//
// The routes are one table, server/routes.hpp's routes(): each row's method,
// path, access rule, body rule, handler, wire types and summary. Matching,
// dispatch, the token rule, the /metrics labels and the OpenAPI document
// (docs/openapi.json, GET /api/v1/openapi.json) all read it; the dashboard's
// pages are pages/pages.hpp's.
//
// Paths match exactly: no route takes a trailing slash or an empty segment
// (404 http.not_found, saying so).
//
// Errors are {"error": {"id", "message"}}; status_for() gives a
// perfgate::error id its HTTP status from the error catalogue
// (model/error_catalogue.hpp, docs/errors.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/error_ids.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "model/error.hpp"
#include "server/pages/client_throttle.hpp"
#include "server/pages/page_cache.hpp"
#include "server/pages/sessions.hpp"

namespace perfgate::service {
class service;
struct token_grant;
} // namespace perfgate::service

namespace perfgate::server {

class metrics;

using request = boost::beast::http::request<boost::beast::http::string_body>;
using response = boost::beast::http::response<boost::beast::http::string_body>;

// What the router needs from the server; shared by all worker threads.
// The service must be thread-safe (the store serialises its writes). The
// router reaches the store only through it.
struct context {
    service::service& service;
    metrics& stats;
    bool public_read = false;  // GETs without a token (--public-read)
    bool bench_routes = false; // expose /bench/constant (hidden --bench-routes)
    // Dashboard sign-in sessions (pages/sessions.hpp).
    std::shared_ptr<pages::session_store> sessions = std::make_shared<pages::session_store>();
    // Dashboard sign-ins per client address (pages/client_throttle.hpp).
    std::shared_ptr<pages::client_throttle> signins = std::make_shared<pages::client_throttle>();
    // Page renders and history reads without a token or session, per client
    // address (pages/client_throttle.hpp).
    std::shared_ptr<pages::client_throttle> anonymous_reads = std::make_shared<pages::client_throttle>(
        pages::anonymous_read_burst, pages::anonymous_read_interval);
    // Proxies besides loopback whose X-Forwarded-For names the client (--trusted-proxy).
    std::vector<std::string> trusted_proxies{};
    // server_options::public_url: the base of absolute links; "" for none.
    std::string public_url{};
    // Rendered read-only pages (pages/page_cache.hpp); null: no caching.
    std::shared_ptr<pages::page_cache> page_cache = std::make_shared<pages::page_cache>();
};

// Maps one complete request to its response. Never throws: every error
// becomes a JSON error response (unexpected exceptions -> 500, logged as
// error_response() says, with the method and target).
// checked: the session's header stage (auth_gate.hpp) authorized this
// request's token for its route already (its grant); the token is not
// looked up a second time. peer: the connection's "address:port" (what the sign-in
// throttle counts, pages::client_address); empty without a socket.
// Every answer carries X-Content-Type-Options: nosniff and a
// Content-Security-Policy (default_security_headers).
response route(const request& req, context& ctx, const service::token_grant* checked = nullptr,
               std::string_view peer = {});

// Takes a response the router finishes after route() has returned, on
// another thread (the service's committer).
using responder = std::function<void(response&&)>;
// route(), for the session: a compare whose fresh report the service stores
// on its committer thread (service::commit_in_background) returns nullopt,
// and `later` is then called once, from that thread, with the response
// (the report, or the error that kept it from being stored). Every other
// request is answered here, and `later` is not called.
std::optional<response> route(const request& req, context& ctx, const service::token_grant* checked, responder later,
                              std::string_view peer = {});

// The route template a request matches ("POST /api/v1/projects/{project}/runs"),
// or "unmatched": a bounded label set for /metrics. Pure.
std::string_view route_label(const request& req);

// What every answer is sent with (issue 31, finding 12; docs/http-api.md):
// X-Content-Type-Options: nosniff, so that no browser reads a JSON or text
// answer as HTML or script, and, unless the answer has its own (pages,
// artifacts), the Content-Security-Policy api_security_policy: a JSON
// answer opened in a browser runs nothing, loads nothing, is framed nowhere.
inline constexpr std::string_view api_security_policy = "default-src 'none'; frame-ancestors 'none'";
void default_security_headers(response& res);

// Headers of a stored artifact (a flame graph SVG from a client): a
// Content-Security-Policy that sandboxes it (no script, no fetch; styles
// inline only), no MIME sniffing, framed only by this server's pages.
void set_artifact_headers(response& res);

// The HTTP status for a perfgate::error id, from the error catalogue
// (model/error_catalogue.hpp, docs/errors.md): "http.not_found" -> 404,
// "ingest.bad_csv" -> 422, ... Ids the catalogue lacks -> 500.
unsigned status_for(std::string_view error_id);

// A JSON error response {"error": {"id", "message"}} with status_for(id).
// For a 500 ("internal", "store.io", unknown ids) the body is
// {"id": "internal", "message": "internal server error (reference R)"} and
// other "store.*" ids keep their id and status with a message that only
// gives R: their messages name the database file and quote SQLite. The full
// message goes to stderr (the server log) with R, one line.
response error_response(std::string_view id, std::string_view message, unsigned version = 11, bool keep_alive = true);
inline response error_response(error_id id, std::string_view message, unsigned version = 11, bool keep_alive = true)
{
    return error_response(id.view(), message, version, keep_alive);
}

} // namespace perfgate::server
