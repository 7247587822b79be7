// `perfgate project`: shows or changes a project's settings in a database:
// the baseline branch the history watch follows, the repository URL the
// dashboard links commits to, how the watch detects change points, and the
// webhooks its alerts are posted to (docs/history.md "Notifications").
#include <iostream>
#include <limits>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/change_point_flags.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/retention.hpp"
#include "model/error.hpp"
#include "service/service.hpp"
#include "store/store.hpp"
#include "store/webhooks.hpp"

namespace perfgate::cli {

namespace {

command_spec make_project_command()
{
    command_spec spec{
        "project",
        "--db PATH --project P [--baseline-branch BRANCH] [--repository-url URL] [--change-point-method M]\n"
        "    [--change-point-window N] [--change-point-max-p P] [--change-point-min-magnitude X]\n"
        "    [--webhook URL [--secret S] [--format json|slack]] [--remove-webhook ID]\n"
        "    [--retention AGE|off] [--thin-after AGE|off]",
        "Prints a project's settings; with --baseline-branch, sets the branch whose\n"
        "baseline runs are watched for change points and alerts (default main); with\n"
        "--repository-url, the http(s) URL the dashboard links commits to as\n"
        "URL/commit/SHA (\"\" clears it); with --change-point-*, how the history watch\n"
        "detects change points in this project (unset ones follow perfgate serve's\n"
        "--change-point-* defaults); with --webhook, adds a webhook that the\n"
        "project's alerts are posted to (--remove-webhook ID removes one). Lists\n"
        "the webhooks with their last delivery, never their secrets. With --retention,\n"
        "perfgate serve prunes the project once a day as perfgate db prune\n"
        "--older-than AGE [--thin-after AGE] would (off: never). Works on the\n"
        "database of a running server (SQLite WAL).",
        {
            {"db", 0, true, false, "PATH|URI", "SQLite database file or postgresql:// URI"},
            {"project", 0, true, false, "P", "an existing project"},
            {"baseline-branch", 0, true, false, "BRANCH", "watch the baseline runs of this branch"},
            {"repository-url", 0, true, false, "URL", "link commits to URL/commit/SHA (https://github.com/OWNER/REPO)"},
            {"webhook", 0, true, false, "URL", "post alerts to this absolute http(s) URL (at most 2048 bytes)"},
            {"secret", 0, true, false, "S", "sign --webhook's JSON bodies with HMAC-SHA256 under S (at most 256 bytes)",
             "PERFGATE_WEBHOOK_SECRET"},
            {"format", 0, true, false, "json|slack", "--webhook's body: json (default) or slack (incoming webhook)"},
            {"remove-webhook", 0, true, false, "ID", "remove the webhook with this id", {}, {"webhook"}},
            {"retention", 0, true, false, "AGE|off",
             "perfgate serve removes the runs that feed no series older than AGE daily (90d; off: never)"},
            {"thin-after", 0, true, false, "AGE|off",
             "and thins the series to a point a day past AGE (365d, at least --retention; off: never)"},
        },
    };
    for (auto& o : change_point_option_specs("this project")) spec.options.push_back(std::move(o));
    return spec;
}

const command_spec project_command = make_project_command();

// --webhook (with --secret and --format) adds one, --remove-webhook ID
// removes one; --format without --webhook is a usage error.
void change_webhooks(service::service& service, const std::string& project, const parsed_args& parsed,
                     std::optional<long long> remove)
{
    const auto webhook = parsed.get("webhook");
    // --secret alone is not refused: it may come from PERFGATE_WEBHOOK_SECRET.
    if (!webhook && parsed.get("format")) {
        throw error(errors::usage_conflict, "--format applies only together with --webhook");
    }
    if (webhook) {
        service.webhooks().add(project, *webhook, parsed.get("format").value_or("json"),
                               parsed.get("secret").value_or(""), "--webhook");
    }
    if (remove && !service.webhooks().remove(project, *remove)) {
        throw error(errors::usage_bad_value,
                    fmt::format("--remove-webhook: project '{}' has no webhook {}", project, *remove));
    }
}

// One line per webhook: id, format, whether it signs, URL, last delivery.
void print_webhooks(const std::vector<store::webhook_info>& hooks)
{
    std::cout << fmt::format("webhooks {}\n", hooks.size());
    for (const auto& w : hooks) {
        std::string last = "never";
        if (w.last_outcome) {
            last = fmt::format("{} attempts={} at={}", *w.last_outcome, w.last_attempts.value_or(0),
                               w.last_at.value_or(0));
            if (w.last_error) last += fmt::format(" error={}", *w.last_error);
        }
        std::cout << fmt::format("webhook {} {} {} {} last={}\n", w.id, w.format, w.has_secret ? "signed" : "unsigned",
                                 w.url, last);
    }
}

// --retention AGE|off and --thin-after AGE|off over the stored retention:
// the settings to store, checked here (exit 2) before anything is stored.
std::optional<store::retention_settings> retention_flags(const parsed_args& parsed, store::retention_settings stored)
{
    const auto retention = parsed.get("retention");
    const auto thin = parsed.get("thin-after");
    if (!retention && !thin) return std::nullopt;
    if (retention) {
        stored.older_than_s = *retention == "off" ? std::nullopt : std::optional(parse_age("retention", *retention));
        if (!stored.older_than_s) stored.thin_after_s.reset();
    }
    if (thin) stored.thin_after_s = *thin == "off" ? std::nullopt : std::optional(parse_age("thin-after", *thin));
    if (stored.thin_after_s && !stored.older_than_s) {
        throw error(errors::usage_conflict, "--thin-after needs a retention: give --retention AGE too");
    }
    if (stored.thin_after_s && *stored.thin_after_s < *stored.older_than_s) {
        throw error(errors::usage_conflict,
                    fmt::format("--thin-after {} is below the retention {}: the series are thinned no sooner than "
                                "the other runs are removed",
                                age_text(*stored.thin_after_s), age_text(*stored.older_than_s)));
    }
    return stored;
}

} // namespace

const command_spec& project_spec() { return project_command; }

int cmd_project(const argv_t& args)
{
    const auto parsed = parse_args(project_command, args);
    if (!parsed) return exit_pass;
    no_positional(*parsed);
    const std::string db_path = parsed->required("db");
    const std::string project = parsed->required("project");
    store::store db(db_path);
    service::service service(db);
    if (!service.projects().exists(project)) {
        throw error(errors::input_unknown_project, fmt::format("{}: no project '{}'", db.location(), project));
    }
    // A bad value of either stores neither: the URL is checked first, the
    // branch as it is set, before the URL is.
    const auto branch = parsed->get("baseline-branch");
    std::optional<std::string> url;
    if (auto given = parsed->get("repository-url")) url = service::normalize_repository_url("--repository-url", *given);
    const auto detection = change_point_flags(*parsed);
    const auto remove = parsed->get_int("remove-webhook", 1, std::numeric_limits<long long>::max());
    const auto retention = retention_flags(*parsed, service.projects().retention(project));
    if (branch) service.projects().set_baseline_branch(project, *branch);
    if (url) service.projects().set_repository_url(project, *url);
    service.projects().set_change_point_settings(project, detection);
    change_webhooks(service, project, *parsed, remove);
    if (retention) service.projects().set_retention(project, *retention);
    std::cout << fmt::format("project {}\nbaseline_branch {}\nrepository_url {}\n", project,
                             service.projects().baseline_branch(project),
                             service.projects().repository_url(project).value_or("-"));
    // The settings in effect, "(default)" where the project has none: the
    // defaults of perfgate serve without --change-point-* options.
    const auto stored = service.projects().change_point_settings(project);
    const auto in_effect = service.projects().change_point_options(project);
    const auto shown = [](bool set) { return set ? "" : " (default)"; };
    std::cout << fmt::format("change_point_method {}{}\nchange_point_window {}{}\nchange_point_max_p {}{}\n"
                             "change_point_min_magnitude {}{}\n",
                             stats::to_string(in_effect.method), shown(stored.method.has_value()), in_effect.window,
                             shown(stored.window.has_value()), in_effect.max_p, shown(stored.max_p.has_value()),
                             in_effect.min_magnitude, shown(stored.min_magnitude.has_value()));
    // Listed once set (a project without one prints as before retention existed).
    if (const auto kept = service.projects().retention(project); kept.older_than_s) {
        std::cout << fmt::format("retention {}\nthin_after {}\n", age_text(*kept.older_than_s),
                                 kept.thin_after_s ? age_text(*kept.thin_after_s) : std::string("off"));
    }
    print_webhooks(service.webhooks().list(project));
    std::cout.flush();
    return exit_pass;
}

} // namespace perfgate::cli
