// The tables `perfgate db copy` moves, and reading, writing and digesting
// them generically (store/copy_tables.hpp).
#include "store/copy_tables.hpp"

#include "model/digest.hpp"
#include "model/error.hpp"
#include "store/postgres.hpp"
#include "store/sqlite.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

namespace perfgate::store {

namespace {

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
};

constexpr std::size_t unbounded = static_cast<std::size_t>(-1);

// Every table of the schema, in an order where a row references only rows of
// tables before it (the migrations' REFERENCES). A migration that adds a
// table adds it here: the copy refuses a schema with a table not listed
// (test_db_copy compares this list with the schema's).
const std::vector<table_spec>& specs()
{
    static const std::vector<table_spec> all{
        {"projects", {"id"}, true, unbounded, "id = :project"},
        {"api_tokens", {"id"}, true, unbounded, "project_id = :project"},
        {"webhooks", {"id"}, true, unbounded, "project_id = :project"},
        {"testbeds", {"id"}, true, unbounded, "id IN (SELECT testbed_id FROM runs WHERE project_id = :project)"},
        {"benchmarks", {"id"}, true, unbounded, "project_id = :project"},
        {"counters",
         {"id"},
         true,
         unbounded,
         "id IN (SELECT bc.counter_id FROM benchmark_counters bc JOIN benchmarks b ON b.id = bc.benchmark_id "
         "WHERE b.project_id = :project) OR id IN (SELECT s.counter_id FROM summaries s JOIN runs r ON r.id = "
         "s.run_id WHERE r.project_id = :project)"},
        {"benchmark_counters",
         {"benchmark_id", "counter_id"},
         false,
         unbounded,
         "benchmark_id IN (SELECT id FROM benchmarks WHERE project_id = :project)"},
        {"runs", {"id"}, true, unbounded, "project_id = :project"},
        {"samples",
         {"run_id", "counter_id", "repetition"},
         false,
         unbounded,
         "run_id IN (SELECT id FROM runs WHERE project_id = :project)"},
        {"summaries",
         {"run_id", "counter_id"},
         false,
         unbounded,
         "run_id IN (SELECT id FROM runs WHERE project_id = :project)"},
        {"ingest_keys", {"project_id", "key"}, false, unbounded, "project_id = :project"},
        {"comparisons", {"id"}, true, 64, "project_id = :project"},
        {"comparison_artifacts",
         {"comparison_id", "kind", "benchmark"},
         false,
         4,
         "comparison_id IN (SELECT id FROM comparisons WHERE project_id = :project)"},
        {"acceptances",
         {"comparison_id"},
         false,
         unbounded,
         "comparison_id IN (SELECT id FROM comparisons WHERE project_id = :project)"},
        {"change_points",
         {"run_id", "counter_id"},
         false,
         unbounded,
         "run_id IN (SELECT id FROM runs WHERE project_id = :project)"},
        {"alerts", {"id"}, true, unbounded, "project_id = :project"},
        {"alert_culprits",
         {"alert_id"},
         false,
         unbounded,
         "alert_id IN (SELECT id FROM alerts WHERE project_id = :project)"},
        {"alert_culprit_commits",
         {"alert_id", "position"},
         false,
         unbounded,
         "alert_id IN (SELECT id FROM alerts WHERE project_id = :project)"},
        {"alert_culprit_effects",
         {"alert_id", "position", "ordinal"},
         false,
         unbounded,
         "alert_id IN (SELECT id FROM alerts WHERE project_id = :project)"},
        {"qualifications", {"id"}, true, unbounded, "project_id = :project"},
        {"qualification_counters",
         {"qualification_id", "counter"},
         false,
         unbounded,
         "qualification_id IN (SELECT id FROM qualifications WHERE project_id = :project)"},
    };
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
    auto st = c.prepare(c.pick({"SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
                                "ESCAPE '\\' AND name <> 'perfgate_copy_state' ORDER BY name",
                                "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                                "current_schema() AND table_type = 'BASE TABLE' AND table_name NOT IN "
                                "('perfgate_migrations', 'perfgate_copy_state') ORDER BY table_name"}));
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

table_digest digest_table(connection& c, std::string_view table)
{
    std::unique_ptr<EVP_MD_CTX, md_ctx_free> md(EVP_MD_CTX_new());
    if (!md || EVP_DigestInit_ex(md.get(), EVP_sha256(), nullptr) != 1) {
        throw error(errors::crypto_failed, "SHA-256 failed (OpenSSL EVP_DigestInit_ex)");
    }
    table_reader reader(c, table);
    const auto& cols = reader.layout().columns;
    // Columns by name: the engines' catalogues list columns that migrations
    // added in different orders.
    std::vector<std::size_t> order(cols.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cols[a].name < cols[b].name; });
    table_digest d;
    d.table = std::string(table);
    constexpr std::size_t digest_batch_rows = 1000;
    std::string text;
    for (;;) {
        auto b = reader.next(digest_batch_rows);
        if (b.rows.empty()) break;
        for (const auto& r : b.rows) {
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

} // namespace detail

} // namespace perfgate::store
