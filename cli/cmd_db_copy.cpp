// `perfgate db copy` (store/copy.hpp), `db export` and `db import`
// (store/project_export.hpp): what they print.
#include "cli/db_copy.hpp"

#include "model/error.hpp"
#include "model/exit_code.hpp"
#include "store/copy.hpp"
#include "store/project_export.hpp"
#include "store/store.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <system_error>

namespace perfgate::cli {

namespace {

// Progress lines on stderr: one per this many rows of a table.
constexpr std::int64_t progress_every_rows = 100000;

double megabytes(std::int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

// --id-map FILE, checked before anything is written: never overwritten.
std::optional<std::filesystem::path> id_map_file(const parsed_args& args)
{
    const auto file = args.get("id-map");
    if (!file) return std::nullopt;
    std::error_code ec;
    if (std::filesystem::exists(*file, ec)) {
        throw error(errors::usage_file_exists,
                    fmt::format("{}: exists already; --id-map never overwrites a file (name a new one)", *file));
    }
    return std::filesystem::path(*file);
}

// The ids that changed as JSON lines {"table", "old", "new"}, written beside
// the file and renamed once complete.
void write_id_map(const std::filesystem::path& file, const std::vector<store::id_change>& changes)
{
    const std::filesystem::path partial = file.string() + ".partial";
    {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        if (!out) throw error(errors::store_io, fmt::format("{}: cannot be written", partial.string()));
        for (const auto& c : changes)
            out << fmt::format("{{\"table\":\"{}\",\"old\":{},\"new\":{}}}\n", c.table, c.from, c.to);
        out.close();
        if (!out) throw error(errors::store_io, fmt::format("{}: writing failed", partial.string()));
    }
    std::filesystem::rename(partial, file);
}

// The id summary: per identity table, rows in and ids changed; then which
// URLs changed (comparisons' and alerts' ids are in dashboard links and PR
// comments).
void print_renumbering(std::string_view command, const std::vector<store::renumbered_table>& tables,
                       const std::optional<std::filesystem::path>& map_file)
{
    std::cout << fmt::format("{:<22} {:>10} {:>12}  {}\n", "ids of", "rows", "changed", "how");
    std::vector<std::string> linked;
    for (const auto& t : tables) {
        std::string how = "kept";
        if (t.shift != 0) how = fmt::format("+{}", t.shift);
        else if (t.changed != 0) how = "matched by name/fingerprint, or new";
        std::cout << fmt::format("{:<22} {:>10} {:>12}  {}\n", t.table, t.rows, t.changed, how);
        if ((t.table == "comparisons" || t.table == "alerts") && t.changed != 0)
            linked.push_back(fmt::format("{} {} (+{})", t.changed, t.table, t.shift));
    }
    if (linked.empty()) {
        std::cout << fmt::format("perfgate {}: the ids in URLs (comparisons, alerts) are unchanged\n", command);
    } else {
        std::cout << fmt::format("perfgate {}: the ids in URLs changed: {}: links to them (dashboard, PR comments) "
                                 "name the old ids{}\n",
                                 command, fmt::join(linked, ", "),
                                 map_file ? fmt::format("; old -> new in {}", map_file->string())
                                          : std::string("; --id-map FILE writes old -> new"));
    }
}

} // namespace

int db_copy(const parsed_args& args)
{
    const std::string from = args.required("from");
    const std::string to = args.required("to");
    const bool merge = args.has("merge");
    if (!merge && args.has("id-map")) {
        throw error(errors::usage_conflict, "--id-map applies to perfgate db copy --merge and db import --renumber");
    }
    const auto map_file = id_map_file(args);
    store::copy_options options;
    if (auto n = args.get_int("batch-rows", 1, 1000000)) options.batch_rows = static_cast<std::size_t>(*n);
    std::string table_now;
    std::int64_t printed = 0;
    options.on_batch = [&](std::string_view table, std::int64_t rows) {
        if (table != table_now) {
            table_now = std::string(table);
            printed = 0;
        }
        if (rows / progress_every_rows > printed / progress_every_rows) {
            printed = rows;
            std::cerr << fmt::format("perfgate db copy: {}: {} rows\n", table, rows);
        }
    };
    const auto started = std::chrono::steady_clock::now();
    if (merge) {
        const auto result = store::merge_store(from, to, options);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (map_file) write_id_map(*map_file, result.changes);
        std::cout << fmt::format("{:<40} {:>10}  {}\n", "project/table", "rows", "sha256 (ids mapped, unordered)");
        for (const auto& t : result.verified)
            std::cout << fmt::format("{:<40} {:>10}  {}\n", t.table, t.rows, t.sha256);
        print_renumbering("db copy --merge", result.tables, map_file);
        std::cout << fmt::format("perfgate db copy --merge: {} {} of {} into {}: {} rows, {:.1f} MB in {:.2f} s; every "
                                 "project verified (same rows, same SHA-256 with ids mapped)\n",
                                 result.resumed ? "finished merging" : "merged",
                                 result.projects.empty()
                                     ? std::string("no projects")
                                     : fmt::format("project(s) '{}'", fmt::join(result.projects, "', '")),
                                 store::shown_location(from), store::shown_location(to), result.rows_copied,
                                 megabytes(result.bytes_copied), seconds);
        std::cout.flush();
        return exit_pass;
    }
    const auto result = store::copy_store(from, to, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    std::cout << fmt::format("{:<22} {:>10}  {}\n", "table", "rows", "sha256");
    for (const auto& t : result.verified) std::cout << fmt::format("{:<22} {:>10}  {}\n", t.table, t.rows, t.sha256);
    std::cout << fmt::format("perfgate db copy: {} {} to {}: {} rows, {:.1f} MB in {:.2f} s ({:.0f} rows/s, "
                             "{:.1f} MB/s); every table verified (same rows, same SHA-256 on both sides)\n",
                             result.resumed ? "finished the copy of" : "copied", store::shown_location(from),
                             store::shown_location(to), result.rows_copied, megabytes(result.bytes_copied), seconds,
                             seconds > 0 ? static_cast<double>(result.rows_copied) / seconds : 0.0,
                             seconds > 0 ? megabytes(result.bytes_copied) / seconds : 0.0);
    std::cout.flush();
    return exit_pass;
}

int db_export(const parsed_args& args)
{
    const std::string where = args.required("db");
    const std::string project = args.required("project");
    const auto file = args.get("output");
    if (!file || *file == "-") {
        const auto rows = store::export_project(where, project, std::cout);
        std::cout.flush();
        std::cerr << fmt::format("perfgate db export: project '{}': {} rows\n", project, rows);
        return exit_pass;
    }
    std::error_code ec;
    if (std::filesystem::exists(*file, ec)) {
        throw error(errors::usage_file_exists,
                    fmt::format("{}: exists already; perfgate db export never overwrites a file (name a new one)",
                                *file));
    }
    // Written beside the file and renamed once complete: an interrupted
    // export never leaves a file that looks whole.
    const std::filesystem::path partial = *file + ".partial";
    std::int64_t rows = 0;
    {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        if (!out) throw error(errors::store_io, fmt::format("{}: cannot be written", partial.string()));
        try {
            rows = store::export_project(where, project, out);
            out.close();
            if (!out) throw error(errors::store_io, fmt::format("{}: writing failed", partial.string()));
        } catch (...) {
            std::filesystem::remove(partial, ec);
            throw;
        }
    }
    std::filesystem::rename(partial, *file);
    std::cerr << fmt::format("perfgate db export: project '{}': {} rows to {}\n", project, rows, *file);
    return exit_pass;
}

int db_import(const parsed_args& args, const std::string& file)
{
    const std::string where = args.required("db");
    store::import_options options;
    options.renumber = args.has("renumber");
    if (!options.renumber && args.has("id-map")) {
        throw error(errors::usage_conflict, "--id-map applies to perfgate db import --renumber and db copy --merge");
    }
    const auto map_file = id_map_file(args);
    const auto r = store::import_project(where, file, options);
    if (map_file) write_id_map(*map_file, r.changes);
    if (options.renumber) print_renumbering("db import --renumber", r.tables, map_file);
    std::cout << fmt::format("perfgate db import: project '{}' (format version {}): {} rows into {}\n", r.project,
                             r.format_version, r.rows, store::shown_location(where));
    std::cout.flush();
    return exit_pass;
}

} // namespace perfgate::cli
