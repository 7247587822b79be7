#include "model/qualification.hpp"

#include <ctime>

#include <fmt/format.h>

namespace perfgate::model {

namespace {

std::string utc_date(std::int64_t unix_seconds)
{
    const auto t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    if (gmtime_r(&t, &tm) == nullptr) return "?";
    return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

} // namespace

std::string detects_line(const qualification& q, const qualified_counter& c)
{
    const std::string date = utc_date(q.qualified_at);
    if (c.deterministic) {
        return fmt::format("this testbed detects any change of {} at or above the {:g}% threshold (deterministic, "
                           "qualified {})",
                           c.counter, c.threshold_pct, date);
    }
    if (!c.detects_80_pct) {
        return fmt::format("this testbed caught no slowdown of {} in 80% of gates (qualified {})", c.counter, date);
    }
    return fmt::format("this testbed detects \u2265 {:.3g}% of {} (qualified {})", *c.detects_80_pct, c.counter, date);
}

} // namespace perfgate::model
