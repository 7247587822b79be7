// `perfgate alerts`: list, show and triage the alerts that change points on
// the baseline branch opened, on a server or in a local database.
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/wire.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/target.hpp"
#include "model/error.hpp"
#include "model/utf8.hpp"
#include "report/quantity.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

namespace {

command_spec alerts_command()
{
    command_spec spec{
        "alerts",
        "[list | show ID | set ID STATUS [--note TEXT]] [--server URL --project P | --db PATH [--project P]]",
        "Alerts are change points in a counter's worse direction, found on the baseline\n"
        "runs of the project's baseline branch (default main) as they are stored.\n"
        "  list          newest first (default), filtered by --status/--benchmark/...\n"
        "  show ID       one alert\n"
        "  set ID STATUS triage: untriaged | acknowledged | invalid | wontfix | fixed\n"
        "set needs a token of the project on a server.",
        target_options("local database (SQLite file or postgresql:// URI; default ./.perfgate/perfgate.db)",
                       "project (needed with --server; default \"default\" locally)"),
    };
    // clang-format off
    spec.options.insert(spec.options.end(), {
        {"status", 0, true, false, "S", "list: only alerts with this status"},
        {"benchmark", 0, true, false, "B", "list: only this benchmark"},
        {"counter", 0, true, false, "C", "list: only this counter"},
        {"testbed", 0, true, false, "T", "list: only this testbed (name or fingerprint)"},
        {"limit", 0, true, false, "N", "list: at most N alerts (default 100)"},
        {"note", 0, true, false, "TEXT", "set: a note for the alert (why it is invalid, the fixing PR...)"},
        {"format", 0, true, false, "text|json", "output format (default text)"},
    });
    // clang-format on
    return spec;
}

std::string delta_text(const std::optional<double>& pct)
{
    return pct ? fmt::format("{:+.2f}%", *pct) : std::string("-");
}

// Stored text as the terminal should see it: controls, invalid UTF-8 and
// bidi overrides as visible escapes (issue 31, finding 9), whatever an older
// server or a hand-edited database holds.
std::string safe(std::string_view text) { return model::escape_for_terminal(text); }

std::string render_list(const std::vector<model::alert>& alerts)
{
    if (alerts.empty()) return "no alerts match\n";
    std::string out = fmt::format("{:>6}  {:<12}  {:<20}  {:<16}  {:>8}  {:>8}  {:<12}  {}\n", "id", "status",
                                  "benchmark", "counter", "delta", "run", "git sha", "testbed");
    for (const auto& a : alerts) {
        out += fmt::format("{:>6}  {:<12}  {:<20}  {:<16}  {:>8}  {:>8}  {:<12}  {}\n", a.id,
                           model::to_string(a.status), safe(a.change.series.benchmark.substr(0, 20)),
                           safe(a.change.series.counter.substr(0, 16)), delta_text(a.change.delta_pct), a.change.run_id,
                           safe(a.change.git_sha.substr(0, 12)), safe(a.change.series.testbed));
    }
    return out;
}

// What perfgate bisect stored on the alert (docs/bisect.md "Stored on the alert").
std::string render_culprit(const model::alert_culprit& k)
{
    std::string out = fmt::format("  culprit    {} (perfgate bisect, {} on {}, {})", model::to_string(k.status),
                                  safe(k.counter), safe(k.backend), iso_time(k.stored_at));
    if (k.written_by) out += fmt::format(" by token {} ({})", k.written_by->id, safe(k.written_by->name));
    out += "\n";
    for (const auto& m : k.culprits) {
        out += fmt::format("    {} {} ({}), {:.0f}% of the change\n", safe(m.sha), safe(m.subject), safe(m.author),
                           m.share * 100);
        for (const auto& e : m.effects) {
            out += fmt::format("      {:<16} {:>8}", safe(e.counter), delta_text(e.delta_pct));
            if (e.ci_lower_pct && e.ci_upper_pct)
                out += fmt::format(" [{:+.2f}%, {:+.2f}%]", *e.ci_lower_pct, *e.ci_upper_pct);
            out += fmt::format("  {}\n", safe(e.status));
        }
    }
    out += fmt::format("    range {}..{}: {} commits, {} steps, {} builds\n", safe(k.good_sha.substr(0, 12)),
                       safe(k.bad_sha.substr(0, 12)), k.commits, k.steps, k.builds);
    if (!k.detail.empty()) {
        std::string_view rest = k.detail;
        while (!rest.empty()) {
            const auto nl = rest.find('\n');
            out += fmt::format("    {}\n", safe(rest.substr(0, nl)));
            rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        }
    }
    return out;
}

std::string render_one(const model::alert& a)
{
    const auto& c = a.change;
    std::string out = fmt::format("alert {} ({})\n", a.id, model::to_string(a.status));
    out += fmt::format("  series     {} / {} on testbed {}, branch {}\n", safe(c.series.benchmark),
                       safe(c.series.counter), safe(c.series.testbed), safe(c.series.branch));
    out += fmt::format("  starts at  run {} ({}, {})\n", c.run_id, safe(c.git_sha), iso_time(c.created_at));
    // Values as the dashboard writes them (report/quantity.hpp), six digits.
    auto value = [&c](double v) {
        return report::counter_quantity(v, c.series.counter, report::quantity_digits_exact);
    };
    out += fmt::format("  change     mean {} -> {} ({}), median {} -> {}\n", value(c.mean_before), value(c.mean_after),
                       delta_text(c.delta_pct), value(c.median_before), value(c.median_after));
    out += fmt::format("  shift      {} [{}, {}] (Hodges-Lehmann, 95%), p = {:.3g}\n", value(c.shift),
                       value(c.shift_lower), value(c.shift_upper), c.p_value);
    out += fmt::format("  opened     {}\n", iso_time(a.created_at));
    if (a.changed_at != 0) {
        out += fmt::format("  triaged    {} by {}\n", iso_time(a.changed_at), safe(a.changed_by));
    }
    if (!a.note.empty()) out += fmt::format("  note       {}\n", model::escape_for_terminal(a.note, true));
    if (a.culprit) out += render_culprit(*a.culprit);
    return out;
}

std::int64_t alert_id_arg(const std::string& text)
{
    char* end = nullptr;
    errno = 0;
    const long long id = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || id <= 0) {
        throw error(errors::usage_bad_value,
                    fmt::format("perfgate alerts: alert ID must be a positive integer, got '{}'", text.substr(0, 40)));
    }
    return id;
}

