#include "server/auth_gate.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/beast/http/field.hpp>
#include <fmt/format.h>

#include "server/pages/pages.hpp"
#include "server/request_text.hpp"
#include "service/service.hpp"

namespace perfgate::server {

namespace http = boost::beast::http;
using detail::sv;

namespace {

// route_label() is "<METHOD> <template>"; these are the templates with a
// {project} segment, /api/v1/projects/{project}/...
constexpr std::string_view project_prefix = "/api/v1/projects/{project}/";

constexpr std::string_view flame_graph_template = "/api/v1/projects/{project}/comparisons/{id}/flame-graph";

// A flame graph upload announced larger than the service takes
// (service::max_flame_graph_bytes): 413 before its body is read, with the
// message the service would give.
std::optional<response> too_large_flame_graph(const request& header)
{
    const auto length = header.find(http::field::content_length);
    if (length == header.end()) return std::nullopt; // chunked: the service checks the whole body
    std::uint64_t n = 0;
    const auto text = sv(length->value());
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || n <= service::service::max_flame_graph_bytes) {
        return std::nullopt;
    }
    return error_response(
        errors::artifact_too_large,
        fmt::format("a flame graph of {} bytes is larger than this server's limit of {} bytes ({} MiB)", n,
                    service::service::max_flame_graph_bytes, service::service::max_flame_graph_bytes >> 20),
        header.version(), header.keep_alive());
}

// The fourth path segment of /api/v1/projects/{project}/..., percent-decoded
// as the router decodes it; nullopt when it cannot be decoded (the router
// then has no route either).
std::optional<std::string> project_of(std::string_view target)
{
    std::string_view path = target.substr(0, target.find('?'));
    constexpr std::string_view prefix = "/api/v1/projects/";
    if (!path.starts_with(prefix)) return std::nullopt;
    path.remove_prefix(prefix.size());
    return detail::percent_decode(path.substr(0, path.find('/')), false);
}


// The router's token rules (request_text.hpp, bearer_token).
void authorize(const request& req, context& ctx, const std::string& project)
{
    ctx.service.authorize(detail::bearer_token(req), project);
}

} // namespace

std::optional<response> refuse_before_body(const request& header, context& ctx, bool* token_checked)
{
    if (token_checked) *token_checked = false;
    const std::string_view label = route_label(header);
    const std::string_view method = label.substr(0, label.find(' '));
    const std::string_view path_template = label.substr(label.find(' ') + 1);
    const bool routed = label != "unmatched" && (path_template != "/bench/constant" || ctx.bench_routes);
    // No route or a wrong method: route() answers these from the start line
    // alone, before it looks at a token, the body or the store.
    if (!routed || sv(header.method_string()) != method) return route(header, ctx);

    if (path_template.starts_with("/p/") && method == "POST") {
        // Dashboard forms: small, whoever sends them (pages.hpp).
        const auto length = header.find(http::field::content_length);
        if (length != header.end() && sv(length->value()).size() > 0) {
            std::uint64_t n = 0;
            const auto text = sv(length->value());
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
            if (ec != std::errc{} || end != text.data() + text.size() || n > pages::max_form_bytes) {
                return error_response(errors::http_body_too_large,
                                      fmt::format("a dashboard form takes at most {} bytes", pages::max_form_bytes),
                                      header.version(), header.keep_alive());
            }
        }
        return std::nullopt;
    }
    if (!path_template.starts_with(project_prefix)) return std::nullopt; // /healthz, /metrics, pages
    const bool write = method != "GET";
    if (!write && ctx.public_read) return std::nullopt;
    try {
        const auto project = project_of(sv(header.target()));
        if (!project) { // unreachable: the router has no route for such a path either
            return error_response(errors::http_not_found, "no route for this path", header.version(),
                                  header.keep_alive());
        }
        authorize(header, ctx, *project);
        if (token_checked) *token_checked = true;
        if (path_template == flame_graph_template && method == "PUT") return too_large_flame_graph(header);
        return std::nullopt;
    } catch (const error& e) {
        return error_response(e.id(), e.what(), header.version(), header.keep_alive());
    } catch (const std::exception& e) {
        return error_response("internal", e.what(), header.version(), header.keep_alive());
    }
}

} // namespace perfgate::server
