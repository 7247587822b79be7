// render_junit (report/render.hpp): the report as JUnit XML, the test report
// format GitLab's merge-request widget, Jenkins' junit step and Buildkite's
// test analytics read (docs/report.md "JUnit XML").
//
// One <testcase> per benchmark and gated counter (classname the benchmark,
// name the counter): a regression, or an anomaly under fail_on_anomaly, is a
// <failure>; inconclusive, insufficient and unsupported are <skipped> with
// the reason; unchanged and improvement pass. A benchmark that failed to run
// is an <error>; added and removed benchmarks are <skipped>. Ungated
// counters are not test cases (they never decide the verdict).
#include "report/render.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "model/utf8.hpp"
#include "report/format.hpp"

namespace perfgate::report {

using namespace gate;
using namespace detail;

namespace {

// Text as XML 1.0 character data or an attribute value: what XML cannot
// hold (invalid UTF-8, control characters) is written as a visible escape
// first (model::escape_for_terminal), then the five markup characters
// become entities. Newlines are kept in element text only.
std::string xml_text(std::string_view s, bool multiline = false)
{
    const std::string safe = model::escape_for_terminal(s, multiline);
    std::string out;
    out.reserve(safe.size());
    for (const char ch : safe) {
        switch (ch) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        case '\t': out += multiline ? "\t" : "&#9;"; break;
        default: out += ch;
        }
    }
    return out;
}

enum class outcome { pass, failure, error, skipped };

struct test_case {
    std::string classname, name;
    outcome result = outcome::pass;
    std::string type;    // failure/skipped/error type attribute
    std::string message; // one line
    std::string detail;  // element text, may be multi-line
};

// "+12.34% (interval [+10.10%, +14.50%]), threshold ±2%, p 0.0012, median 1,200 → 1,348"
std::string effect_line(const counter_report& c)
{
    std::string line = fmt::format("{}: {} (interval {}), threshold ±{}%", c.name, pct_str(c.delta_pct), ci_str(c),
                                   c.threshold_pct);
    if (c.p_adjusted || c.p_value) line += fmt::format(", p {}", p_str(c.p_adjusted ? c.p_adjusted : c.p_value));
    return line;
}

test_case counter_case(const benchmark_report& b, const counter_report& c, const policy& rules)
{
    test_case t{b.name, c.name, outcome::pass, {}, {}, {}};
    const std::string effect = effect_line(c);
    const std::string why = c.reason.empty() ? std::string{} : ": " + c.reason;
    std::string medians = fmt::format("median {} → {}", display_value(c.baseline.median, c.unit),
                                      display_value(c.candidate.median, c.unit));
    switch (c.state) {
    case status::regression:
        t = {b.name, c.name, outcome::failure, "regression", "regression, " + effect, medians + "\n" + c.reason};
        break;
    case status::inconclusive:
    case status::insufficient:
    case status::unsupported: {
        const std::string label(c.state == status::inconclusive   ? "inconclusive"
                                : c.state == status::insufficient ? "insufficient"
                                                                  : "unsupported");
        t = {b.name, c.name, outcome::skipped, label, label + why, effect + "\n" + medians};
        break;
    }
    case status::improvement:
    case status::unchanged: t.detail = effect + "\n" + medians; break;
    }
    if (t.result == outcome::pass && rules.fail_on_anomaly && c.anomaly) {
        t.result = outcome::failure;
        t.type = "anomaly";
        t.message = "anomaly against the history (z-score " + value_str(c.z_score) + "), " + effect;
    }
    return t;
}

std::vector<test_case> test_cases(const gate::report& r)
{
    std::vector<test_case> out;
    for (const auto& b : r.benchmarks) {
        bool any = false;
        for (const auto& c : b.counters) {
            if (!c.gated) continue;
            any = true;
            out.push_back(counter_case(b, c, r.rules));
        }
        if (!any) {
            out.push_back({b.name,
                           "(no gated counter)",
                           outcome::skipped,
                           "insufficient",
                           "no gated counter has data on both sides, so nothing was gated",
                           {}});
        }
    }
    for (const auto& f : r.failed)
        out.push_back(
            {f.name, "(run)", outcome::error, "failed", fmt::format("failed ({}): {}", f.side, f.message), {}});
    for (const auto& name : r.added)
        out.push_back(
            {name, "(added)", outcome::skipped, "added", "added: not in the baseline, nothing to compare", {}});
    for (const auto& name : r.removed)
        out.push_back({name, "(removed)", outcome::skipped, "removed", "removed: not in the candidate", {}});
    return out;
}

std::string_view element(outcome o)
{
    switch (o) {
    case outcome::failure: return "failure";
    case outcome::error: return "error";
    case outcome::skipped: return "skipped";
    case outcome::pass: break;
    }
    return {};
}

std::string_view verdict_word(verdict v)
{
    switch (v) {
    case verdict::fail: return "fail";
    case verdict::inconclusive: return "inconclusive";
    case verdict::pass: break;
    }
    return "pass";
}

} // namespace

std::string render_junit(const gate::report& r, std::string_view suite_name)
{
    const std::vector<test_case> cases = test_cases(r);
    std::size_t failures = 0, errors = 0, skipped = 0;
    for (const auto& t : cases) {
        failures += t.result == outcome::failure ? 1 : 0;
        errors += t.result == outcome::error ? 1 : 0;
        skipped += t.result == outcome::skipped ? 1 : 0;
    }
    const std::string name = xml_text(suite_name);
    const std::string counts = fmt::format(R"(tests="{}" failures="{}" errors="{}" skipped="{}")", cases.size(),
                                           failures, errors, skipped);
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt::format("<testsuites name=\"{}\" {}>\n", name, counts);
    out += fmt::format("  <testsuite name=\"{}\" {}>\n", name, counts);
    out += "    <properties>\n";
    out += fmt::format("      <property name=\"verdict\" value=\"{}\"/>\n", verdict_word(r.result));
    if (r.measured) {
        out += fmt::format("      <property name=\"backend\" value=\"{}\"/>\n", xml_text(r.measured->backend));
        if (!r.measured->baseline_sha.empty())
            out += fmt::format("      <property name=\"baseline_sha\" value=\"{}\"/>\n",
                               xml_text(r.measured->baseline_sha));
        if (!r.measured->candidate_sha.empty())
            out += fmt::format("      <property name=\"candidate_sha\" value=\"{}\"/>\n",
                               xml_text(r.measured->candidate_sha));
    }
    if (r.comparison_id)
        out += fmt::format("      <property name=\"comparison_id\" value=\"{}\"/>\n", *r.comparison_id);
    out += "    </properties>\n";
    for (const auto& t : cases) {
        out += fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_text(t.classname), xml_text(t.name));
        if (t.result == outcome::pass && t.detail.empty()) {
            out += "/>\n";
            continue;
        }
        out += ">\n";
        if (t.result != outcome::pass) {
            out += fmt::format("      <{} type=\"{}\" message=\"{}\"", element(t.result), xml_text(t.type),
                               xml_text(t.message));
            out += t.detail.empty() ? std::string("/>\n")
                                    : fmt::format(">{}</{}>\n", xml_text(t.detail, true), element(t.result));
        } else {
            out += fmt::format("      <system-out>{}</system-out>\n", xml_text(t.detail, true));
        }
        out += "    </testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

} // namespace perfgate::report
