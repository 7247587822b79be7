#include "gitlab/accept.hpp"

#include <algorithm>
#include <cctype>
#include <ostream>

#include <fmt/format.h>

#include "gitlab/publish.hpp"
#include "model/error.hpp"
#include "model/gitlab_ci.hpp"
#include "model/text.hpp"
#include "report/render.hpp"

namespace perfgate::gitlab {

using nlohmann::json;

namespace {

bool is_id(std::string_view s)
{
    return !s.empty() && s.size() <= 18 && s.front() != '0' &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
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

std::optional<std::string> request_reason(std::string_view body)
{
    const std::string_view b = model::trim(body);
    if (!b.starts_with(accept_command)) return std::nullopt;
    const std::string_view rest = b.substr(accept_command.size());
    if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t' && rest.front() != '\r' && rest.front() != '\n')
        return std::nullopt;
    return model::clean_acceptance_reason(rest);
}

std::string with_note(std::string_view body, std::string_view marker, std::string_view note)
{
    std::string out(body);
    const auto begin = out.find(report::acceptance_note_begin);
    if (begin != std::string::npos) {
        const auto end = out.find(report::acceptance_note_end, begin);
        if (end != std::string::npos) {
            std::size_t stop = end + report::acceptance_note_end.size();
            if (stop < out.size() && out[stop] == '\n') ++stop;
            out.replace(begin, stop - begin, note);
            return out;
        }
    }
    std::size_t at = 0;
    if (const auto m = out.find(marker); m != std::string::npos) {
        const auto eol = out.find('\n', m);
        if (eol == std::string::npos) {
            out += '\n';
            at = out.size();
        } else {
            at = eol + 1;
        }
    }
    out.insert(at, std::string(note) + "\n");
    return out;
}

std::string_view role_name(int level)
{
    if (level >= 50) return "Owner";
    if (level >= maintainer_access) return "Maintainer";
    if (level >= developer_access) return "Developer";
    if (level >= 20) return "Reporter";
    if (level >= 15) return "Planner";
    if (level >= 10) return "Guest";
    return "no access";
}

class acceptor {
public:
    acceptor(const accept_options& opt, std::ostream& log)
        : opt_(opt), log_(log), env_(model::gitlab_env::from_environment())
    {}

    accept_result run()
    {
        check_environment();
        api_.emplace(env_.api_base(), env_.token, env_.tls_ca_file, opt_.retry);
        const json note = api_->call("GET", fmt::format("{}/{}", notes_path(), opt_.note_id));
        const auto reason = note.is_object() && note.value("system", false) ? std::nullopt
                                                                            : request_reason(string_at(note, "body"));
        if (!reason) {
            result_.why = fmt::format("note {} does not start with '{}'", opt_.note_id, accept_command);
            log_ << fmt::format("perfgate accept: {}; nothing to do\n", result_.why);
            return std::move(result_);
        }
        result_.reason = *reason;
        const json author = note.value("author", json::object());
        result_.username = string_at(author, "username");
        const auto user_id = int_at(author, "id");
        if (!user_id || *user_id <= 0 || !is_username(result_.username))
            throw error(errors::gitlab_bad_response,
                        fmt::format("note {}: no author id and username in GitLab's answer", opt_.note_id));
        result_.access_level = access_level_of(*user_id);
        if (result_.access_level < opt_.min_access_level) {
            deny();
            return std::move(result_);
        }
        accept();
        return std::move(result_);
    }

private:
    void check_environment()
    {
        std::vector<std::string> missing;
        if (env_.api_base().empty()) missing.emplace_back("CI_API_V4_URL (or CI_SERVER_URL)");
        if (env_.project_id.empty()) missing.emplace_back("CI_PROJECT_ID");
        if (env_.token.empty()) missing.emplace_back("PERFGATE_GITLAB_TOKEN");
        const std::string iid = opt_.mr_iid.value_or(env_.mr_iid);
        if (iid.empty()) missing.emplace_back("CI_MERGE_REQUEST_IID (or --merge-request)");
        if (opt_.note_id.empty()) missing.emplace_back("PERFGATE_NOTE_ID (or --note-id)");
        if (!missing.empty())
            throw error(errors::input_gitlab_env,
                        fmt::format("{} not set: perfgate accept --gitlab runs inside GitLab CI",
                                    fmt::join(missing, ", ")));
        // Each goes into an API path: numbers only, checked before any request.
        const auto check = [](std::string_view name, const std::string& value) {
            if (!is_id(value))
                throw error(
                    errors::input_gitlab_env,
                    fmt::format("{} {} is not a positive number: nothing sent to GitLab", name,
                                json(value.substr(0, 100)).dump(-1, ' ', true, json::error_handler_t::replace)));
        };
        check("CI_PROJECT_ID", env_.project_id);
        check("the merge request iid", iid);
        check("the note id", opt_.note_id);
        result_.mr_iid = std::stoll(iid);
    }

    std::string notes_path() const
    {
        return fmt::format("/projects/{}/merge_requests/{}/notes", env_.project_id, result_.mr_iid);
    }

    // GET /projects/:id/members/all/:user_id; a 404 (not a member, directly
    // or through a group) is no access.
    int access_level_of(std::int64_t user_id)
    {
        json answer;
        try {
            answer = api_->call("GET", fmt::format("/projects/{}/members/all/{}", env_.project_id, user_id));
        } catch (const error& e) {
            if (e.id() == errors::gitlab_http.view() &&
                std::string_view(e.what()).find("HTTP 404:") != std::string::npos)
                return 0;
            throw;
        }
        // GitLab's levels run from 0 (no access) to 60 (admin); anything else is not an answer.
        constexpr std::int64_t max_access_level = 100;
        const auto answered = int_at(answer, "access_level");
        if (!answered || *answered < 0 || *answered > max_access_level)
            throw error(errors::gitlab_bad_response,
                        fmt::format("GET members/all/{}: no access_level from 0 to 100 in the answer", user_id));
        const int level = static_cast<int>(*answered);
        log_ << fmt::format("perfgate accept: @{} is {} ({}) in project {}\n", result_.username, role_name(level),
                            level, env_.project_id);
        return level;
    }

    void deny()
    {
        result_.outcome = accept_outcome::denied;
        result_.why = fmt::format("@{} is {} ({}); accepting a regression needs {} ({}) or higher", result_.username,
                                  role_name(result_.access_level), result_.access_level,
                                  role_name(opt_.min_access_level), opt_.min_access_level);
        const json payload = {
            {"body", fmt::format("@{} perfgate did not accept the regression: accepting needs the {} role or higher "
                                 "in this project, and yours is {}. Nothing changed: the commit status and the "
                                 "perfgate note stay as they are. Ask a maintainer to comment `{} <reason>`.",
                                 result_.username, role_name(opt_.min_access_level), role_name(result_.access_level),
                                 accept_command)}};
        api_->call("POST", notes_path(), &payload, nullptr, replay::forbidden);
        result_.reply_posted = true;
        log_ << fmt::format("perfgate accept: {}: replied on !{}, nothing else changed\n", result_.why, result_.mr_iid);
    }

    void accept()
    {
        const std::string mr_path = fmt::format("/projects/{}/merge_requests/{}", env_.project_id, result_.mr_iid);
        const json mr = api_->call("GET", mr_path);
        result_.head_sha = string_at(mr, "sha");
        if (!model::is_full_commit_sha(result_.head_sha))
            throw error(errors::gitlab_bad_response,
                        fmt::format("GET {}: sha is not a commit id: cannot tell which commit to accept", mr_path));
        if (string_at(mr, "state") != "opened")
            warn(fmt::format("!{} is {}: accepting its head {} anyway", result_.mr_iid, string_at(mr, "state"),
                             result_.head_sha));
        std::string target_url = env_.run_url();
        if (opt_.store) {
            auto [stored, url] = opt_.store(result_.head_sha, result_.username, result_.reason);
            result_.stored = std::move(stored);
            if (!url.empty()) target_url = std::move(url);
            log_ << fmt::format("perfgate accept: stored with comparison {}\n", result_.stored->comparison_id);
        }
        std::string description = fmt::format("accepted by @{}", result_.username);
        if (!result_.reason.empty()) description += ": " + result_.reason;
        json status = {{"state", "success"},
                       {"name", opt_.context},
                       {"description", detail::cut(description, status_description_limit)}};
        if (!target_url.empty()) status["target_url"] = target_url;
        api_->call("POST", fmt::format("/projects/{}/statuses/{}", env_.project_id, result_.head_sha), &status);
        result_.status_posted = true;
        result_.outcome = accept_outcome::accepted;
        log_ << fmt::format("perfgate accept: commit status '{}' success on {}: accepted by @{}\n", opt_.context,
                            result_.head_sha, result_.username);
        try {
            note_in_sticky();
        } catch (const std::exception& e) {
            warn(fmt::format("could not update the perfgate note on !{}: {}", result_.mr_iid, e.what()));
        }
    }

    void note_in_sticky()
    {
        const std::string marker = note_marker(opt_.context);
        model::acceptance a;
        if (result_.stored) a = *result_.stored;
        a.head_sha = result_.head_sha;
        a.login = result_.username;
        a.reason = result_.reason;
        const std::string note = report::render_acceptance_note(a, opt_.context);
        const std::string self = detail::own_username(*api_, opt_.note_author);
        if (auto existing = detail::find_own_note(*api_, env_.project_id, result_.mr_iid, marker, self)) {
            const json payload = {{"body", with_note(existing->second, marker, note)}};
            api_->call("PUT", fmt::format("{}/{}", notes_path(), existing->first), &payload);
        } else {
            const json payload = {{"body", marker + "\n" + note}};
            api_->call("POST", notes_path(), &payload, nullptr, replay::forbidden);
        }
        result_.note_updated = true;
    }

    void warn(const std::string& msg)
    {
        result_.warnings.push_back(msg);
        log_ << "perfgate accept: warning: " << msg << "\n";
    }

    const accept_options& opt_;
    std::ostream& log_;
    model::gitlab_env env_;
    std::optional<gitlab_api> api_;
    accept_result result_;
};

} // namespace

bool is_username(std::string_view name) { return model::is_gitlab_username(name); }

accept_result accept_regression(const accept_options& opt, std::ostream& log) { return acceptor(opt, log).run(); }

} // namespace perfgate::gitlab
