// Publishing a report to GitHub from an Actions job: sticky PR comment,
// commit status, job summary, step outputs and annotations (docs/github.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gate/report.hpp"
#include "github/api.hpp"
#include "github/event.hpp"

namespace perfgate::github {

// Comment modes of `--comment` and the action's `comment` input.
inline constexpr std::string_view comment_modes[] = {"always", "on-change", "on-regression", "never"};
[[nodiscard]] bool is_comment_mode(std::string_view mode);

struct github_options {
    std::string comment = "always";   // always | on-change | on-regression | never
    std::string context = "perfgate"; // commit status context; also keys the sticky comment
    std::optional<std::string> comparison_url;
    bool fail_on_regression = true, fail_on_inconclusive = false;
    std::string report_path;               // the report-path output
    std::optional<std::string> event_path; // overrides GITHUB_EVENT_PATH (fork split artifact)
    std::optional<std::string> event_name; // overrides GITHUB_EVENT_NAME (see read_event)
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
