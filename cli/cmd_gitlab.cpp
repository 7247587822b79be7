// perfgate gitlab: posts an existing report JSON to GitLab from a CI job
// (sticky merge request note, commit status, job log summary); the
// counterpart of perfgate github (docs/gitlab.md).
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "gate/report.hpp"
#include "gitlab/gitlab.hpp"
#include "model/error.hpp"
#include "model/file.hpp"
#include "report/render.hpp"

namespace perfgate::cli {

namespace {

const command_spec gitlab_command{
    "gitlab",
    "--report FILE [options]",
    "Posts a perfgate report to GitLab from a CI job: a sticky merge request note\n"
    "(found again by a hidden marker and our own username, and edited), a commit\n"
    "status on the merge request's head (or the pushed commit) and the summary in\n"
    "the job log. Reads CI_API_V4_URL (or CI_SERVER_URL), CI_PROJECT_ID,\n"
    "CI_MERGE_REQUEST_IID, CI_COMMIT_SHA, CI_JOB_URL and the token from the masked\n"
    "variable PERFGATE_GITLAB_TOKEN (a project access token with the api scope:\n"
    "CI_JOB_TOKEN cannot write notes or statuses); CI_SERVER_TLS_CA_FILE for a\n"
    "self-managed instance's CA. A pipeline without CI_MERGE_REQUEST_IID posts the\n"
    "status only; one without the token (a merge request from a fork) posts nothing\n"
    "and says so. Exits with the report's verdict code.",
    {
        {"report", 0, true, false, "FILE", "report JSON written by perfgate run/compare --format json (required)"},
        {"comment", 0, true, false, "MODE", "always (default), on-change, on-regression or never"},
        {"context", 0, true, false, "NAME", "commit status name and sticky-note key (default: perfgate)"},
        {"comparison-url", 0, true, false, "URL", "link to the stored comparison on a perfgate server"},
        {"note-author", 0, true, false, "USERNAME", "username the token writes notes as (default: GET /user)"},
        {"junit", 0, true, false, "FILE",
         "also write the report as JUnit XML to FILE (artifacts:reports:junit), before anything is posted"},
        {"fail-on-inconclusive", 0, false, false, "", "exit 3 (and status failed) when the verdict is inconclusive"},
        {"no-fail-on-regression", 0, false, false, "", "exit 0 (and status success) even on a regression"},
    },
};

} // namespace

const command_spec& gitlab_spec() { return gitlab_command; }

int cmd_gitlab(const argv_t& argv)
{
    const auto parsed = parse_args(gitlab_command, argv);
    if (!parsed) return exit_pass;
    const parsed_args& args = *parsed;
    no_positional(args);
    const std::string report_path = args.required("report");

    gitlab::gitlab_options opt;
    opt.comment = args.get("comment").value_or("always");
    opt.context = args.get("context").value_or("perfgate");
    if (opt.context.empty()) throw error(errors::usage_bad_value, "--context: must not be empty");
    opt.comparison_url = args.get("comparison-url");
    opt.note_author = args.get("note-author");
    if (opt.note_author && !model::is_gitlab_username(*opt.note_author))
        throw error(errors::usage_bad_value, "--note-author: expected a GitLab username");
    opt.fail_on_inconclusive = args.has("fail-on-inconclusive");
    opt.fail_on_regression = !args.has("no-fail-on-regression");
    opt.require_environment = true;

    const gate::report report = load_report(report_path);
    if (auto junit = args.get("junit")) {
        std::ofstream out(*junit, std::ios::binary | std::ios::trunc);
        out << report::render_junit(report);
        if (!out.flush())
            throw error(errors::input_unwritable, fmt::format("{}: cannot write the JUnit report", *junit));
    }
    int code = verdict_exit_code(report.result, opt.fail_on_inconclusive);
    if (code == exit_regression && !opt.fail_on_regression) code = exit_pass;
    const gitlab::gitlab_result res = gitlab::publish_to_gitlab(report, code, opt, std::cout);
    if (!res.warnings.empty()) {
        print_error(fmt::format("perfgate gitlab: {} warning(s); the verdict stands: {}\n", res.warnings.size(),
                                gate::to_string(report.result)));
    }
    return code;
}

} // namespace perfgate::cli
