// The server's log on stderr: whole lines, one write(2) each, never an
// exception. A server whose stderr is full, closed or a pipe nobody reads
// keeps serving; lines that could not be written are counted
// (log_write_failures(), perfgate_log_write_failures_total in /metrics) and
// dropped.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace perfgate::server {

// Writes line (a trailing '\n' is added if missing) to stderr in one
// write(2) where the kernel allows, so lines from worker threads do not
// interleave. Retries EINTR and short writes; any other failure (ENOSPC on
// /dev/full, EPIPE, EBADF) drops the line and counts it. Never throws.
void write_log_line(std::string_view line) noexcept;

// Lines dropped by write_log_line since the process started.
[[nodiscard]] std::uint64_t log_write_failures() noexcept;

// "2026-11-22T02:11:05.123Z": now, UTC, milliseconds.
[[nodiscard]] std::string utc_timestamp();

// A log line that can repeat at a rate the client controls (accept errors,
// refused connections): at most one line per interval; the lines dropped in
// between are counted and reported with the next line that is written
// ("(1234 similar lines suppressed)"). Thread-safe, never throws.
class rate_limited_log {
public:
    // One line a second: enough to see that it is happening and how often.
    static constexpr std::chrono::milliseconds default_interval{1000};

    explicit rate_limited_log(std::chrono::milliseconds interval = default_interval) : interval_(interval) {}

    void write(std::string_view line) noexcept;
    // Lines suppressed since the last one written.
    [[nodiscard]] std::uint64_t suppressed() const noexcept;

private:
    mutable std::mutex mutex_;
    std::chrono::milliseconds interval_;
    std::chrono::steady_clock::time_point last_{};
    bool written_ = false;
    std::uint64_t suppressed_ = 0;
};

} // namespace perfgate::server
