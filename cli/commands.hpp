// The subcommands of `perfgate`. Each takes the arguments after its name and
// returns the process exit code (cli/cli.hpp); errors escape as
// perfgate::error and main() maps their id to an exit code.
#pragma once

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
int cmd_alerts(const argv_t& args);
int cmd_change_points(const argv_t& args);
int cmd_project(const argv_t& args);
int cmd_db(const argv_t& args);

} // namespace perfgate::cli
