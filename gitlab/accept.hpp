// "Accept this regression" on GitLab (perfgate accept --gitlab,
// docs/gitlab.md "Accepting a regression"): a `/perfgate accept <reason>`
// merge request note, by a member whose access level is at least Developer
// (30, by default), turns the gate's commit status on the merge request's
// head to success, notes it in the sticky note and (with a server) stores it
// with the head's comparison. GitLab CI has no note trigger: the pipeline
// that runs this is given the note's id (PERFGATE_NOTE_ID, from a webhook
// relay or a manual pipeline), and everything else is read from GitLab.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gitlab/api.hpp"
#include "model/acceptance.hpp"

namespace perfgate::gitlab {

inline constexpr std::string_view accept_command = "/perfgate accept";
// GitLab's access levels (docs.gitlab.com/api/members, "Roles").
inline constexpr int developer_access = 30;
inline constexpr int maintainer_access = 40;

struct accept_options {
    std::string context = "perfgate";  // the gate's status name; keys the sticky note
    std::string note_id;               // the note asking (--note-id, PERFGATE_NOTE_ID)
    std::optional<std::string> mr_iid; // overrides CI_MERGE_REQUEST_IID
    int min_access_level = developer_access;
    std::optional<std::string> note_author; // the username the token writes as
    // Stores the acceptance on a perfgate server (head sha, username,
    // reason) before anything changes on GitLab; its errors propagate.
    std::function<std::pair<model::acceptance, std::string>(const std::string&, const std::string&, const std::string&)>
        store;
    retry_policy retry;
};

enum class accept_outcome { ignored, accepted, denied };

struct accept_result {
    accept_outcome outcome = accept_outcome::ignored;
    std::string why;
    std::string username;
    int access_level = 0;
    std::int64_t mr_iid = 0;
    std::string head_sha, reason;
    std::optional<model::acceptance> stored;
    bool status_posted = false, note_updated = false, reply_posted = false;
    std::vector<std::string> warnings;
};

// Reads the note (GET .../merge_requests/:iid/notes/:note_id): a system
// note, or one whose body does not start with accept_command followed by a
// blank or its end, is ignored (nothing else sent). Then GET
// /projects/:id/members/all/:author_id (inherited memberships count; a 404
// is no access): below min_access_level, a reply note and nothing else
// (denied). Else GET .../merge_requests/:iid for its head sha (now, not at
// note time), options.store, POST /projects/:id/statuses/:sha success
// "accepted by @user: reason", and the sticky note gets
// report::render_acceptance_note. Errors: "input.gitlab_env" (environment,
// or a project id, iid or note id that is not a number: no request sent),
// the gitlab.* errors, store's.
accept_result accept_regression(const accept_options& opt, std::ostream& log);

// A GitLab username (model::is_gitlab_username).
[[nodiscard]] bool is_username(std::string_view name);

} // namespace perfgate::gitlab
