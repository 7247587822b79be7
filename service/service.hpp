// The gate service: the one facade that both the CLI's local mode and the
// HTTP server call, so a verdict is the same on a laptop and on a server.
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

namespace detail {
class baseline_history; // service/baseline_history.hpp
struct compare_inputs;  // service/compare_engine.cpp
} // namespace detail

class service {
public:
    explicit service(store::store& db);

    // Validates (role, names), parses perf_csv, stores one run; a harness's
    // output (capture/harness.hpp, detected or named by input_format) stores
    // one run per benchmark, all in one transaction, and the result lists
    // them (run_ids, benchmarks); a benchmark the harness reported failed
    // is not stored (a warning names it). Nothing is stored on error.
    // Errors: "ingest.bad_csv", "ingest.bad_input", "ingest.bad_field",
    // "ingest.too_many_counters" (over max_counters_per_run, perf_csv.hpp),
    // "ingest.too_many_repetitions" (over max_repetitions).
    // With an idempotency key (the HTTP API's Idempotency-Key header): the
    // first request with the key stores its run; a repeat of the same
    // request (ingest_request_digest) stores nothing and returns the first
    // run's id with replayed set, whichever process stored it; the request
    // is parsed and checked again either way. "ingest.bad_idempotency_key"
    // for a key that is not 1 to max_idempotency_key_bytes printable ASCII
    // bytes; "ingest.idempotency_conflict" for a key the project has seen
    // with another request.
    model::ingest_result ingest(const model::ingest_request& req,
                                const std::optional<std::string>& idempotency_key = std::nullopt);
    // For the runner, which already holds samples (incl. wall-time etc.).
    // The same checks and limits; repetition numbers must lie in
    // [0, max_repetitions).
    model::ingest_result ingest_run(model::run_record run);

    // Compares pairs of (baseline run, candidate run) of one project as one
    // gate (p-values adjusted across all of them), fills in history z-scores
    // from the baseline branch, stores and returns the report.
    // Idempotent: the same (project, pairs, policy) again returns the stored
    // report and comparison id without computing or storing anything
    // (comparison_request_key, store::comparisons::find).
    // Errors: "compare.not_found", "compare.mismatch", "compare.too_large"
    // when the runs hold more than max_compare_counters counters (per pair,
    // the counters of either run) or max_compare_samples samples: found while
    // loading the runs, so at most one pair beyond the limit is read.
    // Reports are kept in memory by comparison_cache, bounded in bytes.
    // baseline: which commit the baseline build is and by which rule, kept
    // in the stored report ("baseline_ref"); not part of the request key.
    comparison compare(const std::string& project, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                       const gate::policy& rules, const std::optional<model::baseline_choice>& baseline = std::nullopt);

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
    std::optional<comparison> compare_later(const std::string& project,
                                            const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                            const gate::policy& rules, compare_done done,
                                            const std::optional<model::baseline_choice>& baseline = std::nullopt);
    // Stores compare_later's reports on a committer thread, many in one
    // transaction (group commit, commit_queue.hpp). Copies of the service
    // made afterwards share it. drain_commits waits until every report handed
    // over so far is stored and answered; commit_stats counts (all 0 without
    // a committer).
    void commit_in_background(std::size_t max_batch = 64);
    void drain_commits() const;
    [[nodiscard]] commit_queue::counts commit_stats() const;

    // Projects and tokens. authorize: the token belongs to `project`, else
    // "auth.bad_token" (unknown or revoked) or "auth.forbidden" (another
    // project's). require_project: "project.not_found" unless it exists
    // (and "ingest.bad_field" for a malformed name).
    // Returns the token's id (store::tokens::lookup; an expired token is
    // unknown).
    std::int64_t authorize(std::string_view token, const std::string& project) const;
    // Token `id` of project still exists and has not expired: a dashboard
    // session re-checks its token with this, so revoking ends it.
    [[nodiscard]] bool token_live(std::int64_t id, const std::string& project) const;
    void require_project(const std::string& project) const;
    // /healthz: throws what keeps the store from serving (store::maintenance::check_health).
    void check_health() const;
    [[nodiscard]] bool project_exists(const std::string& project) const;
    void ensure_project(const std::string& project);
    // A new token of the project (created if needed), shown once.
    // expires_at: unix seconds, nullopt for never.
    std::string create_token(const std::string& project, std::string_view name,
                             std::optional<std::int64_t> expires_at = std::nullopt);
    // A project's tokens (never the secret); "project.not_found".
    [[nodiscard]] std::vector<store::token_info> tokens(const std::string& project) const;
    // Revokes one token of project named by its id (decimal) or by the token
    // itself; returns its id. "token.not_found" if the project has none such.
    std::int64_t revoke_token(const std::string& project, std::string_view id_or_token);

