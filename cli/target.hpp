// Where a command stores or reads runs: a perfgate server (--server URL
// --project P --token T, through the one client of client/server_client.hpp)
// or a local SQLite file (--db PATH, through the gate service). The options
// and their rules are defined here once for run, upload and history.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "client/server_client.hpp"

namespace perfgate::cli {

// --server, --db (exclusive), --project, --token (env PERFGATE_TOKEN).
std::vector<option_spec> target_options(const std::string& db_help, const std::string& project_help);

struct target {
    std::optional<client::server_client> server; // --server given
    std::filesystem::path db;                    // otherwise
    std::string project;
};

struct target_rules {
    // upload/history: one of --server or --db is required. run: --db
    // defaults to default_db.
    bool require_choice = true;
    std::filesystem::path default_db;
    // --project when not given, locally only; the server always needs one.
    std::optional<std::string> default_local_project;
    // Writes need a token; reads may go to a --public-read server without one.
    bool token_required = true;
};

// Errors: "usage.missing_option" (neither --server nor --db where one is
// required; no --project; --server without a token), "http.bad_url".
target target_from(const parsed_args& args, const target_rules& rules);

} // namespace perfgate::cli
