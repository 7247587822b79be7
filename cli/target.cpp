#include "cli/target.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::cli {

std::vector<option_spec> target_options(const std::string& db_help, const std::string& project_help)
{
    return {
        {"server", 0, true, false, "URL", "perfgate server, e.g. http://127.0.0.1:8080", {}, {"db"}},
        {"db", 0, true, false, "PATH|URI", db_help, {}, {"server"}},
        {"project", 0, true, false, "P", project_help},
        {"token", 0, true, false, "T", "API token for --server", "PERFGATE_TOKEN"},
    };
}

target_rules local_default_rules()
{
    target_rules rules;
    rules.require_choice = false;
    rules.default_db = default_local_db;
    rules.default_local_project = default_local_project;
    return rules;
}

target target_from(const parsed_args& args, const target_rules& rules)
{
    const std::string& command = args.command();
    target t;
    if (auto url = args.get("server")) {
        auto project = args.get("project");
        if (!project) {
            throw error(errors::usage_missing_option, fmt::format("perfgate {}: --server needs --project P", command));
        }
        auto token = args.get("token");
        if (!token && rules.token_required) {
            throw error(errors::usage_missing_option,
                        fmt::format("perfgate {}: --server needs a token: --token T or PERFGATE_TOKEN "
                                    "(create one with `perfgate token create`)",
                                    command));
        }
        t.project = *project;
        t.server.emplace(*url, *project, token);
        return t;
    }
    if (!args.has("db") && rules.require_choice) {
        throw error(errors::usage_missing_option, fmt::format("perfgate {}: give --server URL or --db PATH", command));
    }
    t.db = args.get("db").value_or(rules.default_db.string());
    if (!args.has("db") && rules.default_db_must_exist && !std::filesystem::exists(t.db)) {
        throw error(
            errors::input_unreadable,
            fmt::format("perfgate {}: no database at {} (the default of --db, written by `perfgate run` in this "
                        "directory): give --db PATH or --server URL",
                        command, t.db.string()));
    }
    if (auto project = args.get("project")) t.project = *project;
    else if (rules.default_local_project) t.project = *rules.default_local_project;
    else
        throw error(errors::usage_missing_option,
                    fmt::format("perfgate {}: --project is required (see --help)", command));
    return t;
}

} // namespace perfgate::cli
