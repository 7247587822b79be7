// perfgate_errors_doc: writes docs/errors.md from the error catalogue
// (model/error_catalogue.hpp), with an example message per id taken from
// the throw sites and the tests.
//
//   perfgate_errors_doc                 the page on standard output
//   perfgate_errors_doc --output FILE   the page into FILE
//   perfgate_errors_doc --check FILE    exit 1 unless FILE is the page
//
// The build target errors_doc regenerates docs/errors.md in the source
// tree; the ctest errors_doc_up_to_date runs --check on it.
#include "model/error_catalogue.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using perfgate::error_catalogue;
using perfgate::error_entry;

// The page's sections, in order; each lists the areas ("usage" of
// "usage.bad_value") it documents. Every area of the catalogue is in one.
struct section {
    std::string_view title;
    std::string_view intro;
    std::vector<std::string_view> areas;
};

const std::vector<section>& sections()
{
    static const std::vector<section> all{
        {"The command line",
         "The command line is wrong. The message names the option or argument; `perfgate CMD --help` lists them.",
         {"usage"}},
        {"Input files and environment",
         "A file or environment the CLI reads is wrong: the benchmark config, a report, the GitHub Actions "
         "environment, a series for change-points.",
         {"input"}},
        {"The policy file",
         "The policy file (`--policy`, or the policy of a compare request) is wrong; the message "
         "gives the file and the key path (docs/report.md).",
         {"policy"}},
        {"Captures and uploaded runs",
         "A `perf stat -x,` capture or an uploaded run is wrong (docs/perf-input.md, docs/http-api.md).",
         {"ingest"}},
        {"Compares", "The runs of a compare cannot be found or compared.", {"compare"}},
        {"Server resources",
         "Lists, alerts, comparisons, acceptances, projects and flame graphs on the server.",
         {"query", "alert", "comparison", "accept", "project", "artifact"}},
        {"Authentication", "The server refuses who is asking (docs/http-api.md, tokens).", {"auth", "token"}},
        {"HTTP",
         "Answered by the server when a request's framing, route or parameters are wrong; the last five are met "
         "by perfgate's HTTP client when it talks to a server or to GitHub.",
         {"http"}},
        {"perfgate's server, seen by the CLI",
         "What `perfgate run --server`, `upload` and the other client commands met at the server. A token or a "
         "request the server refuses is the user's to fix (exit 2); a failing server is not (exit 4).",
         {"server"}},
        {"The store",
         "The database, SQLite or PostgreSQL. The server answers these without the engine's message, which "
         "names files and quotes SQL: the body keeps the id and gives a reference to the server log's line.",
         {"store"}},
        {"Measuring", "Running the benchmarks on this machine failed.", {"measure", "env", "process"}},
        {"Profiles and attribution",
         "`--profile` (perf record) and callgrind attribution. Ids whose meaning starts \"In the report\" are not "
         "thrown to the user: they are listed in the report's attribution errors and the verdict stands.",
         {"profile", "attribution"}},
        {"GitHub",
         "GitHub's REST API, from `perfgate github` and `perfgate run --github` (docs/github.md).",
         {"github"}},
        {"Files and the system", "The machine under perfgate.", {"io", "crypto"}},
        {"Statistics",
         "A statistics function was called outside its domain. Callers check the user's input first, so these "
         "are bugs in perfgate: please report them.",
         {"stats"}},
        {"Internal", "Anything else.", {"internal"}},
    };
    return all;
}

