// Project settings, change points and alerts (store/migrations/004_alerts.sql).
#include "store/listing_sql.hpp"
#include "store/store.hpp"
#include "store/store_impl.hpp"

#include "model/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace perfgate::store {

using detail::connection;
using detail::lookup_id;
using detail::shown_name;
using detail::statement;
using detail::to_int64;
using detail::transaction;
using detail::unix_now;

namespace {

// The ids a series names, resolved on one connection. nullopt members: the
// name is unknown.
struct series_ids {
    std::optional<std::int64_t> project, benchmark, counter, testbed;
};

series_ids resolve(connection& c, std::string_view project, const model::series_key& s)
{
    series_ids ids;
    ids.project = lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}});
    if (!ids.project) return ids;
    if (!s.benchmark.empty()) {
        auto st = c.prepare("SELECT id FROM benchmarks WHERE project_id = :project_id AND name = :name");
        st.bind(":project_id", *ids.project).bind(":name", s.benchmark);
        if (st.step()) ids.benchmark = st.int64(0);
    }
    if (!s.counter.empty())
        ids.counter = lookup_id(c, "SELECT id FROM counters WHERE name = :name", {{":name", s.counter}});
    if (!s.testbed.empty()) {
        ids.testbed = lookup_id(c, "SELECT id FROM testbeds WHERE fingerprint = :fp", {{":fp", s.testbed}});
    }
    return ids;
}

// The columns both tables share, in this order, from column `first` on:
// p_value, mean_before, mean_after, median_before, median_after, delta_pct,
// shift, shift_lower, shift_upper.
void read_numbers(const statement& st, int first, model::change_point_record& r)
{
    r.p_value = st.real(first);
    r.mean_before = st.real(first + 1);
    r.mean_after = st.real(first + 2);
    r.median_before = st.real(first + 3);
    r.median_after = st.real(first + 4);
    r.delta_pct = st.opt_real(first + 5);
    r.shift = st.real(first + 6);
    r.shift_lower = st.real(first + 7);
    r.shift_upper = st.real(first + 8);
}

void bind_numbers(statement& st, const model::change_point_record& r)
{
    st.bind(":p_value", r.p_value)
        .bind(":mean_before", r.mean_before)
        .bind(":mean_after", r.mean_after)
        .bind(":median_before", r.median_before)
        .bind(":median_after", r.median_after)
        .bind(":delta_pct", r.delta_pct)
        .bind(":shift", r.shift)
        .bind(":shift_lower", r.shift_lower)
        .bind(":shift_upper", r.shift_upper);
}

#define PERFGATE_NUMBERS \
    "p_value, mean_before, mean_after, median_before, median_after, delta_pct, shift, shift_lower, shift_upper"
#define PERFGATE_NUMBER_PARAMS \
    ":p_value, :mean_before, :mean_after, :median_before, :median_after, :delta_pct, :shift, " \
    ":shift_lower, :shift_upper"

using detail::alert_select;

model::alert read_alert(const statement& st)
{
    model::alert a;
    a.id = st.int64(0);
    a.project = st.text(1);
    a.change.series = {st.text(2), st.text(3), st.text(4), st.text(5)};
    a.change.run_id = st.int64(6);
    a.status = model::parse_alert_status(st.text(7)).value_or(model::alert_status::untriaged);
    read_numbers(st, 8, a.change);
    a.change.git_sha = st.text(17);
    a.change.created_at = st.int64(18);
    a.note = st.text(19);
    a.changed_by = st.text(20);
    a.changed_at = st.int64(21);
    a.created_at = st.int64(22);
    a.updated_at = st.int64(23);
    return a;
}

