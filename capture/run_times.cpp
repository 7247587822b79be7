#include "capture/run_times.hpp"

#include <array>
#include <charconv>
#include <chrono>

namespace perfgate::capture {

namespace {

// Digits at text[pos, pos + n) as a number; nullopt if any is not a digit.
std::optional<int> digits(std::string_view text, std::size_t pos, std::size_t n)
{
    if (pos + n > text.size()) return std::nullopt;
    int v = 0;
    const char* first = text.data() + pos;
    const auto [end, ec] = std::from_chars(first, first + n, v);
    if (ec != std::errc() || end != first + n) return std::nullopt;
    return v;
}

// Seconds since 1970-01-01T00:00:00 of a civil date and time; nullopt for a
// date or time that does not exist (month 13, 25:00).
std::optional<std::int64_t> civil_seconds(int year, int month, int day, int hour, int minute, int second)
{
    const std::chrono::year_month_day ymd{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
                                          std::chrono::day{static_cast<unsigned>(day)}};
    if (!ymd.ok() || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60)
        return std::nullopt;
    const auto days = std::chrono::sys_days{ymd}.time_since_epoch().count();
    return static_cast<std::int64_t>(days) * 86400 + hour * 3600 + minute * 60 + second;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

} // namespace

std::optional<run_times> parse_iso_date(std::string_view text)
{
    text = trim(text);
    // YYYY-MM-DD?HH:MM:SS with '-', ':' at their places and 'T' or ' ' between.
    if (text.size() < 19 || text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != ' ') ||
        text[13] != ':' || text[16] != ':')
        return std::nullopt;
    const auto y = digits(text, 0, 4), mo = digits(text, 5, 2), d = digits(text, 8, 2);
    const auto h = digits(text, 11, 2), mi = digits(text, 14, 2), s = digits(text, 17, 2);
    if (!y || !mo || !d || !h || !mi || !s) return std::nullopt;
    auto at = civil_seconds(*y, *mo, *d, *h, *mi, *s);
    if (!at) return std::nullopt;
    run_times out;
    std::string_view zone = text.substr(19);
    if (zone.starts_with('.')) { // fractional seconds: dropped (the resolution stays one second)
        std::size_t i = 1;
        while (i < zone.size() && zone[i] >= '0' && zone[i] <= '9') ++i;
        zone.remove_prefix(i);
    }
    if (zone == "Z") {
        out.zoned = true;
    } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
        const auto zh = digits(zone, 1, 2), zm = digits(zone, 4, 2);
        if (!zh || !zm || *zh > 23 || *zm > 59) return std::nullopt;
        const std::int64_t offset = *zh * 3600 + *zm * 60;
        *at -= zone[0] == '+' ? offset : -offset; // local = UTC + offset
        out.zoned = true;
    } else if (!zone.empty()) {
        return std::nullopt;
    }
    out.first_start = out.last_start = *at;
    out.first_text = std::string(text);
    return out;
}

std::optional<run_times> parse_ctime_date(std::string_view text)
{
    text = trim(text);
    // "Www Mmm dd hh:mm:ss yyyy"; ctime pads the day with a space ("Nov  2").
    static constexpr std::array<std::string_view, 12> months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (text.size() < 24 || text[3] != ' ' || text[7] != ' ' || text[10] != ' ' || text[13] != ':' || text[16] != ':' ||
        text[19] != ' ')
        return std::nullopt;
    int month = 0;
    for (std::size_t i = 0; i < months.size(); ++i)
        if (text.substr(4, 3) == months[i]) month = static_cast<int>(i) + 1;
    const std::string_view day_text = text[8] == ' ' ? text.substr(9, 1) : text.substr(8, 2);
    const auto d = digits(day_text, 0, day_text.size());
    const auto h = digits(text, 11, 2), mi = digits(text, 14, 2), s = digits(text, 17, 2);
    const auto y = digits(text, 20, text.size() - 20);
    if (month == 0 || !d || !h || !mi || !s || !y) return std::nullopt;
    const auto at = civil_seconds(*y, month, *d, *h, *mi, *s);
    if (!at) return std::nullopt;
    run_times out;
    out.first_start = out.last_start = *at;
    out.first_text = std::string(text);
    return out;
}

std::optional<run_times> perf_started_on(std::string_view text)
{
    static constexpr std::string_view marker = "# started on ";
    std::optional<run_times> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (!line.starts_with(marker)) continue;
        const auto t = parse_ctime_date(line.substr(marker.size()));
        if (!t) continue;
        if (!out) {
            out = t;
        } else {
            // Appended runs are in time order; min and max all the same.
            out->first_start = std::min(out->first_start, t->first_start);
            out->last_start = std::max(out->last_start, t->last_start);
            ++out->executions;
        }
    }
    return out;
}

time_relation relate(const std::optional<run_times>& a, const std::optional<run_times>& b)
{
    if (!a || !b || a->zoned != b->zoned) return time_relation::unknown;
    const run_times& earlier = a->first_start <= b->first_start ? *a : *b;
    const run_times& later = &earlier == &*a ? *b : *a;
    // The earlier file's last execution started before last_start + the
    // resolution and measured measured_s from then on; the later file
    // started at or after its stamp.
    const double earlier_end = static_cast<double>(earlier.last_start + run_time_resolution_s) + earlier.measured_s;
    return static_cast<double>(later.first_start) >= earlier_end ? time_relation::apart : time_relation::overlapping;
}

} // namespace perfgate::capture
