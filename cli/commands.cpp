#include "cli/commands.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace perfgate::cli {

namespace {

const std::array commands{
    command_entry{"compare two perf stat -x, outputs (offline gate)", compare_spec, cmd_compare},
    command_entry{"measure baseline and candidate commands, store and gate them", run_spec, cmd_run},
    command_entry{"name the commit a pull request is measured against (merge-base, base tip, parent)", baseline_spec,
                  cmd_baseline},
    command_entry{"check how quiet and measurable this machine is", check_env_spec, cmd_check_env},
    command_entry{"run the HTTP gate server", serve_spec, cmd_serve},
    command_entry{"create API tokens (token create --db PATH --project P)", token_spec, cmd_token},
    command_entry{"trend of a counter over stored runs", history_spec, cmd_history},
    command_entry{"upload existing perf stat outputs to a server or database", upload_spec, cmd_upload},
    command_entry{"post a report to a GitHub pull request (comment, status, summary)", github_spec, cmd_github},
    command_entry{"post a report to a GitLab merge request (note, commit status, job log)", gitlab_spec, cmd_gitlab},
    command_entry{"accept a pull request's regression from a /perfgate accept comment or label", accept_spec,
                  cmd_accept},
    command_entry{"find the commit(s) between a good and a bad one that changed a counter", bisect_spec, cmd_bisect},
    command_entry{"measure what a gate on this machine catches: A/A gates and injected slowdowns", qualify_spec,
                  cmd_qualify},
    command_entry{"list and triage alerts: change points on the baseline branch", alerts_spec, cmd_alerts},
    command_entry{"find change points in a series of numbers (offline)", change_points_spec, cmd_change_points},
    command_entry{"show or set a project's settings (the watched baseline branch)", project_spec, cmd_project},
    command_entry{"migrate a database's schema, back up a SQLite database", db_spec, cmd_db},
};

} // namespace

std::span<const command_entry> all_commands() { return commands; }

const command_entry* find_command(std::string_view name)
{
    for (const auto& c : commands) {
        if (c.spec().name == name) return &c;
    }
    return nullptr;
}

const std::string_view program_description =
    "A performance-regression gate: measures a baseline and a candidate build with\n"
    "perf stat, compares them with rank statistics and answers pass / fail / inconclusive.";

std::string top_usage()
{
    std::size_t width = 0;
    for (const auto& c : commands) width = std::max(width, c.spec().name.size());
    std::string out = fmt::format("Usage: perfgate <command> [options]\n\n{}\n\nCommands:\n", program_description);
    for (const auto& c : commands) out += fmt::format("  {:<{}}  {}\n", c.spec().name, width, c.summary);
    out += "\n"
           "Exit codes: 0 pass, 1 regression, 2 usage or input error, 3 inconclusive\n"
           "(with --fail-on-inconclusive), 4 measurement or environment failure.\n"
           "Run 'perfgate <command> --help' for a command's options.\n";
    return out;
}

} // namespace perfgate::cli
