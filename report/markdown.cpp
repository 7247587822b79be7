// render_markdown (report/render.hpp): GitHub-flavoured markdown for a PR
// comment or a job summary.
#include "report/render.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gate/noise.hpp"
#include "model/qualification.hpp"
#include "report/format.hpp"

namespace perfgate::report {

using namespace gate;
using namespace detail;

namespace {

// User-supplied text (benchmark and counter names, units, warnings) as
// literal GitHub-flavoured markdown: it must not become a link, an image,
// emphasis, code, a heading, a table cell boundary or raw HTML in a PR
// comment. CommonMark §2.4: a backslash makes any ASCII punctuation literal,
// which covers the inline syntax and GFM's `\|` inside table cells. `<`, `>`
// and `&` become entities instead: a backslash does not escape inside an
// HTML block, and an entity keeps a user string from ever spelling `<img`,
// `<details>` or the `-->` that ends our hidden marker. Line breaks and other
// control characters become spaces: one string stays one line or cell.
// Plain names (task-clock, BM_Sort/1024, cpu_core/cycles/) keep their `-`,
// `/`, `.` and `:`.
//
// GitHub also acts on plain text after rendering: `@name` notifies a user or
// a team, `#12` links (and cross-references) an issue, and `https://...`,
// `www.` and e-mail addresses become links. Escapes and entities do not stop
// that, since it works on the rendered text, so a zero-width space goes where
// it breaks the pattern and the reader sees the same characters: after an
// `@` or `#` that starts a name or a number, after the `-` of `GH-12` (which
// links issue 12 as `#12` does), between a scheme's `:` and its `//`, and
// after `www`. GitLab acts the same way on `!12`, `~label`, `%milestone`,
// `$12` and `&12` (below); its own autolinks are the same URLs.
std::string md_text(std::string_view s)
{
    constexpr std::string_view backslashed = "\\`*_[]()#|!~";
    constexpr std::string_view zero_width_space = "\xe2\x80\x8b"; // U+200B, UTF-8
    const auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char ch = s[i];
        const auto u = static_cast<unsigned char>(ch);
        const char next = i + 1 < s.size() ? s[i + 1] : '\0';
        if (u < 0x20 || u == 0x7f) out += ' ';
        else if (ch == '<') out += "&lt;";
        else if (ch == '>') out += "&gt;";
        else if (ch == '&') {
            out += "&amp;";
            if (std::isdigit(static_cast<unsigned char>(next)) != 0) out += zero_width_space; // GitLab's epic &12
        } else {
            if (backslashed.find(ch) != std::string_view::npos) out += '\\';
            out += ch;
            const bool mention = ch == '@' && alnum(next);
            const bool digit_next = std::isdigit(static_cast<unsigned char>(next)) != 0;
            const bool issue_ref = ch == '#' && digit_next;
            // GH-12 (any case) links issue 12 as #12 does.
            const bool gh_ref = ch == '-' && digit_next && i >= 2 && (s[i - 1] == 'H' || s[i - 1] == 'h') &&
                                (s[i - 2] == 'G' || s[i - 2] == 'g') && (i < 3 || !alnum(s[i - 3]));
            // GitLab's references (GitLab Flavored Markdown, "GitLab-specific
            // references"): !12 a merge request, ~label or ~"a label", %12 or
            // %name a milestone, $12 a snippet, &12 an epic, [vulnerability:12]
            // needs its brackets (escaped above). A zero-width space after the
            // sigil breaks each; `&` is an entity already, so only `&12`
            // needs one (below). #12 and @name are GitHub's too (above).
            const bool word_next = alnum(next) || next == '"';
            const bool gitlab_ref = (ch == '!' && digit_next) || ((ch == '~' || ch == '%') && word_next) ||
                                    (ch == '$' && digit_next);
            const bool scheme = ch == ':' && s.substr(i + 1, 2) == "//";
            const bool www = (ch == 'w' || ch == 'W') && i >= 2 && (i < 3 || !alnum(s[i - 3])) && next == '.' &&
                             (s[i - 1] == 'w' || s[i - 1] == 'W') && (s[i - 2] == 'w' || s[i - 2] == 'W');
            if (mention || issue_ref || gh_ref || gitlab_ref || scheme || www) out += zero_width_space;
        }
    }
    return out;
}

// A URL as a markdown link destination: percent-encode what would end the
// destination or the link early (spaces, parentheses, brackets, angle
// brackets, quotes, backslashes, control bytes), RFC 3986 §2.1.
std::string md_url(std::string_view url)
{
    constexpr std::string_view unsafe = "()[]<>\"'`\\|";
    std::string out;
    for (char ch : url) {
        const auto u = static_cast<unsigned char>(ch);
        if (u <= 0x20 || u == 0x7f || unsafe.find(ch) != std::string_view::npos) out += fmt::format("%{:02X}", u);
        else out += ch;
    }
    return out;
}

// History lines in a PR comment's visible part, at most: a gate of many
// counters on a testbed whose baseline drifted would otherwise push the
// summary off the page (and toward GitHub's size limit). The JSON report
// has them all.
constexpr std::size_t max_markdown_history_lines = 20;

// One benchmark's "Where did it come from" tables in markdown.
std::string markdown_attribution(const std::string& benchmark, const attribution& a)
{
    std::string out;
    if (const auto& cg = a.callgrind) {
        out += fmt::format("**{}** — callgrind, exclusive {} per function: total {} → {}\n\n", md_text(benchmark),
                           md_text(cg->event), grouped(cg->total_before), grouped(cg->total_after));
        if (cg->top.empty()) {
            out += "_No function's cost changed._\n\n";
        } else {
            out += "| function | before | after | Δ | share of the change |\n|---|--:|--:|--:|--:|\n";
            for (const auto& c : cg->top) {
                out += fmt::format("| {} | {} | {} | {} | {} |\n", md_text(short_name(c.name)), grouped(c.before),
                                   grouped(c.after), grouped(c.delta, true), share_str(c.share));
            }
            out += "\n";
        }
    }
    if (const auto& p = a.perf) {
        out += fmt::format("**{}** — {}\n\n", md_text(benchmark), md_text(perf_heading(*p)));
        std::string rows;
        for (const auto& c : p->top) {
            if (!shown_perf_row(c)) continue;
            rows += fmt::format("| {} | {} | {} | {} | {} | {} |\n", md_text(short_name(c.name)), value_str(c.before),
                                value_str(c.after), signed_count(c.delta), interval_str(c),
                                c.significant ? (*c.significant ? "yes" : "no") : "—");
        }
        if (rows.empty()) {
            const std::string note = perf_noise_note(*p);
            out += note.empty() ? std::string("_No symbol changed beyond the noise._\n\n") : md_text(note) + "\n\n";
        } else {
            out += "| symbol | before | after | Δ | self share Δ [interval] | significant |\n"
                   "|---|--:|--:|--:|--:|:-:|\n" +
                   rows + "\n";
        }
        if (auto hidden = hidden_perf_rows(*p)) {
            out += fmt::format("_{} more symbol{} changed within the noise: not shown._\n\n", hidden,
                               hidden == 1 ? "" : "s");
        }
        if (p->flame_graph) out += fmt::format("Differential flame graph: {}\n\n", md_text(*p->flame_graph));
    }
    if (const auto& m = a.memory) {
        out += fmt::format("**{}** — where the memory went (valgrind)\n\n", md_text(benchmark));
        out += "| counter | function | kind | before | after | Δ | stack |\n|---|---|---|--:|--:|--:|---|\n";
        for (const auto& c : m->top) {
            std::string stack;
            for (const auto& f : c.stack) stack += (stack.empty() ? "" : " ← ") + md_text(f);
            out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", md_text(c.counter), md_text(c.function),
                               md_text(c.kind), grouped(c.before), grouped(c.after), grouped(c.after - c.before, true),
                               stack);
        }
        out += "\n";
        if (m->suppressed_before || m->suppressed_after) {
            out += fmt::format("_Errors suppressed (--suppressions): {} → {}._\n\n", m->suppressed_before,
                               m->suppressed_after);
        }
    }
    for (const auto& e : a.errors) {
        out += fmt::format("- ⚠️ {}: {} attribution failed: {}\n", md_text(benchmark), md_text(e.source),
                           md_text(e.message));
    }
    if (!a.errors.empty()) out += "\n";
    return out;
}

