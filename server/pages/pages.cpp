#include "server/pages/pages.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <tuple>
#include <ctime>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/wire.hpp"
#include "capture/counters.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "model/error.hpp"
#include "server/pages/assets.hpp"
#include "server/pages/html.hpp"
#include "server/pages/page_cache.hpp"
#include "server/pages/sessions.hpp"
#include "server/request_text.hpp"
#include "service/service.hpp"
#include "stats/descriptive.hpp"

namespace perfgate::server::pages {

namespace http = boost::beast::http;
using detail::query_params;
using detail::sv;
using html::markup;
using html::writer;
using nlohmann::json;

namespace {

boost::beast::string_view bsv(std::string_view s) { return {s.data(), s.size()}; }

// ---------------------------------------------------------------------------
// Routes

enum class page {
    asset, overview, series, comparison, flame_graph, compare, alerts, triage, run, signin, signin_post, signout, none
};

struct page_match {
    page what = page::none;
    http::verb method = http::verb::get;
    std::string_view label;
    std::string project;   // percent-decoded
    std::string id;        // comparisons/{id}, alerts/{id}, runs/{id}, assets/{name}
};

constexpr std::string_view label_asset = "GET /assets/{name}";
constexpr std::string_view label_overview = "GET /p/{project}";
constexpr std::string_view label_series = "GET /p/{project}/series";
constexpr std::string_view label_comparison = "GET /p/{project}/comparisons/{id}";
constexpr std::string_view label_flame_graph = "GET /p/{project}/comparisons/{id}/flame.svg";
constexpr std::string_view label_compare = "GET /p/{project}/compare";
constexpr std::string_view label_alerts = "GET /p/{project}/alerts";
constexpr std::string_view label_triage = "POST /p/{project}/alerts/{id}";
constexpr std::string_view label_run = "GET /p/{project}/runs/{id}";
constexpr std::string_view label_signin = "GET /p/{project}/signin";
constexpr std::string_view label_signin_post = "POST /p/{project}/signin";
constexpr std::string_view label_signout = "POST /p/{project}/signout";
constexpr std::string_view label_unmatched = "unmatched";

// nullopt: not a page path at all (the API router's business).
std::optional<page_match> match_page(const request& req)
{
    const std::string_view target = sv(req.target());
    const std::string_view path = target.substr(0, target.find('?'));
    if (!path.starts_with("/p/") && !path.starts_with("/assets/")) return std::nullopt;
    page_match m;
    m.label = label_unmatched;
    const auto parts = detail::path_segments(path);
    if (std::any_of(parts.begin(), parts.end(), [](std::string_view p) { return p.empty(); })) return m;
    if (parts[0] == "assets") {
        if (parts.size() == 2) {
            m.what = page::asset;
            m.label = label_asset;
            m.id = std::string(parts[1]);
        }
        return m;
    }
    if (parts.size() < 2 || parts.size() > 5) return m;
    auto project = detail::percent_decode(parts[1], false);
    if (!project) return m;
    m.project = std::move(*project);
    const bool post = req.method() == http::verb::post;
    if (parts.size() == 2) {
        m = {page::overview, http::verb::get, label_overview, m.project, {}};
    } else if (parts.size() == 3) {
        const std::string_view what = parts[2];
        if (what == "series") m = {page::series, http::verb::get, label_series, m.project, {}};
        else if (what == "compare") m = {page::compare, http::verb::get, label_compare, m.project, {}};
        else if (what == "alerts") m = {page::alerts, http::verb::get, label_alerts, m.project, {}};
        else if (what == "signin" && post) m = {page::signin_post, http::verb::post, label_signin_post, m.project, {}};
        else if (what == "signin") m = {page::signin, http::verb::get, label_signin, m.project, {}};
        else if (what == "signout") m = {page::signout, http::verb::post, label_signout, m.project, {}};
    } else if (parts.size() == 5) {
        // A comparison's flame graph (?benchmark=NAME), framed by its page.
        if (parts[2] == "comparisons" && parts[4] == "flame.svg") {
            m = {page::flame_graph, http::verb::get, label_flame_graph, m.project, std::string(parts[3])};
        }
    } else {
        const std::string_view what = parts[2];
        const std::string id(parts[3]);
        if (what == "comparisons") m = {page::comparison, http::verb::get, label_comparison, m.project, id};
        else if (what == "alerts") m = {page::triage, http::verb::post, label_triage, m.project, id};
        else if (what == "runs") m = {page::run, http::verb::get, label_run, m.project, id};
    }
    return m;
}

// ---------------------------------------------------------------------------
// Responses

void security_headers(response& res)
{
    res.set("Content-Security-Policy", bsv(content_security_policy));
    res.set("X-Content-Type-Options", "nosniff");
    res.set("X-Frame-Options", "DENY");
    res.set("Referrer-Policy", "same-origin");
}

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

response redirect(std::string_view location, const request& req, std::optional<std::string> cookie = std::nullopt)
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

// ---------------------------------------------------------------------------
// Sessions and cookies

constexpr std::string_view cookie_name = "perfgate_session";

// The value of cookie `name` in the request's Cookie header(s).
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

std::string project_path(const std::string& project) { return "/p/" + html::url_encode(project); }

bool behind_tls(const request& req)
{
    const auto it = req.find("X-Forwarded-Proto");
    return it != req.end() && sv(it->value()) == "https";
}

std::string session_cookie(const request& req, const std::string& project, std::string_view id, bool expire)
{
    return fmt::format("{}={}; Path={}; HttpOnly; SameSite=Strict{}{}", cookie_name, id, project_path(project),
                       expire ? "; Max-Age=0" : fmt::format("; Max-Age={}", std::chrono::seconds(session_lifetime).count()),
                       behind_tls(req) ? "; Secure" : "");
}

std::optional<web_session> session_of(const request& req, context& ctx, const std::string& project)
{
    return ctx.sessions->find(cookie_value(req, cookie_name), project);
}

// A form post must come from our own pages: the session's CSRF token, and
// an Origin header (browsers send one with every POST) naming this host.
void check_form_origin(const request& req)
{
    const auto origin = req.find(http::field::origin);
    const auto host = req.find(http::field::host);
    if (origin == req.end()) return;
    const std::string_view o = sv(origin->value());
    const std::string_view h = host == req.end() ? std::string_view{} : sv(host->value());
    const auto scheme_end = o.find("://");
    if (scheme_end == std::string_view::npos || o.substr(scheme_end + 3) != h) {
        throw error("auth.forbidden", "this form was posted from another site");
    }
}

void check_csrf(const query_params& form, const web_session& s)
{
    if (!equal_constant_time(form.get("csrf").value_or(""), s.csrf)) {
        throw error("auth.forbidden", "the form is stale or was not sent by this dashboard (CSRF token); reload the page");
    }
}

// ---------------------------------------------------------------------------
// Layout

struct page_state {
    const request& req;
    context& ctx;
    const std::string& project;
    std::optional<web_session> session;
};

std::string iso_date(std::int64_t unix_seconds)
{
    const std::time_t t = unix_seconds;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
    return buf;
}

std::string number(std::optional<double> v, int digits = 4)
{
    if (!v || !std::isfinite(*v)) return "–";
    return fmt::format("{:.{}g}", *v, digits);
}

std::string percent(std::optional<double> v)
{
    if (!v || !std::isfinite(*v)) return "–";
    return fmt::format("{:+.2f}%", *v);
}

void open_page(writer& w, const page_state& p, markup page_name, std::string_view title)
{
    const std::string home = project_path(p.project);
    w << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><link rel=\"icon\" href=\"data:,\">";
    w.f("<title>{} · {} · perfgate</title>", title, p.project);
    w << "<link rel=\"stylesheet\" href=\"/assets/dygraph.min.css\"><link rel=\"stylesheet\" href=\"/assets/dashboard.css\">"
         "<script src=\"/assets/dygraph.min.js\" defer></script><script src=\"/assets/dashboard.js\" defer></script>"
         "</head><body data-page=\"" << page_name << "\"><header class=\"top\">";
    w.f("<a class=\"brand\" href=\"{}\">perfgate · {}</a><nav><a href=\"{}\">overview</a> <a href=\"{}/alerts\">alerts</a></nav>",
        home, p.project, home, home);
    if (p.session) {
        w.f("<form class=\"signout\" method=\"post\" action=\"{}/signout\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">"
            "<button type=\"submit\">sign out</button></form>", home, p.session->csrf);
    } else if (page_name.view() != "signin") {
        w.f("<a class=\"signin\" href=\"{}/signin{}\">sign in</a>", home,
            html::url_query({{"next", sv(p.req.target())}}));
    }
    w << "</header><main>";
    w.f("<h1>{}</h1>", title);
}

response render(const page_state& p, const page_view& v, http::status status = http::status::ok)
{
    writer w;
    w.reserve(v.body.str().size() + v.data.str().size() + 2048);   // + the header: one allocation
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

std::int64_t positive_id(const std::string& text, std::string_view what)
{
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || v < 1) {
        throw error("http.bad_param", fmt::format("{} '{}' is not a positive integer", what, text.substr(0, 64)));
    }
    return v;
}

std::string series_url(const std::string& project, std::string_view benchmark, std::string_view counter,
                       std::string_view testbed = {}, std::string_view branch = {})
{
    return project_path(project) + "/series" +
           html::url_query({{"benchmark", benchmark}, {"counter", counter}, {"testbed", testbed}, {"branch", branch}});
}

// ---------------------------------------------------------------------------
// Series

// Rolling band of each point from the `band_window` points before it (at
// least band_min): median +- band_k * MAD scaled to a normal sigma. The
// window never reaches back across a change point (`starts`: the runs where
// one starts), as the gate's history band (gate/report.hpp); a change
// point's own run is judged against the segment before it.
constexpr std::size_t band_window = 20;
constexpr std::size_t band_min = 10;
constexpr double band_k = 3;

json band_of(const std::vector<model::history_point>& points, const std::set<std::int64_t>& starts)
{
    json band = json::array();
    std::vector<double> window;
    std::size_t segment = 0;   // first point of the segment before point i
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (i > 0 && starts.contains(points[i - 1].run_id)) segment = i - 1;
        const std::size_t from = std::max(segment, i > band_window ? i - band_window : std::size_t{0});
        if (i - from < band_min) continue;
        window.clear();
        for (std::size_t j = from; j < i; ++j) window.push_back(points[j].median);
        const double med = *stats::median(window);
        const double spread = band_k * stats::mad_normal_consistency * *stats::mad(window);
        band.push_back({{"run_id", points[i].run_id}, {"lo", med - spread}, {"hi", med + spread}});
    }
    return band;
}

std::optional<double> optional_number(const query_params& q, std::string_view key)
{
    const auto v = q.get(key);
    if (!v || v->empty()) return std::nullopt;
    double d = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), d);
    if (ec != std::errc{} || end != v->data() + v->size() || !std::isfinite(d)) {
        throw error("http.bad_param", fmt::format("query parameter '{}': expected a number, got '{}'", key, v->substr(0, 64)));
    }
    return d;
}

