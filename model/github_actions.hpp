// The one reader of the GitHub Actions environment: the GITHUB_* variables
// of a job and the event payload file GITHUB_EVENT_PATH names. Both
// runner/git_info.cpp (which commit a run measured) and github/ (publishing
// a report) read them through here; what an event MEANS stays with each.
//
// docs.github.com/actions/learn-github-actions/variables ("Default
// environment variables") and "Events that trigger workflows"; docs/github.md.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace perfgate::model {

// Looks up an environment variable; nullopt when unset or empty.
using env_lookup = std::function<std::optional<std::string>(const char*)>;

// std::getenv.
env_lookup process_env();

// The default environment variables of a GitHub Actions job. Empty when
// unset.
struct github_env {
    bool actions = false;     // GITHUB_ACTIONS is "true": running inside Actions
    std::string api_url;      // GITHUB_API_URL, without trailing slashes
    std::string server_url;   // GITHUB_SERVER_URL
    std::string repository;   // GITHUB_REPOSITORY, "owner/name"
    std::string event_name;   // GITHUB_EVENT_NAME
    std::string event_path;   // GITHUB_EVENT_PATH
    std::string token;        // GITHUB_TOKEN (the workflow passes it via env:)
    std::string sha;          // GITHUB_SHA (the merge commit on pull_request)
    std::string ref_name;     // GITHUB_REF_NAME ("<n>/merge" on pull_request)
    std::string head_ref;     // GITHUB_HEAD_REF (a pull request's head branch)
    std::string base_ref;     // GITHUB_BASE_REF (a pull request's base branch)
    std::string run_id;       // GITHUB_RUN_ID
    std::string step_summary; // GITHUB_STEP_SUMMARY
    std::string output;       // GITHUB_OUTPUT

    static github_env read(const env_lookup& env);
    // read(process_env()).
    static github_env from_environment();
    // SERVER/REPOSITORY/actions/runs/RUN_ID, or "" when any part is missing.
    [[nodiscard]] std::string run_url() const;
};

// An event payload file as read, before anyone interprets it. Never throws:
// each caller words (and ids) its own error, naming the file.
// The implicit noexcept default constructor runs nlohmann::json's noexcept
// one, which builds a null value and cannot throw; clang-tidy follows it into
// the constructor it delegates to, which throws for other types only
// (nlohmann's header silences the same finding on its own constructor).
// NOLINTNEXTLINE(bugprone-exception-escape): false positive, see above
struct event_file {
    enum class outcome { ok, unreadable, not_json };
    outcome state = outcome::ok;
    nlohmann::json payload;  // the document (any JSON value) when ok
    std::string parse_error; // nlohmann's message when not_json
};

event_file read_event_file(const std::string& path);

} // namespace perfgate::model
