// `perfgate token create`: creates a project (if new) and an API token for it.
#include <iostream>

#include <fmt/format.h>

#include "capture/names.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "model/error.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

namespace {

const command_spec token_command{
    "token",
    "create --db PATH --project P [--name NAME]",
    "Creates an API token for a project and prints it once on stdout. Only its\n"
    "SHA-256 is stored: keep the token in your CI secrets (e.g. PERFGATE_TOKEN).",
    {
        {"db", 0, true, false, "PATH|URI",
         "SQLite database file (created with its schema if missing) or postgresql:// URI"},
        {"project", 0, true, false, "P", "project the token writes to (created if new)"},
        {"name", 0, true, false, "NAME", "label for the token, e.g. the CI that uses it (default 'default')"},
    },
};

} // namespace

const command_spec& token_spec() { return token_command; }

int cmd_token(const argv_t& args)
{
    const auto parsed = parse_args(token_command, args);
    if (!parsed) return exit_pass;
    const auto& pos = parsed->positional();
    if (pos.size() != 1 || pos.front() != "create") {
        throw error(errors::usage_bad_subcommand,
                    "perfgate token: expected 'perfgate token create --db PATH --project P'");
    }
    const std::string db_path = parsed->required("db");
    const std::string project = parsed->required("project");
    const std::string name = parsed->get("name").value_or("default");
    capture::validate_name("name", name);

    store::store db(db_path);
    service::service service(db);
    const std::string token = service.create_token(project, name);
    std::cout << token << std::endl;
    std::cerr << fmt::format("perfgate token: created token '{}' for project '{}' in {}; it is shown only once\n", name,
                             project, db.location());
    return exit_pass;
}

} // namespace perfgate::cli
