// Which commit a pull request is measured against (docs/github.md#the-baseline):
//
//   merge-base  the newest commit the PR head shares with its base branch
//               (`git merge-base BASE_TIP HEAD`): what the PR changed and
//               nothing that landed on the base branch after it forked;
//   base-tip    the base branch's tip when the event fired
//               (pull_request.base.sha): the PR is also charged for, or
//               credited with, whatever landed there since it forked;
//   parent      the head's first parent (`git rev-parse HEAD^`): the last
//               commit of the PR alone.
//
// The baseline build is the workflow's: perfgate names the commit
// (`perfgate baseline`), checks that the baseline checkout is that commit
// (--baseline-dir), and records the rule and both commits in the report.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace perfgate::runner {

enum class baseline_rule { merge_base, base_tip, parent };

// "merge-base", "base-tip", "parent"; nullopt for anything else.
std::optional<baseline_rule> parse_baseline_rule(std::string_view s);
std::string_view to_string(baseline_rule r);

// The baseline commit of a head under a rule, from the git repository at
// repo (a work tree or a bare directory), as a full SHA. base_tip is
// needed by merge-base and base-tip. Errors name the rule, the commits and
// the fix:
//   "input.shallow_clone"  the history does not reach the merge-base or the
//                          parent and the clone is shallow (actions/checkout
//                          with fetch-depth: 0, or git fetch --unshallow);
//   "input.git"            not a git repository, a commit that is not in it,
//                          no common ancestor, a root commit's parent.
std::string resolve_baseline_sha(baseline_rule rule, const std::string& head_sha, const std::string& base_tip,
                                 const std::filesystem::path& repo);

// The commit a branch or other revision names in repo (`git rev-parse
// --verify REV^{commit}`); "input.git" naming it if there is none.
std::string resolve_ref(const std::filesystem::path& repo, const std::string& rev);

// The commit checked out in dir (`git rev-parse HEAD`); "input.git" if dir
// is no git work tree.
std::string checked_out_sha(const std::filesystem::path& dir);

} // namespace perfgate::runner
