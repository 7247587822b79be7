// Publishing a report to GitLab from a CI job (docs/gitlab.md): one sticky
// merge request note, a commit status, and the summary in the job log.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gate/report.hpp"
#include "gitlab/api.hpp"
#include "model/gitlab_ci.hpp"

namespace perfgate::gitlab {

using model::gitlab_env;

// GitLab's limits: a note body holds at most 1,000,000 characters
// (docs.gitlab.com/api/notes: "Body of the note, limited to 1,000,000
// characters"). A commit status description has no documented limit; it is
// cut at 255 characters, the length of a Rails string column, so that no
// instance refuses it.
inline constexpr std::size_t note_limit = 1000000;
inline constexpr std::size_t status_description_limit = 255;

struct gitlab_options {
    std::string comment = "always";   // always | on-change | on-regression | never
    std::string context = "perfgate"; // the commit status `name`; also keys the sticky note
    std::optional<std::string> comparison_url;
    bool fail_on_regression = true, fail_on_inconclusive = false;
    // Whose note is ours: the username the token writes as. Default: GET /user.
    std::optional<std::string> note_author;
    // Missing environment is an "input.gitlab_env" error instead of a
    // warning (`perfgate gitlab`, whose only job is publishing).
    bool require_environment = false;
    retry_policy retry;
};

struct gitlab_result {
    bool note_posted = false, status_posted = false;
    std::optional<std::int64_t> note_id;
    std::string sha; // the commit the status was posted on
    std::vector<std::string> warnings;
};

// The hidden marker of perfgate's sticky note for a context.
std::string note_marker(std::string_view context);

// The commit status state for an exit code: 0 success, anything else failed
// (GitLab's states are pending, running, success, failed, canceled).
std::string_view status_state(int exit_code);

// What the job is about: the merge request (CI_MERGE_REQUEST_IID) and the
// commit to mark (CI_MERGE_REQUEST_SOURCE_BRANCH_SHA in a merged results
// pipeline, else CI_COMMIT_SHA), each checked before it can enter an API
// path: "input.gitlab_env" for a project id or iid that is not a positive
// number, a sha that is not 40 or 64 lowercase hex digits, or missing
// CI_API_V4_URL / CI_SERVER_URL, CI_PROJECT_ID or CI_COMMIT_SHA.
struct gitlab_target {
    std::string project_id;
    std::optional<std::int64_t> mr_iid;
    std::string sha;
};
gitlab_target read_target(const gitlab_env& env);

// Publishes: the summary to `log` first (the verdict is never lost), then
// the sticky note (the MR's note carrying note_marker(context) written by
// our own username, edited in place; a POST whose answer is lost is looked
// for before it is sent again) and the commit status. Network and GitLab
// failures never throw: they become warnings, and so does a missing
// PERFGATE_GITLAB_TOKEN (a fork's merge request pipeline has none). Throws
// only for bad options and, with require_environment, for the environment
// (read_target).
gitlab_result publish_to_gitlab(const gate::report& r, int exit_code, const gitlab_options& opt, std::ostream& log);

namespace detail {
// The username the token writes as (GET /user), or note_author.
std::string own_username(gitlab_api& api, const std::optional<std::string>& note_author);
// The first note of the MR carrying marker written by `self`: its id and body.
std::optional<std::pair<std::int64_t, std::string>> find_own_note(gitlab_api& api, const std::string& project,
                                                                  std::int64_t iid, const std::string& marker,
                                                                  const std::string& self);
// Cuts s to max_chars characters (never inside a UTF-8 sequence), ending "..." when cut.
std::string cut(std::string_view s, std::size_t max_chars);
std::size_t utf8_length(std::string_view s);
} // namespace detail

} // namespace perfgate::gitlab
