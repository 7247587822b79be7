// Publishing a report to GitHub from an Actions job: sticky PR comment,
// commit status, job summary, step outputs and annotations (design.md §4
// "GitHub"). Uses only the standard Actions environment; tests point
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

// What the event says about the pull request (if any) and the commit to mark.
struct event_target {
    std::optional<std::int64_t> pr_number;
    std::string head_sha;   // pull_request.head.sha; for other events the pushed commit
};
// Reads an event payload: pull_request / pull_request_target -> number and
// head.sha; workflow_run -> its head_sha and first pull request; push ->
// "after". fallback_sha (GITHUB_SHA) when the payload names no commit.
// Errors: "input.github_event" naming the file (unreadable, not JSON).
event_target read_event(const std::string& path, const std::string& fallback_sha);

// Retry rules for the API: 5xx and transport failures back off exponentially
// from `backoff`; 403/429 with retry-after or an exhausted rate limit wait as
// told, but never longer than max_wait (a longer wait gives up).
struct retry_policy {
    int max_attempts = 4;
    std::chrono::milliseconds backoff{1000};
    std::chrono::milliseconds max_wait{60000};
    std::chrono::milliseconds timeout{30000};   // per request
    // How to wait; tests record instead of sleeping. Default: sleep_for.
    std::function<void(std::chrono::milliseconds)> sleep;
};

// A minimal GitHub REST client (API version 2022-11-28).
// Errors (perfgate::error): "github.unreachable" (transport, after retries),
// "github.forbidden" (403 "Resource not accessible by integration", with a
// hint about the missing permission `permission`), "github.rate_limited"
// (wait beyond max_wait or retries exhausted), "github.http" (any other
// non-2xx, with GitHub's message), "github.bad_response" (not JSON).
class github_api {
public:
    github_api(std::string api_url, std::string token, retry_policy retry = {});

    // path_or_url: "/repos/o/r/..." relative to the API URL, or an absolute
    // URL (a Link header's). next_url receives rel="next" from Link, if any.
    nlohmann::json call(std::string_view method, const std::string& path_or_url,
                        const nlohmann::json* body = nullptr, std::string* next_url = nullptr,
                        std::string_view permission = {});

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
    // Missing environment is an "input.github_env" error instead of a warning
    // (`perfgate github`, whose only job is publishing).
    bool require_environment = false;
    retry_policy retry;
};

struct github_result {
    bool comment_posted = false, status_posted = false;
    std::optional<std::int64_t> comment_id;
    std::vector<std::string> warnings;
};

// The hidden marker that identifies perfgate's sticky comment for a context.
std::string comment_marker(std::string_view context);

// Publishes the report: first the job summary, step outputs and annotations
// (local files; the verdict is never lost), then the sticky comment and the
// commit status. Network and GitHub failures never throw: they become
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
