// GET /p/{project}/series?benchmark=&counter=[&testbed=][&branch=][&role=][&range=][&x=][&log=][&from=&to=]:
// one benchmark's counter over time, a line per (branch, testbed, role) with
// its noise band and its change points (with their alerts) as markers; the
// chart itself is drawn by dashboard.js from the page's data. By default the
// baseline runs of the baseline branch, the series the watch sees
// (docs/history.md); role=candidate|all and branch=BR|* show others.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "api/wire.hpp"
#include "capture/counters.hpp"
#include "model/error.hpp"
#include "server/pages/views.hpp"
#include "service/service.hpp"
#include "stats/descriptive.hpp"

namespace perfgate::server::pages {

namespace {

// Rolling band of each point from the `band_window` points before it (at
// least band_min): median +- band_k * MAD scaled to a normal sigma. The
// window never reaches back across a change point (`starts`: the runs where
// one starts), as the gate's history band (gate/report.hpp); a change
// point's own run is judged against the segment before it.
constexpr std::size_t band_window = 20;
constexpr std::size_t band_min = 10;
constexpr double band_k = 3;

// The band is the spread of the run-to-run noise. A deterministic counter
// (callgrind's instructions: every repetition of a run the same, min == max)
// has none: its medians move only when the code does, and a MAD of those
// moves drew a +-7% "noise" band around a zero-noise series. So a window
// whose runs are all without spread, or whose MAD is 0, gets no band
// (docs/statistics.md#the-dashboards-band).
bool has_run_noise(const model::history_point& p)
{
    if (p.min && p.max) return *p.max > *p.min;
    return p.stddev && *p.stddev > 0;
}

json band_of(const std::vector<model::history_point>& points, const std::set<std::int64_t>& starts)
{
    json band = json::array();
    std::vector<double> window;
    std::size_t segment = 0; // first point of the segment before point i
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (i > 0 && starts.contains(points[i - 1].run_id)) segment = i - 1;
        const std::size_t from = std::max(segment, i > band_window ? i - band_window : std::size_t{0});
        if (i - from < band_min) continue;
        window.clear();
        bool noisy = false;
        for (std::size_t j = from; j < i; ++j) {
            window.push_back(points[j].median);
            noisy = noisy || has_run_noise(points[j]);
        }
        const double mad = *stats::mad(window);
        if (!noisy || mad <= 0) continue;
        const double med = *stats::median(window);
        const double spread = band_k * stats::mad_normal_consistency * mad;
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
        throw error(errors::http_bad_param,
                    fmt::format("query parameter '{}': expected a number, got '{}'", key, v->substr(0, 64)));
    }
    return d;
}

// What the page was asked for, checked.
struct series_request {
    std::string benchmark, counter;
    std::optional<std::string> testbed, branch; // branch: as asked (none: the baseline branch)
    std::string role;                           // baseline, candidate or all
    std::string range;                          // all, 30d, 90d
    std::string x;                              // run, date
    std::string log;                            // 0, 1
    std::optional<double> from, to;
};

series_request parse_series_request(const query_params& q)
{
    q.only({"benchmark", "counter", "testbed", "branch", "role", "range", "x", "log", "from", "to"});
    series_request r;
    r.benchmark = q.required("benchmark");
    r.counter = q.required("counter");
    r.testbed = q.get("testbed");
    r.branch = q.get("branch");
    if (r.branch && r.branch->empty()) r.branch.reset();
    r.role = one_of(q, "role", {"mainline", "baseline", "candidate", "all"});
    r.range = one_of(q, "range", {"all", "30d", "90d"});
    r.x = one_of(q, "x", {"run", "date"});
    r.log = one_of(q, "log", {"0", "1"});
    r.from = optional_number(q, "from");
    r.to = optional_number(q, "to");
    return r;
}

// The series' runs in the asked range, at most api::max_history_limit.
std::vector<model::history_point> series_history(page_state& p, const series_request& r)
{
    model::history_query hq;
    hq.project = p.project;
    hq.benchmark = r.benchmark;
    hq.counter = r.counter;
    const std::string branch = r.branch.value_or(p.ctx.service.projects().baseline_branch(p.project));
    if (branch != api::all_branches) hq.branch = branch;
    api::select_history_role(hq, r.role);
    hq.testbed = r.testbed;
    hq.limit = api::max_history_limit;
    if (r.range != "all") {
        const auto days = r.range == "30d" ? 30 : 90;
        hq.since = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                       .count() -
                   std::int64_t{days} * 86400;
    }
    return p.ctx.service.history().points(hq);
}

struct line_key {
    std::string branch, testbed, testbed_name, role;
    bool operator==(const line_key& o) const { return branch == o.branch && testbed == o.testbed && role == o.role; }
};

// One line per (branch, testbed, role), the baseline branch first; lines
// are named by testbed only when the series spans several, and always by
// role ("main · baseline").
struct series_lines {
    std::vector<line_key> keys;
    bool several_testbeds = false;