std::string one_of(const query_params& q, std::string_view key, std::initializer_list<std::string_view> allowed)
{
    const auto v = q.get(key);
    if (!v) return std::string(*allowed.begin());
    if (std::find(allowed.begin(), allowed.end(), *v) == allowed.end()) {
        throw error("http.bad_param", fmt::format("query parameter '{}': expected one of {}, got '{}'", key,
                                                  fmt::join(allowed, ", "), v->substr(0, 64)));
    }
    return *v;
}

page_view series_view(page_state& p, const query_params& q)
{
    q.only({"benchmark", "counter", "testbed", "branch", "range", "x", "log", "from", "to"});
    auto& svc = p.ctx.service;
    const std::string benchmark = q.required("benchmark");
    const std::string counter = q.required("counter");
    const auto testbed = q.get("testbed");
    const auto branch = q.get("branch");
    const std::string range = one_of(q, "range", {"all", "30d", "90d"});
    const std::string x = one_of(q, "x", {"run", "date"});
    const std::string log = one_of(q, "log", {"0", "1"});
    const auto from = optional_number(q, "from");
    const auto to = optional_number(q, "to");

    model::history_query hq;
    hq.project = p.project;
    hq.benchmark = benchmark;
    hq.counter = counter;
    hq.branch = branch;
    hq.testbed = testbed;
    hq.limit = api::max_history_limit;
    if (range != "all") {
        const auto days = range == "30d" ? 30 : 90;
        hq.since = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                       .count() - std::int64_t{days} * 86400;
    }
    const auto points = svc.history(hq);
    const auto traits = capture::lookup_counter(counter);

    // One line per (branch, testbed), the baseline branch first; lines are
    // named by testbed only when the series spans several.
    const std::string baseline = svc.baseline_branch(p.project);
    struct line_key {
        std::string branch, testbed, testbed_name;
        bool operator==(const line_key& o) const { return branch == o.branch && testbed == o.testbed; }
    };
    std::vector<line_key> keys;
    for (const auto& pt : points) {
        line_key k{pt.branch, pt.testbed, pt.testbed_name};
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(std::move(k));
    }
    std::stable_partition(keys.begin(), keys.end(), [&](const line_key& k) { return k.branch == baseline; });
    const bool several_testbeds = std::any_of(keys.begin(), keys.end(),
                                              [&](const line_key& k) { return k.testbed != keys.front().testbed; });
    auto label_of = [&](const line_key& k) {
        return several_testbeds ? fmt::format("{} @ {}", k.branch, k.testbed_name) : k.branch;
    };

    json lines = json::array();
    json markers = json::array();
    model::alert_query aq{p.project, std::nullopt, benchmark, counter, testbed, service::max_alert_limit};
    const auto alerts = svc.alerts(aq);
    for (std::size_t li = 0; li < keys.size(); ++li) {
        const auto& key = keys[li];
        std::vector<model::history_point> mine;
        for (const auto& pt : points)
            if (pt.branch == key.branch && pt.testbed == key.testbed) mine.push_back(pt);
        const auto change_points = svc.change_points(p.project, benchmark, counter, key.testbed, key.branch);
        std::set<std::int64_t> starts;
        for (const auto& cp : change_points) starts.insert(cp.run_id);
        lines.push_back({{"label", label_of(key)},
                         {"branch", key.branch},
                         {"testbed", key.testbed},
                         {"testbed_name", key.testbed_name},
                         {"points", api::history_to_json(mine).at("points")},
                         {"band", band_of(mine, starts)}});
        for (const auto& cp : change_points) {
            const bool shown = std::any_of(mine.begin(), mine.end(), [&](const auto& pt) { return pt.run_id == cp.run_id; });
            if (!shown) continue;
            json m{{"line", li}, {"run_id", cp.run_id}, {"git_sha", cp.git_sha}, {"p_value", cp.p_value},
                   {"delta_pct", cp.delta_pct ? json(*cp.delta_pct) : json(nullptr)},
                   {"alert_id", nullptr}, {"status", nullptr}, {"href", nullptr}};
            for (const auto& a : alerts) {
                if (a.change.run_id != cp.run_id || a.change.series.branch != key.branch || a.change.series.testbed != key.testbed) continue;
                m["alert_id"] = a.id;
                m["status"] = model::to_string(a.status);
                m["href"] = fmt::format("{}/alerts#alert-{}", project_path(p.project), a.id);
            }
            markers.push_back(std::move(m));
        }
    }

    const std::string title = fmt::format("{} · {}", benchmark, counter);
    page_view v("series", title);
    writer& w = v.body;
    const std::string here = project_path(p.project) + "/series";
    w << "<div id=\"controls\" class=\"controls\"><span class=\"presets\">";
    for (const std::string_view r : {std::string_view("30d"), std::string_view("90d"), std::string_view("all")}) {
        const std::string href = here + html::url_query({{"benchmark", benchmark}, {"counter", counter},
                                                         {"testbed", testbed.value_or("")}, {"branch", branch.value_or("")},
                                                         {"range", r}, {"x", x == "run" ? "" : x}, {"log", log == "1" ? "1" : ""}});
        w.f("<a class=\"preset{}\" data-range=\"{}\" href=\"{}\">{}</a>", r == range ? " active" : "", r, href,
            r == "all" ? std::string("all") : fmt::format("{} d", r.substr(0, 2)));
    }
    w << "</span><label><input type=\"checkbox\" id=\"log-toggle\"";
    if (log == "1") w << " checked";
    w << "> log scale</label><label>x axis <select id=\"x-axis\">";
    w << (x == "run" ? markup("<option value=\"run\" selected>run</option><option value=\"date\">date</option>")
                     : markup("<option value=\"run\">run</option><option value=\"date\" selected>date</option>"));
    w << "</select></label><span class=\"lines\">";
    for (std::size_t li = 0; li < keys.size(); ++li) {
        w.f("<label><input type=\"checkbox\" class=\"line-toggle\" data-line=\"{}\" checked> {}</label>", li, label_of(keys[li]));
    }
    w << "</span></div>";
    if (points.empty()) {
        w << "<p class=\"empty\" id=\"no-points\">No runs match this series yet.</p>";
    } else if (points.size() >= api::max_history_limit) {
        w.f("<p class=\"note\">Showing the most recent {} runs.</p>", points.size());
    }
    w << "<div id=\"chart\" class=\"chart\"></div><div id=\"hover\" class=\"hover\"></div>";
    w.f("<p class=\"api\">Data: <a href=\"/api/v1/projects/{}/history{}\">the history API</a></p>", html::url_encode(p.project),
        html::url_query({{"benchmark", benchmark}, {"counter", counter}, {"testbed", testbed.value_or("")},
                         {"branch", branch.value_or("")}}));

    const auto repository = svc.repository_url(p.project);
    json data{{"page", "series"},
              {"project", p.project},
              {"benchmark", benchmark},
              {"counter", counter},
              {"unit", traits.unit},
              {"better", traits.direction == capture::better::lower ? "lower" : "higher"},
              {"repository_url", repository ? json(*repository) : json(nullptr)},
              {"run_url", project_path(p.project) + "/runs/"},
              {"view", {{"range", range}, {"x", x}, {"log", log == "1"},
                        {"from", from ? json(*from) : json(nullptr)}, {"to", to ? json(*to) : json(nullptr)}}},
              {"lines", std::move(lines)},
              {"markers", std::move(markers)}};
    v.set_data(data);
    return v;
}

