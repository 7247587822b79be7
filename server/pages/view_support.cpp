#include "server/pages/view_support.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>

#include <boost/beast/http/field.hpp>
#include <fmt/format.h>

#include "model/error.hpp"
#include "server/pages/security.hpp"

namespace perfgate::server::pages {

// ---------------------------------------------------------------------------
// Formatting

std::string iso_date(std::int64_t unix_seconds)
{
    const std::time_t t = unix_seconds;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
    return buf;
}

std::string number(std::optional<double> v, int digits)
{
    if (!v || !std::isfinite(*v)) return "–";
    // Never scientific notation (docs/dashboard.md#numbers): a p-value of
    // 2.75e-06 reads "< 0.0001", and a large value keeps all its digits.
    if (*v != 0 && std::abs(*v) < 1e-4) return *v > 0 ? "< 0.0001" : "> -0.0001";
    if (std::abs(*v) >= std::pow(10.0, digits)) return fmt::format("{:.0f}", *v);
    return fmt::format("{:.{}g}", *v, digits);
}

std::string percent(std::optional<double> v)
{
    if (!v || !std::isfinite(*v)) return "–";
    return fmt::format("{:+.2f}%", *v);
}

std::string written_by_text(const std::optional<model::token_ref>& by)
{
    return by ? fmt::format("token '{}' (#{})", by->name, by->id) : std::string("no token (the database's own CLI)");
}

void commit_ref(writer& w, const std::optional<std::string>& repository, const std::string& sha)
{
    if (sha.empty()) {
        w << "<code title=\"no commit was recorded for this run (docs/history.md)\">unknown</code>";
        return;
    }
    if (!repository || repository->empty()) {
        w.f("<code title=\"{}\">{}</code>", sha, sha.substr(0, 12));
        return;
    }
    std::string base = *repository;
    while (!base.empty() && base.back() == '/') base.pop_back();
    w.f("<a class=\"commit\" href=\"{}/commit/{}\" title=\"{}\"><code>{}</code></a>", base, html::url_encode(sha), sha,
        sha.substr(0, 12));
}

// ---------------------------------------------------------------------------
// Addresses and parameters

std::string project_path(const std::string& project) { return "/p/" + html::url_encode(project); }

std::string series_url(const std::string& project, std::string_view benchmark, std::string_view counter,
                       std::string_view testbed, std::string_view branch)
{
    return project_path(project) + "/series" +
           html::url_query({{"benchmark", benchmark}, {"counter", counter}, {"testbed", testbed}, {"branch", branch}});
}

std::int64_t positive_id(const std::string& text, std::string_view what)
{
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || v < 1) {
        throw error(errors::http_bad_param, fmt::format("{} '{}' is not a positive integer", what, text.substr(0, 64)));
    }
    return v;
}

std::string one_of(const query_params& q, std::string_view key, std::initializer_list<std::string_view> allowed)
{
    const auto v = q.get(key);
    if (!v) return std::string(*allowed.begin());
    if (std::find(allowed.begin(), allowed.end(), *v) == allowed.end()) {
        throw error(errors::http_bad_param, fmt::format("query parameter '{}': expected one of {}, got '{}'", key,
                                                        fmt::join(allowed, ", "), v->substr(0, 64)));
    }
    return *v;
}

// ---------------------------------------------------------------------------
// Responses

response html_response(http::status status, std::string body, const request& req)
{
    response res{status, req.version()};
    res.set(http::field::content_type, "text/html; charset=utf-8");
    res.set(http::field::cache_control, "no-store");
    security_headers(res);
    res.keep_alive(req.keep_alive());
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

response redirect(std::string_view location, const request& req, std::optional<std::string> cookie)
{
    response res{http::status::see_other, req.version()};
    res.set(http::field::location, bsv(location));
    res.set(http::field::cache_control, "no-store");
    if (cookie) res.set(http::field::set_cookie, *cookie);
    security_headers(res);
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    return res;
}

namespace {

void open_page(writer& w, const page_state& p, markup page_name, std::string_view title)
{
    const std::string home = project_path(p.project);
    w << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><link rel=\"icon\" href=\"data:,\">";
    w.f("<title>{} · {} · perfgate</title>", title, p.project);
    w << "<link rel=\"stylesheet\" href=\"/assets/dygraph.min.css\"><link rel=\"stylesheet\" href=\"/assets/dashboard.css\">"
         "<script src=\"/assets/dygraph.min.js\" defer></script><script src=\"/assets/dashboard.js\" defer></script>"
         "</head><body data-page=\""
      << page_name << "\"><header class=\"top\">";
    w.f("<a class=\"brand\" href=\"{}\">perfgate · {}</a><nav><a href=\"{}\">overview</a> <a href=\"{}/alerts\">alerts</a></nav>",
        home, p.project, home, home);
    if (p.session) {
        w.f("<form class=\"signout\" method=\"post\" action=\"{}/signout\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">"
            "<button type=\"submit\">sign out</button></form>",
            home, p.session->csrf);
    } else if (page_name.view() != "signin") {
        w.f("<a class=\"signin\" href=\"{}/signin{}\">sign in</a>", home,
            html::url_query({{"next", sv(p.req.target())}}));
    }
    w << "</header><main>";
    w.f("<h1>{}</h1>", title);
}

} // namespace

response render(const page_state& p, const page_view& v, http::status status)
{
    writer w;
    w.reserve(v.body.str().size() + v.data.str().size() + 2048); // + the header: one allocation
    open_page(w, p, v.name, v.title);
    w.append(v.body);
    w << "</main><script type=\"application/json\" id=\"perfgate-data\">";
    w.append(v.data);
    w << "</script></body></html>\n";
    return html_response(status, w.take(), p.req);
}

response error_page(const page_state& p, http::status status, std::string_view message)
{
    page_view v("error", "Error");
    v.body.f("<p class=\"error\" id=\"page-error\">{}</p>", message);
    v.body.f("<p><a href=\"{}\">back to the overview</a></p>", project_path(p.project));
    v.set_data(json{{"page", "error"}});
    return render(p, v, status);
}

} // namespace perfgate::server::pages
