#include "github/github.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <locale>
#include <ostream>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "model/exit_code.hpp"
#include "client/http.hpp"
#include "model/error.hpp"
#include "report/render.hpp"

namespace perfgate::github {

using client::http_request;
using client::http_response;
using client::http_send;

using nlohmann::json;

namespace {

// GitHub's limits (docs.github.com/rest): an issue comment body holds at most
// 65,536 characters; a commit status description at most 140.
constexpr std::size_t comment_limit = 65536;
constexpr std::size_t description_limit = 140;
// A job summary may hold 1 MiB per step (docs.github.com, "Adding a job summary").
constexpr std::size_t summary_limit = 1024 * 1024;
// Annotations per kind: the UI shows at most 10 per step, so more is noise.
constexpr std::size_t max_annotations = 10;
// The comment list is read 100 at a time, GitHub's per_page maximum.
constexpr int comments_per_page = 100;
// GITHUB_TOKEN is an installation token of the GitHub Actions app: its prefix
// (github.blog 2021-04-05, "Behind GitHub's new authentication token
// formats") and the login its comments carry.
constexpr std::string_view installation_token_prefix = "ghs_";
constexpr std::string_view actions_bot_login = "github-actions[bot]";

std::string env_or_empty(const char* name)
{
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

// Cuts s to at most max_chars Unicode characters, never inside a UTF-8 sequence.
std::string utf8_truncate(std::string_view s, std::size_t max_chars)
{
    std::size_t chars = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;   // continuation byte
        if (chars == max_chars) return std::string(s.substr(0, i));
        ++chars;
    }
    return std::string(s);
}

std::size_t utf8_length(std::string_view s)
{
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// GitHub's error text: "message" plus any per-field "errors[].message".
std::string github_message(const std::string& body)
{
    json j = json::parse(body, nullptr, false);
    if (!j.is_object() || !j.contains("message") || !j["message"].is_string()) {
        return body.size() > 200 ? body.substr(0, 200) + "..." : body;
    }
    std::string out = j["message"].get<std::string>();
    if (j.contains("errors") && j["errors"].is_array()) {
        for (const auto& e : j["errors"]) {
            if (e.is_object() && e.contains("message") && e["message"].is_string()) {
                out += ": " + e["message"].get<std::string>();
            }
        }
    }
    return out;
}

// The URL with rel="next" in an RFC 8288 Link header, as GitHub paginates.
std::string link_next(const std::string& link)
{
    std::size_t pos = 0;
    while (pos < link.size()) {
        auto open = link.find('<', pos);
        if (open == std::string::npos) break;
        auto close = link.find('>', open);
        if (close == std::string::npos) break;
        auto end = link.find(',', close);
        std::string params = link.substr(close + 1, end == std::string::npos ? std::string::npos : end - close - 1);
        if (params.find("rel=\"next\"") != std::string::npos || params.find("rel=next") != std::string::npos) {
            return link.substr(open + 1, close - open - 1);
        }
        if (end == std::string::npos) break;
        pos = end + 1;
    }
    return {};
}

std::optional<long long> header_int(const http_response& res, std::string_view name)
{
    auto v = res.header(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    long long n = std::strtoll(v->c_str(), &end, 10);
    if (v->empty() || *end != '\0') return std::nullopt;
    return n;
}

std::string permission_hint(std::string_view permission)
{
    return fmt::format(
        "the token lacks the `{}` permission. Add `permissions: {{ pull-requests: write, statuses: write }}` "
        "to the job; pull requests from forks only get a read-only token, so use the workflow_run split "
        "(ci/examples/fork-measure.yml + ci/examples/fork-publish.yml)",
        permission.empty() ? "write" : permission);
}

} // namespace

// ---------------------------------------------------------------- environment

github_env github_env::from_environment()
{
    github_env e;
    e.api_url = env_or_empty("GITHUB_API_URL");
    e.server_url = env_or_empty("GITHUB_SERVER_URL");
    e.repository = env_or_empty("GITHUB_REPOSITORY");
    e.event_name = env_or_empty("GITHUB_EVENT_NAME");
    e.event_path = env_or_empty("GITHUB_EVENT_PATH");
    e.token = env_or_empty("GITHUB_TOKEN");
    e.sha = env_or_empty("GITHUB_SHA");
    e.run_id = env_or_empty("GITHUB_RUN_ID");
    e.step_summary = env_or_empty("GITHUB_STEP_SUMMARY");
    e.output = env_or_empty("GITHUB_OUTPUT");
    while (e.api_url.ends_with('/')) e.api_url.pop_back();
    return e;
}

std::string github_env::run_url() const
{
    if (server_url.empty() || repository.empty() || run_id.empty()) return {};
    return fmt::format("{}/{}/actions/runs/{}", server_url, repository, run_id);
}

namespace {

// The commit-less SHA of a deleted branch's push ("after": 000...0).
bool is_null_sha(const std::string& sha)
{
    return sha.find_first_not_of('0') == std::string::npos;
}

std::string string_at(const json& o, const char* key)
{
    return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

std::optional<std::int64_t> int_at(const json& o, const char* key)
{
    if (!o.is_object() || !o.contains(key) || !o[key].is_number_integer()) return std::nullopt;
    return o[key].get<std::int64_t>();
}

const json& object_at(const json& o, const char* key)
{
    static const json none = json::object();
    return o.is_object() && o.contains(key) && o[key].is_object() ? o[key] : none;
}

bool iequals(std::string_view a, std::string_view b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
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
        throw error("input.github_event",
                    fmt::format("{}: a {} event without pull_request.number", src.path, t.event_name));
    }
    t.head_sha = string_at(object_at(pr, "head"), "sha");
    if (t.head_sha.empty()) {
        t.warnings.push_back(fmt::format("{}: no pull_request.head.sha: no commit status (GITHUB_SHA is not the PR "
                                         "head on {})",
                                         src.path, t.event_name));
    }
}

void read_workflow_run(const json& payload, const event_source& src, event_target& t)
{
    if (!payload.contains("workflow_run") || !payload["workflow_run"].is_object()) {
        throw error("input.github_event", fmt::format("{}: a workflow_run event without workflow_run", src.path));
    }
    const json& run = payload["workflow_run"];
    t.head_sha = string_at(run, "head_sha");
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
        if (!t.head_sha.empty() && string_at(object_at(pr, "head"), "sha") == t.head_sha && based_here(pr, payload, src)) {
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
        return "pull_request";   // the fork split: the measuring run's saved event
    }
    return src.name;
}

} // namespace

event_target read_event(const event_source& src)
{
    std::ifstream in(src.path);
    if (!in) throw error("input.github_event", fmt::format("{}: cannot read the GitHub event payload", src.path));
    json payload = json::parse(in, nullptr, false);
    if (!payload.is_object()) {
        throw error("input.github_event", fmt::format("{}: the event payload is not a JSON object", src.path));
    }

    event_target t;
    t.event_name = effective_event_name(payload, src);
    const std::string& name = t.event_name;
    if (name == "pull_request" || name == "pull_request_target") {
        read_pull_request(payload, src, t);
    } else if (name == "workflow_run") {
        read_workflow_run(payload, src, t);
    } else if (name == "push") {
        t.head_sha = string_at(payload, "after");
        if (is_null_sha(t.head_sha)) t.head_sha = src.fallback_sha;   // a deleted branch: "after" is no commit
    } else if (name == "merge_group") {
        t.head_sha = string_at(object_at(payload, "merge_group"), "head_sha");
        if (t.head_sha.empty()) t.head_sha = src.fallback_sha;
    } else if (name == "workflow_dispatch" || name == "schedule") {
        t.head_sha = src.fallback_sha;
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

event_source event_source_for(const github_env& env, const github_options& opt)
{
    event_source src;
    src.path = opt.event_path.value_or(env.event_path);
    src.saved = opt.event_path.has_value();
    src.name = opt.event_name.value_or(env.event_name);
    src.repository = env.repository;
    src.api_url = env.api_url;
    src.fallback_sha = env.sha;
    return src;
}

// ---------------------------------------------------------------- API client

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A secondary rate limit that names no time to wait: "wait for at least one
// minute before retrying", exponentially longer if it persists
// (docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api,
// "Handle rate limit errors appropriately").
constexpr seconds secondary_limit_wait{60};
// A shift bound for the exponential waits: 2^20 times anything is beyond any budget.
constexpr int max_doublings = 20;

bool contains_icase(std::string_view text, std::string_view word)
{
    return std::search(text.begin(), text.end(), word.begin(), word.end(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           }) != text.end();
}

// An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the HTTP date form
// servers send (RFC 9110 §5.6.7); the obsolete forms are not read.
std::optional<std::chrono::system_clock::time_point> parse_http_date(const std::string& text)
{
    std::tm tm{};
    std::istringstream in(text);
    in.imbue(std::locale::classic());
    std::string zone;
    in >> std::get_time(&tm, "%a, %d %b %Y %H:%M:%S") >> zone;
    if (in.fail() || zone != "GMT") return std::nullopt;
    const std::time_t t = ::timegm(&tm);
    if (t == static_cast<std::time_t>(-1)) return std::nullopt;
    return std::chrono::system_clock::from_time_t(t);
}

// retry-after as delay-seconds or an HTTP date (RFC 9110 §10.2.3).
std::optional<milliseconds> retry_after(const http_response& res, std::chrono::system_clock::time_point now)
{
    if (auto delay = header_int(res, "retry-after")) return seconds(std::max(0LL, *delay));
    auto text = res.header("retry-after");
    if (!text) return std::nullopt;
    auto when = parse_http_date(*text);
    if (!when) return std::nullopt;
    return std::max(milliseconds(0), std::chrono::ceil<milliseconds>(*when - now));
}

// A 429 is always a rate limit. A 403 is one when GitHub says so (headers,
// or "rate limit" / the older "abuse detection" in the message); any other
// 403 is a permission problem that waiting does not fix.
bool is_rate_limit(const http_response& res, const std::string& message)
{
    if (res.status == 429) return true;
    if (res.status != 403) return false;
    return res.header("retry-after") || header_int(res, "x-ratelimit-remaining") == 0LL ||
           contains_icase(message, "rate limit") || contains_icase(message, "abuse detection");
}

} // namespace

github_api::github_api(std::string api_url, std::string token, retry_policy retry)
    : api_url_(std::move(api_url)), token_(std::move(token)), retry_(std::move(retry))
{
    while (api_url_.ends_with('/')) api_url_.pop_back();
    if (!retry_.sleep) retry_.sleep = [](milliseconds d) { std::this_thread::sleep_for(d); };
    if (!retry_.now) retry_.now = [] { return std::chrono::system_clock::now(); };
}

json github_api::call(std::string_view method, const std::string& path_or_url, const json* body,
                      std::string* next_url, std::string_view permission, replay mode)
{
    http_request req;
    req.method = std::string(method);
    req.url = path_or_url.starts_with("http://") || path_or_url.starts_with("https://") ? path_or_url
                                                                                           : api_url_ + path_or_url;
    req.timeout = retry_.timeout;
    req.headers = {{"Authorization", "Bearer " + token_},
                   {"Accept", "application/vnd.github+json"},
                   {"X-GitHub-Api-Version", "2022-11-28"}};
    if (body) {
        req.body = body->dump();
        req.headers.emplace_back("Content-Type", "application/json");
    }
    const std::string what = fmt::format("{} {}", method, req.url);
    const std::string_view not_replayed = "not sent again: it may have taken effect";

    milliseconds waited{0};   // all waits of this call, within retry_.max_wait
    int secondary_limits = 0;
    for (int attempt = 1;; ++attempt) {
        // Exponential backoff for failures: backoff, 2x, 4x, ...; the last
        // attempt, or a backoff beyond the wait budget, gives up.
        const milliseconds backoff(retry_.backoff.count() << std::min(attempt - 1, max_doublings));
        const bool last = attempt >= retry_.max_attempts || waited + backoff > retry_.max_wait;
        auto pause = [&](milliseconds d) {
            waited += d;
            retry_.sleep(d);
        };

        http_response res;
        try {
            res = http_send(req);
        } catch (const error& e) {
            if (e.id() != "http.unreachable") throw;
            if (mode == replay::forbidden) throw error("github.unreachable", fmt::format("{} ({})", e.what(), not_replayed));
            if (last) throw error("github.unreachable", fmt::format("{} (after {} attempts)", e.what(), attempt));
            pause(backoff);
            continue;
        }

        if (res.status >= 200 && res.status < 300) {
            if (next_url) *next_url = link_next(res.header("link").value_or(""));
            if (res.body.empty()) return nullptr;
            json j = json::parse(res.body, nullptr, false);
            if (j.is_discarded()) {
                throw error("github.bad_response", fmt::format("{}: HTTP {} with a body that is not JSON", what, res.status));
            }
            return j;
        }

        const std::string message = github_message(res.body);
        if (res.status >= 500) {
            if (mode == replay::forbidden) {
                throw error("github.server_error",
                            fmt::format("{}: HTTP {} ({}): {}", what, res.status, not_replayed, message));
            }
            if (last) {
                throw error("github.server_error",
                            fmt::format("{}: HTTP {} after {} attempts: {}", what, res.status, attempt, message));
            }
            pause(backoff);
            continue;
        }

        if (is_rate_limit(res, message)) {
            // What GitHub asks for, in its order of precedence (the docs above):
            // retry-after; else the primary limit's reset time; else a
            // secondary limit's minute, doubled each time it persists.
            milliseconds wait;
            std::string reason;
            if (auto after = retry_after(res, retry_.now())) {
                wait = *after;
                reason = "GitHub asks to wait";
            } else if (auto reset = header_int(res, "x-ratelimit-reset");
                       reset && header_int(res, "x-ratelimit-remaining") == 0LL) {
                const auto now = std::chrono::floor<seconds>(retry_.now().time_since_epoch()).count();
                wait = seconds(std::max(1LL, *reset - now + 1));
                reason = "the rate limit resets in";
            } else {
                wait = secondary_limit_wait * (1LL << std::min(secondary_limits++, max_doublings));
                reason = "a secondary rate limit waits";
            }
            if (waited + wait > retry_.max_wait) {
                throw error("github.rate_limited",
                            fmt::format("{}: rate limited (HTTP {}); {} {} s, more than the {} s left of the {} s "
                                        "perfgate waits: {}",
                                        what, res.status, reason, std::chrono::ceil<seconds>(wait).count(),
                                        std::chrono::floor<seconds>(retry_.max_wait - waited).count(),
                                        std::chrono::floor<seconds>(retry_.max_wait).count(), message));
            }
            if (attempt >= retry_.max_attempts) {
                throw error("github.rate_limited", fmt::format("{}: rate limited (HTTP {}) after {} attempts: {}",
                                                               what, res.status, attempt, message));
            }
            pause(wait);
            continue;
        }
        if ((res.status == 403 || res.status == 404) &&
            message.find("Resource not accessible by integration") != std::string::npos) {
            throw error("github.forbidden", fmt::format("{}: HTTP {} \"Resource not accessible by integration\": {}",
                                                        what, res.status, permission_hint(permission)));
        }
        throw error("github.http", fmt::format("{}: HTTP {}: {}", what, res.status, message));
    }
}

// ---------------------------------------------------------------- publishing

bool is_comment_mode(std::string_view mode)
{
    return std::find(std::begin(comment_modes), std::end(comment_modes), mode) != std::end(comment_modes);
}

std::string comment_marker(std::string_view context)
{
    // An HTML comment: invisible in the rendered PR, and "--" cannot occur in
    // one, so the context is sanitised.
    std::string safe(context);
    for (std::size_t p; (p = safe.find("--")) != std::string::npos;) safe.replace(p, 2, "-");
    std::replace(safe.begin(), safe.end(), '>', '_');
    return fmt::format("<!-- perfgate-comment: {} -->", safe);
}

std::string escape_command_data(std::string_view s)
{
    std::string out;
    for (char c : s) {
        if (c == '%') out += "%25";
        else if (c == '\r') out += "%0D";
        else if (c == '\n') out += "%0A";
        else out += c;
    }
    return out;
}

std::string escape_command_property(std::string_view s)
{
    std::string out;
    for (char c : escape_command_data(s)) {
        if (c == ':') out += "%3A";
        else if (c == ',') out += "%2C";
        else out += c;
    }
    return out;
}

std::string_view status_state(int exit_code)
{
    switch (exit_code) {
    case exit_pass: return "success";
    case exit_regression:
    case exit_inconclusive: return "failure";
    default: return "error";
    }
}

namespace {

class publisher {
public:
    publisher(const gate::report& r, int exit_code, const github_options& opt, std::ostream& log)
        : report_(r), exit_code_(exit_code), opt_(opt), log_(log), env_(github_env::from_environment())
    {}

    github_result run()
    {
        if (!is_comment_mode(opt_.comment)) {
            throw error("usage.bad_value", fmt::format("--comment: expected always, on-change, on-regression or never, "
                                                       "got '{}'",
                                                       opt_.comment));
        }
        // Local files first: whatever happens on the network, the verdict,
        // the summary and the outputs are already there.
        guarded("write the job summary", [&] { write_summary(); });
        guarded("write the step outputs", [&] { write_outputs(); });
        annotate();

        std::vector<std::string> missing;
        if (env_.api_url.empty()) missing.emplace_back("GITHUB_API_URL");
        if (env_.repository.empty()) missing.emplace_back("GITHUB_REPOSITORY");
        if (env_.token.empty()) missing.emplace_back("GITHUB_TOKEN");
        const event_source source = event_source_for(env_, opt_);
        if (source.path.empty()) missing.emplace_back("GITHUB_EVENT_PATH");
        if (source.name.empty()) missing.emplace_back("GITHUB_EVENT_NAME");
        if (!missing.empty()) {
            std::string msg = fmt::format("{} not set: cannot post the PR comment and commit status (run inside "
                                          "GitHub Actions and pass the token through env: GITHUB_TOKEN)",
                                          fmt::join(missing, ", "));
            if (opt_.require_environment) throw error("input.github_env", msg);
            warn(msg);
            return std::move(result_);
        }

        event_target target;
        try {
            target = read_event(source);
        } catch (const error& e) {
            if (opt_.require_environment) throw;
            warn(e.what());
            return std::move(result_);
        }
        for (const auto& w : target.warnings) warn(w);
        api_.emplace(env_.api_url, env_.token, opt_.retry);

        if (opt_.comment != "never") {
            if (target.pr_number) {
                guarded("post the PR comment", [&] { post_comment(*target.pr_number); });
            } else {
                log_ << "perfgate: no pull request in this event; no comment posted\n";
            }
        }
        if (target.head_sha.empty()) {
            // An event that names no commit has said why above.
            if (target.warnings.empty()) warn("no commit SHA in the event or GITHUB_SHA: no commit status posted");
        } else {
            guarded("post the commit status", [&] { post_status(target.head_sha); });
        }
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
        log_ << "::warning title=perfgate::" << escape_command_data(msg) << "\n";
    }

    std::string link_target() const { return opt_.comparison_url.value_or(env_.run_url()); }

    std::string render(std::string marker, std::size_t limit) const
    {
        report::markdown_options mo;
        mo.marker = std::move(marker);
        mo.run_url = env_.run_url();
        mo.comparison_url = opt_.comparison_url.value_or("");
        // The run page lists its artifacts; they are uploaded after this
        // step, under the name the workflow gave (ci/action.yml).
        if (opt_.artifact_name && !mo.run_url.empty()) {
            mo.artifacts_url = mo.run_url + "#artifacts";
            mo.artifact_name = *opt_.artifact_name;
        }
        mo.max_chars = limit;
        return report::render_markdown(report_, mo);
    }

    void write_summary()
    {
        if (env_.step_summary.empty()) return;
        std::ofstream out(env_.step_summary, std::ios::app);
        if (!out) throw error("io.write", fmt::format("{}: cannot open GITHUB_STEP_SUMMARY for appending", env_.step_summary));
        out << render({}, summary_limit) << "\n";
        if (!out.flush()) throw error("io.write", fmt::format("{}: write failed", env_.step_summary));
    }

    void write_outputs()
    {
        if (env_.output.empty()) return;
        std::ofstream out(env_.output, std::ios::app);
        if (!out) throw error("io.write", fmt::format("{}: cannot open GITHUB_OUTPUT for appending", env_.output));
        // name<<DELIMITER ... DELIMITER, multi-line safe as long as the
        // delimiter is not in the value (docs.github.com, "Multiline strings").
        std::random_device rd;
        auto write = [&](std::string_view name, const std::string& value) {
            std::string delim;
            do delim = fmt::format("ghadelimiter_{:016x}", (std::uint64_t{rd()} << 32) | rd());
            while (value.find(delim) != std::string::npos);
            out << name << "<<" << delim << "\n" << value << "\n" << delim << "\n";
        };
        write("verdict", std::string(gate::to_string(report_.result)));
        write("report-path", opt_.report_path);
        write("comparison-url", opt_.comparison_url.value_or(""));
        write("exit-code", std::to_string(exit_code_));
        if (!out.flush()) throw error("io.write", fmt::format("{}: write failed", env_.output));
    }

    void annotate()
    {
        std::size_t errors = 0, total = 0;
        for (const auto& b : report_.benchmarks) {
            for (const auto& c : b.counters) {
                if (!c.gated || c.state != gate::status::regression) continue;
                ++total;
                if (errors == max_annotations) continue;
                ++errors;
                std::string delta = c.delta_pct ? fmt::format("{:+.2f}%", *c.delta_pct) : "n/a";
                std::string p = c.p_adjusted ? fmt::format(", p_adj {:.3g}", *c.p_adjusted) : "";
                log_ << "::error title=" << escape_command_property(fmt::format("perfgate: {} regressed", b.name))
                     << "::" << escape_command_data(fmt::format("{}/{}: median {} (threshold {}%){}", b.name, c.name,
                                                                delta, c.threshold_pct, p))
                     << "\n";
            }
        }
        if (total > errors) log_ << fmt::format("::error title=perfgate::... and {} more regressions\n", total - errors);
        std::size_t shown = 0;
        for (const auto& w : report_.warnings) {
            if (shown == max_annotations) {
                log_ << fmt::format("::warning title=perfgate::... and {} more warnings\n", report_.warnings.size() - shown);
                break;
            }
            ++shown;
            log_ << "::warning title=perfgate::" << escape_command_data(w) << "\n";
        }
    }

    bool has_change() const
    {
        return report_.count(gate::status::regression) + report_.count(gate::status::improvement) > 0;
    }

    // The login our comments are written by. GITHUB_TOKEN is an installation
    // token (ghs_) of the GitHub Actions app, which comments as
    // github-actions[bot] and cannot call GET /user; any other token acts as
    // its user, whom GET /user names. Another app's installation token (also
    // ghs_) comments as "<slug>[bot]": github_options::comment_author.
    std::string own_login()
    {
        if (opt_.comment_author) return *opt_.comment_author;
        if (env_.token.starts_with(installation_token_prefix)) return std::string(actions_bot_login);
        json me = api_->call("GET", "/user");
        if (!me.is_object() || !me.contains("login") || !me["login"].is_string()) {
            throw error("github.bad_response", "GET /user: no login in the answer: cannot tell our comments from others'");
        }
        return me["login"].get<std::string>();
    }

    // Ours: carries the marker and was written by our login. Another user or
    // app quoting the marker (a reply, a copy, a bot of its own) is not ours,
    // and GitHub would refuse to let us edit it anyway.
    bool is_ours(const json& c, const std::string& marker) const
    {
        if (string_at(c, "body").find(marker) == std::string::npos) return false;
        return iequals(string_at(object_at(c, "user"), "login"), self_login_);
    }

    std::optional<std::int64_t> find_comment(std::int64_t pr, const std::string& marker)
    {
        std::string url = fmt::format("/repos/{}/issues/{}/comments?per_page={}", env_.repository, pr, comments_per_page);
        // Bounded: 1000 pages of 100 is far beyond any real PR.
        for (int page = 0; page < 1000 && !url.empty(); ++page) {
            std::string next;
            json list = api_->call("GET", url, nullptr, &next, "pull-requests: write");
            if (!list.is_array()) throw error("github.bad_response", fmt::format("GET {}: expected a JSON array", url));
            for (const auto& c : list) {
                if (is_ours(c, marker)) {
                    if (auto id = int_at(c, "id")) return id;
                }
            }
            url = next;
        }
        return std::nullopt;
    }

    json update_comment(std::int64_t id, const json& payload)
    {
        return api_->call("PATCH", fmt::format("/repos/{}/issues/comments/{}", env_.repository, id), &payload, nullptr,
                          "pull-requests: write");
    }

    // Creating a comment is not idempotent: a POST whose answer was lost (a
    // timeout, a dropped connection, a 5xx from a proxy) may have created it.
    // So it is never simply sent again: the comments are listed first, and
    // one of ours with the marker (the lost POST's) is updated instead, and
    // its id stored in `landed`.
    json create_comment(std::int64_t pr, const std::string& marker, const json& payload,
                        std::optional<std::int64_t>& landed)
    {
        const retry_policy& policy = api_->policy();
        for (int attempt = 1;; ++attempt) {
            try {
                return api_->call("POST", fmt::format("/repos/{}/issues/{}/comments", env_.repository, pr), &payload,
                                  nullptr, "pull-requests: write", replay::forbidden);
            } catch (const error& e) {
                const bool unanswered = e.id() == "github.unreachable" || e.id() == "github.server_error";
                if (!unanswered || attempt >= policy.max_attempts) throw;
                log_ << fmt::format("perfgate: the comment POST got no answer ({}); looking for it before posting "
                                    "again\n",
                                    e.what());
                policy.sleep(std::chrono::milliseconds(policy.backoff.count() << (attempt - 1)));
            }
            if ((landed = find_comment(pr, marker))) return update_comment(*landed, payload);
        }
    }

    void post_comment(std::int64_t pr)
    {
        const std::string marker = comment_marker(opt_.context);
        self_login_ = own_login();
        std::optional<std::int64_t> existing = find_comment(pr, marker);
        bool wanted = opt_.comment == "always" ||
                      (opt_.comment == "on-change" && has_change()) ||
                      (opt_.comment == "on-regression" && report_.result == gate::verdict::fail);
        // An existing comment is always brought up to date, so it never shows
        // a stale regression after the fix.
        if (!wanted && !existing) {
            log_ << fmt::format("perfgate: --comment {}: nothing to report, no comment posted\n", opt_.comment);
            return;
        }
        std::string body = render(marker, comment_limit);
        if (body.find(marker) == std::string::npos) body = marker + "\n" + body;
        if (utf8_length(body) > comment_limit) {
            // The renderer keeps to the limit; this guards the API contract anyway.
            const std::string note = "\n\n_… truncated to fit GitHub's comment limit._\n";
            body = utf8_truncate(body, comment_limit - note.size()) + note;
        }
        json payload = {{"body", body}};
        json res;
        if (existing) {
            res = update_comment(*existing, payload);
            log_ << fmt::format("perfgate: updated PR #{} comment {}\n", pr, *existing);
        } else {
            res = create_comment(pr, marker, payload, existing);
            if (existing) log_ << fmt::format("perfgate: updated PR #{} comment {} (the lost POST had landed)\n", pr, *existing);
            else log_ << fmt::format("perfgate: commented on PR #{}\n", pr);
        }
        result_.comment_posted = true;
        result_.comment_id = int_at(res, "id");
    }

    std::string description() const
    {
        std::string d;
        if (exit_code_ == exit_usage || exit_code_ == exit_measurement) {
            d = fmt::format("perfgate could not decide (exit {}): see the job log", exit_code_);
        } else {
            d = fmt::format("{}: {} regressed, {} improved, {} unchanged, {} inconclusive",
                            gate::to_string(report_.result), report_.count(gate::status::regression),
                            report_.count(gate::status::improvement), report_.count(gate::status::unchanged),
                            report_.count(gate::status::inconclusive) + report_.count(gate::status::insufficient));
        }
        if (utf8_length(d) > description_limit) d = utf8_truncate(d, description_limit - 3) + "...";
        return d;
    }

    void post_status(const std::string& sha)
    {
        json payload = {{"state", status_state(exit_code_)}, {"context", opt_.context}, {"description", description()}};
        if (std::string t = link_target(); !t.empty()) payload["target_url"] = t;
        api_->call("POST", fmt::format("/repos/{}/statuses/{}", env_.repository, sha), &payload, nullptr,
                   "statuses: write");
        result_.status_posted = true;
        log_ << fmt::format("perfgate: commit status '{}' {} on {}\n", opt_.context, status_state(exit_code_), sha);
    }

    const gate::report& report_;
    int exit_code_;
    const github_options& opt_;
    std::ostream& log_;
    github_env env_;
    std::optional<github_api> api_;
    std::string self_login_;
    github_result result_;
};

} // namespace

github_result publish_to_github(const gate::report& r, int exit_code, const github_options& opt, std::ostream& log)
{
    return publisher(r, exit_code, opt, log).run();
}

} // namespace perfgate::github
