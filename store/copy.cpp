// `perfgate db copy`: a whole store from one database to another
// (store/copy.hpp says what and how), table by table in key order, one
// transaction per batch, then the id generators and the verification.
#include "store/copy.hpp"

#include "model/error.hpp"
#include "store/copy_tables.hpp"
#include "store/postgres.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace perfgate::store {

using detail::connection;
using detail::transaction;

namespace {

// The copy's mark on its target (copy.hpp, "Resuming").
constexpr std::string_view mark_table = "perfgate_copy_state";

// Tests only: the copy fails after this many committed batches, as a copy
// killed mid-way would stop (tests/test_db_copy.cpp).
constexpr const char* fail_after_env = "PERFGATE_TEST_COPY_FAIL_AFTER_BATCHES";

// A merge's mark (copy.hpp, "Merging"): the source, each table's shift and
// progress, the shared rows' mapping.
constexpr std::string_view merge_mark_table = "perfgate_merge_state";

bool has_table(connection& c, std::string_view table)
{
    auto st = c.prepare(c.pick({"SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = :t",
                                "SELECT count(*) FROM information_schema.tables "
                                "WHERE table_schema = current_schema() AND table_name = :t"}));
    st.bind(":t", table);
    st.step();
    const bool present = st.int64(0) > 0;
    st.reset();
    return present;
}

bool has_mark(connection& c) { return has_table(c, mark_table); }

std::string mark_source(connection& c)
{
    auto st = c.prepare("SELECT source FROM perfgate_copy_state");
    return st.step() ? st.text(0) : std::string();
}

bool table_empty(connection& c, std::string_view table)
{
    auto st = c.prepare(fmt::format("SELECT 1 FROM {} LIMIT 1", detail::sql_name(table)));
    const bool any = st.step();
    st.reset();
    return !any;
}

// The tables of the schema on both sides are the ones this copy knows.
void check_tables(connection& c)
{
    const auto& known = copied_tables();
    const std::set<std::string_view> listed(known.begin(), known.end());
    std::vector<std::string> unknown, missing;
    const auto present = detail::schema_tables(c);
    for (const auto& t : present) {
        if (!listed.contains(t)) unknown.push_back(t);
    }
    for (const auto t : known) {
        if (std::find(present.begin(), present.end(), t) == present.end()) missing.emplace_back(t);
    }
    if (!unknown.empty()) {
        throw error(errors::store_copy_unknown_table,
                    fmt::format("{}: table(s) {} are not in perfgate db copy's list (store/copy_tables.cpp): "
                                "this perfgate would leave them behind, so it copies nothing",
                                c.path(), fmt::join(unknown, ", ")));
    }
    if (!missing.empty()) {
        throw error(errors::store_copy_unknown_table,
                    fmt::format("{}: table(s) {} of perfgate db copy's list are not in the schema", c.path(),
                                fmt::join(missing, ", ")));
    }
}

// Every column that names a row is in the list (renumbering maps them all).
void check_references(connection& c)
{
    const auto unlisted = detail::unlisted_references(c);
    if (!unlisted.empty()) {
        throw error(errors::store_copy_unknown_table,
                    fmt::format("{}: column(s) {} name rows but are not in perfgate db copy's list "
                                "(store/copy_tables.cpp): renumbering would leave them pointing at other rows, so "
                                "nothing was written",
                                c.path(), fmt::join(unlisted, ", ")));
    }
}

std::size_t fail_after_batches()
{
    const char* v = std::getenv(fail_after_env); // NOLINT(concurrency-mt-unsafe): read once, tests only
    if (v == nullptr || *v == '\0') return 0;
    return static_cast<std::size_t>(std::strtoull(v, nullptr, 10));
}

} // namespace

std::vector<std::string> schema_tables(const std::string& db)
{
    auto c = detail::open_copy_side(db);
    return detail::schema_tables(*c);
}

