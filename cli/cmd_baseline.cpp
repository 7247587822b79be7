// `perfgate baseline`: names the commit a pull request is measured against
// (runner/baseline_ref.hpp, docs/github.md#the-baseline), so that a workflow
// checks out and builds that commit before `perfgate run`.
#include <fstream>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "model/error.hpp"
#include "runner/baseline_ref.hpp"
#include "runner/git_info.hpp"

namespace perfgate::cli {

namespace {

const command_spec baseline_command{
    "baseline",
    "[--baseline-ref merge-base|base-tip|parent] [--repo DIR] [--head SHA] [--base SHA|--base-branch BRANCH]",
    "Prints the commit the baseline build must be: the merge-base of the pull\n"
    "request's head and its base branch (default), the base branch's tip, or the\n"
    "head's parent. Inside a GitHub Actions pull_request job the head and the base\n"
    "come from the event; elsewhere from --head (default: HEAD) and --base or\n"
    "--base-branch. With GITHUB_OUTPUT set it also writes the outputs sha and rule.\n"
    "A shallow clone that lacks the history is exit 2 with the fix.",
    {
        {"baseline-ref", 0, true, false, "RULE", "merge-base (default), base-tip or parent"},
        {"repo", 0, true, false, "DIR", "git repository with the head's history (default: .)"},
        {"head", 0, true, false, "SHA", "the candidate's commit (default: the event's head, else HEAD)"},
        {"base", 0, true, false, "SHA", "the base branch's tip (default: the event's base)"},
        {"base-branch", 0, true, false, "BRANCH", "the base branch, resolved in --repo, when there is no event"},
    },
};

} // namespace

const command_spec& baseline_spec() { return baseline_command; }

int cmd_baseline(const argv_t& args)
{
    const auto parsed = parse_args(baseline_command, args);
    if (!parsed) return exit_pass;
    no_positional(*parsed);
    const std::string given = parsed->get("baseline-ref").value_or("merge-base");
    const auto rule = runner::parse_baseline_rule(given);
    if (!rule) {
        throw error(errors::usage_bad_value,
                    fmt::format("--baseline-ref '{}': expected merge-base, base-tip or parent", given));
    }
    const std::filesystem::path repo = parsed->get("repo").value_or(".");
    runner::git_overrides flags;
    flags.sha = parsed->get("head");
    flags.base_branch = parsed->get("base-branch");
    const auto git = runner::resolve_git_info(flags, runner::process_env(), repo);
    std::string tip = parsed->get("base").value_or(git.pr_base_sha);
    if (tip.empty() && *rule != runner::baseline_rule::parent) {
        if (!flags.base_branch) {
            throw error(errors::usage_missing_option,
                        fmt::format("--baseline-ref {} outside a pull request job needs --base or --base-branch",
                                    runner::to_string(*rule)));
        }
        tip = runner::resolve_ref(repo, *flags.base_branch);
    }
    std::string head = git.sha;
    if (head.empty() || flags.sha) head = runner::resolve_ref(repo, flags.sha.value_or("HEAD"));
    const std::string sha = runner::resolve_baseline_sha(*rule, head, tip, repo);
    std::cout << sha << "\n";
    if (const auto out_path = runner::process_env()("GITHUB_OUTPUT")) {
        std::ofstream out(*out_path, std::ios::app);
        out << "sha=" << sha << "\nrule=" << runner::to_string(*rule) << "\n";
        if (!out.flush()) throw error(errors::io_write, fmt::format("{}: write failed (GITHUB_OUTPUT)", *out_path));
    }
    return exit_pass;
}

} // namespace perfgate::cli
