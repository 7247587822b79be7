#include "service/baseline_history.hpp"

#include <algorithm>

#include "service/service.hpp"
#include "store/alerts.hpp"
#include "store/history.hpp"

namespace perfgate::service::detail {

std::optional<gate::history_band> band_of(const std::vector<model::history_point>& points,
                                          const std::vector<model::change_point_record>& changes,
                                          const gate::policy& rules)
{
    std::set<std::int64_t> starts;
    for (const auto& cp : changes) starts.insert(cp.run_id);
    std::size_t first = 0;
    std::optional<std::int64_t> since;
    for (std::size_t i = points.size(); i-- > 0;) {
        if (starts.contains(points[i].run_id)) {
            first = i;
            since = points[i].run_id;
            break;
        }
    }
    const std::size_t n = points.size() - first;
    if (n < std::max<std::size_t>(rules.history_min, 2)) return std::nullopt;
    const auto [lo, hi] = std::minmax_element(points.begin() + static_cast<std::ptrdiff_t>(first), points.end(),
                                              [](const auto& x, const auto& y) { return x.median < y.median; });
    return gate::history_band{lo->median, hi->median, n, since};
}

void add_history_context(gate::report& r, const store::store& db, const std::string& project, baseline_history& hist)
{
    for (auto& b : r.benchmarks) {
        const baseline_history::series* s = hist.find(b.name);
        if (!s || s->branch.empty()) continue;
        // The series group's open alerts, oldest first; at most as many as
        // GET .../alerts lists of each of the two states (a series has a
        // handful; this bounds a compare against a project nobody triages).
        const std::vector<model::alert> open = db.alerts().open(project, s->benchmark, s->testbed, s->branch,
                                                                2 * max_alert_limit);
        for (auto& c : b.counters) {
            std::vector<gate::open_alert> mine;
            for (const auto& a : open) {
                if (a.change.series.counter != c.name) continue;
                mine.push_back({a.id, a.status, a.change.delta_pct, a.change.run_id, a.change.git_sha});
            }
            c.open_alerts = std::move(mine);
            c.band = hist.band(b.name, c.name);
            if (c.band && c.candidate.median) {
                c.outside_band = *c.candidate.median < c.band->lo || *c.candidate.median > c.band->hi;
            }
        }
    }
}

const baseline_history::series* baseline_history::find(std::string_view benchmark) const
{
    auto it = std::find_if(series_.begin(), series_.end(), [&](const series& s) { return s.benchmark == benchmark; });
    return it == series_.end() ? nullptr : &*it;
}

std::vector<double> baseline_history::medians(std::string_view benchmark, std::string_view counter)
{
    fetch(benchmark);
    auto key = std::pair{std::string(benchmark), std::string(counter)};
    if (auto it = medians_.find(key); it != medians_.end()) {
        std::vector<double> out = std::move(it->second);
        medians_.erase(it);
        return out;
    }
    // A counter neither run has (or asked for twice): read on its own.
    const series* s = find(benchmark);
    if (!s) return {};
    current_ = s;
    const auto points = read({std::string(counter)});
    std::vector<double> out;
    for (const auto& p : points->front()) out.push_back(p.median);
    return out;
}

std::optional<gate::history_band> baseline_history::band(std::string_view benchmark, std::string_view counter)
{
    fetch(benchmark);
    auto key = std::pair{std::string(benchmark), std::string(counter)};
    if (auto it = bands_.find(key); it != bands_.end()) return it->second;
    const series* s = find(benchmark);
    if (!s || s->branch.empty()) return std::nullopt;
    current_ = s;
    const auto points = read({std::string(counter)});
    return band_from(points->front(), std::string(counter), nullptr);
}

void baseline_history::fetch(std::string_view benchmark)
{
    const series* s = find(benchmark);
    if (!s || !fetched_.insert(s->benchmark).second) return;
    current_ = s;
    const auto read_all = read(s->counters);
    const points_by_counter& all = *read_all;
    // The change points of all its counters in one query, when some
    // counter has enough points for a band.
    std::optional<std::vector<model::change_point_record>> changes;
    const std::size_t enough = std::max<std::size_t>(rules_.history_min, 2);
    if (!s->branch.empty() &&
        std::any_of(all.begin(), all.end(), [&](const auto& points) { return points.size() >= enough; })) {
        changes = db_.alerts().change_points(project_, {s->benchmark, "", s->testbed, s->branch});
    }
    for (std::size_t i = 0; i < s->counters.size(); ++i) {
        const auto key = std::pair{s->benchmark, s->counters[i]};
        bands_[key] = s->branch.empty() ? std::nullopt
                                        : band_from(all[i], s->counters[i], changes ? &*changes : nullptr);
        std::vector<double> m;
        m.reserve(all[i].size());
        for (const auto& p : all[i]) m.push_back(p.median);
        medians_[key] = std::move(m);
    }
}

std::shared_ptr<const baseline_history::points_by_counter> baseline_history::read(
    const std::vector<std::string>& counters)
{
    std::string key = cache_key({project_, current_->benchmark, current_->branch, current_->testbed,
                                 std::to_string(current_->before), std::to_string(rules_.history)});
    for (const auto& c : counters) key += cache_key({c});
    if (auto hit = cache_.find(key)) return hit;
    model::history_query q;
    q.project = project_;
    q.benchmark = current_->benchmark;
    if (!current_->branch.empty()) q.branch = current_->branch;
    if (!current_->testbed.empty()) q.testbed = current_->testbed;
    q.mainline_only = true; // the runs that feed the branch's series, whatever their role
    q.before_run = current_->before;
    q.limit = rules_.history;
    auto points = std::make_shared<const points_by_counter>(
        db_.history().points_per_counter(q, counters, store::history_detail::medians));
    std::size_t bytes = sizeof(points_by_counter) + key.size();
    for (const auto& series : *points) {
        bytes += sizeof(points_by_counter::value_type) + series.capacity() * sizeof(model::history_point);
        for (const auto& p : series) bytes += p.git_sha.capacity() + p.branch.capacity();
    }
    cache_.add(key, points, bytes);
    return points;
}

std::optional<gate::history_band> baseline_history::band_from(const std::vector<model::history_point>& points,
                                                              const std::string& counter,
                                                              const std::vector<model::change_point_record>* changes)
{
    if (points.size() < std::max<std::size_t>(rules_.history_min, 2)) return std::nullopt;
    std::vector<model::change_point_record> mine;
    if (changes) {
        for (const auto& cp : *changes) {
            if (cp.series.counter == counter) mine.push_back(cp);
        }
    } else {
        mine = db_.alerts().change_points(project_,
                                          {current_->benchmark, counter, current_->testbed, current_->branch});
    }
    return band_of(points, mine, rules_);
}

} // namespace perfgate::service::detail