// The stored culprits (020_alert_culprits.sql) of the alerts `ids`, which
// the caller read from one project, by alert id: one range of each table's
// key over [min, max] of ids, the few rows of other alerts skipped.
std::unordered_map<std::int64_t, model::alert_culprit> culprits_of(connection& c, const std::vector<std::int64_t>& ids)
{
    std::unordered_map<std::int64_t, model::alert_culprit> out;
    if (ids.empty()) return out;
    const auto range = std::minmax_element(ids.begin(), ids.end());
    const std::int64_t lo = *range.first, hi = *range.second;
    const std::unordered_set<std::int64_t> wanted(ids.begin(), ids.end());
    auto st = c.prepare("SELECT alert_id, status, backend, counter, good_sha, bad_sha, commits, steps, builds, detail, "
                        "stored_at, token_id, token_name FROM alert_culprits "
                        "WHERE alert_id >= :lo AND alert_id <= :hi");
    st.bind(":lo", lo).bind(":hi", hi);
    while (st.step()) {
        const auto id = st.int64(0);
        if (!wanted.contains(id)) continue;
        model::alert_culprit k;
        k.status = model::parse_culprit_status(st.text(1)).value_or(model::culprit_status::undecided);
        k.backend = st.text(2);
        k.counter = st.text(3);
        k.good_sha = st.text(4);
        k.bad_sha = st.text(5);
        k.commits = st.int64(6);
        k.steps = st.int64(7);
        k.builds = st.int64(8);
        k.detail = st.text(9);
        k.stored_at = st.int64(10);
        if (!st.is_null(11))
            k.written_by = model::token_ref{st.int64(11), st.is_null(12) ? std::string() : st.text(12)};
        out.emplace(id, std::move(k));
    }
    if (out.empty()) return out;
    auto commits = c.prepare("SELECT alert_id, position, sha, subject, author, share FROM alert_culprit_commits "
                             "WHERE alert_id >= :lo AND alert_id <= :hi ORDER BY alert_id, position");
    commits.bind(":lo", lo).bind(":hi", hi);
    while (commits.step()) {
        const auto it = out.find(commits.int64(0));
        if (it == out.end()) continue;
        it->second.culprits.push_back({commits.text(2), commits.text(3), commits.text(4), commits.real(5), {}});
    }
    auto effects = c.prepare("SELECT alert_id, position, counter, unit, status, value_before, value_after, delta_pct, "
                             "ci_lower_pct, ci_upper_pct FROM alert_culprit_effects "
                             "WHERE alert_id >= :lo AND alert_id <= :hi ORDER BY alert_id, position, ordinal");
    effects.bind(":lo", lo).bind(":hi", hi);
    while (effects.step()) {
        const auto it = out.find(effects.int64(0));
        if (it == out.end()) continue;
        auto& list = it->second.culprits;
        const auto position = effects.int64(1);
        if (position < 0 || static_cast<std::size_t>(position) >= list.size()) continue;
        list[static_cast<std::size_t>(position)].effects.push_back(
            {effects.text(2), effects.text(3), effects.text(4), effects.opt_real(5), effects.opt_real(6),
             effects.opt_real(7), effects.opt_real(8), effects.opt_real(9)});
    }
    return out;
}

void attach_culprits(connection& c, std::vector<model::alert>& alerts)
{
    std::vector<std::int64_t> ids;
    ids.reserve(alerts.size());
    for (const auto& a : alerts) ids.push_back(a.id);
    auto found = culprits_of(c, ids);
    for (auto& a : alerts) {
        if (auto it = found.find(a.id); it != found.end()) a.culprit = std::move(it->second);
    }
}

std::optional<model::alert> load_alert_on(connection& c, std::string_view project, std::int64_t id)
{
    auto st = c.prepare(std::string(alert_select) + "WHERE a.id = :id AND p.name = :project");
    st.bind(":id", id).bind(":project", project);
    if (!st.step()) return std::nullopt;
    std::vector<model::alert> one{read_alert(st)};
    st.reset();
    attach_culprits(c, one);
    return std::move(one.front());
}