std::vector<std::string> unlisted_references(const std::string& db)
{
    auto c = detail::open_copy_side(db);
    return detail::unlisted_references(*c);
}

std::vector<table_digest> digest_tables(const std::string& db)
{
    auto c = detail::open_copy_side(db);
    std::vector<table_digest> out;
    for (const auto t : copied_tables()) out.push_back(detail::digest_table(*c, t));
    return out;
}

namespace {

// Whether to is an unfinished copy of source_name (resume), after checking
// that it is that or empty; an empty target gets the mark.
bool claim_target(connection& dst, const std::string& source_name)
{
    if (has_table(dst, merge_mark_table)) {
        throw error(errors::store_copy_target_not_empty,
                    fmt::format("{}: holds an unfinished merge (perfgate db copy --merge): rerun that merge to "
                                "finish it",
                                dst.path()));
    }
    if (has_mark(dst)) {
        const std::string marked = mark_source(dst);
        if (marked != source_name) {
            throw error(errors::store_copy_target_not_empty,
                        fmt::format("{}: holds an unfinished copy of {}, not of {}: rerun that copy to finish it, "
                                    "or start again on an empty database",
                                    dst.path(), marked, source_name));
        }
        return true;
    }
    std::vector<std::string> filled;
    for (const auto t : copied_tables()) {
        if (!table_empty(dst, t)) filled.emplace_back(t);
    }
    if (!filled.empty()) {
        throw error(errors::store_copy_target_not_empty,
                    fmt::format("{}: is not empty (rows in {}); perfgate db copy writes only into an empty "
                                "database (a new file, or a new PostgreSQL database after perfgate db migrate); "
                                "nothing was written. To add one project to a store that has others: "
                                "perfgate db export / import",
                                dst.path(), fmt::join(filled, ", ")));
    }
    transaction tx(dst);
    dst.exec("CREATE TABLE perfgate_copy_state (source TEXT NOT NULL, started_at BIGINT NOT NULL)");
    auto st = dst.prepare("INSERT INTO perfgate_copy_state (source, started_at) VALUES (:source, :now)");
    st.bind(":source", source_name).bind(":now", detail::unix_now());
    st.run();
    tx.commit();
    return false;
}

// Every table, batch by batch; a resumed copy continues each table after
// the greatest key the target has (what an interrupted run committed is a
// prefix in key order).
void copy_rows(connection& src, connection& dst, const copy_options& options, copy_result& result)
{
    const std::size_t fail_after = fail_after_batches();
    std::size_t batches = 0;
    for (const auto t : copied_tables()) {
        detail::table_reader reader(src, t);
        std::int64_t rows_there = 0;
        if (result.resumed) {
            rows_there = detail::count_rows(dst, t);
            reader.start_after(detail::last_key(dst, reader.layout()));
        }
        detail::table_writer writer(dst, reader.layout());
        for (;;) {
            auto batch = reader.next(options.batch_rows);
            if (batch.rows.empty()) break;
            transaction tx(dst);
            writer.insert_all(batch.rows);
            tx.commit();
            result.rows_copied += detail::to_int64(batch.rows.size());
            result.bytes_copied += batch.bytes;
            rows_there += detail::to_int64(batch.rows.size());
            if (options.on_batch) options.on_batch(t, rows_there);
            if (fail_after != 0 && ++batches >= fail_after) {
                throw error(errors::store_io, fmt::format("{}: copy stopped after {} batches ({}, tests only)",
                                                          dst.path(), batches, fail_after_env));
            }
        }
    }
    transaction tx(dst);
    for (const auto t : detail::identity_tables()) detail::advance_generator(dst, t, detail::high_water(src, t));
    tx.commit();
}

// Every table's rows and digest on both sides, equal, else
// "store.copy_mismatch" naming the tables.
std::vector<table_digest> verify(connection& src, connection& dst, const std::string& source_name)
{
    std::vector<table_digest> verified;
    std::vector<std::string> differ;
    for (const auto t : copied_tables()) {
        auto a = detail::digest_table(src, t);
        auto b = detail::digest_table(dst, t);
        if (a.rows != b.rows || a.sha256 != b.sha256) {
            differ.push_back(fmt::format("{} ({} rows, {} there)", t, a.rows, b.rows));
        }
        verified.push_back(std::move(a));
    }
    if (!differ.empty()) {
        throw error(errors::store_copy_mismatch,
                    fmt::format("{}: the copy differs from {} in {}: was the source written during the copy? "
                                "Rerun the same command (stop the source's servers first) to finish and verify again",
                                dst.path(), source_name, fmt::join(differ, ", ")));
    }
    return verified;
}

} // namespace

