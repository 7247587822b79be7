// "Accept this regression" (perfgate accept, docs/github.md "Accepting a
// regression"): a `/perfgate accept <reason>` pull request comment, or the
// `perfgate-accept` label, by a user whose repository permission is write,
// maintain or admin, turns the gate's commit status on the PR head to
// success, notes the acceptance in the sticky comment and (with a server)
// stores it with the head's comparison.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "github/api.hpp"
#include "model/acceptance.hpp"

namespace perfgate::github {

// The comment command and the label.
inline constexpr std::string_view accept_command = "/perfgate accept";
inline constexpr std::string_view accept_label = "perfgate-accept";
// The reason an acceptance by label is stored with (a label carries none).
inline constexpr std::string_view label_reason = "label perfgate-accept";

struct accept_options {
    std::string context = "perfgate";      // the gate's status context; keys the sticky comment
    std::optional<std::string> event_path; // overrides GITHUB_EVENT_PATH
    std::optional<std::string> event_name; // overrides GITHUB_EVENT_NAME
    // The login the token comments as (github_options::comment_author).
    std::optional<std::string> comment_author;
    // Stores the acceptance on a perfgate server (the CLI's --server):
    // called with head sha, login and reason before anything changes on
    // GitHub, so that a commit without a comparison changes nothing. Its
    // errors propagate. Returns the acceptance and the comparison's URL.
    std::function<std::pair<model::acceptance, std::string>(const std::string&, const std::string&, const std::string&)>
        store;
    retry_policy retry;
};

enum class accept_outcome {
    ignored,  // not an acceptance request (another comment, label or action): nothing sent
    accepted, // status success, sticky comment noted, stored
    denied,   // the user may not accept: a reply comment, nothing else
};

struct accept_result {
    accept_outcome outcome = accept_outcome::ignored;
    std::string why;                       // ignored: why; denied: the reply's reason
    std::string login;                     // who asked
    std::string permission;                // their repository permission (admin, write, read, none)
    std::optional<std::int64_t> pr_number; // the pull request
    std::string head_sha;                  // its head, accepted
    std::string reason;                    // cleaned (model::clean_acceptance_reason)
    std::optional<model::acceptance> stored;
    bool status_posted = false, comment_updated = false, reply_posted = false;
    std::vector<std::string> warnings;
};

// Reads the event (GITHUB_EVENT_PATH / GITHUB_EVENT_NAME or the options)
// and acts on it:
//   issue_comment, action "created", on a pull request, whose body's first
//       line starts with accept_command (then a blank or the end): the rest
//       of the body is the reason; the commenter asks.
//   pull_request or pull_request_target, action "labeled", label
//       accept_label: the reason is label_reason; the sender asks.
//   anything else of those two events: ignored, nothing sent.
// Then: GET /repos/{o}/{r}/collaborators/{login}/permission (never the
// payload's author_association); "admin" or "write" (GitHub's `permission`,
// which reads maintain as write and triage as read) may accept. Anyone else
// gets a reply comment saying why, and nothing else changes (outcome
// denied). A writer: GET /repos/{o}/{r}/pulls/{n} for the head sha (now,
// not at event time), which must be the head the request was made on
// (issue 43, finding 6): a label's event names it (pull_request.head.sha); a
// comment's head must have a status of options.context created at or before
// comment.created_at (GET /repos/{o}/{r}/commits/{sha}/statuses): the verdict
// the commenter saw. Else a reply saying the head moved, nothing else
// (outcome denied). Then options.store, POST /repos/{o}/{r}/statuses/{sha}
// success "accepted by @login: reason" (cut to 140 characters) for
// options.context, and the sticky comment (comment_marker(context), ours)
// gets report::render_acceptance_note, replacing an earlier one; a PR
// without one gets a new comment carrying the marker.
// Errors: "input.github_env" (a variable missing), "input.github_event"
// (unreadable payload, an event other than issue_comment/pull_request(_
// target), a login that is not one, a comment without a GitHub created_at, a
// label event without its head sha), the github.* errors of github_api
// (an unknown pull request is "github.http" naming it), and store's.
// A failure to update the comment after the status is set is a warning.
accept_result accept_regression(const accept_options& opt, std::ostream& log);

// The reason of a comment body that asks to accept, cleaned; nullopt when
// the body does not start with accept_command followed by a blank or its end.
std::optional<std::string> accept_request_reason(std::string_view comment_body);

// The sticky comment body with note in place of an earlier acceptance note,
// or inserted after the line holding marker (at the top when none does).
std::string with_acceptance_note(std::string_view body, std::string_view marker, std::string_view note);

// The commit status description: "accepted by @login: reason", at most 140
// characters (GitHub's limit), cut on a character boundary with "...".
std::string acceptance_description(std::string_view login, std::string_view reason);

} // namespace perfgate::github