// ---------------------------------------------------------------------------
// Alerts inbox and triage

constexpr std::string_view statuses[] = {"untriaged", "acknowledged", "invalid", "wontfix", "fixed"};

response alerts_page(page_state& p, const query_params& q)
{
    q.only({"status", "benchmark", "testbed"});
    model::alert_query aq{p.project, std::nullopt, q.get("benchmark"), std::nullopt, q.get("testbed"), service::max_alert_limit};
    if (const auto s = q.get("status"); s && !s->empty()) {
        aq.status = model::parse_alert_status(*s);
        if (!aq.status) {
            throw error("http.bad_param", fmt::format("query parameter 'status': expected one of {}, got '{}'",
                                                      fmt::join(statuses, ", "), s->substr(0, 64)));
        }
    }
    if (aq.benchmark && aq.benchmark->empty()) aq.benchmark.reset();
    if (aq.testbed && aq.testbed->empty()) aq.testbed.reset();
    const auto alerts = p.ctx.service.alerts(aq);

    page_view v("alerts", "Alerts");
    writer& w = v.body;
    const std::string here = project_path(p.project) + "/alerts";
    w.f("<form class=\"filters\" method=\"get\" action=\"{}\"><label>status <select name=\"status\">", here);
    w.f("<option value=\"\"{}>any</option>", aq.status ? "" : " selected");
    for (const auto s : statuses) {
        w.f("<option value=\"{}\"{}>{}</option>", s, aq.status && model::to_string(*aq.status) == s ? " selected" : "", s);
    }
    w.f("</select></label><label>benchmark <input name=\"benchmark\" value=\"{}\"></label>"
        "<label>testbed <input name=\"testbed\" value=\"{}\"></label><button type=\"submit\">filter</button></form>",
        aq.benchmark.value_or(""), aq.testbed.value_or(""));
    if (alerts.empty()) w << "<p class=\"empty\" id=\"no-alerts\">No alerts match.</p>";
    w << "<table id=\"alerts\"><thead><tr><th>alert</th><th>series</th><th>starts at</th><th>change</th><th>p</th>"
         "<th>status</th><th>note</th><th>triage</th></tr></thead><tbody>";
    for (const auto& a : alerts) {
        const auto& c = a.change;
        const std::int64_t month = 30 * 86400;
        const std::string link = series_url(p.project, c.series.benchmark, c.series.counter, c.series.testbed,
                                            c.series.branch) +
                                 fmt::format("&x=date&from={}&to={}", c.created_at - month, c.created_at + month);
        w.f("<tr id=\"alert-{}\" class=\"alert status-{}\"><td>{}</td><td><a class=\"series\" href=\"{}\">{} · {}</a>"
            "<br><small>{} · {}</small></td><td><a href=\"{}/runs/{}\">run {}</a> <code>{}</code><br><small>{}</small></td>"
            "<td>{}</td><td>{}</td><td><span class=\"badge status-{}\">{}</span></td><td class=\"note\">{}</td><td>",
            a.id, model::to_string(a.status), a.id, link, c.series.benchmark, c.series.counter, c.series.branch,
            c.series.testbed.substr(0, 12), project_path(p.project), c.run_id, c.run_id, c.git_sha.substr(0, 12),
            iso_date(c.created_at), percent(c.delta_pct), number(c.p_value, 3), model::to_string(a.status),
            model::to_string(a.status), a.note);
        if (p.session) {
            w.f("<form class=\"triage\" method=\"post\" action=\"{}/alerts/{}\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">"
                "<select name=\"status\">", project_path(p.project), a.id, p.session->csrf);
            for (const auto s : statuses) {
                w.f("<option value=\"{}\"{}>{}</option>", s, model::to_string(a.status) == s ? " selected" : "", s);
            }
            w.f("</select><input name=\"note\" maxlength=\"{}\" placeholder=\"note\" value=\"{}\">"
                "<button type=\"submit\">save</button></form>", service::max_alert_note_bytes, a.note);
        } else {
            w.f("<a href=\"{}/signin{}\">sign in to triage</a>", project_path(p.project),
                html::url_query({{"next", sv(p.req.target())}}));
        }
        w << "</td></tr>";
    }
    w << "</tbody></table>";
    v.set_data(json{{"page", "alerts"}, {"alerts", api::alerts_to_json(alerts).at("alerts")}});
    return render(p, v);
}

