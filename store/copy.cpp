// `perfgate db copy`: a whole store from one database to another
// (store/copy.hpp says what and how), table by table in key order, one
// transaction per batch, then the id generators and the verification.
#include "store/copy.hpp"

#include "model/error.hpp"
#include "store/copy_tables.hpp"
#include "store/postgres.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
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

bool has_mark(connection& c)
{
    auto st = c.prepare(c.pick({"SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = :t",
                                "SELECT count(*) FROM information_schema.tables "
                                "WHERE table_schema = current_schema() AND table_name = :t"}));
    st.bind(":t", mark_table);
    st.step();
    return st.int64(0) > 0;
}

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

} // namespace perfgate::store
