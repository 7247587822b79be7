// GET /p/{project}/alerts: the alerts inbox with its filters and, for a
// signed-in reader, a triage form per alert; POST /p/{project}/alerts/{id}:
// that form's post.
#include <string>

#include <fmt/format.h>

#include "api/wire.hpp"
#include "model/error.hpp"
#include "server/pages/security.hpp"
#include "server/pages/views.hpp"
#include "service/service.hpp"

namespace perfgate::server::pages {

namespace {

constexpr std::string_view alert_statuses[] = {"untriaged", "acknowledged", "invalid", "wontfix", "fixed"};

// ?status=&benchmark=&testbed=, empty values meaning any.
model::alert_query alerts_filter(const page_state& p, const query_params& q)
{
    q.only({"status", "benchmark", "testbed"});
    model::alert_query aq{p.project,    std::nullopt,     q.get("benchmark"),
                          std::nullopt, q.get("testbed"), service::max_alert_limit};
    if (const auto s = q.get("status"); s && !s->empty()) {
        aq.status = model::parse_alert_status(*s);
        if (!aq.status) {
            throw error(errors::http_bad_param, fmt::format("query parameter 'status': expected one of {}, got '{}'",
                                                            fmt::join(alert_statuses, ", "), s->substr(0, 64)));
        }
    }
    if (aq.benchmark && aq.benchmark->empty()) aq.benchmark.reset();
    if (aq.testbed && aq.testbed->empty()) aq.testbed.reset();
    return aq;
}

void alerts_filter_form(writer& w, const page_state& p, const model::alert_query& aq)
{
    const std::string here = project_path(p.project) + "/alerts";
    w.f("<form class=\"filters\" method=\"get\" action=\"{}\"><label>status <select name=\"status\">", here);
    w.f("<option value=\"\"{}>any</option>", aq.status ? "" : " selected");
    for (const auto s : alert_statuses) {
        w.f("<option value=\"{}\"{}>{}</option>", s, aq.status && model::to_string(*aq.status) == s ? " selected" : "",
            s);
    }
    w.f("</select></label><label>benchmark <input name=\"benchmark\" value=\"{}\"></label>"
        "<label>testbed <input name=\"testbed\" value=\"{}\"></label><button type=\"submit\">filter</button></form>",
        aq.benchmark.value_or(""), aq.testbed.value_or(""));
}

// The last cell of an alert's row: the triage form, or a way to sign in.
void triage_cell(writer& w, const page_state& p, const model::alert& a)
{
    if (p.session) {
        w.f("<form class=\"triage\" method=\"post\" action=\"{}/alerts/{}\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">"
            "<select name=\"status\">",
            project_path(p.project), a.id, p.session->csrf);
        for (const auto s : alert_statuses) {
            w.f("<option value=\"{}\"{}>{}</option>", s, model::to_string(a.status) == s ? " selected" : "", s);
        }
        w.f("</select><input name=\"note\" maxlength=\"{}\" placeholder=\"note\" value=\"{}\">"
            "<button type=\"submit\">save</button></form>",
            service::max_alert_note_bytes, a.note);
    } else {
        w.f("<a href=\"{}/signin{}\">sign in to triage</a>", project_path(p.project),
            html::url_query({{"next", sv(p.req.target())}}));
    }
}

// What perfgate bisect stored on the alert (docs/bisect.md "Stored on the
// alert"), in a row under the alert's: each culprit commit linked to the
// repository, its share and its gated counters' change; else what was left.
void culprit_row(writer& w, const model::alert& a, const model::alert_culprit& k,
                 const std::optional<std::string>& repository)
{
    w.f("<tr id=\"alert-{}-culprit\" class=\"culprit culprit-{}\"><td></td><td colspan=\"7\">", a.id,
        model::to_string(k.status));
    const std::string_view what = k.status == model::culprit_status::found       ? "Culprit"
                                  : k.status == model::culprit_status::no_change ? "Bisected: no change between"
                                                                                 : "Bisected, undecided";
    w.f("<strong>{}</strong> ", what);
    if (k.culprits.empty()) {
        commit_ref(w, repository, k.good_sha);
        w << " .. ";
        commit_ref(w, repository, k.bad_sha);
    }
    if (!k.culprits.empty()) w << "<ul class=\"culprits\">";
    for (const auto& m : k.culprits) {
        w << "<li class=\"culprit-commit\">";
        commit_ref(w, repository, m.sha);
        w.f(" <span class=\"subject\">{}</span> <small class=\"author\">{}</small> · {}% of the change", m.subject,
            m.author, fmt::format("{:.0f}", m.share * 100));
        for (const auto& e : m.effects) {
            w.f("<br><small class=\"effect\">{} {}", e.counter, percent(e.delta_pct));
            if (e.ci_lower_pct && e.ci_upper_pct)
                w.f(" [{}]", fmt::format("{:+.2f}%, {:+.2f}%", *e.ci_lower_pct, *e.ci_upper_pct));
            w.f(" ({})</small>", e.status);
        }
        w << "</li>";
    }
    if (!k.culprits.empty()) w << "</ul>";
    w.f("<small class=\"culprit-range\">range {}..{}: {} commits, {} steps, {} builds ({} on {}), stored {} by {}",
        k.good_sha.substr(0, 12), k.bad_sha.substr(0, 12), k.commits, k.steps, k.builds, k.counter, k.backend,
        iso_date(k.stored_at), written_by_text(k.written_by));
    w << "</small>";
    if (!k.detail.empty()) w.f("<pre class=\"culprit-detail\">{}</pre>", k.detail);
    w << "</td></tr>";
}

void alert_row(writer& w, const page_state& p, const model::alert& a, const std::optional<std::string>& repository)
{
    const auto& c = a.change;
    const std::int64_t month = 30 * 86400;
    const std::string link = series_url(p.project, c.series.benchmark, c.series.counter, c.series.testbed,
                                        c.series.branch) +
                             fmt::format("&x=date&from={}&to={}", c.created_at - month, c.created_at + month);
    w.f("<tr id=\"alert-{}\" class=\"alert status-{}\"><td>{}</td><td><a class=\"series\" href=\"{}\">{} · {}</a>"
        "<br><small>{} · <span title=\"{}\">{}</span></small></td><td><a href=\"{}/runs/{}\">run {}</a> ",
        a.id, model::to_string(a.status), a.id, link, c.series.benchmark, c.series.counter, c.series.branch,
        c.series.testbed, c.series.testbed.substr(0, 12), project_path(p.project), c.run_id, c.run_id);
    commit_ref(w, repository, c.git_sha);
    w.f("<br><small>{}</small></td><td>{}</td><td>{}</td><td><span class=\"badge status-{}\">{}</span></td>"
        "<td class=\"note\">{}</td><td>",
        iso_date(c.created_at), percent(c.delta_pct), number(c.p_value, 3), model::to_string(a.status),
        model::to_string(a.status), a.note);
    triage_cell(w, p, a);
    w << "</td></tr>";
    if (a.culprit) culprit_row(w, a, *a.culprit, repository);
}

} // namespace

response alerts_page(page_state& p, const query_params& q)
{
    const model::alert_query aq = alerts_filter(p, q);
    const auto alerts = p.ctx.service.alerts().list(aq);

    page_view v("alerts", "Alerts");
    writer& w = v.body;
    alerts_filter_form(w, p, aq);
    if (alerts.empty()) w << "<p class=\"empty\" id=\"no-alerts\">No alerts match.</p>";
    w << "<table id=\"alerts\"><thead><tr><th>alert</th><th>series</th><th>starts at</th><th>change</th><th>p</th>"
         "<th>status</th><th>note</th><th>triage</th></tr></thead><tbody>";
    const auto repository = p.ctx.service.projects().repository_url(p.project);
    for (const auto& a : alerts) alert_row(w, p, a, repository);
    w << "</tbody></table>";
    v.set_data(json{{"page", "alerts"}, {"alerts", api::alerts_to_json(alerts).at("alerts")}});
    return render(p, v);
}

response triage(page_state& p, const std::string& alert_id)
{
    const auto id = positive_id(alert_id, "alert id");
    if (!p.session) return redirect(project_path(p.project) + "/signin", p.req);
    const query_params form(p.req.body());
    check_csrf(form, *p.session);
    const auto status = model::parse_alert_status(form.get("status").value_or(""));
    if (!status) {
        throw error(errors::alert_bad_status,
                    fmt::format("status '{}': expected one of {}", form.get("status").value_or("").substr(0, 64),
                                fmt::join(alert_statuses, ", ")));
    }
    // Who did it: the session's token, by its label (issue 31, finding 14).
    const std::string by = p.session->token_label.empty() ? fmt::format("token {}", p.session->token_id)
                                                          : p.session->token_label;
    model::alert_update u{*status, form.get("note"), "dashboard:" + by};
    p.ctx.service.alerts().update(p.project, id, u);
    return redirect(fmt::format("{}/alerts#alert-{}", project_path(p.project), id), p.req);
}

} // namespace perfgate::server::pages