response triage(page_state& p, const page_match& m)
{
    const auto id = positive_id(m.id, "alert id");
    if (!p.session) return redirect(project_path(p.project) + "/signin", p.req);
    const query_params form(p.req.body());
    check_csrf(form, *p.session);
    const auto status = model::parse_alert_status(form.get("status").value_or(""));
    if (!status) {
        throw error("alert.bad_status", fmt::format("status '{}': expected one of {}", form.get("status").value_or("").substr(0, 64),
                                                    fmt::join(statuses, ", ")));
    }
    model::alert_update u{*status, form.get("note"), "dashboard"};
    p.ctx.service.update_alert(p.project, id, u);
    return redirect(fmt::format("{}/alerts#alert-{}", project_path(p.project), id), p.req);
}

// ---------------------------------------------------------------------------
// Run

page_view run_view(page_state& p, const page_match& m)
{
    const auto id = positive_id(m.id, "run id");
    const auto run = p.ctx.service.run(p.project, id);
    if (!run) throw error("compare.not_found", fmt::format("project '{}' has no run {}", p.project, id));
    page_view v("run", fmt::format("Run {}", id));
    writer& w = v.body;
    w << "<table class=\"meta\" id=\"run-meta\"><tbody>";
    w.f("<tr><th>benchmark</th><td>{}</td></tr><tr><th>role</th><td>{}</td></tr><tr><th>git sha</th><td><code>{}</code></td></tr>"
        "<tr><th>branch</th><td>{}</td></tr><tr><th>pull request</th><td>{}</td></tr><tr><th>created</th><td>{}</td></tr>"
        "<tr><th>backend</th><td>{}</td></tr><tr><th>testbed</th><td>{} ({}, {} cores, kernel {}) <code>{}</code></td></tr>",
        run->benchmark, run->role, run->git_sha, run->branch, run->pr ? std::to_string(*run->pr) : std::string("–"),
        iso_date(run->created_at), run->backend, run->testbed.name, run->testbed.cpu, run->testbed.cores,
        run->testbed.kernel, run->testbed.fingerprint.substr(0, 12));
    w << "</tbody></table><h2>Counters</h2><table id=\"samples\"><thead><tr><th>counter</th><th>unit</th>"
         "<th>median</th><th>samples</th></tr></thead><tbody>";
    for (const auto& c : run->counters) {
        std::vector<double> values;
        std::string listed;
        for (const auto& s : c.samples) {
            if (!listed.empty()) listed += ' ';
            listed += s.value ? fmt::format("{:.6g}", *s.value) : std::string("n/a");
            if (s.value) values.push_back(*s.value);
        }
        w.f("<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td class=\"samples\">{}</td></tr>",
            series_url(p.project, run->benchmark, c.counter), c.counter, c.unit, number(stats::median(values), 6), listed);
    }
    w << "</tbody></table><h2>Environment</h2><pre id=\"environment\">";
    std::string env = run->environment_json;
    try {
        env = json::parse(run->environment_json).dump(2, ' ', false, json::error_handler_t::replace);
    } catch (const json::exception&) {
        // Shown as stored.
    }
    w.text(env);
    w << "</pre>";
    v.set_data(json{{"page", "run"}, {"run_id", id}});
    return v;
}