// The alert's stored culprit replaced by k (its three tables' rows).
void replace_culprit(connection& c, std::int64_t id, const model::alert_culprit& k, std::int64_t now,
                     const std::optional<model::token_ref>& by)
{
    c.prepare("DELETE FROM alert_culprit_effects WHERE alert_id = :id").bind(":id", id).run();
    c.prepare("DELETE FROM alert_culprit_commits WHERE alert_id = :id").bind(":id", id).run();
    c.prepare("DELETE FROM alert_culprits WHERE alert_id = :id").bind(":id", id).run();
    c.prepare("INSERT INTO alert_culprits (alert_id, status, backend, counter, good_sha, bad_sha, commits, steps, "
              "builds, detail, stored_at, token_id, token_name) VALUES (:id, :status, :backend, :counter, :good, "
              ":bad, :commits, :steps, :builds, :detail, :now, :token_id, :token_name)")
        .bind(":id", id)
        .bind(":status", model::to_string(k.status))
        .bind(":backend", k.backend)
        .bind(":counter", k.counter)
        .bind(":good", k.good_sha)
        .bind(":bad", k.bad_sha)
        .bind(":commits", k.commits)
        .bind(":steps", k.steps)
        .bind(":builds", k.builds)
        .bind(":detail", k.detail)
        .bind(":now", now)
        .bind(":token_id", by ? std::optional(by->id) : std::nullopt)
        .bind(":token_name", by ? std::optional(by->name) : std::nullopt)
        .run();
    auto commit = c.prepare("INSERT INTO alert_culprit_commits (alert_id, position, sha, subject, author, share) "
                            "VALUES (:id, :position, :sha, :subject, :author, :share)");
    auto effect = c.prepare("INSERT INTO alert_culprit_effects (alert_id, position, counter, ordinal, unit, status, "
                            "value_before, value_after, delta_pct, ci_lower_pct, ci_upper_pct) VALUES (:id, "
                            ":position, :counter, :ordinal, :unit, :status, :before, :after, :delta_pct, :ci_lower, "
                            ":ci_upper)");
    for (std::size_t i = 0; i < k.culprits.size(); ++i) {
        const auto& m = k.culprits[i];
        commit.bind(":id", id)
            .bind(":position", to_int64(i))
            .bind(":sha", m.sha)
            .bind(":subject", m.subject)
            .bind(":author", m.author)
            .bind(":share", m.share)
            .run();
        for (std::size_t j = 0; j < m.effects.size(); ++j) {
            const auto& e = m.effects[j];
            effect.bind(":id", id)
                .bind(":position", to_int64(i))
                .bind(":counter", e.counter)
                .bind(":ordinal", to_int64(j))
                .bind(":unit", e.unit)
                .bind(":status", e.status)
                .bind(":before", e.before)
                .bind(":after", e.after)
                .bind(":delta_pct", e.delta_pct)
                .bind(":ci_lower", e.ci_lower_pct)
                .bind(":ci_upper", e.ci_upper_pct)
                .run();
        }
    }
}

} // namespace

std::string projects::baseline_branch(std::string_view project) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT baseline_branch FROM projects WHERE name = :name");
    st.bind(":name", project);
    if (!st.step()) {
        throw error(errors::store_not_found,
                    fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
    }
    return st.text(0);
}

void projects::set_baseline_branch(std::string_view project, std::string_view branch)
{
    if (branch.empty()) {
        throw error(errors::store_constraint, fmt::format("{}: the baseline branch of project {} cannot be empty",
                                                          impl_->name_, shown_name(project)));
    }
    impl_->write([&](connection& c) {
        if (!lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}})) {
            throw error(errors::store_not_found,
                        fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
        }
        c.prepare("UPDATE projects SET baseline_branch = :branch WHERE name = :name")
            .bind(":branch", branch)
            .bind(":name", project)
            .run();
    });
}

std::optional<std::string> projects::repository_url(std::string_view project) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT repository_url FROM projects WHERE name = :name");
    st.bind(":name", project);
    if (!st.step()) {
        throw error(errors::store_not_found,
                    fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
    }
    if (st.is_null(0)) return std::nullopt;
    return st.text(0);
}

