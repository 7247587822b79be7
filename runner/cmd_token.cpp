// `perfgate token create`: creates a project (if new) and an API token for it.
#include <iostream>

#include <fmt/format.h>

#include "runner/cli.hpp"
#include "runner/commands.hpp"
#include "schema/store.hpp"
#include "server/router.hpp"
#include "stats/error.hpp"

namespace perfgate::runner {

namespace {

const std::vector<option_spec>& token_options()
{
    static const std::vector<option_spec> specs = {
        {"db", 0, true, false, "PATH", "SQLite database (created with its schema if missing)"},
        {"project", 0, true, false, "P", "project the token writes to (created if new)"},
        {"name", 0, true, false, "NAME", "label for the token, e.g. the CI that uses it (default 'default')"},
        {"help", 'h', false, false, "", "show this help"},
    };
    return specs;
}

constexpr std::string_view description =
    "Creates an API token for a project and prints it once on stdout. Only its\n"
    "SHA-256 is stored: keep the token in your CI secrets (e.g. PERFGATE_TOKEN).";

} // namespace

int cmd_token(const argv_t& args)
{
    const auto& specs = token_options();
    auto parsed = parse_args("token", args, specs);
    if (parsed.has("help")) {
        std::cout << usage_text("token", "create --db PATH --project P [--name NAME]", description, specs);
        return exit_pass;
    }
    const auto& pos = parsed.positional();
    if (pos.size() != 1 || pos.front() != "create") {
        throw error("usage.bad_subcommand", "perfgate token: expected 'perfgate token create --db PATH --project P'");
    }
    auto db_path = parsed.get("db");
    if (!db_path) throw error("usage.missing_option", "perfgate token create: --db PATH is required");
    auto project = parsed.get("project");
    if (!project) throw error("usage.missing_option", "perfgate token create: --project P is required");
    const std::string name = parsed.get("name").value_or("default");
    // Same rule as the server applies to the {project} path segment.
    server::validate_name("project", *project);
    server::validate_name("name", name);

    store::store db(*db_path);
    db.ensure_project(*project);
    const std::string token = db.create_token(*project, name);
    std::cout << token << std::endl;
    std::cerr << fmt::format("perfgate token: created token '{}' for project '{}' in {}; it is shown only once\n",
                             name, *project, *db_path);
    return exit_pass;
}

} // namespace perfgate::runner
