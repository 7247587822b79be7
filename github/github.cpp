#include "github/github.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cli/cli.hpp"
#include "client/http.hpp"
#include "model/error.hpp"

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

event_target read_event(const std::string& path, const std::string& fallback_sha)
{
    std::ifstream in(path);
    if (!in) throw error("input.github_event", fmt::format("{}: cannot read the GitHub event payload", path));
    json j = json::parse(in, nullptr, false);
    if (!j.is_object()) throw error("input.github_event", fmt::format("{}: the event payload is not a JSON object", path));

    event_target t;
    auto str = [](const json& o, const char* k) -> std::string {
        return o.is_object() && o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : std::string();
    };
    if (j.contains("pull_request") && j["pull_request"].is_object()) {
        const json& pr = j["pull_request"];
        if (pr.contains("number") && pr["number"].is_number_integer()) t.pr_number = pr["number"].get<std::int64_t>();
        if (pr.contains("head")) t.head_sha = str(pr["head"], "sha");
        if (!t.pr_number) {
            throw error("input.github_event", fmt::format("{}: pull_request.number is missing", path));
        }
    } else if (j.contains("workflow_run") && j["workflow_run"].is_object()) {
        const json& run = j["workflow_run"];
        t.head_sha = str(run, "head_sha");
        // Empty for pull requests from forks: the fork split carries the PR event instead.
        if (run.contains("pull_requests") && run["pull_requests"].is_array() && !run["pull_requests"].empty()) {
            const json& pr = run["pull_requests"][0];
            if (pr.contains("number") && pr["number"].is_number_integer()) t.pr_number = pr["number"].get<std::int64_t>();
        }
    } else {
        t.head_sha = str(j, "after");   // push
    }
    // A deleted branch pushes "after": 000...0, which is no commit.
    if (t.head_sha.empty() || t.head_sha.find_first_not_of('0') == std::string::npos) t.head_sha = fallback_sha;
    return t;
}

// ---------------------------------------------------------------- API client

github_api::github_api(std::string api_url, std::string token, retry_policy retry)
    : api_url_(std::move(api_url)), token_(std::move(token)), retry_(std::move(retry))
{
    while (api_url_.ends_with('/')) api_url_.pop_back();
    if (!retry_.sleep) retry_.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
}

