#include "github/api.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <locale>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "client/http.hpp"
#include "model/error.hpp"

namespace perfgate::github {

using client::http_request;
using client::http_response;
using client::http_send;

using nlohmann::json;

namespace {

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

// One call's retry state: every wait so far counts against
// retry_policy::max_wait.
struct call_budget {
    const retry_policy& retry;
    std::string what; // "METHOD URL", for messages
    milliseconds waited{0};
    int secondary_limits = 0;

    void pause(milliseconds d)
    {
        waited += d;
        retry.sleep(d);
    }
};

http_request make_request(std::string_view method, std::string url, const json* body, const std::string& token,
                          milliseconds timeout)
{
    http_request req;
    req.method = std::string(method);
    req.url = std::move(url);
    req.timeout = timeout;
    req.headers = {{"Authorization", "Bearer " + token},
                   {"Accept", "application/vnd.github+json"},
                   {"X-GitHub-Api-Version", "2022-11-28"}};
    if (body) {
        req.body = body->dump();
        req.headers.emplace_back("Content-Type", "application/json");
    }
    return req;
}

// A 2xx answer: its JSON (null for an empty body) and the next page's URL.
json parse_success(const http_response& res, const std::string& what, std::string* next_url)
{
    if (next_url) *next_url = link_next(res.header("link").value_or(""));
    if (res.body.empty()) return nullptr;
    json j = json::parse(res.body, nullptr, false);
    if (j.is_discarded()) {
        throw error(errors::github_bad_response,
                    fmt::format("{}: HTTP {} with a body that is not JSON", what, res.status));
    }
    return j;
}

// How long a rate-limited answer asks to wait, in GitHub's order of
// precedence (docs above): retry-after; else the primary limit's reset
// time; else a secondary limit's minute, doubled each time it persists.
// Throws "github.rate_limited" when the wait does not fit the budget or the
// attempts are spent.
milliseconds rate_limit_wait(const http_response& res, const std::string& message, call_budget& budget, int attempt)
{
    const retry_policy& retry = budget.retry;
    milliseconds wait;
    std::string reason;
    if (auto after = retry_after(res, retry.now())) {
        wait = *after;
        reason = "GitHub asks to wait";
    } else if (auto reset = header_int(res, "x-ratelimit-reset");
               reset && header_int(res, "x-ratelimit-remaining") == 0LL) {
        const auto now = std::chrono::floor<seconds>(retry.now().time_since_epoch()).count();
        wait = seconds(std::max(1LL, *reset - now + 1));
        reason = "the rate limit resets in";
    } else {
        wait = secondary_limit_wait * (1LL << std::min(budget.secondary_limits++, max_doublings));
        reason = "a secondary rate limit waits";
    }
    if (budget.waited + wait > retry.max_wait) {
        throw error(errors::github_rate_limited,
                    fmt::format("{}: rate limited (HTTP {}); {} {} s, more than the {} s left of the {} s "
                                "perfgate waits: {}",
                                budget.what, res.status, reason, std::chrono::ceil<seconds>(wait).count(),
                                std::chrono::floor<seconds>(retry.max_wait - budget.waited).count(),
                                std::chrono::floor<seconds>(retry.max_wait).count(), message));
    }
    if (attempt >= retry.max_attempts) {
        throw error(errors::github_rate_limited, fmt::format("{}: rate limited (HTTP {}) after {} attempts: {}",
                                                             budget.what, res.status, attempt, message));
    }
    return wait;
}

// A non-2xx answer that is neither a 5xx nor a rate limit: no retry helps.
[[noreturn]] void throw_http_error(const http_response& res, const std::string& message, const std::string& what,
                                   std::string_view permission)
{
    if ((res.status == 403 || res.status == 404) &&
        message.find("Resource not accessible by integration") != std::string::npos) {
        throw error(errors::github_forbidden, fmt::format("{}: HTTP {} \"Resource not accessible by integration\": {}",
                                                          what, res.status, permission_hint(permission)));
    }
    throw error(errors::github_http, fmt::format("{}: HTTP {}: {}", what, res.status, message));
}

constexpr std::string_view not_replayed = "not sent again: it may have taken effect";

} // namespace

github_api::github_api(std::string api_url, std::string token, retry_policy retry)
    : api_url_(std::move(api_url)), token_(std::move(token)), retry_(std::move(retry))
{
    while (api_url_.ends_with('/')) api_url_.pop_back();
    if (!retry_.sleep) retry_.sleep = [](milliseconds d) { std::this_thread::sleep_for(d); };
    if (!retry_.now) retry_.now = [] { return std::chrono::system_clock::now(); };
}

namespace {

// The last guard before a request leaves: a path under the API made of
// plain path characters, no "." or ".." segment (curl would resolve them,
// which is how a hostile SHA once reached /orgs/...), no percent escapes; an
// absolute URL (a Link header's next page) only under the API's own URL.
// Every SHA and name is validated where it is read (event.cpp, publish.cpp):
// failing here is a bug, not an input error.
void check_api_target(const std::string& api_url, const std::string& path_or_url, bool absolute)
{
    std::string_view path = path_or_url;
    if (absolute) {
        const std::string base = api_url + "/";
        if (!path_or_url.starts_with(base)) {
            throw error(errors::internal, fmt::format("refusing a GitHub API URL outside {}", api_url));
        }
        path.remove_prefix(base.size() - 1);
    }
    path = path.substr(0, path.find('?'));
    bool ok = path.starts_with('/');
    std::size_t start = 1;
    while (ok && start <= path.size()) {
        const auto end = std::min(path.find('/', start), path.size());
        const std::string_view segment = path.substr(start, end - start);
        ok = segment != "." && segment != ".." && std::all_of(segment.begin(), segment.end(), [](char c) {
                 return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~';
             });
        start = end + 1;
    }
    if (!ok) throw error(errors::internal, "refusing a GitHub API path with characters outside a plain path");
}

} // namespace

json github_api::call(std::string_view method, const std::string& path_or_url, const json* body, std::string* next_url,
                      std::string_view permission, replay mode)
{
    const bool absolute = path_or_url.starts_with("http://") || path_or_url.starts_with("https://");
    check_api_target(api_url_, path_or_url, absolute);
    const http_request req = make_request(method, absolute ? path_or_url : api_url_ + path_or_url, body, token_,
                                          retry_.timeout);
    call_budget budget{retry_, fmt::format("{} {}", method, req.url)};
    const std::string& what = budget.what;
    for (int attempt = 1;; ++attempt) {
        // Exponential backoff for failures: backoff, 2x, 4x, ...; the last
        // attempt, or a backoff beyond the wait budget, gives up.
        const milliseconds backoff(retry_.backoff.count() << std::min(attempt - 1, max_doublings));
        const bool last = attempt >= retry_.max_attempts || budget.waited + backoff > retry_.max_wait;

        http_response res;
        try {
            res = http_send(req);
        } catch (const error& e) {
            if (e.id() != errors::http_unreachable) throw;
            if (mode == replay::forbidden)
                throw error(errors::github_unreachable, fmt::format("{} ({})", e.what(), not_replayed));
            if (last) throw error(errors::github_unreachable, fmt::format("{} (after {} attempts)", e.what(), attempt));
            budget.pause(backoff);
            continue;
        }
        if (res.status >= 200 && res.status < 300) return parse_success(res, what, next_url);

        const std::string message = github_message(res.body);
        if (res.status >= 500) {
            if (mode == replay::forbidden) {
                throw error(errors::github_server_error,
                            fmt::format("{}: HTTP {} ({}): {}", what, res.status, not_replayed, message));
            }
            if (last) {
                throw error(errors::github_server_error,
                            fmt::format("{}: HTTP {} after {} attempts: {}", what, res.status, attempt, message));
            }
            budget.pause(backoff);
            continue;
        }
        if (is_rate_limit(res, message)) {
            budget.pause(rate_limit_wait(res, message, budget, attempt));
            continue;
        }
        throw_http_error(res, message, what, permission);
    }
}

} // namespace perfgate::github
