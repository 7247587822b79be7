// `perfgate db prune`: removes what the history does not need from a store
// (store/prune.hpp), or with --dry-run says what would go; then gives the
// space back (store::maintenance::reclaim_space). The ages' syntax is
// parse_age's, shared with `perfgate project --retention`.
#include "cli/retention.hpp"

#include "model/error.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/store.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <iostream>
#include <optional>

namespace perfgate::cli {

std::int64_t parse_age(std::string_view option, const std::string& text)
{
    const auto bad = [&](std::string_view why) {
        return error(errors::usage_bad_value, fmt::format("--{} '{}': {}", option, text.substr(0, 64), why));
    };
    constexpr std::string_view syntax = "expected a whole number of hours, days or weeks (12h, 90d, 2w)";
    if (text.size() < 2) throw bad(syntax);
    std::int64_t n = 0;
    const char* end = text.data() + text.size() - 1;
    const auto [p, ec] = std::from_chars(text.data(), end, n);
    if (ec != std::errc{} || p != end || n <= 0 || text.front() == '+') throw bad(syntax);
    std::int64_t unit = 0;
    switch (text.back()) {
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    case 'w': unit = 7 * 86400; break;
    default: throw bad(syntax);
    }
    if (n > store::prune_rules::max_age_s / unit || n * unit > store::prune_rules::max_age_s ||
        n * unit < store::prune_rules::min_age_s) {
        throw bad("an age is at least 1 day (24h, 1d) and at most 36500 days");
    }
    return n * unit;
}

std::string age_text(std::int64_t seconds)
{
    if (seconds % (7 * 86400) == 0) return fmt::format("{}w", seconds / (7 * 86400));
    if (seconds % 86400 == 0) return fmt::format("{}d", seconds / 86400);
    if (seconds % 3600 == 0) return fmt::format("{}h", seconds / 3600);
    return fmt::format("{}s", seconds);
}

namespace {

void print_counts(const store::prune_counts& n)
{
    std::cout << fmt::format("{:<14} {:>12} {:>16}\n", "kind", "rows", "bytes");
    const auto line = [](std::string_view kind, const store::prune_tally& t) {
        std::cout << fmt::format("{:<14} {:>12} {:>16}\n", kind, t.rows, t.bytes);
    };
    line("runs", n.runs);
    line("samples", n.samples);
    line("summaries", n.summaries);
    line("change_points", n.change_points);
    line("comparisons", n.comparisons);
    line("flame_graphs", n.flame_graphs);
    line("attributions", n.attributions);
    line("ingest_keys", n.ingest_keys);
    std::cout << fmt::format("{:<14} {:>12} {:>16}\n", "total", "", n.bytes());
    std::cout << fmt::format("thinned series points {} (of the runs)\n", n.thinned);
}

} // namespace

int db_prune(const parsed_args& parsed)
{
    const std::string where = parsed.required("db");
    const auto older = parsed.get("older-than");
    if (!older) throw error(errors::usage_missing_option, "perfgate db prune: --older-than AGE is required (90d)");
    store::prune_rules rules;
    rules.older_than_s = parse_age("older-than", *older);
    if (const auto thin = parsed.get("thin-after")) {
        rules.thin_after_s = parse_age("thin-after", *thin);
        if (*rules.thin_after_s < rules.older_than_s) {
            throw error(errors::usage_conflict,
                        fmt::format("--thin-after {} is below --older-than {}: the runs that feed a series are "
                                    "thinned no sooner than the others are removed",
                                    *thin, *older));
        }
    }
    const bool dry_run = parsed.has("dry-run");
    const bool vacuum = parsed.has("vacuum");
    if (dry_run && vacuum) throw error(errors::usage_conflict, "--vacuum changes the file; --dry-run changes nothing");
    if (vacuum && store::is_postgres(where)) {
        throw error(errors::usage_unsupported,
                    "--vacuum rewrites a SQLite file; on PostgreSQL use pg_repack or VACUUM FULL "
                    "(docs/deployment.md, \"Retention\")");
    }
    const auto project = parsed.get("project");

    store::store db(where);
    if (project && !db.projects().exists(*project)) {
        throw error(errors::input_unknown_project, fmt::format("{}: no project '{}'", db.location(), *project));
    }
    const auto report = db.maintenance().prune(project ? std::optional<std::string_view>(*project) : std::nullopt,
                                               rules, dry_run);
    std::cout << fmt::format(
        "perfgate db prune: {} ({}): {} older than {}{}, project{} {}\n", dry_run ? "would remove" : "removed",
        db.location(), "runs that feed no series", age_text(rules.older_than_s),
        rules.thin_after_s ? fmt::format("; series thinned to a point a day past {}", age_text(*rules.thin_after_s))
                           : std::string(),
        report.projects.size() == 1 ? "" : "s",
        report.projects.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(report.projects, ", ")));
    print_counts(report.removed);
    if (!dry_run) {
        const auto space = db.maintenance().reclaim_space(vacuum);
        std::string how;
        if (db.engine() == "postgresql") how = "VACUUM: the space is reused by new rows";
        else if (space.vacuumed) how = "VACUUM: the file was rewritten, and frees space on later prunes";
        else if (space.incremental) how = "incremental vacuum";
        else
            how = fmt::format("{} free pages kept for reuse by new rows: the file does not free pages itself; "
                              "--vacuum rewrites it once so that it does",
                              space.free_pages_before);
        std::cout << fmt::format("database size {} -> {} bytes ({})\n", space.size_before, space.size_after, how);
    }
    std::cout.flush();
    return exit_pass;
}

} // namespace perfgate::cli
