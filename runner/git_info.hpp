// Which commit a run measured: git SHA, branch and pull request, taken from
// (in order) explicit flags, the GitHub Actions environment, or `git` in the
// working directory.
//
// GitHub Actions (docs.github.com, "Variables" and "Events that trigger
// workflows"): on pull_request events GITHUB_SHA is the test merge commit and
// GITHUB_REF_NAME is "<n>/merge", so the head commit comes from the event
// payload (pull_request.head.sha) and the branch from GITHUB_HEAD_REF; the
// base side from pull_request.base.sha and GITHUB_BASE_REF. On push events
// the baseline is the commit the branch pointed to before the push (the
// payload's `before`, what ci/examples/push-baseline.yml checks out and
// builds as the baseline), unless it is the null SHA of a new branch.
//
// GitLab CI (GITLAB_CI=true, model/gitlab_ci.hpp, docs/gitlab.md): a merge
// request pipeline's head is CI_MERGE_REQUEST_SOURCE_BRANCH_SHA (merged
// results pipelines) or CI_COMMIT_SHA, its base CI_MERGE_REQUEST_DIFF_BASE_SHA
// (the merge base) on CI_MERGE_REQUEST_TARGET_BRANCH_NAME, its number
// CI_MERGE_REQUEST_IID; a push pipeline's base is CI_COMMIT_BEFORE_SHA.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "gate/report.hpp"
#include "model/github_actions.hpp"
#include "model/gitlab_ci.hpp"

namespace perfgate::runner {

struct git_info {
    std::string sha, branch; // the candidate's commit
    std::optional<std::int64_t> pr;
    // The baseline's commit: --base-sha, a PR's base, a push's `before`.
    // Empty: unknown. The baseline build is the caller's, so perfgate never
    // guesses it (it is not the candidate's commit). base_branch empty: the
    // candidate's branch.
    std::string base_sha, base_branch;
    // A pull request event's base commit (pull_request.base.sha: the base
    // branch's tip when the event fired), whatever --base-sha says; empty
    // outside a pull request.
    std::string pr_base_sha;
    // Set once a baseline rule named base_sha (runner/baseline_ref.hpp).
    std::optional<gate::baseline_choice> baseline;
    std::string source; // "flags", "github", "gitlab", "git", "none": for messages
    // GITHUB_EVENT_NAME inside GitHub Actions ("push", "pull_request", ...),
    // CI_PIPELINE_SOURCE inside GitLab CI ("push", "merge_request_event",
    // ...); empty outside CI.
    std::string event;
    bool actions = false; // GITHUB_ACTIONS=true or GITLAB_CI=true
};

struct git_overrides {
    std::optional<std::string> sha, branch, base_sha, base_branch;
    std::optional<std::int64_t> pr;
};

// Looks up an environment variable; nullopt when unset or empty. The
// GITHUB_* variables and the event file are read by model/github_actions.hpp,
// as github/ reads them.
using model::env_lookup;
using model::process_env;

// The all-zero SHA GitHub sends as `before` when a push creates a branch:
// no commit. resolve_git_info drops it wherever it comes from.
bool is_null_sha(const std::string& sha);

// Flags > GitHub Actions environment (when GITHUB_ACTIONS=true) > GitLab CI
// environment (when GITLAB_CI=true) > `git
// rev-parse` in cwd. Missing pieces stay empty: not being in a git checkout
// is not an error. A GITHUB_EVENT_PATH that cannot be read or parsed is
// "input.bad_event" naming the file.
git_info resolve_git_info(const git_overrides& flags, const env_lookup& env, const std::filesystem::path& cwd);

// Which run of one perfgate run feeds its branch's series, watch, band,
// alerts and baseline reuse (model::run_record::mainline; docs/history.md
// "Which runs feed the series").
enum class mainline_side { none, baseline, candidate };
// asked: --mainline (true: the candidate) or --no-mainline (false: none);
// nullopt, the default: inside GitHub Actions or GitLab CI the candidate of a push event
// (the pushed head is the branch's new point) and none for any other event
// (a pull request's runs never feed a series); outside Actions the baseline
// of a run without a pull request whose baseline is on the candidate's
// branch (what fed the series before), else none. A pull request's run is
// never mainline, whatever asked says (cmd_run refuses --mainline there).
// A run without a branch (outside a git checkout) feeds the history read
// without a branch (the z-score's, the first look's), never a watched one.
mainline_side mainline_side_of(const git_info& git, std::optional<bool> asked);

} // namespace perfgate::runner