copy_result copy_store(const std::string& from, const std::string& to, const copy_options& options)
{
    if (shown_location(from) == shown_location(to) ||
        (!is_postgres(from) && !is_postgres(to) &&
         std::filesystem::weakly_canonical(from) == std::filesystem::weakly_canonical(to))) {
        throw error(errors::usage_conflict,
                    fmt::format("perfgate db copy: --from and --to name the same database ({})", shown_location(to)));
    }
    auto src = detail::open_copy_side(from);
    auto dst = detail::open_copy_side(to);
    check_tables(*src);
    check_tables(*dst);
    const std::string source_name = shown_location(from);
    copy_result result;
    result.resumed = claim_target(*dst, source_name);
    copy_rows(*src, *dst, options, result);
    result.verified = verify(*src, *dst, source_name);
    transaction tx(*dst);
    dst->exec("DROP TABLE perfgate_copy_state");
    tx.commit();
    return result;
}

namespace {

using detail::id_map;
using detail::row;
using detail::table_layout;

// A key as the merge's mark keeps it: a JSON array of its values.
std::string encode_key(const table_layout& layout, const row& key)
{
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t k = 0; k < key.size(); ++k) {
        const auto& v = key[k];
        if (v.null) out.push_back(nullptr);
        else if (layout.columns[layout.key[k]].kind == detail::value_kind::integer) out.push_back(v.i);
        else if (layout.columns[layout.key[k]].kind == detail::value_kind::real) out.push_back(v.r);
        else out.push_back(v.s);
    }
    return out.dump();
}

row decode_key(const table_layout& layout, const std::string& text)
{
    const auto j = nlohmann::json::parse(text);
    row key;
    for (std::size_t k = 0; k < layout.key.size(); ++k) {
        detail::cell v;
        if (!j.at(k).is_null()) {
            v.null = false;
            switch (layout.columns[layout.key[k]].kind) {
            case detail::value_kind::integer: v.i = j.at(k).get<std::int64_t>(); break;
            case detail::value_kind::real: v.r = j.at(k).get<double>(); break;
            case detail::value_kind::text: v.s = j.at(k).get<std::string>(); break;
            }
        }
        key.push_back(std::move(v));
    }
    return key;
}

std::vector<std::pair<std::int64_t, std::string>> projects_of(connection& c)
{
    auto st = c.prepare("SELECT id, name FROM projects ORDER BY id");
    std::vector<std::pair<std::int64_t, std::string>> out;
    while (st.step()) out.emplace_back(st.int64(0), st.text(1));
    return out;
}

bool shared_table(std::string_view table) { return table == "testbeds" || table == "counters"; }

// The merge's state on its target: the ids' mapping and where each table
// resumes (the source key merged last).
struct merge_state {
    bool resumed = false;
    id_map ids;
    std::map<std::string, std::string, std::less<>> last_key;
};

