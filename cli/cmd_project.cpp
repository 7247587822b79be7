// `perfgate project`: shows or changes a project's settings in a database:
// the baseline branch the history watch follows, the repository URL the
// dashboard links commits to, and how the watch detects change points.
#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/change_point_flags.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "model/error.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

namespace {

command_spec make_project_command()
{
    command_spec spec{
        "project",
        "--db PATH --project P [--baseline-branch BRANCH] [--repository-url URL] [--change-point-method M]\n"
        "    [--change-point-window N] [--change-point-max-p P] [--change-point-min-magnitude X]",
        "Prints a project's settings; with --baseline-branch, sets the branch whose\n"
        "baseline runs are watched for change points and alerts (default main); with\n"
        "--repository-url, the http(s) URL the dashboard links commits to as\n"
        "URL/commit/SHA (\"\" clears it); with --change-point-*, how the history watch\n"
        "detects change points in this project (unset ones follow perfgate serve's\n"
        "--change-point-* defaults). Works on the database of a running server\n"
        "(SQLite WAL).",
        {
            {"db", 0, true, false, "PATH|URI", "SQLite database file or postgresql:// URI"},
            {"project", 0, true, false, "P", "an existing project"},
            {"baseline-branch", 0, true, false, "BRANCH", "watch the baseline runs of this branch"},
            {"repository-url", 0, true, false, "URL", "link commits to URL/commit/SHA (https://github.com/OWNER/REPO)"},
        },
    };
    for (auto& o : change_point_option_specs("this project")) spec.options.push_back(std::move(o));
    return spec;
}

const command_spec project_command = make_project_command();

} // namespace

const command_spec& project_spec() { return project_command; }

int cmd_project(const argv_t& args)
{
    const auto parsed = parse_args(project_command, args);
    if (!parsed) return exit_pass;
    no_positional(*parsed);
    const std::string db_path = parsed->required("db");
    const std::string project = parsed->required("project");
    store::store db(db_path);
    service::service service(db);
    if (!service.project_exists(project)) {
        throw error(errors::input_unknown_project, fmt::format("{}: no project '{}'", db.location(), project));
    }
    // A bad value of either stores neither: the URL is checked first, the
    // branch as it is set, before the URL is.
    const auto branch = parsed->get("baseline-branch");
    std::optional<std::string> url;
    if (auto given = parsed->get("repository-url")) url = service::normalize_repository_url("--repository-url", *given);
    const auto detection = change_point_flags(*parsed);
    if (branch) service.set_baseline_branch(project, *branch);
    if (url) service.set_repository_url(project, *url);
    service.set_change_point_settings(project, detection);
    std::cout << fmt::format("project {}\nbaseline_branch {}\nrepository_url {}\n", project,
                             service.baseline_branch(project), service.repository_url(project).value_or("-"));
    // The settings in effect, "(default)" where the project has none: the
    // defaults of perfgate serve without --change-point-* options.
    const auto stored = service.change_point_settings(project);
    const auto in_effect = service.change_point_options(project);
    const auto shown = [](bool set) { return set ? "" : " (default)"; };
    std::cout << fmt::format("change_point_method {}{}\nchange_point_window {}{}\nchange_point_max_p {}{}\n"
                             "change_point_min_magnitude {}{}\n",
                             stats::to_string(in_effect.method), shown(stored.method.has_value()), in_effect.window,
                             shown(stored.window.has_value()), in_effect.max_p, shown(stored.max_p.has_value()),
                             in_effect.min_magnitude, shown(stored.min_magnitude.has_value()));
    std::cout.flush();
    return exit_pass;
}

} // namespace perfgate::cli
