// The shared domain types: a run with its testbed and samples, a history
// query and its points, what an upload asks and what it gets. Every part
// speaks these (the gate, the store, the server, the client, the CLI); none
// of them needs SQLite, HTTP or JSON to use them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/token_scope.hpp"

namespace perfgate::model {

struct testbed_info {
    std::string name; // user-facing name ("ci-runner-2"), defaults to hostname
    std::string cpu;  // CPU model string
    int cores = 0;
    std::string kernel; // uname -r
    // The identity (model/testbed.hpp, testbed_fingerprint): computed from
    // cpu/cores/kernel/name when a client does not send one.
    std::string fingerprint;
};

// One counter's value in one repetition of a run.
struct sample {
    int repetition = 0;          // 0-based
    std::optional<double> value; // nullopt: not supported / not counted
    double pcnt_running = 100.0;
    std::optional<double> variance_pct; // perf -r aggregates only
};

struct counter_samples {
    std::string counter; // perf's name ("task-clock", "cycles:u", "wall-time")
    std::string unit;    // "msec", "ns", ""
    std::vector<sample> samples;
};

// Who a run is: its project, benchmark, role, commit, branch, testbed and
// how it was measured. A stored run (run_record) and an upload
// (ingest_request) are both one, so a field added here reaches the runner,
// the upload, the wire and the store at once (api/wire.cpp and the store
// still name each field they read or write).
struct run_identity {
    std::string project;
    std::string benchmark = "default"; // "default" for single-benchmark inputs
    std::string role;                  // "baseline" | "candidate"
    std::string git_sha;
    std::string branch;
    std::optional<std::int64_t> pr;
    testbed_info testbed;
    std::string backend = "perf";        // perf | callgrind | rusage
    std::string environment_json = "{}"; // check-env result, stored verbatim
    // The measurement session: runs measured together, interleaved, by one
    // perfgate run share it (docs/statistics.md "Runs not measured
    // interleaved"); empty when unknown (uploads, runs stored before it).
    std::string session;
    // The toolchain that built the measured program (runner/toolchain.hpp,
    // docs/history.md "Toolchain key"): part of the key under which a
    // deterministic backend's run is reused as a later baseline; empty:
    // unknown, never reused.
    std::string toolchain;

    // This part of a run_record or an ingest_request: `a.identity() =
    // b.identity()` copies who a run is and nothing else.
    run_identity& identity() { return *this; }
    [[nodiscard]] const run_identity& identity() const { return *this; }
};

// A stored run: its identity, whether it feeds its branch's series, and its
// samples.
struct run_record : run_identity {
    std::int64_t id = 0; // set by insert_run / load_run
    bool summary_only = false;
    std::int64_t created_at = 0; // unix seconds; 0 on insert means "now"
    std::vector<counter_samples> counters;
    // The run feeds its branch's series (docs/history.md "Which runs feed
    // the series"): the watch, the band, alerts and baseline reuse read only
    // such runs. perfgate run marks the candidate of a push to the branch;
    // a pull request's runs never are. Not part of run_identity: an upload
    // asks for it (ingest_request::mainline, optional), the service decides.
    bool mainline = false;
    // The server token that uploaded the run (stored since 019_token_scopes.sql);
    // nullopt for runs stored by the CLI on a database and for older runs.
    std::optional<token_ref> written_by;
};

struct counter_summary {
    std::string counter;
    std::size_t n = 0; // samples with a value
    double median = 0, mean = 0, min = 0, max = 0;
    std::optional<double> stddev, cov;
};

struct history_query {
    std::string project, benchmark, counter;
    std::optional<std::string> branch;
    std::optional<std::string> testbed;     // testbed name or fingerprint
    std::optional<std::int64_t> since;      // unix seconds, inclusive
    std::optional<std::string> role;        // "baseline" or "candidate"; nullopt: both
    std::optional<std::int64_t> before_run; // only runs with id < this
    // Only the runs that feed the branch's series (run_record::mainline),
    // whatever their role: what the watch, the band and the trend read.
    bool mainline_only = false;
    std::size_t limit = 100; // the most recent `limit` points
};

struct history_point {
    std::int64_t run_id = 0;
    std::string git_sha, branch;
    std::string role; // "baseline" | "candidate"; empty from the medians variant and older servers
    std::int64_t created_at = 0;
    std::size_t n = 0;
    double median = 0, mean = 0;
    std::optional<double> stddev, cov;
    // The run's smallest and largest value (chart whiskers); always set by
    // the store (n > 0), absent from older servers' responses.
    std::optional<double> min, max;
    std::string testbed; // fingerprint
    std::string testbed_name;
    // A change point starts at this run (model/alert.hpp); set by the
    // service from the stored change points, false from the store.
    bool change_point = false;
    // The run feeds the branch's series (run_record::mainline); false from
    // the medians variant and older servers.
    bool mainline = false;
};

struct benchmark_info {
    std::string name;
    std::vector<std::string> counters;
    std::int64_t runs = 0;
    std::int64_t last_run_at = 0;
};

// What an upload asks the service to store: the run's identity and its raw
// perf stat output, parsed by the service (POST .../runs, perfgate upload).
struct ingest_request : run_identity {
    // run_record::mainline as the uploader asks it (the upload's `mainline`
    // field); nullopt: the server's default, service::mainline_of.
    std::optional<bool> mainline;
    std::string perf_csv; // raw perf stat output (-o --append blocks), or a harness's output
    // capture::input_format's name ("gbench", ...); empty: detected from
    // the content. A harness's output stores one run per benchmark it names
    // (`benchmark` is then unused).
    std::string input_format;
    std::string source = "upload"; // names the input in error messages
    // Set by the server from the request's token, never read from the wire:
    // who uploads (run_record::written_by), and what its scopes allow (a
    // token without the baseline scope never writes the main line,
    // service::mainline_of). nullopt: the CLI on its own database.
    std::optional<token_ref> written_by;
    std::optional<scope_set> writer_scopes;
};

struct ingest_result {
    std::int64_t run_id = 0; // the first run stored
    // A harness's output: every run stored, one per benchmark, in the
    // input's order (run_id is the first), with the benchmarks' names.
    // Empty for perf stat input (one run, run_id).
    std::vector<std::int64_t> run_ids;
    std::vector<std::string> benchmarks;
    std::size_t samples = 0; // values stored (absent ones not counted)
    std::size_t counters = 0;
    std::vector<std::string> warnings;
    // Alerts this run opened (the service's history watch).
    std::vector<std::int64_t> alerts;
    // The upload repeated an Idempotency-Key: nothing was stored, run_id is
    // the first upload's run (the server says so in a response header).
    bool replayed = false;
};

// The stored run a deterministic backend's baseline can be taken from
// (perfgate run --baseline-source server, docs/github.md "Reusing the
// baseline"): the newest run of exactly this commit on this branch, of this
// benchmark, testbed fingerprint, backend and (non-empty) toolchain key,
// among the runs that feed the branch's series (run_record::mainline).
struct reusable_run_query {
    std::string project, benchmark, git_sha, branch, testbed, backend, toolchain;
};

// What the store has for a reusable_run_query.
struct reusable_run {
    std::int64_t run_id = 0;
    std::string git_sha, branch, role, toolchain;
    std::int64_t created_at = 0;         // unix seconds
    std::vector<std::string> counters;   // the run's counter names, in order
    std::optional<token_ref> written_by; // the token that uploaded it (run_record::written_by)
};

} // namespace perfgate::model