void projects::set_repository_url(std::string_view project, std::string_view url)
{
    impl_->write([&](connection& c) {
        if (!lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}})) {
            throw error(errors::store_not_found,
                        fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
        }
        auto st = c.prepare("UPDATE projects SET repository_url = :url WHERE name = :name");
        if (url.empty()) st.bind_null(":url");
        else st.bind(":url", url);
        st.bind(":name", project).run();
    });
}

change_point_settings projects::change_point_settings_of(std::string_view project) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT change_point_method, change_point_window, change_point_max_p, "
                           "change_point_min_magnitude FROM projects WHERE name = :name");
    st.bind(":name", project);
    if (!st.step()) {
        throw error(errors::store_not_found,
                    fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
    }
    change_point_settings s;
    if (!st.is_null(0)) s.method = st.text(0);
    if (!st.is_null(1)) s.window = st.int64(1);
    if (!st.is_null(2)) s.max_p = st.real(2);
    if (!st.is_null(3)) s.min_magnitude = st.real(3);
    return s;
}

void projects::set_change_point_settings(std::string_view project, const change_point_settings& settings)
{
    impl_->write([&](connection& c) {
        if (!lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}})) {
            throw error(errors::store_not_found,
                        fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
        }
        // An unset field binds NULL, and COALESCE keeps what is stored.
        c.prepare("UPDATE projects SET change_point_method = COALESCE(:method, change_point_method), "
                  "change_point_window = COALESCE(:window, change_point_window), "
                  "change_point_max_p = COALESCE(:max_p, change_point_max_p), "
                  "change_point_min_magnitude = COALESCE(:min_magnitude, change_point_min_magnitude) "
                  "WHERE name = :name")
            .bind(":method", settings.method)
            .bind(":window", settings.window)
            .bind(":max_p", settings.max_p)
            .bind(":min_magnitude", settings.min_magnitude)
            .bind(":name", project)
            .run();
    });
}

