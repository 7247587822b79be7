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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

// One copied table: its columns (the catalogue's order) and its key (indexes
// into columns), which orders the copy and its batches.
struct table_layout {
    std::string table;
    std::vector<column_info> columns;
    std::vector<std::size_t> key;
    bool identity = false; // the key is an id column the engine generates
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

// Row count and SHA-256 of table on c: every row in key order, each value
// rendered as N (NULL), I<decimal>, R<shortest decimal that reads back to the
// same double> or T<bytes>:<text>, values separated by ';', rows by '\n'.
table_digest digest_table(connection& c, std::string_view table);

} // namespace perfgate::store::detail