// An example message per id, from its throw site (placeholders filled in)
// or from a test that checks it.
const std::map<std::string_view, std::string_view>& examples()
{
    static const std::map<std::string_view, std::string_view> all{
        {"usage.bad_arguments", "perfgate change-points: expected one FILE"},
        {"usage.bad_cpus", "bad CPU list '3-1': range '3-1' is reversed"},
        {"usage.bad_event", "unknown event 'cyclez': not one of perf's generic names, and libpfm4 does not know it "
                            "for this machine's PMUs (event not found)"},
        {"usage.bad_subcommand",
         "perfgate token: expected 'create', 'list' or 'revoke ID|TOKEN' with --db PATH --project P"},
        {"usage.bad_value", "--format: expected text or json, got 'yaml'"},
        {"usage.conflict", "perfgate run: --seed applies to --order random only"},
        {"usage.file_exists", "backup.db: exists already; perfgate db backup never overwrites a file (name a new one)"},
        {"usage.missing_argument", "perfgate upload: expected exactly one FILE (perf stat -x, output)"},
        {"usage.missing_option", "perfgate upload: --server needs --project P"},
        {"usage.missing_value", "perfgate run: option --baseline needs a value (CMD)"},
        {"usage.repeated_option", "perfgate run: option --policy given more than once"},
        {"usage.unexpected_argument", "perfgate run: unexpected argument './bench' (quote commands; see --help)"},
        {"usage.unexpected_value", "perfgate run: option --quiet takes no value"},
        {"usage.unknown_option", "perfgate run: unknown option --repetition (see perfgate run --help)"},
        {"usage.unsupported", "perfgate db backup copies SQLite files; back up PostgreSQL with pg_dump: pg_dump "
                              "--format=custom --file backup.dump 'postgresql://perfgate@db/perfgate'"},

        {"input.bad_command", "command 'bench --size 'big': unterminated single quote"},
        {"input.bad_config", "bench.json: benchmarks[0].repetition: unknown key"},
        {"input.bad_event", "/github/workflow/event.json (GITHUB_EVENT_PATH): cannot read the event file"},
        {"input.bad_number", "series.csv:7: 'n/a' is not a number (a CSV file needs a header with a 'value' column)"},
        {"input.bad_report", "report JSON: schema is not \"perfgate.report/v1\""},
        {"input.github_env", "--expect-head-sha: no event (GITHUB_EVENT_PATH or --event)"},
        {"input.github_event", "/github/workflow/event.json: a pull_request event without pull_request.number"},
        {"input.github_sha",
         "/github/workflow/event.json: pull_request.head.sha: \"../../../../orgs/victim/x\" is not a "
         "commit SHA (40 or 64 hex digits): nothing posted to GitHub"},
        {"input.head_sha_mismatch",
         "/github/workflow/event.json: the pull_request event's head SHA '3f1c2e9...' is not the expected "
         "'9b07d41...': refusing to post a report for another commit"},
        {"input.no_column", "series.csv:1: the CSV header has no column 'value' (columns: time,cycles)"},
        {"input.no_data", "series.csv: no numbers in the file"},
        {"input.unknown_project", "perfgate.db: no project 'shop'"},
        {"input.unreadable", "bench.json: cannot read: No such file or directory"},
        {"input.unwritable", "/readonly/report.json: cannot write the report"},

        {"policy.bad_json", "policy.json:4: not valid JSON: [json.exception.parse_error.101] parse error at line 4, "
                            "column 3: syntax error while parsing object - unexpected '}'; expected string literal"},
        {"policy.bad_value", "policy.json: counters.cycles.threshold_pct: expected a number in [0, 1e+06]"},
        {"policy.too_large", "policy.json: benchmarks: 1001 entries; at most 1000 per map"},
        {"policy.unknown_key", "policy.json: unknown key 'counters.cycles.threshold' (allowed: gate, threshold_pct, "
                               "max_cov, min_samples, better)"},

        {"ingest.bad_csv", "bench.csv:3: value 'abc' of event 'cycles' is not a number"},
        {"ingest.bad_field", "field 'benchmark': must not be empty"},
        {"ingest.bad_idempotency_key", "Idempotency-Key: expected 1 to 255 printable ASCII characters without spaces "
                                       "(e.g. a UUID), got 300 bytes"},
        {"ingest.idempotency_conflict",
         "Idempotency-Key '6f1d...' was already used for a different upload to project 'shop': send a new key "
         "for a new run (the same key only to retry the same request)"},
        {"ingest.too_many_counters",
         "bench.csv:257: event 'r01c4' is counter 257 of this capture; at most 256 counters per run"},
        {"ingest.too_many_repetitions", "counter 'cycles' has 10001 samples; at most 10000 repetitions per run"},
        {"ingest.unreadable", "bench.csv: cannot read: No such file or directory"},

        {"compare.ambiguous_ref", "base: git sha prefix '3f1c2e9' matches 2 commits of project 'shop': "
                                  "3f1c2e90b4..., 3f1c2e97aa...; give more digits"},
        {"compare.bad_ref", "head: 'main' is neither a run id nor a git sha (7-40 hex digits)"},
        {"compare.bad_request", "no (baseline_run, candidate_run) pair given"},
        {"compare.mismatch", "run 12 is benchmark 'parse' but run 13 is 'render'"},
        {"compare.not_found", "baseline run 12 not found in project 'shop'"},
        {"compare.too_large",
         "this gate compares more than 4096 counters (4100 in the first 17 of its 20 pairs); at most 4096 "
         "counters per compare: compare fewer pairs per request"},
        {"compare.too_many_pairs",
         "request body: field 'pairs' holds 1001 [baseline_run, candidate_run] pairs; at most 1000 pairs per compare"},

        {"query.bad_value", "limit 5000: expected 1 to 1000"},
        {"alert.bad_note", "field 'note': control characters are not allowed (newlines and tabs are)"},
        {"alert.bad_status", "request body: field 'status': 'done' is not a status (expected untriaged | "
                             "acknowledged | invalid | wontfix | fixed)"},
        {"alert.not_found", "project 'shop' has no alert 42"},
        {"comparison.not_found", "no comparison 42 in project 'shop'"},
        {"accept.denied", "perfgate accept: @visitor has read permission on octo/shop; accepting a regression needs "
                          "write, maintain or admin: nothing changed (replied on PR #7)"},
        {"accept.no_comparison",
         "project 'shop' has no comparison whose candidate is commit 9fceb02d0ae598e95dc970b74767f19372d61af8: gate "
         "that commit (perfgate run --server) before accepting it"},
        {"project.not_found", "no project 'shop' (projects are created by `perfgate token create`)"},
        {"artifact.bad_attribution", "the attribution's callgrind.top has 250 rows; this server keeps at most 100"},
        {"artifact.bad_svg", "the flame graph is not an SVG document (it does not start with <svg or <?xml)"},
        {"artifact.not_found", "comparison 42 of project 'shop' has no flame graph of benchmark 'parse'"},
        {"artifact.too_large",
         "a flame graph of 5000000 bytes is larger than this server's limit of 4194304 bytes (4 MiB)"},

        {"auth.bad_token", "Authorization header: unknown, revoked or expired token"},
        {"auth.forbidden", "this token does not grant access to project 'shop'"},
        {"auth.missing_token",
         "missing 'Authorization: Bearer <token>' header (create a token with `perfgate token create`)"},
        {"token.not_found", "project 'shop' has no token '17' (perfgate token list --project shop shows its tokens)"},

        {"http.bad_json", "request body: expected a JSON object, got array"},
        {"http.bad_param",
         "unknown query parameter 'bench' (known: benchmark, counter, branch, testbed, since, limit, format)"},
        {"http.bad_request", "more than one Host header (RFC 9112 section 3.2)"},
        {"http.body_too_large", "request body over the limit of 8388608 bytes (--max-body)"},
        {"http.header_too_large", "request header over the limit of 65536 bytes (--max-header)"},
        {"http.method_not_allowed", "DELETE is not allowed on /api/v1/projects/{project}/runs; use POST"},
        {"http.missing_param", "query parameter 'benchmark' is required"},
        {"http.not_found", "no route for '/api/v1/projects/shop/run' (paths take no trailing slash)"},
        {"http.not_implemented",
         "Transfer-Encoding 'gzip, chunked': transfer coding 'gzip' is not supported, only chunked"},
        {"http.over_capacity",
         "the server is at its limit of 512 connections, all busy; retry later (--max-connections)"},
        {"http.too_deep", "request body: objects and arrays nested deeper than 32 levels (the limit)"},
        {"http.unsupported_media_type",
         "Content-Type 'text/plain' not supported here; send application/json or text/csv"},
        {"http.bad_header", "header 'X-Bad:Name' for https://perf.example.com/api/v1/healthz: no CR, LF or ':' in "
                            "names"},
        {"http.bad_method", "unknown HTTP method 'FETCH' for https://perf.example.com/api/v1/healthz"},
        {"http.bad_response", "GET https://perf.example.com/api/v1/projects/shop/history: response body over the "
                              "64 MiB limit"},
        {"http.bad_url", "bad URL 'perf.example.com': expected http://HOST[:PORT] or https://HOST[:PORT][/PREFIX]"},
        {"http.unreachable", "POST https://perf.example.com/api/v1/projects/shop/runs: Could not resolve host: "
                             "perf.example.com (after 3 attempts)"},

        {"server.auth", "POST https://perf.example.com/api/v1/projects/shop/runs: HTTP 401: [auth.bad_token] "
                        "Authorization header: unknown or revoked token (check --token / PERFGATE_TOKEN: a token of "
                        "this project, from `perfgate token create`)"},
        {"server.bad_response", "POST https://perf.example.com/api/v1/projects/shop/compare: the answer is not a "
                                "perfgate report: report JSON: schema is not \"perfgate.report/v1\""},
        {"server.failed", "POST https://perf.example.com/api/v1/projects/shop/runs: HTTP 503: [store.conflict] the "
                          "store refused the request (reference 1a2b3c4d) (after 3 attempts)"},
        {"server.listen", "cannot listen on 127.0.0.1:8080: bind failed: Address already in use"},
        {"server.rejected", "POST https://perf.example.com/api/v1/projects/shop/runs: HTTP 422: [ingest.bad_csv] "
                            "upload:3: value 'abc' of event 'cycles' is not a number"},

        {"store.backup", "backup.db: the backup file exists already; perfgate never overwrites one"},
        {"store.conflict", "postgresql://perfgate@db/perfgate: committing: ERROR: deadlock detected"},
        {"store.constraint", "perfgate.db: run of benchmark 'parse': counter 'cycles' appears twice"},
        {"store.corrupt",
         "perfgate.db: the database fails its integrity check (PRAGMA quick_check): *** in database main *** "
         "Page 7: btreeInitPage() returns error code 11"},
        {"store.io", "perfgate.db: inserting the run: disk I/O error"},
        {"store.full", "perfgate.db: inserting the run: database or disk is full"},
        {"store.key_conflict", "perfgate.db: idempotency key '6f1d...' of project 'shop' was used for another request"},
        {"store.lost", "/srv/perfgate.db: the database file was deleted (or moved away) after it was opened: writes "
                       "are refused, they would be lost; restore the file and restart"},
        {"store.libpq_missing", "postgresql://perfgate@db/perfgate: PostgreSQL databases need libpq, which cannot be "
                                "loaded (libpq.so.5: cannot open shared object file: No such file or directory); "
                                "install it: apt-get install libpq5"},
        {"store.migrate", "perfgate.db: database schema version 10 is newer than this perfgate knows (version 9, "
                          "009_open_alerts.sql); upgrade perfgate"},
        {"store.not_found", "perfgate.db: run 12 not found in project 'shop'"},
        {"store.open", "perfgate.db: cannot open database: unable to open database file"},
        {"store.read_only", "perfgate.db: the database cannot be written: the file is read-only"},
        {"store.unsupported",
         "postgresql://perfgate@db/perfgate: a PostgreSQL database is backed up with pg_dump, e.g. pg_dump "
         "--format=custom --file backup.dump 'postgresql://perfgate@db/perfgate' (restore: pg_restore --dbname "
         "URI backup.dump)"},

        {"measure.failed", "benchmark 'parse', candidate side, round 3/10: './parse --big' exited with status 1"},
        {"measure.helper_missing",
         "perfgate-exec (the workload wrapper that reports the benchmark's exit status to perfgate) was not found "
         "at /usr/local/bin/perfgate-exec; install it next to the perfgate executable or in PATH"},
        {"measure.perf_unavailable",
         "perf ('perf') is not installed or not in PATH. Install it (Debian: apt-get install linux-perf; Ubuntu: "
         "apt-get install linux-tools-$(uname -r)), or measure with --backend rusage"},
        {"measure.timeout",
         "benchmark 'parse', baseline side, round 1/10: './parse --big' did not finish within --timeout 60 s and "
         "was killed"},
        {"measure.valgrind_unavailable",
         "--backend callgrind needs valgrind, and 'valgrind' is not in PATH: install it (apt-get install valgrind) "
         "or use --backend perf|rusage"},
        {"env.perf_timeout", "'perf' did not finish within 10000 ms"},
        {"env.perf_unavailable", "cannot execute 'perf' (exit status 127: perf: not found)"},
        {"process.exec_failed", "cannot execute './bench': command not found in PATH"},
        {"process.io", "cannot create a temporary directory /tmp/perfgate-XXXXXX: No space left on device"},
        {"process.spawn_failed", "vfork: Resource temporarily unavailable"},

        {"profile.artifacts", "cannot create perf-artifacts/parse: Permission denied"},
        {"profile.bad_callgrind", "callgrind.out.123:2: not a callgrind output file (no events: line)"},
        {"profile.bad_dhat", "dhat.123.json: \"tb\" is not a count"},
        {"profile.bad_memcheck", "memcheck.123.xml: not XML at byte 412: Error parsing end tag"},
        {"profile.bad_perf_script", "perf.script:14: a stack frame outside a sample (no header line before it)"},
        {"profile.failed", "benchmark 'parse': the candidate side's profile has no samples (1 execution(s) recorded): "
                           "the program ran too briefly for the sampling rate, or perf recorded nothing"},
        {"profile.no_samples", "the candidate's profile has no samples: no flame graph to draw"},
        {"profile.perf_refused",
         "benchmark 'parse', baseline side, profiled execution 1/3: perf record was refused by the kernel "
         "(kernel.perf_event_paranoid = 3): no profile. Fix: sudo sysctl kernel.perf_event_paranoid=1 (persist it "
         "in /etc/sysctl.d/), or run with --backend callgrind / --backend rusage"},
        {"profile.perf_unavailable",
         "benchmark 'parse', baseline side, profiled execution 1/3: cannot execute 'perf': command not found in "
         "PATH. perf is needed for --profile: install it (Debian: apt-get install linux-perf; Ubuntu: "
         "linux-tools-$(uname -r))"},
        {"profile.record_failed", "benchmark 'parse', candidate side, profiled execution 2/3: perf record -g -e "
                                  "cycles -- './parse --big' exited with status 1"},
        {"profile.script_failed",
         "benchmark 'parse', candidate side, profiled execution 2/3: perf script was killed by signal 9 (SIGKILL)"},
        {"profile.stripped",
         "samples without function names, shown as [unknown] (candidate: 92% in /work/build/parse): the binary is "
         "stripped or has no symbol table, so the top functions and the flame graph cannot name its code. Fix: "
         "build without stripping (no -s or strip; -g also gives source lines), or install its debug symbols (the "
         "-dbgsym/-dbg package); frame pointers (-fno-omit-frame-pointer) give full stacks"},
        {"profile.timeout", "benchmark 'parse', candidate side, profiled execution 1/3: './parse --big' did not "
                            "finish within --timeout under perf record"},
        {"profile.too_large", "callgrind.out.123: 300000000 bytes, more than the limit of 268435456 bytes "
                              "(callgrind_limits::max_file_bytes)"},
        {"profile.unknown_event", "the profile has no event 'Ir' (it has: Dr Dw)"},
        {"profile.unreadable", "callgrind.out.123: cannot read: No such file or directory"},
        {"attribution.failed", "callgrind.out.123:2: not a callgrind output file (no events: line)"},
        {"attribution.no_profile", "callgrind left no profile to attribute (see the warnings above)"},
        {"attribution.stripped",
         "the candidate profile has 95% of its instructions in functions callgrind knows only by address (such as "
         "0x401a2c): the benchmark has no symbols (stripped, or linked with -s). Build it with symbols to see "
         "function names: compile with -g and do not strip it (no -s, no strip, no install -s)"},

        {"github.bad_response", "GET /user: no login in the answer: cannot tell our comments from others'"},
        {"github.forbidden",
         "POST /repos/acme/shop/issues/7/comments: HTTP 403 \"Resource not accessible by integration\": the token "
         "lacks the `pull-requests: write` permission. Add `permissions: { pull-requests: write, statuses: write }` "
         "to the job; pull requests from forks only get a read-only token, so use the workflow_run split "
         "(ci/examples/fork-measure.yml + ci/examples/fork-publish.yml)"},
        {"github.http", "PATCH /repos/acme/shop/issues/comments/99: HTTP 422: Validation Failed"},
        {"github.rate_limited", "POST /repos/acme/shop/statuses/3f1c2e9...: rate limited (HTTP 403) after 5 "
                                "attempts: API rate limit exceeded"},
        {"github.server_error", "POST /repos/acme/shop/issues/7/comments: HTTP 502 after 5 attempts: Bad Gateway"},
        {"github.unreachable",
         "POST https://api.github.com/repos/acme/shop/statuses/3f1c2e9...: Could not resolve host: api.github.com "
         "(after 5 attempts)"},

        {"io.stdout", "cannot write to standard output (No space left on device): the report is lost"},
        {"io.write", "/home/runner/work/_temp/step_summary: cannot open GITHUB_STEP_SUMMARY for appending"},
        {"crypto.failed", "SHA-256 failed (OpenSSL EVP_Digest)"},

        {"stats.bad_input", "wilson_interval: z = -1.000000"},
        {"stats.bad_look", "sequential_look: look 5 of a plan with 5 looks"},
        {"stats.bad_option", "change_points: window must be at least 2, got 1"},
        {"stats.bad_p_value", "p-value [3] must be in [0, 1], got 1.500000"},
        {"stats.bad_plan", "a sequential design needs at least one look"},
        {"stats.bad_probability", "hodges_lehmann: alpha must be in (0, 1), got 1.000000"},
        {"stats.bad_threshold", "sequential_look: threshold_pct must be finite and >= 0, got -1.000000"},
        {"stats.exact_too_large", "exact Mann-Whitney distribution for sizes 2000 and 3000 is too expensive; use "
                                  "the normal approximation"},

        {"internal", "internal server error (reference 1a2b3c4d)"},
    };
    return all;
}