namespace {

// The ids of a detection's series; store.not_found when one of its names is
// unknown.
series_ids resolve_detected(connection& c, const std::string& name, std::string_view project, const series_detection& d)
{
    auto ids = resolve(c, project, d.series);
    if (!ids.project || !ids.benchmark || !ids.counter || !ids.testbed) {
        throw error(errors::store_not_found,
                    fmt::format("{}: series {} / {} / testbed {} / branch {} of project {} not found", name,
                                shown_name(d.series.benchmark), shown_name(d.series.counter),
                                shown_name(d.series.testbed), shown_name(d.series.branch), shown_name(project)));
    }
    return ids;
}

// Alerts by their run's position in a detection's tail: (position, alert id).
using tail_alert_list = std::vector<std::pair<std::size_t, std::int64_t>>;

// What a series stores for the runs of a detection's tail.
struct tail_rows {
    tail_alert_list alerts;          // (position, alert id)
    std::vector<std::int64_t> stale; // change points to replace
};

// Rows of this series with a run id in the tail's range (one range of
// each table's series index), kept when the run is in the tail: a
// handful of rows, not one statement per tail point. position: run id ->
// index in the tail.
tail_rows rows_in_tail(connection& c, const series_ids& ids, const series_detection& d,
                       const std::unordered_map<std::int64_t, std::size_t>& position)
{
    tail_rows rows;
    if (d.tail.empty()) return rows;
    const auto range = std::minmax_element(d.tail.begin(), d.tail.end());
    const std::int64_t first = *range.first, last = *range.second;
    auto in_range = [&](std::string_view sql, auto&& use) {
        auto st = c.prepare(sql);
        st.bind(":benchmark_id", *ids.benchmark)
            .bind(":counter_id", *ids.counter)
            .bind(":testbed_id", *ids.testbed)
            .bind(":branch", d.series.branch)
            .bind(":first", first)
            .bind(":last", last);
        while (st.step()) {
            if (auto it = position.find(st.int64(0)); it != position.end()) use(it->second, st);
        }
    };
    constexpr std::string_view series_range =
        " WHERE benchmark_id = :benchmark_id AND counter_id = :counter_id AND testbed_id = :testbed_id"
        " AND branch = :branch AND run_id >= :first AND run_id <= :last";
    in_range(std::string("SELECT run_id, id FROM alerts").append(series_range),
             [&](std::size_t pos, const statement& st) { rows.alerts.emplace_back(pos, st.int64(1)); });
    in_range(std::string("SELECT run_id FROM change_points").append(series_range),
             [&](std::size_t pos, const statement&) { rows.stale.push_back(d.tail[pos]); });
    return rows;
}

// The nearest alert of tail_alerts within alerts::alert_match_distance
// points of tail position at, and not in matched (claimed already).
std::optional<std::int64_t> nearest_unclaimed_alert(const tail_alert_list& tail_alerts,
                                                    const std::vector<std::int64_t>& matched, std::size_t at)
{
    std::optional<std::int64_t> same;
    std::size_t best = alerts::alert_match_distance + 1;
    for (const auto& [pos, id] : tail_alerts) {
        const std::size_t dist = pos > at ? pos - at : at - pos;
        if (dist < best && std::find(matched.begin(), matched.end(), id) == matched.end()) {
            best = dist;
            same = id;
        }
    }
    return same;
}

// Moves alert id to the change r (the same change, found again).
void move_alert(connection& c, std::int64_t id, const model::change_point_record& r, std::int64_t now)
{
    auto up = c.prepare("UPDATE alerts SET run_id = :run_id, "
                        "p_value = :p_value, mean_before = :mean_before, mean_after = :mean_after, "
                        "median_before = :median_before, median_after = :median_after, "
                        "delta_pct = :delta_pct, shift = :shift, shift_lower = :shift_lower, "
                        "shift_upper = :shift_upper, updated_at = :now WHERE id = :id");
    up.bind(":run_id", r.run_id).bind(":now", now).bind(":id", id);
    bind_numbers(up, r);
    up.run();
}

// A new untriaged alert of the series for the change r; its id.
std::int64_t open_alert(connection& c, const series_ids& ids, const std::string& branch,
                        const model::change_point_record& r, std::int64_t now)
{
    auto add = c.prepare("INSERT INTO alerts (project_id, benchmark_id, counter_id, testbed_id, branch, "
                         "run_id, " PERFGATE_NUMBERS ", created_at, updated_at) VALUES (:project_id, "
                         ":benchmark_id, :counter_id, :testbed_id, :branch, :run_id, " PERFGATE_NUMBER_PARAMS
                         ", :now, :now) RETURNING id");
    add.bind(":project_id", *ids.project)
        .bind(":benchmark_id", *ids.benchmark)
        .bind(":counter_id", *ids.counter)
        .bind(":testbed_id", *ids.testbed)
        .bind(":branch", branch)
        .bind(":run_id", r.run_id)
        .bind(":now", now);
    bind_numbers(add, r);
    add.step();
    const auto id = add.int64(0);
    add.run();
    return id;
}

// One series's detection: its change points in the tail replaced by d.found,
// each worse change matched to an alert of the series or opened as a new
// one (whose id goes to opened).
void apply_series_detection(connection& c, const std::string& name, std::string_view project, const series_detection& d,
                            std::int64_t now, std::vector<std::int64_t>& opened)
{
    const auto ids = resolve_detected(c, name, project, d);
    std::unordered_map<std::int64_t, std::size_t> position; // run id -> index in the tail
    for (std::size_t i = 0; i < d.tail.size(); ++i) position.emplace(d.tail[i], i);
    auto [tail_alerts, stale] = rows_in_tail(c, ids, d, position);

    auto del = c.prepare("DELETE FROM change_points WHERE run_id = :run_id AND counter_id = :counter_id");
    del.bind(":counter_id", *ids.counter);
    for (const auto run : stale) del.bind(":run_id", run).run();

    auto ins = c.prepare(
        "INSERT INTO change_points (run_id, counter_id, benchmark_id, testbed_id, branch, " PERFGATE_NUMBERS
        ") VALUES (:run_id, :counter_id, :benchmark_id, :testbed_id, "
        ":branch, " PERFGATE_NUMBER_PARAMS ")");
    std::vector<std::int64_t> matched; // alerts already claimed in this detection
    for (const auto& f : d.found) {
        const auto& r = f.record;
        const auto at = position.find(r.run_id);
        if (at == position.end()) {
            throw error(errors::store_constraint,
                        fmt::format("{}: change point at run {} is not in its series's tail", name, r.run_id));
        }
        ins.bind(":run_id", r.run_id)
            .bind(":counter_id", *ids.counter)
            .bind(":benchmark_id", *ids.benchmark)
            .bind(":testbed_id", *ids.testbed)
            .bind(":branch", d.series.branch);
        bind_numbers(ins, r);
        ins.run();
        if (!f.worse) continue;

        if (const auto same = nearest_unclaimed_alert(tail_alerts, matched, at->second)) {
            matched.push_back(*same);
            move_alert(c, *same, r, now);
            continue;
        }
        const auto id = open_alert(c, ids, d.series.branch, r, now);
        opened.push_back(id);
        matched.push_back(id);
        tail_alerts.emplace_back(at->second, id);
    }
}

std::vector<std::int64_t> apply_detection_on(connection& c, const std::string& name, std::string_view project,
                                             const std::vector<series_detection>& detections)
{
    std::vector<std::int64_t> opened;
    const std::int64_t now = unix_now();
    // One detection at a time per project, across processes: a replica that
    // finds the same change as another one finds its alert below (within
    // alerts::alert_match_distance) instead of opening a second. SQLite's writer is
    // one at a time already; PostgreSQL locks the project's row until commit.
    if (c.kind() == detail::engine::postgresql) {
        c.prepare("SELECT id FROM projects WHERE name = :name FOR UPDATE").bind(":name", project).run();
    }
    for (const auto& d : detections) apply_series_detection(c, name, project, d, now, opened);
    return opened;
}

} // namespace

