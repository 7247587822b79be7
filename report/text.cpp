// render_text (report/render.hpp): the terminal table.
#include "report/render.hpp"

#include <cctype>

#include <fmt/format.h>

#include "gate/noise.hpp"
#include "model/qualification.hpp"
#include "report/format.hpp"

namespace perfgate::report {

using namespace gate;
using namespace detail;

namespace {

// The attribution of one benchmark under its counters in the text report.
std::string text_attribution(const attribution& a)
{
    std::string out;
    if (const auto& cg = a.callgrind) {
        out += fmt::format("  where: {}\n", callgrind_heading(*cg));
        if (cg->top.empty()) out += "    no function's cost changed\n";
        for (const auto& c : cg->top) {
            out += fmt::format("    {:>14} {:>8}  {} → {}  {}{}\n", signed_count(c.delta), share_str(c.share),
                               value_str(c.before), value_str(c.after), short_name(c.name),
                               c.file.empty() ? "" : fmt::format("  ({})", c.file));
        }
    }
    if (const auto& p = a.perf) {
        out += fmt::format("  where: {}\n", perf_heading(*p));
        std::size_t shown = 0;
        for (const auto& c : p->top) {
            if (!shown_perf_row(c)) continue;
            ++shown;
            out += fmt::format("    {:>14} {:>8}  {} → {}  self share {}  {}\n", signed_count(c.delta),
                               share_str(c.share), value_str(c.before), value_str(c.after), interval_str(c),
                               short_name(c.name));
        }
        if (shown == 0) {
            const std::string note = perf_noise_note(*p);
            out += note.empty() ? std::string("    no symbol changed beyond the noise\n")
                                : fmt::format("    {}\n", note);
        }
        if (auto hidden = hidden_perf_rows(*p))
            out += fmt::format("    ({} more within the noise, not shown)\n", hidden);
        if (p->flame_graph) out += fmt::format("    differential flame graph: {}\n", *p->flame_graph);
    }
    if (const auto& m = a.memory) {
        out += "  where (valgrind):\n";
        for (const auto& c : m->top) {
            out += fmt::format("    {}: {} {} -> {} in {}{}\n", c.counter, signed_count(c.after - c.before),
                               c.kind.empty() ? "" : "(" + c.kind + ")", value_str(c.after), c.function,
                               c.what.empty() ? "" : ": " + c.what);
            for (const auto& f : c.stack) out += fmt::format("        at {}\n", f);
        }
        if (m->suppressed_before || m->suppressed_after) {
            out += fmt::format("    suppressed errors: {} -> {} (--suppressions)\n", m->suppressed_before,
                               m->suppressed_after);
        }
    }
    for (const auto& e : a.errors) out += fmt::format("  where: {} attribution failed: {}\n", e.source, e.message);
    return out;
}

} // namespace

namespace {

// "baseline: merge-base 1a2b3c4d5e6f of base 0f1e2d3c4b5a · head 9a8b7c6d5e4f".
// A report read from a file may hold anything: only hex reaches the terminal.
std::string baseline_text(const gate::baseline_choice& b)
{
    const auto hex12 = [](const std::string& s) {
        std::string out;
        for (char c : s.substr(0, 12)) out += std::isxdigit(static_cast<unsigned char>(c)) ? c : '?';
        return out;
    };
    const std::string rule = b.rule == "merge-base" || b.rule == "base-tip" || b.rule == "parent" ? b.rule : "?";
    std::string line = fmt::format("baseline: {} {}", rule, hex12(b.baseline_sha));
    // The base tip only when it says more: a merge-base that is the tip is not repeated.
    if (rule == "merge-base" && !b.base_tip_sha.empty() && b.base_tip_sha != b.baseline_sha)
        line += " of base " + hex12(b.base_tip_sha);
    return line + " · head " + hex12(b.head_sha);
}

} // namespace

std::string render_text(const gate::report& r, bool colour)
{
    auto paint = [colour](std::string_view s, status st) -> std::string {
        if (!colour) return std::string(s);
        const char* code = st == status::regression                                   ? "\x1b[31m"
                           : st == status::improvement                                ? "\x1b[32m"
                           : st == status::inconclusive || st == status::insufficient ? "\x1b[33m"
                           : st == status::unsupported                                ? "\x1b[2m"
                                                                                      : "";
        return *code ? fmt::format("{}{}\x1b[0m", code, s) : std::string(s);
    };
    std::string out = fmt::format("perfgate: {} — {}\n\n", to_string(r.result), summary_counts(r));
    if (is_suite(r)) out += fmt::format("{}\n\n", suite_line(r));
    if (const auto& b = r.baseline) out += baseline_text(*b) + "\n\n";
    if (r.qualification) {
        const std::string line = model::qualification_line(*r.qualification, r.benchmarks.size());
        if (!line.empty()) out += "qualification: " + line + "\n\n";
    }
    if (const std::string reused = reused_line(r); !reused.empty()) out += reused + "\n\n";
    if (const std::string note = not_interleaved_note(r); !note.empty()) out += fmt::format("note: {}\n\n", note);
    out += fmt::format("{:<13} {:<24} {:>16} {:>16} {:>9} {:>28} {:>9}\n", "status", "counter", "baseline", "candidate",
                       "Δ median", "shift [CI]", "p adj.");
    for (const auto& b : r.benchmarks) {
        if (r.benchmarks.size() > 1 || b.name != "default")
            out += fmt::format("{} ({})\n", b.name, to_string(b.result));
        for (const auto& c : b.counters) {
            std::string name = c.name + (c.gated ? "" : " ·");
            std::string st = std::string(to_string(c.state));
            out += fmt::format("{} {:<24} {:>16} {:>16} {:>9} {:>28} {:>9}\n",
                               paint(fmt::format("{:<13}", st), c.state), name, value_str(c.baseline.median, c.unit),
                               value_str(c.candidate.median, c.unit), pct_str(c.delta_pct),
                               c.shift_ci ? fmt::format("{} {}", pct_str(c.shift_pct), ci_str(c)) : "—",
                               p_str(c.p_adjusted ? c.p_adjusted : c.p_value));
            if (c.state != status::unchanged && !c.reason.empty()) out += fmt::format("{:<14}{}\n", "", c.reason);
            for (const auto& line : history_lines(c)) out += fmt::format("{:<14}! {}\n", "", line);
            if (auto line = noise_summary(c); !line.empty()) out += fmt::format("{:<14}noise: {}\n", "", line);
        }
        for (const auto& d : b.count_vs_time) out += fmt::format("{:<14}! {}\n", "", disagreement_line(d));
        if (b.attribution_info) out += text_attribution(*b.attribution_info);
    }
    out += "(· = reported, not gated)\n";
    if (const auto decide = decide_report(r)) out += fmt::format("\nto decide: {}\n", decide->advice);
    if (!r.advice.empty()) {
        out += "\nadvice (the testbed's qualification; not part of the verdict):\n";
        for (const auto& a : r.advice) out += fmt::format("  ! {}\n", a.message);
    }
    if (const auto overall = overall_geomeans(r); !overall.empty()) {
        out += "\noverall: geometric mean over benchmarks of candidate/baseline medians (not gated):\n";
        for (const auto& o : overall) {
            out += fmt::format("  {:<24} ×{:.4f} ({}) over {} benchmarks, {} is better\n", o.counter, o.ratio,
                               ratio_pct(o.ratio), o.benchmarks, to_string(o.direction));
        }
    }
    if (!r.added.empty()) {
        out += "\nadded (candidate only, not compared):\n";
        for (const auto& name : r.added) out += fmt::format("  + {}\n", name);
    }
    if (!r.removed.empty()) {
        out += "\nremoved (baseline only, not compared):\n";
        for (const auto& name : r.removed) out += fmt::format("  - {}\n", name);
    }
    if (!r.failed.empty()) {
        out += "\nfailed (reported failed by the harness, not compared):\n";
        for (const auto& f : r.failed) out += fmt::format("  ! {}\n", failed_line(f));
    }
    if (!r.warnings.empty()) {
        out += "\nwarnings:\n";
        for (const auto& w : r.warnings) out += fmt::format("  - {}\n", w);
    }
    return out;
}


} // namespace perfgate::report
