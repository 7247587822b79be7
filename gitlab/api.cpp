#include "gitlab/api.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <iomanip>
#include <locale>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "client/http.hpp"
#include "model/error.hpp"

namespace perfgate::gitlab {

using client::http_request;
using client::http_response;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr int max_doublings = 20;
constexpr std::string_view not_replayed = "not sent again: it may have taken effect";

// GitLab's error text: "message" (a string, or an object of field: [errors])
// or "error".
std::string gitlab_message(const std::string& body)
{
    const json j = json::parse(body, nullptr, false);
    if (j.is_object()) {
        for (const char* key : {"message", "error"}) {
            auto it = j.find(key);
            if (it == j.end()) continue;
            return it->is_string() ? it->get<std::string>() : it->dump();
        }
    }
    return body.size() > 200 ? body.substr(0, 200) + "..." : body;
}

std::optional<long long> header_int(const http_response& res, std::string_view name)
{
    auto v = res.header(name);
    if (!v || v->empty()) return std::nullopt;
    char* end = nullptr;
    const long long n = std::strtoll(v->c_str(), &end, 10);
    if (*end != '\0') return std::nullopt;
    return n;
}

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

// The URL with rel="next" in an RFC 8288 Link header.
std::string link_next(const std::string& link)
{
    std::size_t pos = 0;
    while (pos < link.size()) {
        const auto open = link.find('<', pos);
        if (open == std::string::npos) break;
        const auto close = link.find('>', open);
        if (close == std::string::npos) break;
        const auto end = link.find(',', close);
        const std::string params = link.substr(close + 1,
                                               end == std::string::npos ? std::string::npos : end - close - 1);
        if (params.find("rel=\"next\"") != std::string::npos) return link.substr(open + 1, close - open - 1);
        if (end == std::string::npos) break;
        pos = end + 1;
    }
    return {};
}

// path_or_url with its page= query parameter set to page.
std::string with_page(const std::string& path_or_url, const std::string& page)
{
    const auto q = path_or_url.find('?');
    if (q == std::string::npos) return path_or_url + "?page=" + page;
    std::string out = path_or_url.substr(0, q + 1);
    std::string query = path_or_url.substr(q + 1);
    bool first = true;
    std::size_t pos = 0;
    while (pos <= query.size()) {
        const auto amp = std::min(query.find('&', pos), query.size());
        const std::string part = query.substr(pos, amp - pos);
        if (!part.empty() && !part.starts_with("page=")) {
            out += (first ? "" : "&") + part;
            first = false;
        }
        pos = amp + 1;
    }
    return out + (first ? "" : "&") + "page=" + page;
}

// The next page of a list: x-next-page (empty on the last page), else
// Link's rel="next".
std::string next_page(const http_response& res, const std::string& path_or_url)
{
    const std::string page = res.header("x-next-page").value_or("");
    if (page.empty()) return link_next(res.header("link").value_or(""));
    if (!std::all_of(page.begin(), page.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return {};
    return with_page(path_or_url, page);
}

} // namespace

// How long a 429 asks to wait (docs.gitlab.com "Rate limits"): Retry-After
// in seconds or as an HTTP date, else until RateLimit-Reset (a Unix time),
// else the backoff. "gitlab.rate_limited" when that does not fit the budget
// or the attempts are spent.
milliseconds gitlab_api::rate_limit_wait(const http_response& res, const std::string& message, const std::string& what,
                                         milliseconds waited, int attempt, milliseconds backoff) const
{
    milliseconds wait = backoff;
    if (auto after = header_int(res, "retry-after")) {
        wait = seconds(std::max(0LL, *after));
    } else if (auto date = res.header("retry-after"); date && parse_http_date(*date)) {
        wait = std::max(milliseconds(0), std::chrono::ceil<milliseconds>(*parse_http_date(*date) - retry_.now()));
    } else if (auto reset = header_int(res, "ratelimit-reset")) {
        const auto now = std::chrono::floor<seconds>(retry_.now().time_since_epoch()).count();
        wait = seconds(std::max(1LL, *reset - now + 1));
    }
    if (waited + wait > retry_.max_wait)
        throw error(errors::gitlab_rate_limited,
                    fmt::format("{}: rate limited (HTTP 429); GitLab asks to wait {} s, more than the {} s left of the "
                                "{} s perfgate waits: {}",
                                what, std::chrono::ceil<seconds>(wait).count(),
                                std::chrono::floor<seconds>(retry_.max_wait - waited).count(),
                                std::chrono::floor<seconds>(retry_.max_wait).count(), message));
    if (attempt >= retry_.max_attempts)
        throw error(errors::gitlab_rate_limited,
                    fmt::format("{}: rate limited (HTTP 429) after {} attempts: {}", what, attempt, message));
    return wait;
}

namespace {

// The last guard before a request leaves (as github/api.cpp): a path of
// plain path characters, no "." or ".." segment, no percent escapes; an
// absolute URL only under the API's own URL.
void check_api_target(const std::string& api_url, const std::string& path_or_url, bool absolute)
{
    std::string_view path = path_or_url;
    if (absolute) {
        const std::string base = api_url + "/";
        if (!path_or_url.starts_with(base))
            throw error(errors::internal, fmt::format("refusing a GitLab API URL outside {}", api_url));
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
    if (!ok) throw error(errors::internal, "refusing a GitLab API path with characters outside a plain path");
}

} // namespace

gitlab_api::gitlab_api(std::string api_url, std::string token, std::string ca_file, retry_policy retry)
    : api_url_(std::move(api_url)), token_(std::move(token)), ca_file_(std::move(ca_file)), retry_(std::move(retry))
{
    while (api_url_.ends_with('/')) api_url_.pop_back();
    if (!retry_.sleep) retry_.sleep = [](milliseconds d) { std::this_thread::sleep_for(d); };
    if (!retry_.now) retry_.now = [] { return std::chrono::system_clock::now(); };
}

json gitlab_api::call(std::string_view method, const std::string& path_or_url, const json* body, std::string* next,
                      replay mode)
{
    const bool absolute = path_or_url.starts_with("http://") || path_or_url.starts_with("https://");
    check_api_target(api_url_, path_or_url, absolute);
    http_request req;
    req.method = std::string(method);
    req.url = absolute ? path_or_url : api_url_ + path_or_url;
    req.timeout = retry_.timeout;
    req.ca_file = ca_file_;
    req.headers = {{"PRIVATE-TOKEN", token_}, {"Accept", "application/json"}};
    if (body) {
        req.body = body->dump();
        req.headers.emplace_back("Content-Type", "application/json");
    }
    const std::string what = fmt::format("{} {}", method, req.url);
    milliseconds waited{0};
    for (int attempt = 1;; ++attempt) {
        const milliseconds backoff(retry_.backoff.count() << std::min(attempt - 1, max_doublings));
        const bool last = attempt >= retry_.max_attempts || waited + backoff > retry_.max_wait;
        http_response res;
        try {
            res = client::http_send(req);
        } catch (const error& e) {
            if (e.id() != errors::http_unreachable) throw;
            if (mode == replay::forbidden)
                throw error(errors::gitlab_unreachable, fmt::format("{} ({})", e.what(), not_replayed));
            if (last) throw error(errors::gitlab_unreachable, fmt::format("{} (after {} attempts)", e.what(), attempt));
            waited += backoff;
            retry_.sleep(backoff);
            continue;
        }
        if (res.status >= 200 && res.status < 300) {
            if (next) *next = next_page(res, path_or_url);
            if (res.body.empty()) return nullptr;
            json j = json::parse(res.body, nullptr, false);
            if (j.is_discarded())
                throw error(errors::gitlab_bad_response,
                            fmt::format("{}: HTTP {} with a body that is not JSON", what, res.status));
            return j;
        }
        const std::string message = gitlab_message(res.body);
        if (res.status >= 500) {
            if (mode == replay::forbidden)
                throw error(errors::gitlab_server_error,
                            fmt::format("{}: HTTP {} ({}): {}", what, res.status, not_replayed, message));
            if (last)
                throw error(errors::gitlab_server_error,
                            fmt::format("{}: HTTP {} after {} attempts: {}", what, res.status, attempt, message));
            waited += backoff;
            retry_.sleep(backoff);
            continue;
        }
        if (res.status == 429) {
            const milliseconds wait = rate_limit_wait(res, message, what, waited, attempt, backoff);
            waited += wait;
            retry_.sleep(wait);
            continue;
        }
        std::string hint;
        if (res.status == 401 || res.status == 403)
            hint = " (PERFGATE_GITLAB_TOKEN must be a project or personal access token with the api scope and at "
                   "least the Developer role; CI_JOB_TOKEN cannot write notes or statuses: docs/gitlab.md)";
        throw error(errors::gitlab_http, fmt::format("{}: HTTP {}: {}{}", what, res.status, message, hint));
    }
}

} // namespace perfgate::gitlab