std::vector<std::int64_t> alerts::apply_detection(std::string_view project,
                                                  const std::vector<series_detection>& detections)
{
    return impl_->write([&](connection& c) { return apply_detection_on(c, impl_->name_, project, detections); });
}

std::vector<model::alert> alerts::list(const model::alert_query& q) const
{
    std::vector<model::alert> out;
    if (q.limit == 0) return out;
    impl::read_lease c(*impl_);
    // Each optional filter compares first and tests for NULL second:
    // PostgreSQL infers a parameter's type where it first meets it, and
    // ":x IS NULL" alone says nothing.
    auto st = (*c).prepare(std::string(alert_select) +
                           "WHERE p.name = :project AND (a.status = :status OR :status IS NULL) "
                           "AND (b.name = :benchmark OR :benchmark IS NULL) "
                           "AND (c.name = :counter OR :counter IS NULL) "
                           "AND (t.fingerprint = :testbed OR t.name = :testbed OR :testbed IS NULL) "
                           "ORDER BY a.id DESC LIMIT :limit");
    std::optional<std::string> status;
    if (q.status) status = std::string(model::to_string(*q.status));
    st.bind(":project", q.project)
        .bind(":status", status)
        .bind(":benchmark", q.benchmark)
        .bind(":counter", q.counter)
        .bind(":testbed", q.testbed)
        .bind(":limit", to_int64(q.limit));
    while (st.step()) out.push_back(read_alert(st));
    st.reset();
    attach_culprits(*c, out);
    return out;
}

