#include "server/auth_gate.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include <boost/beast/http/field.hpp>

#include "service/service.hpp"

namespace perfgate::server {

namespace http = boost::beast::http;

namespace {

std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

// route_label() is "<METHOD> <template>"; these are the templates with a
// {project} segment, /api/v1/projects/{project}/...
constexpr std::string_view project_prefix = "/api/v1/projects/{project}/";

int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
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
    const std::string_view raw = path.substr(0, path.find('/'));
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] != '%') {
            out += raw[i];
            continue;
        }
        if (i + 2 >= raw.size()) return std::nullopt;
        const int hi = hex_value(raw[i + 1]);
        const int lo = hex_value(raw[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

// The router's token rules (router.cpp, authorize): "Bearer" in any case,
// then the token with surrounding spaces trimmed.
void authorize(const request& req, context& ctx, const std::string& project)
{
    const std::string_view header = sv(req[http::field::authorization]);
    if (header.empty()) {
        throw error("auth.missing_token", "missing 'Authorization: Bearer <token>' header "
                                          "(create a token with `perfgate token create`)");
    }
    constexpr std::string_view scheme = "bearer ";
    if (header.size() <= scheme.size() ||
        !std::equal(scheme.begin(), scheme.end(), header.begin(),
                    [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
        throw error("auth.bad_token", "Authorization header: expected 'Bearer <token>'");
    }
    std::string_view token = header.substr(scheme.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    ctx.service.authorize(token, project);
}

} // namespace

std::optional<response> refuse_before_body(const request& header, context& ctx)
{
    const std::string_view label = route_label(header);
    const std::string_view method = label.substr(0, label.find(' '));
    const std::string_view path_template = label.substr(label.find(' ') + 1);
    const bool routed = label != "unmatched" && (path_template != "/bench/constant" || ctx.bench_routes);
    // No route or a wrong method: route() answers these from the start line
    // alone, before it looks at a token, the body or the store.
    if (!routed || sv(header.method_string()) != method) return route(header, ctx);

    if (!path_template.starts_with(project_prefix)) return std::nullopt;   // /healthz, /metrics
    const bool write = method != "GET";
    if (!write && ctx.public_read) return std::nullopt;
    try {
        const auto project = project_of(sv(header.target()));
        if (!project) {   // unreachable: the router has no route for such a path either
            return error_response("http.not_found", "no route for this path", header.version(), header.keep_alive());
        }
        authorize(header, ctx, *project);
        return std::nullopt;
    } catch (const error& e) {
        return error_response(e.id(), e.what(), header.version(), header.keep_alive());
    } catch (const std::exception& e) {
        return error_response("internal", e.what(), header.version(), header.keep_alive());
    }
}

} // namespace perfgate::server
