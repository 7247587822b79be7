// GET /p/{project}/runs/{id}: one run, its counters' samples and its environment.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/error.hpp"
#include "server/pages/views.hpp"
#include "service/service.hpp"
#include "stats/descriptive.hpp"

namespace perfgate::server::pages {

page_view run_view(page_state& p, const std::string& run_id)
{
    const auto id = positive_id(run_id, "run id");
    const auto run = p.ctx.service.run(p.project, id);
    if (!run) throw error(errors::compare_not_found, fmt::format("project '{}' has no run {}", p.project, id));
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
            series_url(p.project, run->benchmark, c.counter), c.counter, c.unit, number(stats::median(values), 6),
            listed);
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

} // namespace perfgate::server::pages
