// What `perfgate db copy` (store/copy.cpp) and `perfgate db export` /
// `import` (store/project_export.cpp) share, private to perfgate::store: the
// tables in copy order with their keys, a table's columns as the database's
// catalogue gives them, reading a table in key order in bounded batches,
// writing rows by column name, and a table's digest.
//
// Values travel as their column's kind (integer, real, text; NULL), read
// from the catalogue of the database being read: SQLite's declared types
// (INTEGER, REAL, TEXT), PostgreSQL's data types (bigint, integer, double
// precision, text).
#pragma once

#include "store/copy.hpp"
#include "store/db.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace perfgate::store::detail {

enum class value_kind { integer, real, text };

struct column_info {
    std::string name;
    value_kind kind = value_kind::text;
};

struct cell {
    bool null = true;
    std::int64_t i = 0;
    double r = 0;
    std::string s;
};
using row = std::vector<cell>;

// Text columns that hold ids of other rows (store/copy_tables.cpp lists
// them with the tables): renumbering rewrites them too.
enum class id_text {
    report_json, // comparisons.report: run, comparison and alert ids at known keys
    run_list,    // ingest_keys.run_ids: "12,13,14"
};

// A column naming a row of another table by its id.
struct column_reference {
    std::size_t column = 0; // index into table_layout::columns
    std::string_view table; // the table it names a row of
};

// One copied table: its columns (the catalogue's order) and its key (indexes
// into columns), which orders the copy and its batches.
struct table_layout {
    std::string table;
    std::vector<column_info> columns;
    std::vector<std::size_t> key;
    bool identity = false; // the key is an id column the engine generates
    // Shared by all projects of a store (testbeds, counters): a row is
    // matched by this column's value, empty for the others.
    std::string_view natural_key;
    std::vector<column_reference> references;
    std::vector<std::pair<std::size_t, id_text>> id_texts;
};

// "name" quoted as an SQL identifier (names from our own catalogue only).
std::string sql_name(std::string_view name);

// A --db value opened as a store would (migrations applied), then as one
// plain connection for the copy: SQLite with foreign keys on and the
// store's busy timeout, PostgreSQL in UTF-8.
std::unique_ptr<connection> open_copy_side(const std::string& db);

// The schema's tables on c without the engines' bookkeeping
// (perfgate_migrations, sqlite_*) and the copy's mark; sorted.
std::vector<std::string> schema_tables(connection& c);
// The filter of table's rows that belong to one project (:project, its id).
std::string_view project_rows(std::string_view table);
// The copied tables that have an engine-generated id column.
std::vector<std::string_view> identity_tables();
// Whether a SQLite table was declared AUTOINCREMENT.
bool sqlite_autoincrement(connection& c, std::string_view table);
std::int64_t count_rows(connection& c, std::string_view table);
// The greatest id an identity table has handed out on c: its rows' and,
// where the engine keeps one, its generator's (PostgreSQL's sequence,
// SQLite's sqlite_sequence for AUTOINCREMENT tables).
std::int64_t high_water(connection& c, std::string_view table);
// Moves table's id generator on c to at least hw (PostgreSQL: setval;
// SQLite: sqlite_sequence of an AUTOINCREMENT table; other SQLite tables
// continue after their greatest id anyway).
void advance_generator(connection& c, std::string_view table, std::int64_t hw);

// table's layout on c. Error "store.copy_unknown_table" when table is not
// one of copied_tables().
table_layout layout_of(connection& c, std::string_view table);

// The greatest key in layout's table on c (in the copy's order), or none.
std::optional<row> last_key(connection& c, const table_layout& layout);

struct batch {
    std::vector<row> rows;
    std::int64_t bytes = 0; // text bytes plus 8 per non-NULL number
};

// Reads a table in key order, a batch at a time, after a given key; filter
// (SQL over the table's columns, with :project) narrows the rows, for one
// project's export. A batch holds at most max_batch_bytes of values past
// its first row: the next batch's row limit shrinks after a big one (flame
// graphs, reports), and PostgreSQL's results are read whole.
class table_reader {
public:
    static constexpr std::int64_t max_batch_bytes = 16 << 20;

