#include "server/auth_gate.hpp"

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/beast/http/field.hpp>
#include <fmt/format.h>

#include "server/pages/pages.hpp"
#include "server/request_text.hpp"
#include "server/routes.hpp"
#include "service/service.hpp"

namespace perfgate::server {

namespace http = boost::beast::http;
using detail::sv;

namespace {

// The header's Content-Length, nullopt when there is none (chunked) or it
// is not a number (the parser refuses those).
std::optional<std::uint64_t> content_length(const request& header)
{
    const auto length = header.find(http::field::content_length);
    if (length == header.end()) return std::nullopt;
    std::uint64_t n = 0;
    const auto text = sv(length->value());
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return n;
}

// A dashboard request: forms are small, whoever sends them (pages.hpp).
std::optional<response> refuse_page(const request& header, context& ctx, std::string_view label)
{
    const std::string_view method = label.substr(0, label.find(' '));
    // A wrong method: route() answers it from the start line alone.
    if (sv(header.method_string()) != method) return route(header, ctx);
    if (method != "POST") return std::nullopt;
    const auto length = header.find(http::field::content_length);
    if (length != header.end() && sv(length->value()).size() > 0) {
        const auto n = content_length(header);
        if (!n || *n > pages::max_form_bytes) {
            return error_response(errors::http_body_too_large,
                                  fmt::format("a dashboard form takes at most {} bytes", pages::max_form_bytes),
                                  header.version(), header.keep_alive());
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<response> refuse_before_body(const request& header, context& ctx,
                                           std::optional<service::token_grant>* checked)
{
    if (checked) checked->reset();
    if (const auto page = pages::page_label(header)) return refuse_page(header, ctx, *page);
    const route_match m = match_route(header);
    // No route or a wrong method: route() answers these from the start line
    // alone, before it looks at a token, the body or the store.
    if (!m.row || (m.row->hidden && !ctx.bench_routes) || !m.method_allowed) return route(header, ctx);
    // The router's own rule (routes.hpp): open routes and public reads pass.
    if (!needs_token(*m.row, header, ctx)) return std::nullopt;
    try {
        auto grant = check_token(m, header, ctx);
        if (checked) *checked = std::move(grant);
        // An artifact announced larger than the route takes: 413 before
        // its body is read, with the message the service would give.
        const std::uint64_t limit = m.row->max_artifact_bytes;
        if (const auto n = content_length(header); limit != 0 && n && *n > limit) {
            return error_response(errors::artifact_too_large,
                                  fmt::format("a flame graph of {} bytes is larger than this server's limit of {} "
                                              "bytes ({} MiB)",
                                              *n, limit, limit >> 20),
                                  header.version(), header.keep_alive());
        }
        return std::nullopt;
    } catch (const error& e) {
        return error_response(e.id(), e.what(), header.version(), header.keep_alive());
    } catch (const std::exception& e) {
        return error_response(errors::internal, e.what(), header.version(), header.keep_alive());
    }
}

} // namespace perfgate::server
