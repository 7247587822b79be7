// A benchmark's series and its list of counters (store::store::history();
// store/history.cpp).
#pragma once

#include "model/run.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace perfgate::store {

namespace detail {
struct store_impl;
}

// What each history point carries: everything, or only run_id and median
// (the other members left empty), which is all a compare's z-score and band
// read; that skips the text columns and the testbed lookups, a third of a
// fresh compare's reads (bench/e2e/bench_engines.sh).
enum class history_detail { full, medians };

class history {
public:
    explicit history(detail::store_impl& s) noexcept : impl_(&s) {}
    history(const history&) = delete;
    history& operator=(const history&) = delete;

    // Per-run summaries, oldest first, the most recent q.limit of them (by
    // created_at, then run id). Counters with no value in a run (n = 0) are
    // not points. O(log n + k) through a covering index of the summaries
    // table: (benchmark, counter, created_at), (benchmark, counter, branch,
    // created_at) or (benchmark, counter, testbed, branch, created_at),
    // whichever the filters bind (store/migrations/002_history_indexes.sql,
    // 005_history_minmax.sql). Each point names its testbed (fingerprint and
    // name: one lookup per distinct testbed in the result).
    // Filters outside the chosen index's prefix (testbed without branch,
    // role, before_run) are checked while scanning it. Unknown names: empty.
    [[nodiscard]] std::vector<model::history_point> points(const model::history_query& q) const;
    // points(q) for each of counters (q.counter is ignored), in that order:
    // what a compare or the history watch reads for the counters of one
    // benchmark. PostgreSQL answers all of them in one statement (a LATERAL
    // range of the same index per counter); SQLite runs one per counter.
    [[nodiscard]] std::vector<std::vector<model::history_point>> points_per_counter(
        const model::history_query& q, const std::vector<std::string>& counters,
        history_detail detail = history_detail::full) const;

    // By name; counters by name. Unknown project: empty.
    [[nodiscard]] std::vector<model::benchmark_info> benchmarks(std::string_view project) const;

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