// What `perfgate run --artifacts DIR` wrote for this report, as the
// artifacts line names it: only what exists (callgrind writes no flame
// graph; docs/cli.md "--artifacts").
std::string artifact_contents(const gate::report& r)
{
    bool callgrind = false, perf = false, flame = false, memory = false;
    for (const auto& b : r.benchmarks) {
        if (!b.attribution_info) continue;
        callgrind = callgrind || b.attribution_info->callgrind.has_value();
        perf = perf || b.attribution_info->perf.has_value();
        flame = flame || (b.attribution_info->perf && b.attribution_info->perf->flame_graph);
        memory = memory || b.attribution_info->memory.has_value();
    }
    std::vector<std::string> parts;
    if (callgrind) parts.emplace_back("callgrind profiles");
    if (perf) parts.emplace_back("perf's folded stacks");
    if (flame) parts.emplace_back("differential flame graphs");
    if (memory) {
        parts.emplace_back("valgrind XML");
        parts.emplace_back("DHAT JSON");
    }
    parts.emplace_back("attribution.json");
    std::string out = "Raw ";
    for (std::size_t i = 0; i < parts.size(); ++i)
        out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    return out;
}

// The collapsed "Where did it come from" section: every benchmark with an
// attribution, as many as fit in `budget` characters.
std::string markdown_attributions(const gate::report& r, const markdown_options& opt, std::size_t budget)
{
    const std::string open = "\n<details><summary>Where did it come from</summary>\n\n";
    const std::string close = "</details>\n";
    std::string link;
    if (!opt.artifacts_url.empty()) {
        link = fmt::format("{}: {}[workflow artifacts]({}).\n\n", artifact_contents(r),
                           opt.artifact_name.empty() ? "" : fmt::format("`{}` in the ", md_text(opt.artifact_name)),
                           md_url(opt.artifacts_url));
    }
    std::string inner;
    std::size_t listed = 0, left_out = 0;
    for (const auto& b : r.benchmarks) {
        if (!b.attribution_info) continue;
        ++listed;
        auto block = markdown_attribution(b.name, *b.attribution_info);
        if (left_out == 0 && open.size() + inner.size() + block.size() + link.size() + close.size() + 80 <= budget) {
            inner += block;
        } else {
            ++left_out;
        }
    }
    if (listed == 0 || left_out == listed) return {};
    if (left_out > 0) {
        inner += fmt::format("_… {} more benchmark{}: see the JSON report._\n\n", left_out, left_out == 1 ? "" : "s");
    }
    return open + inner + link + close;
}

