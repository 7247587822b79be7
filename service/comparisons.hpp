// Comparisons: the gate's compare, its background variant, stored reports, the recent list and what
// a ref pair means (service::service::comparisons(); bodies in service/compare_engine.cpp,
// service/refs.cpp, service/service.cpp).
#pragma once

#include "service/common.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class comparisons {
public:
    explicit comparisons(detail::service_impl& s) noexcept : impl_(&s) {}
    comparisons(const comparisons&) = delete;
    comparisons& operator=(const comparisons&) = delete;

    using compare_done = perfgate::service::compare_done;
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
    std::optional<comparison> compare_later(const std::string& project,
                                            const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                            const gate::policy& rules, compare_done done,
                                            const std::optional<model::baseline_choice>& baseline = std::nullopt);
    // The stored report, with each benchmark's stored attribution
    // (store_attribution) in its attribution_info.
    [[nodiscard]] std::optional<gate::report> load(const std::string& project, std::int64_t id) const;
    // The project's most recent comparisons, newest first: id, time,
    // verdict, and the commits of the runs compared (store::comparisons::recent).
    // "project.not_found"; "query.bad_value" for a limit outside
    // [1, max_comparison_limit].
    [[nodiscard]] std::vector<model::comparison_summary> recent(const std::string& project,
                                                                std::size_t limit = default_comparison_limit) const;
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

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
