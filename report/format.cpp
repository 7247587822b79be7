#include "report/format.hpp"
#include "report/quantity.hpp"
#include "report/render.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace perfgate::report::detail {

using namespace gate;

// Human formatting of a measured value: integers stay integers, small
// values keep 3-4 significant digits.
std::string value_str(const std::optional<double>& v, std::string_view unit)
{
    if (!v || !std::isfinite(*v)) return "—";
    const double a = std::abs(*v);
    std::string s = a >= 1000 || (a == std::floor(a)) ? fmt::format("{:.0f}", *v)
                    : a >= 1                          ? fmt::format("{:.2f}", *v)
                                                      : fmt::format("{:.4g}", *v);
    if (!unit.empty()) s += fmt::format(" {}", unit);
    return s;
}

std::string grouped(double v, bool sign)
{
    const double r = std::round(v);
    const std::string digits = fmt::format("{:.0f}", std::abs(r));
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    if (r < 0) return "-" + out;
    return sign && r > 0 ? "+" + out : out;
}

namespace {

// 3-4 significant digits: "123.4", "12.34", "1.234".
std::string scaled(double v, std::string_view unit)
{
    const double a = std::abs(v);
    const int decimals = a >= 100 ? 1 : a >= 10 ? 2 : 3;
    return fmt::format("{:.{}f} {}", v, decimals, unit);
}

} // namespace

std::string display_value(const std::optional<double>& v, std::string_view unit)
{
    if (!v || !std::isfinite(*v)) return "—";
    if (const auto s = seconds_per(unit)) {
        const double sec = *v * *s, a = std::abs(sec);
        if (a == 0) return fmt::format("0 {}", unit == "msec" ? "ms" : unit == "nsec" ? "ns" : unit);
        if (a < 1e-6) return scaled(sec * 1e9, "ns");
        if (a < 1e-3) return scaled(sec * 1e6, "us");
        if (a < 1) return scaled(sec * 1e3, "ms");
        return scaled(sec, "s");
    }
    if (const auto b = bytes_per(unit)) {
        const double bytes = *v * *b, a = std::abs(bytes);
        // Up to 10 KiB in bytes: a 4,096-byte leak reads exactly.
        if (a < 10 * 1024) return grouped(bytes) + " B";
        if (a < 1024.0 * 1024) return scaled(bytes / 1024, "KiB");
        if (a < 1024.0 * 1024 * 1024) return scaled(bytes / (1024.0 * 1024), "MiB");
        return scaled(bytes / (1024.0 * 1024 * 1024), "GiB");
    }
    const std::string number = std::abs(*v) >= 1000 ? grouped(*v) : value_str(v);
    return unit.empty() ? number : fmt::format("{} {}", number, unit);
}

std::string pct_str(const std::optional<double>& v)
{
    if (!v || !std::isfinite(*v)) return "—";
    return fmt::format("{:+.2f}%", *v);
}

std::string p_str(const std::optional<double>& p)
{
    if (!p || !std::isfinite(*p)) return "—";
    if (*p < 1e-4) return fmt::format("{:.1e}", *p);
    return fmt::format("{:.4f}", *p);
}

// The shift's confidence interval in percent of the baseline median, like
// the shift itself (absolute values are in the JSON report).
std::string ci_str(const counter_report& c)
{
    if (!c.shift_ci) return "—";
    if (c.test && *c.test == method::deterministic) return "exact";
    const double base = c.baseline.median.value_or(0.0);
    if (base == 0) return fmt::format("[{}, {}]", value_str(c.shift_ci->first), value_str(c.shift_ci->second));
    return fmt::format("[{:+.2f}%, {:+.2f}%]", c.shift_ci->first / std::abs(base) * 100,
                       c.shift_ci->second / std::abs(base) * 100);
}

std::string_view mark(status s)
{
    switch (s) {
    case status::regression: return "🔴";
    case status::improvement: return "🟢";
    case status::unchanged: return "⚪";
    case status::inconclusive:
    case status::insufficient: return "🟡";
    case status::unsupported: return "➖";
    }
    return "";
}

std::string_view verdict_mark(verdict v)
{
    switch (v) {
    case verdict::pass: return "✅";
    case verdict::fail: return "❌";
    case verdict::inconclusive: return "⚠️";
    }
    return "";
}

std::string summary_counts(const gate::report& r)
{
    return fmt::format("{} regression{}, {} improvement{}, {} unchanged, {} inconclusive", r.count(status::regression),
                       r.count(status::regression) == 1 ? "" : "s", r.count(status::improvement),
                       r.count(status::improvement) == 1 ? "" : "s", r.count(status::unchanged),
                       r.count(status::inconclusive) + r.count(status::insufficient));
}