// Checks the target (no unfinished copy, no other source's merge, no project
// name of the source), then marks it and fixes the shifts; or reads the mark
// of an unfinished merge of this source.
merge_state claim_merge_target(connection& src, connection& dst, const std::string& source_name)
{
    merge_state state;
    if (has_mark(dst)) {
        throw error(errors::store_import_conflict,
                    fmt::format("{}: holds an unfinished copy of {}: finish that copy first", dst.path(),
                                mark_source(dst)));
    }
    if (has_table(dst, merge_mark_table)) {
        auto st = dst.prepare("SELECT source FROM perfgate_merge_state");
        const std::string marked = st.step() ? st.text(0) : std::string();
        st.reset();
        if (marked != source_name) {
            throw error(errors::store_import_conflict,
                        fmt::format("{}: holds an unfinished merge of {}, not of {}: rerun that merge to finish it",
                                    dst.path(), marked, source_name));
        }
        state.resumed = true;
        auto tables = dst.prepare("SELECT tbl, shift, last_key FROM perfgate_merge_tables");
        while (tables.step()) {
            state.ids.set_shift(tables.text(0), tables.int64(1));
            if (!tables.is_null(2)) state.last_key[tables.text(0)] = tables.text(2);
        }
        auto ids = dst.prepare("SELECT tbl, old_id, new_id FROM perfgate_merge_ids");
        while (ids.step()) state.ids.set(ids.text(0), ids.int64(1), ids.int64(2));
        return state;
    }
    std::vector<std::string> both;
    const auto theirs = projects_of(dst);
    for (const auto& p : projects_of(src)) {
        const bool taken = std::any_of(theirs.begin(), theirs.end(),
                                       [&](const auto& t) { return t.second == p.second; });
        if (taken) both.push_back(detail::shown_name(p.second));
    }
    if (!both.empty()) {
        throw error(errors::store_import_conflict,
                    fmt::format("{}: has project(s) {} already, as {} does: perfgate db copy --merge adds projects "
                                "and never mixes two of the same name (move the source's other projects one by "
                                "one: perfgate db export, then perfgate db import --renumber); nothing was written",
                                dst.path(), fmt::join(both, ", "), source_name));
    }
    transaction tx(dst);
    dst.exec("CREATE TABLE perfgate_merge_state (source TEXT NOT NULL, started_at BIGINT NOT NULL)");
    dst.exec("CREATE TABLE perfgate_merge_tables (tbl TEXT PRIMARY KEY, shift BIGINT NOT NULL, last_key TEXT)");
    dst.exec("CREATE TABLE perfgate_merge_ids (tbl TEXT NOT NULL, old_id BIGINT NOT NULL, new_id BIGINT NOT NULL, "
             "PRIMARY KEY (tbl, old_id))");
    auto mark = dst.prepare("INSERT INTO perfgate_merge_state (source, started_at) VALUES (:source, :now)");
    mark.bind(":source", source_name).bind(":now", detail::unix_now());
    mark.run();
    for (const auto t : copied_tables()) {
        std::int64_t shift = 0;
        const auto layout = detail::layout_of(src, t);
        if (layout.identity && layout.natural_key.empty()) {
            auto st = src.prepare(fmt::format("SELECT min(id) FROM {}", detail::sql_name(t)));
            st.step();
            if (!st.is_null(0)) shift = detail::shift_past(dst, t, st.int64(0));
            st.reset();
        }
        state.ids.set_shift(t, shift);
        auto ins = dst.prepare("INSERT INTO perfgate_merge_tables (tbl, shift) VALUES (:t, :shift)");
        ins.bind(":t", t).bind(":shift", shift);
        ins.run();
    }
    tx.commit();
    return state;
}

