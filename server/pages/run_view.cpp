// GET /p/{project}/runs/{id}: one run, its counters' samples and its environment.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/error.hpp"
#include "server/pages/quantity.hpp"
#include "server/pages/views.hpp"
#include "service/service.hpp"
#include "stats/descriptive.hpp"

namespace perfgate::server::pages {

namespace {

// The environment check's JSON as rows "path: value": objects by key,
// arrays of objects by their "name" (the checks) else by index.
void flatten(const json& j, const std::string& path, std::vector<std::pair<std::string, std::string>>& rows)
{
    const auto join = [&](const std::string& key) { return path.empty() ? key : path + " · " + key; };
    if (j.is_object()) {
        for (const auto& [key, value] : j.items()) flatten(value, join(key), rows);
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) {
            const auto& e = j[i];
            const bool named = e.is_object() && e.contains("name") && e["name"].is_string();
            if (named) {
                json rest = e;
                rest.erase("name");
                flatten(rest, join(e["name"].get<std::string>()), rows);
            } else {
                flatten(e, join(std::to_string(i)), rows);
            }
        }
    } else {
        rows.emplace_back(path, j.is_string() ? j.get<std::string>() : j.dump());
    }
}

// "(CPU, N cores, kernel K)" with what the testbed recorded; empty parts left out.
std::string testbed_details(const model::testbed_info& t)
{
    std::vector<std::string> parts;
    if (!t.cpu.empty()) parts.push_back(t.cpu);
    if (t.cores > 0) parts.push_back(fmt::format("{} cores", t.cores));
    if (!t.kernel.empty()) parts.push_back("kernel " + t.kernel);
    return parts.empty() ? std::string() : fmt::format("({})", fmt::join(parts, ", "));
}

// The environment as a table, and the stored JSON itself folded away.
void environment_section(writer& w, const std::string& stored)
{
    w << "<h2>Environment</h2>";
    std::vector<std::pair<std::string, std::string>> rows;
    std::string pretty = stored;
    try {
        const json env = json::parse(stored);
        flatten(env, "", rows);
        pretty = env.dump(2, ' ', false, json::error_handler_t::replace);
    } catch (const json::exception&) {
        // Shown as stored.
    }
    if (rows.empty()) {
        w << "<p class=\"empty\">No environment was recorded.</p>";
    } else {
        w << "<table class=\"meta\" id=\"environment-table\"><tbody>";
        for (const auto& [key, value] : rows) w.f("<tr><th>{}</th><td>{}</td></tr>", key, value);
        w << "</tbody></table>";
    }
    w << "<details class=\"raw-environment\"><summary>as stored (JSON)</summary><pre id=\"environment\">";
    w.text(pretty);
    w << "</pre></details>";
}

} // namespace

page_view run_view(page_state& p, const std::string& run_id)
{
    const auto id = positive_id(run_id, "run id");
    const auto run = p.ctx.service.runs().load(p.project, id);
    if (!run) throw error(errors::compare_not_found, fmt::format("project '{}' has no run {}", p.project, id));
    page_view v("run", fmt::format("Run {}", id));
    writer& w = v.body;
    w << "<table class=\"meta\" id=\"run-meta\"><tbody>";
    w.f("<tr><th>benchmark</th><td>{}</td></tr><tr><th>role</th><td>{}</td></tr><tr><th>git sha</th><td>",
        run->benchmark, run->role);
    commit_ref(w, p.ctx.service.projects().repository_url(p.project), run->git_sha);
    w.f("</td></tr><tr><th>branch</th><td>{}</td></tr><tr><th>pull request</th><td>{}</td></tr>"
        "<tr><th>created</th><td>{}</td></tr><tr><th>backend</th><td>{}</td></tr>"
        "<tr><th>testbed</th><td><span title=\"{}\">{}</span> {}</td></tr>"
        "<tr><th>command</th><td class=\"empty\">not recorded: runs store their counters, not the command line</td></tr>"
        "<tr><th>stored by</th><td id=\"written-by\">{}</td></tr><tr><th>main line</th><td>{}</td></tr>",
        run->branch, run->pr ? std::to_string(*run->pr) : std::string("–"), iso_date(run->created_at), run->backend,
        run->testbed.fingerprint, run->testbed.name, testbed_details(run->testbed), written_by_text(run->written_by),
        run->mainline ? "yes: feeds its branch's series" : "no");
    w << "</tbody></table><h2>Counters</h2><table id=\"samples\"><thead><tr><th>counter</th><th>unit</th>"
         "<th>median</th><th>samples</th></tr></thead><tbody>";
    for (const auto& c : run->counters) {
        std::vector<double> values;
        std::string listed;
        for (const auto& s : c.samples) {
            if (!listed.empty()) listed += "; ";
            listed += s.value ? quantity(*s.value, c.unit, 6) : std::string("n/a");
            if (s.value) values.push_back(*s.value);
        }
        w.f("<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td class=\"samples\">{}</td></tr>",
            series_url(p.project, run->benchmark, c.counter), c.counter, c.unit,
            quantity(stats::median(values), c.unit), listed);
    }
    w << "</tbody></table>";
    environment_section(w, run->environment_json);
    v.set_data(json{{"page", "run"}, {"run_id", id}});
    return v;
}

} // namespace perfgate::server::pages
