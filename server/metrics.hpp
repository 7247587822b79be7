// Server metrics in the Prometheus text exposition format (version 0.0.4,
// https://prometheus.io/docs/instrumenting/exposition_formats/):
//   perfgate_http_requests_total{route,status}          counter
//   perfgate_http_request_duration_seconds{route}       histogram
//   perfgate_runs_ingested_total                        counter
//   perfgate_http_connections_active                    gauge
//   perfgate_http_connections_max                       gauge (--max-connections)
//   perfgate_http_connections_evicted_total             counter (idle, closed to make room)
//   perfgate_http_connections_refused_total             counter (503 at the cap, all busy)
//   perfgate_accept_errors_total                        counter (EMFILE, ENFILE, ...)
//   perfgate_log_write_failures_total                   counter (log lines stderr refused)
//   perfgate_signin_failures_total                      counter (dashboard sign-ins with a bad token)
//   perfgate_signin_throttled_total                     counter (sign-ins refused 429 for their address)
//   perfgate_db_size_bytes                              gauge (passed to render)
//   perfgate_watch_jobs_total, _failed_total, _coalesced_total   counters (the
//   perfgate_watch_pending                              gauge     background watch)
//   perfgate_compare_commits_total, _commit_rows_total,  counters (the comparisons'
//   _commit_failed_total; perfgate_compare_commit_largest gauge   committer)
//   perfgate_webhook_deliveries_total{outcome}           counter (delivered, failed, dropped)
//   perfgate_webhook_retries_total; perfgate_webhook_queued  counter; gauge (alert webhooks)
// Thread-safe: every worker thread records into one instance.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "service/commit_queue.hpp"
#include "service/notifier.hpp"
#include "service/watch_queue.hpp"

namespace perfgate::server {

class metrics {
public:
    // Upper bounds of the latency buckets in seconds: Prometheus client
    // libraries' default buckets (5 ms .. 10 s) with 0.5 ms and 1 ms added,
    // since most routes answer in well under 5 ms.
    static constexpr std::array<double, 13> buckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                    0.1,    0.25,  0.5,    1.0,   2.5,  10.0};

    // One finished request. route is a route_label() (a bounded set).
    void observe(std::string_view route, unsigned status, double seconds);
    void run_ingested() noexcept { runs_ingested_.fetch_add(1, std::memory_order_relaxed); }
    void connection_opened() noexcept { connections_.fetch_add(1, std::memory_order_relaxed); }
    void connection_closed() noexcept { connections_.fetch_sub(1, std::memory_order_relaxed); }
    void set_max_connections(std::size_t n) noexcept { max_connections_.store(n, std::memory_order_relaxed); }
    void connection_evicted() noexcept { evicted_.fetch_add(1, std::memory_order_relaxed); }
    void connection_refused() noexcept { refused_.fetch_add(1, std::memory_order_relaxed); }
    void accept_failed() noexcept { accept_errors_.fetch_add(1, std::memory_order_relaxed); }
    void signin_failed() noexcept { signin_failures_.fetch_add(1, std::memory_order_relaxed); }
    void signin_throttled() noexcept { signin_throttled_.fetch_add(1, std::memory_order_relaxed); }

    [[nodiscard]] std::uint64_t requests(std::string_view route, unsigned status) const;
    [[nodiscard]] std::uint64_t runs_ingested() const noexcept { return runs_ingested_.load(); }

    // The exposition text.
    [[nodiscard]] std::string render(std::int64_t db_size_bytes, const service::watch_queue::counts& watch = {},
                                     const service::commit_queue::counts& commits = {},
                                     const service::notifier::counts& webhooks = {}) const;

private:
    struct histogram {
        std::array<std::uint64_t, buckets.size()> counts{}; // non-cumulative
        std::uint64_t count = 0;
        double sum = 0;
    };

    mutable std::mutex mutex_;
    std::map<std::pair<std::string, unsigned>, std::uint64_t, std::less<>> requests_;
    std::map<std::string, histogram, std::less<>> latency_;
    std::atomic<std::uint64_t> runs_ingested_{0};
    std::atomic<std::int64_t> connections_{0};
    std::atomic<std::size_t> max_connections_{0};
    std::atomic<std::uint64_t> evicted_{0};
    std::atomic<std::uint64_t> refused_{0};
    std::atomic<std::uint64_t> accept_errors_{0};
    std::atomic<std::uint64_t> signin_failures_{0};
    std::atomic<std::uint64_t> signin_throttled_{0};
};

} // namespace perfgate::server
