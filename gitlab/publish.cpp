#include "gitlab/publish.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ostream>

#include <fmt/format.h>

#include "model/acceptance.hpp"
#include "model/error.hpp"
#include "model/exit_code.hpp"
#include "report/render.hpp"

namespace perfgate::gitlab {

using nlohmann::json;

namespace {

// Notes are read 100 a page (GitLab's per_page maximum), at most 1000 pages.
constexpr int notes_per_page = 100;
constexpr int max_note_pages = 1000;
constexpr std::string_view comment_modes[] = {"always", "on-change", "on-regression", "never"};

// A positive decimal number without sign or leading zero, as GitLab's ids are.
bool is_id(std::string_view s)
{
    return !s.empty() && s.size() <= 18 && s.front() != '0' &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string json_quoted(std::string_view s)
{
    return json(std::string(s.substr(0, 100))).dump(-1, ' ', true, json::error_handler_t::replace);
}

std::string string_at(const json& j, const char* key)
{
    if (!j.is_object()) return {};
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::int64_t> int_at(const json& j, const char* key)
{
    if (!j.is_object()) return std::nullopt;
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<std::int64_t>();
}

} // namespace

std::string note_marker(std::string_view context)
{
    // An HTML comment, hidden in the rendered note; "--" cannot occur in one.
    std::string safe;
    for (char ch : context) {
        if (ch == '-' && !safe.empty() && safe.back() == '-') continue;
        safe += ch == '>' ? '_' : ch;
    }
    return fmt::format("<!-- perfgate-note: {} -->", safe);
}

std::string_view status_state(int exit_code) { return exit_code == exit_pass ? "success" : "failed"; }

gitlab_target read_target(const gitlab_env& env)
{
    std::vector<std::string> missing;
    if (env.api_base().empty()) missing.emplace_back("CI_API_V4_URL (or CI_SERVER_URL)");
    if (env.project_id.empty()) missing.emplace_back("CI_PROJECT_ID");
    if (env.commit_sha.empty() && env.mr_source_sha.empty()) missing.emplace_back("CI_COMMIT_SHA");
    if (!missing.empty()) {
        throw error(errors::input_gitlab_env,
                    fmt::format("{} not set: cannot post the merge request note and commit status (run inside "
                                "GitLab CI)",
                                fmt::join(missing, ", ")));
    }
    gitlab_target t;
    // Each value below goes into an API path: checked here, before any request.
    if (!is_id(env.project_id))
        throw error(errors::input_gitlab_env,
                    fmt::format("CI_PROJECT_ID {} is not a project id: nothing posted to GitLab",
                                json_quoted(env.project_id)));
    t.project_id = env.project_id;
    if (!env.mr_iid.empty()) {
        if (!is_id(env.mr_iid))
            throw error(errors::input_gitlab_env,
                        fmt::format("CI_MERGE_REQUEST_IID {} is not a merge request iid: nothing posted to GitLab",
                                    json_quoted(env.mr_iid)));
        t.mr_iid = std::stoll(env.mr_iid);
    }
    const bool merged_results = !env.mr_source_sha.empty();
    t.sha = merged_results ? env.mr_source_sha : env.commit_sha;
    if (!model::is_full_commit_sha(t.sha)) {
        throw error(errors::input_gitlab_env,
                    fmt::format("{} {} is not a commit SHA (40 or 64 hex digits): nothing posted to GitLab",
                                merged_results ? "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA" : "CI_COMMIT_SHA",
                                json_quoted(t.sha)));
    }
    return t;
}

namespace detail {

std::size_t utf8_length(std::string_view s)
{
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

std::string cut(std::string_view s, std::size_t max_chars)
{
    constexpr std::string_view mark = "...";
    if (utf8_length(s) <= max_chars) return std::string(s);
    std::size_t chars = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
        if (chars == max_chars - mark.size()) return std::string(s.substr(0, i)) + std::string(mark);
        ++chars;
    }
    return std::string(s);
}

std::string own_username(gitlab_api& api, const std::optional<std::string>& note_author)
{
    if (note_author) return *note_author;
    const json me = api.call("GET", "/user");
    std::string name = string_at(me, "username");
    if (name.empty())
        throw error(errors::gitlab_bad_response,
                    fmt::format("GET {}/user: no username in the answer: cannot tell our notes from others'",
                                api.api_url()));
    return name;
}

std::optional<std::pair<std::int64_t, std::string>> find_own_note(gitlab_api& api, const std::string& project,
                                                                  std::int64_t iid, const std::string& marker,
                                                                  const std::string& self)
{
    std::string url = fmt::format("/projects/{}/merge_requests/{}/notes?sort=asc&order_by=created_at&per_page={}",
                                  project, iid, notes_per_page);
    for (int page = 0; page < max_note_pages && !url.empty(); ++page) {
        std::string next;
        const json list = api.call("GET", url, nullptr, &next);
        if (!list.is_array())
            throw error(errors::gitlab_bad_response, fmt::format("GET {}: expected a JSON array", url));
        for (const auto& n : list) {
            std::string body = string_at(n, "body");
            if (body.find(marker) == std::string::npos) continue;
            if (n.is_object() && n.value("system", false)) continue;
            if (string_at(n.value("author", json::object()), "username") != self) continue;
            if (auto id = int_at(n, "id")) return std::pair{*id, std::move(body)};
        }
        url = next;
    }
    return std::nullopt;
}

} // namespace detail

namespace {

class publisher {
public:
    publisher(const gate::report& r, int exit_code, const gitlab_options& opt, std::ostream& log)
        : report_(r), exit_code_(exit_code), opt_(opt), log_(log), env_(gitlab_env::from_environment())
    {}

    gitlab_result run()
    {
        if (std::find(std::begin(comment_modes), std::end(comment_modes), opt_.comment) == std::end(comment_modes))
            throw error(errors::usage_bad_value,
                        fmt::format("--comment: expected always, on-change, on-regression or never, got '{}'",
                                    opt_.comment));
        write_log_summary();
        gitlab_target target;
        try {
            target = read_target(env_);
        } catch (const error& e) {
            if (opt_.require_environment) throw;
            warn(e.what());
            return std::move(result_);
        }
        if (env_.token.empty()) {
            // A merge request from a fork runs without the project's masked
            // variables: the gate's verdict, the job log and the JUnit report
            // stand, and nothing can be posted (docs/gitlab.md "Forks").
            warn("PERFGATE_GITLAB_TOKEN not set (a merge request from a fork runs without the project's masked "
                 "variables): no note and no commit status posted; the verdict stands");
            return std::move(result_);
        }
        api_.emplace(env_.api_base(), env_.token, env_.tls_ca_file, opt_.retry);
        project_ = target.project_id;
        if (opt_.comment != "never") {
            if (target.mr_iid) guarded("post the merge request note", [&] { post_note(*target.mr_iid); });
            else log_ << "perfgate: not a merge request pipeline (no CI_MERGE_REQUEST_IID); no note posted\n";
        }
        guarded("post the commit status", [&] { post_status(target.sha); });
        return std::move(result_);
    }

private:
    template <class F>
    void guarded(std::string_view what, F&& f)
    {
        try {
            f();
        } catch (const std::exception& e) {
            warn(fmt::format("could not {}: {}", what, e.what()));
        }
    }

    void warn(const std::string& msg)
    {
        result_.warnings.push_back(msg);
        log_ << "perfgate: warning: " << msg << "\n";
    }

    // The job log: a collapsible section (docs.gitlab.com/ci/jobs/job_logs,
    // "Custom collapsible sections") holding the text report.
    void write_log_summary()
    {
        const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        log_ << fmt::format("\x1b[0Ksection_start:{}:perfgate_summary\r\x1b[0Kperfgate: {}\n", now,
                            gate::to_string(report_.result));
        log_ << report::render_text(report_, false);
        log_ << fmt::format("\x1b[0Ksection_end:{}:perfgate_summary\r\x1b[0K\n", now);
    }

    bool has_change() const
    {
        return report_.count(gate::status::regression) + report_.count(gate::status::improvement) > 0;
    }

    std::string render(const std::string& marker) const
    {
        report::markdown_options mo;
        mo.marker = marker;
        mo.run_url = env_.run_url();
        mo.comparison_url = opt_.comparison_url.value_or("");
        // GitLab's commit pages are {project}/-/commit/{sha}.
        if (!env_.project_url.empty()) mo.repository_url = env_.project_url + "/-";
        mo.max_chars = note_limit;
        std::string body = report::render_markdown(report_, mo);
        if (body.find(marker) == std::string::npos) body = marker + "\n" + body;
        return body;
    }

    std::string notes_path(std::int64_t iid) const
    {
        return fmt::format("/projects/{}/merge_requests/{}/notes", project_, iid);
    }

    json update_note(std::int64_t iid, std::int64_t id, const json& payload)
    {
        return api_->call("PUT", fmt::format("{}/{}", notes_path(iid), id), &payload);
    }

    void post_note(std::int64_t iid)
    {
        const std::string marker = note_marker(opt_.context);
        const std::string self = detail::own_username(*api_, opt_.note_author);
        auto existing = detail::find_own_note(*api_, project_, iid, marker, self);
        const bool wanted = opt_.comment == "always" || (opt_.comment == "on-change" && has_change()) ||
                            (opt_.comment == "on-regression" && report_.result == gate::verdict::fail);
        if (!wanted && !existing) {
            log_ << fmt::format("perfgate: --comment {}: nothing to report, no note posted\n", opt_.comment);
            return;
        }
        const json payload = {{"body", render(marker)}};
        json res;
        if (existing) {
            res = update_note(iid, existing->first, payload);
            log_ << fmt::format("perfgate: updated merge request !{} note {}\n", iid, existing->first);
        } else {
            res = create_note(iid, marker, self, payload);
        }
        result_.note_posted = true;
        result_.note_id = int_at(res, "id");
    }

    // Creating a note is not idempotent: a POST whose answer was lost is
    // looked for before it is sent again, and updated when it landed.
    json create_note(std::int64_t iid, const std::string& marker, const std::string& self, const json& payload)
    {
        const retry_policy& policy = api_->policy();
        for (int attempt = 1;; ++attempt) {
            try {
                json res = api_->call("POST", notes_path(iid), &payload, nullptr, replay::forbidden);
                log_ << fmt::format("perfgate: noted on merge request !{}\n", iid);
                return res;
            } catch (const error& e) {
                const bool unanswered = e.id() == errors::gitlab_unreachable || e.id() == errors::gitlab_server_error;
                if (!unanswered || attempt >= policy.max_attempts) throw;
                log_ << fmt::format("perfgate: the note POST got no answer ({}); looking for it before posting "
                                    "again\n",
                                    e.what());
                policy.sleep(std::chrono::milliseconds(policy.backoff.count() << (attempt - 1)));
            }
            if (auto landed = detail::find_own_note(*api_, project_, iid, marker, self)) {
                log_ << fmt::format("perfgate: updated merge request !{} note {} (the lost POST had landed)\n", iid,
                                    landed->first);
                return update_note(iid, landed->first, payload);
            }
        }
    }

    std::string description() const
    {
        if (exit_code_ == exit_usage || exit_code_ == exit_measurement)
            return fmt::format("perfgate could not decide (exit {}): see the job log", exit_code_);
        const std::string verdict = report_.result == gate::verdict::fail && exit_code_ == exit_pass
                                        ? "regression (not failing: --no-fail-on-regression)"
                                        : std::string(gate::to_string(report_.result));
        return detail::cut(fmt::format("{}: {} regressed, {} improved, {} unchanged, {} inconclusive", verdict,
                                       report_.count(gate::status::regression),
                                       report_.count(gate::status::improvement), report_.count(gate::status::unchanged),
                                       report_.count(gate::status::inconclusive) +
                                           report_.count(gate::status::insufficient)),
                           status_description_limit);
    }

    void post_status(const std::string& sha)
    {
        json payload = {{"state", status_state(exit_code_)}, {"name", opt_.context}, {"description", description()}};
        const std::string target = opt_.comparison_url.value_or(env_.run_url());
        if (!target.empty()) payload["target_url"] = target;
        api_->call("POST", fmt::format("/projects/{}/statuses/{}", project_, sha), &payload);
        result_.status_posted = true;
        result_.sha = sha;
        log_ << fmt::format("perfgate: commit status '{}' {} on {}\n", opt_.context, status_state(exit_code_), sha);
    }

    const gate::report& report_;
    int exit_code_;
    const gitlab_options& opt_;
    std::ostream& log_;
    gitlab_env env_;
    std::optional<gitlab_api> api_;
    std::string project_;
    gitlab_result result_;
};

} // namespace

gitlab_result publish_to_gitlab(const gate::report& r, int exit_code, const gitlab_options& opt, std::ostream& log)
{
    return publisher(r, exit_code, opt, log).run();
}

} // namespace perfgate::gitlab