std::string suite_line(const gate::report& r)
{
    const suite_counts n = count_benchmarks(r);
    auto plural = [](std::size_t k, std::string_view one, std::string_view many) {
        return fmt::format("{} {}", k, k == 1 ? one : many);
    };
    std::string out = fmt::format("{} compared: {}, {}, {} unchanged, {} inconclusive",
                                  plural(n.compared, "benchmark", "benchmarks"),
                                  plural(n.regressions, "regression", "regressions"),
                                  plural(n.improvements, "improvement", "improvements"), n.unchanged, n.inconclusive);
    if (n.added + n.removed + n.failed > 0)
        out += fmt::format("; {} added, {} removed, {} failed", n.added, n.removed, n.failed);
    return out;
}

std::string ratio_pct(double ratio) { return pct_str((ratio - 1) * 100); }

std::string failed_line(const gate::failed_benchmark& f)
{
    return fmt::format("{} ({}): {}", f.name, f.side, f.message);
}

std::string iso_date_time(std::int64_t unix_seconds)
{
    const auto t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    if (::gmtime_r(&t, &tm) == nullptr) return "?";
    char buf[32];
    return std::string(buf, std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm));
}

std::string reused_line(const gate::report& r)
{
    if (r.reused.empty()) return {};
    std::string ids;
    std::int64_t newest = 0;
    for (const auto& u : r.reused) {
        ids += (ids.empty() ? "" : ", ") + std::to_string(u.run_id);
        newest = std::max(newest, u.created_at);
    }
    // The commit is checked hex by the runner; a report read from a file keeps only hex.
    std::string commit;
    for (char c : r.reused.front().commit.substr(0, 7))
        commit += std::isxdigit(static_cast<unsigned char>(c)) ? c : '?';
    return fmt::format("baseline reused from run{} {} (commit {}, {})", r.reused.size() == 1 ? "" : "s", ids, commit,
                       iso_date_time(newest).substr(0, 10));
}

std::string not_interleaved_note(const gate::report& r)
{
    std::vector<std::string> names;
    for (const auto& b : r.benchmarks) {
        // Deterministic counts (callgrind, memcheck) are judged alike apart or together.
        const bool counted = !b.counters.empty() &&
                             std::all_of(b.counters.begin(), b.counters.end(), [](const auto& c) {
                                 return c.test && *c.test == gate::method::deterministic;
                             });
        if (b.interleaved && !*b.interleaved && !counted) names.push_back(b.name);
    }
    if (names.empty()) return {};
    const bool all = names.size() == r.benchmarks.size();
    std::string listed;
    for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + n;
    return fmt::format("{} not measured interleaved{}: their shifts are tested against the testbed's between-run "
                       "variation (consecutive baseline runs), not only against the runs' own noise",
                       all ? "these runs were" : "some runs were",
                       all && names.size() == 1 && names.front() == "default" ? std::string()
                                                                              : fmt::format(" ({})", listed));
}

namespace {

// History context as one line each, in plain text (markdown escapes it):
// an open alert on the counter's series, and a candidate outside the recent
// band. "alert 12", not "#12": GitHub links "#12" to the repository's issue
// or pull request 12.
std::string alert_line(const open_alert& a)
{
    const std::string since = a.git_sha.empty() ? fmt::format("run {}", a.run_id)
                                                : fmt::format("{} (run {})", a.git_sha.substr(0, 7), a.run_id);
    return fmt::format("open alert {} on this series{}: {} since {}", a.id,
                       a.state == model::alert_status::acknowledged ? " (acknowledged)" : "", pct_str(a.delta_pct),
                       since);
}

std::string band_line(const counter_report& c)
{
    const history_band& b = *c.band;
    return fmt::format("candidate {} outside the baseline's recent band [{}, {}] ({} runs{})",
                       value_str(c.candidate.median, c.unit), value_str(b.lo), value_str(b.hi), b.n,
                       b.since_run ? fmt::format(" since the change at run {}", *b.since_run) : "");
}

} // namespace

std::string disagreement_line(const count_time_disagreement& d)
{
    return fmt::format("{} {} ({}) but {} {} ({}): an instruction count only stands in for time, and here they "
                       "disagree (vector code, memory stalls and copies change the time per instruction)",
                       d.count_counter, pct_str(d.count_delta_pct), to_string(d.count_state), d.time_counter,
                       pct_str(d.time_delta_pct), to_string(d.time_state));
}

