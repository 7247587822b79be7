// Change points found in the stored history and the alerts people triage.
//
// A series is one counter of one benchmark on one testbed and branch, in run
// order: the per-run medians of the runs that feed the project's baseline
// branch's series (run_record::mainline; the same points the gate's history
// z-score reads). The service re-runs detection on a series's tail whenever
// such a run is stored
// (service/watch.cpp); a change point in the counter's worse direction opens
// an alert.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::model {

enum class alert_status { untriaged, acknowledged, invalid, wontfix, fixed };

std::string_view to_string(alert_status s);
// nullopt for anything but the five names above.
std::optional<alert_status> parse_alert_status(std::string_view s);
// "untriaged | acknowledged | invalid | wontfix | fixed", for error messages.
std::string_view alert_status_names();

// One series of one project.
struct series_key {
    std::string benchmark, counter;
    std::string testbed; // fingerprint
    std::string branch;
};

// A change point as stored: where the new segment starts and how the two
// segments around it differ (stats::change_point, with run identities).
struct change_point_record {
    series_key series;
    std::int64_t run_id = 0; // first run of the new segment
    std::string git_sha;
    std::int64_t created_at = 0;
    double p_value = 1;
    double mean_before = 0, mean_after = 0;
    double median_before = 0, median_after = 0;
    std::optional<double> delta_pct;
    double shift = 0, shift_lower = 0, shift_upper = 0; // Hodges-Lehmann, 95%
};

struct alert {
    std::int64_t id = 0;
    std::string project;
    change_point_record change;
    alert_status status = alert_status::untriaged;
    std::string note;
    std::string changed_by;      // who set status/note last ("" until triaged)
    std::int64_t changed_at = 0; // unix seconds, 0 until triaged
    std::int64_t created_at = 0;
    std::int64_t updated_at = 0; // last time detection moved or re-measured it
};

struct alert_query {
    std::string project;
    std::optional<alert_status> status;
    std::optional<std::string> benchmark, counter;
    std::optional<std::string> testbed; // name or fingerprint
    std::size_t limit = 100;            // newest first
};

struct alert_update {
    alert_status status = alert_status::untriaged;
    std::optional<std::string> note; // nullopt: keep the note
    std::string changed_by;
};

} // namespace perfgate::model
