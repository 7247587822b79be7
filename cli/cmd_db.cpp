// `perfgate db`: operations on a store without a server: apply migrations,
// take a backup.
#include <filesystem>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "model/error.hpp"
#include "store/maintenance.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

namespace {

const command_spec db_command{
    "db",
    "migrate --db PATH|URI\n"
    "       db backup FILE --db PATH",
    "migrate: brings the database's schema to this perfgate's version and prints\n"
    "it (a server does the same when it starts; run it once before starting new\n"
    "replicas after an upgrade). On PostgreSQL the migrations take an advisory\n"
    "lock, so replicas or deploy jobs running it at once apply each once.\n"
    "backup: copies a SQLite database to FILE while servers keep using it\n"
    "(SQLite's online backup API: one consistent snapshot; the copy is checked\n"
    "with PRAGMA quick_check and FILE is written only once it passes; an\n"
    "existing FILE is never overwritten). A PostgreSQL database is backed up\n"
    "with pg_dump (docs/deployment.md, \"Backups\").",
    {
        {"db", 0, true, false, "PATH|URI", "SQLite database file or postgresql:// URI"},
    },
};

} // namespace

const command_spec& db_spec() { return db_command; }

int cmd_db(const argv_t& args)
{
    const auto parsed = parse_args(db_command, args);
    if (!parsed) return exit_pass;
    const auto& pos = parsed->positional();
    const std::string action = pos.empty() ? std::string() : pos.front();
    if (action == "migrate" && pos.size() == 1) {
        const std::string where = parsed->required("db");
        const store::store db(where);
        std::cout << fmt::format("perfgate db: {} ({}) is at schema version {}\n", db.location(), db.engine(),
                                 db.maintenance().schema_version());
        std::cout.flush();
        return exit_pass;
    }
    if (action == "backup" && pos.size() == 2) {
        const std::string where = parsed->required("db");
        if (store::is_postgres(where)) {
            throw error(errors::usage_unsupported,
                        fmt::format("perfgate db backup copies SQLite files; back up PostgreSQL with pg_dump: "
                                    "pg_dump --format=custom --file {} '{}'",
                                    pos[1], store::shown_location(where)));
        }
        std::error_code ec;
        if (std::filesystem::exists(pos[1], ec)) {
            throw error(errors::usage_file_exists,
                        fmt::format("{}: exists already; perfgate db backup never overwrites a "
                                    "file (name a new one)",
                                    pos[1]));
        }
        const store::store db(where);
        db.maintenance().backup_to(pos[1]);
        std::cerr << fmt::format("perfgate db: backed up {} (schema version {}) to {}\n", db.location(),
                                 db.maintenance().schema_version(), pos[1]);
        return exit_pass;
    }
    throw error(errors::usage_bad_subcommand,
                "perfgate db: expected 'perfgate db migrate --db PATH|URI' or 'perfgate db backup FILE --db PATH'");
}

} // namespace perfgate::cli
