#include "runner/baseline_ref.hpp"

#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "model/error.hpp"
#include "runner/process.hpp"

namespace perfgate::runner {

namespace {

constexpr std::chrono::milliseconds git_question_timeout{10000};

struct git_reply {
    bool ok = false;
    std::string out;     // stdout without the trailing newline
    std::string message; // stderr's last line, or why git could not run
};

git_reply git(const std::filesystem::path& repo, std::vector<std::string> args)
{
    spawn_options so;
    so.argv = {"git", "-C", repo.string()};
    so.argv.insert(so.argv.end(), args.begin(), args.end());
    so.capture_stdout = true;
    git_reply a;
    try {
        const auto res = run_process(so, git_question_timeout);
        a.ok = res.status.success();
        a.out = res.stdout_text;
        while (!a.out.empty() && (a.out.back() == '\n' || a.out.back() == '\r')) a.out.pop_back();
        a.message = res.stderr_tail.empty() ? res.status.describe() : res.stderr_tail.back();
    } catch (const error& e) {
        a.message = e.what(); // no git installed
    }
    return a;
}

bool is_shallow(const std::filesystem::path& repo)
{
    const auto a = git(repo, {"rev-parse", "--is-shallow-repository"});
    return a.ok && a.out == "true";
}

bool has_commit(const std::filesystem::path& repo, const std::string& sha)
{
    return git(repo, {"cat-file", "-e", sha + "^{commit}"}).ok;
}

// A full commit name: what goes into the report and the API paths.
bool is_commit_name(std::string_view s)
{
    return (s.size() == 40 || s.size() == 64) && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

[[noreturn]] void shallow(baseline_rule rule, const std::filesystem::path& repo, const std::string& what)
{
    throw error(errors::input_shallow_clone,
                fmt::format("baseline-ref {}: {} is a shallow clone and its history does not reach {}: check out "
                            "with `fetch-depth: 0` (actions/checkout), run `git fetch --unshallow`, or use "
                            "baseline-ref base-tip",
                            to_string(rule), repo.string(), what));
}

} // namespace

std::optional<baseline_rule> parse_baseline_rule(std::string_view s)
{
    if (s == "merge-base") return baseline_rule::merge_base;
    if (s == "base-tip") return baseline_rule::base_tip;
    if (s == "parent") return baseline_rule::parent;
    return std::nullopt;
}

std::string_view to_string(baseline_rule r)
{
    switch (r) {
    case baseline_rule::merge_base: return "merge-base";
    case baseline_rule::base_tip: return "base-tip";
    case baseline_rule::parent: return "parent";
    }
    return "merge-base";
}

std::string resolve_baseline_sha(baseline_rule rule, const std::string& head_sha, const std::string& base_tip,
                                 const std::filesystem::path& repo)
{
    const std::string_view name = to_string(rule);
    if (rule != baseline_rule::parent && base_tip.empty()) {
        throw error(errors::input_git, fmt::format("baseline-ref {}: the base branch's commit is unknown (no pull "
                                                   "request event, no --base-sha)",
                                                   name));
    }
    if (rule == baseline_rule::base_tip) return base_tip;
    if (head_sha.empty()) {
        throw error(errors::input_git, fmt::format("baseline-ref {}: the head commit is unknown", name));
    }
    const auto top = git(repo, {"rev-parse", "--git-dir"});
    if (!top.ok) {
        throw error(errors::input_git,
                    fmt::format("baseline-ref {}: {} is not a git repository ({}): name the candidate's checkout "
                                "with --repo (the action's repo input), or choose baseline-ref base-tip",
                                name, repo.string(), top.message));
    }
    for (const auto& sha : {head_sha, base_tip}) {
        if (sha.empty() || has_commit(repo, sha)) continue;
        if (is_shallow(repo)) shallow(rule, repo, fmt::format("commit {}", sha));
        throw error(errors::input_git,
                    fmt::format("baseline-ref {}: commit {} is not in {}: fetch it (git fetch origin {})", name, sha,
                                repo.string(), sha));
    }
    const bool merge_base = rule == baseline_rule::merge_base;
    const git_reply a = merge_base ? git(repo, {"merge-base", base_tip, head_sha})
                                   : git(repo, {"rev-parse", "--verify", "--quiet", head_sha + "^1^{commit}"});
    if (!a.ok) {
        const std::string what = merge_base ? fmt::format("the merge-base of {} and {}", base_tip, head_sha)
                                            : fmt::format("the parent of {}", head_sha);
        if (is_shallow(repo)) shallow(rule, repo, what);
        throw error(errors::input_git,
                    merge_base ? fmt::format("baseline-ref merge-base: {} and {} have no common ancestor in {}",
                                             base_tip, head_sha, repo.string())
                               : fmt::format("baseline-ref parent: {} has no parent (a root commit)", head_sha));
    }
    if (!is_commit_name(a.out)) {
        throw error(errors::input_git,
                    fmt::format("baseline-ref {}: git answered '{}', not a commit name", name, a.out));
    }
    return a.out;
}

std::string resolve_ref(const std::filesystem::path& repo, const std::string& rev)
{
    if (rev.empty() || rev.front() == '-') {
        throw error(errors::input_git, fmt::format("'{}' is not a branch or commit name", rev));
    }
    const auto a = git(repo, {"rev-parse", "--verify", "--quiet", rev + "^{commit}"});
    if (!a.ok || !is_commit_name(a.out)) {
        throw error(errors::input_git, fmt::format("{} has no branch or commit '{}': fetch it (git fetch origin {})",
                                                   repo.string(), rev, rev));
    }
    return a.out;
}

std::string checked_out_sha(const std::filesystem::path& dir)
{
    const auto a = git(dir, {"rev-parse", "--verify", "HEAD^{commit}"});
    if (!a.ok || !is_commit_name(a.out)) {
        throw error(errors::input_git,
                    fmt::format("{} is not a git checkout ({}): cannot tell which commit the baseline build is",
                                dir.string(), a.message));
    }
    return a.out;
}

} // namespace perfgate::runner
