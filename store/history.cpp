// A benchmark's series: the summaries of its counters over runs, newest
// last (store/history_sql.hpp holds the queries), and its counter lists.
#include "store/store.hpp"

#include "model/error.hpp"
#include "store/history_sql.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace perfgate::store {

using detail::connection;
using detail::statement;
using detail::to_int64;
using detail::transaction;

namespace {

// One row of history_sql.hpp's columns, from column `first` on; the
// testbed's id goes to testbed_id (named after the query). Not full: the
// medians variant's row (run_id, median, testbed_id; history_sql.hpp).
history_point history_point_of(const statement& st, int first, std::int64_t& testbed_id, bool full)
{
    history_point p;
    p.run_id = st.int64(first);
    if (!full) { // the medians variant's columns
        p.median = st.real(first + 1);
        testbed_id = st.int64(first + 2);
        return p;
    }
    p.median = st.real(first + 5);
    testbed_id = st.int64(first + 11);
    p.git_sha = st.text(first + 1);
    p.branch = st.text(first + 2);
    p.created_at = st.int64(first + 3);
    p.n = static_cast<std::size_t>(st.int64(first + 4));
    p.mean = st.real(first + 6);
    p.stddev = st.opt_real(first + 7);
    p.cov = st.opt_real(first + 8);
    p.min = st.opt_real(first + 9);
    p.max = st.opt_real(first + 10);
    p.role = st.text(first + 12);
    p.mainline = st.int64(first + 13) != 0;
    return p;
}

// A PostgreSQL array literal of texts: each element double-quoted, '"' and
// '\' escaped (PostgreSQL, 8.15.6 "Array Input and Output Syntax").
std::string text_array(const std::vector<std::string>& items)
{
    std::string out = "{";
    for (const auto& item : items) {
        if (out.size() > 1) out += ',';
        out += '"';
        for (const char ch : item) {
            if (ch == '"' || ch == '\\') out += '\\';
            out += ch;
        }
        out += '"';
    }
    return out + "}";
}

// The ids of counter names (nullopt: no such counter), through the cache;
// on PostgreSQL the names it does not know in one statement.
std::vector<std::optional<std::int64_t>> counter_ids_of(detail::id_cache& ids, connection& c,
                                                        const std::vector<std::string>& names)
{
    std::vector<std::optional<std::int64_t>> out(names.size());
    std::vector<std::string> unknown;
    for (std::size_t i = 0; i < names.size(); ++i) {
        out[i] = ids.find(detail::id_cache::kind::counter, names[i]);
        if (!out[i]) unknown.push_back(names[i]);
    }
    if (unknown.empty()) return out;
    if (c.kind() == detail::engine::sqlite) {
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (!out[i]) out[i] = detail::counter_id(ids, c, names[i], true);
        }
        return out;
    }
    auto st = c.prepare("SELECT name, id FROM counters WHERE name = ANY (:names::text[])");
    st.bind(":names", text_array(unknown));
    std::unordered_map<std::string, std::int64_t> found;
    while (st.step()) found.emplace(st.text(0), st.int64(1));
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (out[i]) continue;
        if (auto it = found.find(names[i]); it != found.end()) {
            out[i] = it->second;
            ids.put(detail::id_cache::kind::counter, names[i], it->second);
        }
    }
    return out;
}

// The covering index a history query reads, and the testbed id it binds.
struct history_plan {
    detail::history_index index = detail::history_index::all;
    std::optional<std::int64_t> testbed_id;
};

// Picks the covering index whose equality prefix the filters bind fully
// (see history_sql.hpp). A testbed name may cover several fingerprints
// (e.g. after a kernel update); then it is a residual filter. nullopt: the
// testbed filter matches no testbed, so every series is empty.
std::optional<history_plan> plan_history(connection& c, const history_query& q)
{
    history_plan plan;
    plan.index = q.branch ? detail::history_index::branch : detail::history_index::all;
    if (q.testbed && q.branch) {
        auto st = c.prepare("SELECT id FROM testbeds WHERE fingerprint = :testbed OR name = :testbed LIMIT 2");
        st.bind(":testbed", *q.testbed);
        std::vector<std::int64_t> ids;
        while (st.step()) ids.push_back(st.int64(0));
        if (ids.empty()) return std::nullopt;
        if (ids.size() == 1) {
            plan.index = detail::history_index::testbed;
            plan.testbed_id = ids.front();
        }
    }
    return plan;
}

// What the statements of one histories call bind and read.
struct history_request {
    const history_query& q;
    std::int64_t benchmark_id;
    history_plan plan;
    bool full; // history_detail::full, else the medians variant
};

// The points read per counter (newest first) and, parallel to them, the
// ids of their testbeds.
struct history_rows {
    std::vector<std::vector<history_point>>& points;
    std::vector<std::vector<std::int64_t>>& testbed_ids;
};

void bind_history_filters(statement& st, const history_request& r)
{
    const auto& q = r.q;
    st.bind(":benchmark_id", r.benchmark_id)
        .bind(":branch", q.branch)
        .bind(":testbed", q.testbed)
        .bind(":testbed_id", r.plan.testbed_id)
        .bind(":role", q.role)
        .bind(":mainline", q.mainline_only ? std::optional<std::int64_t>(1) : std::nullopt)
        .bind(":since", q.since.value_or(std::numeric_limits<std::int64_t>::min()))
        .bind(":before_run", q.before_run.value_or(std::numeric_limits<std::int64_t>::max()))
        .bind(":limit", to_int64(q.limit));
}

