// The baseline-branch history a compare reads (internal to service/): the
// z-score's medians and each counter's recent band, with the band's change
// points and open alerts (docs/history.md, docs/report.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "model/alert.hpp"
#include "service/lru_cache.hpp"
#include "store/store.hpp"

namespace perfgate::service::detail {

// The recent band of a series (report.hpp, history_band): the points from
// the last one where a stored change point starts, or all of them, when
// there are at least policy.history_min (and two). Points before a change
// belong to another level: a band across it would hold both.
std::optional<gate::history_band> band_of(const std::vector<model::history_point>& points,
                                          const std::vector<model::change_point_record>& changes,
                                          const gate::policy& rules);

// The baseline-branch history of one compare: per benchmark, the series it
// is gated against (the baseline run's branch, the candidate's testbed, the
// runs that feed that branch's series older than the candidate). The z-score reads a series's last
// policy.history medians; the band of the same points is kept then (a few
// numbers per counter, not the points: a gate of 4096 counters reads up to
// 1000 each). A benchmark's counters are read together, with the change
// points of all of them (store::history::points_per_counter: one statement on PostgreSQL), the
// first time one of them is asked for; each counter's medians are kept until
// the z-score takes them.
class baseline_history {
public:
    struct series {
        std::string benchmark, branch, testbed;
        std::int64_t before = 0;           // the candidate run
        std::vector<std::string> counters; // the report's: of either run, and derived
    };

    using points_by_counter = std::vector<std::vector<model::history_point>>;
    // Series points are immutable (see read()): kept across compares here.
    using cache = lru_cache<points_by_counter>;

    baseline_history(const store::store& db, const std::string& project, const gate::policy& rules, cache& points)
        : db_(db), project_(project), rules_(rules), cache_(points)
    {}

    void add(series s) { series_.push_back(std::move(s)); }

    [[nodiscard]] const series* find(std::string_view benchmark) const;

    // The last policy.history series medians of (benchmark, counter),
    // oldest first; empty for a benchmark not compared. With no branch on
    // the baseline run, any branch's (as the z-score always read them).
    std::vector<double> medians(std::string_view benchmark, std::string_view counter);

    // The recent band of (benchmark, counter); none for a baseline run
    // without a branch (a change point is always one branch's).
    std::optional<gate::history_band> band(std::string_view benchmark, std::string_view counter);

private:
    // Every counter of the benchmark's series, once.
    void fetch(std::string_view benchmark);

    // The series's points of counters (current_'s benchmark): the last
    // policy.history runs older than the candidate. They never change once
    // the candidate is stored (runs are immutable, never deleted, and a run
    // stored later has a larger id), so they are cached by the whole query.
    std::shared_ptr<const points_by_counter> read(const std::vector<std::string>& counters);

    // The band of one counter's points; changes: the benchmark's change
    // points (all counters), or null to read this counter's.
    std::optional<gate::history_band> band_from(const std::vector<model::history_point>& points,
                                                const std::string& counter,
                                                const std::vector<model::change_point_record>* changes);

    const store::store& db_;
    const std::string& project_;
    const gate::policy& rules_;
    cache& cache_;
    std::vector<series> series_;
    const series* current_ = nullptr;
    std::set<std::string> fetched_;
    std::map<std::pair<std::string, std::string>, std::vector<double>> medians_;
    std::map<std::pair<std::string, std::string>, std::optional<gate::history_band>> bands_;
};

// Each counter's history context (report.hpp): the open alerts on its
// series and the recent band. Only for a baseline run with a branch: the
// series of a change point or an alert is always one branch's.
void add_history_context(gate::report& r, const store::store& db, const std::string& project, baseline_history& hist);

} // namespace perfgate::service::detail
