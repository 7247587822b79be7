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

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/token_scope.hpp"

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

// What `perfgate bisect --alert` found for an alert, stored on it (store
// migration 020 / pg 016; PUT .../alerts/{id}/culprit, docs/bisect.md
// "Stored on the alert"). found: every part of the change has its commit;
// undecided: a range is left (detail says which); no_change: the range's
// ends measure alike.
enum class culprit_status { found, undecided, no_change };
std::string_view to_string(culprit_status s);
// nullopt for anything but "found", "undecided" and "no_change".
std::optional<culprit_status> parse_culprit_status(std::string_view s);
std::string_view culprit_status_names();

// One counter's change from a culprit's parent to the culprit (a gated
// counter of the bisection's own pair); nullopt: the gate had no number.
struct culprit_effect {
    std::string counter, unit;
    std::string status; // the gate's: regression, improvement, unchanged, inconclusive, ...
    std::optional<double> before, after, delta_pct;
    std::optional<double> ci_lower_pct, ci_upper_pct; // interval of the shift, % of before
};

// A commit that made the change or a part of it.
struct culprit_commit {
    std::string sha, subject, author; // author: "Name <mail>"
    double share = 1;                 // of the range's change, as the search measured it
    std::vector<culprit_effect> effects;
};

// Limits of one stored result (the service checks them; docs/http-api.md
// "Culprit"): a split change has two or three parts in practice, and a
// gate gates a dozen counters.
inline constexpr std::size_t max_culprit_commits = 16;
inline constexpr std::size_t max_culprit_effects = 64;
// A commit's subject and author, cut by perfgate bisect before it sends
// them (git allows any length).
inline constexpr std::size_t max_culprit_text_bytes = 300;
inline constexpr std::size_t max_culprit_detail_bytes = 2000;

struct alert_culprit {
    culprit_status status = culprit_status::undecided;
    std::string backend, counter;         // what decided each step
    std::string good_sha, bad_sha;        // the range bisected: (good, bad]
    std::int64_t commits = 0;             // in the range, bad included
    std::int64_t steps = 0;               // decisions taken
    std::int64_t builds = 0;              // commits built
    std::vector<culprit_commit> culprits; // empty unless found (or a part found)
    std::string detail;                   // what was left open, one line per range; "" when none
    std::int64_t stored_at = 0;           // unix seconds
    std::optional<token_ref> written_by;  // the server token that stored it; nullopt: the CLI on a database
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
    // The stored bisection (store::alerts::load and list read it; open()
    // does not); nullopt: none stored.
    std::optional<alert_culprit> culprit;
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