    [[nodiscard]] std::string label(std::size_t i) const
    {
        const line_key& k = keys[i];
        const std::string name = fmt::format("{} · {}", k.branch, k.role);
        return several_testbeds ? fmt::format("{} @ {}", name, k.testbed_name) : name;
    }
};

// A point's line role: "mainline" in the mainline view (the series is one
// line whichever role measured each point), else the point's role.
std::string line_role(const model::history_point& pt, const series_request& r)
{
    return r.role == api::mainline_runs ? std::string(api::mainline_runs) : pt.role;
}

series_lines lines_of(const std::vector<model::history_point>& points, const std::string& baseline,
                      const series_request& r)
{
    series_lines lines;
    auto& keys = lines.keys;
    for (const auto& pt : points) {
        line_key k{pt.branch, pt.testbed, pt.testbed_name, line_role(pt, r)};
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(std::move(k));
    }
    std::stable_partition(keys.begin(), keys.end(), [&](const line_key& k) { return k.branch == baseline; });
    lines.several_testbeds = std::any_of(keys.begin(), keys.end(),
                                         [&](const line_key& k) { return k.testbed != keys.front().testbed; });
    return lines;
}

// The chart's data for dashboard.js: each line's points and band, and the
// change points shown on them.
struct series_chart {
    json lines = json::array();
    json markers = json::array();
};

// The change points of line `li` that fall on its shown points, each with
// the alert raised on it, if any.
void add_markers(json& markers, const page_state& p, std::size_t li, const line_key& key,
                 const std::vector<model::history_point>& mine,
                 const std::vector<model::change_point_record>& change_points, const std::vector<model::alert>& alerts)
{
    for (const auto& cp : change_points) {
        const bool shown = std::any_of(mine.begin(), mine.end(),
                                       [&](const auto& pt) { return pt.run_id == cp.run_id; });
        if (!shown) continue;
        json m{{"line", li},
               {"run_id", cp.run_id},
               {"git_sha", cp.git_sha},
               {"p_value", cp.p_value},
               {"delta_pct", cp.delta_pct ? json(*cp.delta_pct) : json(nullptr)},
               {"alert_id", nullptr},
               {"status", nullptr},
               {"href", nullptr}};
        for (const auto& a : alerts) {
            if (a.change.run_id != cp.run_id || a.change.series.branch != key.branch ||
                a.change.series.testbed != key.testbed)
                continue;
            m["alert_id"] = a.id;
            m["status"] = model::to_string(a.status);
            m["href"] = fmt::format("{}/alerts#alert-{}", project_path(p.project), a.id);
        }
        markers.push_back(std::move(m));
    }
}

series_chart chart_of(page_state& p, const series_request& r, const std::vector<model::history_point>& points,
                      const series_lines& lines)
{
    auto& svc = p.ctx.service;
    series_chart chart;
    model::alert_query aq{p.project, std::nullopt, r.benchmark, r.counter, r.testbed, service::max_alert_limit};
    const auto alerts = svc.alerts().list(aq);
    for (std::size_t li = 0; li < lines.keys.size(); ++li) {
        const auto& key = lines.keys[li];
        std::vector<model::history_point> mine;
        for (const auto& pt : points)
            if (pt.branch == key.branch && pt.testbed == key.testbed && line_role(pt, r) == key.role)
                mine.push_back(pt);
        const auto change_points = svc.history().change_points(p.project, r.benchmark, r.counter, key.testbed,
                                                               key.branch);
        std::set<std::int64_t> starts;
        for (const auto& cp : change_points) starts.insert(cp.run_id);
        chart.lines.push_back({{"label", lines.label(li)},
                               {"branch", key.branch},
                               {"testbed", key.testbed},
                               {"testbed_name", key.testbed_name},
                               {"role", key.role},
                               {"points", api::history_to_json(mine).at("points")},
                               {"band", band_of(mine, starts)}});
        add_markers(chart.markers, p, li, key, mine, change_points, alerts);
    }
    return chart;
}

// This page's URL with `range` and `role` set, the other parameters kept.
std::string series_href(const page_state& p, const series_request& r, std::string_view range, std::string_view role)
{
    return project_path(p.project) + "/series" +
           html::url_query({{"benchmark", r.benchmark},
                            {"counter", r.counter},
                            {"testbed", r.testbed.value_or("")},
                            {"branch", r.branch.value_or("")},
                            {"role", role == api::default_history_role ? std::string_view() : role},
                            {"range", range},
                            {"x", r.x == "run" ? "" : r.x},
                            {"log", r.log == "1" ? "1" : ""}});
}

// The range presets, the role switch, the log-scale and x-axis switches, a
// toggle per line.
void series_controls(writer& w, const page_state& p, const series_request& r, const series_lines& lines)
{
    w << "<div id=\"controls\" class=\"controls\"><span class=\"presets\">";
    for (const std::string_view range : {std::string_view("30d"), std::string_view("90d"), std::string_view("all")}) {
        w.f("<a class=\"preset{}\" data-range=\"{}\" href=\"{}\">{}</a>", range == r.range ? " active" : "", range,
            series_href(p, r, range, r.role),
            range == "all" ? std::string("all") : fmt::format("{} d", range.substr(0, 2)));
    }
    // Which runs: the mainline runs are what the watch sees (docs/history.md).
    w << "</span><span class=\"presets roles\" id=\"roles\">runs: ";
    for (const std::string_view role : {std::string_view("mainline"), std::string_view("baseline"),
                                        std::string_view("candidate"), std::string_view("all")}) {
        w.f("<a class=\"preset{}\" data-role=\"{}\" href=\"{}\">{}</a>", role == r.role ? " active" : "", role,
            series_href(p, r, r.range, role), role);
    }
    w << "</span><label><input type=\"checkbox\" id=\"log-toggle\"";
    if (r.log == "1") w << " checked";
    w << "> log scale</label><label>x axis <select id=\"x-axis\">";
    w << (r.x == "run" ? markup("<option value=\"run\" selected>run</option><option value=\"date\">date</option>")
                       : markup("<option value=\"run\">run</option><option value=\"date\" selected>date</option>"));
    w << "</select></label><span class=\"lines\">";
    for (std::size_t li = 0; li < lines.keys.size(); ++li) {
        w.f("<label><input type=\"checkbox\" class=\"line-toggle\" data-line=\"{}\" checked> {}</label>", li,
            lines.label(li));
    }
    w << "</span></div>";
}

// Below the controls: a note when there is nothing or too much to show,
// the chart's place, and a link to the same data from the API.
void series_chart_area(writer& w, const page_state& p, const series_request& r, std::size_t points)
{
    if (points == 0) {
        w << "<p class=\"empty\" id=\"no-points\">No runs match this series yet.</p>";
    } else if (points >= api::max_history_limit) {
        w.f("<p class=\"note\">Showing the most recent {} runs.</p>", points);
    }
    w << "<div id=\"chart\" class=\"chart\"></div><div id=\"hover\" class=\"hover\"></div>";
    w.f("<p class=\"api\">Data: <a href=\"/api/v1/projects/{}/history{}\">the history API</a></p>",
        html::url_encode(p.project),
        html::url_query({{"benchmark", r.benchmark},
                         {"counter", r.counter},
                         {"testbed", r.testbed.value_or("")},
                         {"branch", r.branch.value_or("")},
                         {"role", r.role == api::default_history_role ? std::string_view() : r.role}}));
}

// Under the controls: per testbed of the shown lines (the asked one only
// with ?testbed=), what its newest qualification of this benchmark says of
// this counter (docs/dashboard.md "Series"; perfgate qualify --server).
void series_qualifications(writer& w, const page_state& p, const series_request& r, const series_lines& lines)
{
    std::vector<std::pair<std::string, std::string>> testbeds; // fingerprint, name
    for (const auto& k : lines.keys) {
        if (r.testbed && k.testbed != *r.testbed) continue;
        if (std::none_of(testbeds.begin(), testbeds.end(), [&](const auto& t) { return t.first == k.testbed; }))
            testbeds.emplace_back(k.testbed, k.testbed_name);
    }
    if (testbeds.empty() && r.testbed) testbeds.emplace_back(*r.testbed, *r.testbed);
    bool opened = false;
    for (const auto& [fingerprint, name] : testbeds) {
        const auto found = p.ctx.service.qualifications().newest(p.project, fingerprint, r.benchmark);
        if (found.empty()) continue;
        const auto& q = found.front();
        const auto c = std::find_if(q.counters.begin(), q.counters.end(),
                                    [&](const auto& k) { return k.counter == r.counter; });
        if (c == q.counters.end()) continue;
        if (!opened) w << "<ul class=\"qualifications\" id=\"qualifications\">";
        opened = true;
        w << "<li class=\"qualification\">";
        if (testbeds.size() > 1) w.f("<b>{}</b>: ", name.empty() ? fingerprint : name);
        w.text(model::detects_line(q, *c));
        if (!c->reaches_threshold && !c->deterministic)
            w.f(": <span class=\"warn\">cannot promise the {}% threshold</span>", c->threshold_pct);
        w << "</li>";
    }
    if (opened) w << "</ul>";
}

json series_data(page_state& p, const series_request& r, const capture::counter_traits& traits, series_chart chart)
{
    const auto repository = p.ctx.service.projects().repository_url(p.project);
    return json{{"page", "series"},
                {"project", p.project},
                {"benchmark", r.benchmark},
                {"counter", r.counter},
                {"unit", traits.unit},
                {"better", traits.direction == capture::better::lower ? "lower" : "higher"},
                {"repository_url", repository ? json(*repository) : json(nullptr)},
                {"run_url", project_path(p.project) + "/runs/"},
                {"view", {{"range", r.range}, {"role", r.role}, {"x", r.x}, {"log", r.log == "1"}}},
                {"lines", std::move(chart.lines)},
                {"markers", std::move(chart.markers)}};
}

} // namespace

void check_series_request(const query_params& q) { (void)parse_series_request(q); }

page_view series_view(page_state& p, const query_params& q)
{
    const series_request r = parse_series_request(q);
    const auto points = series_history(p, r);
    const auto traits = capture::lookup_counter(r.counter);
    const series_lines lines = lines_of(points, p.ctx.service.projects().baseline_branch(p.project), r);
    series_chart chart = chart_of(p, r, points, lines);

    page_view v("series", fmt::format("{} · {}", r.benchmark, r.counter));
    series_controls(v.body, p, r, lines);
    series_qualifications(v.body, p, r, lines);
    series_chart_area(v.body, p, r, points.size());
    v.set_data(series_data(p, r, traits, std::move(chart)));
    return v;
}

} // namespace perfgate::server::pages
