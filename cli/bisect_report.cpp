#include "cli/bisect_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/acceptance.hpp"
#include "model/utf8.hpp"
#include "report/render.hpp"

namespace perfgate::cli {

using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(); }

json commit_json(const commit_info& c) { return json{{"sha", c.sha}, {"subject", c.subject}, {"author", c.author}}; }

std::string safe(std::string_view s) { return model::escape_for_terminal(s); }

std::string pct(const std::optional<double>& v) { return v ? fmt::format("{:+.2f}%", *v) : std::string("-"); }

std::string interval(const std::optional<std::pair<double, double>>& ci)
{
    return ci ? fmt::format("[{:+.2f}%, {:+.2f}%]", ci->first, ci->second) : std::string("-");
}

std::string headline(const bisect_result& r)
{
    if (r.status == "no_change")
        return fmt::format("no change on {} between {} and {}: nothing to bisect", r.counter, short_sha(r.good.sha),
                           short_sha(r.bad.sha));
    if (r.status == "found")
        return fmt::format("{} culprit{} for {} {:+.6g} ({} commits, {} measured, {} builds, {} executions)",
                           r.culprits.size(), r.culprits.size() == 1 ? "" : "s", r.counter, r.effect.estimate,
                           r.commits, r.measured_commits, r.builds, r.executions);
    return fmt::format("undecided: {} range(s) left for {} {:+.6g} ({} commits, {} measured, {} builds, {} "
                       "executions)",
                       r.open.size(), r.counter, r.effect.estimate, r.commits, r.measured_commits, r.builds,
                       r.executions);
}

std::string render_text(const bisect_result& r)
{
    std::string out = fmt::format("perfgate bisect: {}\n", headline(r));
    out += fmt::format("  good {} {}\n  bad  {} {}\n", short_sha(r.good.sha), safe(r.good.subject),
                       short_sha(r.bad.sha), safe(r.bad.subject));
    for (const auto& c : r.culprits) {
        out += fmt::format("\nculprit {} {}\n  author {}\n  share of the change {:.0f}%\n", c.commit.sha,
                           safe(c.commit.subject), safe(c.commit.author), 100 * c.share);
        for (const auto& e : c.effects) {
            out += fmt::format("  {:<16} {:>9} interval {}  ({})\n", safe(e.counter), pct(e.delta_pct),
                               interval(e.ci_pct), e.status);
        }
        if (c.attribution && c.attribution->callgrind) {
            out += "  functions (Ir, parent -> culprit):\n";
            for (const auto& f : c.attribution->callgrind->top) {
                out += fmt::format("    {:+14.0f}  {}\n", f.delta, safe(f.name));
            }
        }
    }
    for (const auto& o : r.open) {
        out += fmt::format("\nrange left ({}): after {} up to {} ({} commits)\n", o.why, short_sha(o.lo.sha),
                           short_sha(o.hi.sha), o.commits);
    }
    for (const auto& s : r.skipped) out += fmt::format("\nskipped {}: {}\n", short_sha(s.commit.sha), safe(s.why));
    out += "\nsteps:\n";
    for (const auto& s : r.steps) out += fmt::format("  {:<9} {}  {}\n", s.decision, short_sha(s.commit), safe(s.why));
    for (const auto& w : r.warnings) out += fmt::format("warning: {}\n", safe(w));
    return out;
}

std::string render_markdown(const bisect_result& r)
{
    std::string out = fmt::format("### perfgate bisect: {}\n\n", headline(r));
    if (!r.culprits.empty()) {
        out += "| culprit | subject | author | share | counter | change | interval |\n|---|---|---|---|---|---|---|\n";
        for (const auto& c : r.culprits) {
            for (const auto& e : c.effects) {
                out += fmt::format("| `{}` | {} | {} | {:.0f}% | {} | {} | {} |\n", short_sha(c.commit.sha),
                                   safe(c.commit.subject), safe(c.commit.author), 100 * c.share, safe(e.counter),
                                   pct(e.delta_pct), interval(e.ci_pct));
            }
        }
    }
    for (const auto& o : r.open)
        out += fmt::format("\nRange left ({}): after `{}` up to `{}` ({} commits).\n", o.why, short_sha(o.lo.sha),
                           short_sha(o.hi.sha), o.commits);
    if (!r.skipped.empty()) {
        out += "\nSkipped:\n";
        for (const auto& s : r.skipped) out += fmt::format("- `{}`: {}\n", short_sha(s.commit.sha), safe(s.why));
    }
    out += "\n<details><summary>Steps</summary>\n\n";
    for (const auto& s : r.steps) out += fmt::format("- {} `{}`: {}\n", s.decision, short_sha(s.commit), safe(s.why));
    out += "\n</details>\n";
    return out;
}

} // namespace

json reading_json(const gate::shift_reading& r)
{
    return json{{"estimate", r.estimate}, {"lower", r.lower}, {"upper", r.upper}};
}

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

