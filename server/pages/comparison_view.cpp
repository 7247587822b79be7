// GET /p/{project}/comparisons/{id}: a stored comparison, per benchmark its
// counters with both runs' samples as strip plots and the baseline's recent
// history; its flame graphs (GET .../comparisons/{id}/flame.svg) framed in
// it; GET /p/{project}/compare?base=&head=, which runs a comparison.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <boost/beast/http/field.hpp>
#include <fmt/format.h>

#include "capture/counters.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "model/error.hpp"
#include "report/render.hpp"
#include "server/pages/quantity.hpp"
#include "server/pages/views.hpp"
#include "service/service.hpp"
#include "stats/descriptive.hpp"

namespace perfgate::server::pages {

namespace {

// An ungated counter is reported, never a verdict (docs/history.md
// "Alerts", the PR comment's table of gated counters): not a regression.
bool is_regression(const gate::counter_report& c) { return c.gated && c.state == gate::status::regression; }

// The status cell and row class of a counter: its state when it gates,
// else "not gated" (its delta and reason are still shown).
std::string_view shown_state(const gate::counter_report& c)
{
    return c.gated ? gate::to_string(c.state) : std::string_view("not gated");
}

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
                fmt::format("#{}: {}", i + 1, quantity(values[i], unit, 6)));
        }
        std::vector<double> sorted(values.begin(), values.end());
        if (const auto med = stats::median(sorted)) {
            w.f("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"><title>{}</title></line>", x_of(*med), x_of(*med),
                at(y - 9), at(y + 9), fmt::format("median {}", quantity(*med, unit, 6)));
        }
    };
    row(base, row_base, "base", "base");
    row(head, row_head, "head", "head");
    w.f("<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text></svg>", at(left),
        at(axis), quantity(lo, unit), at(width - right), at(axis), quantity(hi, unit));
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
    hq.mainline_only = true; // the branch's series (docs/history.md)
    hq.before_run = std::max(base.id, head.id) + 1;
    hq.limit = 60;
    std::vector<std::tuple<std::int64_t, std::int64_t, double>> rows;
    for (const auto& pt : p.ctx.service.history().points(hq)) rows.emplace_back(pt.run_id, pt.created_at, pt.median);
    const auto add = [&](const model::run_record& run, const std::optional<double>& median) {
        const bool present = std::any_of(rows.begin(), rows.end(),
                                         [&](const auto& r) { return std::get<0>(r) == run.id; });
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

// Runs measured apart (gate::benchmark_report::interleaved false): a line
// saying so and how the verdict was reached (docs/statistics.md "Runs not
// measured interleaved").
void not_interleaved_line(writer& w, const gate::benchmark_report& b)
{
    if (!b.interleaved || *b.interleaved) return;
    w << "<p class=\"warning not-interleaved\">these runs were not measured interleaved: no perfgate run "
         "measured them together, so each counter's shift is tested against the testbed's between-run variation (its "
         "history of consecutive baseline runs), or is inconclusive without enough of that history; measure baseline "
         "and candidate in one perfgate run for the rank test of interleaved rounds</p>";
}

// One attribution table (callgrind's or perf's): function, file, both
// sides' exclusive cost, the change and its part of all changes; perf rows
// add the self-share interval and are greyed when within the noise.
void attribution_table(writer& w, const std::vector<gate::function_change>& top, bool perf)
{
    w << "<table class=\"attribution\"><thead><tr><th>function</th><th>file</th><th class=\"num\">before</th>"
         "<th class=\"num\">after</th><th class=\"num\">Δ</th><th class=\"num\">share of the change</th>";
    if (perf) w << "<th class=\"num\">self share Δ [interval]</th><th>beyond the noise</th>";
    w << "</tr></thead><tbody>";
    for (const auto& c : top) {
        const bool noise = perf && c.significant && !*c.significant;
        w.f("<tr class=\"{}\"><td class=\"function\">{}</td><td class=\"file\">{}</td><td class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"num {}\">{}{}</td><td class=\"num\">{}</td>",
            noise ? "within-noise" : "changed", c.name, c.file, quantity(c.before, ""), quantity(c.after, ""),
            c.delta > 0   ? "grew"
            : c.delta < 0 ? "shrank"
                          : "",
            c.delta > 0 ? "+" : "", quantity(c.delta, ""), fmt::format("{:+.1f}%", c.share * 100));
        if (perf) {
            const std::string interval = c.interval ? fmt::format("[{:+.2f}, {:+.2f}] pp", c.interval->first,
                                                                  c.interval->second)
                                                    : "–";
            w.f("<td class=\"num\">{}</td><td>{}</td>", interval,
                c.significant ? (*c.significant ? "yes" : "no") : "–");
        }
        w << "</tr>";
    }
    w << "</tbody></table>";
}

// --backend memcheck: per failing memory counter, the function responsible,
// valgrind's kind and sentence, the values and the stack (docs/memory.md).
void memory_table(writer& w, const gate::memory_attribution& m)
{
    w << "<p class=\"source\">valgrind (memcheck and DHAT): what grew, by the function responsible</p>";
    if (m.top.empty()) w << "<p class=\"empty\">No allocation site, leak or error grew.</p>";
    else {
        w << "<table class=\"attribution memory\"><thead><tr><th>counter</th><th>function</th><th>kind</th>"
             "<th class=\"num\">before</th><th class=\"num\">after</th><th class=\"num\">Δ</th><th>stack</th>"
             "</tr></thead><tbody>";
        for (const auto& c : m.top) {
            std::string stack;
            for (const auto& f : c.stack) stack += (stack.empty() ? "" : "\n") + f;
            // heap-bytes, heap-peak-bytes and leaked-bytes are bytes, as in
            // the counter table below; the others are counts.
            const std::string_view unit = c.counter.ends_with("-bytes") ? "B" : "";
            w.f("<tr class=\"changed\"><td>{}</td><td class=\"function\">{}</td><td title=\"{}\">{}</td>"
                "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num grew\">+{}</td>"
                "<td class=\"file\"><pre>{}</pre></td></tr>",
                c.counter, c.function, c.what, c.kind, quantity(c.before, unit), quantity(c.after, unit),
                quantity(c.after - c.before, unit), stack);
        }
        w << "</tbody></table>";
    }
    if (m.suppressed_before || m.suppressed_after)
        w.f("<p class=\"note\">Errors suppressed (--suppressions): {} → {}</p>", m.suppressed_before,
            m.suppressed_after);
}

// "Where did it come from": the benchmark's stored attribution
// (service::store_attribution), as the report's markdown section has it.
void attribution_section(writer& w, const gate::attribution& a)
{
    w << "<section class=\"attribution\"><h3>Where did it come from</h3>";
    if (const auto& cg = a.callgrind) {
        w.f("<p class=\"source\">callgrind, exclusive {} per function: total {} → {}</p>", cg->event,
            quantity(cg->total_before, ""), quantity(cg->total_after, ""));
        if (cg->top.empty()) w << "<p class=\"empty\">No function's cost changed.</p>";
        else attribution_table(w, cg->top, false);
    }
    if (const auto& p = a.perf) {
        w.f("<p class=\"source\">perf record, {} self samples per function ({} execution{} per side): total {} → {}</p>",
            p->event, p->executions, p->executions == 1 ? "" : "s", quantity(p->samples_before, ""),
            quantity(p->samples_after, ""));
        if (const std::string note = report::perf_noise_note(*p); !note.empty())
            w.f("<p class=\"note\" id=\"perf-noise-note\">{}</p>", note);
        if (p->top.empty()) w << "<p class=\"empty\">No function's share changed.</p>";
        else attribution_table(w, p->top, true);
    }
    if (const auto& m = a.memory) memory_table(w, *m);
    if (!a.errors.empty()) {
        w << "<ul class=\"errors\">";
        for (const auto& e : a.errors) w.f("<li>{} attribution failed: {} ({})</li>", e.source, e.message, e.id);
        w << "</ul>";
    }
    w << "</section>";
}

// What the comparison page shows: ?only=regressions, ?gated=1.
struct comparison_filter {
    std::string only;
    std::string gated;
};

// The two runs of one benchmark of a comparison: absent from reports stored
// before they were recorded (then no distributions or histories).
struct benchmark_runs {
    std::optional<model::run_record> base, head;
};

// One counter's row and, below it when both runs are known, its two
// distributions and its history; `histories` gets the history's points.
void counter_rows(writer& w, page_state& p, const gate::benchmark_report& b, const gate::counter_report& c,
                  const benchmark_runs& runs, json& histories)
{
    w.f("<tr class=\"counter state-{}\"><td><a href=\"{}\">{}</a></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        c.gated ? gate::to_string(c.state) : "ungated", series_url(p.project, b.name, c.name), c.name,
        c.gated ? "yes" : "", quantity(c.baseline.median, c.unit), quantity(c.candidate.median, c.unit),
        percent(c.delta_pct), number(c.p_adjusted, 3), shown_state(c), c.reason);
    if (!runs.base || !runs.head) return;
    const auto& base = *runs.base;
    const auto& head = *runs.head;
    w << "<tr class=\"detail\"><td colspan=\"8\"><div class=\"detail\">";
    strip_plot(w, values_of(base, c.name), values_of(head, c.name), c.unit);
    w.f("<div class=\"history\" data-index=\"{}\"></div></div></td></tr>", histories.size());
    histories.push_back({{"benchmark", b.name},
                         {"counter", c.name},
                         {"unit", c.unit},
                         {"points", history_of(p, base, head, c)},
                         {"highlight", {base.id, head.id}}});
}

// One benchmark's section: its verdict, its runs, its flame graph when it
// has one, and its counters' table.
void benchmark_section(writer& w, page_state& p, const std::string& here, const gate::benchmark_report& b,
                       bool has_flame_graph, const comparison_filter& filter, json& histories)
{
    auto& svc = p.ctx.service;
    benchmark_runs runs;
    if (b.baseline_run && b.candidate_run) {
        runs.base = svc.runs().load(p.project, *b.baseline_run);
        runs.head = svc.runs().load(p.project, *b.candidate_run);
    }
    w.f("<h2>{} <span class=\"verdict verdict-{}\">{}</span></h2>", b.name, gate::to_string(b.result),
        gate::to_string(b.result));
    if (runs.base && runs.head) {
        const auto& base = *runs.base;
        const auto& head = *runs.head;
        const auto repository = svc.projects().repository_url(p.project);
        w.f("<p class=\"runs\">base <a href=\"{}/runs/{}\">run {}</a> ", project_path(p.project), base.id, base.id);
        commit_ref(w, repository, base.git_sha);
        w.f(" ({}) → head <a href=\"{}/runs/{}\">run {}</a> ", base.branch, project_path(p.project), head.id, head.id);
        commit_ref(w, repository, head.git_sha);
        w.f(" ({}) · testbed <span title=\"{}\">{}</span></p>", head.branch, head.testbed.fingerprint,
            head.testbed.name);
        // Who stored each side (issue 43: a run is only as trustworthy as
        // the token that wrote it).
        w.f("<p class=\"written-by\">base stored by {}{} · head stored by {}</p>", written_by_text(base.written_by),
            base.mainline ? " (main line)" : "", written_by_text(head.written_by));
    }
    not_interleaved_line(w, b);
    if (b.attribution_info) attribution_section(w, *b.attribution_info);
    if (has_flame_graph) flame_graph_figure(w, here, b.name);
    w << "<table class=\"report\"><thead><tr><th>counter</th><th>gated</th><th>baseline median</th>"
         "<th>candidate median</th><th>delta</th><th>p (adjusted)</th><th>status</th><th>why</th>"
         "</tr></thead><tbody>";
    for (const auto& c : b.counters) {
        if (filter.only == "regressions" && !is_regression(c)) continue;
        if (filter.gated == "1" && !c.gated) continue;
        counter_rows(w, p, b, c, runs, histories);
    }
    w << "</tbody></table>";
}

// A suite's figures (docs/report.md "Suites"), above the benchmarks: how
// many were compared and how they came out, the overall geometric means
// (not gated), and the benchmarks that were not compared. Nothing for a
// report of one benchmark.
void suite_section(writer& w, const gate::report& r)
{
    if (!gate::is_suite(r)) return;
    const gate::suite_counts n = gate::count_benchmarks(r);
    w.f("<p id=\"suite-summary\">{} benchmark{} compared: {} regression{}, {} improvement{}, {} unchanged, {} "
        "inconclusive",
        n.compared, n.compared == 1 ? "" : "s", n.regressions, n.regressions == 1 ? "" : "s", n.improvements,
        n.improvements == 1 ? "" : "s", n.unchanged, n.inconclusive);
    if (n.added + n.removed + n.failed > 0) w.f("; {} added, {} removed, {} failed", n.added, n.removed, n.failed);
    w << "</p>";
    if (const auto overall = gate::overall_geomeans(r); !overall.empty()) {
        w << "<table id=\"overall\"><thead><tr><th>counter</th><th>overall: geometric mean of candidate/baseline "
             "medians (not gated)</th><th>Δ</th><th>benchmarks</th></tr></thead><tbody>";
        for (const auto& o : overall) {
            w.f("<tr><td>{} ({} is better)</td><td>{}</td><td>{}</td><td>{}</td></tr>", o.counter,
                capture::to_string(o.direction), number(o.ratio), percent((o.ratio - 1) * 100), o.benchmarks);
        }
        w << "</tbody></table>";
    }
    auto names = [&w](std::string_view id, std::string_view label, const std::vector<std::string>& all) {
        if (all.empty()) return;
        w.f("<p id=\"{}\">{}:", id, label);
        for (std::size_t i = 0; i < all.size(); ++i) w.f("{} <code>{}</code>", i == 0 ? "" : ",", all[i]);
        w << "</p>";
    };
    names("added", "Added (candidate only, not compared)", r.added);
    names("removed", "Removed (baseline only, not compared)", r.removed);
    if (!r.failed.empty()) {
        w << "<ul id=\"failed\">";
        for (const auto& f : r.failed) w.f("<li>failed: <code>{}</code> ({}): {}</li>", f.name, f.side, f.message);
        w << "</ul>";
    }
}

} // namespace

