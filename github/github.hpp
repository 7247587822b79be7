// Publishing a report to GitHub from an Actions job: sticky PR comment,
// commit status, job summary, step outputs and annotations (docs/github.md).
// Uses only the standard Actions environment; tests point
// GITHUB_API_URL at a local fake (tests/fake_github.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/report.hpp"

namespace perfgate::github {

// The default environment variables of a GitHub Actions job
// (docs.github.com/actions/learn-github-actions/variables). Empty when unset.
struct github_env {
    std::string api_url;       // GITHUB_API_URL
    std::string server_url;    // GITHUB_SERVER_URL
    std::string repository;    // GITHUB_REPOSITORY, "owner/name"
    std::string event_name;    // GITHUB_EVENT_NAME
    std::string event_path;    // GITHUB_EVENT_PATH
    std::string token;         // GITHUB_TOKEN (the workflow passes it via env:)
    std::string sha;           // GITHUB_SHA (the merge commit on pull_request)
    std::string run_id;        // GITHUB_RUN_ID
    std::string step_summary;  // GITHUB_STEP_SUMMARY
    std::string output;        // GITHUB_OUTPUT

    static github_env from_environment();
    // SERVER/REPOSITORY/actions/runs/RUN_ID, or "" when any part is missing.
    [[nodiscard]] std::string run_url() const;
};

// Which payload to read, as what, and what to check it against.
struct event_source {
    std::string path;          // the payload: GITHUB_EVENT_PATH, or a saved one (--event FILE)
    std::string name;          // its event: GITHUB_EVENT_NAME, or --event-name
    bool saved = false;        // path is a saved payload, not this job's own event
    std::string repository;    // GITHUB_REPOSITORY: a workflow_run PR must be based here
    std::string api_url;       // GITHUB_API_URL: where pull_requests[].base.repo.url points
    std::string fallback_sha;  // GITHUB_SHA, for events whose payload names no commit
};

// What the event says about the pull request (if any) and the commit to mark.
struct event_target {
    std::string event_name;                 // the event the payload was read as
    std::optional<std::int64_t> pr_number;  // the PR to comment on; none: no comment
    std::string head_sha;                   // the commit to mark; empty: no status
    std::vector<std::string> warnings;      // why a PR or a commit is missing, for the log
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

// Retry rules for the API. Transport failures and 5xx back off exponentially
// from `backoff`. Rate limits (a 429, or a 403 whose message says "rate
// limit" or with x-ratelimit-remaining: 0) wait as GitHub says: retry-after
// (seconds or an HTTP date), else until x-ratelimit-reset when the primary
// limit is spent, else (a secondary limit) at least one minute, doubling on
// each further secondary limit. All waits of one call together stay within
// max_wait: a wait that does not fit gives up ("github.rate_limited").
struct retry_policy {
    int max_attempts = 4;
    std::chrono::milliseconds backoff{1000};
    // One minute, then two, for a secondary limit (GitHub's advice, above)
    // fits; a CI job does not wait longer than three minutes for a comment.
    std::chrono::milliseconds max_wait{180000};
    std::chrono::milliseconds timeout{30000};   // per request
    // How to wait; tests record instead of sleeping. Default: sleep_for.
    std::function<void(std::chrono::milliseconds)> sleep;
    // The wall clock, for x-ratelimit-reset and an HTTP-date retry-after.
    // Default: system_clock::now.
    std::function<std::chrono::system_clock::time_point()> now;
};

// Whether a failed request may be sent again by github_api::call.
enum class replay {
    allowed,    // idempotent, or harmless twice (GET, PATCH, a commit status)
    forbidden,  // may have taken effect although the answer was lost (creating a
                // comment): a transport failure or 5xx is thrown at once, for the
                // caller to check what landed. Rate limits are still waited out:
                // GitHub refused those requests.
};

// A minimal GitHub REST client (API version 2022-11-28).
// Errors (perfgate::error): "github.unreachable" (transport, after retries),
// "github.server_error" (5xx, after retries), "github.forbidden" (403
// "Resource not accessible by integration", with a hint about the missing
// permission `permission`), "github.rate_limited" (a wait beyond max_wait or
// retries exhausted), "github.http" (any other non-2xx, with GitHub's
// message), "github.bad_response" (not JSON).
class github_api {
public:
    github_api(std::string api_url, std::string token, retry_policy retry = {});

