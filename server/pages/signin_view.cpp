// GET and POST /p/{project}/signin, POST /p/{project}/signout: a project
// token becomes a session cookie (security.hpp), and sign-out ends it.
#include <algorithm>
#include <string>
#include <vector>

#include <boost/beast/http/field.hpp>
#include <fmt/format.h>

#include "model/error.hpp"
#include "server/log.hpp"
#include "server/metrics.hpp"
#include "server/pages/client_throttle.hpp"
#include "server/pages/security.hpp"
#include "server/pages/views.hpp"
#include "service/service.hpp"

namespace perfgate::server::pages {

namespace {

// The path of `next` with its dot segments resolved the way a browser
// resolves them (RFC 3986 section 5.2.4, with WHATWG URL's reading of a
// backslash as '/' and of "%2e" as '.'), and duplicate slashes made one: the address
// the browser would go to. nullopt when a byte is not a printable URL
// character (controls, space, DEL, non-ASCII).
std::optional<std::string> normal_next(std::string_view next)
{
    if (next.empty() || next.front() != '/') return std::nullopt;
    if (std::any_of(next.begin(), next.end(), [](char c) { return c < 0x21 || c > 0x7e; })) return std::nullopt;
    const auto rest_at = next.find_first_of("?#");
    const std::string_view path = next.substr(0, rest_at);
    const std::string_view rest = rest_at == std::string_view::npos ? std::string_view{} : next.substr(rest_at);
    std::vector<std::string> segments;
    std::string segment;
    const auto close = [&](bool last) {
        std::string dots = segment;
        for (std::size_t at = 0; (at = dots.find("%2", at)) != std::string::npos;) {
            if (at + 2 < dots.size() && (dots[at + 2] == 'e' || dots[at + 2] == 'E')) dots.replace(at, 3, ".");
            else ++at;
        }
        if (dots == "..") {
            if (!segments.empty()) segments.pop_back();
            if (last) segments.emplace_back();
        } else if (dots == ".") {
            if (last) segments.emplace_back();
        } else if (!segment.empty() || last) {
            segments.push_back(segment);
        }
        segment.clear();
    };
    for (std::size_t i = 1; i < path.size(); ++i) {
        if (path[i] == '/' || path[i] == '\\') close(false);
        else segment += path[i];
    }
    close(true);
    std::string out;
    for (const auto& s : segments) out += "/" + s;
    if (out.empty()) out = "/";
    return out + std::string(rest);
}

// Only a page of this project's dashboard, as normal_next resolves it:
// never an open redirect, never a path outside /p/{project}/.
std::string safe_next(const std::string& project, const std::optional<std::string>& next)
{
    std::string home = project_path(project);
    if (!next) return home;
    const auto normal = normal_next(*next);
    if (!normal) return home;
    const std::string_view path = std::string_view(*normal).substr(0, normal->find_first_of("?#"));
    const bool inside = path == home || (path.starts_with(home + "/") && path.size() > home.size() + 1);
    if (!inside || path.starts_with(home + "/signin")) return home;
    return *normal;
}

// A sign-in that did not happen, for the operator (issue 31, finding 14):
// one JSON line on the server log with the client's address, the project and
// why (an error id, or "throttled"), never the token; and a count in
// /metrics (perfgate_signin_failures_total, perfgate_signin_throttled_total)
// to alert on.
void signin_refused(page_state& p, const std::string& client, std::string_view reason)
{
    if (reason == "throttled") p.ctx.stats.signin_throttled();
    else p.ctx.stats.signin_failed();
    try {
        const json line = {{"ts", utc_timestamp()},
                           {"event", "signin_refused"},
                           {"remote", client.empty() ? std::string("-") : client},
                           {"project", p.project.substr(0, 256)},
                           {"reason", reason}};
        write_log_line(line.dump(-1, ' ', false, json::error_handler_t::replace));
    } catch (...) {
        // Out of memory while formatting: the line is lost, the answer is not.
    }
}

} // namespace

response signin_page(page_state& p, const std::optional<std::string>& next, std::string_view problem,
                     http::status status)
{
    page_view v("signin", "Sign in");
    writer& w = v.body;
    if (!problem.empty()) w.f("<p class=\"error\" id=\"signin-error\">{}</p>", problem);
    w.f("<form class=\"signin\" method=\"post\" action=\"{}/signin\"><input type=\"hidden\" name=\"next\" value=\"{}\">"
        "<label>Project token for <b>{}</b> <input type=\"password\" name=\"token\" id=\"token\" autocomplete=\"off\" "
        "required></label><button type=\"submit\" id=\"signin\">sign in</button></form>"
        "<p class=\"note\">A token is made with <code>perfgate token create --db PATH --project {}</code>.</p>",
        project_path(p.project), safe_next(p.project, next), p.project, p.project);
    v.set_data(json{{"page", "signin"}});
    return render(p, v, status);
}

response signin_post(page_state& p)
{
    check_form_origin(p.req);
    const query_params form(p.req.body());
    const auto next = form.get("next");
    // Failures are charged to the client address, successes never: a
    // correct token is not refused because someone else failed from the same
    // address (a NAT, a shared proxy). Tokens carry 256 random bits, so the
    // throttle is not what stops guessing; it bounds what a guessing client
    // costs in pages and log lines and makes it stand out (docs/dashboard.md#sessions).
    const std::string client = client_address(p.peer, p.req, p.ctx.trusted_proxies);
    const std::string token = form.get("token").value_or("");
    service::token_grant grant;
    try {
        if (token.empty()) throw error(errors::auth_missing_token, "no token given");
        grant = p.ctx.service.tokens().authorize(token, p.project);
    } catch (const error& e) {
        if (!std::string_view(e.id()).starts_with("auth.") && e.id() != errors::project_not_found) throw;
        if (const auto wait = p.ctx.signins->take(client)) {
            signin_refused(p, client, "throttled");
            response res = signin_page(
                p, next,
                fmt::format("Too many failed sign-ins from your address; try again in {} seconds.", wait->count()),
                http::status::too_many_requests);
            res.set(http::field::retry_after, std::to_string(wait->count()));
            return res;
        }
        signin_refused(p, client, e.id());
        return signin_page(p, next, "That token does not open this project.", http::status::unauthorized);
    }
    // The session carries the token's scopes: pages check them (pages.cpp).
    const std::string id = p.ctx.sessions->create(p.project, grant.id, grant.name, grant.scopes);
    return redirect(safe_next(p.project, next), p.req, session_cookie(p.req, p.project, id, false));
}

response signout(page_state& p)
{
    check_form_origin(p.req);
    if (p.session) {
        check_csrf(query_params(p.req.body()), *p.session);
        p.ctx.sessions->remove(cookie_value(p.req, cookie_name));
    }
    return redirect(project_path(p.project) + "/signin", p.req, session_cookie(p.req, p.project, "", true));
}

} // namespace perfgate::server::pages
