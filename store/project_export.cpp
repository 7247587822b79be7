// `perfgate db export` / `import`: one project as JSON lines
// (store/project_export.hpp; the format: docs/export-format.md).
#include "store/project_export.hpp"

#include "model/error.hpp"
#include "store/copy_tables.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <unordered_map>

namespace perfgate::store {

using detail::connection;
using detail::value_kind;
using ordered_json = nlohmann::ordered_json;

namespace {

ordered_json to_json(const detail::cell& v, value_kind kind, std::string_view table, std::string_view column)
{
    if (v.null) return nullptr;
    switch (kind) {
    case value_kind::integer: return v.i;
    case value_kind::real:
        if (!std::isfinite(v.r)) {
            throw error(errors::input_bad_export,
                        fmt::format("table '{}': column '{}': {} cannot be written as JSON", table, column, v.r));
        }
        return v.r;
    case value_kind::text: return v.s;
    }
    return nullptr;
}

struct import_state {
    std::string file;
    std::size_t line = 0;
    [[nodiscard]] std::string where() const { return fmt::format("{}:{}", file, line); }
    [[noreturn]] void bad(const std::string& what) const
    {
        throw error(errors::input_bad_export, fmt::format("{}: {}", where(), what));
    }
};

detail::cell from_json(const nlohmann::json& j, value_kind kind, const import_state& at, std::string_view table,
                       std::string_view column)
{
    detail::cell v;
    if (j.is_null()) return v;
    v.null = false;
    switch (kind) {
    case value_kind::integer:
        if (!j.is_number_integer()) at.bad(fmt::format("table '{}': column '{}': expected an integer", table, column));
        v.i = j.get<std::int64_t>();
        break;
    case value_kind::real:
        if (!j.is_number()) at.bad(fmt::format("table '{}': column '{}': expected a number", table, column));
        v.r = j.get<double>();
        break;
    case value_kind::text:
        if (!j.is_string()) at.bad(fmt::format("table '{}': column '{}': expected a string", table, column));
        v.s = j.get<std::string>();
        break;
    }
    return v;
}

std::optional<std::int64_t> id_where(connection& c, std::string_view table, std::string_view column,
                                     const detail::cell& value, value_kind kind)
{
    auto st = c.prepare(fmt::format("SELECT id FROM {} WHERE {} = :v", detail::sql_name(table),
                                    detail::sql_name(column)));
    if (kind == value_kind::text) st.bind(":v", std::string_view(value.s));
    else st.bind(":v", value.i);
    if (!st.step()) return std::nullopt;
    const auto id = st.int64(0);
    st.reset();
    return id;
}

bool id_taken(connection& c, std::string_view table, std::int64_t id)
{
    auto st = c.prepare(fmt::format("SELECT 1 FROM {} WHERE id = :id", detail::sql_name(table)));
    st.bind(":id", id);
    const bool taken = st.step();
    st.reset();
    return taken;
}

} // namespace

std::int64_t export_project(const std::string& db, std::string_view project, std::ostream& out)
{
    auto c = detail::open_copy_side(db);
    // One snapshot for all tables, so that a server writing meanwhile never
    // leaves a row naming one the file lacks.
    c->exec(c->pick({"BEGIN", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"}));
    const auto pid = detail::lookup_id(*c, "SELECT id FROM projects WHERE name = :name", {{":name", project}});
    if (!pid) {
        throw error(errors::store_not_found,
                    fmt::format("{}: project {} not found", c->path(), detail::shown_name(project)));
    }
    ordered_json header;
    header["format"] = export_format_name;
    header["version"] = export_format_version;
    header["project"] = project;
    header["exported_at"] = detail::unix_now();
    out << header.dump() << '\n';
    std::int64_t rows = 0;
    for (const auto t : copied_tables()) {
        detail::table_reader reader(*c, t, std::string(detail::project_rows(t)), *pid);
        const auto& cols = reader.layout().columns;
        constexpr std::size_t export_batch_rows = 1000;
        for (;;) {
            auto b = reader.next(export_batch_rows);
            if (b.rows.empty()) break;
            for (const auto& r : b.rows) {
                ordered_json line;
                line["table"] = t;
                ordered_json& values = line["row"];
                values = ordered_json::object();
                for (std::size_t i = 0; i < cols.size(); ++i)
                    values[cols[i].name] = to_json(r[i], cols[i].kind, t, cols[i].name);
                try {
                    out << line.dump() << '\n';
                } catch (const nlohmann::json::exception& e) {
                    throw error(errors::input_bad_export,
                                fmt::format("{}: table '{}': a row cannot be written as JSON: {}", c->path(), t,
                                            e.what()));
                }
                ++rows;
            }
        }
    }
    ordered_json end;
    end["end"]["rows"] = rows;
    out << end.dump() << '\n';
    c->exec("COMMIT");
    if (!out) throw error(errors::store_io, fmt::format("{}: writing the export failed", c->path()));
    return rows;
}

namespace {

// One import: the file read line by line, each row written in the target's
// transaction (import_project).
class importer {
public:
    importer(connection& c, const std::filesystem::path& file, const import_options& options)
        : c_(c), in_(file, std::ios::binary), options_(options)
    {
        at_.file = file.string();
        if (!in_) throw error(errors::input_bad_export, fmt::format("{}: cannot be read", at_.file));
    }

    import_result run()
    {
        std::map<std::string, std::int64_t, std::less<>> lowest;
        if (options_.renumber) {
            lowest = lowest_ids();
            in_.clear();
            in_.seekg(0);
            at_.line = 0;
        }
        read_header();
        detail::transaction tx(c_);
        // Renumbering: each project-owned table shifted past the target's ids
        // where its lowest id in the file is not.
        for (const auto& entry : lowest) ids_.set_shift(entry.first, detail::shift_past(c_, entry.first, entry.second));
        bool ended = false;
        while (next_line()) {
            if (ended) at_.bad("a line after the end line");
            const auto j = parse();
            if (j.contains("end")) {
                check_end(j["end"]);
                ended = true;
                continue;
            }
            import_row(j);
        }
        if (!ended) at_.bad("the file ends before its end line: it was cut short; nothing was imported");
        for (const auto t : detail::identity_tables()) detail::advance_generator(c_, t, detail::high_water(c_, t));
        tx.commit();
        for (auto& t : result_.tables) t.shift = ids_.shift(t.table);
        return result_;
    }

private:
    // The first pass of a renumbering import: each project-owned identity
    // table's lowest id in the file (the file is checked on the second).
    std::map<std::string, std::int64_t, std::less<>> lowest_ids()
    {
        std::map<std::string, std::int64_t, std::less<>> out;
        std::set<std::string, std::less<>> owned;
        for (const auto t : copied_tables()) {
            const auto layout = detail::layout_of(c_, t);
            if (layout.identity && layout.natural_key.empty()) owned.emplace(t);
        }
        if (!next_line()) return out;
        while (next_line()) {
            const auto j = parse();
            if (!j.contains("table") || !j["table"].is_string() || !j.contains("row") || !j["row"].is_object())
                continue;
            const auto table = j["table"].get<std::string>();
            const auto& row = j["row"];
            if (!row.contains("id") || !row["id"].is_number_integer()) continue;
            if (!owned.contains(table)) continue;
            const auto id = row["id"].get<std::int64_t>();
            auto it = out.find(table);
            if (it == out.end()) out.emplace(table, id);
            else it->second = std::min(it->second, id);
        }
        return out;
    }

    bool next_line()
    {
        if (!std::getline(in_, text_)) return false;
        ++at_.line;
        if (text_.size() > max_export_line_bytes) {
            at_.bad(fmt::format("line of {} bytes, longer than the limit of {}", text_.size(), max_export_line_bytes));
        }
        return true;
    }

    nlohmann::json parse() const
    {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text_);
        } catch (const nlohmann::json::parse_error& e) {
            at_.bad(fmt::format("not JSON: {}", e.what()));
        }
        if (!j.is_object()) at_.bad("expected a JSON object");
        return j;
    }

    void read_header()
    {
        if (!next_line()) at_.bad("empty file; expected a perfgate project export's header line");
        const auto header = parse();
        if (header.value("format", std::string()) != export_format_name || !header.contains("version") ||
            !header["version"].is_number_integer() || !header.contains("project") || !header["project"].is_string()) {
            at_.bad(fmt::format("not a perfgate project export: the first line must be "
                                "{{\"format\": \"{}\", \"version\": N, \"project\": NAME, ...}}",
                                export_format_name));
        }
        result_.format_version = header["version"].get<int>();
        result_.project = header["project"].get<std::string>();
        if (result_.format_version < 1 || result_.format_version > export_format_version) {
            at_.bad(fmt::format("format version {} is not one this perfgate reads (1 to {}); a newer perfgate "
                                "wrote it: import it with that one",
                                result_.format_version, export_format_version));
        }
        if (id_where(c_, "projects", "name", detail::cell{false, 0, 0, result_.project}, value_kind::text)) {
            throw error(errors::store_import_conflict,
                        fmt::format("{}: project {} exists already; perfgate db import adds a project that the "
                                    "store does not have",
                                    c_.path(), detail::shown_name(result_.project)));
        }
    }

    void check_end(const nlohmann::json& e) const
    {
        if (!e.is_object() || !e.contains("rows") || !e["rows"].is_number_integer()) {
            at_.bad("the end line must be {\"end\": {\"rows\": N}}");
        }
        if (e["rows"].get<std::int64_t>() != result_.rows) {
            at_.bad(fmt::format("the end line counts {} rows, the file holds {}", e["rows"].get<std::int64_t>(),
                                result_.rows));
        }
    }

    // The layout of a line's table, checked to come in copy order.
    const detail::table_layout& layout_for(const nlohmann::json& j)
    {
        if (!j.contains("table") || !j["table"].is_string() || !j.contains("row") || !j["row"].is_object()) {
            at_.bad("expected {\"table\": T, \"row\": {...}} or the end line");
        }
        const auto table = j["table"].get<std::string>();
        const auto& order = copied_tables();
        const auto pos = std::find(order.begin(), order.end(), table);
        if (pos == order.end()) at_.bad(fmt::format("table {} is not in this schema", detail::shown_name(table)));
        const auto index = static_cast<std::size_t>(pos - order.begin());
        if (index < position_) {
            at_.bad(fmt::format("table '{}' after '{}': rows come in the order of the tables they refer to", table,
                                order[position_]));
        }
        position_ = index;
        auto it = layouts_.find(table);
        if (it == layouts_.end()) {
            it = layouts_.emplace(table, detail::layout_of(c_, table)).first;
            writers_.emplace(table, std::make_unique<detail::table_writer>(c_, it->second));
        }
        return it->second;
    }

    // The row's values in the layout's column order (given: in the file; a
    // column the file lacks, from an older format version, keeps its
    // default), as the file has them.
    detail::row values_of(const detail::table_layout& layout, const nlohmann::json& values, std::vector<bool>& given)
    {
        for (const auto& item : values.items()) {
            const std::string& name = item.key();
            const bool known = std::any_of(layout.columns.begin(), layout.columns.end(),
                                           [&](const detail::column_info& col) { return col.name == name; });
            if (!known) at_.bad(fmt::format("table '{}' has no column {}", layout.table, detail::shown_name(name)));
        }
        detail::row r(layout.columns.size());
        given.assign(layout.columns.size(), false);
        for (std::size_t i = 0; i < layout.columns.size(); ++i) {
            const auto& col = layout.columns[i];
            if (!values.contains(col.name)) continue;
            given[i] = true;
            r[i] = from_json(values[col.name], col.kind, at_, layout.table, col.name);
        }
        return r;
    }

    // A testbed or counter: the target's row of the same natural key, else
    // this one under its id (a new one when that is taken). false: the
    // target has it, nothing to insert.
    bool place_shared(const detail::table_layout& layout, detail::row& r, const std::vector<bool>& given)
    {
        const std::size_t id_col = layout.key.front();
        const auto nk = std::find_if(layout.columns.begin(), layout.columns.end(),
                                     [&](const detail::column_info& col) { return col.name == layout.natural_key; });
        const auto nk_index = static_cast<std::size_t>(nk - layout.columns.begin());
        if (nk == layout.columns.end() || !given[nk_index] || r[nk_index].null) {
            at_.bad(fmt::format("table '{}': the row has no {}", layout.table, layout.natural_key));
        }
        const std::int64_t id = r[id_col].i;
        if (auto there = id_where(c_, layout.table, layout.natural_key, r[nk_index], nk->kind)) {
            ids_.set(layout.table, id, *there);
            note_id(layout.table, id, *there);
            return false;
        }
        if (id_taken(c_, layout.table, id)) r[id_col].i = detail::high_water(c_, layout.table) + 1;
        ids_.set(layout.table, id, r[id_col].i);
        note_id(layout.table, id, r[id_col].i);
        return true;
    }

    // An identity row that came in: the summary's counts and the change.
    void note_id(std::string_view table, std::int64_t from, std::int64_t to)
    {
        const auto name = *std::find(copied_tables().begin(), copied_tables().end(), table);
        if (result_.tables.empty() || result_.tables.back().table != name) {
            result_.tables.push_back({std::string(name), 0, 0, 0});
        }
        ++result_.tables.back().rows;
        if (from != to) {
            ++result_.tables.back().changed;
            result_.changes.push_back({name, from, to});
        }
    }

    void import_row(const nlohmann::json& j)
    {
        const auto& layout = layout_for(j);
        std::vector<bool> given;
        auto r = values_of(layout, j["row"], given);
        ++result_.rows;
        const std::size_t id_col = layout.key.front();
        if (layout.identity) {
            if (!given[id_col] || r[id_col].null) at_.bad(fmt::format("table '{}': the row has no id", layout.table));
            if (!layout.natural_key.empty()) {
                if (!place_shared(layout, r, given)) return;
                writers_.at(layout.table)->insert_given(r, given);
                return;
            }
        }
        const std::int64_t from = layout.identity ? r[id_col].i : 0;
        if (const auto bad = ids_.apply(layout, r)) at_.bad(fmt::format("table '{}': {}", layout.table, *bad));
        if (layout.identity) {
            if (id_taken(c_, layout.table, r[id_col].i)) {
                throw error(errors::store_import_conflict,
                            fmt::format("{}: {}: table '{}' has a row with id {} already; perfgate db import keeps "
                                        "the project's ids (links and reports name them), so without --renumber it "
                                        "imports only into a store where they are free (an empty one, or a new "
                                        "file). Nothing was imported",
                                        c_.path(), at_.where(), layout.table, r[id_col].i));
            }
            note_id(layout.table, from, r[id_col].i);
        }
        writers_.at(layout.table)->insert_given(r, given);
    }

    connection& c_;
    std::ifstream in_;
    import_options options_;
    import_state at_;
    std::string text_;
    import_result result_;
    std::size_t position_ = 0; // tables come in copy order
    std::map<std::string, detail::table_layout, std::less<>> layouts_;
    std::map<std::string, std::unique_ptr<detail::table_writer>, std::less<>> writers_;
    // The file's ids -> the target's (shifts: renumbering only).
    detail::id_map ids_;
};

} // namespace

import_result import_project(const std::string& db, const std::filesystem::path& file, const import_options& options)
{
    auto c = detail::open_copy_side(db);
    if (options.renumber) {
        const auto unlisted = detail::unlisted_references(*c);
        if (!unlisted.empty()) {
            throw error(errors::store_copy_unknown_table,
                        fmt::format("{}: column(s) {} name rows but are not in perfgate db copy's list "
                                    "(store/copy_tables.cpp): renumbering would leave them pointing at other rows; "
                                    "nothing was imported",
                                    c->path(), fmt::join(unlisted, ", ")));
        }
    }
    importer imp(*c, file, options);
    return imp.run();
}

} // namespace perfgate::store
