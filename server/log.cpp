#include "server/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace perfgate::server {

namespace {

std::atomic<std::uint64_t> failures{0};

// write(2) until done; false on any error but EINTR.
bool write_all(const char* data, std::size_t size) noexcept
{
    while (size > 0) {
        const ssize_t n = ::write(STDERR_FILENO, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace

void write_log_line(std::string_view line) noexcept
{
    bool ok = false;
    if (!line.empty() && line.back() == '\n') {
        ok = write_all(line.data(), line.size());
    } else {
        try {
            std::string text;
            text.reserve(line.size() + 1);
            text.append(line);
            text += '\n';
            ok = write_all(text.data(), text.size());
        } catch (...) {
            ok = false; // bad_alloc: drop the line
        }
    }
    if (!ok) failures.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t log_write_failures() noexcept { return failures.load(std::memory_order_relaxed); }

std::string utc_timestamp()
{
    const auto now = std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
    const auto millis = now.time_since_epoch().count() % 1000;
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", fmt::gmtime(std::chrono::system_clock::to_time_t(now)), millis);
}

void rate_limited_log::write(std::string_view line) noexcept
{
    std::uint64_t dropped = 0;
    {
        std::lock_guard lock(mutex_);
        const auto now = std::chrono::steady_clock::now();
        if (written_ && now - last_ < interval_) {
            ++suppressed_;
            return;
        }
        written_ = true;
        last_ = now;
        dropped = suppressed_;
        suppressed_ = 0;
    }
    if (dropped == 0) return write_log_line(line);
    try {
        write_log_line(fmt::format("{} ({} similar line{} suppressed)", line, dropped, dropped == 1 ? "" : "s"));
    } catch (...) {
        write_log_line(line);
    }
}

std::uint64_t rate_limited_log::suppressed() const noexcept
{
    std::lock_guard lock(mutex_);
    return suppressed_;
}

} // namespace perfgate::server