std::vector<std::string> history_lines(const counter_report& c)
{
    std::vector<std::string> out;
    if (c.open_alerts) {
        for (const auto& a : *c.open_alerts) out.push_back(alert_line(a));
    }
    if (c.band && c.outside_band.value_or(false)) out.push_back(band_line(c));
    return out;
}

namespace {

// Function names in an attribution table, at most: a demangled template
// name can run to kilobytes; the JSON report has it whole.
constexpr std::size_t max_shown_function_chars = 160;

} // namespace

std::string short_name(std::string_view name)
{
    if (name.size() <= max_shown_function_chars) return std::string(name);
    return std::string(name.substr(0, max_shown_function_chars - 3)) + "...";
}

std::string signed_count(double v) { return fmt::format("{:+.0f}", v); }

// A share that rounds to 0.0% but is not 0 says so ("+<0.1%"): the row
// changed, just by little.
std::string share_str(double share)
{
    if (share != 0 && std::abs(share) < 0.0005) return share > 0 ? "+<0.1%" : "-<0.1%";
    return fmt::format("{:+.1f}%", share * 100);
}

// perf rows carry an interval; the ones whose interval includes 0 are noise
// and not shown (their count is).
bool shown_perf_row(const function_change& c) { return c.significant.value_or(true); }

std::size_t hidden_perf_rows(const perf_attribution& p)
{
    return static_cast<std::size_t>(std::count_if(p.top.begin(), p.top.end(),
                                                  [](const function_change& c) { return !shown_perf_row(c); }));
}

std::string interval_str(const function_change& c)
{
    if (!c.interval) return "—";
    return fmt::format("[{:+.2f}, {:+.2f}] pp", c.interval->first, c.interval->second);
}

std::string callgrind_heading(const callgrind_attribution& cg)
{
    return fmt::format("callgrind, exclusive {} per function: total {} → {}", cg.event, value_str(cg.total_before),
                       value_str(cg.total_after));
}

std::string perf_heading(const perf_attribution& p)
{
    return fmt::format("perf record, {} self samples per function ({} execution{} per side): total {} → {}", p.event,
                       p.executions, p.executions == 1 ? "" : "s", value_str(p.samples_before),
                       value_str(p.samples_after));
}

} // namespace perfgate::report::detail

namespace perfgate::report {

std::string perf_noise_note(const gate::perf_attribution& p)
{
    using detail::shown_perf_row;
    if (p.top.empty() || p.samples_before <= 0 || p.samples_after <= 0) return {};
    if (std::any_of(p.top.begin(), p.top.end(), [](const gate::function_change& c) { return shown_perf_row(c); }))
        return {};
    // The flame graph's colour is the change of self share (profile/flamegraph.hpp),
    // the same quantity the interval is about: its reddest frame is the
    // row with the largest growth of share (the bluest, when none grew).
    const auto change_pp = [&](const gate::function_change& c) {
        return (c.after / p.samples_after - c.before / p.samples_before) * 100;
    };
    const auto grew = std::max_element(p.top.begin(), p.top.end(),
                                       [&](const auto& a, const auto& b) { return change_pp(a) < change_pp(b); });
    const bool any_grew = change_pp(*grew) > 0;
    const auto& c = any_grew ? *grew : *std::min_element(p.top.begin(), p.top.end(), [&](const auto& a, const auto& b) {
        return change_pp(a) < change_pp(b);
    });
    const double executions = p.executions > 0 ? static_cast<double>(p.executions) : 1.0;
    const std::string per_execution = c.before > 0
                                          ? fmt::format("{:.0f} → {:.0f} self samples per execution ({:+.1f}%)",
                                                        c.before / executions, c.after / executions,
                                                        (c.after / c.before - 1) * 100)
                                          : fmt::format("{:.0f} → {:.0f} self samples per execution",
                                                        c.before / executions, c.after / executions);
    return fmt::format(
        "No function's share of the samples changed beyond the noise, while the flame graph colours every change of "
        "share, noise included: its {} frame, {}, went from {:.1f}% to {:.1f}% of the samples ({:+.2f} pp; interval "
        "{}, which includes 0: the share varied that much between the profiled executions); {}. A share says where "
        "the time went, not how much: a function that holds most of the samples on both sides keeps its share when "
        "it slows down, so the counters above say how much it changed.",
        any_grew ? "reddest" : "bluest", detail::short_name(c.name), c.before / p.samples_before * 100,
        c.after / p.samples_after * 100, change_pp(c), detail::interval_str(c), per_execution);
}

} // namespace perfgate::report
