// `perfgate db`: operations on a store without a server: apply migrations,
// take a backup, copy a store to another database, export and import one
// project (cli/cmd_db_copy.cpp), prune (cli/cmd_db_prune.cpp).
#include <filesystem>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/db_copy.hpp"
#include "cli/retention.hpp"
#include "model/error.hpp"
#include "store/maintenance.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

namespace {

const command_spec db_command{
    "db",
    "migrate --db PATH|URI\n"
    "       db backup FILE --db PATH\n"
    "       db copy --from PATH|URI --to PATH|URI [--batch-rows N] [--merge [--id-map FILE]]\n"
    "       db export --db PATH|URI --project P [-o FILE]\n"
    "       db import --db PATH|URI FILE [--renumber [--id-map FILE]]\n"
    "       db prune --db PATH|URI [--project P] --older-than AGE [--thin-after AGE] [--dry-run] [--vacuum]",
    "migrate: brings the database's schema to this perfgate's version and prints\n"
    "it (a server does the same when it starts; run it once before starting new\n"
    "replicas after an upgrade). On PostgreSQL the migrations take an advisory\n"
    "lock, so replicas or deploy jobs running it at once apply each once.\n"
    "backup: copies a SQLite database to FILE while servers keep using it\n"
    "(SQLite's online backup API: one consistent snapshot; the copy is checked\n"
    "with PRAGMA quick_check and FILE is written only once it passes; an\n"
    "existing FILE is never overwritten). A PostgreSQL database is backed up\n"
    "with pg_dump (docs/deployment.md, \"Backups\").\n"
    "copy: copies every table of a store into an empty database (SQLite to\n"
    "PostgreSQL and back), ids and token hashes as stored, one transaction per\n"
    "batch; then verifies each table (rows and SHA-256, printed). Rerun after an\n"
    "interruption to finish; a target with rows is refused (exit 2). Stop the\n"
    "source's servers first (docs/deployment.md, \"Moving to PostgreSQL\").\n"
    "copy --merge: adds every project of the source to a target that has others\n"
    "(exit 2, nothing written, when a project name is on both sides); a table\n"
    "whose ids are taken there is shifted past them, every reference following;\n"
    "prints the ids changed per table; --id-map FILE writes old -> new (JSON\n"
    "lines) for redirecting links. Resumable and verified per project\n"
    "(docs/deployment.md, \"Merging stores\").\n"
    "export: writes one project as JSON lines (docs/export-format.md) to FILE\n"
    "(never overwritten) or stdout. import: adds an exported project to a store\n"
    "that lacks it, keeping its ids, in one transaction; exit 2 when the project\n"
    "or one of its ids exists there. import --renumber: shifts the ids that are\n"
    "taken, as copy --merge does, and prints them (--id-map FILE).\n"
    "prune: removes the runs that feed no series (pull requests' runs, push jobs'\n"
    "baselines) older than --older-than, with their comparisons and artifacts;\n"
    "keeps the runs of alerts, change points and accepted comparisons; with\n"
    "--thin-after, thins the series past that age to a point a day (the day's\n"
    "last). AGE: 12h, 90d, 2w (1 day to 36500 days). Prints the rows and bytes\n"
    "removed per kind, then gives the space back (docs/history.md, \"Retention\").",
    {
        {"db", 0, true, false, "PATH|URI", "SQLite database file or postgresql:// URI"},
        {"from", 0, true, false, "PATH|URI", "copy: the store to copy"},
        {"to", 0, true, false, "PATH|URI", "copy: the empty database to copy it into"},
        {"batch-rows", 0, true, false, "N", "copy: rows per transaction (default 1000)"},
        {"merge", 0, false, false, "", "copy: add the source's projects to a target that has others"},
        {"renumber", 0, false, false, "", "import: shift the project's ids that the target has taken"},
        {"id-map", 0, true, false, "FILE", "copy --merge, import --renumber: write the ids changed (JSON lines)"},
        {"project", 0, true, false, "P", "export: the project; prune: this project only (default: every project)"},
        {"output", 'o', true, false, "FILE", "export: the file to write (default: stdout)"},
        {"older-than", 0, true, false, "AGE", "prune: remove the runs that feed no series older than AGE (90d)"},
        {"thin-after", 0, true, false, "AGE", "prune: thin each series to a point a day past AGE (>= --older-than)"},
        {"dry-run", 0, false, false, "", "prune: print what would be removed, change nothing"},
        {"vacuum",
         0,
         false,
         false,
         "",
         "prune: then rewrite the SQLite file (VACUUM), switching it to incremental vacuum",
         {},
         {"dry-run"}},
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
    if (action == "prune" && pos.size() == 1) return db_prune(*parsed);
    for (const char* prune_only : {"older-than", "thin-after", "dry-run", "vacuum"}) {
        if (parsed->has(prune_only)) {
            throw error(errors::usage_conflict, fmt::format("--{} applies to perfgate db prune only", prune_only));
        }
    }
    if (parsed->has("merge") && action != "copy") {
        throw error(errors::usage_conflict, "--merge applies to perfgate db copy only");
    }
    if (parsed->has("renumber") && action != "import") {
        throw error(errors::usage_conflict, "--renumber applies to perfgate db import only");
    }
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
    if (action == "copy" && pos.size() == 1) return db_copy(*parsed);
    if (action == "export" && pos.size() == 1) return db_export(*parsed);
    if (action == "import" && pos.size() == 2) return db_import(*parsed, pos[1]);
    throw error(errors::usage_bad_subcommand,
                "perfgate db: expected 'perfgate db migrate --db PATH|URI', 'perfgate db backup FILE --db PATH', "
                "'perfgate db copy --from DB --to DB', 'perfgate db export --db DB --project P', "
                "'perfgate db import --db DB FILE' or 'perfgate db prune --db PATH|URI --older-than AGE'");
}

} // namespace perfgate::cli