// ---------------------------------------------------------------------------
// Comparison

bool is_regression(const gate::counter_report& c) { return c.state == gate::status::regression; }

// The values of one counter in a run (those that were counted).
std::vector<double> values_of(const model::run_record& run, std::string_view counter)
{
    std::vector<double> values;
    for (const auto& c : run.counters) {
        if (c.counter != counter) continue;
        for (const auto& s : c.samples)
            if (s.value && std::isfinite(*s.value)) values.push_back(*s.value);
    }
    return values;
}

// Both runs' samples of one counter as an inline SVG strip plot: one row
// per side, one dot per repetition (spread vertically by repetition so that
// equal values stay visible), a tick at each side's median. No script.
void strip_plot(writer& w, std::span<const double> base, std::span<const double> head, std::string_view unit)
{
    constexpr double width = 360, height = 70, left = 38, right = 10, row_base = 18, row_head = 42, axis = 62;
    if (base.empty() && head.empty()) {
        w << "<p class=\"empty\">no samples</p>";
        return;
    }
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto side : {base, head}) {
        for (const double v : side) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    const double pad = hi > lo ? (hi - lo) * 0.05 : std::max(std::abs(lo) * 0.05, 1e-9);
    const auto x_of = [&](double v) {
        return fmt::format("{:.2f}", left + (v - lo + pad) / (hi - lo + 2 * pad) * (width - left - right));
    };
    const auto at = [](double v) { return fmt::format("{:.1f}", v); };
    w.f("<svg class=\"strip\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\">",
        width, height, width, height);
    w.f("<title>baseline {} samples, candidate {} samples ({})</title>", base.size(), head.size(), unit);
    const auto row = [&](std::span<const double> values, double y, markup cls, markup label) {
        w.f("<text x=\"2\" y=\"{}\">", at(y + 3)) << label << "</text>";
        for (std::size_t i = 0; i < values.size(); ++i) {
            // Spread by repetition, so that equal values stay visible.
            const double jitter = (static_cast<double>(i % 7) - 3.0) * 1.6;
            w << "<circle class=\"" << cls;
            w.f("\" cx=\"{}\" cy=\"{}\" r=\"3\"><title>{}</title></circle>", x_of(values[i]), at(y + jitter),
                fmt::format("#{}: {:.6g} {}", i + 1, values[i], unit));
        }
        std::vector<double> sorted(values.begin(), values.end());
        if (const auto med = stats::median(sorted)) {
            w.f("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"><title>{}</title></line>", x_of(*med), x_of(*med),
                at(y - 9), at(y + 9), fmt::format("median {:.6g}", *med));
        }
    };
    row(base, row_base, "base", "base");
    row(head, row_head, "head", "head");
    w.f("<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text></svg>", at(left), at(axis),
        fmt::format("{:.5g}", lo), at(width - right), at(axis), fmt::format("{:.5g} {}", hi, unit));
}

