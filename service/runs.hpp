// Storing and reading runs: ingest, and the stored runs a compare or a deterministic backend reuses
// (service::service::runs(); bodies in service/service.cpp).
#pragma once

#include "service/common.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class runs {
public:
    explicit runs(detail::service_impl& s) noexcept : impl_(&s) {}
    runs(const runs&) = delete;
    runs& operator=(const runs&) = delete;

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
    // One stored run of the project, with its samples; nullopt if none.
    [[nodiscard]] std::optional<model::run_record> load(const std::string& project, std::int64_t id) const;
    // The stored run a deterministic backend reuses as its baseline
    // (store::runs::find_reusable); "store.not_found" for an unknown project.
    [[nodiscard]] std::optional<model::reusable_run> find_reusable(const model::reusable_run_query& q) const;

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
