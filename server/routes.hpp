// The HTTP API's routes, declared once: one row per (method, path) with its
// access rule, body rule, handler, wire types and summary. Everything that
// knows a route reads this table (server/router.cpp defines it):
//   - matching and dispatch (router.cpp: match(), route());
//   - who needs a token (needs_token(): the router and the header-stage
//     gate, auth_gate.cpp, ask the same function);
//   - the body limit (session.cpp: takes_body());
//   - the /metrics labels (route_label(), a bounded set);
//   - the OpenAPI document (server/openapi.cpp, docs/openapi.json, served
//     at GET /api/v1/openapi.json) and the docs check (tests/test_router.cpp:
//     every row is in docs/http-api.md).
// The dashboard's pages (/p/..., /assets/...) are not API routes: they are
// matched by pages/pages.cpp (pages::page_label).
//
// Adding a route: a row in routes() and its handler in router.cpp, its wire
// types in api/ (CONTRIBUTING.md, "Add an HTTP route").
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http/verb.hpp>

#include "model/token_scope.hpp"
#include "server/router.hpp"
#include "service/service.hpp"

namespace perfgate::server {

namespace detail {
class query_params;
}

// Who may call a route: the token scope it needs (model/token_scope.hpp,
// docs/http-api.md "Token scopes").
enum class access {
    open,     // anyone: /healthz, /metrics, the OpenAPI document
    read,     // a token of the project with scope read, unless the server runs with --public-read
    upload,   // a token with scope upload (or baseline): runs, compares and their artifacts
    baseline, // a token with scope baseline: what only the protected branch may say (a testbed's qualification)
    admin,    // a token with scope admin: webhooks (their URLs are credentials), triage, acceptances
};

// A route's request body.
enum class body_rule {
    none,  // no body: Content-Length 0 or none, else 413 http.body_too_large
    bytes, // up to --max-body (session_limits::body_limit)
};

// A query parameter a route takes; any other is 400 http.bad_param naming it.
struct query_param {
    std::string_view name;
    bool required = false;
    std::string_view about; // one line, for the OpenAPI document
};

// One answer a route gives on success (errors are {"error": {id, message}}
// with the catalogue's status, docs/errors.md).
struct answer {
    unsigned status = 200;
    std::string_view content_type = "application/json";
    std::string_view schema{}; // api::schemas() name of a JSON body; "" for none
};

struct route_match;

// What a handler gets: the request, the context, the matched row and path
// segments, the parsed query, and, for a compare, where to answer later.
struct route_call {
    const request& req;
    context& ctx;
    const route_match& match;
    const detail::query_params& query;
    const responder* later; // null: answer now
    std::string_view peer;
    // The request's token, authorized for the route (null: none was needed
    // and none sent): who writes (run_record::written_by) and what it may.
    const service::token_grant* token = nullptr;
};
using route_handler = std::optional<response> (*)(const route_call&);

struct api_route {
    boost::beast::http::verb method;
    std::string_view path;  // "/api/v1/projects/{project}/comparisons/{id}"
    std::string_view label; // "<METHOD> <path>": the /metrics label
    access who;
    body_rule body;
    route_handler handler;
    std::string_view summary;
    std::vector<query_param> query{};
    std::vector<std::string_view> request_types{}; // media types of the body it takes
    std::string_view request_schema{};             // api::schemas() name of a JSON body
    std::vector<answer> answers{};
    bool hidden = false; // not in the OpenAPI document (/bench/constant)
    std::string_view operation_id{};
    // An artifact's size limit besides --max-body, 0 for none: a
    // Content-Length over it is 413 artifact.too_large at the header, before
    // the body is read (auth_gate.hpp); the service checks the whole body.
    std::uint64_t max_artifact_bytes = 0;
};

// The table, in the order of docs/http-api.md.
std::span<const api_route> routes();

// A request's route: the row whose path matches (nullptr for none) and
// whether its method is the row's; on a path with several methods, the row
// of the request's method, else the first.
struct route_match {
    const api_route* row = nullptr;
    bool method_allowed = false;
    std::string project; // {project}, percent-decoded
    std::string id;      // {id}, as sent
};
route_match match_route(const request& req);

// Whether this request needs a valid token of its project: the one rule
// for the router and the header-stage gate (auth_gate.hpp). open: never;
// upload, admin: always; read: unless --public-read and no Authorization
// header was sent (a token that is sent is checked, so that a client learns
// whether it would be accepted for a write).
bool needs_token(const api_route& r, const request& req, const context& ctx);
// The scope the route needs of that token: nullopt for open routes and for
// reads with --public-read (any valid token of the project may read then).
std::optional<model::scope> needed_scope(const api_route& r, const context& ctx);
// Both rules applied: nullopt when the request needs no token, else its
// token's grant; "auth.missing_token", "auth.bad_token", "auth.forbidden"
// (another project's), "auth.missing_scope" (403, naming the scope).
std::optional<service::token_grant> check_token(const route_match& m, const request& req, const context& ctx);

// Whether the request's route takes a body (session.cpp sets its body limit
// from this): API routes by their row, dashboard pages unless GET.
bool takes_body(const request& req);

} // namespace perfgate::server