std::string_view area_of(std::string_view id) { return id.substr(0, id.find('.')); }

// GitHub's anchor for a heading: lowercase, punctuation other than '-' and
// '_' dropped, spaces to '-'.
std::string anchor(std::string_view heading)
{
    std::string out;
    for (char c : heading) {
        if (c == ' ') out += '-';
        else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') out += c;
        else if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

// Inline code that may itself hold backticks.
std::string code(std::string_view text)
{
    if (text.find('`') == std::string_view::npos) return "`" + std::string(text) + "`";
    return "`` " + std::string(text) + " ``";
}

std::string table_cell(std::string_view text)
{
    std::string out;
    for (char c : text) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

// The catalogue and this file agree: every area in one section, every
// example an id of the catalogue. Returns the problems, one per line.
std::string problems()
{
    std::string out;
    std::map<std::string_view, int> sections_of;
    for (const section& s : sections()) {
        for (std::string_view a : s.areas) ++sections_of[a];
    }
    for (const error_entry& e : error_catalogue) {
        const int n = sections_of.count(area_of(e.id.view())) ? sections_of[area_of(e.id.view())] : 0;
        if (n != 1) {
            out += "area '" + std::string(area_of(e.id.view())) + "' (of " + std::string(e.id.view()) + ") is in " +
                   std::to_string(n) + " sections of model/errors_doc.cpp, not 1\n";
        }
    }
    for (const auto& [id, text] : examples()) {
        if (perfgate::find_error(id) == nullptr) {
            out += "model/errors_doc.cpp has an example for '" + std::string(id) + "', which is not in the catalogue\n";
        }
    }
    return out;
}

std::string page()
{
    std::ostringstream o;
    o << "# Error ids\n\n"
         "<!-- Generated from model/error_catalogue.hpp by model/errors_doc.cpp: do not edit. Change the\n"
         "     catalogue, then run `cmake --build BUILD --target errors_doc`. -->\n\n"
         "Every failure perfgate reports carries a stable id, `area.what` (for example `ingest.bad_csv`), and a\n"
         "message that names the file, line, field or option that was wrong. Ids are part of the interface:\n"
         "they are never renamed nor reused for another meaning, so scripts may match on them; messages may\n"
         "change.\n\n"
         "- The **CLI** prints `perfgate CMD: error [ID]: MESSAGE` on standard error and exits with the id's\n"
         "  exit code (docs/cli.md): **2** when the command line, an input file or a request is the user's to\n"
         "  fix, **4** when the machine, a service or perfgate itself failed. Exit codes 0, 1 and 3 are\n"
         "  verdicts (pass, regression, inconclusive), never errors.\n"
         "- The **server** answers `{\"error\": {\"id\": ID, \"message\": MESSAGE}}` with the id's HTTP\n"
         "  status (docs/http-api.md). For a 500 the body is `internal` with a reference to the line of the\n"
         "  server's log that holds the real message; `store.*` ids keep their id and status, and their\n"
         "  message is replaced by such a reference too.\n"
         "- An id the catalogue does not have is answered as a bug: HTTP 500, exit 4.\n\n"
         "Each id has one status and one exit code, whichever side meets it. For ids only the CLI meets\n"
         "(`usage.*`, `measure.*`, ...) the status is the one the server would answer if one ever reached it.\n\n";

    o << "## All ids\n\n| Id | HTTP | Exit | Section |\n|---|---|---|---|\n";
    for (const section& s : sections()) {
        for (const error_entry& e : error_catalogue) {
            if (std::find(s.areas.begin(), s.areas.end(), area_of(e.id.view())) == s.areas.end()) continue;
            o << "| [" << code(e.id.view()) << "](#" << anchor(e.id.view()) << ") | " << e.http_status << " | "
              << static_cast<int>(e.exit) << " | " << table_cell(s.title) << " |\n";
        }
    }
    for (const section& s : sections()) {
        o << "\n## " << s.title << "\n\n" << s.intro << "\n";
        for (const error_entry& e : error_catalogue) {
            if (std::find(s.areas.begin(), s.areas.end(), area_of(e.id.view())) == s.areas.end()) continue;
            o << "\n### " << e.id.view() << "\n\nHTTP " << e.http_status << " · exit " << static_cast<int>(e.exit)
              << "\n\n"
              << e.summary << "\n";
            if (auto it = examples().find(e.id.view()); it != examples().end()) {
                o << "\nExample: " << code(it->second) << "\n";
            }
        }
    }
    return o.str();
}

int usage()
{
    std::fputs("usage: perfgate_errors_doc [--output FILE | --check FILE]\n", stderr);
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    if (const std::string p = problems(); !p.empty()) {
        std::fputs(p.c_str(), stderr);
        return 1;
    }
    const std::string text = page();
    if (argc == 1) {
        std::fputs(text.c_str(), stdout);
        return std::fflush(stdout) == 0 ? 0 : 1;
    }
    if (argc != 3) return usage();
    const std::string_view mode = argv[1];
    const std::string path = argv[2];
    if (mode == "--output") {
        std::ofstream out(path, std::ios::binary);
        out << text;
        if (!out.flush()) {
            std::fprintf(stderr, "perfgate_errors_doc: %s: cannot write\n", path.c_str());
            return 1;
        }
        return 0;
    }
    if (mode == "--check") {
        std::ifstream in(path, std::ios::binary);
        const std::string have{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        if (have == text) return 0;
        std::fprintf(stderr,
                     "perfgate_errors_doc: %s is not what model/error_catalogue.hpp gives%s; regenerate it with\n"
                     "    cmake --build BUILD --target errors_doc\n"
                     "and commit the result.\n",
                     path.c_str(), in ? "" : " (it cannot be read)");
        return 1;
    }
    return usage();
}