// The stored SVG, with the artifact headers (router.hpp).
response flame_graph_file(page_state& p, const std::string& comparison_id, const query_params& q)
{
    q.only({"benchmark"});
    const auto id = positive_id(comparison_id, "comparison id");
    const std::string benchmark = q.required("benchmark");
    auto svg = p.ctx.service.artifacts().flame_graph(p.project, id, benchmark);
    if (!svg) {
        throw error(errors::artifact_not_found,
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
    comparison_filter filter;
    filter.only = one_of(q, "only", {"all", "regressions"});
    filter.gated = one_of(q, "gated", {"0", "1"});
    auto& svc = p.ctx.service;
    const auto rep = svc.comparisons().load(p.project, id);
    if (!rep) throw error(errors::compare_not_found, fmt::format("project '{}' has no comparison {}", p.project, id));
    page_view v("comparison", fmt::format("Comparison {}", id));
    writer& w = v.body;
    w.f("<p class=\"verdict verdict-{}\" id=\"verdict\">{}</p>", gate::to_string(rep->result),
        gate::to_string(rep->result));
    // A reviewer's acceptance (perfgate accept, docs/github.md): who, when,
    // why and for which commit; the login and reason are escaped like any text.
    // "Regression accepted" only when this comparison failed: a maintainer may
    // accept a head whose gate passed or was inconclusive.
    if (const auto accepted = svc.acceptances().of(p.project, id)) {
        w.f("<p class=\"acceptance\" id=\"acceptance\">{} by @{} for commit {} on {}: {} <span "
            "class=\"written-by\">(recorded by {})</span></p>",
            rep->result == gate::verdict::fail ? "Regression accepted" : "Accepted", accepted->login,
            accepted->head_sha.substr(0, 12), iso_date(accepted->accepted_at),
            accepted->reason.empty() ? std::string("no reason given") : accepted->reason,
            written_by_text(accepted->written_by));
    }
    const std::string here = fmt::format("{}/comparisons/{}", project_path(p.project), id);
    w.f("<p class=\"filters\"><a href=\"{}\">all counters</a> · <a href=\"{}?only=regressions\">only regressions</a> · "
        "<a href=\"{}?gated=1\">only gated</a> · <a href=\"/api/v1/projects/{}/comparisons/{}?format=markdown\">markdown</a></p>",
        here, here, here, html::url_encode(p.project), id);
    suite_section(w, *rep);
    for (const auto& warning : rep->warnings) w.f("<p class=\"warning\">{}</p>", warning);
    const auto flame_graphs = svc.artifacts().flame_graph_benchmarks(p.project, id);
    json histories = json::array();
    for (const auto& b : rep->benchmarks) {
        const bool has_flame_graph = std::binary_search(flame_graphs.begin(), flame_graphs.end(), b.name);
        benchmark_section(w, p, here, b, has_flame_graph, filter, histories);
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
    const auto pairs = p.ctx.service.comparisons().pairs_for(p.project, q.required("base"), q.required("head"));
    const auto c = p.ctx.service.comparisons().compare(p.project, pairs, gate::policy{});
    return redirect(fmt::format("{}/comparisons/{}", project_path(p.project), c.id), p.req);
}

} // namespace perfgate::server::pages
