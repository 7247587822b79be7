// The gate service's shared vocabulary (service/service.hpp): its limits,
// the comparison it answers with, and the free functions of ingest, the
// watch and webhooks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "model/acceptance.hpp"
#include "model/comparison.hpp"
#include "model/token_scope.hpp"
#include "service/commit_queue.hpp"
#include "service/notifier.hpp"
#include "service/watch_queue.hpp"
#include "stats/change_points.hpp"
#include "store/artifacts.hpp"
#include "store/comparisons.hpp"
#include "store/projects.hpp"
#include "store/store.hpp"
#include "store/tokens.hpp"
#include "store/webhooks.hpp"

namespace perfgate::service {

struct comparison {
    std::int64_t id = 0;
    gate::report result;
    // to_json(result) with comparison_id, serialised once when the report is
    // computed or first loaded; the server answers with it as is. Set by
    // service::compare, never null there.
    std::shared_ptr<const std::string> json;
};

// Cost limits of one compare, whoever asks (the server, `perfgate run --db`):
// work and report size grow with the counters compared and the samples
// loaded, and a request of a few bytes can name runs stored earlier. Measured
// on a Debug build: ~0.3 ms and ~750 bytes of report per counter, ~8 us per
// sample loaded and tested.
// 100 benchmarks x 13 counters (perf's default list and the derived ones) is
// 1,300 counters: 4096 leaves room for long -e lists and keeps a report
// near 3 MB and a second of work.
inline constexpr std::size_t max_compare_counters = 4096;
// 100 benchmarks x 13 counters x 30 repetitions x 2 sides is 78,000
// samples; one pair of 50-counter runs at 10,000 repetitions is 1,000,000,
// about 8 s of one core in a Debug build.
inline constexpr std::size_t max_compare_samples = 1'000'000;

// The in-memory cache of recent comparisons (service::compare) holds at
// most this many bytes: a report's JSON plus an estimate of its in-memory
// form. 16 MiB is ~80 typical reports (10 benchmarks x 13 counters: ~100 KB
// of JSON, about as much again in memory).
inline constexpr std::size_t comparison_cache_bytes = std::size_t{16} << 20;
// Larger entries are not cached: one would evict dozens of typical ones, and
// the store still answers their repeats without recomputing.
inline constexpr std::size_t comparison_cache_max_entry_bytes = comparison_cache_bytes / 8;

// The key a comparison is stored under: hex SHA-256 of a canonical encoding
// of the project, the (baseline, candidate) pairs in order and the policy
// (to_json(rules).dump()), prefixed with a format version.
std::string comparison_request_key(const std::string& project,
                                   const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                   const gate::policy& rules);

// The detection the service watches series with: the project's change-point
// settings over the server's defaults (service::change_point_options; without
// either, stats::change_point_options: perfgate's test, window 50, max_p 0.001).
// Each new run re-examines the last watch_tail points of its series: three
// windows, so a change is seen with up to two windows of data on its older
// side, and ingest costs the same at 100 or 100,000 stored runs. Change
// points older than the tail stay as they were found.
inline constexpr std::size_t watch_tail = 150;
// A project's change-point window: at most this many points (as
// `perfgate change-points --window`; the projects table checks the same).
inline constexpr std::int64_t max_change_point_window = 1'000'000;
// An exact count (a deterministic backend's, docs/history.md "Exact
// counts") that moves by more than this fraction is a change point on its
// own point: the gate's default threshold (gate::default_threshold_pct,
// 2%), or the project's change-point min_magnitude when larger.
inline constexpr double exact_step_threshold = gate::default_threshold_pct / 100;
// The exact steps of a series of exact counts, in index order: point i is
// one when it is beyond threshold (relative, min_magnitude's measure) of
// the level before it (the median of the points since the previous step)
// and every point after it so far is beyond that level on the same side.
// No confirming point is needed: an exact count measured again is the same
// number, so the step's own point is the evidence. A later point back
// within the threshold (a revert) takes the step away.
std::vector<std::size_t> exact_steps(std::span<const double> values, double threshold);
// Alert listings: at most this many per request.
inline constexpr std::size_t max_alert_limit = 1000;
// Recent comparisons listings (the dashboard, GET .../comparisons): 20 by
// default, a page's worth; at most 200, which the covering index answers in
// well under a millisecond.
inline constexpr std::size_t default_comparison_limit = 20;
inline constexpr std::size_t max_comparison_limit = 200;
// A project's repository URL: a GitHub or GitLab project URL is under 200
// bytes; 512 leaves room for a self-hosted path (as the store's CHECK).
inline constexpr std::size_t max_repository_url_bytes = 512;
// A git sha given by prefix: at least git's default abbreviation (7 hex
// digits), at most a whole SHA-1 (40).
inline constexpr std::size_t min_sha_prefix = 7;
inline constexpr std::size_t max_sha_prefix = 40;

// Runs loaded for compares, kept in memory (caches.hpp, run_cache): a
// stored run never changes and is never deleted, so an entry is valid for
// as long as it is kept, in every process on the database. A run of 10
// counters x 30 repetitions is ~25 KB: 32 MiB holds ~1,300 of them, a busy
// day of pull requests' baselines and candidates.
inline constexpr std::size_t run_cache_bytes = std::size_t{32} << 20;
inline constexpr std::size_t run_cache_max_entry_bytes = run_cache_bytes / 8;

// The baseline-branch history points compares read (baseline_history.hpp),
// by query: runs older than the candidate never change, so neither do they. 30 points x 13 counters of a compare are ~25 KB.
inline constexpr std::size_t history_cache_bytes = std::size_t{16} << 20;
inline constexpr std::size_t history_cache_max_entry_bytes = history_cache_bytes / 8;

// A repository URL as stored: url without its trailing '/'s, "" for "" (no
// URL). It must be an absolute http:// or https:// URL with a host, at most
// max_repository_url_bytes, of printable ASCII without whitespace, quotes,
// '<', '>', '`' or '\', and without a query or fragment ('?', '#'): pages
// append "/commit/{sha}" to it. Else "ingest.bad_field", the message led by
// `label` ("--repository-url", "field 'repository_url'").
std::string normalize_repository_url(std::string_view label, std::string_view url);
// Alert webhooks (service/webhooks.cpp, docs/history.md "Notifications"):
// a URL at most 2048 bytes (browsers' and proxies' common limit; Slack's are
// about 80), a secret at most 256 bytes (a hex HMAC key of 512 bits is 128),
// at most 16 per project (one per channel or receiver, with room to spare).
inline constexpr std::size_t max_webhook_url_bytes = 2048;
inline constexpr std::size_t max_webhook_secret_bytes = 256;
inline constexpr std::size_t max_webhooks_per_project = 16;
// A webhook URL as given: an absolute http:// or https:// URL with a host,
// at most max_webhook_url_bytes of printable ASCII without whitespace,
// quotes, '<', '>', '`' or '\'. Else "ingest.bad_field", the message led by
// `label` ("--webhook", "field 'url'").
std::string normalize_webhook_url(std::string_view label, std::string_view url);
// Idempotency-Key values: an opaque client token (a UUID is 36 bytes, a
// hex SHA-256 64); the store's column allows 255.
inline constexpr std::size_t max_idempotency_key_bytes = 255;
// The hex SHA-256 of an ingest request's content (every field but source):
// what an idempotency key is recorded with, so a retry of the same request
// matches and another request under the same key does not.
std::string ingest_request_digest(const model::ingest_request& req);

// Whether a run uploaded as req feeds its branch's series, watch, band,
// alerts and baseline reuse (docs/history.md "Which runs feed the series"):
// the upload's `mainline` when given, else a baseline run without a pull
// request number (what fed the series before the field existed). Ingest
// refuses a mainline run with a pull request number ("ingest.bad_field"). The one place an upload becomes a main-line point:
// a token scope that may write the baseline branch's history binds here.
bool mainline_of(const model::ingest_request& req);

// A triage note: a paragraph, not a document.
inline constexpr std::size_t max_alert_note_bytes = 4096;

// The history watch's pieces (service/watch.cpp): the job of a stored run
// (its series with a value), whether its role and branch can be watched at
// all, and the detection itself: re-tests the tail of each series of a run
// of the project's baseline branch, stores change points, opens alerts;
// returns the ids of the alerts opened.
watch_job watch_job_of(const model::run_record& run);
bool watched_role(const model::run_record& run);
// The detection uses the project's change-point settings over `defaults`
// (service::change_point_options).
std::vector<std::int64_t> watch_series(store::store& db, const watch_job& job,
                                       const stats::change_point_options& defaults = {});
// A project's stored change-point settings over `defaults`.
// Posts each alert of ids (just opened by the watch) to n, when there is one.
void notify_opened(notifier* n, store::store& db, const std::string& project, const std::vector<std::int64_t>& ids);
stats::change_point_options merged_change_point_options(const store::change_point_settings& stored,
                                                        const stats::change_point_options& defaults);

// compare(), for perfgate serve. With commit_in_background(), a fresh
// report is handed to the committer (commit_queue.hpp) instead of being
// stored by this thread: compare_later returns nullopt, and done is
// called once, on the committer's thread, after the report is stored
// (with the comparison) or failed to be (with the store's error and
// null). done must not throw. A report the service holds already is
// returned, and an error found before the write is thrown, as compare()
// does; done is then not called. Without commit_in_background, this is
// compare().
using compare_done = std::function<void(std::exception_ptr error, const comparison* result)>;

// A server token that opened its project (service::tokens::authorize): what a
// request may do, and whom its writes are recorded as (run_record::written_by).
struct token_grant {
    std::int64_t id = 0;
    std::string name;
    model::scope_set scopes;
    [[nodiscard]] model::token_ref ref() const { return {id, name}; }
};
// "auth.missing_scope" (403) naming the scope, the token and `what` asked
// ("POST /api/v1/projects/{project}/runs"), unless grant's scopes allow
// `needed` (model::scope_set::grants).
void require_scope(const token_grant& grant, model::scope needed, std::string_view what);

} // namespace perfgate::service