    table_reader(connection& c, std::string_view table, std::string filter = {},
                 std::optional<std::int64_t> project = std::nullopt);
    [[nodiscard]] const table_layout& layout() const noexcept { return layout_; }
    void start_after(std::optional<row> key) { after_ = std::move(key); }
    // The next rows (at most max_rows), empty at the end.
    batch next(std::size_t max_rows);

private:
    connection& c_;
    table_layout layout_;
    std::string filter_;
    std::optional<std::int64_t> project_;
    std::optional<row> after_;
    std::size_t limit_;
};

// Inserts rows of layout into the same table on c, by column name: c's table
// must have the same columns ("store.copy_mismatch" otherwise).
class table_writer {
public:
    table_writer(connection& c, const table_layout& layout);
    void insert(const row& r);
    // rows in groups of rows_per_insert per INSERT statement (one round trip
    // each on PostgreSQL, where a round trip per row took 9 of 10 parts of
    // the copy's time), the rest one by one.
    void insert_all(const std::vector<row>& rows);
    static constexpr std::size_t rows_per_insert =
        100; // x at most ~25 columns: far below both engines' parameter limits
    // Only the columns marked in given; the others take their defaults.
    void insert_given(const row& r, const std::vector<bool>& given);

private:
    connection& c_;
    const table_layout& layout_;
    std::string sql_, group_sql_;
    std::vector<std::string> names_, group_names_;
};

// Ids moved from one store to another (db copy --merge, db import
// --renumber). A project's own tables (every identity table without a
// natural key) are shifted: each id plus the table's shift, the same for all
// its rows, so the rows keep their order and every id maps, even one whose
// row is gone (a pruned run a report still names). Shared tables' rows
// (testbeds, counters) are mapped one by one (the target's row of the same
// natural key, or a new one).
class id_map {
public:
    void set_shift(std::string_view table, std::int64_t by);
    [[nodiscard]] std::int64_t shift(std::string_view table) const;
    void set(std::string_view table, std::int64_t from, std::int64_t to);
    // table's id from -> the target's; none for a shared row not mapped.
    [[nodiscard]] std::optional<std::int64_t> find(std::string_view table, std::int64_t from) const;
    // Maps r, a row of layout's table, in place: its own id (a project's
    // table), its reference columns and the ids in its id texts. Returns
    // what failed (a reference to a shared row not mapped: "column 'counter_id'
    // names 7, which no row before it holds"), else none.
    [[nodiscard]] std::optional<std::string> apply(const table_layout& layout, row& r) const;
    // Whether every id maps to itself.
    [[nodiscard]] bool keeps_ids() const;

private:
    std::map<std::string, std::int64_t, std::less<>> shifts_;
    std::map<std::string, std::unordered_map<std::int64_t, std::int64_t>, std::less<>> rows_;
};

// The target's shift for a project-owned identity table whose incoming ids
// start at min_id: 0 when they all lie past every id the target has handed
// out (high_water), else what moves the first one just past it.
std::int64_t shift_past(connection& target, std::string_view table, std::int64_t min_id);

// The reference-like columns of c's schema (foreign keys, and integer
// columns named *_id or *_run) that the copy's list does not declare, as
// "table.column"; sorted. Empty when the list covers the schema.
std::vector<std::string> unlisted_references(connection& c);

// A digest that does not depend on the rows' order: the sum (mod 2^256) of
// each row's SHA-256, rows rendered as digest_table renders them. For a
// merge, where a shared table's mapped ids change the key order.
class unordered_digest {
public:
    explicit unordered_digest(const table_layout& layout);
    void add(const row& r);
    [[nodiscard]] table_digest result(std::string name) const;

private:
    const table_layout& layout_;
    std::vector<std::size_t> order_;
    std::array<std::uint64_t, 4> sum_{};
    std::int64_t rows_ = 0;
    std::string text_;
};

// Row count and SHA-256 of table on c: every row in key order, each value
// rendered as N (NULL), I<decimal>, R<shortest decimal that reads back to the
// same double> or T<bytes>:<text>, values separated by ';', rows by '\n'.
table_digest digest_table(connection& c, std::string_view table);

} // namespace perfgate::store::detail
