// `perfgate project`: shows or changes a project's settings in a database:
// the baseline branch the history watch follows, and the repository URL the
// dashboard links commits to.
#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "model/error.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

namespace {

const command_spec project_command{
    "project",
    "--db PATH --project P [--baseline-branch BRANCH] [--repository-url URL]",
    "Prints a project's settings; with --baseline-branch, sets the branch whose\n"
    "baseline runs are watched for change points and alerts (default main); with\n"
    "--repository-url, the http(s) URL the dashboard links commits to as\n"
    "URL/commit/SHA (\"\" clears it). Works on the database of a running server\n"
    "(SQLite WAL).",
    {
        {"db", 0, true, false, "PATH|URI", "SQLite database file or postgresql:// URI"},
        {"project", 0, true, false, "P", "an existing project"},
        {"baseline-branch", 0, true, false, "BRANCH", "watch the baseline runs of this branch"},
        {"repository-url", 0, true, false, "URL", "link commits to URL/commit/SHA (https://github.com/OWNER/REPO)"},
    },
};

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
    if (branch) service.set_baseline_branch(project, *branch);
    if (url) service.set_repository_url(project, *url);
    std::cout << fmt::format("project {}\nbaseline_branch {}\nrepository_url {}\n", project,
                             service.baseline_branch(project), service.repository_url(project).value_or("-"));
    std::cout.flush();
    return exit_pass;
}

} // namespace perfgate::cli