// A shared row (testbed, counter): the target's of the same natural key, or
// this one under its id if free, else a new one; the mapping is kept in the
// mark (same transaction). true: insert r (its id set).
bool place_shared_row(connection& dst, const table_layout& layout, row& r, id_map& ids)
{
    const std::size_t id_col = layout.key.front();
    std::size_t nk = 0;
    while (layout.columns[nk].name != layout.natural_key) ++nk;
    const std::int64_t from = r[id_col].i;
    std::optional<std::int64_t> to;
    {
        auto st = dst.prepare(fmt::format("SELECT id FROM {} WHERE {} = :v", detail::sql_name(layout.table),
                                          detail::sql_name(layout.natural_key)));
        st.bind(":v", std::string_view(r[nk].s));
        if (st.step()) to = st.int64(0);
        st.reset();
    }
    bool insert = false;
    if (!to) {
        auto st = dst.prepare(fmt::format("SELECT 1 FROM {} WHERE id = :id", detail::sql_name(layout.table)));
        st.bind(":id", from);
        const bool taken = st.step();
        st.reset();
        to = taken ? detail::high_water(dst, layout.table) + 1 : from;
        r[id_col].i = *to;
        insert = true;
    }
    ids.set(layout.table, from, *to);
    auto keep = dst.prepare("INSERT INTO perfgate_merge_ids (tbl, old_id, new_id) VALUES (:t, :from, :to)");
    keep.bind(":t", layout.table).bind(":from", from).bind(":to", *to);
    keep.run();
    return insert;
}

void merge_rows(connection& src, connection& dst, const copy_options& options, merge_state& state, merge_result& result)
{
    const std::size_t fail_after = fail_after_batches();
    std::size_t batches = 0;
    for (const auto t : copied_tables()) {
        detail::table_reader reader(src, t);
        const auto& layout = reader.layout();
        if (const auto it = state.last_key.find(t); it != state.last_key.end()) {
            reader.start_after(decode_key(layout, it->second));
        }
        detail::table_writer writer(dst, layout);
        std::int64_t rows_done = 0;
        for (;;) {
            auto batch = reader.next(options.batch_rows);
            if (batch.rows.empty()) break;
            row last_key;
            for (const auto k : layout.key) last_key.push_back(batch.rows.back()[k]);
            transaction tx(dst);
            std::vector<row> out;
            out.reserve(batch.rows.size());
            for (auto& r : batch.rows) {
                if (!layout.natural_key.empty()) {
                    if (place_shared_row(dst, layout, r, state.ids)) writer.insert(r);
                    continue;
                }
                if (const auto bad = state.ids.apply(layout, r)) {
                    throw error(errors::store_copy_mismatch,
                                fmt::format("{}: table '{}': {}", src.path(), layout.table, *bad));
                }
                out.push_back(std::move(r));
            }
            writer.insert_all(out);
            auto progress = dst.prepare("UPDATE perfgate_merge_tables SET last_key = :k WHERE tbl = :t");
            progress.bind(":k", encode_key(layout, last_key)).bind(":t", t);
            progress.run();
            tx.commit();
            result.rows_copied += detail::to_int64(batch.rows.size());
            result.bytes_copied += batch.bytes;
            rows_done += detail::to_int64(batch.rows.size());
            if (options.on_batch) options.on_batch(t, rows_done);
            if (fail_after != 0 && ++batches >= fail_after) {
                throw error(errors::store_io, fmt::format("{}: merge stopped after {} batches ({}, tests only)",
                                                          dst.path(), batches, fail_after_env));
            }
        }
    }
    // Ids handed out on the target from now on come after the merged ones.
    transaction tx(dst);
    for (const auto t : detail::identity_tables()) {
        const std::int64_t src_hw = detail::high_water(src, t);
        std::int64_t hw = detail::high_water(dst, t);
        if (!shared_table(t) && src_hw > 0) hw = std::max(hw, src_hw + state.ids.shift(t));
        detail::advance_generator(dst, t, hw);
    }
    tx.commit();
}

