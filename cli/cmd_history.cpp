// `perfgate history`: a counter's trend over stored runs, from a server or a
// local database, as a text table, JSON ({points:[...]}, as the server) or CSV.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/wire.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/target.hpp"
#include "model/error.hpp"
#include "report/quantity.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

namespace {

command_spec history_command()
{
    command_spec spec{
        "history",
        "[--server URL --project P | --db PATH [--project P]] --benchmark B --counter C [--branch BR] "
        "[--role R] [--format text|json|csv]",
        "Prints one point per stored run (oldest first): median, mean, stddev and CoV of\n"
        "the counter, from per-run summaries. By default the baseline runs of the\n"
        "project's baseline branch: the series the watch sees.",
        target_options("local database (SQLite file or postgresql:// URI; default ./.perfgate/perfgate.db)",
                       "project (needed with --server; default \"default\" locally)"),
    };
    // clang-format off
    spec.options.insert(spec.options.end(), {
        {"benchmark", 0, true, false, "B", "benchmark name ('default' for single-benchmark runs)"},
        {"counter", 0, true, false, "C", "counter as perf names it, e.g. task-clock"},
        {"branch", 0, true, false, "BR", "only runs of this branch (default: the project's baseline branch; '*': all)"},
        {"role", 0, true, false, "R", "mainline (default: the runs that feed the series), baseline, candidate or all"},
        {"testbed", 0, true, false, "T", "only runs on this testbed (name or fingerprint)"},
        {"since", 0, true, false, "WHEN", "only runs since: unix seconds or 2026-11-22[T02:11:05Z]"},
        {"limit", 0, true, false, "N", "the most recent N points (default 100)"},
        {"format", 0, true, false, "text|json|csv", "output format (default text)"},
    });
    // clang-format on
    return spec;
}

// Values as the dashboard writes them (report/quantity.hpp: a unit and an
// SI prefix, never an exponent), with six significant digits.
std::string render_history_text(const std::vector<model::history_point>& points, std::string_view counter)
{
    if (points.empty()) return "no runs match\n";
    auto value = [counter](double v) { return report::counter_quantity(v, counter, report::quantity_digits_exact); };
    std::string out = fmt::format("{:>8}  {:<20}  {:<12}  {:<20}  {:<9}  {:>4}  {:>14}  {:>14}  {:>7}\n", "run",
                                  "created (UTC)", "git sha", "branch", "role", "n", "median", "mean", "cov");
    for (const auto& p : points) {
        // An empty sha is a baseline whose commit was not known (docs/history.md).
        const std::string sha = p.git_sha.empty() ? std::string("unknown") : p.git_sha.substr(0, 12);
        out += fmt::format("{:>8}  {:<20}  {:<12}  {:<20}  {:<9}  {:>4}  {:>14}  {:>14}  {:>7}\n", p.run_id,
                           iso_time(p.created_at), sha, p.branch.substr(0, 20), p.role.empty() ? "-" : p.role, p.n,
                           value(p.median), value(p.mean),
                           p.cov ? fmt::format("{:.2f}%", *p.cov * 100) : std::string("-"));
    }
    return out;
}

} // namespace

const command_spec& history_spec()
{
    static const command_spec spec = history_command();
    return spec;
}

int cmd_history(const argv_t& argv)
{
    const command_spec& spec = history_spec();
    const auto args = parse_args(spec, argv);
    if (!args) return exit_pass;
    no_positional(*args);
    target_rules rules = local_default_rules();
    rules.default_db_must_exist = true;
    rules.token_required = false; // a --public-read server answers reads without one
    target where = target_from(*args, rules);
    const std::string format = args->get_choice("format", {"text", "json", "csv"}).value_or("text");
    const std::string role = args->get_choice("role", {"mainline", "baseline", "candidate", "all"})
                                 .value_or(std::string(api::default_history_role));

    model::history_query q;
    q.project = where.project;
    q.benchmark = args->required("benchmark");
    q.counter = args->required("counter");
    api::select_history_role(q, role);
    // No --branch: the server picks the project's baseline branch itself.
    if (auto branch = args->get("branch")) q.branch = *branch;
    q.testbed = args->get("testbed");
    if (auto since = args->get("since")) {
        q.since = api::parse_timestamp(*since);
        if (!q.since) {
            throw error(errors::usage_bad_value, fmt::format("--since: expected unix seconds or an ISO 8601 UTC date "
                                                             "(2026-11-22 or 2026-11-22T02:11:05Z), got '{}'",
                                                             *since));
        }
    }
    if (auto v = args->get_int("limit", 1, static_cast<long long>(api::max_history_limit))) {
        q.limit = static_cast<std::size_t>(*v);
    }

    std::vector<model::history_point> points;
    if (where.server) {
        points = where.server->history(q);
    } else {
        store::store db(where.db);
        service::service service(db);
        if (!service.projects().exists(q.project)) {
            throw error(errors::input_unknown_project, fmt::format("{}: no project '{}'", db.location(), q.project));
        }
        if (!q.branch) q.branch = service.projects().baseline_branch(q.project);
        if (q.branch == api::all_branches) q.branch.reset();
        points = service.history().points(q);
    }

    if (format == "json") std::cout << api::history_to_json(points).dump(2) << '\n';
    else if (format == "csv") std::cout << api::history_to_csv(points);
    else std::cout << render_history_text(points, q.counter);
    std::cout.flush();
    return exit_pass;
}

} // namespace perfgate::cli