// The baseline branch's recent medians of one counter on the base run's
// testbed, with both runs of the comparison in it: [run_id, created_at, median].
json history_of(page_state& p, const model::run_record& base, const model::run_record& head,
                const gate::counter_report& c)
{
    model::history_query hq;
    hq.project = p.project;
    hq.benchmark = base.benchmark;
    hq.counter = c.name;
    hq.branch = base.branch;
    hq.testbed = base.testbed.fingerprint;
    hq.role = "baseline";
    hq.before_run = std::max(base.id, head.id) + 1;
    hq.limit = 60;
    std::vector<std::tuple<std::int64_t, std::int64_t, double>> rows;
    for (const auto& pt : p.ctx.service.history(hq)) rows.emplace_back(pt.run_id, pt.created_at, pt.median);
    const auto add = [&](const model::run_record& run, const std::optional<double>& median) {
        const bool present = std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return std::get<0>(r) == run.id; });
        if (!present && median) rows.emplace_back(run.id, run.created_at, *median);
    };
    add(base, c.baseline.median);
    add(head, c.candidate.median);
    std::sort(rows.begin(), rows.end());
    json points = json::array();
    for (const auto& [run_id, created_at, median] : rows) points.push_back({run_id, created_at, median});
    return points;
}

// A benchmark's differential flame graph (perfgate run --profile), in a
// sandboxed frame: the SVG came from a client, so it runs nothing there
// (and its own response forbids scripts too); its frames' tooltips work.
void flame_graph_figure(writer& w, const std::string& comparison_path, const std::string& benchmark)
{
    const std::string src = comparison_path + "/flame.svg" + html::url_query({{"benchmark", benchmark}});
    w.f("<figure class=\"flame-graph\"><iframe sandbox src=\"{}\" title=\"flame graph of {}\" loading=\"lazy\"></iframe>"
        "<figcaption>Differential flame graph (perf, the candidate's stacks; red: share of samples grew, blue: shrank). "
        "<a href=\"{}\">open it alone</a></figcaption></figure>",
        src, benchmark, src);
}

// The stored SVG, with the artifact headers (router.hpp).
response flame_graph_file(page_state& p, const page_match& m, const query_params& q)
{
    q.only({"benchmark"});
    const auto id = positive_id(m.id, "comparison id");
    const std::string benchmark = q.required("benchmark");
    auto svg = p.ctx.service.flame_graph(p.project, id, benchmark);
    if (!svg) {
        throw error("artifact.not_found",
                    fmt::format("comparison {} has no flame graph of benchmark '{}'", id, benchmark));
    }
    response res{http::status::ok, p.req.version()};
    res.set(http::field::content_type, "image/svg+xml; charset=utf-8");
    set_artifact_headers(res);
    res.keep_alive(p.req.keep_alive());
    res.body() = std::move(*svg);
    res.prepare_payload();
    return res;
}

page_view comparison_view(page_state& p, std::int64_t id, const query_params& q)
{
    q.only({"only", "gated"});
    const std::string only = one_of(q, "only", {"all", "regressions"});
    const std::string gated = one_of(q, "gated", {"0", "1"});
    auto& svc = p.ctx.service;
    const auto rep = svc.load_comparison(p.project, id);
    if (!rep) throw error("compare.not_found", fmt::format("project '{}' has no comparison {}", p.project, id));
    page_view v("comparison", fmt::format("Comparison {}", id));
    writer& w = v.body;
    w.f("<p class=\"verdict verdict-{}\" id=\"verdict\">{}</p>", gate::to_string(rep->result), gate::to_string(rep->result));
    const std::string here = fmt::format("{}/comparisons/{}", project_path(p.project), id);
    w.f("<p class=\"filters\"><a href=\"{}\">all counters</a> · <a href=\"{}?only=regressions\">only regressions</a> · "
        "<a href=\"{}?gated=1\">only gated</a> · <a href=\"/api/v1/projects/{}/comparisons/{}?format=markdown\">markdown</a></p>",
        here, here, here, html::url_encode(p.project), id);
    for (const auto& warning : rep->warnings) w.f("<p class=\"warning\">{}</p>", warning);
    const auto flame_graphs = svc.flame_graph_benchmarks(p.project, id);
    json histories = json::array();
    for (const auto& b : rep->benchmarks) {
        // The two runs of this benchmark (absent from reports stored before
        // they were recorded: then no distributions or histories).
        std::optional<model::run_record> base, head;
        if (b.baseline_run && b.candidate_run) {
            base = svc.run(p.project, *b.baseline_run);
            head = svc.run(p.project, *b.candidate_run);
        }
        w.f("<h2>{} <span class=\"verdict verdict-{}\">{}</span></h2>", b.name, gate::to_string(b.result), gate::to_string(b.result));
        if (base && head) {
            w.f("<p class=\"runs\">base <a href=\"{}/runs/{}\">run {}</a> <code>{}</code> ({}) → head <a href=\"{}/runs/{}\">run {}</a> "
                "<code>{}</code> ({})</p>",
                project_path(p.project), base->id, base->id, base->git_sha.substr(0, 12), base->branch, project_path(p.project),
                head->id, head->id, head->git_sha.substr(0, 12), head->branch);
        }
        if (std::binary_search(flame_graphs.begin(), flame_graphs.end(), b.name)) flame_graph_figure(w, here, b.name);
        w << "<table class=\"report\"><thead><tr><th>counter</th><th>gated</th><th>baseline median</th>"
             "<th>candidate median</th><th>delta</th><th>p (adjusted)</th><th>status</th><th>why</th>"
             "</tr></thead><tbody>";
        for (const auto& c : b.counters) {
            if (only == "regressions" && !is_regression(c)) continue;
            if (gated == "1" && !c.gated) continue;
            w.f("<tr class=\"counter state-{}\"><td><a href=\"{}\">{}</a></td><td>{}</td><td>{} {}</td><td>{} {}</td>"
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                gate::to_string(c.state), series_url(p.project, b.name, c.name), c.name, c.gated ? "yes" : "",
                number(c.baseline.median, 5), c.unit, number(c.candidate.median, 5), c.unit, percent(c.delta_pct),
                number(c.p_adjusted, 3), gate::to_string(c.state), c.reason);
            if (base && head) {
                // Below the counter's row: its two distributions and its history.
                w << "<tr class=\"detail\"><td colspan=\"8\"><div class=\"detail\">";
                strip_plot(w, values_of(*base, c.name), values_of(*head, c.name), c.unit);
                w.f("<div class=\"history\" data-index=\"{}\"></div></div></td></tr>", histories.size());
                histories.push_back({{"benchmark", b.name}, {"counter", c.name}, {"unit", c.unit},
                                     {"points", history_of(p, *base, *head, c)},
                                     {"highlight", {base->id, head->id}}});
            }
        }
        w << "</tbody></table>";
    }
    v.set_data(json{{"page", "comparison"}, {"comparison_id", id}, {"histories", std::move(histories)}});
    return v;
}