// Per merged project and table: the source's rows with ids mapped and the
// target's, counted and digested (unordered); testbeds and counters counted.
std::vector<table_digest> verify_merge(connection& src, connection& dst, const id_map& ids,
                                       const std::string& source_name)
{
    std::vector<table_digest> verified;
    std::vector<std::string> differ;
    for (const auto& p : projects_of(src)) {
        const std::int64_t theirs = *ids.find("projects", p.first);
        for (const auto t : copied_tables()) {
            const std::string filter(detail::project_rows(t));
            detail::table_reader a(src, t, filter, p.first);
            detail::table_reader b(dst, t, filter, theirs);
            detail::unordered_digest da(a.layout());
            detail::unordered_digest db(b.layout());
            constexpr std::size_t verify_batch_rows = 1000;
            for (;;) {
                auto batch = a.next(verify_batch_rows);
                if (batch.rows.empty()) break;
                for (auto& r : batch.rows) {
                    if (const auto bad = ids.apply(a.layout(), r)) {
                        throw error(errors::store_copy_mismatch,
                                    fmt::format("{}: table '{}': {}", src.path(), t, *bad));
                    }
                    da.add(r);
                }
            }
            for (;;) {
                auto batch = b.next(verify_batch_rows);
                if (batch.rows.empty()) break;
                for (const auto& r : batch.rows) db.add(r);
            }
            const std::string name = fmt::format("{}/{}", p.second, t);
            auto x = da.result(name);
            auto y = db.result(name);
            if (shared_table(t)) x.sha256 = y.sha256 = "(rows counted: the target's own rows are kept)";
            if (x.rows != y.rows || x.sha256 != y.sha256) {
                differ.push_back(fmt::format("{} ({} rows, {} there)", name, x.rows, y.rows));
            }
            verified.push_back(std::move(y));
        }
    }
    if (!differ.empty()) {
        throw error(errors::store_copy_mismatch,
                    fmt::format("{}: the merge differs from {} in {}: was the source written during the merge? "
                                "Rerun the same command (stop the source's servers first) to finish and verify again",
                                dst.path(), source_name, fmt::join(differ, ", ")));
    }
    return verified;
}

// The ids that changed, per identity table, for the summary and --id-map.
void list_changes(connection& src, const id_map& ids, merge_result& result)
{
    for (const auto t : detail::identity_tables()) {
        renumbered_table summary;
        summary.table = std::string(t);
        summary.shift = ids.shift(t);
        auto st = src.prepare(fmt::format("SELECT id FROM {} ORDER BY id", detail::sql_name(t)));
        while (st.step()) {
            const std::int64_t from = st.int64(0);
            const auto to = ids.find(t, from);
            ++summary.rows;
            if (to && *to != from) {
                ++summary.changed;
                result.changes.push_back({t, from, *to});
            }
        }
        result.tables.push_back(std::move(summary));
    }
}

} // namespace

merge_result merge_store(const std::string& from, const std::string& to, const copy_options& options)
{
    if (shown_location(from) == shown_location(to) ||
        (!is_postgres(from) && !is_postgres(to) &&
         std::filesystem::weakly_canonical(from) == std::filesystem::weakly_canonical(to))) {
        throw error(errors::usage_conflict, fmt::format("perfgate db copy --merge: --from and --to name the same "
                                                        "database ({})",
                                                        shown_location(to)));
    }
    auto src = detail::open_copy_side(from);
    auto dst = detail::open_copy_side(to);
    check_tables(*src);
    check_tables(*dst);
    check_references(*src);
    check_references(*dst);
    const std::string source_name = shown_location(from);
    merge_result result;
    auto state = claim_merge_target(*src, *dst, source_name);
    result.resumed = state.resumed;
    merge_rows(*src, *dst, options, state, result);
    result.verified = verify_merge(*src, *dst, state.ids, source_name);
    for (const auto& p : projects_of(*src)) result.projects.push_back(p.second);
    list_changes(*src, state.ids, result);
    transaction tx(*dst);
    dst->exec("DROP TABLE perfgate_merge_ids");
    dst->exec("DROP TABLE perfgate_merge_tables");
    dst->exec("DROP TABLE perfgate_merge_state");
    tx.commit();
    return result;
}

} // namespace perfgate::store
