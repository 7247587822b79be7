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
        if (c == '\n') { out += "\\n"; continue; }
        out += c;
    }
    return out;
}

} // namespace

std::string metrics::render(std::int64_t db_size_bytes) const
{
    std::string out;
    auto it = std::back_inserter(out);
    std::lock_guard lock(mutex_);

    fmt::format_to(it, "# HELP perfgate_http_requests_total HTTP requests by route template and status.\n"
                       "# TYPE perfgate_http_requests_total counter\n");
    for (const auto& [key, n] : requests_) {
        fmt::format_to(it, "perfgate_http_requests_total{{route=\"{}\",status=\"{}\"}} {}\n",
                       escape_label(key.first), key.second, n);
    }

    fmt::format_to(it, "# HELP perfgate_http_request_duration_seconds Time from a complete request to its response.\n"
                       "# TYPE perfgate_http_request_duration_seconds histogram\n");
    for (const auto& [route, h] : latency_) {
        const std::string label = escape_label(route);
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < buckets.size(); ++i) {
            cumulative += h.counts[i];
            fmt::format_to(it, "perfgate_http_request_duration_seconds_bucket{{route=\"{}\",le=\"{}\"}} {}\n",
                           label, buckets[i], cumulative);
        }
        fmt::format_to(it, "perfgate_http_request_duration_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n", label,
                       h.count);
        fmt::format_to(it, "perfgate_http_request_duration_seconds_sum{{route=\"{}\"}} {}\n", label, h.sum);
        fmt::format_to(it, "perfgate_http_request_duration_seconds_count{{route=\"{}\"}} {}\n", label, h.count);
    }

    fmt::format_to(it, "# HELP perfgate_runs_ingested_total Runs stored since the server started.\n"
                       "# TYPE perfgate_runs_ingested_total counter\n"
                       "perfgate_runs_ingested_total {}\n",
                   runs_ingested_.load());
    fmt::format_to(it, "# HELP perfgate_http_connections_active Open client connections.\n"
                       "# TYPE perfgate_http_connections_active gauge\n"
                       "perfgate_http_connections_active {}\n",
                   connections_.load());
    fmt::format_to(it, "# HELP perfgate_http_connections_max Connections served at once (--max-connections).\n"
                       "# TYPE perfgate_http_connections_max gauge\n"
                       "perfgate_http_connections_max {}\n",
                   max_connections_.load());
    fmt::format_to(it, "# HELP perfgate_http_connections_evicted_total Idle connections closed to make room at the cap.\n"
                       "# TYPE perfgate_http_connections_evicted_total counter\n"
                       "perfgate_http_connections_evicted_total {}\n",
                   evicted_.load());
    fmt::format_to(it, "# HELP perfgate_http_connections_refused_total Connections answered 503 at the cap, none idle.\n"
                       "# TYPE perfgate_http_connections_refused_total counter\n"
                       "perfgate_http_connections_refused_total {}\n",
                   refused_.load());
    fmt::format_to(it, "# HELP perfgate_accept_errors_total Failed accept() calls (out of descriptors and the like).\n"
                       "# TYPE perfgate_accept_errors_total counter\n"
                       "perfgate_accept_errors_total {}\n",
                   accept_errors_.load());
    fmt::format_to(it, "# HELP perfgate_log_write_failures_total Log lines dropped because stderr could not be written.\n"
                       "# TYPE perfgate_log_write_failures_total counter\n"
                       "perfgate_log_write_failures_total {}\n",
                   log_write_failures());
    fmt::format_to(it, "# HELP perfgate_db_size_bytes Size of the SQLite database (page_count * page_size).\n"
                       "# TYPE perfgate_db_size_bytes gauge\n"
                       "perfgate_db_size_bytes {}\n",
                   db_size_bytes);
    return out;
}

} // namespace perfgate::server