// A commit as a reviewer sees it: its first 7 hex digits in a code span,
// linked to {repository_url}/commit/{sha} when the repository is known.
// The runner checks shas as hex; one that is not is shown, escaped, unlinked.
std::string commit_ref(const std::string& sha, const markdown_options& opt)
{
    constexpr std::size_t short_sha = 7; // as GitHub abbreviates them
    const bool hex = !sha.empty() && std::all_of(sha.begin(), sha.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c)) != 0;
    });
    // Escaped text is not put in a code span, which would show its backslashes.
    if (!hex) return md_text(sha.substr(0, 40));
    std::string shown = fmt::format("`{}`", sha.substr(0, short_sha));
    if (opt.repository_url.empty()) return shown;
    return fmt::format("[{}]({}/commit/{})", shown, md_url(opt.repository_url), sha);
}

// "Head `1a2b3c4` vs baseline `5d6e7f8`, the merge-base (base tip `9a8b7c6`)
// · backend **perf** · testbed **ci-runner-2**": what was compared, by
// which rule (the report's baseline_ref) and how it was measured (its
// measured); the parts not known are left out; empty when none is.
std::string context_line(const gate::report& r, const markdown_options& opt)
{
    std::vector<std::string> parts;
    std::string head = r.baseline ? r.baseline->head_sha : r.measured ? r.measured->candidate_sha : std::string();
    std::string base = r.baseline ? r.baseline->baseline_sha : r.measured ? r.measured->baseline_sha : std::string();
    if (!head.empty() || !base.empty()) {
        std::string commits = fmt::format("Head {} vs baseline {}", head.empty() ? "—" : commit_ref(head, opt),
                                          base.empty() ? "—" : commit_ref(base, opt));
        if (r.baseline) {
            commits += fmt::format(", the **{}**", md_text(r.baseline->rule));
            // The base tip only when it says more: when the merge-base is
            // the tip (a branch made from the base's head), one SHA is enough.
            if (r.baseline->rule == "merge-base" && !r.baseline->base_tip_sha.empty() &&
                r.baseline->base_tip_sha != r.baseline->baseline_sha)
                commits += fmt::format(" (base tip {})", commit_ref(r.baseline->base_tip_sha, opt));
        }
        parts.push_back(std::move(commits));
    }
    if (r.measured && !r.measured->backend.empty())
        parts.push_back(fmt::format("backend **{}**", md_text(r.measured->backend)));
    if (r.measured && !r.measured->testbed.empty())
        parts.push_back(fmt::format("testbed **{}**", md_text(r.measured->testbed)));
    std::string line;
    for (const auto& p : parts) line += (line.empty() ? "" : " · ") + p;
    return line;
}

// The verdict's counts over gated counters, the zero ones left out:
// "1 regression, 3 unchanged".
std::string verdict_counts(const gate::report& r)
{
    std::size_t regressions = r.count(status::regression), improvements = r.count(status::improvement);
    std::size_t unchanged = r.count(status::unchanged),
                inconclusive = r.count(status::inconclusive) + r.count(status::insufficient);
    if (is_suite(r)) {
        // A suite counts benchmarks (gate::count_benchmarks), as its summary line does.
        const suite_counts n = count_benchmarks(r);
        regressions = n.regressions;
        improvements = n.improvements;
        unchanged = n.unchanged;
        inconclusive = n.inconclusive;
    }
    std::vector<std::string> parts;
    if (regressions) parts.push_back(fmt::format("{} regression{}", regressions, regressions == 1 ? "" : "s"));
    if (improvements) parts.push_back(fmt::format("{} improvement{}", improvements, improvements == 1 ? "" : "s"));
    if (inconclusive) parts.push_back(fmt::format("{} inconclusive", inconclusive));
    if (unchanged) parts.push_back(fmt::format("{} unchanged", unchanged));
    if (parts.empty()) return is_suite(r) ? "no benchmark compared" : "no gated counter had data";
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
    return is_suite(r) ? out + " (benchmarks)" : out;
}

