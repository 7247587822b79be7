// The error-id catalogue: every perfgate::error id, the HTTP status the
// server answers it with, the exit code the CLI ends with, and what it means.
//
// It is the one table both doors read: server::status_for (server/router.cpp)
// and exit_code_for (model/exit_code.cpp). docs/errors.md is generated from
// it (model/errors_doc.cpp, build target errors_doc), and
// tests/test_errors.cpp fails on an id used in the sources that is not here,
// or an entry here that no source uses.
//
// An id is "<area>.<what>", lowercase, e.g. "ingest.bad_csv"; the one
// exception is "internal". Ids are part of the API: clients and CI scripts
// match on them, so an id is never renamed or reused for another meaning.
//
// The status is what the server answers when the error reaches it. Ids that
// only the CLI meets (usage.*, input.*, measure.*, ...) keep the status the
// server would answer if one ever did, so that the two doors never disagree.
//
// Adding an id: add its constant to model/error_ids.hpp and its entry here
// (both in its area), throw it as error(errors::area_what, "message naming
// the file, line or field"), then `cmake --build B --target errors_doc`.
#pragma once

#include "model/error_ids.hpp"
#include "model/exit_code.hpp"

#include <array>
#include <string_view>

namespace perfgate {

struct error_entry {
    error_id id;              // errors::area_what, "<area>.<what>"
    unsigned http_status;     // 4xx: the client's to fix; 5xx: the server's
    exit_code exit;           // exit_usage (2) or exit_measurement (4)
    std::string_view summary; // one sentence, for docs/errors.md
};

// An id not in the catalogue is answered like a bug: HTTP 500, exit 4.
inline constexpr unsigned unknown_error_status = 500;
inline constexpr exit_code unknown_error_exit = exit_measurement;

// clang-format off
inline constexpr auto error_catalogue = std::to_array<error_entry>({
    // usage.*: the command line is wrong.
    {errors::usage_bad_arguments, 400, exit_usage, "The command's positional arguments are wrong (perfgate change-points takes one FILE)."},
    {errors::usage_bad_cpus, 400, exit_usage, "A CPU list (--cpus) does not parse, has a reversed range, or names a CPU out of range."},
    {errors::usage_bad_event, 400, exit_usage, "An event perf (or libpfm4, for --backend native) does not know, or a modifier the backend does not take."},
    {errors::usage_bad_subcommand, 400, exit_usage, "A command that takes a subcommand (alerts, db, token) got none or one it does not know."},
    {errors::usage_bad_value, 400, exit_usage, "An option's value is malformed or out of range; the message names the option and what it expects."},
    {errors::usage_conflict, 400, exit_usage, "Two options that exclude each other, or an option that applies only together with another."},
    {errors::usage_file_exists, 400, exit_usage, "perfgate db backup was given a file that exists; it never overwrites one."},
    {errors::usage_missing_argument, 400, exit_usage, "A required positional argument is missing (perfgate upload FILE)."},
    {errors::usage_missing_option, 400, exit_usage, "A required option is missing (no --server nor --db, --server without --project or a token, ...)."},
    {errors::usage_missing_value, 400, exit_usage, "An option that takes a value was given none."},
    {errors::usage_repeated_option, 400, exit_usage, "An option that may be given once was given twice."},
    {errors::usage_unexpected_argument, 400, exit_usage, "A positional argument the command does not take."},
    {errors::usage_unexpected_value, 400, exit_usage, "A flag (an option without a value) was given one, as --flag=value."},
    {errors::usage_unknown_option, 400, exit_usage, "An option the command does not know."},
    {errors::usage_unsupported, 400, exit_usage, "The command cannot do this on this kind of store (perfgate db backup of a PostgreSQL database)."},

    // input.*: a file or environment the CLI reads is wrong.
    {errors::input_bad_command, 500, exit_usage, "A benchmark command is empty, has an unterminated quote, or holds a control byte."},
    {errors::input_bad_config, 500, exit_usage, "The benchmark config (--config) cannot be read, is not JSON, or has an unknown key, a wrong type or a missing field."},
    {errors::input_bad_event, 500, exit_usage, "The GitHub event file (GITHUB_EVENT_PATH) read for the run's commit and branch cannot be read or is not JSON."},
    {errors::input_bad_number, 500, exit_usage, "perfgate change-points: a value in the input is not a finite number."},
    {errors::input_bad_report, 500, exit_usage, "A report JSON is malformed: another schema than perfgate.report/v1, an unknown value, a field of the wrong shape."},
    {errors::input_github_env, 500, exit_usage, "A GitHub step needs the GitHub Actions environment (GITHUB_* variables, the event file) and it is missing."},
    {errors::input_github_event, 500, exit_usage, "The GitHub event payload cannot be read, is not a JSON object, or lacks the pull request or workflow run it needs."},
    {errors::input_github_sha, 500, exit_usage, "A commit SHA from the GitHub event or GITHUB_SHA that is not 40 or 64 hex digits: it would go into an API path, so nothing is posted."},
    {errors::input_git, 500, exit_usage, "A git question perfgate asked cannot be answered: not a repository, a commit not in it, no common ancestor, a baseline checkout at another commit than the baseline rule names."},
    {errors::input_shallow_clone, 500, exit_usage, "The baseline rule needs history a shallow clone does not have: check out with fetch-depth: 0."},
    {errors::input_head_sha_mismatch, 500, exit_usage, "perfgate github --expect-head-sha: the event names another commit; nothing is posted."},
    {errors::input_no_column, 500, exit_usage, "perfgate change-points: the CSV header has no column named by --column."},
    {errors::input_no_data, 500, exit_usage, "perfgate change-points: the input holds no numbers."},
    {errors::input_unknown_project, 500, exit_usage, "A command on a --db store named a project the store does not have."},
    {errors::input_unreadable, 500, exit_usage, "A file named on the command line cannot be read."},
    {errors::input_unwritable, 500, exit_usage, "The report file (--output) cannot be written."},

    // policy.*: the policy file is wrong.
    {errors::policy_bad_json, 400, exit_usage, "The policy file is not valid JSON."},
    {errors::policy_bad_value, 400, exit_usage, "A policy key has a value of the wrong type or out of its range; the message names the key path."},
    {errors::policy_too_large, 400, exit_usage, "A map of per-benchmark or per-counter overrides in the policy has more entries than allowed."},
    {errors::policy_unknown_key, 400, exit_usage, "The policy has a key perfgate does not know; the message lists the allowed keys."},

    // ingest.*: a capture or an uploaded run is wrong.
    {errors::ingest_bad_csv, 422, exit_usage, "A perf stat capture does not parse (the message gives SOURCE:LINE), or an uploaded run has no counters."},
    {errors::ingest_bad_field, 400, exit_usage, "A field of a request or an uploaded run is missing, of the wrong type or malformed; the message names it."},
    {errors::ingest_bad_input, 422, exit_usage, "A benchmark harness's output (google/benchmark, hyperfine, Catch2, nanobench, samples JSON) does not parse, holds no samples or only aggregates; the message names the source and the field."},
    {errors::ingest_bad_idempotency_key, 400, exit_usage, "The Idempotency-Key header is repeated, or is not 1 to 255 printable ASCII characters."},
    {errors::ingest_idempotency_conflict, 409, exit_usage, "An Idempotency-Key the project has already seen with a different upload."},
    {errors::ingest_too_many_counters, 413, exit_usage, "A capture or run with more counters than a run may hold (max_counters_per_run)."},
    {errors::ingest_too_many_repetitions, 413, exit_usage, "A capture or run with more repetitions than a run may hold (max_repetitions)."},
    {errors::ingest_unreadable, 422, exit_usage, "A perf stat capture file cannot be read."},

    // compare.*: the runs of a compare cannot be found or compared.
    {errors::compare_ambiguous_ref, 400, exit_usage, "A git sha prefix given as base or head matches several commits; give more digits."},
    {errors::compare_bad_ref, 400, exit_usage, "A base or head that is neither a run id nor a git sha."},
    {errors::compare_bad_request, 422, exit_usage, "A compare of no (baseline, candidate) pair (the HTTP API refuses an empty list first, as ingest.bad_field)."},
    {errors::compare_mismatch, 422, exit_usage, "Runs that cannot be compared: two benchmarks in one pair, a benchmark in two pairs, or no benchmark measured on one testbed at both refs."},
    {errors::compare_not_found, 404, exit_usage, "A run (by id or git sha) or a comparison page the project does not have."},
    {errors::compare_too_large, 422, exit_usage, "The runs of one compare hold more counters or samples than a compare may read; compare fewer pairs per request."},
    {errors::compare_too_many_pairs, 413, exit_usage, "A compare request with more pairs than one compare takes (api::max_compare_pairs)."},

    // Lists, alerts, comparisons, projects and flame graphs on the server.
    {errors::query_bad_value, 400, exit_usage, "A list's limit out of its range (comparisons, alerts)."},
    {errors::alert_bad_note, 400, exit_usage, "An alert note over the size limit or holding control characters."},
    {errors::alert_bad_status, 400, exit_usage, "An alert status other than untriaged, acknowledged, invalid, wontfix or fixed."},
    {errors::alert_not_found, 404, exit_usage, "The project has no alert with this id."},
    {errors::comparison_not_found, 404, exit_measurement, "The project has no comparison with this id."},
    {errors::accept_denied, 403, exit_usage, "perfgate accept was asked by a user whose repository permission is not write, maintain or admin: nothing changed, and a reply comment says so."},
    {errors::accept_no_comparison, 404, exit_usage, "An acceptance for a commit the project has no comparison of (its candidate runs): gate the pull request head with perfgate run --server first."},
    {errors::project_not_found, 404, exit_measurement, "The server has no project of this name (projects are created by perfgate token create)."},
    {errors::artifact_bad_attribution, 422, exit_measurement, "An uploaded attribution that is not the report's attribution object, or beyond the server's limits."},
    {errors::artifact_bad_benchmark, 422, exit_measurement, "An artifact for a benchmark the comparison does not have."},
    {errors::artifact_bad_svg, 422, exit_measurement, "An uploaded flame graph that is not UTF-8 SVG text."},
    {errors::artifact_not_found, 404, exit_measurement, "The comparison has no flame graph of this benchmark."},
    {errors::artifact_too_large, 413, exit_measurement, "An uploaded flame graph or attribution larger than the server's limit."},
    {errors::artifact_too_many, 413, exit_measurement, "A comparison already holds the most artifacts (or bytes of them) the server keeps per comparison."},

    // auth.*: the server refuses who is asking.
    {errors::auth_bad_token, 401, exit_measurement, "The Authorization header is not 'Bearer <token>', or the token is unknown or revoked."},
    {errors::auth_forbidden, 403, exit_measurement, "The token is another project's, or a dashboard form failed its same-site or CSRF check."},
    {errors::auth_missing_token, 401, exit_measurement, "A request that needs a token came without one."},
    {errors::token_not_found, 404, exit_usage, "perfgate token revoke: the project has no token with this id (or this secret); perfgate token list shows them."},

    // http.*, answered by the server: the request's framing or route is wrong.
    {errors::http_bad_json, 400, exit_measurement, "The request body is not JSON, or not a JSON object."},
    {errors::http_bad_param, 400, exit_measurement, "A query parameter (or path id) the route does not take, or one that is malformed."},
    {errors::http_bad_request, 400, exit_measurement, "A malformed HTTP request: no or several Host headers, conflicting framing headers, a parse error."},
    {errors::http_body_too_large, 413, exit_measurement, "A request body over the server's limit (--max-body), or a body on a request that takes none."},
    {errors::http_header_too_large, 431, exit_measurement, "Request headers over the server's limit (--max-header)."},
    {errors::http_method_not_allowed, 405, exit_measurement, "A method the route does not take; the Allow header lists those it does."},
    {errors::http_missing_param, 400, exit_measurement, "A required query parameter is absent or empty."},
    {errors::http_not_found, 404, exit_measurement, "No route, page or asset at this path."},
    {errors::http_not_implemented, 501, exit_measurement, "A transfer coding other than chunked."},
    {errors::http_too_many_requests, 429, exit_measurement, "Too many anonymous page renders or history reads from one address (--public-read); Retry-After says when to come back."},
    {errors::http_over_capacity, 503, exit_measurement, "Every connection slot of the server is busy (--max-connections); retry later."},
    {errors::http_too_deep, 400, exit_measurement, "A JSON body nested deeper than the server reads (api::max_json_depth)."},
    {errors::http_unsupported_media_type, 415, exit_measurement, "A Content-Type the route does not take."},
    // http.*, met by the HTTP client (the CLI talking to a server or GitHub).
    {errors::http_bad_header, 400, exit_measurement, "The HTTP client was given a header name holding CR, LF or ':'."},
    {errors::http_bad_method, 400, exit_measurement, "The HTTP client was given a method it does not know."},
    {errors::http_bad_response, 400, exit_measurement, "A response body over the client's limit, or a response that is broken."},
    {errors::http_bad_url, 400, exit_usage, "A malformed URL (--server): not http or https, no host, a bad port, or user:password@ in it."},
    {errors::http_unreachable, 400, exit_measurement, "The server cannot be reached (name resolution, connect, TLS, proxy, timeout), or libcurl cannot be loaded."},

    // server.*: what the CLI met at perfgate's server (and serve's listener).
    {errors::server_auth, 500, exit_usage, "The perfgate server refused the token (401 or 403): missing, unknown, or another project's."},
    {errors::server_bad_response, 500, exit_measurement, "The perfgate server answered something the API does not say: not JSON, not a report, an unexpected status."},
    {errors::server_failed, 500, exit_measurement, "The perfgate server answered 5xx (uploads are retried first)."},
    {errors::server_listen, 500, exit_measurement, "perfgate serve cannot listen on its address and port (in use, not permitted)."},
    {errors::server_rejected, 500, exit_usage, "The perfgate server refused the request with a 4xx other than 401 and 403; the message quotes its error."},

    // store.*: the database. The server answers them without the engine's message.
    {errors::store_backup, 500, exit_measurement, "perfgate db backup failed: an in-memory database, a file that exists, or a copy that fails its check."},
    {errors::store_conflict, 503, exit_measurement, "PostgreSQL aborted a write to break a deadlock or a serialization failure, and the retries ran out."},
    {errors::store_constraint, 422, exit_measurement, "Data the store refuses: a counter or repetition twice, a non-finite value, a value over its length limit, ..."},
    {errors::store_corrupt, 500, exit_measurement, "The SQLite database fails its integrity check, or a damaged page was read."},
    {errors::store_io, 500, exit_measurement, "Any other failure of the database engine (SQLite, libpq)."},
    {errors::store_full, 507, exit_measurement, "The database's disk (or quota) is full: SQLite's SQLITE_FULL, PostgreSQL's SQLSTATE 53100. Nothing was stored; retrying will not help until space is freed."},
    {errors::store_key_conflict, 500, exit_measurement, "An idempotency key stored for another request (the service answers ingest.idempotency_conflict)."},
    {errors::store_lost, 503, exit_measurement, "The SQLite database file was deleted or replaced under the running server: writes are refused (they would be lost) and /healthz is 503 until it is restored or the server restarted."},
    {errors::store_libpq_missing, 500, exit_measurement, "A postgresql:// database was named, but libpq (libpq.so.5, Debian's libpq5), which perfgate loads on first use, is not installed."},
    {errors::store_migrate, 500, exit_measurement, "A schema migration failed, or the database's schema is newer than this perfgate."},
    {errors::store_not_found, 404, exit_measurement, "A project, run or comparison the store does not have."},
    {errors::store_open, 500, exit_measurement, "The database cannot be opened: not a database, locked, server unreachable, login refused."},
    {errors::store_read_only, 500, exit_measurement, "The database cannot be written: a read-only file or directory, a PostgreSQL standby, read-only transactions."},
    {errors::store_unsupported, 500, exit_measurement, "An operation this store engine does not offer (backup of a PostgreSQL database)."},

    // measure.*, env.*, process.*: measuring on this machine failed.
    {errors::measure_failed, 500, exit_measurement, "A benchmark exited non-zero, was killed, could not be executed, or left no result."},
    {errors::measure_helper_missing, 500, exit_measurement, "perfgate-exec, the wrapper that reports the workload's exit status, is not installed."},
    {errors::measure_perf_unavailable, 500, exit_measurement, "perf is missing or refused by the kernel (perf_event_paranoid), or its output cannot be read."},
    {errors::measure_timeout, 500, exit_measurement, "A benchmark execution exceeded --timeout and was killed."},
    {errors::measure_valgrind_unavailable, 500, exit_measurement, "--backend callgrind needs valgrind and it is not in PATH."},
    {errors::env_perf_timeout, 500, exit_measurement, "perf did not answer the environment check's probe in time."},
    {errors::env_perf_unavailable, 500, exit_measurement, "perf cannot be executed for the environment check."},
    {errors::process_exec_failed, 500, exit_measurement, "A program cannot be executed: not in PATH, not executable, or a working directory it cannot enter."},
    {errors::process_io, 500, exit_measurement, "An I/O failure around a child process (its temporary directory, poll)."},
    {errors::process_spawn_failed, 500, exit_measurement, "A child process could not be started (pipe, vfork, /dev/null, its output file)."},

    // profile.*, attribution.*: profiles (--profile, callgrind attribution).
    // Ids marked "in the report" are not thrown to the user: they are listed
    // in the report's attribution errors and the verdict stands.
    {errors::profile_artifacts, 500, exit_measurement, "The profile's artifacts (flame graph, folded stacks under --artifacts) cannot be written."},
    {errors::profile_bad_callgrind, 500, exit_measurement, "A callgrind output file does not parse (SOURCE:LINE)."},
    {errors::profile_bad_dhat, 500, exit_measurement, "A DHAT output file (valgrind --tool=dhat JSON) does not parse or misses a field (SOURCE)."},
    {errors::profile_bad_memcheck, 500, exit_measurement, "A memcheck XML output file does not parse or misses a field (SOURCE)."},
    {errors::profile_bad_perf_script, 500, exit_measurement, "perf script's output does not parse (SOURCE:LINE)."},
    {errors::profile_failed, 500, exit_measurement, "In the report: a benchmark's perf profile failed; the message says why."},
    {errors::profile_no_samples, 500, exit_measurement, "A perf profile has no samples: the program ran too briefly for the sampling rate."},
    {errors::profile_perf_refused, 500, exit_measurement, "The kernel refused perf record (perf_event_paranoid)."},
    {errors::profile_perf_unavailable, 500, exit_measurement, "--profile needs perf and it cannot be executed."},
    {errors::profile_record_failed, 500, exit_measurement, "perf record failed (its exit status or signal, and its stderr)."},
    {errors::profile_script_failed, 500, exit_measurement, "perf script failed (its exit status or signal, and its stderr)."},
    {errors::profile_stripped, 500, exit_measurement, "In the report: most samples have no function names (a stripped binary)."},
    {errors::profile_timeout, 500, exit_measurement, "The workload did not finish within --timeout under perf record."},
    {errors::profile_too_large, 500, exit_measurement, "A profile over its size limit (--profile-max-mb, or a callgrind file over callgrind_limits::max_file_bytes)."},
    {errors::profile_unknown_event, 500, exit_measurement, "The profile has no cost of the event asked for (a callgrind file without Ir)."},
    {errors::profile_unreadable, 500, exit_measurement, "A profile file cannot be read."},
    {errors::attribution_failed, 500, exit_measurement, "In the report: the callgrind attribution failed; the message says why."},
    {errors::attribution_no_profile, 500, exit_measurement, "Callgrind left no profile to attribute."},
    {errors::attribution_stripped, 500, exit_measurement, "In the report: most of one side's cost is in unnamed functions (a stripped binary)."},

    // github.*: GitHub's REST API.
    {errors::github_bad_response, 500, exit_measurement, "GitHub answered something other than the JSON expected."},
    {errors::github_forbidden, 500, exit_measurement, "GitHub answered 403: the workflow's token lacks a permission (the message names it)."},
    {errors::github_http, 500, exit_measurement, "GitHub answered another non-2xx status; the message quotes GitHub's."},
    {errors::github_rate_limited, 500, exit_measurement, "GitHub's rate limit would take longer to clear than perfgate waits, or the retries ran out."},
    {errors::github_server_error, 500, exit_measurement, "GitHub answered 5xx, after retries."},
    {errors::github_unreachable, 500, exit_measurement, "GitHub's API cannot be reached, after retries."},

    // io.*, crypto.*: the machine under perfgate.
    {errors::io_stdout, 500, exit_measurement, "Standard output could not be written: the report is lost (exit 4 whatever the verdict)."},
    {errors::io_write, 500, exit_measurement, "A file perfgate writes or appends to (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, attribution.json) cannot be written."},
    {errors::crypto_failed, 500, exit_measurement, "OpenSSL's SHA-256 failed (out of memory)."},

    // stats.*: a statistics function called outside its domain: a bug in
    // the caller, which validates user input first.
    {errors::stats_bad_input, 500, exit_measurement, "A proportion's counts or a Wilson interval's z outside their domain."},
    {errors::stats_bad_look, 500, exit_measurement, "A sequential look past the plan's last."},
    {errors::stats_bad_option, 500, exit_measurement, "Change-point options outside their domain (window < 2, max_p outside (0, 1), ...)."},
    {errors::stats_bad_p_value, 500, exit_measurement, "A p-value outside [0, 1] given to a multiplicity correction."},
    {errors::stats_bad_plan, 500, exit_measurement, "A sequential plan with parameters out of range."},
    {errors::stats_bad_probability, 500, exit_measurement, "A probability (alpha, power, a quantile's p) outside its range."},
    {errors::stats_bad_threshold, 500, exit_measurement, "A negative or non-finite threshold for a sequential look."},
    {errors::stats_exact_too_large, 500, exit_measurement, "Samples too large for the exact Mann-Whitney distribution."},

    // internal: a bug, or a failure nothing above names.
    {errors::internal, 500, exit_measurement, "A bug or an unexpected failure in perfgate; the server answers it with a reference to its log line."},
});
// clang-format on

// The entry of an id, or nullptr for an id not in the catalogue.
constexpr const error_entry* find_error(std::string_view id) noexcept
{
    for (const error_entry& e : error_catalogue) {
        if (e.id == id) return &e;
    }
    return nullptr;
}

} // namespace perfgate