    // The stored report, with each benchmark's stored attribution
    // (store_attribution) in its attribution_info.
    [[nodiscard]] std::optional<gate::report> load_comparison(const std::string& project, std::int64_t id) const;

    // Flame graphs stored with a comparison (perfgate run --profile with
    // --server; service/artifacts.cpp). The SVG must be UTF-8 text that
    // starts as an SVG document ("<svg" or "<?xml", after whitespace), at
    // most max_flame_graph_bytes; storing one again replaces it. Errors:
    // "artifact.too_large" above the limit, "artifact.bad_svg",
    // "ingest.bad_field" for a malformed benchmark name,
    // "artifact.bad_benchmark" for a benchmark the comparison does not have,
    // "artifact.too_many" beyond the store's per-comparison limits
    // (store::artifacts::max_artifacts_per_comparison, max_artifact_bytes_per_comparison),
    // "comparison.not_found" (also for another project's comparison).
    static constexpr std::size_t max_flame_graph_bytes = store::artifacts::max_artifact_bytes;
    void store_flame_graph(const std::string& project, std::int64_t comparison_id, const std::string& benchmark,
                           std::string_view svg);
    [[nodiscard]] std::optional<std::string> flame_graph(const std::string& project, std::int64_t comparison_id,
                                                         const std::string& benchmark) const;
    // The comparison's benchmarks that have a flame graph, by name.
    [[nodiscard]] std::vector<std::string> flame_graph_benchmarks(const std::string& project,
                                                                  std::int64_t comparison_id) const;
    // Attribution stored with a comparison (perfgate run after its
    // comparison: callgrind's, --profile's; service/artifacts.cpp), so that
    // load_comparison's report and the dashboard say where a change came
    // from. The body is the benchmark's report "attribution" object
    // (docs/report.md#attribution) as JSON, at most max_attribution_bytes,
    // each table ("top") at most max_attribution_functions rows; it is
    // stored re-serialised, replacing one stored before. Errors:
    // "artifact.too_large" above the byte limit, "artifact.bad_attribution"
    // for what is not such an object (naming the member) or more rows;
    // "artifact.bad_benchmark" for a benchmark the comparison does not have;
    // "artifact.too_many" as for flame graphs; "ingest.bad_field" for a
    // malformed benchmark name; "comparison.not_found".
    static constexpr std::size_t max_attribution_bytes = std::size_t{1} << 20;
    static constexpr std::size_t max_attribution_functions = 100;
    void store_attribution(const std::string& project, std::int64_t comparison_id, const std::string& benchmark,
                           std::string_view attribution_json);
    // Acceptances (service/acceptances.cpp, docs/github.md "Accepting a
    // regression"). accept_comparison records login's acceptance of the
    // project's newest comparison whose candidate is commit head_sha,
    // replacing an earlier one of it; the stored acceptance. Errors (nothing
    // stored): "ingest.bad_field" naming head_sha (not 40 or 64 lowercase hex
    // digits), login (not a GitHub login, model::is_github_login) or reason
    // (not as model::clean_acceptance_reason leaves it: over
    // model::max_acceptance_reason_bytes, control characters, invalid UTF-8);
    // "accept.no_comparison" when no comparison has that candidate commit;
    // "project.not_found".
    model::acceptance accept_comparison(const std::string& project, std::string_view head_sha, std::string_view login,
                                        std::string_view reason);
    // The acceptance of a comparison, if any.
    [[nodiscard]] std::optional<model::acceptance> acceptance(const std::string& project,
                                                              std::int64_t comparison_id) const;
    // The project's most recent comparisons, newest first: id, time,
    // verdict, and the commits of the runs compared (store::comparisons::recent).
    // "project.not_found"; "query.bad_value" for a limit outside
    // [1, max_comparison_limit].
    [[nodiscard]] std::vector<model::comparison_summary> recent_comparisons(
        const std::string& project, std::size_t limit = default_comparison_limit) const;
    // The (baseline, candidate) run pairs that compare base_ref with
    // head_ref, for compare(). A ref is a run id (all digits; a number of 7
    // or more digits that is no run's id is read as a sha prefix) or a git sha
    // prefix of min_sha_prefix..max_sha_prefix hex digits (either case)
    // naming one commit, which stands for the project's runs of that commit:
    // the newest run of each (benchmark, testbed). A run id stands for
    // itself: paired with a sha, it is paired with that commit's run of its
    // benchmark and testbed; two run ids are one pair as given (compare()
    // checks their benchmarks). Runs pair up by (benchmark, testbed
    // fingerprint); a benchmark measured on several testbeds at both refs is
    // paired on the testbed of its newest head run (a gate takes each
    // benchmark once). Pairs are ordered by benchmark name.
    // Errors, each naming "base" or "head" and the ref: "compare.bad_ref" for
    // a ref that is neither; "compare.not_found" for a run id or sha the
    // project does not have; "compare.ambiguous_ref" for a prefix of several
    // commits (naming up to 3); "compare.mismatch" when no benchmark was
    // measured on one testbed at both refs; and "project.not_found".
    // O(log n + k) for the k runs of the commits named (store::runs::by_sha).
    [[nodiscard]] std::vector<std::pair<std::int64_t, std::int64_t>> pairs_for(const std::string& project,
                                                                               std::string_view base_ref,
                                                                               std::string_view head_ref) const;
    // One stored run of the project, with its samples; nullopt if none.
    [[nodiscard]] std::optional<model::run_record> run(const std::string& project, std::int64_t id) const;
    // The stored run a deterministic backend reuses as its baseline
    // (store::runs::find_reusable); "store.not_found" for an unknown project.
    [[nodiscard]] std::optional<model::reusable_run> find_reusable_run(const model::reusable_run_query& q) const;
    // Validates the query's names ("ingest.bad_field"); unknown names give
    // no points.
    [[nodiscard]] std::vector<model::history_point> history(const model::history_query& q) const;
    [[nodiscard]] std::vector<model::benchmark_info> benchmarks(const std::string& project) const;