// Who triages from this machine: the CI's actor, else the login name.
std::string local_user()
{
    for (const char* var : {"GITHUB_ACTOR", "USER", "LOGNAME"}) {
        if (const char* v = std::getenv(var); v && *v) return std::string(v).substr(0, 64);
    }
    return "cli";
}

} // namespace

const command_spec& alerts_spec()
{
    static const command_spec spec = alerts_command();
    return spec;
}

int cmd_alerts(const argv_t& argv)
{
    const command_spec& spec = alerts_spec();
    const auto args = parse_args(spec, argv);
    if (!args) return exit_pass;
    const auto& pos = args->positional();
    const std::string action = pos.empty() ? "list" : pos.front();
    const std::size_t want = action == "list" ? 1 : action == "show" ? 2 : action == "set" ? 3 : 0;
    if (want == 0 || (pos.size() != want && !(action == "list" && pos.empty()))) {
        throw error(errors::usage_bad_subcommand,
                    "perfgate alerts: expected 'list', 'show ID' or 'set ID STATUS' (see perfgate alerts --help)");
    }
    target_rules rules = local_default_rules();
    rules.default_db_must_exist = true;
    rules.token_required = action == "set";
    target where = target_from(*args, rules);
    const std::string format = args->get_choice("format", {"text", "json"}).value_or("text");

    std::optional<store::store> db;
    std::optional<service::service> service;
    if (!where.server) {
        db.emplace(where.db);
        service.emplace(*db);
        if (!service->projects().exists(where.project)) {
            throw error(errors::input_unknown_project,
                        fmt::format("{}: no project '{}'", db->location(), where.project));
        }
    }

    if (action == "list") {
        model::alert_query q;
        q.project = where.project;
        if (auto s = args->get("status")) {
            q.status = model::parse_alert_status(*s);
            if (!q.status) {
                throw error(errors::usage_bad_value, fmt::format("--status: expected {}, got '{}'",
                                                                 model::alert_status_names(), s->substr(0, 40)));
            }
        }
        q.benchmark = args->get("benchmark");
        q.counter = args->get("counter");
        q.testbed = args->get("testbed");
        if (auto v = args->get_int("limit", 1, static_cast<long long>(service::max_alert_limit))) {
            q.limit = static_cast<std::size_t>(*v);
        }
        const auto alerts = where.server ? where.server->alerts(q) : service->alerts().list(q);
        if (format == "json") std::cout << api::alerts_to_json(alerts).dump(2) << '\n';
        else std::cout << render_list(alerts);
        std::cout.flush();
        return exit_pass;
    }

    const std::int64_t id = alert_id_arg(pos[1]);
    model::alert a;
    if (action == "show") {
        a = where.server ? where.server->alert(id) : service->alerts().get(where.project, id);
    } else {
        model::alert_update u;
        const auto status = model::parse_alert_status(pos[2]);
        if (!status) {
            throw error(errors::usage_bad_value, fmt::format("perfgate alerts set: STATUS must be one of {}, got '{}'",
                                                             model::alert_status_names(), pos[2].substr(0, 40)));
        }
        u.status = *status;
        u.note = args->get("note");
        u.changed_by = local_user();
        a = where.server ? where.server->update_alert(id, u) : service->alerts().update(where.project, id, u);
    }
    if (format == "json") std::cout << api::to_json(a).dump(2) << '\n';
    else std::cout << render_one(a);
    std::cout.flush();
    return exit_pass;
}

} // namespace perfgate::cli
