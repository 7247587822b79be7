// GET /p/{project}: the project's overview: its gated counters per benchmark
// and testbed with sparklines, its recent comparisons, its open alerts.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "capture/counters.hpp"
#include "model/error.hpp"
#include "server/pages/quantity.hpp"
#include "server/pages/views.hpp"
#include "service/service.hpp"

namespace perfgate::server::pages {

namespace {

// The overview's sparklines: this many recent runs of each series.
constexpr std::size_t overview_points = 60;

// Benchmarks per page of the overview (?page=N, 1-based): a google/benchmark
// suite stores hundreds, and one page of 500 benchmarks x 3 gated counters
// was 1,500 rows and sparklines (1 MiB of HTML, ~120 ms to render; see
// docs/performance.md "Dashboard with a big suite").
constexpr std::size_t overview_page_benchmarks = 50;

// One benchmark's counter on the baseline branch: one row per testbed
// (machines are not comparable), the one measured last first; each with its
// last overview_points runs, oldest first. One empty row when it has none.
std::vector<std::vector<model::history_point>> overview_testbeds(page_state& p, const std::string& benchmark,
                                                                 const std::string& counter,
                                                                 const std::string& baseline)
{
    model::history_query hq;
    hq.project = p.project;
    hq.benchmark = benchmark;
    hq.counter = counter;
    hq.branch = baseline;
    hq.limit = overview_points * 4;
    std::vector<std::vector<model::history_point>> testbeds;
    const auto points = p.ctx.service.history().points(hq);
    for (auto pt = points.rbegin(); pt != points.rend(); ++pt) {
        auto it = std::find_if(testbeds.begin(), testbeds.end(),
                               [&](const auto& t) { return t.front().testbed == pt->testbed; });
        if (it == testbeds.end()) it = testbeds.insert(testbeds.end(), std::vector<model::history_point>{});
        if (it->size() < overview_points) it->push_back(*pt);
    }
    if (testbeds.empty()) testbeds.emplace_back();
    for (auto& mine : testbeds) std::reverse(mine.begin(), mine.end());
    return testbeds;
}

// The links between the overview's pages, when there is more than one.
void overview_pager(writer& w, const page_state& p, std::string_view id, std::size_t page, std::size_t pages,
                    std::size_t first, std::size_t last, std::size_t total)
{
    if (pages <= 1) return;
    const std::string path = project_path(p.project);
    auto link = [&](std::size_t to, std::string_view rel, std::string_view text) {
        w.f(" <a rel=\"{}\" href=\"{}?page={}\">{}</a>", rel, path, to, text);
    };
    w.f("<nav class=\"pager\" id=\"{}\">Benchmarks {}–{} of {}, page {} of {}:", id, first, last, total, page, pages);
    if (page > 1) {
        link(1, "first", "first");
        link(page - 1, "prev", "previous");
    }
    if (page < pages) {
        link(page + 1, "next", "next");
        link(pages, "last", "last");
    }
    w << "</nav>";
}

// The benchmarks table, one page of it; `sparklines` gets each row's points
// for dashboard.js.
void overview_benchmarks(writer& w, page_state& p, const std::string& baseline, std::size_t page, json& sparklines)
{
    auto all = p.ctx.service.history().benchmarks(p.project);
    const std::size_t pages = (all.size() + overview_page_benchmarks - 1) / overview_page_benchmarks;
    if (page > std::max<std::size_t>(pages, 1)) {
        throw error(errors::http_bad_param,
                    fmt::format("page {}: the overview has {} page{}", page, pages, pages == 1 ? "" : "s"));
    }
    const std::size_t first = (page - 1) * overview_page_benchmarks;
    const std::size_t last = std::min(all.size(), first + overview_page_benchmarks);
    overview_pager(w, p, "benchmarks-pager", page, pages, first + 1, last, all.size());
    w << "<table id=\"benchmarks\"><thead><tr><th>benchmark</th><th>counter</th><th>testbed</th><th>trend</th>"
         "<th>latest</th><th>runs</th><th>last run</th></tr></thead><tbody>";
    for (std::size_t i = first; i < last; ++i) {
        const auto& b = all[i];
        for (const auto& counter : b.counters) {
            if (!capture::lookup_counter(counter).gated) continue;
            for (const auto& mine : overview_testbeds(p, b.name, counter, baseline)) {
                json pts = json::array();
                for (const auto& pt : mine) pts.push_back({pt.run_id, pt.median});
                const std::string testbed = mine.empty() ? std::string() : mine.front().testbed;
                const std::string href = series_url(p.project, b.name, counter, testbed, baseline);
                w.f("<tr class=\"benchmark\"><td>{}</td><td><a href=\"{}\">{}</a></td><td title=\"{}\">{}</td><td><div class=\"sparkline\" "
                    "data-index=\"{}\"></div></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    b.name, href, counter, testbed, mine.empty() ? std::string("–") : mine.front().testbed_name,
                    sparklines.size(),
                    mine.empty() ? std::string("–")
                                 : quantity(mine.back().median, capture::lookup_counter(counter).unit),
                    b.runs, iso_date(b.last_run_at));
                sparklines.push_back(
                    {{"benchmark", b.name}, {"counter", counter}, {"points", std::move(pts)}, {"href", href}});
            }
        }
    }
    w << "</tbody></table>";
    overview_pager(w, p, "benchmarks-pager-end", page, pages, first + 1, last, all.size());
}

void overview_comparisons(writer& w, page_state& p)
{
    w << "<h2>Recent comparisons</h2><table id=\"comparisons\"><thead><tr><th>comparison</th>"
         "<th>verdict</th><th>base</th><th>head</th><th>benchmarks</th><th>when</th></tr></thead><tbody>";
    const auto comparisons = p.ctx.service.comparisons().recent(p.project);
    const auto repository = p.ctx.service.projects().repository_url(p.project);
    for (const auto& c : comparisons) {
        const std::string verdict = c.verdict.value_or("unknown");
        w.f("<tr id=\"comparison-{}\" class=\"verdict-{}\"><td><a href=\"{}/comparisons/{}\">{}</a></td>"
            "<td><span class=\"verdict verdict-{}\">{}</span></td><td>",
            c.id, verdict, project_path(p.project), c.id, c.id, verdict, verdict);
        commit_ref(w, repository, c.baseline.git_sha);
        w.f(" {}</td><td>", c.baseline.branch);
        commit_ref(w, repository, c.candidate.git_sha);
        w.f(" {}</td><td>{}</td><td>{}</td></tr>", c.candidate.branch,
            c.benchmarks ? std::to_string(*c.benchmarks) : std::string("–"), iso_date(c.created_at));
    }
    w << "</tbody></table>";
    if (comparisons.empty()) w << "<p class=\"empty\" id=\"no-comparisons\">No comparisons yet.</p>";
}

void overview_open_alerts(writer& w, page_state& p)
{
    w << "<h2>Open alerts</h2><table id=\"open-alerts\"><thead><tr><th>alert</th><th>series</th>"
         "<th>change</th><th>status</th></tr></thead><tbody>";
    for (const auto status : {model::alert_status::untriaged, model::alert_status::acknowledged}) {
        for (const auto& a :
             p.ctx.service.alerts().list({p.project, status, std::nullopt, std::nullopt, std::nullopt, 50})) {
            w.f("<tr><td><a href=\"{}/alerts#alert-{}\">{}</a></td><td>{} · {}</td><td>{}</td><td>"
                "<span class=\"badge status-{}\">{}</span></td></tr>",
                project_path(p.project), a.id, a.id, a.change.series.benchmark, a.change.series.counter,
                percent(a.change.delta_pct), model::to_string(a.status), model::to_string(a.status));
        }
    }
    w << "</tbody></table>";
}

} // namespace

page_view overview_view(page_state& p, const query_params& q)
{
    q.only({"page"});
    const auto page_param = q.get("page");
    const auto page = static_cast<std::size_t>(page_param ? positive_id(*page_param, "page") : 1);
    const std::string baseline = p.ctx.service.projects().baseline_branch(p.project);
    page_view v("overview", p.project);
    writer& w = v.body;
    w.f("<p>Baseline branch <code>{}</code>.</p><h2>Benchmarks</h2>", baseline);
    json sparklines = json::array();
    overview_benchmarks(w, p, baseline, page, sparklines);
    overview_comparisons(w, p);
    overview_open_alerts(w, p);
    v.set_data(json{{"page", "overview"}, {"project", p.project}, {"sparklines", std::move(sparklines)}});
    return v;
}

} // namespace perfgate::server::pages
