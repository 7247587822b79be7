// The tables `perfgate db copy` moves, and reading, writing and digesting
// them generically (store/copy_tables.hpp).
#include "store/copy_tables.hpp"

#include "model/digest.hpp"
#include "model/error.hpp"
#include "store/postgres.hpp"
#include "store/sqlite.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

namespace perfgate::store {

namespace {

struct reference_spec {
    std::string_view column;
    std::string_view table; // the table whose row it names by id
};

struct table_spec {
    std::string_view name;
    std::vector<std::string_view> key;
    bool identity;
    // Rows of the first batch: fewer for tables whose rows can be large
    // (reports up to a few hundred KB, flame graphs up to 4 MiB), so that
    // the first batch stays near table_reader::max_batch_bytes.
    std::size_t first_batch_rows;
    // The rows of one project (:project, its id), for perfgate db export.
    std::string_view project_rows;
    // Every column that names another row by its id (foreign keys and the
    // columns that name rows without one), for renumbering; the schema
    // check (unlisted_references) fails on one missing here.
    std::vector<reference_spec> references = {};
    // Shared tables: the column a row is matched by in another store.
    std::string_view natural_key = {};
    // Text columns holding ids (renumbering rewrites them).
    std::vector<std::pair<std::string_view, detail::id_text>> id_texts = {};
};

constexpr std::size_t unbounded = static_cast<std::size_t>(-1);

// Every table of the schema, in an order where a row references only rows of
// tables before it (the migrations' REFERENCES). A migration that adds a
// table adds it here: the copy refuses a schema with a table not listed
// (test_db_copy compares this list with the schema's), and a column naming
// another row that is not in a table's references (unlisted_references).
// Exception to the order: comparisons' reports name alerts (open alerts at
// the time), which come later; a shift maps them all the same.
//
// In two parts (a project's settings, runs and their rows; then what is
// computed from runs), joined by specs().
std::vector<table_spec> run_specs()
{
    return {
        {"projects", {"id"}, true, unbounded, "id = :project"},
        {"api_tokens", {"id"}, true, unbounded, "project_id = :project", {{"project_id", "projects"}}},
        {"webhooks", {"id"}, true, unbounded, "project_id = :project", {{"project_id", "projects"}}},
        {"testbeds",
         {"id"},
         true,
         unbounded,
         "id IN (SELECT testbed_id FROM runs WHERE project_id = :project)",
         {},
         "fingerprint"},
        {"benchmarks", {"id"}, true, unbounded, "project_id = :project", {{"project_id", "projects"}}},
        {"counters",
         {"id"},
         true,
         unbounded,
         "id IN (SELECT bc.counter_id FROM benchmark_counters bc JOIN benchmarks b ON b.id = bc.benchmark_id "
         "WHERE b.project_id = :project) OR id IN (SELECT s.counter_id FROM summaries s JOIN runs r ON r.id = "
         "s.run_id WHERE r.project_id = :project)",
         {},
         "name"},
        {"benchmark_counters",
         {"benchmark_id", "counter_id"},
         false,
         unbounded,
         "benchmark_id IN (SELECT id FROM benchmarks WHERE project_id = :project)",
         {{"benchmark_id", "benchmarks"}, {"counter_id", "counters"}}},
        {"runs",
         {"id"},
         true,
         unbounded,
         "project_id = :project",
         {{"project_id", "projects"},
          {"benchmark_id", "benchmarks"},
          {"testbed_id", "testbeds"},
          {"token_id", "api_tokens"}}},
        {"samples",
         {"run_id", "counter_id", "repetition"},
         false,
         unbounded,
         "run_id IN (SELECT id FROM runs WHERE project_id = :project)",
         {{"run_id", "runs"}, {"counter_id", "counters"}}},
        {"summaries",
         {"run_id", "counter_id"},
         false,
         unbounded,
         "run_id IN (SELECT id FROM runs WHERE project_id = :project)",
         {{"run_id", "runs"}, {"counter_id", "counters"}, {"benchmark_id", "benchmarks"}, {"testbed_id", "testbeds"}}},
    };
}

std::vector<table_spec> result_specs()
{
    return {
        {"ingest_keys",
         {"project_id", "key"},
         false,
         unbounded,
         "project_id = :project",
         {{"project_id", "projects"}, {"run_id", "runs"}},
         {},
         {{"run_ids", detail::id_text::run_list}}},
        {"comparisons",
         {"id"},
         true,
         64,
         "project_id = :project",
         {{"project_id", "projects"}, {"baseline_run", "runs"}, {"candidate_run", "runs"}},
         {},
         {{"report", detail::id_text::report_json}}},
        {"comparison_artifacts",
         {"comparison_id", "kind", "benchmark"},
         false,
         4,
         "comparison_id IN (SELECT id FROM comparisons WHERE project_id = :project)",
         {{"comparison_id", "comparisons"}}},
        {"acceptances",
         {"comparison_id"},
         false,
         unbounded,
         "comparison_id IN (SELECT id FROM comparisons WHERE project_id = :project)",
         {{"comparison_id", "comparisons"}, {"token_id", "api_tokens"}}},
        {"change_points",
         {"run_id", "counter_id"},
         false,
         unbounded,
         "run_id IN (SELECT id FROM runs WHERE project_id = :project)",
         {{"run_id", "runs"}, {"counter_id", "counters"}, {"benchmark_id", "benchmarks"}, {"testbed_id", "testbeds"}}},
        {"alerts",
         {"id"},
         true,
         unbounded,
         "project_id = :project",
         {{"project_id", "projects"},
          {"benchmark_id", "benchmarks"},
          {"counter_id", "counters"},
          {"testbed_id", "testbeds"},
          {"run_id", "runs"}}},
        {"alert_culprits",
         {"alert_id"},
         false,
         unbounded,
         "alert_id IN (SELECT id FROM alerts WHERE project_id = :project)",
         {{"alert_id", "alerts"}, {"token_id", "api_tokens"}}},
        {"alert_culprit_commits",
         {"alert_id", "position"},
         false,
         unbounded,
         "alert_id IN (SELECT id FROM alerts WHERE project_id = :project)",
         {{"alert_id", "alerts"}}},
        {"alert_culprit_effects",
         {"alert_id", "position", "ordinal"},
         false,
         unbounded,
         "alert_id IN (SELECT id FROM alerts WHERE project_id = :project)",
         {{"alert_id", "alerts"}}},
        {"qualifications",
         {"id"},
         true,
         unbounded,
         "project_id = :project",
         {{"project_id", "projects"}, {"token_id", "api_tokens"}}},
        {"qualification_counters",
         {"qualification_id", "counter"},
         false,
         unbounded,
         "qualification_id IN (SELECT id FROM qualifications WHERE project_id = :project)",
         {{"qualification_id", "qualifications"}}},
    };
}

const std::vector<table_spec>& specs()
{
    static const std::vector<table_spec> all = [] {
        auto out = run_specs();
        for (auto& s : result_specs()) out.push_back(std::move(s));
        return out;
    }();
    return all;
}

const table_spec& spec_of(std::string_view table, const std::string& where)
{
    for (const auto& s : specs()) {
        if (s.name == table) return s;
    }
    throw error(errors::store_copy_unknown_table,
                fmt::format("{}: table {} is not in perfgate db copy's list (store/copy_tables.cpp)", where,
                            detail::shown_name(table)));
}

detail::value_kind kind_of(std::string type)
{
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    if (type.find("INT") != std::string::npos) return detail::value_kind::integer;
    if (type.find("REAL") != std::string::npos || type.find("DOUB") != std::string::npos ||
        type.find("FLOA") != std::string::npos) {
        return detail::value_kind::real;
    }
    return detail::value_kind::text;
}

std::vector<detail::column_info> columns_of(detail::connection& c, std::string_view table)
{
    auto st = c.prepare(
        c.pick({"SELECT name, type FROM pragma_table_info(:t) ORDER BY cid",
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = :t ORDER BY ordinal_position"}));
    st.bind(":t", table);
    std::vector<detail::column_info> out;
    while (st.step()) out.push_back({st.text(0), kind_of(st.text(1))});
    return out;
}

// A key column in ORDER BY and row comparisons: PostgreSQL compares text in
// the database's collation; "C" is byte order, as SQLite's BINARY, so both
// engines walk a table in the same order and a resumed copy's last key means
// the same on both.
std::string key_expr(const detail::connection& c, const detail::column_info& col)
{
    std::string e = detail::sql_name(col.name);
    if (c.kind() == detail::engine::postgresql && col.kind == detail::value_kind::text) e += " COLLATE \"C\"";
    return e;
}

std::string key_list(const detail::connection& c, const detail::table_layout& l, std::string_view suffix = {})
{
    std::string out;
    for (std::size_t k = 0; k < l.key.size(); ++k) {
        if (k) out += ", ";
        out += key_expr(c, l.columns[l.key[k]]);
        out += suffix;
    }
    return out;
}

detail::cell read_cell(const detail::statement& st, int col, detail::value_kind kind)
{
    detail::cell v;
    if (st.is_null(col)) return v;
    v.null = false;
    switch (kind) {
    case detail::value_kind::integer: v.i = st.int64(col); break;
    case detail::value_kind::real: v.r = st.real(col); break;
    case detail::value_kind::text: v.s = st.text(col); break;
    }
    return v;
}

void bind_cell(detail::statement& st, const char* name, const detail::cell& v, detail::value_kind kind)
{
    if (v.null) {
        st.bind_null(name);
        return;
    }
    switch (kind) {
    case detail::value_kind::integer: st.bind(name, v.i); break;
    case detail::value_kind::real: st.bind(name, v.r); break;
    case detail::value_kind::text: st.bind(name, std::string_view(v.s)); break;
    }
}

std::int64_t cell_bytes(const detail::cell& v, detail::value_kind kind)
{
    if (v.null) return 0;
    return kind == detail::value_kind::text ? detail::to_int64(v.s.size()) : 8;
}

struct md_ctx_free {
    void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};

} // namespace

const std::vector<std::string_view>& copied_tables()
{
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> out;
        for (const auto& s : specs()) out.push_back(s.name);
        return out;
    }();
    return names;
}

namespace detail {

std::string sql_name(std::string_view name)
{
    std::string out = "\"";
    for (const char ch : name) {
        out += ch;
        if (ch == '"') out += '"';
    }
    out += '"';
    return out;
}

std::unique_ptr<connection> open_copy_side(const std::string& db)
{
    {
        // Opening it as a store applies the migrations: both sides of a copy
        // are at this perfgate's schema.
        const store migrated(db);
    }
    if (is_postgres(db)) {
        auto c = std::make_unique<pg_connection>(db, shown_location(db));
        c->exec("SET client_encoding = 'UTF8'");
        return c;
    }
    auto c = std::make_unique<sqlite_connection>(db, sqlite_connection::mode::read_write_create);
    c->exec("PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON");
    return c;
}

std::vector<std::string> schema_tables(connection& c)
{
    auto st = c.prepare(
        c.pick({"SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
                "ESCAPE '\\' AND name <> 'perfgate_copy_state' AND name NOT LIKE 'perfgate\\_merge\\_%' ESCAPE '\\' "
                "ORDER BY name",
                "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                "current_schema() AND table_type = 'BASE TABLE' AND table_name NOT IN "
                "('perfgate_migrations', 'perfgate_copy_state') AND table_name NOT LIKE 'perfgate\\_merge\\_%' "
                "ORDER BY table_name"}));
    std::vector<std::string> out;
    while (st.step()) out.push_back(st.text(0));
    std::sort(out.begin(), out.end());
    return out;
}

std::string_view project_rows(std::string_view table) { return spec_of(table, "perfgate db export").project_rows; }

std::vector<std::string_view> identity_tables()
{
    std::vector<std::string_view> out;
    for (const auto& s : specs()) {
        if (s.identity) out.push_back(s.name);
    }
    return out;
}

bool sqlite_autoincrement(connection& c, std::string_view table)
{
    auto st = c.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = :t "
                        "AND upper(sql) LIKE '%AUTOINCREMENT%'");
    st.bind(":t", table);
    st.step();
    return st.int64(0) > 0;
}

std::int64_t count_rows(connection& c, std::string_view table)
{
    auto st = c.prepare(fmt::format("SELECT count(*) FROM {}", sql_name(table)));
    st.step();
    return st.int64(0);
}

// The greatest id an identity table has handed out on c: its rows' and, where
// the engine keeps one, its generator's (PostgreSQL's sequence, SQLite's
// sqlite_sequence for AUTOINCREMENT tables), so that ids of deleted rows are
// not handed out again on the target either.
std::int64_t high_water(connection& c, std::string_view table)
{
    std::int64_t hw = 0;
    {
        auto st = c.prepare(fmt::format("SELECT coalesce(max(id), 0) FROM {}", sql_name(table)));
        st.step();
        hw = st.int64(0);
    }
    if (c.kind() == engine::postgresql) {
        auto st = c.prepare("SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence(:t, 'id')::regclass), 0)");
        st.bind(":t", table);
        st.step();
        hw = std::max(hw, st.int64(0));
    } else if (sqlite_autoincrement(c, table)) {
        auto st = c.prepare("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = :t");
        st.bind(":t", table);
        st.step();
        hw = std::max(hw, st.int64(0));
    }
    return hw;
}

// Moves table's id generator on c to at least hw.
void advance_generator(connection& c, std::string_view table, std::int64_t hw)
{
    if (hw <= 0) return;
    if (c.kind() == engine::postgresql) {
        auto st = c.prepare("SELECT setval(pg_get_serial_sequence(:t, 'id'), :v)");
        st.bind(":t", table).bind(":v", hw);
        st.run();
        return;
    }
    // SQLite: the next id is max(rowid) + 1, except for AUTOINCREMENT tables,
    // whose sqlite_sequence row also counts ids of deleted rows.
    if (!sqlite_autoincrement(c, table)) return;
    auto up = c.prepare("UPDATE sqlite_sequence SET seq = :v WHERE name = :t AND seq < :v");
    up.bind(":t", table).bind(":v", hw);
    up.run();
    auto have = c.prepare("SELECT count(*) FROM sqlite_sequence WHERE name = :t");
    have.bind(":t", table);
    have.step();
    const bool present = have.int64(0) > 0;
    have.reset();
    if (!present) {
        auto ins = c.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES (:t, :v)");
        ins.bind(":t", table).bind(":v", hw);
        ins.run();
    }
}

table_layout layout_of(connection& c, std::string_view table)
{
    const auto& spec = spec_of(table, c.path());
    table_layout l;
    l.table = std::string(table);
    l.identity = spec.identity;
    l.columns = columns_of(c, table);
    for (const auto k : spec.key) {
        auto it = std::find_if(l.columns.begin(), l.columns.end(),
                               [&](const column_info& col) { return col.name == k; });
        if (it == l.columns.end()) {
            throw error(errors::store_copy_unknown_table,
                        fmt::format("{}: table {} has no key column {}", c.path(), table, k));
        }
        l.key.push_back(static_cast<std::size_t>(it - l.columns.begin()));
    }
    const auto index_of = [&](std::string_view name) -> std::optional<std::size_t> {
        for (std::size_t i = 0; i < l.columns.size(); ++i) {
            if (l.columns[i].name == name) return i;
        }
        return std::nullopt;
    };
    l.natural_key = spec.natural_key;
    for (const auto& ref : spec.references) {
        const auto i = index_of(ref.column);
        if (!i) {
            throw error(errors::store_copy_unknown_table,
                        fmt::format("{}: table {} has no column {} (store/copy_tables.cpp names it)", c.path(), table,
                                    ref.column));
        }
        l.references.push_back({*i, ref.table});
    }
    for (const auto& text : spec.id_texts) {
        if (const auto i = index_of(text.first)) l.id_texts.emplace_back(*i, text.second);
    }
    return l;
}

std::optional<row> last_key(connection& c, const table_layout& layout)
{
    std::string cols;
    for (std::size_t k = 0; k < layout.key.size(); ++k) {
        if (k) cols += ", ";
        cols += sql_name(layout.columns[layout.key[k]].name);
    }
    auto st = c.prepare(fmt::format("SELECT {} FROM {} ORDER BY {} LIMIT 1", cols, sql_name(layout.table),
                                    key_list(c, layout, " DESC")));
    if (!st.step()) return std::nullopt;
    row key;
    for (std::size_t k = 0; k < layout.key.size(); ++k) {
        key.push_back(read_cell(st, static_cast<int>(k), layout.columns[layout.key[k]].kind));
    }
    st.reset();
    return key;
}

table_reader::table_reader(connection& c, std::string_view table, std::string filter,
                           std::optional<std::int64_t> project)
    : c_(c), layout_(layout_of(c, table)), filter_(std::move(filter)), project_(project),
      limit_(spec_of(table, c.path()).first_batch_rows)
{}

batch table_reader::next(std::size_t max_rows)
{
    std::string cols;
    for (std::size_t i = 0; i < layout_.columns.size(); ++i) {
        if (i) cols += ", ";
        cols += sql_name(layout_.columns[i].name);
    }
    std::vector<std::string> where;
    if (!filter_.empty()) where.push_back("(" + filter_ + ")");
    if (after_) {
        std::string params;
        for (std::size_t k = 0; k < layout_.key.size(); ++k) params += fmt::format("{}:k{}", k ? ", " : "", k);
        where.push_back(fmt::format("({}) > ({})", key_list(c_, layout_), params));
    }
    const std::string sql = fmt::format("SELECT {} FROM {}{}{} ORDER BY {} LIMIT :limit", cols, sql_name(layout_.table),
                                        where.empty() ? "" : " WHERE ", fmt::join(where, " AND "),
                                        key_list(c_, layout_));
    auto st = c_.prepare(sql);
    if (project_) st.bind(":project", *project_);
    if (after_) {
        for (std::size_t k = 0; k < layout_.key.size(); ++k) {
            const std::string name = fmt::format(":k{}", k);
            bind_cell(st, name.c_str(), (*after_)[k], layout_.columns[layout_.key[k]].kind);
        }
    }
    const std::size_t rows = std::max<std::size_t>(1, std::min(max_rows, limit_));
    st.bind(":limit", to_int64(rows));
    batch b;
    while (st.step()) {
        row r;
        r.reserve(layout_.columns.size());
        for (std::size_t i = 0; i < layout_.columns.size(); ++i) {
            r.push_back(read_cell(st, static_cast<int>(i), layout_.columns[i].kind));
            b.bytes += cell_bytes(r.back(), layout_.columns[i].kind);
        }
        b.rows.push_back(std::move(r));
    }
    if (!b.rows.empty()) {
        row key;
        for (const auto k : layout_.key) key.push_back(b.rows.back()[k]);
        after_ = std::move(key);
    }
    // The next batch's rows: as many as fit max_batch_bytes at this batch's
    // bytes per row (at least one, at most max_rows).
    if (!b.rows.empty() && b.bytes > 0) {
        const auto per_row = std::max<std::int64_t>(1, b.bytes / to_int64(b.rows.size()));
        limit_ = static_cast<std::size_t>(std::max<std::int64_t>(1, max_batch_bytes / per_row));
    }
    return b;
}

table_writer::table_writer(connection& c, const table_layout& layout) : c_(c), layout_(layout)
{
    const auto there = columns_of(c, layout.table);
    std::set<std::string> a, b;
    for (const auto& col : layout.columns) a.insert(col.name);
    for (const auto& col : there) b.insert(col.name);
    if (a != b) {
        throw error(errors::store_copy_mismatch,
                    fmt::format("{}: table {} has other columns than the source's ({} there, {} in the source)",
                                c.path(), layout.table, fmt::join(b, ", "), fmt::join(a, ", ")));
    }
    std::string cols, params;
    for (std::size_t i = 0; i < layout.columns.size(); ++i) {
        names_.push_back(fmt::format(":c{}", i));
        cols += fmt::format("{}{}", i ? ", " : "", sql_name(layout.columns[i].name));
        params += fmt::format("{}{}", i ? ", " : "", names_.back());
    }
    sql_ = fmt::format("INSERT INTO {} ({}) VALUES ({})", sql_name(layout.table), cols, params);
    std::string groups;
    for (std::size_t r = 0; r < rows_per_insert; ++r) {
        groups += r ? ", (" : "(";
        for (std::size_t i = 0; i < layout.columns.size(); ++i) {
            group_names_.push_back(fmt::format(":r{}c{}", r, i));
            groups += fmt::format("{}{}", i ? ", " : "", group_names_.back());
        }
        groups += ")";
    }
    group_sql_ = fmt::format("INSERT INTO {} ({}) VALUES {}", sql_name(layout.table), cols, groups);
}

void table_writer::insert_all(const std::vector<row>& rows)
{
    const std::size_t n = layout_.columns.size();
    std::size_t done = 0;
    for (; done + rows_per_insert <= rows.size(); done += rows_per_insert) {
        auto st = c_.prepare(group_sql_);
        for (std::size_t r = 0; r < rows_per_insert; ++r) {
            for (std::size_t i = 0; i < n; ++i) {
                bind_cell(st, group_names_[r * n + i].c_str(), rows[done + r][i], layout_.columns[i].kind);
            }
        }
        st.run();
    }
    for (; done < rows.size(); ++done) insert(rows[done]);
}

void table_writer::insert(const row& r)
{
    auto st = c_.prepare(sql_);
    for (std::size_t i = 0; i < layout_.columns.size(); ++i)
        bind_cell(st, names_[i].c_str(), r[i], layout_.columns[i].kind);
    st.run();
}

void table_writer::insert_given(const row& r, const std::vector<bool>& given)
{
    std::string cols, params;
    for (std::size_t i = 0; i < layout_.columns.size(); ++i) {
        if (!given[i]) continue;
        cols += fmt::format("{}{}", cols.empty() ? "" : ", ", sql_name(layout_.columns[i].name));
        params += fmt::format("{}{}", params.empty() ? "" : ", ", names_[i]);
    }
    auto st = c_.prepare(fmt::format("INSERT INTO {} ({}) VALUES ({})", sql_name(layout_.table), cols, params));
    for (std::size_t i = 0; i < layout_.columns.size(); ++i) {
        if (given[i]) bind_cell(st, names_[i].c_str(), r[i], layout_.columns[i].kind);
    }
    st.run();
}

namespace {

// Columns by name: the engines' catalogues list columns that migrations
// added in different orders.
std::vector<std::size_t> columns_by_name(const std::vector<column_info>& cols)
{
    std::vector<std::size_t> order(cols.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cols[a].name < cols[b].name; });
    return order;
}

// One row as table_digest renders it (copy_tables.hpp).
void render_row(const std::vector<column_info>& cols, const std::vector<std::size_t>& order, const row& r,
                std::string& text)
{
    text.clear();
    for (const std::size_t i : order) {
        if (!text.empty()) text += ';';
        const auto& v = r[i];
        if (v.null) text += 'N';
        else if (cols[i].kind == value_kind::integer) text += fmt::format("I{}", v.i);
        else if (cols[i].kind == value_kind::real) text += fmt::format("R{}", v.r);
        else text += fmt::format("T{}:{}", v.s.size(), v.s);
    }
    text += '\n';
}

} // namespace

table_digest digest_table(connection& c, std::string_view table)
{
    std::unique_ptr<EVP_MD_CTX, md_ctx_free> md(EVP_MD_CTX_new());
    if (!md || EVP_DigestInit_ex(md.get(), EVP_sha256(), nullptr) != 1) {
        throw error(errors::crypto_failed, "SHA-256 failed (OpenSSL EVP_DigestInit_ex)");
    }
    table_reader reader(c, table);
    const auto& cols = reader.layout().columns;
    const auto order = columns_by_name(cols);
    table_digest d;
    d.table = std::string(table);
    constexpr std::size_t digest_batch_rows = 1000;
    std::string text;
    for (;;) {
        auto b = reader.next(digest_batch_rows);
        if (b.rows.empty()) break;
        for (const auto& r : b.rows) {
            render_row(cols, order, r, text);
            if (EVP_DigestUpdate(md.get(), text.data(), text.size()) != 1) {
                throw error(errors::crypto_failed, "SHA-256 failed (OpenSSL EVP_DigestUpdate)");
            }
            ++d.rows;
        }
    }
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    unsigned len = 0;
    if (EVP_DigestFinal_ex(md.get(), out.data(), &len) != 1) {
        throw error(errors::crypto_failed, "SHA-256 failed (OpenSSL EVP_DigestFinal_ex)");
    }
    d.sha256 = model::to_hex(out.data(), len);
    return d;
}

unordered_digest::unordered_digest(const table_layout& layout)
    : layout_(layout), order_(columns_by_name(layout.columns))
{}

void unordered_digest::add(const row& r)
{
    render_row(layout_.columns, order_, r, text_);
    std::array<unsigned char, EVP_MAX_MD_SIZE> h{};
    unsigned len = 0;
    if (EVP_Digest(text_.data(), text_.size(), h.data(), &len, EVP_sha256(), nullptr) != 1 || len != 32) {
        throw error(errors::crypto_failed, "SHA-256 failed (OpenSSL EVP_Digest)");
    }
    // The hash as four 64-bit limbs (big-endian), added with carries.
    unsigned carry = 0;
    for (std::size_t n = 0; n < 4; ++n) {
        const std::size_t limb = 3 - n;
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < 8; ++b) v = (v << 8) | h[limb * 8 + b];
        const std::uint64_t before = sum_[limb];
        const std::uint64_t added = before + v + carry;
        carry = (added < before || (carry != 0 && added == before)) ? 1 : 0;
        sum_[limb] = added;
    }
    ++rows_;
}

table_digest unordered_digest::result(std::string name) const
{
    std::array<unsigned char, 32> bytes{};
    for (std::size_t limb = 0; limb < 4; ++limb) {
        for (std::size_t b = 0; b < 8; ++b)
            bytes[limb * 8 + b] = static_cast<unsigned char>(sum_[limb] >> (56 - 8 * b));
    }
    return {std::move(name), rows_, model::to_hex(bytes.data(), bytes.size())};
}

void id_map::set_shift(std::string_view table, std::int64_t by) { shifts_[std::string(table)] = by; }

std::int64_t id_map::shift(std::string_view table) const
{
    const auto it = shifts_.find(table);
    return it == shifts_.end() ? 0 : it->second;
}

void id_map::set(std::string_view table, std::int64_t from, std::int64_t to)
{
    auto it = rows_.find(table);
    if (it == rows_.end())
        it = rows_.emplace(std::string(table), std::unordered_map<std::int64_t, std::int64_t>{}).first;
    it->second[from] = to;
}

std::optional<std::int64_t> id_map::find(std::string_view table, std::int64_t from) const
{
    if (!spec_of(table, "renumbering").natural_key.empty()) {
        const auto it = rows_.find(table);
        if (it == rows_.end()) return std::nullopt;
        const auto row_it = it->second.find(from);
        if (row_it == it->second.end()) return std::nullopt;
        return row_it->second;
    }
    return from + shift(table);
}

bool id_map::keeps_ids() const
{
    for (const auto& entry : shifts_) {
        if (entry.second != 0) return false;
    }
    for (const auto& table : rows_) {
        for (const auto& m : table.second) {
            if (m.first != m.second) return false;
        }
    }
    return true;
}

namespace {

// The report's ids (report/json.cpp writes them): runs under these keys,
// the comparison's own id, and open alerts' ids.
void map_report_ids(nlohmann::ordered_json& j, const id_map& ids, bool in_open_alerts)
{
    if (j.is_array()) {
        for (auto& item : j) map_report_ids(item, ids, in_open_alerts);
        return;
    }
    if (!j.is_object()) return;
    for (auto it = j.begin(); it != j.end(); ++it) {
        auto& v = it.value();
        const std::string& k = it.key();
        std::string_view table;
        if (k == "baseline_run" || k == "candidate_run" || k == "run_id" || k == "since_run") table = "runs";
        else if (k == "comparison_id") table = "comparisons";
        else if (k == "alert_id" || (in_open_alerts && k == "id")) table = "alerts";
        if (!table.empty() && v.is_number_integer()) {
            v = *ids.find(table, v.get<std::int64_t>());
            continue;
        }
        map_report_ids(v, ids, k == "open_alerts");
    }
}

} // namespace

std::optional<std::string> id_map::apply(const table_layout& layout, row& r) const
{
    if (layout.identity && layout.natural_key.empty()) {
        auto& id = r[layout.key.front()];
        if (!id.null) id.i += shift(layout.table);
    }
    for (const auto& ref : layout.references) {
        auto& v = r[ref.column];
        if (v.null) continue;
        const auto to = find(ref.table, v.i);
        if (!to) {
            return fmt::format("column '{}' names {} of table '{}', which no row before it holds",
                               layout.columns[ref.column].name, v.i, ref.table);
        }
        v.i = *to;
    }
    for (const auto& text : layout.id_texts) {
        auto& v = r[text.first];
        if (v.null || v.s.empty()) continue;
        if (text.second == id_text::run_list) {
            if (shift("runs") == 0) continue;
            std::string out;
            std::size_t at = 0;
            while (at <= v.s.size()) {
                const auto comma = std::min(v.s.find(',', at), v.s.size());
                const std::string item = v.s.substr(at, comma - at);
                std::size_t used = 0;
                std::int64_t id = 0;
                try {
                    id = std::stoll(item, &used);
                } catch (const std::exception&) {
                    used = 0;
                }
                if (used != item.size() || item.empty()) {
                    return fmt::format("column '{}': '{}' is not a list of run ids", layout.columns[text.first].name,
                                       v.s);
                }
                out += fmt::format("{}{}", out.empty() ? "" : ",", id + shift("runs"));
                at = comma + 1;
            }
            v.s = std::move(out);
        } else {
            if (shift("runs") == 0 && shift("comparisons") == 0 && shift("alerts") == 0) continue;
            auto j = nlohmann::ordered_json::parse(v.s, nullptr, false);
            if (j.is_discarded()) {
                return fmt::format("column '{}' is not JSON", layout.columns[text.first].name);
            }
            map_report_ids(j, *this, false);
            v.s = j.dump();
        }
    }
    return std::nullopt;
}

std::int64_t shift_past(connection& target, std::string_view table, std::int64_t min_id)
{
    const auto hw = high_water(target, table);
    return min_id > hw ? 0 : hw - min_id + 1;
}

std::vector<std::string> unlisted_references(connection& c)
{
    std::vector<std::string> out;
    for (const auto& spec : specs()) {
        const auto cols = columns_of(c, spec.name);
        std::set<std::string> refs;
        for (const auto& col : cols) {
            const std::string& n = col.name;
            const bool named = n.ends_with("_id") || n.ends_with("_run");
            if (col.kind == value_kind::integer && named) refs.insert(n);
        }
        // Declared foreign keys, whatever their names, that name an id (a
        // composite key's other columns, alert_culprit_effects' position,
        // are not ids).
        auto st = c.prepare(c.pick({"SELECT \"from\", \"table\", \"to\" FROM pragma_foreign_key_list(:t)",
                                    "SELECT a.attname, cl.relname, af.attname FROM pg_constraint con "
                                    "CROSS JOIN LATERAL unnest(con.conkey, con.confkey) AS k(col, fcol) "
                                    "JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.col "
                                    "JOIN pg_attribute af ON af.attrelid = con.confrelid AND af.attnum = k.fcol "
                                    "JOIN pg_class cl ON cl.oid = con.confrelid "
                                    "WHERE con.contype = 'f' AND con.conrelid = to_regclass(:t)"}));
        st.bind(":t", spec.name);
        std::set<std::pair<std::string, std::string>> keys;
        while (st.step()) {
            const std::string to = st.text(2);
            if (to == "id" || to.ends_with("_id")) keys.emplace(st.text(0), st.text(1));
        }
        for (const auto& key : keys) refs.insert(key.first);
        for (const auto& n : refs) {
            const auto listed = std::find_if(spec.references.begin(), spec.references.end(),
                                             [&](const reference_spec& r) { return r.column == n; });
            if (listed == spec.references.end()) {
                out.push_back(fmt::format("{}.{}", spec.name, n));
                continue;
            }
            // A foreign key names the table the list says, or a table whose
            // own column of that name names it (alert_culprit_commits'
            // alert_id names alert_culprits' alert_id, an alert's id).
            const auto same_id = [&](const std::string& parent) {
                if (parent == listed->table) return true;
                for (const auto& other : specs()) {
                    if (other.name != parent) continue;
                    for (const auto& r : other.references) {
                        if (r.column == n && r.table == listed->table) return true;
                    }
                }
                return false;
            };
            for (const auto& key : keys) {
                if (key.first == n && !same_id(key.second)) {
                    out.push_back(fmt::format("{}.{} (-> {}, listed -> {})", spec.name, n, key.second, listed->table));
                }
            }
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace detail

} // namespace perfgate::store
