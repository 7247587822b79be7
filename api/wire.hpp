// The wire formats of perfgate's HTTP API (docs/http-api.md), shared
// by the server (server/router.cpp) and every client of it
// (client/server_client.hpp): one module, so the two sides cannot drift.
//
// Request bodies are parsed by parse_request_body() alone, which bounds their
// nesting. The other parsing functions take a document the caller has parsed
// and throw perfgate::error naming the field that was wrong:
// "ingest.bad_field" for a request (-> 400), "server.bad_response" for a
// response (-> CLI exit 4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/acceptance.hpp"
#include "model/alert.hpp"
#include "model/comparison.hpp"
#include "model/qualification.hpp"
#include "model/run.hpp"

namespace perfgate::api {

// Upper bound for ?limit= on history: a trend chart needs hundreds of points,
// not millions; bounds the response size.
inline constexpr std::size_t max_history_limit = 10000;
// Upper bound on the pairs (benchmarks) of one compare request: one
// google/benchmark binary holds 50-500 benchmarks, each a pair, and the
// suite is one gate (docs/inputs.md); 1000 leaves room for generated
// argument ranges. Over it: "compare.too_many_pairs" (413), before any run
// is read. The work of the pairs is bounded by the service
// (max_compare_counters and max_compare_samples in service/service.hpp),
// not by their number: 1000 benchmarks of 4 counters are 4000 counters.
inline constexpr std::size_t max_compare_pairs = 1000;

// Nesting limit of a request body: objects and arrays, the body itself is
// level 1. The deepest real request is a compare policy at 6 levels
// (body, policy, benchmarks, B, counters, C) and check-env's `environment`
// needs 4; 32 is far above both. nlohmann's serialiser and our own walks
// recurse once per level, so an unbounded depth (a 100k-deep `[[[[...`, a few
// hundred KB) would overflow the stack and kill the server.
inline constexpr std::size_t max_json_depth = 32;

using run_pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;

// --- request bodies -------------------------------------------------------------
// The one parser of JSON request bodies: the body as a JSON object. Parsing
// stops at the first container nested deeper than max_json_depth, before the
// rest is read. Errors: "http.too_deep" (-> 400) naming the limit;
// "http.bad_json" (-> 400) for a syntax error, with its line and column, or a
// body that is not an object.
nlohmann::json parse_request_body(std::string_view body);
// The message of a nlohmann exception without its "[json.exception.parse_error.101]"
// tag and "parse error at" lead: "line 1, column 7: syntax error while parsing
// value - ...", "type must be number, but is string". Other text is returned
// as is.
std::string json_error_text(std::string_view what);

// --- POST /api/v1/projects/{project}/runs ---------------------------------
// {benchmark?, role, git_sha, branch, pr?, testbed?: {name, cpu, cores,
// kernel, fingerprint?}, backend?, environment?: {...}, perf_csv}.
nlohmann::json to_json(const model::ingest_request& in);
// The request's fields; project and source are the caller's. Field types are
// checked here, values by the service (capture/names.hpp). A field not listed
// above, at the top level or in `testbed`, is "ingest.bad_field" naming it
// and the known ones (`environment` is free-form).
model::ingest_request ingest_request_from_json(const nlohmann::json& doc);
// 201 {run_id, samples, counters, warnings, alerts}.
nlohmann::json to_json(const model::ingest_result& r);
model::ingest_result ingest_result_from_json(const nlohmann::json& doc);

// --- POST /api/v1/projects/{project}/compare --------------------------------
// {baseline_run: [ids], candidate_run: [ids], policy?}; the server also takes
// single ids and {pairs: [[b, c], ...]}. policy_json: gate::to_json(policy),
// or null for the server's default.
// baseline: the request's "baseline_ref" (docs/http-api.md), kept in the
// stored report; none when null.
nlohmann::json compare_request_json(const run_pairs& pairs, const nlohmann::json* policy_json,
                                    const model::baseline_choice* baseline = nullptr);
// The pairs of a compare request, 1..max_compare_pairs of them, in any of its
// three spellings. Fields other than baseline_run, candidate_run, pairs and
// policy are "ingest.bad_field"; the policy is the caller's to parse.
run_pairs compare_pairs_from_json(const nlohmann::json& doc);
// The request's "baseline_ref" object, if any: {rule, baseline_sha,
// base_tip_sha (may be null), head_sha}; rule merge-base, base-tip or
// parent, each sha 40 or 64 lowercase hex digits. Else "ingest.bad_field"
// naming the member.
std::optional<model::baseline_choice> compare_baseline_from_json(const nlohmann::json& doc);

// --- GET /api/v1/projects/{project}/history ---------------------------------
// {points: [{run_id, git_sha, branch, role, created_at, n, median, mean,
// stddev, cov, min, max, testbed, testbed_name, change_point}]}, oldest
// first (testbed is the fingerprint); or CSV with a header line (run_id ..
// cov, role; without min .. change_point: the CSV columns are a contract).
// history_from_json accepts points without role, min .. change_point (older
// servers).
//
// Which runs a series shows unless asked otherwise (docs/history.md): the
// runs that feed the branch's series (model::run_record::mainline), of
// either role, what the watch sees. ?role= and `perfgate history --role`:
// mainline (default), baseline, candidate or all; ?branch= and --branch: a
// branch, or all_branches ("*") for every one.
inline constexpr std::string_view mainline_runs = "mainline";
inline constexpr std::string_view default_history_role = mainline_runs;
inline constexpr std::string_view all_roles = "all";
inline constexpr std::string_view all_branches = "*";
// True for mainline, baseline, candidate and all.
bool is_history_role(std::string_view role);
// The query's role filter for a checked role: nullopt for "all" and
// "mainline" (which selects by history_query::mainline_only instead).
std::optional<std::string> history_role_filter(std::string_view role);
// Sets q's role filter and mainline_only for a checked role.
void select_history_role(model::history_query& q, std::string_view role);
nlohmann::json history_to_json(const std::vector<model::history_point>& points);
std::vector<model::history_point> history_from_json(const nlohmann::json& doc);
std::string history_to_csv(const std::vector<model::history_point>& points);

// --- GET /api/v1/projects/{project}/baseline-run?benchmark=..&git_sha=..&
//     testbed=..&backend=..&toolchain=..[&branch=..] -------------------------
// {"run": {run_id, git_sha, branch, role, toolchain, created_at, counters:
// [names]}} or {"run": null} (docs/http-api.md#baseline-run).
nlohmann::json to_json(const model::reusable_run& r);
// The answer's "run"; nullopt for null. "server.bad_response" for anything
// else (a field missing or of the wrong type, a run id <= 0).
std::optional<model::reusable_run> reusable_run_from_json(const nlohmann::json& doc);

// --- GET /api/v1/projects/{project}/comparisons[?limit=N] --------------------
// {repository_url, comparisons: [{id, created_at, verdict, benchmarks,
// baseline: {run_id, git_sha, branch}, candidate: {run_id, git_sha, branch}}]},
// newest first. repository_url (the project's, for commit links
// {repository_url}/commit/{git_sha}), verdict and benchmarks are null when
// unknown (model/comparison.hpp).
struct comparison_list {
    std::optional<std::string> repository_url;
    std::vector<model::comparison_summary> comparisons;
};
nlohmann::json to_json(const comparison_list& list);
comparison_list comparison_list_from_json(const nlohmann::json& doc);

// --- alerts and change points (docs/history.md) --------------------------------
// An alert: {id, benchmark, counter, testbed, branch, run_id, git_sha,
// run_created_at, p_value, mean_before, mean_after, median_before,
// median_after, delta_pct, shift, shift_ci: [lo, hi], status, note,
// changed_by, changed_at, created_at, updated_at}; lists: {alerts: [...]}.
nlohmann::json to_json(const model::alert& a);
nlohmann::json alerts_to_json(const std::vector<model::alert>& alerts);
model::alert alert_from_json(const nlohmann::json& doc);
std::vector<model::alert> alerts_from_json(const nlohmann::json& doc);
// An alert also carries "culprit": null, or what perfgate bisect stored on
// it (docs/bisect.md "Stored on the alert"): the request's fields below and
// {stored_at, written_by}.
nlohmann::json to_json(const model::alert_culprit& c);
// PUT .../alerts/{id}/culprit body: {status, backend, counter, good, bad,
// commits, steps, builds, culprits: [{sha, subject, author, share,
// effects: [{counter, unit, status, before, after, delta_pct, ci_pct}]}],
// detail?}. "ingest.bad_field" naming the field for an unknown or missing
// field, a wrong type or an unknown status; the service checks the values.
model::alert_culprit culprit_request_from_json(const nlohmann::json& doc);
// The largest PUT .../culprit body (413 http.body_too_large beyond it):
// max_culprit_commits x max_culprit_effects effects of ~500 bytes each.
inline constexpr std::size_t max_culprit_body_bytes = std::size_t{512} << 10;
nlohmann::json culprit_request_json(const model::alert_culprit& c);
// PATCH .../alerts/{id} body: {status, note?}. "ingest.bad_field" for other
// fields or wrong types, "alert.bad_status" naming the allowed statuses.
model::alert_update alert_update_from_json(const nlohmann::json& doc);
nlohmann::json to_json(const model::alert_update& u);
// A stored change point: {benchmark, counter, testbed, branch, run_id,
// git_sha, created_at, p_value, mean_before, mean_after, median_before,
// median_after, delta_pct, shift, shift_ci}; lists: {change_points: [...]}.
nlohmann::json change_points_to_json(const std::vector<model::change_point_record>& points);
std::vector<model::change_point_record> change_points_from_json(const nlohmann::json& doc);

// --- webhooks (docs/http-api.md#webhooks) ----------------------------------
// POST .../webhooks body: {url, format?, secret?}, strings (format and
// secret may be null or absent); "ingest.bad_field" for another field (a
// misspelt "secrte" would otherwise add an unsigned webhook), a missing url
// or a wrong type (the service checks the values).
struct webhook_request {
    std::string url;
    std::string format = "json";
    std::string secret; // "": unsigned
};
webhook_request webhook_request_from_json(const nlohmann::json& doc);
nlohmann::json to_json(const webhook_request& r);

// --- acceptances (docs/http-api.md#accept-a-regression) -----------------------
// POST .../acceptances body: {head_sha, login, reason}, all strings;
// "ingest.bad_field" for other fields, a missing one or a wrong type (the
// service checks the values).
struct acceptance_request {
    std::string head_sha, login, reason;
};
acceptance_request acceptance_request_from_json(const nlohmann::json& doc);
nlohmann::json to_json(const acceptance_request& r);
// A stored acceptance: {comparison_id, head_sha, login, reason,
// accepted_at}; the answer of POST .../acceptances and the "acceptance"
// member of GET .../comparisons/{id} (null when none).
nlohmann::json to_json(const model::acceptance& a);
model::acceptance acceptance_from_json(const nlohmann::json& doc);

// --- qualifications (docs/http-api.md#qualifications) ------------------------
// POST .../qualifications body ("qualification_request"): {testbed_fingerprint,
// testbed?, benchmark, backend, date (RFC 3339 UTC, parse_timestamp),
// counters: [{counter, threshold_pct, detects_80_pct (number or null),
// detects_95_pct (number or null), reaches_threshold, deterministic}]};
// "ingest.bad_field" naming the field for another field, a missing one or a
// wrong type (the service checks the values and the limits).
model::qualification qualification_request_from_json(const nlohmann::json& doc);
nlohmann::json qualification_request_to_json(const model::qualification& q);
// A stored qualification ("qualification"): the request's fields with date
// as given back, and id, qualified_at, stored_at, written_by; GET
// .../qualifications answers {"qualifications": [...]}.
nlohmann::json to_json(const model::qualification& q);
nlohmann::json to_json(const std::vector<model::qualification>& list);
std::vector<model::qualification> qualifications_from_json(const nlohmann::json& doc);

// ?since= and `perfgate history --since`: unix seconds (digits with an
// optional '-'), or an ISO 8601 UTC date or date-time in RFC 3339's strict
// form: "2026-11-22", "2026-11-22T02:11:05Z" (two-digit fields, upper-case T
// and Z, a real calendar date with leap years, hours 00-23, minutes 00-59,
// seconds 00-59 or 60 only as the leap second 23:59:60). nullopt for
// anything else ("2026-02-31", "2026-1-1", "9999-12-31T99:99:99Z", an offset,
// fractions, trailing text).
std::optional<std::int64_t> parse_timestamp(std::string_view text);

// --- errors -----------------------------------------------------------------
// {"error": {"id", "message"}}.
nlohmann::json error_json(std::string_view id, std::string_view message);
// The (id, message) of an error body, or nullopt when body is not one.
std::optional<std::pair<std::string, std::string>> error_from_body(std::string_view body);

// JSON text of j, invalid UTF-8 replaced rather than thrown on: error
// messages may quote a user's bytes, and a report a benchmark's stderr.
std::string dump(const nlohmann::json& j);

} // namespace perfgate::api
