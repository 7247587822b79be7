#include "server/pages/security.hpp"

#include <chrono>

#include <boost/beast/http/field.hpp>
#include <fmt/format.h>

#include "model/error.hpp"
#include "server/pages/pages.hpp"
#include "server/pages/view_support.hpp"
#include "service/service.hpp"

namespace perfgate::server::pages {

void security_headers(response& res)
{
    res.set("Content-Security-Policy", bsv(content_security_policy));
    res.set("X-Content-Type-Options", "nosniff");
    res.set("X-Frame-Options", "DENY");
    res.set("Referrer-Policy", "same-origin");
}

// ---------------------------------------------------------------------------
// Sessions and cookies

std::string cookie_value(const request& req, std::string_view name)
{
    const auto [first, last] = req.equal_range(http::field::cookie);
    for (auto field = first; field != last; ++field) {
        std::string_view all = sv(field->value());
        while (!all.empty()) {
            const auto semi = all.find(';');
            std::string_view pair = all.substr(0, semi);
            all = semi == std::string_view::npos ? std::string_view{} : all.substr(semi + 1);
            while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
            const auto eq = pair.find('=');
            if (eq != std::string_view::npos && pair.substr(0, eq) == name) return std::string(pair.substr(eq + 1));
        }
    }
    return {};
}

namespace {

bool behind_tls(const request& req)
{
    const auto it = req.find("X-Forwarded-Proto");
    return it != req.end() && sv(it->value()) == "https";
}

} // namespace

std::string session_cookie(const request& req, const std::string& project, std::string_view id, bool expire)
{
    return fmt::format("{}={}; Path={}; HttpOnly; SameSite=Strict{}{}", cookie_name, id, project_path(project),
                       expire ? "; Max-Age=0"
                              : fmt::format("; Max-Age={}", std::chrono::seconds(session_lifetime).count()),
                       behind_tls(req) ? "; Secure" : "");
}

std::optional<web_session> session_of(const request& req, context& ctx, const std::string& project)
{
    const auto id = cookie_value(req, cookie_name);
    auto s = ctx.sessions->find(id, project);
    // The token it was made with must still be there: a revoked or expired
    // token ends its sessions at their next request.
    if (s && !ctx.service.tokens().live(s->token_id, project)) {
        ctx.sessions->remove(id);
        return std::nullopt;
    }
    return s;
}

// ---------------------------------------------------------------------------
// Forms

void check_form_origin(const request& req)
{
    const auto origin = req.find(http::field::origin);
    const auto host = req.find(http::field::host);
    if (origin == req.end()) return;
    const std::string_view o = sv(origin->value());
    const std::string_view h = host == req.end() ? std::string_view{} : sv(host->value());
    const auto scheme_end = o.find("://");
    if (scheme_end == std::string_view::npos || o.substr(scheme_end + 3) != h) {
        throw error(errors::auth_forbidden, "this form was posted from another site");
    }
}

void check_csrf(const query_params& form, const web_session& s)
{
    if (!equal_constant_time(form.get("csrf").value_or(""), s.csrf)) {
        throw error(errors::auth_forbidden,
                    "the form is stale or was not sent by this dashboard (CSRF token); reload the page");
    }
}

} // namespace perfgate::server::pages
