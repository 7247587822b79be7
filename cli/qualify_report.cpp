#include "cli/qualify_report.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/utf8.hpp"

namespace perfgate::cli {

using nlohmann::json;

namespace {

json rate_json(const gate::qualify_rate& r)
{
    return json{{"k", r.k}, {"n", r.n}, {"rate", r.value}, {"lower", r.lo}, {"upper", r.hi}};
}

json row_json(const gate::slowdown_row& s)
{
    return json{{"requested_pct", s.requested_pct},
                {"injected_pct", s.injected_pct},
                {"caught", rate_json(s.caught)},
                {"inconclusive", s.inconclusive},
                {"repetitions", s.repetitions}};
}

json opt_row(const std::optional<gate::slowdown_row>& s) { return s ? row_json(*s) : json(); }


std::string rate_text(const gate::qualify_rate& r)
{
    return fmt::format("{}/{} = {:.0f}% [{:.0f}%, {:.0f}%]", r.k, r.n, r.value * 100, r.lo * 100, r.hi * 100);
}

std::string detects(const std::optional<gate::slowdown_row>& s)
{
    return s ? fmt::format("{:.3g}% ({:.0f} repetitions per side)", s->injected_pct, s->repetitions)
             : std::string("none of the slowdowns tried");
}

std::string headline(const qualify_result& r)
{
    return fmt::format("perfgate qualify: benchmark '{}', backend {}, {} gates in {:.0f} s (stopped: {})",
                       model::escape_for_terminal(r.benchmark), r.backend, r.gates, r.elapsed_s, r.stopped);
}

// "this testbed detects >= 5% of task-clock (qualified 2026-11-28)": the
// calibrated counter's slowdown caught in 80% of gates, the line the
// dashboard and the PR comment are to show once qualifications are stored.
std::string detects_line(const qualify_result& r)
{
    const auto c = std::find_if(r.counters.begin(), r.counters.end(),
                                [&](const gate::counter_qualification& q) { return q.counter == r.calibrated_on; });
    if (c == r.counters.end()) return {};
    const std::string day = r.date.substr(0, 10);
    if (!c->detects_80) {
        return fmt::format("this testbed detects no slowdown tried of {} (up to {:.3g}%) in 80% of gates "
                           "(qualified {})",
                           c->counter, r.slowdowns.empty() ? 0.0 : r.slowdowns.back(), day);
    }
    return fmt::format("this testbed detects >= {:.3g}% of {} in 80% of gates (qualified {})",
                       c->detects_80->injected_pct, c->counter, day);
}

std::string text(const qualify_result& r)
{
    std::string out = headline(r) + "\n";
    if (!r.testbed.empty()) out += fmt::format("testbed {}, {}\n", model::escape_for_terminal(r.testbed), r.date);
    if (auto line = detects_line(r); !line.empty()) out += line + "\n";
    out += fmt::format("slowdowns sized on {}; intervals: Wilson 95%\n", r.calibrated_on);
    for (const auto& c : r.counters) {
        out += fmt::format("\n{}{} (threshold {:.3g}%)\n", c.counter, c.deterministic ? " [deterministic]" : "",
                           c.threshold_pct);
        out += fmt::format("  A/A      false fails {}, inconclusive {:.0f}%, {:.0f} repetitions per side\n",
                           rate_text(c.false_fails), c.inconclusive_share * 100, c.repetitions);
        for (const auto& s : c.slowdowns) {
            out += fmt::format("  {:<8} caught {}, inconclusive {} ({:.3g}% on this counter, {:.0f} repetitions "
                               "per side)\n",
                               fmt::format("+{:.3g}%", s.requested_pct), rate_text(s.caught), s.inconclusive,
                               s.injected_pct, s.repetitions);
        }
        out += fmt::format("  detects in 80%: {}\n  detects in 95%: {}\n", detects(c.detects_80),
                           detects(c.detects_95));
        out += fmt::format("  recommendation: {}\n", c.recommendation);
    }
    for (const auto& w : r.warnings) out += fmt::format("warning: {}\n", model::escape_for_terminal(w));
    return out;
}

std::string cell(std::string_view s)
{
    std::string out;
    for (char c : s) {
        if (c == '|') out += "\\|";
        else if (c == '\n') out += ' ';
        else out += c;
    }
    return out;
}

std::string markdown(const qualify_result& r)
{
    std::string out = fmt::format("### perfgate qualify: `{}` on {}\n\n", cell(r.benchmark), r.backend);
    if (auto line = detects_line(r); !line.empty()) out += fmt::format("**{}**\n\n", cell(line));
    out += fmt::format("Testbed `{}`, {}: {} gates in {:.0f} s (stopped: {}); slowdowns sized on {}; intervals are "
                       "Wilson 95%.\n\n",
                       cell(r.testbed), r.date, r.gates, r.elapsed_s, r.stopped, r.calibrated_on);
    out += "| counter | A/A false fails | detects in 80% | detects in 95% | recommendation |\n";
    out += "|---|---|---|---|---|\n";
    for (const auto& c : r.counters) {
        out += fmt::format("| {}{} | {} | {} | {} | {} |\n", c.counter, c.deterministic ? " (exact)" : "",
                           rate_text(c.false_fails), detects(c.detects_80), detects(c.detects_95),
                           cell(c.recommendation));
    }
    for (const auto& w : r.warnings) out += fmt::format("\n> {}\n", cell(w));
    return out;
}

} // namespace

json to_json(const qualify_result& r)
{
    json counters = json::array();
    for (const auto& c : r.counters) {
        json rows = json::array();
        for (const auto& s : c.slowdowns) rows.push_back(row_json(s));
        counters.push_back(json{{"counter", c.counter},
                                {"deterministic", c.deterministic},
                                {"threshold_pct", c.threshold_pct},
                                {"alpha", c.alpha},
                                {"false_fails", rate_json(c.false_fails)},
                                {"inconclusive_share", c.inconclusive_share},
                                {"repetitions", c.repetitions},
                                {"slowdowns", rows},
                                {"detects_80", opt_row(c.detects_80)},
                                {"detects_95", opt_row(c.detects_95)},
                                {"reaches_threshold", c.reaches_threshold},
                                {"recommendation", c.recommendation}});
    }
    json calibration = json::array();
    for (const auto& k : r.calibration) {
        calibration.push_back(
            json{{"counter", k.counter}, {"unit", k.unit}, {"median", k.median}, {"per_iteration", k.per_iteration}});
    }
    return json{{"schema", "perfgate.qualify/v1"},
                {"benchmark", r.benchmark},
                {"backend", r.backend},
                {"testbed", r.testbed},
                {"testbed_fingerprint", r.testbed_fingerprint},
                {"date", r.date},
                {"interval", "wilson"},
                {"confidence", gate::qualify_confidence},
                {"calibrated_on", r.calibrated_on},
                {"slowdowns", r.slowdowns},
                {"calibration", calibration},
                {"gates", r.gates},
                {"elapsed_s", r.elapsed_s},
                {"time_budget_s", r.time_budget_s},
                {"stopped", r.stopped},
                {"summary", detects_line(r)},
                {"counters", counters},
                {"warnings", r.warnings}};
}

std::string render_qualify(const qualify_result& r, report_format format)
{
    switch (format) {
    case report_format::json: return to_json(r).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    case report_format::markdown: return markdown(r);
    case report_format::text:
    case report_format::junit: break; // refused by perfgate qualify's --format
    }
    return text(r);
}

} // namespace perfgate::cli
