// perfgate github: posts an existing report JSON to GitHub (sticky PR comment,
// commit status, job summary, outputs). The publishing half of the fork-safe
// split: a pull_request workflow measures without secrets and uploads the
// report and its event; a workflow_run workflow with write permissions runs
// this command on them (ci/examples/fork-publish.yml).
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "gate/compare.hpp"
#include "gate/report.hpp"
#include "github/github.hpp"
#include "model/error.hpp"
#include "model/file.hpp"
#include "report/render.hpp"

namespace perfgate::cli {

using namespace perfgate::github;

namespace {

const command_spec github_command{
    "github",
    "--report FILE [options]",
    "Posts a perfgate report to GitHub from an Actions job: a sticky PR comment\n"
    "(found again by a hidden marker and updated), a commit status on the PR head,\n"
    "the job summary and the step outputs verdict, report-path, comparison-url.\n"
    "Reads GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_TOKEN, GITHUB_EVENT_NAME,\n"
    "GITHUB_EVENT_PATH and the other standard Actions variables. The event name\n"
    "decides what is posted: pull_request(_target) and workflow_run comment and\n"
    "mark the PR head; push, merge_group, workflow_dispatch and schedule mark the\n"
    "commit only; issue_comment comments without a status; others post nothing.\n"
    "Exits with the report's verdict code.",
    {
        {"report", 0, true, false, "FILE", "report JSON written by perfgate run/compare --format json (required)"},
        {"comment", 0, true, false, "MODE", "always (default), on-change, on-regression or never"},
        {"context", 0, true, false, "NAME", "commit status context and sticky-comment key (default: perfgate)"},
        {"comparison-url", 0, true, false, "URL", "link to the stored comparison on a perfgate server"},
        {"event", 0, true, false, "FILE", "event payload to read the PR from (default: $GITHUB_EVENT_PATH)"},
        {"event-name", 0, true, false, "NAME",
         "the event FILE is (default: $GITHUB_EVENT_NAME; pull_request for a saved PR event in a workflow_run job)"},
        {"comment-author", 0, true, false, "LOGIN",
         "login the token comments as, for a GitHub App token (default: GET /user, github-actions[bot] for ghs_)"},
        {"expect-head-sha", 0, true, false, "SHA", "refuse to post unless the event's head SHA is SHA"},
        {"artifact", 0, true, false, "NAME",
         "the workflow artifact this run uploads perfgate run --artifacts DIR as; "
         "the comment links the run's artifacts"},
        {"fail-on-inconclusive", 0, false, false, "", "exit 3 (and status failure) when the verdict is inconclusive"},
        {"no-fail-on-regression", 0, false, false, "", "exit 0 (and status success) even on a regression"},
    },
};

} // namespace

const command_spec& github_spec() { return github_command; }

int cmd_github(const argv_t& argv)
{
    const auto parsed = parse_args(github_command, argv);
    if (!parsed) return exit_pass;
    const parsed_args& args = *parsed;
    no_positional(args);
    const std::string report_path = args.required("report");

    github_options opt;
    opt.comment = args.get("comment").value_or("always");
    if (!is_comment_mode(opt.comment)) {
        throw error(errors::usage_bad_value,
                    fmt::format("--comment: expected always, on-change, on-regression or never, "
                                "got '{}'",
                                opt.comment));
    }
    opt.context = args.get("context").value_or("perfgate");
    if (opt.context.empty()) throw error(errors::usage_bad_value, "--context: must not be empty");
    opt.comparison_url = args.get("comparison-url");
    opt.fail_on_inconclusive = args.has("fail-on-inconclusive");
    opt.fail_on_regression = !args.has("no-fail-on-regression");
    opt.report_path = report_path;
    opt.event_path = args.get("event");
    opt.event_name = args.get("event-name");
    if (opt.event_name && opt.event_name->empty())
        throw error(errors::usage_bad_value, "--event-name: must not be empty");
    opt.comment_author = args.get("comment-author");
    if (opt.comment_author && opt.comment_author->empty()) {
        throw error(errors::usage_bad_value, "--comment-author: must not be empty");
    }
    opt.artifact_name = args.get("artifact");
    if (opt.artifact_name && opt.artifact_name->empty())
        throw error(errors::usage_bad_value, "--artifact: must not be empty");
    opt.require_environment = true;

    const gate::report report = load_report(report_path);
    // The report may come from a fork's artifact (ci/examples/fork-publish.yml):
    // post only a verdict that its own counters give (issue 43, finding 7).
    if (const auto why = gate::inconsistent_verdict(report)) {
        throw error(errors::input_bad_report,
                    fmt::format("{}: {}: refusing to post a verdict that the report's own counters do not give",
                                report_path, *why));
    }

    if (auto expected = args.get("expect-head-sha")) {
        event_source source = event_source_for(github_env::from_environment(), opt);
        if (source.path.empty())
            throw error(errors::input_github_env, "--expect-head-sha: no event (GITHUB_EVENT_PATH or --event)");
        source.fallback_sha.clear(); // the event itself must name the commit
        const event_target t = read_event(source);
        if (t.head_sha != *expected) {
            throw error(errors::input_head_sha_mismatch,
                        fmt::format("{}: the {} event's head SHA '{}' is not the expected '{}': refusing to post a "
                                    "report for another commit",
                                    source.path, t.event_name, t.head_sha, *expected));
        }
    }

    int code = verdict_exit_code(report.result, opt.fail_on_inconclusive);
    if (code == exit_regression && !opt.fail_on_regression) code = exit_pass;
    const github_result res = publish_to_github(report, code, opt, std::cout);
    if (!res.warnings.empty()) {
        print_error(fmt::format("perfgate github: {} warning(s); the verdict stands: {}\n", res.warnings.size(),
                                gate::to_string(report.result)));
    }
    return code;
}

} // namespace perfgate::cli
