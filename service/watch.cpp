// The service's history watch: change points on every series of the
// baseline branch, the alerts they open, and their triage.
#include "service/service_impl.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include <fmt/format.h>

#include "capture/counters.hpp"
#include "capture/names.hpp"
#include "model/error.hpp"
#include "service/text.hpp"
#include "stats/change_points.hpp"
#include "stats/hodges_lehmann.hpp"
#include "store/alerts.hpp"
#include "store/history.hpp"
#include "store/projects.hpp"

namespace perfgate::service {

namespace {

// What detection needs to know of one series's counter.
struct series_traits {
    capture::better direction = capture::better::lower;
    bool alerting = false;      // a worse change opens an alert: the gate's counters
    bool deterministic = false; // counted exactly (callgrind, memcheck; not a time)
};

// A change that makes the counter worse: up for lower-is-better counters.
bool is_worse(const stats::change_point& cp, capture::better direction)
{
    return direction == capture::better::lower ? cp.mean_after > cp.mean_before : cp.mean_after < cp.mean_before;
}

// |after/before - 1| or |before/after - 1|, whichever is larger, beyond
// threshold (change_point_options::min_magnitude's measure); a move away
// from 0 is beyond every threshold.
bool beyond(double value, double level, double threshold)
{
    if (level == 0 || value == 0) return value != level;
    return std::max(std::abs(value / level - 1), std::abs(level / value - 1)) > threshold;
}

double median_of(std::vector<double> v)
{
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    if (v.size() % 2 == 1) return *mid;
    return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

double mean_of(std::span<const double> v)
{
    double sum = 0;
    for (const double x : v) sum += x;
    return sum / static_cast<double>(v.size());
}

// An exact step's record as stats::change_points words one: the segments
// either side (from the previous step, to the next one), p 0 (no test: the
// counts are exact).
stats::change_point exact_change(std::span<const double> before, std::span<const double> after, std::size_t index)
{
    stats::change_point cp;
    cp.index = index;
    cp.p_value = 0;
    cp.mean_before = mean_of(before);
    cp.mean_after = mean_of(after);
    cp.median_before = median_of({before.begin(), before.end()});
    cp.median_after = median_of({after.begin(), after.end()});
    if (cp.mean_before != 0) cp.delta_pct = (cp.mean_after - cp.mean_before) / cp.mean_before * 100;
    cp.shift = stats::hodges_lehmann(before, after, 0.05, false);
    return cp;
}

// Every point of the tail is one exact count: a deterministic backend's
// (callgrind, memcheck) counter that is not a time, the same value in every
// repetition of its run.
bool exact_points(const std::vector<model::history_point>& tail)
{
    return std::all_of(tail.begin(), tail.end(), [](const model::history_point& p) {
        return p.n > 0 && p.min && p.max && *p.min == *p.max && std::isfinite(p.median);
    });
}

// The change points of one series's tail: stats::change_points, and on a
// series of exact counts its exact steps (exact_steps) in place of the
// rank test's points within store::alerts::alert_match_distance of them (the same
// change, seen late).
std::vector<stats::change_point> change_points_of(const std::vector<double>& values, bool exact,
                                                  const stats::change_point_options& options)
{
    auto found = stats::change_points(values, options);
    if (!exact) return found;
    const auto steps = exact_steps(values, std::max(options.min_magnitude, exact_step_threshold));
    if (steps.empty()) return found;
    std::erase_if(found, [&](const stats::change_point& cp) {
        return std::any_of(steps.begin(), steps.end(), [&](std::size_t s) {
            return (cp.index > s ? cp.index - s : s - cp.index) <= store::alerts::alert_match_distance;
        });
    });
    const std::span<const double> all(values);
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const std::size_t from = k == 0 ? 0 : steps[k - 1];
        const std::size_t to = k + 1 < steps.size() ? steps[k + 1] : values.size();
        found.push_back(exact_change(all.subspan(from, steps[k] - from), all.subspan(steps[k], to - steps[k]),
                                     steps[k]));
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    return found;
}

// Runs change-point detection over one series's tail (points in series
// order) and names each change point by the run it starts at. A change in
// the worse direction opens an alert only when alerting (a gated counter).
store::series_detection detect(model::series_key key, const std::vector<model::history_point>& tail,
                               const series_traits& traits, const stats::change_point_options& options)
{
    store::series_detection d;
    d.series = std::move(key);
    std::vector<double> values;
    values.reserve(tail.size());
    for (const auto& p : tail) {
        d.tail.push_back(p.run_id);
        values.push_back(p.median);
    }
    const bool exact = traits.deterministic && exact_points(tail);
    for (const auto& cp : change_points_of(values, exact, options)) {
        const auto& at = tail[cp.index];
        model::change_point_record r;
        r.series = d.series;
        r.run_id = at.run_id;
        r.git_sha = at.git_sha;
        r.created_at = at.created_at;
        r.p_value = cp.p_value;
        r.mean_before = cp.mean_before;
        r.mean_after = cp.mean_after;
        r.median_before = cp.median_before;
        r.median_after = cp.median_after;
        r.delta_pct = cp.delta_pct;
        r.shift = cp.shift.estimate;
        r.shift_lower = cp.shift.lower;
        r.shift_upper = cp.shift.upper;
        d.found.push_back({std::move(r), traits.alerting && is_worse(cp, traits.direction)});
    }
    return d;
}

} // namespace

std::vector<std::size_t> exact_steps(std::span<const double> values, double threshold)
{
    std::vector<std::size_t> steps;
    std::size_t from = 0; // the current level's first point
    for (std::size_t i = 1; i < values.size(); ++i) {
        const double level = median_of({values.begin() + static_cast<std::ptrdiff_t>(from),
                                        values.begin() + static_cast<std::ptrdiff_t>(i)});
        if (!beyond(values[i], level, threshold)) continue;
        const bool up = values[i] > level;
        const bool stays = std::all_of(values.begin() + static_cast<std::ptrdiff_t>(i) + 1, values.end(),
                                       [&](double v) { return (v > level) == up && beyond(v, level, threshold); });
        if (!stays) continue;
        steps.push_back(i);
        from = i;
    }
    return steps;
}

watch_job watch_job_of(const model::run_record& run)
{
    watch_job job{run.project, run.benchmark, run.branch, run.testbed.fingerprint, {}, run.id};
    job.deterministic = run.backend == "callgrind" || run.backend == "memcheck";
    for (const auto& c : run.counters) {
        const bool has_value = std::any_of(c.samples.begin(), c.samples.end(),
                                           [](const model::sample& s) { return s.value.has_value(); });
        if (has_value) job.counters.emplace_back(c.counter, c.unit);
    }
    return job;
}

bool watched_role(const model::run_record& run) { return run.mainline && !run.branch.empty(); }

stats::change_point_options merged_change_point_options(const store::change_point_settings& stored,
                                                        const stats::change_point_options& defaults)
{
    stats::change_point_options o = defaults;
    if (stored.method) {
        const auto method = stats::change_point_method_named(*stored.method);
        if (!method) {
            throw error(errors::stats_bad_option,
                        fmt::format("change_point_method: expected perfgate or otava, got '{}'", *stored.method));
        }
        o.method = *method;
    }
    if (stored.window) {
        if (*stored.window < 2 || *stored.window > max_change_point_window) {
            throw error(errors::stats_bad_option, fmt::format("change_point_window: must be 2 to {}, got {}",
                                                              max_change_point_window, *stored.window));
        }
        o.window = static_cast<std::size_t>(*stored.window);
    }
    if (stored.max_p) {
        if (!(*stored.max_p > 0 && *stored.max_p < 1)) {
            throw error(errors::stats_bad_option,
                        fmt::format("change_point_max_p: must be in (0, 1), got {}", *stored.max_p));
        }
        o.max_p = *stored.max_p;
    }
    if (stored.min_magnitude) {
        if (!(*stored.min_magnitude >= 0) || !std::isfinite(*stored.min_magnitude)) {
            throw error(errors::stats_bad_option,
                        fmt::format("change_point_min_magnitude: must be finite and >= 0, got {}",
                                    *stored.min_magnitude));
        }
        o.min_magnitude = *stored.min_magnitude;
    }
    stats::check_change_point_options(o);
    return o;
}

std::vector<std::int64_t> watch_series(store::store& db, const watch_job& job,
                                       const stats::change_point_options& defaults)
{
    if (job.branch.empty() || job.branch != db.projects().baseline_branch(job.project)) return {};
    const auto options = merged_change_point_options(db.projects().change_point_settings_of(job.project), defaults);
    model::history_query q;
    q.project = job.project;
    q.benchmark = job.benchmark;
    q.branch = job.branch;
    q.testbed = job.testbed;
    q.mainline_only = true;
    q.limit = watch_tail;
    std::vector<std::string> counters;
    for (const auto& [counter, unit] : job.counters) counters.push_back(counter);
    // Every series's tail at once (one statement on PostgreSQL).
    const auto tails = db.history().points_per_counter(q, counters);
    // Alerts follow the gate's counters (capture/counters.hpp): those gated
    // by default, or the fallback ones when none of those has data (the
    // rusage backend); the others' change points are stored, never alerted.
    const bool any_gated = std::any_of(job.counters.begin(), job.counters.end(),
                                       [](const auto& c) { return capture::lookup_counter(c.first, c.second).gated; });
    std::vector<store::series_detection> detections;
    for (std::size_t i = 0; i < job.counters.size(); ++i) {
        const auto& [counter, unit] = job.counters[i];
        const auto t = capture::lookup_counter(counter, unit);
        const series_traits traits{t.direction, t.gated || (t.fallback_gate && !any_gated),
                                   job.deterministic && !t.time_like};
        detections.push_back(detect({job.benchmark, counter, job.testbed, job.branch}, tails[i], traits, options));
    }
    return db.alerts().apply_detection(job.project, detections);
}

void notify_opened(notifier* n, store::store& db, const std::string& project, const std::vector<std::int64_t>& ids)
{
    if (!n) return;
    for (const auto id : ids) {
        if (auto a = db.alerts().load(project, id)) n->notify(event_alert_opened, *a);
    }
}

void detail::service_impl::watch_in_background(watch_queue::reporter report)
{
    store::store* db = &db_;
    watcher_ = std::make_shared<watch_queue>(
        [db, defaults = change_point_defaults_, n = notifier_](const watch_job& job) {
            auto opened = watch_series(*db, job, defaults);
            notify_opened(n.get(), *db, job.project, opened);
            return opened;
        },
        std::move(report));
}

void detail::service_impl::drain_watch() const
{
    if (watcher_) watcher_->drain();
}

watch_queue::counts detail::service_impl::watch_stats() const
{
    return watcher_ ? watcher_->stats() : watch_queue::counts{};
}

stats::change_point_options detail::service_impl::change_point_options(const std::string& project) const
{
    require_project(project);
    return merged_change_point_options(db_.projects().change_point_settings_of(project), change_point_defaults_);
}

store::change_point_settings detail::service_impl::change_point_settings(const std::string& project) const
{
    require_project(project);
    return db_.projects().change_point_settings_of(project);
}

void detail::service_impl::set_change_point_settings(const std::string& project,
                                                     const store::change_point_settings& settings)
{
    require_project(project);
    (void)merged_change_point_options(settings, change_point_defaults_); // validates what is given
    db_.projects().set_change_point_settings(project, settings);
}

void detail::service_impl::set_change_point_defaults(const stats::change_point_options& defaults)
{
    stats::check_change_point_options(defaults);
    change_point_defaults_ = defaults;
}

std::string detail::service_impl::baseline_branch(const std::string& project) const
{
    require_project(project);
    return db_.projects().baseline_branch(project);
}

void detail::service_impl::set_baseline_branch(const std::string& project, const std::string& branch)
{
    require_project(project);
    capture::validate_name("branch", branch);
    db_.projects().set_baseline_branch(project, branch);
}

std::vector<model::alert> detail::service_impl::alerts(const model::alert_query& q) const
{
    require_project(q.project);
    if (q.benchmark) capture::validate_name("benchmark", *q.benchmark);
    if (q.counter) capture::validate_name("counter", *q.counter);
    if (q.testbed) capture::validate_name("testbed", *q.testbed);
    if (q.limit < 1 || q.limit > max_alert_limit) {
        throw error(errors::query_bad_value, fmt::format("limit {}: expected 1 to {}", q.limit, max_alert_limit));
    }
    return db_.alerts().list(q);
}

model::alert detail::service_impl::alert(const std::string& project, std::int64_t id) const
{
    require_project(project);
    auto a = db_.alerts().load(project, id);
    if (!a) throw error(errors::alert_not_found, fmt::format("project '{}' has no alert {}", project, id));
    return *a;
}

model::alert detail::service_impl::update_alert(const std::string& project, std::int64_t id,
                                                const model::alert_update& u)
{
    require_project(project);
    if (u.note) {
        if (u.note->size() > max_alert_note_bytes) {
            throw error(errors::alert_bad_note,
                        fmt::format("field 'note': {} bytes; at most {} bytes", u.note->size(), max_alert_note_bytes));
        }
        // Control characters would end up in terminals and markdown as is.
        check_stored_text(errors::alert_bad_note, "note", *u.note, text_kind::multiline);
    }
    check_stored_text(errors::ingest_bad_field, "changed_by", u.changed_by);
    const auto before = notifier_ ? db_.alerts().load(project, id) : std::nullopt;
    auto a = db_.alerts().update(project, id, u);
    if (!a) throw error(errors::alert_not_found, fmt::format("project '{}' has no alert {}", project, id));
    if (before && before->status != a->status) notifier_->notify(event_alert_status_changed, *a);
    return *a;
}

std::vector<model::change_point_record> detail::service_impl::change_points(
    const std::string& project, const std::string& benchmark, const std::string& counter,
    const std::optional<std::string>& testbed, const std::optional<std::string>& branch) const
{
    require_project(project);
    capture::validate_name("benchmark", benchmark);
    capture::validate_name("counter", counter);
    if (testbed) capture::validate_name("testbed", *testbed);
    if (branch) capture::validate_name("branch", *branch);
    model::series_key key{benchmark, counter, testbed.value_or(""),
                          branch ? *branch : db_.projects().baseline_branch(project)};
    return db_.alerts().change_points(project, key);
}

} // namespace perfgate::service
