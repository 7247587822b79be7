// GET and POST /p/{project}/signin, POST /p/{project}/signout: a project
// token becomes a session cookie (security.hpp), and sign-out ends it.
#include <string>

#include "model/error.hpp"
#include "server/pages/security.hpp"
#include "server/pages/views.hpp"
#include "service/service.hpp"

namespace perfgate::server::pages {

namespace {

// Only a path of this project's dashboard: never an open redirect.
std::string safe_next(const std::string& project, const std::optional<std::string>& next)
{
    std::string home = project_path(project);
    if (!next || next->empty()) return home;
    if (*next == home || next->starts_with(home + "/") || next->starts_with(home + "?")) {
        if (next->find_first_of("\r\n\\") == std::string::npos && !next->starts_with(home + "/signin")) return *next;
    }
    return home;
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
    const std::string token = form.get("token").value_or("");
    std::int64_t token_id = 0;
    try {
        if (token.empty()) throw error(errors::auth_missing_token, "no token given");
        token_id = p.ctx.service.authorize(token, p.project);
    } catch (const error& e) {
        if (!std::string_view(e.id()).starts_with("auth.") && e.id() != std::string("project.not_found")) throw;
        return signin_page(p, next, "That token does not open this project.", http::status::unauthorized);
    }
    const std::string id = p.ctx.sessions->create(p.project, token_id);
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
