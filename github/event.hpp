// The event payload of a GitHub Actions job as publishing reads it: which
// pull request to comment on and which commit to mark (docs/github.md). The
// environment and the payload file are read by model/github_actions.hpp,
// the one reader runner/git_info.cpp uses too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/github_actions.hpp"

namespace perfgate::github {

// The GITHUB_* variables of the job (model/github_actions.hpp).
using model::github_env;

// Which payload to read, as what, and what to check it against.
struct event_source {
    std::string path;         // the payload: GITHUB_EVENT_PATH, or a saved one (--event FILE)
    std::string name;         // its event: GITHUB_EVENT_NAME, or --event-name
    bool saved = false;       // path is a saved payload, not this job's own event
    std::string repository;   // GITHUB_REPOSITORY: a workflow_run PR must be based here
    std::string api_url;      // GITHUB_API_URL: where pull_requests[].base.repo.url points
    std::string fallback_sha; // GITHUB_SHA, for events whose payload names no commit
};

// What the event says about the pull request (if any) and the commit to mark.
struct event_target {
    std::string event_name;                // the event the payload was read as
    std::optional<std::int64_t> pr_number; // the PR to comment on; none: no comment
    std::string head_sha;                  // the commit to mark; empty: no status
    std::vector<std::string> warnings;     // why a PR or a commit is missing, for the log
};

// Supported events (docs.github.com "Events that trigger workflows"; the
// payload shapes are GitHub's webhook schemas). The event NAME decides how
// the payload is read, never the payload's shape:
//   pull_request, pull_request_target  comment on pull_request.number, status
//       on pull_request.head.sha (GITHUB_SHA is the merge commit, or the base
//       branch's head for _target: never used).
//   workflow_run   status on workflow_run.head_sha; comment only on the entry
//       of workflow_run.pull_requests[] whose head.sha is that head_sha and
//       whose base repository is this one. GitHub lists every open PR whose
//       head branch matches, "not necessarily" the one that triggered the run,
//       including PRs in other repositories; for PRs from forks the list is
//       always empty (use the fork split: perfgate github --event). No match:
//       no comment and a warning saying why.
//   push           status on "after" (GITHUB_SHA when "after" is 000...0).
//   merge_group    status on merge_group.head_sha; no comment.
//   workflow_dispatch, schedule  status on GITHUB_SHA (the payload names no
//       commit; GITHUB_SHA is the head of the ref the run is for); no comment.
//   issue_comment  on a PR: comment on issue.number, but NO status, with a
//       warning: the payload names no commit, and GITHUB_SHA is the default
//       branch's head, not the PR's. On a plain issue: nothing, a warning.
//   anything else  nothing posted, a warning naming the event.
// A saved payload (saved = true) is read as pull_request when the job's own
// event is workflow_run and the payload has a pull_request object: that is
// the fork split (ci/examples/fork-publish.yml); otherwise as `name`
// (perfgate github --event-name overrides it).
// Errors: "input.github_event" naming the file (unreadable, not JSON, a
// pull_request event without pull_request.number, a workflow_run event
// without workflow_run).
event_target read_event(const event_source& source);

} // namespace perfgate::github