std::vector<model::alert> alerts::open(std::string_view project, std::string_view benchmark,
                                       std::string_view testbed_fingerprint, std::string_view branch,
                                       std::size_t limit) const
{
    std::vector<model::alert> out;
    if (limit == 0) return out;
    impl::read_lease c(*impl_);
    // The status condition is alerts_open's own, word for word: SQLite uses
    // a partial index only for a query whose WHERE contains the index's.
    auto st = (*c).prepare((*c).pick(detail::open_alerts_sql));
    st.bind(":project", project)
        .bind(":benchmark", benchmark)
        .bind(":testbed", testbed_fingerprint)
        .bind(":branch", branch)
        .bind(":limit", to_int64(limit));
    while (st.step()) out.push_back(read_alert(st));
    std::reverse(out.begin(), out.end());
    return out;
}

std::optional<model::alert> alerts::load(std::string_view project, std::int64_t id) const
{
    impl::read_lease c(*impl_);
    return load_alert_on(*c, project, id);
}

std::optional<model::alert> alerts::update(std::string_view project, std::int64_t id, const model::alert_update& u)
{
    return impl_->write([&](connection& c) -> std::optional<model::alert> {
        if (!load_alert_on(c, project, id)) return std::nullopt;
        c.prepare("UPDATE alerts SET status = :status, note = coalesce(:note, note), changed_by = :by, "
                  "changed_at = :now WHERE id = :id")
            .bind(":status", model::to_string(u.status))
            .bind(":note", u.note)
            .bind(":by", u.changed_by)
            .bind(":now", unix_now())
            .bind(":id", id)
            .run();
        return load_alert_on(c, project, id);
    });
}

std::optional<model::alert> alerts::put_culprit(std::string_view project, std::int64_t id,
                                                const model::alert_culprit& culprit,
                                                const std::optional<model::token_ref>& by)
{
    return impl_->write([&](connection& c) -> std::optional<model::alert> {
        if (!load_alert_on(c, project, id)) return std::nullopt;
        replace_culprit(c, id, culprit, unix_now(), by);
        return load_alert_on(c, project, id);
    });
}

std::vector<model::change_point_record> alerts::change_points(std::string_view project,
                                                              const model::series_key& series) const
{
    std::vector<model::change_point_record> out;
    impl::read_lease lease(*impl_);
    auto& c = *lease;
    auto st = c.prepare(
        "SELECT b.name, c.name, t.fingerprint, cp.branch, cp.run_id, r.git_sha, r.created_at, " PERFGATE_NUMBERS
        " FROM change_points cp "
        "JOIN benchmarks b ON b.id = cp.benchmark_id JOIN projects p ON p.id = b.project_id "
        "JOIN counters c ON c.id = cp.counter_id JOIN testbeds t ON t.id = cp.testbed_id "
        "JOIN runs r ON r.id = cp.run_id "
        "WHERE p.name = :project AND b.name = :benchmark "
        "AND (c.name = :counter OR :counter IS NULL) "
        "AND (t.fingerprint = :testbed OR t.name = :testbed OR :testbed IS NULL) "
        "AND (cp.branch = :branch OR :branch IS NULL) "
        "ORDER BY r.created_at, cp.run_id");
    std::optional<std::string> testbed, branch, counter;
    if (!series.testbed.empty()) testbed = series.testbed;
    if (!series.branch.empty()) branch = series.branch;
    if (!series.counter.empty()) counter = series.counter;
    st.bind(":project", project)
        .bind(":benchmark", series.benchmark)
        .bind(":counter", counter)
        .bind(":testbed", testbed)
        .bind(":branch", branch);
    while (st.step()) {
        model::change_point_record r;
        r.series = {st.text(0), st.text(1), st.text(2), st.text(3)};
        r.run_id = st.int64(4);
        r.git_sha = st.text(5);
        r.created_at = st.int64(6);
        read_numbers(st, 7, r);
        out.push_back(std::move(r));
    }
    return out;
}

#undef PERFGATE_NUMBERS
#undef PERFGATE_NUMBER_PARAMS

} // namespace perfgate::store