// The lines under the verdict, one fact each, in the order a reviewer
// needs them: what was compared and how it was measured, then how the
// verdict was reached when that is unusual (runs not measured together).
// Each is a paragraph of its own. Facts added later (a baseline reused
// from a stored run, an acceptance of the regression) are lines of this
// list, after the context line.
std::vector<std::string> header_lines(const gate::report& r, const markdown_options& opt)
{
    std::vector<std::string> lines;
    if (std::string context = context_line(r, opt); !context.empty()) lines.push_back(std::move(context));
    if (r.qualification) {
        const std::string line = model::qualification_line(*r.qualification, r.benchmarks.size());
        if (!line.empty()) lines.push_back(fmt::format("Qualification: {}", md_text(line)));
    }
    if (const std::string reused = reused_line(r); !reused.empty()) lines.push_back(md_text(reused));
    if (const std::string note = not_interleaved_note(r); !note.empty())
        lines.push_back(fmt::format("> {}", md_text(note)));
    return lines;
}

// The head: the sticky-comment marker (if any), the verdict with its
// counts, then header_lines.
std::string markdown_head(const gate::report& r, const markdown_options& opt)
{
    std::string head;
    if (!opt.marker.empty()) head += opt.marker + "\n";
    head += fmt::format("### {} {}: **{}** — {}\n\n", verdict_mark(r.result), md_text(opt.title), to_string(r.result),
                        verdict_counts(r));
    for (const auto& line : header_lines(r, opt)) head += line + "\n\n";
    return head;
}

constexpr std::string_view gated_table_head =
    "| | benchmark | counter | baseline | candidate | change | interval, p |\n"
    "|:-:|---|---|--:|--:|--:|--:|\n";

// A row's evidence: a deterministic count needs none ("exact count"); a
// tested counter has the shift's interval and its adjusted p-value.
std::string evidence_str(const counter_report& c)
{
    if (c.test && *c.test == method::deterministic) return "exact count";
    if (!c.shift_pct) return "—";
    return fmt::format("{}, p {}", ci_str(c), p_str(c.p_adjusted));
}

// The change in percent of the baseline; from a baseline of 0 (a first
// leak), where a percentage means nothing, the difference: "+4,096 B".
std::string change_str(const counter_report& c)
{
    if (c.delta_pct || !c.baseline.median || !c.candidate.median) return pct_str(c.delta_pct);
    const double d = *c.candidate.median - *c.baseline.median;
    if (d == 0) return "0";
    const std::string size = display_value(std::abs(d), c.unit);
    return (d > 0 ? "+" : "-") + size;
}

// One row of the visible table: a gated counter that has data.
std::string markdown_gated_row(const benchmark_report& b, const counter_report& c)
{
    return fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", mark(c.state), md_text(b.name), md_text(c.name),
                       md_text(display_value(c.baseline.median, c.unit)),
                       md_text(display_value(c.candidate.median, c.unit)), md_text(change_str(c)), evidence_str(c));
}

// The order of the visible rows: what changed the verdict first.
int row_rank(status s)
{
    switch (s) {
    case status::regression: return 0;
    case status::improvement: return 1;
    case status::inconclusive:
    case status::insufficient: return 2;
    case status::unchanged: return 3;
    case status::unsupported: return 4;
    }
    return 4;
}

// The visible table: one row per gated counter that has data,
// regressions first, then improvements, inconclusive and unchanged ones
// (the order of a suite's table).
std::string markdown_gated_table(const gate::report& r)
{
    std::string table(gated_table_head);
    std::size_t gated_rows = 0;
    for (int rank = 0; rank < 4; ++rank) {
        for (const auto& b : r.benchmarks) {
            for (const auto& c : b.counters) {
                // Unsupported counters cannot gate: they are listed in the details
                // and the warnings, not in the table of what was gated.
                if (!c.gated || row_rank(c.state) != rank) continue;
                ++gated_rows;
                table += markdown_gated_row(b, c);
            }
        }
    }
    if (gated_rows == 0) return "_No gated counter had data._\n";
    return table;
}

// A candidate outside the baseline's recent band the worse way: above it
// for a counter that is better lower, below it for one better higher. A
// faster candidate outside the band is good news, not a warning.
bool outside_band_worse(const counter_report& c)
{
    if (!c.band || !c.outside_band.value_or(false) || !c.candidate.median) return false;
    return c.direction == capture::better::lower ? *c.candidate.median > c.band->hi : *c.candidate.median < c.band->lo;
}

// The band line of history_lines with the values as the tables show them
// (display_value): "candidate 13.86 ms above the baseline's recent band
// [12.20 ms, 12.60 ms] (30 runs)".
std::string band_note(const counter_report& c)
{
    const history_band& b = *c.band;
    const bool above = c.candidate.median && *c.candidate.median > b.hi;
    return fmt::format("candidate {} {} the baseline's recent band [{}, {}] ({} runs{})",
                       display_value(c.candidate.median, c.unit), above ? "above" : "below",
                       display_value(b.lo, c.unit), display_value(b.hi, c.unit), b.n,
                       b.since_run ? fmt::format(" since the change at run {}", *b.since_run) : "");
}

