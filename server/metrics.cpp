#include "server/metrics.hpp"

#include <fmt/format.h>

#include "server/log.hpp"

namespace perfgate::server {

void metrics::observe(std::string_view route, unsigned status, double seconds)
{
    std::lock_guard lock(mutex_);
    auto key = std::make_pair(std::string(route), status);
    ++requests_[key];
    auto it = latency_.find(route);
    if (it == latency_.end()) it = latency_.emplace(std::string(route), histogram{}).first;
    histogram& h = it->second;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
        if (seconds <= buckets[i]) {
            ++h.counts[i];
            break;
        }
    }
    ++h.count;
    h.sum += seconds;
}

std::uint64_t metrics::requests(std::string_view route, unsigned status) const
{
    std::lock_guard lock(mutex_);
    auto it = requests_.find(std::make_pair(std::string(route), status));
    return it == requests_.end() ? 0 : it->second;
}

namespace {

// Label values escape backslash, double quote and newline (exposition format).
std::string escape_label(std::string_view v)
{
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

} // namespace

std::string metrics::render(std::int64_t db_size_bytes, const service::watch_queue::counts& watch,
                            const service::commit_queue::counts& commits,
                            const service::notifier::counts& webhooks) const
{
    std::string out;
    auto it = std::back_inserter(out);
    std::lock_guard lock(mutex_);

    fmt::format_to(it, "# HELP perfgate_http_requests_total HTTP requests by route template and status.\n"
                       "# TYPE perfgate_http_requests_total counter\n");
    for (const auto& [key, n] : requests_) {
        fmt::format_to(it, "perfgate_http_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", escape_label(key.first),
                       key.second, n);
    }

    fmt::format_to(it, "# HELP perfgate_http_request_duration_seconds Time from a complete request to its response.\n"
                       "# TYPE perfgate_http_request_duration_seconds histogram\n");
    for (const auto& [route, h] : latency_) {
        const std::string label = escape_label(route);
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < buckets.size(); ++i) {
            cumulative += h.counts[i];
            fmt::format_to(it, "perfgate_http_request_duration_seconds_bucket{{route=\"{}\",le=\"{}\"}} {}\n", label,
                           buckets[i], cumulative);
        }
        fmt::format_to(it, "perfgate_http_request_duration_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n", label,
                       h.count);
        fmt::format_to(it, "perfgate_http_request_duration_seconds_sum{{route=\"{}\"}} {}\n", label, h.sum);
        fmt::format_to(it, "perfgate_http_request_duration_seconds_count{{route=\"{}\"}} {}\n", label, h.count);
    }

    // One sample each: name, type, help, value (Prometheus text format 0.0.4).
    struct scalar {
        std::string_view name, type, help;
        double value;
    };
    // clang-format off
    const scalar scalars[] = {
        {"perfgate_runs_ingested_total", "counter", "Runs stored since the server started.", static_cast<double>(runs_ingested_.load())},
        {"perfgate_http_connections_active", "gauge", "Open client connections.", static_cast<double>(connections_.load())},
        {"perfgate_http_connections_max", "gauge", "Connections served at once (--max-connections).", static_cast<double>(max_connections_.load())},
        {"perfgate_http_connections_evicted_total", "counter", "Idle connections closed to make room at the cap.", static_cast<double>(evicted_.load())},
        {"perfgate_http_connections_refused_total", "counter", "Connections answered 503 at the cap, none idle.", static_cast<double>(refused_.load())},
        {"perfgate_accept_errors_total", "counter", "Failed accept() calls (out of descriptors and the like).", static_cast<double>(accept_errors_.load())},
        {"perfgate_log_write_failures_total", "counter", "Log lines dropped because stderr could not be written.", static_cast<double>(log_write_failures())},
        {"perfgate_signin_failures_total", "counter", "Dashboard sign-ins refused for their token (each logged).", static_cast<double>(signin_failures_.load())},
        {"perfgate_signin_throttled_total", "counter", "Dashboard sign-ins refused 429: too many from one address.", static_cast<double>(signin_throttled_.load())},
        {"perfgate_db_size_bytes", "gauge", "Size of the SQLite database (page_count * page_size).", static_cast<double>(db_size_bytes)},
        {"perfgate_watch_jobs_total", "counter", "Change-point detection jobs run after uploads.", static_cast<double>(watch.done)},
        {"perfgate_watch_failed_total", "counter", "Detection jobs that failed (logged).", static_cast<double>(watch.failed)},
        {"perfgate_watch_coalesced_total", "counter", "Uploads whose detection joined a job already waiting.", static_cast<double>(watch.coalesced)},
        {"perfgate_watch_pending", "gauge", "Detection jobs waiting for the worker.", static_cast<double>(watch.pending)},
        {"perfgate_compare_commits_total", "counter", "Transactions that stored a batch of fresh comparisons.", static_cast<double>(commits.batches)},
        {"perfgate_compare_commit_rows_total", "counter", "Fresh comparisons the committer answered (stored or failed).", static_cast<double>(commits.rows)},
        {"perfgate_compare_commit_failed_total", "counter", "Fresh comparisons the store refused (answered with the error).", static_cast<double>(commits.failed)},
        {"perfgate_compare_commit_largest", "gauge", "The most comparisons stored in one transaction.", static_cast<double>(commits.largest)},
    };
    // clang-format on
    for (const auto& m : scalars) {
        fmt::format_to(it, "# HELP {0} {2}\n# TYPE {0} {1}\n{0} {3}\n", m.name, m.type, m.help, m.value);
    }
    fmt::format_to(it,
                   "# HELP perfgate_webhook_deliveries_total Alert webhook deliveries by outcome.\n"
                   "# TYPE perfgate_webhook_deliveries_total counter\n"
                   "perfgate_webhook_deliveries_total{{outcome=\"delivered\"}} {}\n"
                   "perfgate_webhook_deliveries_total{{outcome=\"failed\"}} {}\n"
                   "perfgate_webhook_deliveries_total{{outcome=\"dropped\"}} {}\n"
                   "# HELP perfgate_webhook_retries_total Webhook attempts after a failed first.\n"
                   "# TYPE perfgate_webhook_retries_total counter\nperfgate_webhook_retries_total {}\n"
                   "# HELP perfgate_webhook_queued Webhook deliveries waiting or backing off.\n"
                   "# TYPE perfgate_webhook_queued gauge\nperfgate_webhook_queued {}\n",
                   webhooks.delivered, webhooks.failed, webhooks.dropped, webhooks.retried, webhooks.queued);
    return out;
}

} // namespace perfgate::server
