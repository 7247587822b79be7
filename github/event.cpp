#include "github/event.hpp"

#include <fmt/format.h>

#include "github/json_fields.hpp"
#include "model/error.hpp"

namespace perfgate::github {

using detail::iequals;
using detail::int_at;
using detail::object_at;
using detail::string_at;
using nlohmann::json;

namespace {

// The commit-less SHA of a deleted branch's push ("after": 000...0).
bool is_null_sha(const std::string& sha) { return sha.find_first_not_of('0') == std::string::npos; }

// A commit SHA goes into an API path (/repos/{repo}/statuses/{sha}): only a
// whole SHA-1 or SHA-256 object name, 40 or 64 hex digits, is one. Anything
// else ("../../orgs/x", a short SHA, spaces) is "input.github_sha" naming
// where it came from, and nothing is posted.
std::string checked_sha(std::string sha, std::string_view field, const event_source& src)
{
    if (sha.empty()) return sha;
    const bool hex = sha.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
    if (hex && (sha.size() == 40 || sha.size() == 64)) return sha;
    const bool from_env = field == "GITHUB_SHA";
    throw error(errors::input_github_sha,
                fmt::format("{}{}: {} is not a commit SHA (40 or 64 hex digits): nothing posted to GitHub",
                            from_env ? "" : src.path + ": ", field,
                            json(sha.substr(0, 80)).dump(-1, ' ', true, json::error_handler_t::replace)));
}

// The events read_event knows, for the warning about the others.
constexpr std::string_view supported_events =
    "pull_request, pull_request_target, workflow_run, push, merge_group, workflow_dispatch, schedule, issue_comment";

// Whether a workflow_run pull request (webhook schema "pull-request-minimal":
// base.repo has only id, url and name) is based in this repository: by id
// against the payload's own repository (which is GITHUB_REPOSITORY, the
// repository the workflow_run workflow runs in), else by API URL, else by
// full name. Unverifiable is not ours.
bool based_here(const json& pr, const json& payload, const event_source& src)
{
    const json& base_repo = object_at(object_at(pr, "base"), "repo");
    const json& this_repo = object_at(payload, "repository");
    const std::string this_name = string_at(this_repo, "full_name");
    const bool payload_is_this_repo = this_name.empty() || iequals(this_name, src.repository);
    if (auto id = int_at(base_repo, "id"); id && payload_is_this_repo) {
        if (auto ours = int_at(this_repo, "id")) return *id == *ours;
    }
    if (std::string url = string_at(base_repo, "url"); !url.empty()) {
        if (!src.api_url.empty() && iequals(url, fmt::format("{}/repos/{}", src.api_url, src.repository))) return true;
        if (std::string ours = string_at(this_repo, "url"); !ours.empty() && payload_is_this_repo) {
            return iequals(url, ours);
        }
        return false;
    }
    if (std::string name = string_at(base_repo, "full_name"); !name.empty()) return iequals(name, src.repository);
    return false;
}

void read_pull_request(const json& payload, const event_source& src, event_target& t)
{
    const json& pr = object_at(payload, "pull_request");
    t.pr_number = int_at(pr, "number");
    if (!t.pr_number) {
        throw error(errors::input_github_event,
                    fmt::format("{}: a {} event without pull_request.number", src.path, t.event_name));
    }
    t.head_sha = checked_sha(string_at(object_at(pr, "head"), "sha"), "pull_request.head.sha", src);
    if (t.head_sha.empty()) {
        t.warnings.push_back(fmt::format("{}: no pull_request.head.sha: no commit status (GITHUB_SHA is not the PR "
                                         "head on {})",
                                         src.path, t.event_name));
    }
}

void read_workflow_run(const json& payload, const event_source& src, event_target& t)
{
    if (!payload.contains("workflow_run") || !payload["workflow_run"].is_object()) {
        throw error(errors::input_github_event, fmt::format("{}: a workflow_run event without workflow_run", src.path));
    }
    const json& run = payload["workflow_run"];
    t.head_sha = checked_sha(string_at(run, "head_sha"), "workflow_run.head_sha", src);
    const std::string trigger = string_at(run, "event");
    const json& listed = run.contains("pull_requests") && run["pull_requests"].is_array() ? run["pull_requests"]
                                                                                          : json::array();
    if (listed.empty()) {
        // Runs for pushes list none and need no comment; runs for pull requests
        // from forks always list none (GitHub does not link them).
        if (trigger == "pull_request" || trigger == "pull_request_target") {
            t.warnings.push_back(
                "workflow_run: the triggering run lists no pull request, as for every pull request from a fork: "
                "no comment posted. Use the fork split: save the pull_request event with the report and publish "
                "it with `perfgate github --report FILE --event EVENT_FILE` (ci/examples/fork-publish.yml)");
        }
        return;
    }
    // GitHub lists the open PRs whose head branch matches the run's, "not
    // necessarily" the one that triggered it, and PRs of other repositories
    // too: only a PR of this repository whose head is the run's commit is it.
    std::vector<std::string> others;
    for (const auto& pr : listed) {
        auto number = int_at(pr, "number");
        if (!number) continue;
        if (!t.head_sha.empty() && string_at(object_at(pr, "head"), "sha") == t.head_sha &&
            based_here(pr, payload, src)) {
            t.pr_number = number;
            return;
        }
        others.push_back(fmt::format("#{}", *number));
    }
    t.warnings.push_back(fmt::format(
        "workflow_run: none of the pull requests the run lists ({}) has head {} and base repository {}: no comment "
        "posted (GitHub lists open PRs whose head branch matches, not necessarily the one that triggered the run; "
        "for a pull request from a fork use `perfgate github --event` with the saved pull_request event)",
        others.empty() ? std::string("none with a number") : fmt::format("{}", fmt::join(others, ", ")),
        t.head_sha.empty() ? std::string("(none)") : t.head_sha, src.repository));
}

void read_issue_comment(const json& payload, event_target& t)
{
    const json& issue = object_at(payload, "issue");
    auto number = int_at(issue, "number");
    if (number && issue.contains("pull_request") && issue["pull_request"].is_object()) {
        t.pr_number = number;
        t.warnings.push_back(fmt::format(
            "issue_comment: the event names no commit (GITHUB_SHA is the default branch's head, not PR #{}'s): no "
            "commit status posted. Publish from a pull_request or workflow_run job to mark the commit",
            *number));
    } else {
        t.warnings.push_back(fmt::format("issue_comment on {} that is not a pull request: no comment and no commit "
                                         "status posted",
                                         number ? fmt::format("issue #{}", *number) : std::string("an issue")));
    }
}

// The event a payload is read as (read_event's header comment).
std::string effective_event_name(const json& payload, const event_source& src)
{
    if (src.saved && src.name == "workflow_run" && payload.contains("pull_request") &&
        payload["pull_request"].is_object()) {
        return "pull_request"; // the fork split: the measuring run's saved event
    }
    return src.name;
}

} // namespace


event_target read_event(const event_source& src)
{
    const model::event_file file = model::read_event_file(src.path);
    if (file.state == model::event_file::outcome::unreadable) {
        throw error(errors::input_github_event, fmt::format("{}: cannot read the GitHub event payload", src.path));
    }
    const json& payload = file.payload;
    if (file.state == model::event_file::outcome::not_json || !payload.is_object()) {
        throw error(errors::input_github_event, fmt::format("{}: the event payload is not a JSON object", src.path));
    }

    event_target t;
    t.event_name = effective_event_name(payload, src);
    const std::string& name = t.event_name;
    if (name == "pull_request" || name == "pull_request_target") {
        read_pull_request(payload, src, t);
    } else if (name == "workflow_run") {
        read_workflow_run(payload, src, t);
    } else if (name == "push") {
        t.head_sha = checked_sha(string_at(payload, "after"), "after", src);
        // a deleted branch: "after" is no commit
        if (is_null_sha(t.head_sha)) t.head_sha = checked_sha(src.fallback_sha, "GITHUB_SHA", src);
    } else if (name == "merge_group") {
        t.head_sha = checked_sha(string_at(object_at(payload, "merge_group"), "head_sha"), "merge_group.head_sha", src);
        if (t.head_sha.empty()) t.head_sha = checked_sha(src.fallback_sha, "GITHUB_SHA", src);
    } else if (name == "workflow_dispatch" || name == "schedule") {
        t.head_sha = checked_sha(src.fallback_sha, "GITHUB_SHA", src);
    } else if (name == "issue_comment") {
        read_issue_comment(payload, t);
    } else {
        t.warnings.push_back(fmt::format("{}: perfgate does not publish for this event (supported: {}): no comment "
                                         "and no commit status posted",
                                         name.empty() ? std::string("GITHUB_EVENT_NAME is not set")
                                                      : fmt::format("event '{}'", name),
                                         supported_events));
    }
    return t;
}

} // namespace perfgate::github