// SQLite: a statement is a function call here: one per counter.
void read_series_sqlite(connection& c, const history_request& r,
                        const std::vector<std::optional<std::int64_t>>& counter_ids, const history_rows& rows)
{
    auto st = c.prepare(detail::history_sql(r.plan.index, detail::engine::sqlite, !r.full));
    bind_history_filters(st, r);
    for (std::size_t i = 0; i < counter_ids.size(); ++i) {
        if (!counter_ids[i]) continue;
        st.bind(":counter_id", *counter_ids[i]);
        while (st.step()) {
            std::int64_t tb = 0;
            rows.points[i].push_back(history_point_of(st, 0, tb, r.full));
            rows.testbed_ids[i].push_back(tb);
        }
        st.reset();
    }
}

// PostgreSQL: every counter in one statement, a round trip saved per
// counter (history_sql.hpp, history_batch_sql).
void read_series_pg(connection& c, const history_request& r,
                    const std::vector<std::optional<std::int64_t>>& counter_ids, const history_rows& rows)
{
    std::string ids = "{";
    std::vector<std::size_t> slot; // array position -> index in counters
    for (std::size_t i = 0; i < counter_ids.size(); ++i) {
        if (!counter_ids[i]) continue;
        ids += fmt::format("{}{}", slot.empty() ? "" : ",", *counter_ids[i]);
        slot.push_back(i);
    }
    ids += '}';
    if (slot.empty()) return;
    auto st = c.prepare(detail::history_batch_sql(r.plan.index, !r.full));
    bind_history_filters(st, r);
    st.bind(":counter_ids", ids);
    while (st.step()) {
        const auto at = slot.at(static_cast<std::size_t>(st.int64(0) - 1)); // WITH ORDINALITY: 1-based
        std::int64_t tb = 0;
        rows.points[at].push_back(history_point_of(st, 1, tb, r.full));
        rows.testbed_ids[at].push_back(tb);
    }
}

// Names each point's testbed with one lookup per distinct testbed (a
// series spans a few at most; the names are cached) rather than a join,
// which would take the query off its covering index.
void name_testbeds(detail::id_cache& cache, connection& c, const history_rows& rows)
{
    struct testbed_names {
        std::string fingerprint, name;
    };
    std::unordered_map<std::int64_t, testbed_names> testbeds;
    for (std::size_t k = 0; k < rows.points.size(); ++k) {
        auto& points = rows.points[k];
        for (std::size_t i = 0; i < points.size(); ++i) {
            const std::int64_t id = rows.testbed_ids[k][i];
            auto [it, fresh] = testbeds.try_emplace(id);
            if (fresh) {
                if (auto known = cache.testbed(id)) {
                    it->second = {std::move(known->first), std::move(known->second)};
                } else {
                    auto tb = c.prepare("SELECT fingerprint, name FROM testbeds WHERE id = :id");
                    tb.bind(":id", id);
                    const bool found = tb.step();
                    PERFGATE_CHECK(found); // summaries.testbed_id is copied from runs.testbed_id, a foreign key
                    it->second = {tb.text(0), tb.text(1)};
                    cache.put_testbed(id, it->second.fingerprint, it->second.name);
                }
            }
            points[i].testbed = it->second.fingerprint;
            points[i].testbed_name = it->second.name;
        }
    }
}

} // namespace

std::vector<history_point> history::points(const history_query& q) const
{
    return std::move(points_per_counter(q, {q.counter}).front());
}

std::vector<std::vector<history_point>> history::points_per_counter(const history_query& q,
                                                                    const std::vector<std::string>& counters,
                                                                    history_detail detail) const
{
    const bool full = detail == history_detail::full;
    std::vector<std::vector<history_point>> out(counters.size());
    if (q.limit == 0 || counters.empty()) return out;

    impl::read_lease lease(*impl_);
    auto& c = *lease;
    transaction tx(c, transaction::kind::read);

    const auto benchmark_id = detail::benchmark_id(impl_->ids_, c, q.project, q.benchmark, true);
    if (!benchmark_id) return out;
    const std::vector<std::optional<std::int64_t>> counter_ids = counter_ids_of(impl_->ids_, c, counters);
    const auto plan = plan_history(c, q);
    if (!plan) return out;
    const history_request request{q, *benchmark_id, *plan, full};

    std::vector<std::vector<std::int64_t>> testbed_ids(counters.size()); // parallel to out
    const history_rows rows{out, testbed_ids};
    if (c.kind() == detail::engine::sqlite) read_series_sqlite(c, request, counter_ids, rows);
    else read_series_pg(c, request, counter_ids, rows);

    if (full) name_testbeds(impl_->ids_, c, rows);
    for (auto& points : out) std::reverse(points.begin(), points.end()); // the query reads newest first
    return out;
}

std::vector<benchmark_info> history::benchmarks(std::string_view project) const
{
    impl::read_lease lease(*impl_);
    auto& c = *lease;
    transaction tx(c, transaction::kind::read);
    std::vector<benchmark_info> out;
    std::vector<std::int64_t> ids;
    {
        auto st = c.prepare("SELECT b.id, b.name, b.runs, b.last_run_at FROM benchmarks b "
                            "JOIN projects p ON p.id = b.project_id WHERE p.name = :project ORDER BY b.name");
        st.bind(":project", project);
        while (st.step()) {
            ids.push_back(st.int64(0));
            out.push_back({st.text(1), {}, st.int64(2), st.int64(3)});
        }
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
        auto st = c.prepare("SELECT c.name FROM benchmark_counters bc JOIN counters c ON c.id = bc.counter_id "
                            "WHERE bc.benchmark_id = :benchmark_id ORDER BY c.name");
        st.bind(":benchmark_id", ids[i]);
        while (st.step()) out[i].counters.push_back(st.text(0));
    }
    tx.commit();
    return out;
}

} // namespace perfgate::store
