#include "github/accept.hpp"

#include <algorithm>
#include <cctype>
#include <ostream>

#include <fmt/format.h>

#include "github/comments.hpp"
#include "github/json_fields.hpp"
#include "github/publish.hpp"
#include "model/error.hpp"
#include "model/github_actions.hpp"
#include "model/text.hpp"
#include "model/utf8.hpp"
#include "report/render.hpp"

namespace perfgate::github {

using detail::int_at;
using detail::object_at;
using detail::string_at;
using nlohmann::json;

namespace {


// GitHub's timestamps are "YYYY-MM-DDTHH:MM:SSZ" (UTC): compared as text.
bool is_github_time(std::string_view t)
{
    if (t.size() != 20) return false;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const char c = t[i];
        const char want = i == 4 || i == 7 ? '-' : i == 10 ? 'T' : i == 13 || i == 16 ? ':' : i == 19 ? 'Z' : '0';
        if (want == '0' ? !std::isdigit(static_cast<unsigned char>(c)) : c != want) return false;
    }
    return true;
}

// The permissions that may accept: GitHub's `permission` field is admin,
// write, read or none, with maintain read as write and triage as read
// (GET /repos/{owner}/{repo}/collaborators/{username}/permission).
bool may_accept(std::string_view permission) { return permission == "admin" || permission == "write"; }

class acceptor {
public:
    acceptor(const accept_options& opt, std::ostream& log)
        : opt_(opt), log_(log), env_(model::github_env::from_environment())
    {}

    accept_result run()
    {
        check_environment();
        const json payload = read_payload();
        if (!read_request(payload)) {
            log_ << fmt::format("perfgate accept: {}; nothing to do\n", result_.why);
            return std::move(result_);
        }
        api_.emplace(env_.api_url, env_.token, opt_.retry);
        result_.permission = permission_of(result_.login);
        if (!may_accept(result_.permission)) {
            deny();
            return std::move(result_);
        }
        accept();
        return std::move(result_);
    }

private:
    void check_environment() const
    {
        std::vector<std::string> missing;
        if (env_.api_url.empty()) missing.emplace_back("GITHUB_API_URL");
        if (env_.repository.empty()) missing.emplace_back("GITHUB_REPOSITORY");
        if (env_.token.empty()) missing.emplace_back("GITHUB_TOKEN");
        if (opt_.event_path.value_or(env_.event_path).empty()) missing.emplace_back("GITHUB_EVENT_PATH");
        if (opt_.event_name.value_or(env_.event_name).empty()) missing.emplace_back("GITHUB_EVENT_NAME");
        if (!missing.empty()) {
            throw error(errors::input_github_env,
                        fmt::format("{} not set: perfgate accept runs inside GitHub Actions (pass the token "
                                    "through env: GITHUB_TOKEN)",
                                    fmt::join(missing, ", ")));
        }
        // It goes into every API path: owner/name, GitHub's characters only.
        const auto slash = env_.repository.find('/');
        const bool ok = slash != std::string::npos && slash > 0 && slash + 1 < env_.repository.size() &&
                        env_.repository.find('/', slash + 1) == std::string::npos &&
                        env_.repository.find("..") == std::string::npos &&
                        std::all_of(env_.repository.begin(), env_.repository.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
                                   c == '/';
                        });
        if (!ok) {
            throw error(
                errors::input_github_env,
                fmt::format("GITHUB_REPOSITORY {} is not owner/name",
                            json(env_.repository.substr(0, 100)).dump(-1, ' ', true, json::error_handler_t::replace)));
        }
    }

    json read_payload()
    {
        path_ = opt_.event_path.value_or(env_.event_path);
        event_name_ = opt_.event_name.value_or(env_.event_name);
        const model::event_file file = model::read_event_file(path_);
        if (file.state == model::event_file::outcome::unreadable)
            throw error(errors::input_github_event, fmt::format("{}: cannot read the GitHub event payload", path_));
        if (file.state == model::event_file::outcome::not_json || !file.payload.is_object())
            throw error(errors::input_github_event, fmt::format("{}: the event payload is not a JSON object", path_));
        return file.payload;
    }