// A counter's history lines (history_lines: its open alerts, then the band
// line) split into the ones shown above the details, `visible`, and the
// rest: the band line of an ungated counter or of one that moved the
// better way.
void split_history(const counter_report& c, std::vector<std::string>& visible, std::vector<std::string>& rest)
{
    std::vector<std::string> lines = history_lines(c);
    const bool band_line = c.band && c.outside_band.value_or(false);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const bool is_band = band_line && i + 1 == lines.size();
        const bool shown = c.gated && (!is_band || outside_band_worse(c));
        (shown ? visible : rest).push_back(is_band ? band_note(c) : std::move(lines[i]));
    }
}

// History context under the table, at most max_markdown_history_lines
// lines; empty when no gated counter has any. Only what argues against
// the change: an open alert, or a band the candidate left the worse way.
// Ungated counters (page faults, cache misses...) cannot change the
// verdict, and a faster candidate is no warning: their lines are in the
// collapsed details (markdown_details), not above them.
std::string markdown_history(const gate::report& r)
{
    std::string history;
    std::size_t history_rows = 0;
    for (const auto& b : r.benchmarks) {
        for (const auto& d : b.count_vs_time) {
            if (++history_rows <= max_markdown_history_lines)
                history += fmt::format("- ⚠️ {}: {}\n", md_text(b.name), md_text(disagreement_line(d)));
        }
        for (const auto& c : b.counters) {
            std::vector<std::string> shown, rest;
            split_history(c, shown, rest);
            for (const auto& line : shown) {
                if (++history_rows <= max_markdown_history_lines) {
                    history += fmt::format("- ⚠️ {} / {}: {}\n", md_text(b.name), md_text(c.name), md_text(line));
                }
            }
        }
    }
    if (history_rows > max_markdown_history_lines) {
        history += fmt::format("- … {} more: see the JSON report\n", history_rows - max_markdown_history_lines);
    }
    return history;
}

// Links to the CI run and the stored comparison, then opt.link_note;
// empty when none is set.
std::string markdown_links(const markdown_options& opt)
{
    std::string links;
    if (!opt.run_url.empty()) links += fmt::format("[CI run]({})", md_url(opt.run_url));
    if (!opt.comparison_url.empty()) {
        links += fmt::format("{}[stored comparison]({})", links.empty() ? "" : " · ", md_url(opt.comparison_url));
    }
    if (!opt.link_note.empty()) links += fmt::format("{}_{}_", links.empty() ? "" : " · ", md_text(opt.link_note));
    if (!links.empty()) links = "\n" + links + "\n";
    return links;
}

// One row of the details table: every statistic of one counter.
std::string markdown_detail_row(const benchmark_report& b, const counter_report& c)
{
    return fmt::format("| {} {} | {} | {} | {} | {} | {}/{} | {}/{} | {} → {} | {} | {} | {} | {} | {}{} |\n",
                       mark(c.state), to_string(c.state), md_text(b.name), md_text(c.name), c.gated ? "yes" : "no",
                       c.test ? to_string(*c.test) : "—", c.baseline.n, c.candidate.n,
                       c.baseline.cov ? fmt::format("{:.2f}%", *c.baseline.cov * 100) : "—",
                       c.candidate.cov ? fmt::format("{:.2f}%", *c.candidate.cov * 100) : "—",
                       md_text(display_value(c.baseline.median, c.unit)),
                       md_text(display_value(c.candidate.median, c.unit)), pct_str(c.delta_pct), p_str(c.p_value),
                       p_str(c.p_adjusted),
                       c.mde_pct && std::isfinite(*c.mde_pct) ? fmt::format("{:.2f}%", *c.mde_pct) : "—",
                       c.z_score ? fmt::format("{:+.2f}", *c.z_score) : "—", c.anomaly ? " ⚠️" : "");
}

// A counter's advice (noise_diagnosis::advice) in its pieces: the advice
// joins them with "; ", which also occurs inside a piece's parentheses.
std::vector<std::string> advice_pieces(std::string_view advice)
{
    std::vector<std::string> pieces;
    int depth = 0;
    std::size_t from = 0;
    for (std::size_t i = 0; i < advice.size(); ++i) {
        if (advice[i] == '(') ++depth;
        else if (advice[i] == ')' && depth > 0) --depth;
        else if (depth == 0 && advice.substr(i, 2) == "; ") {
            pieces.emplace_back(advice.substr(from, i - from));
            from = i + 2;
        }
    }
    if (from < advice.size()) pieces.emplace_back(advice.substr(from));
    return pieces;
}

