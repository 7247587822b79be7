// Moving a whole store from one database to another (`perfgate db copy`):
// SQLite to PostgreSQL and back, or between two files or two servers.
//
// What is copied: every table of the schema (copied_tables(), in an order
// that references only rows copied before), every column, ids included, so
// that a comparison's or an alert's URL names the same object afterwards.
// Tokens move as stored (their SHA-256 hashes): they keep signing in.
// Columns are read from the databases' own catalogues, so a column a
// migration adds is copied without a change here; a table that is not in
// copied_tables() stops the copy before it writes anything
// ("store.copy_unknown_table"): a new table must be added there on purpose.
//
// How: both databases are opened as a store would (migrations applied, so
// both are at this perfgate's schema), then each table is read in the order
// of its key and written in batches of copy_options::batch_rows rows, one
// transaction per batch. The target's id generators are then moved past the
// ids copied (PostgreSQL: each identity's sequence to the source's high-water
// mark; SQLite: sqlite_sequence for AUTOINCREMENT tables), and every table is
// verified: its row count and a SHA-256 over its rows in key order, each
// value rendered the same way on both engines (table_digest).
//
// Resuming: the copy marks the target with a table of its own,
// perfgate_copy_state (the source's shown location, the start time), created
// before the first batch and dropped once the verification passes. A target
// that has rows and no such mark is refused ("store.copy_target_not_empty",
// exit 2, nothing written); one whose mark names the same source is resumed:
// each table continues after the greatest key the target holds (batches
// commit in key order, so what an interrupted copy left is a prefix). A mark
// naming another source is refused too.
//
// The source must not be written during the copy (stop its servers); a row
// written meanwhile fails the verification ("store.copy_mismatch", naming
// the tables), and the mark stays, so that a rerun continues and verifies
// again.
//
// Merging (merge_store, `perfgate db copy --merge`): every project of the
// source into a target that has other projects. A project name on both
// sides is refused ("store.import_conflict", exit 2, nothing written): the
// merge adds projects, it never mixes two. Ids: a project's table (every
// identity table but testbeds and counters) whose source ids reach into the
// ids the target has handed out is shifted past them, each id plus the same
// shift, so rows keep their order; a table whose ids are all free keeps
// them. Testbeds and counters, shared by a store's projects, are matched by
// fingerprint and name. Every column naming a row follows (the table list's
// references, store/copy_tables.cpp), and the ids in comparisons' reports
// and idempotency keys' run lists. Comparisons' and alerts' ids are in URLs:
// the result lists every id that changed, for redirects.
//
// A merge runs one transaction per batch and resumes like a copy: its mark
// (perfgate_merge_state, the source; perfgate_merge_tables, each table's
// shift and the source key merged last; perfgate_merge_ids, the shared
// rows' mapping) is written with the batches and dropped once verified. It
// verifies per merged project and table: the row count, and a digest over
// the rows with their ids mapped (unordered: the sum of each row's SHA-256)
// equal on both sides; testbeds and counters are counted only (a row the
// target had keeps its own values).
//
// Tests only: PERFGATE_TEST_COPY_FAIL_AFTER_BATCHES=N stops the copy with
// "store.io" after N committed batches, as a copy killed mid-way stops.
//
// Threading: one call at a time per target; it opens its own connections.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::store {

// One table's verification figures.
struct table_digest {
    std::string table;
    std::int64_t rows = 0;
    std::string sha256; // lowercase hex over the rows in key order (store/copy_tables.hpp: digest_table)
    friend bool operator==(const table_digest&, const table_digest&) = default;
};

struct copy_options {
    // Rows written per transaction. 1000 keeps a transaction small on both
    // engines (a few hundred KB of samples) while the commit cost is spread
    // over enough rows that it does not dominate.
    std::size_t batch_rows = 1000;
    // Called after each committed batch: the table and the rows it has in the
    // target so far (for progress lines); may be empty.
    std::function<void(std::string_view table, std::int64_t rows)> on_batch;
};

struct copy_result {
    bool resumed = false;               // the target held an interrupted copy of this source
    std::int64_t rows_copied = 0;       // by this call (a resumed copy counts only its part)
    std::int64_t bytes_copied = 0;      // text bytes plus 8 per number, by this call
    std::vector<table_digest> verified; // per table, equal on both sides
};

// The tables copied, in copy order. Every table of the schema but the
// engines' bookkeeping (perfgate_migrations, sqlite_sequence) and the copy's
// own mark.
const std::vector<std::string_view>& copied_tables();

// The tables of the schema db holds (opened as a store, so migrated), but
// the bookkeeping ones copied_tables() leaves out; sorted.
std::vector<std::string> schema_tables(const std::string& db);

// Row counts and digests of every copied table of db (opened as a store).
std::vector<table_digest> digest_tables(const std::string& db);

// The reference-like columns (foreign keys, integer *_id and *_run) of db's
// schema that the copy's table list does not declare, as "table.column":
// empty when renumbering covers every column that names a row.
std::vector<std::string> unlisted_references(const std::string& db);

// One id that a merge or a renumbering import changed.
struct id_change {
    std::string_view table;
    std::int64_t from = 0;
    std::int64_t to = 0;
};

// Per identity table: the rows that came in and how many changed id.
struct renumbered_table {
    std::string table;
    std::int64_t rows = 0;
    std::int64_t changed = 0;
    std::int64_t shift = 0; // a project's table: the shift; testbeds, counters: 0
};

struct merge_result {
    bool resumed = false;
    std::vector<std::string> projects; // merged, by name
    std::int64_t rows_copied = 0;      // by this call
    std::int64_t bytes_copied = 0;
    std::vector<renumbered_table> tables;
    std::vector<id_change> changes;     // every id that changed, in table order
    std::vector<table_digest> verified; // "project/table", the target's side
};

// Merges every project of `from` into `to`, as described above. Errors:
// "store.import_conflict" (a project name on both sides, or `to` holds an
// unfinished merge of another source or an unfinished copy),
// "store.copy_unknown_table" (a table, or a column naming a row, the list
// lacks), "store.copy_mismatch", "usage.conflict", the store's own errors.
merge_result merge_store(const std::string& from, const std::string& to, const copy_options& options = {});

// Copies the store `from` into `to` (each a --db value: a SQLite path or a
// postgresql:// URI), as described above. Errors: "store.copy_target_not_empty"
// (to has rows and no interrupted copy of from), "store.copy_unknown_table",
// "store.copy_mismatch" (the verification failed), "usage.conflict" (from and
// to name the same database), and the store's own errors (store.open,
// store.migrate, store.io, ...).
copy_result copy_store(const std::string& from, const std::string& to, const copy_options& options = {});

} // namespace perfgate::store