    // Watching the history (service/watch.cpp). After storing a run that
    // feeds the project's baseline branch's series (run_record::mainline),
    // ingest re-runs change-point detection on the tail (watch_tail points)
    // of each of the run's series (one per counter with a value; exact
    // counts also by exact_steps) and opens alerts for changes in a gated
    // counter's worse direction; ingest_result::alerts lists them. A failure
    // there never loses the stored run: it becomes a warning.
    // watch_in_background moves that detection to a worker thread
    // (watch_queue): ingest then returns once the run is stored, with no
    // alerts listed, and report hears of each job done (perfgate serve logs
    // alerts and failures). Copies of the service share the worker.
    void watch_in_background(watch_queue::reporter report);
    // Alert notifications (service/notifier.hpp): once set, every alert the
    // watch opens and every status change update_alert makes is posted to
    // the project's webhooks by `n`'s thread. Call it before
    // watch_in_background (whose worker keeps the notifier it was started
    // with). Without one (the CLI on a database) nothing is posted: delivery
    // happens from perfgate serve.
    void notify_with(std::shared_ptr<notifier> n) { notifier_ = std::move(n); }
    [[nodiscard]] std::optional<notifier::counts> notify_stats() const
    {
        return notifier_ ? std::optional(notifier_->stats()) : std::nullopt;
    }
    // Waits for the background watch to finish every job queued so far (no-op
    // without one); and its counts (all 0 without one).
    void drain_watch() const;
    [[nodiscard]] watch_queue::counts watch_stats() const;
    [[nodiscard]] std::string baseline_branch(const std::string& project) const;
    // The store's generation (store::generation): what the dashboard's page
    // cache keys on.
    [[nodiscard]] std::uint64_t generation() const noexcept { return db_.generation(); }
    // "project.not_found", "ingest.bad_field" for a malformed branch name.
    void set_baseline_branch(const std::string& project, const std::string& branch);
    // The project's repository URL, nullopt when unset. set_repository_url
    // stores normalize_repository_url("field 'repository_url'", url) ("" clears
    // it). "project.not_found", "ingest.bad_field".
    [[nodiscard]] std::optional<std::string> repository_url(const std::string& project) const;
    void set_repository_url(const std::string& project, std::string_view url);
    // A project's alert webhooks. add_webhook checks the URL
    // (normalize_webhook_url, labelled url_label), the format ("json" or
    // "slack") and the secret (at most max_webhook_secret_bytes, no control
    // bytes; "" is no secret), and the project's count
    // (max_webhooks_per_project); its id. "project.not_found",
    // "ingest.bad_field" naming the field. webhooks never returns a secret.
    std::int64_t add_webhook(const std::string& project, std::string_view url, std::string_view format,
                             std::string_view secret, std::string_view url_label = "field 'url'");
    [[nodiscard]] std::vector<store::webhook_info> webhooks(const std::string& project) const;
    // false if the project has no such webhook; "project.not_found".
    bool remove_webhook(const std::string& project, std::int64_t id);
    // How the history watch detects change points in a project's series:
    // its settings (set_change_point_settings) over the server's defaults
    // (set_change_point_defaults; stats::change_point_options' defaults
    // unless set). set_change_point_settings changes the fields that have
    // a value; "project.not_found", "stats.bad_option" for an unknown method
    // or a value change_points() refuses (the message names the field).
    // set_change_point_defaults: "stats.bad_option"; call it before
    // watch_in_background, whose worker keeps the defaults it was started with.
    [[nodiscard]] stats::change_point_options change_point_options(const std::string& project) const;
    [[nodiscard]] store::change_point_settings change_point_settings(const std::string& project) const;
    void set_change_point_settings(const std::string& project, const store::change_point_settings& settings);
    void set_change_point_defaults(const stats::change_point_options& defaults);
    [[nodiscard]] const stats::change_point_options& change_point_defaults() const noexcept
    {
        return change_point_defaults_;
    }
    // Alerts, newest first. "ingest.bad_field" for malformed names, "query.bad_value"
    // for a limit outside [1, max_alert_limit].
    [[nodiscard]] std::vector<model::alert> alerts(const model::alert_query& q) const;
    // "alert.not_found" when the project has no such alert.
    [[nodiscard]] model::alert alert(const std::string& project, std::int64_t id) const;
    // Sets status and (optionally) note. "alert.not_found"; "alert.bad_note"
    // for a note over max_alert_note_bytes or not UTF-8-clean text.
    model::alert update_alert(const std::string& project, std::int64_t id, const model::alert_update& u);
    // Stored change points of one series; testbed (name or fingerprint) and
    // branch optional (branch defaults to the project's baseline branch).
    [[nodiscard]] std::vector<model::change_point_record> change_points(
        const std::string& project, const std::string& benchmark, const std::string& counter,
        const std::optional<std::string>& testbed, const std::optional<std::string>& branch) const;

