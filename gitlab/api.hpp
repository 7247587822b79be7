// A minimal GitLab REST API v4 client with GitLab's retry and rate-limit
// rules (docs/gitlab.md "Retries and rate limits"). Tests point
// CI_API_V4_URL at a local fake (tests/fake_gitlab.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace perfgate::client {
struct http_response;
} // namespace perfgate::client

namespace perfgate::gitlab {

// Retry rules. Transport failures and 5xx back off exponentially from
// `backoff`. A 429 waits as GitLab says: Retry-After (seconds or an HTTP
// date), else until RateLimit-Reset (a Unix time), else the backoff. All
// waits of one call together stay within max_wait: a wait that does not fit
// gives up ("gitlab.rate_limited").
struct retry_policy {
    int max_attempts = 4;
    std::chrono::milliseconds backoff{1000};
    // GitLab.com's limits reset each minute; a CI job waits at most three.
    std::chrono::milliseconds max_wait{180000};
    std::chrono::milliseconds timeout{30000}; // per request
    // How to wait; tests record instead of sleeping. Default: sleep_for.
    std::function<void(std::chrono::milliseconds)> sleep;
    // The wall clock, for RateLimit-Reset and an HTTP-date Retry-After.
    std::function<std::chrono::system_clock::time_point()> now;
};

// Whether a failed request may be sent again.
enum class replay {
    allowed,   // idempotent or harmless twice (GET, PUT, a commit status)
    forbidden, // creating a note: a transport failure or 5xx is thrown at once,
               // for the caller to look for what landed; a 429 is still
               // waited out (GitLab refused the request).
};

// Errors (perfgate::error): "gitlab.unreachable" (transport, after retries),
// "gitlab.server_error" (5xx, after retries), "gitlab.rate_limited",
// "gitlab.http" (any other non-2xx, with GitLab's message),
// "gitlab.bad_response" (not JSON). "internal" for a path that is not a
// plain path: every id and sha is checked where it is read, so that is a bug.
class gitlab_api {
public:
    // api_url: CI_API_V4_URL ("https://gitlab.example.com/api/v4"); token
    // sent as PRIVATE-TOKEN; ca_file: CI_SERVER_TLS_CA_FILE or "".
    gitlab_api(std::string api_url, std::string token, std::string ca_file = {}, retry_policy retry = {});

    // path_or_url: "/projects/42/..." under the API URL, or an absolute URL
    // under it (a Link header's). next receives the next page, if any: the
    // path with page=x-next-page, or Link's rel="next".
    nlohmann::json call(std::string_view method, const std::string& path_or_url, const nlohmann::json* body = nullptr,
                        std::string* next = nullptr, replay mode = replay::allowed);

    [[nodiscard]] const retry_policy& policy() const { return retry_; }
    [[nodiscard]] const std::string& api_url() const { return api_url_; }

private:
    std::chrono::milliseconds rate_limit_wait(const client::http_response& res, const std::string& message,
                                              const std::string& what, std::chrono::milliseconds waited, int attempt,
                                              std::chrono::milliseconds backoff) const;

    std::string api_url_, token_, ca_file_;
    retry_policy retry_;
};

} // namespace perfgate::gitlab
