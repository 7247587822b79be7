// One project out of a store and into another (`perfgate db export` /
// `import`): JSON lines, a versioned format documented in
// docs/export-format.md.
//
// The file: a header line {"format": "perfgate-project-export", "version": N,
// "project": NAME, "exported_at": unix seconds}, then one line per row
// {"table": T, "row": {column: value, ...}} in the order of copied_tables()
// (store/copy.hpp: a row refers only to rows before it), then a last line
// {"end": {"rows": N}} so that a file cut short is refused.
//
// What a project takes with it: the project row, its tokens (as stored:
// hashes, so they keep signing in), webhooks, benchmarks and their counters,
// runs with samples and summaries, idempotency keys, comparisons with their
// artifacts and acceptances, change points and alerts; the testbeds and
// counters its runs name (shared by all projects of a store).
//
// Ids: kept by default. A row's id that the target already uses for another
// row of a project-owned table (projects, tokens, webhooks, benchmarks, runs,
// comparisons, alerts, qualifications) refuses the import
// ("store.import_conflict", nothing written): reports, dashboard links and
// PR comments name those ids. Into an empty store (or one whose ids do not
// overlap) every API answer is the same as the exporting server's. With
// import_options::renumber, a project-owned table whose file ids reach into
// the ids the target has handed out is shifted past them instead, as
// `perfgate db copy --merge` does (store/copy.hpp, "Merging": every column
// naming a row follows, and the ids in reports); the result lists every id
// that changed. Testbeds and counters are matched by their natural key
// (fingerprint, name): one the target has is reused under its id there, one
// it lacks is inserted (under the file's id if free, else a new one), and
// the rows naming them follow.
//
// Older versions: a file of an older format version imports: a column the
// file lacks (added by a later migration) takes its default. A newer
// version, or a column or table this schema does not have, is refused
// ("input.bad_export", naming the line).
#pragma once

#include "store/copy.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::store {

// The version export_project writes; import_project reads 1 to this.
inline constexpr int export_format_version = 1;
inline constexpr std::string_view export_format_name = "perfgate-project-export";
// Longest line import_project reads: a flame graph is at most 4 MiB
// (comparison_artifacts), twice that once JSON-escaped, with room to spare.
inline constexpr std::size_t max_export_line_bytes = 64u << 20;

// Writes project of db (a --db value) to out; returns the rows written.
// Reads in one snapshot (SQLite: a read transaction; PostgreSQL: REPEATABLE
// READ), so a server may keep writing meanwhile. Errors: "store.not_found"
// (no such project), "store.io", and "input.bad_export" for a value JSON
// cannot hold (text that is not UTF-8, a non-finite number).
std::int64_t export_project(const std::string& db, std::string_view project, std::ostream& out);

struct import_options {
    // Shift the ids that clash instead of refusing (reads the file twice:
    // once for each table's lowest id).
    bool renumber = false;
};

struct import_result {
    std::string project;
    int format_version = 0;
    std::int64_t rows = 0;
    std::vector<renumbered_table> tables; // per identity table of the file
    std::vector<id_change> changes;       // every id that changed (testbeds and counters matched included)
};

// Adds the project in file to db, in one transaction: all of it or nothing.
// Errors: "input.bad_export" (not an export, newer version, cut short, a row
// that does not fit: the message names file:line), "store.import_conflict"
// (the project's name, or without renumber one of its ids, is taken),
// "store.copy_unknown_table" (renumber: a column naming a row that the
// copy's list lacks), "store.constraint".
import_result import_project(const std::string& db, const std::filesystem::path& file,
                             const import_options& options = {});

} // namespace perfgate::store