json github_api::call(std::string_view method, const std::string& path_or_url, const json* body,
                      std::string* next_url, std::string_view permission)
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

    for (int attempt = 1;; ++attempt) {
        const bool last = attempt >= retry_.max_attempts;
        // Exponential backoff: backoff, 2x, 4x, ... capped at max_wait.
        const std::chrono::milliseconds backoff =
            std::min(retry_.max_wait, std::chrono::milliseconds(retry_.backoff.count() << std::min(attempt - 1, 20)));

        http_response res;
        try {
            res = http_send(req);
        } catch (const error& e) {
            if (e.id() != "http.unreachable") throw;
            if (last) throw error("github.unreachable", fmt::format("{} (after {} attempts)", e.what(), attempt));
            retry_.sleep(backoff);
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
            if (last) {
                throw error("github.http", fmt::format("{}: HTTP {} after {} attempts: {}", what, res.status, attempt, message));
            }
            retry_.sleep(backoff);
            continue;
        }

        // Rate limits (docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api):
        // secondary limits send retry-after (seconds); the primary limit sends
        // x-ratelimit-remaining: 0 and x-ratelimit-reset (epoch seconds).
        if (res.status == 429 || res.status == 403) {
            std::optional<std::chrono::milliseconds> wait;
            if (auto after = header_int(res, "retry-after")) {
                wait = std::chrono::seconds(std::max(0LL, *after));
            } else if (header_int(res, "x-ratelimit-remaining") == 0LL) {
                if (auto reset = header_int(res, "x-ratelimit-reset")) {
                    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch()).count();
                    wait = std::chrono::seconds(std::max(1LL, *reset - now + 1));
                }
            } else if (res.status == 429) {
                wait = backoff;
            }
            if (wait) {
                if (*wait > retry_.max_wait) {
                    throw error("github.rate_limited",
                                fmt::format("{}: rate limited (HTTP {}); GitHub asks to wait {} s, more than the {} s "
                                            "perfgate waits: {}",
                                            what, res.status, wait->count() / 1000, retry_.max_wait.count() / 1000,
                                            message));
                }
                if (last) {
                    throw error("github.rate_limited",
                                fmt::format("{}: rate limited (HTTP {}) after {} attempts: {}", what, res.status,
                                            attempt, message));
                }
                retry_.sleep(*wait);
                continue;
            }
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
    {
        if (opt_.event_path) env_.event_path = *opt_.event_path;
    }

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
        if (env_.event_path.empty()) missing.emplace_back("GITHUB_EVENT_PATH");
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
            target = read_event(env_.event_path, env_.sha);
        } catch (const error& e) {
            if (opt_.require_environment) throw;
            warn(e.what());
            return std::move(result_);
        }
        api_.emplace(env_.api_url, env_.token, opt_.retry);

        if (opt_.comment != "never") {
            if (target.pr_number) {
                guarded("post the PR comment", [&] { post_comment(*target.pr_number); });
            } else {
                log_ << "perfgate: no pull request in this event; no comment posted\n";
            }
        }
        if (target.head_sha.empty()) {
            warn("no commit SHA in the event or GITHUB_SHA: no commit status posted");
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
        gate::markdown_options mo;
        mo.marker = std::move(marker);
        mo.run_url = env_.run_url();
        mo.comparison_url = opt_.comparison_url.value_or("");
        mo.max_chars = limit;
        return gate::render_markdown(report_, mo);
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

    // Whose comments may be ours: GITHUB_TOKEN (ghs_) acts as a bot; other
    // tokens act as their user, which GET /user names.
    void learn_identity()
    {
        if (env_.token.starts_with("ghs_")) return;
        try {
            json me = api_->call("GET", "/user");
            if (me.is_object() && me.contains("login") && me["login"].is_string()) self_login_ = me["login"].get<std::string>();
        } catch (const error&) {
            // Not fatal: fall back to matching bot accounts only.
        }
    }

    bool is_ours(const json& c, const std::string& marker) const
    {
        if (!c.is_object() || !c.contains("body") || !c["body"].is_string()) return false;
        if (c["body"].get<std::string>().find(marker) == std::string::npos) return false;
        if (!c.contains("user") || !c["user"].is_object()) return false;
        const json& u = c["user"];
        if (self_login_) return u.contains("login") && u["login"] == *self_login_;
        return u.contains("type") && u["type"] == "Bot";
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
                if (is_ours(c, marker) && c.contains("id") && c["id"].is_number_integer()) return c["id"].get<std::int64_t>();
            }
            url = next;
        }
        return std::nullopt;
    }

    void post_comment(std::int64_t pr)
    {
        const std::string marker = comment_marker(opt_.context);
        learn_identity();
        auto existing = find_comment(pr, marker);
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
            res = api_->call("PATCH", fmt::format("/repos/{}/issues/comments/{}", env_.repository, *existing),
                             &payload, nullptr, "pull-requests: write");
            log_ << fmt::format("perfgate: updated PR #{} comment {}\n", pr, *existing);
        } else {
            res = api_->call("POST", fmt::format("/repos/{}/issues/{}/comments", env_.repository, pr), &payload,
                             nullptr, "pull-requests: write");
            log_ << fmt::format("perfgate: commented on PR #{}\n", pr);
        }
        result_.comment_posted = true;
        if (res.is_object() && res.contains("id") && res["id"].is_number_integer()) {
            result_.comment_id = res["id"].get<std::int64_t>();
        }
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
    std::optional<std::string> self_login_;
    github_result result_;
};

} // namespace

github_result publish_to_github(const gate::report& r, int exit_code, const github_options& opt, std::ostream& log)
{
    return publisher(r, exit_code, opt, log).run();
}

} // namespace perfgate::github
