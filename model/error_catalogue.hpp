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
// Adding an id: add its entry to error_catalogue (in its area), its constant
// to namespace errors below, throw it as error(errors::x, "message naming the
// file, line or field"), then `cmake --build B --target errors_doc`.
#pragma once

#include "model/exit_code.hpp"

#include <array>
#include <string_view>

namespace perfgate {

struct error_entry {
    std::string_view id;       // "<area>.<what>"
    unsigned http_status;      // 4xx: the client's to fix; 5xx: the server's
    exit_code exit;            // exit_usage (2) or exit_measurement (4)
    std::string_view summary;  // one sentence, for docs/errors.md
};

// An id not in the catalogue is answered like a bug: HTTP 500, exit 4.
inline constexpr unsigned unknown_error_status = 500;
inline constexpr exit_code unknown_error_exit = exit_measurement;

// clang-format off
inline constexpr auto error_catalogue = std::to_array<error_entry>({
    // usage.*: the command line is wrong.
    {"usage.bad_arguments", 400, exit_usage, "The command's positional arguments are wrong (perfgate change-points takes one FILE)."},
    {"usage.bad_cpus", 400, exit_usage, "A CPU list (--cpus) does not parse, has a reversed range, or names a CPU out of range."},
    {"usage.bad_event", 400, exit_usage, "An event perf (or libpfm4, for --backend native) does not know, or a modifier the backend does not take."},
    {"usage.bad_subcommand", 400, exit_usage, "A command that takes a subcommand (alerts, db, token) got none or one it does not know."},
    {"usage.bad_value", 400, exit_usage, "An option's value is malformed or out of range; the message names the option and what it expects."},
    {"usage.conflict", 400, exit_usage, "Two options that exclude each other, or an option that applies only together with another."},
    {"usage.file_exists", 400, exit_usage, "perfgate db backup was given a file that exists; it never overwrites one."},
    {"usage.missing_argument", 400, exit_usage, "A required positional argument is missing (perfgate upload FILE)."},
    {"usage.missing_option", 400, exit_usage, "A required option is missing (no --server nor --db, --server without --project or a token, ...)."},
    {"usage.missing_value", 400, exit_usage, "An option that takes a value was given none."},
    {"usage.repeated_option", 400, exit_usage, "An option that may be given once was given twice."},
    {"usage.unexpected_argument", 400, exit_usage, "A positional argument the command does not take."},
    {"usage.unexpected_value", 400, exit_usage, "A flag (an option without a value) was given one, as --flag=value."},
    {"usage.unknown_option", 400, exit_usage, "An option the command does not know."},
    {"usage.unsupported", 400, exit_usage, "The command cannot do this on this kind of store (perfgate db backup of a PostgreSQL database)."},

    // input.*: a file or environment the CLI reads is wrong.
    {"input.bad_command", 500, exit_usage, "A benchmark command is empty, has an unterminated quote, or holds a control byte."},
    {"input.bad_config", 500, exit_usage, "The benchmark config (--config) cannot be read, is not JSON, or has an unknown key, a wrong type or a missing field."},
    {"input.bad_event", 500, exit_usage, "The GitHub event file (GITHUB_EVENT_PATH) read for the run's commit and branch cannot be read or is not JSON."},
    {"input.bad_number", 500, exit_usage, "perfgate change-points: a value in the input is not a finite number."},
    {"input.bad_report", 500, exit_usage, "A report JSON is malformed: another schema than perfgate.report/v1, an unknown value, a field of the wrong shape."},
    {"input.github_env", 500, exit_usage, "A GitHub step needs the GitHub Actions environment (GITHUB_* variables, the event file) and it is missing."},
    {"input.github_event", 500, exit_usage, "The GitHub event payload cannot be read, is not a JSON object, or lacks the pull request or workflow run it needs."},
    {"input.head_sha_mismatch", 500, exit_usage, "perfgate github --expect-head-sha: the event names another commit; nothing is posted."},
    {"input.no_column", 500, exit_usage, "perfgate change-points: the CSV header has no column named by --column."},
    {"input.no_data", 500, exit_usage, "perfgate change-points: the input holds no numbers."},
    {"input.unknown_project", 500, exit_usage, "A command on a --db store named a project the store does not have."},
    {"input.unreadable", 500, exit_usage, "A file named on the command line cannot be read."},
    {"input.unwritable", 500, exit_usage, "The report file (--output) cannot be written."},

    // policy.*: the policy file is wrong.
    {"policy.bad_json", 400, exit_usage, "The policy file is not valid JSON."},
    {"policy.bad_value", 400, exit_usage, "A policy key has a value of the wrong type or out of its range; the message names the key path."},
    {"policy.too_large", 400, exit_usage, "A map of per-benchmark or per-counter overrides in the policy has more entries than allowed."},
    {"policy.unknown_key", 400, exit_usage, "The policy has a key perfgate does not know; the message lists the allowed keys."},

    // ingest.*: a capture or an uploaded run is wrong.
    {"ingest.bad_csv", 422, exit_usage, "A perf stat capture does not parse (the message gives SOURCE:LINE), or an uploaded run has no counters."},
    {"ingest.bad_field", 400, exit_usage, "A field of a request or an uploaded run is missing, of the wrong type or malformed; the message names it."},
    {"ingest.bad_idempotency_key", 400, exit_usage, "The Idempotency-Key header is repeated, or is not 1 to 255 printable ASCII characters."},
    {"ingest.idempotency_conflict", 409, exit_usage, "An Idempotency-Key the project has already seen with a different upload."},
    {"ingest.too_many_counters", 413, exit_usage, "A capture or run with more counters than a run may hold (max_counters_per_run)."},
    {"ingest.too_many_repetitions", 413, exit_usage, "A capture or run with more repetitions than a run may hold (max_repetitions)."},
    {"ingest.unreadable", 422, exit_usage, "A perf stat capture file cannot be read."},

    // compare.*: the runs of a compare cannot be found or compared.
    {"compare.ambiguous_ref", 400, exit_usage, "A git sha prefix given as base or head matches several commits; give more digits."},
    {"compare.bad_ref", 400, exit_usage, "A base or head that is neither a run id nor a git sha."},
    {"compare.bad_request", 422, exit_usage, "A compare of no (baseline, candidate) pair (the HTTP API refuses an empty list first, as ingest.bad_field)."},
    {"compare.mismatch", 422, exit_usage, "Runs that cannot be compared: two benchmarks in one pair, a benchmark in two pairs, or no benchmark measured on one testbed at both refs."},
    {"compare.not_found", 404, exit_usage, "A run (by id or git sha) or a comparison page the project does not have."},
    {"compare.too_large", 422, exit_usage, "The runs of one compare hold more counters or samples than a compare may read; compare fewer pairs per request."},
    {"compare.too_many_pairs", 413, exit_usage, "A compare request with more pairs than one compare takes (api::max_compare_pairs)."},

    // Lists, alerts, comparisons, projects and flame graphs on the server.
    {"query.bad_value", 400, exit_usage, "A list's limit out of its range (comparisons, alerts)."},
    {"alert.bad_note", 400, exit_usage, "An alert note over the size limit or holding control characters."},
    {"alert.bad_status", 400, exit_usage, "An alert status other than untriaged, acknowledged, invalid, wontfix or fixed."},
    {"alert.not_found", 404, exit_usage, "The project has no alert with this id."},
    {"comparison.not_found", 404, exit_measurement, "The project has no comparison with this id."},
    {"project.not_found", 404, exit_measurement, "The server has no project of this name (projects are created by perfgate token create)."},
    {"artifact.bad_svg", 422, exit_measurement, "An uploaded flame graph that is not UTF-8 SVG text."},
    {"artifact.not_found", 404, exit_measurement, "The comparison has no flame graph of this benchmark."},
    {"artifact.too_large", 413, exit_measurement, "An uploaded flame graph larger than the server's limit."},

    // auth.*: the server refuses who is asking.
    {"auth.bad_token", 401, exit_measurement, "The Authorization header is not 'Bearer <token>', or the token is unknown or revoked."},
    {"auth.forbidden", 403, exit_measurement, "The token is another project's, or a dashboard form failed its same-site or CSRF check."},
    {"auth.missing_token", 401, exit_measurement, "A request that needs a token came without one."},

    // http.*, answered by the server: the request's framing or route is wrong.
    {"http.bad_json", 400, exit_measurement, "The request body is not JSON, or not a JSON object."},
    {"http.bad_param", 400, exit_measurement, "A query parameter (or path id) the route does not take, or one that is malformed."},
    {"http.bad_request", 400, exit_measurement, "A malformed HTTP request: no or several Host headers, conflicting framing headers, a parse error."},
    {"http.body_too_large", 413, exit_measurement, "A request body over the server's limit (--max-body), or a body on a request that takes none."},
    {"http.header_too_large", 431, exit_measurement, "Request headers over the server's limit (--max-header)."},
    {"http.method_not_allowed", 405, exit_measurement, "A method the route does not take; the Allow header lists those it does."},
    {"http.missing_param", 400, exit_measurement, "A required query parameter is absent or empty."},
    {"http.not_found", 404, exit_measurement, "No route, page or asset at this path."},
    {"http.not_implemented", 501, exit_measurement, "A transfer coding other than chunked."},
    {"http.over_capacity", 503, exit_measurement, "Every connection slot of the server is busy (--max-connections); retry later."},
    {"http.too_deep", 400, exit_measurement, "A JSON body nested deeper than the server reads (api::max_json_depth)."},
    {"http.unsupported_media_type", 415, exit_measurement, "A Content-Type the route does not take."},
    // http.*, met by the HTTP client (the CLI talking to a server or GitHub).
    {"http.bad_header", 400, exit_measurement, "The HTTP client was given a header name holding CR, LF or ':'."},
    {"http.bad_method", 400, exit_measurement, "The HTTP client was given a method it does not know."},
    {"http.bad_response", 400, exit_measurement, "A response body over the client's limit, or a response that is broken."},
    {"http.bad_url", 400, exit_usage, "A malformed URL (--server): not http or https, no host, a bad port, or user:password@ in it."},
    {"http.unreachable", 400, exit_measurement, "The server cannot be reached (name resolution, connect, TLS, proxy, timeout), or libcurl cannot be loaded."},

    // server.*: what the CLI met at perfgate's server (and serve's listener).
    {"server.auth", 500, exit_usage, "The perfgate server refused the token (401 or 403): missing, unknown, or another project's."},
    {"server.bad_response", 500, exit_measurement, "The perfgate server answered something the API does not say: not JSON, not a report, an unexpected status."},
    {"server.failed", 500, exit_measurement, "The perfgate server answered 5xx (uploads are retried first)."},
    {"server.listen", 500, exit_measurement, "perfgate serve cannot listen on its address and port (in use, not permitted)."},
    {"server.rejected", 500, exit_usage, "The perfgate server refused the request with a 4xx other than 401 and 403; the message quotes its error."},

    // store.*: the database. The server answers them without the engine's message.
    {"store.backup", 500, exit_measurement, "perfgate db backup failed: an in-memory database, a file that exists, or a copy that fails its check."},
    {"store.conflict", 503, exit_measurement, "PostgreSQL aborted a write to break a deadlock or a serialization failure, and the retries ran out."},
    {"store.constraint", 422, exit_measurement, "Data the store refuses: a counter or repetition twice, a non-finite value, a value over its length limit, ..."},
    {"store.corrupt", 500, exit_measurement, "The SQLite database fails its integrity check, or a damaged page was read."},
    {"store.io", 500, exit_measurement, "Any other failure of the database engine (SQLite, libpq)."},
    {"store.key_conflict", 500, exit_measurement, "An idempotency key stored for another request (the service answers ingest.idempotency_conflict)."},
    {"store.migrate", 500, exit_measurement, "A schema migration failed, or the database's schema is newer than this perfgate."},
    {"store.not_found", 404, exit_measurement, "A project, run or comparison the store does not have."},
    {"store.open", 500, exit_measurement, "The database cannot be opened: not a database, locked, server unreachable, login refused."},
    {"store.read_only", 500, exit_measurement, "The database cannot be written: a read-only file or directory, a PostgreSQL standby, read-only transactions."},
    {"store.unsupported", 500, exit_measurement, "An operation this store engine does not offer (backup of a PostgreSQL database)."},

    // measure.*, env.*, process.*: measuring on this machine failed.
    {"measure.failed", 500, exit_measurement, "A benchmark exited non-zero, was killed, could not be executed, or left no result."},
    {"measure.helper_missing", 500, exit_measurement, "perfgate-exec, the wrapper that reports the workload's exit status, is not installed."},
    {"measure.perf_unavailable", 500, exit_measurement, "perf is missing or refused by the kernel (perf_event_paranoid), or its output cannot be read."},
    {"measure.timeout", 500, exit_measurement, "A benchmark execution exceeded --timeout and was killed."},
    {"measure.valgrind_unavailable", 500, exit_measurement, "--backend callgrind needs valgrind and it is not in PATH."},
    {"env.perf_timeout", 500, exit_measurement, "perf did not answer the environment check's probe in time."},
    {"env.perf_unavailable", 500, exit_measurement, "perf cannot be executed for the environment check."},
    {"process.exec_failed", 500, exit_measurement, "A program cannot be executed: not in PATH, not executable, or a working directory it cannot enter."},
    {"process.io", 500, exit_measurement, "An I/O failure around a child process (its temporary directory, poll)."},
    {"process.spawn_failed", 500, exit_measurement, "A child process could not be started (pipe, vfork, /dev/null, its output file)."},

    // profile.*, attribution.*: profiles (--profile, callgrind attribution).
    // Ids marked "in the report" are not thrown to the user: they are listed
    // in the report's attribution errors and the verdict stands.
    {"profile.artifacts", 500, exit_measurement, "The profile's artifacts (flame graph, folded stacks under --artifacts) cannot be written."},
    {"profile.bad_callgrind", 500, exit_measurement, "A callgrind output file does not parse (SOURCE:LINE)."},
    {"profile.bad_perf_script", 500, exit_measurement, "perf script's output does not parse (SOURCE:LINE)."},
    {"profile.failed", 500, exit_measurement, "In the report: a benchmark's perf profile failed; the message says why."},
    {"profile.no_samples", 500, exit_measurement, "A perf profile has no samples: the program ran too briefly for the sampling rate."},
    {"profile.perf_refused", 500, exit_measurement, "The kernel refused perf record (perf_event_paranoid)."},
    {"profile.perf_unavailable", 500, exit_measurement, "--profile needs perf and it cannot be executed."},
    {"profile.record_failed", 500, exit_measurement, "perf record failed (its exit status or signal, and its stderr)."},
    {"profile.script_failed", 500, exit_measurement, "perf script failed (its exit status or signal, and its stderr)."},
    {"profile.stripped", 500, exit_measurement, "In the report: most samples have no function names (a stripped binary)."},
    {"profile.timeout", 500, exit_measurement, "The workload did not finish within --timeout under perf record."},
    {"profile.too_large", 500, exit_measurement, "A profile over its size limit (--profile-max-mb, or a callgrind file over callgrind_limits::max_file_bytes)."},
    {"profile.unknown_event", 500, exit_measurement, "The profile has no cost of the event asked for (a callgrind file without Ir)."},
    {"profile.unreadable", 500, exit_measurement, "A profile file cannot be read."},
    {"attribution.failed", 500, exit_measurement, "In the report: the callgrind attribution failed; the message says why."},
    {"attribution.no_profile", 500, exit_measurement, "Callgrind left no profile to attribute."},
    {"attribution.stripped", 500, exit_measurement, "In the report: most of one side's cost is in unnamed functions (a stripped binary)."},

    // github.*: GitHub's REST API.
    {"github.bad_response", 500, exit_measurement, "GitHub answered something other than the JSON expected."},
    {"github.forbidden", 500, exit_measurement, "GitHub answered 403: the workflow's token lacks a permission (the message names it)."},
    {"github.http", 500, exit_measurement, "GitHub answered another non-2xx status; the message quotes GitHub's."},
    {"github.rate_limited", 500, exit_measurement, "GitHub's rate limit would take longer to clear than perfgate waits, or the retries ran out."},
    {"github.server_error", 500, exit_measurement, "GitHub answered 5xx, after retries."},
    {"github.unreachable", 500, exit_measurement, "GitHub's API cannot be reached, after retries."},

    // io.*, crypto.*: the machine under perfgate.
    {"io.stdout", 500, exit_measurement, "Standard output could not be written: the report is lost (exit 4 whatever the verdict)."},
    {"io.write", 500, exit_measurement, "A file perfgate writes or appends to (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, attribution.json) cannot be written."},
    {"crypto.failed", 500, exit_measurement, "OpenSSL's SHA-256 failed (out of memory)."},

    // stats.*: a statistics function called outside its domain: a bug in
    // the caller, which validates user input first.
    {"stats.bad_input", 500, exit_measurement, "A proportion's counts or a Wilson interval's z outside their domain."},
    {"stats.bad_look", 500, exit_measurement, "A sequential look past the plan's last."},
    {"stats.bad_option", 500, exit_measurement, "Change-point options outside their domain (window < 2, max_p outside (0, 1), ...)."},
    {"stats.bad_p_value", 500, exit_measurement, "A p-value outside [0, 1] given to a multiplicity correction."},
    {"stats.bad_plan", 500, exit_measurement, "A sequential plan with parameters out of range."},
    {"stats.bad_probability", 500, exit_measurement, "A probability (alpha, power, a quantile's p) outside its range."},
    {"stats.bad_threshold", 500, exit_measurement, "A negative or non-finite threshold for a sequential look."},
    {"stats.exact_too_large", 500, exit_measurement, "Samples too large for the exact Mann-Whitney distribution."},

    // internal: a bug, or a failure nothing above names.
    {"internal", 500, exit_measurement, "A bug or an unexpected failure in perfgate; the server answers it with a reference to its log line."},
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

// An id of the catalogue, checked when compiled: error_id{"no.such"} does
// not compile. Throw sites write error(errors::ingest_bad_csv, ...).
class error_id {
public:
    consteval explicit error_id(std::string_view id) : id_(id)
    {
        if (find_error(id) == nullptr) throw "error_id: the id is not in error_catalogue (model/error_catalogue.hpp)";
    }
    [[nodiscard]] constexpr std::string_view view() const noexcept { return id_; }
    friend constexpr bool operator==(error_id a, std::string_view b) noexcept { return a.id_ == b; }

private:
    std::string_view id_;
};

// One constant per entry, named after its id ('.' -> '_').
namespace errors {
inline constexpr error_id usage_bad_arguments{"usage.bad_arguments"};
inline constexpr error_id usage_bad_cpus{"usage.bad_cpus"};
inline constexpr error_id usage_bad_event{"usage.bad_event"};
inline constexpr error_id usage_bad_subcommand{"usage.bad_subcommand"};
inline constexpr error_id usage_bad_value{"usage.bad_value"};
inline constexpr error_id usage_conflict{"usage.conflict"};
inline constexpr error_id usage_file_exists{"usage.file_exists"};
inline constexpr error_id usage_missing_argument{"usage.missing_argument"};
inline constexpr error_id usage_missing_option{"usage.missing_option"};
inline constexpr error_id usage_missing_value{"usage.missing_value"};
inline constexpr error_id usage_repeated_option{"usage.repeated_option"};
inline constexpr error_id usage_unexpected_argument{"usage.unexpected_argument"};
inline constexpr error_id usage_unexpected_value{"usage.unexpected_value"};
inline constexpr error_id usage_unknown_option{"usage.unknown_option"};
inline constexpr error_id usage_unsupported{"usage.unsupported"};

inline constexpr error_id input_bad_command{"input.bad_command"};
inline constexpr error_id input_bad_config{"input.bad_config"};
inline constexpr error_id input_bad_event{"input.bad_event"};
inline constexpr error_id input_bad_number{"input.bad_number"};
inline constexpr error_id input_bad_report{"input.bad_report"};
inline constexpr error_id input_github_env{"input.github_env"};
inline constexpr error_id input_github_event{"input.github_event"};
inline constexpr error_id input_head_sha_mismatch{"input.head_sha_mismatch"};
inline constexpr error_id input_no_column{"input.no_column"};
inline constexpr error_id input_no_data{"input.no_data"};
inline constexpr error_id input_unknown_project{"input.unknown_project"};
inline constexpr error_id input_unreadable{"input.unreadable"};
inline constexpr error_id input_unwritable{"input.unwritable"};

inline constexpr error_id policy_bad_json{"policy.bad_json"};
inline constexpr error_id policy_bad_value{"policy.bad_value"};
inline constexpr error_id policy_too_large{"policy.too_large"};
inline constexpr error_id policy_unknown_key{"policy.unknown_key"};

inline constexpr error_id ingest_bad_csv{"ingest.bad_csv"};
inline constexpr error_id ingest_bad_field{"ingest.bad_field"};
inline constexpr error_id ingest_bad_idempotency_key{"ingest.bad_idempotency_key"};
inline constexpr error_id ingest_idempotency_conflict{"ingest.idempotency_conflict"};
inline constexpr error_id ingest_too_many_counters{"ingest.too_many_counters"};
inline constexpr error_id ingest_too_many_repetitions{"ingest.too_many_repetitions"};
inline constexpr error_id ingest_unreadable{"ingest.unreadable"};

inline constexpr error_id compare_ambiguous_ref{"compare.ambiguous_ref"};
inline constexpr error_id compare_bad_ref{"compare.bad_ref"};
inline constexpr error_id compare_bad_request{"compare.bad_request"};
inline constexpr error_id compare_mismatch{"compare.mismatch"};
inline constexpr error_id compare_not_found{"compare.not_found"};
inline constexpr error_id compare_too_large{"compare.too_large"};
inline constexpr error_id compare_too_many_pairs{"compare.too_many_pairs"};

inline constexpr error_id query_bad_value{"query.bad_value"};
inline constexpr error_id alert_bad_note{"alert.bad_note"};
inline constexpr error_id alert_bad_status{"alert.bad_status"};
inline constexpr error_id alert_not_found{"alert.not_found"};
inline constexpr error_id comparison_not_found{"comparison.not_found"};
inline constexpr error_id project_not_found{"project.not_found"};
inline constexpr error_id artifact_bad_svg{"artifact.bad_svg"};
inline constexpr error_id artifact_not_found{"artifact.not_found"};
inline constexpr error_id artifact_too_large{"artifact.too_large"};

inline constexpr error_id auth_bad_token{"auth.bad_token"};
inline constexpr error_id auth_forbidden{"auth.forbidden"};
inline constexpr error_id auth_missing_token{"auth.missing_token"};

inline constexpr error_id http_bad_json{"http.bad_json"};
inline constexpr error_id http_bad_param{"http.bad_param"};
inline constexpr error_id http_bad_request{"http.bad_request"};
inline constexpr error_id http_body_too_large{"http.body_too_large"};
inline constexpr error_id http_header_too_large{"http.header_too_large"};
inline constexpr error_id http_method_not_allowed{"http.method_not_allowed"};
inline constexpr error_id http_missing_param{"http.missing_param"};
inline constexpr error_id http_not_found{"http.not_found"};
inline constexpr error_id http_not_implemented{"http.not_implemented"};
inline constexpr error_id http_over_capacity{"http.over_capacity"};
inline constexpr error_id http_too_deep{"http.too_deep"};
inline constexpr error_id http_unsupported_media_type{"http.unsupported_media_type"};
inline constexpr error_id http_bad_header{"http.bad_header"};
inline constexpr error_id http_bad_method{"http.bad_method"};
inline constexpr error_id http_bad_response{"http.bad_response"};
inline constexpr error_id http_bad_url{"http.bad_url"};
inline constexpr error_id http_unreachable{"http.unreachable"};

inline constexpr error_id server_auth{"server.auth"};
inline constexpr error_id server_bad_response{"server.bad_response"};
inline constexpr error_id server_failed{"server.failed"};
inline constexpr error_id server_listen{"server.listen"};
inline constexpr error_id server_rejected{"server.rejected"};

inline constexpr error_id store_backup{"store.backup"};
inline constexpr error_id store_conflict{"store.conflict"};
inline constexpr error_id store_constraint{"store.constraint"};
inline constexpr error_id store_corrupt{"store.corrupt"};
inline constexpr error_id store_io{"store.io"};
inline constexpr error_id store_key_conflict{"store.key_conflict"};
inline constexpr error_id store_migrate{"store.migrate"};
inline constexpr error_id store_not_found{"store.not_found"};
inline constexpr error_id store_open{"store.open"};
inline constexpr error_id store_read_only{"store.read_only"};
inline constexpr error_id store_unsupported{"store.unsupported"};

inline constexpr error_id measure_failed{"measure.failed"};
inline constexpr error_id measure_helper_missing{"measure.helper_missing"};
inline constexpr error_id measure_perf_unavailable{"measure.perf_unavailable"};
inline constexpr error_id measure_timeout{"measure.timeout"};
inline constexpr error_id measure_valgrind_unavailable{"measure.valgrind_unavailable"};
inline constexpr error_id env_perf_timeout{"env.perf_timeout"};
inline constexpr error_id env_perf_unavailable{"env.perf_unavailable"};
inline constexpr error_id process_exec_failed{"process.exec_failed"};
inline constexpr error_id process_io{"process.io"};
inline constexpr error_id process_spawn_failed{"process.spawn_failed"};

inline constexpr error_id profile_artifacts{"profile.artifacts"};
inline constexpr error_id profile_bad_callgrind{"profile.bad_callgrind"};
inline constexpr error_id profile_bad_perf_script{"profile.bad_perf_script"};
inline constexpr error_id profile_failed{"profile.failed"};
inline constexpr error_id profile_no_samples{"profile.no_samples"};
inline constexpr error_id profile_perf_refused{"profile.perf_refused"};
inline constexpr error_id profile_perf_unavailable{"profile.perf_unavailable"};
inline constexpr error_id profile_record_failed{"profile.record_failed"};
inline constexpr error_id profile_script_failed{"profile.script_failed"};
inline constexpr error_id profile_stripped{"profile.stripped"};
inline constexpr error_id profile_timeout{"profile.timeout"};
inline constexpr error_id profile_too_large{"profile.too_large"};
inline constexpr error_id profile_unknown_event{"profile.unknown_event"};
inline constexpr error_id profile_unreadable{"profile.unreadable"};
inline constexpr error_id attribution_failed{"attribution.failed"};
inline constexpr error_id attribution_no_profile{"attribution.no_profile"};
inline constexpr error_id attribution_stripped{"attribution.stripped"};

inline constexpr error_id github_bad_response{"github.bad_response"};
inline constexpr error_id github_forbidden{"github.forbidden"};
inline constexpr error_id github_http{"github.http"};
inline constexpr error_id github_rate_limited{"github.rate_limited"};
inline constexpr error_id github_server_error{"github.server_error"};
inline constexpr error_id github_unreachable{"github.unreachable"};

inline constexpr error_id io_stdout{"io.stdout"};
inline constexpr error_id io_write{"io.write"};
inline constexpr error_id crypto_failed{"crypto.failed"};

inline constexpr error_id stats_bad_input{"stats.bad_input"};
inline constexpr error_id stats_bad_look{"stats.bad_look"};
inline constexpr error_id stats_bad_option{"stats.bad_option"};
inline constexpr error_id stats_bad_p_value{"stats.bad_p_value"};
inline constexpr error_id stats_bad_plan{"stats.bad_plan"};
inline constexpr error_id stats_bad_probability{"stats.bad_probability"};
inline constexpr error_id stats_bad_threshold{"stats.bad_threshold"};
inline constexpr error_id stats_exact_too_large{"stats.exact_too_large"};

inline constexpr error_id internal{"internal"};
} // namespace errors

} // namespace perfgate
