// detail::service_impl::pairs_for (service::comparisons::pairs_for): what "compare base with head" means when base
// and head are run ids or git shas (the dashboard's compare page).
#include "service/service_impl.hpp"

#include <algorithm>
#include <charconv>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/error.hpp"
#include "store/runs.hpp"

namespace perfgate::service {

namespace {

using run_ref = store::run_ref;

// Commits a message names when a sha prefix is ambiguous.
constexpr std::size_t max_shown_commits = 3;
// Runs a message names when two refs have nothing in common.
constexpr std::size_t max_shown_runs = 3;

// What one side's ref stands for: one run (a run id), or the newest run of
// each (benchmark, testbed) of one commit, newest first.
struct resolved_ref {
    std::string_view side; // "base", "head"
    std::string shown;     // the ref, quoted and cut, for messages
    bool run_id = false;
    std::vector<run_ref> runs;
};

std::string shown_ref(std::string_view ref)
{
    constexpr std::size_t max_shown = 64;
    if (ref.size() <= max_shown) return fmt::format("'{}'", ref);
    return fmt::format("'{}...' ({} bytes)", ref.substr(0, max_shown), ref.size());
}

bool is_digits(std::string_view s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_hex(std::string_view s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    });
}

resolved_ref resolve_ref(const store::store& db, const std::string& project, std::string_view side,
                         std::string_view ref)
{
    resolved_ref out{side, shown_ref(ref), false, {}};
    std::string prefix(ref); // the sha prefix the ref stands for, if it is no run id
    if (is_digits(ref)) {
        std::int64_t id = 0;
        const auto [end, ec] = std::from_chars(ref.data(), ref.data() + ref.size(), id);
        auto run = ec == std::errc{} && end == ref.data() + ref.size() ? db.runs().find(project, id) : std::nullopt;
        if (run) {
            out.run_id = true;
            out.runs.push_back(std::move(*run));
            return out;
        }
        // One abbreviated sha in 27 is all decimal digits ((10/16)^7): a
        // number long enough to be a sha prefix that is no run's id is read
        // as a sha.
        if (ref.size() >= min_sha_prefix && ref.size() <= max_sha_prefix) out.runs = db.runs().by_sha(project, prefix);
        if (out.runs.empty()) {
            throw error(errors::compare_not_found,
                        fmt::format("{}: run {} not found in project '{}'", side, ref.substr(0, 64), project));
        }
    } else {
        if (ref.size() < min_sha_prefix || ref.size() > max_sha_prefix || !is_hex(ref)) {
            throw error(errors::compare_bad_ref,
                        fmt::format("{}: {} is neither a run id nor a git sha ({}-{} hex digits)", side, out.shown,
                                    min_sha_prefix, max_sha_prefix));
        }
        // git writes shas in lowercase; so do the runners that store them.
        std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                       [](char c) { return c >= 'A' && c <= 'F' ? static_cast<char>(c - 'A' + 'a') : c; });
        out.runs = db.runs().by_sha(project, prefix);
        if (out.runs.empty()) {
            throw error(errors::compare_not_found,
                        fmt::format("{}: no run of project '{}' has a git sha starting with '{}'", side, project,
                                    prefix));
        }
    }
    // Newest first, as runs_by_sha returns them.
    std::vector<std::string> commits;
    for (const auto& r : out.runs) {
        if (std::find(commits.begin(), commits.end(), r.git_sha) == commits.end()) commits.push_back(r.git_sha);
    }
    if (commits.size() > 1) {
        const std::size_t shown = std::min(commits.size(), max_shown_commits);
        const std::string more = commits.size() > shown ? fmt::format(" and {} more", commits.size() - shown) : "";
        throw error(errors::compare_ambiguous_ref,
                    fmt::format("{}: git sha prefix '{}' matches {} commits of project '{}': {}{}; give more digits",
                                side, prefix, commits.size(), project,
                                fmt::join(commits.begin(), commits.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                                more));
    }
    return out;
}

// "parse on ci-1, render on ci-2 and 3 more", for a message.
std::string describe(const std::vector<run_ref>& runs)
{
    std::string out;
    const std::size_t shown = std::min(runs.size(), max_shown_runs);
    for (std::size_t i = 0; i < shown; ++i) {
        if (i) out += ", ";
        out += fmt::format("{} on {}", runs[i].benchmark,
                           runs[i].testbed_name.empty() ? runs[i].testbed : runs[i].testbed_name);
    }
    if (runs.size() > shown) out += fmt::format(" and {} more", runs.size() - shown);
    return out;
}

std::vector<std::pair<std::int64_t, std::int64_t>> pair_refs(const resolved_ref& base, const resolved_ref& head)
{
    if (base.run_id && head.run_id) return {{base.runs.front().id, head.runs.front().id}};
    // One run per (benchmark, testbed) on each side: a run id is one run, a
    // commit's runs are the newest of each.
    std::map<std::pair<std::string_view, std::string_view>, std::int64_t> base_runs;
    for (const auto& r : base.runs)
        base_runs.emplace(std::pair{std::string_view(r.benchmark), std::string_view(r.testbed)}, r.id);
    // Head runs newest first: the first match of a benchmark is its newest
    // head run's testbed, and a gate takes each benchmark once.
    std::map<std::string_view, std::pair<std::int64_t, std::int64_t>> by_benchmark;
    for (const auto& h : head.runs) {
        auto it = base_runs.find({h.benchmark, h.testbed});
        if (it != base_runs.end()) by_benchmark.try_emplace(h.benchmark, it->second, h.id);
    }
    if (by_benchmark.empty()) {
        throw error(errors::compare_mismatch,
                    fmt::format("base {} and head {} have no benchmark measured on the same testbed: base has {}; "
                                "head has {}",
                                base.shown, head.shown, describe(base.runs), describe(head.runs)));
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    pairs.reserve(by_benchmark.size());
    for (const auto& [name, pair] : by_benchmark) pairs.push_back(pair);
    return pairs;
}

} // namespace

std::vector<std::pair<std::int64_t, std::int64_t>> detail::service_impl::pairs_for(const std::string& project,
                                                                                   std::string_view base_ref,
                                                                                   std::string_view head_ref) const
{
    require_project(project);
    const resolved_ref base = resolve_ref(db_, project, "base", base_ref);
    const resolved_ref head = resolve_ref(db_, project, "head", head_ref);
    return pair_refs(base, head);
}

} // namespace perfgate::service