json to_json(const bisect_result& r)
{
    json j{{"schema", "perfgate.bisect/v1"},
           {"status", r.status},
           {"good", commit_json(r.good)},
           {"bad", commit_json(r.bad)},
           {"backend", r.backend},
           {"counter", r.counter},
           {"commits", r.commits},
           {"effect", reading_json(r.effect)},
           {"builds", r.builds},
           {"measured_commits", r.measured_commits},
           {"executions", r.executions},
           {"warnings", r.warnings}};
    j["alert"] = r.alert ? json(*r.alert) : json();
    json culprits = json::array();
    for (const auto& c : r.culprits) {
        json effects = json::array();
        for (const auto& e : c.effects) {
            json ci = e.ci_pct ? json::array({e.ci_pct->first, e.ci_pct->second}) : json();
            effects.push_back(json{{"counter", e.counter},
                                   {"unit", e.unit},
                                   {"status", e.status},
                                   {"before", opt(e.before)},
                                   {"after", opt(e.after)},
                                   {"delta_pct", opt(e.delta_pct)},
                                   {"ci_pct", ci}});
        }
        json one = commit_json(c.commit);
        one["parent"] = c.parent;
        one["share"] = c.share;
        one["effects"] = effects;
        one["attribution"] = c.attribution ? report::to_json(*c.attribution) : json();
        culprits.push_back(one);
    }
    j["culprits"] = culprits;
    json open = json::array();
    for (const auto& o : r.open)
        open.push_back(
            json{{"after", commit_json(o.lo)}, {"up_to", commit_json(o.hi)}, {"commits", o.commits}, {"why", o.why}});
    j["open_ranges"] = open;
    json skipped = json::array();
    for (const auto& s : r.skipped) skipped.push_back(json{{"commit", commit_json(s.commit)}, {"why", s.why}});
    j["skipped"] = skipped;
    json steps = json::array();
    for (const auto& s : r.steps) {
        json one{{"lo", s.lo},         {"commit", s.commit},           {"hi", s.hi},  {"decision", s.decision},
                 {"effect", s.effect}, {"repetitions", s.repetitions}, {"why", s.why}};
        if (s.decision != "skipped") {
            one["from_good"] = reading_json(s.from_good);
            one["to_bad"] = reading_json(s.to_bad);
        }
        steps.push_back(one);
    }
    j["steps"] = steps;
    return j;
}

model::alert_culprit culprit_of(const bisect_result& r)
{
    model::alert_culprit k;
    k.status = model::parse_culprit_status(r.status).value_or(model::culprit_status::undecided);
    k.backend = r.backend;
    k.counter = r.counter;
    k.good_sha = r.good.sha;
    k.bad_sha = r.bad.sha;
    k.commits = static_cast<std::int64_t>(r.commits);
    k.steps = static_cast<std::int64_t>(r.steps.size());
    k.builds = static_cast<std::int64_t>(r.builds);
    // One clean line of at most max_culprit_text_bytes (the acceptance
    // reason's rule: control characters to spaces, cut with "...").
    static_assert(model::max_culprit_text_bytes == model::max_acceptance_reason_bytes);
    for (const auto& c : r.culprits) {
        if (k.culprits.size() == model::max_culprit_commits) break;
        model::culprit_commit m{c.commit.sha,
                                model::clean_acceptance_reason(c.commit.subject),
                                model::clean_acceptance_reason(c.commit.author),
                                c.share,
                                {}};
        for (const auto& e : c.effects) {
            if (!e.gated || m.effects.size() == model::max_culprit_effects) continue;
            m.effects.push_back({e.counter, e.unit, e.status, e.before, e.after, e.delta_pct,
                                 e.ci_pct ? std::optional(e.ci_pct->first) : std::nullopt,
                                 e.ci_pct ? std::optional(e.ci_pct->second) : std::nullopt});
        }
        k.culprits.push_back(std::move(m));
    }
    std::vector<std::string> lines;
    for (const auto& o : r.open) {
        lines.push_back(fmt::format("{}: after {} up to {} ({} commits)", o.why, short_sha(o.lo.sha),
                                    short_sha(o.hi.sha), o.commits));
    }
    for (const auto& s : r.skipped) lines.push_back(fmt::format("skipped {}: {}", short_sha(s.commit.sha), s.why));
    for (const auto& line : lines) {
        const std::string clean = model::clean_acceptance_reason(line);
        if (k.detail.size() + clean.size() + 1 > model::max_culprit_detail_bytes) break;
        if (!k.detail.empty()) k.detail += '\n';
        k.detail += clean;
    }
    return k;
}

std::string render_bisect(const bisect_result& r, report_format format)
{
    switch (format) {
    case report_format::json: return to_json(r).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    case report_format::markdown: return render_markdown(r);
    case report_format::text:
    case report_format::junit: break; // refused by perfgate bisect's --format
    }
    return render_text(r);
}

} // namespace perfgate::cli
