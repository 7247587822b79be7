// render_markdown (report/render.hpp): GitHub-flavoured markdown for a PR
// comment or a job summary.
#include "report/render.hpp"

#include <cctype>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "gate/noise.hpp"
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
// `@` or `#` that starts a name or a number, between a scheme's `:` and its
// `//`, and after `www`.
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
        else if (ch == '&') out += "&amp;";
        else {
            if (backslashed.find(ch) != std::string_view::npos) out += '\\';
            out += ch;
            const bool mention = ch == '@' && alnum(next);
            const bool issue_ref = ch == '#' && std::isdigit(static_cast<unsigned char>(next)) != 0;
            const bool scheme = ch == ':' && s.substr(i + 1, 2) == "//";
            const bool www = (ch == 'w' || ch == 'W') && i >= 2 && (i < 3 || !alnum(s[i - 3])) && next == '.' &&
                             (s[i - 1] == 'w' || s[i - 1] == 'W') && (s[i - 2] == 'w' || s[i - 2] == 'W');
            if (mention || issue_ref || scheme || www) out += zero_width_space;
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
        out += fmt::format("**{}** — {}\n\n", md_text(benchmark), md_text(callgrind_heading(*cg)));
        if (cg->top.empty()) {
            out += "_No function's cost changed._\n\n";
        } else {
            out += "| function | before | after | Δ | share of the change |\n|---|--:|--:|--:|--:|\n";
            for (const auto& c : cg->top) {
                out += fmt::format("| {} | {} | {} | {} | {} |\n", md_text(short_name(c.name)), value_str(c.before),
                                   value_str(c.after), signed_count(c.delta), share_str(c.share));
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
                               md_text(c.kind), value_str(c.before), value_str(c.after),
                               signed_count(c.after - c.before), stack);
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

// The collapsed "Where did it come from" section: every benchmark with an
// attribution, as many as fit in `budget` characters.
std::string markdown_attributions(const gate::report& r, const markdown_options& opt, std::size_t budget)
{
    const std::string open = "\n<details><summary>Where did it come from</summary>\n\n";
    const std::string close = "</details>\n";
    std::string link;
    if (!opt.artifacts_url.empty()) {
        link = fmt::format("Raw profiles and flame graphs: {}[workflow artifacts]({}).\n\n",
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

// The heading: the sticky-comment marker (if any), the verdict and the counts.
// "Baseline: merge-base `1a2b3c4d5e6f` of base `...` and head `...`": which
// commit the candidate was measured against, by which rule (shas are
// checked hex by the runner; md_text keeps them literal anyway).
std::string baseline_line(const gate::baseline_choice& b)
{
    const auto short_sha = [](const std::string& s) { return md_text(s.substr(0, 12)); };
    std::string line = fmt::format("Baseline: **{}** `{}`", md_text(b.rule), short_sha(b.baseline_sha));
    if (b.rule == "merge-base" && !b.base_tip_sha.empty())
        line += fmt::format(" of base `{}`", short_sha(b.base_tip_sha));
    line += fmt::format(" · head `{}`", short_sha(b.head_sha));
    return line;
}

std::string markdown_head(const gate::report& r, const markdown_options& opt)
{
    std::string head;
    if (!opt.marker.empty()) head += opt.marker + "\n";
    head += fmt::format("### {} {}: **{}** — {}\n\n", verdict_mark(r.result), md_text(opt.title), to_string(r.result),
                        summary_counts(r));
    if (r.baseline) head += baseline_line(*r.baseline) + "\n\n";
    if (const std::string reused = reused_line(r); !reused.empty()) head += md_text(reused) + "\n\n";
    if (const std::string note = not_interleaved_note(r); !note.empty()) head += fmt::format("> {}\n\n", md_text(note));
    return head;
}

constexpr std::string_view gated_table_head =
    "| | benchmark | counter | baseline | candidate | Δ median | shift [CI] | p (adj.) |\n"
    "|:-:|---|---|--:|--:|--:|--:|--:|\n";

// One row of the visible table: a gated counter that has data.
std::string markdown_gated_row(const benchmark_report& b, const counter_report& c)
{
    return fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", mark(c.state), md_text(b.name), md_text(c.name),
                       md_text(value_str(c.baseline.median, c.unit)), md_text(value_str(c.candidate.median, c.unit)),
                       pct_str(c.delta_pct), c.shift_pct ? fmt::format("{} {}", pct_str(c.shift_pct), ci_str(c)) : "—",
                       p_str(c.p_adjusted));
}

// The visible table: one row per gated counter that has data.
std::string markdown_gated_table(const gate::report& r)
{
    std::string table(gated_table_head);
    std::size_t gated_rows = 0;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            // Unsupported counters cannot gate: they are listed in the details
            // and the warnings, not in the table of what was gated.
            if (!c.gated || c.state == status::unsupported) continue;
            ++gated_rows;
            table += markdown_gated_row(b, c);
        }
    }
    if (gated_rows == 0) return "_No gated counter had data._\n";
    return table;
}

// History context under the table, at most max_markdown_history_lines
// lines; empty when no gated counter has any. Ungated counters (page
// faults, cache misses...) cannot change the verdict: their lines are in
// the collapsed details (markdown_ungated_history), not above them.
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
            if (!c.gated) continue;
            for (const auto& line : history_lines(c)) {
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

// Links to the CI run and the stored comparison; empty when neither is set.
std::string markdown_links(const markdown_options& opt)
{
    std::string links;
    if (!opt.run_url.empty()) links += fmt::format("[CI run]({})", md_url(opt.run_url));
    if (!opt.comparison_url.empty()) {
        links += fmt::format("{}[stored comparison]({})", links.empty() ? "" : " · ", md_url(opt.comparison_url));
    }
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
                       value_str(c.baseline.median), md_text(value_str(c.candidate.median, c.unit)),
                       pct_str(c.delta_pct), p_str(c.p_value), p_str(c.p_adjusted),
                       c.mde_pct && std::isfinite(*c.mde_pct) ? fmt::format("{:.2f}%", *c.mde_pct) : "—",
                       c.z_score ? fmt::format("{:+.2f}", *c.z_score) : "—", c.anomaly ? " ⚠️" : "");
}

// The collapsed details, line by line (so that they can be cut to fit):
// every counter, then the noise diagnoses.
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
            if (auto line = noise_summary(c); !line.empty()) {
                noise.push_back(fmt::format("- {} / {}: {}\n", md_text(b.name), md_text(c.name), md_text(line)));
            }
        }
    }
    if (!noise.empty()) {
        details.push_back("\n**Noise**\n\n");
        details.insert(details.end(), noise.begin(), noise.end());
    }
    std::vector<std::string> ungated;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            if (c.gated) continue;
            for (const auto& line : history_lines(c))
                ungated.push_back(fmt::format("- {} / {}: {}\n", md_text(b.name), md_text(c.name), md_text(line)));
        }
    }
    if (!ungated.empty()) {
        details.push_back("\n**History of ungated counters**\n\n");
        details.insert(details.end(), ungated.begin(), ungated.end());
    }
    return details;
}

// The end of the details: warnings, then the policy applied.
std::vector<std::string> markdown_footer(const gate::report& r)
{
    std::vector<std::string> tail;
    if (!r.warnings.empty()) {
        tail.push_back("\n**Warnings**\n\n");
        for (const auto& w : r.warnings) tail.push_back(fmt::format("- {}\n", md_text(w)));
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
    std::string out = fmt::format("\n<details><summary>{} unchanged row{} of gated counters</summary>\n\n", rows.size(),
                                  rows.size() == 1 ? "" : "s");
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

} // namespace perfgate::report