    [[nodiscard]] std::int64_t store_size_bytes() const;
    // The comparison cache: bytes charged (at most comparison_cache_bytes)
    // and entries.
    [[nodiscard]] std::size_t cached_comparison_bytes() const;
    [[nodiscard]] std::size_t cached_comparisons() const;
    // The run cache: bytes charged (at most run_cache_bytes) and runs.
    [[nodiscard]] std::size_t cached_run_bytes() const;
    [[nodiscard]] std::size_t cached_runs() const;
    // The history cache: queries kept.
    [[nodiscard]] std::size_t cached_histories() const;

private:
    // "comparison.not_found" unless project has comparison_id;
    // "artifact.bad_benchmark" unless its report has benchmark.
    void require_benchmark(const std::string& project, std::int64_t comparison_id, const std::string& benchmark) const;

    // ingest_run's checks and store; the run is stored under key (with the
    // request's digest) when one is given.
    model::ingest_result store_checked(model::run_record run, const std::optional<std::string>& key,
                                       const std::string& digest);
    // The same for the runs of one upload, in one transaction.
    model::ingest_result store_all_checked(std::vector<model::run_record> runs, const std::optional<std::string>& key,
                                           const std::string& digest);

    // Reports this service stored or found by request key, most recently
    // used first (see caches.hpp). Shared by copies of the service.
    struct comparison_cache;
    // Runs a compare loaded, with their samples, by (project, id).
    struct run_cache;
    // History points of compares' series, by query.
    struct history_cache;
    struct loaded_run;
    struct pending_comparison;
    // The compare engine (compare_engine.cpp). compare() up to the write: a
    // stored or cached report, or a fresh one to store.
    std::variant<comparison, pending_comparison> prepare_compare(
        const std::string& project, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
        const gate::policy& rules, const std::optional<model::baseline_choice>& baseline) const;
    // The report stored under key, now also in the comparison cache.
    std::optional<comparison> stored_comparison(const std::string& project, const std::string& key) const;
    // The runs of pairs, loaded and checked against the compare limits; each
    // pair's baseline series added to hist.
    detail::compare_inputs load_pairs(const std::string& project,
                                      const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                      detail::baseline_history& hist) const;
    static comparison finish_comparison(comparison_cache& recent, comparison out, std::size_t id_at,
                                        store::comparison_row& row, std::int64_t id);
    std::shared_ptr<const loaded_run> load_for_compare(const std::string& project, std::int64_t id) const;

    store::store& db_;
    std::shared_ptr<comparison_cache> recent_;
    std::shared_ptr<run_cache> runs_;
    std::shared_ptr<history_cache> histories_;
    std::shared_ptr<watch_queue> watcher_;
    std::shared_ptr<notifier> notifier_;
    std::shared_ptr<commit_queue> committer_;
    stats::change_point_options change_point_defaults_;
};

} // namespace perfgate::service