    // path_or_url: "/repos/o/r/..." relative to the API URL, or an absolute
    // URL (a Link header's). next_url receives rel="next" from Link, if any.
    nlohmann::json call(std::string_view method, const std::string& path_or_url,
                        const nlohmann::json* body = nullptr, std::string* next_url = nullptr,
                        std::string_view permission = {}, replay mode = replay::allowed);

    // The policy in use, with sleep and now filled in.
    [[nodiscard]] const retry_policy& policy() const { return retry_; }

private:
    std::string api_url_, token_;
    retry_policy retry_;
};

// Comment modes of `--comment` and the action's `comment` input.
inline constexpr std::string_view comment_modes[] = {"always", "on-change", "on-regression", "never"};
[[nodiscard]] bool is_comment_mode(std::string_view mode);

struct github_options {
    std::string comment = "always";   // always | on-change | on-regression | never
    std::string context = "perfgate"; // commit status context; also keys the sticky comment
    std::optional<std::string> comparison_url;
    bool fail_on_regression = true, fail_on_inconclusive = false;
    std::string report_path;                // the report-path output
    std::optional<std::string> event_path;  // overrides GITHUB_EVENT_PATH (fork split artifact)
    std::optional<std::string> event_name;  // overrides GITHUB_EVENT_NAME (see read_event)
    // Whose comment is ours: the login the token comments as. Default: GET
    // /user for personal tokens; "github-actions[bot]" for installation
    // tokens (ghs_), which cannot call /user. Another GitHub App's token
    // comments as "<app-slug>[bot]" and must say so here.
    std::optional<std::string> comment_author;
    // The workflow artifact holding `perfgate run --artifacts DIR` (raw
    // profiles, flame graphs), uploaded by this run: the attribution section
    // links the run's artifacts (run_url() + "#artifacts") and names it.
    std::optional<std::string> artifact_name;
    // Missing environment is an "input.github_env" error instead of a warning
    // (`perfgate github`, whose only job is publishing).
    bool require_environment = false;
    retry_policy retry;
};

// The event_source of this job: the environment, with --event and
// --event-name (github_options::event_path / event_name) applied.
event_source event_source_for(const github_env& env, const github_options& opt);

struct github_result {
    bool comment_posted = false, status_posted = false;
    std::optional<std::int64_t> comment_id;
    std::vector<std::string> warnings;
};

// The hidden marker that identifies perfgate's sticky comment for a context.
std::string comment_marker(std::string_view context);

// Publishes the report: first the job summary, step outputs and annotations
// (local files; the verdict is never lost), then the sticky comment and the
// commit status, as the event allows (read_event). The sticky comment is the
// one carrying comment_marker(context) written by our own login
// (comment_author); comments of other users and other apps, even quoting the
// marker, are never edited. A comment POST whose answer is lost (timeout,
// 5xx) is not simply sent again: the comments are listed first, and one that
// landed is updated instead. Network and GitHub failures never throw: they become
// warnings (in the result and as ::warning lines on `log`). Throws only for
// bad options ("usage.bad_value") and, with require_environment, for a
// missing environment or event ("input.github_env", "input.github_event").
// `log` receives workflow commands (::error/::warning): pass std::cout in
// Actions, where the runner reads them from stdout.
github_result publish_to_github(const gate::report& r, int exit_code, const github_options& opt, std::ostream& log);

// Workflow-command escaping (actions/toolkit core/src/command.ts): data
// escapes % CR LF; property values also : and ,.
std::string escape_command_data(std::string_view s);
std::string escape_command_property(std::string_view s);

// Commit status state for an exit code (cli.hpp): 0 success; 1 and 3 failure;
// anything else (usage, measurement) error.
std::string_view status_state(int exit_code);

} // namespace perfgate::github
