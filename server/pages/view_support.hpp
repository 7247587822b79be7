// What the dashboard's views share (private to server/pages/): the state a
// page is made in, the page frame (header, error page, redirects), the
// formatting of numbers and dates, and the addresses of pages.
//
// Every view file (overview_view.cpp, series_view.cpp, ...) includes this;
// views.hpp declares the views themselves for the router in pages.cpp.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/status.hpp>
#include <nlohmann/json.hpp>

#include "model/token_scope.hpp"
#include "server/pages/html.hpp"
#include "server/pages/page_cache.hpp"
#include "server/pages/sessions.hpp"
#include "server/request_text.hpp"
#include "server/router.hpp"

namespace perfgate::server::pages {

namespace http = boost::beast::http;
using detail::query_params;
using detail::sv;
using html::markup;
using html::writer;
using nlohmann::json;

inline boost::beast::string_view bsv(std::string_view s) { return {s.data(), s.size()}; }

// One request to one page of one project: its session, when it has one.
struct page_state {
    const request& req;
    context& ctx;
    const std::string& project;
    std::optional<web_session> session;
    std::string_view peer; // the connection's "address:port" (route()), empty without a socket
};

// ---------------------------------------------------------------------------
// Formatting

// "2026-11-26 12:07", UTC.
std::string iso_date(std::int64_t unix_seconds);
// `digits` significant digits; "–" for none or not finite.
std::string number(std::optional<double> v, int digits = 4);
// "+1.25%"; "–" for none or not finite.
std::string percent(std::optional<double> v);
// A commit's sha (its first 12 digits) as <code>, inside a link to
// {repository}/commit/{sha} when the project has a repository URL
// (perfgate project --repository-url); the full sha as its title.
void commit_ref(writer& w, const std::optional<std::string>& repository, const std::string& sha);
// Which token stored a run or an acceptance: "token 'push-ci' (#3)", or
// "no token (the database's own CLI)" (issue 43: a run is only as
// trustworthy as the token that wrote it).
std::string written_by_text(const std::optional<model::token_ref>& by);

// ---------------------------------------------------------------------------
// Addresses and parameters

// "/p/{project}", the project percent-encoded.
std::string project_path(const std::string& project);
// A series page; empty testbed or branch are left out of the query.
std::string series_url(const std::string& project, std::string_view benchmark, std::string_view counter,
                       std::string_view testbed = {}, std::string_view branch = {});
// text as an id >= 1, else "http.bad_param" naming `what`.
std::int64_t positive_id(const std::string& text, std::string_view what);
// Query parameter `key`: one of `allowed`, the first when absent, else "http.bad_param".
std::string one_of(const query_params& q, std::string_view key, std::initializer_list<std::string_view> allowed);

// ---------------------------------------------------------------------------
// Responses

// An HTML page: no-store, the security headers (security.hpp).
response html_response(http::status status, std::string body, const request& req);
// A 303 to location, setting cookie when given.
response redirect(std::string_view location, const request& req, std::optional<std::string> cookie = std::nullopt);
// The page frame (head, header with sign-in / sign-out, title) around a view.
response render(const page_state& p, const page_view& v, http::status status = http::status::ok);
// A page saying `message`, with a link back to the overview.
response error_page(const page_state& p, http::status status, std::string_view message);

} // namespace perfgate::server::pages