// Each piece of advice once, with the counters it concerns, for the
// counters `which` picks: (advice, "BM / task-clock, BM / cycles").
template <class Pick>
std::vector<std::pair<std::string, std::string>> advice_of(const gate::report& r, Pick which)
{
    std::vector<std::pair<std::string, std::string>> pieces;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            if (!c.noise || c.noise->advice.empty() || !which(c)) continue;
            const std::string name = fmt::format("{} / {}", md_text(b.name), md_text(c.name));
            for (auto& piece : advice_pieces(c.noise->advice)) {
                auto it = std::find_if(pieces.begin(), pieces.end(), [&](const auto& p) { return p.first == piece; });
                if (it == pieces.end()) pieces.emplace_back(std::move(piece), name);
                else it->second += ", " + name;
            }
        }
    }
    return pieces;
}

// The advice as a list: "- the samples form separate groups: ... (BM / task-clock, BM / cycles)".
std::string advice_list(const std::vector<std::pair<std::string, std::string>>& pieces)
{
    std::string out;
    for (const auto& piece : pieces) out += fmt::format("- {} ({})\n", md_text(piece.first), piece.second);
    return out;
}

// Above the details when a gated counter is undecided: what would decide
// them, once for the report (gate::decide_report); empty otherwise. Each
// counter's own advice is listed in the details.
std::string markdown_decide(const gate::report& r)
{
    const auto decide = decide_report(r);
    return decide ? "\n**What would decide it**\n\n" + md_text(decide->advice) + "\n" : std::string();
}

// The advice lines a comment shows; the JSON report has every one.
constexpr std::size_t max_advice_lines = 10;

// Above the details when a stored qualification says this testbed cannot
// reach a gated counter's threshold (gate::report::advice): advice, never
// part of the verdict; at most max_advice_lines lines, then how many more;
// empty without advice.
std::string markdown_qualification_advice(const gate::report& r)
{
    if (r.advice.empty()) return {};
    std::string out = "\n**What this testbed can see** (advice from its qualification, not part of the verdict)\n\n";
    for (std::size_t i = 0; i < r.advice.size() && i < max_advice_lines; ++i)
        out += fmt::format("- ⚠️ {}\n", md_text(r.advice[i].message));
    if (r.advice.size() > max_advice_lines)
        out += fmt::format("- … and {} more (the JSON report's `advice` has every one)\n",
                           r.advice.size() - max_advice_lines);
    return out;
}

// The collapsed details, line by line (so that they can be cut to fit):
// every counter, then the noise diagnoses with each piece of advice once,
// then the history lines not shown above them.
std::vector<std::string> markdown_details(const gate::report& r)
{
    std::vector<std::string> details;
    details.push_back(
        "| status | benchmark | counter | gated | method | n (b/c) | CoV b/c | median b → c | Δ | p | p adj. | MDE | z |\n"
        "|---|---|---|:-:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) details.push_back(markdown_detail_row(b, c));
    }
    std::vector<std::string> noise;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            if (auto line = noise_facts(c); !line.empty()) {
                noise.push_back(fmt::format("- {} / {}: {}\n", md_text(b.name), md_text(c.name), md_text(line)));
            }
        }
    }
    if (!noise.empty()) {
        details.push_back("\n**Noise**\n\n");
        details.insert(details.end(), noise.begin(), noise.end());
        // Each piece of every counter's advice once (markdown_decide said
        // the report's, above the details).
        const auto advice = advice_of(r, [](const counter_report&) { return true; });
        if (!advice.empty()) details.push_back("\n**Advice**\n\n" + advice_list(advice));
    }
    std::vector<std::string> other;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            std::vector<std::string> shown, rest;
            split_history(c, shown, rest);
            for (const auto& line : rest)
                other.push_back(fmt::format("- {} / {}: {}\n", md_text(b.name), md_text(c.name), md_text(line)));
        }
    }
    if (!other.empty()) {
        details.push_back("\n**Other history** (ungated counters, and candidates outside the band the better way)\n\n");
        details.insert(details.end(), other.begin(), other.end());
    }
    return details;
}

// The warnings, each sentence once: the gate words a warning per counter
// as "BM/counter: sentence", and the same sentence for five counters is
// one line naming the five ("BM/a, BM/b: sentence"), in first-seen order.
std::vector<std::string> grouped_warnings(const std::vector<std::string>& warnings)
{
    std::vector<std::pair<std::string, std::string>> lines; // who (may be empty), sentence
    for (const auto& w : warnings) {
        const auto colon = w.find(": ");
        const bool per_name = colon != std::string::npos && w.find(' ') > colon;
        std::string who = per_name ? w.substr(0, colon) : std::string();
        std::string sentence = per_name ? w.substr(colon + 2) : w;
        auto it = std::find_if(lines.begin(), lines.end(),
                               [&](const auto& l) { return per_name && !l.first.empty() && l.second == sentence; });
        if (it == lines.end()) lines.emplace_back(std::move(who), std::move(sentence));
        else it->first += ", " + who;
    }
    std::vector<std::string> out;
    out.reserve(lines.size());
    for (const auto& l : lines) out.push_back(l.first.empty() ? l.second : l.first + ": " + l.second);
    return out;
}

