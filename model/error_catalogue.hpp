// The error-id catalogue: every perfgate::error id, the HTTP status the
// server answers it with, the exit code the CLI ends with, and what it means.
//
// It is the one table both doors read: server::status_for (server/router.cpp)
// and exit_code_for (model/exit_code.cpp). docs/errors.md is generated from
// it (tools/errors_doc.cpp, build target errors_doc), and
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
    // A message it is thrown with (placeholders filled in), from its throw
    // site or a test that checks it; {} for none. docs/errors.md shows it.
    std::string_view example;
};

// An id not in the catalogue is answered like a bug: HTTP 500, exit 4.
inline constexpr unsigned unknown_error_status = 500;
inline constexpr exit_code unknown_error_exit = exit_measurement;

// clang-format off
inline constexpr auto error_catalogue = std::to_array<error_entry>({
    // usage.*: the command line is wrong.
    {errors::usage_bad_arguments, 400, exit_usage, "The command's positional arguments are wrong (perfgate change-points takes one FILE).",
     "perfgate change-points: expected one FILE"},
    {errors::usage_bad_cpus, 400, exit_usage, "A CPU list (--cpus) does not parse, has a reversed range, or names a CPU out of range.",
     "bad CPU list '3-1': range '3-1' is reversed"},
    {errors::usage_bad_event, 400, exit_usage, "An event perf (or libpfm4, for --backend native) does not know, or a modifier the backend does not take.",
     "unknown event 'cyclez': not one of perf's generic names, and libpfm4 does not know it for this machine's PMUs (event not found)"},
    {errors::usage_bad_subcommand, 400, exit_usage, "A command that takes a subcommand (alerts, db, token) got none or one it does not know.",
     "perfgate token: expected 'create', 'list' or 'revoke ID|TOKEN' with --db PATH --project P"},
    {errors::usage_bad_value, 400, exit_usage, "An option's value is malformed or out of range; the message names the option and what it expects.",
     "--format: expected text or json, got 'yaml'"},
    {errors::usage_conflict, 400, exit_usage, "Two options that exclude each other, or an option that applies only together with another.",
     "perfgate run: --seed applies to --order random only"},
    {errors::usage_file_exists, 400, exit_usage, "perfgate db backup or db export was given a file that exists; they never overwrite one.",
     "backup.db: exists already; perfgate db backup never overwrites a file (name a new one)"},
    {errors::usage_missing_argument, 400, exit_usage, "A required positional argument is missing (perfgate upload FILE).",
     "perfgate upload: expected exactly one FILE (perf stat -x, output)"},
    {errors::usage_missing_option, 400, exit_usage, "A required option is missing (no --server nor --db, --server without --project or a token, ...).",
     "perfgate upload: --server needs --project P"},
    {errors::usage_missing_value, 400, exit_usage, "An option that takes a value was given none.",
     "perfgate run: option --baseline needs a value (CMD)"},
    {errors::usage_repeated_option, 400, exit_usage, "An option that may be given once was given twice.",
     "perfgate run: option --policy given more than once"},
    {errors::usage_unexpected_argument, 400, exit_usage, "A positional argument the command does not take.",
     "perfgate run: unexpected argument './bench' (quote commands; see --help)"},
    {errors::usage_unexpected_value, 400, exit_usage, "A flag (an option without a value) was given one, as --flag=value.",
     "perfgate run: option --quiet takes no value"},
    {errors::usage_unknown_option, 400, exit_usage, "An option the command does not know.",
     "perfgate run: unknown option --repetition (see perfgate run --help)"},
    {errors::usage_unsupported, 400, exit_usage, "The command cannot do this on this kind of store (perfgate db backup of a PostgreSQL database).",
     "perfgate db backup copies SQLite files; back up PostgreSQL with pg_dump: pg_dump --format=custom --file backup.dump 'postgresql://perfgate@db/perfgate'"},

    // input.*: a file or environment the CLI reads is wrong.
    {errors::input_bad_command, 500, exit_usage, "A benchmark command is empty, has an unterminated quote, or holds a control byte.",
     "command 'bench --size 'big': unterminated single quote"},
    {errors::input_bad_config, 500, exit_usage, "The benchmark config (--config) cannot be read, is not JSON, or has an unknown key, a wrong type or a missing field.",
     "bench.json: benchmarks[0].repetition: unknown key"},
    {errors::input_bad_event, 500, exit_usage, "The GitHub event file (GITHUB_EVENT_PATH) read for the run's commit and branch cannot be read or is not JSON.",
     "/github/workflow/event.json (GITHUB_EVENT_PATH): cannot read the event file"},
    {errors::input_bad_export, 500, exit_usage, "perfgate db import: the file is not a perfgate project export (docs/export-format.md), is of a newer format version, is cut short, or has a row that does not fit the schema; the message names the line. Nothing was imported.",
     "shop.jsonl:12: table 'runs': column 'git_sha': expected a string"},
    {errors::input_bad_number, 500, exit_usage, "perfgate change-points: a value in the input is not a finite number.",
     "series.csv:7: 'n/a' is not a number (a CSV file needs a header with a 'value' column)"},
    {errors::input_bad_report, 500, exit_usage, "A report JSON is malformed: another schema than perfgate.report/v1, an unknown value, a field of the wrong shape.",
     "report JSON: schema is not \"perfgate.report/v1\""},
    {errors::input_bisect_endpoint, 500, exit_usage, "perfgate bisect: an endpoint of the range does not build, its benchmark fails, or the good and the bad commit measure alike (no change to find).",
     "--good 3f2c1a9e0b7d: the build command failed (exited with status 2): make: *** [Makefile:3: prog] Error 1"},
    {errors::input_bisect_range, 500, exit_usage, "perfgate bisect: the good commit is not an ancestor of the bad one, or the range has no commit between them.",
     "--good 3f2c1a9e0b7d is not an ancestor of --bad 9a8b7c6d5e4f: nothing to bisect"},
    {errors::input_bisect_state, 500, exit_usage, "perfgate bisect --resume: the state file is missing, not perfgate's, or from another bisection.",
     ".perfgate/bisect/state.json: not a perfgate bisect state (schema)"},
    {errors::input_dirty_tree, 500, exit_usage, "perfgate bisect: the checkout has uncommitted changes to tracked files; the commits would not be what the user measures.",
     "/home/me/proj has uncommitted changes (src/a.c): commit or stash them first"},
    {errors::input_github_env, 500, exit_usage, "A GitHub step needs the GitHub Actions environment (GITHUB_* variables, the event file) and it is missing.",
     "--expect-head-sha: no event (GITHUB_EVENT_PATH or --event)"},
    {errors::input_github_event, 500, exit_usage, "The GitHub event payload cannot be read, is not a JSON object, or lacks the pull request or workflow run it needs.",
     "/github/workflow/event.json: a pull_request event without pull_request.number"},
    {errors::input_github_sha, 500, exit_usage, "A commit SHA from the GitHub event or GITHUB_SHA that is not 40 or 64 hex digits: it would go into an API path, so nothing is posted.",
     "/github/workflow/event.json: pull_request.head.sha: \"../../../../orgs/victim/x\" is not a commit SHA (40 or 64 hex digits): nothing posted to GitHub"},
    {errors::input_gitlab_env, 500, exit_usage, "A GitLab step needs the GitLab CI environment (CI_* variables, PERFGATE_GITLAB_TOKEN) and it is missing, or a value that would go into an API path is not what GitLab sends.",
     "CI_COMMIT_SHA \"../../users\" is not a commit SHA (40 or 64 hex digits): nothing posted to GitLab"},
    {errors::input_git, 500, exit_usage, "A git question perfgate asked cannot be answered: not a repository, a commit not in it, no common ancestor, a baseline checkout at another commit than the baseline rule names.",
     {}},
    {errors::input_shallow_clone, 500, exit_usage, "The baseline rule needs history a shallow clone does not have: check out with fetch-depth: 0.",
     {}},
    {errors::input_head_sha_mismatch, 500, exit_usage, "perfgate github --expect-head-sha: the event names another commit; nothing is posted.",
     "/github/workflow/event.json: the pull_request event's head SHA '3f1c2e9...' is not the expected '9b07d41...': refusing to post a report for another commit"},
    {errors::input_no_column, 500, exit_usage, "perfgate change-points: the CSV header has no column named by --column.",
     "series.csv:1: the CSV header has no column 'value' (columns: time,cycles)"},
    {errors::input_no_data, 500, exit_usage, "perfgate change-points: the input holds no numbers.",
     "series.csv: no numbers in the file"},
    {errors::input_unknown_project, 500, exit_usage, "A command on a --db store named a project the store does not have.",
     "perfgate.db: no project 'shop'"},
    {errors::input_unreadable, 500, exit_usage, "A file named on the command line cannot be read.",
     "bench.json: cannot read: No such file or directory"},
    {errors::input_unwritable, 500, exit_usage, "The report file (--output) cannot be written.",
     "/readonly/report.json: cannot write the report"},

    // policy.*: the policy file is wrong.
    {errors::policy_bad_json, 400, exit_usage, "The policy file is not valid JSON.",
     "policy.json:4: not valid JSON: [json.exception.parse_error.101] parse error at line 4, column 3: syntax error while parsing object - unexpected '}'; expected string literal"},
    {errors::policy_bad_value, 400, exit_usage, "A policy key has a value of the wrong type or out of its range; the message names the key path.",
     "policy.json: counters.cycles.threshold_pct: expected a number in [0, 1e+06]"},
    {errors::policy_too_large, 400, exit_usage, "A map of per-benchmark or per-counter overrides in the policy has more entries than allowed.",
     "policy.json: benchmarks: 1001 entries; at most 1000 per map"},
    {errors::policy_unknown_key, 400, exit_usage, "The policy has a key perfgate does not know; the message lists the allowed keys.",
     "policy.json: unknown key 'counters.cycles.threshold' (allowed: gate, threshold_pct, max_cov, min_samples, better)"},

    // ingest.*: a capture or an uploaded run is wrong.
    {errors::ingest_bad_csv, 422, exit_usage, "A perf stat capture does not parse (the message gives SOURCE:LINE), or an uploaded run has no counters.",
     "bench.csv:3: value 'abc' of event 'cycles' is not a number"},
    {errors::ingest_bad_field, 400, exit_usage, "A field of a request or an uploaded run is missing, of the wrong type or malformed; the message names it.",
     "field 'benchmark': must not be empty"},
    {errors::ingest_bad_input, 422, exit_usage, "A benchmark harness's output (google/benchmark, hyperfine, Catch2, nanobench, samples JSON) does not parse, holds no samples or only aggregates; the message names the source and the field.",
     {}},
    {errors::ingest_bad_idempotency_key, 400, exit_usage, "The Idempotency-Key header is repeated, or is not 1 to 255 printable ASCII characters.",
     "Idempotency-Key: expected 1 to 255 printable ASCII characters without spaces (e.g. a UUID), got 300 bytes"},
    {errors::ingest_idempotency_conflict, 409, exit_usage, "An Idempotency-Key the project has already seen with a different upload.",
     "Idempotency-Key '6f1d...' was already used for a different upload to project 'shop': send a new key for a new run (the same key only to retry the same request)"},
    {errors::ingest_too_many_counters, 413, exit_usage, "A capture or run with more counters than a run may hold (max_counters_per_run).",
     "bench.csv:257: event 'r01c4' is counter 257 of this capture; at most 256 counters per run"},
    {errors::ingest_too_many_repetitions, 413, exit_usage, "A capture or run with more repetitions than a run may hold (max_repetitions).",
     "counter 'cycles' has 10001 samples; at most 10000 repetitions per run"},
    {errors::ingest_unreadable, 422, exit_usage, "A perf stat capture file cannot be read.",
     "bench.csv: cannot read: No such file or directory"},

    // compare.*: the runs of a compare cannot be found or compared.
    {errors::compare_ambiguous_ref, 400, exit_usage, "A git sha prefix given as base or head matches several commits; give more digits.",
     "base: git sha prefix '3f1c2e9' matches 2 commits of project 'shop': 3f1c2e90b4..., 3f1c2e97aa...; give more digits"},
    {errors::compare_bad_ref, 400, exit_usage, "A base or head that is neither a run id nor a git sha.",
     "head: 'main' is neither a run id nor a git sha (7-40 hex digits)"},
    {errors::compare_bad_request, 422, exit_usage, "A compare of no (baseline, candidate) pair (the HTTP API refuses an empty list first, as ingest.bad_field).",
     "no (baseline_run, candidate_run) pair given"},
    {errors::compare_mismatch, 422, exit_usage, "Runs that cannot be compared: two benchmarks in one pair, a benchmark in two pairs, or no benchmark measured on one testbed at both refs.",
     "run 12 is benchmark 'parse' but run 13 is 'render'"},
    {errors::compare_not_found, 404, exit_usage, "A run (by id or git sha) or a comparison page the project does not have.",
     "baseline run 12 not found in project 'shop'"},
    {errors::compare_too_large, 422, exit_usage, "The runs of one compare hold more counters or samples than a compare may read; compare fewer pairs per request.",
     "this gate compares more than 4096 counters (4100 in the first 17 of its 20 pairs); at most 4096 counters per compare: compare fewer pairs per request"},
    {errors::compare_too_many_pairs, 413, exit_usage, "A compare request with more pairs than one compare takes (api::max_compare_pairs).",
     "request body: field 'pairs' holds 1001 [baseline_run, candidate_run] pairs; at most 1000 pairs per compare"},

    // Lists, alerts, comparisons, projects and flame graphs on the server.
    {errors::query_bad_value, 400, exit_usage, "A list's limit out of its range (comparisons, alerts).",
     "limit 5000: expected 1 to 1000"},
    {errors::alert_bad_note, 400, exit_usage, "An alert note over the size limit or holding control characters.",
     "field 'note': control characters are not allowed (newlines and tabs are)"},
    {errors::alert_bad_status, 400, exit_usage, "An alert status other than untriaged, acknowledged, invalid, wontfix or fixed.",
     "request body: field 'status': 'done' is not a status (expected untriaged | acknowledged | invalid | wontfix | fixed)"},
    {errors::alert_not_found, 404, exit_usage, "The project has no alert with this id.",
     "project 'shop' has no alert 42"},
    {errors::comparison_not_found, 404, exit_measurement, "The project has no comparison with this id.",
     "no comparison 42 in project 'shop'"},
    {errors::accept_denied, 403, exit_usage, "perfgate accept was asked by a user whose repository permission is not write, maintain or admin: nothing changed, and a reply comment says so.",
     "perfgate accept: @visitor has read permission on octo/shop; accepting a regression needs write, maintain or admin: nothing changed (replied on PR #7)"},
    {errors::accept_no_comparison, 404, exit_usage, "An acceptance for a commit the project has no comparison of (its candidate runs): gate the pull request head with perfgate run --server first.",
     "project 'shop' has no comparison whose candidate is commit 9fceb02d0ae598e95dc970b74767f19372d61af8: gate that commit (perfgate run --server) before accepting it"},
    {errors::project_not_found, 404, exit_measurement, "The server has no project of this name (projects are created by perfgate token create).",
     "no project 'shop' (projects are created by `perfgate token create`)"},
    {errors::artifact_bad_attribution, 422, exit_measurement, "An uploaded attribution that is not the report's attribution object, or beyond the server's limits.",
     "the attribution's callgrind.top has 250 rows; this server keeps at most 100"},
    {errors::artifact_bad_benchmark, 422, exit_measurement, "An artifact for a benchmark the comparison does not have.",
     {}},
    {errors::artifact_bad_svg, 422, exit_measurement, "An uploaded flame graph that is not UTF-8 SVG text.",
     "the flame graph is not an SVG document (it does not start with <svg or <?xml)"},
    {errors::artifact_not_found, 404, exit_measurement, "The comparison has no flame graph of this benchmark.",
     "comparison 42 of project 'shop' has no flame graph of benchmark 'parse'"},
    {errors::artifact_too_large, 413, exit_measurement, "An uploaded flame graph or attribution larger than the server's limit.",
     "a flame graph of 5000000 bytes is larger than this server's limit of 4194304 bytes (4 MiB)"},
    {errors::artifact_too_many, 413, exit_measurement, "A comparison already holds the most artifacts (or bytes of them) the server keeps per comparison.",
     {}},

    // auth.*: the server refuses who is asking.
    {errors::auth_bad_token, 401, exit_measurement, "The Authorization header is not 'Bearer <token>', or the token is unknown or revoked.",
     "Authorization header: unknown, revoked or expired token"},
    {errors::auth_forbidden, 403, exit_measurement, "The token is another project's, or a dashboard form failed its same-site or CSRF check.",
     "this token does not grant access to project 'shop'"},
    {errors::auth_missing_token, 401, exit_measurement, "A request that needs a token came without one.",
     "missing 'Authorization: Bearer <token>' header (create a token with `perfgate token create`)"},
    {errors::auth_missing_scope, 403, exit_measurement, "The token is the project's but lacks the scope this route needs (docs/http-api.md \"Token scopes\"); the message names the scope.",
     "POST /api/v1/projects/{project}/webhooks needs a token with scope 'admin'; token 7 ('pr-ci') has scopes read,upload"},
    {errors::token_not_found, 404, exit_usage, "perfgate token revoke: the project has no token with this id (or this secret); perfgate token list shows them.",
     "project 'shop' has no token '17' (perfgate token list --project shop shows its tokens)"},

    // http.*, answered by the server: the request's framing or route is wrong.
    {errors::http_bad_json, 400, exit_measurement, "The request body is not JSON, or not a JSON object.",
     "request body: expected a JSON object, got array"},
    {errors::http_bad_param, 400, exit_measurement, "A query parameter (or path id) the route does not take, or one that is malformed.",
     "unknown query parameter 'bench' (known: benchmark, counter, branch, testbed, since, limit, format)"},
    {errors::http_bad_request, 400, exit_measurement, "A malformed HTTP request: no or several Host headers, conflicting framing headers, a parse error.",
     "more than one Host header (RFC 9112 section 3.2)"},
    {errors::http_body_too_large, 413, exit_measurement, "A request body over the server's limit (--max-body), or a body on a request that takes none.",
     "request body over the limit of 8388608 bytes (--max-body)"},
    {errors::http_header_too_large, 431, exit_measurement, "Request headers over the server's limit (--max-header).",
     "request header over the limit of 65536 bytes (--max-header)"},
    {errors::http_method_not_allowed, 405, exit_measurement, "A method the route does not take; the Allow header lists those it does.",
     "DELETE is not allowed on /api/v1/projects/{project}/runs; use POST"},
    {errors::http_missing_param, 400, exit_measurement, "A required query parameter is absent or empty.",
     "query parameter 'benchmark' is required"},
    {errors::http_not_found, 404, exit_measurement, "No route, page or asset at this path.",
     "no route for '/api/v1/projects/shop/run' (paths take no trailing slash)"},
    {errors::http_not_implemented, 501, exit_measurement, "A transfer coding other than chunked.",
     "Transfer-Encoding 'gzip, chunked': transfer coding 'gzip' is not supported, only chunked"},
    {errors::http_too_many_requests, 429, exit_measurement, "Too many anonymous page renders or history reads from one address (--public-read); Retry-After says when to come back.",
     {}},
    {errors::http_over_capacity, 503, exit_measurement, "Every connection slot of the server is busy (--max-connections); retry later.",
     "the server is at its limit of 512 connections, all busy; retry later (--max-connections)"},
    {errors::http_too_deep, 400, exit_measurement, "A JSON body nested deeper than the server reads (api::max_json_depth).",
     "request body: objects and arrays nested deeper than 32 levels (the limit)"},
    {errors::http_unsupported_media_type, 415, exit_measurement, "A Content-Type the route does not take.",
     "Content-Type 'text/plain' not supported here; send application/json or text/csv"},
    // http.*, met by the HTTP client (the CLI talking to a server or GitHub).
    {errors::http_bad_header, 400, exit_measurement, "The HTTP client was given a header name holding CR, LF or ':'.",
     "header 'X-Bad:Name' for https://perf.example.com/api/v1/healthz: no CR, LF or ':' in names"},
    {errors::http_bad_method, 400, exit_measurement, "The HTTP client was given a method it does not know.",
     "unknown HTTP method 'FETCH' for https://perf.example.com/api/v1/healthz"},
    {errors::http_bad_response, 400, exit_measurement, "A response body over the client's limit, or a response that is broken.",
     "GET https://perf.example.com/api/v1/projects/shop/history: response body over the 64 MiB limit"},
    {errors::http_bad_url, 400, exit_usage, "A malformed URL (--server): not http or https, no host, a bad port, or user:password@ in it.",
     "bad URL 'perf.example.com': expected http://HOST[:PORT] or https://HOST[:PORT][/PREFIX]"},
    {errors::http_unreachable, 400, exit_measurement, "The server cannot be reached (name resolution, connect, TLS, proxy, timeout), or libcurl cannot be loaded.",
     "POST https://perf.example.com/api/v1/projects/shop/runs: Could not resolve host: perf.example.com (after 3 attempts)"},

    // server.*: what the CLI met at perfgate's server (and serve's listener).
    {errors::server_auth, 500, exit_usage, "The perfgate server refused the token (401 or 403): missing, unknown, or another project's.",
     "POST https://perf.example.com/api/v1/projects/shop/runs: HTTP 401: [auth.bad_token] Authorization header: unknown or revoked token (check --token / PERFGATE_TOKEN: a token of this project, from `perfgate token create`)"},
    {errors::server_bad_response, 500, exit_measurement, "The perfgate server answered something the API does not say: not JSON, not a report, an unexpected status.",
     "POST https://perf.example.com/api/v1/projects/shop/compare: the answer is not a perfgate report: report JSON: schema is not \"perfgate.report/v1\""},
    {errors::server_failed, 500, exit_measurement, "The perfgate server answered 5xx (uploads are retried first).",
     "POST https://perf.example.com/api/v1/projects/shop/runs: HTTP 503: [store.conflict] the store refused the request (reference 1a2b3c4d) (after 3 attempts)"},
    {errors::server_listen, 500, exit_measurement, "perfgate serve cannot listen on its address and port (in use, not permitted).",
     "cannot listen on 127.0.0.1:8080: bind failed: Address already in use"},
    {errors::server_rejected, 500, exit_usage, "The perfgate server refused the request with a 4xx other than 401 and 403; the message quotes its error.",
     "POST https://perf.example.com/api/v1/projects/shop/runs: HTTP 422: [ingest.bad_csv] upload:3: value 'abc' of event 'cycles' is not a number"},

    // store.*: the database. The server answers them without the engine's message.
    {errors::store_backup, 500, exit_measurement, "perfgate db backup failed: an in-memory database, a file that exists, or a copy that fails its check.",
     "backup.db: the backup file exists already; perfgate never overwrites one"},
    {errors::store_conflict, 503, exit_measurement, "PostgreSQL aborted a write to break a deadlock or a serialization failure, and the retries ran out.",
     "postgresql://perfgate@db/perfgate: committing: ERROR: deadlock detected"},
    {errors::store_constraint, 422, exit_measurement, "Data the store refuses: a counter or repetition twice, a non-finite value, a value over its length limit, ...",
     "perfgate.db: run of benchmark 'parse': counter 'cycles' appears twice"},
    {errors::store_copy_mismatch, 500, exit_measurement, "perfgate db copy: a table of the copy differs from the source's after the copy (rows or digest), or has other columns; the copy's mark stays, so rerunning the command finishes and verifies it again.",
     "postgresql://perfgate@db/perfgate: the copy differs from perfgate.db in runs (1200 rows, 1199 there): was the source written during the copy? Rerun the same command (stop the source's servers first) to finish and verify again"},
    {errors::store_copy_target_not_empty, 400, exit_usage, "perfgate db copy: the target database has rows (and no unfinished copy of this source); nothing was written.",
     "postgresql://perfgate@db/perfgate: is not empty (rows in projects, runs); perfgate db copy writes only into an empty database (a new file, or a new PostgreSQL database after perfgate db migrate); nothing was written. To add one project to a store that has others: perfgate db export / import"},
    {errors::store_copy_unknown_table, 500, exit_measurement, "perfgate db copy: the schema has a table the copy does not know (or lacks one it knows); nothing was copied.",
     "perfgate.db: table(s) retention_rules are not in perfgate db copy's list (store/copy_tables.cpp): this perfgate would leave them behind, so it copies nothing"},
    {errors::store_import_conflict, 400, exit_usage, "perfgate db import or db copy --merge: the target store has a project of that name, or (import without --renumber) a row with an id the file's project uses; nothing was imported or merged.",
     "perfgate.db: project 'shop' exists already; perfgate db import adds a project that the store does not have"},
    {errors::store_corrupt, 500, exit_measurement, "The SQLite database fails its integrity check, or a damaged page was read.",
     "perfgate.db: the database fails its integrity check (PRAGMA quick_check): *** in database main *** Page 7: btreeInitPage() returns error code 11"},
    {errors::store_io, 500, exit_measurement, "Any other failure of the database engine (SQLite, libpq).",
     "perfgate.db: inserting the run: disk I/O error"},
    {errors::store_full, 507, exit_measurement, "The database's disk (or quota) is full: SQLite's SQLITE_FULL, PostgreSQL's SQLSTATE 53100. Nothing was stored; retrying will not help until space is freed.",
     "perfgate.db: inserting the run: database or disk is full"},
    {errors::store_key_conflict, 500, exit_measurement, "An idempotency key stored for another request (the service answers ingest.idempotency_conflict).",
     "perfgate.db: idempotency key '6f1d...' of project 'shop' was used for another request"},
    {errors::store_lost, 503, exit_measurement, "The SQLite database file was deleted or replaced under the running server: writes are refused (they would be lost) and /healthz is 503 until it is restored or the server restarted.",
     "/srv/perfgate.db: the database file was deleted (or moved away) after it was opened: writes are refused, they would be lost; restore the file and restart"},
    {errors::store_libpq_missing, 500, exit_measurement, "A postgresql:// database was named, but libpq (libpq.so.5, Debian's libpq5), which perfgate loads on first use, is not installed.",
     "postgresql://perfgate@db/perfgate: PostgreSQL databases need libpq, which cannot be loaded (libpq.so.5: cannot open shared object file: No such file or directory); install it: apt-get install libpq5"},
    {errors::store_migrate, 500, exit_measurement, "A schema migration failed, or the database's schema is newer than this perfgate.",
     "perfgate.db: database schema version 10 is newer than this perfgate knows (version 9, 009_open_alerts.sql); upgrade perfgate"},
    {errors::store_not_found, 404, exit_measurement, "A project, run or comparison the store does not have.",
     "perfgate.db: run 12 not found in project 'shop'"},
    {errors::store_open, 500, exit_measurement, "The database cannot be opened: not a database, locked, server unreachable, login refused.",
     "perfgate.db: cannot open database: unable to open database file"},
    {errors::store_read_only, 500, exit_measurement, "The database cannot be written: a read-only file or directory, a PostgreSQL standby, read-only transactions.",
     "perfgate.db: the database cannot be written: the file is read-only"},
    {errors::store_unsupported, 500, exit_measurement, "An operation this store engine does not offer (backup of a PostgreSQL database).",
     "postgresql://perfgate@db/perfgate: a PostgreSQL database is backed up with pg_dump, e.g. pg_dump --format=custom --file backup.dump 'postgresql://perfgate@db/perfgate' (restore: pg_restore --dbname URI backup.dump)"},

    // measure.*, env.*, process.*: measuring on this machine failed.
    {errors::measure_failed, 500, exit_measurement, "A benchmark exited non-zero, was killed, could not be executed, or left no result.",
     "benchmark 'parse', candidate side, round 3/10: './parse --big' exited with status 1"},
    {errors::measure_helper_missing, 500, exit_measurement, "perfgate-exec, the wrapper that reports the workload's exit status, is not installed.",
     "perfgate-exec (the workload wrapper that reports the benchmark's exit status to perfgate) was not found at /usr/local/bin/perfgate-exec; install it next to the perfgate executable or in PATH"},
    {errors::measure_perf_unavailable, 500, exit_measurement, "perf is missing or refused by the kernel (perf_event_paranoid), or its output cannot be read.",
     "perf ('perf') is not installed or not in PATH. Install it (Debian: apt-get install linux-perf; Ubuntu: apt-get install linux-tools-$(uname -r)), or measure with --backend rusage"},
    {errors::measure_timeout, 500, exit_measurement, "A benchmark execution exceeded --timeout and was killed.",
     "benchmark 'parse', baseline side, round 1/10: './parse --big' did not finish within --timeout 60 s and was killed"},
    {errors::measure_valgrind_unavailable, 500, exit_measurement, "--backend callgrind needs valgrind and it is not in PATH.",
     "--backend callgrind needs valgrind, and 'valgrind' is not in PATH: install it (apt-get install valgrind) or use --backend perf|rusage"},
    {errors::env_perf_timeout, 500, exit_measurement, "perf did not answer the environment check's probe in time.",
     "'perf' did not finish within 10000 ms"},
    {errors::env_perf_unavailable, 500, exit_measurement, "perf cannot be executed for the environment check.",
     "cannot execute 'perf' (exit status 127: perf: not found)"},
    {errors::process_exec_failed, 500, exit_measurement, "A program cannot be executed: not in PATH, not executable, or a working directory it cannot enter.",
     "cannot execute './bench': command not found in PATH"},
    {errors::process_io, 500, exit_measurement, "An I/O failure around a child process (its temporary directory, poll).",
     "cannot create a temporary directory /tmp/perfgate-XXXXXX: No space left on device"},
    {errors::process_spawn_failed, 500, exit_measurement, "A child process could not be started (pipe, vfork, /dev/null, its output file).",
     "vfork: Resource temporarily unavailable"},

    // profile.*, attribution.*: profiles (--profile, callgrind attribution).
    // Ids marked "in the report" are not thrown to the user: they are listed
    // in the report's attribution errors and the verdict stands.
    {errors::profile_artifacts, 500, exit_measurement, "The profile's artifacts (flame graph, folded stacks under --artifacts) cannot be written.",
     "cannot create perf-artifacts/parse: Permission denied"},
    {errors::profile_bad_callgrind, 500, exit_measurement, "A callgrind output file does not parse (SOURCE:LINE).",
     "callgrind.out.123:2: not a callgrind output file (no events: line)"},
    {errors::profile_bad_dhat, 500, exit_measurement, "A DHAT output file (valgrind --tool=dhat JSON) does not parse or misses a field (SOURCE).",
     "dhat.123.json: \"tb\" is not a count"},
    {errors::profile_bad_memcheck, 500, exit_measurement, "A memcheck XML output file does not parse or misses a field (SOURCE).",
     "memcheck.123.xml: not XML at byte 412: Error parsing end tag"},
    {errors::profile_bad_perf_script, 500, exit_measurement, "perf script's output does not parse (SOURCE:LINE).",
     "perf.script:14: a stack frame outside a sample (no header line before it)"},
    {errors::profile_failed, 500, exit_measurement, "In the report: a benchmark's perf profile failed; the message says why.",
     "benchmark 'parse': the candidate side's profile has no samples (1 execution(s) recorded): the program ran too briefly for the sampling rate, or perf recorded nothing"},
    {errors::profile_no_samples, 500, exit_measurement, "A perf profile has no samples: the program ran too briefly for the sampling rate.",
     "the candidate's profile has no samples: no flame graph to draw"},
    {errors::profile_perf_refused, 500, exit_measurement, "The kernel refused perf record (perf_event_paranoid).",
     "benchmark 'parse', baseline side, profiled execution 1/3: perf record was refused by the kernel (kernel.perf_event_paranoid = 3): no profile. Fix: sudo sysctl kernel.perf_event_paranoid=1 (persist it in /etc/sysctl.d/), or run with --backend callgrind / --backend rusage"},
    {errors::profile_perf_unavailable, 500, exit_measurement, "--profile needs perf and it cannot be executed.",
     "benchmark 'parse', baseline side, profiled execution 1/3: cannot execute 'perf': command not found in PATH. perf is needed for --profile: install it (Debian: apt-get install linux-perf; Ubuntu: linux-tools-$(uname -r))"},
    {errors::profile_record_failed, 500, exit_measurement, "perf record failed (its exit status or signal, and its stderr).",
     "benchmark 'parse', candidate side, profiled execution 2/3: perf record -g -e cycles -- './parse --big' exited with status 1"},
    {errors::profile_script_failed, 500, exit_measurement, "perf script failed (its exit status or signal, and its stderr).",
     "benchmark 'parse', candidate side, profiled execution 2/3: perf script was killed by signal 9 (SIGKILL)"},
    {errors::profile_stripped, 500, exit_measurement, "In the report: most samples have no function names (a stripped binary).",
     "samples without function names, shown as [unknown] (candidate: 92% in /work/build/parse): the binary is stripped or has no symbol table, so the top functions and the flame graph cannot name its code. Fix: build without stripping (no -s or strip; -g also gives source lines), or install its debug symbols (the -dbgsym/-dbg package); frame pointers (-fno-omit-frame-pointer) give full stacks"},
    {errors::profile_timeout, 500, exit_measurement, "The workload did not finish within --timeout under perf record.",
     "benchmark 'parse', candidate side, profiled execution 1/3: './parse --big' did not finish within --timeout under perf record"},
    {errors::profile_too_large, 500, exit_measurement, "A profile over its size limit (--profile-max-mb, or a callgrind file over callgrind_limits::max_file_bytes).",
     "callgrind.out.123: 300000000 bytes, more than the limit of 268435456 bytes (callgrind_limits::max_file_bytes)"},
    {errors::profile_unknown_event, 500, exit_measurement, "The profile has no cost of the event asked for (a callgrind file without Ir).",
     "the profile has no event 'Ir' (it has: Dr Dw)"},
    {errors::profile_unreadable, 500, exit_measurement, "A profile file cannot be read.",
     "callgrind.out.123: cannot read: No such file or directory"},
    {errors::attribution_failed, 500, exit_measurement, "In the report: the callgrind attribution failed; the message says why.",
     "callgrind.out.123:2: not a callgrind output file (no events: line)"},
    {errors::attribution_no_profile, 500, exit_measurement, "Callgrind left no profile to attribute.",
     "callgrind left no profile to attribute (see the warnings above)"},
    {errors::attribution_stripped, 500, exit_measurement, "In the report: most of one side's cost is in unnamed functions (a stripped binary).",
     "the candidate profile has 95% of its instructions in functions callgrind knows only by address (such as 0x401a2c): the benchmark has no symbols (stripped, or linked with -s). Build it with symbols to see function names: compile with -g and do not strip it (no -s, no strip, no install -s)"},

    // github.*: GitHub's REST API.
    {errors::github_bad_response, 500, exit_measurement, "GitHub answered something other than the JSON expected.",
     "GET /user: no login in the answer: cannot tell our comments from others'"},
    {errors::github_forbidden, 500, exit_measurement, "GitHub answered 403: the workflow's token lacks a permission (the message names it).",
     "POST /repos/acme/shop/issues/7/comments: HTTP 403 \"Resource not accessible by integration\": the token lacks the `pull-requests: write` permission. Add `permissions: { pull-requests: write, statuses: write }` to the job; pull requests from forks only get a read-only token, so use the workflow_run split (ci/examples/fork-measure.yml + ci/examples/fork-publish.yml)"},
    {errors::github_http, 500, exit_measurement, "GitHub answered another non-2xx status; the message quotes GitHub's.",
     "PATCH /repos/acme/shop/issues/comments/99: HTTP 422: Validation Failed"},
    {errors::github_rate_limited, 500, exit_measurement, "GitHub's rate limit would take longer to clear than perfgate waits, or the retries ran out.",
     "POST /repos/acme/shop/statuses/3f1c2e9...: rate limited (HTTP 403) after 5 attempts: API rate limit exceeded"},
    {errors::github_server_error, 500, exit_measurement, "GitHub answered 5xx, after retries.",
     "POST /repos/acme/shop/issues/7/comments: HTTP 502 after 5 attempts: Bad Gateway"},
    {errors::github_unreachable, 500, exit_measurement, "GitHub's API cannot be reached, after retries.",
     "POST https://api.github.com/repos/acme/shop/statuses/3f1c2e9...: Could not resolve host: api.github.com (after 5 attempts)"},
    // gitlab.*: GitLab's REST API v4.
    {errors::gitlab_bad_response, 500, exit_measurement, "GitLab answered something other than the JSON expected.",
     "GET https://gitlab.example.com/api/v4/user: no username in the answer: cannot tell our notes from others'"},
    {errors::gitlab_http, 500, exit_measurement, "GitLab answered another non-2xx status; the message quotes GitLab's.",
     "POST https://gitlab.example.com/api/v4/projects/42/statuses/3f1c2e9...: HTTP 403: 403 Forbidden"},
    {errors::gitlab_rate_limited, 500, exit_measurement, "GitLab's rate limit would take longer to clear than perfgate waits, or the retries ran out.",
     "GET https://gitlab.example.com/api/v4/projects/42/merge_requests/7/notes: rate limited (HTTP 429) after 4 attempts"},
    {errors::gitlab_server_error, 500, exit_measurement, "GitLab answered 5xx, after retries.",
     "PUT https://gitlab.example.com/api/v4/projects/42/merge_requests/7/notes/1001: HTTP 502 after 4 attempts"},
    {errors::gitlab_unreachable, 500, exit_measurement, "GitLab's API cannot be reached, after retries.",
     "POST https://gitlab.example.com/api/v4/projects/42/statuses/3f1c2e9...: Could not resolve host: gitlab.example.com (after 4 attempts)"},

    // io.*, crypto.*: the machine under perfgate.
    {errors::io_stdout, 500, exit_measurement, "Standard output could not be written: the report is lost (exit 4 whatever the verdict).",
     "cannot write to standard output (No space left on device): the report is lost"},
    {errors::io_write, 500, exit_measurement, "A file perfgate writes or appends to (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, attribution.json) cannot be written.",
     "/home/runner/work/_temp/step_summary: cannot open GITHUB_STEP_SUMMARY for appending"},
    {errors::crypto_failed, 500, exit_measurement, "OpenSSL's SHA-256 failed (out of memory).",
     "SHA-256 failed (OpenSSL EVP_Digest)"},

    // stats.*: a statistics function called outside its domain: a bug in
    // the caller, which validates user input first.
    {errors::stats_bad_input, 500, exit_measurement, "A proportion's counts or a Wilson interval's z outside their domain.",
     "wilson_interval: z = -1.000000"},
    {errors::stats_bad_look, 500, exit_measurement, "A sequential look past the plan's last.",
     "sequential_look: look 5 of a plan with 5 looks"},
    {errors::stats_bad_option, 500, exit_measurement, "Change-point options outside their domain (window < 2, max_p outside (0, 1), ...).",
     "change_points: window must be at least 2, got 1"},
    {errors::stats_bad_p_value, 500, exit_measurement, "A p-value outside [0, 1] given to a multiplicity correction.",
     "p-value [3] must be in [0, 1], got 1.500000"},
    {errors::stats_bad_plan, 500, exit_measurement, "A sequential plan with parameters out of range.",
     "a sequential design needs at least one look"},
    {errors::stats_bad_probability, 500, exit_measurement, "A probability (alpha, power, a quantile's p) outside its range.",
     "hodges_lehmann: alpha must be in (0, 1), got 1.000000"},
    {errors::stats_bad_threshold, 500, exit_measurement, "A negative or non-finite threshold for a sequential look.",
     "sequential_look: threshold_pct must be finite and >= 0, got -1.000000"},
    {errors::stats_exact_too_large, 500, exit_measurement, "Samples too large for the exact Mann-Whitney distribution.",
     "exact Mann-Whitney distribution for sizes 2000 and 3000 is too expensive; use the normal approximation"},

    // internal: a bug, or a failure nothing above names.
    {errors::internal, 500, exit_measurement, "A bug or an unexpected failure in perfgate; the server answers it with a reference to its log line.",
     "internal server error (reference 1a2b3c4d)"},
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