    // Fills login, pr_number and reason from the event; false (with why)
    // when it is not a request to accept.
    bool read_request(const json& payload)
    {
        const std::string action = string_at(payload, "action");
        if (event_name_ == "issue_comment") {
            const json& issue = object_at(payload, "issue");
            if (action != "created") return ignore(fmt::format("an issue_comment event of action '{}'", action));
            if (!issue.contains("pull_request")) return ignore("a comment on an issue, not on a pull request");
            const json& comment = object_at(payload, "comment");
            const auto reason = accept_request_reason(string_at(comment, "body"));
            if (!reason) return ignore(fmt::format("the comment does not start with '{}'", accept_command));
            result_.reason = *reason;
            result_.login = string_at(object_at(comment, "user"), "login");
            result_.pr_number = int_at(issue, "number");
            require_request("issue.number", "comment.user.login");
            commented_at_ = string_at(comment, "created_at");
            if (!is_github_time(commented_at_)) {
                throw error(errors::input_github_event,
                            fmt::format("{}: comment.created_at is not a GitHub time (YYYY-MM-DDTHH:MM:SSZ): cannot "
                                        "tell which head the comment was made on",
                                        path_));
            }
            return true;
        }
        if (event_name_ == "pull_request" || event_name_ == "pull_request_target") {
            if (action != "labeled") return ignore(fmt::format("a {} event of action '{}'", event_name_, action));
            const std::string label = string_at(object_at(payload, "label"), "name");
            if (label != accept_label) return ignore(fmt::format("the label is not '{}'", accept_label));
            result_.reason = std::string(label_reason);
            result_.login = string_at(object_at(payload, "sender"), "login");
            result_.pr_number = int_at(object_at(payload, "pull_request"), "number");
            require_request("pull_request.number", "sender.login");
            // The head the label was put on (the event's, not the job's).
            labeled_head_ = string_at(object_at(object_at(payload, "pull_request"), "head"), "sha");
            if (!model::is_full_commit_sha(labeled_head_)) {
                throw error(errors::input_github_event,
                            fmt::format("{}: pull_request.head.sha is not a commit id: cannot tell which head the "
                                        "label was put on",
                                        path_));
            }
            return true;
        }
        throw error(errors::input_github_event,
                    fmt::format("{}: perfgate accept runs on issue_comment and pull_request (labeled) events, not "
                                "'{}'",
                                path_, event_name_.substr(0, 64)));
    }

    bool ignore(std::string why)
    {
        result_.outcome = accept_outcome::ignored;
        result_.why = std::move(why);
        return false;
    }

    void require_request(std::string_view number_field, std::string_view login_field) const
    {
        if (!result_.pr_number || *result_.pr_number <= 0) {
            throw error(errors::input_github_event,
                        fmt::format("{}: the {} event has no positive {}", path_, event_name_, number_field));
        }
        // It goes into an API path and a comment: a GitHub login only.
        if (!model::is_github_login(result_.login)) {
            throw error(errors::input_github_event, fmt::format("{}: {} is not a GitHub login", path_, login_field));
        }
    }

    // GET .../collaborators/{login}/permission; a 404 (no such user, or
    // not one GitHub reports on) is no permission.
    std::string permission_of(const std::string& login)
    {
        const std::string path = fmt::format("/repos/{}/collaborators/{}/permission", env_.repository, login);
        json answer;
        try {
            answer = api_->call("GET", path);
        } catch (const error& e) {
            if (e.id() == errors::github_http.view() &&
                std::string_view(e.what()).find("HTTP 404:") != std::string::npos)
                return "none";
            throw;
        }
        std::string permission = string_at(answer, "permission");
        if (permission.empty()) {
            throw error(errors::github_bad_response,
                        fmt::format("GET {}: no permission in the answer: cannot tell whether @{} may accept", path,
                                    login));
        }
        log_ << fmt::format("perfgate accept: @{} has {} permission on {} (role {})\n", login, permission,
                            env_.repository, string_at(answer, "role_name"));
        return permission;
    }

