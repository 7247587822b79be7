// `perfgate project`: shows or changes a project's settings in a database
// (today: the baseline branch the history watch follows).
#include <iostream>

#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "model/error.hpp"
#include "schema/store.hpp"
#include "service/service.hpp"

namespace perfgate::cli {

namespace {

const command_spec project_command{
    "project",
    "--db PATH --project P [--baseline-branch BRANCH]",
    "Prints a project's settings; with --baseline-branch, sets the branch whose\n"
    "baseline runs are watched for change points and alerts (default main). Works on\n"
    "the database of a running server (SQLite WAL).",
    {
        {"db", 0, true, false, "PATH", "SQLite database"},
        {"project", 0, true, false, "P", "an existing project"},
        {"baseline-branch", 0, true, false, "BRANCH", "watch the baseline runs of this branch"},
    },
};

} // namespace

int cmd_project(const argv_t& args)
{
    const auto parsed = parse_args(project_command, args);
    if (!parsed) return exit_pass;
    no_positional(*parsed);
    const std::string db_path = parsed->required("db");
    const std::string project = parsed->required("project");
    store::store db(db_path);
    gate::service service(db);
    if (!service.project_exists(project)) {
        throw error("input.unknown_project", fmt::format("{}: no project '{}'", db_path, project));
    }
    if (auto branch = parsed->get("baseline-branch")) service.set_baseline_branch(project, *branch);
    std::cout << fmt::format("project {}\nbaseline_branch {}\n", project, service.baseline_branch(project));
    std::cout.flush();
    return exit_pass;
}

} // namespace perfgate::cli
