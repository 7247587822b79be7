// perfgate accept: "accept this regression" from a pull request comment
// (`/perfgate accept <reason>`) or the `perfgate-accept` label, in an
// issue_comment or pull_request (labeled) workflow (ci/examples/accept.yml,
// docs/github.md "Accepting a regression").
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "client/server_client.hpp"
#include "github/accept.hpp"
#include "gitlab/accept.hpp"
#include "model/error.hpp"

namespace perfgate::cli {

namespace {

const command_spec accept_command{
    "accept",
    "[--server URL --project P [--token T]] [options]",
    "Accepts a pull request's regression for its head commit: run by an issue_comment\n"
    "workflow on a comment starting '/perfgate accept <reason>', or a pull_request\n"
    "workflow on the label 'perfgate-accept'. The user's repository permission is read\n"
    "from GitHub (write, maintain or admin may accept). A writer's acceptance turns the\n"
    "commit status of the head to success \"accepted by @user: reason\", notes it in\n"
    "the sticky comment and, with --server, stores it with the head's comparison.\n"
    "Anyone else gets a reply saying why, and nothing changes. Other comments, labels\n"
    "and actions are ignored. A new push is gated afresh: the acceptance is for that\n"
    "commit only. Exit 0: accepted or ignored; 2: not allowed (accept.denied), a bad\n"
    "event or no comparison of the head on the server; 4: GitHub or the server failed.\n"
    "With --gitlab: the same from a GitLab merge request note '/perfgate accept <reason>'\n"
    "(--note-id or PERFGATE_NOTE_ID names it); the author's access level is read from\n"
    "GitLab's members API (Developer, 30, or higher by default).",
    {
        {"server", 0, true, false, "URL", "perfgate server that stores the acceptance with the head's comparison"},
        {"project", 0, true, false, "P", "the server's project (needed with --server)"},
        {"token", 0, true, false, "T", "project token (default: $PERFGATE_TOKEN)", "PERFGATE_TOKEN"},
        {"context", 0, true, false, "NAME",
         "the gate's commit status context and sticky-comment key (default: perfgate)"},
        {"event", 0, true, false, "FILE", "event payload (default: $GITHUB_EVENT_PATH)"},
        {"event-name", 0, true, false, "NAME", "the event FILE is (default: $GITHUB_EVENT_NAME)"},
        {"comment-author", 0, true, false, "LOGIN",
         "login the token comments as, for a GitHub App token (default: GET /user, github-actions[bot] for ghs_)"},
        {"gitlab", 0, false, false, "",
         "accept from a GitLab merge request note instead (docs/gitlab.md#accepting-a-regression)"},
        {"note-id", 0, true, false, "ID", "with --gitlab: the note asking (default: $PERFGATE_NOTE_ID)"},
        {"merge-request", 0, true, false, "IID", "with --gitlab: the merge request (default: $CI_MERGE_REQUEST_IID)"},
        {"min-access-level", 0, true, false, "N",
         "with --gitlab: the lowest access level that may accept: 30 Developer (default) or 40 Maintainer"},
    },
};

// The server side of --server, shared by GitHub and GitLab: the acceptance
// stored with the head's comparison and the comparison's URL.
template <class Options>
void store_on_server(const parsed_args& args, std::optional<client::server_client>& server, Options& opt)
{
    if (auto url = args.get("server")) {
        const auto project = args.get("project");
        if (!project || project->empty())
            throw error(errors::usage_missing_option, "perfgate accept: --server needs --project");
        const auto token = client::resolve_token(args.get("token"));
        if (!token) {
            throw error(errors::usage_missing_option,
                        "perfgate accept: --server needs a project token (--token or PERFGATE_TOKEN)");
        }
        server.emplace(*url, *project, token);
        opt.store = [&server](const std::string& sha, const std::string& login, const std::string& reason) {
            model::acceptance a = server->accept(sha, login, reason);
            std::string url = server->comparison_url(a.comparison_id);
            return std::pair{std::move(a), std::move(url)};
        };
    } else if (args.get("project")) {
        throw error(errors::usage_bad_value, "perfgate accept: --project is for --server");
    }
}

int accept_on_gitlab(const parsed_args& args)
{
    for (const char* name : {"event", "event-name", "comment-author"}) {
        if (args.get(name))
            throw error(errors::usage_bad_value, fmt::format("perfgate accept: --{} is for GitHub", name));
    }
    gitlab::accept_options opt;
    opt.context = args.get("context").value_or("perfgate");
    if (opt.context.empty()) throw error(errors::usage_bad_value, "--context: must not be empty");
    if (auto id = args.get("note-id")) opt.note_id = *id;
    else if (const char* env = std::getenv("PERFGATE_NOTE_ID")) opt.note_id = env;
    opt.mr_iid = args.get("merge-request");
    if (auto level = args.get("min-access-level")) {
        if (*level != "30" && *level != "40")
            throw error(errors::usage_bad_value,
                        fmt::format("--min-access-level: expected 30 (Developer) or 40 (Maintainer), got '{}'",
                                    *level));
        opt.min_access_level = std::stoi(*level);
    }
    std::optional<client::server_client> server;
    store_on_server(args, server, opt);
    const gitlab::accept_result res = gitlab::accept_regression(opt, std::cout);
    if (res.outcome == gitlab::accept_outcome::denied) {
        throw error(errors::accept_denied,
                    fmt::format("perfgate accept: {}: nothing changed (replied on !{})", res.why, res.mr_iid));
    }
    if (!res.warnings.empty())
        print_error(fmt::format("perfgate accept: {} warning(s); the acceptance stands\n", res.warnings.size()));
    return exit_pass;
}

} // namespace

const command_spec& accept_spec() { return accept_command; }

int cmd_accept(const argv_t& argv)
{
    const auto parsed = parse_args(accept_command, argv);
    if (!parsed) return exit_pass;
    const parsed_args& args = *parsed;
    no_positional(args);

    if (args.has("gitlab")) return accept_on_gitlab(args);
    for (const char* name : {"note-id", "merge-request", "min-access-level"}) {
        if (args.get(name))
            throw error(errors::usage_bad_value, fmt::format("perfgate accept: --{} is for --gitlab", name));
    }

    github::accept_options opt;
    opt.context = args.get("context").value_or("perfgate");
    if (opt.context.empty()) throw error(errors::usage_bad_value, "--context: must not be empty");
    opt.event_path = args.get("event");
    opt.event_name = args.get("event-name");
    if (opt.event_name && opt.event_name->empty())
        throw error(errors::usage_bad_value, "--event-name: must not be empty");
    opt.comment_author = args.get("comment-author");
    if (opt.comment_author && opt.comment_author->empty())
        throw error(errors::usage_bad_value, "--comment-author: must not be empty");

    std::optional<client::server_client> server;
    store_on_server(args, server, opt);

    const github::accept_result res = github::accept_regression(opt, std::cout);
    if (res.outcome == github::accept_outcome::denied) {
        throw error(errors::accept_denied, fmt::format("perfgate accept: {}: nothing changed (replied on PR #{})",
                                                       res.why, res.pr_number.value_or(0)));
    }
    if (!res.warnings.empty()) {
        print_error(fmt::format("perfgate accept: {} warning(s); the acceptance stands\n", res.warnings.size()));
    }
    return exit_pass;
}

} // namespace perfgate::cli
