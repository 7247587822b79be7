// Change points and alerts (store::store::alerts(); store/alerts.cpp).
#pragma once

#include "model/alert.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace perfgate::store {

namespace detail {
struct store_impl;
}

// A detection covers the tail of one series: its run ids in series order
// and the change points found there (each record's run_id one of the
// tail's), with whether the change is in the counter's worse direction.
struct detected_change {
    model::change_point_record record;
    bool worse = false;
};
struct series_detection {
    model::series_key series;
    std::vector<std::int64_t> tail;
    std::vector<detected_change> found;
};

class alerts {
public:
    explicit alerts(detail::store_impl& s) noexcept : impl_(&s) {}
    alerts(const alerts&) = delete;
    alerts& operator=(const alerts&) = delete;

    // In one transaction, for each detection: the change points stored for
    // the tail's runs are replaced by `found`; each worse change updates the
    // series's alert whose run lies within alert_match_distance points of it
    // in the tail (the same alert: data that arrives later moves a change
    // point by a point or two) or opens a new untriaged one. Alerts whose run
    // is no longer a change point are kept as they are (people triage them).
    // Returns the ids of the alerts opened. Errors: "store.not_found" for an
    // unknown project, benchmark, counter or testbed; "store.constraint"
    // for a change point whose run is not in its tail.
    std::vector<std::int64_t> apply_detection(std::string_view project,
                                              const std::vector<series_detection>& detections);
    static constexpr std::size_t alert_match_distance = 2;

    // Alerts of a project, newest first, filtered by q. Unknown names: empty.
    [[nodiscard]] std::vector<model::alert> list(const model::alert_query& q) const;
    // The open (untriaged or acknowledged) alerts of a benchmark's series on
    // one testbed (by fingerprint) and branch, every counter: the newest
    // `limit`, oldest first. One range of the alerts_open index
    // (009_open_alerts.sql): what a compare's report shows as history context.
    [[nodiscard]] std::vector<model::alert> open(std::string_view project, std::string_view benchmark,
                                                 std::string_view testbed_fingerprint, std::string_view branch,
                                                 std::size_t limit) const;
    // One alert with its stored culprit (list() reads culprits too).
    [[nodiscard]] std::optional<model::alert> load(std::string_view project, std::int64_t id) const;
    // Sets status (and note, when given), changed_by and changed_at = now.
    // nullopt (nothing changed) when the project has no such alert.
    std::optional<model::alert> update(std::string_view project, std::int64_t id, const model::alert_update& u);
    // Stores what `perfgate bisect --alert` found (020_alert_culprits.sql),
    // replacing an earlier result of the alert, in one transaction; its
    // stored_at is now and its written_by `by`. The alert as it is then;
    // nullopt (nothing stored) when the project has no such alert. The store
    // keeps the texts as given (service::alerts checks them);
    // "store.constraint" for a sha outside 7 to 64 characters or an unknown
    // status.
    std::optional<model::alert> put_culprit(std::string_view project, std::int64_t id,
                                            const model::alert_culprit& culprit,
                                            const std::optional<model::token_ref>& by = std::nullopt);
    // Stored change points of (benchmark, counter) in series order; an empty
    // testbed (name or fingerprint), branch or counter in `series` matches
    // any (an empty counter: every counter of the benchmark, in one query).
    [[nodiscard]] std::vector<model::change_point_record> change_points(std::string_view project,
                                                                        const model::series_key& series) const;

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