// The end of the details: warnings, then the policy applied.
std::vector<std::string> markdown_footer(const gate::report& r)
{
    std::vector<std::string> tail;
    if (!r.warnings.empty()) {
        tail.push_back("\n**Warnings**\n\n");
        for (const auto& w : grouped_warnings(r.warnings)) tail.push_back(fmt::format("- {}\n", md_text(w)));
    }
    tail.push_back(fmt::format("\nPolicy: alpha {}, {} correction, threshold {}%, min {} samples, max CoV {}%.\n",
                               r.rules.alpha, to_string(r.rules.correction), r.rules.threshold_pct, r.rules.min_samples,
                               r.rules.max_cov * 100));
    return tail;
}

// body, then the collapsed details with as many of `lines` as keep the
// whole under max_chars (GitHub refuses comments over 65,536 characters),
// dropping lines from the end and saying so.
std::string with_collapsed_details(const std::string& body, const std::vector<std::string>& lines,
                                   std::size_t max_chars)
{
    const std::string open = "\n<details><summary>All counters, warnings and policy</summary>\n\n";
    const std::string close = "\n</details>\n";
    std::string inner;
    std::size_t dropped = 0;
    const std::string truncated_note_fmt = "\n_… {} more lines truncated to fit GitHub's comment limit; the JSON "
                                           "report has everything._\n";
    const std::size_t reserve = open.size() + close.size() + truncated_note_fmt.size() + 32;
    for (const auto& line : lines) {
        if (dropped == 0 && body.size() + inner.size() + line.size() + reserve <= max_chars) inner += line;
        else ++dropped;
    }
    if (dropped > 0) inner += fmt::format(fmt::runtime(truncated_note_fmt), dropped);
    return body + open + inner + close;
}

// Names listed per list (added, removed, failed) in a comment; the JSON
// report has them all.
constexpr std::size_t max_markdown_list_names = 20;

// The benchmarks that were not compared: added, removed, failed; empty when
// there are none.
std::string markdown_not_compared(const gate::report& r)
{
    std::string out;
    auto names = [](const std::vector<std::string>& all) {
        std::string listed;
        for (std::size_t i = 0; i < all.size() && i < max_markdown_list_names; ++i)
            listed += fmt::format("{}{}", i == 0 ? "" : ", ",
                                  md_text(all[i])); // escaped text: a code span would show the backslashes
        if (all.size() > max_markdown_list_names)
            listed += fmt::format(" and {} more", all.size() - max_markdown_list_names);
        return listed;
    };
    if (!r.added.empty()) out += fmt::format("- ➕ added (candidate only, not compared): {}\n", names(r.added));
    if (!r.removed.empty()) out += fmt::format("- ➖ removed (baseline only, not compared): {}\n", names(r.removed));
    for (std::size_t i = 0; i < r.failed.size() && i < max_markdown_list_names; ++i)
        out += fmt::format("- ❗ failed: {}\n", md_text(failed_line(r.failed[i])));
    if (r.failed.size() > max_markdown_list_names)
        out += fmt::format("- ❗ … {} more failed: see the JSON report\n", r.failed.size() - max_markdown_list_names);
    return out.empty() ? out : out + "\n";
}

// A suite's summary line and its overall geometric means.
std::string markdown_suite_summary(const gate::report& r)
{
    std::string out = fmt::format("**{}**\n\n", md_text(suite_line(r)));
    if (const auto overall = overall_geomeans(r); !overall.empty()) {
        out += "| overall: geometric mean of candidate/baseline medians (not gated) | ratio | Δ | benchmarks |\n"
               "|---|--:|--:|--:|\n";
        for (const auto& o : overall) {
            out += fmt::format("| {} ({} is better) | {:.4f} | {} | {} |\n", md_text(o.counter), to_string(o.direction),
                               o.ratio, ratio_pct(o.ratio), o.benchmarks);
        }
        out += "\n";
    }
    return out;
}

// Where the whole report is, for the lines that say what was left out.
std::string full_report_pointer(const markdown_options& opt)
{
    std::string where = "the JSON report (`--format json`, or the run's artifacts)";
    if (!opt.comparison_url.empty())
        where += fmt::format(" and the [stored comparison]({})", md_url(opt.comparison_url));
    return where;
}

// A suite's visible table: regressions first, then improvements, then
// inconclusive and insufficient rows, as many as fit in `budget`
// characters; the rows left out are counted in a line saying where the
// full report is. Unchanged rows are not in it (markdown_unchanged).
std::string markdown_suite_table(const gate::report& r, const markdown_options& opt, std::size_t budget)
{
    const status order[] = {status::regression, status::improvement, status::inconclusive};
    auto rank = [](status s) { return s == status::insufficient ? status::inconclusive : s; };
    std::string table(gated_table_head);
    std::size_t shown = 0, left_out = 0, regressions_left_out = 0;
    const std::size_t note_reserve = 400 + (opt.comparison_url.size() * 3);
    for (status want : order) {
        for (const auto& b : r.benchmarks) {
            for (const auto& c : b.counters) {
                if (!c.gated || rank(c.state) != want) continue;
                std::string row = markdown_gated_row(b, c);
                if (left_out == 0 && table.size() + row.size() + note_reserve <= budget) {
                    table += row;
                    ++shown;
                } else {
                    ++left_out;
                    regressions_left_out += c.state == status::regression;
                }
            }
        }
    }
    if (shown == 0 && left_out == 0) return "_No gated counter changed or was inconclusive._\n";
    if (left_out > 0) {
        table += fmt::format("\n_… {} more row{} ({} of them regressions) left out to fit GitHub's comment limit: "
                             "the full report is {}._\n",
                             left_out, left_out == 1 ? "" : "s", regressions_left_out, full_report_pointer(opt));
    }
    return table;
}