    void deny()
    {
        result_.outcome = accept_outcome::denied;
        result_.why = fmt::format("@{} has {} permission on {}; accepting a regression needs write, maintain or admin",
                                  result_.login, result_.permission, env_.repository);
        const std::string body = fmt::format(
            "@{} perfgate did not accept the regression: accepting needs write, maintain or admin permission on "
            "this repository, and yours is {}. Nothing changed: the commit status and the perfgate comment stay "
            "as they are. Ask a maintainer to comment `{} <reason>`.",
            result_.login, report::markdown_literal(result_.permission), accept_command);
        const json payload = {{"body", body}};
        api_->call("POST", fmt::format("/repos/{}/issues/{}/comments", env_.repository, *result_.pr_number), &payload,
                   nullptr, "pull-requests: write", replay::forbidden);
        result_.reply_posted = true;
        log_ << fmt::format("perfgate accept: {}: replied on PR #{}, nothing else changed\n", result_.why,
                            *result_.pr_number);
    }

    void accept()
    {
        const std::int64_t pr = *result_.pr_number;
        result_.head_sha = head_sha_of(pr);
        // Issue 43, finding 6: accept the commit the maintainer saw, never a
        // head pushed after the request.
        if (const auto moved = head_moved()) {
            refuse_moved(*moved);
            return;
        }
        std::string target_url = env_.run_url();
        if (opt_.store) {
            auto [stored, url] = opt_.store(result_.head_sha, result_.login, result_.reason);
            result_.stored = std::move(stored);
            if (!url.empty()) target_url = std::move(url);
            log_ << fmt::format("perfgate accept: stored with comparison {}\n", result_.stored->comparison_id);
        }
        json status = {{"state", "success"},
                       {"context", opt_.context},
                       {"description", acceptance_description(result_.login, result_.reason)}};
        if (!target_url.empty()) status["target_url"] = target_url;
        api_->call("POST", fmt::format("/repos/{}/statuses/{}", env_.repository, result_.head_sha), &status, nullptr,
                   "statuses: write");
        result_.status_posted = true;
        result_.outcome = accept_outcome::accepted;
        log_ << fmt::format("perfgate accept: commit status '{}' success on {}: accepted by @{}\n", opt_.context,
                            result_.head_sha, result_.login);
        try {
            note_in_comment(pr);
        } catch (const std::exception& e) {
            warn(fmt::format("could not update the perfgate comment on PR #{}: {}", pr, e.what()));
        }
    }

    // Why the head now is not the one the request was made on, or nullopt.
    // A label names its head in the event. A comment does not: the head it
    // was made on is the one whose gate verdict (our status context) existed
    // when it was written, so the head now must have a status of ours
    // created at or before the comment's created_at. A push after the
    // comment has none (its gate ran later); a comment written while the
    // head's gate was still running saw the previous verdict. Only the
    // newest 100 statuses of the commit are read: a commit with more is
    // refused rather than guessed.
    std::optional<std::string> head_moved()
    {
        if (!labeled_head_.empty()) {
            if (labeled_head_ == result_.head_sha) return std::nullopt;
            return fmt::format("the label was put on {} and the head is now {}", labeled_head_.substr(0, 12),
                               result_.head_sha.substr(0, 12));
        }
        const std::string path = fmt::format("/repos/{}/commits/{}/statuses?per_page=100", env_.repository,
                                             result_.head_sha);
        const json statuses = api_->call("GET", path);
        if (!statuses.is_array()) {
            throw error(errors::github_bad_response,
                        fmt::format("GET {}: not a list of statuses: cannot tell which head the comment saw", path));
        }
        std::string first; // our context's earliest status on the head
        for (const auto& st : statuses) {
            if (!st.is_object() || string_at(st, "context") != opt_.context) continue;
            const std::string at = string_at(st, "created_at");
            if (is_github_time(at) && (first.empty() || at < first)) first = at;
        }
        if (first.empty()) {
            return fmt::format("the head {} has no '{}' status: it was not gated when the comment was written ({})",
                               result_.head_sha.substr(0, 12), opt_.context, commented_at_);
        }
        // Both are YYYY-MM-DDTHH:MM:SSZ (is_github_time): text order is time order.
        if (first > commented_at_) {
            return fmt::format("the head {} was gated at {}, after the comment ({})", result_.head_sha.substr(0, 12),
                               first, commented_at_);
        }
        return std::nullopt;
    }