response compare_page(page_state& p, const query_params& q)
{
    q.only({"base", "head"});
    if (!p.session) {
        // Running a comparison stores it: a write, so it needs a token.
        return redirect(project_path(p.project) + "/signin" + html::url_query({{"next", sv(p.req.target())}}), p.req);
    }
    // Run ids or git shas (service::pairs_for): a commit stands for its runs.
    const auto pairs = p.ctx.service.pairs_for(p.project, q.required("base"), q.required("head"));
    const auto c = p.ctx.service.compare(p.project, pairs, gate::policy{});
    return redirect(fmt::format("{}/comparisons/{}", project_path(p.project), c.id), p.req);
}

// ---------------------------------------------------------------------------
// Overview

// The overview's sparklines: this many recent runs of each series.
constexpr std::size_t overview_points = 60;

page_view overview_view(page_state& p, const query_params& q)
{
    q.only({});
    auto& svc = p.ctx.service;
    const std::string baseline = svc.baseline_branch(p.project);
    page_view v("overview", p.project);
    writer& w = v.body;
    w.f("<p>Baseline branch <code>{}</code>.</p><h2>Benchmarks</h2>", baseline);
    w << "<table id=\"benchmarks\"><thead><tr><th>benchmark</th><th>counter</th><th>testbed</th><th>trend</th>"
         "<th>latest</th><th>runs</th><th>last run</th></tr></thead><tbody>";
    json sparklines = json::array();
    for (const auto& b : svc.benchmarks(p.project)) {
        for (const auto& counter : b.counters) {
            if (!capture::lookup_counter(counter).gated) continue;
            model::history_query hq;
            hq.project = p.project;
            hq.benchmark = b.name;
            hq.counter = counter;
            hq.branch = baseline;
            hq.limit = overview_points * 4;
            // One row per testbed (machines are not comparable), the one
            // measured last first; each with its last overview_points runs.
            std::vector<std::vector<model::history_point>> testbeds;
            const auto points = svc.history(hq);
            for (auto pt = points.rbegin(); pt != points.rend(); ++pt) {
                auto it = std::find_if(testbeds.begin(), testbeds.end(),
                                       [&](const auto& t) { return t.front().testbed == pt->testbed; });
                if (it == testbeds.end()) it = testbeds.insert(testbeds.end(), std::vector<model::history_point>{});
                if (it->size() < overview_points) it->push_back(*pt);
            }
            if (testbeds.empty()) testbeds.emplace_back();
            for (auto& mine : testbeds) {
                std::reverse(mine.begin(), mine.end());
                json pts = json::array();
                for (const auto& pt : mine) pts.push_back({pt.run_id, pt.median});
                const std::string testbed = mine.empty() ? std::string() : mine.front().testbed;
                const std::string href = series_url(p.project, b.name, counter, testbed, baseline);
                w.f("<tr class=\"benchmark\"><td>{}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td><div class=\"sparkline\" "
                    "data-index=\"{}\"></div></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    b.name, href, counter, mine.empty() ? std::string("–") : mine.front().testbed_name, sparklines.size(),
                    mine.empty() ? std::string("–") : number(mine.back().median, 5), b.runs, iso_date(b.last_run_at));
                sparklines.push_back({{"benchmark", b.name}, {"counter", counter}, {"points", std::move(pts)}, {"href", href}});
            }
        }
    }
    w << "</tbody></table><h2>Recent comparisons</h2><table id=\"comparisons\"><thead><tr><th>comparison</th>"
         "<th>verdict</th><th>base</th><th>head</th><th>benchmarks</th><th>when</th></tr></thead><tbody>";
    const auto comparisons = svc.recent_comparisons(p.project);
    for (const auto& c : comparisons) {
        const std::string verdict = c.verdict.value_or("unknown");
        w.f("<tr id=\"comparison-{}\" class=\"verdict-{}\"><td><a href=\"{}/comparisons/{}\">{}</a></td>"
            "<td><span class=\"verdict verdict-{}\">{}</span></td><td><code>{}</code> {}</td><td><code>{}</code> {}</td>"
            "<td>{}</td><td>{}</td></tr>",
            c.id, verdict, project_path(p.project), c.id, c.id, verdict, verdict, c.baseline.git_sha.substr(0, 12),
            c.baseline.branch, c.candidate.git_sha.substr(0, 12), c.candidate.branch,
            c.benchmarks ? std::to_string(*c.benchmarks) : std::string("–"), iso_date(c.created_at));
    }
    w << "</tbody></table>";
    if (comparisons.empty()) w << "<p class=\"empty\" id=\"no-comparisons\">No comparisons yet.</p>";
    w << "<h2>Open alerts</h2><table id=\"open-alerts\"><thead><tr><th>alert</th><th>series</th>"
         "<th>change</th><th>status</th></tr></thead><tbody>";
    for (const auto status : {model::alert_status::untriaged, model::alert_status::acknowledged}) {
        for (const auto& a : svc.alerts({p.project, status, std::nullopt, std::nullopt, std::nullopt, 50})) {
            w.f("<tr><td><a href=\"{}/alerts#alert-{}\">{}</a></td><td>{} · {}</td><td>{}</td><td>"
                "<span class=\"badge status-{}\">{}</span></td></tr>",
                project_path(p.project), a.id, a.id, a.change.series.benchmark, a.change.series.counter,
                percent(a.change.delta_pct), model::to_string(a.status), model::to_string(a.status));
        }
    }
    w << "</tbody></table>";
    v.set_data(json{{"page", "overview"}, {"project", p.project}, {"sparklines", std::move(sparklines)}});
    return v;
}