// A suite's unchanged gated rows, collapsed and counted, as many as fit in
// `budget` characters; empty when there are none.
std::string markdown_unchanged(const gate::report& r, const markdown_options& opt, std::size_t budget)
{
    std::vector<std::string> rows;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            if (c.gated && c.state == status::unchanged) rows.push_back(markdown_gated_row(b, c));
        }
    }
    if (rows.empty()) return {};
    std::string out = fmt::format("\n<details><summary>{} unchanged row{} of gated counters</summary>\n\n",
                                  grouped(static_cast<double>(rows.size())), rows.size() == 1 ? "" : "s");
    const std::string close = "\n</details>\n";
    const std::size_t note_reserve = 300 + (opt.comparison_url.size() * 3);
    std::string table(gated_table_head);
    std::size_t shown = 0;
    for (const auto& row : rows) {
        if (out.size() + table.size() + row.size() + close.size() + note_reserve > budget) break;
        table += row;
        ++shown;
    }
    if (shown > 0) out += table;
    if (shown < rows.size()) {
        out += fmt::format("\n_… {} unchanged row{} not listed: the full report is {}._\n", rows.size() - shown,
                           rows.size() - shown == 1 ? "" : "s", full_report_pointer(opt));
    }
    return out + close;
}

// The markdown of a suite (two or more benchmarks): what changed first, the
// rest collapsed and counted, everything cut to opt.max_chars.
std::string render_suite_markdown(const gate::report& r, const markdown_options& opt)
{
    const std::string head = markdown_head(r, opt);
    std::string body = head + markdown_suite_summary(r) + markdown_not_compared(r);
    std::string history = markdown_history(r);
    if (!history.empty()) history = "\n" + history;
    history += markdown_decide(r) + markdown_qualification_advice(r);
    const std::string links = markdown_links(opt);
    // What must follow the table: the unchanged rows' frame and count, the
    // history, the links, and the collapsed details' frame with its cut
    // note (with_collapsed_details).
    const std::size_t frame = 400 + 3 * opt.comparison_url.size();
    const std::size_t tail = history.size() + links.size() + 2 * frame;
    auto left = [&](const std::string& so_far) {
        return opt.max_chars > so_far.size() + tail ? opt.max_chars - so_far.size() - tail : 0;
    };
    body += markdown_suite_table(r, opt, left(body));
    // Unchanged rows get at most half of what is left; the details the rest.
    body += markdown_unchanged(r, opt, left(body) / 2 + frame);
    body += history + links;
    body += markdown_attributions(r, opt, opt.max_chars > body.size() ? (opt.max_chars - body.size()) / 2 : 0);
    std::vector<std::string> details = markdown_details(r);
    const std::vector<std::string> footer = markdown_footer(r);
    details.insert(details.end(), footer.begin(), footer.end());
    std::string out = with_collapsed_details(body, details, opt.max_chars);
    if (out.size() > opt.max_chars) {
        out = head + fmt::format("_The report is too large for a comment ({} characters); the full report is {}._\n",
                                 out.size(), full_report_pointer(opt));
    }
    return out;
}

} // namespace

std::string render_markdown(const gate::report& r, const markdown_options& opt)
{
    if (is_suite(r)) return render_suite_markdown(r, opt);
    const std::string head = markdown_head(r, opt);
    std::string table = markdown_not_compared(r) + markdown_gated_table(r);
    if (const std::string history = markdown_history(r); !history.empty()) table += "\n" + history;
    table += markdown_decide(r) + markdown_qualification_advice(r);

    std::string body = head + table + markdown_links(opt);
    // Attribution gets at most half of what the comment has left; the
    // counters' details get the rest.
    body += markdown_attributions(r, opt, opt.max_chars > body.size() ? (opt.max_chars - body.size()) / 2 : 0);
    std::vector<std::string> details = markdown_details(r);
    const std::vector<std::string> footer = markdown_footer(r);
    details.insert(details.end(), footer.begin(), footer.end());
    std::string out = with_collapsed_details(body, details, opt.max_chars);
    if (out.size() > opt.max_chars) {
        // The summary table alone is over the limit: keep the head and marker.
        out = head + fmt::format("_The report is too large for a comment ({} characters); the JSON report has "
                                 "everything._\n",
                                 out.size());
    }
    return out;
}

std::string markdown_literal(std::string_view s) { return md_text(s); }

} // namespace perfgate::report
