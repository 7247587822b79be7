// Which commit a run measured: git SHA, branch and pull request, taken from
// (in order) explicit flags, the GitHub Actions environment, or `git` in the
// working directory.
//
// GitHub Actions (docs.github.com, "Variables" and "Events that trigger
// workflows"): on pull_request events GITHUB_SHA is the test merge commit and
// GITHUB_REF_NAME is "<n>/merge", so the head commit comes from the event
// payload (pull_request.head.sha) and the branch from GITHUB_HEAD_REF; the
// base side from pull_request.base.sha and GITHUB_BASE_REF.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "model/github_actions.hpp"

namespace perfgate::runner {

struct git_info {
    std::string sha, branch; // the candidate's commit
    std::optional<std::int64_t> pr;
    // The baseline's commit when it differs (a PR's base); empty: same as above.
    std::string base_sha, base_branch;
    std::string source; // "flags", "github", "git", "none": for messages
};

struct git_overrides {
    std::optional<std::string> sha, branch, base_branch;
    std::optional<std::int64_t> pr;
};

// Looks up an environment variable; nullopt when unset or empty. The
// GITHUB_* variables and the event file are read by model/github_actions.hpp,
// as github/ reads them.
using model::env_lookup;
using model::process_env;

// Flags > GitHub Actions environment (when GITHUB_ACTIONS=true) > `git
// rev-parse` in cwd. Missing pieces stay empty: not being in a git checkout
// is not an error. A GITHUB_EVENT_PATH that cannot be read or parsed is
// "input.bad_event" naming the file.
git_info resolve_git_info(const git_overrides& flags, const env_lookup& env, const std::filesystem::path& cwd);

} // namespace perfgate::runner
