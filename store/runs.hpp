// Stored runs (store::store::runs()): storing them with their samples and
// loading them back (store/ingest.cpp), finding them by id or commit
// (store/listing.cpp).
#pragma once

#include "model/run.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::store {

namespace detail {
struct store_impl;
}

// What runs::insert with an idempotency key did: the run's id, and whether
// the key was seen before (nothing stored).
struct keyed_run {
    std::int64_t run_id = 0;
    bool replayed = false;
};
// The same for runs::insert_all.
struct keyed_runs {
    std::vector<std::int64_t> run_ids;
    bool replayed = false;
};

// A stored run without its samples: what naming and pairing runs needs.
struct run_ref {
    std::int64_t id = 0;
    std::string git_sha, branch, role, benchmark;
    std::string testbed, testbed_name; // fingerprint, name
    std::int64_t created_at = 0;
};

class runs {
public:
    explicit runs(detail::store_impl& s) noexcept : impl_(&s) {}
    runs(const runs&) = delete;
    runs& operator=(const runs&) = delete;

    // Stores a run with its samples and per-counter summaries in one
    // transaction; creates project/benchmark/testbed/counter rows as needed.
    // A testbed is identified by its fingerprint; an empty one is computed
    // (SHA-256 of cpu, cores, kernel, name). created_at 0 means now.
    // Errors (nothing is stored): "store.constraint" for a role other than
    // baseline/candidate, empty project/benchmark/counter names, a counter
    // listed twice, a repeated repetition, non-finite values; "store.io".
    std::int64_t insert(const model::run_record& run);
    // Idempotent ingest (008_ingest_keys.sql): key is the client's
    // Idempotency-Key (1 to 255 bytes), request_sha256 the hex SHA-256 of
    // the request it came with. The first call with a key stores the run and
    // records the key; a later call with the same key and digest stores
    // nothing and returns the first run's id with replayed = true, also when
    // the two race (threads, or servers on one PostgreSQL: the second waits
    // for the first's commit). Errors: as insert; "store.key_conflict"
    // when the project recorded the key with another digest;
    // "store.constraint" for a key outside 1..255 bytes.
    keyed_run insert(const model::run_record& run, std::string_view key, std::string_view request_sha256);
    // Several runs (one upload of a harness's output: a run per benchmark)
    // in one transaction: all are stored, in order, or none. Errors: as
    // insert's. With a key, as the keyed insert: a repeat answers every run
    // id of the first upload (013_ingest_key_runs.sql).
    std::vector<std::int64_t> insert_all(const std::vector<model::run_record>& runs);
    keyed_runs insert_all(const std::vector<model::run_record>& runs, std::string_view key,
                          std::string_view request_sha256);
    // Whole run with samples. nullopt if no such run in that project.
    [[nodiscard]] std::optional<model::run_record> load(std::string_view project, std::int64_t run_id) const;
    // The newest non-summary run that matches q exactly (commit, branch,
    // benchmark, testbed fingerprint, backend, toolchain; any role) among
    // the runs that feed the branch's series (run_record::mainline), with
    // its counter names: the baseline a deterministic backend reuses
    // (016_run_toolchains.sql). nullopt when there is none or q.toolchain
    // is empty (unknown toolchains are never reused). One indexed read.
    [[nodiscard]] std::optional<model::reusable_run> find_reusable(const model::reusable_run_query& q) const;

    // One run of the project, without samples; nullopt if there is none.
    [[nodiscard]] std::optional<run_ref> find(std::string_view project, std::int64_t run_id) const;
    // The newest run of each (git sha, benchmark, testbed) among the
    // project's runs whose git_sha starts with sha_prefix (bytes compared as
    // stored: git writes lowercase hex), newest first. O(log n + k) for the k
    // runs with such a sha: a range of the covering index runs_project_sha
    // (006_project_settings.sql). An empty prefix matches nothing.
    [[nodiscard]] std::vector<run_ref> by_sha(std::string_view project, std::string_view sha_prefix) const;

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
