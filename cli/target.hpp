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

// What run, history and alerts use without --server or --db: the store
// `perfgate run` writes in the current directory, and its project.
inline constexpr const char* default_local_db = ".perfgate/perfgate.db";
inline constexpr const char* default_local_project = "default";

struct target_rules {
    // upload: one of --server or --db is required. run, history, alerts:
    // --db defaults to default_db.
    bool require_choice = true;
    std::filesystem::path default_db;
    // --project when not given, locally only; the server always needs one.
    std::optional<std::string> default_local_project;
    // Writes need a token; reads may go to a --public-read server without one.
    bool token_required = true;
    // Reads: the default database (no --db) must exist; a read never
    // creates an empty store where the user expected theirs.
    bool default_db_must_exist = false;
};

// The rules of the commands that read or write a local store with run's
// defaults (--db .perfgate/perfgate.db, --project default) unless --server
// or --db is given.
target_rules local_default_rules();

// Errors: "usage.missing_option" (neither --server nor --db where one is
// required; no --project; --server without a token), "http.bad_url",
// "input.unreadable" (default_db_must_exist and no database there).
target target_from(const parsed_args& args, const target_rules& rules);

} // namespace perfgate::cli