    void refuse_moved(const std::string& why)
    {
        result_.outcome = accept_outcome::denied;
        result_.why = fmt::format("the pull request's head moved after the request: {}", why);
        const std::string body = fmt::format(
            "@{} perfgate did not accept: the pull request's head moved after your request ({}). Nothing changed: "
            "look at the gate's verdict on the new head and ask again (`{} <reason>`).",
            result_.login, report::markdown_literal(why), accept_command);
        const json payload = {{"body", body}};
        api_->call("POST", fmt::format("/repos/{}/issues/{}/comments", env_.repository, *result_.pr_number), &payload,
                   nullptr, "pull-requests: write", replay::forbidden);
        result_.reply_posted = true;
        log_ << fmt::format("perfgate accept: {}: replied on PR #{}, nothing else changed\n", result_.why,
                            *result_.pr_number);
    }

    std::string head_sha_of(std::int64_t pr)
    {
        const std::string path = fmt::format("/repos/{}/pulls/{}", env_.repository, pr);
        json answer;
        try {
            answer = api_->call("GET", path);
        } catch (const error& e) {
            if (e.id() == errors::github_http.view() &&
                std::string_view(e.what()).find("HTTP 404:") != std::string::npos) {
                throw error(errors::github_http,
                            fmt::format("pull request #{} not found in {}: {}", pr, env_.repository, e.what()));
            }
            throw;
        }
        std::string sha = string_at(object_at(answer, "head"), "sha");
        if (!model::is_full_commit_sha(sha)) {
            throw error(errors::github_bad_response,
                        fmt::format("GET {}: head.sha is not a commit id: cannot tell which commit to accept", path));
        }
        if (string_at(answer, "state") != "open") {
            warn(fmt::format("PR #{} is {}: accepting its head {} anyway", pr, string_at(answer, "state"), sha));
        }
        return sha;
    }

    void note_in_comment(std::int64_t pr)
    {
        const std::string marker = comment_marker(opt_.context);
        model::acceptance a;
        if (result_.stored) a = *result_.stored;
        a.head_sha = result_.head_sha;
        a.login = result_.login;
        a.reason = result_.reason;
        const std::string note = report::render_acceptance_note(a, opt_.context);
        const std::string self = detail::own_login(*api_, env_.token, opt_.comment_author);
        if (auto existing = detail::find_own_comment(*api_, env_.repository, pr, marker, self)) {
            const json payload = {{"body", with_acceptance_note(existing->second, marker, note)}};
            api_->call("PATCH", fmt::format("/repos/{}/issues/comments/{}", env_.repository, existing->first), &payload,
                       nullptr, "pull-requests: write");
            log_ << fmt::format("perfgate accept: noted in PR #{} comment {}\n", pr, existing->first);
        } else {
            const json payload = {{"body", marker + "\n" + note}};
            api_->call("POST", fmt::format("/repos/{}/issues/{}/comments", env_.repository, pr), &payload, nullptr,
                       "pull-requests: write", replay::forbidden);
            log_ << fmt::format("perfgate accept: PR #{} had no perfgate comment; posted the note\n", pr);
        }
        result_.comment_updated = true;
    }

    void warn(const std::string& msg)
    {
        result_.warnings.push_back(msg);
        log_ << "::warning title=perfgate::" << escape_command_data(msg) << "\n";
    }

    const accept_options& opt_;
    std::ostream& log_;
    model::github_env env_;
    std::string path_, event_name_;
    std::string commented_at_; // the comment's created_at (issue_comment)
    std::string labeled_head_; // the head the label was put on (pull_request labeled)
    std::optional<github_api> api_;
    accept_result result_;
};

} // namespace

std::optional<std::string> accept_request_reason(std::string_view comment_body)
{
    // A comment may start with blank lines or spaces; a reply quoting the
    // command ("> /perfgate accept") is not a request.
    const std::string_view body = model::trim(comment_body);
    if (!body.starts_with(accept_command)) return std::nullopt;
    std::string_view rest = body.substr(accept_command.size());
    if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t' && rest.front() != '\r' && rest.front() != '\n')
        return std::nullopt; // "/perfgate acceptable", "/perfgate accept-all"
    return model::clean_acceptance_reason(rest);
}

std::string with_acceptance_note(std::string_view body, std::string_view marker, std::string_view note)
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

std::string acceptance_description(std::string_view login, std::string_view reason)
{
    std::string d = fmt::format("accepted by @{}", login);
    if (!reason.empty()) d += fmt::format(": {}", reason);
    return detail::status_description(d);
}

accept_result accept_regression(const accept_options& opt, std::ostream& log) { return acceptor(opt, log).run(); }

} // namespace perfgate::github
