// The subcommands of `perfgate`. Each takes the arguments after its name and
// returns the process exit code (cli/cli.hpp); errors escape as
// perfgate::error and main() maps their id to an exit code.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "cli/cli.hpp"

namespace perfgate::cli {

int cmd_compare(const argv_t& args);
int cmd_run(const argv_t& args);
int cmd_check_env(const argv_t& args);
int cmd_serve(const argv_t& args);
int cmd_token(const argv_t& args);
int cmd_history(const argv_t& args);
int cmd_upload(const argv_t& args);
int cmd_github(const argv_t& args);
int cmd_gitlab(const argv_t& args);
int cmd_alerts(const argv_t& args);
int cmd_change_points(const argv_t& args);
int cmd_project(const argv_t& args);
int cmd_db(const argv_t& args);
int cmd_baseline(const argv_t& args);
int cmd_accept(const argv_t& args);
int cmd_bisect(const argv_t& args);
int cmd_qualify(const argv_t& args);

// Each command's table, defined beside the command (cli/cmd_*.cpp).
const command_spec& compare_spec();
const command_spec& run_spec();
const command_spec& check_env_spec();
const command_spec& serve_spec();
const command_spec& token_spec();
const command_spec& history_spec();
const command_spec& upload_spec();
const command_spec& github_spec();
const command_spec& gitlab_spec();
const command_spec& alerts_spec();
const command_spec& change_points_spec();
const command_spec& project_spec();
const command_spec& db_spec();
const command_spec& baseline_spec();
const command_spec& accept_spec();
const command_spec& bisect_spec();
const command_spec& qualify_spec();

struct command_entry {
    std::string_view summary;      // one line, for `perfgate --help` and the man page
    const command_spec& (*spec)(); // its table: name, synopsis, description, options
    int (*run)(const argv_t& args);
};

// Every command, in the order `perfgate --help` and the man page list them:
// main() dispatches through this list, the man page generator reads it.
std::span<const command_entry> all_commands();

// The entry whose spec is named `name`, or nullptr.
const command_entry* find_command(std::string_view name);

// What perfgate is, in two lines: `perfgate --help` and the man page's DESCRIPTION.
extern const std::string_view program_description;

// `perfgate --help`: usage, the description, one line per command, exit codes.
std::string top_usage();

} // namespace perfgate::cli