// ---------------------------------------------------------------------------
// Sign-in

// Only a path of this project's dashboard: never an open redirect.
std::string safe_next(const std::string& project, const std::optional<std::string>& next)
{
    const std::string home = project_path(project);
    if (!next || next->empty()) return home;
    if (*next == home || next->starts_with(home + "/") || next->starts_with(home + "?")) {
        if (next->find_first_of("\r\n\\") == std::string::npos && !next->starts_with(home + "/signin")) return *next;
    }
    return home;
}

response signin_page(page_state& p, const std::optional<std::string>& next, std::string_view problem = {},
                     http::status status = http::status::ok)
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
    try {
        if (token.empty()) throw error("auth.missing_token", "no token given");
        p.ctx.service.authorize(token, p.project);
    } catch (const error& e) {
        if (!std::string_view(e.id()).starts_with("auth.") && e.id() != std::string("project.not_found")) throw;
        return signin_page(p, next, "That token does not open this project.", http::status::unauthorized);
    }
    const std::string id = p.ctx.sessions->create(p.project);
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

// ---------------------------------------------------------------------------

response asset(const request& req, const page_match& m)
{
    const embedded_asset* a = find_asset(m.id);
    if (!a) throw error("http.not_found", fmt::format("no asset '{}'", m.id.substr(0, 64)));
    const std::string etag = fmt::format("\"{}\"", a->sha256.substr(0, 32));
    const auto inm = req.find(http::field::if_none_match);
    response res{http::status::ok, req.version()};
    res.set(http::field::etag, etag);
    res.set(http::field::cache_control, "public, max-age=3600");
    res.set("X-Content-Type-Options", "nosniff");
    res.keep_alive(req.keep_alive());
    if (inm != req.end() && sv(inm->value()) == etag) {
        res.result(http::status::not_modified);
        return res;
    }
    res.set(http::field::content_type, bsv(asset_content_type(a->name)));
    res.body() = std::string(a->body);
    res.prepare_payload();
    return res;
}

// A read-only page from the cache, or made and kept. The generation is
// read before the page is made: a write racing with it leaves an entry
// that the next request already finds stale.
template <typename Make>
response cached(page_state& p, Make make)
{
    if (!p.ctx.page_cache) return render(p, make());
    const std::uint64_t generation = p.ctx.service.generation();
    const std::string key(sv(p.req.target()));
    if (const auto hit = p.ctx.page_cache->find(key, generation)) return render(p, *hit);
    const auto made = std::make_shared<const page_view>(make());
    p.ctx.page_cache->put(key, generation, made);
    return render(p, *made);
}

response dispatch_page(const request& req, context& ctx, const page_match& m)
{
    if (m.what == page::none && m.project.empty()) {
        throw error("http.not_found", fmt::format("no page at '{}'", sv(req.target()).substr(0, 128)));
    }
    if (m.what == page::none) {
        // A mistyped dashboard address: a page a person can read, with a way back.
        const page_state p{req, ctx, m.project, session_of(req, ctx, m.project)};
        return error_page(p, http::status::not_found,
                          fmt::format("There is no page at '{}'.", sv(req.target()).substr(0, 128)));
    }
    if (req.method() != m.method) {
        response res = error_response("http.method_not_allowed",
                                      fmt::format("{} is not allowed here; use {}", sv(req.method_string()),
                                                  sv(http::to_string(m.method))),
                                      req.version(), req.keep_alive());
        res.set(http::field::allow, http::to_string(m.method));
        return res;
    }
    if (m.what == page::asset) return asset(req, m);

    page_state p{req, ctx, m.project, session_of(req, ctx, m.project)};
    try {
        const std::string_view target = sv(req.target());
        const auto qpos = target.find('?');
        const query_params q(qpos == std::string_view::npos ? std::string_view{} : target.substr(qpos + 1));
        if (m.what == page::signin) return signin_page(p, q.get("next"));
        if (m.what == page::signin_post) return signin_post(p);
        if (m.what == page::signout) return signout(p);
        if (m.what == page::triage) check_form_origin(req);
        if (!p.session && !(ctx.public_read && m.what != page::triage)) {
            return redirect(project_path(p.project) + "/signin" + html::url_query({{"next", sv(req.target())}}), req);
        }
        ctx.service.require_project(p.project);
        switch (m.what) {
        case page::overview: return cached(p, [&] { return overview_view(p, q); });
        case page::series: return cached(p, [&] { return series_view(p, q); });
        case page::comparison:
            return cached(p, [&] { return comparison_view(p, positive_id(m.id, "comparison id"), q); });
        case page::flame_graph: return flame_graph_file(p, m, q);
        case page::compare: return compare_page(p, q);
        case page::alerts: return alerts_page(p, q);
        case page::triage: return triage(p, m);
        case page::run: return cached(p, [&] { return run_view(p, m); });
        default: break;
        }
        throw error("http.not_found", "no such page");
    } catch (const error& e) {
        const unsigned status = status_for(e.id());
        // The router scrubs what only the operator should read.
        if (status >= 500 || std::string_view(e.id()).starts_with("store.")) throw;
        return error_page(p, static_cast<http::status>(status), e.what());
    }
}

} // namespace

std::optional<std::string_view> page_label(const request& req)
{
    const auto m = match_page(req);
    if (!m) return std::nullopt;
    return m->label;
}

response handle(const request& req, context& ctx)
{
    const auto m = match_page(req);
    PERFGATE_CHECK(m.has_value());
    return dispatch_page(req, ctx, *m);
}

} // namespace perfgate::server::pages
